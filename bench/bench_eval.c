/*
 * bench_eval - the evaluator's time per inference on a backend-test case
 * (not a test: measurements are never asserted).
 *
 *   bench_eval CASE_DIR [RUNS [THREADS]]
 *
 * Loads CASE_DIR/model.onnx and test_data_set_0's inputs, runs once to
 * warm up, then RUNS times (default 5) on THREADS threads (default 1; the
 * evaluator holds OpenBLAS to one thread of its own), and prints the
 * median wall time in milliseconds as "CASE_DIR median_ms".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "eval/eval.h"
#include "io/load.h"

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One inference; its outputs are freed at once. */
static int bench_once(IrModel *m, const EvOptions *o, EvValue **in, size_t n_in,
                      IrError *err)
{
    EvValue **out;
    size_t n_out;
    if (ev_model_run(m, o, n_in, in, &out, &n_out, err))
        return -1;
    for (size_t k = 0; k < n_out; k++)
        ev_unref(out[k]);
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_eval CASE_DIR [RUNS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 1000)
        runs = 5;
    EvOptions o = {.threads = argc > 3 ? (size_t)atoi(argv[3]) : 1};
    if (o.threads < 1 || o.threads > 64)
        o.threads = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
    IrError err;
    IrModel *m;
    if (load_model_file(path, NULL, &m, &err)) {
        fprintf(stderr, "bench_eval: %s\n", err.msg);
        return 1;
    }
    snprintf(path, sizeof path, "%s/test_data_set_0", argv[1]);
    EvValue **in;
    size_t n_in;
    if (ev_inputs_read(m, path, &in, &n_in, &err) ||
        bench_once(m, &o, in, n_in, &err)) {
        fprintf(stderr, "bench_eval: %s\n", err.msg);
        return 1;
    }
    double t[1000];
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        if (bench_once(m, &o, in, n_in, &err)) {
            fprintf(stderr, "bench_eval: %s\n", err.msg);
            return 1;
        }
        t[r] = (bench_now() - t0) * 1e3;
    }
    qsort(t, (size_t)runs, sizeof *t, bench_cmp);
    printf("%s %.2f\n", argv[1], t[runs / 2]);
    for (size_t k = 0; k < n_in; k++)
        ev_unref(in[k]);
    free(in);
    ir_model_free(m);
    return 0;
}
