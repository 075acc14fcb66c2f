/*
 * index.c - adapters of the ops that pick and place tensor elements:
 * Compress, Gather, GatherElements, GatherND, NonZero, ReverseSequence,
 * Scatter, ScatterElements, ScatterND, TensorScatter, TopK.
 *
 * tensor.c's header says how negative indices and folded outputs are
 * handled.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

static bool ad_t_is_int_index(int32_t dt)
{
    return dt == IR_INT32 || dt == IR_INT64;
}

/* Dim `axis` of data as a 0-D value of type dt (a constant when known). */
static IrValue *ad_t_dim_value(AdCtx *c, IrValue *data, int64_t axis, int32_t dt)
{
    int64_t d = ad_dim(data, (int)axis);
    if (d >= 0)
        return ad_const_int(c, dt, d);
    IrValue *dim = ad_gather(c, ad_op1(c, "Shape", data), ad_const_int(c, IR_INT64, axis), 0);
    return ad_cast(c, dim, dt);
}

/* Makes input ii of c->n (indices into dim `axis` of input di) hold no
 * negative index: a constant is rewritten when the dim is known, anything
 * else is wrapped at run time. */
static int ad_t_fix_indices(AdCtx *c, size_t di, size_t ii, int64_t axis)
{
    IrValue *data = ad_in(c, di), *idx = ad_in(c, ii);
    if (!idx || ad_nonneg(idx))
        return 0;
    int32_t dt = ad_elem(idx);
    if (!ad_t_is_int_index(dt))
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of indices '%s' is unknown",
                         idx->name);
    if (!ad_axis(axis, ad_rank(data), 0, &axis))
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "axis %lld needs the rank of '%s'", (long long)axis, data->name);
    int64_t d = ad_dim(data, (int)axis);
    TkTensor *v = d >= 0 ? ad_const_tk(idx) : NULL;
    if (v) {
        for (size_t k = 0; k < v->numel; k++)
            if (tk_get_i(v, k) < 0)
                tk_set_i(v, k, tk_get_i(v, k) + d);
        IrValue *nv = ad_const_of(c, v);
        tk_free(v);
        if (!nv)
            return -1;
        ad_swap_input(c, ii, nv);
        return 0;
    }
    IrValue *w = ad_wrap(c, idx, ad_t_dim_value(c, data, axis, dt));
    if (!w)
        return -1;
    ad_set_input(c, ii, w);
    return 0;
}

/* Advances a row-major coordinate over dims. */
static void ad_t_next(int64_t *coord, const int64_t *dims, int rank)
{
    for (int d = rank; d-- > 0;) {
        if (++coord[d] < dims[d])
            return;
        coord[d] = 0;
    }
}

/* ---- Compress ------------------------------------------------------- */

/* Compress 11 -> 9: version 11 accepts a negative axis; it becomes
 * non-negative (needs the input's rank). */
static int ad_compress_11_9(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "axis");
    if (!a || !a->has_i || a->i >= 0)
        return 0;
    int64_t axis;
    if (!ad_axis(a->i, ad_rank(ad_in(c, 0)), 0, &axis))
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "negative axis %lld needs the input's rank",
                         (long long)a->i);
    ad_set_attr_i(c, c->n, "axis", axis);
    return 0;
}

/* Compress below 9: with a constant condition it is a Gather of the
 * positions where the condition holds (of the flattened input when there
 * is no axis). Entries past the input's length are an error in both. */
static int ad_compress_gone(AdCtx *c)
{
    int64_t *cv;
    size_t n;
    if (!ad_const_ints(ad_in(c, 1), &cv, &n))
        return ad_refuse(c, DG_NOT_CONSTANT, "the condition must be a constant");
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cv[i])
            cv[m++] = (int64_t)i;
    IrValue *x = ad_in(c, 0);
    IrAttr *a = ad_attr(c, "axis");
    int64_t axis = 0, flat = -1;
    if (a && a->has_i)
        axis = a->i;
    else
        x = ad_reshape(c, x, 1, &flat);
    IrValue *iv = ad_const_i64s(c, m, cv);
    free(cv);
    return ad_replace_by(c, ad_gather(c, x, iv, axis));
}

/* ---- Gather, GatherElements, GatherND ------------------------------- */

/* Gather 11 -> 1: version 11 accepts negative indices (from the end). */
static int ad_gather_11_1(AdCtx *c)
{
    return ad_t_fix_indices(c, 0, 1, ad_attr_i(c, "axis"));
}

/* GatherElements below 11: with static shapes, out[p] = data[p with
 * p[axis] = idx[p]] is a Gather from the flattened data at
 * sum(p[d] * stride[d], d != axis) + idx[p] * stride[axis]. An index out
 * of range is an error for GatherElements; the expansion only checks the
 * flat position, so such inputs (invalid for the op) are not caught. */
