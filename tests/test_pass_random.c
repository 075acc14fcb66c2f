/*
 * test_pass_random.c - every op the operator table flags random (output not
 * deterministic) is neither constant-folded nor merged by cse.
 *
 * For each such op (iterating os_table, newest version), a model runs two
 * identical nodes of it on the same constant inputs; each feeds an Identity
 * whose output is a graph output (so cse's "graph outputs are interface"
 * rule does not protect them). After the fold and cse passes both nodes
 * must still be there: folding would freeze one draw into the model, and
 * merging would make two independent draws one.
 *
 * Dropout is random only in training mode (kv_random): before version 7
 * when is_test is 0 (its default), from 12 when training_mode is true. In
 * inference mode it is the identity, and fold must remove it like any
 * deterministic op of constants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "analysis/known.h"
#include "schema/opschema.h"
#include "passes/passes.h"
#include "t.h"

/* A constant input for formal input p of s: a bool true for Dropout's
 * training_mode (which makes it random), else float 0.5 of shape [2, 3]
 * (a probability for Bernoulli, logits for Multinomial). */
static IrTensor *const_for(const OsParam *p, const char *name)
{
    int64_t dims[2] = {2, 3};
    if (!strcmp(p->name, "training_mode")) {
        uint8_t t = 1;
        return ir_tensor_new(name, IR_BOOL, 0, NULL, &t, 1);
    }
    if (!strcmp(p->name, "ratio")) {
        float r = 0.5f;
        return ir_tensor_new(name, IR_FLOAT, 0, NULL, &r, sizeof r);
    }
    float v[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    return ir_tensor_new(name, IR_FLOAT, 2, dims, v, sizeof v);
}

/* One node of s reading the initializers in[]; required INTS attributes
 * (RandomNormal's shape) get [2, 3]. */
static IrNode *add_node(IrGraph *g, const OsSchema *s, size_t n_in,
                        const char *const *in, const char *out, IrError *err)
{
    const char *outs[1] = {out};
    IrNode *k = ir_node_new(g, NULL, s->op, s->domain, out, n_in, in, 1, outs,
                            err);
    if (!k)
        return NULL;
    int64_t dims[2] = {2, 3};
    for (size_t a = 0; a < s->n_attr; a++)
        if (s->attr[a].required && s->attr[a].type == IR_AT_INTS)
            ir_node_set_attr(k, ir_attr_ints(s->attr[a].name, 2, dims));
    return k;
}

/* The model of two s nodes, each behind an Identity to a graph output. */
static IrModel *build(const OsSchema *s, IrError *err)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 10;
    ir_model_set_opset(m, "", s->since);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    const char *in[8];
    char names[8][32];
    size_t n_in = 0;
    /* the required inputs, and Dropout's up to training_mode */
    size_t n_use = 0;
    while (n_use < s->n_in && n_use < 8 && !s->in[n_use].optional)
        n_use++;
    for (size_t i = 0; i < s->n_in && i < 8; i++)
        if (!strcmp(s->in[i].name, "training_mode"))
            n_use = i + 1;
    for (size_t i = 0; i < n_use; i++) {
        snprintf(names[i], sizeof names[i], "c%zu", i);
        ir_graph_add_init(g, const_for(&s->in[i], names[i]));
        in[n_in++] = names[i];
    }
    if (!add_node(g, s, n_in, in, "r1", err) || !add_node(g, s, n_in, in, "r2", err))
        return m;
    const char *r1[1] = {"r1"}, *r2[1] = {"r2"}, *o1[1] = {"o1"}, *o2[1] = {"o2"};
    ir_node_new(g, NULL, "Identity", "", "i1", 1, r1, 1, o1, err);
    ir_node_new(g, NULL, "Identity", "", "i2", 1, r2, 1, o2, err);
    ir_graph_add_output(g, ir_graph_value(g, "o1"), NULL);
    ir_graph_add_output(g, ir_graph_value(g, "o2"), NULL);
    return m;
}

static size_t count_op(const IrModel *m, const char *op)
{
    size_t n = 0;
    for (const IrNode *k = m->graph->first; k; k = k->next)
        n += !k->dead && strcmp(k->op_type, op) == 0;
    return n;
}

