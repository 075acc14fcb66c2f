/*
 * tensor_kit.c - small dense tensors to compute on while converting and
 * optimizing (see tensor_kit.h). Decoding is the IR's one decoder
 * (ir_tensor_decode); this file adds ownership, element access with
 * Cast's conversions, and the way back to an IrTensor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fconv.h"
#include "base/half.h"
#include "ir/tensor_kit.h"

/* ---- types ------------------------------------------------------------- */

size_t tk_elem_size(int32_t dtype)
{
    return dtype == IR_STRING ? sizeof(IrBytes) : ir_dtype_host_size(dtype);
}

bool tk_computes(int32_t dtype)
{
    switch (ir_dtype_class(dtype)) {
    case IR_DC_SINT: case IR_DC_UINT: case IR_DC_BOOL: case IR_DC_FLOAT:
        return true;
    default:
        return false;
    }
}

/* ---- lifetime ------------------------------------------------------------ */

/* The element count of dims, or false (err set) when a dim is negative or
 * the count overflows; a zero dim empties the tensor whatever the others
 * are, so [2^40, 2^40, 0] is as valid as [0, 2^40, 2^40]. */
static bool tk_count(size_t rank, const int64_t *dims, size_t *numel, IrError *err)
{
    bool empty = false;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            ir_fail(err, "tensor dim %zu is negative", i);
            return false;
        }
        empty = empty || dims[i] == 0;
    }
    *numel = empty ? 0 : 1;
    for (size_t i = 0; i < rank && !empty; i++) {
        if (!mem_mul_size(*numel, (size_t)dims[i], numel)) {
            ir_fail(err, "tensor dims overflow");
            return false;
        }
    }
    return true;
}

