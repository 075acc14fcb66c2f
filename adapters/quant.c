/*
 * quant.c - adapters of the quantization ops: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul,
 * MatMulInteger, ConvInteger.
 *
 * The version changes of QuantizeLinear / DequantizeLinear add attributes
 * whose defaults keep the old meaning (axis 13, saturate 19, block_size and
 * output_dtype 21/23, precision 23) and widen type lists; upgrades have
 * nothing to do (except where a type binding changes) and downgrades drop
 * an attribute only when it holds a value that behaves as the older
 * version does. Below their first opset the integer ops are expanded into
 * exact double-precision arithmetic where the integer sums provably fit.
 * A DequantizeLinear the target cannot take whose inputs are all known
 * (the weights and biases of ONNX Runtime's QDQ models) becomes the
 * constant it computes.
 */
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* |(q - zero_point)| of 8-bit values is at most 255, so a product is at
 * most 255 * 255; a sum of k of them fits int32 (and is exact in double)
 * when k * 65025 < 2^31. */
#define AD_Q_MAX_TERMS ((int64_t)2147483647 / (255 * 255))

/* ---- shapes ----------------------------------------------------------- */

/* Whether v holds one element as a scalar or a 1-D tensor of one element
 * (what every version reads as per-tensor): 1 yes, 0 no, -1 unknown. */
static int ad_q_per_tensor(const IrValue *v)
{
    int r = ad_rank(v);
    if (r == 0)
        return 1;
    if (r < 0)
        return -1;
    if (r > 1)
        return 0;
    const IrDim *d = &v->type->shape->dims[0];
    return d->kind != IR_DIM_VALUE ? -1 : d->value == 1;
}

/* Refuses unless input i (if present) is per-tensor. */
static int ad_q_need_per_tensor(AdCtx *c, size_t i, const char *what)
{
    IrValue *v = ad_in(c, i);
    if (!v)
        return 0;
    int k = ad_q_per_tensor(v);
    if (k < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "the shape of %s '%s' is unknown; the target takes only "
                         "a per-tensor (one-element) %s", what, v->name, what);
    if (k == 0)
        return ad_refuse(c, DG_SEMANTICS,
                         "%s '%s' is per-axis or blocked; the target takes only "
                         "a per-tensor (one-element) %s", what, v->name, what);
    return 0;
}

static bool ad_q_is_8bit(int32_t t)
{
    return t == IR_INT8 || t == IR_UINT8;
}

/* ---- QuantizeLinear / DequantizeLinear: axis (10 <-> 13) -------------- */

/* 13 added `axis` and per-axis (1-D) scales; before 13 the scale and zero
 * point are per-tensor, which `axis` does not affect. Down: both must hold
 * one element; axis is dropped. */
static int ad_q_13_10(AdCtx *c)
{
    if (ad_q_need_per_tensor(c, 1, "scale") < 0 ||
        ad_q_need_per_tensor(c, 2, "zero point") < 0)
        return -1;
    ad_drop_attr(c, "axis");
    return 0;
}

/* ---- QuantizeLinear 13 <-> 19: saturate, y_scale typed like x ---------- */

/* 19 added float8 outputs with `saturate` (default 1, used by float8 only)
 * and made y_scale share x's type (T1); 13 paired an int32 x with a float
 * scale, which 19..22 cannot express. Up: refuse an int32 (or unknown) x. */
static int ad_ql_13_19(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (t == 0)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "the type of x is unknown; from opset 19 y_scale must "
                         "have x's type, which a float scale of an int32 x breaks");
    if (t == IR_INT32)
        return ad_refuse(c, DG_TYPE,
                         "x is int32 with a float y_scale; opsets 19 to 22 "
                         "require y_scale to have x's type");
    return 0;
}

/* Down: `saturate` only acts on float8 outputs (which 13 lacks, the driver
 * refuses them); it is dropped when 1 or when y is known to be 8-bit
 * integer. */
static int ad_ql_19_13(AdCtx *c)
{
    const IrAttr *a = ad_attr(c, "saturate");
    int32_t y = c->n->n_out ? ad_elem(c->n->out[0]) : 0;
    if (a && !(a->has_i && a->i == 1) && !ad_q_is_8bit(y))
        return ad_refuse(c, DG_ATTRIBUTE,
                         "saturate=%lld with an output that is not known to be "
                         "int8/uint8 has no form at the target",
                         (long long)(a->has_i ? a->i : 0));
    ad_drop_attr(c, "saturate");
    return 0;
}

/* ---- QuantizeLinear 19 <-> 21: block_size, output_dtype --------------- */

/* A zero point of 0 (every 8-bit type stores 0 as the zero value) of type
 * dt, shaped like the scale (input 1). */
static IrValue *ad_ql_zero_point(AdCtx *c, int32_t dt)
{
    int64_t dims[8];
    IrValue *s = ad_in(c, 1);
    int rank = ad_static(s, dims, 8);
    if (rank < 0 || rank > 1) {
        ad_refuse(c, DG_SHAPE_UNKNOWN,
                  "output_dtype without y_zero_point needs the scale's shape "
                  "to build a zero point");
        return NULL;
    }
    size_t n = rank ? (size_t)dims[0] : 1;
    uint8_t *z = calloc(n ? n : 1, 1);
    IrValue *v = ad_const_tensor(c, dt, (size_t)rank, dims, z, n);
    free(z);
    return v;
}

/* 21 added `block_size` (default 0: not blocked) and `output_dtype`
 * (default 0: the zero point's type, uint8 without one). Down: block_size
 * must be 0; output_dtype is dropped when it agrees with the zero point,
 * or is uint8, or is replaced by an explicit zero point of 0 of that type
 * (adding 0 is what a missing zero point does). */
