/*
 * coreml/index.c - Core ML lowering and raising of the index family:
 * Gather (gather), GatherElements (gather_along_axis), GatherND
 * (gather_nd), TopK (topk), ScatterElements and Scatter
 * (scatter_along_axis), ScatterND (scatter_nd), NonZero (non_zero and a
 * transpose: MIL gives [N, rank], ONNX [rank, N]), ReverseSequence
 * (reverse_sequence), Compress (non_zero of the condition, then gather). MIL's gathers and scatters take negative indices up
 * to iOS16 and read them as out of bounds from iOS17 on, and the target is
 * chosen after lowering: negative indices are wrapped first
 * (select(i < 0, i + size, i); nothing when the indices are constants
 * that are all non-negative).
 *
 * Refused, and why: GatherND with batch_dims (the iOS15 gather_nd has
 * none); scatters of bool or other types MIL's scatters lack (fp16, fp32,
 * int32 only); GatherND and ScatterND whose indices' last dim is not
 * static, unless the indices are constant and non-negative (the wrap needs
 * it); reductions other than none/add/mul/max/min (ONNX has no
 * other); NonZero and ReverseSequence of types MIL lacks.
 *
 * Raised besides: scatter (rows along an axis: ScatterElements of the
 * indices expanded), the scatters' mode sub (add of the negated updates);
 * iOS16's gather batch_dims with the axis right after them (GatherND),
 * gather_nd batch_dims, topk without indices. Refused: the scatters' modes
 * max and min (ONNX's are opset 18) and div; gather with batch_dims and
 * another axis; non_maximum_suppression (padded boxes, scores, indices and
 * a count, where ONNX's op gives selected indices).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

/* Binds output i of TopK node n to output i of op, or gives op a
 * temporary output there when the node leaves it out (typed as the
 * values, indices int32). */
static int ix_topk_out(CmLower *c, const IrNode *n, MilOp *op, size_t i)
{
    if (i < n->n_out && n->out[i])
        return cml_out(c, op, n, i);
    MilType t = cml_type(n->out[0]);
    cml_tmp(c, op, i ? MIL_INT32 : t.dtype, t.rank, t.dims);
    mil_type_clear(&t);
    return 0;
}

/* The end of a slice keeping the first K (MIL value k, int32 [1]) along
 * axis of a rank-`rank` value: K there, INT32_MAX elsewhere (clamped to
 * the dim at run time by MIL's python-style slicing and the import's
 * ONNX Slice alike). */
static const char *ix_first_k_end(CmLower *c, const char *k, int64_t axis, int rank)
{
    if (rank == 1)
        return k;
    int64_t big[64];
    for (int i = 0; i < rank; i++)
        big[i] = INT32_MAX;
    /* consts before their reader: the block is in order */
    const char *lo = axis > 0 ? cml_const(c, cml_ints(big, (size_t)axis)) : NULL;
    const char *hi = axis + 1 < rank ? cml_const(c, cml_ints(big, (size_t)(rank - axis - 1)))
                                     : NULL;
    MilOp *op = cml_op(c, "concat");
    if (lo)
        mil_op_in(op, "values", lo);
    mil_op_in(op, "values", k);
    if (hi)
        mil_op_in(op, "values", hi);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
    return cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){rank});
}

/* TopK whose K is computed at run time (a detector's min(C, boxes kept
 * after a NonZero)): MIL's topk takes a constant k only, so the axis is
 * argsorted, its first K indices kept (slice_by_index, whose end may be
 * computed) and the values gathered at them. Ties: argsort's order. */
static int lower_topk_dyn(CmLower *c, const IrNode *n, int64_t axis, int rank)
{
    const char *x = cml_in(c, n, 0), *k = x ? cml_in(c, n, 1) : NULL;
    if (!k)
        return -1;
    MilType t = cml_type(n->in[0]);
    MilOp *op = cml_op(c, "argsort");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "ascending", mil_tensor_scalar_bool(!cml_attr_i(n, "largest")));
    const char *order = cml_tmp(c, op, MIL_INT32, rank, t.dims);
    mil_type_clear(&t);
    const char *end = ix_first_k_end(c, k, axis, rank);
    int64_t zero[64] = {0}, one[64];
    for (int i = 0; i < rank; i++)
        one[i] = 1;
    op = cml_op(c, "slice_by_index");
    mil_op_in(op, "x", order);
    mil_op_in_const(op, "begin", cml_ints(zero, (size_t)rank));
    mil_op_in(op, "end", end);
    mil_op_in_const(op, "stride", cml_ints(one, (size_t)rank));
    if (ix_topk_out(c, n, op, 1) < 0)
        return -1;
    const char *idx = op->out[0].name;
    op = cml_op(c, "gather_along_axis");
    mil_op_in(op, "x", x);
    mil_op_in(op, "indices", idx);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    return ix_topk_out(c, n, op, 0);
}

