/*
 * reduce.c - adapters of the reductions (ReduceL1 ... ReduceSumSquare),
 * ArgMax/ArgMin, CumSum/CumProd, Det and the losses
 * (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss).
 *
 * The version changes, from the changelogs:
 *   1 -> 11   axes (and ArgMax/ArgMin's axis) may be negative, counting
 *             from the back. Nothing else changed.
 *   11 -> 12  ReduceMax/ReduceMin: int8 and uint8 (types only);
 *             ArgMax/ArgMin: select_last_index (default 0 = first index).
 *   11/12 -> 13  bfloat16 (types only).
 *   ReduceSum 11 -> 13, the others 13 -> 18: the `axes` attribute became
 *             an optional int64 input, and noop_with_empty_axes came: with
 *             no or empty axes a node reduces everything, unless
 *             noop_with_empty_axes is 1, when it reduces nothing but still
 *             applies its element step (ReduceL1 gives |x|, ReduceSumSquare
 *             x*x, ...). With non-empty axes the flag has no effect.
 *   ReduceMax/ReduceMin 18 -> 20: bool (types only).
 * An empty `axes` attribute of the older versions reduces everything (as
 * an absent one): ONNX's own inference of those versions reads it so.
 */
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- helpers ----------------------------------------------------------- */

/* ---- 1 <-> 11: negative axes ------------------------------------------ */

/* Down 11 -> 1 (Reduce*): negative axes count from the back of the
 * input; adding the input's rank gives the same axes in the form version
 * 1 reads. */
static int ad_red_axes_down(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "axes");
    if (!a || !a->n_ints)
        return 0;
    size_t n = a->n_ints;
    int64_t *ax = mem_array(n, sizeof *ax);
    memcpy(ax, a->ints, n * sizeof *ax);
    bool changed;
    int rc = ad_norm_axes(c, ax, n, ad_rank(ad_in(c, 0)), "axis", &changed);
    if (rc == 0 && changed)
        ad_set_attr_ints(c, c->n, "axes", n, ax);
    free(ax);
    return rc;
}

/* Down 11 -> 1 (ArgMax/ArgMin): a negative axis becomes axis + rank. */
static int ad_arg_axis_down(AdCtx *c)
{
    int64_t axis = ad_attr_i(c, "axis");
    bool changed;
    if (ad_norm_axes(c, &axis, 1, ad_rank(ad_in(c, 0)), "axis", &changed) < 0)
        return -1;
    if (changed)
        ad_set_attr_i(c, c->n, "axis", axis);
    return 0;
}

/* ---- axes attribute <-> input ----------------------------------------- */

/* Up (ReduceSum 11 -> 13, the others 13 -> 18): the axes attribute becomes
 * the axes input. An absent or empty attribute reduced everything, which
 * is what no input does (noop_with_empty_axes defaults to 0). */
static int ad_red_up(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "axes");
    if (a && !a->n_ints) {
        ad_drop_attr(c, "axes");
        return 0;
    }
    return ad_attr_to_input(c, "axes", 1);
}

/* Whether op's element step is the identity (so reducing nothing is
 * the input itself). */
