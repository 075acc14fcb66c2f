/*
 * coreml/nn.c - Core ML lowering and raising of the nn family: Conv,
 * ConvTranspose, MaxPool, Dropout (inference), AveragePool, GlobalAveragePool/GlobalMaxPool, Gemm, MatMul.
 *
 * MIL facts (coremltools' defs, iOS15): conv's weight is [C_out,
 * C_in/groups, k...] as ONNX's; pad_type "custom" takes pad as
 * [begin0, end0, begin1, end1, ...] (ONNX lists all begins, then all ends);
 * linear's weight is const [out, in] (Gemm's B with transB=1).
 *
 * auto_pad SAME_* becomes explicit pads where the spatial dims are static;
 * over dims known only at run time SAME_UPPER is pad_type "same" (conv and
 * the pools), and SAME_LOWER (MIL's same_lower is iOS16's) and
 * ConvTranspose's SAME_* are refused.
 *
 * LpPool and GlobalLpPool are decomposed: (sum over the window of
 * |x|^p)^(1/p) as abs (p != 2), mul or pow, then avg_pool counting the
 * padding times the kernel's element count (LpPool), or reduce_l1_norm /
 * reduce_l2_norm / reduce_sum (GlobalLpPool), then pow(1/p) or sqrt.
 * MIL's l2_pool is not used: its definition does not say whether it sums
 * or averages the squares. Refused: LpPool with ceil_mode (a window past
 * the padded edge then counts fewer elements than the kernel) or
 * dilations other than 1 (MIL's pools have none), p below 1.
 *
 * The raising writes MIL's pad_type "same"/"same_lower" as explicit pads
 * where x's spatial dims are static (the odd pad at the end for same, as
 * TensorFlow's SAME it maps; ONNX Runtime takes no auto_pad with
 * dilations), else as auto_pad; conv_transpose's output_shape as
 * output_padding (the extra rows at the end, as coremltools' PyTorch front
 * end writes torch's output_padding) over static dims. Refused: l2_pool
 * (above), conv_quantized (experimental: its definition says it may
 * change).
 *
 * Raised only: iOS18's scaled_dot_product_attention (coremltools'
 * definition, PyTorch's function without dropout or is_causal) as MatMul,
 * Div by sqrt(E), the mask, Softmax and MatMul.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

#define NN_MAX_RANK 8

/* The explicit begin/end pads of a conv or pool over `ns` spatial dims
 * (pads[2*ns] as ONNX orders them), auto_pad SAME_* resolved from the
 * static input shape: 0. 1 for SAME_UPPER over spatial dims known only
 * at run time: MIL's pad_type "same" (coremltools' _utils: the same total,
 * ceil(in / s) outputs, the odd pad at the end). -1 refused. */
static int nn_pads(CmLower *c, const IrNode *n, size_t ns, const int64_t *k,
                   const int64_t *s, const int64_t *d, int64_t *pads)
{
    char buf[32];
    const char *ap = cml_attr_s(n, "auto_pad", buf, sizeof buf);
    memset(pads, 0, 2 * ns * sizeof *pads);
    if (!strcmp(ap, "NOTSET")) {
        const int64_t *p;
        long np = cml_attr_ints(n, "pads", &p);
        if (np >= 0 && (size_t)np != 2 * ns)
            return cml_refuse(c, "pads has %ld entries, expected %zu", np, 2 * ns);
        for (long i = 0; i < np; i++)
            pads[i] = p[i];
        return 0;
    }
    if (!strcmp(ap, "VALID"))
        return 0;
    int64_t dims[NN_MAX_RANK + 2];
    size_t rank;
    bool lower = !strcmp(ap, "SAME_LOWER");
    if (!lower && strcmp(ap, "SAME_UPPER"))
        return cml_refuse(c, "auto_pad '%s' unknown", ap);
    if (!cml_dims(n->in[0], dims, NN_MAX_RANK + 2, &rank) || rank != ns + 2) {
        if (!lower && cml_rank(n->in[0]) == (int)ns + 2 && strcmp(n->op_type, "ConvTranspose"))
            return 1;
        return cml_refuse(c, "auto_pad %s needs a static input shape (MIL's same_lower "
                          "is iOS16's, and ConvTranspose's 'same' is not ONNX's)", ap);
    }
    for (size_t i = 0; i < ns; i++) {
        int64_t in = dims[i + 2], out = (in + s[i] - 1) / s[i];
        int64_t total = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in;
        if (total < 0)
            total = 0;
        pads[i] = lower ? total - total / 2 : total / 2;
        pads[i + ns] = total - pads[i];
    }
    return 0;
}

/* kernel, strides, dilations of a conv/pool over ns dims (defaults 1). */
static int nn_window(CmLower *c, const IrNode *n, size_t ns, int64_t *k, int64_t *s,
                     int64_t *d, bool need_kernel)
{
    const int64_t *v;
    long nv;
    for (size_t i = 0; i < ns; i++)
        k[i] = s[i] = d[i] = 1;
    if ((nv = cml_attr_ints(n, "kernel_shape", &v)) >= 0) {
        if ((size_t)nv != ns)
            return cml_refuse(c, "kernel_shape has %ld entries, expected %zu", nv, ns);
        memcpy(k, v, ns * sizeof *k);
    } else if (need_kernel) {
        return cml_refuse(c, "kernel_shape missing");
    }
    if ((nv = cml_attr_ints(n, "strides", &v)) >= 0) {
        if ((size_t)nv != ns)
            return cml_refuse(c, "strides has %ld entries, expected %zu", nv, ns);
        memcpy(s, v, ns * sizeof *s);
    }
    if ((nv = cml_attr_ints(n, "dilations", &v)) >= 0) {
        if ((size_t)nv != ns)
            return cml_refuse(c, "dilations has %ld entries, expected %zu", nv, ns);
        memcpy(d, v, ns * sizeof *d);
    }
    return 0;
}

