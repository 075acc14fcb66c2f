/* Normalization kernels of the reference evaluator: BatchNormalization,
 * InstanceNormalization, LayerNormalization, GroupNormalization,
 * RMSNormalization, LRN, LpNormalization and MeanVarianceNormalization,
 * every ai.onnx version.
 *
 * Subtle points:
 * - BatchNormalization: before 9 `spatial`=0 means one scale/bias/mean/var
 *   per activation (shape C x D1 x ...). Training statistics are computed
 *   when the version asks for them: is_test=0 with the statistics outputs
 *   named (1, 6), the statistics outputs named (7, 9), training_mode=1
 *   (14, 15). The running mean/var are input*momentum +
 *   batch*(1-momentum), with the batch variance taken over N (biased).
 *   Before 14, saved_var is the batch variance (the spec does not say
 *   more).
 * - GroupNormalization-18 has one scale/bias per group, 21 one per channel.
 * - The mean/variance-style statistics are accumulated in double, with a
 *   two-pass variance (the spec's E[x^2]-E[x]^2 can go negative in float). */
#include <math.h>
#include <string.h>

#include "eval/eval.h"

/* ---- shared helpers ------------------------------------------------------ */

/* Elements [off, off+n) of t into buf as doubles. */
static void ev_nm_get(const EvValue *t, size_t off, size_t n, double *buf)
{
    if (t->dtype == IR_FLOAT) {
        const float *p = (const float *)t->data + off;
        for (size_t k = 0; k < n; k++)
            buf[k] = p[k];
    } else if (t->dtype == IR_DOUBLE) {
        if (n)
            memcpy(buf, (const double *)t->data + off, n * sizeof *buf);
    } else {
        for (size_t k = 0; k < n; k++)
            buf[k] = ev_get_f(t, off + k);
    }
}

/* Stores buf into elements [off, off+n) of t. */
static void ev_nm_set(EvValue *t, size_t off, size_t n, const double *buf)
{
    if (t->dtype == IR_FLOAT) {
        float *p = (float *)t->data + off;
        for (size_t k = 0; k < n; k++)
            p[k] = (float)buf[k];
    } else if (t->dtype == IR_DOUBLE) {
        if (n)
            memcpy((double *)t->data + off, buf, n * sizeof *buf);
    } else {
        for (size_t k = 0; k < n; k++)
            ev_set_f(t, off + k, buf[k]);
    }
}

/* All elements of t as doubles (scratch memory). */
static double *ev_nm_load(EvCtx *c, const EvValue *t)
{
    double *v = ev_tmp(c, t->numel + 1, sizeof *v);
    if (v)
        ev_nm_get(t, 0, t->numel, v);
    return v;
}

/* Mean and biased variance of v[0..n) (two passes, in double). */
static void ev_nm_moments(const double *v, size_t n, double *mean,
                          double *var)
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += v[k];
    double m = n ? s / (double)n : 0;
    double q = 0;
    for (size_t k = 0; k < n; k++)
        q += (v[k] - m) * (v[k] - m);
    *mean = m;
    *var = n ? q / (double)n : 0;
}

/* A parameter (scale or bias) of a normalization over X's trailing dims
 * [ax, rank), expanded to their n elements. It broadcasts to those dims
 * (right-aligned, 1s stretch; extra leading dims must be 1). */
static double *ev_nm_param(EvCtx *c, const EvValue *p, const EvValue *x,
                           size_t ax, size_t n, const char *what)
{
    size_t tr = x->rank - ax;
    size_t stride[EV_MAX_RANK];
    size_t s = 1;
    for (size_t k = 1; k <= p->rank; k++) {
        int64_t pd = p->dims[p->rank - k];
        bool inside = k <= tr;
        int64_t xd = inside ? x->dims[x->rank - k] : 1;
        if (pd != xd && pd != 1) {
            ev_fail(c, "%s does not broadcast to the normalized shape", what);
            return NULL;
        }
        if (inside)
            stride[tr - k] = pd == 1 ? 0 : s;
        s *= (size_t)pd;
    }
    for (size_t k = p->rank; k < tr; k++)
        stride[tr - 1 - k] = 0;
    double *all = ev_nm_load(c, p);
    double *out = ev_tmp(c, n + 1, sizeof *out);
    if (!all || !out)
        return NULL;
    size_t idx[EV_MAX_RANK] = {0}, off = 0;
    for (size_t k = 0; k < n; k++) {
        out[k] = all[off];
        for (size_t d = tr; d-- > 0;) {
            idx[d]++;
            off += stride[d];
            if (idx[d] < (size_t)x->dims[ax + d])
                break;
            off -= stride[d] * idx[d];
            idx[d] = 0;
        }
    }
    return out;
}

