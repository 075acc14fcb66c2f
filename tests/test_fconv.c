/*
 * test_fconv.c - float-to-integer conversions without undefined behaviour
 * (prefix fx_).
 *
 * The helpers of src/base/fconv.h at the edges of int64_t; then the row of
 * issue 18: SoftmaxCrossEntropyLoss with ignore_index INT64_MAX (and
 * 2^53 + 1, which double cannot hold either) converted to opset 8 must be
 * refused or give the outputs the original gives, a target at the ignored
 * index included; and DynamicQuantizeLinear of an infinite input, whose
 * zero point is NaN before it is converted.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "base/fconv.h"
#include "ir/ir.h"
#include "t.h"


static void fx_helpers(void)
{
    int64_t v = 42;
    T_CHECK(!fc_i64(NAN, &v) && v == 42, "NaN converted");
    T_CHECK(!fc_i64(9223372036854775808.0, &v), "2^63 converted");
    T_CHECK(!fc_i64((double)INT64_MAX, &v), "(double)INT64_MAX (2^63) converted");
    T_CHECK(fc_i64(-9223372036854775808.0, &v) && v == INT64_MIN, "-2^63: %lld",
            (long long)v);
    T_CHECK(fc_i64(-2.75, &v) && v == -2, "-2.75 gives %lld", (long long)v);
    T_CHECK(fc_i64_sat(1e300) == INT64_MAX && fc_i64_sat(-1e300) == INT64_MIN &&
            fc_i64_sat(NAN) == 0 && fc_i64_sat(INFINITY) == INT64_MAX,
            "saturation");
    T_CHECK(fc_clamp(NAN, 0, 255) == 0 && fc_clamp(300.5, 0, 255) == 255 &&
            fc_clamp(-3, 0, 255) == 0, "clamp");
    T_CHECK(fc_u64_sat(-1) == 0 && fc_u64_sat(1e30) == UINT64_MAX &&
            fc_u64_sat(NAN) == 0 && fc_u64_sat(3.9) == 3, "uint64 saturation");
}

/* ---- SoftmaxCrossEntropyLoss at opset 8 -------------------------------- */

/* loss = SoftmaxCrossEntropyLoss(scores float [3,4], labels int64 [3])
 * with ignore_index ig and reduction red, opset 13. */
static IrModel *fx_sce(int64_t ig, const char *red)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    IrGraph *g = m->graph;
    int64_t sd[2] = {3, 4}, ld = 3;
    ir_graph_add_input(g, "scores", ir_type_tensor(IR_FLOAT, 2, sd));
    ir_graph_add_input(g, "labels", ir_type_tensor(IR_INT64, 1, &ld));
    IrError err;
    IrNode *n = ir_node_new(g, NULL, "SoftmaxCrossEntropyLoss", "", "sce", 2,
                            (const char *[]){"scores", "labels"}, 1,
                            (const char *[]){"loss"}, &err);
    if (!n) {
        fprintf(stderr, "%s\n", err.msg);
        exit(2);
    }
    ir_node_set_attr(n, ir_attr_int("ignore_index", ig));
    ir_node_set_attr(n, ir_attr_string("reduction", red));
    IrType *lt = ir_type_tensor(IR_FLOAT, 0, NULL);
    if (!strcmp(red, "none")) {
        ir_type_free(lt);
        lt = ir_type_tensor(IR_FLOAT, 1, &ld);
    }
    ir_graph_add_output(g, ir_graph_find_local(g, "loss"), lt);
    return m;
}

/* Runs m on the fixed scores and `labels`; the output's floats into out
 * (n of them), or -1 with err. */
static int fx_run(IrModel *m, const int64_t *labels, float *out, size_t n, IrError *err)
{
    int64_t sd[2] = {3, 4}, ld = 3;
    EvValue *in[2] = {ev_tensor_new(IR_FLOAT, 2, sd, err),
                      ev_tensor_new(IR_INT64, 1, &ld, err)};
    if (!in[0] || !in[1])
        return -1;
    for (size_t k = 0; k < 12; k++)
        ((float *)in[0]->data)[k] = 0.25f * (float)k - 1.0f + (float)(k % 3);
    memcpy(in[1]->data, labels, 3 * sizeof *labels);
    EvValue **outs = NULL;
    size_t n_out = 0;
    int rc = ev_model_run(m, NULL, 2, in, &outs, &n_out, err);
    ev_unref(in[0]);
    ev_unref(in[1]);
    if (rc == 0 && (n_out != 1 || outs[0]->numel != n || outs[0]->dtype != IR_FLOAT)) {
        snprintf(err->msg, sizeof err->msg, "unexpected output");
        rc = -1;
    }
    if (rc == 0)
        memcpy(out, outs[0]->data, n * sizeof *out);
    for (size_t k = 0; k < n_out; k++)
        ev_unref(outs[k]);
    free(outs);
    return rc;
}

