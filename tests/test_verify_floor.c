/*
 * test_verify_floor.c - verification judged against the original's own
 * rounding noise (verify_floor.c, VF_FLOOR_MULT).
 *
 * First the rule itself on hand-made tensors; then a float16 model whose
 * HardSwish is written out as x * HardSigmoid(x) (what converting it
 * below opset 14 does): in float16 the product rounds once more, so some
 * outputs move by an ulp, past the fixed tolerance. Judged by the
 * tolerance alone it fails; with the original run in float64
 * (pc_wide_copy) it passes, with figures; planted real errors in the same
 * twin still fail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes_build.h"
#include "precision/precision.h"

/* A float tensor of n values from f(k). */
static EvValue *tf_vec(size_t n, double (*f)(size_t))
{
    int64_t d = (int64_t)n;
    EvValue *v = ev_tensor_new(IR_FLOAT, 1, &d, NULL);
    for (size_t k = 0; k < n; k++)
        ((float *)v->data)[k] = (float)f(k);
    return v;
}

static double tf_want(size_t k) { return 1.0 + (double)(k % 7); }
/* the original in float64: off by 0.01 on every 10th element (its noise) */
static double tf_wide(size_t k) { return tf_want(k) + (k % 10 == 0 ? 0.01 : 0); }
/* after: within the tolerance everywhere */
static double tf_close(size_t k) { return tf_want(k) * (1 + 1e-4); }
/* after: off by 0.02 where the original is noisy (within 4x its noise) */
static double tf_at_noise(size_t k) { return tf_want(k) + (k % 10 == 0 ? 0.02 : 0); }
/* after: off by 0.02 on every 20th element, half of them where the
 * original is quiet (flips landing elsewhere, fewer than its noisy ones) */
static double tf_elsewhere(size_t k) { return tf_want(k) + (k % 20 == 5 ? 0.02 : 0); }
/* after: off by 0.02 on every other element (more than 4x the noisy ones) */
static double tf_many(size_t k) { return tf_want(k) + (k % 2 ? 0.02 : 0); }
/* after: one element off by 1 (beyond 4x the largest noise) */
static double tf_one_big(size_t k) { return tf_want(k) + (k == 3 ? 1 : 0); }
static double tf_nan(size_t k) { return k == 9 ? NAN : tf_want(k); }

static void tf_rule(const char *what, double (*after)(size_t), bool with_wide, bool want_ok)
{
    EvValue *w = tf_vec(1000, tf_want), *g = tf_vec(1000, after);
    EvValue *wide = with_wide ? tf_vec(1000, tf_wide) : NULL;
    VfFigure fig = {0};
    char why[400] = "";
    bool ok = vf_floor_judge(g, w, wide, NULL, 1e-3, 1e-5, false, &fig, why, sizeof why);
    T_CHECK(ok == want_ok, "%s: judged %s (%s)", what, ok ? "equal" : "different", why);
    T_CHECK(!with_wide || fabs(fig.floor - 0.01) < 1e-6, "%s: floor %g, expected 0.01", what,
            fig.floor);
    T_CHECK(with_wide || fig.floor == -1, "%s: floor %g without a wide run", what, fig.floor);
    ev_unref(w);
    ev_unref(g);
    ev_unref(wide);
}

/* The HardSwish model, or its written-out twin with `plant` applied:
 * "" none, "alpha" HardSigmoid's alpha 0.17, "weight" W scaled by 1.01,
 * "op" the last Mul an Add, "axis" a Softmax over the other axis. */
static IrModel *tf_model(bool twin, const char *plant)
{
    static char w[512 * 12], text[sizeof w * 2 + 512];
    size_t len = 0;
    double scale = !strcmp(plant, "weight") ? 1.01 : 1;
    for (size_t k = 0; k < 512; k++)
        len += (size_t)snprintf(w + len, sizeof w - len, "%s%.4f", k ? "," : "",
                                (-3 + 6.0 * (double)k / 511) * scale);
    snprintf(text, sizeof text,
             "opset 14\n"
             "input x float16 4,512\n"
             "init W float16 512 %s\n"
             "t = Mul x,W\n"
             "%s"
             "y = %s u,W\n"
             "z = Softmax y axis=%d\n"
             "output z\n",
             w,
             !twin ? "u = HardSwish t\n"
             : !strcmp(plant, "alpha") ? "h = HardSigmoid t alpha=0.17 beta=0.5\nu = Mul t,h\n"
                                       : "h = HardSigmoid t alpha=0.16666667 beta=0.5\nu = Mul t,h\n",
             !strcmp(plant, "op") ? "Add" : "Mul", !strcmp(plant, "axis") ? 0 : 1);
    return tb_model(text);
}

