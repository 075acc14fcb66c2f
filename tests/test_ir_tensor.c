/*
 * test_ir_tensor.c - unit tests of the IR's one tensor decoder
 * (src/ir/ir_tensor.c): element access and bulk decode of raw_data, external
 * data and the typed lists, for every type of IR_DTYPES.
 *
 * Expected values are written by hand from the TensorProto encoding rules
 * (little-endian bytes; 4- and 2-bit elements packed first in the lowest
 * bits; float16 0x3C00 = 1.0, bfloat16 0x3F80 = 1.0, ...), not taken from
 * the program's output.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "ir/ir.h"
#include "t.h"

/* A tensor of the given type and dims whose raw_data is the given bytes. */
static IrTensor *raw_tensor(int32_t dtype, size_t ndims, const int64_t *dims,
                            const uint8_t *bytes, size_t len)
{
    return ir_tensor_new("t", dtype, ndims, dims, bytes, len);
}

/* A rank-1 tensor of n elements with no data (typed lists set by caller). */
static IrTensor *typed_tensor(int32_t dtype, int64_t n)
{
    IrTensor *t = ir_tensor_new("t", dtype, 1, &n, NULL, 0);
    t->has_raw = false;
    return t;
}

/* One element of every type in raw_data: its bytes and the bit pattern the
 * encoding rules give (the bytes read little-endian). */
