/*
 * resize.c - adapters of the resampling ops: Upsample and Resize
 * (GridSample and AffineGrid are in sample.c).
 *
 * Upsample and Resize-10 share one meaning (what runtimes and the
 * evaluator do, the spec of those versions being silent): asymmetric
 * coordinates (x_original = x / scale) and, in nearest mode, the source
 * index floor(x_original) on an axis that is upsampled (scale > 1) and
 * ceil(x_original) on one that is downsampled (scale < 1). Resize-11 and
 * later say the same with coordinate_transformation_mode = asymmetric and
 * nearest_mode floor / ceil, so the nearest conversions need the scales as
 * constants to know which one applies.
 *
 * Where the target's Resize or Upsample cannot say what a node says (a
 * coordinate mode, cubic, antialias, keep_aspect_ratio_policy, rounding,
 * downsampling into Upsample), the node becomes constant interpolation
 * tables (resize_lower.c) when X's shape and the scales or sizes are known;
 * an exact Resize -> Resize mapping is always preferred.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"
#include "adapters/resize_lower.h"
#include "base/fconv.h"
#include "schema/resize.h"

/* ---- helpers ------------------------------------------------------- */

/* An empty 1-D constant of element type dtype (Resize-11's "not given"
 * roi or scales). */
static IrValue *ad_rs_empty(AdCtx *c, int32_t dtype)
{
    int64_t dim = 0;
    return ad_const_tensor(c, dtype, 1, &dim, NULL, 0);
}

/* Whether v is known (src/analysis/known.h: an initializer, a Constant, or a value
 * proved ahead of time, such as a Cast of an empty Constant) to have no
 * elements: Resize-11's way of saying "not given". */
static bool ad_rs_is_empty(const IrValue *v)
{
    const IrTensor *t = ad_const(v);
    uint64_t n;
    return t && ir_tensor_numel(t, &n) && n == 0;
}

/* Whether input v of a Resize is given: present and not known empty. */
static bool ad_rs_given(const IrValue *v)
{
    return v && !ad_rs_is_empty(v);
}

/* Drops the values of v[0..n) that nothing uses any more (each once; NULL
 * entries skipped). */
static void ad_rs_drop(IrValue **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool seen = !v[i];
        for (size_t j = 0; j < i && !seen; j++)
            seen = v[j] == v[i];
        if (!seen)
            ir_value_drop_if_unused(v[i]);
    }
}

/* ---- Upsample ------------------------------------------------------- */

/* Upsample 1 -> 7: height_scale/width_scale (on a 4-D input) become the
 * scales list [1, 1, height_scale, width_scale]; mode "bilinear" is called
 * "linear" from 7. Same coordinates and rounding in both. */
static int ad_up_1_7(AdCtx *c)
{
    IrAttr *h = ad_attr(c, "height_scale"), *w = ad_attr(c, "width_scale");
    int r = ad_rank(ad_in(c, 0));
    char mb[32];
    if (!h || !w || !h->has_f || !w->has_f)
        return ad_refuse(c, DG_ATTRIBUTE, "height_scale and width_scale are required");
    if (r >= 0 && r != 4)
        return ad_refuse(c, DG_SHAPE, "Upsample-1 takes a 4-D input, got rank %d", r);
    float s[4] = {1.0f, 1.0f, h->f, w->f};
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    if (strcmp(mode, "bilinear") == 0)
        ad_set_attr_s(c, c->n, "mode", "linear");
    ir_node_set_attr(c->n, ir_attr_floats("scales", 4, s));
    ad_drop_attr(c, "height_scale");
    ad_drop_attr(c, "width_scale");
    return 0;
}

/* Upsample 7 -> 1: only scales [1, 1, h, w] have a form in Upsample-1
 * (which resizes the last two axes of a 4-D input); "linear" is called
 * "bilinear" there. */
static int ad_up_7_1(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "scales");
    char mb[32];
    if (!a || a->n_floats != 4 || a->floats[0] != 1.0f || a->floats[1] != 1.0f)
        return ad_refuse(c, DG_ATTRIBUTE,
                         "Upsample-1 only scales the last two axes of a 4-D input "
                         "(scales must be [1, 1, h, w])");
    float h = a->floats[2], w = a->floats[3];
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    if (strcmp(mode, "linear") == 0)
        ad_set_attr_s(c, c->n, "mode", "bilinear");
    ad_drop_attr(c, "scales");
    ad_set_attr_f(c, c->n, "height_scale", h);
    ad_set_attr_f(c, c->n, "width_scale", w);
    return 0;
}

/* Upsample 7 -> 9: the scales attribute becomes input 1 (a float tensor). */
static int ad_up_7_9(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "scales");
    if (!a)
        return ad_refuse(c, DG_ATTRIBUTE, "attribute scales is required");
    double *d = mem_array(a->n_floats ? a->n_floats : 1, sizeof *d);
    for (size_t i = 0; i < a->n_floats; i++)
        d[i] = a->floats[i];
    IrValue *v = ad_const_reals(c, IR_FLOAT, a->n_floats, d);
    free(d);
    return ad_attr_as_input(c, "scales", 1, v);
}