/* Two Dropout-`since` nodes on a constant x (and training_mode `tm`: -1
 * absent, 0 false, 1 true; is_test `is_test`: -1 absent), run through fold
 * and cse; returns how many Dropouts are left. */
static size_t dropout_left(int since, int tm, int is_test)
{
    IrError err = {{0}};
    const OsSchema *s = os_find("", "Dropout", since);
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = since >= 12 ? 10 : 3;
    ir_model_set_opset(m, "", since);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("g");
    int64_t dims[2] = {2, 3};
    float v[6] = {1, 2, 3, 4, 5, 6}, r = 0.5f;
    uint8_t t = (uint8_t)(tm > 0);
    ir_graph_add_init(g, ir_tensor_new("x", IR_FLOAT, 2, dims, v, sizeof v));
    const char *in[3] = {"x", "r", "tm"};
    size_t n_in = 1;
    if (tm >= 0) {
        ir_graph_add_init(g, ir_tensor_new("r", IR_FLOAT, 0, NULL, &r, sizeof r));
        ir_graph_add_init(g, ir_tensor_new("tm", IR_BOOL, 0, NULL, &t, 1));
        n_in = 3;
    }
    IrNode *a = add_node(g, s, n_in, in, "r1", &err);
    IrNode *b = add_node(g, s, n_in, in, "r2", &err);
    if (is_test >= 0 && a && b) {
        ir_node_set_attr(a, ir_attr_int("is_test", is_test));
        ir_node_set_attr(b, ir_attr_int("is_test", is_test));
    }
    const char *r1[1] = {"r1"}, *r2[1] = {"r2"}, *o1[1] = {"o1"}, *o2[1] = {"o2"};
    ir_node_new(g, NULL, "Identity", "", "i1", 1, r1, 1, o1, &err);
    ir_node_new(g, NULL, "Identity", "", "i2", 1, r2, 1, o2, &err);
    ir_graph_add_output(g, ir_graph_value(g, "o1"), NULL);
    ir_graph_add_output(g, ir_graph_value(g, "o2"), NULL);
    OptOptions o = {.passes = "fold,cse"};
    OptStats st = {0};
    int rc = opt_optimize(m, &o, &st, &err);
    T_CHECK(rc == 0, "Dropout-%d: optimize failed: %s", since, err.msg);
    opt_stats_free(&st);
    size_t left = count_op(m, "Dropout");
    ir_model_free(m);
    return left;
}

static void test_dropout(void)
{
    T_CHECK(dropout_left(22, 1, -1) == 2, "Dropout-22 in training mode stays, twice");
    T_CHECK(dropout_left(22, 0, -1) == 0, "Dropout-22 with training_mode false folds");
    T_CHECK(dropout_left(22, -1, -1) == 0, "Dropout-22 without training_mode folds");
    T_CHECK(dropout_left(10, -1, -1) == 0, "Dropout-10 (inference only) folds");
    T_CHECK(dropout_left(6, -1, -1) == 2, "Dropout-6 with is_test 0 (default) stays, twice");
    T_CHECK(dropout_left(6, -1, 1) == 0, "Dropout-6 with is_test 1 folds");
}

int main(void)
{
    test_dropout();
    size_t tested = 0;
    for (size_t i = 0; i < os_table_n; i++) {
        const OsSchema *s = &os_table[i];
        if (!(s->flags & OS_F_RANDOM) || s->next_since)
            continue;   /* the newest version of each random op */
        IrError err = {{0}};
        IrModel *m = build(s, &err);
        T_CHECK(count_op(m, s->op) == 2, "%s: the model has two nodes: %s",
                s->op, err.msg);
        OptOptions o = {.passes = "fold,cse"};
        OptStats st = {0};
        int rc = opt_optimize(m, &o, &st, &err);
        T_CHECK(rc == 0, "%s: optimize failed: %s", s->op, err.msg);
        opt_stats_free(&st);
        T_CHECK(count_op(m, s->op) == 2,
                "%s-%d: %zu nodes left of 2 after fold and cse", s->op, s->since,
                count_op(m, s->op));
        ir_model_free(m);
        tested++;
    }
    /* RandomNormal, RandomNormalLike, RandomUniform, RandomUniformLike,
     * Bernoulli, Multinomial */
    T_CHECK(tested >= 6, "%zu random ops in the table, want at least 6", tested);
    return t_done("test_pass_random");
}
