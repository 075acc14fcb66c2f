/*
 * test_precision_auto.c - src/precision/precision_auto.c (--auto) on models built
 * here: where one node must stay float32 (a sum that overflows float16, an
 * Exp that does) --auto keeps exactly that node; where none must, none.
 * Every result passes the checker, is in topological order and has no
 * Cast reading a Cast, and is within the tolerance when evaluated again.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "analysis/infer.h"
#include "driver/job.h"
#include "passes_build.h"
#include "precision/precision_auto.h"
#include "t.h"
#include "ir/topo.h"
#include "precision_sane.h"

/* x + 1 is ~1 everywhere (random inputs are in [-1, 1)): the sum of
 * 100000 of them, ~1e5, is beyond float16's largest finite 65504; the
 * other nodes are harmless in float16. */
static const char *BIG_SUM =
    "opset 13\n"
    "input x float 1,100000\n"
    "init one float - 1.0\n"
    "init two float - 2.0\n"
    "a = Add x,one\n"
    "s = ReduceSum a keepdims=1\n"
    "h = Relu x\n"
    "y = Mul h,two\n"
    "output s\n"
    "output y\n";

/* exp(20 x) reaches e^20 ~ 4.9e8 (float16 overflows above ~11.1). */
static const char *BIG_EXP =
    "opset 13\n"
    "input x float 4,64\n"
    "init k float - 20.0\n"
    "init b float 64 rand\n"
    "m = Mul x,k\n"
    "e = Exp m\n"
    "t = Tanh x\n"
    "y = Add t,b\n"
    "output e\n"
    "output y\n";

/* Nothing here loses more than float16's rounding. */
static const char *TAME =
    "opset 13\n"
    "input x float 1,3,8,8\n"
    "init W float 4,3,3,3 rand\n"
    "init M float 8,8 rand\n"
    "c = Conv x,W pads=[1,1,1,1]\n"
    "r = Relu c\n"
    "mm = MatMul r,M\n"
    "y = Softmax mm\n"
    "output y\n";

/* tb_model_typed with the same seeded weights at each call. */
static IrModel *pa_model(const char *text)
{
    tb_seed = 0x9e3779b97f4a7c15ull;   /* the same weights at each call */
    return tb_model_typed(text);
}

/* The op of the node named `name` in m, or "". */
static const char *pa_op_of(const IrModel *m, const char *name)
{
    for (const IrNode *n = m->graph->first; n; n = n->next)
        if (n->name && !strcmp(n->name, name))
            return n->op_type;
    return "";
}

/* Runs --auto on text's model (keep_io: whether graph inputs and outputs
 * stay float32) and checks the result: sane, within tolerance, within
 * the evaluation bound, and keeping exactly the node of op `want` (NULL:
 * none). */
static void pa_case(const char *what, const char *text, bool keep_io, const char *want)
{
    IrModel *m = pa_model(text), *orig = pa_model(text);
    PcOptions o = {.dtype = IR_FLOAT16, .keep_io = keep_io};
    PaOptions a = {.vf = {.seed = 1}};
    PcReport r = {0};
    PaReport ar = {0};
    IrError err;
    int rc = pa_convert(m, &o, &a, &r, &ar, &err);
    T_CHECK(rc == 0, "%s: %s", what, err.msg);
    if (rc == 0) {
        ps_assert_sane(m, what);
        T_CHECK(ar.error <= 1, "%s: error %g times the tolerance", what, ar.error);
        T_CHECK(ar.evaluations <= pa_max_evals(ar.candidates), "%s: %zu evaluations for "
                "%zu nodes", what, ar.evaluations, ar.candidates);
        T_CHECK(ar.n_kept == (want ? 1u : 0u), "%s: %zu nodes kept (%s...)", what,
                ar.n_kept, ar.n_kept ? ar.kept[0] : "");
        if (want && ar.n_kept == 1) {
            T_CHECK(!strcmp(pa_op_of(m, ar.kept[0]), want), "%s: kept %s, a %s", what,
                    ar.kept[0], pa_op_of(m, ar.kept[0]));
            T_CHECK(ar.error_full > 1, "%s: fully converted within (%g)?", what,
                    ar.error_full);
            bool listed = false;
            for (size_t i = 0; i < r.n_kept; i++)
                listed |= !strcmp(r.kept[i].node, ar.kept[0]) &&
                          !strncmp(r.kept[i].reason, "--auto: error ", 14);
            T_CHECK(listed, "%s: the report does not list %s for --auto", what,
                    ar.kept[0]);
        }
        if (!want)
            T_CHECK(ar.evaluations == 2, "%s: %zu evaluations (original, full)", what,
                    ar.evaluations);
        /* every other node computes in float16 */
        T_CHECK(r.nodes_converted + ar.n_kept == ar.candidates || !want,
                "%s: %zu converted, %zu kept, %zu candidates", what, r.nodes_converted,
                ar.n_kept, ar.candidates);
        /* judged again, independently of the search: --verify's float16
         * tolerance holds on the seeded inputs */
        VfOptions vo = {.seed = 1};
        T_CHECK(vf_compare(orig, m, &vo, &err) == 0, "%s: verify: %s", what, err.msg);
    }
    pc_report_free(&r);
    pa_report_free(&ar);
    ir_model_free(m);
    ir_model_free(orig);
}

