/*
 * eval/nn.c - kernels of the neural-network ops:
 *   MatMul 1/9/13, Gemm 1/6/7/9/11/13,
 *   Conv 1/11/22, ConvTranspose 1/11/22, DeformConv 19/22,
 *   Col2Im 18, CausalConvWithState 27,
 *   AveragePool 1/7/10/11/19/22, MaxPool 1/8/10/11/12/22,
 *   LpPool 1/2/11/18/22, GlobalAveragePool/GlobalMaxPool 1/22,
 *   GlobalLpPool 1/2/22, MaxUnpool 9/11/22, MaxRoiPool 1/22,
 *   RoiAlign 10/16/22, Dropout 1/6/7/10/12/13/22.
 *
 * Double products go through OpenBLAS's dgemm; float, float16 and bfloat16
 * ones through ev_sgemm (sgemm.c), whose sums do not depend on a row's
 * place, the blocking, the threads or the CPU (EV_FLOAT_VIA_DOUBLE says
 * why not OpenBLAS's sgemm). Convolutions are im2col +
 * gemm per (batch, group), with a 1x1/stride-1/no-pad kernel reading the
 * input in place and depthwise 2-D kernels looping directly;
 * ConvTranspose is gemm + col2im. The geometry and the products are
 * declared in kernels.h, since the quant family's ConvInteger and
 * MatMulInteger run on them.
 * MatMul and Gemm on 32/64-bit integers use exact wrapping uint64 loops.
 *
 * Window geometry (EvGeom) is shared by the convolutions and the pools: it
 * maps "grid" positions (a conv's output, a ConvTranspose's input, Col2Im's
 * blocks) onto an "image" (a conv's input, a ConvTranspose's output):
 *   image pos = grid pos * stride - pad_begin + tap * dilation.
 * Pools visit only the taps that fall inside the image, so a window's cost
 * is bounded by the image, whatever kernel_shape says.
 *
 * Subtle points:
 * - ceil_mode drops a last window that would start inside the end padding
 *   (it must start inside the image or the begin padding).
 * - AveragePool with count_include_pad counts the taps inside the padded
 *   image, not the taps past it that ceil_mode windows can reach.
 * - MaxPool Indices are flat indices into the whole input; storage_order 1
 *   orders the spatial axes column-major (first axis fastest).
 * - ConvTranspose with output_shape (or auto_pad SAME_*) derives its pads
 *   from the total padding, split with floor division as the spec writes
 *   it (in Python), so a negative total adds rows at the end.
 * - MaxUnpool with output_shape reads the indices in the default output
 *   shape and places each value at the same coordinates of the larger one.
 * - RoiAlign before opset 16 has no coordinate_transformation_mode and
 *   behaves as output_half_pixel; max mode takes, per sample, the largest of
 *   the four weighted corners (as the reference does), not the
 *   interpolated value.
 * - Dropout is the identity in inference; training (is_test=0 before 7,
 *   training_mode=true from 12) draws its mask from ev_random, so outputs
 *   of training runs cannot match other implementations' random masks.
 */
#include "eval/eval.h"
#include "base/fconv.h"
#include "eval/kernels.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers --------------------------------------------------- */

/* Fails unless t holds one of the floating point types of these ops. */
static int ev_need_real(EvCtx *c, const EvValue *t, const char *what)
{
    if (!ev_dtype_is_real(t->dtype))
        return ev_fail(c, "%s has unsupported type %s", what,
                       ir_dtype_name(t->dtype) ? ir_dtype_name(t->dtype) : "?");
    return 0;
}

/* Optional input i: NULL when absent, else it must be a tensor of dtype. */
int ev_opt_tensor(EvCtx *c, size_t i, int32_t dtype, const char *what,
                  EvValue **out)
{
    EvValue *v = ev_in(c, i);
    *out = NULL;
    if (!v)
        return 0;
    if (v->kind != EV_TENSOR)
        return ev_fail(c, "%s is not a tensor", what);
    if (dtype >= 0 && v->dtype != dtype)
        return ev_fail(c, "%s has type %s, expected %s", what,
                       ir_dtype_name(v->dtype) ? ir_dtype_name(v->dtype) : "?",
                       ir_dtype_name(dtype) ? ir_dtype_name(dtype) : "?");
    *out = v;
    return 0;
}

/* Fails unless b has a's element type. */
static int ev_same_type(EvCtx *c, const EvValue *a, const EvValue *b, const char *what)
{
    if (a->dtype != b->dtype)
        return ev_fail(c, "%s has type %s, expected %s", what,
                       ir_dtype_name(b->dtype) ? ir_dtype_name(b->dtype) : "?",
                       ir_dtype_name(a->dtype) ? ir_dtype_name(a->dtype) : "?");
    return 0;
}

static bool ev_mul64(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static bool ev_add64(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static bool ev_sub64(int64_t a, int64_t b, int64_t *r) { return !__builtin_sub_overflow(a, b, r); }

/* Python's a // b (b > 0): rounds toward minus infinity. */
static int64_t ev_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Row-major multi-index of flat index k over dims[0..n). */
static void ev_unravel(size_t k, const int64_t *dims, size_t n, int64_t *idx)
{
    for (size_t a = n; a-- > 0;) {
        size_t d = (size_t)dims[a];
        idx[a] = d ? (int64_t)(k % d) : 0;
        k = d ? k / d : 0;
    }
}

/* Steps a row-major multi-index over dims[0..n) (wraps to zeros). */
static void ev_next_index(int64_t *idx, const int64_t *dims, size_t n)
{
    for (size_t a = n; a-- > 0;) {
        if (++idx[a] < dims[a])
            return;
        idx[a] = 0;
    }
}

/* ---- compute-type buffers -------------------------------------------- */

/* Float, float16 and bfloat16 products run in float32 through ev_sgemm.
 * They once ran in double (dgemm, rounded once at the end), because
 * OpenBLAS's sgemm rounds a row by where it falls in its blocking, and
 * differently per CPU kernel: output channels with identical weights then
 * differ, which a model with huge activations (the backend's
 * light_squeezenet, logits near 1e10) turns into a different softmax.
 * ev_sgemm sums every element in one fixed order, which keeps that
 * promise at twice dgemm's speed (light_resnet50: 346 -> 206 ms); set 1
 * here to sum in double again. */
enum { EV_FLOAT_VIA_DOUBLE = 0 };

static bool ev_in_double(int32_t dtype)
{
    return dtype == IR_DOUBLE || EV_FLOAT_VIA_DOUBLE;
}

/* The elements of t in the compute type (double when dbl, else float):
 * t's own data when it already has that type, else an ev_tmp copy. Never
 * NULL for an empty tensor; NULL only on failure. */
static const void *ev_real_in(EvCtx *c, const EvValue *t, bool dbl)
{
    if (t->numel == 0)
        return ev_tmp(c, 1, sizeof(double));
    if (t->dtype == (dbl ? IR_DOUBLE : IR_FLOAT))
        return t->data;
    if (dbl) {
        double *v = ev_tmp_raw(c, t->numel, sizeof *v);
        const float *f = t->data;
        if (v && t->dtype == IR_FLOAT)   /* the common case, vectorized */
            for (size_t k = 0; k < t->numel; k++)
                v[k] = f[k];
        else
            for (size_t k = 0; v && k < t->numel; k++)
                v[k] = ev_get_f(t, k);
        return v;
    }
    float *v = ev_tmp_raw(c, t->numel, sizeof *v);
    const uint16_t *h = t->data;
    if (!v)
        return NULL;
    if (t->dtype == IR_FLOAT16)
        for (size_t k = 0; k < t->numel; k++)
            v[k] = half_f16_to_f32(h[k]);
    else if (t->dtype == IR_BFLOAT16)
        for (size_t k = 0; k < t->numel; k++)
            v[k] = half_bf16_to_f32(h[k]);
    else
        for (size_t k = 0; k < t->numel; k++)
            v[k] = (float)ev_get_f(t, k);
    return v;
}

/* Where a kernel writes output y in the compute type: y's own data when
 * it has that type, else zeroed scratch for ev_real_store. */
static void *ev_real_out(EvCtx *c, EvValue *y, bool dbl)
{
    if (y->numel == 0)
        return ev_tmp(c, 1, sizeof(double));
    if (y->dtype == (dbl ? IR_DOUBLE : IR_FLOAT))
        return y->data;
    return ev_tmp(c, y->numel, dbl ? sizeof(double) : sizeof(float));
}

/* The same for a kernel that writes every element: scratch not zeroed. */
static void *ev_real_out_raw(EvCtx *c, EvValue *y, bool dbl)
{
    if (y->numel == 0 || y->dtype == (dbl ? IR_DOUBLE : IR_FLOAT))
        return ev_real_out(c, y, dbl);
    return ev_tmp_raw(c, y->numel, dbl ? sizeof(double) : sizeof(float));
}

/* Converts a compute-type buffer into y (nothing when it is y's data). */
static void ev_real_store(EvValue *y, const void *buf, bool dbl)
{
    if (buf == y->data || y->numel == 0)
        return;
    if (dbl && y->dtype == IR_FLOAT) {   /* the common case, vectorized */
        const double *v = buf;
        float *f = y->data;
        for (size_t k = 0; k < y->numel; k++)
            f[k] = (float)v[k];
        return;
    }
    if (dbl) {
        const double *v = buf;
        for (size_t k = 0; k < y->numel; k++)
            ev_set_f(y, k, v[k]);
        return;
    }
    const float *v = buf;
    uint16_t *h = y->data;
    if (y->dtype == IR_FLOAT16)
        for (size_t k = 0; k < y->numel; k++)
            h[k] = half_f32_to_f16(v[k]);
    else if (y->dtype == IR_BFLOAT16)
        for (size_t k = 0; k < y->numel; k++)
            h[k] = half_f32_to_bf16(v[k]);
    else
        for (size_t k = 0; k < y->numel; k++)
            ev_set_f(y, k, v[k]);
}

/* The elements of an integer tensor as uint64 (signed ones two's
 * complement), for exact wrapping arithmetic. */
static uint64_t *ev_u64_in(EvCtx *c, const EvValue *t)
{
    uint64_t *v = ev_tmp(c, t->numel ? t->numel : 1, sizeof *v);
    bool u = ev_dtype_is_unsigned(t->dtype);
    for (size_t k = 0; v && k < t->numel; k++)
        v[k] = u ? ev_get_u(t, k) : (uint64_t)ev_get_i(t, k);
    return v;
}

static void ev_u64_store(EvValue *y, const uint64_t *v)
{
    for (size_t k = 0; k < y->numel; k++)
        ev_set_i(y, k, (int64_t)v[k]);
}

/* ---- BLAS ------------------------------------------------------------ */

/* Whether BLAS, which takes int sizes, can hold the product. */
static int ev_gemm_fits(EvCtx *c, size_t m, size_t n, size_t k, size_t lda, size_t ldb,
                        size_t ldy)
{
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||
        ldb > INT_MAX || ldy > INT_MAX)
        return ev_fail(c, "matrix product %zu x %zu x %zu is too large for BLAS", m,
                       n, k);
    return 0;
}

/* ev_gemm_r once ev_gemm_fits holds: cannot fail, so tasks call it. */
static void ev_gemm_do(bool dbl, bool ta, bool tb, size_t m, size_t n, size_t k,
                       double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                       double beta, void *y, size_t ldy)
{
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        /* op(a) * op(b) is all zeros; BLAS wants leading dims >= 1 here.
         * beta 0 overwrites, as BLAS does (y may be unwritten scratch). */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                if (dbl) {
                    double *p = (double *)y + i * ldy + j;
                    *p = beta == 0 ? 0 : *p * beta;
                } else {
                    float *p = (float *)y + i * ldy + j;
                    *p = beta == 0 ? 0 : *p * (float)beta;
                }
            }
        return;
    }
    enum CBLAS_TRANSPOSE xa = ta ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE xb = tb ? CblasTrans : CblasNoTrans;
    if (dbl)
        cblas_dgemm(CblasRowMajor, xa, xb, (int)m, (int)n, (int)k, alpha, a, (int)lda,
                    b, (int)ldb, beta, y, (int)ldy);
    else
        ev_sgemm(ta, tb, m, n, k, (float)alpha, a, lda, b, ldb, (float)beta, y, ldy);
}

/* y[m x n] = alpha * op(a) * op(b) + beta * y, row-major, in float or
 * double. BLAS takes int sizes, so larger matrices fail. */
static int ev_gemm_r(EvCtx *c, bool dbl, bool ta, bool tb, size_t m, size_t n,
                     size_t k, double alpha, const void *a, size_t lda,
                     const void *b, size_t ldb, double beta, void *y, size_t ldy)
{
    if (m == 0 || n == 0)
        return 0;
    if (ev_gemm_fits(c, m, n, k, lda, ldb, ldy) < 0)
        return -1;
    ev_gemm_do(dbl, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, y, ldy);
    return 0;
}

/* y[(i * rows + r) * plane + j] += b[r] for every image i. */
static void ev_add_bias(bool dbl, void *y, size_t nimg, size_t rows, size_t plane,
                        const void *b)
{
    for (size_t i = 0; i < nimg; i++)
        for (size_t r = 0; r < rows; r++) {
            size_t base = (i * rows + r) * plane;
            if (dbl) {
                double v = ((const double *)b)[r], *p = (double *)y + base;
                for (size_t j = 0; j < plane; j++)
                    p[j] += v;
            } else {
                float v = ((const float *)b)[r], *p = (float *)y + base;
                for (size_t j = 0; j < plane; j++)
                    p[j] += v;
            }
        }
}

/* ---- window geometry ------------------------------------------------- */

enum { EV_PAD_NOTSET, EV_PAD_VALID, EV_PAD_SAME_UPPER, EV_PAD_SAME_LOWER };

/* INTS attribute `name` with one value >= min per spatial axis, or dflt
 * everywhere when absent (or empty, as some exporters write it). */
