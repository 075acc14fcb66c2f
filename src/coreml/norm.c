/*
 * coreml/norm.c - Core ML lowering and raising of the norm family:
 * BatchNormalization (batch_norm), InstanceNormalization (instance_norm),
 * LayerNormalization (layer_norm over the trailing axes; its Mean and
 * InvStdDev outputs by reduce_mean and rsqrt).
 *
 * Refused, and why: BatchNormalization in training mode or with its
 * running-statistics outputs (MIL has no training mode); non-constant statistics, scales and biases (MIL
 * requires them const); a LayerNormalization scale whose element count is
 * not the normalized dims' (MIL's gamma has exactly those dims), or of
 * normalized dims that are unknown (the dims before them may be).
 *
 * LRN is local_response_norm (MIL's formula is ONNX's: x / (k + alpha /
 * size * sum of squares)^beta); refused for an even size (ONNX's window
 * then reaches one channel further up than down; MIL does not say which
 * side its even window favours, and torch's, which coremltools maps to it,
 * favours the other) and ranks other than 3 and 4 (MIL's limit).
 * LpNormalization is decomposed: x / max(reduce_l1_norm or reduce_l2_norm
 * over the axis, the type's smallest normal) (MIL's l2_norm normalizes the
 * last three dims together and adds an epsilon: not ONNX's one axis). The
 * max keeps a zero vector zero, as ONNX's reference does; a vector whose
 * norm is below that smallest normal is divided by it instead.
 * MeanVarianceNormalization is decomposed as its ONNX function:
 * (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) over its axes.
 *
 * The import raises l2_norm as its formula, x / sqrt(sum of squares over
 * the last three dims + epsilon), and instance_norm without gamma or beta
 * with ones and zeros per channel.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

#define NM_MAX_RANK 16

/* A const input as a MIL tensor reshaped to dims (NULL dims: as is). */
static MilTensor *nm_const(CmLower *c, const IrNode *n, size_t i, const int64_t *dims,
                           size_t rank)
{
    const IrTensor *t = cml_const_tensor(n, i);
    if (!t) {
        cml_refuse(c, "input %zu is not a constant (MIL requires it const)", i);
        return NULL;
    }
    MilTensor *m = cml_tensor(c, t);
    if (!m || !dims)
        return m;
    uint64_t have, want = 1;
    for (size_t k = 0; k < rank; k++)
        want *= (uint64_t)dims[k];
    if (!mil_tensor_numel(m, &have) || have != want) {
        mil_tensor_free(m);
        cml_refuse(c, "input %zu has %llu elements, the normalized dims %llu", i,
                   (unsigned long long)have, (unsigned long long)want);
        return NULL;
    }
    free(m->dims);
    m->dims = mem_array(rank ? rank : 1, sizeof *m->dims);
    memcpy(m->dims, dims, rank * sizeof *dims);
    m->rank = (int)rank;
    return m;
}

static int lower_batch_norm(CmLower *c, const IrNode *n)
{
    if (cml_attr_i(n, "training_mode") || (n->n_out > 1 && (n->out[1] || n->out[2])))
        return cml_refuse(c, "training mode and running statistics have no MIL equivalent");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilTensor *p[4] = {nm_const(c, n, 3, NULL, 0), NULL, NULL, NULL};
    for (size_t i = 1; p[i - 1] && i < 4; i++)
        p[i] = nm_const(c, n, i == 1 ? 4 : i == 2 ? 1 : 2, NULL, 0);
    if (!p[3]) {
        for (size_t i = 0; i < 4; i++)
            mil_tensor_free(p[i]);
        return -1;
    }
    MilOp *op = cml_op(c, "batch_norm");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "mean", p[0]);
    mil_op_in_const(op, "variance", p[1]);
    mil_op_in_const(op, "gamma", p[2]);
    mil_op_in_const(op, "beta", p[3]);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    mil_op_in_const(op, "epsilon", cml_scalar(dt, cml_attr_f(n, "epsilon")));
    return cml_out(c, op, n, 0);
}

static int lower_instance_norm(CmLower *c, const IrNode *n)
{
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilTensor *g = nm_const(c, n, 1, NULL, 0), *b = g ? nm_const(c, n, 2, NULL, 0) : NULL;
    if (!b) {
        mil_tensor_free(g);
        return -1;
    }
    MilOp *op = cml_op(c, "instance_norm");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "gamma", g);
    mil_op_in_const(op, "beta", b);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    mil_op_in_const(op, "epsilon", cml_scalar(dt, cml_attr_f(n, "epsilon")));
    return cml_out(c, op, n, 0);
}

