/*
 * test_check_scale.c - the checker on models with very many names, and on
 * nodes whose output counts their input cannot have (prefix cs_).
 *
 * Every duplicate check must be linear: 100k attributes on one node, 200k
 * opset imports, 100k graph inputs, 50k functions and 100k nodes under
 * 100k imports are each checked within CS_SECONDS (a quadratic check
 * takes minutes), and a duplicate among them is still refused with its
 * rule. Then Split (and the ops like it) with output counts that the
 * input's static shape, the `split` sizes or `num_outputs` rule out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/check.h"
#include "hostile_models.h"
#include "ir/ir.h"
#include "t.h"
#include "analysis/tolerate.h"

/* Generous: linear checks of these models take well under a second even
 * under the sanitizers; the quadratic ones took 39 s and 144 s. */
#define CS_SECONDS 20.0

static double cs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Checks m (and frees it): `rule` NULL means it must be accepted, else
 * refused with an error starting with that rule. */
static void cs_expect(const char *label, IrModel *m, const char *rule)
{
    ChkReport r;
    if (getenv("CS_VERBOSE"))
        fprintf(stderr, "%s\n", label);
    double t0 = cs_now();
    size_t n = chk_model(m, &r);
    double dt = cs_now() - t0;
    const char *first = chk_first_error(&r);
    T_CHECK(dt < CS_SECONDS, "%s: check took %.1f s", label, dt);
    if (!rule)
        T_CHECK(n == 0, "%s: refused: %s", label, first ? first : "?");
    else
        T_CHECK(n > 0 && first && !strncmp(first, rule, strlen(rule)),
                "%s: expected %s, got %zu errors, first: %s", label, rule, n,
                first ? first : "(none)");
    chk_report_free(&r);
    ir_model_free(m);
}

/* ---- many names ------------------------------------------------------ */

/* The base plus a custom node with `n` int attributes a0.. (the last one
 * named a0 again when `dup`). */
static IrModel *cs_attrs(size_t n, bool dup)
{
    IrModel *m = hm_base();
    ir_model_set_opset(m, "com.example", 1);
    IrError err;
    IrNode *c = ir_node_new(m->graph, NULL, "Custom", "com.example", "custom0", 1,
                            (const char *[]){"X"}, 1, (const char *[]){"Z"}, &err);
    if (!c)
        hm_die(err.msg);
    c->attr = mem_array(n + 1, sizeof *c->attr);
    char name[32];
    for (size_t k = 0; k < n; k++) {
        snprintf(name, sizeof name, "a%zu", dup && k == n - 1 ? (size_t)0 : k);
        c->attr[c->n_attr++] = ir_attr_int(name, (int64_t)k);
    }
    return m;
}

/* The base plus `n` opset imports of domains d0.. (the last one d0 again
 * when `dup`). */
static IrModel *cs_opsets(size_t n, int64_t dup_version)
{
    IrModel *m = hm_base();
    m->opsets = mem_grow(m->opsets, m->n_opsets + n, sizeof *m->opsets);
    char name[32];
    for (size_t k = 0; k < n; k++) {
        bool dup = dup_version && k == n - 1;
        snprintf(name, sizeof name, "d%zu", dup ? (size_t)0 : k);
        m->opsets[m->n_opsets++] = (IrOpset){.domain = mem_strdup(name),
                                             .has_version = true,
                                             .version = dup ? dup_version : 1};
    }
    return m;
}

/* A tolerated defect (src/analysis/tolerate.h) at scale: the check warns with
 * `rule` and the repair leaves nothing to warn about, each in linear
 * time. */
static void cs_expect_repair(const char *label, IrModel *m, const char *rule)
{
    ChkReport r;
    IrError err;
    double t0 = cs_now();
    size_t n = chk_model(m, &r);
    const char *first = chk_first_warning(&r);
    T_CHECK(n == 0 && first && !strncmp(first, rule, strlen(rule)), "%s: expected the "
            "warning %s, got %zu errors, first warning: %s", label, rule, n,
            first ? first : "(none)");
    int rc = tol_repair(m, r.defects, NULL, NULL, &err);
    chk_report_free(&r);
    chk_model(m, &r);
    double dt = cs_now() - t0;
    T_CHECK(rc == 0 && r.n_errors == 0 && r.n_warnings == 0, "%s: the repaired model "
            "still has %zu errors, %zu warnings", label, r.n_errors, r.n_warnings);
    T_CHECK(dt < CS_SECONDS, "%s: check and repair took %.1f s", label, dt);
    chk_report_free(&r);
    ir_model_free(m);
}

/* The base plus `n` float [1] graph inputs i0.. (i0 listed again when
 * `dup`). */
