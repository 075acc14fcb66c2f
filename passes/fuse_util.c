/*
 * fuse_util.c - pattern-matching helpers the fusion passes share (see
 * fuse_util.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/fuse_util.h"
#include "analysis/known.h"
#include "schema/opschema.h"

bool opt_fz_op(const IrNode *k, const char *op)
{
    return k && !k->dead && strcmp(k->op_type, op) == 0 &&
           !ir_domain_norm(k->domain)[0];
}

IrNode *opt_fz_def(const IrGraph *g, const IrValue *v, const char *op)
{
    if (!v || v->kind != IR_VAL_NODE || !v->producer || v->producer->graph != g)
        return NULL;
    return opt_fz_op(v->producer, op) ? v->producer : NULL;
}

bool opt_fz_private(const IrValue *v, IrNode *const *nodes, size_t n)
{
    if (!v || v->n_uses == 0 || ir_value_is_graph_output(v))
        return false;
    for (size_t u = 0; u < v->n_uses; u++) {
        bool ours = false;
        for (size_t i = 0; i < n; i++)
            ours = ours || (nodes[i] && v->uses[u].node == nodes[i]);
        if (!ours)
            return false;
    }
    return true;
}

IrNode *opt_fz_reader(const IrValue *v)
{
    if (!v || v->n_uses != 1 || ir_value_is_graph_output(v))
        return NULL;
    return v->uses[0].node;
}

/* float, double, float16, bfloat16: the types most float ops take. */
static bool opt_fz_real_type(int32_t dt)
{
    return dt == IR_FLOAT || dt == IR_DOUBLE || dt == IR_FLOAT16 || dt == IR_BFLOAT16;
}

/* ---- constants ---------------------------------------------------------- */

/* A tensor of n floats or int64s from a Constant's value attribute: 1-D,
 * or 0-D when rank is 0 (and n 1). */
static TkTensor *opt_fz_list(int32_t dtype, size_t rank, size_t n, const float *f,
                             const int64_t *i)
{
    int64_t d = (int64_t)n;
    TkTensor *t = tk_new(dtype, rank, &d, NULL);
    for (size_t k = 0; t && k < n; k++) {
        if (f)
            tk_set_f(t, k, f[k]);
        else
            tk_set_i(t, k, i[k]);
    }
    return t;
}

/* The tensor a Constant node's single attribute defines, or NULL. */
static TkTensor *opt_fz_constant_node(const IrNode *k)
{
    if (k->n_attr != 1 || k->attr[0]->ref_attr_name)
        return NULL;
    const IrAttr *a = k->attr[0];
    IrError e;
    if (strcmp(a->name, "value") == 0 && a->t)
        return tk_from_ir(a->t, &e);
    if (strcmp(a->name, "value_float") == 0 && a->has_f)
        return opt_fz_list(IR_FLOAT, 0, 1, &a->f, NULL);
    if (strcmp(a->name, "value_int") == 0 && a->has_i)
        return opt_fz_list(IR_INT64, 0, 1, NULL, &a->i);
    if (strcmp(a->name, "value_floats") == 0)
        return opt_fz_list(IR_FLOAT, 1, a->n_floats, a->floats, NULL);
    if (strcmp(a->name, "value_ints") == 0)
        return opt_fz_list(IR_INT64, 1, a->n_ints, NULL, a->ints);
    return NULL;
}

TkTensor *opt_fz_const(const IrValue *v)
{
    IrError e;
    if (!v)
        return NULL;
    const IrTensor *t = kv_value(v);
    if (t)
        return tk_from_ir(t, &e);
    /* a Constant of another value form a pass built after inference ran */
    if (v->kind == IR_VAL_NODE && v->producer && opt_fz_op(v->producer, "Constant"))
        return opt_fz_constant_node(v->producer);
    return NULL;
}

/* opt_fz_scalar, also giving the constant's element type. */
static bool opt_fz_scalar_t(const IrValue *v, size_t max_rank, double *out, int32_t *dtype)
{
    TkTensor *t = opt_fz_const(v);
    bool ok = t && t->numel == 1 && t->rank <= max_rank &&
              (opt_fz_real_type(t->dtype) || ir_dtype_is_int(t->dtype));
    if (ok) {
        *out = tk_get_f(t, 0);
        *dtype = t->dtype;
        ok = isfinite(*out);
    }
    tk_free(t);
    return ok;
}

bool opt_fz_scalar(const IrValue *v, size_t max_rank, double *out)
{
    int32_t dt;
    return opt_fz_scalar_t(v, max_rank, out, &dt);
}

