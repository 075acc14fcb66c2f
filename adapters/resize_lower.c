/*
 * resize_lower.c - Resize as constant interpolation tables (resize family).
 *
 * When X's shape is static and the scales or sizes (and the roi of
 * tf_crop_and_resize) are known, the spec's separable interpolation maps,
 * on each axis, every output index o to a few input indices with fixed
 * weights. They are computed here at conversion time, as Resize-10..19
 * and ONNX's reference implementation define them (the same rules as
 * src/eval/resize.c): output lengths, the coordinate transformation, the
 * taps (nearest: 1 by nearest_mode; linear: 2; cubic: 4 with cubic_coeff_a
 * and exclude_outside; antialias: the filter widened by 1/scale when
 * downsampling, normalized), clamped to the axis. Then, axis after axis
 * (shrinking axes first, to keep intermediates small):
 *   one tap of weight 1 (nearest):  Gather(y, idx[out], axis)
 *   one tap:                        Gather(y, idx[out], axis) * w
 *   T taps:   ReduceSum(Gather(y, idx[out, T], axis) * w[out, T], axis + 1)
 * Taps that land on one clamped index are merged and zero weights
 * dropped; rows with fewer taps are padded with weight 0 at a valid
 * index. The spec leaves the order of the weighted sum open, so only
 * rounding differs from a runtime's Resize. Positions of
 * tf_crop_and_resize outside the input get extrapolation_value through a
 * Where with a constant mask at the end.
 *
 * Lowest opsets: Gather, Mul and ReduceSum all exist at 1 (Mul's numpy
 * broadcasting from 7; below, the Mul adapters rewrite it into the legacy
 * broadcast), so tables go down to opset 1; Where exists from 9, so crops
 * that extrapolate stop at 9. Nodes are built for c->build_opset and the
 * driver lowers them further.
 *
 * Linear and cubic interpolate in float (double for double inputs);
 * float16 and bfloat16 are cast to float and back once, as the evaluator
 * rounds once. Integer inputs are refused there (nearest takes any type).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"
#include "adapters/resize_lower.h"
#include "schema/resize.h"

enum { RL_NEAREST, RL_LINEAR, RL_CUBIC };
enum { RL_BY_SCALE, RL_BY_SIZE, RL_BY_KEEP };

#define RL_MAX_RANK 64
/* Entries of the raw tap tables of all axes together (output length x
 * taps, summed): bounds the work and memory at conversion time and the
 * constants written. */
#define RL_MAX_TABLE ((size_t)1 << 22)

typedef RszAxis AdRlAxis;   /* src/schema/resize.h */

typedef struct {
    int mode, ctm, nm;
    double a, extrap;
    bool exclude, antialias;
    int r;
    AdRlAxis ax[RL_MAX_RANK];
    const char *why;
    double entries;           /* raw table entries so far (RL_MAX_TABLE) */
} AdRlPlan;

/* One axis' tables: t taps for each output index. */
typedef struct {
    size_t t;
    int64_t *idx;             /* out * t, row-major */
    double *w;                /* out * t */
    bool *outside;            /* out: extrapolated positions (crop) */
    bool any_outside, unit, identity;
} AdRlTable;

/* Refuses with the reason the direct mapping failed and what the tables
 * lack. */
static int ad_rl_refuse(AdCtx *c, const AdRlPlan *p, DgReason key, const char *what)
{
    return ad_refuse(c, key, "%s; as interpolation tables it needs %s", p->why, what);
}

