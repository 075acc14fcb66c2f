/*
 * test_ir_inline - model-local functions inlined for an IR version that
 * predates them (issue 19, docs/converter.md "IR versions"): calls in the main graph,
 * in an If branch and inside another function's body; attribute
 * references bound to the call's values, to the function's default, or
 * left out (the op's own default); a formal output that is a formal
 * input; a graph value already named like an inner value. The inlined
 * model must hold no call and no function, pass the checker, and compute
 * what the hand-worked values below say (and what the evaluator gives for
 * the original).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "convert/convert.h"
#include "eval/eval.h"
#include "ir/ir.h"
#include "t.h"

static void die(const char *what)
{
    fprintf(stderr, "test_ir_inline: cannot build the model: %s\n", what);
    exit(2);
}

static IrNode *node(IrGraph *g, const char *op, const char *domain, const char *name,
                    size_t n_in, const char *const *in, size_t n_out, const char *const *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, domain, name, n_in, in, n_out, out, &err);
    if (!n)
        die(err.msg);
    return n;
}

static IrAttr *ref(const char *name, const char *to)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->ref_attr_name = mem_strdup(to);
    a->has_type = true;
    a->type = 1;  /* FLOAT */
    return a;
}

static IrFunction *function(const char *name, IrGraph *body)
{
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup(name);
    f->domain = mem_strdup("local");
    f->body = body;
    f->n_opsets = 2;
    f->opsets = mem_array(2, sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    f->opsets[1] = (IrOpset){.domain = mem_strdup("local"), .has_version = true, .version = 1};
    return f;
}

static IrGraph *body(void)
{
    IrGraph *b = ir_graph_new(NULL);
    b->is_function = true;
    return b;
}

/* Scale(X; alpha = 2, beta) -> (Z, P):
 *   Z = LeakyRelu(X * alpha, alpha = beta), P = X */
static IrFunction *scale(void)
{
    IrGraph *b = body();
    ir_graph_add_input(b, "X", NULL);
    const char *c[1] = {"C"}, *xc[2] = {"X", "C"}, *y[1] = {"Y"}, *z[1] = {"Z"};
    ir_node_set_attr(node(b, "Constant", "", "c", 0, NULL, 1, c), ref("value_float", "alpha"));
    node(b, "Mul", "", "mul", 2, xc, 1, y);
    ir_node_set_attr(node(b, "LeakyRelu", "", "act", 1, y, 1, z), ref("alpha", "beta"));
    ir_graph_add_output(b, ir_graph_find_local(b, "Z"), NULL);
    ir_graph_add_output(b, ir_graph_find_local(b, "X"), NULL);
    IrFunction *f = function("Scale", b);
    f->n_attr = 1;
    f->attr = mem_array(1, sizeof *f->attr);
    f->attr[0] = ir_attr_float("alpha", 2.0f);
    f->n_attr_names = 1;
    f->attr_names = mem_array(1, sizeof *f->attr_names);
    f->attr_names[0] = mem_strdup("beta");
    return f;
}

/* Twice(X; k) -> W: (S, -) = Scale(X, alpha = k), W = S + S */
static IrFunction *twice(void)
{
    IrGraph *b = body();
    ir_graph_add_input(b, "X", NULL);
    const char *x[1] = {"X"}, *s[2] = {"S", ""}, *ss[2] = {"S", "S"}, *w[1] = {"W"};
    ir_node_set_attr(node(b, "Scale", "local", "inner", 1, x, 2, s), ref("alpha", "k"));
    node(b, "Add", "", "add", 2, ss, 1, w);
    ir_graph_add_output(b, ir_graph_find_local(b, "W"), NULL);
    IrFunction *f = function("Twice", b);
    f->n_attr_names = 1;
    f->attr_names = mem_array(1, sizeof *f->attr_names);
    f->attr_names[0] = mem_strdup("k");
    return f;
}

/* main(x, c) -> (y, p1, clash):
 *   (z1, p1) = Scale(x, beta = 0.5); w = Twice(z1, k = 3)
 *   y = If(c, then: (t, -) = Scale(w), else: -w); clash = "n1/Y" = Identity(x) */
static IrModel *build(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    ir_model_set_opset(m, "local", 1);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("main");
    int64_t d[1] = {3};
    ir_graph_add_input(g, "x", ir_type_tensor(1, 1, d));
    ir_graph_add_input(g, "c", ir_type_tensor(9, 0, NULL));
    const char *x[1] = {"x"}, *zp[2] = {"z1", "p1"}, *z1[1] = {"z1"}, *w[1] = {"w"};
    const char *c[1] = {"c"}, *y[1] = {"y"}, *clash[1] = {"n1/Y"};
    ir_node_set_attr(node(g, "Scale", "local", "n1", 1, x, 2, zp), ir_attr_float("beta", 0.5f));
    ir_node_set_attr(node(g, "Twice", "local", "n2", 1, z1, 1, w), ir_attr_float("k", 3.0f));
    node(g, "Identity", "", "clash", 1, x, 1, clash);
    IrNode *iff = node(g, "If", "", "if", 1, c, 1, y);
    IrGraph *th = ir_graph_new(g), *el = ir_graph_new(g);
    th->name = mem_strdup("then");
    el->name = mem_strdup("else");
    const char *t[2] = {"t", ""}, *e[1] = {"e"};
    node(th, "Scale", "local", "n3", 1, w, 2, t);
    node(el, "Neg", "", "neg", 1, w, 1, e);
    ir_graph_add_output(th, ir_graph_find_local(th, "t"), ir_type_tensor(1, 1, d));
    ir_graph_add_output(el, ir_graph_find_local(el, "e"), ir_type_tensor(1, 1, d));
    ir_node_set_attr(iff, ir_attr_graph("then_branch", th));
    ir_node_set_attr(iff, ir_attr_graph("else_branch", el));
    ir_graph_add_output(g, ir_graph_find_local(g, "y"), ir_type_tensor(1, 1, d));
    ir_graph_add_output(g, ir_graph_find_local(g, "p1"), ir_type_tensor(1, 1, d));
    ir_graph_add_output(g, ir_graph_find_local(g, "n1/Y"), ir_type_tensor(1, 1, d));
    m->n_functions = 2;
    m->functions = mem_array(2, sizeof *m->functions);
    m->functions[0] = scale();
    m->functions[1] = twice();
    return m;
}

/* Runs m on x = [-1, 2, 3] and c; out[0..2] are y, p1, clash. */
static int run(IrModel *m, bool c, float out[3][3], char *why, size_t cap)
{
    int64_t d[1] = {3};
    EvValue *in[2] = {ev_tensor_new(IR_FLOAT, 1, d, NULL), ev_tensor_new(IR_BOOL, 0, NULL, NULL)};
    const float x[3] = {-1, 2, 3};
    memcpy(in[0]->data, x, sizeof x);
    *(uint8_t *)in[1]->data = c;
    EvValue **res = NULL;
    size_t n = 0;
    IrError err;
    int rc = ev_model_run(m, NULL, 2, in, &res, &n, &err);
    snprintf(why, cap, "%s", rc ? err.msg : "");
    for (size_t i = 0; rc == 0 && i < n && i < 3; i++)
        memcpy(out[i], res[i]->data, sizeof out[i]);
    for (size_t i = 0; i < n; i++)
        ev_unref(res[i]);
    free(res);
    ev_unref(in[0]);
    ev_unref(in[1]);
    return rc == 0 && n == 3 ? 0 : -1;
}

/* Whether g or a graph nested in it still holds a call of domain local. */
static bool has_call(const IrGraph *g)
{
    for (const IrNode *n = g->first; n; n = n->next) {
        if (n->domain && !strcmp(n->domain, "local"))
            return true;
        for (size_t a = 0; a < n->n_attr; a++)
            if (n->attr[a]->g && has_call(n->attr[a]->g))
                return true;
    }
    return false;
}

static bool close3(const float *a, const float *b)
{
    for (int i = 0; i < 3; i++)
        if (fabsf(a[i] - b[i]) > 1e-6f + 1e-5f * fabsf(b[i]))
            return false;
    return true;
}

static void test_inline(void)
{
    /* by hand: z1 = LeakyRelu(2x, 0.5) = [-1, 4, 6]; w = 2 * LeakyRelu(3 z1,
     * 0.01) = [-0.06, 24, 36]; then: LeakyRelu(2w, 0.01) = [-0.0012, 48, 72];
     * else: -w */
    const float want_then[3] = {-0.0012f, 48, 72}, want_else[3] = {0.06f, -24, -36};
    const float want_p[3] = {-1, 2, 3};
    IrModel *m = build();
    char why[512];
    float before[2][3][3], after[2][3][3];
    for (int c = 0; c < 2; c++)
        T_CHECK(run(m, c, before[c], why, sizeof why) == 0, "original, c=%d: %s", c, why);
    CvOptions o = {.opset = 13, .ir_version = 7};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) == 0, "inline at IR 7: %s", err.msg);
    T_CHECK(m->ir_version == 7 && m->n_functions == 0 && !has_call(m->graph),
            "IR %lld, %zu functions left, calls left %d", (long long)m->ir_version,
            m->n_functions, has_call(m->graph));
    T_CHECK(r.n_dropped == 1 &&
            !strncmp(r.dropped[0], "ModelProto.functions x2 (inlined at 4 calls", 43),
            "reported: %s", r.n_dropped ? r.dropped[0] : "nothing");
    ChkReport cr;
    size_t errors = chk_model(m, &cr);
    T_CHECK(errors == 0, "the inlined model is valid: %s",
            chk_first_error(&cr) ? chk_first_error(&cr) : "");
    chk_report_free(&cr);
    for (int c = 0; c < 2; c++) {
        T_CHECK(run(m, c, after[c], why, sizeof why) == 0, "inlined, c=%d: %s", c, why);
        const float *want = c ? want_then : want_else;
        T_CHECK(close3(before[c][0], want) && close3(after[c][0], want),
                "y, c=%d: before %g %g %g, after %g %g %g", c, before[c][0][0],
                before[c][0][1], before[c][0][2], after[c][0][0], after[c][0][1],
                after[c][0][2]);
        T_CHECK(close3(after[c][1], want_p) && close3(after[c][2], want_p),
                "p1 and n1/Y, c=%d", c);
    }
    cv_report_free(&r);
    ir_model_free(m);
}

/* A body with a subgraph is not inlined: refused, named. */
static void test_subgraph_refused(void)
{
    IrModel *m = build();
    IrGraph *b = m->functions[0]->body;
    IrNode *k = b->last;
    IrGraph *sub = ir_graph_new(b);
    sub->name = mem_strdup("loopbody");
    ir_node_set_attr(k, ir_attr_graph("extra", sub));
    CvOptions o = {.opset = 13, .ir_version = 7};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) < 0 && strstr(err.msg, "function 'Scale'") &&
            strstr(err.msg, "subgraph"), "refused: %s", err.msg);
    T_CHECK(r.reason && !strcmp(r.reason, "ir-version"), "reason %s", r.reason ? r.reason : "-");
    cv_report_free(&r);
    ir_model_free(m);
}

int main(void)
{
    test_inline();
    test_subgraph_refused();
    return t_done("test_ir_inline");
}
