/*
 * The converter keeps what it does not convert: model-local functions (and
 * converts their bodies), training_info graphs, metadata, doc strings,
 * value_info and unknown fields survive a conversion and a save/load after
 * it; an older IR version that cannot hold a field is refused naming it;
 * custom domains pass through and are reported.
 */
#include <stdlib.h>
#include <string.h>

#include "convert/convert.h"
#include "io/load.h"
#include "io/save.h"
#include "t.h"

/* An unknown varint field (tag, value) for a message's `unk`. */
static void add_unknown(IrUnknown *u, uint32_t tag, uint8_t value)
{
    u->f = mem_grow(u->f, u->n + 1, sizeof *u->f);
    IrUnknownField *f = &u->f[u->n++];
    memset(f, 0, sizeof *f);
    f->tag = tag;
    f->wire_type = 0;
    f->len = 1;
    f->data = mem_alloc(1);
    f->data[0] = value;
}

static IrNode *add_node(IrGraph *g, const char *op, const char *domain,
                        const char *name, const char *a, const char *b, const char *out)
{
    const char *in[2] = {a, b};
    const char *o[1] = {out};
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, domain, name, b ? 2 : 1, in, 1, o, &err);
    T_CHECK(n != NULL, "node %s: %s", name, n ? "" : err.msg);
    return n;
}

/* main: x, y -> Add -> s -> f(local) -> z -> custom.Op -> w; value_info on s;
 * a function f(a, b) = Add(a, b) importing ai.onnx itself; a training
 * algorithm graph with an Add. */
static IrModel *build(int64_t opset, int64_t ir)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = ir;
    ir_model_set_opset(m, "", opset);
    ir_model_set_opset(m, "local", 1);
    ir_model_set_opset(m, "com.example", 1);
    m->producer_name = mem_strdup("test");
    m->doc_string = mem_strdup("model doc");
    ir_strmap_set(&m->meta, "author", "someone");
    add_unknown(&m->unk, 900, 7);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("main");
    g->doc_string = mem_strdup("graph doc");
    add_unknown(&g->unk, 901, 8);
    int64_t d[1] = {3};
    ir_graph_add_input(g, "x", ir_type_tensor(1, 1, d));
    ir_graph_add_input(g, "y", ir_type_tensor(1, 1, d));
    IrNode *add = add_node(g, "Add", NULL, "add", "x", "y", "s");
    add->doc_string = mem_strdup("node doc");
    add_unknown(&add->unk, 902, 9);
    add_node(g, "f", "local", "call", "s", "y", "z");
    add_node(g, "Op", "com.example", "custom", "z", NULL, "w");
    ir_graph_add_value_info(g, ir_graph_find_local(g, "s"), ir_type_tensor(1, 1, d));
    ir_graph_add_output(g, ir_graph_find_local(g, "w"), ir_type_tensor(1, 1, d));

    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("f");
    f->domain = mem_strdup("local");
    f->doc_string = mem_strdup("function doc");
    f->n_opsets = 1;
    f->opsets = mem_alloc(sizeof *f->opsets);
    f->opsets[0].domain = mem_strdup("");
    f->opsets[0].has_version = true;
    f->opsets[0].version = opset;
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    ir_graph_add_input(f->body, "a", NULL);
    ir_graph_add_input(f->body, "b", NULL);
    add_node(f->body, "Add", NULL, "fadd", "a", "b", "c");
    ir_graph_add_output(f->body, ir_graph_find_local(f->body, "c"), NULL);
    m->functions = mem_alloc(sizeof *m->functions);
    m->functions[0] = f;
    m->n_functions = 1;

    m->training = mem_alloc(sizeof *m->training);
    m->n_training = 1;
    IrGraph *alg = m->training[0].algorithm = ir_graph_new(NULL);
    alg->name = mem_strdup("algorithm");
    ir_graph_add_input(alg, "p", ir_type_tensor(1, 1, d));
    add_node(alg, "Add", NULL, "tadd", "p", "p", "q");
    ir_graph_add_output(alg, ir_graph_find_local(alg, "q"), ir_type_tensor(1, 1, d));
    ir_strmap_set(&m->training[0].update_binding, "p", "q");
    return m;
}

/* Everything build() put in is still in m, at opset `opset`. */
static void check_kept(const IrModel *m, int64_t opset, const char *what)
{
    T_CHECK(ir_model_opset(m, "") == opset, "%s: opset %lld", what,
            (long long)ir_model_opset(m, ""));
    T_CHECK(ir_model_opset(m, "local") == 1 && ir_model_opset(m, "com.example") == 1,
            "%s: other imports kept", what);
    T_CHECK(m->producer_name && !strcmp(m->producer_name, "test"), "%s: producer", what);
    T_CHECK(m->doc_string && !strcmp(m->doc_string, "model doc"), "%s: model doc", what);
    T_CHECK(m->meta.n == 1 && !strcmp(m->meta.p[0].value, "someone"), "%s: metadata", what);
    T_CHECK(m->unk.n == 1 && m->unk.f[0].tag == 900, "%s: model unknown field", what);
    const IrGraph *g = m->graph;
    T_CHECK(g->doc_string && !strcmp(g->doc_string, "graph doc"), "%s: graph doc", what);
    T_CHECK(g->unk.n == 1 && g->unk.f[0].tag == 901, "%s: graph unknown field", what);
    T_CHECK(g->n_nodes == 3, "%s: %zu nodes in main", what, g->n_nodes);
    const IrNode *add = g->first;
    T_CHECK(add && add->doc_string && !strcmp(add->doc_string, "node doc"), "%s: node doc", what);
    T_CHECK(add && add->unk.n == 1 && add->unk.f[0].tag == 902, "%s: node unknown field", what);
    T_CHECK(g->value_info.n == 1, "%s: value_info kept", what);
    T_CHECK(g->last && !strcmp(g->last->domain, "com.example"), "%s: custom node kept", what);
    T_CHECK(m->n_functions == 1, "%s: function kept", what);
    if (m->n_functions == 1) {
        const IrFunction *f = m->functions[0];
        T_CHECK(f->doc_string && !strcmp(f->doc_string, "function doc"), "%s: function doc", what);
        T_CHECK(f->n_opsets == 1 && f->opsets[0].version == opset,
                "%s: function's import converted (%lld)", what,
                (long long)(f->n_opsets ? f->opsets[0].version : -1));
        T_CHECK(f->body && f->body->n_nodes == 1, "%s: function body kept", what);
    }
    T_CHECK(m->n_training == 1 && m->training[0].algorithm &&
                m->training[0].algorithm->n_nodes == 1 && m->training[0].update_binding.n == 1,
            "%s: training_info kept", what);
}

