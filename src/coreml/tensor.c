/*
 * coreml/tensor.c - Core ML lowering and raising of the tensor family:
 * Range (range_1d), Shape (of a shape inference cannot give; known shapes are consts),
 * ConstantOfShape of a computed shape (fill), OneHot (one_hot), Size
 * (shape and reduce_prod), Trilu (band_part, or a constant mask and
 * select).
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
 * Refused, and why: Shape with start/end on an unknown rank or selecting
 * no dim; DepthToSpace
 * and SpaceToDepth of a rank other than 4 or a type other than fp16/fp32
 * (the MIL ops take only those); a blocksize outside 1..2^31; OneHot whose
 * values are not a static pair or whose computed depth is not a
 * one-element int or float; Trilu whose k band_part cannot express (tril
 * with k < 0, triu with k > 0, or k computed) when the last two dims are
 * not static (up to 4096) for the mask or the j - i table.
 *
 * The import raises fill_like (iOS16) as ConstantOfShape of Shape, and
 * refuses the random ops (random_bernoulli, random_categorical,
 * random_normal, random_uniform: ONNX's cannot reproduce their draws).
 *
 * Not proven here: what Core ML's one_hot gives for an index outside
 * [-depth, depth) (ONNX: all off values; the import raises to OneHot, so
 * the round trip cannot tell).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

/* Shape; with start/end (opset 15), shape(x) sliced to [start, end),
 * both made non-negative and clamped to [0, rank] as ONNX says, which
 * needs the rank. */
static int lower_shape(CmLower *c, const IrNode *n)
{
    bool part = ir_node_attr(n, "start") || ir_node_attr(n, "end");
    int rank = cml_rank(n->in[0]);
    int64_t b = cml_attr_i(n, "start"), e = cml_attr_i_or(n, "end", rank);
    if (part && rank < 0)
        return cml_refuse(c, "start/end on an input of unknown rank");
    b = b < 0 ? b + rank : b;
    e = e < 0 ? e + rank : e;
    b = b < 0 ? 0 : b > rank ? rank : b;
    e = e < 0 ? 0 : e > rank ? rank : e;
    if (part && e <= b)
        return cml_refuse(c, "start/end select no dim (MIL has no empty shape)");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", x);
    if (!part || (b == 0 && e == rank))
        return cml_out(c, op, n, 0);
    const char *sh = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){rank});
    op = cml_op(c, "slice_by_index");
    mil_op_in(op, "x", sh);
    mil_op_in_const(op, "begin", cml_ints(&b, 1));
    mil_op_in_const(op, "end", cml_ints(&e, 1));
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
    int64_t b = cml_attr_i(n, "blocksize");
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
    const char *mode = cml_attr_s(n, "mode", buf, sizeof buf);
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

/* OneHot: one_hot with the constant values pair as on/off values (or a
 * one_hot mask and select between computed values), the indices cast to
 * int32 when ONNX gives floats, negative ones wrapped by depth first. */
/* OneHot's depth as an int32 scalar: a constant, or the computed input
 * cast (ONNX truncates a float depth) and reshaped to rank 0. NULL after
 * refusing. */
static const char *oh_depth(CmLower *c, const IrNode *n)
{
    double *dv;
    size_t nd;
    if (cml_const_floats(n, 1, &dv, &nd)) {
        double d = nd == 1 ? dv[0] : -1;
        free(dv);
        if (d < 1 || d > INT32_MAX) {
            cml_refuse(c, "depth is not a positive int32 scalar");
            return NULL;
        }
        return cml_const(c, mil_tensor_scalar_i32((int32_t)d));
    }
    int32_t ddt = cm_dtype_to_mil(cml_elem(n->in[1]));
    if ((ddt != MIL_INT32 && ddt != MIL_FP32 && ddt != MIL_FP16) ||
        cml_rank(n->in[1]) < 0 || cml_rank(n->in[1]) > 1) {
        cml_refuse(c, "a computed depth must be a one-element int or float");
        return NULL;
    }
    const char *depth = cml_in(c, n, 1);
    if (!depth)
        return NULL;
    if (ddt != MIL_INT32) {
        /* ONNX casts a float depth to an integer (truncating) */
        MilOp *op = cml_op(c, "cast");
        mil_op_in(op, "x", depth);
        mil_op_in_const(op, "dtype", mil_tensor_string("int32"));
        int r = cml_rank(n->in[1]);
        depth = cml_tmp(c, op, MIL_INT32, r, (int64_t[]){1});
    }
    if (cml_rank(n->in[1]) != 0) {
        MilOp *op = cml_op(c, "reshape");
        mil_op_in(op, "x", depth);
        mil_op_in_const(op, "shape", mil_tensor_new(MIL_INT32, 1, (int64_t[]){0}, NULL));
        depth = cml_tmp(c, op, MIL_INT32, 0, NULL);
    }
    return depth;
}