/* MIL's pad order: begin/end interleaved per spatial dim. */
static MilTensor *nn_mil_pad(const int64_t *pads, size_t ns)
{
    int64_t p[2 * NN_MAX_RANK];
    for (size_t i = 0; i < ns; i++) {
        p[2 * i] = pads[i];
        p[2 * i + 1] = pads[i + ns];
    }
    return cml_ints(p, 2 * ns);
}

/* pad_type and pad of a conv or pool: "same" (nn_pads gave 1), or
 * "custom" with the explicit pads. */
static void nn_pad_in(MilOp *op, int same, const int64_t *pads, size_t ns)
{
    mil_op_in_const(op, "pad_type", mil_tensor_string(same ? "same" : "custom"));
    if (!same)
        mil_op_in_const(op, "pad", nn_mil_pad(pads, ns));
}

static int nn_spatial(CmLower *c, const IrNode *n, size_t *ns)
{
    int r = cml_rank(n->in[0]);
    if (r < 3 || r > NN_MAX_RANK + 2)
        return cml_refuse(c, "input rank %d: 1 to %d spatial dims are lowered", r,
                          NN_MAX_RANK);
    *ns = (size_t)r - 2;
    return 0;
}

/* The MIL op `type` (conv, conv_transpose) of node n's window over ns
 * spatial dims on MIL values x, w (ONNX value wv) and b (NULL: none): the
 * window from the
 * attributes (kernel_shape, else the weight's dims), explicit pads. NULL
 * after a refusal. */
static MilOp *nn_conv_mil(CmLower *c, const IrNode *n, const char *type, size_t ns,
                          const char *x, const char *w, const char *b, const IrValue *wv)
{
    int64_t k[NN_MAX_RANK], s[NN_MAX_RANK], d[NN_MAX_RANK], pads[2 * NN_MAX_RANK];
    int64_t wd[NN_MAX_RANK + 2];
    size_t wr = 0;
    if (cml_dims(wv, wd, NN_MAX_RANK + 2, &wr) && wr == ns + 2)
        memcpy(k, wd + 2, ns * sizeof *k);
    if (nn_window(c, n, ns, k, s, d, false) < 0)
        return NULL;
    if (!ir_node_attr(n, "kernel_shape") && wr != ns + 2) {
        cml_refuse(c, "the weight's shape is unknown");
        return NULL;
    }
    int same = nn_pads(c, n, ns, k, s, d, pads);
    if (same < 0)
        return NULL;
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    mil_op_in(op, "weight", w);
    if (b)
        mil_op_in(op, "bias", b);
    mil_op_in_const(op, "strides", cml_ints(s, ns));
    nn_pad_in(op, same, pads, ns);
    mil_op_in_const(op, "dilations", cml_ints(d, ns));
    mil_op_in_const(op, "groups", mil_tensor_scalar_i32((int32_t)cml_attr_i(n, "group")));
    return op;
}

const char *cml_conv_float(CmLower *c, const IrNode *n, const char *x, const char *w,
                           const IrValue *wv)
{
    size_t ns = 0;
    if (nn_spatial(c, n, &ns) < 0)
        return NULL;
    MilOp *op = nn_conv_mil(c, n, "conv", ns, x, w, NULL, wv);
    return op ? cml_tmp(c, op, MIL_FP32, (int)ns + 2, NULL) : NULL;
}

/* Conv and ConvTranspose after their own checks: the MIL op `type` with
 * x, weight, bias and the window. */
static int nn_conv_op(CmLower *c, const IrNode *n, const char *type, size_t ns)
{
    const char *x = cml_in(c, n, 0), *w = x ? cml_in(c, n, 1) : NULL;
    const char *b = w && cml_has(n, 2) ? cml_in(c, n, 2) : NULL;
    if (!x || !w || (cml_has(n, 2) && !b))
        return -1;
    MilOp *op = nn_conv_mil(c, n, type, ns, x, w, b, n->in[1]);
    return op ? cml_out(c, op, n, 0) : -1;
}

static int lower_conv(CmLower *c, const IrNode *n)
{
    size_t ns = 0;
    if (nn_spatial(c, n, &ns) < 0)
        return -1;
    return nn_conv_op(c, n, "conv", ns);
}

/* MaxPool and AveragePool. Refused: MaxPool's Indices output and
 * dilations other than 1 (MIL's pools have neither); storage_order only
 * matters for Indices. */
