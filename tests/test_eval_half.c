/*
 * test_eval_half.c - the evaluator's float32 -> bfloat16 / float16
 * narrowing on hand-written bit patterns: round to nearest, ties to even,
 * overflow to Inf, NaN kept a NaN (of either sign), subnormals.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval/eval.h"
#include "t.h"

static float eh_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void eh_bf16(uint32_t in, uint16_t want)
{
    uint16_t got = half_f32_to_bf16(eh_f(in));
    T_CHECK(got == want, "bf16(0x%08x) = 0x%04x, expected 0x%04x", in, got,
            want);
}

static void eh_half(uint32_t in, uint16_t want)
{
    uint16_t got = half_f32_to_f16(eh_f(in));
    T_CHECK(got == want, "half(0x%08x) = 0x%04x, expected 0x%04x", in, got,
            want);
}

/* NaN in, a NaN of the same sign out (any payload). */
static void eh_nan(uint32_t in)
{
    uint16_t b = half_f32_to_bf16(eh_f(in)), h = half_f32_to_f16(eh_f(in));
    T_CHECK((b & 0x7f80) == 0x7f80 && (b & 0x7f) && (b >> 15) == (in >> 31),
            "bf16(0x%08x) = 0x%04x is not a NaN of that sign", in, b);
    T_CHECK((h & 0x7c00) == 0x7c00 && (h & 0x3ff) && (h >> 15) == (in >> 31),
            "half(0x%08x) = 0x%04x is not a NaN of that sign", in, h);
}

int main(void)
{
    /* bfloat16 keeps float32's top 16 bits, rounding the rest */
    eh_bf16(0x3f800000, 0x3f80);   /* 1 */
    eh_bf16(0x3f807fff, 0x3f80);   /* below half: down */
    eh_bf16(0x3f808000, 0x3f80);   /* tie, even below: down */
    eh_bf16(0x3f818000, 0x3f82);   /* tie, odd below: up to even */
    eh_bf16(0x3f808001, 0x3f81);   /* above half: up */
    eh_bf16(0xbf818000, 0xbf82);   /* the same negative */
    eh_bf16(0x3fffffff, 0x4000);   /* carry into the exponent */
    eh_bf16(0x7f7fffff, 0x7f80);   /* FLT_MAX rounds to Inf */
    eh_bf16(0x7f7f7fff, 0x7f7f);   /* the largest that stays finite */
    eh_bf16(0x7f800000, 0x7f80);   /* +Inf */
    eh_bf16(0xff800000, 0xff80);   /* -Inf */
    eh_bf16(0x80000000, 0x8000);   /* -0 */
    eh_bf16(0x00008000, 0x0000);   /* subnormal tie, even: 0 */
    eh_bf16(0x00018000, 0x0002);   /* subnormal tie, odd: up */
    eh_bf16(0x00008001, 0x0001);
    /* float16 */
    eh_half(0x3f800000, 0x3c00);   /* 1 */
    eh_half(0x3f801000, 0x3c00);   /* 1 + 2^-11: tie, even: down */
    eh_half(0x3f803000, 0x3c02);   /* 1 + 3 * 2^-11: tie, odd: up */
    eh_half(0x3f801001, 0x3c01);
    eh_half(0x477fe000, 0x7bff);   /* 65504 */
    eh_half(0x477fefff, 0x7bff);   /* just under 65520: finite */
    eh_half(0x477ff000, 0x7c00);   /* 65520: tie to even is Inf */
    eh_half(0xc77ff000, 0xfc00);
    eh_half(0x33800000, 0x0001);   /* 2^-24, the smallest subnormal */
    eh_half(0x33000000, 0x0000);   /* 2^-25: tie, even: 0 */
    eh_half(0x33400000, 0x0001);   /* 1.5 * 2^-25: up */
    eh_half(0x38800000, 0x0400);   /* 2^-14, the smallest normal */
    eh_half(0x387fe000, 0x0400);   /* 2^-14 - 2^-25: tie rounds up */
    eh_half(0x387fc000, 0x03ff);   /* 2^-14 - 2^-24: exact */
    eh_half(0x7f800000, 0x7c00);
    eh_half(0xff800000, 0xfc00);
    eh_nan(0x7fc00000);
    eh_nan(0xffc00000);
    eh_nan(0x7f800001);            /* payload only in bits bf16 drops */
    eh_nan(0xff800001);
    eh_nan(0x7f802000);            /* payload only in bits half drops */
    /* and back: the widening is exact */
    T_CHECK(half_bf16_to_f32(0x3f81) == eh_f(0x3f810000), "bf16 0x3f81");
    T_CHECK(isinf(half_bf16_to_f32(0xff80)) && half_bf16_to_f32(0xff80) < 0,
            "bf16 -Inf");
    T_CHECK(half_bf16_to_f32(0x0001) == eh_f(0x00010000), "bf16 subnormal");
    T_CHECK(half_f16_to_f32(0x0001) == ldexpf(1, -24), "half subnormal");
    T_CHECK(half_f16_to_f32(0x7bff) == 65504.0f, "half max");
    T_CHECK(isnan(half_f16_to_f32(0x7e00)), "half NaN");
    return t_done("eval_half");
}
