/*
 * irver.c - which IR version introduced which field, and the check that a
 * model holds nothing newer than the version it will be written as.
 * The versions come from the IR_VERSION comments of proto/onnx.proto.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "analysis/irver.h"
#include "schema/opschema.h"

#define IRV_A_NAME(id, name, ir) name,
#define IRV_A_IR(id, name, ir) ir,
const char *const irv_ann_name[IRV_N_ANN] = {IRV_ANNOTATIONS(IRV_A_NAME)};
const int irv_ann_ir[IRV_N_ANN] = {IRV_ANNOTATIONS(IRV_A_IR)};
#undef IRV_A_NAME
#undef IRV_A_IR

int irv_dtype_ir(int32_t dtype)
{
    if (dtype == IR_BFLOAT16)
        return 4;
    if (dtype >= IR_FLOAT8E4M3FN && dtype <= IR_FLOAT8E5M2FNUZ)
        return 9;                 /* the four float8 types of IR 9 */
    if (dtype == IR_UINT4 || dtype == IR_INT4)
        return 10;
    if (dtype == IR_FLOAT4E2M1)
        return 11;
    if (dtype == IR_FLOAT8E8M0)
        return 12;
    if (dtype == IR_UINT2 || dtype == IR_INT2)
        return 13;
    return 1;
}

/* The INT attributes of ai.onnx whose value is a TensorProto.DataType
 * code (the spec describes each so): Cast.to, the dtype of EyeLike,
 * Random*, Multinomial, Bernoulli, SequenceEmpty, output_dtype of
 * Quantize/DequantizeLinear, precision of QuantizeLinear, output_datatype
 * of the window ops and MelWeightMatrix, softmax_precision of Attention,
 * stash_type of the normalizations. The op table confirms the attribute
 * (irv_attr_dtype), so an op with a same-named attribute of another
 * meaning is not mistaken. */
static const char *const irv_dtype_attrs[] = {
    "to", "dtype", "output_dtype", "output_datatype", "precision",
    "softmax_precision", "stash_type", NULL
};

/* Whether op has, at some version, an INT attribute `name`. */
static bool irv_op_has_int_attr(const char *op, const char *name)
{
    size_t n;
    const OsSchema *v = os_versions("", op, &n);
    for (size_t i = 0; v && i < n; i++) {
        const OsAttr *a = os_attr(&v[i], name);
        if (a && a->type == IR_AT_INT)
            return true;
    }
    return false;
}

int32_t irv_attr_dtype(const IrNode *n, const IrAttr *a)
{
    if (!a->has_i || !a->name || !n->op_type || a->ref_attr_name ||
        ir_domain_norm(n->domain)[0])
        return -1;
    for (size_t i = 0; irv_dtype_attrs[i]; i++)
        if (!strcmp(a->name, irv_dtype_attrs[i]))
            return irv_op_has_int_attr(n->op_type, a->name) &&
                   a->i >= INT32_MIN && a->i <= INT32_MAX ? (int32_t)a->i : -1;
    return -1;
}

/* The state of one walk: checking (the target, and the first offence
 * found) or surveying (the highest version each kind of field needs). */
typedef struct IrvRun {
    int64_t ir, ir_from;
    IrError *err;
    int bad;
    bool survey;
    IrvNeed need;
} IrvRun;

/* Records "ir_version N cannot hold WHAT (IR k) in WHERE" once. */
static void irv_bad(IrvRun *r, int need, const char *what, const char *where)
{
    if (r->survey) {
        if (need > r->need.content)
            r->need.content = need;
        return;
    }
    if (r->bad || r->ir >= need)
        return;
    r->bad = 1;
    ir_fail(r->err, "ir_version %lld cannot hold %s (needs IR %d), in %s; "
            "keep a newer IR with --ir-version", (long long)r->ir, what, need, where);
}

/* An annotation: in a survey it counts apart from the content. */
static void irv_ann(IrvRun *r, IrvAnn id, const char *where)
{
    if (r->survey) {
        if (irv_ann_ir[id] > r->need.annotations)
            r->need.annotations = irv_ann_ir[id];
        return;
    }
    irv_bad(r, irv_ann_ir[id], irv_ann_name[id], where);
}

/* Unknown fields may belong to any version newer than the target (a
 * survey cannot know which: the check judges them). */
