/*
 * coreml/shape.c - Core ML lowering and raising of the shape family:
 * Reshape, Flatten, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
 * Expand, Tile, Pad.
 *
 * Values computed from shapes alone (Shape -> Gather -> Concat chains) are
 * known before any run and become consts in the driver; what reaches these
 * rules is data.
 *
 * Refused, and why:
 * - Reshape with a 0 in a computed shape whose length differs from the
 *   input's rank (MIL's 0 copies a dim only then; a constant one is
 *   rewritten: sh_reshape_zeros), or allowzero 1 with a 0 (MIL has no
 *   literal 0).
 * - Slice with a negative step from below -1 on an axis of unknown size
 *   (ONNX starts such a slice at 0, MIL's python-style one gives nothing).
 * - Expand of bool on dims known only at run time (the mul by ones).
 * - Slice with computed axes or steps; with computed starts/ends, a step
 *   other than 1 or a starts length inference cannot give (computed
 *   starts/ends are wrapped and clamped at run time only for steps of 1).
 *
 * The import raises besides: concat with interleave (Unsqueeze, Concat
 * after the axis, Reshape) and of rank-0 values; stack (Unsqueeze, Concat);
 * flatten2d (Flatten); slice_by_size (a negative begin from the end, size
 * -1 to it); crop (Slice of the last two dims); reshape_like (Reshape to
 * its static output); space_to_batch and batch_to_space (TensorFlow's ND
 * ops over NCHW: Pad/Slice, Reshape, Transpose, Reshape; C, H, W of the
 * output static); iOS18's slice_update (the slice of a flat index table,
 * ScatterElements into the flattened x). Refused: sliding_windows (no ONNX
 * op takes overlapping windows).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

#define SH_MAX_RANK 16

/* The int32 vectors a and b joined (len elements in all). */
static const char *sh_concat2(CmLower *c, const char *a, const char *b, size_t len)
{
    MilOp *op = cml_op(c, "concat");
    mil_op_in(op, "values", a);
    mil_op_in(op, "values", b);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
    return cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){(int64_t)len});
}

/* The elements idx (n_idx of them) of [a..., b...] (len elements in
 * all): a vector built at run time from pieces of two. */
static const char *sh_pick(CmLower *c, const char *a, const char *b, size_t len,
                           const int64_t *idx, size_t n_idx)
{
    const char *src = sh_concat2(c, a, b, len);
    MilOp *op = cml_op(c, "gather");
    mil_op_in(op, "x", src);
    mil_op_in_const(op, "indices", cml_ints(idx, n_idx));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    return cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){(int64_t)n_idx});
}

/* Reshape by a constant shape s (ns entries, owned: freed here) whose
 * 0s copy the input's dim at their index, when ns is not the input's
 * rank (MIL's reshape copies a dim for a 0 only when it is): a 0 over a
 * static dim becomes that dim; over an unknown one, the shape is
 * gathered at run time from [shape(x)..., s...]. */
static int sh_reshape_zeros(CmLower *c, const IrNode *n, const char *x, int64_t *s, size_t ns)
{
    int64_t dims[SH_MAX_RANK], idx[SH_MAX_RANK];
    size_t rank;
    bool open = false;
    int rc = 0;
    if (!cml_dims_open(n->in[0], dims, SH_MAX_RANK, &rank) || ns > SH_MAX_RANK)
        rc = cml_refuse(c, "a 0 in the shape on an input of unknown rank");
    for (size_t k = 0; rc == 0 && k < ns; k++) {
        if (s[k] == 0 && k >= rank)
            rc = cml_refuse(c, "a 0 in the shape past the input's rank");
        else if (s[k] == 0 && dims[k] >= 0)
            s[k] = dims[k];
        open |= s[k] == 0;
        idx[k] = s[k] == 0 ? (int64_t)k : (int64_t)(rank + k);
        if (s[k] < INT32_MIN || s[k] > INT32_MAX)
            rc = cml_refuse(c, "a shape entry beyond int32");
    }
    MilTensor *t = rc == 0 ? cml_ints(s, ns) : NULL;
    free(s);
    if (rc < 0)
        return -1;
    MilOp *op;
    const char *shape = NULL;
    if (open) {
        const char *vals = cml_const(c, t);
        op = cml_op(c, "shape");
        mil_op_in(op, "x", x);
        const char *sh = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){(int64_t)rank});
        shape = sh_pick(c, sh, vals, rank + ns, idx, ns);
    }
    op = cml_op(c, "reshape");
    mil_op_in(op, "x", x);
    if (shape)
        mil_op_in(op, "shape", shape);
    else
        mil_op_in_const(op, "shape", t);
    return cml_out(c, op, n, 0);
}

static int lower_reshape(CmLower *c, const IrNode *n)
{
    int64_t dims[SH_MAX_RANK];
    size_t rank;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op;
    bool zero_dim = false;
    if (cml_dims(n->out[0], dims, SH_MAX_RANK, &rank))
        for (size_t i = 0; i < rank; i++)
            zero_dim |= dims[i] == 0;
    if (zero_dim)
        return cml_refuse(c, "an empty output: MIL's reshape reads a 0 as 'copy the input dim'");
    if (cml_dims(n->out[0], dims, SH_MAX_RANK, &rank)) {
        op = cml_op(c, "reshape");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "shape", cml_ints(dims, rank));
        return cml_out(c, op, n, 0);
    }
    int64_t *s;
    size_t ns;
    if (cml_const_ints(n, 1, &s, &ns)) {
        bool zero = false;
        for (size_t i = 0; i < ns; i++)
            zero |= s[i] == 0;
        if (zero && !cml_attr_i(n, "allowzero") && (int)ns != cml_rank(n->in[0]))
            return sh_reshape_zeros(c, n, x, s, ns);
        free(s);
        if (zero && ((int)ns != cml_rank(n->in[0]) || cml_attr_i(n, "allowzero")))
            return cml_refuse(c, "a 0 in the shape that MIL reads differently");
    } else if (cml_attr_i(n, "allowzero")) {
        return cml_refuse(c, "allowzero with a computed shape: MIL's reshape reads a 0 as "
                          "'copy the input dim'");
    }
    const char *sh = cml_in(c, n, 1);
    if (!sh)
        return -1;
    op = cml_op(c, "reshape");
    mil_op_in(op, "x", x);
    mil_op_in(op, "shape", sh);
    return cml_out(c, op, n, 0);
}

/* The product of dims [from, to) of x (int32 [1]) read from shape(sh)
 * at run time. */
static const char *sh_dim_prod(CmLower *c, const char *sh, size_t from, size_t to)
{
    int64_t b[1] = {(int64_t)from}, e[1] = {(int64_t)to}, one[1] = {1};
    MilOp *op = cml_op(c, "slice_by_index");
    mil_op_in(op, "x", sh);
    mil_op_in_const(op, "begin", cml_ints(b, 1));
    mil_op_in_const(op, "end", cml_ints(e, 1));
    const char *part = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){(int64_t)(to - from)});
    op = cml_op(c, "reduce_prod");
    mil_op_in(op, "x", part);
    mil_op_in_const(op, "axes", cml_ints((int64_t[]){0}, 1));
    mil_op_in_const(op, "keep_dims", mil_tensor_scalar_bool(true));
    return cml_tmp(c, op, MIL_INT32, 1, one);
}

/* Flatten to [prod(dims before axis), prod(the rest)]: a const shape when
 * at most one of the two holds an unknown dim (it becomes -1), else
 * both products computed from shape(x). */