static bool ad_red_step_is_identity(const char *op)
{
    static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceMax",
                                      "ReduceMin", "ReduceProd"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

/* noop_with_empty_axes = 1 with no axes: nothing is reduced. For Sum,
 * Mean, Max, Min and Prod that is the input (Identity). For the others
 * the element step still applies; reducing over a new axis of size 1
 * (Unsqueeze at 0, reduce axes=[0], keepdims=0) folds each element alone
 * with the same op, which is exactly that. */
static int ad_red_noop(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    if (ad_red_step_is_identity(c->n->op_type)) {
        IrNode *k = ad_node(c, c->n, "Identity", 1, &x, 1);
        if (!k)
            return -1;
        ad_replace(c, k);
        return 0;
    }
    int64_t zero = 0;
    IrValue *u = ad_axes_op(c, c->n, "Unsqueeze", x, 1, &zero);
    if (!u)
        return -1;
    ad_set_input(c, 0, u);
    ad_set_attr_ints(c, c->n, "axes", 1, &zero);
    ad_set_attr_i(c, c->n, "keepdims", 0);
    return 0;
}

/* ---- axes input that is not a constant ------------------------------- */

/* How a reduction with runtime axes is rebuilt one axis at a time: an
 * element step before (x*x, |x|), the op that is folded over each chosen
 * axis, and a step after (sqrt, log). Folding per axis is the same
 * reduction because each of these ops is associative over the elements it
 * combines (sum, product, max, min, mean of equal-size groups, and
 * log-sum-exp of log-sum-exps). */
typedef struct {
    const char *op;      /* the reduction */
    const char *pre;     /* "Abs", "Square" (x*x) or NULL */
    const char *fold;    /* op applied per axis */
    const char *post;    /* "Sqrt", "Log" or NULL */
    bool float_only;     /* folding rounds differently on integers */
} AdRedPlan;

static const AdRedPlan ad_red_plans[] = {
    {"ReduceSum", NULL, "ReduceSum", NULL, false},
    {"ReduceProd", NULL, "ReduceProd", NULL, false},
    {"ReduceMax", NULL, "ReduceMax", NULL, false},
    {"ReduceMin", NULL, "ReduceMin", NULL, false},
    {"ReduceMean", NULL, "ReduceMean", NULL, true},
    {"ReduceL1", "Abs", "ReduceSum", NULL, false},
    {"ReduceSumSquare", "Square", "ReduceSum", NULL, false},
    {"ReduceL2", "Square", "ReduceSum", "Sqrt", true},
    {"ReduceLogSum", NULL, "ReduceSum", "Log", true},
    {"ReduceLogSumExp", NULL, "ReduceLogSumExp", NULL, true},
};

static const AdRedPlan *ad_red_plan(const char *op)
{
    for (size_t i = 0; i < sizeof ad_red_plans / sizeof ad_red_plans[0]; i++)
        if (strcmp(op, ad_red_plans[i].op) == 0)
            return &ad_red_plans[i];
    return NULL;
}

static bool ad_red_is_float(int32_t t)
{
    return t == IR_FLOAT || t == IR_FLOAT16 || t == IR_DOUBLE || t == IR_BFLOAT16;
}

/* Whether `op` takes its axes as an input at `opset` (ReduceSum from 13,
 * the other reductions from 18). */
static bool ad_red_axes_input(const char *op, int64_t opset)
{
    return opset >= (strcmp(op, "ReduceSum") == 0 ? 13 : 18);
}

/* One branch of an If: a graph nested in c->g that computes `op` on y
 * (for a reduction: over axis `axis` alone, keepdims as given) and, when
 * `full` is given, broadcasts the result back to y's shape: Expand to
 * the shape `full`, or Mul by `full` when it is a ones tensor (opset 7
 * has no Expand; x * 1 is x for every value). Its output is typed et.
 * An axes input is a constant of the enclosing graph, read from there. */
static IrGraph *ad_red_branch(AdCtx *c, const char *op, IrValue *y, int64_t axis,
                              int64_t keepdims, int32_t et, IrValue *full)
{
    bool reduce = strcmp(op, "Identity") != 0;
    IrValue *in[2] = {y, NULL};
    size_t n_in = 1;
    if (reduce && ad_red_axes_input(op, c->build_opset)) {
        if (!(in[1] = ad_const_i64s(c, 1, &axis)))
            return NULL;
        n_in = 2;
    }
    IrGraph *sub = ad_sub_new(c, reduce ? "reduce_axis" : "pass");
    IrNode *k = ad_sub_node(c, sub, op, n_in, in, 1, false);
    if (k && reduce) {
        if (n_in == 1)
            ad_set_attr_ints(c, k, "axes", 1, &axis);
        ad_set_attr_i(c, k, "keepdims", keepdims);
    }
    if (k && ad_sub_infer(c, k) < 0)
        k = NULL;
    if (k && reduce && full) {
        IrValue *b[2] = {k->out[0], full};
        k = ad_sub_node(c, sub, ad_elem(full) == IR_INT64 ? "Expand" : "Mul", 2, b, 1, true);
    }
    if (!k) {
        ir_graph_free(sub);
        return NULL;
    }
    ad_sub_output(sub, k->out[0], et);
    return sub;
}

/* If(cond) with then-branch `op` over axis i of y (see ad_red_branch) and
 * else-branch y itself. Returns the If's output. */
static IrValue *ad_red_if(AdCtx *c, IrValue *cond, const char *op, IrValue *y,
                          int64_t i, int64_t keepdims, int32_t et, IrValue *full)
{
    IrGraph *tb = cond && y ? ad_red_branch(c, op, y, i, keepdims, et, full) : NULL;
    IrGraph *eb = tb ? ad_red_branch(c, "Identity", y, 0, 0, et, NULL) : NULL;
    IrNode *k = eb ? ad_node_in(c, c->domain, c->n, "If", 1, &cond, 1) : NULL;
    if (!k) {
        if (tb)
            ir_graph_free(tb);
        if (eb)
            ir_graph_free(eb);
        if (!c->refusal)
            ad_refuse(c, DG_INTERNAL, "cannot build an If");
        return NULL;
    }
    ir_node_set_attr(k, ir_attr_graph("then_branch", tb));
    ir_node_set_attr(k, ir_attr_graph("else_branch", eb));
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

/* 0, 1, ..., n-1 (int64) for a scalar n known at run time, as the scan
 * output of a Loop of n iterations that emits its iteration number (the
 * form every opset has; Loop-1 needs a loop-carried value, so n itself is
 * carried along unchanged). */
static IrValue *ad_red_iota(AdCtx *c, IrValue *n)
{
    IrValue *yes = n ? ad_const_scalar(c, IR_BOOL, 1.0) : NULL;
    IrGraph *b = yes ? ad_sub_new(c, "iota_body") : NULL;
    if (!b)
        return NULL;
    IrValue *it = ad_sub_input(b, "iota_iter", IR_INT64);
    IrValue *cond = ad_sub_input(b, "iota_cond", IR_BOOL);
    IrValue *carry = ad_sub_input(b, "iota_carry", IR_INT64);
    IrNode *k[3] = {NULL, NULL, NULL};
    IrValue *src[3] = {cond, carry, it};
    for (int j = 0; j < 3 && src[j]; j++)
        if (!(k[j] = ad_sub_node(c, b, "Identity", 1, &src[j], 1, true)))
            break;
    if (!k[2]) {
        ir_graph_free(b);
        return NULL;
    }
    ad_sub_output(b, k[0]->out[0], IR_BOOL);
    ad_sub_output(b, k[1]->out[0], IR_INT64);
    ad_sub_output(b, k[2]->out[0], IR_INT64);
    IrValue *in[3] = {n, yes, n};
    IrNode *loop = ad_node_in(c, c->domain, c->n, "Loop", 3, in, 2);
    if (!loop) {
        ir_graph_free(b);
        return NULL;
    }
    ir_node_set_attr(loop, ir_attr_graph("body", b));
    return ad_infer(c, loop) < 0 ? NULL : loop->out[1];
}

/* v summed over its axis 0 (keepdims 0). */
static IrValue *ad_red_sum0(AdCtx *c, IrValue *v)
{
    int64_t zero = 0;
    return ad_reduce(c, "ReduceSum", v, 1, &zero, false);
}

/* flags[i] (a bool vector of length r) says whether axis i is reduced: it
 * is named in axes (as i or i - r), or axes is empty and
 * noop_with_empty_axes is 0 (then every axis is). */
static IrValue *ad_red_flags(AdCtx *c, IrValue *axes, int r, bool noop)
{
    /* counted in float: Greater takes integers only from opset 9 */
    IrValue *count = ad_red_sum0(c, ad_cast(c, ad_axes_hits(c, axes, r), IR_FLOAT));
    IrValue *flags = ad_op2(c, "Greater", count,
                            ad_const_scalar(c, IR_FLOAT, 0.0));
    if (!noop) {
        IrValue *empty = ad_op2(c, "Equal", ad_op1(c, "Size", axes),
                                ad_const_scalar(c, IR_INT64, 0.0));
        flags = ad_op2(c, "Or", flags, empty);
    }
    return flags;
}

/* keepdims=0 below opset 11: y has length len[i] on axis i, 1 on the
 * reduced ones (fi[i] = 1). Axis i gets the score (1 - fi[i]) * 2r + r - i,
 * so a TopK of all r scores lists the kept axes first, in order; the first
 * r - sum(fi) of them give the shape y is reshaped to. */
static IrValue *ad_red_drop_axes(AdCtx *c, IrValue *y, IrValue *len, IrValue *fi, int r)
{
    int64_t *rank_left = mem_array((size_t)r, sizeof *rank_left), k = r;
    for (int i = 0; i < r; i++)
        rank_left[i] = r - i;
    IrValue *kept = ad_op2(c, "Sub", ad_const_scalar(c, IR_INT64, 1.0), fi);
    IrValue *score = ad_op2(c, "Add", ad_op2(c, "Mul", kept, ad_const_scalar(c, IR_INT64, 2.0 * r)),
                            ad_const_i64s(c, (size_t)r, rank_left));
    free(rank_left);
    IrValue *in[2] = {ad_cast(c, score, IR_FLOAT), NULL};
    size_t n_in = 1;
    if (c->build_opset >= 10) {
        in[1] = ad_const_i64s(c, 1, &k);
        n_in = 2;
    }
    IrNode *top = in[0] && (n_in == 1 || in[1])
                      ? ad_node_in(c, c->domain, c->n, "TopK", n_in, in, 2) : NULL;
    if (top && c->build_opset < 10)
        ad_set_attr_i(c, top, "k", k);
    if (!top || ad_infer(c, top) < 0)
        return NULL;
    IrValue *nk = ad_op2(c, "Sub", ad_const_scalar(c, IR_INT64, (double)r), ad_red_sum0(c, fi));
    IrValue *order = ad_op2(c, "Gather", top->out[1], ad_red_iota(c, nk));
    return ad_op2(c, "Reshape", y, ad_op2(c, "Gather", len, order));
}

/* Below opset 11 an If's branches must return the same shape, so each
 * axis' If reduces it and broadcasts the result back (or passes y on):
 * after all r of them every element holds its group's reduction. Then
 * each axis i keeps its first L_i positions (L_i = 1 when reduced, else
 * its length) by a Gather on 0..L_i-1, which gives the keepdims=1 result;
 * for keepdims=0 a Reshape drops the reduced axes (the kept lengths, in
 * order, are the first entries of a TopK that ranks kept axes first). */
static IrValue *ad_red_same_shape(AdCtx *c, const AdRedPlan *p, IrValue *y,
                                  IrValue *flags, int r, int64_t keep, int32_t et)
{
    /* A length-0 axis would be broadcast back to length 0, leaving no
     * position to keep: every length must be known and positive. */
    uint64_t n = 1;
    for (int i = 0; i < r; i++)
        n = ad_dim(y, i) <= 0 ? 0 : n * (uint64_t)ad_dim(y, i);
    if (n == 0 || n > ((uint64_t)1 << 24)) {
        ad_refuse(c, DG_SHAPE_UNKNOWN,
                  "below opset 11 the input's shape must be known, without empty axes");
        return NULL;
    }
    IrValue *shp = ad_op1(c, "Shape", y), *full = shp;
    if (c->goal_opset < 8) {              /* no Expand: multiply by ones */
        if (n > ((uint64_t)1 << 20)) {
            ad_refuse(c, DG_TOO_LARGE, "opset 7 would need a ones tensor of %llu elements",
                      (unsigned long long)n);
            return NULL;
        }
        int64_t dims[64];
        for (int i = 0; i < r; i++)
            dims[i] = ad_dim(y, i);
        full = ad_const_fill(c, et, (size_t)r, dims, 1);
    }
    for (int i = 0; i < r && y && full; i++)
        y = ad_red_if(c, ad_op2(c, "Gather", flags, ad_const_scalar(c, IR_INT64, (double)i)),
                      p->fold, y, i, 1, et, full);
    IrValue *fi = ad_cast(c, flags, IR_INT64);
    IrValue *len = ad_op2(c, "Sub", shp,
                          ad_op2(c, "Mul", fi,
                                 ad_op2(c, "Sub", shp, ad_const_scalar(c, IR_INT64, 1.0))));
    for (int i = 0; i < r && y; i++) {
        IrValue *li = ad_op2(c, "Gather", len, ad_const_scalar(c, IR_INT64, (double)i));
        IrValue *in[2] = {y, ad_red_iota(c, li)};
        IrNode *g = in[1] ? ad_node_in(c, c->domain, c->n, "Gather", 2, in, 1) : NULL;
        if (g)
            ad_set_attr_i(c, g, "axis", i);
        y = g && ad_infer(c, g) == 0 ? g->out[0] : NULL;
    }
    if (keep || !y)
        return y;
    return ad_red_drop_axes(c, y, len, fi, r);
}

/* Down with an axes input that is not a constant (its values come at run
 * time): the input's rank r is known, so each axis i = r-1 .. 0 gets an If
 * whose then-branch reduces axis i alone (keepdims as the node says) and
 * whose else-branch passes the data on. Going from the last axis down
 * keeps the numbering of the axes not yet visited when keepdims is 0.
 * The conditions are computed from axes with ops of every opset:
 * Equal/Or against i and i - r, summed. */
static int ad_red_dynamic(AdCtx *c, IrValue *axes, bool noop)
{
    IrValue *x = ad_in(c, 0);
    const AdRedPlan *p = ad_red_plan(c->n->op_type);
    int r = ad_rank(x);
    int32_t et = ad_elem(x);
    if (!p || r < 1 || r > 64)
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "axes '%s' is not a constant and the input's rank is %s",
                         axes->name, r < 0 ? "unknown" : r == 0 ? "0" : "above 64");
    if (!et)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the input's element type is unknown");
    if (p->float_only && !ad_red_is_float(et))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "axes '%s' is not a constant, and reducing %s one axis at a "
                         "time rounds differently", axes->name, ir_dtype_name(et));
    int64_t keep = ad_attr_i(c, "keepdims");
    IrValue *flags = ad_red_flags(c, axes, r, noop);
    IrValue *y = x;
    if (p->pre)
        y = strcmp(p->pre, "Square") == 0 ? ad_op2(c, "Mul", x, x) : ad_op1(c, p->pre, x);
    if (c->goal_opset > 0 && c->goal_opset < 11)
        y = ad_red_same_shape(c, p, y, flags, r, keep, et);
    else
        for (int i = r - 1; i >= 0 && flags && y; i--)
            y = ad_red_if(c, ad_op2(c, "Gather", flags, ad_const_scalar(c, IR_INT64, (double)i)),
                          p->fold, y, i, keep, et, NULL);
    IrNode *last = y ? y->producer : NULL;
    if (p->post && y) {
        last = ad_node(c, c->n, p->post, 1, &y, 1);
        y = last ? last->out[0] : NULL;
    }
    if (!y || !last)
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot rebuild the reduction");
    ad_replace(c, last);
    return 0;
}

