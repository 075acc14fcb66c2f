/* Index family: ops that pick, place, sort or scan elements by position.
 *
 *   Gather (1, 11, 13), GatherElements (11, 13), GatherND (11, 12, 13),
 *   Scatter (9, 11; the deprecated name of ScatterElements without
 *   reduction), ScatterElements (11, 13, 16, 18), ScatterND (11, 13, 16, 18),
 *   TensorScatter (24), TopK (1, 10, 11, 24), Compress (9, 11),
 *   NonZero (9, 13), Unique (11), ReverseSequence (10).
 *
 * Subtle points:
 * - Every index read from an input is checked against its dim before use;
 *   negative indices count from the end wherever the spec accepts them
 *   (Gather, GatherElements, GatherND, ScatterElements, ScatterND).
 * - Scatter reductions: "none" lets the last update of a duplicated index
 *   win (updates are applied in index order); add/mul/max/min fold every
 *   update into the element, exactly for integers (wrapping), in double for
 *   floats, as or/and for bool. max and min exist from version 18.
 * - TopK and Unique sort with a stable merge sort, so equal values keep the
 *   lower index first (the spec's tie rule). NaN sorts above every number,
 *   and NaNs are equal to each other (so Unique folds them into one).
 *   TopK always returns sorted values, which `sorted = 0` allows.
 * - TensorScatter: only the sequence index wraps in circular mode (the
 *   spec's pseudocode applies np.mod to the whole index tuple, but its text
 *   says "the write index is modulo max_sequence_length"); the batch index
 *   for write_indices is the first dim. Linear mode needs every write to
 *   fit: 0 <= write_index and write_index + sequence_length <= max.
 * - NonZero gives [rank, count] as the spec says, so a scalar gives [0, n].
 * - Compress: condition entries past the axis length must be false.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- shared helpers ---------------------------------------------------- */

/* An index into a dim of size `dim`, negative counting from the end. */
static int ev_index(EvCtx *c, const char *what, int64_t i, int64_t dim,
                    size_t *out)
{
    int64_t j = i < 0 ? i + dim : i;
    if (j < 0 || j >= dim)
        return ev_fail(c, "%s index %lld is out of range for a dim of %lld",
                       what, (long long)i, (long long)dim);
    *out = (size_t)j;
    return 0;
}

/* Advances a row-major coordinate over dims (wraps to all zeros). */
static void ev_odo_next(size_t *coord, const int64_t *dims, size_t rank)
{
    for (size_t d = rank; d-- > 0;) {
        if (++coord[d] < (size_t)dims[d])
            return;
        coord[d] = 0;
    }
}

/* A new output shaped like t (zeroed). */
EvValue *ev_out_like(EvCtx *c, size_t i, const EvValue *t)
{
    return ev_out_tensor(c, i, t->dtype, t->rank, t->dims);
}

/* Total order on doubles for sorting: NaN above everything, NaN == NaN. */
static int ev_dbl_cmp(double x, double y)
{
    bool nx = isnan(x), ny = isnan(y);
    if (nx || ny)
        return (int)nx - (int)ny;
    return x < y ? -1 : x > y;
}

static int ev_elem_cmp(const EvValue *t, size_t a, size_t b)
{
    switch (t->dtype) {
    case IR_STRING: {
        const EvStr *s = t->data;
        size_t n = s[a].len < s[b].len ? s[a].len : s[b].len;
        int r = n ? memcmp(s[a].p, s[b].p, n) : 0;
        if (r)
            return r < 0 ? -1 : 1;
        return s[a].len < s[b].len ? -1 : s[a].len > s[b].len;
    }
    case IR_COMPLEX64: {
        const float *f = t->data;
        int r = ev_dbl_cmp(f[2 * a], f[2 * b]);
        return r ? r : ev_dbl_cmp(f[2 * a + 1], f[2 * b + 1]);
    }
    case IR_COMPLEX128: {
        const double *f = t->data;
        int r = ev_dbl_cmp(f[2 * a], f[2 * b]);
        return r ? r : ev_dbl_cmp(f[2 * a + 1], f[2 * b + 1]);
    }
    default:
        break;
    }
    if (ev_dtype_is_float(t->dtype))
        return ev_dbl_cmp(ev_get_f(t, a), ev_get_f(t, b));
    if (ev_dtype_is_unsigned(t->dtype)) {
        uint64_t x = ev_get_u(t, a), y = ev_get_u(t, b);
        return x < y ? -1 : x > y;
    }
    int64_t x = ev_get_i(t, a), y = ev_get_i(t, b);
    return x < y ? -1 : x > y;
}

