/* Reduce family: ops that fold many elements into one.
 *
 *   ReduceSum (1, 11, 13), ReduceMean, ReduceMax, ReduceMin, ReduceProd,
 *   ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare
 *   (1, 11, 13, 18; ReduceMax/ReduceMin also 12 and 20), ArgMax and ArgMin
 *   (1, 11, 12, 13), CumSum (11, 14), CumProd (26), Det (11, 22),
 *   NegativeLogLikelihoodLoss (12, 13, 22), SoftmaxCrossEntropyLoss (12, 13).
 *
 * Subtle points:
 * - axes is an attribute before ReduceSum-13 and the others' version 18,
 *   an optional input after. With the input, an absent or empty axes
 *   reduces everything unless noop_with_empty_axes is 1; then nothing is
 *   reduced but the element step still runs (ReduceL1 gives |x|,
 *   ReduceSumSquare x*x, ReduceLogSum log x), which is what folding each
 *   element alone computes. Repeated axes are an error.
 * - Empty sets: Sum, L1, L2, SumSquare give 0, Prod 1, Max -inf (the type's
 *   lowest value for integers, false for bool), Min +inf (highest, true),
 *   LogSum and LogSumExp -inf, Mean NaN (0 for integers).
 * - Integers are exact: sums and products wrap in uint64 (two's
 *   complement, then narrowed like the C type), Mean divides the exact sum
 *   (truncating toward zero, like numpy's mean cast back); L2, LogSum and
 *   LogSumExp go through double since their results need it.
 * - Floats accumulate in double. A NaN makes Max/Min NaN.
 * - Fast paths for float data: reduced over trailing axes (ReduceSum/Mean/
 *   Max over the last axis in transformer models) each output reads one
 *   contiguous run; reduced over one block of dims before kept ones (mean
 *   pooling over the sequence), whole rows fold at once.
 * - ArgMax/ArgMin: ties give the first index, or the last with
 *   select_last_index; a NaN counts as the extreme (the first NaN wins).
 * - CumSum/CumProd accumulate floats in double and integers in uint64
 *   (two's complement wrap, as the C types of the elements would).
 * - The losses compute in double. "mean" divides by the summed weights of
 *   the targets that are not ignore_index (their count without weights).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- reductions -------------------------------------------------------- */

typedef enum {
    EV_R_SUM, EV_R_MEAN, EV_R_MAX, EV_R_MIN, EV_R_PROD, EV_R_L1, EV_R_L2,
    EV_R_LOGSUM, EV_R_LSE, EV_R_SUMSQ
} EvRk;

/* Where each output element's inputs are: output i folds the elements
 * base(i) + roff[r], r < nred. When the reduced axes are the trailing
 * ones (contig), base(i) = i * nred and roff[r] = r, so no tables. When
 * they form one block of dims (block), the data is outer x nred x inner
 * and output o * inner + e folds x[o][r][e]. */
typedef struct EvRed {
    size_t nout, nred;
    size_t *base, *roff;
    bool contig, block;
    size_t outer, inner;
} EvRed;

static inline size_t ev_red_base(const EvRed *r, size_t i)
{
    return r->contig ? i * r->nred : r->base[i];
}

static inline size_t ev_red_off(const EvRed *r, size_t k)
{
    return r->contig ? k : r->roff[k];
}

/* Offsets of every coordinate over the dims selected by `pick` (row-major
 * order of those dims), using x's strides. */
static void ev_offsets(const EvValue *x, const bool *pick, bool want,
                       size_t *out, size_t n)
{
    size_t xs[EV_MAX_RANK], coord[EV_MAX_RANK] = {0}, off = 0;
    ev_strides(x->rank, x->dims, xs);
    for (size_t k = 0; k < n; k++) {
        out[k] = off;
        for (size_t d = x->rank; d-- > 0;) {
            if (pick[d] != want)
                continue;
            off += xs[d];
            if (++coord[d] < (size_t)x->dims[d])
                break;
            off -= coord[d] * xs[d];
            coord[d] = 0;
        }
    }
}

