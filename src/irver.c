/*
 * irver.c - which IR version introduced which field, and the check that a
 * model holds nothing newer than the version it will be written as.
 * The versions come from the IR_VERSION comments of proto/onnx.proto.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "irver.h"

int irv_dtype_ir(int32_t dtype)
{
    if (dtype == 16)
        return 4;                 /* bfloat16 */
    if (dtype >= 17 && dtype <= 20)
        return 9;                 /* float8 e4m3fn, e4m3fnuz, e5m2, e5m2fnuz */
    if (dtype == 21 || dtype == 22)
        return 10;                /* uint4, int4 */
    if (dtype == 23)
        return 11;                /* float4e2m1 */
    if (dtype == 24)
        return 12;                /* float8e8m0 */
    if (dtype == 25 || dtype == 26)
        return 13;                /* uint2, int2 */
    return 1;
}

/* The state of one check: the target, and the first offence found. */
typedef struct IrvRun {
    int64_t ir, ir_from;
    IrError *err;
    int bad;
} IrvRun;

/* Records "ir_version N cannot hold WHAT (IR k) in WHERE" once. */
static void irv_bad(IrvRun *r, int need, const char *what, const char *where)
{
    if (r->bad || r->ir >= need)
        return;
    r->bad = 1;
    ir_fail(r->err, "ir_version %lld cannot hold %s (needs IR %d), in %s; "
            "keep a newer IR with --ir-version", (long long)r->ir, what, need, where);
}

/* Unknown fields may belong to any version newer than the target. */
static void irv_unknown(IrvRun *r, const IrUnknown *u, const char *msg,
                        const char *where)
{
    if (r->bad || u->n == 0 || r->ir >= r->ir_from)
        return;
    char what[160];
    snprintf(what, sizeof what, "unknown field %u of %s", u->f[0].tag, msg);
    r->bad = 1;
    ir_fail(r->err, "ir_version %lld may not have %s (the model was IR %lld), in %s",
            (long long)r->ir, what, (long long)r->ir_from, where);
}

static void irv_dtype(IrvRun *r, int32_t dtype, const char *where)
{
    char what[64];
    snprintf(what, sizeof what, "element type %s",
             ir_dtype_name(dtype) ? ir_dtype_name(dtype) : "?");
    irv_bad(r, irv_dtype_ir(dtype), what, where);
}

static void irv_type(IrvRun *r, const IrType *t, const char *where)
{
    if (!t)
        return;
    if (t->kind == IR_TYPE_OPTIONAL)
        irv_bad(r, 8, "an optional type", where);
    if (t->kind == IR_TYPE_SPARSE_TENSOR)
        irv_bad(r, 6, "a sparse tensor type", where);
    if ((t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SPARSE_TENSOR) &&
        t->has_elem_type)
        irv_dtype(r, t->elem_type, where);
    irv_unknown(r, &t->unk, "TypeProto", where);
    irv_type(r, t->elem, where);
}

static void irv_tensor(IrvRun *r, const IrTensor *t, const char *where)
{
    if (!t)
        return;
    if (t->has_data_type)
        irv_dtype(r, t->data_type, where);
    if (t->meta.n)
        irv_bad(r, 10, "TensorProto.metadata_props", where);
    irv_unknown(r, &t->unk, "TensorProto", where);
}

static void irv_valueinfo(IrvRun *r, const IrValueInfo *vi, const char *where)
{
    irv_type(r, vi->type, where);
    if (vi->meta.n)
        irv_bad(r, 10, "ValueInfoProto.metadata_props", where);
    irv_unknown(r, &vi->unk, "ValueInfoProto", where);
}

static void irv_graph(IrvRun *r, const IrGraph *g);

static void irv_attr(IrvRun *r, const IrAttr *a, const char *where)
{
    if (a->sparse_tensor || a->n_sparse)
        irv_bad(r, 6, "a sparse tensor attribute", where);
    if (a->tp || a->n_tps)
        irv_bad(r, 8, "a type attribute", where);
    irv_tensor(r, a->t, where);
    for (size_t i = 0; i < a->n_tensors; i++)
        irv_tensor(r, a->tensors[i], where);
    if (a->g)
        irv_graph(r, a->g);
    for (size_t i = 0; i < a->n_graphs; i++)
        irv_graph(r, a->graphs[i]);
    irv_unknown(r, &a->unk, "AttributeProto", where);
}

/* True when n holds nothing a version could lack: most nodes, and then
 * the message prefix is not worth formatting. */