static int tf_compare(IrModel *a, IrModel *b, IrModel *wide, VfFigure **figs, size_t *n,
                      IrError *err)
{
    VfOptions o = {.seed = 3, .wide = wide, .figures = figs, .n_figures = n};
    return vf_compare(a, b, &o, err);
}

static void tf_models(void)
{
    IrModel *a = tf_model(false, ""), *b = tf_model(true, ""), *wide = NULL;
    IrError err = {0};
    VfFigure *figs = NULL;
    size_t n = 0;
    T_CHECK(pc_wide_copy(a, &wide, &err) == 0, "pc_wide_copy: %s", err.msg);
    int rc = tf_compare(a, b, NULL, &figs, &n, &err);
    T_CHECK(rc == -2, "the tolerance alone should refuse the float16 twin (rc %d)", rc);
    free(figs);
    rc = tf_compare(a, b, wide, &figs, &n, &err);
    T_CHECK(rc == 0, "the floor should accept the float16 twin: %s", rc ? err.msg : "");
    T_CHECK(n == 1 && figs && figs[0].floats, "one float output's figures (%zu)", n);
    if (n == 1 && figs) {
        T_CHECK(figs[0].max_err > figs[0].tol, "largest error %g within the tolerance %g: "
                "the test no longer needs the floor", figs[0].max_err, figs[0].tol);
        T_CHECK(figs[0].floor > 0 && figs[0].beyond > 0 && figs[0].noisy > 0,
                "floor %g, %zu past the tolerance, %zu noisy", figs[0].floor, figs[0].beyond,
                figs[0].noisy);
        T_CHECK(!strcmp(figs[0].name, "z"), "figure named '%s'", figs[0].name);
    }
    free(figs);
    static const char *const plants[] = {"alpha", "weight", "op", "axis"};
    for (size_t i = 0; i < sizeof plants / sizeof plants[0]; i++) {
        IrModel *bad = tf_model(true, plants[i]);
        rc = tf_compare(a, bad, wide, NULL, NULL, &err);
        T_CHECK(rc == -2, "planted %s: vf_compare gave %d (%s)", plants[i], rc,
                rc ? err.msg : "equal");
        ir_model_free(bad);
    }
    ir_model_free(a);
    ir_model_free(b);
    ir_model_free(wide);
}

/* The two-sided rule: the converted model's own float64 run known.
 * after = tf_elsewhere (off by 0.02 on every 20th element, k % 20 == 5,
 * where the original is quiet). */
/* the converted model's own noise lands there: its float64 run is the
 * original's (the two agree where rounding is gone) */
static double tf_wide_same(size_t k) { return tf_wide(k); }
/* the converted model computes something else: its float64 run is its
 * own output (no noise of its own to explain the moves) */
static double tf_wide_moved(size_t k) { return tf_elsewhere(k); }
/* both: noise of its own at those elements, and in float64 it is off by
 * 0.02 where the original is quiet (a planted change under the noise) */
static double tf_wide_planted(size_t k) { return tf_want(k) + (k % 20 == 5 ? 0.04 : 0); }

static void tf_two_sided(const char *what, double (*wide_got)(size_t), bool want_ok)
{
    EvValue *w = tf_vec(1000, tf_want), *g = tf_vec(1000, tf_elsewhere);
    EvValue *wide = tf_vec(1000, tf_wide), *wg = tf_vec(1000, wide_got);
    VfFigure fig = {0};
    char why[400] = "";
    bool ok = vf_floor_judge(g, w, wide, wg, 1e-3, 1e-5, false, &fig, why, sizeof why);
    T_CHECK(ok == want_ok, "two-sided, %s: judged %s (%s)", what, ok ? "equal" : "different",
            why);
    ev_unref(w);
    ev_unref(g);
    ev_unref(wide);
    ev_unref(wg);
}

int main(void)
{
    /* flips elsewhere that the count of noisy elements let pass: the
     * converted model's own noise explains them, or they are refused */
    tf_two_sided("its own noise there, the same in float64", tf_wide_same, true);
    tf_two_sided("no noise of its own there", tf_wide_moved, false);
    tf_two_sided("noise there but off in float64", tf_wide_planted, false);
    tf_rule("within the tolerance", tf_close, true, true);
    tf_rule("within the tolerance, no wide run", tf_close, false, true);
    tf_rule("within 4x the noise where it is noisy", tf_at_noise, true, true);
    tf_rule("the same without a wide run", tf_at_noise, false, false);
    tf_rule("as many flips elsewhere", tf_elsewhere, true, true);
    tf_rule("flips on half the elements", tf_many, true, false);
    tf_rule("one element past 4x the largest noise", tf_one_big, true, false);
    tf_rule("NaN in one model only", tf_nan, true, false);
    tf_models();
    return t_done("verify_floor");
}
