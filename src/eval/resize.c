/* Resize and Upsample kernels (ai.onnx).
 *
 * Upsample-1 (height_scale/width_scale attributes, 4-D input), Upsample-7
 * (scales attribute), Upsample-9/10 (scales input); Resize-10 (scales),
 * Resize-11/13 (roi, scales or sizes, coordinate_transformation_mode,
 * nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value),
 * Resize-18 (antialias, axes, keep_aspect_ratio_policy) and Resize-19
 * (half_pixel_symmetric).
 *
 * Subtle points:
 * - Linear and cubic are separable: each resized axis is interpolated in
 *   turn over a double buffer (shrinking axes first, to keep the buffers
 *   small). The taps of one output coordinate x_original are the n source
 *   indices nearest to it, preferring the smaller ones, read with edge
 *   clamping; so the coefficient of ratio 0 always sits on the right tap.
 * - Output lengths from scales and nearest coordinates are computed in
 *   float32, linear and cubic coordinates in double (src/schema/resize.h says
 *   why; the formulas themselves live there).
 * - The "output length" in the coordinate formulas is scale * input_length
 *   as a real number when scales are given (align_corners with scale 0.6 on
 *   4 pixels divides by 1.4), and the integer size when sizes are given.
 * - Upsample and Resize-10 predate nearest_mode: they use asymmetric
 *   coordinates and floor the coordinate when upsampling, ceil it when
 *   downsampling (what runtimes do for those versions).
 * - tf_crop_and_resize gives extrapolation_value to coordinates outside
 *   the input, in every mode; pytorch_half_pixel maps a length-1 output to
 *   coordinate 0 as the spec writes.
 * - Integer outputs of linear/cubic truncate toward zero (a cast). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

enum { EV_RS_NEAREST, EV_RS_LINEAR, EV_RS_CUBIC };

typedef struct EvResize {
    int mode, ctm, nearest;
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
    size_t rank;
    int64_t in[EV_MAX_RANK], out[EV_MAX_RANK];
    double scale[EV_MAX_RANK];   /* used by the coordinate formulas */
    double outf[EV_MAX_RANK];    /* output length as a real number */
    double roi_lo[EV_MAX_RANK], roi_hi[EV_MAX_RANK];
} EvResize;

/* ---- coordinates ----------------------------------------------------- */

/* A double index kept far from int64 limits (NaN -> 0). */
static int64_t ev_rs_i64(double v)
{
    if (!(v == v))
        return 0;
    if (v > 9.0e15)
        return (int64_t)9.0e15;
    if (v < -9.0e15)
        return -(int64_t)9.0e15;
    return (int64_t)v;
}

static int64_t ev_rs_clamp(int64_t i, int64_t len)
{
    return i < 0 ? 0 : i >= len ? len - 1 : i;
}

/* Axis ax of r as the shared formulas (src/schema/resize.h) take it. */
static RszAxis ev_rs_axis_of(const EvResize *r, size_t ax)
{
    return (RszAxis){r->in[ax], r->out[ax], r->scale[ax], r->outf[ax],
                     r->roi_lo[ax], r->roi_hi[ax]};
}

/* x_original of output index x along axis ax; *outside when the crop
 * falls outside the input (extrapolation). */
static double ev_rs_coord(const EvResize *r, size_t ax, int64_t x, bool *outside)
{
    RszAxis a = ev_rs_axis_of(r, ax);
    return rsz_coord(r->ctm, &a, x, outside);
}

/* The source index of output x along ax in nearest mode, -1 outside. */
static int64_t ev_rs_pick(const EvResize *r, size_t ax, int64_t x)
{
    RszAxis a = ev_rs_axis_of(r, ax);
    return rsz_nearest(r->ctm, r->nearest, &a, x);
}

/* Whether an axis maps every output index onto itself. */
static bool ev_rs_identity(const EvResize *r, size_t ax)
{
    return r->out[ax] == r->in[ax] && r->scale[ax] == 1.0 &&
           r->outf[ax] == (double)r->out[ax] && r->ctm != RSZ_TF_NN &&
           r->ctm != RSZ_CROP;
}