static int ad_gather_elements_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1);
    int64_t dd[AD_MAX_STATIC_RANK], id[AD_MAX_STATIC_RANK], axis;
    int r = ad_static(data, dd, AD_MAX_STATIC_RANK), q = ad_static(idx, id, AD_MAX_STATIC_RANK);
    if (r < 0 || q != r)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "GatherElements needs static shapes here");
    if (!ad_axis(ad_attr_i(c, "axis"), r, 0, &axis))
        return ad_refuse(c, DG_ATTRIBUTE, "axis out of range");
    int32_t dt = ad_elem(idx);
    int64_t m = ad_prod(id, 0, q, AD_MAX_CONST), total = ad_prod(dd, 0, r, INT64_MAX);
    if (!ad_t_is_int_index(dt))
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of indices is unknown");
    if (m < 0 || total < 0 || (uint64_t)m * 8 > AD_MAX_CONST)
        return ad_refuse(c, DG_TOO_LARGE, "the index table would be too large");
    int64_t st[AD_MAX_STATIC_RANK], coord[AD_MAX_STATIC_RANK] = {0};
    for (int d = r; d-- > 0;)
        st[d] = d == r - 1 ? 1 : st[d + 1] * dd[d + 1];
    IrError e;
    TkTensor *off = tk_new(IR_INT64, (size_t)q, id, &e);
    TkTensor *cv = ad_const_tk(idx);
    bool bad = !off;
    for (int64_t k = 0; !bad && k < m; k++) {
        int64_t o = 0;
        for (int d = 0; d < r; d++)
            if (d != axis)
                o += coord[d] * st[d];
        if (cv) {
            int64_t i = tk_get_i(cv, (size_t)k);
            i = i < 0 ? i + dd[axis] : i;
            bad = i < 0 || i >= dd[axis];
            o += i * st[axis];
        }
        tk_set_i(off, (size_t)k, o);
        ad_t_next(coord, id, q);
    }
    if (bad) {
        tk_free(off);
        tk_free(cv);
        return ad_refuse(c, DG_SEMANTICS, "a constant index is out of range");
    }
    IrValue *flat = ad_const_of(c, off);
    if (!cv) {
        IrValue *i64 = ad_cast(c, idx, IR_INT64);
        IrValue *norm = ad_wrap(c, i64, ad_const_int(c, IR_INT64, dd[axis]));
        flat = ad_op2(c, "Add", ad_op2(c, "Mul", norm, ad_const_int(c, IR_INT64, st[axis])), flat);
    }
    tk_free(off);
    tk_free(cv);
    return ad_replace_by(c, ad_gather(c, ad_reshape(c, data, 1, &total), flat, 0));
}

/* The flat row sum(idx[..., j] * st[j]) of each index tuple of idx
 * (rank q, last dim k) into data dims dd, negative components counting
 * from the end of their dim: a constant when idx is one (an index out of
 * range is then refused), else computed (ReduceSum over the last axis). */
static IrValue *ad_t_nd_flat(AdCtx *c, IrValue *idx, int q, int64_t k, const int64_t *dd,
                             const int64_t *st)
{
    TkTensor *cv = ad_const_tk(idx);
    if (!cv) {
        IrValue *norm = ad_wrap(c, idx, ad_const_i64s(c, (size_t)k, dd));
        int64_t last = q - 1;
        return ad_reduce(c, "ReduceSum", ad_op2(c, "Mul", norm, ad_const_i64s(c, (size_t)k, st)),
                         1, &last, false);
    }
    int64_t mm = ad_prod(cv->dims, 0, q - 1, AD_MAX_CONST);
    IrError e;
    TkTensor *f = tk_new(IR_INT64, (size_t)q - 1, cv->dims, &e);
    bool bad = !f || mm < 0 || (uint64_t)mm * 8 > AD_MAX_CONST;
    for (int64_t t = 0; !bad && t < mm; t++) {
        int64_t o = 0;
        for (int64_t j = 0; !bad && j < k; j++) {
            int64_t i = tk_get_i(cv, (size_t)(t * k + j));
            i = i < 0 ? i + dd[j] : i;
            bad = i < 0 || i >= dd[j];
            o += i * st[j];
        }
        tk_set_i(f, (size_t)t, o);
    }
    tk_free(cv);
    IrValue *v = NULL;
    if (bad)
        ad_refuse(c, DG_SEMANTICS, "a constant index is out of range or too many");
    else
        v = ad_const_of(c, f);
    tk_free(f);
    return v;
}

/* GatherND below 11: with the data's shape known and k (the indices' last
 * dim) known, data is reshaped to [P, dims k..] (P = the product of the
 * first k dims) and gathered on axis 0 at the flat position
 * sum(idx[..., j] * stride[j]) of each index tuple; negative components
 * count from the end of their dim. */