TkTensor *tk_new(int32_t dtype, size_t rank, const int64_t *dims, IrError *err)
{
    size_t es = tk_elem_size(dtype), numel, bytes;
    if (!es) {
        ir_fail(err, "element type %d is not supported", (int)dtype);
        return NULL;
    }
    if (rank > TK_MAX_RANK) {
        ir_fail(err, "rank %zu is above the limit of %d", rank, TK_MAX_RANK);
        return NULL;
    }
    if (!tk_count(rank, dims, &numel, err))
        return NULL;
    if (!mem_mul_size(numel, es, &bytes) || bytes > TK_MAX_BYTES) {
        ir_fail(err, "a tensor of %zu elements is above the limit of %llu bytes",
                numel, (unsigned long long)TK_MAX_BYTES);
        return NULL;
    }
    TkTensor *t = mem_alloc(sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    t->dims = mem_array(rank ? rank : 1, sizeof *t->dims);
    if (rank)
        memcpy(t->dims, dims, rank * sizeof *dims);
    t->numel = numel;
    t->nbytes = bytes;
    t->data = mem_alloc(bytes);
    return t;
}

void tk_free(TkTensor *t)
{
    if (!t)
        return;
    if (t->dtype == IR_STRING) {
        IrBytes *s = t->data;
        for (size_t k = 0; k < t->numel; k++)
            free(s[k].data);
    }
    free(t->dims);
    free(t->data);
    free(t);
}

void tk_copy(TkTensor *dst, size_t doff, const TkTensor *src, size_t soff, size_t n)
{
    if (!n)
        return;
    if (src->dtype != IR_STRING) {
        size_t es = tk_elem_size(src->dtype);
        memcpy((char *)dst->data + doff * es, (const char *)src->data + soff * es, n * es);
        return;
    }
    /* each tensor owns its strings */
    const IrBytes *s = (const IrBytes *)src->data + soff;
    IrBytes *d = (IrBytes *)dst->data + doff;
    for (size_t k = 0; k < n; k++) {
        free(d[k].data);
        d[k].len = s[k].len;
        d[k].data = mem_alloc(s[k].len);
        if (s[k].len)
            memcpy(d[k].data, s[k].data, s[k].len);
    }
}

TkTensor *tk_clone(const TkTensor *t)
{
    /* t's size was accepted when t was made: this cannot be refused */
    TkTensor *c = tk_new(t->dtype, t->rank, t->dims, NULL);
    if (!c)
        abort();
    tk_copy(c, 0, t, 0, t->numel);
    return c;
}

/* ---- from and to the IR ---------------------------------------------------- */

/* string_data into t's elements, which must be as many as t has. */
static int tk_decode_strings(TkTensor *t, const IrTensor *it, const char *name,
                             IrError *err)
{
    if (it->n_string != t->numel)
        return ir_fail(err, "tensor '%s': string_data has %zu values, its dims "
                       "need %zu", name, it->n_string, t->numel);
    IrBytes *s = t->data;
    for (size_t k = 0; k < t->numel; k++) {
        s[k].len = it->string_data[k].len;
        s[k].data = mem_alloc(s[k].len);
        if (s[k].len)
            memcpy(s[k].data, it->string_data[k].data, s[k].len);
    }
    return 0;
}

TkTensor *tk_from_ir(const IrTensor *it, IrError *err)
{
    const char *name = it->name ? it->name : "";
    if (!it->has_data_type || !tk_elem_size(it->data_type)) {
        ir_fail(err, "tensor '%s': element type %d is not supported", name,
                (int)it->data_type);
        return NULL;
    }
    /* before allocating: dims that promise more than the data holds */
    if (ir_tensor_check_declared(it, err))
        return NULL;
    IrError sub;
    TkTensor *t = tk_new(it->data_type, it->ndims, it->dims, &sub);
    if (!t) {
        ir_fail(err, "tensor '%s': %s", name, sub.msg);
        return NULL;
    }
    /* strings in raw or external bytes have no layout: the decoder refuses */
    int rc = it->data_type == IR_STRING && !it->has_raw && !ir_tensor_is_external(it)
                 ? tk_decode_strings(t, it, name, err)
                 : ir_tensor_decode(it, t->data, t->numel, err);
    if (rc) {
        tk_free(t);
        return NULL;
    }
    return t;
}

/* t, a tensor of strings, as an IrTensor with string_data. */
static IrTensor *tk_strings_to_ir(const TkTensor *t, const char *name)
{
    IrTensor *it = ir_tensor_new(name, IR_STRING, t->rank, t->dims, NULL, 0);
    const IrBytes *s = t->data;
    free(it->raw.data);     /* strings live in string_data, not raw_data */
    it->raw.data = NULL;
    it->has_raw = false;
    it->n_string = t->numel;
    it->string_data = mem_array(t->numel ? t->numel : 1, sizeof *it->string_data);
    for (size_t k = 0; k < t->numel; k++) {
        it->string_data[k].len = s[k].len;
        it->string_data[k].data = mem_alloc(s[k].len);
        if (s[k].len)
            memcpy(it->string_data[k].data, s[k].data, s[k].len);
    }
    return it;
}

IrTensor *tk_to_ir(const TkTensor *t, const char *name)
{
    if (t->dtype == IR_STRING)
        return tk_strings_to_ir(t, name);
    unsigned per = ir_dtype_per_byte(t->dtype);
    if (per == 1)
        return ir_tensor_new(name, t->dtype, t->rank, t->dims, t->data, t->nbytes);
    /* 4- and 2-bit types: packed, first element in the lowest bits */
    unsigned bits = 8 / per;
    size_t len = (t->numel + per - 1) / per;
    uint8_t mask = (uint8_t)((1u << bits) - 1), *p = mem_alloc(len);
    for (size_t k = 0; k < t->numel; k++) {
        uint8_t x = (uint8_t)(((const uint8_t *)t->data)[k] & mask);
        p[k / per] |= (uint8_t)(x << (bits * (k % per)));
    }
    IrTensor *it = ir_tensor_new(name, t->dtype, t->rank, t->dims, p, len);
    free(p);
    return it;
}

/* ---- element access ---------------------------------------------------------- */

/* The one element access of the product: the kit's tensors and the
 * evaluator's values (eval/value.c) share this layout and these
 * conversions. */

double tk_load_f(int32_t dtype, const void *d, size_t k)
{
    switch (dtype) {
    case IR_FLOAT: return ((const float *)d)[k];
    case IR_DOUBLE: return ((const double *)d)[k];
    case IR_FLOAT16: return half_f16_to_f32(((const uint16_t *)d)[k]);
    case IR_BFLOAT16: return half_bf16_to_f32(((const uint16_t *)d)[k]);
    case IR_INT8: case IR_INT4: case IR_INT2: return ((const int8_t *)d)[k];
    case IR_UINT8: case IR_BOOL: case IR_UINT4: case IR_UINT2:
        return ((const uint8_t *)d)[k];
    case IR_INT16: return ((const int16_t *)d)[k];
    case IR_UINT16: return ((const uint16_t *)d)[k];
    case IR_INT32: return ((const int32_t *)d)[k];
    case IR_UINT32: return ((const uint32_t *)d)[k];
    case IR_INT64: return (double)((const int64_t *)d)[k];
    case IR_UINT64: return (double)((const uint64_t *)d)[k];
    case IR_COMPLEX64: return ((const float *)d)[2 * k];
    case IR_COMPLEX128: return ((const double *)d)[2 * k];
    case IR_FLOAT8E4M3FN: case IR_FLOAT8E4M3FNUZ: case IR_FLOAT8E5M2:
    case IR_FLOAT8E5M2FNUZ: case IR_FLOAT4E2M1: case IR_FLOAT8E8M0:
        return tk_f8_to_float(dtype, ((const uint8_t *)d)[k]);
    default: return 0;
    }
}

int64_t tk_load_i(int32_t dtype, const void *d, size_t k)
{
    switch (dtype) {
    case IR_INT8: case IR_INT4: case IR_INT2: return ((const int8_t *)d)[k];
    case IR_UINT8: case IR_BOOL: case IR_UINT4: case IR_UINT2:
        return ((const uint8_t *)d)[k];
    case IR_INT16: return ((const int16_t *)d)[k];
    case IR_UINT16: return ((const uint16_t *)d)[k];
    case IR_INT32: return ((const int32_t *)d)[k];
    case IR_UINT32: return ((const uint32_t *)d)[k];
    case IR_INT64: return ((const int64_t *)d)[k];
    case IR_UINT64: return (int64_t)((const uint64_t *)d)[k];
    case IR_STRING: return 0;
    default: {
        /* Floats truncate toward zero; out-of-range and NaN give INT64_MIN
         * rather than undefined behaviour. */
        double x = tk_load_f(dtype, d, k);
        if (!(x > -9223372036854775808.0 && x < 9223372036854775808.0))
            return INT64_MIN;
        return (int64_t)x;
    }
    }
}

uint64_t tk_load_u(int32_t dtype, const void *d, size_t k)
{
    if (dtype == IR_UINT64)
        return ((const uint64_t *)d)[k];
    if (ir_dtype_is_float(dtype)) {
        double x = tk_load_f(dtype, d, k);
        if (x >= 0 && x < 18446744073709551616.0)
            return (uint64_t)x;
    }
    return (uint64_t)tk_load_i(dtype, d, k);
}

/* Integer stores: the int64 value wraps to the element width like a C
 * conversion to the unsigned type; 4- and 2-bit types keep their low bits
 * (sign-extended for the signed ones). */
void tk_store_i(int32_t dtype, void *d, size_t k, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (dtype) {
    case IR_INT8: ((int8_t *)d)[k] = (int8_t)(uint8_t)u; return;
    case IR_UINT8: ((uint8_t *)d)[k] = (uint8_t)u; return;
    case IR_BOOL: ((uint8_t *)d)[k] = v != 0; return;
    case IR_INT16: ((int16_t *)d)[k] = (int16_t)(uint16_t)u; return;
    case IR_UINT16: ((uint16_t *)d)[k] = (uint16_t)u; return;
    case IR_INT32: ((int32_t *)d)[k] = (int32_t)(uint32_t)u; return;
    case IR_UINT32: ((uint32_t *)d)[k] = (uint32_t)u; return;
    case IR_INT64: ((int64_t *)d)[k] = v; return;
    case IR_UINT64: ((uint64_t *)d)[k] = u; return;
    case IR_UINT4: ((uint8_t *)d)[k] = (uint8_t)(u & 0xf); return;
    case IR_UINT2: ((uint8_t *)d)[k] = (uint8_t)(u & 0x3); return;
    case IR_INT4: ((int8_t *)d)[k] = (int8_t)(((int)(u & 0xf) ^ 8) - 8); return;
    case IR_INT2: ((int8_t *)d)[k] = (int8_t)(((int)(u & 0x3) ^ 2) - 2); return;
    case IR_STRING: return;
    default: tk_store_f(dtype, d, k, (double)v); return;
    }
}

void tk_store_u(int32_t dtype, void *d, size_t k, uint64_t v)
{
    if (dtype == IR_UINT64)
        ((uint64_t *)d)[k] = v;
    else if (ir_dtype_is_float(dtype))
        tk_store_f(dtype, d, k, (double)v);
    else
        tk_store_i(dtype, d, k, (int64_t)v);
}

void tk_store_f(int32_t dtype, void *d, size_t k, double v)
{
    switch (dtype) {
    case IR_FLOAT: ((float *)d)[k] = (float)v; return;
    case IR_DOUBLE: ((double *)d)[k] = v; return;
    case IR_FLOAT16: ((uint16_t *)d)[k] = half_f32_to_f16((float)v); return;
    case IR_BFLOAT16: ((uint16_t *)d)[k] = half_f32_to_bf16((float)v); return;
    case IR_BOOL: ((uint8_t *)d)[k] = v != 0; return;
    case IR_COMPLEX64:
        ((float *)d)[2 * k] = (float)v;
        ((float *)d)[2 * k + 1] = 0;
        return;
    case IR_COMPLEX128:
        ((double *)d)[2 * k] = v;
        ((double *)d)[2 * k + 1] = 0;
        return;
    case IR_FLOAT8E4M3FN: case IR_FLOAT8E4M3FNUZ: case IR_FLOAT8E5M2:
    case IR_FLOAT8E5M2FNUZ: case IR_FLOAT4E2M1: case IR_FLOAT8E8M0:
        ((uint8_t *)d)[k] = tk_f8_from_float(dtype, (float)v, true);
        return;
    case IR_UINT64:
        /* the whole unsigned range, which int64 would cut in half */
        if (v >= 0)
            ((uint64_t *)d)[k] = fc_u64_sat(v);
        else
            tk_store_i(dtype, d, k, fc_i64_sat(v));
        return;
    case IR_STRING: return;
    default: tk_store_i(dtype, d, k, fc_i64_sat(v)); return;
    }
}

double tk_get_f(const TkTensor *t, size_t k)
{
    return tk_load_f(t->dtype, t->data, k);
}

int64_t tk_get_i(const TkTensor *t, size_t k)
{
    return tk_load_i(t->dtype, t->data, k);
}

uint64_t tk_get_u(const TkTensor *t, size_t k)
{
    return tk_load_u(t->dtype, t->data, k);
}

void tk_set_f(TkTensor *t, size_t k, double v)
{
    tk_store_f(t->dtype, t->data, k, v);
}

void tk_set_i(TkTensor *t, size_t k, int64_t v)
{
    tk_store_i(t->dtype, t->data, k, v);
}

void tk_set_u(TkTensor *t, size_t k, uint64_t v)
{
    tk_store_u(t->dtype, t->data, k, v);
}
