/*
 * test_hostile_model.c - semantically hostile models against the whole
 * library (prefix hm_).
 *
 * Every case of tests/hostile_models.h is built here, saved, and loaded
 * back from an exact-size buffer. A case whose `rule` is NULL must be
 * refused by the loader; any other must load and be refused by the checker
 * with that rule. Every message must be one line naming what the case
 * says (node, value, field). Then each loaded case goes through the
 * converter (to opset 17 and to opset 11), the optimizer and the evaluator:
 * they may refuse (one line) or succeed, but must not crash, leak (the
 * ASan build runs this too) or loop.
 *
 * The second half tests the loader's named limits (load.h): a model right
 * at each limit loads, one just past it is refused with a message naming
 * the limit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "hostile_models.h"
#include "ir/ir.h"
#include "io/load.h"
#include "passes/passes.h"
#include "io/save.h"
#include "t.h"
#include "wire.h"

/* The name the loads give the input: a word no case expects to find, so
 * that a message naming the file never passes for one naming the field. */
#define HM_WHAT "hostile.onnx"

static int hm_verbose;

static bool hm_one_line(const char *s)
{
    return s[0] && !strchr(s, '\n') && !strchr(s, '\r');
}

static bool hm_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return true;
    return false;
}

/* Whether msg names every '|'-separated word of `names`; *missing gets
 * the first one it lacks. */
static bool hm_names_all(const char *msg, const char *names, char *missing,
                         size_t cap)
{
    char words[256];
    snprintf(words, sizeof words, "%s", names);
    for (char *save = NULL, *w = strtok_r(words, "|", &save); w;
         w = strtok_r(NULL, "|", &save))
        if (!hm_contains(msg, w)) {
            snprintf(missing, cap, "%s", w);
            return false;
        }
    return true;
}

/* Loads `buf` from an exact-size copy, so that any over-read shows. */
static int hm_load(const uint8_t *buf, size_t len, const LoadOptions *opt,
                   IrModel **m, IrError *err)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, buf, len);
    memset(err, 0, sizeof *err);
    *m = NULL;
    int rc = load_model_buffer(copy, len, NULL, HM_WHAT, opt, m, err);
    free(copy);
    return rc;
}

/* A step that may refuse: rc 0, or -1 with a one-line message. */
static void hm_may_refuse(const char *name, const char *step, int rc,
                          const IrError *err)
{
    if (hm_verbose)
        printf("  [%s] %s: rc %d %s\n", name, step, rc, rc ? err->msg : "");
    T_CHECK(rc == 0 || (rc == -1 && hm_one_line(err->msg)),
            "%s: %s returned %d, message \"%s\"", name, step, rc, err->msg);
}

/* ---- the hostile cases ------------------------------------------------ */

static void hm_expect_load_refusal(const HmCase *c, const uint8_t *buf,
                                   size_t len)
{
    IrModel *m;
    IrError err;
    char missing[64] = "";
    int rc = hm_load(buf, len, NULL, &m, &err);
    if (hm_verbose)
        printf("  [%s] load: rc %d %s\n", c->name, rc, err.msg);
    T_CHECK(rc == -1 && m == NULL && hm_one_line(err.msg) &&
                hm_names_all(err.msg, c->names, missing, sizeof missing),
            "%s: the loader should refuse naming %s (lacks '%s'): rc %d, "
            "\"%s\"", c->name, c->names, missing, rc, err.msg);
    if (m)
        ir_model_free(m);
}

/* The checker refuses the loaded model with c->rule, naming c->names; all
 * its findings are one line. */
static void hm_expect_check_refusal(const HmCase *c, IrModel *m)
{
    ChkReport r;
    char missing[64] = "";
    size_t n = chk_model(m, &r);
    const char *first = chk_first_error(&r);
    size_t rl = strlen(c->rule);
    if (hm_verbose)
        printf("  [%s] check: %s\n", c->name, first ? first : "(valid)");
    T_CHECK(n > 0 && first && !strncmp(first, c->rule, rl) &&
                first[rl] == ':' &&
                hm_names_all(first, c->names, missing, sizeof missing),
            "%s: the checker should refuse with %s naming %s (lacks '%s'): %s",
            c->name, c->rule, c->names, missing, first ? first : "valid");
    for (size_t i = 0; i < r.n; i++)
        T_CHECK(hm_one_line(r.items[i].msg), "%s: a finding is not one line: "
                "%s", c->name, r.items[i].msg);
    chk_report_free(&r);
}

