/*
 * test_infer.c - type and shape inference on small graphs built here:
 * symbolic dimensions through broadcasting, MatMul and shape arithmetic
 * (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), constants, Cast,
 * subgraphs, model-local functions, and the contradictions inference must
 * refuse (each naming its rule). Expected shapes follow the ONNX
 * specification of each op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dims.h"
#include "analysis/infer.h"
#include "ir/ir.h"
#include "t.h"

enum { F32 = 1, I32 = 6, I64 = 7, BOOL = 9 };

/* A type from "N,3,?" (a name is a symbol, ? unknown, a number a value). */
static IrType *ty(int32_t elem, const char *dims)
{
    IrType *t = ir_type_tensor(elem, 0, NULL);
    ir_shape_free(t->shape);
    size_t rank = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", dims);
    for (char *p = buf; *p; p++)
        rank += *p == ',';
    rank = buf[0] ? rank + 1 : 0;
    t->shape = ir_shape_new(rank);
    char *save = NULL, *tok = buf[0] ? strtok_r(buf, ",", &save) : NULL;
    for (size_t k = 0; tok; k++, tok = strtok_r(NULL, ",", &save)) {
        if (tok[0] >= '0' && tok[0] <= '9')
            inf_dim_set(&t->shape->dims[k], atoll(tok));
        else if (tok[0] != '?') {
            t->shape->dims[k].kind = IR_DIM_PARAM;
            t->shape->dims[k].param = mem_strdup(tok);
        }
    }
    return t;
}

/* The shape of value `name` as "N,3,?" ("none" for unknown rank,
 * "untyped" when inference left no type). */
static const char *shape_of(IrModel *m, const char *name, char *buf, size_t cap)
{
    IrValue *v = ir_graph_find_local(m->graph, name);
    if (!v || !v->type)
        return "untyped";
    if (!v->type->shape)
        return "none";
    dims_text(v->type->shape, buf, cap);
    return buf;
}

static int32_t elem_of(IrModel *m, const char *name)
{
    IrValue *v = ir_graph_find_local(m->graph, name);
    return v && v->type && v->type->has_elem_type ? v->type->elem_type : 0;
}

static IrModel *model(int64_t opset)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", opset);
    m->graph = ir_graph_new(NULL);
    return m;
}

static void input(IrModel *m, const char *name, int32_t elem, const char *dims)
{
    ir_graph_add_input(m->graph, name, ty(elem, dims));
}

/* An int64 initializer of n values (rank 1, or rank 0 when scalar). */
static void ints(IrModel *m, const char *name, size_t n, const int64_t *v, bool scalar)
{
    int64_t dim = (int64_t)n;
    uint8_t buf[64 * 8];
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            buf[i * 8 + (size_t)b] = (uint8_t)((uint64_t)v[i] >> (8 * b));
    ir_graph_add_init(m->graph, ir_tensor_new(name, I64, scalar ? 0 : 1, &dim, buf, n * 8));
}

static IrNode *op(IrModel *m, const char *type, const char *in_csv, const char *out_csv)
{
    const char *in[8], *out[8];
    char ib[256], ob[256];
    size_t ni = 0, no = 0;
    char *save;
    snprintf(ib, sizeof ib, "%s", in_csv);
    snprintf(ob, sizeof ob, "%s", out_csv);
    for (char *t = strtok_r(ib, ",", &save); t; t = strtok_r(NULL, ",", &save))
        in[ni++] = strcmp(t, "-") == 0 ? "" : t;
    for (char *t = strtok_r(ob, ",", &save); t; t = strtok_r(NULL, ",", &save))
        out[no++] = t;
    IrError err;
    IrNode *n = ir_node_new(m->graph, NULL, type, "", NULL, ni, in, no, out, &err);
    if (!n) {
        fprintf(stderr, "cannot build %s: %s\n", type, err.msg);
        exit(2);
    }
    return n;
}

/* Runs inference; expects success, or a failure naming `rule`. */
static void infer(IrModel *m, const char *rule, const char *what)
{
    IrError err = {{0}};
    int rc = inf_model(m, NULL, &err);
    if (!rule) {
        T_CHECK(rc == 0, "%s: inference failed: %s", what, err.msg);
        return;
    }
    size_t n = strlen(rule);
    T_CHECK(rc < 0 && strncmp(err.msg, rule, n) == 0 && err.msg[n] == ':',
            "%s: expected a '%s' refusal, got %s", what, rule, rc < 0 ? err.msg : "success");
}

