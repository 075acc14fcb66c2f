/*
 * coreml/elementwise.c - Core ML lowering and raising of the elementwise
 * family: arithmetic, comparison and logic (MIL's elementwise_binary ops,
 * which broadcast as ONNX does), unary maps, Neg, Identity, Where, Cast,
 * CastLike (a cast to its second input's type), Clip.
 *
 * Composed of MIL ops (MIL has none that means the same):
 * - Div of int32: floor_div, plus 1 where the signs differ and mod is not
 *   0 (ONNX truncates toward zero, MIL's floor_div floors).
 * - Mod: fmod 0 of int32 is MIL's mod (Python's %: the sign of y); fmod 1
 *   is mod corrected where the signs differ (int32), or x - trunc(x/y) * y
 *   corrected where x/y rounded up to an integer (floats).
 * - Round: half to even from floor (MIL's round documents only 0.5 -> 0).
 * - Acosh, Asinh: log forms; IsNaN: not_equal(x, x); IsInf: equal to
 *   +-inf; Shrink: two selects.
 *
 * Refused, and why:
 * - Div and Mod of int8, int16, uint8, uint16: MIL's floor_div and mod take
 *   int32 and floats only; Mod of floats with fmod 0 (ONNX forbids it).
 * - BitShift and bitwise ops: MIL has none (and the node tests' unsigned
 *   types of 16 bits and more have no Core ML type).
 * - Acosh, Asinh, Round, IsInf, IsNaN, Shrink of non-float types.
 * - Cast to types Core ML lacks (float64, int64 is narrowed to int32 like
 *   every int64 value of the export). (Reciprocal is real_div(1, x): MIL's
 *   inverse adds an epsilon.)
 * - Clip with bounds that are not constants (MIL's alpha/beta are const).
 *
 * The raising undoes MIL's flooring ops into ONNX ones: mod of floats as
 * x - floor(x/y) * y, floor_div of int32 as Div minus 1 where the signs
 * differ and the truncated remainder is not 0. It also raises what the
 * export does not emit: log's and inverse's epsilon (added first), square
 * (x * x), exp2 (2 ^ x), threshold (max), round (MIL's definition rounds
 * 0.5 to 0 and its value inference is numpy's half-to-even round: ONNX's
 * Round; the export still builds Round from floor, see above).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

static const CmMap ew_unary[] = {
    {"Sqrt", "sqrt"}, {"Exp", "exp"}, {"Log", "log"}, {"Abs", "abs"}, {"Erf", "erf"},
    {"Tanh", "tanh"}, {"Sin", "sin"}, {"Cos", "cos"}, {"Tan", "tan"}, {"Asin", "asin"},
    {"Acos", "acos"}, {"Atan", "atan"}, {"Sinh", "sinh"}, {"Cosh", "cosh"},
    {"Atanh", "atanh"}, {"Ceil", "ceil"}, {"Floor", "floor"}, {"Sign", "sign"},
    {"Not", "logical_not"}, {"Identity", "identity"},
};

static const CmMap ew_binary[] = {
    {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "real_div"}, {"Pow", "pow"},
    {"Equal", "equal"}, {"Less", "less"}, {"LessOrEqual", "less_equal"},
    {"Greater", "greater"}, {"GreaterOrEqual", "greater_equal"},
    {"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"},
    {"Max", "maximum"}, {"Min", "minimum"},
};

#define EW_N(t) (sizeof t / sizeof t[0])

/* ---- decompositions: ops MIL lacks, built of ops it has ------------------------- */

/* A temporary output of op typed like ONNX value v (dtype overridden when
 * nonzero). */
static const char *ew_tmp(CmLower *c, MilOp *op, const IrValue *v, int32_t dtype)
{
    MilType t = cml_type(v);
    const char *s = cml_tmp(c, op, dtype ? dtype : t.dtype, t.rank, t.dims);
    mil_type_clear(&t);
    return s;
}

/* op(x[, y]) where y is a value, or the immediate yc, or absent. */
static MilOp *ew_op(CmLower *c, const char *type, const char *x, const char *y, MilTensor *yc)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    if (yc)
        mil_op_in_const(op, "y", yc);
    else if (y)
        mil_op_in(op, "y", y);
    return op;
}