/* ---- interpolation weights ------------------------------------------- */

static double ev_rs_cubic(double a, double x)
{
    x = fabs(x);
    if (x <= 1)
        return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
}

/* Number of taps and the offset of the first one from the left neighbour:
 * antialiasing stretches the filter by 1/scale when downsampling. */
static bool ev_rs_taps(const EvResize *r, size_t ax, size_t *n, int64_t *start)
{
    double reach = r->mode == EV_RS_CUBIC ? 2.0 : 1.0, s, st;

    if (!r->antialias) {
        *n = r->mode == EV_RS_CUBIC ? 4 : 2;
        *start = r->mode == EV_RS_CUBIC ? -1 : 0;
        return true;
    }
    s = r->scale[ax] < 1 ? r->scale[ax] : 1.0;
    st = floor(-reach / s) + 1;
    if (!(st > -4.0 * (double)r->in[ax] - 8))
        return false;
    *start = (int64_t)st;
    *n = (size_t)(2 - 2 * *start);
    return true;
}

/* Weights of the n taps for coordinate xo; *first = source index of the
 * first tap (clamped on use). */
static void ev_rs_weights(const EvResize *r, size_t ax, double xo, size_t n,
                          int64_t start, double *w, int64_t *first)
{
    double base = ceil(xo) - 1, ratio = xo - base, a = r->cubic_a, sum = 0;
    double s = r->scale[ax] < 1 ? r->scale[ax] : 1.0;

    *first = ev_rs_i64(base) + start;
    for (size_t k = 0; k < n; k++) {
        double d = (double)(start + (int64_t)k) - ratio;   /* tap - xo */
        if (r->antialias && r->mode == EV_RS_CUBIC)
            w[k] = ev_rs_cubic(a, d * s);
        else if (r->antialias) {
            double v = 1 - fabs(d * s);
            w[k] = v < 0 ? 0 : v > 1 ? 1 : v;
        } else if (r->mode == EV_RS_CUBIC)
            w[k] = ev_rs_cubic(a, d);
        else
            w[k] = k == 0 ? 1 - ratio : ratio;
        sum += w[k];
    }
    if (r->antialias && sum != 0)
        for (size_t k = 0; k < n; k++)
            w[k] /= sum;
    if (r->exclude_outside) {
        sum = 0;
        for (size_t k = 0; k < n; k++) {
            int64_t i = *first + (int64_t)k;
            if (i < 0 || i >= r->in[ax])
                w[k] = 0;
            sum += w[k];
        }
        if (sum != 0)
            for (size_t k = 0; k < n; k++)
                w[k] /= sum;
    }
}

/* ---- element access -------------------------------------------------- */

static size_t ev_rs_ncomp(int32_t dtype)
{
    return dtype == IR_COMPLEX64 || dtype == IR_COMPLEX128 ? 2 : 1;
}

static void ev_rs_load(const EvValue *t, size_t k, double *v)
{
    if (t->dtype == IR_COMPLEX64) {
        const float *p = t->data;
        v[0] = p[2 * k];
        v[1] = p[2 * k + 1];
    } else if (t->dtype == IR_COMPLEX128) {
        const double *p = t->data;
        v[0] = p[2 * k];
        v[1] = p[2 * k + 1];
    } else {
        v[0] = ev_get_f(t, k);
    }
}

static void ev_rs_store(EvValue *t, size_t k, const double *v)
{
    if (t->dtype == IR_COMPLEX64) {
        float *p = t->data;
        p[2 * k] = (float)v[0];
        p[2 * k + 1] = (float)v[1];
    } else if (t->dtype == IR_COMPLEX128) {
        double *p = t->data;
        p[2 * k] = v[0];
        p[2 * k + 1] = v[1];
    } else {
        ev_set_f(t, k, v[0]);
    }
}

