/*
 * infer/sequence.c - inference of the sequence ops (SequenceConstruct,
 * SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase,
 * SequenceLength, SplitToSequence, ConcatFromSequence) and the optional
 * ops (Optional, OptionalHasElement, OptionalGetElement).
 *
 * Sequence and optional outputs are built here whole (the generic step
 * cannot bind seq/optional type variables from tensor inputs).
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* A new tensor type of element type elem (0 = unknown) and a copy of
 * shape (NULL = rank unknown). */
static IrType *inf_tensor_new(int32_t elem, const IrShape *shape)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_TENSOR;
    t->has_elem_type = elem != 0;
    t->elem_type = elem;
    t->shape = ir_shape_copy(shape);
    inf_type_clean(t);
    return t;
}

/* The element type of sequence input i, or NULL. */
static const IrType *inf_in_seq_elem(const InfCtx *c, size_t i)
{
    const IrType *t = inf_known(inf_in(c, i));
    return t && t->kind == IR_TYPE_SEQUENCE ? inf_known(t->elem) : NULL;
}

/* SequenceConstruct: a sequence whose element type is the union of the
 * inputs' types. */
static int inf_sequence_construct(InfCtx *c)
{
    if (inf_n_in(c) == 0)
        return 0;
    /* an unknown first input makes the union's shapes unknown below */
    IrType *u = inf_type_dup(inf_in(c, 0));
    for (size_t i = 1; i < inf_n_in(c); i++) {
        IrType *x = NULL;
        if (inf_type_union(u, inf_in(c, i), &x) < 0) {
            ir_type_free(u);
            return inf_fail(c, "type-constraint", "input %zu differs in type "
                            "from input 0", i);
        }
        ir_type_free(u);
        u = x;
    }
    inf_out_type(c, 0, inf_wrap(IR_TYPE_SEQUENCE, u));
    return 0;
}

/* SequenceEmpty: a sequence of tensors of `dtype` (default float), shape
 * unknown. */
static int inf_sequence_empty(InfCtx *c)
{
    int64_t dt = inf_attr_i_or(c, "dtype", IR_FLOAT);
    if (dt <= 0 || dt > INT32_MAX || !ir_dtype_name((int32_t)dt))
        return inf_fail(c, "attribute", "dtype %lld is not a known data type",
                        (long long)dt);
    inf_out_type(c, 0, inf_wrap(IR_TYPE_SEQUENCE, inf_tensor_new((int32_t)dt, NULL)));
    return 0;
}

/* SequenceAt: the sequence's element type; the very element (type and
 * tracked values) when the sequence comes from SequenceConstruct and the
 * position is a constant. */
static int inf_sequence_at(InfCtx *c)
{
    const IrType *e = inf_in_seq_elem(c, 0);
    const IrNode *p = inf_in_producer(c, 0, "SequenceConstruct");
    int64_t *pos;
    size_t n;
    if (p && inf_in_ints(c, 1, &pos, &n)) {
        int64_t k = n == 1 ? pos[0] : INT64_MIN;
        free(pos);
        if (k < 0 && k >= -(int64_t)p->n_in)
            k += (int64_t)p->n_in;
        /* (a position out of range fails at run time, if this runs) */
        const IrValue *v = k >= 0 && k < (int64_t)p->n_in ? p->in[k] : NULL;
        if (v && inf_known(v->type)) {
            inf_out_type(c, 0, inf_type_dup(v->type));
            inf_out_symval(c, 0, ir_shape_copy(v->symval));
            return 0;
        }
    }
    if (e)
        inf_out_type(c, 0, inf_type_dup(e));
    return 0;
}

/* SequenceInsert: the union of the element type and the inserted
 * tensor's. */
static int inf_sequence_insert(InfCtx *c)
{
    const IrType *s = inf_known(inf_in(c, 0));
    if (s && s->kind != IR_TYPE_SEQUENCE)
        return 0;
    IrType *u = NULL;
    if (inf_in_producer(c, 0, "SequenceEmpty")) {
        /* no element yet: the inserted tensor is the only one */
        if (s && inf_type_union(s->elem, inf_in(c, 1), &u) < 0)
            return inf_fail(c, "type-constraint", "the inserted tensor's type "
                            "differs from the sequence's elements");
        ir_type_free(u);
        u = inf_type_dup(inf_in(c, 1));
        if (u && u->kind == IR_TYPE_TENSOR && !u->has_elem_type && s &&
            s->elem && s->elem->has_elem_type) {
            u->has_elem_type = true;
            u->elem_type = s->elem->elem_type;
        }
        inf_out_type(c, 0, inf_wrap(IR_TYPE_SEQUENCE, u));
        return 0;
    }
    if (inf_type_union(s ? s->elem : NULL, inf_in(c, 1), &u) < 0)
        return inf_fail(c, "type-constraint", "the inserted tensor's type differs "
                        "from the sequence's elements");
    inf_out_type(c, 0, inf_wrap(IR_TYPE_SEQUENCE, u));
    return 0;
}

