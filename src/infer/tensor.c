/*
 * infer/tensor.c - inference of the tensor family: constants, shape
 * arithmetic (Shape, Size, Reshape, Squeeze/Unsqueeze, Concat, Gather,
 * Slice, ...), data movement (Transpose, Split, Pad, Tile, Expand, ...),
 * gathers and scatters, and resizing.
 *
 * Element types mostly come from the generic step; the functions here set
 * shapes, plus the element types that attributes decide (Constant,
 * ConstantOfShape, EyeLike, BitCast). Small integer tensors built from
 * shapes keep their elements as dims (symval) through Shape, Size, Gather,
 * Unsqueeze, Squeeze, Concat, Slice, Reshape, Split, Range and
 * ConstantOfShape, so that a Reshape or Expand target computed with
 * Shape->Gather->Unsqueeze->Concat is still known, symbols included.
 */
#include "infer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Longest list of elements tracked as a symval (as the driver does). */
#define INF_T_MAX_SYMVAL 64
/* Largest rank this file builds from a length it read (a declared dim,
 * a constant's length): larger means a malformed file, left unknown. */
#define INF_T_MAX_RANK 4096

/* ---- helpers ------------------------------------------------------- */

/* Output o gets a copy of the dims of s (no denotations). */
static void inf_t_out_dims(InfCtx *c, size_t o, const IrShape *s)
{
    IrShape *out = inf_out_shape(c, o, s->rank);
    for (size_t k = 0; out && k < s->rank; k++)
        inf_dim_copy(&out->dims[k], &s->dims[k]);
}

/* A new shape whose dims are the known numbers v[0..n). */
static IrShape *inf_t_shape_of_ints(const int64_t *v, size_t n)
{
    IrShape *s = ir_shape_new(n);
    for (size_t k = 0; k < n; k++)
        inf_dim_set(&s->dims[k], v[k]);
    return s;
}

/* The elements of an integer input of rank <= 1 as dims (numbers from a
 * constant, else its symval with symbols and unknowns), or NULL. */
static IrShape *inf_t_in_dims(const InfCtx *c, size_t i)
{
    int64_t *v;
    size_t n;
    if (inf_in_ints(c, i, &v, &n)) {
        IrShape *s = inf_t_shape_of_ints(v, n);
        free(v);
        return s;
    }
    const IrShape *sv = inf_in_symval(c, i);
    if (sv && inf_in_rank(c, i) <= 1)
        return ir_shape_copy(sv);
    return NULL;
}

/* Number of elements of a 1-D input (a shape, axes, pads ...) when known
 * and plausible as a rank, else -1. */
static int64_t inf_t_in_len(const InfCtx *c, size_t i)
{
    const IrShape *s = inf_in_shape(c, i);
    int64_t len = -1;
    if (s && s->rank == 1 && inf_dim_known(&s->dims[0]))
        len = s->dims[0].value;
    else if (inf_in_symval(c, i))
        len = (int64_t)inf_in_symval(c, i)->rank;
    else {
        int64_t *v;
        size_t n;
        if (inf_in_ints(c, i, &v, &n)) {
            free(v);
            len = (int64_t)n;
        }
    }
    return len >= 0 && len <= INF_T_MAX_RANK ? len : -1;
}

/* The tracked elements of input i when it is a vector or scalar. */
static const IrShape *inf_t_symval(const InfCtx *c, size_t i)
{
    const IrShape *sv = inf_in_symval(c, i);
    return sv && inf_in_rank(c, i) <= 1 ? sv : NULL;
}

/* Output o keeps input i's tracked elements (ops that only move a small
 * vector's elements between rank 0 and 1). */
static void inf_t_pass_symval(InfCtx *c, size_t o, size_t i)
{
    const IrShape *sv = inf_t_symval(c, i);
    if (sv)
        inf_out_symval(c, o, ir_shape_copy(sv));
}

/* Reads an integer list from attribute `attr` (from_attr) or from input
 * `in`: 1 = known (*v malloc'd, *n set), 0 = absent, -1 = present but not
 * known. */
static int inf_t_ints(const InfCtx *c, bool from_attr, const char *attr,
                      size_t in, int64_t **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (from_attr) {
        const int64_t *a;
        long cnt = inf_attr_ints(c, attr, &a);
        if (cnt < 0)
            return 0;
        *v = ir_alloc_array(cnt ? (size_t)cnt : 1, sizeof **v);
        if (cnt)
            memcpy(*v, a, (size_t)cnt * sizeof **v);
        *n = (size_t)cnt;
        return 1;
    }
    if (!inf_has_in(c, in))
        return 0;
    return inf_in_ints(c, in, v, n) ? 1 : -1;
}

/* Normalizes every axis of v[0..n) for a tensor of `rank` (extra as in
 * inf_axis) into out (caller's array of n ints); with no_dups, a repeated
 * axis is a contradiction. */
static int inf_t_axes(InfCtx *c, const char *what, const int64_t *v, size_t n,
                      int rank, int extra, bool no_dups, int *out)
{
    for (size_t k = 0; k < n; k++) {
        if (inf_axis(c, what, v[k], rank, extra, &out[k]) < 0)
            return -1;
        for (size_t j = 0; no_dups && j < k; j++)
            if (out[j] == out[k])
                return inf_fail(c, "axis", "%s repeats axis %d", what, out[k]);
    }
    return 0;
}

/* The single integer a 1-element int32/int64 tensor holds. */
static bool inf_t_tensor_int1(const IrTensor *t, int64_t *out)
{
    if (!t || !t->has_data_type || (t->data_type != 6 && t->data_type != 7))
        return false;
    for (size_t k = 0; k < t->ndims; k++)
        if (t->dims[k] != 1)
            return false;
    if (t->has_data_location && t->data_location == 1)
        return false;
    size_t w = t->data_type == 7 ? 8 : 4;
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
    if (t->data_type == 7 && t->n_int64 == 1) {
        *out = t->int64_data[0];
        return true;
    }
    if (t->data_type == 6 && t->n_int32 == 1) {
        *out = t->int32_data[0];
        return true;
    }
    return false;
}

