/*
 * test_passes - each optimization pass on small models: one where it
 * applies, one where it must not, and the outputs before and after
 * (evaluator, seeded random inputs) for every pipeline run.
 *
 * Models are written in a tiny text form, one node per line:
 *   "y = Relu x"    "a,b = Split x"    "y = Constant value_float=2.5"
 * The graph input is x (float [2,3]); outputs and initializers are named
 * per test.
 */
#include <stdlib.h>
#include <string.h>

#include "passes_build.h"

/* A model with input x: float[2,3], the given nodes (each "outs = Op ins
 * [attr=value]"), initializers named in inits (float [3], values 1..3)
 * and outputs. */
static IrModel *tp_build(int64_t ir, const char *const *nodes, size_t n_nodes,
                         const char *inits, const char *outputs)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = ir;
    ir_model_set_opset(m, "", 13);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    int64_t d[2] = {2, 3}, d3 = 3;
    ir_graph_add_input(g, "x", ir_type_tensor(1, 2, d));
    char buf[256];
    snprintf(buf, sizeof buf, "%s", inits ? inits : "");
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
        float v[3] = {1, 2, 3};
        ir_graph_add_init(g, ir_tensor_new(s, 1, 1, &d3, v, sizeof v));
        if (ir < 4)
            ir_graph_add_input(g, s, ir_type_tensor(1, 1, &d3));
    }
    for (size_t i = 0; i < n_nodes; i++) {
        char line[256], *outs[4], *ins[4], *w[8];
        int n_w = 0, n_o = 0, n_i = 0;
        snprintf(line, sizeof line, "%s", nodes[i]);
        for (char *t = strtok(line, " "); t && n_w < 8; t = strtok(NULL, " "))
            w[n_w++] = t;
        for (char *t = strtok(w[0], ","); t && n_o < 4; t = strtok(NULL, ","))
            outs[n_o++] = t;
        const char *op = w[2];
        const char *attr = NULL;
        if (n_w > 3 && strchr(w[3], '='))
            attr = w[3];
        else if (n_w > 3)
            for (char *t = strtok(w[3], ","); t && n_i < 4; t = strtok(NULL, ","))
                ins[n_i++] = t;
        if (n_w > 4)
            attr = w[4];
        char nm[32];
        snprintf(nm, sizeof nm, "n%zu", i);
        IrError e;
        IrNode *k = ir_node_new(g, NULL, op, NULL, nm, (size_t)n_i, (const char *const *)ins,
                                (size_t)n_o, (const char *const *)outs, &e);
        if (k && attr && !strncmp(attr, "value_float=", 12))
            ir_node_set_attr(k, ir_attr_float("value_float", strtof(attr + 12, NULL)));
    }
    snprintf(buf, sizeof buf, "%s", outputs);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        ir_graph_add_output(g, ir_graph_value(g, s), NULL);
    return m;
}

static size_t tp_count_op(const IrModel *m, const char *op)
{
    size_t n = 0;
    for (const IrNode *k = m->graph->first; k; k = k->next)
        n += strcmp(k->op_type, op) == 0;
    return n;
}

static void test_identity(void)
{
    const char *nodes[] = {"a = Identity x", "b = Relu a", "y = Identity b"};
    IrModel *m = tp_build(8, nodes, 3, NULL, "y");
    long ch;
    IrModel *o = tb_run(m, "identity", &ch);
    /* the first goes; the last produces the graph output y and stays */
    T_CHECK(ch == 1 && o && tp_count_op(o, "Identity") == 1, "identity: %ld changes", ch);
    T_CHECK(o && ir_graph_find_local(o->graph, "y"), "identity: output y kept");
    ir_model_free(o);
    ir_model_free(m);
}

static void test_dead_code(void)
{
    const char *nodes[] = {"a = Relu x", "b = Neg a", "c = Abs x", "y = Sigmoid x"};
    IrModel *m = tp_build(8, nodes, 4, NULL, "y,c");
    long ch;
    IrModel *o = tb_run(m, "dead_code", &ch);
    /* Relu and Neg feed nothing; Abs is an output */
    T_CHECK(ch == 2 && o && o->graph->n_nodes == 2, "dead_code: %ld changes", ch);
    T_CHECK(o && tp_count_op(o, "Abs") == 1, "dead_code: the output's producer stays");
    ir_model_free(o);
    ir_model_free(m);
}

static void test_constant_to_init(void)
{
    const char *nodes[] = {"k = Constant value_float=2.5", "y = Mul x,k"};
    IrModel *m = tp_build(8, nodes, 2, NULL, "y");
    long ch;
    IrModel *o = tb_run(m, "constant_to_init", &ch);
    T_CHECK(ch == 1 && o && tp_count_op(o, "Constant") == 0 && o->graph->inits.n == 1,
            "constant_to_init: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
    /* IR 3 lists initializers as inputs: the pass must not add one */
    m = tp_build(3, nodes, 2, NULL, "y");
    o = tb_run(m, "constant_to_init", &ch);
    T_CHECK(ch == 0 && o && tp_count_op(o, "Constant") == 1, "constant_to_init at IR 3: %ld",
            ch);
    ir_model_free(o);
    ir_model_free(m);
}

static void test_unused_init(void)
{
    const char *nodes[] = {"y = Add x,w"};
    IrModel *m = tp_build(8, nodes, 1, "w,unused", "y");
    long ch;
    IrModel *o = tb_run(m, "unused_init", &ch);
    T_CHECK(ch == 1 && o && o->graph->inits.n == 1, "unused_init: %ld changes", ch);
    ir_model_free(o);
    ir_model_free(m);
    /* an initializer that is also a graph input is a default: it stays */
    m = tp_build(3, nodes, 1, "w,unused", "y");
    o = tb_run(m, "unused_init", &ch);
    T_CHECK(ch == 0 && o && o->graph->inits.n == 2, "unused_init with input defaults: %ld",
            ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* The default pipeline reaches a fixed point: a second run changes
 * nothing. */
static void test_idempotent(void)
{
    const char *nodes[] = {"k = Constant value_float=2.5", "a = Identity x", "b = Mul a,k",
                           "c = Relu b", "y = Identity c", "d = Neg x"};
    IrModel *m = tp_build(8, nodes, 6, "unused", "y");
    long ch = 0, again = -1;
    IrModel *o = tb_run(m, NULL, &ch);
    IrModel *o2 = o ? tb_run(o, NULL, &again) : NULL;
    T_CHECK(ch > 0 && o2 && again == 0, "default pipeline: %ld then %ld changes", ch, again);
    T_CHECK(o && o->graph->n_nodes == 3, "default pipeline leaves Mul, Relu, Identity");
    ir_model_free(o2);
    ir_model_free(o);
    ir_model_free(m);
}

int main(void)
{
    test_identity();
    test_dead_code();
    test_constant_to_init();
    test_unused_init();
    test_idempotent();
    return t_done("test_passes");
}