static int ev_spatial_ints(EvCtx *c, const char *name, size_t n, int64_t min,
                           int64_t dflt, int64_t *out)
{
    const int64_t *v;
    long cnt = ev_attr_ints(c, name, &v);
    if (cnt <= 0) {
        for (size_t a = 0; a < n; a++)
            out[a] = dflt;
        return 0;
    }
    if ((size_t)cnt != n)
        return ev_fail(c, "'%s' has %ld values for %zu spatial axes", name, cnt, n);
    for (size_t a = 0; a < n; a++) {
        if (v[a] < min)
            return ev_fail(c, "'%s' value %lld is below %lld", name, (long long)v[a],
                           (long long)min);
        out[a] = v[a];
    }
    return 0;
}

/* The pads attribute: begins then ends, all >= 0; zeros when absent. */
static int ev_read_pads(EvCtx *c, EvGeom *g)
{
    const int64_t *v;
    long cnt = ev_attr_ints(c, "pads", &v);
    size_t n = g->n;
    if (cnt <= 0) {
        memset(g->pb, 0, n * sizeof *g->pb);
        memset(g->pe, 0, n * sizeof *g->pe);
        return 0;
    }
    if ((size_t)cnt != 2 * n)
        return ev_fail(c, "'pads' has %ld values for %zu spatial axes (needs %zu)", cnt,
                       n, 2 * n);
    for (size_t a = 0; a < 2 * n; a++)
        if (v[a] < 0)
            return ev_fail(c, "'pads' value %lld is negative", (long long)v[a]);
    for (size_t a = 0; a < n; a++) {
        g->pb[a] = v[a];
        g->pe[a] = v[a + n];
    }
    return 0;
}

static int ev_auto_pad(EvCtx *c, int *mode)
{
    const char *s = ev_attr_s_or(c, "auto_pad", "NOTSET");
    if (!s || !s[0] || strcmp(s, "NOTSET") == 0)
        *mode = EV_PAD_NOTSET;
    else if (strcmp(s, "VALID") == 0)
        *mode = EV_PAD_VALID;
    else if (strcmp(s, "SAME_UPPER") == 0)
        *mode = EV_PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0)
        *mode = EV_PAD_SAME_LOWER;
    else
        return ev_fail(c, "auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER",
                       s);
    return 0;
}

/* The kernel: from the weight's dims (wk) when given, which kernel_shape
 * must then match; else kernel_shape is required (pools). */
static int ev_read_kernel(EvCtx *c, EvGeom *g, const int64_t *wk)
{
    const int64_t *v;
    long cnt = ev_attr_ints(c, "kernel_shape", &v);
    if (cnt > 0 && (size_t)cnt != g->n)
        return ev_fail(c, "'kernel_shape' has %ld values for %zu spatial axes", cnt,
                       g->n);
    if (!wk && cnt <= 0)
        return ev_fail(c, "'kernel_shape' is required");
    for (size_t a = 0; a < g->n; a++) {
        int64_t k = wk ? wk[a] : v[a];
        if (wk && cnt > 0 && v[a] != k)
            return ev_fail(c, "'kernel_shape' value %lld differs from the weight's %lld",
                           (long long)v[a], (long long)k);
        if (k < 1)
            return ev_fail(c, "kernel extent %lld is not positive", (long long)k);
        g->k[a] = k;
    }
    return 0;
}

/* The extent (k - 1) * d + 1 a window spans on axis a. */
static int ev_win_span(EvCtx *c, const EvGeom *g, size_t a, int64_t *eff)
{
    if (!ev_mul64(g->k[a] - 1, g->d[a], eff) || !ev_add64(*eff, 1, eff))
        return ev_fail(c, "window extent overflows on spatial axis %zu", a);
    return 0;
}

/* Grid extent of axis a of a conv or pool from its image extent; SAME_*
 * sets the pads, VALID clears them. */
static int ev_win_axis(EvCtx *c, EvGeom *g, size_t a, int mode, bool ceil)
{
    int64_t in = g->img[a], s = g->s[a], eff, num, o;
    if (ev_win_span(c, g, a, &eff) < 0)
        return -1;
    if (mode == EV_PAD_SAME_UPPER || mode == EV_PAD_SAME_LOWER) {
        int64_t total;
        o = in / s + (in % s != 0);
        if (!ev_mul64(o - 1, s, &total) || !ev_add64(total, eff, &total))
            return ev_fail(c, "padding overflows on spatial axis %zu", a);
        total = total > in ? total - in : 0;
        g->pb[a] = mode == EV_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        g->pe[a] = total - g->pb[a];
        g->grid[a] = o;
        return 0;
    }
    if (mode == EV_PAD_VALID)
        g->pb[a] = g->pe[a] = 0;
    if (!ev_add64(in, g->pb[a], &num) || !ev_add64(num, g->pe[a], &num) ||
        !ev_sub64(num, eff, &num))
        return ev_fail(c, "padding overflows on spatial axis %zu", a);
    if (num < 0)
        return ev_fail(c, "spatial axis %zu: padded input %lld is smaller than the "
                       "window %lld", a, (long long)(num + eff), (long long)eff);
    o = num / s + 1;
    /* the last ceil window must start inside the image or the begin pad */
    int64_t last;
    if (ceil && mode == EV_PAD_NOTSET && num % s != 0 && ev_mul64(o, s, &last) &&
        last < in + g->pb[a])
        o++;
    g->grid[a] = o;
    return 0;
}

/* Products of the extents, and a bound that keeps every position
 * grid * stride - pad + tap * dilation far from int64 overflow. */
static int ev_geom_finish(EvCtx *c, EvGeom *g)
{
    const int64_t lim = INT64_MAX / 4;
    g->k_sz = g->img_sz = g->grid_sz = 1;
    for (size_t a = 0; a < g->n; a++) {
        int64_t t1, t2, span;
        if (g->k[a] < 0 || g->img[a] < 0 || g->grid[a] < 0)
            return ev_fail(c, "negative extent on spatial axis %zu", a);
        if (!mem_mul_size(g->k_sz, (size_t)g->k[a], &g->k_sz) ||
            !mem_mul_size(g->img_sz, (size_t)g->img[a], &g->img_sz) ||
            !mem_mul_size(g->grid_sz, (size_t)g->grid[a], &g->grid_sz))
            return ev_fail(c, "window sizes overflow");
        if (!ev_mul64(g->grid[a], g->s[a], &t1) || !ev_mul64(g->k[a], g->d[a], &t2) ||
            !ev_add64(t1, t2, &span) || span > lim || g->img[a] > lim ||
            g->pb[a] > lim || g->pb[a] < -lim || g->pe[a] > lim || g->pe[a] < -lim)
            return ev_fail(c, "window arithmetic overflows on spatial axis %zu", a);
    }
    return 0;
}

/* Reads the window attributes of a conv or pool over x's spatial axes and
 * derives the grid. wk: the weight's kernel dims (NULL for pools). */
int ev_win_read(EvCtx *c, const EvValue *x, const int64_t *wk, bool ceil,
                EvGeom *g)
{
    int mode;
    memset(g, 0, sizeof *g);
    if (x->rank < 3)
        return ev_fail(c, "input has rank %zu; needs N, C and spatial axes", x->rank);
    g->n = x->rank - 2;
    memcpy(g->img, x->dims + 2, g->n * sizeof *g->img);
    if (ev_read_kernel(c, g, wk) < 0 ||
        ev_spatial_ints(c, "strides", g->n, 1, 1, g->s) < 0 ||
        ev_spatial_ints(c, "dilations", g->n, 1, 1, g->d) < 0 ||
        ev_read_pads(c, g) < 0 || ev_auto_pad(c, &mode) < 0)
        return -1;
    for (size_t a = 0; a < g->n; a++)
        if (ev_win_axis(c, g, a, mode, ceil) < 0)
            return -1;
    return ev_geom_finish(c, g);
}

/* Offset (in image rows of the last axis) of the taps `tap` of grid
 * position o on axes 0..n-2; false when one falls off the image. */
static bool ev_geom_row(const EvGeom *g, const int64_t *tap, const int64_t *o,
                        int64_t *row)
{
    int64_t r = 0;
    for (size_t a = 0; a + 1 < g->n; a++) {
        int64_t p = o[a] * g->s[a] - g->pb[a] + tap[a] * g->d[a];
        if (p < 0 || p >= g->img[a])
            return false;
        r = r * g->img[a] + p;
    }
    *row = r;
    return true;
}

/* im2col: col[(ch * k_sz + tap) * grid_sz + q] = the image value tap `tap`
 * of grid position q reads in channel ch (0 off the image).
 * col2im: the transpose, adding col back onto the image. */
/* The positions j of a line whose tap p = j * s + off falls inside
 * [0, w): [*lo, *hi), clipped to [j0, j1). */
static void ev_line_span(int64_t s, int64_t off, int64_t w, size_t j0, size_t j1, size_t *lo,
                         size_t *hi)
{
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;          /* first j with p >= 0 */
    int64_t b = w - 1 - off < 0 ? 0 : (w - 1 - off) / s + 1; /* first j with p >= w */
    *lo = a < (int64_t)j0 ? j0 : (size_t)a > j1 ? j1 : (size_t)a;
    *hi = b < (int64_t)*lo ? *lo : (size_t)b > j1 ? j1 : (size_t)b;
}

/* im2col of grid columns [q0, q1): col[(ch * k_sz + tap) * (q1 - q0) + q - q0]
 * = the image value tap `tap` of grid position q reads in channel ch (0
 * off the image). Tiles of columns keep the buffer small: the whole grid
 * of a 224 x 224 layer with 64 channels is 231 MB of doubles.
 * col2im: the transpose over the whole grid, adding col onto the image. */
#define EV_DEF_IM2COL(T, SFX)                                                   \
    static void ev_im2col_##SFX(const EvGeom *g, size_t nch, const T *img, T *col, \
                                size_t q0, size_t q1)                           \
    {                                                                           \
        size_t n = g->n, inner = (size_t)g->grid[n - 1];                        \
        int64_t tap[EV_MAX_RANK], o[EV_MAX_RANK], s = g->s[n - 1], w = g->img[n - 1]; \
        for (size_t r = 0; r < nch * g->k_sz; r++) {                            \
            const T *src = img + r / g->k_sz * g->img_sz;                       \
            T *dst = col + r * (q1 - q0);                                       \
            ev_unravel(r % g->k_sz, g->k, n, tap);                              \
            int64_t off = tap[n - 1] * g->d[n - 1] - g->pb[n - 1], row;         \
            ev_unravel(q0 / inner, g->grid, n - 1, o);                          \
            for (size_t q = q0; q < q1;) {                                      \
                size_t j0 = q % inner, j1 = j0 + (q1 - q) < inner ? j0 + (q1 - q) : inner; \
                size_t lo = j1, hi = j1;                                        \
                const T *line = NULL;                                           \
                if (ev_geom_row(g, tap, o, &row)) {                             \
                    line = src + row * w;                                       \
                    ev_line_span(s, off, w, j0, j1, &lo, &hi);                  \
                }                                                               \
                for (size_t j = j0; j < lo; j++)                                \
                    dst[j - j0] = 0;                                            \
                if (s == 1 && hi > lo)                                          \
                    memcpy(dst + lo - j0, line + (int64_t)lo + off, (hi - lo) * sizeof *dst); \
                else                                                            \
                    for (size_t j = lo; j < hi; j++)                            \
                        dst[j - j0] = line[(int64_t)j * s + off];               \
                for (size_t j = hi; j < j1; j++)                                \
                    dst[j - j0] = 0;                                            \
                dst += j1 - j0;                                                 \
                q += j1 - j0;                                                   \
                ev_next_index(o, g->grid, n - 1);                               \
            }                                                                   \
        }                                                                       \
    }

#define EV_DEF_COL2IM(T, SFX)                                                   \
    static void ev_col2im_##SFX(const EvGeom *g, size_t nch, const T *col, T *img) \
    {                                                                           \
        size_t n = g->n, inner = (size_t)g->grid[n - 1];                        \
        size_t outer = g->grid_sz / inner;                                      \
        int64_t tap[EV_MAX_RANK], o[EV_MAX_RANK], s = g->s[n - 1], w = g->img[n - 1]; \
        for (size_t r = 0; r < nch * g->k_sz; r++) {                            \
            T *dst = img + r / g->k_sz * g->img_sz;                             \
            const T *src = col + r * g->grid_sz;                                \
            ev_unravel(r % g->k_sz, g->k, n, tap);                              \
            int64_t off = tap[n - 1] * g->d[n - 1] - g->pb[n - 1], row;         \
            memset(o, 0, n * sizeof *o);                                        \
            for (size_t q = 0; q < outer; q++, src += inner) {                  \
                if (ev_geom_row(g, tap, o, &row)) {                             \
                    T *line = dst + row * w;                                    \
                    for (size_t j = 0; j < inner; j++) {                        \
                        int64_t p = (int64_t)j * s + off;                       \
                        if (p >= 0 && p < w)                                    \
                            line[p] += src[j];                                  \
                    }                                                           \
                }                                                               \
                ev_next_index(o, g->grid, n - 1);                               \
            }                                                                   \
        }                                                                       \
    }

/* Depthwise 2-D conv (one input channel per group) straight from the
 * image: y[q] = sum over taps of w[tap] * img[pos], taps in row-major
 * order. im2col would copy every input value k_sz times. */
#define EV_DEF_DEPTHWISE(T, SFX)                                                \
    static void ev_dw2d_##SFX(const EvGeom *g, const T *img, const T *w, T *y)  \
    {                                                                           \
        int64_t ih = g->img[0], iw = g->img[1], kh = g->k[0], kw = g->k[1];     \
        for (int64_t oh = 0; oh < g->grid[0]; oh++)                             \
            for (int64_t ow = 0; ow < g->grid[1]; ow++) {                       \
                T acc = 0;                                                      \
                for (int64_t a = 0; a < kh; a++) {                              \
                    int64_t h = oh * g->s[0] - g->pb[0] + a * g->d[0];          \
                    if (h < 0 || h >= ih)                                       \
                        continue;                                               \
                    for (int64_t b = 0; b < kw; b++) {                          \
                        int64_t x = ow * g->s[1] - g->pb[1] + b * g->d[1];      \
                        if (x >= 0 && x < iw)                                   \
                            acc += w[a * kw + b] * img[h * iw + x];             \
                    }                                                           \
                }                                                               \
                y[oh * g->grid[1] + ow] = acc;                                  \
            }                                                                   \
    }

