/*
 * test_eval - the evaluator's core on hand-built models and values:
 * element type conversions with known bit patterns, TensorProto decoding
 * and packing, the comparison rules of `test`, scoping (subgraphs see
 * enclosing values, function bodies resolve ref_attr_name), and bad input:
 * wrong feed type, shape or count, an op without a kernel, a Gather index
 * out of range and a Loop that never stops all end in one error naming the
 * input or the node, never a crash. Jitter (EvOptions.jitter) moves half
 * results by at most one unit in the last place, and only computed ones.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "t.h"

/* ---- building blocks ---------------------------------------------------- */

static void die(const char *what)
{
    fprintf(stderr, "test_eval: cannot build the model: %s\n", what);
    exit(2);
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

static IrModel *model(int64_t opset)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", opset);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup("g");
    return m;
}

static void output(IrGraph *g, const char *name)
{
    ir_graph_add_output(g, ir_graph_find_local(g, name), NULL);
}

static EvValue *floats(size_t rank, const int64_t *dims, const float *v)
{
    EvValue *t = ev_tensor_new(IR_FLOAT, rank, dims, NULL);
    if (!t)
        die("tensor");
    memcpy(t->data, v, t->numel * sizeof(float));
    return t;
}

/* Runs m on n inputs; returns the error (empty on success) and the first
 * output in *out (NULL on failure). */
static const char *run(IrModel *m, const EvOptions *opt, size_t n,
                       EvValue **in, EvValue **out)
{
    static IrError err;
    EvValue **res;
    size_t n_res;
    err.msg[0] = 0;
    *out = NULL;
    if (ev_model_run(m, opt, n, in, &res, &n_res, &err) == 0) {
        *out = n_res ? res[0] : NULL;
        for (size_t i = 1; i < n_res; i++)
            ev_unref(res[i]);
        free(res);
    }
    return err.msg;
}

/* ---- element types -------------------------------------------------------- */

static void t_half(void)
{
    /* Bit patterns from IEEE 754 binary16. */
    T_CHECK(half_f32_to_f16(1.0f) == 0x3c00, "half(1)");
    T_CHECK(half_f32_to_f16(-2.0f) == 0xc000, "half(-2)");
    T_CHECK(half_f32_to_f16(65504.0f) == 0x7bff, "half(max)");
    T_CHECK(half_f32_to_f16(65520.0f) == 0x7c00, "65520 rounds to Inf");
    T_CHECK(half_f32_to_f16(5.9604645e-8f) == 0x0001, "smallest subnormal");
    T_CHECK(half_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00,
            "a tie rounds to even (down)");
    T_CHECK(half_f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02,
            "a tie rounds to even (up)");
    T_CHECK((half_f32_to_f16(NAN) & 0x7c00) == 0x7c00 &&
            (half_f32_to_f16(NAN) & 0x3ff), "NaN stays NaN");
    T_CHECK(half_f16_to_f32(0x3555) == 0.33325195f, "half 0x3555");
    T_CHECK(half_f16_to_f32(0x0001) == 5.9604645e-8f, "half subnormal");
    T_CHECK(isinf(half_f16_to_f32(0xfc00)) && half_f16_to_f32(0xfc00) < 0,
            "half -Inf");
    T_CHECK(half_f32_to_bf16(1.0f) == 0x3f80, "bf16(1)");
    T_CHECK(half_f32_to_bf16(1.00390625f) == 0x3f80, "bf16 tie to even");
    T_CHECK(half_f32_to_bf16(1.01171875f) == 0x3f82, "bf16 tie up to even");
    T_CHECK(half_bf16_to_f32(0xc0a0) == -5.0f, "bf16 -5");
}

