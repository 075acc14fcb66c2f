/*
 * coreml/activation.c - Core ML lowering and raising of the activation
 * family: Relu, Sigmoid, Softmax, LogSoftmax (softmax then log: MIL has no
 * log_softmax), Elu, LeakyRelu, HardSigmoid, Softplus, Softsign,
 * ThresholdedRelu.
 *
 * PRelu, Selu, HardSwish, Mish and Celu (alpha * elu(x / alpha)) are
 * composed of MIL ops; Shrink is in elementwise.c; Hardmax is
 * reduce_argmax then one_hot along the axis.
 *
 * Refused: Softmax/LogSoftmax of an unknown rank (the axis must be
 * normalized); Hardmax of an unknown rank or a non-static axis dim (the
 * one_hot size is taken from it), or of a type other than fp16/fp32; Celu
 * with alpha 0.
 */
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "rules.h"

static const CmMap act_plain[] = {
    {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Softplus", "softplus"},
    {"Softsign", "softsign"},
};

/* ops with one float parameter `alpha` (MIL's name too) */
static const CmMap act_alpha[] = {
    {"Elu", "elu"}, {"LeakyRelu", "leaky_relu"}, {"ThresholdedRelu", "thresholded_relu"},
};

#define ACT_N(t) (sizeof t / sizeof t[0])

static float act_alpha_default(const char *op)
{
    if (!strcmp(op, "LeakyRelu"))
        return 0.01f;
    return 1.0f;
}

static int lower_act(CmLower *c, const IrNode *n)
{
    const CmMap *p = cm_map_onnx(act_plain, ACT_N(act_plain), n->op_type);
    const CmMap *a = cm_map_onnx(act_alpha, ACT_N(act_alpha), n->op_type);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "MIL's activations take floats");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, p ? p->mil : a ? a->mil : "sigmoid_hard");
    mil_op_in(op, "x", x);
    if (a)
        mil_op_in_const(op, "alpha",
                        cml_scalar(dt, cml_attr_f(n, "alpha", act_alpha_default(n->op_type))));
    if (!p && !a) {
        mil_op_in_const(op, "alpha", cml_scalar(dt, cml_attr_f(n, "alpha", 0.2f)));
        mil_op_in_const(op, "beta", cml_scalar(dt, cml_attr_f(n, "beta", 0.5f)));
    }
    return cml_out(c, op, n, 0);
}

static int lower_softmax(CmLower *c, const IrNode *n)
{
    int64_t axis;
    if (!cml_axis(cml_attr_i(n, "axis", -1), cml_rank(n->in[0]), &axis))
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

/* Selu = gamma * elu(x, alpha); HardSwish = x * sigmoid_hard(x, 1/6, 1/2);
 * Mish = x * tanh(softplus(x)). */
static int lower_composite(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "MIL's activations take floats");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilType t = cml_type(n->out[0]);
    MilOp *op;
    const char *y;
    if (!strcmp(n->op_type, "Selu")) {
        op = cml_op(c, "elu");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "alpha", cml_scalar(dt, cml_attr_f(n, "alpha", 1.67326319217681884765625f)));
        y = cml_tmp(c, op, t.dtype, t.rank, t.dims);
        mil_type_clear(&t);
        return act_bin(c, n, "mul", y, NULL,
                       cml_scalar(dt, cml_attr_f(n, "gamma", 1.05070102214813232421875f)), true)
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
    double alpha = cml_attr_f(n, "alpha", 1.0f);
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
        !cml_axis(cml_attr_i(n, "axis", -1), (int)rank, &axis) || dims[axis] > INT32_MAX ||
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
    {"ThresholdedRelu", lower_act}, {"HardSigmoid", lower_act},
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

static const CmRaiseRule act_raise[] = {
    {"relu", raise_act}, {"sigmoid", raise_act}, {"softplus", raise_act},
    {"softsign", raise_act}, {"elu", raise_act}, {"leaky_relu", raise_act},
    {"thresholded_relu", raise_act}, {"sigmoid_hard", raise_act},
    {"softmax", raise_softmax},
};

CM_FAMILY(cm_family_activation, "activation", act_lower, act_raise);
