/*
 * infer/tensor.c - inference of the tensor family: constants (Constant,
 * ConstantOfShape, EyeLike), Shape, Size, Range, OneHot, Trilu,
 * DepthToSpace, SpaceToDepth and CenterCropPad.
 *
 * Element types mostly come from the generic step; the functions here set
 * shapes, plus the element types that attributes decide (Constant,
 * ConstantOfShape, EyeLike). Small integer tensors built from shapes keep
 * their elements as dims (symval) through Shape, Size, Range and
 * ConstantOfShape (and the shape family's ops, shape.c), so that a
 * Reshape or Expand target computed with Shape->Gather->Unsqueeze->Concat
 * is still known, symbols included.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------- */

/* The single integer a 1-element int32/int64 tensor holds. */
static bool inf_t_tensor_int1(const IrTensor *t, int64_t *out)
{
    if (!t || !t->has_data_type || (t->data_type != IR_INT32 && t->data_type != IR_INT64))
        return false;
    for (size_t k = 0; k < t->ndims; k++)
        if (t->dims[k] != 1)
            return false;
    if (t->has_data_location && t->data_location == 1)
        return false;
    size_t w = t->data_type == IR_INT64 ? 8 : 4;
    if (t->has_raw) {
        if (t->raw.len != w)
            return false;
        uint64_t u = 0;
        for (size_t k = w; k-- > 0;)
            u = (u << 8) | t->raw.data[k];
        if (w == 4)
            *out = (int64_t)(int32_t)(uint32_t)u;
        else
            *out = (int64_t)u;
        return true;
    }
    if (t->data_type == IR_INT64 && t->n_int64 == 1) {
        *out = t->int64_data[0];
        return true;
    }
    if (t->data_type == IR_INT32 && t->n_int32 == 1) {
        *out = t->int32_data[0];
        return true;
    }
    return false;
}

/* ---- constants ----------------------------------------------------- */

/* Constant: element type and shape of whichever value attribute is set
 * (value, sparse_value, value_int(s), value_float(s), value_string(s)). */
static int inf_constant(InfCtx *c)
{
    static const char *const names[] = {
        "value", "sparse_value", "value_int", "value_ints",
        "value_float", "value_floats", "value_string", "value_strings"};
    const IrAttr *a = NULL;
    int which = -1, count = 0;
    for (int k = 0; k < 8; k++) {
        const IrAttr *x = inf_attr(c, names[k]);
        if (x) {
            a = x;
            which = k;
            count++;
        }
    }
    if (count > 1)
        return inf_fail(c, "attribute", "Constant has %d value attributes; "
                        "exactly one is allowed", count);
    if (!a)
        return 0; /* e.g. a function attribute the call does not give */
    if (which == 0 || which == 1) {
        const IrTensor *t = which == 0 ? a->t : NULL;
        const IrSparse *sp = which == 1 ? a->sparse_tensor : NULL;
        if (!t && !sp)
            return inf_fail(c, "attribute", "'%s' holds no tensor", names[which]);
        size_t nd = t ? t->ndims : sp->ndims;
        const int64_t *dims = t ? t->dims : sp->dims;
        const IrTensor *vt = t ? t : sp->values;
        for (size_t k = 0; k < nd; k++)
            if (dims[k] < 0)
                return inf_fail(c, "attribute", "'%s' has a negative dimension",
                                names[which]);
        if (vt && vt->has_data_type && vt->data_type)
            inf_out_elem(c, 0, vt->data_type);
        IrShape *o = inf_out_shape(c, 0, nd);
        for (size_t k = 0; o && k < nd; k++)
            inf_dim_set(&o->dims[k], dims[k]);
        return 0;
    }
    /* the scalar and list forms: int64, float or string */
    static const int32_t elem[] = {0, 0, 7, 7, 1, 1, 8, 8};
    bool list = which % 2 == 1;
    size_t n = which == 3 ? a->n_ints : which == 5 ? a->n_floats : a->n_strings;
    inf_out_elem(c, 0, elem[which]);
    IrShape *o = inf_out_shape(c, 0, list ? 1 : 0);
    if (o && list)
        inf_dim_set(&o->dims[0], (int64_t)n);
    return 0;
}

/* ConstantOfShape: the element type of the `value` tensor (float by
 * default), the shape its input holds; a small integer result keeps its
 * elements. */