static void t_decode(void)
{
    /* INT4 raw: two per byte, low nibble first, sign-extended. */
    int64_t d3 = 3;
    uint8_t raw[2] = {0x9f, 0x07};   /* -1, -7, 7 */
    IrTensor *t = ir_tensor_new("q", IR_INT4, 1, &d3, raw, 2);
    IrError err;
    EvValue *v = ev_from_ir_tensor(t, &err);
    T_CHECK(v && ev_get_i(v, 0) == -1 && ev_get_i(v, 1) == -7 &&
            ev_get_i(v, 2) == 7, "int4 unpacking");
    IrTensor *back = v ? ev_to_ir_tensor(v, "q") : NULL;
    T_CHECK(back && back->raw.len == 2 && back->raw.data[0] == 0x9f &&
            back->raw.data[1] == 0x07, "int4 packing round-trips");
    ir_tensor_free(back);
    ev_unref(v);
    ir_tensor_free(t);

    /* raw_data shorter than the dims: refused with the tensor's name. */
    int64_t d4 = 4;
    float f[3] = {1, 2, 3};
    t = ir_tensor_new("short", IR_FLOAT, 1, &d4, f, sizeof f);
    v = ev_from_ir_tensor(t, &err);
    T_CHECK(!v && strstr(err.msg, "'short'") && strstr(err.msg, "12 bytes"),
            "short raw_data refused: %s", v ? "(decoded)" : err.msg);
    ev_unref(v);
    ir_tensor_free(t);

    /* Dims whose product overflows are refused, not allocated. */
    int64_t huge[2] = {INT64_MAX / 2, 4};
    v = ev_tensor_new(IR_FLOAT, 2, huge, &err);
    T_CHECK(!v, "overflowing dims refused");
    ev_unref(v);
}

static void t_compare(void)
{
    int64_t d2 = 2;
    char why[256];
    EvValue *a = floats(1, &d2, (float[]){1.0f, NAN});
    EvValue *b = floats(1, &d2, (float[]){1.0005f, NAN});
    EvValue *c = floats(1, &d2, (float[]){1.01f, NAN});
    T_CHECK(ev_value_equal(a, b, 1e-3, 1e-7, why, sizeof why),
            "within rtol, NaN equals NaN: %s", why);
    T_CHECK(!ev_value_equal(c, a, 1e-3, 1e-7, why, sizeof why) &&
            strstr(why, "[0]"), "outside rtol names the element: %s", why);
    EvValue *i1 = ev_tensor_new(IR_INT64, 1, &d2, NULL);
    EvValue *i2 = ev_tensor_new(IR_INT64, 1, &d2, NULL);
    ((int64_t *)i2->data)[1] = 1;
    T_CHECK(!ev_value_equal(i1, i2, 1, 1, why, sizeof why),
            "integers compare exactly whatever the tolerance");
    int64_t d1 = 1;
    EvValue *s = floats(1, &d1, (float[]){1.0f});
    T_CHECK(!ev_value_equal(s, a, 1, 1, why, sizeof why) &&
            strstr(why, "shape"), "shapes must match: %s", why);
    ev_unref(a); ev_unref(b); ev_unref(c); ev_unref(i1); ev_unref(i2);
    ev_unref(s);
}

/* ---- models --------------------------------------------------------------- */

/* Y = Relu(X + W) with X, Y float [2]. */
static IrModel *add_relu(void)
{
    IrModel *m = model(13);
    IrGraph *g = m->graph;
    int64_t d2 = 2;
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 1, &d2));
    float w[2] = {1.0f, -5.0f};
    ir_graph_add_init(g, ir_tensor_new("W", IR_FLOAT, 1, &d2, w, sizeof w));
    node(g, "Add", "add0", 2, (const char *[]){"X", "W"}, 1,
         (const char *[]){"A"});
    node(g, "Relu", "relu0", 1, (const char *[]){"A"}, 1, (const char *[]){"Y"});
    output(g, "Y");
    return m;
}