/* Upsample 9 -> 7: input scales becomes the attribute; it must be a
 * constant. */
static int ad_up_9_7(AdCtx *c)
{
    IrValue *in = ad_in(c, 1);
    double *d;
    size_t n;
    if (!in || !ad_const_floats(in, &d, &n))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "input scales must be a constant to become an attribute");
    float *f = mem_array(n ? n : 1, sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)d[i];
    ir_node_set_attr(c->n, ir_attr_floats("scales", n, f));
    free(f);
    free(d);
    ir_node_set_input(c->n, 1, NULL);
    ad_trim_inputs(c->n);
    ir_value_drop_if_unused(in);
    return 0;
}

/* Upsample 9 -> 10: Upsample is deprecated at 10 and replaced by Resize-10,
 * which takes the same X and scales and computes the same (asymmetric
 * coordinates, same nearest rounding). Upsample's "bilinear" spelling (of
 * version 1) is "linear". */
static int ad_up_9_10(AdCtx *c)
{
    char mb[32];
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 &&
        strcmp(mode, "bilinear") != 0)
        return ad_refuse(c, DG_ATTRIBUTE, "unknown mode '%s'", mode);
    IrValue *in[2] = {ad_in(c, 0), ad_in(c, 1)};
    IrNode *k = ad_node(c, c->n, "Resize", 2, in, 1);
    if (!k)
        return -1;
    ad_set_attr_s(c, k, "mode", strcmp(mode, "nearest") == 0 ? "nearest" : "linear");
    ad_replace(c, k);
    return 0;
}

/* ---- Resize 10 <-> Upsample, 10 <-> 11 -------------------------------- */

/* Resize-10's mode, checked: nearest or linear. */
static const char *ad_rs10_mode(AdCtx *c, char *buf, size_t cap)
{
    const char *mode = ad_attr_s(c, "mode", buf, cap);
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0) {
        ad_refuse(c, DG_ATTRIBUTE, "unknown mode '%s'", mode);
        return NULL;
    }
    return mode;
}

/* Resize 10 -> (opset 9): Upsample-9 has the same inputs and meaning, but
 * takes only scales >= 1: they must be constants that say so; a
 * downsampling node becomes interpolation tables. */
static int ad_rs_10_0(AdCtx *c)
{
    char mb[32], why[96];
    const char *mode = ad_rs10_mode(c, mb, sizeof mb);
    double *s;
    size_t n;
    if (!mode)
        return -1;
    if (!ad_const_floats(ad_in(c, 1), &s, &n))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "Upsample takes scales >= 1 only; scales must be a constant "
                         "to check it");
    for (size_t i = 0; i < n; i++)
        if (!(s[i] >= 1.0)) {
            snprintf(why, sizeof why, "scale %g < 1: Upsample cannot downsample", s[i]);
            free(s);
            return ad_rs_lower(c, why);
        }
    free(s);
    IrValue *in[2] = {ad_in(c, 0), ad_in(c, 1)};
    IrNode *k = ad_node(c, c->n, "Upsample", 2, in, 1);
    if (!k)
        return -1;
    ad_set_attr_s(c, k, "mode", mode);
    ad_replace(c, k);
    return 0;
}

/* Whether x / s is an integer for every integer x (s = 1 or s = 1/k with
 * k an integer and k * s exactly 1): then every nearest rounding picks the
 * same index. */
static bool ad_rs_integral_axis(double s)
{
    if (s == 1.0)
        return true;
    double k = 1.0 / s;
    return s < 1.0 && k == floor(k) && k * s == 1.0;
}

/* The nearest_mode of Resize-11 that rounds as Resize-10 does for these
 * scales: "floor" when no axis is downsampled, "ceil" when none is
 * upsampled (axes with integral coordinates do not count), NULL when both
 * occur. */
static const char *ad_rs_simple_mode(const double *s, size_t n)
{
    bool up = false, down = false;
    for (size_t i = 0; i < n; i++) {
        if (ad_rs_integral_axis(s[i]))
            continue;
        up = up || s[i] > 1.0;
        down = down || s[i] < 1.0;
    }
    return up && down ? NULL : down ? "ceil" : "floor";
}

/* Resize 10 -> 11: Resize-11 adds roi (input 1, only read by
 * tf_crop_and_resize: an empty one is given), moves scales to input 2 and
 * adds the coordinate and rounding attributes, whose defaults differ from
 * what Resize-10 did: they are set to asymmetric and, for nearest, to the
 * rounding Resize-10 uses for the node's (constant) scales. */