/* Zero-filled feeds for the float inputs of static shape; false when the
 * model wants something else (then it is not run). */
static bool hm_feeds(IrModel *m, EvValue ***in, size_t *n_in)
{
    IrValueInfo **feeds = NULL;
    size_t n = ev_model_feeds(m, &feeds);
    *in = mem_array(n + 1, sizeof **in);
    *n_in = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const IrType *t = feeds[i]->type;
        int64_t dims[8];
        ok = t && t->kind == IR_TYPE_TENSOR && t->elem_type == IR_FLOAT &&
             t->shape && t->shape->rank <= 8;
        for (size_t k = 0; ok && k < t->shape->rank; k++) {
            ok = t->shape->dims[k].kind == IR_DIM_VALUE &&
                 t->shape->dims[k].value >= 0 && t->shape->dims[k].value < 64;
            dims[k] = ok ? t->shape->dims[k].value : 0;
        }
        IrError err;
        if (ok && !((*in)[(*n_in)++] = ev_tensor_new(IR_FLOAT, t->shape->rank,
                                                      dims, &err)))
            ok = false;
    }
    free(feeds);
    return ok;
}

static void hm_run_eval(const HmCase *c, IrModel *m)
{
    EvValue **in, **out = NULL;
    size_t n_in, n_out = 0;
    if (hm_feeds(m, &in, &n_in)) {
        IrError err = {{0}};
        EvOptions o = {.seed = 1};
        int rc = ev_model_run(m, &o, n_in, in, &out, &n_out, &err);
        hm_may_refuse(c->name, "ev_model_run", rc, &err);
        for (size_t k = 0; k < n_out; k++)
            ev_unref(out[k]);
        free(out);
    }
    for (size_t k = 0; k < n_in; k++)
        ev_unref(in[k]);
    free(in);
}

/* Converts, optimizes and runs fresh loads of the case: each may refuse,
 * none may crash. */
static void hm_run_tools(const HmCase *c, const uint8_t *buf, size_t len)
{
    static const int64_t targets[] = {17, 11};
    IrModel *m;
    IrError err;
    for (size_t k = 0; k < 2; k++) {
        if (hm_load(buf, len, NULL, &m, &err))
            return;
        CvOptions o = {.opset = targets[k]};
        CvReport r = {0};
        char step[32];
        snprintf(step, sizeof step, "cv_convert to %lld", (long long)targets[k]);
        hm_may_refuse(c->name, step, cv_convert(m, &o, &r, &err), &err);
        cv_report_free(&r);
        ir_model_free(m);
    }
    if (hm_load(buf, len, NULL, &m, &err))
        return;
    OptStats st;
    memset(&err, 0, sizeof err);
    hm_may_refuse(c->name, "opt_optimize", opt_optimize(m, NULL, &st, &err), &err);
    opt_stats_free(&st);
    ir_model_free(m);
    if (hm_load(buf, len, NULL, &m, &err))
        return;
    hm_run_eval(c, m);
    ir_model_free(m);
}

static void hm_run_case(const HmCase *c)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    IrError err;
    if (hm_bytes(c, &buf, &len, &err)) {
        T_CHECK(0, "%s: cannot write the model: %s", c->name, err.msg);
        return;
    }
    if (!c->rule) {
        hm_expect_load_refusal(c, buf, len);
    } else {
        IrModel *m;
        int rc = hm_load(buf, len, NULL, &m, &err);
        T_CHECK(rc == 0, "%s: the loader refused a model it can hold: %s",
                c->name, err.msg);
        if (rc == 0) {
            hm_expect_check_refusal(c, m);
            ir_model_free(m);
            hm_run_tools(c, buf, len);
        }
    }
    free(buf);
}

/* The base every case breaks must itself be valid, or the cases prove
 * nothing. */
