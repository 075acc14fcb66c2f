/*
 * verify_floor.c - judging a float output against the original's own
 * rounding noise (prefix vf_).
 *
 * A model that quantizes, or computes in float16, turns a one-ulp
 * difference into a full quantization step or a three-ulp rounding: two
 * correct computations of it differ by more than any fixed tolerance.
 * The original evaluated a second time in float64 (pc_wide_copy) shows
 * how far its own rounding moves each output element (the floor, f);
 * a conversion passes where its error stays within the tolerance plus a
 * few times that floor (VF_FLOOR_MULT in verify.h gives the rule).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/verify.h"

/* Whether got and want have the same dims (the message says otherwise). */
static bool vf_same_dims(const EvValue *got, const EvValue *want, char *why, size_t cap)
{
    bool same = got->rank == want->rank;
    for (size_t d = 0; same && d < got->rank; d++)
        same = got->dims[d] == want->dims[d];
    if (!same)
        snprintf(why, cap, "shape differs: rank %zu with %zu elements, expected rank %zu "
                 "with %zu", got->rank, got->numel, want->rank, want->numel);
    return same;
}

/* Element k's case apart from finite numbers: 1 when both are NaN or the
 * same infinity (equal), -1 when only one is (differs), 0 otherwise. */
static int vf_special(double g, double w)
{
    if (isnan(g) || isnan(w))
        return isnan(g) && isnan(w) ? 1 : -1;
    if (isinf(g) || isinf(w))
        return g == w ? 1 : -1;
    return 0;
}

/* The largest |want| (finite), at least 1: a half model's error grows with
 * the size of the values it sums. */
static double vf_scale(const EvValue *want)
{
    double s = 1;
    for (size_t k = 0; k < want->numel; k++) {
        double x = fabs(ev_get_f(want, k));
        if (isfinite(x) && x > s)
            s = x;
    }
    return s;
}

/* The original's own noise at element k: |want - wide|, 0 without it. */
static double vf_noise(const EvValue *want, const EvValue *wide, size_t k)
{
    if (!wide)
        return 0;
    double f = fabs(ev_get_f(want, k) - ev_get_f(wide, k));
    return isfinite(f) ? f : 0;
}

/* The worst unexplained element, for the message. */
typedef struct VfWorst {
    size_t k;
    double over;      /* its error past t + VF_FLOOR_MULT * f */
    bool any;
} VfWorst;

/* Element k's case by the two-sided rule (see VF_FLOOR_MULT): error e
 * past tolerance t and the original's own noise, explained when the
 * converted model's own noise there covers it too and the two models
 * computed in float64 agree there within t and the original's noise. */
static bool vf_two_sided(const EvValue *got, const EvValue *wide_got, const EvValue *wide,
                         size_t k, double e, double t, double f)
{
    double gn = fabs(ev_get_f(got, k) - ev_get_f(wide_got, k));
    double d = fabs(ev_get_f(wide_got, k) - ev_get_f(wide, k));
    return isfinite(gn) && isfinite(d) && e <= t + VF_FLOOR_MULT * gn && d <= t + f;
}

bool vf_floor_judge(const EvValue *got, const EvValue *want, const EvValue *wide,
                    const EvValue *wide_got, double rtol, double atol, bool scaled,
                    VfFigure *fig, char *why, size_t cap)
{
    fig->floats = true;
    fig->numel = want->numel;
    fig->floor = wide ? 0 : -1;
    if (!vf_same_dims(got, want, why, cap))
        return false;
    if (wide && wide->numel != want->numel)
        wide = NULL;
    if (!wide || (wide_got && wide_got->numel != want->numel))
        wide_got = NULL;
    double a = atol * (scaled ? vf_scale(want) : 1);
    for (size_t k = 0; wide && k < want->numel; k++) {
        double f = vf_noise(want, wide, k);
        fig->floor = f > fig->floor ? f : fig->floor;
    }
    VfWorst worst = {0, 0, false};
    size_t unexplained = 0, special = 0;
    bool beyond_floor = false;
    for (size_t k = 0; k < want->numel; k++) {
        double g = ev_get_f(got, k), w = ev_get_f(want, k);
        int sp = vf_special(g, w);
        if (sp) {
            special += sp < 0;
            continue;
        }
        double e = fabs(g - w), t = a + rtol * fabs(w), f = vf_noise(want, wide, k);
        if (e > fig->max_err || !fig->tol) {   /* the tolerance where the error peaks */
            fig->max_err = e;
            fig->tol = t;
        }
        fig->noisy += f > t;
        if (e <= t)
            continue;
        fig->beyond++;
        if (e <= t + VF_FLOOR_MULT * f ||
            (wide_got && vf_two_sided(got, wide_got, wide, k, e, t, f)))
            continue;
        unexplained++;
        beyond_floor |= e > t + VF_FLOOR_MULT * fig->floor;
        if (!worst.any || e - t - VF_FLOOR_MULT * f > worst.over)
            worst = (VfWorst){k, e - t - VF_FLOOR_MULT * f, true};
    }
    /* with the converted model's own noise known, every element stands
     * on its own; without, the count of noisy elements vouches */
    bool ok = special == 0 && (unexplained == 0 ||
              (!wide_got && !beyond_floor &&
               unexplained <= VF_FLOOR_MULT * (double)fig->noisy));
    if (ok)
        return true;
    if (special) {
        snprintf(why, cap, "%zu elements are NaN or infinite in one model only", special);
        return false;
    }
    char at[160];
    size_t k = worst.k;
    ev_index_text(want, k, at, sizeof at);
    double g = ev_get_f(got, k), w = ev_get_f(want, k);
    snprintf(why, cap, "element %s is %.9g, expected %.9g: error %.3g past the tolerance "
             "%.3g%s; %zu of %zu elements are past it, %zu of them beyond the noise",
             at, g, w, fabs(g - w), a + rtol * fabs(w),
             fig->floor < 0 ? "" : " and the original's own noise", fig->beyond,
             want->numel, unexplained);
    return false;
}

double vf_wide_diff(const EvValue *wb, const EvValue *wa)
{
    if (wb->numel != wa->numel)
        return -1;
    double scale = vf_scale(wa), worst = 0;
    for (size_t k = 0; k < wa->numel; k++) {
        double g = ev_get_f(wb, k), w = ev_get_f(wa, k);
        int sp = vf_special(g, w);
        if (sp < 0)
            return -1;
        if (!sp && fabs(g - w) / scale > worst)
            worst = fabs(g - w) / scale;
    }
    return worst;
}