static int ad_ql_21_19(AdCtx *c)
{
    if (ad_drop_attr_if(c, "block_size", 0) < 0)
        return -1;
    int64_t od = ad_attr_i(c, "output_dtype");
    IrValue *zp = ad_in(c, 2);
    if (od != 0 && zp) {
        int32_t t = ad_elem(zp);
        if (t != od)
            return ad_refuse(c, t ? DG_ATTRIBUTE : DG_TYPE_UNKNOWN,
                             "output_dtype=%lld and the zero point's type %d "
                             "cannot be checked to agree", (long long)od, t);
    } else if (od != 0 && od != IR_UINT8) {
        if (od != IR_INT8 && !(od >= IR_FLOAT8E4M3FN && od <= IR_FLOAT8E5M2FNUZ))
            return ad_refuse(c, DG_TYPE, "output_dtype=%lld has no form at the target",
                             (long long)od);
        IrValue *z = ad_ql_zero_point(c, (int32_t)od);
        if (!z)
            return -1;
        ad_set_input(c, 2, z);
    }
    ad_drop_attr(c, "output_dtype");
    return 0;
}

/* ---- QuantizeLinear 21 <-> 23: precision, scale type free ------------- */

/* 23 gave y_scale its own type and added `precision` (default 0: the
 * scale's type decides the precision of x / y_scale). Before 23 x and
 * y_scale share one type, which then decides. Down: x and y_scale must
 * have one known type; precision is dropped when 0 or equal to that
 * (floating) type. */
static int ad_ql_23_21(AdCtx *c)
{
    int32_t tx = ad_elem(ad_in(c, 0)), ts = ad_elem(ad_in(c, 1));
    if (!tx || !ts)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "before opset 23 x and y_scale must have one type; "
                         "their types are unknown");
    if (tx != ts)
        return ad_refuse(c, DG_TYPE,
                         "x and y_scale have different types; before opset 23 "
                         "they must have one");
    int64_t p = ad_attr_i(c, "precision");
    if (p != 0 && !(p == ts && (ts == IR_FLOAT || ts == IR_FLOAT16 ||
                                ts == IR_BFLOAT16)))
        return ad_refuse(c, DG_ATTRIBUTE,
                         "precision=%lld differs from the scale's type; the "
                         "target divides in the scale's type", (long long)p);
    ad_drop_attr(c, "precision");
    return 0;
}

/* ---- DequantizeLinear 19 <-> 21, 21 <-> 23 ----------------------------- */

/* A DequantizeLinear whose form the target lacks (per-axis or blocked
 * scales, an int32 x below 10, another output type) is still a constant
 * when its inputs are known (ONNX Runtime's QDQ weights and biases are):
 * it becomes the output the evaluator's kernel computes, of the node's own
 * output type. 1 folded, 0 not known (the caller refuses or expands), -1
 * refused. A folded output takes 4 bytes per stored element of x: the
 * bound only stops what no layer's weights reach. */
#define AD_DQ_MAX_FOLD ((uint64_t)1 << 28)

static int ad_dq_fold(AdCtx *c)
{
    return ad_fold(c, AD_DQ_MAX_FOLD);
}

/* 21 added `block_size` (default 0: not blocked). Down: it must be 0, or
 * the node is folded. */
static int ad_dq_21_19(AdCtx *c)
{
    int f = ad_attr_i(c, "block_size") != 0 ? ad_dq_fold(c) : 0;
    return f ? (f > 0 ? 0 : -1) : ad_drop_attr_if(c, "block_size", 0);
}

/* 23 added `output_dtype` (default 0: the scale's type, which is what 21
 * returns). Down: dropped when 0 or equal to the scale's known type, else
 * the node is folded. */
static int ad_dq_23_21(AdCtx *c)
{
    int64_t od = ad_attr_i(c, "output_dtype");
    int32_t ts = ad_elem(ad_in(c, 1));
    int f = od != 0 && od != ts ? ad_dq_fold(c) : 0;
    if (f)
        return f > 0 ? 0 : -1;
    if (od != 0 && od != ts)
        return ad_refuse(c, ts ? DG_ATTRIBUTE : DG_TYPE_UNKNOWN,
                         "output_dtype=%lld is not known to be the scale's type; "
                         "before opset 23 y has the scale's type", (long long)od);
    ad_drop_attr(c, "output_dtype");
    return 0;
}

/* ---- DequantizeLinear below 10 ----------------------------------------- */

/* Whether a one-element operand of a broadcast against x keeps x's shape:
 * it is a scalar, or x has rank >= 1. */
static bool ad_q_keeps_shape(const IrValue *x, const IrValue *p)
{
    return !p || ad_rank(p) == 0 || ad_rank(x) >= 1;
}

/* (Cast(x) - Cast(zero_point)) * scale for an int8/uint8 x, with scale and
 * zero point (absent: 0) shaped to broadcast against x. As floats, x and
 * the zero point are exact and so is their difference (|d| <= 255);
 * d * scale is then one correctly rounded float product, the value the op
 * defines. Replaces c->n. */
static int ad_dq_expand(AdCtx *c, IrValue *x, IrValue *s, IrValue *zp)
{
    IrValue *d = ad_cast(c, x, IR_FLOAT);
    if (d && zp)
        d = ad_op2(c, "Sub", d, ad_cast(c, zp, IR_FLOAT));
    IrValue *y = d && s ? ad_op2(c, "Mul", d, s) : NULL;
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* DequantizeLinear-10 below opset 10: y = (x - zero_point) * scale with a
 * per-tensor float scale and an int8/uint8 x (ad_dq_expand). int32 x is
 * folded when known, else refused: |x - zero_point| may exceed 2^24. Built
 * in opset-9 forms (Cast-9, Sub-7, Mul-7) and lowered by the driver. */
static int ad_dq_below_10(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *s = ad_in(c, 1), *zp = ad_in(c, 2);
    int32_t t = ad_elem(x);
    int f = !ad_q_is_8bit(t) || ad_q_per_tensor(s) != 1 ||
            (zp && ad_q_per_tensor(zp) != 1) ? ad_dq_fold(c) : 0;
    if (f)
        return f > 0 ? 0 : -1;
    if (!ad_q_is_8bit(t))
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "only an int8/uint8 x has an exact float expansion");
    if (ad_q_need_per_tensor(c, 1, "scale") < 0 ||
        ad_q_need_per_tensor(c, 2, "zero point") < 0)
        return -1;
    if (!ad_q_keeps_shape(x, s) || !ad_q_keeps_shape(x, zp))
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "x's rank is unknown or 0 while the scale or zero point "
                         "is 1-D: the expansion would change the output shape");
    c->build_opset = 9;
    return ad_dq_expand(c, x, s, zp);
}

