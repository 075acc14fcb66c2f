/* The one decoder of IR tensors (TensorProto payloads): element access by
 * index for the modules that read a few values (inference, adapters,
 * passes), and the bulk decode the evaluator fills its values with. Both
 * read the same storage rules: raw_data or bound external data (little-
 * endian, 4- and 2-bit types packed first element lowest), or the typed
 * lists. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "ir/ir.h"

/* The bulk decode copies raw bytes into host arrays: TensorProto is
 * little-endian. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the tensor decoder assumes a little-endian host");

/* ---- types and storage ------------------------------------------------- */

unsigned ir_dtype_per_byte(int32_t dtype)
{
    int bits = ir_dtype_bits(dtype);
    return bits == 4 ? 2 : bits == 2 ? 4 : 1;
}

size_t ir_dtype_host_size(int32_t dtype)
{
    int bits = ir_dtype_bits(dtype);
    if (bits <= 0)
        return 0;
    return bits < 8 ? 1 : (size_t)bits / 8;
}

bool ir_dtype_bytes(int32_t dtype, uint64_t numel, uint64_t *bytes)
{
    int bits = ir_dtype_bits(dtype);
    if (bits <= 0 || numel > (UINT64_MAX - 7) / (uint64_t)bits)
        return false;
    *bytes = (numel * (uint64_t)bits + 7) / 8;
    return true;
}

bool ir_tensor_is_external(const IrTensor *t)
{
    return t->has_data_location && t->data_location == 1;
}

const uint8_t *ir_tensor_bytes(const IrTensor *t, size_t *len)
{
    if (ir_tensor_is_external(t)) {
        *len = t->ext.bound ? t->ext.len : 0;
        return t->ext.bound ? t->ext.data : NULL;
    }
    if (t->has_raw) {
        *len = t->raw.len;
        return t->raw.data;
    }
    *len = 0;
    return NULL;
}

/* The typed list a type is stored in, when not raw: its entry count. */
static size_t ir_typed_entries(const IrTensor *t)
{
    switch (t->data_type) {
    case IR_FLOAT: case IR_COMPLEX64: return t->n_float;
    case IR_DOUBLE: case IR_COMPLEX128: return t->n_double;
    case IR_INT64: return t->n_int64;
    case IR_UINT32: case IR_UINT64: return t->n_uint64;
    case IR_STRING: return t->n_string;
    default: return t->n_int32;
    }
}

size_t ir_tensor_present_elems(const IrTensor *t)
{
    int32_t dt = t->data_type;
    unsigned per = ir_dtype_per_byte(dt);
    size_t es = ir_dtype_host_size(dt), len;
    if (ir_tensor_is_external(t)) {
        if (!t->ext.bound || !es)
            return SIZE_MAX;
        len = t->ext.len;
    } else if (t->has_raw) {
        if (!es)
            return SIZE_MAX;
        len = t->raw.len;
    } else {
        size_t have = ir_typed_entries(t);
        if (dt == IR_COMPLEX64 || dt == IR_COMPLEX128)
            return have / 2;
        if (dt == IR_FLOAT || dt == IR_DOUBLE || dt == IR_INT64 ||
            dt == IR_UINT32 || dt == IR_UINT64 || dt == IR_STRING)
            return have;
        return per > 1 && have <= SIZE_MAX / per ? have * per : have;
    }
    if (per > 1)
        return len <= SIZE_MAX / per ? len * per : SIZE_MAX;
    return len / es;
}

int ir_tensor_check_declared(const IrTensor *t, IrError *err)
{
    const char *name = t->name ? t->name : "";
    size_t numel = 1;
    for (size_t i = 0; i < t->ndims; i++)
        if (t->dims[i] == 0)
            return 0;
    for (size_t i = 0; i < t->ndims; i++)
        if (t->dims[i] < 0 || !mem_mul_size(numel, (size_t)t->dims[i], &numel))
            return ir_fail(err, "tensor '%s': dims overflow or are negative",
                           name);
    size_t have = ir_tensor_present_elems(t);
    if (have == SIZE_MAX || numel <= have)
        return 0;
    bool ext = ir_tensor_is_external(t);
    if (ext || t->has_raw)   /* in bytes, as the decoders say it */
        return ir_fail(err, "tensor '%s': %s has %zu bytes, its dims declare "
                       "%zu elements", name, ext ? "external data" : "raw_data",
                       ext ? t->ext.len : t->raw.len, numel);
    return ir_fail(err, "tensor '%s': its dims declare %zu elements, its "
                   "data holds %zu", name, numel, have);
}

/* ---- bulk decode --------------------------------------------------------- */

/* Stores integer v as element k of dst: wrapped to the element width like a
 * C conversion to the unsigned type; 4- and 2-bit types keep their low bits
 * (sign-extended for the signed ones); bool is v != 0. */
