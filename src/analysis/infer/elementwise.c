/*
 * infer/elementwise.c - inference of elementwise ops: unary maps (output
 * shaped like the input) and n-ary ops with multidirectional broadcasting.
 * Element types come from the generic step (comparisons give bool through
 * their schema); the functions here only set shapes, plus the element
 * types of Cast and BitCast.
 * Shape arithmetic (Add/Sub/Mul/Div on small integer tensors) also keeps
 * the tracked elements (symval) so that Reshape targets stay known.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* Broadcasts every present input (opset >= 7 semantics); StringConcat
 * uses it too (infer_ops.h). */
int inf_bcast_all(InfCtx *c)
{
    const IrShape *shapes[64];
    size_t n = 0;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *s = inf_in_shape(c, i);
        if (!s || n == 64)
            return 0; /* a rank is unknown: so is the output's */
        shapes[n++] = s;
    }
    if (n == 0)
        return 0;
    IrShape *out;
    if (inf_broadcast(c, shapes, n, &out) < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, out->rank);
    for (size_t k = 0; o && k < out->rank; k++)
        inf_dim_copy(&o->dims[k], &out->dims[k]);
    ir_shape_free(out);
    return 0;
}

/* Binary ops before opset 7: B broadcasts to A only when broadcast=1
 * (with an optional axis); without it the shapes are equal. Either way
 * the output has A's shape. */
static int inf_legacy_binary(InfCtx *c)
{
    const IrShape *a = inf_in_shape(c, 0), *b = inf_in_shape(c, 1);
    if (!inf_attr_i(c, "broadcast") && a && b) {
        /* Without broadcast=1 the shapes must be equal; the converter's
         * upgrade to numpy broadcasting relies on it (35 vs 3 would
         * otherwise pass here and fail after the conversion). */
        bool differ = a->rank != b->rank;
        for (size_t k = 0; !differ && k < a->rank; k++)
            differ = inf_dim_known(&a->dims[k]) && inf_dim_known(&b->dims[k]) &&
                     a->dims[k].value != b->dims[k].value;
        if (differ)
            return inf_fail(c, "shape", "without broadcast=1 both inputs must "
                            "have one shape (rank %zu and %zu, or a dimension "
                            "differs)", a->rank, b->rank);
    }
    return inf_same_as_input(c, 0);
}

/* Applies op to the symvals of two inputs element by element, when both
 * are tracked (scalars broadcast). */
static void inf_symval_arith(InfCtx *c, char op)
{
    const IrShape *a = inf_in_symval(c, 0), *b = inf_in_symval(c, 1);
    if (!a || !b || (a->rank != b->rank && a->rank != 1 && b->rank != 1))
        return;
    size_t n = a->rank > b->rank ? a->rank : b->rank;
    IrShape *r = ir_shape_new(n);
    for (size_t k = 0; k < n; k++) {
        const IrDim *x = &a->dims[a->rank == 1 ? 0 : k];
        const IrDim *y = &b->dims[b->rank == 1 ? 0 : k];
        IrDim *d = &r->dims[k];
        if (op == '*') {
            inf_dim_mul(d, x, y);
        } else if (op == '+') {
            inf_dim_add(d, x, y);
        } else if (inf_dim_known(x) && inf_dim_known(y)) {
            if (op == '-' && !((y->value < 0 && x->value > INT64_MAX + y->value) ||
                               (y->value > 0 && x->value < INT64_MIN + y->value)))
                inf_dim_set(d, x->value - y->value);
            else if (op == '/' && y->value != 0 &&
                     !(x->value == INT64_MIN && y->value == -1)) {
                /* integer Div truncates (C semantics match ONNX's) */
                inf_dim_set(d, x->value / y->value);
            }
        } else if (op == '/' && inf_dim_known(y) && y->value == 1) {
            inf_dim_copy(d, x);
        }
    }
    inf_out_symval(c, 0, r);
}

static int inf_arith(InfCtx *c, char op)
{
    int32_t e = inf_in_elem(c, 0);
    if (c->since < 7)
        return inf_legacy_binary(c);
    if (inf_bcast_all(c) < 0)
        return -1;
    if (e == IR_INT32 || e == IR_INT64)
        inf_symval_arith(c, op);
    return 0;
}

static int inf_add(InfCtx *c) { return inf_arith(c, '+'); }
static int inf_sub(InfCtx *c) { return inf_arith(c, '-'); }
static int inf_mul(InfCtx *c) { return inf_arith(c, '*'); }
static int inf_div(InfCtx *c) { return inf_arith(c, '/'); }

/* Broadcasting binary ops that were attribute-broadcast before opset 7. */
static int inf_binary(InfCtx *c)
{
    if (c->since < 7)
        return inf_legacy_binary(c);
    return inf_bcast_all(c);
}