/* SequenceErase: the input's type. */
static int inf_sequence_erase(InfCtx *c)
{
    const IrType *s = inf_known(inf_in(c, 0));
    if (s && s->kind == IR_TYPE_SEQUENCE)
        inf_out_type(c, 0, inf_type_dup(s));
    return 0;
}

/* SequenceLength: an int64 scalar, tracked when the sequence comes
 * straight from SequenceConstruct or SequenceEmpty. */
static int inf_sequence_length(InfCtx *c)
{
    inf_out_elem(c, 0, IR_INT64);
    inf_out_shape(c, 0, 0);
    const IrNode *p = inf_in_producer(c, 0, "SequenceConstruct");
    if (p || inf_in_producer(c, 0, "SequenceEmpty")) {
        IrShape *sv = ir_shape_new(1);
        inf_dim_set(&sv->dims[0], p ? (int64_t)p->n_in : 0);
        inf_out_symval(c, 0, sv);
    }
    return 0;
}

/* The size of SplitToSequence's pieces along the axis of length d, when all
 * pieces are alike; unknown otherwise. -1 on a split that cannot fit. */
static int inf_split_piece(InfCtx *c, const IrDim *d, IrDim *piece)
{
    int64_t *v;
    size_t n;
    int r = inf_in_rank(c, 1);
    if (!inf_in_ints(c, 1, &v, &n))
        return 0;
    if (r == 0 || (r < 0 && n == 1 && !inf_in_shape(c, 1))) {
        /* scalar: pieces of v[0], the last one possibly shorter */
        int64_t s = n == 1 ? v[0] : 0;
        if (s == 1)
            inf_dim_set(piece, 1);
        else if (s > 0 && inf_dim_known(d) && (d->value % s == 0 || d->value < s))
            inf_dim_set(piece, d->value % s == 0 ? s : d->value);
        free(v);
        return 0;
    }
    if (n == 0) {
        free(v);
        return 0; /* no sizes: nothing to check against */
    }
    int64_t sum = 0;
    bool same = true;
    for (size_t k = 0; k < n; k++) {
        if (v[k] < 0 || v[k] > INT64_MAX - sum) {
            long long bad = v[k];
            free(v);
            return inf_fail(c, "shape", "split entry %zu is %lld", k, bad);
        }
        sum += v[k];
        same = same && v[k] == v[0];
    }
    int64_t first = v[0];
    free(v);
    if (inf_dim_known(d) && sum != d->value)
        return inf_fail(c, "shape", "split sums to %lld but the axis has length %lld",
                        (long long)sum, (long long)d->value);
    if (same)
        inf_dim_set(piece, first);
    return 0;
}

/* SplitToSequence: pieces of the input along `axis`: of size 1 without
 * `split` (the axis dropped when keepdims=0), else of the sizes split
 * gives (keepdims ignored). */
static int inf_split_to_sequence(InfCtx *c)
{
    const IrType *t = inf_known(inf_in(c, 0));
    if (!t || t->kind != IR_TYPE_TENSOR)
        return 0;
    const IrShape *s = t->shape;
    IrShape *e = NULL;
    if (s) {
        int ax;
        if (inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)s->rank, 0, &ax) < 0)
            return -1;
        if (!inf_has_in(c, 1) && inf_attr_i(c, "keepdims") == 0) {
            e = inf_shape_drop(s, (size_t)ax);
        } else {
            e = ir_shape_copy(s);
            inf_dim_unknown(&e->dims[ax]);
            if (!inf_has_in(c, 1))
                inf_dim_set(&e->dims[ax], 1);
            else if (inf_split_piece(c, &s->dims[ax], &e->dims[ax]) < 0) {
                ir_shape_free(e);
                return -1;
            }
        }
    }
    IrType *el = inf_tensor_new(t->has_elem_type ? t->elem_type : 0, e);
    ir_shape_free(e);
    inf_out_type(c, 0, inf_wrap(IR_TYPE_SEQUENCE, el));
    return 0;
}

