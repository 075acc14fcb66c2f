/* Elementwise ops of ai.onnx, every version:
 *   unary math: Abs Neg Exp Log Sqrt Reciprocal Floor Ceil Round Sign Sin
 *     Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Erf IsNaN IsInf Not
 *     BitwiseNot;
 *   Tanh and Shrink (the other activations are the activation family's,
 *     src/eval/activation.c, which maps through ev_map1 here);
 *   binary: Add Sub Mul Div Pow Mod And Or Xor BitShift BitwiseAnd
 *     BitwiseOr BitwiseXor Equal Less LessOrEqual Greater GreaterOrEqual;
 *   variadic: Max Min Sum Mean;  Where Clip Cast CastLike BitCast Identity.
 *
 * Subtle points:
 * - Floating types are computed in double and rounded once on store;
 *   integers are exact in int64/uint64 and wrap to their width on store
 *   (signed arithmetic goes through uint64 so that overflow is defined).
 *   Integer Div truncates toward zero; Div/Mod by an integer zero fails
 *   the node instead of trapping.
 * - Opset 1-6 binary ops broadcast only with broadcast=1, and then B's
 *   shape lines up with A's dims from `axis` (default: A's trailing dims);
 *   Max/Min/Sum/Mean before opset 8 need equal shapes.
 * - Mod with fmod=0 gives the divisor's sign (Python's %), fmod=1 the
 *   dividend's (C's fmod/%).
 * - Pow's base and exponent types may differ (opset 12+): integer base with
 *   integer exponent is exact by squaring (a negative exponent truncates
 *   1/base^n toward zero); a float on either side goes through pow().
 * - Cast: string <-> number uses the spec's literals (INF, +INF, -INF, NaN,
 *   any case) when parsing, and numpy's shortest round-trip formatting
 *   ("0.5", "100.0", "1e+20", "inf", "nan", "True") when printing, since the
 *   reference tests were produced that way. Float8 targets honour
 *   `saturate`; FLOAT8E8M0 honours `round_mode` (up/down/nearest, the
 *   last with ties to the even exponent). Cast-1 names the target type
 *   with a string ("FLOAT").
 * - BitCast keeps the shape and needs equal bit widths; 4- and 2-bit
 *   elements are reinterpreted through their bit patterns.
 * - Float fast paths (same-shape, single-element or trailing-row operands)
 *   for Add Sub Mul Div Pow, same-shape/scalar for Where, and plain loops
 *   for Relu Sigmoid Tanh Erf Sqrt (those of Relu and Sigmoid serve the
 *   activation family). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- element classes ---------------------------------------------------- */

unsigned ev_class(int32_t dt)
{
    switch (ir_dtype_class(dt)) {
    case IR_DC_FLOAT: return EV_CF;
    case IR_DC_SINT: return EV_CS;
    case IR_DC_UINT: return EV_CU;
    case IR_DC_BOOL: return EV_CB;
    case IR_DC_STRING: return EV_CSTR;
    default: return EV_CX;      /* complex, undefined, unknown codes */
    }
}

const char *ev_dt_name(int32_t dt)
{
    const char *n = ir_dtype_name(dt);
    return n ? n : "unknown";
}

int ev_need(EvCtx *c, const EvValue *t, unsigned mask)
{
    if (ev_class(t->dtype) & mask)
        return 0;
    return ev_fail(c, "element type %s not supported", ev_dt_name(t->dtype));
}

