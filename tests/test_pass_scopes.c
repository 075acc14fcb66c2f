/* test_pass_scopes - what the optimizer must do to end at or below ONNX
 * Runtime's basic level (tests/ort_nodecount.sh): Constant nodes of
 * If/Loop bodies become the body's own initializers (not in function
 * bodies, not below IR 4), folds there place initializers too, nodes with
 * no inputs fold and merge like any other, Add/Sub/Mul/Div by an exact
 * identity go, and a Reshape target computed by Shape -> Cast(float) ->
 * Slice -> Cast(int64) -> Concat folds when the dims sliced are static,
 * and an If whose condition is a constant becomes the branch it takes.
 * Each case builds its model here; tb_run checks the
 * outputs before and after on seeded inputs. */
#include "analysis/check.h"
#include "convert/convert.h"
#include "corpus.h"
#include "passes_build.h"

/* A subgraph of parent from passes_build text (nodes and "output NAME"). */
static IrGraph *ts_sub(IrGraph *parent, const char *name, const char *text)
{
    IrGraph *g = ir_graph_new(parent);
    g->name = mem_strdup(name);
    char *copy = mem_strdup(text), *save = NULL;
    int idx = 100;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *w[24];
        int n_w = 0;
        for (char *t = strtok(line, " "); t && n_w < 24; t = strtok(NULL, " "))
            w[n_w++] = t;
        if (n_w == 2 && !strcmp(w[0], "output"))
            ir_graph_add_output(g, ir_graph_value(g, w[1]), NULL);
        else if (n_w > 2 && !strcmp(w[1], "="))
            tb_node(g, w, n_w, idx++);
    }
    free(copy);
    return g;
}

/* The model re-read from its own bytes, so that names a subgraph reads
 * from its parent resolve as the loader binds them. */
static IrModel *ts_reload(IrModel *m)
{
    uint8_t *buf;
    size_t len;
    IrError err;
    IrModel *copy = NULL;
    if (save_model_buffer(m, &buf, &len, &err) == 0) {
        if (load_model_buffer(buf, len, NULL, "copy", NULL, &copy, &err))
            copy = NULL;
        free(buf);
    }
    T_CHECK(copy != NULL, "the test model does not save/load: %s", err.msg);
    ir_model_free(m);
    return copy;
}

/* "y = If c" over x, each branch adding its own Constant to x (then: x+1,
 * else: x*2), at IR `ir`. */
static IrModel *ts_if_model(int64_t ir)
{
    IrModel *m = tb_model("input x float 2,3\ninput c bool -\ny = If c\noutput y\n");
    m->ir_version = ir;
    IrNode *k = m->graph->last;
    ir_node_set_attr(k, ir_attr_graph("then_branch", ts_sub(m->graph, "then",
        "one = Constant value_floats=[1.0,1.0,1.0]\nt = Add x,one\noutput t\n")));
    ir_node_set_attr(k, ir_attr_graph("else_branch", ts_sub(m->graph, "else",
        "two = Constant value_float=2.0\ne = Mul x,two\noutput e\n")));
    return ts_reload(m);
}

/* Constant nodes in every graph of m, and initializers of its subgraphs. */
static void ts_scan(const IrGraph *g, size_t *consts, size_t *sub_inits)
{
    if (g->parent)
        *sub_inits += g->inits.n;
    for (const IrNode *k = g->first; k; k = k->next) {
        *consts += strcmp(k->op_type, "Constant") == 0;
        for (size_t a = 0; a < k->n_attr; a++)
            if (k->attr[a]->g)
                ts_scan(k->attr[a]->g, consts, sub_inits);
    }
}

