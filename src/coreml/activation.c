/*
 * coreml/activation.c - Core ML lowering and raising of the activation
 * family: Relu, Sigmoid, Softmax, LogSoftmax (softmax then log: MIL has no
 * log_softmax), Elu, LeakyRelu, HardSigmoid, Softplus, Softsign.
 *
 * ThresholdedRelu (x > alpha: greater and select; MIL's thresholded_relu
 * keeps x >= alpha), PRelu, Selu, HardSwish, Mish and Celu (alpha * elu(x / alpha)) are
 * composed of MIL ops; Shrink is in elementwise.c; Hardmax is
 * reduce_argmax then one_hot along the axis.
 *
 * Refused: Softmax/LogSoftmax of an unknown rank (the axis must be
 * normalized); Hardmax of an unknown rank or a non-static axis dim (the
 * one_hot size is taken from it), or of a type other than fp16/fp32; Celu
 * with alpha 0.
 *
 * Raised (coremltools' iOS15/iOS17 activation defs): relu, sigmoid,
 * softplus, softsign, elu, leaky_relu, sigmoid_hard, softmax one to one;
 * as compositions of their formulas: thresholded_relu (MIL keeps x >= alpha,
 * ONNX's ThresholdedRelu only x > alpha: Where), clamped_relu, relu6,
 * silu, linear_activation, scaled_tanh, prelu and softplus_parametric (per
 * channel of axis 1: constants shaped [C, 1, ...]), gelu in its three modes
 * (ONNX's Gelu is opset 20). iOS17's alpha/beta of another float type than
 * x are taken in x's type.
 */
#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "coreml/rules.h"

static const CmMap act_plain[] = {
    {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Softplus", "softplus"},
    {"Softsign", "softsign"},
};

/* ops with one float parameter `alpha` (MIL's name too) */
static const CmMap act_alpha[] = {
    {"Elu", "elu"}, {"LeakyRelu", "leaky_relu"},
};

#define ACT_N(t) (sizeof t / sizeof t[0])

/* The MIL value of n's input 0 and its MIL dtype (*dt), when it is fp32
 * or fp16, which MIL's activations take; NULL after refusing otherwise. */
static const char *act_float_in(CmLower *c, const IrNode *n, int32_t *dt)
{
    *dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (*dt != MIL_FP32 && *dt != MIL_FP16) {
        cml_refuse(c, "MIL's activations take floats");
        return NULL;
    }
    return cml_in(c, n, 0);
}

static int lower_act(CmLower *c, const IrNode *n)
{
    const CmMap *p = cm_map_onnx(act_plain, ACT_N(act_plain), n->op_type);
    const CmMap *a = cm_map_onnx(act_alpha, ACT_N(act_alpha), n->op_type);
    int32_t dt;
    const char *x = act_float_in(c, n, &dt);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, p ? p->mil : a ? a->mil : "sigmoid_hard");
    mil_op_in(op, "x", x);
    if (a)
        mil_op_in_const(op, "alpha",
                        cml_scalar(dt, cml_attr_f(n, "alpha")));
    if (!p && !a) {
        mil_op_in_const(op, "alpha", cml_scalar(dt, cml_attr_f(n, "alpha")));
        mil_op_in_const(op, "beta", cml_scalar(dt, cml_attr_f(n, "beta")));
    }
    return cml_out(c, op, n, 0);
}