static void test_big_sum(void)
{
    pa_case("big sum", BIG_SUM, true, "ReduceSum");
}

static void test_big_exp(void)
{
    pa_case("big exp", BIG_EXP, true, "Exp");
}

static void test_tame(void)
{
    pa_case("tame", TAME, false, NULL);
    pa_case("tame keep-io", TAME, true, NULL);
}

/* Unnamed nodes are kept by their "#N" label (their position), the
 * label the report shows: --auto keeps the Exp, the second node. */
static void test_unnamed(void)
{
    IrModel *m = pa_model(BIG_EXP);
    for (IrNode *n = m->graph->first; n; n = n->next) {
        free(n->name);
        n->name = NULL;
    }
    PcOptions o = {.dtype = IR_FLOAT16, .keep_io = true};
    PaOptions a = {.vf = {.seed = 1}};
    PcReport r = {0};
    PaReport ar = {0};
    IrError err;
    int rc = pa_convert(m, &o, &a, &r, &ar, &err);
    T_CHECK(rc == 0, "unnamed: %s", err.msg);
    if (rc == 0) {
        T_CHECK(ar.n_kept == 1 && !strcmp(ar.kept[0], "#1"), "unnamed: kept %zu (%s)",
                ar.n_kept, ar.n_kept ? ar.kept[0] : "");
        bool listed = false;
        for (size_t i = 0; i < r.n_kept; i++)
            listed |= !strcmp(r.kept[i].node, "#1") && !strcmp(r.kept[i].op, "Exp") &&
                      !strncmp(r.kept[i].reason, "--auto: ", 8);
        T_CHECK(listed, "unnamed: the conversion did not keep #1 (the Exp)");
        T_CHECK(ar.error <= 1, "unnamed: error %g", ar.error);
        ps_assert_sane(m, "unnamed");
    }
    pc_report_free(&r);
    pa_report_free(&ar);
    ir_model_free(m);
}

/* Fully converted, the big sum's output is float16 and overflows
 * whatever is kept: --auto says so instead of writing it, naming the
 * output and what differs, not "inf times the tolerance" (issue 33). */
static void test_unreachable(void)
{
    IrModel *m = pa_model(BIG_SUM);
    PcOptions o = {.dtype = IR_FLOAT16};
    PaOptions a = {.vf = {.seed = 1}};
    PcReport r = {0};
    PaReport ar = {0};
    IrError err;
    T_CHECK(pa_convert(m, &o, &a, &r, &ar, &err) < 0 && strstr(err.msg, "output 's'") &&
            strstr(err.msg, "infinity at element 0") && !strstr(err.msg, "inf times"),
            "float16 output of 1e5: %s", err.msg);
    pc_report_free(&r);
    pa_report_free(&ar);
    ir_model_free(m);
}

/* A model the evaluator cannot run (here: over its step budget) is
 * refused with the evaluator's message. */
static void test_cannot_run(void)
{
    IrModel *m = pa_model(TAME);
    PcOptions o = {.dtype = IR_FLOAT16};
    PaOptions a = {.vf = {.seed = 1, .eval = {.max_steps = 1}}};
    PcReport r = {0};
    PaReport ar = {0};
    IrError err;
    T_CHECK(pa_convert(m, &o, &a, &r, &ar, &err) < 0 &&
            strstr(err.msg, "--auto: the original model does not run: "),
            "ran over the step budget (%s)", err.msg);
    pc_report_free(&r);
    pa_report_free(&ar);
    ir_model_free(m);
}

/* The bound: the original, the full conversion, a binary search and a
 * greedy pass. */
static void test_bound(void)
{
    T_CHECK(pa_max_evals(1) == 3 && pa_max_evals(2) == 5 && pa_max_evals(100) == 17,
            "bounds %zu %zu %zu", pa_max_evals(1), pa_max_evals(2), pa_max_evals(100));
}

int main(void)
{
    test_big_sum();
    test_big_exp();
    test_tame();
    test_unnamed();
    test_unreachable();
    test_cannot_run();
    test_bound();
    return t_done("test_precision_auto");
}