/* LayerNormalization's Mean and InvStdDev outputs, computed beside the
 * layer_norm: reduce_mean over the normalized axes (kept), and
 * rsqrt(mean((x - mean)^2), epsilon) (MIL's rsqrt adds its epsilon). */
static int nm_stats(CmLower *c, const IrNode *n, const char *x, const int64_t *axes, size_t na,
                    float eps)
{
    bool want_mean = n->n_out > 1 && n->out[1], want_inv = n->n_out > 2 && n->out[2];
    if (!want_mean && !want_inv)
        return 0;
    if (cml_elem(n->in[0]) != IR_FLOAT)
        return cml_refuse(c, "Mean/InvStdDev of a non-float32 input (computed in float32)");
    MilType t = cml_type(n->out[want_mean ? 1 : 2]), tx = cml_type(n->in[0]);
    MilOp *op = cml_op(c, "reduce_mean");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axes", cml_ints(axes, na));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(true));
    const char *mean = NULL;
    int rc = 0;
    if (want_mean) {
        rc = cml_out(c, op, n, 1);
        mean = op->out[op->n_out - 1].name;
    } else {
        mean = cml_tmp(c, op, t.dtype, t.rank, t.dims);
    }
    if (rc == 0 && want_inv) {
        op = cml_op(c, "sub");
        mil_op_in(op, "x", x);
        mil_op_in(op, "y", mean);
        const char *d = cml_tmp(c, op, tx.dtype, tx.rank, tx.dims);
        op = cml_op(c, "mul");
        mil_op_in(op, "x", d);
        mil_op_in(op, "y", d);
        const char *sq = cml_tmp(c, op, tx.dtype, tx.rank, tx.dims);
        op = cml_op(c, "reduce_mean");
        mil_op_in(op, "x", sq);
        mil_op_in_const(op, "axes", cml_ints(axes, na));
        mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(true));
        const char *var = cml_tmp(c, op, t.dtype, t.rank, t.dims);
        op = cml_op(c, "rsqrt");
        mil_op_in(op, "x", var);
        mil_op_in_const(op, "epsilon", mil_tensor_scalar_f32(eps));
        rc = cml_out(c, op, n, 2);
    }
    mil_type_clear(&t);
    mil_type_clear(&tx);
    return rc;
}

static int lower_layer_norm(CmLower *c, const IrNode *n)
{
    int64_t dims[NM_MAX_RANK], axis;
    size_t rank;
    if (!cml_dims_open(n->in[0], dims, NM_MAX_RANK, &rank) ||
        !cml_axis(cml_attr_i(n, "axis"), (int)rank, &axis))
        return cml_refuse(c, "input rank unknown or axis out of range");
    /* gamma and beta are consts of the normalized dims; the others may
     * be unknown */
    for (size_t i = (size_t)axis; i < rank; i++)
        if (dims[i] < 0)
            return cml_refuse(c, "a normalized dim (axis %zu) is unknown", i);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    size_t nn = rank - (size_t)axis;
    MilTensor *g = nm_const(c, n, 1, dims + axis, nn);
    MilTensor *b = g && cml_has(n, 2) ? nm_const(c, n, 2, dims + axis, nn) : NULL;
    if (!g || (cml_has(n, 2) && !b)) {
        mil_tensor_free(g);
        return -1;
    }
    int64_t axes[NM_MAX_RANK];
    for (size_t i = 0; i < nn; i++)
        axes[i] = axis + (int64_t)i;
    MilOp *op = cml_op(c, "layer_norm");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axes", cml_ints(axes, nn));
    mil_op_in_const(op, "gamma", g);
    if (b)
        mil_op_in_const(op, "beta", b);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    float eps = cml_attr_f(n, "epsilon");
    mil_op_in_const(op, "epsilon", cml_scalar(dt, eps));
    if (cml_out(c, op, n, 0) < 0)
        return -1;
    return nm_stats(c, n, x, axes, nn, eps);
}

/* A binary MIL op on x and y (a name, or a const when y is NULL and yc
 * given) with an output like `t`; returns the output's name. */
static const char *nm_bin(CmLower *c, const char *type, const char *x, const char *y,
                          MilTensor *yc, const MilType *t)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    if (y)
        mil_op_in(op, "y", y);
    else
        mil_op_in_const(op, "y", yc);
    return cml_tmp(c, op, t->dtype, t->rank, t->dims);
}

