/*
 * shape.c - adapters of the shape ops: Reshape, Squeeze, Unsqueeze,
 * Flatten, Concat, Split, Slice, Pad, Tile, Expand, Transpose.
 *
 * Every version change of these ops, from the changelogs (the ones not
 * named here add types only and are listed compatible):
 *   Reshape 1 -> 5     `shape` attribute -> input (and the legacy
 *                      consumed_inputs attribute went away);
 *   Reshape 13 -> 14   allowzero (default 0 = a 0 copies the input dim).
 *   Squeeze, Unsqueeze 1 -> 11  negative axes; 11 -> 13 axes attribute ->
 *                      input (optional for Squeeze, required for Unsqueeze).
 *   Flatten 9 -> 11    negative axis.
 *   Concat 1 -> 4      axis became required (version 1 defaulted to 1);
 *          4 -> 11     negative axis.
 *   Split 1 -> 2       the `split` input went (attribute only), axis got a
 *                      default of 0 (version 1 gave none);
 *         2 -> 11      negative axis; 11 -> 13 split attribute -> input;
 *         13 -> 18     num_outputs (equal parts, the last one smaller when
 *                      the dim does not divide).
 *   Slice 1 -> 10      starts/ends/axes attributes -> inputs, steps added;
 *         10 -> 11     negative axes (the clamping of backward slices,
 *                      numpy's in both, spelled out).
 *   Pad 1 -> 2         attribute paddings renamed pads (removal by
 *                      negative pads described);
 *       2 -> 11        pads and value -> inputs (value of the data's type);
 *       13 -> 18       optional axes input; 18 -> 19 mode "wrap".
 *   Tile 1 -> 6        inputs tiles + axis (one axis) -> repeats (all axes);
 *                      below 6 a Tile is written as Concats (see ad_tile_down).
 *   Expand 8           new (below 8: Unsqueeze + Tile when shapes are known).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- helpers ----------------------------------------------------------- */

/* Normalizes the INTS attribute `name` (negative entries) against rank. */
static int ad_sh_ints_attr_down(AdCtx *c, const char *name, int rank, bool sort)
{
    IrAttr *a = ad_attr(c, name);
    if (!a || !a->n_ints)
        return 0;
    size_t n = a->n_ints;
    int64_t *ax = mem_array(n, sizeof *ax);
    memcpy(ax, a->ints, n * sizeof *ax);
    bool changed;
    int rc = ad_norm_axes(c, ax, n, rank, name, &changed);
    if (rc == 0 && sort)
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && ax[j - 1] > ax[j]; j--) {
                int64_t t = ax[j];
                ax[j] = ax[j - 1];
                ax[j - 1] = t;
                changed = true;
            }
    if (rc == 0 && changed)
        ad_set_attr_ints(c, c->n, name, n, ax);
    free(ax);
    return rc;
}

/* Normalizes the INT attribute `name` (absent: the table's default)
 * against rank. */
static int ad_sh_int_attr_down(AdCtx *c, const char *name, int rank)
{
    int64_t axis = ad_attr_i(c, name);
    bool changed;
    if (ad_norm_axes(c, &axis, 1, rank, name, &changed) < 0)
        return -1;
    if (changed)
        ad_set_attr_i(c, c->n, name, axis);
    return 0;
}

/* The rank of the first input (or output) whose rank is known, or -1. */
static int ad_sh_any_rank(const AdCtx *c)
{
    for (size_t i = 0; i < c->n->n_in; i++)
        if (ad_rank(c->n->in[i]) >= 0)
            return ad_rank(c->n->in[i]);
    for (size_t i = 0; i < c->n->n_out; i++)
        if (ad_rank(c->n->out[i]) >= 0)
            return ad_rank(c->n->out[i]);
    return -1;
}

/* Removes input i of c->n (trailing left-out inputs are trimmed). */
static void ad_sh_drop_input(AdCtx *c, size_t i)
{
    IrValue *v = ad_in(c, i);
    if (!v)
        return;
    ir_node_set_input(c->n, i, NULL);
    ad_trim_inputs(c->n);
    ir_value_drop_if_unused(v);
}

/* Replaces input i of c->n by a new 1-D integer constant of type dtype
 * (6 = int32 or 7 = int64). */
static int ad_sh_set_ints_input(AdCtx *c, size_t i, int32_t dtype, size_t n,
                                const int64_t *v)
{
    IrValue *old = ad_in(c, i), *nv;
    if (dtype == IR_INT32) {
        int32_t *w = mem_array(n ? n : 1, sizeof *w);
        for (size_t k = 0; k < n; k++)
            w[k] = (int32_t)v[k];
        int64_t dim = (int64_t)n;
        nv = ad_const_tensor(c, IR_INT32, 1, &dim, w, n * sizeof *w);
        free(w);
    } else {
        nv = ad_const_i64s(c, n, v);
    }
    if (!nv)
        return -1;
    ad_set_input(c, i, nv);
    if (old)
        ir_value_drop_if_unused(old);
    return 0;
}

/* Whether dtype is one of float16, float, double (Pad-2's types). */
static bool ad_sh_is_float3(int32_t t)
{
    return t == IR_FLOAT || t == IR_FLOAT16 || t == IR_DOUBLE;
}

/* ---- Reshape --------------------------------------------------------- */

/* Up 1 -> 5: the shape attribute becomes the shape input (same meaning:
 * 0 copies the input's dim, one -1 is inferred); consumed_inputs was a
 * legacy optimization hint without meaning. */
static int ad_reshape_up(AdCtx *c)
{
    ad_drop_attr(c, "consumed_inputs");
    if (!ad_attr(c, "shape"))
        return ad_refuse(c, DG_ATTRIBUTE, "Reshape-1 without a shape attribute");
    return ad_attr_to_input(c, "shape", 1);
}

/* Down 5 -> 1: a constant shape input becomes the attribute. */
static int ad_reshape_down(AdCtx *c)
{
    if (!ad_in(c, 1))
        return ad_refuse(c, DG_ATTRIBUTE, "Reshape without a shape input");
    return ad_input_to_attr(c, 1, "shape");
}

/* Down 14 -> 13: allowzero=1 makes a 0 in shape a real 0 instead of a
 * copy of the input's dim. A shape known to hold no 0 reads the same
 * either way, so allowzero can go; otherwise there is no older form. */