/* Down (ReduceSum 13 -> 11, the others 18 -> 13): a constant axes input
 * becomes the attribute; no or empty axes reduce everything (no
 * attribute) unless noop_with_empty_axes is 1 (see ad_red_noop). With
 * non-empty axes the flag means nothing and is dropped. */
static int ad_red_down(AdCtx *c)
{
    bool noop = ad_attr_i(c, "noop_with_empty_axes") != 0;
    IrValue *ax = ad_in(c, 1);
    int64_t *v = NULL;
    size_t n = 0;
    if (ax && !ad_const_ints(ax, &v, &n))
        return ad_red_dynamic(c, ax, noop);
    ad_drop_attr(c, "noop_with_empty_axes");
    if (ax) {
        ir_node_set_input(c->n, 1, NULL);
        ad_trim_inputs(c->n);
        ad_drop_if_dead(c, ax);
    }
    if (n) {
        ad_set_attr_ints(c, c->n, "axes", n, v);
        free(v);
        return 0;
    }
    free(v);
    return noop ? ad_red_noop(c) : 0;
}

/* ---- ArgMax/ArgMin 11 <-> 12: select_last_index ----------------------- */

/* Down 12 -> 11: select_last_index = 0 (the default) is what version 11
 * does. With 1: the last index of the extreme along an axis of N elements
 * is N-1 minus the first index of the extreme in the reversed data
 * (Gather with indices N-1..0), so ArgX(Gather(x, [N-1..0], axis))
 * subtracted from N-1 is exact for ordered data. Floating data with NaN
 * has no specified answer in either version (the spec leaves NaN to the
 * runtime); a runtime that treats NaN as the extreme, as the reference
 * does, finds the mirrored NaN, which is the same position. */