static int lower_softmax(CmLower *c, const IrNode *n)
{
    int64_t axis;
    if (!cml_axis(cml_attr_i(n, "axis"), cml_rank(n->in[0]), &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    bool logs = !strcmp(n->op_type, "LogSoftmax");
    MilOp *op = cml_op(c, "softmax");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    if (!logs)
        return cml_out(c, op, n, 0);
    MilType t = cml_type(n->out[0]);
    const char *y = cml_tmp(c, op, t.dtype, t.rank, t.dims);
    mil_type_clear(&t);
    op = cml_op(c, "log");
    mil_op_in(op, "x", y);
    return cml_out(c, op, n, 0);
}

/* A binary MIL op on two values (or y an immediate), output a temporary
 * typed like ONNX output 0 of n, unless `last` binds that output. */
static const char *act_bin(CmLower *c, const IrNode *n, const char *type, const char *x,
                           const char *y, MilTensor *yc, bool last)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    if (yc)
        mil_op_in_const(op, "y", yc);
    else
        mil_op_in(op, "y", y);
    if (last)
        return cml_out(c, op, n, 0) < 0 ? NULL : "";
    MilType t = cml_type(n->out[0]);
    const char *name = cml_tmp(c, op, t.dtype, t.rank, t.dims);
    mil_type_clear(&t);
    return name;
}

/* PRelu as select(x >= 0, x, x * slope): MIL's prelu takes a per-channel
 * alpha only, ONNX's slope broadcasts any way. */
static int lower_prelu(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "PRelu of a non-float type");
    const char *x = cml_in(c, n, 0), *sl = x ? cml_in(c, n, 1) : NULL;
    if (!sl)
        return -1;
    const char *xs = act_bin(c, n, "mul", x, sl, NULL, false);
    MilOp *op = cml_op(c, "greater_equal");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "y", cml_scalar(dt, 0));
    int r = cml_rank(n->out[0]);
    const char *k = cml_tmp(c, op, MIL_BOOL, r, NULL);
    op = cml_op(c, "select");
    mil_op_in(op, "cond", k);
    mil_op_in(op, "a", x);
    mil_op_in(op, "b", xs);
    return cml_out(c, op, n, 0);
}

/* ThresholdedRelu keeps x > alpha: select(greater(x, alpha), x, 0). MIL's
 * thresholded_relu keeps x >= alpha (its definition and value inference),
 * which differs where x equals alpha. */
static int lower_thresholded(CmLower *c, const IrNode *n)
{
    int32_t dt;
    const char *x = act_float_in(c, n, &dt);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "greater");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "y", cml_scalar(dt, cml_attr_f(n, "alpha")));
    const char *k = cml_tmp(c, op, MIL_BOOL, cml_rank(n->out[0]), NULL);
    op = cml_op(c, "select");
    mil_op_in(op, "cond", k);
    mil_op_in(op, "a", x);
    mil_op_in_const(op, "b", cml_scalar(dt, 0));
    return cml_out(c, op, n, 0);
}

/* Selu = gamma * elu(x, alpha); HardSwish = x * sigmoid_hard(x, 1/6, 1/2);
 * Mish = x * tanh(softplus(x)). */
static int lower_composite(CmLower *c, const IrNode *n)
{
    int32_t dt;
    const char *x = act_float_in(c, n, &dt);
    if (!x)
        return -1;
    MilType t = cml_type(n->out[0]);
    MilOp *op;
    const char *y;
    if (!strcmp(n->op_type, "Selu")) {
        op = cml_op(c, "elu");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "alpha", cml_scalar(dt, cml_attr_f(n, "alpha")));
        y = cml_tmp(c, op, t.dtype, t.rank, t.dims);
        mil_type_clear(&t);
        return act_bin(c, n, "mul", y, NULL,
                       cml_scalar(dt, cml_attr_f(n, "gamma")), true)
                   ? 0 : -1;
    }
    if (!strcmp(n->op_type, "HardSwish")) {
        op = cml_op(c, "sigmoid_hard");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "alpha", cml_scalar(dt, 1.0 / 6));
        mil_op_in_const(op, "beta", cml_scalar(dt, 0.5));
    } else {
        op = cml_op(c, "softplus");
        mil_op_in(op, "x", x);
        y = cml_tmp(c, op, t.dtype, t.rank, t.dims);
        op = cml_op(c, "tanh");
        mil_op_in(op, "x", y);
    }
    y = cml_tmp(c, op, t.dtype, t.rank, t.dims);
    mil_type_clear(&t);
    return act_bin(c, n, "mul", x, y, NULL, true) ? 0 : -1;
}

/* Celu(x, alpha) = alpha * elu(x / alpha) with elu's alpha 1: x above 0,
 * alpha (exp(x / alpha) - 1) below. MIL has no celu. */
