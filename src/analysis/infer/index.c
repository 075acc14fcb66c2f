/*
 * infer/index.c - inference of the index family: gathers (Gather,
 * GatherElements, GatherND), scatters (output shaped like the data),
 * Compress, NonZero, Unique, ReverseSequence and TopK. Gather of a small
 * integer tensor keeps its tracked elements (symval), so that
 * Shape->Gather still gives known dims.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TopK: X's shape with the axis dim replaced by k (attribute `k` in
 * version 1, the one-element input K from version 10); both outputs. */
static int inf_topk(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    IrDim k = {0};
    if (c->since < 10) {
        if (inf_attr_has(c, "k"))
            inf_dim_set(&k, inf_attr_i(c, "k"));
    } else {
        inf_scalar_in_dim(c, 1, &k);
    }
    if (inf_dim_known(&k) && k.value < 0)
        return inf_fail(c, "shape", "k is negative (%lld)", (long long)k.value);
    int ax;
    if (!in) {
        inf_dim_unknown(&k);
        return 0;
    }
    if (inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)in->rank, 0, &ax) < 0) {
        inf_dim_unknown(&k);
        return -1;
    }
    if (inf_dim_known(&k) && inf_dim_known(&in->dims[ax]) && k.value > in->dims[ax].value) {
        long long kv = (long long)k.value;
        inf_dim_unknown(&k);
        return inf_fail(c, "shape", "k (%lld) exceeds the axis dimension (%lld)", kv,
                        (long long)in->dims[ax].value);
    }
    for (size_t o = 0; o < 2; o++) {
        IrShape *s = inf_out_shape(c, o, in->rank);
        for (size_t d = 0; s && d < in->rank; d++)
            inf_dim_copy(&s->dims[d], (int)d == ax ? &k : &in->dims[d]);
    }
    inf_dim_unknown(&k);
    return 0;
}

/* Gather: data[:axis] + indices.shape + data[axis+1:]; gathering known
 * indices from a tracked vector picks its elements (a dim of a Shape). */
static int inf_gather(InfCtx *c)
{
    const IrShape *data = inf_in_shape(c, 0), *idx = inf_in_shape(c, 1);
    int axis = 0;
    if (data && inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)data->rank, 0,
                         &axis) < 0)
        return -1;
    int64_t *iv;
    size_t ni;
    if (inf_in_ints(c, 1, &iv, &ni)) {
        const IrDim *ad = data ? &data->dims[axis] : NULL;
        const IrShape *sv = inf_t_symval(c, 0);
        int64_t len = ad && inf_dim_known(ad) ? ad->value
                    : sv && inf_in_rank(c, 0) == 1 ? (int64_t)sv->rank : -1;
        for (size_t k = 0; len >= 0 && k < ni; k++)
            if (iv[k] < -len || iv[k] >= len) {
                long long bad = (long long)iv[k];
                free(iv);
                return inf_fail(c, "shape", "index %lld is out of range for size %lld",
                                bad, (long long)len);
            }
        if (sv && inf_in_rank(c, 0) == 1 && axis == 0 && len == (int64_t)sv->rank &&
            ni <= INF_T_MAX_SYMVAL) {
            IrShape *o = ir_shape_new(ni);
            for (size_t k = 0; k < ni; k++)
                inf_dim_copy(&o->dims[k], &sv->dims[iv[k] < 0 ? iv[k] + len : iv[k]]);
            inf_out_symval(c, 0, o);
        }
        free(iv);
    }
    if (!data || !idx)
        return 0;
    IrShape *o = inf_out_shape(c, 0, data->rank - 1 + idx->rank);
    size_t j = 0;
    for (size_t k = 0; o && k < (size_t)axis; k++)
        inf_dim_copy(&o->dims[j++], &data->dims[k]);
    for (size_t k = 0; o && k < idx->rank; k++)
        inf_dim_copy(&o->dims[j++], &idx->dims[k]);
    for (size_t k = (size_t)axis + 1; o && k < data->rank; k++)
        inf_dim_copy(&o->dims[j++], &data->dims[k]);
    return 0;
}

/* GatherElements: the shape of indices, which has the data's rank. */
static int inf_gather_elements(InfCtx *c)
{
    int r = inf_in_rank(c, 0), q = inf_in_rank(c, 1), axis;
    if (r >= 0 && q >= 0 && r != q)
        return inf_fail(c, "rank", "data has rank %d but indices %d", r, q);
    if (r >= 0 && inf_axis(c, "axis", inf_attr_i(c, "axis"), r, 0, &axis) < 0)
        return -1;
    return inf_out_shape_of(c, 0, 1);
}

/* GatherND: indices.shape[:-1] + data.shape[batch_dims + k:], k being the
 * last dim of indices (which must be known). */