EV_DEF_DEPTHWISE(float, f32)
EV_DEF_DEPTHWISE(double, f64)
EV_DEF_IM2COL(float, f32)
EV_DEF_IM2COL(double, f64)
EV_DEF_COL2IM(float, f32)
EV_DEF_COL2IM(double, f64)
EV_DEF_COL2IM(uint64_t, u64)

static void ev_im2col(bool dbl, const EvGeom *g, size_t nch, const void *img, void *col,
                      size_t q0, size_t q1)
{
    if (dbl)
        ev_im2col_f64(g, nch, img, col, q0, q1);
    else
        ev_im2col_f32(g, nch, img, col, q0, q1);
}

static void ev_col2im(bool dbl, const EvGeom *g, size_t nch, const void *col, void *img)
{
    if (dbl)
        ev_col2im_f64(g, nch, col, img);
    else
        ev_col2im_f32(g, nch, col, img);
}

/* ---- Conv, ConvInteger, ConvTranspose --------------------------------- */

/* Checks X [N, C, D...] against W [M, C/group, k...] (or, transposed,
 * W [C, M/group, k...]) and reads group. */
int ev_conv_shapes(EvCtx *c, const EvValue *x, const EvValue *w,
                   bool transposed, size_t *groups)
{
    int64_t g = ev_attr_i(c, "group"), need;
    if (g < 1)
        return ev_fail(c, "group %lld is not positive", (long long)g);
    if (x->rank < 3)
        return ev_fail(c, "input has rank %zu; needs N, C and spatial axes", x->rank);
    if (w->rank != x->rank)
        return ev_fail(c, "weight has rank %zu, input %zu", w->rank, x->rank);
    if (w->dims[0] % g != 0)
        return ev_fail(c, "weight dim 0 (%lld) is not a multiple of group %lld",
                       (long long)w->dims[0], (long long)g);
    if (transposed) {
        if (x->dims[1] != w->dims[0])
            return ev_fail(c, "input has %lld channels, weight %lld",
                           (long long)x->dims[1], (long long)w->dims[0]);
    } else if (!ev_mul64(w->dims[1], g, &need) || need != x->dims[1]) {
        return ev_fail(c, "input has %lld channels, weight expects %lld x group %lld",
                       (long long)x->dims[1], (long long)w->dims[1], (long long)g);
    }
    *groups = (size_t)g;
    return 0;
}

/* An optional bias B: a 1-D tensor of m elements of x's type. */
static int ev_conv_bias(EvCtx *c, size_t i, const EvValue *x, int64_t m, EvValue **b)
{
    if (ev_opt_tensor(c, i, x->dtype, "B", b) < 0)
        return -1;
    if (*b && ((*b)->rank != 1 || (*b)->dims[0] != m))
        return ev_fail(c, "B must be 1-D with %lld elements", (long long)m);
    return 0;
}

/* A 1x1 kernel with unit strides and no pads reads the input in place. */
static bool ev_geom_pointwise(const EvGeom *g)
{
    for (size_t a = 0; a < g->n; a++)
        if (g->k[a] != 1 || g->s[a] != 1 || g->pb[a] != 0 || g->pe[a] != 0)
            return false;
    return true;
}

/* Work below this many multiply-adds runs on the calling thread alone:
 * handing it to the pool costs more. Measured against 2^21 on two
 * threads: squeezenet1_1 2.43 -> 1.87 ms, light_resnet50 104 -> 94. */
#define EV_PAR_MIN_MACS (1u << 18)

static size_t ev_par_threads(EvCtx *c, double macs)
{
    return macs < EV_PAR_MIN_MACS ? 1 : ev_ctx_threads(c);
}

/* Depthwise 2-D convs (one input channel per group) skip im2col; one
 * task per (image, output channel). */
typedef struct EvDwJob {
    const EvGeom *g;
    bool dbl;
    size_t ci, co;
    const void *x, *w;
    void *y;
} EvDwJob;

/* The float depthwise conv of ev_dw2d_f32, with the columns whose taps
 * all fall inside the image (the interior) computed a row at a time: for
 * each tap in the same row-major order, every interior column adds its
 * product, so each element takes the same sums in the same order as the
 * plain loop, and the column loop vectorizes (depthwise convs were a
 * third of mobilenet_v2's run). Border columns go through the plain loop's
 * body. */
enum { EV_DW_ROW = 1024 };

static void ev_dw2d_rows_f32(const EvGeom *g, const float *img, const float *w, float *y)
{
    int64_t ih = g->img[0], iw = g->img[1], kh = g->k[0], kw = g->k[1];
    int64_t s1 = g->s[1], d1 = g->d[1], p1 = g->pb[1], gw = g->grid[1];
    /* interior columns: ow * s1 - p1 >= 0 and ow * s1 - p1 + (kw-1) * d1 < iw */
    int64_t c0 = (p1 + s1 - 1) / s1, last = iw - 1 - (kw - 1) * d1 + p1;
    int64_t c1 = last < 0 ? 0 : last / s1 + 1;
    if (c1 > gw)
        c1 = gw;
    if (c0 > c1)
        c0 = c1;
    float acc[EV_DW_ROW];
    for (int64_t oh = 0; oh < g->grid[0]; oh++) {
        float *yr = y + oh * gw;
        for (int64_t ow = c0; ow < c1; ow++)
            acc[ow - c0] = 0;
        for (int64_t a = 0; a < kh; a++) {
            int64_t h = oh * g->s[0] - g->pb[0] + a * g->d[0];
            if (h < 0 || h >= ih)
                continue;
            for (int64_t b = 0; b < kw; b++) {
                float wv = w[a * kw + b];
                const float *xr = img + h * iw + b * d1 - p1;
                for (int64_t ow = c0; ow < c1; ow++)
                    acc[ow - c0] += wv * xr[ow * s1];
            }
        }
        for (int64_t ow = c0; ow < c1; ow++)
            yr[ow] = acc[ow - c0];
        for (int64_t ow = 0; ow < gw; ow++) {
            if (ow == c0)
                ow = c1;
            if (ow >= gw)
                break;
            float sum = 0;
            for (int64_t a = 0; a < kh; a++) {
                int64_t h = oh * g->s[0] - g->pb[0] + a * g->d[0];
                if (h < 0 || h >= ih)
                    continue;
                for (int64_t b = 0; b < kw; b++) {
                    int64_t x = ow * s1 - p1 + b * d1;
                    if (x >= 0 && x < iw)
                        sum += w[a * kw + b] * img[h * iw + x];
                }
            }
            yr[ow] = sum;
        }
    }
}

static void ev_dw_task(void *ctx, size_t t, size_t worker)
{
    const EvDwJob *j = ctx;
    size_t i = t / j->co, m = t % j->co, mg = j->co / j->ci;
    size_t esz = j->dbl ? sizeof(double) : sizeof(float);
    const char *xc = (const char *)j->x + (i * j->ci + m / mg) * j->g->img_sz * esz;
    const char *wm = (const char *)j->w + m * j->g->k_sz * esz;
    char *ym = (char *)j->y + (i * j->co + m) * j->g->grid_sz * esz;
    if (j->dbl)
        ev_dw2d_f64(j->g, (const double *)xc, (const double *)wm, (double *)ym);
    else if (j->g->grid[1] <= EV_DW_ROW)
        ev_dw2d_rows_f32(j->g, (const float *)xc, (const float *)wm, (float *)ym);
    else
        ev_dw2d_f32(j->g, (const float *)xc, (const float *)wm, (float *)ym);
}

static void ev_conv_depthwise(size_t threads, bool dbl, const EvGeom *g, size_t nb,
                              size_t ci, size_t co, const void *x, const void *w, void *y)
{
    EvDwJob j = {g, dbl, ci, co, x, w, y};
    ev_parallel(threads, nb * co, ev_dw_task, &j);
}

/* Columns per im2col tile: about EV_TILE_BYTES of buffer, a share of at
 * most 1/EV_CONV_TILES of the grid, never fewer than EV_TILE_MIN_COLS
 * (two whole tiles of ev_sgemm). Sizes, never the thread count, decide
 * the tiles: light_densenet121's 14 x 14 layers were one task each at
 * the former 256 columns, and its second thread idle. */
enum { EV_TILE_BYTES = 2 << 20, EV_TILE_MIN_COLS = 64, EV_CONV_TILES = 8 };

static size_t ev_tile_cols(size_t kdim, size_t esz, size_t grid_sz)
{
    size_t per = kdim > 0 ? kdim * esz : 1, cols = EV_TILE_BYTES / per;
    /* at least EV_CONV_TILES tiles of a large grid, so that a pointwise
     * conv, whose whole grid fits the buffer, still gives each thread
     * work (a multiple of 32 columns: whole tiles of ev_sgemm) */
    size_t share = (grid_sz + EV_CONV_TILES - 1) / EV_CONV_TILES;
    share = (share + 31) / 32 * 32;
    if (cols > share)
        cols = share;
    if (cols < EV_TILE_MIN_COLS)
        cols = EV_TILE_MIN_COLS;
    return cols < grid_sz ? cols : grid_sz;
}

/* One conv as tasks: (image, group, tile of grid columns, block of
 * EV_CONV_ROWS output channels). A block redoes its tile's im2col, which
 * costs 1/EV_CONV_ROWS of its gemm; the blocks let a late layer (7 x 7
 * grid, one tile, 512 channels) use more than one thread. (Blocks of 16
 * to 128 rows, enough for EV_CONV_TILES tasks, made light_densenet121
 * 116 -> 139 ms on one thread and slower on two as well.) */
enum { EV_CONV_ROWS = 128 };

typedef struct EvConvJob {
    const EvGeom *g;
    bool dbl, direct;
    size_t esz, ci, co, cg, mg, kdim, groups, tile, n_tiles, n_rows;
    const char *x, *w;
    char *y, *col;            /* col: one tile buffer per worker */
    size_t col_bytes;
} EvConvJob;

static void ev_conv_task(void *ctx, size_t t, size_t worker)
{
    const EvConvJob *j = ctx;
    const EvGeom *g = j->g;
    size_t r0 = t % j->n_rows * EV_CONV_ROWS, rest = t / j->n_rows;
    size_t q0 = rest % j->n_tiles * j->tile, ig = rest / j->n_tiles;
    size_t gi = ig % j->groups, i = ig / j->groups;
    size_t q1 = q0 + j->tile < g->grid_sz ? q0 + j->tile : g->grid_sz;
    size_t rows = r0 + EV_CONV_ROWS < j->mg ? EV_CONV_ROWS : j->mg - r0;
    const char *xg = j->x + (i * j->ci + gi * j->cg) * g->img_sz * j->esz;
    const char *wg = j->w + (gi * j->mg + r0) * j->kdim * j->esz;
    char *yg = j->y + (i * j->co + gi * j->mg + r0) * g->grid_sz * j->esz;
    const void *src = xg + q0 * j->esz;
    size_t ldb = g->grid_sz;
    if (!j->direct) {
        char *col = j->col + worker * j->col_bytes;
        ev_im2col(j->dbl, g, j->cg, xg, col, q0, q1);
        src = col;
        ldb = q1 - q0;
    }
    ev_gemm_do(j->dbl, false, false, rows, q1 - q0, j->kdim, 1.0, wg, j->kdim, src, ldb,
               0.0, yg + q0 * j->esz, g->grid_sz);
}

/* Per (image, group, tile of grid columns): im2col of the tile (none for
 * a pointwise kernel, which reads the input in place), then a gemm into
 * y's columns. The tiles are the same at any thread count. */
static int ev_conv_gemm(EvCtx *c, bool dbl, const EvGeom *g, size_t nb, size_t ci,
                        size_t co, size_t groups, const void *x, const void *w,
                        void *y)
{
    EvConvJob j = {g, dbl, ev_geom_pointwise(g) || ci / groups == 0,
                   dbl ? sizeof(double) : sizeof(float), ci, co, ci / groups, co / groups,
                   0, groups, 0, 0, 0, x, w, y, NULL, 0};
    size_t ncol, n_tasks;
    if (!mem_mul_size(j.cg, g->k_sz, &j.kdim))
        return ev_fail(c, "im2col buffer size overflows");
    j.tile = ev_tile_cols(j.kdim, j.esz, g->grid_sz);
    if (g->grid_sz == 0 || j.mg == 0 || nb == 0)
        return 0;
    j.n_tiles = (g->grid_sz + j.tile - 1) / j.tile;
    j.n_rows = (j.mg + EV_CONV_ROWS - 1) / EV_CONV_ROWS;
    if (!mem_mul_size(nb * groups, j.n_tiles * j.n_rows, &n_tasks) ||
        !mem_mul_size(j.kdim, j.tile, &ncol) || !mem_mul_size(ncol, j.esz, &j.col_bytes) ||
        ev_gemm_fits(c, j.mg, j.tile, j.kdim, j.kdim, g->grid_sz, g->grid_sz) < 0)
        return ev_fail(c, "im2col buffer size overflows");
    size_t threads = ev_par_threads(c, (double)nb * (double)co * (double)j.kdim *
                                           (double)g->grid_sz);
    if (threads > n_tasks)
        threads = n_tasks;
    if (!j.direct && !(j.col = ev_tmp_raw(c, threads * (ncol ? ncol : 1), j.esz)))
        return -1;
    ev_parallel(threads, n_tasks, ev_conv_task, &j);
    return 0;
}

/* y [nb, co, grid] = conv(x [nb, ci, img], w [co, ci/groups, k]) + b. */
int ev_conv_core(EvCtx *c, bool dbl, const EvGeom *g, size_t nb, size_t ci,
                 size_t co, size_t groups, const void *x, const void *w,
                 const void *b, void *y)
{
    if (ci == groups && groups > 1 && g->n == 2)
        ev_conv_depthwise(ev_par_threads(c, (double)nb * (double)co * (double)g->k_sz *
                                               (double)g->grid_sz),
                          dbl, g, nb, ci, co, x, w, y);
    else if (ev_conv_gemm(c, dbl, g, nb, ci, co, groups, x, w, y) < 0)
        return -1;
    if (b)
        ev_add_bias(dbl, y, nb, co, g->grid_sz, b);
    return 0;
}