static int lower_celu(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "Celu of a non-float type");
    double alpha = cml_attr_f(n, "alpha");
    if (alpha == 0)
        return cml_refuse(c, "Celu with alpha 0 divides by zero");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    const char *s = act_bin(c, n, "real_div", x, NULL, cml_scalar(dt, alpha), false);
    MilOp *op = cml_op(c, "elu");
    mil_op_in(op, "x", s);
    mil_op_in_const(op, "alpha", cml_scalar(dt, 1));
    MilType t = cml_type(n->out[0]);
    const char *e = cml_tmp(c, op, t.dtype, t.rank, t.dims);
    mil_type_clear(&t);
    return act_bin(c, n, "mul", e, NULL, cml_scalar(dt, alpha), true) ? 0 : -1;
}

/* Hardmax: 1 at the first maximum along axis, else 0: reduce_argmax
 * (first index of the maximum, as ONNX's ArgMax without
 * select_last_index) then one_hot of the axis's size. */
static int lower_hardmax(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "Hardmax of a non-float type");
    int64_t dims[64], axis;
    size_t rank;
    if (!cml_dims(n->in[0], dims, 64, &rank) ||
        !cml_axis(cml_attr_i(n, "axis"), (int)rank, &axis) || dims[axis] > INT32_MAX ||
        dims[axis] < 1)
        return cml_refuse(c, "the shape is not static or the axis is out of range");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "reduce_argmax");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(false));
    int64_t rd[64];
    for (size_t i = 0, k = 0; i < rank; i++)
        if ((int64_t)i != axis)
            rd[k++] = dims[i];
    const char *am = cml_tmp(c, op, MIL_INT32, (int)rank - 1, rd);
    op = cml_op(c, "one_hot");
    mil_op_in(op, "indices", am);
    mil_op_in_const(op, "one_hot_vector_size", mil_tensor_scalar_i32((int32_t)dims[axis]));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "on_value", cml_scalar(dt, 1));
    mil_op_in_const(op, "off_value", cml_scalar(dt, 0));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule act_lower[] = {
    {"Celu", lower_celu},
    {"Hardmax", lower_hardmax},
    {"PRelu", lower_prelu}, {"Selu", lower_composite}, {"HardSwish", lower_composite},
    {"Mish", lower_composite},
    {"Relu", lower_act}, {"Sigmoid", lower_act}, {"Softplus", lower_act},
    {"Softsign", lower_act}, {"Elu", lower_act}, {"LeakyRelu", lower_act},
    {"ThresholdedRelu", lower_thresholded}, {"HardSigmoid", lower_act},
    {"Softmax", lower_softmax}, {"LogSoftmax", lower_softmax},
};

/* ---- raising -------------------------------------------------------------------- */

static int raise_act(CmRaise *r, const MilOp *op)
{
    const CmMap *p = cm_map_mil(act_plain, ACT_N(act_plain), op->type);
    const CmMap *a = cm_map_mil(act_alpha, ACT_N(act_alpha), op->type);
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    if (cmr_simple(r, op, p ? p->onnx : a ? a->onnx : "HardSigmoid", 1, in, &node) < 0)
        return -1;
    double v;
    if (!p && cmr_float(cmr_const(r, op, "alpha"), &v))
        ir_node_set_attr(node, ir_attr_float("alpha", (float)v));
    if (!p && !a && cmr_float(cmr_const(r, op, "beta"), &v))
        ir_node_set_attr(node, ir_attr_float("beta", (float)v));
    return 0;
}

static int raise_softmax(CmRaise *r, const MilOp *op)
{
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    if (cmr_simple(r, op, "Softmax", 1, in, &node) < 0)
        return -1;
    int64_t *v;
    size_t nv;
    const MilTensor *t = cmr_const(r, op, "axis");
    if (t && cmr_ints(t, &v, &nv)) {
        if (nv == 1)
            ir_node_set_attr(node, ir_attr_int("axis", v[0]));
        free(v);
    }
    return 0;
}

/* A float scalar parameter of op (const; iOS17 lets its type differ from
 * x's) as an initializer of the output's type; NULL with err. */
static const char *act_param(CmRaise *r, const MilOp *op, const char *param)
{
    double v;
    if (!cmr_float(cmr_const(r, op, param), &v)) {
        cmr_fail(r, "%s is not a constant float scalar", param);
        r->in_failed = true;
        return NULL;
    }
    return cmr_init_scalar(r, op, v);
}

/* A per-channel parameter (const [C] of floats) as an initializer shaped
 * [C, 1, ...] that broadcasts along axis 1 of the op's output, cast to the
 * output's type where it differs; NULL with err. */