/* OneHot's indices as int32: ONNX truncates non-integer ones. NULL on
 * failure. */
static const char *oh_indices(CmLower *c, const IrNode *n)
{
    const char *x = cml_in(c, n, 0);
    if (!x || cm_dtype_to_mil(cml_elem(n->in[0])) == MIL_INT32)
        return x;
    MilOp *op = cml_op(c, "cast");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "dtype", mil_tensor_string("int32"));
    MilType t = cml_type(n->in[0]);
    x = cml_tmp(c, op, MIL_INT32, t.rank, t.dims);
    mil_type_clear(&t);
    return x;
}

/* x wrapped into [0, depth); an index below -depth stays out of range
 * (ONNX: all off values), not wrapped a second time by the import's
 * OneHot: it becomes depth. */
static const char *oh_wrap(CmLower *c, const IrNode *n, const char *x, const char *depth)
{
    const char *w = cml_wrap_index(c, n, 0, x, depth);
    if (!w || w == x)
        return w;
    MilType t = cml_type(n->in[0]);
    MilOp *op = cml_op(c, "less");
    mil_op_in(op, "x", w);
    mil_op_in_const(op, "y", mil_tensor_scalar_i32(0));
    const char *neg = cml_tmp(c, op, MIL_BOOL, t.rank, t.dims);
    op = cml_op(c, "select");
    mil_op_in(op, "cond", neg);
    mil_op_in(op, "a", depth);
    mil_op_in(op, "b", w);
    w = cml_tmp(c, op, MIL_INT32, t.rank, t.dims);
    mil_type_clear(&t);
    return w;
}

/* Computed on/off values: op (a one_hot) gets on 0, off 1, so that its
 * output inv marks where off goes; select(inv, inv * off, on) is exact
 * where off + (on - off) * onehot would round. One select arm must have
 * the full shape: coremltools types select by its arms alone. */
static int oh_values(CmLower *c, const IrNode *n, MilOp *op, int32_t dt)
{
    mil_op_in_const(op, "on_value", cml_scalar(dt, 0));
    mil_op_in_const(op, "off_value", cml_scalar(dt, 1));
    MilType ot = cml_type(n->out[0]);
    const char *inv = cml_tmp(c, op, dt, ot.rank, ot.dims);
    const char *v = cml_in(c, n, 2), *pick[2];
    if (!v) {
        mil_type_clear(&ot);
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        op = cml_op(c, "gather");
        mil_op_in(op, "x", v);
        mil_op_in_const(op, "indices", mil_tensor_scalar_i32(k));
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
        pick[k] = cml_tmp(c, op, dt, 0, NULL);
    }
    op = cml_op(c, "cast");
    mil_op_in(op, "x", inv);
    mil_op_in_const(op, "dtype", mil_tensor_string("bool"));
    const char *is_off = cml_tmp(c, op, MIL_BOOL, ot.rank, ot.dims);
    op = cml_op(c, "mul");
    mil_op_in(op, "x", inv);
    mil_op_in(op, "y", pick[0]);
    const char *offs = cml_tmp(c, op, dt, ot.rank, ot.dims);
    mil_type_clear(&ot);
    op = cml_op(c, "select");
    mil_op_in(op, "cond", is_off);
    mil_op_in(op, "a", offs);
    mil_op_in(op, "b", pick[1]);
    return cml_out(c, op, n, 0);
}

static int lower_onehot(CmLower *c, const IrNode *n)
{
    double *vals;
    size_t nv = 2;
    bool v_const = cml_const_floats(n, 2, &vals, &nv);
    double off = v_const && nv == 2 ? vals[0] : 0, on = v_const && nv == 2 ? vals[1] : 0;
    if (v_const)
        free(vals);
    int64_t vd[64];
    size_t vr;
    if (!v_const && (!cml_dims(n->in[2], vd, 64, &vr) || vr != 1 || vd[0] != 2))
        nv = 0;
    int32_t dt = cm_dtype_to_mil(cml_elem(n->out[0]));
    if (nv != 2 || (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32 && dt != MIL_BOOL))
        return cml_refuse(c, "values must be a pair of fp16, fp32, int32 or bool");
    int rank = cml_rank(n->in[0]);
    int64_t axis;
    if (rank < 0 || !cml_axis(cml_attr_i(n, "axis"), rank + 1, &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = oh_indices(c, n);
    const char *depth = x ? oh_depth(c, n) : NULL;
    x = depth ? oh_wrap(c, n, x, depth) : NULL;
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "one_hot");
    mil_op_in(op, "indices", x);
    mil_op_in(op, "one_hot_vector_size", depth);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    if (!v_const)
        return oh_values(c, n, op, dt);
    mil_op_in_const(op, "on_value", cml_scalar(dt, on));
    mil_op_in_const(op, "off_value", cml_scalar(dt, off));
    return cml_out(c, op, n, 0);
}

/* Size of a shape inference cannot give: the product of shape(x). */
static int lower_size(CmLower *c, const IrNode *n)
{
    int rank = cml_rank(n->in[0]);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    if (rank < 0)
        return cml_refuse(c, "rank unknown");
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", x);
    const char *s = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){rank});
    op = cml_op(c, "reduce_prod");
    mil_op_in(op, "x", s);
    mil_op_in_const(op, "axes", mil_tensor_ints((int32_t[]){0}, 1));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(false));
    return cml_out(c, op, n, 0);
}