static int lower_flatten(CmLower *c, const IrNode *n)
{
    int64_t dims[SH_MAX_RANK], axis, out[2] = {1, 1};
    size_t rank;
    if (!cml_dims_open(n->in[0], dims, SH_MAX_RANK, &rank))
        return cml_refuse(c, "input rank unknown or above %d", SH_MAX_RANK);
    /* Flatten's axis is in [-r, r] */
    axis = cml_attr_i(n, "axis");
    axis += axis < 0 ? (int64_t)rank : 0;
    if (axis < 0 || axis > (int64_t)rank)
        return cml_refuse(c, "axis out of range");
    for (size_t i = 0; i < rank; i++) {
        int64_t *o = &out[(int64_t)i >= axis];
        *o = *o < 0 || dims[i] < 0 ? -1 : *o * dims[i];
        if (*o > INT32_MAX)
            return cml_refuse(c, "a flattened dim above int32");
    }
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op;
    const char *shape = NULL;
    if (out[0] < 0 && out[1] < 0) {
        op = cml_op(c, "shape");
        mil_op_in(op, "x", x);
        const char *sh = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){(int64_t)rank});
        const char *p0 = sh_dim_prod(c, sh, 0, (size_t)axis);
        const char *p1 = sh_dim_prod(c, sh, (size_t)axis, rank);
        shape = sh_concat2(c, p0, p1, 2);
    }
    op = cml_op(c, "reshape");
    mil_op_in(op, "x", x);
    if (shape)
        mil_op_in(op, "shape", shape);
    else
        mil_op_in_const(op, "shape", cml_ints(out, 2));
    return cml_out(c, op, n, 0);
}

static int lower_transpose(CmLower *c, const IrNode *n)
{
    int r = cml_rank(n->in[0]);
    const int64_t *p;
    long np = cml_attr_ints(n, "perm", &p);
    int64_t perm[SH_MAX_RANK];
    if (np < 0) {
        if (r < 0 || r > SH_MAX_RANK)
            return cml_refuse(c, "rank unknown and no perm");
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        np = r;
    } else {
        if (np > SH_MAX_RANK)
            return cml_refuse(c, "rank above %d", SH_MAX_RANK);
        memcpy(perm, p, (size_t)np * sizeof *perm);
    }
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "transpose");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "perm", cml_ints(perm, (size_t)np));
    return cml_out(c, op, n, 0);
}

