/*
 * coreml/tensor.c - Core ML lowering and raising of the tensor family:
 * Range (range_1d), Shape (of a shape inference cannot give; known shapes are consts),
 * ConstantOfShape of a computed shape (fill).
 *
 * Refused: Shape with start/end (not lowered yet).
 */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int lower_shape(CmLower *c, const IrNode *n)
{
    if (ir_node_attr(n, "start") || ir_node_attr(n, "end"))
        return cml_refuse(c, "start/end are not lowered");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", x);
    return cml_out(c, op, n, 0);
}

static int lower_cos(CmLower *c, const IrNode *n)
{
    const IrAttr *a = ir_node_attr(n, "value");
    int32_t dt = a && a->t && a->t->has_data_type ? a->t->data_type : IR_FLOAT;
    double v = 0;
    if (a && a->t && !ir_tensor_get_f64(a->t, 0, &v))
        return cml_refuse(c, "value unreadable");
    int32_t md = cm_dtype_to_mil(dt);
    if (md != MIL_FP32 && md != MIL_FP16 && md != MIL_INT32 && md != MIL_BOOL)
        return cml_refuse(c, "value type has no Core ML fill");
    const char *s = cml_in(c, n, 0);
    if (!s)
        return -1;
    MilOp *op = cml_op(c, "fill");
    mil_op_in(op, "shape", s);
    mil_op_in_const(op, "value", cml_scalar(md, v));
    return cml_out(c, op, n, 0);
}

/* Range(start, limit, delta) is range_1d(end, start, step). */
static int lower_range(CmLower *c, const IrNode *n)
{
    const char *a = cml_in(c, n, 0), *b = a ? cml_in(c, n, 1) : NULL;
    const char *d = b ? cml_in(c, n, 2) : NULL;
    if (!d)
        return -1;
    MilOp *op = cml_op(c, "range_1d");
    mil_op_in(op, "end", b);
    mil_op_in(op, "start", a);
    mil_op_in(op, "step", d);
    return cml_out(c, op, n, 0);
}

static const CmLowerRule tn_lower[] = {
    {"Range", lower_range},
    {"Shape", lower_shape}, {"ConstantOfShape", lower_cos},
};

/* shape: ONNX Shape (int64), cast to the int32 MIL computes with. */
static int raise_shape(CmRaise *r, const MilOp *op)
{
    const char *s = cmr_tmp(r, "shape");
    const char *in[1] = {cmr_in(r, op, "x", 0)}, *out[1] = {s};
    if (cmr_node(r, "Shape", 1, in, 1, out, NULL) < 0)
        return -1;
    IrNode *node;
    if (cmr_simple(r, op, "Cast", 1, out, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT32));
    return 0;
}

static int raise_fill(CmRaise *r, const MilOp *op)
{
    const MilTensor *v = cmr_const(r, op, "value");
    const char *x = cmr_in(r, op, "shape", 0);
    if (!x)
        return cmr_fail(r, "shape missing");
    const char *s = cmr_tmp(r, "shape64");
    const char *in[1] = {x}, *out[1] = {s};
    IrNode *node;
    if (cmr_node(r, "Cast", 1, in, 1, out, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT64));
    if (cmr_simple(r, op, "ConstantOfShape", 1, out, &node) < 0)
        return -1;
    if (v) {
        int64_t d1[1] = {1};
        IrTensor *t = ir_tensor_new("value", cm_dtype_to_onnx(v->dtype), 1, d1, v->data,
                                    v->nbytes);
        ir_node_set_attr(node, ir_attr_tensor("value", t));
    }
    return 0;
}

static int raise_range(CmRaise *r, const MilOp *op)
{
    const char *in[3] = {cmr_in(r, op, "start", 0), cmr_in(r, op, "end", 0),
                         cmr_in(r, op, "step", 0)};
    return cmr_simple(r, op, "Range", 3, in, NULL);
}

static const CmRaiseRule tn_raise[] = {
    {"range_1d", raise_range},
    {"shape", raise_shape}, {"fill", raise_fill},
};

CM_FAMILY(cm_family_tensor, "tensor", tn_lower, tn_raise);