typedef int (*EvCmp)(const void *ctx, size_t a, size_t b);

/* Stable merge sort of v[0..n) by cmp; tmp holds at least n/2 + 1. */
static void ev_msort(size_t *v, size_t *tmp, size_t n, EvCmp cmp,
                     const void *ctx)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            size_t x = v[i], j = i;
            for (; j > 0 && cmp(ctx, v[j - 1], x) > 0; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    ev_msort(v, tmp, h, cmp, ctx);
    ev_msort(v + h, tmp, n - h, cmp, ctx);
    if (cmp(ctx, v[h - 1], v[h]) <= 0)
        return;
    memcpy(tmp, v, h * sizeof *v);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        v[k++] = cmp(ctx, tmp[i], v[j]) <= 0 ? tmp[i++] : v[j++];
    while (i < h)
        v[k++] = tmp[i++];
}

/* Items along one axis of t: item j is the slice t[o, j, e] over all
 * outer o and inner e, compared lexicographically in that order. */
typedef struct EvItems {
    const EvValue *t;
    size_t outer, n, inner;
    size_t base;   /* TopK: offset of the one slice being sorted */
    bool desc;
} EvItems;

static int ev_item_cmp(const void *ctx, size_t a, size_t b)
{
    const EvItems *it = ctx;
    for (size_t o = 0; o < it->outer; o++)
        for (size_t e = 0; e < it->inner; e++) {
            size_t row = o * it->n * it->inner + e;
            int r = ev_elem_cmp(it->t, row + a * it->inner,
                                row + b * it->inner);
            if (r)
                return r;
        }
    return 0;
}

/* TopK: one (outer, inner) slice, ascending or descending. */
static int ev_slice_cmp(const void *ctx, size_t a, size_t b)
{
    const EvItems *it = ctx;
    int r = ev_elem_cmp(it->t, it->base + a * it->inner,
                        it->base + b * it->inner);
    return it->desc ? -r : r;
}

/* ---- Gather family ----------------------------------------------------- */

static int ev_gather(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *ind = ev_in_tensor(c, 1);
    if (!x || !ind)
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "data must have rank 1 or more");
    size_t axis, ni;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &axis))
        return -1;
    int64_t *idx = ev_in_ints(c, 1, &ni);
    if (!idx)
        return -1;
    int64_t dims[EV_MAX_RANK];
    size_t rank = x->rank - 1 + ind->rank;
    if (rank > EV_MAX_RANK)
        return ev_fail(c, "output rank %zu is above the limit", rank);
    memcpy(dims, x->dims, axis * sizeof *dims);
    if (ind->rank)
        memcpy(dims + axis, ind->dims, ind->rank * sizeof *dims);
    memcpy(dims + axis + ind->rank, x->dims + axis + 1,
           (x->rank - axis - 1) * sizeof *dims);
    int64_t n = x->dims[axis];
    size_t *pos = ev_tmp(c, ni + 1, sizeof *pos);
    for (size_t j = 0; j < ni; j++)
        if (ev_index(c, "Gather", idx[j], n, &pos[j]))
            return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, rank, dims);
    if (!y)
        return -1;
    size_t outer = ev_dims_prod(x->dims, 0, axis);
    size_t inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++)
            ev_copy_elems(y, (o * ni + j) * inner, x,
                          (o * (size_t)n + pos[j]) * inner, inner);
    return 0;
}

/* The data offset of an element of indices/updates shaped tensors whose
 * coordinate on `axis` is replaced by the index read from it. */
static int ev_elements_check(EvCtx *c, const EvValue *x, const EvValue *ind,
                             size_t axis)
{
    if (ind->rank != x->rank)
        return ev_fail(c, "indices have rank %zu, data rank %zu", ind->rank,
                       x->rank);
    for (size_t d = 0; d < x->rank; d++)
        if (d != axis && ind->dims[d] > x->dims[d])
            return ev_fail(c, "indices dim %zu is %lld, above data's %lld",
                           d, (long long)ind->dims[d], (long long)x->dims[d]);
    return 0;
}

