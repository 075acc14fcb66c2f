/*
 * sample.c - adapters of the ops that sample a tensor at positions known
 * only at run time: GridSample (16, 20, 22), and AffineGrid (the grid
 * GridSample reads).
 *
 * GridSample below 16 (and 20/22 -> 16..19 when X is not 4-D, which
 * GridSample-16 cannot take) is expanded into gathers at computed indices,
 * as the spec and ONNX's reference implementation define it, per spatial
 * axis j (L = X's dim, x the grid component of that axis, the last grid
 * component being the last axis):
 *   - unnormalize: (x + 1) / 2 * (L - 1) with align_corners, else
 *     ((x + 1) * L - 1) / 2; nearest rounds half to even here;
 *   - a coordinate outside [lo, hi] (0 and L - 1 with align_corners, else
 *     -0.5 and L - 0.5) is clamped to [0, L - 1] (border) or reflected
 *     into [lo, hi] as often as needed (reflection), axis by axis;
 *   - taps: the rounded coordinate (nearest), floor and floor + 1 with
 *     weights 1 - t, t (linear), floor - 1 .. floor + 2 with Keys' cubic
 *     weights, A = -0.75 (cubic), t the fractional part;
 *   - a tap outside the axis reads 0 (zeros: X is padded with one zero on
 *     each side and the tap clamped into the padding), the clamped pixel
 *     (border) or the reflected one (reflection).
 * The per-axis taps become int64 row numbers of X transposed to
 * (N, spatial..., C) and flattened to (N*S, C); one Gather reads every tap
 * of every channel; the weights are applied axis by axis from the last,
 * each followed by a ReduceSum over its taps, in the order the reference
 * sums (which leaves each dot product's order open).
 *
 * Every piece exists at opset 7: Floor 6, Abs 6, Clip 6, Gather 1, Pad 2,
 * Flatten 1, Transpose 1, Cast 6, Less/Greater/Or 7, ReduceSum 1, with
 * numpy broadcasting in Add/Sub/Mul/Div from 7. Where (9) and Round (11)
 * are used when the conversion's goal has them; below, rounding half to
 * even is built from Floor and comparisons, and a select from 0/1 masks
 * (exact for finite values). Flatten and Pad take floating types only
 * before 9 and 11: other types of X (nearest only) are refused there by
 * the driver's type check.
 *
 * Needs X's spatial dims known (static); N known (from X or the grid)
 * below opset 11, where no Range numbers the batch entries; the grid's
 * output dims may be dynamic. The gathered taps take N * out * T^k * C
 * elements (T = 2 linear, 4 cubic) until the first ReduceSum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* TensorProto element types used here. */

/* Spatial axes the expansion handles (GridSample-20 allows any). */
#define AD_GS_MAXK 6

/* Keys' cubic coefficient the spec fixes. */
#define AD_GS_CUBIC_A (-0.75)

typedef enum { AD_GS_NEAREST, AD_GS_LINEAR, AD_GS_CUBIC } AdGsMode;
typedef enum { AD_GS_ZEROS, AD_GS_BORDER, AD_GS_REFLECT } AdGsPad;

/* What the expansion of one node needs to know. */
typedef struct AdGs {
    AdGsMode mode;
    AdGsPad pad;
    bool align;
    int k;                        /* spatial axes */
    int64_t n;                    /* batch size N, -1 when unknown */
    int64_t dims[AD_GS_MAXK];     /* X's spatial dims */
    int64_t stride[AD_GS_MAXK];   /* row strides in the (padded) spatial block */
    int64_t block;                /* rows per batch entry: the (padded) spatial size */
    int32_t xdt;                  /* X's element type */
    int32_t cdt;                  /* coordinates: float, or double for a double grid */
    int32_t wdt;                  /* weights and sums: float, or double for double X */
    int64_t low;                  /* the lowest opset the new nodes will live at */
} AdGs;

/* ---- small builders ------------------------------------------------- */

/* A scalar constant of the coordinate type. */
static IrValue *ad_gs_k(AdCtx *c, const AdGs *g, double x)
{
    return ad_const_scalar(c, g->cdt, x);
}

/* a where the bool m holds, else b: Where from opset 9; below it,
 * a * m + b * (1 - m), which is exact for finite a and b (the only values
 * it sees: coordinates of a finite grid). */
