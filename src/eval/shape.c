/* Kernels of the shape family: ops that move or select elements
 * without arithmetic on them.
 *   Reshape 1,5,13,14,19,21,23,24,25   Flatten 1,9,11,13,21,23,24,25
 *   Transpose 1,13,21,23,24,25         Concat 1,4,11,13
 *   Split 1,2,11,13,18                 Squeeze/Unsqueeze 1,11,13,21,23..25
 *   Slice 1,10,11,13                   Expand 8,13        Tile 1,6,13
 *   Pad 1,2,11,13,18,19,21,23..25
 *
 * Most kernels describe their output as a strided view of the input (an
 * EvView: per output dim a source and a destination stride) and hand it to
 * one copier, which merges dims that are contiguous in both tensors and
 * copies the innermost run with memcpy when both strides are 1. That
 * makes Transpose, Slice, Expand, Tile, Concat, Split (and the tensor
 * family's DepthToSpace) one code path, fast for float data and correct
 * for strings (which are copied with malloc, since each tensor owns its
 * strings). The views and the input readers the tensor family shares are
 * declared in kernels.h.
 *
 * Subtle points:
 * - Reshape: 0 copies the input dim unless allowzero=1 (14+); -1 is
 *   inferred and may not meet a product of 0.
 * - Split-18 num_outputs: chunks of ceil(dim/n), the last one smaller.
 * - Slice: starts/ends are clamped to [0, dim] for positive steps and to
 *   [0, dim-1] / [-1, dim-1] for negative ones.
 * - Pad: negative pads crop first; reflect/edge/wrap then pad the cropped
 *   tensor. Reflection and wrap repeat when pads exceed the dim. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- element copies -------------------------------------------------- */

/* d = a malloc'ed copy of s (d's old string freed). */
void ev_str_set(EvStr *d, const EvStr *s)
{
    free(d->p);
    d->len = s->len;
    d->p = mem_alloc(s->len + 1);
    if (s->len)
        memcpy(d->p, s->p, s->len);
}

/* Sets every element of a fresh (zeroed) dst to src[si]. */
void ev_fill(EvValue *dst, const EvValue *src, size_t si)
{
    if (!dst->numel)
        return;
    if (dst->dtype == IR_STRING) {
        for (size_t k = 0; k < dst->numel; k++)
            ev_copy_elems(dst, k, src, si, 1);
        return;
    }
    size_t esz = ev_dtype_size(dst->dtype);
    const unsigned char *e = (const unsigned char *)src->data + si * esz;
    size_t nz = 0;
    while (nz < esz && !e[nz])
        nz++;
    if (nz == esz)
        return;
    char *p = dst->data;
    memcpy(p, e, esz);
    /* doubling keeps the fill at memcpy speed */
    for (size_t done = 1; done < dst->numel;) {
        size_t m = done < dst->numel - done ? done : dst->numel - done;
        memcpy(p + done * esz, p, m * esz);
        done += m;
    }
}

/* ---- strided views --------------------------------------------------- */


/* Row-major strides in elements. An empty tensor may have dims whose
 * product overflows (e.g. [0, 2^40, 2^40]); the unsigned product wraps
 * harmlessly there, and kernels use no stride of an empty tensor. */
void ev_istrides(size_t rank, const int64_t *dims, int64_t *st)
{
    uint64_t s = 1;
    for (size_t i = rank; i-- > 0;) {
        st[i] = (int64_t)s;
        s *= (uint64_t)dims[i];
    }
}

/* A view over dims writing a dense destination; source strides 0. */
void ev_view_init(EvView *v, size_t rank, const int64_t *dims)
{
    memset(v, 0, sizeof *v);
    v->rank = rank;
    if (rank)
        memcpy(v->dims, dims, rank * sizeof *dims);
    ev_istrides(rank, dims, v->ds);
}

/* Drops dims of 1 and merges neighbours contiguous in both tensors, so
 * that the innermost run is as long as it can be. */
static void ev_view_collapse(EvView *v)
{
    size_t r = 0;
    for (size_t i = 0; i < v->rank; i++) {
        if (v->dims[i] == 1)
            continue;
        if (r && v->ss[r - 1] == v->ss[i] * v->dims[i] &&
            v->ds[r - 1] == v->ds[i] * v->dims[i]) {
            v->dims[r - 1] *= v->dims[i];
            v->ss[r - 1] = v->ss[i];
            v->ds[r - 1] = v->ds[i];
            continue;
        }
        v->dims[r] = v->dims[i];
        v->ss[r] = v->ss[i];
        v->ds[r] = v->ds[i];
        r++;
    }
    v->rank = r;
}

/* One strided run of n elements; constant-size memcpy compiles to moves. */
#define EV_RUN(K)                                                        \
    for (int64_t j = 0; j < n; j++)                                      \
        memcpy(d + j * dstep, s + j * sstep, K);                         \
    break