static void ts_if_constants(void)
{
    for (int64_t ir = 3; ir <= 8; ir += 5) {
        IrModel *m = ts_if_model(ir);
        long ch = -1;
        IrModel *o = m ? tb_run(m, "constant_to_init", &ch) : NULL;
        size_t consts = 0, inits = 0;
        if (o)
            ts_scan(o->graph, &consts, &inits);
        /* below IR 4 an initializer is a graph input: the bodies keep
         * their Constant nodes */
        if (ir >= 4)
            T_CHECK(o && ch == 2 && consts == 0 && inits == 2,
                    "IR %lld: If bodies' Constants: %ld changes, %zu Constants, %zu "
                    "subgraph initializers (want 2, 0, 2)", (long long)ir, ch, consts, inits);
        else
            T_CHECK(o && ch == 0 && consts == 2 && inits == 0,
                    "IR %lld: If bodies' Constants: %ld changes, %zu Constants, %zu "
                    "subgraph initializers (want 0, 2, 0)", (long long)ir, ch, consts, inits);
        ir_model_free(o);
        ir_model_free(m);
    }
}

/* A fold inside a body stores an initializer of the body, and the
 * Constants it read go with unused_init: the default pipeline leaves the
 * then branch Add x,c only. */
static void ts_if_fold(void)
{
    IrModel *m = tb_model("input x float 2,3\ninput c bool -\ny = If c\noutput y\n");
    IrNode *k = m->graph->last;
    ir_node_set_attr(k, ir_attr_graph("then_branch", ts_sub(m->graph, "then",
        "a = Constant value_floats=[1.0,2.0,3.0]\nb = Constant value_floats=[0.5,0.5,0.5]\n"
        "s = Mul a,b\nt = Add x,s\noutput t\n")));
    ir_node_set_attr(k, ir_attr_graph("else_branch", ts_sub(m->graph, "else",
        "e = Neg x\noutput e\n")));
    m = ts_reload(m);
    long ch = -1;
    IrModel *o = m ? tb_run(m, NULL, &ch) : NULL;
    const IrAttr *then = o ? ir_node_attr(o->graph->last, "then_branch") : NULL;
    const IrGraph *g = then ? then->g : NULL;
    T_CHECK(g && g->n_nodes == 1 && g->inits.n == 1 && !strcmp(g->first->op_type, "Add"),
            "then branch after the default pipeline: %zu nodes, %zu initializers "
            "(want Add alone, one initializer)", g ? g->n_nodes : 0, g ? g->inits.n : 0);
    ir_model_free(o);
    ir_model_free(m);
}

/* A model-local function body has no initializers: its Constant stays. */
static void ts_function_constant(void)
{
    IrModel *m = tb_model("input x float 2,3\ny = AddOne x\noutput y\n");
    IrNode *call = m->graph->last;
    free(call->domain);
    call->domain = mem_strdup("local");
    ir_model_set_opset(m, "local", 1);
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("AddOne");
    f->domain = mem_strdup("local");
    f->n_opsets = 1;
    f->opsets = mem_alloc(sizeof *f->opsets);
    f->opsets[0].domain = mem_strdup("");
    f->opsets[0].has_version = true;
    f->opsets[0].version = 13;
    f->body = ts_sub(NULL, "AddOne", "one = Constant value_float=1.0\nr = Add a,one\n");
    f->body->is_function = true;
    ir_graph_add_input(f->body, "a", NULL);
    ir_graph_add_output(f->body, ir_graph_value(f->body, "r"), NULL);
    m->functions = mem_alloc(sizeof *m->functions);
    m->functions[m->n_functions++] = f;
    m = ts_reload(m);
    long ch = -1;
    IrModel *o = m ? tb_run(m, "constant_to_init", &ch) : NULL;
    const IrGraph *b = o && o->n_functions ? o->functions[0]->body : NULL;
    T_CHECK(b && ch == 0 && b->inits.n == 0 && b->first &&
            !strcmp(b->first->op_type, "Constant"),
            "function body: %ld changes, its Constant must stay", ch);
    ir_model_free(o);
    ir_model_free(m);
}