static int ad_gathernd_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1);
    int64_t dd[AD_MAX_STATIC_RANK];
    int r, q = ad_rank(idx);
    int64_t k = q >= 1 ? ad_dim(idx, q - 1) : -1;
    if ((r = ad_static(data, dd, AD_MAX_STATIC_RANK)) < 0 || k < 0 || k > r)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "GatherND needs the data's shape and the index depth here");
    int64_t st[AD_MAX_STATIC_RANK], P = ad_prod(dd, 0, r, INT64_MAX);
    if (P < 0)
        return ad_refuse(c, DG_TOO_LARGE, "the data is too large");
    P = ad_prod(dd, 0, (int)k, INT64_MAX);
    for (int64_t j = k; j-- > 0;)
        st[j] = j == k - 1 ? 1 : st[j + 1] * dd[j + 1];
    int64_t shape2[AD_MAX_STATIC_RANK + 1];
    shape2[0] = P;
    for (int d = (int)k; d < r; d++)
        shape2[d - k + 1] = dd[d];
    IrValue *flat = ad_t_nd_flat(c, idx, q, k, dd, st);
    IrValue *d2 = ad_reshape(c, data, (size_t)(r - k + 1), shape2);
    return ad_replace_by(c, ad_gather(c, d2, flat, 0));
}

/* GatherND 12 -> 11: version 12 added batch_dims (default 0, the old
 * behaviour). With b > 0, the leading b dims of data and indices are
 * batch dims; the same gather is GatherND-11 with each index tuple
 * prefixed by its batch coordinates (a constant grid of shape
 * indices.shape[:-1] + [b]), which gives the same output shape. */
static int ad_gathernd_12_11(AdCtx *c)
{
    int64_t b = ad_attr_i(c, "batch_dims");
    if (b == 0) {
        ad_drop_attr(c, "batch_dims");
        return 0;
    }
    IrValue *idx = ad_in(c, 1);
    int64_t id[AD_MAX_STATIC_RANK];
    int q = ad_rank(idx);
    bool known = q >= 1 && q <= AD_MAX_STATIC_RANK;
    for (int d = 0; known && d < q - 1; d++)
        known = (id[d] = ad_dim(idx, d)) >= 0;
    if (!known)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "batch_dims needs the leading dims of the indices");
    if (b < 0 || b > q - 1)
        return ad_refuse(c, DG_ATTRIBUTE, "batch_dims %lld out of range", (long long)b);
    int64_t m = ad_prod(id, 0, q - 1, AD_MAX_CONST);
    if (m < 0 || (uint64_t)m * (uint64_t)b * 8 > AD_MAX_CONST)
        return ad_refuse(c, DG_TOO_LARGE, "the batch grid would be too large");
    int64_t gd[AD_MAX_STATIC_RANK], coord[AD_MAX_STATIC_RANK] = {0};
    memcpy(gd, id, sizeof(int64_t) * (size_t)(q - 1));
    gd[q - 1] = b;
    IrError e;
    TkTensor *grid = tk_new(IR_INT64, (size_t)q, gd, &e);
    if (!grid)
        return ad_refuse(c, DG_INTERNAL, "cannot build the batch grid");
    for (int64_t t = 0; t < m; t++) {
        for (int64_t j = 0; j < b; j++)
            tk_set_i(grid, (size_t)(t * b + j), coord[j]);
        ad_t_next(coord, id, q - 1);
    }
    IrValue *nv = ad_concat(c, (IrValue *[]){ad_const_of(c, grid), idx}, 2, q - 1);
    tk_free(grid);
    return ad_attr_as_input(c, "batch_dims", 1, nv);
}

/* ---- NonZero -------------------------------------------------------- */

/* NonZero below 9: a constant input gives a constant [rank, count] table
 * of the coordinates of its non-zero elements, in row-major order (of
 * the types the kit computes on: NonZero takes no 8-bit float, and
 * strings and complex numbers are refused). */