static int lower_concat(CmLower *c, const IrNode *n)
{
    int64_t axis;
    if (!cml_axis(cml_attr_i(n, "axis"), cml_rank(n->out[0]), &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    if (!n->n_in)
        return cml_refuse(c, "no inputs");
    /* every input first: a const they need must precede the concat */
    const char **xs = mem_array(n->n_in, sizeof *xs);
    for (size_t i = 0; i < n->n_in; i++)
        if (!(xs[i] = cml_in(c, n, i))) {
            free(xs);
            return -1;
        }
    MilOp *op = cml_op(c, "concat");
    for (size_t i = 0; i < n->n_in; i++)
        mil_op_in(op, "values", xs[i]);
    free(xs);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
    return cml_out(c, op, n, 0);
}

static int lower_split(CmLower *c, const IrNode *n)
{
    int64_t axis;
    if (!cml_axis(cml_attr_i(n, "axis"), cml_rank(n->in[0]), &axis))
        return cml_refuse(c, "axis out of range or rank unknown");
    int64_t *s = NULL;
    size_t ns = 0;
    if (cml_has(n, 1) && !cml_const_ints(n, 1, &s, &ns))
        return cml_refuse(c, "split sizes are not constant");
    if (s && ns != n->n_out) {
        free(s);
        return cml_refuse(c, "split has %zu sizes for %zu outputs", ns, n->n_out);
    }
    const char *x = cml_in(c, n, 0);
    if (!x) {
        free(s);
        return -1;
    }
    MilOp *op = cml_op(c, "split");
    mil_op_in(op, "x", x);
    if (s)
        mil_op_in_const(op, "split_sizes", cml_ints(s, ns));
    else
        mil_op_in_const(op, "num_splits", mil_tensor_scalar_i32((int32_t)n->n_out));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32((int32_t)axis));
    free(s);
    for (size_t i = 0; i < n->n_out; i++) {
        if (!n->out[i])
            return cml_refuse(c, "an output left out");
        if (cml_out(c, op, n, i) < 0)
            return -1;
    }
    return 0;
}

static int64_t sh_clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* v (ONNX starts or ends, MIL value x, n_ax entries) with d added where
 * negative, then clamped to [0, d] (d: the const dims of the sliced
 * axes): ONNX's clamping for a step of 1, done at run time. */
static const char *sh_clamp_dyn(CmLower *c, const IrNode *n, size_t k, const char *x,
                                const char *d, size_t n_ax)
{
    int64_t len[1] = {(int64_t)n_ax};
    const char *w = cml_wrap_index(c, n, k, x, d);
    MilOp *op = cml_op(c, "maximum");
    mil_op_in(op, "x", w);
    mil_op_in_const(op, "y", mil_tensor_scalar_i32(0));
    w = cml_tmp(c, op, MIL_INT32, 1, len);
    op = cml_op(c, "minimum");
    mil_op_in(op, "x", w);
    mil_op_in(op, "y", d);
    return cml_tmp(c, op, MIL_INT32, 1, len);
}

/* The sizes of the sliced axes (sd, n_ax of them; pos[a]: the slot of
 * axis a or -1) as an int32 MIL value: a const when every one is static,
 * else gathered from shape(x) at run time. */
static const char *sh_axis_dims(CmLower *c, const char *x, const int64_t *sd, size_t n_ax,
                                const int64_t *pos, size_t rank)
{
    bool open = false;
    for (size_t k = 0; k < n_ax; k++)
        open |= sd[k] < 0;
    if (!open)
        return cml_const(c, cml_ints(sd, n_ax));
    int64_t idx[SH_MAX_RANK], r1[1] = {(int64_t)rank}, len[1] = {(int64_t)n_ax};
    for (size_t a = 0; a < rank; a++)
        if (pos[a] >= 0)
            idx[pos[a]] = (int64_t)a;
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", x);
    const char *sh = cml_tmp(c, op, MIL_INT32, 1, r1);
    op = cml_op(c, "gather");
    mil_op_in(op, "x", sh);
    mil_op_in_const(op, "indices", cml_ints(idx, n_ax));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    return cml_tmp(c, op, MIL_INT32, 1, len);
}

/* Slice with computed starts or ends (constant axes, steps all 1; a
 * sliced axis's unknown dim read by sh_axis_dims): starts and ends wrapped and clamped at run time, then spread to
 * every dim by a gather from [values..., fillers...] (0 for begin, the dim
 * for end where an axis is not sliced); no masks. */
static int lower_slice_dyn(CmLower *c, const IrNode *n, const int64_t *dims, size_t rank)
{
    int64_t *ax = NULL, *sp = NULL, sd[SH_MAX_RANK];
    size_t nax = 0, nsp = 0, n_ax;
    int64_t sdims[SH_MAX_RANK];
    size_t sr;
    if (!cml_dims(n->in[1], sdims, SH_MAX_RANK, &sr) || sr != 1 || sdims[0] < 1 ||
        sdims[0] > (int64_t)rank)
        return cml_refuse(c, "starts/ends are computed and their length is not static");
    n_ax = (size_t)sdims[0];
    if ((cml_has(n, 3) && !cml_const_ints(n, 3, &ax, &nax)) ||
        (cml_has(n, 4) && !cml_const_ints(n, 4, &sp, &nsp))) {
        free(ax);
        free(sp);
        return cml_refuse(c, "starts/ends are computed and axes or steps are not constant");
    }
    int rc = 0;
    int64_t pos[SH_MAX_RANK];
    for (size_t a = 0; a < rank; a++)
        pos[a] = -1;
    if ((ax && nax != n_ax) || (sp && nsp != n_ax))
        rc = cml_refuse(c, "starts/ends/axes/steps differ in length");
    for (size_t k = 0; rc == 0 && k < n_ax; k++) {
        int64_t a = ax ? ax[k] : (int64_t)k;
        if (!cml_axis(a, (int)rank, &a) || pos[a] >= 0 || (sp && sp[k] != 1) ||
            dims[a] > INT32_MAX)
            rc = cml_refuse(c, "starts/ends are computed and an axis repeats or is out of "
                            "range, or a step is not 1 (only steps of 1 are clamped at run "
                            "time)");
        else {
            pos[a] = (int64_t)k;
            sd[k] = dims[a];
        }
    }
    free(ax);
    free(sp);
    const char *x = rc == 0 ? cml_in(c, n, 0) : NULL;
    const char *s = x ? cml_in(c, n, 1) : NULL, *e = s ? cml_in(c, n, 2) : NULL;
    if (rc < 0 || !e)
        return -1;
    const char *d = sh_axis_dims(c, x, sd, n_ax, pos, rank);
    const char *lim[2] = {sh_clamp_dyn(c, n, 1, s, d, n_ax), sh_clamp_dyn(c, n, 2, e, d, n_ax)};
    const char *full[2];
    for (int k = 0; k < 2; k++) {
        /* fillers: begin 0 for every dim; end each dim's size */
        int64_t fill[SH_MAX_RANK], idx[SH_MAX_RANK];
        for (size_t a = 0; a < rank; a++) {
            /* an unknown dim's end: INT32_MAX, clamped to it at run time
             * (MIL's python-style slicing and the import's ONNX Slice) */
            fill[a] = !k ? 0 : dims[a] < 0 ? INT32_MAX : dims[a];
            idx[a] = pos[a] >= 0 ? pos[a] : (int64_t)(n_ax + a);
        }
        const char *fc = cml_const(c, cml_ints(fill, rank));   /* before its reader */
        full[k] = sh_pick(c, lim[k], fc, n_ax + rank, idx, rank);
    }
    int64_t ones[SH_MAX_RANK];
    for (size_t a = 0; a < rank; a++)
        ones[a] = 1;
    MilOp *op = cml_op(c, "slice_by_index");
    mil_op_in(op, "x", x);
    mil_op_in(op, "begin", full[0]);
    mil_op_in(op, "end", full[1]);
    mil_op_in_const(op, "stride", cml_ints(ones, rank));
    return cml_out(c, op, n, 0);
}

/* One axis of unknown size d sliced from lo to hi by step: ONNX's
 * Slice and MIL's slice_by_index (python's slicing) read negative and
 * out-of-range bounds alike (d added to a negative one, then clamped),
 * so they pass as they are, narrowed to int32; a bound beyond int32 (the
 * INT64_MAX/MIN exporters write for "to the end") becomes a mask. The one
 * difference: a negative step from below -d starts at 0 in ONNX and gives
 * nothing in python; false for such a start (below -1, as d may be 1). */
static bool sh_slice_open(int64_t step, int64_t lo, int64_t hi, int64_t *b, int64_t *e,
                          bool *bm, bool *em)
{
    *bm = step > 0 ? lo <= INT32_MIN : lo >= INT32_MAX;
    *em = step > 0 ? hi >= INT32_MAX : hi <= INT32_MIN;
    *b = *bm ? 0 : sh_clamp(lo, INT32_MIN, INT32_MAX);
    *e = *em ? 0 : sh_clamp(hi, INT32_MIN, INT32_MAX);
    return step > 0 || lo >= -1;
}

/* Slice with constant parameters: MIL's begin/end/stride per dim; on a
 * known dim ONNX's clamping done here (so MIL's python-style negatives
 * never apply), end_mask where a negative step runs to the start; on an
 * unknown one, sh_slice_open. */
static int lower_slice(CmLower *c, const IrNode *n)
{
    int64_t dims[SH_MAX_RANK];
    size_t rank;
    if (!cml_dims_open(n->in[0], dims, SH_MAX_RANK, &rank) || !rank)
        return cml_refuse(c, "input rank unknown, 0 or above %d", SH_MAX_RANK);
    int64_t *st = NULL, *en = NULL, *ax = NULL, *sp = NULL;
    size_t nst = 0, nen = 0, nax = 0, nsp = 0;
    int rc = 0;
    if (!cml_const_ints(n, 1, &st, &nst) || !cml_const_ints(n, 2, &en, &nen) ||
        (cml_has(n, 3) && !cml_const_ints(n, 3, &ax, &nax)) ||
        (cml_has(n, 4) && !cml_const_ints(n, 4, &sp, &nsp))) {
        free(st);
        free(en);
        free(ax);
        free(sp);
        return lower_slice_dyn(c, n, dims, rank);
    } else if (nen != nst || (ax && nax != nst) || (sp && nsp != nst))
        rc = cml_refuse(c, "starts/ends/axes/steps differ in length");
    int64_t b[SH_MAX_RANK], e[SH_MAX_RANK], s[SH_MAX_RANK];
    bool bm[SH_MAX_RANK], em[SH_MAX_RANK];
    for (size_t i = 0; i < rank; i++) {
        b[i] = e[i] = 0;
        s[i] = 1;
        bm[i] = em[i] = true;
    }
    for (size_t k = 0; rc == 0 && k < nst; k++) {
        int64_t a = ax ? ax[k] : (int64_t)k, step = sp ? sp[k] : 1;
        if (!cml_axis(a, (int)rank, &a) || step == 0 || step < INT32_MIN || step > INT32_MAX) {
            rc = cml_refuse(c, "axis or step out of range");
            break;
        }
        int64_t d = dims[a], lo = st[k], hi = en[k];
        s[a] = step;
        bm[a] = false;
        if (d < 0) {
            if (!sh_slice_open(step, lo, hi, &b[a], &e[a], &bm[a], &em[a]))
                rc = cml_refuse(c, "a negative step from %lld on an axis of unknown size "
                                "(ONNX clamps such a start to 0, MIL's slice to nothing)",
                                (long long)lo);
            continue;
        }
        if (lo < 0)
            lo = lo < -d ? 0 : lo + d;
        if (hi < 0)
            hi = hi < -d ? -1 : hi + d;
        if (step > 0) {
            lo = sh_clamp(lo, 0, d);
            hi = sh_clamp(hi, 0, d);
        } else {
            lo = sh_clamp(lo, 0, d - 1);
            hi = sh_clamp(hi, -1, d - 1);
        }
        b[a] = lo;
        e[a] = hi < 0 ? 0 : hi;
        em[a] = hi < 0;
    }
    free(st);
    free(en);
    free(ax);
    free(sp);
    if (rc < 0)
        return -1;
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "slice_by_index");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "begin", cml_ints(b, rank));
    mil_op_in_const(op, "end", cml_ints(e, rank));
    mil_op_in_const(op, "stride", cml_ints(s, rank));
    uint8_t m1[SH_MAX_RANK], m2[SH_MAX_RANK];
    for (size_t i = 0; i < rank; i++) {
        m1[i] = bm[i];
        m2[i] = em[i];
    }
    int64_t r1[1] = {(int64_t)rank};
    mil_op_in_const(op, "begin_mask", mil_tensor_new(MIL_BOOL, 1, r1, m1));
    mil_op_in_const(op, "end_mask", mil_tensor_new(MIL_BOOL, 1, r1, m2));
    return cml_out(c, op, n, 0);
}