static EvValue *ev_conv_out_as(EvCtx *c, int32_t dtype, const EvValue *x, int64_t m,
                               const EvGeom *g, bool zero)
{
    int64_t dims[EV_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = m;
    memcpy(dims + 2, g->grid, g->n * sizeof *dims);
    return zero ? ev_out_tensor(c, 0, dtype, x->rank, dims)
                : ev_out_tensor_raw(c, 0, dtype, x->rank, dims);
}

/* The output [N, M, grid...] of a conv. */
EvValue *ev_conv_out(EvCtx *c, int32_t dtype, const EvValue *x, int64_t m,
                     const EvGeom *g)
{
    return ev_conv_out_as(c, dtype, x, m, g, true);
}

static int ev_conv(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *w = ev_in_tensor(c, 1), *b, *y;
    EvGeom g;
    size_t groups;
    if (!x || !w || ev_need_real(c, x, "X") < 0 || ev_same_type(c, x, w, "W") < 0 ||
        ev_conv_shapes(c, x, w, false, &groups) < 0 ||
        ev_conv_bias(c, 2, x, w->dims[0], &b) < 0 ||
        ev_win_read(c, x, w->dims + 2, false, &g) < 0 ||
        !(y = ev_conv_out_as(c, x->dtype, x, w->dims[0], &g, false)))   /* all written */
        return -1;
    if (y->numel == 0)
        return 0;
    bool dbl = ev_in_double(x->dtype);
    const void *xv = ev_real_in(c, x, dbl), *wv = ev_real_in(c, w, dbl);
    const void *bv = b ? ev_real_in(c, b, dbl) : NULL;
    void *yv = ev_real_out_raw(c, y, dbl);
    if (!xv || !wv || (b && !bv) || !yv ||
        ev_conv_core(c, dbl, &g, (size_t)x->dims[0], (size_t)x->dims[1],
                     (size_t)w->dims[0], groups, xv, wv, bv, yv) < 0)
        return -1;
    ev_real_store(y, yv, dbl);
    return 0;
}

/* Splits a ConvTranspose total padding as the spec does: SAME_UPPER puts
 * the smaller half first, anything else the larger. */
static void ev_convt_split(EvGeom *g, size_t a, int64_t total, int mode)
{
    int64_t half = ev_floordiv(total, 2);
    if (mode == EV_PAD_SAME_UPPER) {
        g->pb[a] = half;
        g->pe[a] = total - half;
    } else {
        g->pb[a] = total - half;
        g->pe[a] = half;
    }
}

/* output_shape attribute: the spatial extents (or the full shape, whose
 * last n values are taken). NULL when absent. */
static int ev_convt_out_shape(EvCtx *c, size_t n, const int64_t **os)
{
    long cnt = ev_attr_ints(c, "output_shape", os);
    if (cnt <= 0) {
        *os = NULL;
        return 0;
    }
    if ((size_t)cnt != n && (size_t)cnt != n + 2)
        return ev_fail(c, "'output_shape' has %ld values for %zu spatial axes", cnt, n);
    *os += (size_t)cnt - n;
    for (size_t a = 0; a < n; a++)
        if ((*os)[a] < 0)
            return ev_fail(c, "'output_shape' value %lld is negative", (long long)(*os)[a]);
    return 0;
}

/* ConvTranspose geometry: the grid is X's spatial extents, the image the
 * output, from output_shape, auto_pad or pads. */
static int ev_convt_geom(EvCtx *c, const EvValue *x, const EvValue *w, EvGeom *g)
{
    int64_t opad[EV_MAX_RANK];
    const int64_t *os;
    int mode;
    memset(g, 0, sizeof *g);
    g->n = x->rank - 2;
    memcpy(g->grid, x->dims + 2, g->n * sizeof *g->grid);
    if (ev_read_kernel(c, g, w->dims + 2) < 0 ||
        ev_spatial_ints(c, "strides", g->n, 1, 1, g->s) < 0 ||
        ev_spatial_ints(c, "dilations", g->n, 1, 1, g->d) < 0 ||
        ev_spatial_ints(c, "output_padding", g->n, 0, 0, opad) < 0 ||
        ev_read_pads(c, g) < 0 || ev_auto_pad(c, &mode) < 0 ||
        ev_convt_out_shape(c, g->n, &os) < 0)
        return -1;
    for (size_t a = 0; a < g->n; a++) {
        int64_t eff, full, out;
        /* full = s * (in - 1) + output_padding + eff: the unpadded extent */
        if (ev_win_span(c, g, a, &eff) < 0)
            return -1;
        if (!ev_mul64(g->s[a], g->grid[a] - 1, &full) || !ev_add64(full, opad[a], &full) ||
            !ev_add64(full, eff, &full))
            return ev_fail(c, "output extent overflows on spatial axis %zu", a);
        if (os || mode == EV_PAD_SAME_UPPER || mode == EV_PAD_SAME_LOWER) {
            if (os)
                out = os[a];
            else if (!ev_mul64(g->grid[a], g->s[a], &out))
                return ev_fail(c, "output extent overflows on spatial axis %zu", a);
            ev_convt_split(g, a, full - out, mode);
        } else {
            if (mode == EV_PAD_VALID)
                g->pb[a] = g->pe[a] = 0;
            out = full - g->pb[a] - g->pe[a];
        }
        if (out < 0)
            return ev_fail(c, "spatial axis %zu: output extent %lld is negative", a,
                           (long long)out);
        g->img[a] = out;
    }
    return ev_geom_finish(c, g);
}

/* y [nb, co, img] = convtranspose(x [nb, ci, grid], w [ci, co/groups, k]):
 * per group, col = w^T x, then col2im adds the columns onto y. */
static int ev_convt_core(EvCtx *c, bool dbl, const EvGeom *g, size_t nb, size_t ci,
                         size_t co, size_t groups, const void *x, const void *w,
                         const void *b, void *y)
{
    size_t esz = dbl ? sizeof(double) : sizeof(float);
    size_t cg = ci / groups, mg = co / groups, kdim, ncol;
    void *col;
    if (!mem_mul_size(mg, g->k_sz, &kdim) || !mem_mul_size(kdim, g->grid_sz, &ncol))
        return ev_fail(c, "col2im buffer size overflows");
    if (!(col = ev_tmp(c, ncol ? ncol : 1, esz)))
        return -1;
    for (size_t i = 0; g->grid_sz > 0 && i < nb; i++)
        for (size_t gi = 0; gi < groups; gi++) {
            const char *xg = (const char *)x + (i * ci + gi * cg) * g->grid_sz * esz;
            const char *wg = (const char *)w + gi * cg * kdim * esz;
            char *yg = (char *)y + (i * co + gi * mg) * g->img_sz * esz;
            if (ev_gemm_r(c, dbl, true, false, kdim, g->grid_sz, cg, 1.0, wg, kdim, xg,
                          g->grid_sz, 0.0, col, g->grid_sz) < 0)
                return -1;
            if (kdim > 0)
                ev_col2im(dbl, g, mg, col, yg);
        }
    if (b)
        ev_add_bias(dbl, y, nb, co, g->img_sz, b);
    return 0;
}

static int ev_convtranspose(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *w = ev_in_tensor(c, 1), *b, *y;
    EvGeom g;
    size_t groups;
    int64_t m, dims[EV_MAX_RANK];
    if (!x || !w || ev_need_real(c, x, "X") < 0 || ev_same_type(c, x, w, "W") < 0 ||
        ev_conv_shapes(c, x, w, true, &groups) < 0)
        return -1;
    if (!ev_mul64(w->dims[1], (int64_t)groups, &m))
        return ev_fail(c, "output channels overflow");
    if (ev_conv_bias(c, 2, x, m, &b) < 0 || ev_convt_geom(c, x, w, &g) < 0)
        return -1;
    dims[0] = x->dims[0];
    dims[1] = m;
    memcpy(dims + 2, g.img, g.n * sizeof *dims);
    if (!(y = ev_out_tensor(c, 0, x->dtype, x->rank, dims)))
        return -1;
    if (y->numel == 0)
        return 0;
    bool dbl = ev_in_double(x->dtype);
    const void *xv = ev_real_in(c, x, dbl), *wv = ev_real_in(c, w, dbl);
    const void *bv = b ? ev_real_in(c, b, dbl) : NULL;
    void *yv = ev_real_out(c, y, dbl);
    if (!xv || !wv || (b && !bv) || !yv ||
        ev_convt_core(c, dbl, &g, (size_t)x->dims[0], (size_t)x->dims[1], (size_t)m,
                      groups, xv, wv, bv, yv) < 0)
        return -1;
    ev_real_store(y, yv, dbl);
    return 0;
}

/* ---- DeformConv ------------------------------------------------------- */

/* Deformable sampling is multilinear over 2^n corners; more spatial axes
 * than this make no sense. */
#define EV_DEFORM_MAX_AXES 8

/* The image value at fractional position pos (0 outside; corners off the
 * image count 0, as torchvision's bilinear sampling does). */
static double ev_interp(const double *img, const int64_t *dims, size_t n,
                        const double *pos)
{
    int64_t lo[EV_DEFORM_MAX_AXES];
    double fr[EV_DEFORM_MAX_AXES], sum = 0;
    for (size_t a = 0; a < n; a++) {
        if (!(pos[a] > -1.0 && pos[a] < (double)dims[a]))
            return 0;
        double f = floor(pos[a]);
        lo[a] = (int64_t)f;
        fr[a] = pos[a] - f;
    }
    for (unsigned corner = 0; corner < (1u << n); corner++) {
        double wgt = 1;
        int64_t off = 0;
        size_t a;
        for (a = 0; a < n; a++) {
            unsigned hi = (corner >> a) & 1u;
            int64_t p = lo[a] + (int64_t)hi;
            if (p < 0 || p >= dims[a])
                break;
            wgt *= hi ? fr[a] : 1.0 - fr[a];
            off = off * dims[a] + p;
        }
        if (a == n)
            sum += wgt * img[off];
    }
    return sum;
}

/* The inputs of one DeformConv, in double. */
typedef struct EvDeform {
    const EvGeom *g;
    size_t ci, og;              /* input channels, offset groups */
    const double *x, *off, *mask;
} EvDeform;

/* col rows (channel, tap) of image i, channels c0..c0+cg: the sampled
 * (and masked) input values at each grid position. */
static void ev_deform_col(const EvDeform *df, size_t i, size_t c0, size_t cg,
                          double *col)
{
    const EvGeom *g = df->g;
    size_t n = g->n, kn = g->k_sz, per_og = df->ci / df->og;
    int64_t tap[EV_MAX_RANK], o[EV_MAX_RANK];
    double pos[EV_DEFORM_MAX_AXES];
    for (size_t r = 0; r < cg * kn; r++) {
        size_t ch = c0 + r / kn, t = r % kn, og = ch / per_og;
        const double *img = df->x + (i * df->ci + ch) * g->img_sz;
        const double *off = df->off + ((i * df->og + og) * kn + t) * n * g->grid_sz;
        const double *mask =
            df->mask ? df->mask + ((i * df->og + og) * kn + t) * g->grid_sz : NULL;
        double *row = col + r * g->grid_sz;
        ev_unravel(t, g->k, n, tap);
        memset(o, 0, n * sizeof *o);
        for (size_t q = 0; q < g->grid_sz; q++) {
            for (size_t a = 0; a < n; a++)
                pos[a] = (double)(o[a] * g->s[a] - g->pb[a] + tap[a] * g->d[a]) +
                         off[a * g->grid_sz + q];
            row[q] = ev_interp(img, g->img, n, pos) * (mask ? mask[q] : 1.0);
            ev_next_index(o, g->grid, n);
        }
    }
}

/* Fails unless t has dims [N, per, grid...]. */
static int ev_deform_check(EvCtx *c, const EvValue *t, const EvValue *x, size_t per,
                           const EvGeom *g, const char *what)
{
    bool ok = t->rank == x->rank && t->dims[0] == x->dims[0] &&
              t->dims[1] >= 0 && (size_t)t->dims[1] == per;
    for (size_t a = 0; ok && a < g->n; a++)
        ok = t->dims[a + 2] == g->grid[a];
    if (!ok)
        return ev_fail(c, "%s must have shape [N, %zu, output spatial dims]", what, per);
    return 0;
}

static int ev_deformconv(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *w = ev_in_tensor(c, 1), *off = ev_in_tensor(c, 2);
    EvValue *b, *mask, *y;
    EvGeom g;
    size_t groups;
    int64_t og = ev_attr_i(c, "offset_group");
    if (!x || !w || !off || ev_need_real(c, x, "X") < 0 || ev_same_type(c, x, w, "W") < 0 ||
        ev_same_type(c, x, off, "offset") < 0 ||
        ev_conv_shapes(c, x, w, false, &groups) < 0 ||
        ev_conv_bias(c, 3, x, w->dims[0], &b) < 0 ||
        ev_opt_tensor(c, 4, x->dtype, "mask", &mask) < 0 ||
        ev_win_read(c, x, w->dims + 2, false, &g) < 0)
        return -1;
    if (og < 1 || x->dims[1] % og != 0)
        return ev_fail(c, "offset_group %lld does not divide %lld channels",
                       (long long)og, (long long)x->dims[1]);
    if (g.n > EV_DEFORM_MAX_AXES)
        return ev_fail(c, "%zu spatial axes; at most %d supported", g.n,
                       EV_DEFORM_MAX_AXES);
    size_t per;
    if (!mem_mul_size((size_t)og, g.k_sz, &per) ||
        ev_deform_check(c, off, x, per * g.n, &g, "offset") < 0 ||
        (mask && ev_deform_check(c, mask, x, per, &g, "mask") < 0) ||
        !(y = ev_conv_out(c, x->dtype, x, w->dims[0], &g)))
        return -1;
    if (y->numel == 0)
        return 0;
    size_t nb = (size_t)x->dims[0], ci = (size_t)x->dims[1], co = (size_t)w->dims[0];
    size_t cg = ci / groups, mg = co / groups, kdim = cg * g.k_sz, ncol;
    EvDeform df = {&g, ci, (size_t)og, ev_real_in(c, x, true), ev_real_in(c, off, true),
                   mask ? ev_real_in(c, mask, true) : NULL};
    const double *wv = ev_real_in(c, w, true), *bv = b ? ev_real_in(c, b, true) : NULL;
    double *yv = ev_real_out(c, y, true), *col;
    if (!mem_mul_size(kdim, g.grid_sz, &ncol) || !(col = ev_tmp(c, ncol ? ncol : 1, sizeof *col)))
        return ev_fail(c, "sampling buffer too large");
    if (!df.x || !df.off || (mask && !df.mask) || !wv || (b && !bv) || !yv)
        return -1;
    for (size_t i = 0; i < nb; i++)
        for (size_t gi = 0; gi < groups; gi++) {
            ev_deform_col(&df, i, gi * cg, cg, col);
            if (ev_gemm_r(c, true, false, false, mg, g.grid_sz, kdim, 1.0,
                          wv + gi * mg * kdim, kdim, col, g.grid_sz, 0.0,
                          yv + (i * co + gi * mg) * g.grid_sz, g.grid_sz) < 0)
                return -1;
        }
    if (b)
        ev_add_bias(true, yv, nb, co, g.grid_sz, bv);
    ev_real_store(y, yv, true);
    return 0;
}

/* ---- Col2Im ------------------------------------------------------------ */

/* Reads image_shape and block_shape (inputs 1, 2) and the attributes into
 * g, whose grid is the block positions. */
static int ev_col2im_geom(EvCtx *c, EvGeom *g)
{
    size_t ni, nk;
    int64_t *img = ev_in_ints(c, 1, &ni), *blk = ev_in_ints(c, 2, &nk);
    memset(g, 0, sizeof *g);
    if (!img || !blk)
        return -1;
    if (ni != nk || ni == 0 || ni > EV_MAX_RANK - 2)
        return ev_fail(c, "image_shape (%zu) and block_shape (%zu) must have the same "
                       "1..%d values", ni, nk, EV_MAX_RANK - 2);
    g->n = ni;
    for (size_t a = 0; a < ni; a++) {
        if (img[a] < 0 || blk[a] < 1)
            return ev_fail(c, "bad image_shape %lld or block_shape %lld",
                           (long long)img[a], (long long)blk[a]);
        g->img[a] = img[a];
        g->k[a] = blk[a];
    }
    if (ev_spatial_ints(c, "strides", ni, 1, 1, g->s) < 0 ||
        ev_spatial_ints(c, "dilations", ni, 1, 1, g->d) < 0 || ev_read_pads(c, g) < 0)
        return -1;
    for (size_t a = 0; a < ni; a++)
        if (ev_win_axis(c, g, a, EV_PAD_NOTSET, false) < 0)
            return -1;
    return ev_geom_finish(c, g);
}

/* Col2Im over nb images of nch channels, component `comp` of `ncomp`
 * (complex numbers run as two real passes), in double. */
static int ev_col2im_real(EvCtx *c, const EvGeom *g, const EvValue *x, EvValue *y,
                          size_t nb, size_t nch, size_t ncomp, size_t comp)
{
    double *in = ev_tmp(c, x->numel, sizeof *in), *out = ev_tmp(c, y->numel, sizeof *out);
    if (!in || !out)
        return -1;
    for (size_t k = 0; k < x->numel; k++)
        in[k] = ncomp == 1 ? ev_get_f(x, k)
                : x->dtype == IR_COMPLEX64 ? ((const float *)x->data)[2 * k + comp]
                                           : ((const double *)x->data)[2 * k + comp];
    for (size_t i = 0; i < nb; i++)
        ev_col2im_f64(g, nch, in + i * nch * g->k_sz * g->grid_sz,
                      out + i * nch * g->img_sz);
    for (size_t k = 0; k < y->numel; k++) {
        if (ncomp == 1)
            ev_set_f(y, k, out[k]);
        else if (y->dtype == IR_COMPLEX64)
            ((float *)y->data)[2 * k + comp] = (float)out[k];
        else
            ((double *)y->data)[2 * k + comp] = out[k];
    }
    return 0;
}

static int ev_col2im_op(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *y;
    EvGeom g;
    int64_t dims[EV_MAX_RANK];
    if (!x || ev_col2im_geom(c, &g) < 0)
        return -1;
    if (x->rank != 3 || x->dims[1] % (int64_t)g.k_sz != 0 ||
        x->dims[2] != (int64_t)g.grid_sz)
        return ev_fail(c, "input must be [N, C * %zu, %zu] for these blocks", g.k_sz,
                       g.grid_sz);
    if (x->dtype == IR_STRING)
        return ev_fail(c, "strings cannot be summed");
    size_t nb = (size_t)x->dims[0], nch = (size_t)x->dims[1] / g.k_sz;
    dims[0] = x->dims[0];
    dims[1] = (int64_t)nch;
    memcpy(dims + 2, g.img, g.n * sizeof *dims);
    if (!(y = ev_out_tensor(c, 0, x->dtype, g.n + 2, dims)))
        return -1;
    if (y->numel == 0 || x->numel == 0)
        return 0;
    if (x->dtype == IR_COMPLEX64 || x->dtype == IR_COMPLEX128)
        return ev_col2im_real(c, &g, x, y, nb, nch, 2, 0) < 0 ? -1
               : ev_col2im_real(c, &g, x, y, nb, nch, 2, 1);
    if (ev_dtype_is_float(x->dtype))
        return ev_col2im_real(c, &g, x, y, nb, nch, 1, 0);
    /* integers and bool: exact wrapping sums (bool: any true) */
    uint64_t *in = ev_u64_in(c, x), *out = ev_tmp(c, y->numel, sizeof *out);
    if (!in || !out)
        return -1;
    for (size_t i = 0; i < nb; i++)
        ev_col2im_u64(&g, nch, in + i * nch * g.k_sz * g.grid_sz, out + i * nch * g.img_sz);
    ev_u64_store(y, out);
    return 0;
}

/* ---- CausalConvWithState ---------------------------------------------- */

/* Depthwise causal conv of input [B, C, L] with weight [C, 1, K] over the
 * sequence past_state (or zeros) ++ input; present_state is the last K-1
 * values of that sequence. */
static int ev_causalconv(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *w = ev_in_tensor(c, 1), *b, *past, *y, *st;
    if (!x || !w || ev_need_real(c, x, "input") < 0 || ev_same_type(c, x, w, "weight") < 0)
        return -1;
    const char *act = ev_attr_s(c, "activation");
    bool silu = act && (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0);
    if (!silu && act && strcmp(act, "none") != 0)
        return ev_fail(c, "activation '%s' is not none, silu or swish", act);
    if (x->rank != 3 || w->rank != 3 || w->dims[0] != x->dims[1] || w->dims[1] != 1 ||
        w->dims[2] < 1)
        return ev_fail(c, "input must be [B, C, L] and weight [C, 1, K]");
    int64_t bn = x->dims[0], ch = x->dims[1], len = x->dims[2], k = w->dims[2];
    int64_t sd[3] = {bn, ch, k - 1};
    if (ev_conv_bias(c, 2, x, ch, &b) < 0 ||
        ev_opt_tensor(c, 3, x->dtype, "past_state", &past) < 0)
        return -1;
    if (past && (past->rank != 3 || memcmp(past->dims, sd, sizeof sd) != 0))
        return ev_fail(c, "past_state must be [B, C, K-1]");
    if (!(y = ev_out_tensor(c, 0, x->dtype, 3, x->dims)) ||
        !(st = ev_out_tensor(c, 1, x->dtype, 3, sd)))
        return -1;
    const double *xv = ev_real_in(c, x, true), *wv = ev_real_in(c, w, true);
    const double *bv = b ? ev_real_in(c, b, true) : NULL;
    const double *pv = past ? ev_real_in(c, past, true) : NULL;
    double *yv = ev_real_out(c, y, true), *sv = ev_real_out(c, st, true);
    double *seq = ev_tmp(c, (size_t)(k - 1 + len) + 1, sizeof *seq);
    if (!xv || !wv || (b && !bv) || (past && !pv) || !yv || !sv || !seq)
        return -1;
    for (int64_t r = 0; r < bn * ch; r++) {
        int64_t chan = r % ch;
        for (int64_t t = 0; t < k - 1; t++)
            seq[t] = pv ? pv[r * (k - 1) + t] : 0.0;
        memcpy(seq + k - 1, xv + r * len, (size_t)len * sizeof *seq);
        for (int64_t t = 0; t < len; t++) {
            double v = bv ? bv[chan] : 0.0;
            for (int64_t j = 0; j < k; j++)
                v += wv[chan * k + j] * seq[t + j];
            yv[r * len + t] = silu ? v / (1.0 + exp(-v)) : v;
        }
        memcpy(sv + r * (k - 1), seq + len, (size_t)(k - 1) * sizeof *seq);
    }
    ev_real_store(y, yv, true);
    ev_real_store(st, sv, true);
    return 0;
}

/* ---- pooling ----------------------------------------------------------- */

enum { EV_POOL_MAX, EV_POOL_AVG, EV_POOL_LP };

typedef struct EvPool {
    int mode;
    bool with_pad;      /* AveragePool: count_include_pad */
    double p;           /* LpPool */
    bool col_major;     /* MaxPool Indices: storage_order 1 */
} EvPool;

/* Per axis and grid position: the taps [lo, hi) that fall inside the
 * image, and how many fall inside the padded image. */
typedef struct EvTaps {
    int64_t *lo[EV_MAX_RANK], *hi[EV_MAX_RANK], *padded[EV_MAX_RANK];
} EvTaps;

/* Ceiling of a / b for a >= 0, b > 0. */
static int64_t ev_ceildiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static void ev_taps_axis(const EvGeom *g, size_t a, int64_t o, int64_t *lo,
                         int64_t *hi, int64_t *padded)
{
    int64_t start = o * g->s[a] - g->pb[a], d = g->d[a], k = g->k[a], in = g->img[a];
    int64_t end = in + g->pe[a] - 1 - start;   /* last padded position, relative */
    *lo = start >= 0 ? 0 : ev_ceildiv(-start, d);
    *hi = start <= in - 1 ? (in - 1 - start) / d + 1 : 0;
    if (*hi > k)
        *hi = k;
    if (*hi < *lo)
        *hi = *lo;
    *padded = end >= 0 ? end / d + 1 : 0;
    if (*padded > k)
        *padded = k;
}

static int ev_taps_build(EvCtx *c, const EvGeom *g, EvTaps *t)
{
    for (size_t a = 0; a < g->n; a++) {
        size_t m = (size_t)g->grid[a];
        int64_t *v = ev_tmp(c, 3 * m + 1, sizeof *v);
        if (!v)
            return -1;
        t->lo[a] = v;
        t->hi[a] = v + m;
        t->padded[a] = v + 2 * m;
        for (size_t o = 0; o < m; o++)
            ev_taps_axis(g, a, (int64_t)o, &t->lo[a][o], &t->hi[a][o], &t->padded[a][o]);
    }
    return 0;
}

/* One pooled value at grid position o of an image plane x; *arg gets the
 * plane offset of the maximum (MaxPool), -1 when the window is empty. */
static double ev_pool_window(const EvGeom *g, const EvPool *pp, const EvTaps *t,
                             const int64_t *o, const double *x, int64_t *arg)
{
    size_t n = g->n;
    int64_t lo[EV_MAX_RANK], hi[EV_MAX_RANK], tap[EV_MAX_RANK];
    double cnt = 1, padded = 1, acc = pp->mode == EV_POOL_MAX ? -INFINITY : 0.0;
    bool empty = false;
    *arg = -1;
    for (size_t a = 0; a < n; a++) {
        lo[a] = t->lo[a][o[a]];
        hi[a] = t->hi[a][o[a]];
        tap[a] = lo[a];
        empty |= hi[a] <= lo[a];
        cnt *= (double)(hi[a] - lo[a]);
        padded *= (double)t->padded[a][o[a]];
    }
    while (!empty) {
        int64_t off = 0;
        for (size_t a = 0; a < n; a++)
            off = off * g->img[a] + o[a] * g->s[a] - g->pb[a] + tap[a] * g->d[a];
        double v = x[off];
        if (pp->mode == EV_POOL_MAX) {
            if (*arg < 0 || v > acc) {
                acc = v;
                *arg = off;
            }
        } else if (pp->mode == EV_POOL_AVG) {
            acc += v;
        } else {
            acc += pp->p == 2.0 ? v * v : pp->p == 1.0 ? fabs(v) : pow(fabs(v), pp->p);
        }
        size_t a = n;
        while (a-- > 0 && ++tap[a] >= hi[a])
            tap[a] = lo[a];
        empty = a == (size_t)-1;
    }
    if (pp->mode == EV_POOL_AVG)
        return acc / (pp->with_pad ? padded : cnt);
    if (pp->mode == EV_POOL_LP)
        return pp->p == 2.0 ? sqrt(acc) : pp->p == 1.0 ? acc : pow(acc, 1.0 / pp->p);
    return acc;
}

/* The Indices value of plane offset off in plane `plane`: row-major, or
 * with the spatial axes column-major for storage_order 1. */
static int64_t ev_pool_index(const EvGeom *g, bool col_major, size_t plane, int64_t off)
{
    int64_t idx = off;
    if (col_major) {
        int64_t pos[EV_MAX_RANK], mul = 1;
        ev_unravel((size_t)off, g->img, g->n, pos);
        idx = 0;
        for (size_t a = 0; a < g->n; a++) {
            idx += pos[a] * mul;
            mul *= g->img[a];
        }
    }
    return (int64_t)(plane * g->img_sz) + idx;
}

/* One 2-D window of ev_pool_window without its odometer: the same taps
 * in the same order, so the same result (a profile of squeezenet1_1 put
 * 18% of a run in the general window). */
#define EV_DEF_POOL_WINDOW2(T, SFX)                                             \
    static double ev_pool_window2_##SFX(const EvGeom *g, const EvPool *pp,      \
                                        const EvTaps *t, size_t oh, size_t ow,   \
                                        const T *x, int64_t *arg)                \
    {                                                                           \
        int64_t lo0 = t->lo[0][oh], hi0 = t->hi[0][oh];                         \
        int64_t lo1 = t->lo[1][ow], hi1 = t->hi[1][ow];                         \
        int64_t h0 = (int64_t)oh * g->s[0] - g->pb[0];                          \
        int64_t w0 = (int64_t)ow * g->s[1] - g->pb[1];                          \
        double acc = pp->mode == EV_POOL_MAX ? -INFINITY : 0.0;                 \
        *arg = -1;                                                              \
        for (int64_t a = lo0; a < hi0 && lo1 < hi1; a++) {                      \
            const T *row = x + (h0 + a * g->d[0]) * g->img[1];                  \
            for (int64_t b = lo1; b < hi1; b++) {                               \
                int64_t col = w0 + b * g->d[1];                                 \
                double v = row[col];                                            \
                if (pp->mode == EV_POOL_AVG) {                                  \
                    acc += v;                                                   \
                } else if (*arg < 0 || v > acc) {                               \
                    acc = v;                                                    \
                    *arg = (h0 + a * g->d[0]) * g->img[1] + col;                \
                }                                                               \
            }                                                                   \
        }                                                                       \
        if (pp->mode == EV_POOL_MAX)                                            \
            return acc;                                                         \
        double cnt = (double)(hi0 - lo0) * (double)(hi1 - lo1);                 \
        double padded = (double)t->padded[0][oh] * (double)t->padded[1][ow];   \
        return acc / (pp->with_pad ? padded : cnt);                             \
    }

