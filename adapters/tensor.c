/*
 * tensor.c - adapters of the ops that build, cast, pick and place tensor
 * elements: Cast, CastLike, CenterCropPad, Compress, Constant,
 * ConstantOfShape, DepthToSpace, EyeLike, Gather, GatherElements,
 * GatherND, Identity, NonZero, OneHot, Range, ReverseSequence, Scatter,
 * ScatterElements, ScatterND, Shape, Size, SpaceToDepth, TensorScatter,
 * TopK, Trilu, Unique.
 *
 * Recurring ideas:
 * - Negative indices (accepted from opset 11 by the index ops) become
 *   non-negative for older versions: a constant is rewritten, otherwise
 *   idx + dim * (idx < 0) is computed at run time. The sign test runs on
 *   the indices cast to double (exact for the sign of every integer), so
 *   the expansion also lowers to Less-7, which only takes floats.
 * - Ops whose output an older opset cannot compute from run-time values
 *   (NonZero, Range, EyeLike, ConstantOfShape below 8) are folded into a
 *   constant when their inputs are known, and refused otherwise. A folded
 *   constant reaches the graph through an Identity (the node's output
 *   keeps its name, consumers and graph-output listing).
 * - Expansions are built for c->build_opset (the opset converted to), in
 *   the forms ops take there (attributes vs inputs: Reshape, Slice, Pad,
 *   ReduceSum, Cast's `to`).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters.h"
#include "../src/eval.h"

/* The largest constant an adapter writes into the model (folded outputs,
 * masks, index tables), in bytes. */
#define AD_T_MAX_CONST ((uint64_t)1 << 22)
#define AD_T_MAX_RANK 32

/* ---- reading -------------------------------------------------------- */

/* Every dim of v into dims (at most AD_T_MAX_RANK) and its rank; false
 * when the rank or any dim is unknown. */
static bool ad_t_static(const IrValue *v, int64_t *dims, int *rank)
{
    int r = ad_rank(v);
    if (r < 0 || r > AD_T_MAX_RANK)
        return false;
    for (int d = 0; d < r; d++)
        if ((dims[d] = ad_dim(v, d)) < 0)
            return false;
    *rank = r;
    return true;
}

/* Product of dims[from, to), or -1 on int64 overflow. */
static int64_t ad_t_prod_any(const int64_t *dims, int from, int to)
{
    int64_t p = 1;
    for (int d = from; d < to; d++) {
        if (dims[d] && p > INT64_MAX / dims[d])
            return -1;
        p *= dims[d];
    }
    return p;
}

/* Product of dims[from, to), or -1 past AD_T_MAX_CONST elements. */
static int64_t ad_t_prod(const int64_t *dims, int from, int to)
{
    int64_t p = 1;
    for (int d = from; d < to; d++) {
        if (dims[d] && p > (int64_t)AD_T_MAX_CONST / dims[d])
            return -1;
        p *= dims[d];
    }
    return p;
}

/* The constant tensor v holds, decoded (caller unrefs), or NULL. */
static EvValue *ad_t_const_ev(const IrValue *v)
{
    const IrTensor *t = ad_const(v);
    IrError e;
    return t ? ev_from_ir_tensor(t, &e) : NULL;
}

/* Whether v is known to hold no negative number: an unsigned type, or a
 * constant (including one shape arithmetic proved) without one. */
static bool ad_t_nonneg(const IrValue *v)
{
    int32_t dt = ad_elem(v);
    if (dt == 2 || dt == 4 || dt == 12 || dt == 13)
        return true;
    EvValue *x = ad_t_const_ev(v);
    if (x) {
        bool ok = x->dtype != EV_STRING;
        for (size_t k = 0; ok && k < x->numel; k++)
            ok = ev_get_f(x, k) > -1.0; /* truncates to >= 0 */
        ev_unref(x);
        return ok;
    }
    int64_t *iv;
    size_t n;
    if (!ad_const_ints(v, &iv, &n))
        return false;
    bool ok = true;
    for (size_t k = 0; ok && k < n; k++)
        ok = iv[k] >= 0;
    free(iv);
    return ok;
}

/* Normalizes axis `a` for rank r (+extra for ops whose axis indexes the
 * output); false when out of range or r is unknown and a < 0. */
static bool ad_t_axis(int64_t a, int r, int extra, int64_t *out)
{
    int64_t n = (int64_t)r + extra;
    if (a < 0) {
        if (r < 0 || a < -n)
            return false;
        a += n;
    } else if (r >= 0 && a >= n) {
        return false;
    }
    *out = a;
    return true;
}

static bool ad_t_is_int_index(int32_t dt)
{
    return dt == 6 || dt == 7;
}

/* ---- building ------------------------------------------------------- */

/* A node before c->n whose attributes come next (infer it with ad_t_out). */
static IrNode *ad_t_raw(AdCtx *c, const char *op, size_t n_in, IrValue *const *in,
                        size_t n_out)
{
    return ad_node_in(c, c->domain, c->n, op, n_in, in, n_out);
}

/* Infers k and gives its first output, or NULL. */
static IrValue *ad_t_out(AdCtx *c, IrNode *k)
{
    return k && ad_infer(c, k) == 0 ? k->out[0] : NULL;
}

static IrValue *ad_t_where(AdCtx *c, IrValue *cond, IrValue *a, IrValue *b)
{
    if (!cond || !a || !b)
        return NULL;
    IrValue *in[3] = {cond, a, b};
    IrNode *k = ad_node(c, c->n, "Where", 3, in, 1);
    return k ? k->out[0] : NULL;
}

static IrValue *ad_t_gather(AdCtx *c, IrValue *x, IrValue *idx, int64_t axis)
{
    if (!x || !idx)
        return NULL;
    IrValue *in[2] = {x, idx};
    IrNode *k = ad_t_raw(c, "Gather", 2, in, 1);
    if (!k)
        return NULL;
    ad_set_attr_i(c, k, "axis", axis);
    return ad_t_out(c, k);
}

static IrValue *ad_t_reshape(AdCtx *c, IrValue *x, size_t n, const int64_t *shape)
{
    if (!x)
        return NULL;
    if (c->build_opset >= 5) {
        IrValue *s = ad_const_i64s(c, n, shape);
        return s ? ad_op2(c, "Reshape", x, s) : NULL;
    }
    IrNode *k = ad_t_raw(c, "Reshape", 1, &x, 1);
    if (!k)
        return NULL;
    ad_set_attr_ints(c, k, "shape", n, shape);
    return ad_t_out(c, k);
}

/* Slice of x along n axes (starts/ends/axes as Slice takes them). */
static IrValue *ad_t_slice(AdCtx *c, IrValue *x, size_t n, const int64_t *starts,
                           const int64_t *ends, const int64_t *axes)
{
    if (!x)
        return NULL;
    if (c->build_opset >= 10) {
        IrValue *in[4] = {x, ad_const_i64s(c, n, starts), ad_const_i64s(c, n, ends),
                          ad_const_i64s(c, n, axes)};
        if (!in[1] || !in[2] || !in[3])
            return NULL;
        IrNode *k = ad_node(c, c->n, "Slice", 4, in, 1);
        return k ? k->out[0] : NULL;
    }
    IrNode *k = ad_t_raw(c, "Slice", 1, &x, 1);
    if (!k)
        return NULL;
    ad_set_attr_ints(c, k, "starts", n, starts);
    ad_set_attr_ints(c, k, "ends", n, ends);
    ad_set_attr_ints(c, k, "axes", n, axes);
    return ad_t_out(c, k);
}

/* Zero-padding of x by pads (2 * rank entries, begins then ends). */
static IrValue *ad_t_pad(AdCtx *c, IrValue *x, size_t n, const int64_t *pads)
{
    if (!x)
        return NULL;
    if (c->build_opset >= 11) {
        IrValue *p = ad_const_i64s(c, n, pads);
        return p ? ad_op2(c, "Pad", x, p) : NULL;
    }
    IrNode *k = ad_t_raw(c, "Pad", 1, &x, 1);
    if (!k)
        return NULL;
    ad_set_attr_ints(c, k, c->build_opset >= 2 ? "pads" : "paddings", n, pads);
    return ad_t_out(c, k);
}

/* ReduceSum or ReduceMax of x over one axis, without keeping it (axes
 * became an input at 13 for ReduceSum, at 18 for the others). */
static IrValue *ad_t_reduce(AdCtx *c, const char *op, IrValue *x, int64_t axis)
{
    if (!x)
        return NULL;
    IrNode *k;
    if (c->build_opset >= (strcmp(op, "ReduceSum") ? 18 : 13)) {
        IrValue *in[2] = {x, ad_const_i64s(c, 1, &axis)};
        if (!in[1])
            return NULL;
        k = ad_t_raw(c, op, 2, in, 1);
    } else {
        k = ad_t_raw(c, op, 1, &x, 1);
        if (k)
            ad_set_attr_ints(c, k, "axes", 1, &axis);
    }
    if (!k)
        return NULL;
    ad_set_attr_i(c, k, "keepdims", 0);
    return ad_t_out(c, k);
}

static IrValue *ad_t_transpose(AdCtx *c, IrValue *x, size_t n, const int64_t *perm)
{
    if (!x)
        return NULL;
    IrNode *k = ad_t_raw(c, "Transpose", 1, &x, 1);
    if (!k)
        return NULL;
    ad_set_attr_ints(c, k, "perm", n, perm);
    return ad_t_out(c, k);
}

/* A constant int64 tensor of the given dims holding v (refused when it
 * would be too large). */
static IrValue *ad_t_table(AdCtx *c, int rank, const int64_t *dims, const int64_t *v)
{
    int64_t n = ad_t_prod(dims, 0, rank);
    if (n < 0 || (uint64_t)n * 8 > AD_T_MAX_CONST) {
        ad_refuse(c, "too-large", "an index table would be too large");
        return NULL;
    }
    return ad_const_tensor(c, 7, (size_t)rank, dims, v, (size_t)n * 8);
}

static IrValue *ad_t_concat(AdCtx *c, IrValue *a, IrValue *b, int64_t axis)
{
    if (!a || !b)
        return NULL;
    IrValue *in[2] = {a, b};
    IrNode *k = ad_t_raw(c, "Concat", 2, in, 1);
    if (!k)
        return NULL;
    ad_set_attr_i(c, k, "axis", axis);
    return ad_t_out(c, k);
}

/* A decoded tensor as a constant value (not strings: a constant of
 * strings needs string_data, which the builder does not write). */
static IrValue *ad_t_const_of(AdCtx *c, const EvValue *v)
{
    if (v->dtype == EV_STRING) {
        ad_refuse(c, "type", "cannot build a constant of strings here");
        return NULL;
    }
    IrTensor *t = ev_to_ir_tensor(v, NULL);
    IrValue *r = NULL;
    if (t->raw.len > AD_T_MAX_CONST)
        ad_refuse(c, "too-large", "the constant would take %zu bytes", t->raw.len);
    else
        r = ad_const_tensor(c, v->dtype, v->rank, v->dims, t->raw.data, t->raw.len);
    ir_tensor_free(t);
    return r;
}

/* A 0-D constant of integer type dt (int32 or int64) holding v. */
static IrValue *ad_t_int(AdCtx *c, int32_t dt, int64_t v)
{
    if (dt == 6) {
        int32_t w = (int32_t)v;
        return ad_const_tensor(c, 6, 0, NULL, &w, sizeof w);
    }
    return ad_const_tensor(c, 7, 0, NULL, &v, sizeof v);
}