/* Reads the axes (attribute or input, by version) into mask. */
static int ev_red_axes(EvCtx *c, const EvValue *x, bool input, bool *mask)
{
    size_t n = 0;
    const int64_t *ax = NULL;
    bool noop = false;
    if (input) {
        noop = ev_attr_i(c, "noop_with_empty_axes") != 0;
        if (ev_in(c, 1)) {
            int64_t *v = ev_in_ints(c, 1, &n);
            if (!v)
                return -1;
            ax = v;
        }
    } else {
        long na = ev_attr_ints(c, "axes", &ax);
        n = na > 0 ? (size_t)na : 0;
    }
    for (size_t d = 0; d < x->rank; d++)
        mask[d] = n == 0 && !noop;
    for (size_t i = 0; i < n; i++) {
        size_t a;
        if (ev_axis(c, "axes", ax[i], x->rank, 0, &a))
            return -1;
        if (mask[a])
            return ev_fail(c, "axis %lld is repeated", (long long)ax[i]);
        mask[a] = true;
    }
    return 0;
}

/* The output (keepdims or not) and the offset tables. */
static EvValue *ev_red_setup(EvCtx *c, const EvValue *x, const bool *mask,
                             int32_t odtype, EvRed *r)
{
    bool keep = ev_attr_i(c, "keepdims") != 0;
    int64_t dims[EV_MAX_RANK];
    size_t rank = 0, runs = 0;
    r->nout = r->nred = r->outer = r->inner = 1;
    for (size_t d = 0; d < x->rank; d++) {
        if (mask[d]) {
            r->nred *= (size_t)x->dims[d];
            runs += d == 0 || !mask[d - 1];
        } else {
            r->nout *= (size_t)x->dims[d];
            *(runs ? &r->inner : &r->outer) *= (size_t)x->dims[d];
        }
        if (!mask[d] || keep)
            dims[rank++] = mask[d] ? 1 : x->dims[d];
    }
    r->block = runs == 1;
    r->contig = runs == 0 || (runs == 1 && r->inner == 1);
    EvValue *y = ev_out_tensor(c, 0, odtype, rank, dims);
    if (!y || r->contig)
        return y;
    r->base = ev_tmp(c, r->nout + 1, sizeof *r->base);
    r->roff = ev_tmp(c, r->nred + 1, sizeof *r->roff);
    if (!r->base || !r->roff)
        return NULL;
    ev_offsets(x, mask, false, r->base, r->nout);
    ev_offsets(x, mask, true, r->roff, r->nred);
    return y;
}

/* log(sum(exp(v))) with the maximum taken out first. */
static double ev_lse(const EvValue *x, const EvRed *r, size_t b)
{
    double m = -INFINITY, s = 0;
    for (size_t k = 0; k < r->nred; k++) {
        double v = ev_at_get(x, b + ev_red_off(r, k));
        if (isnan(v))
            return v;
        if (v > m)
            m = v;
    }
    if (isinf(m))
        return m;
    for (size_t k = 0; k < r->nred; k++)
        s += exp(ev_at_get(x, b + ev_red_off(r, k)) - m);
    return m + log(s);
}

/* Contiguous float runs: four partial sums break the add chain. */
static double ev_sum_run(const float *p, size_t n, bool square)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;
    if (square)
        for (; k + 4 <= n; k += 4) {
            s0 += (double)p[k] * p[k], s1 += (double)p[k + 1] * p[k + 1];
            s2 += (double)p[k + 2] * p[k + 2];
            s3 += (double)p[k + 3] * p[k + 3];
        }
    else
        for (; k + 4 <= n; k += 4)
            s0 += p[k], s1 += p[k + 1], s2 += p[k + 2], s3 += p[k + 3];
    for (; k < n; k++)
        s0 += square ? (double)p[k] * p[k] : p[k];
    return (s0 + s1) + (s2 + s3);
}