static int ad_rs_10_11(AdCtx *c)
{
    char mb[32];
    const char *mode = ad_rs10_mode(c, mb, sizeof mb);
    const char *nm = NULL;
    if (!mode)
        return -1;
    if (strcmp(mode, "nearest") == 0) {
        double *s;
        size_t n;
        if (!ad_const_floats(ad_in(c, 1), &s, &n))
            return ad_refuse(c, DG_NOT_CONSTANT,
                             "nearest Resize-10 floors when upsampling and ceils when "
                             "downsampling; scales must be a constant to pick the "
                             "nearest_mode");
        nm = ad_rs_simple_mode(s, n);
        free(s);
        if (!nm)
            return ad_rs_lower(c, "nearest Resize-10 with axes both up- and downsampled "
                                  "has no single nearest_mode");
    }
    IrValue *roi = ad_rs_empty(c, IR_FLOAT);
    if (!roi)
        return -1;
    IrValue *scales = ad_in(c, 1);
    ad_set_input(c, 2, scales);
    ad_set_input(c, 1, roi);
    ad_set_attr_s(c, c->n, "coordinate_transformation_mode", "asymmetric");
    if (nm)
        ad_set_attr_s(c, c->n, "nearest_mode", nm);
    return 0;
}

/* Whether Resize-11 nearest rounding `nm` (with asymmetric coordinates
 * x / s) picks what Resize-10 picks on an axis of scale s. */
static bool ad_rs_axis_ok(const char *nm, double s)
{
    if (ad_rs_integral_axis(s))
        return true;
    if (s < 1.0)
        return strcmp(nm, "ceil") == 0;
    if (strcmp(nm, "floor") == 0)
        return true;
    /* x / 2 has fractional part 0 or .5, which round_prefer_floor floors. */
    return s == 2.0 && strcmp(nm, "round_prefer_floor") == 0;
}

/* Whether the constant sizes sz[0..n) of X have exact float scales for
 * Resize-10: each size / input ratio is a float that gives back that size
 * (and so the same coordinates). */
static bool ad_rs_sizes_exact(IrValue *x, const int64_t *sz, size_t n)
{
    if (ad_rank(x) != (int)n)
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t in = ad_dim(x, (int)i);
        double r = in > 0 ? (double)sz[i] / (double)in : 0;
        if (in <= 0 || (double)(float)r != r || rsz_len(in, r) != sz[i])
            return false;
    }
    return true;
}

/* Scales for Resize-10 from constant sizes on a fully known input, when
 * they are exact (ad_rs_sizes_exact). Returns a new constant or NULL
 * (refused). */
static IrValue *ad_rs_sizes_to_scales(AdCtx *c, IrValue *x, IrValue *sizes,
                                      double **out_s, size_t *out_n)
{
    int64_t *sz;
    size_t n;
    if (!ad_const_ints(sizes, &sz, &n)) {
        ad_refuse(c, DG_NOT_CONSTANT, "sizes must be a constant to become scales");
        return NULL;
    }
    if (!ad_rs_sizes_exact(x, sz, n)) {
        free(sz);
        ad_refuse(c, DG_SEMANTICS, "sizes have no exact float scales (input shape "
                  "unknown or ratio not a float)");
        return NULL;
    }
    double *s = mem_array(n ? n : 1, sizeof *s);
    for (size_t i = 0; i < n; i++)
        s[i] = (double)sz[i] / (double)ad_dim(x, (int)i);
    free(sz);
    IrValue *v = ad_const_reals(c, IR_FLOAT, n, s);
    if (!v) {
        free(s);
        return NULL;
    }
    *out_s = s;
    *out_n = n;
    return v;
}

/* Whether Resize-10 says what this nearest Resize-11 node says:
 * asymmetric coordinates, constant scales, and a rounding that matches
 * Resize-10's on every axis. */
static bool ad_rs_nearest_fits_10(AdCtx *c, const char *ctm, const char *nm)
{
    IrValue *sc = ad_in(c, 2), *sz = ad_in(c, 3);
    double *s;
    size_t n;
    if (strcmp(ctm, "asymmetric") != 0 || ad_rs_given(sz) || !sc ||
        !ad_const_floats(sc, &s, &n))
        return false;
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = ok && ad_rs_axis_ok(nm, s[i]);
    free(s);
    return ok;
}

/* Why Resize-10 cannot say what this Resize-11+ node says, into why (false
 * when it can, as far as the attributes and constant sizes tell): mode
 * nearest or linear, asymmetric coordinates, no exclude_outside for
 * linear, sizes with exact float scales, and nearest rounding as
 * Resize-10's (floor up, ceil down; checked on constant scales). */