/* TopK: a constant K (initializer, Constant or known value) gives MIL's
 * topk, whose k is const; MIL sorts always, which sorted=0 allows. A K
 * computed at run time goes through lower_topk_dyn. */
static int lower_topk(CmLower *c, const IrNode *n)
{
    int64_t *k, axis;
    size_t nk;
    int rank = cml_rank(n->in[0]);
    if (rank < 1 || rank > 64 || !cml_axis(cml_attr_i(n, "axis"), rank, &axis))
        return cml_refuse(c, "axis out of range, or rank unknown");
    if (!cml_const_ints(n, 1, &k, &nk))
        return lower_topk_dyn(c, n, axis, rank);
    int64_t kv = nk == 1 ? k[0] : -1;
    free(k);
    if (kv < 0 || kv > INT32_MAX)
        return cml_refuse(c, "K out of range");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "topk");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "k", mil_tensor_scalar_i32((int32_t)kv));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "ascending", mil_tensor_scalar_bool(!cml_attr_i(n, "largest")));
    for (size_t i = 0; i < 2; i++)
        if (ix_topk_out(c, n, op, i) < 0)
            return -1;
    return 0;
}

/* ---- scatters ------------------------------------------------------------- */

/* Whether input i of n is a constant whose values are all >= 0. */
static bool ix_nonneg_const(const IrNode *n, size_t i)
{
    int64_t *v;
    size_t len;
    if (!cml_const_ints(n, i, &v, &len))
        return false;
    bool ok = true;
    for (size_t k = 0; k < len; k++)
        ok &= v[k] >= 0;
    free(v);
    return ok;
}

/* Dims `axes` (n_axes of them) of value v (MIL name x): a const when they
 * are static, else gathered from shape(x) at run time. Rank 0 result when
 * scalar is set (one axis). */
static const char *ix_sizes(CmLower *c, const IrValue *v, const char *x, const int64_t *axes,
                            size_t n_axes, bool scalar)
{
    int64_t dims[64], got[64];
    size_t rank;
    bool known = cml_dims(v, dims, 64, &rank);
    for (size_t k = 0; known && k < n_axes; k++) {
        known = axes[k] < (int64_t)rank;
        got[k] = known ? dims[axes[k]] : 0;
    }
    if (known && n_axes <= 64)
        return cml_const(c, scalar ? mil_tensor_scalar_i32((int32_t)got[0])
                                   : cml_ints(got, n_axes));
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", x);
    int r = cml_rank(v);
    const char *sh = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){r});
    op = cml_op(c, "gather");
    mil_op_in(op, "x", sh);
    mil_op_in_const(op, "indices", scalar ? mil_tensor_scalar_i32((int32_t)axes[0])
                                          : cml_ints(axes, n_axes));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    return cml_tmp(c, op, MIL_INT32, scalar ? 0 : 1, scalar ? NULL : (int64_t[]){(int64_t)n_axes});
}

const char *cml_wrap_index(CmLower *c, const IrNode *n, size_t k, const char *i,
                           const char *size)
{
    if (ix_nonneg_const(n, k))
        return i;
    MilType t = cml_type(n->in[k]);
    MilOp *op = cml_op(c, "less");
    mil_op_in(op, "x", i);
    mil_op_in_const(op, "y", mil_tensor_scalar_i32(0));
    const char *neg = cml_tmp(c, op, MIL_BOOL, t.rank, t.dims);
    op = cml_op(c, "add");
    mil_op_in(op, "x", i);
    mil_op_in(op, "y", size);
    const char *up = cml_tmp(c, op, MIL_INT32, t.rank, t.dims);
    op = cml_op(c, "select");
    mil_op_in(op, "cond", neg);
    mil_op_in(op, "a", up);
    mil_op_in(op, "b", i);
    const char *r = cml_tmp(c, op, MIL_INT32, t.rank, t.dims);
    mil_type_clear(&t);
    return r;
}

/* Indices (ONNX input 1 of n, MIL value i) wrapped where negative, by
 * data x's dim on `axis`, or for the _nd ops by its first q dims (q: the
 * indices' last dim, which must be static then); NULL after a refusal. */