static int inf_constant_of_shape(InfCtx *c)
{
    const IrAttr *a = inf_attr(c, "value");
    int32_t elem = IR_FLOAT;
    if (a) {
        if (!a->t)
            return inf_fail(c, "attribute", "'value' holds no tensor");
        elem = a->t->has_data_type ? a->t->data_type : 0;
    }
    if (elem)
        inf_out_elem(c, 0, elem);
    IrShape *tgt = inf_t_in_dims(c, 0);
    if (!tgt) {
        int64_t n = inf_t_in_len(c, 0);
        if (n >= 0)
            inf_out_shape(c, 0, (size_t)n);
        return 0;
    }
    for (size_t k = 0; k < tgt->rank; k++)
        if (inf_dim_known(&tgt->dims[k]) && tgt->dims[k].value < 0) {
            long long v = (long long)tgt->dims[k].value;
            ir_shape_free(tgt);
            return inf_fail(c, "shape", "dimension %zu is negative (%lld)", k, v);
        }
    inf_t_out_dims(c, 0, tgt);
    /* a small integer vector of one repeated value: track its elements */
    int64_t fill = 0, n = -1;
    if (tgt->rank == 0)
        n = 1;
    else if (tgt->rank == 1 && inf_dim_known(&tgt->dims[0]))
        n = tgt->dims[0].value;
    bool have_fill = a ? inf_t_tensor_int1(a->t, &fill) : false;
    if (have_fill && n >= 0 && n <= INF_T_MAX_SYMVAL) {
        IrShape *sv = ir_shape_new((size_t)n);
        for (int64_t k = 0; k < n; k++)
            inf_dim_set(&sv->dims[k], fill);
        inf_out_symval(c, 0, sv);
    }
    ir_shape_free(tgt);
    return 0;
}

/* EyeLike: the input's 2-D shape; element type from `dtype`, else the
 * input's. */
static int inf_eyelike(InfCtx *c)
{
    const IrAttr *a = inf_attr(c, "dtype");
    int32_t elem = inf_in_elem(c, 0);
    if (a && a->has_i) {
        if (!inf_t_dtype_ok(a->i))
            return inf_fail(c, "attribute", "'dtype' %lld is not a known data type",
                            (long long)a->i);
        elem = (int32_t)a->i;
    }
    if (elem)
        inf_out_elem(c, 0, elem);
    int r = inf_in_rank(c, 0);
    if (r >= 0 && r != 2)
        return inf_fail(c, "rank", "input has rank %d; EyeLike needs 2", r);
    if (r < 0) {
        inf_out_shape(c, 0, 2);
        return 0;
    }
    return inf_same_as_input(c, 0);
}

/* ---- Shape and Size ------------------------------------------------ */

/* Shape: a 1-D int64 of the rank (or of the start..end part from opset
 * 15); its elements are the input's dims. */
static int inf_shape(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    IrShape *o = inf_out_shape(c, 0, 1);
    if (!in || !o)
        return 0;
    int64_t r = (int64_t)in->rank, start = 0, end = r;
    if (c->since >= 15) {
        start = inf_attr_i(c, "start");
        end = inf_attr_i_or(c, "end", r);
    }
    if (start < 0)
        start += r;
    if (end < 0)
        end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    if (end < start)
        end = start;
    inf_dim_set(&o->dims[0], end - start);
    if (end - start <= INF_T_MAX_SYMVAL) {
        IrShape *sv = ir_shape_new((size_t)(end - start));
        for (int64_t k = start; k < end; k++)
            inf_dim_copy(&sv->dims[k - start], &in->dims[k]);
        inf_out_symval(c, 0, sv);
    }
    return 0;
}

/* Size: an int64 scalar, the product of the dims (tracked as well). */
static int inf_size(InfCtx *c)
{
    inf_out_shape(c, 0, 0);
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    IrShape *sv = ir_shape_new(1);
    inf_dims_product(&sv->dims[0], in, 0, in->rank);
    inf_out_symval(c, 0, sv);
    return 0;
}

/* ---- Range, OneHot, depth and space, CenterCropPad ------------------ */

/* Range: a 1-D tensor of max(ceil((limit - start) / delta), 0) elements,
 * known when the three scalars are (for floats, only when float and
 * double arithmetic agree); integer results keep their elements. */
