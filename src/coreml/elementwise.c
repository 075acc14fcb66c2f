/*
 * coreml/elementwise.c - Core ML lowering and raising of the elementwise
 * family: arithmetic, comparison and logic (MIL's elementwise_binary ops,
 * which broadcast as ONNX does), unary maps, Neg, Identity, Where, Cast,
 * CastLike (a cast to its second input's type), Clip.
 *
 * Refused, and why:
 * - Div of integers: ONNX truncates toward zero, MIL's floor_div floors;
 *   real_div is for floats only.
 * - Mod, Round: MIL's mod and round (ties) are not ONNX's; BitShift,
 *   bitwise ops: MIL has none. (Reciprocal is real_div(1, x): MIL's inverse
 *   adds an epsilon.)
 * - Cast to types Core ML lacks (float64, int64 is narrowed to int32 like
 *   every int64 value of the export).
 * - Clip with bounds that are not constants (MIL's alpha/beta are const).
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

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
    if (!strcmp(n->op_type, "Div") && !ir_dtype_is_float(cml_elem(n->in[0])))
        return cml_refuse(c, "integer Div truncates; MIL's floor_div floors");
    /* Max/Min of n inputs: a chain of maximum/minimum (one input: identity) */
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
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
    int64_t to = strcmp(n->op_type, "CastLike") ? cml_attr_i(n, "to", 0)
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
        {"int64", IR_INT64}, {"int8", IR_INT8}, {"uint8", IR_UINT8},
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

static const CmRaiseRule ew_raise[] = {
    {"rsqrt", raise_rsqrt},
    {"sqrt", raise_unary}, {"exp", raise_unary}, {"log", raise_unary},
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