static bool ev_same_shape(const EvValue *a, const EvValue *b)
{
    if (a->rank != b->rank)
        return false;
    for (size_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* A NUL-terminated malloc'ed copy for a string element (NULL on OOM). */
static char *ev_strndup(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    if (n)
        memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static int ev_set_str(EvCtx *c, EvValue *y, size_t k, const char *p, size_t n)
{
    EvStr *d = (EvStr *)y->data + k;
    char *s = ev_strndup(p, n);
    if (!s)
        return ev_fail(c, "out of memory");
    free(d->p);
    d->p = s;
    d->len = n;
    return 0;
}

/* ---- unary ops ---------------------------------------------------------- */

static float ev_sigmoidf(float x)
{
    if (x >= 0)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static void ev_fast1(int fast, const float *x, float *y, size_t n)
{
    switch (fast) {
    case EV_FAST_RELU:
        for (size_t k = 0; k < n; k++)
            y[k] = x[k] < 0 ? 0.0f : x[k];  /* NaN stays NaN */
        break;
    case EV_FAST_SIGMOID:
        for (size_t k = 0; k < n; k++)
            y[k] = ev_sigmoidf(x[k]);
        break;
    case EV_FAST_TANH:
        for (size_t k = 0; k < n; k++)
            y[k] = tanhf(x[k]);
        break;
    case EV_FAST_ERF:
        for (size_t k = 0; k < n; k++)
            y[k] = erff(x[k]);
        break;
    case EV_FAST_SQRT:
        for (size_t k = 0; k < n; k++)
            y[k] = sqrtf(x[k]);
        break;
    default:
        break;
    }
}

typedef struct EvFast1Job {
    int fast;
    const float *x;
    float *y;
} EvFast1Job;

static void ev_fast1_part(void *ctx, size_t lo, size_t hi)
{
    const EvFast1Job *j = ctx;
    ev_fast1(j->fast, j->x + lo, j->y + lo, hi - lo);
}

static int64_t ev_iunary(int op, int64_t v)
{
    switch (op) {
    case EV_I_ABS: return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
    case EV_I_NEG: return (int64_t)(0 - (uint64_t)v);
    case EV_I_SIGN: return (v > 0) - (v < 0);
    case EV_I_RELU: return v < 0 ? 0 : v;
    case EV_I_NOT: return ~v;
    default: return v;
    }
}

static uint64_t ev_uunary(int op, uint64_t v)
{
    switch (op) {
    case EV_I_NEG: return 0 - v;
    case EV_I_SIGN: return v != 0;
    case EV_I_NOT: return ~v;
    default: return v;      /* Abs, Relu */
    }
}

/* Y = f(X) elementwise, same type and shape. Integers use iop when given,
 * else go through f in double (Erf, Shrink on integers). */
int ev_map1(EvCtx *c, EvFn1 f, const double *p, unsigned mask,
            int iop, int fast)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x || ev_need(c, x, mask))
        return -1;
    EvValue *y = ev_out_tensor_raw(c, 0, x->dtype, x->rank, x->dims);   /* all written */
    if (!y)
        return -1;
    unsigned cl = ev_class(x->dtype);
    size_t n = x->numel;
    if (cl == EV_CS && iop != EV_I_NONE) {
        for (size_t k = 0; k < n; k++)
            ev_set_i(y, k, ev_iunary(iop, ev_get_i(x, k)));
    } else if (cl == EV_CU && iop != EV_I_NONE) {
        for (size_t k = 0; k < n; k++)
            ev_set_u(y, k, ev_uunary(iop, ev_get_u(x, k)));
    } else if (x->dtype == IR_FLOAT && fast != EV_FAST_NONE) {
        EvFast1Job j = {fast, x->data, y->data};
        ev_par_range(c, n, EV_PAR_GRAIN, ev_fast1_part, &j);
    } else if (x->dtype == IR_FLOAT) {
        const float *xs = x->data;
        float *ys = y->data;
        for (size_t k = 0; k < n; k++)
            ys[k] = (float)f(xs[k], p);
    } else if (x->dtype == IR_DOUBLE) {
        const double *xs = x->data;
        double *ys = y->data;
        for (size_t k = 0; k < n; k++)
            ys[k] = f(xs[k], p);
    } else {
        for (size_t k = 0; k < n; k++)
            ev_set_f(y, k, f(ev_get_f(x, k), p));
    }
    return 0;
}

static double ev_f_abs(double x, const double *p) { return fabs(x); }
static double ev_f_neg(double x, const double *p) { return -x; }
static double ev_f_exp(double x, const double *p) { return exp(x); }
static double ev_f_log(double x, const double *p) { return log(x); }
static double ev_f_sqrt(double x, const double *p) { return sqrt(x); }
static double ev_f_recip(double x, const double *p) { return 1.0 / x; }
static double ev_f_floor(double x, const double *p) { return floor(x); }
static double ev_f_ceil(double x, const double *p) { return ceil(x); }
/* Round halves to even, as the spec's examples (2.5 -> 2) show. */
static double ev_f_round(double x, const double *p) { return nearbyint(x); }
static double ev_f_sin(double x, const double *p) { return sin(x); }
static double ev_f_cos(double x, const double *p) { return cos(x); }
static double ev_f_tan(double x, const double *p) { return tan(x); }
static double ev_f_asin(double x, const double *p) { return asin(x); }
static double ev_f_acos(double x, const double *p) { return acos(x); }
static double ev_f_atan(double x, const double *p) { return atan(x); }
static double ev_f_sinh(double x, const double *p) { return sinh(x); }
static double ev_f_cosh(double x, const double *p) { return cosh(x); }
static double ev_f_asinh(double x, const double *p) { return asinh(x); }
static double ev_f_acosh(double x, const double *p) { return acosh(x); }
static double ev_f_atanh(double x, const double *p) { return atanh(x); }
static double ev_f_erf(double x, const double *p) { return erf(x); }
static double ev_f_tanh(double x, const double *p) { return tanh(x); }

static double ev_f_sign(double x, const double *p)
{
    if (isnan(x))
        return x;
    return (x > 0) - (x < 0);
}

/* p = {lambd, bias} */
static double ev_f_shrink(double x, const double *p)
{
    if (x < -p[0])
        return x + p[1];
    if (x > p[0])
        return x - p[1];
    return 0;
}

static int ev_abs(EvCtx *c)
{
    return ev_map1(c, ev_f_abs, NULL, EV_CNUM, EV_I_ABS, EV_FAST_NONE);
}

static int ev_neg(EvCtx *c)
{
    return ev_map1(c, ev_f_neg, NULL, EV_CF | EV_CS, EV_I_NEG, EV_FAST_NONE);
}

static int ev_sign(EvCtx *c)
{
    return ev_map1(c, ev_f_sign, NULL, EV_CNUM, EV_I_SIGN, EV_FAST_NONE);
}

static int ev_bitwisenot(EvCtx *c)
{
    return ev_map1(c, ev_f_neg, NULL, EV_CINT, EV_I_NOT, EV_FAST_NONE);
}

static int ev_exp(EvCtx *c) { return ev_float1(c, ev_f_exp, NULL); }
static int ev_log(EvCtx *c) { return ev_float1(c, ev_f_log, NULL); }
static int ev_reciprocal(EvCtx *c) { return ev_float1(c, ev_f_recip, NULL); }
static int ev_floor(EvCtx *c) { return ev_float1(c, ev_f_floor, NULL); }
static int ev_ceil(EvCtx *c) { return ev_float1(c, ev_f_ceil, NULL); }
static int ev_round(EvCtx *c) { return ev_float1(c, ev_f_round, NULL); }
static int ev_sin(EvCtx *c) { return ev_float1(c, ev_f_sin, NULL); }
static int ev_cos(EvCtx *c) { return ev_float1(c, ev_f_cos, NULL); }
static int ev_tan(EvCtx *c) { return ev_float1(c, ev_f_tan, NULL); }
static int ev_asin(EvCtx *c) { return ev_float1(c, ev_f_asin, NULL); }
static int ev_acos(EvCtx *c) { return ev_float1(c, ev_f_acos, NULL); }
static int ev_atan(EvCtx *c) { return ev_float1(c, ev_f_atan, NULL); }
static int ev_sinh(EvCtx *c) { return ev_float1(c, ev_f_sinh, NULL); }
static int ev_cosh(EvCtx *c) { return ev_float1(c, ev_f_cosh, NULL); }
static int ev_asinh(EvCtx *c) { return ev_float1(c, ev_f_asinh, NULL); }
static int ev_acosh(EvCtx *c) { return ev_float1(c, ev_f_acosh, NULL); }
static int ev_atanh(EvCtx *c) { return ev_float1(c, ev_f_atanh, NULL); }
static int ev_sqrt(EvCtx *c)
{
    return ev_map1(c, ev_f_sqrt, NULL, EV_CF, EV_I_NONE, EV_FAST_SQRT);
}

static int ev_tanh(EvCtx *c)
{
    return ev_map1(c, ev_f_tanh, NULL, EV_CF, EV_I_NONE, EV_FAST_TANH);
}

/* Erf-9 also takes integers (computed in double, truncated back). */
static int ev_erf(EvCtx *c)
{
    return ev_map1(c, ev_f_erf, NULL, EV_CNUM, EV_I_NONE, EV_FAST_ERF);
}

static int ev_shrink(EvCtx *c)
{
    double p[2] = { ev_attr_f(c, "lambd"), ev_attr_f(c, "bias") };
    return ev_map1(c, ev_f_shrink, p, EV_CNUM, EV_I_NONE, EV_FAST_NONE);
}

static int ev_isnan(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x || ev_need(c, x, EV_CF))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, IR_BOOL, x->rank, x->dims);
    if (!y)
        return -1;
    uint8_t *o = y->data;
    for (size_t k = 0; k < x->numel; k++)
        o[k] = isnan(ev_get_f(x, k)) ? 1 : 0;
    return 0;
}

static int ev_isinf(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x || ev_need(c, x, EV_CF))
        return -1;
    bool neg = ev_attr_i(c, "detect_negative") != 0;
    bool pos = ev_attr_i(c, "detect_positive") != 0;
    EvValue *y = ev_out_tensor(c, 0, IR_BOOL, x->rank, x->dims);
    if (!y)
        return -1;
    uint8_t *o = y->data;
    for (size_t k = 0; k < x->numel; k++) {
        double v = ev_get_f(x, k);
        o[k] = isinf(v) && (v > 0 ? pos : neg);
    }
    return 0;
}

static int ev_not(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x || ev_need(c, x, EV_CB))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, IR_BOOL, x->rank, x->dims);
    if (!y)
        return -1;
    const uint8_t *i = x->data;
    uint8_t *o = y->data;
    for (size_t k = 0; k < x->numel; k++)
        o[k] = !i[k];
    return 0;
}

/* ---- binary ops --------------------------------------------------------- */

typedef enum {
    EV_ADD, EV_SUB, EV_MUL, EV_DIV, EV_POW, EV_MOD,
    EV_AND, EV_OR, EV_XOR, EV_SHL, EV_SHR, EV_BAND, EV_BOR, EV_BXOR,
    EV_EQ, EV_LT, EV_LE, EV_GT, EV_GE
} EvBinOp;

static bool ev_bin_bool_out(EvBinOp op)
{
    return op == EV_AND || op == EV_OR || op == EV_XOR || op >= EV_EQ;
}

/* Element classes each op takes (both inputs the same type, except Pow). */
static unsigned ev_bin_mask(EvBinOp op)
{
    switch (op) {
    case EV_ADD: case EV_SUB: case EV_MUL: case EV_DIV: case EV_MOD:
    case EV_POW:
        return EV_CNUM;
    case EV_AND: case EV_OR: case EV_XOR:
        return EV_CB;
    case EV_SHL: case EV_SHR:
        return EV_CU;
    case EV_BAND: case EV_BOR: case EV_BXOR:
        return EV_CINT;
    case EV_EQ:
        return EV_CNUM | EV_CB | EV_CSTR;
    default:
        return EV_CNUM | EV_CB;
    }
}

static int ev_bin_types(EvCtx *c, EvBinOp op, const EvValue *a,
                        const EvValue *b)
{
    unsigned mask = ev_bin_mask(op);
    if (ev_need(c, a, mask) || ev_need(c, b, mask))
        return -1;
    if (op != EV_POW && a->dtype != b->dtype)
        return ev_fail(c, "input types differ (%s, %s)", ev_dt_name(a->dtype),
                       ev_dt_name(b->dtype));
    if (op == EV_POW && ev_class(a->dtype) == EV_CU)
        return ev_fail(c, "element type %s not supported for the base",
                       ev_dt_name(a->dtype));
    return 0;
}

/* Opset 1-6: without broadcast=1 the shapes must be equal; with it, B's
 * dims match A's from `axis` on (default: B lines up with A's trailing
 * dims); a B of one element is a scalar. The view gives B A's rank. */