/* A per-channel (or per-group) parameter vector of exactly n elements. */
static double *ev_nm_vec(EvCtx *c, const EvValue *p, size_t n,
                         const char *what)
{
    if (p->numel != n) {
        ev_fail(c, "%s has %zu elements, expected %zu", what, p->numel, n);
        return NULL;
    }
    return ev_nm_load(c, p);
}

/* The statistics type of LayerNormalization/GroupNormalization. */
static int ev_nm_stash(EvCtx *c, int32_t *out)
{
    int64_t st = ev_attr_i_or(c, "stash_type", IR_FLOAT);
    if (st < 0 || st > INT32_MAX || !ev_dtype_is_real((int32_t)st))
        return ev_fail(c, "stash_type %lld is not a floating point type",
                       (long long)st);
    *out = (int32_t)st;
    return 0;
}

/* ---- LayerNormalization, RMSNormalization -------------------------------- */

static int ev_layernorm(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0), *sc = ev_in_real(c, 1);
    bool bad = false;
    EvValue *b = ev_in_real_opt(c, 2, &bad);
    if (!x || !sc || bad)
        return -1;
    if (sc->dtype != x->dtype || (b && b->dtype != x->dtype))
        return ev_fail(c, "Scale and B must have X's element type");
    int32_t st = IR_FLOAT;
    size_t ax;
    if (ev_nm_stash(c, &st))
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "X must have rank >= 1");
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &ax))
        return -1;
    double eps = ev_attr_f(c, "epsilon");
    size_t rows = ev_dims_prod(x->dims, 0, ax);
    size_t n = ev_dims_prod(x->dims, ax, x->rank);
    double *w = ev_nm_param(c, sc, x, ax, n, "Scale");
    double *bias = b ? ev_nm_param(c, b, x, ax, n, "B") : NULL;
    if (!w || (b && !bias))
        return -1;
    int64_t sdims[EV_MAX_RANK];
    for (size_t d = 0; d < x->rank; d++)
        sdims[d] = d < ax ? x->dims[d] : 1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    EvValue *mo = NULL, *io = NULL;
    if (!y)
        return -1;
    if (ev_has_out(c, 1) && !(mo = ev_out_tensor(c, 1, st, x->rank, sdims)))
        return -1;
    if (ev_has_out(c, 2) && !(io = ev_out_tensor(c, 2, st, x->rank, sdims)))
        return -1;
    double *row = ev_tmp(c, n + 1, sizeof *row);
    if (!row)
        return -1;
    /* With no elements, only the statistics outputs bound the rows. */
    if (x->numel == 0 && !mo && !io)
        rows = 0;
    for (size_t r = 0; r < rows; r++) {
        double mean, var;
        ev_nm_get(x, r * n, n, row);
        ev_nm_moments(row, n, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        for (size_t k = 0; k < n; k++)
            row[k] = (row[k] - mean) * inv * w[k] + (bias ? bias[k] : 0.0);
        ev_nm_set(y, r * n, n, row);
        if (mo)
            ev_set_f(mo, r, mean);
        if (io)
            ev_set_f(io, r, inv);
    }
    return 0;
}

static int ev_rmsnorm(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0), *sc = ev_in_real(c, 1);
    int32_t st;
    size_t ax;
    if (!x || !sc || ev_nm_stash(c, &st))
        return -1;
    if (x->rank == 0)
        return ev_fail(c, "X must have rank >= 1");
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &ax))
        return -1;
    double eps = ev_attr_f(c, "epsilon");
    size_t rows = ev_dims_prod(x->dims, 0, ax);
    size_t n = ev_dims_prod(x->dims, ax, x->rank);
    double *w = ev_nm_param(c, sc, x, ax, n, "scale");
    /* Y takes the scale's element type (V). */
    EvValue *y = w ? ev_out_tensor(c, 0, sc->dtype, x->rank, x->dims) : NULL;
    double *row = ev_tmp(c, n + 1, sizeof *row);
    if (!y || !row)
        return -1;
    if (x->numel == 0)
        return 0;
    for (size_t r = 0; r < rows; r++) {
        double q = 0;
        ev_nm_get(x, r * n, n, row);
        for (size_t k = 0; k < n; k++)
            q += row[k] * row[k];
        double inv = 1.0 / sqrt((n ? q / (double)n : 0) + eps);
        for (size_t k = 0; k < n; k++)
            row[k] = row[k] * inv * w[k];
        ev_nm_set(y, r * n, n, row);
    }
    return 0;
}