/* Element k of y := element off of x (strings copied). */
static void ev_rs_copy(EvValue *y, size_t k, const EvValue *x, size_t off)
{
    if (x->dtype == IR_STRING) {
        const EvStr *s = (const EvStr *)x->data + off;
        EvStr *d = (EvStr *)y->data + k;
        d->p = malloc(s->len + 1);
        if (!d->p)
            abort();
        if (s->len)
            memcpy(d->p, s->p, s->len);
        d->p[s->len] = 0;
        d->len = s->len;
        return;
    }
    size_t esz = ev_dtype_size(x->dtype);
    memcpy((char *)y->data + k * esz, (const char *)x->data + off * esz, esz);
}

static void ev_rs_fill(EvValue *y, size_t k, double v)
{
    double e[2] = { v, 0.0 };
    if (y->dtype != IR_STRING)
        ev_rs_store(y, k, e);
}

/* ---- the two resamplers ---------------------------------------------- */

static int ev_rs_run_nearest(EvCtx *c, const EvResize *r, const EvValue *x,
                             EvValue *y)
{
    size_t rank = r->rank, xs[EV_MAX_RANK], idx[EV_MAX_RANK] = { 0 };
    int64_t **src = ev_tmp(c, rank, sizeof *src);

    for (size_t ax = 0; ax < rank; ax++) {
        src[ax] = ev_tmp(c, (size_t)r->out[ax], sizeof **src);
        for (int64_t o = 0; o < r->out[ax]; o++) {
            src[ax][o] = ev_rs_pick(r, ax, o);
        }
    }
    ev_strides(rank, x->dims, xs);
    for (size_t k = 0; k < y->numel; k++) {
        size_t off = 0;
        bool ext = false;
        for (size_t ax = 0; ax < rank; ax++) {
            int64_t s = src[ax][idx[ax]];
            if (s < 0)
                ext = true;
            else
                off += (size_t)s * xs[ax];
        }
        if (ext)
            ev_rs_fill(y, k, r->extrapolation);
        else
            ev_rs_copy(y, k, x, off);
        for (size_t ax = rank; ax-- > 0;) {
            if (++idx[ax] < (size_t)r->out[ax])
                break;
            idx[ax] = 0;
        }
    }
    return 0;
}

/* Interpolates buffer src (dims cur, nc doubles per element) along ax;
 * returns the new buffer or NULL (failure set). */
static double *ev_rs_axis(EvCtx *c, const EvResize *r, size_t ax,
                          const double *src, const int64_t *cur, size_t nc)
{
    size_t outer = ev_dims_prod(cur, 0, ax), n = 0, total;
    size_t inner = ev_dims_prod(cur, ax + 1, r->rank) * nc;
    size_t in = (size_t)cur[ax], out = (size_t)r->out[ax], nw;
    int64_t start = 0;

    if (!ev_rs_taps(r, ax, &n, &start)) {
        ev_fail(c, "antialias filter too wide for scale %g", r->scale[ax]);
        return NULL;
    }
    if (!mem_mul_size(out, n, &nw) || !mem_mul_size(outer, out, &total) ||
        !mem_mul_size(total, inner, &total)) {
        ev_fail(c, "resize buffer too large");
        return NULL;
    }
    double *w = ev_tmp(c, nw, sizeof *w);
    int64_t *first = ev_tmp(c, out, sizeof *first);
    bool *ext = ev_tmp(c, out, sizeof *ext);
    double *dst = ev_tmp(c, total, sizeof *dst);
    if (!w || !first || !ext || !dst) {
        ev_fail(c, "resize buffer too large");
        return NULL;
    }
    for (size_t o = 0; o < out; o++) {
        double xo = ev_rs_coord(r, ax, (int64_t)o, &ext[o]);
        if (!ext[o])
            ev_rs_weights(r, ax, xo, n, start, w + o * n, &first[o]);
    }
    for (size_t a = 0; a < outer; a++) {
        for (size_t o = 0; o < out; o++) {
            double *d = dst + (a * out + o) * inner;
            if (ext[o]) {
                for (size_t i = 0; i < inner; i++)
                    d[i] = i % nc == 0 ? r->extrapolation : 0.0;
                continue;
            }
            for (size_t k = 0; k < n; k++) {
                double wk = w[o * n + k];
                if (wk == 0)
                    continue;
                int64_t si = ev_rs_clamp(first[o] + (int64_t)k, (int64_t)in);
                const double *s = src + (a * in + (size_t)si) * inner;
                for (size_t i = 0; i < inner; i++)
                    d[i] += wk * s[i];
            }
        }
    }
    return dst;
}