static IrModel *cs_inputs(size_t n, bool dup)
{
    IrModel *m = hm_base();
    char name[32];
    int64_t one = 1;
    for (size_t k = 0; k < n; k++) {
        snprintf(name, sizeof name, "i%zu", k);
        if (!ir_graph_add_input(m->graph, name, ir_type_tensor(IR_FLOAT, 1, &one)))
            hm_die(name);
    }
    if (dup) {
        IrValueInfo *vi = mem_alloc(sizeof *vi);
        vi->value = ir_graph_find_local(m->graph, "i0");
        vi->type = ir_type_tensor(IR_FLOAT, 1, &one);
        ir_ptrlist_push(&m->graph->inputs, vi);
    }
    return m;
}

/* The base plus `n` local functions F0.. (F0 defined twice when `dup`),
 * the main graph calling the last one. */
static IrModel *cs_functions(size_t n, bool dup)
{
    IrModel *m = hm_base();
    char name[32];
    /* hm_add_function grows the array by one each time: under ASan every
     * realloc copies, which is quadratic in the test itself. Build one
     * function, then the others into an array of the final size. */
    hm_add_function(m, "F0", NULL);
    IrFunction *proto = m->functions[0];
    m->functions = mem_grow(m->functions, n, sizeof *m->functions);
    for (size_t k = 1; k < n; k++) {
        snprintf(name, sizeof name, "F%zu", dup && k == n - 1 ? (size_t)0 : k);
        IrFunction *f = mem_alloc(sizeof *f);
        f->name = mem_strdup(name);
        f->domain = mem_strdup(proto->domain);
        f->body = ir_graph_new(NULL);
        f->body->is_function = true;
        f->n_opsets = 2;
        f->opsets = mem_array(2, sizeof *f->opsets);
        for (size_t j = 0; j < 2; j++)
            f->opsets[j] = (IrOpset){.domain = mem_strdup(proto->opsets[j].domain),
                                     .has_version = true,
                                     .version = proto->opsets[j].version};
        ir_graph_add_input(f->body, "x", NULL);
        hm_node(f->body, "Relu", "call", 1, (const char *[]){"x"}, 1,
                (const char *[]){"y"});
        ir_graph_add_output(f->body, ir_graph_find_local(f->body, "y"), NULL);
        m->functions[m->n_functions++] = f;
    }
    hm_call_from_main(m, n > 1 ? name : "F0");
    return m;
}

/* `n` opset imports and a chain of `n` Relu nodes: each node's opset is
 * looked up among all imports (ai.onnx's is the last one). */
static IrModel *cs_nodes_opsets(size_t n)
{
    IrModel *m = cs_opsets(n, false);
    IrOpset first = m->opsets[0];
    m->opsets[0] = m->opsets[m->n_opsets - 1];
    m->opsets[m->n_opsets - 1] = first;
    const char *prev = "Y";
    char names[2][32];
    for (size_t k = 0; k < n; k++) {
        snprintf(names[k % 2], sizeof names[k % 2], "r%zu", k);
        hm_node(m->graph, "Relu", names[k % 2], 1, (const char *[]){prev}, 1,
                (const char *[]){names[k % 2]});
        prev = ir_graph_find_local(m->graph, names[k % 2])->name;
    }
    return m;
}

static void cs_many_names(void)
{
    cs_expect("100k attributes", cs_attrs(100000, false), NULL);
    cs_expect("100k attributes, one twice", cs_attrs(100000, true), "attr-duplicate");
    cs_expect("200k opset imports", cs_opsets(200000, 0), NULL);
    cs_expect("200k opset imports, one twice", cs_opsets(200000, 2),
              "opset-duplicate");
    cs_expect_repair("200k opset imports, one twice at one version",
                     cs_opsets(200000, 1), "opset-repeated");
    IrModel *m = cs_inputs(100000, false);
    for (size_t k = 0; k < m->graph->inputs.n; k++) {
        IrValueInfo *vi = m->graph->inputs.p[k];
        if (vi->type && vi->type->shape && vi->type->shape->rank)
            vi->type->shape->dims[0].value = -1;
    }
    cs_expect_repair("100k graph inputs, their dims -1", m, "dim-minus-one");
    cs_expect("100k graph inputs", cs_inputs(100000, false), NULL);
    cs_expect("100k graph inputs, one twice", cs_inputs(100000, true), "ssa");
    cs_expect("50k functions", cs_functions(50000, false), NULL);
    cs_expect("50k functions, one twice", cs_functions(50000, true),
              "function-duplicate");
    cs_expect("100k nodes, 100k opset imports", cs_nodes_opsets(100000), NULL);
}

/* ---- output counts --------------------------------------------------- */

enum { CS_SPLIT_NONE, CS_SPLIT_CONST, CS_SPLIT_INPUT };

/* X float [d, 2] split along axis 0 into n outputs at opset `opset`;
 * `how` gives `split` as an initializer (or, before 13, an attribute)
 * holding sizes[0..ns) or as a graph input of shape [ns]; num_outputs > 0
 * sets that attribute. */