static int ev_gather_elements(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *ind = ev_in_tensor(c, 1);
    if (!x || !ind)
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "data must have rank 1 or more");
    size_t axis, ni;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &axis) ||
        ev_elements_check(c, x, ind, axis))
        return -1;
    int64_t *idx = ev_in_ints(c, 1, &ni);
    if (!idx)
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, ind->rank, ind->dims);
    if (!y)
        return -1;
    size_t xs[EV_MAX_RANK], coord[EV_MAX_RANK] = {0};
    ev_strides(x->rank, x->dims, xs);
    for (size_t k = 0; k < ni; k++) {
        size_t p = 0, off = 0;
        if (ev_index(c, "GatherElements", idx[k], x->dims[axis], &p))
            return -1;
        for (size_t d = 0; d < x->rank; d++)
            off += (d == axis ? p : coord[d]) * xs[d];
        ev_copy_elems(y, k, x, off, 1);
        ev_odo_next(coord, ind->dims, ind->rank);
    }
    return 0;
}

static int ev_gather_nd(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *ind = ev_in_tensor(c, 1);
    if (!x || !ind)
        return -1;
    int64_t b = c->ver >= 12 ? ev_attr_i(c, "batch_dims") : 0;
    size_t r = x->rank, q = ind->rank;
    if (r == 0 || q == 0)
        return ev_fail(c, "data and indices must have rank 1 or more");
    if (b < 0 || (size_t)b >= r || (size_t)b >= q)
        return ev_fail(c, "batch_dims %lld must be below both ranks",
                       (long long)b);
    size_t nb = (size_t)b;
    int64_t k = ind->dims[q - 1];
    if (k < 1 || (size_t)k > r - nb)
        return ev_fail(c, "indices' last dim %lld must be in [1, %zu]",
                       (long long)k, r - nb);
    for (size_t d = 0; d < nb; d++)
        if (x->dims[d] != ind->dims[d])
            return ev_fail(c, "batch dim %zu differs: %lld and %lld", d,
                           (long long)x->dims[d], (long long)ind->dims[d]);
    size_t nk = (size_t)k, rank = q - 1 + r - nb - nk, ni;
    if (rank > EV_MAX_RANK)
        return ev_fail(c, "output rank %zu is above the limit", rank);
    int64_t dims[EV_MAX_RANK];
    memcpy(dims, ind->dims, (q - 1) * sizeof *dims);
    memcpy(dims + q - 1, x->dims + nb + nk, (r - nb - nk) * sizeof *dims);
    int64_t *idx = ev_in_ints(c, 1, &ni);
    if (!idx)
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, rank, dims);
    if (!y)
        return -1;
    size_t xs[EV_MAX_RANK];
    ev_strides(r, x->dims, xs);
    size_t nbatch = ev_dims_prod(ind->dims, 0, nb);
    size_t per = ev_dims_prod(ind->dims, nb, q - 1);
    size_t slice = ev_dims_prod(x->dims, nb + nk, r);
    size_t bsize = ev_dims_prod(x->dims, nb, r);
    for (size_t bi = 0; bi < nbatch; bi++)
        for (size_t m = 0; m < per; m++) {
            const int64_t *t = idx + (bi * per + m) * nk;
            size_t off = bi * bsize;
            for (size_t j = 0; j < nk; j++) {
                size_t p = 0;
                if (ev_index(c, "GatherND", t[j], x->dims[nb + j], &p))
                    return -1;
                off += p * xs[nb + j];
            }
            ev_copy_elems(y, (bi * per + m) * slice, x, off, slice);
        }
    return 0;
}

/* ---- Scatter family ---------------------------------------------------- */

enum { EV_RED_NONE, EV_RED_ADD, EV_RED_MUL, EV_RED_MAX, EV_RED_MIN };

/* The reduction attribute: from version 16 (none/add/mul), max and min
 * from 18. Strings take no reduction; complex numbers have no order. */
static int ev_scatter_reduction(EvCtx *c, int32_t dtype, int *red)
{
    *red = EV_RED_NONE;
    if (c->ver < 16)
        return 0;
    const char *s = ev_attr_s_or(c, "reduction", "none");
    if (strcmp(s, "none") == 0)
        return 0;
    if (strcmp(s, "add") == 0)
        *red = EV_RED_ADD;
    else if (strcmp(s, "mul") == 0)
        *red = EV_RED_MUL;
    else if (strcmp(s, "max") == 0 && c->ver >= 18)
        *red = EV_RED_MAX;
    else if (strcmp(s, "min") == 0 && c->ver >= 18)
        *red = EV_RED_MIN;
    else
        return ev_fail(c, "reduction '%s' is not supported", s);
    if (dtype == IR_STRING)
        return ev_fail(c, "reduction '%s' does not apply to strings", s);
    if ((dtype == IR_COMPLEX64 || dtype == IR_COMPLEX128) &&
        (*red == EV_RED_MAX || *red == EV_RED_MIN))
        return ev_fail(c, "reduction '%s' does not apply to complex", s);
    return 0;
}