static IrValue *ad_gs_select(AdCtx *c, const AdGs *g, IrValue *m, IrValue *a, IrValue *b)
{
    if (c->refusal || !m || !a || !b)
        return NULL;
    if (g->low >= 9)
        return ad_op3(c, "Where", m, a, b);
    IrValue *mf = ad_cast(c, m, ad_elem(a));
    IrValue *nf = ad_op2(c, "Sub", ad_gs_k(c, g, 1.0), mf);
    return ad_op2(c, "Add", ad_op2(c, "Mul", a, mf), ad_op2(c, "Mul", b, nf));
}

/* x rounded half to even, as the reference's rint: Round from opset 11;
 * below, floor(x) + [frac > 0.5] + [frac == 0.5] * (floor(x) mod 2),
 * every step exact. */
static IrValue *ad_gs_rint(AdCtx *c, const AdGs *g, IrValue *x)
{
    if (g->low >= 11)
        return ad_op1(c, "Round", x);
    IrValue *half = ad_gs_k(c, g, 0.5);
    IrValue *f = ad_op1(c, "Floor", x), *d = ad_op2(c, "Sub", x, f);
    IrValue *gt = ad_op2(c, "Greater", d, half), *lt = ad_op2(c, "Less", d, half);
    IrValue *tie = ad_op1(c, "Not", ad_op2(c, "Or", gt, lt));
    IrValue *odd = ad_op2(c, "Sub", f,
                          ad_op2(c, "Mul", ad_op1(c, "Floor", ad_op2(c, "Mul", f, half)),
                                 ad_gs_k(c, g, 2.0)));
    IrValue *up = ad_op2(c, "Add", ad_cast(c, gt, g->cdt),
                         ad_op2(c, "Mul", ad_cast(c, tie, g->cdt), odd));
    return ad_op2(c, "Add", f, up);
}

/* x reflected into [lo, hi] as often as needed: with u = x - lo and
 * r = hi - lo, hi - |(u mod 2r) - r| (the reference's repeated
 * reflection, a triangle wave). A single-point range is that point. */
static IrValue *ad_gs_fold(AdCtx *c, const AdGs *g, IrValue *x, double lo, double hi)
{
    double r = hi - lo;
    if (r <= 0)
        return ad_clip(c, x, g->cdt, lo, lo);
    IrValue *u = lo != 0 ? ad_op2(c, "Sub", x, ad_gs_k(c, g, lo)) : x;
    IrValue *two_r = ad_gs_k(c, g, 2 * r);
    IrValue *q = ad_op1(c, "Floor", ad_op2(c, "Div", u, two_r));
    IrValue *m = ad_op2(c, "Sub", u, ad_op2(c, "Mul", q, two_r));
    return ad_op2(c, "Sub", ad_gs_k(c, g, hi),
                  ad_op1(c, "Abs", ad_op2(c, "Sub", m, ad_gs_k(c, g, r))));
}

/* ---- coordinates, taps, weights ------------------------------------- */

/* The bounds a coordinate of axis j may take before padding applies. */
static void ad_gs_bounds(const AdGs *g, int j, double *lo, double *hi)
{
    *lo = g->align ? 0.0 : -0.5;
    *hi = g->align ? (double)(g->dims[j] - 1) : (double)g->dims[j] - 0.5;
}

/* The source coordinate on spatial axis j of every output point, shape
 * (N, out...): the grid component, unnormalized, rounded (nearest), then
 * clamped or reflected where it lies outside the bounds. */