/* ---- InstanceNormalization, GroupNormalization, MVN ---------------------- */

static int ev_instancenorm(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0), *sc = ev_in_real(c, 1), *b = ev_in_real(c, 2);
    if (!x || !sc || !b)
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "input must have rank >= 2 (N x C x ...)");
    double eps = ev_attr_f(c, "epsilon");
    size_t ch = (size_t)x->dims[1], n = ev_dims_prod(x->dims, 2, x->rank);
    double *w = ev_nm_vec(c, sc, ch, "scale");
    double *bias = w ? ev_nm_vec(c, b, ch, "B") : NULL;
    EvValue *y = bias ? ev_out_tensor(c, 0, x->dtype, x->rank, x->dims) : NULL;
    double *row = ev_tmp(c, n + 1, sizeof *row);
    if (!y || !row)
        return -1;
    if (x->numel == 0)
        return 0;
    size_t blocks = ev_dims_prod(x->dims, 0, 2);
    for (size_t i = 0; i < blocks; i++) {
        double mean, var;
        size_t k = i % ch;
        ev_nm_get(x, i * n, n, row);
        ev_nm_moments(row, n, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        for (size_t j = 0; j < n; j++)
            row[j] = (row[j] - mean) * inv * w[k] + bias[k];
        ev_nm_set(y, i * n, n, row);
    }
    return 0;
}

static int ev_groupnorm(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0), *sc = ev_in_real(c, 1), *b = ev_in_real(c, 2);
    int32_t st;
    if (!x || !sc || !b || ev_nm_stash(c, &st))
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "X must have rank >= 2 (N x C x ...)");
    if (!ev_attr(c, "num_groups"))
        return ev_fail(c, "attribute num_groups is required");
    int64_t g = ev_attr_i_or(c, "num_groups", 1);
    int64_t ch = x->dims[1];
    if (g <= 0 || ch % g != 0)
        return ev_fail(c, "num_groups %lld must be positive and divide the "
                       "%lld channels", (long long)g, (long long)ch);
    double eps = ev_attr_f(c, "epsilon");
    bool per_group = c->ver < 21;
    size_t np = per_group ? (size_t)g : (size_t)ch;
    double *w = ev_nm_vec(c, sc, np, "scale");
    double *bias = w ? ev_nm_vec(c, b, np, "bias") : NULL;
    EvValue *y = bias ? ev_out_tensor(c, 0, x->dtype, x->rank, x->dims) : NULL;
    if (!y)
        return -1;
    if (x->numel == 0)
        return 0;
    size_t spatial = ev_dims_prod(x->dims, 2, x->rank);
    size_t cpg = (size_t)(ch / g), n = cpg * spatial;
    double *row = ev_tmp(c, n + 1, sizeof *row);
    if (!row)
        return -1;
    size_t groups = (size_t)x->dims[0] * (size_t)g;
    for (size_t i = 0; i < groups; i++) {
        double mean, var;
        size_t gi = i % (size_t)g;
        ev_nm_get(x, i * n, n, row);
        ev_nm_moments(row, n, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        for (size_t j = 0; j < n; j++) {
            size_t p = per_group ? gi : gi * cpg + j / (spatial ? spatial : 1);
            row[j] = (row[j] - mean) * inv * w[p] + bias[p];
        }
        ev_nm_set(y, i * n, n, row);
    }
    return 0;
}