/* Branch-free (NaN noted apart) so that the loop stays tight. */
static float ev_max_run(const float *p, size_t n, bool max)
{
    float m0 = max ? -INFINITY : INFINITY, m1 = m0, m2 = m0, m3 = m0;
    int nan = 0;
    size_t k = 0;
    if (!max)
        for (; k + 4 <= n; k += 4) {
            m0 = p[k] < m0 ? p[k] : m0, m1 = p[k + 1] < m1 ? p[k + 1] : m1;
            m2 = p[k + 2] < m2 ? p[k + 2] : m2;
            m3 = p[k + 3] < m3 ? p[k + 3] : m3;
            nan |= (p[k] != p[k]) | (p[k + 1] != p[k + 1]) |
                   (p[k + 2] != p[k + 2]) | (p[k + 3] != p[k + 3]);
        }
    else
        for (; k + 4 <= n; k += 4) {
            m0 = p[k] > m0 ? p[k] : m0, m1 = p[k + 1] > m1 ? p[k + 1] : m1;
            m2 = p[k + 2] > m2 ? p[k + 2] : m2;
            m3 = p[k + 3] > m3 ? p[k + 3] : m3;
            nan |= (p[k] != p[k]) | (p[k + 1] != p[k + 1]) |
                   (p[k + 2] != p[k + 2]) | (p[k + 3] != p[k + 3]);
        }
    for (; k < n; k++) {
        m0 = (max ? p[k] > m0 : p[k] < m0) ? p[k] : m0;
        nan |= p[k] != p[k];
    }
    if (nan)
        return NAN;
    if (max)
        m0 = fmaxf(fmaxf(m0, m1), fmaxf(m2, m3));
    else
        m0 = fminf(fminf(m0, m1), fminf(m2, m3));
    return m0;
}

/* Float data reduced over one block of dims with trailing kept dims:
 * whole rows of `inner` elements fold at once, reading memory in order. */
static bool ev_red_block_f(EvCtx *c, const EvValue *x, const EvRed *r,
                           EvRk kind, EvValue *y)
{
    if (x->dtype != IR_FLOAT || !r->block || r->inner == 1 ||
        (kind != EV_R_SUM && kind != EV_R_MEAN && kind != EV_R_SUMSQ &&
         kind != EV_R_MAX && kind != EV_R_MIN))
        return false;
    size_t in = r->inner, n = r->nred;
    bool mx = kind == EV_R_MAX, mn = kind == EV_R_MIN;
    double *acc = ev_tmp(c, in, sizeof *acc);
    float *out = y->data;
    for (size_t o = 0; o < r->outer; o++) {
        /* an empty input has no data: no pointer arithmetic on NULL */
        const float *p = n ? (const float *)x->data + o * n * in : NULL;
        for (size_t e = 0; e < in; e++)
            acc[e] = mx ? -INFINITY : mn ? INFINITY : 0;
        for (size_t k = 0; k < n; k++, p += in)
            for (size_t e = 0; e < in; e++) {
                double v = p[e], a = acc[e];
                if (mx)
                    acc[e] = (v > a || v != v) ? v : a;
                else if (mn)
                    acc[e] = (v < a || v != v) ? v : a;
                else
                    acc[e] = a + (kind == EV_R_SUMSQ ? v * v : v);
            }
        for (size_t e = 0; e < in; e++)
            out[o * in + e] = (float)(kind == EV_R_MEAN ? acc[e] / (double)n
                                                         : acc[e]);
    }
    return true;
}