/* The joined length of ConcatFromSequence when the sequence comes from
 * SequenceConstruct: the count of elements (stacking), or the sum of
 * their lengths along axis `ax`. Leaves len unknown otherwise. */
static void inf_concat_len(InfCtx *c, bool stack, int ax, IrDim *len)
{
    const IrNode *p = inf_in_producer(c, 0, "SequenceConstruct");
    if (!p)
        return;
    if (stack) {
        inf_dim_set(len, (int64_t)p->n_in);
        return;
    }
    IrDim acc = {.kind = IR_DIM_VALUE, .value = 0};
    for (size_t i = 0; i < p->n_in; i++) {
        const IrType *t = p->in[i] ? inf_known(p->in[i]->type) : NULL;
        const IrShape *s = inf_tshape(t);
        if (!s || (size_t)ax >= s->rank) {
            inf_dim_unknown(&acc);
            return;
        }
        inf_dim_add(&acc, &acc, &s->dims[ax]);
    }
    inf_dim_copy(len, &acc);
    inf_dim_unknown(&acc);
}

/* ConcatFromSequence: the elements joined along `axis` (new_axis=1:
 * stacked along a new axis); the joined length is unknown. */
static int inf_concat_from_sequence(InfCtx *c)
{
    const IrType *e = inf_in_seq_elem(c, 0);
    if (!inf_attr_has(c, "axis"))
        return inf_fail(c, "attribute", "'axis' is required");
    int64_t na = inf_attr_i(c, "new_axis");
    if (na != 0 && na != 1)
        return inf_fail(c, "attribute", "new_axis is %lld, not 0 or 1", (long long)na);
    if (!e || e->kind != IR_TYPE_TENSOR)
        return 0;
    IrType *t = inf_tensor_new(e->has_elem_type ? e->elem_type : 0, NULL);
    if (e->shape) {
        int ax;
        if (inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)e->shape->rank,
                     (int)na, &ax) < 0) {
            ir_type_free(t);
            return -1;
        }
        IrDim len = {0};
        inf_concat_len(c, na != 0, ax, &len);
        if (na) {
            t->shape = inf_shape_insert(e->shape, (size_t)ax, &len);
        } else {
            t->shape = ir_shape_copy(e->shape);
            inf_dim_copy(&t->shape->dims[ax], &len);
        }
        inf_dim_unknown(&len);
        inf_type_clean(t);
    }
    inf_out_type(c, 0, t);
    return 0;
}

/* Optional: an optional of the input's type, or of the `type` attribute's
 * when there is no input. */
static int inf_optional(InfCtx *c)
{
    const IrAttr *a = inf_attr(c, "type");
    const IrType *t = inf_known(inf_in(c, 0));
    if (!inf_has_in(c, 0) && !(a && a->tp))
        return inf_fail(c, "attribute", "with no input, the 'type' attribute is "
                        "required");
    if (!t && a)
        t = inf_known(a->tp);
    inf_out_type(c, 0, inf_wrap(IR_TYPE_OPTIONAL, inf_type_dup(t)));
    return 0;
}

/* OptionalGetElement: the optional's element type (from v18 a tensor or
 * sequence input passes through, tracked elements too). */
static int inf_optional_get_element(InfCtx *c)
{
    const IrType *t = inf_known(inf_in(c, 0));
    if (t && t->kind == IR_TYPE_OPTIONAL) {
        inf_out_type(c, 0, inf_type_dup(t->elem));
    } else if (t && c->since >= 18) {
        inf_out_type(c, 0, inf_type_dup(t));
        inf_out_symval(c, 0, ir_shape_copy(inf_in_symval(c, 0)));
    }
    return 0;
}

/* OptionalHasElement: a bool scalar. */
static int inf_optional_has_element(InfCtx *c)
{
    inf_out_elem(c, 0, IR_BOOL);
    inf_out_shape(c, 0, 0);
    return 0;
}

const InfOp inf_ops_sequence[] = {
    {"", "SequenceConstruct", inf_sequence_construct},
    {"", "SequenceEmpty", inf_sequence_empty},
    {"", "SequenceAt", inf_sequence_at},
    {"", "SequenceInsert", inf_sequence_insert},
    {"", "SequenceErase", inf_sequence_erase},
    {"", "SequenceLength", inf_sequence_length},
    {"", "SplitToSequence", inf_split_to_sequence},
    {"", "ConcatFromSequence", inf_concat_from_sequence},
    {"", "Optional", inf_optional},
    {"", "OptionalGetElement", inf_optional_get_element},
    {"", "OptionalHasElement", inf_optional_has_element},
    {NULL, NULL, NULL}};