/* An element type code the IR knows, for attributes naming one. */
static bool inf_t_dtype_ok(int64_t d)
{
    return d > 0 && d < 1000 && ir_dtype_name((int32_t)d) != NULL;
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
    int32_t elem = 1;
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

/* BitCast: element type from `to`, which must have the input's bit
 * width; shape unchanged. */
static int inf_bitcast(InfCtx *c)
{
    int64_t to = inf_attr_i(c, "to", 0);
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

/* ---- shape arithmetic ---------------------------------------------- */

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
        start = inf_attr_i(c, "start", 0);
        end = inf_attr_i(c, "end", r);
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

/* Symbolic element counts: a known product and a multiset of symbols. */
typedef struct InfTCount {
    int64_t known;      /* product of the numeric dims */
    size_t n;           /* symbols in sym[] */
    const char **sym;   /* borrowed names */
    bool ok;            /* false: an unknown dim or an overflow */
} InfTCount;

/* Accumulates dims [from, to) of s except index `skip` into cnt. */
static void inf_t_count(InfTCount *cnt, const IrShape *s, size_t skip)
{
    cnt->known = 1;
    cnt->n = 0;
    cnt->ok = true;
    cnt->sym = ir_alloc_array(s->rank ? s->rank : 1, sizeof *cnt->sym);
    for (size_t k = 0; k < s->rank; k++) {
        const IrDim *d = &s->dims[k];
        if (k == skip)
            continue;
        if (inf_dim_known(d)) {
            if (d->value < 0 || (d->value && cnt->known > INT64_MAX / d->value))
                cnt->ok = false;
            else
                cnt->known *= d->value;
        } else if (d->kind == IR_DIM_PARAM && d->param && d->param[0]) {
            cnt->sym[cnt->n++] = d->param;
        } else {
            cnt->ok = false;
        }
    }
}

/* The dim a -1 of Reshape stands for: the input's element count divided
 * by the other output dims, symbols cancelling. Leaves `out` unknown when
 * it cannot be proven; -1 when the numbers surely do not divide. */
static int inf_t_infer_minus1(InfCtx *c, const IrShape *in, const IrShape *out,
                              size_t neg, IrDim *res)
{
    InfTCount a, b;
    inf_t_count(&a, in, (size_t)-1);
    inf_t_count(&b, out, neg);
    int rc = 0;
    if (a.ok && b.ok) {
        bool cancelled = true;
        for (size_t j = 0; j < b.n && cancelled; j++) {
            cancelled = false;
            for (size_t i = 0; i < a.n; i++)
                if (a.sym[i] && strcmp(a.sym[i], b.sym[j]) == 0) {
                    a.sym[i] = NULL;
                    cancelled = true;
                    break;
                }
        }
        const char *left = NULL;
        size_t n_left = 0;
        for (size_t i = 0; i < a.n; i++)
            if (a.sym[i]) {
                left = a.sym[i];
                n_left++;
            }
        if (cancelled && b.known != 0) {
            if (n_left == 0 && a.known % b.known == 0)
                inf_dim_set(res, a.known / b.known);
            else if (n_left == 0 && a.n == 0 && b.n == 0)
                rc = inf_fail(c, "shape", "%lld elements cannot be reshaped with "
                              "the other dims' product %lld", (long long)a.known,
                              (long long)b.known);
            else if (n_left == 1 && a.known == b.known) {
                IrDim sym = {.kind = IR_DIM_PARAM, .param = (char *)left};
                inf_dim_copy(res, &sym);
            }
        }
    }
    free(a.sym);
    free(b.sym);
    return rc;
}

/* Reshape: the target shape from the `shape` attribute (opset 1) or input
 * (5+); 0 copies the input's dim unless allowzero (14+); one -1 is
 * inferred from the element count, symbols cancelling. A small vector
 * keeps its tracked elements. */
static int inf_reshape(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    IrShape *tgt = NULL;
    if (c->since < 5) {
        const int64_t *v;
        long n = inf_attr_ints(c, "shape", &v);
        if (n >= 0)
            tgt = inf_t_shape_of_ints(v, (size_t)n);
    } else {
        tgt = inf_t_in_dims(c, 1);
    }
    if (!tgt) {
        int64_t n = c->since >= 5 ? inf_t_in_len(c, 1) : -1;
        if (n >= 0)
            inf_out_shape(c, 0, (size_t)n);
        return 0;
    }
    bool allowzero = c->since >= 14 && inf_attr_i(c, "allowzero", 0) != 0;
    size_t neg = (size_t)-1;
    bool zero = false;
    int rc = 0;
    for (size_t k = 0; k < tgt->rank && rc == 0; k++) {
        IrDim *d = &tgt->dims[k];
        if (!inf_dim_known(d))
            continue;
        if (d->value == -1) {
            if (neg != (size_t)-1)
                rc = inf_fail(c, "shape", "the shape has more than one -1");
            neg = k;
            inf_dim_unknown(d);
        } else if (d->value < -1) {
            rc = inf_fail(c, "shape", "dimension %zu is %lld", k, (long long)d->value);
        } else if (d->value == 0 && allowzero) {
            zero = true;
        } else if (d->value == 0) {
            if (in && k >= in->rank)
                rc = inf_fail(c, "shape", "dimension %zu is 0 (copy the input's) "
                              "but the input has rank %zu", k, in->rank);
            else if (in)
                inf_dim_copy(d, &in->dims[k]);
            else
                inf_dim_unknown(d);
        }
    }
    if (rc == 0 && zero && neg != (size_t)-1)
        rc = inf_fail(c, "shape", "with allowzero, the shape cannot hold both 0 and -1");
    if (rc == 0 && in && neg != (size_t)-1)
        rc = inf_t_infer_minus1(c, in, tgt, neg, &tgt->dims[neg]);
    if (rc == 0 && in && neg == (size_t)-1) {
        /* numbers only: the element counts must agree */
        InfTCount a, b;
        inf_t_count(&a, in, (size_t)-1);
        inf_t_count(&b, tgt, (size_t)-1);
        if (a.ok && b.ok && a.n == 0 && b.n == 0 && a.known != b.known)
            rc = inf_fail(c, "shape", "%lld elements cannot take a shape of %lld",
                          (long long)a.known, (long long)b.known);
        free(a.sym);
        free(b.sym);
    }
    if (rc == 0) {
        inf_t_out_dims(c, 0, tgt);
        if (tgt->rank <= 1)
            inf_t_pass_symval(c, 0, 0);
    }
    ir_shape_free(tgt);
    return rc;
}

/* Flatten: [prod(dims before axis), prod(dims from axis)]. */
static int inf_flatten(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in) {
        inf_out_shape(c, 0, 2);
        return 0;
    }
    /* axis in [-r, r]; a negative one counts from r */
    int a;
    int64_t axis = inf_attr_i(c, "axis", 1);
    if (inf_axis(c, "axis", axis, (int)in->rank, axis < 0 ? 0 : 1, &a) < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, 2);
    if (o) {
        inf_dims_product(&o->dims[0], in, 0, (size_t)a);
        inf_dims_product(&o->dims[1], in, (size_t)a, in->rank);
    }
    return 0;
}

/* Squeeze: drops the listed axes (attribute before 13, input from 13),
 * which must be 1; with none, drops every dim known to be 1 (the rank is
 * then unknown if some dim is). */
static int inf_squeeze(InfCtx *c)
{
    int64_t *axes;
    size_t na;
    int st = inf_t_ints(c, c->since < 13, "axes", 1, &axes, &na);
    inf_t_pass_symval(c, 0, 0);
    const IrShape *in = inf_in_shape(c, 0);
    if (!in || st < 0) {
        free(axes);
        return 0;
    }
    size_t r = in->rank;
    bool *drop = ir_alloc_array(r ? r : 1, sizeof *drop);
    int *ax = ir_alloc_array(na ? na : 1, sizeof *ax);
    int rc = 0;
    bool rank_known = true;
    if (st == 1) {
        rc = inf_t_axes(c, "axes", axes, na, (int)r, 0, false, ax);
        for (size_t k = 0; rc == 0 && k < na; k++) {
            const IrDim *d = &in->dims[ax[k]];
            if (inf_dim_known(d) && d->value != 1)
                rc = inf_fail(c, "shape", "axis %d has size %lld, not 1", ax[k],
                              (long long)d->value);
            drop[ax[k]] = true;
        }
    } else {
        for (size_t k = 0; k < r; k++) {
            if (!inf_dim_known(&in->dims[k]))
                rank_known = false;
            drop[k] = inf_dim_known(&in->dims[k]) && in->dims[k].value == 1;
        }
    }
    if (rc == 0 && rank_known) {
        size_t n = 0;
        for (size_t k = 0; k < r; k++)
            n += !drop[k];
        IrShape *o = inf_out_shape(c, 0, n);
        for (size_t k = 0, j = 0; o && k < r; k++)
            if (!drop[k])
                inf_dim_copy(&o->dims[j++], &in->dims[k]);
    }
    free(drop);
    free(ax);
    free(axes);
    return rc;
}

/* Unsqueeze: inserts 1s at the listed axes of the output (attribute
 * before 13, input from 13). */
static int inf_unsqueeze(InfCtx *c)
{
    int64_t *axes;
    size_t na;
    int st = inf_t_ints(c, c->since < 13, "axes", 1, &axes, &na);
    const IrShape *in = inf_in_shape(c, 0);
    if (in && in->rank == 0 && st == 1 && na == 1)
        inf_t_pass_symval(c, 0, 0); /* a scalar becomes a 1-element vector */
    if (!in || st == 0) {
        free(axes);
        return 0;
    }
    if (st < 0) {
        int64_t n = inf_t_in_len(c, 1);
        if (n >= 0 && in->rank + (size_t)n <= INF_T_MAX_RANK)
            inf_out_shape(c, 0, in->rank + (size_t)n);
        return 0;
    }
    size_t r = in->rank + na;
    int *ax = ir_alloc_array(na ? na : 1, sizeof *ax);
    bool *ins = ir_alloc_array(r ? r : 1, sizeof *ins);
    int rc = r > INF_T_MAX_RANK ? 0 : inf_t_axes(c, "axes", axes, na, (int)r, 0, true, ax);
    if (rc == 0 && r <= INF_T_MAX_RANK) {
        for (size_t k = 0; k < na; k++)
            ins[ax[k]] = true;
        IrShape *o = inf_out_shape(c, 0, r);
        for (size_t k = 0, j = 0; o && k < r; k++) {
            if (ins[k])
                inf_dim_set(&o->dims[k], 1);
            else
                inf_dim_copy(&o->dims[k], &in->dims[j++]);
        }
    }
    free(ins);
    free(ax);
    free(axes);
    return rc;
}

/* Merges dim x into the running dim m of inputs that must agree: a number
 * wins over a symbol, a symbol over unknown. -1 when two numbers differ. */
static int inf_t_merge_dim(IrDim *m, const IrDim *x)
{
    if (inf_dim_known(x)) {
        if (inf_dim_known(m) && m->value != x->value)
            return -1;
        inf_dim_copy(m, x);
    } else if (x->kind == IR_DIM_PARAM && m->kind == IR_DIM_UNSET) {
        inf_dim_copy(m, x);
    }
    return 0;
}

/* Concatenates the tracked elements of the inputs (vectors); an input
 * whose elements are not tracked but whose length is known adds that many
 * unknown elements, so that the rest of a shape stays known. */
static void inf_t_concat_symval(InfCtx *c)
{
    size_t total = 0;
    bool some = false;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *sv = inf_t_symval(c, i);
        int64_t len = inf_in_rank(c, i) == 1 ? inf_t_in_len(c, i) : -1;
        if (sv)
            some = true;
        if (sv && inf_in_rank(c, i) <= 1)
            total += sv->rank;
        else if (len >= 0 && len <= INF_T_MAX_SYMVAL)
            total += (size_t)len;
        else
            return;
        if (total > INF_T_MAX_SYMVAL)
            return;
    }
    if (!some)
        return;
    IrShape *out = ir_shape_new(total);
    size_t at = 0;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *sv = inf_t_symval(c, i);
        size_t n = sv ? sv->rank : (size_t)inf_t_in_len(c, i);
        for (size_t k = 0; k < n; k++, at++)
            if (sv)
                inf_dim_copy(&out->dims[at], &sv->dims[k]);
    }
    inf_out_symval(c, 0, out);
}