/* ---- DequantizeLinear 13 -> 10: per-axis ------------------------------- */

/* A 1-D per-axis operand shaped [n, 1, ...] to broadcast along `axis` of a
 * rank-r x (absent stays absent). */
static IrValue *ad_dq_along(AdCtx *c, IrValue *v, int r, int64_t axis)
{
    int64_t shape[AD_MAX_STATIC_RANK] = {-1};
    for (int64_t k = 1; k < r - axis; k++)
        shape[k] = 1;
    return v ? ad_reshape(c, v, (size_t)(r - axis), shape) : NULL;
}

/* DequantizeLinear-13 with per-axis scales down to 10, which takes one
 * scale: folded when the inputs are known, else for an int8/uint8 x of
 * known rank the expansion of ad_dq_expand with the scale and zero point
 * reshaped to run along `axis` (exact for the same reason). Per-tensor
 * scales only lose `axis`. */
static int ad_dq_13_10(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *s = ad_in(c, 1), *zp = ad_in(c, 2);
    if (ad_q_per_tensor(s) == 1 && (!zp || ad_q_per_tensor(zp) == 1))
        return ad_q_13_10(c);
    int f = ad_dq_fold(c);
    if (f)
        return f > 0 ? 0 : -1;
    int r = ad_rank(x);
    int64_t axis;
    if (!ad_q_is_8bit(ad_elem(x)) || ad_rank(s) != 1 || (zp && ad_rank(zp) != 1) ||
        r < 1 || r > AD_MAX_STATIC_RANK || !ad_axis(ad_attr_i(c, "axis"), r, 0, &axis))
        return ad_q_13_10(c);
    return ad_dq_expand(c, x, ad_dq_along(c, s, r, axis), ad_dq_along(c, zp, r, axis));
}

/* ---- MatMulInteger / ConvInteger below 10 ------------------------------ */

/* The range of an 8-bit quantized type. */
static void ad_q_range(int32_t zt, double *lo, double *hi)
{
    *lo = zt == IR_INT8 ? -128 : 0;
    *hi = zt == IR_INT8 ? 127 : 255;
}

/* 2^24: float32 holds every integer of magnitude up to it. */
#define AD_Q_FLOAT_EXACT ((int64_t)1 << 24)
/* Constant weights read to bound the sums (larger ones are not read). */
#define AD_Q_MAX_WEIGHTS ((size_t)1 << 24)

/* The largest |q - zero_point| of 8-bit input i whose zero point is
 * input zi (absent = 0): from the zero point when it and the type are
 * known, else 255, the most any two 8-bit values of one type differ. */
static int64_t ad_q_max_shift(const AdCtx *c, size_t i, size_t zi)
{
    IrValue *zp = ad_in(c, zi);
    int32_t t = ad_elem(ad_in(c, i)) ? ad_elem(ad_in(c, i)) : zp ? ad_elem(zp) : 0;
    double lo, hi;
    ad_q_range(t, &lo, &hi);
    int64_t *z = NULL, m = 0;
    size_t n = 1;
    if (!ad_q_is_8bit(t) || (zp && !ad_const_ints(zp, &z, &n)))
        return 255;
    for (size_t k = 0; k < n; k++) {
        int64_t v = z ? z[k] : 0, a = v - (int64_t)lo, b = (int64_t)hi - v;
        m = a > m ? a : m;
        m = b > m ? b : m;
    }
    free(z);
    return m;
}

/* The largest sum of |w - w_zp| that one output reads, for constant
 * weights w (input wi) laid out [B, K, N]: each of the B * N outputs sums
 * K terms (ConvInteger: B output channels, K = C/group * kernel, N = 1;
 * MatMulInteger: B batches, K rows, N columns). The zero point (input zi)
 * is per tensor, or one per output channel (by_batch) / per column.
 * -1 when w or its zero point is not known. */
static int64_t ad_q_w_l1(const AdCtx *c, size_t wi, size_t zi, int64_t K, int64_t N,
                         bool by_batch)
{
    const IrTensor *t = ad_const(ad_in(c, wi));
    IrValue *zp = ad_in(c, zi);
    int64_t *w = NULL, *z = NULL, best = -1;
    size_t n = 0, nz = 1;
    if (!t || !ir_tensor_to_i64s(t, AD_Q_MAX_WEIGHTS, &w, &n) ||
        (zp && !ad_const_ints(zp, &z, &nz)) || K * N <= 0 || n % (size_t)(K * N))
        goto done;
    size_t nb = n / (size_t)(K * N);
    for (size_t b = 0; b < nb; b++)
        for (int64_t col = 0; col < N; col++) {
            size_t zk = nz == 1 ? 0 : by_batch ? b : (size_t)col;
            if (zk >= nz) {
                best = -1;
                goto done;
            }
            int64_t sum = 0, zv = z ? z[zk] : 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t d = w[b * (size_t)(K * N) + (size_t)(k * N + col)] - zv;
                sum += d < 0 ? -d : d;
            }
            best = sum > best ? sum : best;
        }
done:
    free(w);
    free(z);
    return best;
}