static int ad_reshape_allowzero_down(AdCtx *c)
{
    if (ad_attr_i(c, "allowzero") == 0) {
        ad_drop_attr(c, "allowzero");
        return 0;
    }
    int64_t *v;
    size_t n;
    IrValue *s = ad_in(c, 1);
    if (!s || !ad_const_ints(s, &v, &n))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "allowzero=1 needs a constant shape to show it holds no 0");
    bool zero = false;
    for (size_t i = 0; i < n; i++)
        zero = zero || v[i] == 0;
    free(v);
    if (zero)
        return ad_refuse(c, DG_SEMANTICS,
                         "allowzero=1 with a 0 in shape (an empty dim) has no older form");
    ad_drop_attr(c, "allowzero");
    return 0;
}

/* ---- Squeeze, Unsqueeze ------------------------------------------------ */

/* Down 11 -> 1: negative axes count from the back of the input. */
static int ad_squeeze_axes_down(AdCtx *c)
{
    return ad_sh_ints_attr_down(c, "axes", ad_rank(ad_in(c, 0)), false);
}

/* Down 11 -> 1: negative axes count from the back of the output (rank of
 * the input plus the number of axes). The axes are sorted too: version 1
 * names output positions; sorted, any reading of it inserts the same. */
static int ad_unsqueeze_axes_down(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "axes");
    int r = ad_rank(ad_in(c, 0));
    int rank = r >= 0 && a ? r + (int)a->n_ints : ad_rank(c->n->out[0]);
    return ad_sh_ints_attr_down(c, "axes", rank, true);
}

/* Up 11 -> 13 (Squeeze): the axes attribute becomes the optional input.
 * An absent or empty attribute squeezed every dim of 1, which is what no
 * input does (an empty input is read either way by implementations). */
static int ad_squeeze_up(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "axes");
    if (!a || !a->n_ints) {
        ad_drop_attr(c, "axes");
        return 0;
    }
    return ad_attr_to_input(c, "axes", 1);
}

/* Down 13 -> 11 (Squeeze): a constant axes input becomes the attribute.
 * An empty axes input is refused: Squeeze-13 does not say whether it
 * squeezes nothing (numpy, ONNX's reference) or every dim of 1. */
static int ad_squeeze_down(AdCtx *c)
{
    IrValue *ax = ad_in(c, 1);
    int64_t *v;
    size_t n;
    if (ax && ad_const_ints(ax, &v, &n)) {
        free(v);
        if (!n)
            return ad_refuse(c, DG_SEMANTICS,
                             "an empty axes input is read differently by implementations");
    }
    return ad_input_to_attr(c, 1, "axes");
}

/* Up 11 -> 13 (Unsqueeze): the required axes attribute becomes the input. */
static int ad_unsqueeze_up(AdCtx *c)
{
    if (!ad_attr(c, "axes"))
        return ad_refuse(c, DG_ATTRIBUTE, "Unsqueeze without axes");
    return ad_attr_to_input(c, "axes", 1);
}

/* Down 13 -> 11 (Unsqueeze): a constant axes input becomes the attribute. */
/* Unsqueeze 13 -> 11 with axes known only at run time (their number k
 * is known from the type): the output has rank R = r + k, and position j
 * is a new 1 when j (or j - R) is among the axes, else the next input
 * dim, input dim j - (new dims before j). Those lengths are computed with
 * integer ops and x is reshaped to them. Every input dim must be known
 * and positive, since Reshape before 14 reads a 0 as "copy this dim". */
static int ad_unsqueeze_dynamic(AdCtx *c, IrValue *axes)
{
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x), k = ad_rank(axes) == 1 ? (int)ad_dim(axes, 0) : -1;
    bool dims_ok = r >= 0;
    for (int i = 0; i < r; i++)
        dims_ok = dims_ok && ad_dim(x, i) > 0;
    if (k < 0 || !dims_ok || r + k > 64)
        return ad_refuse(c, DG_NOT_CONSTANT, "axes '%s' is not a constant, and the %s",
                         axes->name, k < 0 ? "number of axes is unknown"
                                 : !dims_ok ? "input's dims are not all known"
                                            : "output rank is above 64");
    int R = r + k;
    int64_t zero = 0, rr = r + 1, *pos = mem_array((size_t)R, sizeof *pos),
            *dims = mem_array((size_t)r + 1, sizeof *dims);
    for (int j = 0; j < R; j++)
        pos[j] = j;
    for (int i = 0; i < r; i++)
        dims[i] = ad_dim(x, i);
    dims[r] = 1;                          /* new positions read this spare 1 */
    IrValue *pv = ad_const_i64s(c, (size_t)R, pos);
    IrValue *dv = ad_const_int_tensor(c, IR_INT64, 1, &rr, dims, (size_t)rr);
    free(pos);
    free(dims);
    IrValue *f = ad_reduce(c, "ReduceSum", ad_axes_hits(c, axes, R), 1, &zero, false);
    IrValue *before = ad_prefix_sums(c, f, R);       /* new dims before j */
    IrValue *keep = ad_op2(c, "Sub", ad_const_scalar(c, IR_INT64, 1.0), f);
    IrValue *src = ad_op2(c, "Add", ad_op2(c, "Mul", ad_op2(c, "Sub", pv, before), keep),
                          ad_op2(c, "Mul", f, ad_const_scalar(c, IR_INT64, (double)r)));
    IrValue *shape = ad_op2(c, "Gather", dv, src);
    IrValue *in[2] = {x, shape};
    IrNode *rs = shape ? ad_node(c, c->n, "Reshape", 2, in, 1) : NULL;
    if (!rs)
        return -1;
    ad_replace(c, rs);
    return 0;
}

static int ad_unsqueeze_down(AdCtx *c)
{
    IrValue *axes = ad_in(c, 1);
    if (!axes)
        return ad_refuse(c, DG_ATTRIBUTE, "Unsqueeze without axes");
    int64_t *v;
    size_t n;
    if (!ad_const_ints(axes, &v, &n))
        return ad_unsqueeze_dynamic(c, axes);
    free(v);
    return ad_input_to_attr(c, 1, "axes");
}

/* ---- Flatten, Concat, Transpose --------------------------------------- */

/* Down 11 -> 9 (Flatten): axis lies in [-r, r]; a negative one counts from
 * r, so axis + r is the same split point. */