static const char *ix_wrapped(CmLower *c, const IrNode *n, const char *x, const char *i,
                              bool nd, int64_t axis)
{
    if (ix_nonneg_const(n, 1))
        return i;
    int rank = cml_rank(n->in[0]);
    int64_t q = 1, axes[64];
    if (nd) {
        const IrType *it = n->in[1]->type;
        int irank = cml_rank(n->in[1]);
        if (irank < 1 || it->shape->dims[irank - 1].kind != IR_DIM_VALUE) {
            cml_refuse(c, "the indices' last dim is not static (negative indices are "
                       "wrapped by the dims it spans)");
            return NULL;
        }
        q = it->shape->dims[irank - 1].value;
        if (q < 1 || q > rank || q > 64) {
            cml_refuse(c, "the indices' last dim %lld does not fit rank %d", (long long)q, rank);
            return NULL;
        }
    }
    for (int64_t k = 0; k < q; k++)
        axes[k] = nd ? k : axis;
    const char *size = ix_sizes(c, n->in[0], x, axes, (size_t)q, !nd);
    return cml_wrap_index(c, n, 1, i, size);
}

/* Gather, GatherElements, GatherND. MIL's gathers wrap negative indices
 * up to iOS16 and read them as out of bounds from iOS17 on: they are
 * wrapped here (the target is chosen after lowering). */
static int lower_gather(CmLower *c, const IrNode *n)
{
    bool nd = !strcmp(n->op_type, "GatherND");
    if (nd && cml_attr_i(n, "batch_dims"))
        return cml_refuse(c, "batch_dims is not lowered");
    int64_t axis = 0;
    if (!nd && !cml_axis(cml_attr_i(n, "axis"), cml_rank(n->in[0]), &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0), *i = x ? cml_in(c, n, 1) : NULL;
    if (i)
        i = ix_wrapped(c, n, x, i, nd, axis);
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

static const CmMap ix_modes[] = {
    {"none", "update"}, {"add", "add"}, {"mul", "mul"}, {"max", "max"}, {"min", "min"},
};

/* ScatterElements, Scatter (scatter_along_axis) and ScatterND (scatter_nd). */
static int lower_scatter(CmLower *c, const IrNode *n)
{
    bool nd = !strcmp(n->op_type, "ScatterND");
    char buf[16];
    const char *red = cml_attr_s(n, "reduction", buf, sizeof buf);
    const CmMap *mode = cm_map_onnx(ix_modes, sizeof ix_modes / sizeof ix_modes[0], red);
    if (!mode)
        return cml_refuse(c, "reduction '%s' unknown", red);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32)
        return cml_refuse(c, "MIL's scatters take fp16, fp32 and int32 data only");
    int rank = cml_rank(n->in[0]);
    int64_t axis = 0;
    if (!nd && !cml_axis(cml_attr_i(n, "axis"), rank, &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    const char *x = cml_in(c, n, 0), *i = x ? cml_in(c, n, 1) : NULL;
    const char *u = i ? cml_in(c, n, 2) : NULL;
    if (u)
        i = ix_wrapped(c, n, x, i, nd, axis);
    if (!u || !i)
        return -1;
    MilOp *op = cml_op(c, nd ? "scatter_nd" : "scatter_along_axis");
    mil_op_in(op, "data", x);
    mil_op_in(op, "indices", i);
    mil_op_in(op, "updates", u);
    if (!nd)
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "mode", mil_tensor_string(mode->mil));
    return cml_out(c, op, n, 0);
}

/* NonZero: non_zero gives [N, rank]; ONNX wants [rank, N]. */
static int lower_nonzero(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32 && dt != MIL_BOOL)
        return cml_refuse(c, "MIL's non_zero takes fp16, fp32, int32 and bool only");
    int rank = cml_rank(n->in[0]);
    if (rank < 1)
        return cml_refuse(c, "rank unknown or 0 (ONNX gives a scalar's [0, N] or [0, 0]; "
                          "MIL's non_zero is not defined for scalars)");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "non_zero");
    mil_op_in(op, "x", x);
    const char *nz = cml_tmp(c, op, MIL_INT32, 2, (int64_t[]){-1, rank});
    op = cml_op(c, "transpose");
    mil_op_in(op, "x", nz);
    mil_op_in_const(op, "perm", mil_tensor_ints((int32_t[]){1, 0}, 2));
    return cml_out(c, op, n, 0);
}

/* Compress: gather of x (flattened when axis is absent) at the indices
 * non_zero finds in the condition ([N, 1] reshaped to [N]). A condition
 * shorter than the axis selects among its own length, as ONNX says. */