/* The type the integer products are summed in: float32 where every
 * product and partial sum is an integer of magnitude at most 2^24, so
 * exact in any order (|x - x_zp| <= the largest shift of x, times the
 * weights' sum of |w - w_zp| for one output, read from constant weights,
 * else 255 * K): the type every runtime has a Conv and MatMul for. Double
 * otherwise (exact, the sums being below 2^31), which no common runtime
 * of those opsets runs in a Conv: ad_q_say_double says so. Inputs: x and
 * its zero point, w and its zero point, w's layout as ad_q_w_l1. */
static int32_t ad_q_acc_type(const AdCtx *c, const size_t idx[4], int64_t K, int64_t N,
                             bool by_batch)
{
    int64_t l1 = ad_q_w_l1(c, idx[2], idx[3], K, N, by_batch);
    if (l1 < 0)
        l1 = ad_q_max_shift(c, idx[2], idx[3]) * K;
    return ad_q_max_shift(c, idx[0], idx[1]) * l1 <= AD_Q_FLOAT_EXACT ? IR_FLOAT : IR_DOUBLE;
}

/* q - zero_point in floating type dt: exact for 8-bit values. zp is NULL
 * (no shift) or already shaped to broadcast against q. */
static IrValue *ad_q_shift(AdCtx *c, IrValue *q, IrValue *zp, int32_t dt)
{
    IrValue *d = ad_cast(c, q, dt);
    if (!d || !zp)
        return d;
    IrValue *zd = ad_cast(c, zp, dt);
    IrValue *in[2] = {d, zd};
    IrNode *k = zd ? ad_node(c, c->n, "Sub", 2, in, 1) : NULL;
    return k ? k->out[0] : NULL;
}

/* zp with `n` trailing axes of 1 added (Unsqueeze at axes 1..n), so
 * that a per-row / per-channel vector broadcasts along its axis. */
static IrValue *ad_q_trail(AdCtx *c, IrValue *zp, size_t n)
{
    if (!zp || n == 0)
        return zp;
    int64_t axes[8];
    for (size_t i = 0; i < n && i < 8; i++)
        axes[i] = (int64_t)i + 1;
    return ad_axes_op(c, c->n, "Unsqueeze", zp, n, axes);
}

/* A zero point of an operand: absent or one element (per-tensor), or a
 * 1-D vector of `len` elements (per row / per channel). *vec tells which.
 * Refuses otherwise. */
static int ad_q_zp_kind(AdCtx *c, size_t i, int64_t len, bool *vec)
{
    IrValue *zp = ad_in(c, i);
    *vec = false;
    if (!zp)
        return 0;
    int k = ad_q_per_tensor(zp);
    if (k == 1)
        return 0;
    int64_t dims[8];
    int rank = k < 0 ? -1 : ad_static(zp, dims, 8);
    if (rank < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the shape of zero point '%s' is unknown",
                         zp->name);
    if (rank != 1 || dims[0] != len)
        return ad_refuse(c, DG_SEMANTICS,
                         "zero point '%s' is neither per-tensor nor a vector of %lld",
                         zp->name, (long long)len);
    *vec = true;
    return 0;
}

/* The double result r cast to int32: exact, the sums being integers below
 * 2^31 in magnitude. Replaces c->n. */
static int ad_q_to_int32(AdCtx *c, IrValue *r)
{
    IrValue *y = r ? ad_cast(c, r, IR_INT32) : NULL;
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* Says in the report that c->n becomes a Conv on double, which no common
 * runtime of the goal opset has a kernel for (ONNX Runtime has none; it
 * has a double MatMul), and why (`why`) when dt is double; returns dt. */
static int32_t ad_q_say_double(AdCtx *c, int32_t dt, const char *why)
{
    if (dt == IR_DOUBLE)
        ad_warn(c, "%s: the result computes a Conv on double, which no common runtime "
                "of opset %lld has (ONNX Runtime has none)", why,
                (long long)(c->goal_opset ? c->goal_opset : c->to_opset));
    return dt;
}

/* MatMulInteger-10 below opset 10: (A - a_zp) x (B - b_zp) with every
 * operand cast to float32 where that is exact (ad_q_acc_type), else
 * double. The shifted values are integers of magnitude <= 255, the
 * products <= 65025, and with K * 65025 < 2^31 every partial sum is an
 * exact double integer that fits int32: the result equals the integer
 * product. a_zp may be per-row ([M], made [M, 1]); b_zp per-column ([N]
 * broadcasts along the last axis). Built in opset-9 forms (MatMul-9
 * would also take int32, but a floating type keeps MatMul-1 usable). */
static int ad_mmi_below_10(AdCtx *c)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    int64_t ad[8], bd[8];
    int ar = ad_static(a, ad, 8), br = ad_static(b, bd, 8);
    bool avec, bvec;
    if (ar < 1 || br < 1)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "the shapes of A and B must be known to bound the sums");
    int64_t k = bd[br >= 2 ? br - 2 : 0], m = ar >= 2 ? ad[ar - 2] : 1;
    int64_t n = br >= 2 ? bd[br - 1] : 1;
    if (k > AD_Q_MAX_TERMS)
        return ad_refuse(c, DG_SEMANTICS,
                         "K=%lld terms could overflow int32; no exact expansion",
                         (long long)k);
    if (ad_q_zp_kind(c, 2, m, &avec) < 0 || ad_q_zp_kind(c, 3, n, &bvec) < 0)
        return -1;
    if (avec && ar < 2)
        return ad_refuse(c, DG_SEMANTICS, "a per-row zero point needs a matrix A");
    static const size_t idx[4] = {0, 2, 1, 3};
    int32_t dt = ad_q_acc_type(c, idx, k, n, false);
    c->build_opset = 9;
    IrValue *az = ad_q_trail(c, ad_in(c, 2), avec ? 1 : 0);
    IrValue *as = ad_q_shift(c, a, az, dt);
    IrValue *bs = ad_q_shift(c, b, ad_in(c, 3), dt);
    if (!as || !bs || (ad_in(c, 2) && !az))
        return -1;
    IrValue *in[2] = {as, bs};
    IrNode *mm = ad_node(c, c->n, "MatMul", 2, in, 1);
    return ad_q_to_int32(c, mm ? mm->out[0] : NULL);
}

