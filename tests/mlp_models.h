/*
 * mlp_models.h - small Core ML ML Programs built by hand with mil.h's
 * builders (prefix mm_), for the package tests: test_mlpackage writes and
 * reads them back, tool_mlpackage_gen writes them for Apple's loader
 * (tests/coreml_ct.sh). Ops and parameters follow coremltools' op
 * definitions at each model's target (conv's strides, pad_type, pad,
 * dilations and groups are required consts, matmul's transpose flags...).
 */
#ifndef OC_MLP_MODELS_H
#define OC_MLP_MODELS_H

#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "coreml/mil.h"

static void mm_feature(MilFeature **l, size_t *n, const char *name, const MilType *t)
{
    *l = mem_grow(*l, *n + 1, sizeof **l);
    memset(&(*l)[*n], 0, sizeof **l);
    (*l)[*n].name = mem_strdup(name);
    (*l)[*n].type = mil_type_copy(t);
    (*n)++;
}

static void mm_meta(MilModel *m, const char *k, const char *v)
{
    m->meta_keys = mem_grow(m->meta_keys, m->n_meta + 1, sizeof *m->meta_keys);
    m->meta_values = mem_grow(m->meta_values, m->n_meta + 1, sizeof *m->meta_values);
    m->meta_keys[m->n_meta] = mem_strdup(k);
    m->meta_values[m->n_meta++] = mem_strdup(v);
}

/* A model at target `tname` with one function "main" and the usual
 * metadata. */
static MilModel *mm_model(const char *tname, MilFunction **f)
{
    const MilTarget *t = mil_target_find(tname);
    MilModel *m = mil_model_new(t);
    *f = mil_function_add(m, "main", t->opset);
    m->short_doc = mem_strdup("built by hand for the package tests");
    mm_meta(m, "com.github.apple.coremltools.source", "onnx-convert");
    mm_meta(m, "com.github.apple.coremltools.version", "test");
    return m;
}

/* An input of the function and the description. */
static void mm_input(MilModel *m, MilFunction *f, const char *name, const MilType *t)
{
    mil_function_input(f, name, t);
    mm_feature(&m->in, &m->n_in, name, t);
}

/* A block output of the function and the description. */
static void mm_output(MilModel *m, MilFunction *f, const char *name, const MilType *t)
{
    mil_block_output(f->block, name);
    mm_feature(&m->out, &m->n_out, name, t);
}

/* A one-input, one-output op. */
static MilOp *mm_unary(MilBlock *b, const char *type, const char *x, const char *y,
                       const MilType *t)
{
    MilOp *op = mil_op_add(b, type, y);
    mil_op_in(op, "x", x);
    mil_op_out(op, y, t);
    return op;
}

static MilOp *mm_binary(MilBlock *b, const char *type, const char *x, const char *y,
                        const char *z, const MilType *t)
{
    MilOp *op = mil_op_add(b, type, z);
    mil_op_in(op, "x", x);
    mil_op_in(op, "y", y);
    mil_op_out(op, z, t);
    return op;
}

/* A float tensor of the given dims with deterministic, varied values. */
static MilTensor *mm_floats(int rank, const int64_t *dims, float scale)
{
    MilTensor *t = mil_tensor_new(MIL_FP32, rank, dims, NULL);
    for (size_t i = 0; i < t->nbytes / 4; i++) {
        float v = scale * sinf((float)i * 0.37f + 0.1f);
        memcpy(t->data + 4 * i, &v, 4);
    }
    return t;
}

/* IEEE half of a float (round to nearest; the values here are normal). */
static uint16_t mm_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = x >> 16 & 0x8000, mant = x & 0x7fffff;
    int e = (int)(x >> 23 & 0xff) - 127 + 15;
    if (e <= 0)
        return (uint16_t)sign;
    uint32_t h = sign | (uint32_t)e << 10 | mant >> 13;
    if (mant & 0x1000)
        h++;
    return (uint16_t)h;
}

static MilTensor *mm_halves(int rank, const int64_t *dims, float scale)
{
    MilTensor *t = mil_tensor_new(MIL_FP16, rank, dims, NULL);
    for (size_t i = 0; i < t->nbytes / 2; i++) {
        uint16_t h = mm_half(scale * (1.0f + 0.5f * sinf((float)i)));
        t->data[2 * i] = (uint8_t)h;
        t->data[2 * i + 1] = (uint8_t)(h >> 8);
    }
    return t;
}

/* relu at iOS15: the smallest program. */
static MilModel *mm_relu(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    int64_t d[] = {1, 4};
    MilType t = mil_type(MIL_FP32, 2, d);
    mm_input(m, f, "x", &t);
    mm_unary(f->block, "relu", "x", "y", &t);
    mm_output(m, f, "y", &t);
    mil_type_clear(&t);
    return m;
}

