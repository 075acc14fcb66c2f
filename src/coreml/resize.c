/*
 * coreml/resize.c - Core ML lowering and raising of the resize family:
 * Resize (and Upsample, which the conversion to CM_ONNX_OPSET turns into
 * Resize) as resize_bilinear, resize_nearest_neighbor or
 * upsample_nearest_neighbor; raised back to a Resize whose attributes say
 * what the MIL op computes.
 *
 * MIL facts (coremltools' defs, iOS15/16; the TensorFlow front end's
 * mapping): the ops resize the last two dims of a rank >= 3 fp16/fp32
 * tensor to const sizes or const scale factors.
 *   resize_bilinear sampling_mode, for Xin -> Xout along an axis, the
 *   sampled coordinate clamped to [0, Xin-1]:
 *     STRICT_ALIGN_CORNERS  i*(Xin-1)/(Xout-1)        = ONNX align_corners
 *     DEFAULT               i*Xin/Xout                = ONNX asymmetric
 *     UNALIGN_CORNERS       (i+0.5)*Xin/Xout - 0.5    = ONNX half_pixel
 *     ALIGN_CORNERS         STRICT, but (Xin-1)/2 when Xout is 1
 *     OFFSET_CORNERS        a grid of max(1, Xin-1)/Xout: no ONNX mode
 *   (ONNX linear reads outside taps as the edge value: the same as
 *   clamping the coordinate.)
 *   resize_nearest_neighbor is TensorFlow's half-pixel nearest:
 *     floor((i+0.5)*Xin/Xout) = floor(half_pixel coordinate + 0.5) = ONNX
 *     half_pixel with round_prefer_ceil at scale Xout/Xin (opset 13 dropped
 *     tf_half_pixel_for_nn, which said the same with floor).
 *   The formulas of STRICT_ALIGN_CORNERS and DEFAULT divide by Xout-1:
 *   an output of length 1 is left to UNALIGN_CORNERS.
 *   upsample_nearest_neighbor with integer factors k is TensorFlow's
 *   legacy nearest: floor(i/k) = ONNX asymmetric with floor.
 *
 * The lowering does not trust a table of ONNX modes: with the input and
 * output sizes static, it computes, for every output index of both
 * resized axes, the coordinate (linear) or source index (nearest) ONNX's
 * formulas give and the one each candidate MIL op gives (as the ONNX
 * Resize its raising writes computes it, so agreement here is agreement
 * in the round trip), and emits the first candidate that agrees
 * everywhere. So e.g. half_pixel with round_prefer_floor lowers to
 * upsample_nearest_neighbor for integer upscaling (where no index is a
 * tie) but is refused for 2 -> 3 (where ONNX rounds a tie down and MIL
 * up). With input dims not static, only combinations whose formulas equal
 * a MIL op's at every size lower (see rs_lower_dynamic): const sizes of
 * the last two dims, or const whole scale factors, which also open
 * upsample_bilinear (iOS15: align_corners true = ONNX align_corners,
 * false = half_pixel).
 *
 * With the input's dims static, anything no MIL resize op computes (cubic,
 * other grids or nearest_modes, a resized leading dim, rank 1 and 2,
 * tf_crop_and_resize with a const roi, exclude_outside, cubic_coeff_a) is
 * lowered per resized axis: ONNX's Resize is separable, so each axis is a
 * constant [out, in] matrix (ev_resize_axis_weights: the evaluator's own
 * formulas), applied as a gather of a constant index table when each
 * output picks one input (nearest), else as transpose (axis last) +
 * matmul + add (the extrapolation_value of a crop leaving the input) +
 * transpose back.
 *
 * Refused, and why:
 * - a matrix of more than 16M elements (an axis' in x out).
 * - tf_crop_and_resize whose roi is not a constant.
 * - with input dims not static: half_pixel_symmetric and tf_crop_and_resize
 *   (no MIL grid has their offset), cubic (no bicubic MIL op), scales
 *   other than whole factors, sizes that name a leading dim not static,
 *   combinations that agree with a MIL op only at some sizes, a resize of
 *   any dim but the last two, a rank below 3, scales/sizes that are not
 *   constants (iOS17's resize takes a computed shape but is not lowered
 *   yet).
 * - types other than fp16/fp32; antialias and axes (opset 18: the
 *   conversion to 17 removes or refuses them first).
 *
 * Raised: resize_bilinear (all modes but OFFSET_CORNERS, ALIGN_CORNERS to
 * a length-1 output), resize_nearest_neighbor, upsample_nearest_neighbor
 * with integer factors, upsample_bilinear (integer factors, or static
 * output dims), iOS17's resize (a computed target shape: LINEAR with
 * DEFAULT, UNALIGN_CORNERS or STRICT_ALIGN_CORNERS, NEAREST_NEIGHBOR with
 * DEFAULT). Refused: crop_resize (TensorFlow's crop_and_resize with its
 * own box modes; ONNX's RoiAlign averages sample points instead).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "schema/resize.h"
#include "coreml/rules.h"

#define RS_MAX_RANK 8
#define RS_MAX_CHECK ((int64_t)1 << 22)
#define RS_MAX_MATRIX ((int64_t)1 << 24)


/* One resized axis as ONNX sees it (src/schema/resize.h): sizes, the scale its
 * formulas divide by and the output length as a real number (scale * in
 * when scales are given). */
typedef RszAxis RsAxis;

typedef struct RsSpec {
    bool nearest;
    int ctm, nm;
} RsSpec;

static double rs_clamp(double x, int64_t in)
{
    return x < 0 ? 0 : x > (double)(in - 1) ? (double)(in - 1) : x;
}