static int ad_flatten_axis_down(AdCtx *c)
{
    int64_t axis = ad_attr_i(c, "axis");
    if (axis >= 0)
        return 0;
    int r = ad_rank(ad_in(c, 0));
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "axis %lld counts from the back and the rank is unknown",
                         (long long)axis);
    if (axis < -r)
        return ad_refuse(c, DG_ATTRIBUTE, "axis %lld is out of range for rank %d",
                         (long long)axis, r);
    ad_set_attr_i(c, c->n, "axis", axis + r);
    return 0;
}

/* Up 1 -> 4 (Concat): axis became required; version 1 defaulted to 1, so
 * an absent axis is made explicit. (Down 4 -> 1 keeps the explicit axis.) */
static int ad_concat_up(AdCtx *c)
{
    if (!ad_attr(c, "axis"))
        ad_set_attr_i(c, c->n, "axis", 1);
    return 0;
}

/* Down 11 -> 4 (Concat): a negative axis becomes axis + rank. */
static int ad_concat_axis_down(AdCtx *c)
{
    if (!ad_attr(c, "axis"))
        return ad_refuse(c, DG_ATTRIBUTE, "Concat without axis");
    return ad_sh_int_attr_down(c, "axis", ad_sh_any_rank(c));
}

/* ---- Split ------------------------------------------------------------- */

/* Up 1 -> 2: version 1 took the sizes from an optional second input (of
 * the data's float type) or the split attribute; version 2 only from the
 * attribute. A constant input becomes the attribute. Version 1 gave axis
 * no default (Caffe2, where it came from, split on axis 1 by default;
 * version 2 says 0), so a node without axis is refused. */
static int ad_split_up_1_2(AdCtx *c)
{
    if (!ad_attr(c, "axis"))
        return ad_refuse(c, DG_ATTRIBUTE,
                         "Split-1 without axis: version 1 defines no default axis");
    IrValue *s = ad_in(c, 1);
    if (!s)
        return 0;
    if (ad_attr(c, "split"))
        return ad_refuse(c, DG_ATTRIBUTE, "Split-1 with both a split input and attribute");
    double *f;
    size_t n;
    if (!ad_const_floats(s, &f, &n))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "input '%s' must be a constant to become attribute 'split'",
                         s->name);
    int64_t *v = mem_array(n ? n : 1, sizeof *v);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        ok = ok && f[i] >= 0 && f[i] <= 9.0e15 && f[i] == floor(f[i]);
        v[i] = ok ? (int64_t)f[i] : 0;
    }
    free(f);
    if (ok)
        ad_set_attr_ints(c, c->n, "split", n, v);
    free(v);
    if (!ok)
        return ad_refuse(c, DG_SEMANTICS, "split sizes that are not whole numbers");
    ad_sh_drop_input(c, 1);
    return 0;
}

/* Down 2 -> 1: the default axis 0 of version 2 is written out (version 1
 * has none). The split attribute means the same. */
static int ad_split_down_2_1(AdCtx *c)
{
    if (!ad_attr(c, "axis"))
        ad_set_attr_i(c, c->n, "axis", 0);
    return 0;
}

/* Down 11 -> 2: a negative axis becomes axis + rank. */
static int ad_split_axis_down(AdCtx *c)
{
    return ad_sh_int_attr_down(c, "axis", ad_rank(ad_in(c, 0)));
}

/* Up 11 -> 13: the split attribute becomes the optional input. */
static int ad_split_up_11_13(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "split");
    if (a && !a->n_ints) {
        ad_drop_attr(c, "split");
        return 0;
    }
    return ad_attr_to_input(c, "split", 1);
}

/* Down 13 -> 11: a constant split input becomes the attribute. */
/* Split 13 -> 11 with part lengths known only at run time: part j is a
 * Slice of x along the axis from the sum of the lengths before j to that
 * plus its own (the prefix sums come from a product with a triangular
 * constant, all in int64). Slice takes its bounds as inputs from opset
 * 10; lower targets then refuse at Slice's own step. */
static int ad_split_dynamic(AdCtx *c, IrValue *split)
{
    int n = c->n->n_out <= 4096 ? (int)c->n->n_out : -1;
    if (n < 0 || ad_rank(split) != 1 || ad_dim(split, 0) != n)
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "split '%s' is not a constant and its length is not known to be %d",
                         split->name, n);
    int64_t axis = ad_attr_i(c, "axis");
    IrValue *starts = ad_prefix_sums(c, split, n);
    IrValue *ends = ad_op2(c, "Add", starts, split), *av = ad_const_i64s(c, 1, &axis);
    for (int j = 0; j < n; j++) {
        int64_t jj = j;
        IrValue *at = ad_const_i64s(c, 1, &jj);
        IrValue *in[4] = {ad_in(c, 0), ad_op2(c, "Gather", starts, at),
                          ad_op2(c, "Gather", ends, at), av};
        if (!in[1] || !in[2] || !in[3])
            return -1;
        IrNode *k = c->n->out[j] ? ad_node(c, c->n, "Slice", 4, in, 1) : NULL;
        if (c->n->out[j] && !k)
            return -1;
        if (k)
            ad_move_output(c, (size_t)j, k, 0);
    }
    ir_node_delete(c->n);
    return 0;
}

static int ad_split_down_13_11(AdCtx *c)
{
    IrValue *split = ad_in(c, 1);
    int64_t *v;
    size_t n;
    if (split && !ad_const_ints(split, &v, &n))
        return ad_split_dynamic(c, split);
    if (split)
        free(v);
    return ad_input_to_attr(c, 1, "split");
}

/* Up 13 -> 18: version 18 wants either a split input or num_outputs.
 * Without split, version 13 splits into equal parts, one per output, which
 * is num_outputs = the number of outputs when the dim divides (version 13
 * has no result when it does not). */
static int ad_split_up_13_18(AdCtx *c)
{
    if (!ad_in(c, 1))
        ad_set_attr_i(c, c->n, "num_outputs", (int64_t)c->n->n_out);
    return 0;
}

/* Down 18 -> 13: num_outputs = k splits a dim d into parts of ceil(d/k),
 * the last one d - (k-1)*ceil(d/k). When k divides d these are equal parts
 * (version 13 without split); otherwise the sizes are written as a split
 * input, which needs d known. */
