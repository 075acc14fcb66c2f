/* Kernels of the tensor family: ops that generate or rearrange elements
 * without arithmetic on them.
 *   CenterCropPad 18
 *   Shape 1,13,15,19,21,23..25         Size 1,13,19,21,23..25
 *   Constant 1,9,11,12,13,19,21,23..25 ConstantOfShape 9,20,21,23..25
 *   Range 11,27   EyeLike 9,22   Trilu 14   DepthToSpace 1,11,13
 *   SpaceToDepth 1,13   OneHot 9,11
 *
 * The copies go through the strided views of the shape family
 * (src/eval/shape.c, declared in kernels.h).
 *
 * Subtle points:
 * - Range-27: float16/bfloat16 are computed in stash_type (float by
 *   default), as its function body does; integers exactly.
 * - OneHot-9 treats negative indices as out of range; 11 counts them
 *   from the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- CenterCropPad ---------------------------------------------------- */

/* Crops or zero-pads each named axis to the target size, centred (the
 * extra element of an odd difference goes to the end). */
static int ev_center_crop_pad(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t r = x->rank, n, na;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    const int64_t *shape, *axes;
    if (ev_ints(c, 1, &shape, &n) < 0)
        return -1;
    int hasax = ev_attr_list(c, "axes", false, &axes, &na);
    if (n != (hasax ? na : r))
        return ev_fail(c, "shape has %zu entries", n);
    int64_t beg[EV_MAX_RANK] = {0}, end[EV_MAX_RANK] = {0}, dims[EV_MAX_RANK];
    bool seen[EV_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        size_t a = i;
        if (hasax && ev_axis(c, "axes", axes[i], r, 0, &a) < 0)
            return -1;
        if (seen[a])
            return ev_fail(c, "axis %zu is repeated", a);
        seen[a] = true;
        if (shape[i] < 0)
            return ev_fail(c, "shape[%zu] = %lld", i, (long long)shape[i]);
        int64_t diff = shape[i] - x->dims[a];
        beg[a] = diff >= 0 ? diff / 2 : -((-diff) / 2);
        end[a] = diff - beg[a];
    }
    for (size_t a = 0; a < r; a++)
        dims[a] = x->dims[a] + beg[a] + end[a];
    EvValue *y = ev_out_tensor(c, 0, x->dtype, r, dims);
    if (!y)
        return -1;
    ev_place(y, x, beg, end);
    return 0;
}

/* ---- Shape, Size, Constant, ConstantOfShape -------------------------- */

static int ev_shape(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    int64_t r = (int64_t)x->rank, s = 0, e = r;
    if (c->ver >= 15) {
        s = ev_attr_i(c, "start");
        e = ev_attr(c, "end") ? ev_attr_i_or(c, "end", r) : r;
        s = s < 0 ? (s < -r ? 0 : s + r) : (s > r ? r : s);
        e = e < 0 ? (e < -r ? 0 : e + r) : (e > r ? r : e);
    }
    int64_t n = e > s ? e - s : 0;
    EvValue *y = ev_out_tensor(c, 0, IR_INT64, 1, &n);
    if (!y)
        return -1;
    for (int64_t i = 0; i < n; i++)
        ((int64_t *)y->data)[i] = x->dims[s + i];
    return 0;
}

static int ev_size(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    EvValue *y = ev_out_tensor(c, 0, IR_INT64, 0, NULL);
    if (!y)
        return -1;
    *(int64_t *)y->data = (int64_t)x->numel;
    return 0;
}

/* A sparse_value: values [NNZ] at indices [NNZ] (linear) or [NNZ, rank]
 * (coordinates), zeros elsewhere. */