static bool ad_rs_why_not_10(AdCtx *c, const char *mode, const char *ctm,
                             const char *nm, char *why, size_t cap)
{
    IrValue *sz = ad_in(c, 3);
    int64_t *v;
    size_t n;
    bool lin = !strcmp(mode, "linear"), near = !strcmp(mode, "nearest");
    if (!lin && !near)
        snprintf(why, cap, "Resize-10 has no mode '%s'", mode);
    else if (strcmp(ctm, "asymmetric") != 0)
        snprintf(why, cap, "Resize-10 only has asymmetric coordinates, not '%s'", ctm);
    else if (lin && ad_attr_i(c, "exclude_outside") != 0)
        snprintf(why, cap, "Resize-10 has no exclude_outside");
    else if (ad_rs_given(sz) && ad_const_ints(sz, &v, &n)) {
        bool exact = ad_rs_sizes_exact(ad_in(c, 0), v, n);
        free(v);
        if (exact && !near)
            return false;
        snprintf(why, cap, exact ? "nearest Resize-10 rounds by its scales, which sizes "
                                   "do not give" :
                                   "sizes have no exact float scales (input shape "
                                   "unknown or ratio not a float)");
    } else if (near && !ad_rs_nearest_fits_10(c, ctm, nm))
        snprintf(why, cap, "nearest_mode '%s' does not round as Resize-10 does (floor "
                 "up, ceil down) for these scales", nm);
    else
        return false;
    return true;
}

/* The scales a Resize-11 node resizes by, as a value for Resize-10's input
 * 1 (from scales, or from constant sizes); *s / *n get their constant
 * values when known (NULL otherwise). */
static IrValue *ad_rs_scales_for_10(AdCtx *c, double **s, size_t *n)
{
    IrValue *x = ad_in(c, 0), *sc = ad_in(c, 2), *sz = ad_in(c, 3);
    *s = NULL;
    *n = 0;
    sc = ad_rs_given(sc) ? sc : NULL;
    sz = ad_rs_given(sz) ? sz : NULL;
    if (sc && sz) {
        ad_refuse(c, DG_NOT_CONSTANT, "scales and sizes are both given; one must be an "
                  "empty constant");
        return NULL;
    }
    if (sz)
        return ad_rs_sizes_to_scales(c, x, sz, s, n);
    if (!sc) {
        ad_refuse(c, DG_SEMANTICS, "neither scales nor sizes is given");
        return NULL;
    }
    if (!ad_const_floats(sc, s, n))
        *s = NULL;
    return sc;
}

/* Resize 11 -> 10: Resize-10 is Resize-11 with asymmetric coordinates,
 * nearest or linear mode, scales only, and the nearest rounding described
 * at the top. Exact when the node uses only that (the nearest_mode must
 * round as Resize-10 does on every axis, checked on constant scales);
 * anything else becomes interpolation tables (resize_lower.c). */
static int ad_rs_11_10(AdCtx *c)
{
    char mb[32], cb[48], nb[48];
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    const char *ctm = ad_attr_s(c, "coordinate_transformation_mode", cb,
                              sizeof cb);
    const char *nm = ad_attr_s(c, "nearest_mode", nb, sizeof nb);
    char why[160];
    double *s;
    size_t n;
    if (ad_rs_why_not_10(c, mode, ctm, nm, why, sizeof why))
        return ad_rs_lower(c, why);
    IrValue *scales = ad_rs_scales_for_10(c, &s, &n);
    if (!scales)
        return -1;
    free(s);
    IrValue *roi = ad_in(c, 1), *old_sc = ad_in(c, 2), *old_sz = ad_in(c, 3);
    ad_set_input(c, 1, scales);
    for (size_t i = 2; i < c->n->n_in; i++)
        ir_node_set_input(c->n, i, NULL);
    ad_trim_inputs(c->n);
    IrValue *old[3] = {roi, old_sc == scales ? NULL : old_sc, old_sz};
    ad_rs_drop(old, 3);
    ad_drop_attr(c, "coordinate_transformation_mode");
    ad_drop_attr(c, "nearest_mode");
    ad_drop_attr(c, "cubic_coeff_a");
    ad_drop_attr(c, "exclude_outside");
    ad_drop_attr(c, "extrapolation_value");
    return 0;
}

/* ---- Resize 11 <-> 13 ------------------------------------------------ */

/* Resize-13 reads a given scales or sizes input as given, empty or not:
 * runtimes (ONNX's shape inference in ONNX Runtime) refuse both unless
 * they can see one is empty, which they cannot through a Cast
 * (onnxconverter-common's float16 models). So an input known empty
 * (Resize-11's "not given") is left out, as Resize-13 says it: roi unless
 * tf_crop_and_resize reads it, scales or sizes when the other one is
 * given. */
static void ad_rs_leave_out_empty(AdCtx *c, const char *ctm)
{
    IrValue *old[3] = {ad_in(c, 1), ad_in(c, 2), ad_in(c, 3)};
    bool drop[3] = {
        old[0] && ad_rs_is_empty(old[0]) && strcmp(ctm, "tf_crop_and_resize") != 0,
        old[1] && ad_rs_is_empty(old[1]) && ad_rs_given(old[2]),
        old[2] && ad_rs_is_empty(old[2]) && ad_rs_given(old[1]),
    };
    for (size_t i = 0; i < 3; i++) {
        if (drop[i])
            ir_node_set_input(c->n, i + 1, NULL);
        else
            old[i] = NULL;
    }
    ad_trim_inputs(c->n);
    ad_rs_drop(old, 3);
}