static int ev_legacy_view(EvCtx *c, const EvValue *a, const EvValue *b,
                          EvValue *view, int64_t *dims)
{
    *view = *b;
    if (!ev_attr_i(c, "broadcast")) {
        if (!ev_same_shape(a, b))
            return ev_fail(c, "shapes differ and broadcast is not set");
        return 0;
    }
    if (b->numel == 1) {
        view->rank = 0;
        view->dims = NULL;
        return 0;
    }
    if (b->rank > a->rank)
        return ev_fail(c, "B has more dims than A");
    int64_t axis = (int64_t)(a->rank - b->rank);
    if (ev_attr(c, "axis")) {
        axis = ev_attr_i_or(c, "axis", 0);
        if (axis < 0)
            axis += (int64_t)a->rank;
    }
    if (axis < 0 || (uint64_t)axis + b->rank > a->rank)
        return ev_fail(c, "axis %lld out of range for B's rank",
                       (long long)axis);
    for (size_t i = 0; i < a->rank; i++)
        dims[i] = 1;
    for (size_t j = 0; j < b->rank; j++) {
        int64_t bd = b->dims[j], ad = a->dims[(size_t)axis + j];
        if (bd != ad && bd != 1)
            return ev_fail(c, "B's dim %zu (%lld) does not match A's (%lld)",
                           j, (long long)bd, (long long)ad);
        dims[(size_t)axis + j] = bd;
    }
    view->rank = a->rank;
    view->dims = dims;
    return 0;
}

/* Float32 Add/Sub/Mul/Div/Pow when each input is laid out like the output
 * (FULL), is a single element (ONE), or repeats around one block of the
 * output's axes (MID: a bias [C] added to [N, C], a per-channel scale
 * [C, 1, 1] times [N, C, H, W]): its elements then each cover a run of
 * `inner` contiguous output elements, and the whole repeats. */
enum { EV_L_FULL, EV_L_ONE, EV_L_MID };

/* t's dims, right-aligned with y's, are 1 except on one block of axes
 * where they equal y's; *inner gets the product of y's dims after it. */
static bool ev_is_mid(const EvValue *t, const EvValue *y, size_t *inner)
{
    if (t->rank > y->rank)
        return false;
    size_t off = y->rank - t->rank, first = t->rank, last = 0;
    for (size_t i = 0; i < t->rank; i++) {
        if (t->dims[i] == 1)
            continue;
        if (t->dims[i] != y->dims[off + i])
            return false;
        first = first < i ? first : i;
        last = i;
    }
    for (size_t i = first; i <= last && first < t->rank; i++)
        if (t->dims[i] != y->dims[off + i])
            return false;   /* a 1 inside the block: not one run */
    *inner = 1;
    for (size_t i = off + last + 1; i < y->rank; i++)
        *inner *= (size_t)y->dims[i];
    return true;
}

static int ev_layout(const EvValue *t, const EvValue *y, size_t *inner)
{
    if (t->numel == y->numel)
        return EV_L_FULL;
    if (t->numel == 1)
        return EV_L_ONE;
    if (t->numel && ev_is_mid(t, y, inner))
        return EV_L_MID;
    return -1;
}

/* The MID loops over runs [lo, hi): run q of `inner` contiguous output
 * elements meets x_mid's element q % m. Runs of one element (a bias over
 * the last axis) go as stretches of x_mid, which vectorize. */
#define EV_FAST_MID(EXPR, U, V)                                           \
    if (inner == 1) {                                                     \
        for (size_t q = lo; q < hi;) {                                    \
            size_t j0 = q % m, len = m - j0 < hi - q ? m - j0 : hi - q;   \
            for (size_t t = 0; t < len; t++) {                            \
                size_t at = q + t, j = j0 + t, i = 0;                     \
                float u = (U), v = (V);                                   \
                o[at] = (EXPR);                                           \
            }                                                             \
            q += len;                                                     \
        }                                                                 \
    } else {                                                              \
        for (size_t q = lo, j = lo % m; q < hi; q++, j = j + 1 == m ? 0 : j + 1) { \
            size_t at = q * inner;                                        \
            for (size_t i = 0; i < inner; i++) {                          \
                float u = (U), v = (V);                                   \
                o[at + i] = (EXPR);                                       \
            }                                                             \
        }                                                                 \
    }

/* Elements [lo, hi) (runs, for MID) of one layout pair. */
#define EV_FAST2(EXPR)                                                    \
    do {                                                                  \
        if (l0 == EV_L_FULL && l1 == EV_L_FULL) {                         \
            for (size_t k = lo; k < hi; k++) {                            \
                float u = x0[k], v = x1[k];                               \
                o[k] = (EXPR);                                            \
            }                                                             \
        } else if (l0 == EV_L_FULL && l1 == EV_L_ONE) {                   \
            float v = x1[0];                                              \
            for (size_t k = lo; k < hi; k++) {                            \
                float u = x0[k];                                          \
                o[k] = (EXPR);                                            \
            }                                                             \
        } else if (l0 == EV_L_ONE) {                                      \
            float u = x0[0];                                              \
            for (size_t k = lo; k < hi; k++) {                            \
                float v = x1[k];                                          \
                o[k] = (EXPR);                                            \
            }                                                             \
        } else if (l1 == EV_L_MID) {                                      \
            EV_FAST_MID(EXPR, x0[at + i], x1[j])                          \
        } else {                                                          \
            EV_FAST_MID(EXPR, x0[j], x1[at + i])                          \
        }                                                                 \
    } while (0)

typedef struct EvBinJob {
    EvBinOp op;
    int l0, l1;
    size_t m, inner;
    const float *x0, *x1;
    float *o;
} EvBinJob;

static void ev_bin_part(void *ctx, size_t lo, size_t hi)
{
    const EvBinJob *jb = ctx;
    int l0 = jb->l0, l1 = jb->l1;
    size_t m = jb->m, inner = jb->inner;
    const float *x0 = jb->x0, *x1 = jb->x1;
    float *o = jb->o;
    switch (jb->op) {
    case EV_ADD: EV_FAST2(u + v); break;
    case EV_SUB: EV_FAST2(u - v); break;
    case EV_MUL: EV_FAST2(u * v); break;
    case EV_DIV: EV_FAST2(u / v); break;
    default:
        /* x^2 (LayerNorm written out): the float product is the square
         * rounded once, as pow's exact double square rounded to float is */
        if (l1 == EV_L_ONE && x1[0] == 2.0f && l0 == EV_L_FULL)
            for (size_t k = lo; k < hi; k++)
                o[k] = x0[k] * x0[k];
        else
            EV_FAST2((float)pow(u, v));
        break;
    }
}

static bool ev_bin_fast(EvCtx *c, EvBinOp op, const EvValue *a, const EvValue *b,
                        EvValue *y)
{
    if (a->dtype != IR_FLOAT || b->dtype != IR_FLOAT || op > EV_POW)
        return false;
    size_t n = y->numel, inner = 1;
    int l0 = ev_layout(a, y, &inner), l1 = ev_layout(b, y, &inner);
    /* one side full, the other full, single or repeated */
    if (l0 < 0 || l1 < 0 || (l0 != EV_L_FULL && l1 != EV_L_FULL))
        return false;
    if (n == 0)
        return true;
    bool mid = l0 == EV_L_MID || l1 == EV_L_MID;
    EvBinJob jb = {op, l0, l1, mid ? (l0 == EV_L_MID ? a->numel : b->numel) : 0,
                   mid ? inner : 1, a->data, b->data, y->data};
    size_t grain = EV_PAR_GRAIN / jb.inner;
    ev_par_range(c, mid ? n / jb.inner : n, grain ? grain : 1, ev_bin_part, &jb);
    return true;
}

/* Python's % for floats (sign of the divisor) or C's fmod. */
static double ev_fmod(double x, double y, bool cmod)
{
    double r = fmod(x, y);
    if (!cmod && r != 0 && ((r < 0) != (y < 0)))
        r += y;
    return r;
}