static const char *act_channel(CmRaise *r, const MilOp *op, const char *param)
{
    const MilTensor *t = cmr_const(r, op, param);
    int rank = op->n_out ? op->out[0].type.rank : -1;
    int32_t dt = op->n_out ? op->out[0].type.dtype : 0;
    int64_t dims[8];
    if (!t || t->rank != 1 || (t->dtype != MIL_FP32 && t->dtype != MIL_FP16) || rank < 2 ||
        rank > 8) {
        cmr_fail(r, "%s is not a constant float vector, or the rank of x is not 2 to 8", param);
        r->in_failed = true;
        return NULL;
    }
    dims[0] = t->dims[0];
    for (int i = 1; i < rank - 1; i++)
        dims[i] = 1;
    MilTensor *c = mil_tensor_new(t->dtype, rank - 1, dims, t->data);
    const char *name = cmr_init_tensor(r, c);
    mil_tensor_free(c);
    if (!name || t->dtype == dt)
        return name;
    IrNode *node;
    const char *y = cmr_tnode(r, "Cast", 1, name, NULL, &node);
    if (y)
        ir_node_set_attr(node, ir_attr_int("to", cm_dtype_to_onnx(dt)));
    return y;
}

/* thresholded_relu keeps x where x >= alpha (MIL's definition and its
 * value inference); ONNX's ThresholdedRelu keeps x > alpha only, so it is
 * Where(x < alpha, 0, x). */
static int raise_thresholded(CmRaise *r, const MilOp *op)
{
    const char *x = cmr_in(r, op, "x", 0);
    const char *in[3] = {cmr_tnode(r, "Less", 2, x, act_param(r, op, "alpha"), NULL),
                         cmr_init_scalar(r, op, 0), x};
    return cmr_simple(r, op, "Where", 3, in, NULL);
}

/* clamped_relu: min(beta, x) for x >= 0, min(beta, alpha * x) below: Min
 * of LeakyRelu and beta. (coremltools' value inference adds min(0, beta)
 * for x >= 0, which differs only for a negative beta.) */
static int raise_clamped_relu(CmRaise *r, const MilOp *op)
{
    double alpha;
    if (!cmr_float(cmr_const(r, op, "alpha"), &alpha))
        return cmr_fail(r, "alpha is not a constant float scalar");
    IrNode *node;
    const char *in[2] = {cmr_tnode(r, "LeakyRelu", 1, cmr_in(r, op, "x", 0), NULL, &node),
                         act_param(r, op, "beta")};
    if (in[0])
        ir_node_set_attr(node, ir_attr_float("alpha", (float)alpha));
    return cmr_simple(r, op, "Min", 2, in, NULL);
}

/* relu6 = Clip(x, 0, 6) */
static int raise_relu6(CmRaise *r, const MilOp *op)
{
    const char *in[3] = {cmr_in(r, op, "x", 0), cmr_init_scalar(r, op, 0),
                         cmr_init_scalar(r, op, 6)};
    return cmr_simple(r, op, "Clip", 3, in, NULL);
}

/* silu = x * sigmoid(x) */
static int raise_silu(CmRaise *r, const MilOp *op)
{
    const char *x = cmr_in(r, op, "x", 0);
    const char *in[2] = {x, cmr_tnode(r, "Sigmoid", 1, x, NULL, NULL)};
    return cmr_simple(r, op, "Mul", 2, in, NULL);
}

/* linear_activation = alpha * x + beta; scaled_tanh = alpha * tanh(beta * x) */
static int raise_alpha_beta(CmRaise *r, const MilOp *op)
{
    const char *x = cmr_in(r, op, "x", 0);
    if (!strcmp(op->type, "linear_activation")) {
        const char *in[2] = {cmr_tnode(r, "Mul", 2, x, act_param(r, op, "alpha"), NULL),
                             act_param(r, op, "beta")};
        return cmr_simple(r, op, "Add", 2, in, NULL);
    }
    const char *bx = cmr_tnode(r, "Mul", 2, x, act_param(r, op, "beta"), NULL);
    const char *in[2] = {cmr_tnode(r, "Tanh", 1, bx, NULL, NULL), act_param(r, op, "alpha")};
    return cmr_simple(r, op, "Mul", 2, in, NULL);
}