static IrModel *cs_split(int64_t opset, int64_t d, size_t n, int how,
                         const int64_t *sizes, size_t ns, int64_t num_outputs)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", opset);
    m->graph = ir_graph_new(NULL);
    IrGraph *g = m->graph;
    int64_t xd[2] = {d, 2}, sd = (int64_t)ns;
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 2, xd));
    bool split_in = how != CS_SPLIT_NONE && opset >= 13;
    if (how == CS_SPLIT_CONST && split_in)
        hm_add_init(g, ir_tensor_new("S", IR_INT64, 1, &sd, sizes, ns * sizeof *sizes));
    if (how == CS_SPLIT_INPUT)
        ir_graph_add_input(g, "S", ir_type_tensor(IR_INT64, 1, &sd));
    char **outs = mem_array(n, sizeof *outs);
    for (size_t k = 0; k < n; k++) {
        outs[k] = mem_alloc(24);
        snprintf(outs[k], 24, "o%zu", k);
    }
    IrNode *sp = hm_node(g, "Split", "split0", split_in ? 2 : 1,
                         (const char *[]){"X", "S"}, n, (const char *const *)outs);
    ir_node_set_attr(sp, ir_attr_int("axis", 0));
    if (how == CS_SPLIT_CONST && !split_in)
        ir_node_set_attr(sp, ir_attr_ints("split", ns, sizes));
    if (num_outputs > 0)
        ir_node_set_attr(sp, ir_attr_int("num_outputs", num_outputs));
    IrType *ot = ir_type_tensor(IR_FLOAT, 2, xd);   /* float, shape left out */
    ir_shape_free(ot->shape);
    ot->shape = NULL;
    ir_graph_add_output(g, ir_graph_find_local(g, "o0"), ot);
    for (size_t k = 0; k < n; k++)
        free(outs[k]);
    free(outs);
    return m;
}

static void cs_split_counts(void)
{
    const int64_t s12[2] = {1, 2}, s111[3] = {1, 1, 1};
    cs_expect("Split-13 of 3 into 100000", cs_split(13, 3, 100000, CS_SPLIT_NONE, NULL,
              0, 0), "shape");
    cs_expect("Split-13 of 3 into 2 equal parts", cs_split(13, 3, 2, CS_SPLIT_NONE, NULL,
              0, 0), "shape");
    cs_expect("Split-13 of 3 into 3", cs_split(13, 3, 3, CS_SPLIT_NONE, NULL, 0, 0), NULL);
    cs_expect("Split-13 of 6 into 3", cs_split(13, 6, 3, CS_SPLIT_NONE, NULL, 0, 0), NULL);
    cs_expect("Split-11 of 3 into 100000", cs_split(11, 3, 100000, CS_SPLIT_NONE, NULL,
              0, 0), "shape");
    cs_expect("Split-18 num_outputs 100000 of 3", cs_split(18, 3, 100000, CS_SPLIT_NONE,
              NULL, 0, 100000), "shape");
    cs_expect("Split-18 num_outputs 4 of 3", cs_split(18, 3, 4, CS_SPLIT_NONE, NULL, 0, 4),
              "shape");
    cs_expect("Split-18 num_outputs 4 of 5", cs_split(18, 5, 4, CS_SPLIT_NONE, NULL, 0, 4),
              "shape");
    cs_expect("Split-18 num_outputs 2 of 3", cs_split(18, 3, 2, CS_SPLIT_NONE, NULL, 0, 2),
              NULL);
    cs_expect("Split-18 num_outputs 3 of 3", cs_split(18, 3, 3, CS_SPLIT_NONE, NULL, 0, 3),
              NULL);
    cs_expect("Split-18 split and num_outputs", cs_split(18, 3, 2, CS_SPLIT_CONST, s12, 2,
              2), "attribute");
    cs_expect("Split-13 split [1,2] into 2", cs_split(13, 3, 2, CS_SPLIT_CONST, s12, 2, 0),
              NULL);
    cs_expect("Split-13 split [1,1,1] into 2", cs_split(13, 3, 2, CS_SPLIT_CONST, s111, 3,
              0), "shape");
    cs_expect("Split-11 split attribute [1,2] into 2", cs_split(11, 3, 2, CS_SPLIT_CONST,
              s12, 2, 0), NULL);
    cs_expect("Split-13 run-time split of 5 into 2", cs_split(13, 3, 2, CS_SPLIT_INPUT,
              NULL, 5, 0), "shape");
    cs_expect("Split-13 run-time split of 2 into 2", cs_split(13, 3, 2, CS_SPLIT_INPUT,
              NULL, 2, 0), NULL);
}

int main(void)
{
    cs_many_names();
    cs_split_counts();
    return t_done("test_check_scale");
}