static int ad_arg_last_down(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "select_last_index");
    if (!a || (a->has_i && a->i == 0)) {
        ad_drop_attr(c, "select_last_index");
        return 0;
    }
    IrValue *x = ad_in(c, 0);
    int64_t axis = ad_attr_i(c, "axis");
    bool changed;
    if (ad_norm_axes(c, &axis, 1, ad_rank(x), "axis", &changed) < 0)
        return -1;
    int64_t n = ad_dim(x, (int)axis);
    if (n <= 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "select_last_index=1 needs the length of axis %lld known",
                         (long long)axis);
    int64_t *idx = mem_array((size_t)n, sizeof *idx);
    for (int64_t i = 0; i < n; i++)
        idx[i] = n - 1 - i;
    IrValue *iv = ad_const_i64s(c, (size_t)n, idx);
    free(idx);
    if (!iv)
        return -1;
    IrValue *gin[2] = {x, iv};
    IrNode *g = ad_node_in(c, c->domain, c->n, "Gather", 2, gin, 1);
    if (!g)
        return -1;
    ad_set_attr_i(c, g, "axis", axis);
    if (ad_infer(c, g) < 0)
        return -1;
    IrNode *k = ad_node_in(c, c->domain, c->n, c->n->op_type, 1, &g->out[0], 1);
    if (!k)
        return -1;
    ad_set_attr_i(c, k, "axis", axis);
    ad_set_attr_i(c, k, "keepdims", ad_attr_i(c, "keepdims"));
    if (ad_infer(c, k) < 0)
        return -1;
    IrValue *last = ad_const_scalar(c, IR_INT64, (double)(n - 1));
    if (!last)
        return -1;
    IrValue *sin[2] = {last, k->out[0]};
    IrNode *s = ad_node(c, c->n, "Sub", 2, sin, 1);
    if (!s)
        return -1;
    ad_replace(c, s);
    return 0;
}

