/*
 * elementwise.c - adapters of the elementwise math, logic and comparison
 * ops: Abs ... Xor, Clip, Where, the trigonometric and hyperbolic
 * functions, the bitwise ops, Cast, CastLike, Identity (Einsum: einsum.c;
 * CumSum/CumProd, Det: reduce.c).
 *
 * The version changes of this family are of four kinds:
 *  - type lists grow (most changes): compatible entries, the driver
 *    refuses a type the target lacks; where the older version computes
 *    the same on exact conversions of the value (Less/Greater before 9,
 *    Equal before 11, Max/Min before 12 on integers: casts to wider
 *    types or double, or 64-bit values split in exact 32-bit halves) the
 *    downgrade rewrites the node;
 *  - opset 1 versions carry `consumed_inputs`, an optimisation hint with
 *    no effect on the result: dropped going up, nothing going down;
 *  - binary ops before opset 7 broadcast only B onto A, and only with
 *    broadcast=1 (B's shape a contiguous run of A's dims starting at
 *    `axis`, by default A's trailing dims, or B of one element); from 7
 *    they broadcast both ways like numpy; Max/Min/Sum/Mean need equal
 *    shapes before 8;
 *  - Clip's bounds move from attributes to inputs (11), Pow's exponent
 *    gets its own type (12).
 * Ops introduced after opset 1 are expanded into older ops only where the
 * older form computes exactly the same for every input (NaN, infinities,
 * signed zeros, integer overflow); the others are in impossible.c.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- small helpers ---------------------------------------------------- */

/* The inferred shape of v, or NULL when its rank is unknown. */
static const IrShape *ad_shape(const IrValue *v)
{
    const IrType *t = ad_type(v);
    return t && t->kind == IR_TYPE_TENSOR ? t->shape : NULL;
}

/* Whether two dims are known to be equal: the same number, or the same
 * symbol (one symbol names one size throughout a model). */
static bool ad_dim_eq(const IrDim *a, const IrDim *b)
{
    if (a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE)
        return a->value == b->value;
    return a->kind == IR_DIM_PARAM && b->kind == IR_DIM_PARAM && a->param &&
           b->param && strcmp(a->param, b->param) == 0;
}

static bool ad_dim_is(const IrDim *d, int64_t v)
{
    return d->kind == IR_DIM_VALUE && d->value == v;
}

/* Whether two shapes are known to be equal. */
static bool ad_shape_eq(const IrShape *a, const IrShape *b)
{
    if (!a || !b || a->rank != b->rank)
        return false;
    for (size_t i = 0; i < a->rank; i++)
        if (!ad_dim_eq(&a->dims[i], &b->dims[i]))
            return false;
    return true;
}

/* Whether every dim of s is a known number. */
static bool ad_shape_known(const IrShape *s)
{
    for (size_t i = 0; s && i < s->rank; i++)
        if (s->dims[i].kind != IR_DIM_VALUE)
            return false;
    return s != NULL;
}

static bool ad_is_float(int32_t t)
{
    return t == IR_FLOAT || t == IR_DOUBLE || t == IR_FLOAT16;
}

static bool ad_is_unsigned(int32_t t)
{
    return t == IR_UINT8 || t == IR_UINT16 || t == IR_UINT32 || t == IR_UINT64;
}

static bool ad_is_signed_int(int32_t t)
{
    return t == IR_INT8 || t == IR_INT16 || t == IR_INT32 || t == IR_INT64;
}

static bool ad_is_int(int32_t t)
{
    return ad_is_unsigned(t) || ad_is_signed_int(t);
}

/* A scalar constant of an integer (or bool) type holding the low bits of
 * `bits`. */
static IrValue *ad_const_bits(AdCtx *c, int32_t dtype, uint64_t bits)
{
    uint8_t buf[8];
    int w = ir_dtype_bits(dtype) / 8;
    if (w < 1 || w > 8) {
        ad_refuse(c, DG_TYPE, "no constant of type %s",
                  ir_dtype_name(dtype) ? ir_dtype_name(dtype) : "?");
        return NULL;
    }
    for (int i = 0; i < w; i++)
        buf[i] = (uint8_t)(bits >> (8 * i));
    return ad_const_tensor(c, dtype, 0, NULL, buf, (size_t)w);
}

/* ---- building blocks of the exact rewrites ---------------------------- */

/* Broadcasts dims d (rank r) into out (rank *ro), numpy style; false when
 * they do not broadcast. */
static bool ad_bcast_into(int64_t *out, size_t *ro, const int64_t *d, size_t r)
{
    if (r > *ro) {
        size_t sh = r - *ro;
        memmove(out + sh, out, *ro * sizeof *out);
        for (size_t i = 0; i < sh; i++)
            out[i] = 1;
        *ro = r;
    }
    for (size_t i = 0; i < r; i++) {
        int64_t *o = &out[*ro - r + i];
        if (*o == d[i] || d[i] == 1)
            continue;
        if (*o != 1)
            return false;
        *o = d[i];
    }
    return true;
}

/* For each element p of the output (dims od, rank ro, n elements), the
 * flat index of the element of an input of dims d (rank r) broadcast to
 * it: dims of 1 repeat their one element. */
static void ad_bcast_map(const int64_t *od, size_t ro, int64_t n, const int64_t *d,
                         size_t r, int64_t *idx)
{
    int64_t m[AD_MAX_RANK] = {0}, stride[AD_MAX_RANK];
    int64_t s = 1;
    for (size_t i = r; i-- > 0;) {
        stride[i] = d[i] == 1 ? 0 : s;
        s *= d[i];
    }
    for (int64_t p = 0; p < n; p++) {
        int64_t f = 0;
        for (size_t i = 0; i < r; i++)
            f += m[ro - r + i] * stride[i];
        idx[p] = f;
        for (size_t i = ro; i-- > 0;) {
            if (++m[i] < od[i])
                break;
            m[i] = 0;
        }
    }
}

/* ---- consumed_inputs (opset 1 -> 6) ------------------------------------ */

/* Opset 1 versions carry `consumed_inputs`, a hint for in-place execution
 * that never changes the result; version 6 removed it (and for several
 * ops added types). Dropping it (ad_drop_consumed) is exact. Going down
 * there is nothing to add: the attribute was optional. */

/* ---- legacy broadcasting (binary ops, opsets 1..6 <-> 7) --------------- */

/* Opsets 1..6: without broadcast=1 A and B have equal shapes; with it, B
 * broadcasts onto A: B is a single element (rank <= A's) or B's shape
 * equals A's dims from `axis` on (default: A's trailing dims); no dim of
 * B of size 1 expands ("1-dim expansion doesn't work yet"). The output
 * has A's shape. From opset 7 both inputs broadcast like numpy, aligned
 * at the trailing dims. */

/* Going up. broadcast=0: the shapes are equal, numpy gives the same.
 * broadcast=1 without axis: B lines up with A's trailing dims, as numpy
 * aligns it. With axis: B's dims sit at A's dims axis..axis+rank(B)-1, so
 * B gets rank(A)-axis-rank(B) trailing dims of 1 (Unsqueeze), after
 * which numpy aligns it the same way. */
static int ad_bcast_up(AdCtx *c)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    bool on = ad_attr_i(c, "broadcast") != 0;
    int ra = ad_rank(a), rb = ad_rank(b);
    if (on && ra >= 0 && rb > ra)
        return ad_refuse(c, DG_SEMANTICS,
                         "B has more dims (%d) than A (%d), which opset %lld "
                         "broadcasting does not define", rb, ra,
                         (long long)c->from_opset);
    if (on && ad_attr(c, "axis")) {
        int64_t axis = ad_attr_i(c, "axis");
        const IrShape *sb = ad_shape(b);
        bool one = sb != NULL;
        for (size_t i = 0; sb && i < sb->rank; i++)
            one = one && ad_dim_is(&sb->dims[i], 1);
        if (!one) {
            if (ra < 0 || rb < 0)
                return ad_refuse(c, DG_SHAPE_UNKNOWN,
                                 "broadcast axis=%lld needs the ranks of A and B",
                                 (long long)axis);
            if (axis < 0 || axis + rb > ra)
                return ad_refuse(c, DG_ATTRIBUTE,
                                 "axis=%lld does not place B (rank %d) inside A (rank %d)",
                                 (long long)axis, rb, ra);
            int64_t trail = ra - axis - rb, axes[64];
            if (trail > 64)
                return ad_refuse(c, DG_ATTRIBUTE, "rank too large");
            for (int64_t k = 0; k < trail; k++)
                axes[k] = rb + k;
            if (trail > 0) {
                IrValue *u = ad_axes_op(c, c->n, "Unsqueeze", b, (size_t)trail, axes);
                if (!u)
                    return -1;
                ir_node_set_input(c->n, 1, u);
            }
        }
    }
    ad_drop_attr(c, "broadcast");
    ad_drop_attr(c, "axis");
    return 0;
}