/* The window of 2-D pools, read from double or, for float inputs, straight
 * from the floats: converting a whole activation to double first was a
 * quarter of squeezenet's run. The sum is in double either way. */
EV_DEF_POOL_WINDOW2(double, f64)
EV_DEF_POOL_WINDOW2(float, f32)

/* One plane of a 2-D MaxPool without Indices: the window's first tap,
 * then any later one strictly greater, as ev_pool_window2 takes them (so
 * a NaN first tap stays and a later NaN is passed over), without its
 * index bookkeeping: a quarter of squeezenet1_1's run was that loop. */
static void ev_pool_max2_f32(const EvGeom *g, const EvTaps *t, const float *x, float *y)
{
    for (int64_t oh = 0; oh < g->grid[0]; oh++) {
        int64_t lo0 = t->lo[0][oh], hi0 = t->hi[0][oh];
        int64_t h0 = oh * g->s[0] - g->pb[0];
        for (int64_t ow = 0; ow < g->grid[1]; ow++) {
            int64_t lo1 = t->lo[1][ow], hi1 = t->hi[1][ow];
            int64_t w0 = ow * g->s[1] - g->pb[1];
            float best = -INFINITY;
            bool any = false;
            for (int64_t a = lo0; a < hi0 && lo1 < hi1; a++) {
                const float *row = x + (h0 + a * g->d[0]) * g->img[1] + w0;
                for (int64_t b = lo1; b < hi1; b++) {
                    float v = row[b * g->d[1]];
                    if (!any || v > best)
                        best = v;
                    any = true;
                }
            }
            y[oh * g->grid[1] + ow] = best;
        }
    }
}