/* reduce op over axes, dims kept; *rt gets its output type (dims in buf
 * when every dim of t is static, else unknown). */
static const char *nm_reduce(CmLower *c, const char *type, const char *x, const int64_t *axes,
                             size_t na, const MilType *t, MilType *rt, int64_t *buf)
{
    *rt = (MilType){.dtype = t->dtype, .rank = t->rank};
    bool stat = t->dims && t->rank >= 0 && t->rank <= NM_MAX_RANK;
    for (int i = 0; stat && i < t->rank; i++) {
        stat = t->dims[i] >= 0 && !(t->dim_names && t->dim_names[i]);
        buf[i] = t->dims[i];
    }
    for (size_t i = 0; stat && i < na; i++)
        buf[axes[i]] = 1;
    rt->dims = stat ? buf : NULL;
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axes", cml_ints(axes, na));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(true));
    return cml_tmp(c, op, rt->dtype, rt->rank, rt->dims);
}

static int lower_lrn(CmLower *c, const IrNode *n)
{
    int rank = cml_rank(n->in[0]);
    int64_t size = cml_attr_i(n, "size");
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (rank != 3 && rank != 4)
        return cml_refuse(c, "input rank %d: local_response_norm takes rank 3 or 4", rank);
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "local_response_norm takes fp16 and fp32 only");
    if (size < 1 || size > INT32_MAX)
        return cml_refuse(c, "size %lld missing or out of range", (long long)size);
    if (size % 2 == 0)
        return cml_refuse(c, "size %lld: only odd sizes have a centred window in both ONNX "
                             "and MIL", (long long)size);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "local_response_norm");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "size", mil_tensor_scalar_i32((int32_t)size));
    mil_op_in_const(op, "alpha", cml_scalar(dt, cml_attr_f(n, "alpha")));
    mil_op_in_const(op, "beta", cml_scalar(dt, cml_attr_f(n, "beta")));
    mil_op_in_const(op, "k", cml_scalar(dt, cml_attr_f(n, "bias")));
    return cml_out(c, op, n, 0);
}

static int lower_lp_norm(CmLower *c, const IrNode *n)
{
    int rank = cml_rank(n->in[0]);
    int64_t p = cml_attr_i(n, "p"), axis;
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (p != 1 && p != 2)
        return cml_refuse(c, "p %lld: ONNX defines 1 and 2 only", (long long)p);
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "a non-float input");
    if (!cml_axis(cml_attr_i(n, "axis"), rank, &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilType t = cml_type(n->in[0]);
    MilType rt;
    int64_t rd[NM_MAX_RANK];
    const char *norm = nm_reduce(c, p == 1 ? "reduce_l1_norm" : "reduce_l2_norm", x, &axis, 1,
                                 &t, &rt, rd);
    /* the smallest normal number: 2^-126 (fp32), 2^-14 (fp16) */
    double tiny = dt == MIL_FP32 ? 1.1754943508222875e-38 : 6.103515625e-05;
    const char *den = nm_bin(c, "maximum", norm, NULL, cml_scalar(dt, tiny), &rt);
    mil_type_clear(&t);
    MilOp *op = cml_op(c, "real_div");
    mil_op_in(op, "x", x);
    mil_op_in(op, "y", den);
    return cml_out(c, op, n, 0);
}

static int lower_mvn(CmLower *c, const IrNode *n)
{
    int rank = cml_rank(n->in[0]);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "a non-float input");
    int64_t axes[NM_MAX_RANK] = {0, 2, 3};
    size_t na = 3;
    const int64_t *v;
    long nv = cml_attr_ints(n, "axes", &v);
    if (nv > NM_MAX_RANK)
        return cml_refuse(c, "too many axes");
    if (nv >= 0)
        na = (size_t)nv;
    for (size_t i = 0; i < na; i++)
        if (!cml_axis(nv >= 0 ? v[i] : axes[i], rank, &axes[i]))
            return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilType t = cml_type(n->in[0]);
    MilType rt;
    int64_t rd[NM_MAX_RANK];
    const char *mean = nm_reduce(c, "reduce_mean", x, axes, na, &t, &rt, rd);
    const char *d = nm_bin(c, "sub", x, mean, NULL, &t);
    const char *sq = nm_bin(c, "mul", d, d, NULL, &t);
    const char *var = nm_reduce(c, "reduce_mean", sq, axes, na, &t, &rt, rd);
    MilOp *op = cml_op(c, "sqrt");
    mil_op_in(op, "x", var);
    const char *sd = cml_tmp(c, op, rt.dtype, rt.rank, rt.dims);
    const char *den = nm_bin(c, "add", sd, NULL, cml_scalar(dt, 1e-9), &rt);
    mil_type_clear(&t);
    op = cml_op(c, "real_div");
    mil_op_in(op, "x", d);
    mil_op_in(op, "y", den);
    return cml_out(c, op, n, 0);
}

