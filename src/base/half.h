/*
 * half.h - float16 and bfloat16 <-> float32, the one copy every room uses
 * (prefix half_).
 *
 * Narrowing rounds to nearest, ties to even, as IEEE 754 and ONNX's Cast
 * require: float16 overflows to infinity and goes subnormal below 2^-14;
 * NaN stays a quiet NaN. Widening is exact.
 */
#ifndef OC_HALF_H
#define OC_HALF_H

#include <stdint.h>

float half_f16_to_f32(uint16_t h);
uint16_t half_f32_to_f16(float f);
float half_bf16_to_f32(uint16_t h);
uint16_t half_f32_to_bf16(float f);

#endif