typedef struct EvPool2Job {
    const EvGeom *g;
    const EvPool *pp;
    const EvTaps *t;
    const float *x;
    float *y;
    int64_t *ind;
} EvPool2Job;

/* A 2-D AveragePool or MaxPool of float planes [lo, hi) into float y. */
static void ev_pool2_f32(void *ctx, size_t lo, size_t hi)
{
    const EvPool2Job *j = ctx;
    const EvGeom *g = j->g;
    const EvPool *pp = j->pp;
    const EvTaps *t = j->t;
    const float *x = j->x;
    float *y = j->y;
    int64_t *ind = j->ind, arg;
    if (pp->mode == EV_POOL_MAX && !ind) {
        for (size_t pl = lo; pl < hi; pl++)
            ev_pool_max2_f32(g, t, x + pl * g->img_sz, y + pl * g->grid_sz);
        return;
    }
    for (size_t pl = lo; pl < hi; pl++)
        for (size_t oh = 0, at = pl * g->grid_sz; oh < (size_t)g->grid[0]; oh++)
            for (size_t ow = 0; ow < (size_t)g->grid[1]; ow++, at++) {
                y[at] = (float)ev_pool_window2_f32(g, pp, t, oh, ow,
                                                   x + pl * g->img_sz, &arg);
                if (ind)
                    ind[at] = arg < 0 ? -1 : ev_pool_index(g, pp->col_major, pl, arg);
            }
}

/* Pools nplanes image planes of x into y (and Indices into ind). */
static void ev_pool_run(const EvGeom *g, const EvPool *pp, const EvTaps *t,
                        size_t nplanes, const double *x, double *y, int64_t *ind)
{
    int64_t o[EV_MAX_RANK], arg;
    if (g->n == 2 && pp->mode != EV_POOL_LP) {
        for (size_t pl = 0; pl < nplanes; pl++)
            for (size_t oh = 0, at = pl * g->grid_sz; oh < (size_t)g->grid[0]; oh++)
                for (size_t ow = 0; ow < (size_t)g->grid[1]; ow++, at++) {
                    y[at] = ev_pool_window2_f64(g, pp, t, oh, ow, x + pl * g->img_sz, &arg);
                    if (ind)
                        ind[at] = arg < 0 ? -1 : ev_pool_index(g, pp->col_major, pl, arg);
                }
        return;
    }
    for (size_t pl = 0; pl < nplanes; pl++) {
        memset(o, 0, g->n * sizeof *o);
        for (size_t q = 0; q < g->grid_sz; q++) {
            size_t at = pl * g->grid_sz + q;
            y[at] = ev_pool_window(g, pp, t, o, x + pl * g->img_sz, &arg);
            if (ind)
                ind[at] = arg < 0 ? -1 : ev_pool_index(g, pp->col_major, pl, arg);
            ev_next_index(o, g->grid, g->n);
        }
    }
}

/* MaxPool of int8/uint8: an empty window's -inf becomes the type's least. */
static void ev_pool_store(EvValue *y, const double *v)
{
    if (ev_dtype_is_float(y->dtype)) {
        ev_real_store(y, v, true);
        return;
    }
    for (size_t k = 0; k < y->numel; k++)
        ev_set_f(y, k, isinf(v[k]) ? (y->dtype == IR_INT8 ? -128.0 : 0.0) : v[k]);
}

/* AveragePool, MaxPool, LpPool over X [N, C, D...]. */
static int ev_pool(EvCtx *c, int mode)
{
    EvValue *x = ev_in_tensor(c, 0), *y, *ind = NULL;
    EvGeom g;
    EvTaps taps;
    EvPool pp = {mode, ev_attr_i(c, "count_include_pad") != 0, 2.0,
                 ev_attr_i(c, "storage_order") != 0};
    int64_t dims[EV_MAX_RANK];
    if (!x)
        return -1;
    if (!ev_dtype_is_real(x->dtype) &&
        !(mode == EV_POOL_MAX && c->ver >= 12 && ev_is_8bit(x->dtype)))
        return ev_need_real(c, x, "X");
    if (mode == EV_POOL_LP)
        pp.p = c->ver < 2 ? (double)ev_attr_f_or(c, "p", 2.0f) : (double)ev_attr_i_or(c, "p", 2);
    if (ev_win_read(c, x, NULL, ev_attr_i(c, "ceil_mode") != 0, &g) < 0)
        return -1;
    memcpy(dims, x->dims, 2 * sizeof *dims);
    memcpy(dims + 2, g.grid, g.n * sizeof *dims);
    if (!(y = ev_out_tensor_raw(c, 0, x->dtype, x->rank, dims)))   /* all written */
        return -1;
    if (mode == EV_POOL_MAX && c->ver >= 8 && ev_has_out(c, 1) &&
        !(ind = ev_out_tensor(c, 1, IR_INT64, x->rank, dims)))
        return -1;
    if (y->numel == 0)
        return 0;
    if (x->dtype == IR_FLOAT && g.n == 2 && mode != EV_POOL_LP) {
        if (ev_taps_build(c, &g, &taps) < 0)
            return -1;
        EvPool2Job j = {&g, &pp, &taps, x->data, y->data, ind ? ind->data : NULL};
        size_t grain = EV_PAR_GRAIN / (g.grid_sz * (size_t)g.k_sz);
        ev_par_range(c, y->numel / g.grid_sz, grain ? grain : 1, ev_pool2_f32, &j);
        return 0;
    }
    const double *xv = ev_real_in(c, x, true);
    double *yv = ev_tmp_raw(c, y->numel, sizeof *yv);
    if (!xv || !yv || ev_taps_build(c, &g, &taps) < 0)
        return -1;
    ev_pool_run(&g, &pp, &taps, y->numel / g.grid_sz, xv, yv, ind ? ind->data : NULL);
    ev_pool_store(y, yv);
    return 0;
}

static int ev_averagepool(EvCtx *c) { return ev_pool(c, EV_POOL_AVG); }
static int ev_maxpool(EvCtx *c) { return ev_pool(c, EV_POOL_MAX); }
static int ev_lppool(EvCtx *c) { return ev_pool(c, EV_POOL_LP); }

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: [N, C, 1, ...]. */
static int ev_global_pool(EvCtx *c, int mode)
{
    EvValue *x = ev_in_tensor(c, 0), *y;
    int64_t dims[EV_MAX_RANK];
    if (!x || ev_need_real(c, x, "X") < 0)
        return -1;
    if (x->rank < 2)
        return ev_fail(c, "input has rank %zu; needs N and C", x->rank);
    double p = mode != EV_POOL_LP ? 0.0
               : c->ver < 2   ? (double)ev_attr_f_or(c, "p", 2.0f)
                              : (double)ev_attr_i_or(c, "p", 2);
    for (size_t a = 0; a < x->rank; a++)
        dims[a] = a < 2 ? x->dims[a] : 1;
    if (!(y = ev_out_tensor(c, 0, x->dtype, x->rank, dims)))
        return -1;
    size_t plane = ev_dims_prod(x->dims, 2, x->rank);
    const double *xv = ev_real_in(c, x, true);
    double *yv = ev_real_out(c, y, true);
    if (!xv || !yv)
        return -1;
    for (size_t r = 0; r < y->numel; r++) {
        const double *v = xv + r * plane;
        double acc = mode == EV_POOL_MAX ? -INFINITY : 0.0;
        for (size_t k = 0; k < plane; k++)
            acc = mode == EV_POOL_MAX ? (v[k] > acc || k == 0 ? v[k] : acc)
                  : mode == EV_POOL_AVG ? acc + v[k]
                                        : acc + pow(fabs(v[k]), p);
        yv[r] = mode == EV_POOL_AVG ? acc / (double)plane
                : mode == EV_POOL_LP ? pow(acc, 1.0 / p)
                                     : acc;
    }
    ev_real_store(y, yv, true);
    return 0;
}

static int ev_globalaveragepool(EvCtx *c) { return ev_global_pool(c, EV_POOL_AVG); }
static int ev_globalmaxpool(EvCtx *c) { return ev_global_pool(c, EV_POOL_MAX); }
static int ev_globallppool(EvCtx *c) { return ev_global_pool(c, EV_POOL_LP); }

/* ---- MaxUnpool ---------------------------------------------------------- */

/* The default output [N, C, (in - 1) * s + k - pads...] into dims. */
static int ev_unpool_dims(EvCtx *c, const EvValue *x, int64_t *dims)
{
    EvGeom g;
    memset(&g, 0, sizeof g);
    g.n = x->rank - 2;
    if (ev_read_kernel(c, &g, NULL) < 0 ||
        ev_spatial_ints(c, "strides", g.n, 1, 1, g.s) < 0 || ev_read_pads(c, &g) < 0)
        return -1;
    memcpy(dims, x->dims, 2 * sizeof *dims);
    for (size_t a = 0; a < g.n; a++) {
        int64_t v;
        if (!ev_mul64(x->dims[a + 2] - 1, g.s[a], &v) || !ev_add64(v, g.k[a], &v) ||
            !ev_sub64(v, g.pb[a], &v) || !ev_sub64(v, g.pe[a], &v))
            return ev_fail(c, "output extent overflows on spatial axis %zu", a);
        if (v < 0)
            return ev_fail(c, "spatial axis %zu: output extent %lld is negative", a,
                           (long long)v);
        dims[a + 2] = v;
    }
    return 0;
}

/* Scatters X into zeros at the flat positions I gives (read in the
 * default output shape, placed at the same coordinates of output_shape). */
static int ev_maxunpool(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *ix = ev_in_tensor(c, 1), *y;
    int64_t def[EV_MAX_RANK], dims[EV_MAX_RANK], pos[EV_MAX_RANK];
    size_t def_numel = 1, nos = 0;
    if (!x || !ix || ev_need_real(c, x, "X") < 0)
        return -1;
    if (x->rank < 3)
        return ev_fail(c, "input has rank %zu; needs N, C and spatial axes", x->rank);
    if (ix->dtype != IR_INT64 || ix->rank != x->rank ||
        memcmp(ix->dims, x->dims, x->rank * sizeof *x->dims) != 0)
        return ev_fail(c, "I must be int64 with X's shape");
    if (ev_unpool_dims(c, x, def) < 0)
        return -1;
    for (size_t a = 0; a < x->rank; a++)
        if (!mem_mul_size(def_numel, (size_t)def[a], &def_numel))
            return ev_fail(c, "default output size overflows");
    int64_t *os = ev_in(c, 2) ? ev_in_ints(c, 2, &nos) : NULL;
    if (ev_in(c, 2) && !os)
        return -1;
    if (os && nos != x->rank)
        return ev_fail(c, "output_shape has %zu values for rank %zu", nos, x->rank);
    for (size_t a = 0; a < x->rank; a++) {
        dims[a] = os ? os[a] : def[a];
        if (dims[a] < 0)
            return ev_fail(c, "output_shape value %lld is negative", (long long)dims[a]);
    }
    if (!(y = ev_out_tensor(c, 0, x->dtype, x->rank, dims)))
        return -1;
    size_t esz = ev_dtype_size(x->dtype);
    const int64_t *iv = ix->data;
    for (size_t k = 0; k < x->numel; k++) {
        int64_t at = iv[k];
        if (at < 0 || (size_t)at >= def_numel)
            return ev_fail(c, "index %lld is outside the output of %zu elements",
                           (long long)at, def_numel);
        if (os) {
            ev_unravel((size_t)at, def, x->rank, pos);
            at = 0;
            for (size_t a = 0; a < x->rank; a++) {
                if (pos[a] >= dims[a])
                    return ev_fail(c, "index %lld falls outside output_shape",
                                   (long long)iv[k]);
                at = at * dims[a] + pos[a];
            }
        }
        memcpy((char *)y->data + (size_t)at * esz, (const char *)x->data + k * esz, esz);
    }
    return 0;
}