static void ev_run(EvValue *dst, int64_t doff, int64_t ds,
                   const EvValue *src, int64_t soff, int64_t ss, int64_t n)
{
    if (src->dtype == IR_STRING) {
        EvStr *D = dst->data;
        const EvStr *S = src->data;
        for (int64_t j = 0; j < n; j++)
            ev_str_set(&D[doff + j * ds], &S[soff + j * ss]);
        return;
    }
    int64_t esz = (int64_t)ev_dtype_size(src->dtype);
    char *d = (char *)dst->data + doff * esz;
    const char *s = (const char *)src->data + soff * esz;
    if (ds == 1 && ss == 1) {
        memcpy(d, s, (size_t)(n * esz));
        return;
    }
    int64_t dstep = ds * esz, sstep = ss * esz;
    switch (esz) {
    case 1: EV_RUN(1);
    case 2: EV_RUN(2);
    case 4: EV_RUN(4);
    case 8: EV_RUN(8);
    case 16: EV_RUN(16);
    default:
        for (int64_t j = 0; j < n; j++)
            memcpy(d + j * dstep, s + j * sstep, (size_t)esz);
    }
}

/* Copies the elements v describes from src into dst (same dtype). The
 * view is collapsed in place. */
void ev_view_copy(EvValue *dst, const EvValue *src, EvView *v)
{
    for (size_t i = 0; i < v->rank; i++)
        if (v->dims[i] <= 0)
            return;
    ev_view_collapse(v);
    if (!v->rank) {
        ev_run(dst, v->doff, 1, src, v->soff, 1, 1);
        return;
    }
    size_t r = v->rank - 1;
    int64_t idx[EV_VIEW_MAX] = {0};
    int64_t so = v->soff, dof = v->doff;
    for (;;) {
        ev_run(dst, dof, v->ds[r], src, so, v->ss[r], v->dims[r]);
        size_t k = r;
        for (;;) {
            if (!k)
                return;
            k--;
            so += v->ss[k];
            dof += v->ds[k];
            if (++idx[k] < v->dims[k])
                break;
            so -= v->ss[k] * v->dims[k];
            dof -= v->ds[k] * v->dims[k];
            idx[k] = 0;
        }
    }
}

/* A dense copy of all of src into dst (same numel and dtype). */
static void ev_copy_all(EvValue *dst, const EvValue *src)
{
    ev_copy_elems(dst, 0, src, 0, src->numel);
}

/* ---- reading inputs and attributes ----------------------------------- */

/* Integer input i (present) as int64s in ev_tmp memory. */
int ev_ints(EvCtx *c, size_t i, const int64_t **v, size_t *n)
{
    EvValue *t = ev_in_tensor(c, i);
    if (!t)
        return -1;
    if (!ev_dtype_is_int(t->dtype))
        return ev_fail(c, "input %zu must hold integers", i);
    int64_t *p = ev_in_ints(c, i, n);
    if (!p)
        return -1;
    *v = p;
    return 0;
}

/* Like ev_ints for an optional input: 1 read, 0 absent, -1 failed. */
static int ev_ints_opt(EvCtx *c, size_t i, const int64_t **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (!ev_in(c, i))
        return 0;
    return ev_ints(c, i, v, n) < 0 ? -1 : 1;
}

/* An INTS attribute: 1 present, 0 absent (fails when required). */
int ev_attr_list(EvCtx *c, const char *name, bool required,
                 const int64_t **v, size_t *n)
{
    long k = ev_attr_ints(c, name, v);
    *n = k < 0 ? 0 : (size_t)k;
    if (k >= 0)
        return 1;
    if (required)
        return ev_fail(c, "attribute '%s' is missing", name);
    return 0;
}

/* The single element of input i as int64 (scalar or one-element). */
int ev_scalar_int(EvCtx *c, size_t i, int64_t *out)
{
    const int64_t *v;
    size_t n;
    if (ev_ints(c, i, &v, &n) < 0)
        return -1;
    if (n != 1)
        return ev_fail(c, "input %zu must hold one element", i);
    *out = v[0];
    return 0;
}

/* Input i as one whole number of any numeric type: Tile-1 types its
 * `tiles` and `axis` inputs like the data (T), so they may be floats. */
static int ev_scalar_whole(EvCtx *c, size_t i, int64_t *out)
{
    const EvValue *t = ev_in_tensor(c, i);
    if (!t)
        return -1;
    if (t->numel != 1 || !ev_dtype_is_real(t->dtype))
        return ev_fail(c, "input %zu must hold one number", i);
    double v = ev_get_f(t, 0);
    if (v != floor(v) || fabs(v) > 9007199254740992.0)
        return ev_fail(c, "input %zu must hold a whole number", i);
    *out = (int64_t)v;
    return 0;
}

/* a*b for dims, failing on overflow. */
int ev_mul_dim(EvCtx *c, int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || (a && b > INT64_MAX / a))
        return ev_fail(c, "dimension %lld x %lld overflows", (long long)a,
                       (long long)b);
    *out = a * b;
    return 0;
}

/* Marks axis list entries (normalized against rank) in seen; fails on a
 * bad or repeated axis. */
