/*
 * test_check.c - the checker refuses one invalid model per rule, and the
 * command line says so.
 *
 * Each case starts from a small valid model built here through the IR API
 * (X + W -> Relu -> Y, opset 13, IR 8), breaks exactly one rule, saves it
 * to a temporary folder, loads it back, and expects:
 *   - chk_model to report an error whose message starts with the rule;
 *   - `onnx-convert check FILE` to exit 1 with exactly one line on stderr
 *     naming the rule, and nothing on stdout.
 * The valid base model itself must pass with no error. The binary is the
 * onnx-convert beside the tests folder this program was built into.
 *
 * The defects of tolerate.h's table are warnings, not errors: one model
 * per defect (and per form of it) must pass chk_model with a warning
 * naming the defect, `check` must exit 0 printing it, and `check
 * --strict` must exit 1 with one line naming it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/check.h"
#include "ir/ir.h"
#include "io/load.h"
#include "io/save.h"
#include "t.h"
#include "analysis/tolerate.h"


static char tmpdir[256];
static char cli[1024];

/* ---- building blocks ------------------------------------------------ */

static void die(const char *what)
{
    fprintf(stderr, "test_check: cannot build the model: %s\n", what);
    exit(2);
}

static IrTensor *floats_tensor(const char *name, size_t rank, const int64_t *dims,
                               size_t n)
{
    uint8_t *buf = calloc(n ? n : 1, 4);
    for (size_t i = 0; i < n; i++)
        buf[i * 4 + 3] = 0x3f; /* 0.5f-ish values; content does not matter */
    IrTensor *t = ir_tensor_new(name, IR_FLOAT, rank, dims, buf, n * 4);
    free(buf);
    return t;
}

static IrNode *node(IrGraph *g, const char *op, const char *name, size_t n_in,
                    const char *const *in, size_t n_out, const char *const *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, "", name, n_in, in, n_out, out, &err);
    if (!n)
        die(err.msg);
    return n;
}

/* The valid base: Y = Relu(X + W), X and Y float [2,3]. */
static IrModel *base(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 13);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    IrGraph *g = m->graph;
    int64_t d[2] = {2, 3};
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 2, d));
    if (!ir_graph_add_init(g, floats_tensor("W", 2, d, 6)))
        die("W");
    node(g, "Add", "add0", 2, (const char *[]){"X", "W"}, 1, (const char *[]){"A"});
    node(g, "Relu", "relu0", 1, (const char *[]){"A"}, 1, (const char *[]){"Y"});
    ir_graph_add_output(g, ir_graph_find_local(g, "Y"), ir_type_tensor(IR_FLOAT, 2, d));
    return m;
}

static IrNode *find_node(IrModel *m, const char *name)
{
    for (IrNode *n = m->graph->first; n; n = n->next)
        if (n->name && strcmp(n->name, name) == 0)
            return n;
    die(name);
    return NULL;
}

static void set_op(IrNode *n, const char *op)
{
    free(n->op_type);
    n->op_type = mem_strdup(op);
}

static IrTensor *init_w(IrModel *m)
{
    return m->graph->inits.p[0];
}

/* A FLOAT attribute `name` whose raw fields the caller then bends. */
static IrAttr *attr_float(IrNode *n, const char *name, float v)
{
    IrAttr *a = ir_attr_float(name, v);
    n->attr = mem_grow(n->attr, n->n_attr + 1, sizeof *n->attr);
    n->attr[n->n_attr++] = a;
    return a;
}

/* A model-local function `name` in domain "local" whose body calls
 * `calls` (NULL: Relu). */
