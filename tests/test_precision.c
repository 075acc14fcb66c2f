/*
 * test_precision.c - src/precision/precision.c: --dtype and --store on models built
 * here. Every result must pass the checker, be in topological order and
 * have no Cast reading a Cast.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "analysis/infer.h"
#include "driver/job.h"
#include "passes_build.h"
#include "precision/precision.h"
#include "io/save.h"
#include "eval/verify.h"
#include "t.h"
#include "ir/topo.h"
#include "precision_sane.h"

/* The chain of the issue: Conv -> Relu -> MatMul -> Softmax. */
static const char *CHAIN =
    "opset 13\n"
    "input x float 1,3,8,8\n"
    "init W float 4,3,3,3 rand\n"
    "init B float 4 rand\n"
    "init M float 8,8 rand\n"
    "c = Conv x,W,B pads=[1,1,1,1]\n"
    "r = Relu c\n"
    "mm = MatMul r,M\n"
    "y = Softmax mm\n"
    "output y\n";

/* Converts m in place as o says; the report goes to r. */
static int pc_run(IrModel *m, const PcOptions *o, PcReport *r, const char *what)
{
    IrError err;
    int rc = pc_convert(m, o, r, &err);
    T_CHECK(rc == 0, "%s: %s", what, err.msg);
    if (rc == 0)
        ps_assert_sane(m, what);
    return rc;
}

static int32_t pc_in_type(const IrModel *m, size_t i)
{
    return ((IrValueInfo *)m->graph->inputs.p[i])->type->elem_type;
}

static int32_t pc_out_type(const IrModel *m, size_t i)
{
    return ((IrValueInfo *)m->graph->outputs.p[i])->type->elem_type;
}

static const IrTensor *pc_init(const IrModel *m, const char *name)
{
    const IrValue *v = ir_graph_find_local(m->graph, name);
    return v ? v->init : NULL;
}

static int32_t pc_init_type(const IrModel *m, const char *name)
{
    const IrTensor *t = pc_init(m, name);
    return t ? t->data_type : -1;
}

static const IrNode *pc_node(const IrModel *m, const char *op, size_t k)
{
    for (const IrNode *n = m->graph->first; n; n = n->next)
        if (!strcmp(n->op_type, op) && k-- == 0)
            return n;
    return NULL;
}

static int64_t pc_attr_i(const IrNode *n, const char *name)
{
    const IrAttr *a = n ? ir_node_attr(n, name) : NULL;
    return a ? a->i : -1;
}

/* CHAIN as IR 3 writes it: every initializer also a graph input, after x. */
static IrModel *pc_chain_ir3(void)
{
    IrModel *m = tb_model_typed(CHAIN);
    m->ir_version = 3;
    const char *names[3] = {"W", "B", "M"};
    for (size_t k = 0; k < 3; k++) {
        const IrTensor *t = pc_init(m, names[k]);
        int64_t dims[4];
        for (size_t i = 0; t && i < t->ndims && i < 4; i++)
            dims[i] = t->dims[i];
        T_CHECK(t && ir_graph_add_input(m->graph, names[k],
                                        ir_type_tensor(IR_FLOAT, t->ndims, dims)),
                "%s as an input", names[k]);
    }
    return m;
}

static void test_chain_float16(void)
{
    IrModel *m = tb_model_typed(CHAIN);
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "chain float16") == 0) {
        T_CHECK(r.nodes_converted == 4 && r.n_kept == 0, "converted %zu kept %zu",
                r.nodes_converted, r.n_kept);
        T_CHECK(r.casts == 0 && tb_count(m, "Cast") == 0, "casts %zu", r.casts);
        T_CHECK(!r.hint[0], "hint '%s'", r.hint);
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT16 && pc_out_type(m, 0) == IR_FLOAT16,
                "io types %d %d", pc_in_type(m, 0), pc_out_type(m, 0));
        T_CHECK(pc_init_type(m, "W") == IR_FLOAT16 && pc_init_type(m, "B") == IR_FLOAT16 &&
                pc_init_type(m, "M") == IR_FLOAT16, "initializers not float16");
        T_CHECK(r.init_bytes_after * 2 == r.init_bytes_before, "bytes %llu -> %llu",
                (unsigned long long)r.init_bytes_before,
                (unsigned long long)r.init_bytes_after);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

static void test_chain_keep_io(void)
{
    IrModel *m = tb_model_typed(CHAIN);
    PcOptions o = {.dtype = IR_FLOAT16, .keep_io = true};
    PcReport r;
    if (pc_run(m, &o, &r, "chain keep-io") == 0) {
        T_CHECK(r.casts == 2 && tb_count(m, "Cast") == 2, "casts %zu", r.casts);
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT && pc_out_type(m, 0) == IR_FLOAT,
                "io types %d %d", pc_in_type(m, 0), pc_out_type(m, 0));
        const IrNode *first = m->graph->first, *last = m->graph->last;
        T_CHECK(!strcmp(first->op_type, "Cast") && !strcmp(first->in[0]->name, "x") &&
                pc_attr_i(first, "to") == IR_FLOAT16, "first node: not a Cast of x to float16");
        T_CHECK(!strcmp(last->op_type, "Cast") && !strcmp(last->out[0]->name, "y") &&
                pc_attr_i(last, "to") == IR_FLOAT, "last node: not a Cast to float as y");
        T_CHECK(!strcmp(last->in[0]->producer->op_type, "Softmax"), "y's Cast reads %s",
                last->in[0]->producer->op_type);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

static void test_resize_scales(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 1,1,4,4\n"
                                "init S float 4 1,1,2,2\n"
                                "y = Resize x,,S mode=\"nearest\"\n"
                                "output y\n");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "resize") == 0) {
        T_CHECK(pc_init_type(m, "S") == IR_FLOAT, "scales became %d", pc_init_type(m, "S"));
        T_CHECK(r.nodes_converted == 1 && r.casts == 0, "converted %zu casts %zu",
                r.nodes_converted, r.casts);
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT16, "x is %d", pc_in_type(m, 0));
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* Conv-11 (the Conv of opset 13) lacks bfloat16: its island is the two
 * Convs, with one Cast in and one out. */