static void test_every_type_raw(void)
{
    static const struct {
        int32_t dtype;
        uint8_t bytes[16];
        size_t len;
        bool has_bits;
        uint64_t bits;
    } rows[] = {
        {IR_FLOAT, {0x00, 0x00, 0x80, 0x3f}, 4, true, 0x3f800000u},
        {IR_UINT8, {0xfe}, 1, true, 0xfe},
        {IR_INT8, {0xfe}, 1, true, 0xfe},
        {IR_UINT16, {0x34, 0x12}, 2, true, 0x1234},
        {IR_INT16, {0xfe, 0xff}, 2, true, 0xfffe},
        {IR_INT32, {0x78, 0x56, 0x34, 0x12}, 4, true, 0x12345678u},
        {IR_INT64, {1, 2, 3, 4, 5, 6, 7, 8}, 8, true, 0x0807060504030201ull},
        {IR_BOOL, {0x01}, 1, true, 1},
        {IR_FLOAT16, {0x00, 0x3c}, 2, true, 0x3c00},
        {IR_DOUBLE, {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 8, true, 0x3ff0000000000000ull},
        {IR_UINT32, {0xff, 0xff, 0xff, 0xff}, 4, true, 0xffffffffu},
        {IR_UINT64, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8, true,
         UINT64_MAX},
        {IR_COMPLEX64, {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, 8, true,
         0x400000003f800000ull},
        {IR_COMPLEX128, {0}, 16, false, 0},
        {IR_BFLOAT16, {0x80, 0x3f}, 2, true, 0x3f80},
        {IR_FLOAT8E4M3FN, {0x38}, 1, true, 0x38},
        {IR_FLOAT8E4M3FNUZ, {0x40}, 1, true, 0x40},
        {IR_FLOAT8E5M2, {0x3c}, 1, true, 0x3c},
        {IR_FLOAT8E5M2FNUZ, {0x40}, 1, true, 0x40},
        {IR_UINT4, {0x5a}, 1, true, 0xa},          /* first element low */
        {IR_INT4, {0x5a}, 1, true, 0xa},
        {IR_FLOAT4E2M1, {0x72}, 1, true, 0x2},
        {IR_FLOAT8E8M0, {0x7f}, 1, true, 0x7f},
        {IR_UINT2, {0xe6}, 1, true, 0x2},
        {IR_INT2, {0xe7}, 1, true, 0x3},
    };
    int seen[IR_INT2 + 1] = {0};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        IrTensor *t = raw_tensor(rows[r].dtype, 0, NULL, rows[r].bytes,
                                 rows[r].len);
        uint64_t bits = 0;
        bool ok = ir_tensor_get_bits(t, 0, &bits);
        T_CHECK(ok == rows[r].has_bits, "%s: get_bits gave %d",
                ir_dtype_name(rows[r].dtype), ok);
        if (ok && rows[r].has_bits)
            T_CHECK(bits == rows[r].bits, "%s: bits 0x%llx, want 0x%llx",
                    ir_dtype_name(rows[r].dtype), (unsigned long long)bits,
                    (unsigned long long)rows[r].bits);
        T_CHECK(!ir_tensor_get_bits(t, 1, &bits), "%s: element 1 is past "
                "the data", ir_dtype_name(rows[r].dtype));
        seen[rows[r].dtype] = 1;
        ir_tensor_free(t);
    }
    /* the table covers every type but UNDEFINED and STRING */
    for (int d = IR_FLOAT; d <= IR_INT2; d++)
        T_CHECK(seen[d] || d == IR_STRING, "type %d has no row", d);
}

/* Elements as int64 and double, from raw_data of one element each. */
static void test_scalar_values(void)
{
    static const struct {
        int32_t dtype;
        uint8_t bytes[8];
        size_t len;
        bool is_int;
        int64_t i;
        double f;
    } rows[] = {
        {IR_INT8, {0xff}, 1, true, -1, -1.0},
        {IR_UINT8, {0xff}, 1, true, 255, 255.0},
        {IR_INT16, {0xfe, 0xff}, 2, true, -2, -2.0},
        {IR_UINT16, {0xfe, 0xff}, 2, true, 65534, 65534.0},
        {IR_INT32, {0xff, 0xff, 0xff, 0xff}, 4, true, -1, -1.0},
        {IR_UINT32, {0xff, 0xff, 0xff, 0xff}, 4, true, 4294967295LL, 4294967295.0},
        {IR_INT64, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8, true, -2, -2.0},
        {IR_UINT64, {0, 0, 0, 0, 0, 0, 0, 0x80}, 8, true, INT64_MIN,
         9223372036854775808.0},
        {IR_BOOL, {0x01}, 1, true, 1, 1.0},
        {IR_INT4, {0x0f}, 1, true, -1, -1.0},
        {IR_UINT4, {0x0f}, 1, true, 15, 15.0},
        {IR_INT2, {0x02}, 1, true, -2, -2.0},
        {IR_UINT2, {0x02}, 1, true, 2, 2.0},
        {IR_FLOAT, {0x00, 0x00, 0xc0, 0xbf}, 4, false, 0, -1.5},
        {IR_DOUBLE, {0, 0, 0, 0, 0, 0, 0x04, 0x40}, 8, false, 0, 2.5},
        {IR_FLOAT16, {0x00, 0xc0}, 2, false, 0, -2.0},
        {IR_FLOAT16, {0xff, 0x7b}, 2, false, 0, 65504.0},
        {IR_FLOAT16, {0x01, 0x00}, 2, false, 0, 5.9604644775390625e-08},
        {IR_BFLOAT16, {0xc0, 0xbf}, 2, false, 0, -1.5},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const char *nm = ir_dtype_name(rows[r].dtype);
        IrTensor *t = raw_tensor(rows[r].dtype, 0, NULL, rows[r].bytes,
                                 rows[r].len);
        int64_t i = 0;
        double f = 0;
        bool iok = ir_tensor_get_i64(t, 0, &i);
        T_CHECK(iok == rows[r].is_int, "%s: get_i64 gave %d", nm, iok);
        if (iok && rows[r].is_int)
            T_CHECK(i == rows[r].i, "%s: %lld, want %lld", nm, (long long)i,
                    (long long)rows[r].i);
        T_CHECK(ir_tensor_get_f64(t, 0, &f) && f == rows[r].f,
                "%s: %g, want %g", nm, f, rows[r].f);
        ir_tensor_free(t);
    }
    /* float16 Inf and NaN, bfloat16 and float16 negative zero */
    T_CHECK(isinf(half_f16_to_f32(0x7c00)) && half_f16_to_f32(0x7c00) > 0,
            "0x7C00 is +Inf");
    T_CHECK(isnan(half_f16_to_f32(0x7e00)), "0x7E00 is NaN");
    T_CHECK(signbit(half_f16_to_f32(0x8000)) && half_f16_to_f32(0x8000) == 0,
            "0x8000 is -0");
    T_CHECK(half_bf16_to_f32(0x4049) == 3.140625f, "bf16 0x4049 is 3.140625");
}

/* Types without an int64 or double reading. */
static void test_refused_types(void)
{
    uint8_t b[16] = {0x38};
    int32_t none[] = {IR_FLOAT8E4M3FN, IR_FLOAT8E5M2, IR_FLOAT4E2M1,
                      IR_FLOAT8E8M0, IR_COMPLEX64, IR_COMPLEX128};
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) {
        size_t len = ir_dtype_bits(none[k]) < 8 ? 1 : (size_t)ir_dtype_bits(none[k]) / 8;
        IrTensor *t = raw_tensor(none[k], 0, NULL, b, len);
        int64_t i;
        double f;
        T_CHECK(!ir_tensor_get_i64(t, 0, &i), "%s: no int64 reading",
                ir_dtype_name(none[k]));
        T_CHECK(!ir_tensor_get_f64(t, 0, &f), "%s: no double reading",
                ir_dtype_name(none[k]));
        ir_tensor_free(t);
    }
    IrTensor *s = typed_tensor(IR_STRING, 1);
    s->n_string = 1;
    s->string_data = mem_alloc(sizeof *s->string_data);
    uint64_t bits;
    T_CHECK(!ir_tensor_get_bits(s, 0, &bits), "a string has no bit pattern");
    int64_t *v;
    size_t n;
    T_CHECK(!ir_tensor_to_i64s(s, 16, &v, &n), "strings are not integers");
    ir_tensor_free(s);
    /* a float tensor is not read as integers; an integer one reads as doubles */
    float fl[2] = {1.0f, 2.0f};
    int64_t two = 2;
    IrTensor *t = ir_tensor_new("f", IR_FLOAT, 1, &two, fl, sizeof fl);
    T_CHECK(!ir_tensor_to_i64s(t, 16, &v, &n), "floats are not integers");
    ir_tensor_free(t);
    int32_t iv[2] = {-7, 9};
    t = ir_tensor_new("i", IR_INT32, 1, &two, iv, sizeof iv);
    double *d;
    T_CHECK(ir_tensor_to_f64s(t, 16, &d, &n) && n == 2 && d[0] == -7.0 &&
            d[1] == 9.0, "int32 {-7, 9} as doubles");
    if (n == 2)
        free(d);
    ir_tensor_free(t);
}