static double ev_bin_f(EvBinOp op, double x, double y, bool cmod)
{
    switch (op) {
    case EV_ADD: return x + y;
    case EV_SUB: return x - y;
    case EV_MUL: return x * y;
    case EV_DIV: return x / y;
    case EV_POW: return pow(x, y);
    case EV_MOD: return ev_fmod(x, y, cmod);
    case EV_EQ: return x == y;
    case EV_LT: return x < y;
    case EV_LE: return x <= y;
    case EV_GT: return x > y;
    case EV_GE: return x >= y;
    default: return 0;
    }
}

/* x^e exact modulo 2^64 (wraps like the integer type on store). */
static uint64_t ev_upow(uint64_t x, uint64_t e)
{
    uint64_t r = 1;
    while (e) {
        if (e & 1)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return r;
}

/* Signed x^e; for e < 0 the true value 1/x^|e| truncated toward zero. */
static int ev_ipow(EvCtx *c, int64_t x, int64_t e, int64_t *r)
{
    if (e >= 0) {
        *r = (int64_t)ev_upow((uint64_t)x, (uint64_t)e);
        return 0;
    }
    if (x == 0)
        return ev_fail(c, "integer 0 raised to a negative power");
    if (x == 1 || x == -1)
        *r = (x == -1 && (e & 1)) ? -1 : 1;
    else
        *r = 0;
    return 0;
}

static int ev_bin_i(EvCtx *c, EvBinOp op, int64_t x, int64_t y, bool cmod,
                    int64_t *r)
{
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case EV_ADD: *r = (int64_t)(ux + uy); return 0;
    case EV_SUB: *r = (int64_t)(ux - uy); return 0;
    case EV_MUL: *r = (int64_t)(ux * uy); return 0;
    case EV_DIV:
        if (y == 0)
            return ev_fail(c, "integer division by zero");
        *r = (y == -1) ? (int64_t)(0 - ux) : x / y;  /* INT64_MIN / -1 */
        return 0;
    case EV_MOD: {
        if (y == 0)
            return ev_fail(c, "integer modulo by zero");
        int64_t m = (y == -1) ? 0 : x % y;
        if (!cmod && m != 0 && ((m < 0) != (y < 0)))
            m += y;
        *r = m;
        return 0;
    }
    case EV_POW: return ev_ipow(c, x, y, r);
    case EV_BAND: *r = x & y; return 0;
    case EV_BOR: *r = x | y; return 0;
    case EV_BXOR: *r = x ^ y; return 0;
    case EV_EQ: *r = x == y; return 0;
    case EV_LT: *r = x < y; return 0;
    case EV_LE: *r = x <= y; return 0;
    case EV_GT: *r = x > y; return 0;
    case EV_GE: *r = x >= y; return 0;
    default: *r = 0; return 0;
    }
}

static int ev_bin_u(EvCtx *c, EvBinOp op, uint64_t x, uint64_t y, uint64_t *r)
{
    switch (op) {
    case EV_ADD: *r = x + y; return 0;
    case EV_SUB: *r = x - y; return 0;
    case EV_MUL: *r = x * y; return 0;
    case EV_DIV:
    case EV_MOD:
        if (y == 0)
            return ev_fail(c, "integer %s by zero",
                           op == EV_DIV ? "division" : "modulo");
        *r = op == EV_DIV ? x / y : x % y;
        return 0;
    case EV_POW: *r = ev_upow(x, y); return 0;
    /* Shifts by the width or more leave no bits (not C's undefined). */
    case EV_SHL: *r = y >= 64 ? 0 : x << y; return 0;
    case EV_SHR: *r = y >= 64 ? 0 : x >> y; return 0;
    case EV_BAND: *r = x & y; return 0;
    case EV_BOR: *r = x | y; return 0;
    case EV_BXOR: *r = x ^ y; return 0;
    case EV_EQ: *r = x == y; return 0;
    case EV_LT: *r = x < y; return 0;
    case EV_LE: *r = x <= y; return 0;
    case EV_GT: *r = x > y; return 0;
    case EV_GE: *r = x >= y; return 0;
    default: *r = 0; return 0;
    }
}

static bool ev_bin_b(EvBinOp op, bool x, bool y)
{
    switch (op) {
    case EV_AND: return x && y;
    case EV_OR: return x || y;
    case EV_XOR: return x != y;
    case EV_EQ: return x == y;
    case EV_LT: return x < y;
    case EV_LE: return x <= y;
    case EV_GT: return x > y;
    case EV_GE: return x >= y;
    default: return false;
    }
}

static bool ev_str_eq(const EvValue *a, size_t i, const EvValue *b, size_t j)
{
    const EvStr *x = (const EvStr *)a->data + i;
    const EvStr *y = (const EvStr *)b->data + j;
    return x->len == y->len && (x->len == 0 || !memcmp(x->p, y->p, x->len));
}

/* Pow with its mixed types: a float on either side goes through pow();
 * integer by integer is exact. */
static int ev_pow_elem(EvCtx *c, const EvValue *a, size_t i, const EvValue *b,
                       size_t j, EvValue *y, size_t k)
{
    unsigned ca = ev_class(a->dtype), cb = ev_class(b->dtype);
    if (ca == EV_CF || cb == EV_CF) {
        double x = ca == EV_CF ? ev_get_f(a, i) : (double)ev_get_i(a, i);
        double e = cb == EV_CF   ? ev_get_f(b, j)
                   : cb == EV_CU ? (double)ev_get_u(b, j)
                                 : (double)ev_get_i(b, j);
        ev_set_f(y, k, pow(x, e));
        return 0;
    }
    int64_t r = 0;
    if (cb == EV_CU) {
        r = (int64_t)ev_upow((uint64_t)ev_get_i(a, i), ev_get_u(b, j));
    } else if (ev_ipow(c, ev_get_i(a, i), ev_get_i(b, j), &r)) {
        return -1;
    }
    ev_set_i(y, k, r);
    return 0;
}

static int ev_bin_elem(EvCtx *c, EvBinOp op, bool cmod, const EvValue *a,
                       size_t i, const EvValue *b, size_t j, EvValue *y,
                       size_t k)
{
    if (op == EV_POW)
        return ev_pow_elem(c, a, i, b, j, y, k);
    switch (ev_class(a->dtype)) {
    case EV_CF:
        ev_set_f(y, k, ev_bin_f(op, ev_get_f(a, i), ev_get_f(b, j), cmod));
        return 0;
    case EV_CS: {
        int64_t r = 0;
        if (ev_bin_i(c, op, ev_get_i(a, i), ev_get_i(b, j), cmod, &r))
            return -1;
        ev_set_i(y, k, r);
        return 0;
    }
    case EV_CU: {
        uint64_t r = 0;
        if (ev_bin_u(c, op, ev_get_u(a, i), ev_get_u(b, j), &r))
            return -1;
        ev_set_u(y, k, r);
        return 0;
    }
    case EV_CB:
        ev_set_i(y, k, ev_bin_b(op, ev_get_i(a, i) != 0, ev_get_i(b, j) != 0));
        return 0;
    default:    /* strings: Equal only */
        ev_set_i(y, k, ev_str_eq(a, i, b, j));
        return 0;
    }
}

static int ev_binary(EvCtx *c, EvBinOp op)
{
    EvValue *a = ev_in_tensor(c, 0), *b = a ? ev_in_tensor(c, 1) : NULL;
    if (!b || ev_bin_types(c, op, a, b))
        return -1;
    bool cmod = false;
    if (op == EV_MOD)
        cmod = ev_attr_i(c, "fmod") != 0;
    if (op == EV_SHL) {
        const char *d = ev_attr_s_or(c, "direction", "");
        if (!d)
            return -1;
        if (!strcmp(d, "RIGHT"))
            op = EV_SHR;
        else if (strcmp(d, "LEFT"))
            return ev_fail(c, "direction '%s' is not LEFT or RIGHT", d);
    }
    EvValue bv = *b;
    int64_t vdims[EV_MAX_RANK];
    if (c->ver < 7 && ev_legacy_view(c, a, b, &bv, vdims))
        return -1;
    EvValue *ts[2] = { a, &bv };
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_broadcast_shape(c, 2, ts, &rank, dims))
        return -1;
    EvValue *y = ev_out_tensor_raw(c, 0, ev_bin_bool_out(op) ? IR_BOOL : a->dtype,
                                   rank, dims);   /* every element written below */
    if (!y)
        return -1;
    if (ev_bin_fast(c, op, a, &bv, y))
        return 0;
    EvBcast bc;
    ev_bcast_init(&bc, 2, ts, rank, dims);
    for (size_t k = 0; k < y->numel; k++, ev_bcast_next(&bc))
        if (ev_bin_elem(c, op, cmod, a, bc.off[0], &bv, bc.off[1], y, k))
            return -1;
    return 0;
}