/* The fold of one output element, floats. */
static double ev_red_f(const EvValue *x, const EvRed *r, size_t i, EvRk kind)
{
    size_t b = ev_red_base(r, i), n = r->nred;
    if (r->contig && x->dtype == IR_FLOAT) {
        const float *p = n ? (const float *)x->data + b : NULL;
        switch (kind) {
        case EV_R_SUM: return ev_sum_run(p, n, false);
        case EV_R_MEAN: return ev_sum_run(p, n, false) / (double)n;
        case EV_R_SUMSQ: return ev_sum_run(p, n, true);
        case EV_R_L2: return sqrt(ev_sum_run(p, n, true));
        case EV_R_MAX: return ev_max_run(p, n, true);
        case EV_R_MIN: return ev_max_run(p, n, false);
        default: break;
        }
    }
    if (kind == EV_R_LSE)
        return ev_lse(x, r, b);
    double a = kind == EV_R_PROD ? 1 : kind == EV_R_MAX ? -INFINITY
             : kind == EV_R_MIN ? INFINITY : 0;
    for (size_t k = 0; k < n; k++) {
        double v = ev_at_get(x, b + ev_red_off(r, k));
        switch (kind) {
        case EV_R_MAX:
        case EV_R_MIN:
            if (isnan(v))
                return v;
            if (kind == EV_R_MAX ? v > a : v < a)
                a = v;
            break;
        case EV_R_PROD: a *= v; break;
        case EV_R_L1: a += fabs(v); break;
        case EV_R_L2: case EV_R_SUMSQ: a += v * v; break;
        default: a += v; break;
        }
    }
    switch (kind) {
    case EV_R_MEAN: return a / (double)n;
    case EV_R_L2: return sqrt(a);
    case EV_R_LOGSUM: return log(a);
    default: return a;
    }
}

/* Lowest (max = false) or highest value of an integer or bool type. */
static void ev_int_limit(int32_t t, bool high, EvValue *y, size_t i)
{
    int bits = t == IR_BOOL ? 1 : ir_dtype_bits(t);
    if (t == IR_BOOL || ev_dtype_is_unsigned(t))
        ev_set_u(y, i, !high ? 0 : bits >= 64 ? UINT64_MAX
                                  : ((uint64_t)1 << bits) - 1);
    else
        ev_set_i(y, i, high ? (int64_t)(((uint64_t)1 << (bits - 1)) - 1)
                            : -(int64_t)(((uint64_t)1 << (bits - 1)) - 1) - 1);
}

/* The fold of one output element, integers and bool (exact). */
static void ev_red_int(const EvValue *x, const EvRed *r, size_t i, EvRk kind,
                       EvValue *y)
{
    size_t b = ev_red_base(r, i), n = r->nred;
    bool uns = ev_dtype_is_unsigned(x->dtype) || x->dtype == IR_BOOL;
    if (kind == EV_R_MAX || kind == EV_R_MIN) {
        if (n == 0) {
            ev_int_limit(x->dtype, kind == EV_R_MIN, y, i);
            return;
        }
        size_t best = b + ev_red_off(r, 0);
        for (size_t k = 1; k < n; k++) {
            size_t at = b + ev_red_off(r, k);
            bool gt = uns ? ev_get_u(x, at) > ev_get_u(x, best)
                          : ev_get_i(x, at) > ev_get_i(x, best);
            bool lt = uns ? ev_get_u(x, at) < ev_get_u(x, best)
                          : ev_get_i(x, at) < ev_get_i(x, best);
            if (kind == EV_R_MAX ? gt : lt)
                best = at;
        }
        ev_set_u(y, i, ev_get_u(x, best));
        return;
    }
    if (kind == EV_R_LSE) {
        ev_set_f(y, i, ev_lse(x, r, b));
        return;
    }
    uint64_t a = kind == EV_R_PROD ? 1 : 0;
    for (size_t k = 0; k < n; k++) {
        size_t at = b + ev_red_off(r, k);
        uint64_t v = ev_get_u(x, at);
        switch (kind) {
        case EV_R_PROD: a *= v; break;
        case EV_R_L1:
            a += (!uns && ev_get_i(x, at) < 0) ? 0 - v : v;
            break;
        case EV_R_L2: case EV_R_SUMSQ: a += v * v; break;
        default: a += v; break;
        }
    }
    double d = uns ? (double)a : (double)(int64_t)a;
    switch (kind) {
    case EV_R_MEAN:
        if (n == 0)
            ev_set_u(y, i, 0);
        else if (uns)
            ev_set_u(y, i, a / n);
        else
            ev_set_i(y, i, (int64_t)a / (int64_t)n);
        return;
    case EV_R_L2: ev_set_f(y, i, sqrt((double)a)); return;
    case EV_R_LOGSUM: ev_set_f(y, i, log(d)); return;
    default: ev_set_u(y, i, a); return;
    }
}