/* How B lines up with A under the legacy rule. */
typedef struct AdFit {
    bool ones;       /* B is one element (all dims 1) */
    size_t first;    /* B's first and last dims that are not 1 */
    size_t last;
} AdFit;

/* Whether B broadcasts onto A (output = A's shape) in a way opset <= 6 can
 * state after squeezing B's leading and trailing dims of 1: every dim of
 * B between its first and last dim that is not 1 equals A's dim there
 * (numpy alignment at the trailing dims). */
static bool ad_fit(const IrShape *sa, const IrShape *sb, AdFit *f)
{
    if (sb->rank > sa->rank)
        return false;
    size_t off = sa->rank - sb->rank;
    f->ones = true;
    f->first = f->last = 0;
    for (size_t j = 0; j < sb->rank; j++) {
        if (ad_dim_is(&sb->dims[j], 1))
            continue;
        if (f->ones)
            f->first = j;
        f->ones = false;
        f->last = j;
    }
    if (f->ones)
        return true;
    for (size_t j = f->first; j <= f->last; j++)
        if (!ad_dim_eq(&sb->dims[j], &sa->dims[off + j]))
            return false;
    return true;
}

/* States the fit on node k (inputs A, B of shapes sa, sb): squeezes B's
 * outer dims of 1 when B's core is not at its edges, sets broadcast=1 and
 * the axis where B's core starts in A when it is not A's trailing dims. */
static int ad_fit_apply(AdCtx *c, IrNode *k, const IrShape *sa,
                        const IrShape *sb, const AdFit *f)
{
    if (!f->ones) {
        size_t rb = sb->rank, n = 0;
        int64_t axes[64];
        if (rb > 64)
            return ad_refuse(c, DG_SHAPE, "rank too large");
        for (size_t j = 0; j < rb; j++)
            if (j < f->first || j > f->last)
                axes[n++] = (int64_t)j;
        if (n > 0) {
            IrValue *s = ad_axes_op(c, k, "Squeeze", k->in[1], n, axes);
            if (!s)
                return -1;
            ir_node_set_input(k, 1, s);
        }
        size_t axis = sa->rank - rb + f->first;
        if (f->last + 1 != rb)
            ad_set_attr_i(c, k, "axis", (int64_t)axis);
    }
    ad_set_attr_i(c, k, "broadcast", 1);
    return ad_infer(c, k);
}

static bool ad_op_is(const AdCtx *c, const char *op)
{
    return strcmp(c->n->op_type, op) == 0;
}

/* A (shapes sa) broadcasts onto B (sb), which opset <= 6 cannot say
 * directly: commutative ops swap their inputs; Greater(a, b) becomes
 * Less(b, a) and back (the same for NaN: both false); a floating Sub
 * becomes Add(Neg(b), a), since IEEE subtraction is defined as adding the
 * negation (signed zeros and NaN included). Others are refused. */
static int ad_swap(AdCtx *c, const IrShape *sa, const IrShape *sb, const AdFit *f)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    if (os_op_flags(c->n->domain, c->n->op_type) & OS_F_COMMUTATIVE) {
        ir_node_set_input(c->n, 0, b);
        ir_node_set_input(c->n, 1, a);
        return ad_fit_apply(c, c->n, sb, sa, f);
    }
    const char *flip = ad_op_is(c, "Greater") ? "Less"
                     : ad_op_is(c, "Less") ? "Greater" : NULL;
    IrNode *k = NULL;
    if (flip) {
        IrValue *in[2] = {b, a};
        k = ad_raw(c, flip, 2, in, 1);
    } else if (ad_op_is(c, "Sub") && ad_is_float(ad_elem(a)) &&
               ad_elem(a) == ad_elem(b)) {
        IrValue *nb = ad_op1(c, "Neg", b);
        if (!nb)
            return -1;
        IrValue *in[2] = {nb, a};
        k = ad_raw(c, "Add", 2, in, 1);
    } else {
        return ad_refuse(c, DG_BROADCAST,
                         "A would broadcast onto B; opset %lld broadcasts only B onto A",
                         (long long)c->to_opset);
    }
    if (!k || ad_fit_apply(c, k, sb, sa, f) < 0)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* Going down: shapes equal -> nothing; B broadcasts onto A -> broadcast=1
 * (plus axis, plus a Squeeze of B's outer dims of 1 when needed); A
 * broadcasts onto B -> ad_swap; both broadcast (the output is neither
 * input's shape) -> refused, opsets <= 6 cannot express it. */
static int ad_bcast_down(AdCtx *c)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    const IrShape *sa = ad_shape(a), *sb = ad_shape(b);
    AdFit f;
    if (!a || !b || a == b || ad_shape_eq(sa, sb))
        return 0;
    if (sb && sb->rank == 0) {
        ad_set_attr_i(c, c->n, "broadcast", 1);
        return 0;
    }
    if (!sa || !sb)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "opset %lld needs to know whether B broadcasts onto A "
                         "(the input shapes are unknown)", (long long)c->to_opset);
    if (ad_fit(sa, sb, &f))
        return ad_fit_apply(c, c->n, sa, sb, &f);
    if (ad_fit(sb, sa, &f))
        return ad_swap(c, sa, sb, &f);
    if (!ad_shape_known(sa) || !ad_shape_known(sb))
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "opset %lld needs to know whether B broadcasts onto A "
                         "(some dims are unknown)", (long long)c->to_opset);
    return ad_refuse(c, DG_BROADCAST,
                     "the inputs broadcast in a way opset %lld cannot express "
                     "(only B onto A, without expanding dims of 1 inside B)",
                     (long long)c->to_opset);
}

/* ---- Max Min Sum Mean (6 <-> 8) --------------------------------------- */

/* x repeated to the static dims od (rank ro) it broadcasts to: a Reshape
 * that prepends dims of 1 up to rank ro, then a Tile (opset 6) by od[i]
 * along each dim of 1 whose output dim is not 1. Copies only, so the
 * values are exactly those broadcasting reads. x itself when it has
 * those dims already. */
static IrValue *ad_tile_to(AdCtx *c, IrValue *x, const int64_t *od, size_t ro)
{
    int64_t d[AD_MAX_RANK], xd[AD_MAX_RANK], rep[AD_MAX_RANK];
    int xr = x ? ad_static(x, d, AD_MAX_RANK) : -1;
    if (xr < 0 || (size_t)xr > ro)
        return NULL;
    size_t r = (size_t)xr;
    bool same = r == ro, tile = false;
    for (size_t i = 0; i < ro; i++) {
        xd[i] = i < ro - r ? 1 : d[i - (ro - r)];
        rep[i] = xd[i] == od[i] ? 1 : od[i];
        same = same && xd[i] == od[i];
        tile = tile || rep[i] != 1;
    }
    if (same)
        return x;
    if (r != ro)
        x = ad_reshape(c, x, ro, xd);
    return tile ? ad_op2(c, "Tile", x, ad_const_i64s(c, ro, rep)) : x;
}

/* Opset 8 added multidirectional broadcasting of the inputs; before, all
 * inputs have one shape. Up: equal shapes broadcast to themselves.
 * Down: inputs of shapes known to be equal need nothing; otherwise, when
 * every input's dims are known numbers, each input is tiled to the
 * broadcast shape (ad_tile_to), which opset 6 can state exactly. */
static int ad_variadic_down(AdCtx *c)
{
    IrValue *v0 = ad_in(c, 0);
    size_t bad = 0;
    for (size_t i = 1; i < c->n->n_in && !bad; i++) {
        IrValue *v = ad_in(c, i);
        if (v && v != v0 && !ad_shape_eq(ad_shape(v0), ad_shape(v)))
            bad = i;
    }
    if (!bad)
        return 0;
    int64_t od[AD_MAX_RANK], d[AD_MAX_RANK];
    size_t ro = 0;
    for (size_t i = 0; i < c->n->n_in; i++) {
        int r = ad_static(ad_in(c, i), d, AD_MAX_RANK);
        if (r < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "opset %lld needs equal input shapes: input %zu's "
                             "dims must be known to tile it", (long long)c->to_opset, i);
        if (!ad_bcast_into(od, &ro, d, (size_t)r))
            return ad_refuse(c, DG_BROADCAST, "input %zu's shape does not "
                             "broadcast with the others", i);
    }
    if (c->build_opset < 6)
        return ad_refuse(c, DG_BROADCAST, "inputs of different shapes need "
                         "Tile (opset 6) to be made equal");
    for (size_t i = 0; i < c->n->n_in; i++) {
        IrValue *t = ad_tile_to(c, ad_in(c, i), od, ro);
        if (!t)
            return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "tiling failed");
        if (t != ad_in(c, i))
            ir_node_set_input(c->n, i, t);
    }
    return 0;
}

/* ---- Pow (7 <-> 12) --------------------------------------------------- */

