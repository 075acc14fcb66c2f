/*
 * test_tensor_kit - the small tensors adapters and passes compute on
 * (src/ir/tensor_kit.h): sizes and their limits, Cast's conversions at the
 * edges (float16/bfloat16 rounding, int64 and uint64 extremes, wrapping
 * to narrow integers), the storages it decodes, and the way back to an
 * IrTensor. Expected values are worked out by hand from the formats.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tensor_kit.h"
#include "t.h"

/* ---- sizes ---------------------------------------------------------------- */

static void test_new(void)
{
    IrError e;
    int64_t d3[3] = {2, 3, 4};
    TkTensor *t = tk_new(IR_FLOAT, 3, d3, &e);
    T_CHECK(t && t->numel == 24 && t->nbytes == 96 && t->rank == 3, "2x3x4 float");
    for (size_t k = 0; t && k < t->numel; k++)
        T_CHECK(tk_get_f(t, k) == 0.0, "element %zu starts at 0", k);
    tk_free(t);
    t = tk_new(IR_INT64, 0, NULL, &e);
    T_CHECK(t && t->numel == 1 && t->nbytes == 8 && t->data, "a scalar has one element");
    tk_free(t);
    /* a zero dim empties the tensor even when the other dims overflow */
    int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    t = tk_new(IR_DOUBLE, 3, huge, &e);
    T_CHECK(t && t->numel == 0 && t->nbytes == 0 && t->data, "[2^40, 2^40, 0] is empty");
    tk_free(t);
    t = tk_new(IR_STRING, 1, d3, &e);
    T_CHECK(t && ((IrBytes *)t->data)[1].len == 0, "strings start empty");
    tk_free(t);
    tk_free(NULL);
}

