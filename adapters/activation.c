/*
 * activation.c - adapters of the activation ops: Celu Elu Gelu HardSigmoid
 * HardSwish Hardmax LeakyRelu LogSoftmax Mish PRelu Relu Selu Shrink
 * Sigmoid Softmax Softplus Softsign Swish SwiGLU ThresholdedRelu.
 *
 * The changes handled here:
 * - opset 6 dropped the legacy `consumed_inputs` attribute (an in-place
 *   hint without meaning) and gave Selu its defaults at full precision;
 * - PRelu-7 broadcasts its slope numpy-style where PRelu-6 went per
 *   channel;
 * - Softmax, LogSoftmax and Hardmax before 13 normalize the flattened block
 *   of axes [axis, rank) (default axis 1); from 13 they normalize one axis
 *   (default -1);
 * - ops introduced late have an expansion into older ops, as the spec's
 *   function bodies define them. Float16 and bfloat16 inputs of the longer
 *   bodies are computed in float and rounded once at the end, as the op
 *   itself does; the values agree up to float rounding, and NaN and the
 *   infinities go through the same operations as in the spec's body.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- reading --------------------------------------------------------- */

/* The dims of v when its rank is known (unknown dims are -1); the rank,
 * or -1. */
static int ad_act_dims(const IrValue *v, int64_t *dims, int cap)
{
    const IrType *t = ad_type(v);
    if (!t || t->kind != IR_TYPE_TENSOR || !t->shape || (int)t->shape->rank > cap)
        return -1;
    for (size_t i = 0; i < t->shape->rank; i++)
        dims[i] = t->shape->dims[i].kind == IR_DIM_VALUE ? t->shape->dims[i].value : -1;
    return (int)t->shape->rank;
}

/* Refuses when attribute `name` of c->n (or any attribute, name NULL)
 * refers to an attribute of the enclosing function: its value is known only
 * per call, and an absent reference falls back to the op's default. */
static int ad_act_no_ref(AdCtx *c, const char *name)
{
    for (size_t i = 0; i < c->n->n_attr; i++) {
        const IrAttr *a = c->n->attr[i];
        if (a->ref_attr_name && (!name || (a->name && strcmp(a->name, name) == 0)))
            return ad_refuse(c, DG_ATTRIBUTE,
                             "attribute '%s' refers to the function's attribute '%s', "
                             "whose value is not known here",
                             a->name ? a->name : "", a->ref_attr_name);
    }
    return 0;
}

/* ---- opset 1 -> 6: consumed_inputs, Selu's defaults -------------------- */

/* Refuses a reference for an attribute whose default differs between the
 * versions (Selu's alpha and gamma): a call that leaves it out would get
 * the other default. */
static int ad_act_pinned_refs(AdCtx *c)
{
    for (size_t i = 0; c->from && c->to && i < c->from->n_attr; i++) {
        const OsAttr *a = &c->from->attr[i], *b = os_attr(c->to, a->name);
        if (b && a->has_default && b->has_default && a->def_f != b->def_f &&
            ad_act_no_ref(c, a->name) < 0)
            return -1;
    }
    return 0;
}

/* Version 1 had `consumed_inputs`, a legacy hint about in-place use with no
 * effect on the result; version 6 dropped it. Selu-1's defaults were the
 * constants rounded to 4 decimals (alpha 1.6732, gamma 1.0507), Selu-6's
 * are the float values of the exact constants: the defaults a node relies
 * on are written out so its values do not change (both directions). */
static int ad_act_1_6(AdCtx *c)
{
    if (ad_act_pinned_refs(c) < 0)
        return -1;
    ad_pin_defaults(c);
    ad_drop_attr(c, "consumed_inputs");
    return 0;
}

static int ad_act_6_1(AdCtx *c)
{
    if (ad_act_pinned_refs(c) < 0)
        return -1;
    ad_pin_defaults(c);
    return 0;
}

/* ---- Softmax, LogSoftmax, Hardmax ------------------------------------ */

/* Version 11 only widened `axis` to negative values (counted from the end)
 * and said so; version 1 coerces the input to 2-D the same way. Down: a
 * negative axis becomes its non-negative equivalent, which needs the rank. */