static bool irv_node_plain(const IrNode *n)
{
    if (n->overload || n->meta.n || n->n_devcfg || n->unk.n)
        return false;
    for (size_t i = 0; i < n->n_attr; i++) {
        const IrAttr *a = n->attr[i];
        if (a->sparse_tensor || a->n_sparse || a->tp || a->n_tps || a->t ||
            a->n_tensors || a->g || a->n_graphs || a->unk.n)
            return false;
    }
    return true;
}

static void irv_node(IrvRun *r, const IrNode *n)
{
    if (irv_node_plain(n))
        return;
    char where[200];
    snprintf(where, sizeof where, "node '%s' (%s)", n->name ? n->name : "",
             n->op_type ? n->op_type : "");
    if (n->overload)
        irv_bad(r, 10, "NodeProto.overload", where);
    if (n->meta.n)
        irv_bad(r, 10, "NodeProto.metadata_props", where);
    if (n->n_devcfg)
        irv_bad(r, 11, "NodeProto.device_configurations", where);
    for (size_t i = 0; i < n->n_attr; i++)
        irv_attr(r, n->attr[i], where);
    irv_unknown(r, &n->unk, "NodeProto", where);
}

static void irv_graph(IrvRun *r, const IrGraph *g)
{
    char where[200];
    snprintf(where, sizeof where, "graph '%s'", g->name ? g->name : "");
    if (g->sparse_inits.n)
        irv_bad(r, 6, "GraphProto.sparse_initializer", where);
    if (g->n_qann)
        irv_bad(r, 5, "GraphProto.quantization_annotation", where);
    if (g->meta.n)
        irv_bad(r, 10, "GraphProto.metadata_props", where);
    const IrPtrList *lists[3] = {&g->inputs, &g->outputs, &g->value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            irv_valueinfo(r, lists[l]->p[i], where);
    if (g->is_function && g->value_info.n)
        irv_bad(r, 10, "FunctionProto.value_info", where);
    for (size_t i = 0; i < g->inits.n; i++)
        irv_tensor(r, g->inits.p[i], where);
    for (const IrNode *n = g->first; n && !r->bad; n = n->next)
        irv_node(r, n);
    irv_unknown(r, &g->unk, "GraphProto", where);
}

static void irv_function(IrvRun *r, const IrFunction *f)
{
    char where[200];
    snprintf(where, sizeof where, "function '%s'", f->name ? f->name : "");
    if (f->n_attr)
        irv_bad(r, 9, "FunctionProto.attribute_proto", where);
    if (f->overload)
        irv_bad(r, 10, "FunctionProto.overload", where);
    if (f->meta.n)
        irv_bad(r, 10, "FunctionProto.metadata_props", where);
    if (f->body)
        irv_graph(r, f->body);
    irv_unknown(r, &f->unk, "FunctionProto", where);
}

int irv_check(const IrModel *m, int64_t ir, int64_t ir_from, IrError *err)
{
    IrvRun r = {.ir = ir, .ir_from = ir_from, .err = err};
    if (m->n_training)
        irv_bad(&r, 7, "ModelProto.training_info", "the model");
    if (m->n_functions)
        irv_bad(&r, 8, "ModelProto.functions", "the model");
    if (m->n_configs)
        irv_bad(&r, 11, "ModelProto.configuration", "the model");
    irv_unknown(&r, &m->unk, "ModelProto", "the model");
    if (m->graph)
        irv_graph(&r, m->graph);
    for (size_t i = 0; i < m->n_training; i++) {
        if (m->training[i].initialization)
            irv_graph(&r, m->training[i].initialization);
        if (m->training[i].algorithm)
            irv_graph(&r, m->training[i].algorithm);
    }
    for (size_t i = 0; i < m->n_functions; i++)
        irv_function(&r, m->functions[i]);
    return r.bad ? -1 : 0;
}

/* The tensor type of an initializer. */
static IrType *irv_init_type(const IrTensor *t)
{
    IrType *ty = ir_type_tensor(t->has_data_type ? t->data_type : 0, t->ndims, t->dims);
    if (!t->has_data_type)
        ty->has_elem_type = false;
    return ty;
}

void irv_fit(IrModel *m, int64_t ir)
{
    if (ir >= 4 || !m->graph)
        return;
    IrGraph *g = m->graph;
    for (size_t i = 0; i < g->inits.n; i++) {
        IrTensor *t = g->inits.p[i];
        IrValue *v = t->name ? ir_graph_find_local(g, t->name) : NULL;
        if (!v || v->kind == IR_VAL_INPUT)
            continue;
        IrType *ty = irv_init_type(t);
        if (!ir_graph_add_input(g, t->name, ty))
            ir_type_free(ty);
    }
}