static int lower_pool(CmLower *c, const IrNode *n)
{
    bool is_max = !strcmp(n->op_type, "MaxPool");
    size_t ns = 0;
    int64_t k[NN_MAX_RANK], s[NN_MAX_RANK], d[NN_MAX_RANK], pads[2 * NN_MAX_RANK];
    if (nn_spatial(c, n, &ns) < 0 || nn_window(c, n, ns, k, s, d, true) < 0)
        return -1;
    if (n->n_out > 1 && n->out[1])
        return cml_refuse(c, "the Indices output has no MIL equivalent");
    for (size_t i = 0; i < ns; i++)
        if (d[i] != 1)
            return cml_refuse(c, "dilations other than 1 have no MIL pool equivalent");
    int same = nn_pads(c, n, ns, k, s, d, pads);
    if (same < 0)
        return -1;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, is_max ? "max_pool" : "avg_pool");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "kernel_sizes", cml_ints(k, ns));
    mil_op_in_const(op, "strides", cml_ints(s, ns));
    nn_pad_in(op, same, pads, ns);
    mil_op_in_const(op, "ceil_mode", mil_tensor_scalar_bool(cml_attr_i(n, "ceil_mode")));
    if (!is_max)
        mil_op_in_const(op, "exclude_padding_from_average",
                        mil_tensor_scalar_bool(!cml_attr_i(n, "count_include_pad")));
    return cml_out(c, op, n, 0);
}

static int lower_global_pool(CmLower *c, const IrNode *n)
{
    size_t ns = 0;
    if (nn_spatial(c, n, &ns) < 0)
        return -1;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    int64_t axes[NN_MAX_RANK];
    for (size_t i = 0; i < ns; i++)
        axes[i] = (int64_t)i + 2;
    MilOp *op = cml_op(c, strcmp(n->op_type, "GlobalMaxPool") ? "reduce_mean" : "reduce_max");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axes", cml_ints(axes, ns));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(true));
    return cml_out(c, op, n, 0);
}

static int lower_matmul(CmLower *c, const IrNode *n)
{
    const char *a = cml_in(c, n, 0), *b = a ? cml_in(c, n, 1) : NULL;
    if (!b)
        return -1;
    MilOp *op = cml_op(c, "matmul");
    mil_op_in(op, "x", a);
    mil_op_in(op, "y", b);
    return cml_out(c, op, n, 0);
}

/* A 2-D MIL tensor transposed (elements of any width). */
static MilTensor *nn_transpose2(const MilTensor *t)
{
    size_t w = mil_dtype_size(t->dtype);
    int64_t r = t->dims[0], q = t->dims[1], dims[2] = {q, r};
    MilTensor *o = mil_tensor_new(t->dtype, 2, dims, NULL);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < q; j++)
            memcpy(o->data + ((size_t)j * (size_t)r + (size_t)i) * w,
                   t->data + ((size_t)i * (size_t)q + (size_t)j) * w, w);
    return o;
}

/* Gemm as linear: A not transposed, alpha = beta = 1, B constant, C absent
 * or a constant of N elements. */
static int gemm_linear(CmLower *c, const IrNode *n, bool *done)
{
    *done = false;
    const IrTensor *bt = cml_const_tensor(n, 1);
    const IrTensor *ct = cml_has(n, 2) ? cml_const_tensor(n, 2) : NULL;
    if (cml_attr_i(n, "transA") || cml_attr_f(n, "alpha") != 1 || !bt ||
        bt->ndims != 2 || (cml_has(n, 2) && (!ct || cml_attr_f(n, "beta") != 1)))
        return 0;
    uint64_t cn = 0;
    int64_t nout = cml_attr_i(n, "transB") ? bt->dims[0] : bt->dims[1];
    if (ct && (!ir_tensor_numel(ct, &cn) || cn != (uint64_t)nout || ct->ndims > 2))
        return 0;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilTensor *w = cml_tensor(c, bt);
    if (!w)
        return -1;
    if (!cml_attr_i(n, "transB")) {
        MilTensor *t = nn_transpose2(w);
        mil_tensor_free(w);
        w = t;
    }
    MilOp *op = cml_op(c, "linear");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "weight", w);
    if (ct) {
        MilTensor *b = cml_tensor(c, ct);
        if (!b)
            return -1;
        b->rank = 1;
        b->dims[0] = nout;
        mil_op_in_const(op, "bias", b);
    }
    *done = true;
    return cml_out(c, op, n, 0);
}

/* A [rows, cols] value transposed by a MIL transpose op. */
static const char *nn_transpose_val(CmLower *c, const char *x, int32_t dtype)
{
    int64_t perm[2] = {1, 0};
    MilOp *op = cml_op(c, "transpose");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "perm", cml_ints(perm, 2));
    return cml_tmp(c, op, dtype, 2, NULL);
}

