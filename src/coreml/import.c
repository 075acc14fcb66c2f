/*
 * import.c - Core ML ML Program -> ONNX (cm_import): the raising kit the
 * family files build ONNX with (prefix cmr_: MIL arguments and consts,
 * initializers, nodes), then the import itself: types, one op at a time
 * through its family rule, the interface, then the checker.
 */
#include "coreml/rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "eval/eval.h"
#include "base/half.h"
#include "uthash.h"

/* ---- raising helpers ------------------------------------------------------------ */

struct CmConst {
    const char *key;        /* borrowed from the op */
    const MilTensor *val;   /* a const op's value; NULL for other ops */
    const MilType *type;    /* the op's output type (cmr_rank) */
    UT_hash_handle hh;
};

int cmr_fail(CmRaise *r, const char *fmt, ...)
{
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ir_fail(r->err, "MIL op '%s' (%s): %s", r->op ? r->op->type : "",
                   r->op && r->op->name ? r->op->name : "", why);
}

static const MilArg *cmr_arg(const MilOp *op, const char *param, size_t k)
{
    const MilInput *in = mil_op_input(op, param);
    return in && k < in->n_args ? &in->args[k] : NULL;
}

const MilTensor *cmr_const(CmRaise *r, const MilOp *op, const char *param)
{
    const MilArg *a = cmr_arg(op, param, 0);
    if (!a)
        return NULL;
    if (a->value)
        return a->value;
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, a->name, e);
    return e ? e->val : NULL;
}

int cmr_rank(CmRaise *r, const char *name)
{
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, name, e);
    if (e)
        return e->type->rank;
    for (const IrGraph *g = r->g; g; g = g->parent)
        for (size_t i = 0; i < g->inputs.n; i++) {
            const IrValueInfo *vi = g->inputs.p[i];
            if (!strcmp(vi->value->name, name))
                return vi->type && vi->type->shape ? (int)vi->type->shape->rank : -1;
        }
    return -1;
}

int32_t cmr_elem(CmRaise *r, const MilOp *op, const char *param)
{
    const MilArg *a = cmr_arg(op, param, 0);
    if (!a)
        return 0;
    if (a->value)
        return cm_dtype_to_onnx(a->value->dtype);
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, a->name, e);
    if (e)
        return cm_dtype_to_onnx(e->type->dtype);
    for (const IrGraph *g = r->g; g; g = g->parent)
        for (size_t i = 0; i < g->inputs.n; i++) {
            const IrValueInfo *vi = g->inputs.p[i];
            if (!strcmp(vi->value->name, a->name))
                return vi->type && vi->type->has_elem_type ? vi->type->elem_type : 0;
        }
    return 0;
}

bool cmr_dims(CmRaise *r, const char *name, int64_t *dims, size_t cap, size_t *rank)
{
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, name, e);
    if (e) {
        const MilType *t = e->type;
        if (t->rank < 0 || (size_t)t->rank > cap)
            return false;
        for (int i = 0; i < t->rank; i++) {
            if (t->dims[i] < 0 || (t->dim_names && t->dim_names[i]))
                return false;
            dims[i] = t->dims[i];
        }
        *rank = (size_t)t->rank;
        return true;
    }
    for (const IrGraph *g = r->g; g; g = g->parent)
        for (size_t i = 0; i < g->inputs.n; i++) {
            const IrValueInfo *vi = g->inputs.p[i];
            if (strcmp(vi->value->name, name))
                continue;
            const IrShape *s = vi->type ? vi->type->shape : NULL;
            if (!s || s->rank > cap)
                return false;
            for (size_t k = 0; k < s->rank; k++) {
                if (s->dims[k].kind != IR_DIM_VALUE)
                    return false;
                dims[k] = s->dims[k].value;
            }
            *rank = s->rank;
            return true;
        }
    return false;
}

const char *cmr_tmp(CmRaise *r, const char *base)
{
    char *s = ir_graph_fresh_name(r->g, base);
    /* reserve it: fresh_name only looks at values already in the graph */
    ir_graph_value(r->g, s);
    ir_ptrlist_push(&r->pool, s);
    return s;
}