static void test_bf16_island(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 1,3,8,8\n"
                                "init W float 4,3,3,3 rand\n"
                                "init V float 4,4,3,3 rand\n"
                                "a = Relu x\n"
                                "c1 = Conv a,W pads=[1,1,1,1]\n"
                                "c2 = Conv c1,V pads=[1,1,1,1]\n"
                                "d = Relu c2\n"
                                "output d\n");
    PcOptions o = {.dtype = IR_BFLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "bf16 island") == 0) {
        T_CHECK(r.nodes_converted == 2 && r.n_kept == 2, "converted %zu kept %zu",
                r.nodes_converted, r.n_kept);
        T_CHECK(r.n_kept && !strcmp(r.kept[0].reason, "Conv-11 has no type tensor(bfloat16)"),
                "reason '%s'", r.n_kept ? r.kept[0].reason : "");
        T_CHECK(r.casts == 2 && tb_count(m, "Cast") == 2, "casts %zu", r.casts);
        const IrNode *c1 = pc_node(m, "Conv", 0), *c2 = pc_node(m, "Conv", 1);
        T_CHECK(c1 && !strcmp(c1->in[0]->producer->op_type, "Cast") &&
                pc_attr_i(c1->in[0]->producer, "to") == IR_FLOAT, "no Cast into the island");
        T_CHECK(c2 && c2->in[0]->producer == c1, "a Cast inside the island");
        T_CHECK(pc_init_type(m, "W") == IR_FLOAT && pc_init_type(m, "V") == IR_FLOAT,
                "the island's weights changed type");
        T_CHECK(pc_in_type(m, 0) == IR_BFLOAT16 && pc_out_type(m, 0) == IR_BFLOAT16,
                "io types %d %d", pc_in_type(m, 0), pc_out_type(m, 0));
        /* Conv-22 has bfloat16 (the operator data): the hint says so */
        T_CHECK(strstr(r.hint, "2 of the 2 nodes") && strstr(r.hint, "--opset 22"),
                "hint '%s'", r.hint);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* IR 3 lists initializers as graph inputs too: such a weight read only by
 * the island stays float32, with no Cast of its own. */
static void test_ir3_weight(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 1,3,8,8\n"
                                "init W float 4,3,3,3 rand\n"
                                "a = Relu x\n"
                                "c = Conv a,W pads=[1,1,1,1]\n"
                                "d = Relu c\n"
                                "output d\n");
    int64_t dims[4] = {4, 3, 3, 3};
    T_CHECK(ir_graph_add_input(m->graph, "W", ir_type_tensor(IR_FLOAT, 4, dims)) != NULL,
            "W as an input");
    PcOptions o = {.dtype = IR_BFLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "IR 3 weight") == 0) {
        T_CHECK(pc_init_type(m, "W") == IR_FLOAT && pc_in_type(m, 1) == IR_FLOAT,
                "W became %d", pc_init_type(m, "W"));
        T_CHECK(r.casts == 2, "casts %zu", r.casts);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* --keep-io-types keeps the inputs a caller feeds; an IR 3 weight, an
 * input only because IR 3 lists every initializer so, still converts with
 * its readers (else every weight would stay float32 behind a Cast). */
static void test_ir3_keep_io(void)
{
    IrModel *m = pc_chain_ir3();
    PcOptions o = {.dtype = IR_FLOAT16, .keep_io = true};
    PcReport r;
    if (pc_run(m, &o, &r, "IR 3 keep io") == 0) {
        T_CHECK(pc_init_type(m, "W") == IR_FLOAT16 && pc_in_type(m, 1) == IR_FLOAT16,
                "W is %d", pc_init_type(m, "W"));
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT && pc_out_type(m, 0) == IR_FLOAT,
                "x or y changed type");
        T_CHECK(r.casts == 2, "casts %zu", r.casts);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* BitCast reads bits: it keeps reading float32 (its result would change
 * with the width), reported, while the graph input becomes float16. */
static void test_bitcast(void)
{
    IrModel *m = tb_model_typed("opset 26\n"
                                "input x float 4\n"
                                "y = BitCast x to=6\n"
                                "output y\n");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "bitcast") == 0) {
        const IrNode *b = pc_node(m, "BitCast", 0);
        T_CHECK(r.n_kept == 1 && strstr(r.kept[0].reason, "reads its input's bits"),
                "kept %zu '%s'", r.n_kept, r.n_kept ? r.kept[0].reason : "");
        const IrNode *p = b ? b->in[0]->producer : NULL;
        T_CHECK(p && !strcmp(p->op_type, "Cast") && pc_attr_i(p, "to") == IR_FLOAT &&
                pc_attr_i(b, "to") == IR_INT32, "BitCast does not read a Cast to float32");
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT16, "x is %d", pc_in_type(m, 0));
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* At opset 12 no op has bfloat16, Cast neither: nothing can change, and
 * the report says which nodes stay float32 and why. */
static void test_bf16_opset12(void)
{
    IrModel *m = tb_model_typed("opset 12\n"
                                "input x float 4\n"
                                "a = Relu x\n"
                                "y = Neg a\n"
                                "output y\n");
    PcOptions o = {.dtype = IR_BFLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "bf16 opset 12") == 0) {
        T_CHECK(r.nodes_converted == 0 && r.n_kept == 2 && r.casts == 0,
                "converted %zu kept %zu casts %zu", r.nodes_converted, r.n_kept, r.casts);
        T_CHECK(r.n_kept == 2 && !strcmp(r.kept[0].reason, "Relu-6 has no type tensor(bfloat16)"),
                "reason '%s'", r.n_kept ? r.kept[0].reason : "");
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT, "x is %d", pc_in_type(m, 0));
        T_CHECK(strstr(r.hint, "--opset 13") != NULL, "hint '%s'", r.hint);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

static void test_keep_lists(void)
{
    const char *lists[2][2] = {{"Softmax", NULL}, {NULL, "n1"}};
    const char *reason[2] = {"--keep-float32", "--keep-float32-node"};
    const char *op[2] = {"Softmax", "Relu"};
    for (int k = 0; k < 2; k++) {
        IrModel *m = tb_model_typed(CHAIN);
        PcOptions o = {.dtype = IR_FLOAT16, .keep_ops = lists[k][0], .keep_nodes = lists[k][1]};
        PcReport r;
        if (pc_run(m, &o, &r, reason[k]) == 0) {
            T_CHECK(r.n_kept == 1 && !strcmp(r.kept[0].reason, reason[k]) &&
                    !strcmp(r.kept[0].op, op[k]), "%s: kept %zu", reason[k], r.n_kept);
            T_CHECK(r.nodes_converted == 3 && r.casts == 2, "%s: converted %zu casts %zu",
                    reason[k], r.nodes_converted, r.casts);
            const IrNode *n = pc_node(m, op[k], 0);
            T_CHECK(n && !strcmp(n->in[0]->producer->op_type, "Cast") &&
                    pc_attr_i(n->in[0]->producer, "to") == IR_FLOAT,
                    "%s: the kept node does not read float32", reason[k]);
        }
        pc_report_free(&r);
        ir_model_free(m);
    }
}

/* Cast's `to` and ConstantOfShape's value follow the node; a value of
 * 70000 is clamped (and counted). */
static void test_attrs_follow(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input i int64 4\n"
                                "init shp int64 1 4\n"
                                "f = Cast i to=1\n"
                                "z = ConstantOfShape shp\n"
                                "k = ConstantOfShape shp\n"
                                "s = Add f,z\n"
                                "y = Add s,k\n"
                                "output y\n");
    float big = 70000.0f;
    int64_t one = 1;
    ir_node_set_attr((IrNode *)pc_node(m, "ConstantOfShape", 1),
                     ir_attr_tensor("value", ir_tensor_new("value", IR_FLOAT, 1, &one, &big, 4)));
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "attributes") == 0) {
        T_CHECK(pc_attr_i(pc_node(m, "Cast", 0), "to") == IR_FLOAT16, "Cast to %lld",
                (long long)pc_attr_i(pc_node(m, "Cast", 0), "to"));
        const IrAttr *z = ir_node_attr(pc_node(m, "ConstantOfShape", 0), "value");
        const IrAttr *k = ir_node_attr(pc_node(m, "ConstantOfShape", 1), "value");
        T_CHECK(z && z->t && z->t->data_type == IR_FLOAT16, "default value not float16");
        double v = 0;
        T_CHECK(k && k->t && k->t->data_type == IR_FLOAT16 && ir_tensor_get_f64(k->t, 0, &v) &&
                v == 65504.0, "value %g", v);
        T_CHECK(r.clamped == 1 && r.casts == 0, "clamped %zu casts %zu", r.clamped, r.casts);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* ---- bodies ------------------------------------------------------------ */

/* A body of parent from text in tb_model's words, plus "output NAME TYPE
 * DIMS" (a body's outputs are declared); its nodes are named n<base+k>.
 * With no parent, a function body: "input NAME" and "output NAME". */
static IrGraph *pc_body(IrGraph *parent, const char *name, const char *text, int base)
{
    IrGraph *b = ir_graph_new(parent);
    b->name = mem_strdup(name);
    b->is_function = parent == NULL;
    char *copy = mem_strdup(text), *save = NULL;
    int idx = base;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *w[24];
        int n_w = 0;
        for (char *t = strtok(line, " "); t && n_w < 24; t = strtok(NULL, " "))
            w[n_w++] = t;
        if (n_w == 2 && !strcmp(w[0], "input")) {
            ir_graph_add_input(b, w[1], NULL);
        } else if (n_w == 2 && !strcmp(w[0], "output")) {
            ir_graph_add_output(b, ir_graph_find_local(b, w[1]), NULL);
        } else if (n_w >= 3 && !strcmp(w[0], "input")) {
            tb_input(b, w[1], w[2], n_w > 3 ? w[3] : NULL);
        } else if (n_w >= 5 && !strcmp(w[0], "init")) {
            tb_init(b, w[1], w[2], w[3], w[4]);
        } else if (n_w >= 3 && !strcmp(w[0], "output")) {
            int64_t d[8];
            char *sym[8] = {0};
            size_t r = tb_dims(n_w > 3 ? w[3] : "-", d, sym);
            ir_graph_add_output(b, ir_graph_lookup(b, w[1]), ir_type_tensor(tb_dtype(w[2]), r, d));
        } else if (n_w > 2 && !strcmp(w[1], "=")) {
            tb_node(b, w, n_w, idx++);
        }
    }
    free(copy);
    return b;
}