static int ad_split_down_18_13(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "num_outputs");
    if (!a)
        return 0;
    int64_t k = ad_attr_i(c, "num_outputs");
    if (ad_in(c, 1))
        return ad_refuse(c, DG_ATTRIBUTE, "Split with both split and num_outputs");
    if (k < 1 || k != (int64_t)c->n->n_out)
        return ad_refuse(c, DG_ATTRIBUTE, "num_outputs=%lld for %zu outputs",
                         (long long)k, c->n->n_out);
    IrValue *x = ad_in(c, 0);
    int64_t axis = ad_attr_i(c, "axis");
    bool changed;
    if (ad_norm_axes(c, &axis, 1, ad_rank(x), "axis", &changed) < 0)
        return -1;
    int64_t d = ad_dim(x, (int)axis);
    if (d < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "num_outputs=%lld needs the length of axis %lld known",
                         (long long)k, (long long)axis);
    ad_drop_attr(c, "num_outputs");
    if (d % k == 0)
        return 0;
    int64_t chunk = d / k + 1, last = d - chunk * (k - 1);
    if (last < 0)
        return ad_refuse(c, DG_SEMANTICS, "a dim of %lld does not split into %lld parts",
                         (long long)d, (long long)k);
    int64_t *sz = mem_array((size_t)k, sizeof *sz);
    for (int64_t i = 0; i < k; i++)
        sz[i] = i + 1 < k ? chunk : last;
    int rc = ad_sh_set_ints_input(c, 1, IR_INT64, (size_t)k, sz);
    free(sz);
    return rc;
}

/* ---- Slice ------------------------------------------------------------- */

/* Up 1 -> 10: starts, ends and axes attributes become inputs (int64);
 * steps are left out (all 1, which is version 1's only step). The
 * clamping of out-of-range starts/ends is the same. */
static int ad_slice_up(AdCtx *c)
{
    if (!ad_attr(c, "starts") || !ad_attr(c, "ends"))
        return ad_refuse(c, DG_ATTRIBUTE, "Slice-1 without starts or ends");
    if (ad_attr_to_input(c, "starts", 1) < 0 || ad_attr_to_input(c, "ends", 2) < 0 ||
        ad_attr_to_input(c, "axes", 3) < 0)
        return -1;
    return 0;
}

/* Whether input i is absent or a constant (for a refusal before editing). */
static bool ad_sh_const_or_absent(const AdCtx *c, size_t i, const char **name)
{
    IrValue *v = ad_in(c, i);
    int64_t *x;
    size_t n;
    if (!v)
        return true;
    if (!ad_const_ints(v, &x, &n)) {
        *name = v->name;
        return false;
    }
    free(x);
    return true;
}

/* The indices a Slice with step `step` (not 0) takes along an axis of
 * length d from start s to end e, clamped as Slice-10/11 clamp them
 * ([0, d] forward; [0, d-1] for the start and [-1, d-1] for the end
 * backward), into idx (room for d); returns their count. */
static int64_t ad_sl_indices(int64_t d, int64_t s, int64_t e, int64_t step, int64_t *idx)
{
    s += s < 0 ? d : 0;
    e += e < 0 ? d : 0;
    int64_t lo = step > 0 ? 0 : -1, top = step > 0 ? d : d - 1;
    s = s < 0 ? 0 : s > top ? top : s;
    e = e < lo ? lo : e > top ? top : e;
    uint64_t span = step > 0 ? (uint64_t)(e - s) : (uint64_t)(s - e);
    uint64_t ustep = step > 0 ? (uint64_t)step : (uint64_t)0 - (uint64_t)step;
    int64_t n = d > 0 && (step > 0 ? e > s : s > e) ? (int64_t)((span - 1) / ustep + 1) : 0;
    for (int64_t k = 0; k < n; k++)
        idx[k] = step > 0 ? s + (int64_t)((uint64_t)k * ustep) : s - (int64_t)((uint64_t)k * ustep);
    return n;
}

/* x gathered along `axis` at the indices of one strided slice: exact for
 * any step, and Gather exists at every opset. Needs the axis length. */
static IrValue *ad_sl_gather(AdCtx *c, IrValue *x, int64_t axis, int64_t s, int64_t e,
                             int64_t step)
{
    int64_t d = ad_dim(x, (int)axis);
    if (d < 0) {
        ad_refuse(c, DG_SHAPE_UNKNOWN,
                  "step %lld needs the length of axis %lld known (Slice-1 has no "
                  "steps; a Gather at known indices does it)",
                  (long long)step, (long long)axis);
        return NULL;
    }
    if ((uint64_t)d * 8 > AD_MAX_CONST) {
        ad_refuse(c, DG_TOO_LARGE, "an index table of %lld entries would be too large",
                  (long long)d);
        return NULL;
    }
    int64_t *idx = mem_array(d ? (size_t)d : 1, sizeof *idx);
    int64_t n = ad_sl_indices(d, s, e, step, idx);
    IrValue *t = ad_const_int_tensor(c, IR_INT64, 1, &n, idx, (size_t)n);
    free(idx);
    return ad_gather(c, x, t, axis);
}

/* Steps other than 1 below 10: each such axis becomes a Gather at its
 * constant indices (before c->n, which then reads the gathered value);
 * the step-1 entries stay in st/en/ax (compacted, *n updated). When no
 * entry is left (*n = 0), the last Gather replaces c->n. */
static int ad_sl_steps_down(AdCtx *c, int64_t *st, int64_t *en, int64_t *ax,
                            const int64_t *sp, size_t *n)
{
    IrValue *y = ad_in(c, 0);
    bool changed;
    if (ad_norm_axes(c, ax, *n, ad_rank(y), "axis", &changed) < 0)
        return -1;
    size_t keep = 0;
    for (size_t i = 0; i < *n; i++) {
        if (sp[i] == 0)
            return ad_refuse(c, DG_ATTRIBUTE, "a step of 0");
        if (sp[i] != 1) {
            y = ad_sl_gather(c, y, ax[i], st[i], en[i], sp[i]);
            if (!y)
                return -1;
            continue;
        }
        st[keep] = st[i], en[keep] = en[i], ax[keep++] = ax[i];
    }
    *n = keep;
    if (keep)
        ad_set_input(c, 0, y);
    return keep ? 0 : ad_replace_by(c, y);
}

/* The constant integer input i of c->n (present and known, checked). */
static int64_t *ad_sl_ints(const AdCtx *c, size_t i, size_t *n)
{
    int64_t *v = NULL;
    *n = 0;
    if (!ad_const_ints(ad_in(c, i), &v, n))
        *n = 0;
    return v;
}

/* Down 10 -> 1 with steps other than 1: see ad_sl_steps_down; the
 * step-1 axes stay a Slice-1. Returns 1 when c->n is gone. */