/* ---- the table ------------------------------------------------------- */

/* The entries every Reduce* except ReduceSum shares up to version 13. */
#define AD_RED_EARLY(op) \
    AD_UP(op, 1, 11, AD_SEMANTIC, ad_nothing), \
    AD_DOWN(op, 1, 11, AD_SEMANTIC, ad_red_axes_down)
#define AD_RED_18(op) \
    AD_UP(op, 13, 18, AD_ATTR_INPUT, ad_red_up), \
    AD_DOWN(op, 13, 18, AD_ATTR_INPUT, ad_red_down)

/* ReduceMax / ReduceMin 20 -> 18: version 20 added bool. Reduced as
 * float 0/1 (a type every version and ONNX Runtime's kernels take), the
 * result r is 0 or 1, and r > 0 is the bool result; the empty set gives
 * the lowest float (max), false, or the highest (min), true, which is
 * what version 20 gives. The axes input stays as it is. */
static int ad_red_bool_down(AdCtx *c)
{
    if (ad_elem(ad_in(c, 0)) != IR_BOOL)
        return 0;
    IrNode *k = ad_widen_node(c, IR_FLOAT, 1u);
    IrValue *y = k ? ad_op2(c, "Greater", k->out[0], ad_const_scalar(c, IR_FLOAT, 0.0)) : NULL;
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* ---- CumSum (11) and CumProd (26) below their first version ----------- */

/* Longest axis CumSum/CumProd are unrolled along. */
#define AD_SCAN_CAP 4096

/* Slice j of x along axis, keeping the axis (length 1). */
static IrValue *ad_scan_slice(AdCtx *c, IrValue *x, int64_t j, int64_t axis)
{
    int64_t one = 1;
    return ad_gather(c, x, ad_const_int_tensor(c, IR_INT64, 1, &one, &j, 1), axis);
}

/* The tensor of 0 (CumSum) or 1 (CumProd) an exclusive scan starts with,
 * shaped like one slice of x along the axis: a constant when x's shape
 * is static, else the scalar expanded to the shape of slice s (built
 * from slice j when s is NULL; Expand copies). */
static IrValue *ad_scan_unit(AdCtx *c, IrValue *x, IrValue *s, int64_t j,
                             int64_t axis, int unit)
{
    int32_t t = ad_elem(x);
    int64_t d[AD_MAX_RANK];
    int r = ad_static(x, d, AD_MAX_RANK);
    if (r >= 0) {
        d[axis] = 1;
        if (ad_prod(d, 0, (size_t)r, AD_SELECT_CAP) >= 0)
            return ad_const_fill(c, t, (size_t)r, d, unit);
    }
    if (!s)
        s = ad_scan_slice(c, x, j, axis);
    return ad_op2(c, "Expand", ad_const_fill(c, t, 0, NULL, unit), ad_op1(c, "Shape", s));
}

/* The length of dim `axis` of x (0 <= axis), refused when unknown or
 * beyond AD_SCAN_CAP; -1 after a refusal. */
static int64_t ad_scan_len(AdCtx *c, const IrValue *x, int64_t axis)
{
    int64_t len = ad_dim(x, (int)axis);
    if (len < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the length of axis %lld is unknown",
                         (long long)axis);
    if (len > AD_SCAN_CAP)
        return ad_refuse(c, DG_SHAPE, "the axis is longer than %d elements",
                         AD_SCAN_CAP);
    return len;
}

/* CumSum / CumProd of x along `axis` (of length n) unrolled: slice j is
 * Gather(x, [j], axis) (which keeps the axis, of length 1), and the
 * running total is op(total, slice) from the first slice on (the last
 * when reverse=1), one rounding per step, the order of the reference
 * (numpy's cumsum / cumprod): the first total is the slice itself, so -0
 * stays -0. With exclusive=1 output j is the total before slice j, and
 * the first is 0 (1). The outputs are concatenated in position order.
 * Integers wrap as the op's own accumulation does. An empty axis gives x
 * itself. */
static IrValue *ad_scan_along(AdCtx *c, const char *op, int unit, int64_t axis,
                              int64_t n)
{
    IrValue *x = ad_in(c, 0);
    if (n == 0)
        return ad_op1(c, "Identity", x);
    bool excl = ad_attr_i(c, "exclusive") != 0;
    bool rev = ad_attr_i(c, "reverse") != 0;
    IrValue **out = mem_array((size_t)n, sizeof *out), *acc = NULL;
    for (int64_t s = 0; s < n; s++) {
        int64_t j = rev ? n - 1 - s : s;
        /* exclusive: the last slice adds to no output */
        IrValue *sl = !excl || s + 1 < n ? ad_scan_slice(c, x, j, axis) : NULL;
        if (excl && !acc)
            out[j] = ad_scan_unit(c, x, sl, j, axis, unit);
        else if (excl)
            out[j] = acc;
        if (sl)
            acc = acc ? ad_op2(c, op, acc, sl) : sl;
        if (!excl)
            out[j] = acc;
    }
    IrValue *y = ad_concat(c, out, (size_t)n, axis);
    free(out);
    return y;
}

/* The scan along a run-time axis a of x (rank r, every dim known): the
 * scan along each axis k, selected by Where(a == k or a == k - r, ...)
 * (Where copies; built at opset 10 or 25, where Where exists; below,
 * Where's own adapter lowers it). A 1-D x has one axis: no select. */
static IrValue *ad_scan_any_axis(AdCtx *c, const char *op, int unit, int r)
{
    IrValue *x = ad_in(c, 0), *a = ad_in(c, 1);
    int32_t ta = ad_elem(a);
    int64_t len[AD_MAX_RANK], total = 0;
    if (r < 1 || r > AD_MAX_RANK) {
        ad_refuse(c, DG_SHAPE_UNKNOWN, "an axis given at run time needs x's rank");
        return NULL;
    }
    for (int k = 0; k < r; k++)
        if ((len[k] = ad_scan_len(c, x, k)) < 0 || (total += len[k]) > AD_SCAN_CAP) {
            if (!c->refusal)
                ad_refuse(c, DG_SHAPE, "the axes are longer than %d elements in all",
                          AD_SCAN_CAP);
            return NULL;
        }
    if (r > 1 && ta != IR_INT32 && ta != IR_INT64) {
        ad_refuse(c, DG_TYPE_UNKNOWN, "the axis type is unknown");
        return NULL;
    }
    IrValue *y = ad_scan_along(c, op, unit, r - 1, len[r - 1]);
    for (int k = r - 2; k >= 0; k--) {
        IrValue *is = ad_op2(c, "Or", ad_op2(c, "Equal", a, ad_const_int(c, ta, k)),
                             ad_op2(c, "Equal", a, ad_const_int(c, ta, k - r)));
        IrValue *in[3] = {is, ad_scan_along(c, op, unit, k, len[k]), y};
        IrNode *w = is && in[1] && y ? ad_node(c, c->n, "Where", 3, in, 1) : NULL;
        y = w ? w->out[0] : NULL;
    }
    return y;
}

/* CumSum (11) / CumProd (26) where they do not exist, unrolled along a
 * constant axis (ad_scan_along), or along each axis and selected when
 * the axis is known only at run time (ad_scan_any_axis). */
static int ad_scan_gone(AdCtx *c, const char *op, int unit)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    int64_t *v, axis;
    size_t n;
    bool changed;
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the scan's input type is unknown");
    if (ad_need_type(c, op, t) < 0)
        return -1;
    if (!ad_const_ints(ad_in(c, 1), &v, &n))
        return ad_replace_by(c, ad_scan_any_axis(c, op, unit, ad_rank(x)));
    axis = n == 1 ? v[0] : 0;
    free(v);
    if (n != 1)
        return ad_refuse(c, DG_ATTRIBUTE, "the axis holds %zu values, not one", n);
    if (ad_norm_axes(c, &axis, 1, ad_rank(x), "axis", &changed) < 0)
        return -1;
    int64_t len = ad_scan_len(c, x, axis);
    return len < 0 ? -1 : ad_replace_by(c, ad_scan_along(c, op, unit, axis, len));
}

