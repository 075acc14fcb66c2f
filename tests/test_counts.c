/*
 * test_counts.c - allowed input/output counts beyond min..max (issue 19).
 *
 * BatchNormalization-1/6/7/9 allow 1 or 5 outputs and 14/15 allow 1 or 3
 * (onnx/defs/nn: .NumOutputs({1, 5}) / ({1, 3}); onnx's checker: "has output
 * size 3 not in allowed output sizes"). This test asks:
 *   - the operator table holds those sets and no count outside min..max;
 *   - chk_model refuses a 3-output BatchNormalization-9 (and a 2-output
 *     BatchNormalization-14), naming the node, the op and the allowed
 *     counts, and accepts 1 and 5 (trailing empty names count, as written);
 *   - `onnx-convert check` exits 1 on the 3-output model and names it;
 *   - the converter writes 5 outputs when BatchNormalization 14/15 in
 *     training mode goes down to 9, 7 and 6 (the added ones fresh and
 *     unread), 3 when 9 goes up to 14, and every written model passes the
 *     check;
 *   - the converter refuses to write a forbidden count (a 3-output
 *     BatchNormalization-9 taken down to 7 by the step that changes nothing,
 *     or a Dropout-13 with 3 outputs, 2 of them empty, taken to 12).
 * Models are built here through the IR API.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "ir/ir.h"
#include "schema/opschema.h"
#include "io/save.h"
#include "t.h"


static char tmpdir[256];
static char cli[1024];

static void die(const char *what)
{
    fprintf(stderr, "test_counts: cannot build the model: %s\n", what);
    exit(2);
}

/* A float tensor of n elements, all 0.5 (a valid variance too). */
static IrTensor *halves(const char *name, size_t rank, const int64_t *dims, size_t n)
{
    float *v = calloc(n ? n : 1, sizeof *v);
    uint8_t *buf = calloc(n ? n : 1, 4);
    for (size_t i = 0; i < n; i++) {
        v[i] = 0.5f;
        memcpy(buf + 4 * i, &v[i], 4); /* little-endian hosts only; checked in main */
    }
    IrTensor *t = ir_tensor_new(name, IR_FLOAT, rank, dims, buf, n * 4);
    free(buf);
    free(v);
    return t;
}

/* X [4,3,2] -> BatchNormalization(opset) -> outs[0..n_out) (NULL or "" =
 * left out); every named output is a graph output unless only Y is wanted
 * (`outputs_all` false). training_mode=1 is set at opset >= 14 when
 * `training`. */
static IrModel *bn_model(int opset, size_t n_out, const char *const *outs,
                         bool training, bool outputs_all)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", opset);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    IrGraph *g = m->graph;
    int64_t dx[3] = {4, 3, 2}, dc[1] = {3};
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 3, dx));
    const char *params[4] = {"scale", "B", "mean", "var"};
    for (size_t i = 0; i < 4; i++)
        if (!ir_graph_add_init(g, halves(params[i], 1, dc, 3)))
            die(params[i]);
    const char *in[5] = {"X", "scale", "B", "mean", "var"};
    const char *o[5];
    for (size_t i = 0; i < n_out; i++)
        o[i] = outs[i] ? outs[i] : "";
    IrError err;
    IrNode *n = ir_node_new(g, NULL, "BatchNormalization", "", "bn", 5, in, n_out, o, &err);
    if (!n)
        die(err.msg);
    if (training && opset >= 14)
        ir_node_set_attr(n, ir_attr_int("training_mode", 1));
    for (size_t i = 0; i < n_out; i++) {
        if (!o[i][0] || (i > 0 && !outputs_all))
            continue;
        const int64_t *d = i == 0 ? dx : dc;
        ir_graph_add_output(g, ir_graph_find_local(g, o[i]),
                            ir_type_tensor(IR_FLOAT, i == 0 ? 3 : 1, d));
    }
    return m;
}

/* X [4,3,2] -> Dropout(opset) -> Y and n_out - 1 left-out outputs. */
static IrModel *dropout_model(int opset, size_t n_out)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", opset);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    int64_t dx[3] = {4, 3, 2};
    ir_graph_add_input(m->graph, "X", ir_type_tensor(IR_FLOAT, 3, dx));
    const char *in[1] = {"X"}, *o[4] = {"Y", "", "", ""};
    IrError err;
    if (!ir_node_new(m->graph, NULL, "Dropout", "", "drop", 1, in, n_out, o, &err))
        die(err.msg);
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "Y"),
                        ir_type_tensor(IR_FLOAT, 3, dx));
    return m;
}