/* The MIL candidates, each described by the ONNX Resize the raising gives
 * back for it (sizes given, so scale = out/in), so that agreement here is
 * agreement in the round trip. */
typedef struct RsCand {
    const char *op;         /* MIL op */
    const char *mode;       /* resize_bilinear's sampling_mode, or NULL */
    RsSpec spec;
    bool integer_only;      /* upsample_nearest_neighbor: factors k only */
} RsCand;

static const RsCand rs_cands[] = {
    {"upsample_nearest_neighbor", NULL, {true, RSZ_ASYMMETRIC, RSZ_FLOOR}, true},
    {"resize_nearest_neighbor", NULL, {true, RSZ_HALF_PIXEL, RSZ_ROUND_CEIL}, false},
    {"resize_bilinear", "UNALIGN_CORNERS", {false, RSZ_HALF_PIXEL, 0}, false},
    {"resize_bilinear", "STRICT_ALIGN_CORNERS", {false, RSZ_ALIGN, 0}, false},
    {"resize_bilinear", "DEFAULT", {false, RSZ_ASYMMETRIC, 0}, false},
};

/* Whether candidate k computes what spec does along axis a. */
static bool rs_agrees(const RsSpec *spec, const RsCand *k, const RsAxis *a)
{
    if (a->in == 1)
        return true;        /* every sample reads the one pixel */
    if (k->spec.nearest != spec->nearest)
        return false;
    if (k->integer_only && (a->out % a->in || a->out < a->in))
        return false;
    if (!k->spec.nearest && k->spec.ctm != RSZ_HALF_PIXEL && a->out == 1)
        return false;       /* 0/0 in MIL's formula (see the top) */
    RsAxis m = {a->in, a->out, (double)a->out / (double)a->in, (double)a->out, 0, 1};
    for (int64_t i = 0; i < a->out; i++) {
        bool out;
        double xo = rsz_coord(spec->ctm, a, i, &out), xm = rsz_coord(k->spec.ctm, &m, i, &out);
        if (spec->nearest) {
            if (rsz_nearest(spec->ctm, spec->nm, a, i) !=
                rsz_nearest(k->spec.ctm, k->spec.nm, &m, i))
                return false;
        } else if (fabs(rs_clamp(xo, a->in) - rs_clamp(xm, a->in)) >
                   1e-6 * (double)a->in) {
            return false;
        }
    }
    return true;
}

static int rs_enum(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return (int)i;
    return -1;
}

/* Refuses, or (quiet: only asking whether a MIL resize op fits) returns -1. */
#define RS_NO(c, quiet, ...) ((quiet) ? -1 : cml_refuse(c, __VA_ARGS__))

/* Mode, coordinate_transformation_mode and nearest_mode of n; -1 refused
 * (or, quiet, not expressible by a MIL resize op). */
static int rs_spec(CmLower *c, const IrNode *n, RsSpec *s, bool quiet)
{
    char mb[32], cb[32], nb[32];
    const char *mode = cml_attr_s(n, "mode", mb, sizeof mb);
    const char *ctm = cml_attr_s(n, "coordinate_transformation_mode", cb, sizeof cb);
    const char *nm = cml_attr_s(n, "nearest_mode", nb, sizeof nb);
    if (!strcmp(mode, "cubic"))
        return RS_NO(c, quiet, "mode cubic: MIL has no bicubic resize");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear"))
        return RS_NO(c, quiet, "mode '%s' unknown", mode);
    if (cml_attr_i(n, "antialias"))
        return RS_NO(c, quiet, "antialias: MIL's resize ops do not filter");
    if (ir_node_attr(n, "axes"))
        return RS_NO(c, quiet, "axes is not lowered");
    s->nearest = !strcmp(mode, "nearest");
    s->ctm = rs_enum(ctm, rsz_ctm_names, RSZ_N_CTM);
    s->nm = rs_enum(nm, rsz_nm_names, RSZ_N_NM);
    if (s->ctm != RSZ_HALF_PIXEL && s->ctm != RSZ_PYTORCH && s->ctm != RSZ_ALIGN &&
        s->ctm != RSZ_ASYMMETRIC)
        return RS_NO(c, quiet, "coordinate_transformation_mode %s has no MIL resize (%s)", ctm,
                          strcmp(ctm, "tf_crop_and_resize")
                              ? "no MIL grid has its offset"
                              : "crop_resize is not lowered: its parameters change at iOS17");
    if (s->nearest && s->nm < 0)
        return RS_NO(c, quiet, "nearest_mode '%s' unknown", nm);
    return 0;
}

/* Whether input i (scales or sizes) of n is given: present and not known
 * (cml_known, so also through a Cast of a Constant) to be empty, which
 * Resize-11 wrote for "not given". */
static bool rs_given(const IrNode *n, size_t i)
{
    const IrTensor *t = cml_const_tensor(n, i);
    uint64_t k;
    return cml_has(n, i) && !(t && ir_tensor_numel(t, &k) && k == 0);
}