static void add_function(IrModel *m, const char *name, const char *calls)
{
    IrFunction *f = mem_alloc(sizeof *f);
    IrError err;
    f->name = mem_strdup(name);
    f->domain = mem_strdup("local");
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    f->n_opsets = 2;
    f->opsets = mem_array(2, sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    f->opsets[1] = (IrOpset){.domain = mem_strdup("local"), .has_version = true, .version = 1};
    ir_graph_add_input(f->body, "x", NULL);
    if (!ir_node_new(f->body, NULL, calls ? calls : "Relu", calls ? "local" : "", "f0",
                     1, (const char *[]){"x"}, 1, (const char *[]){"y"}, &err))
        die(err.msg);
    ir_graph_add_output(f->body, ir_graph_find_local(f->body, "y"), NULL);
    m->functions = mem_grow(m->functions, m->n_functions + 1, sizeof *m->functions);
    m->functions[m->n_functions++] = f;
    ir_model_set_opset(m, "local", 1);
}

/* A sparse initializer S of dense shape [4] (or [2,2] when coords) with
 * the given indices. */
static void add_sparse(IrModel *m, size_t nnz, const int64_t *idx, bool coords,
                       int64_t values_rank)
{
    IrSparse *s = mem_alloc(sizeof *s);
    int64_t vd[2] = {(int64_t)nnz, 1};
    s->values = floats_tensor("S", (size_t)values_rank, vd, nnz);
    size_t n_idx = coords ? nnz * 2 : nnz;
    int64_t id[2] = {(int64_t)nnz, 2};
    uint8_t *buf = calloc(n_idx ? n_idx : 1, 8);
    for (size_t i = 0; i < n_idx; i++)
        for (int b = 0; b < 8; b++)
            buf[i * 8 + (size_t)b] = (uint8_t)((uint64_t)idx[i] >> (8 * b));
    s->indices = ir_tensor_new("S_idx", IR_INT64, coords ? 2 : 1, id, buf, n_idx * 8);
    free(buf);
    s->ndims = coords ? 2 : 1;
    s->dims = mem_array(2, sizeof *s->dims);
    s->dims[0] = coords ? 2 : 4;
    s->dims[1] = 2;
    ir_ptrlist_push(&m->graph->sparse_inits, s);
    ir_graph_value(m->graph, "S")->sparse_init = s;
    ir_graph_value(m->graph, "S")->kind = IR_VAL_INIT;
}

/* An If node whose then/else branches each hold one node built by `op`
 * reading the outer X; output named `out`. */
static void add_if(IrModel *m, const char *op, const char *out)
{
    IrGraph *g = m->graph;
    int64_t one = 1;
    uint8_t t = 1;
    IrTensor *cond = ir_tensor_new("C", 9, 0, &one, &t, 1);
    ir_graph_add_init(g, cond);
    IrNode *n = node(g, "If", "if0", 1, (const char *[]){"C"}, 1, (const char *[]){"Z"});
    const char *names[2] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        IrGraph *sg = ir_graph_new(g);
        IrError err;
        if (!ir_node_new(sg, NULL, op, "", "inner", 1, (const char *[]){"X"}, 1,
                         (const char *[]){out}, &err))
            die(err.msg);
        ir_graph_add_output(sg, ir_graph_find_local(sg, out), NULL);
        ir_node_set_attr(n, ir_attr_graph(names[b], sg));
    }
}

/* ---- the cases ------------------------------------------------------ */

static void c_ir_missing(IrModel *m) { m->has_ir_version = false; }
static void c_ir_unknown(IrModel *m) { m->ir_version = 99; }
static void c_opset_none(IrModel *m)
{
    free(m->opsets[0].domain);
    free(m->opsets);
    m->opsets = NULL;
    m->n_opsets = 0;
}
/* Imports `domain` once more at `version`. */
static void import_again(IrModel *m, const char *domain, int64_t version)
{
    m->opsets = mem_grow(m->opsets, m->n_opsets + 1, sizeof *m->opsets);
    m->opsets[m->n_opsets++] = (IrOpset){.domain = mem_strdup(domain),
                                         .has_version = true, .version = version};
}
/* one domain at two versions: which one the nodes mean is unknown */
static void c_opset_dup(IrModel *m) { import_again(m, "ai.onnx", 11); }
static void c_opset_dup_empty(IrModel *m) { import_again(m, "", 12); }
static void c_opset_range(IrModel *m) { ir_model_set_opset(m, "", 99); }
static void c_graph_missing(IrModel *m)
{
    ir_graph_free(m->graph);
    m->graph = NULL;
}
static void c_ir_feature(IrModel *m)
{
    m->ir_version = 7;
    add_function(m, "F", NULL);
}
static void c_ir_feature_dtype(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    vi->type->elem_type = 17; /* FLOAT8E4M3FN: IR 9 */
}
static void c_name_empty(IrModel *m)
{
    int64_t d = 1;
    ir_graph_add_input(m->graph, "", ir_type_tensor(IR_FLOAT, 1, &d));
}
static void c_value_type(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    ir_type_free(vi->type);
    vi->type = NULL;
}
/* -1 is what exporters write for an unknown dim (tolerated); -5 is no
 * convention at all */
