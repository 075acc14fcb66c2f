/*
 * infer/reduce.c - inference of the reduce family: Reduce* (axes as an
 * attribute in early versions, as an optional input later; keepdims;
 * noop_with_empty_axes), ArgMax/ArgMin (one axis, int64 output), CumSum,
 * CumProd, Det and the losses (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss).
 * Element types come from the generic step. On small integer tensors
 * (shape arithmetic, e.g. ReduceProd of a Shape slice) the reduced
 * element is also tracked (symval).
 */
#include "analysis/infer.h"

#include <stdlib.h>
#include <string.h>

/* Axes beyond this rank are not handled (the mask lives on the stack). */
#define INF_REDUCE_MAX_RANK 1024

/* The first version of op that takes `axes` as an input instead of an
 * attribute: ReduceSum moved at opset 13, the other Reduce ops at 18. */
static int inf_reduce_input_since(const char *op)
{
    return strcmp(op, "ReduceSum") == 0 ? 13 : 18;
}

/* What the axes of a reduction say. */
typedef enum {
    INF_AXES_LIST,    /* a known list (possibly empty) */
    INF_AXES_UNKNOWN  /* an input whose values are not known */
} InfAxesKind;

/* Reads the axes of a Reduce node into *v (caller frees) and *n. An
 * absent attribute or input reads as an empty list; an input of known
 * shape [0] too. */
static InfAxesKind inf_reduce_axes(const InfCtx *c, int64_t **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (c->since < inf_reduce_input_since(c->schema->op)) {
        const int64_t *a;
        long cnt = inf_attr_ints(c, "axes", &a);
        if (cnt > 0) {
            *v = mem_array((size_t)cnt, sizeof **v);
            memcpy(*v, a, (size_t)cnt * sizeof **v);
            *n = (size_t)cnt;
        }
        return INF_AXES_LIST;
    }
    if (!inf_has_in(c, 1))
        return INF_AXES_LIST;
    if (inf_in_ints(c, 1, v, n))
        return INF_AXES_LIST;
    const IrShape *s = inf_in_shape(c, 1);
    if (s && s->rank == 1 && inf_dim_known(&s->dims[0]) && s->dims[0].value == 0)
        return INF_AXES_LIST;
    return INF_AXES_UNKNOWN;
}

/* Tracks the reduced element of a rank <= 1 integer input reduced to one
 * element (ReduceProd/Sum/Max/Min over shape arithmetic). */
static void inf_reduce_symval(InfCtx *c)
{
    const IrShape *sv = inf_in_symval(c, 0);
    int rank = inf_in_rank(c, 0);
    const char *op = c->schema->op;
    if (!sv || rank > 1 || sv->rank == 0)
        return;
    bool prod = strcmp(op, "ReduceProd") == 0, sum = strcmp(op, "ReduceSum") == 0;
    bool max = strcmp(op, "ReduceMax") == 0, min = strcmp(op, "ReduceMin") == 0;
    if (!prod && !sum && !max && !min)
        return;
    IrShape *r = ir_shape_new(1);
    IrDim *acc = &r->dims[0];
    if (prod || sum) {
        inf_dim_set(acc, prod ? 1 : 0);
        for (size_t k = 0; k < sv->rank; k++) {
            if (prod)
                inf_dim_mul(acc, acc, &sv->dims[k]);
            else
                inf_dim_add(acc, acc, &sv->dims[k]);
        }
    } else {
        inf_dim_copy(acc, &sv->dims[0]);
        for (size_t k = 1; k < sv->rank; k++) {
            const IrDim *x = &sv->dims[k];
            if (!inf_dim_known(acc) || !inf_dim_known(x)) {
                if (!inf_dim_same(acc, x))
                    inf_dim_unknown(acc);
            } else if (max ? x->value > acc->value : x->value < acc->value) {
                inf_dim_set(acc, x->value);
            }
        }
    }
    inf_out_symval(c, 0, r);
}

/* Output of a reduction whose axes are not known: with keepdims the rank
 * stays and dims of size 1 stay 1 (reduced or not); without it nothing is
 * known. */