/* The one BatchNormalization node of m's main graph. */
static IrNode *bn_of(IrModel *m)
{
    for (IrNode *n = m->graph->first; n; n = n->next)
        if (!n->dead && n->op_type && !strcmp(n->op_type, "BatchNormalization"))
            return n;
    return NULL;
}

/* ---- the table ------------------------------------------------------ */

static void test_table(void)
{
    static const struct { int since; int ok[2]; int bad[3]; } bn[] = {
        {1, {1, 5}, {2, 3, 4}}, {6, {1, 5}, {2, 3, 4}}, {7, {1, 5}, {2, 3, 4}},
        {9, {1, 5}, {2, 3, 4}}, {14, {1, 3}, {2, 0, 4}}, {15, {1, 3}, {2, 0, 4}}};
    for (size_t i = 0; i < sizeof bn / sizeof bn[0]; i++) {
        const OsSchema *s = os_find("", "BatchNormalization", bn[i].since);
        T_CHECK(s && s->since == bn[i].since, "BatchNormalization-%d is in the table",
                bn[i].since);
        if (!s)
            continue;
        for (size_t k = 0; k < 2; k++)
            T_CHECK(os_out_count_ok(s, (size_t)bn[i].ok[k]),
                    "BatchNormalization-%d allows %d outputs", bn[i].since, bn[i].ok[k]);
        for (size_t k = 0; k < 3; k++)
            T_CHECK(!os_out_count_ok(s, (size_t)bn[i].bad[k]),
                    "BatchNormalization-%d refuses %d outputs", bn[i].since, bn[i].bad[k]);
        T_CHECK(os_in_count_ok(s, 5) && !os_in_count_ok(s, 4),
                "BatchNormalization-%d takes 5 inputs", bn[i].since);
    }
    char buf[64];
    const OsSchema *s9 = os_find("", "BatchNormalization", 9);
    T_CHECK(s9 && !strcmp(os_counts_str(s9, true, buf, sizeof buf), "1 or 5"),
            "BatchNormalization-9's outputs read \"1 or 5\" (got \"%s\")", s9 ? buf : "?");
    const OsSchema *dr = os_find("", "Dropout", 13);
    T_CHECK(dr && dr->out_counts == 0 && os_out_count_ok(dr, 2) && os_out_count_ok(dr, 1) &&
            !os_out_count_ok(dr, 3), "Dropout-13 allows 1..2 outputs, no set");
    /* every listed count lies within min..max, and only BatchNormalization
     * has sets (onnx/defs has no other NumInputs/NumOutputs({...})) */
    size_t with_sets = 0;
    for (size_t i = 0; i < os_table_n; i++) {
        const OsSchema *s = &os_table[i];
        if (!s->in_counts && !s->out_counts)
            continue;
        with_sets++;
        T_CHECK(!strcmp(s->op, "BatchNormalization"), "%s-%d has a count set", s->op,
                s->since);
        for (int k = 0; k < 32; k++)
            if (s->out_counts >> k & 1u)
                T_CHECK(k >= s->min_out && (s->max_out < 0 || k <= s->max_out),
                        "%s-%d: allowed count %d within min..max", s->op, s->since, k);
    }
    T_CHECK(with_sets == 6, "6 versions with count sets (got %zu)", with_sets);
}