static int ad_sm_11_1(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    IrAttr *a = ad_attr(c, "axis");
    if (!a || !a->has_i || a->i >= 0)
        return 0;
    int r = ad_rank(ad_in(c, 0));
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "axis %lld is negative and the input's rank is unknown; "
                         "version 1 takes a non-negative axis", (long long)a->i);
    if (a->i + r < 0)
        return ad_refuse(c, DG_ATTRIBUTE, "axis %lld is out of range for rank %d",
                         (long long)a->i, r);
    ad_set_attr_i(c, c->n, "axis", a->i + r);
    return 0;
}

/* The normalized axis of a node whose input has rank r (-1 when out of
 * range, refused). */
static int ad_sm_axis(AdCtx *c, int64_t a, int r, int64_t *out)
{
    int64_t na = a < 0 ? a + r : a;
    if (na < 0 || na >= r)
        return ad_refuse(c, DG_ATTRIBUTE, "axis %lld is out of range for rank %d",
                         (long long)a, r);
    *out = na;
    return 0;
}

/* Softmax / LogSoftmax over the axes [a, r) of x at opset 13, with the
 * reductions of Softmax-13's own function body taken over several axes:
 * d = x - ReduceMax(x), e = Exp(d), s = ReduceSum(e);
 * Softmax = e / s, LogSoftmax = d - Log(s). Keepdims keeps x's shape for
 * the broadcasts, so empty tensors come out with their shape too. A
 * float16 input is computed in float (one rounding at the end, as the op
 * does; a float16 sum of many terms would lose more). */
static int ad_sm_block_reduce(AdCtx *c, IrValue *x, int64_t a, int r, bool log_sm)
{
    int32_t dt = ad_elem(x);
    bool narrow = dt == IR_FLOAT16 || dt == IR_BFLOAT16;
    if (narrow && !(x = ad_cast(c, x, IR_FLOAT)))
        return -1;
    int64_t axes[64];
    size_t n = 0;
    for (int64_t i = a; i < r; i++)
        axes[n++] = i;
    IrNode *k = ad_raw(c, "ReduceMax", 1, &x, 1);
    if (k)
        ad_set_attr_ints(c, k, "axes", n, axes);
    IrValue *m = ad_fin(c, k);
    IrValue *d = ad_op2(c, "Sub", x, m);
    IrValue *e = ad_op1(c, "Exp", d);
    IrValue *ax = e ? ad_const_i64s(c, n, axes) : NULL;
    IrValue *s = ad_op2(c, "ReduceSum", e, ax);
    IrValue *y = log_sm ? ad_op2(c, "Sub", d, ad_op1(c, "Log", s))
                        : ad_op2(c, "Div", e, s);
    if (y && narrow)
        y = ad_cast(c, y, dt);
    return ad_replace_by(c, y);
}

/* Hardmax over the axes [a, r) of x at opset 13: Flatten at a, Hardmax of
 * each row (the first maximum in row-major order, as version 11 picks it),
 * Reshape back to Shape(x). Reshape-13 reads a 0 in the shape as "copy the
 * input's dim", so a zero-sized dim of x would come back wrong unless it
 * sits where the 2-D tensor has a zero too: such dims must be known
 * non-zero. */
static int ad_sm_block_flatten(AdCtx *c, IrValue *x, int64_t a, int r)
{
    int64_t dims[64];
    ad_act_dims(x, dims, 64);
    for (int i = 0; i < r; i++) {
        bool safe = (i == 0 && a >= 1) || (i == 1 && a <= 1);
        if (!safe && dims[i] <= 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "dim %d of the input is not known to be non-zero; the "
                             "Flatten/Reshape rewrite would give an empty input "
                             "another shape", i);
    }
    IrValue *s = ad_op1(c, "Shape", x);
    IrNode *k = s ? ad_raw(c, "Flatten", 1, &x, 1) : NULL;
    if (k)
        ad_set_attr_i(c, k, "axis", a);
    IrValue *f = ad_fin(c, k);
    k = f ? ad_raw(c, c->n->op_type, 1, &f, 1) : NULL;
    if (k)
        ad_set_attr_i(c, k, "axis", 1);
    IrValue *h = ad_fin(c, k);
    return ad_replace_by(c, ad_op2(c, "Reshape", h, s));
}

/* Version 13 normalizes along the single axis `axis` (default -1) instead
 * of the flattened block [axis, rank) (default 1). When the block is the
 * last axis alone (axis -1, or axis = rank - 1) only the axis is written
 * out; otherwise the block is normalized by an exact rewrite. */