static int ev_sparse_fill(EvCtx *c, EvValue *y, const EvValue *vals,
                          const EvValue *idx)
{
    size_t nnz = vals->numel, r = y->rank;
    bool coords = idx->rank == 2;
    if (vals->rank != 1 || idx->dtype != IR_INT64 ||
        (idx->rank != 1 && !coords) || idx->dims[0] != (int64_t)nnz ||
        (coords && idx->dims[1] != (int64_t)r))
        return ev_fail(c, "sparse_value has malformed values or indices");
    const int64_t *ix = idx->data;
    int64_t ys[EV_MAX_RANK];
    ev_istrides(r, y->dims, ys);
    for (size_t k = 0; k < nnz; k++) {
        int64_t at = 0;
        if (!coords) {
            at = ix[k];
        } else {
            for (size_t a = 0; a < r; a++) {
                int64_t v = ix[k * r + a];
                if (v < 0 || v >= y->dims[a])
                    return ev_fail(c, "sparse index out of range");
                at += v * ys[a];
            }
        }
        if (at < 0 || (uint64_t)at >= y->numel)
            return ev_fail(c, "sparse index %lld out of range",
                           (long long)at);
        ev_copy_elems(y, (size_t)at, vals, k, 1);
    }
    return 0;
}

static int ev_constant_sparse(EvCtx *c, const IrSparse *sp)
{
    if (!sp || !sp->values || !sp->indices || sp->ndims > EV_MAX_RANK)
        return ev_fail(c, "sparse_value is incomplete");
    IrError err;
    EvValue *vals = ev_from_ir_tensor(sp->values, &err), *idx = NULL;
    if (vals)
        idx = ev_from_ir_tensor(sp->indices, &err);
    int rc = -1;
    if (!vals || !idx) {
        ev_fail(c, "sparse_value: %s", err.msg);
        goto done;
    }
    EvValue *y = ev_out_tensor(c, 0, vals->dtype, sp->ndims, sp->dims);
    if (y)
        rc = ev_sparse_fill(c, y, vals, idx);
done:
    ev_unref(vals);
    ev_unref(idx);
    return rc;
}

/* value_string(s): bytes copied as they are (they may hold NULs). */
static int ev_constant_strings(EvCtx *c, const IrBytes *s, size_t n,
                               bool scalar)
{
    int64_t dim = (int64_t)n;
    EvValue *y = ev_out_tensor(c, 0, IR_STRING, scalar ? 0 : 1, &dim);
    if (!y)
        return -1;
    EvStr *d = y->data;
    for (size_t i = 0; i < n; i++) {
        EvStr tmp = {s[i].len, (char *)s[i].data};
        ev_str_set(&d[i], &tmp);
    }
    return 0;
}

/* value_float(s) and value_int(s). */
static int ev_constant_numbers(EvCtx *c, const char *name, const IrAttr *a)
{
    bool ints = strstr(name, "int") != NULL;
    bool scalar = name[strlen(name) - 1] != 's';
    size_t n = scalar ? 1 : ints ? a->n_ints : a->n_floats;
    int64_t dim = (int64_t)n;
    EvValue *y = ev_out_tensor(c, 0, ints ? IR_INT64 : IR_FLOAT,
                               scalar ? 0 : 1, &dim);
    if (!y)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (ints)
            ((int64_t *)y->data)[i] = scalar ? ev_attr_i(c, name)
                                             : a->ints[i];
        else
            ((float *)y->data)[i] = scalar ? ev_attr_f(c, name)
                                           : a->floats[i];
    }
    return 0;
}

static int ev_constant(EvCtx *c)
{
    static const char *const names[] = {
        "value", "sparse_value", "value_float", "value_floats", "value_int",
        "value_ints", "value_string", "value_strings"};
    const char *which = NULL;
    const IrAttr *a = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const IrAttr *t = ev_attr(c, names[i]);
        if (!t)
            continue;
        if (which)
            return ev_fail(c, "both '%s' and '%s' are given", which,
                           names[i]);
        which = names[i];
        a = t;
    }
    if (!which)
        return ev_fail(c, "no value attribute");
    if (!strcmp(which, "value")) {
        EvValue *t = ev_attr_value(c, "value");
        if (!t)
            return -1;
        ev_out_set(c, 0, t);
        return 0;
    }
    if (!strcmp(which, "sparse_value"))
        return ev_constant_sparse(c, a->sparse_tensor);
    if (!strcmp(which, "value_string")) {
        if (!a->has_s)
            return ev_fail(c, "attribute 'value_string' has no string");
        return ev_constant_strings(c, &a->s, 1, true);
    }
    if (!strcmp(which, "value_strings")) {
        const IrBytes *s;
        long n = ev_attr_strings(c, "value_strings", &s);
        return ev_constant_strings(c, s, n < 0 ? 0 : (size_t)n, false);
    }
    return ev_constant_numbers(c, which, a);
}