/* The model converted to opset 8 is refused (one line) or gives what the
 * original gives on labels that include the ignored index. */
static void fx_sce_case(int64_t ig, const char *red)
{
    int64_t labels[3] = {1, ig, 0};
    size_t n = strcmp(red, "none") ? 1 : 3;
    float want[3], got[3];
    IrError err = {{0}};
    IrModel *m = fx_sce(ig, red);
    ChkReport r;
    T_CHECK(chk_model(m, &r) == 0, "ignore_index %lld: the model is invalid: %s",
            (long long)ig, chk_first_error(&r));
    chk_report_free(&r);
    int rc = fx_run(m, labels, want, n, &err);
    T_CHECK(rc == 0, "ignore_index %lld %s: opset 13 run: %s", (long long)ig, red, err.msg);
    CvOptions o = {.opset = 8};
    CvReport rep = {0};
    if (rc == 0 && cv_convert(m, &o, &rep, &err) < 0) {
        T_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "refusal is not one line");
        printf("  ignore_index %lld %s: refused at opset 8: %s\n", (long long)ig, red,
               err.msg);
    } else if (rc == 0) {
        rc = fx_run(m, labels, got, n, &err);
        T_CHECK(rc == 0, "ignore_index %lld %s: opset 8 run: %s", (long long)ig, red,
                err.msg);
        for (size_t k = 0; rc == 0 && k < n; k++)
            T_CHECK(fabsf(got[k] - want[k]) <= 1e-6f * fabsf(want[k]) + 1e-7f,
                    "ignore_index %lld %s: output %zu is %.9g at opset 8, %.9g at 13",
                    (long long)ig, red, k, (double)got[k], (double)want[k]);
    }
    cv_report_free(&rep);
    ir_model_free(m);
}

static void fx_sce_cases(void)
{
    static const char *const reds[] = {"mean", "sum", "none"};
    for (int k = 0; k < 3; k++) {
        fx_sce_case(INT64_MAX, reds[k]);
        fx_sce_case((INT64_C(1) << 53) + 1, reds[k]);
        fx_sce_case(2, reds[k]);   /* an ordinary index converts and agrees */
    }
}

/* ---- DynamicQuantizeLinear of an infinite input ------------------------ */

static void fx_dql_inf(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    IrGraph *g = m->graph;
    int64_t d = 3;
    ir_graph_add_input(g, "x", ir_type_tensor(IR_FLOAT, 1, &d));
    IrError err = {{0}};
    if (!ir_node_new(g, NULL, "DynamicQuantizeLinear", "", "dql", 1, (const char *[]){"x"},
                     3, (const char *[]){"y", "s", "z"}, &err))
        exit(2);
    ir_graph_add_output(g, ir_graph_find_local(g, "z"), ir_type_tensor(IR_UINT8, 0, NULL));
    EvValue *in = ev_tensor_new(IR_FLOAT, 1, &d, &err);
    float xv[3] = {-INFINITY, 1.0f, INFINITY};
    memcpy(in->data, xv, sizeof xv);
    EvValue **outs = NULL;
    size_t n_out = 0;
    int rc = ev_model_run(m, NULL, 1, &in, &outs, &n_out, &err);
    /* the zero point of -inf/inf is NaN; it is defined as 0 */
    T_CHECK(rc != 0 || (n_out == 1 && *(uint8_t *)outs[0]->data == 0),
            "DynamicQuantizeLinear of infinities: zero point %d",
            rc ? -1 : *(uint8_t *)outs[0]->data);
    for (size_t k = 0; k < n_out; k++)
        ev_unref(outs[k]);
    free(outs);
    ev_unref(in);
    ir_model_free(m);
}

int main(void)
{
    fx_helpers();
    fx_sce_cases();
    fx_dql_inf();
    return t_done("test_fconv");
}