static int ad_rl_find(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

/* ---- reading the node ------------------------------------------------ */

/* Mode, coordinates, rounding and the filter attributes; Resize-10 is
 * asymmetric with its own rounding (floor up, ceil down). */
static int ad_rl_attrs(AdCtx *c, AdRlPlan *p, int ver)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    char mb[32], cb[48], nb[48];
    const char *m = ad_attr_s(c, "mode", mb, sizeof mb);
    p->mode = ad_rl_find(modes, 3, m);
    p->a = -0.75;
    if (p->mode < 0 || (p->mode == RL_CUBIC && ver < 11))
        return ad_refuse(c, DG_ATTRIBUTE, "unknown mode '%s'", m);
    if (ver < 11) {
        p->ctm = RSZ_ASYMMETRIC;
        p->nm = RSZ_SIMPLE;
        return 0;
    }
    const char *ct = ad_attr_s(c, "coordinate_transformation_mode", cb,
                               sizeof cb);
    const char *nm = ad_attr_s(c, "nearest_mode", nb, sizeof nb);
    p->ctm = ad_rl_find(rsz_ctm_names, RSZ_N_CTM, ct);
    p->nm = ad_rl_find(rsz_nm_names, RSZ_N_NM, nm);
    if (p->ctm < 0 || p->nm < 0)
        return ad_refuse(c, DG_ATTRIBUTE, "unknown %s '%s'",
                         p->ctm < 0 ? "coordinate_transformation_mode" : "nearest_mode",
                         p->ctm < 0 ? ct : nm);
    p->a = ad_attr_f(c, "cubic_coeff_a");
    p->exclude = ad_attr_i(c, "exclude_outside") != 0;
    p->extrap = ad_attr_f(c, "extrapolation_value");
    p->antialias = ver >= 18 && p->mode != RL_NEAREST && ad_attr_i(c, "antialias");
    return 0;
}

/* X's dims into p->ax (each known and positive), scale 1 and roi [0, 1]. */
static int ad_rl_shape(AdCtx *c, AdRlPlan *p, IrValue *x)
{
    p->r = ad_rank(x);
    if (p->r < 1 || p->r > RL_MAX_RANK)
        return ad_rl_refuse(c, p, DG_SHAPE_UNKNOWN, "the rank of X");
    for (int i = 0; i < p->r; i++) {
        int64_t d = ad_dim(x, i);
        if (d < 1)
            return ad_rl_refuse(c, p, DG_SHAPE_UNKNOWN, "every dim of X known and positive");
        p->ax[i] = (AdRlAxis){d, d, 1.0, (double)d, 0.0, 1.0};
    }
    return 0;
}

/* Sets the output length of axis a from scale s (the real length s * in
 * feeds the coordinate formulas) or, with sizes, from size z (keep: the
 * keep_aspect_ratio_policy scale s, length round(s * in)). */
static int ad_rl_length(AdCtx *c, const AdRlPlan *p, AdRlAxis *a, double s, int64_t z,
                        int how)
{
    if (how == RL_BY_SIZE)
        s = (double)z / (double)a->in;
    if (!(s > 0) || !(s * (double)a->in < 1048576.0))
        return ad_rl_refuse(c, p, DG_ATTRIBUTE, "positive scales that give outputs shorter than 2^20");
    a->scale = s;
    a->outf = how == RL_BY_SIZE ? (double)z : s * (double)a->in;
    a->out = how == RL_BY_SCALE ? rsz_len(a->in, s)   /* float32: src/schema/resize.h */
           : how == RL_BY_KEEP ? (int64_t)(a->outf + 0.5) : z;
    if (a->out < 1)
        return ad_rl_refuse(c, p, DG_ATTRIBUTE, "output lengths of at least 1");
    return 0;
}

/* The output lengths from the known scales or sizes over the resized axes
 * use[0..n), and the roi of tf_crop_and_resize. */