static int ev_reduce(EvCtx *c, EvRk kind)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    int32_t t = x->dtype;
    bool is_float = ev_dtype_is_float(t);
    if (!is_float && !ev_dtype_is_int(t) &&
        !(t == IR_BOOL && (kind == EV_R_MAX || kind == EV_R_MIN)))
        return ev_fail(c, "element type %d is not supported", (int)t);
    bool input = c->ver >= (kind == EV_R_SUM ? 13 : 18);
    bool mask[EV_MAX_RANK];
    EvRed r = {0};
    if (ev_red_axes(c, x, input, mask))
        return -1;
    EvValue *y = ev_red_setup(c, x, mask, t, &r);
    if (!y)
        return -1;
    if (ev_red_block_f(c, x, &r, kind, y))
        return 0;
    for (size_t i = 0; i < r.nout; i++) {
        if (!is_float)
            ev_red_int(x, &r, i, kind, y);
        else if (t == IR_FLOAT)
            ((float *)y->data)[i] = (float)ev_red_f(x, &r, i, kind);
        else
            ev_set_f(y, i, ev_red_f(x, &r, i, kind));
    }
    return 0;
}

static int ev_reduce_sum(EvCtx *c) { return ev_reduce(c, EV_R_SUM); }
static int ev_reduce_mean(EvCtx *c) { return ev_reduce(c, EV_R_MEAN); }
static int ev_reduce_max(EvCtx *c) { return ev_reduce(c, EV_R_MAX); }
static int ev_reduce_min(EvCtx *c) { return ev_reduce(c, EV_R_MIN); }
static int ev_reduce_prod(EvCtx *c) { return ev_reduce(c, EV_R_PROD); }
static int ev_reduce_l1(EvCtx *c) { return ev_reduce(c, EV_R_L1); }
static int ev_reduce_l2(EvCtx *c) { return ev_reduce(c, EV_R_L2); }
static int ev_reduce_log_sum(EvCtx *c) { return ev_reduce(c, EV_R_LOGSUM); }
static int ev_reduce_lse(EvCtx *c) { return ev_reduce(c, EV_R_LSE); }
static int ev_reduce_sumsq(EvCtx *c) { return ev_reduce(c, EV_R_SUMSQ); }

/* ---- ArgMax / ArgMin --------------------------------------------------- */

/* Whether element a beats the current best b (strictly, or also on a tie
 * when `ties`). NaN beats numbers; a later NaN only wins on ties. */
static bool ev_arg_beats(const EvValue *x, size_t a, size_t b, bool max,
                         bool ties)
{
    int r;
    if (ev_dtype_is_float(x->dtype)) {
        double u = ev_get_f(x, a), v = ev_get_f(x, b);
        if (isnan(u) || isnan(v))
            r = isnan(u) && isnan(v) ? 0 : isnan(u) ? 1 : -1;
        else
            r = max ? (u > v) - (u < v) : (u < v) - (u > v);
    } else if (ev_dtype_is_unsigned(x->dtype)) {
        uint64_t u = ev_get_u(x, a), v = ev_get_u(x, b);
        r = max ? (u > v) - (u < v) : (u < v) - (u > v);
    } else {
        int64_t u = ev_get_i(x, a), v = ev_get_i(x, b);
        r = max ? (u > v) - (u < v) : (u < v) - (u > v);
    }
    return r > 0 || (ties && r == 0);
}