/* ---- check ---------------------------------------------------------- */

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs `onnx-convert check PATH`; returns its exit status, stderr in err. */
static int run_check(const char *path, char *err, size_t cap)
{
    char cmd[4096], ef[512];
    snprintf(ef, sizeof ef, "%s/stderr.txt", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' check '%s' >/dev/null 2>'%s'", cli, path, ef);
    int st = system(cmd);
    slurp(ef, err, cap);
    unlink(ef);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* chk_model on a BatchNormalization-`opset` node with the given outputs:
 * want_ok, or an arity error naming the node, op-version and `allowed`. */
static void check_case(int opset, size_t n_out, const char *const *outs, bool want_ok,
                       const char *allowed)
{
    IrModel *m = bn_model(opset, n_out, outs, false, true);
    ChkReport r;
    size_t bad = chk_model(m, &r);
    const char *e = chk_first_error(&r);
    if (want_ok) {
        T_CHECK(bad == 0, "BatchNormalization-%d with %zu outputs is valid (got: %s)", opset,
                n_out, e ? e : "");
    } else {
        char op[64], cnt[32];
        snprintf(op, sizeof op, "(BatchNormalization-%d)", opset);
        snprintf(cnt, sizeof cnt, "%zu outputs", n_out);
        T_CHECK(bad > 0 && e && strstr(e, "arity:") && strstr(e, "'bn'") && strstr(e, op) &&
                    strstr(e, cnt) && strstr(e, allowed),
                "BatchNormalization-%d with %zu outputs is refused naming node, op and "
                "'%s' (got: %s)", opset, n_out, allowed, e ? e : "no error");
    }
    chk_report_free(&r);
    ir_model_free(m);
}

static void test_check(void)
{
    const char *five[5] = {"Y", "m", "v", "sm", "sv"};
    check_case(9, 3, five, false, "1 or 5");
    check_case(9, 1, five, true, NULL);
    check_case(9, 5, five, true, NULL);
    check_case(7, 3, five, false, "1 or 5");
    check_case(6, 4, five, false, "1 or 5");
    check_case(14, 2, five, false, "1 or 3");
    check_case(14, 3, five, true, NULL);
    /* trailing empty names count, as onnx's checker counts them */
    const char *y_empty[5] = {"Y", NULL, NULL, NULL, NULL};
    check_case(9, 5, y_empty, true, NULL);
    check_case(9, 3, y_empty, false, "1 or 5");
    const char *stats_empty[5] = {"Y", "m", "v", NULL, NULL};
    check_case(9, 5, stats_empty, true, NULL);

    /* the command line */
    IrModel *m = bn_model(9, 3, five, false, true);
    char path[512], err[4096];
    snprintf(path, sizeof path, "%s/bn9_3.onnx", tmpdir);
    IrError e;
    if (save_model_file(m, path, NULL, &e) != 0)
        die(e.msg);
    ir_model_free(m);
    int st = run_check(path, err, sizeof err);
    T_CHECK(st == 1 && strstr(err, "'bn'") && strstr(err, "BatchNormalization-9") &&
                strstr(err, "3 outputs") && strstr(err, "1 or 5"),
            "`check` exits 1 naming the 3-output BatchNormalization-9 (status %d: %s)", st,
            err);
    unlink(path);
}

/* ---- convert -------------------------------------------------------- */

/* Converts m to `to`; returns 0 or -1 with the message in msg. */
static int convert_to(IrModel *m, int to, char *msg, size_t cap, const char **reason)
{
    CvOptions o = {.opset = to};
    CvReport r;
    memset(&r, 0, sizeof r);
    IrError err;
    int rc = cv_convert(m, &o, &r, &err);
    snprintf(msg, cap, "%s", rc ? err.msg : "");
    if (reason)
        *reason = r.reason;
    cv_report_free(&r);
    return rc;
}

/* BatchNormalization at `from` in training mode with outputs outs[0..n)
 * converted to `to`: the node must have want_out outputs, the first
 * `kept` the original names, the rest named, fresh and unread, and the
 * model must pass the check. */
static void convert_case(int from, size_t n, const char *const *outs, bool outputs_all,
                         int to, size_t want_out, size_t kept)
{
    IrModel *m = bn_model(from, n, outs, true, outputs_all);
    char msg[1024];
    int rc = convert_to(m, to, msg, sizeof msg, NULL);
    T_CHECK(rc == 0, "BatchNormalization %d -> %d converts (%s)", from, to, msg);
    IrNode *k = rc == 0 ? bn_of(m) : NULL;
    T_CHECK(k && k->n_out == want_out, "BatchNormalization %d -> %d (%zu outputs) writes %zu "
            "outputs (got %zu)", from, to, n, want_out, k ? k->n_out : 0);
    T_CHECK(k && k->name && !strcmp(k->name, "bn"), "BatchNormalization %d -> %d keeps the "
            "node's name 'bn' (got '%s')", from, to, k && k->name ? k->name : "");
    for (size_t i = 0; k && i < k->n_out && i < want_out; i++) {
        IrValue *v = k->out[i];
        if (i < kept) {
            T_CHECK(v && outs[i] && !strcmp(v->name, outs[i]),
                    "%d -> %d: output %zu keeps its name '%s'", from, to, i,
                    outs[i] ? outs[i] : "");
        } else {
            bool fresh = v && v->name[0];
            for (size_t j = 0; fresh && j < n; j++)
                if (outs[j] && !strcmp(v->name, outs[j]))
                    fresh = false;
            T_CHECK(fresh && v->n_uses == 0 && !ir_value_is_graph_output(v),
                    "%d -> %d: output %zu is fresh and unread ('%s')", from, to, i,
                    v ? v->name : "(left out)");
        }
    }
    if (rc == 0) {
        ChkReport r;
        size_t bad = chk_model(m, &r);
        T_CHECK(bad == 0, "%d -> %d: the written model passes the check (%s)", from, to,
                chk_first_error(&r) ? chk_first_error(&r) : "");
        chk_report_free(&r);
    }
    ir_model_free(m);
}

static void test_convert(void)
{
    const char *running[3] = {"Y", "running_mean", "running_var"};
    const char *y_only[1] = {"Y"};
    int downs[3] = {9, 7, 6};
    for (size_t i = 0; i < 3; i++) {
        convert_case(15, 3, running, true, downs[i], 5, 3);
        convert_case(14, 3, running, true, downs[i], 5, 3);
        convert_case(14, 1, y_only, true, downs[i], 5, 1);
    }
    /* 9 -> 14: the unread saved statistics go, 3 outputs stay (written as
     * 5 with empty names or named) */
    const char *five[5] = {"Y", "m", "v", "sm", "sv"};
    convert_case(9, 5, five, false, 14, 3, 3);
    const char *stats[5] = {"Y", "m", "v", NULL, NULL};
    convert_case(9, 5, stats, true, 14, 3, 3);
    convert_case(9, 5, stats, true, 15, 3, 3);

    /* no adapter writes a forbidden count silently: 9 -> 8 changes nothing
     * about BatchNormalization, yet a 3-output node is refused at 7 */
    IrModel *m = bn_model(9, 3, five, false, true);
    char msg[1024];
    const char *reason = NULL;
    int rc = convert_to(m, 7, msg, sizeof msg, &reason);
    T_CHECK(rc != 0 && reason && !strcmp(reason, "arity") && strstr(msg, "'bn'") &&
                strstr(msg, "BatchNormalization-7") && strstr(msg, "1 or 5"),
            "a 3-output BatchNormalization-9 is refused at 7 (rc %d, %s: %s)", rc,
            reason ? reason : "-", msg);
    ir_model_free(m);

    /* nor one with more outputs than the maximum, trailing empty names
     * included: 3 outputs of Dropout-13 (at most 2), through the
     * compatible step 13 -> 12 */
    m = dropout_model(13, 3);
    rc = convert_to(m, 12, msg, sizeof msg, &reason);
    T_CHECK(rc != 0 && reason && !strcmp(reason, "arity") &&
                strstr(msg, "Dropout-12 has at most 2 outputs, not 3"),
            "a Dropout-13 with 3 outputs (2 of them empty) is refused at 12 (rc %d, %s: %s)",
            rc, reason ? reason : "-", msg);
    ir_model_free(m);
    m = dropout_model(13, 2);
    rc = convert_to(m, 12, msg, sizeof msg, &reason);
    T_CHECK(rc == 0, "a Dropout-13 with 2 outputs (1 empty) converts to 12 (%s)", msg);
    ir_model_free(m);
}

int main(int argc, char **argv)
{
    (void)argc;
    uint32_t one = 1;
    uint8_t lo;
    memcpy(&lo, &one, 1);
    if (lo != 1) {
        T_SKIP("test_counts: a big-endian host (the test writes float bytes as they are)");
        return t_done("test_counts");
    }
    snprintf(cli, sizeof cli, "%s", argv[0]);
    char *slash = strrchr(cli, '/');
    if (slash)
        *slash = '\0';
    slash = strrchr(cli, '/');
    if (slash)
        snprintf(slash, sizeof cli - (size_t)(slash - cli), "/onnx-convert");
    snprintf(tmpdir, sizeof tmpdir, "%s/oc-counts-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_table();
    test_check();
    test_convert();
    rmdir(tmpdir);
    return t_done("test_counts");
}