static int ev_mark_axes(EvCtx *c, const int64_t *axes, size_t n, size_t rank,
                        bool *seen, size_t *norm)
{
    for (size_t i = 0; i < n; i++) {
        size_t a;
        if (ev_axis(c, "axes", axes[i], rank, 0, &a) < 0)
            return -1;
        if (seen[a])
            return ev_fail(c, "axis %lld is repeated", (long long)axes[i]);
        seen[a] = true;
        if (norm)
            norm[i] = a;
    }
    return 0;
}

/* The tensor attribute `name`, which is present: a new reference, or
 * NULL with failure set. */
EvValue *ev_attr_value(EvCtx *c, const char *name)
{
    const IrAttr *a = ev_attr(c, name);
    if (!a || !a->t) {
        ev_fail(c, "attribute '%s' is not a tensor", name);
        return NULL;
    }
    return ev_attr_tensor(c, name);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------- */

/* Output 0: x's elements under new dims (the value owns its data, so
 * the buffer is copied once). */
static int ev_out_reshaped(EvCtx *c, const EvValue *x, size_t rank,
                           const int64_t *dims)
{
    EvValue *y = ev_out_tensor_raw(c, 0, x->dtype, rank, dims);   /* all copied below */
    if (!y)
        return -1;
    if (y->numel != x->numel)
        return ev_fail(c, "cannot reshape %zu elements into %zu", x->numel,
                       y->numel);
    ev_copy_all(y, x);
    return 0;
}

static int ev_reshape(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    const int64_t *shape;
    size_t n;
    if (c->ver < 5) {
        if (ev_attr_list(c, "shape", true, &shape, &n) < 0)
            return -1;
    } else if (ev_ints(c, 1, &shape, &n) < 0) {
        return -1;
    }
    bool allowzero = c->ver >= 14 && ev_attr_i(c, "allowzero") != 0;
    if (n > EV_MAX_RANK)
        return ev_fail(c, "shape has %zu dims", n);
    int64_t dims[EV_MAX_RANK];
    size_t infer = n, known = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t s = shape[i];
        if (s == 0 && !allowzero) {
            if (i >= x->rank)
                return ev_fail(c, "shape[%zu] = 0 copies a dim the input "
                               "lacks", i);
            s = x->dims[i];
        } else if (s == -1) {
            if (infer != n)
                return ev_fail(c, "shape has more than one -1");
            infer = i;
            dims[i] = 1;
            continue;
        } else if (s < 0) {
            return ev_fail(c, "shape[%zu] = %lld", i, (long long)s);
        }
        dims[i] = s;
        if (!mem_mul_size(known, (size_t)s, &known))
            return ev_fail(c, "shape overflows");
    }
    if (infer != n) {
        if (!known || x->numel % known)
            return ev_fail(c, "cannot infer the -1 of shape for %zu "
                           "elements", x->numel);
        dims[infer] = (int64_t)(x->numel / known);
    }
    return ev_out_reshaped(c, x, n, dims);
}

/* Product of dims[from, to) with overflow checking. */
static int ev_prod(EvCtx *c, const int64_t *dims, size_t from, size_t to,
                   int64_t *out)
{
    int64_t p = 1;
    for (size_t i = from; i < to; i++)
        if (ev_mul_dim(c, p, dims[i], &p) < 0)
            return -1;
    *out = p;
    return 0;
}

static int ev_flatten(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    /* axis lies in [-r, r]; a negative one counts from r (ev_axis's
     * `extra` would count it from r + 1) */
    int64_t r = (int64_t)x->rank, axis = ev_attr_i(c, "axis");
    if (axis < -r || axis > r)
        return ev_fail(c, "axis %lld is out of range for rank %lld",
                       (long long)axis, (long long)r);
    size_t a = (size_t)(axis < 0 ? axis + r : axis);
    int64_t dims[2];
    if (ev_prod(c, x->dims, 0, a, &dims[0]) < 0 ||
        ev_prod(c, x->dims, a, x->rank, &dims[1]) < 0)
        return -1;
    return ev_out_reshaped(c, x, 2, dims);
}

/* Axes of Squeeze/Unsqueeze: an attribute before 13, an input after. */
static int ev_axes_arg(EvCtx *c, bool required, const int64_t **axes,
                       size_t *n)
{
    if (c->ver < 13)
        return ev_attr_list(c, "axes", required, axes, n);
    if (required)
        return ev_ints(c, 1, axes, n) < 0 ? -1 : 1;
    return ev_ints_opt(c, 1, axes, n);
}