static int ev_arg(EvCtx *c, bool max)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (!ev_dtype_is_float(x->dtype) && !ev_dtype_is_int(x->dtype))
        return ev_fail(c, "element type %d is not supported", (int)x->dtype);
    size_t axis;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &axis))
        return -1;
    bool keep = ev_attr_i(c, "keepdims") != 0;
    bool last = c->ver >= 12 && ev_attr_i(c, "select_last_index") != 0;
    size_t n = (size_t)x->dims[axis];
    int64_t dims[EV_MAX_RANK];
    size_t rank = 0;
    for (size_t d = 0; d < x->rank; d++)
        if (d != axis || keep)
            dims[rank++] = d == axis ? 1 : x->dims[d];
    size_t outer = ev_dims_prod(x->dims, 0, axis);
    size_t inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    if (n == 0 && outer * inner > 0)
        return ev_fail(c, "cannot take the arg%s of an empty axis",
                       max ? "max" : "min");
    EvValue *y = ev_out_tensor(c, 0, IR_INT64, rank, dims);
    if (!y)
        return -1;
    int64_t *out = y->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t e = 0; e < inner; e++) {
            size_t row = o * n * inner + e, best = 0;
            for (size_t j = 1; j < n; j++)
                if (ev_arg_beats(x, row + j * inner, row + best * inner, max,
                                 last))
                    best = j;
            out[o * inner + e] = (int64_t)best;
        }
    return 0;
}

static int ev_argmax(EvCtx *c) { return ev_arg(c, true); }
static int ev_argmin(EvCtx *c) { return ev_arg(c, false); }

/* ---- scans ------------------------------------------------------------- */

/* CumSum and CumProd: x, a scalar axis input; exclusive and reverse. */
static int ev_cumulate(EvCtx *c, bool prod)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t na, axis;
    int64_t *av = ev_in_ints(c, 1, &na);
    if (!av)
        return -1;
    if (na != 1)
        return ev_fail(c, "axis must hold one value, not %zu", na);
    if (x->rank == 0)
        return ev_fail(c, "x must have rank 1 or more");
    if (ev_axis(c, "axis", av[0], x->rank, 0, &axis))
        return -1;
    if (!ev_dtype_is_float(x->dtype) && !ev_dtype_is_int(x->dtype))
        return ev_fail(c, "element type %d is not supported", (int)x->dtype);
    bool excl = ev_attr_i(c, "exclusive") != 0;
    bool rev = ev_attr_i(c, "reverse") != 0;
    EvValue *y = ev_out_like(c, 0, x);
    if (!y)
        return -1;
    size_t outer = ev_dims_prod(x->dims, 0, axis), n = (size_t)x->dims[axis];
    size_t inner = ev_dims_prod(x->dims, axis + 1, x->rank);
    bool fl = ev_dtype_is_float(x->dtype);
    for (size_t o = 0; o < outer; o++)
        for (size_t e = 0; e < inner; e++) {
            double fa = prod ? 1 : 0;
            uint64_t ia = prod ? 1 : 0;
            for (size_t s = 0; s < n; s++) {
                size_t j = rev ? n - 1 - s : s;
                size_t k = (o * n + j) * inner + e;
                if (excl)
                    fl ? ev_set_f(y, k, fa) : ev_set_u(y, k, ia);
                if (fl) {
                    double v = ev_get_f(x, k);
                    fa = prod ? fa * v : fa + v;
                } else {
                    uint64_t v = ev_get_u(x, k);
                    ia = prod ? ia * v : ia + v;
                }
                if (!excl)
                    fl ? ev_set_f(y, k, fa) : ev_set_u(y, k, ia);
            }
        }
    return 0;
}

static int ev_cumsum(EvCtx *c)
{
    return ev_cumulate(c, false);
}

static int ev_cumprod(EvCtx *c)
{
    return ev_cumulate(c, true);
}