/* op(x[, y]) as a temporary typed like v. */
static const char *ew_t(CmLower *c, const IrValue *v, int32_t dtype, const char *type,
                        const char *x, const char *y, MilTensor *yc)
{
    return ew_tmp(c, ew_op(c, type, x, y, yc), v, dtype);
}

static MilOp *ew_select(CmLower *c, const char *k, const char *a, const char *b, MilTensor *bc)
{
    MilOp *op = cml_op(c, "select");
    mil_op_in(op, "cond", k);
    mil_op_in(op, "a", a);
    if (bc)
        mil_op_in_const(op, "b", bc);
    else
        mil_op_in(op, "b", b);
    return op;
}

static bool ew_is_float(int32_t dt)
{
    return dt == MIL_FP32 || dt == MIL_FP16;
}

/* True where a truncating and a flooring integer division part ways: the
 * floored remainder r is not 0 and x, y have opposite signs. */
static const char *ew_signs_differ(CmLower *c, const IrNode *n, const char *x, const char *y,
                                   const char *r, int32_t dt)
{
    const IrValue *o = n->out[0];
    const char *lx = ew_t(c, n->in[0], MIL_BOOL, "less", x, NULL, cml_scalar(dt, 0));
    const char *ly = ew_t(c, n->in[1], MIL_BOOL, "less", y, NULL, cml_scalar(dt, 0));
    const char *s = ew_t(c, o, MIL_BOOL, "logical_xor", lx, ly, NULL);
    const char *nz = ew_t(c, o, MIL_BOOL, "not_equal", r, NULL, cml_scalar(dt, 0));
    return ew_t(c, o, MIL_BOOL, "logical_and", nz, s, NULL);
}

/* Integer Div truncates toward zero: floor_div(x, y), plus 1 where the
 * signs differ and the division is inexact. */
static int lower_int_div(CmLower *c, const IrNode *n, const char *x, const char *y)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_INT32)
        return cml_refuse(c, "integer Div of %s: MIL's floor_div and mod take int32 only",
                          ir_dtype_name(cml_elem(n->in[0])) ? ir_dtype_name(cml_elem(n->in[0]))
                                                            : "?");
    const IrValue *o = n->out[0];
    const char *q = ew_t(c, o, 0, "floor_div", x, y, NULL);
    const char *r = ew_t(c, o, 0, "mod", x, y, NULL);
    const char *k = ew_signs_differ(c, n, x, y, r, dt);
    const char *q1 = ew_t(c, o, 0, "add", q, NULL, cml_scalar(dt, 1));
    return cml_out(c, ew_select(c, k, q1, q, NULL), n, 0);
}

/* trunc(v) of a float: ceil below zero, floor above. */
static const char *ew_trunc(CmLower *c, const IrValue *o, const char *v, int32_t dt)
{
    const char *neg = ew_t(c, o, MIL_BOOL, "less", v, NULL, cml_scalar(dt, 0));
    const char *up = ew_t(c, o, 0, "ceil", v, NULL, NULL);
    const char *down = ew_t(c, o, 0, "floor", v, NULL, NULL);
    return ew_tmp(c, ew_select(c, neg, up, down, NULL), o, 0);
}

/* Mod: fmod 0 (integers) is MIL's mod (Python's %, which floors); fmod 1
 * is the truncated remainder: for integers mod(x, y) - y where the signs
 * differ and the remainder is not 0, for floats x - trunc(x / y) * y. */
