/*
 * coreml/reduce.c - Core ML lowering and raising of the reduce family:
 * Reduce* (reduce_*, axes const, keep_dims), ArgMax/ArgMin
 * (reduce_argmax/argmin, whose int32 result the import casts back), CumSum
 * (cumsum).
 *
 * Refused, and why: ReduceSum with non-constant axes or
 * noop_with_empty_axes (MIL's axes are const; an empty list there means
 * all); ArgMax/ArgMin with select_last_index (MIL returns the first).
 * The import refuses classify (labels and a label -> probability
 * dictionary, which ai.onnx has no type for).
 */
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

static const CmMap rd_ops[] = {
    {"ReduceMean", "reduce_mean"}, {"ReduceSum", "reduce_sum"}, {"ReduceMax", "reduce_max"},
    {"ReduceMin", "reduce_min"}, {"ReduceProd", "reduce_prod"},
    {"ReduceL1", "reduce_l1_norm"}, {"ReduceL2", "reduce_l2_norm"},
    {"ReduceLogSum", "reduce_log_sum"}, {"ReduceLogSumExp", "reduce_log_sum_exp"},
    {"ReduceSumSquare", "reduce_sum_square"},
    {"ArgMax", "reduce_argmax"}, {"ArgMin", "reduce_argmin"},
};
#define RD_N (sizeof rd_ops / sizeof rd_ops[0])

static bool rd_is_arg(const char *onnx)
{
    return !strncmp(onnx, "Arg", 3);
}

static int lower_reduce(CmLower *c, const IrNode *n)
{
    const CmMap *m = cm_map_onnx(rd_ops, RD_N, n->op_type);
    int r = cml_rank(n->in[0]);
    bool keep = cml_attr_i(n, "keepdims") != 0;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    if (rd_is_arg(n->op_type)) {
        int64_t axis;
        if (cml_attr_i(n, "select_last_index"))
            return cml_refuse(c, "select_last_index: MIL returns the first index");
        if (!cml_axis(cml_attr_i(n, "axis"), r, &axis))
            return cml_refuse(c, "axis out of range or rank unknown");
        MilOp *op = cml_op(c, m->mil);
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
        mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(keep));
        return cml_out(c, op, n, 0);
    }
    int64_t *ax = NULL;
    size_t na = 0;
    const int64_t *aa;
    long nattr = cml_attr_ints(n, "axes", &aa);
    if (cml_has(n, 1)) {
        if (!cml_const_ints(n, 1, &ax, &na))
            return cml_refuse(c, "axes are not constant");
    } else if (nattr > 0) {
        na = (size_t)nattr;
        ax = mem_array(na, sizeof *ax);
        memcpy(ax, aa, na * sizeof *ax);
    }
    if (!na && cml_attr_i(n, "noop_with_empty_axes")) {
        free(ax);
        return cml_refuse(c, "noop_with_empty_axes is not lowered");
    }
    for (size_t i = 0; i < na; i++)
        if (!cml_axis(ax[i], r, &ax[i])) {
            free(ax);
            return cml_refuse(c, "axis out of range or rank unknown");
        }
    MilOp *op = cml_op(c, m->mil);
    mil_op_in(op, "x", x);
    if (na)
        mil_op_in_const(op, "axes", cml_ints(ax, na));
    free(ax);
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(keep));
    return cml_out(c, op, n, 0);
}

/* CumSum: MIL's axis is const (ONNX's an input). */
static int lower_cumsum(CmLower *c, const IrNode *n)
{
    int64_t *a, axis;
    size_t na;
    if (!cml_const_ints(n, 1, &a, &na))
        return cml_refuse(c, "axis is not constant");
    bool ok = na == 1 && cml_axis(a[0], cml_rank(n->in[0]), &axis);
    free(a);
    if (!ok)
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "cumsum");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "exclusive", mil_tensor_scalar_bool(cml_attr_i(n, "exclusive")));
    mil_op_in_const(op, "reverse", mil_tensor_scalar_bool(cml_attr_i(n, "reverse")));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule rd_lower[] = {
    {"CumSum", lower_cumsum},
    {"ReduceMean", lower_reduce}, {"ReduceSum", lower_reduce}, {"ReduceMax", lower_reduce},
    {"ReduceMin", lower_reduce}, {"ReduceProd", lower_reduce}, {"ReduceL1", lower_reduce},
    {"ReduceL2", lower_reduce}, {"ReduceLogSum", lower_reduce},
    {"ReduceLogSumExp", lower_reduce}, {"ReduceSumSquare", lower_reduce},
    {"ArgMax", lower_reduce}, {"ArgMin", lower_reduce},
};