/* OptionalHasElement of a left-out input is a constant false: it folds,
 * though it has no input (a graph output becomes an initializer of the
 * same name). */
static void ts_fold_no_input(void)
{
    IrModel *m = tb_model("opset 18\ny = OptionalHasElement\noutput y\n");
    long ch = -1;
    IrModel *o = tb_run(m, "fold", &ch);
    T_CHECK(o && ch == 1 && o->graph->n_nodes == 0 && o->graph->inits.n == 1,
            "OptionalHasElement(): %ld changes, %zu nodes left (want 1, 0)", ch,
            o ? o->graph->n_nodes : 0);
    ir_model_free(o);
    ir_model_free(m);
}

/* Two SequenceEmpty nodes with the same attributes are one value; two
 * random ops without inputs are not. */
static void ts_cse_no_input(void)
{
    IrModel *m = tb_model("input x float 2,3\na = SequenceEmpty dtype=1\nb = SequenceEmpty dtype=1\n"
                          "p = SequenceInsert a,x\nq = SequenceInsert b,x\n"
                          "n = SequenceLength p\nk = SequenceLength q\nz = Add n,k\noutput z\n");
    long ch = -1;
    IrModel *o = tb_run(m, "cse", &ch);
    T_CHECK(o && tb_count(o, "SequenceEmpty") == 1,
            "SequenceEmpty twice: %zu left after cse (want 1)", o ? tb_count(o, "SequenceEmpty") : 0);
    ir_model_free(o);
    ir_model_free(m);
    m = tb_model("a = RandomUniform shape=[2,3] seed=1.0\nb = RandomUniform shape=[2,3] seed=1.0\n"
                 "z = Sub a,b\noutput z\n");
    IrError err;
    OptOptions opts = {.passes = "cse"};
    OptStats st;
    T_CHECK(opt_optimize(m, &opts, &st, &err) == 0 && tb_count(m, "RandomUniform") == 2,
            "RandomUniform twice: %zu left after cse (want 2)", tb_count(m, "RandomUniform"));
    opt_stats_free(&st);
    ir_model_free(m);
}

/* noop on y = Op(...) read by Neg: whether the node goes. */
static const struct {
    const char *what, *text;
    bool gone;
} ts_arith_cases[] = {
    {"x*1", "input x float 2,3\ninit c float 3 1\ny = Mul x,c\n", true},
    {"1*x", "input x float 2,3\ninit c float 1 1\ny = Mul c,x\n", true},
    {"x*1 grows x", "input x float 2,3\ninit c float 4,2,3 1\ny = Mul x,c\n", false},
    {"x*2", "input x float 2,3\ninit c float 3 2\ny = Mul x,c\n", false},
    {"x*[1,1,2]", "input x float 2,3\ninit c float 3 1,1,2\ny = Mul x,c\n", false},
    {"x/1", "input x double 2,3\ninit c double - 1\ny = Div x,c\n", true},
    {"1/x", "input x float 2,3\ninit c float - 1\ny = Div c,x\n", false},
    {"x+(-0)", "input x float 2,3\ninit c float - -0.0\ny = Add x,c\n", true},
    {"x+(+0)", "input x float 2,3\ninit c float - 0.0\ny = Add x,c\n", false},
    {"x-(+0)", "input x float 2,3\ninit c float - 0.0\ny = Sub x,c\n", true},
    {"x-(-0)", "input x float 2,3\ninit c float - -0.0\ny = Sub x,c\n", false},
    {"0-x", "input x int64 2,3\ninit c int64 - 0\ny = Sub c,x\n", false},
    {"int x+0", "input x int64 2,3\ninit c int64 1 0\ny = Add c,x\n", true},
    /* a detector's boxes (a data-dependent count N) over a scalar 1.0, as
     * retinanet divides them: any dims of x, broadcasting cannot grow them */
    {"x[N,4]/1 scalar", "input x float N,4\ninit c float - 1\ny = Div x,c\n", true},
    {"x[N,4]*[1,1]", "input x float N,4\ninit c float 1,1 1\ny = Mul x,c\n", true},
    {"x[N]*[1,1] grows the rank", "input x float N\ninit c float 1,1 1\ny = Mul x,c\n",
     false},
    {"x[N,4]*[2] dynamic", "input x float N,4\ninit c float 1 2\ny = Mul x,c\n", false},
};