static void t_run_and_feeds(void)
{
    IrModel *m = add_relu();
    int64_t d2 = 2, d3 = 3;
    EvValue *x = floats(1, &d2, (float[]){2.0f, 3.0f}), *y;
    const char *e = run(m, NULL, 1, &x, &y);
    T_CHECK(y && y->numel == 2 && ((float *)y->data)[0] == 3.0f &&
            ((float *)y->data)[1] == 0.0f, "Relu(X + W) = [3, 0]: %s", e);
    ev_unref(y);

    EvValue *xi = ev_tensor_new(IR_INT32, 1, &d2, NULL);
    e = run(m, NULL, 1, &xi, &y);
    T_CHECK(!y && strstr(e, "input 'X'") && strstr(e, "INT32") &&
            strstr(e, "FLOAT"), "wrong feed type names the input: %s", e);
    EvValue *x3 = floats(1, &d3, (float[]){1, 2, 3});
    e = run(m, NULL, 1, &x3, &y);
    T_CHECK(!y && strstr(e, "input 'X'") && strstr(e, "dim 0 is 3"),
            "wrong feed shape names the input: %s", e);
    e = run(m, NULL, 0, NULL, &y);
    T_CHECK(!y && strstr(e, "1 inputs to feed, 0 were given"),
            "missing feed: %s", e);
    ev_unref(x); ev_unref(xi); ev_unref(x3);
    ir_model_free(m);
}

static void t_missing_kernel(void)
{
    IrModel *m = model(13);
    IrGraph *g = m->graph;
    int64_t d2 = 2;
    ir_model_set_opset(m, "com.example", 1);
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 1, &d2));
    IrError err;
    if (!ir_node_new(g, NULL, "Frobnicate", "com.example", "frob0", 1,
                     (const char *[]){"X"}, 1, (const char *[]){"Y"}, &err))
        die(err.msg);
    output(g, "Y");
    EvValue *x = floats(1, &d2, (float[]){1, 2}), *y;
    const char *e = run(m, NULL, 1, &x, &y);
    T_CHECK(!y && strstr(e, "'frob0'") && strstr(e, "no kernel") &&
            strstr(e, "com.example.Frobnicate"), "op without kernel: %s", e);
    ev_unref(x);
    ir_model_free(m);
}

static void t_gather_range(void)
{
    IrModel *m = model(13);
    IrGraph *g = m->graph;
    int64_t d3 = 3, d1 = 1;
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 1, &d3));
    ir_graph_add_input(g, "I", ir_type_tensor(IR_INT64, 1, &d1));
    node(g, "Gather", "gather0", 2, (const char *[]){"X", "I"}, 1,
         (const char *[]){"Y"});
    output(g, "Y");
    EvValue *in[2] = {floats(1, &d3, (float[]){1, 2, 3}),
                      ev_tensor_new(IR_INT64, 1, &d1, NULL)};
    EvValue *y;
    ((int64_t *)in[1]->data)[0] = -3;
    const char *e = run(m, NULL, 2, in, &y);
    T_CHECK(y && ((float *)y->data)[0] == 1.0f, "index -3 is X[0]: %s", e);
    ev_unref(y);
    ((int64_t *)in[1]->data)[0] = 3;
    e = run(m, NULL, 2, in, &y);
    T_CHECK(!y && strstr(e, "'gather0'") && strstr(e, "Gather"),
            "index 3 of 3 refused naming the node: %s", e);
    ev_unref(in[0]); ev_unref(in[1]);
    ir_model_free(m);
}

/* Loop with no trip count whose condition stays true: the body is
 * cond_out = Identity(cond_in). */
static void t_loop_bound(void)
{
    IrModel *m = model(13);
    IrGraph *g = m->graph;
    int64_t none = 0;
    uint8_t yes = 1;
    ir_graph_add_init(g, ir_tensor_new("C", IR_BOOL, 0, &none, &yes, 1));
    IrNode *loop = node(g, "Loop", "forever", 2, (const char *[]){"", "C"}, 0,
                        NULL);
    IrGraph *body = ir_graph_new(g);
    body->name = mem_strdup("body");
    ir_graph_add_input(body, "i", ir_type_tensor(IR_INT64, 0, NULL));
    ir_graph_add_input(body, "c", ir_type_tensor(IR_BOOL, 0, NULL));
    node(body, "Identity", "keep", 1, (const char *[]){"c"}, 1,
         (const char *[]){"c2"});
    output(body, "c2");
    ir_node_set_attr(loop, ir_attr_graph("body", body));
    /* The graph needs an output: make the loop's result observable. */
    node(g, "Identity", "out", 1, (const char *[]){"C"}, 1,
         (const char *[]){"Y"});
    output(g, "Y");
    EvOptions opt = {.max_loop_iters = 1000};
    EvValue *y;
    const char *e = run(m, &opt, 0, NULL, &y);
    T_CHECK(!y && strstr(e, "'forever'") && strstr(e, "1000"),
            "a Loop past the bound is stopped, naming the node and bound: %s",
            e);
    ir_model_free(m);
}

