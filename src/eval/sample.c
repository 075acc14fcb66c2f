/* Sampling kernels of ai.onnx: GridSample (16, 20, 22) and AffineGrid (20).
 *
 * GridSample follows the spec's description: grid values are
 * unnormalized per align_corners, out-of-bound coordinates are clamped
 * (border) or reflected (reflection) first, then neighbours outside the
 * image read 0 (zeros) / the clamped / the reflected pixel. Nearest rounds
 * half to even; cubic uses A = -0.75. Every mode works for any number of
 * spatial dims. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- AffineGrid ---------------------------------------------------------- */

/* Coordinate i of n points spread over [-1, 1] (pixel centres when
 * align_corners is 0); one point sits at -1. */
static double ev_ag_coord(int64_t i, int64_t n, bool align)
{
    if (align)
        return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
    return -1.0 + (2.0 * (double)i + 1.0) / (double)n;
}

static int ev_affine_grid(EvCtx *c)
{
    EvValue *th = ev_in_real(c, 0);
    size_t ns;
    int64_t *sz = th ? ev_in_ints(c, 1, &ns) : NULL;
    if (!sz)
        return -1;
    if (ev_in(c, 1)->dtype != IR_INT64 || (ns != 4 && ns != 5))
        return ev_fail(c, "size must be int64 [N, C, H, W] or [N, C, D, H, W]");
    size_t nd = ns - 2; /* spatial dims: 2 or 3 */
    for (size_t i = 0; i < ns; i++)
        if (sz[i] < 0)
            return ev_fail(c, "size has a negative entry");
    if (th->rank != 3 || th->dims[0] != sz[0] || (size_t)th->dims[1] != nd ||
        (size_t)th->dims[2] != nd + 1)
        return ev_fail(c, "theta must be [N, %zu, %zu]", nd, nd + 1);
    bool align = ev_attr_i(c, "align_corners") != 0;
    int64_t gd[5] = {sz[0]};
    for (size_t i = 0; i < nd; i++)
        gd[1 + i] = sz[2 + i];
    gd[1 + nd] = (int64_t)nd;
    EvValue *g = ev_out_tensor(c, 0, th->dtype, nd + 2, gd);
    if (!g)
        return -1;
    size_t pts = ev_dims_prod(gd, 1, nd + 1), k = 0;
    for (int64_t n = 0; n < sz[0]; n++)
        for (size_t p = 0; p < pts; p++) {
            /* base = (x, y[, z], 1) with x along the last spatial dim */
            double base[4];
            size_t rest = p;
            for (size_t i = nd; i-- > 0;) {
                int64_t dim = sz[2 + i];
                base[nd - 1 - i] = ev_ag_coord((int64_t)(rest % (size_t)dim),
                                               dim, align);
                rest /= (size_t)dim;
            }
            base[nd] = 1.0;
            for (size_t r = 0; r < nd; r++) {
                double s = 0;
                for (size_t j = 0; j <= nd; j++)
                    s += ev_at_get(th, ((size_t)n * nd + r) * (nd + 1) + j) *
                         base[j];
                ev_at_put(g, k++, s);
            }
        }
    return 0;
}

/* ---- GridSample ---------------------------------------------------------- */

typedef enum { EV_GS_NEAREST, EV_GS_LINEAR, EV_GS_CUBIC } EvGsMode;
typedef enum { EV_GS_ZEROS, EV_GS_BORDER, EV_GS_REFLECT } EvGsPad;

typedef struct EvGs {
    EvGsMode mode;
    EvGsPad pad;
    bool align;
    size_t nd;                    /* spatial dims */
    const int64_t *dims;          /* X's spatial dims */
    bool fgrid;                   /* the grid is not double: coordinates are
                                     unnormalized in float */
} EvGs;