/* ---- Det --------------------------------------------------------------- */

/* Determinant by LU decomposition with partial pivoting (a is scratch). */
static double ev_det1(double *a, size_t m)
{
    double det = 1;
    for (size_t k = 0; k < m; k++) {
        size_t p = k;
        for (size_t i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[p * m + k]))
                p = i;
        if (a[p * m + k] == 0)
            return 0;
        if (p != k) {
            for (size_t j = 0; j < m; j++) {
                double tmp = a[k * m + j];
                a[k * m + j] = a[p * m + j];
                a[p * m + j] = tmp;
            }
            det = -det;
        }
        double piv = a[k * m + k];
        det *= piv;
        for (size_t i = k + 1; i < m; i++) {
            double f = a[i * m + k] / piv;
            for (size_t j = k + 1; j < m; j++)
                a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

static int ev_det(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (!ev_dtype_is_float(x->dtype))
        return ev_fail(c, "element type %d is not supported", (int)x->dtype);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return ev_fail(c, "X must be square matrices [*, M, M]");
    size_t m = (size_t)x->dims[x->rank - 1], mm = m * m;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank - 2, x->dims);
    if (!y)
        return -1;
    double *a = ev_tmp(c, mm + 1, sizeof *a);
    if (!a)
        return -1;
    for (size_t i = 0; i < y->numel; i++) {
        for (size_t k = 0; k < mm; k++)
            a[k] = ev_get_f(x, i * mm + k);
        ev_set_f(y, i, ev_det1(a, m));
    }
    return 0;
}

/* ---- losses ------------------------------------------------------------ */

/* Checks the shapes of scores/input (N, C, d...), target (N, d...) and
 * weight (C), and sets n, cls and the spatial size sp. */
static int ev_loss_shapes(EvCtx *c, const EvValue *x, const EvValue *tg,
                          const EvValue *w, size_t *n, size_t *cls,
                          size_t *sp)
{
    if (!ev_dtype_is_float(x->dtype))
        return ev_fail(c, "element type %d is not supported", (int)x->dtype);
    if (!ev_dtype_is_int(tg->dtype))
        return ev_fail(c, "the target must hold integers");
    if (x->rank < 2 || tg->rank != x->rank - 1 || tg->dims[0] != x->dims[0])
        return ev_fail(c, "target must have shape (N, d1, ...) for input "
                       "(N, C, d1, ...)");
    for (size_t d = 1; d < tg->rank; d++)
        if (tg->dims[d] != x->dims[d + 1])
            return ev_fail(c, "target dim %zu is %lld, input's %lld", d,
                           (long long)tg->dims[d], (long long)x->dims[d + 1]);
    *n = (size_t)x->dims[0];
    *cls = (size_t)x->dims[1];
    *sp = ev_dims_prod(x->dims, 2, x->rank);
    if (w && (w->rank != 1 || (size_t)w->dims[0] != *cls))
        return ev_fail(c, "weight must have shape (C) = (%zu)", *cls);
    return 0;
}

/* The NLL of log-probabilities lp (N x C x sp, doubles) into output 0. */
static int ev_nll(EvCtx *c, const double *lp, int32_t dtype,
                  const EvValue *tg, const EvValue *w, size_t n, size_t cls,
                  size_t sp)
{
    const char *red = ev_attr_s(c, "reduction");
    bool none = strcmp(red, "none") == 0, sum = strcmp(red, "sum") == 0;
    if (!none && !sum && strcmp(red, "mean") != 0)
        return ev_fail(c, "reduction '%s' is not supported", red);
    bool has_ii = ev_attr(c, "ignore_index") != NULL;
    int64_t ii = ev_attr_i_or(c, "ignore_index", 0);
    EvValue *y = none ? ev_out_tensor(c, 0, dtype, tg->rank, tg->dims)
                      : ev_out_tensor(c, 0, dtype, 0, NULL);
    if (!y)
        return -1;
    double total = 0, wsum = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < sp; d++) {
            size_t k = i * sp + d;
            int64_t t = ev_get_i(tg, k);
            double l = 0, wt = 0;
            if (!has_ii || t != ii) {
                if (t < 0 || (uint64_t)t >= cls)
                    return ev_fail(c, "target %lld is out of range [0, %zu)",
                                   (long long)t, cls);
                wt = w ? ev_get_f(w, (size_t)t) : 1;
                l = -lp[(i * cls + (size_t)t) * sp + d] * wt;
            }
            if (none)
                ev_set_f(y, k, l);
            total += l, wsum += wt;
        }
    if (!none)
        ev_set_f(y, 0, sum ? total : total / wsum);
    return 0;
}