static int ad_nonzero_gone(AdCtx *c)
{
    TkTensor *x = ad_const_tk(ad_in(c, 0));
    if (!x || !tk_computes(x->dtype) || x->rank > AD_MAX_STATIC_RANK) {
        tk_free(x);
        return ad_refuse(c, DG_NOT_CONSTANT, "the input must be a constant");
    }
    size_t cnt = 0;
    for (size_t k = 0; k < x->numel; k++)
        cnt += tk_get_f(x, k) != 0;
    int64_t dims[2] = {(int64_t)x->rank, (int64_t)cnt}, coord[AD_MAX_STATIC_RANK] = {0};
    IrError e;
    TkTensor *y = (uint64_t)cnt * x->rank * 8 <= AD_MAX_CONST
                     ? tk_new(IR_INT64, 2, dims, &e) : NULL;
    for (size_t k = 0, j = 0; y && k < x->numel; k++) {
        if (tk_get_f(x, k) != 0) {
            for (size_t d = 0; d < x->rank; d++)
                tk_set_i(y, d * cnt + j, coord[d]);
            j++;
        }
        ad_t_next(coord, x->dims, (int)x->rank);
    }
    tk_free(x);
    if (!y)
        return ad_refuse(c, DG_TOO_LARGE, "the folded output would be too large");
    IrValue *v = ad_const_of(c, y);
    tk_free(y);
    return v ? ad_replace_value(c, v) : -1;
}

/* ---- ReverseSequence ------------------------------------------------ */

/* ReverseSequence below 10: time and batch are the first two axes (in
 * either order). With the input's shape known, the output is a Gather on
 * those two axes merged: position (b, t) reads (b, st) with
 * st = L[b] - 1 - t when t < L[b], else t, i.e. the flat position plus
 * stride_t * [t < L[b]] * (L[b] - 1 - 2t). A constant sequence_lens gives
 * a constant table; otherwise the table is computed (the comparison in
 * double, exact for these integers, so it also lowers to Less-7). */