/* Gemm in general: transpose, matmul, scale by alpha, add beta * C. */
static int lower_gemm(CmLower *c, const IrNode *n)
{
    bool done;
    if (gemm_linear(c, n, &done) < 0 || done)
        return c->failed ? -1 : 0;
    const char *a = cml_in(c, n, 0), *b = a ? cml_in(c, n, 1) : NULL;
    if (!b)
        return -1;
    int32_t dt = cm_dtype_to_mil(cml_elem(n->out[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "Gemm of a non-float type");
    if (cml_attr_i(n, "transA"))
        a = nn_transpose_val(c, a, dt);
    if (cml_attr_i(n, "transB"))
        b = nn_transpose_val(c, b, dt);
    float alpha = cml_attr_f(n, "alpha"), beta = cml_attr_f(n, "beta");
    bool has_c = cml_has(n, 2);
    bool scale = alpha != 1;
    MilOp *op = cml_op(c, "matmul");
    mil_op_in(op, "x", a);
    mil_op_in(op, "y", b);
    if (!scale && !has_c)
        return cml_out(c, op, n, 0);
    const char *y = cml_tmp(c, op, dt, 2, NULL);
    if (scale) {
        op = cml_op(c, "mul");
        mil_op_in(op, "x", y);
        mil_op_in_const(op, "y", mil_tensor_scalar_f32(alpha));
        if (!has_c)
            return cml_out(c, op, n, 0);
        y = cml_tmp(c, op, dt, 2, NULL);
    }
    const char *cv = cml_in(c, n, 2);
    if (!cv)
        return -1;
    if (beta != 1) {
        op = cml_op(c, "mul");
        mil_op_in(op, "x", cv);
        mil_op_in_const(op, "y", mil_tensor_scalar_f32(beta));
        cv = cml_tmp(c, op, dt, cml_rank(n->in[2]), NULL);
    }
    op = cml_op(c, "add");
    mil_op_in(op, "x", y);
    mil_op_in(op, "y", cv);
    return cml_out(c, op, n, 0);
}

/* ConvTranspose: weight [C_in, C_out/groups, k...] as ONNX's. Refused:
 * output_padding, output_shape and auto_pad SAME_* (MIL resolves the
 * output size through its own output_shape, whose use is not lowered yet). */
static int lower_conv_transpose(CmLower *c, const IrNode *n)
{
    size_t ns = 0;
    if (nn_spatial(c, n, &ns) < 0)
        return -1;
    const int64_t *v;
    long nv = cml_attr_ints(n, "output_padding", &v);
    for (long i = 0; i < nv; i++)
        if (v[i])
            return cml_refuse(c, "output_padding is not lowered");
    char buf[32];
    const char *ap = cml_attr_s(n, "auto_pad", buf, sizeof buf);
    if (ir_node_attr(n, "output_shape") || (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")))
        return cml_refuse(c, "output_shape and auto_pad SAME_* are not lowered");
    return nn_conv_op(c, n, "conv_transpose", ns);
}

/* Dropout in inference is the identity (its mask all true); refused in
 * training mode (random). */
static int lower_dropout(CmLower *c, const IrNode *n)
{
    int64_t *tm;
    size_t ntm;
    bool training = false;
    if (cml_has(n, 2)) {
        if (!cml_const_ints(n, 2, &tm, &ntm))
            return cml_refuse(c, "training_mode is not a constant");
        training = ntm == 1 && tm[0];
        free(tm);
    }
    if (training)
        return cml_refuse(c, "training mode has no MIL equivalent (random)");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "identity");
    mil_op_in(op, "x", x);
    if (cml_out(c, op, n, 0) < 0)
        return -1;
    if (n->n_out < 2 || !n->out[1])
        return 0;
    /* in inference the mask is all true: a const of x's static dims */
    int64_t dims[NN_MAX_RANK + 2];
    size_t rank;
    uint64_t numel = 1;
    if (!cml_dims(n->in[0], dims, NN_MAX_RANK + 2, &rank))
        return cml_refuse(c, "the mask output needs static input dims");
    for (size_t i = 0; i < rank && numel <= (1u << 26); i++)
        numel *= (uint64_t)dims[i];
    if (numel > (1u << 26))
        return cml_refuse(c, "the mask output is too large for a constant");
    MilTensor *t = mil_tensor_new(MIL_BOOL, (int)rank, dims, NULL);
    memset(t->data, 1, t->nbytes);
    const char *ones = cml_const(c, t);
    op = cml_op(c, "identity");
    mil_op_in(op, "x", ones);
    return cml_out(c, op, n, 1);
}

/* |x|^p (x*x for p 2, |x| for p 1) typed as x; returns its name. */
static const char *nn_abs_pow(CmLower *c, const char *x, double p, const MilType *t)
{
    MilOp *op;
    if (p == 2) {
        op = cml_op(c, "mul");
        mil_op_in(op, "x", x);
        mil_op_in(op, "y", x);
        return cml_tmp(c, op, t->dtype, t->rank, t->dims);
    }
    op = cml_op(c, "abs");
    mil_op_in(op, "x", x);
    const char *a = cml_tmp(c, op, t->dtype, t->rank, t->dims);
    if (p == 1)
        return a;
    op = cml_op(c, "pow");
    mil_op_in(op, "x", a);
    mil_op_in_const(op, "y", cml_scalar(t->dtype, p));
    return cml_tmp(c, op, t->dtype, t->rank, t->dims);
}

/* The p-th root of s as output 0 of n (sqrt for 2, identity for 1). */
static int nn_root(CmLower *c, const IrNode *n, const char *s, double p)
{
    MilType t = cml_type(n->out[0]);
    MilOp *op = cml_op(c, p == 2 ? "sqrt" : p == 1 ? "identity" : "pow");
    mil_op_in(op, "x", s);
    if (p != 1 && p != 2)
        mil_op_in_const(op, "y", cml_scalar(t.dtype, 1.0 / p));
    mil_type_clear(&t);
    return cml_out(c, op, n, 0);
}

static int nn_lp_p(CmLower *c, const IrNode *n, double *p)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    *p = (double)cml_attr_i(n, "p");
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "a non-float input");
    if (*p < 1)
        return cml_refuse(c, "p %g below 1", *p);
    return 0;
}

static int lower_lp_pool(CmLower *c, const IrNode *n)
{
    size_t ns = 0;
    double p;
    int64_t k[NN_MAX_RANK], s[NN_MAX_RANK], d[NN_MAX_RANK], pads[2 * NN_MAX_RANK];
    if (nn_lp_p(c, n, &p) < 0 || nn_spatial(c, n, &ns) < 0 ||
        nn_window(c, n, ns, k, s, d, true) < 0)
        return -1;
    if (ns > 3)
        return cml_refuse(c, "%zu spatial dims: MIL's avg_pool takes 1 to 3", ns);
    if (cml_attr_i(n, "ceil_mode"))
        return cml_refuse(c, "ceil_mode: a window past the padded edge sums fewer elements "
                             "than avg_pool's count");
    double count = 1;
    for (size_t i = 0; i < ns; i++) {
        if (d[i] != 1)
            return cml_refuse(c, "dilations other than 1 have no MIL pool equivalent");
        count *= (double)k[i];
    }
    int same = nn_pads(c, n, ns, k, s, d, pads);
    if (same < 0)
        return -1;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilType tx = cml_type(n->in[0]), ty = cml_type(n->out[0]);
    const char *a = nn_abs_pow(c, x, p, &tx);
    MilOp *op = cml_op(c, "avg_pool");
    mil_op_in(op, "x", a);
    mil_op_in_const(op, "kernel_sizes", cml_ints(k, ns));
    mil_op_in_const(op, "strides", cml_ints(s, ns));
    nn_pad_in(op, same, pads, ns);
    mil_op_in_const(op, "exclude_padding_from_average", mil_tensor_scalar_bool(false));
    const char *avg = cml_tmp(c, op, ty.dtype, ty.rank, ty.dims);
    op = cml_op(c, "mul");
    mil_op_in(op, "x", avg);
    mil_op_in_const(op, "y", cml_scalar(ty.dtype, count));
    const char *sum = cml_tmp(c, op, ty.dtype, ty.rank, ty.dims);
    mil_type_clear(&tx);
    mil_type_clear(&ty);
    return nn_root(c, n, sum, p);
}

static int lower_global_lp_pool(CmLower *c, const IrNode *n)
{
    size_t ns = 0;
    double p;
    if (nn_lp_p(c, n, &p) < 0 || nn_spatial(c, n, &ns) < 0)
        return -1;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    int64_t axes[NN_MAX_RANK];
    for (size_t i = 0; i < ns; i++)
        axes[i] = (int64_t)i + 2;
    bool direct = p == 1 || p == 2;
    MilType tx = cml_type(n->in[0]);
    const char *a = direct ? x : nn_abs_pow(c, x, p, &tx);
    mil_type_clear(&tx);
    MilOp *op = cml_op(c, p == 1 ? "reduce_l1_norm" : p == 2 ? "reduce_l2_norm" : "reduce_sum");
    mil_op_in(op, "x", a);
    mil_op_in_const(op, "axes", cml_ints(axes, ns));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(true));
    if (direct)
        return cml_out(c, op, n, 0);
    MilType ty = cml_type(n->out[0]);
    const char *sum = cml_tmp(c, op, ty.dtype, ty.rank, ty.dims);
    mil_type_clear(&ty);
    return nn_root(c, n, sum, p);
}