/* Odd lengths of the packed types: 3 int4 in 2 bytes, 5 int2 in 2 bytes. */
static void test_packed_odd(void)
{
    int64_t three = 3, five = 5;
    const uint8_t b4[2] = {0x9f, 0x03};  /* 0xF, 0x9, then 0x3 */
    IrTensor *t = raw_tensor(IR_INT4, 1, &three, b4, 2);
    int64_t *v = NULL;
    size_t n = 0;
    T_CHECK(ir_tensor_to_i64s(t, 16, &v, &n) && n == 3 && v[0] == -1 &&
            v[1] == -7 && v[2] == 3, "int4 {0x9F, 0x03} is {-1, -7, 3}");
    free(v);
    int8_t host[3] = {0};
    IrError err;
    T_CHECK(ir_tensor_decode(t, host, 3, &err) == 0 && host[0] == -1 &&
            host[1] == -7 && host[2] == 3, "int4 bulk decode {-1, -7, 3}");
    ir_tensor_free(t);
    t = raw_tensor(IR_UINT4, 1, &three, b4, 2);
    v = NULL;
    T_CHECK(ir_tensor_to_i64s(t, 16, &v, &n) && n == 3 && v[0] == 15 &&
            v[1] == 9 && v[2] == 3, "uint4 {0x9F, 0x03} is {15, 9, 3}");
    free(v);
    ir_tensor_free(t);
    const uint8_t b2[2] = {0xe4, 0x02};  /* 0, 1, 2, 3, then 2 */
    t = raw_tensor(IR_INT2, 1, &five, b2, 2);
    v = NULL;
    T_CHECK(ir_tensor_to_i64s(t, 16, &v, &n) && n == 5 && v[0] == 0 &&
            v[1] == 1 && v[2] == -2 && v[3] == -1 && v[4] == -2,
            "int2 {0xE4, 0x02} is {0, 1, -2, -1, -2}");
    free(v);
    ir_tensor_free(t);
    t = raw_tensor(IR_UINT2, 1, &five, b2, 2);
    uint8_t u2[5];
    T_CHECK(ir_tensor_decode(t, u2, 5, &err) == 0 && u2[0] == 0 && u2[1] == 1 &&
            u2[2] == 2 && u2[3] == 3 && u2[4] == 2, "uint2 bulk decode");
    ir_tensor_free(t);
    /* one byte is too few for three int4: refused everywhere */
    t = raw_tensor(IR_INT4, 1, &three, b4, 1);
    T_CHECK(!ir_tensor_to_i64s(t, 16, &v, &n), "3 int4 in 1 byte refused");
    T_CHECK(ir_tensor_check_declared(t, &err) != 0, "declared 3 int4, 2 held");
    T_CHECK(ir_tensor_decode(t, host, 3, &err) != 0, "decode of 1 byte refused");
    int64_t x;
    T_CHECK(ir_tensor_get_i64(t, 1, &x) && x == -7 &&
            !ir_tensor_get_i64(t, 2, &x), "element 2 is past the byte");
    ir_tensor_free(t);
}

