/*
 * tool_gen_models.c - builds the models in testdata/ through the IR API.
 *
 *   tool_gen_models OUT_DIR
 *
 * writes OUT_DIR/small_cnn.onnx (opset 13) and OUT_DIR/tiny_transformer.onnx
 * (opset 17). Weights come from a fixed-seed generator, so the files are the
 * same on every run and every machine; their expected outputs
 * (in OUT_DIR/NAME_data/) are computed outside this project and committed.
 * Only the IR API is used, so these models also exercise ir.c and save.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "io/save.h"

#define MAX_NAMES 8

/* A broken build step is a bug in this file, not an input error. */
static void die(const char *what, const char *detail)
{
    fprintf(stderr, "tool_gen_models: %s: %s\n", what, detail);
    exit(1);
}

/* ---- deterministic weights ----------------------------------------- */

/* 64-bit LCG (Knuth's MMIX constants). Its top 24 bits are used, which are
 * well mixed and turn into a float exactly. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
    rng_state = seed;
}

/* Uniform in [lo, hi). */
static float rng_uniform(float lo, float hi)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    float unit = (float)(rng_state >> 40) / (float)(1u << 24);
    return lo + (hi - lo) * unit;
}

/* ---- tensors, written as little-endian bytes whatever the host -------- */

/* Copies n floats into buf as IEEE-754 little-endian. */
static void pack_floats(uint8_t *buf, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        for (int b = 0; b < 4; b++)
            buf[i * 4 + (size_t)b] = (uint8_t)(u >> (8 * b));
    }
}

static void pack_int64s(uint8_t *buf, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)v[i];
        for (int b = 0; b < 8; b++)
            buf[i * 8 + (size_t)b] = (uint8_t)(u >> (8 * b));
    }
}