static void c_value_type_negative(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    vi->type->shape->dims[0].value = -5;
}
/* an output without a type that inference cannot type either: Y made by
 * an op of a custom domain */
static void c_value_type_output(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    free(n->domain);
    n->domain = mem_strdup("com.example");
    ir_model_set_opset(m, "com.example", 1);
    IrValueInfo *vi = m->graph->outputs.p[0];
    ir_type_free(vi->type);
    vi->type = NULL;
}
static void c_op_domain(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    free(n->domain);
    n->domain = mem_strdup("com.example");
}
static void c_op_unknown(IrModel *m) { set_op(find_node(m, "relu0"), "Frobnicate"); }
static void c_op_too_new(IrModel *m) { set_op(find_node(m, "relu0"), "Gelu"); }
static void c_arity(IrModel *m)
{
    ir_node_add_input(find_node(m, "add0"), ir_graph_find_local(m->graph, "X"));
}
static void c_input_missing(IrModel *m) { ir_node_set_input(find_node(m, "add0"), 1, NULL); }
static void c_attr_name(IrModel *m) { attr_float(find_node(m, "relu0"), "", 1.0f); }
static void c_attr_duplicate(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    set_op(n, "LeakyRelu");
    attr_float(n, "alpha", 0.1f);
    attr_float(n, "alpha", 0.2f);
}
static void c_attr_unknown(IrModel *m) { attr_float(find_node(m, "relu0"), "alpha", 0.1f); }
static void c_attr_type(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    set_op(n, "LeakyRelu");
    ir_node_set_attr(n, ir_attr_int("alpha", 1));
}
static void c_attr_value(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    set_op(n, "LeakyRelu");
    IrAttr *a = attr_float(n, "alpha", 0.1f);
    a->has_f = false;
    a->has_i = true; /* declared FLOAT, holds an int */
}
static void c_attr_two_values(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    set_op(n, "LeakyRelu");
    IrAttr *a = attr_float(n, "alpha", 0.1f);
    a->has_i = true; /* both f and i */
}
static void c_attr_required(IrModel *m) { set_op(find_node(m, "relu0"), "Cast"); }
static void c_ssa_init_dup(IrModel *m)
{
    int64_t d[2] = {2, 3};
    ir_ptrlist_push(&m->graph->inits, floats_tensor("W", 2, d, 6));
}
static void c_ssa_input_dup(IrModel *m)
{
    IrGraph *g = m->graph;
    IrValueInfo *vi = g->inputs.p[0];
    ir_graph_add_value_info(g, vi->value, ir_type_copy(vi->type));
    /* move the value_info entry into the input list: X listed twice */
    ir_ptrlist_push(&g->inputs, g->value_info.p[g->value_info.n - 1]);
    g->value_info.n--;
}
static void c_ssa_shadow(IrModel *m) { add_if(m, "Relu", "A"); }
static void c_topo(IrModel *m)
{
    ir_node_move_before(find_node(m, "relu0"), find_node(m, "add0"));
}
static void c_input_undefined(IrModel *m)
{
    ir_node_set_input(find_node(m, "relu0"), 0, ir_graph_value(m->graph, "nowhere"));
}
static void c_output_unproduced(IrModel *m)
{
    int64_t d = 1;
    ir_graph_add_output(m->graph, ir_graph_value(m->graph, "ghost"),
                        ir_type_tensor(IR_FLOAT, 1, &d));
}
static void c_tensor_dtype(IrModel *m) { init_w(m)->data_type = 99; }
static void c_tensor_dims(IrModel *m) { init_w(m)->dims[0] = -2; }
static void c_tensor_overflow(IrModel *m)
{
    init_w(m)->dims[0] = INT64_C(1) << 40;
    init_w(m)->dims[1] = INT64_C(1) << 40;
}
static void c_tensor_size(IrModel *m) { init_w(m)->raw.len = 20; }
static void c_tensor_storage(IrModel *m)
{
    IrTensor *t = init_w(m);
    t->n_float = 6;
    t->float_data = mem_array(6, sizeof(float));
}
static void c_tensor_wrong_field(IrModel *m)
{
    IrTensor *t = init_w(m);
    free(t->raw.data);
    t->raw.data = NULL;
    t->raw.len = 0;
    t->has_raw = false;
    t->n_int64 = 6;
    t->int64_data = mem_array(6, sizeof(int64_t));
}
static void c_sparse_shape(IrModel *m)
{
    int64_t idx[2] = {0, 1};
    add_sparse(m, 2, idx, false, 2);
}
static void c_sparse_index(IrModel *m)
{
    int64_t idx[2] = {0, 9};
    add_sparse(m, 2, idx, false, 1);
}
static void c_sparse_order(IrModel *m)
{
    int64_t idx[3] = {0, 3, 1};
    add_sparse(m, 3, idx, false, 1);
}
static void c_sparse_unique(IrModel *m)
{
    int64_t idx[4] = {0, 1, 0, 1}; /* coordinates (0,1) twice */
    add_sparse(m, 2, idx, true, 1);
}
static void c_function_dup(IrModel *m)
{
    add_function(m, "F", NULL);
    add_function(m, "F", NULL);
}
static void c_function_recursion(IrModel *m)
{
    add_function(m, "F", "G");
    add_function(m, "G", "F");
}
static void c_type_constraint(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    vi->type->elem_type = IR_INT32;
    IrTensor *t = init_w(m);
    t->data_type = IR_INT32;
}
static void c_broadcast(IrModel *m)
{
    IrTensor *t = init_w(m);
    t->dims[0] = 3;
    t->dims[1] = 2;
}
static void c_attribute(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    set_op(n, "Cast");
    ir_node_set_attr(n, ir_attr_int("to", 999));
}
static void c_axis(IrModel *m)
{
    IrNode *n = find_node(m, "relu0");
    set_op(n, "Concat");
    ir_node_set_attr(n, ir_attr_int("axis", 5));
}
static void c_rank(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    vi->type->shape->rank = 1;
    vi->type->shape->dims[0].value = 6;
    init_w(m)->ndims = 1;
    init_w(m)->dims[0] = 6;
    set_op(find_node(m, "relu0"), "Det"); /* needs [*, M, M] */
}
static void c_shape(IrModel *m) { set_op(find_node(m, "relu0"), "Det"); /* 2x3 */ }
static void c_subgraph_outputs(IrModel *m)
{
    add_if(m, "Relu", "o");
    IrNode *n = m->graph->last;
    IrGraph *then = ir_node_attr(n, "then_branch")->g;
    ir_graph_add_output(then, ir_graph_find_local(then, "o"), NULL);
}
static void c_subgraph(IrModel *m) { add_if(m, "Frobnicate", "inner_out"); }