static int ev_add(EvCtx *c) { return ev_binary(c, EV_ADD); }
static int ev_sub(EvCtx *c) { return ev_binary(c, EV_SUB); }
static int ev_mul(EvCtx *c) { return ev_binary(c, EV_MUL); }
static int ev_div(EvCtx *c) { return ev_binary(c, EV_DIV); }
static int ev_pow(EvCtx *c) { return ev_binary(c, EV_POW); }
static int ev_mod(EvCtx *c) { return ev_binary(c, EV_MOD); }
static int ev_and(EvCtx *c) { return ev_binary(c, EV_AND); }
static int ev_or(EvCtx *c) { return ev_binary(c, EV_OR); }
static int ev_xor(EvCtx *c) { return ev_binary(c, EV_XOR); }
static int ev_bitshift(EvCtx *c) { return ev_binary(c, EV_SHL); }
static int ev_bitwiseand(EvCtx *c) { return ev_binary(c, EV_BAND); }
static int ev_bitwiseor(EvCtx *c) { return ev_binary(c, EV_BOR); }
static int ev_bitwisexor(EvCtx *c) { return ev_binary(c, EV_BXOR); }
static int ev_equal(EvCtx *c) { return ev_binary(c, EV_EQ); }
static int ev_less(EvCtx *c) { return ev_binary(c, EV_LT); }
static int ev_lessorequal(EvCtx *c) { return ev_binary(c, EV_LE); }
static int ev_greater(EvCtx *c) { return ev_binary(c, EV_GT); }
static int ev_greaterorequal(EvCtx *c) { return ev_binary(c, EV_GE); }

/* ---- Max Min Sum Mean --------------------------------------------------- */

enum { EV_V_MAX, EV_V_MIN, EV_V_SUM, EV_V_MEAN };

/* Accumulators: one per output element, in the input class's exact form. */
typedef struct EvAcc {
    double *f;
    int64_t *i;
    uint64_t *u;
} EvAcc;

static void ev_acc_f(int op, double *acc, double v, bool first)
{
    if (first)
        *acc = v;
    else if (isnan(*acc) || isnan(v))
        *acc = NAN; /* NaN wins, like numpy's maximum/minimum */
    else if (op == EV_V_MAX)
        *acc = v > *acc ? v : *acc;
    else if (op == EV_V_MIN)
        *acc = v < *acc ? v : *acc;
    else
        *acc += v;
}

static void ev_acc_i(int op, int64_t *acc, int64_t v, bool first)
{
    if (first)
        *acc = v;
    else if (op == EV_V_MAX)
        *acc = v > *acc ? v : *acc;
    else if (op == EV_V_MIN)
        *acc = v < *acc ? v : *acc;
    else
        *acc = (int64_t)((uint64_t)*acc + (uint64_t)v);
}

static void ev_acc_u(int op, uint64_t *acc, uint64_t v, bool first)
{
    if (first)
        *acc = v;
    else if (op == EV_V_MAX)
        *acc = v > *acc ? v : *acc;
    else if (op == EV_V_MIN)
        *acc = v < *acc ? v : *acc;
    else
        *acc += v;
}

/* Output shape of all inputs: equal shapes before opset 8, broadcasting
 * (folded pair by pair, so any count works) from 8. */
static int ev_variadic_shape(EvCtx *c, size_t *rank, int64_t *dims)
{
    EvValue *t0 = c->in[0];
    *rank = t0->rank;
    for (size_t d = 0; d < t0->rank; d++)
        dims[d] = t0->dims[d];
    for (size_t i = 1; i < c->n_in; i++) {
        EvValue *t = c->in[i];
        if (c->ver < 8) {
            if (!ev_same_shape(t0, t))
                return ev_fail(c, "input %zu's shape differs (no broadcasting "
                               "before opset 8)", i);
            continue;
        }
        EvValue cur = *t0;
        int64_t cd[EV_MAX_RANK];
        memcpy(cd, dims, *rank * sizeof *dims);
        cur.rank = *rank;
        cur.dims = cd;
        EvValue *ts[2] = { &cur, t };
        if (ev_broadcast_shape(c, 2, ts, rank, dims))
            return -1;
    }
    return 0;
}

/* Float inputs all of y's shape: the same sums element by element,
 * without broadcasting's odometer (resnet50's residual Sum spent more
 * time stepping it than adding). */
typedef struct EvVarJob {
    const EvCtx *c;
    int op;
    float *y;
} EvVarJob;

static void ev_variadic_part(void *ctx, size_t lo, size_t hi)
{
    const EvVarJob *j = ctx;
    const EvCtx *c = j->c;
    float *ys = j->y;
    /* a sum needs no NaN test: NaN and inf - inf come out of the adds */
    if (j->op == EV_V_SUM || j->op == EV_V_MEAN) {
        for (size_t k = lo; k < hi; k++) {
            double acc = ((const float *)c->in[0]->data)[k];
            for (size_t i = 1; i < c->n_in; i++)
                acc += ((const float *)c->in[i]->data)[k];
            ys[k] = (float)(j->op == EV_V_MEAN ? acc / (double)c->n_in : acc);
        }
        return;
    }
    for (size_t k = lo; k < hi; k++) {
        double acc = 0;
        for (size_t i = 0; i < c->n_in; i++)
            ev_acc_f(j->op, &acc, ((const float *)c->in[i]->data)[k], i == 0);
        ys[k] = (float)acc;
    }
}

static bool ev_variadic_plain(EvCtx *c, int op, EvValue *y)
{
    if (y->dtype != IR_FLOAT)
        return false;
    for (size_t i = 0; i < c->n_in; i++)
        if (!ev_same_shape(c->in[i], y))
            return false;
    EvVarJob j = {c, op, y->data};
    ev_par_range(c, y->numel, EV_PAR_GRAIN, ev_variadic_part, &j);
    return true;
}

static int ev_variadic(EvCtx *c, int op)
{
    if (c->n_in == 0)
        return ev_fail(c, "needs at least one input");
    unsigned mask = op == EV_V_SUM || op == EV_V_MEAN ? EV_CF : EV_CNUM;
    for (size_t i = 0; i < c->n_in; i++) {
        EvValue *t = ev_in_tensor(c, i);
        if (!t || ev_need(c, t, mask))
            return -1;
        if (t->dtype != c->in[0]->dtype)
            return ev_fail(c, "input %zu's type %s differs from %s", i,
                           ev_dt_name(t->dtype), ev_dt_name(c->in[0]->dtype));
    }
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_variadic_shape(c, &rank, dims))
        return -1;
    int32_t dt = c->in[0]->dtype;
    EvValue *y = ev_out_tensor_raw(c, 0, dt, rank, dims);   /* all written */
    if (!y)
        return -1;
    if (ev_variadic_plain(c, op, y))
        return 0;
    size_t n = y->numel;
    unsigned cl = ev_class(dt);
    EvAcc acc = { 0 };
    if (cl == EV_CF)
        acc.f = ev_tmp(c, n ? n : 1, sizeof *acc.f);
    else if (cl == EV_CS)
        acc.i = ev_tmp(c, n ? n : 1, sizeof *acc.i);
    else
        acc.u = ev_tmp(c, n ? n : 1, sizeof *acc.u);
    if (!acc.f && !acc.i && !acc.u)
        return ev_fail(c, "out of memory");
    for (size_t i = 0; i < c->n_in; i++) {
        EvValue *t = c->in[i];
        EvValue *ts[2] = { y, t };
        EvBcast b;
        ev_bcast_init(&b, 2, ts, rank, dims);
        for (size_t k = 0; k < n; k++, ev_bcast_next(&b)) {
            size_t o = b.off[1];
            if (cl == EV_CF)
                ev_acc_f(op, &acc.f[k], ev_get_f(t, o), i == 0);
            else if (cl == EV_CS)
                ev_acc_i(op, &acc.i[k], ev_get_i(t, o), i == 0);
            else
                ev_acc_u(op, &acc.u[k], ev_get_u(t, o), i == 0);
        }
    }
    for (size_t k = 0; k < n; k++) {
        if (cl == EV_CF)
            ev_set_f(y, k, op == EV_V_MEAN ? acc.f[k] / (double)c->n_in
                                           : acc.f[k]);
        else if (cl == EV_CS)
            ev_set_i(y, k, acc.i[k]);
        else
            ev_set_u(y, k, acc.u[k]);
    }
    return 0;
}