static void hm_check_base(void)
{
    IrModel *m = hm_base();
    ChkReport r;
    size_t n = chk_model(m, &r);
    T_CHECK(n == 0, "the base model is invalid: %s", chk_first_error(&r));
    chk_report_free(&r);
    ir_model_free(m);
}

/* ---- the loader's limits ------------------------------------------------ */

/* Saves m (and frees it), loads it back with opt: 0 or -1 with err. */
static int hm_roundtrip(IrModel *m, const LoadOptions *opt, IrError *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = save_model_buffer(m, &buf, &len, err);
    ir_model_free(m);
    if (rc) {
        T_CHECK(0, "cannot save a limit model: %s", err->msg);
        return -2;
    }
    IrModel *back;
    rc = hm_load(buf, len, opt, &back, err);
    free(buf);
    if (back)
        ir_model_free(back);
    return rc;
}

/* m_at (right at a limit) must load; m_past (one past it) must be refused
 * with a one-line message naming `limit`. Both models are freed. */
static void hm_limit_pair(const char *label, IrModel *m_at, IrModel *m_past,
                          const LoadOptions *opt, const char *limit)
{
    IrError err;
    int rc = hm_roundtrip(m_at, opt, &err);
    if (hm_verbose)
        printf("  [limit %s] at: rc %d %s\n", label, rc, rc ? err.msg : "");
    T_CHECK(rc == 0, "%s: a model right at %s was refused: %s", label, limit,
            err.msg);
    rc = hm_roundtrip(m_past, opt, &err);
    if (hm_verbose)
        printf("  [limit %s] past: rc %d %s\n", label, rc, err.msg);
    T_CHECK(rc == -1 && hm_one_line(err.msg) && strstr(err.msg, limit),
            "%s: a model one past %s: rc %d, \"%s\"", label, limit, rc, err.msg);
}

/* The base with one of relu0's names `len` bytes long (which: 0 node
 * name, 1 op_type, 2 domain, 3 the value A). */
static IrModel *hm_named(int which, size_t len)
{
    IrModel *m = hm_base();
    IrNode *n = hm_find(m->graph, "relu0");
    char *s = hm_repeat("noda"[which], len);
    char **field[] = {&n->name, &n->op_type, &n->domain};
    if (which < 3) {
        free(*field[which]);
        *field[which] = s;
        return m;
    }
    IrError err;
    T_CHECK(ir_value_rename(ir_graph_find_local(m->graph, "A"), s, &err) == 0,
            "rename: %s", err.msg);
    free(s);
    return m;
}

static void hm_limit_names(void)
{
    static const char *const what[] = {"node name", "op_type", "domain",
                                       "value name"};
    for (int k = 0; k < 4; k++)
        hm_limit_pair(what[k], hm_named(k, LOAD_MAX_NAME),
                      hm_named(k, (size_t)LOAD_MAX_NAME + 1), NULL,
                      "LOAD_MAX_NAME");
}

/* The base with W of rank `rank` ([6, 1, 1, ...]) or, when `input`, X
 * declared with that rank ([2, 3, 1, 1, ...]). */
static IrModel *hm_ranked(size_t rank, bool input)
{
    IrModel *m = hm_base();
    if (input) {
        IrValueInfo *vi = m->graph->inputs.p[0];
        ir_shape_free(vi->type->shape);
        vi->type->shape = ir_shape_new(rank);
        for (size_t k = 0; k < rank; k++) {
            vi->type->shape->dims[k].kind = IR_DIM_VALUE;
            vi->type->shape->dims[k].value = k == 0 ? 2 : k == 1 ? 3 : 1;
        }
        return m;
    }
    IrTensor *t = hm_init(m, "W");
    free(t->dims);
    t->ndims = rank;
    t->dims = mem_array(rank, sizeof *t->dims);
    for (size_t k = 0; k < rank; k++)
        t->dims[k] = k == 0 ? 6 : 1;
    return m;
}