typedef struct Case {
    const char *name;
    const char *rule;
    void (*mutate)(IrModel *m);
} Case;

static const Case cases[] = {
    {"ir_missing", "ir-version", c_ir_missing},
    {"ir_unknown", "ir-version", c_ir_unknown},
    {"opset_none", "opset-import", c_opset_none},
    {"opset_dup", "opset-duplicate", c_opset_dup},
    {"opset_dup_empty", "opset-duplicate", c_opset_dup_empty},
    {"opset_range", "opset-range", c_opset_range},
    {"graph_missing", "graph-missing", c_graph_missing},
    {"ir_feature_functions", "ir-feature", c_ir_feature},
    {"ir_feature_float8", "ir-feature", c_ir_feature_dtype},
    {"name_empty", "name-empty", c_name_empty},
    {"value_type", "value-type", c_value_type},
    {"value_type_negative", "value-type", c_value_type_negative},
    {"value_type_output", "value-type", c_value_type_output},
    {"op_domain", "op-domain", c_op_domain},
    {"op_unknown", "op-unknown", c_op_unknown},
    {"op_too_new", "op-unknown", c_op_too_new},
    {"arity", "arity", c_arity},
    {"input_missing", "input-missing", c_input_missing},
    {"attr_name", "attr-name", c_attr_name},
    {"attr_duplicate", "attr-duplicate", c_attr_duplicate},
    {"attr_unknown", "attr-unknown", c_attr_unknown},
    {"attr_type", "attr-type", c_attr_type},
    {"attr_value", "attr-value", c_attr_value},
    {"attr_two_values", "attr-value", c_attr_two_values},
    {"attr_required", "attr-required", c_attr_required},
    {"ssa_init_dup", "ssa", c_ssa_init_dup},
    {"ssa_input_dup", "ssa", c_ssa_input_dup},
    {"ssa_shadow", "ssa", c_ssa_shadow},
    {"topo_order", "topo-order", c_topo},
    {"input_undefined", "input-undefined", c_input_undefined},
    {"output_unproduced", "output-unproduced", c_output_unproduced},
    {"tensor_dtype", "tensor-dtype", c_tensor_dtype},
    {"tensor_dims", "tensor-dims", c_tensor_dims},
    {"tensor_overflow", "tensor-overflow", c_tensor_overflow},
    {"tensor_size", "tensor-size", c_tensor_size},
    {"tensor_storage", "tensor-storage", c_tensor_storage},
    {"tensor_wrong_field", "tensor-storage", c_tensor_wrong_field},
    {"sparse_shape", "sparse-shape", c_sparse_shape},
    {"sparse_index", "sparse-index", c_sparse_index},
    {"sparse_order", "sparse-order", c_sparse_order},
    {"sparse_unique", "sparse-unique", c_sparse_unique},
    {"function_duplicate", "function-duplicate", c_function_dup},
    {"function_recursion", "function-recursion", c_function_recursion},
    {"type_constraint", "type-constraint", c_type_constraint},
    {"broadcast", "broadcast", c_broadcast},
    {"subgraph_op_unknown", "op-unknown", c_subgraph},
    {"attribute_cast_to", "attribute", c_attribute},
    {"axis_concat", "axis", c_axis},
    {"rank_det", "rank", c_rank},
    {"shape_det", "shape", c_shape},
    {"subgraph_if_outputs", "subgraph", c_subgraph_outputs},
};

