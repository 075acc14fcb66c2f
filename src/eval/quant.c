/* Quantization kernels (ai.onnx): QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearConv, QLinearMatMul, ConvInteger (10) and
 * MatMulInteger (10).
 *
 * QuantizeLinear 10 (per-tensor), 13 (axis: per-axis), 19 (float8 outputs,
 * saturate), 21 (block_size, int16/uint16/int4/uint4, output_dtype),
 * 23 (float4e2m1, precision, scale type independent of x), 24 (float8e8m0
 * scales), 25 (int2/uint2); DequantizeLinear alike (output_dtype from 23).
 * DynamicQuantizeLinear 11; QLinearConv 10; QLinearMatMul 10 and 21
 * (float16/bfloat16 scales, float8 operands).
 *
 * Subtle points:
 * - Integer results round half to even, then add the zero point, then
 *   saturate to the type's range. Float8/float4 results are
 *   x / scale + zero_point converted with round-to-nearest-even (and
 *   saturation as the attribute says; float4 always saturates); adding
 *   the zero point turns -0 into +0 as the spec's formula does.
 * - x / y_scale is computed in the precision of y_scale's type (or of the
 *   `precision` attribute): both operands and the quotient are rounded to
 *   that type, as the reference does with numpy arrays of that type.
 * - The requantization multipliers of QLinearConv/QLinearMatMul
 *   (a_scale * b_scale / y_scale) are computed in the scales' type, the
 *   accumulators exactly in int64; the product is taken in double.
 * - A scale with one element is per-tensor whatever its rank (zero points
 *   of shape [1] beside a scalar scale are common); a zero point must have
 *   as many elements as its scale.
 * - NaN results saturate to the zero point.
 * - ConvInteger and MatMulInteger run on the nn family's conv and matmul
 *   (kernels.h) in double: zero-point-shifted 8-bit values have products
 *   below 2^16, so their sums stay exact far beyond any real reduction
 *   length, and the int32 result wraps like an int32 accumulator would. */
#include <math.h>
#include <string.h>

#include "eval/eval.h"
#include "base/fconv.h"
#include "eval/kernels.h"

/* ---- element helpers ------------------------------------------------- */

static bool ev_q_is_small_float(int32_t dt)
{
    return (dt >= IR_FLOAT8E4M3FN && dt <= IR_FLOAT8E5M2FNUZ) ||
           dt == IR_FLOAT4E2M1;
}

/* Range of an integer quantized type; false for other types. */
static bool ev_q_range(int32_t dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case IR_INT8:   *lo = -128; *hi = 127; return true;
    case IR_UINT8:  *lo = 0; *hi = 255; return true;
    case IR_INT16:  *lo = -32768; *hi = 32767; return true;
    case IR_UINT16: *lo = 0; *hi = 65535; return true;
    case IR_INT32:  *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case IR_INT4:   *lo = -8; *hi = 7; return true;
    case IR_UINT4:  *lo = 0; *hi = 15; return true;
    case IR_INT2:   *lo = -2; *hi = 1; return true;
    case IR_UINT2:  *lo = 0; *hi = 3; return true;
    default:        return false;
    }
}

/* Whether dt is a quantized type of QuantizeLinear/DequantizeLinear at
 * version ver (int32 excluded: only DequantizeLinear takes it). */
static bool ev_q_type_ok(int32_t dt, int64_t ver)
{
    switch (dt) {
    case IR_INT8: case IR_UINT8:
        return true;
    case IR_FLOAT8E4M3FN: case IR_FLOAT8E4M3FNUZ:
    case IR_FLOAT8E5M2: case IR_FLOAT8E5M2FNUZ:
        return ver >= 19;
    case IR_INT16: case IR_UINT16: case IR_INT4: case IR_UINT4:
        return ver >= 21;
    case IR_FLOAT4E2M1:
        return ver >= 23;
    case IR_INT2: case IR_UINT2:
        return ver >= 25;
    default:
        return false;
    }
}

/* Round half to even (|v| < 2^52; larger values are integers already). */
static double ev_q_rne(double v)
{
    double r = floor(v), d = v - r;
    if (!(fabs(v) < 4503599627370496.0))
        return v;
    if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0))
        r += 1;
    return r;
}