static IrValue *ad_gs_coord(AdCtx *c, const AdGs *g, IrValue *grid, int j)
{
    double len = (double)g->dims[j], lo, hi;
    IrValue *in[2] = {grid, ad_const_int(c, IR_INT64, g->k - 1 - j)};
    IrValue *v = ad_cast(c, ad_gather(c, in[0], in[1], g->k + 1), g->cdt);
    v = ad_op2(c, "Add", v, ad_gs_k(c, g, 1.0));
    IrValue *x = g->align
        ? ad_op2(c, "Mul", ad_op2(c, "Div", v, ad_gs_k(c, g, 2.0)), ad_gs_k(c, g, len - 1))
        : ad_op2(c, "Div", ad_op2(c, "Sub", ad_op2(c, "Mul", v, ad_gs_k(c, g, len)),
                                  ad_gs_k(c, g, 1.0)),
                 ad_gs_k(c, g, 2.0));
    if (g->mode == AD_GS_NEAREST)
        x = ad_gs_rint(c, g, x);
    if (g->pad == AD_GS_ZEROS)
        return x;
    ad_gs_bounds(g, j, &lo, &hi);
    /* Inside the bounds a coordinate stays as it is; clamping or folding
     * it there would move it by a rounding (or, for cubic border, change
     * its taps). With align_corners, or integral (nearest) coordinates,
     * clamping only moves the outside ones. */
    if (g->pad == AD_GS_BORDER && (g->align || g->mode == AD_GS_NEAREST))
        return ad_clip(c, x, g->cdt, 0, len - 1);
    IrValue *out = ad_op2(c, "Or", ad_op2(c, "Less", x, ad_gs_k(c, g, lo)),
                          ad_op2(c, "Greater", x, ad_gs_k(c, g, hi)));
    IrValue *moved = g->pad == AD_GS_BORDER ? ad_clip(c, x, g->cdt, 0, len - 1)
                                            : ad_gs_fold(c, g, x, lo, hi);
    return ad_gs_select(c, g, out, moved, x);
}

/* The int64 row offsets (times the axis' stride) of the integral tap
 * positions t on axis j: into the zero padding (zeros), clamped (border)
 * or reflected (reflection; `fold` when the taps may leave the bounds). */
static IrValue *ad_gs_rows(AdCtx *c, const AdGs *g, IrValue *t, int j, bool fold)
{
    double len = (double)g->dims[j], lo, hi;
    if (g->pad == AD_GS_ZEROS) {
        t = ad_op2(c, "Add", ad_clip(c, t, g->cdt, -1, len), ad_gs_k(c, g, 1.0));
    } else {
        ad_gs_bounds(g, j, &lo, &hi);
        if (g->pad == AD_GS_REFLECT && fold)
            t = ad_gs_fold(c, g, t, lo, hi);
        t = ad_clip(c, t, g->cdt, 0, len - 1);
    }
    IrValue *i = ad_cast(c, t, IR_INT64);
    if (g->stride[j] == 1)
        return i;
    return ad_op2(c, "Mul", i, ad_const_int(c, IR_INT64, g->stride[j]));
}

/* The weights of the taps at distance t (the fractional part, shape
 * (..., 1)) in the weight type: |[1, 0] - t| = 1 - t, t (linear);
 * Keys' cubic kernel at |t + [1, 0, -1, -2]| (cubic), the outer formula
 * for the outer two taps, each in the reference's Horner order. */
static IrValue *ad_gs_weights(AdCtx *c, const AdGs *g, IrValue *t)
{
    const int32_t dt = g->wdt;
    const double a = AD_GS_CUBIC_A;
    if (g->mode == AD_GS_LINEAR) {
        static const double one_zero[2] = {1, 0};
        return ad_op1(c, "Abs", ad_op2(c, "Sub", ad_const_reals(c, dt, 2, one_zero), t));
    }
    static const double off[4] = {1, 0, -1, -2}, outer[4] = {1, 0, 0, 1},
                        inner[4] = {0, 1, 1, 0};
    IrValue *d = ad_op1(c, "Abs", ad_op2(c, "Add", t, ad_const_reals(c, dt, 4, off)));
#define AD_GS_W(x) ad_const_scalar(c, dt, (x))
    IrValue *far = ad_op2(c, "Mul", ad_op2(c, "Sub", ad_op2(c, "Mul", d, AD_GS_W(a)),
                                           AD_GS_W(5 * a)), d);
    far = ad_op2(c, "Sub", ad_op2(c, "Mul", ad_op2(c, "Add", far, AD_GS_W(8 * a)), d),
                 AD_GS_W(4 * a));
    IrValue *near = ad_op2(c, "Sub", ad_op2(c, "Mul", d, AD_GS_W(a + 2)), AD_GS_W(a + 3));
    near = ad_op2(c, "Add", ad_op2(c, "Mul", ad_op2(c, "Mul", near, d), d), AD_GS_W(1));
#undef AD_GS_W
    return ad_op2(c, "Add", ad_op2(c, "Mul", far, ad_const_reals(c, dt, 4, outer)),
                  ad_op2(c, "Mul", near, ad_const_reals(c, dt, 4, inner)));
}