/* ---- the tolerated defects (tolerate.h) -------------------------------- */

static void t_opset_repeated(IrModel *m) { import_again(m, "ai.onnx", 13); }
static void t_opset_repeated_empty(IrModel *m) { import_again(m, "", 13); }
static void t_dim_minus_one(IrModel *m)
{
    IrValueInfo *vi = m->graph->inputs.p[0];
    vi->type->shape->dims[0].value = -1;
}
static void t_dim_minus_one_output(IrModel *m)
{
    IrValueInfo *vi = m->graph->outputs.p[0];
    vi->type->shape->dims[1].value = -1;
}
static void t_init_not_input(IrModel *m)
{
    m->ir_version = 3;
    ir_model_set_opset(m, "", 8);
}
static void t_output_untyped(IrModel *m)
{
    IrValueInfo *vi = m->graph->outputs.p[0];
    ir_type_free(vi->type);
    vi->type = NULL;
}
static void t_declared_shape(IrModel *m)
{
    int64_t d[2] = {5, 3};
    ir_graph_add_value_info(m->graph, ir_graph_find_local(m->graph, "A"),
                            ir_type_tensor(IR_FLOAT, 2, d));
}
static void t_declared_shape_output(IrModel *m)
{
    IrValueInfo *vi = m->graph->outputs.p[0];
    vi->type->shape->dims[1].value = 4;
}
static void t_declared_rank(IrModel *m)
{
    int64_t d[3] = {1, 2, 3};
    ir_graph_add_value_info(m->graph, ir_graph_find_local(m->graph, "A"),
                            ir_type_tensor(IR_FLOAT, 3, d));
}