/* A 0-D zero of element type dt (not strings). */
static IrValue *ad_t_zero(AdCtx *c, int32_t dt)
{
    IrError e;
    EvValue *z = ev_tensor_new(dt, 0, NULL, &e);
    if (!z) {
        ad_refuse(c, "type", "no zero of type %s", ir_dtype_name(dt) ? ir_dtype_name(dt) : "?");
        return NULL;
    }
    IrValue *r = ad_t_const_of(c, z);
    ev_unref(z);
    return r;
}

/* Replaces c->n by the node computing y (its first output); constants
 * that only fed c->n go with it. */
static int ad_t_replace_by(AdCtx *c, IrValue *y)
{
    if (!y)
        return -1;
    /* Only constants (initializers, other nodes' outputs) are kept to drop
     * afterwards, each once: deleting c->n frees an input defined nowhere
     * (IR_VAL_UNDEF) that nothing else reads, or an output of c->n that it
     * reads itself, and dropping a constant frees it, so any other pointer
     * kept here would dangle. */
    IrValue *ins[8] = {NULL};
    size_t n = 0;
    for (size_t i = 0; i < c->n->n_in && n < 8; i++) {
        IrValue *v = c->n->in[i];
        bool seen = false;
        for (size_t j = 0; v && j < n; j++)
            seen = seen || ins[j] == v;
        if (v && !seen && (v->kind == IR_VAL_INIT ||
                           (v->kind == IR_VAL_NODE && v->producer != c->n)))
            ins[n++] = v;
    }
    ad_replace(c, y->producer);
    for (size_t i = 0; i < n; i++)
        if (ins[i])
            ad_drop_if_dead(c, ins[i]);
    return 0;
}

/* Replaces c->n (one output) by an Identity of v. */
static int ad_t_replace_value(AdCtx *c, IrValue *v)
{
    return ad_t_replace_by(c, ad_op1(c, "Identity", v));
}

/* Sets input i of c->n to v; the constant it replaces goes when dead. */
static void ad_t_swap_input(AdCtx *c, size_t i, IrValue *v)
{
    IrValue *old = ad_in(c, i);
    ad_set_input(c, i, v);
    if (old && old != v)
        ad_drop_if_dead(c, old);
}

/* Renames c->n to op (the same inputs, outputs and attributes). */
static void ad_t_rename(AdCtx *c, const char *op)
{
    free(c->n->op_type);
    c->n->op_type = ir_strdup(op);
}

/* idx + dim * (idx < 0): indices counted from the end made non-negative.
 * idx is int32 or int64; dim has idx's type and broadcasts against it. An
 * index below -dim stays negative, so the older op still rejects it. */
static IrValue *ad_t_wrap(AdCtx *c, IrValue *idx, IrValue *dim)
{
    if (!idx || !dim)
        return NULL;
    int32_t dt = ad_elem(idx);
    IrValue *neg = ad_op2(c, "Less", ad_cast(c, idx, 11), ad_const_scalar(c, 11, 0.0));
    return ad_op2(c, "Add", idx, ad_op2(c, "Mul", ad_cast(c, neg, dt), dim));
}

/* Dim `axis` of data as a 0-D value of type dt (a constant when known). */
static IrValue *ad_t_dim_value(AdCtx *c, IrValue *data, int64_t axis, int32_t dt)
{
    int64_t d = ad_dim(data, (int)axis);
    if (d >= 0)
        return ad_t_int(c, dt, d);
    IrValue *dim = ad_t_gather(c, ad_op1(c, "Shape", data), ad_t_int(c, 7, axis), 0);
    return ad_cast(c, dim, dt);
}

/* Makes input ii of c->n (indices into dim `axis` of input di) hold no
 * negative index: a constant is rewritten when the dim is known, anything
 * else is wrapped at run time. */
static int ad_t_fix_indices(AdCtx *c, size_t di, size_t ii, int64_t axis)
{
    IrValue *data = ad_in(c, di), *idx = ad_in(c, ii);
    if (!idx || ad_t_nonneg(idx))
        return 0;
    int32_t dt = ad_elem(idx);
    if (!ad_t_is_int_index(dt))
        return ad_refuse(c, "type-unknown", "the type of indices '%s' is unknown",
                         idx->name);
    if (!ad_t_axis(axis, ad_rank(data), 0, &axis))
        return ad_refuse(c, "shape-unknown",
                         "axis %lld needs the rank of '%s'", (long long)axis, data->name);
    int64_t d = ad_dim(data, (int)axis);
    EvValue *v = d >= 0 ? ad_t_const_ev(idx) : NULL;
    if (v) {
        for (size_t k = 0; k < v->numel; k++)
            if (ev_get_i(v, k) < 0)
                ev_set_i(v, k, ev_get_i(v, k) + d);
        IrValue *nv = ad_t_const_of(c, v);
        ev_unref(v);
        if (!nv)
            return -1;
        ad_t_swap_input(c, ii, nv);
        return 0;
    }
    IrValue *w = ad_t_wrap(c, idx, ad_t_dim_value(c, data, axis, dt));
    if (!w)
        return -1;
    ad_set_input(c, ii, w);
    return 0;
}

/* Advances a row-major coordinate over dims. */
static void ad_t_next(int64_t *coord, const int64_t *dims, int rank)
{
    for (int d = rank; d-- > 0;) {
        if (++coord[d] < dims[d])
            return;
        coord[d] = 0;
    }
}

/* ---- Cast, CastLike ------------------------------------------------- */

/* Cast 1 -> 6: `to` named the type as a string ("FLOAT"); from 6 it is the
 * TensorProto.DataType number. The conversion itself is the same. */
static int ad_cast_1_6(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "to");
    if (!a || a->ref_attr_name)
        return ad_refuse(c, "attribute", "'to' is not a type name given here");
    if (!a->has_s)
        return 0;
    int32_t d = os_dtype_from_name((const char *)a->s.data, a->s.len);
    if (!d)
        return ad_refuse(c, "attribute", "'to' names no known type");
    ad_set_attr_i(c, c->n, "to", d);
    return 0;
}

/* Cast 6 -> 1: the type number becomes its DataType name. */
static int ad_cast_6_1(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "to");
    if (!a || a->ref_attr_name || !a->has_i || a->i <= 0 || a->i > INT32_MAX ||
        !ir_dtype_name((int32_t)a->i))
        return ad_refuse(c, "attribute", "'to' is not a known type number");
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
        return ad_refuse(c, "type-unknown", "the element type of target_type '%s' is unknown",
                         t ? t->name : "");
    ad_t_rename(c, "Cast");
    if (c->build_opset < 6)
        ad_set_attr_s(c, c->n, "to", ir_dtype_name(to));
    else
        ad_set_attr_i(c, c->n, "to", to);
    ir_node_set_input(c->n, 1, NULL);
    ad_trim_inputs(c->n);
    ad_drop_if_dead(c, t);
    return 0;
}

/* ---- CenterCropPad -------------------------------------------------- */

/* CenterCropPad with run-time sizes: for the n named axes (constant
 * `axes`), v = in - target; crop = v * [v > 0] (the comparison in double,
 * exact here), pad = crop - v; Slice from crop / 2 to crop / 2 + in - crop,
 * then Pad pad / 2 before and the rest after, the per-axis amounts placed
 * into the full pads list by a Gather from [0, amounts...]. */
static int ad_ccp_dynamic(AdCtx *c, int r, size_t n, const int64_t *axes)
{
    IrValue *x = ad_in(c, 0);
    int64_t sel[AD_T_MAX_RANK] = {0}, zero = 0;
    for (size_t i = 0; i < n; i++)
        sel[axes[i]] = (int64_t)i + 1;
    IrValue *ax = ad_const_i64s(c, n, axes);
    IrValue *in = ad_t_gather(c, ad_op1(c, "Shape", x), ax, 0);
    IrValue *v = ad_op2(c, "Sub", in, ad_cast(c, ad_in(c, 1), 7));
    IrValue *pos = ad_op2(c, "Less", ad_const_scalar(c, 11, 0.0), ad_cast(c, v, 11));
    IrValue *crop = ad_op2(c, "Mul", v, ad_cast(c, pos, 7));
    IrValue *pad = ad_op2(c, "Sub", crop, v), *two = ad_t_int(c, 7, 2);
    IrValue *cs = ad_op2(c, "Div", crop, two);
    IrValue *ce = ad_op2(c, "Sub", ad_op2(c, "Add", cs, in), crop);
    IrValue *pb = ad_op2(c, "Div", pad, two), *pe = ad_op2(c, "Sub", pad, pb);
    IrValue *z = ad_const_i64s(c, 1, &zero), *sv = ad_const_i64s(c, (size_t)r, sel);
    IrValue *pads = ad_t_concat(c, ad_t_gather(c, ad_t_concat(c, z, pb, 0), sv, 0),
                                ad_t_gather(c, ad_t_concat(c, z, pe, 0), sv, 0), 0);
    IrValue *sin[4] = {x, cs, ce, ax};
    if (!pads || !sin[1] || !sin[2] || !sin[3])
        return -1;
    IrNode *sl = ad_node(c, c->n, "Slice", 4, sin, 1);
    if (!sl)
        return -1;
    return ad_t_replace_by(c, ad_op2(c, "Pad", sl->out[0], pads));
}

/* CenterCropPad below 18: each named axis is cropped (Slice from
 * (d - t) / 2) or zero-padded ((t - d) / 2 before, the rest after) to its
 * target size. With the target sizes constant and the input's dims on
 * those axes known, the amounts are constants; otherwise they are
 * computed (ad_ccp_dynamic). */
static int ad_ccp_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x);
    if (r < 0 || r > AD_T_MAX_RANK)
        return ad_refuse(c, "shape-unknown", "the rank of '%s' is unknown", x->name);
    IrAttr *ax = ad_attr(c, "axes");
    int64_t axes[AD_T_MAX_RANK], pads[2 * AD_T_MAX_RANK] = {0};
    int64_t cs[AD_T_MAX_RANK], ce[AD_T_MAX_RANK], ca[AD_T_MAX_RANK];
    size_t na = ax ? ax->n_ints : (size_t)r, nc = 0, np = 0;
    bool seen[AD_T_MAX_RANK] = {false}, bad = na > (size_t)r;
    for (size_t i = 0; !bad && i < na; i++) {
        bad = !ad_t_axis(ax ? ax->ints[i] : (int64_t)i, r, 0, &axes[i]) || seen[axes[i]];
        if (!bad)
            seen[axes[i]] = true;
    }
    if (bad)
        return ad_refuse(c, "attribute", "the axes do not fit the input");
    int64_t *shape = NULL;
    size_t n = 0;
    bool known = ad_const_ints(ad_in(c, 1), &shape, &n);
    if (known && n != na) {
        free(shape);
        return ad_refuse(c, "attribute", "shape has %zu sizes for %zu axes", n, na);
    }
    for (size_t i = 0; known && i < na; i++) {
        int64_t d = ad_dim(x, (int)axes[i]);
        known = d >= 0 && shape[i] >= 0;
        if (known && shape[i] < d) {
            cs[nc] = (d - shape[i]) / 2;
            ce[nc] = cs[nc] + shape[i];
            ca[nc++] = axes[i];
        } else if (known && shape[i] > d) {
            pads[axes[i]] = (shape[i] - d) / 2;
            pads[axes[i] + r] = shape[i] - d - pads[axes[i]];
            np++;
        }
    }
    free(shape);
    if (!known)
        return ad_ccp_dynamic(c, r, na, axes);
    IrValue *y = x;
    if (nc)
        y = ad_t_slice(c, y, nc, cs, ce, ca);
    if (np)
        y = ad_t_pad(c, y, 2 * (size_t)r, pads);
    if (y == x)
        y = ad_op1(c, "Identity", x);
    return ad_t_replace_by(c, y);
}