static int ad_cumsum_gone(AdCtx *c)
{
    return ad_scan_gone(c, "Add", 0);
}

static int ad_cumprod_gone(AdCtx *c)
{
    return ad_scan_gone(c, "Mul", 1);
}

/* ---- losses --------------------------------------------------------- */

/* The negative log-likelihood of `lp` (N, C, d...) at the targets of c->n
 * (input 1, (N, d...)), weighted by input 2 when given, reduced as the
 * `reduction` attribute says (NegativeLogLikelihoodLoss-12's function
 * body, at opset 11): targets equal to ignore_index read class 0 and
 * count with loss and weight 0; "mean" divides by the summed weights (the
 * number of counted targets without weights). */
static IrValue *ad_red_nll(AdCtx *c, IrValue *lp)
{
    IrValue *tg = ad_in(c, 1), *w = ad_in(c, 2);
    int32_t t = ad_elem(lp), tt = ad_elem(tg);
    char buf[16];
    const char *red = ad_attr_s(c, "reduction", buf, sizeof buf);
    bool ii = ad_attr(c, "ignore_index") != NULL;
    int64_t ax[1] = {1};
    if (!t || !tt) {
        ad_refuse(c, DG_TYPE_UNKNOWN, "the types of the input and target are unknown");
        return NULL;
    }
    if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean")) {
        ad_refuse(c, DG_ATTRIBUTE, "reduction '%s' is unknown", red);
        return NULL;
    }
    int64_t ig = ad_attr_i(c, "ignore_index");
    if (ii && tt != 6 && tt != 7) {
        ad_refuse(c, DG_TYPE, "the target must be int32 or int64");
        return NULL;
    }
    if (ii && tt == 6 && (ig < INT32_MIN || ig > INT32_MAX)) {
        ad_refuse(c, DG_ATTRIBUTE, "ignore_index %lld does not fit the int32 target",
                  (long long)ig);
        return NULL;
    }
    IrValue *tu = ad_axes_op(c, c->n, "Unsqueeze", tg, 1, ax), *m = NULL;
    if (ii) {
        /* the index itself, never through double: 2^63 - 1 is no double */
        m = ad_op2(c, "Equal", tu, c->refusal ? NULL : ad_const_int(c, tt, ig));
        tu = ad_op3(c, "Where", m, ad_const_scalar(c, tt, 0), tu);
    }
    IrNode *k = ad_raw(c, "GatherElements", 2, (IrValue *[]){lp, tu}, 1);
    if (k)
        ad_set_attr_i(c, k, "axis", 1);
    IrValue *g = ad_fin(c, k), *zero = ii ? ad_const_scalar(c, t, 0) : NULL;
    if (ii)
        g = ad_op3(c, "Where", m, zero, g);
    IrValue *loss = ad_op1(c, "Neg", ad_axes_op(c, c->n, "Squeeze", g, 1, ax));
    IrValue *wt = NULL;
    if (w) {
        wt = ad_op2(c, "Gather", w, tu);
        if (ii)
            wt = ad_op3(c, "Where", m, zero, wt);
    } else if (ii && !strcmp(red, "mean")) {
        wt = ad_op3(c, "Where", m, zero, ad_const_scalar(c, t, 1));
    }
    if (wt)
        wt = ad_axes_op(c, c->n, "Squeeze", wt, 1, ax);
    if (w)
        loss = ad_op2(c, "Mul", loss, wt);
    if (!strcmp(red, "none"))
        return loss;
    if (!strcmp(red, "sum") || !wt)
        return ad_reduce(c, !strcmp(red, "sum") ? "ReduceSum" : "ReduceMean", loss, 0, NULL,
                         false);
    return ad_op2(c, "Div", ad_reduce(c, "ReduceSum", loss, 0, NULL, false),
                     ad_reduce(c, "ReduceSum", wt, 0, NULL, false));
}