/* Y = (X - mean) / (std + 1e-9) over `axes`, as the spec's function. */
static int ev_mvn(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0);
    if (!x)
        return -1;
    const int64_t *axes;
    static const int64_t dflt[] = {0, 2, 3};
    long na = ev_attr_ints(c, "axes", &axes);
    if (na < 0) {
        axes = dflt;
        na = 3;
    }
    bool red[EV_MAX_RANK] = {false};
    for (long i = 0; i < na; i++) {
        size_t a;
        if (ev_axis(c, "axes entry", axes[i], x->rank, 0, &a))
            return -1;
        red[a] = true;
    }
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    double *v = ev_nm_load(c, x);
    if (!y || !v || x->numel == 0)
        return y && v ? 0 : -1;
    /* Group index of each element: its coordinates on the kept axes. */
    size_t ngroups = 1;
    for (size_t d = 0; d < x->rank; d++)
        if (!red[d])
            ngroups *= (size_t)x->dims[d];
    size_t per = x->numel / ngroups;
    size_t *gidx = ev_tmp(c, x->numel, sizeof *gidx);
    double *sum = ev_tmp(c, ngroups, sizeof *sum);
    double *sq = ev_tmp(c, ngroups, sizeof *sq);
    if (!gidx || !sum || !sq)
        return -1;
    size_t idx[EV_MAX_RANK] = {0};
    for (size_t k = 0; k < x->numel; k++) {
        size_t gi = 0;
        for (size_t d = 0; d < x->rank; d++)
            if (!red[d])
                gi = gi * (size_t)x->dims[d] + idx[d];
        gidx[k] = gi;
        sum[gi] += v[k];
        for (size_t d = x->rank; d-- > 0;) {
            if (++idx[d] < (size_t)x->dims[d])
                break;
            idx[d] = 0;
        }
    }
    for (size_t gi = 0; gi < ngroups; gi++)
        sum[gi] /= (double)per;
    for (size_t k = 0; k < x->numel; k++) {
        double dv = v[k] - sum[gidx[k]];
        sq[gidx[k]] += dv * dv;
    }
    for (size_t k = 0; k < x->numel; k++) {
        double sd = sqrt(sq[gidx[k]] / (double)per);
        v[k] = (v[k] - sum[gidx[k]]) / (sd + 1e-9);
    }
    ev_nm_set(y, 0, x->numel, v);
    return 0;
}

/* ---- LRN, LpNormalization ------------------------------------------------ */

static int ev_lrn(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0);
    if (!x)
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "X must have rank >= 2 (N x C x ...)");
    if (!ev_attr(c, "size"))
        return ev_fail(c, "attribute size is required");
    int64_t size = ev_attr_i_or(c, "size", 1);
    if (size <= 0)
        return ev_fail(c, "size %lld must be positive", (long long)size);
    double alpha = ev_attr_f(c, "alpha");
    double beta = ev_attr_f(c, "beta");
    double bias = ev_attr_f(c, "bias");
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    double *v = ev_nm_load(c, x);
    double *out = ev_tmp(c, x->numel + 1, sizeof *out);
    if (!y || !v || !out)
        return -1;
    if (x->numel == 0)
        return 0;
    int64_t ch = x->dims[1];
    size_t inner = ev_dims_prod(x->dims, 2, x->rank);
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    for (size_t n = 0; n < (size_t)x->dims[0]; n++) {
        const double *xn = v + n * (size_t)ch * inner;
        double *yn = out + n * (size_t)ch * inner;
        for (int64_t k = 0; k < ch; k++) {
            int64_t a = k - lo < 0 ? 0 : k - lo;
            int64_t b = k > ch - 1 - hi ? ch - 1 : k + hi;
            for (size_t i = 0; i < inner; i++) {
                double s = 0;
                for (int64_t j = a; j <= b; j++) {
                    double e = xn[(size_t)j * inner + i];
                    s += e * e;
                }
                size_t at = (size_t)k * inner + i;
                yn[at] = xn[at] / pow(bias + alpha / (double)size * s, beta);
            }
        }
    }
    ev_nm_set(y, 0, x->numel, out);
    return 0;
}

static int ev_lpnorm(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0);
    if (!x)
        return -1;
    int64_t p = ev_attr_i(c, "p");
    if (p != 1 && p != 2)
        return ev_fail(c, "p must be 1 or 2, not %lld", (long long)p);
    if (x->rank == 0)
        return ev_fail(c, "input must have rank >= 1");
    size_t ax;
    if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &ax))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    double *v = ev_nm_load(c, x);
    if (!y || !v)
        return -1;
    if (x->numel == 0)
        return 0;
    size_t outer = ev_dims_prod(x->dims, 0, ax), n = (size_t)x->dims[ax];
    size_t inner = ev_dims_prod(x->dims, ax + 1, x->rank);
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            double *base = v + o * n * inner + i, s = 0;
            for (size_t j = 0; j < n; j++)
                s += p == 1 ? fabs(base[j * inner])
                            : base[j * inner] * base[j * inner];
            if (p == 2)
                s = sqrt(s);
            /* A zero vector stays zero rather than 0/0 = NaN: the node
             * test test_l2normalization_axis_0 expects exactly that. */
            for (size_t j = 0; j < n; j++)
                base[j * inner] = s == 0 ? 0 : base[j * inner] / s;
        }
    }
    ev_nm_set(y, 0, x->numel, v);
    return 0;
}

