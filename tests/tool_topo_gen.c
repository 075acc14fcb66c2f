/*
 * tool_topo_gen.c - writes a float16 model laid out the way
 * onnxconverter-common's float16 conversion writes it, with its Cast
 * nodes at the end of the node list, for tests/topo_ort.sh.
 *
 *   tool_topo_gen OUT_DIR [MODEL_DIR]
 *
 * The model: X float [1,3,8,8] -> Cast 'graph_input_cast_0' to float16 ->
 * Conv (3x3, pads 1) -> Relu -> MaxPool 2x2 -> Mul by a scalar ->
 * GlobalAveragePool -> Flatten -> MatMul -> Add -> Softmax -> Cast
 * 'graph_output_cast_0' to float -> Y [1,5]; the MaxPool's output also
 * leaves through Cast 'graph_output_cast_1' -> Z [1,4,4,4]. Opset 13,
 * IR 7, weights from a fixed seed.
 *
 * Writes OUT_DIR/case/model.onnx (the Casts last: out of order),
 * OUT_DIR/case/sorted.onnx (the same nodes in order, written by hand
 * here, not by the sort), OUT_DIR/case/test_data_set_0/input_0.pb (X from
 * the same seed; no expected output: ONNX Runtime writes it) and
 * OUT_DIR/cycle.onnx (two nodes that read each other). With MODEL_DIR
 * (a float model of Conv/Relu/MaxPool/Concat/... with its case in
 * test_data_set_0, e.g. ../shared/models/squeezenet1_1_opset13), also
 * OUT_DIR/real/{model,sorted}.onnx: that model converted to float16 the
 * converter's way (float initializers to float16, value_info dropped,
 * every float input through a Cast 'graph_input_cast_K', every float
 * output through a Cast 'graph_output_cast_K'), and its case's input_0.pb.
 * Nothing is committed: the files are built on every run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "eval/eval.h"
#include "ir/ir.h"
#include "io/load.h"
#include "io/save.h"


static void gen_die(const char *what)
{
    fprintf(stderr, "tool_topo_gen: %s\n", what);
    exit(1);
}

static uint32_t gen_seed = 12345;

/* A number in [-1, 1) from a fixed linear congruential sequence. */
static float gen_rand(void)
{
    gen_seed = gen_seed * 1664525u + 1013904223u;
    return (float)(gen_seed >> 8) / (float)(1u << 23) - 1.0f;
}

/* A float16 initializer of random values times `scale`. */
static void gen_init(IrGraph *g, const char *name, size_t rank, const int64_t *dims,
                     float scale)
{
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    uint16_t *h = mem_array(n, sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = half_f32_to_f16(gen_rand() * scale);
    uint8_t *raw = mem_array(n, 2);
    for (size_t i = 0; i < n; i++) {
        raw[2 * i] = (uint8_t)(h[i] & 0xff);
        raw[2 * i + 1] = (uint8_t)(h[i] >> 8);
    }
    if (!ir_graph_add_init(g, ir_tensor_new(name, IR_FLOAT16, rank, dims, raw, n * 2)))
        gen_die(name);
    free(h);
    free(raw);
}

static IrNode *gen_node(IrGraph *g, const char *op, const char *name, size_t n_in,
                        const char *const *in, const char *out)
{
    IrError err;
    IrNode *n = ir_node_new(g, NULL, op, "", name, n_in, in, 1,
                            (const char *const[]){out}, &err);
    if (!n)
        gen_die(err.msg);
    return n;
}
#define GN(g, op, name, out, ...)                                              \
    gen_node(g, op, name, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *), \
             (const char *const[]){__VA_ARGS__}, out)

static IrNode *gen_cast(IrGraph *g, const char *name, const char *in, const char *out,
                        int32_t to)
{
    IrNode *n = GN(g, "Cast", name, out, in);
    ir_node_set_attr(n, ir_attr_int("to", to));
    return n;
}