/* prelu: ONNX PRelu with alpha [C] as a slope [C, 1, ...] (MIL's alpha is
 * per channel, axis 1). */
static int raise_prelu(CmRaise *r, const MilOp *op)
{
    const char *in[2] = {cmr_in(r, op, "x", 0), act_channel(r, op, "alpha")};
    return cmr_simple(r, op, "PRelu", 2, in, NULL);
}

/* softplus_parametric = alpha_c * log(1 + exp(beta_c * x)) per channel
 * (axis 1): Mul, Softplus, Mul with [C, 1, ...] constants. */
static int raise_softplus_parametric(CmRaise *r, const MilOp *op)
{
    const char *bx = cmr_tnode(r, "Mul", 2, cmr_in(r, op, "x", 0), act_channel(r, op, "beta"),
                               NULL);
    const char *in[2] = {cmr_tnode(r, "Softplus", 1, bx, NULL, NULL),
                         act_channel(r, op, "alpha")};
    return cmr_simple(r, op, "Mul", 2, in, NULL);
}

/* gelu's three modes as their formulas (ONNX's Gelu is opset 20):
 *   EXACT                  0.5 x (1 + erf(x / sqrt(2)))
 *   TANH_APPROXIMATION     0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
 *   SIGMOID_APPROXIMATION  x sigmoid(1.702 x) */
static int raise_gelu(CmRaise *r, const MilOp *op)
{
    const char *mode = cmr_string(cmr_const(r, op, "mode"));
    const char *x = cmr_in(r, op, "x", 0), *t;
    if (!mode || !strcmp(mode, "EXACT")) {
        t = cmr_tnode(r, "Erf", 1, cmr_tnode(r, "Div", 2, x, cmr_init_scalar(r, op, sqrt(2.0)),
                                             NULL), NULL, NULL);
    } else if (!strcmp(mode, "TANH_APPROXIMATION")) {
        const char *x3 = cmr_tnode(r, "Mul", 2, cmr_tnode(r, "Mul", 2, x, x, NULL), x, NULL);
        const char *a = cmr_tnode(r, "Add", 2, x,
                                  cmr_tnode(r, "Mul", 2, x3, cmr_init_scalar(r, op, 0.044715),
                                            NULL), NULL);
        const char *c = cmr_init_scalar(r, op, sqrt(2.0 / 3.14159265358979323846));
        t = cmr_tnode(r, "Tanh", 1, cmr_tnode(r, "Mul", 2, a, c, NULL), NULL, NULL);
    } else if (!strcmp(mode, "SIGMOID_APPROXIMATION")) {
        const char *in[2] = {x, cmr_tnode(r, "Sigmoid", 1,
                                          cmr_tnode(r, "Mul", 2, x, cmr_init_scalar(r, op, 1.702),
                                                    NULL), NULL, NULL)};
        return cmr_simple(r, op, "Mul", 2, in, NULL);
    } else {
        return cmr_fail(r, "mode '%s' unknown", mode);
    }
    const char *u = cmr_tnode(r, "Add", 2, t, cmr_init_scalar(r, op, 1), NULL);
    const char *in[2] = {cmr_tnode(r, "Mul", 2, x, u, NULL), cmr_init_scalar(r, op, 0.5)};
    return cmr_simple(r, op, "Mul", 2, in, NULL);
}

static const CmRaiseRule act_raise[] = {
    {"relu", raise_act}, {"sigmoid", raise_act}, {"softplus", raise_act},
    {"softsign", raise_act}, {"elu", raise_act}, {"leaky_relu", raise_act},
    {"thresholded_relu", raise_thresholded}, {"sigmoid_hard", raise_act},
    {"softmax", raise_softmax}, {"clamped_relu", raise_clamped_relu}, {"relu6", raise_relu6},
    {"silu", raise_silu}, {"linear_activation", raise_alpha_beta},
    {"scaled_tanh", raise_alpha_beta}, {"prelu", raise_prelu},
    {"softplus_parametric", raise_softplus_parametric}, {"gelu", raise_gelu},
};

CM_FAMILY(cm_family_activation, "activation", act_lower, act_raise);