static int ad_slice_steps(AdCtx *c)
{
    size_t n, ne, na, ns;
    int64_t *st = ad_sl_ints(c, 1, &n), *en = ad_sl_ints(c, 2, &ne), *sp = ad_sl_ints(c, 4, &ns);
    int64_t *ax = ad_in(c, 3) ? ad_sl_ints(c, 3, &na) : mem_array(n ? n : 1, sizeof *ax);
    if (!ad_in(c, 3))
        for (na = 0; na < n; na++)
            ax[na] = (int64_t)na;
    int rc = ne != n || na != n || ns != n
                 ? ad_refuse(c, DG_ATTRIBUTE, "starts, ends, axes and steps differ in length")
                 : ad_sl_steps_down(c, st, en, ax, sp, &n);
    if (rc == 0 && n == 0)
        rc = 1;
    else if (rc == 0) {
        int32_t t = ad_elem(ad_in(c, 1)) == IR_INT32 ? IR_INT32 : IR_INT64;
        ad_sh_drop_input(c, 4);
        if (ad_sh_set_ints_input(c, 1, t, n, st) < 0 || ad_sh_set_ints_input(c, 2, t, n, en) < 0 ||
            ad_sh_set_ints_input(c, 3, t, n, ax) < 0)
            rc = -1;
    }
    free(st), free(en), free(ax), free(sp);
    return rc;
}

/* Down 10 -> 1: constant starts, ends and axes become attributes. Version
 * 1 has no steps: the axes with a step other than 1 become Gathers first
 * (ad_slice_steps), which needs their lengths known. */
static int ad_slice_down(AdCtx *c)
{
    const char *bad = NULL;
    for (size_t i = 1; i <= 4; i++)
        if (!ad_sh_const_or_absent(c, i, &bad))
            return ad_refuse(c, DG_NOT_CONSTANT,
                             "input '%s' must be a constant for Slice-1", bad);
    if (!ad_in(c, 1) || !ad_in(c, 2))
        return ad_refuse(c, DG_ATTRIBUTE, "Slice without starts or ends");
    IrValue *st = ad_in(c, 4);
    if (st) {
        int64_t *v;
        size_t n;
        (void)ad_const_ints(st, &v, &n);
        bool ones = true;
        for (size_t i = 0; i < n; i++)
            ones = ones && v[i] == 1;
        free(v);
        int rc = ones ? 0 : ad_slice_steps(c);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        ad_sh_drop_input(c, 4);
    }
    if (ad_input_to_attr(c, 3, "axes") < 0 || ad_input_to_attr(c, 2, "ends") < 0 ||
        ad_input_to_attr(c, 1, "starts") < 0)
        return -1;
    return 0;
}

/* Down 11 -> 10: negative axes become axis + rank (a new constant of the
 * same index type as the other inputs). Backward steps pass as they are:
 * Slice-10's text says an out-of-range start or end "is n", which is no
 * index for a backward slice, but the text also says "similar to numpy",
 * and its node tests and ONNX's reference implementation slice as numpy
 * (Python) does, which is the clamping Slice-11 spells out; the bump to
 * 11 was for negative axes. So the same starts and ends mean the same. */
static int ad_slice_axes_down(AdCtx *c)
{
    IrValue *axv = ad_in(c, 3);
    int64_t *ax = NULL;
    size_t n = 0;
    if (axv) {
        if (!ad_const_ints(axv, &ax, &n))
            return ad_refuse(c, DG_NOT_CONSTANT,
                             "axes '%s' must be a constant to rule out negative axes",
                             axv->name);
        bool changed;
        if (ad_norm_axes(c, ax, n, ad_rank(ad_in(c, 0)), "axis", &changed) < 0) {
            free(ax);
            return -1;
        }
        int32_t at = ad_elem(axv) == IR_INT32 ? IR_INT32 : IR_INT64;
        if (changed && ad_sh_set_ints_input(c, 3, at, n, ax) < 0) {
            free(ax);
            return -1;
        }
    }
    free(ax);
    return 0;
}

/* ---- Pad --------------------------------------------------------------- */

/* Renames INTS attribute `from` to `to`. */
static void ad_pad_rename(AdCtx *c, const char *from, const char *to)
{
    IrAttr *a = ad_attr(c, from);
    size_t n = a->n_ints;
    int64_t *v = mem_array(n ? n : 1, sizeof *v);
    if (n)
        memcpy(v, a->ints, n * sizeof *v);
    ad_drop_attr(c, from);
    ad_set_attr_ints(c, c->n, to, n, v);
    free(v);
}

/* Up 1 -> 2: paddings is renamed pads (same layout: all begins, then all
 * ends). */
static int ad_pad_up_1_2(AdCtx *c)
{
    if (!ad_attr(c, "paddings"))
        return ad_refuse(c, DG_ATTRIBUTE, "Pad-1 without paddings");
    ad_pad_rename(c, "paddings", "pads");
    return 0;
}

/* Down 2 -> 1: pads is renamed paddings. Version 1 only adds elements;
 * negative pads (removal, from version 2) are refused. */
static int ad_pad_down_2_1(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "pads");
    if (!a)
        return ad_refuse(c, DG_ATTRIBUTE, "Pad without pads");
    for (size_t i = 0; i < a->n_ints; i++)
        if (a->ints[i] < 0)
            return ad_refuse(c, DG_SEMANTICS, "Pad-1 cannot remove elements (negative pads)");
    ad_pad_rename(c, "pads", "paddings");
    return 0;
}

/* Whether the node's mode is "constant" (the default). */
static bool ad_pad_is_constant(const AdCtx *c)
{
    char buf[32];
    return strcmp(ad_attr_s(c, "mode", buf, sizeof buf), "constant") == 0;
}

/* Up 2 -> 11: pads becomes an int64 input, value the optional
 * constant_value input of the data's type. A value of +0 is the default
 * (input left out); -0 and others are kept (value is a float, which
 * float16/double data hold exactly as the old op converted it). Other
 * modes ignore value. */