static int lower_mod(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    bool fmod = cml_attr_i(n, "fmod") != 0;
    if (ew_is_float(dt) && !fmod)
        return cml_refuse(c, "Mod of floats needs fmod 1");
    if (!ew_is_float(dt) && dt != MIL_INT32)
        return cml_refuse(c, "Mod of %s: MIL's mod takes int32 and floats only",
                          ir_dtype_name(cml_elem(n->in[0])) ? ir_dtype_name(cml_elem(n->in[0]))
                                                            : "?");
    const char *x = cml_in(c, n, 0), *y = x ? cml_in(c, n, 1) : NULL;
    if (!y)
        return -1;
    const IrValue *o = n->out[0];
    if (!fmod)
        return cml_out(c, ew_op(c, "mod", x, y, NULL), n, 0);
    if (ew_is_float(dt)) {
        const char *q = ew_t(c, o, 0, "real_div", x, y, NULL);
        const char *p = ew_t(c, o, 0, "mul", ew_trunc(c, o, q, dt), y, NULL);
        const char *rem = ew_t(c, o, 0, "sub", x, p, NULL);
        /* x / y rounded up to an integer n when the true quotient is just
         * below it leaves x - n*y tiny and of the wrong sign (62.011745 mod
         * 1.4421337 gives -3.8e-6, not 1.4421315): add |y| back, signed as x */
        const char *rn = ew_t(c, o, MIL_BOOL, "less", rem, NULL, cml_scalar(dt, 0));
        const char *xn = ew_t(c, n->in[0], MIL_BOOL, "less", x, NULL, cml_scalar(dt, 0));
        const char *nz = ew_t(c, o, MIL_BOOL, "not_equal", rem, NULL, cml_scalar(dt, 0));
        const char *bad = ew_t(c, o, MIL_BOOL, "logical_and", nz,
                               ew_t(c, o, MIL_BOOL, "logical_xor", rn, xn, NULL), NULL);
        const char *ay = ew_t(c, n->in[1], 0, "abs", y, NULL, NULL);
        const char *sy = ew_t(c, o, 0, "mul", ew_t(c, n->in[0], 0, "sign", x, NULL, NULL), ay,
                              NULL);
        const char *fixed = ew_t(c, o, 0, "add", rem, sy, NULL);
        return cml_out(c, ew_select(c, bad, fixed, rem, NULL), n, 0);
    }
    const char *r = ew_t(c, o, 0, "mod", x, y, NULL);
    const char *k = ew_signs_differ(c, n, x, y, r, dt);
    const char *r1 = ew_t(c, o, 0, "sub", r, y, NULL);
    return cml_out(c, ew_select(c, k, r1, r, NULL), n, 0);
}

/* Round half to even, exactly: f = floor(x), d = x - f (exact); up when
 * d > 0.5, or d == 0.5 and f is odd (f is even when 2 * floor(f / 2) == f,
 * all exact in binary floats). MIL's round documents only that 0.5 goes
 * to 0, which does not settle 1.5 or 2.5. */
MilOp *cml_round_even(CmLower *c, const IrValue *o, int32_t dt, const char *x)
{
    const char *f = ew_t(c, o, dt, "floor", x, NULL, NULL);
    const char *d = ew_t(c, o, dt, "sub", x, f, NULL);
    const char *h = ew_t(c, o, dt, "floor", ew_t(c, o, dt, "mul", f, NULL, cml_scalar(dt, 0.5)),
                         NULL, NULL);
    const char *even = ew_t(c, o, MIL_BOOL, "equal",
                            ew_t(c, o, dt, "mul", h, NULL, cml_scalar(dt, 2)), f, NULL);
    const char *tie = ew_t(c, o, MIL_BOOL, "equal", d, NULL, cml_scalar(dt, 0.5));
    const char *odd = ew_t(c, o, MIL_BOOL, "logical_not", even, NULL, NULL);
    const char *gt = ew_t(c, o, MIL_BOOL, "greater", d, NULL, cml_scalar(dt, 0.5));
    const char *up = ew_t(c, o, MIL_BOOL, "logical_or", gt,
                          ew_t(c, o, MIL_BOOL, "logical_and", tie, odd, NULL), NULL);
    const char *f1 = ew_t(c, o, dt, "add", f, NULL, cml_scalar(dt, 1));
    return ew_select(c, up, f1, f, NULL);
}

static int lower_round(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (!ew_is_float(dt))
        return cml_refuse(c, "Round of a non-float type");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    return cml_out(c, cml_round_even(c, n->out[0], dt, x), n, 0);
}

/* Acosh = log(x + sqrt((x - 1)(x + 1))) (x - 1 is exact near 1, where
 * x*x - 1 would cancel); Asinh = sign(x) log(|x| + sqrt(x*x + 1)) (odd
 * by construction: no cancellation for negative x). Both overflow to
 * inf for |x| above about 1.8e19, where the true value is finite. */