/* Axis j's taps: *rows the int64 row offsets and *w their weights, shape
 * (N, out..., T) with T = 2 (linear) or 4 (cubic) taps; for nearest
 * *rows is (N, out...) and *w NULL. Returns 0 or -1 (c->err set). */
static int ad_gs_axis(AdCtx *c, const AdGs *g, IrValue *grid, int j, IrValue **rows,
                      IrValue **w)
{
    IrValue *x = ad_gs_coord(c, g, grid, j);
    *w = NULL;
    if (g->mode == AD_GS_NEAREST) {
        *rows = ad_gs_rows(c, g, x, j, false);
    } else {
        static const double lin[2] = {0, 1}, cub[4] = {-1, 0, 1, 2};
        bool cubic = g->mode == AD_GS_CUBIC;
        int64_t last = g->k + 1;
        IrValue *x0 = ad_op1(c, "Floor", x);
        IrValue *t = ad_cast(c, ad_op2(c, "Sub", x, x0), g->wdt);
        IrValue *taps = ad_op2(c, "Add", ad_axes_op(c, c->n, "Unsqueeze", x0, 1, &last),
                               ad_const_reals(c, g->cdt, cubic ? 4 : 2, cubic ? cub : lin));
        *rows = ad_gs_rows(c, g, taps, j, true);
        *w = ad_gs_weights(c, g, ad_axes_op(c, c->n, "Unsqueeze", t, 1, &last));
        if (!*w && !c->refusal)
            return ad_refuse(c, DG_INTERNAL, "cannot build the weights of axis %d", j);
    }
    if (!*rows)
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot build the taps of axis %d", j);
    return 0;
}

/* v (shape (N, out..., T)) unsqueezed so that its tap axis lands at
 * k + 1 + j among `ntap` tap axes (the others of size 1). */
static IrValue *ad_gs_spread(AdCtx *c, const AdGs *g, IrValue *v, int j, int ntap)
{
    int64_t ax[AD_GS_MAXK];
    size_t n = 0;
    for (int i = 0; i < ntap; i++)
        if (i != j)
            ax[n++] = g->k + 1 + i;
    return n ? ad_axes_op(c, c->n, "Unsqueeze", v, n, ax) : v;
}

/* ---- the expansion -------------------------------------------------- */

/* Reads mode and padding_mode (either version's names). */
static int ad_gs_modes(AdCtx *c, AdGs *g)
{
    char mb[32], pb[32];
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    const char *pad = ad_attr_s(c, "padding_mode", pb, sizeof pb);
    if (!strcmp(mode, "nearest"))
        g->mode = AD_GS_NEAREST;
    else if (!strcmp(mode, "bilinear") || !strcmp(mode, "linear"))
        g->mode = AD_GS_LINEAR;
    else if (!strcmp(mode, "bicubic") || !strcmp(mode, "cubic"))
        g->mode = AD_GS_CUBIC;
    else
        return ad_refuse(c, DG_ATTRIBUTE, "unknown mode '%s'", mode);
    if (!strcmp(pad, "zeros"))
        g->pad = AD_GS_ZEROS;
    else if (!strcmp(pad, "border"))
        g->pad = AD_GS_BORDER;
    else if (!strcmp(pad, "reflection"))
        g->pad = AD_GS_REFLECT;
    else
        return ad_refuse(c, DG_ATTRIBUTE, "unknown padding_mode '%s'", pad);
    g->align = ad_attr_i(c, "align_corners") != 0;
    return 0;
}

/* Reads X's shape (rank, N, spatial dims, strides) and the element types;
 * refuses what the expansion cannot build. */
