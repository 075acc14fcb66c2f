/*
 * coreml/quant.c - Core ML lowering and raising of the quant family:
 * QuantizeLinear (quantize) and DequantizeLinear (dequantize), ops that
 * first exist at iOS17: a model holding them needs that target. And the
 * ops ONNX Runtime's quantizer writes, lowered to MIL's float ops where
 * that is exact: DynamicQuantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv, and DequantizeLinear of a constant int32.
 *
 * The integer ops subtract the zero points from the 8-bit inputs in fp32
 * (exact) and contract in fp32 (matmul, conv): exact when every product
 * and partial sum is an integer of magnitude at most 2^24, bounded from
 * constant operands' values (else their type's range) times the number
 * of terms; refused past it. Rounding half to even is built from floor
 * (cml_round_even); a cast from or to int8/uint8 needs iOS17.
 *
 * Refused, and why: non-constant scales and zero points (MIL requires
 * them const; a computed scalar zero point of a contraction's input is
 * subtracted at run time); element types other than int8/uint8 (MIL's
 * quantize makes only those); a per-axis scale without a known rank;
 * contractions past the 2^24 bound; an int32 constant of magnitude 2^24
 * or more.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

static int lower_dequant_const(CmLower *c, const IrNode *n, const IrTensor *zt);

static int lower_quant(CmLower *c, const IrNode *n)
{
    bool q = !strcmp(n->op_type, "QuantizeLinear");
    const IrTensor *st = cml_const_tensor(n, 1);
    const IrTensor *zt = cml_has(n, 2) ? cml_const_tensor(n, 2) : NULL;
    if (!st || (cml_has(n, 2) && !zt))
        return cml_refuse(c, "scale or zero point is not a constant (MIL requires them const)");
    int32_t qt = q ? (zt && zt->has_data_type ? zt->data_type : IR_UINT8)
                   : cml_elem(n->in[0]);
    if (!q && qt == IR_INT32 && cml_const_tensor(n, 0))
        return lower_dequant_const(c, n, zt);
    if (qt != IR_INT8 && qt != IR_UINT8)
        return cml_refuse(c, "quantized type %s: MIL quantizes to int8 and uint8 only",
                          ir_dtype_name(qt) ? ir_dtype_name(qt) : "?");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilTensor *s = cml_tensor(c, st), *z = s && zt ? cml_tensor(c, zt) : NULL;
    if (!s || (zt && !z)) {
        mil_tensor_free(s);
        return -1;
    }
    MilOp *op = cml_op(c, q ? "quantize" : "dequantize");
    mil_op_in(op, "input", x);
    mil_op_in_const(op, "scale", s);
    if (z)
        mil_op_in_const(op, "zero_point", z);
    if (s->rank == 1) {
        int64_t axis;
        if (!cml_axis(cml_attr_i(n, "axis"), cml_rank(n->in[0]), &axis)) {
            return cml_refuse(c, "axis out of range or rank unknown");
        }
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    }
    if (q)
        mil_op_in_const(op, "output_dtype", mil_tensor_string(qt == IR_INT8 ? "int8" : "uint8"));
    return cml_out(c, op, n, 0);
}

/* 2^24: float32 holds every integer of magnitude up to it, so integer
 * products and sums below it are exact in any order. */
#define QT_EXACT ((int64_t)1 << 24)

/* A new MIL op `type` on x (and y when not NULL) with one fp32 output of
 * rank `rank` (-1 unknown); its name. */
static const char *qt_op(CmLower *c, const char *type, const char *x, const char *y, int rank)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    if (y)
        mil_op_in(op, "y", y);
    return cml_tmp(c, op, MIL_FP32, rank, NULL);
}

static const char *qt_f32(CmLower *c, double v)
{
    return cml_const(c, mil_tensor_scalar_f32((float)v));
}

/* A cast from or to int8/uint8 needs iOS17: cast's earlier versions
 * take fp16, fp32, int32 and bool only (coremltools' iOS17 cast adds
 * i8, ui8, i16, ui16). */
static void qt_need_8bit(CmLower *c)
{
    cml_need(c, "cast", (int)(mil_target_find("iOS17") - mil_targets));
}

/* 8-bit x cast to fp32 (keeping the rank). */
static const char *qt_cast(CmLower *c, const char *x, int rank)
{
    qt_need_8bit(c);
    MilOp *op = cml_op(c, "cast");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "dtype", mil_tensor_string("fp32"));
    return cml_tmp(c, op, MIL_FP32, rank, NULL);
}