static const CmLowerRule nm_lower[] = {
    {"LRN", lower_lrn},
    {"LpNormalization", lower_lp_norm},
    {"MeanVarianceNormalization", lower_mvn},
    {"BatchNormalization", lower_batch_norm},
    {"InstanceNormalization", lower_instance_norm},
    {"LayerNormalization", lower_layer_norm},
};

/* ---- raising -------------------------------------------------------------------- */

/* A tensor of `count` copies of v, of dtype like `like`, as an initializer. */
static const char *nm_fill(CmRaise *r, const MilTensor *like, float v)
{
    uint64_t n;
    if (!like || !mil_tensor_numel(like, &n) || n > (1u << 24))
        return NULL;
    float *f = mem_array(n ? (size_t)n : 1, sizeof *f);
    for (uint64_t i = 0; i < n; i++)
        f[i] = v;
    const char *name = cmr_init_f32(r, f, (size_t)n, false);
    free(f);
    return name;
}

static void nm_epsilon(CmRaise *r, const MilOp *op, IrNode *node)
{
    double e;
    if (cmr_float(cmr_const(r, op, "epsilon"), &e))
        ir_node_set_attr(node, ir_attr_float("epsilon", (float)e));
}

static int raise_batch_norm(CmRaise *r, const MilOp *op)
{
    const MilTensor *mean = cmr_const(r, op, "mean");
    const char *g = cmr_in(r, op, "gamma", 0), *b = cmr_in(r, op, "beta", 0);
    if (!g)
        g = nm_fill(r, mean, 1);
    if (!b)
        b = nm_fill(r, mean, 0);
    const char *in[5] = {cmr_in(r, op, "x", 0), g, b, cmr_in(r, op, "mean", 0),
                         cmr_in(r, op, "variance", 0)};
    IrNode *node;
    if (cmr_simple(r, op, "BatchNormalization", 5, in, &node) < 0)
        return -1;
    nm_epsilon(r, op, node);
    return 0;
}

/* A [C] initializer of v for an absent gamma or beta of a per-channel
 * norm, C being the output's static dim 1; NULL with err. */
static const char *nm_channels(CmRaise *r, const MilOp *op, float v)
{
    const MilType *t = op->n_out ? &op->out[0].type : NULL;
    if (!t || t->rank < 2 || t->dims[1] < 1 || t->dims[1] > (1 << 24) ||
        (t->dim_names && t->dim_names[1])) {
        cmr_fail(r, "gamma or beta absent and the channel count not static");
        r->in_failed = true;
        return NULL;
    }
    int64_t dims[1] = {t->dims[1]};
    MilTensor *m = mil_tensor_new(MIL_FP32, 1, dims, NULL);
    for (int64_t i = 0; i < dims[0]; i++)
        memcpy(m->data + 4 * i, &v, 4);
    const char *name = cmr_init_tensor(r, m);
    mil_tensor_free(m);
    if (name && t->dtype != MIL_FP32) {
        IrNode *node;
        name = cmr_tnode(r, "Cast", 1, name, NULL, &node);
        if (name)
            ir_node_set_attr(node, ir_attr_int("to", cm_dtype_to_onnx(t->dtype)));
    }
    return name;
}

static int raise_instance_norm(CmRaise *r, const MilOp *op)
{
    const char *g = cmr_in(r, op, "gamma", 0), *b = cmr_in(r, op, "beta", 0);
    const char *in[3] = {cmr_in(r, op, "x", 0), g ? g : nm_channels(r, op, 1),
                         b ? b : nm_channels(r, op, 0)};
    IrNode *node;
    if (cmr_simple(r, op, "InstanceNormalization", 3, in, &node) < 0)
        return -1;
    nm_epsilon(r, op, node);
    return 0;
}

/* layer_norm over trailing contiguous axes; the rank from the output type. */
/* Ones of x's dims from `axis` on, in x's type: ONNX's LayerNormalization
 * needs the scale MIL's layer_norm may leave out (coremltools does for
 * torch's elementwise_affine=False). */
