/*
 * cmp_outputs - compares two folders of `onnx-convert run` outputs (not a
 * test; bench/big3g.sh uses it to check that a converted model computes
 * what the original did).
 *
 *   cmp_outputs DIR_A DIR_B [RTOL [ATOL]]
 *
 * Reads DIR_A/output_K.pb and DIR_B/output_K.pb for K = 0, 1, ... and
 * compares them with the evaluator's own rule (ev_value_equal:
 * |b - a| <= atol + rtol * |a|, NaN equal to NaN), by default rtol 1e-3,
 * atol 1e-5 as `convert --verify` does. Also prints the largest absolute
 * difference of float outputs, so a pass shows how close it was.
 * Exit 0 when every output is equal and both folders have the same count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "eval/eval.h"

static int cmp_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Largest |a - b| over two float tensors of the same shape, else -1. */
static double cmp_max_diff(const EvValue *a, const EvValue *b)
{
    if (a->kind != b->kind || a->dtype != b->dtype || a->numel != b->numel ||
        !ev_dtype_is_float(a->dtype))
        return -1;
    double m = 0;
    for (size_t k = 0; k < a->numel; k++) {
        double d = fabs(ev_get_f(a, k) - ev_get_f(b, k));
        if (d > m)
            m = d;
    }
    return m;
}

/* Compares output K of both folders; 0 equal, 1 different, 2 unreadable. */
static int cmp_one(const char *da, const char *db, size_t k, double rtol,
                   double atol)
{
    char pa[4096], pb[4096], why[512];
    snprintf(pa, sizeof pa, "%s/output_%zu.pb", da, k);
    snprintf(pb, sizeof pb, "%s/output_%zu.pb", db, k);
    EvValue *a = NULL, *b = NULL;
    IrError err = {{0}};
    int rc = 2;
    if (ev_value_read(pa, NULL, &a, &err) || ev_value_read(pb, NULL, &b, &err)) {
        fprintf(stderr, "cmp_outputs: %s\n", err.msg);
    } else {
        rc = ev_value_equal(b, a, rtol, atol, why, sizeof why) ? 0 : 1;
        printf("output_%zu: %s, max |diff| %g%s%s\n", k, rc ? "DIFFERENT" : "equal",
               cmp_max_diff(a, b), rc ? ": " : "", rc ? why : "");
    }
    ev_unref(a);
    ev_unref(b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: cmp_outputs DIR_A DIR_B [RTOL [ATOL]]\n");
        return 2;
    }
    double rtol = argc > 3 ? atof(argv[3]) : 1e-3;
    double atol = argc > 4 ? atof(argv[4]) : 1e-5;
    int worst = 0;
    size_t k = 0;
    char pa[4096], pb[4096];
    for (;; k++) {
        snprintf(pa, sizeof pa, "%s/output_%zu.pb", argv[1], k);
        snprintf(pb, sizeof pb, "%s/output_%zu.pb", argv[2], k);
        int ea = cmp_exists(pa), eb = cmp_exists(pb);
        if (ea != eb) {
            printf("output_%zu: only in %s\n", k, ea ? argv[1] : argv[2]);
            worst = 1;
        }
        if (!ea || !eb)
            break;
        int rc = cmp_one(argv[1], argv[2], k, rtol, atol);
        worst = rc > worst ? rc : worst;
    }
    if (k == 0) {
        fprintf(stderr, "cmp_outputs: no output_0.pb in both folders\n");
        return 2;
    }
    return worst;
}