static int ad_revseq_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *lens = ad_in(c, 1);
    int64_t dd[AD_MAX_STATIC_RANK];
    int64_t ta = ad_attr_i(c, "time_axis"), ba = ad_attr_i(c, "batch_axis");
    if ((ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
        return ad_refuse(c, DG_ATTRIBUTE, "time_axis and batch_axis must be 0 and 1");
    int r = ad_static(x, dd, AD_MAX_STATIC_RANK);
    if (r < 2)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the shape of '%s' is unknown", x->name);
    int64_t T = dd[ta], B = dd[ba], stride = ta == 0 ? B : 1;
    int64_t pair = ad_prod(dd, 0, 2, AD_MAX_CONST);
    if (pair < 0 || (uint64_t)pair * 8 * 3 > AD_MAX_CONST)
        return ad_refuse(c, DG_TOO_LARGE, "the index table would be too large");
    int64_t *base = mem_array((size_t)pair + 1, sizeof *base);
    int64_t *c2t = mem_array((size_t)pair + 1, sizeof *c2t);
    int64_t *lv = NULL;
    size_t nl = 0;
    bool known = ad_const_ints(lens, &lv, &nl);
    bool bad = known && nl != (size_t)B;
    for (int64_t p = 0; p < pair && !bad; p++) {
        int64_t t = ta == 0 ? p / dd[1] : p % dd[1], b = ta == 0 ? p % dd[1] : p / dd[1];
        base[p] = p;
        c2t[p] = 2 * t + 1;
        if (known) {
            bad = lv[b] < 0 || lv[b] > T;
            if (!bad && t < lv[b])
                base[p] += stride * (lv[b] - 1 - 2 * t);
        }
    }
    free(lv);
    IrValue *sel = NULL;
    int64_t pd[2] = {dd[0], dd[1]}, lshape[2] = {ta == 0 ? 1 : B, ta == 0 ? B : 1};
    if (!bad)
        sel = ad_const_table(c, 2, pd, base);
    if (!bad && !known) {
        double *tv = mem_array((size_t)pair + 1, sizeof *tv);
        for (int64_t p = 0; p < pair; p++)
            tv[p] = (double)((c2t[p] - 1) / 2);
        IrValue *tgrid = ad_const_tensor(c, IR_DOUBLE, 2, pd, tv, (size_t)pair * sizeof *tv);
        free(tv);
        IrValue *l2 = ad_reshape(c, lens, 2, lshape);
        IrValue *lt = ad_cast(c, ad_op2(c, "Less", tgrid, ad_cast(c, l2, IR_DOUBLE)), IR_INT64);
        IrValue *delta = ad_op2(c, "Sub", l2, ad_const_table(c, 2, pd, c2t));
        delta = ad_op2(c, "Mul", lt, delta);
        if (stride != 1)
            delta = ad_op2(c, "Mul", delta, ad_const_int(c, IR_INT64, stride));
        sel = ad_op2(c, "Add", sel, delta);
    }
    free(base);
    free(c2t);
    if (bad)
        return ad_refuse(c, DG_SEMANTICS, "a constant sequence length is out of range");
    int64_t flat[AD_MAX_STATIC_RANK];
    flat[0] = pair;
    for (int d = 2; d < r; d++)
        flat[d - 1] = dd[d];
    IrValue *g = ad_gather(c, ad_reshape(c, x, (size_t)r - 1, flat),
                             ad_reshape(c, sel, 1, &pair), 0);
    return ad_replace_by(c, ad_reshape(c, g, (size_t)r, dd));
}

/* ---- Scatter, ScatterElements, ScatterND ----------------------------- */

/* Scatter 9 -> 11: Scatter is deprecated at 11 in favour of
 * ScatterElements, which does the same (and also takes negative indices,
 * which Scatter-9 never had). */
static int ad_scatter_9_11(AdCtx *c)
{
    ad_rename(c, "ScatterElements");
    return 0;
}

/* Scatter 11 -> 9 (the deprecated 11 reads as ScatterElements-11):
 * negative indices become non-negative. */
static int ad_scatter_11_9(AdCtx *c)
{
    return ad_t_fix_indices(c, 0, 1, ad_attr_i(c, "axis"));
}

/* ScatterElements below 11: Scatter-9, the same op before it was renamed,
 * once negative indices (new at 11) are made non-negative. */
static int ad_scatter_elements_gone(AdCtx *c)
{
    if (ad_t_fix_indices(c, 0, 1, ad_attr_i(c, "axis")) < 0)
        return -1;
    ad_rename(c, "Scatter");
    return 0;
}

/* Flat positions (in the data) of the elements Scatter writes:
 * off[k] = sum(p[d] * stride[d], d != axis) (+ idx[p] * stride[axis] when
 * the indices are a constant: then *known is set) over the positions p of
 * the indices. Scatter-9 has no negative indices. NULL after a refusal. */
static int64_t *ad_t_scatter_offsets(AdCtx *c, const int64_t *dd, int r,
                                     const int64_t *id, int64_t axis, int64_t *st,
                                     bool *known)
{
    int64_t coord[AD_MAX_STATIC_RANK] = {0}, m = ad_prod(id, 0, r, AD_MAX_CONST);
    for (int d = r; d-- > 0;)
        st[d] = d == r - 1 ? 1 : st[d + 1] * dd[d + 1];
    if (m < 0 || (uint64_t)m * 8 > AD_MAX_CONST) {
        ad_refuse(c, DG_TOO_LARGE, "the index table would be too large");
        return NULL;
    }
    TkTensor *cv = ad_const_tk(ad_in(c, 1));
    int64_t *off = mem_array((size_t)m + 1, sizeof *off);
    bool bad = false;
    for (int64_t k = 0; k < m && !bad; k++) {
        for (int d = 0; d < r; d++)
            if (d != axis)
                off[k] += coord[d] * st[d];
        if (cv) {
            int64_t i = tk_get_i(cv, (size_t)k);
            bad = i < 0 || i >= dd[axis];
            off[k] += i * st[axis];
        }
        ad_t_next(coord, id, r);
    }
    *known = cv != NULL;
    tk_free(cv);
    if (bad) {
        free(off);
        ad_refuse(c, DG_SEMANTICS, "a constant index is out of range");
        return NULL;
    }
    return off;
}

/* Scatter below 9: with static shapes, the output is a Gather from
 * Concat(flat data, flat updates) at sel[p] = N + k for the last update k
 * written at flat position p (N = the data's size), p itself where none
 * is (later updates win, as Scatter applies them in order). A constant
 * table when the indices are constant; otherwise sel is computed: for
 * each p, m = max over k of (k + 1) * [pos[k] == p], and
 * sel = p + [m != 0] * (N + m - 1 - p), all in int64. */
static int ad_scatter_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1), *upd = ad_in(c, 2);
    int64_t dd[AD_MAX_STATIC_RANK], id[AD_MAX_STATIC_RANK], axis;
    int r = ad_static(data, dd, AD_MAX_STATIC_RANK), q = ad_static(idx, id, AD_MAX_STATIC_RANK);
    if (r < 0 || q != r)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "Scatter needs static shapes here");
    if (!ad_axis(ad_attr_i(c, "axis"), r, 0, &axis))
        return ad_refuse(c, DG_ATTRIBUTE, "axis out of range");
    if (!ad_t_is_int_index(ad_elem(idx)))
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of indices is unknown");
    int64_t N = ad_prod(dd, 0, r, AD_MAX_CONST), K = ad_prod(id, 0, q, AD_MAX_CONST);
    if (N < 0 || K < 0 || (uint64_t)N * 8 > AD_MAX_CONST)
        return ad_refuse(c, DG_TOO_LARGE, "the data is too large");
    int64_t st[AD_MAX_STATIC_RANK];
    bool known;
    int64_t *off = ad_t_scatter_offsets(c, dd, r, id, axis, st, &known);
    if (!off)
        return -1;
    int64_t *pv = mem_array((size_t)N + 1, sizeof *pv);
    for (int64_t p = 0; p < N; p++)
        pv[p] = p;
    IrValue *sel;
    if (known) {
        for (int64_t k = 0; k < K; k++)
            pv[off[k]] = N + k;
        sel = ad_const_table(c, 1, &N, pv);
    } else {
        int64_t rowd[2] = {1, K}, cold[2] = {N, 1};
        int64_t *kw = mem_array((size_t)K + 1, sizeof *kw);
        for (int64_t k = 0; k < K; k++)
            kw[k] = k + 1;
        IrValue *pos = ad_op2(c, "Add", ad_const_table(c, q, id, off),
                                ad_op2(c, "Mul", ad_cast(c, idx, IR_INT64),
                                         ad_const_int(c, IR_INT64, st[axis])));
        IrValue *eq = ad_op2(c, "Equal", ad_reshape(c, pos, 2, rowd),
                               ad_const_table(c, 2, cold, pv));
        int64_t one = 1;
        IrValue *m = ad_reduce(c, "ReduceMax",
                               ad_op2(c, "Mul", ad_cast(c, eq, IR_INT64),
                                      ad_const_table(c, 2, rowd, kw)), 1, &one, false);
        free(kw);
        IrValue *none = ad_op2(c, "Equal", m, ad_const_int(c, IR_INT64, 0));
        IrValue *hit = ad_cast(c, ad_op1(c, "Not", none), IR_INT64);
        IrValue *pvec = ad_const_table(c, 1, &N, pv);
        IrValue *last = ad_op2(c, "Add", m, ad_const_int(c, IR_INT64, N - 1));
        IrValue *jump = ad_op2(c, "Sub", last, pvec);
        sel = ad_op2(c, "Add", pvec, ad_op2(c, "Mul", hit, jump));
    }
    free(off);
    free(pv);
    IrValue *flat[2] = {ad_reshape(c, data, 1, &N), ad_reshape(c, upd, 1, &K)};
    IrValue *src = ad_concat(c, flat, 2, 0);
    return ad_replace_by(c, ad_reshape(c, ad_gather(c, src, sel, 0), (size_t)r, dd));
}