static void irv_unknown(IrvRun *r, const IrUnknown *u, const char *msg,
                        const char *where)
{
    if (r->survey || r->bad || u->n == 0 || r->ir >= r->ir_from)
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
        irv_ann(r, IRV_A_TENSOR_META, where);
    irv_unknown(r, &t->unk, "TensorProto", where);
}

static void irv_valueinfo(IrvRun *r, const IrValueInfo *vi, const char *graph)
{
    char where[300];
    snprintf(where, sizeof where, "value '%.120s' of %.150s",
             vi->value && vi->value->name ? vi->value->name : "", graph);
    irv_type(r, vi->type, where);
    if (vi->meta.n)
        irv_ann(r, IRV_A_VI_META, where);
    irv_unknown(r, &vi->unk, "ValueInfoProto", where);
}

static void irv_graph(IrvRun *r, const IrGraph *g);

static void irv_attr(IrvRun *r, const IrNode *n, const IrAttr *a, const char *where)
{
    int32_t dt = irv_attr_dtype(n, a);
    if (dt >= 0) {
        char what[120];
        snprintf(what, sizeof what, "element type %s (attribute '%s')",
                 ir_dtype_name(dt) ? ir_dtype_name(dt) : "?", a->name);
        irv_bad(r, irv_dtype_ir(dt), what, where);
    }
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
            a->n_tensors || a->g || a->n_graphs || a->unk.n || irv_attr_dtype(n, a) >= 0)
            return false;
    }
    return true;
}

static void irv_node(IrvRun *r, const IrNode *n)
{
    if (irv_node_plain(n))
        return;
    char where[300];
    DgDiag d = dg_none();
    dg_set_node(&d, n, NULL, 0);
    dg_label(&d, where, sizeof where);
    if (n->overload)
        irv_bad(r, 10, "NodeProto.overload", where);
    if (n->meta.n)
        irv_ann(r, IRV_A_NODE_META, where);
    if (n->n_devcfg)
        irv_ann(r, IRV_A_NODE_DEVCFG, where);
    for (size_t i = 0; i < n->n_attr; i++)
        irv_attr(r, n, n->attr[i], where);
    irv_unknown(r, &n->unk, "NodeProto", where);
}

/* Not ir_each_graph: the first thing the target IR lacks is the one the
 * message names, met node by node with each node's subgraphs right after
 * it (a graph-by-graph walk would name another). */