/* The per-axis sizes of n from its const scales or sizes; -1 refused. */
static int rs_axes(CmLower *c, const IrNode *n, RsAxis *ax, size_t *rank)
{
    int64_t dims[RS_MAX_RANK];
    if (!cml_dims(n->in[0], dims, RS_MAX_RANK, rank))
        return cml_refuse(c, "the input's dims are not static");
    for (size_t i = 0; i < *rank; i++)
        ax[i] = (RsAxis){dims[i], dims[i], 1.0, (double)dims[i], 0, 1};
    bool by_sizes = rs_given(n, 3);
    if (!by_sizes && !rs_given(n, 2))
        return cml_refuse(c, "neither scales nor sizes given");
    if (by_sizes) {
        int64_t *v;
        size_t nv;
        if (!cml_const_ints(n, 3, &v, &nv))
            return cml_refuse(c, "sizes is not a constant (MIL needs const target sizes)");
        bool ok = nv == *rank;
        for (size_t i = 0; ok && i < nv; i++) {
            ok = v[i] > 0 && v[i] < ((int64_t)1 << 31) && ax[i].in > 0;
            if (ok)
                ax[i] = (RsAxis){ax[i].in, v[i], (double)v[i] / (double)ax[i].in,
                                 (double)v[i], 0, 1};
        }
        free(v);
        return ok ? 0 : cml_refuse(c, "sizes has %zu entries or one out of range", nv);
    }
    double *v;
    size_t nv;
    if (!cml_const_floats(n, 2, &v, &nv))
        return cml_refuse(c, "scales is not a constant (MIL needs const scale factors)");
    bool ok = nv == *rank;
    for (size_t i = 0; ok && i < nv; i++) {
        int64_t o = rsz_len(ax[i].in, v[i]);
        ok = o >= 1 && o < ((int64_t)1 << 31);
        if (ok)
            ax[i] = (RsAxis){ax[i].in, o, v[i], v[i] * (double)ax[i].in, 0, 1};
    }
    free(v);
    return ok ? 0 : cml_refuse(c, "scales has %zu entries or gives an empty or huge dim", nv);
}

/* Emits candidate k for the last two axes (h, w). */
static int rs_emit(CmLower *c, const IrNode *n, const RsCand *k, int64_t oh, int64_t ow,
                   int64_t fh, int64_t fw)
{
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, k->op);
    mil_op_in(op, "x", x);
    if (fh > 0) {
        mil_op_in_const(op, "scale_factor_height", mil_tensor_scalar_i32((int32_t)fh));
        mil_op_in_const(op, "scale_factor_width", mil_tensor_scalar_i32((int32_t)fw));
        if (!strcmp(k->op, "upsample_bilinear"))
            mil_op_in_const(op, "align_corners",
                            mil_tensor_scalar_bool(k->spec.ctm == RSZ_ALIGN));
    } else {
        mil_op_in_const(op, "target_size_height", mil_tensor_scalar_i32((int32_t)oh));
        mil_op_in_const(op, "target_size_width", mil_tensor_scalar_i32((int32_t)ow));
        if (k->mode)
            mil_op_in_const(op, "sampling_mode", mil_tensor_string(k->mode));
    }
    return cml_out(c, op, n, 0);
}

static int rs_refuse_mismatch(CmLower *c, const IrNode *n, const RsSpec *spec, const char *at)
{
    char cb[32], nb[32];
    return cml_refuse(c, "%s with coordinate_transformation_mode %s%s%s %s samples other %s "
                         "than every MIL resize op",
                      spec->nearest ? "nearest" : "linear",
                      cml_attr_s(n, "coordinate_transformation_mode", cb, sizeof cb),
                      spec->nearest ? " and nearest_mode " : "",
                      spec->nearest ? cml_attr_s(n, "nearest_mode", nb, sizeof nb)
                                    : "",
                      at, spec->nearest ? "pixels" : "coordinates");
}

/* The static-dims case: the MIL resize op that computes n, every
 * candidate checked index by index; NULL when none does. */
static const RsCand *rs_static_cand(const RsSpec *spec, const RsAxis *ax, size_t rank)
{
    for (size_t i = 0; i + 2 < rank; i++)
        if (ax[i].out != ax[i].in || ax[i].scale != 1.0)
            return NULL;
    const RsAxis *h = &ax[rank - 2], *w = &ax[rank - 1];
    for (size_t i = 0; i < sizeof rs_cands / sizeof *rs_cands; i++) {
        const RsCand *k = &rs_cands[i];
        if (rs_agrees(spec, k, h) && rs_agrees(spec, k, w))
            return k;
    }
    return NULL;
}

/* ---- the general case: one constant product per resized axis ------------ */

/* One axis' matrix (ev_resize_axis_weights: the evaluator's formulas). */
typedef struct RsMat {
    size_t axis;
    int64_t in, out;
    double *w, *bias;       /* [out, in], [out] */
} RsMat;

/* Whether every row of m picks one source element (a gather does it). */
static bool rs_is_pick(const RsMat *m)
{
    for (int64_t o = 0; o < m->out; o++) {
        int ones = 0;
        for (int64_t i = 0; i < m->in; i++) {
            double v = m->w[o * m->in + i];
            if (v != 0 && v != 1)
                return false;
            ones += v == 1;
        }
        if (ones != 1 || m->bias[o] != 0)
            return false;
    }
    return true;
}

/* Whether m maps the axis onto itself. */
static bool rs_is_identity(const RsMat *m)
{
    if (m->in != m->out || !rs_is_pick(m))
        return false;
    for (int64_t o = 0; o < m->out; o++)
        if (m->w[o * m->in + o] != 1)
            return false;
    return true;
}

/* A const [rows, cols] (or [cols] when rows is 0) of MIL float type dt
 * from doubles, read transposed when `tr` (v is then [cols, rows]). */
static const char *rs_float_const(CmLower *c, int32_t dt, const double *v, int64_t rows,
                                  int64_t cols, bool tr)
{
    int64_t dims[2] = {rows ? rows : cols, cols};
    size_t nel = (size_t)(rows ? rows : 1) * (size_t)cols;
    MilTensor *t = mil_tensor_new(dt, rows ? 2 : 1, dims, NULL);
    for (size_t k = 0; k < nel; k++) {
        size_t r = k / (size_t)cols, q = k % (size_t)cols;
        double x = tr ? v[q * (size_t)rows + r] : v[k];
        if (dt == MIL_FP16) {
            uint16_t h = half_f32_to_f16((float)x);
            memcpy(t->data + 2 * k, &h, 2);
        } else {
            float f = (float)x;
            memcpy(t->data + 4 * k, &f, 4);
        }
    }
    return cml_const(c, t);
}

