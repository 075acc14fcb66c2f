/*
 * coreml/tensor.c - Core ML lowering and raising of the tensor family:
 * Range (range_1d), Shape (of a shape inference cannot give; known shapes are consts),
 * ConstantOfShape of a computed shape (fill).
 *
 * DepthToSpace (DCR: depth_to_space, CRD: pixel_shuffle) and SpaceToDepth
 * (space_to_depth).
 *
 * MIL facts: depth_to_space and space_to_depth are TensorFlow's (the
 * coremltools TensorFlow front end maps them one to one after moving the
 * channels first), so their channel order is ONNX's DCR; pixel_shuffle is
 * torch's, whose order is ONNX's CRD. All three take rank-4 fp16/fp32.
 *
 * pixel_unshuffle (iOS16, the inverse of CRD, which ONNX lacks) is raised
 * as Reshape/Transpose/Reshape.
 *
 * Refused: Shape with start/end (not lowered yet); DepthToSpace and
 * SpaceToDepth of a rank other than 4 or a type other than fp16/fp32 (the
 * MIL ops take only those); a blocksize outside 1..2^31.
 */
#include <stdbool.h>
#include <stdint.h>
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

/* DepthToSpace/SpaceToDepth: rank 4, fp16/fp32; -1 refused. */
static int tn_block_args(CmLower *c, const IrNode *n, int32_t *bs)
{
    int64_t b = cml_attr_i(n, "blocksize", 0);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (cml_rank(n->in[0]) != 4)
        return cml_refuse(c, "input rank %d: the MIL op takes rank 4", cml_rank(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "the MIL op takes fp16 and fp32 only");
    if (b < 1 || b > INT32_MAX)
        return cml_refuse(c, "blocksize %lld out of range", (long long)b);
    *bs = (int32_t)b;
    return 0;
}

static int lower_depth_space(CmLower *c, const IrNode *n)
{
    int32_t bs = 0;
    if (tn_block_args(c, n, &bs) < 0)
        return -1;
    char buf[8];
    bool to_space = !strcmp(n->op_type, "DepthToSpace");
    const char *mode = cml_attr_s(n, "mode", buf, sizeof buf, "DCR");
    bool crd = to_space && !strcmp(mode, "CRD");
    if (to_space && !crd && strcmp(mode, "DCR"))
        return cml_refuse(c, "mode '%s' unknown", mode);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, crd ? "pixel_shuffle" : to_space ? "depth_to_space" : "space_to_depth");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, crd ? "upscale_factor" : "block_size", mil_tensor_scalar_i32(bs));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule tn_lower[] = {
    {"DepthToSpace", lower_depth_space}, {"SpaceToDepth", lower_depth_space},
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

/* depth_to_space (DCR), pixel_shuffle (CRD), space_to_depth. */
static int raise_depth_space(CmRaise *r, const MilOp *op)
{
    bool crd = !strcmp(op->type, "pixel_shuffle");
    const MilTensor *t = cmr_const(r, op, crd ? "upscale_factor" : "block_size");
    int64_t *v;
    size_t nv;
    if (!t || !cmr_ints(t, &v, &nv))
        return cmr_fail(r, "the block size is not a constant");
    int64_t bs = nv == 1 ? v[0] : 0;
    free(v);
    if (bs < 1)
        return cmr_fail(r, "the block size is not a positive scalar");
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    bool to_space = strcmp(op->type, "space_to_depth");
    if (cmr_simple(r, op, to_space ? "DepthToSpace" : "SpaceToDepth", 1, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("blocksize", bs));
    if (to_space)
        ir_node_set_attr(node, ir_attr_string("mode", crd ? "CRD" : "DCR"));
    return 0;
}

/* pixel_unshuffle (iOS16, torch's): the inverse of pixel_shuffle (CRD),
 * y[n, c*r*r + i*r + j, h, w] = x[n, c, h*r + i, w*r + j]; ONNX's
 * SpaceToDepth is the inverse of DCR, so it is raised as Reshape to
 * [N, C, H, r, W, r], Transpose [0,1,3,5,2,4], Reshape to [N, C*r*r, H, W]
 * (0 in a Reshape keeps N; H and W from the output's static dims). */
static int raise_pixel_unshuffle(CmRaise *r, const MilOp *op)
{
    const MilTensor *t = cmr_const(r, op, "downscale_factor");
    int64_t f = -1;
    if (t && t->dtype == MIL_UINT32 && t->nbytes == 4)
        f = (int64_t)((uint32_t)t->data[0] | (uint32_t)t->data[1] << 8 |
                      (uint32_t)t->data[2] << 16 | (uint32_t)t->data[3] << 24);
    const MilType *ty = op->n_out == 1 ? &op->out[0].type : NULL;
    if (f < 1 || !ty || ty->rank != 4 || ty->dims[2] < 1 || ty->dims[3] < 1 ||
        (ty->dim_names && (ty->dim_names[2] || ty->dim_names[3])))
        return cmr_fail(r, "downscale_factor not a positive constant, or output H, W not "
                           "static");
    int64_t h = ty->dims[2], w = ty->dims[3];
    int64_t s1[6] = {0, 0, h, f, w, f}, perm[6] = {0, 1, 3, 5, 2, 4}, s2[4] = {0, -1, h, w};
    const char *a = cmr_tmp(r, "unshuffle6"), *b = cmr_tmp(r, "unshuffle6t");
    const char *i1[2] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, s1, 6, false)}, *o1[1] = {a};
    const char *i2[1] = {a}, *o2[1] = {b};
    const char *i3[2] = {b, cmr_init_i64(r, s2, 4, false)};
    IrNode *node;
    if (cmr_node(r, "Reshape", 2, i1, 1, o1, NULL) < 0 ||
        cmr_node(r, "Transpose", 1, i2, 1, o2, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_ints("perm", 6, perm));
    return cmr_simple(r, op, "Reshape", 2, i3, NULL);
}

static const CmRaiseRule tn_raise[] = {
    {"pixel_unshuffle", raise_pixel_unshuffle},
    {"depth_to_space", raise_depth_space}, {"pixel_shuffle", raise_depth_space},
    {"space_to_depth", raise_depth_space},
    {"range_1d", raise_range},
    {"shape", raise_shape}, {"fill", raise_fill},
};

CM_FAMILY(cm_family_tensor, "tensor", tn_lower, tn_raise);