/* ScatterND below 11: with the data's shape known and k (the indices'
 * last dim) known, data becomes [P, R] (P = the product of its first k
 * dims, R of the rest), each index tuple its flat row
 * sum(idx[..., j] * stride[j]) (negative components count from the end),
 * and the rows are written by Scatter-9 on axis 0 with that row index
 * repeated across the R columns; later updates win in both. */
static int ad_scatternd_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1), *upd = ad_in(c, 2);
    int64_t dd[AD_MAX_STATIC_RANK];
    int r, q = ad_rank(idx);
    int64_t k = q >= 1 ? ad_dim(idx, q - 1) : -1;
    if ((r = ad_static(data, dd, AD_MAX_STATIC_RANK)) < 0 || k < 0 || k > r)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "ScatterND needs the data's shape and the index depth here");
    int64_t P = ad_prod(dd, 0, (int)k, INT64_MAX), R = ad_prod(dd, (int)k, r, INT64_MAX);
    if (P < 0 || R <= 0 || ad_prod(dd, 0, r, INT64_MAX) < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the data has no element to scatter");
    int64_t st[AD_MAX_STATIC_RANK];
    for (int64_t j = k; j-- > 0;)
        st[j] = j == k - 1 ? 1 : st[j + 1] * dd[j + 1];
    IrValue *flat = ad_t_nd_flat(c, idx, q, k, dd, st);
    int64_t col[2] = {-1, 1}, wide[2] = {1, R}, d2[2] = {P, R}, u2[2] = {-1, R};
    IrValue *rows = ad_op2(c, "Expand", ad_reshape(c, flat, 2, col),
                             ad_const_i64s(c, 2, wide));
    IrValue *in[3] = {ad_reshape(c, data, 2, d2), rows, ad_reshape(c, upd, 2, u2)};
    if (!in[0] || !in[1] || !in[2])
        return -1;
    IrNode *sc = ad_raw(c, "Scatter", 3, in, 1);
    if (!sc)
        return -1;
    ad_set_attr_i(c, sc, "axis", 0);
    return ad_replace_by(c, ad_reshape(c, ad_fin(c, sc), (size_t)r, dd));
}

/* ScatterElements/ScatterND 16 -> 13: version 16 added `reduction`;
 * "none" is the old behaviour, add and mul have no older form. */
static int ad_scatter_16_13(AdCtx *c)
{
    char buf[16];
    const char *r = ad_attr_s(c, "reduction", buf, sizeof buf);
    if (strcmp(r, "none"))
        return ad_refuse(c, DG_ATTRIBUTE, "reduction '%s' has no equivalent before opset 16",
                         r);
    ad_drop_attr(c, "reduction");
    return 0;
}

/* ScatterElements/ScatterND 18 -> 16: version 18 added the max and min
 * reductions. */
