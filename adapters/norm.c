/*
 * norm.c - adapters of the normalizations (BatchNormalization,
 * InstanceNormalization, LRN, LpNormalization, MeanVarianceNormalization,
 * LayerNormalization, GroupNormalization, RMSNormalization) and of the
 * attention ops (Attention, RotaryEmbedding, LinearAttention,
 * CausalConvWithState).
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

#include "adapters.h"

/* ---- outputs -------------------------------------------------------- */

/* Whether output i of c->n is named. */
static bool ad_nm_named(const AdCtx *c, size_t i)
{
    return i < c->n->n_out && c->n->out[i];
}

/* Whether v is read by some node or is a graph output. */
static bool ad_nm_used(const IrValue *v)
{
    return v && (v->n_uses > 0 || ir_value_is_graph_output(v));
}

/* Drops trailing left-out outputs of c->n while it has more than keep. */
static void ad_nm_trim_outputs(AdCtx *c, size_t keep)
{
    while (c->n->n_out > keep && !c->n->out[c->n->n_out - 1])
        c->n->n_out--;
}

/* Leaves output i of c->n out (the slot stays, empty); its value must be
 * unused. */
static int ad_nm_drop_out(AdCtx *c, size_t i)
{
    if (!ad_nm_named(c, i))
        return 0;
    const char *none[1] = {""};
    IrNode *t = ir_node_new(c->g, c->n, "Identity", NULL, "", 0, NULL, 1, none, c->err);
    if (!t) {
        c->reason = "internal";
        return -1;
    }
    ir_node_take_output(t, 0, c->n, i);
    ir_node_delete(t);
    return 0;
}

/* ---- building expansions ---------------------------------------------
 * Each builder returns output 0 of a node inserted before c->n and typed
 * by inference at c->build_opset, or NULL once anything failed (c->reason
 * is then set and every later builder returns NULL too), so an expansion
 * is written as a straight sequence checked once at the end. */

/* A new node (not yet inferred), or NULL after a failure. */
static IrNode *ad_nm_raw(AdCtx *c, const char *op, size_t n, IrValue *const *in,
                         size_t n_out)
{
    if (c->reason)
        return NULL;
    return ad_node_in(c, c->domain, c->n, op, n, in, n_out);
}

/* Infers k (its attributes set) and returns its output 0. */
static IrValue *ad_nm_fin(AdCtx *c, IrNode *k)
{
    if (!k || ad_infer(c, k) < 0)
        return NULL;
    return k->out[0];
}

static IrValue *ad_nm_i64s(AdCtx *c, size_t n, const int64_t *v)
{
    return c->reason ? NULL : ad_const_i64s(c, n, v);
}

static IrValue *ad_nm_scalar(AdCtx *c, int32_t dtype, double x)
{
    return c->reason ? NULL : ad_const_scalar(c, dtype, x);
}

/* ReduceMean over axes, dimensions kept: axes are an attribute below 18,
 * an input from 18. */
static IrValue *ad_nm_rmean(AdCtx *c, IrValue *x, size_t n, const int64_t *axes)
{
    if (c->build_opset >= 18) {
        IrValue *in[2] = {x, ad_nm_i64s(c, n, axes)};
        return ad_nm_fin(c, ad_nm_raw(c, "ReduceMean", 2, in, 1));
    }
    IrValue *in[1] = {x};
    IrNode *k = ad_nm_raw(c, "ReduceMean", 1, in, 1);
    if (k)
        ad_set_attr_ints(c, k, "axes", n, axes);
    return ad_nm_fin(c, k);
}

/* Reshape to a value holding the shape (opset >= 5). */
static IrValue *ad_nm_reshape_v(AdCtx *c, IrValue *x, IrValue *shape)
{
    return ad_op2(c, "Reshape", x, shape);
}

/* Reshape to a constant shape. */
static IrValue *ad_nm_reshape(AdCtx *c, IrValue *x, size_t n, const int64_t *shape)
{
    return ad_nm_reshape_v(c, x, ad_nm_i64s(c, n, shape));
}

/* Replaces c->n: output i moves to v's producer (when both exist). The
 * new nodes that read v (an intermediate that is also an output, e.g.
 * LayerNormalization's Mean) read the moved value instead. */
static int ad_nm_give(AdCtx *c, size_t i, IrValue *v)
{
    if (!ad_nm_named(c, i) || !v || !v->producer)
        return 0;
    IrNode *k = v->producer;
    if (v->n_uses > 0 && ir_value_replace_uses(v, c->n->out[i], c->err) < 0) {
        c->reason = "internal";
        return -1;
    }
    ad_move_output(c, i, k, v->producer_index);
    return 0;
}

/* Ends an expansion: checks it built, moves the outputs (vals[i] computes
 * output i; an input of c->n passed through unchanged gets an Identity),
 * deletes c->n and retypes the moved values. */
static int ad_nm_end(AdCtx *c, size_t n, IrValue *const *vals)
{
    if (c->reason)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (ad_nm_named(c, i) && !vals[i])
            return ad_refuse(c, "internal", "output %zu was not built", i);
    IrNode *k[8] = {0};
    IrValue *v[8] = {0};
    for (size_t i = 0; i < n && i < 8; i++) {
        v[i] = ad_nm_named(c, i) ? vals[i] : NULL;
        for (size_t j = 0; j < c->n->n_in && v[i]; j++)
            if (c->n->in[j] == v[i])
                v[i] = ad_op1(c, "Identity", v[i]);
    }
    vals = v;
    if (c->reason)
        return -1;
    for (size_t i = 0; i < n && i < 8; i++) {
        k[i] = vals[i] && ad_nm_named(c, i) ? vals[i]->producer : NULL;
        if (ad_nm_give(c, i, vals[i]) < 0)
            return -1;
    }
    ir_node_delete(c->n);
    for (size_t i = 0; i < n && i < 8; i++)
        if (k[i] && ad_infer(c, k[i]) < 0)
            return -1;
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
            ad_refuse(c, "attribute", "axis %lld is out of range", (long long)axis);
            return 0;
        }
        for (int64_t a = axis; a < rank; a++)
            axes[a - axis] = a;
        return (size_t)(rank - axis);
    }
    if (axis >= 0 || axis < -16) {
        ad_refuse(c, "shape-unknown", "the rank of X is unknown");
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
        if (ad_nm_named(c, i))
            return true;
    return false;
}

/* BatchNormalization / InstanceNormalization 1 -> 6: consumed_inputs (a
 * legacy in-place hint) removed. */
static int ad_nm_drop_consumed(AdCtx *c)
{
    ad_drop_attr(c, "consumed_inputs");
    return 0;
}

/* BatchNormalization 6 -> 1: version 1 requires consumed_inputs; mean and
 * var are updated in place exactly when the running statistics are
 * produced. The hint does not change any output. */