/* A transpose of x (dims cur, permuted in place) by perm. */
static const char *rs_transpose(CmLower *c, const char *x, const int64_t *perm, int64_t *cur,
                                size_t rank, int32_t dt)
{
    int64_t d[RS_MAX_RANK];
    for (size_t i = 0; i < rank; i++)
        d[i] = cur[perm[i]];
    memcpy(cur, d, rank * sizeof *d);
    MilOp *op = cml_op(c, "transpose");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "perm", cml_ints(perm, rank));
    return cml_tmp(c, op, dt, (int)rank, cur);
}

/* The output of op: n's output when `last`, else a temporary of dims cur. */
static const char *rs_result(CmLower *c, const IrNode *n, MilOp *op, bool last, int32_t dt,
                             const int64_t *cur, size_t rank)
{
    if (last)
        return cml_out(c, op, n, 0) < 0 ? NULL : "";
    return cml_tmp(c, op, dt, (int)rank, cur);
}

/* x resized along m->axis: a gather when each output picks one input,
 * else transpose (axis last), matmul by W^T, add the bias, transpose
 * back. cur (x's dims) becomes the result's. */
static const char *rs_apply(CmLower *c, const IrNode *n, const char *x, const RsMat *m,
                            int64_t *cur, size_t rank, int32_t dt, bool last)
{
    size_t a = m->axis;
    if (rs_is_pick(m)) {
        int64_t *idx = mem_array((size_t)m->out, sizeof *idx);
        for (int64_t o = 0; o < m->out; o++)
            for (int64_t i = 0; i < m->in; i++)
                if (m->w[o * m->in + i] == 1)
                    idx[o] = i;
        MilOp *op = cml_op(c, "gather");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "indices", cml_ints(idx, (size_t)m->out));
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)a));
        free(idx);
        cur[a] = m->out;
        return rs_result(c, n, op, last, dt, cur, rank);
    }
    int64_t perm[RS_MAX_RANK], back[RS_MAX_RANK];
    for (size_t i = 0, k = 0; i < rank; i++)
        if (i != a)
            perm[k++] = (int64_t)i;
    perm[rank - 1] = (int64_t)a;
    for (size_t i = 0; i < rank; i++)
        back[perm[i]] = (int64_t)i;
    bool move = a + 1 != rank, add = false;
    for (int64_t o = 0; o < m->out; o++)
        add |= m->bias[o] != 0;
    if (move)
        x = rs_transpose(c, x, perm, cur, rank, dt);
    /* consts first: an op may read only values defined above it */
    const char *wt = rs_float_const(c, dt, m->w, m->in, m->out, true);
    const char *bt = add ? rs_float_const(c, dt, m->bias, 0, m->out, false) : NULL;
    MilOp *op = cml_op(c, "matmul");
    mil_op_in(op, "x", x);
    mil_op_in(op, "y", wt);
    cur[rank - 1] = m->out;
    bool fin = last && !move && !add;
    x = rs_result(c, n, op, fin, dt, cur, rank);
    if (add && x) {
        op = cml_op(c, "add");
        mil_op_in(op, "x", x);
        mil_op_in(op, "y", bt);
        x = rs_result(c, n, op, last && !move, dt, cur, rank);
    }
    if (!move || !x)
        return x;
    for (size_t i = 0; i < rank; i++)
        perm[i] = back[i];
    int64_t d[RS_MAX_RANK];
    for (size_t i = 0; i < rank; i++)
        d[i] = cur[perm[i]];
    memcpy(cur, d, rank * sizeof *d);
    op = cml_op(c, "transpose");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "perm", cml_ints(perm, rank));
    return rs_result(c, n, op, last, dt, cur, rank);
}

/* Frees the first cnt matrices (a refusal after some axes were done). */
static void rs_mats_free(RsMat *mats, int cnt)
{
    for (int k = 0; k < cnt; k++) {
        free(mats[k].w);
        free(mats[k].bias);
    }
}

/* The matrix of every resized axis of n (shrinking axes first, as the
 * evaluator orders them, to keep intermediates small); identities are
 * left out. Returns the count, -1 refused. */
