/*
 * coreml/index.c - Core ML lowering and raising of the index family:
 * Gather (gather), GatherElements (gather_along_axis), GatherND
 * (gather_nd). MIL's gathers take negative indices as ONNX's do.
 *
 * Refused: GatherND with batch_dims (the iOS15 gather_nd has none).
 */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int lower_gather(CmLower *c, const IrNode *n)
{
    bool nd = !strcmp(n->op_type, "GatherND");
    if (nd && cml_attr_i(n, "batch_dims", 0))
        return cml_refuse(c, "batch_dims is not lowered");
    int64_t axis = 0;
    if (!nd && !cml_axis(cml_attr_i(n, "axis", 0), cml_rank(n->in[0]), &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0), *i = x ? cml_in(c, n, 1) : NULL;
    if (!i)
        return -1;
    MilOp *op = cml_op(c, nd ? "gather_nd" : !strcmp(n->op_type, "Gather") ? "gather"
                                                                          : "gather_along_axis");
    mil_op_in(op, "x", x);
    mil_op_in(op, "indices", i);
    if (!nd)
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule ix_lower[] = {
    {"Gather", lower_gather}, {"GatherElements", lower_gather}, {"GatherND", lower_gather},
};

static int raise_gather(CmRaise *r, const MilOp *op)
{
    bool nd = !strcmp(op->type, "gather_nd");
    const char *in[2] = {cmr_in(r, op, "x", 0), cmr_in(r, op, "indices", 0)};
    IrNode *node;
    if (nd && in[1]) {
        /* ONNX's GatherND takes int64 indices only */
        const char *i64 = cmr_tmp(r, "indices64"), *out[1] = {i64};
        if (cmr_node(r, "Cast", 1, &in[1], 1, out, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("to", IR_INT64));
        in[1] = i64;
    }
    if (cmr_simple(r, op, nd ? "GatherND" : !strcmp(op->type, "gather") ? "Gather"
                                                                         : "GatherElements",
                   2, in, &node) < 0)
        return -1;
    const MilTensor *a = cmr_const(r, op, "axis");
    int64_t *v;
    size_t nv;
    if (!nd && a && cmr_ints(a, &v, &nv)) {
        if (nv == 1)
            ir_node_set_attr(node, ir_attr_int("axis", v[0]));
        free(v);
    }
    return 0;
}

static const CmRaiseRule ix_raise[] = {
    {"gather", raise_gather}, {"gather_along_axis", raise_gather}, {"gather_nd", raise_gather},
};

CM_FAMILY(cm_family_index, "index", ix_lower, ix_raise);