static int ad_sm_11_13(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    int64_t a = ad_attr_i(c, "axis"), na = 0;
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x);
    if (a == -1 || (r >= 0 && a == r - 1)) {
        ad_set_attr_i(c, c->n, "axis", a);
        return 0;
    }
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "axis %lld may not be the last axis and the input's rank "
                         "is unknown", (long long)a);
    if (r > 64)
        return ad_refuse(c, DG_SHAPE, "rank %d is too large", r);
    if (ad_sm_axis(c, a, r, &na) < 0)
        return -1;
    if (na == r - 1) {
        ad_set_attr_i(c, c->n, "axis", na);
        return 0;
    }
    if (strcmp(c->n->op_type, "Hardmax") == 0)
        return ad_sm_block_flatten(c, x, na, r);
    return ad_sm_block_reduce(c, x, na, r, strcmp(c->n->op_type, "LogSoftmax") == 0);
}

/* Down 13 -> 11: axis -1 means the last axis in both versions (at 11 the
 * block [rank-1, rank)). Another axis k is moved last by a Transpose that
 * swaps k and rank-1 (the order along k is kept, so Hardmax still picks the
 * first maximum), normalized there, and swapped back. */
static int ad_sm_13_11(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    int64_t a = ad_attr_i(c, "axis"), na = 0;
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x);
    if (r < 0 && a == -1) {
        ad_set_attr_i(c, c->n, "axis", -1);
        return 0;
    }
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "axis %lld may not be the last axis and the input's rank "
                         "is unknown", (long long)a);
    if (r > 64)
        return ad_refuse(c, DG_SHAPE, "rank %d is too large", r);
    if (ad_sm_axis(c, a, r, &na) < 0)
        return -1;
    ad_set_attr_i(c, c->n, "axis", r - 1);
    if (na == r - 1)
        return 0;
    int64_t perm[64];
    for (int i = 0; i < r; i++)
        perm[i] = i;
    perm[na] = r - 1;
    perm[r - 1] = na;
    IrValue *t = ad_transpose(c, x, (size_t)r, perm);
    IrNode *k = t ? ad_raw(c, c->n->op_type, 1, &t, 1) : NULL;
    if (k)
        ad_set_attr_i(c, k, "axis", r - 1);
    return ad_replace_by(c, ad_transpose(c, ad_fin(c, k), (size_t)r, perm));
}

/* ---- PRelu 6 <-> 7 ------------------------------------------------------ */

/* Which slope shapes mean the same in PRelu-6 and PRelu-7. Version 7 made
 * the slope broadcast to X unidirectionally (numpy rules, aligned at the
 * last axis). Version 6 only said that a one-element slope is shared; it
 * came from Caffe2, where a 1-D slope of C values goes per channel (axis
 * 1). Both readings agree for: a one-element slope, a slope of X's own
 * shape, and a 1-D slope of X's dim 1 when X is 2-D (axis 1 is the last
 * axis). Other shapes (a (C) slope on a 4-D X, a (C,1,1) slope) are read
 * differently by the two, or not defined at 6. Returns 1 when the node is
 * one of the agreed cases, 2 when the slope has one element but more dims
 * than X may have, 0 otherwise (*why set). */
static int ad_prelu_agreed(const AdCtx *c, DgReason *why)
{
    int64_t xd[64], sd[64];
    int xr = ad_act_dims(ad_in(c, 0), xd, 64), sr = ad_act_dims(ad_in(c, 1), sd, 64);
    *why = DG_SHAPE_UNKNOWN;
    if (sr < 0)
        return 0;
    bool one = true, known = true;
    for (int i = 0; i < sr; i++) {
        one = one && sd[i] == 1;
        known = known && sd[i] >= 0;
    }
    if (one)
        return sr == 0 || (xr >= 0 && xr >= sr) ? 1 : 2;
    if (xr < 0 || !known)
        return 0;
    bool same = xr == sr;
    for (int i = 0; same && i < xr; i++)
        same = xd[i] >= 0 && xd[i] == sd[i];
    if (same || (xr == 2 && sr == 1 && xd[1] >= 0 && xd[1] == sd[0]))
        return 1;
    *why = DG_SEMANTICS;
    return 0;
}

static int ad_prelu_refuse(AdCtx *c, DgReason why)
{
    if (why == DG_SHAPE_UNKNOWN)
        return ad_refuse(c, why, "the shapes of X and slope are not known well enough "
                         "to tell whether PRelu-6 and PRelu-7 read the slope alike");
    return ad_refuse(c, why, "PRelu-6 takes a 1-D slope per channel (axis 1) where "
                     "PRelu-7 broadcasts the slope from the last axis; only a "
                     "one-element slope, a slope of X's shape, or a 1-D slope "
                     "of a 2-D X mean the same in both");
}