static int ad_gs_shapes(AdCtx *c, AdGs *g)
{
    IrValue *x = ad_in(c, 0), *grid = ad_in(c, 1);
    int r = ad_rank(x);
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of X is unknown");
    if (r < 3 || r - 2 > AD_GS_MAXK)
        return ad_refuse(c, DG_SHAPE, "X of rank %d (the expansion takes 1 to %d spatial axes)",
                         r, AD_GS_MAXK);
    g->k = r - 2;
    if (ad_rank(grid) >= 0 && ad_rank(grid) != r)
        return ad_refuse(c, DG_SHAPE, "grid of rank %d for X of rank %d", ad_rank(grid), r);
    /* N numbers the rows of each batch entry: a constant when X or the
     * grid knows it, else Range(0, N) from Shape (opset 11). */
    g->n = ad_dim(x, 0) >= 0 ? ad_dim(x, 0) : ad_dim(grid, 0);
    if (g->n < 0 && g->low < 11)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "the batch size N is unknown and opset %lld has no Range to "
                         "number the rows of each batch entry", (long long)g->low);
    int64_t block = 1, padded = g->pad == AD_GS_ZEROS ? 2 : 0;
    for (int j = g->k - 1; j >= 0; j--) {
        g->dims[j] = ad_dim(x, 2 + j);
        if (g->dims[j] < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "spatial dim %d of X is unknown (the expansion builds its "
                             "coordinates from it; --input-shape can fix it)", j);
        if (g->dims[j] == 0)
            return ad_refuse(c, DG_SHAPE, "spatial dim %d of X is empty", j);
        g->stride[j] = block;
        if (__builtin_mul_overflow(block, g->dims[j] + padded, &block) || block > INT64_MAX / 2)
            return ad_refuse(c, DG_SHAPE, "X's spatial size overflows int64");
    }
    int64_t rows;
    if (__builtin_mul_overflow(block, g->n > 0 ? g->n : 1, &rows))
        return ad_refuse(c, DG_SHAPE, "X's size overflows int64");
    g->block = block;
    g->xdt = ad_elem(x);
    int32_t gdt = ad_elem(grid);
    if (!g->xdt || !gdt)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of X or grid is unknown");
    bool xfloat = g->xdt == IR_FLOAT || g->xdt == IR_DOUBLE || g->xdt == IR_FLOAT16 ||
                  g->xdt == IR_BFLOAT16;
    if (g->mode != AD_GS_NEAREST && !xfloat)
        return ad_refuse(c, DG_TYPE, "interpolating X of type %s (only nearest copies it)",
                         ir_dtype_name(g->xdt) ? ir_dtype_name(g->xdt) : "?");
    g->cdt = gdt == IR_DOUBLE ? IR_DOUBLE : IR_FLOAT;
    g->wdt = g->xdt == IR_DOUBLE ? IR_DOUBLE : IR_FLOAT;
    return 0;
}

/* X as rows: padded with one zero on each side of every spatial axis
 * (zeros padding), transposed to (N, spatial..., C) and flattened to
 * (N*S, C); float16/bfloat16 X widened to float for interpolation. */
static IrValue *ad_gs_table(AdCtx *c, const AdGs *g, IrValue *x)
{
    int r = g->k + 2;
    if (g->mode != AD_GS_NEAREST)
        x = ad_cast(c, x, g->wdt);
    if (g->pad == AD_GS_ZEROS && x && !c->refusal) {
        int64_t pads[2 * (AD_GS_MAXK + 2)] = {0};
        for (int i = 2; i < r; i++)
            pads[i] = pads[r + i] = 1;
        x = ad_pad(c, x, (size_t)(2 * r), pads);
    }
    int64_t perm[AD_GS_MAXK + 2];
    perm[0] = 0;
    for (int i = 1; i < r; i++)
        perm[i] = i < r - 1 ? i + 1 : 1;
    IrValue *t = ad_transpose(c, x, (size_t)r, perm);
    IrNode *k = t ? ad_raw(c, "Flatten", 1, &t, 1) : NULL;
    if (k)
        ad_set_attr_i(c, k, "axis", r - 1);
    return ad_fin(c, k);
}

/* The first row of each batch entry, n * S, shaped (N, 1, ..., 1) to
 * `rank`: a constant when N is known, else Range(0, N) * S with N read
 * from X's shape. */
