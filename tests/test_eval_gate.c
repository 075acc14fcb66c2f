/*
 * test_eval_gate.c - the evaluator runs only what the checker accepts.
 *
 * Through the library: oc_evaluate refuses every model of
 * tests/eval_gate.h with the checker's rule and still runs a valid one.
 * Through the evaluator's own entry points, bypassing the gate (as a
 * caller inside the project could): a model with no graph, SplitToSequence
 * with no output, and single nodes the checker would refuse end in an
 * error, not a crash or a use-after-free. Constant folding leaves a node
 * the checker would refuse alone.
 */
#include <stdlib.h>
#include <string.h>

#include "onnxconvert.h"
#include "eval/eval.h"
#include "eval_gate.h"
#include "io/load.h"
#include "io/save.h"
#include "t.h"
#include "passes/passes.h"

/* The file bytes of case c (malloc'ed). */
static uint8_t *eg_case_bytes(const EgCase *c, size_t *len)
{
    if (!c->build) {
        uint8_t *b = malloc(sizeof eg_no_graph_bytes);
        if (!b)
            eg_die("out of memory");
        memcpy(b, eg_no_graph_bytes, sizeof eg_no_graph_bytes);
        *len = sizeof eg_no_graph_bytes;
        return b;
    }
    IrModel *m = c->build();
    uint8_t *buf;
    IrError err;
    if (save_model_buffer(m, &buf, len, &err))
        eg_die(err.msg);
    ir_model_free(m);
    return buf;
}

/* oc_evaluate on zero inputs: -1 naming the rule for every case. */
static void test_library_refuses(void)
{
    for (size_t i = 0; i < EG_N_CASES; i++) {
        const EgCase *c = &eg_cases[i];
        size_t len;
        uint8_t *buf = eg_case_bytes(c, &len);
        oc_model *m;
        T_CHECK(oc_load_memory(buf, len, &m) == 0, "%s: load: %s", c->name, oc_error());
        free(buf);
        if (!m)
            continue;
        oc_tensor *in = NULL, *out = NULL;
        size_t n_in = 0, n_out = 0;
        if (c->build)
            T_CHECK(oc_model_inputs(m, &in, &n_in) == 0, "%s: inputs: %s", c->name,
                    oc_error());
        int rc = oc_evaluate(m, in, n_in, &out, &n_out);
        T_CHECK(rc == -1 && out == NULL && n_out == 0, "%s: oc_evaluate ran a model the "
                "checker refuses (rc %d)", c->name, rc);
        /* no graph is refused before the checker runs, by name */
        const char *want = c->build ? c->rule : "no graph";
        T_CHECK(rc == 0 || strstr(oc_error(), want), "%s: '%s' does not say %s", c->name,
                oc_error(), want);
        T_CHECK(strchr(oc_error(), '\n') == NULL, "%s: message not one line", c->name);
        oc_tensors_free(in, n_in);
        oc_tensors_free(out, n_out);
        oc_model_free(m);
    }
}

/* A valid model still runs, also after an optimization changed it. */
static void test_library_runs_valid(void)
{
    IrModel *ir = eg_unary("Relu", 1, IR_FLOAT);
    uint8_t *buf;
    size_t len;
    IrError err;
    if (save_model_buffer(ir, &buf, &len, &err))
        eg_die(err.msg);
    ir_model_free(ir);
    oc_model *m;
    T_CHECK(oc_load_memory(buf, len, &m) == 0, "load: %s", oc_error());
    free(buf);
    for (int round = 0; m && round < 2; round++) {
        oc_tensor *in = NULL, *out = NULL;
        size_t n_in = 0, n_out = 0;
        T_CHECK(oc_model_inputs(m, &in, &n_in) == 0 && n_in == 1, "inputs: %s", oc_error());
        if (n_in == 1)
            ((float *)in[0].data)[1] = -2.0f;
        int rc = oc_evaluate(m, in, n_in, &out, &n_out);
        T_CHECK(rc == 0 && n_out == 1, "round %d: a valid model does not run: %s", round,
                oc_error());
        if (rc == 0 && n_out == 1)
            T_CHECK(((float *)out[0].data)[1] == 0.0f, "Relu(-2) is not 0");
        oc_tensors_free(in, n_in);
        oc_tensors_free(out, n_out);
        T_CHECK(round || oc_optimize(m, NULL) == 0, "optimize: %s", oc_error());
    }
    oc_model_free(m);
}

/* The 8-byte model with no graph, straight into the evaluator. */
static void test_no_graph(void)
{
    IrModel *m;
    IrError err;
    T_CHECK(load_model_buffer(eg_no_graph_bytes, sizeof eg_no_graph_bytes, NULL, "no_graph",
                              NULL, &m, &err) == 0, "load: %s", err.msg);
    if (!m)
        return;
    T_CHECK(m->graph == NULL, "the model has a graph");
    IrValueInfo **feeds = NULL;
    T_CHECK(ev_model_feeds(m, &feeds) == 0, "feeds of no graph");
    free(feeds);
    EvValue **in = NULL, **out = NULL;
    size_t n_in = 0, n_out = 0;
    T_CHECK(ev_inputs_read(m, "/nonexistent", &in, &n_in, &err) == -1, "inputs of no graph");
    T_CHECK(ev_model_run(m, NULL, 0, NULL, &out, &n_out, &err) == -1, "ran no graph");
    ir_model_free(m);
}