static const CmLowerRule nn_lower[] = {
    {"LpPool", lower_lp_pool},
    {"GlobalLpPool", lower_global_lp_pool},
    {"Dropout", lower_dropout},
    {"ConvTranspose", lower_conv_transpose},
    {"Conv", lower_conv},
    {"MaxPool", lower_pool},
    {"AveragePool", lower_pool},
    {"GlobalAveragePool", lower_global_pool},
    {"GlobalMaxPool", lower_global_pool},
    {"MatMul", lower_matmul},
    {"Gemm", lower_gemm},
};

/* ---- raising -------------------------------------------------------------------- */

/* The static dims of argument `param` of op (an immediate's, or as
 * declared); false when unknown. */
static bool nn_arg_dims(CmRaise *r, const MilOp *op, const char *param, int64_t *dims,
                        size_t *rank)
{
    const MilInput *in = mil_op_input(op, param);
    const MilArg *a = in && in->n_args ? &in->args[0] : NULL;
    if (a && a->value && a->value->rank >= 0 && a->value->rank <= NN_MAX_RANK + 2) {
        memcpy(dims, a->value->dims, (size_t)a->value->rank * sizeof *dims);
        *rank = (size_t)a->value->rank;
        return true;
    }
    return a && a->name && cmr_dims(r, a->name, dims, NN_MAX_RANK + 2, rank);
}

/* n const ints of param into v, `dflt` each when the param is absent;
 * false when malformed. */
static bool nn_ints(CmRaise *r, const MilOp *op, const char *param, int64_t *v, size_t n,
                    int64_t dflt)
{
    const MilTensor *t = cmr_const(r, op, param);
    int64_t *p;
    size_t np;
    if (!t) {
        for (size_t i = 0; i < n; i++)
            v[i] = dflt;
        return !mil_op_input(op, param);
    }
    if (!cmr_ints(t, &p, &np))
        return false;
    bool ok = np == n;
    if (ok)
        memcpy(v, p, n * sizeof *v);
    free(p);
    return ok;
}

/* MIL's pad_type "same"/"same_lower" of conv and the pools as explicit
 * pads where x's spatial dims and the kernel are static: the output is
 * ceil(in / stride), the total pad (out - 1) * stride + (k - 1) *
 * dilation + 1 - in (coremltools' aggregated_pad), its odd one at the end
 * (same, as TensorFlow's SAME that it takes) or the start (same_lower).
 * ONNX Runtime refuses auto_pad SAME_* with dilations. */