static IrValue *ad_gs_base(AdCtx *c, const AdGs *g, size_t rank)
{
    int64_t dims[2 * AD_GS_MAXK + 1];
    for (size_t i = 0; i < rank; i++)
        dims[i] = i == 0 ? (g->n > 0 ? g->n : -1) : 1;
    if (g->n > 0) {
        int64_t *base = mem_array((size_t)g->n, sizeof *base);
        for (int64_t i = 0; i < g->n; i++)
            base[i] = i * g->block;
        IrValue *b = ad_const_int_tensor(c, IR_INT64, rank, dims, base, (size_t)g->n);
        free(base);
        return b;
    }
    IrValue *shape = ad_op1(c, "Shape", ad_in(c, 0));
    IrValue *n = ad_op2(c, "Gather", shape, ad_const_int(c, IR_INT64, 0));
    IrValue *rin[3] = {ad_const_int(c, IR_INT64, 0), n,
                       ad_const_int(c, IR_INT64, g->block)};
    if (!rin[0] || !rin[1] || !rin[2])
        return NULL;
    rin[1] = ad_op2(c, "Mul", n, rin[2]);
    IrNode *range = rin[1] ? ad_node(c, c->n, "Range", 3, rin, 1) : NULL;
    return range ? ad_op2(c, "Reshape", range->out[0], ad_const_i64s(c, rank, dims)) : NULL;
}

/* The row of every tap: the sum of the axes' offsets (spread over one
 * tap axis each) and n * S for batch entry n. *w gets each axis' weights
 * (NULL for nearest). */
static IrValue *ad_gs_index(AdCtx *c, const AdGs *g, IrValue *grid, IrValue **w)
{
    IrValue *idx = NULL;
    int ntap = g->mode == AD_GS_NEAREST ? 0 : g->k;
    for (int j = 0; j < g->k; j++) {
        IrValue *rows;
        if (ad_gs_axis(c, g, grid, j, &rows, &w[j]) < 0)
            return NULL;
        rows = ntap ? ad_gs_spread(c, g, rows, j, ntap) : rows;
        idx = idx ? ad_op2(c, "Add", idx, rows) : rows;
    }
    if (g->n != 1 && idx && !c->refusal)
        idx = ad_op2(c, "Add", idx, ad_gs_base(c, g, (size_t)(g->k + 1 + ntap)));
    return idx;
}

/* The weighted sum of the gathered taps v (N, out..., T_0..T_{k-1}, C):
 * from the last axis to the first, times its weights spread to
 * (N, out..., 1.., T_j, 1), summed over T_j. */
static IrValue *ad_gs_sum(AdCtx *c, const AdGs *g, IrValue *v, IrValue *const *w)
{
    for (int j = g->k - 1; j >= 0 && v; j--) {
        int64_t ax[AD_GS_MAXK + 1], tap = g->k + 1 + j;
        size_t n = 0;
        for (int i = 0; i < j; i++)
            ax[n++] = g->k + 1 + i;
        ax[n++] = tap + 1;
        IrValue *wj = ad_axes_op(c, c->n, "Unsqueeze", w[j], n, ax);
        v = ad_reduce(c, "ReduceSum", ad_op2(c, "Mul", v, wj), 1, &tap, false);
    }
    return v;
}

/* GridSample (any version) expanded into Gather and arithmetic (see the
 * top of the file). */
static int ad_gs_expand(AdCtx *c)
{
    AdGs g = {0};
    g.low = c->goal_opset > 0 && c->goal_opset < c->build_opset ? c->goal_opset
                                                                 : c->build_opset;
    if (ad_gs_modes(c, &g) < 0 || ad_gs_shapes(c, &g) < 0)
        return -1;
    IrValue *w[AD_GS_MAXK] = {0};
    IrValue *table = ad_gs_table(c, &g, ad_in(c, 0));
    IrValue *idx = table ? ad_gs_index(c, &g, ad_in(c, 1), w) : NULL;
    IrValue *v = ad_gather(c, table, idx, 0);
    if (g.mode != AD_GS_NEAREST)
        v = ad_gs_sum(c, &g, v, w);
    int64_t perm[AD_GS_MAXK + 2];
    int r = g.k + 2;
    perm[0] = 0;
    perm[1] = r - 1;
    for (int i = 2; i < r; i++)
        perm[i] = i - 1;
    IrValue *y = ad_transpose(c, v, (size_t)r, perm);
    if (g.mode != AD_GS_NEAREST)
        y = ad_cast(c, y, g.xdt);
    if (!y)
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot build the expansion");
    ad_move_output(c, 0, y->producer, 0);
    ir_node_delete(c->n);
    return 0;
}

/* ---- GridSample versions -------------------------------------------- */

/* GridSample 16 -> 20: modes "bilinear"/"bicubic" are called
 * "linear"/"cubic" from 20 (the default renamed with them); 20 also takes
 * N-D inputs. */
