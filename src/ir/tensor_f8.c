/* tensor_f8.c - the small float types: FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
 * FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1 and FLOAT8E8M0, decoded to float
 * and encoded from float (tk_f8_to_float, tk_f8_from_float in
 * ir/tensor_kit.h), for the kit's element access and the evaluator.
 *
 * Encoding rounds to nearest even at the target's mantissa width and
 * follows Cast-19+'s saturate tables:
 *   saturate: +-Inf and values rounding past the largest finite value give
 *     +-that value;
 *   no saturate: E4M3FN gives NaN (sign kept), E5M2 gives +-Inf, the FNUZ
 *     types give their single NaN 0x80.
 * The FNUZ types have no negative zero: -0 (and negatives rounding to 0)
 * give 0. NaN is 0x7F|sign for E4M3FN, 0x7E|sign for E5M2 (the quiet NaN a
 * float's top bits would give) and 0x80 for the FNUZ types.
 * FLOAT4E2M1 has neither Inf nor NaN: out of range always saturates to +-6,
 * and NaN gives 0x8 (the pattern of -0), as the backend tests expect.
 * FLOAT8E8M0 is an unsigned power of two 2^(e-127), 0xFF NaN; this file
 * rounds up, the default round_mode of Cast-24 (Cast itself handles the
 * other modes). */
#include <math.h>
#include <string.h>

#include "ir/tensor_kit.h"

/* Layout of one sign/exponent/mantissa small float. */
typedef struct TkF8Fmt {
    int ebits, mbits, bias;
    bool has_inf;   /* E5M2: the top exponent holds Inf/NaN like IEEE */
    bool uz;        /* FNUZ: 0x80 is the only NaN, no -0 */
    bool no_nan;    /* FLOAT4E2M1 */
    uint8_t max;    /* code of the largest finite value (positive) */
} TkF8Fmt;

static const TkF8Fmt ev_fmt_e4m3fn = { 4, 3, 7, false, false, false, 0x7E };
static const TkF8Fmt ev_fmt_e4m3fnuz = { 4, 3, 8, false, true, false, 0x7F };
static const TkF8Fmt ev_fmt_e5m2 = { 5, 2, 15, true, false, false, 0x7B };
static const TkF8Fmt ev_fmt_e5m2fnuz = { 5, 2, 16, false, true, false, 0x7F };
static const TkF8Fmt ev_fmt_e2m1 = { 2, 1, 1, false, false, true, 0x7 };

static const TkF8Fmt *tk_f8_fmt(int32_t dtype)
{
    switch (dtype) {
    case IR_FLOAT8E4M3FN: return &ev_fmt_e4m3fn;
    case IR_FLOAT8E4M3FNUZ: return &ev_fmt_e4m3fnuz;
    case IR_FLOAT8E5M2: return &ev_fmt_e5m2;
    case IR_FLOAT8E5M2FNUZ: return &ev_fmt_e5m2fnuz;
    case IR_FLOAT4E2M1: return &ev_fmt_e2m1;
    default: return NULL;
    }
}

/* Magnitude of a code without its sign bit (finite codes only). */
static double tk_f8_mag(const TkF8Fmt *f, unsigned code)
{
    unsigned e = code >> f->mbits, m = code & ((1u << f->mbits) - 1);
    if (e == 0)
        return ldexp((double)m, 1 - f->bias - f->mbits);
    return ldexp((double)((1u << f->mbits) | m), (int)e - f->bias - f->mbits);
}

static float tk_small_to_float(const TkF8Fmt *f, uint8_t bits)
{
    unsigned nbits = 1u + (unsigned)f->ebits + (unsigned)f->mbits;
    unsigned sign = (bits >> (nbits - 1)) & 1u;
    unsigned code = bits & ((1u << (nbits - 1)) - 1);
    unsigned top = (1u << f->ebits) - 1;
    if (f->uz) {
        if (bits == 0x80)
            return NAN;
    } else if (f->has_inf) {
        if ((code >> f->mbits) == top) {
            if ((code & ((1u << f->mbits) - 1)) == 0)
                return sign ? -INFINITY : INFINITY;
            return sign ? -NAN : NAN;
        }
    } else if (!f->no_nan && code == ((1u << (nbits - 1)) - 1)) {
        return sign ? -NAN : NAN;  /* E4M3FN: S.1111.111 */
    }
    double v = tk_f8_mag(f, code);
    return (float)(sign ? -v : v);
}