static int ev_squeeze(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    const int64_t *axes;
    size_t n;
    if (ev_axes_arg(c, false, &axes, &n) < 0)
        return -1;
    bool drop[EV_MAX_RANK] = {false};
    if (x->rank > EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    if (n) {
        if (ev_mark_axes(c, axes, n, x->rank, drop, NULL) < 0)
            return -1;
        for (size_t i = 0; i < x->rank; i++)
            if (drop[i] && x->dims[i] != 1)
                return ev_fail(c, "cannot squeeze axis %zu of size %lld", i,
                               (long long)x->dims[i]);
    } else {
        /* no axes (or an empty list): every dim of 1 goes */
        for (size_t i = 0; i < x->rank; i++)
            drop[i] = x->dims[i] == 1;
    }
    int64_t dims[EV_MAX_RANK];
    size_t r = 0;
    for (size_t i = 0; i < x->rank; i++)
        if (!drop[i])
            dims[r++] = x->dims[i];
    return ev_out_reshaped(c, x, r, dims);
}

static int ev_unsqueeze(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    const int64_t *axes;
    size_t n;
    if (ev_axes_arg(c, true, &axes, &n) < 0)
        return -1;
    if (x->rank > EV_MAX_RANK || n > EV_MAX_RANK - x->rank)
        return ev_fail(c, "output rank above %d", EV_MAX_RANK);
    size_t r = x->rank + n;
    bool ins[EV_MAX_RANK] = {false};
    if (ev_mark_axes(c, axes, n, r, ins, NULL) < 0)
        return -1;
    int64_t dims[EV_MAX_RANK];
    for (size_t i = 0, k = 0; i < r; i++)
        dims[i] = ins[i] ? 1 : x->dims[k++];
    return ev_out_reshaped(c, x, r, dims);
}

/* ---- Transpose, Concat, Split ---------------------------------------- */

static int ev_transpose(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t r = x->rank;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    const int64_t *perm;
    size_t n;
    size_t p[EV_MAX_RANK];
    bool seen[EV_MAX_RANK] = {false};
    if (ev_attr_list(c, "perm", false, &perm, &n)) {
        if (n != r)
            return ev_fail(c, "perm has %zu entries for rank %zu", n, r);
        if (ev_mark_axes(c, perm, n, r, seen, p) < 0)
            return -1;
    } else {
        for (size_t i = 0; i < r; i++)
            p[i] = r - 1 - i;
    }
    int64_t dims[EV_MAX_RANK], xs[EV_MAX_RANK];
    ev_istrides(r, x->dims, xs);
    for (size_t i = 0; i < r; i++)
        dims[i] = x->dims[p[i]];
    EvValue *y = ev_out_tensor_raw(c, 0, x->dtype, r, dims);   /* a permutation: all written */
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    EvView v;
    ev_view_init(&v, r, dims);
    for (size_t i = 0; i < r; i++)
        v.ss[i] = xs[p[i]];
    ev_view_copy(y, x, &v);
    return 0;
}

enum { EV_CONCAT_PAR = 256 };

typedef struct EvConcatJob {
    const EvCtx *c;
    EvValue *y;
    size_t axis;
    int64_t ys[EV_MAX_RANK];
    int64_t at[EV_CONCAT_PAR];   /* where input i starts on the axis */
} EvConcatJob;

/* Copies input i into y from position `at` of the axis on. */
static void ev_concat_one(const EvConcatJob *j, size_t i, int64_t at)
{
    const EvValue *x = j->c->in[i];
    size_t r = x->rank;
    EvView v;
    ev_view_init(&v, r, x->dims);
    memcpy(v.ss, v.ds, r * sizeof *v.ss);
    memcpy(v.ds, j->ys, r * sizeof *v.ds);
    v.doff = at * j->ys[j->axis];
    ev_view_copy(j->y, x, &v);
}

static void ev_concat_task(void *ctx, size_t t, size_t worker)
{
    const EvConcatJob *j = ctx;
    ev_concat_one(j, t, j->at[t]);
}

static int ev_concat(EvCtx *c)
{
    if (!c->n_in)
        return ev_fail(c, "no inputs");
    if (c->ver >= 4 && !ev_attr(c, "axis"))
        return ev_fail(c, "attribute 'axis' is missing");
    EvValue *x0 = ev_in_tensor(c, 0);
    if (!x0)
        return -1;
    size_t r = x0->rank, a;
    if (!r || r > EV_MAX_RANK)
        return ev_fail(c, "cannot concatenate tensors of rank %zu", r);
    if (ev_axis(c, "axis", ev_attr_i_or(c, "axis", 1), r, 0, &a) < 0)
        return -1;
    int64_t dims[EV_MAX_RANK];
    memcpy(dims, x0->dims, r * sizeof *dims);
    dims[a] = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        EvValue *x = ev_in_tensor(c, i);
        if (!x)
            return -1;
        if (x->dtype != x0->dtype || x->rank != r)
            return ev_fail(c, "input %zu differs in type or rank", i);
        for (size_t k = 0; k < r; k++)
            if (k != a && x->dims[k] != dims[k])
                return ev_fail(c, "input %zu differs in dim %zu", i, k);
        if (x->dims[a] > INT64_MAX - dims[a])
            return ev_fail(c, "concatenated dim overflows");
        dims[a] += x->dims[a];
    }
    /* every element is some input's (strings still start empty) */
    EvValue *y = ev_out_tensor_raw(c, 0, x0->dtype, r, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    EvConcatJob j = {c, y, a, {0}, {0}};
    ev_istrides(r, dims, j.ys);
    int64_t at = 0;
    for (size_t i = 0; i < c->n_in && i < EV_CONCAT_PAR; i++) {
        j.at[i] = at;
        at += c->in[i]->dims[a];
    }
    /* the inputs' copies go to disjoint parts of y: one task each when
     * there are few enough and they are worth a thread (densenet's
     * concats of every earlier layer were its largest serial part) */
    bool par = c->n_in <= EV_CONCAT_PAR && x0->dtype != IR_STRING &&
               y->numel >= 4 * (size_t)EV_PAR_GRAIN;
    if (par) {
        ev_parallel(ev_ctx_threads(c), c->n_in, ev_concat_task, &j);
        return 0;
    }
    at = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        ev_concat_one(&j, i, at);
        at += c->in[i]->dims[a];
    }
    return 0;
}