/* Squeeze/Unsqueeze: axes (an input since 13) must be constant. */
static int lower_squeeze(CmLower *c, const IrNode *n)
{
    bool un = !strcmp(n->op_type, "Unsqueeze");
    int64_t *a = NULL;
    size_t na = 0;
    if (cml_has(n, 1) && !cml_const_ints(n, 1, &a, &na))
        return cml_refuse(c, "axes are not constant");
    if (un && !a)
        return cml_refuse(c, "axes missing");
    int r = un ? cml_rank(n->out[0]) : cml_rank(n->in[0]);
    for (size_t i = 0; i < na; i++)
        if (!cml_axis(a[i], r, &a[i])) {
            free(a);
            return cml_refuse(c, "axis out of range or rank unknown");
        }
    const char *x = cml_in(c, n, 0);
    if (!x) {
        free(a);
        return -1;
    }
    MilOp *op = cml_op(c, un ? "expand_dims" : "squeeze");
    mil_op_in(op, "x", x);
    if (a)
        mil_op_in_const(op, "axes", cml_ints(a, na));
    free(a);
    return cml_out(c, op, n, 0);
}

/* Expand where dims or the shape are known only at run time: x times
 * fill(shape, 1), whose broadcast is Expand's (both ways) and whose
 * product is x exactly (MIL's mul has no bool: refused). */
static int sh_expand_open(CmLower *c, const IrNode *n)
{
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32)
        return cml_refuse(c, "dims known only at run time, for a type MIL's mul lacks");
    const char *x = cml_in(c, n, 0), *sh = x ? cml_in(c, n, 1) : NULL;
    if (!sh)
        return -1;
    MilOp *op = cml_op(c, "fill");
    mil_op_in(op, "shape", sh);
    mil_op_in_const(op, "value", cml_scalar(dt, 1));
    const char *ones = cml_tmp(c, op, dt, cml_rank(n->out[0]), NULL);
    op = cml_op(c, "mul");
    mil_op_in(op, "x", x);
    mil_op_in(op, "y", ones);
    return cml_out(c, op, n, 0);
}

/* Expand as tile (MIL has no broadcast_to): the input reshaped to the
 * output's rank, then each dim of 1 repeated to the output's. */
static int lower_expand(CmLower *c, const IrNode *n)
{
    int64_t in[SH_MAX_RANK], out[SH_MAX_RANK], pad[SH_MAX_RANK], reps[SH_MAX_RANK];
    size_t ri, ro;
    if (!cml_dims(n->in[0], in, SH_MAX_RANK, &ri) ||
        !cml_dims(n->out[0], out, SH_MAX_RANK, &ro) || ri > ro)
        return sh_expand_open(c, n);
    for (size_t i = 0; i < ro; i++) {
        pad[i] = i < ro - ri ? 1 : in[i - (ro - ri)];
        if (pad[i] != out[i] && pad[i] != 1)
            return cml_refuse(c, "dims do not broadcast");
        reps[i] = pad[i] == out[i] ? 1 : out[i];
    }
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    int32_t dt = cm_dtype_to_mil(cml_elem(n->in[0]));
    MilOp *op;
    if (ri != ro) {
        op = cml_op(c, "reshape");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "shape", cml_ints(pad, ro));
        x = cml_tmp(c, op, dt, (int)ro, pad);
    }
    op = cml_op(c, "tile");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "reps", cml_ints(reps, ro));
    return cml_out(c, op, n, 0);
}

static int lower_tile(CmLower *c, const IrNode *n)
{
    const char *x = cml_in(c, n, 0), *reps = x ? cml_in(c, n, 1) : NULL;
    if (!reps)
        return -1;
    MilOp *op = cml_op(c, "tile");
    mil_op_in(op, "x", x);
    mil_op_in(op, "reps", reps);
    return cml_out(c, op, n, 0);
}

/* Pad: MIL pairs begin/end per dim ([b0, e0, b1, e1, ...]), ONNX lists
 * every begin, then every end. Refused: non-constant pads or value,
 * negative pads (MIL's pad cannot crop). */
static int lower_pad(CmLower *c, const IrNode *n)
{
    char buf[32];
    const char *mode = cml_attr_s(n, "mode", buf, sizeof buf);
    const char *mm = !strcmp(mode, "constant") ? "constant" : !strcmp(mode, "reflect")
                         ? "reflect" : !strcmp(mode, "edge") ? "replicate" : NULL;
    if (!mm)
        return cml_refuse(c, "mode '%s' has no MIL pad mode", mode);
    int r = cml_rank(n->in[0]);
    int64_t *p, mp[2 * SH_MAX_RANK];
    size_t np;
    if (!cml_const_ints(n, 1, &p, &np))
        return cml_refuse(c, "pads are not constant");
    bool ok = r >= 0 && r <= SH_MAX_RANK && np == 2 * (size_t)r;
    for (size_t i = 0; ok && i < (size_t)r; i++) {
        ok &= p[i] >= 0 && p[i + (size_t)r] >= 0 && p[i] <= INT32_MAX && p[i + (size_t)r] <= INT32_MAX;
        mp[2 * i] = p[i];
        mp[2 * i + 1] = p[i + (size_t)r];
    }
    free(p);
    if (!ok)
        return cml_refuse(c, "pads negative or not 2 x rank (MIL's pad cannot crop)");
    double v = 0, *cv;
    size_t ncv;
    if (cml_has(n, 2)) {
        if (!cml_const_floats(n, 2, &cv, &ncv))
            return cml_refuse(c, "constant_value is not a constant");
        v = ncv ? cv[0] : 0;
        free(cv);
    }
    const char *x = cml_in(c, n, 0);
    if (!x)
        return -1;
    MilOp *op = cml_op(c, "pad");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "pad", cml_ints(mp, 2 * (size_t)r));
    mil_op_in_const(op, "mode", mil_tensor_string(mm));
    if (!strcmp(mm, "constant"))
        mil_op_in_const(op, "constant_val",
                        cml_scalar(cm_dtype_to_mil(cml_elem(n->in[0])), v));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule sh_lower[] = {
    {"Reshape", lower_reshape}, {"Flatten", lower_flatten},
    {"Transpose", lower_transpose}, {"Concat", lower_concat}, {"Split", lower_split},
    {"Slice", lower_slice}, {"Squeeze", lower_squeeze}, {"Unsqueeze", lower_squeeze},
    {"Expand", lower_expand}, {"Tile", lower_tile}, {"Pad", lower_pad},
};

/* ---- raising -------------------------------------------------------------------- */

/* An int parameter as an INT64 initializer (a const), or the value cast to
 * INT64 (a computed int32 shape). */
static const char *sh_i64_input(CmRaise *r, const MilOp *op, const char *param)
{
    const MilTensor *t = cmr_const(r, op, param);
    int64_t *v;
    size_t nv;
    if (t && cmr_ints(t, &v, &nv)) {
        const char *name = cmr_init_i64(r, v, nv, t->rank == 0);
        free(v);
        return name;
    }
    const char *x = cmr_in(r, op, param, 0);
    if (!x)
        return NULL;
    const char *y = cmr_tmp(r, "i64");
    const char *in[1] = {x}, *out[1] = {y};
    IrNode *node;
    if (cmr_node(r, "Cast", 1, in, 1, out, &node) < 0)
        return NULL;
    ir_node_set_attr(node, ir_attr_int("to", IR_INT64));
    return y;
}