static int inf_gather_nd(InfCtx *c)
{
    const IrShape *data = inf_in_shape(c, 0), *idx = inf_in_shape(c, 1);
    int64_t b = c->since >= 12 ? inf_attr_i(c, "batch_dims") : 0;
    if (!data || !idx)
        return 0;
    int64_t r = (int64_t)data->rank, q = (int64_t)idx->rank;
    if (q < 1 || r < 1)
        return inf_fail(c, "rank", "data and indices need rank >= 1");
    if (b < 0 || b >= (q < r ? q : r))
        return inf_fail(c, "shape", "batch_dims %lld is not below both ranks",
                        (long long)b);
    const IrDim *kd = &idx->dims[q - 1];
    if (!inf_dim_known(kd))
        return 0;
    int64_t k = kd->value;
    if (k < 1 || k > r - b)
        return inf_fail(c, "shape", "indices' last dim %lld does not fit data of "
                        "rank %lld with %lld batch dims", (long long)k, (long long)r,
                        (long long)b);
    IrShape *o = inf_out_shape(c, 0, (size_t)(q - 1 + r - k - b));
    size_t j = 0;
    for (int64_t i = 0; o && i < q - 1; i++) {
        inf_dim_copy(&o->dims[j], &idx->dims[i]);
        if (i < b && inf_t_merge_dim(&o->dims[j], &data->dims[i]) < 0)
            return inf_fail(c, "shape", "batch dim %lld differs between data and "
                            "indices", (long long)i);
        j++;
    }
    for (int64_t i = b + k; o && i < r; i++)
        inf_dim_copy(&o->dims[j++], &data->dims[i]);
    return 0;
}

/* NonZero: [rank, number of nonzeros (unknown)]. */
static int inf_nonzero(InfCtx *c)
{
    int r = inf_in_rank(c, 0);
    IrShape *o = inf_out_shape(c, 0, 2);
    if (o && r >= 0)
        inf_dim_set(&o->dims[0], r);
    return 0;
}

/* Compress: the selected slices along `axis` (or of the flattened input);
 * their number is known when the condition is a constant. */
static int inf_compress(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    const IrAttr *a = inf_attr(c, "axis");
    int axis = -1;
    if (a && a->has_i) {
        if (!in)
            return 0;
        if (inf_axis(c, "axis", a->i, (int)in->rank, 0, &axis) < 0)
            return -1;
    }
    IrDim avail = {0};
    if (in && axis >= 0)
        inf_dim_copy(&avail, &in->dims[axis]);
    else if (in)
        inf_dims_product(&avail, in, 0, in->rank);
    IrDim sel = {0};
    int64_t *cv;
    size_t n;
    if (inf_dim_known(&avail) && inf_in_ints(c, 1, &cv, &n)) {
        if ((int64_t)n <= avail.value) {
            int64_t cnt = 0;
            for (size_t k = 0; k < n; k++)
                cnt += cv[k] != 0;
            inf_dim_set(&sel, cnt);
        }
        free(cv);
    }
    if (axis < 0) {
        IrShape *o = inf_out_shape(c, 0, 1);
        if (o)
            inf_dim_copy(&o->dims[0], &sel);
    } else {
        IrShape *o = inf_out_shape(c, 0, in->rank);
        for (size_t k = 0; o && k < in->rank; k++)
            inf_dim_copy(&o->dims[k], (int)k == axis ? &sel : &in->dims[k]);
    }
    inf_dim_unknown(&avail);
    inf_dim_unknown(&sel);
    return 0;
}

/* Unique: Y is 1-D of unknown length (or the input with an unknown size
 * on `axis`); indices and counts have that length; inverse_indices has
 * one entry per input element (or per slice along axis). */
static int inf_unique(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    const IrAttr *a = inf_attr(c, "axis");
    bool has_axis = a && a->has_i;
    int axis = 0;
    if (has_axis && in && inf_axis(c, "axis", a->i, (int)in->rank, 0, &axis) < 0)
        return -1;
    /* the number of elements (or slices) looked at; at most one of them
     * is also the number of unique ones */
    IrDim all = {0}, uniq = {0};
    if (in && has_axis)
        inf_dim_copy(&all, &in->dims[axis]);
    else if (in)
        inf_dims_product(&all, in, 0, in->rank);
    if (inf_dim_known(&all) && all.value <= 1)
        inf_dim_copy(&uniq, &all);
    if (!has_axis) {
        IrShape *o = inf_out_shape(c, 0, 1);
        if (o)
            inf_dim_copy(&o->dims[0], &uniq);
    } else if (in) {
        IrShape *o = inf_out_shape(c, 0, in->rank);
        for (size_t k = 0; o && k < in->rank; k++)
            inf_dim_copy(&o->dims[k], (int)k == axis ? &uniq : &in->dims[k]);
    }
    for (size_t i = 1; i < 4; i++) {
        IrShape *o = inf_out_shape(c, i, 1);
        if (o)
            inf_dim_copy(&o->dims[0], i == 2 ? &all : &uniq);
    }
    inf_dim_unknown(&all);
    inf_dim_unknown(&uniq);
    return 0;
}

const InfOp inf_ops_index[] = {
    {"", "TopK", inf_topk},
    {"", "Gather", inf_gather},
    {"", "GatherElements", inf_gather_elements},
    {"", "GatherND", inf_gather_nd},
    {"", "Scatter", inf_like_input0},
    {"", "ScatterElements", inf_like_input0},
    {"", "ScatterND", inf_like_input0},
    {"", "TensorScatter", inf_like_input0},
    {"", "NonZero", inf_nonzero},
    {"", "Compress", inf_compress},
    {"", "ReverseSequence", inf_like_input0},
    {"", "Unique", inf_unique},
    {NULL, NULL, NULL}};