static int ev_nll_loss(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *tg = ev_in_tensor(c, 1);
    EvValue *w = ev_in(c, 2) ? ev_in_tensor(c, 2) : NULL;
    size_t n, cls, sp;
    if (!x || !tg || (ev_in(c, 2) && !w) ||
        ev_loss_shapes(c, x, tg, w, &n, &cls, &sp))
        return -1;
    double *lp = ev_tmp(c, x->numel + 1, sizeof *lp);
    if (!lp)
        return -1;
    for (size_t k = 0; k < x->numel; k++)
        lp[k] = ev_get_f(x, k);
    return ev_nll(c, lp, x->dtype, tg, w, n, cls, sp);
}

static int ev_sce_loss(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *tg = ev_in_tensor(c, 1);
    EvValue *w = ev_in(c, 2) ? ev_in_tensor(c, 2) : NULL;
    size_t n, cls, sp;
    if (!x || !tg || (ev_in(c, 2) && !w) ||
        ev_loss_shapes(c, x, tg, w, &n, &cls, &sp))
        return -1;
    double *lp = ev_tmp(c, x->numel + 1, sizeof *lp);
    if (!lp)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < sp; d++) {
            size_t b = i * cls * sp + d;
            double m = -INFINITY, s = 0;
            for (size_t k = 0; k < cls; k++)
                if (ev_get_f(x, b + k * sp) > m)
                    m = ev_get_f(x, b + k * sp);
            for (size_t k = 0; k < cls; k++)
                s += exp(ev_get_f(x, b + k * sp) - m);
            for (size_t k = 0; k < cls; k++)
                lp[b + k * sp] = ev_get_f(x, b + k * sp) - m - log(s);
        }
    if (ev_nll(c, lp, x->dtype, tg, w, n, cls, sp))
        return -1;
    if (ev_has_out(c, 1)) {
        EvValue *y = ev_out_tensor(c, 1, x->dtype, x->rank, x->dims);
        if (!y)
            return -1;
        for (size_t k = 0; k < x->numel; k++)
            ev_set_f(y, k, lp[k]);
    }
    return 0;
}

const EvOp ev_ops_reduce[] = {
    {"", "ReduceSum", ev_reduce_sum},
    {"", "ReduceMean", ev_reduce_mean},
    {"", "ReduceMax", ev_reduce_max},
    {"", "ReduceMin", ev_reduce_min},
    {"", "ReduceProd", ev_reduce_prod},
    {"", "ReduceL1", ev_reduce_l1},
    {"", "ReduceL2", ev_reduce_l2},
    {"", "ReduceLogSum", ev_reduce_log_sum},
    {"", "ReduceLogSumExp", ev_reduce_lse},
    {"", "ReduceSumSquare", ev_reduce_sumsq},
    {"", "ArgMax", ev_argmax},
    {"", "ArgMin", ev_argmin},
    {"", "CumSum", ev_cumsum},
    {"", "CumProd", ev_cumprod},
    {"", "Det", ev_det},
    {"", "NegativeLogLikelihoodLoss", ev_nll_loss},
    {"", "SoftmaxCrossEntropyLoss", ev_sce_loss},
    {NULL, NULL, NULL}
};