static int ev_constant_of_shape(EvCtx *c)
{
    const int64_t *shape;
    size_t n;
    if (ev_ints(c, 0, &shape, &n) < 0)
        return -1;
    if (n > EV_MAX_RANK)
        return ev_fail(c, "shape has %zu dims", n);
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0)
            return ev_fail(c, "shape[%zu] = %lld", i, (long long)shape[i]);
    EvValue *val = NULL;
    if (ev_attr(c, "value")) {
        if (!(val = ev_attr_value(c, "value")))
            return -1;
        if (val->numel != 1) {
            ev_unref(val);
            return ev_fail(c, "attribute 'value' must hold one element");
        }
    }
    EvValue *y = ev_out_tensor(c, 0, val ? val->dtype : IR_FLOAT, n, shape);
    if (y && val)
        ev_fill(y, val, 0);
    ev_unref(val);
    return y ? 0 : -1;
}

/* ---- Range, EyeLike, Trilu ------------------------------------------- */

/* Integer ranges, exact: the count from unsigned differences, so that
 * no intermediate overflows. */
static int ev_range_int(EvCtx *c, int32_t dt, int64_t s, int64_t l, int64_t d)
{
    uint64_t n = 0;
    if (d > 0 && l > s)
        n = ((uint64_t)l - (uint64_t)s - 1) / (uint64_t)d + 1;
    else if (d < 0 && s > l)
        n = ((uint64_t)s - (uint64_t)l - 1) / ((uint64_t)0 - (uint64_t)d) + 1;
    if (n > (uint64_t)INT64_MAX)
        return ev_fail(c, "range too long");
    int64_t dim = (int64_t)n;
    EvValue *y = ev_out_tensor(c, 0, dt, 1, &dim);
    if (!y)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        ev_set_i(y, (size_t)i, (int64_t)((uint64_t)s + i * (uint64_t)d));
    return 0;
}

/* Floating ranges in precision `prec` (float or double arithmetic), as
 * number = ceil((limit - start) / delta), element i = start + i*delta. */
static int ev_range_float(EvCtx *c, int32_t dt, bool dbl, double s, double l,
                          double d)
{
    double cnt;
    if (dbl)
        cnt = ceil((l - s) / d);
    else
        cnt = ceilf(((float)l - (float)s) / (float)d);
    if (isnan(cnt) || cnt > 1e15)
        return ev_fail(c, "range length is not finite");
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    EvValue *y = ev_out_tensor(c, 0, dt, 1, &n);
    if (!y)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        double v = dbl ? s + (double)i * d
                       : (double)((float)s + (float)i * (float)d);
        ev_set_f(y, (size_t)i, v);
    }
    return 0;
}

static int ev_range(EvCtx *c)
{
    EvValue *t[3];
    for (size_t i = 0; i < 3; i++) {
        if (!(t[i] = ev_in_tensor(c, i)))
            return -1;
        if (t[i]->numel != 1 || t[i]->dtype != t[0]->dtype)
            return ev_fail(c, "start, limit and delta must be scalars of "
                           "one type");
    }
    int32_t dt = t[0]->dtype;
    if (ev_dtype_is_int(dt)) {
        int64_t d = ev_get_i(t[2], 0);
        if (!d)
            return ev_fail(c, "delta is 0");
        return ev_range_int(c, dt, ev_get_i(t[0], 0), ev_get_i(t[1], 0), d);
    }
    if (!ev_dtype_is_float(dt))
        return ev_fail(c, "unsupported type");
    double d = ev_get_f(t[2], 0);
    if (d == 0)
        return ev_fail(c, "delta is 0");
    bool dbl = dt == IR_DOUBLE;
    if (dt != IR_FLOAT && dt != IR_DOUBLE) {
        int64_t stash = c->ver >= 27 ? ev_attr_i_or(c, "stash_type", 1) : 1;
        if (stash != IR_FLOAT && stash != IR_DOUBLE)
            return ev_fail(c, "stash_type %lld is not supported",
                           (long long)stash);
        dbl = stash == IR_DOUBLE;
    }
    return ev_range_float(c, dt, dbl, ev_get_f(t[0], 0), ev_get_f(t[1], 0),
                          d);
}