/* clip(round(q) + zp, lo, hi) in fp32, q shaped as ONNX value o: ties
 * to even as ONNX's quantizers round (cml_round_even: MIL's round does
 * not document its ties). zp NULL: no shift. The sum is an exact integer
 * wherever it is not clipped anyway. */
static const char *qt_requant(CmLower *c, const IrValue *o, const char *q, const char *zp,
                              double lo, double hi, int rank)
{
    const char *r = cml_tmp(c, cml_round_even(c, o, MIL_FP32, q), MIL_FP32, rank, NULL);
    if (zp)
        r = qt_op(c, "add", r, zp, rank);
    MilOp *op = cml_op(c, "clip");
    mil_op_in(op, "x", r);
    mil_op_in_const(op, "alpha", mil_tensor_scalar_f32((float)lo));
    mil_op_in_const(op, "beta", mil_tensor_scalar_f32((float)hi));
    return cml_tmp(c, op, MIL_FP32, rank, NULL);
}

/* The range of an 8-bit integer type; false for other types. */
static bool qt_range(int32_t t, double *lo, double *hi)
{
    *lo = t == IR_INT8 ? -128 : 0;
    *hi = t == IR_INT8 ? 127 : 255;
    return t == IR_INT8 || t == IR_UINT8;
}

/* The output of the op that y's value is bound to, as ONNX output i of n
 * (a MIL identity, or a cast to the output's own type). */
static int qt_bind(CmLower *c, const IrNode *n, size_t i, const char *y)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->out[i]));
    if (dt == MIL_UINT8 || dt == MIL_INT8)
        qt_need_8bit(c);
    MilOp *op = cml_op(c, dt == MIL_FP32 ? "identity" : "cast");
    mil_op_in(op, "x", y);
    if (dt != MIL_FP32)
        mil_op_in_const(op, "dtype", mil_tensor_string(dt == MIL_UINT8 ? "uint8"
                                                       : dt == MIL_INT8 ? "int8" : "int32"));
    return cml_out(c, op, n, i);
}

/* DynamicQuantizeLinear as its definition's arithmetic in fp32:
 * lo = min(0, min(x)), hi = max(0, max(x)), scale = (hi - lo) / 255,
 * zero point = clip(round(0 - lo / scale), 0, 255), y = clip(round(x /
 * scale) + zero point, 0, 255); y and the zero point cast to uint8. */
static int lower_dql(CmLower *c, const IrNode *n)
{
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    int rank = cml_rank(n->in[0]);
    const char *zero = qt_f32(c, 0.0);
    MilOp *mn = cml_op(c, "reduce_min"), *mx = cml_op(c, "reduce_max");
    mil_op_in(mn, "x", x);
    mil_op_in(mx, "x", x);
    mil_op_in_const(mn, "keep_dims", mil_tensor_scalar_bool(false));
    mil_op_in_const(mx, "keep_dims", mil_tensor_scalar_bool(false));
    const char *lo = qt_op(c, "minimum", cml_tmp(c, mn, MIL_FP32, 0, NULL), zero, 0);
    const char *hi = qt_op(c, "maximum", cml_tmp(c, mx, MIL_FP32, 0, NULL), zero, 0);
    const char *s = qt_op(c, "real_div", qt_op(c, "sub", hi, lo, 0), qt_f32(c, 255.0), 0);
    const char *zf = qt_op(c, "sub", zero, qt_op(c, "real_div", lo, s, 0), 0);
    const char *zp = qt_requant(c, n->out[1], zf, NULL, 0, 255, 0);
    const char *y = qt_requant(c, n->in[0], qt_op(c, "real_div", x, s, rank), zp, 0, 255, rank);
    if (qt_bind(c, n, 0, y) < 0 || qt_bind(c, n, 1, s) < 0)
        return -1;
    return n->n_out > 2 && n->out[2] ? qt_bind(c, n, 2, zp) : 0;
}

/* The largest |q - zp| over the values of input i (an int8/uint8 tensor,
 * every value of its type when not constant) and zero point input zi
 * (0 when absent); -1 when the type is not 8-bit. */