static void ev_combine_complex(EvValue *d, size_t di, const EvValue *u,
                               size_t ui, int red)
{
    double a[2], b[2];
    if (d->dtype == IR_COMPLEX64) {
        const float *p = d->data, *q = u->data;
        a[0] = p[2 * di], a[1] = p[2 * di + 1];
        b[0] = q[2 * ui], b[1] = q[2 * ui + 1];
    } else {
        const double *p = d->data, *q = u->data;
        a[0] = p[2 * di], a[1] = p[2 * di + 1];
        b[0] = q[2 * ui], b[1] = q[2 * ui + 1];
    }
    double re = red == EV_RED_ADD ? a[0] + b[0] : a[0] * b[0] - a[1] * b[1];
    double im = red == EV_RED_ADD ? a[1] + b[1] : a[0] * b[1] + a[1] * b[0];
    if (d->dtype == IR_COMPLEX64) {
        float *p = d->data;
        p[2 * di] = (float)re, p[2 * di + 1] = (float)im;
    } else {
        double *p = d->data;
        p[2 * di] = re, p[2 * di + 1] = im;
    }
}

/* d[di] = d[di] (red) u[ui]. Same dtype on both sides. */
static void ev_combine(EvValue *d, size_t di, const EvValue *u, size_t ui,
                       int red)
{
    int32_t t = d->dtype;
    if (red == EV_RED_NONE) {
        ev_copy_elems(d, di, u, ui, 1);
    } else if (t == IR_COMPLEX64 || t == IR_COMPLEX128) {
        ev_combine_complex(d, di, u, ui, red);
    } else if (t == IR_BOOL) {
        int64_t a = ev_get_i(d, di) != 0, b = ev_get_i(u, ui) != 0;
        bool any = red == EV_RED_ADD || red == EV_RED_MAX;
        ev_set_i(d, di, any ? (a | b) : (a & b));
    } else if (ev_dtype_is_float(t)) {
        double a = ev_get_f(d, di), b = ev_get_f(u, ui), r;
        switch (red) {
        case EV_RED_ADD: r = a + b; break;
        case EV_RED_MUL: r = a * b; break;
        case EV_RED_MAX: r = (a > b || isnan(a)) ? a : b; break;
        default: r = (a < b || isnan(a)) ? a : b; break;
        }
        ev_set_f(d, di, r);
    } else if (red == EV_RED_ADD || red == EV_RED_MUL) {
        uint64_t a = ev_get_u(d, di), b = ev_get_u(u, ui);
        ev_set_u(d, di, red == EV_RED_ADD ? a + b : a * b);
    } else if (ev_dtype_is_unsigned(t)) {
        uint64_t a = ev_get_u(d, di), b = ev_get_u(u, ui);
        ev_set_u(d, di, (red == EV_RED_MAX) == (a > b) ? a : b);
    } else {
        int64_t a = ev_get_i(d, di), b = ev_get_i(u, ui);
        ev_set_i(d, di, (red == EV_RED_MAX) == (a > b) ? a : b);
    }
}

/* Scatter (9, 11) and ScatterElements. */
static int ev_scatter_elements(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *ind = ev_in_tensor(c, 1);
    EvValue *upd = ev_in_tensor(c, 2);
    if (!x || !ind || !upd)
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "data must have rank 1 or more");
    if (upd->dtype != x->dtype)
        return ev_fail(c, "updates and data differ in type");
    if (upd->rank != ind->rank || (ind->rank &&
        memcmp(upd->dims, ind->dims, ind->rank * sizeof *ind->dims) != 0))
        return ev_fail(c, "updates and indices differ in shape");
    size_t axis, ni;
    int red;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &axis) ||
        ev_elements_check(c, x, ind, axis) ||
        ev_scatter_reduction(c, x->dtype, &red))
        return -1;
    int64_t *idx = ev_in_ints(c, 1, &ni);
    if (!idx)
        return -1;
    EvValue *y = ev_out_like(c, 0, x);
    if (!y)
        return -1;
    ev_copy_elems(y, 0, x, 0, x->numel);
    size_t xs[EV_MAX_RANK], coord[EV_MAX_RANK] = {0};
    ev_strides(x->rank, x->dims, xs);
    for (size_t k = 0; k < ni; k++) {
        size_t p = 0, off = 0;
        if (ev_index(c, "scatter", idx[k], x->dims[axis], &p))
            return -1;
        for (size_t d = 0; d < x->rank; d++)
            off += (d == axis ? p : coord[d]) * xs[d];
        ev_combine(y, off, upd, k, red);
        ev_odo_next(coord, ind->dims, ind->rank);
    }
    return 0;
}

