/*
 * test_topo.c - the topological sort (src/ir/topo.c) and what uses it.
 *
 * Graphs are built here through the IR API in a correct order, then put
 * out of order with ir_node_move_before, so that the expected order is
 * known without asking the sort: stability (a sorted graph is untouched,
 * only the node written late moves), the float16 converter's layout
 * (input Cast after its readers), subgraphs that read a value of the
 * enclosing graph (at depth 1 and 2), subgraphs and function bodies and
 * training graphs sorted themselves, cycles refused naming a node with
 * nothing changed, a 100k-node chain written backwards sorted in well
 * under a second; then through job.c: `check` reports topo-order with its
 * hint, convert (with --verify) and optimize sort and report how many
 * nodes moved, in the text and JSON reports, and refuse a cycle; and the
 * C library's oc_convert, oc_optimize and oc_evaluate sort too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/check.h"
#include "ir/ir.h"
#include "driver/job.h"
#include "base/json.h"
#include "io/load.h"
#include "onnxconvert.h"
#include "io/save.h"
#include "t.h"
#include "ir/topo.h"

static void die(const char *what)
{
    fprintf(stderr, "test_topo: cannot build the model: %s\n", what);
    exit(2);
}

#include "api_models.h"

static IrNode *nd(IrGraph *g, const char *op, const char *name, size_t n_in,
                  const char *const *in, const char *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, "", name, n_in, in, out ? 1 : 0,
                            (const char *const[]){out}, &err);
    if (!n)
        die(err.msg);
    return n;
}
#define ND(g, op, name, out, ...)                                            \
    nd(g, op, name, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *), \
       (const char *const[]){__VA_ARGS__}, out)

static IrNode *find(IrGraph *g, const char *name)
{
    for (IrNode *n = g->first; n; n = n->next)
        if (n->name && !strcmp(n->name, name))
            return n;
    die(name);
    return NULL;
}

/* The node names of g in list order, comma separated (static buffer). */
static const char *order(const IrGraph *g)
{
    static char buf[4096];
    buf[0] = '\0';
    for (const IrNode *n = g->first; n; n = n->next) {
        if (buf[0])
            strncat(buf, ",", sizeof buf - strlen(buf) - 1);
        strncat(buf, n->name ? n->name : "?", sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

/* The prev links agree with the next links and with g->last. */
static bool links_ok(const IrGraph *g)
{
    const IrNode *prev = NULL;
    size_t n = 0;
    for (const IrNode *x = g->first; x; x = x->next, n++) {
        if (x->prev != prev)
            return false;
        prev = x;
    }
    return g->last == prev && n == g->n_nodes;
}

/* A model of opset 13, IR 8, with float input X [2,3]. */
static IrModel *model_new(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("main");
    int64_t d[2] = {2, 3};
    ir_graph_add_input(m->graph, "X", ir_type_tensor(IR_FLOAT, 2, d));
    return m;
}

static void output(IrGraph *g, const char *name, int32_t dt)
{
    int64_t d[2] = {2, 3};
    ir_graph_add_output(g, ir_graph_value(g, name), ir_type_tensor(dt, 2, d));
}

static size_t sort_ok(IrModel *m)
{
    size_t moved = 999;
    IrError err;
    int rc = topo_sort_model(m, &moved, &err);
    T_CHECK(rc == 0, "sort refused: %s", err.msg);
    return moved;
}

/* ---- the sort ------------------------------------------------------- */

/* a, b, c, d in order stay; a written last moves back alone. */
static void t_stable(void)
{
    IrModel *m = model_new();
    IrGraph *g = m->graph;
    ND(g, "Relu", "a", "A", "X");
    ND(g, "Neg", "b", "B", "A");
    ND(g, "Abs", "c", "C", "X");
    ND(g, "Add", "d", "D", "B", "C");
    output(g, "D", IR_FLOAT);
    T_CHECK(sort_ok(m) == 0, "a sorted graph: nothing moves");
    T_CHECK(!strcmp(order(g), "a,b,c,d"), "a sorted graph keeps its order: %s", order(g));
    ir_node_move_before(find(g, "a"), NULL);
    T_CHECK(!strcmp(order(g), "b,c,d,a"), "set-up: %s", order(g));
    T_CHECK(sort_ok(m) == 1, "one node moved");
    T_CHECK(!strcmp(order(g), "a,b,c,d"), "only a moved, just before its reader: %s",
            order(g));
    T_CHECK(links_ok(g), "the list's links are whole");
    /* independent nodes written after a late producer keep their place */
    ir_node_move_before(find(g, "c"), find(g, "a"));
    ir_node_move_before(find(g, "a"), find(g, "d"));
    T_CHECK(!strcmp(order(g), "c,b,a,d"), "set-up: %s", order(g));
    T_CHECK(sort_ok(m) == 1, "one node moved");
    T_CHECK(!strcmp(order(g), "c,a,b,d"), "c stays first, a goes before b: %s", order(g));
    ir_model_free(m);
}

/* The float16 converter's layout: X -> Cast graph_input_cast_0 -> ops ->
 * Cast graph_output_cast_0 -> Y, with both Casts written last. */
static IrModel *fp16_model(bool unsorted)
{
    IrModel *m = model_new();
    IrGraph *g = m->graph;
    IrNode *cin = ND(g, "Cast", "graph_input_cast_0", "graph_input_cast_0", "X");
    ir_node_set_attr(cin, ir_attr_int("to", IR_FLOAT16));
    ND(g, "Relu", "relu", "R", "graph_input_cast_0");
    ND(g, "Mul", "mul", "M", "R", "graph_input_cast_0");
    ND(g, "Sigmoid", "sig", "S", "M");
    ND(g, "Add", "add", "graph_output_cast_0", "S", "R");
    IrNode *cout = ND(g, "Cast", "graph_output_cast_0", "Y", "graph_output_cast_0");
    ir_node_set_attr(cout, ir_attr_int("to", IR_FLOAT));
    output(g, "Y", IR_FLOAT);
    if (unsorted) {
        ir_node_move_before(cin, NULL);
        ir_node_move_before(cout, cin);
    }
    return m;
}

static void t_fp16(void)
{
    IrModel *m = fp16_model(true);
    IrGraph *g = m->graph;
    T_CHECK(!strcmp(order(g), "relu,mul,sig,add,graph_output_cast_0,graph_input_cast_0"),
            "set-up: %s", order(g));
    ChkReport r;
    T_CHECK(chk_model(m, &r) > 0 && chk_first_error(&r) &&
            !strncmp(chk_first_error(&r), "topo-order:", 11) &&
            strstr(chk_first_error(&r), "'graph_input_cast_0'"),
            "the checker names the order: %s",
            chk_first_error(&r) ? chk_first_error(&r) : "(valid)");
    chk_report_free(&r);
    T_CHECK(sort_ok(m) == 1, "only the input Cast moves");
    T_CHECK(!strcmp(order(g), "graph_input_cast_0,relu,mul,sig,add,graph_output_cast_0"),
            "sorted: %s", order(g));
    T_CHECK(chk_model(m, &r) == 0, "valid once sorted: %s",
            chk_first_error(&r) ? chk_first_error(&r) : "");
    chk_report_free(&r);
    ir_model_free(m);
}

/* A subgraph (then-branch of an If) for node `owner_graph`'s If. */
static IrGraph *branch(IrGraph *parent, const char *name)
{
    IrGraph *b = ir_graph_new(parent);
    b->name = mem_strdup(name);
    return b;
}

static IrNode *add_if(IrGraph *g, const char *name, const char *cond, const char *out,
                      IrGraph *then_g, IrGraph *else_g)
{
    IrNode *n = ND(g, "If", name, out, cond);
    ir_node_set_attr(n, ir_attr_graph("then_branch", then_g));
    ir_node_set_attr(n, ir_attr_graph("else_branch", else_g));
    return n;
}

/* If reads T only inside its branches (one at depth 2); T's producer,
 * written after the If, must move before it. The branches' own nodes,
 * out of order, are sorted too. */
static void t_subgraphs(void)
{
    IrModel *m = model_new();
    IrGraph *g = m->graph;
    ND(g, "Relu", "t", "T", "X");
    ND(g, "Relu", "t2", "T2", "X");
    IrNode *c = ND(g, "Constant", "c", "C");
    ir_node_set_attr(c, ir_attr_tensor("value", ir_tensor_new("", IR_BOOL, 0, NULL,
                                                               (uint8_t[]){1}, 1)));
    IrGraph *th = branch(g, "then"), *el = branch(g, "else");
    ND(th, "Neg", "th_a", "TA", "T");
    ND(th, "Abs", "th_b", "TB", "TA");
    ir_graph_add_output(th, ir_graph_value(th, "TB"), NULL);
    /* else: an inner If whose branches read T2 (depth 2) */
    IrGraph *ith = branch(el, "inner_then"), *iel = branch(el, "inner_else");
    ND(ith, "Neg", "in_a", "IA", "T2");
    ir_graph_add_output(ith, ir_graph_value(ith, "IA"), NULL);
    ir_graph_add_output(iel, ir_graph_value(g, "T2"), NULL);
    add_if(el, "inner_if", "C", "EO", ith, iel);
    ir_graph_add_output(el, ir_graph_value(el, "EO"), NULL);
    add_if(g, "if", "C", "Y", th, el);
    output(g, "Y", IR_FLOAT);
    T_CHECK(sort_ok(m) == 0, "a sorted model: nothing moves");
    /* T and T2 produced after the If; the then-branch's nodes reversed */
    ir_node_move_before(find(g, "t"), NULL);
    ir_node_move_before(find(g, "t2"), NULL);
    ir_node_move_before(find(th, "th_a"), NULL);
    T_CHECK(!strcmp(order(g), "c,if,t,t2"), "set-up: %s", order(g));
    ChkReport r;
    T_CHECK(chk_model(m, &r) > 0 && strstr(chk_first_error(&r), "topo-order"),
            "the checker sees it: %s", chk_first_error(&r) ? chk_first_error(&r) : "");
    chk_report_free(&r);
    size_t moved = sort_ok(m);
    T_CHECK(moved == 1 + 1, "if (main: fewer than t and t2), th_a (branch): %zu", moved);
    T_CHECK(!strcmp(order(g), "c,t,t2,if"), "outer-scope reads count: %s", order(g));
    T_CHECK(!strcmp(order(th), "th_a,th_b"), "the branch is sorted: %s", order(th));
    T_CHECK(links_ok(g) && links_ok(th), "links whole");
    T_CHECK(chk_model(m, &r) == 0, "valid once sorted: %s",
            chk_first_error(&r) ? chk_first_error(&r) : "");
    chk_report_free(&r);
    ir_model_free(m);
}

/* A function body and a training algorithm graph written out of order. */
static void t_functions_training(void)
{
    IrModel *m = model_new();
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("F");
    f->domain = mem_strdup("local");
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    ir_graph_add_input(f->body, "fx", NULL);
    ND(f->body, "Relu", "f1", "F1", "fx");
    ND(f->body, "Neg", "f2", "F2", "F1");
    ND(f->body, "Abs", "f3", "fy", "F2");
    ir_graph_add_output(f->body, ir_graph_value(f->body, "fy"), NULL);
    m->functions = mem_array(1, sizeof *m->functions);
    m->functions[m->n_functions++] = f;
    ir_node_move_before(find(f->body, "f3"), find(f->body, "f1"));
    ir_node_move_before(find(f->body, "f1"), NULL);
    T_CHECK(!strcmp(order(f->body), "f3,f2,f1"), "set-up: %s", order(f->body));

    m->training = mem_array(1, sizeof *m->training);
    m->n_training = 1;
    IrGraph *alg = m->training[0].algorithm = ir_graph_new(NULL);
    alg->name = mem_strdup("alg");
    int64_t d[2] = {2, 3};
    ir_graph_add_input(alg, "AX", ir_type_tensor(IR_FLOAT, 2, d));
    ND(alg, "Relu", "a1", "A1", "AX");
    ND(alg, "Neg", "a2", "A2", "A1");
    ir_node_move_before(find(alg, "a1"), NULL);

    ND(m->graph, "Relu", "main", "Y", "X");
    output(m->graph, "Y", IR_FLOAT);
    size_t moved = sort_ok(m);
    T_CHECK(moved == 2 + 1, "2 in the function, 1 in training: %zu", moved);
    T_CHECK(!strcmp(order(f->body), "f1,f2,f3"), "function body: %s", order(f->body));
    T_CHECK(!strcmp(order(alg), "a1,a2"), "training graph: %s", order(alg));
    T_CHECK(links_ok(f->body) && links_ok(alg), "links whole");
    ir_model_free(m);
}

/* A cycle is refused naming a node on it, and nothing changes, although
 * another scope (the function body) could be sorted. */
static void t_cycles(void)
{
    IrModel *m = model_new();
    IrGraph *g = m->graph;
    ND(g, "Relu", "first", "A0", "X");
    ND(g, "Add", "p", "P", "A0", "Q");   /* reads Q, made by q, which reads P */
    ND(g, "Neg", "q", "Q", "P");
    ND(g, "Relu", "late", "L", "X");
    ND(g, "Abs", "reader", "Y", "L");
    ir_node_move_before(find(g, "late"), NULL);
    output(g, "Y", IR_FLOAT);
    const char *before = "first,p,q,reader,late";
    T_CHECK(!strcmp(order(g), before), "set-up: %s", order(g));
    IrError err;
    size_t moved = 7;
    int rc = topo_sort_model(m, &moved, &err);
    T_CHECK(rc < 0, "a cycle is refused");
    T_CHECK(rc < 0 && (strstr(err.msg, "node 'p' (Add)") || strstr(err.msg, "node 'q' (Neg)")) &&
            strstr(err.msg, "graph 'main'") && strstr(err.msg, "cycle") &&
            !strchr(err.msg, '\n'),
            "names a node on it, in one line: %s", rc < 0 ? err.msg : "");
    T_CHECK(!strcmp(order(g), before) && moved == 0, "nothing changed: %s", order(g));
    ir_model_free(m);

    /* the cycle in a function body, planned after the main graph, whose
     * sort is dropped with it */
    m = model_new();
    g = m->graph;
    ND(g, "Relu", "late", "L", "X");
    ND(g, "Abs", "reader", "Y", "L");
    ir_node_move_before(find(g, "late"), NULL);
    output(g, "Y", IR_FLOAT);
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("F");
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    ND(f->body, "Add", "fp", "FP", "FQ", "FQ");
    ND(f->body, "Neg", "fq", "FQ", "FP");
    m->functions = mem_array(1, sizeof *m->functions);
    m->functions[m->n_functions++] = f;
    rc = topo_sort_model(m, NULL, &err);
    T_CHECK(rc < 0 && strstr(err.msg, "function 'F': node 'f"), "cycle in a function: %s",
            rc < 0 ? err.msg : "accepted");
    T_CHECK(!strcmp(order(g), "reader,late"), "the main graph is left as it was: %s",
            order(g));
    ir_model_free(m);

    /* a node reading its own output */
    m = model_new();
    ND(m->graph, "Add", "self", "S", "X", "S");
    output(m->graph, "S", IR_FLOAT);
    rc = topo_sort_model(m, NULL, &err);
    T_CHECK(rc < 0 && strstr(err.msg, "node 'self' (Add)"), "self loop: %s",
            rc < 0 ? err.msg : "accepted");
    ir_model_free(m);

    /* through a subgraph: the If's branch reads N, and N's node reads
     * the If's output */
    m = model_new();
    g = m->graph;
    IrNode *c = ND(g, "Constant", "c", "C");
    ir_node_set_attr(c, ir_attr_tensor("value", ir_tensor_new("", IR_BOOL, 0, NULL,
                                                               (uint8_t[]){1}, 1)));
    ND(g, "Neg", "n", "N", "Y");
    IrGraph *th = branch(g, "then"), *el = branch(g, "else");
    ND(th, "Relu", "deep", "DR", "N");
    ir_graph_add_output(th, ir_graph_value(th, "DR"), NULL);
    ir_graph_add_output(el, ir_graph_value(g, "X"), NULL);
    add_if(g, "loopy_if", "C", "Y", th, el);
    output(g, "Y", IR_FLOAT);
    rc = topo_sort_model(m, NULL, &err);
    T_CHECK(rc < 0 && (strstr(err.msg, "'loopy_if' (If)") || strstr(err.msg, "'n' (Neg)")),
            "cycle through a subgraph: %s", rc < 0 ? err.msg : "accepted");
    ir_model_free(m);
}

/* 100k nodes, each reading the one before, written last to first. */
static void t_big_chain(void)
{
    enum { N = 100000 };
    IrModel *m = model_new();
    IrGraph *g = m->graph;
    IrError err;
    char in[32], out[32], name[32];
    for (int i = 0; i < N; i++) {
        snprintf(in, sizeof in, i ? "v%d" : "X", i - 1);
        snprintf(out, sizeof out, "v%d", i);
        snprintf(name, sizeof name, "n%d", i);
        if (!ir_node_new(g, g->first, "Relu", "", name, 1, (const char *const[]){in}, 1,
                         (const char *const[]){out}, &err))
            die(err.msg);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t moved = 0;
    int rc = topo_sort_model(m, &moved, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    T_CHECK(rc == 0 && moved == N - 1, "reversed chain: rc %d, moved %zu", rc, moved);
    int i = 0;
    bool in_order = true;
    for (IrNode *n = g->first; n; n = n->next, i++) {
        snprintf(name, sizeof name, "n%d", i);
        in_order = in_order && !strcmp(n->name, name);
    }
    T_CHECK(in_order && i == N && links_ok(g), "the chain is in order");
    /* a quadratic scan would take minutes; sanitized builds are ~5x slower */
    T_CHECK(s < 3.0, "100k nodes sorted in %.3f s", s);
    printf("100k-node reversed chain sorted in %.3f s\n", s);
    ir_model_free(m);
}

/* ---- through job.c -------------------------------------------------- */

static char tmpdir[256];

static void save(IrModel *m, const char *path)
{
    IrError err;
    if (save_model_file(m, path, NULL, &err))
        die(err.msg);
    ir_model_free(m);
}

static bool json_has(const JobReport *r, const char *needle)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        die("open_memstream");
    Js j;
    js_init(&j, f, 0);
    job_json(&j, r);
    fclose(f);
    bool found = buf && strstr(buf, needle) != NULL;
    if (!found)
        fprintf(stderr, "JSON: %s\n", buf ? buf : "(none)");
    free(buf);
    return found;
}

static void t_jobs(void)
{
    char unsorted[400], cyc[400], out[400];
    snprintf(unsorted, sizeof unsorted, "%s/fp16.onnx", tmpdir);
    snprintf(cyc, sizeof cyc, "%s/cycle.onnx", tmpdir);
    snprintf(out, sizeof out, "%s/out.onnx", tmpdir);
    save(fp16_model(true), unsorted);
    IrModel *m = model_new();
    ND(m->graph, "Add", "p", "P", "X", "Q");
    ND(m->graph, "Neg", "q", "Q", "P");
    output(m->graph, "Q", IR_FLOAT);
    save(m, cyc);

    JobReport r;
    T_CHECK(job_check(unsorted, false, &r, NULL) < 0 && r.status == JOB_INVALID &&
            !strcmp(r.reason, "topo-order") && strstr(r.msg, "graph_input_cast_0") &&
            strstr(r.msg, "convert"),
            "check: topo-order with the hint: %s", r.msg);
    job_report_free(&r);

    int64_t targets[] = {9, 13, 17, 21};
    for (size_t k = 0; k < sizeof targets / sizeof *targets; k++) {
        JobOptions o = {.command = "convert", .cv.opset = targets[k], .verify = true,
                        .save.external_threshold = 1024};
        int rc = job_convert(&o, unsorted, out, &r, NULL);
        T_CHECK(rc == 0 && r.sorted == 1 && r.verified == 1,
                "convert --opset %lld --verify: rc %d, sorted %zu, verified %d: %s",
                (long long)targets[k], rc, r.sorted, r.verified, r.msg);
        T_CHECK(rc != 0 || json_has(&r, "\"sorted\": 1"), "JSON says sorted: 1");
        job_report_free(&r);
        IrModel *back;
        IrError err;
        if (rc == 0 && load_model_file(out, NULL, &back, &err) == 0) {
            ChkReport c;
            T_CHECK(chk_model(back, &c) == 0 &&
                    !strncmp(order(back->graph), "graph_input_cast_0,", 19),
                    "the output is sorted and valid: %s %s", order(back->graph),
                    chk_first_error(&c) ? chk_first_error(&c) : "");
            chk_report_free(&c);
            ir_model_free(back);
        }
    }
    JobOptions oo = {.command = "optimize", .optimize = true, .verify = true,
                     .save.external_threshold = 1024};
    int rc = job_convert(&oo, unsorted, out, &r, NULL);
    T_CHECK(rc == 0 && r.sorted == 1 && r.verified == 1, "optimize --verify: %s", r.msg);
    job_report_free(&r);

    remove(out);
    JobOptions oc = {.command = "convert", .cv.opset = 17, .save.external_threshold = 1024};
    rc = job_convert(&oc, cyc, out, &r, NULL);
    T_CHECK(rc < 0 && r.status == JOB_INVALID && !strcmp(r.stage, "check") &&
            !strcmp(r.reason, "topo-order") && strstr(r.msg, "cycle") &&
            (strstr(r.msg, "'p' (Add)") || strstr(r.msg, "'q' (Neg)")) &&
            access(out, F_OK) != 0,
            "a cycle refused, nothing written: %s", r.msg);
    T_CHECK(rc < 0 && json_has(&r, "\"sorted\": null"), "JSON: sorted null when refused");
    job_report_free(&r);
    remove(unsorted);
    remove(cyc);
    remove(out);
}

/* ---- through the C library ------------------------------------------ */


/* Y of the float16 model on fixed inputs; false when oc_evaluate fails. */
static bool api_eval(oc_model *m, float y[6])
{
    oc_tensor *in, *out;
    size_t n_in, n_out;
    if (oc_model_inputs(m, &in, &n_in) < 0 || n_in != 1)
        return false;
    for (size_t i = 0; i < 6; i++)
        ((float *)in[0].data)[i] = (float)i * 0.75f - 2.0f;
    int rc = oc_evaluate(m, in, n_in, &out, &n_out);
    oc_tensors_free(in, n_in);
    if (rc < 0 || n_out != 1 || out[0].size != 6 * sizeof(float))
        return false;
    memcpy(y, out[0].data, 6 * sizeof(float));
    oc_tensors_free(out, n_out);
    return true;
}

static void t_api(void)
{
    float want[6], got[6];
    oc_model *sorted = am_from_ir(fp16_model(false));
    T_CHECK(api_eval(sorted, want), "the sorted model runs: %s", oc_error());
    oc_model_free(sorted);

    oc_model *m = am_from_ir(fp16_model(true));
    T_CHECK(oc_check(m) < 0 && !strncmp(oc_error(), "topo-order:", 11),
            "oc_check names the order: %s", oc_error());
    T_CHECK(api_eval(m, got) && !memcmp(got, want, sizeof got),
            "oc_evaluate sorts, and computes what the sorted model does: %s", oc_error());
    oc_model_free(m);
    m = am_from_ir(fp16_model(true));
    T_CHECK(oc_convert(m, 17) == 0 && oc_model_opset(m, "") == 17, "oc_convert: %s",
            oc_error());
    T_CHECK(api_eval(m, got) && !memcmp(got, want, sizeof got), "converted, same: %s",
            oc_error());
    oc_model_free(m);
    m = am_from_ir(fp16_model(true));
    T_CHECK(oc_optimize(m, NULL) == 0, "oc_optimize: %s", oc_error());
    oc_model_free(m);

    IrModel *ir = model_new();
    ND(ir->graph, "Add", "p", "P", "X", "Q");
    ND(ir->graph, "Neg", "q", "Q", "P");
    output(ir->graph, "Q", IR_FLOAT);
    m = am_from_ir(ir);
    T_CHECK(oc_convert(m, 17) < 0 && !strncmp(oc_error(), "topo-order:", 11) &&
            strstr(oc_error(), "cycle") && oc_model_opset(m, "") == 13,
            "a cycle refused, the model left as it was: %s", oc_error());
    oc_model_free(m);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/oc_topo_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        die("mkdtemp");
    t_stable();
    t_fp16();
    t_subgraphs();
    t_functions_training();
    t_cycles();
    t_big_chain();
    t_jobs();
    t_api();
    rmdir(tmpdir);
    return t_done("test_topo");
}