/* Concat: inputs of one rank, equal except on `axis`, whose sizes add. */
static int inf_concat(InfCtx *c)
{
    inf_t_concat_symval(c);
    const IrShape *ref = NULL;
    bool some_unknown = false;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *s = inf_in_shape(c, i);
        if (!s) {
            some_unknown = true;
            continue;
        }
        if (ref && s->rank != ref->rank)
            return inf_fail(c, "rank", "inputs have ranks %zu and %zu", ref->rank,
                            s->rank);
        ref = s;
    }
    const IrAttr *aa = inf_attr(c, "axis");
    if (!ref || (!(aa && aa->has_i) && c->since >= 4))
        return 0;
    int axis;
    if (inf_axis(c, "axis", aa && aa->has_i ? aa->i : 1, (int)ref->rank, 0, &axis) < 0)
        return -1;
    IrShape *o = ir_shape_new(ref->rank);
    IrDim sum = {.kind = IR_DIM_VALUE, .value = 0};
    int rc = 0;
    for (size_t i = 0; i < inf_n_in(c) && rc == 0; i++) {
        const IrShape *s = inf_has_in(c, i) ? inf_in_shape(c, i) : NULL;
        if (!s)
            continue;
        inf_dim_add(&sum, &sum, &s->dims[axis]);
        for (size_t d = 0; d < s->rank && rc == 0; d++)
            if ((int)d != axis && inf_t_merge_dim(&o->dims[d], &s->dims[d]) < 0)
                rc = inf_fail(c, "shape", "dimension %zu differs between inputs "
                              "(%lld and %lld)", d, (long long)o->dims[d].value,
                              (long long)s->dims[d].value);
    }
    if (rc == 0) {
        if (!some_unknown)
            inf_dim_copy(&o->dims[axis], &sum);
        inf_t_out_dims(c, 0, o);
    }
    inf_dim_unknown(&sum);
    ir_shape_free(o);
    return rc;
}

/* Gives output k of Split the input's tracked elements [at, at+len). */
static void inf_t_split_symval(InfCtx *c, size_t k, int64_t at, int64_t len)
{
    const IrShape *sv = inf_t_symval(c, 0);
    if (!sv || inf_in_rank(c, 0) != 1 || at < 0 || len < 0 ||
        at > (int64_t)sv->rank || len > (int64_t)sv->rank - at)
        return;
    IrShape *o = ir_shape_new((size_t)len);
    for (int64_t j = 0; j < len; j++)
        inf_dim_copy(&o->dims[j], &sv->dims[at + j]);
    inf_out_symval(c, k, o);
}

/* Whether node n sits in a branch of an If, which may never run: ONNX's
 * own models (affine_grid's expansion) keep a Split there that only the
 * other branch's shapes allow. */
static bool inf_t_in_branch(const IrNode *n)
{
    for (const IrGraph *g = n->graph; g; g = g->parent)
        if (g->owner && g->owner->op_type && !strcmp(g->owner->op_type, "If"))
            return true;
    return false;
}

/* Whether n outputs can split a dim d (known or not) with no `split`:
 * into equal parts, or with num_outputs (`uneven`) into parts of
 * ceil(d/n) and a last one of what is left; 0 or -1 with the error. */
