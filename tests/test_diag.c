/*
 * test_diag.c - the one diagnostic (src/ir/diag.h): every reason has its own
 * JSON name and parses back; the node label in every case (named,
 * unnamed with an index, neither, another domain, with and without a
 * version and a step); and a converter refusal printed through it, from
 * the driver (cv_refuse) and from an adapter (ad_refuse).
 */
#include <stdlib.h>
#include <string.h>

#include "convert/convert.h"
#include "ir/diag.h"
#include "t.h"

/* Every reason's name is non-empty, distinct and parses back to it;
 * unknown names parse to DG_NONE. */
static void test_reason_names(void)
{
    for (int r = 1; r < DG_N_REASONS; r++) {
        const char *nm = dg_reason_name((DgReason)r);
        T_CHECK(nm && *nm, "reason %d has a name", r);
        T_CHECK(dg_reason_parse(nm) == (DgReason)r, "'%s' parses back to %d", nm, r);
        for (int q = 1; q < r; q++)
            T_CHECK(strcmp(nm, dg_reason_name((DgReason)q)) != 0,
                    "reasons %d and %d share the name '%s'", q, r, nm);
    }
    T_CHECK(dg_reason_parse("no-such-reason") == DG_NONE, "unknown name");
    T_CHECK(dg_reason_parse(NULL) == DG_NONE && dg_reason_parse("") == DG_NONE, "empty name");
    T_CHECK(!strcmp(dg_reason_name(DG_NONE), "") &&
            !strcmp(dg_reason_name((DgReason)DG_N_REASONS), ""), "no name out of range");
    /* the keys the JSON contract has always used (docs/json.md) */
    T_CHECK(!strcmp(dg_reason_name(DG_NOT_CONSTANT), "not-constant") &&
            !strcmp(dg_reason_name(DG_TYPE_ABSENT), "type-absent") &&
            !strcmp(dg_reason_name(DG_SHAPE_UNKNOWN), "shape-unknown") &&
            !strcmp(dg_reason_name(DG_IR_VERSION), "ir-version"), "contract names");
    for (int s = 1; s < DG_N_STAGES; s++)
        T_CHECK(dg_stage_parse(dg_stage_name((DgStage)s)) == (DgStage)s, "stage %d", s);
    DgDiag d = dg_none();
    d.reason = DG_RULE;
    d.rule = "arity";
    T_CHECK(!strcmp(dg_diag_reason(&d), "arity"), "a checker rule is its own reason");
    d.reason = DG_NOT_CONSTANT;
    T_CHECK(!strcmp(dg_diag_reason(&d), "not-constant"), "reason name");
}

static void check_label(const DgDiag *d, const char *want)
{
    char buf[256];
    dg_label(d, buf, sizeof buf);
    T_CHECK(!strcmp(buf, want), "label '%s', want '%s'", buf, want);
}

static void test_labels(void)
{
    DgDiag d = dg_none();
    d.node = "conv1";
    d.op = "Relu";
    d.version = 6;
    check_label(&d, "node 'conv1' (Relu-6)");
    d.index = 4;
    check_label(&d, "node 'conv1' (Relu-6)");  /* a name wins over the index */
    d.node = "";
    check_label(&d, "node #4 (Relu-6)");
    d.node = NULL;
    d.version = 0;
    check_label(&d, "node #4 (Relu)");
    d.index = -1;
    check_label(&d, "node '' (Relu)");
    d.domain = "ai.onnx";
    check_label(&d, "node '' (Relu)");
    d.domain = "ai.onnx.ml";
    d.op = "LabelEncoder";
    d.version = 2;
    d.index = 0;
    check_label(&d, "node #0 (ai.onnx.ml:LabelEncoder-2)");
    char small[8];
    dg_label(&d, small, sizeof small);
    T_CHECK(strlen(small) == 7 && !strncmp(small, "node #0", 7), "truncated: '%s'", small);
}