static int ev_scatter_nd(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *ind = ev_in_tensor(c, 1);
    EvValue *upd = ev_in_tensor(c, 2);
    if (!x || !ind || !upd)
        return -1;
    size_t r = x->rank, q = ind->rank, ni;
    if (r == 0 || q == 0)
        return ev_fail(c, "data and indices must have rank 1 or more");
    if (upd->dtype != x->dtype)
        return ev_fail(c, "updates and data differ in type");
    int64_t k = ind->dims[q - 1];
    if (k < 1 || (size_t)k > r)
        return ev_fail(c, "indices' last dim %lld must be in [1, %zu]",
                       (long long)k, r);
    size_t nk = (size_t)k;
    /* updates: indices.shape[:-1] + data.shape[k:] */
    bool ok = upd->rank == q - 1 + r - nk;
    for (size_t d = 0; ok && d < upd->rank; d++)
        ok = upd->dims[d] == (d < q - 1 ? ind->dims[d]
                                        : x->dims[nk + d - (q - 1)]);
    if (!ok)
        return ev_fail(c, "updates must have shape indices.shape[:-1] + "
                       "data.shape[%zu:]", nk);
    int red;
    if (ev_scatter_reduction(c, x->dtype, &red))
        return -1;
    int64_t *idx = ev_in_ints(c, 1, &ni);
    if (!idx)
        return -1;
    EvValue *y = ev_out_like(c, 0, x);
    if (!y)
        return -1;
    ev_copy_elems(y, 0, x, 0, x->numel);
    size_t xs[EV_MAX_RANK];
    ev_strides(r, x->dims, xs);
    size_t m = ev_dims_prod(ind->dims, 0, q - 1);
    size_t slice = ev_dims_prod(x->dims, nk, r);
    for (size_t i = 0; i < m; i++) {
        size_t off = 0;
        for (size_t j = 0; j < nk; j++) {
            size_t p = 0;
            if (ev_index(c, "ScatterND", idx[i * nk + j], x->dims[j], &p))
                return -1;
            off += p * xs[j];
        }
        if (red == EV_RED_NONE)
            ev_copy_elems(y, off, upd, i * slice, slice);
        else
            for (size_t e = 0; e < slice; e++)
                ev_combine(y, off + e, upd, i * slice + e, red);
    }
    return 0;
}

static int ev_tensor_scatter(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *upd = ev_in_tensor(c, 1);
    if (!x || !upd)
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "past_cache must have rank 2 or more");
    size_t axis;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &axis))
        return -1;
    if (axis == 0)
        return ev_fail(c, "axis cannot be the batch dim 0");
    const char *mode = ev_attr_s(c, "mode");
    bool circular = strcmp(mode, "circular") == 0;
    if (!circular && strcmp(mode, "linear") != 0)
        return ev_fail(c, "mode '%s' is not supported", mode);
    if (upd->dtype != x->dtype || upd->rank != x->rank)
        return ev_fail(c, "update and past_cache differ in type or rank");
    for (size_t d = 0; d < x->rank; d++)
        if (d != axis && upd->dims[d] != x->dims[d])
            return ev_fail(c, "update dim %zu is %lld, past_cache's %lld", d,
                           (long long)upd->dims[d], (long long)x->dims[d]);
    int64_t max = x->dims[axis], len = upd->dims[axis];
    if (len > max)
        return ev_fail(c, "sequence_length %lld is above max %lld",
                       (long long)len, (long long)max);
    size_t batch = (size_t)x->dims[0], nw = 0;
    int64_t *w = NULL;
    if (ev_in(c, 2)) {
        if (!(w = ev_in_ints(c, 2, &nw)))
            return -1;
        if (nw != batch)
            return ev_fail(c, "write_indices has %zu values for a batch of "
                           "%zu", nw, batch);
    }
    EvValue *y = ev_out_like(c, 0, x);
    if (!y)
        return -1;
    ev_copy_elems(y, 0, x, 0, x->numel);
    size_t per_batch = ev_dims_prod(x->dims, 1, axis);
    size_t inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    for (size_t b = 0; b < batch; b++) {
        int64_t start = w ? w[b] : 0;
        if (circular && max > 0)
            start = ((start % max) + max) % max;
        else if (!circular && (start < 0 || start > max - len))
            return ev_fail(c, "write index %lld with %lld updates does not "
                           "fit %lld", (long long)start, (long long)len,
                           (long long)max);
        for (size_t p = b * per_batch; p < (b + 1) * per_batch; p++)
            for (int64_t s = 0; s < len; s++) {
                int64_t t = circular ? (start + s) % max : start + s;
                ev_copy_elems(y, (p * (size_t)max + (size_t)t) * inner, upd,
                              (p * (size_t)len + (size_t)s) * inner, inner);
            }
    }
    return 0;
}