static int lower_arc_hyp(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (!ew_is_float(dt))
        return cml_refuse(c, "%s of a non-float type", n->op_type);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    const IrValue *o = n->out[0];
    bool as = !strcmp(n->op_type, "Asinh");
    const char *a = as ? ew_t(c, o, 0, "abs", x, NULL, NULL) : x, *s;
    if (as) {
        s = ew_t(c, o, 0, "add", ew_t(c, o, 0, "mul", x, x, NULL), NULL, cml_scalar(dt, 1));
    } else {
        const char *lo = ew_t(c, o, 0, "sub", x, NULL, cml_scalar(dt, 1));
        const char *hi = ew_t(c, o, 0, "add", x, NULL, cml_scalar(dt, 1));
        s = ew_t(c, o, 0, "mul", lo, hi, NULL);
    }
    const char *sum = ew_t(c, o, 0, "add", a, ew_t(c, o, 0, "sqrt", s, NULL, NULL), NULL);
    if (!as)
        return cml_out(c, ew_op(c, "log", sum, NULL, NULL), n, 0);
    const char *l = ew_t(c, o, 0, "log", sum, NULL, NULL);
    return cml_out(c, ew_op(c, "mul", ew_t(c, o, 0, "sign", x, NULL, NULL), l, NULL), n, 0);
}

/* IsNaN = not_equal(x, x); IsInf = equal(abs(x), inf), or equal(x, +inf)
 * or equal(x, -inf) for one sign, or less(x, -inf) (always false) for
 * none. */
static int lower_isinf_nan(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (!ew_is_float(dt))
        return cml_refuse(c, "%s of a non-float type", n->op_type);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    if (!strcmp(n->op_type, "IsNaN"))
        return cml_out(c, ew_op(c, "not_equal", x, x, NULL), n, 0);
    bool pos = cml_attr_i(n, "detect_positive") != 0;
    bool neg = cml_attr_i(n, "detect_negative") != 0;
    if (pos && neg)
        return cml_out(c, ew_op(c, "equal", ew_t(c, n->in[0], 0, "abs", x, NULL, NULL), NULL,
                                cml_scalar(dt, INFINITY)),
                       n, 0);
    if (pos || neg)
        return cml_out(c, ew_op(c, "equal", x, NULL, cml_scalar(dt, pos ? INFINITY : -INFINITY)),
                       n, 0);
    return cml_out(c, ew_op(c, "less", x, NULL, cml_scalar(dt, -INFINITY)), n, 0);
}

/* BitShift: refused with its reason (a rule, so that the refusal says why
 * rather than that no lowering exists). */
static int lower_bitshift(CmLower *c, const IrNode *n)
{
    (void)n;
    return cml_refuse(c, "MIL has no shift or bitwise op, and its integer arithmetic "
                      "(mul, floor_div) takes int32 only, not BitShift's unsigned types");
}

/* Shrink: x + bias below -lambd, x - bias above lambd, else 0. */
static int lower_shrink(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (!ew_is_float(dt))
        return cml_refuse(c, "Shrink of a non-float type");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    const IrValue *o = n->out[0];
    double l = cml_attr_f(n, "lambd"), b = cml_attr_f(n, "bias");
    const char *lo = ew_t(c, o, MIL_BOOL, "less", x, NULL, cml_scalar(dt, -l));
    const char *hi = ew_t(c, o, MIL_BOOL, "greater", x, NULL, cml_scalar(dt, l));
    const char *xl = ew_t(c, o, 0, "add", x, NULL, cml_scalar(dt, b));
    const char *xh = ew_t(c, o, 0, "sub", x, NULL, cml_scalar(dt, b));
    const char *mid = ew_tmp(c, ew_select(c, hi, xh, NULL, cml_scalar(dt, 0)), o, 0);
    return cml_out(c, ew_select(c, lo, xl, mid, NULL), n, 0);
}

static int lower_unary(CmLower *c, const IrNode *n)
{
    const CmMap *m = cm_map_onnx(ew_unary, EW_N(ew_unary), n->op_type);
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, m->mil);
    mil_op_in(op, "x", x);
    return cml_out(c, op, n, 0);
}