static void check_line(const DgDiag *d, const char *want)
{
    char buf[256];
    int n = dg_format(d, buf, sizeof buf);
    T_CHECK(!strcmp(buf, want) && n == (int)strlen(want), "line '%s', want '%s'", buf, want);
}

static void test_lines(void)
{
    DgDiag d = dg_none();
    d.msg = "cannot read x.onnx";
    check_line(&d, "cannot read x.onnx");
    d.node = "n";
    d.op = "Softmax";
    d.version = 13;
    d.msg = "axis is out of range";
    check_line(&d, "node 'n' (Softmax-13): axis is out of range");
    d.step_from = 13;
    d.step_to = 12;
    check_line(&d, "node 'n' (Softmax-13): opset 13 -> 12: axis is out of range");
    d.node = "";
    d.index = 2;
    d.domain = "com.example";
    check_line(&d, "node #2 (com.example:Softmax-13): opset 13 -> 12: axis is out of range");
    char where[128];
    dg_where(&d, where, sizeof where);
    T_CHECK(!strcmp(where, "node #2 (com.example:Softmax-13): opset 13 -> 12"), "where '%s'",
            where);
    d.step_from = 0;
    dg_where(&d, where, sizeof where);
    T_CHECK(!strcmp(where, "node #2 (com.example:Softmax-13)"), "where '%s'", where);
    d.op = NULL;
    dg_where(&d, where, sizeof where);
    T_CHECK(!strcmp(where, ""), "no node, no where: '%s'", where);
}

static IrNode *add_node(IrGraph *g, const char *op, const char *name, const char *in,
                        const char *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, "", name, 1, (const char *const[]){in}, 1,
                            (const char *const[]){out}, &err);
    T_CHECK(n != NULL, "node %s: %s", name, n ? "" : err.msg);
    return n;
}

/* x -> Relu 'r' -> y -> OP (unnamed) -> z at `opset`, converted to `to`:
 * the refusal names the unnamed node by its index, its version and the
 * step, and reports `reason`. */
static void check_refusal(const char *op, int64_t axis, int64_t opset, int64_t to,
                          const char *want, const char *reason)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", opset);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("main");
    int64_t d[2] = {2, 3};
    ir_graph_add_input(g, "x", ir_type_tensor(1, 2, d));
    add_node(g, "Relu", "r", "x", "y");
    IrNode *k = add_node(g, op, "", "y", "z");
    if (axis)
        ir_node_set_attr(k, ir_attr_int("axis", axis));
    ir_graph_add_output(g, ir_graph_find_local(g, "z"), ir_type_tensor(1, 2, d));
    CvOptions o = {.opset = to};
    CvReport r = {0};
    IrError err;
    T_CHECK(cv_convert(m, &o, &r, &err) < 0, "%s %lld -> %lld refused", op,
            (long long)opset, (long long)to);
    T_CHECK(!strncmp(err.msg, want, strlen(want)), "message '%s', want '%s...'", err.msg, want);
    T_CHECK(r.reason && !strcmp(r.reason, reason), "reason %s, want %s",
            r.reason ? r.reason : "-", reason);
    T_CHECK(r.fail_index == 1 && r.fail_version == (int)opset && r.fail_op &&
            !strcmp(r.fail_op, op), "the report names node #1 (%s-%lld): #%lld (%s-%d)", op,
            (long long)opset, r.fail_index, r.fail_op ? r.fail_op : "-", r.fail_version);
    cv_report_free(&r);
    ir_model_free(m);
}

int main(void)
{
    test_reason_names();
    test_labels();
    test_lines();
    /* the driver refuses (an impossible step) */
    check_refusal("Erf", 0, 9, 8, "node #1 (Erf-9): opset 9 -> 8: Erf has no exact", "impossible");
    /* an adapter refuses (Softmax-11's axis -5 fits no rank-2 input) */
    check_refusal("Softmax", -5, 11, 10, "node #1 (Softmax-11): opset 11 -> 10: axis -5",
                  "attribute");
    return t_done("test_diag");
}