/* Trilu with a computed k: select(D op k, x, 0) where D is the constant
 * j - i of the last two dims (static, up to 4096 each) and op is >= for
 * the upper triangle, <= for the lower. */
static int trilu_dynamic(CmLower *c, const IrNode *n, const char *x, int32_t dt, bool upper)
{
    int64_t dims[64];
    size_t rank;
    if (cml_rank(n->in[1]) != 0 || !cml_dims(n->in[0], dims, 64, &rank) || rank < 2 ||
        dims[rank - 2] > 4096 || dims[rank - 1] > 4096)
        return cml_refuse(c, "k is computed and either not a scalar or the last two dims are "
                          "not static (up to 4096) for the j - i table it is compared with");
    const char *k = cml_in(c, n, 1);
    if (!k)
        return -1;
    int64_t R = dims[rank - 2], C = dims[rank - 1];
    int32_t *d = mem_array(R * C > 0 ? (size_t)(R * C) : 1, sizeof *d);
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++)
            d[i * C + j] = (int32_t)(j - i);
    const char *diff = cml_const(c, mil_tensor_new(MIL_INT32, 2, (int64_t[]){R, C}, d));
    free(d);
    MilOp *op = cml_op(c, upper ? "greater_equal" : "less_equal");
    mil_op_in(op, "x", diff);
    mil_op_in(op, "y", k);
    const char *cond = cml_tmp(c, op, MIL_BOOL, 2, (int64_t[]){R, C});
    op = cml_op(c, "select");
    mil_op_in(op, "cond", cond);
    mil_op_in(op, "a", x);
    mil_op_in_const(op, "b", cml_scalar(dt, 0));
    return cml_out(c, op, n, 0);
}

/* Trilu: band_part when k is constant and allows (tril with k >= 0 keeps
 * j - i <= k: upper = k; triu with k <= 0 keeps i - j <= -k: lower = -k),
 * else a constant mask of the last two dims (they must be static) and
 * select; a computed k: trilu_dynamic. */