/* Resize 11 -> 13: roi and scales become optional (empty ones are left
 * out, above), and tf_half_pixel_for_nn is gone. That mode maps x to
 * (x + 0.5) / s, which is half_pixel's coordinate plus 0.5, so in nearest
 * mode floor() of it is half_pixel with round_prefer_ceil and
 * round_prefer_floor() of it is half_pixel with ceil; other uses have no
 * form in Resize-13. */
static int ad_rs_11_13(AdCtx *c)
{
    char mb[32], cb[48], nb[48];
    const char *ctm = ad_attr_s(c, "coordinate_transformation_mode", cb,
                              sizeof cb);
    ad_rs_leave_out_empty(c, ctm);
    if (strcmp(ctm, "tf_half_pixel_for_nn") != 0)
        return 0;
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    const char *nm = ad_attr_s(c, "nearest_mode", nb, sizeof nb);
    const char *to = NULL;
    if (strcmp(mode, "nearest") == 0 && strcmp(nm, "floor") == 0)
        to = "round_prefer_ceil";
    else if (strcmp(mode, "nearest") == 0 && strcmp(nm, "round_prefer_floor") == 0)
        to = "ceil";
    if (!to) {
        char why[160];
        snprintf(why, sizeof why, "tf_half_pixel_for_nn (removed in Resize-13) with "
                 "mode '%s' and nearest_mode '%s' has no equivalent", mode, nm);
        return ad_rs_lower(c, why);
    }
    ad_set_attr_s(c, c->n, "coordinate_transformation_mode", "half_pixel");
    ad_set_attr_s(c, c->n, "nearest_mode", to);
    return 0;
}

/* Resize 13 -> 11: roi and scales are required inputs in 11; a left-out
 * one is given as an empty constant, which Resize-11 reads as "not given"
 * (roi is only read by tf_crop_and_resize, which needs a real one). */
static int ad_rs_13_11(AdCtx *c)
{
    char cb[48];
    const char *ctm = ad_attr_s(c, "coordinate_transformation_mode", cb,
                              sizeof cb);
    if (!ad_in(c, 1) && strcmp(ctm, "tf_crop_and_resize") == 0)
        return ad_refuse(c, DG_SEMANTICS, "tf_crop_and_resize without roi");
    IrValue *sc = ad_in(c, 2), *sz = ad_in(c, 3), *roi = ad_in(c, 1);
    if (!sc && !sz)
        return ad_refuse(c, DG_SEMANTICS, "neither scales nor sizes is given");
    if (!roi) {
        if (!(roi = ad_rs_empty(c, IR_FLOAT)))
            return -1;
        ad_set_input(c, 1, roi);
    }
    if (!sc) {
        if (!(sc = ad_rs_empty(c, IR_FLOAT)))
            return -1;
        ad_set_input(c, 2, sc);
    }
    return 0;
}

/* ---- Resize 13 <-> 18 ------------------------------------------------ */

/* The normalized axes attribute of c->n (NULL when absent or all axes in
 * order); *n its length. Refuses (returns NULL, *bad set) on bad axes. */
int64_t *ad_rs_axes(AdCtx *c, int r, size_t *n, bool *bad)
{
    IrAttr *a = ad_attr(c, "axes");
    *bad = false;
    *n = 0;
    if (!a)
        return NULL;
    if (r < 0) {
        *bad = true;
        ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of X is unknown; cannot expand axes");
        return NULL;
    }
    int64_t *ax = mem_array(a->n_ints ? a->n_ints : 1, sizeof *ax);
    bool in_order = a->n_ints == (size_t)r;
    for (size_t i = 0; i < a->n_ints; i++) {
        int64_t v = a->ints[i] < 0 ? a->ints[i] + r : a->ints[i];
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup = dup || ax[j] == v;
        if (v < 0 || v >= r || dup) {
            free(ax);
            *bad = true;
            ad_refuse(c, DG_ATTRIBUTE, "bad axes for rank %d", r);
            return NULL;
        }
        ax[i] = v;
        in_order = in_order && v == (int64_t)i;
    }
    *n = a->n_ints;
    if (in_order) {
        free(ax);
        return NULL;
    }
    return ax;
}

/* Gather(Concat(a, b), idx): picks the full-rank vector from the given
 * values a and the fill values b (both 1-D). Gather and Concat exist at
 * every opset and copy values exactly. */
static IrValue *ad_rs_pick(AdCtx *c, IrValue *a, IrValue *b, size_t n_idx,
                           const int64_t *idx)
{
    IrValue *in[2] = {a, b};
    IrValue *cat = ad_concat(c, in, 2, 0);
    return cat ? ad_gather(c, cat, ad_const_i64s(c, n_idx, idx), 0) : NULL;
}