static void ts_arith(void)
{
    for (size_t i = 0; i < sizeof ts_arith_cases / sizeof ts_arith_cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%sz = Neg y\noutput z\n", ts_arith_cases[i].text);
        IrModel *m = tb_model(text);
        long ch = -1;
        IrModel *o = tb_run(m, "noop", &ch);
        T_CHECK(ch == (ts_arith_cases[i].gone ? 1 : 0), "noop %s: %ld changes, want %d",
                ts_arith_cases[i].what, ch, ts_arith_cases[i].gone);
        ir_model_free(o);
        ir_model_free(m);
    }
}

/* The chain exporters write (a classifier ORT left at 179 nodes, we at
 * 184): the static dims 1..2 of an x with a dynamic batch, through float,
 * into a Reshape target. Sliced from dim 0 (the symbol), nothing folds. */
static void ts_shape_chain(void)
{
    for (int from = 0; from < 2; from++) {
        char text[512];
        snprintf(text, sizeof text,
                 "input x float N,3,4,5\ninit st int64 1 %d\ninit en int64 1 3\n"
                 "init m1 int64 1 -1\ns = Shape x\nc = Cast s to=1\nsl = Slice c,st,en\n"
                 "c2 = Cast sl to=7\ncc = Concat m1,c2 axis=0\nr = Reshape x,cc\n"
                 "z = Relu r\noutput z\n", from);
        IrModel *m = tb_model(text);
        long ch = -1;
        IrModel *o = tb_run(m, NULL, &ch);
        size_t n = o ? o->graph->n_nodes : 0;
        if (from == 1)
            T_CHECK(n == 2 && tb_count(o, "Reshape") == 1,
                    "Shape->Cast->Slice->Cast->Concat of static dims: %zu nodes left "
                    "(want Reshape, Relu)", n);
        else
            T_CHECK(n == 7, "the same chain over the dynamic dim: %zu nodes left (want 7)", n);
        ir_model_free(o);
        ir_model_free(m);
    }
}

/* Two Ifs on condition c (an initializer, or the input when `input`),
 * whose branches use the same names: the first returns t = x+1 (then) or
 * x itself, a value of the main graph (else); the second, a graph output,
 * returns x*2 through an initializer of its own or Neg x. */
static IrModel *ts_if2_model(bool cond, bool input)
{
    char text[256];
    snprintf(text, sizeof text, "input x float 2,3\n%s\ny = If c\nw = If c\n"
             "z = Relu y\noutput z\noutput w\n",
             input ? "input c bool -" : cond ? "init c bool - 1" : "init c bool - 0");
    IrModel *m = tb_model(text);
    IrNode *k = m->graph->first, *k2 = k->next;
    ir_node_set_attr(k, ir_attr_graph("then_branch", ts_sub(m->graph, "then",
        "one = Constant value_float=1.0\nt = Add x,one\noutput t\n")));
    ir_node_set_attr(k, ir_attr_graph("else_branch", ts_sub(m->graph, "else",
        "output x\n")));
    IrGraph *g = ts_sub(m->graph, "then", "t = Mul x,two\noutput t\n");
    float two = 2;
    ir_graph_add_init(g, ir_tensor_new("two", 1, 0, NULL, &two, sizeof two));
    ir_node_set_attr(k2, ir_attr_graph("then_branch", g));
    ir_node_set_attr(k2, ir_attr_graph("else_branch", ts_sub(m->graph, "else",
        "t = Neg x\noutput t\n")));
    return ts_reload(m);
}