static int raise_reshape(CmRaise *r, const MilOp *op)
{
    const char *in[2] = {cmr_in(r, op, "x", 0), sh_i64_input(r, op, "shape")};
    return cmr_simple(r, op, "Reshape", 2, in, NULL);
}

static int raise_int_attr(CmRaise *r, const MilOp *op, const char *param, IrNode *node,
                          const char *attr, bool list)
{
    const MilTensor *t = cmr_const(r, op, param);
    int64_t *v;
    size_t nv;
    if (!t)
        return 0;
    if (!cmr_ints(t, &v, &nv))
        return cmr_fail(r, "malformed %s", param);
    if (!list && nv != 1) {
        free(v);
        return cmr_fail(r, "malformed %s", param);
    }
    ir_node_set_attr(node, list ? ir_attr_ints(attr, nv, v) : ir_attr_int(attr, v[0]));
    free(v);
    return 0;
}

/* MIL's perm may count from the end (coremltools writes [1, -3, -1] for
 * a multi-head attention's transposes); ONNX's Transpose takes 0..rank-1
 * only, so each entry is normalized by the perm's length, the rank. */
static int raise_transpose(CmRaise *r, const MilOp *op)
{
    const MilTensor *t = cmr_const(r, op, "perm");
    int64_t *v;
    size_t nv;
    if (!t || !cmr_ints(t, &v, &nv))
        return cmr_fail(r, "perm is not a constant list of ints");
    uint64_t seen = 0;
    bool ok = nv <= 64;
    for (size_t i = 0; ok && i < nv; i++) {
        if (v[i] < 0)
            v[i] += (int64_t)nv;
        ok = v[i] >= 0 && v[i] < (int64_t)nv && !(seen >> v[i] & 1);
        if (ok)
            seen |= (uint64_t)1 << v[i];
    }
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    if (!ok || cmr_simple(r, op, "Transpose", 1, in, &node) < 0) {
        free(v);
        return ok ? -1 : cmr_fail(r, "perm is not a permutation of its %zu dims", nv);
    }
    ir_node_set_attr(node, ir_attr_ints("perm", nv, v));
    free(v);
    return 0;
}

static int sh_arg_rank(CmRaise *r, const MilOp *op, const char *param, size_t k);

/* concat with interleave (all values of one shape): each value unsqueezed
 * after the axis, Concat there, and the two dims merged by a Reshape to
 * values[0]'s shape with the axis dim times the count. */