/* A Conv of in[0..n) (x, w[, bias]) with c->n's window attributes, which
 * mean the same in ConvInteger, QLinearConv and Conv; its output. */
static IrValue *ad_q_conv(AdCtx *c, size_t n, IrValue *const *in)
{
    IrNode *conv = ad_node_in(c, c->domain, c->n, "Conv", n, in, 1);
    if (!conv)
        return NULL;
    static const char *const names[] = {"dilations", "kernel_shape", "pads", "strides"};
    for (size_t i = 0; i < 4; i++) {
        const IrAttr *a = ad_attr(c, names[i]);
        if (a)
            ad_set_attr_ints(c, conv, names[i], a->n_ints, a->ints);
    }
    char buf[32];
    const char *pad = ad_attr_s_or(c, "auto_pad", NULL, buf, sizeof buf);
    if (pad)
        ad_set_attr_s(c, conv, "auto_pad", pad);
    if (ad_attr(c, "group"))
        ad_set_attr_i(c, conv, "group", ad_attr_i(c, "group"));
    return ad_infer(c, conv) < 0 ? NULL : conv->out[0];
}

/* How many input channels (of each group) one float32 Conv of the
 * integer conv c->n sums exactly: each channel adds at most the largest
 * |x - x_zp| times the largest |w - w_zp| times the window's `window`
 * terms, and the sum must stay within 2^24. 0 when not even one channel
 * does. idx: x, x_zp, w, w_zp as for ad_q_acc_type. */
static int64_t ad_q_chunk(const AdCtx *c, const size_t idx[4], int64_t window)
{
    int64_t per = ad_q_max_shift(c, idx[0], idx[1]) * ad_q_max_shift(c, idx[2], idx[3]) * window;
    return per > 0 ? AD_Q_FLOAT_EXACT / per : 0;
}

/* An integer conv's sums split by input channel: the channels [a, a + k)
 * of every group make one float32 Conv (exact, by ad_q_chunk) of the
 * shifted operands xs and ws gathered along axis 1; the parts are added
 * in double (integers whose total fits int32: exact). cg = input channels
 * per group. The sums, in double. */
static IrValue *ad_q_conv_chunks(AdCtx *c, IrValue *xs, IrValue *ws, int64_t cg, int64_t group,
                                 int64_t k)
{
    IrValue *acc = NULL;
    int64_t *xi = mem_array((size_t)(group * k), sizeof *xi);
    for (int64_t a = 0; a < cg; a += k) {
        int64_t n = a + k < cg ? k : cg - a, nx = group * n;
        for (int64_t g = 0; g < group; g++)
            for (int64_t j = 0; j < n; j++)
                xi[g * n + j] = g * cg + a + j;
        IrValue *xt = ad_const_int_tensor(c, IR_INT64, 1, &nx, xi, (size_t)nx);
        IrValue *wt = ad_const_int_tensor(c, IR_INT64, 1, &n, xi, (size_t)n);
        IrValue *in[2] = {ad_gather(c, xs, xt, 1), ad_gather(c, ws, wt, 1)};
        IrValue *part = in[0] && in[1] ? ad_q_conv(c, 2, in) : NULL;
        part = part ? ad_cast(c, part, IR_DOUBLE) : NULL;
        acc = acc && part ? ad_op2(c, "Add", acc, part) : part;
        if (!acc)
            break;
    }
    free(xi);
    return acc;
}

/* The integer sums of conv c->n (ConvInteger, QLinearConv) over
 * x - x_zp and w - w_zp (idx: x, x_zp, w, w_zp; wz: w's zero point
 * shaped to broadcast, w's dims wd of rank wr, terms = prod(wd[1..])):
 * one float32 Conv where that is exact (ad_q_acc_type), else float32
 * Convs of a few input channels each added in double (ad_q_conv_chunks),
 * else one Conv in double, which the report names.
 * *dt: the sums' type. NULL when a node cannot be built. */
static IrValue *ad_q_conv_sums(AdCtx *c, const size_t idx[4], IrValue *wz, const int64_t *wd,
                               int64_t terms, int32_t *dt)
{
    int64_t group = ad_attr_i(c, "group"), k = 0;
    *dt = ad_q_acc_type(c, idx, terms, 1, true);
    if (*dt == IR_DOUBLE && group >= 1 && group <= wd[0] &&
        (k = ad_q_chunk(c, idx, terms / wd[1])) >= 1)
        *dt = IR_FLOAT;
    (void)ad_q_say_double(c, *dt, "even one input channel's sums may pass 2^24, where "
                          "float32 is not exact");
    IrValue *xs = ad_q_shift(c, ad_in(c, idx[0]), ad_in(c, idx[1]), *dt);
    IrValue *ws = ad_q_shift(c, ad_in(c, idx[2]), wz, *dt);
    if (!xs || !ws || (ad_in(c, idx[3]) && !wz))
        return NULL;
    if (k >= 1) {
        *dt = IR_DOUBLE;
        return ad_q_conv_chunks(c, xs, ws, wd[1], group, k);
    }
    IrValue *in[2] = {xs, ws};
    return ad_q_conv(c, 2, in);
}

/* ConvInteger-10 below opset 10: Conv of (x - x_zp) and (w - w_zp) in
 * float32 where that is exact (ad_q_acc_type), else as float32 Convs of
 * a few input channels each added in double (ad_convi_chunks), else in
 * double (said in the report). Conv pads with 0, which is what
 * ConvInteger's padding with x_zero_point becomes after the shift. Each
 * output sums C/group * prod(kernel) products of magnitude <= 65025, so
 * with fewer than 2^31 / 65025 terms the sums are exact int32 values.
 * x_zp is per-tensor; w_zp per-tensor or per output channel ([M], made
 * [M, 1, ...]). The attributes carry over to Conv unchanged. */