/* Up 6 -> 7: the agreed slope shapes keep their meaning; a one-element
 * slope with more dims than X (shared at 6, not broadcastable at 7) is
 * reshaped to a scalar. */
static int ad_prelu_6_7(AdCtx *c)
{
    DgReason why;
    int k = ad_prelu_agreed(c, &why);
    if (k == 0)
        return ad_prelu_refuse(c, why);
    if (k == 2) {
        IrValue *shape = ad_const_i64s(c, 0, NULL);
        IrValue *s = ad_op2(c, "Reshape", ad_in(c, 1), shape);
        if (!s)
            return -1;
        ad_set_input(c, 1, s);
    }
    return 0;
}

/* Down 7 -> 6: only the agreed slope shapes (a one-element slope of any
 * rank is shared at 6). */
static int ad_prelu_7_6(AdCtx *c)
{
    DgReason why;
    if (ad_prelu_agreed(c, &why) == 0)
        return ad_prelu_refuse(c, why);
    return 0;
}

/* ---- expansions -------------------------------------------------------- */

/* The type a body computes in: float for float16/bfloat16 (cast up once,
 * cast back once), else the input's type; 0 when unknown. */
static int32_t ad_act_work(int32_t dt)
{
    return dt == IR_FLOAT16 || dt == IR_BFLOAT16 ? IR_FLOAT : dt;
}

typedef IrValue *(*AdActBody)(AdCtx *c, IrValue *x, int32_t dt);

/* Replaces the unary c->n by body(x), computed in ad_act_work(type of x).
 * need_type: the body builds constants, so the type must be known. */
static int ad_act_expand(AdCtx *c, AdActBody body, bool need_type)
{
    IrValue *x = ad_in(c, 0);
    int32_t dt = ad_elem(x), w = ad_act_work(dt);
    if (!dt && need_type)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "the input's type is unknown; the expansion's constants need it");
    IrValue *xin = w != dt ? ad_cast(c, x, w) : x;
    IrValue *y = xin ? body(c, xin, w) : NULL;
    if (y && w != dt)
        y = ad_cast(c, y, dt);
    return ad_replace_by(c, y);
}

/* Gelu (opset 20), approximate="none": y = 0.5 * x * (1 + erf(x / sqrt(2))). */
static IrValue *ad_gelu_erf(AdCtx *c, IrValue *x, int32_t dt)
{
    IrValue *t = ad_op2(c, "Mul", x, ad_const_scalar(c, dt, 0.70710678118654752440));
    IrValue *e = ad_op1(c, "Erf", t);
    IrValue *s = ad_op2(c, "Add", e, ad_const_scalar(c, dt, 1.0));
    IrValue *h = ad_op2(c, "Mul", x, ad_const_scalar(c, dt, 0.5));
    return ad_op2(c, "Mul", h, s);
}

/* Gelu, approximate="tanh":
 * y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))). */
static IrValue *ad_gelu_tanh(AdCtx *c, IrValue *x, int32_t dt)
{
    IrValue *x2 = ad_op2(c, "Mul", x, x);
    IrValue *x3 = ad_op2(c, "Mul", x2, x);
    IrValue *p = ad_op2(c, "Mul", x3, ad_const_scalar(c, dt, 0.044715));
    IrValue *in = ad_op2(c, "Add", x, p);
    IrValue *sc = ad_op2(c, "Mul", in, ad_const_scalar(c, dt, 0.79788456080286535588));
    IrValue *th = ad_op1(c, "Tanh", sc);
    IrValue *s = ad_op2(c, "Add", th, ad_const_scalar(c, dt, 1.0));
    IrValue *h = ad_op2(c, "Mul", x, ad_const_scalar(c, dt, 0.5));
    return ad_op2(c, "Mul", h, s);
}

/* Gelu-20 below opset 20, with Erf (opset 9+; below that Erf itself has no
 * expression) or Tanh. */
static int ad_gelu_expand(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    char buf[16];
    const char *a = ad_attr_s(c, "approximate", buf, sizeof buf);
    if (strcmp(a, "none") == 0)
        return ad_act_expand(c, ad_gelu_erf, true);
    if (strcmp(a, "tanh") == 0)
        return ad_act_expand(c, ad_gelu_tanh, true);
    return ad_refuse(c, DG_ATTRIBUTE, "approximate=\"%s\" is neither \"none\" nor \"tanh\"", a);
}

