/*
 * tool_eval_gate_gen.c - writes the models of tests/eval_gate.h as
 * backend-test case folders, for tests/eval_gate.sh.
 *
 *   tool_eval_gate_gen OUT_DIR [NODE_DIR [MAX]]
 *
 * writes OUT_DIR/NAME/model.onnx and OUT_DIR/NAME/test_data_set_0/
 * (input_0.pb, output_0.pb: float or int64 zeros [2,3]) for every case,
 * and, with NODE_DIR, OUT_DIR/node_CASE.onnx for up to MAX (default all)
 * of its node tests, each broken by eg_mutate_bytes. Prints one line per
 * model: "NAME RULE MODEL CASE_DIR" (a node test's CASE_DIR is its own
 * folder, whose data sets feed `run` and `test --model`). Nothing is
 * committed: the files are built on every run.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "eval/eval.h"
#include "eval_gate.h"
#include "io/save.h"

static int gen_write(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(buf, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

/* A file's bytes (malloc'ed), or NULL. */
static uint8_t *gen_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *b = realloc(buf, cap);
            if (!b)
                break;
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* A zero tensor of type dt [2,3] named `name` at path. */
static void gen_zeros(const char *path, const char *name, int32_t dt)
{
    int64_t d[2] = {2, 3};
    IrError err;
    EvValue *v = ev_tensor_new(dt, 2, d, &err);
    if (!v || ev_value_write(v, name, path, &err))
        eg_die(err.msg);
    ev_unref(v);
}

static void gen_case(const char *out, const EgCase *c)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", out, c->name);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    if (mkdir(dir, 0777) || mkdir(path, 0777))
        eg_die(dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    int32_t dt = IR_FLOAT;
    if (c->build) {
        IrModel *m = c->build();
        const IrValueInfo *x = m->graph->inputs.p[0];
        dt = x->type->elem_type;
        IrError err;
        if (save_model_file(m, path, NULL, &err))
            eg_die(err.msg);
        ir_model_free(m);
    } else if (gen_write(path, eg_no_graph_bytes, sizeof eg_no_graph_bytes)) {
        eg_die(path);
    }
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
    gen_zeros(path, "X", dt);
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
    gen_zeros(path, "Y", dt);
    printf("%s %s %s/model.onnx %s\n", c->name, c->rule, dir, dir);
}

static int gen_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Writes node-test models broken by eg_mutate_bytes; returns how many. */
static size_t gen_node_tests(const char *out, const char *node_dir, size_t max)
{
    DIR *d = opendir(node_dir);
    if (!d)
        return 0;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **p = realloc(names, (n + 1) * sizeof *names);
        if (!p || !(p[n] = strdup(e->d_name)))
            eg_die("out of memory");
        names = p;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, gen_cmp);
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096], dst[4096];
        snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir, names[i]);
        size_t len = 0, mlen = 0;
        uint8_t *buf = written < max ? gen_read(path, &len) : NULL;
        const char *rule = NULL;
        uint8_t *mut = buf ? eg_mutate_bytes(buf, len, (int)(written % 5), &mlen, &rule) : NULL;
        if (mut) {
            snprintf(dst, sizeof dst, "%s/node_%s.onnx", out, names[i]);
            if (gen_write(dst, mut, mlen))
                eg_die(dst);
            printf("node_%s %s %s %s/%s\n", names[i], rule, dst, node_dir, names[i]);
            written++;
        }
        free(mut);
        free(buf);
        free(names[i]);
    }
    free(names);
    return written;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: tool_eval_gate_gen OUT_DIR [NODE_DIR [MAX]]\n");
        return 2;
    }
    for (size_t i = 0; i < EG_N_CASES; i++)
        gen_case(argv[1], &eg_cases[i]);
    size_t max = argc == 4 ? (size_t)strtoull(argv[3], NULL, 10) : SIZE_MAX;
    if (argc >= 3)
        gen_node_tests(argv[1], argv[2], max);
    return 0;
}