static int inf_split_parts(InfCtx *c, const IrDim *d, size_t n, bool uneven)
{
    if (!inf_dim_known(d) || n == 0)
        return 0;
    int64_t dv = d->value, np = (int64_t)n;
    int64_t chunk = dv / np + (dv % np != 0);
    /* more outputs than elements, or parts of ceil(d/n) that leave the
     * last one less than nothing (5 into 4: 2, 2, 2, -1) */
    if (uneven && !inf_t_in_branch(c->node) &&
        ((dv > 0 && np > dv) || (np > 1 && chunk > dv / (np - 1))))
        return inf_fail(c, "shape", "num_outputs %zu exceeds what the axis of size %lld "
                        "can give", n, (long long)dv);
    if (!uneven && dv % np != 0)
        return inf_fail(c, "shape", "the axis of size %lld does not split evenly into "
                        "%zu outputs", (long long)dv, n);
    return 0;
}

/* Split: the sizes along `axis` from `split` (attribute before 13, input
 * from 13, also an input in opset 1), else num_outputs parts (18+, the
 * last one smaller), else equal parts. */
static int inf_split(InfCtx *c)
{
    int64_t *split = NULL;
    size_t ns = 0, n = inf_n_out(c);
    int st;
    if (c->since < 13) {
        st = inf_t_ints(c, true, "split", 0, &split, &ns);
        if (st == 0 && c->since < 2)
            st = inf_t_ints(c, false, NULL, 1, &split, &ns);
    } else {
        st = inf_t_ints(c, false, NULL, 1, &split, &ns);
    }
    const IrShape *in = inf_in_shape(c, 0);
    int rc = 0, axis = 0;
    if (in)
        rc = inf_axis(c, "axis", inf_attr_i(c, "axis", 0), (int)in->rank, 0, &axis);
    int64_t sum = 0;
    for (size_t k = 0; rc == 0 && st == 1 && k < ns; k++) {
        if (split[k] < 0)
            rc = inf_fail(c, "shape", "split entry %zu is %lld", k, (long long)split[k]);
        else if (sum > INT64_MAX - split[k])
            rc = inf_fail(c, "shape", "the split sizes overflow");
        else
            sum += split[k];
    }
    if (rc == 0 && st == 1 && ns != n)
        rc = inf_fail(c, "shape", "split has %zu entries but the node has %zu outputs",
                      ns, n);
    /* a split input whose values come at run time still has a length */
    const IrShape *ss = st < 0 ? inf_in_shape(c, 1) : NULL;
    if (rc == 0 && ss && ss->rank == 1 && inf_dim_known(&ss->dims[0]) &&
        ss->dims[0].value != (int64_t)n)
        rc = inf_fail(c, "shape", "split has %lld entries but the node has %zu outputs",
                      (long long)ss->dims[0].value, n);
    if (rc == 0 && st == 1 && in && inf_dim_known(&in->dims[axis]) &&
        in->dims[axis].value != sum)
        rc = inf_fail(c, "shape", "split sums to %lld but the axis has size %lld",
                      (long long)sum, (long long)in->dims[axis].value);
    int64_t parts = (int64_t)n;
    bool uneven = false;
    if (rc == 0 && st == 0 && c->since >= 18 && inf_attr_has(c, "num_outputs")) {
        parts = inf_attr_i(c, "num_outputs", 0);
        uneven = true;
        if (parts != (int64_t)n)
            rc = inf_fail(c, "shape", "num_outputs is %lld but the node has %zu outputs",
                          (long long)parts, n);
    }
    if (rc == 0 && st != 0 && c->since >= 18 && inf_attr_has(c, "num_outputs"))
        rc = inf_fail(c, "attribute", "both split and num_outputs are given");
    if (rc == 0 && st == 0 && in)
        rc = inf_split_parts(c, &in->dims[axis], n, uneven);
    if (rc < 0 || !in) {
        free(split);
        return rc;
    }
    const IrDim *d = &in->dims[axis];
    int64_t chunk = -1, last = -1;
    if (st == 0 && inf_dim_known(d) && n > 0) {
        int64_t dv = d->value, np = (int64_t)n;
        if (uneven) {
            chunk = dv / np + (dv % np != 0);
            last = dv - chunk * (np - 1);
            if (last < 0)
                chunk = last = -1; /* no valid split: leave unknown */
        } else if (dv % np == 0) {
            chunk = last = dv / np;
        }
    }
    int64_t at = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t len = st == 1 ? split[k] : st < 0 ? -1 : k + 1 == n ? last : chunk;
        if (inf_has_out(c, k)) {
            IrShape *o = inf_out_shape(c, k, in->rank);
            for (size_t j = 0; j < in->rank; j++)
                if ((int)j != axis)
                    inf_dim_copy(&o->dims[j], &in->dims[j]);
            if (len >= 0)
                inf_dim_set(&o->dims[axis], len);
            else if (n == 1)
                inf_dim_copy(&o->dims[axis], d);
            if (len >= 0 && at >= 0)
                inf_t_split_symval(c, k, at, len);
        }
        at = len >= 0 && at >= 0 ? at + len : -1;
    }
    free(split);
    return 0;
}

/* ---- Slice --------------------------------------------------------- */

/* Start and end of a slice of a dim of size d after the spec's clamping. */
static void inf_t_slice_clamp(int64_t d, int64_t step, int64_t *start, int64_t *end)
{
    int64_t s = *start, e = *end;
    if (s < 0)
        s += d; /* s >= INT64_MIN and d >= 0: no overflow */
    if (e < 0)
        e += d;
    if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
    } else {
        s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    }
    *start = s;
    *end = e;
}

/* Number of elements a slice takes from a dim of size d. */
static int64_t inf_t_slice_len(int64_t d, int64_t start, int64_t end, int64_t step)
{
    inf_t_slice_clamp(d, step, &start, &end);
    uint64_t span, ustep;
    if (step > 0) {
        if (end <= start)
            return 0;
        span = (uint64_t)(end - start);
        ustep = (uint64_t)step;
    } else {
        if (start <= end)
            return 0;
        span = (uint64_t)(start - end);
        ustep = (uint64_t)(-(step + 1)) + 1;
    }
    return (int64_t)(span / ustep + (span % ustep != 0));
}

/* The sliced dim when d is not a number: the whole dim (forward from 0 to
 * INT64_MAX, or backward from -1 to INT64_MIN, by 1) keeps it. */
static void inf_t_slice_sym(IrDim *o, const IrDim *d, int64_t start, int64_t end,
                            int64_t step)
{
    if ((step == 1 && start == 0 && end == INT64_MAX) ||
        (step == -1 && (start == -1 || start == INT64_MAX) && end == INT64_MIN))
        inf_dim_copy(o, d);
    else
        inf_dim_unknown(o);
}

/* The tracked elements of a sliced vector. */
static void inf_t_slice_symval(InfCtx *c, int64_t start, int64_t end, int64_t step)
{
    const IrShape *sv = inf_t_symval(c, 0);
    if (!sv || inf_in_rank(c, 0) != 1)
        return;
    int64_t d = (int64_t)sv->rank;
    int64_t len = inf_t_slice_len(d, start, end, step);
    inf_t_slice_clamp(d, step, &start, &end);
    IrShape *o = ir_shape_new((size_t)len);
    for (int64_t k = 0; k < len; k++)
        inf_dim_copy(&o->dims[k], &sv->dims[start + k * step]);
    inf_out_symval(c, 0, o);
}

/* Slice: starts/ends/axes as attributes (opset 1) or inputs with steps
 * (10+). Known dims are sliced as the spec clamps; an axis whose
 * parameters are unknown gets an unknown size; a 1-D slice keeps the
 * tracked elements. */
