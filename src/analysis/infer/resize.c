/*
 * infer/resize.c - inference of Resize and Upsample: output dims from
 * the scales or sizes (inputs or, in early versions, attributes), with
 * the axes and keep_aspect_ratio_policy of late versions.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"
#include "schema/resize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* o = floor(d * scale) in float32, as ONNX's own shape inference and the
 * runtimes compute it (rsz_len, src/schema/resize.h); a symbol survives a scale
 * of 1. */
static void inf_t_scale_dim(IrDim *o, const IrDim *d, double scale)
{
    if (!inf_dim_known(d)) {
        if (scale == 1.0)
            inf_dim_copy(o, d);
        else
            inf_dim_unknown(o);
        return;
    }
    int64_t x = rsz_len(d->value, scale);
    if (x >= 0)
        inf_dim_set(o, x);
    else
        inf_dim_unknown(o);
}

/* o = round_int(d * scale), halfway cases rounded up, for the
 * aspect-ratio policies; scale is num / den. Known only when float and
 * double arithmetic agree. */
static void inf_t_round_dim(IrDim *o, int64_t d, int64_t num, int64_t den)
{
    double x = floor((double)d * ((double)num / (double)den) + 0.5);
    float fs = (float)num / (float)den;
    double xf = floor((double)((float)d * fs + 0.5f));
    if (isfinite(x) && x == xf && x >= 0 && x < 4e18)
        inf_dim_set(o, (int64_t)x);
    else
        inf_dim_unknown(o);
}

/* Output dims from `sizes` under keep_aspect_ratio_policy. */
static int inf_t_resize_sizes(InfCtx *c, const IrShape *in, IrShape *o,
                              const int *axes, size_t na, const IrShape *sz)
{
    const char *pol = c->since >= 18 ? inf_attr_s(c, "keep_aspect_ratio_policy")
                                     : "stretch";
    for (size_t k = 0; k < na; k++)
        if (inf_dim_known(&sz->dims[k]) && sz->dims[k].value < 0)
            return inf_fail(c, "shape", "sizes entry %zu is negative", k);
    if (!pol || strcmp(pol, "stretch") == 0) {
        for (size_t k = 0; k < na; k++)
            inf_dim_copy(&o->dims[axes[k]], &sz->dims[k]);
        return 0;
    }
    bool larger = strcmp(pol, "not_smaller") == 0;
    if (!larger && strcmp(pol, "not_larger") != 0)
        return inf_fail(c, "attribute", "keep_aspect_ratio_policy '%s' is unknown", pol);
    /* the scale is the smallest (largest) ratio sizes[i] / in[i], chosen
     * exactly by comparing cross products */
    int64_t num = 0, den = 0;
    for (size_t k = 0; k < na; k++) {
        const IrDim *d = &in->dims[axes[k]], *s = &sz->dims[k];
        if (!inf_dim_known(d) || !inf_dim_known(s) || d->value <= 0 ||
            d->value > INT32_MAX || s->value > INT32_MAX) {
            for (size_t j = 0; j < na; j++)
                inf_dim_unknown(&o->dims[axes[j]]);
            return 0;
        }
        bool better = den == 0 || (larger ? s->value * den > num * d->value
                                          : s->value * den < num * d->value);
        if (better) {
            num = s->value;
            den = d->value;
        }
    }
    for (size_t k = 0; k < na; k++)
        inf_t_round_dim(&o->dims[axes[k]], in->dims[axes[k]].value, num, den);
    return 0;
}

/* Resize (10+) and Upsample (7+ with scales): the listed axes (all, or
 * `axes` from 18) get floor(dim * scale) or the `sizes`; unknown when
 * neither is known. scales_in / sizes_in < 0: no such input. */