/* The code of the largest finite value (sign applied) or of overflow. */
static uint8_t tk_f8_overflow(const TkF8Fmt *f, unsigned sign, bool saturate)
{
    unsigned sbit = sign << (f->ebits + f->mbits);
    if (saturate || f->no_nan)
        return (uint8_t)(f->max | sbit);
    if (f->uz)
        return 0x80;
    if (f->has_inf)
        return (uint8_t)(((((1u << f->ebits) - 1) << f->mbits)) | sbit);
    return (uint8_t)(0x7F | sbit);  /* E4M3FN NaN */
}

static uint8_t tk_float_to_small(const TkF8Fmt *f, float x, bool saturate)
{
    unsigned sign = signbit(x) ? 1u : 0u;
    unsigned sbit = sign << (f->ebits + f->mbits);
    if (isnan(x)) {
        if (f->no_nan)
            return 0x8;
        if (f->uz)
            return 0x80;
        return (uint8_t)((f->has_inf ? 0x7E : 0x7F) | sbit);
    }
    if (isinf(x)) {
        if (f->has_inf && !saturate)
            return (uint8_t)(((((1u << f->ebits) - 1) << f->mbits)) | sbit);
        return tk_f8_overflow(f, sign, saturate);
    }
    double a = fabs((double)x);
    int emin = 1 - f->bias;     /* exponent of the smallest normal */
    int e;
    frexp(a, &e);               /* a = frac * 2^e, frac in [0.5, 1) */
    e -= 1;                     /* a in [2^e, 2^(e+1)) */
    if (e < emin)
        e = emin;               /* subnormal spacing */
    /* a / 2^(e-mbits) is exact in double; rint rounds half to even. */
    double q = rint(ldexp(a, f->mbits - e));
    double r = ldexp(q, e - f->mbits);
    if (r == 0)
        return (uint8_t)(f->uz ? 0 : sbit);
    if (r > tk_f8_mag(f, f->max))
        return tk_f8_overflow(f, sign, saturate);
    unsigned code;
    int re;
    frexp(r, &re);
    re -= 1;
    if (re < emin) {
        code = (unsigned)q;     /* subnormal: exponent field 0 */
    } else {
        unsigned m = (unsigned)ldexp(r, f->mbits - re) - (1u << f->mbits);
        code = ((unsigned)(re + f->bias) << f->mbits) | m;
    }
    if (f->uz && code == 0)
        return 0;
    return (uint8_t)(code | sbit);
}

/* E8M0 from float's own exponent field, rounding up when any mantissa
 * bit is set; zero (and subnormals that stay below 2^-127) gives 2^-127 when
 * saturating, NaN otherwise. */
static uint8_t tk_float_to_e8m0_up(float x, bool saturate)
{
    if (isnan(x))
        return 0xFF;
    if (isinf(x))
        return saturate ? 0xFE : 0xFF;
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    uint32_t e = (b >> 23) & 0xFF, m = b & 0x7FFFFF;
    if (e == 0 && m == 0)
        return saturate ? 0 : 0xFF;
    if (m != 0)
        e++;
    if (e > 0xFE)
        return saturate ? 0xFE : 0xFF;
    return (uint8_t)e;
}

float tk_f8_to_float(int32_t dtype, uint8_t bits)
{
    if (dtype == IR_FLOAT8E8M0) {
        if (bits == 0xFF)
            return NAN;
        return ldexpf(1.0f, (int)bits - 127);
    }
    const TkF8Fmt *f = tk_f8_fmt(dtype);
    if (!f)
        return 0;
    if (f->no_nan)
        bits &= 0xF;
    return tk_small_to_float(f, bits);
}

uint8_t tk_f8_from_float(int32_t dtype, float f, bool saturate)
{
    if (dtype == IR_FLOAT8E8M0)
        return tk_float_to_e8m0_up(f, saturate);
    const TkF8Fmt *fmt = tk_f8_fmt(dtype);
    if (!fmt)
        return 0;
    return tk_float_to_small(fmt, f, saturate);
}
