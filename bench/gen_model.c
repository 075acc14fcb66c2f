/*
 * gen_model - synthetic ONNX models (opset 13) for the big-model benchmarks
 * (bench/big.sh, bench/big3g.sh). Not a test: it only builds inputs.
 *
 *   gen_model transformer (--layers N --hidden H | --size-mb M [--hidden H])
 *             [--heads A] [--seq S] [--seed X] --out F.onnx
 *             [--external F.data] [--inputs DIR]
 *   gen_model chain --nodes N [--seed X] --out F.onnx [--inputs DIR]
 *
 * transformer: a pre-norm encoder stack written the way exporters write
 * opset 13 (decomposed LayerNorm, Reshape/Transpose heads, Erf GELU), with
 * uniform +-0.02 weights so that outputs stay finite however deep it is.
 * --size-mb picks the layer count (hidden 1024 unless given) whose weights
 * come closest to M MiB. chain: N small elementwise nodes on a [1,16]
 * tensor with a skip connection every 8 nodes, all of them live.
 * --external F.data writes every tensor of 1 KiB or more to the side file
 * F.data (a plain name, beside F.onnx), as `convert --external-data` does.
 * --inputs DIR writes DIR/input_0.pb (seeded, uniform in [-1, 1)) for
 * `onnx-convert run`, which needs input files.
 * Output is the same for the same arguments on every machine.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir.h"
#include "io/save.h"

enum { GM_FLOAT = 1, GM_INT64 = 7 };
enum { GM_NAME = 160 };   /* longest value name we build, with room */