static int sh_interleave(CmRaise *r, const MilOp *op, const char **in, size_t n)
{
    int rank = op->n_out ? op->out[0].type.rank : -1;
    const MilTensor *at = cmr_const(r, op, "axis");
    int64_t *a = NULL, axis;
    size_t na = 0;
    if (!at || !cmr_ints(at, &a, &na) || na != 1 || rank < 1 || rank > SH_MAX_RANK ||
        a[0] < -rank || a[0] >= rank) {
        free(a);
        return cmr_fail(r, "interleave needs a constant axis within a known rank");
    }
    axis = a[0] < 0 ? a[0] + rank : a[0];
    free(a);
    int64_t after = axis + 1, mul[SH_MAX_RANK];
    const char *ax = cmr_init_i64(r, &after, 1, false);
    for (size_t i = 0; i < n; i++)
        in[i] = cmr_tnode(r, "Unsqueeze", 2, in[i], ax, NULL);
    const char *cat = cmr_tmp(r, "interleaved"), *out[1] = {cat};
    IrNode *node;
    if (cmr_node(r, "Concat", n, in, 1, out, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("axis", after));
    for (int i = 0; i < rank; i++)
        mul[i] = i == axis ? (int64_t)n : 1;
    const char *shape = cmr_tnode(r, "Mul", 2, cmr_tnode(r, "Shape", 1, cmr_in(r, op, "values", 0),
                                                         NULL, NULL),
                                  cmr_init_i64(r, mul, (size_t)rank, false), NULL);
    const char *ri[2] = {cat, shape};
    return cmr_simple(r, op, "Reshape", 2, ri, NULL);
}

/* concat: Concat; rank-0 values (MIL stacks them into a vector) are
 * unsqueezed first. */
static int raise_concat(CmRaise *r, const MilOp *op)
{
    const MilInput *vals = mil_op_input(op, "values");
    if (!vals || !vals->n_args || vals->n_args > 4096)
        return cmr_fail(r, "values missing");
    const char **in = mem_array(vals->n_args, sizeof *in);
    int64_t zero = 0;
    for (size_t i = 0; i < vals->n_args; i++) {
        in[i] = cmr_in(r, op, "values", i);
        if (sh_arg_rank(r, op, "values", i) == 0)
            in[i] = cmr_tnode(r, "Unsqueeze", 2, in[i], cmr_init_i64(r, &zero, 1, false), NULL);
    }
    IrNode *node;
    int rc;
    if (cmr_bool(r, op, "interleave", false)) {
        rc = sh_interleave(r, op, in, vals->n_args);
        free(in);
        return rc;
    }
    rc = cmr_simple(r, op, "Concat", vals->n_args, in, &node);
    free(in);
    if (rc < 0)
        return -1;
    return raise_int_attr(r, op, "axis", node, "axis", false);
}

static int raise_split(CmRaise *r, const MilOp *op)
{
    if (!op->n_out || op->n_out > 4096)
        return cmr_fail(r, "no outputs");
    const char *in[2] = {cmr_in(r, op, "x", 0), NULL};
    if (cmr_const(r, op, "split_sizes"))
        in[1] = sh_i64_input(r, op, "split_sizes");
    const char **out = mem_array(op->n_out, sizeof *out);
    for (size_t i = 0; i < op->n_out; i++)
        out[i] = op->out[i].name;
    IrNode *node;
    int rc = cmr_node(r, "Split", in[1] ? 2 : 1, in, op->n_out, out, &node);
    free(out);
    if (rc < 0)
        return -1;
    return raise_int_attr(r, op, "axis", node, "axis", false);
}

/* slice_by_index: ONNX Slice over every dim (masks as the ends of the
 * range), then Squeeze of the squeeze_mask dims. */
/* Whether the const parameter `param` of op is absent or all zero. */
static bool sh_all_zero(CmRaise *r, const MilOp *op, const char *param)
{
    const MilTensor *t = cmr_const(r, op, param);
    int64_t *v;
    size_t nv;
    if (!mil_op_input(op, param))
        return true;
    if (!t || !cmr_ints(t, &v, &nv))
        return false;
    bool z = true;
    for (size_t i = 0; i < nv; i++)
        z &= v[i] == 0;
    free(v);
    return z;
}

/* slice_by_index with computed begin or end: an ONNX Slice over every dim
 * (begin and end cast to int64), for strides all 1 and no masks (MIL's
 * python-style negatives and out-of-range values are then ONNX's too only
 * within [0, dim]: the export clamps them first). */
static int sh_slice_dyn(CmRaise *r, const MilOp *op, const char *x, const char *y)
{
    const MilTensor *st = cmr_const(r, op, "stride");
    int64_t *s = NULL;
    size_t ns = 0;
    bool ok = st && cmr_ints(st, &s, &ns) && ns > 0;
    for (size_t i = 0; ok && i < ns; i++)
        ok = s[i] == 1;
    ok = ok && sh_all_zero(r, op, "begin_mask") && sh_all_zero(r, op, "end_mask") &&
         sh_all_zero(r, op, "squeeze_mask");
    if (!ok) {
        free(s);
        return cmr_fail(r, "computed begin/end are raised for constant strides of 1 without "
                        "masks only");
    }
    const char *be[2];
    const char *names[2] = {"begin", "end"};
    int rc = 0;
    for (int k = 0; rc == 0 && k < 2; k++) {
        const char *in[1] = {cmr_in(r, op, names[k], 0)}, *out[1] = {cmr_tmp(r, names[k])};
        IrNode *node;
        rc = cmr_node(r, "Cast", 1, in, 1, out, &node);
        if (rc == 0)
            ir_node_set_attr(node, ir_attr_int("to", IR_INT64));
        be[k] = out[0];
    }
    int64_t *axes = mem_array(ns, sizeof *axes);
    for (size_t i = 0; i < ns; i++)
        axes[i] = (int64_t)i;
    if (rc == 0) {
        const char *in[5] = {x, be[0], be[1], cmr_init_i64(r, axes, ns, false),
                             cmr_init_i64(r, s, ns, false)};
        const char *out[1] = {y};
        rc = cmr_node(r, "Slice", 5, in, 1, out, NULL);
    }
    free(axes);
    free(s);
    return rc;
}

/* The slice op's begin/end/stride/masks (slice_by_index's, also
 * slice_update's) applied to x as Slice, then Squeeze of the squeeze_mask
 * dims, into y. */
static int sh_slice(CmRaise *r, const MilOp *op, const char *x, const char *y)
{
    if (!cmr_const(r, op, "begin") || !cmr_const(r, op, "end"))
        return sh_slice_dyn(r, op, x, y);
    const MilTensor *bt = cmr_const(r, op, "begin"), *et = cmr_const(r, op, "end");
    const MilTensor *st = cmr_const(r, op, "stride");
    const MilTensor *bmt = cmr_const(r, op, "begin_mask"), *emt = cmr_const(r, op, "end_mask");
    const MilTensor *smt = cmr_const(r, op, "squeeze_mask");
    int64_t *b = NULL, *e = NULL, *s = NULL, *bm = NULL, *em = NULL, *sm = NULL;
    size_t nb = 0, ne = 0, ns = 0, nbm = 0, nem = 0, nsm = 0;
    int rc = 0;
    if (!bt || !et || !cmr_ints(bt, &b, &nb) || !cmr_ints(et, &e, &ne) || nb != ne ||
        (st && (!cmr_ints(st, &s, &ns) || ns != nb)) ||
        (bmt && (!cmr_ints(bmt, &bm, &nbm) || nbm != nb)) ||
        (emt && (!cmr_ints(emt, &em, &nem) || nem != nb)) ||
        (smt && (!cmr_ints(smt, &sm, &nsm) || nsm != nb)))
        rc = cmr_fail(r, "begin/end/stride/masks are not constant lists of one length");
    int64_t *axes = mem_array(nb ? nb : 1, sizeof *axes);
    for (size_t i = 0; rc == 0 && i < nb; i++) {
        int64_t step = s ? s[i] : 1;
        axes[i] = (int64_t)i;
        if (s)
            s[i] = step;
        if (bm && bm[i])
            b[i] = step > 0 ? 0 : INT64_MAX;
        if (em && em[i])
            e[i] = step > 0 ? INT64_MAX : INT64_MIN;
        /* a squeezed dim is the pure index at begin: end is ignored
         * (coremltools writes end = begin there) */
        if (sm && sm[i] && b[i] != INT64_MAX) {
            e[i] = b[i] == -1 ? INT64_MAX : b[i] + 1;
            if (s)
                s[i] = 1;
        }
    }
    bool squeeze = false;
    for (size_t i = 0; sm && i < nb; i++)
        squeeze |= sm[i] != 0;
    if (rc == 0) {
        const char *sliced = squeeze ? cmr_tmp(r, "sl") : y;
        int64_t *ones = mem_array(nb ? nb : 1, sizeof *ones);
        for (size_t i = 0; i < nb; i++)
            ones[i] = 1;
        const char *in[5] = {x, cmr_init_i64(r, b, nb, false),
                             cmr_init_i64(r, e, nb, false), cmr_init_i64(r, axes, nb, false),
                             cmr_init_i64(r, s ? s : ones, nb, false)};
        const char *out[1] = {sliced};
        rc = cmr_node(r, "Slice", 5, in, 1, out, NULL);
        free(ones);
        if (rc == 0 && squeeze) {
            size_t k = 0;
            for (size_t i = 0; i < nb; i++)
                if (sm[i])
                    axes[k++] = (int64_t)i;
            const char *i2[2] = {sliced, cmr_init_i64(r, axes, k, false)}, *o2[1] = {y};
            rc = cmr_node(r, "Squeeze", 2, i2, 1, o2, NULL);
        }
    }
    free(b);
    free(e);
    free(s);
    free(bm);
    free(em);
    free(sm);
    free(axes);
    return rc;
}

static int raise_slice(CmRaise *r, const MilOp *op)
{
    return sh_slice(r, op, cmr_in(r, op, "x", 0), cmr_out(op, 0));
}

/* slice_update (iOS18): x with the slice (as slice_by_index reads it)
 * replaced by update. The slice is taken of a table of x's flat indices
 * (Range reshaped to x's shape), and update scattered there into the
 * flattened x (ScatterElements), reshaped back. */
static int raise_slice_update(CmRaise *r, const MilOp *op)
{
    int64_t zero = 0, one = 1, flat = -1;
    const char *x = cmr_in(r, op, "x", 0), *u = cmr_in(r, op, "update", 0);
    const char *shape = cmr_tnode(r, "Shape", 1, x, NULL, NULL);
    const char *n = cmr_tnode(r, "Size", 1, x, NULL, NULL);
    const char *ri[3] = {cmr_init_i64(r, &zero, 1, true), n, cmr_init_i64(r, &one, 1, true)};
    const char *range = cmr_tmp(r, "flat_index"), *ro[1] = {range};
    if (!n || cmr_node(r, "Range", 3, ri, 1, ro, NULL) < 0)
        return -1;
    const char *table = cmr_tnode(r, "Reshape", 2, range, shape, NULL);
    const char *sel = cmr_tmp(r, "slice_index");
    if (!table || sh_slice(r, op, table, sel) < 0)
        return -1;
    const char *m1 = cmr_init_i64(r, &flat, 1, false);
    const char *si[3] = {cmr_tnode(r, "Reshape", 2, x, m1, NULL),
                         cmr_tnode(r, "Reshape", 2, sel, m1, NULL),
                         cmr_tnode(r, "Reshape", 2, u, m1, NULL)};
    const char *sc = cmr_tmp(r, "updated"), *so[1] = {sc};
    if (cmr_node(r, "ScatterElements", 3, si, 1, so, NULL) < 0)
        return -1;
    const char *in[2] = {sc, shape};
    return cmr_simple(r, op, "Reshape", 2, in, NULL);
}

/* slice_by_size: begin and size per dim, size -1 to the end, a negative
 * begin counted from the end (coremltools' value inference). Constant:
 * one Slice; computed: Slice from Where(b < 0, b + dim, b) to
 * Where(size == -1, dim, begin + size). */
static int raise_slice_by_size(CmRaise *r, const MilOp *op)
{
    const MilTensor *bt = cmr_const(r, op, "begin"), *st = cmr_const(r, op, "size");
    const char *x = cmr_in(r, op, "x", 0);
    int64_t *b = NULL, *sz = NULL;
    size_t nb = 0, ns = 0;
    if (bt && st && cmr_ints(bt, &b, &nb) && cmr_ints(st, &sz, &ns) && nb == ns) {
        int64_t *e = mem_array(nb ? nb : 1, sizeof *e);
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < nb; i++) {
            if (sz[i] < -1)
                rc = cmr_fail(r, "size %lld is neither -1 nor a length", (long long)sz[i]);
            e[i] = sz[i] == -1 || (b[i] < 0 && b[i] + sz[i] >= 0) ? INT64_MAX : b[i] + sz[i];
        }
        if (rc == 0) {
            const char *in[3] = {x, cmr_init_i64(r, b, nb, false), cmr_init_i64(r, e, nb, false)};
            rc = cmr_simple(r, op, "Slice", 3, in, NULL);
        }
        free(b);
        free(sz);
        free(e);
        return rc;
    }
    free(b);
    free(sz);
    int64_t zero = 0, m1 = -1;
    IrNode *nb_, *ns_;
    const char *bi = cmr_tnode(r, "Cast", 1, cmr_in(r, op, "begin", 0), NULL, &nb_);
    const char *si = cmr_tnode(r, "Cast", 1, cmr_in(r, op, "size", 0), NULL, &ns_);
    if (!bi || !si)
        return -1;
    ir_node_set_attr(nb_, ir_attr_int("to", IR_INT64));
    ir_node_set_attr(ns_, ir_attr_int("to", IR_INT64));
    const char *dim = cmr_tnode(r, "Shape", 1, x, NULL, NULL);
    const char *w1[3] = {cmr_tnode(r, "Less", 2, bi, cmr_init_i64(r, &zero, 1, true), NULL),
                         cmr_tnode(r, "Add", 2, bi, dim, NULL), bi};
    const char *start = cmr_tmp(r, "start"), *o1[1] = {start};
    if (cmr_node(r, "Where", 3, w1, 1, o1, NULL) < 0)
        return -1;
    const char *w2[3] = {cmr_tnode(r, "Equal", 2, si, cmr_init_i64(r, &m1, 1, true), NULL), dim,
                         cmr_tnode(r, "Add", 2, start, si, NULL)};
    const char *end = cmr_tmp(r, "end"), *o2[1] = {end};
    if (cmr_node(r, "Where", 3, w2, 1, o2, NULL) < 0)
        return -1;
    const char *in[3] = {x, start, end};
    return cmr_simple(r, op, "Slice", 3, in, NULL);
}