bool opt_fz_near(const IrValue *v, size_t max_rank, double want)
{
    double got;
    int32_t dt;
    if (!opt_fz_scalar_t(v, max_rank, &got, &dt))
        return false;
    /* Half an ulp of the constant's type, at least 1e-6 relative. */
    double tol = dt == IR_FLOAT16 ? 4.9e-4 : dt == IR_BFLOAT16 ? 3.9e-3 : 1e-6;
    return fabs(got - want) <= tol * fabs(want);
}

/* ---- types and axes ----------------------------------------------------- */

int32_t opt_fz_real(const IrValue *v, size_t *rank)
{
    const IrType *t = v ? v->type : NULL;
    if (!t || t->kind != IR_TYPE_TENSOR || !t->has_elem_type || !t->shape)
        return 0;
    int32_t dt = t->elem_type;
    if (!opt_fz_real_type(dt))
        return 0;
    *rank = t->shape->rank;
    return dt;
}

bool opt_fz_tail_dims(const IrValue *v, size_t k, int64_t *dims)
{
    const IrShape *s = v->type ? v->type->shape : NULL;
    if (!s || k > s->rank)
        return false;
    for (size_t i = 0; i < k; i++) {
        const IrDim *d = &s->dims[s->rank - k + i];
        if (d->kind != IR_DIM_VALUE || d->value <= 0)
            return false;
        dims[i] = d->value;
    }
    return true;
}

/* The axes ReduceMean rm lists into ax (*n of them; *all when it reduces
 * every axis); false when they are not known or rm keeps the input. */
static bool opt_fz_axes(const OptCtx *c, const IrNode *rm, int64_t *ax, size_t *n, bool *all)
{
    *n = 0;
    *all = false;
    if (ir_scope_opset(c->m, c->fn, "") < 18) {
        const IrAttr *a = ir_node_attr(rm, "axes");
        if (rm->n_in != 1 || (a && (a->ref_attr_name || a->n_ints > TK_MAX_RANK)))
            return false;
        *all = !a;
        for (size_t i = 0; a && i < a->n_ints; i++)
            ax[(*n)++] = a->ints[i];
        return true;
    }
    const IrAttr *noop = ir_node_attr(rm, "noop_with_empty_axes");
    if (noop && (noop->ref_attr_name || noop->i != 0))
        return false;
    if (rm->n_in < 2 || !rm->in[1]) {
        *all = rm->n_in <= 2;
        return *all;
    }
    TkTensor *t = opt_fz_const(rm->in[1]);
    bool ok = t && t->rank == 1 && ir_dtype_is_int(t->dtype) &&
              t->numel <= TK_MAX_RANK && rm->n_in == 2;
    for (size_t i = 0; ok && i < t->numel; i++)
        ax[(*n)++] = tk_get_i(t, i);
    *all = ok && *n == 0;
    tk_free(t);
    return ok;
}

size_t opt_fz_tail_axes(const OptCtx *c, const IrNode *rm, size_t rank)
{
    if (!opt_fz_op(rm, "ReduceMean") || rm->n_out != 1 || rank == 0 || rank > TK_MAX_RANK)
        return 0;
    const IrAttr *kd = ir_node_attr(rm, "keepdims");
    if (kd && (kd->ref_attr_name || !kd->has_i || kd->i != 1))
        return 0;
    int64_t ax[TK_MAX_RANK];
    size_t n;
    bool all, seen[TK_MAX_RANK] = {false};
    if (!opt_fz_axes(c, rm, ax, &n, &all))
        return 0;
    if (all)
        return rank;
    for (size_t i = 0; i < n; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + (int64_t)rank : ax[i];
        if (a < 0 || a >= (int64_t)rank || seen[a])
            return 0;
        seen[a] = true;
    }
    for (size_t i = 0; i < rank; i++)
        if (seen[i] != (i >= rank - n))
            return 0;
    return n;
}

/* ---- scale and bias parameters ------------------------------------------ */

bool opt_fz_param_ok(const IrValue *p, const IrValue *x, size_t k)
{
    if (!p)
        return true;
    int64_t xd[TK_MAX_RANK];
    size_t xr;
    int32_t dt = opt_fz_real(x, &xr);
    if (!dt || k > xr || k > TK_MAX_RANK || !opt_fz_tail_dims(x, k, xd))
        return false;
    TkTensor *t = opt_fz_const(p);
    bool ok = t && t->dtype == dt && t->rank <= xr;
    for (size_t j = 0; ok && j < t->rank; j++) {
        int64_t pd = t->dims[t->rank - 1 - j];
        ok = pd == 1 || (j < k && pd == xd[k - 1 - j]);
    }
    tk_free(t);
    return ok;
}