/* The split sizes: from the input (1 and 13+) or attribute (1..12), from
 * num_outputs (18+), or equal parts over the outputs. */
static int ev_split_sizes(EvCtx *c, int64_t dim, int64_t *sz)
{
    size_t nout = c->n_out, n = 0;
    const int64_t *split = NULL;
    int got = 0;
    if (c->ver == 1 && ev_in(c, 1)) {
        /* Split-1's split input has the data's (float) type */
        if (!(split = ev_in_ints(c, 1, &n)))
            return -1;
        got = 1;
    } else if (c->ver >= 13) {
        got = ev_ints_opt(c, 1, &split, &n);
    }
    if (!got && c->ver < 13)
        got = ev_attr_list(c, "split", false, &split, &n);
    if (got < 0)
        return -1;
    if (got) {
        if (c->ver >= 18 && ev_attr(c, "num_outputs"))
            return ev_fail(c, "both 'split' and 'num_outputs' are given");
        if (n != nout)
            return ev_fail(c, "split has %zu entries for %zu outputs", n,
                           nout);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (split[i] < 0 || split[i] > dim - sum)
                return ev_fail(c, "split sizes do not add up to %lld",
                               (long long)dim);
            sz[i] = split[i];
            sum += split[i];
        }
        if (sum != dim)
            return ev_fail(c, "split sizes do not add up to %lld",
                           (long long)dim);
        return 0;
    }
    if (c->ver >= 18 && ev_attr(c, "num_outputs")) {
        int64_t k = ev_attr_i_or(c, "num_outputs", 0);
        if (k < 1 || (uint64_t)k != nout)
            return ev_fail(c, "num_outputs %lld for %zu outputs",
                           (long long)k, nout);
        int64_t chunk = dim / k + (dim % k != 0);
        if (chunk && k - 1 > dim / chunk)
            return ev_fail(c, "cannot split %lld into %lld parts",
                           (long long)dim, (long long)k);
        for (size_t i = 0; i < nout; i++)
            sz[i] = chunk;
        sz[nout - 1] = dim - chunk * (k - 1);
        return 0;
    }
    if (dim % (int64_t)nout)
        return ev_fail(c, "dim %lld does not split into %zu equal parts",
                       (long long)dim, nout);
    for (size_t i = 0; i < nout; i++)
        sz[i] = dim / (int64_t)nout;
    return 0;
}

static int ev_split(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t r = x->rank, a;
    if (!c->n_out)
        return ev_fail(c, "no outputs");
    if (!r || r > EV_MAX_RANK)
        return ev_fail(c, "cannot split a tensor of rank %zu", r);
    if (ev_axis(c, "axis", ev_attr_i_or(c, "axis", 0), r, 0, &a) < 0)
        return -1;
    int64_t *sz = ev_tmp(c, c->n_out, sizeof *sz);
    if (!sz || ev_split_sizes(c, x->dims[a], sz) < 0)
        return -1;
    int64_t xs[EV_MAX_RANK], dims[EV_MAX_RANK], at = 0;
    ev_istrides(r, x->dims, xs);
    memcpy(dims, x->dims, r * sizeof *dims);
    for (size_t i = 0; i < c->n_out; i++) {
        dims[a] = sz[i];
        if (ev_has_out(c, i)) {
            EvValue *y = ev_out_tensor(c, i, x->dtype, r, dims);
            if (!y)
                return -1;
            if (!y->numel)
                goto next;
            EvView v;
            ev_view_init(&v, r, dims);
            memcpy(v.ss, xs, r * sizeof *v.ss);
            v.soff = at * xs[a];
            ev_view_copy(y, x, &v);
        }
    next:
        at += sz[i];
    }
    return 0;
}

/* ---- Slice, Expand, Tile --------------------------------------------- */

/* Output length along one axis and the clamped start, per Slice-10's
 * rules (Slice-1's are the same with step 1). */