static int ev_eyelike(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (x->rank != 2)
        return ev_fail(c, "input must be 2-D");
    int64_t dt = ev_attr_i_or(c, "dtype", x->dtype);
    if (dt == IR_STRING || dt == IR_COMPLEX64 || dt == IR_COMPLEX128 ||
        dt <= 0 || dt > INT32_MAX || !ev_dtype_size((int32_t)dt))
        return ev_fail(c, "dtype %lld is not supported", (long long)dt);
    EvValue *y = ev_out_tensor(c, 0, (int32_t)dt, 2, x->dims);
    if (!y)
        return -1;
    int64_t rows = x->dims[0], cols = x->dims[1], k = ev_attr_i(c, "k");
    if (k >= cols || k <= -rows)
        return 0;
    for (int64_t i = k < 0 ? -k : 0; i < rows && i + k < cols; i++)
        ev_set_i(y, (size_t)(i * cols + i + k), 1);
    return 0;
}

/* Keeps j - i >= k (upper) or j - i <= k (lower) of each matrix; the
 * kept part of a row is one run. */
static int ev_trilu(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "input must have rank 2 or more");
    int64_t k = 0;
    if (ev_in(c, 1) && ev_scalar_int(c, 1, &k) < 0)
        return -1;
    bool upper = ev_attr_i(c, "upper") != 0;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    /* beyond the matrix, k changes nothing; clamping avoids overflow */
    if (k > rows + cols)
        k = rows + cols;
    if (k < -(rows + cols))
        k = -(rows + cols);
    size_t mats = x->numel / (size_t)(rows * cols);
    for (size_t m = 0; m < mats; m++) {
        for (int64_t i = 0; i < rows; i++) {
            size_t row = (m * (size_t)rows + (size_t)i) * (size_t)cols;
            int64_t lo = upper ? i + k : 0, hi = upper ? cols : i + k + 1;
            lo = lo < 0 ? 0 : lo > cols ? cols : lo;
            hi = hi < 0 ? 0 : hi > cols ? cols : hi;
            if (hi > lo)
                ev_copy_elems(y, row + (size_t)lo, x, row + (size_t)lo,
                              (size_t)(hi - lo));
        }
    }
    return 0;
}

/* ---- DepthToSpace, SpaceToDepth, OneHot ------------------------------ */

/* Input [N,C,H,W] and the blocksize, checked. */
static EvValue *ev_block_input(EvCtx *c, int64_t *b)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return NULL;
    if (x->rank != 4) {
        ev_fail(c, "input must be 4-D");
        return NULL;
    }
    if (!ev_attr(c, "blocksize")) {
        ev_fail(c, "attribute 'blocksize' is missing");
        return NULL;
    }
    *b = ev_attr_i_or(c, "blocksize", 1);
    if (*b < 1 || *b > INT32_MAX) {
        ev_fail(c, "blocksize %lld is not valid", (long long)*b);
        return NULL;
    }
    return x;
}

/* Output [N, C/b², H*b, W*b] viewed as [N, C', H, b1, W, b2]; the channel
 * read is (b1*b + b2)*C' + c' in DCR mode and c'*b² + b1*b + b2 in CRD. */
