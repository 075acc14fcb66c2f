/*
 * norm.c - adapters of the normalizations (BatchNormalization,
 * InstanceNormalization, LRN, LpNormalization, MeanVarianceNormalization,
 * LayerNormalization, GroupNormalization, RMSNormalization).
 *
 * The expansions below an op's first version follow the spec's function
 * bodies, with two deliberate differences that do not change the value:
 * variances are computed as mean((x - mean)^2) (the bodies' E[x^2] -
 * E[x]^2 is the same number in exact arithmetic but can go negative in
 * floating point), and shapes the body computes at run time are taken
 * from attributes where the attributes fix them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- outputs -------------------------------------------------------- */

/* Whether v is read by some node or is a graph output. */
static bool ad_nm_used(const IrValue *v)
{
    return v && (v->n_uses > 0 || ir_value_is_graph_output(v));
}

/* Leaves output i of c->n out (the slot stays, empty); its value must be
 * unused. */
static int ad_nm_drop_out(AdCtx *c, size_t i)
{
    if (!ad_named_out(c, i))
        return 0;
    const char *none[1] = {""};
    IrNode *t = ir_node_new(c->g, c->n, "Identity", NULL, "", 0, NULL, 1, none, c->err);
    if (!t) {
        c->refusal = DG_INTERNAL;
        return -1;
    }
    ir_node_take_output(t, 0, c->n, i);
    ir_node_delete(t);
    return 0;
}

/* The normalized axes [axis, rank) of a LayerNormalization-style axis:
 * non-negative when the rank is known, else [axis, -1] for a negative
 * axis (accepted by ReduceMean from opset 11, and the expansions are built
 * at 16 or later). Returns the count, 0 after refusing. */
static size_t ad_nm_tail_axes(AdCtx *c, int64_t axis, int rank, int64_t *axes)
{
    if (rank >= 0) {
        if (axis < 0)
            axis += rank;
        if (axis < 0 || axis >= rank || rank > 16) {
            ad_refuse(c, DG_ATTRIBUTE, "axis %lld is out of range", (long long)axis);
            return 0;
        }
        for (int64_t a = axis; a < rank; a++)
            axes[a - axis] = a;
        return (size_t)(rank - axis);
    }
    if (axis >= 0 || axis < -16) {
        ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of X is unknown");
        return 0;
    }
    for (int64_t a = axis; a < 0; a++)
        axes[a - axis] = a;
    return (size_t)-axis;
}

/* ---- BatchNormalization --------------------------------------------- */

/* Whether any statistics output (1..4) is named: in versions 7 to 9 that
 * is what asks for training (batch statistics). */
static bool ad_nm_bn_stats(const AdCtx *c)
{
    for (size_t i = 1; i < 5; i++)
        if (ad_named_out(c, i))
            return true;
    return false;
}

/* BatchNormalization 6 -> 1: version 1 requires consumed_inputs; mean and
 * var are updated in place exactly when the running statistics are
 * produced. The hint does not change any output. */
static int ad_nm_bn_6_1(AdCtx *c)
{
    int64_t s = ad_named_out(c, 1) || ad_named_out(c, 2) ? 1 : 0;
    int64_t v[5] = {0, 0, 0, s, s};
    ad_set_attr_ints(c, c->n, "consumed_inputs", 5, v);
    return 0;
}

/* BatchNormalization 6 -> 7: is_test removed; from 7 the statistics
 * outputs alone say "training". is_test=1 with only Y, and is_test=0 with
 * statistics outputs, mean the same at 7; the other two combinations
 * (test mode with statistics outputs, training with only Y) have no
 * version-7 form. */
static int ad_nm_bn_6_7(AdCtx *c)
{
    bool test = ad_attr_i(c, "is_test") != 0, stats = ad_nm_bn_stats(c);
    if (test == stats)
        return ad_refuse(c, DG_SEMANTICS,
                         test ? "is_test=1 with statistics outputs has no opset-7 form"
                              : "is_test=0 (training) with only Y has no opset-7 form");
    ad_drop_attr(c, "is_test");
    return 0;
}