/* An If whose branches read X of the enclosing graph. */
static void t_subgraph_scope(void)
{
    IrModel *m = model(13);
    IrGraph *g = m->graph;
    int64_t d2 = 2, none = 0;
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 1, &d2));
    uint8_t no = 0;
    ir_graph_add_init(g, ir_tensor_new("C", IR_BOOL, 0, &none, &no, 1));
    IrNode *n = node(g, "If", "if0", 1, (const char *[]){"C"}, 1,
                     (const char *[]){"Y"});
    const char *names[2] = {"then_branch", "else_branch"};
    const char *ops[2] = {"Identity", "Neg"};
    for (int b = 0; b < 2; b++) {
        IrGraph *sg = ir_graph_new(g);
        node(sg, ops[b], "inner", 1, (const char *[]){"X"}, 1,
             (const char *[]){"Z"});
        output(sg, "Z");
        ir_node_set_attr(n, ir_attr_graph(names[b], sg));
    }
    output(g, "Y");
    EvValue *x = floats(1, &d2, (float[]){1, -2}), *y;
    const char *e = run(m, NULL, 1, &x, &y);
    T_CHECK(y && ((float *)y->data)[0] == -1.0f &&
            ((float *)y->data)[1] == 2.0f,
            "the else branch negates the outer X: %s", e);
    ev_unref(y);
    ev_unref(x);
    ir_model_free(m);
}

/* A model-local function LeakyK(x) = LeakyRelu(x, alpha = @k): the body's
 * attribute refers to the caller's attribute k. */
static void t_function_ref_attr(void)
{
    IrModel *m = model(13);
    ir_model_set_opset(m, "local", 1);
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("LeakyK");
    f->domain = mem_strdup("local");
    f->body = ir_graph_new(NULL);
    f->body->is_function = true;
    f->n_attr_names = 1;
    f->attr_names = mem_alloc(sizeof(char *));
    f->attr_names[0] = mem_strdup("k");
    f->n_opsets = 1;
    f->opsets = mem_alloc(sizeof *f->opsets);
    f->opsets[0] = (IrOpset){.domain = mem_strdup(""), .has_version = true,
                             .version = 13};
    ir_graph_add_input(f->body, "x", NULL);
    IrNode *leaky = node(f->body, "LeakyRelu", "leaky", 1,
                         (const char *[]){"x"}, 1, (const char *[]){"y"});
    IrAttr *a = ir_attr_float("alpha", 0);
    a->has_f = false;
    a->ref_attr_name = mem_strdup("k");
    ir_node_set_attr(leaky, a);
    output(f->body, "y");
    m->functions = mem_alloc(sizeof *m->functions);
    m->functions[m->n_functions++] = f;

    IrGraph *g = m->graph;
    int64_t d2 = 2;
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 1, &d2));
    IrError err;
    IrNode *call = ir_node_new(g, NULL, "LeakyK", "local", "call0", 1,
                               (const char *[]){"X"}, 1, (const char *[]){"Y"},
                               &err);
    if (!call)
        die(err.msg);
    ir_node_set_attr(call, ir_attr_float("k", 0.5f));
    output(g, "Y");
    EvValue *x = floats(1, &d2, (float[]){-4, 4}), *y;
    const char *e = run(m, NULL, 1, &x, &y);
    T_CHECK(y && ((float *)y->data)[0] == -2.0f &&
            ((float *)y->data)[1] == 4.0f,
            "alpha comes from the caller's k: %s", e);
    ev_unref(y);
    ev_unref(x);
    ir_model_free(m);
}

/* The memory budget: refused before allocating, with the sizes; bytes
 * come back when values are freed; declared dims are compared with the
 * data before the tensor is allocated (2^31 floats declared, one held:
 * the budget of 1 MiB is never asked for 8 GiB). */