static int lower_binary(CmLower *c, const IrNode *n)
{
    const CmMap *m = cm_map_onnx(ew_binary, EW_N(ew_binary), n->op_type);
    /* Max/Min of n inputs: a chain of maximum/minimum (one input: identity) */
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    if (!strcmp(n->op_type, "Div") && !ir_dtype_is_float(cml_elem(n->in[0]))) {
        const char *y = cml_in(c, n, 1);
        return y ? lower_int_div(c, n, x, y) : -1;
    }
    if (n->n_in == 1) {
        MilOp *op = cml_op(c, "identity");
        mil_op_in(op, "x", x);
        return cml_out(c, op, n, 0);
    }
    for (size_t i = 1; i < n->n_in; i++) {
        const char *y = cml_in(c, n, i);
        if (!y)
            return -1;
        MilOp *op = cml_op(c, m->mil);
        mil_op_in(op, "x", x);
        mil_op_in(op, "y", y);
        if (i + 1 == n->n_in)
            return cml_out(c, op, n, 0);
        x = cml_tmp(c, op, cm_dtype_to_mil(cml_elem(n->out[0])), -1, NULL);
    }
    return cml_refuse(c, "no inputs");
}

static int lower_neg(CmLower *c, const IrNode *n)
{
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32)
        return cml_refuse(c, "Neg of this type");
    MilOp *op = cml_op(c, "mul");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "y", cml_scalar(dt, -1));
    return cml_out(c, op, n, 0);
}

/* Reciprocal as real_div(1, x): MIL's inverse adds an epsilon. */
static int lower_reciprocal(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "Reciprocal of a non-float type");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "real_div");
    mil_op_in_const(op, "x", cml_scalar(dt, 1));
    mil_op_in(op, "y", x);
    return cml_out(c, op, n, 0);
}

/* Sum and Mean of n inputs: a chain of add (Mean then scaled by 1/n). */
static int lower_sum(CmLower *c, const IrNode *n)
{
    bool mean = !strcmp(n->op_type, "Mean");
    int32_t dt = cm_dtype_to_mil(cml_elem(n->out[0]));
    if (mean && dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "Mean of a non-float type");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = NULL;
    for (size_t i = 1; i < n->n_in; i++) {
        const char *y = cml_in(c, n, i);
        if (!y)
            return -1;
        op = cml_op(c, "add");
        mil_op_in(op, "x", x);
        mil_op_in(op, "y", y);
        if (i + 1 == n->n_in && !mean)
            return cml_out(c, op, n, 0);
        x = cml_tmp(c, op, dt, -1, NULL);
    }
    op = cml_op(c, mean ? "mul" : "identity");
    mil_op_in(op, "x", x);
    if (mean)
        mil_op_in_const(op, "y", cml_scalar(dt, 1.0 / (double)n->n_in));
    return cml_out(c, op, n, 0);
}

static int lower_where(CmLower *c, const IrNode *n)
{
    const char *k = cml_in(c, n, 0), *a = k ? cml_in(c, n, 1) : NULL;
    const char *b = a ? cml_in(c, n, 2) : NULL;
    if (!b)
        return -1;
    MilOp *op = cml_op(c, "select");
    mil_op_in(op, "cond", k);
    mil_op_in(op, "a", a);
    mil_op_in(op, "b", b);
    return cml_out(c, op, n, 0);
}

static const char *ew_cast_name(int32_t onnx)
{
    switch (onnx) {
    case IR_FLOAT: return "fp32";
    case IR_FLOAT16: return "fp16";
    case IR_INT32: case IR_INT64: return "int32";
    case IR_BOOL: return "bool";
    default: return NULL;
    }
}

/* Cast, and CastLike (the type of its second input: a cast as well). */
static int lower_cast(CmLower *c, const IrNode *n)
{
    int64_t to = strcmp(n->op_type, "CastLike") ? cml_attr_i(n, "to")
                                                : cml_elem(cml_has(n, 1) ? n->in[1] : NULL);
    const char *dn = ew_cast_name((int32_t)to);
    if (!dn)
        return cml_refuse(c, "cast to %s: Core ML's cast takes fp32, fp16, int32 (int64 "
                          "narrowed) and bool",
                          ir_dtype_name((int32_t)to) ? ir_dtype_name((int32_t)to) : "?");
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    if (!cm_dtype_to_mil(cml_elem(n->in[0])))
        return cml_refuse(c, "cast from a type Core ML lacks");
    int32_t from = cml_elem(n->in[0]);
    if (from == IR_UINT8 || from == IR_INT8) /* iOS17's cast adds them */
        cml_need(c, "cast", (int)(mil_target_find("iOS17") - mil_targets));
    MilOp *op = cml_op(c, "cast");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "dtype", mil_tensor_string(dn));
    return cml_out(c, op, n, 0);
}