/* conv at iOS15 with an 8x3x3x3 weight (216 floats: a blob) and its
 * required parameters as small consts (immediate values). */
static MilModel *mm_conv(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    MilBlock *b = f->block;
    int64_t dx[] = {1, 3, 8, 8}, dw[] = {8, 3, 3, 3}, dy[] = {1, 8, 6, 6};
    MilType tx = mil_type(MIL_FP32, 4, dx), ty = mil_type(MIL_FP32, 4, dy);
    mm_input(m, f, "x", &tx);
    int32_t one2[] = {1, 1}, zero4[] = {0, 0, 0, 0};
    mil_const_add(b, "conv_weight", mm_floats(4, dw, 0.5f));
    mil_const_add(b, "conv_strides", mil_tensor_ints(one2, 2));
    mil_const_add(b, "conv_pad_type", mil_tensor_string("valid"));
    mil_const_add(b, "conv_pad", mil_tensor_ints(zero4, 4));
    mil_const_add(b, "conv_dilations", mil_tensor_ints(one2, 2));
    mil_const_add(b, "conv_groups", mil_tensor_scalar_i32(1));
    MilOp *op = mil_op_add(b, "conv", "conv_0");
    mil_op_in(op, "x", "x");
    mil_op_in(op, "weight", "conv_weight");
    mil_op_in(op, "strides", "conv_strides");
    mil_op_in(op, "pad_type", "conv_pad_type");
    mil_op_in(op, "pad", "conv_pad");
    mil_op_in(op, "dilations", "conv_dilations");
    mil_op_in(op, "groups", "conv_groups");
    mil_op_out(op, "y", &ty);
    mm_output(m, f, "y", &ty);
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    return m;
}

/* matmul at iOS17 with a 512x256 fp32 const (512 KiB in weight.bin). */
static MilModel *mm_matmul(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS17", &f);
    MilBlock *b = f->block;
    int64_t dx[] = {1, 512}, dw[] = {512, 256}, dy[] = {1, 256};
    MilType tx = mil_type(MIL_FP32, 2, dx), ty = mil_type(MIL_FP32, 2, dy);
    mm_input(m, f, "x", &tx);
    mil_const_add(b, "mm_w", mm_floats(2, dw, 0.05f));
    mil_const_add(b, "mm_tx", mil_tensor_scalar_bool(false));
    mil_const_add(b, "mm_ty", mil_tensor_scalar_bool(false));
    MilOp *op = mil_op_add(b, "matmul", "mm_0");
    mil_op_in(op, "x", "x");
    mil_op_in(op, "y", "mm_w");
    mil_op_in(op, "transpose_x", "mm_tx");
    mil_op_in(op, "transpose_y", "mm_ty");
    mil_op_out(op, "y", &ty);
    mm_output(m, f, "y", &ty);
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    return m;
}

/* fp16 at iOS16: cast in, multiply by a 1x16 fp16 const (a blob), add an
 * fp16 scalar (immediate), cast back. */
static MilModel *mm_fp16(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS16", &f);
    MilBlock *b = f->block;
    int64_t d[] = {1, 16};
    MilType t32 = mil_type(MIL_FP32, 2, d), t16 = mil_type(MIL_FP16, 2, d);
    mm_input(m, f, "x", &t32);
    mil_const_add(b, "to16", mil_tensor_string("fp16"));
    MilOp *c = mm_unary(b, "cast", "x", "x16", &t16);
    mil_op_in(c, "dtype", "to16");
    mil_const_add(b, "scale16", mm_halves(2, d, 0.75f));
    mm_binary(b, "mul", "x16", "scale16", "m16", &t16);
    mil_const_add(b, "bias16", mm_halves(0, NULL, 0.25f));
    mm_binary(b, "add", "m16", "bias16", "a16", &t16);
    mil_const_add(b, "to32", mil_tensor_string("fp32"));
    c = mm_unary(b, "cast", "a16", "y", &t32);
    mil_op_in(c, "dtype", "to32");
    mm_output(m, f, "y", &t32);
    mil_type_clear(&t32);
    mil_type_clear(&t16);
    return m;
}

/* Control flow at iOS17: a while_loop (cond and body blocks with loop
 * variables) counting to n and doubling x, then a cond choosing relu or
 * abs of the result. */