/* ---- BatchNormalization -------------------------------------------------- */

/* Whether this node computes batch statistics (see the file comment). */
static bool ev_bn_training(const EvCtx *c)
{
    if (c->ver >= 14)
        return ev_attr_i(c, "training_mode") != 0;
    bool stats = ev_has_out(c, 1) || ev_has_out(c, 2) || ev_has_out(c, 3) ||
                 ev_has_out(c, 4);
    if (c->ver < 7)
        return stats && ev_attr_i(c, "is_test") == 0;
    return stats;
}

/* Batch mean and biased variance of each of the np parameters; the
 * elements of parameter p are x[(o*np + p)*inner + i]. */
static void ev_bn_stats(const double *x, size_t outer, size_t np,
                        size_t inner, double *mean, double *var)
{
    size_t cnt = outer * inner;
    for (size_t p = 0; p < np; p++) {
        double s = 0, q = 0;
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++)
                s += x[(o * np + p) * inner + i];
        double m = cnt ? s / (double)cnt : 0;
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++) {
                double d = x[(o * np + p) * inner + i] - m;
                q += d * d;
            }
        mean[p] = m;
        var[p] = cnt ? q / (double)cnt : 0;
    }
}

/* Statistics output i, shaped like input `like`, holding v. */
static int ev_bn_out(EvCtx *c, size_t i, const EvValue *like,
                     const double *v)
{
    if (!ev_has_out(c, i))
        return 0;
    EvValue *t = ev_out_tensor(c, i, like->dtype, like->rank, like->dims);
    if (!t)
        return -1;
    ev_nm_set(t, 0, t->numel, v);
    return 0;
}

/* The batch statistics of a training run: writes the statistics outputs
 * and points mean and var at the batch mean and variance. */
static int ev_bn_train(EvCtx *c, EvValue *const *t, const double *v,
                       size_t outer, size_t np, size_t inner,
                       double **mean, double **var)
{
    double mom = ev_attr_f(c, "momentum");
    double *bm = ev_tmp(c, np + 1, sizeof *bm);
    double *bv = ev_tmp(c, np + 1, sizeof *bv);
    double *rm = ev_tmp(c, np + 1, sizeof *rm);
    double *rv = ev_tmp(c, np + 1, sizeof *rv);
    if (!bm || !bv || !rm || !rv)
        return -1;
    if (t[0]->numel)
        ev_bn_stats(v, outer, np, inner, bm, bv);
    for (size_t k = 0; k < np; k++) {
        rm[k] = (*mean)[k] * mom + bm[k] * (1 - mom);
        rv[k] = (*var)[k] * mom + bv[k] * (1 - mom);
    }
    if (ev_bn_out(c, 1, t[3], rm) || ev_bn_out(c, 2, t[4], rv) ||
        ev_bn_out(c, 3, t[3], bm) || ev_bn_out(c, 4, t[4], bv))
        return -1;
    *mean = bm;
    *var = bv;
    return 0;
}


/* Inference BatchNormalization of a float tensor, element by element in
 * double as the general path computes it, without a double copy of the
 * whole activation (which, with the zeroing of the output, was a tenth
 * of light_resnet50's run). */
typedef struct EvBnJob {
    double *const *p;
    size_t np, inner;
    double eps;
    const float *x;
    float *y;
} EvBnJob;

/* Planes [lo, hi), plane q being channel q % np of image q / np. */
static void ev_bn_part(void *ctx, size_t lo, size_t hi)
{
    const EvBnJob *j = ctx;
    for (size_t q = lo; q < hi; q++) {
        size_t k = q % j->np, at = q * j->inner;
        double inv = 1.0 / sqrt(j->p[4][k] + j->eps), mean = j->p[3][k];
        double sc = j->p[1][k], b = j->p[2][k];
        for (size_t i = 0; i < j->inner; i++)
            j->y[at + i] = (float)(((double)j->x[at + i] - mean) * inv * sc + b);
    }
}