static IrTensor *cmr_tensor(const MilTensor *t, const char *name)
{
    int32_t d = cm_dtype_to_onnx(t->dtype);
    if (!d)
        return NULL;
    return ir_tensor_new(name, d, (size_t)(t->rank > 0 ? t->rank : 0), t->dims, t->data,
                         t->nbytes);
}

const char *cmr_init_tensor(CmRaise *r, const MilTensor *t)
{
    const char *name = cmr_tmp(r, "c");
    IrTensor *it = cmr_tensor(t, name);
    if (!it) {
        cmr_fail(r, "constant of MIL type %s has no ONNX type",
                 mil_dtype_name(t->dtype) ? mil_dtype_name(t->dtype) : "?");
        return NULL;
    }
    ir_graph_add_init(r->g, it);
    return name;
}

const char *cmr_init_i64(CmRaise *r, const int64_t *v, size_t n, bool scalar)
{
    const char *name = cmr_tmp(r, "c");
    int64_t dims[1] = {(int64_t)n};
    ir_graph_add_init(r->g, ir_tensor_new(name, IR_INT64, scalar ? 0 : 1, dims, v,
                                          n * sizeof *v));
    return name;
}

const char *cmr_init_f32(CmRaise *r, const float *v, size_t n, bool scalar)
{
    const char *name = cmr_tmp(r, "c");
    int64_t dims[1] = {(int64_t)n};
    ir_graph_add_init(r->g, ir_tensor_new(name, IR_FLOAT, scalar ? 0 : 1, dims, v,
                                          n * sizeof *v));
    return name;
}

const char *cmr_in(CmRaise *r, const MilOp *op, const char *param, size_t k)
{
    const MilArg *a = cmr_arg(op, param, k);
    if (!a)
        return NULL;
    if (a->name) {
        CmConst *e = NULL;
        HASH_FIND_STR(r->consts, a->name, e);
        if (e && e->val && !cm_dtype_to_onnx(e->val->dtype)) {
            cmr_fail(r, "%s: a constant of MIL type %s has no ONNX type", param,
                     mil_dtype_name(e->val->dtype) ? mil_dtype_name(e->val->dtype) : "?");
            r->in_failed = true;
            return NULL;
        }
        return a->name;
    }
    if (a->value && !cm_dtype_to_onnx(a->value->dtype)) {
        cmr_fail(r, "%s: a constant of MIL type %s has no ONNX type", param,
                 mil_dtype_name(a->value->dtype) ? mil_dtype_name(a->value->dtype) : "?");
        r->in_failed = true;
        return NULL;
    }
    return a->value ? cmr_init_tensor(r, a->value) : NULL;
}

bool cmr_ints(const MilTensor *t, int64_t **v, size_t *n)
{
    uint64_t numel;
    size_t w = mil_dtype_size(t->dtype);
    if (!t || !mil_tensor_numel(t, &numel) || numel > (1u << 24) || !w ||
        t->nbytes < numel * w)
        return false;
    *v = mem_array(numel ? (size_t)numel : 1, sizeof **v);
    *n = (size_t)numel;
    for (size_t i = 0; i < numel; i++) {
        const uint8_t *p = t->data + i * w;
        int64_t x;
        switch (t->dtype) {
        case MIL_INT32: x = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                                      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24); break;
        case MIL_INT64: {
            uint64_t u = 0;
            for (int b = 7; b >= 0; b--)
                u = u << 8 | p[b];
            x = (int64_t)u;
            break;
        }
        case MIL_BOOL: case MIL_UINT8: x = p[0]; break;
        case MIL_INT8: x = (int8_t)p[0]; break;
        default:
            free(*v);
            return false;
        }
        (*v)[i] = x;
    }
    return true;
}