/* For each axis i < r: the position of i in ax[0..n), or else fill (plus i
 * when fill_step is 1). */
static int64_t *ad_rs_index(const int64_t *ax, size_t n, int r, int64_t fill,
                            int fill_step)
{
    int64_t *idx = mem_array((size_t)r, sizeof *idx);
    for (int i = 0; i < r; i++) {
        idx[i] = fill + (fill_step ? i : 0);
        for (size_t p = 0; p < n; p++)
            if (ax[p] == i)
                idx[i] = (int64_t)p;
    }
    return idx;
}

/* The full-rank scales for a Resize-18 node with `axes`: the given scales
 * on those axes, 1 elsewhere. */
static IrValue *ad_rs_full_scales(AdCtx *c, IrValue *sc, int r, size_t n,
                                  const int64_t *ax)
{
    double *s = NULL, one = 1.0;
    size_t m = 0;
    IrValue *v;
    if (ad_const_floats(sc, &s, &m) && m == n) {
        double *full = mem_array((size_t)r, sizeof *full);
        for (int i = 0; i < r; i++)
            full[i] = 1.0;
        for (size_t i = 0; i < n; i++)
            full[ax[i]] = s[i];
        v = ad_const_reals(c, IR_FLOAT, (size_t)r, full);
        free(full);
    } else {
        int64_t *idx = ad_rs_index(ax, n, r, (int64_t)n, 0);
        IrValue *fill = ad_const_reals(c, IR_FLOAT, 1, &one);
        v = fill ? ad_rs_pick(c, sc, fill, (size_t)r, idx) : NULL;
        free(idx);
    }
    free(s);
    return v;
}

/* The full-rank sizes: the given sizes on `axes`, X's own dims elsewhere
 * (constants when its shape is known, else Shape(X)). */
static IrValue *ad_rs_full_sizes(AdCtx *c, IrValue *x, IrValue *sz, int r, size_t n,
                                 const int64_t *ax)
{
    int64_t *full = mem_array((size_t)r, sizeof *full), *s = NULL;
    size_t m = 0;
    bool dims = true;
    for (int i = 0; i < r && dims; i++)
        dims = (full[i] = ad_dim(x, i)) >= 0;
    IrValue *v = NULL;
    if (ad_const_ints(sz, &s, &m) && m == n && dims) {
        for (size_t i = 0; i < n; i++)
            full[ax[i]] = s[i];
        v = ad_const_i64s(c, (size_t)r, full);
    } else {
        IrValue *fill = NULL, *in[1] = {x};
        if (dims) {
            fill = ad_const_i64s(c, (size_t)r, full);
        } else {
            IrNode *shape = ad_node(c, c->n, "Shape", 1, in, 1);
            fill = shape ? shape->out[0] : NULL;
        }
        int64_t *idx = ad_rs_index(ax, n, r, (int64_t)n, 1);
        if (fill)
            v = ad_rs_pick(c, sz, fill, (size_t)r, idx);
        free(idx);
    }
    free(s);
    free(full);
    return v;
}

/* The full-rank roi for tf_crop_and_resize: [starts..., ends...] with 0
 * and 1 on the axes not listed. */
static IrValue *ad_rs_full_roi(AdCtx *c, IrValue *roi, int r, size_t n,
                               const int64_t *ax)
{
    static const uint16_t h01[2] = {0x0000, 0x3c00};   /* float16 0, 1 */
    static const float f01[2] = {0.0f, 1.0f};
    static const double d01[2] = {0.0, 1.0};
    int32_t dt = ad_elem(roi);
    int64_t two = 2;
    if (dt != IR_FLOAT && dt != IR_FLOAT16 && dt != IR_DOUBLE) {
        ad_refuse(c, DG_TYPE_UNKNOWN, "the type of roi is unknown");
        return NULL;
    }
    const void *data = dt == IR_FLOAT ? (const void *)f01
                     : dt == IR_DOUBLE ? (const void *)d01 : (const void *)h01;
    size_t bytes = dt == IR_FLOAT ? sizeof f01 : dt == IR_DOUBLE ? sizeof d01 : sizeof h01;
    int64_t *lo = ad_rs_index(ax, n, r, 2 * (int64_t)n, 0);
    int64_t *idx = mem_array(2 * (size_t)r, sizeof *idx);
    for (int i = 0; i < r; i++) {
        bool listed = lo[i] < (int64_t)n;
        idx[i] = lo[i];
        idx[r + i] = listed ? lo[i] + (int64_t)n : 2 * (int64_t)n + 1;
    }
    /* A known float roi stays a constant (interpolation tables read it). */
    double *rv = NULL, *full = mem_array(2 * (size_t)r, sizeof *full);
    size_t m = 0;
    bool known = dt == IR_FLOAT && ad_const_floats(roi, &rv, &m) && m == 2 * n;
    for (int i = 0; known && i < 2 * r; i++)
        full[i] = idx[i] < 2 * (int64_t)n ? rv[idx[i]] : idx[i] == 2 * (int64_t)n ? 0 : 1;
    IrValue *fill = known ? NULL : ad_const_tensor(c, dt, 1, &two, data, bytes);
    IrValue *v = known ? ad_const_reals(c, IR_FLOAT, 2 * (size_t)r, full)
               : fill ? ad_rs_pick(c, roi, fill, 2 * (size_t)r, idx) : NULL;
    free(rv);
    free(full);
    free(lo);
    free(idx);
    return v;
}

