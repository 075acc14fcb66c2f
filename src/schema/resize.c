/* resize.c - Resize's shared arithmetic (see resize.h for the precision
 * each part is computed in, and why). */
#include "schema/resize.h"

#include <math.h>

const char *const rsz_ctm_names[RSZ_N_CTM] = {
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
    "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"
};
const char *const rsz_nm_names[RSZ_N_NM] = {
    "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"
};

int64_t rsz_len(int64_t in, double scale)
{
    float o = floorf((float)in * (float)scale);
    if (!(scale > 0) || !(o >= 0) || !(o < 9.0e15f))
        return -1;
    return (int64_t)o;
}

double rsz_coord(int ctm, const RszAxis *a, int64_t x, bool *outside)
{
    double in = (double)a->in, s = a->scale, outf = a->outf, xr = (double)x, xo;

    *outside = false;
    switch (ctm) {
    case RSZ_ALIGN:
        return outf == 1 ? 0.0 : xr * (in - 1) / (outf - 1);
    case RSZ_ASYMMETRIC:
        return xr / s;
    case RSZ_PYTORCH:
        return outf > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
    case RSZ_TF_NN:
        return (xr + 0.5) / s;
    case RSZ_HALF_PIXEL_SYM:
        return in / 2 * (1 - (double)a->out / outf) + (xr + 0.5) / s - 0.5;
    case RSZ_CROP:
        xo = outf == 1 ? (a->hi - a->lo) * (in - 1) / 2
                       : xr * (a->hi - a->lo) * (in - 1) / (outf - 1);
        xo += a->lo * (in - 1);
        *outside = !(xo >= 0 && xo <= in - 1);
        return xo;
    default:
        return (xr + 0.5) / s - 0.5;   /* half_pixel */
    }
}

/* rsz_coord's formulas in float32, each operation rounded as a runtime
 * computing in float rounds it. */
static float rsz_coord_f32(int ctm, const RszAxis *a, int64_t x, bool *outside)
{
    float in = (float)a->in, s = (float)a->scale, outf = (float)a->outf, xr = (float)x;
    float lo = (float)a->lo, hi = (float)a->hi, xo;

    *outside = false;
    switch (ctm) {
    case RSZ_ALIGN:
        return outf == 1 ? 0.0f : xr * (in - 1) / (outf - 1);
    case RSZ_ASYMMETRIC:
        return xr / s;
    case RSZ_PYTORCH:
        return outf > 1 ? (xr + 0.5f) / s - 0.5f : 0.0f;
    case RSZ_TF_NN:
        return (xr + 0.5f) / s;
    case RSZ_HALF_PIXEL_SYM:
        return in / 2 * (1 - (float)a->out / outf) + (xr + 0.5f) / s - 0.5f;
    case RSZ_CROP:
        xo = outf == 1 ? (hi - lo) * (in - 1) / 2 : xr * (hi - lo) * (in - 1) / (outf - 1);
        xo += lo * (in - 1);
        *outside = !(xo >= 0 && xo <= in - 1);
        return xo;
    default:
        return (xr + 0.5f) / s - 0.5f;
    }
}

int64_t rsz_nearest(int ctm, int nm, const RszAxis *a, int64_t x)
{
    bool outside, up;
    double xo = (double)rsz_coord_f32(ctm, a, x, &outside);
    if (outside)
        return -1;
    if (!(xo == xo))
        xo = 0;
    if (xo > 9.0e15)
        xo = 9.0e15;
    if (xo < -9.0e15)
        xo = -9.0e15;
    double base = ceil(xo) - 1, ratio = xo - base;   /* ratio in (0, 1] */
    if (ratio == 1)
        up = true;   /* an integral coordinate is its own pick */
    else if (nm == RSZ_ROUND_CEIL)
        up = ratio >= 0.5;
    else if (nm == RSZ_FLOOR)
        up = false;
    else if (nm == RSZ_CEIL)
        up = true;
    else if (nm == RSZ_SIMPLE)
        up = a->scale < 1;
    else
        up = ratio > 0.5;   /* round_prefer_floor */
    int64_t i = (int64_t)base + (up ? 1 : 0);
    return i < 0 ? 0 : i >= a->in ? a->in - 1 : i;
}