/* Clip: MIL's clip is for floats with constant bounds; an absent bound is
 * the float range's end. */
static int lower_clip(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16)
        return cml_refuse(c, "Clip of a non-float type (MIL's clip takes floats)");
    double lo = -FLT_MAX, hi = FLT_MAX, *v;
    size_t nv;
    for (size_t i = 1; i <= 2; i++) {
        if (!cml_has(n, i))
            continue;
        bool ok = cml_const_floats(n, i, &v, &nv);
        if (!ok || nv != 1) {
            if (ok)
                free(v);
            return cml_refuse(c, "the %s bound is not a constant scalar", i == 1 ? "min"
                                                                                  : "max");
        }
        *(i == 1 ? &lo : &hi) = v[0];
        free(v);
    }
    if (dt == MIL_FP16) {
        lo = lo < -65504 ? -65504 : lo;
        hi = hi > 65504 ? 65504 : hi;
    }
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "clip");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "alpha", cml_scalar(dt, lo));
    mil_op_in_const(op, "beta", cml_scalar(dt, hi));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule ew_lower[] = {
    {"Sqrt", lower_unary}, {"Exp", lower_unary}, {"Log", lower_unary},
    {"Abs", lower_unary}, {"Erf", lower_unary}, {"Tanh", lower_unary},
    {"Sin", lower_unary}, {"Cos", lower_unary}, {"Tan", lower_unary},
    {"Asin", lower_unary}, {"Acos", lower_unary}, {"Atan", lower_unary},
    {"Sinh", lower_unary}, {"Cosh", lower_unary}, {"Atanh", lower_unary},
    {"Ceil", lower_unary}, {"Floor", lower_unary}, {"Sign", lower_unary},
    {"Not", lower_unary}, {"Identity", lower_unary},
    {"Add", lower_binary}, {"Sub", lower_binary}, {"Mul", lower_binary},
    {"Div", lower_binary}, {"Pow", lower_binary}, {"Equal", lower_binary},
    {"Less", lower_binary}, {"LessOrEqual", lower_binary}, {"Greater", lower_binary},
    {"GreaterOrEqual", lower_binary}, {"And", lower_binary}, {"Or", lower_binary},
    {"Xor", lower_binary}, {"Max", lower_binary}, {"Min", lower_binary},
    {"Neg", lower_neg}, {"Reciprocal", lower_reciprocal}, {"Sum", lower_sum},
    {"Mean", lower_sum}, {"Where", lower_where}, {"Cast", lower_cast}, {"Clip", lower_clip},
    {"Mod", lower_mod}, {"Round", lower_round}, {"Acosh", lower_arc_hyp},
    {"Asinh", lower_arc_hyp}, {"IsInf", lower_isinf_nan}, {"IsNaN", lower_isinf_nan},
    {"Shrink", lower_shrink}, {"BitShift", lower_bitshift},
    {"CastLike", lower_cast},
};

/* ---- raising -------------------------------------------------------------------- */

static int raise_unary(CmRaise *r, const MilOp *op)
{
    const CmMap *m = cm_map_mil(ew_unary, EW_N(ew_unary), op->type);
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    return cmr_simple(r, op, m->onnx, 1, in, NULL);
}

static int raise_binary(CmRaise *r, const MilOp *op)
{
    const CmMap *m = cm_map_mil(ew_binary, EW_N(ew_binary), op->type);
    const char *in[2] = {cmr_in(r, op, "x", 0), cmr_in(r, op, "y", 0)};
    return cmr_simple(r, op, m->onnx, 2, in, NULL);
}

static int raise_select(CmRaise *r, const MilOp *op)
{
    const char *in[3] = {cmr_in(r, op, "cond", 0), cmr_in(r, op, "a", 0),
                         cmr_in(r, op, "b", 0)};
    return cmr_simple(r, op, "Where", 3, in, NULL);
}

static int raise_cast(CmRaise *r, const MilOp *op)
{
    const char *dn = cmr_string(cmr_const(r, op, "dtype"));
    static const struct { const char *mil; int32_t onnx; } names[] = {
        {"fp32", IR_FLOAT}, {"fp16", IR_FLOAT16}, {"int32", IR_INT32}, {"bool", IR_BOOL},
        {"int64", IR_INT64}, {"int8", IR_INT8}, {"uint8", IR_UINT8}, {"int16", IR_INT16},
        {"uint16", IR_UINT16},
    };
    for (size_t i = 0; dn && i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(names[i].mil, dn))
            continue;
        const char *in[1] = {cmr_in(r, op, "x", 0)};
        IrNode *node;
        if (cmr_simple(r, op, "Cast", 1, in, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("to", names[i].onnx));
        return 0;
    }
    return cmr_fail(r, "dtype '%s' has no ONNX cast", dn ? dn : "(missing)");
}