static void t_budget(void)
{
    EvBudget b;
    IrError err;
    ev_budget_push(&b, 1u << 20);
    int64_t d = 1 << 20;
    EvValue *v = ev_tensor_new(IR_FLOAT, 1, &d, &err);
    T_CHECK(!v && strstr(err.msg, "needs 4 MiB") &&
            strstr(err.msg, "memory budget of 1 MiB"), "4 MiB in 1 MiB: %s",
            v ? "(allocated)" : err.msg);
    T_CHECK(b.live == 0, "a refusal charges nothing (%llu)", (unsigned long long)b.live);
    d = 1000;
    v = ev_tensor_new(IR_FLOAT, 1, &d, &err);
    T_CHECK(v && b.live >= 4000 && b.live < 4400, "4000 bytes charged: %llu",
            (unsigned long long)b.live);
    ev_unref(v);
    T_CHECK(b.live == 0, "freed: given back (%llu)", (unsigned long long)b.live);

    int64_t big = (int64_t)1 << 31;
    float one = 1;
    IrTensor *t = ir_tensor_new("c", IR_FLOAT, 1, &big, &one, sizeof one);
    v = ev_from_ir_tensor(t, &err);
    T_CHECK(!v && strstr(err.msg, "2147483648") && !strstr(err.msg, "budget"),
            "2^31 declared, 1 held: %s", v ? "(decoded)" : err.msg);
    ir_tensor_free(t);
    ev_budget_pop(&b);
    T_CHECK(ev_budget_take(100, &(uint64_t){0}, &err) == 0,
            "no budget in force after the pop");
}

/* ---- jitter ----------------------------------------------------------------- */

/* Y = OP(X, X) (OP one of Add, Max) on a float16 X of n elements. */
static IrModel *jitter_model(const char *op, int64_t n)
{
    IrModel *m = model(13);
    IrGraph *g = m->graph;
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT16, 1, &n));
    node(g, op, "op", 2, (const char *[]){"X", "X"}, 1, (const char *[]){"Y"});
    output(g, "Y");
    return m;
}

/* Bits of the n elements of a float16 tensor. */
static uint16_t jitter_bits(const EvValue *t, size_t k)
{
    return ((const uint16_t *)t->data)[k];
}

/* EvOptions.jitter: a computing node's half results move at most one unit
 * in the last place, some up, some down, most not (one in eight moves);
 * zero stays; the same
 * seed repeats; a fed value is not changed in place; a pick (Max) is not
 * moved; without jitter nothing moves. */
static void t_jitter(void)
{
    enum { N = 1024 };
    int64_t n = N;
    IrModel *add = jitter_model("Add", n), *max = jitter_model("Max", n);
    EvValue *x = ev_tensor_new(IR_FLOAT16, 1, &n, NULL), *y, *y2;
    for (size_t k = 0; k < N; k++)
        ((uint16_t *)x->data)[k] = half_f32_to_f16((float)k * 0.37f - 100.0f);
    ((uint16_t *)x->data)[7] = 0;
    EvOptions plain = {0}, jit = {.jitter = 0x1234};
    const char *e = run(add, &plain, 1, &x, &y);
    EvValue *ref = y;
    e = run(add, &jit, 1, &x, &y);
    size_t up = 0, down = 0, far = 0, fed = 0;
    for (size_t k = 0; y && ref && k < N; k++) {
        int d = (int)(jitter_bits(y, k) & 0x7fff) - (int)(jitter_bits(ref, k) & 0x7fff);
        up += d == 1;
        down += d == -1;
        far += d > 1 || d < -1 || (jitter_bits(y, k) ^ jitter_bits(ref, k)) & 0x8000;
        fed += half_f32_to_f16((float)k * 0.37f - 100.0f) != jitter_bits(x, k) && k != 7;
    }
    T_CHECK(y && !far && up > N / 32 && down > N / 32 && up + down < N / 4 &&
            jitter_bits(y, 7) == 0,
            "jittered Add: %zu up, %zu down, %zu beyond one ulp, zero kept %d: %s", up,
            down, far, y ? jitter_bits(y, 7) == 0 : 0, e);
    T_CHECK(!fed, "jitter changed %zu elements of the fed value", fed);
    e = run(add, &jit, 1, &x, &y2);
    T_CHECK(y && y2 && !memcmp(y->data, y2->data, N * 2), "the same seed repeats: %s", e);
    ev_unref(y);
    ev_unref(y2);
    e = run(max, &jit, 1, &x, &y);
    T_CHECK(y && !memcmp(y->data, x->data, N * 2), "a jittered Max is not moved: %s", e);
    ev_unref(y);
    e = run(add, &plain, 1, &x, &y);
    T_CHECK(y && ref && !memcmp(y->data, ref->data, N * 2), "no jitter, no move: %s", e);
    ev_unref(y);
    ev_unref(ref);
    ev_unref(x);
    ir_model_free(add);
    ir_model_free(max);
}