static int rs_mats(CmLower *c, const IrNode *n, const RsAxis *ax, size_t rank, RsMat *mats)
{
    char mb[32], cb[32], nb[32];
    EvResizeSpec sp = {
        cml_attr_s(n, "mode", mb, sizeof mb),
        cml_attr_s(n, "coordinate_transformation_mode", cb, sizeof cb),
        cml_attr_s(n, "nearest_mode", nb, sizeof nb),
        cml_attr_f(n, "cubic_coeff_a"), cml_attr_f(n, "extrapolation_value"),
        cml_attr_i(n, "exclude_outside") != 0, cml_attr_i(n, "antialias") != 0};
    double *roi = NULL;
    size_t nroi = 0;
    if (!strcmp(sp.ctm, "tf_crop_and_resize") &&
        (!cml_const_floats(n, 1, &roi, &nroi) || nroi != 2 * rank)) {
        free(roi);
        return cml_refuse(c, "tf_crop_and_resize with a roi that is not a constant of "
                             "2 x rank values");
    }
    int cnt = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < rank; i++) {
            if ((ax[i].out <= ax[i].in) != (pass == 0))
                continue;
            RsMat *m = &mats[cnt];
            RszAxis len = {ax[i].in, ax[i].out, ax[i].scale, ax[i].outf,
                           roi ? roi[i] : 0, roi ? roi[rank + i] : 1};
            if (ax[i].in * ax[i].out > RS_MAX_MATRIX) {
                free(roi);
                rs_mats_free(mats, cnt);
                return cml_refuse(c, "resizing dim %zu from %lld to %lld needs a matrix of "
                                     "more than %lld elements", i, (long long)ax[i].in,
                                  (long long)ax[i].out, (long long)RS_MAX_MATRIX);
            }
            *m = (RsMat){i, ax[i].in, ax[i].out,
                         mem_array((size_t)(ax[i].in * ax[i].out), sizeof(double)),
                         mem_array((size_t)ax[i].out, sizeof(double))};
            if (ev_resize_axis_weights(&sp, &len, m->w, m->bias) < 0) {
                free(roi);
                rs_mats_free(mats, cnt + 1);
                return cml_refuse(c, "mode %s, coordinate_transformation_mode %s: no "
                                     "weights for dim %zu", sp.mode, sp.ctm, i);
            }
            if (rs_is_identity(m)) {
                free(m->w);
                free(m->bias);
            } else {
                cnt++;
            }
        }
    }
    free(roi);
    return cnt;
}

/* Any Resize of static dims that no MIL resize op computes: each resized
 * axis becomes a gather or a product with its constant matrix. */
static int rs_lower_matrix(CmLower *c, const IrNode *n, const RsAxis *ax, size_t rank,
                           int32_t dt)
{
    RsMat mats[RS_MAX_RANK];
    int cnt = rs_mats(c, n, ax, rank, mats);
    if (cnt < 0)
        return -1;
    const char *x = cml_in(c, n, 0);
    int64_t cur[RS_MAX_RANK];
    for (size_t i = 0; i < rank; i++)
        cur[i] = ax[i].in;
    if (x && cnt == 0)
        cml_unary(c, n, "identity", x);
    for (int k = 0; k < cnt && x; k++)
        x = rs_apply(c, n, x, &mats[k], cur, rank, dt, k + 1 == cnt);
    rs_mats_free(mats, cnt);
    return x && !c->failed ? 0 : -1;
}

/* upsample_bilinear (iOS15): align_corners true is ONNX's align_corners,
 * false samples (i+0.5)*Xin/Xout-0.5 clamped: half_pixel. Used with whole
 * factors only, where Xin/Xout is 1/k exactly. */
static const RsCand rs_up_bilinear[] = {
    {"upsample_bilinear", NULL, {false, RSZ_HALF_PIXEL, 0}, true},
    {"upsample_bilinear", NULL, {false, RSZ_ALIGN, 0}, true},
};

/* Input dims not all static: only combinations whose formulas equal a MIL
 * op's at every size qualify. Const sizes (the leading ones equal to
 * static input dims) give scale out/in exactly: half_pixel with
 * round_prefer_ceil is resize_nearest_neighbor; linear half_pixel (and
 * pytorch_half_pixel, align_corners, asymmetric to lengths above 1) the
 * resize_bilinear grids. Const whole factors k: floor(i/k) is asymmetric
 * floor, and half_pixel with any rounding (its coordinate lies within 0.5
 * of floor(i/k), never on a tie), upsample_nearest_neighbor; linear
 * half_pixel/pytorch_half_pixel and align_corners are upsample_bilinear. */
static int rs_lower_dynamic(CmLower *c, const IrNode *n, const RsSpec *spec, size_t rank)
{
    const IrShape *sh = n->in[0]->type ? n->in[0]->type->shape : NULL;
    bool half = spec->ctm == RSZ_HALF_PIXEL || spec->ctm == RSZ_PYTORCH;
    if (rs_given(n, 3)) {
        int64_t *v;
        size_t nv;
        if (!cml_const_ints(n, 3, &v, &nv))
            return cml_refuse(c, "sizes is not a constant (MIL needs const target sizes)");
        bool ok = nv == rank && sh && sh->rank == rank;
        for (size_t i = 0; ok && i < rank; i++)
            ok = i + 2 < rank ? sh->dims[i].kind == IR_DIM_VALUE && sh->dims[i].value == v[i]
                              : v[i] > 0 && v[i] <= INT32_MAX;
        int64_t oh = nv >= 2 ? v[nv - 2] : 0, ow = nv >= 2 ? v[nv - 1] : 0;
        free(v);
        if (!ok)
            return cml_refuse(c, "sizes change a leading dim, or one of them is not static: "
                                 "MIL resizes only the last two dims");
        const RsCand *k = NULL;
        if (spec->nearest && spec->ctm == RSZ_HALF_PIXEL && spec->nm == RSZ_ROUND_CEIL)
            k = &rs_cands[1];
        else if (!spec->nearest && (spec->ctm == RSZ_HALF_PIXEL ||
                                    (oh > 1 && ow > 1 && spec->ctm == RSZ_PYTORCH)))
            k = &rs_cands[2];
        else if (!spec->nearest && oh > 1 && ow > 1)
            k = &rs_cands[spec->ctm == RSZ_ALIGN ? 3 : 4];
        if (!k)
            return rs_refuse_mismatch(c, n, spec, "to const sizes of input dims unknown here");
        return rs_emit(c, n, k, oh, ow, 0, 0);
    }
    double *s;
    size_t ns;
    if (!rs_given(n, 2) || !cml_const_floats(n, 2, &s, &ns))
        return cml_refuse(c, "scales is not a constant (MIL needs const scale factors)");
    bool ok = ns == rank;
    for (size_t i = 0; ok && i < rank; i++)
        ok = i + 2 < rank ? s[i] == 1.0 : s[i] >= 1 && s[i] <= 65536 && s[i] == floor(s[i]);
    int64_t fh = ns >= 2 ? (int64_t)s[ns - 2] : 0, fw = ns >= 2 ? (int64_t)s[ns - 1] : 0;
    free(s);
    if (!ok)
        return cml_refuse(c, "scales other than whole factors of the last two dims need "
                             "static input dims");
    const RsCand *k = NULL;
    if (spec->nearest && ((spec->ctm == RSZ_ASYMMETRIC && spec->nm == RSZ_FLOOR) ||
                          (half && (spec->nm == RSZ_ROUND_FLOOR || spec->nm == RSZ_ROUND_CEIL))))
        k = &rs_cands[0];
    else if (!spec->nearest && (half || spec->ctm == RSZ_ALIGN))
        k = &rs_up_bilinear[half ? 0 : 1];
    if (!k)
        return rs_refuse_mismatch(c, n, spec, "by whole factors of input dims unknown here");
    return rs_emit(c, n, k, 0, 0, fh, fw);
}