/* Mish (opset 18): y = x * tanh(softplus(x)), the spec's body. */
static IrValue *ad_mish_body(AdCtx *c, IrValue *x, int32_t dt)
{
    (void)dt;
    IrValue *sp = ad_op1(c, "Softplus", x);
    return ad_op2(c, "Mul", x, ad_op1(c, "Tanh", sp));
}

static int ad_mish_expand(AdCtx *c)
{
    return ad_act_expand(c, ad_mish_body, false);
}

/* Swish (opset 24): y = x * sigmoid(alpha * x), the spec's body (the
 * multiplication by alpha is left out when alpha is 1). */
static IrValue *ad_swish_body(AdCtx *c, IrValue *x, int32_t dt)
{
    float alpha = ad_attr_f(c, "alpha");
    IrValue *ax = alpha == 1.0f ? x : ad_op2(c, "Mul", ad_const_scalar(c, dt, alpha), x);
    return ad_op2(c, "Mul", x, ad_op1(c, "Sigmoid", ax));
}

static int ad_swish_expand(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    return ad_act_expand(c, ad_swish_body, ad_attr_f(c, "alpha") != 1.0f);
}

/* HardSwish (opset 14): y = x * HardSigmoid(x) with alpha = 1/6 and
 * beta = 0.5, the spec's body. */
static int ad_hardswish_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    IrNode *k = ad_raw(c, "HardSigmoid", 1, &x, 1);
    if (k) {
        ad_set_attr_f(c, k, "alpha", 1.0f / 6.0f);
        ad_set_attr_f(c, k, "beta", 0.5f);
    }
    return ad_replace_by(c, ad_op2(c, "Mul", x, ad_fin(c, k)));
}

/* Celu: y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), which for
 * alpha > 0 is alpha * Elu(x / alpha) with Elu's alpha 1 (the spec's body);
 * with alpha = 1 it is Elu itself. */
static IrValue *ad_celu_body(AdCtx *c, IrValue *x, int32_t dt)
{
    float alpha = ad_attr_f(c, "alpha");
    if (alpha != 1.0f)
        x = ad_op2(c, "Div", x, ad_const_scalar(c, dt, alpha));
    IrNode *k = x ? ad_raw(c, "Elu", 1, &x, 1) : NULL;
    if (k)
        ad_set_attr_f(c, k, "alpha", 1.0f);
    IrValue *y = ad_fin(c, k);
    if (alpha != 1.0f)
        y = ad_op2(c, "Mul", y, ad_const_scalar(c, dt, alpha));
    return y;
}

/* Celu as Elu. The formula and the body differ for alpha < 0 (and alpha 0
 * divides by zero), so those are refused. */
static int ad_celu_elu(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    float alpha = ad_attr_f(c, "alpha");
    if (!(alpha > 0))
        return ad_refuse(c, DG_ATTRIBUTE,
                         "alpha=%g: the expansion through Elu holds for alpha > 0 only",
                         (double)alpha);
    return ad_act_expand(c, ad_celu_body, alpha != 1.0f);
}

/* Down 28 -> 12: Celu-28 added float16, bfloat16 and double, which Celu-12
 * lacks; a float node stays Celu, another type is expanded through Elu
 * (which has them at opset 27). An unknown type is left to the driver's
 * type check. */
static int ad_celu_28_12(AdCtx *c)
{
    int32_t dt = ad_elem(ad_in(c, 0));
    if (dt == 0 || dt == IR_FLOAT)
        return 0;
    return ad_celu_elu(c);
}

/* SwiGLU (opset 28): Y = Swish(A) * B with Swish's alpha = SwiGLU's alpha
 * (same default 1.0), the spec's body. A and B have the same shape. */
static int ad_swiglu_expand(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    IrValue *x = ad_in(c, 0);
    IrNode *k = ad_raw(c, "Swish", 1, &x, 1);
    IrAttr *a = ad_attr(c, "alpha");
    if (k && a && a->has_f)
        ad_set_attr_f(c, k, "alpha", a->f);
    return ad_replace_by(c, ad_op2(c, "Mul", ad_fin(c, k), ad_in(c, 1)));
}

/* ThresholdedRelu (opset 10): y = x if x > alpha else 0, as
 * Where(Greater(x, alpha), x, 0) with Where and Greater of opset 9. The
 * comparison uses alpha's exact float value: float16 inputs are compared
 * in float (exact), double inputs against alpha widened. NaN compares
 * false and gives 0, as the op's definition does. */