static int inf_t_resize(InfCtx *c, const float *sattr, long nsattr, int scales_in,
                        int sizes_in)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    int r = (int)in->rank;
    int64_t *ax;
    size_t na;
    int ka = c->since >= 18 && sizes_in >= 0 ? inf_t_ints(c, true, "axes", 0, &ax, &na) : 0;
    if (ka == 0) {
        na = (size_t)r;
        ax = mem_array(na ? na : 1, sizeof *ax);
        for (size_t k = 0; k < na; k++)
            ax[k] = (int64_t)k;
    }
    int *axes = mem_array(na ? na : 1, sizeof *axes);
    int rc = inf_t_axes(c, "axes", ax, na, r, 0, true, axes);
    free(ax);
    /* scales: from the attribute, else the input (an empty one is unset) */
    double *sc = NULL;
    size_t ns = 0;
    bool have_scales = false, scales_unknown = false;
    if (sattr) {
        sc = mem_array(nsattr ? (size_t)nsattr : 1, sizeof *sc);
        for (long k = 0; k < nsattr; k++)
            sc[k] = sattr[k];
        ns = (size_t)nsattr;
        have_scales = true;
    } else if (scales_in >= 0 && inf_has_in(c, (size_t)scales_in)) {
        if (inf_in_floats(c, (size_t)scales_in, &sc, &ns))
            have_scales = ns > 0;
        else
            scales_unknown = inf_t_in_len(c, (size_t)scales_in) != 0;
    }
    const char *ctm = sizes_in >= 0 ? inf_attr_s(c, "coordinate_transformation_mode")
                                    : "";
    bool crop = ctm && strcmp(ctm, "tf_crop_and_resize") == 0;
    IrShape *sz = NULL;
    bool sizes_given = sizes_in >= 0 && inf_has_in(c, (size_t)sizes_in);
    if (sizes_given && !have_scales)
        sz = inf_t_in_dims(c, (size_t)sizes_in);
    if (rc == 0 && have_scales && ns != na)
        rc = inf_fail(c, "shape", "scales has %zu entries for %zu axes", ns, na);
    if (rc == 0 && sz && sz->rank != na)
        rc = inf_fail(c, "shape", "sizes has %zu entries for %zu axes", sz->rank, na);
    for (size_t k = 0; rc == 0 && have_scales && k < ns; k++)
        if (!(sc[k] > 0))
            rc = inf_fail(c, "shape", "scale %zu is not positive", k);
    if (rc == 0) {
        IrShape *o = ir_shape_new((size_t)r);
        for (int k = 0; k < r; k++)
            inf_dim_copy(&o->dims[k], &in->dims[k]);
        if (have_scales && crop) {
            /* tf_crop_and_resize also scales by the roi's extent */
            for (size_t k = 0; k < na; k++)
                inf_dim_unknown(&o->dims[axes[k]]);
        } else if (have_scales) {
            for (size_t k = 0; k < na; k++)
                inf_t_scale_dim(&o->dims[axes[k]], &in->dims[axes[k]], sc[k]);
        } else if (sz) {
            rc = inf_t_resize_sizes(c, in, o, axes, na, sz);
        } else if (scales_unknown || sizes_given) {
            for (size_t k = 0; k < na; k++)
                inf_dim_unknown(&o->dims[axes[k]]);
        } else {
            ir_shape_free(o);
            o = NULL; /* neither scales nor sizes: leave to the checker */
        }
        if (rc == 0 && o)
            inf_t_out_dims(c, 0, o);
        ir_shape_free(o);
    }
    ir_shape_free(sz);
    free(sc);
    free(axes);
    return rc;
}

/* Resize: scales is input 1 in opset 10, input 2 (with sizes 3) from 11. */
static int inf_resize(InfCtx *c)
{
    if (c->since < 11)
        return inf_t_resize(c, NULL, 0, 1, -1);
    return inf_t_resize(c, NULL, 0, 2, 3);
}

/* Upsample: height_scale/width_scale on NCHW (opset 1), a `scales`
 * attribute (7), a scales input (9, 10). */
static int inf_upsample(InfCtx *c)
{
    if (c->since >= 9)
        return inf_t_resize(c, NULL, 0, 1, -1);
    if (c->since >= 7) {
        const float *s;
        long n = inf_attr_floats(c, "scales", &s);
        if (n < 0)
            return 0;
        return inf_t_resize(c, s, n, -1, -1);
    }
    const IrShape *in = inf_in_shape(c, 0);
    float s[4] = {1, 1, inf_attr_f(c, "height_scale"), inf_attr_f(c, "width_scale")};
    if (!inf_attr_has(c, "height_scale") || !inf_attr_has(c, "width_scale"))
        return 0;
    if (in && in->rank != 4)
        return inf_fail(c, "rank", "input has rank %zu; 4 is needed", in->rank);
    return inf_t_resize(c, s, 4, -1, -1);
}

const InfOp inf_ops_resize[] = {
    {"", "Resize", inf_resize},
    {"", "Upsample", inf_upsample},
    {NULL, NULL, NULL}};