/* ---- Compress ------------------------------------------------------- */

/* Compress 11 -> 9: version 11 accepts a negative axis; it becomes
 * non-negative (needs the input's rank). */
static int ad_compress_11_9(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "axis");
    if (!a || !a->has_i || a->i >= 0)
        return 0;
    int64_t axis;
    if (!ad_t_axis(a->i, ad_rank(ad_in(c, 0)), 0, &axis))
        return ad_refuse(c, "shape-unknown", "negative axis %lld needs the input's rank",
                         (long long)a->i);
    ad_set_attr_i(c, c->n, "axis", axis);
    return 0;
}

/* Compress below 9: with a constant condition it is a Gather of the
 * positions where the condition holds (of the flattened input when there
 * is no axis). Entries past the input's length are an error in both. */
static int ad_compress_gone(AdCtx *c)
{
    int64_t *cv;
    size_t n;
    if (!ad_const_ints(ad_in(c, 1), &cv, &n))
        return ad_refuse(c, "not-constant", "the condition must be a constant");
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (cv[i])
            cv[m++] = (int64_t)i;
    IrValue *x = ad_in(c, 0);
    IrAttr *a = ad_attr(c, "axis");
    int64_t axis = 0, flat = -1;
    if (a && a->has_i)
        axis = a->i;
    else
        x = ad_t_reshape(c, x, 1, &flat);
    IrValue *iv = ad_const_i64s(c, m, cv);
    free(cv);
    return ad_t_replace_by(c, ad_t_gather(c, x, iv, axis));
}

/* ---- Constant ------------------------------------------------------- */

/* Constant 11 -> 9: a `sparse_value` becomes the dense `value` it stands
 * for (when that is small). */
static int ad_constant_11_9(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "sparse_value");
    if (!a)
        return 0;
    IrSparse *sp = a->sparse_tensor;
    if (a->ref_attr_name || !sp || !sp->values || sp->ndims > AD_T_MAX_RANK)
        return ad_refuse(c, "attribute", "sparse_value holds no sparse tensor here");
    IrError e;
    EvValue *vals = ev_from_ir_tensor(sp->values, &e);
    EvValue *ind = vals && sp->indices ? ev_from_ir_tensor(sp->indices, &e) : NULL;
    int64_t total = ad_t_prod(sp->dims, 0, (int)sp->ndims);
    size_t nnz = vals ? vals->numel : 0, nd = sp->ndims;
    bool bad = !vals || (nnz && !ind) || total < 0 || vals->rank != 1 ||
               (uint64_t)total * ev_dtype_size(vals->dtype) > AD_T_MAX_CONST ||
               (ind && !(ind->rank == 1 && ind->numel == nnz) &&
                !(ind->rank == 2 && ind->dims[0] == (int64_t)nnz &&
                  ind->dims[1] == (int64_t)nd));
    EvValue *dense = bad ? NULL : ev_tensor_new(vals->dtype, nd, sp->dims, &e);
    for (size_t k = 0; dense && k < nnz; k++) {
        int64_t lin = 0;
        if (ind->rank == 1) {
            lin = ev_get_i(ind, k);
        } else {
            for (size_t d = 0; d < nd && lin >= 0; d++) {
                int64_t i = ev_get_i(ind, k * nd + d);
                lin = i < 0 || i >= sp->dims[d] ? -1 : lin * sp->dims[d] + i;
            }
        }
        if (lin < 0 || lin >= total) {
            ev_unref(dense);
            dense = NULL;
            break;
        }
        ev_copy_elems(dense, (size_t)lin, vals, k, 1);
    }
    ev_unref(vals);
    ev_unref(ind);
    if (!dense)
        return ad_refuse(c, "attribute",
                         "sparse_value cannot become a small dense tensor");
    IrTensor *t = ev_to_ir_tensor(dense, NULL);
    ev_unref(dense);
    ad_drop_attr(c, "sparse_value");
    ir_node_set_attr(c->n, ir_attr_tensor("value", t));
    return 0;
}

/* Constant 9 -> 1: version 9 added every non-float type. In the main
 * graph such a constant becomes an initializer read through an Identity
 * (which takes every type); elsewhere the driver refuses the type. */
static int ad_constant_9_1(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "value");
    int32_t dt = a && a->t && a->t->has_data_type ? a->t->data_type : 0;
    if (!dt || dt == 1 || dt == 10 || dt == 11 || a->ref_attr_name || !c->m ||
        c->g != c->m->graph || c->fn)
        return 0;
    IrError e;
    EvValue *v = ev_from_ir_tensor(a->t, &e);
    if (!v)
        return ad_refuse(c, "attribute", "the value cannot be read: %s", e.msg);
    IrValue *k = ad_t_const_of(c, v);
    ev_unref(v);
    return k ? ad_t_replace_value(c, k) : -1;
}

/* A tensor for Constant's `value` of n strings (0-D when !list). */
static IrTensor *ad_t_strings(const IrBytes *s, size_t n, bool list)
{
    IrTensor *t = ir_alloc(sizeof *t);
    t->has_data_type = true;
    t->data_type = 8;
    t->ndims = list ? 1 : 0;
    t->dims = ir_alloc_array(1, sizeof *t->dims);
    t->dims[0] = (int64_t)n;
    t->n_string = n;
    t->string_data = ir_alloc_array(n ? n : 1, sizeof *t->string_data);
    for (size_t k = 0; k < n; k++) {
        t->string_data[k].len = s[k].len;
        t->string_data[k].data = ir_alloc(s[k].len + 1);
        if (s[k].len)
            memcpy(t->string_data[k].data, s[k].data, s[k].len);
    }
    return t;
}

/* Constant 12 -> 11: value_float(s), value_int(s), value_string(s) are
 * shorthands for a `value` tensor: FLOAT, INT64 or STRING, 0-D for the
 * single forms and 1-D for the lists. */
static int ad_constant_12_11(AdCtx *c)
{
    static const char *const names[] = {"value_float", "value_floats", "value_int",
                                        "value_ints", "value_string", "value_strings"};
    for (int w = 0; w < 6; w++) {
        IrAttr *a = ad_attr(c, names[w]);
        if (!a)
            continue;
        if (a->ref_attr_name)
            return ad_refuse(c, "attribute", "%s refers to a function attribute",
                             names[w]);
        bool list = w % 2 == 1;
        int64_t dim = 0;
        IrTensor *t = NULL;
        if (w == 0 || w == 1) {
            float one = a->f;
            dim = list ? (int64_t)a->n_floats : 1;
            t = ir_tensor_new(NULL, 1, list, &dim, list ? (const void *)a->floats : &one,
                              (size_t)dim * sizeof(float));
        } else if (w == 2 || w == 3) {
            int64_t one = a->i;
            dim = list ? (int64_t)a->n_ints : 1;
            t = ir_tensor_new(NULL, 7, list, &dim, list ? (const void *)a->ints : &one,
                              (size_t)dim * sizeof(int64_t));
        } else {
            t = list ? ad_t_strings(a->strings, a->n_strings, true)
                     : ad_t_strings(&a->s, 1, false);
        }
        ad_drop_attr(c, names[w]);
        ir_node_set_attr(c->n, ir_attr_tensor("value", t));
        return 0;
    }
    return 0;
}

/* ---- ConstantOfShape ------------------------------------------------ */

/* ConstantOfShape below 9: a constant tensor when the shape is a (small)
 * constant; otherwise the fill value, reshaped to n ones (n = the shape's
 * known length), tiled by the shape (Tile-6: the output dims are the
 * repeats exactly, zeros included); or, with n unknown, from opset 8,
 * Expand of the 0-D fill value to the shape (a scalar broadcast to S has
 * shape S exactly). */
static int ad_cos_gone(AdCtx *c)
{
    IrAttr *va = ad_attr(c, "value");
    IrError e;
    EvValue *val = va ? (va->t ? ev_from_ir_tensor(va->t, &e) : NULL)
                      : ev_scalar_new(EV_FLOAT, 0.0);
    if (!val || val->numel != 1) {
        ev_unref(val);
        return ad_refuse(c, "attribute", "value must hold one element");
    }
    EvValue *fill = ev_tensor_new(val->dtype, 0, NULL, &e);
    if (fill)
        ev_copy_elems(fill, 0, val, 0, 1);
    ev_unref(val);
    if (!fill)
        return ad_refuse(c, "type", "unsupported fill type");
    int64_t *shape;
    size_t n;
    EvValue *full = NULL;
    if (ad_const_ints(ad_in(c, 0), &shape, &n)) {
        bool known = n <= AD_T_MAX_RANK;
        for (size_t i = 0; known && i < n; i++)
            known = shape[i] >= 0;
        int64_t total = known ? ad_t_prod(shape, 0, (int)n) : -1;
        if (total >= 0 && (uint64_t)total * ev_dtype_size(fill->dtype) <= AD_T_MAX_CONST)
            full = ev_tensor_new(fill->dtype, n, shape, &e);
        for (int64_t k = 0; full && k < total; k++)
            ev_copy_elems(full, (size_t)k, fill, 0, 1);
        free(shape);
    }
    IrValue *y = NULL;
    if (full) {
        IrValue *v = ad_t_const_of(c, full);
        ev_unref(full);
        ev_unref(fill);
        return v ? ad_t_replace_value(c, v) : -1;
    }
    int64_t rank = ad_dim(ad_in(c, 0), 0), ones[AD_T_MAX_RANK];
    if (rank >= 0 && rank <= AD_T_MAX_RANK && c->build_opset >= 6) {
        for (int64_t d = 0; d < rank; d++)
            ones[d] = 1;
        IrValue *v = ad_t_reshape(c, ad_t_const_of(c, fill), (size_t)rank, ones);
        y = ad_op2(c, "Tile", v, ad_in(c, 0));
    } else if (c->build_opset >= 8) {
        y = ad_op2(c, "Expand", ad_t_const_of(c, fill), ad_in(c, 0));
    } else {
        ev_unref(fill);
        return ad_refuse(c, "not-constant",
                         "the shape must be a small constant or of known length");
    }
    ev_unref(fill);
    return ad_t_replace_by(c, y);
}

/* ---- DepthToSpace --------------------------------------------------- */

/* DepthToSpace 11 -> 1: version 11 added `mode`; DCR (the default) is the
 * old behaviour. CRD reads channel c*b*b + i*b + j where DCR reads
 * (i*b + j)*C' + c, so CRD = DCR after a Gather that permutes the
 * channels (needs the channel count). */
static int ad_d2s_11_1(AdCtx *c)
{
    char buf[8];
    const char *mode = ad_attr_s(c, "mode", "DCR", buf, sizeof buf);
    if (!strcmp(mode, "DCR")) {
        ad_drop_attr(c, "mode");
        return 0;
    }
    if (strcmp(mode, "CRD"))
        return ad_refuse(c, "attribute", "mode '%s' is not DCR or CRD", mode);
    IrValue *x = ad_in(c, 0);
    int64_t b = ad_attr_i(c, "blocksize", 0), C = ad_dim(x, 1);
    if (ad_rank(x) != 4 || C < 0)
        return ad_refuse(c, "shape-unknown", "CRD mode needs the channel count of '%s'",
                         x->name);
    if ((uint64_t)C * 8 > AD_T_MAX_CONST || b <= 0 || b > C || C % (b * b))
        return ad_refuse(c, "attribute", "blocksize %lld does not divide %lld channels",
                         (long long)b, (long long)C);
    int64_t cp = C / (b * b), *perm = ir_alloc_array((size_t)C, sizeof *perm);
    for (int64_t i = 0; i < b; i++)
        for (int64_t j = 0; j < b; j++)
            for (int64_t k = 0; k < cp; k++)
                perm[(i * b + j) * cp + k] = k * b * b + i * b + j;
    IrValue *g = ad_t_gather(c, x, ad_const_i64s(c, (size_t)C, perm), 1);
    free(perm);
    if (!g)
        return -1;
    ad_set_input(c, 0, g);
    ad_drop_attr(c, "mode");
    return 0;
}