static int ev_bn_float(EvCtx *c, EvValue *const *t, double *const *p, size_t outer,
                       size_t np, size_t inner, double eps)
{
    const EvValue *x = t[0];
    EvValue *y = ev_out_tensor_raw(c, 0, x->dtype, x->rank, x->dims);   /* all written */
    if (!y)
        return -1;
    for (size_t i = 1; i < 5; i++)   /* the statistics outputs pass through */
        if (ev_has_out(c, i))
            ev_out_set(c, i, ev_ref(t[i % 2 ? 3 : 4]));
    EvBnJob j = {p, np, inner, eps, x->data, y->data};
    size_t grain = inner ? EV_PAR_GRAIN / inner : 1;
    if (x->numel)
        ev_par_range(c, outer * np, grain ? grain : 1, ev_bn_part, &j);
    return 0;
}
/* X, scale, B, mean, var: floating point, typed as the version says. */
static int ev_bn_inputs(EvCtx *c, EvValue **t)
{
    for (size_t i = 0; i < 5; i++)
        if (!(t[i] = ev_in_real(c, i)))
            return -1;
    if (c->ver < 15)
        for (size_t i = 1; i < 5; i++)
            if (t[i]->dtype != t[0]->dtype && (c->ver < 14 || i < 3))
                return ev_fail(c, "input %zu must have X's element type", i);
    if (t[3]->dtype != t[4]->dtype || t[1]->dtype != t[2]->dtype)
        return ev_fail(c, "scale and B, mean and var must pair in type");
    if (t[0]->rank < 1)
        return ev_fail(c, "X must have rank >= 1");
    return 0;
}

static int ev_batchnorm(EvCtx *c)
{
    EvValue *t[5], *x;
    if (ev_bn_inputs(c, t))
        return -1;
    x = t[0];
    double eps = ev_attr_f(c, "epsilon");
    bool spatial = c->ver >= 9 || ev_attr_i_or(c, "spatial", 1) != 0;
    size_t ch = x->rank > 1 ? (size_t)x->dims[1] : 1;
    size_t inner = ev_dims_prod(x->dims, 2 < x->rank ? 2 : x->rank, x->rank);
    size_t outer = (size_t)x->dims[0];
    /* Per-activation parameters: one per (channel, position). */
    size_t np = spatial ? ch : ch * inner;
    if (!spatial)
        inner = 1;
    double *p[5];
    static const char *const names[5] = {"", "scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; i++)
        if (!(p[i] = ev_nm_vec(c, t[i], np, names[i])))
            return -1;
    bool train = ev_bn_training(c);
    if (!train && x->dtype == IR_FLOAT)
        return ev_bn_float(c, t, p, outer, np, inner, eps);
    double *v = ev_nm_load(c, x);
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!v || !y)
        return -1;
    double *mean = p[3], *var = p[4];
    if (train) {
        if (ev_bn_train(c, t, v, outer, np, inner, &mean, &var))
            return -1;
    } else {
        /* Inference: the statistics outputs, when named, pass through. */
        for (size_t i = 1; i < 5; i++)
            if (ev_has_out(c, i))
                ev_out_set(c, i, ev_ref(t[i % 2 ? 3 : 4]));
    }
    for (size_t o = 0; x->numel && o < outer; o++)
        for (size_t k = 0; k < np; k++) {
            double inv = 1.0 / sqrt(var[k] + eps);
            double *r = v + (o * np + k) * inner;
            for (size_t i = 0; i < inner; i++)
                r[i] = (r[i] - mean[k]) * inv * p[1][k] + p[2][k];
        }
    ev_nm_set(y, 0, x->numel, v);
    return 0;
}

const EvOp ev_ops_norm[] = {
    {"", "BatchNormalization", ev_batchnorm},
    {"", "InstanceNormalization", ev_instancenorm},
    {"", "LayerNormalization", ev_layernorm},
    {"", "GroupNormalization", ev_groupnorm},
    {"", "RMSNormalization", ev_rmsnorm},
    {"", "LRN", ev_lrn},
    {"", "LpNormalization", ev_lpnorm},
    {"", "MeanVarianceNormalization", ev_mvn},
    {NULL, NULL, NULL}
};