static int ev_max(EvCtx *c) { return ev_variadic(c, EV_V_MAX); }
static int ev_min(EvCtx *c) { return ev_variadic(c, EV_V_MIN); }
static int ev_sum(EvCtx *c) { return ev_variadic(c, EV_V_SUM); }
static int ev_mean(EvCtx *c) { return ev_variadic(c, EV_V_MEAN); }

/* ---- Where -------------------------------------------------------------- */

static bool ev_where_fast(const EvValue *cond, const EvValue *x,
                          const EvValue *y, EvValue *out)
{
    size_t n = out->numel;
    if (x->dtype != IR_FLOAT || cond->numel != n ||
        (x->numel != n && x->numel != 1) || (y->numel != n && y->numel != 1))
        return false;
    const uint8_t *cd = cond->data;
    const float *xd = x->data, *yd = y->data;
    float *o = out->data;
    size_t sx = x->numel == n, sy = y->numel == n;
    for (size_t k = 0; k < n; k++)
        o[k] = cd[k] ? xd[k * sx] : yd[k * sy];
    return true;
}

static int ev_where(EvCtx *c)
{
    EvValue *cond = ev_in_tensor(c, 0);
    EvValue *x = cond ? ev_in_tensor(c, 1) : NULL;
    EvValue *y = x ? ev_in_tensor(c, 2) : NULL;
    if (!y || ev_need(c, cond, EV_CB))
        return -1;
    if (x->dtype != y->dtype)
        return ev_fail(c, "X and Y types differ (%s, %s)",
                       ev_dt_name(x->dtype), ev_dt_name(y->dtype));
    size_t es = ev_dtype_size(x->dtype);
    if (!es)
        return ev_fail(c, "element type %s not supported",
                       ev_dt_name(x->dtype));
    EvValue *ts[3] = { cond, x, y };
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_broadcast_shape(c, 3, ts, &rank, dims))
        return -1;
    EvValue *out = ev_out_tensor(c, 0, x->dtype, rank, dims);
    if (!out)
        return -1;
    if (ev_where_fast(cond, x, y, out))
        return 0;
    EvBcast b;
    ev_bcast_init(&b, 3, ts, rank, dims);
    const uint8_t *cd = cond->data;
    for (size_t k = 0; k < out->numel; k++, ev_bcast_next(&b)) {
        bool pick = cd[b.off[0]] != 0;
        const EvValue *src = pick ? x : y;
        size_t o = pick ? b.off[1] : b.off[2];
        if (x->dtype == IR_STRING) {
            const EvStr *s = (const EvStr *)src->data + o;
            if (ev_set_str(c, out, k, s->p, s->len))
                return -1;
        } else {
            memcpy((char *)out->data + k * es, (const char *)src->data + o * es,
                   es);
        }
    }
    return 0;
}

/* ---- Clip --------------------------------------------------------------- */

/* Bound i (1 = min, 2 = max) of Clip-11+: absent, or one element of X's
 * type. */
static int ev_clip_bound(EvCtx *c, const EvValue *x, size_t i,
                         const EvValue **out)
{
    const EvValue *b = ev_in(c, i);
    *out = NULL;
    if (!b)
        return 0;
    if (b->kind != EV_TENSOR)
        return ev_fail(c, "input %zu is not a tensor", i);
    if (b->dtype != x->dtype)
        return ev_fail(c, "%s's type %s differs from input's %s",
                       i == 1 ? "min" : "max", ev_dt_name(b->dtype),
                       ev_dt_name(x->dtype));
    if (b->numel != 1)
        return ev_fail(c, "%s must be a scalar (has %zu elements)",
                       i == 1 ? "min" : "max", b->numel);
    *out = b;
    return 0;
}

static int ev_clip_float(EvCtx *c, const EvValue *x, EvValue *y, double lo,
                         double hi)
{
    /* a NaN bound makes every element NaN: ONNX's reference clips with
     * numpy.clip, whose maximum/minimum propagate NaN (the text is silent) */
    bool nan_bound = isnan(lo) || isnan(hi);
    if (x->dtype == IR_FLOAT && !nan_bound) {   /* the common case, vectorized */
        const float *xs = x->data;
        float *ys = y->data;
        float l = (float)lo, h = (float)hi;
        /* a bound that rounds inward in float would clip differently:
         * only bounds exact in float take this path */
        if ((double)l == lo && (double)h == hi) {
            for (size_t k = 0; k < x->numel; k++) {
                float v = xs[k] < l ? l : xs[k];
                ys[k] = v > h ? h : v;
            }
            return 0;
        }
    }
    for (size_t k = 0; k < x->numel; k++) {
        double v = nan_bound ? NAN : ev_get_f(x, k);
        if (v < lo)
            v = lo;
        if (v > hi)
            v = hi;     /* min > max gives max, like numpy.clip */
        ev_set_f(y, k, v);
    }
    return 0;
}

static int ev_clip(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x || ev_need(c, x, EV_CNUM))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    if (c->ver < 11) {
        /* Clip-1: absent bounds do not clip (the table has no default);
         * Clip-6: the table's +-FLT_MAX */
        if (c->ver >= 6)
            return ev_clip_float(c, x, y, ev_attr_f(c, "min"),
                                 ev_attr_f(c, "max"));
        return ev_clip_float(c, x, y, ev_attr_f_or(c, "min", -INFINITY),
                             ev_attr_f_or(c, "max", INFINITY));
    }
    const EvValue *lo, *hi;
    if (ev_clip_bound(c, x, 1, &lo) || ev_clip_bound(c, x, 2, &hi))
        return -1;
    unsigned cl = ev_class(x->dtype);
    if (cl == EV_CF)
        return ev_clip_float(c, x, y, lo ? ev_get_f(lo, 0) : -INFINITY,
                             hi ? ev_get_f(hi, 0) : INFINITY);
    if (cl == EV_CS) {
        int64_t l = lo ? ev_get_i(lo, 0) : INT64_MIN;
        int64_t h = hi ? ev_get_i(hi, 0) : INT64_MAX;
        for (size_t k = 0; k < x->numel; k++) {
            int64_t v = ev_get_i(x, k);
            v = v < l ? l : v;
            ev_set_i(y, k, v > h ? h : v);
        }
        return 0;
    }
    uint64_t l = lo ? ev_get_u(lo, 0) : 0;
    uint64_t h = hi ? ev_get_u(hi, 0) : UINT64_MAX;
    for (size_t k = 0; k < x->numel; k++) {
        uint64_t v = ev_get_u(x, k);
        v = v < l ? l : v;
        ev_set_u(y, k, v > h ? h : v);
    }
    return 0;
}

/* ---- Cast --------------------------------------------------------------- */

enum { EV_RM_UP, EV_RM_DOWN, EV_RM_NEAREST };

/* The float8 types, FLOAT4E2M1 and FLOAT8E8M0. */
static bool ev_is_small_float(int32_t dt)
{
    return ir_dtype_is_float(dt) && ir_dtype_bits(dt) <= 8;
}

/* FLOAT8E8M0 with Cast-24's round_mode, from the float's exponent field
 * (the sign is ignored: negative inputs are undefined by the spec).
 * "nearest" rounds to nearest with ties to the even exponent. */