/* A raw payload shorter than the dims need. */
static void test_truncated(void)
{
    int64_t three = 3;
    const uint8_t b[11] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0};
    IrTensor *t = raw_tensor(IR_INT32, 1, &three, b, sizeof b);
    int64_t *v;
    size_t n;
    IrError err;
    int32_t host[3];
    int64_t x;
    T_CHECK(!ir_tensor_to_i64s(t, 16, &v, &n), "11 bytes for 3 int32 refused");
    T_CHECK(ir_tensor_get_i64(t, 1, &x) && x == 2, "element 1 still reads");
    T_CHECK(!ir_tensor_get_i64(t, 2, &x), "element 2 is cut off");
    T_CHECK(ir_tensor_check_declared(t, &err) != 0 &&
            strstr(err.msg, "raw_data has 11 bytes") != NULL,
            "declared check names the bytes: %s", err.msg);
    T_CHECK(ir_tensor_decode(t, host, 3, &err) != 0, "decode refused");
    ir_tensor_free(t);
    /* too long is refused as well: the bytes must match the dims */
    const uint8_t l[12] = {0};
    int64_t two = 2;
    t = raw_tensor(IR_INT32, 1, &two, l, sizeof l);
    T_CHECK(!ir_tensor_to_i64s(t, 16, &v, &n), "12 bytes for 2 int32 refused");
    ir_tensor_free(t);
    /* more elements than asked for */
    t = raw_tensor(IR_INT32, 1, &three, l, sizeof l);
    T_CHECK(!ir_tensor_to_i64s(t, 2, &v, &n), "3 elements above max 2");
    T_CHECK(ir_tensor_to_i64s(t, 3, &v, &n) && n == 3, "3 elements at max 3");
    if (n == 3)
        free(v);
    ir_tensor_free(t);
}