static void ir_store_int(void *dst, int32_t dtype, size_t k, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (dtype) {
    case IR_INT8: ((int8_t *)dst)[k] = (int8_t)(uint8_t)u; return;
    case IR_UINT8: ((uint8_t *)dst)[k] = (uint8_t)u; return;
    case IR_BOOL: ((uint8_t *)dst)[k] = v != 0; return;
    case IR_INT16: ((int16_t *)dst)[k] = (int16_t)(uint16_t)u; return;
    case IR_UINT16: ((uint16_t *)dst)[k] = (uint16_t)u; return;
    case IR_INT32: ((int32_t *)dst)[k] = (int32_t)(uint32_t)u; return;
    case IR_UINT32: ((uint32_t *)dst)[k] = (uint32_t)u; return;
    case IR_INT64: ((int64_t *)dst)[k] = v; return;
    case IR_UINT64: ((uint64_t *)dst)[k] = u; return;
    case IR_UINT4: ((uint8_t *)dst)[k] = (uint8_t)(u & 0xf); return;
    case IR_UINT2: ((uint8_t *)dst)[k] = (uint8_t)(u & 0x3); return;
    case IR_INT4: {
        int x = (int)(u & 0xf);
        ((int8_t *)dst)[k] = (int8_t)(x >= 8 ? x - 16 : x);
        return;
    }
    case IR_INT2: {
        int x = (int)(u & 0x3);
        ((int8_t *)dst)[k] = (int8_t)(x >= 2 ? x - 4 : x);
        return;
    }
    default: return;
    }
}

/* Unpacks numel sub-byte elements (first element in the lowest bits). */
static void ir_unpack_bits(void *dst, int32_t dtype, size_t numel,
                           const uint8_t *src)
{
    unsigned per = ir_dtype_per_byte(dtype), bits = 8 / per;
    uint8_t mask = (uint8_t)((1u << bits) - 1);
    for (size_t k = 0; k < numel; k++) {
        uint8_t x = (uint8_t)((src[k / per] >> (bits * (k % per))) & mask);
        if (dtype == IR_FLOAT4E2M1)
            ((uint8_t *)dst)[k] = x;
        else
            ir_store_int(dst, dtype, k, x);
    }
}

static int ir_decode_raw(int32_t dtype, void *dst, size_t numel,
                         const uint8_t *p, size_t len, const char *name,
                         IrError *err)
{
    unsigned per = ir_dtype_per_byte(dtype);
    uint64_t want64 = 0;
    if (dtype == IR_STRING)
        return ir_fail(err, "tensor '%s': strings cannot be in raw_data", name);
    size_t want = ir_dtype_bytes(dtype, numel, &want64) && want64 <= SIZE_MAX
                      ? (size_t)want64 : SIZE_MAX;
    if (len != want)
        return ir_fail(err, "tensor '%s': raw_data has %zu bytes, its dims "
                       "need %zu", name, len, want);
    if (per > 1)
        ir_unpack_bits(dst, dtype, numel, p);
    else if (len)
        memcpy(dst, p, len);
    return 0;
}

/* int32_data holds the small types one element per entry (float16 and
 * bfloat16 as bit patterns); for the 4- and 2-bit types writers differ, so
 * both one-per-entry and packed bytes are accepted. */
static int ir_decode_int32(const IrTensor *t, void *dst, size_t numel,
                           const char *name, IrError *err)
{
    int32_t dtype = t->data_type;
    unsigned per = ir_dtype_per_byte(dtype);
    if (per > 1 && t->n_int32 != numel &&
        t->n_int32 == (numel + per - 1) / per) {
        uint8_t *b = mem_alloc(t->n_int32 + 1);
        for (size_t k = 0; k < t->n_int32; k++)
            b[k] = (uint8_t)t->int32_data[k];
        ir_unpack_bits(dst, dtype, numel, b);
        free(b);
        return 0;
    }
    if (t->n_int32 != numel)
        return ir_fail(err, "tensor '%s': int32_data has %zu values, its dims "
                       "need %zu", name, t->n_int32, numel);
    for (size_t k = 0; k < numel; k++) {
        int32_t x = t->int32_data[k];
        if (dtype == IR_FLOAT16 || dtype == IR_BFLOAT16)
            ((uint16_t *)dst)[k] = (uint16_t)x;
        else if (ir_dtype_is_float(dtype))   /* float8, float4 codes */
            ((uint8_t *)dst)[k] = (uint8_t)x;
        else
            ir_store_int(dst, dtype, k, x);
    }
    return 0;
}

static int ir_decode_count(size_t have, size_t want, const char *field,
                           const char *name, IrError *err)
{
    if (have != want)
        return ir_fail(err, "tensor '%s': %s has %zu values, its dims need "
                       "%zu", name, field, have, want);
    return 0;
}