static uint8_t ev_to_e8m0(float x, int mode, bool sat)
{
    if (mode == EV_RM_UP)
        return tk_f8_from_float(IR_FLOAT8E8M0, x, sat);
    if (isnan(x))
        return 0xFF;
    if (isinf(x))
        return sat ? 0xFE : 0xFF;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t e = (bits >> 23) & 0xFF, m = bits & 0x7FFFFF;
    if (e == 0 && m == 0)
        return sat ? 0 : 0xFF;
    if (mode == EV_RM_NEAREST && (m & 0x400000) &&
        ((m & 0x3FFFFF) || (e & 1)))
        e++;
    if (e > 0xFE)
        return sat ? 0xFE : 0xFF;
    return (uint8_t)e;
}

/* Rounds v to what dtype can hold (for the shortest-repr search). */
static double ev_round_to(int32_t dt, double v)
{
    switch (dt) {
    case IR_DOUBLE: return v;
    case IR_FLOAT: return (float)v;
    case IR_FLOAT16: return half_f16_to_f32(half_f32_to_f16((float)v));
    case IR_BFLOAT16: return half_bf16_to_f32(half_f32_to_bf16((float)v));
    default: return tk_f8_to_float(dt, tk_f8_from_float(dt, (float)v, true));
    }
}

/* numpy's str() of a float: the shortest digits that read back as the
 * same value of its type; positional for 1e-4 <= |v| < 1e16 ("100.0",
 * "0.001"), else scientific ("1e+16", "1.5e-05"). */
static void ev_format_float(int32_t dt, double v, char *out, size_t cap)
{
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        snprintf(out, cap, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char buf[64];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec, v);
        if (ev_round_to(dt, strtod(buf, NULL)) == v)
            break;
    }
    /* buf = [-]D[.DDD]e[+-]XX: collect the digits and the exponent */
    char digits[32];
    size_t nd = 0;
    const char *p = buf;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p) && nd + 1 < sizeof digits)
            digits[nd++] = *p;
    int e10 = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    size_t w = 0;
    char tmp[96];
    if (neg)
        tmp[w++] = '-';
    if (e10 >= -4 && e10 < 16) {
        if (e10 < 0) {
            tmp[w++] = '0';
            tmp[w++] = '.';
            for (int z = 0; z < -e10 - 1; z++)
                tmp[w++] = '0';
            for (size_t d = 0; d < nd; d++)
                tmp[w++] = digits[d];
        } else {
            for (int d = 0; d <= e10; d++)
                tmp[w++] = (size_t)d < nd ? digits[d] : '0';
            tmp[w++] = '.';
            if ((size_t)e10 + 1 >= nd)
                tmp[w++] = '0';
            for (size_t d = (size_t)e10 + 1; d < nd; d++)
                tmp[w++] = digits[d];
        }
        tmp[w] = 0;
    } else {
        tmp[w++] = digits[0];
        if (nd > 1) {
            tmp[w++] = '.';
            for (size_t d = 1; d < nd; d++)
                tmp[w++] = digits[d];
        }
        snprintf(tmp + w, sizeof tmp - w, "e%c%02d", e10 < 0 ? '-' : '+',
                 e10 < 0 ? -e10 : e10);
    }
    snprintf(out, cap, "%s", tmp);
}

static int ev_cast_to_string(EvCtx *c, const EvValue *x, EvValue *y)
{
    unsigned cl = ev_class(x->dtype);
    char buf[128];
    for (size_t k = 0; k < x->numel; k++) {
        if (cl == EV_CF)
            ev_format_float(x->dtype, ev_get_f(x, k), buf, sizeof buf);
        else if (cl == EV_CS)
            snprintf(buf, sizeof buf, "%lld", (long long)ev_get_i(x, k));
        else if (cl == EV_CU)
            snprintf(buf, sizeof buf, "%llu",
                     (unsigned long long)ev_get_u(x, k));
        else
            snprintf(buf, sizeof buf, "%s", ev_get_i(x, k) ? "True" : "False");
        if (ev_set_str(c, y, k, buf, strlen(buf)))
            return -1;
    }
    return 0;
}

/* A string element as a number: the spec's INF/+INF/-INF/NaN (any case),
 * plain or scientific notation; surrounding blanks allowed. */
static bool ev_parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s)
        return false;
    while (isspace((unsigned char)*end))
        end++;
    return *end == 0;
}

/* Integers parse exactly when written as integers ("9007199254740993"),
 * else through double, truncated ("100.5" -> 100). */
static bool ev_parse_int(const char *s, bool is_unsigned, int64_t *iv,
                         uint64_t *uv, double *dv, bool *is_float)
{
    char *end;
    errno = 0;
    *is_float = false;
    if (is_unsigned && !strchr(s, '-'))
        *uv = strtoull(s, &end, 10);
    else
        *iv = strtoll(s, &end, 10);
    if (end != s && errno == 0) {
        while (isspace((unsigned char)*end))
            end++;
        if (*end == 0) {
            if (is_unsigned && strchr(s, '-'))
                *uv = (uint64_t)*iv;
            return true;
        }
    }
    *is_float = true;
    return ev_parse_double(s, dv);
}

static void ev_store_float(EvValue *y, size_t k, double v, bool sat, int rm);

static int ev_cast_from_string(EvCtx *c, const EvValue *x, EvValue *y,
                               bool sat, int rm)
{
    unsigned cy = ev_class(y->dtype);
    for (size_t k = 0; k < x->numel; k++) {
        const EvStr *s = (const EvStr *)x->data + k;
        const char *p = s->p ? s->p : "";
        bool t = !strcasecmp(p, "true");
        if (cy == EV_CB && (t || !strcasecmp(p, "false"))) {
            ((uint8_t *)y->data)[k] = t;
            continue;
        }
        if (cy == EV_CF || cy == EV_CB) {
            double v;
            if (!ev_parse_double(p, &v))
                return ev_fail(c, "element %zu ('%.40s') is not a number", k,
                               p);
            if (cy == EV_CB)
                ((uint8_t *)y->data)[k] = v != 0;
            else
                ev_store_float(y, k, v, sat, rm);
            continue;
        }
        int64_t iv = 0;
        uint64_t uv = 0;
        double dv = 0;
        bool is_float;
        if (!ev_parse_int(p, cy == EV_CU, &iv, &uv, &dv, &is_float))
            return ev_fail(c, "element %zu ('%.40s') is not a number", k, p);
        if (is_float)
            ev_set_f(y, k, dv);
        else if (cy == EV_CU)
            ev_set_u(y, k, uv);
        else
            ev_set_i(y, k, iv);
    }
    return 0;
}

/* Stores a real value into a floating element: small floats with the
 * cast's saturate/round_mode, the others through ev_set_f. */
static void ev_store_float(EvValue *y, size_t k, double v, bool sat, int rm)
{
    uint8_t *o = y->data;
    if (y->dtype == IR_FLOAT8E8M0)
        o[k] = ev_to_e8m0((float)v, rm, sat);
    else if (ev_is_small_float(y->dtype))
        o[k] = tk_f8_from_float(y->dtype, (float)v, sat);
    else
        ev_set_f(y, k, v);
}

static void ev_cast_numeric(const EvValue *x, EvValue *y, bool sat, int rm)
{
    unsigned cx = ev_class(x->dtype), cy = ev_class(y->dtype);
    for (size_t k = 0; k < x->numel; k++) {
        if (cy == EV_CB) {
            ((uint8_t *)y->data)[k] = cx == EV_CF ? ev_get_f(x, k) != 0
                                                  : ev_get_u(x, k) != 0;
        } else if (cy == EV_CF) {
            if (cx == EV_CF) {
                ev_store_float(y, k, ev_get_f(x, k), sat, rm);
            } else if (y->dtype == IR_FLOAT) {
                /* one rounding from the integer, not two through double */
                ((float *)y->data)[k] = cx == EV_CU ? (float)ev_get_u(x, k)
                                                    : (float)ev_get_i(x, k);
            } else {
                double v = cx == EV_CU ? (double)ev_get_u(x, k)
                                       : (double)ev_get_i(x, k);
                ev_store_float(y, k, v, sat, rm);
            }
        } else if (cx == EV_CF) {
            ev_set_f(y, k, ev_get_f(x, k));     /* truncates toward zero */
        } else if (cx == EV_CU) {
            ev_set_u(y, k, ev_get_u(x, k));
        } else {
            ev_set_i(y, k, ev_get_i(x, k));     /* wraps to the width */
        }
    }
}