/* The typed lists: float_data, double_data, int64_data, uint64_data and
 * int32_data (small types, float16 patterns, 4-bit one per entry or
 * packed). */
static void test_typed_lists(void)
{
    int64_t *v = NULL;
    double *d = NULL;
    size_t n = 0;
    IrError err;

    IrTensor *t = typed_tensor(IR_FLOAT, 2);
    t->n_float = 2;
    t->float_data = mem_array(2, sizeof(float));
    t->float_data[0] = 0.5f;
    t->float_data[1] = -3.0f;
    T_CHECK(ir_tensor_to_f64s(t, 8, &d, &n) && n == 2 && d[0] == 0.5 &&
            d[1] == -3.0, "float_data {0.5, -3}");
    free(d);
    ir_tensor_free(t);

    t = typed_tensor(IR_DOUBLE, 1);
    t->n_double = 1;
    t->double_data = mem_alloc(sizeof(double));
    t->double_data[0] = 0.1;
    double one;
    T_CHECK(ir_tensor_get_f64(t, 0, &one) && one == 0.1, "double_data 0.1");
    ir_tensor_free(t);

    t = typed_tensor(IR_INT64, 2);
    t->n_int64 = 2;
    t->int64_data = mem_array(2, sizeof(int64_t));
    t->int64_data[0] = INT64_MIN;
    t->int64_data[1] = 42;
    T_CHECK(ir_tensor_to_i64s(t, 8, &v, &n) && n == 2 && v[0] == INT64_MIN &&
            v[1] == 42, "int64_data {min, 42}");
    free(v);
    ir_tensor_free(t);

    t = typed_tensor(IR_UINT32, 1);
    t->n_uint64 = 1;
    t->uint64_data = mem_alloc(sizeof(uint64_t));
    t->uint64_data[0] = 0x100000005ull;   /* wraps to the 32-bit width */
    int64_t x;
    uint32_t u32;
    T_CHECK(ir_tensor_get_i64(t, 0, &x) && x == 5, "uint32 in uint64_data: 5");
    T_CHECK(ir_tensor_decode(t, &u32, 1, &err) == 0 && u32 == 5,
            "uint32 bulk decode: 5");
    ir_tensor_free(t);

    t = typed_tensor(IR_INT8, 3);
    t->n_int32 = 3;
    t->int32_data = mem_array(3, sizeof(int32_t));
    t->int32_data[0] = -1;
    t->int32_data[1] = 300;   /* wraps: 300 - 256 */
    t->int32_data[2] = 127;
    T_CHECK(ir_tensor_to_i64s(t, 8, &v, &n) && n == 3 && v[0] == -1 &&
            v[1] == 44 && v[2] == 127, "int8 in int32_data {-1, 44, 127}");
    free(v);
    int8_t i8[3];
    T_CHECK(ir_tensor_decode(t, i8, 3, &err) == 0 && i8[0] == -1 &&
            i8[1] == 44 && i8[2] == 127, "int8 bulk decode");
    ir_tensor_free(t);

    t = typed_tensor(IR_BOOL, 2);
    t->n_int32 = 2;
    t->int32_data = mem_array(2, sizeof(int32_t));
    t->int32_data[0] = 0;
    t->int32_data[1] = 2;
    T_CHECK(ir_tensor_to_i64s(t, 8, &v, &n) && n == 2 && v[0] == 0 && v[1] == 1,
            "bool in int32_data {0, 1}");
    free(v);
    ir_tensor_free(t);

    t = typed_tensor(IR_FLOAT16, 2);
    t->n_int32 = 2;
    t->int32_data = mem_array(2, sizeof(int32_t));
    t->int32_data[0] = 0x3c00;
    t->int32_data[1] = 0xbc00;
    uint16_t h[2];
    T_CHECK(ir_tensor_to_f64s(t, 8, &d, &n) && n == 2 && d[0] == 1.0 &&
            d[1] == -1.0, "float16 patterns {1, -1}");
    free(d);
    T_CHECK(ir_tensor_decode(t, h, 2, &err) == 0 && h[0] == 0x3c00 &&
            h[1] == 0xbc00, "float16 bulk decode keeps the patterns");
    ir_tensor_free(t);

    t = typed_tensor(IR_FLOAT8E5M2, 1);
    t->n_int32 = 1;
    t->int32_data = mem_alloc(sizeof(int32_t));
    t->int32_data[0] = 0x3c;
    uint64_t bits;
    T_CHECK(ir_tensor_get_bits(t, 0, &bits) && bits == 0x3c, "float8 code");
    ir_tensor_free(t);

    /* int4, one element per entry: 13 and -3 are both the code 0xD = -3 */
    t = typed_tensor(IR_INT4, 3);
    t->n_int32 = 3;
    t->int32_data = mem_array(3, sizeof(int32_t));
    t->int32_data[0] = -3;
    t->int32_data[1] = 13;
    t->int32_data[2] = 7;
    T_CHECK(ir_tensor_to_i64s(t, 8, &v, &n) && n == 3 && v[0] == -3 &&
            v[1] == -3 && v[2] == 7, "int4 one per entry {-3, -3, 7}");
    free(v);
    ir_tensor_free(t);

    /* int4 packed two per int32 entry (3 elements, 2 entries) */
    t = typed_tensor(IR_INT4, 3);
    t->n_int32 = 2;
    t->int32_data = mem_array(2, sizeof(int32_t));
    t->int32_data[0] = 0x9f;
    t->int32_data[1] = 0x03;
    v = NULL;
    T_CHECK(ir_tensor_to_i64s(t, 8, &v, &n) && n == 3 && v[0] == -1 &&
            v[1] == -7 && v[2] == 3, "int4 packed in int32_data {-1, -7, 3}");
    free(v);
    int8_t p4[3];
    T_CHECK(ir_tensor_decode(t, p4, 3, &err) == 0 && p4[0] == -1 &&
            p4[1] == -7 && p4[2] == 3, "int4 packed bulk decode");
    ir_tensor_free(t);

    /* a typed list shorter than the dims */
    t = typed_tensor(IR_INT64, 3);
    t->n_int64 = 2;
    t->int64_data = mem_array(2, sizeof(int64_t));
    T_CHECK(!ir_tensor_to_i64s(t, 8, &v, &n), "2 int64 for 3 refused");
    T_CHECK(ir_tensor_check_declared(t, &err) != 0, "declared 3, held 2");
    ir_tensor_free(t);
}