static int inf_range(InfCtx *c)
{
    IrShape *o = inf_out_shape(c, 0, 1);
    if (!o)
        return 0;
    int64_t *v[3] = {NULL, NULL, NULL};
    size_t n[3];
    bool ints = true;
    for (int k = 0; k < 3; k++)
        if (!inf_in_ints(c, (size_t)k, &v[k], &n[k]) || n[k] != 1)
            ints = false;
    int rc = 0;
    if (ints) {
        int64_t s = v[0][0], l = v[1][0], d = v[2][0];
        if (d == 0) {
            rc = inf_fail(c, "shape", "delta is 0");
        } else if ((d > 0 && l > s) || (d < 0 && l < s)) {
            uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
            uint64_t ad = d > 0 ? (uint64_t)d : (uint64_t)(-(d + 1)) + 1;
            uint64_t len = span / ad + (span % ad != 0);
            if (len <= (uint64_t)INT64_MAX)
                inf_dim_set(&o->dims[0], (int64_t)len);
            if (len <= INF_T_MAX_SYMVAL) {
                /* each element lies between start and limit: no overflow */
                IrShape *sv = ir_shape_new((size_t)len);
                int64_t at = s;
                for (uint64_t k = 0; k < len; k++) {
                    inf_dim_set(&sv->dims[k], at);
                    if (k + 1 < len)
                        at += d;
                }
                inf_out_symval(c, 0, sv);
            }
        } else {
            inf_dim_set(&o->dims[0], 0);
            inf_out_symval(c, 0, ir_shape_new(0));
        }
    }
    for (int k = 0; k < 3; k++)
        free(v[k]);
    if (ints || rc < 0)
        return rc;
    /* Range(0, n, 1) with a symbolic n has n elements */
    const IrShape *lim = inf_t_symval(c, 1);
    int64_t *s0, *d0;
    size_t ns0, nd0;
    bool unit = false;
    if (inf_in_ints(c, 0, &s0, &ns0)) {
        if (inf_in_ints(c, 2, &d0, &nd0)) {
            unit = ns0 == 1 && nd0 == 1 && s0[0] == 0 && d0[0] == 1;
            free(d0);
        }
        free(s0);
    }
    if (unit && lim && lim->rank == 1 && lim->dims[0].kind == IR_DIM_PARAM) {
        inf_dim_copy(&o->dims[0], &lim->dims[0]);
        return 0;
    }
    double *f[3] = {NULL, NULL, NULL};
    size_t nf[3];
    bool floats = true;
    for (int k = 0; k < 3; k++)
        if (!inf_in_floats(c, (size_t)k, &f[k], &nf[k]) || nf[k] != 1)
            floats = false;
    if (floats) {
        double s = f[0][0], l = f[1][0], d = f[2][0];
        float fs = (float)s, fl = (float)l, fd = (float)d;
        double len = ceil((l - s) / d);
        double flen = ceil((double)((fl - fs) / fd));
        if (d == 0)
            rc = inf_fail(c, "shape", "delta is 0");
        else if (isfinite(len) && len == flen && len < 4e18)
            inf_dim_set(&o->dims[0], len > 0 ? (int64_t)len : 0);
    }
    for (int k = 0; k < 3; k++)
        free(f[k]);
    return rc;
}

/* OneHot: the indices' shape with a `depth`-sized axis inserted. */
static int inf_onehot(InfCtx *c)
{
    const IrShape *idx = inf_in_shape(c, 0);
    if (!idx)
        return 0;
    int axis;
    if (inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)idx->rank, 1, &axis) < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, idx->rank + 1);
    if (!o)
        return 0;
    for (size_t k = 0, j = 0; k < idx->rank + 1; k++)
        if ((int)k != axis)
            inf_dim_copy(&o->dims[k], &idx->dims[j++]);
    int64_t *iv;
    double *fv;
    size_t n;
    const IrShape *sv = inf_t_symval(c, 1);
    if (inf_in_ints(c, 1, &iv, &n)) {
        if (n == 1 && iv[0] > 0)
            inf_dim_set(&o->dims[axis], iv[0]);
        free(iv);
    } else if (inf_in_floats(c, 1, &fv, &n)) {
        if (n == 1 && fv[0] >= 1 && fv[0] < 4e18 && floor(fv[0]) == fv[0])
            inf_dim_set(&o->dims[axis], (int64_t)fv[0]);
        free(fv);
    } else if (sv && sv->rank == 1 && sv->dims[0].kind == IR_DIM_PARAM) {
        inf_dim_copy(&o->dims[axis], &sv->dims[0]);
    }
    return 0;
}

/* dst = a / b when a is a known multiple of b; -1 when it surely is not. */
static int inf_t_dim_div(IrDim *dst, const IrDim *a, int64_t b)
{
    if (!inf_dim_known(a)) {
        if (b == 1)
            inf_dim_copy(dst, a);
        else
            inf_dim_unknown(dst);
        return 0;
    }
    if (a->value % b != 0)
        return -1;
    inf_dim_set(dst, a->value / b);
    return 0;
}