static int64_t ev_slice_len(int64_t dim, int64_t start, int64_t end,
                            int64_t step, int64_t *first)
{
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    *first = 0;
    if (!dim)
        return 0;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        *first = start;
        if (end <= start)
            return 0;
        return (int64_t)((uint64_t)(end - start - 1) / (uint64_t)step + 1);
    }
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    *first = start;
    if (start <= end)
        return 0;
    uint64_t ustep = (uint64_t)0 - (uint64_t)step;
    return (int64_t)((uint64_t)(start - end - 1) / ustep + 1);
}

/* starts/ends/axes/steps: attributes in Slice-1, inputs from 10. */
static int ev_slice_args(EvCtx *c, const int64_t **st, const int64_t **en,
                         const int64_t **ax, const int64_t **sp, size_t *n)
{
    size_t ne, na, ns;
    int hasax, hassp = 0;
    *sp = NULL;
    if (c->ver < 10) {
        if (ev_attr_list(c, "starts", true, st, n) < 0 ||
            ev_attr_list(c, "ends", true, en, &ne) < 0)
            return -1;
        hasax = ev_attr_list(c, "axes", false, ax, &na);
    } else {
        if (ev_ints(c, 1, st, n) < 0 || ev_ints(c, 2, en, &ne) < 0)
            return -1;
        hasax = ev_ints_opt(c, 3, ax, &na);
        if (hasax < 0 || (hassp = ev_ints_opt(c, 4, sp, &ns)) < 0)
            return -1;
    }
    if (ne != *n || (hasax && na != *n) || (hassp && ns != *n))
        return ev_fail(c, "starts, ends, axes and steps differ in length");
    if (!hasax)
        *ax = NULL;
    if (!hassp)
        *sp = NULL;
    return 0;
}

static int ev_slice(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t r = x->rank, n;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    const int64_t *st, *en, *ax, *sp;
    if (ev_slice_args(c, &st, &en, &ax, &sp, &n) < 0)
        return -1;
    if (n > r)
        return ev_fail(c, "%zu slice axes for rank %zu", n, r);
    int64_t dims[EV_MAX_RANK], first[EV_MAX_RANK] = {0}, step[EV_MAX_RANK];
    bool seen[EV_MAX_RANK] = {false};
    memcpy(dims, x->dims, r * sizeof *dims);
    for (size_t a = 0; a < r; a++)
        step[a] = 1;
    for (size_t i = 0; i < n; i++) {
        size_t a = i;
        if (ax && ev_axis(c, "axes", ax[i], r, 0, &a) < 0)
            return -1;
        if (seen[a])
            return ev_fail(c, "axis %zu is sliced twice", a);
        seen[a] = true;
        step[a] = sp ? sp[i] : 1;
        if (!step[a])
            return ev_fail(c, "steps must not be 0");
        dims[a] = ev_slice_len(x->dims[a], st[i], en[i], step[a], &first[a]);
    }
    EvValue *y = ev_out_tensor(c, 0, x->dtype, r, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    EvView v;
    int64_t xs[EV_MAX_RANK];
    ev_istrides(r, x->dims, xs);
    ev_view_init(&v, r, dims);
    for (size_t a = 0; a < r; a++) {
        v.soff += first[a] * xs[a];
        /* with two or more elements |step| < dim, so the product fits;
         * with one any stride will do */
        v.ss[a] = dims[a] > 1 ? xs[a] * step[a] : xs[a];
    }
    ev_view_copy(y, x, &v);
    return 0;
}

static int ev_expand(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    const int64_t *shape;
    size_t n;
    if (ev_ints(c, 1, &shape, &n) < 0)
        return -1;
    size_t r = x->rank > n ? x->rank : n;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "output rank above %d", EV_MAX_RANK);
    int64_t dims[EV_MAX_RANK], ss[EV_MAX_RANK], xs[EV_MAX_RANK];
    ev_istrides(x->rank, x->dims, xs);
    for (size_t i = 0; i < r; i++) {
        size_t xi = i + x->rank - r, si = i + n - r; /* may wrap: checked */
        int64_t a = i >= r - x->rank ? x->dims[xi] : 1;
        int64_t b = i >= r - n ? shape[si] : 1;
        if (b < 0)
            return ev_fail(c, "shape[%zu] = %lld", si, (long long)b);
        if (a != b && a != 1 && b != 1)
            return ev_fail(c, "cannot expand dim %lld to %lld",
                           (long long)a, (long long)b);
        dims[i] = a == 1 ? b : a;
        ss[i] = i >= r - x->rank && a != 1 ? xs[xi] : 0;
    }
    EvValue *y = ev_out_tensor(c, 0, x->dtype, r, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    EvView v;
    ev_view_init(&v, r, dims);
    memcpy(v.ss, ss, r * sizeof *ss);
    ev_view_copy(y, x, &v);
    return 0;
}

/* Repeat counts: one axis in Tile-1 (inputs tiles, axis), all from 6. */
static int ev_tile_repeats(EvCtx *c, size_t r, int64_t *rep)
{
    for (size_t i = 0; i < r; i++)
        rep[i] = 1;
    if (c->ver < 6) {
        int64_t tiles = 0, axis = 0;
        size_t a;
        if (ev_scalar_whole(c, 1, &tiles) < 0 || ev_scalar_whole(c, 2, &axis) < 0)
            return -1;
        if (ev_axis(c, "axis", axis, r, 0, &a) < 0)
            return -1;
        rep[a] = tiles;
    } else {
        const int64_t *v;
        size_t n;
        if (ev_ints(c, 1, &v, &n) < 0)
            return -1;
        if (n != r)
            return ev_fail(c, "repeats has %zu entries for rank %zu", n, r);
        if (n)
            memcpy(rep, v, n * sizeof *v);
    }
    for (size_t i = 0; i < r; i++)
        if (rep[i] < 0)
            return ev_fail(c, "repeats must not be negative");
    return 0;
}

/* Viewing the output as dims (rep0, d0, rep1, d1, ...) with source strides
 * (0, s0, 0, s1, ...) lays the copies out in row-major order. */
static int ev_tile(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t r = x->rank;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    int64_t rep[EV_MAX_RANK], dims[EV_MAX_RANK], xs[EV_MAX_RANK];
    if (ev_tile_repeats(c, r, rep) < 0)
        return -1;
    for (size_t i = 0; i < r; i++)
        if (ev_mul_dim(c, rep[i], x->dims[i], &dims[i]) < 0)
            return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, r, dims);
    if (!y)
        return -1;
    if (!y->numel)
        return 0;
    ev_istrides(r, x->dims, xs);
    int64_t vd[EV_VIEW_MAX];
    for (size_t i = 0; i < r; i++) {
        vd[2 * i] = rep[i];
        vd[2 * i + 1] = x->dims[i];
    }
    EvView v;
    ev_view_init(&v, 2 * r, vd);
    for (size_t i = 0; i < r; i++)
        v.ss[2 * i + 1] = xs[i];
    ev_view_copy(y, x, &v);
    return 0;
}