static int ad_scatter_18_16(AdCtx *c)
{
    char buf[16];
    const char *r = ad_attr_s(c, "reduction", buf, sizeof buf);
    if (!strcmp(r, "max") || !strcmp(r, "min"))
        return ad_refuse(c, DG_ATTRIBUTE, "reduction '%s' has no equivalent before opset 18",
                         r);
    return 0;
}

/* ---- TensorScatter -------------------------------------------------- */

/* TensorScatter below 24: the cache is transposed to [batch, seq, rest],
 * and ScatterND writes update[b, j] at (b, w[b] + j) (mod the cache length
 * in circular mode, Mod with the divisor's sign as np.mod), then the
 * result is transposed back. Needs the batch, cache and update lengths. */
static int ad_tensor_scatter_gone(AdCtx *c)
{
    IrValue *cache = ad_in(c, 0), *upd = ad_in(c, 1), *w = ad_in(c, 2);
    int r = ad_rank(cache);
    int64_t axis;
    if (!ad_axis(ad_attr_i(c, "axis"), r, 0, &axis) || axis == 0 ||
        r > AD_MAX_STATIC_RANK)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the cache's rank or axis is unusable");
    char buf[16];
    const char *mode = ad_attr_s(c, "mode", buf, sizeof buf);
    bool circ = !strcmp(mode, "circular");
    int64_t B = ad_dim(cache, 0), M = ad_dim(cache, (int)axis), S = ad_dim(upd, (int)axis);
    if (!circ && strcmp(mode, "linear"))
        return ad_refuse(c, DG_ATTRIBUTE, "mode '%s' is unknown", mode);
    if (B < 0 || M < 0 || S < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the batch and sequence lengths are unknown");
    if (S > M || (uint64_t)B * (uint64_t)S * 8 > AD_MAX_CONST)
        return ad_refuse(c, DG_SEMANTICS, "the update does not fit the cache");
    int64_t perm[AD_MAX_STATIC_RANK], inv[AD_MAX_STATIC_RANK], n = 0;
    perm[n++] = 0;
    perm[n++] = axis;
    for (int64_t d = 1; d < r; d++)
        if (d != axis)
            perm[n++] = d;
    for (int64_t d = 0; d < r; d++)
        inv[perm[d]] = d;
    /* bg and jg are the [B, S] index tables; the first S entries of jg
     * also serve as the [1, S] table of the write_indices form, so there
     * are at least S of them even when the batch is empty (B == 0). */
    int64_t nt = B * S > S ? B * S : S;
    int64_t *bg = mem_array((size_t)nt + 1, sizeof *bg);
    int64_t *jg = mem_array((size_t)nt + 1, sizeof *jg);
    for (int64_t p = 0; p < nt; p++) {
        bg[p] = p / (S ? S : 1);
        jg[p] = p % (S ? S : 1);
    }
    int64_t gd[3] = {B, S, 1}, j1[2] = {1, S}, two = 2, one = 1;
    IrValue *pos = w ? ad_op2(c, "Add", ad_axes_op(c, c->n, "Unsqueeze", w, 1, &one),
                                ad_const_table(c, 2, j1, jg))
                     : ad_const_table(c, 2, gd, jg); /* [B, S] */
    if (circ)
        pos = ad_op2(c, "Mod", pos, ad_const_int(c, IR_INT64, M));
    IrValue *parts[2] = {ad_const_table(c, 3, gd, bg),
                         ad_axes_op(c, c->n, "Unsqueeze", pos, 1, &two)};
    IrValue *ind = ad_concat(c, parts, 2, 2);
    free(bg);
    free(jg);
    bool same = axis == 1;
    IrValue *in[3] = {same ? cache : ad_transpose(c, cache, (size_t)r, perm), ind,
                      same ? upd : ad_transpose(c, upd, (size_t)r, perm)};
    if (!in[0] || !in[1] || !in[2])
        return -1;
    IrValue *y = ad_fin(c, ad_raw(c, "ScatterND", 3, in, 1));
    return ad_replace_by(c, same ? y : ad_transpose(c, y, (size_t)r, inv));
}

/* ---- TopK ----------------------------------------------------------- */

/* TopK 1 -> 10: the attribute k became the input K (a 1-D int64 of one
 * element). */
static int ad_topk_1_10(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "k");
    if (!a || !a->has_i)
        return ad_refuse(c, DG_ATTRIBUTE, "TopK-1 needs k");
    IrValue *k = ad_const_i64s(c, 1, &a->i);
    return ad_attr_as_input(c, "k", 1, k);
}