/* Adds node op (named name) to g: inputs and outputs as comma lists,
 * empty entries left out. */
static IrNode *pc_add(IrGraph *g, const char *op, const char *name, const char *ins,
                      const char *outs)
{
    char *ci = mem_strdup(ins), *co = mem_strdup(outs), *in[8], *out[8];
    size_t ni = *ins ? tb_names(ci, in, 8) : 0, no = tb_names(co, out, 8);
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, NULL, name, ni, (const char *const *)in, no,
                            (const char *const *)out, &err);
    T_CHECK(n != NULL, "node %s: %s", name, err.msg);
    free(ci);
    free(co);
    return n;
}

/* Lists the comma-separated values as m's outputs, typed by inference. */
static void pc_outputs(IrModel *m, const char *names)
{
    char *c = mem_strdup(names), *w[8];
    size_t n = tb_names(c, w, 8);
    for (size_t i = 0; i < n; i++)
        ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, w[i]), NULL);
    free(c);
    IrError err;
    T_CHECK(inf_model(m, NULL, &err) == 0, "inference: %s", err.msg);
    for (size_t i = 0; i < m->graph->outputs.n; i++) {
        IrValueInfo *vi = m->graph->outputs.p[i];
        if (!vi->type && vi->value->type)
            vi->type = ir_type_copy(vi->value->type);
    }
    ir_graph_clear_inferred(m->graph);
}

static IrModel *pc_copy(const IrModel *m)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    IrModel *copy = NULL;
    IrError err;
    if (save_model_buffer(m, &buf, &len, &err) == 0)
        load_model_buffer(buf, len, NULL, "copy", NULL, &copy, &err);
    free(buf);
    return copy;
}

/* Converts m as o says and checks it (pc_run), then that the evaluator
 * gives the original and the result the same outputs on the same seeded
 * inputs, within the half type's tolerance. */
static int pc_run_eval(IrModel *m, const PcOptions *o, PcReport *r, const char *what)
{
    IrModel *before = pc_copy(m);
    T_CHECK(before != NULL, "%s: no copy", what);
    int rc = pc_run(m, o, r, what);
    if (rc == 0 && before) {
        IrError err = {0};
        VfOptions vo = {.seed = 11};
        rc = vf_compare(before, m, &vo, &err);
        T_CHECK(rc == 0, "%s: evaluator: %s", what, err.msg);
    }
    ir_model_free(before);
    return rc;
}

/* The element type output i of body g declares. */
static int32_t pc_body_out(const IrGraph *g, size_t i)
{
    return ((IrValueInfo *)g->outputs.p[i])->type->elem_type;
}

static int32_t pc_body_in(const IrGraph *g, size_t i)
{
    return ((IrValueInfo *)g->inputs.p[i])->type->elem_type;
}

static size_t pc_count_in(const IrGraph *g, const char *op)
{
    size_t n = 0;
    for (const IrNode *k = g->first; k; k = k->next)
        n += !strcmp(k->op_type, op);
    return n;
}

/* y = If(cond) { t = Mul(Neg(a), K) } else { e = Abs(a) }, a = Relu(x):
 * the branches read the outer a; K is an initializer of a branch. */
static IrModel *pc_if_model(IrGraph **tb, IrGraph **eb)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 4\n"
                                "input cond bool -\n"
                                "a = Relu x\n");
    IrGraph *g = m->graph;
    *tb = pc_body(g, "then", "init K float 4 rand\nng = Neg a\nt = Mul ng,K\n"
                  "output t float 4\n", 100);
    *eb = pc_body(g, "else", "e = Abs a\noutput e float 4\n", 200);
    IrNode *n = pc_add(g, "If", "if", "cond", "y");
    ir_node_set_attr(n, ir_attr_graph("then_branch", *tb));
    ir_node_set_attr(n, ir_attr_graph("else_branch", *eb));
    pc_outputs(m, "y");
    return m;
}

/* The If converts (If-13's V has float16), and so do its branches: their
 * outputs and initializer become float16, with no Cast anywhere. */