/* ---- TopK -------------------------------------------------------------- */

static int ev_topk(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "X must have rank 1 or more");
    int64_t k;
    if (c->ver < 10) {
        if (!ev_attr(c, "k"))
            return ev_fail(c, "attribute k is required");
        k = ev_attr_i_or(c, "k", 0);
    } else {
        size_t nk;
        int64_t *kv = ev_in_ints(c, 1, &nk);
        if (!kv)
            return -1;
        if (nk != 1)
            return ev_fail(c, "K must hold one value, not %zu", nk);
        k = kv[0];
    }
    size_t axis;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &axis))
        return -1;
    bool largest = c->ver < 11 || ev_attr_i_or(c, "largest", 1) != 0;
    int64_t n = x->dims[axis];
    if (k < 0 || k > n)
        return ev_fail(c, "k %lld is out of range for a dim of %lld",
                       (long long)k, (long long)n);
    int64_t dims[EV_MAX_RANK];
    memcpy(dims, x->dims, x->rank * sizeof *dims);
    dims[axis] = k;
    EvValue *vals = ev_out_tensor(c, 0, x->dtype, x->rank, dims);
    EvValue *inds = vals ? ev_out_tensor(c, 1, IR_INT64, x->rank, dims) : NULL;
    if (!inds)
        return -1;
    size_t outer = ev_dims_prod(x->dims, 0, axis);
    size_t inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    size_t nn = (size_t)n, nk = (size_t)k;
    size_t *ord = ev_tmp(c, nn + 1, sizeof *ord);
    size_t *tmp = ev_tmp(c, nn / 2 + 1, sizeof *tmp);
    int64_t *iv = inds->data;
    EvItems it = {.t = x, .inner = inner, .desc = largest};
    for (size_t o = 0; o < outer; o++)
        for (size_t e = 0; e < inner; e++) {
            it.base = o * nn * inner + e;
            for (size_t j = 0; j < nn; j++)
                ord[j] = j;
            ev_msort(ord, tmp, nn, ev_slice_cmp, &it);
            for (size_t j = 0; j < nk; j++) {
                size_t dst = (o * nk + j) * inner + e;
                ev_copy_elems(vals, dst, x, it.base + ord[j] * inner, 1);
                iv[dst] = (int64_t)ord[j];
            }
        }
    return 0;
}

/* ---- selection --------------------------------------------------------- */

static int ev_compress(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *cond = ev_in_tensor(c, 1);
    if (!x || !cond)
        return -1;
    if (cond->rank != 1)
        return ev_fail(c, "condition must be 1-D");
    bool has_axis = ev_attr(c, "axis") != NULL;
    size_t axis = 0, outer = 1, n = x->numel, inner = 1;
    if (has_axis) {
        if (ev_axis(c, "axis", ev_attr_i_or(c, "axis", 0), x->rank, 0, &axis))
            return -1;
        outer = ev_dims_prod(x->dims, 0, axis);
        n = (size_t)x->dims[axis];
        inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    }
    size_t cnt = 0;
    for (size_t j = 0; j < cond->numel; j++) {
        if (ev_get_i(cond, j) == 0)
            continue;
        if (j >= n)
            return ev_fail(c, "condition selects index %zu past the %zu "
                           "available", j, n);
        cnt++;
    }
    int64_t dims[EV_MAX_RANK];
    EvValue *y;
    if (has_axis) {
        memcpy(dims, x->dims, x->rank * sizeof *dims);
        dims[axis] = (int64_t)cnt;
        y = ev_out_tensor(c, 0, x->dtype, x->rank, dims);
    } else {
        dims[0] = (int64_t)cnt;
        y = ev_out_tensor(c, 0, x->dtype, 1, dims);
    }
    if (!y)
        return -1;
    size_t k = 0;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < cond->numel && j < n; j++)
            if (ev_get_i(cond, j) != 0) {
                ev_copy_elems(y, k * inner, x, (o * n + j) * inner, inner);
                k++;
            }
    return 0;
}

