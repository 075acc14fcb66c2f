/*
 * infer/common.c - what the op functions of several families share
 * (declared in infer_ops.h): the type helpers of control flow and
 * sequences, the functions of ops whose output is shaped like an input,
 * and the readers of dims, axes and shape tensors.
 */
#include "analysis/infer/infer_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- types of control flow and sequence outputs ------------------ */

/* t, or NULL when t is absent or of kind NONE (unknown). */
const IrType *inf_known(const IrType *t)
{
    return t && t->kind != IR_TYPE_NONE ? t : NULL;
}

/* Drops the denotations of t and its dims, at every level (an output is a
 * new value: what the source was denoted as does not carry over). */
void inf_type_clean(IrType *t)
{
    for (; t; t = t->elem) {
        free(t->denotation);
        t->denotation = NULL;
        for (size_t k = 0; t->shape && k < t->shape->rank; k++) {
            free(t->shape->dims[k].denotation);
            t->shape->dims[k].denotation = NULL;
        }
    }
}

/* A clean copy of t (NULL for unknown). */
IrType *inf_type_dup(const IrType *t)
{
    IrType *r = ir_type_copy(inf_known(t));
    inf_type_clean(r);
    return r;
}

/* Drops every shape in t (tensor, or the elements of a sequence/optional),
 * keeping kinds and element types. */
void inf_type_strip(IrType *t)
{
    for (; t; t = t->elem) {
        ir_shape_free(t->shape);
        t->shape = NULL;
    }
}

/* A sequence or optional type around elem (taken), or NULL when elem is. */
IrType *inf_wrap(IrTypeKind kind, IrType *elem)
{
    if (!elem)
        return NULL;
    IrType *t = mem_alloc(sizeof *t);
    t->kind = kind;
    t->elem = elem;
    return t;
}

/* The union of two shapes: per dim the common value or symbol, else
 * unknown; NULL when either rank is unknown or the ranks differ. */
IrShape *inf_shape_union(const IrShape *a, const IrShape *b)
{
    if (!a || !b || a->rank != b->rank)
        return NULL;
    IrShape *s = ir_shape_new(a->rank);
    for (size_t k = 0; k < a->rank; k++)
        if (inf_dim_same(&a->dims[k], &b->dims[k]))
            inf_dim_copy(&s->dims[k], &a->dims[k]);
    return s;
}

/* The union of the types of two values one output may be (the branches of
 * an If, a loop state before and after an iteration, the elements of a
 * sequence): same kind and element type, shapes merged dim by dim. When
 * one side is unknown the other's kind and element type stand (the spec
 * makes them equal), its shapes do not. *out is NULL when both are
 * unknown. Returns -1 when kinds or element types definitely differ. */