/* Which of scales (input 2) and sizes (input 3) a Resize-13+ node uses:
 * 2 or 3, or -1 after refusing (both given and neither a known empty
 * constant, or none given). */
int ad_rs_which(AdCtx *c)
{
    IrValue *sc = ad_in(c, 2), *sz = ad_in(c, 3);
    sc = ad_rs_given(sc) ? sc : NULL;
    sz = ad_rs_given(sz) ? sz : NULL;
    if (sc && sz)
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "scales and sizes are both given; one must be an empty constant");
    if (!sc && !sz)
        return ad_refuse(c, DG_SEMANTICS, "neither scales nor sizes is given");
    return sc ? 2 : 3;
}

/* Rewrites a Resize-18 node with attribute axes (normalized in ax[0..n),
 * rank r) into full-rank roi / scales / sizes inputs. roi is only read by
 * tf_crop_and_resize (crop); otherwise it is left out. */
static int ad_rs_expand_axes(AdCtx *c, const int64_t *ax, size_t n, int r, bool crop)
{
    IrValue *x = ad_in(c, 0), *roi = ad_in(c, 1), *sc = ad_in(c, 2), *sz = ad_in(c, 3);
    int which = ad_rs_which(c);
    IrValue *nroi = NULL, *nsc = NULL, *nsz = NULL;
    if (which < 0)
        return -1;
    if (crop && (!roi || !(nroi = ad_rs_full_roi(c, roi, r, n, ax))))
        return roi ? -1 : ad_refuse(c, DG_SEMANTICS, "tf_crop_and_resize without roi");
    if (which == 2 && !(nsc = ad_rs_full_scales(c, sc, r, n, ax)))
        return -1;
    if (which == 3 && !(nsz = ad_rs_full_sizes(c, x, sz, r, n, ax)))
        return -1;
    ad_set_input(c, 1, nroi);
    ad_set_input(c, 2, nsc);
    ad_set_input(c, 3, nsz);
    ad_trim_inputs(c->n);
    IrValue *old[3] = {roi, sc, sz};
    ad_rs_drop(old, 3);
    return 0;
}

/* Whether no resized axis of this Resize-18+ node shrinks (known scales
 * all >= 1, or stretched known sizes at least X's known dims): antialias
 * widens the filter only when downsampling, and its normalized weights
 * are then the plain ones. */
static bool ad_rs_no_downscale(AdCtx *c, IrValue *x)
{
    IrValue *sc = ad_in(c, 2), *sv = ad_in(c, 3);
    int which = ad_rs_given(sc) ? 2 : ad_rs_given(sv) ? 3 : 0;
    double *s = NULL;
    int64_t *z = NULL;
    size_t n = 0, na = 0;
    bool ok = false;
    if (which == 2 && ad_const_floats(ad_in(c, 2), &s, &n)) {
        ok = true;
        for (size_t i = 0; i < n; i++)
            ok = ok && s[i] >= 1.0;
    } else if (which == 3 && ad_const_ints(ad_in(c, 3), &z, &n)) {
        IrAttr *a = ad_attr(c, "axes");
        int r = ad_rank(x);
        na = a ? a->n_ints : (size_t)(r > 0 ? r : 0);
        ok = r > 0 && n == na;
        for (size_t i = 0; ok && i < n; i++) {
            int64_t ax = a ? (a->ints[i] < 0 ? a->ints[i] + r : a->ints[i]) : (int64_t)i;
            int64_t d = ax >= 0 && ax < r ? ad_dim(x, (int)ax) : -1;
            ok = d > 0 && z[i] >= d;
        }
    }
    free(s);
    free(z);
    return ok;
}

/* Resize 18 -> 13: the attributes antialias, axes and
 * keep_aspect_ratio_policy are new in 18. antialias only acts in linear and
 * cubic modes; keep_aspect_ratio_policy only with sizes; axes names the
 * resized axes, which Resize-13 expresses by full-rank roi / scales / sizes
 * (1, X's own dims and [0, 1] on the other axes). */