bool cmr_float(const MilTensor *t, double *v)
{
    if (!t || !t->data)
        return false;
    if (t->dtype == MIL_FP32 && t->nbytes >= 4) {
        uint32_t u = (uint32_t)t->data[0] | (uint32_t)t->data[1] << 8 |
                     (uint32_t)t->data[2] << 16 | (uint32_t)t->data[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        *v = f;
        return true;
    }
    if (t->dtype == MIL_FP16 && t->nbytes >= 2) {
        *v = half_f16_to_f32((uint16_t)(t->data[0] | t->data[1] << 8));
        return true;
    }
    return false;
}

const char *cmr_string(const MilTensor *t)
{
    return t && t->dtype == MIL_STRING && t->n_strings == 1 ? t->strings[0] : NULL;
}

bool cmr_bool(CmRaise *r, const MilOp *op, const char *param, bool dflt)
{
    const MilTensor *t = cmr_const(r, op, param);
    return t && t->dtype == MIL_BOOL && t->nbytes >= 1 ? t->data[0] != 0 : dflt;
}

const char *cmr_out(const MilOp *op, size_t k)
{
    return k < op->n_out ? op->out[k].name : "";
}

/* A node name no other node of the import has: the ops one MIL op
 * raises to share its name as a base. */
static char *cmr_node_name(CmRaise *r, const char *base)
{
    size_t cap = strlen(base) + 32;
    char *s = mem_alloc(cap);
    for (unsigned long i = 0;; i++) {
        snprintf(s, cap, i ? "%s_%lu" : "%s", base, i);
        const char *k = s;
        if (ks_add(&r->node_names, &k, 1, 0))
            return s;
    }
}

int cmr_node(CmRaise *r, const char *op_type, size_t n_in, const char *const *in,
             size_t n_out, const char *const *out, IrNode **node)
{
    for (size_t i = 0; i < n_in; i++)
        if (!in[i])
            return r->in_failed ? -1
                                : cmr_fail(r, "input %zu of the ONNX %s is missing", i, op_type);
    char *name = cmr_node_name(r, r->op && r->op->name ? r->op->name : op_type);
    IrNode *n = ir_node_new(r->g, NULL, op_type, "", name, n_in, in, n_out, out, r->err);
    free(name);
    if (!n)
        return -1;
    if (node)
        *node = n;
    return 0;
}

int cmr_simple(CmRaise *r, const MilOp *op, const char *onnx_op, size_t n_in,
               const char *const *in, IrNode **node)
{
    const char *out[1] = {cmr_out(op, 0)};
    return cmr_node(r, onnx_op, n_in, in, 1, out, node);
}

const char *cmr_tnode(CmRaise *r, const char *op_type, size_t n_in, const char *a,
                      const char *b, IrNode **node)
{
    const char *in[2] = {a, b}, *out[1] = {NULL};
    if (!a || (n_in == 2 && !b)) {
        if (!r->in_failed)
            cmr_fail(r, "an input of the ONNX %s is missing", op_type);
        r->in_failed = true;
        return NULL;
    }
    out[0] = cmr_tmp(r, op_type);
    if (cmr_node(r, op_type, n_in, in, 1, out, node) < 0) {
        r->in_failed = true;
        return NULL;
    }
    return out[0];
}

const char *cmr_init_scalar(CmRaise *r, const MilOp *op, double v)
{
    int32_t dt = op->n_out ? op->out[0].type.dtype : 0;
    bool ok = dt == MIL_FP32 || dt == MIL_FP16 || dt == MIL_INT32 || dt == MIL_BOOL;
    MilTensor *t = ok ? cml_scalar(dt, v) : NULL;
    const char *name = t ? cmr_init_tensor(r, t) : NULL;
    mil_tensor_free(t);
    if (!ok)
        cmr_fail(r, "no scalar of the output's type %s",
                 mil_dtype_name(dt) ? mil_dtype_name(dt) : "?");
    if (!name)
        r->in_failed = true;
    return name;
}

/* ---- import --------------------------------------------------------------------- */

static IrType *cm_ir_type(const MilType *t)
{
    IrType *it = mem_alloc(sizeof *it);
    it->kind = IR_TYPE_TENSOR;
    it->has_elem_type = true;
    it->elem_type = cm_dtype_to_onnx(t->dtype);
    if (t->rank >= 0) {
        it->shape = ir_shape_new((size_t)t->rank);
        for (int i = 0; i < t->rank; i++) {
            IrDim *d = &it->shape->dims[i];
            if (t->dim_names && t->dim_names[i]) {
                d->kind = IR_DIM_PARAM;
                d->param = mem_strdup(t->dim_names[i]);
            } else if (t->dims[i] >= 0) {
                d->kind = IR_DIM_VALUE;
                d->value = t->dims[i];
            }
        }
    }
    return it;
}

IrType *cmr_type(const MilType *t)
{
    return cm_ir_type(t);
}

static int cm_raise_op(CmRaise *r, const MilOp *op)
{
    r->op = op;
    if (!strcmp(op->type, "const")) {
        if (!op->val || op->n_out != 1)
            return cmr_fail(r, "const without a value");
        CmConst *e = mem_alloc(sizeof *e);
        e->key = op->out[0].name;
        e->val = op->val;
        e->type = &op->out[0].type;
        HASH_ADD_KEYPTR(hh, r->consts, e->key, strlen(e->key), e);
        /* A string const (coremltools writes pad_type, a cast's dtype, a
         * conv's pad mode so) is a parameter the rules read with
         * cmr_const; it becomes no initializer, and cmr_in refuses it as
         * a tensor. */
        if (!cm_dtype_to_onnx(op->val->dtype))
            return 0;
        IrTensor *t = cmr_tensor(op->val, op->out[0].name);
        if (!t)
            return cmr_fail(r, "constant '%s' cannot be read", op->out[0].name);
        if (!ir_graph_add_init(r->g, t)) {
            ir_tensor_free(t);
            return cmr_fail(r, "value '%s' defined twice", op->out[0].name);
        }
        return 0;
    }
    if (op->n_blocks && strcmp(op->type, "cond") && strcmp(op->type, "while_loop"))
        return cmr_fail(r, "ops with blocks other than cond and while_loop are not raised yet");
    bool folded = !strncmp(op->type, "constexpr_", 10);
    CmRaiseFn fn = folded ? NULL : cm_raise_rule(op->type);
    if (!fn && !folded)
        return cmr_fail(r, "no ONNX raising for this op");
    for (size_t k = 0; k < op->n_out; k++) {
        CmConst *e = mem_alloc(sizeof *e);
        e->key = op->out[k].name;
        e->type = &op->out[k].type;
        HASH_ADD_KEYPTR(hh, r->consts, e->key, strlen(e->key), e);
    }
    return folded ? cmx_fold(r, op) : fn(r, op);
}

int cmr_const_value(CmRaise *r, const MilOp *op, MilTensor *t)
{
    ir_ptrlist_push(&r->owned, t);
    CmConst *e = NULL;
    HASH_FIND_STR(r->consts, op->out[0].name, e);
    if (!e)
        return cmr_fail(r, "output '%s' is not registered", op->out[0].name);
    e->val = t;
    if (!cm_dtype_to_onnx(t->dtype))
        return 0;
    IrTensor *it = cmr_tensor(t, op->out[0].name);
    if (!it)
        return cmr_fail(r, "the folded constant cannot be held");
    if (!ir_graph_add_init(r->g, it)) {
        ir_tensor_free(it);
        return cmr_fail(r, "value '%s' defined twice", op->out[0].name);
    }
    return 0;
}

int cmr_block(CmRaise *r, const MilBlock *b, IrGraph *g, const MilNamedType *types)
{
    IrGraph *outer = r->g;
    const MilOp *holder = r->op;
    r->g = g;
    for (size_t i = 0; i < b->n_ops; i++)
        for (size_t k = 0; k < b->ops[i]->n_out; k++)
            ir_graph_value(g, b->ops[i]->out[k].name);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < b->n_ops; i++)
        rc = cm_raise_op(r, b->ops[i]);
    for (size_t i = 0; rc == 0 && i < b->n_out; i++) {
        IrValue *v = ir_graph_lookup(g, b->out[i]);
        if (!v) {
            r->op = holder;
            rc = cmr_fail(r, "block output '%s' is defined nowhere", b->out[i]);
            break;
        }
        /* ONNX Runtime refuses a subgraph that returns an outer value
         * itself (a loop variable MIL's body leaves unchanged): an
         * Identity gives the body its own copy */
        if (v->graph != g) {
            const char *in[1] = {b->out[i]}, *out[1] = {cmr_tmp(r, b->out[i])};
            if ((rc = cmr_node(r, "Identity", 1, in, 1, out, NULL)) < 0)
                break;
            v = ir_graph_find_local(g, out[0]);
        }
        ir_graph_add_output(g, v, cm_ir_type(&types[i].type));
    }
    r->g = outer;
    r->op = holder;
    return rc;
}

