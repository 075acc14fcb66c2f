/*
 * coreml/activation.c - Core ML lowering and raising of the activation
 * family: Relu, Sigmoid, Softmax, LogSoftmax (softmax then log: MIL has no
 * log_softmax), Elu, LeakyRelu, HardSigmoid, Softplus, Softsign,
 * ThresholdedRelu.
 *
 * Refused: Softmax/LogSoftmax of an unknown rank (the axis must be
 * normalized); PRelu, Selu, Celu, HardSwish, Mish, Shrink (not lowered
 * yet).
 */
#include <stdlib.h>
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

static const CmLowerRule act_lower[] = {
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