/* ---- EyeLike -------------------------------------------------------- */

/* EyeLike below 9: a constant when the input's 2-D shape is known: ones
 * where column - row == k, zeros elsewhere, of `dtype` (default: the
 * input's type). */
static int ad_eyelike_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int64_t dims[AD_T_MAX_RANK];
    int r;
    if (!ad_t_static(x, dims, &r) || r != 2)
        return ad_refuse(c, "shape-unknown", "the 2-D shape of '%s' is unknown", x->name);
    int64_t dt = ad_attr(c, "dtype") ? ad_attr_i(c, "dtype", 0) : ad_elem(x);
    if (!dt)
        return ad_refuse(c, "type-unknown", "the type of '%s' is unknown", x->name);
    if (dt < 0 || dt > 16 || dt == EV_STRING || dt == EV_COMPLEX64 ||
        dt == EV_COMPLEX128 || !ev_dtype_size((int32_t)dt))
        return ad_refuse(c, "type", "dtype %lld is not supported", (long long)dt);
    int64_t total = ad_t_prod(dims, 0, 2), k = ad_attr_i(c, "k", 0);
    if (total < 0 || (uint64_t)total * ev_dtype_size((int32_t)dt) > AD_T_MAX_CONST)
        return ad_refuse(c, "too-large", "the identity matrix would be too large");
    IrError e;
    EvValue *y = ev_tensor_new((int32_t)dt, 2, dims, &e);
    if (!y)
        return ad_refuse(c, "type", "dtype %lld is not supported", (long long)dt);
    for (int64_t i = 0; k > -dims[0] && k < dims[1] && i < dims[0]; i++)
        if (i + k >= 0 && i + k < dims[1])
            ev_set_i(y, (size_t)(i * dims[1] + i + k), 1);
    IrValue *v = ad_t_const_of(c, y);
    ev_unref(y);
    return v ? ad_t_replace_value(c, v) : -1;
}

/* ---- Gather, GatherElements, GatherND ------------------------------- */

/* Gather 11 -> 1: version 11 accepts negative indices (from the end). */
static int ad_gather_11_1(AdCtx *c)
{
    return ad_t_fix_indices(c, 0, 1, ad_attr_i(c, "axis", 0));
}

/* GatherElements below 11: with static shapes, out[p] = data[p with
 * p[axis] = idx[p]] is a Gather from the flattened data at
 * sum(p[d] * stride[d], d != axis) + idx[p] * stride[axis]. An index out
 * of range is an error for GatherElements; the expansion only checks the
 * flat position, so such inputs (invalid for the op) are not caught. */
static int ad_gather_elements_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1);
    int64_t dd[AD_T_MAX_RANK], id[AD_T_MAX_RANK], axis;
    int r, q;
    if (!ad_t_static(data, dd, &r) || !ad_t_static(idx, id, &q) || q != r)
        return ad_refuse(c, "shape-unknown", "GatherElements needs static shapes here");
    if (!ad_t_axis(ad_attr_i(c, "axis", 0), r, 0, &axis))
        return ad_refuse(c, "attribute", "axis out of range");
    int32_t dt = ad_elem(idx);
    int64_t m = ad_t_prod(id, 0, q), total = ad_t_prod_any(dd, 0, r);
    if (!ad_t_is_int_index(dt))
        return ad_refuse(c, "type-unknown", "the type of indices is unknown");
    if (m < 0 || total < 0 || (uint64_t)m * 8 > AD_T_MAX_CONST)
        return ad_refuse(c, "too-large", "the index table would be too large");
    int64_t st[AD_T_MAX_RANK], coord[AD_T_MAX_RANK] = {0};
    for (int d = r; d-- > 0;)
        st[d] = d == r - 1 ? 1 : st[d + 1] * dd[d + 1];
    IrError e;
    EvValue *off = ev_tensor_new(EV_INT64, (size_t)q, id, &e);
    EvValue *cv = ad_t_const_ev(idx);
    bool bad = !off;
    for (int64_t k = 0; !bad && k < m; k++) {
        int64_t o = 0;
        for (int d = 0; d < r; d++)
            if (d != axis)
                o += coord[d] * st[d];
        if (cv) {
            int64_t i = ev_get_i(cv, (size_t)k);
            i = i < 0 ? i + dd[axis] : i;
            bad = i < 0 || i >= dd[axis];
            o += i * st[axis];
        }
        ((int64_t *)off->data)[k] = o;
        ad_t_next(coord, id, q);
    }
    if (bad) {
        ev_unref(off);
        ev_unref(cv);
        return ad_refuse(c, "semantics", "a constant index is out of range");
    }
    IrValue *flat = ad_t_const_of(c, off);
    if (!cv) {
        IrValue *i64 = ad_cast(c, idx, 7);
        IrValue *norm = ad_t_wrap(c, i64, ad_t_int(c, 7, dd[axis]));
        flat = ad_op2(c, "Add", ad_op2(c, "Mul", norm, ad_t_int(c, 7, st[axis])), flat);
    }
    ev_unref(off);
    ev_unref(cv);
    return ad_t_replace_by(c, ad_t_gather(c, ad_t_reshape(c, data, 1, &total), flat, 0));
}

/* The flat row sum(idx[..., j] * st[j]) of each index tuple of idx
 * (rank q, last dim k) into data dims dd, negative components counting
 * from the end of their dim: a constant when idx is one (an index out of
 * range is then refused), else computed (ReduceSum over the last axis). */
static IrValue *ad_t_nd_flat(AdCtx *c, IrValue *idx, int q, int64_t k, const int64_t *dd,
                             const int64_t *st)
{
    EvValue *cv = ad_t_const_ev(idx);
    if (!cv) {
        IrValue *norm = ad_t_wrap(c, idx, ad_const_i64s(c, (size_t)k, dd));
        return ad_t_reduce(c, "ReduceSum",
                           ad_op2(c, "Mul", norm, ad_const_i64s(c, (size_t)k, st)), q - 1);
    }
    int64_t mm = ad_t_prod(cv->dims, 0, q - 1);
    IrError e;
    EvValue *f = ev_tensor_new(EV_INT64, (size_t)q - 1, cv->dims, &e);
    bool bad = !f || mm < 0 || (uint64_t)mm * 8 > AD_T_MAX_CONST;
    for (int64_t t = 0; !bad && t < mm; t++) {
        int64_t o = 0;
        for (int64_t j = 0; !bad && j < k; j++) {
            int64_t i = ev_get_i(cv, (size_t)(t * k + j));
            i = i < 0 ? i + dd[j] : i;
            bad = i < 0 || i >= dd[j];
            o += i * st[j];
        }
        ((int64_t *)f->data)[t] = o;
    }
    ev_unref(cv);
    IrValue *v = NULL;
    if (bad)
        ad_refuse(c, "semantics", "a constant index is out of range or too many");
    else
        v = ad_t_const_of(c, f);
    ev_unref(f);
    return v;
}

/* GatherND below 11: with the data's shape known and k (the indices' last
 * dim) known, data is reshaped to [P, dims k..] (P = the product of the
 * first k dims) and gathered on axis 0 at the flat position
 * sum(idx[..., j] * stride[j]) of each index tuple; negative components
 * count from the end of their dim. */
static int ad_gathernd_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1);
    int64_t dd[AD_T_MAX_RANK];
    int r, q = ad_rank(idx);
    int64_t k = q >= 1 ? ad_dim(idx, q - 1) : -1;
    if (!ad_t_static(data, dd, &r) || k < 0 || k > r)
        return ad_refuse(c, "shape-unknown",
                         "GatherND needs the data's shape and the index depth here");
    int64_t st[AD_T_MAX_RANK], P = ad_t_prod_any(dd, 0, r);
    if (P < 0)
        return ad_refuse(c, "too-large", "the data is too large");
    P = ad_t_prod_any(dd, 0, (int)k);
    for (int64_t j = k; j-- > 0;)
        st[j] = j == k - 1 ? 1 : st[j + 1] * dd[j + 1];
    int64_t shape2[AD_T_MAX_RANK + 1];
    shape2[0] = P;
    for (int d = (int)k; d < r; d++)
        shape2[d - k + 1] = dd[d];
    IrValue *flat = ad_t_nd_flat(c, idx, q, k, dd, st);
    IrValue *d2 = ad_t_reshape(c, data, (size_t)(r - k + 1), shape2);
    return ad_t_replace_by(c, ad_t_gather(c, d2, flat, 0));
}

/* GatherND 12 -> 11: version 12 added batch_dims (default 0, the old
 * behaviour). With b > 0, the leading b dims of data and indices are
 * batch dims; the same gather is GatherND-11 with each index tuple
 * prefixed by its batch coordinates (a constant grid of shape
 * indices.shape[:-1] + [b]), which gives the same output shape. */
static int ad_gathernd_12_11(AdCtx *c)
{
    int64_t b = ad_attr_i(c, "batch_dims", 0);
    if (b == 0) {
        ad_drop_attr(c, "batch_dims");
        return 0;
    }
    IrValue *idx = ad_in(c, 1);
    int64_t id[AD_T_MAX_RANK];
    int q = ad_rank(idx);
    bool known = q >= 1 && q <= AD_T_MAX_RANK;
    for (int d = 0; known && d < q - 1; d++)
        known = (id[d] = ad_dim(idx, d)) >= 0;
    if (!known)
        return ad_refuse(c, "shape-unknown",
                         "batch_dims needs the leading dims of the indices");
    if (b < 0 || b > q - 1)
        return ad_refuse(c, "attribute", "batch_dims %lld out of range", (long long)b);
    int64_t m = ad_t_prod(id, 0, q - 1);
    if (m < 0 || (uint64_t)m * (uint64_t)b * 8 > AD_T_MAX_CONST)
        return ad_refuse(c, "too-large", "the batch grid would be too large");
    int64_t gd[AD_T_MAX_RANK], coord[AD_T_MAX_RANK] = {0};
    memcpy(gd, id, sizeof(int64_t) * (size_t)(q - 1));
    gd[q - 1] = b;
    IrError e;
    EvValue *grid = ev_tensor_new(EV_INT64, (size_t)q, gd, &e);
    if (!grid)
        return ad_refuse(c, "internal", "cannot build the batch grid");
    for (int64_t t = 0; t < m; t++) {
        for (int64_t j = 0; j < b; j++)
            ((int64_t *)grid->data)[t * b + j] = coord[j];
        ad_t_next(coord, id, q - 1);
    }
    IrValue *nv = ad_t_concat(c, ad_t_const_of(c, grid), idx, q - 1);
    ev_unref(grid);
    if (!nv)
        return -1;
    ad_set_input(c, 1, nv);
    ad_drop_attr(c, "batch_dims");
    return 0;
}

/* ---- NonZero -------------------------------------------------------- */

/* NonZero below 9: a constant input gives a constant [rank, count] table
 * of the coordinates of its non-zero elements, in row-major order. */
