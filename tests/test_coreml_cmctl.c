/*
 * test_coreml_cmctl.c - the Core ML lowerings of Loop (while_loop, an If
 * nested in its body, scan outputs, M or cond left out) and of the index
 * gaps (scatters with negative indices, NonZero, OneHot, Trilu, Size,
 * CastLike, Hardmax, ReverseSequence), on small cases that
 * tests/coreml_cmctl_models.py writes into a temporary folder with the
 * expected outputs computed by numpy.
 *
 * Per case: the export holds the MIL ops the case names (the lowering
 * path meant, e.g. Trilu's mask or band_part), conforms to the MIL op
 * table (mck_model), goes through the package writer and reader, and the
 * import evaluates to numpy's outputs; or the export refuses with the
 * case's reason, naming node and target. Skipped when /usr/bin/python3
 * lacks onnx or numpy.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "coreml/coreml.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "io/load.h"
#include "coreml/milcheck.h"
#include "coreml/mlpackage.h"
#include "t.h"

/* Whether block b (or a block nested in it) holds an op of `type`. */
static bool has_op(const MilBlock *b, const char *type)
{
    for (size_t i = 0; i < b->n_ops; i++) {
        if (!strcmp(b->ops[i]->type, type))
            return true;
        for (size_t k = 0; k < b->ops[i]->n_blocks; k++)
            if (has_op(b->ops[i]->blocks[k], type))
                return true;
    }
    return false;
}

/* The first line of file dir/name into buf; false when absent. */
static bool read_line(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return ok;
}

static void check_refusal(const char *name, IrModel *m, const char *why)
{
    MilModel *mm = NULL;
    CmOptions o = {.target = -1};
    IrError err = {0};
    int rc = cm_export(m, &o, &mm, NULL, &err);
    T_CHECK(rc < 0 && strstr(err.msg, why) && strstr(err.msg, "node '") &&
                strstr(err.msg, "target"),
            "%s: expected a refusal naming node, target and '%s'; got rc %d: %s", name, why, rc,
            err.msg);
    mil_model_free(mm);
}

/* Export, the ops meant, conformance, package write + read, import, and
 * the imported model against numpy's outputs. */