/* TopK 10 -> 1: the input K becomes the attribute k (a constant). */
static int ad_topk_10_1(AdCtx *c)
{
    IrValue *in = ad_in(c, 1);
    int64_t *v;
    size_t n;
    if (!in || !ad_const_ints(in, &v, &n) || n != 1) {
        return ad_refuse(c, DG_NOT_CONSTANT, "K must be a constant to become attribute k");
    }
    ad_set_attr_i(c, c->n, "k", v[0]);
    free(v);
    ir_node_set_input(c->n, 1, NULL);
    ad_trim_inputs(c->n);
    ad_drop_if_dead(c, in);
    return 0;
}

/* TopK 11 -> 10: version 11 added `largest` and `sorted` (defaults 1, the
 * old behaviour). sorted = 0 leaves the order unspecified, which sorted
 * output satisfies, so it goes. largest = 0 (the k smallest) is refused:
 * the k largest of -x would be the same for numbers, but not where NaN
 * sorts (NaN ranks above every number, so it would come first instead of
 * last), and nothing before opset 11 can rank it otherwise. */
static int ad_topk_11_10(AdCtx *c)
{
    if (ad_attr_i(c, "largest") == 0)
        return ad_refuse(c, DG_ATTRIBUTE,
                         "largest = 0 has no equivalent before opset 11 that ranks NaN "
                         "the same way");
    ad_drop_attr(c, "sorted");
    ad_drop_attr(c, "largest");
    return 0;
}

static const AdEntry ad_index[] = {
    /* Compress */
    AD_GONE("Compress", 9, AD_EXPAND, ad_compress_gone),
    AD_UP("Compress", 9, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Compress", 9, 11, AD_SEMANTIC, ad_compress_11_9),
    /* Gather, GatherElements, GatherND */
    AD_UP("Gather", 1, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Gather", 1, 11, AD_SEMANTIC, ad_gather_11_1),
    AD_BOTH("Gather", 11, 13),
    AD_GONE("GatherElements", 11, AD_EXPAND, ad_gather_elements_gone),
    AD_BOTH("GatherElements", 11, 13),
    AD_GONE("GatherND", 11, AD_EXPAND, ad_gathernd_gone),
    AD_UP("GatherND", 11, 12, AD_ATTRS, ad_nothing),
    AD_DOWN("GatherND", 11, 12, AD_SEMANTIC, ad_gathernd_12_11),
    AD_BOTH("GatherND", 12, 13),
    /* NonZero */
    AD_GONE("NonZero", 9, AD_EXPAND, ad_nonzero_gone),
    AD_BOTH("NonZero", 9, 13),
    /* ReverseSequence */
    AD_GONE("ReverseSequence", 10, AD_EXPAND, ad_revseq_gone),
    /* Scatter, ScatterElements, ScatterND, TensorScatter */
    AD_GONE("Scatter", 9, AD_EXPAND, ad_scatter_gone),
    AD_UP("Scatter", 9, 11, AD_RENAME, ad_scatter_9_11),
    AD_DOWN("Scatter", 9, 11, AD_SEMANTIC, ad_scatter_11_9),
    AD_GONE("ScatterElements", 11, AD_RENAME, ad_scatter_elements_gone),
    AD_BOTH("ScatterElements", 11, 13),
    AD_UP("ScatterElements", 13, 16, AD_ATTRS, ad_nothing),
    AD_DOWN("ScatterElements", 13, 16, AD_ATTRS, ad_scatter_16_13),
    AD_UP("ScatterElements", 16, 18, AD_SEMANTIC, ad_nothing),
    AD_DOWN("ScatterElements", 16, 18, AD_SEMANTIC, ad_scatter_18_16),
    AD_GONE("ScatterND", 11, AD_EXPAND, ad_scatternd_gone),
    AD_BOTH("ScatterND", 11, 13),
    AD_UP("ScatterND", 13, 16, AD_ATTRS, ad_nothing),
    AD_DOWN("ScatterND", 13, 16, AD_ATTRS, ad_scatter_16_13),
    AD_UP("ScatterND", 16, 18, AD_SEMANTIC, ad_nothing),
    AD_DOWN("ScatterND", 16, 18, AD_SEMANTIC, ad_scatter_18_16),
    AD_GONE("TensorScatter", 24, AD_EXPAND, ad_tensor_scatter_gone),
    /* TopK */
    AD_UP("TopK", 1, 10, AD_ATTR_INPUT, ad_topk_1_10),
    AD_DOWN("TopK", 1, 10, AD_ATTR_INPUT, ad_topk_10_1),
    AD_UP("TopK", 10, 11, AD_ATTRS, ad_nothing),
    AD_DOWN("TopK", 10, 11, AD_SEMANTIC, ad_topk_11_10),
    AD_BOTH("TopK", 11, 24),
};

const AdFamily ad_family_index = {"index", ad_index, sizeof ad_index / sizeof ad_index[0]};