IrValue *opt_fz_emit(OptCtx *c, IrNode *before, const TkTensor *t, const char *base)
{
    IrValue *v = opt_add_const(c, before, base, tk_to_ir(t, ""));
    if (!v)
        ir_fail(c->err, "fusion: cannot add a constant named after '%s'", base);
    return v;
}

/* Fills o (shape dims[0..k)) from p broadcast to it, or with `fill`. */
static void opt_fz_broadcast(TkTensor *o, const TkTensor *p, double fill)
{
    for (size_t e = 0; e < o->numel; e++) {
        size_t off = 0, rest = e, stride = 1;
        for (size_t j = 0; p && j < p->rank; j++) {
            size_t od = (size_t)o->dims[o->rank - 1 - j];
            size_t pd = (size_t)p->dims[p->rank - 1 - j];
            size_t i = rest % od;
            rest /= od;
            off += (pd == 1 ? 0 : i) * stride;
            stride *= pd;
        }
        tk_set_f(o, e, p ? tk_get_f(p, off) : fill);
    }
}

IrValue *opt_fz_param(OptCtx *c, IrNode *before, IrValue *p, const IrValue *x, size_t k,
                      double fill)
{
    int64_t xd[TK_MAX_RANK];
    size_t xr;
    int32_t dt = opt_fz_real(x, &xr);
    if (!dt || !opt_fz_tail_dims(x, k, xd)) {
        ir_fail(c->err, "fusion: the normalized dims are not known");
        return NULL;
    }
    TkTensor *t = p ? opt_fz_const(p) : NULL;
    bool same = t && t->rank == k;
    for (size_t i = 0; same && i < k; i++)
        same = t->dims[i] == xd[i];
    IrValue *v = same ? p : NULL;
    if (!same && (!p || t)) {
        IrError e;
        TkTensor *o = tk_new(dt, k, xd, &e);
        if (o) {
            opt_fz_broadcast(o, t, fill);
            v = opt_fz_emit(c, before, o, "fused_param");
        } else {
            ir_fail(c->err, "fusion: %s", e.msg);
        }
        tk_free(o);
    }
    if (p && !t)
        ir_fail(c->err, "fusion: '%s' is not a constant", p->name);
    tk_free(t);
    return v;
}

/* ---- rewriting ---------------------------------------------------------- */

IrNode *opt_fz_replace(OptCtx *c, IrNode *last, const char *op, size_t n_in,
                       IrValue *const *in)
{
    const char *none = "";
    IrError e;
    IrNode *n = ir_node_new(c->g, last, op, "", last->name, 0, NULL, 1, &none, &e);
    if (!n) {
        ir_fail(c->err, "fusion: %s", e.msg);
        return NULL;
    }
    for (size_t i = 0; i < n_in; i++)
        ir_node_add_input(n, in[i]);
    ir_node_take_output(n, 0, last, 0);
    return n;
}

void opt_fz_delete(IrNode *const *nodes, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (nodes[i])
            ir_node_delete(nodes[i]);
}

long opt_fz_run(OptCtx *c, int64_t min_opset, OptFzFuse fuse)
{
    if (ir_scope_opset(c->m, c->fn, "") < min_opset)
        return 0;
    return opt_each_node(c, fuse);
}

/* ---- attributes, readers, types (the weight fusions) ---- */

int64_t opt_fz_attr_i_or(const IrNode *k, const char *name, int64_t dflt, bool *ok)
{
    IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return dflt;
    if (a->ref_attr_name || !a->has_i) {
        *ok = false;
        return dflt;
    }
    return a->i;
}

/* The operator table's default of k's attribute `name` at `opset`, or
 * NULL (none: a required attribute, or one the version lacks). */
static const OsAttr *opt_fz_default(const IrNode *k, const char *name, int64_t opset)
{
    const OsSchema *s = os_find(k->domain, k->op_type, opset);
    const OsAttr *a = s ? os_attr(s, name) : NULL;
    return a && a->has_default ? a : NULL;
}

int64_t opt_fz_attr_i(const IrNode *k, const char *name, int64_t opset, bool *ok)
{
    const OsAttr *d = ir_node_attr(k, name) ? NULL : opt_fz_default(k, name, opset);
    if (!ir_node_attr(k, name) && !(d && d->type == IR_AT_INT)) {
        *ok = false;
        return 0;
    }
    return opt_fz_attr_i_or(k, name, d ? d->def_i : 0, ok);
}

double opt_fz_attr_f(const IrNode *k, const char *name, int64_t opset, bool *ok)
{
    IrAttr *a = ir_node_attr(k, name);
    const OsAttr *d = a ? NULL : opt_fz_default(k, name, opset);
    if (!a && !(d && d->type == IR_AT_FLOAT)) {
        *ok = false;
        return 0;
    }
    if (a && (a->ref_attr_name || !a->has_f)) {
        *ok = false;
        return 0;
    }
    return a ? a->f : d->def_f;
}