static int64_t qt_max_shift(const IrNode *n, size_t i, size_t zi)
{
    double lo, hi;
    if (!qt_range(cml_elem(n->in[i]), &lo, &hi))
        return -1;
    int64_t *z = NULL, *q = NULL;
    size_t nz = 0, nq = 0;
    if (cml_has(n, zi) && !cml_const_ints(n, zi, &z, &nz))
        return (int64_t)(hi - lo); /* a zero point of the same type */
    bool known = cml_const_ints(n, i, &q, &nq);
    int64_t best = 0;
    for (size_t j = 0; j < (nz ? nz : 1); j++) {
        int64_t zv = nz ? z[j] : 0;
        if (known) {
            for (size_t k = 0; k < nq; k++)
                best = llabs(q[k] - zv) > best ? llabs(q[k] - zv) : best;
        } else {
            int64_t a = llabs((int64_t)lo - zv), b = llabs((int64_t)hi - zv);
            best = a > best ? a : best;
            best = b > best ? b : best;
        }
    }
    free(z);
    free(q);
    return best;
}

/* Input i minus its zero point input zi as fp32 (exact: 8-bit integers):
 * a const computed here when input i is constant, else cast and sub. A
 * zero point of more than one element lies along axis `zaxis` of a
 * rank-`rank` operand (its dims set to 1 elsewhere). NULL refused. */
static const char *qt_shifted(CmLower *c, const IrNode *n, size_t i, size_t zi, int zaxis,
                              int rank)
{
    int64_t *z = NULL, *q = NULL;
    size_t nz = 0, nq = 0;
    if (cml_has(n, zi) && !cml_const_ints(n, zi, &z, &nz)) {
        /* a computed zero point (DynamicQuantizeLinear's) of one element */
        const char *x = cml_in(c, n, i), *zv = x ? cml_in(c, n, zi) : NULL;
        int64_t d[8];
        size_t zr = 0;
        if (!zv)
            return NULL;
        if (!cml_dims(n->in[zi], d, 8, &zr) || (zr > 0 && (zr != 1 || d[0] != 1))) {
            cml_refuse(c, "a zero point computed at run time must be a scalar");
            return NULL;
        }
        return qt_op(c, "sub", qt_cast(c, x, rank), qt_cast(c, zv, (int)zr), rank);
    }
    int64_t zd[8];
    for (int k = 0; k < rank && k < 8; k++)
        zd[k] = k == zaxis ? (int64_t)nz : 1;
    if (nz > 1 && (rank > 8 || zaxis < 0 || zaxis >= rank)) {
        free(z);
        cml_refuse(c, "a zero point per row or channel needs a known rank");
        return NULL;
    }
    const char *r = NULL;
    const IrTensor *qt = cml_const_tensor(n, i);
    if (qt && cml_const_ints(n, i, &q, &nq)) {
        size_t qr = qt->ndims;
        MilTensor *t = qr <= 8 ? mil_tensor_new(MIL_FP32, (int)qr, qt->dims, NULL) : NULL;
        if (t) {
            float *f = (float *)t->data;
            uint64_t stride = 1;
            for (size_t k = (size_t)zaxis + 1; nz > 1 && k < qr; k++)
                stride *= (uint64_t)qt->dims[k];
            for (size_t k = 0; k < nq; k++) {
                size_t zj = nz > 1 ? (size_t)((k / stride) % nz) : 0;
                f[k] = (float)(q[k] - (nz ? z[zj] : 0));
            }
            r = cml_const(c, t);
        }
    } else {
        const char *x = cml_in(c, n, i);
        r = x ? qt_cast(c, x, rank) : NULL;
        if (r && nz) {
            MilTensor *t = mil_tensor_new(MIL_FP32, nz > 1 ? rank : 0, zd, NULL);
            for (size_t k = 0; k < nz; k++)
                ((float *)t->data)[k] = (float)z[k];
            r = qt_op(c, "sub", r, cml_const(c, t), rank);
        }
    }
    free(z);
    free(q);
    return r;
}

/* Refuses unless every product and partial sum of a contraction of K
 * terms of inputs (x - x_zp) and (w - w_zp) is an integer of magnitude
 * at most 2^24 (float32 then sums exactly in any order): the bound is the
 * largest shift of x times the largest sum of |w - w_zp| of one output
 * (constant weights), else times K times the largest shift of w; plus the
 * largest |bias| added to the sums. */
/* The largest sum of |w - w_zp| over the terms of one output of a
 * constant weight input wi (zero point zi: one, or one per output channel
 * of a conv, per column of a matmul): conv weights [M, C/g, k...] sum per
 * M; matmul weights [..., K, N] per batch and column. -1 when w or its
 * zero point is not constant. */