static int ad_nonzero_gone(AdCtx *c)
{
    EvValue *x = ad_t_const_ev(ad_in(c, 0));
    if (!x || x->dtype == EV_STRING || x->dtype == EV_COMPLEX64 ||
        x->dtype == EV_COMPLEX128 || x->rank > AD_T_MAX_RANK) {
        ev_unref(x);
        return ad_refuse(c, "not-constant", "the input must be a constant");
    }
    size_t cnt = 0;
    for (size_t k = 0; k < x->numel; k++)
        cnt += ev_get_f(x, k) != 0;
    int64_t dims[2] = {(int64_t)x->rank, (int64_t)cnt}, coord[AD_T_MAX_RANK] = {0};
    IrError e;
    EvValue *y = (uint64_t)cnt * x->rank * 8 <= AD_T_MAX_CONST
                     ? ev_tensor_new(EV_INT64, 2, dims, &e) : NULL;
    for (size_t k = 0, j = 0; y && k < x->numel; k++) {
        if (ev_get_f(x, k) != 0) {
            for (size_t d = 0; d < x->rank; d++)
                ((int64_t *)y->data)[d * cnt + j] = coord[d];
            j++;
        }
        ad_t_next(coord, x->dims, (int)x->rank);
    }
    ev_unref(x);
    if (!y)
        return ad_refuse(c, "too-large", "the folded output would be too large");
    IrValue *v = ad_t_const_of(c, y);
    ev_unref(y);
    return v ? ad_t_replace_value(c, v) : -1;
}

/* ---- OneHot --------------------------------------------------------- */

/* depth as a 0-D int64 (OneHot casts a non-integer depth to int64). */
static IrValue *ad_t_depth64(AdCtx *c)
{
    int64_t none = 0;
    return ad_t_reshape(c, ad_cast(c, ad_in(c, 1), 7), 0, &none);
}

/* OneHot 9 -> 11: version 9 gives all off_value for a negative index;
 * version 11 counts an index in [-depth, -1] from the end. Negative
 * indices become depth (out of range at 11: all off_value again). The
 * indices are cast to int64 first, as OneHot itself does. */
static int ad_onehot_9_11(AdCtx *c)
{
    IrValue *idx = ad_in(c, 0);
    if (ad_t_nonneg(idx))
        return 0;
    if (!ad_elem(idx))
        return ad_refuse(c, "type-unknown", "the type of indices '%s' is unknown",
                         idx->name);
    IrValue *i64 = ad_cast(c, idx, 7);
    IrValue *neg = ad_op2(c, "Less", i64, ad_t_int(c, 7, 0));
    IrValue *nv = ad_t_where(c, neg, ad_t_depth64(c), i64);
    if (!nv)
        return -1;
    ad_set_input(c, 0, nv);
    return 0;
}

/* OneHot 11 -> 9: an index in [-depth, -1] counts from the end at 11, so
 * depth is added to it; an index below -depth (all off_value at 11)
 * becomes depth, out of range whether a runtime reads OneHot-9 as the
 * spec does (negative: off_value) or wraps negatives as at 11 (ONNX
 * Runtime does). Version 9 only names axis = -1 among negative axes, so
 * others become non-negative. */
static int ad_onehot_11_9(AdCtx *c)
{
    IrValue *idx = ad_in(c, 0);
    int64_t a = ad_attr_i(c, "axis", -1), axis;
    if (a < -1) {
        if (!ad_t_axis(a, ad_rank(idx), 1, &axis))
            return ad_refuse(c, "shape-unknown", "axis %lld needs the rank of the indices",
                             (long long)a);
        ad_set_attr_i(c, c->n, "axis", axis);
    }
    if (ad_t_nonneg(idx))
        return 0;
    if (!ad_elem(idx))
        return ad_refuse(c, "type-unknown", "the type of indices '%s' is unknown",
                         idx->name);
    EvValue *cv = ad_t_const_ev(idx);
    int64_t *dv = NULL;
    size_t n = 0;
    if (cv && (!ad_const_ints(ad_in(c, 1), &dv, &n) || n != 1)) {
        free(dv);
        ev_unref(cv);
        cv = NULL;
    }
    if (cv) {
        IrError e;
        EvValue *iv = ev_tensor_new(EV_INT64, cv->rank, cv->dims, &e);
        for (size_t k = 0; iv && k < cv->numel; k++) {
            int64_t i = ev_get_i(cv, k);
            ev_set_i(iv, k, i >= 0 || dv[0] <= 0 ? i : i >= -dv[0] ? i + dv[0] : dv[0]);
        }
        free(dv);
        ev_unref(cv);
        bool made = iv != NULL;
        IrValue *nc = made ? ad_t_const_of(c, iv) : NULL;
        ev_unref(iv);
        if (!nc)
            return made ? -1 : ad_refuse(c, "internal", "cannot rewrite the indices");
        ad_t_swap_input(c, 0, nc);
        return 0;
    }
    IrValue *depth = ad_t_depth64(c);
    IrValue *w = ad_t_wrap(c, ad_cast(c, idx, 7), depth);
    IrValue *neg = ad_op2(c, "Less", ad_cast(c, w, 11), ad_const_scalar(c, 11, 0.0));
    IrValue *nv = ad_op2(c, "Add", w, ad_op2(c, "Mul", ad_cast(c, neg, 7),
                                                 ad_op2(c, "Sub", depth, w)));
    if (!nv)
        return -1;
    ad_set_input(c, 0, nv);
    return 0;
}

/* OneHot below 9: with depth a constant, the one-hot mask is
 * Equal(Unsqueeze(int64(indices), axis), [0, depth) laid along axis), and
 * the output picks values[mask] with a Gather (exact for every type).
 * Indices outside [0, depth), negative ones included, match nothing and
 * give off_value, as OneHot-9 says. */
static int ad_onehot_gone(AdCtx *c)
{
    IrValue *idx = ad_in(c, 0);
    int r = ad_rank(idx);
    int64_t axis, depth;
    double *dv;
    size_t n;
    if (!ad_t_axis(ad_attr_i(c, "axis", -1), r, 1, &axis) || r + 1 > AD_T_MAX_RANK)
        return ad_refuse(c, "shape-unknown", "the rank of the indices is unknown");
    if (!ad_const_floats(ad_in(c, 1), &dv, &n) || n != 1) {
        int64_t *iv;
        if (!ad_const_ints(ad_in(c, 1), &iv, &n) || n != 1)
            return ad_refuse(c, "not-constant", "depth must be a constant");
        depth = iv[0];
        free(iv);
    } else {
        depth = dv[0] >= 0 && dv[0] < 9e18 ? (int64_t)dv[0] : -1;
        free(dv);
    }
    if (depth < 0 || (uint64_t)depth * 8 > AD_T_MAX_CONST)
        return ad_refuse(c, "attribute", "depth %lld is not usable", (long long)depth);
    int64_t dims[AD_T_MAX_RANK + 1], *ar = ir_alloc_array((size_t)depth + 1, sizeof *ar);
    dims[0] = depth;
    for (int64_t d = 1; d <= r - axis; d++)
        dims[d] = 1;
    for (int64_t i = 0; i < depth; i++)
        ar[i] = i;
    IrValue *range = ad_t_table(c, (int)(r - axis + 1), dims, ar);
    free(ar);
    IrValue *u = ad_axes_op(c, c->n, "Unsqueeze", ad_cast(c, idx, 7), 1, &axis);
    IrValue *mask = ad_cast(c, ad_op2(c, "Equal", u, range), 7);
    return ad_t_replace_by(c, ad_t_gather(c, ad_in(c, 2), mask, 0));
}

/* ---- Range ---------------------------------------------------------- */

/* The Loop body of ad_range_loop: iteration i emits start + T(i) * delta
 * (start and delta are read from the enclosing graph). Loop-1 needs at
 * least one loop-carried value: a copy of start is carried unchanged. */
static IrGraph *ad_range_body(AdCtx *c, IrValue *start, IrValue *delta, int32_t dt)
{
    IrGraph *b = ad_sub_new(c, "range_body");
    IrValue *it = ad_sub_input(b, "range_iter", 7), *cond = ad_sub_input(b, "range_cond", 9);
    IrValue *carry = ad_sub_input(b, "range_carry", dt);
    IrNode *keep = it && cond ? ad_sub_node(c, b, "Identity", 1, &cond, 1, true) : NULL;
    IrNode *pass = keep && carry ? ad_sub_node(c, b, "Identity", 1, &carry, 1, true) : NULL;
    if (!pass)
        keep = NULL;
    IrNode *cast = keep ? ad_sub_node(c, b, "Cast", 1, &it, 1, false) : NULL;
    if (cast)
        ad_set_attr_i(c, cast, "to", dt);
    IrNode *mul = NULL, *add = NULL;
    if (cast && ad_sub_infer(c, cast) == 0) {
        IrValue *m[2] = {cast->out[0], delta};
        mul = ad_sub_node(c, b, "Mul", 2, m, 1, true);
    }
    if (mul) {
        IrValue *a[2] = {start, mul->out[0]};
        add = ad_sub_node(c, b, "Add", 2, a, 1, true);
    }
    if (!add) {
        ir_graph_free(b);
        return NULL;
    }
    ad_sub_output(b, keep->out[0], 9);
    ad_sub_output(b, pass->out[0], dt);
    ad_sub_output(b, add->out[0], dt);
    return b;
}

/* Range below 11 with inputs known only at run time: a Loop of
 * max(ceil((limit - start) / delta), 0) iterations, iteration i emitting
 * start + i * delta as a scan output, which is Range's definition (the
 * spec's own function body is such a Loop). The count is computed in
 * double, as ONNX Runtime does: exact for every float and for integers
 * below 2^53 in magnitude. */
static int ad_range_loop(AdCtx *c)
{
    IrValue *s = ad_in(c, 0), *l = ad_in(c, 1), *d = ad_in(c, 2);
    int32_t dt = ad_elem(s);
    if (!dt)
        return ad_refuse(c, "type-unknown", "Range's type is unknown");
    IrValue *q = ad_op2(c, "Div", ad_op2(c, "Sub", ad_cast(c, l, 11), ad_cast(c, s, 11)),
                        ad_cast(c, d, 11));
    IrValue *n = ad_cast(c, ad_op2(c, "Max", ad_op1(c, "Ceil", q),
                                   ad_const_scalar(c, 11, 0.0)), 7);
    IrValue *yes = n ? ad_const_scalar(c, 9, 1.0) : NULL;
    IrGraph *body = yes ? ad_range_body(c, s, d, dt) : NULL;
    if (!body)
        return c->reason ? -1 : ad_refuse(c, "internal", "cannot build Range's Loop");
    IrValue *in[3] = {n, yes, s};
    IrNode *loop = ad_node_in(c, c->domain, c->n, "Loop", 3, in, 2);
    if (!loop) {
        ir_graph_free(body);
        return -1;
    }
    ir_node_set_attr(loop, ir_attr_graph("body", body));
    if (ad_infer(c, loop) < 0)
        return -1;
    ad_move_output(c, 0, loop, 1);
    ir_node_delete(c->n);
    return 0;
}

/* Range below 11: constant start, limit and delta give a constant output
 * of max(ceil((limit - start) / delta), 0) elements start + i * delta,
 * computed in the input type (float arithmetic for float). */