static void test_if_converts(void)
{
    IrGraph *tb, *eb;
    IrModel *m = pc_if_model(&tb, &eb);
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "if") == 0) {
        T_CHECK(r.n_kept == 0 && r.nodes_converted == 5 && r.casts == 0,
                "kept %zu (%s) converted %zu casts %zu", r.n_kept,
                r.n_kept ? r.kept[0].reason : "", r.nodes_converted, r.casts);
        T_CHECK(pc_body_out(tb, 0) == IR_FLOAT16 && pc_body_out(eb, 0) == IR_FLOAT16,
                "branch outputs %d %d", pc_body_out(tb, 0), pc_body_out(eb, 0));
        const IrValue *k = ir_graph_find_local(tb, "K");
        T_CHECK(k && k->init && k->init->data_type == IR_FLOAT16, "K not float16");
        T_CHECK(pc_out_type(m, 0) == IR_FLOAT16, "y %d", pc_out_type(m, 0));
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* --keep-float32-node if: the If and its branches' boundary stay float32,
 * the nodes inside still convert, with a Cast back to float32 at the end
 * of each branch; y (wanted float16) is a Cast of the If's output. */
static void test_if_kept(void)
{
    IrGraph *tb, *eb;
    IrModel *m = pc_if_model(&tb, &eb);
    PcOptions o = {.dtype = IR_FLOAT16, .keep_nodes = "if"};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "if kept") == 0) {
        T_CHECK(r.n_kept == 1 && !strcmp(r.kept[0].reason, "--keep-float32-node") &&
                r.nodes_converted == 4, "kept %zu converted %zu", r.n_kept,
                r.nodes_converted);
        for (int k = 0; k < 2; k++) {
            IrGraph *b = k ? eb : tb;
            const IrNode *last = b->last;
            T_CHECK(pc_body_out(b, 0) == IR_FLOAT && last && !strcmp(last->op_type, "Cast") &&
                    pc_attr_i(last, "to") == IR_FLOAT && pc_count_in(b, "Cast") == 1,
                    "branch %d: output %d, no single Cast to float at its end", k,
                    pc_body_out(b, 0));
            T_CHECK(!strcmp(b->first->op_type, k ? "Abs" : "Neg"), "branch %d starts with %s",
                    k, b->first->op_type);
        }
        const IrValue *y = ir_graph_find_local(m->graph, "y");
        T_CHECK(pc_out_type(m, 0) == IR_FLOAT16 && y->producer &&
                !strcmp(y->producer->op_type, "Cast") && r.casts == 3,
                "y %d casts %zu", pc_out_type(m, 0), r.casts);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* Loop-13, 3 trips: s <- s * W + x (a float carried value), and s + 1
 * each trip as a scan output. */
static void test_loop(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 4\n"
                                "init W float 4 0.5\n"
                                "init M int64 - 3\n");
    IrGraph *g = m->graph;
    IrGraph *body = pc_body(g, "body", "input i int64 -\ninput c bool -\ninput s float 4\n"
                            "init one float - 1\n"
                            "sw = Mul s,W\ns2 = Add sw,x\nsc = Add s2,one\nco = Identity c\n"
                            "output co bool -\noutput s2 float 4\noutput sc float 4\n", 100);
    IrNode *n = pc_add(g, "Loop", "loop", "M,,x", "fin,all");
    ir_node_set_attr(n, ir_attr_graph("body", body));
    pc_outputs(m, "fin,all");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "loop") == 0) {
        T_CHECK(r.n_kept == 0 && r.casts == 0 && r.nodes_converted == 4,
                "kept %zu (%s) casts %zu converted %zu", r.n_kept,
                r.n_kept ? r.kept[0].reason : "", r.casts, r.nodes_converted);
        T_CHECK(pc_body_in(body, 0) == IR_INT64 && pc_body_in(body, 2) == IR_FLOAT16 &&
                pc_body_out(body, 0) == IR_BOOL && pc_body_out(body, 1) == IR_FLOAT16 &&
                pc_body_out(body, 2) == IR_FLOAT16, "body types %d %d / %d %d %d",
                pc_body_in(body, 0), pc_body_in(body, 2), pc_body_out(body, 0),
                pc_body_out(body, 1), pc_body_out(body, 2));
        T_CHECK(pc_init_type(m, "W") == IR_FLOAT16 && pc_out_type(m, 0) == IR_FLOAT16 &&
                pc_out_type(m, 1) == IR_FLOAT16, "W %d outputs %d %d", pc_init_type(m, "W"),
                pc_out_type(m, 0), pc_out_type(m, 1));
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* Scan-16 summing the rows of X: a float state and a float scan input. */
static void test_scan(void)
{
    IrModel *m = tb_model_typed("opset 16\n"
                                "input X float 3,4\n"
                                "init z float 4 0\n");
    IrGraph *g = m->graph;
    IrGraph *body = pc_body(g, "body", "input acc float 4\ninput row float 4\n"
                            "sum = Add acc,row\nout = Identity sum\n"
                            "output sum float 4\noutput out float 4\n", 100);
    IrNode *n = pc_add(g, "Scan", "scan", "z,X", "total,partial");
    ir_node_set_attr(n, ir_attr_graph("body", body));
    ir_node_set_attr(n, ir_attr_int("num_scan_inputs", 1));
    pc_outputs(m, "total,partial");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "scan") == 0) {
        T_CHECK(r.n_kept == 0 && r.casts == 0 && r.nodes_converted == 3,
                "kept %zu (%s) casts %zu converted %zu", r.n_kept,
                r.n_kept ? r.kept[0].reason : "", r.casts, r.nodes_converted);
        T_CHECK(pc_body_in(body, 0) == IR_FLOAT16 && pc_body_in(body, 1) == IR_FLOAT16 &&
                pc_body_out(body, 0) == IR_FLOAT16 && pc_body_out(body, 1) == IR_FLOAT16,
                "body types not float16");
        T_CHECK(pc_init_type(m, "z") == IR_FLOAT16 && pc_in_type(m, 0) == IR_FLOAT16 &&
                pc_out_type(m, 1) == IR_FLOAT16, "main types not float16");
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* A Loop whose body holds an If; the then-branch reads the main graph's
 * a and the body's s, and its Add is kept float32 by name: Casts of a (in
 * the Loop body, the body directly inside a's graph) and of s (in the
 * branch), and a Cast of the Add's result back to float16. */