/* crop: Slice of the last two dims (crop_height, crop_width: [begin, end]
 * amounts). */
static int raise_crop(CmRaise *r, const MilOp *op)
{
    const MilTensor *ht = cmr_const(r, op, "crop_height"), *wt = cmr_const(r, op, "crop_width");
    int64_t *h = NULL, *w = NULL;
    size_t nh = 0, nw = 0;
    int rc = 0;
    if (!ht || !wt || !cmr_ints(ht, &h, &nh) || !cmr_ints(wt, &w, &nw) || nh != 2 || nw != 2 ||
        h[0] < 0 || h[1] < 0 || w[0] < 0 || w[1] < 0)
        rc = cmr_fail(r, "crop_height and crop_width are not two constant amounts each");
    if (rc == 0) {
        int64_t st[2] = {h[0], w[0]}, en[2] = {h[1] ? -h[1] : INT64_MAX, w[1] ? -w[1] : INT64_MAX};
        int64_t ax[2] = {-2, -1};
        const char *in[4] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, st, 2, false),
                             cmr_init_i64(r, en, 2, false), cmr_init_i64(r, ax, 2, false)};
        rc = cmr_simple(r, op, "Slice", 4, in, NULL);
    }
    free(h);
    free(w);
    return rc;
}

/* reshape_like: its output shape is static (the op's definition requires
 * it): Reshape to the output type's dims (allowzero where one is 0). */
static int raise_reshape_like(CmRaise *r, const MilOp *op)
{
    int64_t dims[SH_MAX_RANK];
    size_t rank;
    if (!op->n_out || !cmr_dims(r, op->out[0].name, dims, SH_MAX_RANK, &rank))
        return cmr_fail(r, "the output's dims are not static");
    bool zero = false;
    for (size_t i = 0; i < rank; i++)
        zero |= dims[i] == 0;
    const char *in[2] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, dims, rank, false)};
    IrNode *node;
    if (cmr_simple(r, op, "Reshape", 2, in, &node) < 0)
        return -1;
    if (zero)
        ir_node_set_attr(node, ir_attr_int("allowzero", 1));
    return 0;
}

/* flatten2d: ONNX's Flatten (the same dims before and from axis, axis 1 by
 * default, negative from the end). */
static int raise_flatten2d(CmRaise *r, const MilOp *op)
{
    const char *in[1] = {cmr_in(r, op, "x", 0)};
    IrNode *node;
    if (cmr_simple(r, op, "Flatten", 1, in, &node) < 0)
        return -1;
    return raise_int_attr(r, op, "axis", node, "axis", false);
}

/* The rank of argument k of param (an immediate's, or as declared); -1. */
static int sh_arg_rank(CmRaise *r, const MilOp *op, const char *param, size_t k)
{
    const MilInput *in = mil_op_input(op, param);
    const MilArg *a = in && k < in->n_args ? &in->args[k] : NULL;
    return !a ? -1 : a->value ? a->value->rank : cmr_rank(r, a->name);
}

/* stack: each value unsqueezed at axis (negative counts from the end of
 * the output, as ONNX's Unsqueeze reads it), then Concat along it. */
static int raise_stack(CmRaise *r, const MilOp *op)
{
    const MilInput *vals = mil_op_input(op, "values");
    const MilTensor *at = cmr_const(r, op, "axis");
    int64_t *a = NULL;
    size_t na = 0;
    if (!vals || !vals->n_args || vals->n_args > 4096 || !at || !cmr_ints(at, &a, &na) ||
        na != 1) {
        free(a);
        return cmr_fail(r, "values or a constant axis missing");
    }
    int64_t axis = a[0];
    free(a);
    const char *ax = cmr_init_i64(r, &axis, 1, false);
    const char **in = mem_array(vals->n_args, sizeof *in);
    for (size_t i = 0; i < vals->n_args; i++)
        in[i] = cmr_tnode(r, "Unsqueeze", 2, cmr_in(r, op, "values", i), ax, NULL);
    IrNode *node;
    int rc = cmr_simple(r, op, "Concat", vals->n_args, in, &node);
    free(in);
    if (rc == 0)
        ir_node_set_attr(node, ir_attr_int("axis", axis));
    return rc;
}

/* space_to_batch and batch_to_space: TensorFlow's SpaceToBatchND and
 * BatchToSpaceND over [N, C, H, W] (coremltools' TensorFlow front end maps
 * them so, between transposes from NHWC): the new batch index is
 * (i_h * block_w + i_w) * N + n for the offset (i_h, i_w) within a block.
 *   space_to_batch: Pad, Reshape [N, C, Ho, bh, Wo, bw], Transpose
 *     [3, 5, 0, 1, 2, 4], Reshape [-1, C, Ho, Wo];
 *   batch_to_space: Reshape [bh, bw, -1, C, H, W], Transpose
 *     [2, 3, 4, 0, 5, 1], Reshape [N, C, H bh, W bw], Slice of the crops.
 * C and the spatial dims come from the output's type and must be static. */