/* ---- raising -------------------------------------------------------------------- */

static int raise_reduce(CmRaise *r, const MilOp *op)
{
    const CmMap *m = cm_map_mil(rd_ops, RD_N, op->type);
    bool keep = cmr_bool(r, op, "keep_dims", false);
    const char *x = cmr_in(r, op, "x", 0);
    IrNode *node;
    if (rd_is_arg(m->onnx)) {
        const char *idx = cmr_tmp(r, "arg");
        const char *in[1] = {x}, *out[1] = {idx};
        if (cmr_node(r, m->onnx, 1, in, 1, out, &node) < 0)
            return -1;
        int64_t *v, axis = -1; /* MIL's default; ONNX's is 0 */
        size_t nv;
        const MilTensor *a = cmr_const(r, op, "axis");
        if (a && cmr_ints(a, &v, &nv)) {
            axis = nv == 1 ? v[0] : axis;
            free(v);
        }
        ir_node_set_attr(node, ir_attr_int("axis", axis));
        ir_node_set_attr(node, ir_attr_int("keepdims", keep));
        if (cmr_simple(r, op, "Cast", 1, out, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("to", IR_INT32));
        return 0;
    }
    const MilTensor *at = cmr_const(r, op, "axes");
    int64_t *ax = NULL;
    size_t na = 0;
    if (at && !cmr_ints(at, &ax, &na))
        return cmr_fail(r, "malformed axes");
    bool sum = !strcmp(m->onnx, "ReduceSum");
    const char *in[2] = {x, sum && na ? cmr_init_i64(r, ax, na, false) : NULL};
    int rc = cmr_simple(r, op, m->onnx, in[1] ? 2 : 1, in, &node);
    if (rc == 0 && !sum && na)
        ir_node_set_attr(node, ir_attr_ints("axes", na, ax));
    if (rc == 0)
        ir_node_set_attr(node, ir_attr_int("keepdims", keep));
    free(ax);
    return rc;
}

static int raise_cumsum(CmRaise *r, const MilOp *op)
{
    const MilTensor *a = cmr_const(r, op, "axis");
    int64_t *v, axis = 0;
    size_t nv;
    if (a && cmr_ints(a, &v, &nv)) {
        axis = nv == 1 ? v[0] : 0;
        free(v);
    }
    const char *in[2] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, &axis, 1, true)};
    IrNode *node;
    if (cmr_simple(r, op, "CumSum", 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("exclusive", cmr_bool(r, op, "exclusive", false)));
    ir_node_set_attr(node, ir_attr_int("reverse", cmr_bool(r, op, "reverse", false)));
    return 0;
}

static int refuse_classify(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: a classifier's output (class labels and a label -> "
                       "probability dictionary), which ai.onnx has no type for");
}

static const CmRaiseRule rd_raise[] = {
    {"classify", refuse_classify},
    {"cumsum", raise_cumsum},
    {"reduce_mean", raise_reduce}, {"reduce_sum", raise_reduce},
    {"reduce_max", raise_reduce}, {"reduce_min", raise_reduce},
    {"reduce_prod", raise_reduce}, {"reduce_l1_norm", raise_reduce},
    {"reduce_l2_norm", raise_reduce}, {"reduce_log_sum", raise_reduce},
    {"reduce_log_sum_exp", raise_reduce}, {"reduce_sum_square", raise_reduce},
    {"reduce_argmax", raise_reduce}, {"reduce_argmin", raise_reduce},
};

CM_FAMILY(cm_family_reduce, "reduce", rd_lower, rd_raise);