static void test_nested(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 4\n"
                                "init M int64 - 2\n"
                                "a = Relu x\n");
    IrGraph *g = m->graph;
    IrGraph *body = ir_graph_new(g);
    body->name = mem_strdup("body");
    tb_input(body, "i", "int64", "-");
    tb_input(body, "c", "bool", "-");
    tb_input(body, "s", "float", "4");
    IrGraph *tb = pc_body(body, "then", "t = Add s,a\noutput t float 4\n", 300);
    IrGraph *eb = pc_body(body, "else", "e = Sub s,a\noutput e float 4\n", 400);
    pc_add(body, "Greater", "gt", "s,a", "p");
    pc_add(body, "Cast", "pi", "p", "pf");
    ir_node_set_attr(body->last, ir_attr_int("to", IR_INT32));
    pc_add(body, "ReduceMax", "any", "pf", "pm");
    ir_node_set_attr(body->last, ir_attr_int("keepdims", 0));
    pc_add(body, "Cast", "pb", "pm", "cond");
    ir_node_set_attr(body->last, ir_attr_int("to", IR_BOOL));
    IrNode *iff = pc_add(body, "If", "inner", "cond", "s2");
    ir_node_set_attr(iff, ir_attr_graph("then_branch", tb));
    ir_node_set_attr(iff, ir_attr_graph("else_branch", eb));
    pc_add(body, "Identity", "co", "c", "co");
    int64_t four = 4;
    ir_graph_add_output(body, ir_graph_find_local(body, "co"), ir_type_tensor(IR_BOOL, 0, NULL));
    ir_graph_add_output(body, ir_graph_find_local(body, "s2"), ir_type_tensor(IR_FLOAT, 1, &four));
    IrNode *n = pc_add(g, "Loop", "loop", "M,,x", "fin");
    ir_node_set_attr(n, ir_attr_graph("body", body));
    pc_outputs(m, "fin");
    PcOptions o = {.dtype = IR_FLOAT16, .keep_nodes = "n300"};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "nested") == 0) {
        T_CHECK(r.n_kept == 1 && !strcmp(r.kept[0].node, "n300"), "kept %zu (%s)", r.n_kept,
                r.n_kept ? r.kept[0].node : "");
        const IrNode *f = body->first;
        T_CHECK(f && !strcmp(f->op_type, "Cast") && !strcmp(f->in[0]->name, "a") &&
                pc_attr_i(f, "to") == IR_FLOAT, "the Loop body does not start with a Cast of a");
        const IrNode *t0 = tb->first;
        T_CHECK(t0 && !strcmp(t0->op_type, "Cast") && !strcmp(t0->in[0]->name, "s") &&
                pc_count_in(tb, "Cast") == 2 && !strcmp(tb->last->op_type, "Cast") &&
                pc_attr_i(tb->last, "to") == IR_FLOAT16, "then-branch Casts wrong");
        T_CHECK(pc_count_in(eb, "Cast") == 0 && pc_body_out(eb, 0) == IR_FLOAT16 &&
                pc_body_out(tb, 0) == IR_FLOAT16 && pc_body_in(body, 2) == IR_FLOAT16,
                "branch/body types wrong");
        T_CHECK(r.casts == 3 && pc_out_type(m, 0) == IR_FLOAT16, "casts %zu y %d", r.casts,
                pc_out_type(m, 0));
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* F(X, W) = Relu(MatMul(X, W)) + Constant [0.5, -0.25, 1, 2], a function
 * of domain "local", called twice: a = F(x, W1) ("call1"), b = F(a, W2)
 * ("call2"). */
static IrModel *pc_fn_model(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 2,4\n"
                                "init W1 float 4,4 rand\n"
                                "init W2 float 4,4 rand\n");
    ir_model_set_opset(m, "local", 1);
    IrGraph *b = pc_body(NULL, "F", "input X\ninput W\nmm = MatMul X,W\nr = Relu mm\n"
                         "k = Constant\ny = Add r,k\noutput y\n", 500);
    static const float kv[4] = {0.5f, -0.25f, 1.0f, 2.0f};
    int64_t four = 4;
    IrNode *k = b->first->next->next;
    ir_node_set_attr(k, ir_attr_tensor("value", ir_tensor_new("value", IR_FLOAT, 1, &four,
                                                               kv, sizeof kv)));
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("F");
    f->domain = mem_strdup("local");
    f->body = b;
    f->n_opsets = 1;
    f->opsets = mem_array(1, sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    m->n_functions = 1;
    m->functions = mem_array(1, sizeof *m->functions);
    m->functions[0] = f;
    IrError err;
    const char *in1[2] = {"x", "W1"}, *out1[1] = {"a"}, *in2[2] = {"a", "W2"}, *out2[1] = {"b"};
    T_CHECK(ir_node_new(m->graph, NULL, "F", "local", "call1", 2, in1, 1, out1, &err) &&
            ir_node_new(m->graph, NULL, "F", "local", "call2", 2, in2, 1, out2, &err),
            "calls: %s", err.msg);
    pc_outputs(m, "b");
    return m;
}

static const IrFunction *pc_fn(const IrModel *m, const char *name)
{
    for (size_t i = 0; i < m->n_functions; i++)
        if (!strcmp(m->functions[i]->name, name))
            return m->functions[i];
    return NULL;
}

/* The type of F's Constant (its 3rd node). */
static int32_t pc_fn_const_type(const IrFunction *f)
{
    const IrNode *k = f && f->body->first ? f->body->first->next->next : NULL;
    const IrAttr *a = k ? ir_node_attr(k, "value") : NULL;
    return a && a->t ? a->t->data_type : -1;
}

/* Both calls convert: F changes in place (its Constant float16), the
 * weights become float16, no Cast anywhere. */
static void test_function(void)
{
    IrModel *m = pc_fn_model();
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "function") == 0) {
        T_CHECK(r.n_kept == 0 && r.casts == 0 && r.nodes_converted == 6,
                "kept %zu (%s) casts %zu converted %zu", r.n_kept,
                r.n_kept ? r.kept[0].reason : "", r.casts, r.nodes_converted);
        T_CHECK(m->n_functions == 1 && pc_fn_const_type(pc_fn(m, "F")) == IR_FLOAT16,
                "%zu functions, Constant %d", m->n_functions, pc_fn_const_type(pc_fn(m, "F")));
        T_CHECK(pc_init_type(m, "W1") == IR_FLOAT16 && pc_init_type(m, "W2") == IR_FLOAT16 &&
                pc_in_type(m, 0) == IR_FLOAT16 && pc_out_type(m, 0) == IR_FLOAT16,
                "main types not float16");
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* --keep-float32-node call2: call1 converts through a float16 copy of F
 * (F_float16), call2 keeps reading F as it was; Casts between. */
static void test_function_split(void)
{
    IrModel *m = pc_fn_model();
    PcOptions o = {.dtype = IR_FLOAT16, .keep_nodes = "call2"};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "function split") == 0) {
        const IrFunction *f = pc_fn(m, "F"), *h = pc_fn(m, "F_float16");
        T_CHECK(m->n_functions == 2 && f && h, "%zu functions", m->n_functions);
        T_CHECK(pc_fn_const_type(f) == IR_FLOAT && pc_fn_const_type(h) == IR_FLOAT16,
                "Constants %d %d", pc_fn_const_type(f), pc_fn_const_type(h));
        const IrNode *c1 = pc_node(m, "F_float16", 0), *c2 = pc_node(m, "F", 0);
        T_CHECK(c1 && c2 && !strcmp(c1->name, "call1") && !strcmp(c2->name, "call2") &&
                !strcmp(c1->domain, "local"), "calls not pointed right");
        T_CHECK(r.n_kept == 1 && !strcmp(r.kept[0].node, "call2") &&
                !strcmp(r.kept[0].reason, "--keep-float32-node"), "kept %zu", r.n_kept);
        T_CHECK(r.casts == 2 && pc_init_type(m, "W1") == IR_FLOAT16 &&
                pc_init_type(m, "W2") == IR_FLOAT && pc_out_type(m, 0) == IR_FLOAT16,
                "casts %zu, W1 %d W2 %d", r.casts, pc_init_type(m, "W1"),
                pc_init_type(m, "W2"));
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* G(X) = Relu(X), called on a float and on a double value: G's values
 * have two types, so its float call keeps the old type (one body cannot
 * serve both) and G stays as it is; F's calls still convert. */
static void test_function_mixed(void)
{
    IrModel *m = pc_fn_model();
    IrFunction *g = mem_alloc(sizeof *g);
    g->name = mem_strdup("G");
    g->n_opsets = 1;
    g->domain = mem_strdup("local");
    g->body = pc_body(NULL, "G", "input X\ny = Relu X\noutput y\n", 600);
    g->opsets = mem_array(1, sizeof *g->opsets);
    g->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    m->functions = mem_grow(m->functions, 2, sizeof *m->functions);
    m->functions[m->n_functions++] = g;
    int64_t d[2] = {2, 4};
    ir_graph_add_input(m->graph, "xd", ir_type_tensor(IR_DOUBLE, 2, d));
    const char *in1[1] = {"b"}, *out1[1] = {"gf"}, *in2[1] = {"xd"}, *out2[1] = {"gd"};
    IrError err;
    T_CHECK(ir_node_new(m->graph, NULL, "G", "local", "g1", 1, in1, 1, out1, &err) &&
            ir_node_new(m->graph, NULL, "G", "local", "g2", 1, in2, 1, out2, &err),
            "G calls: %s", err.msg);
    pc_outputs(m, "gf,gd");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "function mixed") == 0) {
        T_CHECK(r.n_kept == 1 && !strcmp(r.kept[0].node, "g1") &&
                !strcmp(r.kept[0].reason, "function called with differing types"),
                "kept %zu (%s)", r.n_kept, r.n_kept ? r.kept[0].reason : "");
        const IrNode *g1 = pc_node(m, "G", 0);
        T_CHECK(m->n_functions == 2 && pc_fn_const_type(pc_fn(m, "F")) == IR_FLOAT16 && g1 &&
                !strcmp(g1->name, "g1"), "F not converted, or G copied");
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* H(X, W) = Neg(F(X, W)) called twice, the second call kept: H gets a
 * float16 copy, and then F too, since the original H (still used) calls
 * F as it is: F_float16 is called from H_float16 only. */
static void test_function_nested(void)
{
    IrModel *m = pc_fn_model();
    IrNode *c1 = (IrNode *)pc_node(m, "F", 0), *c2 = (IrNode *)pc_node(m, "F", 1);
    free(c1->op_type);
    free(c2->op_type);
    c1->op_type = mem_strdup("H");
    c2->op_type = mem_strdup("H");
    IrFunction *h = mem_alloc(sizeof *h);
    h->name = mem_strdup("H");
    h->domain = mem_strdup("local");
    h->body = pc_body(NULL, "H", "input X\ninput W\nf = F X,W\nz = Neg f\noutput z\n", 700);
    free(h->body->first->domain);
    h->body->first->domain = mem_strdup("local");
    h->n_opsets = 2;
    h->opsets = mem_array(2, sizeof *h->opsets);
    h->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    h->opsets[1] = (IrOpset){.domain = mem_strdup("local"), .has_version = true, .version = 1};
    m->functions = mem_grow(m->functions, 2, sizeof *m->functions);
    m->functions[m->n_functions++] = h;
    PcOptions o = {.dtype = IR_FLOAT16, .keep_nodes = "call2"};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "nested functions") == 0) {
        const IrFunction *hf = pc_fn(m, "H_float16"), *ff = pc_fn(m, "F_float16");
        T_CHECK(m->n_functions == 4 && hf && ff, "%zu functions", m->n_functions);
        T_CHECK(hf && !strcmp(hf->body->first->op_type, "F_float16") &&
                !strcmp(pc_fn(m, "H")->body->first->op_type, "F") &&
                pc_fn_const_type(ff) == IR_FLOAT16 && pc_fn_const_type(pc_fn(m, "F")) == IR_FLOAT,
                "calls inside H / H_float16 not pointed right");
        const IrNode *k1 = pc_node(m, "H_float16", 0), *k2 = pc_node(m, "H", 0);
        T_CHECK(k1 && k2 && !strcmp(k1->name, "call1") && !strcmp(k2->name, "call2") &&
                r.n_kept == 1,
                "main calls not pointed right (kept %zu)", r.n_kept);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* R(X; t) = Relu(Cast(X, to = @t)), called with t = FLOAT: the body's
 * Cast takes its output type from the call, so its output stays float32
 * (its `to` still a reference) while it reads X in float16; Relu
 * converts, through a Cast of the Cast's output. */
static void test_function_ref_attr(void)
{
    IrModel *m = tb_model_typed("opset 13\ninput x float 2,4\n");
    ir_model_set_opset(m, "local", 1);
    IrGraph *b = pc_body(NULL, "R", "input X\ny = Cast X\nz = Relu y\noutput z\n", 800);
    IrAttr *to = mem_alloc(sizeof *to);
    to->name = mem_strdup("to");
    to->ref_attr_name = mem_strdup("t");
    to->has_type = true;
    to->type = IR_AT_INT;
    ir_node_set_attr(b->first, to);
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("R");
    f->domain = mem_strdup("local");
    f->body = b;
    f->n_attr_names = 1;
    f->attr_names = mem_array(1, sizeof *f->attr_names);
    f->attr_names[0] = mem_strdup("t");
    f->n_opsets = 1;
    f->opsets = mem_array(1, sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    m->n_functions = 1;
    m->functions = mem_array(1, sizeof *m->functions);
    m->functions[0] = f;
    const char *in[1] = {"x"}, *out[1] = {"r"};
    IrError err;
    IrNode *call = ir_node_new(m->graph, NULL, "R", "local", "call", 1, in, 1, out, &err);
    T_CHECK(call != NULL, "call: %s", err.msg);
    if (call)
        ir_node_set_attr(call, ir_attr_int("t", IR_FLOAT));
    pc_outputs(m, "r");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "referenced attribute") == 0) {
        T_CHECK(r.n_kept == 0 && r.nodes_converted == 3, "kept %zu (%s) converted %zu",
                r.n_kept, r.n_kept ? r.kept[0].reason : "", r.nodes_converted);
        const IrNode *k = NULL;
        for (const IrNode *n = b->first; n; n = n->next)
            if (n->name && !strcmp(n->name, "n800"))
                k = n;
        const IrAttr *a = k ? ir_node_attr(k, "to") : NULL;
        T_CHECK(a && a->ref_attr_name && !strcmp(a->ref_attr_name, "t"), "to lost its reference");
        T_CHECK(k && k->in[0] && !strcmp(k->in[0]->name, "X") && pc_count_in(b, "Cast") == 2 &&
                pc_in_type(m, 0) == IR_FLOAT16 && r.casts == 1,
                "Casts in R: %zu, casts %zu", pc_count_in(b, "Cast"), r.casts);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* Constant value_float=0.25 and value_floats=[0.5, 2]: each becomes a
 * float16 `value` tensor (a scalar; a vector) in place of the float
 * attribute (a Constant holds exactly one value attribute). */
static void test_constant_value_float(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 2\n"
                                "k = Constant value_float=0.25\n"
                                "v = Constant value_floats=[0.5,2.0]\n"
                                "a = Mul x,k\n"
                                "y = Add a,v\n"
                                "output y\n");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "value_float") == 0) {
        const IrNode *k = pc_node(m, "Constant", 0), *v = pc_node(m, "Constant", 1);
        const IrAttr *kt = ir_node_attr(k, "value"), *vt = ir_node_attr(v, "value");
        double x = 0, y = 0;
        T_CHECK(k->n_attr == 1 && kt && kt->t && kt->t->data_type == IR_FLOAT16 &&
                kt->t->ndims == 0 && ir_tensor_get_f64(kt->t, 0, &x) && x == 0.25,
                "value_float: %zu attributes, value %g", k->n_attr, x);
        T_CHECK(v->n_attr == 1 && vt && vt->t && vt->t->data_type == IR_FLOAT16 &&
                vt->t->ndims == 1 && vt->t->dims[0] == 2 && ir_tensor_get_f64(vt->t, 1, &y) &&
                y == 2, "value_floats: %zu attributes, value[1] %g", v->n_attr, y);
        T_CHECK(r.casts == 0, "casts %zu", r.casts);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

static const char *MUL = "opset 13\n"
                         "input x float 4\n"
                         "init W float 4 1,65504,70000,-1e30\n"
                         "y = Mul x,W\n"
                         "output y\n";

static void test_clamp_and_strict(void)
{
    IrModel *m = tb_model_typed(MUL);
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "clamp") == 0) {
        double v[4] = {0};
        for (size_t i = 0; i < 4; i++)
            ir_tensor_get_f64(pc_init(m, "W"), i, &v[i]);
        T_CHECK(r.clamped == 2, "clamped %zu", r.clamped);
        T_CHECK(v[0] == 1 && v[1] == 65504 && v[2] == 65504 && v[3] == -65504,
                "values %g %g %g %g", v[0], v[1], v[2], v[3]);
    }
    pc_report_free(&r);
    ir_model_free(m);
    m = tb_model_typed(MUL);
    o.strict = true;
    IrError err;
    T_CHECK(pc_convert(m, &o, &r, &err) < 0 && strstr(err.msg, "initializer 'W'") &&
            strstr(err.msg, "70000"), "strict: '%s'", err.msg);
    pc_report_free(&r);
    ir_model_free(m);
}