/* Pow-12 gave the exponent its own type variable (T1); before, base and
 * exponent share T (float16, float, double). A float/double base with a
 * constant integer exponent whose values the base type holds exactly
 * (|e| <= 2^24 / 2^53): the exponent becomes a constant of the base's
 * type, and pow(x, e) is the same for e as an integer or as the equal
 * floating value. Returns 0 done, 1 not applicable (nothing built), -1. */
static int ad_pow_const_exp(AdCtx *c)
{
    IrValue *e = ad_in(c, 1);
    int32_t ta = ad_elem(ad_in(c, 0)), tb = ad_elem(e);
    const IrTensor *ct = ad_const(e);
    int64_t *v;
    size_t n;
    bool fits = (ta == IR_FLOAT || ta == IR_DOUBLE) &&
                (ad_is_signed_int(tb) || ad_is_unsigned(tb)) && ct &&
                ad_const_ints(e, &v, &n);
    if (!fits)
        return 1;
    int64_t lim = ta == IR_FLOAT ? INT64_C(1) << 24 : INT64_C(1) << 53;
    size_t w = ta == IR_FLOAT ? 4 : 8;
    uint8_t *raw = mem_array(n ? n * w : 1, 1);
    for (size_t i = 0; i < n && fits; i++) {
        fits = v[i] >= -lim && v[i] <= lim;
        float f = (float)v[i];
        double d = (double)v[i];
        memcpy(raw + i * w, w == 4 ? (const void *)&f : (const void *)&d, w);
    }
    free(v);
    IrValue *k = fits ? ad_const_tensor(c, ta, ct->ndims, ct->dims, raw, n * w) : NULL;
    free(raw);
    if (!fits)
        return 1;
    if (!k)
        return -1;
    ir_node_set_input(c->n, 1, k);
    ir_value_drop_if_unused(e);
    return 0;
}

/* Whether t is a type Pow-12 takes that converts to double exactly or
 * as numpy converts it: the floating types Pow-7 has and the integers. */
static bool ad_pow_type(int32_t t)
{
    return ad_is_float(t) || ad_is_int(t);
}

/* Pow 12 -> 7. Same floating types: nothing. A constant integer exponent
 * that a float/double base holds exactly: ad_pow_const_exp. Otherwise,
 * when either side is floating: base and exponent cast to double, Pow,
 * cast back to the base type. The reference computes np.power(a,
 * b).astype(a.dtype), where numpy promotes a float with a 32/64-bit
 * integer, or a float with a double, to double; ONNX Runtime's
 * std::pow(float, int) promotes to double too, and the evaluator computes
 * every floating power in double. An integer base with an integer
 * exponent is refused: numpy's integer power wraps on overflow, and a
 * power in double is exact only below 2^53. */
static int ad_pow_down(AdCtx *c)
{
    IrValue *e = ad_in(c, 1);
    int32_t ta = ad_elem(ad_in(c, 0)), tb = ad_elem(e);
    if (!ta || !tb)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "Pow-7 needs base and exponent of one type (unknown here)");
    if (ta == tb && ad_is_float(ta))
        return 0;
    bool flt = ad_is_float(ta) || ad_is_float(tb);
    if (!ad_pow_type(ta) || !ad_pow_type(tb) || !flt)
        return ad_refuse(c, DG_TYPE, "Pow-7 takes floating types only; %s to the power "
                         "%s has no exact floating form (integer powers wrap on "
                         "overflow)", ir_dtype_name(ta), ir_dtype_name(tb));
    if ((ta == IR_FLOAT || ta == IR_DOUBLE) && ad_is_int(tb) && ad_const(e)) {
        int r = ad_pow_const_exp(c);
        if (r <= 0)
            return r;
    }
    return ad_widen(c, ta, IR_DOUBLE, 3u, 1u);
}

/* ---- Add Sub Mul Div (13 <-> 14) ---------------------------------------- */

/* Version 14 added int8, int16, uint8 and uint16. Down: computed in 32
 * bits and cast back. Unsigned values go through uint32, where Add, Sub
 * and Mul are exact modulo 2^32, so their low 16 or 8 bits, which the
 * Cast back keeps, are the wrapped result in the narrow type (numpy's and
 * the reference's); Div of two values below 2^16 is exact. Signed values
 * go through int32: sums, differences and products of 16-bit values
 * (|a * b| <= 2^30) and quotients (truncated toward zero, as the spec's
 * integer Div) are exact, and the Cast back keeps their two's complement
 * low bits, which is how the narrow type wraps (-128 / -1 gives -128, as
 * int8 arithmetic does). Other types need nothing. */
static int ad_arith_down(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (t == IR_UINT8 || t == IR_UINT16)
        return ad_widen(c, t, IR_UINT32, 3u, 1u);
    if (t == IR_INT8 || t == IR_INT16)
        return ad_widen(c, t, IR_INT32, 3u, 1u);
    return 0;
}

/* ---- Clip ------------------------------------------------------------- */

/* Clip-1 -> 6: consumed_inputs went away, and min/max got defaults
 * -/+3.402823e+38 where Clip-1 had none. An absent bound of Clip-1 clips
 * nothing (the evaluator's reading; Clip-1's text speaks of
 * numeric_limits lowest()/max(), which differs only for inputs beyond
 * +-FLT_MAX). Up: drop consumed_inputs; make an absent bound -/+inf so
 * that it still clips nothing. */
static int ad_clip_1_6(AdCtx *c)
{
    ad_drop_attr(c, "consumed_inputs");
    if (!ad_attr(c, "min"))
        ad_set_attr_f(c, c->n, "min", -INFINITY);
    if (!ad_attr(c, "max"))
        ad_set_attr_f(c, c->n, "max", INFINITY);
    return 0;
}

/* Down 6 -> 1: the defaults of Clip-6 become explicit attributes. */
static int ad_clip_6_1(AdCtx *c)
{
    ad_pin_defaults(c);
    return 0;
}

/* Clip-6 -> 11: the float attributes min/max (defaults -/+3.402823e+38)
 * became optional inputs of the input's type. Clip-6 compares each
 * element with the float bound and stores the bound rounded to the
 * element type; a constant of the element type holding the bound rounded
 * to nearest clips the same (for float16 an element between the float
 * bound and its rounding cannot exist, it would be nearer). The bounds
 * are always written, since an absent input of Clip-11 clips nothing,
 * unlike Clip-6's defaults. */
static int ad_clip_6_11(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "Clip-11's bounds must have the input's type (unknown here)");
    static const char *const names[2] = {"min", "max"};
    for (size_t i = 0; i < 2; i++) {
        IrValue *v = ad_const_scalar(c, t, (double)ad_attr_f(c, names[i]));
        if (!v)
            return -1;
        ad_set_input(c, i + 1, v);
        ad_drop_attr(c, names[i]);
    }
    return 0;
}

/* Clip-11 as Min(Max(x, min), max): numpy's clip, which the reference
 * implementation calls, so NaN in x stays NaN (Max and Min propagate it)
 * and min > max gives max. Each bound is one element (Clip-11 says a
 * scalar): Max/Min-8 broadcast it onto x, and below opset 8 their own
 * adapter tiles it to x's shape. A bound of rank above x's would widen
 * the output's shape, so its shape must be known: dims of 1, rank at most
 * x's. An absent bound clips nothing and is left out. */
static int ad_clip_minmax(AdCtx *c)
{
    static const char *const names[2] = {"min", "max"};
    IrValue *x = ad_in(c, 0), *y = x;
    for (size_t i = 0; i < 2; i++) {
        IrValue *b = ad_in(c, i + 1);
        const IrShape *s = ad_shape(b);
        if (!b)
            continue;
        if (!s || (s->rank > 0 && ad_rank(x) < 0))
            return ad_refuse(c, DG_SHAPE_UNKNOWN, "%s '%s' must be known to be one "
                             "element of rank at most the input's to become an "
                             "input of %s", names[i], b->name, i == 0 ? "Max" : "Min");
        if (s->rank > (size_t)ad_rank(x) && s->rank > 0)
            return ad_refuse(c, DG_SHAPE, "%s '%s' has rank %zu, above the input's: "
                             "%s would widen the output", names[i], b->name, s->rank,
                             i == 0 ? "Max" : "Min");
        for (size_t k = 0; k < s->rank; k++)
            if (!ad_dim_is(&s->dims[k], 1))
                return ad_refuse(c, DG_SHAPE, "%s '%s' is not one element, which "
                                 "Clip-11 requires", names[i], b->name);
        y = ad_op2(c, i == 0 ? "Max" : "Min", y, b);
    }
    return ad_replace_by(c, y == x ? ad_op1(c, "Identity", x) : y);
}

/* Clip-11 -> 6: a bound that is a constant of one element whose value a
 * float attribute holds exactly becomes the attribute (a double bound is
 * compared as a double). An absent bound of Clip-11 clips nothing (the
 * reference's and the evaluator's reading): -/+inf. A bound known only at
 * run time, or one no float holds, gives the Max/Min form instead. */