#define EXPECT_SHAPE(m, name, want)                                             \
    do {                                                                        \
        char b_[256];                                                           \
        const char *got_ = shape_of(m, name, b_, sizeof b_);                    \
        T_CHECK(strcmp(got_, want) == 0, "%s: shape %s, want %s", name, got_, want); \
    } while (0)

static void test_broadcast_symbols(void)
{
    IrModel *m = model(14);
    input(m, "X", F32, "N,3");
    input(m, "Y", F32, "1,3");
    input(m, "Z", F32, "M,3");
    input(m, "C", F32, "N,1");
    input(m, "R", F32, "4");
    op(m, "Add", "X,Y", "a");
    op(m, "Add", "X,Z", "b");  /* N vs M: either may be 1, so unknown */
    op(m, "Mul", "C,R", "c");
    op(m, "Add", "X,X", "d");
    op(m, "Equal", "X,Y", "e");
    infer(m, NULL, "broadcast");
    EXPECT_SHAPE(m, "a", "N,3");
    EXPECT_SHAPE(m, "b", "?,3");
    EXPECT_SHAPE(m, "c", "N,4");
    EXPECT_SHAPE(m, "d", "N,3");
    T_CHECK(elem_of(m, "e") == BOOL, "Equal gives bool");
    ir_model_free(m);
}

static void test_matmul_symbols(void)
{
    IrModel *m = model(13);
    input(m, "A", F32, "B,S,64");
    input(m, "W", F32, "64,32");
    input(m, "V", F32, "64");
    op(m, "MatMul", "A,W", "y");
    op(m, "MatMul", "A,V", "z"); /* 1-D right operand: its dim drops */
    infer(m, NULL, "matmul");
    EXPECT_SHAPE(m, "y", "B,S,32");
    EXPECT_SHAPE(m, "z", "B,S");
    ir_model_free(m);
}

/* The reshape target is computed from the input's own shape, as exporters
 * write it: [Shape(X)[0], -1]. */
static void test_shape_arithmetic(void)
{
    IrModel *m = model(13);
    input(m, "X", F32, "N,12,64");
    int64_t zero = 0, minus1 = -1, axes0 = 0;
    ints(m, "i0", 1, &zero, true);
    ints(m, "m1", 1, &minus1, false);
    ints(m, "ax", 1, &axes0, false);
    op(m, "Shape", "X", "s");
    op(m, "Gather", "s,i0", "g");
    op(m, "Unsqueeze", "g,ax", "u");
    op(m, "Concat", "u,m1", "target")->attr = NULL;
    IrNode *cat = m->graph->last;
    cat->attr = mem_array(1, sizeof *cat->attr);
    cat->n_attr = 0;
    ir_node_set_attr(cat, ir_attr_int("axis", 0));
    op(m, "Reshape", "X,target", "r");
    op(m, "Flatten", "X", "f");
    op(m, "Transpose", "X", "t");
    infer(m, NULL, "shape arithmetic");
    EXPECT_SHAPE(m, "s", "3");
    EXPECT_SHAPE(m, "target", "2");
    EXPECT_SHAPE(m, "r", "N,768");
    EXPECT_SHAPE(m, "f", "N,768");
    EXPECT_SHAPE(m, "t", "64,12,N");
    T_CHECK(elem_of(m, "s") == I64, "Shape gives int64");
    ir_model_free(m);
}

static void test_constants_and_cast(void)
{
    IrModel *m = model(13);
    input(m, "X", F32, "2,N");
    IrNode *k = op(m, "Constant", "", "k");
    int64_t dims[2] = {2, 2};
    float vals[4] = {0};
    ir_node_set_attr(k, ir_attr_tensor("value", ir_tensor_new(NULL, F32, 2, dims, vals, 16)));
    IrNode *c = op(m, "Cast", "X", "xi");
    ir_node_set_attr(c, ir_attr_int("to", I32));
    int64_t shp[3] = {3, 1, 2};
    ints(m, "shp", 3, shp, false);
    op(m, "ConstantOfShape", "shp", "z");
    infer(m, NULL, "constants");
    EXPECT_SHAPE(m, "k", "2,2");
    T_CHECK(elem_of(m, "k") == F32, "Constant's type is its tensor's");
    EXPECT_SHAPE(m, "xi", "2,N");
    T_CHECK(elem_of(m, "xi") == I32, "Cast gives its 'to'");
    EXPECT_SHAPE(m, "z", "3,1,2");
    T_CHECK(elem_of(m, "z") == F32, "ConstantOfShape defaults to float");
    ir_model_free(m);
}