static int inf_slice(InfCtx *c)
{
    bool attr = c->since < 10;
    int64_t *st, *en, *ax, *sp;
    size_t nst, nen, nax, nsp;
    int kst = inf_t_ints(c, attr, "starts", 1, &st, &nst);
    int ken = inf_t_ints(c, attr, "ends", 2, &en, &nen);
    int kax = inf_t_ints(c, attr, "axes", 3, &ax, &nax);
    int ksp = attr ? 0 : inf_t_ints(c, false, NULL, 4, &sp, &nsp);
    if (attr)
        sp = NULL, nsp = 0;
    const IrShape *in = inf_in_shape(c, 0);
    int rc = 0;
    /* the number of sliced axes, where known */
    int64_t n = kst == 1 ? (int64_t)nst : ken == 1 ? (int64_t)nen
              : kax == 1 ? (int64_t)nax : attr ? -1 : inf_t_in_len(c, 1);
    if ((kst == 1 && (int64_t)nst != n) || (ken == 1 && (int64_t)nen != n) ||
        (kax == 1 && (int64_t)nax != n) || (ksp == 1 && (int64_t)nsp != n))
        rc = inf_fail(c, "shape", "starts, ends, axes and steps differ in length");
    for (size_t k = 0; rc == 0 && ksp == 1 && k < nsp; k++)
        if (sp[k] == 0)
            rc = inf_fail(c, "shape", "step %zu is 0", k);
    int r = in ? (int)in->rank : -1;
    int *axes = NULL;
    bool axes_known = false;
    if (rc == 0 && n >= 0 && kax == 1 && in) {
        axes = ir_alloc_array(nax ? nax : 1, sizeof *axes);
        rc = inf_t_axes(c, "axes", ax, nax, r, 0, true, axes);
        axes_known = true;
    } else if (rc == 0 && n >= 0 && kax == 0 && in) {
        if (n > r)
            rc = inf_fail(c, "shape", "%lld axes sliced of a rank-%d input",
                          (long long)n, r);
        axes = ir_alloc_array(n ? (size_t)n : 1, sizeof *axes);
        for (int64_t k = 0; k < n && k < r; k++)
            axes[k] = (int)k;
        axes_known = true;
    }
    bool params = kst == 1 && ken == 1 && ksp >= 0;
    if (rc == 0 && in) {
        IrShape *o = ir_shape_new(in->rank);
        for (size_t k = 0; k < in->rank; k++)
            if (axes_known)
                inf_dim_copy(&o->dims[k], &in->dims[k]);
        for (int64_t k = 0; axes_known && k < n; k++) {
            const IrDim *d = &in->dims[axes[k]];
            IrDim *od = &o->dims[axes[k]];
            int64_t step = ksp == 1 ? sp[k] : 1;
            if (!params)
                inf_dim_unknown(od);
            else if (inf_dim_known(d) && d->value >= 0)
                inf_dim_set(od, inf_t_slice_len(d->value, st[k], en[k], step));
            else
                inf_t_slice_sym(od, d, st[k], en[k], step);
        }
        inf_t_out_dims(c, 0, o);
        ir_shape_free(o);
    }
    if (rc == 0 && params && n == 1 && (!axes_known || axes[0] == 0) &&
        (kax != 1 || ax[0] == 0 || ax[0] == -1))
        inf_t_slice_symval(c, st[0], en[0], ksp == 1 ? sp[0] : 1);
    free(axes);
    free(st);
    free(en);
    free(ax);
    free(sp);
    return rc;
}

/* ---- movement ------------------------------------------------------ */

/* Transpose: dims permuted by `perm` (default: reversed). */
static int inf_transpose(InfCtx *c)
{
    const int64_t *perm;
    long np = inf_attr_ints(c, "perm", &perm);
    const IrShape *in = inf_in_shape(c, 0);
    if (!in) {
        if (np >= 0 && np <= INF_T_MAX_RANK)
            inf_out_shape(c, 0, (size_t)np);
        return 0;
    }
    size_t r = in->rank;
    if (np >= 0 && (size_t)np != r)
        return inf_fail(c, "shape", "perm has %ld entries for a rank-%zu input",
                        np, r);
    bool *seen = ir_alloc_array(r ? r : 1, sizeof *seen);
    for (size_t k = 0; np >= 0 && k < r; k++) {
        if (perm[k] < 0 || (uint64_t)perm[k] >= r || seen[perm[k]]) {
            free(seen);
            return inf_fail(c, "shape", "perm is not a permutation of 0..%zu",
                            r ? r - 1 : 0);
        }
        seen[perm[k]] = true;
    }
    free(seen);
    IrShape *o = inf_out_shape(c, 0, r);
    for (size_t k = 0; o && k < r; k++)
        inf_dim_copy(&o->dims[k], &in->dims[np >= 0 ? (size_t)perm[k] : r - 1 - k]);
    return 0;
}

/* Gather: data[:axis] + indices.shape + data[axis+1:]; gathering known
 * indices from a tracked vector picks its elements (a dim of a Shape). */
static int inf_gather(InfCtx *c)
{
    const IrShape *data = inf_in_shape(c, 0), *idx = inf_in_shape(c, 1);
    int axis = 0;
    if (data && inf_axis(c, "axis", inf_attr_i(c, "axis", 0), (int)data->rank, 0,
                         &axis) < 0)
        return -1;
    int64_t *iv;
    size_t ni;
    if (inf_in_ints(c, 1, &iv, &ni)) {
        const IrDim *ad = data ? &data->dims[axis] : NULL;
        const IrShape *sv = inf_t_symval(c, 0);
        int64_t len = ad && inf_dim_known(ad) ? ad->value
                    : sv && inf_in_rank(c, 0) == 1 ? (int64_t)sv->rank : -1;
        for (size_t k = 0; len >= 0 && k < ni; k++)
            if (iv[k] < -len || iv[k] >= len) {
                long long bad = (long long)iv[k];
                free(iv);
                return inf_fail(c, "shape", "index %lld is out of range for size %lld",
                                bad, (long long)len);
            }
        if (sv && inf_in_rank(c, 0) == 1 && axis == 0 && len == (int64_t)sv->rank &&
            ni <= INF_T_MAX_SYMVAL) {
            IrShape *o = ir_shape_new(ni);
            for (size_t k = 0; k < ni; k++)
                inf_dim_copy(&o->dims[k], &sv->dims[iv[k] < 0 ? iv[k] + len : iv[k]]);
            inf_out_symval(c, 0, o);
        }
        free(iv);
    }
    if (!data || !idx)
        return 0;
    IrShape *o = inf_out_shape(c, 0, data->rank - 1 + idx->rank);
    size_t j = 0;
    for (size_t k = 0; o && k < (size_t)axis; k++)
        inf_dim_copy(&o->dims[j++], &data->dims[k]);
    for (size_t k = 0; o && k < idx->rank; k++)
        inf_dim_copy(&o->dims[j++], &idx->dims[k]);
    for (size_t k = (size_t)axis + 1; o && k < data->rank; k++)
        inf_dim_copy(&o->dims[j++], &data->dims[k]);
    return 0;
}

/* GatherElements: the shape of indices, which has the data's rank. */
static int inf_gather_elements(InfCtx *c)
{
    int r = inf_in_rank(c, 0), q = inf_in_rank(c, 1), axis;
    if (r >= 0 && q >= 0 && r != q)
        return inf_fail(c, "rank", "data has rank %d but indices %d", r, q);
    if (r >= 0 && inf_axis(c, "axis", inf_attr_i(c, "axis", 0), r, 0, &axis) < 0)
        return -1;
    return inf_out_shape_of(c, 0, 1);
}