/* v (already rounded) clamped to [lo, hi]; NaN gives `nan`. */
static int64_t ev_q_sat(double v, int64_t lo, int64_t hi, int64_t nan)
{
    if (v != v)
        return nan;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

/* v rounded to the floating type dt (float16/bfloat16 through float, as
 * numpy computes them); other types keep float precision. */
static double ev_q_round_to(int32_t dt, double v)
{
    float f = (float)v;
    if (dt == IR_DOUBLE)
        return v;
    if (dt == IR_FLOAT16)
        return half_f16_to_f32(half_f32_to_f16(f));
    if (dt == IR_BFLOAT16)
        return half_bf16_to_f32(half_f32_to_bf16(f));
    return f;
}

/* Stores a quantized value: integer types take rne(q) + zp saturated,
 * small floats take q + zp converted. */
static void ev_q_store(EvValue *y, size_t k, double q, double zp, bool saturate)
{
    int64_t lo, hi;
    if (ev_q_is_small_float(y->dtype)) {
        float v = (float)(q + zp);
        bool sat = saturate || y->dtype == IR_FLOAT4E2M1;
        ((uint8_t *)y->data)[k] = tk_f8_from_float(y->dtype, v, sat);
        return;
    }
    if (!ev_q_range(y->dtype, &lo, &hi))
        return;
    ev_set_i(y, k, ev_q_sat(ev_q_rne(q) + zp, lo, hi, ev_q_sat(zp, lo, hi, 0)));
}

/* ---- granularity: which scale an element uses ------------------------ */

enum { EV_QM_TENSOR, EV_QM_AXIS, EV_QM_BLOCK };

typedef struct EvQMap {
    int kind;
    size_t inner, dax, sax, block;
} EvQMap;

static size_t ev_q_idx(const EvQMap *m, size_t k)
{
    size_t o, rem;
    switch (m->kind) {
    case EV_QM_AXIS:
        return (k / m->inner) % m->dax;
    case EV_QM_BLOCK:
        o = k / (m->inner * m->dax);
        rem = k % (m->inner * m->dax);
        return (o * m->sax + rem / m->inner / m->block) * m->inner +
               rem % m->inner;
    default:
        return 0;
    }
}

static int ev_q_blocked(EvCtx *c, const EvValue *x, const EvValue *s,
                        size_t ax, int64_t block, EvQMap *m)
{
    if (s->rank != x->rank)
        return ev_fail(c, "blocked scale must have the input's rank %zu", x->rank);
    for (size_t d = 0; d < x->rank; d++)
        if (d != ax && s->dims[d] != x->dims[d])
            return ev_fail(c, "scale dim %zu is %lld, input has %lld", d,
                           (long long)s->dims[d], (long long)x->dims[d]);
    if ((x->dims[ax] + block - 1) / block != s->dims[ax])
        return ev_fail(c, "block_size %lld does not fit %lld scales for dim %lld",
                       (long long)block, (long long)s->dims[ax],
                       (long long)x->dims[ax]);
    m->kind = EV_QM_BLOCK;
    m->block = (size_t)block;
    m->sax = (size_t)s->dims[ax];
    return 0;
}

/* The granularity of scale s over x (axis, block_size as the version
 * allows); checks the zero point's size too. */
static int ev_q_map(EvCtx *c, const EvValue *x, const EvValue *s,
                    const EvValue *zp, EvQMap *m)
{
    int64_t axis = c->ver >= 13 ? ev_attr_i_or(c, "axis", 1) : 1;
    int64_t block = c->ver >= 21 ? ev_attr_i(c, "block_size") : 0;
    size_t ax = 0;

    memset(m, 0, sizeof *m);
    if (zp && zp->numel != s->numel)
        return ev_fail(c, "zero point has %zu elements, scale %zu", zp->numel, s->numel);
    if (block < 0)
        return ev_fail(c, "negative block_size %lld", (long long)block);
    if (block == 0 && s->numel == 1 && s->rank <= 1)
        return 0;
    if (c->ver < 13)
        return ev_fail(c, "scale must be a scalar before version 13");
    if (x->rank == 0)
        return ev_fail(c, "per-axis scale for a scalar input");
    if (ev_axis(c, "axis", axis, x->rank, 0, &ax) < 0)
        return -1;
    m->inner = ev_dims_prod(x->dims, ax + 1, x->rank);
    m->dax = (size_t)x->dims[ax];
    if (block > 0)
        return ev_q_blocked(c, x, s, ax, block, m);
    if (s->rank != 1 || s->dims[0] != x->dims[ax])
        return ev_fail(c, "per-axis scale must be 1-D of length %lld",
                       (long long)x->dims[ax]);
    m->kind = EV_QM_AXIS;
    return 0;
}

/* Optional input i as a tensor (NULL when absent; fails on non-tensor). */
static int ev_q_opt(EvCtx *c, size_t i, EvValue **t)
{
    *t = ev_in(c, i);
    if (*t && (*t)->kind != EV_TENSOR)
        return ev_fail(c, "input %zu must be a tensor", i);
    return 0;
}

/* ---- QuantizeLinear / DequantizeLinear ------------------------------- */

static int ev_q_out_type(EvCtx *c, const EvValue *zp, int32_t *dt)
{
    int64_t od = c->ver >= 21 ? ev_attr_i(c, "output_dtype") : 0;

    if (zp && od && od != zp->dtype)
        return ev_fail(c, "output_dtype %lld differs from y_zero_point type %d",
                       (long long)od, zp->dtype);
    *dt = zp ? zp->dtype : od ? (int32_t)od : IR_UINT8;
    if (!ev_q_type_ok(*dt, c->ver))
        return ev_fail(c, "unsupported output type %d", *dt);
    return 0;
}

static int ev_quantizelinear(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *s = ev_in_tensor(c, 1), *zp, *y;
    bool saturate = c->ver >= 19 ? ev_attr_i_or(c, "saturate", 1) != 0 : true;
    int32_t dt = 0, prec;
    EvQMap m;

    if (!x || !s || ev_q_opt(c, 2, &zp) < 0 || ev_q_out_type(c, zp, &dt) < 0)
        return -1;
    if (x->dtype != IR_FLOAT && x->dtype != IR_FLOAT16 &&
        x->dtype != IR_BFLOAT16 && x->dtype != IR_INT32)
        return ev_fail(c, "unsupported input type %d", x->dtype);
    if (s->dtype == IR_STRING || s->dtype == IR_BOOL)
        return ev_fail(c, "unsupported scale type %d", s->dtype);
    prec = c->ver >= 23 ? (int32_t)ev_attr_i(c, "precision") : 0;
    if (!prec)
        prec = x->dtype == IR_INT32 ? IR_DOUBLE : s->dtype;
    if (ev_q_map(c, x, s, zp, &m) < 0)
        return -1;
    y = ev_out_tensor(c, 0, dt, x->rank, x->dims);
    if (!y)
        return -1;
    for (size_t k = 0; k < x->numel; k++) {
        size_t i = ev_q_idx(&m, k);
        double xv = ev_q_round_to(prec, ev_get_f(x, k));
        double sv = ev_q_round_to(prec, ev_get_f(s, i));
        double q = ev_q_round_to(prec, xv / sv);
        ev_q_store(y, k, q, zp ? ev_get_f(zp, i) : 0.0, saturate);
    }
    return 0;
}

static int ev_dq_types(EvCtx *c, const EvValue *x, const EvValue *s,
                       const EvValue *zp, int32_t *dt)
{
    int64_t od = c->ver >= 23 ? ev_attr_i(c, "output_dtype") : 0;

    if (!ev_q_type_ok(x->dtype, c->ver) && x->dtype != IR_INT32)
        return ev_fail(c, "unsupported input type %d", x->dtype);
    if (zp && zp->dtype != x->dtype)
        return ev_fail(c, "x_zero_point type %d differs from x type %d",
                       zp->dtype, x->dtype);
    if (s->dtype != IR_FLOAT && s->dtype != IR_FLOAT16 &&
        s->dtype != IR_BFLOAT16 && s->dtype != IR_FLOAT8E8M0)
        return ev_fail(c, "unsupported scale type %d", s->dtype);
    *dt = c->ver < 19 ? IR_FLOAT : od ? (int32_t)od : s->dtype;
    if (*dt != IR_FLOAT && *dt != IR_FLOAT16 && *dt != IR_BFLOAT16)
        return ev_fail(c, "unsupported output type %d", *dt);
    return 0;
}

static int ev_dequantizelinear(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *s = ev_in_tensor(c, 1), *zp, *y;
    bool fx;
    int32_t dt = 0;
    EvQMap m;

    if (!x || !s || ev_q_opt(c, 2, &zp) < 0 || ev_dq_types(c, x, s, zp, &dt) < 0 ||
        ev_q_map(c, x, s, zp, &m) < 0)
        return -1;
    y = ev_out_tensor(c, 0, dt, x->rank, x->dims);
    if (!y)
        return -1;
    fx = ev_q_is_small_float(x->dtype);
    for (size_t k = 0; k < x->numel; k++) {
        size_t i = ev_q_idx(&m, k);
        double d;
        if (fx)
            d = ev_get_f(x, k) - (zp ? ev_get_f(zp, i) : 0.0);
        else /* as float32, as ONNX Runtime and the spec's tests take it:
                an int32 difference past 2^24 rounds here first */
            d = (float)(ev_get_i(x, k) - (zp ? ev_get_i(zp, i) : 0));
        ev_set_f(y, k, (float)(d * ev_get_f(s, i)));
    }
    return 0;
}

/* ---- DynamicQuantizeLinear ------------------------------------------- */

static int ev_dynamicquantizelinear(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *y, *ys, *yz;
    const float *xv;
    float lo = 0, hi = 0, scale, zpf;
    double zp;

    if (!x)
        return -1;
    if (x->dtype != IR_FLOAT)
        return ev_fail(c, "input must be float");
    xv = x->data;
    for (size_t k = 0; k < x->numel; k++) {
        if (xv[k] < lo)
            lo = xv[k];
        if (xv[k] > hi)
            hi = xv[k];
    }
    scale = (hi - lo) / 255.0f;
    zpf = scale != 0 ? 0.0f - lo / scale : 0.0f;
    zp = ev_q_rne(zpf < 0 ? 0 : zpf > 255 ? 255 : zpf);
    y = ev_out_tensor(c, 0, IR_UINT8, x->rank, x->dims);
    ys = ev_out_tensor(c, 1, IR_FLOAT, 0, NULL);
    yz = ev_out_tensor(c, 2, IR_UINT8, 0, NULL);
    if (!y || !ys || !yz)
        return -1;
    *(float *)ys->data = scale;
    *(uint8_t *)yz->data = (uint8_t)fc_clamp(zp, 0, 255);   /* NaN (from Inf inputs) gives 0 */
    for (size_t k = 0; k < x->numel; k++) {
        double q = scale != 0 ? (double)(xv[k] / scale) : 0.0;
        ev_q_store(y, k, q, zp, true);
    }
    return 0;
}

/* ---- shared by QLinearMatMul and QLinearConv ------------------------- */

/* A per-tensor or 1-D quantization parameter of length n (NULL = 0). */
static int ev_q_vec(EvCtx *c, const EvValue *t, size_t n, const char *what)
{
    if (!t || t->numel == 1)
        return 0;
    if (t->rank != 1 || t->numel != n)
        return ev_fail(c, "%s must be a scalar or 1-D of length %zu", what, n);
    return 0;
}

static double ev_q_at(const EvValue *t, size_t i)
{
    return !t ? 0.0 : ev_get_f(t, t->numel == 1 ? 0 : i);
}

static int64_t ev_q_at_i(const EvValue *t, size_t i)
{
    return !t ? 0 : ev_get_i(t, t->numel == 1 ? 0 : i);
}

/* a_scale * b_scale / y_scale rounded like the scales' type. */
static double ev_q_mult(int32_t dt, double as, double bs, double ys)
{
    return ev_q_round_to(dt, ev_q_round_to(dt, as * bs) / ys);
}

/* ---- QLinearMatMul --------------------------------------------------- */

typedef struct EvQMM {
    EvValue *a, *as, *az, *b, *bs, *bz, *ys, *yz;
    size_t m, k, n, batch;
    size_t *aoff, *boff;     /* per batch: element offset of each matrix */
    bool ints;               /* exact integer path */
    void *ca, *cb;           /* centred operands (int32 or double) */
    int64_t *iacc;
} EvQMM;

/* numpy.matmul shapes: output dims, batch broadcasting offsets. */
static int ev_qmm_shape(EvCtx *c, EvQMM *q, size_t *rank, int64_t *dims)
{
    const EvValue *a = q->a, *b = q->b;
    size_t ra = a->rank, rb = b->rank, rba, rbb, rbo;
    int64_t bd[EV_MAX_RANK];

    if (ra == 0 || rb == 0)
        return ev_fail(c, "operands of a matrix product cannot be scalars");
    q->m = ra >= 2 ? (size_t)a->dims[ra - 2] : 1;
    q->k = (size_t)a->dims[ra - 1];
    q->n = rb >= 2 ? (size_t)b->dims[rb - 1] : 1;
    if ((size_t)b->dims[rb >= 2 ? rb - 2 : 0] != q->k)
        return ev_fail(c, "inner dims differ: %zu and %lld", q->k,
                       (long long)b->dims[rb >= 2 ? rb - 2 : 0]);
    rba = ra >= 2 ? ra - 2 : 0;
    rbb = rb >= 2 ? rb - 2 : 0;
    rbo = rba > rbb ? rba : rbb;
    for (size_t i = 0; i < rbo; i++) {
        int64_t da = i + rba >= rbo ? a->dims[i + rba - rbo] : 1;
        int64_t db = i + rbb >= rbo ? b->dims[i + rbb - rbo] : 1;
        if (da != db && da != 1 && db != 1)
            return ev_fail(c, "batch dims %lld and %lld do not broadcast",
                           (long long)da, (long long)db);
        bd[i] = da == 1 ? db : da;
    }
    *rank = 0;
    for (size_t i = 0; i < rbo; i++)
        dims[(*rank)++] = bd[i];
    if (ra >= 2)
        dims[(*rank)++] = (int64_t)q->m;
    if (rb >= 2)
        dims[(*rank)++] = (int64_t)q->n;
    q->batch = ev_dims_prod(bd, 0, rbo);
    q->aoff = ev_tmp(c, q->batch ? q->batch : 1, sizeof *q->aoff);
    q->boff = ev_tmp(c, q->batch ? q->batch : 1, sizeof *q->boff);
    for (size_t t = 0; t < q->batch; t++) {
        size_t rem = t, oa = 0, ob = 0, sa = q->m * q->k, sb = q->k * q->n;
        for (size_t i = rbo; i-- > 0;) {
            size_t idx = rem % (size_t)bd[i];
            rem /= (size_t)bd[i];
            if (i + rba >= rbo) {
                int64_t d = a->dims[i + rba - rbo];
                oa += (d == 1 ? 0 : idx) * sa;
                sa *= (size_t)d;
            }
            if (i + rbb >= rbo) {
                int64_t d = b->dims[i + rbb - rbo];
                ob += (d == 1 ? 0 : idx) * sb;
                sb *= (size_t)d;
            }
        }
        q->aoff[t] = oa;
        q->boff[t] = ob;
    }
    return 0;
}

/* int8/uint8, and the float8 types from version 21. */
static bool ev_qmm_type_ok(int32_t dt, int64_t ver)
{
    return dt == IR_INT8 || dt == IR_UINT8 ||
           (ver >= 21 && dt >= IR_FLOAT8E4M3FN && dt <= IR_FLOAT8E5M2FNUZ);
}

static int ev_qmm_check(EvCtx *c, const EvQMM *q)
{
    if (!ev_qmm_type_ok(q->a->dtype, c->ver) || (q->az && q->az->dtype != q->a->dtype))
        return ev_fail(c, "unsupported type %d for a or its zero point", q->a->dtype);
    if (!ev_qmm_type_ok(q->b->dtype, c->ver) || (q->bz && q->bz->dtype != q->b->dtype))
        return ev_fail(c, "unsupported type %d for b or its zero point", q->b->dtype);
    if (q->yz && !ev_qmm_type_ok(q->yz->dtype, c->ver))
        return ev_fail(c, "unsupported type %d for y", q->yz->dtype);
    if (ev_q_vec(c, q->as, q->m, "a_scale") < 0 ||
        ev_q_vec(c, q->az, q->m, "a_zero_point") < 0 ||
        ev_q_vec(c, q->bs, q->n, "b_scale") < 0 ||
        ev_q_vec(c, q->bz, q->n, "b_zero_point") < 0 ||
        ev_q_vec(c, q->ys, q->m, "y_scale") < 0 ||
        ev_q_vec(c, q->yz, q->m, "y_zero_point") < 0)
        return -1;
    return 0;
}

/* a - a_zero_point (per row) and b - b_zero_point (per column), as
 * int32 when both are integer types (the sums are then exact in int64),
 * else as doubles (float8 operands). */
static int ev_qmm_centre(EvCtx *c, EvQMM *q)
{
    q->ints = !ev_q_is_small_float(q->a->dtype) && !ev_q_is_small_float(q->b->dtype);
    size_t na = q->a->numel ? q->a->numel : 1, nb = q->b->numel ? q->b->numel : 1;
    size_t sz = q->ints ? sizeof(int32_t) : sizeof(double);
    q->ca = ev_tmp(c, na, sz);
    q->cb = ev_tmp(c, nb, sz);
    if (!q->ca || !q->cb)
        return ev_fail(c, "operands too large");
    for (size_t k = 0; k < q->a->numel; k++) {
        size_t row = q->k ? k / q->k % q->m : 0;
        if (q->ints)
            ((int32_t *)q->ca)[k] = (int32_t)(ev_get_i(q->a, k) - ev_q_at_i(q->az, row));
        else
            ((double *)q->ca)[k] = ev_get_f(q->a, k) - ev_q_at(q->az, row);
    }
    for (size_t k = 0; k < q->b->numel; k++) {
        size_t col = k % q->n;
        if (q->ints)
            ((int32_t *)q->cb)[k] = (int32_t)(ev_get_i(q->b, k) - ev_q_at_i(q->bz, col));
        else
            ((double *)q->cb)[k] = ev_get_f(q->b, k) - ev_q_at(q->bz, col);
    }
    return 0;
}

/* Row i of matrix product t into acc[n]. */
static void ev_qmm_row(const EvQMM *q, size_t t, size_t i, double *acc)
{
    size_t ao = q->aoff[t] + i * q->k, bo = q->boff[t];
    if (q->ints) {
        const int32_t *a = (const int32_t *)q->ca + ao, *b = (const int32_t *)q->cb + bo;
        for (size_t j = 0; j < q->n; j++)
            q->iacc[j] = 0;
        for (size_t l = 0; l < q->k; l++) {
            int64_t av = a[l];
            const int32_t *br = b + l * q->n;
            for (size_t j = 0; j < q->n; j++)
                q->iacc[j] += av * br[j];
        }
        for (size_t j = 0; j < q->n; j++)
            acc[j] = (double)q->iacc[j];
        return;
    }
    const double *a = (const double *)q->ca + ao, *b = (const double *)q->cb + bo;
    for (size_t j = 0; j < q->n; j++)
        acc[j] = 0;
    for (size_t l = 0; l < q->k; l++)
        for (size_t j = 0; j < q->n; j++)
            acc[j] += a[l] * b[l * q->n + j];
}

static int ev_qlinearmatmul(EvCtx *c)
{
    EvQMM q = { 0 };
    size_t rank = 0;
    int64_t dims[EV_MAX_RANK];
    EvValue *y;
    double *acc;

    q.a = ev_in_tensor(c, 0);
    q.as = ev_in_tensor(c, 1);
    q.b = ev_in_tensor(c, 3);
    q.bs = ev_in_tensor(c, 4);
    q.ys = ev_in_tensor(c, 6);
    if (!q.a || !q.as || !q.b || !q.bs || !q.ys || ev_q_opt(c, 2, &q.az) < 0 ||
        ev_q_opt(c, 5, &q.bz) < 0 || ev_q_opt(c, 7, &q.yz) < 0)
        return -1;
    if (ev_qmm_shape(c, &q, &rank, dims) < 0 || ev_qmm_check(c, &q) < 0)
        return -1;
    y = ev_out_tensor(c, 0, q.yz ? q.yz->dtype : q.a->dtype, rank, dims);
    if (!y)
        return -1;
    if (y->numel == 0)
        return 0;
    if (ev_qmm_centre(c, &q) < 0)
        return -1;
    acc = ev_tmp(c, q.n, sizeof *acc);
    q.iacc = ev_tmp(c, q.n, sizeof *q.iacc);
    for (size_t t = 0, k = 0; t < q.batch; t++)
        for (size_t i = 0; i < q.m; i++) {
            ev_qmm_row(&q, t, i, acc);
            for (size_t j = 0; j < q.n; j++, k++) {
                double mult = ev_q_mult(q.as->dtype, ev_q_at(q.as, i),
                                        ev_q_at(q.bs, j), ev_q_at(q.ys, i));
                ev_q_store(y, k, acc[j] * mult, ev_q_at(q.yz, i), true);
            }
        }
    return 0;
}

/* ---- QLinearConv ----------------------------------------------------- */

typedef struct EvQConv {
    size_t sp;                        /* spatial rank */
    int64_t n, cin, m, group;
    int64_t in[EV_MAX_RANK], k[EV_MAX_RANK], out[EV_MAX_RANK];
    int64_t stride[EV_MAX_RANK], dil[EV_MAX_RANK], pad[EV_MAX_RANK];
} EvQConv;

/* An optional INTS attribute of `want` values >= lo, or `dflt` each. */
static int ev_qc_ints(EvCtx *c, const char *name, size_t want, int64_t lo,
                      int64_t dflt, int64_t *dst)
{
    const int64_t *v;
    long n = ev_attr_ints(c, name, &v);
    for (size_t i = 0; i < want; i++)
        dst[i] = dflt;
    if (n < 0)
        return 0;
    if ((size_t)n != want)
        return ev_fail(c, "%s has %ld values, expected %zu", name, n, want);
    for (size_t i = 0; i < want; i++) {
        if (v[i] < lo || v[i] > ((int64_t)1 << 24))
            return ev_fail(c, "%s value %lld out of range", name, (long long)v[i]);
        dst[i] = v[i];
    }
    return 0;
}

/* Output dims and begin pads from auto_pad / pads. */
static int ev_qc_geometry(EvCtx *c, EvQConv *g)
{
    const char *ap = ev_attr_s(c, "auto_pad");
    int64_t pads[2 * EV_MAX_RANK];
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");

    if (!same && strcmp(ap, "VALID") && strcmp(ap, "NOTSET"))
        return ev_fail(c, "unknown auto_pad '%s'", ap);
    if (ev_qc_ints(c, "strides", g->sp, 1, 1, g->stride) < 0 ||
        ev_qc_ints(c, "dilations", g->sp, 1, 1, g->dil) < 0 ||
        ev_qc_ints(c, "pads", 2 * g->sp, 0, 0, pads) < 0)
        return -1;
    for (size_t d = 0; d < g->sp; d++) {
        int64_t ext = (g->k[d] - 1) * g->dil[d] + 1, o;
        if (same) {
            int64_t total;
            o = (g->in[d] + g->stride[d] - 1) / g->stride[d];
            total = (o - 1) * g->stride[d] + ext - g->in[d];
            total = total < 0 ? 0 : total;
            g->pad[d] = ap[5] == 'U' ? total / 2 : total - total / 2;
        } else {
            int64_t span = g->in[d] - ext;
            if (ap[0] == 'N') {
                g->pad[d] = pads[d];
                span += pads[d] + pads[d + g->sp];
            } else {
                g->pad[d] = 0;
            }
            if (span < 0)
                return ev_fail(c, "kernel larger than padded input on axis %zu", d);
            o = span / g->stride[d] + 1;
        }
        g->out[d] = o;
    }
    return 0;
}

static int ev_qc_shapes(EvCtx *c, EvQConv *g, const EvValue *x, const EvValue *w)
{
    const int64_t *ks;
    long nk;

    if (x->rank < 3 || w->rank != x->rank)
        return ev_fail(c, "x must be at least 3-D and w of the same rank");
    g->sp = x->rank - 2;
    g->n = x->dims[0];
    g->cin = x->dims[1];
    g->m = w->dims[0];
    g->group = ev_attr_i(c, "group");
    if (g->group < 1 || g->cin % g->group || g->m % g->group ||
        w->dims[1] != g->cin / g->group)
        return ev_fail(c, "group %lld does not fit %lld input and %lld output channels",
                       (long long)g->group, (long long)g->cin, (long long)g->m);
    nk = ev_attr_ints(c, "kernel_shape", &ks);
    if (nk >= 0 && (size_t)nk != g->sp)
        return ev_fail(c, "kernel_shape has %ld values", nk);
    for (size_t d = 0; d < g->sp; d++) {
        g->in[d] = x->dims[d + 2];
        g->k[d] = w->dims[d + 2];
        if (nk >= 0 && ks[d] != g->k[d])
            return ev_fail(c, "kernel_shape differs from the weights");
    }
    return ev_qc_geometry(c, g);
}

/* ceil(a / b) for b > 0. */
static int64_t ev_qc_ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* Adds one input channel plane xp times one kernel wp (both centred) to
 * the output plane acc: for each kernel tap, the output positions whose
 * input falls inside the plane form a box, swept row by row. */
static void ev_qc_plane(const EvQConv *g, const int32_t *xp, const int32_t *wp,
                        int64_t *acc)
{
    size_t sp = g->sp, kn = ev_dims_prod(g->k, 0, sp), last = sp - 1;
    int64_t lo[EV_MAX_RANK], hi[EV_MAX_RANK], o[EV_MAX_RANK], shift[EV_MAX_RANK];
    size_t xs[EV_MAX_RANK], os[EV_MAX_RANK];

    ev_strides(sp, g->in, xs);
    ev_strides(sp, g->out, os);
    for (size_t kk = 0; kk < kn; kk++) {
        int64_t wv = wp[kk];
        size_t rem = kk;
        bool empty = false;
        if (!wv)
            continue;
        for (size_t d = sp; d-- > 0;) {
            int64_t kd = (int64_t)(rem % (size_t)g->k[d]);
            rem /= (size_t)g->k[d];
            /* input = o * stride + shift must lie in [0, in) */
            shift[d] = kd * g->dil[d] - g->pad[d];
            lo[d] = ev_qc_ceil_div(-shift[d], g->stride[d]);
            hi[d] = ev_qc_ceil_div(g->in[d] - shift[d], g->stride[d]);
            lo[d] = lo[d] < 0 ? 0 : lo[d];
            hi[d] = hi[d] > g->out[d] ? g->out[d] : hi[d];
            empty |= lo[d] >= hi[d];
        }
        if (empty)
            continue;
        memcpy(o, lo, sp * sizeof *o);
        for (;;) {
            size_t xb = 0, ob = 0;
            for (size_t d = 0; d < last; d++) {
                xb += (size_t)(o[d] * g->stride[d] + shift[d]) * xs[d];
                ob += (size_t)o[d] * os[d];
            }
            for (int64_t j = lo[last]; j < hi[last]; j++)
                acc[ob + (size_t)j] +=
                    wv * xp[xb + (size_t)(j * g->stride[last] + shift[last])];
            size_t d = last;
            while (d-- > 0 && ++o[d] == hi[d])
                o[d] = lo[d];
            if (d == (size_t)-1)
                break;
        }
    }
}

/* x - x_zero_point and w - w_zero_point (per output channel) as int32. */
static int ev_qc_centre(EvCtx *c, const EvValue *x, const EvValue *xz,
                        const EvValue *w, const EvValue *wz, const EvQConv *g,
                        int32_t **xo, int32_t **wo)
{
    size_t per = g->m ? w->numel / (size_t)g->m : 0;
    int64_t zx = ev_q_at_i(xz, 0);

    *xo = ev_tmp(c, x->numel ? x->numel : 1, sizeof **xo);
    *wo = ev_tmp(c, w->numel ? w->numel : 1, sizeof **wo);
    if (!*xo || !*wo)
        return ev_fail(c, "tensor too large");
    for (size_t k = 0; k < x->numel; k++)
        (*xo)[k] = (int32_t)(ev_get_i(x, k) - zx);
    for (size_t k = 0; k < w->numel; k++)
        (*wo)[k] = (int32_t)(ev_get_i(w, k) - ev_q_at_i(wz, k / per));
    return 0;
}

static int ev_qc_check(EvCtx *c, EvValue *const *t, const EvQConv *g)
{
    static const char *const names[] = {
        "x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
        "y_scale", "y_zero_point", "B"
    };
    for (int i = 0; i < 9; i++) {
        bool quant = i == 0 || i == 2 || i == 3 || i == 5 || i == 7;
        size_t n = i == 4 || i == 5 || i == 8 ? (size_t)g->m : 1;
        if (!t[i])
            continue;
        if (quant && t[i]->dtype != IR_INT8 && t[i]->dtype != IR_UINT8)
            return ev_fail(c, "%s must be int8 or uint8", names[i]);
        if (i == 8 && t[i]->dtype != IR_INT32)
            return ev_fail(c, "B must be int32");
        if (i != 0 && i != 3 && (t[i]->numel != 1 || i == 8) &&
            (t[i]->rank != 1 || t[i]->numel != n))
            return ev_fail(c, "%s must have 1 or %zu elements", names[i], n);
    }
    return 0;
}

static int ev_qlinearconv(EvCtx *c)
{
    EvValue *t[9], *y;
    EvQConv g;
    int32_t *xz, *wz;
    int64_t dims[EV_MAX_RANK], *acc;
    size_t per, k = 0, cpg, kn, xin;

    for (size_t i = 0; i < 9; i++) {
        bool opt = i == 2 || i == 5 || i == 7 || i == 8;
        if (opt ? ev_q_opt(c, i, &t[i]) < 0 : !(t[i] = ev_in_tensor(c, i)))
            return -1;
    }
    if (ev_qc_shapes(c, &g, t[0], t[3]) < 0 || ev_qc_check(c, t, &g) < 0 ||
        ev_qc_centre(c, t[0], t[2], t[3], t[5], &g, &xz, &wz) < 0)
        return -1;
    dims[0] = g.n;
    dims[1] = g.m;
    memcpy(dims + 2, g.out, g.sp * sizeof *dims);
    y = ev_out_tensor(c, 0, t[7] ? t[7]->dtype : t[0]->dtype, t[0]->rank, dims);
    if (!y)
        return -1;
    per = ev_dims_prod(g.out, 0, g.sp);
    acc = ev_tmp(c, per ? per : 1, sizeof *acc);
    cpg = (size_t)(g.cin / g.group);
    kn = ev_dims_prod(g.k, 0, g.sp);
    xin = ev_dims_prod(g.in, 0, g.sp);
    for (int64_t b = 0; b < g.n; b++)
        for (int64_t oc = 0; oc < g.m; oc++) {
            size_t c0 = (size_t)(oc / (g.m / g.group)) * cpg;
            double mult = ev_q_mult(IR_FLOAT, ev_q_at(t[1], 0),
                                    ev_q_at(t[4], (size_t)oc), ev_q_at(t[6], 0));
            int64_t bias = ev_q_at_i(t[8], (size_t)oc);
            for (size_t p = 0; p < per; p++)
                acc[p] = bias;
            for (size_t ci = 0; ci < cpg; ci++)
                ev_qc_plane(&g, xz + ((size_t)b * (size_t)g.cin + c0 + ci) * xin,
                            wz + ((size_t)oc * cpg + ci) * kn, acc);
            for (size_t p = 0; p < per; p++, k++)
                ev_q_store(y, k, (double)acc[p] * mult, ev_q_at(t[7], 0), true);
        }
    return 0;
}

/* ---- ConvInteger, MatMulInteger ---------------------------------------- */

/* A zero point of an 8-bit input: absent (0), a scalar, or per_len
 * values (per output channel or row/column; 0 = per tensor only). Fills
 * *zp with 1 or per_len values and *n with how many. */
static int ev_zero_point(EvCtx *c, size_t i, const EvValue *like, size_t per_len,
                         const char *what, const int64_t **zp, size_t *n)
{
    EvValue *z;
    static const int64_t zero = 0;
    *zp = &zero;
    *n = 1;
    if (ev_opt_tensor(c, i, like->dtype, what, &z) < 0)
        return -1;
    if (!z)
        return 0;
    if (z->numel != 1 && (per_len == 0 || z->numel != per_len || z->rank != 1))
        return ev_fail(c, "%s has %zu elements; needs 1%s", what, z->numel,
                       per_len ? " or one per channel" : "");
    int64_t *v = ev_tmp(c, z->numel, sizeof *v);
    if (!v)
        return -1;
    for (size_t k = 0; k < z->numel; k++)
        v[k] = ev_get_i(z, k);
    *zp = v;
    *n = z->numel;
    return 0;
}

/* t - zp as doubles; zp has 1 value, or one per block of `block`
 * consecutive elements. */
static double *ev_shifted(EvCtx *c, const EvValue *t, const int64_t *zp, size_t nzp,
                          size_t block)
{
    double *v = ev_tmp(c, t->numel ? t->numel : 1, sizeof *v);
    for (size_t k = 0; v && k < t->numel; k++)
        v[k] = (double)(ev_get_i(t, k) - zp[nzp == 1 ? 0 : k / block % nzp]);
    return v;
}

/* ConvInteger: conv of (x - x_zero_point) and (w - w_zero_point) into
 * int32; padding reads x_zero_point, i.e. 0 after the shift. */
static int ev_convinteger(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *w = ev_in_tensor(c, 1), *y;
    EvGeom g;
    size_t groups, nxz, nwz;
    const int64_t *xz, *wz;
    if (!x || !w)
        return -1;
    if (!ev_is_8bit(x->dtype) || !ev_is_8bit(w->dtype))
        return ev_fail(c, "x and w must be int8 or uint8");
    if (ev_conv_shapes(c, x, w, false, &groups) < 0 ||
        ev_zero_point(c, 2, x, 0, "x_zero_point", &xz, &nxz) < 0 ||
        ev_zero_point(c, 3, w, (size_t)w->dims[0], "w_zero_point", &wz, &nwz) < 0 ||
        ev_win_read(c, x, w->dims + 2, false, &g) < 0 ||
        !(y = ev_conv_out(c, IR_INT32, x, w->dims[0], &g)))
        return -1;
    if (y->numel == 0)
        return 0;
    size_t per_m = w->dims[0] ? w->numel / (size_t)w->dims[0] : 1;
    double *xv = ev_shifted(c, x, xz, 1, 1), *wv = ev_shifted(c, w, wz, nwz, per_m);
    double *yv = ev_tmp(c, y->numel, sizeof *yv);
    if (!xv || !wv || !yv ||
        ev_conv_core(c, true, &g, (size_t)x->dims[0], (size_t)x->dims[1],
                     (size_t)w->dims[0], groups, xv, wv, NULL, yv) < 0)
        return -1;
    for (size_t k = 0; k < y->numel; k++)
        ev_set_i(y, k, fc_i64_sat(yv[k]));
    return 0;
}

/* MatMulInteger: (A - a_zero_point) x (B - b_zero_point) into int32, with
 * per-tensor zero points or per-row (A) / per-column (B) ones. */
static int ev_matmulinteger(EvCtx *c)
{
    EvValue *a = ev_in_tensor(c, 0), *b = ev_in_tensor(c, 1), *y;
    EvMM mm;
    size_t rank, nza, nzb;
    int64_t dims[EV_MAX_RANK];
    const int64_t *za, *zb;
    if (!a || !b)
        return -1;
    if (!ev_is_8bit(a->dtype) || !ev_is_8bit(b->dtype))
        return ev_fail(c, "A and B must be int8 or uint8");
    if (ev_mm_shape(c, a, b, &mm, &rank, dims) < 0 ||
        ev_zero_point(c, 2, a, mm.m, "a_zero_point", &za, &nza) < 0 ||
        ev_zero_point(c, 3, b, mm.n, "b_zero_point", &zb, &nzb) < 0 ||
        !(y = ev_out_tensor(c, 0, IR_INT32, rank, dims)))
        return -1;
    if (y->numel == 0)
        return 0;
    /* element e of A is in row e / k % m; of B in column e % n */
    double *av = ev_shifted(c, a, za, nza, mm.k ? mm.k : 1);
    double *bv = ev_shifted(c, b, zb, nzb, 1);
    double *yv = ev_tmp(c, y->numel, sizeof *yv);
    if (!av || !bv || !yv || ev_mm_real(c, &mm, true, av, bv, yv) < 0)
        return -1;
    for (size_t k = 0; k < y->numel; k++)
        ev_set_i(y, k, fc_i64_sat(yv[k]));
    return 0;
}

const EvOp ev_ops_quant[] = {
    { "", "QuantizeLinear", ev_quantizelinear },
    { "", "DequantizeLinear", ev_dequantizelinear },
    { "", "DynamicQuantizeLinear", ev_dynamicquantizelinear },
    { "", "QLinearMatMul", ev_qlinearmatmul },
    { "", "QLinearConv", ev_qlinearconv },
    { "", "ConvInteger", ev_convinteger },
    { "", "MatMulInteger", ev_matmulinteger },
    { NULL, NULL, NULL }
};