static EvValue *eg_zeros(void)
{
    int64_t d[2] = {2, 3};
    IrError err;
    EvValue *v = ev_tensor_new(IR_FLOAT, 2, d, &err);
    if (!v)
        eg_die(err.msg);
    return v;
}

/* SplitToSequence with no output, bypassing the gate: the kernel runs
 * and its sequence goes nowhere; no use-after-free (the sanitized build
 * catches one), and the graph's output X comes back as given. */
static void test_split_no_output(void)
{
    IrModel *m = eg_split_no_output();
    EvValue *x = eg_zeros();
    ev_set_f(x, 4, 7.0);
    EvValue **out = NULL;
    size_t n_out = 0;
    IrError err;
    int rc = ev_model_run(m, NULL, 1, &x, &out, &n_out, &err);
    T_CHECK(rc == 0 && n_out == 1, "SplitToSequence without an output: %s", err.msg);
    if (rc == 0 && n_out == 1)
        T_CHECK(out[0]->kind == EV_TENSOR && out[0]->numel == 6 &&
                ev_get_f(out[0], 4) == 7.0, "the output is not X");
    ev_values_free(out, n_out);
    ev_unref(x);
    ir_model_free(m);
}

/* ZipMap with no output (the same pattern as SplitToSequence): no
 * use-after-free, X comes back as given. */
static void test_zipmap_no_output(void)
{
    IrModel *m = eg_model(IR_FLOAT);
    ir_model_set_opset(m, "ai.onnx.ml", 1);
    IrError err;
    IrNode *n = ir_node_new(m->graph, NULL, "ZipMap", "ai.onnx.ml", "z", 1,
                            (const char *[]){"X"}, 0, NULL, &err);
    if (!n)
        eg_die(err.msg);
    int64_t labels[3] = {0, 1, 2};
    ir_node_set_attr(n, ir_attr_ints("classlabels_int64s", 3, labels));
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "X"), eg_type(IR_FLOAT));
    EvValue *x = eg_zeros();
    EvValue **out = NULL;
    size_t n_out = 0;
    int rc = ev_model_run(m, NULL, 1, &x, &out, &n_out, &err);
    T_CHECK(rc == 0 && n_out == 1 && out[0] == x, "ZipMap without an output: %s", err.msg);
    ev_values_free(out, n_out);
    ev_unref(x);
    ir_model_free(m);
}

/* ev_node_run on node k of m with every input x: -1, err naming the op. */
static void eg_node_refused(const char *what, IrModel *m, IrNode *k)
{
    EvValue *x = eg_zeros();
    EvValue *in[8] = {x, x, x, x, x, x, x, x};
    EvValue *out[8] = {0};
    IrError err = {{0}};
    int rc = k->n_in <= 8 && k->n_out <= 8 ? ev_node_run(m, NULL, k, in, out, &err) : 0;
    T_CHECK(rc == -1, "%s: an unchecked node ran", what);
    for (size_t i = 0; i < 8; i++)
        ev_unref(out[i]);
    ev_unref(x);
}

static void test_unchecked_nodes(void)
{
    IrModel *m = eg_relu_3_inputs();
    eg_node_refused("Relu with 3 inputs", m, m->graph->first);
    ir_model_free(m);
    m = eg_relu_2_outputs();
    eg_node_refused("Relu with 2 outputs", m, m->graph->first);
    ir_model_free(m);
    m = eg_unary("Relu", 1, IR_FLOAT);
    free(m->graph->first->op_type);
    m->graph->first->op_type = NULL;
    eg_node_refused("a node without op_type", m, m->graph->first);
    ir_model_free(m);
}

/* Y = Relu(C, ...n_in) of an initializer C: what folding makes of it. */
static size_t eg_fold_nodes_left(size_t n_in)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    int64_t d[2] = {2, 3};
    float v[6] = {-1, 2, -3, 4, -5, 6};
    ir_graph_add_init(m->graph, ir_tensor_new("C", IR_FLOAT, 2, d, v, sizeof v));
    eg_node(m->graph, "Relu", n_in, (const char *[]){"C", "C", "C"}, 1,
            (const char *[]){"Y"});
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "Y"), eg_type(IR_FLOAT));
    OptOptions o = {.passes = "fold"};
    OptStats st;
    IrError err;
    int rc = opt_optimize(m, &o, &st, &err);
    opt_stats_free(&st);
    size_t left = rc == 0 ? opt_count_nodes(m) : (size_t)-1;
    ir_model_free(m);
    return left;
}

static void test_fold(void)
{
    T_CHECK(eg_fold_nodes_left(1) == 0, "a valid Relu of a constant is not folded");
    T_CHECK(eg_fold_nodes_left(3) == 1, "Relu with 3 inputs was folded (or failed)");
}

int main(void)
{
    test_library_refuses();
    test_library_runs_valid();
    test_no_graph();
    test_split_no_output();
    test_zipmap_no_output();
    test_unchecked_nodes();
    test_fold();
    return t_done("test_eval_gate");
}
