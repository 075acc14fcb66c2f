/*
 * tensor.c - adapters of the ops that build tensors: CenterCropPad,
 * Constant, ConstantOfShape, DepthToSpace, EyeLike, OneHot, Range, Shape,
 * Size, SpaceToDepth, Trilu, Unique. The index ops are in index.c, Cast,
 * CastLike and Identity in elementwise.c.
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

#include "adapters/adapters.h"

/* ---- building ------------------------------------------------------- */

/* A 0-D zero of element type dt (not strings). */
static IrValue *ad_t_zero(AdCtx *c, int32_t dt)
{
    TkTensor *z = tk_new(dt, 0, NULL, NULL);
    if (!z) {
        ad_refuse(c, DG_TYPE, "no zero of type %s", ir_dtype_name(dt) ? ir_dtype_name(dt) : "?");
        return NULL;
    }
    IrValue *r = ad_const_of(c, z);
    tk_free(z);
    return r;
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
    int64_t sel[AD_MAX_STATIC_RANK] = {0}, zero = 0;
    for (size_t i = 0; i < n; i++)
        sel[axes[i]] = (int64_t)i + 1;
    IrValue *ax = ad_const_i64s(c, n, axes);
    IrValue *in = ad_gather(c, ad_op1(c, "Shape", x), ax, 0);
    IrValue *v = ad_op2(c, "Sub", in, ad_cast(c, ad_in(c, 1), IR_INT64));
    IrValue *pos = ad_op2(c, "Less", ad_const_scalar(c, IR_DOUBLE, 0.0), ad_cast(c, v, IR_DOUBLE));
    IrValue *crop = ad_op2(c, "Mul", v, ad_cast(c, pos, IR_INT64));
    IrValue *pad = ad_op2(c, "Sub", crop, v), *two = ad_const_int(c, IR_INT64, 2);
    IrValue *cs = ad_op2(c, "Div", crop, two);
    IrValue *ce = ad_op2(c, "Sub", ad_op2(c, "Add", cs, in), crop);
    IrValue *pb = ad_op2(c, "Div", pad, two), *pe = ad_op2(c, "Sub", pad, pb);
    IrValue *z = ad_const_i64s(c, 1, &zero), *sv = ad_const_i64s(c, (size_t)r, sel);
    IrValue *before = ad_gather(c, ad_concat(c, (IrValue *[]){z, pb}, 2, 0), sv, 0);
    IrValue *after = ad_gather(c, ad_concat(c, (IrValue *[]){z, pe}, 2, 0), sv, 0);
    IrValue *pads = ad_concat(c, (IrValue *[]){before, after}, 2, 0);
    IrValue *sin[4] = {x, cs, ce, ax};
    if (!pads || !sin[1] || !sin[2] || !sin[3])
        return -1;
    IrNode *sl = ad_node(c, c->n, "Slice", 4, sin, 1);
    if (!sl)
        return -1;
    return ad_replace_by(c, ad_op2(c, "Pad", sl->out[0], pads));
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
    if (r < 0 || r > AD_MAX_STATIC_RANK)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of '%s' is unknown", x->name);
    IrAttr *ax = ad_attr(c, "axes");
    int64_t axes[AD_MAX_STATIC_RANK], pads[2 * AD_MAX_STATIC_RANK] = {0};
    int64_t cs[AD_MAX_STATIC_RANK], ce[AD_MAX_STATIC_RANK], ca[AD_MAX_STATIC_RANK];
    size_t na = ax ? ax->n_ints : (size_t)r, nc = 0, np = 0;
    bool seen[AD_MAX_STATIC_RANK] = {false}, bad = na > (size_t)r;
    for (size_t i = 0; !bad && i < na; i++) {
        bad = !ad_axis(ax ? ax->ints[i] : (int64_t)i, r, 0, &axes[i]) || seen[axes[i]];
        if (!bad)
            seen[axes[i]] = true;
    }
    if (bad)
        return ad_refuse(c, DG_ATTRIBUTE, "the axes do not fit the input");
    int64_t *shape = NULL;
    size_t n = 0;
    bool known = ad_const_ints(ad_in(c, 1), &shape, &n);
    if (known && n != na) {
        free(shape);
        return ad_refuse(c, DG_ATTRIBUTE, "shape has %zu sizes for %zu axes", n, na);
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
        y = ad_slice(c, y, nc, cs, ce, ca, NULL);
    if (np)
        y = ad_pad(c, y, 2 * (size_t)r, pads);
    if (y == x)
        y = ad_op1(c, "Identity", x);
    return ad_replace_by(c, y);
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
    if (a->ref_attr_name || !sp || !sp->values || sp->ndims > AD_MAX_STATIC_RANK)
        return ad_refuse(c, DG_ATTRIBUTE, "sparse_value holds no sparse tensor here");
    IrError e;
    TkTensor *vals = tk_from_ir(sp->values, &e);
    TkTensor *ind = vals && sp->indices ? tk_from_ir(sp->indices, &e) : NULL;
    int64_t total = ad_prod(sp->dims, 0, (int)sp->ndims, AD_MAX_CONST);
    size_t nnz = vals ? vals->numel : 0, nd = sp->ndims;
    bool bad = !vals || (nnz && !ind) || total < 0 || vals->rank != 1 ||
               (uint64_t)total * tk_elem_size(vals->dtype) > AD_MAX_CONST ||
               (ind && !(ind->rank == 1 && ind->numel == nnz) &&
                !(ind->rank == 2 && ind->dims[0] == (int64_t)nnz &&
                  ind->dims[1] == (int64_t)nd));
    TkTensor *dense = bad ? NULL : tk_new(vals->dtype, nd, sp->dims, &e);
    for (size_t k = 0; dense && k < nnz; k++) {
        int64_t lin = 0;
        if (ind->rank == 1) {
            lin = tk_get_i(ind, k);
        } else {
            for (size_t d = 0; d < nd && lin >= 0; d++) {
                int64_t i = tk_get_i(ind, k * nd + d);
                lin = i < 0 || i >= sp->dims[d] ? -1 : lin * sp->dims[d] + i;
            }
        }
        if (lin < 0 || lin >= total) {
            tk_free(dense);
            dense = NULL;
            break;
        }
        tk_copy(dense, (size_t)lin, vals, k, 1);
    }
    tk_free(vals);
    tk_free(ind);
    if (!dense)
        return ad_refuse(c, DG_ATTRIBUTE,
                         "sparse_value cannot become a small dense tensor");
    IrTensor *t = tk_to_ir(dense, NULL);
    tk_free(dense);
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
    if (!dt || dt == IR_FLOAT || dt == IR_FLOAT16 || dt == IR_DOUBLE || a->ref_attr_name || !c->m ||
        c->g != c->m->graph || c->fn)
        return 0;
    IrError e;
    TkTensor *v = tk_from_ir(a->t, &e);
    if (!v)
        return ad_refuse(c, DG_ATTRIBUTE, "the value cannot be read: %s", e.msg);
    IrValue *k = ad_const_of(c, v);
    tk_free(v);
    return k ? ad_replace_value(c, k) : -1;
}

/* A tensor for Constant's `value` of n strings (0-D when !list). */
static IrTensor *ad_t_strings(const IrBytes *s, size_t n, bool list)
{
    IrTensor *t = mem_alloc(sizeof *t);
    t->has_data_type = true;
    t->data_type = 8;
    t->ndims = list ? 1 : 0;
    t->dims = mem_array(1, sizeof *t->dims);
    t->dims[0] = (int64_t)n;
    t->n_string = n;
    t->string_data = mem_array(n ? n : 1, sizeof *t->string_data);
    for (size_t k = 0; k < n; k++) {
        t->string_data[k].len = s[k].len;
        t->string_data[k].data = mem_alloc(s[k].len + 1);
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
            return ad_refuse(c, DG_ATTRIBUTE, "%s refers to a function attribute",
                             names[w]);
        bool list = w % 2 == 1;
        int64_t dim = 0;
        IrTensor *t = NULL;
        if (w == 0 || w == 1) {
            float one = a->f;
            dim = list ? (int64_t)a->n_floats : 1;
            t = ir_tensor_new(NULL, IR_FLOAT, list, &dim, list ? (const void *)a->floats : &one,
                              (size_t)dim * sizeof(float));
        } else if (w == 2 || w == 3) {
            int64_t one = a->i;
            dim = list ? (int64_t)a->n_ints : 1;
            t = ir_tensor_new(NULL, IR_INT64, list, &dim, list ? (const void *)a->ints : &one,
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
    TkTensor *val = va ? (va->t ? tk_from_ir(va->t, &e) : NULL)
                      : tk_new(IR_FLOAT, 0, NULL, &e);
    if (!val || val->numel != 1) {
        tk_free(val);
        return ad_refuse(c, DG_ATTRIBUTE, "value must hold one element");
    }
    TkTensor *fill = tk_new(val->dtype, 0, NULL, &e);
    if (fill)
        tk_copy(fill, 0, val, 0, 1);
    tk_free(val);
    if (!fill)
        return ad_refuse(c, DG_TYPE, "unsupported fill type");
    int64_t *shape;
    size_t n;
    TkTensor *full = NULL;
    if (ad_const_ints(ad_in(c, 0), &shape, &n)) {
        bool known = n <= AD_MAX_STATIC_RANK;
        for (size_t i = 0; known && i < n; i++)
            known = shape[i] >= 0;
        int64_t total = known ? ad_prod(shape, 0, (int)n, AD_MAX_CONST) : -1;
        if (total >= 0 && (uint64_t)total * tk_elem_size(fill->dtype) <= AD_MAX_CONST)
            full = tk_new(fill->dtype, n, shape, &e);
        for (int64_t k = 0; full && k < total; k++)
            tk_copy(full, (size_t)k, fill, 0, 1);
        free(shape);
    }
    IrValue *y = NULL;
    if (full) {
        IrValue *v = ad_const_of(c, full);
        tk_free(full);
        tk_free(fill);
        return v ? ad_replace_value(c, v) : -1;
    }
    int64_t rank = ad_dim(ad_in(c, 0), 0), ones[AD_MAX_STATIC_RANK];
    if (rank >= 0 && rank <= AD_MAX_STATIC_RANK && c->build_opset >= 6) {
        for (int64_t d = 0; d < rank; d++)
            ones[d] = 1;
        IrValue *v = ad_reshape(c, ad_const_of(c, fill), (size_t)rank, ones);
        y = ad_op2(c, "Tile", v, ad_in(c, 0));
    } else if (c->build_opset >= 8) {
        y = ad_op2(c, "Expand", ad_const_of(c, fill), ad_in(c, 0));
    } else {
        tk_free(fill);
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "the shape must be a small constant or of known length");
    }
    tk_free(fill);
    return ad_replace_by(c, y);
}

/* ---- DepthToSpace --------------------------------------------------- */

/* DepthToSpace 11 -> 1: version 11 added `mode`; DCR (the default) is the
 * old behaviour. CRD reads channel c*b*b + i*b + j where DCR reads
 * (i*b + j)*C' + c, so CRD = DCR after a Gather that permutes the
 * channels (needs the channel count). */
static int ad_d2s_11_1(AdCtx *c)
{
    char buf[8];
    const char *mode = ad_attr_s(c, "mode", buf, sizeof buf);
    if (!strcmp(mode, "DCR")) {
        ad_drop_attr(c, "mode");
        return 0;
    }
    if (strcmp(mode, "CRD"))
        return ad_refuse(c, DG_ATTRIBUTE, "mode '%s' is not DCR or CRD", mode);
    IrValue *x = ad_in(c, 0);
    int64_t b = ad_attr_i(c, "blocksize"), C = ad_dim(x, 1);
    if (ad_rank(x) != 4 || C < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "CRD mode needs the channel count of '%s'",
                         x->name);
    if ((uint64_t)C * 8 > AD_MAX_CONST || b <= 0 || b > C || C % (b * b))
        return ad_refuse(c, DG_ATTRIBUTE, "blocksize %lld does not divide %lld channels",
                         (long long)b, (long long)C);
    int64_t cp = C / (b * b), *perm = mem_array((size_t)C, sizeof *perm);
    for (int64_t i = 0; i < b; i++)
        for (int64_t j = 0; j < b; j++)
            for (int64_t k = 0; k < cp; k++)
                perm[(i * b + j) * cp + k] = k * b * b + i * b + j;
    IrValue *g = ad_gather(c, x, ad_const_i64s(c, (size_t)C, perm), 1);
    free(perm);
    return ad_attr_as_input(c, "mode", 0, g);
}

/* ---- EyeLike -------------------------------------------------------- */

/* EyeLike below 9: a constant when the input's 2-D shape is known: ones
 * where column - row == k, zeros elsewhere, of `dtype` (default: the
 * input's type). */
static int ad_eyelike_gone(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int64_t dims[AD_MAX_STATIC_RANK];
    if (ad_static(x, dims, AD_MAX_STATIC_RANK) != 2)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the 2-D shape of '%s' is unknown", x->name);
    int64_t dt = ad_attr(c, "dtype") ? ad_attr_i(c, "dtype") : ad_elem(x);
    if (!dt)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of '%s' is unknown", x->name);
    if (dt < 0 || dt > 16 || dt == IR_STRING || dt == IR_COMPLEX64 ||
        dt == IR_COMPLEX128 || !tk_elem_size((int32_t)dt))
        return ad_refuse(c, DG_TYPE, "dtype %lld is not supported", (long long)dt);
    int64_t total = ad_prod(dims, 0, 2, AD_MAX_CONST), k = ad_attr_i(c, "k");
    if (total < 0 || (uint64_t)total * tk_elem_size((int32_t)dt) > AD_MAX_CONST)
        return ad_refuse(c, DG_TOO_LARGE, "the identity matrix would be too large");
    IrError e;
    TkTensor *y = tk_new((int32_t)dt, 2, dims, &e);
    if (!y)
        return ad_refuse(c, DG_TYPE, "dtype %lld is not supported", (long long)dt);
    for (int64_t i = 0; k > -dims[0] && k < dims[1] && i < dims[0]; i++)
        if (i + k >= 0 && i + k < dims[1])
            tk_set_i(y, (size_t)(i * dims[1] + i + k), 1);
    IrValue *v = ad_const_of(c, y);
    tk_free(y);
    return v ? ad_replace_value(c, v) : -1;
}

/* ---- OneHot --------------------------------------------------------- */

/* depth as a 0-D int64 (OneHot casts a non-integer depth to int64). */
static IrValue *ad_t_depth64(AdCtx *c)
{
    int64_t none = 0;
    return ad_reshape(c, ad_cast(c, ad_in(c, 1), IR_INT64), 0, &none);
}

/* OneHot 9 -> 11: version 9 gives all off_value for a negative index;
 * version 11 counts an index in [-depth, -1] from the end. Negative
 * indices become depth (out of range at 11: all off_value again). The
 * indices are cast to int64 first, as OneHot itself does. */
static int ad_onehot_9_11(AdCtx *c)
{
    IrValue *idx = ad_in(c, 0);
    if (ad_nonneg(idx))
        return 0;
    if (!ad_elem(idx))
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of indices '%s' is unknown",
                         idx->name);
    IrValue *i64 = ad_cast(c, idx, IR_INT64);
    IrValue *neg = ad_op2(c, "Less", i64, ad_const_int(c, IR_INT64, 0));
    IrValue *nv = ad_op3(c, "Where", neg, ad_t_depth64(c), i64);
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
    int64_t a = ad_attr_i(c, "axis"), axis;
    if (a < -1) {
        if (!ad_axis(a, ad_rank(idx), 1, &axis))
            return ad_refuse(c, DG_SHAPE_UNKNOWN, "axis %lld needs the rank of the indices",
                             (long long)a);
        ad_set_attr_i(c, c->n, "axis", axis);
    }
    if (ad_nonneg(idx))
        return 0;
    if (!ad_elem(idx))
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of indices '%s' is unknown",
                         idx->name);
    TkTensor *cv = ad_const_tk(idx);
    int64_t *dv = NULL;
    size_t n = 0;
    if (cv && (!ad_const_ints(ad_in(c, 1), &dv, &n) || n != 1)) {
        free(dv);
        tk_free(cv);
        cv = NULL;
    }
    if (cv) {
        IrError e;
        TkTensor *iv = tk_new(IR_INT64, cv->rank, cv->dims, &e);
        for (size_t k = 0; iv && k < cv->numel; k++) {
            int64_t i = tk_get_i(cv, k);
            tk_set_i(iv, k, i >= 0 || dv[0] <= 0 ? i : i >= -dv[0] ? i + dv[0] : dv[0]);
        }
        free(dv);
        tk_free(cv);
        bool made = iv != NULL;
        IrValue *nc = made ? ad_const_of(c, iv) : NULL;
        tk_free(iv);
        if (!nc)
            return made ? -1 : ad_refuse(c, DG_INTERNAL, "cannot rewrite the indices");
        ad_swap_input(c, 0, nc);
        return 0;
    }
    IrValue *depth = ad_t_depth64(c);
    IrValue *w = ad_wrap(c, ad_cast(c, idx, IR_INT64), depth);
    IrValue *neg = ad_op2(c, "Less", ad_cast(c, w, IR_DOUBLE), ad_const_scalar(c, IR_DOUBLE, 0.0));
    IrValue *nv = ad_op2(c, "Add", w, ad_op2(c, "Mul", ad_cast(c, neg, IR_INT64),
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
    if (!ad_axis(ad_attr_i(c, "axis"), r, 1, &axis) || r + 1 > AD_MAX_STATIC_RANK)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of the indices is unknown");
    if (!ad_const_floats(ad_in(c, 1), &dv, &n) || n != 1) {
        int64_t *iv;
        if (!ad_const_ints(ad_in(c, 1), &iv, &n) || n != 1)
            return ad_refuse(c, DG_NOT_CONSTANT, "depth must be a constant");
        depth = iv[0];
        free(iv);
    } else {
        depth = dv[0] >= 0 && dv[0] < 9e18 ? (int64_t)dv[0] : -1;
        free(dv);
    }
    if (depth < 0 || (uint64_t)depth * 8 > AD_MAX_CONST)
        return ad_refuse(c, DG_ATTRIBUTE, "depth %lld is not usable", (long long)depth);
    int64_t dims[AD_MAX_STATIC_RANK + 1], *ar = mem_array((size_t)depth + 1, sizeof *ar);
    dims[0] = depth;
    for (int64_t d = 1; d <= r - axis; d++)
        dims[d] = 1;
    for (int64_t i = 0; i < depth; i++)
        ar[i] = i;
    IrValue *range = ad_const_table(c, (int)(r - axis + 1), dims, ar);
    free(ar);
    IrValue *u = ad_axes_op(c, c->n, "Unsqueeze", ad_cast(c, idx, IR_INT64), 1, &axis);
    IrValue *mask = ad_cast(c, ad_op2(c, "Equal", u, range), IR_INT64);
    return ad_replace_by(c, ad_gather(c, ad_in(c, 2), mask, 0));
}

/* ---- Range ---------------------------------------------------------- */

/* The Loop body of ad_range_loop: iteration i emits start + T(i) * delta
 * (start and delta are read from the enclosing graph). Loop-1 needs at
 * least one loop-carried value: a copy of start is carried unchanged. */
static IrGraph *ad_range_body(AdCtx *c, IrValue *start, IrValue *delta, int32_t dt)
{
    IrGraph *b = ad_sub_new(c, "range_body");
    IrValue *it = ad_sub_input(b, "range_iter", IR_INT64);
    IrValue *cond = ad_sub_input(b, "range_cond", IR_BOOL);
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
    ad_sub_output(b, keep->out[0], IR_BOOL);
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
        return ad_refuse(c, DG_TYPE_UNKNOWN, "Range's type is unknown");
    IrValue *q = ad_op2(c, "Div",
                        ad_op2(c, "Sub", ad_cast(c, l, IR_DOUBLE), ad_cast(c, s, IR_DOUBLE)),
                        ad_cast(c, d, IR_DOUBLE));
    IrValue *n = ad_cast(c, ad_op2(c, "Max", ad_op1(c, "Ceil", q),
                                   ad_const_scalar(c, IR_DOUBLE, 0.0)), IR_INT64);
    IrValue *yes = n ? ad_const_scalar(c, IR_BOOL, 1.0) : NULL;
    IrGraph *body = yes ? ad_range_body(c, s, d, dt) : NULL;
    if (!body)
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "cannot build Range's Loop");
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
    TkTensor *t[3] = {NULL, NULL, NULL};
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        t[i] = ad_const_tk(ad_in(c, i));
        ok = ok && t[i] && t[i]->numel == 1 && t[i]->dtype == t[0]->dtype;
    }
    int32_t dt = ok ? t[0]->dtype : 0;
    int64_t n = 0;
    TkTensor *y = NULL;
    IrError e;
    if (ok && ir_dtype_is_int(dt)) {
        int64_t s = tk_get_i(t[0], 0), l = tk_get_i(t[1], 0), d = tk_get_i(t[2], 0);
        ok = d != 0;
        if (ok && (d > 0 ? l > s : l < s)) {
            uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
            uint64_t step = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
            n = (int64_t)((span + step - 1) / step);
        }
        ok = ok && (uint64_t)n * tk_elem_size(dt) <= AD_MAX_CONST;
        y = ok ? tk_new(dt, 1, &n, &e) : NULL;
        for (int64_t i = 0; y && i < n; i++)
            tk_set_i(y, (size_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    } else if (ok && (dt == IR_FLOAT || dt == IR_DOUBLE)) {
        double s = tk_get_f(t[0], 0), l = tk_get_f(t[1], 0), d = tk_get_f(t[2], 0);
        double cnt = dt == IR_FLOAT ? (double)ceilf(((float)l - (float)s) / (float)d)
                                    : ceil((l - s) / d);
        ok = d != 0 && !isnan(cnt) && cnt * 8 <= (double)AD_MAX_CONST;
        n = ok && cnt > 0 ? (int64_t)cnt : 0;
        y = ok ? tk_new(dt, 1, &n, &e) : NULL;
        for (int64_t i = 0; y && i < n; i++) {
            if (dt == IR_FLOAT) {
                float v = (float)s + (float)i * (float)d;
                tk_set_f(y, (size_t)i, v);
            } else {
                tk_set_f(y, (size_t)i, s + (double)i * d);
            }
        }
    } else {
        ok = false;
    }
    for (int i = 0; i < 3; i++)
        tk_free(t[i]);
    if (!y && !ok)
        return ad_range_loop(c);
    if (!y)
        return ad_refuse(c, DG_TOO_LARGE,
                         "start, limit and delta must be small constants");
    IrValue *v = ad_const_of(c, y);
    tk_free(y);
    return v ? ad_replace_value(c, v) : -1;
}

/* Range 27 -> 11: stash_type only sets the precision of float16/bfloat16
 * ranges, types version 11 lacks. Version 27 computes such a range in the
 * stash type (float by default) and casts the elements back, which is a
 * Range-11 in float or double between two Casts. */
static int ad_range_27_11(AdCtx *c)
{
    int64_t stash = ad_attr_i(c, "stash_type");
    ad_drop_attr(c, "stash_type");
    int32_t dt = ad_elem(ad_in(c, 0));
    if (dt != IR_FLOAT16 && dt != IR_BFLOAT16)
        return 0;
    if (stash != 1 && stash != 11)
        return ad_refuse(c, DG_TYPE, "Range-11 cannot compute in %s (stash_type)",
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

/* ---- Shape ---------------------------------------------------------- */

/* Shape 15 -> 13: version 15 added start/end (a slice of the shape,
 * negative from the back, clamped). Unless they select the whole shape,
 * Slice of the full shape with the same start and end computes it (Slice
 * counts negatives from the back and clamps the same way). */
static int ad_shape_15_13(AdCtx *c)
{
    int64_t st = ad_attr_i(c, "start"), en = ad_attr_i_or(c, "end", INT64_MAX);
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
    return ad_replace_by(c, ad_slice(c, sh, 1, &st, &en, &zero, NULL));
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
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the last two dims of '%s' are unknown",
                         x->name);
    int32_t dt = ad_elem(x);
    if (!dt || dt == IR_STRING)
        return ad_refuse(c, dt ? DG_TYPE : DG_TYPE_UNKNOWN,
                         "a zero of the input's type is needed");
    int64_t total = ad_prod(dims, 0, 2, AD_MAX_CONST), *kc = NULL, k = 0;
    size_t n = 0;
    if (total < 0 || (uint64_t)total * 8 > AD_MAX_CONST)
        return ad_refuse(c, DG_TOO_LARGE, "the mask would be too large");
    bool upper = ad_attr_i(c, "upper") != 0;
    bool kconst = !kv || (ad_const_ints(kv, &kc, &n) && n == 1);
    bool mul = dt == IR_INT32 || dt == IR_INT64 || dt == IR_UINT32 || dt == IR_UINT64;
    bool band = dt == IR_BOOL;
    if (kc)
        k = kc[0];
    free(kc);
    /* constant k: the mask itself (keep for Mul/And, drop for Where);
     * run-time k: the j - i table */
    int32_t mt = !kconst ? IR_DOUBLE : mul ? dt : IR_BOOL;
    IrError e;
    TkTensor *m = tk_new(mt, 2, dims, &e);
    if (!m)
        return ad_refuse(c, DG_INTERNAL, "cannot build the mask");
    for (int64_t i = 0; i < dims[0]; i++)
        for (int64_t j = 0; j < dims[1]; j++) {
            size_t at = (size_t)(i * dims[1] + j);
            bool drop = upper ? j - i < k : j - i > k;
            if (!kconst)
                tk_set_f(m, at, (double)(j - i));
            else
                tk_set_i(m, at, (mul || band) ? !drop : drop);
        }
    IrValue *mask = ad_const_of(c, m);
    tk_free(m);
    if (!kconst) {
        IrValue *kd = ad_cast(c, kv, IR_DOUBLE);
        mask = upper ? ad_op2(c, "Less", mask, kd) : ad_op2(c, "Less", kd, mask);
        if (mul || band)
            mask = ad_cast(c, ad_op1(c, "Not", mask), dt);
    }
    if (mul)
        return ad_replace_by(c, ad_op2(c, "Mul", x, mask));
    if (band)
        return ad_replace_by(c, ad_op2(c, "And", x, mask));
    return ad_replace_by(c, ad_op3(c, "Where", mask, ad_t_zero(c, dt), x));
}

/* ---- the table ------------------------------------------------------ */

static const AdEntry ad_tensor[] = {
    /* CenterCropPad */
    AD_GONE("CenterCropPad", 18, AD_EXPAND, ad_ccp_gone),
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
    /* OneHot */
    AD_GONE("OneHot", 9, AD_EXPAND, ad_onehot_gone),
    AD_UP("OneHot", 9, 11, AD_SEMANTIC, ad_onehot_9_11),
    AD_DOWN("OneHot", 9, 11, AD_SEMANTIC, ad_onehot_11_9),
    /* Range */
    AD_GONE("Range", 11, AD_EXPAND, ad_range_gone),
    AD_UP("Range", 11, 27, AD_ATTRS, ad_nothing),
    AD_DOWN("Range", 11, 27, AD_ATTRS, ad_range_27_11),
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
    /* Trilu */
    AD_GONE("Trilu", 14, AD_EXPAND, ad_trilu_gone),
};

const AdFamily ad_family_tensor = {"tensor", ad_tensor,
                                   sizeof ad_tensor / sizeof ad_tensor[0]};