/* GatherND: indices.shape[:-1] + data.shape[batch_dims + k:], k being the
 * last dim of indices (which must be known). */
static int inf_gather_nd(InfCtx *c)
{
    const IrShape *data = inf_in_shape(c, 0), *idx = inf_in_shape(c, 1);
    int64_t b = c->since >= 12 ? inf_attr_i(c, "batch_dims", 0) : 0;
    if (!data || !idx)
        return 0;
    int64_t r = (int64_t)data->rank, q = (int64_t)idx->rank;
    if (q < 1 || r < 1)
        return inf_fail(c, "rank", "data and indices need rank >= 1");
    if (b < 0 || b >= (q < r ? q : r))
        return inf_fail(c, "shape", "batch_dims %lld is not below both ranks",
                        (long long)b);
    const IrDim *kd = &idx->dims[q - 1];
    if (!inf_dim_known(kd))
        return 0;
    int64_t k = kd->value;
    if (k < 1 || k > r - b)
        return inf_fail(c, "shape", "indices' last dim %lld does not fit data of "
                        "rank %lld with %lld batch dims", (long long)k, (long long)r,
                        (long long)b);
    IrShape *o = inf_out_shape(c, 0, (size_t)(q - 1 + r - k - b));
    size_t j = 0;
    for (int64_t i = 0; o && i < q - 1; i++) {
        inf_dim_copy(&o->dims[j], &idx->dims[i]);
        if (i < b && inf_t_merge_dim(&o->dims[j], &data->dims[i]) < 0)
            return inf_fail(c, "shape", "batch dim %lld differs between data and "
                            "indices", (long long)i);
        j++;
    }
    for (int64_t i = b + k; o && i < r; i++)
        inf_dim_copy(&o->dims[j++], &data->dims[i]);
    return 0;
}

/* Ops whose output has the shape of input 0 (scatters, Trilu, CumSum,
 * ReverseSequence, TensorScatter, ...). */