/* DepthToSpace (to_space) and SpaceToDepth on NCHW inputs. */
static int inf_depth_space(InfCtx *c, bool to_space)
{
    const IrAttr *a = inf_attr(c, "blocksize");
    const IrShape *in = inf_in_shape(c, 0);
    if (!a || !a->has_i)
        return 0;
    int64_t b = a->i;
    if (b <= 0 || b > 3037000499) /* b*b must fit */
        return inf_fail(c, "attribute", "blocksize %lld is out of range", (long long)b);
    if (!in)
        return 0;
    if (in->rank != 4)
        return inf_fail(c, "rank", "input has rank %zu; 4 is needed", in->rank);
    IrShape *o = ir_shape_new(4);
    IrDim bd = {.kind = IR_DIM_VALUE, .value = b};
    int rc = 0;
    inf_dim_copy(&o->dims[0], &in->dims[0]);
    if (to_space) {
        rc = inf_t_dim_div(&o->dims[1], &in->dims[1], b * b);
        inf_dim_mul(&o->dims[2], &in->dims[2], &bd);
        inf_dim_mul(&o->dims[3], &in->dims[3], &bd);
    } else {
        IrDim bb = {.kind = IR_DIM_VALUE, .value = b * b};
        inf_dim_mul(&o->dims[1], &in->dims[1], &bb);
        if (inf_t_dim_div(&o->dims[2], &in->dims[2], b) < 0 ||
            inf_t_dim_div(&o->dims[3], &in->dims[3], b) < 0)
            rc = -1;
    }
    if (rc < 0)
        rc = inf_fail(c, "shape", "a dimension is not divisible by blocksize %lld",
                      (long long)b);
    else
        inf_t_out_dims(c, 0, o);
    ir_shape_free(o);
    return rc;
}

static int inf_depth_to_space(InfCtx *c) { return inf_depth_space(c, true); }
static int inf_space_to_depth(InfCtx *c) { return inf_depth_space(c, false); }

/* CenterCropPad: the listed axes (default all) take the sizes of `shape`. */
static int inf_center_crop_pad(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    int r = (int)in->rank;
    int64_t *ax;
    size_t na;
    if (inf_t_ints(c, true, "axes", 0, &ax, &na) == 0) {
        na = (size_t)r;
        ax = mem_array(na ? na : 1, sizeof *ax);
        for (size_t k = 0; k < na; k++)
            ax[k] = (int64_t)k;
    }
    int *axes = mem_array(na ? na : 1, sizeof *axes);
    int rc = inf_t_axes(c, "axes", ax, na, r, 0, true, axes);
    IrShape *tgt = rc == 0 ? inf_t_in_dims(c, 1) : NULL;
    int64_t tn = tgt ? (int64_t)tgt->rank : inf_t_in_len(c, 1);
    if (rc == 0 && tn >= 0 && (size_t)tn != na)
        rc = inf_fail(c, "shape", "shape has %lld entries for %zu axes", (long long)tn, na);
    for (size_t k = 0; rc == 0 && tgt && k < na; k++)
        if (inf_dim_known(&tgt->dims[k]) && tgt->dims[k].value < 0)
            rc = inf_fail(c, "shape", "shape entry %zu is negative", k);
    if (rc == 0) {
        IrShape *o = inf_out_shape(c, 0, (size_t)r);
        for (int k = 0; o && k < r; k++)
            inf_dim_copy(&o->dims[k], &in->dims[k]);
        for (size_t k = 0; o && k < na; k++) {
            if (tgt)
                inf_dim_copy(&o->dims[axes[k]], &tgt->dims[k]);
            else
                inf_dim_unknown(&o->dims[axes[k]]);
        }
    }
    ir_shape_free(tgt);
    free(axes);
    free(ax);
    return rc;
}

const InfOp inf_ops_tensor[] = {
    {"", "Constant", inf_constant},
    {"", "ConstantOfShape", inf_constant_of_shape},
    {"", "Shape", inf_shape},
    {"", "Size", inf_size},
    {"", "Range", inf_range},
    {"", "OneHot", inf_onehot},
    {"", "DepthToSpace", inf_depth_to_space},
    {"", "SpaceToDepth", inf_space_to_depth},
    {"", "Trilu", inf_like_input0},
    {"", "EyeLike", inf_eyelike},
    {"", "CenterCropPad", inf_center_crop_pad},
    {NULL, NULL, NULL}};