static int inf_reduce_unknown_axes(InfCtx *c, const IrShape *in, bool keep)
{
    if (!in || !keep)
        return 0;
    IrShape *o = inf_out_shape(c, 0, in->rank);
    for (size_t k = 0; o && k < in->rank; k++)
        if (inf_dim_known(&in->dims[k]) && in->dims[k].value == 1)
            inf_dim_set(&o->dims[k], 1);
    return 0;
}

/* Writes the reduced shape: dims in mask become 1 (keepdims) or go. */
static void inf_reduce_write(InfCtx *c, const IrShape *in, const bool *mask,
                             bool keep)
{
    size_t out_rank = 0;
    for (size_t k = 0; k < in->rank; k++)
        if (!mask[k] || keep)
            out_rank++;
    IrShape *o = inf_out_shape(c, 0, out_rank);
    size_t j = 0;
    for (size_t k = 0; o && k < in->rank; k++) {
        if (mask[k] && keep)
            inf_dim_set(&o->dims[j++], 1);
        else if (!mask[k])
            inf_dim_copy(&o->dims[j++], &in->dims[k]);
    }
}

/* Every Reduce* op: axes (attribute or input), keepdims, and from the
 * input versions noop_with_empty_axes. No axes means every axis, unless
 * noop_with_empty_axes makes it the identity. */
static int inf_reduce(InfCtx *c)
{
    bool keep = inf_attr_i(c, "keepdims") != 0;
    bool noop = c->since >= inf_reduce_input_since(c->schema->op) &&
                inf_attr_i(c, "noop_with_empty_axes") != 0;
    const IrShape *in = inf_in_shape(c, 0);
    int64_t *axes;
    size_t n;
    if (inf_reduce_axes(c, &axes, &n) == INF_AXES_UNKNOWN)
        return inf_reduce_unknown_axes(c, in, keep);
    if (n == 0 && noop) {
        free(axes);
        inf_out_shape_of(c, 0, 0);
        const IrShape *sv = inf_in_symval(c, 0);
        if (sv)
            inf_out_symval(c, 0, ir_shape_copy(sv));
        return 0;
    }
    if (!in) {
        free(axes);
        if (n == 0 && !keep)
            inf_out_shape(c, 0, 0); /* every axis gone: a scalar */
        return 0;
    }
    if (in->rank > INF_REDUCE_MAX_RANK) {
        free(axes);
        return 0;
    }
    bool mask[INF_REDUCE_MAX_RANK > 0 ? INF_REDUCE_MAX_RANK : 1];
    for (size_t k = 0; k < in->rank; k++)
        mask[k] = n == 0;
    for (size_t k = 0; k < n; k++) {
        int ax;
        if (inf_axis(c, "axes", axes[k], (int)in->rank, 0, &ax) < 0) {
            free(axes);
            return -1;
        }
        mask[ax] = true;
    }
    free(axes);
    inf_reduce_write(c, in, mask, keep);
    bool all = true;
    for (size_t k = 0; k < in->rank; k++)
        all = all && mask[k];
    if (all)
        inf_reduce_symval(c);
    return 0;
}

/* ArgMax, ArgMin: one axis (default 0) reduced, kept as 1 by keepdims;
 * the output is int64 through the schema. */
static int inf_argreduce(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in || in->rank > INF_REDUCE_MAX_RANK)
        return 0;
    int ax;
    if (inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)in->rank, 0, &ax) < 0)
        return -1;
    bool mask[INF_REDUCE_MAX_RANK > 0 ? INF_REDUCE_MAX_RANK : 1];
    for (size_t k = 0; k < in->rank; k++)
        mask[k] = (int)k == ax;
    inf_reduce_write(c, in, mask, inf_attr_i(c, "keepdims") != 0);
    return 0;
}

/* Det: [*, M, M] -> [*]. */
static int inf_det(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    if (in->rank < 2)
        return inf_fail(c, "rank", "input must have rank >= 2, has %zu", in->rank);
    if (inf_dim_differ(&in->dims[in->rank - 1], &in->dims[in->rank - 2]))
        return inf_fail(c, "shape", "the last two dimensions (%lld, %lld) must be equal",
                        (long long)in->dims[in->rank - 2].value,
                        (long long)in->dims[in->rank - 1].value);
    IrShape *s = inf_out_shape(c, 0, in->rank - 2);
    for (size_t k = 0; s && k < in->rank - 2; k++)
        inf_dim_copy(&s->dims[k], &in->dims[k]);
    return 0;
}