static int ad_pad_up_2_11(AdCtx *c)
{
    if (!ad_attr(c, "pads"))
        return ad_refuse(c, DG_ATTRIBUTE, "Pad without pads");
    float value = ad_attr_f(c, "value");
    bool keep = ad_pad_is_constant(c) && (value != 0.0f || signbit(value));
    IrValue *cv = NULL;
    if (keep) {
        int32_t et = ad_elem(ad_in(c, 0));
        if (!et)
            return ad_refuse(c, DG_TYPE_UNKNOWN,
                             "the data's type is needed for constant_value");
        if (!(cv = ad_const_scalar(c, et, value)))
            return -1;
    }
    if (ad_attr_to_input(c, "pads", 1) < 0)
        return -1;
    ad_drop_attr(c, "value");
    if (cv)
        ad_set_input(c, 2, cv);
    return 0;
}

/* Down 11 -> 2: constant pads become the attribute, a constant
 * constant_value the float attribute value (refused when float does not
 * hold it exactly, e.g. some doubles). Modes other than constant ignore
 * constant_value, so it is dropped. */
static int ad_pad_down_11_2(AdCtx *c)
{
    IrValue *cv = ad_in(c, 2);
    if (cv && ad_pad_is_constant(c)) {
        int32_t et = ad_elem(ad_in(c, 0));
        if (et && !ad_sh_is_float3(et))
            return ad_refuse(c, DG_TYPE, "Pad-2 has no type %s",
                             ir_dtype_name(et) ? ir_dtype_name(et) : "?");
        double *v;
        size_t n;
        if (!ad_const_floats(cv, &v, &n))
            return ad_refuse(c, DG_NOT_CONSTANT,
                             "constant_value '%s' must be a constant to become attribute "
                             "'value'", cv->name);
        double x = n == 1 ? v[0] : 0.0;
        free(v);
        if (n != 1)
            return ad_refuse(c, DG_ATTRIBUTE, "constant_value must hold one element");
        if (!isnan(x) && (double)(float)x != x)
            return ad_refuse(c, DG_SEMANTICS, "constant_value %.17g is not a float", x);
        ad_set_attr_f(c, c->n, "value", (float)x);
    }
    const char *bad = NULL;
    if (!ad_sh_const_or_absent(c, 1, &bad))
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "pads '%s' must be a constant to become attribute 'pads'", bad);
    ad_sh_drop_input(c, 2);
    return ad_input_to_attr(c, 1, "pads");
}

/* Pad 18 -> 13 with axes or pads known only at run time: the full pads
 * (begin and end for each of the r axes) are the per-axis pads scattered
 * onto their axes. M[k][j] = 1 when axes[k] is j (or j - r), and
 * begin[j] = sum_k M[k][j] * pads[k], end[j] likewise with pads[na + k],
 * all in int64, which is exact. Pad-13 reads the result as its input. */
static int ad_pad_axes_dynamic(AdCtx *c, IrValue *axv, IrValue *pv)
{
    int r = ad_rank(ad_in(c, 0));
    int64_t na = ad_rank(axv) == 1 ? ad_dim(axv, 0) : -1;
    if (r < 0 || r > 64 || na < 0 || na > 64 || ad_rank(pv) != 1 || ad_dim(pv, 0) != 2 * na)
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "axes and pads are not constants, and the rank or their lengths are unknown");
    int64_t *lo = mem_array((size_t)na + 1, sizeof *lo),
            *hi = mem_array((size_t)na + 1, sizeof *hi), zero = 0;
    for (int64_t k = 0; k < na; k++) {
        lo[k] = k;
        hi[k] = na + k;
    }
    IrValue *lv = ad_const_i64s(c, (size_t)na, lo), *hv = ad_const_i64s(c, (size_t)na, hi);
    free(lo);
    free(hi);
    IrValue *m = ad_axes_hits(c, axv, r);                                /* [na,r] */
    IrValue *col_lo = ad_axes_op(c, c->n, "Unsqueeze", ad_op2(c, "Gather", pv, lv), 1,
                                 (int64_t[]){1});
    IrValue *col_hi = ad_axes_op(c, c->n, "Unsqueeze", ad_op2(c, "Gather", pv, hv), 1,
                                 (int64_t[]){1});
    IrValue *begin = ad_reduce(c, "ReduceSum", ad_op2(c, "Mul", m, col_lo), 1, &zero, false);
    IrValue *end = ad_reduce(c, "ReduceSum", ad_op2(c, "Mul", m, col_hi), 1, &zero, false);
    IrValue *in[2] = {begin, end};
    IrNode *cat = begin && end ? ad_node_in(c, c->domain, c->n, "Concat", 2, in, 1) : NULL;
    if (!cat)
        return -1;
    ad_set_attr_i(c, cat, "axis", 0);
    if (ad_infer(c, cat) < 0)
        return -1;
    ad_set_input(c, 1, cat->out[0]);
    ad_sh_drop_input(c, 3);
    return 0;
}

/* Down 18 -> 13: with the axes input, pads holds begins then ends for
 * those axes only; version 13 wants them for every axis. Constant axes
 * and pads and a known rank give the full pads (0 for the other axes). */
static int ad_pad_axes_down(AdCtx *c)
{
    IrValue *axv = ad_in(c, 3), *pv = ad_in(c, 1);
    if (!axv)
        return 0;
    int r = ad_rank(ad_in(c, 0));
    int64_t *ax = NULL, *p = NULL;
    size_t na, np;
    if (!ad_const_ints(axv, &ax, &na) || !ad_const_ints(pv, &p, &np)) {
        free(ax);
        return ad_pad_axes_dynamic(c, axv, pv);
    }
    bool changed;
    int rc = r < 0 ? ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of the data is unknown")
           : np != 2 * na ? ad_refuse(c, DG_ATTRIBUTE, "pads does not match axes")
           : ad_norm_axes(c, ax, na, r, "axis", &changed);
    int64_t *full = mem_array(2 * (size_t)(r > 0 ? r : 1), sizeof *full);
    bool *seen = mem_array((size_t)(r > 0 ? r : 1), sizeof *seen);
    for (size_t i = 0; rc == 0 && i < na; i++) {
        if (seen[ax[i]]) {
            rc = ad_refuse(c, DG_ATTRIBUTE, "axis %lld is repeated", (long long)ax[i]);
            break;
        }
        seen[ax[i]] = true;
        full[ax[i]] = p[i];
        full[ax[i] + r] = p[i + na];
    }
    if (rc == 0)
        rc = ad_sh_set_ints_input(c, 1, IR_INT64, 2 * (size_t)r, full);
    if (rc == 0)
        ad_sh_drop_input(c, 3);
    free(ax);
    free(p);
    free(full);
    free(seen);
    return rc;
}