static int ad_convi_below_10(AdCtx *c)
{
    IrValue *w = ad_in(c, 1);
    int64_t wd[8];
    int wr = ad_static(w, wd, 8);
    bool xvec, wvec;
    if (wr < 3)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "the shape of w must be known to bound the sums");
    int64_t terms = 1;
    for (int i = 1; i < wr; i++) {
        terms *= wd[i];
        if (terms > AD_Q_MAX_TERMS)
            return ad_refuse(c, DG_SEMANTICS,
                             "a window of more than %lld terms could overflow "
                             "int32; no exact expansion", (long long)AD_Q_MAX_TERMS);
    }
    if (ad_q_zp_kind(c, 2, -1, &xvec) < 0 || ad_q_zp_kind(c, 3, wd[0], &wvec) < 0)
        return -1;
    static const size_t idx[4] = {0, 2, 1, 3};
    c->build_opset = 9;
    IrValue *wz = ad_q_trail(c, ad_in(c, 3), wvec ? wr - 1 : 0);
    int32_t dt;
    return ad_q_to_int32(c, ad_q_conv_sums(c, idx, wz, wd, terms, &dt));
}

/* ---- round half to even and saturation in opset-9 ops ------------------ */

/* q rounded half to even, q of floating type dt and never NaN: with
 * f = floor(q) and d = q - f (exact: f and q are within a factor of 2, or
 * f is 0 or -1 and d rounds only away from 0.5 in the right direction),
 * r = f + 1 when d > 0.5, or d == 0.5 and f is odd (f / 2 - floor(f / 2)
 * is then 0.5, exactly). Infinities stay. Round itself is opset 11. */
static IrValue *ad_q_rne(AdCtx *c, IrValue *q, int32_t dt)
{
    IrValue *half = ad_const_scalar(c, dt, 0.5), *quarter = ad_const_scalar(c, dt, 0.25);
    IrValue *f = ad_op1(c, "Floor", q);
    IrValue *d = ad_op2(c, "Sub", q, f);
    IrValue *gt = ad_op2(c, "Greater", d, half);
    IrValue *lt = ad_op2(c, "Less", d, half);
    IrValue *h = ad_op2(c, "Mul", f, half);
    IrValue *odd = ad_op2(c, "Greater", ad_op2(c, "Sub", h, ad_op1(c, "Floor", h)),
                            quarter);
    IrValue *tie = ad_op1(c, "Not", ad_op2(c, "Or", gt, lt));
    IrValue *up = ad_op2(c, "Or", gt, ad_op2(c, "And", tie, odd));
    return ad_op2(c, "Add", f, up ? ad_cast(c, up, dt) : NULL);
}

/* saturate(rne(q) + zero_point) as type zt, q of floating type dt; a NaN q
 * gives the zero point (as the quantizers define it). zp is NULL (0) or an
 * operand of type zt that broadcasts against q. rne(q) + zp is exact
 * wherever it is not saturated anyway. Clip-6 (attributes) saturates. */
static IrValue *ad_q_requant(AdCtx *c, IrValue *q, int32_t dt, IrValue *zp, int32_t zt)
{
    IrValue *nan = ad_op1(c, "IsNaN", q), *zero = ad_const_scalar(c, dt, 0.0);
    IrValue *in[3] = {nan, zero, q};
    IrNode *w = nan && zero ? ad_node(c, c->n, "Where", 3, in, 1) : NULL;
    IrValue *r = w ? ad_q_rne(c, w->out[0], dt) : NULL;
    if (r && zp)
        r = ad_op2(c, "Add", r, ad_cast(c, zp, dt));
    /* r is an integer: float32 keeps it where it is inside the range and
     * keeps its side of the range elsewhere, and Clip-6 has a float32
     * kernel in every runtime (ONNX Runtime has none for double) */
    if (r && dt == IR_DOUBLE)
        r = ad_cast(c, r, IR_FLOAT);
    IrNode *clip = r ? ad_node_in(c, c->domain, c->n, "Clip", 1, &r, 1) : NULL;
    if (!clip)
        return NULL;
    double lo, hi;
    ad_q_range(zt, &lo, &hi);
    ad_set_attr_f(c, clip, "min", (float)lo);
    ad_set_attr_f(c, clip, "max", (float)hi);
    if (ad_infer(c, clip) < 0)
        return NULL;
    return ad_cast(c, clip->out[0], zt);
}

/* The quantized type of a zero point input (uint8 when absent); refuses
 * when it is not known to be int8 / uint8. */
static int ad_q_zero_type(AdCtx *c, size_t i, int32_t *zt)
{
    IrValue *zp = ad_in(c, i);
    *zt = zp ? ad_elem(zp) : IR_UINT8;
    if (!ad_q_is_8bit(*zt))
        return ad_refuse(c, *zt ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "the quantized type must be known to be int8 or uint8");
    return 0;
}

/* QuantizeLinear-10 below opset 10: y = saturate(rne(x / scale) + zp)
 * with a per-tensor scale. The quotient is taken as the op does: in float
 * for a float x (one correctly rounded division), in double for an int32
 * x; a NaN quotient gives the zero point. Round half to even is built from
 * Floor and comparisons (ad_q_rne). Opset-9 forms; IsNaN and Where make
 * opset 9 the lowest target. */