static int ad_clip_11_6(AdCtx *c)
{
    static const char *const names[2] = {"min", "max"};
    float set[2];
    for (size_t i = 0; i < 2; i++) {
        IrValue *v = ad_in(c, i + 1);
        set[i] = i == 0 ? -INFINITY : INFINITY;
        if (!v)
            continue;
        double *d;
        size_t n;
        if (!ad_const_floats(v, &d, &n))
            return ad_clip_minmax(c);
        double x = n == 1 ? d[0] : 0;
        free(d);
        if (n != 1)
            return ad_refuse(c, DG_ATTRIBUTE, "%s has %zu elements, not one",
                             names[i], n);
        if (!isnan(x) && (double)(float)x != x)
            return ad_clip_minmax(c);
        set[i] = (float)x;
    }
    for (size_t i = 0; i < 2; i++) {
        IrValue *v = ad_in(c, i + 1);
        ad_set_attr_f(c, c->n, names[i], set[i]);
        if (v) {
            ir_node_set_input(c->n, i + 1, NULL);
            ir_value_drop_if_unused(v);
        }
    }
    ad_trim_inputs(c->n);
    return 0;
}

/* Clip-12 -> 11: version 12 added the integer types. Integers of up to
 * 16 bits convert to float exactly, up to 32 bits to double, and the
 * clipped value is one of x, min or max, so Clip in that type cast back
 * is exact (the Clip-11 built here goes on down by its own adapters;
 * float where it is exact, since ONNX Runtime's older Clip/Max/Min
 * kernels take float only). 64-bit integers do not fit a
 * double: Min(Max(x, min), max) built at opset 12, where Max/Min take
 * them; their adapters lower them exactly (compared in 32-bit halves). */
static int ad_clip_12_11(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (!ad_is_int(t))
        return 0;
    if (ir_dtype_bits(t) <= 32)
        return ad_widen(c, t, ir_dtype_bits(t) <= 16 ? IR_FLOAT : IR_DOUBLE, 7u, 1u);
    c->build_opset = 12;
    return ad_clip_minmax(c);
}

/* ---- integer comparisons below the versions that take integers ------- */

/* A 64-bit integer v split as hi = v / 2^32 (Div truncates) and lo = v -
 * hi * 2^32, both cast to double (|hi| <= 2^32 and |lo| < 2^32: exact).
 * hi never decreases as v grows, and v - w = (hi_v - hi_w) * 2^32 +
 * (lo_v - lo_w), so v < w exactly when hi_v < hi_w, or hi_v = hi_w and
 * lo_v < lo_w. */
static void ad_split64(AdCtx *c, IrValue *v, int32_t t, IrValue **hi, IrValue **lo)
{
    IrValue *k = ad_const_int(c, t, INT64_C(1) << 32);
    IrValue *h = ad_op2(c, "Div", v, k);
    *lo = ad_cast(c, ad_op2(c, "Sub", v, ad_op2(c, "Mul", h, k)), IR_DOUBLE);
    *hi = ad_cast(c, h, IR_DOUBLE);
}

/* a < b for integers a, b of type t with Less on doubles only (Less and
 * Greater take integers from opset 9): up to 32 bits both convert to
 * double exactly; 64-bit values are compared by their exact (hi, lo)
 * halves, lexicographically. Broadcasting is the same: every step
 * broadcasts as Less does. */
static IrValue *ad_int_less(AdCtx *c, IrValue *a, IrValue *b, int32_t t)
{
    if (ir_dtype_bits(t) <= 32)
        return ad_op2(c, "Less", ad_cast(c, a, IR_DOUBLE), ad_cast(c, b, IR_DOUBLE));
    IrValue *ha, *la, *hb, *lb;
    ad_split64(c, a, t, &ha, &la);
    ad_split64(c, b, t, &hb, &lb);
    IrValue *lt = ad_op2(c, "Less", ha, hb), *gt = ad_op2(c, "Less", hb, ha);
    IrValue *eq = ad_op1(c, "Not", ad_op2(c, "Or", lt, gt));
    return ad_op2(c, "Or", lt, ad_op2(c, "And", eq, ad_op2(c, "Less", la, lb)));
}

/* Less / Greater 9 -> 7: version 9 added the integer types. Floating
 * inputs need nothing; integers are compared exactly by ad_int_less
 * (Greater(a, b) is Less(b, a)). */
static int ad_cmp_down(AdCtx *c, bool greater)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    int32_t t = ad_elem(a);
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the compared type is unknown");
    if (!ad_is_int(t))
        return 0;
    return ad_replace_by(c, greater ? ad_int_less(c, b, a, t) : ad_int_less(c, a, b, t));
}

static int ad_less_down(AdCtx *c)
{
    return ad_cmp_down(c, false);
}

static int ad_greater_down(AdCtx *c)
{
    return ad_cmp_down(c, true);
}

/* Equal of the integer types Equal-7 lacks: 8- and 16-bit values widen
 * to int32, uint32 to int64 (Cast is exact, and equal values stay equal,
 * different ones different); uint64 compares its two exact 32-bit halves
 * (ad_split64; the halves are cast to int64, exactly). */
static IrValue *ad_int_equal(AdCtx *c, IrValue *a, IrValue *b, int32_t t)
{
    if (t == IR_UINT64) {
        IrValue *ha, *la, *hb, *lb;
        ad_split64(c, a, t, &ha, &la);
        ad_split64(c, b, t, &hb, &lb);
        return ad_op2(c, "And", ad_op2(c, "Equal", ad_cast(c, ha, IR_INT64),
                                       ad_cast(c, hb, IR_INT64)),
                      ad_op2(c, "Equal", ad_cast(c, la, IR_INT64),
                             ad_cast(c, lb, IR_INT64)));
    }
    int32_t w = t == IR_UINT32 ? IR_INT64 : IR_INT32;
    return ad_op2(c, "Equal", ad_cast(c, a, w), ad_cast(c, b, w));
}

/* ---- Max / Min (8 <-> 12) --------------------------------------------- */

/* Max-12 / Min-12 added the integer types. Down: floating inputs need
 * nothing. Integers up to 32 bits: every input cast to double (exact),
 * Max/Min of those (the same broadcasting), and the result, one of the
 * inputs' values, cast back exactly. 64-bit integers: a chain m =
 * Where(Less(m, x), x, m) (Less(x, m) for Min), built at opset 11 where
 * Where and Less take them; below, their own adapters lower them. */
static int ad_minmax_down(AdCtx *c, bool is_max)
{
    size_t n = c->n->n_in;
    int32_t t = ad_elem(ad_in(c, 0));
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the input type is unknown");
    if (!ad_is_int(t) || n == 0)
        return 0;
    if (ir_dtype_bits(t) > 32) {
        IrValue *m = ad_in(c, 0);
        if (n == 1)
            return ad_replace_by(c, ad_op1(c, "Identity", m));
        for (size_t i = 1; i < n; i++) {
            IrValue *x = ad_in(c, i);
            IrValue *lt = is_max ? ad_op2(c, "Less", m, x) : ad_op2(c, "Less", x, m);
            IrValue *in[3] = {lt, x, m};
            IrNode *k = lt && x && m ? ad_node(c, c->n, "Where", 3, in, 1) : NULL;
            m = k ? k->out[0] : NULL;
        }
        return ad_replace_by(c, m);
    }
    IrValue **in = mem_array(n, sizeof *in);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = ok && (in[i] = ad_cast(c, ad_in(c, i), IR_DOUBLE)) != NULL;
    IrNode *k = ok ? ad_node(c, c->n, is_max ? "Max" : "Min", n, in, 1) : NULL;
    free(in);
    return ad_replace_by(c, k ? ad_cast(c, k->out[0], t) : NULL);
}

static int ad_max_down(AdCtx *c)
{
    return ad_minmax_down(c, true);
}

static int ad_min_down(AdCtx *c)
{
    return ad_minmax_down(c, false);
}

/* ---- Equal (7 <-> 11) -------------------------------------------------- */

/* Equal-11 added the floating and more integer types. Down, for a
 * floating input: a == b is "neither a < b nor a > b, and neither is
 * NaN" (IEEE: -0 == +0, inf == inf, NaN equals nothing), with Less,
 * Greater (floating since opset 1) and IsNaN (9; below, IsNaN's own
 * expansion). The integer types Equal-7 lacks: ad_int_equal. Others
 * need no change (the driver checks them). */