/* ---- Pad ------------------------------------------------------------- */

/* Per-axis pads: attribute paddings (1) / pads (2..10), input from 11,
 * limited to `axes` from 18. Fills beg/end for every axis. */
static int ev_pad_amounts(EvCtx *c, size_t r, int64_t *beg, int64_t *end)
{
    const int64_t *pads, *axes = NULL;
    size_t n, na = 0;
    int hasax = 0;
    if (c->ver < 11) {
        if (ev_attr_list(c, c->ver < 2 ? "paddings" : "pads", true, &pads,
                         &n) < 0)
            return -1;
    } else if (ev_ints(c, 1, &pads, &n) < 0) {
        return -1;
    }
    if (c->ver >= 18 && (hasax = ev_ints_opt(c, 3, &axes, &na)) < 0)
        return -1;
    size_t k = hasax ? na : r;
    if (n != 2 * k)
        return ev_fail(c, "pads has %zu entries, not %zu", n, 2 * k);
    for (size_t i = 0; i < r; i++)
        beg[i] = end[i] = 0;
    bool seen[EV_MAX_RANK] = {false};
    for (size_t i = 0; i < k; i++) {
        size_t a = i;
        if (hasax && ev_axis(c, "axes", axes[i], r, 0, &a) < 0)
            return -1;
        if (seen[a])
            return ev_fail(c, "axis %zu is padded twice", a);
        seen[a] = true;
        /* bounded so that dim + beg + end cannot overflow */
        for (size_t h = i; h < 2 * k; h += k)
            if (pads[h] > INT64_MAX / 4 || pads[h] < -(INT64_MAX / 4))
                return ev_fail(c, "pads too large");
        beg[a] = pads[i];
        end[a] = pads[i + k];
    }
    return 0;
}

/* The padding value as a one-element tensor of x's type: the `value`
 * attribute before 11, the optional constant_value input after. */
static EvValue *ev_pad_value(EvCtx *c, const EvValue *x, EvValue **own)
{
    *own = NULL;
    if (c->ver >= 11 && ev_in(c, 2)) {
        EvValue *v = ev_in_tensor(c, 2);
        if (!v)
            return NULL;
        if (v->dtype != x->dtype || v->numel != 1) {
            ev_fail(c, "constant_value must be one element of the data's "
                    "type");
            return NULL;
        }
        return v;
    }
    IrError err;
    *own = ev_tensor_new(x->dtype, 0, NULL, &err);
    if (!*own) {
        ev_fail(c, "%s", err.msg);
        return NULL;
    }
    if (c->ver < 11 && x->dtype != IR_STRING)
        ev_set_f(*own, 0, ev_attr_f(c, "value"));
    return *own;
}

/* Source index along an axis of n elements for out-of-range position x. */
static int64_t ev_pad_index(int mode, int64_t x, int64_t n)
{
    if (x >= 0 && x < n)
        return x;
    if (mode == 'e')
        return x < 0 ? 0 : n - 1;
    if (mode == 'w')
        return ((x % n) + n) % n;
    if (n == 1)
        return 0;
    int64_t p = 2 * (n - 1), m = ((x % p) + p) % p;
    return m < n ? m : p - m;
}