static int ad_gs_16_20(AdCtx *c)
{
    char mb[32];
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    if (!ad_attr(c, "mode"))
        return 0;
    if (strcmp(mode, "bilinear") == 0)
        ad_set_attr_s(c, c->n, "mode", "linear");
    else if (strcmp(mode, "bicubic") == 0)
        ad_set_attr_s(c, c->n, "mode", "cubic");
    else if (strcmp(mode, "nearest") != 0)
        return ad_refuse(c, DG_ATTRIBUTE, "unknown mode '%s'", mode);
    return 0;
}

/* GridSample 20 -> 16: the mode names back for 4-D X; any other rank
 * (GridSample-16 takes 4-D only) is expanded here. */
static int ad_gs_20_16(AdCtx *c)
{
    char mb[32];
    int r = ad_rank(ad_in(c, 0));
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "GridSample-16 takes 4-D inputs only and the rank of X is unknown");
    if (r != 4)
        return ad_gs_expand(c);
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    if (!ad_attr(c, "mode"))
        return 0;
    if (strcmp(mode, "linear") == 0)
        ad_set_attr_s(c, c->n, "mode", "bilinear");
    else if (strcmp(mode, "cubic") == 0)
        ad_set_attr_s(c, c->n, "mode", "bicubic");
    else if (strcmp(mode, "nearest") != 0)
        return ad_refuse(c, DG_ATTRIBUTE, "unknown mode '%s'", mode);
    return 0;
}

/* ---- AffineGrid ----------------------------------------------------- */

/* Coordinate i of n points over [-1, 1], as AffineGrid places them
 * (pixel centres when align_corners is 0). */
static double ad_ag_coord(int64_t i, int64_t n, bool align)
{
    if (align)
        return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
    return -1.0 + (2.0 * (double)i + 1.0) / (double)n;
}

/* The coordinates along the spatial dim size[sidx], as a 1-D tensor of
 * element type cdt (float or double): constants when size is, else
 * Range(0, n) mapped by -1 + (2i + 1) / n, or -1 + 2i / max(n - 1, 1)
 * with align_corners (n = 1 gives -1, as AffineGrid does). */
static IrValue *ad_ag_coords(AdCtx *c, IrValue *size, int sidx, bool align, int32_t cdt)
{
    int64_t *sz;
    size_t ns;
    if (ad_const_ints(size, &sz, &ns)) {
        int64_t n = (size_t)sidx < ns ? sz[sidx] : -1;
        free(sz);
        if (n < 0) {
            ad_refuse(c, DG_SEMANTICS, "size has no valid entry %d", sidx);
            return NULL;
        }
        double *v = mem_array(n ? (size_t)n : 1, sizeof *v);
        for (int64_t i = 0; i < n; i++)
            v[i] = ad_ag_coord(i, n, align);
        IrValue *k;
        if (cdt == IR_FLOAT) {
            k = ad_const_reals(c, IR_FLOAT, (size_t)n, v);
        } else {
            k = ad_const_tensor(c, cdt, 1, &n, v, (size_t)n * sizeof *v);
        }
        free(v);
        return k;
    }
    IrValue *len = ad_op2(c, "Gather", size, ad_const_scalar(c, IR_INT64, sidx));
    IrValue *rin[3] = {ad_const_scalar(c, IR_INT64, 0), len,
                       ad_const_scalar(c, IR_INT64, 1)};
    if (!rin[0] || !rin[1] || !rin[2])
        return NULL;
    IrNode *range = ad_node(c, c->n, "Range", 3, rin, 1);
    if (!range)
        return NULL;
    IrValue *fi = ad_cast(c, range->out[0], cdt), *fn = ad_cast(c, len, cdt);
    IrValue *two = ad_const_scalar(c, cdt, 2.0), *one = ad_const_scalar(c, cdt, 1.0);
    IrValue *den = align ? ad_op2(c, "Max", ad_op2(c, "Sub", fn, one), one) : fn;
    IrValue *num = ad_op2(c, "Mul", fi, two);
    if (!align)
        num = ad_op2(c, "Add", num, one);
    return ad_op2(c, "Add", ad_op2(c, "Div", num, den),
                     ad_const_scalar(c, cdt, -1.0));
}

