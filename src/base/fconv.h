/*
 * fconv.h - float-to-integer conversions without undefined behaviour
 * (prefix fc_).
 *
 * C leaves (int64_t)x undefined when x is NaN or outside the target's
 * range; x86 quietly gives INT64_MIN, so a constant of 2^63 would become
 * -2^63 and nothing would notice. Every such conversion in the adapters,
 * the passes, inference and the evaluator goes through here: the adapters
 * refuse what does not fit (fc_i64), the kernels saturate (fc_i64_sat).
 */
#ifndef OC_FCONV_H
#define OC_FCONV_H

#include <stdbool.h>
#include <stdint.h>

/* 2^63 and 2^64, exact in double. */
#define FC_TWO63 9223372036854775808.0
#define FC_TWO64 18446744073709551616.0

/* x truncated toward zero into *out when that fits int64_t (NaN never
 * does); false otherwise, *out untouched. */
static inline bool fc_i64(double x, int64_t *out)
{
    if (!(x >= -FC_TWO63 && x < FC_TWO63))
        return false;
    *out = (int64_t)x;
    return true;
}

/* x truncated toward zero and saturated to int64_t; NaN gives 0. */
static inline int64_t fc_i64_sat(double x)
{
    int64_t v;
    if (fc_i64(x, &v))
        return v;
    return x != x ? 0 : x > 0 ? INT64_MAX : INT64_MIN;
}

/* x truncated toward zero and saturated to [lo, hi]; NaN gives 0 when
 * that is in range, else lo. */
static inline int64_t fc_clamp(double x, int64_t lo, int64_t hi)
{
    int64_t v = fc_i64_sat(x);
    return v < lo ? lo : v > hi ? hi : v;
}

/* x truncated toward zero and saturated to uint64_t; NaN gives 0. */
static inline uint64_t fc_u64_sat(double x)
{
    if (!(x > 0))
        return 0;
    return x >= FC_TWO64 ? UINT64_MAX : (uint64_t)x;
}

#endif