static int ad_ql_below_10(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *s = ad_in(c, 1), *zp = ad_in(c, 2);
    int32_t tx = ad_elem(x), zt;
    if (tx != IR_FLOAT && tx != IR_INT32)
        return ad_refuse(c, tx ? DG_TYPE : DG_TYPE_UNKNOWN, "x must be known to be float or int32");
    if (ad_q_zero_type(c, 2, &zt) < 0 || ad_q_need_per_tensor(c, 1, "scale") < 0 ||
        ad_q_need_per_tensor(c, 2, "zero point") < 0)
        return -1;
    if (!ad_q_keeps_shape(x, s) || !ad_q_keeps_shape(x, zp))
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "x's rank is unknown or 0 while the scale or zero point "
                         "is 1-D: the expansion would change the output shape");
    c->build_opset = 9;
    int32_t dt = tx == IR_FLOAT ? IR_FLOAT : IR_DOUBLE;
    IrValue *q = dt == IR_FLOAT ? ad_op2(c, "Div", x, s)
                                  : ad_op2(c, "Div", ad_cast(c, x, dt), ad_cast(c, s, dt));
    IrValue *y = q ? ad_q_requant(c, q, dt, zp, zt) : NULL;
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* DynamicQuantizeLinear-11 below opset 11: the spec's function body in
 * opset-10 forms. lo = min(0, min(x)), hi = max(0, max(x)),
 * scale = (hi - lo) / 255, zero point = rne(clip(0 - lo / scale, 0, 255))
 * as uint8, y = QuantizeLinear(x, scale, zero point). Round (opset 11) is
 * built from Floor and comparisons; the zero point's quotient is NaN only
 * when scale is 0 (x all zeros), where Cast(NaN) would be undefined and
 * the zero point is taken as 0. QuantizeLinear-10 is lowered further by
 * its own adapter. */
static int ad_dql_below_11(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    c->build_opset = 10;
    IrNode *rmin = ad_node_in(c, c->domain, c->n, "ReduceMin", 1, &x, 1);
    IrNode *rmax = ad_node_in(c, c->domain, c->n, "ReduceMax", 1, &x, 1);
    if (!rmin || !rmax)
        return -1;
    ad_set_attr_i(c, rmin, "keepdims", 0);
    ad_set_attr_i(c, rmax, "keepdims", 0);
    if (ad_infer(c, rmin) < 0 || ad_infer(c, rmax) < 0)
        return -1;
    IrValue *zero = ad_const_scalar(c, IR_FLOAT, 0.0);
    IrValue *lo = ad_op2(c, "Min", rmin->out[0], zero);
    IrValue *hi = ad_op2(c, "Max", rmax->out[0], zero);
    IrValue *scale = ad_op2(c, "Div", ad_op2(c, "Sub", hi, lo),
                              ad_const_scalar(c, IR_FLOAT, 255.0));
    if (!scale)
        return -1;
    /* the outputs move onto their producers before anything reads them */
    IrNode *ks = scale->producer;
    ad_move_output(c, 1, ks, 0);
    IrValue *zf = ad_op2(c, "Sub", zero, ad_op2(c, "Div", lo, ks->out[0]));
    IrValue *zc = zf ? ad_q_requant(c, zf, IR_FLOAT, NULL, IR_UINT8) : NULL;
    if (!zc)
        return -1;
    IrNode *kz = zc->producer;
    ad_move_output(c, 2, kz, 0);
    IrValue *in[3] = {x, ks->out[0], kz->out[0]};
    IrNode *q = ad_node(c, c->n, "QuantizeLinear", 3, in, 1);
    if (!q)
        return -1;
    ad_move_output(c, 0, q, 0);
    ir_node_delete(c->n);
    return 0;
}

/* Input i reshaped to broadcast along axis 1 of a rank-`rank` operand
 * when it is a vector (per row / per channel): Unsqueeze axes 1.. */
static IrValue *ad_q_along(AdCtx *c, size_t i, int64_t len, size_t rank)
{
    bool vec;
    if (ad_q_zp_kind(c, i, len, &vec) < 0)
        return NULL;
    return ad_q_trail(c, ad_in(c, i), vec ? rank : 0);
}

/* QLinearMatMul-10 below opset 10: acc = (a - a_zp) x (b - b_zp) exactly
 * in double (as MatMulInteger below 10), the multiplier
 * a_scale * b_scale / y_scale in float (per row of a and y, per column of
 * b), acc * multiplier in double, then saturate(rne(.) + y_zp). */
static int ad_qlmm_below_10(AdCtx *c)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 3);
    int64_t ad[8], bd[8];
    int ar = ad_static(a, ad, 8), br = ad_static(b, bd, 8);
    int32_t zt;
    if (ar < 1 || br < 1)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "the shapes of a and b must be known to bound the sums");
    int64_t k = bd[br >= 2 ? br - 2 : 0], m = ar >= 2 ? ad[ar - 2] : 1;
    int64_t n = br >= 2 ? bd[br - 1] : 1;
    if (k > AD_Q_MAX_TERMS)
        return ad_refuse(c, DG_SEMANTICS, "K=%lld terms could overflow the accumulator",
                         (long long)k);
    if (ad_q_zero_type(c, 7, &zt) < 0 || ad_elem(ad_in(c, 1)) != IR_FLOAT)
        return ad_refuse(c, DG_TYPE, "the scales must be float and y int8/uint8");
    c->build_opset = 9;
    size_t rr = ar >= 2 ? 1 : 0;
    IrValue *as = ad_q_along(c, 1, m, rr), *az = as ? ad_q_along(c, 2, m, rr) : NULL;
    IrValue *bs = az ? ad_q_along(c, 4, n, 0) : NULL, *bz = bs ? ad_q_along(c, 5, n, 0) : NULL;
    IrValue *ys = bz ? ad_q_along(c, 6, m, rr) : NULL, *yz = ys ? ad_q_along(c, 7, m, rr) : NULL;
    if (!yz)
        return -1;
    IrValue *acc = ad_op2(c, "MatMul", ad_q_shift(c, a, az, IR_DOUBLE),
                            ad_q_shift(c, b, bz, IR_DOUBLE));
    IrValue *mult = ad_op2(c, "Div", ad_op2(c, "Mul", as, bs), ys);
    IrValue *q = ad_op2(c, "Mul", acc, mult ? ad_cast(c, mult, IR_DOUBLE) : NULL);
    IrValue *y = q ? ad_q_requant(c, q, IR_DOUBLE, yz, zt) : NULL;
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* QLinearConv-10 below opset 10: the sums of (x - x_zp) and (w - w_zp)
 * as ConvInteger's below 10 (float32 Convs where exact), plus the int32
 * bias in double (exact), the multiplier x_scale * w_scale / y_scale in
 * float (w per output channel), acc * multiplier in double, then
 * saturate(rne(.) + y_zp). */