static bool ev_is_nonzero(const EvValue *t, size_t k)
{
    switch (t->dtype) {
    case IR_STRING: return ((const EvStr *)t->data)[k].len != 0;
    case IR_COMPLEX64: {
        const float *f = t->data;
        return f[2 * k] != 0 || f[2 * k + 1] != 0;
    }
    case IR_COMPLEX128: {
        const double *f = t->data;
        return f[2 * k] != 0 || f[2 * k + 1] != 0;
    }
    default:
        if (ev_dtype_is_float(t->dtype))
            return ev_get_f(t, k) != 0;
        return ev_get_u(t, k) != 0;
    }
}

static int ev_nonzero(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t cnt = 0;
    for (size_t k = 0; k < x->numel; k++)
        cnt += ev_is_nonzero(x, k);
    int64_t dims[2] = {(int64_t)x->rank, (int64_t)cnt};
    EvValue *y = ev_out_tensor(c, 0, IR_INT64, 2, dims);
    if (!y)
        return -1;
    int64_t *out = y->data;
    size_t coord[EV_MAX_RANK] = {0}, j = 0;
    for (size_t k = 0; k < x->numel; k++) {
        if (ev_is_nonzero(x, k)) {
            for (size_t d = 0; d < x->rank; d++)
                out[d * cnt + j] = (int64_t)coord[d];
            j++;
        }
        ev_odo_next(coord, x->dims, x->rank);
    }
    return 0;
}

/* ---- Unique ------------------------------------------------------------ */

/* Groups of equal items, in sorted order: grp[i] is item i's group,
 * first[g] the lowest item of group g, count[g] its size. */
typedef struct EvGroups {
    size_t n, *grp, *first;
    int64_t *count;
} EvGroups;

static void ev_unique_groups(EvCtx *c, const EvItems *it, EvGroups *g)
{
    size_t n = it->n;
    size_t *ord = ev_tmp(c, n + 1, sizeof *ord);
    size_t *tmp = ev_tmp(c, n / 2 + 1, sizeof *tmp);
    g->grp = ev_tmp(c, n + 1, sizeof *g->grp);
    g->first = ev_tmp(c, n + 1, sizeof *g->first);
    g->count = ev_tmp(c, n + 1, sizeof *g->count);
    g->n = 0;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    ev_msort(ord, tmp, n, ev_item_cmp, it);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || ev_item_cmp(it, ord[i - 1], ord[i]) != 0)
            g->first[g->n++] = ord[i];  /* stable: the lowest index */
        g->grp[ord[i]] = g->n - 1;
        g->count[g->n - 1]++;
    }
}

/* The optional outputs: first indices, inverse indices and counts, in
 * output order (pos: group -> output position, src: the inverse). */
static int ev_unique_indices(EvCtx *c, const EvGroups *g, size_t n,
                             const size_t *pos, const size_t *src)
{
    int64_t un = (int64_t)g->n, nn = (int64_t)n;
    EvValue *t;
    if (ev_has_out(c, 1)) {
        if (!(t = ev_out_tensor(c, 1, IR_INT64, 1, &un)))
            return -1;
        for (size_t p = 0; p < g->n; p++)
            ((int64_t *)t->data)[p] = (int64_t)g->first[src[p]];
    }
    if (ev_has_out(c, 2)) {
        if (!(t = ev_out_tensor(c, 2, IR_INT64, 1, &nn)))
            return -1;
        for (size_t i = 0; i < n; i++)
            ((int64_t *)t->data)[i] = (int64_t)pos[g->grp[i]];
    }
    if (ev_has_out(c, 3)) {
        if (!(t = ev_out_tensor(c, 3, IR_INT64, 1, &un)))
            return -1;
        for (size_t p = 0; p < g->n; p++)
            ((int64_t *)t->data)[p] = g->count[src[p]];
    }
    return 0;
}