static bool nn_same_pads(CmRaise *r, const MilOp *op, bool lower, int64_t *pads, size_t *np)
{
    int64_t xd[NN_MAX_RANK + 2], k[NN_MAX_RANK + 2], s[NN_MAX_RANK], d[NN_MAX_RANK];
    size_t xr, kr, ns;
    bool conv = !strcmp(op->type, "conv");
    if (!strcmp(op->type, "conv_transpose") || !nn_arg_dims(r, op, "x", xd, &xr) || xr < 3)
        return false;
    ns = xr - 2;
    if (conv) {
        if (!nn_arg_dims(r, op, "weight", k, &kr) || kr != xr)
            return false;
        memmove(k, k + 2, ns * sizeof *k);
    } else if (!nn_ints(r, op, "kernel_sizes", k, ns, 1)) {
        return false;
    }
    if (!nn_ints(r, op, "strides", s, ns, 1) || !nn_ints(r, op, "dilations", d, ns, 1))
        return false;
    for (size_t i = 0; i < ns; i++) {
        if (s[i] < 1 || d[i] < 1 || k[i] < 1)
            return false;
        int64_t in = xd[2 + i], out = (in + s[i] - 1) / s[i];
        int64_t total = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in;
        total = total > 0 ? total : 0;
        pads[i] = lower ? total - total / 2 : total / 2;
        pads[ns + i] = total - pads[i];
    }
    *np = 2 * ns;
    return true;
}

/* ONNX pads from MIL's interleaved pad; false when malformed. */
static bool nn_onnx_pads(CmRaise *r, const MilOp *op, IrNode *node)
{
    const char *pt = cmr_string(cmr_const(r, op, "pad_type"));
    if (!pt || !strcmp(pt, "valid"))
        return true;
    if (!strcmp(pt, "same") || !strcmp(pt, "same_lower")) {
        int64_t sp[2 * NN_MAX_RANK];
        size_t nsp;
        if (nn_same_pads(r, op, strcmp(pt, "same") != 0, sp, &nsp)) {
            ir_node_set_attr(node, ir_attr_ints("pads", nsp, sp));
            return true;
        }
        ir_node_set_attr(node, ir_attr_string("auto_pad", strcmp(pt, "same") ? "SAME_LOWER"
                                                                             : "SAME_UPPER"));
        return true;
    }
    if (strcmp(pt, "custom"))
        return false;
    int64_t *p;
    size_t np;
    const MilTensor *pad = cmr_const(r, op, "pad");
    if (!pad)
        return true;
    if (!cmr_ints(pad, &p, &np))
        return false;
    if (np % 2 || np > 2 * NN_MAX_RANK) {
        free(p);
        return false;
    }
    int64_t o[2 * NN_MAX_RANK];
    size_t ns = np / 2;
    for (size_t i = 0; i < ns; i++) {
        o[i] = p[2 * i];
        o[i + ns] = p[2 * i + 1];
    }
    free(p);
    ir_node_set_attr(node, ir_attr_ints("pads", np, o));
    return true;
}

/* Copies an int-list param to an INTS attribute. */
static bool nn_ints_attr(CmRaise *r, const MilOp *op, const char *param, IrNode *node,
                         const char *attr)
{
    const MilTensor *t = cmr_const(r, op, param);
    if (!t)
        return true;
    int64_t *v;
    size_t nv;
    if (!cmr_ints(t, &v, &nv))
        return false;
    ir_node_set_attr(node, ir_attr_ints(attr, nv, v));
    free(v);
    return true;
}

/* An int attribute list of node (`n` entries, default dflt when absent);
 * false when present with another length. */
static bool nn_node_ints(const IrNode *node, const char *name, size_t n, int64_t dflt,
                         int64_t *v)
{
    const IrAttr *a = ir_node_attr(node, name);
    for (size_t i = 0; i < n; i++)
        v[i] = a && i < a->n_ints ? a->ints[i] : dflt;
    return !a || a->n_ints == n;
}

/* conv_transpose's output_shape as ONNX's output_padding: the rows past
 * the size the pads give, at the end (where coremltools' PyTorch front
 * end puts torch's output_padding, which it writes as output_shape).
 * Needs x's and the weight's static dims and explicit pads. */
static int nn_output_padding(CmRaise *r, const MilOp *op, IrNode *node)
{
    const MilTensor *os = cmr_const(r, op, "output_shape");
    int64_t xd[NN_MAX_RANK], wd[NN_MAX_RANK], *want;
    size_t xr, wr, nw;
    const MilArg *xa = mil_op_input(op, "x") ? &mil_op_input(op, "x")->args[0] : NULL;
    const MilArg *wa = mil_op_input(op, "weight") ? &mil_op_input(op, "weight")->args[0] : NULL;
    if (!os || !xa || !xa->name || !wa || !wa->name || !cmr_ints(os, &want, &nw))
        return cmr_fail(r, "output_shape is not a constant");
    bool ok = cmr_dims(r, xa->name, xd, NN_MAX_RANK, &xr) &&
              cmr_dims(r, wa->name, wd, NN_MAX_RANK, &wr) && xr == wr && xr >= 3 &&
              (nw == xr || nw == xr - 2) && !ir_node_attr(node, "auto_pad");
    size_t ns = xr - 2;
    int64_t st[NN_MAX_RANK], dl[NN_MAX_RANK], pd[2 * NN_MAX_RANK], op_pad[NN_MAX_RANK];
    ok = ok && nn_node_ints(node, "strides", ns, 1, st) &&
         nn_node_ints(node, "dilations", ns, 1, dl) && nn_node_ints(node, "pads", 2 * ns, 0, pd);
    bool any = false;
    for (size_t i = 0; ok && i < ns; i++) {
        int64_t natural = (xd[2 + i] - 1) * st[i] + (wd[2 + i] - 1) * dl[i] + 1 - pd[i] -
                          pd[ns + i];
        op_pad[i] = want[nw - ns + i] - natural;
        ok = op_pad[i] >= 0 && (op_pad[i] < st[i] || op_pad[i] < dl[i]);
        any |= op_pad[i] > 0;
    }
    free(want);
    if (!ok)
        return cmr_fail(r, "output_shape is not the pads' size plus less than a stride, "
                        "over static dims");
    if (any)
        ir_node_set_attr(node, ir_attr_ints("output_padding", ns, op_pad));
    return 0;
}

