/*
 * coreml/constexpr.c - the import's folding of MIL's constexpr_* ops
 * (prefix cx_): compressed weights, as coremltools' optimize.coreml
 * writes them (linear quantization, palettization, pruning), become the
 * dense constants they stand for, and so ONNX initializers.
 *
 * MIL facts (coremltools' defs, iOS16 and iOS18 compression):
 * - affine_dequantize (iOS16): scale * (quantized_data - zero_point),
 *   scale and zero_point scalars or vectors along `axis`; the output has
 *   scale's type. iOS16 writes its parameters as op attributes (the
 *   reader makes them inputs).
 * - blockwise_shift_scale (iOS18): scale * (data - offset), scale and
 *   offset of data's rank, each dim of data a whole multiple of scale's
 *   (the block size).
 * - cast: fp16 source_val to output_dtype fp32.
 * - lut_to_dense: iOS16 takes indices packed in uint8 from the least
 *   significant bit, log2(|lut|) bits each, and the output `shape`;
 *   iOS18 takes an unpacked indices tensor (uint1..uint8) and a lut of
 *   rank K + 2, [groups..., NUM_PALETTES, VECTOR_SIZE], whose first K dims
 *   divide the indices' dims (one table per block); a vector fills
 *   VECTOR_SIZE elements along vector_axis.
 * - sparse_to_dense: iOS16 takes a uint8 mask packed from the least
 *   significant bit and `shape`; iOS18 a uint1 mask of the output's shape.
 *   Set bits take nonzero_data's elements in order, the others are 0.
 * The arithmetic is float32, rounded once to the output's type (float16
 * products of int8 and float16 operands are exact in float32).
 *
 * Refused, naming the op: lut_to_sparse and sparse_blockwise_shift_scale
 * (iOS18's two-output sparse forms), and any malformed size.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "coreml/rules.h"

#define CX_MAX_RANK 8

/* Element i of t as a double; the caller checked i < cx_numel(t). */
static double cx_at(const MilTensor *t, size_t i)
{
    const uint8_t *p = t->data + i * mil_dtype_size(t->dtype);
    switch (t->dtype) {
    case MIL_FP32: {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case MIL_FP16: return half_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case MIL_INT8: case MIL_INT4: return (int8_t)p[0];
    case MIL_INT32: return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                                     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    case MIL_UINT32: return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                            (uint32_t)p[3] << 24;
    default: return p[0];     /* uint8, bool, uint1..uint6 (held unpacked) */
    }
}

/* Sets element i of t (fp32, fp16, or a byte type) to v. */
static void cx_put(MilTensor *t, size_t i, double v)
{
    uint8_t *p = t->data + i * mil_dtype_size(t->dtype);
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (t->dtype == MIL_FP32) {
        for (int b = 0; b < 4; b++)
            p[b] = (uint8_t)(u >> 8 * b);
    } else if (t->dtype == MIL_FP16) {
        uint16_t h = half_f32_to_f16(f);
        p[0] = (uint8_t)h;
        p[1] = (uint8_t)(h >> 8);
    } else {
        p[0] = (uint8_t)(int)v;   /* int8 as its two's complement byte */
    }
}

/* t's element count when its bytes hold exactly that many; else 0 with
 * *ok false. */
static size_t cx_numel(const MilTensor *t, bool *ok)
{
    uint64_t n;
    size_t w = t ? mil_dtype_size(t->dtype) : 0;
    *ok = w && t->rank >= 0 && t->rank <= CX_MAX_RANK && mil_tensor_numel(t, &n) &&
          n <= (1u << 30) && t->data && t->nbytes == (size_t)n * w;
    return *ok ? (size_t)n : 0;
}

/* The constant parameter `param` of op, whole, or NULL with err. */
static const MilTensor *cx_param(CmRaise *r, const MilOp *op, const char *param, size_t *n)
{
    const MilTensor *t = cmr_const(r, op, param);
    bool ok;
    *n = cx_numel(t, &ok);
    if (!ok)
        cmr_fail(r, "%s is not a constant tensor of its declared size", param);
    return ok ? t : NULL;
}

static bool cx_float_type(int32_t d)
{
    return d == MIL_FP32 || d == MIL_FP16;
}

/* The output: dtype, the rank and dims given. */
static MilTensor *cx_out(int32_t dtype, int rank, const int64_t *dims)
{
    return mil_tensor_new(dtype, rank, dims, NULL);
}

/* Index (in a tensor of dims `sd`, rank `rank`) of the block that holds
 * element i of a tensor of dims `dd`: each dim divided by dd[k] / sd[k]. */
static size_t cx_block(size_t i, int rank, const int64_t *dd, const int64_t *sd)
{
    size_t at = 0, stride = 1;
    for (int k = rank - 1; k >= 0; k--) {
        size_t c = i % (size_t)dd[k];
        i /= (size_t)dd[k];
        at += c / (size_t)(dd[k] / sd[k]) * stride;
        stride *= (size_t)sd[k];
    }
    return at;
}

static bool cx_divides(int rank, const int64_t *dd, const int64_t *sd)
{
    for (int k = 0; k < rank; k++)
        if (sd[k] <= 0 || dd[k] % sd[k])
            return false;
    return true;
}

/* affine_dequantize (iOS16): scale[c] * (q - zero_point[c]), c the index
 * along axis where scale (zero_point) is a vector. */
static int cx_affine(CmRaise *r, const MilOp *op)
{
    size_t nq, ns, nz, na;
    const MilTensor *q = cx_param(r, op, "quantized_data", &nq);
    const MilTensor *s = q ? cx_param(r, op, "scale", &ns) : NULL;
    const MilTensor *z = s ? cx_param(r, op, "zero_point", &nz) : NULL;
    const MilTensor *a = z ? cx_param(r, op, "axis", &na) : NULL;
    if (!a)
        return -1;
    int64_t axis = na == 1 ? (int64_t)cx_at(a, 0) : -1000;
    if (axis < 0)
        axis += q->rank;
    if (!cx_float_type(s->dtype) || axis < 0 || axis >= q->rank)
        return cmr_fail(r, "malformed scale or axis");
    size_t len = (size_t)q->dims[axis], inner = 1;
    for (int k = (int)axis + 1; k < q->rank; k++)
        inner *= (size_t)q->dims[k];
    if ((ns != 1 && ns != len) || (nz != 1 && nz != len))
        return cmr_fail(r, "scale or zero_point is neither a scalar nor one per element of "
                        "axis %lld", (long long)axis);
    MilTensor *out = cx_out(s->dtype, q->rank, q->dims);
    for (size_t i = 0; i < nq; i++) {
        size_t c = i / inner % len;
        float d = (float)cx_at(q, i) - (float)cx_at(z, nz == 1 ? 0 : c);
        cx_put(out, i, (float)cx_at(s, ns == 1 ? 0 : c) * d);
    }
    return cmr_const_value(r, op, out);
}

/* blockwise_shift_scale (iOS18): scale * (data - offset) per block. */
static int cx_blockwise(CmRaise *r, const MilOp *op)
{
    size_t nd, ns, no = 0;
    const MilTensor *d = cx_param(r, op, "data", &nd);
    const MilTensor *s = d ? cx_param(r, op, "scale", &ns) : NULL;
    const MilTensor *o = NULL;
    if (!s)
        return -1;
    if (mil_op_input(op, "offset") && !(o = cx_param(r, op, "offset", &no)))
        return -1;
    if (!cx_float_type(s->dtype) || s->rank != d->rank || !cx_divides(d->rank, d->dims, s->dims) ||
        (o && (o->rank != s->rank || no != ns)))
        return cmr_fail(r, "scale or offset does not divide data into blocks");
    MilTensor *out = cx_out(s->dtype, d->rank, d->dims);
    for (size_t i = 0; i < nd; i++) {
        size_t b = cx_block(i, d->rank, d->dims, s->dims);
        float x = (float)cx_at(d, i) - (o ? (float)cx_at(o, b) : 0.0f);
        cx_put(out, i, (float)cx_at(s, b) * x);
    }
    return cmr_const_value(r, op, out);
}

static int cx_cast(CmRaise *r, const MilOp *op)
{
    size_t n;
    const MilTensor *src = cx_param(r, op, "source_val", &n);
    const char *to = cmr_string(cmr_const(r, op, "output_dtype"));
    if (!src)
        return -1;
    if (!to || strcmp(to, "fp32") || src->dtype != MIL_FP16)
        return cmr_fail(r, "only fp16 to fp32 is a constexpr_cast");
    MilTensor *out = cx_out(MIL_FP32, src->rank, src->dims);
    for (size_t i = 0; i < n; i++)
        cx_put(out, i, cx_at(src, i));
    return cmr_const_value(r, op, out);
}

/* iOS16's `shape` (uint32) as dims; false when malformed. */
static bool cx_shape(const MilTensor *t, size_t n, int64_t *dims, size_t *numel)
{
    if (n > CX_MAX_RANK)
        return false;
    *numel = 1;
    for (size_t k = 0; k < n; k++) {
        dims[k] = (int64_t)cx_at(t, k);
        if (dims[k] > (1 << 30) || *numel > ((size_t)1 << 30) / (dims[k] ? (size_t)dims[k] : 1))
            return false;
        *numel *= (size_t)dims[k];
    }
    return true;
}

/* The value of `bits` bits at element i of LSB-first packed bytes p
 * (np bytes); false past the end. */
static bool cx_bits(const MilTensor *p, size_t np, size_t i, int bits, unsigned *v)
{
    *v = 0;
    for (int b = 0; b < bits; b++) {
        size_t bit = i * (size_t)bits + (size_t)b;
        if (bit / 8 >= np)
            return false;
        *v |= (unsigned)(p->data[bit / 8] >> (bit % 8) & 1) << b;
    }
    return true;
}

/* lut_to_dense, iOS16: packed indices into one table. */
static int cx_lut16(CmRaise *r, const MilOp *op)
{
    size_t ni, nl, ns, numel;
    const MilTensor *idx = cx_param(r, op, "indices", &ni);
    const MilTensor *lut = idx ? cx_param(r, op, "lut", &nl) : NULL;
    const MilTensor *sh = lut ? cx_param(r, op, "shape", &ns) : NULL;
    int64_t dims[CX_MAX_RANK];
    if (!sh)
        return -1;
    int bits = 0;
    while (bits < 9 && ((size_t)1 << bits) < nl)
        bits++;
    if (((size_t)1 << bits) != nl || bits < 1 || bits > 8 || !cx_shape(sh, ns, dims, &numel) ||
        ni * 8 < numel * (size_t)bits)
        return cmr_fail(r, "indices, lut and shape do not agree");
    MilTensor *out = cx_out(lut->dtype, (int)ns, dims);
    for (size_t i = 0; i < numel; i++) {
        unsigned v;
        (void)cx_bits(idx, ni, i, bits, &v);
        cx_put(out, i, cx_at(lut, v));
    }
    return cmr_const_value(r, op, out);
}

/* lut_to_dense, iOS18: a table per block of indices, vectors of V along
 * vector_axis. */
static int cx_lut18(CmRaise *r, const MilOp *op)
{
    size_t ni, nl, nv = 0;
    const MilTensor *idx = cx_param(r, op, "indices", &ni);
    const MilTensor *lut = idx ? cx_param(r, op, "lut", &nl) : NULL;
    if (!lut)
        return -1;
    int rank = idx->rank;
    if (lut->rank != rank + 2 || !cx_divides(rank, idx->dims, lut->dims))
        return cmr_fail(r, "lut is not [groups..., palettes, vector] over the indices");
    int64_t pal = lut->dims[rank], vec = lut->dims[rank + 1], axis = 0;
    if (vec > 1) {
        const MilTensor *a = cx_param(r, op, "vector_axis", &nv);
        if (!a || nv != 1)
            return a ? cmr_fail(r, "vector_axis missing") : -1;
        axis = (int64_t)cx_at(a, 0);
        axis += axis < 0 ? rank : 0;
        if (axis < 0 || axis >= rank)
            return cmr_fail(r, "vector_axis out of range");
    }
    int64_t dims[CX_MAX_RANK];
    size_t inner = 1;
    for (int k = 0; k < rank; k++) {
        dims[k] = idx->dims[k] * (k == axis ? vec : 1);
        inner *= k > axis ? (size_t)idx->dims[k] : 1;
    }
    MilTensor *out = cx_out(lut->dtype, rank, dims);
    for (size_t i = 0; i < ni; i++) {
        size_t g = cx_block(i, rank, idx->dims, lut->dims);
        unsigned v = (unsigned)cx_at(idx, i);
        if (v >= (unsigned)pal) {
            mil_tensor_free(out);
            return cmr_fail(r, "index %u past the %lld palettes", v, (long long)pal);
        }
        /* i = (outer * len + c) * inner + in; the vector runs along c */
        size_t in = i % inner, c = i / inner % (size_t)idx->dims[axis];
        size_t outer = i / inner / (size_t)idx->dims[axis];
        for (int64_t e = 0; e < vec; e++) {
            size_t at = ((outer * (size_t)dims[axis]) + c * (size_t)vec + (size_t)e) * inner + in;
            cx_put(out, at, cx_at(lut, (g * (size_t)pal + v) * (size_t)vec + (size_t)e));
        }
    }
    return cmr_const_value(r, op, out);
}

/* sparse_to_dense: set mask bits take nonzero_data in order. iOS16: the
 * mask packed in uint8 and `shape`; iOS18: a uint1 mask of the output's
 * dims. */
static int cx_sparse(CmRaise *r, const MilOp *op)
{
    size_t nd, nm, ns = 0, numel;
    const MilTensor *data = cx_param(r, op, "nonzero_data", &nd);
    const MilTensor *mask = data ? cx_param(r, op, "mask", &nm) : NULL;
    if (!mask)
        return -1;
    bool packed = mil_op_input(op, "shape") != NULL;
    int64_t dims[CX_MAX_RANK];
    int rank = mask->rank;
    if (packed) {
        const MilTensor *sh = cx_param(r, op, "shape", &ns);
        if (!sh || !cx_shape(sh, ns, dims, &numel) || nm * 8 < numel)
            return sh ? cmr_fail(r, "mask and shape do not agree") : -1;
        rank = (int)ns;
    } else {
        numel = nm;
        memcpy(dims, mask->dims, (size_t)rank * sizeof *dims);
    }
    MilTensor *out = cx_out(data->dtype, rank, dims);
    size_t k = 0;
    for (size_t i = 0; i < numel; i++) {
        unsigned bit = 0;
        if (packed)
            (void)cx_bits(mask, nm, i, 1, &bit);
        else
            bit = (unsigned)cx_at(mask, i) != 0;
        if (bit && k >= nd) {
            mil_tensor_free(out);
            return cmr_fail(r, "the mask sets more bits than nonzero_data has elements");
        }
        cx_put(out, i, bit ? cx_at(data, k++) : 0.0);
    }
    if (k != nd) {
        mil_tensor_free(out);
        return cmr_fail(r, "the mask sets %zu bits for %zu elements of nonzero_data", k, nd);
    }
    return cmr_const_value(r, op, out);
}

int cmx_fold(CmRaise *r, const MilOp *op)
{
    if (op->n_out != 1)
        return cmr_fail(r, "the two-output sparse forms of iOS18 (lut_to_sparse, "
                        "sparse_blockwise_shift_scale) are not folded yet");
    if (!strcmp(op->type, "constexpr_affine_dequantize"))
        return cx_affine(r, op);
    if (!strcmp(op->type, "constexpr_blockwise_shift_scale"))
        return cx_blockwise(r, op);
    if (!strcmp(op->type, "constexpr_cast"))
        return cx_cast(r, op);
    if (!strcmp(op->type, "constexpr_lut_to_dense"))
        return mil_op_input(op, "shape") ? cx_lut16(r, op) : cx_lut18(r, op);
    if (!strcmp(op->type, "constexpr_sparse_to_dense"))
        return cx_sparse(r, op);
    return cmr_fail(r, "this compressed-weight form is not folded");
}