static void hm_limit_rank(void)
{
    hm_limit_pair("initializer rank", hm_ranked(LOAD_MAX_RANK, false),
                  hm_ranked(LOAD_MAX_RANK + 1, false), NULL, "LOAD_MAX_RANK");
    hm_limit_pair("input shape rank", hm_ranked(LOAD_MAX_RANK, true),
                  hm_ranked(LOAD_MAX_RANK + 1, true), NULL, "LOAD_MAX_RANK");
}

/* The base plus an unused initializer (or, when `sparse`, a sparse
 * initializer of that dense shape) of `dtype` and dims [n] with no data:
 * the loader judges declared sizes, never payloads. */
static IrModel *hm_declared(int32_t dtype, int64_t n, bool sparse)
{
    IrModel *m = hm_base();
    if (!sparse) {
        hm_bare_init(m, "U", dtype, n);
        return m;
    }
    int64_t one = 1, zero = 0;
    hm_add_sparse(m, 1, &n, 1, &one, 1, &one, 1, &zero);
    return m;
}

static void hm_limit_tensor_bytes(void)
{
    int64_t bytes = (int64_t)LOAD_MAX_TENSOR_BYTES;
    hm_limit_pair("uint8 tensor bytes", hm_declared(IR_UINT8, bytes, false),
                  hm_declared(IR_UINT8, bytes + 1, false), NULL,
                  "LOAD_MAX_TENSOR_BYTES");
    hm_limit_pair("float tensor bytes", hm_declared(IR_FLOAT, bytes / 4, false),
                  hm_declared(IR_FLOAT, bytes / 4 + 1, false), NULL,
                  "LOAD_MAX_TENSOR_BYTES");
    hm_limit_pair("sparse dense bytes", hm_declared(IR_FLOAT, bytes / 4, true),
                  hm_declared(IR_FLOAT, bytes / 4 + 1, true), NULL,
                  "LOAD_MAX_TENSOR_BYTES");
    /* a product that wraps around to a small number is no small tensor */
    int64_t d[2] = {INT64_C(1) << 32, (INT64_C(1) << 32) + 1};
    IrModel *m = hm_base();
    hm_init_dims(m, 2, d);
    IrError err;
    int rc = hm_roundtrip(m, NULL, &err);
    T_CHECK(rc == -1 && hm_one_line(err.msg) && strstr(err.msg, "overflow"),
            "dims [2^32, 2^32 + 1]: rc %d \"%s\"", rc, err.msg);
}

/* A model of exactly `total` nodes in all scopes: the base (2), an If (1)
 * with a node in each branch (2), a function with one node (1), and a
 * chain of Relu nodes in the main graph for the rest. */
static IrModel *hm_nodes(size_t total)
{
    IrModel *m = hm_base();
    hm_add_if(m, hm_relu_graph(m->graph, "then", "X", "t_out"),
              hm_relu_graph(m->graph, "else", "X", "e_out"));
    hm_add_function(m, "F", NULL);
    const char *prev = "Y";
    char names[2][32];
    for (size_t k = 6; k < total; k++) {
        snprintf(names[k % 2], sizeof names[k % 2], "r%zu", k);
        hm_node(m->graph, "Relu", names[k % 2], 1, (const char *[]){prev}, 1,
                (const char *[]){names[k % 2]});
        prev = ir_graph_find_local(m->graph, names[k % 2])->name;
    }
    return m;
}

static void hm_limit_nodes(void)
{
    LoadOptions opt = {.max_nodes = 1000};
    hm_limit_pair("nodes (limit set to 1000)", hm_nodes(1000), hm_nodes(1001),
                  &opt, "LOAD_MAX_NODES");
    /* without the option, LOAD_MAX_NODES itself applies */
    IrError err;
    T_CHECK(hm_roundtrip(hm_nodes(1001), NULL, &err) == 0,
            "1001 nodes under the default limit: %s", err.msg);
}

int main(void)
{
    hm_verbose = getenv("HOSTILE_VERBOSE") != NULL;
    hm_check_base();
    for (size_t i = 0; i < HM_N_CASES; i++)
        hm_run_case(&hm_cases[i]);
    printf("hostile models: %zu cases\n", HM_N_CASES);
    hm_limit_names();
    hm_limit_rank();
    hm_limit_tensor_bytes();
    hm_limit_nodes();
    return t_done("test_hostile_model");
}