/* Reflect, edge and wrap: every output element reads the input through
 * one index map per axis (offsets already multiplied by strides). */
static int ev_pad_gather(EvCtx *c, EvValue *y, const EvValue *x, int mode,
                         const int64_t *beg, const int64_t *end)
{
    size_t r = x->rank;
    int64_t xs[EV_MAX_RANK], *map[EV_MAX_RANK];
    ev_istrides(r, x->dims, xs);
    for (size_t a = 0; a < r; a++) {
        int64_t lo = beg[a] < 0 ? -beg[a] : 0, hi = end[a] < 0 ? -end[a] : 0;
        int64_t n = x->dims[a] - lo - hi, pb = beg[a] > 0 ? beg[a] : 0;
        if (n <= 0)
            return ev_fail(c, "cannot pad an empty axis in this mode");
        map[a] = ev_tmp(c, (size_t)y->dims[a], sizeof *map[a]);
        if (!map[a])
            return -1;
        for (int64_t o = 0; o < y->dims[a]; o++)
            map[a][o] = (lo + ev_pad_index(mode, o - pb, n)) * xs[a];
    }
    if (!r) {
        ev_copy_elems(y, 0, x, 0, 1);
        return 0;
    }
    int64_t idx[EV_MAX_RANK] = {0}, w = y->dims[r - 1];
    size_t k = 0;
    for (;;) {
        int64_t base = 0;
        for (size_t a = 0; a + 1 < r; a++)
            base += map[a][idx[a]];
        for (int64_t j = 0; j < w; j++)
            ev_copy_elems(y, k++, x, (size_t)(base + map[r - 1][j]), 1);
        size_t a = r - 1;
        for (;;) {
            if (!a)
                return 0;
            a--;
            if (++idx[a] < y->dims[a])
                break;
            idx[a] = 0;
        }
    }
}

/* Copies the part of x that survives cropping into a constant-filled y:
 * per axis, x shifted by beg (negative beg/end crop). */
void ev_place(EvValue *y, const EvValue *x, const int64_t *beg,
              const int64_t *end)
{
    size_t r = x->rank;
    EvView v;
    int64_t xs[EV_MAX_RANK], ys[EV_MAX_RANK];
    if (!x->numel || !y->numel)
        return;
    ev_istrides(r, x->dims, xs);
    ev_istrides(r, y->dims, ys);
    memset(&v, 0, sizeof v);
    v.rank = r;
    for (size_t a = 0; a < r; a++) {
        int64_t lo = beg[a] < 0 ? -beg[a] : 0, hi = end[a] < 0 ? -end[a] : 0;
        int64_t n = x->dims[a] - lo - hi;
        v.dims[a] = n > 0 ? n : 0;
        v.soff += lo * xs[a];
        v.doff += (beg[a] > 0 ? beg[a] : 0) * ys[a];
        v.ss[a] = xs[a];
        v.ds[a] = ys[a];
    }
    ev_view_copy(y, x, &v);
}

static int ev_pad(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    if (!x)
        return -1;
    size_t r = x->rank;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "rank too large");
    int64_t beg[EV_MAX_RANK], end[EV_MAX_RANK], dims[EV_MAX_RANK];
    if (ev_pad_amounts(c, r, beg, end) < 0)
        return -1;
    const char *m = ev_attr_s(c, "mode");
    int mode = !strcmp(m, "constant") ? 'c' : !strcmp(m, "reflect") ? 'r'
             : !strcmp(m, "edge") ? 'e'
             : !strcmp(m, "wrap") && c->ver >= 19 ? 'w' : 0;
    if (!mode)
        return ev_fail(c, "unknown mode '%s'", m);
    for (size_t a = 0; a < r; a++) {
        dims[a] = x->dims[a] + beg[a] + end[a];
        if (dims[a] < 0)
            return ev_fail(c, "pads crop axis %zu below 0", a);
    }
    EvValue *own = NULL, *val = NULL;
    if (mode == 'c' && !(val = ev_pad_value(c, x, &own)))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, r, dims);
    if (!y) {
        ev_unref(own);
        return -1;
    }
    if (mode != 'c')
        return y->numel ? ev_pad_gather(c, y, x, mode, beg, end) : 0;
    ev_fill(y, val, 0);
    ev_unref(own);
    ev_place(y, x, beg, end);
    return 0;
}

const EvOp ev_ops_shape[] = {
    {"", "Reshape", ev_reshape},
    {"", "Flatten", ev_flatten},
    {"", "Squeeze", ev_squeeze},
    {"", "Unsqueeze", ev_unsqueeze},
    {"", "Transpose", ev_transpose},
    {"", "Concat", ev_concat},
    {"", "Split", ev_split},
    {"", "Slice", ev_slice},
    {"", "Expand", ev_expand},
    {"", "Tile", ev_tile},
    {"", "Pad", ev_pad},
    {NULL, NULL, NULL}
};