/* Bound and unbound external data read as raw bytes. */
static void test_external(void)
{
    static const uint8_t bytes[8] = {0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0};
    int64_t two = 2;
    IrTensor *t = typed_tensor(IR_INT32, 2);
    t->has_data_location = true;
    t->data_location = 1;
    int64_t *v = NULL;
    size_t n;
    T_CHECK(!ir_tensor_to_i64s(t, 8, &v, &n), "unbound external data refused");
    IrError err;
    int32_t host[2];
    T_CHECK(ir_tensor_decode(t, host, 2, &err) != 0 &&
            strstr(err.msg, "not loaded") != NULL, "decode says not loaded");
    t->ext.data = bytes;
    t->ext.len = sizeof bytes;
    t->ext.bound = true;
    T_CHECK(ir_tensor_to_i64s(t, 8, &v, &n) && n == 2 && v[0] == -1 && v[1] == 7,
            "external int32 {-1, 7}");
    free(v);
    T_CHECK(ir_tensor_decode(t, host, 2, &err) == 0 && host[0] == -1 &&
            host[1] == 7, "external bulk decode");
    (void)two;
    ir_tensor_free(t);
}

int main(void)
{
    test_every_type_raw();
    test_scalar_values();
    test_refused_types();
    test_packed_odd();
    test_truncated();
    test_typed_lists();
    test_external();
    return t_done("test_ir_tensor");
}