static int ad_range_gone(AdCtx *c)
{
    EvValue *t[3] = {NULL, NULL, NULL};
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        t[i] = ad_t_const_ev(ad_in(c, i));
        ok = ok && t[i] && t[i]->numel == 1 && t[i]->dtype == t[0]->dtype;
    }
    int32_t dt = ok ? t[0]->dtype : 0;
    int64_t n = 0;
    EvValue *y = NULL;
    IrError e;
    if (ok && ev_dtype_is_int(dt)) {
        int64_t s = ev_get_i(t[0], 0), l = ev_get_i(t[1], 0), d = ev_get_i(t[2], 0);
        ok = d != 0;
        if (ok && (d > 0 ? l > s : l < s)) {
            uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
            uint64_t step = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
            n = (int64_t)((span + step - 1) / step);
        }
        ok = ok && (uint64_t)n * ev_dtype_size(dt) <= AD_T_MAX_CONST;
        y = ok ? ev_tensor_new(dt, 1, &n, &e) : NULL;
        for (int64_t i = 0; y && i < n; i++)
            ev_set_i(y, (size_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    } else if (ok && (dt == EV_FLOAT || dt == EV_DOUBLE)) {
        double s = ev_get_f(t[0], 0), l = ev_get_f(t[1], 0), d = ev_get_f(t[2], 0);
        double cnt = dt == EV_FLOAT ? (double)ceilf(((float)l - (float)s) / (float)d)
                                    : ceil((l - s) / d);
        ok = d != 0 && !isnan(cnt) && cnt * 8 <= (double)AD_T_MAX_CONST;
        n = ok && cnt > 0 ? (int64_t)cnt : 0;
        y = ok ? ev_tensor_new(dt, 1, &n, &e) : NULL;
        for (int64_t i = 0; y && i < n; i++) {
            if (dt == EV_FLOAT) {
                float v = (float)s + (float)i * (float)d;
                ev_set_f(y, (size_t)i, v);
            } else {
                ev_set_f(y, (size_t)i, s + (double)i * d);
            }
        }
    } else {
        ok = false;
    }
    for (int i = 0; i < 3; i++)
        ev_unref(t[i]);
    if (!y && !ok)
        return ad_range_loop(c);
    if (!y)
        return ad_refuse(c, "too-large",
                         "start, limit and delta must be small constants");
    IrValue *v = ad_t_const_of(c, y);
    ev_unref(y);
    return v ? ad_t_replace_value(c, v) : -1;
}

/* Range 27 -> 11: stash_type only sets the precision of float16/bfloat16
 * ranges, types version 11 lacks. Version 27 computes such a range in the
 * stash type (float by default) and casts the elements back, which is a
 * Range-11 in float or double between two Casts. */
static int ad_range_27_11(AdCtx *c)
{
    int64_t stash = ad_attr_i(c, "stash_type", 1);
    ad_drop_attr(c, "stash_type");
    int32_t dt = ad_elem(ad_in(c, 0));
    if (dt != 10 && dt != 16)
        return 0;
    if (stash != 1 && stash != 11)
        return ad_refuse(c, "type", "Range-11 cannot compute in %s (stash_type)",
                         ir_dtype_name((int32_t)stash) ? ir_dtype_name((int32_t)stash) : "?");
    IrValue *in[3];
    for (int i = 0; i < 3; i++)
        in[i] = ad_cast(c, ad_in(c, (size_t)i), (int32_t)stash);
    if (!in[0] || !in[1] || !in[2])
        return -1;
    IrNode *r = ad_node(c, c->n, "Range", 3, in, 1);
    IrValue *y = r ? r->out[0] : NULL;
    IrNode *back = y ? ad_node_in(c, c->domain, c->n, "Cast", 1, &y, 1) : NULL;
    if (!back)
        return -1;
    ad_set_attr_i(c, back, "to", dt);
    if (ad_infer(c, back) < 0)
        return -1;
    ad_replace(c, back);
    return 0;
}

/* ---- ReverseSequence ------------------------------------------------ */

/* ReverseSequence below 10: time and batch are the first two axes (in
 * either order). With the input's shape known, the output is a Gather on
 * those two axes merged: position (b, t) reads (b, st) with
 * st = L[b] - 1 - t when t < L[b], else t, i.e. the flat position plus
 * stride_t * [t < L[b]] * (L[b] - 1 - 2t). A constant sequence_lens gives
 * a constant table; otherwise the table is computed (the comparison in
 * double, exact for these integers, so it also lowers to Less-7). */
static int ad_revseq_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *lens = ad_in(c, 1);
    int64_t dd[AD_T_MAX_RANK];
    int r;
    int64_t ta = ad_attr_i(c, "time_axis", 0), ba = ad_attr_i(c, "batch_axis", 1);
    if ((ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
        return ad_refuse(c, "attribute", "time_axis and batch_axis must be 0 and 1");
    if (!ad_t_static(x, dd, &r) || r < 2)
        return ad_refuse(c, "shape-unknown", "the shape of '%s' is unknown", x->name);
    int64_t T = dd[ta], B = dd[ba], pair = ad_t_prod(dd, 0, 2), stride = ta == 0 ? B : 1;
    if (pair < 0 || (uint64_t)pair * 8 * 3 > AD_T_MAX_CONST)
        return ad_refuse(c, "too-large", "the index table would be too large");
    int64_t *base = ir_alloc_array((size_t)pair + 1, sizeof *base);
    int64_t *c2t = ir_alloc_array((size_t)pair + 1, sizeof *c2t);
    int64_t *lv = NULL;
    size_t nl = 0;
    bool known = ad_const_ints(lens, &lv, &nl);
    bool bad = known && nl != (size_t)B;
    for (int64_t p = 0; p < pair && !bad; p++) {
        int64_t t = ta == 0 ? p / dd[1] : p % dd[1], b = ta == 0 ? p % dd[1] : p / dd[1];
        base[p] = p;
        c2t[p] = 2 * t + 1;
        if (known) {
            bad = lv[b] < 0 || lv[b] > T;
            if (!bad && t < lv[b])
                base[p] += stride * (lv[b] - 1 - 2 * t);
        }
    }
    free(lv);
    IrValue *sel = NULL;
    int64_t pd[2] = {dd[0], dd[1]}, lshape[2] = {ta == 0 ? 1 : B, ta == 0 ? B : 1};
    if (!bad)
        sel = ad_t_table(c, 2, pd, base);
    if (!bad && !known) {
        double *tv = ir_alloc_array((size_t)pair + 1, sizeof *tv);
        for (int64_t p = 0; p < pair; p++)
            tv[p] = (double)((c2t[p] - 1) / 2);
        IrValue *tgrid = ad_const_tensor(c, 11, 2, pd, tv, (size_t)pair * sizeof *tv);
        free(tv);
        IrValue *l2 = ad_t_reshape(c, lens, 2, lshape);
        IrValue *lt = ad_cast(c, ad_op2(c, "Less", tgrid, ad_cast(c, l2, 11)), 7);
        IrValue *delta = ad_op2(c, "Sub", l2, ad_t_table(c, 2, pd, c2t));
        delta = ad_op2(c, "Mul", lt, delta);
        if (stride != 1)
            delta = ad_op2(c, "Mul", delta, ad_t_int(c, 7, stride));
        sel = ad_op2(c, "Add", sel, delta);
    }
    free(base);
    free(c2t);
    if (bad)
        return ad_refuse(c, "semantics", "a constant sequence length is out of range");
    int64_t flat[AD_T_MAX_RANK];
    flat[0] = pair;
    for (int d = 2; d < r; d++)
        flat[d - 1] = dd[d];
    IrValue *g = ad_t_gather(c, ad_t_reshape(c, x, (size_t)r - 1, flat),
                             ad_t_reshape(c, sel, 1, &pair), 0);
    return ad_t_replace_by(c, ad_t_reshape(c, g, (size_t)r, dd));
}

/* ---- Scatter, ScatterElements, ScatterND ----------------------------- */

/* Scatter 9 -> 11: Scatter is deprecated at 11 in favour of
 * ScatterElements, which does the same (and also takes negative indices,
 * which Scatter-9 never had). */
static int ad_scatter_9_11(AdCtx *c)
{
    ad_t_rename(c, "ScatterElements");
    return 0;
}

/* Scatter 11 -> 9 (the deprecated 11 reads as ScatterElements-11):
 * negative indices become non-negative. */
static int ad_scatter_11_9(AdCtx *c)
{
    return ad_t_fix_indices(c, 0, 1, ad_attr_i(c, "axis", 0));
}

/* ScatterElements below 11: Scatter-9, the same op before it was renamed,
 * once negative indices (new at 11) are made non-negative. */
static int ad_scatter_elements_gone(AdCtx *c)
{
    if (ad_t_fix_indices(c, 0, 1, ad_attr_i(c, "axis", 0)) < 0)
        return -1;
    ad_t_rename(c, "Scatter");
    return 0;
}

/* Flat positions (in the data) of the elements Scatter writes:
 * off[k] = sum(p[d] * stride[d], d != axis) (+ idx[p] * stride[axis] when
 * the indices are a constant: then *known is set) over the positions p of
 * the indices. Scatter-9 has no negative indices. NULL after a refusal. */
static int64_t *ad_t_scatter_offsets(AdCtx *c, const int64_t *dd, int r,
                                     const int64_t *id, int64_t axis, int64_t *st,
                                     bool *known)
{
    int64_t coord[AD_T_MAX_RANK] = {0}, m = ad_t_prod(id, 0, r);
    for (int d = r; d-- > 0;)
        st[d] = d == r - 1 ? 1 : st[d + 1] * dd[d + 1];
    if (m < 0 || (uint64_t)m * 8 > AD_T_MAX_CONST) {
        ad_refuse(c, "too-large", "the index table would be too large");
        return NULL;
    }
    EvValue *cv = ad_t_const_ev(ad_in(c, 1));
    int64_t *off = ir_alloc_array((size_t)m + 1, sizeof *off);
    bool bad = false;
    for (int64_t k = 0; k < m && !bad; k++) {
        for (int d = 0; d < r; d++)
            if (d != axis)
                off[k] += coord[d] * st[d];
        if (cv) {
            int64_t i = ev_get_i(cv, (size_t)k);
            bad = i < 0 || i >= dd[axis];
            off[k] += i * st[axis];
        }
        ad_t_next(coord, id, r);
    }
    *known = cv != NULL;
    ev_unref(cv);
    if (bad) {
        free(off);
        ad_refuse(c, "semantics", "a constant index is out of range");
        return NULL;
    }
    return off;
}

/* Scatter below 9: with static shapes, the output is a Gather from
 * Concat(flat data, flat updates) at sel[p] = N + k for the last update k
 * written at flat position p (N = the data's size), p itself where none
 * is (later updates win, as Scatter applies them in order). A constant
 * table when the indices are constant; otherwise sel is computed: for
 * each p, m = max over k of (k + 1) * [pos[k] == p], and
 * sel = p + [m != 0] * (N + m - 1 - p), all in int64. */
static int ad_scatter_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1), *upd = ad_in(c, 2);
    int64_t dd[AD_T_MAX_RANK], id[AD_T_MAX_RANK], axis;
    int r, q;
    if (!ad_t_static(data, dd, &r) || !ad_t_static(idx, id, &q) || q != r)
        return ad_refuse(c, "shape-unknown", "Scatter needs static shapes here");
    if (!ad_t_axis(ad_attr_i(c, "axis", 0), r, 0, &axis))
        return ad_refuse(c, "attribute", "axis out of range");
    if (!ad_t_is_int_index(ad_elem(idx)))
        return ad_refuse(c, "type-unknown", "the type of indices is unknown");
    int64_t N = ad_t_prod(dd, 0, r), K = ad_t_prod(id, 0, q);
    if (N < 0 || K < 0 || (uint64_t)N * 8 > AD_T_MAX_CONST)
        return ad_refuse(c, "too-large", "the data is too large");
    int64_t st[AD_T_MAX_RANK];
    bool known;
    int64_t *off = ad_t_scatter_offsets(c, dd, r, id, axis, st, &known);
    if (!off)
        return -1;
    int64_t *pv = ir_alloc_array((size_t)N + 1, sizeof *pv);
    for (int64_t p = 0; p < N; p++)
        pv[p] = p;
    IrValue *sel;
    if (known) {
        for (int64_t k = 0; k < K; k++)
            pv[off[k]] = N + k;
        sel = ad_t_table(c, 1, &N, pv);
    } else {
        int64_t rowd[2] = {1, K}, cold[2] = {N, 1};
        int64_t *kw = ir_alloc_array((size_t)K + 1, sizeof *kw);
        for (int64_t k = 0; k < K; k++)
            kw[k] = k + 1;
        IrValue *pos = ad_op2(c, "Add", ad_t_table(c, q, id, off),
                                ad_op2(c, "Mul", ad_cast(c, idx, 7),
                                         ad_t_int(c, 7, st[axis])));
        IrValue *eq = ad_op2(c, "Equal", ad_t_reshape(c, pos, 2, rowd),
                               ad_t_table(c, 2, cold, pv));
        IrValue *m = ad_t_reduce(c, "ReduceMax",
                                 ad_op2(c, "Mul", ad_cast(c, eq, 7),
                                          ad_t_table(c, 2, rowd, kw)), 1);
        free(kw);
        IrValue *hit = ad_cast(c, ad_op1(c, "Not", ad_op2(c, "Equal", m,
                                                                 ad_t_int(c, 7, 0))), 7);
        IrValue *pvec = ad_t_table(c, 1, &N, pv);
        IrValue *jump = ad_op2(c, "Sub", ad_op2(c, "Add", m, ad_t_int(c, 7, N - 1)), pvec);
        sel = ad_op2(c, "Add", pvec, ad_op2(c, "Mul", hit, jump));
    }
    free(off);
    free(pv);
    IrValue *src = ad_t_concat(c, ad_t_reshape(c, data, 1, &N), ad_t_reshape(c, upd, 1, &K), 0);
    return ad_t_replace_by(c, ad_t_reshape(c, ad_t_gather(c, src, sel, 0), (size_t)r, dd));
}

