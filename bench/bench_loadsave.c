/*
 * bench_loadsave - load and save time against model size (not a test).
 *
 * Builds models through the IR API at growing sizes, of two shapes: few
 * large weight tensors (bytes dominate) and long chains of small nodes
 * (structure dominates), saves each, then times load and save and prints
 * MB/s, so that a non-linear step shows as a falling rate.
 * Usage: bench_loadsave [--quick] [DIR]   (default /tmp)
 * --quick: one small model of each shape (1 MB, 1000 nodes), so that
 * `make check` runs it in a moment (tests/bench_smoke.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "io/load.h"
#include "io/save.h"

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A model whose payload is `mb` megabytes of float weights in 4 tensors. */
static IrModel *bench_weights_model(size_t mb)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    int64_t shape[1] = {256};
    ir_graph_add_input(m->graph, "x", ir_type_tensor(1, 1, shape));
    size_t per = mb * 1024 * 1024 / 4;
    float *buf = malloc(per);
    for (size_t i = 0; i < per / 4; i++)
        buf[i] = (float)(i % 977) * 0.001f;
    for (int k = 0; k < 4; k++) {
        char w[16], y[16];
        snprintf(w, sizeof w, "w%d", k);
        snprintf(y, sizeof y, "y%d", k);
        int64_t dims[2] = {(int64_t)(per / 4 / 256), 256};
        ir_graph_add_init(m->graph, ir_tensor_new(w, 1, 2, dims, buf, per));
        const char *in[2] = {"x", w};
        const char *out[1] = {y};
        IrNode *n = ir_node_new(m->graph, NULL, "Add", "", y, 2, in, 1, out,
                                NULL);
        ir_graph_add_output(m->graph, n->out[0], NULL);
    }
    free(buf);
    return m;
}

/* A chain of `n` Relu nodes. */
static IrModel *bench_nodes_model(size_t n)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    int64_t shape[1] = {1};
    ir_graph_add_input(m->graph, "v0", ir_type_tensor(1, 1, shape));
    char a[32], b[32], name[32];
    IrNode *last = NULL;
    for (size_t i = 0; i < n; i++) {
        snprintf(a, sizeof a, "v%zu", i);
        snprintf(b, sizeof b, "v%zu", i + 1);
        snprintf(name, sizeof name, "relu_%zu", i);
        const char *in[1] = {a};
        const char *out[1] = {b};
        last = ir_node_new(m->graph, NULL, "Relu", "", name, 1, in, 1, out,
                           NULL);
    }
    ir_graph_add_output(m->graph, last->out[0], ir_type_tensor(1, 1, shape));
    return m;
}

/* Saves m to path, then times one load and one save of it. */
static void bench_one(const char *label, IrModel *m, const char *path)
{
    IrError err;
    if (save_model_file(m, path, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    ir_model_free(m);
    double t0 = bench_now();
    IrModel *back;
    if (load_model_file(path, NULL, &back, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    double t1 = bench_now();
    if (save_model_file(back, path, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    double t2 = bench_now();
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    double mb = (double)ftell(f) / 1e6;
    fclose(f);
    printf("%-16s %8.1f MB  load %6.3f s (%6.0f MB/s)  save %6.3f s (%6.0f MB/s)\n",
           label, mb, t1 - t0, mb / (t1 - t0), t2 - t1, mb / (t2 - t1));
    ir_model_free(back);
    remove(path);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    const char *dir = argc > 1 + quick ? argv[1 + quick] : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_loadsave.onnx", dir);
    size_t mbs[] = {25, 50, 100, 200}, quick_mbs[] = {1};
    size_t ns[] = {100000, 200000, 400000}, quick_ns[] = {1000};
    size_t n_mbs = quick ? 1 : 4, n_ns = quick ? 1 : 3;
    size_t *mb_at = quick ? quick_mbs : mbs, *n_at = quick ? quick_ns : ns;
    for (size_t i = 0; i < n_mbs; i++) {
        char label[32];
        snprintf(label, sizeof label, "weights %zuMB", mb_at[i]);
        bench_one(label, bench_weights_model(mb_at[i]), path);
    }
    for (size_t i = 0; i < n_ns; i++) {
        char label[32];
        snprintf(label, sizeof label, "nodes %zuk", n_at[i] / 1000);
        bench_one(label, bench_nodes_model(n_at[i]), path);
    }
    return 0;
}