static int ad_equal_down(AdCtx *c)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    int32_t t = ad_elem(a);
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "Equal-7 lacks the floating types (the type is unknown here)");
    if (ad_is_int(t) && !ad_has_type(c, "Equal", t))
        return ad_replace_by(c, ad_int_equal(c, a, b, t));
    if (!ad_is_float(t))
        return 0;
    IrValue *ord = ad_op2(c, "Or", ad_op2(c, "Less", a, b), ad_op2(c, "Greater", a, b));
    IrValue *nan = ad_op2(c, "Or", ad_op1(c, "IsNaN", a), ad_op1(c, "IsNaN", b));
    IrValue *any = ad_op2(c, "Or", ord, nan);
    if (!any)
        return -1;
    IrNode *k = ad_node(c, c->n, "Not", 1, &any, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* ---- expansions below an op's first version ------------------------- */

/* GreaterOrEqual / LessOrEqual (12): a >= b is (a > b) or (a == b), both
 * false for NaN as GreaterOrEqual is; built at opset 11 (Equal takes the
 * floating types from 11; below, Equal's own adapter expands it). */
static int ad_cmp_or_equal(AdCtx *c, const char *strict)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    IrValue *in[2] = {ad_op2(c, strict, a, b), ad_op2(c, "Equal", a, b)};
    if (!in[0] || !in[1])
        return -1;
    IrNode *k = ad_node(c, c->n, "Or", 2, in, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

static int ad_ge_gone(AdCtx *c)
{
    return ad_cmp_or_equal(c, "Greater");
}

static int ad_le_gone(AdCtx *c)
{
    return ad_cmp_or_equal(c, "Less");
}

/* The largest finite value of a floating type. */
static double ad_max_finite(int32_t t)
{
    return t == IR_DOUBLE ? DBL_MAX : t == IR_FLOAT16 ? 65504.0 : (double)FLT_MAX;
}

/* IsInf (10): x is +inf exactly when x > the largest finite value of its
 * type, -inf when x < its negation (NaN compares false, as IsInf gives
 * false). With neither direction asked for, the output is all false:
 * x < -inf, which nothing is. */
static int ad_isinf_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    if (!ad_is_float(t))
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "IsInf's expansion needs a known floating input type");
    bool pos = ad_attr_i(c, "detect_positive") != 0;
    bool neg = ad_attr_i(c, "detect_negative") != 0;
    double m = ad_max_finite(t);
    IrValue *p = NULL, *q = NULL;
    if (pos)
        p = ad_op2(c, "Greater", x, ad_const_scalar(c, t, m));
    if (neg)
        q = ad_op2(c, "Less", x, ad_const_scalar(c, t, -m));
    if (!pos && !neg)
        q = ad_op2(c, "Less", x, ad_const_scalar(c, t, -INFINITY));
    if ((pos && !p) || (!pos && !q) || (neg && !q))
        return -1;
    IrNode *k;
    if (p && q) {
        IrValue *in[2] = {p, q};
        k = ad_node(c, c->n, "Or", 2, in, 1);
        if (!k)
            return -1;
    } else {
        k = (p ? p : q)->producer;
    }
    ad_replace(c, k);
    return 0;
}

/* IsInf 20 -> 10: version 20 added float16 and bfloat16, whose values
 * (infinities included, NaN staying NaN) float holds exactly. */
static int ad_isinf_down(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (t != IR_FLOAT16 && t != IR_BFLOAT16)
        return 0;
    return ad_widen(c, t, IR_FLOAT, 1u, 0u);
}

/* BitwiseNot (18): for an unsigned type ~x = MAX - x, for a signed one
 * ~x = -1 - x (two's complement); neither subtraction can overflow. */
static int ad_bitwisenot_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    if (!ad_is_unsigned(t) && !ad_is_signed_int(t))
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "BitwiseNot's expansion needs a known integer input type");
    IrValue *ones = ad_const_bits(c, t, ~UINT64_C(0));
    IrValue *in[2] = {ones, x};
    if (!ones)
        return -1;
    IrNode *k = ad_node(c, c->n, "Sub", 2, in, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* BitCast (26): the same type is the identity; bool to uint8/int8 keeps
 * the byte 0 or 1, which Cast gives too. Between integers of one width
 * (int8 <-> uint8, ..., int64 <-> uint64) the bits are the value modulo
 * 2^bits, which is what Cast gives for a value out of the target's
 * range: Cast's text keeps the low bits in two's complement ("200 as
 * int16 casts to -56 as int8"), and before that text the reference's
 * astype did the same. Other pairs reinterpret floating bits, which no
 * arithmetic can read or build (NaN payloads, for one). */
static int ad_bitcast_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    int64_t to = ad_attr_i(c, "to");
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "BitCast's input type is unknown");
    IrNode *k;
    if (to == t) {
        k = ad_node(c, c->n, "Identity", 1, &x, 1);
    } else if ((t == IR_BOOL && (to == IR_UINT8 || to == IR_INT8)) ||
               (ad_is_int(t) && ad_is_int((int32_t)to) &&
                ir_dtype_bits(t) == ir_dtype_bits((int32_t)to))) {
        IrValue *y = ad_cast(c, x, (int32_t)to);
        k = y ? y->producer : NULL;
    } else {
        return ad_refuse(c, DG_SEMANTICS,
                         "no op before opset 26 reinterprets the bits of %s as %s",
                         ir_dtype_name(t), ir_dtype_name((int32_t)to));
    }
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* BitShift of unsigned x by n known only at run time: k = min(n, cap) in
 * float (n below 2^24 converts exactly, a larger n stays above cap),
 * p = 2^k (a power of 2 up to 2^63: exact in float and in uint64), and
 * x * p or x / p in uint64. Up to 32 bits cap is the width: nothing
 * overflows (x < 2^32, p <= 2^32), the Cast back keeps the low bits,
 * which are the shifted value, and a shift by the width gives 0. For
 * uint64 cap is 63 (2^64 fits no type): uint64 Mul wraps modulo 2^64,
 * which drops the shifted-out bits, and the result is multiplied by
 * (n < 64) so that a shift by 64 or more gives 0. That 0 is numpy's (the
 * reference's) and the evaluator's result. Float rather than double:
 * ONNX Runtime's Min-6 is float only. */
static int ad_bitshift_runtime(AdCtx *c, IrValue *x, IrValue *n, int32_t t, bool left)
{
    int bits = ir_dtype_bits(t);
    bool wide = bits == 64;
    IrValue *nf = ad_cast(c, n, IR_FLOAT);
    IrValue *k = ad_op2(c, "Min", nf, ad_const_scalar(c, IR_FLOAT, wide ? 63 : bits));
    IrValue *p = ad_cast(c, ad_op2(c, "Pow", ad_const_scalar(c, IR_FLOAT, 2.0), k),
                         IR_UINT64);
    IrValue *y = ad_op2(c, left ? "Mul" : "Div", ad_cast(c, x, IR_UINT64), p);
    if (wide) {
        IrValue *in = ad_op2(c, "Less", nf, ad_const_scalar(c, IR_FLOAT, 64));
        y = ad_op2(c, "Mul", y, ad_cast(c, in, IR_UINT64));
    }
    return ad_replace_by(c, ad_cast(c, y, t));
}

/* BitShift (11) with a constant shift amount n (0 <= n < bits): x << n is
 * x * 2^n and x >> n is x / 2^n (unsigned Mul wraps modulo 2^bits, which
 * is dropping the high bits; unsigned Div truncates, which is the right
 * shift). The constant 2^n keeps n's shape, so broadcasting is the
 * same. A shift known only at run time, by the width or more, or of a
 * type Mul/Div lack at the target: ad_bitshift_runtime. */
static int ad_bitshift_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *y = ad_in(c, 1);
    int32_t t = ad_elem(x);
    char buf[16];
    const char *dir = ad_attr_s_or(c, "direction", "", buf, sizeof buf);
    bool left = strcmp(dir, "LEFT") == 0;
    if (!left && strcmp(dir, "RIGHT") != 0)
        return ad_refuse(c, DG_ATTRIBUTE, "direction '%s' is not LEFT or RIGHT", dir);
    if (!ad_is_unsigned(t))
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "BitShift's expansion needs a known unsigned input type");
    const IrTensor *ct = ad_const(y);
    int64_t *v;
    size_t n;
    if (!ct || !ad_has_type(c, left ? "Mul" : "Div", t) || !ad_const_ints(y, &v, &n))
        return ad_bitshift_runtime(c, x, y, t, left);
    int w = ir_dtype_bits(t) / 8, bits = 8 * w;
    uint8_t *raw = mem_array(n ? n * (size_t)w : 1, 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t s = (uint64_t)v[i];
        if (s >= (uint64_t)bits) {
            free(v);
            free(raw);
            return ad_bitshift_runtime(c, x, y, t, left);
        }
        uint64_t p = UINT64_C(1) << s;
        for (int b = 0; b < w; b++)
            raw[i * (size_t)w + (size_t)b] = (uint8_t)(p >> (8 * b));
    }
    free(v);
    IrValue *pw = ad_const_tensor(c, t, ct->ndims, ct->dims, raw, n * (size_t)w);
    free(raw);
    if (!pw)
        return -1;
    IrValue *in[2] = {x, pw};
    IrNode *k = ad_node(c, c->n, left ? "Mul" : "Div", 2, in, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* The C remainder of signed integers a, b of type t (int32 or int64):
 * r = a - b2 * (a / b2), where Div truncates toward zero (the spec's
 * integer Div) and b2 is b with -1 replaced by 1: a % -1 = a % 1 = 0,
 * and a / -1 overflows for the type's minimum. |b2 * (a / b2)| <= |a|
 * and the result lies strictly between -|b| and |b|: nothing overflows. */
static IrValue *ad_cmod(AdCtx *c, IrValue *a, IrValue *b, int32_t t)
{
    IrValue *m1 = ad_cast(c, ad_op2(c, "Equal", b, ad_const_int(c, t, -1)), t);
    IrValue *b2 = ad_op2(c, "Add", b, ad_op2(c, "Mul", m1, ad_const_int(c, t, 2)));
    return ad_op2(c, "Sub", a, ad_op2(c, "Mul", b2, ad_op2(c, "Div", a, b2)));
}

/* Whether integer x is negative, as bool: x cast to double keeps its sign
 * and zero-ness for every integer (Less takes integers from opset 9 only). */
static IrValue *ad_negative(AdCtx *c, IrValue *x)
{
    return ad_op2(c, "Less", ad_cast(c, x, IR_DOUBLE),
                  ad_const_scalar(c, IR_DOUBLE, 0));
}

/* Python's remainder from the C one: r + b where r != 0 and r, b differ
 * in sign (|r| < |b|, opposite signs: no overflow), else r; the select is
 * r + b * flag with flag cast to t (b * 1 = b, b * 0 = 0). */
static IrValue *ad_pymod(AdCtx *c, IrValue *r, IrValue *b, int32_t t)
{
    IrValue *nz = ad_op1(c, "Not", ad_op2(c, "Equal", r, ad_const_int(c, t, 0)));
    IrValue *flip = ad_op2(c, "Xor", ad_negative(c, r), ad_negative(c, b));
    IrValue *fix = ad_cast(c, ad_op2(c, "And", nz, flip), t);
    return ad_op2(c, "Add", r, ad_op2(c, "Mul", b, fix));
}

/* Mod (10) of integers. Div, Mul, Sub and Equal take 32- and 64-bit
 * integers before opset 10 (Equal the signed ones), so 8- and 16-bit
 * values are widened by Cast (exact) to int32 / uint32 and the result
 * (smaller in magnitude than the divisor) cast back exactly. Unsigned:
 * a - b * (a / b), fmod makes no difference. Signed: the C remainder
 * (fmod=1), turned into Python's (fmod=0, the divisor's sign). A zero
 * divisor is an error for Mod and Div alike. Floating values are
 * refused: a - b * trunc(a / b) rounds, and no older op has fmod. */
static int ad_mod_gone(AdCtx *c)
{
    IrValue *a = ad_in(c, 0), *b = ad_in(c, 1);
    int32_t t = ad_elem(a);
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "Mod's input type is unknown");
    if (!ad_is_unsigned(t) && !ad_is_signed_int(t))
        return ad_refuse(c, DG_SEMANTICS, "Mod of %s has no exact older form "
                         "(a - b*trunc(a/b) rounds)", ir_dtype_name(t));
    int32_t w = t == IR_INT8 || t == IR_INT16 ? IR_INT32
              : t == IR_UINT8 || t == IR_UINT16 ? IR_UINT32 : t;
    if (ad_need_type(c, "Div", w) < 0)
        return -1;
    IrValue *aw = ad_cast(c, a, w), *bw = ad_cast(c, b, w), *r;
    if (ad_is_unsigned(w)) {
        r = ad_op2(c, "Sub", aw, ad_op2(c, "Mul", bw, ad_op2(c, "Div", aw, bw)));
    } else {
        r = ad_cmod(c, aw, bw, w);
        if (ad_attr_i(c, "fmod") == 0)
            r = ad_pymod(c, r, bw, w);
    }
    return ad_replace_by(c, ad_cast(c, r, t));
}