/* v reshaped to `shape` (rank r), built before c->n. */
static IrValue *ad_ag_reshape(AdCtx *c, IrValue *v, size_t r, const int64_t *shape)
{
    return ad_op2(c, "Reshape", v, ad_const_i64s(c, r, shape));
}

/* AffineGrid-20 (opset 19 and below): no older op builds the grid, but it
 * is grid[n, ..., r] = sum_j theta[n, r, j] * base_j + theta[n, r, nd]
 * with base_j the coordinates of spatial dim j (x along the last one): per
 * j a coordinate vector reshaped to broadcast along its own axis, times
 * column j of theta reshaped to [N, 1, .., 1, nd], summed in the order the
 * definition sums. float16 and bfloat16 are computed in float and cast
 * back once at the end (as AffineGrid rounds once); double in double. */
static int ad_ag_20_0(AdCtx *c)
{
    IrValue *theta = ad_in(c, 0), *size = ad_in(c, 1);
    int32_t dt = ad_elem(theta);
    int64_t ns = ad_dim(size, 0);
    bool align = ad_attr_i(c, "align_corners") != 0;
    if (dt != IR_FLOAT && dt != IR_FLOAT16 && dt != IR_DOUBLE && dt != IR_BFLOAT16)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of theta is unknown");
    if (ns != 4 && ns != 5)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the length of size (4 or 5) is unknown");
    int nd = (int)ns - 2, r = nd + 2;
    int32_t cdt = dt == IR_DOUBLE ? IR_DOUBLE : IR_FLOAT;
    int64_t shape[5];
    IrValue *coord[3];
    for (int j = 0; j < nd; j++) {
        int sidx = 2 + nd - 1 - j;          /* x: the last spatial dim */
        IrValue *v = ad_ag_coords(c, size, sidx, align, cdt);
        for (int k = 0; k < r; k++)
            shape[k] = k == sidx - 1 ? -1 : 1;
        if (!v || !(coord[j] = ad_ag_reshape(c, v, (size_t)r, shape)))
            return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot build the grid");
    }
    static const int64_t perm[3] = {0, 2, 1};
    if (cdt != dt && !(theta = ad_cast(c, theta, cdt)))
        return -1;
    IrValue *tin[1] = {theta};
    IrNode *tt = ad_node_in(c, c->domain, c->n, "Transpose", 1, tin, 1);
    if (!tt)
        return -1;
    ad_set_attr_ints(c, tt, "perm", 3, perm);
    if (ad_infer(c, tt) < 0)
        return -1;
    for (int k = 0; k < r; k++)
        shape[k] = k == 0 ? -1 : k == r - 1 ? nd : 1;
    IrValue *acc = NULL;
    for (int j = 0; j <= nd; j++) {
        IrValue *gin[2] = {tt->out[0], ad_const_scalar(c, IR_INT64, j)};
        IrNode *g = gin[1] ? ad_node_in(c, c->domain, c->n, "Gather", 2, gin, 1) : NULL;
        if (!g)
            return -1;
        ad_set_attr_i(c, g, "axis", 1);
        if (ad_infer(c, g) < 0)
            return -1;
        IrValue *col = ad_ag_reshape(c, g->out[0], (size_t)r, shape);
        IrValue *term = j < nd ? ad_op2(c, "Mul", col, coord[j]) : col;
        acc = j == 0 ? term : ad_op2(c, "Add", acc, term);
        if (!acc)
            return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot build the grid");
    }
    if (cdt != dt && !(acc = ad_cast(c, acc, dt)))
        return -1;
    ad_move_output(c, 0, acc->producer, 0);
    ir_node_delete(c->n);
    return 0;
}

static const AdEntry ad_sample[] = {
    AD_UP("GridSample", 16, 20, AD_SEMANTIC, ad_gs_16_20),
    AD_DOWN("GridSample", 16, 20, AD_SEMANTIC, ad_gs_20_16),
    AD_BOTH("GridSample", 20, 22),
    AD_GONE("GridSample", 16, AD_EXPAND, ad_gs_expand),
    AD_GONE("AffineGrid", 20, AD_EXPAND, ad_ag_20_0),
};

const AdFamily ad_family_sample = {"sample", ad_sample,
                                   sizeof ad_sample / sizeof ad_sample[0]};