/* The model, its nodes in order; `unsorted` moves the Casts to the end. */
static IrModel *gen_model(bool unsorted)
{
    gen_seed = 12345;
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    m->producer_name = mem_strdup("onnxconverter-common layout (test)");
    ir_model_set_opset(m, "", 13);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("fp16");
    int64_t xd[4] = {1, 3, 8, 8}, yd[2] = {1, 5}, zd[4] = {1, 4, 4, 4};
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 4, xd));
    gen_init(g, "W", 4, (int64_t[]){4, 3, 3, 3}, 0.5f);
    gen_init(g, "B", 1, (int64_t[]){4}, 0.1f);
    gen_init(g, "S", 1, (int64_t[]){1}, 2.0f);
    gen_init(g, "Wm", 2, (int64_t[]){4, 5}, 1.0f);
    gen_init(g, "Bm", 1, (int64_t[]){5}, 0.2f);
    IrNode *cin = gen_cast(g, "graph_input_cast_0", "X", "graph_input_cast_0", IR_FLOAT16);
    IrNode *conv = GN(g, "Conv", "conv", "c", "graph_input_cast_0", "W", "B");
    ir_node_set_attr(conv, ir_attr_ints("pads", 4, (int64_t[]){1, 1, 1, 1}));
    ir_node_set_attr(conv, ir_attr_ints("kernel_shape", 2, (int64_t[]){3, 3}));
    GN(g, "Relu", "relu", "r", "c");
    IrNode *pool = GN(g, "MaxPool", "pool", "p", "r");
    ir_node_set_attr(pool, ir_attr_ints("kernel_shape", 2, (int64_t[]){2, 2}));
    ir_node_set_attr(pool, ir_attr_ints("strides", 2, (int64_t[]){2, 2}));
    GN(g, "Mul", "mul", "s", "p", "S");
    GN(g, "GlobalAveragePool", "gap", "ga", "s");
    GN(g, "Flatten", "flatten", "f", "ga");
    GN(g, "MatMul", "matmul", "mm", "f", "Wm");
    GN(g, "Add", "add", "a", "mm", "Bm");
    IrNode *soft = GN(g, "Softmax", "softmax", "graph_output_cast_0", "a");
    ir_node_set_attr(soft, ir_attr_int("axis", 1));
    IrNode *c0 = gen_cast(g, "graph_output_cast_0", "graph_output_cast_0", "Y", IR_FLOAT);
    IrNode *c1 = gen_cast(g, "graph_output_cast_1", "p", "Z", IR_FLOAT);
    ir_graph_add_output(g, ir_graph_value(g, "Y"), ir_type_tensor(IR_FLOAT, 2, yd));
    ir_graph_add_output(g, ir_graph_value(g, "Z"), ir_type_tensor(IR_FLOAT, 4, zd));
    if (unsorted) {
        ir_node_move_before(cin, NULL);
        ir_node_move_before(c0, NULL);
        ir_node_move_before(c1, NULL);
    }
    return m;
}

/* Two nodes that read each other's output. */
static IrModel *gen_cycle(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", 13);
    IrGraph *g = m->graph = ir_graph_new(NULL);
    int64_t d[2] = {2, 3};
    ir_graph_add_input(g, "X", ir_type_tensor(IR_FLOAT, 2, d));
    GN(g, "Add", "loop_add", "P", "X", "Q");
    GN(g, "Neg", "loop_neg", "Q", "P");
    ir_graph_add_output(g, ir_graph_value(g, "Q"), ir_type_tensor(IR_FLOAT, 2, d));
    return m;
}

/* ---- a real model, to float16 ----------------------------------------- */

/* t's elements as floats (raw little-endian or float_data); malloc'ed. */
static float *gen_floats(const IrTensor *t, size_t *n)
{
    uint64_t numel;
    if (!ir_tensor_numel(t, &numel) || numel > ((size_t)1 << 28))
        gen_die("a float initializer too big or with bad dims");
    *n = (size_t)numel;
    float *f = mem_array(*n + 1, sizeof *f);
    for (size_t i = 0; i < *n; i++) {
        if (t->has_raw && t->raw.len >= 4 * *n) {
            const uint8_t *b = t->raw.data + 4 * i;
            uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                         (uint32_t)b[3] << 24;
            memcpy(&f[i], &u, 4);
        } else if (t->n_float == *n) {
            f[i] = t->float_data[i];
        } else {
            gen_die("a float initializer whose data does not fit its dims");
        }
    }
    return f;
}

/* Float initializers become float16 ones of the same name. */
static void gen_inits_half(IrGraph *g)
{
    for (size_t k = 0; k < g->inits.n; k++) {
        IrTensor *t = g->inits.p[k];
        if (t->data_type != IR_FLOAT)
            continue;
        size_t n;
        float *f = gen_floats(t, &n);
        uint8_t *raw = mem_array(n + 1, 2);
        for (size_t i = 0; i < n; i++) {
            uint16_t h = half_f32_to_f16(f[i]);
            raw[2 * i] = (uint8_t)(h & 0xff);
            raw[2 * i + 1] = (uint8_t)(h >> 8);
        }
        IrTensor *h = ir_tensor_new(t->name, IR_FLOAT16, t->ndims, t->dims, raw, n * 2);
        ir_graph_find_local(g, t->name)->init = h;
        g->inits.p[k] = h;
        ir_tensor_free(t);
        free(f);
        free(raw);
    }
}

static bool gen_is_float(const IrValueInfo *vi)
{
    return vi->type && vi->type->kind == IR_TYPE_TENSOR && vi->type->elem_type == IR_FLOAT;
}