/* A weight kept in float_data (not raw) converts the same. */
static void test_typed_list(void)
{
    IrModel *m = tb_model_typed(MUL);
    IrTensor *t = (IrTensor *)pc_init(m, "W");
    static const float w[4] = {1, 65504, 70000, -1e30f};
    free(t->raw.data);
    t->raw = (IrBytes){0};
    t->has_raw = false;
    t->float_data = malloc(sizeof w);
    memcpy(t->float_data, w, sizeof w);
    t->n_float = 4;
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "float_data") == 0) {
        double v = 0;
        T_CHECK(r.clamped == 2 && t->n_float == 0 && t->data_type == IR_FLOAT16 &&
                ir_tensor_get_f64(t, 2, &v) && v == 65504, "clamped %zu, W[2] %g", r.clamped, v);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* float32 -> bfloat16 on bit patterns: ties go to the even pattern. */
static void test_bf16_rounding(void)
{
    static const uint32_t in[5] = {0x3f808000u, 0x3f818000u, 0x3f808001u, 0xbf80ffffu,
                                   0x7f7fffffu};
    static const uint16_t want[5] = {0x3f80, 0x3f82, 0x3f81, 0xbf81, 0x7f7f};
    IrModel *m = tb_model_typed("opset 13\ninput x float 5\ninit W float 5 0\ny = Mul x,W\noutput y\n");
    IrTensor *t = (IrTensor *)pc_init(m, "W");
    for (size_t i = 0; i < 5; i++)
        for (int b = 0; b < 4; b++)
            t->raw.data[4 * i + (size_t)b] = (uint8_t)(in[i] >> (8 * b));
    PcOptions o = {.dtype = IR_BFLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "bf16 rounding") == 0) {
        T_CHECK(t->data_type == IR_BFLOAT16, "W is %d", t->data_type);
        for (size_t i = 0; i < 5; i++) {
            uint64_t bits = 0;
            ir_tensor_get_bits(t, i, &bits);
            T_CHECK(bits == want[i], "0x%08x -> 0x%04llx, want 0x%04x", in[i],
                    (unsigned long long)bits, want[i]);
        }
        T_CHECK(r.clamped == 1, "clamped %zu (FLT_MAX rounds beyond bfloat16's max)",
                r.clamped);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* float16 back to float32: types and weights (exactly the half values). */
static void test_back_to_float32(void)
{
    IrModel *m = tb_model_typed(CHAIN);
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    pc_run(m, &o, &r, "to float16");
    pc_report_free(&r);
    double w16 = 0, w32 = 0;
    ir_tensor_get_f64(pc_init(m, "W"), 5, &w16);
    o.dtype = IR_FLOAT;
    if (pc_run(m, &o, &r, "back to float32") == 0) {
        T_CHECK(r.nodes_converted == 4 && r.casts == 0, "converted %zu casts %zu",
                r.nodes_converted, r.casts);
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT && pc_out_type(m, 0) == IR_FLOAT &&
                pc_init_type(m, "W") == IR_FLOAT, "types not float32");
        ir_tensor_get_f64(pc_init(m, "W"), 5, &w32);
        T_CHECK(w16 == w32 && w16 != 0, "W[5] %g -> %g", w16, w32);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* --store float16: W (108 elements) halves behind a Cast named W; B (4)
 * stays. */
static void test_store(void)
{
    IrModel *m = tb_model_typed(CHAIN);
    PcOptions o = {.store = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "store") == 0) {
        T_CHECK(r.stored == 2 && r.casts == 2, "stored %zu casts %zu", r.stored, r.casts);
        const IrValue *w = ir_graph_find_local(m->graph, "W");
        T_CHECK(w && w->producer && !strcmp(w->producer->op_type, "Cast") &&
                pc_attr_i(w->producer, "to") == IR_FLOAT &&
                w->producer->in[0]->init->data_type == IR_FLOAT16, "W is not a Cast of float16");
        T_CHECK(pc_init_type(m, "B") == IR_FLOAT, "B changed");
        T_CHECK(r.init_bytes_before == (108 + 4 + 64) * 4 &&
                r.init_bytes_after == (108 + 64) * 2 + 4 * 4, "bytes %llu -> %llu",
                (unsigned long long)r.init_bytes_before,
                (unsigned long long)r.init_bytes_after);
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT && tb_count(m, "Conv") == 1 &&
                !strcmp(pc_node(m, "Conv", 0)->in[1]->name, "W"), "the consumers changed");
    }
    pc_report_free(&r);
    ir_model_free(m);
    m = tb_model_typed("opset 13\ninput x float 16\ninit W float 16 7e4\ny = Mul x,W\noutput y\n");
    o.strict = true;
    IrError err;
    T_CHECK(pc_convert(m, &o, &r, &err) < 0 && strstr(err.msg, "initializer 'W'"),
            "store strict: '%s'", err.msg);
    pc_report_free(&r);
    ir_model_free(m);
}

/* IR 3 lists every initializer as a graph input: --store still stores
 * it as float16, the input renamed and declared float16 with it. */
static void test_store_ir3(void)
{
    IrModel *m = pc_chain_ir3();
    PcOptions o = {.store = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "store IR 3") == 0) {
        const IrValue *w = ir_graph_find_local(m->graph, "W");
        const IrValue *h = w && w->producer ? w->producer->in[0] : NULL;
        T_CHECK(h && h->kind == IR_VAL_INPUT && h->init && h->init->data_type == IR_FLOAT16,
                "W is not a Cast of a float16 input with an initializer");
        T_CHECK(pc_in_type(m, 1) == IR_FLOAT16, "the input W became is %d", pc_in_type(m, 1));
        T_CHECK(r.stored == 2, "stored %zu", r.stored);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* Shape reads a float value and writes int64: it converts (its output
 * type is fixed), so it neither needs a Cast nor is reported. */
static void test_shape_reader(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 2,3\n"
                                "s = Shape x\n"
                                "y = Reshape x,s\n"
                                "output y\n");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "shape") == 0)
        T_CHECK(r.n_kept == 0 && r.casts == 0 && r.nodes_converted == 2,
                "kept %zu (%s) casts %zu", r.n_kept, r.n_kept ? r.kept[0].reason : "",
                r.casts);
    pc_report_free(&r);
    ir_model_free(m);
}

