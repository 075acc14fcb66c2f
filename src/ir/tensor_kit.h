/*
 * tensor_kit.h - small dense tensors to compute on while converting and
 * optimizing (prefix tk_): the constants the adapters rewrite (indices
 * made non-negative, folded tables, masks) and the weights the fusions
 * fold (Conv + BatchNormalization, Conv + Add/Mul).
 *
 * A TkTensor owns its elements, unpacked one C object per element in the
 * layout ir_tensor_decode writes (ir_dtype_host_size: float16/bfloat16
 * and the 8/4-bit float types as bit patterns, 4- and 2-bit integers one
 * per byte, sign-extended); strings are IrBytes, each owned. It is made
 * from an IrTensor (any storage the IR's decoder reads) or zeroed, and
 * goes back to a new IrTensor.
 *
 * Element access (the one of the product: the evaluator's values have
 * this layout and use tk_load_* / tk_store_*) converts as ONNX's Cast
 * does: floats round to nearest even (the 8- and 4-bit float types
 * through tensor_f8.c, saturating), float to integer truncates toward
 * zero, integer to narrower integer wraps. A complex element reads as its
 * real part and is written with a zero imaginary one; strings read as 0
 * and are not written; tk_computes says which types compute.
 */
#ifndef OC_TENSOR_KIT_H
#define OC_TENSOR_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* The evaluator's limits, so that everything it accepted still fits. */
#define TK_MAX_RANK 64
#define TK_MAX_BYTES ((uint64_t)1 << 34)

typedef struct TkTensor {
    int32_t dtype;
    size_t rank;
    int64_t *dims;   /* rank entries (an allocated block even at rank 0) */
    size_t numel;
    size_t nbytes;   /* numel * tk_elem_size(dtype) */
    void *data;      /* numel elements (never NULL) */
} TkTensor;

/* Bytes one element takes (sizeof(IrBytes) for strings); 0 for UNDEFINED
 * and unknown codes, which no tensor can have. */
size_t tk_elem_size(int32_t dtype);
/* Whether tk_get_* / tk_set_* compute on elements of dtype: the real,
 * integer and bool types (not complex, not strings; see above). */
bool tk_computes(int32_t dtype);

/* A new tensor of zeroed elements (empty strings), owned by the caller
 * (tk_free). NULL with err set (err may be NULL) for an unknown dtype,
 * rank above TK_MAX_RANK, a negative dim, or a size that overflows or
 * passes TK_MAX_BYTES; checked before anything is allocated. A zero dim
 * makes the tensor empty whatever the other dims are. */
TkTensor *tk_new(int32_t dtype, size_t rank, const int64_t *dims, IrError *err);
/* t decoded (raw, typed lists or bound external data; strings from
 * string_data), owned by the caller. NULL with err set (naming the
 * tensor) when its type is unknown or its data does not hold exactly the
 * elements its dims declare. */
TkTensor *tk_from_ir(const IrTensor *t, IrError *err);
/* A deep copy of t, owned by the caller. */
TkTensor *tk_clone(const TkTensor *t);
void tk_free(TkTensor *t);   /* NULL ok */
/* t as a new IrTensor named `name` (NULL: no name), owned by the caller:
 * raw_data (4- and 2-bit types packed, first element in the low bits) or
 * string_data. */
IrTensor *tk_to_ir(const TkTensor *t, const char *name);

/* Element k of `dtype` elements at d as double / int64 / uint64 (as
 * tk_get_*), and stores into element k (as tk_set_*). */
double tk_load_f(int32_t dtype, const void *d, size_t k);
int64_t tk_load_i(int32_t dtype, const void *d, size_t k);
uint64_t tk_load_u(int32_t dtype, const void *d, size_t k);
void tk_store_f(int32_t dtype, void *d, size_t k, double v);
void tk_store_i(int32_t dtype, void *d, size_t k, int64_t v);
void tk_store_u(int32_t dtype, void *d, size_t k, uint64_t v);

/* The small float types (tensor_f8.c): bits -> float, float -> bits
 * rounding to nearest even at the type's width, saturating or not as
 * Cast-19+'s tables say. */
float tk_f8_to_float(int32_t dtype, uint8_t bits);
uint8_t tk_f8_from_float(int32_t dtype, float f, bool saturate);

/* Element k as double / int64 / uint64. Integers read exactly (uint64
 * above INT64_MAX wraps in tk_get_i); floats truncate toward zero, and
 * NaN or out of range reads INT64_MIN (tk_get_u: reads as unsigned when
 * in [0, 2^64), else as tk_get_i). */
double tk_get_f(const TkTensor *t, size_t k);
int64_t tk_get_i(const TkTensor *t, size_t k);
uint64_t tk_get_u(const TkTensor *t, size_t k);
/* Stores v into element k, converted to t's type: to a float type by
 * rounding (float16/bfloat16 through float); to an integer from double
 * by truncation toward zero, saturated to int64 (NaN is 0), then wrapped
 * to the width as from int64; bool is v != 0. */
void tk_set_f(TkTensor *t, size_t k, double v);
void tk_set_i(TkTensor *t, size_t k, int64_t v);
void tk_set_u(TkTensor *t, size_t k, uint64_t v);

/* Copies n elements of src from element soff to dst from element doff;
 * both of one dtype, ranges in bounds. Strings are duplicated. */
void tk_copy(TkTensor *dst, size_t doff, const TkTensor *src, size_t soff, size_t n);

#endif