/* NegativeLogLikelihoodLoss below 12: the function body at opset 11. */
static int ad_red_nll_expand(AdCtx *c)
{
    IrValue *outs[1] = {ad_red_nll(c, ad_in(c, 0))};
    return ad_end(c, 1, outs);
}

/* SoftmaxCrossEntropyLoss below 12: log_prob = LogSoftmax over the class
 * axis 1, then the NLL above. LogSoftmax-11 normalizes the flattened
 * trailing dims from its axis, so for more than 2 dims the class axis is
 * moved last first (and back for the log_prob output). */
static int ad_red_sce_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x);
    if (r < 2 || r > 16)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of the scores is unknown");
    int64_t to[16], from[16];
    for (int i = 0; i < r; i++) {
        to[i] = i == r - 1 ? 1 : i == 0 ? 0 : i + 1;
        from[i] = i == 0 ? 0 : i == 1 ? r - 1 : i - 1;
    }
    IrValue *xt = r > 2 ? ad_transpose(c, x, (size_t)r, to) : x;
    IrNode *k = ad_raw(c, "LogSoftmax", 1, &xt, 1);
    if (k)
        ad_set_attr_i(c, k, "axis", r - 1);
    IrValue *lp = ad_fin(c, k);
    if (r > 2)
        lp = ad_transpose(c, lp, (size_t)r, from);
    IrValue *outs[2] = {ad_red_nll(c, lp), lp};
    return ad_end(c, 2, outs);
}