/* Every float graph input read through a Cast to float16, placed first. */
static void gen_input_casts(IrGraph *g)
{
    size_t k = 0;
    for (size_t i = 0; i < g->inputs.n; i++) {
        IrValueInfo *vi = g->inputs.p[i];
        if (!gen_is_float(vi) || vi->value->init)
            continue;
        char name[64];
        snprintf(name, sizeof name, "graph_input_cast_%zu", k++);
        IrError err;
        if (ir_value_replace_uses(vi->value, ir_graph_value(g, name), &err))
            gen_die(err.msg);
        IrNode *c = ir_node_new(g, g->first, "Cast", "", name, 1,
                                (const char *const[]){vi->value->name}, 1,
                                (const char *const[]){name}, &err);
        if (!c)
            gen_die(err.msg);
        ir_node_set_attr(c, ir_attr_int("to", IR_FLOAT16));
    }
}

/* Every float graph output produced in float16 and cast back: the
 * producer's value is renamed graph_output_cast_K, and a Cast writes the
 * output's name. */
static void gen_output_casts(IrGraph *g)
{
    for (size_t k = 0; k < g->outputs.n; k++) {
        IrValueInfo *vi = g->outputs.p[k];
        if (!gen_is_float(vi))
            continue;
        char name[64], *out = mem_strdup(vi->value->name);
        snprintf(name, sizeof name, "graph_output_cast_%zu", k);
        IrError err;
        if (ir_value_rename(vi->value, name, &err))
            gen_die(err.msg);
        IrNode *c = ir_node_new(g, NULL, "Cast", "", name, 1, (const char *const[]){name},
                                1, (const char *const[]){out}, &err);
        if (!c)
            gen_die(err.msg);
        ir_node_set_attr(c, ir_attr_int("to", IR_FLOAT));
        vi->value->n_infos--;
        vi->value = c->out[0];
        vi->value->n_infos++;
        free(out);
    }
}

/* MODEL_DIR/model.onnx in float16; `unsorted` moves the Casts last. */
static IrModel *gen_real(const char *model_dir, bool unsorted)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/model.onnx", model_dir);
    IrModel *m;
    IrError err;
    if (load_model_file(path, NULL, &m, &err))
        gen_die(err.msg);
    IrGraph *g = m->graph;
    for (size_t i = 0; i < g->value_info.n; i++) {
        IrValueInfo *vi = g->value_info.p[i];
        vi->value->n_infos--;
        ir_valueinfo_free(vi);
    }
    g->value_info.n = 0;
    for (IrNode *n = g->first; n; n = n->next)
        if (!strcmp(n->op_type, "Constant") || !strcmp(n->op_type, "Cast"))
            gen_die("the model has Constant or Cast nodes, which this tool leaves float");
    gen_inits_half(g);
    gen_input_casts(g);
    gen_output_casts(g);
    if (unsorted) {
        IrNode *casts[64];
        size_t nc = 0;
        for (IrNode *n = g->first; n; n = n->next)
            if (!strcmp(n->op_type, "Cast") && nc < 64)
                casts[nc++] = n;
        for (size_t i = 0; i < nc; i++)
            ir_node_move_before(casts[i], NULL);
    }
    return m;
}

/* Copies a file. */
static void gen_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out)
        gen_die(from);
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            gen_die(to);
    fclose(in);
    if (fclose(out))
        gen_die(to);
}

static void gen_save(IrModel *m, const char *path)
{
    IrError err;
    if (save_model_file(m, path, NULL, &err))
        gen_die(err.msg);
    ir_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fputs("usage: tool_topo_gen OUT_DIR [MODEL_DIR]\n", stderr);
        return 2;
    }
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/case", argv[1]);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    if (mkdir(dir, 0777) || mkdir(path, 0777))
        gen_die(dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    gen_save(gen_model(true), path);
    snprintf(path, sizeof path, "%s/sorted.onnx", dir);
    gen_save(gen_model(false), path);
    snprintf(path, sizeof path, "%s/cycle.onnx", argv[1]);
    gen_save(gen_cycle(), path);
    /* the input: its own sequence */
    gen_seed = 999;
    int64_t xd[4] = {1, 3, 8, 8};
    IrError err;
    EvValue *x = ev_tensor_new(IR_FLOAT, 4, xd, &err);
    if (!x)
        gen_die(err.msg);
    for (size_t i = 0; i < x->numel; i++)
        ((float *)x->data)[i] = gen_rand() * 2.0f;
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
    if (ev_value_write(x, "X", path, &err))
        gen_die(err.msg);
    ev_unref(x);
    if (argc == 3) {
        snprintf(dir, sizeof dir, "%s/real", argv[1]);
        snprintf(path, sizeof path, "%s/test_data_set_0", dir);
        if (mkdir(dir, 0777) || mkdir(path, 0777))
            gen_die(dir);
        snprintf(path, sizeof path, "%s/model.onnx", dir);
        gen_save(gen_real(argv[2], true), path);
        snprintf(path, sizeof path, "%s/sorted.onnx", dir);
        gen_save(gen_real(argv[2], false), path);
        char from[4200];
        snprintf(from, sizeof from, "%s/test_data_set_0/input_0.pb", argv[2]);
        snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
        gen_copy(from, path);
    }
    return 0;
}