/* BatchNormalization 7 -> 6: training exactly when statistics outputs are
 * named, which is is_test=0 (the default) at 6. */
static int ad_nm_bn_7_6(AdCtx *c)
{
    if (!ad_nm_bn_stats(c))
        ad_set_attr_i(c, c->n, "is_test", 1);
    return 0;
}

/* Y = (X - mean) / sqrt(var + epsilon) * scale + B, parameters broadcast
 * against X as numpy does (BatchNormalization in inference mode with
 * per-element parameters), built at c->build_opset. */
static IrValue *ad_nm_bn_formula(AdCtx *c, int32_t t)
{
    IrValue *x = ad_in(c, 0), *sc = ad_in(c, 1), *b = ad_in(c, 2);
    IrValue *mean = ad_in(c, 3), *var = ad_in(c, 4);
    IrValue *eps = ad_const_scalar(c, t, ad_attr_f(c, "epsilon"));
    IrValue *d = ad_op2(c, "Sub", x, mean);
    IrValue *sd = ad_op1(c, "Sqrt", ad_op2(c, "Add", var, eps));
    IrValue *y = ad_op2(c, "Mul", ad_op2(c, "Div", d, sd), sc);
    return ad_op2(c, "Add", y, b);
}

/* BatchNormalization 7 -> 9: spatial removed; 9 always has one parameter
 * per channel (spatial=1, the default). spatial=0 (one parameter per
 * element of C x D1 x ...) is the same for a 2-D X; otherwise, in
 * inference mode, the node becomes the formula with the parameters
 * broadcast over the batch (they have X's shape without N). Training with
 * per-element statistics has no form at 9. */
static int ad_nm_bn_7_9(AdCtx *c)
{
    if (ad_attr_i(c, "spatial") != 0 || ad_rank(ad_in(c, 0)) == 2) {
        ad_drop_attr(c, "spatial");
        return 0;
    }
    if (ad_nm_bn_stats(c))
        return ad_refuse(c, DG_SEMANTICS,
                         "training with per-element statistics (spatial=0) has no "
                         "opset-9 form");
    int r = ad_rank(ad_in(c, 0));
    int32_t t = ad_elem(ad_in(c, 0));
    if (r < 0 || !t)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank or type of X is unknown");
    for (size_t i = 1; i < 5; i++)
        if (ad_rank(ad_in(c, i)) != r - 1)
            return ad_refuse(c, DG_SHAPE,
                             "spatial=0 parameters must have X's shape without N");
    IrValue *y = ad_nm_bn_formula(c, t);
    IrValue *outs[1] = {y};
    return ad_end(c, 1, outs);
}

/* BatchNormalization 9 -> 14: training became the attribute training_mode
 * (0: inference, the default); the outputs saved_mean and saved_var were
 * removed and mean/var became running_mean/running_var (the same
 * momentum update). A node with statistics outputs gets training_mode=1;
 * saved_mean/saved_var that something reads have no form at 14. 14 allows
 * 1 or 3 outputs (as written, empty names included): 3 while mean or var
 * is named, else 1. */
static int ad_nm_bn_9_14(AdCtx *c)
{
    bool stats = ad_nm_bn_stats(c);
    for (size_t i = 3; i < 5; i++) {
        if (!ad_named_out(c, i))
            continue;
        if (ad_nm_used(c->n->out[i]))
            return ad_refuse(c, DG_SEMANTICS,
                             "output %s (saved statistics) has no opset-14 form",
                             i == 3 ? "saved_mean" : "saved_var");
        if (ad_nm_drop_out(c, i) < 0)
            return -1;
    }
    ad_trim_outputs(c, 3);
    if (!ad_named_out(c, 1) && !ad_named_out(c, 2))
        ad_trim_outputs(c, 1);
    if (stats)
        ad_set_attr_i(c, c->n, "training_mode", 1);
    return 0;
}