static int ev_unique(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    bool has_axis = ev_attr(c, "axis") != NULL;
    bool sorted = ev_attr_i(c, "sorted") != 0;
    size_t axis = 0;
    EvItems it = {.t = x, .outer = 1, .n = x->numel, .inner = 1};
    if (has_axis) {
        if (ev_axis(c, "axis", ev_attr_i_or(c, "axis", 0), x->rank, 0, &axis))
            return -1;
        it.outer = ev_dims_prod(x->dims, 0, axis);
        it.n = (size_t)x->dims[axis];
        it.inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    }
    EvGroups g;
    ev_unique_groups(c, &it, &g);
    /* pos[g]: where group g lands in the outputs; src[p]: the inverse. */
    size_t *pos = ev_tmp(c, g.n + 1, sizeof *pos);
    size_t *src = ev_tmp(c, g.n + 1, sizeof *src);
    for (size_t i = 0, p = 0; i < it.n && !sorted; i++)
        if (g.first[g.grp[i]] == i)
            pos[g.grp[i]] = p++;
    for (size_t k = 0; k < g.n; k++) {
        if (sorted)
            pos[k] = k;
        src[pos[k]] = k;
    }
    int64_t dims[EV_MAX_RANK], un = (int64_t)g.n;
    EvValue *y;
    if (has_axis) {
        memcpy(dims, x->dims, x->rank * sizeof *dims);
        dims[axis] = un;
        y = ev_out_tensor(c, 0, x->dtype, x->rank, dims);
    } else {
        y = ev_out_tensor(c, 0, x->dtype, 1, &un);
    }
    if (!y)
        return -1;
    for (size_t o = 0; o < it.outer; o++)
        for (size_t p = 0; p < g.n; p++)
            ev_copy_elems(y, (o * g.n + p) * it.inner, x,
                          (o * it.n + g.first[src[p]]) * it.inner, it.inner);
    return ev_unique_indices(c, &g, it.n, pos, src);
}

/* ---- ReverseSequence --------------------------------------------------- */

static int ev_reverse_sequence(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "input must have rank 2 or more");
    int64_t ta = ev_attr_i(c, "time_axis");
    int64_t ba = ev_attr_i(c, "batch_axis");
    if ((ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
        return ev_fail(c, "time_axis %lld and batch_axis %lld must be 0 and "
                       "1 in some order", (long long)ta, (long long)ba);
    size_t nl;
    int64_t *lens = ev_in_ints(c, 1, &nl);
    if (!lens)
        return -1;
    size_t tn = (size_t)x->dims[ta], bn = (size_t)x->dims[ba];
    if (nl != bn)
        return ev_fail(c, "sequence_lens has %zu values for a batch of %zu",
                       nl, bn);
    for (size_t b = 0; b < bn; b++)
        if (lens[b] < 0 || (uint64_t)lens[b] > tn)
            return ev_fail(c, "sequence length %lld is out of range [0, %zu]",
                           (long long)lens[b], tn);
    EvValue *y = ev_out_like(c, 0, x);
    if (!y)
        return -1;
    size_t inner = ev_dims_prod(x->dims, 2, x->rank);
    for (size_t b = 0; b < bn; b++)
        for (size_t t = 0; t < tn; t++) {
            size_t len = (size_t)lens[b];
            size_t st = t < len ? len - 1 - t : t;
            size_t dst = ta == 0 ? t * bn + b : b * tn + t;
            size_t src = ta == 0 ? st * bn + b : b * tn + st;
            ev_copy_elems(y, dst * inner, x, src * inner, inner);
        }
    return 0;
}

const EvOp ev_ops_index[] = {
    {"", "Gather", ev_gather},
    {"", "GatherElements", ev_gather_elements},
    {"", "GatherND", ev_gather_nd},
    {"", "Scatter", ev_scatter_elements},
    {"", "ScatterElements", ev_scatter_elements},
    {"", "ScatterND", ev_scatter_nd},
    {"", "TensorScatter", ev_tensor_scatter},
    {"", "TopK", ev_topk},
    {"", "Compress", ev_compress},
    {"", "NonZero", ev_nonzero},
    {"", "Unique", ev_unique},
    {"", "ReverseSequence", ev_reverse_sequence},
    {NULL, NULL, NULL}
};