/* Checks the target [N, d1..dk] against the input [N, C, d1..dk] where
 * both are known. */
static int inf_loss_check(InfCtx *c, const IrShape *s, const IrShape *t)
{
    if (s && s->rank < 2)
        return inf_fail(c, "rank", "input must have rank >= 2, has %zu", s->rank);
    if (!s || !t)
        return 0;
    if (t->rank + 1 != s->rank)
        return inf_fail(c, "rank", "target has rank %zu, the input %zu (expected %zu)",
                        t->rank, s->rank, s->rank - 1);
    for (size_t k = 0; k < t->rank; k++) {
        const IrDim *x = &s->dims[k == 0 ? 0 : k + 1];
        if (inf_dim_differ(x, &t->dims[k]))
            return inf_fail(c, "shape", "target dimension %zu is %lld, the input's %lld",
                            k, (long long)t->dims[k].value, (long long)x->value);
    }
    return 0;
}

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: with reduction
 * "none" the loss has the target's shape [N, d1..dk], else it is a
 * scalar; SCE's optional log_prob has the input's shape. */
static int inf_loss(InfCtx *c)
{
    const char *red = inf_attr_s(c, "reduction");
    if (!red || (strcmp(red, "none") != 0 && strcmp(red, "sum") != 0 &&
                 strcmp(red, "mean") != 0))
        return inf_fail(c, "attribute", "reduction must be none, sum or mean");
    bool none = strcmp(red, "none") == 0;
    const IrShape *s = inf_in_shape(c, 0), *t = inf_in_shape(c, 1);
    if (inf_loss_check(c, s, t) < 0)
        return -1;
    if (!none) {
        inf_out_shape(c, 0, 0);
    } else if (s) {
        IrShape *o = inf_out_shape(c, 0, s->rank - 1);
        for (size_t k = 0; o && k < o->rank; k++) {
            const IrDim *x = &s->dims[k == 0 ? 0 : k + 1];
            inf_dim_copy(&o->dims[k], !inf_dim_known(x) && t && inf_dim_known(&t->dims[k])
                                          ? &t->dims[k] : x);
        }
    } else if (t) {
        inf_out_shape_of(c, 0, 1);
    }
    if (inf_has_out(c, 1))
        inf_out_shape_of(c, 1, 0);
    return 0;
}

/* CumSum, CumProd: the input's shape; a known scalar axis must fit. */
static int inf_cumulative(InfCtx *c)
{
    int64_t *a;
    size_t n;
    int r = inf_in_rank(c, 0), axis;
    if (r >= 0 && inf_in_ints(c, 1, &a, &n)) {
        int rc = n == 1 ? inf_axis(c, "axis", a[0], r, 0, &axis) : 0;
        free(a);
        if (rc < 0)
            return -1;
    }
    return inf_same_as_input(c, 0);
}

const InfOp inf_ops_reduce[] = {
    {"", "ReduceL1", inf_reduce}, {"", "ReduceL2", inf_reduce},
    {"", "ReduceLogSum", inf_reduce}, {"", "ReduceLogSumExp", inf_reduce},
    {"", "ReduceMax", inf_reduce}, {"", "ReduceMean", inf_reduce},
    {"", "ReduceMin", inf_reduce}, {"", "ReduceProd", inf_reduce},
    {"", "ReduceSum", inf_reduce}, {"", "ReduceSumSquare", inf_reduce},
    {"", "ArgMax", inf_argreduce}, {"", "ArgMin", inf_argreduce},
    {"", "Det", inf_det},
    {"", "SoftmaxCrossEntropyLoss", inf_loss},
    {"", "NegativeLogLikelihoodLoss", inf_loss},
    {"", "CumSum", inf_cumulative},
    {"", "CumProd", inf_cumulative},
    {NULL, NULL, NULL}};