static const Case tolerated[] = {
    {"opset_repeated", "opset-repeated", t_opset_repeated},
    {"opset_repeated_empty", "opset-repeated", t_opset_repeated_empty},
    {"dim_minus_one", "dim-minus-one", t_dim_minus_one},
    {"dim_minus_one_output", "dim-minus-one", t_dim_minus_one_output},
    {"init_not_input", "init-not-input", t_init_not_input},
    {"output_untyped", "output-untyped", t_output_untyped},
    {"declared_shape", "declared-shape", t_declared_shape},
    {"declared_shape_output", "declared-shape", t_declared_shape_output},
    {"declared_rank", "declared-shape", t_declared_rank},
};

/* ---- running -------------------------------------------------------- */

/* Whether msg starts with "rule:". */
static bool names_rule(const char *msg, const char *rule)
{
    size_t n = strlen(rule);
    return msg && strncmp(msg, rule, n) == 0 && msg[n] == ':';
}

/* Reads a whole small file into buf (NUL-terminated); returns its length. */
static size_t slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return n;
}

/* Runs `onnx-convert check [--strict] path`; returns its exit status,
 * stderr, stdout. */
static int run_cli_as(const char *path, bool strict, char *err, size_t cap, char *out,
                      size_t ocap)
{
    char cmd[4096], ef[512], of[512];
    snprintf(ef, sizeof ef, "%s/stderr.txt", tmpdir);
    snprintf(of, sizeof of, "%s/stdout.txt", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' check %s'%s' >'%s' 2>'%s'", cli,
             strict ? "--strict " : "", path, of, ef);
    int st = system(cmd);
    slurp(ef, err, cap);
    slurp(of, out, ocap);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_cli(const char *path, char *err, size_t cap, char *out, size_t ocap)
{
    return run_cli_as(path, false, err, cap, out, ocap);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Saves m, loads it back, checks it; expects `rule` (NULL: valid). */
static void run_case(const char *name, const char *rule, IrModel *m)
{
    char path[512], err_text[4096], out_text[4096];
    IrError err;
    snprintf(path, sizeof path, "%s/%s.onnx", tmpdir, name);
    if (save_model_file(m, path, NULL, &err) < 0) {
        T_CHECK(0, "%s: cannot save the model: %s", name, err.msg);
        return;
    }
    IrModel *back = NULL;
    if (load_model_file(path, NULL, &back, &err) < 0) {
        /* the loader refusing is fine when its reason names the rule */
        T_CHECK(rule && strstr(err.msg, rule), "%s: load refused without naming %s: %s",
                name, rule ? rule : "(valid)", err.msg);
    } else {
        ChkReport r;
        size_t n = chk_model(back, &r);
        const char *first = chk_first_error(&r);
        if (rule)
            T_CHECK(n > 0 && names_rule(first, rule), "%s: expected %s, got %s", name,
                    rule, first ? first : "no error");
        else
            T_CHECK(n == 0, "%s: the valid model was refused: %s", name, first);
        chk_report_free(&r);
        ir_model_free(back);
    }
    int st = run_cli(path, err_text, sizeof err_text, out_text, sizeof out_text);
    if (rule) {
        char want[64];
        snprintf(want, sizeof want, ": %s:", rule);
        T_CHECK(st == 1, "%s: check exited %d, want 1", name, st);
        T_CHECK(count_lines(err_text) == 1, "%s: stderr has %d lines: %s", name,
                count_lines(err_text), err_text);
        T_CHECK(strstr(err_text, want) || strstr(err_text, rule), "%s: stderr does not name "
                "%s: %s", name, rule, err_text);
        T_CHECK(out_text[0] == '\0', "%s: stdout not empty: %s", name, out_text);
    } else {
        T_CHECK(st == 0 && strstr(out_text, "valid"), "%s: check exited %d: %s", name,
                st, err_text);
    }
    unlink(path);
}

/* Saves m, loads it back, checks it; expects no error and a warning
 * naming the defect `rule`, which check prints and check --strict
 * refuses. */
static void run_tolerated(const char *name, const char *rule, IrModel *m)
{
    char path[512], err_text[4096], out_text[4096], want[64];
    IrError err;
    snprintf(path, sizeof path, "%s/%s.onnx", tmpdir, name);
    IrModel *back = NULL;
    if (save_model_file(m, path, NULL, &err) < 0 ||
        load_model_file(path, NULL, &back, &err) < 0) {
        T_CHECK(0, "%s: cannot save and load the model: %s", name, err.msg);
        return;
    }
    ChkReport r;
    size_t n = chk_model(back, &r);
    const char *first = chk_first_warning(&r);
    T_CHECK(n == 0, "%s: refused: %s", name, chk_first_error(&r));
    T_CHECK(names_rule(first, rule), "%s: expected the warning %s, got %s", name, rule,
            first ? first : "none");
    int id = tol_of_message(first);
    T_CHECK(id >= 0 && (r.defects & (1u << id)), "%s: the report's defects do not hold %s",
            name, rule);
    chk_report_free(&r);
    ir_model_free(back);
    snprintf(want, sizeof want, "warning: %s:", rule);
    int st = run_cli(path, err_text, sizeof err_text, out_text, sizeof out_text);
    T_CHECK(st == 0 && strstr(out_text, "valid") && strstr(out_text, want) &&
            !err_text[0], "%s: check exited %d, stdout %s, stderr %s", name, st, out_text,
            err_text);
    snprintf(want, sizeof want, ": %s:", rule);
    st = run_cli_as(path, true, err_text, sizeof err_text, out_text, sizeof out_text);
    T_CHECK(st == 1 && count_lines(err_text) == 1 && strstr(err_text, want) &&
            strstr(err_text, path) && !out_text[0], "%s: check --strict exited %d, "
            "stdout %s, stderr %s", name, st, out_text, err_text);
    unlink(path);
}

/* Every defect of the table has a tolerated case. */
static void check_defect_coverage(void)
{
    size_t covered = 0;
    for (size_t i = 0; i < TOL_N; i++) {
        bool found = false;
        for (size_t k = 0; k < sizeof tolerated / sizeof *tolerated; k++)
            found = found || !strcmp(tolerated[k].rule, tol_defects[i].id);
        covered += found;
    }
    T_CHECK(covered == TOL_N, "only %zu of %d tolerated defects have a case", covered,
            (int)TOL_N);
    printf("tolerated defects covered: %zu of %d\n", covered, (int)TOL_N);
}

/* Every rule chk_rules lists that no case here covers (documentation and
 * tests must not drift apart). Rules only inference can hit with ops of
 * later families (axis, shape, attribute) are exercised in test_infer. */
static void check_rule_coverage(void)
{
    size_t covered = 0, total = 0;
    for (size_t i = 0; chk_rules[i]; i++) {
        total++;
        bool found = false;
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
            if (strcmp(cases[k].rule, chk_rules[i]) == 0)
                found = true;
        covered += found;
    }
    T_CHECK(covered == total, "only %zu of %zu rules have an invalid-model case", covered, total);
    printf("rules covered by invalid models: %zu of %zu\n", covered, total);
}

/* Runs each case through `run` on the base model it breaks. */
static void run_all(const Case *c, size_t n, void (*run)(const char *, const char *, IrModel *))
{
    for (size_t k = 0; k < n; k++) {
        IrModel *m = base();
        c[k].mutate(m);
        run(c[k].name, c[k].rule, m);
        ir_model_free(m);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    /* the CLI beside our tests folder: build/tests/x -> build/onnx-convert */
    snprintf(cli, sizeof cli, "%s", argv[0]);
    char *slash = strrchr(cli, '/');
    if (slash)
        *slash = '\0';
    slash = strrchr(cli, '/');
    if (slash)
        snprintf(slash, sizeof cli - (size_t)(slash - cli), "/onnx-convert");
    snprintf(tmpdir, sizeof tmpdir, "%s/oc-check-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    IrModel *m = base();
    run_case("valid_base", NULL, m);
    ir_model_free(m);
    run_all(cases, sizeof cases / sizeof *cases, run_case);
    check_rule_coverage();
    run_all(tolerated, sizeof tolerated / sizeof *tolerated, run_tolerated);
    check_defect_coverage();
    char f[512];
    snprintf(f, sizeof f, "%s/stderr.txt", tmpdir);
    unlink(f);
    snprintf(f, sizeof f, "%s/stdout.txt", tmpdir);
    unlink(f);
    rmdir(tmpdir);
    return t_done("check");
}