static int raise_conv(CmRaise *r, const MilOp *op)
{
    bool tr = !strcmp(op->type, "conv_transpose");
    const char *in[3] = {cmr_in(r, op, "x", 0), cmr_in(r, op, "weight", 0),
                         cmr_in(r, op, "bias", 0)};
    IrNode *node;
    if (cmr_simple(r, op, tr ? "ConvTranspose" : "Conv", in[2] ? 3 : 2, in, &node) < 0)
        return -1;
    int64_t *g;
    size_t ng;
    const MilTensor *gt = cmr_const(r, op, "groups");
    if (gt && cmr_ints(gt, &g, &ng)) {
        if (ng == 1)
            ir_node_set_attr(node, ir_attr_int("group", g[0]));
        free(g);
    }
    if (!nn_onnx_pads(r, op, node) || !nn_ints_attr(r, op, "strides", node, "strides") ||
        !nn_ints_attr(r, op, "dilations", node, "dilations"))
        return cmr_fail(r, "malformed pad, strides or dilations");
    return tr && mil_op_input(op, "output_shape") ? nn_output_padding(r, op, node) : 0;
}

static int raise_pool(CmRaise *r, const MilOp *op)
{
    bool is_max = !strcmp(op->type, "max_pool");
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    if (cmr_simple(r, op, is_max ? "MaxPool" : "AveragePool", 1, in, &node) < 0)
        return -1;
    if (!nn_onnx_pads(r, op, node) || !nn_ints_attr(r, op, "strides", node, "strides") ||
        !nn_ints_attr(r, op, "kernel_sizes", node, "kernel_shape"))
        return cmr_fail(r, "malformed pad, strides or kernel_sizes");
    if (cmr_bool(r, op, "ceil_mode", false))
        ir_node_set_attr(node, ir_attr_int("ceil_mode", 1));
    if (!is_max && !cmr_bool(r, op, "exclude_padding_from_average", false))
        ir_node_set_attr(node, ir_attr_int("count_include_pad", 1));
    return 0;
}

static const char *nn_swap_last(CmRaise *r, const MilInput *in, const char *v,
                                const char *param);

/* matmul's x or y (param) with its last two dims swapped when `flag` is
 * set: a Transpose of the rank the MIL value declares (1-D: matmul ignores
 * the flag). NULL with err when the rank is unknown. */
static const char *nn_raise_operand(CmRaise *r, const MilOp *op, const char *param,
                                    const char *flag)
{
    const char *v = cmr_in(r, op, param, 0);
    const MilInput *in = mil_op_input(op, param);
    if (!v) {
        cmr_fail(r, "'%s' missing", param);
        return NULL;
    }
    if (!cmr_bool(r, op, flag, false))
        return v;
    return nn_swap_last(r, in, v, param);
}

/* v (the value of MIL input `in`) with its last two dims swapped: a
 * Transpose of the rank the MIL value declares; v itself below rank 2.
 * NULL with err when the rank is unknown. */
static const char *nn_swap_last(CmRaise *r, const MilInput *in, const char *v,
                                const char *param)
{
    const MilArg *a = in && in->n_args ? &in->args[0] : NULL;
    int rank = !a ? -1 : a->value ? a->value->rank : cmr_rank(r, a->name);
    if (rank < 0 || rank > NN_MAX_RANK) {
        cmr_fail(r, "'%s' of unknown rank", param);
        return NULL;
    }
    if (rank < 2)
        return v;
    int64_t perm[NN_MAX_RANK];
    for (int i = 0; i < rank; i++)
        perm[i] = i;
    perm[rank - 2] = rank - 1;
    perm[rank - 1] = rank - 2;
    const char *t = cmr_tmp(r, param), *i1[1] = {v}, *o1[1] = {t};
    IrNode *node;
    if (cmr_node(r, "Transpose", 1, i1, 1, o1, &node) < 0)
        return NULL;
    ir_node_set_attr(node, ir_attr_ints("perm", (size_t)rank, perm));
    return t;
}

/* matmul: MatMul, after a Transpose of x (y) where transpose_x
 * (transpose_y) is set. */
static int raise_matmul(CmRaise *r, const MilOp *op)
{
    const char *x = nn_raise_operand(r, op, "x", "transpose_x");
    const char *y = x ? nn_raise_operand(r, op, "y", "transpose_y") : NULL;
    if (!y)
        return -1;
    const char *in[2] = {x, y};
    return cmr_simple(r, op, "MatMul", 2, in, NULL);
}

/* linear: Gemm(x, W, b, transB=1) for a 2-D x; else MatMul with W^T and
 * Add. The rank comes from the op's output type. */