static int ir_decode_typed(const IrTensor *t, void *dst, size_t n,
                           const char *name, IrError *err)
{
    int32_t dtype = t->data_type;
    switch (dtype) {
    case IR_FLOAT: case IR_COMPLEX64: {
        size_t want = dtype == IR_FLOAT ? n : 2 * n;
        if (ir_decode_count(t->n_float, want, "float_data", name, err))
            return -1;
        if (want)
            memcpy(dst, t->float_data, want * sizeof(float));
        return 0;
    }
    case IR_DOUBLE: case IR_COMPLEX128: {
        size_t want = dtype == IR_DOUBLE ? n : 2 * n;
        if (ir_decode_count(t->n_double, want, "double_data", name, err))
            return -1;
        if (want)
            memcpy(dst, t->double_data, want * sizeof(double));
        return 0;
    }
    case IR_INT64:
        if (ir_decode_count(t->n_int64, n, "int64_data", name, err))
            return -1;
        if (n)
            memcpy(dst, t->int64_data, n * sizeof(int64_t));
        return 0;
    case IR_UINT32: case IR_UINT64:
        if (ir_decode_count(t->n_uint64, n, "uint64_data", name, err))
            return -1;
        for (size_t k = 0; k < n; k++)
            ir_store_int(dst, dtype, k, (int64_t)t->uint64_data[k]);
        return 0;
    case IR_STRING:
        return ir_fail(err, "tensor '%s': strings have no fixed-size "
                       "elements to decode", name);
    default:
        return ir_decode_int32(t, dst, n, name, err);
    }
}

int ir_tensor_decode(const IrTensor *t, void *dst, size_t numel, IrError *err)
{
    const char *name = t->name ? t->name : "";
    if (ir_tensor_is_external(t)) {
        if (!t->ext.bound)
            return ir_fail(err, "tensor '%s': external data was not loaded",
                           name);
        return ir_decode_raw(t->data_type, dst, numel, t->ext.data,
                             t->ext.len, name, err);
    }
    if (t->has_raw)
        return ir_decode_raw(t->data_type, dst, numel, t->raw.data,
                             t->raw.len, name, err);
    return ir_decode_typed(t, dst, numel, name, err);
}

/* ---- element access ------------------------------------------------------ */

/* Little-endian read of n bytes (never a cast of unaligned bytes). */
static uint64_t ir_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;)
        v = (v << 8) | p[k];
    return v;
}

static bool ir_raw_bits(int32_t dtype, const uint8_t *p, size_t len, size_t i,
                        uint64_t *bits)
{
    unsigned per = ir_dtype_per_byte(dtype);
    if (per > 1) {
        unsigned w = 8 / per;
        if (i / per >= len)
            return false;
        *bits = (uint64_t)(p[i / per] >> (w * (i % per))) & ((1u << w) - 1);
        return true;
    }
    size_t es = ir_dtype_host_size(dtype);
    if (!es || es > 8 || dtype == IR_STRING || i >= len / es)
        return false;
    *bits = ir_le(p + i * es, es);
    return true;
}

/* Entry i of int32_data, for the types stored there (packed bytes for the
 * 4- and 2-bit types when the entry count says so, as ir_decode_int32). */
static bool ir_int32_bits(const IrTensor *t, size_t i, uint64_t *bits)
{
    int32_t d = t->data_type;
    int w = ir_dtype_bits(d);
    unsigned per = ir_dtype_per_byte(d);
    uint64_t numel;
    if (w <= 0)
        return false;
    if (per > 1 && ir_tensor_numel(t, &numel) && t->n_int32 != numel &&
        t->n_int32 == (numel + per - 1) / per) {
        if (i >= numel)
            return false;
        uint8_t b = (uint8_t)t->int32_data[i / per];
        *bits = (uint64_t)(b >> (w * (int)(i % per))) & ((1u << w) - 1);
        return true;
    }
    if (i >= t->n_int32)
        return false;
    uint32_t x = (uint32_t)t->int32_data[i];
    *bits = d == IR_BOOL ? x != 0 : w >= 32 ? x : x & ((1u << w) - 1);
    return true;
}

static bool ir_typed_bits(const IrTensor *t, size_t i, uint64_t *bits)
{
    uint32_t a, b;
    switch (t->data_type) {
    case IR_FLOAT:
        if (i >= t->n_float)
            return false;
        memcpy(&a, &t->float_data[i], 4);
        *bits = a;
        return true;
    case IR_COMPLEX64:
        if (i >= t->n_float / 2)
            return false;
        memcpy(&a, &t->float_data[2 * i], 4);
        memcpy(&b, &t->float_data[2 * i + 1], 4);
        *bits = a | (uint64_t)b << 32;
        return true;
    case IR_DOUBLE:
        if (i >= t->n_double)
            return false;
        memcpy(bits, &t->double_data[i], 8);
        return true;
    case IR_INT64:
        if (i >= t->n_int64)
            return false;
        *bits = (uint64_t)t->int64_data[i];
        return true;
    case IR_UINT32: case IR_UINT64:
        if (i >= t->n_uint64)
            return false;
        *bits = t->data_type == IR_UINT32 ? (uint32_t)t->uint64_data[i]
                                          : t->uint64_data[i];
        return true;
    case IR_STRING: case IR_COMPLEX128:
        return false;
    default:
        return ir_int32_bits(t, i, bits);
    }
}