/* ---- broadcasting ------------------------------------------------------ */

/* The element of a tensor of dims `bd` (rank br, right-aligned) that output
 * element k of dims yd (rank 4) reads under numpy broadcasting. */
static size_t bc_index(size_t k, const int64_t *yd, const int64_t *bd, size_t br)
{
    size_t idx[4], off = 0;
    for (size_t a = 4; a-- > 0;) {
        idx[a] = k % (size_t)yd[a];
        k /= (size_t)yd[a];
    }
    for (size_t a = 0; a < br; a++) {
        size_t ya = 4 - br + a;
        off = off * (size_t)bd[a] + (bd[a] == 1 ? 0 : idx[ya]);
    }
    return off;
}

/* Sub(X, B) and Sub(B, X) for X [2, 3, 4, 5] and B of each shape: the
 * fast loops over runs of a per-channel or trailing operand (and the
 * general walk, for a shape with a 1 inside) give numpy's values. */
static void t_broadcast_runs(void)
{
    static const int64_t yd[4] = {2, 3, 4, 5};
    static const struct { size_t rank; int64_t d[4]; } shapes[] = {
        {3, {3, 1, 1}}, {4, {1, 3, 4, 1}}, {2, {4, 5}}, {1, {5}}, {4, {2, 1, 1, 1}},
        {1, {1}}, {3, {3, 1, 5}}, {4, {2, 3, 4, 5}}, {2, {4, 1}},
    };
    float xv[120];
    for (size_t k = 0; k < 120; k++)
        xv[k] = (float)k * 0.25f - 7.0f;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int flip = 0; flip < 2; flip++) {
            IrModel *m = model(13);
            IrGraph *g = m->graph;
            ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 4, yd));
            ir_graph_add_input(g, "B", ir_type_tensor(IR_FLOAT, shapes[s].rank, shapes[s].d));
            const char *in[2] = {flip ? "B" : "X", flip ? "X" : "B"};
            node(g, "Sub", "sub0", 2, in, 1, (const char *[]){"Y"});
            output(g, "Y");
            EvValue *x = floats(4, yd, xv);
            EvValue *b = ev_tensor_new(IR_FLOAT, shapes[s].rank, shapes[s].d, NULL);
            for (size_t k = 0; b && k < b->numel; k++)
                ((float *)b->data)[k] = (float)k * 1.5f + 0.5f;
            EvValue *ins[2] = {x, b}, *y;
            const char *e = run(m, NULL, 2, ins, &y);
            size_t bad = y ? 0 : 1;
            for (size_t k = 0; y && k < 120; k++) {
                float bk = ((float *)b->data)[bc_index(k, yd, shapes[s].d, shapes[s].rank)];
                float want = flip ? bk - xv[k] : xv[k] - bk;
                bad += ((float *)y->data)[k] != want;
            }
            T_CHECK(y && y->numel == 120 && bad == 0,
                    "Sub over B of rank %zu (shape %zu), flipped %d: %zu wrong: %s",
                    shapes[s].rank, s, flip, bad, e);
            ev_unref(y);
            ev_unref(x);
            ev_unref(b);
            ir_model_free(m);
        }
    }
}

int main(void)
{
    t_broadcast_runs();
    t_budget();
    t_half();
    t_decode();
    t_compare();
    t_run_and_feeds();
    t_missing_kernel();
    t_gather_range();
    t_loop_bound();
    t_subgraph_scope();
    t_function_ref_attr();
    t_jitter();
    return t_done("test_eval");
}