/* Whether the element types of X, scale, B, mean and var all agree (the
 * versions before 14 bind them to one type variable). */
static int ad_nm_bn_one_type(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    for (size_t i = 0; i < 5; i++) {
        int32_t u = ad_elem(ad_in(c, i));
        if (!u)
            return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of input %zu is unknown", i);
        if (u != t)
            return ad_refuse(c, DG_TYPE,
                             "input %zu's type differs from X's; the target needs one type",
                             i);
    }
    return 0;
}

/* BatchNormalization 14 -> 9: training_mode=1 becomes "statistics outputs
 * named" (running_mean/running_var are mean/var at 9). 9 (like 6 and 7)
 * allows 1 or 5 outputs, so a training node becomes one with all five, the
 * ones 14 lacks (or left out) fresh and unread. Inference with running
 * outputs named is not valid at 14 and is refused; an inference node keeps
 * Y alone. The parameters must share X's type at 9. */
static int ad_nm_bn_14_9(AdCtx *c)
{
    if (ad_nm_bn_one_type(c) < 0)
        return -1;
    bool training = ad_attr_i(c, "training_mode") != 0;
    bool named = ad_named_out(c, 1) || ad_named_out(c, 2);
    if (!training && named)
        return ad_refuse(c, DG_SEMANTICS,
                         "running statistics outputs in inference mode");
    ad_drop_attr(c, "training_mode");
    if (!training) {
        ad_trim_outputs(c, 1);
        return 0;
    }
    IrNode *k = ad_node_in(c, c->domain, c->n, "BatchNormalization", 5, c->n->in, 5);
    if (!k)
        return -1;
    ad_set_attr_f(c, k, "epsilon", ad_attr_f(c, "epsilon"));
    ad_set_attr_f(c, k, "momentum", ad_attr_f(c, "momentum"));
    for (size_t i = 0; i < 3; i++)
        ad_move_output(c, i, k, i);
    /* the node is rebuilt, not renamed: it keeps the name users know */
    free(k->name);
    k->name = c->n->name;
    c->n->name = NULL;
    ir_node_delete(c->n);
    return ad_infer(c, k);
}

/* BatchNormalization 15 -> 14: 15 let scale/B and mean/var have their
 * own types; 14 binds scale and B to X's type (mean and var share one). */
static int ad_nm_bn_15_14(AdCtx *c)
{
    int32_t t[5];
    for (size_t i = 0; i < 5; i++)
        if (!(t[i] = ad_elem(ad_in(c, i))))
            return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of input %zu is unknown", i);
    if (t[1] != t[0] || t[2] != t[0] || t[3] != t[4])
        return ad_refuse(c, DG_TYPE,
                         "scale and B must have X's type, mean and var one type, at "
                         "opset 14");
    return 0;
}

/* ---- MeanVarianceNormalization, LayerNormalization, RMSNormalization -- */

/* MeanVarianceNormalization below 9: the function body,
 * Y = (X - mean) / (sqrt(variance) + 1e-9) over `axes`, built with the
 * ReduceMean of opset 8 (axes attribute). */
static int ad_nm_mvn_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    int r = ad_rank(x);
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of X is unknown");
    IrAttr *a = ad_attr(c, "axes");
    int64_t axes[16] = {0, 2, 3};
    size_t n = a ? a->n_ints : 3;
    if (n > 16)
        return ad_refuse(c, DG_ATTRIBUTE, "too many axes");
    for (size_t i = 0; a && i < n; i++)
        axes[i] = a->ints[i];
    for (size_t i = 0; i < n; i++) {
        if (axes[i] < 0 && r < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "negative axes need the rank of X, which is unknown");
        if (axes[i] < 0)
            axes[i] += r;
    }
    IrValue *mean = ad_reduce(c, "ReduceMean", x, n, axes, true);
    IrValue *d = ad_op2(c, "Sub", x, mean);
    IrValue *var = ad_reduce(c, "ReduceMean", ad_op2(c, "Mul", d, d), n, axes, true);
    IrValue *sd = ad_op2(c, "Add", ad_op1(c, "Sqrt", var),
                            ad_const_scalar(c, t, 1e-9));
    IrValue *outs[1] = {ad_op2(c, "Div", d, sd)};
    return ad_end(c, 1, outs);
}