static void test_limits(void)
{
    IrError e;
    int64_t neg[2] = {2, -1}, over[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    int64_t big[1] = {(int64_t)(TK_MAX_BYTES / 8) + 1};
    T_CHECK(!tk_new(IR_FLOAT, 2, neg, &e) && strstr(e.msg, "negative"), "negative dim: %s",
            e.msg);
    T_CHECK(!tk_new(IR_UINT8, 2, over, &e), "2^80 elements overflow");
    T_CHECK(!tk_new(IR_DOUBLE, 1, big, &e) && strstr(e.msg, "limit"),
            "one element past TK_MAX_BYTES: %s", e.msg);
    T_CHECK(!tk_new(IR_INT64, 1, big, NULL), "refused without an error to fill");
    int64_t ones[TK_MAX_RANK + 1];
    for (size_t i = 0; i <= TK_MAX_RANK; i++)
        ones[i] = 1;
    TkTensor *t = tk_new(IR_FLOAT, TK_MAX_RANK, ones, &e);
    T_CHECK(t && t->numel == 1, "rank TK_MAX_RANK is accepted");
    tk_free(t);
    T_CHECK(!tk_new(IR_FLOAT, TK_MAX_RANK + 1, ones, &e), "rank TK_MAX_RANK + 1 is refused");
    T_CHECK(!tk_new(IR_UNDEFINED, 0, NULL, &e) && !tk_new(99, 0, NULL, &e),
            "no tensor of an unknown type");
}

/* ---- conversions ------------------------------------------------------------ */

static TkTensor *scalar(int32_t dt)
{
    return tk_new(dt, 0, NULL, NULL);
}

static uint16_t bits16(const TkTensor *t)
{
    return ((const uint16_t *)t->data)[0];
}

static void test_half(void)
{
    TkTensor *h = scalar(IR_FLOAT16), *b = scalar(IR_BFLOAT16);
    tk_set_f(h, 0, 1.0 + ldexp(1, -11));      /* halfway: ties to even */
    T_CHECK(bits16(h) == 0x3c00, "1 + 2^-11 rounds to 1.0 in float16");
    tk_set_f(h, 0, 1.0 + 3 * ldexp(1, -11));  /* halfway above an odd one */
    T_CHECK(bits16(h) == 0x3c02, "1 + 3*2^-11 rounds up to 1 + 2^-9");
    tk_set_f(h, 0, 65519.0);
    T_CHECK(bits16(h) == 0x7bff, "65519 rounds to 65504, the largest half");
    tk_set_f(h, 0, 65520.0);
    T_CHECK(bits16(h) == 0x7c00, "65520 overflows to +inf");
    tk_set_f(h, 0, ldexp(1, -24));
    T_CHECK(bits16(h) == 0x0001 && tk_get_f(h, 0) == ldexp(1, -24), "the smallest subnormal");
    tk_set_f(h, 0, -0.0);
    T_CHECK(bits16(h) == 0x8000, "-0 keeps its sign");
    tk_set_f(h, 0, NAN);
    T_CHECK(isnan(tk_get_f(h, 0)), "NaN stays NaN");
    tk_set_i(h, 0, 2049);                     /* 2049 is not a half */
    T_CHECK(tk_get_f(h, 0) == 2048.0 && tk_get_i(h, 0) == 2048, "2049 rounds to 2048");
    tk_set_f(b, 0, 1.0 + ldexp(1, -8));
    T_CHECK(bits16(b) == 0x3f80, "1 + 2^-8 rounds to 1.0 in bfloat16");
    tk_set_f(b, 0, 1.0 + 3 * ldexp(1, -8));
    T_CHECK(bits16(b) == 0x3f82, "1 + 3*2^-8 rounds up in bfloat16");
    tk_set_f(b, 0, -2.5);
    T_CHECK(tk_get_f(b, 0) == -2.5 && tk_get_i(b, 0) == -2, "-2.5 reads back, truncates to -2");
    tk_free(h);
    tk_free(b);
}

static void test_int64(void)
{
    TkTensor *i = scalar(IR_INT64), *f = scalar(IR_DOUBLE);
    tk_set_i(i, 0, INT64_MIN);
    T_CHECK(tk_get_i(i, 0) == INT64_MIN && tk_get_f(i, 0) == -ldexp(1, 63), "INT64_MIN");
    tk_set_i(i, 0, INT64_MAX);
    T_CHECK(tk_get_i(i, 0) == INT64_MAX && tk_get_u(i, 0) == (uint64_t)INT64_MAX, "INT64_MAX");
    T_CHECK(tk_get_f(i, 0) == ldexp(1, 63), "INT64_MAX as double rounds to 2^63");
    tk_set_f(i, 0, 1e19);
    T_CHECK(tk_get_i(i, 0) == INT64_MAX, "1e19 saturates");
    tk_set_f(i, 0, -1e19);
    T_CHECK(tk_get_i(i, 0) == INT64_MIN, "-1e19 saturates");
    tk_set_f(i, 0, NAN);
    T_CHECK(tk_get_i(i, 0) == 0, "NaN stores 0");
    tk_set_f(i, 0, -2.9);
    T_CHECK(tk_get_i(i, 0) == -2, "-2.9 truncates toward zero");
    tk_set_f(f, 0, NAN);
    T_CHECK(tk_get_i(f, 0) == INT64_MIN, "NaN reads INT64_MIN");
    tk_set_f(f, 0, ldexp(1, 63));
    T_CHECK(tk_get_i(f, 0) == INT64_MIN && tk_get_u(f, 0) == (UINT64_C(1) << 63),
            "2^63 is past int64, inside uint64");
    tk_set_f(f, 0, -ldexp(1, 63));
    T_CHECK(tk_get_i(f, 0) == INT64_MIN, "-2^63 is INT64_MIN exactly");
    tk_free(i);
    tk_free(f);
}

static void test_uint64(void)
{
    TkTensor *u = scalar(IR_UINT64), *s = scalar(IR_INT32);
    tk_set_u(u, 0, UINT64_MAX);
    T_CHECK(tk_get_u(u, 0) == UINT64_MAX && tk_get_i(u, 0) == -1, "UINT64_MAX, -1 as int64");
    T_CHECK(tk_get_f(u, 0) == ldexp(1, 64), "UINT64_MAX as double rounds to 2^64");
    tk_set_f(u, 0, 1.5e19);
    T_CHECK(tk_get_u(u, 0) == UINT64_C(15000000000000000000), "1.5e19 fits uint64");
    tk_set_f(u, 0, 1e30);
    T_CHECK(tk_get_u(u, 0) == UINT64_MAX, "1e30 saturates");
    tk_set_f(u, 0, -1.0);
    T_CHECK(tk_get_u(u, 0) == UINT64_MAX, "-1 wraps, as from int64");
    tk_set_u(s, 0, UINT64_C(0x100000005));
    T_CHECK(tk_get_i(s, 0) == 5, "uint64 to int32 keeps the low bits");
    tk_free(u);
    tk_free(s);
}

static void test_narrow(void)
{
    int64_t d = 4;
    TkTensor *i8 = tk_new(IR_INT8, 1, &d, NULL), *b = scalar(IR_BOOL);
    TkTensor *i4 = tk_new(IR_INT4, 1, &d, NULL), *u2 = tk_new(IR_UINT2, 1, &d, NULL);
    tk_set_i(i8, 0, 300);
    tk_set_i(i8, 1, -129);
    tk_set_f(i8, 2, 127.9);
    tk_set_u(i8, 3, 255);
    T_CHECK(tk_get_i(i8, 0) == 44 && tk_get_i(i8, 1) == 127 && tk_get_i(i8, 2) == 127 &&
            tk_get_i(i8, 3) == -1, "int8 wraps and truncates");
    tk_set_f(b, 0, 0.25);
    T_CHECK(tk_get_i(b, 0) == 1, "bool is v != 0");
    tk_set_i(i4, 0, 7);
    tk_set_i(i4, 1, 8);
    tk_set_i(i4, 2, -1);
    tk_set_i(i4, 3, 17);
    T_CHECK(tk_get_i(i4, 0) == 7 && tk_get_i(i4, 1) == -8 && tk_get_i(i4, 2) == -1 &&
            tk_get_i(i4, 3) == 1, "int4 keeps 4 bits, sign-extended");
    tk_set_i(u2, 0, 5);
    T_CHECK(tk_get_i(u2, 0) == 1 && tk_get_f(u2, 0) == 1.0, "uint2 keeps 2 bits");
    tk_free(i8);
    tk_free(b);
    tk_free(i4);
    tk_free(u2);
}

/* The small float types compute through the codec (e4m3fn: 1.0 is 0x38,
 * 2.0 is 0x40, saturating at 448); complex reads its real part and is
 * written with a zero imaginary one, which is why it does not count as
 * computed on; strings never do. The evaluator reads values through the
 * same functions, so these are its conversions too. */
static void test_small_and_carried(void)
{
    T_CHECK(tk_computes(IR_FLOAT16) && tk_computes(IR_BOOL) && tk_computes(IR_UINT4) &&
            tk_computes(IR_FLOAT8E4M3FN) && tk_computes(IR_FLOAT4E2M1),
            "real, small float, bool and integer types compute");
    T_CHECK(!tk_computes(IR_COMPLEX64) && !tk_computes(IR_STRING), "complex and strings do not");
    TkTensor *f8 = scalar(IR_FLOAT8E4M3FN);
    ((uint8_t *)f8->data)[0] = 0x38;
    T_CHECK(tk_get_f(f8, 0) == 1.0 && tk_get_i(f8, 0) == 1, "e4m3fn 0x38 reads 1");
    tk_set_f(f8, 0, 2.0);
    T_CHECK(((uint8_t *)f8->data)[0] == 0x40, "2.0 is written 0x40");
    tk_set_f(f8, 0, 1e6);
    T_CHECK(tk_get_f(f8, 0) == 448.0, "a store saturates at e4m3fn's largest, 448");
    IrTensor *it = tk_to_ir(f8, "f8");
    TkTensor *back = tk_from_ir(it, NULL);
    T_CHECK(back && ((uint8_t *)back->data)[0] == ((uint8_t *)f8->data)[0],
            "its bits go out and back");
    tk_free(back);
    ir_tensor_free(it);
    tk_free(f8);
    TkTensor *cx = scalar(IR_COMPLEX64);
    tk_set_f(cx, 0, 3.5);
    const float *z = cx->data;
    T_CHECK(z[0] == 3.5f && z[1] == 0.0f && tk_get_f(cx, 0) == 3.5, "complex: the real part");
    tk_free(cx);
}

/* ---- the IR ----------------------------------------------------------------- */

static void test_from_ir(void)
{
    IrError e;
    int64_t d = 3;
    float fv[3] = {1.5f, -2.0f, 0.25f};
    IrTensor *raw = ir_tensor_new("w", IR_FLOAT, 1, &d, fv, sizeof fv);
    TkTensor *t = tk_from_ir(raw, &e);
    T_CHECK(t && t->numel == 3 && tk_get_f(t, 1) == -2.0, "raw float data");
    tk_free(t);
    raw->dims[0] = 4;                          /* promises more than it holds */
    T_CHECK(!tk_from_ir(raw, &e) && strstr(e.msg, "'w'"), "short data refused: %s", e.msg);
    raw->dims[0] = 2;                          /* holds more than it says */
    T_CHECK(!tk_from_ir(raw, &e), "long data refused");
    ir_tensor_free(raw);

    IrTensor *typed = ir_tensor_new("h", IR_FLOAT16, 1, &d, NULL, 0);
    typed->has_raw = false;
    typed->n_int32 = 3;
    typed->int32_data = mem_array(3, sizeof(int32_t));
    typed->int32_data[0] = 0x3c00;             /* 1.0 */
    typed->int32_data[1] = 0xc000;             /* -2.0 */
    typed->int32_data[2] = 0x7c00;             /* +inf */
    t = tk_from_ir(typed, &e);
    T_CHECK(t && tk_get_f(t, 0) == 1.0 && tk_get_f(t, 1) == -2.0 && isinf(tk_get_f(t, 2)),
            "float16 in int32_data");
    tk_free(t);
    ir_tensor_free(typed);

    uint8_t packed[2] = {0xf1, 0x07};           /* int4 [1, -1, 7] */
    IrTensor *p = ir_tensor_new("p", IR_INT4, 1, &d, packed, sizeof packed);
    t = tk_from_ir(p, &e);
    T_CHECK(t && tk_get_i(t, 0) == 1 && tk_get_i(t, 1) == -1 && tk_get_i(t, 2) == 7,
            "packed int4 unpacked");
    IrTensor *q = t ? tk_to_ir(t, NULL) : NULL;
    T_CHECK(q && q->raw.len == 2 && q->raw.data[0] == 0xf1 && q->raw.data[1] == 0x07 &&
            !q->name, "int4 packed back, first element low");
    ir_tensor_free(q);
    tk_free(t);
    ir_tensor_free(p);
}

static void test_strings(void)
{
    IrError e;
    int64_t d = 2;
    IrTensor *s = ir_tensor_new("s", IR_STRING, 1, &d, NULL, 0);
    free(s->raw.data);
    s->raw.data = NULL;
    s->has_raw = false;
    s->n_string = 2;
    s->string_data = mem_array(2, sizeof *s->string_data);
    s->string_data[0].len = 3;
    s->string_data[0].data = mem_alloc(3);
    memcpy(s->string_data[0].data, "a\0b", 3);
    TkTensor *t = tk_from_ir(s, &e);
    const IrBytes *b = t ? t->data : NULL;
    T_CHECK(b && b[0].len == 3 && b[0].data[2] == 'b' && b[1].len == 0, "string_data read");
    TkTensor *c = t ? tk_clone(t) : NULL;
    tk_free(t);                                /* the copy owns its own bytes */
    IrTensor *back = c ? tk_to_ir(c, "s2") : NULL;
    T_CHECK(back && back->n_string == 2 && !back->has_raw && back->string_data[0].len == 3 &&
            memcmp(back->string_data[0].data, "a\0b", 3) == 0, "strings written back");
    T_CHECK(c && tk_get_f(c, 0) == 0 && tk_get_i(c, 0) == 0, "a string reads as 0");
    tk_free(c);
    ir_tensor_free(back);
    s->n_string = 1;
    T_CHECK(!tk_from_ir(s, &e), "a missing string refused");
    s->n_string = 2;
    s->has_raw = true;
    s->raw.data = mem_alloc(1);
    T_CHECK(!tk_from_ir(s, &e), "strings in raw_data refused");
    ir_tensor_free(s);
}

static void test_copy_and_empty(void)
{
    int64_t d = 4, z = 0;
    TkTensor *a = tk_new(IR_INT32, 1, &d, NULL), *b = tk_new(IR_INT32, 1, &d, NULL);
    for (size_t k = 0; k < 4; k++)
        tk_set_i(a, k, (int64_t)k + 10);
    tk_copy(b, 1, a, 2, 2);
    T_CHECK(tk_get_i(b, 0) == 0 && tk_get_i(b, 1) == 12 && tk_get_i(b, 2) == 13 &&
            tk_get_i(b, 3) == 0, "copy of a range");
    tk_copy(b, 0, a, 0, 0);
    TkTensor *e = tk_new(IR_FLOAT, 1, &z, NULL);
    IrTensor *it = e ? tk_to_ir(e, "e") : NULL;
    TkTensor *back = it ? tk_from_ir(it, NULL) : NULL;
    T_CHECK(it && it->raw.len == 0 && back && back->numel == 0 && back->rank == 1,
            "an empty tensor goes out and back");
    tk_free(a);
    tk_free(b);
    tk_free(e);
    tk_free(back);
    ir_tensor_free(it);
}

int main(void)
{
    test_new();
    test_limits();
    test_half();
    test_int64();
    test_uint64();
    test_narrow();
    test_small_and_carried();
    test_from_ir();
    test_strings();
    test_copy_and_empty();
    return t_done("test_tensor_kit");
}