static void irv_graph(IrvRun *r, const IrGraph *g)
{
    char where[200];
    snprintf(where, sizeof where, "graph '%s'", g->name ? g->name : "");
    if (g->sparse_inits.n)
        irv_bad(r, 6, "GraphProto.sparse_initializer", where);
    if (g->n_qann)
        irv_ann(r, IRV_A_QANN, where);
    if (g->meta.n)
        irv_ann(r, IRV_A_GRAPH_META, where);
    const IrPtrList *lists[3] = {&g->inputs, &g->outputs, &g->value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            irv_valueinfo(r, lists[l]->p[i], where);
    if (g->is_function && g->value_info.n)
        irv_ann(r, IRV_A_FN_VI, where);
    for (size_t i = 0; i < g->inits.n; i++)
        irv_tensor(r, g->inits.p[i], where);
    for (const IrNode *n = g->first; n && !r->bad; n = n->next)
        irv_node(r, n);
    /* what the nodes compute: a Cast or CastLike to a type the IR lacks
     * makes values of that type whatever the declared types say */
    char vwhere[300];
    for (const IrValue *v = g->values; v && !r->bad; v = v->hh.next) {
        if (!v->type || v->kind != IR_VAL_NODE)
            continue;
        snprintf(vwhere, sizeof vwhere, "value '%.120s' of %.150s", v->name, where);
        irv_type(r, v->type, vwhere);
    }
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
        irv_ann(r, IRV_A_FN_META, where);
    if (f->body)
        irv_graph(r, f->body);
    irv_unknown(r, &f->unk, "FunctionProto", where);
}

/* Checks or surveys the whole model. */
static void irv_model(IrvRun *r, const IrModel *m)
{
    if (m->n_training)
        irv_bad(r, 7, "ModelProto.training_info", "the model");
    if (m->n_functions)
        irv_bad(r, 8, "ModelProto.functions", "the model");
    if (m->n_configs)
        irv_ann(r, IRV_A_CONFIG, "the model");
    irv_unknown(r, &m->unk, "ModelProto", "the model");
    if (m->graph)
        irv_graph(r, m->graph);
    for (size_t i = 0; i < m->n_training; i++) {
        if (m->training[i].initialization)
            irv_graph(r, m->training[i].initialization);
        if (m->training[i].algorithm)
            irv_graph(r, m->training[i].algorithm);
    }
    for (size_t i = 0; i < m->n_functions; i++)
        irv_function(r, m->functions[i]);
}

IrvNeed irv_need(const IrModel *m)
{
    IrvRun r = {.survey = true, .need = {3, 3}};
    irv_model(&r, m);
    return r.need;
}

int irv_check(const IrModel *m, int64_t ir, int64_t ir_from, IrError *err)
{
    IrvRun r = {.ir = ir, .ir_from = ir_from, .err = err};
    irv_model(&r, m);
    return r.bad ? -1 : 0;
}

/* ---- dropping annotations ------------------------------------------- */

typedef struct IrvStrip {
    int64_t ir;
    size_t *counts;
} IrvStrip;

/* Drops one metadata_props map when the IR lacks it, counting it. */
static void irv_strip_meta(IrvStrip *s, IrStrMap *meta, IrvAnn id)
{
    if (!meta->n || s->ir >= irv_ann_ir[id])
        return;
    ir_strmap_free(meta);
    s->counts[id]++;
}

static void irv_strip_tensor(IrvStrip *s, IrTensor *t)
{
    if (t)
        irv_strip_meta(s, &t->meta, IRV_A_TENSOR_META);
}

static void irv_strip_node(IrvStrip *s, IrNode *n)
{
    irv_strip_meta(s, &n->meta, IRV_A_NODE_META);
    if (n->n_devcfg && s->ir < irv_ann_ir[IRV_A_NODE_DEVCFG]) {
        ir_node_clear_devcfg(n);
        s->counts[IRV_A_NODE_DEVCFG]++;
    }
    for (size_t i = 0; i < n->n_attr; i++) {
        IrAttr *a = n->attr[i];
        irv_strip_tensor(s, a->t);
        for (size_t k = 0; k < a->n_tensors; k++)
            irv_strip_tensor(s, a->tensors[k]);
        if (a->sparse_tensor) {
            irv_strip_tensor(s, a->sparse_tensor->values);
            irv_strip_tensor(s, a->sparse_tensor->indices);
        }
    }
}

/* Strips one graph of the walk (only counts leave it, so any order does). */
static int irv_strip_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    IrvStrip *s = arg;
    irv_strip_meta(s, &g->meta, IRV_A_GRAPH_META);
    if (g->n_qann && s->ir < irv_ann_ir[IRV_A_QANN]) {
        ir_graph_clear_qann(g);
        s->counts[IRV_A_QANN]++;
    }
    IrPtrList *lists[3] = {&g->inputs, &g->outputs, &g->value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            irv_strip_meta(s, &((IrValueInfo *)lists[l]->p[i])->meta, IRV_A_VI_META);
    if (g->is_function && g->value_info.n && s->ir < irv_ann_ir[IRV_A_FN_VI]) {
        for (size_t i = 0; i < g->value_info.n; i++)
            ir_valueinfo_free(g->value_info.p[i]);
        s->counts[IRV_A_FN_VI] += g->value_info.n;
        g->value_info.n = 0;
    }
    for (size_t i = 0; i < g->inits.n; i++)
        irv_strip_tensor(s, g->inits.p[i]);
    for (size_t i = 0; i < g->sparse_inits.n; i++) {
        IrSparse *sp = g->sparse_inits.p[i];
        irv_strip_tensor(s, sp->values);
        irv_strip_tensor(s, sp->indices);
    }
    for (IrNode *n = g->first; n; n = n->next)
        irv_strip_node(s, n);
    return 0;
}

void irv_strip(IrModel *m, int64_t ir, size_t counts[IRV_N_ANN])
{
    IrvStrip s = {.ir = ir, .counts = counts};
    if (m->n_configs && ir < irv_ann_ir[IRV_A_CONFIG]) {
        ir_model_clear_configs(m);
        counts[IRV_A_CONFIG]++;
    }
    for (size_t i = 0; i < m->n_functions; i++)
        irv_strip_meta(&s, &m->functions[i]->meta, IRV_A_FN_META);
    ir_each_graph(m, IR_WALK_ALL, irv_strip_graph, &s);
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