/* How many times block b (and the blocks inside its ops) reads `name`;
 * *sq counts the reads that are the x of a squeeze of b itself giving a
 * rank-0 value. */
static size_t cm_reads(const MilBlock *b, const char *name, size_t *sq)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_ops; i++) {
        const MilOp *op = b->ops[i];
        for (size_t k = 0; k < op->n_in; k++)
            for (size_t j = 0; j < op->in[k].n_args; j++)
                if (op->in[k].args[j].name && !strcmp(op->in[k].args[j].name, name)) {
                    n++;
                    *sq += !strcmp(op->type, "squeeze") && !strcmp(op->in[k].param, "x") &&
                           op->n_out == 1 && op->out[0].type.rank == 0;
                }
        size_t inner = 0;
        for (size_t k = 0; k < op->n_blocks; k++)
            n += cm_reads(op->blocks[k], name, &inner);
    }
    for (size_t i = 0; i < b->n_out; i++)
        n += !strcmp(b->out[i], name);
    return n;
}

/* Whether function input `in` is a scalar passed as [1] (the export's, and
 * coremltools', way past the loader's refusal of rank-0 inputs): its type
 * [1] and every reader a squeeze to rank 0. The import then gives it back
 * as a rank-0 input and the squeezes become Identity. */
static bool cm_scalar_input(const MilFunction *fn, const MilNamedType *in)
{
    if (in->type.rank != 1 || !in->type.dims || in->type.dims[0] != 1 || in->type.is_list)
        return false;
    size_t sq = 0, n = cm_reads(fn->block, in->name, &sq);
    return n == sq && sq > 0;
}