static int64_t qt_w_l1(const IrNode *n, size_t wi, size_t zi, bool conv)
{
    const IrTensor *wt = cml_const_tensor(n, wi);
    int64_t *w = NULL, *z = NULL, best = -1;
    size_t nw = 0, nz = 0;
    if (!wt || wt->ndims < 2 || !cml_const_ints(n, wi, &w, &nw) ||
        (cml_has(n, zi) && !cml_const_ints(n, zi, &z, &nz)))
        goto done;
    size_t N = conv ? 1 : (size_t)wt->dims[wt->ndims - 1];
    size_t K = conv ? nw / (size_t)wt->dims[0] : (size_t)wt->dims[wt->ndims - 2];
    size_t outer = nw / (K * N); /* M for a conv, the batch for a matmul */
    best = 0;
    for (size_t o = 0; o < outer; o++)
        for (size_t col = 0; col < N; col++) {
            int64_t zv = nz > 1 ? z[conv ? o : col] : nz ? z[0] : 0, sum = 0;
            for (size_t k = 0; k < K; k++)
                sum += llabs(w[(o * K + k) * N + col] - zv);
            best = sum > best ? sum : best;
        }
done:
    free(w);
    free(z);
    return best;
}

static int qt_need_exact(CmLower *c, const IrNode *n, const size_t idx[4], int64_t K,
                         int64_t bias, bool conv)
{
    int64_t sx = qt_max_shift(n, idx[0], idx[1]), sw = qt_max_shift(n, idx[2], idx[3]);
    if (sx < 0 || sw < 0)
        return cml_refuse(c, "inputs must be int8/uint8");
    int64_t l1 = qt_w_l1(n, idx[2], idx[3], conv);
    if (l1 >= 0 && sx * l1 <= QT_EXACT - bias)
        return 0;
    if (K <= 0 || sx * sw > (QT_EXACT - bias) / K)
        return cml_refuse(c, "sums of %lld products may pass 2^24, where float32 is not "
                          "exact (bounded from the weights' values where constant, else "
                          "from their type)", (long long)K);
    return 0;
}

/* The contraction length of node n: K of a matmul (a's last dim), or
 * C/group times the kernel's elements of a conv. -1 unknown. */
static int64_t qt_terms(const IrNode *n, size_t a, size_t w, bool conv)
{
    int64_t d[10];
    size_t r;
    if (!conv)
        return cml_dims_open(n->in[a], d, 10, &r) && r >= 1 ? d[r - 1] : -1;
    if (!cml_dims(n->in[w], d, 10, &r) || r < 3)
        return -1;
    int64_t k = d[1];
    for (size_t i = 2; i < r; i++)
        k *= d[i];
    return k;
}

/* (a - a_zp) x (b - b_zp) in fp32 for MatMulInteger / QLinearMatMul
 * (idx: a, a_zp, b, b_zp) or ConvInteger / QLinearConv (x, x_zp, w,
 * w_zp); exact by qt_need_exact. A per-row zero point of a lies along
 * a's axis -2, per-column of b along its last axis; per-channel of w
 * along axis 0. */
static const char *qt_contract(CmLower *c, const IrNode *n, const size_t idx[4], bool conv,
                               int64_t bias)
{
    if (qt_need_exact(c, n, idx, qt_terms(n, idx[0], idx[2], conv), bias, conv) < 0)
        return NULL;
    int ra = cml_rank(n->in[idx[0]]), rb = cml_rank(n->in[idx[2]]);
    const char *a = qt_shifted(c, n, idx[0], idx[1], conv ? 1 : ra - 2, ra);
    const char *b = a ? qt_shifted(c, n, idx[2], idx[3], conv ? 0 : rb - 1, rb) : NULL;
    if (!b)
        return NULL;
    if (conv)
        return cml_conv_float(c, n, a, b, n->in[idx[2]]);
    int rank = ra > rb ? ra : rb;
    return qt_op(c, "matmul", a, b, rank);
}

/* MatMulInteger and ConvInteger: the exact fp32 contraction cast to
 * int32. */
static int lower_integer(CmLower *c, const IrNode *n)
{
    static const size_t idx[4] = {0, 2, 1, 3};
    bool conv = !strcmp(n->op_type, "ConvInteger");
    const char *acc = qt_contract(c, n, idx, conv, 0);
    return acc ? qt_bind(c, n, 0, acc) : -1;
}

/* A constant float vector (input i, n elements, or 1) as a MIL const
 * along axis `axis` of a rank-`rank` operand; values in *v (caller
 * frees). NULL refused. */