static IrModel *reload(const IrModel *m)
{
    uint8_t *buf;
    size_t len;
    IrError err;
    IrModel *out = NULL;
    T_CHECK(save_model_buffer(m, &buf, &len, &err) == 0, "save: %s", err.msg);
    T_CHECK(load_model_buffer(buf, len, NULL, "converted", NULL, &out, &err) == 0,
            "load: %s", err.msg);
    free(buf);
    return out;
}

static void test_kept(int64_t from, int64_t to)
{
    IrModel *m = build(from, 8);
    CvOptions o = {.opset = to, .ir_version = 8};
    CvReport r = {0};
    IrError err;
    char what[64];
    snprintf(what, sizeof what, "%lld -> %lld", (long long)from, (long long)to);
    T_CHECK(cv_convert(m, &o, &r, &err) == 0, "%s: %s", what, err.msg);
    T_CHECK(r.n_custom == 2, "%s: custom domains reported (%zu)", what, r.n_custom);
    check_kept(m, to, what);
    IrModel *again = reload(m);
    if (again) {
        strncat(what, " saved", sizeof what - strlen(what) - 1);
        check_kept(again, to, what);
        ir_model_free(again);
    }
    cv_report_free(&r);
    ir_model_free(m);
}

/* Converting to the same opset never lowers the IR below the input's:
 * IR 8 keeps the functions (it used to fall to the table's IR 7 and refuse
 * them, issue 19). An explicit IR 7 would inline them, but the model's
 * unknown fields may be IR 8's: refused, named. */
static void test_ir_same_opset(void)
{
    IrModel *m = build(13, 8);
    CvOptions o = {.opset = 13};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) == 0, "opset 13 -> 13 at IR 8: %s", err.msg);
    T_CHECK(m->ir_version == 8 && r.ir_to == 8 && m->n_functions == 1 && r.n_dropped == 0,
            "IR %lld, %zu functions, %zu dropped", (long long)m->ir_version, m->n_functions,
            r.n_dropped);
    cv_report_free(&r);
    ir_model_free(m);
    m = build(13, 8);
    o.ir_version = 7;
    r = (CvReport){0};
    T_CHECK(cv_convert(m, &o, &r, &err) < 0, "IR 7 with unknown fields of IR 8");
    T_CHECK(r.reason && !strcmp(r.reason, "ir-version"), "reason %s", r.reason ? r.reason : "-");
    T_CHECK(strstr(err.msg, "unknown field") != NULL, "names the field: %s", err.msg);
    cv_report_free(&r);
    ir_model_free(m);
}

/* Unknown fields may be fields of a newer IR: refused when going older. */
static void test_unknown_refusal(void)
{
    IrModel *m = build(14, 9);
    CvOptions o = {.opset = 14, .ir_version = 8};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) < 0, "unknown fields refused when IR goes 9 -> 8");
    T_CHECK(strstr(err.msg, "unknown field 900") != NULL, "names the field: %s", err.msg);
    cv_report_free(&r);
    ir_model_free(m);
}

/* A function body's values take their types from the calls. With one
 * float call, f's Add goes to opset 13 (test_kept); with a second call
 * passing int8, which Add-13 lacks, the calls disagree and the body's Add
 * is refused, named. */
static void test_function_types(void)
{
    IrModel *m = build(14, 8);
    IrGraph *g = m->graph;
    int64_t d[1] = {3};
    ir_graph_add_input(g, "i", ir_type_tensor(3, 1, d));
    add_node(g, "f", "local", "call2", "i", "i", "z2");
    ir_graph_add_output(g, ir_graph_find_local(g, "z2"), ir_type_tensor(3, 1, d));
    CvOptions o = {.opset = 13, .ir_version = 8};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) < 0, "Add 14 -> 13 in a body called with int8 refused");
    T_CHECK(strstr(err.msg, "'fadd'") && r.reason && !strcmp(r.reason, "type-unknown"),
            "names the body's node: %s", err.msg);
    cv_report_free(&r);
    ir_model_free(m);
}

int main(void)
{
    test_function_types();
    test_kept(13, 14);
    test_kept(14, 14);
    test_ir_same_opset();
    test_unknown_refusal();
    return t_done("test_convert");
}