static int inf_like_input0(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

/* Expand: the input broadcast with the target shape (which may hold
 * symbols through its tracked elements). */
static int inf_expand(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    IrShape *tgt = inf_t_in_dims(c, 1);
    if (!tgt) {
        int64_t n = inf_t_in_len(c, 1);
        if (n < 0 || !in)
            return 0;
        tgt = ir_shape_new((size_t)n);
    }
    if (!in) {
        ir_shape_free(tgt);
        return 0;
    }
    for (size_t k = 0; k < tgt->rank; k++)
        if (inf_dim_known(&tgt->dims[k]) && tgt->dims[k].value < 0) {
            long long v = (long long)tgt->dims[k].value;
            ir_shape_free(tgt);
            return inf_fail(c, "shape", "target dimension %zu is %lld", k, v);
        }
    const IrShape *both[2] = {in, tgt};
    IrShape *out;
    int rc = inf_broadcast(c, both, 2, &out);
    ir_shape_free(tgt);
    if (rc < 0)
        return -1;
    inf_t_out_dims(c, 0, out);
    ir_shape_free(out);
    return 0;
}

/* Tile: each dim times its repeat (inputs `repeats` from opset 6; before,
 * scalar `tiles` and `axis` inputs). */
static int inf_tile(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    size_t r = in->rank;
    IrShape *rep;
    if (c->since < 6) {
        int64_t *t, *a;
        size_t nt, na;
        if (!inf_in_ints(c, 1, &t, &nt))
            return 0;
        if (!inf_in_ints(c, 2, &a, &na)) {
            free(t);
            return 0;
        }
        int axis = 0, rc = nt == 1 && na == 1 ? inf_axis(c, "axis", a[0], (int)r, 0, &axis)
                                              : inf_fail(c, "shape", "tiles and axis must be scalars");
        rep = ir_shape_new(r);
        for (size_t k = 0; rc == 0 && k < r; k++)
            inf_dim_set(&rep->dims[k], (int)k == axis ? t[0] : 1);
        free(t);
        free(a);
        if (rc < 0) {
            ir_shape_free(rep);
            return -1;
        }
    } else {
        rep = inf_t_in_dims(c, 1);
        if (!rep) {
            int64_t n = inf_t_in_len(c, 1);
            if (n >= 0 && (size_t)n != r)
                return inf_fail(c, "shape", "repeats has %lld entries for a rank-%zu "
                                "input", (long long)n, r);
            inf_out_shape(c, 0, r);
            return 0;
        }
    }
    int rc = 0;
    if (rep->rank != r)
        rc = inf_fail(c, "shape", "repeats has %zu entries for a rank-%zu input",
                      rep->rank, r);
    for (size_t k = 0; rc == 0 && k < r; k++)
        if (inf_dim_known(&rep->dims[k]) && rep->dims[k].value < 0)
            rc = inf_fail(c, "shape", "repeat %zu is negative", k);
    if (rc == 0) {
        IrShape *o = inf_out_shape(c, 0, r);
        for (size_t k = 0; o && k < r; k++)
            inf_dim_mul(&o->dims[k], &in->dims[k], &rep->dims[k]);
    }
    ir_shape_free(rep);
    return rc;
}

/* Pad: each padded dim grows by its begin and end pads (`paddings`
 * attribute in opset 1, `pads` in 2, an input from 11, with an `axes`
 * input from 18). */
static int inf_pad(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    int r = (int)in->rank;
    int64_t *pads, *ax;
    size_t np, na;
    int kp = c->since < 11 ? inf_t_ints(c, true, c->since < 2 ? "paddings" : "pads", 0,
                                        &pads, &np)
                           : inf_t_ints(c, false, NULL, 1, &pads, &np);
    int ka = c->since >= 18 ? inf_t_ints(c, false, NULL, 3, &ax, &na) : 0;
    if (ka == 0) {
        na = (size_t)r;
        ax = ir_alloc_array(na ? na : 1, sizeof *ax);
        for (size_t k = 0; k < na; k++)
            ax[k] = (int64_t)k;
    }
    int *axes = ir_alloc_array(na ? na : 1, sizeof *axes);
    int rc = ka >= 0 ? inf_t_axes(c, "axes", ax, na, r, 0, true, axes) : 0;
    if (rc == 0 && kp == 1 && ka >= 0 && np != 2 * na)
        rc = inf_fail(c, "shape", "pads has %zu entries for %zu padded axes", np, na);
    if (rc == 0) {
        IrShape *o = inf_out_shape(c, 0, (size_t)r);
        for (int k = 0; o && ka >= 0 && k < r; k++)
            inf_dim_copy(&o->dims[k], &in->dims[k]);
        for (size_t k = 0; o && ka >= 0 && k < na && rc == 0; k++) {
            IrDim *d = &o->dims[axes[k]];
            if (kp != 1) {
                inf_dim_unknown(d);
                continue;
            }
            IrDim b = {.kind = IR_DIM_VALUE, .value = pads[k]};
            IrDim e = {.kind = IR_DIM_VALUE, .value = pads[k + na]};
            inf_dim_add(d, d, &b);
            inf_dim_add(d, d, &e);
            if (inf_dim_known(d) && d->value < 0)
                rc = inf_fail(c, "shape", "axis %d would have size %lld", axes[k],
                              (long long)d->value);
        }
    }
    free(axes);
    free(ax);
    free(pads);
    return rc;
}

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
    if (inf_axis(c, "axis", inf_attr_i(c, "axis", -1), (int)idx->rank, 1, &axis) < 0)
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

/* NonZero: [rank, number of nonzeros (unknown)]. */
static int inf_nonzero(InfCtx *c)
{
    int r = inf_in_rank(c, 0);
    IrShape *o = inf_out_shape(c, 0, 2);
    if (o && r >= 0)
        inf_dim_set(&o->dims[0], r);
    return 0;
}

/* Compress: the selected slices along `axis` (or of the flattened input);
 * their number is known when the condition is a constant. */
static int inf_compress(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    const IrAttr *a = inf_attr(c, "axis");
    int axis = -1;
    if (a && a->has_i) {
        if (!in)
            return 0;
        if (inf_axis(c, "axis", a->i, (int)in->rank, 0, &axis) < 0)
            return -1;
    }
    IrDim avail = {0};
    if (in && axis >= 0)
        inf_dim_copy(&avail, &in->dims[axis]);
    else if (in)
        inf_dims_product(&avail, in, 0, in->rank);
    IrDim sel = {0};
    int64_t *cv;
    size_t n;
    if (inf_dim_known(&avail) && inf_in_ints(c, 1, &cv, &n)) {
        if ((int64_t)n <= avail.value) {
            int64_t cnt = 0;
            for (size_t k = 0; k < n; k++)
                cnt += cv[k] != 0;
            inf_dim_set(&sel, cnt);
        }
        free(cv);
    }
    if (axis < 0) {
        IrShape *o = inf_out_shape(c, 0, 1);
        if (o)
            inf_dim_copy(&o->dims[0], &sel);
    } else {
        IrShape *o = inf_out_shape(c, 0, in->rank);
        for (size_t k = 0; o && k < in->rank; k++)
            inf_dim_copy(&o->dims[k], (int)k == axis ? &sel : &in->dims[k]);
    }
    inf_dim_unknown(&avail);
    inf_dim_unknown(&sel);
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

/* CumSum, CumProd: the input's shape; a known scalar axis must fit. */
static int inf_cumulative(InfCtx *c)
{
    int64_t *a;
    size_t n;
    int r = inf_in_rank(c, 0), axis;
    if (r >= 0 && inf_in_ints(c, 1, &a, &n)) {
        int rc = n == 1 ? inf_axis(c, "axis", a[0], r, 0, &axis) : 0;
        free(a);
        if (rc < 0)
            return -1;
    }
    return inf_same_as_input(c, 0);
}

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
        ax = ir_alloc_array(na ? na : 1, sizeof *ax);
        for (size_t k = 0; k < na; k++)
            ax[k] = (int64_t)k;
    }
    int *axes = ir_alloc_array(na ? na : 1, sizeof *axes);
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

/* Unique: Y is 1-D of unknown length (or the input with an unknown size
 * on `axis`); indices and counts have that length; inverse_indices has
 * one entry per input element (or per slice along axis). */
static int inf_unique(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    const IrAttr *a = inf_attr(c, "axis");
    bool has_axis = a && a->has_i;
    int axis = 0;
    if (has_axis && in && inf_axis(c, "axis", a->i, (int)in->rank, 0, &axis) < 0)
        return -1;
    /* the number of elements (or slices) looked at; at most one of them
     * is also the number of unique ones */
    IrDim all = {0}, uniq = {0};
    if (in && has_axis)
        inf_dim_copy(&all, &in->dims[axis]);
    else if (in)
        inf_dims_product(&all, in, 0, in->rank);
    if (inf_dim_known(&all) && all.value <= 1)
        inf_dim_copy(&uniq, &all);
    if (!has_axis) {
        IrShape *o = inf_out_shape(c, 0, 1);
        if (o)
            inf_dim_copy(&o->dims[0], &uniq);
    } else if (in) {
        IrShape *o = inf_out_shape(c, 0, in->rank);
        for (size_t k = 0; o && k < in->rank; k++)
            inf_dim_copy(&o->dims[k], (int)k == axis ? &uniq : &in->dims[k]);
    }
    for (size_t i = 1; i < 4; i++) {
        IrShape *o = inf_out_shape(c, i, 1);
        if (o)
            inf_dim_copy(&o->dims[0], i == 2 ? &all : &uniq);
    }
    inf_dim_unknown(&all);
    inf_dim_unknown(&uniq);
    return 0;
}

/* ---- resizing ------------------------------------------------------ */

/* o = floor(d * scale), when float and double arithmetic agree; a symbol
 * survives a scale of 1. */
static void inf_t_scale_dim(IrDim *o, const IrDim *d, double scale)
{
    if (!inf_dim_known(d)) {
        if (scale == 1.0)
            inf_dim_copy(o, d);
        else
            inf_dim_unknown(o);
        return;
    }
    double x = floor((double)d->value * scale);
    double xf = floor((double)((float)d->value * (float)scale));
    if (isfinite(x) && x == xf && x >= 0 && x < 4e18)
        inf_dim_set(o, (int64_t)x);
    else
        inf_dim_unknown(o);
}

/* o = round_int(d * scale), halfway cases rounded up, for the
 * aspect-ratio policies; scale is num / den. Known only when float and
 * double arithmetic agree. */
static void inf_t_round_dim(IrDim *o, int64_t d, int64_t num, int64_t den)
{
    double x = floor((double)d * ((double)num / (double)den) + 0.5);
    float fs = (float)num / (float)den;
    double xf = floor((double)((float)d * fs + 0.5f));
    if (isfinite(x) && x == xf && x >= 0 && x < 4e18)
        inf_dim_set(o, (int64_t)x);
    else
        inf_dim_unknown(o);
}

/* Output dims from `sizes` under keep_aspect_ratio_policy. */
static int inf_t_resize_sizes(InfCtx *c, const IrShape *in, IrShape *o,
                              const int *axes, size_t na, const IrShape *sz)
{
    const char *pol = c->since >= 18 ? inf_attr_s(c, "keep_aspect_ratio_policy", "stretch")
                                     : "stretch";
    for (size_t k = 0; k < na; k++)
        if (inf_dim_known(&sz->dims[k]) && sz->dims[k].value < 0)
            return inf_fail(c, "shape", "sizes entry %zu is negative", k);
    if (!pol || strcmp(pol, "stretch") == 0) {
        for (size_t k = 0; k < na; k++)
            inf_dim_copy(&o->dims[axes[k]], &sz->dims[k]);
        return 0;
    }
    bool larger = strcmp(pol, "not_smaller") == 0;
    if (!larger && strcmp(pol, "not_larger") != 0)
        return inf_fail(c, "attribute", "keep_aspect_ratio_policy '%s' is unknown", pol);
    /* the scale is the smallest (largest) ratio sizes[i] / in[i], chosen
     * exactly by comparing cross products */
    int64_t num = 0, den = 0;
    for (size_t k = 0; k < na; k++) {
        const IrDim *d = &in->dims[axes[k]], *s = &sz->dims[k];
        if (!inf_dim_known(d) || !inf_dim_known(s) || d->value <= 0 ||
            d->value > INT32_MAX || s->value > INT32_MAX) {
            for (size_t j = 0; j < na; j++)
                inf_dim_unknown(&o->dims[axes[j]]);
            return 0;
        }
        bool better = den == 0 || (larger ? s->value * den > num * d->value
                                          : s->value * den < num * d->value);
        if (better) {
            num = s->value;
            den = d->value;
        }
    }
    for (size_t k = 0; k < na; k++)
        inf_t_round_dim(&o->dims[axes[k]], in->dims[axes[k]].value, num, den);
    return 0;
}

/* Resize (10+) and Upsample (7+ with scales): the listed axes (all, or
 * `axes` from 18) get floor(dim * scale) or the `sizes`; unknown when
 * neither is known. scales_in / sizes_in < 0: no such input. */
static int inf_t_resize(InfCtx *c, const float *sattr, long nsattr, int scales_in,
                        int sizes_in)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    int r = (int)in->rank;
    int64_t *ax;
    size_t na;
    int ka = c->since >= 18 && sizes_in >= 0 ? inf_t_ints(c, true, "axes", 0, &ax, &na) : 0;
    if (ka == 0) {
        na = (size_t)r;
        ax = ir_alloc_array(na ? na : 1, sizeof *ax);
        for (size_t k = 0; k < na; k++)
            ax[k] = (int64_t)k;
    }
    int *axes = ir_alloc_array(na ? na : 1, sizeof *axes);
    int rc = inf_t_axes(c, "axes", ax, na, r, 0, true, axes);
    free(ax);
    /* scales: from the attribute, else the input (an empty one is unset) */
    double *sc = NULL;
    size_t ns = 0;
    bool have_scales = false, scales_unknown = false;
    if (sattr) {
        sc = ir_alloc_array(nsattr ? (size_t)nsattr : 1, sizeof *sc);
        for (long k = 0; k < nsattr; k++)
            sc[k] = sattr[k];
        ns = (size_t)nsattr;
        have_scales = true;
    } else if (scales_in >= 0 && inf_has_in(c, (size_t)scales_in)) {
        if (inf_in_floats(c, (size_t)scales_in, &sc, &ns))
            have_scales = ns > 0;
        else
            scales_unknown = inf_t_in_len(c, (size_t)scales_in) != 0;
    }
    const char *ctm = sizes_in >= 0 ? inf_attr_s(c, "coordinate_transformation_mode", "")
                                    : "";
    bool crop = ctm && strcmp(ctm, "tf_crop_and_resize") == 0;
    IrShape *sz = NULL;
    bool sizes_given = sizes_in >= 0 && inf_has_in(c, (size_t)sizes_in);
    if (sizes_given && !have_scales)
        sz = inf_t_in_dims(c, (size_t)sizes_in);
    if (rc == 0 && have_scales && ns != na)
        rc = inf_fail(c, "shape", "scales has %zu entries for %zu axes", ns, na);
    if (rc == 0 && sz && sz->rank != na)
        rc = inf_fail(c, "shape", "sizes has %zu entries for %zu axes", sz->rank, na);
    for (size_t k = 0; rc == 0 && have_scales && k < ns; k++)
        if (!(sc[k] > 0))
            rc = inf_fail(c, "shape", "scale %zu is not positive", k);
    if (rc == 0) {
        IrShape *o = ir_shape_new((size_t)r);
        for (int k = 0; k < r; k++)
            inf_dim_copy(&o->dims[k], &in->dims[k]);
        if (have_scales && crop) {
            /* tf_crop_and_resize also scales by the roi's extent */
            for (size_t k = 0; k < na; k++)
                inf_dim_unknown(&o->dims[axes[k]]);
        } else if (have_scales) {
            for (size_t k = 0; k < na; k++)
                inf_t_scale_dim(&o->dims[axes[k]], &in->dims[axes[k]], sc[k]);
        } else if (sz) {
            rc = inf_t_resize_sizes(c, in, o, axes, na, sz);
        } else if (scales_unknown || sizes_given) {
            for (size_t k = 0; k < na; k++)
                inf_dim_unknown(&o->dims[axes[k]]);
        } else {
            ir_shape_free(o);
            o = NULL; /* neither scales nor sizes: leave to the checker */
        }
        if (rc == 0 && o)
            inf_t_out_dims(c, 0, o);
        ir_shape_free(o);
    }
    ir_shape_free(sz);
    free(sc);
    free(axes);
    return rc;
}