IrNode *opt_fz_sole_reader(const IrGraph *g, const IrValue *v, size_t *index)
{
    if (!v || v->n_uses != 1 || ir_value_is_graph_output(v))
        return NULL;
    const IrUse *u = &v->uses[0];
    if (!u->node || u->node->graph != g || u->node->dead)
        return NULL;
    *index = u->index;
    return u->node;
}

bool opt_fz_float(int32_t dtype)
{
    return dtype == IR_FLOAT || dtype == IR_DOUBLE;
}

bool opt_fz_ones_from(const TkTensor *t, size_t from)
{
    for (size_t i = from; i < t->rank; i++)
        if (t->dims[i] != 1)
            return false;
    return true;
}

/* ---- the chain fusions ---- */

IrNode *opt_fz_producer(const IrValue *v, const IrGraph *g)
{
    if (!v || v->kind != IR_VAL_NODE || !v->producer || v->producer->graph != g ||
        v->producer->dead)
        return NULL;
    return v->producer;
}

IrNode *opt_fz_sole(const IrValue *v, const IrNode *reader, const char *op)
{
    IrNode *p = opt_fz_producer(v, reader->graph);
    if (!p || !opt_fz_op(p, op) || p->n_out != 1 || v->n_uses != 1 ||
        v->uses[0].node != reader || ir_value_is_graph_output(v))
        return NULL;
    return p;
}

const IrType *opt_fz_type(const IrValue *v)
{
    const IrType *t = v ? v->type : NULL;
    return t && t->kind == IR_TYPE_TENSOR && t->has_elem_type && t->elem_type ? t : NULL;
}

int32_t opt_fz_elem(const IrValue *v)
{
    const IrType *t = opt_fz_type(v);
    return t ? t->elem_type : 0;
}

long opt_fz_rank(const IrValue *v)
{
    const IrType *t = v ? v->type : NULL;
    return t && t->kind == IR_TYPE_TENSOR && t->shape ? (long)t->shape->rank : -1;
}

int64_t opt_fz_dim(const IrValue *v, size_t i)
{
    long r = opt_fz_rank(v);
    if (r < 0 || i >= (size_t)r)
        return -1;
    const IrDim *d = &v->type->shape->dims[i];
    return d->kind == IR_DIM_VALUE && d->value >= 0 ? d->value : -1;
}

long opt_fz_const_ints(const IrValue *v, int64_t *out, size_t cap)
{
    const IrTensor *t = opt_const_tensor(v);
    if (!t || !t->has_data_type || (t->data_type != IR_INT64 && t->data_type != IR_INT32) ||
        t->ndims > 1)
        return -1;
    int64_t *vals;
    size_t n;
    if (!ir_tensor_to_i64s(t, cap, &vals, &n))
        return -1;
    if (n)
        memcpy(out, vals, n * sizeof *vals);
    free(vals);
    return (long)n;
}

IrValue *opt_fz_new_ints(OptCtx *c, IrNode *before, const char *base, size_t n, const int64_t *v)
{
    if (!opt_can_place_const(c, IR_INT64))
        return NULL;
    int64_t d = (int64_t)n;
    return opt_add_const(c, before, base, ir_tensor_new(NULL, IR_INT64, 1, &d, v, n * sizeof *v));
}

long opt_fz_attr_ints(const IrNode *k, const char *name, int64_t *out, size_t cap)
{
    const IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return -1;
    if (a->ref_attr_name || a->n_ints > cap || (a->has_type && a->type != IR_AT_INTS))
        return -2;
    memcpy(out, a->ints, a->n_ints * sizeof *out);
    return (long)a->n_ints;
}

void opt_fz_set_inputs(IrNode *k, size_t n, IrValue *const *vals)
{
    for (size_t i = 0; i < k->n_in; i++)
        ir_node_set_input(k, i, NULL);
    while (k->n_in < n)
        ir_node_add_input(k, NULL);
    for (size_t i = 0; i < n; i++)
        ir_node_set_input(k, i, vals[i]);
}

long opt_fz_each(OptCtx *c, const char *op, bool (*one)(OptCtx *, IrNode *))
{
    long n = 0;
    IR_FOR_NODES(c->g, k)
        while (opt_fz_op(k, op) && one(c, k))
            n++;
    return n;
}

bool opt_fz_other_attrs(const IrNode *k, const char *const *known)
{
    for (size_t a = 0; a < k->n_attr; a++) {
        bool found = false;
        for (size_t i = 0; known[i] && !found; i++)
            found = k->attr[a]->name && strcmp(k->attr[a]->name, known[i]) == 0;
        if (!found)
            return true;
    }
    return false;
}