/* Raises op; a squeeze of a scalar input (cm_scalar_input) is Identity. */
static int cm_import_op(CmRaise *r, const MilFunction *fn, const MilOp *op)
{
    const MilArg *x = !strcmp(op->type, "squeeze") ? cmr_arg(op, "x", 0) : NULL;
    for (size_t i = 0; x && x->name && i < fn->n_in; i++)
        if (!strcmp(fn->in[i].name, x->name) && cm_scalar_input(fn, &fn->in[i])) {
            r->op = op;
            const char *in[1] = {x->name};
            return cmr_simple(r, op, "Identity", 1, in, NULL);
        }
    return cm_raise_op(r, op);
}

static int cm_import_io(CmRaise *r, const MilFunction *fn)
{
    for (size_t i = 0; i < fn->n_in; i++) {
        if (!cm_dtype_to_onnx(fn->in[i].type.dtype))
            return ir_fail(r->err, "function input '%s' has no ONNX type", fn->in[i].name);
        MilType t = fn->in[i].type;
        if (cm_scalar_input(fn, &fn->in[i]))
            t.rank = 0;
        if (!ir_graph_add_input(r->g, fn->in[i].name, cm_ir_type(&t)))
            return ir_fail(r->err, "function input '%s' declared twice", fn->in[i].name);
    }
    /* Every MIL value's name is taken before any rule makes a temporary
     * name: a later op's output must not find its name used. */
    for (size_t i = 0; i < fn->block->n_ops; i++)
        for (size_t k = 0; k < fn->block->ops[i]->n_out; k++)
            ir_graph_value(r->g, fn->block->ops[i]->out[k].name);
    for (size_t i = 0; i < fn->block->n_ops; i++)
        if (cm_import_op(r, fn, fn->block->ops[i]) < 0)
            return -1;
    r->op = NULL;
    for (size_t i = 0; i < fn->block->n_out; i++) {
        const char *name = fn->block->out[i];
        const MilType *t = mil_function_type(fn, name);
        IrValue *v = ir_graph_find_local(r->g, name);
        if (!t || !v)
            return ir_fail(r->err, "function output '%s' is defined nowhere", name);
        ir_graph_add_output(r->g, v, cm_ir_type(t));
    }
    return 0;
}