static void check_case(const char *root, const char *name, const char *dir, IrModel *m,
                       const char *ops)
{
    MilModel *mm = NULL, *back = NULL;
    CmOptions o = {.target = -1};
    CmReport rep;
    IrError err = {0};
    if (cm_export(m, &o, &mm, &rep, &err) < 0) {
        T_CHECK(0, "%s: export: %s", name, err.msg);
        return;
    }
    char list[512];
    snprintf(list, sizeof list, "%s", ops);
    for (char *save = NULL, *op = strtok_r(list, " ", &save); op;
         op = strtok_r(NULL, " ", &save))
        T_CHECK(has_op(mm->fn[0]->block, op), "%s: the export holds no MIL op '%s'", name, op);
    T_CHECK(mck_model(mm, &err) == 0, "%s: the export does not conform: %s", name, err.msg);
    char pkg[1200];
    snprintf(pkg, sizeof pkg, "%s/%s.mlpackage", root, name);
    int rc = mlp_write(mm, pkg, NULL, &err);
    T_CHECK(rc == 0, "%s: write: %s", name, err.msg);
    if (rc == 0) {
        rc = mlp_read(pkg, &back, &err);
        T_CHECK(rc == 0, "%s: read back: %s", name, err.msg);
    }
    IrModel *rt = NULL;
    if (rc == 0) {
        rc = cm_import(back, &rt, &err);
        T_CHECK(rc == 0, "%s: import: %s", name, err.msg);
    }
    if (rc == 0) {
        rc = chk_require(rt, "round trip", &err);
        T_CHECK(rc == 0, "%s: the import does not check: %s", name, err.msg);
    }
    if (rc == 0) {
        EvTestResult res = {0};
        rc = ev_test_case_model(dir, rt, 1e-5, 1e-5, &res, &err);
        T_CHECK(rc == 0 && res.sets == 1 && res.passed == 1,
                "%s: the round trip differs from numpy: %s", name, err.msg);
    }
    ir_model_free(rt);
    mil_model_free(back);
    mil_model_free(mm);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_cases(const char *root)
{
    DIR *d = opendir(root);
    if (!d) {
        T_CHECK(0, "no case folder %s", root);
        return;
    }
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    T_CHECK(n >= 16, "only %zu cases written", n);
    for (size_t i = 0; i < n; i++) {
        char dir[1100], path[1200], line[512];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        snprintf(path, sizeof path, "%s/model.onnx", dir);
        IrModel *m = NULL;
        IrError err = {0};
        if (load_model_file(path, NULL, &m, &err) < 0) {
            T_CHECK(0, "%s: load: %s", names[i], err.msg);
        } else if (read_line(dir, "refuse", line, sizeof line)) {
            check_refusal(names[i], m, line);
        } else {
            if (!read_line(dir, "mil", line, sizeof line))
                line[0] = 0;
            check_case(root, names[i], dir, m, line);
        }
        ir_model_free(m);
        free(names[i]);
    }
}

/* A block taking one fp32 [2] loop variable named `in`. */
static MilBlock *loop_block(const char *in)
{
    MilBlock *b = mil_block_new();
    b->in = calloc(1, sizeof *b->in);
    b->n_in = 1;
    b->in[0].name = strdup(in);
    b->in[0].type = mil_type(MIL_FP32, 1, (int64_t[]){2});
    return b;
}

/* Malformed while_loops (a block missing, a cond block returning two
 * values, a body returning none) are refused by the import in one line
 * naming the op, never crash. */
static void test_bad_while(void)
{
    for (int v = 0; v < 3; v++) {
        MilModel *mm = mil_model_new(&mil_targets[0]);
        MilFunction *f = mil_function_add(mm, "main", mil_targets[0].opset);
        MilType t = mil_type(MIL_FP32, 1, (int64_t[]){2});
        mil_function_input(f, "x", &t);
        MilOp *w = mil_op_add(f->block, "while_loop", "w");
        mil_op_in(w, "loop_vars", "x");
        mil_op_out(w, "y", &t);
        mil_type_clear(&t);
        MilBlock *cb = loop_block("v"), *bb = v == 0 ? NULL : loop_block("v");
        mil_block_output(cb, "v");
        if (v == 1)
            mil_block_output(cb, "v");
        if (bb && v != 2)
            mil_block_output(bb, "v");
        w->n_blocks = bb ? 2 : 1;
        w->blocks = calloc(2, sizeof *w->blocks);
        w->blocks[0] = cb;
        w->blocks[1] = bb;
        mil_block_output(f->block, "y");
        IrModel *rt = NULL;
        IrError err = {0};
        int rc = cm_import(mm, &rt, &err);
        T_CHECK(rc < 0 && strstr(err.msg, "while_loop") && !strchr(err.msg, '\n'),
                "malformed while_loop %d: rc %d: %s", v, rc, err.msg);
        ir_model_free(rt);
        mil_model_free(mm);
    }
}

int main(void)
{
    test_bad_while();
    inf_init();
    char root[] = "/tmp/oc_cmctl.XXXXXX";
    if (!mkdtemp(root)) {
        T_CHECK(0, "mkdtemp failed");
        return t_done("test_coreml_cmctl");
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/coreml_cmctl_models.py %s/cases", root);
    int rc = system(cmd);
    char cases[300];
    snprintf(cases, sizeof cases, "%s/cases", root);
    if (rc != 0)
        T_SKIP("the cases: /usr/bin/python3 with onnx and numpy is needed (exit %d)", rc);
    else
        run_cases(cases);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return t_done("test_coreml_cmctl");
}