static int ev_rs_run_interp(EvCtx *c, const EvResize *r, const EvValue *x,
                            EvValue *y)
{
    size_t nc = ev_rs_ncomp(x->dtype), total;
    int64_t cur[EV_MAX_RANK];
    double *buf;

    if (x->dtype == IR_STRING)
        return ev_fail(c, "linear and cubic modes cannot interpolate strings");
    if (!mem_mul_size(x->numel, nc, &total) ||
        !(buf = ev_tmp(c, total, sizeof *buf)))
        return ev_fail(c, "resize buffer too large");
    for (size_t k = 0; k < x->numel; k++)
        ev_rs_load(x, k, buf + k * nc);
    memcpy(cur, x->dims, r->rank * sizeof *cur);
    /* Shrinking axes first keeps the intermediate buffers small. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t ax = 0; ax < r->rank; ax++) {
            bool shrink = r->out[ax] <= r->in[ax];
            if (shrink != (pass == 0) || ev_rs_identity(r, ax))
                continue;
            buf = ev_rs_axis(c, r, ax, buf, cur, nc);
            if (!buf)
                return -1;
            cur[ax] = r->out[ax];
        }
    }
    for (size_t k = 0; k < y->numel; k++)
        ev_rs_store(y, k, buf + k * nc);
    return 0;
}

static int ev_rs_run(EvCtx *c, const EvResize *r, EvValue *x)
{
    EvValue *y = ev_out_tensor(c, 0, x->dtype, r->rank, r->out);
    if (!y)
        return -1;
    if (y->numel == 0)
        return 0;
    if (x->numel == 0)
        return ev_fail(c, "cannot resize an empty tensor to a non-empty one");
    if (r->mode == EV_RS_NEAREST)
        return ev_rs_run_nearest(c, r, x, y);
    return ev_rs_run_interp(c, r, x, y);
}

/* ---- shapes ---------------------------------------------------------- */

/* Sets out/scale/outf of axis ax from a scale factor. */
static int ev_rs_set_scale(EvCtx *c, EvResize *r, size_t ax, double s)
{
    int64_t o = rsz_len(r->in[ax], s);   /* in float32: src/schema/resize.h */
    if (!(s > 0) || !isfinite(s))
        return ev_fail(c, "scale %g of axis %zu is not a positive number", s, ax);
    if (o < 0)
        return ev_fail(c, "output dim of axis %zu too large", ax);
    r->scale[ax] = s;
    r->outf[ax] = s * (double)r->in[ax];
    r->out[ax] = o;
    return 0;
}

static int ev_rs_set_size(EvCtx *c, EvResize *r, size_t ax, int64_t n)
{
    if (n < 0)
        return ev_fail(c, "negative size %lld for axis %zu", (long long)n, ax);
    if (r->in[ax] == 0 && n > 0)
        return ev_fail(c, "cannot resize empty axis %zu to %lld", ax, (long long)n);
    r->out[ax] = n;
    r->outf[ax] = (double)n;
    r->scale[ax] = r->in[ax] ? (double)n / (double)r->in[ax] : 1.0;
    return 0;
}

static void ev_rs_init(EvResize *r, const EvValue *x)
{
    memset(r, 0, sizeof *r);
    r->rank = x->rank;
    for (size_t i = 0; i < x->rank; i++) {
        r->in[i] = r->out[i] = x->dims[i];
        r->scale[i] = 1.0;
        r->outf[i] = (double)x->dims[i];
        r->roi_hi[i] = 1.0;
    }
    r->cubic_a = -0.75;
}

static int ev_rs_scales_vec(EvCtx *c, EvResize *r, size_t n, const double *s)
{
    if (n != r->rank)
        return ev_fail(c, "%zu scales for an input of rank %zu", n, r->rank);
    for (size_t i = 0; i < n; i++)
        if (ev_rs_set_scale(c, r, i, s[i]) < 0)
            return -1;
    return 0;
}

/* ---- Upsample -------------------------------------------------------- */

static int ev_rs_upsample_mode(EvCtx *c, EvResize *r)
{
    const char *m = ev_attr_s(c, "mode");
    if (!strcmp(m, "nearest"))
        r->mode = EV_RS_NEAREST;
    else if (!strcmp(m, "linear") || !strcmp(m, "bilinear"))
        r->mode = EV_RS_LINEAR;
    else
        return ev_fail(c, "unknown mode '%s'", m);
    r->ctm = RSZ_ASYMMETRIC;
    r->nearest = RSZ_SIMPLE;
    return 0;
}

static int ev_upsample(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    EvResize r;
    double s[EV_MAX_RANK];
    size_t n;

    if (!x)
        return -1;
    ev_rs_init(&r, x);
    if (ev_rs_upsample_mode(c, &r) < 0)
        return -1;
    if (c->ver < 7) {
        const IrAttr *h = ev_attr(c, "height_scale"), *w = ev_attr(c, "width_scale");
        if (!h || !w)
            return ev_fail(c, "height_scale and width_scale are required");
        if (x->rank != 4)
            return ev_fail(c, "input must be 4-D, got rank %zu", x->rank);
        s[0] = s[1] = 1.0;
        s[2] = ev_attr_f_or(c, "height_scale", 1.0f);
        s[3] = ev_attr_f_or(c, "width_scale", 1.0f);
        n = 4;
    } else if (c->ver < 9) {
        const float *f;
        long m = ev_attr_floats(c, "scales", &f);
        if (m < 0)
            return ev_fail(c, "attribute scales is required");
        if ((size_t)m > EV_MAX_RANK)
            return ev_fail(c, "too many scales");
        for (long i = 0; i < m; i++)
            s[i] = f[i];
        n = (size_t)m;
    } else {
        EvValue *sc = ev_in_tensor(c, 1);
        if (!sc)
            return -1;
        if (sc->numel > EV_MAX_RANK)
            return ev_fail(c, "too many scales");
        for (size_t i = 0; i < sc->numel; i++)
            s[i] = ev_get_f(sc, i);
        n = sc->numel;
    }
    if (ev_rs_scales_vec(c, &r, n, s) < 0)
        return -1;
    return ev_rs_run(c, &r, x);
}

/* ---- Resize ---------------------------------------------------------- */


static int ev_rs_resize_attrs(EvCtx *c, EvResize *r)
{
    const char *m = ev_attr_s(c, "mode"), *s;
    size_t i;

    if (!strcmp(m, "nearest"))
        r->mode = EV_RS_NEAREST;
    else if (!strcmp(m, "linear"))
        r->mode = EV_RS_LINEAR;
    else if (!strcmp(m, "cubic") && c->ver >= 11)
        r->mode = EV_RS_CUBIC;
    else
        return ev_fail(c, "unknown mode '%s'", m);
    if (c->ver < 11) {
        r->ctm = RSZ_ASYMMETRIC;
        r->nearest = RSZ_SIMPLE;
        return 0;
    }
    s = ev_attr_s_or(c, "coordinate_transformation_mode", "half_pixel");
    for (i = 0; i < RSZ_N_CTM && strcmp(s, rsz_ctm_names[i]); i++)
        ;
    if (i == RSZ_N_CTM ||
        (i == RSZ_HALF_PIXEL_SYM && c->ver < 19) ||
        (i == RSZ_TF_NN && c->ver >= 13))
        return ev_fail(c, "unknown coordinate_transformation_mode '%s'", s);
    r->ctm = (int)i;
    s = ev_attr_s_or(c, "nearest_mode", "round_prefer_floor");
    for (i = 0; i < RSZ_N_NM && strcmp(s, rsz_nm_names[i]); i++)
        ;
    if (i == RSZ_N_NM)
        return ev_fail(c, "unknown nearest_mode '%s'", s);
    r->nearest = (int)i;
    r->cubic_a = ev_attr_f_or(c, "cubic_coeff_a", -0.75f);
    r->exclude_outside = ev_attr_i(c, "exclude_outside") != 0;
    r->extrapolation = ev_attr_f(c, "extrapolation_value");
    if (c->ver >= 18)
        r->antialias = ev_attr_i(c, "antialias") != 0 &&
                       r->mode != EV_RS_NEAREST;
    return 0;
}

/* The resized axes (attribute axes from version 18, else all). */
static int ev_rs_axes(EvCtx *c, const EvResize *r, size_t *axes, size_t *n)
{
    const int64_t *v;
    long m = c->ver >= 18 ? ev_attr_ints(c, "axes", &v) : -1;
    bool seen[EV_MAX_RANK] = { false };

    if (m < 0) {
        for (size_t i = 0; i < r->rank; i++)
            axes[i] = i;
        *n = r->rank;
        return 0;
    }
    if ((size_t)m > r->rank)
        return ev_fail(c, "%ld axes for an input of rank %zu", m, r->rank);
    for (long i = 0; i < m; i++) {
        if (ev_axis(c, "axes", v[i], r->rank, 0, &axes[i]) < 0)
            return -1;
        if (seen[axes[i]])
            return ev_fail(c, "axis %lld repeated", (long long)v[i]);
        seen[axes[i]] = true;
    }
    *n = (size_t)m;
    return 0;
}

static int ev_rs_roi(EvCtx *c, EvResize *r, const size_t *axes, size_t n)
{
    EvValue *roi = ev_in(c, 1);
    if (r->ctm != RSZ_CROP)
        return 0;
    if (!roi || roi->kind != EV_TENSOR || roi->numel == 0)
        return ev_fail(c, "tf_crop_and_resize needs roi");
    if (roi->numel != 2 * n)
        return ev_fail(c, "roi has %zu values, expected %zu", roi->numel, 2 * n);
    for (size_t i = 0; i < n; i++) {
        r->roi_lo[axes[i]] = ev_get_f(roi, i);
        r->roi_hi[axes[i]] = ev_get_f(roi, n + i);
    }
    return 0;
}

/* Output sizes from `sizes`, with keep_aspect_ratio_policy. */
static int ev_rs_sizes(EvCtx *c, EvResize *r, const size_t *axes, size_t n)
{
    size_t cnt;
    int64_t *sz = ev_in_ints(c, 3, &cnt);
    const char *pol = c->ver >= 18
        ? ev_attr_s_or(c, "keep_aspect_ratio_policy", "stretch") : "stretch";
    double s = 0;

    if (!sz)
        return -1;
    if (cnt != n)
        return ev_fail(c, "%zu sizes for %zu axes", cnt, n);
    if (!strcmp(pol, "stretch")) {
        for (size_t i = 0; i < n; i++)
            if (ev_rs_set_size(c, r, axes[i], sz[i]) < 0)
                return -1;
        return 0;
    }
    if (strcmp(pol, "not_larger") && strcmp(pol, "not_smaller"))
        return ev_fail(c, "unknown keep_aspect_ratio_policy '%s'", pol);
    for (size_t i = 0; i < n; i++) {
        double ratio;
        if (sz[i] < 0 || r->in[axes[i]] == 0)
            return ev_fail(c, "bad size %lld for axis %zu", (long long)sz[i], axes[i]);
        ratio = (double)sz[i] / (double)r->in[axes[i]];
        if (i == 0 || (pol[4] == 'l' ? ratio < s : ratio > s))
            s = ratio;
    }
    for (size_t i = 0; i < n; i++) {
        size_t ax = axes[i];
        double o = s * (double)r->in[ax] + 0.5;
        if (!(o < 9.0e15))
            return ev_fail(c, "output dim of axis %zu too large", ax);
        r->out[ax] = (int64_t)o;
        r->outf[ax] = s * (double)r->in[ax];
        r->scale[ax] = s;
    }
    return 0;
}

static int ev_resize(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *sc, *sz;
    EvResize r;
    size_t axes[EV_MAX_RANK], n = 0;

    if (!x)
        return -1;
    ev_rs_init(&r, x);
    if (ev_rs_resize_attrs(c, &r) < 0)
        return -1;
    sc = ev_in(c, c->ver < 11 ? 1 : 2);
    sz = c->ver < 11 ? NULL : ev_in(c, 3);
    if (sc && (sc->kind != EV_TENSOR || sc->numel == 0))
        sc = NULL;
    if (sz && (sz->kind != EV_TENSOR || sz->numel == 0))
        sz = NULL;
    if (x->rank == 0 && !sc && !sz) {
        ev_out_set(c, 0, ev_ref(x));
        return 0;
    }
    if (!sc == !sz)
        return ev_fail(c, "exactly one of scales and sizes must be given");
    if (ev_rs_axes(c, &r, axes, &n) < 0 || ev_rs_roi(c, &r, axes, n) < 0)
        return -1;
    if (sz) {
        if (ev_rs_sizes(c, &r, axes, n) < 0)
            return -1;
    } else {
        if (sc->numel != n)
            return ev_fail(c, "%zu scales for %zu axes", sc->numel, n);
        for (size_t i = 0; i < n; i++)
            if (ev_rs_set_scale(c, &r, axes[i], ev_get_f(sc, i)) < 0)
                return -1;
    }
    return ev_rs_run(c, &r, x);
}

/* ---- one axis as a matrix ------------------------------------------ */

/* Index of s in names, or -1. */
static int ev_rs_find(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return (int)i;
    return -1;
}

/* The EvResize of one axis described by spec; false on an unknown mode. */
static bool ev_rs_from_spec(const EvResizeSpec *sp, const RszAxis *len,
                            EvResize *r)
{
    memset(r, 0, sizeof *r);
    r->rank = 1;
    r->in[0] = len->in;
    r->out[0] = len->out;
    r->scale[0] = len->scale;
    r->outf[0] = len->outf;
    r->roi_lo[0] = len->lo;
    r->roi_hi[0] = len->hi;
    r->mode = ev_rs_find(sp->mode, (const char *const[]){"nearest", "linear", "cubic"}, 3);
    r->ctm = ev_rs_find(sp->ctm, rsz_ctm_names, RSZ_N_CTM);
    r->nearest = ev_rs_find(sp->nearest_mode, rsz_nm_names, RSZ_N_NM);
    r->cubic_a = sp->cubic_a;
    r->extrapolation = sp->extrapolation;
    r->exclude_outside = sp->exclude_outside;
    r->antialias = sp->antialias && r->mode != EV_RS_NEAREST;
    return r->mode >= 0 && r->ctm >= 0 && r->nearest >= 0 && len->in > 0;
}

int ev_resize_axis_weights(const EvResizeSpec *sp, const RszAxis *len,
                           double *w, double *bias)
{
    EvResize r;
    size_t n = 0, in = (size_t)len->in;
    int64_t start = 0, first = 0;
    double *tw;

    if (!ev_rs_from_spec(sp, len, &r))
        return -1;
    if (r.mode != EV_RS_NEAREST && !ev_rs_taps(&r, 0, &n, &start))
        return -1;
    tw = malloc((n ? n : 1) * sizeof *tw);
    if (!tw)
        return -1;
    memset(w, 0, (size_t)len->out * in * sizeof *w);
    for (int64_t o = 0; o < len->out; o++) {
        bool outside;
        double xo = ev_rs_coord(&r, 0, o, &outside), *row = w + (size_t)o * in;
        int64_t pick = r.mode == EV_RS_NEAREST ? ev_rs_pick(&r, 0, o) : 0;
        if (r.mode == EV_RS_NEAREST)
            outside = pick < 0;   /* as the float32 coordinate says */
        bias[o] = outside ? r.extrapolation : 0.0;
        if (outside)
            continue;
        if (r.mode == EV_RS_NEAREST) {
            row[pick] = 1.0;
            continue;
        }
        ev_rs_weights(&r, 0, xo, n, start, tw, &first);
        for (size_t k = 0; k < n; k++)
            row[ev_rs_clamp(first + (int64_t)k, len->in)] += tw[k];
    }
    free(tw);
    return 0;
}

const EvOp ev_ops_resize[] = {
    { "", "Upsample", ev_upsample },
    { "", "Resize", ev_resize },
    { NULL, NULL, NULL }
};