static int lower_compress(CmLower *c, const IrNode *n)
{
    int rank = cml_rank(n->in[0]);
    bool has_axis = ir_node_attr(n, "axis") != NULL;
    int64_t axis = 0;
    if (rank < 0 || (has_axis && !cml_axis(cml_attr_i(n, "axis"), rank, &axis)))
        return cml_refuse(c, "axis out of range or rank unknown");
    if (cml_rank(n->in[1]) != 1)
        return cml_refuse(c, "the condition is not 1-D");
    const char *x = cml_in(c, n, 0), *cond = x ? cml_in(c, n, 1) : NULL;
    if (!cond)
        return -1;
    MilType xt = cml_type(n->in[0]);
    int32_t dt = xt.dtype;
    mil_type_clear(&xt);
    if (!has_axis && rank != 1) {
        MilOp *op = cml_op(c, "reshape");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "shape", mil_tensor_ints((int32_t[]){-1}, 1));
        x = cml_tmp(c, op, dt, 1, NULL);
    }
    MilOp *op = cml_op(c, "non_zero");
    mil_op_in(op, "x", cond);
    const char *nz = cml_tmp(c, op, MIL_INT32, 2, (int64_t[]){-1, 1});
    op = cml_op(c, "reshape");
    mil_op_in(op, "x", nz);
    mil_op_in_const(op, "shape", mil_tensor_ints((int32_t[]){-1}, 1));
    const char *idx = cml_tmp(c, op, MIL_INT32, 1, NULL);
    op = cml_op(c, "gather");
    mil_op_in(op, "x", x);
    mil_op_in(op, "indices", idx);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    return cml_out(c, op, n, 0);
}

static int lower_revseq(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32 && dt != MIL_BOOL)
        return cml_refuse(c, "MIL's reverse_sequence takes fp16, fp32, int32 and bool only");
    int rank = cml_rank(n->in[0]);
    int64_t ta, ba;
    if (!cml_axis(cml_attr_i(n, "time_axis"), rank, &ta) ||
        !cml_axis(cml_attr_i(n, "batch_axis"), rank, &ba))
        return cml_refuse(c, "axes out of range or rank unknown");
    const char *x = cml_in(c, n, 0), *l = x ? cml_in(c, n, 1) : NULL;
    if (!l)
        return -1;
    MilOp *op = cml_op(c, "reverse_sequence");
    mil_op_in(op, "x", x);
    mil_op_in(op, "lengths", l);
    mil_op_in_const(op, "seq_axis", mil_tensor_scalar_i32((int32_t)ta));
    mil_op_in_const(op, "batch_axis", mil_tensor_scalar_i32((int32_t)ba));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule ix_lower[] = {
    {"ScatterElements", lower_scatter}, {"Scatter", lower_scatter},
    {"ScatterND", lower_scatter}, {"NonZero", lower_nonzero},
    {"ReverseSequence", lower_revseq}, {"Compress", lower_compress},
    {"TopK", lower_topk},
    {"Gather", lower_gather}, {"GatherElements", lower_gather}, {"GatherND", lower_gather},
};

/* A Cast of `x` to int64 (ONNX's ScatterND and ReverseSequence take
 * int64 indices and lengths); returns the new name. */
static const char *ix_i64(CmRaise *r, const char *x)
{
    const char *y = cmr_tmp(r, "i64"), *in[1] = {x}, *out[1] = {y};
    IrNode *node;
    if (!x || cmr_node(r, "Cast", 1, in, 1, out, &node) < 0)
        return NULL;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT64));
    return y;
}

/* gather with iOS16's batch_dims b: x[b.., indices[b.., i..], rest..].
 * With the axis at b it is GatherND of the indices unsqueezed last, with
 * batch_dims b; other axes are refused. */