static int ad_rs_18_13(AdCtx *c)
{
    char mb[32], pb[32], cb[48];
    const char *mode = ad_attr_s(c, "mode", mb, sizeof mb);
    const char *pol = ad_attr_s(c, "keep_aspect_ratio_policy", pb, sizeof pb);
    const char *ctm = ad_attr_s(c, "coordinate_transformation_mode", cb,
                              sizeof cb);
    IrValue *x = ad_in(c, 0), *sz = ad_in(c, 3);
    char why[96];
    if (ad_attr_i(c, "antialias") != 0 && strcmp(mode, "nearest") != 0 &&
        !ad_rs_no_downscale(c, x))
        return ad_rs_lower(c, "Resize-13 has no antialias");
    if (ad_rs_given(sz) && strcmp(pol, "stretch") != 0) {
        snprintf(why, sizeof why, "Resize-13 has no keep_aspect_ratio_policy '%s'", pol);
        return ad_rs_lower(c, why);
    }
    int r = ad_rank(x);
    size_t n;
    bool bad;
    int64_t *ax = ad_rs_axes(c, r, &n, &bad);
    if (bad)
        return -1;
    if (ax && ad_rs_expand_axes(c, ax, n, r, strcmp(ctm, "tf_crop_and_resize") == 0) < 0) {
        free(ax);
        return -1;
    }
    free(ax);
    ad_drop_attr(c, "axes");
    ad_drop_attr(c, "antialias");
    ad_drop_attr(c, "keep_aspect_ratio_policy");
    return 0;
}

/* ---- Resize 18 <-> 19 ------------------------------------------------ */

/* Whether every resized axis has an integral output length s * in, so
 * that half_pixel_symmetric's adjustment (out / (s * in)) is 1. */
static bool ad_rs_integral_out(AdCtx *c, IrValue *x, IrValue *sc)
{
    double *s;
    size_t n;
    if (!ad_const_floats(sc, &s, &n))
        return false;
    IrAttr *a = ad_attr(c, "axes");
    int r = ad_rank(x);
    bool ok = r >= 0 && n == (a ? a->n_ints : (size_t)r);
    for (size_t i = 0; i < n && ok; i++) {
        int64_t axis = a ? a->ints[i] : (int64_t)i;
        if (axis < 0)
            axis += r;
        int64_t in = ad_dim(x, (int)axis);
        double o = s[i] * (double)in;
        ok = in >= 0 && o == floor(o);
    }
    free(s);
    return ok;
}

/* Resize 19 -> 18: 19 adds coordinate_transformation_mode
 * half_pixel_symmetric, which is half_pixel shifted by
 * in/2 * (1 - out / (s * in)): the same as half_pixel when every output
 * length s * in is an integer (always so with sizes and the stretch
 * policy). */
static int ad_rs_19_18(AdCtx *c)
{
    char cb[48], pb[32];
    const char *ctm = ad_attr_s(c, "coordinate_transformation_mode", cb,
                              sizeof cb);
    if (strcmp(ctm, "half_pixel_symmetric") != 0)
        return 0;
    const char *pol = ad_attr_s(c, "keep_aspect_ratio_policy", pb, sizeof pb);
    IrValue *sc = ad_in(c, 2), *sz = ad_in(c, 3);
    bool sizes = ad_rs_given(sz) && !ad_rs_given(sc) && strcmp(pol, "stretch") == 0;
    if (!sizes && !(ad_rs_given(sc) && !ad_rs_given(sz) &&
                    ad_rs_integral_out(c, ad_in(c, 0), sc)))
        return ad_rs_lower(c, "half_pixel_symmetric differs from half_pixel unless "
                              "every output length is integral");
    ad_set_attr_s(c, c->n, "coordinate_transformation_mode", "half_pixel");
    return 0;
}

static const AdEntry ad_resize[] = {
    AD_UP("Upsample", 1, 7, AD_ATTRS, ad_up_1_7),
    AD_DOWN("Upsample", 1, 7, AD_ATTRS, ad_up_7_1),
    AD_UP("Upsample", 7, 9, AD_ATTR_INPUT, ad_up_7_9),
    AD_DOWN("Upsample", 7, 9, AD_ATTR_INPUT, ad_up_9_7),
    AD_UP("Upsample", 9, 10, AD_RENAME, ad_up_9_10),
    AD_DOWN("Upsample", 9, 10, AD_COMPATIBLE, NULL),
    AD_GONE("Resize", 10, AD_RENAME, ad_rs_10_0),
    AD_UP("Resize", 10, 11, AD_SEMANTIC, ad_rs_10_11),
    AD_DOWN("Resize", 10, 11, AD_SEMANTIC, ad_rs_11_10),
    AD_UP("Resize", 11, 13, AD_SEMANTIC, ad_rs_11_13),
    AD_DOWN("Resize", 11, 13, AD_ATTR_INPUT, ad_rs_13_11),
    AD_UP("Resize", 13, 18, AD_ATTRS, ad_nothing),
    AD_DOWN("Resize", 13, 18, AD_ATTRS, ad_rs_18_13),
    AD_UP("Resize", 18, 19, AD_ATTRS, ad_nothing),
    AD_DOWN("Resize", 18, 19, AD_SEMANTIC, ad_rs_19_18),
};

const AdFamily ad_family_resize = {"resize", ad_resize,
                                   sizeof ad_resize / sizeof ad_resize[0]};