static int lower_resize(CmLower *c, const IrNode *n)
{
    RsSpec spec;
    RsAxis ax[RS_MAX_RANK];
    int64_t dims[RS_MAX_RANK];
    size_t rank = 0;
    int r = cml_rank(n->in[0]);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "MIL resizes fp16 and fp32 only");
    if (r >= 1 && r <= RS_MAX_RANK && cml_dims(n->in[0], dims, RS_MAX_RANK, &rank)) {
        if (rs_axes(c, n, ax, &rank) < 0)
            return -1;
        /* checking index by index costs the output's length: past a few
         * million, the formulas that agree at every size decide instead */
        bool huge = rank >= 2 && (ax[rank - 2].out > RS_MAX_CHECK ||
                                  ax[rank - 1].out > RS_MAX_CHECK);
        const RsCand *k = NULL;
        if (rank >= 3 && rs_spec(c, n, &spec, true) == 0 && !huge)
            k = rs_static_cand(&spec, ax, rank);
        if (k) {
            const RsAxis *h = &ax[rank - 2], *w = &ax[rank - 1];
            return rs_emit(c, n, k, h->out, w->out, k->integer_only ? h->out / h->in : 0,
                           k->integer_only ? w->out / w->in : 0);
        }
        if (!huge || rank < 3 || rs_spec(c, n, &spec, true) < 0)
            return rs_lower_matrix(c, n, ax, rank, dt);
        return rs_lower_dynamic(c, n, &spec, rank);
    }
    if (rs_spec(c, n, &spec, false) < 0)
        return -1;
    if (r < 3 || r > RS_MAX_RANK)
        return cml_refuse(c, "input rank %d: MIL resizes rank 3 or more", r);
    return rs_lower_dynamic(c, n, &spec, (size_t)r);
}

/* Upsample never reaches the lowering: the conversion to CM_ONNX_OPSET
 * rewrites it as Resize. Listed so that its node tests are counted. */
static int lower_upsample(CmLower *c, const IrNode *n)
{
    return cml_refuse(c, "Upsample is lowered as the Resize the conversion to opset %d makes",
                      CM_ONNX_OPSET);
}

static const CmLowerRule rs_lower[] = {
    {"Resize", lower_resize},
    {"Upsample", lower_upsample},
};

/* ---- raising -------------------------------------------------------------------- */

/* The Resize node for op with mode/ctm/nearest_mode, reading scales (when
 * `scales` is given: [1.., sh, sw]) or sizes (the output's static dims,
 * else Shape(x)[:-2] ++ [th, tw]). */