static int ev_depth_to_space(EvCtx *c)
{
    int64_t b;
    EvValue *x = ev_block_input(c, &b);
    if (!x)
        return -1;
    const char *mode = c->ver >= 11 ? ev_attr_s_or(c, "mode", "DCR") : "DCR";
    bool crd = !strcmp(mode, "CRD");
    if (!crd && strcmp(mode, "DCR"))
        return ev_fail(c, "unknown mode '%s'", mode);
    int64_t n = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (ch % (b * b))
        return ev_fail(c, "channels %lld do not divide by blocksize²",
                       (long long)ch);
    int64_t cp = ch / (b * b), dims[4] = {n, cp, 0, 0};
    if (ev_mul_dim(c, h, b, &dims[2]) < 0 || ev_mul_dim(c, w, b, &dims[3]) < 0)
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, 4, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    int64_t sc = h * w, vd[6] = {n, cp, h, b, w, b};
    EvView v;
    ev_view_init(&v, 6, vd);
    v.ss[0] = ch * sc;
    v.ss[2] = w;
    v.ss[4] = 1;
    v.ss[1] = crd ? b * b * sc : sc;
    v.ss[3] = crd ? b * sc : b * cp * sc;
    v.ss[5] = crd ? sc : cp * sc;
    ev_view_copy(y, x, &v);
    return 0;
}

/* Output [N, C*b², H/b, W/b] viewed as [N, b1, b2, C, H/b, W/b], reading
 * x[n, c, h'*b + b1, w'*b + b2]. */
static int ev_space_to_depth(EvCtx *c)
{
    int64_t b;
    EvValue *x = ev_block_input(c, &b);
    if (!x)
        return -1;
    int64_t n = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (h % b || w % b)
        return ev_fail(c, "height and width must divide by blocksize");
    int64_t dims[4] = {n, 0, h / b, w / b};
    if (ev_mul_dim(c, ch, b * b, &dims[1]) < 0)
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, 4, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    int64_t vd[6] = {n, b, b, ch, h / b, w / b};
    EvView v;
    ev_view_init(&v, 6, vd);
    v.ss[0] = ch * h * w;
    v.ss[1] = w;
    v.ss[2] = 1;
    v.ss[3] = h * w;
    v.ss[4] = b * w;
    v.ss[5] = b;
    ev_view_copy(y, x, &v);
    return 0;
}

static int ev_onehot(EvCtx *c)
{
    EvValue *ix = ev_in_tensor(c, 0), *dv = ev_in_tensor(c, 1);
    EvValue *vals = ev_in_tensor(c, 2);
    if (!ix || !dv || !vals)
        return -1;
    size_t r = ix->rank, a, n;
    if (r >= EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    if (vals->numel != 2)
        return ev_fail(c, "values must hold [off_value, on_value]");
    if (dv->numel != 1 || dv->dtype == IR_STRING)
        return ev_fail(c, "depth must be one number");
    int64_t depth = ev_get_i(dv, 0);
    if (depth < 0)
        return ev_fail(c, "depth %lld is negative", (long long)depth);
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), r, 1, &a) < 0)
        return -1;
    int64_t *idx = ix->numel ? ev_in_ints(c, 0, &n) : NULL;
    if (ix->numel && !idx)
        return -1;
    int64_t dims[EV_MAX_RANK];
    for (size_t i = 0, k = 0; i <= r; i++)
        dims[i] = i == a ? depth : ix->dims[k++];
    EvValue *y = ev_out_tensor(c, 0, vals->dtype, r + 1, dims);
    if (!y)
        return -1;
    ev_fill(y, vals, 0);
    if (!y->numel)
        return 0;
    size_t inner = (size_t)ev_dims_prod(ix->dims, a, r);
    for (size_t k = 0; k < ix->numel; k++) {
        int64_t v = idx[k];
        if (v < 0 && c->ver >= 11 && v >= -depth)
            v += depth;
        if (v < 0 || v >= depth)
            continue;
        size_t o = k / inner, i = k % inner;
        ev_copy_elems(y, (o * (size_t)depth + (size_t)v) * inner + i, vals,
                      1, 1);
    }
    return 0;
}

const EvOp ev_ops_tensor[] = {
    {"", "CenterCropPad", ev_center_crop_pad},
    {"", "Shape", ev_shape},
    {"", "Size", ev_size},
    {"", "Constant", ev_constant},
    {"", "ConstantOfShape", ev_constant_of_shape},
    {"", "Range", ev_range},
    {"", "EyeLike", ev_eyelike},
    {"", "Trilu", ev_trilu},
    {"", "DepthToSpace", ev_depth_to_space},
    {"", "SpaceToDepth", ev_space_to_depth},
    {"", "OneHot", ev_onehot},
    {NULL, NULL, NULL}
};