static const AdEntry ad_reduce_table[] = {
    AD_RED_EARLY("ReduceL1"), AD_BOTH("ReduceL1", 11, 13), AD_RED_18("ReduceL1"),
    AD_RED_EARLY("ReduceL2"), AD_BOTH("ReduceL2", 11, 13), AD_RED_18("ReduceL2"),
    AD_RED_EARLY("ReduceLogSum"), AD_BOTH("ReduceLogSum", 11, 13),
    AD_RED_18("ReduceLogSum"),
    AD_RED_EARLY("ReduceLogSumExp"), AD_BOTH("ReduceLogSumExp", 11, 13),
    AD_RED_18("ReduceLogSumExp"),
    AD_RED_EARLY("ReduceMean"), AD_BOTH("ReduceMean", 11, 13), AD_RED_18("ReduceMean"),
    AD_RED_EARLY("ReduceProd"), AD_BOTH("ReduceProd", 11, 13), AD_RED_18("ReduceProd"),
    AD_RED_EARLY("ReduceSumSquare"), AD_BOTH("ReduceSumSquare", 11, 13),
    AD_RED_18("ReduceSumSquare"),
    AD_RED_EARLY("ReduceMax"), AD_BOTH("ReduceMax", 11, 12), AD_BOTH("ReduceMax", 12, 13),
    AD_RED_18("ReduceMax"), AD_UP("ReduceMax", 18, 20, AD_COMPATIBLE, NULL),
    AD_DOWN("ReduceMax", 18, 20, AD_SEMANTIC, ad_red_bool_down),
    AD_RED_EARLY("ReduceMin"), AD_BOTH("ReduceMin", 11, 12), AD_BOTH("ReduceMin", 12, 13),
    AD_RED_18("ReduceMin"), AD_UP("ReduceMin", 18, 20, AD_COMPATIBLE, NULL),
    AD_DOWN("ReduceMin", 18, 20, AD_SEMANTIC, ad_red_bool_down),
    AD_RED_EARLY("ReduceSum"),
    AD_UP("ReduceSum", 11, 13, AD_ATTR_INPUT, ad_red_up),
    AD_DOWN("ReduceSum", 11, 13, AD_ATTR_INPUT, ad_red_down),

    AD_UP("ArgMax", 1, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("ArgMax", 1, 11, AD_SEMANTIC, ad_arg_axis_down),
    AD_UP("ArgMax", 11, 12, AD_ATTRS, ad_nothing),
    AD_DOWN("ArgMax", 11, 12, AD_ATTRS, ad_arg_last_down),
    AD_BOTH("ArgMax", 12, 13),
    AD_UP("ArgMin", 1, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("ArgMin", 1, 11, AD_SEMANTIC, ad_arg_axis_down),
    AD_UP("ArgMin", 11, 12, AD_ATTRS, ad_nothing),
    AD_DOWN("ArgMin", 11, 12, AD_ATTRS, ad_arg_last_down),
    AD_BOTH("ArgMin", 12, 13),

    AD_BOTH("CumSum", 11, 14),
    AD_GONE("CumSum", 11, AD_EXPAND, ad_cumsum_gone),
    AD_GONE("CumProd", 26, AD_EXPAND, ad_cumprod_gone),
    AD_BOTH("Det", 11, 22),

    AD_BOTH("NegativeLogLikelihoodLoss", 12, 13),
    AD_BOTH("NegativeLogLikelihoodLoss", 13, 22),
    AD_BOTH("SoftmaxCrossEntropyLoss", 12, 13),
    AD_GONE("NegativeLogLikelihoodLoss", 12, AD_EXPAND, ad_red_nll_expand),
    AD_GONE("SoftmaxCrossEntropyLoss", 12, AD_EXPAND, ad_red_sce_expand),
};

const AdFamily ad_family_reduce = {"reduce", ad_reduce_table,
                                   sizeof ad_reduce_table / sizeof ad_reduce_table[0]};