/* Every failure here is a usage error or a bug in this file: stop. */
static _Noreturn void gm_die(const char *what, const char *detail)
{
    fprintf(stderr, "gen_model: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    exit(1);
}

/* ---- deterministic numbers ------------------------------------------ */

/* xorshift64*: fast enough to fill gigabytes in seconds, and the same
 * stream on every machine. */
static uint64_t gm_rng = 1;

static void gm_seed(uint64_t s)
{
    gm_rng = s ? s : 0x9e3779b97f4a7c15ull;   /* 0 would stay 0 forever */
}

static uint32_t gm_rand32(void)
{
    gm_rng ^= gm_rng >> 12;
    gm_rng ^= gm_rng << 25;
    gm_rng ^= gm_rng >> 27;
    return (uint32_t)((gm_rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* Uniform in [center - half, center + half); 24 bits convert exactly. */
static float gm_uniform(float center, float half)
{
    float unit = (float)(gm_rand32() >> 8) / 16777216.0f;
    return center + half * (2.0f * unit - 1.0f);
}

/* Stores v as IEEE-754 little-endian at p, whatever the host order. */
static void gm_put_f32(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    p[0] = (uint8_t)u;
    p[1] = (uint8_t)(u >> 8);
    p[2] = (uint8_t)(u >> 16);
    p[3] = (uint8_t)(u >> 24);
}

/* ---- initializers --------------------------------------------------- */

static size_t gm_numel(size_t rank, const int64_t *dims)
{
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

/* An initializer of `bytes` zeroed bytes the caller fills in place:
 * building weights beside the tensor and copying them in would double the
 * generator's peak memory on a 3 GB model. */
static uint8_t *gm_add_raw(IrGraph *g, const char *name, int32_t dtype,
                           size_t rank, const int64_t *dims, size_t bytes)
{
    IrTensor *t = ir_tensor_new(name, dtype, rank, dims, "", 0);
    free(t->raw.data);
    t->raw.data = mem_alloc(bytes ? bytes : 1);
    t->raw.len = bytes;
    if (!ir_graph_add_init(g, t))
        gm_die("duplicate initializer", name);
    return t->raw.data;
}

/* A float initializer, uniform in [center - half, center + half). */
static void gm_add_uniform(IrGraph *g, const char *name, size_t rank,
                           const int64_t *dims, float center, float half)
{
    size_t n = gm_numel(rank, dims);
    uint8_t *p = gm_add_raw(g, name, GM_FLOAT, rank, dims, n * 4);
    for (size_t i = 0; i < n; i++)
        gm_put_f32(p + 4 * i, gm_uniform(center, half));
}

/* A float scalar (rank 0) initializer. */
static void gm_add_scalar(IrGraph *g, const char *name, float v)
{
    gm_put_f32(gm_add_raw(g, name, GM_FLOAT, 0, NULL, 4), v);
}

/* A 1-D int64 initializer (Reshape's target shapes). */
static void gm_add_int64s(IrGraph *g, const char *name, size_t n,
                          const int64_t *v)
{
    int64_t dim = (int64_t)n;
    uint8_t *p = gm_add_raw(g, name, GM_INT64, 1, &dim, n * 8);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            p[8 * i + (size_t)b] = (uint8_t)((uint64_t)v[i] >> (8 * b));
}

/* ---- transformer ---------------------------------------------------- */

typedef struct GmNet {
    IrGraph *g;
    int layer;                 /* names of this layer get /layer.N/ */
    int64_t seq, hidden, heads, head, mlp;
} GmNet;

/* Value and initializer names: "/..." is global, anything else belongs to
 * the current layer, as PyTorch's exporter names them. */
static void gm_full(const GmNet *t, const char *rel, char *out)
{
    int w = rel[0] == '/' ? snprintf(out, GM_NAME, "%s", rel)
                          : snprintf(out, GM_NAME, "/layer.%d/%s", t->layer, rel);
    if (w < 0 || w >= GM_NAME)
        gm_die("name too long", rel);
}

/* Appends node `op` reading a (and b unless NULL), writing `out`, which
 * also names the node. */
static IrNode *gm_op(const GmNet *t, const char *op, const char *out,
                     const char *a, const char *b)
{
    char na[GM_NAME], nb[GM_NAME], no[GM_NAME];
    gm_full(t, a, na);
    if (b)
        gm_full(t, b, nb);
    gm_full(t, out, no);
    const char *in[2] = {na, nb}, *outs[1] = {no};
    IrError err = {{0}};
    IrNode *n = ir_node_new(t->g, NULL, op, "", no, b ? 2 : 1, in, 1, outs, &err);
    if (!n)
        gm_die(no, err.msg);
    return n;
}

/* A weight of the current layer. */
static void gm_weight(const GmNet *t, const char *rel, size_t rank,
                      const int64_t *dims, float center, float half)
{
    char name[GM_NAME];
    gm_full(t, rel, name);
    gm_add_uniform(t->g, name, rank, dims, center, half);
}

/* ReduceMean over the last axis, keeping it (opset 13: axes attribute). */
static void gm_mean_last(const GmNet *t, const char *out, const char *x)
{
    static const int64_t last[1] = {-1};
    IrNode *n = gm_op(t, "ReduceMean", out, x, NULL);
    ir_node_set_attr(n, ir_attr_ints("axes", 1, last));
    ir_node_set_attr(n, ir_attr_int("keepdims", 1));
}

/* LayerNorm decomposed as opset-13 exporters write it:
 * (x - mean) / sqrt(mean((x - mean)^2) + eps) * w + b. */
static void gm_layernorm(const GmNet *t, const char *p, const char *x,
                         const char *y)
{
    char s[10][GM_NAME];
    static const char *const part[] = {"mean", "sub", "pow", "var", "add_eps",
                                       "sqrt", "div", "mul", "weight", "bias"};
    for (int i = 0; i < 10; i++)
        snprintf(s[i], GM_NAME, "%s/%s", p, part[i]);
    const int64_t h[1] = {t->hidden};
    gm_weight(t, s[8], 1, h, 1.0f, 0.02f);
    gm_weight(t, s[9], 1, h, 0.0f, 0.02f);
    gm_mean_last(t, s[0], x);
    gm_op(t, "Sub", s[1], x, s[0]);
    gm_op(t, "Pow", s[2], s[1], "/const/two");
    gm_mean_last(t, s[3], s[2]);
    gm_op(t, "Add", s[4], s[3], "/const/eps");
    gm_op(t, "Sqrt", s[5], s[4], NULL);
    gm_op(t, "Div", s[6], s[1], s[5]);
    gm_op(t, "Mul", s[7], s[6], s[8]);
    gm_op(t, "Add", y, s[7], s[9]);
}

/* y = x @ W + b with W [n_in, n_out]: MatMul then Add. */
static void gm_linear(const GmNet *t, const char *p, const char *x,
                      const char *y, int64_t n_in, int64_t n_out)
{
    char w[GM_NAME], b[GM_NAME], mm[GM_NAME];
    const int64_t wd[2] = {n_in, n_out}, bd[1] = {n_out};
    snprintf(w, sizeof w, "%s/weight", p);
    snprintf(b, sizeof b, "%s/bias", p);
    snprintf(mm, sizeof mm, "%s/MatMul", p);
    gm_weight(t, w, 2, wd, 0.0f, 0.02f);
    gm_weight(t, b, 1, bd, 0.0f, 0.02f);
    gm_op(t, "MatMul", mm, x, w);
    gm_op(t, "Add", y, mm, b);
}

/* [1,S,H] -> Reshape [1,S,A,D] -> Transpose(perm). */
static void gm_heads(const GmNet *t, const char *x, const char *y,
                     const int64_t *perm)
{
    char r[GM_NAME];
    snprintf(r, sizeof r, "%s/Reshape", x);
    gm_op(t, "Reshape", r, x, "/const/heads_shape");
    IrNode *n = gm_op(t, "Transpose", y, r, NULL);
    ir_node_set_attr(n, ir_attr_ints("perm", 4, perm));
}

/* Multi-head self-attention on x, projected back: -> y. */
static void gm_attention(const GmNet *t, const char *x, const char *y)
{
    static const int64_t bhsd[4] = {0, 2, 1, 3}, bhds[4] = {0, 2, 3, 1};
    gm_linear(t, "attn/q", x, "attn/q/out", t->hidden, t->hidden);
    gm_linear(t, "attn/k", x, "attn/k/out", t->hidden, t->hidden);
    gm_linear(t, "attn/v", x, "attn/v/out", t->hidden, t->hidden);
    gm_heads(t, "attn/q/out", "attn/q/heads", bhsd);
    gm_heads(t, "attn/k/out", "attn/k/heads", bhds);
    gm_heads(t, "attn/v/out", "attn/v/heads", bhsd);
    gm_op(t, "MatMul", "attn/scores", "attn/q/heads", "attn/k/heads");
    gm_op(t, "Div", "attn/scaled", "attn/scores", "/const/sqrt_head");
    IrNode *n = gm_op(t, "Softmax", "attn/probs", "attn/scaled", NULL);
    ir_node_set_attr(n, ir_attr_int("axis", -1));
    gm_op(t, "MatMul", "attn/context", "attn/probs", "attn/v/heads");
    n = gm_op(t, "Transpose", "attn/context/Transpose", "attn/context", NULL);
    ir_node_set_attr(n, ir_attr_ints("perm", 4, bhsd));
    gm_op(t, "Reshape", "attn/merged", "attn/context/Transpose",
          "/const/merged_shape");
    gm_linear(t, "attn/out", "attn/merged", y, t->hidden, t->hidden);
}

/* x * 0.5 * (1 + erf(x / sqrt 2)), the exact GELU in basic ops. */
static void gm_gelu(const GmNet *t, const char *x, const char *y)
{
    gm_op(t, "Div", "mlp/gelu/div", x, "/const/sqrt2");
    gm_op(t, "Erf", "mlp/gelu/erf", "mlp/gelu/div", NULL);
    gm_op(t, "Add", "mlp/gelu/add", "mlp/gelu/erf", "/const/one");
    gm_op(t, "Mul", "mlp/gelu/mul", x, "mlp/gelu/add");
    gm_op(t, "Mul", y, "mlp/gelu/mul", "/const/half");
}

/* One pre-norm block: x + attn(ln1(x)), then + mlp(ln2(.)). `x` is a
 * global name; the block's output is "/layer.N/out". */
static void gm_block(const GmNet *t, const char *x)
{
    gm_layernorm(t, "ln1", x, "ln1/out");
    gm_attention(t, "ln1/out", "attn/out/y");
    gm_op(t, "Add", "residual1", x, "attn/out/y");
    gm_layernorm(t, "ln2", "residual1", "ln2/out");
    gm_linear(t, "mlp/fc1", "ln2/out", "mlp/fc1/y", t->hidden, t->mlp);
    gm_gelu(t, "mlp/fc1/y", "mlp/act");
    gm_linear(t, "mlp/fc2", "mlp/act", "mlp/fc2/y", t->mlp, t->hidden);
    gm_op(t, "Add", "out", "residual1", "mlp/fc2/y");
}

/* The scalars and shapes every layer shares. */
static void gm_constants(const GmNet *t)
{
    const int64_t heads[4] = {1, t->seq, t->heads, t->head};
    const int64_t merged[3] = {1, t->seq, t->hidden};
    gm_add_scalar(t->g, "/const/two", 2.0f);
    gm_add_scalar(t->g, "/const/eps", 1e-5f);
    gm_add_scalar(t->g, "/const/sqrt_head", sqrtf((float)t->head));
    gm_add_scalar(t->g, "/const/sqrt2", sqrtf(2.0f));
    gm_add_scalar(t->g, "/const/one", 1.0f);
    gm_add_scalar(t->g, "/const/half", 0.5f);
    gm_add_int64s(t->g, "/const/heads_shape", 4, heads);
    gm_add_int64s(t->g, "/const/merged_shape", 3, merged);
}

/* A model with its header and an empty graph, at opset 13 (IR 7). */
static IrModel *gm_model(const char *name)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", 13);
    m->producer_name = mem_strdup("onnx-convert bench/gen_model");
    m->producer_version = mem_strdup("1");
    m->graph = ir_graph_new(NULL);
    m->graph->name = mem_strdup(name);
    return m;
}

static void gm_output(IrGraph *g, const char *name, size_t rank,
                      const int64_t *dims)
{
    IrValue *v = ir_graph_find_local(g, name);
    if (!v || !ir_graph_add_output(g, v, ir_type_tensor(GM_FLOAT, rank, dims)))
        gm_die("cannot add graph output", name);
}

static IrModel *gm_transformer(GmNet *t, int layers)
{
    IrModel *m = gm_model("transformer");
    t->g = m->graph;
    const int64_t io[3] = {1, t->seq, t->hidden};
    ir_graph_add_input(t->g, "/input", ir_type_tensor(GM_FLOAT, 3, io));
    gm_constants(t);
    char x[GM_NAME] = "/input";
    for (t->layer = 0; t->layer < layers; t->layer++) {
        gm_block(t, x);
        gm_full(t, "out", x);
    }
    gm_output(t->g, x, 3, io);
    return m;
}

/* ---- chain ---------------------------------------------------------- */

/* Node i of the chain reads v{i} and writes v{i+1}. Blocks of 8 nodes:
 * Sigmoid first bounds every value to (0, 1), so no depth overflows; the
 * 8th node adds the block's Sigmoid output back in (fan-out, fan-in). */
static void gm_chain_node(IrGraph *g, size_t i)
{
    static const char *const ops[8] = {"Sigmoid", "Add", "Mul", "Relu",
                                       "Neg", "Abs", "Mul", "Add"};
    static const char *const consts[8] = {NULL, "c_add", "c_mul_a", NULL,
                                          NULL, NULL, "c_mul_b", NULL};
    char a[32], b[32], out[32], name[48];
    size_t pos = i % 8;
    snprintf(a, sizeof a, "v%zu", i);
    snprintf(out, sizeof out, "v%zu", i + 1);
    snprintf(name, sizeof name, "%s_%zu", ops[pos], i);
    if (pos == 7)
        snprintf(b, sizeof b, "v%zu", i - 6);   /* the block's Sigmoid output */
    else if (consts[pos])
        snprintf(b, sizeof b, "%s", consts[pos]);
    else
        b[0] = '\0';
    const char *in[2] = {a, b}, *outs[1] = {out};
    IrError err = {{0}};
    if (!ir_node_new(g, NULL, ops[pos], "", name, b[0] ? 2 : 1, in, 1, outs,
                     &err))
        gm_die(name, err.msg);
}

static IrModel *gm_chain(size_t nodes)
{
    static const int64_t io[2] = {1, 16}, c[1] = {16};
    IrModel *m = gm_model("chain");
    IrGraph *g = m->graph;
    ir_graph_add_input(g, "v0", ir_type_tensor(GM_FLOAT, 2, io));
    gm_add_uniform(g, "c_add", 1, c, 0.0f, 0.5f);
    gm_add_uniform(g, "c_mul_a", 1, c, 0.75f, 0.25f);
    gm_add_uniform(g, "c_mul_b", 1, c, 0.75f, 0.25f);
    for (size_t i = 0; i < nodes; i++)
        gm_chain_node(g, i);
    char last[32];
    snprintf(last, sizeof last, "v%zu", nodes);
    gm_output(g, last, 2, io);
    return m;
}

/* ---- inputs for `run` ----------------------------------------------- */

/* Writes DIR/input_0.pb for the model's one input, uniform in [-1, 1). */
static void gm_write_input(const IrModel *m, const char *dir)
{
    const IrValueInfo *vi = m->graph->inputs.p[0];
    const IrShape *s = vi->type->shape;
    int64_t dims[4];
    for (size_t i = 0; i < s->rank; i++)
        dims[i] = s->dims[i].value;
    IrModel *tmp = gm_model("input");   /* a holder for the tensor */
    size_t n = gm_numel(s->rank, dims);
    uint8_t *p = gm_add_raw(tmp->graph, vi->value->name, GM_FLOAT, s->rank,
                            dims, n * 4);
    for (size_t i = 0; i < n; i++)
        gm_put_f32(p + 4 * i, gm_uniform(0.0f, 1.0f));
    if (mkdir(dir, 0777) && errno != EEXIST)
        gm_die("cannot create", dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/input_0.pb", dir);
    IrError err = {{0}};
    if (save_tensor_file(tmp->graph->inits.p[0], path, &err))
        gm_die(path, err.msg);
    ir_model_free(tmp);
}

/* ---- command line --------------------------------------------------- */

typedef struct GmArgs {
    const char *kind, *out, *external, *inputs;
    long layers, hidden, heads, seq, nodes, size_mb, seed;
} GmArgs;

static long gm_number(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : -1;
    if (!s || errno || *end || v < 0)
        gm_die("expected a non-negative number after", opt);
    return v;
}

/* Stores the value of option `a` (with its argument v); false if unknown. */
static int gm_option(GmArgs *g, const char *a, const char *v)
{
    static const char *const num[] = {"--layers", "--hidden", "--heads", "--seq",
                                      "--nodes", "--size-mb", "--seed"};
    long *slot[] = {&g->layers, &g->hidden, &g->heads, &g->seq,
                    &g->nodes, &g->size_mb, &g->seed};
    for (size_t i = 0; i < sizeof num / sizeof *num; i++)
        if (!strcmp(a, num[i]))
            return *slot[i] = gm_number(a, v), 1;
    if (!v)
        return 0;
    if (!strcmp(a, "--out"))
        return g->out = v, 1;
    if (!strcmp(a, "--external"))
        return g->external = v, 1;
    if (!strcmp(a, "--inputs"))
        return g->inputs = v, 1;
    return 0;
}

static GmArgs gm_args(int argc, char **argv)
{
    GmArgs g = {.seq = 32, .seed = 1};
    if (argc < 2)
        gm_die("usage: gen_model transformer|chain ... --out F.onnx "
               "(see bench/gen_model.c)", NULL);
    g.kind = argv[1];
    for (int i = 2; i < argc; i += 2)
        if (!gm_option(&g, argv[i], i + 1 < argc ? argv[i + 1] : NULL))
            gm_die("unknown option or missing value", argv[i]);
    if (!g.out)
        gm_die("--out F.onnx is required", NULL);
    if (g.external && strchr(g.external, '/'))
        gm_die("--external takes a plain file name, written beside --out",
               g.external);
    return g;
}

/* Fills in layers (from --size-mb), heads and the MLP width, and checks
 * that the shapes divide. */
static int gm_transformer_shape(GmArgs *a, GmNet *t)
{
    if (!a->hidden)
        a->hidden = a->size_mb ? 1024 : 0;
    if (!a->hidden)
        gm_die("transformer needs --hidden H or --size-mb M", NULL);
    double per_layer = 4.0 * (12.0 * (double)a->hidden * (double)a->hidden
                              + 13.0 * (double)a->hidden);
    if (a->size_mb && !a->layers)
        a->layers = lround((double)a->size_mb * 1048576.0 / per_layer);
    if (a->layers < 1)
        a->layers = 1;
    if (!a->heads)
        a->heads = a->hidden >= 64 ? a->hidden / 64 : 1;
    if (a->hidden % a->heads || a->seq < 1)
        gm_die("--hidden must be a multiple of --heads, --seq at least 1", NULL);
    *t = (GmNet){.seq = a->seq, .hidden = a->hidden, .heads = a->heads,
                 .head = a->hidden / a->heads, .mlp = 4 * a->hidden};
    return (int)a->layers;
}

int main(int argc, char **argv)
{
    GmArgs a = gm_args(argc, argv);
    gm_seed((uint64_t)a.seed);
    IrModel *m;
    if (!strcmp(a.kind, "transformer")) {
        GmNet t;
        int layers = gm_transformer_shape(&a, &t);
        m = gm_transformer(&t, layers);
        printf("transformer: %d layers, hidden %ld, heads %ld, seq %ld, ",
               layers, a.hidden, a.heads, a.seq);
    } else if (!strcmp(a.kind, "chain")) {
        if (a.nodes < 1)
            gm_die("chain needs --nodes N (N >= 1)", NULL);
        m = gm_chain((size_t)a.nodes);
        printf("chain: ");
    } else {
        gm_die("unknown model kind (transformer or chain)", a.kind);
    }
    uint64_t bytes = 0;
    for (size_t i = 0; i < m->graph->inits.n; i++)
        bytes += ir_tensor_stored_bytes(m->graph->inits.p[i]);
    printf("%zu nodes, %zu initializers, %.1f MiB of weights\n",
           m->graph->n_nodes, m->graph->inits.n, (double)bytes / 1048576.0);
    SaveOptions so = {.external_file = a.external, .external_threshold = 1024};
    IrError err = {{0}};
    if (save_model_file(m, a.out, &so, &err))
        gm_die(a.out, err.msg);
    if (a.inputs)
        gm_write_input(m, a.inputs);
    ir_model_free(m);
    return 0;
}