static const char *qt_along(CmLower *c, const IrNode *n, size_t i, int axis, int rank,
                            double **v, size_t *nv)
{
    if (!cml_const_floats(n, i, v, nv) || *nv == 0) {
        cml_refuse(c, "input %zu (a scale, zero point or bias) is not a constant", i);
        return NULL;
    }
    int64_t d[10];
    for (int k = 0; k < rank && k < 10; k++)
        d[k] = k == axis ? (int64_t)*nv : 1;
    if (*nv > 1 && (rank > 10 || axis < 0 || axis >= rank)) {
        cml_refuse(c, "input %zu per channel needs a known rank", i);
        return NULL;
    }
    MilTensor *t = mil_tensor_new(MIL_FP32, *nv > 1 ? rank : 0, d, NULL);
    for (size_t k = 0; k < *nv; k++)
        ((float *)t->data)[k] = (float)(*v)[k];
    return cml_const(c, t);
}

/* The requantization multiplier x_scale * w_scale / y_scale in float32,
 * per output channel (conv: axis 1) or column (matmul: the last axis) of
 * the output of rank `rank`: ONNX Runtime's QLinearConv and QLinearMatMul
 * take it so, left to right in float, then multiply the int32 sums by it
 * in float. NULL refused (a scale not constant, a per-row x scale). */
static const char *qt_multiplier(CmLower *c, const IrNode *n, bool conv, int rank)
{
    double *xs = NULL, *ws = NULL, *ys = NULL;
    size_t nx = 0, nw = 0, ny = 0;
    const char *r = NULL;
    if (!cml_const_floats(n, 1, &xs, &nx) || !cml_const_floats(n, 4, &ws, &nw) ||
        !cml_const_floats(n, 6, &ys, &ny))
        cml_refuse(c, "the scales must be constants");
    else if (nx != 1 || ny != 1 || nw == 0)
        cml_refuse(c, "x's and y's scales must be per tensor");
    else if (nw > 1 && rank < 1)
        cml_refuse(c, "a per-channel scale needs the output's rank");
    else {
        int64_t d[10];
        int axis = conv ? 1 : rank - 1;
        for (int k = 0; k < rank && k < 10; k++)
            d[k] = k == axis ? (int64_t)nw : 1;
        MilTensor *t = mil_tensor_new(MIL_FP32, nw > 1 ? rank : 0, d, NULL);
        for (size_t k = 0; k < nw; k++) {
            float m = (float)xs[0] * (float)ws[k];
            ((float *)t->data)[k] = m / (float)ys[0];
        }
        r = cml_const(c, t);
    }
    free(xs);
    free(ws);
    free(ys);
    return r;
}

/* QLinearMatMul and QLinearConv: the exact fp32 contraction of the
 * shifted 8-bit inputs (qt_contract), QLinearConv's int32 bias added (a
 * constant, inside the 2^24 bound), times the multiplier, requantized to
 * y's type with ties to even and saturation. */
static int lower_qlinear(CmLower *c, const IrNode *n)
{
    static const size_t idx[4] = {0, 2, 3, 5};
    bool conv = !strcmp(n->op_type, "QLinearConv");
    int rank = cml_rank(n->out[0]);
    double lo, hi, *bv = NULL, *zv = NULL;
    size_t nb = 0, nz = 0;
    if (!qt_range(cml_elem(n->out[0]), &lo, &hi))
        return cml_refuse(c, "y must be int8 or uint8");
    const char *b = NULL;
    int64_t bias = 0;
    if (conv && cml_has(n, 8)) {
        if (!(b = qt_along(c, n, 8, 1, rank, &bv, &nb)))
            return -1;
        for (size_t k = 0; k < nb; k++)
            bias = fabs(bv[k]) > (double)bias ? (int64_t)fabs(bv[k]) : bias;
        free(bv);
        if (bias >= QT_EXACT)
            return cml_refuse(c, "a bias of magnitude 2^24 or more is not exact in float32");
    }
    const char *acc = qt_contract(c, n, idx, conv, bias);
    if (acc && b)
        acc = qt_op(c, "add", acc, b, rank);
    const char *m = acc ? qt_multiplier(c, n, conv, rank) : NULL;
    const char *z = m ? qt_along(c, n, 7, 0, 0, &zv, &nz) : NULL;
    free(zv);
    if (!z)
        return -1;
    if (nz != 1)
        return cml_refuse(c, "y's zero point must be per tensor");
    const char *y = qt_requant(c, n->out[0], qt_op(c, "mul", acc, m, rank), z, lo, hi, rank);
    return qt_bind(c, n, 0, y);
}