/* The stash type of a LayerNormalization/RMSNormalization/
 * GroupNormalization node (the precision of its statistics), 0 after
 * refusing. */
static int32_t ad_nm_stash(AdCtx *c)
{
    int64_t st = ad_attr_i(c, "stash_type");
    if (st != 1 && st != 10 && st != 11 && st != 16) {
        ad_refuse(c, DG_ATTRIBUTE, "stash_type %lld is not a floating type", (long long)st);
        return 0;
    }
    return (int32_t)st;
}

/* LayerNormalization below 17 (the spec's function body): in the stash
 * type, Mean = mean(X) over the axes from `axis` on, D = X - Mean,
 * InvStdDev = 1 / sqrt(mean(D^2) + epsilon), Y = D / sqrt(...) * Scale +
 * B, cast to X's type once at the end (the body casts before scaling,
 * rounding twice more in a float16 X; the value is the same up to those
 * roundings, and closer to it); Mean and InvStdDev are the optional
 * outputs. */
static int ad_nm_ln_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x), st = ad_nm_stash(c);
    if (!st)
        return -1;
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of X is unknown");
    int64_t axes[16];
    size_t n = ad_nm_tail_axes(c, ad_attr_i(c, "axis"), ad_rank(x), axes);
    if (!n)
        return -1;
    IrValue *xu = ad_cast(c, x, st);
    IrValue *mean = ad_reduce(c, "ReduceMean", xu, n, axes, true);
    IrValue *d = ad_op2(c, "Sub", xu, mean);
    IrValue *var = ad_reduce(c, "ReduceMean", ad_op2(c, "Mul", d, d), n, axes, true);
    IrValue *eps = ad_const_scalar(c, st, ad_attr_f(c, "epsilon"));
    IrValue *sd = ad_op1(c, "Sqrt", ad_op2(c, "Add", var, eps));
    IrValue *y = ad_op2(c, "Mul", ad_op2(c, "Div", d, sd), ad_cast(c, ad_in(c, 1), st));
    if (ad_in(c, 2))
        y = ad_op2(c, "Add", y, ad_cast(c, ad_in(c, 2), st));
    IrValue *inv = ad_named_out(c, 2) ? ad_op1(c, "Reciprocal", sd) : NULL;
    IrValue *outs[3] = {ad_cast(c, y, t), mean, inv};
    return ad_end(c, 3, outs);
}

/* RMSNormalization below 23 (the function body): in the stash type,
 * Y = X / sqrt(mean(X^2) + epsilon) * scale over the axes from `axis` on,
 * cast once at the end to scale's type (Y's type). */
static int ad_nm_rms_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *sc = ad_in(c, 1);
    int32_t st = ad_nm_stash(c), v = ad_elem(sc);
    if (!st)
        return -1;
    if (!v || !ad_elem(x))
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of X or scale is unknown");
    int64_t axes[16];
    size_t n = ad_nm_tail_axes(c, ad_attr_i(c, "axis"), ad_rank(x), axes);
    if (!n)
        return -1;
    IrValue *xu = ad_cast(c, x, st);
    IrValue *ms = ad_reduce(c, "ReduceMean", ad_op2(c, "Mul", xu, xu), n, axes, true);
    IrValue *eps = ad_const_scalar(c, st, ad_attr_f(c, "epsilon"));
    IrValue *rms = ad_op1(c, "Sqrt", ad_op2(c, "Add", ms, eps));
    IrValue *y = ad_op2(c, "Mul", ad_op2(c, "Div", xu, rms), ad_cast(c, sc, st));
    IrValue *outs[1] = {ad_cast(c, y, v)};
    return ad_end(c, 1, outs);
}