static int raise_linear(CmRaise *r, const MilOp *op)
{
    const char *x = cmr_in(r, op, "x", 0), *w = cmr_in(r, op, "weight", 0);
    const char *b = cmr_in(r, op, "bias", 0);
    if (op->n_out != 1)
        return cmr_fail(r, "expected one output");
    if (op->out[0].type.rank == 2) {
        const char *in[3] = {x, w, b};
        IrNode *node;
        if (cmr_simple(r, op, "Gemm", b ? 3 : 2, in, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("transB", 1));
        return 0;
    }
    const char *wt = cmr_tmp(r, "wt"), *mm = b ? cmr_tmp(r, "mm") : cmr_out(op, 0);
    const char *i1[1] = {w}, *o1[1] = {wt}, *i2[2] = {x, wt}, *o2[1] = {mm};
    IrNode *node;
    if (cmr_node(r, "Transpose", 1, i1, 1, o1, &node) < 0)
        return -1;
    int64_t perm[2] = {1, 0};
    ir_node_set_attr(node, ir_attr_ints("perm", 2, perm));
    if (cmr_node(r, "MatMul", 2, i2, 1, o2, NULL) < 0)
        return -1;
    if (!b)
        return 0;
    const char *i3[2] = {mm, b};
    return cmr_simple(r, op, "Add", 2, i3, NULL);
}

/* Adds node op_type(in...) -> a fresh value named after base; its name,
 * or NULL with err. */
static const char *nn_step(CmRaise *r, const char *op_type, size_t n_in,
                           const char *const *in, const char *base, IrNode **node)
{
    const char *t = cmr_tmp(r, base), *o[1] = {t};
    return cmr_node(r, op_type, n_in, in, 1, o, node) < 0 ? NULL : t;
}

/* The scores' mask: + a float mask, or -inf where a bool mask is false
 * (coremltools' definition, as PyTorch's masked_fill). */
static const char *nn_sdpa_mask(CmRaise *r, const MilOp *op, const char *s, const char *q)
{
    const char *mask = cmr_in(r, op, "attn_mask", 0);
    if (!mask)
        return r->in_failed ? NULL : s;
    int32_t mt = cmr_elem(r, op, "attn_mask");
    if (mt == IR_FLOAT || mt == IR_FLOAT16) {
        const char *in[2] = {s, mask};
        return nn_step(r, "Add", 2, in, "masked", NULL);
    }
    if (mt != IR_BOOL) {
        cmr_fail(r, "attn_mask of an unknown type");
        return NULL;
    }
    float ninf = -INFINITY;
    const char *c[2] = {cmr_init_f32(r, &ninf, 1, true), q};
    const char *lo = nn_step(r, "CastLike", 2, c, "ninf", NULL);
    const char *in[3] = {mask, s, lo};
    return lo ? nn_step(r, "Where", 3, in, "masked", NULL) : NULL;
}

/* scaled_dot_product_attention (iOS18): softmax(Q K^T / sqrt(E) + mask) V,
 * E the last dim of query, read at run time (Shape from -1, CastLike,
 * Sqrt) so that a flexible E raises too. */
static int raise_sdpa(CmRaise *r, const MilOp *op)
{
    const char *q = cmr_in(r, op, "query", 0), *k = cmr_in(r, op, "key", 0);
    const char *v = cmr_in(r, op, "value", 0);
    if (!q || !k || !v)
        return r->in_failed ? -1 : cmr_fail(r, "query, key or value missing");
    const char *kt = nn_swap_last(r, mil_op_input(op, "key"), k, "key");
    const char *i2[2] = {q, kt};
    const char *s = kt ? nn_step(r, "MatMul", 2, i2, "scores", NULL) : NULL;
    IrNode *shape;
    const char *i1[1] = {q};
    const char *e = s ? nn_step(r, "Shape", 1, i1, "e", &shape) : NULL;
    if (!e)
        return -1;
    ir_node_set_attr(shape, ir_attr_int("start", -1));
    const char *c[2] = {e, q};
    const char *ef = nn_step(r, "CastLike", 2, c, "e", NULL);
    const char *i3[1] = {ef};
    const char *root = ef ? nn_step(r, "Sqrt", 1, i3, "sqrt_e", NULL) : NULL;
    const char *i4[2] = {s, root};
    const char *scaled = root ? nn_step(r, "Div", 2, i4, "scaled", NULL) : NULL;
    const char *masked = scaled ? nn_sdpa_mask(r, op, scaled, q) : NULL;
    IrNode *sm;
    const char *i5[1] = {masked};
    const char *w = masked ? nn_step(r, "Softmax", 1, i5, "weights", &sm) : NULL;
    if (!w)
        return -1;
    ir_node_set_attr(sm, ir_attr_int("axis", -1));
    const char *i6[2] = {w, v};
    return cmr_simple(r, op, "MatMul", 2, i6, NULL);
}

static int refuse_l2_pool(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: its definition does not say whether it sums or averages "
                       "the squares of a window, nor how padding counts");
}

static int refuse_conv_quantized(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: an experimental op (its definition says it may change)");
}

static const CmRaiseRule nn_raise[] = {
    {"scaled_dot_product_attention", raise_sdpa},
    {"l2_pool", refuse_l2_pool},
    {"conv_quantized", refuse_conv_quantized},
    {"conv", raise_conv},
    {"conv_transpose", raise_conv},
    {"max_pool", raise_pool},
    {"avg_pool", raise_pool},
    {"matmul", raise_matmul},
    {"linear", raise_linear},
};

CM_FAMILY(cm_family_nn, "nn", nn_lower, nn_raise);