/* DequantizeLinear of a constant int32 (a QDQ model's bias) as a float
 * const multiplied out here: (float)(x - zero point) * scale in float32,
 * as ONNX Runtime computes it, per tensor or along `axis`. Exact only
 * while |x - zero point| < 2^24, the integers float32 holds; refused
 * past that. */
static int lower_dequant_const(CmLower *c, const IrNode *n, const IrTensor *zt)
{
    const IrTensor *xt = cml_const_tensor(n, 0);
    int64_t *x = NULL, *z = NULL;
    double *sv = NULL;
    size_t nx = 0, nz = 0, ns = 0;
    int rc = -1;
    if (!cml_const_ints(n, 0, &x, &nx) || !cml_const_floats(n, 1, &sv, &ns) ||
        (zt && !cml_const_ints(n, 2, &z, &nz)) || ns == 0 ||
        (nz && nz != ns) || xt->ndims > 10) {
        cml_refuse(c, "the int32 input, scale or zero point cannot be read");
        goto done;
    }
    int64_t axis = 0;
    uint64_t inner = 1;
    if (ns > 1) {
        if (!cml_axis(cml_attr_i(n, "axis"), (int)xt->ndims, &axis) ||
            xt->dims[axis] != (int64_t)ns) {
            cml_refuse(c, "axis out of range or the scale's length is not the axis' dim");
            goto done;
        }
        for (size_t k = (size_t)axis + 1; k < xt->ndims; k++)
            inner *= (uint64_t)xt->dims[k];
    }
    MilTensor *t = mil_tensor_new(MIL_FP32, (int)xt->ndims, xt->dims, NULL);
    for (size_t i = 0; i < nx; i++) {
        size_t j = ns > 1 ? (size_t)((i / inner) % ns) : 0;
        int64_t d = x[i] - (nz ? z[j] : 0);
        if (llabs(d) >= QT_EXACT) {
            mil_tensor_free(t);
            cml_refuse(c, "int32 value %lld: float32 is exact only below 2^24 in magnitude",
                       (long long)d);
            goto done;
        }
        ((float *)t->data)[i] = (float)d * (float)sv[j];
    }
    const char *k = cml_const(c, t);
    MilOp *op = cml_op(c, "identity");
    mil_op_in(op, "x", k);
    rc = cml_out(c, op, n, 0);
done:
    free(x);
    free(z);
    free(sv);
    return rc;
}

static const CmLowerRule qt_lower[] = {
    {"QuantizeLinear", lower_quant}, {"DequantizeLinear", lower_quant},
    {"DynamicQuantizeLinear", lower_dql},
    {"MatMulInteger", lower_integer}, {"ConvInteger", lower_integer},
    {"QLinearMatMul", lower_qlinear}, {"QLinearConv", lower_qlinear},
};

static int raise_quant(CmRaise *r, const MilOp *op)
{
    bool q = !strcmp(op->type, "quantize");
    const char *in[3] = {cmr_in(r, op, "input", 0), cmr_in(r, op, "scale", 0),
                         cmr_in(r, op, "zero_point", 0)};
    if (q && !in[2]) {
        /* ONNX's absent zero point means uint8; MIL says the type itself */
        const char *dt = cmr_string(cmr_const(r, op, "output_dtype"));
        if (dt && !strcmp(dt, "int8")) {
            MilTensor *z = mil_tensor_new(MIL_INT8, 0, NULL, NULL);
            in[2] = cmr_init_tensor(r, z);
            mil_tensor_free(z);
        }
    }
    IrNode *node;
    if (cmr_simple(r, op, q ? "QuantizeLinear" : "DequantizeLinear", in[2] ? 3 : 2, in,
                   &node) < 0)
        return -1;
    const MilTensor *a = cmr_const(r, op, "axis");
    int64_t *v;
    size_t nv;
    if (a && cmr_ints(a, &v, &nv)) {
        if (nv == 1)
            ir_node_set_attr(node, ir_attr_int("axis", v[0]));
        free(v);
    }
    return 0;
}

static const CmRaiseRule qt_raise[] = {
    {"quantize", raise_quant}, {"dequantize", raise_quant},
};

CM_FAMILY(cm_family_quant, "quant", qt_lower, qt_raise);