/* ---- GroupNormalization --------------------------------------------- */

/* The normalized groups of X in the type `st`: X viewed as
 * [N, G, C/G * D1 * ...], minus the mean of each group, over
 * sqrt(variance + epsilon). */
static IrValue *ad_nm_gn_core(AdCtx *c, int32_t st)
{
    int64_t g = ad_attr_i(c, "num_groups");
    int64_t shape[3] = {0, g, -1}, ax[1] = {2};
    IrValue *x3 = ad_reshape(c, ad_cast(c, ad_in(c, 0), st), 3, shape);
    IrValue *mean = ad_reduce(c, "ReduceMean", x3, 1, ax, true);
    IrValue *d = ad_op2(c, "Sub", x3, mean);
    IrValue *var = ad_reduce(c, "ReduceMean", ad_op2(c, "Mul", d, d), 1, ax, true);
    IrValue *eps = ad_const_scalar(c, st, ad_attr_f(c, "epsilon"));
    IrValue *sd = ad_op1(c, "Sqrt", ad_op2(c, "Add", var, eps));
    return ad_op2(c, "Div", d, sd);
}

/* GroupNormalization-18 (one scale and bias per group) as other ops, at
 * c->build_opset: the normalized [N, G, -1] groups times scale and plus
 * bias reshaped to [G, 1], reshaped back to X's shape. Computed in X's
 * type, as version 18 has no stash_type. */
static int ad_nm_gn18_expand(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of X is unknown");
    int64_t col[2] = {-1, 1};
    IrValue *nrm = ad_nm_gn_core(c, t);
    IrValue *y = ad_op2(c, "Mul", nrm, ad_reshape(c, ad_in(c, 1), 2, col));
    y = ad_op2(c, "Add", y, ad_reshape(c, ad_in(c, 2), 2, col));
    IrValue *outs[1] = {ad_op2(c, "Reshape", y, ad_op1(c, "Shape", ad_in(c, 0)))};
    return ad_end(c, 1, outs);
}

/* GroupNormalization-21 (one scale and bias per channel) as other ops
 * (the version-18 form is deprecated, so the step 21 -> 20 expands it):
 * the normalized groups in the stash type, cast to X's type, viewed as
 * [N, C, -1], times scale and plus bias reshaped to [1, C, 1], reshaped
 * back to X's shape (the spec's function body). */
static int ad_nm_gn21_expand(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0)), st = ad_nm_stash(c);
    if (!st)
        return -1;
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of X is unknown");
    int64_t nc[3] = {0, 0, -1}, one[3] = {1, -1, 1};
    IrValue *xs = ad_op1(c, "Shape", ad_in(c, 0));
    IrValue *nrm = ad_op2(c, "Reshape", ad_nm_gn_core(c, st), xs);
    IrValue *n3 = ad_cast(c, ad_reshape(c, nrm, 3, nc), t);
    IrValue *y = ad_op2(c, "Mul", n3, ad_reshape(c, ad_in(c, 1), 3, one));
    y = ad_op2(c, "Add", y, ad_reshape(c, ad_in(c, 2), 3, one));
    IrValue *outs[1] = {ad_op2(c, "Reshape", y, xs)};
    return ad_end(c, 1, outs);
}

/* A per-group vector [G] repeated to one entry per channel [C]: reshaped
 * to [G, 1], expanded to [G, C/G], flattened. */