/* x (dims d, rank r, n elements) as a 1-D tensor of n elements. */
static IrValue *ad_flat(AdCtx *c, IrValue *x, size_t r, int64_t n)
{
    return r == 1 ? x : ad_reshape(c, x, 1, &n);
}

/* Where (9) by an index table, for any value type and static shapes: the
 * flattened x and y are concatenated into one table of Nx + Ny elements,
 * and output element p is the table's element cond[p] ? ix[p] : Nx + iy[p]
 * (ix, iy: the flat indices of x's and y's elements broadcast to p,
 * constants), computed as base[p] + c[p] * delta[p] on int32 with c[p] =
 * 0 or 1 (base = Nx + iy, delta = ix - base; the values stay below 2^21).
 * Gather copies elements, so every value (NaN, infinities, -0, strings)
 * arrives unchanged; the output has the broadcast shape. Empty tensors
 * are refused: a 0 in Reshape's shape copies a dim before opset 14. */
static int ad_where_select(AdCtx *c)
{
    IrValue *in[3] = {ad_in(c, 0), ad_in(c, 1), ad_in(c, 2)};
    int64_t d[3][AD_MAX_RANK], od[AD_MAX_RANK], n[3];
    size_t r[3], ro = 0;
    for (size_t i = 0; i < 3; i++) {
        int ri = ad_static(in[i], d[i], AD_MAX_RANK);
        if (ri < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN, "the select needs every input's shape "
                             "before opset 9 (input %zu's is not fully known)", i);
        r[i] = (size_t)ri;
    }
    for (size_t i = 0; i < 3; i++)
        if (!ad_bcast_into(od, &ro, d[i], r[i]))
            return ad_refuse(c, DG_SHAPE, "the inputs do not broadcast");
    int64_t no = ad_prod(od, 0, ro, AD_SELECT_CAP);
    for (size_t i = 0; i < 3; i++)
        n[i] = ad_prod(d[i], 0, r[i], AD_SELECT_CAP);
    if (no <= 0 || n[0] <= 0 || n[1] <= 0 || n[2] <= 0)
        return ad_refuse(c, DG_SHAPE, "the select is built only for non-empty tensors "
                         "of at most %lld elements", (long long)AD_SELECT_CAP);
    int64_t *map = mem_array((size_t)no * 4, sizeof *map);
    int64_t *ix = map, *iy = map + no, *base = map + 2 * no, *delta = map + 3 * no;
    ad_bcast_map(od, ro, no, d[1], r[1], ix);
    ad_bcast_map(od, ro, no, d[2], r[2], iy);
    for (int64_t p = 0; p < no; p++) {
        base[p] = n[1] + iy[p];
        delta[p] = ix[p] - base[p];
    }
    IrValue *tab[2] = {ad_flat(c, in[1], r[1], n[1]), ad_flat(c, in[2], r[2], n[2])};
    IrValue *cv = ad_flat(c, ad_cast(c, in[0], IR_INT32), r[0], n[0]);
    bool same = r[0] == ro && !memcmp(d[0], od, ro * sizeof *od);
    if (!same) {
        ad_bcast_map(od, ro, no, d[0], r[0], ix);
        cv = ad_gather(c, cv, ad_const_int_tensor(c, IR_INT32, 1, &no, ix, (size_t)no), 0);
    }
    IrValue *bv = ad_const_int_tensor(c, IR_INT32, 1, &no, base, (size_t)no);
    IrValue *dv = ad_const_int_tensor(c, IR_INT32, 1, &no, delta, (size_t)no);
    free(map);
    IrValue *idx = ad_op2(c, "Add", bv, ad_op2(c, "Mul", cv, dv));
    IrValue *z = ad_gather(c, ad_concat(c, tab, 2, 0), idx, 0);
    return ad_replace_by(c, ro == 1 ? z : ad_reshape(c, z, ro, od));
}

/* Where (9) below opset 9. Bool values: (c and x) or (not c and y).
 * Integer values whose type Mul has: x*c + y*(not c) with c cast to the
 * value type (x*1 + y*0 = x: no overflow, integers are exact); the
 * broadcast shapes are the same. Every other type (floating: inf*0 and
 * NaN*0 are NaN and -0 + 0 is +0, so no arithmetic select is exact; the
 * narrow integers, strings) goes through the index-table select, which
 * needs static shapes. */
static int ad_where_gone(AdCtx *c)
{
    IrValue *cond = ad_in(c, 0), *x = ad_in(c, 1), *y = ad_in(c, 2);
    int32_t t = ad_elem(x);
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "Where's value type is unknown");
    bool is_int = (ad_is_unsigned(t) || ad_is_signed_int(t)) && ad_has_type(c, "Mul", t);
    if (t != IR_BOOL && !is_int)
        return ad_where_select(c);
    IrValue *nc = ad_op1(c, "Not", cond);
    IrValue *in[2];
    if (is_int) {
        in[0] = ad_op2(c, "Mul", x, ad_cast(c, cond, t));
        in[1] = ad_op2(c, "Mul", y, ad_cast(c, nc, t));
    } else {
        in[0] = ad_op2(c, "And", cond, x);
        in[1] = ad_op2(c, "And", nc, y);
    }
    return ad_replace_by(c, ad_op2(c, is_int ? "Add" : "Or", in[0], in[1]));
}