static int ad_qlconv_below_10(AdCtx *c)
{
    IrValue *w = ad_in(c, 3), *bias = ad_in(c, 8);
    int64_t wd[8];
    int wr = ad_static(w, wd, 8);
    int32_t zt;
    bool vec;
    if (wr < 3)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the shape of w must be known to bound the sums");
    int64_t terms = 1;
    for (int i = 1; i < wr; i++)
        if ((terms *= wd[i]) > AD_Q_MAX_TERMS)
            return ad_refuse(c, DG_SEMANTICS, "the window could overflow the accumulator");
    if (ad_q_zero_type(c, 7, &zt) < 0 || ad_elem(ad_in(c, 1)) != IR_FLOAT)
        return ad_refuse(c, DG_TYPE, "the scales must be float and y int8/uint8");
    if (ad_q_zp_kind(c, 2, -1, &vec) < 0 || ad_q_zp_kind(c, 6, -1, &vec) < 0 ||
        ad_q_zp_kind(c, 7, -1, &vec) < 0 || ad_q_zp_kind(c, 1, -1, &vec) < 0)
        return -1;
    c->build_opset = 9;
    IrValue *ws = ad_q_along(c, 4, wd[0], wr - 2), *wz = ws ? ad_q_along(c, 5, wd[0], wr - 1) : NULL;
    if (!wz && ad_in(c, 5))
        return -1;
    if (!ws)
        return -1;
    static const size_t idx[4] = {0, 2, 3, 5};
    int32_t dt;
    IrValue *acc = ad_q_conv_sums(c, idx, wz, wd, terms, &dt);
    acc = acc && dt != IR_DOUBLE ? ad_cast(c, acc, IR_DOUBLE) : acc;
    if (acc && bias) {   /* int32 bias: exact in double, per output channel */
        IrValue *bd = ad_q_trail(c, ad_cast(c, bias, IR_DOUBLE), wr - 2);
        acc = bd ? ad_op2(c, "Add", acc, bd) : NULL;
    }
    if (!acc)
        return -1;
    IrValue *mult = ad_op2(c, "Div", ad_op2(c, "Mul", ad_in(c, 1), ws), ad_in(c, 6));
    IrValue *q = ad_op2(c, "Mul", acc, mult ? ad_cast(c, mult, IR_DOUBLE) : NULL);
    IrValue *y = q ? ad_q_requant(c, q, IR_DOUBLE, ad_in(c, 7), zt) : NULL;
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

static const AdEntry ad_quant[] = {
    /* QuantizeLinear */
    AD_GONE("QuantizeLinear", 10, AD_EXPAND, ad_ql_below_10),
    AD_UP("QuantizeLinear", 10, 13, AD_ATTRS, ad_nothing),
    AD_DOWN("QuantizeLinear", 10, 13, AD_ATTRS, ad_q_13_10),
    AD_UP("QuantizeLinear", 13, 19, AD_ATTRS, ad_ql_13_19),
    AD_DOWN("QuantizeLinear", 13, 19, AD_ATTRS, ad_ql_19_13),
    AD_UP("QuantizeLinear", 19, 21, AD_ATTRS, ad_nothing),
    AD_DOWN("QuantizeLinear", 19, 21, AD_ATTRS, ad_ql_21_19),
    AD_UP("QuantizeLinear", 21, 23, AD_ATTRS, ad_nothing),
    AD_DOWN("QuantizeLinear", 21, 23, AD_ATTRS, ad_ql_23_21),
    AD_BOTH("QuantizeLinear", 23, 24),
    AD_BOTH("QuantizeLinear", 24, 25),
    /* DequantizeLinear */
    AD_GONE("DequantizeLinear", 10, AD_EXPAND, ad_dq_below_10),
    AD_UP("DequantizeLinear", 10, 13, AD_ATTRS, ad_nothing),
    AD_DOWN("DequantizeLinear", 10, 13, AD_EXPAND, ad_dq_13_10),
    AD_BOTH("DequantizeLinear", 13, 19),
    AD_UP("DequantizeLinear", 19, 21, AD_ATTRS, ad_nothing),
    AD_DOWN("DequantizeLinear", 19, 21, AD_ATTRS, ad_dq_21_19),
    AD_UP("DequantizeLinear", 21, 23, AD_ATTRS, ad_nothing),
    AD_DOWN("DequantizeLinear", 21, 23, AD_ATTRS, ad_dq_23_21),
    AD_BOTH("DequantizeLinear", 23, 24),
    AD_BOTH("DequantizeLinear", 24, 25),
    /* QLinearMatMul: 21 widened the type lists only */
    AD_BOTH("QLinearMatMul", 10, 21),
    AD_GONE("QLinearMatMul", 10, AD_EXPAND, ad_qlmm_below_10),
    AD_GONE("QLinearConv", 10, AD_EXPAND, ad_qlconv_below_10),
    AD_GONE("DynamicQuantizeLinear", 11, AD_EXPAND, ad_dql_below_11),
    /* integer products */
    AD_GONE("MatMulInteger", 10, AD_EXPAND, ad_mmi_below_10),
    AD_GONE("ConvInteger", 10, AD_EXPAND, ad_convi_below_10),
};

const AdFamily ad_family_quant = {"quant", ad_quant, sizeof ad_quant / sizeof ad_quant[0]};