/* ---- MaxRoiPool, RoiAlign ---------------------------------------------- */

/* Checks X [N, C, H, W] and rois [R, width] of X's type. */
static int ev_roi_inputs(EvCtx *c, EvValue **x, EvValue **rois, int64_t width)
{
    *x = ev_in_tensor(c, 0);
    *rois = ev_in_tensor(c, 1);
    if (!*x || !*rois || ev_need_real(c, *x, "X") < 0 ||
        ev_same_type(c, *x, *rois, "rois") < 0)
        return -1;
    if ((*x)->rank != 4)
        return ev_fail(c, "X must be [N, C, H, W]");
    if ((*rois)->rank != 2 || (*rois)->dims[1] != width)
        return ev_fail(c, "rois must be [num_rois, %lld]", (long long)width);
    return 0;
}

/* Max over the pixels [h0, h1) x [w0, w1) of a plane; 0 when empty. */
static double ev_box_max(const double *plane, int64_t wid, int64_t h0, int64_t h1,
                         int64_t w0, int64_t w1)
{
    double m = -INFINITY;
    if (h1 <= h0 || w1 <= w0)
        return 0;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++)
            if (plane[h * wid + w] > m)
                m = plane[h * wid + w];
    return m;
}

/* v clamped into [0, hi] (NaN gives 0), as an integer. */
static int64_t ev_clamp_pix(double v, int64_t hi)
{
    return !(v > 0) ? 0 : v >= (double)hi ? hi : (int64_t)v;
}

/* MaxRoiPool: rois [R, 5] = (batch, x1, y1, x2, y2), rounded to pixels;
 * each roi splits into pooled_shape bins, each bin takes its max. */
static int ev_maxroipool(EvCtx *c)
{
    EvValue *x, *rois, *y;
    const int64_t *ps;
    if (ev_roi_inputs(c, &x, &rois, 5) < 0)
        return -1;
    if (ev_attr_ints(c, "pooled_shape", &ps) != 2 || ps[0] < 1 || ps[1] < 1)
        return ev_fail(c, "'pooled_shape' must be two positive values");
    double scale = ev_attr_f(c, "spatial_scale");
    int64_t nb = x->dims[0], ch = x->dims[1], hh = x->dims[2], ww = x->dims[3];
    int64_t dims[4] = {rois->dims[0], ch, ps[0], ps[1]};
    if (!(y = ev_out_tensor(c, 0, x->dtype, 4, dims)))
        return -1;
    const double *xv = ev_real_in(c, x, true), *rv = ev_real_in(c, rois, true);
    double *yv = ev_real_out(c, y, true);
    if (!xv || !rv || !yv)
        return -1;
    for (int64_t r = 0; r < dims[0]; r++) {
        const double *roi = rv + r * 5;
        if (!(roi[0] >= 0 && roi[0] < (double)nb))
            return ev_fail(c, "roi %lld: batch index %g is out of range", (long long)r,
                           roi[0]);
        int64_t bi = (int64_t)roi[0];
        double x1 = round(roi[1] * scale), y1 = round(roi[2] * scale);
        double bw = fmax(round(roi[3] * scale) - x1 + 1, 1) / (double)ps[1];
        double bh = fmax(round(roi[4] * scale) - y1 + 1, 1) / (double)ps[0];
        for (int64_t k = 0; k < ch * ps[0] * ps[1]; k++) {
            int64_t ph = k / ps[1] % ps[0], pw = k % ps[1], cc = k / (ps[0] * ps[1]);
            int64_t h0 = ev_clamp_pix(floor((double)ph * bh) + y1, hh);
            int64_t h1 = ev_clamp_pix(ceil((double)(ph + 1) * bh) + y1, hh);
            int64_t w0 = ev_clamp_pix(floor((double)pw * bw) + x1, ww);
            int64_t w1 = ev_clamp_pix(ceil((double)(pw + 1) * bw) + x1, ww);
            yv[r * ch * ps[0] * ps[1] + k] =
                ev_box_max(xv + (bi * ch + cc) * hh * ww, ww, h0, h1, w0, w1);
        }
    }
    ev_real_store(y, yv, true);
    return 0;
}

/* One bilinear sample: four plane offsets and weights (all 0 when the
 * point lies off the image). */
typedef struct EvSample {
    size_t off[4];
    double w[4];
} EvSample;

/* The RoiAlign sample at (yy, xx) on an h x w plane. */
static void ev_roi_sample(double yy, double xx, int64_t h, int64_t w, EvSample *s)
{
    memset(s, 0, sizeof *s);
    if (h < 1 || w < 1 || !(yy >= -1.0 && yy <= (double)h && xx >= -1.0 && xx <= (double)w))
        return;
    yy = yy > 0 ? yy : 0;
    xx = xx > 0 ? xx : 0;
    int64_t y0 = (int64_t)yy, x0 = (int64_t)xx, y1, x1;
    if (y0 >= h - 1) {
        y0 = y1 = h - 1;
        yy = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= w - 1) {
        x0 = x1 = w - 1;
        xx = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    double ly = yy - (double)y0, lx = xx - (double)x0, hy = 1 - ly, hx = 1 - lx;
    s->off[0] = (size_t)(y0 * w + x0);
    s->off[1] = (size_t)(y0 * w + x1);
    s->off[2] = (size_t)(y1 * w + x0);
    s->off[3] = (size_t)(y1 * w + x1);
    s->w[0] = hy * hx;
    s->w[1] = hy * lx;
    s->w[2] = ly * hx;
    s->w[3] = ly * lx;
}

/* Samples per bin beyond this are refused (a runaway roi). */
#define EV_ROI_MAX_SAMPLES (1 << 20)

typedef struct EvRoiAlign {
    int64_t oh, ow, ratio;
    double scale, offset;       /* offset 0.5 for half_pixel */
    bool avg, half_pixel;
} EvRoiAlign;

/* Samples per bin along an axis: sampling_ratio, else ceil(extent / bins). */
static int ev_roi_grid(EvCtx *c, const EvRoiAlign *ra, double extent, int64_t bins,
                       int64_t *grid)
{
    double gv = ra->ratio > 0 ? (double)ra->ratio : ceil(extent / (double)bins);
    if (!(gv <= EV_ROI_MAX_SAMPLES))
        return ev_fail(c, "roi needs %g samples per bin axis (at most %d)", gv,
                       EV_ROI_MAX_SAMPLES);
    *grid = gv > 0 ? (int64_t)gv : 0;
    return 0;
}

/* All channels of one roi: each bin averages (or maxes) its samples. */
static int ev_roialign_one(EvCtx *c, const EvRoiAlign *ra, const double *roi,
                           const double *img, int64_t ch, int64_t h, int64_t w,
                           double *out)
{
    double x0 = roi[0] * ra->scale - ra->offset, y0 = roi[1] * ra->scale - ra->offset;
    double rw = roi[2] * ra->scale - ra->offset - x0;
    double rh = roi[3] * ra->scale - ra->offset - y0;
    int64_t gh = 0, gw = 0;
    if (!ra->half_pixel) {
        rw = fmax(rw, 1.0);
        rh = fmax(rh, 1.0);
    }
    double bh = rh / (double)ra->oh, bw = rw / (double)ra->ow;
    if (ev_roi_grid(c, ra, rh, ra->oh, &gh) < 0 || ev_roi_grid(c, ra, rw, ra->ow, &gw) < 0)
        return -1;
    if (gh * gw > EV_ROI_MAX_SAMPLES)
        return ev_fail(c, "roi needs %lld samples per bin (at most %d)",
                       (long long)(gh * gw), EV_ROI_MAX_SAMPLES);
    size_t ns = (size_t)(gh * gw);
    double count = ns > 0 ? (double)ns : 1.0;
    /* malloc, not ev_tmp: one buffer per roi would pile up until the end */
    EvSample *sm = malloc((ns + 1) * sizeof *sm);
    if (!sm)
        return ev_fail(c, "out of memory for %zu roi samples", ns);
    for (int64_t bin = 0; bin < ra->oh * ra->ow; bin++) {
        int64_t ph = bin / ra->ow, pw = bin % ra->ow;
        for (size_t q = 0; q < ns; q++)
            ev_roi_sample(y0 + (double)ph * bh + ((double)(q / (size_t)gw) + .5) * bh / (double)gh,
                          x0 + (double)pw * bw + ((double)(q % (size_t)gw) + .5) * bw / (double)gw,
                          h, w, &sm[q]);
        for (int64_t cc = 0; cc < ch; cc++) {
            const double *p = img + cc * h * w;
            double acc = 0;
            for (size_t q = 0; q < ns; q++) {
                const EvSample *s = &sm[q];
                if (ra->avg) {
                    for (int j = 0; j < 4; j++)
                        acc += s->w[j] * p[s->off[j]];
                } else {
                    double v = s->w[0] * p[s->off[0]];
                    for (int j = 1; j < 4; j++)
                        v = fmax(v, s->w[j] * p[s->off[j]]);
                    acc = q == 0 ? v : fmax(acc, v);
                }
            }
            out[cc * ra->oh * ra->ow + bin] = ra->avg ? acc / count : acc;
        }
    }
    free(sm);
    return 0;
}

/* RoiAlign: rois [R, 4] = (x1, y1, x2, y2) with batch_indices [R]. */
static int ev_roialign(EvCtx *c)
{
    EvValue *x, *rois, *bi = ev_in_tensor(c, 2), *y;
    EvRoiAlign ra;
    if (!bi || ev_roi_inputs(c, &x, &rois, 4) < 0)
        return -1;
    if (bi->dtype != IR_INT64 || bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return ev_fail(c, "batch_indices must be int64 [num_rois]");
    const char *mode = ev_attr_s(c, "mode");
    const char *ctm = c->ver >= 16 ? ev_attr_s_or(c, "coordinate_transformation_mode",
                                               "half_pixel")
                                   : "output_half_pixel";
    if (!mode || (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0))
        return ev_fail(c, "mode '%s' is not avg or max", mode ? mode : "");
    if (!ctm || (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "output_half_pixel") != 0))
        return ev_fail(c, "coordinate_transformation_mode '%s' is not half_pixel or "
                       "output_half_pixel", ctm ? ctm : "");
    ra.oh = ev_attr_i(c, "output_height");
    ra.ow = ev_attr_i(c, "output_width");
    ra.ratio = ev_attr_i(c, "sampling_ratio");
    ra.scale = ev_attr_f(c, "spatial_scale");
    ra.avg = strcmp(mode, "avg") == 0;
    ra.half_pixel = strcmp(ctm, "half_pixel") == 0;
    ra.offset = ra.half_pixel ? 0.5 : 0.0;
    if (ra.oh < 1 || ra.ow < 1 || ra.ratio < 0)
        return ev_fail(c, "output_height/output_width must be positive and "
                       "sampling_ratio not negative");
    int64_t nb = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
    int64_t dims[4] = {rois->dims[0], ch, ra.oh, ra.ow};
    if (!(y = ev_out_tensor(c, 0, x->dtype, 4, dims)))
        return -1;
    if (y->numel == 0)
        return 0;
    const double *xv = ev_real_in(c, x, true), *rv = ev_real_in(c, rois, true);
    const int64_t *bv = bi->data;
    double *yv = ev_real_out(c, y, true);
    if (!xv || !rv || !yv)
        return -1;
    for (int64_t r = 0; r < dims[0]; r++) {
        if (bv[r] < 0 || bv[r] >= nb)
            return ev_fail(c, "batch index %lld is out of range", (long long)bv[r]);
        if (ev_roialign_one(c, &ra, rv + r * 4, xv + bv[r] * ch * h * w, ch, h, w,
                            yv + r * ch * ra.oh * ra.ow) < 0)
            return -1;
    }
    ev_real_store(y, yv, true);
    return 0;
}

/* ---- MatMul, MatMulInteger, Gemm --------------------------------------- */

/* The batch axis i (of brank) of an operand with `ob` batch axes: its
 * extent, 1 where it has none. */
static int64_t ev_mm_bdim(const EvValue *t, size_t ob, size_t brank, size_t i)
{
    return i >= brank - ob ? t->dims[i - (brank - ob)] : 1;
}

/* Shapes of A x B; the output shape into rank/dims. 1-D A gains a leading
 * 1 and 1-D B a trailing 1, both dropped from the output. */
int ev_mm_shape(EvCtx *c, const EvValue *a, const EvValue *b, EvMM *mm,
                size_t *rank, int64_t *dims)
{
    size_t ra = a->rank, rb = b->rank;
    if (ra == 0 || rb == 0)
        return ev_fail(c, "MatMul operands must have rank >= 1");
    int64_t kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0];
    if (a->dims[ra - 1] != kb)
        return ev_fail(c, "inner dimensions %lld and %lld differ",
                       (long long)a->dims[ra - 1], (long long)kb);
    mm->m = ra >= 2 ? (size_t)a->dims[ra - 2] : 1;
    mm->k = (size_t)kb;
    mm->n = rb >= 2 ? (size_t)b->dims[rb - 1] : 1;
    size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0, sa = 1, sb = 1;
    mm->brank = ba > bb ? ba : bb;
    mm->b_single = bb == 0;
    mm->nb = 1;
    for (size_t i = mm->brank; i-- > 0;) {
        int64_t da = ev_mm_bdim(a, ba, mm->brank, i), db = ev_mm_bdim(b, bb, mm->brank, i);
        if (da != db && da != 1 && db != 1)
            return ev_fail(c, "batch dimensions %lld and %lld do not broadcast",
                           (long long)da, (long long)db);
        mm->bdims[i] = da == 1 ? db : da;
        mm->astr[i] = da == 1 ? 0 : sa;
        mm->bstr[i] = db == 1 ? 0 : sb;
        sa *= (size_t)da;
        sb *= (size_t)db;
        if (!mem_mul_size(mm->nb, (size_t)mm->bdims[i], &mm->nb))
            return ev_fail(c, "batch size overflows");
    }
    *rank = mm->brank;
    memcpy(dims, mm->bdims, mm->brank * sizeof *dims);
    if (ra >= 2)
        dims[(*rank)++] = (int64_t)mm->m;
    if (rb >= 2)
        dims[(*rank)++] = (int64_t)mm->n;
    return 0;
}