/* ScatterND below 11: with the data's shape known and k (the indices'
 * last dim) known, data becomes [P, R] (P = the product of its first k
 * dims, R of the rest), each index tuple its flat row
 * sum(idx[..., j] * stride[j]) (negative components count from the end),
 * and the rows are written by Scatter-9 on axis 0 with that row index
 * repeated across the R columns; later updates win in both. */
static int ad_scatternd_gone(AdCtx *c)
{
    IrValue *data = ad_in(c, 0), *idx = ad_in(c, 1), *upd = ad_in(c, 2);
    int64_t dd[AD_T_MAX_RANK];
    int r, q = ad_rank(idx);
    int64_t k = q >= 1 ? ad_dim(idx, q - 1) : -1;
    if (!ad_t_static(data, dd, &r) || k < 0 || k > r)
        return ad_refuse(c, "shape-unknown",
                         "ScatterND needs the data's shape and the index depth here");
    int64_t P = ad_t_prod_any(dd, 0, (int)k), R = ad_t_prod_any(dd, (int)k, r);
    if (P < 0 || R <= 0 || ad_t_prod_any(dd, 0, r) < 0)
        return ad_refuse(c, "shape-unknown", "the data has no element to scatter");
    int64_t st[AD_T_MAX_RANK];
    for (int64_t j = k; j-- > 0;)
        st[j] = j == k - 1 ? 1 : st[j + 1] * dd[j + 1];
    IrValue *flat = ad_t_nd_flat(c, idx, q, k, dd, st);
    int64_t col[2] = {-1, 1}, wide[2] = {1, R}, d2[2] = {P, R}, u2[2] = {-1, R};
    IrValue *rows = ad_op2(c, "Expand", ad_t_reshape(c, flat, 2, col),
                             ad_const_i64s(c, 2, wide));
    IrValue *in[3] = {ad_t_reshape(c, data, 2, d2), rows, ad_t_reshape(c, upd, 2, u2)};
    if (!in[0] || !in[1] || !in[2])
        return -1;
    IrNode *sc = ad_t_raw(c, "Scatter", 3, in, 1);
    if (!sc)
        return -1;
    ad_set_attr_i(c, sc, "axis", 0);
    return ad_t_replace_by(c, ad_t_reshape(c, ad_t_out(c, sc), (size_t)r, dd));
}

/* ScatterElements/ScatterND 16 -> 13: version 16 added `reduction`;
 * "none" is the old behaviour, add and mul have no older form. */
static int ad_scatter_16_13(AdCtx *c)
{
    char buf[16];
    const char *r = ad_attr_s(c, "reduction", "none", buf, sizeof buf);
    if (strcmp(r, "none"))
        return ad_refuse(c, "attribute", "reduction '%s' has no equivalent before opset 16",
                         r);
    ad_drop_attr(c, "reduction");
    return 0;
}

/* ScatterElements/ScatterND 18 -> 16: version 18 added the max and min
 * reductions. */
static int ad_scatter_18_16(AdCtx *c)
{
    char buf[16];
    const char *r = ad_attr_s(c, "reduction", "none", buf, sizeof buf);
    if (!strcmp(r, "max") || !strcmp(r, "min"))
        return ad_refuse(c, "attribute", "reduction '%s' has no equivalent before opset 18",
                         r);
    return 0;
}

/* ---- Shape ---------------------------------------------------------- */

/* Shape 15 -> 13: version 15 added start/end (a slice of the shape,
 * negative from the back, clamped). Unless they select the whole shape,
 * Slice of the full shape with the same start and end computes it (Slice
 * counts negatives from the back and clamps the same way). */
static int ad_shape_15_13(AdCtx *c)
{
    IrAttr *s = ad_attr(c, "start"), *e = ad_attr(c, "end");
    int64_t st = s && s->has_i ? s->i : 0, en = e && e->has_i ? e->i : INT64_MAX;
    int r = ad_rank(ad_in(c, 0));
    if (r >= 0) {
        st = st < 0 ? (st + r < 0 ? 0 : st + r) : (st > r ? r : st);
        en = en < 0 ? (en + r < 0 ? 0 : en + r) : (en > r ? r : en);
    }
    if (st == 0 && (en == INT64_MAX || en == r)) {
        ad_drop_attr(c, "start");
        ad_drop_attr(c, "end");
        return 0;
    }
    int64_t zero = 0;
    IrValue *sh = ad_op1(c, "Shape", ad_in(c, 0));
    return ad_t_replace_by(c, ad_t_slice(c, sh, 1, &st, &en, &zero));
}

/* ---- TensorScatter -------------------------------------------------- */

/* TensorScatter below 24: the cache is transposed to [batch, seq, rest],
 * and ScatterND writes update[b, j] at (b, w[b] + j) (mod the cache length
 * in circular mode, Mod with the divisor's sign as np.mod), then the
 * result is transposed back. Needs the batch, cache and update lengths. */
static int ad_tensor_scatter_gone(AdCtx *c)
{
    IrValue *cache = ad_in(c, 0), *upd = ad_in(c, 1), *w = ad_in(c, 2);
    int r = ad_rank(cache);
    int64_t axis;
    if (!ad_t_axis(ad_attr_i(c, "axis", -2), r, 0, &axis) || axis == 0 ||
        r > AD_T_MAX_RANK)
        return ad_refuse(c, "shape-unknown", "the cache's rank or axis is unusable");
    char buf[16];
    const char *mode = ad_attr_s(c, "mode", "linear", buf, sizeof buf);
    bool circ = !strcmp(mode, "circular");
    int64_t B = ad_dim(cache, 0), M = ad_dim(cache, (int)axis), S = ad_dim(upd, (int)axis);
    if (!circ && strcmp(mode, "linear"))
        return ad_refuse(c, "attribute", "mode '%s' is unknown", mode);
    if (B < 0 || M < 0 || S < 0)
        return ad_refuse(c, "shape-unknown", "the batch and sequence lengths are unknown");
    if (S > M || (uint64_t)B * (uint64_t)S * 8 > AD_T_MAX_CONST)
        return ad_refuse(c, "semantics", "the update does not fit the cache");
    int64_t perm[AD_T_MAX_RANK], inv[AD_T_MAX_RANK], n = 0;
    perm[n++] = 0;
    perm[n++] = axis;
    for (int64_t d = 1; d < r; d++)
        if (d != axis)
            perm[n++] = d;
    for (int64_t d = 0; d < r; d++)
        inv[perm[d]] = d;
    /* bg and jg are the [B, S] index tables; the first S entries of jg
     * also serve as the [1, S] table of the write_indices form, so there
     * are at least S of them even when the batch is empty (B == 0). */
    int64_t nt = B * S > S ? B * S : S;
    int64_t *bg = ir_alloc_array((size_t)nt + 1, sizeof *bg);
    int64_t *jg = ir_alloc_array((size_t)nt + 1, sizeof *jg);
    for (int64_t p = 0; p < nt; p++) {
        bg[p] = p / (S ? S : 1);
        jg[p] = p % (S ? S : 1);
    }
    int64_t gd[3] = {B, S, 1}, j1[2] = {1, S}, two = 2, one = 1;
    IrValue *pos = w ? ad_op2(c, "Add", ad_axes_op(c, c->n, "Unsqueeze", w, 1, &one),
                                ad_t_table(c, 2, j1, jg))
                     : ad_t_table(c, 2, gd, jg); /* [B, S] */
    if (circ)
        pos = ad_op2(c, "Mod", pos, ad_t_int(c, 7, M));
    IrValue *ind = ad_t_concat(c, ad_t_table(c, 3, gd, bg),
                               ad_axes_op(c, c->n, "Unsqueeze", pos, 1, &two), 2);
    free(bg);
    free(jg);
    bool same = axis == 1;
    IrValue *in[3] = {same ? cache : ad_t_transpose(c, cache, (size_t)r, perm), ind,
                      same ? upd : ad_t_transpose(c, upd, (size_t)r, perm)};
    if (!in[0] || !in[1] || !in[2])
        return -1;
    IrValue *y = ad_t_out(c, ad_t_raw(c, "ScatterND", 3, in, 1));
    return ad_t_replace_by(c, same ? y : ad_t_transpose(c, y, (size_t)r, inv));
}

/* ---- TopK ----------------------------------------------------------- */

/* TopK 1 -> 10: the attribute k became the input K (a 1-D int64 of one
 * element). */
static int ad_topk_1_10(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "k");
    if (!a || !a->has_i)
        return ad_refuse(c, "attribute", "TopK-1 needs k");
    IrValue *k = ad_const_i64s(c, 1, &a->i);
    if (!k)
        return -1;
    ad_set_input(c, 1, k);
    ad_drop_attr(c, "k");
    return 0;
}

/* TopK 10 -> 1: the input K becomes the attribute k (a constant). */
static int ad_topk_10_1(AdCtx *c)
{
    IrValue *in = ad_in(c, 1);
    int64_t *v;
    size_t n;
    if (!in || !ad_const_ints(in, &v, &n) || n != 1) {
        return ad_refuse(c, "not-constant", "K must be a constant to become attribute k");
    }
    ad_set_attr_i(c, c->n, "k", v[0]);
    free(v);
    ir_node_set_input(c->n, 1, NULL);
    ad_trim_inputs(c->n);
    ad_drop_if_dead(c, in);
    return 0;
}