static int rs_raise_node(CmRaise *r, const MilOp *op, const char *mode, const char *ctm,
                         const char *nm, const float *scales, int64_t th, int64_t tw)
{
    int rank = op->n_out == 1 ? op->out[0].type.rank : -1;
    if (rank < 3 || rank > RS_MAX_RANK)
        return cmr_fail(r, "the output's rank is unknown or below 3");
    const char *x = cmr_in(r, op, "x", 0);
    const char *sc = "", *sz = NULL;
    if (scales) {
        float s[RS_MAX_RANK];
        for (int i = 0; i < rank; i++)
            s[i] = i < rank - 2 ? 1.0f : scales[i - (rank - 2)];
        sc = cmr_init_f32(r, s, (size_t)rank, false);
    } else {
        const MilType *t = &op->out[0].type;
        int64_t d[RS_MAX_RANK];
        bool stat = true;
        for (int i = 0; i < rank; i++) {
            stat &= t->dims[i] >= 0 && !(t->dim_names && t->dim_names[i]);
            d[i] = t->dims[i];
        }
        d[rank - 2] = th;
        d[rank - 1] = tw;
        if (stat) {
            sz = cmr_init_i64(r, d, (size_t)rank, false);
        } else {
            int64_t st[1] = {0}, en[1] = {rank - 2};
            const char *shp = cmr_tmp(r, "shape"), *lead = cmr_tmp(r, "lead");
            const char *i1[1] = {x}, *o1[1] = {shp};
            const char *i2[3] = {shp, cmr_init_i64(r, st, 1, false),
                                 cmr_init_i64(r, en, 1, false)};
            const char *o2[1] = {lead};
            if (cmr_node(r, "Shape", 1, i1, 1, o1, NULL) < 0 ||
                cmr_node(r, "Slice", 3, i2, 1, o2, NULL) < 0)
                return -1;
            sz = cmr_tmp(r, "sizes");
            IrNode *cat;
            const char *i3[2] = {lead, cmr_init_i64(r, d + rank - 2, 2, false)};
            const char *o3[1] = {sz};
            if (cmr_node(r, "Concat", 2, i3, 1, o3, &cat) < 0)
                return -1;
            ir_node_set_attr(cat, ir_attr_int("axis", 0));
        }
    }
    const char *in[4] = {x, "", sc, sz};
    IrNode *node;
    if (cmr_simple(r, op, "Resize", sz ? 4 : 3, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("mode", mode));
    ir_node_set_attr(node, ir_attr_string("coordinate_transformation_mode", ctm));
    if (nm)
        ir_node_set_attr(node, ir_attr_string("nearest_mode", nm));
    return 0;
}

/* An int32 scalar param, or -1. */
static int64_t rs_int(CmRaise *r, const MilOp *op, const char *param, int64_t dflt)
{
    const MilTensor *t = cmr_const(r, op, param);
    int64_t *v, out = -1;
    size_t nv;
    if (!t)
        return dflt;
    if (cmr_ints(t, &v, &nv)) {
        if (nv == 1)
            out = v[0];
        free(v);
    }
    return out;
}

/* A scale factor param that is a whole number >= 1, or -1. */
static double rs_factor(CmRaise *r, const MilOp *op, const char *param)
{
    const MilTensor *t = cmr_const(r, op, param);
    double v = 1;
    if (t && !cmr_float(t, &v)) {
        int64_t i = rs_int(r, op, param, 1);
        v = (double)i;
    }
    return v >= 1 && v < 65536 && v == floor(v) ? v : -1;
}

static int raise_resize_bilinear(CmRaise *r, const MilOp *op)
{
    const char *sm = cmr_string(cmr_const(r, op, "sampling_mode"));
    int64_t th = rs_int(r, op, "target_size_height", 1);
    int64_t tw = rs_int(r, op, "target_size_width", 1);
    if (th < 1 || tw < 1)
        return cmr_fail(r, "target sizes are not positive constants");
    const char *ctm = NULL;
    if (!sm || !strcmp(sm, "DEFAULT"))
        ctm = "asymmetric";
    else if (!strcmp(sm, "UNALIGN_CORNERS"))
        ctm = "half_pixel";
    else if (!strcmp(sm, "STRICT_ALIGN_CORNERS") ||
             (!strcmp(sm, "ALIGN_CORNERS") && th > 1 && tw > 1))
        ctm = "align_corners";
    else
        return cmr_fail(r, "sampling_mode %s has no ONNX coordinate_transformation_mode", sm);
    return rs_raise_node(r, op, "linear", ctm, NULL, NULL, th, tw);
}

static int raise_resize_nearest(CmRaise *r, const MilOp *op)
{
    int64_t th = rs_int(r, op, "target_size_height", -1);
    int64_t tw = rs_int(r, op, "target_size_width", -1);
    if (th < 1 || tw < 1)
        return cmr_fail(r, "target sizes are not positive constants");
    return rs_raise_node(r, op, "nearest", "half_pixel", "round_prefer_ceil", NULL, th, tw);
}

static int raise_upsample_nearest(CmRaise *r, const MilOp *op)
{
    double sh = rs_factor(r, op, "scale_factor_height");
    double sw = rs_factor(r, op, "scale_factor_width");
    if (sh < 0 || sw < 0)
        return cmr_fail(r, "scale factors other than whole numbers: MIL does not say "
                           "which pixel they pick");
    float s[2] = {(float)sh, (float)sw};
    return rs_raise_node(r, op, "nearest", "asymmetric", "floor", s, 0, 0);
}

/* upsample_bilinear samples by Xin/Xout (recomputed from the output), so
 * ONNX scales say the same only for whole factors; else the output's
 * static dims become sizes. */
static int raise_upsample_bilinear(CmRaise *r, const MilOp *op)
{
    bool ac = cmr_bool(r, op, "align_corners", true);
    bool hp = cmr_bool(r, op, "half_pixel_centers", !ac);
    if (ac && hp)
        return cmr_fail(r, "align_corners with half_pixel_centers has no ONNX mode");
    const char *ctm = ac ? "align_corners" : hp ? "half_pixel" : "asymmetric";
    double sh = rs_factor(r, op, "scale_factor_height");
    double sw = rs_factor(r, op, "scale_factor_width");
    if (sh > 0 && sw > 0) {
        float s[2] = {(float)sh, (float)sw};
        return rs_raise_node(r, op, "linear", ctm, NULL, s, 0, 0);
    }
    int rank = op->n_out == 1 ? op->out[0].type.rank : -1;
    const MilType *t = rank >= 3 ? &op->out[0].type : NULL;
    if (!t || t->dims[rank - 2] < 1 || t->dims[rank - 1] < 1 ||
        (t->dim_names && (t->dim_names[rank - 2] || t->dim_names[rank - 1])))
        return cmr_fail(r, "fractional scale factors need static output dims");
    return rs_raise_node(r, op, "linear", ctm, NULL, NULL, t->dims[rank - 2],
                         t->dims[rank - 1]);
}

/* A scalar int param of any integer width MIL uses here (resize's
 * resized_dims is uint32), or -1. */
static int64_t rs_uint(CmRaise *r, const MilOp *op, const char *param)
{
    const MilTensor *t = cmr_const(r, op, param);
    if (t && t->dtype == MIL_UINT32 && t->nbytes == 4)
        return (int64_t)((uint32_t)t->data[0] | (uint32_t)t->data[1] << 8 |
                         (uint32_t)t->data[2] << 16 | (uint32_t)t->data[3] << 24);
    return t ? rs_int(r, op, param, -1) : -1;
}

/* One ONNX node with one output named after `base`; the output's name or
 * NULL (err set). */
static const char *rs_node(CmRaise *r, const char *type, size_t n_in, const char *const *in,
                           const char *base, IrNode **node)
{
    const char *o = cmr_tmp(r, base), *out[1] = {o};
    return cmr_node(r, type, n_in, in, 1, out, node) < 0 ? NULL : o;
}

/* ONNX sizes for iOS17's resize: x's leading dims, then the trailing
 * `rd` entries of `shape`, a 0 there keeping x's dim. */
static const char *rs_sizes17(CmRaise *r, const char *x, const char *shape, int64_t rd)
{
    IrNode *node;
    int64_t neg[1] = {-rd}, zero[1] = {0}, big[1] = {INT64_MAX};
    const char *i1[1] = {x}, *sx = rs_node(r, "Shape", 1, i1, "xshape", NULL);
    const char *i2[1] = {shape}, *t = sx ? rs_node(r, "Cast", 1, i2, "shape64", &node) : NULL;
    if (!t)
        return NULL;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT64));
    const char *cneg = cmr_init_i64(r, neg, 1, false), *cbig = cmr_init_i64(r, big, 1, false);
    const char *czero = cmr_init_i64(r, zero, 1, false);
    const char *i3[3] = {t, cneg, cbig}, *tt = rs_node(r, "Slice", 3, i3, "tail", NULL);
    const char *i4[3] = {sx, cneg, cbig}, *xt = tt ? rs_node(r, "Slice", 3, i4, "xtail", NULL)
                                                   : NULL;
    const char *i5[3] = {sx, czero, cneg}, *lead = xt ? rs_node(r, "Slice", 3, i5, "lead", NULL)
                                                      : NULL;
    const char *i6[2] = {tt, cmr_init_i64(r, zero, 1, true)};
    const char *z = lead ? rs_node(r, "Equal", 2, i6, "keep", NULL) : NULL;
    const char *i7[3] = {z, xt, tt}, *ft = z ? rs_node(r, "Where", 3, i7, "tailsz", NULL) : NULL;
    const char *i8[2] = {lead, ft}, *sz = ft ? rs_node(r, "Concat", 2, i8, "sizes", &node)
                                              : NULL;
    if (sz)
        ir_node_set_attr(node, ir_attr_int("axis", 0));
    return sz;
}