static void ts_if_const(void)
{
    for (int i = 0; i < 3; i++) {
        IrModel *m = ts_if2_model(i == 0, i == 2);
        long ch = -1;
        IrModel *o = m ? tb_run(m, "if_const", &ch) : NULL;
        /* the checker finds what it found before (the builder leaves
         * graph outputs untyped), nothing more: no name defined twice */
        ChkReport r;
        size_t errors = o ? chk_model(o, &r) : 1;
        if (o)
            chk_report_free(&r);
        if (m)
            errors -= chk_model(m, &r);
        if (m)
            chk_report_free(&r);
        const IrValue *w = o ? ir_graph_find_local(o->graph, "w") : NULL;
        if (i < 2)
            T_CHECK(o && ch == 2 && tb_count(o, "If") == 0 && errors == 0 && w &&
                    w->kind == IR_VAL_NODE,
                    "If on a constant %s: %ld changes, %zu If left, %zu checker errors, "
                    "output w %s", i ? "false" : "true", ch, o ? tb_count(o, "If") : 0,
                    errors, w ? "kept" : "lost");
        else
            T_CHECK(o && ch == 0 && tb_count(o, "If") == 2, "If on an input: %ld changes", ch);
        ir_model_free(o);
        ir_model_free(m);
    }
}

/* The converter takes the branch of an If whose condition is known (here
 * the Size of a static input): the branch not taken holds an Erf, which
 * has no form below opset 9, and must not block converting to 8. With the
 * condition a graph input, the Erf is refused. */
static void ts_convert_known_if(void)
{
    for (int known = 0; known <= 1; known++) {
        IrModel *m = tb_model(known ? "input x float 2,3\n"
                                      "s = Size x\n"
                                      "six = Constant value_int=6\n"
                                      "c = Equal s,six\n"
                                      "y = If c\n"
                                      "output y\n"
                                    : "input x float 2,3\n"
                                      "input c bool -\n"
                                      "y = If c\n"
                                      "output y\n");
        m->ir_version = 7;
        IrNode *k = m->graph->last;
        ir_node_set_attr(k, ir_attr_graph("then_branch", ts_sub(m->graph, "then",
            "one = Constant value_floats=[1.0,1.0,1.0]\nt = Add x,one\noutput t\n")));
        ir_node_set_attr(k, ir_attr_graph("else_branch", ts_sub(m->graph, "else",
            "e = Erf x\noutput e\n")));
        m = ts_reload(m);
        IrModel *orig = corpus_copy_model(m);
        CvOptions o = {.opset = 8};
        CvReport r = {0};
        IrError err;
        int rc = cv_convert(m, &o, &r, &err);
        if (known) {
            T_CHECK(rc == 0 && r.ifs_taken == 1, "known condition: %s (%zu Ifs taken)",
                    rc ? err.msg : "converted", r.ifs_taken);
            size_t ifs = tb_count(m, "If"), erfs = tb_count(m, "Erf");
            T_CHECK(ifs == 0 && erfs == 0, "%zu If and %zu Erf left", ifs, erfs);
            VfOptions vo = {.seed = 7};
            IrError ve;
            T_CHECK(orig && vf_compare(orig, m, &vo, &ve) == 0,
                    "outputs differ after taking the branch: %s", ve.msg);
        } else {
            T_CHECK(rc < 0 && r.reason && !strcmp(r.reason, "impossible"),
                    "run-time condition: want the Erf refused, got %s", rc ? err.msg : "ok");
        }
        cv_report_free(&r);
        ir_model_free(orig);
        ir_model_free(m);
    }
}

int main(void)
{
    ts_convert_known_if();
    ts_if_constants();
    ts_if_fold();
    ts_function_constant();
    ts_fold_no_input();
    ts_cse_no_input();
    ts_arith();
    ts_shape_chain();
    ts_if_const();
    return t_done("test_pass_scopes");
}