static int raise_clip(CmRaise *r, const MilOp *op)
{
    const char *in[3] = {cmr_in(r, op, "x", 0), cmr_in(r, op, "alpha", 0),
                         cmr_in(r, op, "beta", 0)};
    return cmr_simple(r, op, "Clip", 3, in, NULL);
}

/* rsqrt(x, epsilon) = 1 / sqrt(x + epsilon) */
static int raise_rsqrt(CmRaise *r, const MilOp *op)
{
    const MilTensor *e = cmr_const(r, op, "epsilon");
    double eps = 1e-12;
    if (e && !cmr_float(e, &eps))
        return cmr_fail(r, "epsilon is not a float scalar");
    float ef = (float)eps;
    const char *a = cmr_tmp(r, "rs"), *b = cmr_tmp(r, "rs");
    const char *i1[2] = {cmr_in(r, op, "x", 0), cmr_init_f32(r, &ef, 1, true)}, *o1[1] = {a};
    const char *i2[1] = {a}, *o2[1] = {b};
    if (cmr_node(r, "Add", 2, i1, 1, o1, NULL) < 0 || cmr_node(r, "Sqrt", 1, i2, 1, o2, NULL) < 0)
        return -1;
    return cmr_simple(r, op, "Reciprocal", 1, o2, NULL);
}

/* log(x, epsilon) = log(x + epsilon); inverse(x, epsilon) = 1 / (x +
 * epsilon), epsilon 1e-4 by default. coremltools writes log's default
 * (1e-45, which torch's log1p sets to 1) explicitly; an absent one, as the
 * export writes log, is read as 0. */
static int raise_epsilon(CmRaise *r, const MilOp *op)
{
    bool log = !strcmp(op->type, "log");
    const char *x = cmr_in(r, op, "x", 0);
    const MilTensor *e = cmr_const(r, op, "epsilon");
    double eps = log ? 0 : 1e-4;
    if (e && !cmr_float(e, &eps))
        return cmr_fail(r, "epsilon is not a float scalar");
    const char *in[1] = {eps != 0 ? cmr_tnode(r, "Add", 2, x, cmr_init_scalar(r, op, eps), NULL)
                                  : x};
    return cmr_simple(r, op, log ? "Log" : "Reciprocal", 1, in, NULL);
}

/* square = x * x; exp2 = 2 ^ x; threshold = max(x, alpha) (alpha of x's
 * type); round: MIL's definition rounds 0.5 to 0 and its value inference
 * is numpy's round, half to even as ONNX's Round (coremltools' torch and
 * TensorFlow front ends map their half-to-even rounds to it). */
static int raise_unary_more(CmRaise *r, const MilOp *op)
{
    const char *x = cmr_in(r, op, "x", 0);
    if (!strcmp(op->type, "square")) {
        const char *in[2] = {x, x};
        return cmr_simple(r, op, "Mul", 2, in, NULL);
    }
    if (!strcmp(op->type, "exp2")) {
        const char *in[2] = {cmr_init_scalar(r, op, 2), x};
        return cmr_simple(r, op, "Pow", 2, in, NULL);
    }
    if (!strcmp(op->type, "threshold")) {
        const char *in[2] = {x, cmr_in(r, op, "alpha", 0)};
        return cmr_simple(r, op, "Max", 2, in, NULL);
    }
    const char *in[1] = {x};
    return cmr_simple(r, op, "Round", 1, in, NULL);
}

static int raise_not_equal(CmRaise *r, const MilOp *op)
{
    const char *e = cmr_tnode(r, "Equal", 2, cmr_in(r, op, "x", 0), cmr_in(r, op, "y", 0), NULL);
    const char *in[1] = {e};
    return e ? cmr_simple(r, op, "Not", 1, in, NULL) : -1;
}