int inf_type_union(const IrType *a, const IrType *b, IrType **out)
{
    a = inf_known(a);
    b = inf_known(b);
    *out = NULL;
    if (!a || !b) {
        *out = inf_type_dup(a ? a : b);
        inf_type_strip(*out);
        return 0;
    }
    if (a->kind != b->kind)
        return -1;
    if (a->has_elem_type && b->has_elem_type && a->elem_type != b->elem_type)
        return -1;
    if (a->has_key_type && b->has_key_type && a->key_type != b->key_type)
        return -1;
    IrType *t = mem_alloc(sizeof *t);
    t->kind = a->kind;
    t->has_elem_type = a->has_elem_type || b->has_elem_type;
    t->elem_type = a->has_elem_type ? a->elem_type : b->elem_type;
    t->has_key_type = a->has_key_type || b->has_key_type;
    t->key_type = a->has_key_type ? a->key_type : b->key_type;
    if (a->kind == IR_TYPE_OPAQUE) {
        t->opaque_domain = mem_strdup(a->opaque_domain);
        t->opaque_name = mem_strdup(a->opaque_name);
    }
    t->shape = inf_shape_union(a->shape, b->shape);
    if ((a->elem || b->elem) && inf_type_union(a->elem, b->elem, &t->elem) < 0) {
        ir_type_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

/* A tensor type's shape, or NULL (not a tensor, or rank unknown). */
const IrShape *inf_tshape(const IrType *t)
{
    return t && t->kind == IR_TYPE_TENSOR ? t->shape : NULL;
}

/* A copy of shape s with dim `at` removed (s has rank > at). */
IrShape *inf_shape_drop(const IrShape *s, size_t at)
{
    IrShape *r = ir_shape_new(s->rank - 1);
    for (size_t k = 0, o = 0; k < s->rank; k++)
        if (k != at)
            inf_dim_copy(&r->dims[o++], &s->dims[k]);
    return r;
}

/* A copy of shape s with dim d inserted at `at` (at <= rank). */
IrShape *inf_shape_insert(const IrShape *s, size_t at, const IrDim *d)
{
    IrShape *r = ir_shape_new(s->rank + 1);
    for (size_t k = 0, i = 0; k < r->rank; k++) {
        if (k == at)
            inf_dim_copy(&r->dims[k], d);
        else
            inf_dim_copy(&r->dims[k], &s->dims[i++]);
    }
    return r;
}

/* The node producing input i when it is the ai.onnx op `op`, else NULL:
 * a sequence is immutable, so its producer tells how many elements it
 * holds and which. */
const IrNode *inf_in_producer(const InfCtx *c, size_t i, const char *op)
{
    const IrValue *v = inf_has_in(c, i) ? c->node->in[i] : NULL;
    const IrNode *p = v && v->kind == IR_VAL_NODE ? v->producer : NULL;
    if (!p || !p->op_type || strcmp(p->op_type, op) != 0 ||
        ir_domain_norm(p->domain)[0])
        return NULL;
    return p;
}

/* ---- ops whose output is shaped like an input -------------------- */

int inf_unary(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

/* Ops whose output 0 has input 0's shape (LRN, InstanceNormalization,
 * GroupNormalization, MeanVarianceNormalization, RotaryEmbedding, ...). */
int inf_same(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

/* Softmax, LogSoftmax, Hardmax, LpNormalization: same shape; the axis
 * must fit the rank. */
int inf_axis_same(InfCtx *c)
{
    if (inf_check_axis(c, 0) < 0)
        return -1;
    return inf_same_as_input(c, 0);
}

/* Ops whose output has the shape of input 0 (scatters, Trilu, CumSum,
 * ReverseSequence, TensorScatter, ...). */
int inf_like_input0(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

/* ---- dims, ranks and axes ---------------------------------------- */

/* dst = a / b when a is a known multiple of the known b (b > 0), and
 * a itself when b is 1; else unknown. */
void inf_dim_div(IrDim *dst, const IrDim *a, int64_t b)
{
    if (b == 1) {
        inf_dim_copy(dst, a);
    } else if (b > 0 && inf_dim_known(a) && a->value >= 0 && a->value % b == 0) {
        inf_dim_set(dst, a->value / b);
    } else {
        inf_dim_unknown(dst);
    }
}

/* Output `o` gets shape `s` (a copy); nothing when s is NULL. */
void inf_out_copy(InfCtx *c, size_t o, const IrShape *s)
{
    if (!s)
        return;
    IrShape *r = inf_out_shape(c, o, s->rank);
    for (size_t k = 0; r && k < s->rank; k++)
        inf_dim_copy(&r->dims[k], &s->dims[k]);
}

/* Fails when a known rank of input i differs from `want`. */
int inf_need_rank(InfCtx *c, size_t i, int want, const char *what)
{
    int r = inf_in_rank(c, i);
    if (r >= 0 && r != want)
        return inf_fail(c, "rank", "%s must have rank %d, has %d", what, want, r);
    return 0;
}

/* Checks an `axis` attribute the node has against the input's rank (when
 * known); an absent one is the table's default, which fits any rank. */
int inf_check_axis(InfCtx *c, size_t i)
{
    int r = inf_in_rank(c, i), ax;
    if (r < 0 || !inf_attr_has(c, "axis"))
        return 0;
    return inf_axis(c, "axis", inf_attr_i(c, "axis"), r, 0, &ax);
}

/* A new shape holding dims [from, to) of s. */
IrShape *inf_sub_shape(const IrShape *s, size_t from, size_t to)
{
    IrShape *r = ir_shape_new(to > from ? to - from : 0);
    for (size_t k = from; k < to; k++)
        inf_dim_copy(&r->dims[k - from], &s->dims[k]);
    return r;
}

/* Reads a one-element integer input (a scalar or [1] tensor) as a dim:
 * a number from its constant, or its tracked element (maybe a symbol).
 * Leaves d unknown otherwise. */
void inf_scalar_in_dim(const InfCtx *c, size_t i, IrDim *d)
{
    int64_t *v;
    size_t n;
    inf_dim_unknown(d);
    if (inf_in_ints(c, i, &v, &n)) {
        if (n == 1)
            inf_dim_set(d, v[0]);
        free(v);
        return;
    }
    const IrShape *sv = inf_in_symval(c, i);
    if (sv && sv->rank == 1)
        inf_dim_copy(d, &sv->dims[0]);
}

/* The element type an INT attribute names (dtype, output_datatype): the
 * attribute, else the schema's default, else 0 (none); -1 (with a
 * message) when it names no data type. */
int32_t inf_dtype_attr(InfCtx *c, const char *name)
{
    int64_t d = inf_attr_i(c, name);
    if (d == 0 && !inf_attr_has(c, name))
        return 0;
    if (d <= 0 || d > INT32_MAX || !ir_dtype_name((int32_t)d)) {
        inf_fail(c, "attribute", "'%s' (%lld) is not a known data type", name,
                 (long long)d);
        return -1;
    }
    return (int32_t)d;
}

/* ---- shape tensors (lists of dims read from inputs and attributes) --- */

/* Output o gets a copy of the dims of s (no denotations). */
void inf_t_out_dims(InfCtx *c, size_t o, const IrShape *s)
{
    IrShape *out = inf_out_shape(c, o, s->rank);
    for (size_t k = 0; out && k < s->rank; k++)
        inf_dim_copy(&out->dims[k], &s->dims[k]);
}

/* A new shape whose dims are the known numbers v[0..n). */
IrShape *inf_t_shape_of_ints(const int64_t *v, size_t n)
{
    IrShape *s = ir_shape_new(n);
    for (size_t k = 0; k < n; k++)
        inf_dim_set(&s->dims[k], v[k]);
    return s;
}

/* The elements of an integer input of rank <= 1 as dims (numbers from a
 * constant, else its symval with symbols and unknowns), or NULL. */
IrShape *inf_t_in_dims(const InfCtx *c, size_t i)
{
    int64_t *v;
    size_t n;
    if (inf_in_ints(c, i, &v, &n)) {
        IrShape *s = inf_t_shape_of_ints(v, n);
        free(v);
        return s;
    }
    const IrShape *sv = inf_in_symval(c, i);
    if (sv && inf_in_rank(c, i) <= 1)
        return ir_shape_copy(sv);
    return NULL;
}

/* Number of elements of a 1-D input (a shape, axes, pads ...) when known
 * and plausible as a rank, else -1. */
int64_t inf_t_in_len(const InfCtx *c, size_t i)
{
    const IrShape *s = inf_in_shape(c, i);
    int64_t len = -1;
    if (s && s->rank == 1 && inf_dim_known(&s->dims[0]))
        len = s->dims[0].value;
    else if (inf_in_symval(c, i))
        len = (int64_t)inf_in_symval(c, i)->rank;
    else {
        int64_t *v;
        size_t n;
        if (inf_in_ints(c, i, &v, &n)) {
            free(v);
            len = (int64_t)n;
        }
    }
    return len >= 0 && len <= INF_T_MAX_RANK ? len : -1;
}

/* The tracked elements of input i when it is a vector or scalar. */
const IrShape *inf_t_symval(const InfCtx *c, size_t i)
{
    const IrShape *sv = inf_in_symval(c, i);
    return sv && inf_in_rank(c, i) <= 1 ? sv : NULL;
}

/* Reads an integer list from attribute `attr` (from_attr) or from input
 * `in`: 1 = known (*v malloc'd, *n set), 0 = absent, -1 = present but not
 * known. */
int inf_t_ints(const InfCtx *c, bool from_attr, const char *attr,
               size_t in, int64_t **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (from_attr) {
        const int64_t *a;
        long cnt = inf_attr_ints(c, attr, &a);
        if (cnt < 0)
            return 0;
        *v = mem_array(cnt ? (size_t)cnt : 1, sizeof **v);
        if (cnt)
            memcpy(*v, a, (size_t)cnt * sizeof **v);
        *n = (size_t)cnt;
        return 1;
    }
    if (!inf_has_in(c, in))
        return 0;
    return inf_in_ints(c, in, v, n) ? 1 : -1;
}

/* Normalizes every axis of v[0..n) for a tensor of `rank` (extra as in
 * inf_axis) into out (caller's array of n ints); with no_dups, a repeated
 * axis is a contradiction. */
int inf_t_axes(InfCtx *c, const char *what, const int64_t *v, size_t n,
               int rank, int extra, bool no_dups, int *out)
{
    for (size_t k = 0; k < n; k++) {
        if (inf_axis(c, what, v[k], rank, extra, &out[k]) < 0)
            return -1;
        for (size_t j = 0; no_dups && j < k; j++)
            if (out[j] == out[k])
                return inf_fail(c, "axis", "%s repeats axis %d", what, out[k]);
    }
    return 0;
}

/* An element type code the IR knows, for attributes naming one. */
bool inf_t_dtype_ok(int64_t d)
{
    return d > 0 && d < 1000 && ir_dtype_name((int32_t)d) != NULL;
}

/* Merges dim x into the running dim m of inputs that must agree: a number
 * wins over a symbol, a symbol over unknown. -1 when two numbers differ. */
int inf_t_merge_dim(IrDim *m, const IrDim *x)
{
    if (inf_dim_known(x)) {
        if (inf_dim_known(m) && m->value != x->value)
            return -1;
        inf_dim_copy(m, x);
    } else if (x->kind == IR_DIM_PARAM && m->kind == IR_DIM_UNSET) {
        inf_dim_copy(m, x);
    }
    return 0;
}