static int lower_trilu(CmLower *c, const IrNode *n)
{
    bool upper = cml_attr_i(n, "upper") != 0;
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32 && dt != MIL_BOOL)
        return cml_refuse(c, "MIL's band_part and select take fp16, fp32, int32 and bool");
    int64_t k = 0, *kv;
    size_t nk;
    bool k_const = !cml_has(n, 1) || cml_const_ints(n, 1, &kv, &nk);
    if (cml_has(n, 1) && k_const) {
        k = nk == 1 ? kv[0] : 0;
        free(kv);
        if (nk != 1)
            return cml_refuse(c, "k is not a scalar");
    }
    k = k > INT32_MAX ? INT32_MAX : k < -INT32_MAX ? -INT32_MAX : k;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    if (!k_const)
        return trilu_dynamic(c, n, x, dt, upper);
    if (upper ? k <= 0 : k >= 0) {
        MilOp *op = cml_op(c, "band_part");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "lower", mil_tensor_scalar_i32(upper ? (int32_t)-k : -1));
        mil_op_in_const(op, "upper", mil_tensor_scalar_i32(upper ? -1 : (int32_t)k));
        return cml_out(c, op, n, 0);
    }
    int64_t dims[64];
    size_t rank;
    if (!cml_dims(n->in[0], dims, 64, &rank) || rank < 2 ||
        dims[rank - 2] > 4096 || dims[rank - 1] > 4096)
        return cml_refuse(c, "k out of band_part's reach and the last two dims are not "
                          "static (up to 4096) for a mask");
    int64_t R = dims[rank - 2], C = dims[rank - 1];
    uint8_t *m = mem_array(R * C > 0 ? (size_t)(R * C) : 1, 1);
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++)
            m[i * C + j] = upper ? j - i >= k : j - i <= k;
    const char *mask = cml_const(c, mil_tensor_new(MIL_BOOL, 2, (int64_t[]){R, C}, m));
    free(m);
    MilOp *op = cml_op(c, "select");
    mil_op_in(op, "cond", mask);
    mil_op_in(op, "a", x);
    mil_op_in_const(op, "b", cml_scalar(dt, 0));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule tn_lower[] = {
    {"DepthToSpace", lower_depth_space}, {"SpaceToDepth", lower_depth_space},
    {"OneHot", lower_onehot}, {"Size", lower_size}, {"Trilu", lower_trilu},
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

/* fill_like (iOS16): ConstantOfShape of Shape(ref_tensor); the output has
 * value's type (fp32 0 by default). */
static int raise_fill_like(CmRaise *r, const MilOp *op)
{
    const MilTensor *v = cmr_const(r, op, "value");
    const char *in[1] = {cmr_tnode(r, "Shape", 1, cmr_in(r, op, "ref_tensor", 0), NULL, NULL)};
    IrNode *node;
    if (cmr_simple(r, op, "ConstantOfShape", 1, in, &node) < 0)
        return -1;
    if (v && cm_dtype_to_onnx(v->dtype)) {
        int64_t d1[1] = {1};
        ir_node_set_attr(node, ir_attr_tensor("value", ir_tensor_new("value",
                                                                     cm_dtype_to_onnx(v->dtype),
                                                                     1, d1, v->data, v->nbytes)));
    }
    return 0;
}

/* random_bernoulli, random_categorical, random_normal, random_uniform. */
static int refuse_random(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: a random op, whose draws from its seed ONNX's Random* ops "
                       "cannot reproduce");
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

static int raise_onehot(CmRaise *r, const MilOp *op)
{
    const MilTensor *on = cmr_const(r, op, "on_value"), *off = cmr_const(r, op, "off_value");
    size_t w = on ? mil_dtype_size(on->dtype) : 0;
    if (!on || !off || off->dtype != on->dtype || !w || on->nbytes < w || off->nbytes < w)
        return cmr_fail(r, "on_value and off_value must be constant scalars of one type");
    uint8_t buf[16];
    memcpy(buf, off->data, w);
    memcpy(buf + w, on->data, w);
    MilTensor *v = mil_tensor_new(on->dtype, 1, (int64_t[]){2}, buf);
    const char *in[3] = {cmr_in(r, op, "indices", 0), cmr_in(r, op, "one_hot_vector_size", 0),
                         cmr_init_tensor(r, v)};
    mil_tensor_free(v);
    IrNode *node;
    if (cmr_simple(r, op, "OneHot", 3, in, &node) < 0)
        return -1;
    int64_t *a;
    size_t na;
    const MilTensor *at = cmr_const(r, op, "axis");
    if (at && cmr_ints(at, &a, &na)) {
        if (na == 1)
            ir_node_set_attr(node, ir_attr_int("axis", a[0]));
        free(a);
    }
    return 0;
}

/* band_part(lower, upper) as one or two Trilus (a negative bound keeps
 * that whole side). */
static int raise_band(CmRaise *r, const MilOp *op)
{
    int64_t b[2] = {-1, -1}, *v;
    size_t nv;
    const char *names[2] = {"lower", "upper"};
    for (int k = 0; k < 2; k++) {
        const MilTensor *t = cmr_const(r, op, names[k]);
        if (t && cmr_ints(t, &v, &nv)) {
            b[k] = nv == 1 ? v[0] : -1;
            free(v);
        }
    }
    const char *x = cmr_in(r, op, "x", 0);
    IrNode *node;
    if (b[0] < 0 && b[1] < 0)
        return cmr_simple(r, op, "Identity", 1, &x, NULL);
    if (b[1] >= 0) {
        /* j - i <= upper */
        int64_t k = b[1];
        const char *out[1] = {b[0] >= 0 ? cmr_tmp(r, "tril") : cmr_out(op, 0)};
        const char *in[2] = {x, cmr_init_i64(r, &k, 1, true)};
        if (cmr_node(r, "Trilu", 2, in, 1, out, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("upper", 0));
        x = out[0];
    }
    if (b[0] >= 0) {
        /* i - j <= lower */
        int64_t k = -b[0];
        const char *in[2] = {x, cmr_init_i64(r, &k, 1, true)};
        if (cmr_simple(r, op, "Trilu", 2, in, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("upper", 1));
    }
    return 0;
}

static const CmRaiseRule tn_raise[] = {
    {"pixel_unshuffle", raise_pixel_unshuffle},
    {"depth_to_space", raise_depth_space}, {"pixel_shuffle", raise_depth_space},
    {"space_to_depth", raise_depth_space},
    {"one_hot", raise_onehot}, {"band_part", raise_band},
    {"range_1d", raise_range},
    {"shape", raise_shape}, {"fill", raise_fill}, {"fill_like", raise_fill_like},
    {"random_bernoulli", refuse_random}, {"random_categorical", refuse_random},
    {"random_normal", refuse_random}, {"random_uniform", refuse_random},
};

CM_FAMILY(cm_family_tensor, "tensor", tn_lower, tn_raise);