/* Ops that always broadcast (Mod, BitShift, Where, Bitwise*, ...), and the
 * variadic ones (Sum, Max, Min, Mean from opset 8; before that, all inputs
 * share one shape, which broadcasting also yields). */
static int inf_nary(InfCtx *c)
{
    return inf_bcast_all(c);
}

/* Identity also passes tracked shape values through. */
static int inf_identity(InfCtx *c)
{
    const IrShape *sv = inf_in_symval(c, 0);
    if (sv)
        inf_out_symval(c, 0, ir_shape_copy(sv));
    return inf_same_as_input(c, 0);
}

/* Neg of tracked shape values (exporters negate axes and sizes). */
static int inf_neg(InfCtx *c)
{
    const IrShape *sv = inf_in_symval(c, 0);
    if (sv) {
        IrShape *r = ir_shape_new(sv->rank);
        IrDim minus1 = {.kind = IR_DIM_VALUE, .value = -1};
        for (size_t k = 0; k < sv->rank; k++)
            if (inf_dim_known(&sv->dims[k]))
                inf_dim_mul(&r->dims[k], &sv->dims[k], &minus1);
        inf_out_symval(c, 0, r);
    }
    return inf_same_as_input(c, 0);
}

/* Element k of a tracked vector, a one-element vector broadcasting. */
static const IrDim *inf_sv_at(const IrShape *sv, size_t k)
{
    return &sv->dims[sv->rank == 1 ? 0 : k];
}

/* Equal of tracked values: 1 or 0 where both are known or the same
 * symbol. (Exporters compare shape entries with -1 or 0 before Where.) */
static int inf_equal(InfCtx *c)
{
    if (inf_binary(c) < 0)
        return -1;
    const IrShape *a = inf_in_symval(c, 0), *b = inf_in_symval(c, 1);
    if (!a || !b || (a->rank != b->rank && a->rank != 1 && b->rank != 1))
        return 0;
    size_t n = a->rank > b->rank ? a->rank : b->rank;
    IrShape *r = ir_shape_new(n);
    for (size_t k = 0; k < n; k++) {
        const IrDim *x = inf_sv_at(a, k), *y = inf_sv_at(b, k);
        if (inf_dim_same(x, y))
            inf_dim_set(&r->dims[k], 1);
        else if (inf_dim_differ(x, y))
            inf_dim_set(&r->dims[k], 0);
    }
    inf_out_symval(c, 0, r);
    return 0;
}

/* Where of tracked values: picks by a known condition, or agrees when
 * both choices are the same. */
static int inf_where(InfCtx *c)
{
    if (inf_bcast_all(c) < 0)
        return -1;
    const IrShape *w = inf_in_symval(c, 0), *x = inf_in_symval(c, 1);
    const IrShape *y = inf_in_symval(c, 2);
    if (!w || !x || !y)
        return 0;
    size_t n = w->rank;
    if (x->rank > n) n = x->rank;
    if (y->rank > n) n = y->rank;
    if ((w->rank != n && w->rank != 1) || (x->rank != n && x->rank != 1) ||
        (y->rank != n && y->rank != 1))
        return 0;
    IrShape *r = ir_shape_new(n);
    for (size_t k = 0; k < n; k++) {
        const IrDim *cond = inf_sv_at(w, k), *a = inf_sv_at(x, k), *b = inf_sv_at(y, k);
        if (inf_dim_known(cond))
            inf_dim_copy(&r->dims[k], cond->value ? a : b);
        else if (inf_dim_same(a, b))
            inf_dim_copy(&r->dims[k], a);
    }
    inf_out_symval(c, 0, r);
    return 0;
}

/* Cast: element type from `to`; shape (and tracked elements, for integer
 * targets) unchanged. Before opset 6 `to` was a string. */
/* The tracked elements of an integer value cast to float type `to`: the
 * known numbers the type holds exactly (|v| up to 2^24 for float, 2^53
 * for double, 2^11 float16, 2^8 bfloat16), so that Shape -> Cast(float)
 * -> Slice -> Cast(int64), as exporters write it, still proves the
 * elements; symbols and larger numbers become unknown. NULL for other
 * types. A Cast back to an integer type copies them (they are integers). */
static IrShape *inf_symval_to_real(const IrShape *sv, int32_t to)
{
    int64_t lim = to == IR_FLOAT ? INT64_C(1) << 24
                : to == IR_DOUBLE ? INT64_C(1) << 53
                : to == IR_FLOAT16 ? 2048 : to == IR_BFLOAT16 ? 256 : 0;
    if (!lim)
        return NULL;
    IrShape *r = ir_shape_new(sv->rank);
    for (size_t k = 0; k < sv->rank; k++)
        if (inf_dim_known(&sv->dims[k]) && sv->dims[k].value >= -lim && sv->dims[k].value <= lim)
            inf_dim_set(&r->dims[k], sv->dims[k].value);
    return r;
}