static int ad_nm_bn_6_1(AdCtx *c)
{
    int64_t s = ad_nm_named(c, 1) || ad_nm_named(c, 2) ? 1 : 0;
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
    bool test = ad_attr_i(c, "is_test", 0) != 0, stats = ad_nm_bn_stats(c);
    if (test == stats)
        return ad_refuse(c, "semantics",
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
    IrValue *eps = ad_nm_scalar(c, t, ad_attr_f(c, "epsilon", 1e-5f));
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
    if (ad_attr_i(c, "spatial", 1) != 0 || ad_rank(ad_in(c, 0)) == 2) {
        ad_drop_attr(c, "spatial");
        return 0;
    }
    if (ad_nm_bn_stats(c))
        return ad_refuse(c, "semantics",
                         "training with per-element statistics (spatial=0) has no "
                         "opset-9 form");
    int r = ad_rank(ad_in(c, 0));
    int32_t t = ad_elem(ad_in(c, 0));
    if (r < 0 || !t)
        return ad_refuse(c, "shape-unknown", "the rank or type of X is unknown");
    for (size_t i = 1; i < 5; i++)
        if (ad_rank(ad_in(c, i)) != r - 1)
            return ad_refuse(c, "shape",
                             "spatial=0 parameters must have X's shape without N");
    IrValue *y = ad_nm_bn_formula(c, t);
    IrValue *outs[1] = {y};
    return ad_nm_end(c, 1, outs);
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
        if (!ad_nm_named(c, i))
            continue;
        if (ad_nm_used(c->n->out[i]))
            return ad_refuse(c, "semantics",
                             "output %s (saved statistics) has no opset-14 form",
                             i == 3 ? "saved_mean" : "saved_var");
        if (ad_nm_drop_out(c, i) < 0)
            return -1;
    }
    ad_nm_trim_outputs(c, 3);
    if (!ad_nm_named(c, 1) && !ad_nm_named(c, 2))
        ad_nm_trim_outputs(c, 1);
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
            return ad_refuse(c, "type-unknown", "the type of input %zu is unknown", i);
        if (u != t)
            return ad_refuse(c, "type",
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
    bool training = ad_attr_i(c, "training_mode", 0) != 0;
    bool named = ad_nm_named(c, 1) || ad_nm_named(c, 2);
    if (!training && named)
        return ad_refuse(c, "semantics",
                         "running statistics outputs in inference mode");
    ad_drop_attr(c, "training_mode");
    if (!training) {
        ad_nm_trim_outputs(c, 1);
        return 0;
    }
    IrNode *k = ad_node_in(c, c->domain, c->n, "BatchNormalization", 5, c->n->in, 5);
    if (!k)
        return -1;
    ad_set_attr_f(c, k, "epsilon", ad_attr_f(c, "epsilon", 1e-5f));
    ad_set_attr_f(c, k, "momentum", ad_attr_f(c, "momentum", 0.9f));
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
            return ad_refuse(c, "type-unknown", "the type of input %zu is unknown", i);
    if (t[1] != t[0] || t[2] != t[0] || t[3] != t[4])
        return ad_refuse(c, "type",
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
        return ad_refuse(c, "type-unknown", "the type of X is unknown");
    IrAttr *a = ad_attr(c, "axes");
    int64_t axes[16] = {0, 2, 3};
    size_t n = a ? a->n_ints : 3;
    if (n > 16)
        return ad_refuse(c, "attribute", "too many axes");
    for (size_t i = 0; a && i < n; i++)
        axes[i] = a->ints[i];
    for (size_t i = 0; i < n; i++) {
        if (axes[i] < 0 && r < 0)
            return ad_refuse(c, "shape-unknown",
                             "negative axes need the rank of X, which is unknown");
        if (axes[i] < 0)
            axes[i] += r;
    }
    IrValue *mean = ad_nm_rmean(c, x, n, axes);
    IrValue *d = ad_op2(c, "Sub", x, mean);
    IrValue *var = ad_nm_rmean(c, ad_op2(c, "Mul", d, d), n, axes);
    IrValue *sd = ad_op2(c, "Add", ad_op1(c, "Sqrt", var),
                            ad_nm_scalar(c, t, 1e-9));
    IrValue *outs[1] = {ad_op2(c, "Div", d, sd)};
    return ad_nm_end(c, 1, outs);
}

/* The stash type of a LayerNormalization/RMSNormalization/
 * GroupNormalization node (the precision of its statistics), 0 after
 * refusing. */
static int32_t ad_nm_stash(AdCtx *c)
{
    int64_t st = ad_attr_i(c, "stash_type", 1);
    if (st != 1 && st != 10 && st != 11 && st != 16) {
        ad_refuse(c, "attribute", "stash_type %lld is not a floating type", (long long)st);
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
        return ad_refuse(c, "type-unknown", "the type of X is unknown");
    int64_t axes[16];
    size_t n = ad_nm_tail_axes(c, ad_attr_i(c, "axis", -1), ad_rank(x), axes);
    if (!n)
        return -1;
    IrValue *xu = ad_cast(c, x, st);
    IrValue *mean = ad_nm_rmean(c, xu, n, axes);
    IrValue *d = ad_op2(c, "Sub", xu, mean);
    IrValue *var = ad_nm_rmean(c, ad_op2(c, "Mul", d, d), n, axes);
    IrValue *eps = ad_nm_scalar(c, st, ad_attr_f(c, "epsilon", 1e-5f));
    IrValue *sd = ad_op1(c, "Sqrt", ad_op2(c, "Add", var, eps));
    IrValue *y = ad_op2(c, "Mul", ad_op2(c, "Div", d, sd), ad_cast(c, ad_in(c, 1), st));
    if (ad_in(c, 2))
        y = ad_op2(c, "Add", y, ad_cast(c, ad_in(c, 2), st));
    IrValue *inv = ad_nm_named(c, 2) ? ad_op1(c, "Reciprocal", sd) : NULL;
    IrValue *outs[3] = {ad_cast(c, y, t), mean, inv};
    return ad_nm_end(c, 3, outs);
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
        return ad_refuse(c, "type-unknown", "the type of X or scale is unknown");
    int64_t axes[16];
    size_t n = ad_nm_tail_axes(c, ad_attr_i(c, "axis", -1), ad_rank(x), axes);
    if (!n)
        return -1;
    IrValue *xu = ad_cast(c, x, st);
    IrValue *ms = ad_nm_rmean(c, ad_op2(c, "Mul", xu, xu), n, axes);
    IrValue *eps = ad_nm_scalar(c, st, ad_attr_f(c, "epsilon", 1e-5f));
    IrValue *rms = ad_op1(c, "Sqrt", ad_op2(c, "Add", ms, eps));
    IrValue *y = ad_op2(c, "Mul", ad_op2(c, "Div", xu, rms), ad_cast(c, sc, st));
    IrValue *outs[1] = {ad_cast(c, y, v)};
    return ad_nm_end(c, 1, outs);
}

/* ---- GroupNormalization --------------------------------------------- */

/* The normalized groups of X in the type `st`: X viewed as
 * [N, G, C/G * D1 * ...], minus the mean of each group, over
 * sqrt(variance + epsilon). */
static IrValue *ad_nm_gn_core(AdCtx *c, int32_t st)
{
    int64_t g = ad_attr_i(c, "num_groups", 0);
    int64_t shape[3] = {0, g, -1}, ax[1] = {2};
    IrValue *x3 = ad_nm_reshape(c, ad_cast(c, ad_in(c, 0), st), 3, shape);
    IrValue *mean = ad_nm_rmean(c, x3, 1, ax);
    IrValue *d = ad_op2(c, "Sub", x3, mean);
    IrValue *var = ad_nm_rmean(c, ad_op2(c, "Mul", d, d), 1, ax);
    IrValue *eps = ad_nm_scalar(c, st, ad_attr_f(c, "epsilon", 1e-5f));
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
        return ad_refuse(c, "type-unknown", "the type of X is unknown");
    int64_t col[2] = {-1, 1};
    IrValue *nrm = ad_nm_gn_core(c, t);
    IrValue *y = ad_op2(c, "Mul", nrm, ad_nm_reshape(c, ad_in(c, 1), 2, col));
    y = ad_op2(c, "Add", y, ad_nm_reshape(c, ad_in(c, 2), 2, col));
    IrValue *outs[1] = {ad_nm_reshape_v(c, y, ad_op1(c, "Shape", ad_in(c, 0)))};
    return ad_nm_end(c, 1, outs);
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
        return ad_refuse(c, "type-unknown", "the type of X is unknown");
    int64_t nc[3] = {0, 0, -1}, one[3] = {1, -1, 1};
    IrValue *xs = ad_op1(c, "Shape", ad_in(c, 0));
    IrValue *nrm = ad_nm_reshape_v(c, ad_nm_gn_core(c, st), xs);
    IrValue *n3 = ad_cast(c, ad_nm_reshape(c, nrm, 3, nc), t);
    IrValue *y = ad_op2(c, "Mul", n3, ad_nm_reshape(c, ad_in(c, 1), 3, one));
    y = ad_op2(c, "Add", y, ad_nm_reshape(c, ad_in(c, 2), 3, one));
    IrValue *outs[1] = {ad_nm_reshape_v(c, y, xs)};
    return ad_nm_end(c, 1, outs);
}

/* A per-group vector [G] repeated to one entry per channel [C]: reshaped
 * to [G, 1], expanded to [G, C/G], flattened. */
static IrValue *ad_nm_gn_per_channel(AdCtx *c, IrValue *v, int64_t g, int64_t ch)
{
    int64_t col[2] = {-1, 1}, wide[2] = {1, ch / g}, flat[1] = {-1};
    IrValue *e = ad_op2(c, "Expand", ad_nm_reshape(c, v, 2, col),
                           ad_nm_i64s(c, 2, wide));
    return ad_nm_reshape(c, e, 1, flat);
}

/* GroupNormalization 18 -> 21: scale and bias went from one value per
 * group to one per channel (channel c is in group c / (C/G)), and
 * stash_type was added. With C known the vectors are repeated per
 * channel; otherwise the node is expanded into other ops. */
static int ad_nm_gn_18_21(AdCtx *c)
{
    const IrType *xt = ad_type(ad_in(c, 0));
    int64_t g = ad_attr_i(c, "num_groups", 0);
    if (!xt || xt->kind != IR_TYPE_TENSOR || !xt->shape || xt->shape->rank < 2 ||
        xt->shape->dims[1].kind != IR_DIM_VALUE || g <= 0 ||
        xt->shape->dims[1].value % g != 0)
        return ad_nm_gn18_expand(c);
    int64_t ch = xt->shape->dims[1].value;
    IrValue *s = ad_nm_gn_per_channel(c, ad_in(c, 1), g, ch);
    IrValue *b = ad_nm_gn_per_channel(c, ad_in(c, 2), g, ch);
    if (c->reason)
        return -1;
    ad_set_input(c, 1, s);
    ad_set_input(c, 2, b);
    return 0;
}

/* ---- Attention ------------------------------------------------------ */

/* A known dimension d of v (negative d counts from the back), or -1. */
static int64_t ad_nm_dim(const IrValue *v, int d)
{
    return ad_dim(v, d < 0 ? ad_rank(v) + d : d);
}

/* The total key length (past + new) of an Attention node, or -1. */
static int64_t ad_nm_attn_total(const AdCtx *c)
{
    IrValue *k = ad_in(c, 1), *pk = ad_in(c, 4);
    int r = ad_rank(k);
    int64_t kv = r == 4 ? ad_nm_dim(k, 2) : r == 3 ? ad_nm_dim(k, 1) : -1;
    int64_t past = pk ? ad_nm_dim(pk, 2) : 0;
    return kv < 0 || past < 0 ? -1 : kv + past;
}

/* Attention 23 <-> 24 and the mask: at 23 attn_mask broadcasts to the
 * total key length (its last dim is 1 or that length); from 24 a shorter
 * last dim is padded with -inf instead, so a last dim of 1 means
 * something else unless the total length is 1. Refuses unless the mask
 * is absent or its last dim is known to be the total length (or, going
 * up with the total unknown, known to be more than 1: at 23 it then is
 * the total). */
static int ad_nm_attn_mask(AdCtx *c, bool up)
{
    IrValue *m = ad_in(c, 3);
    if (!m)
        return 0;
    int64_t md = ad_nm_dim(m, -1), total = ad_nm_attn_total(c);
    if (md >= 0 && md == total)
        return 0;
    if (up && md > 1 && total < 0)
        return 0;
    return ad_refuse(c, "shape",
                     "attn_mask's last dim must be known to equal the total key "
                     "length (padding from 24, broadcasting before)");
}

/* Attention 23 -> 24: nonpad_kv_seqlen added (optional), the short mask
 * rule changed (see ad_nm_attn_mask). */
static int ad_nm_attn_23_24(AdCtx *c)
{
    return ad_nm_attn_mask(c, true);
}

/* 0, 1, ..., n-1 as an INT64 constant of shape dims (n elements). */
static IrValue *ad_nm_iota(AdCtx *c, int64_t n, size_t nd, const int64_t *dims)
{
    if (c->reason)
        return NULL;
    int64_t *v = ir_alloc_array((size_t)(n ? n : 1), sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = i;
    IrValue *r = ad_const_tensor(c, 7, nd, dims, v, (size_t)n * sizeof *v);
    free(v);
    return r;
}

/* nonpad_kv_seqlen (24) as an attn_mask at 23: key j of batch b is seen
 * when j < nonpad[b] and, with is_causal, j < i + nonpad[b] - q_len + 1
 * (24 offsets the causal diagonal so); that bool [B, 1, Sq, T] mask is and-ed
 * with a bool attn_mask, or turned into 0 / -inf and added to a float
 * one (as the bias adds them), and is_causal is dropped. */
static int ad_nm_attn_nonpad(AdCtx *c)
{
    IrValue *m = ad_in(c, 3), *np = ad_in(c, 6);
    int32_t mt = m ? ad_elem(m) : 9;
    int rank = ad_rank(ad_in(c, 0));
    int64_t sq = ad_nm_dim(ad_in(c, 0), rank == 4 ? 2 : 1), total = ad_nm_attn_total(c);
    if ((rank != 3 && rank != 4) || sq < 0 || total < 0)
        return ad_refuse(c, "shape-unknown", "nonpad_kv_seqlen needs the sequence lengths");
    if (mt != 9 && mt != 1 && mt != 10 && mt != 11 && mt != 16)
        return ad_refuse(c, "type", "a mask of this type cannot take nonpad_kv_seqlen");
    int64_t col[4] = {-1, 1, 1, 1}, trow[1] = {total}, qcol[2] = {sq, 1};
    IrValue *npc = ad_nm_reshape(c, np, 4, col), *j = ad_nm_iota(c, total, 1, trow);
    IrValue *keep = ad_op2(c, "Less", j, npc);
    if (ad_attr_i(c, "is_causal", 0)) {
        int64_t back = sq - 1;
        IrValue *pos = ad_op2(c, "Add", ad_nm_iota(c, sq, 2, qcol),
                                 ad_op2(c, "Sub", npc, ad_nm_i64s(c, 1, &back)));
        keep = ad_op2(c, "And", keep, ad_op2(c, "Less", j, pos));
    }
    if (m && mt == 9) {
        keep = ad_op2(c, "And", keep, m);
    } else if (m) {
        IrValue *in[3] = {keep, ad_nm_scalar(c, mt, 0.0), ad_nm_scalar(c, mt, -INFINITY)};
        keep = ad_op2(c, "Add", m, ad_nm_fin(c, ad_nm_raw(c, "Where", 3, in, 1)));
    }
    if (c->reason)
        return -1;
    ad_set_input(c, 3, keep);
    ir_node_set_input(c->n, 6, NULL);
    ad_trim_inputs(c->n);
    ad_drop_attr(c, "is_causal");
    return 0;
}

/* Attention 24 -> 23: nonpad_kv_seqlen does not exist at 23 and becomes
 * part of the mask (ad_nm_attn_nonpad); the mask rule as in
 * ad_nm_attn_mask. */
static int ad_nm_attn_24_23(AdCtx *c)
{
    if (ad_nm_attn_mask(c, false) < 0)
        return -1;
    if (ad_in(c, 6))
        return ad_nm_attn_nonpad(c);
    ad_trim_inputs(c->n);
    return 0;
}

/* Attention 25 -> 24: left/right_window_size added with default -1 (no
 * window), which is what 24 does. */
static int ad_nm_attn_25_24(AdCtx *c)
{
    if (ad_drop_attr_if(c, "left_window_size", -1) < 0)
        return -1;
    return ad_drop_attr_if(c, "right_window_size", -1);
}

/* ---- opset >= 13 builders (the attention expansions are built at 22) -- */

/* x[..., start:end:step, ...] along one axis. */
static IrValue *ad_nm_slice(AdCtx *c, IrValue *x, int64_t start, int64_t end,
                            int64_t axis, int64_t step)
{
    IrValue *in[5] = {x, ad_nm_i64s(c, 1, &start), ad_nm_i64s(c, 1, &end),
                      ad_nm_i64s(c, 1, &axis), ad_nm_i64s(c, 1, &step)};
    return ad_nm_fin(c, ad_nm_raw(c, "Slice", 5, in, 1));
}

static IrValue *ad_nm_unsq(AdCtx *c, IrValue *x, int64_t axis)
{
    IrValue *in[2] = {x, ad_nm_i64s(c, 1, &axis)};
    return ad_nm_fin(c, ad_nm_raw(c, "Unsqueeze", 2, in, 1));
}

static IrValue *ad_nm_concat(AdCtx *c, IrValue *a, IrValue *b, int64_t axis)
{
    IrValue *in[2] = {a, b};
    IrNode *k = ad_nm_raw(c, "Concat", 2, in, 1);
    if (k)
        ad_set_attr_i(c, k, "axis", axis);
    return ad_nm_fin(c, k);
}

static IrValue *ad_nm_perm(AdCtx *c, IrValue *x, size_t n, const int64_t *perm)
{
    IrValue *in[1] = {x};
    IrNode *k = ad_nm_raw(c, "Transpose", 1, in, 1);
    if (k)
        ad_set_attr_ints(c, k, "perm", n, perm);
    return ad_nm_fin(c, k);
}

/* ---- RotaryEmbedding ------------------------------------------------ */

/* RotaryEmbedding below 23 (the function body): the first rotary_dim
 * entries of each head vector (all when the attribute is 0) are rotated
 * pairwise, the pairs being (i, i + rot/2), or (2i, 2i + 1) when
 * interleaved, by the cos/sin cache entries (looked up by position_ids
 * when given, the first rot/2 of each row): real = cos*x1 - sin*x2,
 * imag = sin*x1 + cos*x2; the rest of the vector is kept. A 3-D input is
 * viewed as [B, S, num_heads, head_size]; a 4-D one is [B, H, S, head],
 * so its cache rows broadcast over axis 1 instead of 2 (no transposes). */
static int ad_nm_rope_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *pos = ad_in(c, 3);
    int r = ad_rank(x);
    int64_t nh = ad_attr_i(c, "num_heads", 0), rd = ad_attr_i(c, "rotary_embedding_dim", 0);
    bool il = ad_attr_i(c, "interleaved", 0) != 0;
    if (r != 3 && r != 4)
        return ad_refuse(c, "shape-unknown", "the rank of X is unknown");
    if (r == 3 && nh <= 0)
        return ad_refuse(c, "attribute", "a 3-D input needs num_heads");
    int64_t hd = r == 4 ? ad_nm_dim(x, 3) : ad_nm_dim(x, 2) >= 0 ? ad_nm_dim(x, 2) / nh : -1;
    int64_t rot = rd ? rd : hd, half = rot / 2, head_ax = r == 4 ? 1 : 2;
    if (rot <= 0 || rot % 2)
        return ad_refuse(c, "shape-unknown", "the rotary dimension is unknown");
    int64_t heads[4] = {0, 0, nh, -1}, flat[3] = {0, 0, -1}, pairs[4] = {0, 0, 0, -1};
    IrValue *xin = r == 4 ? x : ad_nm_reshape(c, x, 4, heads);
    IrValue *xr = rd ? ad_nm_slice(c, xin, 0, rd, 3, 1) : xin;
    IrValue *xn = rd ? ad_nm_slice(c, xin, rd, INT64_MAX, 3, 1) : NULL;
    IrValue *cs = pos ? ad_op2(c, "Gather", ad_in(c, 1), pos) : ad_in(c, 1);
    IrValue *sn = pos ? ad_op2(c, "Gather", ad_in(c, 2), pos) : ad_in(c, 2);
    cs = ad_nm_unsq(c, ad_nm_slice(c, cs, 0, half, 2, 1), head_ax);
    sn = ad_nm_unsq(c, ad_nm_slice(c, sn, 0, half, 2, 1), head_ax);
    IrValue *x1 = il ? ad_nm_slice(c, xr, 0, INT64_MAX, 3, 2) : ad_nm_slice(c, xr, 0, half, 3, 1);
    IrValue *x2 = il ? ad_nm_slice(c, xr, 1, INT64_MAX, 3, 2)
                     : ad_nm_slice(c, xr, half, INT64_MAX, 3, 1);
    IrValue *re = ad_op2(c, "Sub", ad_op2(c, "Mul", cs, x1), ad_op2(c, "Mul", sn, x2));
    IrValue *im = ad_op2(c, "Add", ad_op2(c, "Mul", sn, x1), ad_op2(c, "Mul", cs, x2));
    IrValue *xo = il ? ad_nm_reshape(c, ad_nm_concat(c, ad_nm_unsq(c, re, -1),
                                                     ad_nm_unsq(c, im, -1), -1), 4, pairs)
                     : ad_nm_concat(c, re, im, -1);
    if (xn)
        xo = ad_nm_concat(c, xo, xn, -1);
    IrValue *outs[1] = {r == 4 ? xo : ad_nm_reshape(c, xo, 3, flat)};
    return ad_nm_end(c, 1, outs);
}

/* ---- Attention below 23 --------------------------------------------- */

/* The causal bias [sq, total] of type t as a constant: 0 where key j may
 * be seen by query i (j <= i + past), -inf elsewhere. */
static IrValue *ad_nm_causal_const(AdCtx *c, int32_t t, int64_t sq, int64_t total,
                                   int64_t past)
{
    size_t w = t == 11 ? 8 : t == 1 ? 4 : 2, n = (size_t)(sq * total);
    uint8_t ninf[8] = {0};
    switch (t) {
    case 1: ninf[2] = 0x80; ninf[3] = 0xff; break;
    case 11: ninf[6] = 0xf0; ninf[7] = 0xff; break;
    case 10: ninf[1] = 0xfc; break;
    case 16: ninf[0] = 0x80; ninf[1] = 0xff; break;
    default:
        ad_refuse(c, "type", "no causal mask of this type");
        return NULL;
    }
    uint8_t *buf = ir_alloc_array(n ? n : 1, w);
    for (int64_t i = 0; i < sq; i++)
        for (int64_t j = i + past + 1; j < total; j++)
            memcpy(buf + (size_t)(i * total + j) * w, ninf, w);
    int64_t dims[2] = {sq, total};
    IrValue *v = c->reason ? NULL : ad_const_tensor(c, t, 2, dims, buf, n * w);
    free(buf);
    return v;
}

/* The causal bias [sq, total]: a constant when small (it then converts to
 * any opset), else built at run time from two index vectors (key j is
 * seen when j < i + past + 1) so that long sequences do not store it. */
static IrValue *ad_nm_causal(AdCtx *c, int32_t t, int64_t sq, int64_t total,
                             int64_t past)
{
    if (sq * total <= 65536)
        return ad_nm_causal_const(c, t, sq, total, past);
    int64_t trow[1] = {total}, qcol[2] = {sq, 1}, lim = past + 1;
    IrValue *pos = ad_op2(c, "Add", ad_nm_iota(c, sq, 2, qcol), ad_nm_i64s(c, 1, &lim));
    IrValue *in[3] = {ad_op2(c, "Less", ad_nm_iota(c, total, 1, trow), pos),
                      ad_nm_scalar(c, t, 0.0), ad_nm_scalar(c, t, -INFINITY)};
    return ad_nm_fin(c, ad_nm_raw(c, "Where", 3, in, 1));
}

/* The sizes an Attention expansion needs, from attributes and types. */
typedef struct AdAttn {
    int rank;
    int32_t t;
    int64_t hq, hkv, d, dv, sq, past, total;
} AdAttn;

/* Reads the sizes; refuses when what the node uses is unknown. */
static int ad_nm_attn_sizes(AdCtx *c, AdAttn *a)
{
    IrValue *q = ad_in(c, 0), *k = ad_in(c, 1), *v = ad_in(c, 2), *pk = ad_in(c, 4);
    a->rank = ad_rank(q);
    a->t = ad_elem(q);
    if ((a->rank != 3 && a->rank != 4) || ad_rank(k) != a->rank || ad_rank(v) != a->rank)
        return ad_refuse(c, "shape-unknown", "Q, K and V must be known 3-D or 4-D");
    if (!a->t || ad_elem(k) != a->t || ad_elem(v) != a->t)
        return ad_refuse(c, "type", "Q, K and V must have one known type");
    if (a->rank == 4) {
        a->hq = ad_nm_dim(q, 1);
        a->hkv = ad_nm_dim(k, 1);
        a->d = ad_nm_dim(q, 3);
        a->dv = ad_nm_dim(v, 3);
    } else {
        a->hq = ad_attr_i(c, "q_num_heads", 0);
        a->hkv = ad_attr_i(c, "kv_num_heads", 0);
        a->d = a->hq > 0 && ad_nm_dim(q, 2) >= 0 ? ad_nm_dim(q, 2) / a->hq : -1;
        a->dv = a->hkv > 0 && ad_nm_dim(v, 2) >= 0 ? ad_nm_dim(v, 2) / a->hkv : -1;
    }
    a->sq = ad_nm_dim(q, a->rank == 4 ? 2 : 1);
    a->past = pk ? ad_nm_dim(pk, 2) : 0;
    a->total = ad_nm_attn_total(c);
    if (a->hq <= 0 || a->hkv <= 0 || a->hq % a->hkv)
        return ad_refuse(c, "shape-unknown", "the head counts are unknown");
    if (a->d <= 0 && !ad_attr(c, "scale"))
        return ad_refuse(c, "shape-unknown", "the head size is unknown");
    if (a->hq != a->hkv && (a->d <= 0 || a->dv <= 0))
        return ad_refuse(c, "shape-unknown", "grouped heads need the head sizes");
    if (ad_attr_i(c, "is_causal", 0) && (a->sq < 0 || a->total < 0 || a->past < 0))
        return ad_refuse(c, "shape-unknown", "a causal mask needs the sequence lengths");
    if (!ad_in(c, 4) != !ad_in(c, 5))
        return ad_refuse(c, "semantics", "past_key and past_value go together");
    return 0;
}

/* x [B, S, H*E] as [B, H, S, E] (4-D inputs are already so). */
static IrValue *ad_nm_attn_heads(AdCtx *c, const AdAttn *a, IrValue *x, int64_t h)
{
    if (a->rank == 4)
        return x;
    int64_t split[4] = {0, 0, h, -1}, perm[4] = {0, 2, 1, 3};
    return ad_nm_perm(c, ad_nm_reshape(c, x, 4, split), 4, perm);
}

/* Each of the hkv heads of x [B, hkv, T, e] repeated hq/hkv times in a
 * row: [B, hq, T, e] (query head h reads kv head h / (hq/hkv)). */
static IrValue *ad_nm_attn_repeat(AdCtx *c, const AdAttn *a, IrValue *x, int64_t e)
{
    if (a->hq == a->hkv)
        return x;
    int64_t rep[5] = {1, 1, a->hq / a->hkv, 1, 1}, shape[4] = {0, a->hq, -1, e};
    IrValue *u = ad_op2(c, "Expand", ad_nm_unsq(c, x, 2), ad_nm_i64s(c, 5, rep));
    return ad_nm_reshape(c, u, 4, shape);
}

/* The additive bias of the scores: attn_mask (bool: 0 / -inf, numbers as
 * they are) plus the causal mask; NULL when there is neither. */
static IrValue *ad_nm_attn_bias(AdCtx *c, const AdAttn *a)
{
    IrValue *m = ad_in(c, 3), *bias = NULL;
    if (m && ad_elem(m) == 9) {
        IrValue *in[3] = {m, ad_nm_scalar(c, a->t, 0.0), ad_nm_scalar(c, a->t, -INFINITY)};
        bias = ad_nm_fin(c, ad_nm_raw(c, "Where", 3, in, 1));
    } else if (m) {
        bias = ad_cast(c, m, a->t);
    }
    if (ad_attr_i(c, "is_causal", 0)) {
        IrValue *cm = ad_nm_causal(c, a->t, a->sq, a->total, a->past);
        bias = bias ? ad_op2(c, "Add", bias, cm) : cm;
    }
    return bias;
}

/* The softmax over the keys in softmax_precision (the scores' own type
 * when absent), back in the scores' type. */
static IrValue *ad_nm_attn_softmax(AdCtx *c, const AdAttn *a, IrValue *s)
{
    int32_t sp = (int32_t)ad_attr_i(c, "softmax_precision", a->t);
    IrValue *in[1] = {ad_cast(c, s, sp)};
    IrNode *k = ad_nm_raw(c, "Softmax", 1, in, 1);
    if (k)
        ad_set_attr_i(c, k, "axis", -1);
    return ad_cast(c, ad_nm_fin(c, k), a->t);
}

/* Attention below 23 (the function body): Q, K, V as [B, heads, S, E];
 * past keys/values prepended (they are present_key/present_value); K/V
 * heads repeated for grouped queries; scores = (Q*sqrt(scale)) x
 * (K*sqrt(scale))^T, scale 1/sqrt(head size) by default, softcapped
 * (softcap*tanh(s/softcap)), plus the mask bias; softmax over the keys,
 * 0 on rows whose bias is all -inf; Y = probabilities x V, back to
 * [B, S, heads*E] for 3-D inputs. qk_matmul_output is the scores after
 * the step its mode names. */
static int ad_nm_attn_expand(AdCtx *c)
{
    AdAttn a = {0};
    if (ad_nm_attn_sizes(c, &a) < 0)
        return -1;
    int64_t mode = ad_attr_i(c, "qk_matmul_output_mode", 0), tr[4] = {0, 1, 3, 2};
    int64_t back[4] = {0, 2, 1, 3}, flat[3] = {0, 0, -1}, last[1] = {-1};
    double scale = ad_attr(c, "scale") ? ad_attr_f(c, "scale", 1.0f) : 1.0 / sqrt((double)a.d);
    double cap = ad_attr_f(c, "softcap", 0.0f);
    if (mode < 0 || mode > 3)
        return ad_refuse(c, "attribute", "qk_matmul_output_mode %lld", (long long)mode);
    IrValue *q = ad_nm_attn_heads(c, &a, ad_in(c, 0), a.hq);
    IrValue *k = ad_nm_attn_heads(c, &a, ad_in(c, 1), a.hkv);
    IrValue *v = ad_nm_attn_heads(c, &a, ad_in(c, 2), a.hkv);
    if (ad_in(c, 4)) {
        k = ad_nm_concat(c, ad_in(c, 4), k, 2);
        v = ad_nm_concat(c, ad_in(c, 5), v, 2);
    }
    IrValue *kx = ad_nm_attn_repeat(c, &a, k, a.d), *vx = ad_nm_attn_repeat(c, &a, v, a.dv);
    IrValue *sq = ad_nm_scalar(c, a.t, sqrt(scale));
    IrValue *s = ad_op2(c, "MatMul", ad_op2(c, "Mul", q, sq),
                           ad_op2(c, "Mul", ad_nm_perm(c, kx, 4, tr), sq));
    IrValue *qk[4] = {s, s, s, NULL};
    if (cap != 0.0) {
        IrValue *cv = ad_nm_scalar(c, a.t, cap);
        s = ad_op2(c, "Mul", ad_op1(c, "Tanh", ad_op2(c, "Div", s, cv)), cv);
        qk[1] = qk[2] = s;
    }
    IrValue *bias = ad_nm_attn_bias(c, &a);
    if (bias)
        qk[2] = s = ad_op2(c, "Add", s, bias);
    IrValue *p = ad_nm_attn_softmax(c, &a, s);
    if (ad_in(c, 3)) {
        IrValue *rmax = ad_op2(c, "ReduceMax", bias, ad_nm_i64s(c, 1, last));
        IrValue *all = ad_op2(c, "Equal", rmax, ad_nm_scalar(c, a.t, -INFINITY));
        IrValue *in[3] = {all, ad_nm_scalar(c, a.t, 0.0), p};
        p = ad_nm_fin(c, ad_nm_raw(c, "Where", 3, in, 1));
    }
    qk[3] = p;
    IrValue *y = ad_op2(c, "MatMul", p, vx);
    if (a.rank == 3)
        y = ad_nm_reshape(c, ad_nm_perm(c, y, 4, back), 3, flat);
    IrValue *outs[4] = {y, k, v, qk[mode]};
    return ad_nm_end(c, 4, outs);
}

/* ---- CausalConvWithState -------------------------------------------- */

/* CausalConvWithState below 27 (the function body): the input with the
 * past state (zeros when absent) in front along the time axis, a
 * depthwise Conv (group = C) with the optional bias, silu (x * sigmoid(x),
 * in float) when asked; the present state is the last K-1 steps of the
 * padded input. Built at 26 with C and K known (Conv's group is an
 * attribute). */
static int ad_nm_ccws_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *w = ad_in(c, 1), *past = ad_in(c, 3);
    char buf[16];
    const char *act = ad_attr_s(c, "activation", "none", buf, sizeof buf);
    bool silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    int32_t t = ad_elem(x);
    int64_t ch = ad_nm_dim(w, 0), k = ad_nm_dim(w, 2);
    if (!silu && strcmp(act, "none") != 0)
        return ad_refuse(c, "attribute", "activation '%s' is unknown", act);
    if (ch <= 0 || k <= 0 || !t)
        return ad_refuse(c, "shape-unknown", "the channels, kernel size or type are unknown");
    IrValue *padded;
    if (past) {
        padded = ad_nm_concat(c, past, x, 2);
    } else {
        int64_t pads[6] = {0, 0, k - 1, 0, 0, 0};
        padded = ad_op2(c, "Pad", x, ad_nm_i64s(c, 6, pads));
    }
    IrValue *in[3] = {padded, w, ad_in(c, 2)};
    IrNode *cv = ad_nm_raw(c, "Conv", ad_in(c, 2) ? 3 : 2, in, 1);
    if (cv)
        ad_set_attr_i(c, cv, "group", ch);
    IrValue *y = ad_nm_fin(c, cv);
    if (silu) {
        IrValue *yf = ad_cast(c, y, 1);
        y = ad_cast(c, ad_op2(c, "Mul", yf, ad_op1(c, "Sigmoid", yf)), t);
    }
    IrValue *st = ad_nm_slice(c, padded, k > 1 ? -(k - 1) : INT64_MAX, INT64_MAX, 2, 1);
    IrValue *outs[2] = {y, st};
    return ad_nm_end(c, 2, outs);
}

/* ---- LinearAttention ------------------------------------------------ */

/* A node `op` appended to the subgraph g (inputs may be values of g or of
 * the enclosing graphs), one fresh output; NULL after a failure. Typed
 * later, when the Scan that owns g is inferred. */
static IrValue *ad_nm_bop(AdCtx *c, IrGraph *g, const char *op, size_t n,
                          IrValue *const *in)
{
    if (c->reason)
        return NULL;
    const char *ins[8];
    for (size_t i = 0; i < n && i < 8; i++) {
        if (!in[i])
            return ad_refuse(c, "internal", "a body input is missing"), NULL;
        ins[i] = in[i]->name;
    }
    /* g is not attached to a node yet, so fresh names (which look from
     * the top graph down) do not see its values: the counter keeps them
     * apart. */
    char base[64];
    int id = ++c->n_new;
    snprintf(base, sizeof base, "step_%s%d", op, id);
    char *nm = ir_graph_fresh_name(g, base);
    snprintf(base, sizeof base, "step_%s%d_y", op, id);
    char *on = ir_graph_fresh_name(g, base);
    const char *outs[1] = {on};
    IrNode *k = ir_node_new(g, NULL, op, NULL, nm, n, ins, 1, outs, c->err);
    free(nm);
    free(on);
    if (!k) {
        c->reason = "internal";
        return NULL;
    }
    return k->out[0];
}

static IrValue *ad_nm_bop2(AdCtx *c, IrGraph *g, const char *op, IrValue *a, IrValue *b)
{
    IrValue *in[2] = {a, b};
    return ad_nm_bop(c, g, op, 2, in);
}

/* x cast to float in the body (x itself when it is float). */
static IrValue *ad_nm_bcast(AdCtx *c, IrGraph *g, IrValue *x, int32_t from, int32_t to)
{
    if (from == to || !x)
        return x;
    IrValue *y = ad_nm_bop(c, g, "Cast", 1, &x);
    if (y)
        ir_node_set_attr(y->producer, ir_attr_int("to", to));
    return y;
}

/* A typed input of the body g: elem type t, rank r, unknown dims. */
static IrValue *ad_nm_bin_input(AdCtx *c, IrGraph *g, const char *base, int32_t t, size_t r)
{
    if (c->reason)
        return NULL;
    int64_t dims[4] = {-1, -1, -1, -1};
    char *nm = ir_graph_fresh_name(g, base);
    IrValueInfo *vi = ir_graph_add_input(g, nm, ir_type_tensor(t, r, dims));
    free(nm);
    if (!vi)
        return ad_refuse(c, "internal", "cannot add a body input"), NULL;
    return vi->value;
}

/* What a LinearAttention expansion needs to know. */
typedef struct AdLin {
    int32_t t;                   /* query/key/value type */
    int64_t hq, hkv, dk, dv;
    bool gated, delta;
    IrValue *m1, *m2, *two, *rep, *read, *scale;   /* outer constants */
} AdLin;

/* The Scan body of one time step (the function body's): in float,
 * decay the state by exp(decay) (gated rules), write k (x) r where r is
 * v, or beta * (v - state^T k) (delta rules), read q^T state (state heads
 * repeated for grouped queries) times scale. Inputs: state, q_t, k_t,
 * v_t, [decay_t], [beta_t]; outputs: new state, output_t. */
static IrGraph *ad_nm_lin_body(AdCtx *c, const AdLin *l)
{
    IrGraph *g = ir_graph_new(c->g);
    g->name = ir_strdup("linear_attention_step");
    IrValue *st = ad_nm_bin_input(c, g, "state_in", 1, 4);
    IrValue *q = ad_nm_bcast(c, g, ad_nm_bin_input(c, g, "q_t", l->t, 3), l->t, 1);
    IrValue *k = ad_nm_bcast(c, g, ad_nm_bin_input(c, g, "k_t", l->t, 3), l->t, 1);
    IrValue *v = ad_nm_bcast(c, g, ad_nm_bin_input(c, g, "v_t", l->t, 3), l->t, 1);
    IrValue *dec = l->gated ? ad_nm_bin_input(c, g, "decay_t", l->t, 3) : NULL;
    IrValue *beta = l->delta ? ad_nm_bin_input(c, g, "beta_t", l->t, 3) : NULL;
    if (dec) {
        IrValue *e = ad_nm_bop(c, g, "Exp", 1, (IrValue *[]){ad_nm_bcast(c, g, dec, l->t, 1)});
        st = ad_nm_bop2(c, g, "Mul", st, ad_nm_bop2(c, g, "Unsqueeze", e, l->m1));
    }
    IrValue *kcol = ad_nm_bop2(c, g, "Unsqueeze", k, l->m1), *r = v;
    if (beta) {
        IrValue *stt = ad_nm_bop(c, g, "Transpose", 1, &st);
        if (stt)
            ir_node_set_attr(stt->producer, ir_attr_ints("perm", 4, (int64_t[]){0, 1, 3, 2}));
        IrValue *got = ad_nm_bop2(c, g, "Squeeze", ad_nm_bop2(c, g, "MatMul", stt, kcol), l->m1);
        r = ad_nm_bop2(c, g, "Mul", ad_nm_bcast(c, g, beta, l->t, 1),
                       ad_nm_bop2(c, g, "Sub", v, got));
    }
    IrValue *out_st = ad_nm_bop2(c, g, "Add", st,
                                 ad_nm_bop2(c, g, "MatMul", kcol,
                                            ad_nm_bop2(c, g, "Unsqueeze", r, l->m2)));
    IrValue *rd = out_st;
    if (l->hq != l->hkv)
        rd = ad_nm_bop2(c, g, "Reshape",
                        ad_nm_bop2(c, g, "Expand", ad_nm_bop2(c, g, "Unsqueeze", out_st, l->two),
                                   l->rep), l->read);
    IrValue *o = ad_nm_bop2(c, g, "MatMul", ad_nm_bop2(c, g, "Unsqueeze", q, l->m2), rd);
    o = ad_nm_bop2(c, g, "Mul", l->scale, ad_nm_bop2(c, g, "Squeeze", o, l->m2));
    o = ad_nm_bcast(c, g, o, 1, l->t);
    if (c->reason) {
        ir_graph_free(g);
        return NULL;
    }
    int64_t d4[4] = {-1, l->hkv, l->dk, l->dv}, d3[3] = {-1, l->hq, l->dv};
    ir_graph_add_output(g, out_st, ir_type_tensor(1, 4, d4));
    ir_graph_add_output(g, o, ir_type_tensor(l->t, 3, d3));
    return g;
}

/* x [B, T, heads*E] as the scan sequence [T, B, heads, E] (E = -1: the
 * rest). */
static IrValue *ad_nm_lin_seq(AdCtx *c, IrValue *x, int64_t heads, int64_t e)
{
    int64_t shape[4] = {0, 0, heads, e}, perm[4] = {1, 0, 2, 3};
    return ad_nm_perm(c, ad_nm_reshape(c, x, 4, shape), 4, perm);
}

/* Reads sizes and rule; refuses what is unknown. */
static int ad_nm_lin_sizes(AdCtx *c, AdLin *l)
{
    char buf[16];
    const char *rule = ad_attr_s(c, "update_rule", "gated_delta", buf, sizeof buf);
    IrValue *q = ad_in(c, 0), *v = ad_in(c, 2);
    l->t = ad_elem(q);
    l->hq = ad_attr_i(c, "q_num_heads", 0);
    l->hkv = ad_attr_i(c, "kv_num_heads", 0);
    l->gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    l->delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!l->gated && !l->delta && strcmp(rule, "linear") != 0)
        return ad_refuse(c, "attribute", "update_rule '%s' is unknown", rule);
    if (l->hq <= 0 || l->hkv <= 0 || l->hq % l->hkv)
        return ad_refuse(c, "attribute", "the head counts are invalid");
    l->dk = ad_nm_dim(q, 2) >= 0 ? ad_nm_dim(q, 2) / l->hq : -1;
    l->dv = ad_nm_dim(v, 2) >= 0 ? ad_nm_dim(v, 2) / l->hkv : -1;
    if (!l->t || ad_elem(ad_in(c, 1)) != l->t || ad_elem(v) != l->t)
        return ad_refuse(c, "type", "query, key and value must have one known type");
    if (l->dk <= 0 || l->dv <= 0 || ad_rank(q) != 3)
        return ad_refuse(c, "shape-unknown", "the head sizes are unknown");
    if ((l->gated && !ad_in(c, 4)) || (l->delta && !ad_in(c, 5)))
        return ad_refuse(c, "semantics", "the update rule needs decay/beta");
    return 0;
}

/* LinearAttention below 27 (the function body): a Scan over the time
 * steps of the state recurrence (ad_nm_lin_body), from past_state or
 * zeros; the outputs go back to [B, T, q_heads*d_v], the final state is
 * present_state (in past_state's type, else the query's). Built at 26. */
static int ad_nm_lin_expand(AdCtx *c)
{
    AdLin l = {0};
    if (ad_nm_lin_sizes(c, &l) < 0)
        return -1;
    IrValue *q = ad_in(c, 0), *past = ad_in(c, 3);
    int64_t m1 = -1, m2 = -2, two = 2, rep[5] = {1, 1, l.hq / l.hkv, 1, 1};
    int64_t rd[4] = {0, l.hq, l.dk, l.dv}, sd[3] = {l.hkv, l.dk, l.dv};
    int64_t back[4] = {1, 0, 2, 3}, flat[3] = {0, 0, -1};
    double sc = ad_attr_f(c, "scale", 0.0f);
    l.m1 = ad_nm_i64s(c, 1, &m1);
    l.m2 = ad_nm_i64s(c, 1, &m2);
    l.two = ad_nm_i64s(c, 1, &two);
    l.rep = ad_nm_i64s(c, 5, rep);
    l.read = ad_nm_i64s(c, 4, rd);
    l.scale = ad_nm_scalar(c, 1, sc != 0.0 ? sc : 1.0 / sqrt((double)l.dk));
    IrValue *st0;
    if (past) {
        st0 = ad_cast(c, past, 1);
    } else {
        IrNode *bs = ad_nm_raw(c, "Shape", 1, &q, 1);
        if (bs)
            ad_set_attr_i(c, bs, "end", 1);
        IrValue *shape = ad_nm_concat(c, ad_nm_fin(c, bs), ad_nm_i64s(c, 3, sd), 0);
        st0 = ad_op2(c, "Expand", ad_nm_scalar(c, 1, 0.0), shape);
    }
    IrValue *in[6] = {st0, ad_nm_lin_seq(c, q, l.hq, -1),
                      ad_nm_lin_seq(c, ad_in(c, 1), l.hkv, -1),
                      ad_nm_lin_seq(c, ad_in(c, 2), l.hkv, -1)};
    size_t n = 4;
    if (l.gated)
        in[n++] = ad_nm_lin_seq(c, ad_in(c, 4), l.hkv, -1);
    if (l.delta) {
        int64_t bshape[4] = {0, 0, -1, 1}, perm[4] = {1, 0, 2, 3};
        in[n++] = ad_nm_perm(c, ad_nm_reshape(c, ad_in(c, 5), 4, bshape), 4, perm);
    }
    IrGraph *body = c->reason ? NULL : ad_nm_lin_body(c, &l);
    IrNode *scan = body ? ad_nm_raw(c, "Scan", n, in, 2) : NULL;
    if (!scan) {
        if (body)
            ir_graph_free(body);
        return c->reason ? -1 : ad_refuse(c, "internal", "no Scan");
    }
    ir_node_set_attr(scan, ir_attr_graph("body", body));
    ad_set_attr_i(c, scan, "num_scan_inputs", (int64_t)n - 1);
    if (ad_infer(c, scan) < 0)
        return -1;
    IrValue *y = ad_nm_reshape(c, ad_nm_perm(c, scan->out[1], 4, back), 3, flat);
    int32_t s = past ? ad_elem(past) : l.t;
    if (!s)
        return ad_refuse(c, "type-unknown", "the type of past_state is unknown");
    IrValue *outs[2] = {y, ad_cast(c, scan->out[0], s)};
    return ad_nm_end(c, 2, outs);
}

/* ---- the table ------------------------------------------------------ */

static const AdEntry ad_norm[] = {
    AD_UP("BatchNormalization", 1, 6, AD_ATTRS, ad_nm_drop_consumed),
    AD_DOWN("BatchNormalization", 1, 6, AD_ATTRS, ad_nm_bn_6_1),
    AD_UP("BatchNormalization", 6, 7, AD_SEMANTIC, ad_nm_bn_6_7),
    AD_DOWN("BatchNormalization", 6, 7, AD_SEMANTIC, ad_nm_bn_7_6),
    AD_UP("BatchNormalization", 7, 9, AD_SEMANTIC, ad_nm_bn_7_9),
    AD_DOWN("BatchNormalization", 7, 9, AD_ATTRS, ad_nothing),
    AD_UP("BatchNormalization", 9, 14, AD_SEMANTIC, ad_nm_bn_9_14),
    AD_DOWN("BatchNormalization", 9, 14, AD_SEMANTIC, ad_nm_bn_14_9),
    AD_UP("BatchNormalization", 14, 15, AD_COMPATIBLE, NULL),
    AD_DOWN("BatchNormalization", 14, 15, AD_SEMANTIC, ad_nm_bn_15_14),

    AD_UP("InstanceNormalization", 1, 6, AD_ATTRS, ad_nm_drop_consumed),
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

    AD_UP("Attention", 23, 24, AD_SEMANTIC, ad_nm_attn_23_24),
    AD_DOWN("Attention", 23, 24, AD_SEMANTIC, ad_nm_attn_24_23),
    AD_UP("Attention", 24, 25, AD_ATTRS, ad_nothing),
    AD_DOWN("Attention", 24, 25, AD_ATTRS, ad_nm_attn_25_24),
    AD_GONE("RotaryEmbedding", 23, AD_EXPAND, ad_nm_rope_expand),
    AD_GONE("Attention", 23, AD_EXPAND, ad_nm_attn_expand),
    AD_GONE("CausalConvWithState", 27, AD_EXPAND, ad_nm_ccws_expand),
    AD_GONE("LinearAttention", 27, AD_EXPAND, ad_nm_lin_expand),
};

const AdFamily ad_family_norm = {"norm", ad_norm, sizeof ad_norm / sizeof ad_norm[0]};
