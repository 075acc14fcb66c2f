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

/* Decoding is the IR's (src/ir_tensor.c), so the tensor decoder and the
 * kernels agree on every bit pattern. */
float ev_half_to_float(uint16_t h)
{
    return ir_half_to_float(h);
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
    return ir_bf16_to_float(h);
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
