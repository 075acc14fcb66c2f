/*
 * coreml/index.c - Core ML lowering and raising of the index family:
 * Gather (gather), GatherElements (gather_along_axis), GatherND
 * (gather_nd), TopK (topk). MIL's gathers take negative indices as ONNX's
 * do.
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

/* TopK: k must be constant (MIL's is const); MIL sorts always, which
 * sorted=0 allows. */
static int lower_topk(CmLower *c, const IrNode *n)
{
    int64_t *k, axis;
    size_t nk;
    if (!cml_const_ints(n, 1, &k, &nk))
        return cml_refuse(c, "K is not constant");
    int64_t kv = nk == 1 ? k[0] : -1;
    free(k);
    if (kv < 0 || kv > INT32_MAX || !cml_axis(cml_attr_i(n, "axis", -1), cml_rank(n->in[0]), &axis))
        return cml_refuse(c, "K or axis out of range, or rank unknown");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "topk");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "k", mil_tensor_scalar_i32((int32_t)kv));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "ascending", mil_tensor_scalar_bool(!cml_attr_i(n, "largest", 1)));
    for (size_t i = 0; i < 2; i++) {
        if (i < n->n_out && n->out[i]) {
            if (cml_out(c, op, n, i) < 0)
                return -1;
        } else {
            MilType t = cml_type(n->out[0]);
            cml_tmp(c, op, i ? MIL_INT32 : t.dtype, t.rank, t.dims);
            mil_type_clear(&t);
        }
    }
    return 0;
}

static const CmLowerRule ix_lower[] = {
    {"TopK", lower_topk},
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

static int raise_topk(CmRaise *r, const MilOp *op)
{
    const MilTensor *kt = cmr_const(r, op, "k"), *at = cmr_const(r, op, "axis");
    int64_t *v, k = 1, axis = -1;
    size_t nv;
    if (op->n_out != 2)
        return cmr_fail(r, "expected values and indices");
    if (kt && cmr_ints(kt, &v, &nv)) {
        k = nv == 1 ? v[0] : k;
        free(v);
    }
    if (at && cmr_ints(at, &v, &nv)) {
        axis = nv == 1 ? v[0] : axis;
        free(v);
    }
    const char *i64 = cmr_tmp(r, "indices64");
    const char *in[2] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, &k, 1, false)};
    const char *out[2] = {op->out[0].name, i64};
    IrNode *node;
    if (cmr_node(r, "TopK", 2, in, 2, out, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("axis", axis));
    ir_node_set_attr(node, ir_attr_int("largest", !cmr_bool(r, op, "ascending", false)));
    const char *ci[1] = {i64}, *co[1] = {op->out[1].name};
    if (cmr_node(r, "Cast", 1, ci, 1, co, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT32));
    return 0;
}

static const CmRaiseRule ix_raise[] = {
    {"topk", raise_topk},
    {"gather", raise_gather}, {"gather_along_axis", raise_gather}, {"gather_nd", raise_gather},
};

CM_FAMILY(cm_family_index, "index", ix_lower, ix_raise);