static const char *nm_ones_from(CmRaise *r, const char *x, int64_t axis)
{
    IrNode *shape, *fill;
    const char *s = cmr_tnode(r, "Shape", 1, x, NULL, &shape);
    if (!s)
        return NULL;
    ir_node_set_attr(shape, ir_attr_int("start", axis));
    const char *ones = cmr_tnode(r, "ConstantOfShape", 1, s, NULL, &fill);
    if (!ones)
        return NULL;
    float one = 1.0f;
    IrTensor *t = ir_tensor_new("value", IR_FLOAT, 1, (int64_t[]){1}, &one, sizeof one);
    ir_node_set_attr(fill, ir_attr_tensor("value", t));
    return cmr_tnode(r, "CastLike", 2, ones, x, NULL);
}

static int raise_layer_norm(CmRaise *r, const MilOp *op)
{
    int rank = op->n_out ? op->out[0].type.rank : -1;
    const MilTensor *at = cmr_const(r, op, "axes");
    int64_t *ax;
    size_t na;
    if (!at || rank < 1 || !cmr_ints(at, &ax, &na))
        return cmr_fail(r, "axes or rank unknown");
    if (!na) {
        free(ax);
        return cmr_fail(r, "axes empty");
    }
    bool ok = true;
    for (size_t i = 0; i < na; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
        ok &= a == rank - (int64_t)na + (int64_t)i;
    }
    int64_t axis = rank - (int64_t)na;
    free(ax);
    if (!ok)
        return cmr_fail(r, "axes are not the trailing dims (ONNX normalizes from an axis on)");
    const char *in[3] = {cmr_in(r, op, "x", 0), NULL, cmr_in(r, op, "beta", 0)};
    in[1] = mil_op_input(op, "gamma") ? cmr_in(r, op, "gamma", 0) : nm_ones_from(r, in[0], axis);
    IrNode *node;
    if (cmr_simple(r, op, "LayerNormalization", in[2] ? 3 : 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("axis", axis));
    nm_epsilon(r, op, node);
    return 0;
}

static int raise_lrn(CmRaise *r, const MilOp *op)
{
    const MilTensor *st = cmr_const(r, op, "size");
    int64_t *v;
    size_t nv;
    if (!st || !cmr_ints(st, &v, &nv))
        return cmr_fail(r, "size is not a constant");
    int64_t size = nv == 1 ? v[0] : 0;
    free(v);
    if (size < 1)
        return cmr_fail(r, "size is not a positive scalar");
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    if (cmr_simple(r, op, "LRN", 1, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("size", size));
    static const char *const names[3][2] = {{"alpha", "alpha"}, {"beta", "beta"},
                                            {"k", "bias"}};
    for (size_t i = 0; i < 3; i++) {
        double f;
        const MilTensor *t = cmr_const(r, op, names[i][0]);
        if (t && !cmr_float(t, &f))
            return cmr_fail(r, "%s is not a float constant", names[i][0]);
        if (t)
            ir_node_set_attr(node, ir_attr_float(names[i][1], (float)f));
    }
    return 0;
}

/* l2_norm: x / sqrt(sum of squares over the last three dims + epsilon),
 * epsilon 1e-6 by default (the dims before are batch). */
static int raise_l2_norm(CmRaise *r, const MilOp *op)
{
    const MilTensor *e = cmr_const(r, op, "epsilon");
    double eps = 1e-6;
    int64_t axes[3] = {-3, -2, -1};
    if (e && !cmr_float(e, &eps))
        return cmr_fail(r, "epsilon is not a float scalar");
    const char *x = cmr_in(r, op, "x", 0);
    IrNode *node;
    const char *ss = cmr_tnode(r, "ReduceSumSquare", 1, x, NULL, &node);
    if (!ss)
        return -1;
    ir_node_set_attr(node, ir_attr_ints("axes", 3, axes));
    ir_node_set_attr(node, ir_attr_int("keepdims", 1));
    const char *in[2] = {x, cmr_tnode(r, "Sqrt", 1,
                                      cmr_tnode(r, "Add", 2, ss, cmr_init_scalar(r, op, eps),
                                                NULL), NULL, NULL)};
    return cmr_simple(r, op, "Div", 2, in, NULL);
}

static const CmRaiseRule nm_raise[] = {
    {"l2_norm", raise_l2_norm},
    {"local_response_norm", raise_lrn},
    {"batch_norm", raise_batch_norm},
    {"instance_norm", raise_instance_norm},
    {"layer_norm", raise_layer_norm},
};

CM_FAMILY(cm_family_norm, "norm", nm_lower, nm_raise);