/* TopK 11 -> 10: version 11 added `largest` and `sorted` (defaults 1, the
 * old behaviour). sorted = 0 leaves the order unspecified, which sorted
 * output satisfies, so it goes. largest = 0 (the k smallest) is refused:
 * the k largest of -x would be the same for numbers, but not where NaN
 * sorts (NaN ranks above every number, so it would come first instead of
 * last), and nothing before opset 11 can rank it otherwise. */
static int ad_topk_11_10(AdCtx *c)
{
    if (ad_attr_i(c, "largest", 1) == 0)
        return ad_refuse(c, "attribute",
                         "largest = 0 has no equivalent before opset 11 that ranks NaN "
                         "the same way");
    ad_drop_attr(c, "sorted");
    ad_drop_attr(c, "largest");
    return 0;
}

/* ---- Trilu ---------------------------------------------------------- */

/* Trilu below 14: the elements of the last two dims outside the kept
 * triangle (j - i < k for upper, j - i > k for lower) become 0. Integer
 * inputs (the types Mul takes) are multiplied by a 0/1 mask and bool
 * inputs And-ed with it, which is exact and lowers to any opset; other
 * types use Where(drop, 0, x), which copies kept elements exactly (NaN and
 * inf included; a Mul would turn inf * 0 into NaN). The mask is a
 * constant when k is; otherwise a constant j - i table is compared with
 * k (in double, exact for these integers, so Less-7 takes it). */
static int ad_trilu_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *kv = ad_in(c, 1);
    int r = ad_rank(x);
    int64_t dims[2] = {r >= 2 ? ad_dim(x, r - 2) : -1, r >= 2 ? ad_dim(x, r - 1) : -1};
    if (dims[0] < 0 || dims[1] < 0)
        return ad_refuse(c, "shape-unknown", "the last two dims of '%s' are unknown",
                         x->name);
    int32_t dt = ad_elem(x);
    if (!dt || dt == EV_STRING)
        return ad_refuse(c, dt ? "type" : "type-unknown",
                         "a zero of the input's type is needed");
    int64_t total = ad_t_prod(dims, 0, 2), *kc = NULL, k = 0;
    size_t n = 0;
    if (total < 0 || (uint64_t)total * 8 > AD_T_MAX_CONST)
        return ad_refuse(c, "too-large", "the mask would be too large");
    bool upper = ad_attr_i(c, "upper", 1) != 0;
    bool kconst = !kv || (ad_const_ints(kv, &kc, &n) && n == 1);
    bool mul = dt == 6 || dt == 7 || dt == 12 || dt == 13, band = dt == EV_BOOL;
    if (kc)
        k = kc[0];
    free(kc);
    /* constant k: the mask itself (keep for Mul/And, drop for Where);
     * run-time k: the j - i table */
    int32_t mt = !kconst ? EV_DOUBLE : mul ? dt : EV_BOOL;
    IrError e;
    EvValue *m = ev_tensor_new(mt, 2, dims, &e);
    if (!m)
        return ad_refuse(c, "internal", "cannot build the mask");
    for (int64_t i = 0; i < dims[0]; i++)
        for (int64_t j = 0; j < dims[1]; j++) {
            size_t at = (size_t)(i * dims[1] + j);
            bool drop = upper ? j - i < k : j - i > k;
            if (!kconst)
                ev_set_f(m, at, (double)(j - i));
            else
                ev_set_i(m, at, (mul || band) ? !drop : drop);
        }
    IrValue *mask = ad_t_const_of(c, m);
    ev_unref(m);
    if (!kconst) {
        IrValue *kd = ad_cast(c, kv, EV_DOUBLE);
        mask = upper ? ad_op2(c, "Less", mask, kd) : ad_op2(c, "Less", kd, mask);
        if (mul || band)
            mask = ad_cast(c, ad_op1(c, "Not", mask), dt);
    }
    if (mul)
        return ad_t_replace_by(c, ad_op2(c, "Mul", x, mask));
    if (band)
        return ad_t_replace_by(c, ad_op2(c, "And", x, mask));
    return ad_t_replace_by(c, ad_t_where(c, mask, ad_t_zero(c, dt), x));
}

/* ---- the table ------------------------------------------------------ */

static const AdEntry ad_tensor[] = {
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
    /* CenterCropPad */
    AD_GONE("CenterCropPad", 18, AD_EXPAND, ad_ccp_gone),
    /* Compress */
    AD_GONE("Compress", 9, AD_EXPAND, ad_compress_gone),
    AD_UP("Compress", 9, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Compress", 9, 11, AD_SEMANTIC, ad_compress_11_9),
    /* Constant */
    AD_UP("Constant", 1, 9, AD_COMPATIBLE, NULL),
    AD_DOWN("Constant", 1, 9, AD_SEMANTIC, ad_constant_9_1),
    AD_UP("Constant", 9, 11, AD_ATTRS, ad_nothing),
    AD_DOWN("Constant", 9, 11, AD_ATTRS, ad_constant_11_9),
    AD_UP("Constant", 11, 12, AD_ATTRS, ad_nothing),
    AD_DOWN("Constant", 11, 12, AD_ATTRS, ad_constant_12_11),
    AD_BOTH("Constant", 12, 13),
    AD_BOTH("Constant", 13, 19),
    AD_BOTH("Constant", 19, 21),
    AD_BOTH("Constant", 21, 23),
    AD_BOTH("Constant", 23, 24),
    AD_BOTH("Constant", 24, 25),
    /* ConstantOfShape */
    AD_GONE("ConstantOfShape", 9, AD_EXPAND, ad_cos_gone),
    AD_BOTH("ConstantOfShape", 9, 20),
    AD_BOTH("ConstantOfShape", 20, 21),
    AD_BOTH("ConstantOfShape", 21, 23),
    AD_BOTH("ConstantOfShape", 23, 24),
    AD_BOTH("ConstantOfShape", 24, 25),
    /* DepthToSpace, SpaceToDepth */
    AD_UP("DepthToSpace", 1, 11, AD_ATTRS, ad_nothing),
    AD_DOWN("DepthToSpace", 1, 11, AD_SEMANTIC, ad_d2s_11_1),
    AD_BOTH("DepthToSpace", 11, 13),
    AD_BOTH("SpaceToDepth", 1, 13),
    /* EyeLike */
    AD_GONE("EyeLike", 9, AD_EXPAND, ad_eyelike_gone),
    AD_BOTH("EyeLike", 9, 22),
    /* Gather, GatherElements, GatherND */
    AD_UP("Gather", 1, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Gather", 1, 11, AD_SEMANTIC, ad_gather_11_1),
    AD_BOTH("Gather", 11, 13),
    AD_GONE("GatherElements", 11, AD_EXPAND, ad_gather_elements_gone),
    AD_BOTH("GatherElements", 11, 13),
    AD_GONE("GatherND", 11, AD_EXPAND, ad_gathernd_gone),
    AD_UP("GatherND", 11, 12, AD_ATTRS, ad_nothing),
    AD_DOWN("GatherND", 11, 12, AD_SEMANTIC, ad_gathernd_12_11),
    AD_BOTH("GatherND", 12, 13),
    /* Identity */
    AD_BOTH("Identity", 1, 13),
    AD_BOTH("Identity", 13, 14),
    AD_BOTH("Identity", 14, 16),
    AD_BOTH("Identity", 16, 19),
    AD_BOTH("Identity", 19, 21),
    AD_BOTH("Identity", 21, 23),
    AD_BOTH("Identity", 23, 24),
    AD_BOTH("Identity", 24, 25),
    /* NonZero */
    AD_GONE("NonZero", 9, AD_EXPAND, ad_nonzero_gone),
    AD_BOTH("NonZero", 9, 13),
    /* OneHot */
    AD_GONE("OneHot", 9, AD_EXPAND, ad_onehot_gone),
    AD_UP("OneHot", 9, 11, AD_SEMANTIC, ad_onehot_9_11),
    AD_DOWN("OneHot", 9, 11, AD_SEMANTIC, ad_onehot_11_9),
    /* Range */
    AD_GONE("Range", 11, AD_EXPAND, ad_range_gone),
    AD_UP("Range", 11, 27, AD_ATTRS, ad_nothing),
    AD_DOWN("Range", 11, 27, AD_ATTRS, ad_range_27_11),
    /* ReverseSequence */
    AD_GONE("ReverseSequence", 10, AD_EXPAND, ad_revseq_gone),
    /* Scatter, ScatterElements, ScatterND, TensorScatter */
    AD_GONE("Scatter", 9, AD_EXPAND, ad_scatter_gone),
    AD_UP("Scatter", 9, 11, AD_RENAME, ad_scatter_9_11),
    AD_DOWN("Scatter", 9, 11, AD_SEMANTIC, ad_scatter_11_9),
    AD_GONE("ScatterElements", 11, AD_RENAME, ad_scatter_elements_gone),
    AD_BOTH("ScatterElements", 11, 13),
    AD_UP("ScatterElements", 13, 16, AD_ATTRS, ad_nothing),
    AD_DOWN("ScatterElements", 13, 16, AD_ATTRS, ad_scatter_16_13),
    AD_UP("ScatterElements", 16, 18, AD_SEMANTIC, ad_nothing),
    AD_DOWN("ScatterElements", 16, 18, AD_SEMANTIC, ad_scatter_18_16),
    AD_GONE("ScatterND", 11, AD_EXPAND, ad_scatternd_gone),
    AD_BOTH("ScatterND", 11, 13),
    AD_UP("ScatterND", 13, 16, AD_ATTRS, ad_nothing),
    AD_DOWN("ScatterND", 13, 16, AD_ATTRS, ad_scatter_16_13),
    AD_UP("ScatterND", 16, 18, AD_SEMANTIC, ad_nothing),
    AD_DOWN("ScatterND", 16, 18, AD_SEMANTIC, ad_scatter_18_16),
    AD_GONE("TensorScatter", 24, AD_EXPAND, ad_tensor_scatter_gone),
    /* Shape, Size */
    AD_BOTH("Shape", 1, 13),
    AD_UP("Shape", 13, 15, AD_ATTRS, ad_nothing),
    AD_DOWN("Shape", 13, 15, AD_EXPAND, ad_shape_15_13),
    AD_BOTH("Shape", 15, 19),
    AD_BOTH("Shape", 19, 21),
    AD_BOTH("Shape", 21, 23),
    AD_BOTH("Shape", 23, 24),
    AD_BOTH("Shape", 24, 25),
    AD_BOTH("Size", 1, 13),
    AD_BOTH("Size", 13, 19),
    AD_BOTH("Size", 19, 21),
    AD_BOTH("Size", 21, 23),
    AD_BOTH("Size", 23, 24),
    AD_BOTH("Size", 24, 25),
    /* TopK */
    AD_UP("TopK", 1, 10, AD_ATTR_INPUT, ad_topk_1_10),
    AD_DOWN("TopK", 1, 10, AD_ATTR_INPUT, ad_topk_10_1),
    AD_UP("TopK", 10, 11, AD_ATTRS, ad_nothing),
    AD_DOWN("TopK", 10, 11, AD_SEMANTIC, ad_topk_11_10),
    AD_BOTH("TopK", 11, 24),
    /* Trilu */
    AD_GONE("Trilu", 14, AD_EXPAND, ad_trilu_gone),
};

const AdFamily ad_family_tensor = {"tensor", ad_tensor,
                                   sizeof ad_tensor / sizeof ad_tensor[0]};