/* Number of elements of a small, fixed shape. */
static size_t shape_numel(size_t rank, const int64_t *dims)
{
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

/* Adds a float initializer holding `v` (numel of dims values). */
static void add_floats(IrGraph *g, const char *name, size_t rank,
                       const int64_t *dims, const float *v)
{
    size_t n = shape_numel(rank, dims);
    uint8_t *buf = mem_array(n, 4);
    pack_floats(buf, v, n);
    IrTensor *t = ir_tensor_new(name, IR_FLOAT, rank, dims, buf, n * 4);
    free(buf);
    if (!t || !ir_graph_add_init(g, t))
        die("cannot add initializer", name);
}

/* Adds a float initializer of uniform random values in [lo, hi). */
static void add_random(IrGraph *g, const char *name, size_t rank,
                       const int64_t *dims, float lo, float hi)
{
    size_t n = shape_numel(rank, dims);
    float *v = mem_array(n, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(lo, hi);
    add_floats(g, name, rank, dims, v);
    free(v);
}

/* Adds a float scalar (rank 0) initializer. */
static void add_scalar(IrGraph *g, const char *name, float v)
{
    add_floats(g, name, 0, NULL, &v);
}

/* Adds a 1-D int64 initializer (shapes for Reshape). */
static void add_int64s(IrGraph *g, const char *name, size_t n,
                       const int64_t *v)
{
    int64_t dim = (int64_t)n;
    uint8_t *buf = mem_array(n, 8);
    pack_int64s(buf, v, n);
    IrTensor *t = ir_tensor_new(name, IR_INT64, 1, &dim, buf, n * 8);
    free(buf);
    if (!t || !ir_graph_add_init(g, t))
        die("cannot add initializer", name);
}

/* ---- nodes and types ----------------------------------------------- */

/* Splits "a,b,c" into names (at most MAX_NAMES, each under 64 bytes). */
static size_t split_names(const char *csv, char names[][64],
                          const char **ptrs)
{
    size_t n = 0, len = 0;
    if (!csv || !*csv)
        return 0;
    for (const char *p = csv;; p++) {
        if (*p == ',' || *p == '\0') {
            if (n == MAX_NAMES)
                die("too many names", csv);
            names[n][len] = '\0';
            ptrs[n] = names[n];
            n++;
            len = 0;
            if (*p == '\0')
                break;
        } else if (len < 63) {
            names[n][len++] = *p;
        }
    }
    return n;
}

/* Appends an ai.onnx node; `ins` and `outs` are comma-separated names. */
static IrNode *node(IrGraph *g, const char *op, const char *name,
                    const char *ins, const char *outs)
{
    char in_buf[MAX_NAMES][64], out_buf[MAX_NAMES][64];
    const char *in[MAX_NAMES], *out[MAX_NAMES];
    size_t n_in = split_names(ins, in_buf, in);
    size_t n_out = split_names(outs, out_buf, out);
    IrError err = {{0}};
    IrNode *n = ir_node_new(g, NULL, op, "", name, n_in, in, n_out, out,
                            &err);
    if (!n)
        die(name, err.msg);
    return n;
}

static void set_doc(IrNode *n, const char *doc)
{
    free(n->doc_string);
    n->doc_string = mem_strdup(doc);
}

static IrType *ftype(size_t rank, const int64_t *dims)
{
    return ir_type_tensor(IR_FLOAT, rank, dims);
}

/* Declares the float type of an intermediate value as a value_info entry. */
static void add_value_info(IrGraph *g, const char *name, size_t rank,
                           const int64_t *dims)
{
    IrValue *v = ir_graph_find_local(g, name);
    if (!v)
        die("value_info for an unknown value", name);
    ir_graph_add_value_info(g, v, ftype(rank, dims));
}

static void add_output(IrGraph *g, const char *name, size_t rank,
                       const int64_t *dims)
{
    IrValue *v = ir_graph_find_local(g, name);
    if (!v || !ir_graph_add_output(g, v, ftype(rank, dims)))
        die("cannot add graph output", name);
}


/* A model with its header fields and an empty graph. */
static IrModel *new_model(int64_t ir_version, int64_t opset,
                          const char *graph_name, const char *doc)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = ir_version;
    ir_model_set_opset(m, "", opset);
    m->producer_name = mem_strdup("onnx-convert testdata");
    m->producer_version = mem_strdup("1");
    m->doc_string = mem_strdup(doc);
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup(graph_name);
    return m;
}

/* ---- small_cnn ----------------------------------------------------- */

/* Conv(3->8) + BatchNormalization + Relu + MaxPool: [1,3,32,32] ->
 * [1,8,16,16]. */
static void cnn_stage1(IrGraph *g)
{
    static const int64_t w1[4] = {8, 3, 3, 3}, c8[1] = {8};
    static const int64_t k3[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
    static const int64_t k2[2] = {2, 2}, s1[2] = {1, 1};
    add_random(g, "conv1.weight", 4, w1, -0.2f, 0.2f);
    add_random(g, "conv1.bias", 1, c8, -0.2f, 0.2f);
    add_random(g, "bn1.scale", 1, c8, 0.5f, 1.5f);
    add_random(g, "bn1.bias", 1, c8, -0.3f, 0.3f);
    add_random(g, "bn1.mean", 1, c8, -0.2f, 0.2f);
    add_random(g, "bn1.var", 1, c8, 0.5f, 2.0f);

    IrNode *n = node(g, "Conv", "conv1", "input,conv1.weight,conv1.bias",
                     "conv1_out");
    ir_node_set_attr(n, ir_attr_ints("kernel_shape", 2, k3));
    ir_node_set_attr(n, ir_attr_ints("pads", 4, pads));
    ir_node_set_attr(n, ir_attr_ints("strides", 2, s1));
    set_doc(n, "3x3 convolution, 3 -> 8 channels, same padding");
    n = node(g, "BatchNormalization", "bn1",
             "conv1_out,bn1.scale,bn1.bias,bn1.mean,bn1.var", "bn1_out");
    ir_node_set_attr(n, ir_attr_float("epsilon", 1e-5f));
    node(g, "Relu", "relu1", "bn1_out", "relu1_out");
    n = node(g, "MaxPool", "pool1", "relu1_out", "pool1_out");
    ir_node_set_attr(n, ir_attr_ints("kernel_shape", 2, k2));
    ir_node_set_attr(n, ir_attr_ints("strides", 2, k2));
}

/* Conv(8->16) + Relu + GlobalAveragePool + Flatten + Gemm(16->10) +
 * Softmax: [1,8,16,16] -> logits, probs [1,10]. */
static void cnn_stage2(IrGraph *g)
{
    static const int64_t w2[4] = {16, 8, 3, 3}, c16[1] = {16};
    static const int64_t fcw[2] = {10, 16}, c10[1] = {10};
    static const int64_t k3[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
    add_random(g, "conv2.weight", 4, w2, -0.2f, 0.2f);
    add_random(g, "conv2.bias", 1, c16, -0.2f, 0.2f);
    add_random(g, "fc.weight", 2, fcw, -0.2f, 0.2f);
    add_random(g, "fc.bias", 1, c10, -0.2f, 0.2f);

    IrNode *n = node(g, "Conv", "conv2", "pool1_out,conv2.weight,conv2.bias",
                     "conv2_out");
    ir_node_set_attr(n, ir_attr_ints("kernel_shape", 2, k3));
    ir_node_set_attr(n, ir_attr_ints("pads", 4, pads));
    node(g, "Relu", "relu2", "conv2_out", "relu2_out");
    node(g, "GlobalAveragePool", "gap", "relu2_out", "gap_out");
    n = node(g, "Flatten", "flatten", "gap_out", "flat");
    ir_node_set_attr(n, ir_attr_int("axis", 1));
    n = node(g, "Gemm", "fc", "flat,fc.weight,fc.bias", "logits");
    ir_node_set_attr(n, ir_attr_int("transB", 1));
    set_doc(n, "classifier: logits = flat * fc.weight^T + fc.bias");
    n = node(g, "Softmax", "softmax", "logits", "probs");
    ir_node_set_attr(n, ir_attr_int("axis", 1));
}

static void cnn_value_info(IrGraph *g)
{
    static const int64_t a[4] = {1, 8, 32, 32}, b[4] = {1, 8, 16, 16};
    static const int64_t c[4] = {1, 16, 16, 16}, d[4] = {1, 16, 1, 1};
    static const int64_t e[2] = {1, 16};
    add_value_info(g, "conv1_out", 4, a);
    add_value_info(g, "bn1_out", 4, a);
    add_value_info(g, "relu1_out", 4, a);
    add_value_info(g, "pool1_out", 4, b);
    add_value_info(g, "conv2_out", 4, c);
    add_value_info(g, "relu2_out", 4, c);
    add_value_info(g, "gap_out", 4, d);
    add_value_info(g, "flat", 2, e);
}

static IrModel *build_small_cnn(void)
{
    static const int64_t in[4] = {1, 3, 32, 32}, out[2] = {1, 10};
    IrModel *m = new_model(7, 13, "small_cnn",
                           "A small image classifier for onnx-convert's "
                           "tests: two convolutions, batch norm, pooling "
                           "and a softmax head.");
    IrGraph *g = m->graph;
    rng_seed(0x5eed0001u);
    ir_graph_add_input(g, "input", ftype(4, in));
    cnn_stage1(g);
    cnn_stage2(g);
    add_output(g, "logits", 2, out);
    add_output(g, "probs", 2, out);
    cnn_value_info(g);
    return m;
}

/* ---- tiny_transformer ---------------------------------------------- */

/* Hidden size, heads, head size, sequence length, MLP width. */
enum { HID = 16, HEADS = 2, HEAD = 8, SEQ = 8, MLP = 32 };

/* LayerNormalization over the last axis, with its own scale and bias. */
static void layer_norm(IrGraph *g, const char *prefix, const char *x,
                       const char *y)
{
    static const int64_t c[1] = {HID};
    char scale[64], bias[64], ins[200];
    snprintf(scale, sizeof scale, "%s.scale", prefix);
    snprintf(bias, sizeof bias, "%s.bias", prefix);
    add_random(g, scale, 1, c, 0.8f, 1.2f);
    add_random(g, bias, 1, c, -0.1f, 0.1f);
    snprintf(ins, sizeof ins, "%s,%s,%s", x, scale, bias);
    IrNode *n = node(g, "LayerNormalization", prefix, ins, y);
    ir_node_set_attr(n, ir_attr_int("axis", -1));
    ir_node_set_attr(n, ir_attr_float("epsilon", 1e-5f));
}

/* y = x @ W + b with W [n_in, n_out]: MatMul then Add. */
static void linear(IrGraph *g, const char *prefix, const char *x,
                   const char *y, int64_t n_in, int64_t n_out)
{
    const int64_t wd[2] = {n_in, n_out}, bd[1] = {n_out};
    char w[64], b[64], mm[64], ins[200];
    snprintf(w, sizeof w, "%s.weight", prefix);
    snprintf(b, sizeof b, "%s.bias", prefix);
    snprintf(mm, sizeof mm, "%s_mm", prefix);
    add_random(g, w, 2, wd, -0.2f, 0.2f);
    add_random(g, b, 1, bd, -0.1f, 0.1f);
    snprintf(ins, sizeof ins, "%s,%s", x, w);
    node(g, "MatMul", mm, ins, mm);
    snprintf(ins, sizeof ins, "%s,%s", mm, b);
    snprintf(mm, sizeof mm, "%s_add", prefix);
    node(g, "Add", mm, ins, y);
}

/* Splits x [1,SEQ,HID] into heads and transposes with `perm`:
 * [0,2,1,3] gives [1,HEADS,SEQ,HEAD]; [0,2,3,1] gives K^T [1,HEADS,HEAD,SEQ]. */
static void split_heads(IrGraph *g, const char *x, const char *y,
                        const int64_t *perm)
{
    char heads[64], ins[200], name[64];
    snprintf(heads, sizeof heads, "%s_heads", x);
    snprintf(ins, sizeof ins, "%s,heads_shape", x);
    snprintf(name, sizeof name, "%s_reshape", x);
    node(g, "Reshape", name, ins, heads);
    snprintf(name, sizeof name, "%s_transpose", x);
    IrNode *n = node(g, "Transpose", name, heads, y);
    ir_node_set_attr(n, ir_attr_ints("perm", 4, perm));
}

/* Two-head self-attention on ln1, with output projection: -> attn_out. */
static void attention(IrGraph *g)
{
    static const int64_t heads[4] = {1, SEQ, HEADS, HEAD};
    static const int64_t merged[3] = {1, SEQ, HID};
    static const int64_t bhsd[4] = {0, 2, 1, 3}, bhds[4] = {0, 2, 3, 1};
    add_int64s(g, "heads_shape", 4, heads);
    add_int64s(g, "merged_shape", 3, merged);
    add_scalar(g, "attn_scale", sqrtf((float)HEAD));
    linear(g, "q_proj", "ln1", "q", HID, HID);
    linear(g, "k_proj", "ln1", "k", HID, HID);
    linear(g, "v_proj", "ln1", "v", HID, HID);
    split_heads(g, "q", "q_t", bhsd);
    split_heads(g, "k", "k_t", bhds);
    split_heads(g, "v", "v_t", bhsd);

    node(g, "MatMul", "scores", "q_t,k_t", "scores");
    IrNode *n = node(g, "Div", "scale", "scores,attn_scale", "scaled");
    set_doc(n, "scores / sqrt(head size)");
    n = node(g, "Softmax", "attn_softmax", "scaled", "attn");
    ir_node_set_attr(n, ir_attr_int("axis", -1));
    node(g, "MatMul", "context", "attn,v_t", "context");
    n = node(g, "Transpose", "context_transpose", "context", "context_t");
    ir_node_set_attr(n, ir_attr_ints("perm", 4, bhsd));
    node(g, "Reshape", "context_merge", "context_t,merged_shape", "merged");
    linear(g, "o_proj", "merged", "attn_out", HID, HID);
}

/* x * 0.5 * (1 + erf(x / sqrt(2))), the exact Gelu, from basic ops. */
static void gelu(IrGraph *g, const char *x, const char *y)
{
    add_scalar(g, "sqrt2", sqrtf(2.0f));
    add_scalar(g, "one", 1.0f);
    add_scalar(g, "half", 0.5f);
    char ins[200];
    snprintf(ins, sizeof ins, "%s,sqrt2", x);
    IrNode *n = node(g, "Div", "gelu_div", ins, "gelu_div");
    set_doc(n, "Gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2)))");
    node(g, "Erf", "gelu_erf", "gelu_div", "gelu_erf");
    node(g, "Add", "gelu_add", "gelu_erf,one", "gelu_add");
    snprintf(ins, sizeof ins, "%s,gelu_add", x);
    node(g, "Mul", "gelu_mul", ins, "gelu_mul");
    node(g, "Mul", "gelu_half", "gelu_mul,half", y);
}

static void transformer_value_info(IrGraph *g)
{
    static const int64_t h[3] = {1, SEQ, HID}, w[3] = {1, SEQ, MLP};
    static const int64_t heads[4] = {1, SEQ, HEADS, HEAD};
    static const int64_t att[4] = {1, HEADS, SEQ, SEQ};
    static const int64_t bhsd[4] = {1, HEADS, SEQ, HEAD};
    static const int64_t bhds[4] = {1, HEADS, HEAD, SEQ};
    static const char *const hidden[] = {"ln1", "q", "k", "v", "merged",
                                         "attn_out", "residual1", "ln2",
                                         "mlp_out"};
    for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++)
        add_value_info(g, hidden[i], 3, h);
    add_value_info(g, "q_heads", 4, heads);
    add_value_info(g, "q_t", 4, bhsd);
    add_value_info(g, "k_t", 4, bhds);
    add_value_info(g, "v_t", 4, bhsd);
    add_value_info(g, "scores", 4, att);
    add_value_info(g, "attn", 4, att);
    add_value_info(g, "context", 4, bhsd);
    add_value_info(g, "context_t", 4, heads);
    add_value_info(g, "mlp_hidden", 3, w);
    add_value_info(g, "mlp_act", 3, w);
}

static IrModel *build_tiny_transformer(void)
{
    static const int64_t shape[3] = {1, SEQ, HID};
    IrModel *m = new_model(8, 17, "tiny_transformer",
                           "One pre-norm transformer block (2-head "
                           "self-attention and a Gelu MLP) written with "
                           "standard ai.onnx ops, for onnx-convert's tests.");
    IrGraph *g = m->graph;
    g->doc_string = mem_strdup("tokens [batch 1, seq 8, hidden 16] -> "
                              "hidden [1, 8, 16]");
    ir_strmap_set(&m->meta, "source", "tests/tool_gen_models.c");
    rng_seed(0x5eed0002u);
    ir_graph_add_input(g, "tokens", ftype(3, shape));

    layer_norm(g, "ln1", "tokens", "ln1");
    attention(g);
    node(g, "Add", "residual1", "tokens,attn_out", "residual1");
    layer_norm(g, "ln2", "residual1", "ln2");
    linear(g, "fc1", "ln2", "mlp_hidden", HID, MLP);
    gelu(g, "mlp_hidden", "mlp_act");
    linear(g, "fc2", "mlp_act", "mlp_out", MLP, HID);
    node(g, "Add", "residual2", "residual1,mlp_out", "hidden");
    add_output(g, "hidden", 3, shape);
    transformer_value_info(g);
    return m;
}

/* ---- main ---------------------------------------------------------- */

/* Saves m as DIR/FILE and frees it; 0 or -1 after a message. */
static int save(IrModel *m, const char *dir, const char *file)
{
    char path[4096];
    IrError err = {{0}};
    SaveOptions opt = {0};
    int w = snprintf(path, sizeof path, "%s/%s", dir, file);
    int rc = -1;
    if (w < 0 || (size_t)w >= sizeof path)
        fprintf(stderr, "tool_gen_models: output path too long\n");
    else if (save_model_file(m, path, &opt, &err) != 0)
        fprintf(stderr, "tool_gen_models: %s: %s\n", path, err.msg);
    else
        rc = 0, printf("wrote %s\n", path);
    ir_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    int rc = save(build_small_cnn(), argv[1], "small_cnn.onnx");
    rc |= save(build_tiny_transformer(), argv[1], "tiny_transformer.onnx");
    return rc ? 1 : 0;
}