static IrValue *ad_nm_gn_per_channel(AdCtx *c, IrValue *v, int64_t g, int64_t ch)
{
    int64_t col[2] = {-1, 1}, wide[2] = {1, ch / g}, flat[1] = {-1};
    IrValue *e = ad_op2(c, "Expand", ad_reshape(c, v, 2, col),
                           ad_const_i64s(c, 2, wide));
    return ad_reshape(c, e, 1, flat);
}

/* GroupNormalization 18 -> 21: scale and bias went from one value per
 * group to one per channel (channel c is in group c / (C/G)), and
 * stash_type was added. With C known the vectors are repeated per
 * channel; otherwise the node is expanded into other ops. */
static int ad_nm_gn_18_21(AdCtx *c)
{
    const IrType *xt = ad_type(ad_in(c, 0));
    int64_t g = ad_attr_i(c, "num_groups");
    if (!xt || xt->kind != IR_TYPE_TENSOR || !xt->shape || xt->shape->rank < 2 ||
        xt->shape->dims[1].kind != IR_DIM_VALUE || g <= 0 ||
        xt->shape->dims[1].value % g != 0)
        return ad_nm_gn18_expand(c);
    int64_t ch = xt->shape->dims[1].value;
    IrValue *s = ad_nm_gn_per_channel(c, ad_in(c, 1), g, ch);
    IrValue *b = ad_nm_gn_per_channel(c, ad_in(c, 2), g, ch);
    if (c->refusal)
        return -1;
    ad_set_input(c, 1, s);
    ad_set_input(c, 2, b);
    return 0;
}

/* ---- the table ------------------------------------------------------ */

static const AdEntry ad_norm[] = {
    AD_UP("BatchNormalization", 1, 6, AD_ATTRS, ad_drop_consumed),
    AD_DOWN("BatchNormalization", 1, 6, AD_ATTRS, ad_nm_bn_6_1),
    AD_UP("BatchNormalization", 6, 7, AD_SEMANTIC, ad_nm_bn_6_7),
    AD_DOWN("BatchNormalization", 6, 7, AD_SEMANTIC, ad_nm_bn_7_6),
    AD_UP("BatchNormalization", 7, 9, AD_SEMANTIC, ad_nm_bn_7_9),
    AD_DOWN("BatchNormalization", 7, 9, AD_ATTRS, ad_nothing),
    AD_UP("BatchNormalization", 9, 14, AD_SEMANTIC, ad_nm_bn_9_14),
    AD_DOWN("BatchNormalization", 9, 14, AD_SEMANTIC, ad_nm_bn_14_9),
    AD_UP("BatchNormalization", 14, 15, AD_COMPATIBLE, NULL),
    AD_DOWN("BatchNormalization", 14, 15, AD_SEMANTIC, ad_nm_bn_15_14),

    AD_UP("InstanceNormalization", 1, 6, AD_ATTRS, ad_drop_consumed),
    AD_DOWN("InstanceNormalization", 1, 6, AD_ATTRS, ad_nothing),
    AD_BOTH("InstanceNormalization", 6, 22),
    AD_BOTH("LRN", 1, 13),
    AD_BOTH("LpNormalization", 1, 22),
    AD_BOTH("MeanVarianceNormalization", 9, 13),
    AD_GONE("MeanVarianceNormalization", 9, AD_EXPAND, ad_nm_mvn_expand),
    AD_GONE("LayerNormalization", 17, AD_EXPAND, ad_nm_ln_expand),
    AD_GONE("RMSNormalization", 23, AD_EXPAND, ad_nm_rms_expand),

    AD_GONE("GroupNormalization", 18, AD_EXPAND, ad_nm_gn18_expand),
    AD_UP("GroupNormalization", 18, 21, AD_SEMANTIC, ad_nm_gn_18_21),
    AD_DOWN("GroupNormalization", 18, 21, AD_EXPAND, ad_nm_gn21_expand),
};

const AdFamily ad_family_norm = {"norm", ad_norm, sizeof ad_norm / sizeof ad_norm[0]};