/* mod floors (Python's %): for integers ONNX Mod with fmod 0; for floats
 * x - floor(x / y) * y. floor_div: Floor(Div) for floats; for integers
 * ONNX's Div truncates, so 1 is taken off where the signs differ and the
 * truncated remainder is not 0. */
static int raise_floor_op(CmRaise *r, const MilOp *op)
{
    bool div = !strcmp(op->type, "floor_div");
    int32_t dt = op->n_out ? op->out[0].type.dtype : 0;
    const char *x = cmr_in(r, op, "x", 0), *y = cmr_in(r, op, "y", 0);
    if (!x || !y || !dt)
        return cmr_fail(r, "x, y or the output type missing");
    IrNode *node;
    if (dt == MIL_FP32 || dt == MIL_FP16) {
        const char *qd = cmr_tnode(r, "Div", 2, x, y, NULL);
        if (!qd)
            return -1;
        const char *in1[1] = {qd};
        if (div)
            return cmr_simple(r, op, "Floor", 1, in1, NULL);
        const char *fl = cmr_tnode(r, "Floor", 1, qd, NULL, NULL);
        const char *in[2] = {x, cmr_tnode(r, "Mul", 2, fl, y, NULL)};
        return in[1] ? cmr_simple(r, op, "Sub", 2, in, NULL) : -1;
    }
    if (!div) {
        const char *in[2] = {x, y};
        if (cmr_simple(r, op, "Mod", 2, in, &node) < 0)
            return -1;
        ir_node_set_attr(node, ir_attr_int("fmod", 0));
        return 0;
    }
    const char *q = cmr_tnode(r, "Div", 2, x, y, NULL), *zero = cmr_init_scalar(r, op, 0);
    const char *min[2] = {x, y}, *rem = cmr_tmp(r, "ew"), *mout[1] = {rem};
    if (!q || !zero || cmr_node(r, "Mod", 2, min, 1, mout, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("fmod", 1));
    const char *nz = cmr_tnode(r, "Not", 1, cmr_tnode(r, "Equal", 2, rem, zero, NULL), NULL, NULL);
    const char *s = cmr_tnode(r, "Xor", 2, cmr_tnode(r, "Less", 2, x, zero, NULL),
                                cmr_tnode(r, "Less", 2, y, zero, NULL), NULL);
    const char *k = cmr_tnode(r, "And", 2, nz, s, NULL);
    const char *q1 = cmr_tnode(r, "Sub", 2, q, cmr_init_scalar(r, op, 1), NULL);
    const char *in[3] = {k, q1, q};
    return k && q1 ? cmr_simple(r, op, "Where", 3, in, NULL) : -1;
}

static const CmRaiseRule ew_raise[] = {
    {"not_equal", raise_not_equal}, {"mod", raise_floor_op}, {"floor_div", raise_floor_op},
    {"rsqrt", raise_rsqrt},
    {"sqrt", raise_unary}, {"exp", raise_unary}, {"log", raise_epsilon},
    {"inverse", raise_epsilon}, {"square", raise_unary_more}, {"exp2", raise_unary_more},
    {"threshold", raise_unary_more}, {"round", raise_unary_more},
    {"abs", raise_unary}, {"erf", raise_unary}, {"tanh", raise_unary},
    {"sin", raise_unary}, {"cos", raise_unary}, {"tan", raise_unary},
    {"asin", raise_unary}, {"acos", raise_unary}, {"atan", raise_unary},
    {"sinh", raise_unary}, {"cosh", raise_unary}, {"atanh", raise_unary},
    {"ceil", raise_unary}, {"floor", raise_unary}, {"sign", raise_unary},
    {"logical_not", raise_unary}, {"identity", raise_unary},
    {"add", raise_binary}, {"sub", raise_binary}, {"mul", raise_binary},
    {"real_div", raise_binary}, {"pow", raise_binary}, {"equal", raise_binary},
    {"less", raise_binary}, {"less_equal", raise_binary}, {"greater", raise_binary},
    {"greater_equal", raise_binary}, {"logical_and", raise_binary},
    {"logical_or", raise_binary}, {"logical_xor", raise_binary},
    {"maximum", raise_binary}, {"minimum", raise_binary},
    {"select", raise_select}, {"cast", raise_cast}, {"clip", raise_clip},
};

CM_FAMILY(cm_family_elementwise, "elementwise", ew_lower, ew_raise);