/* If with branches of different static dims: those dims become unknown. */
static void test_if_merge(void)
{
    IrModel *m = model(13);
    input(m, "cond", BOOL, "");
    input(m, "X", F32, "N,3");
    input(m, "Y", F32, "N,5");
    IrNode *n = op(m, "If", "cond", "out");
    const char *names[2] = {"then_branch", "else_branch"};
    const char *src[2] = {"X", "Y"};
    for (int b = 0; b < 2; b++) {
        IrGraph *g = ir_graph_new(m->graph);
        IrError err;
        char o[16];
        snprintf(o, sizeof o, "o%d", b);
        ir_node_new(g, NULL, "Relu", "", NULL, 1, &src[b], 1, (const char *[]){o}, &err);
        ir_graph_add_output(g, ir_graph_find_local(g, o), NULL);
        ir_node_set_attr(n, ir_attr_graph(names[b], g));
    }
    infer(m, NULL, "if");
    EXPECT_SHAPE(m, "out", "N,?");
    T_CHECK(elem_of(m, "out") == F32, "If output type from its branches");
    ir_model_free(m);
}

/* A call of a model-local function takes the type its body computes. */
static void test_function_call(void)
{
    IrModel *m = model(13);
    ir_model_set_opset(m, "local", 1);
    IrFunction *f = mem_alloc(sizeof *f);
    IrError err;
    f->name = mem_strdup("Twice");
    f->domain = mem_strdup("local");
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    f->n_opsets = 1;
    f->opsets = mem_alloc(sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true, .version = 13};
    ir_graph_add_input(f->body, "x", NULL);
    ir_node_new(f->body, NULL, "Concat", "", NULL, 2, (const char *[]){"x", "x"}, 1,
                (const char *[]){"y"}, &err);
    ir_node_set_attr(f->body->last, ir_attr_int("axis", 0));
    ir_graph_add_output(f->body, ir_graph_find_local(f->body, "y"), NULL);
    m->functions = mem_alloc(sizeof *m->functions);
    m->functions[m->n_functions++] = f;
    input(m, "X", F32, "N,3");
    IrNode *call = op(m, "Twice", "X", "out");
    free(call->domain);
    call->domain = mem_strdup("local");
    infer(m, NULL, "function call");
    EXPECT_SHAPE(m, "out", "?,3");
    T_CHECK(elem_of(m, "out") == F32, "function output type");
    ir_model_free(m);
}

static void test_refusals(void)
{
    IrModel *m = model(14);
    input(m, "X", F32, "2,3");
    input(m, "Y", F32, "4,3");
    op(m, "Add", "X,Y", "a");
    infer(m, "broadcast", "2x3 + 4x3");
    ir_model_free(m);

    m = model(14);
    input(m, "X", F32, "2,3");
    input(m, "I", I64, "2,3");
    op(m, "Add", "X,I", "a");
    infer(m, "type-constraint", "float + int64");
    ir_model_free(m);

    m = model(13);
    input(m, "X", F32, "2,3");
    input(m, "Y", F32, "2,3");
    IrNode *c = op(m, "Concat", "X,Y", "a");
    ir_node_set_attr(c, ir_attr_int("axis", 5));
    infer(m, "axis", "Concat axis 5 of rank 2");
    ir_model_free(m);

    m = model(13);
    input(m, "X", F32, "2,3");
    int64_t bad[2] = {4, 4};
    ints(m, "t", 2, bad, false);
    op(m, "Reshape", "X,t", "r");
    infer(m, "shape", "Reshape of 6 elements to 4x4");
    ir_model_free(m);

    m = model(13);
    input(m, "A", F32, "2,3");
    input(m, "B", F32, "4,5");
    op(m, "MatMul", "A,B", "y");
    infer(m, "shape", "MatMul 2x3 by 4x5");
    ir_model_free(m);
}

int main(void)
{
    test_broadcast_symbols();
    test_matmul_symbols();
    test_shape_arithmetic();
    test_constants_and_cast();
    test_if_merge();
    test_function_call();
    test_refusals();
    return t_done("infer");
}