/* Whether the report lists node `name` as kept with a reason holding
 * `why`. */
static bool pc_kept_for(const PcReport *r, const char *name, const char *why)
{
    for (size_t i = 0; i < r->n_kept; i++)
        if (!strcmp(r->kept[i].node, name) && strstr(r->kept[i].reason, why))
            return true;
    return false;
}

/* An empty float Constant (the dims [0] `roi` every exported Resize has,
 * written with an empty raw_data) converts to an empty tensor of the
 * new type (issue 33: "the data cannot be read"). */
static void test_empty_constant(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 2\n"
                                "e = Constant value_floats=[0.0]\n"
                                "y = Concat x,e axis=0\n"
                                "output y\n");
    IrNode *k = (IrNode *)pc_node(m, "Constant", 0);
    int64_t zero = 0;
    IrTensor *t = ir_tensor_new("value", IR_FLOAT, 1, &zero, NULL, 0);
    free(t->raw.data);
    t->raw = (IrBytes){0};   /* as PyTorch writes it: raw_data "" */
    ir_node_remove_attr(k, "value_floats");
    ir_node_set_attr(k, ir_attr_tensor("value", t));
    inf_model(m, NULL, &(IrError){0});
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "empty constant") == 0) {
        const IrAttr *a = ir_node_attr(pc_node(m, "Constant", 0), "value");
        T_CHECK(a && a->t && a->t->data_type == IR_FLOAT16 && a->t->ndims == 1 &&
                a->t->dims[0] == 0, "the empty value is not an empty float16 tensor");
        T_CHECK(r.nodes_converted == 2 && r.n_kept == 0, "converted %zu kept %zu",
                r.nodes_converted, r.n_kept);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* The old exporter's Upsample-9: scales = [1, 1, [11, 13] / float(Shape)]
 * in float arithmetic. Rounded to float16, 11/5 becomes 2.19921875 and
 * the output 10 rows instead of 11; the shape rule keeps every node that
 * computes the scales in float32, while the data path converts. */
static void test_shape_arith(void)
{
    IrModel *m = tb_model_typed("opset 9\n"
                                "input x float 1,3,5,6\n"
                                "s = Shape x\n"
                                "hw = Slice s starts=[2] ends=[4] axes=[0]\n"
                                "hwf = Cast hw to=1\n"
                                "init num float 2 11,13\n"
                                "init one float 2 1,1\n"
                                "sc = Div num,hwf\n"
                                "scales = Concat one,sc axis=0\n"
                                "u = Upsample x,scales mode=\"nearest\"\n"
                                "y = Relu u\n"
                                "output y\n");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run_eval(m, &o, &r, "shape arithmetic") == 0) {
        const IrNode *cast = pc_node(m, "Cast", 0);
        T_CHECK(pc_attr_i(cast, "to") == IR_FLOAT, "Cast of the shape: to %lld",
                (long long)pc_attr_i(cast, "to"));
        T_CHECK(pc_kept_for(&r, "n3", "Upsample-9's scales"),
                "Div not kept for Upsample's scales");
        T_CHECK(pc_kept_for(&r, "n2", "Upsample-9's scales") &&
                pc_kept_for(&r, "n4", "Upsample-9's scales") && r.n_kept == 3,
                "kept %zu, not the scales' Cast, Div and Concat", r.n_kept);
        T_CHECK(pc_init_type(m, "num") == IR_FLOAT && pc_init_type(m, "one") == IR_FLOAT,
                "the scales' weights changed type");
        T_CHECK(pc_in_type(m, 0) == IR_FLOAT16 && pc_out_type(m, 0) == IR_FLOAT16,
                "the data path did not convert");
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* What is computed from a graph input's data is not a shape computation:
 * the Mul before ArgMax (whose result indexes a Gather) converts. A
 * Range's constant start and delta keep float32: they count. */
static void test_shape_data(void)
{
    IrModel *m = tb_model_typed("opset 13\n"
                                "input x float 4\n"
                                "input n float -\n"
                                "init W float 4 rand\n"
                                "mm = Mul x,W\n"
                                "a = ArgMax mm keepdims=1\n"
                                "g = Gather x,a\n"
                                "st = Constant value_float=0.0\n"
                                "d = Constant value_float=1.0\n"
                                "r = Range st,n,d\n"
                                "output g\n"
                                "output r\n");
    PcOptions o = {.dtype = IR_FLOAT16};
    PcReport r;
    if (pc_run(m, &o, &r, "shape data") == 0) {
        T_CHECK(pc_init_type(m, "W") == IR_FLOAT16, "W is %d", pc_init_type(m, "W"));
        T_CHECK(pc_kept_for(&r, "n5", "Range-11"), "Range not kept");
        T_CHECK(pc_kept_for(&r, "n3", "Range-11's start") &&
                pc_kept_for(&r, "n4", "Range-11's delta") && r.n_kept == 3,
                "kept %zu: not Range and its two Constants", r.n_kept);
    }
    pc_report_free(&r);
    ir_model_free(m);
}

/* keep_whole (what --auto asks): a node kept by name keeps its weights,
 * the Constants it reads, in float32 too; without it the Constant
 * converts and the kept node reads a Cast of its rounded value. */
static void test_keep_whole(void)
{
    const char *text = "opset 13\n"
                       "input x float 4\n"
                       "k = Constant value_floats=[0.1,0.2,0.3,0.4]\n"
                       "m = Mul x,k\n"
                       "y = Relu m\n"
                       "output y\n";
    for (int whole = 0; whole < 2; whole++) {
        IrModel *m = tb_model_typed(text);
        PcOptions o = {.dtype = IR_FLOAT16, .keep_nodes = "n1", .keep_whole = whole};
        PcReport r;
        if (pc_run_eval(m, &o, &r, whole ? "keep whole" : "keep node") == 0) {
            const IrNode *k = pc_node(m, "Constant", 0);
            const IrAttr *a = ir_node_attr(k, "value"), *fl = ir_node_attr(k, "value_floats");
            T_CHECK(whole ? fl && fl->n_floats == 4 && !a
                          : a && a->t && a->t->data_type == IR_FLOAT16,
                    "keep_whole %d: the weight is not %s", whole,
                    whole ? "its float32 value_floats" : "a float16 tensor");
            T_CHECK(!whole || (pc_kept_for(&r, "n0", "part of a node kept") && r.n_kept == 2 &&
                               r.nodes_converted == 1), "keep_whole: kept %zu converted %zu",
                    r.n_kept, r.nodes_converted);
        }
        pc_report_free(&r);
        ir_model_free(m);
    }
}

/* Every model of ../shared/models to float16, to bfloat16 and back to
 * float32, and stored half: each result valid, sorted, no Cast of a Cast
 * (issue 23, "Done when" 3). */
static void test_shared_models(void)
{
    DIR *d = opendir("../shared/models");
    if (!d) {
        T_SKIP("shared models: no ../shared/models");
        return;
    }
    const int32_t modes[4] = {IR_FLOAT16, IR_BFLOAT16, IR_FLOAT, 0};
    for (struct dirent *e; (e = readdir(d));) {
        char path[600], what[700];
        snprintf(path, sizeof path, "../shared/models/%s/model.onnx", e->d_name);
        IrModel *m;
        IrError err;
        if (e->d_name[0] == '.' || load_model_file(path, NULL, &m, &err) < 0)
            continue;
        for (int k = 0; k < 4; k++) {
            PcOptions o = {.dtype = modes[k], .store = k == 3 ? IR_FLOAT16 : 0};
            PcReport r;
            snprintf(what, sizeof what, "%s %s", e->d_name,
                     k == 3 ? "store" : pc_dtype_word(modes[k]));
            if (k == 2) {   /* back from float16 */
                PcOptions h = {.dtype = IR_FLOAT16};
                pc_convert(m, &h, NULL, &err);
            }
            /* under IR 3 too (every initializer a graph input), --store
             * shrinks the initializers */
            if (pc_run(m, &o, &r, what) == 0 && k != 1 && k != 2)
                T_CHECK(r.init_bytes_after < r.init_bytes_before, "%s: bytes %llu -> %llu",
                        what, (unsigned long long)r.init_bytes_before,
                        (unsigned long long)r.init_bytes_after);
            pc_report_free(&r);
            ir_model_free(m);
            if (load_model_file(path, NULL, &m, &err) < 0)
                break;
        }
        ir_model_free(m);
    }
    closedir(d);
}

/* The job's precision stage: a refusal names the stage and the
 * initializer; a success fills the report and its JSON object. */
static void test_job_stage(void)
{
    JobOptions o = {.command = "convert", .pc = {.dtype = IR_FLOAT16, .strict = true}};
    JobInput in = {.path = "mul.onnx"};
    JobReport r;
    IrModel *m = tb_model_typed(MUL);
    T_CHECK(job_convert_model(&o, &in, m, &r) < 0 && r.stage && !strcmp(r.stage, "precision") &&
            strstr(r.msg, "mul.onnx: precision: initializer 'W'"), "strict: stage %s: %s",
            r.stage ? r.stage : "-", r.msg);
    job_report_free(&r);
    ir_model_free(m);
    o.pc.strict = false;
    m = tb_model_typed(MUL);
    T_CHECK(job_convert_model(&o, &in, m, &r) == 0 && r.precision && r.pc.clamped == 2,
            "job: %s", r.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    Js j;
    js_init(&j, f, 0);
    job_json(&j, &r);
    fclose(f);
    T_CHECK(buf && strstr(buf, "\"precision\"") && strstr(buf, "\"dtype\": \"float16\"") &&
            strstr(buf, "\"clamped\": 2"), "JSON: %s", buf ? buf : "");
    free(buf);
    job_report_free(&r);
    ir_model_free(m);
}

/* The words the job takes, and the combinations it refuses. */
static void test_options(void)
{
    const char *argv[] = {"--dtype", "bfloat16", "--keep-io-types", "--keep-float32",
                          "Softmax", "--dtype-strict"};
    JobOptions o = {.command = "convert"};
    char why[200];
    size_t n = sizeof argv / sizeof argv[0];
    for (size_t i = 0; i < n; i++)
        T_CHECK(job_parse_arg(&o, argv, &i, n, why, sizeof why) == 1, "'%s' not taken",
                argv[i]);
    T_CHECK(o.pc.dtype == IR_BFLOAT16 && o.pc.keep_io && o.pc.strict &&
            !strcmp(o.pc.keep_ops, "Softmax"), "options not set");
    T_CHECK(job_options_check(&o, why, sizeof why) == 0, "refused: %s", why);
    o.pc.store = IR_FLOAT16;
    T_CHECK(job_options_check(&o, why, sizeof why) < 0, "--store with --dtype taken");
    const char *bad[] = {"--dtype", "float64"};
    size_t i = 0;
    T_CHECK(job_parse_arg(&o, bad, &i, 2, why, sizeof why) < 0, "--dtype float64 taken");
}

int main(void)
{
    inf_init();
    test_chain_float16();
    test_chain_keep_io();
    test_resize_scales();
    test_bf16_island();
    test_bf16_opset12();
    test_ir3_weight();
    test_ir3_keep_io();
    test_bitcast();
    test_keep_lists();
    test_attrs_follow();
    test_if_converts();
    test_if_kept();
    test_loop();
    test_scan();
    test_nested();
    test_function();
    test_function_split();
    test_function_mixed();
    test_function_nested();
    test_function_ref_attr();
    test_constant_value_float();
    test_clamp_and_strict();
    test_bf16_rounding();
    test_typed_list();
    test_back_to_float32();
    test_store();
    test_store_ir3();
    test_shape_reader();
    test_empty_constant();
    test_shape_arith();
    test_shape_data();
    test_keep_whole();
    test_shared_models();
    test_job_stage();
    test_options();
    return t_done("test_precision");
}