/* Resize: scales is input 1 in opset 10, input 2 (with sizes 3) from 11. */
static int inf_resize(InfCtx *c)
{
    if (c->since < 11)
        return inf_t_resize(c, NULL, 0, 1, -1);
    return inf_t_resize(c, NULL, 0, 2, 3);
}

/* Upsample: height_scale/width_scale on NCHW (opset 1), a `scales`
 * attribute (7), a scales input (9, 10). */
static int inf_upsample(InfCtx *c)
{
    if (c->since >= 9)
        return inf_t_resize(c, NULL, 0, 1, -1);
    if (c->since >= 7) {
        const float *s;
        long n = inf_attr_floats(c, "scales", &s);
        if (n < 0)
            return 0;
        return inf_t_resize(c, s, n, -1, -1);
    }
    const IrShape *in = inf_in_shape(c, 0);
    float s[4] = {1, 1, inf_attr_f(c, "height_scale", 0), inf_attr_f(c, "width_scale", 0)};
    if (!inf_attr_has(c, "height_scale") || !inf_attr_has(c, "width_scale"))
        return 0;
    if (in && in->rank != 4)
        return inf_fail(c, "rank", "input has rank %zu; 4 is needed", in->rank);
    return inf_t_resize(c, s, 4, -1, -1);
}

const InfOp inf_ops_tensor[] = {
    {"", "Constant", inf_constant},
    {"", "ConstantOfShape", inf_constant_of_shape},
    {"", "Shape", inf_shape},
    {"", "Size", inf_size},
    {"", "Reshape", inf_reshape},
    {"", "Flatten", inf_flatten},
    {"", "Squeeze", inf_squeeze},
    {"", "Unsqueeze", inf_unsqueeze},
    {"", "Concat", inf_concat},
    {"", "Split", inf_split},
    {"", "Slice", inf_slice},
    {"", "Transpose", inf_transpose},
    {"", "Gather", inf_gather},
    {"", "GatherElements", inf_gather_elements},
    {"", "GatherND", inf_gather_nd},
    {"", "Scatter", inf_like_input0},
    {"", "ScatterElements", inf_like_input0},
    {"", "ScatterND", inf_like_input0},
    {"", "TensorScatter", inf_like_input0},
    {"", "Expand", inf_expand},
    {"", "Tile", inf_tile},
    {"", "Pad", inf_pad},
    {"", "Range", inf_range},
    {"", "OneHot", inf_onehot},
    {"", "NonZero", inf_nonzero},
    {"", "Compress", inf_compress},
    {"", "DepthToSpace", inf_depth_to_space},
    {"", "SpaceToDepth", inf_space_to_depth},
    {"", "Trilu", inf_like_input0},
    {"", "EyeLike", inf_eyelike},
    {"", "Resize", inf_resize},
    {"", "Upsample", inf_upsample},
    {"", "CenterCropPad", inf_center_crop_pad},
    {"", "ReverseSequence", inf_like_input0},
    {"", "Unique", inf_unique},
    {"", "CumSum", inf_cumulative},
    {"", "CumProd", inf_cumulative},
    {"", "BitCast", inf_bitcast},
    {NULL, NULL, NULL}};