bool ir_tensor_get_bits(const IrTensor *t, size_t i, uint64_t *bits)
{
    uint64_t numel;
    if (!t->has_data_type || t->data_type == IR_COMPLEX128 ||
        !ir_tensor_numel(t, &numel) || i >= numel)
        return false;
    if (ir_tensor_is_external(t) || t->has_raw) {
        size_t len;
        const uint8_t *p = ir_tensor_bytes(t, &len);
        return p && ir_raw_bits(t->data_type, p, len, i, bits);
    }
    return ir_typed_bits(t, i, bits);
}

bool ir_tensor_get_i64(const IrTensor *t, size_t i, int64_t *v)
{
    IrDtypeClass c = ir_dtype_class(t->data_type);
    uint64_t u;
    if ((c != IR_DC_SINT && c != IR_DC_UINT && c != IR_DC_BOOL) ||
        !ir_tensor_get_bits(t, i, &u))
        return false;
    int w = ir_dtype_bits(t->data_type);
    if (c == IR_DC_SINT && w < 64 && (u >> (w - 1)) & 1)
        u |= ~UINT64_C(0) << w;
    *v = (int64_t)u;
    return true;
}

bool ir_tensor_get_f64(const IrTensor *t, size_t i, double *v)
{
    int32_t d = t->data_type;
    uint64_t u;
    if (d != IR_FLOAT && d != IR_DOUBLE && d != IR_FLOAT16 && d != IR_BFLOAT16) {
        int64_t x;
        if (!ir_tensor_get_i64(t, i, &x))
            return false;
        *v = d == IR_UINT64 ? (double)(uint64_t)x : (double)x;
        return true;
    }
    if (!ir_tensor_get_bits(t, i, &u))
        return false;
    if (d == IR_FLOAT) {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, sizeof f);
        *v = f;
    } else if (d == IR_DOUBLE) {
        memcpy(v, &u, sizeof *v);
    } else if (d == IR_FLOAT16) {
        *v = half_f16_to_f32((uint16_t)u);
    } else {
        *v = half_bf16_to_f32((uint16_t)u);
    }
    return true;
}

/* ---- whole tensors ------------------------------------------------------- */

/* The element count of t when it is at most max and its stored data holds
 * exactly that many elements (raw bytes or typed entries). */
static bool ir_tensor_exact_count(const IrTensor *t, size_t max, size_t *n)
{
    uint64_t numel;
    if (!ir_tensor_numel(t, &numel) || numel > max)
        return false;
    int32_t d = t->data_type;
    unsigned per = ir_dtype_per_byte(d);
    if (ir_tensor_is_external(t) || t->has_raw) {
        size_t len, es = ir_dtype_host_size(d);
        const uint8_t *p = ir_tensor_bytes(t, &len);
        if (!p || !es || d == IR_STRING)
            return false;
        uint64_t need = per > 1 ? (numel + per - 1) / per : numel * es;
        *n = (size_t)numel;
        return len == need;
    }
    size_t have = ir_typed_entries(t);
    *n = (size_t)numel;
    if (d == IR_COMPLEX64 || d == IR_COMPLEX128)
        return have == 2 * numel;
    return have == numel || (per > 1 && have == (numel + per - 1) / per);
}

bool ir_tensor_to_i64s(const IrTensor *t, size_t max, int64_t **v, size_t *n)
{
    size_t cnt;
    if (!ir_tensor_exact_count(t, max, &cnt))
        return false;
    int64_t *a = mem_array(cnt ? cnt : 1, sizeof *a);
    for (size_t k = 0; k < cnt; k++) {
        if (!ir_tensor_get_i64(t, k, &a[k])) {
            free(a);
            return false;
        }
    }
    *v = a;
    *n = cnt;
    return true;
}

bool ir_tensor_to_f64s(const IrTensor *t, size_t max, double **v, size_t *n)
{
    size_t cnt;
    if (!ir_tensor_exact_count(t, max, &cnt))
        return false;
    double *a = mem_array(cnt ? cnt : 1, sizeof *a);
    for (size_t k = 0; k < cnt; k++) {
        if (!ir_tensor_get_f64(t, k, &a[k])) {
            free(a);
            return false;
        }
    }
    *v = a;
    *n = cnt;
    return true;
}