/* Down 19 -> 18: mode "wrap" does not exist before 19. */
static int ad_pad_wrap_down(AdCtx *c)
{
    char buf[32];
    if (strcmp(ad_attr_s(c, "mode", buf, sizeof buf), "wrap") == 0)
        return ad_refuse(c, DG_ATTRIBUTE, "mode \"wrap\" does not exist before Pad-19");
    return 0;
}

/* ---- Tile -------------------------------------------------------------- */

/* Reads a one-element constant as a whole number: float, as Tile-1's
 * schema types tiles and axis (T), or integer, as its T1 constraint says
 * (and as this project's evaluator reads them). Both mean the count. */
static bool ad_tile_scalar(const IrValue *v, int64_t *out)
{
    double *f;
    int64_t *i;
    size_t n;
    if (ad_const_floats(v, &f, &n)) {
        bool ok = n == 1 && fabs(f[0]) < 9.0e15 && f[0] == floor(f[0]);
        if (ok)
            *out = (int64_t)f[0];
        free(f);
        return ok;
    }
    if (ad_const_ints(v, &i, &n)) {
        bool ok = n == 1;
        if (ok)
            *out = i[0];
        free(i);
        return ok;
    }
    return false;
}

/* Up 1 -> 6: Tile-1 repeats along one axis (inputs tiles, axis); Tile-6
 * takes one count per axis. Constant tiles and axis and a known rank give
 * repeats = 1 everywhere but tiles at axis. */
static int ad_tile_up(AdCtx *c)
{
    int64_t tiles, axis;
    if (!ad_tile_scalar(ad_in(c, 1), &tiles) || !ad_tile_scalar(ad_in(c, 2), &axis))
        return ad_refuse(c, DG_NOT_CONSTANT, "tiles and axis must be whole-number constants");
    int r = ad_rank(ad_in(c, 0));
    if (r < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "repeats needs the rank of the input");
    if (axis < 0 || axis >= r || tiles < 0)
        return ad_refuse(c, DG_ATTRIBUTE, "axis %lld / tiles %lld out of range",
                         (long long)axis, (long long)tiles);
    int64_t *rep = mem_array((size_t)(r ? r : 1), sizeof *rep);
    for (int i = 0; i < r; i++)
        rep[i] = i == axis ? tiles : 1;
    int rc = ad_sh_set_ints_input(c, 1, IR_INT64, (size_t)r, rep);
    free(rep);
    if (rc == 0)
        ad_sh_drop_input(c, 2);
    return rc;
}

/* The most copies one Concat is given when it stands for a repeat. */
#define AD_TILE_MAX_COPIES 64

/* Down 6 -> 1: Tile-1 repeats along one axis, with tiles and axis inputs
 * that its schema types as the data's float type while also constraining
 * them to int64 (T1), so no Tile-1 node reads the same everywhere. The
 * older form used instead is Concat: r copies of y concatenated along
 * axis a are y tiled r times along a, and tiling along different axes
 * composes, so one Concat per repeated axis (axis attribute, all of
 * Concat-4's types) computes Tile exactly; no repeat at all is Identity.
 * A repeat of 0 (an empty axis) and repeats above AD_TILE_MAX_COPIES are
 * refused. */
static int ad_tile_down(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int64_t *rep;
    size_t n;
    if (!ad_in(c, 1) || !ad_const_ints(ad_in(c, 1), &rep, &n))
        return ad_refuse(c, DG_NOT_CONSTANT, "repeats must be a constant for Tile-1");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (rep[i] < 1 || rep[i] > AD_TILE_MAX_COPIES)
            rc = ad_refuse(c, DG_SEMANTICS, "a repeat of %lld is not written as a Concat",
                           (long long)rep[i]);
    IrNode *last = NULL;
    IrValue *y = x;
    IrValue *copies[AD_TILE_MAX_COPIES];
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (rep[i] == 1)
            continue;
        for (int64_t k = 0; k < rep[i]; k++)
            copies[k] = y;
        y = ad_concat(c, copies, (size_t)rep[i], (int64_t)i);
        if (!y)
            rc = -1;
        else
            last = y->producer;
    }
    free(rep);
    if (rc == 0 && !last && !(last = ad_node(c, c->n, "Identity", 1, &x, 1)))
        rc = -1;
    if (rc == 0)
        ad_replace(c, last);
    return rc;
}

/* ---- Expand ------------------------------------------------------------ */

/* Expand-8 below opset 8: with a constant shape and the input dims known
 * where the shape asks for more than 1, the output is x with leading
 * dims of 1 added (Unsqueeze) and each dim of 1 that the shape widens
 * repeated (Tile): the same elements in the same places, whatever their
 * type or value (no arithmetic). No change at all is Identity. */
static int ad_expand_down(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int64_t *shape;
    size_t n;
    if (!ad_in(c, 1) || !ad_const_ints(ad_in(c, 1), &shape, &n))
        return ad_refuse(c, DG_NOT_CONSTANT, "Expand below opset 8 needs a constant shape");
    int rx = ad_rank(x);
    size_t r = rx > 0 && (size_t)rx > n ? (size_t)rx : n;
    int64_t *rep = mem_array(r ? r : 1, sizeof *rep);
    int rc = rx < 0 ? ad_refuse(c, DG_SHAPE_UNKNOWN, "the input's rank is unknown") : 0;
    bool tile = false;
    for (size_t i = 0; i < r && rc == 0; i++) {
        size_t lead = r - (size_t)rx;
        int64_t a = i >= lead ? ad_dim(x, (int)(i - lead)) : 1;
        int64_t b = i >= r - n ? shape[i - (r - n)] : 1;
        rep[i] = 1;
        if (b == 1 || (a == b && a > 1))
            continue;
        if (a < 0)
            rc = ad_refuse(c, DG_SHAPE_UNKNOWN, "input dim %zu is unknown", i - lead);
        else if (a != 1 || b < 1)
            rc = ad_refuse(c, DG_SEMANTICS, "dim %lld does not expand to %lld",
                           (long long)a, (long long)b);
        else {
            tile = true;
            rep[i] = b;
        }
    }
    free(shape);
    IrNode *k = NULL;
    IrValue *y = x;
    if (rc == 0 && r > (size_t)rx) {
        int64_t *axes = mem_array(r, sizeof *axes);
        for (size_t i = 0; i < r - (size_t)rx; i++)
            axes[i] = (int64_t)i;
        y = ad_axes_op(c, c->n, "Unsqueeze", x, r - (size_t)rx, axes);
        free(axes);
        rc = y ? 0 : -1;
        k = y ? y->producer : NULL;
    }
    if (rc == 0 && tile) {
        IrValue *rv = c->build_opset >= 6 ? ad_const_i64s(c, r, rep) : NULL;
        IrValue *in[2] = {y, rv};
        k = rv ? ad_node(c, c->n, "Tile", 2, in, 1) : NULL;
        if (!k)
            rc = c->build_opset >= 6 ? -1
               : ad_refuse(c, DG_INTERNAL, "Tile-6 is not available at opset %lld",
                           (long long)c->build_opset);
    }
    free(rep);
    if (rc == 0 && !k && !(k = ad_node(c, c->n, "Identity", 1, &x, 1)))
        rc = -1;
    if (rc == 0)
        ad_replace(c, k);
    return rc;
}