static int raise_space_batch(CmRaise *r, const MilOp *op)
{
    bool to_batch = !strcmp(op->type, "space_to_batch");
    const MilTensor *bt = cmr_const(r, op, "block_shape");
    const MilTensor *pt = cmr_const(r, op, to_batch ? "paddings" : "crops");
    int64_t *b = NULL, *p = NULL, od[4];
    size_t nb = 0, np = 0, rank = 0;
    bool ok = bt && pt && cmr_ints(bt, &b, &nb) && cmr_ints(pt, &p, &np) && nb == 2 &&
              np == 4 && b[0] > 0 && b[1] > 0 && p[0] >= 0 && p[1] >= 0 && p[2] >= 0 &&
              p[3] >= 0 && op->n_out && cmr_dims(r, op->out[0].name, od, 4, &rank) &&
              rank == 4;
    int64_t bh = ok ? b[0] : 1, bw = ok ? b[1] : 1, pd[4] = {0};
    if (ok)
        memcpy(pd, p, sizeof pd);
    free(b);
    free(p);
    if (!ok)
        return cmr_fail(r, "block_shape, %s or the output's C, H, W not constant",
                        to_batch ? "paddings" : "crops");
    const char *x = cmr_in(r, op, "x", 0);
    IrNode *node;
    if (to_batch) {
        if (pd[0] || pd[1] || pd[2] || pd[3]) {
            int64_t pads[8] = {0, 0, pd[0], pd[2], 0, 0, pd[1], pd[3]};
            x = cmr_tnode(r, "Pad", 2, x, cmr_init_i64(r, pads, 8, false), NULL);
        }
        int64_t s1[6] = {0, 0, od[2], bh, od[3], bw}, perm[6] = {3, 5, 0, 1, 2, 4};
        int64_t s2[4] = {-1, od[1], od[2], od[3]};
        const char *t = cmr_tnode(r, "Transpose", 1,
                                  cmr_tnode(r, "Reshape", 2, x, cmr_init_i64(r, s1, 6, false),
                                            NULL), NULL, &node);
        if (!t)
            return -1;
        ir_node_set_attr(node, ir_attr_ints("perm", 6, perm));
        const char *in[2] = {t, cmr_init_i64(r, s2, 4, false)};
        return cmr_simple(r, op, "Reshape", 2, in, NULL);
    }
    int64_t h = od[2] + pd[0] + pd[1], w = od[3] + pd[2] + pd[3];
    if (h % bh || w % bw)
        return cmr_fail(r, "the output's dims and the crops do not fit the block shape");
    h /= bh;
    w /= bw;
    int64_t s1[6] = {bh, bw, -1, od[1], h, w}, perm[6] = {2, 3, 4, 0, 5, 1};
    int64_t s2[4] = {0, 0, h * bh, w * bw};
    const char *t = cmr_tnode(r, "Transpose", 1,
                              cmr_tnode(r, "Reshape", 2, x, cmr_init_i64(r, s1, 6, false), NULL),
                              NULL, &node);
    if (!t)
        return -1;
    ir_node_set_attr(node, ir_attr_ints("perm", 6, perm));
    bool crop = pd[0] || pd[1] || pd[2] || pd[3];
    const char *in[2] = {t, cmr_init_i64(r, s2, 4, false)};
    if (!crop)
        return cmr_simple(r, op, "Reshape", 2, in, NULL);
    int64_t st[2] = {pd[0], pd[2]}, en[2] = {h * bh - pd[1], w * bw - pd[3]}, ax[2] = {2, 3};
    const char *sl[4] = {cmr_tnode(r, "Reshape", 2, in[0], in[1], NULL),
                         cmr_init_i64(r, st, 2, false), cmr_init_i64(r, en, 2, false),
                         cmr_init_i64(r, ax, 2, false)};
    return cmr_simple(r, op, "Slice", 4, sl, NULL);
}

static int raise_squeeze(CmRaise *r, const MilOp *op)
{
    bool un = !strcmp(op->type, "expand_dims");
    const char *in[2] = {cmr_in(r, op, "x", 0), NULL};
    if (cmr_const(r, op, "axes"))
        in[1] = sh_i64_input(r, op, "axes");
    else if (un)
        return cmr_fail(r, "axes missing");
    return cmr_simple(r, op, un ? "Unsqueeze" : "Squeeze", in[1] ? 2 : 1, in, NULL);
}

static int raise_tile(CmRaise *r, const MilOp *op)
{
    const char *in[2] = {cmr_in(r, op, "x", 0), sh_i64_input(r, op, "reps")};
    return cmr_simple(r, op, "Tile", 2, in, NULL);
}

/* pad: the last N dims of MIL's pairs as ONNX's begins and ends over the
 * rank (from the output type). */
static int raise_pad(CmRaise *r, const MilOp *op)
{
    const char *mode = cmr_string(cmr_const(r, op, "mode"));
    const char *om = !mode || !strcmp(mode, "constant") ? "constant"
                     : !strcmp(mode, "reflect") ? "reflect"
                     : !strcmp(mode, "replicate") ? "edge" : NULL;
    const MilTensor *pt = cmr_const(r, op, "pad");
    int rank = op->n_out ? op->out[0].type.rank : -1;
    int64_t *p;
    size_t np;
    if (!om || !pt || rank < 0 || rank > SH_MAX_RANK || !cmr_ints(pt, &p, &np))
        return cmr_fail(r, "mode, pad or rank not as the export writes them");
    if (np % 2 || np / 2 > (size_t)rank) {
        free(p);
        return cmr_fail(r, "pad has %zu entries for rank %d", np, rank);
    }
    int64_t o[2 * SH_MAX_RANK] = {0};
    size_t skip = (size_t)rank - np / 2;
    for (size_t i = 0; i < np / 2; i++) {
        o[skip + i] = p[2 * i];
        o[(size_t)rank + skip + i] = p[2 * i + 1];
    }
    free(p);
    const char *in[3] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, o, 2 * (size_t)rank, false),
                         !strcmp(om, "constant") ? cmr_in(r, op, "constant_val", 0) : NULL};
    IrNode *node;
    if (cmr_simple(r, op, "Pad", in[2] ? 3 : 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("mode", om));
    return 0;
}

static int refuse_sliding_windows(CmRaise *r, const MilOp *op)
{
    return cmr_fail(r, "not raised: ONNX has no op that takes overlapping windows along an "
                       "axis");
}

static const CmRaiseRule sh_raise[] = {
    {"sliding_windows", refuse_sliding_windows},
    {"reshape", raise_reshape}, {"transpose", raise_transpose},
    {"concat", raise_concat}, {"split", raise_split},
    {"slice_by_index", raise_slice}, {"squeeze", raise_squeeze},
    {"expand_dims", raise_squeeze}, {"tile", raise_tile}, {"pad", raise_pad},
    {"slice_update", raise_slice_update}, {"slice_by_size", raise_slice_by_size},
    {"crop", raise_crop}, {"reshape_like", raise_reshape_like}, {"flatten2d", raise_flatten2d},
    {"stack", raise_stack}, {"space_to_batch", raise_space_batch},
    {"batch_to_space", raise_space_batch},
};

CM_FAMILY(cm_family_shape, "shape", sh_lower, sh_raise);