static int ad_thresholdedrelu_expand(AdCtx *c)
{
    if (ad_act_no_ref(c, NULL) < 0)
        return -1;
    IrValue *x = ad_in(c, 0);
    int32_t dt = ad_elem(x);
    if (dt != IR_FLOAT16 && dt != IR_FLOAT && dt != IR_DOUBLE)
        return ad_refuse(c, dt ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "the expansion needs the input's type (float16, float or double)");
    float alpha = ad_attr_f(c, "alpha");
    int32_t w = dt == IR_FLOAT16 ? IR_FLOAT : dt;
    IrValue *xc = w != dt ? ad_cast(c, x, w) : x;
    IrValue *m = ad_op2(c, "Greater", xc, xc ? ad_const_scalar(c, w, alpha) : NULL);
    IrValue *z = m ? ad_const_scalar(c, dt, 0.0) : NULL;
    IrNode *k = NULL;
    if (z) {
        IrValue *in[3] = {m, x, z};
        k = ad_node_in(c, c->domain, c->n, "Where", 3, in, 1);
    }
    return ad_replace_by(c, ad_fin(c, k));
}

/* ---- the table --------------------------------------------------------- */

#define AD_ACT_1_6(op) \
    AD_UP(op, 1, 6, AD_ATTRS, ad_act_1_6), AD_DOWN(op, 1, 6, AD_ATTRS, ad_act_6_1)
#define AD_SOFTMAX(op) \
    AD_UP(op, 1, 11, AD_COMPATIBLE, NULL), \
    AD_DOWN(op, 1, 11, AD_SEMANTIC, ad_sm_11_1), \
    AD_UP(op, 11, 13, AD_SEMANTIC, ad_sm_11_13), \
    AD_DOWN(op, 11, 13, AD_SEMANTIC, ad_sm_13_11)

static const AdEntry ad_activation[] = {
    AD_UP("Celu", 12, 28, AD_COMPATIBLE, NULL),
    AD_DOWN("Celu", 12, 28, AD_EXPAND, ad_celu_28_12),
    AD_GONE("Celu", 12, AD_EXPAND, ad_celu_elu),
    AD_ACT_1_6("Elu"),
    AD_BOTH("Elu", 6, 22),
    AD_GONE("Gelu", 20, AD_EXPAND, ad_gelu_expand),
    AD_ACT_1_6("HardSigmoid"),
    AD_BOTH("HardSigmoid", 6, 22),
    AD_BOTH("HardSwish", 14, 22),
    AD_GONE("HardSwish", 14, AD_EXPAND, ad_hardswish_expand),
    AD_SOFTMAX("Hardmax"),
    AD_ACT_1_6("LeakyRelu"),
    AD_BOTH("LeakyRelu", 6, 16),
    AD_SOFTMAX("LogSoftmax"),
    AD_BOTH("Mish", 18, 22),
    AD_GONE("Mish", 18, AD_EXPAND, ad_mish_expand),
    AD_ACT_1_6("PRelu"),
    AD_UP("PRelu", 6, 7, AD_SEMANTIC, ad_prelu_6_7),
    AD_DOWN("PRelu", 6, 7, AD_SEMANTIC, ad_prelu_7_6),
    AD_BOTH("PRelu", 7, 9),
    AD_BOTH("PRelu", 9, 16),
    AD_ACT_1_6("Relu"),
    AD_BOTH("Relu", 6, 13),
    AD_BOTH("Relu", 13, 14),
    AD_ACT_1_6("Selu"),
    AD_BOTH("Selu", 6, 22),
    AD_ACT_1_6("Sigmoid"),
    AD_BOTH("Sigmoid", 6, 13),
    AD_SOFTMAX("Softmax"),
    AD_BOTH("Softplus", 1, 22),
    AD_BOTH("Softsign", 1, 22),
    AD_GONE("Swish", 24, AD_EXPAND, ad_swish_expand),
    AD_GONE("SwiGLU", 28, AD_EXPAND, ad_swiglu_expand),
    AD_BOTH("ThresholdedRelu", 10, 22),
    AD_GONE("ThresholdedRelu", 10, AD_EXPAND, ad_thresholdedrelu_expand),
};

const AdFamily ad_family_activation = {"activation", ad_activation,
                                       sizeof ad_activation / sizeof ad_activation[0]};