static MilModel *mm_control(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS17", &f);
    MilBlock *b = f->block;
    int64_t dx[] = {1, 4}, dn[] = {1};
    MilType tx = mil_type(MIL_FP32, 2, dx), tn = mil_type(MIL_INT32, 1, dn);
    MilType ti = mil_type(MIL_INT32, 0, NULL), tb = mil_type(MIL_BOOL, 0, NULL);
    MilType tf = mil_type(MIL_FP32, 0, NULL);
    mm_input(m, f, "x", &tx);
    mm_input(m, f, "n", &tn);
    mil_const_add(b, "i0", mil_tensor_scalar_i32(0));

    MilOp *wl = mil_op_add(b, "while_loop", "loop_0");
    mil_op_in(wl, "loop_vars", "i0");
    mil_op_in(wl, "loop_vars", "x");
    mil_op_out(wl, "loop_i", &ti);
    mil_op_out(wl, "loop_x", &tx);
    MilBlock *cb = mil_block_new(), *bb = mil_block_new();
    wl->blocks = mem_array(2, sizeof *wl->blocks);
    wl->blocks[0] = cb;
    wl->blocks[1] = bb;
    wl->n_blocks = 2;
    cb->in = mem_array(2, sizeof *cb->in);
    cb->in[0] = (MilNamedType){mem_strdup("c_i"), mil_type_copy(&ti)};
    cb->in[1] = (MilNamedType){mem_strdup("c_x"), mil_type_copy(&tx)};
    cb->n_in = 2;
    mm_unary(cb, "squeeze", "n", "n_s", &ti);
    mm_binary(cb, "less", "c_i", "n_s", "c_go", &tb);
    mil_block_output(cb, "c_go");
    bb->in = mem_array(2, sizeof *bb->in);
    bb->in[0] = (MilNamedType){mem_strdup("b_i"), mil_type_copy(&ti)};
    bb->in[1] = (MilNamedType){mem_strdup("b_x"), mil_type_copy(&tx)};
    bb->n_in = 2;
    mil_const_add(bb, "b_one", mil_tensor_scalar_i32(1));
    mm_binary(bb, "add", "b_i", "b_one", "b_i1", &ti);
    mil_const_add(bb, "b_two", mil_tensor_scalar_f32(2.0f));
    mm_binary(bb, "mul", "b_x", "b_two", "b_x1", &tx);
    mil_block_output(bb, "b_i1");
    mil_block_output(bb, "b_x1");

    mil_const_add(b, "thr", mil_tensor_scalar_i32(2));
    mm_binary(b, "greater", "loop_i", "thr", "pred", &tb);
    MilOp *cond = mil_op_add(b, "cond", "cond_0");
    mil_op_in(cond, "pred", "pred");
    mil_op_out(cond, "y", &tx);
    MilBlock *tb_ = mil_block_new(), *fb = mil_block_new();
    cond->blocks = mem_array(2, sizeof *cond->blocks);
    cond->blocks[0] = tb_;
    cond->blocks[1] = fb;
    cond->n_blocks = 2;
    mm_unary(tb_, "relu", "loop_x", "t_y", &tx);
    mil_block_output(tb_, "t_y");
    mm_unary(fb, "abs", "loop_x", "f_y", &tx);
    mil_block_output(fb, "f_y");
    mm_output(m, f, "y", &tx);
    mil_type_clear(&tx);
    mil_type_clear(&tn);
    mil_type_clear(&ti);
    mil_type_clear(&tb);
    mil_type_clear(&tf);
    return m;
}

/* A flexible input at iOS15: x is 1 x seq x 4 with seq in [1, 128]; the
 * output's middle dim is unknown. */
static MilModel *mm_flexible(void)
{
    MilFunction *f;
    MilModel *m = mm_model("iOS15", &f);
    int64_t d[] = {1, -1, 4};
    MilType t = mil_type(MIL_FP32, 3, d);
    t.dim_names = mem_array(3, sizeof *t.dim_names);
    t.dim_names[1] = mem_strdup("seq");
    mm_input(m, f, "x", &t);
    m->in[0].range_lo = mem_array(3, sizeof(int64_t));
    m->in[0].range_hi = mem_array(3, sizeof(int64_t));
    int64_t lo[] = {1, 1, 4}, hi[] = {1, 128, 4};
    memcpy(m->in[0].range_lo, lo, sizeof lo);
    memcpy(m->in[0].range_hi, hi, sizeof hi);
    mm_unary(f->block, "relu", "x", "y", &t);
    mm_output(m, f, "y", &t);
    mil_type_clear(&t);
    return m;
}

typedef struct MmCase {
    const char *name;
    MilModel *(*build)(void);
} MmCase;

static const MmCase mm_cases[] = {
    {"relu", mm_relu},       {"conv", mm_conv},       {"matmul", mm_matmul},
    {"fp16", mm_fp16},       {"control", mm_control}, {"flexible", mm_flexible},
};
#define MM_N_CASES (sizeof mm_cases / sizeof mm_cases[0])

#endif