/* Round (11), half to even, as Round(|x|) with x's sign: Round is odd
 * symmetric, and working on a = |x| >= +0 keeps every zero positive until
 * the sign is applied. With f = Floor(a), c = Ceil(a), compare 2a with
 * f + c (both exact: doubling is exact, and f + c = 2f + 1 is below
 * 2^mantissa wherever a is not an integer; for integers and inf both are
 * a + a, overflowing alike). 2a > f + c, or a tie with f odd
 * (Floor(f/2) < f/2), picks c, otherwise f. Without a select op (Where
 * is 9), the pick is Max(f, Min(c, f + p * MAX)) with p = 0 or 1: f for
 * p = 0, c for p = 1 (c <= f + 1), a for a = inf or an integer (f = c),
 * NaN for NaN. The sign s = -1 when x < 0 or 1/x < 0 (x = -0), else 1,
 * and Round(x) = r * s exactly (-0 for r = +0 and a negative x). Uses
 * Cast (bool to float), so below opset 9 Cast's adapters lower it. */
static int ad_round_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    if (!ad_is_float(t))
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "Round's expansion needs a known floating input type");
    IrValue *a = ad_op1(c, "Abs", x);
    IrValue *f = ad_op1(c, "Floor", a), *cl = ad_op1(c, "Ceil", a);
    IrValue *a2 = ad_op2(c, "Add", a, a), *s2 = ad_op2(c, "Add", f, cl);
    IrValue *lt = ad_op2(c, "Less", a2, s2), *gt = ad_op2(c, "Greater", a2, s2);
    IrValue *tie = ad_op1(c, "Not", ad_op2(c, "Or", lt, gt));
    IrValue *half = ad_op2(c, "Mul", f, ad_const_scalar(c, t, 0.5));
    IrValue *odd = ad_op2(c, "Less", ad_op1(c, "Floor", half), half);
    IrValue *pick = ad_op2(c, "Or", gt, ad_op2(c, "And", tie, odd));
    IrValue *far = ad_op2(c, "Mul", ad_cast(c, pick, t),
                          ad_const_scalar(c, t, ad_max_finite(t)));
    IrValue *r = ad_op2(c, "Max", f, ad_op2(c, "Min", cl, ad_op2(c, "Add", f, far)));
    IrValue *zero = ad_const_scalar(c, t, 0);
    IrValue *neg = ad_op2(c, "Or", ad_op2(c, "Less", x, zero),
                          ad_op2(c, "Less", ad_op1(c, "Reciprocal", x), zero));
    IrValue *sg = ad_op2(c, "Add", ad_op2(c, "Mul", ad_cast(c, neg, t),
                                          ad_const_scalar(c, t, -2)),
                         ad_const_scalar(c, t, 1));
    IrValue *in[2] = {r, sg};
    if (!r || !sg)
        return -1;
    IrNode *k = ad_node(c, c->n, "Mul", 2, in, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* IsNaN (9): NaN is the only value for which neither x < +inf nor
 * x > -inf holds (+inf > -inf, -inf < +inf, every finite value both).
 * Less and Greater take the floating types from opset 1. */
static int ad_isnan_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    if (!ad_is_float(t))
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "IsNaN's expansion needs a known floating input type");
    IrValue *lt = ad_op2(c, "Less", x, ad_const_scalar(c, t, INFINITY));
    IrValue *gt = ad_op2(c, "Greater", x, ad_const_scalar(c, t, -INFINITY));
    IrValue *any = ad_op2(c, "Or", lt, gt);
    if (!any)
        return -1;
    IrNode *k = ad_node(c, c->n, "Not", 1, &any, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* Sign (9). Floating x: x * M * M (M the largest finite value) is at
 * least 1 in magnitude for every nonzero x, even the smallest subnormal,
 * keeps the sign, and stays +-0 for +-0 and NaN for NaN; Clip to [-1, 1]
 * then gives +-1, and adding +0 turns -0 into the 0 Sign gives (NaN
 * stays NaN). Integer x: converted to float, a nonzero value keeps its
 * sign and is at least 1 in magnitude, so Clip to [-1, 1] and converting
 * back gives -1, 0 or 1 exactly. */
static int ad_sign_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    IrNode *k;
    if (ad_is_float(t)) {
        double m = ad_max_finite(t);
        IrValue *big = ad_op2(c, "Mul", ad_op2(c, "Mul", x, ad_const_scalar(c, t, m)),
                              ad_const_scalar(c, t, m));
        IrValue *in[2] = {ad_clip(c, big, t, -1, 1), ad_const_scalar(c, t, 0)};
        if (!in[0] || !in[1])
            return -1;
        k = ad_node(c, c->n, "Add", 2, in, 1);
    } else if (ad_is_unsigned(t) || ad_is_signed_int(t)) {
        IrValue *y = ad_cast(c, ad_clip(c, ad_cast(c, x, IR_FLOAT), IR_FLOAT, -1, 1), t);
        k = y ? y->producer : NULL;
    } else {
        return ad_refuse(c, t ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "Sign's expansion needs a known numeric input type");
    }
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* ---- the table -------------------------------------------------------- */

/* An op whose opset-1 version differs from 6 only by consumed_inputs. */
#define AD_CONSUMED(op)                                        \
    AD_UP(op, 1, 6, AD_ATTRS, ad_drop_consumed),               \
    AD_DOWN(op, 1, 6, AD_ATTRS, ad_nothing)

/* A binary op's legacy broadcasting, versions a (<= 6) <-> b (7). */
#define AD_BCAST(op, a, b)                                     \
    AD_UP(op, a, b, AD_SEMANTIC, ad_bcast_up),                 \
    AD_DOWN(op, a, b, AD_SEMANTIC, ad_bcast_down)

/* ---- Cast, CastLike ------------------------------------------------- */

/* Cast 1 -> 6: `to` named the type as a string ("FLOAT"); from 6 it is the
 * TensorProto.DataType number. The conversion itself is the same. */
static int ad_cast_1_6(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "to");
    if (!a || a->ref_attr_name)
        return ad_refuse(c, DG_ATTRIBUTE, "'to' is not a type name given here");
    if (!a->has_s)
        return 0;
    int32_t d = os_dtype_from_name((const char *)a->s.data, a->s.len);
    if (!d)
        return ad_refuse(c, DG_ATTRIBUTE, "'to' names no known type");
    ad_set_attr_i(c, c->n, "to", d);
    return 0;
}

/* Cast 6 -> 1: the type number becomes its DataType name. */
static int ad_cast_6_1(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "to");
    if (!a || a->ref_attr_name || !a->has_i || a->i <= 0 || a->i > INT32_MAX ||
        !ir_dtype_name((int32_t)a->i))
        return ad_refuse(c, DG_ATTRIBUTE, "'to' is not a known type number");
    ad_set_attr_s(c, c->n, "to", ir_dtype_name((int32_t)a->i));
    return 0;
}

/* Cast/CastLike 19 -> 13/15: `saturate` only changes casts to the float8
 * types, which the older version lacks (the driver refuses them), so it
 * goes whatever its value. */
static int ad_cast_drop_saturate(AdCtx *c)
{
    ad_drop_attr(c, "saturate");
    return 0;
}

/* Cast/CastLike 24 -> 23: `round_mode` only changes casts to float8e8m0,
 * which version 23 lacks, so it goes. */
static int ad_cast_drop_round_mode(AdCtx *c)
{
    ad_drop_attr(c, "round_mode");
    return 0;
}

/* CastLike below 15: a Cast to the element type of `target_type`, which
 * must be known. The node becomes that Cast in place (keeping its name). */
static int ad_castlike_gone(AdCtx *c)
{
    IrValue *t = ad_in(c, 1);
    int32_t to = ad_elem(t);
    if (!to)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the element type of target_type '%s' is unknown",
                         t ? t->name : "");
    ad_rename(c, "Cast");
    if (c->build_opset < 6)
        ad_set_attr_s(c, c->n, "to", ir_dtype_name(to));
    else
        ad_set_attr_i(c, c->n, "to", to);
    ir_node_set_input(c->n, 1, NULL);
    ad_trim_inputs(c->n);
    ad_drop_if_dead(c, t);
    return 0;
}