/* Reflects x into [lo, hi] (spec's reflection padding). */
static double ev_gs_reflect(double x, double lo, double hi)
{
    double rng = hi - lo;
    if (rng <= 0)
        return lo;
    if (x < lo) {
        double dx = lo - x, n = floor(dx / rng), r = dx - n * rng;
        return fmod(n, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, n = floor(dx / rng), r = dx - n * rng;
        return fmod(n, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* Integer pixel index i of a dim of size n under the padding mode, or -1
 * when it reads as zero. */
static int64_t ev_gs_index(const EvGs *g, double i, int64_t n)
{
    if (isnan(i))
        return g->pad == EV_GS_ZEROS ? -1 : 0;
    if (g->pad == EV_GS_REFLECT && (i < 0 || i > (double)(n - 1))) {
        double lo = g->align ? 0 : -0.5;
        double hi = g->align ? (double)(n - 1) : (double)n - 0.5;
        i = floor(ev_gs_reflect(i, lo, hi));
    }
    if (i < 0 || i > (double)(n - 1)) {
        if (g->pad == EV_GS_ZEROS)
            return -1;
        i = i < 0 ? 0 : (double)(n - 1);
    }
    return (int64_t)i;
}

/* The source coordinate of normalized grid value v on a dim of size n. */
static double ev_gs_coord(const EvGs *g, double v, int64_t n)
{
    /* A float grid's coordinates are computed in float, step by step, as
     * the spec's reference implementation and runtimes do: on a long axis
     * float rounds a coordinate by up to ulp(n) / 2, which moves the
     * sample by more than verification tolerates against double. */
    double x;
    if (g->fgrid) {     /* v holds a float (or narrower) value: no overflow */
        float f = (float)v, fn = (float)n;
        x = g->align ? (f + 1.0f) / 2.0f * (fn - 1.0f) : ((f + 1.0f) * fn - 1.0f) / 2.0f;
    } else {
        x = g->align ? (v + 1) / 2 * (double)(n - 1) : ((v + 1) * (double)n - 1) / 2;
    }
    if (g->mode == EV_GS_NEAREST)
        x = nearbyint(x);
    double lo = g->align ? 0 : -0.5;
    double hi = g->align ? (double)(n - 1) : (double)n - 0.5;
    if (x < lo || x > hi) {
        if (g->pad == EV_GS_BORDER)
            x = x < 0 ? 0 : (x > (double)(n - 1) ? (double)(n - 1) : x);
        else if (g->pad == EV_GS_REFLECT)
            x = ev_gs_reflect(x, lo, hi);
    }
    return g->fgrid ? (double)(float)x : x;
}

static void ev_gs_cubic_coeffs(double t, double *w)
{
    const double a = -0.75;
    double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
    w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
    w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

/* Per spatial dim: up to 4 (index, weight) taps for coordinate x. */
static size_t ev_gs_taps(const EvGs *g, double x, int64_t n, int64_t *idx,
                         double *w)
{
    if (g->mode == EV_GS_NEAREST) {
        idx[0] = ev_gs_index(g, x, n);
        w[0] = 1;
        return 1;
    }
    double f = floor(x);
    if (isnan(f) || f < -4 || f > (double)n + 4) /* far out: all padding */
        f = isnan(f) ? -8 : (f < 0 ? -8 : (double)n + 4);
    double t = x - f;
    if (g->mode == EV_GS_LINEAR) {
        idx[0] = ev_gs_index(g, f, n);
        idx[1] = ev_gs_index(g, f + 1, n);
        w[0] = 1 - t;
        w[1] = t;
        return 2;
    }
    ev_gs_cubic_coeffs(t, w);
    for (int k = 0; k < 4; k++)
        idx[k] = ev_gs_index(g, f - 1 + k, n);
    return 4;
}

/* Copies element `at` of x to element o of y (nearest sampling). */
static void ev_gs_copy(const EvValue *x, size_t at, EvValue *y, size_t o)
{
    if (x->dtype == IR_STRING) {
        const EvStr *s = (const EvStr *)x->data + at;
        EvStr *d = (EvStr *)y->data + o;
        d->p = malloc(s->len + 1);
        if (d->p) {
            if (s->len)
                memcpy(d->p, s->p, s->len);
            d->p[s->len] = 0;
            d->len = s->len;
        }
        return;
    }
    size_t es = ev_dtype_size(x->dtype);
    memcpy((char *)y->data + o * es, (const char *)x->data + at * es, es);
}

/* The taps of one output point: their offsets in a channel of X (SIZE_MAX
 * for a tap in the zero padding) and weights, by walking every
 * combination of the per-dim taps. Returns the count. */
static size_t ev_gs_combine(const EvGs *g, const int64_t (*idx)[4],
                            const double (*w)[4], const size_t *cnt,
                            size_t *off, double *wt)
{
    size_t sel[EV_MAX_RANK] = {0}, n = 0;
    for (;;) {
        size_t o = 0;
        double p = 1;
        bool zero = false;
        for (size_t d = 0; d < g->nd; d++) {
            int64_t i = idx[d][sel[d]];
            zero |= i < 0;
            o = o * (size_t)g->dims[d] + (size_t)(i < 0 ? 0 : i);
            p *= w[d][sel[d]];
        }
        off[n] = zero ? SIZE_MAX : o;
        wt[n++] = p;
        size_t d = g->nd;
        while (d-- > 0) {
            if (++sel[d] < cnt[d])
                break;
            sel[d] = 0;
        }
        if (d == SIZE_MAX)
            return n;
    }
}

/* One output point of every channel from its taps. */
static void ev_gs_point(const EvGs *g, const EvValue *x, EvValue *y,
                        size_t xbase, size_t ybase, size_t nch, size_t xcs,
                        size_t ycs, const size_t *off, const double *wt,
                        size_t ntaps)
{
    bool cplx = x->dtype == IR_COMPLEX64 || x->dtype == IR_COMPLEX128;
    for (size_t ch = 0; ch < nch; ch++) {
        size_t xo = xbase + ch * xcs, yo = ybase + ch * ycs;
        if (g->mode == EV_GS_NEAREST && !cplx) {
            if (off[0] != SIZE_MAX) /* the zero padding stays zero */
                ev_gs_copy(x, xo + off[0], y, yo);
            continue;
        }
        double re = 0, im = 0;
        for (size_t k = 0; k < ntaps; k++) {
            if (off[k] == SIZE_MAX || wt[k] == 0)
                continue;
            size_t at = xo + off[k];
            if (x->dtype == IR_COMPLEX64) {
                re += wt[k] * ((const float *)x->data)[2 * at];
                im += wt[k] * ((const float *)x->data)[2 * at + 1];
            } else if (x->dtype == IR_COMPLEX128) {
                re += wt[k] * ((const double *)x->data)[2 * at];
                im += wt[k] * ((const double *)x->data)[2 * at + 1];
            } else {
                re += wt[k] * ev_at_get(x, at);
            }
        }
        if (x->dtype == IR_COMPLEX64) {
            ((float *)y->data)[2 * yo] = (float)re;
            ((float *)y->data)[2 * yo + 1] = (float)im;
        } else if (x->dtype == IR_COMPLEX128) {
            ((double *)y->data)[2 * yo] = re;
            ((double *)y->data)[2 * yo + 1] = im;
        } else {
            ev_at_put(y, yo, re);
        }
    }
}

static int ev_gs_modes(EvCtx *c, EvGs *g)
{
    bool v20 = c->ver >= 20;
    const char *m = ev_attr_s(c, "mode");
    const char *p = ev_attr_s(c, "padding_mode");
    if (!m || !p)
        return -1;
    if (strcmp(m, "nearest") == 0)
        g->mode = EV_GS_NEAREST;
    else if (strcmp(m, v20 ? "linear" : "bilinear") == 0)
        g->mode = EV_GS_LINEAR;
    else if (strcmp(m, v20 ? "cubic" : "bicubic") == 0)
        g->mode = EV_GS_CUBIC;
    else
        return ev_fail(c, "unknown mode '%s'", m);
    if (strcmp(p, "zeros") == 0)
        g->pad = EV_GS_ZEROS;
    else if (strcmp(p, "border") == 0)
        g->pad = EV_GS_BORDER;
    else if (strcmp(p, "reflection") == 0)
        g->pad = EV_GS_REFLECT;
    else
        return ev_fail(c, "unknown padding_mode '%s'", p);
    g->align = ev_attr_i(c, "align_corners") != 0;
    return 0;
}

/* Checks X and grid; sets g's dims and the output shape yd. */
static int ev_gs_shapes(EvCtx *c, EvGs *g, const EvValue *x,
                        const EvValue *gr, int64_t *yd)
{
    if (x->dtype == IR_STRING && g->mode != EV_GS_NEAREST)
        return ev_fail(c, "strings can only be sampled with mode nearest");
    if (!ev_dtype_size(x->dtype) || x->rank < 3 ||
        (c->ver < 20 && x->rank != 4))
        return ev_fail(c, "X must be N x C x D1 x ... (4-D before opset 20)");
    g->nd = x->rank - 2;
    g->dims = x->dims + 2;
    if (gr->rank != x->rank || gr->dims[0] != x->dims[0] ||
        (size_t)gr->dims[x->rank - 1] != g->nd)
        return ev_fail(c, "grid must be [N, O1, ..., %zu]", g->nd);
    for (size_t d = 0; d < g->nd; d++)
        if (g->dims[d] == 0 && gr->numel)
            return ev_fail(c, "X has an empty spatial dim");
    /* 4 taps per dim for cubic: keep the combinations countable. */
    if (g->nd > 12)
        return ev_fail(c, "too many spatial dims (%zu)", g->nd);
    yd[0] = x->dims[0];
    yd[1] = x->dims[1];
    for (size_t d = 0; d < g->nd; d++)
        yd[2 + d] = gr->dims[1 + d];
    return 0;
}

static int ev_grid_sample(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *gr = ev_in_real(c, 1);
    EvGs g = {0};
    int64_t yd[EV_MAX_RANK];
    if (!x || !gr || ev_gs_modes(c, &g) || ev_gs_shapes(c, &g, x, gr, yd))
        return -1;
    g.fgrid = gr->dtype != IR_DOUBLE;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, yd);
    if (!y)
        return -1;
    size_t pts = ev_dims_prod(yd, 2, x->rank);
    if (y->numel == 0)
        return 0;
    size_t maxtaps = (size_t)1 << (2 * g.nd);
    int64_t (*idx)[4] = ev_tmp(c, g.nd, sizeof *idx);
    double (*w)[4] = ev_tmp(c, g.nd, sizeof *w);
    size_t *cnt = ev_tmp(c, g.nd, sizeof *cnt);
    size_t *off = ev_tmp(c, maxtaps, sizeof *off);
    double *wt = ev_tmp(c, maxtaps, sizeof *wt);
    if (!idx || !w || !cnt || !off || !wt)
        return -1;
    size_t nch = (size_t)x->dims[1];
    size_t xcs = ev_dims_prod(x->dims, 2, x->rank);
    for (size_t n = 0; n < (size_t)x->dims[0]; n++)
        for (size_t p = 0; p < pts; p++) {
            /* The grid's last axis lists (x, y, ...): x is the last dim. */
            size_t go = (n * pts + p) * g.nd;
            for (size_t d = 0; d < g.nd; d++) {
                size_t sd = g.nd - 1 - d;
                double cx = ev_gs_coord(&g, ev_at_get(gr, go + d),
                                        g.dims[sd]);
                cnt[sd] = ev_gs_taps(&g, cx, g.dims[sd], idx[sd], w[sd]);
            }
            size_t nt = ev_gs_combine(&g, (const int64_t (*)[4])idx,
                                      (const double (*)[4])w, cnt, off, wt);
            ev_gs_point(&g, x, y, n * nch * xcs, n * nch * pts + p, nch, xcs,
                        pts, off, wt, nt);
        }
    return 0;
}

const EvOp ev_ops_sample[] = {
    {"", "GridSample", ev_grid_sample},
    {"", "AffineGrid", ev_affine_grid},
    {NULL, NULL, NULL}
};