static int ix_gather_batch(CmRaise *r, const MilOp *op, int64_t b)
{
    const MilInput *xi = mil_op_input(op, "x");
    const MilArg *xa = xi && xi->n_args ? &xi->args[0] : NULL;
    int rank = !xa ? -1 : xa->value ? xa->value->rank : cmr_rank(r, xa->name);
    const MilTensor *at = cmr_const(r, op, "axis");
    int64_t *v, axis = 0, last = -1;
    size_t nv;
    if (at && cmr_ints(at, &v, &nv)) {
        axis = nv == 1 ? v[0] : axis;
        free(v);
    }
    if (rank > 0 && axis < 0)
        axis += rank;
    if (rank < 1 || b < 0 || axis != b)
        return cmr_fail(r, "batch_dims %lld with axis %lld: only the axis right after the "
                           "batch dims is raised (GatherND)", (long long)b, (long long)axis);
    const char *idx = ix_i64(r, cmr_in(r, op, "indices", 0));
    const char *in[2] = {cmr_in(r, op, "x", 0),
                         cmr_tnode(r, "Unsqueeze", 2, idx, cmr_init_i64(r, &last, 1, false),
                                   NULL)};
    IrNode *node;
    if (cmr_simple(r, op, "GatherND", 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("batch_dims", b));
    return 0;
}

static int raise_gather(CmRaise *r, const MilOp *op)
{
    bool nd = !strcmp(op->type, "gather_nd");
    const MilTensor *bt = cmr_const(r, op, "batch_dims");
    int64_t *bv, b = 0;
    size_t nbv;
    if (bt && cmr_ints(bt, &bv, &nbv)) {
        b = nbv == 1 ? bv[0] : 0;
        free(bv);
    }
    if (b && !nd)
        return ix_gather_batch(r, op, b);
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
    if (nd && b)
        ir_node_set_attr(node, ir_attr_int("batch_dims", b));
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
    if (op->n_out != 2 && (op->n_out != 1 || cmr_bool(r, op, "return_indices", true)))
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
    if (op->n_out == 1)
        return 0; /* iOS16's return_indices false */
    const char *ci[1] = {i64}, *co[1] = {op->out[1].name};
    if (cmr_node(r, "Cast", 1, ci, 1, co, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT32));
    return 0;
}

/* argsort: TopK of the whole axis (K read from Shape), its indices cast
 * to the int32 MIL gives. */
static int raise_argsort(CmRaise *r, const MilOp *op)
{
    const MilTensor *at = cmr_const(r, op, "axis");
    int64_t *v, axis = -1;
    size_t nv;
    if (at && cmr_ints(at, &v, &nv)) {
        axis = nv == 1 ? v[0] : axis;
        free(v);
    }
    const char *x = cmr_in(r, op, "x", 0);
    const char *shape = cmr_tmp(r, "shape"), *k = cmr_tmp(r, "k");
    const char *vals = cmr_tmp(r, "sorted"), *i64 = cmr_tmp(r, "order64");
    const char *si[1] = {x}, *so[1] = {shape};
    const char *gi[2] = {shape, cmr_init_i64(r, &axis, 1, false)}, *go[1] = {k};
    const char *ti[2] = {x, k}, *to[2] = {vals, i64};
    IrNode *node;
    if (cmr_node(r, "Shape", 1, si, 1, so, NULL) < 0 ||
        cmr_node(r, "Gather", 2, gi, 1, go, NULL) < 0 ||
        cmr_node(r, "TopK", 2, ti, 2, to, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("axis", axis));
    ir_node_set_attr(node, ir_attr_int("largest", !cmr_bool(r, op, "ascending", false)));
    const char *ci[1] = {i64};
    if (cmr_simple(r, op, "Cast", 1, ci, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT32));
    return 0;
}

/* scatter's indices [C] along axis (of data's rank, from the output's
 * type) as ScatterElements reads them: reshaped to [1, .., C, .., 1] and
 * expanded to updates' shape (data.shape[:axis] + [C] + data.shape[axis+1:]). */
static const char *ix_scatter_rows(CmRaise *r, const MilOp *op, const char *idx,
                                   const char *updates)
{
    int rank = op->n_out ? op->out[0].type.rank : -1;
    const MilTensor *at = cmr_const(r, op, "axis");
    int64_t *v, axis = 0, shape[16];
    size_t nv;
    if (at && cmr_ints(at, &v, &nv)) {
        axis = nv == 1 ? v[0] : rank;
        free(v);
    }
    if (rank < 1 || rank > 16 || axis < -rank || axis >= rank) {
        cmr_fail(r, "axis out of range or the rank of data unknown");
        r->in_failed = true;
        return NULL;
    }
    axis = axis < 0 ? axis + rank : axis;
    for (int i = 0; i < rank; i++)
        shape[i] = i == axis ? -1 : 1;
    const char *col = cmr_tnode(r, "Reshape", 2, idx, cmr_init_i64(r, shape, (size_t)rank, false),
                                NULL);
    return cmr_tnode(r, "Expand", 2, col, cmr_tnode(r, "Shape", 1, updates, NULL, NULL), NULL);
}

/* scatter (ScatterElements of the indices expanded to rows),
 * scatter_along_axis (ScatterElements), scatter_nd (ScatterND). MIL's
 * modes update/add/mul are ONNX's reductions none/add/mul; sub adds the
 * negated updates (a - b is a + -b exactly); max, min (opset 18) and div
 * have none at opset 17. */
static int raise_scatter(CmRaise *r, const MilOp *op)
{
    bool nd = !strcmp(op->type, "scatter_nd"), rows = !strcmp(op->type, "scatter");
    /* MIL's default mode is add (the code's; the docstrings say update) */
    const char *m = cmr_string(cmr_const(r, op, "mode"));
    bool sub = m && !strcmp(m, "sub");
    const CmMap *mode = cm_map_mil(ix_modes, sizeof ix_modes / sizeof ix_modes[0],
                                   sub ? "add" : m ? m : "add");
    if (!mode || !strcmp(mode->onnx, "max") || !strcmp(mode->onnx, "min"))
        return cmr_fail(r, "mode '%s' has no ONNX reduction at opset %d", m ? m : "add",
                        CM_ONNX_OPSET);
    const char *in[3] = {cmr_in(r, op, "data", 0), cmr_in(r, op, "indices", 0),
                         cmr_in(r, op, "updates", 0)};
    if (rows)
        in[1] = ix_scatter_rows(r, op, in[1], in[2]);
    if (sub)
        in[2] = cmr_tnode(r, "Neg", 1, in[2], NULL, NULL);
    if (nd && !(in[1] = ix_i64(r, in[1])))
        return cmr_fail(r, "indices missing");
    IrNode *node;
    if (cmr_simple(r, op, nd ? "ScatterND" : "ScatterElements", 3, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("reduction", mode->onnx));
    int64_t *v;
    size_t nv;
    const MilTensor *a = cmr_const(r, op, "axis");
    if (!nd && a && cmr_ints(a, &v, &nv)) {
        if (nv == 1)
            ir_node_set_attr(node, ir_attr_int("axis", v[0]));
        free(v);
    }
    return 0;
}

/* non_zero: ONNX's NonZero transposed, as int32. */
static int raise_nonzero(CmRaise *r, const MilOp *op)
{
    const char *a = cmr_tmp(r, "nonzero"), *b = cmr_tmp(r, "nonzero_t");
    const char *in[1] = {cmr_in(r, op, "x", 0)}, *out[1] = {a};
    IrNode *node;
    if (cmr_node(r, "NonZero", 1, in, 1, out, NULL) < 0)
        return -1;
    in[0] = a;
    out[0] = b;
    if (cmr_node(r, "Transpose", 1, in, 1, out, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_ints("perm", 2, (int64_t[]){1, 0}));
    in[0] = b;
    if (cmr_simple(r, op, "Cast", 1, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT32));
    return 0;
}

static int raise_revseq(CmRaise *r, const MilOp *op)
{
    const char *in[2] = {cmr_in(r, op, "x", 0), ix_i64(r, cmr_in(r, op, "lengths", 0))};
    IrNode *node;
    if (cmr_simple(r, op, "ReverseSequence", 2, in, &node) < 0)
        return -1;
    const char *names[2][2] = {{"seq_axis", "time_axis"}, {"batch_axis", "batch_axis"}};
    for (int k = 0; k < 2; k++) {
        int64_t *v;
        size_t nv;
        const MilTensor *a = cmr_const(r, op, names[k][0]);
        if (!a || !cmr_ints(a, &v, &nv))
            return cmr_fail(r, "%s is not constant", names[k][0]);
        if (nv == 1)
            ir_node_set_attr(node, ir_attr_int(names[k][1], v[0]));
        free(v);
    }
    return 0;
}

static int refuse_nms(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: it gives boxes, scores and indices padded to max_boxes "
                       "and a count, where ONNX's NonMaxSuppression gives selected indices; "
                       "its padding and order are not defined");
}

static const CmRaiseRule ix_raise[] = {
    {"scatter", raise_scatter}, {"non_maximum_suppression", refuse_nms},
    {"scatter_along_axis", raise_scatter}, {"scatter_nd", raise_scatter},
    {"non_zero", raise_nonzero}, {"reverse_sequence", raise_revseq},
    {"topk", raise_topk}, {"argsort", raise_argsort},
    {"gather", raise_gather}, {"gather_along_axis", raise_gather}, {"gather_nd", raise_gather},
};

CM_FAMILY(cm_family_index, "index", ix_lower, ix_raise);
