/*
 * half.c - float16 and bfloat16 conversions (prefix half_).
 */
#include "base/half.h"

#include <string.h>

static uint32_t half_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float half_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float half_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f)                          /* Inf, NaN */
        return half_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        /* zero or subnormal: man * 2^-24, exact in float */
        float f = (float)man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    return half_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t half_f32_to_f16(float f)
{
    uint32_t u = half_bits(f);
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

float half_bf16_to_f32(uint16_t h)
{
    return half_float((uint32_t)h << 16);
}

uint16_t half_f32_to_bf16(float f)
{
    uint32_t u = half_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffff))
        return (uint16_t)((u >> 16) | 0x40);  /* keep NaN a NaN */
    uint32_t rem = u & 0xffff, q = u >> 16;
    if (rem > 0x8000 || (rem == 0x8000 && (q & 1)))
        q++;
    return (uint16_t)q;
}