static int ad_rl_lengths(AdCtx *c, AdRlPlan *p, int ver, const int64_t *use, size_t n)
{
    char pb[32];
    const char *pol = ver >= 18 ? ad_attr_s(c, "keep_aspect_ratio_policy", pb,
                                            sizeof pb) : "stretch";
    int which = ver < 11 ? 1 : ad_rs_which(c);
    double *sv = NULL, *roi = NULL, best = 0;
    int64_t *zv = NULL;
    size_t m = 0, nroi = 0;
    if (which < 0)
        return -1;
    if (which != 3 ? !ad_const_floats(ad_in(c, (size_t)which), &sv, &m)
                   : !ad_const_ints(ad_in(c, 3), &zv, &m))
        return ad_rl_refuse(c, p, DG_NOT_CONSTANT,
                            which != 3 ? "known scales" : "known sizes");
    bool keep = which == 3 && strcmp(pol, "stretch") != 0;
    int rc = m == n ? 0 : ad_rl_refuse(c, p, DG_ATTRIBUTE, "one scale or size per axis");
    if (rc == 0 && keep && strcmp(pol, "not_larger") && strcmp(pol, "not_smaller"))
        rc = ad_refuse(c, DG_ATTRIBUTE, "unknown keep_aspect_ratio_policy '%s'", pol);
    for (size_t i = 0; rc == 0 && keep && i < n; i++) {
        double v = (double)zv[i] / (double)p->ax[use[i]].in;
        if (i == 0 || (pol[4] == 'l' ? v < best : v > best))   /* not_larger: min */
            best = v;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = ad_rl_length(c, p, &p->ax[use[i]], keep ? best : sv ? sv[i] : 0,
                          zv ? zv[i] : 0,
                          which != 3 ? RL_BY_SCALE : keep ? RL_BY_KEEP : RL_BY_SIZE);
    if (rc == 0 && p->ctm == RSZ_CROP) {
        if (!ad_const_floats(ad_in(c, 1), &roi, &nroi) || nroi != 2 * n)
            rc = ad_rl_refuse(c, p, DG_NOT_CONSTANT, "a known roi of 2 values per axis");
        for (size_t i = 0; rc == 0 && i < n; i++) {
            p->ax[use[i]].lo = roi[i];
            p->ax[use[i]].hi = roi[n + i];
        }
    }
    free(sv);
    free(zv);
    free(roi);
    return rc;
}

/* The whole plan of c->n: attributes, shape, lengths. */
static int ad_rl_plan(AdCtx *c, AdRlPlan *p)
{
    int ver = c->from ? c->from->since : 11;
    if (ad_rl_attrs(c, p, ver) < 0 || ad_rl_shape(c, p, ad_in(c, 0)) < 0)
        return -1;
    size_t n = (size_t)p->r;
    bool bad = false;
    int64_t *axes = ver >= 18 ? ad_rs_axes(c, p->r, &n, &bad) : NULL, all[RL_MAX_RANK];
    if (bad)
        return -1;
    if (!axes) {
        n = n ? n : (size_t)p->r;
        for (int i = 0; i < p->r; i++)
            all[i] = i;
    }
    int rc = ad_rl_lengths(c, p, ver, axes ? axes : all, n);
    free(axes);
    return rc;
}

/* ---- the tables ------------------------------------------------------- */

static int64_t ad_rl_clamp(double v, int64_t len)
{
    return !(v > 0) ? 0 : v >= (double)(len - 1) ? len - 1 : (int64_t)v;
}

static double ad_rl_cubic(double a, double x)
{
    x = fabs(x);
    if (x <= 1)
        return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
}

/* The raw tap count and the offset of the first tap from the left
 * neighbour floor(xo): antialias widens the filter by 1/scale when
 * downsampling. */
static int ad_rl_taps(AdCtx *c, AdRlPlan *p, const AdRlAxis *a, size_t *n,
                      int64_t *start)
{
    double reach = p->mode == RL_CUBIC ? 2.0 : 1.0;
    double s = a->scale < 1 ? a->scale : 1.0, st = floor(-reach / s) + 1;
    if (p->mode == RL_NEAREST || !p->antialias)
        st = p->mode == RL_CUBIC ? -1 : 0;
    if (!(st > -4.0 * (double)a->in - 8))
        return ad_rl_refuse(c, p, DG_TOO_LARGE, "an antialias filter narrower than this");
    *start = (int64_t)st;
    *n = p->mode == RL_NEAREST ? 1 : (size_t)(2 - 2 * *start);
    p->entries += (double)*n * (double)a->out;
    if (p->entries > (double)RL_MAX_TABLE)
        return ad_rl_refuse(c, p, DG_TOO_LARGE, "fewer than 2^22 taps over all axes");
    return 0;
}

/* Weights w[0..n) of the taps of coordinate xo (from floor(xo) + start). */
static void ad_rl_weights(const AdRlPlan *p, const AdRlAxis *a, double xo, size_t n,
                          int64_t start, double *w, double *base_out)
{
    double base = ceil(xo) - 1, ratio = xo - base, sum = 0;
    double s = a->scale < 1 ? a->scale : 1.0;
    *base_out = base;
    for (size_t k = 0; k < n; k++) {
        double d = (double)(start + (int64_t)k) - ratio;   /* tap - xo */
        if (p->antialias && p->mode == RL_CUBIC)
            w[k] = ad_rl_cubic(p->a, d * s);
        else if (p->antialias)
            w[k] = fmax(0.0, fmin(1.0, 1 - fabs(d * s)));
        else if (p->mode == RL_CUBIC)
            w[k] = ad_rl_cubic(p->a, d);
        else
            w[k] = k == 0 ? 1 - ratio : ratio;
        sum += w[k];
    }
    for (size_t k = 0; p->antialias && sum != 0 && k < n; k++)
        w[k] /= sum;
    if (!p->exclude)
        return;
    sum = 0;
    for (size_t k = 0; k < n; k++) {
        double i = base + (double)start + (double)k;
        if (i < 0 || i >= (double)a->in)
            w[k] = 0;
        sum += w[k];
    }
    for (size_t k = 0; sum != 0 && k < n; k++)
        w[k] /= sum;
}

/* Row o's taps into ri/rw (at most n): clamped indices (non-decreasing,
 * so equal ones are neighbours and merge), zero weights dropped. Returns
 * the count. */
static size_t ad_rl_row(const AdRlPlan *p, const AdRlAxis *a, int64_t o, double xo,
                        size_t n, int64_t start, double *w, int64_t *ri, double *rw)
{
    double base;
    size_t len = 0;
    if (p->mode == RL_NEAREST) {
        ri[0] = rsz_nearest(p->ctm, p->nm, a, o);
        rw[0] = 1.0;
        return 1;
    }
    ad_rl_weights(p, a, xo, n, start, w, &base);
    for (size_t k = 0; k < n; k++) {
        if (w[k] == 0)
            continue;
        int64_t i = ad_rl_clamp(base + (double)start + (double)k, a->in);
        if (len && ri[len - 1] == i) {
            rw[len - 1] += w[k];
        } else {
            ri[len] = i;
            rw[len++] = w[k];
        }
    }
    return len;
}

static void ad_rl_table_free(AdRlTable *t)
{
    free(t->idx);
    free(t->w);
    free(t->outside);
    memset(t, 0, sizeof *t);
}

/* Packs rows (raw, n per row, lens[o] used) into t: t->t = the longest
 * row, shorter ones padded with weight 0 at their last (valid) index. */
static void ad_rl_pack(AdRlTable *t, const AdRlAxis *a, const int64_t *ri,
                       const double *rw, const size_t *lens, size_t n)
{
    size_t out = (size_t)a->out, tt = 1;
    for (size_t o = 0; o < out; o++)
        tt = lens[o] > tt ? lens[o] : tt;
    t->t = tt;
    t->idx = mem_array(out * tt, sizeof *t->idx);
    t->w = mem_array(out * tt, sizeof *t->w);
    t->unit = tt == 1;
    t->identity = a->out == a->in && !t->any_outside;
    for (size_t o = 0; o < out; o++) {
        for (size_t k = 0; k < tt; k++) {
            bool have = k < lens[o];
            int64_t last = lens[o] ? ri[o * n + lens[o] - 1] : 0;
            t->idx[o * tt + k] = have ? ri[o * n + k] : last;
            t->w[o * tt + k] = have ? rw[o * n + k] : 0.0;
        }
        t->unit = t->unit && t->w[o * tt] == 1.0;
        t->identity = t->identity && t->unit && t->idx[o * tt] == (int64_t)o;
    }
}

/* The tables of axis a. Positions outside a crop get index 0, weight 1
 * (the final Where writes them). */
static int ad_rl_table(AdCtx *c, AdRlPlan *p, const AdRlAxis *a, AdRlTable *t)
{
    size_t n = 1, out = (size_t)a->out;
    int64_t start = 0;
    memset(t, 0, sizeof *t);
    if (ad_rl_taps(c, p, a, &n, &start) < 0)
        return -1;
    int64_t *ri = mem_array(out * n, sizeof *ri);
    double *rw = mem_array(out * n, sizeof *rw), *w = mem_array(n, sizeof *w);
    size_t *lens = mem_array(out, sizeof *lens);
    t->outside = mem_array(out, sizeof *t->outside);
    for (size_t o = 0; o < out; o++) {
        double xo = rsz_coord(p->ctm, a, (int64_t)o, &t->outside[o]);
        if (p->mode == RL_NEAREST)   /* as the float32 coordinate says */
            t->outside[o] = rsz_nearest(p->ctm, p->nm, a, (int64_t)o) < 0;
        t->any_outside = t->any_outside || t->outside[o];
        if (t->outside[o]) {
            ri[o * n] = 0;
            rw[o * n] = 1.0;
            lens[o] = 1;
        } else {
            lens[o] = ad_rl_row(p, a, (int64_t)o, xo, n, start, w, ri + o * n, rw + o * n);
        }
    }
    ad_rl_pack(t, a, ri, rw, lens, n);
    free(ri);
    free(rw);
    free(w);
    free(lens);
    return 0;
}

/* ---- building --------------------------------------------------------- */

/* Gather(y, idx, axis), before c->n. */
static IrValue *ad_rl_gather(AdCtx *c, IrValue *y, IrValue *idx, int64_t axis)
{
    IrValue *in[2] = {y, idx};
    IrNode *g = y && idx && !c->refusal
                    ? ad_node_in(c, c->domain, c->n, "Gather", 2, in, 1) : NULL;
    if (!g)
        return NULL;
    ad_set_attr_i(c, g, "axis", axis);
    return ad_infer(c, g) < 0 ? NULL : g->out[0];
}

/* A constant of type ct (float or double) holding v[0..n) with dims
 * d[0..r). */
static IrValue *ad_rl_fconst(AdCtx *c, int32_t ct, size_t r, const int64_t *d,
                             const double *v, size_t n)
{
    size_t w = ct == IR_DOUBLE ? 8 : 4;
    unsigned char *raw = mem_array(n ? n : 1, w);
    for (size_t i = 0; i < n; i++) {
        float f = (float)v[i];
        memcpy(raw + i * w, ct == IR_DOUBLE ? (const void *)&v[i] : (const void *)&f, w);
    }
    IrValue *k = c->refusal ? NULL : ad_const_tensor(c, ct, r, d, raw, n * w);
    free(raw);
    return k;
}

/* Dims of rank r, all 1 but d[axis] = len (and d[axis + 1] = t when t). */
static size_t ad_rl_bdims(int64_t *d, int r, int axis, int64_t len, size_t t)
{
    size_t rr = (size_t)r + (t ? 1 : 0);
    for (size_t i = 0; i < rr; i++)
        d[i] = 1;
    d[axis] = len;
    if (t)
        d[axis + 1] = (int64_t)t;
    return rr;
}

/* y interpolated along axis by table t, in type ct. */
static IrValue *ad_rl_apply(AdCtx *c, const AdRlPlan *p, IrValue *y, int axis,
                            const AdRlTable *t, int32_t ct)
{
    int64_t out = p->ax[axis].out, d[RL_MAX_RANK + 1], d2[2] = {out, (int64_t)t->t};
    size_t n = (size_t)out * t->t;
    IrValue *idx = t->t == 1 ? ad_const_i64s(c, (size_t)out, t->idx)
                             : ad_const_int_tensor(c, IR_INT64, 2, d2, t->idx, n);
    y = ad_rl_gather(c, y, idx, axis);
    if (t->unit || !y)
        return y;
    size_t rr = ad_rl_bdims(d, p->r, axis, out, t->t == 1 ? 0 : t->t);
    y = ad_op2(c, "Mul", y, ad_rl_fconst(c, ct, rr, d, t->w, n));
    if (t->t == 1 || !y)
        return y;
    int64_t sum_axis = axis + 1;
    return ad_reduce(c, "ReduceSum", y, 1, &sum_axis, false);
}

/* Where(mask, extrapolation_value, y) for the outside positions of axis. */
static IrValue *ad_rl_extrapolate(AdCtx *c, const AdRlPlan *p, IrValue *y, int axis,
                                  const AdRlTable *t, int32_t ct)
{
    int64_t d[RL_MAX_RANK];
    size_t out = (size_t)p->ax[axis].out;
    size_t rr = ad_rl_bdims(d, p->r, axis, (int64_t)out, 0);
    unsigned char *m = mem_array(out, 1);
    for (size_t o = 0; o < out; o++)
        m[o] = t->outside[o] ? 1 : 0;
    IrValue *in[3] = {c->refusal ? NULL : ad_const_tensor(c, IR_BOOL, rr, d, m, out),
                      c->refusal ? NULL : ad_const_scalar(c, ct, p->extrap), y};
    free(m);
    if (!in[0] || !in[1] || !y)
        return NULL;
    IrNode *k = ad_node(c, c->n, "Where", 3, in, 1);
    return k ? k->out[0] : NULL;
}

/* The type the weighted sums run in for X's type et: et for float and
 * double, float for float16/bfloat16; 0 when none (integers, strings). */
static int32_t ad_rl_calc_type(int32_t et)
{
    return et == IR_FLOAT || et == IR_DOUBLE ? et
         : et == IR_FLOAT16 || et == IR_BFLOAT16 ? IR_FLOAT : 0;
}

/* Checks that the tables can be built: a type to compute in when weights
 * or extrapolation are needed, Where (opset 9) for extrapolation.
 * *ct gets the computing type (0: X's own, gathers only). */
static int ad_rl_can_build(AdCtx *c, const AdRlPlan *p, const AdRlTable *t, int32_t et,
                           int32_t *ct)
{
    bool weighted = false, extra = false;
    for (int i = 0; i < p->r; i++) {
        weighted = weighted || (!t[i].identity && !t[i].unit);
        extra = extra || t[i].any_outside;
    }
    *ct = weighted || extra ? ad_rl_calc_type(et) : 0;
    if ((weighted || extra) && !*ct)
        return ad_rl_refuse(c, p, DG_TYPE,
                            et ? "a floating X to interpolate or extrapolate"
                               : "X's element type known");
    int64_t low = c->goal_opset > 0 && c->goal_opset < c->build_opset ? c->goal_opset
                                                                       : c->build_opset;
    if (extra && low < 9)
        return ad_rl_refuse(c, p, DG_ATTRIBUTE,
                            "Where (opset 9) to write extrapolation_value outside the roi");
    return 0;
}

/* Builds the Gathers (and sums, Where) of tables t[0..r) from x; returns
 * the final value (x itself when every axis is the identity). */
static IrValue *ad_rl_build(AdCtx *c, const AdRlPlan *p, const AdRlTable *t, IrValue *x,
                            int32_t ct)
{
    int32_t et = ad_elem(x);
    IrValue *y = ct ? ad_cast(c, x, ct) : x;
    /* Shrinking axes first keeps the intermediates small. */
    for (int pass = 0; pass < 2 && y; pass++)
        for (int i = 0; i < p->r && y; i++)
            if (!t[i].identity && (p->ax[i].out <= p->ax[i].in) == (pass == 0))
                y = ad_rl_apply(c, p, y, i, &t[i], ct);
    for (int i = 0; i < p->r && y; i++)
        if (t[i].any_outside)
            y = ad_rl_extrapolate(c, p, y, i, &t[i], ct);
    return ct ? ad_cast(c, y, et) : y;
}

int ad_rs_lower(AdCtx *c, const char *why)
{
    AdRlPlan *p = mem_array(1, sizeof *p);
    AdRlTable *t = mem_array(RL_MAX_RANK, sizeof *t);
    IrValue *x = ad_in(c, 0), *y = NULL, *old[3] = {ad_in(c, 1), ad_in(c, 2), ad_in(c, 3)};
    int32_t ct = 0;
    int rc = 0;
    memset(p, 0, sizeof *p);
    memset(t, 0, RL_MAX_RANK * sizeof *t);
    p->why = why;
    if (ad_rl_plan(c, p) < 0)
        rc = -1;
    for (int i = 0; rc == 0 && i < p->r; i++)
        rc = ad_rl_table(c, p, &p->ax[i], &t[i]);
    if (rc == 0)
        rc = ad_rl_can_build(c, p, t, ad_elem(x), &ct);
    if (rc == 0 && !(y = ad_rl_build(c, p, t, x, ct)))
        rc = c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot build the tables");
    IrNode *k = rc == 0 ? (y == x ? ad_node(c, c->n, "Identity", 1, &x, 1) : y->producer)
                        : NULL;
    if (rc == 0 && !k)
        rc = -1;
    if (rc == 0) {
        ad_replace(c, k);
        for (int i = 0; i < 3; i++) {
            bool seen = !old[i] || old[i] == x;
            for (int j = 0; j < i && !seen; j++)
                seen = old[j] == old[i];
            if (!seen)
                ad_drop_if_dead(c, old[i]);
        }
    }
    for (int i = 0; i < RL_MAX_RANK; i++)
        ad_rl_table_free(&t[i]);
    free(t);
    free(p);
    return rc;
}