static const AdEntry ad_elementwise[] = {
    /* unary math with an opset-1 version */
    AD_CONSUMED("Abs"), AD_BOTH("Abs", 6, 13),
    AD_CONSUMED("Ceil"), AD_BOTH("Ceil", 6, 13),
    AD_CONSUMED("Exp"), AD_BOTH("Exp", 6, 13),
    AD_CONSUMED("Floor"), AD_BOTH("Floor", 6, 13),
    AD_CONSUMED("Log"), AD_BOTH("Log", 6, 13),
    AD_CONSUMED("Neg"), AD_BOTH("Neg", 6, 13),
    AD_CONSUMED("Reciprocal"), AD_BOTH("Reciprocal", 6, 13),
    AD_CONSUMED("Sqrt"), AD_BOTH("Sqrt", 6, 13),
    AD_CONSUMED("Tanh"), AD_BOTH("Tanh", 6, 13),

    /* trigonometric and hyperbolic: bfloat16 at 22 (below their first
     * version: impossible.c) */
    AD_BOTH("Acos", 7, 22), AD_BOTH("Asin", 7, 22), AD_BOTH("Atan", 7, 22),
    AD_BOTH("Cos", 7, 22), AD_BOTH("Sin", 7, 22), AD_BOTH("Tan", 7, 22),
    AD_BOTH("Acosh", 9, 22), AD_BOTH("Asinh", 9, 22), AD_BOTH("Atanh", 9, 22),
    AD_BOTH("Cosh", 9, 22), AD_BOTH("Sinh", 9, 22),

    /* arithmetic */
    AD_CONSUMED("Add"), AD_BCAST("Add", 6, 7), AD_BOTH("Add", 7, 13), AD_UP("Add", 13, 14, AD_COMPATIBLE, NULL),
    AD_DOWN("Add", 13, 14, AD_SEMANTIC, ad_arith_down),
    AD_CONSUMED("Sub"), AD_BCAST("Sub", 6, 7), AD_BOTH("Sub", 7, 13), AD_UP("Sub", 13, 14, AD_COMPATIBLE, NULL),
    AD_DOWN("Sub", 13, 14, AD_SEMANTIC, ad_arith_down),
    AD_CONSUMED("Mul"), AD_BCAST("Mul", 6, 7), AD_BOTH("Mul", 7, 13), AD_UP("Mul", 13, 14, AD_COMPATIBLE, NULL),
    AD_DOWN("Mul", 13, 14, AD_SEMANTIC, ad_arith_down),
    AD_CONSUMED("Div"), AD_BCAST("Div", 6, 7), AD_BOTH("Div", 7, 13), AD_UP("Div", 13, 14, AD_COMPATIBLE, NULL),
    AD_DOWN("Div", 13, 14, AD_SEMANTIC, ad_arith_down),
    AD_BCAST("Pow", 1, 7),
    AD_UP("Pow", 7, 12, AD_COMPATIBLE, NULL),
    AD_DOWN("Pow", 7, 12, AD_SEMANTIC, ad_pow_down),
    AD_BOTH("Pow", 12, 13), AD_BOTH("Pow", 13, 15),
    AD_BOTH("Mod", 10, 13), AD_GONE("Mod", 10, AD_EXPAND, ad_mod_gone),

    /* logic and comparison */
    AD_BCAST("And", 1, 7), AD_BCAST("Or", 1, 7), AD_BCAST("Xor", 1, 7),
    AD_BCAST("Equal", 1, 7),
    AD_UP("Equal", 7, 11, AD_COMPATIBLE, NULL),
    AD_DOWN("Equal", 7, 11, AD_EXPAND, ad_equal_down),
    AD_BOTH("Equal", 11, 13), AD_BOTH("Equal", 13, 19),
    AD_BCAST("Greater", 1, 7),
    AD_UP("Greater", 7, 9, AD_COMPATIBLE, NULL),
    AD_DOWN("Greater", 7, 9, AD_EXPAND, ad_greater_down),
    AD_BOTH("Greater", 9, 13),
    AD_BCAST("Less", 1, 7),
    AD_UP("Less", 7, 9, AD_COMPATIBLE, NULL),
    AD_DOWN("Less", 7, 9, AD_EXPAND, ad_less_down),
    AD_BOTH("Less", 9, 13),
    AD_BOTH("GreaterOrEqual", 12, 16),
    AD_GONE("GreaterOrEqual", 12, AD_EXPAND, ad_ge_gone),
    AD_BOTH("LessOrEqual", 12, 16),
    AD_GONE("LessOrEqual", 12, AD_EXPAND, ad_le_gone),
    AD_UP("IsInf", 10, 20, AD_COMPATIBLE, NULL),
    AD_DOWN("IsInf", 10, 20, AD_SEMANTIC, ad_isinf_down), AD_GONE("IsInf", 10, AD_EXPAND, ad_isinf_gone),
    AD_BOTH("IsNaN", 9, 13), AD_BOTH("IsNaN", 13, 20),
    AD_GONE("IsNaN", 9, AD_EXPAND, ad_isnan_gone),
    AD_BOTH("Where", 9, 16), AD_GONE("Where", 9, AD_EXPAND, ad_where_gone),

    /* bitwise */
    AD_GONE("BitwiseNot", 18, AD_EXPAND, ad_bitwisenot_gone),
    AD_GONE("BitShift", 11, AD_EXPAND, ad_bitshift_gone),
    AD_GONE("BitCast", 26, AD_EXPAND, ad_bitcast_gone),

    /* variadic */
    AD_CONSUMED("Max"),
    AD_UP("Max", 6, 8, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Max", 6, 8, AD_SEMANTIC, ad_variadic_down),
    AD_UP("Max", 8, 12, AD_COMPATIBLE, NULL),
    AD_DOWN("Max", 8, 12, AD_EXPAND, ad_max_down),
    AD_BOTH("Max", 12, 13),
    AD_CONSUMED("Min"),
    AD_UP("Min", 6, 8, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Min", 6, 8, AD_SEMANTIC, ad_variadic_down),
    AD_UP("Min", 8, 12, AD_COMPATIBLE, NULL),
    AD_DOWN("Min", 8, 12, AD_EXPAND, ad_min_down),
    AD_BOTH("Min", 12, 13),
    AD_CONSUMED("Sum"),
    AD_UP("Sum", 6, 8, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Sum", 6, 8, AD_SEMANTIC, ad_variadic_down),
    AD_BOTH("Sum", 8, 13),
    AD_CONSUMED("Mean"),
    AD_UP("Mean", 6, 8, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Mean", 6, 8, AD_SEMANTIC, ad_variadic_down),
    AD_BOTH("Mean", 8, 13),

    /* Clip */
    AD_UP("Clip", 1, 6, AD_SEMANTIC, ad_clip_1_6),
    AD_DOWN("Clip", 1, 6, AD_ATTRS, ad_clip_6_1),
    AD_UP("Clip", 6, 11, AD_ATTR_INPUT, ad_clip_6_11),
    AD_DOWN("Clip", 6, 11, AD_ATTR_INPUT, ad_clip_11_6),
    AD_UP("Clip", 11, 12, AD_COMPATIBLE, NULL),
    AD_DOWN("Clip", 11, 12, AD_SEMANTIC, ad_clip_12_11),
    AD_BOTH("Clip", 12, 13),

    /* others */
    AD_BOTH("Sign", 9, 13), AD_GONE("Sign", 9, AD_EXPAND, ad_sign_gone),
    AD_BOTH("Erf", 9, 13),
    AD_BOTH("Round", 11, 22), AD_GONE("Round", 11, AD_EXPAND, ad_round_gone),
    /* Cast */
    AD_UP("Cast", 1, 6, AD_ATTRS, ad_cast_1_6),
    AD_DOWN("Cast", 1, 6, AD_ATTRS, ad_cast_6_1),
    AD_BOTH("Cast", 6, 9),
    AD_BOTH("Cast", 9, 13),
    AD_UP("Cast", 13, 19, AD_ATTRS, ad_nothing),
    AD_DOWN("Cast", 13, 19, AD_ATTRS, ad_cast_drop_saturate),
    AD_BOTH("Cast", 19, 21),
    AD_BOTH("Cast", 21, 23),
    AD_UP("Cast", 23, 24, AD_ATTRS, ad_nothing),
    AD_DOWN("Cast", 23, 24, AD_ATTRS, ad_cast_drop_round_mode),
    AD_BOTH("Cast", 24, 25),
    /* CastLike */
    AD_GONE("CastLike", 15, AD_EXPAND, ad_castlike_gone),
    AD_UP("CastLike", 15, 19, AD_ATTRS, ad_nothing),
    AD_DOWN("CastLike", 15, 19, AD_ATTRS, ad_cast_drop_saturate),
    AD_BOTH("CastLike", 19, 21),
    AD_BOTH("CastLike", 21, 23),
    AD_UP("CastLike", 23, 24, AD_ATTRS, ad_nothing),
    AD_DOWN("CastLike", 23, 24, AD_ATTRS, ad_cast_drop_round_mode),
    AD_BOTH("CastLike", 24, 25),
    /* Identity */
    AD_BOTH("Identity", 1, 13),
    AD_BOTH("Identity", 13, 14),
    AD_BOTH("Identity", 14, 16),
    AD_BOTH("Identity", 16, 19),
    AD_BOTH("Identity", 19, 21),
    AD_BOTH("Identity", 21, 23),
    AD_BOTH("Identity", 23, 24),
    AD_BOTH("Identity", 24, 25),
};

const AdFamily ad_family_elementwise = {"elementwise", ad_elementwise,
                                        sizeof ad_elementwise / sizeof ad_elementwise[0]};
