/* float16 and bfloat16 <-> float. Both round to nearest even when
 * narrowing, as IEEE 754 and the spec's Cast require; NaN stays NaN. */
#include <string.h>

#include "eval.h"

static uint32_t ev_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float ev_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float ev_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f)                          /* Inf, NaN */
        return ev_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return ev_bits_f32(sign);
        /* subnormal: man * 2^-24 */
        float f = (float)man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    return ev_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t ev_float_to_half(float f)
{
    uint32_t u = ev_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t exp = (u >> 23) & 0xff, man = u & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00);   /* overflow: Inf */
    if (e <= 0) {
        /* subnormal or zero: shift the full mantissa, round to even */
        if (e < -10)
            return sign;
        uint32_t m = man | 0x800000;
        unsigned shift = (unsigned)(14 - e);
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1)))
        q++;                                  /* may carry into Inf: right */
    return (uint16_t)(sign | q);
}

float ev_bf16_to_float(uint16_t h)
{
    return ev_bits_f32((uint32_t)h << 16);
}

uint16_t ev_float_to_bf16(float f)
{
    uint32_t u = ev_f32_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffff))
        return (uint16_t)((u >> 16) | 0x40);  /* keep NaN a NaN */
    uint32_t rem = u & 0xffff, q = u >> 16;
    if (rem > 0x8000 || (rem == 0x8000 && (q & 1)))
        q++;
    return (uint16_t)q;
}