/* iOS17's resize: LINEAR with resize_bilinear's sampling modes; and
 * NEAREST_NEIGHBOR with DEFAULT, which coremltools' TensorFlow front end
 * emits for a half-pixel nearest resize of a computed size (as it emits
 * resize_nearest_neighbor for a known one): half_pixel, round_prefer_ceil.
 * Other sampling modes of NEAREST_NEIGHBOR are not documented: refused. */
static int raise_resize17(CmRaise *r, const MilOp *op)
{
    const char *im = cmr_string(cmr_const(r, op, "interpolation_mode"));
    const char *sm = cmr_string(cmr_const(r, op, "sampling_mode"));
    int64_t rd = rs_uint(r, op, "resized_dims");
    int rank = op->n_out == 1 ? op->out[0].type.rank : -1;
    bool nearest = im && !strcmp(im, "NEAREST_NEIGHBOR");
    const char *ctm = NULL, *nm = NULL;
    if (im && !nearest && strcmp(im, "LINEAR"))
        return cmr_fail(r, "interpolation_mode %s unknown", im);
    if (rd < 1 || (rank >= 0 && rd > rank))
        return cmr_fail(r, "resized_dims is not a constant from 1 to the rank");
    if (nearest && (!sm || !strcmp(sm, "DEFAULT"))) {
        ctm = "half_pixel";
        nm = "round_prefer_ceil";
    } else if (nearest) {
        return cmr_fail(r, "NEAREST_NEIGHBOR with sampling_mode %s is not documented", sm);
    } else if (!sm || !strcmp(sm, "DEFAULT")) {
        ctm = "asymmetric";
    } else if (!strcmp(sm, "UNALIGN_CORNERS")) {
        ctm = "half_pixel";
    } else if (!strcmp(sm, "STRICT_ALIGN_CORNERS")) {
        ctm = "align_corners";
    } else {
        return cmr_fail(r, "sampling_mode %s has no ONNX coordinate_transformation_mode "
                           "at sizes unknown here", sm);
    }
    const char *x = cmr_in(r, op, "x", 0), *shape = cmr_in(r, op, "shape", 0);
    if (!x || !shape)
        return cmr_fail(r, "x or shape missing");
    const char *sz = rs_sizes17(r, x, shape, rd);
    if (!sz)
        return -1;
    const char *in[4] = {x, "", "", sz};
    IrNode *node;
    if (cmr_simple(r, op, "Resize", 4, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("mode", nearest ? "nearest" : "linear"));
    ir_node_set_attr(node, ir_attr_string("coordinate_transformation_mode", ctm));
    if (nm)
        ir_node_set_attr(node, ir_attr_string("nearest_mode", nm));
    return 0;
}

static int refuse_crop_resize(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: it crops boxes and resizes each (TensorFlow's "
                       "crop_and_resize, with its own box modes); ONNX's RoiAlign averages "
                       "sample points instead");
}

static const CmRaiseRule rs_raise[] = {
    {"crop_resize", refuse_crop_resize},
    {"resize", raise_resize17},
    {"resize_bilinear", raise_resize_bilinear},
    {"resize_nearest_neighbor", raise_resize_nearest},
    {"upsample_nearest_neighbor", raise_upsample_nearest},
    {"upsample_bilinear", raise_upsample_bilinear},
};

CM_FAMILY(cm_family_resize, "resize", rs_lower, rs_raise);