static int inf_cast(InfCtx *c)
{
    int32_t to = 0;
    const IrAttr *a = inf_attr(c, "to");
    if (a && a->has_i) /* range first: 2^32 + 1 must not pass as 1, FLOAT */
        to = a->i > 0 && a->i <= INT32_MAX ? (int32_t)a->i : 0;
    else if (a && a->has_s && a->s.data)
        to = os_dtype_from_name((const char *)a->s.data, a->s.len);
    if ((to <= 0 || !ir_dtype_name(to)) && a && a->has_i)
        return inf_fail(c, "attribute", "'to' (%lld) is not a known data type",
                        (long long)a->i);
    if (to <= 0 || !ir_dtype_name(to))
        return inf_fail(c, "attribute", "'to' is not a known data type");
    inf_out_elem(c, 0, to);
    inf_same_as_input(c, 0);
    const IrShape *sv = inf_in_symval(c, 0);
    if (sv && (to == IR_INT32 || to == IR_INT64))
        inf_out_symval(c, 0, ir_shape_copy(sv));
    else if (sv)
        inf_out_symval(c, 0, inf_symval_to_real(sv, to));
    return 0;
}

/* CastLike: the element type of `target_type`, the shape of input. */
static int inf_castlike(InfCtx *c)
{
    int32_t to = inf_in_elem(c, 1);
    if (to)
        inf_out_elem(c, 0, to);
    inf_same_as_input(c, 0);
    const IrShape *sv = inf_in_symval(c, 0);
    if (sv && (to == IR_INT32 || to == IR_INT64))
        inf_out_symval(c, 0, ir_shape_copy(sv));
    else if (sv)
        inf_out_symval(c, 0, inf_symval_to_real(sv, to));
    return 0;
}

/* BitCast: element type from `to`, which must have the input's bit
 * width; shape unchanged. */
static int inf_bitcast(InfCtx *c)
{
    int64_t to = inf_attr_i(c, "to");
    if (!inf_t_dtype_ok(to))
        return inf_fail(c, "attribute", "'to' %lld is not a known data type",
                        (long long)to);
    int32_t from = inf_in_elem(c, 0);
    if (from && ir_dtype_bits(from) != ir_dtype_bits((int32_t)to))
        return inf_fail(c, "shape", "%s has %d bits but %s has %d",
                        ir_dtype_name(from), ir_dtype_bits(from),
                        ir_dtype_name((int32_t)to), ir_dtype_bits((int32_t)to));
    inf_out_elem(c, 0, (int32_t)to);
    return inf_same_as_input(c, 0);
}

const InfOp inf_ops_elementwise[] = {
    {"", "Add", inf_add}, {"", "Sub", inf_sub}, {"", "Mul", inf_mul},
    {"", "Div", inf_div}, {"", "Pow", inf_nary},
    {"", "And", inf_binary}, {"", "Or", inf_binary}, {"", "Xor", inf_binary},
    {"", "Equal", inf_equal}, {"", "Greater", inf_binary}, {"", "Less", inf_binary},
    {"", "GreaterOrEqual", inf_nary}, {"", "LessOrEqual", inf_nary},
    {"", "Mod", inf_nary}, {"", "BitShift", inf_nary}, {"", "Where", inf_where},
    {"", "BitwiseAnd", inf_nary}, {"", "BitwiseOr", inf_nary},
    {"", "BitwiseXor", inf_nary},
    {"", "Sum", inf_nary}, {"", "Max", inf_nary}, {"", "Min", inf_nary},
    {"", "Mean", inf_nary},
    {"", "Cast", inf_cast}, {"", "CastLike", inf_castlike},
    {"", "Abs", inf_unary}, {"", "Acos", inf_unary}, {"", "Acosh", inf_unary},
    {"", "Asin", inf_unary}, {"", "Asinh", inf_unary}, {"", "Atan", inf_unary},
    {"", "Atanh", inf_unary}, {"", "BitwiseNot", inf_unary}, {"", "Ceil", inf_unary},
    {"", "Clip", inf_unary}, {"", "Cos", inf_unary},
    {"", "Cosh", inf_unary}, {"", "Erf", inf_unary},
    {"", "Exp", inf_unary}, {"", "Floor", inf_unary},
    {"", "Identity", inf_identity}, {"", "IsInf", inf_unary}, {"", "IsNaN", inf_unary},
    {"", "Log", inf_unary},
    {"", "Neg", inf_neg}, {"", "Not", inf_unary}, {"", "Reciprocal", inf_unary},
    {"", "Round", inf_unary},
    {"", "Shrink", inf_unary}, {"", "Sign", inf_unary},
    {"", "Sin", inf_unary}, {"", "Sinh", inf_unary},
    {"", "Sqrt", inf_unary},
    {"", "Tan", inf_unary}, {"", "Tanh", inf_unary},
    {"", "BitCast", inf_bitcast},
    {NULL, NULL, NULL}};