/* y = a x b in float or double, one gemm per batch (or one in all when B
 * has no batch axes: A's batches stack into a tall matrix). */
int ev_mm_real(EvCtx *c, const EvMM *mm, bool dbl, const void *a, const void *b,
               void *y)
{
    size_t esz = dbl ? sizeof(double) : sizeof(float);
    int64_t idx[EV_MAX_RANK] = {0};
    if (mm->b_single)
        return ev_gemm_r(c, dbl, false, false, mm->nb * mm->m, mm->n, mm->k, 1.0, a,
                         mm->k, b, mm->n, 0.0, y, mm->n);
    for (size_t q = 0; q < mm->nb; q++) {
        size_t oa = 0, ob = 0;
        for (size_t i = 0; i < mm->brank; i++) {
            oa += (size_t)idx[i] * mm->astr[i];
            ob += (size_t)idx[i] * mm->bstr[i];
        }
        if (ev_gemm_r(c, dbl, false, false, mm->m, mm->n, mm->k, 1.0,
                      (const char *)a + oa * mm->m * mm->k * esz, mm->k,
                      (const char *)b + ob * mm->k * mm->n * esz, mm->n, 0.0,
                      (char *)y + q * mm->m * mm->n * esz, mm->n) < 0)
            return -1;
        ev_next_index(idx, mm->bdims, mm->brank);
    }
    return 0;
}

/* y = a x b exactly, wrapping modulo 2^64. */
static void ev_mm_int(const EvMM *mm, const uint64_t *a, const uint64_t *b, uint64_t *y)
{
    int64_t idx[EV_MAX_RANK] = {0};
    for (size_t q = 0; q < mm->nb; q++) {
        size_t oa = 0, ob = 0;
        for (size_t i = 0; i < mm->brank; i++) {
            oa += (size_t)idx[i] * mm->astr[i];
            ob += (size_t)idx[i] * mm->bstr[i];
        }
        const uint64_t *am = a + oa * mm->m * mm->k, *bm = b + ob * mm->k * mm->n;
        uint64_t *ym = y + q * mm->m * mm->n;
        for (size_t i = 0; i < mm->m; i++)
            for (size_t kk = 0; kk < mm->k; kk++) {
                uint64_t av = am[i * mm->k + kk];
                for (size_t j = 0; j < mm->n; j++)
                    ym[i * mm->n + j] += av * bm[kk * mm->n + j];
            }
        ev_next_index(idx, mm->bdims, mm->brank);
    }
}

static bool ev_is_int_mm(int32_t dt)
{
    return dt == IR_INT32 || dt == IR_INT64 || dt == IR_UINT32 || dt == IR_UINT64;
}

static int ev_matmul(EvCtx *c)
{
    EvValue *a = ev_in_tensor(c, 0), *b = ev_in_tensor(c, 1), *y;
    EvMM mm;
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (!a || !b || ev_same_type(c, a, b, "B") < 0)
        return -1;
    bool ints = c->ver >= 9 && ev_is_int_mm(a->dtype);
    if (!ints && ev_need_real(c, a, "A") < 0)
        return -1;
    if (ev_mm_shape(c, a, b, &mm, &rank, dims) < 0 ||
        !(y = ev_out_tensor_raw(c, 0, a->dtype, rank, dims)))   /* all written */
        return -1;
    if (y->numel == 0)
        return 0;
    if (ints) {
        uint64_t *av = ev_u64_in(c, a), *bv = ev_u64_in(c, b);
        uint64_t *yv = ev_tmp(c, y->numel, sizeof *yv);
        if (!av || !bv || !yv)
            return -1;
        ev_mm_int(&mm, av, bv, yv);
        ev_u64_store(y, yv);
        return 0;
    }
    bool dbl = ev_in_double(a->dtype);
    const void *av = ev_real_in(c, a, dbl), *bv = ev_real_in(c, b, dbl);
    void *yv = ev_real_out_raw(c, y, dbl);
    if (!av || !bv || !yv || ev_mm_real(c, &mm, dbl, av, bv, yv) < 0)
        return -1;
    ev_real_store(y, yv, dbl);
    return 0;
}

/* Gemm's C: absent, or unidirectionally broadcastable to [m, n] (exactly
 * [m, n] in opsets 1-6 unless `broadcast` is set). *cm, *cn: its extents
 * as a matrix. */
static int ev_gemm_c(EvCtx *c, const EvValue *a, int64_t m, int64_t n, EvValue **cv,
                     int64_t *cm, int64_t *cn)
{
    EvValue *t = ev_in(c, 2);
    *cv = NULL;
    if (!t) {
        if (c->ver < 11)
            return ev_fail(c, "C is required before opset 11");
        return 0;
    }
    if (t->kind != EV_TENSOR || ev_same_type(c, a, t, "C") < 0)
        return t->kind != EV_TENSOR ? ev_fail(c, "C is not a tensor") : -1;
    if (t->rank > 2)
        return ev_fail(c, "C has rank %zu; at most 2", t->rank);
    *cm = t->rank == 2 ? t->dims[0] : 1;
    *cn = t->rank >= 1 ? t->dims[t->rank - 1] : 1;
    bool exact = t->rank == 2 && *cm == m && *cn == n;
    if (c->ver < 7 && ev_attr_i(c, "broadcast") == 0 && !exact)
        return ev_fail(c, "C must be [%lld, %lld] when broadcast is 0", (long long)m,
                       (long long)n);
    if ((*cm != 1 && *cm != m) || (*cn != 1 && *cn != n) ||
        (t->rank == 1 && *cn != n && *cn != 1))
        return ev_fail(c, "C does not broadcast to [%lld, %lld]", (long long)m,
                       (long long)n);
    *cv = t;
    return 0;
}

/* Element (i, j) of C broadcast to [m, n]. */
static size_t ev_gemm_c_at(int64_t cm, int64_t cn, size_t i, size_t j)
{
    return (cm == 1 ? 0 : i) * (size_t)cn + (cn == 1 ? 0 : j);
}

typedef struct EvGemmArgs {
    bool ta, tb;
    size_t m, n, k;
    double alpha, beta;
    int64_t cm, cn;
} EvGemmArgs;

static int ev_gemm_real(EvCtx *c, const EvGemmArgs *ga, const EvValue *a,
                        const EvValue *b, const EvValue *cv, EvValue *y)
{
    bool dbl = ev_in_double(a->dtype), use_c = cv && ga->beta != 0.0;
    const void *av = ev_real_in(c, a, dbl), *bv = ev_real_in(c, b, dbl);
    const void *cd = use_c ? ev_real_in(c, cv, dbl) : NULL;
    void *yv = ev_real_out(c, y, dbl);
    if (!av || !bv || (use_c && !cd) || !yv)
        return -1;
    for (size_t i = 0; use_c && i < ga->m; i++)
        for (size_t j = 0; j < ga->n; j++) {
            size_t at = ev_gemm_c_at(ga->cm, ga->cn, i, j);
            if (dbl)
                ((double *)yv)[i * ga->n + j] = ((const double *)cd)[at];
            else
                ((float *)yv)[i * ga->n + j] = ((const float *)cd)[at];
        }
    if (ev_gemm_r(c, dbl, ga->ta, ga->tb, ga->m, ga->n, ga->k, ga->alpha, av,
                  ga->ta ? ga->m : ga->k, bv, ga->tb ? ga->k : ga->n,
                  use_c ? ga->beta : 0.0, yv, ga->n) < 0)
        return -1;
    ev_real_store(y, yv, dbl);
    return 0;
}

/* Integer Gemm: exact wrapping sums; alpha and beta other than 1 scale in
 * double (truncating, as a float result cast back would). */
static int ev_gemm_int(EvCtx *c, const EvGemmArgs *ga, const EvValue *a,
                       const EvValue *b, const EvValue *cv, EvValue *y)
{
    uint64_t *av = ev_u64_in(c, a), *bv = ev_u64_in(c, b);
    uint64_t *cd = cv ? ev_u64_in(c, cv) : NULL;
    bool uns = ev_dtype_is_unsigned(a->dtype), plain = ga->alpha == 1.0 && ga->beta == 1.0;
    if (!av || !bv || (cv && !cd))
        return -1;
    for (size_t i = 0; i < ga->m; i++)
        for (size_t j = 0; j < ga->n; j++) {
            uint64_t acc = 0, cval = cd ? cd[ev_gemm_c_at(ga->cm, ga->cn, i, j)] : 0;
            for (size_t kk = 0; kk < ga->k; kk++)
                acc += av[ga->ta ? kk * ga->m + i : i * ga->k + kk] *
                       bv[ga->tb ? j * ga->k + kk : kk * ga->n + j];
            if (plain) {
                ev_set_i(y, i * ga->n + j, (int64_t)(acc + cval));
                continue;
            }
            double s = uns ? (double)acc : (double)(int64_t)acc;
            double cs = uns ? (double)cval : (double)(int64_t)cval;
            ev_set_f(y, i * ga->n + j, ga->alpha * s + (cd ? ga->beta * cs : 0.0));
        }
    return 0;
}

/* Gemm: Y = alpha * op(A) * op(B) + beta * C. */
static int ev_gemm(EvCtx *c)
{
    EvValue *a = ev_in_tensor(c, 0), *b = ev_in_tensor(c, 1), *cv, *y;
    EvGemmArgs ga = {ev_attr_i(c, "transA") != 0, ev_attr_i(c, "transB") != 0,
                     0, 0, 0, ev_attr_f(c, "alpha"), ev_attr_f(c, "beta"),
                     1, 1};
    if (!a || !b || ev_same_type(c, a, b, "B") < 0)
        return -1;
    bool ints = c->ver >= 9 && ev_is_int_mm(a->dtype);
    if (!ints && ev_need_real(c, a, "A") < 0)
        return -1;
    if (a->rank != 2 || b->rank != 2)
        return ev_fail(c, "A and B must be 2-D (ranks %zu, %zu)", a->rank, b->rank);
    int64_t m = a->dims[ga.ta ? 1 : 0], k = a->dims[ga.ta ? 0 : 1];
    int64_t kb = b->dims[ga.tb ? 1 : 0], n = b->dims[ga.tb ? 0 : 1];
    if (k != kb)
        return ev_fail(c, "inner dimensions %lld and %lld differ", (long long)k,
                       (long long)kb);
    ga.m = (size_t)m;
    ga.n = (size_t)n;
    ga.k = (size_t)k;
    int64_t dims[2] = {m, n};
    if (ev_gemm_c(c, a, m, n, &cv, &ga.cm, &ga.cn) < 0 ||
        !(y = ev_out_tensor(c, 0, a->dtype, 2, dims)))
        return -1;
    if (y->numel == 0)
        return 0;
    return ints ? ev_gemm_int(c, &ga, a, b, cv, y) : ev_gemm_real(c, &ga, a, b, cv, y);
}

/* ---- Dropout ------------------------------------------------------------- */

static int ev_dropout(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    bool f8 = c->ver >= 22 && x->dtype >= IR_FLOAT8E4M3FN &&
              x->dtype <= IR_FLOAT8E5M2FNUZ;
    if (!ev_dtype_is_real(x->dtype) && !f8)
        return ev_fail(c, "input 0 has unsupported element type %d",
                       (int)x->dtype);
    double ratio = 0.5;
    bool training;
    if (c->ver < 12) {
        ratio = ev_attr_f_or(c, "ratio", 0.5f);
        training = c->ver < 7 && ev_attr_i(c, "is_test") == 0;
    } else {
        EvValue *r = ev_in(c, 1), *tm = ev_in(c, 2);
        if (r) {
            if (r->kind != EV_TENSOR || r->numel != 1 || r->dtype == IR_STRING)
                return ev_fail(c, "ratio must be a scalar");
            ratio = ev_get_f(r, 0);
        }
        if (tm && (tm->kind != EV_TENSOR || tm->numel != 1 ||
                   tm->dtype != IR_BOOL))
            return ev_fail(c, "training_mode must be a bool scalar");
        training = tm && ev_get_i(tm, 0) != 0;
    }
    if (training && !(ratio >= 0 && ratio <= 1))
        return ev_fail(c, "ratio %g is outside [0, 1]", ratio);
    /* The mask is bool from version 10, of type T before. */
    int32_t mtype = c->ver >= 10 ? IR_BOOL : x->dtype;
    EvValue *mask = NULL;
    if (ev_has_out(c, 1) &&
        !(mask = ev_out_tensor(c, 1, mtype, x->rank, x->dims)))
        return -1;
    if (!training || ratio == 0) {
        ev_out_set(c, 0, ev_ref(x));
        for (size_t k = 0; mask && k < mask->numel; k++)
            ev_set_f(mask, k, 1.0);
        return 0;
    }
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    double scale = 1.0 / (1.0 - ratio);
    for (size_t k = 0; k < x->numel; k++) {
        bool keep = ev_random(c) >= ratio;
        if (keep)
            ev_set_f(y, k, ev_get_f(x, k) * scale);
        if (mask)
            ev_set_f(mask, k, keep ? 1.0 : 0.0);
    }
    return 0;
}

/* ---- table -------------------------------------------------------------- */

const EvOp ev_ops_nn[] = {
    {"", "MatMul", ev_matmul},
    {"", "Gemm", ev_gemm},
    {"", "Conv", ev_conv},
    {"", "ConvTranspose", ev_convtranspose},
    {"", "DeformConv", ev_deformconv},
    {"", "Col2Im", ev_col2im_op},
    {"", "CausalConvWithState", ev_causalconv},
    {"", "AveragePool", ev_averagepool},
    {"", "MaxPool", ev_maxpool},
    {"", "LpPool", ev_lppool},
    {"", "GlobalAveragePool", ev_globalaveragepool},
    {"", "GlobalMaxPool", ev_globalmaxpool},
    {"", "GlobalLpPool", ev_globallppool},
    {"", "MaxUnpool", ev_maxunpool},
    {"", "MaxRoiPool", ev_maxroipool},
    {"", "RoiAlign", ev_roialign},
    {"", "Dropout", ev_dropout},
    {NULL, NULL, NULL},
};