/* Converts x into a new output 0 of type `to`. */
static int ev_cast_to(EvCtx *c, EvValue *x, int32_t to, bool sat, int rm)
{
    unsigned cx = ev_class(x->dtype), cy = ev_class(to);
    if (cx == EV_CX)
        return ev_fail(c, "cannot cast from %s", ev_dt_name(x->dtype));
    if (cy == EV_CX)
        return ev_fail(c, "cannot cast to %s", ev_dt_name(to));
    if (x->dtype == to) {
        ev_out_set(c, 0, ev_ref(x));
        return 0;
    }
    EvValue *y = ev_out_tensor(c, 0, to, x->rank, x->dims);
    if (!y)
        return -1;
    if (cx == EV_CSTR)
        return ev_cast_from_string(c, x, y, sat, rm);
    if (cy == EV_CSTR)
        return ev_cast_to_string(c, x, y);
    ev_cast_numeric(x, y, sat, rm);
    return 0;
}

/* Cast-19+'s saturate and Cast-24+'s round_mode. */
static int ev_cast_attrs(EvCtx *c, bool *sat, int *rm)
{
    *sat = c->ver < 19 || ev_attr_i_or(c, "saturate", 1) != 0;
    *rm = EV_RM_UP;
    if (c->ver < 24)
        return 0;
    const char *m = ev_attr_s_or(c, "round_mode", "up");
    if (!m)
        return -1;
    if (!strcmp(m, "down"))
        *rm = EV_RM_DOWN;
    else if (!strcmp(m, "nearest"))
        *rm = EV_RM_NEAREST;
    else if (strcmp(m, "up"))
        return ev_fail(c, "round_mode '%s' is not up, down or nearest", m);
    return 0;
}

/* Cast-1 names the type ("FLOAT"); later versions give the enum value. */
static int ev_cast_target(EvCtx *c, int32_t *to)
{
    const IrAttr *a = ev_attr(c, "to");
    if (!a)
        return ev_fail(c, "attribute 'to' is missing");
    if (c->ver < 6 && a->has_s) {
        const char *s = ev_attr_s_or(c, "to", "");
        if (!s)
            return -1;
        for (int32_t d = 1; ir_dtype_name(d); d++) {
            if (!strcasecmp(s, ir_dtype_name(d))) {
                *to = d;
                return 0;
            }
        }
        return ev_fail(c, "unknown type name '%s'", s);
    }
    int64_t v = ev_attr_i_or(c, "to", 0);
    if (v <= 0 || v > INT32_MAX || !ir_dtype_name((int32_t)v))
        return ev_fail(c, "'to' (%lld) is not a known type", (long long)v);
    *to = (int32_t)v;
    return 0;
}

static int ev_cast(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    int32_t to = 0;
    bool sat;
    int rm;
    if (!x || ev_cast_target(c, &to) || ev_cast_attrs(c, &sat, &rm))
        return -1;
    return ev_cast_to(c, x, to, sat, rm);
}

static int ev_castlike(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *t = x ? ev_in_tensor(c, 1) : NULL;
    bool sat;
    int rm;
    if (!t || ev_cast_attrs(c, &sat, &rm))
        return -1;
    return ev_cast_to(c, x, t->dtype, sat, rm);
}

/* ---- BitCast ------------------------------------------------------------ */

/* Bit pattern of a 4- or 2-bit element (stored one per byte, signed ones
 * sign-extended). */
static uint8_t ev_small_bits(const EvValue *x, size_t k, int bits)
{
    return (uint8_t)(((const uint8_t *)x->data)[k] & ((1u << bits) - 1));
}

static void ev_set_small_bits(EvValue *y, size_t k, int bits, uint8_t p)
{
    uint8_t *o = y->data;
    if (y->dtype == IR_INT4 || y->dtype == IR_INT2) {
        int sh = 8 - bits;
        o[k] = (uint8_t)(int8_t)((int8_t)(uint8_t)(p << sh) >> sh);
    } else {
        o[k] = p;
    }
}

static int ev_bitcast(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    if (!ev_attr(c, "to"))
        return ev_fail(c, "attribute 'to' is missing");
    int64_t to = ev_attr_i_or(c, "to", 0);
    int bx = ir_dtype_bits(x->dtype);
    int by = to > 0 && to <= INT32_MAX ? ir_dtype_bits((int32_t)to) : 0;
    if (!bx || !by || !ev_dtype_size((int32_t)to))
        return ev_fail(c, "cannot bitcast %s to type %lld",
                       ev_dt_name(x->dtype), (long long)to);
    if (bx != by)
        return ev_fail(c, "bit widths differ (%s is %d bits, %s is %d)",
                       ev_dt_name(x->dtype), bx, ev_dt_name((int32_t)to), by);
    EvValue *y = ev_out_tensor(c, 0, (int32_t)to, x->rank, x->dims);
    if (!y)
        return -1;
    size_t n = x->numel;
    if (bx < 8) {
        for (size_t k = 0; k < n; k++)
            ev_set_small_bits(y, k, bx, ev_small_bits(x, k, bx));
    } else if (n) {
        memcpy(y->data, x->data, n * ev_dtype_size(x->dtype));
        if (y->dtype == IR_BOOL)    /* keep bools 0/1 */
            for (size_t k = 0; k < n; k++)
                ((uint8_t *)y->data)[k] = ((uint8_t *)y->data)[k] != 0;
    }
    return 0;
}

/* ---- Identity ----------------------------------------------------------- */

/* Tensors, sequences and optionals alike: the same value, referenced. */
static int ev_identity(EvCtx *c)
{
    EvValue *x = ev_in(c, 0);
    if (!x)
        return ev_fail(c, "input is missing");
    ev_out_set(c, 0, ev_ref(x));
    return 0;
}

const EvOp ev_ops_elementwise[] = {
    { "", "Abs", ev_abs },
    { "", "Neg", ev_neg },
    { "", "Exp", ev_exp },
    { "", "Log", ev_log },
    { "", "Sqrt", ev_sqrt },
    { "", "Reciprocal", ev_reciprocal },
    { "", "Floor", ev_floor },
    { "", "Ceil", ev_ceil },
    { "", "Round", ev_round },
    { "", "Sign", ev_sign },
    { "", "Sin", ev_sin },
    { "", "Cos", ev_cos },
    { "", "Tan", ev_tan },
    { "", "Asin", ev_asin },
    { "", "Acos", ev_acos },
    { "", "Atan", ev_atan },
    { "", "Sinh", ev_sinh },
    { "", "Cosh", ev_cosh },
    { "", "Asinh", ev_asinh },
    { "", "Acosh", ev_acosh },
    { "", "Atanh", ev_atanh },
    { "", "Erf", ev_erf },
    { "", "IsNaN", ev_isnan },
    { "", "IsInf", ev_isinf },
    { "", "Not", ev_not },
    { "", "BitwiseNot", ev_bitwisenot },
    { "", "Tanh", ev_tanh },
    { "", "Shrink", ev_shrink },
    { "", "Add", ev_add },
    { "", "Sub", ev_sub },
    { "", "Mul", ev_mul },
    { "", "Div", ev_div },
    { "", "Pow", ev_pow },
    { "", "Mod", ev_mod },
    { "", "And", ev_and },
    { "", "Or", ev_or },
    { "", "Xor", ev_xor },
    { "", "BitShift", ev_bitshift },
    { "", "BitwiseAnd", ev_bitwiseand },
    { "", "BitwiseOr", ev_bitwiseor },
    { "", "BitwiseXor", ev_bitwisexor },
    { "", "Equal", ev_equal },
    { "", "Less", ev_less },
    { "", "LessOrEqual", ev_lessorequal },
    { "", "Greater", ev_greater },
    { "", "GreaterOrEqual", ev_greaterorequal },
    { "", "Max", ev_max },
    { "", "Min", ev_min },
    { "", "Sum", ev_sum },
    { "", "Mean", ev_mean },
    { "", "Where", ev_where },
    { "", "Clip", ev_clip },
    { "", "Cast", ev_cast },
    { "", "CastLike", ev_castlike },
    { "", "BitCast", ev_bitcast },
    { "", "Identity", ev_identity },
    { NULL, NULL, NULL }
};