/* Gives the graph's inputs and outputs back the ONNX names the export
 * recorded (CM_NAME_KEY) where the package names them otherwise; a name
 * that is taken by then stays the package's. */
static void cm_import_names(const MilModel *mm, IrGraph *g)
{
    size_t n = sizeof CM_NAME_KEY - 1;
    for (size_t i = 0; i < mm->n_meta; i++) {
        if (strncmp(mm->meta_keys[i], CM_NAME_KEY, n))
            continue;
        IrValue *v = ir_graph_find_local(g, mm->meta_keys[i] + n);
        bool io = v && v->kind == IR_VAL_INPUT;
        for (size_t k = 0; v && !io && k < g->outputs.n; k++)
            io = ((const IrValueInfo *)g->outputs.p[k])->value == v;
        IrError e;
        if (io && !ir_graph_find_local(g, mm->meta_values[i]))
            (void)ir_value_rename(v, mm->meta_values[i], &e);
    }
}

/* Drops the initializers nothing reads: every const of the program
 * became one, and most are parameters the rules read as attributes
 * (a conv's strides, a pool's kernel). Subgraphs first, since a read from
 * inside one is a use of the outer value. */
static void cm_prune_inits(IrGraph *g)
{
    IR_FOR_NODES(g, n)
        for (size_t a = 0; a < n->n_attr; a++) {
            if (n->attr[a]->g)
                cm_prune_inits(n->attr[a]->g);
            for (size_t k = 0; k < n->attr[a]->n_graphs; k++)
                cm_prune_inits(n->attr[a]->graphs[k]);
        }
    ir_graph_drop_unused_inits(g);
}

/* What the import gives must pass the checker like every model we
 * write: a raising that copies a MIL form ONNX does not take (a negative
 * perm, say) is refused here, naming the rule, and nothing is written. */
static int cm_import_valid(IrModel *m, IrError *err)
{
    ChkReport c;
    int rc = 0;
    if (chk_model_run(m, ev_prove_node, &c)) {
        const char *first = chk_first_error(&c);
        rc = ir_fail(err, "the ONNX model it gives is invalid: %s",
                     first ? first : "the checker refuses it");
    }
    chk_report_free(&c);
    return rc;
}

int cm_import(const MilModel *mm, IrModel **out, IrError *err)
{
    *out = NULL;
    const MilFunction *fn = mil_function_find(mm, "main");
    if (!fn || !fn->block)
        return ir_fail(err, "ML Program has no function 'main'");
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    m->producer_name = mem_strdup("onnx-convert (Core ML import)");
    ir_model_set_opset(m, "", CM_ONNX_OPSET);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup(fn->name);
    CmRaise r = {.m = m, .g = m->graph, .err = err};
    int rc = cm_import_io(&r, fn);
    if (rc == 0)
        cm_import_names(mm, m->graph);
    CmConst *e, *tmp;
    HASH_ITER(hh, r.consts, e, tmp) {
        HASH_DEL(r.consts, e);
        free(e);
    }
    for (size_t i = 0; i < r.pool.n; i++)
        free(r.pool.p[i]);
    free(r.pool.p);
    for (size_t i = 0; i < r.owned.n; i++)
        mil_tensor_free(r.owned.p[i]);
    free(r.owned.p);
    ks_free(&r.node_names);
    if (rc == 0) {
        cm_prune_inits(m->graph);
        rc = cm_import_valid(m, err);
    }
    if (rc < 0) {
        ir_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}