/* ---- the table ------------------------------------------------------- */

static const AdEntry ad_shape[] = {
    AD_UP("Reshape", 1, 5, AD_ATTR_INPUT, ad_reshape_up),
    AD_DOWN("Reshape", 1, 5, AD_ATTR_INPUT, ad_reshape_down),
    AD_BOTH("Reshape", 5, 13),
    AD_UP("Reshape", 13, 14, AD_ATTRS, ad_nothing),
    AD_DOWN("Reshape", 13, 14, AD_ATTRS, ad_reshape_allowzero_down),
    AD_BOTH("Reshape", 14, 19), AD_BOTH("Reshape", 19, 21), AD_BOTH("Reshape", 21, 23),
    AD_BOTH("Reshape", 23, 24), AD_BOTH("Reshape", 24, 25),

    AD_UP("Squeeze", 1, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Squeeze", 1, 11, AD_SEMANTIC, ad_squeeze_axes_down),
    AD_UP("Squeeze", 11, 13, AD_ATTR_INPUT, ad_squeeze_up),
    AD_DOWN("Squeeze", 11, 13, AD_ATTR_INPUT, ad_squeeze_down),
    AD_BOTH("Squeeze", 13, 21), AD_BOTH("Squeeze", 21, 23), AD_BOTH("Squeeze", 23, 24),
    AD_BOTH("Squeeze", 24, 25),

    AD_UP("Unsqueeze", 1, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Unsqueeze", 1, 11, AD_SEMANTIC, ad_unsqueeze_axes_down),
    AD_UP("Unsqueeze", 11, 13, AD_ATTR_INPUT, ad_unsqueeze_up),
    AD_DOWN("Unsqueeze", 11, 13, AD_ATTR_INPUT, ad_unsqueeze_down),
    AD_BOTH("Unsqueeze", 13, 21), AD_BOTH("Unsqueeze", 21, 23),
    AD_BOTH("Unsqueeze", 23, 24), AD_BOTH("Unsqueeze", 24, 25),

    AD_BOTH("Flatten", 1, 9),
    AD_UP("Flatten", 9, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Flatten", 9, 11, AD_SEMANTIC, ad_flatten_axis_down),
    AD_BOTH("Flatten", 11, 13), AD_BOTH("Flatten", 13, 21), AD_BOTH("Flatten", 21, 23),
    AD_BOTH("Flatten", 23, 24), AD_BOTH("Flatten", 24, 25),

    AD_UP("Concat", 1, 4, AD_SEMANTIC, ad_concat_up),
    AD_DOWN("Concat", 1, 4, AD_SEMANTIC, ad_nothing),
    AD_UP("Concat", 4, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Concat", 4, 11, AD_SEMANTIC, ad_concat_axis_down),
    AD_BOTH("Concat", 11, 13),

    AD_UP("Split", 1, 2, AD_ATTR_INPUT, ad_split_up_1_2),
    AD_DOWN("Split", 1, 2, AD_ATTR_INPUT, ad_split_down_2_1),
    AD_UP("Split", 2, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Split", 2, 11, AD_SEMANTIC, ad_split_axis_down),
    AD_UP("Split", 11, 13, AD_ATTR_INPUT, ad_split_up_11_13),
    AD_DOWN("Split", 11, 13, AD_ATTR_INPUT, ad_split_down_13_11),
    AD_UP("Split", 13, 18, AD_ATTRS, ad_split_up_13_18),
    AD_DOWN("Split", 13, 18, AD_ATTRS, ad_split_down_18_13),

    AD_UP("Slice", 1, 10, AD_ATTR_INPUT, ad_slice_up),
    AD_DOWN("Slice", 1, 10, AD_ATTR_INPUT, ad_slice_down),
    AD_UP("Slice", 10, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Slice", 10, 11, AD_SEMANTIC, ad_slice_axes_down),
    AD_BOTH("Slice", 11, 13),

    AD_UP("Pad", 1, 2, AD_ATTRS, ad_pad_up_1_2),
    AD_DOWN("Pad", 1, 2, AD_ATTRS, ad_pad_down_2_1),
    AD_UP("Pad", 2, 11, AD_ATTR_INPUT, ad_pad_up_2_11),
    AD_DOWN("Pad", 2, 11, AD_ATTR_INPUT, ad_pad_down_11_2),
    AD_BOTH("Pad", 11, 13),
    AD_UP("Pad", 13, 18, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Pad", 13, 18, AD_SEMANTIC, ad_pad_axes_down),
    AD_UP("Pad", 18, 19, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Pad", 18, 19, AD_SEMANTIC, ad_pad_wrap_down),
    AD_BOTH("Pad", 19, 21), AD_BOTH("Pad", 21, 23), AD_BOTH("Pad", 23, 24),
    AD_BOTH("Pad", 24, 25),

    AD_UP("Tile", 1, 6, AD_ATTR_INPUT, ad_tile_up),
    AD_DOWN("Tile", 1, 6, AD_ATTR_INPUT, ad_tile_down),
    AD_BOTH("Tile", 6, 13),

    AD_GONE("Expand", 8, AD_EXPAND, ad_expand_down),
    AD_BOTH("Expand", 8, 13),

    AD_BOTH("Transpose", 1, 13), AD_BOTH("Transpose", 13, 21), AD_BOTH("Transpose", 21, 23),
    AD_BOTH("Transpose", 23, 24), AD_BOTH("Transpose", 24, 25),
};

const AdFamily ad_family_shape = {"shape", ad_shape, sizeof ad_shape / sizeof ad_shape[0]};
