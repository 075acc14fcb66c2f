/*
 * infer/nn.c - inference of the neural-network ops: convolutions and
 * pooling (window arithmetic with pads, strides, dilations, auto_pad and
 * ceil_mode), RoiAlign, MaxRoiPool, MaxUnpool, Dropout, Gemm, MatMul,
 * CausalConvWithState and Col2Im. Conv's and MatMul's functions also
 * serve their integer and quantized forms (quant.c's table).
 * Element types mostly come from the generic step; the functions here set
 * shapes.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* Spatial ranks beyond this are left unknown (no real model has them). */
#define INF_MAX_SPATIAL 16

/* ---- small helpers ------------------------------------------------- */

/* a + b without overflow; false when it would overflow. */
static bool inf_add64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* a - b without overflow. */
static bool inf_sub64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_sub_overflow(a, b, r);
}

/* a * b without overflow. */
static bool inf_mul64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

/* ---- window arithmetic (conv and pool) ----------------------------- */

enum { INF_PAD_NOTSET, INF_PAD_VALID, INF_PAD_SAME_UPPER, INF_PAD_SAME_LOWER };

/* The per-spatial-axis parameters of a sliding window. */
typedef struct InfWin {
    size_t n;                        /* spatial rank */
    bool k_known[INF_MAX_SPATIAL];
    int64_t k[INF_MAX_SPATIAL];      /* kernel */
    int64_t s[INF_MAX_SPATIAL];      /* strides */
    int64_t d[INF_MAX_SPATIAL];      /* dilations */
    int64_t pb[INF_MAX_SPATIAL];     /* pads at the beginning */
    int64_t pe[INF_MAX_SPATIAL];     /* pads at the end */
    int mode;                        /* INF_PAD_* */
    bool ceil;                       /* ceil_mode */
} InfWin;

/* Reads INTS attribute `name` of exactly n values >= min into out, or
 * fills dflt when absent. -1 (failed) on a wrong count or value. */
static int inf_win_ints(InfCtx *c, const char *name, size_t n, int64_t min,
                        int64_t dflt, int64_t *out)
{
    const int64_t *v;
    long cnt = inf_attr_ints(c, name, &v);
    if (cnt <= 0) {
        /* absent, or an empty list some exporters write: the default */
        for (size_t k = 0; k < n; k++)
            out[k] = dflt;
        return 0;
    }
    if ((size_t)cnt != n)
        return inf_fail(c, "attribute", "'%s' has %ld values for %zu spatial axes",
                        name, cnt, n);
    for (size_t k = 0; k < n; k++) {
        if (v[k] < min)
            return inf_fail(c, "attribute", "'%s' value %lld is below %lld", name,
                            (long long)v[k], (long long)min);
        out[k] = v[k];
    }
    return 0;
}

/* The auto_pad attribute as INF_PAD_*, or -1 (failed) for an unknown one. */
static int inf_auto_pad(InfCtx *c, int *mode)
{
    const char *s = inf_attr_s(c, "auto_pad");
    if (!s || !s[0] || strcmp(s, "NOTSET") == 0)
        *mode = INF_PAD_NOTSET;
    else if (strcmp(s, "VALID") == 0)
        *mode = INF_PAD_VALID;
    else if (strcmp(s, "SAME_UPPER") == 0)
        *mode = INF_PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0)
        *mode = INF_PAD_SAME_LOWER;
    else
        return inf_fail(c, "attribute", "auto_pad '%s' is not NOTSET, VALID, "
                        "SAME_UPPER or SAME_LOWER", s);
    return 0;
}

/* Reads the window of n spatial axes: kernel from kernel_shape, else from
 * the weight's dims 2.. (w may be NULL). Returns 0, 1 when the window
 * cannot be read (leave the output unknown), or -1 (failed). */
static int inf_win_read(InfCtx *c, size_t n, const IrShape *w, InfWin *win)
{
    memset(win, 0, sizeof *win);
    if (n > INF_MAX_SPATIAL)
        return 1;
    win->n = n;
    const int64_t *ks;
    long cnt = inf_attr_ints(c, "kernel_shape", &ks);
    if (cnt > 0) {
        if ((size_t)cnt != n)
            return inf_fail(c, "attribute", "'kernel_shape' has %ld values for %zu "
                            "spatial axes", cnt, n);
        for (size_t k = 0; k < n; k++) {
            if (ks[k] < 1)
                return inf_fail(c, "attribute", "'kernel_shape' value %lld is not "
                                "positive", (long long)ks[k]);
            win->k[k] = ks[k];
            win->k_known[k] = true;
        }
    } else if (w && w->rank == n + 2) {
        for (size_t k = 0; k < n; k++) {
            const IrDim *d = &w->dims[k + 2];
            win->k_known[k] = inf_dim_known(d) && d->value >= 1;
            win->k[k] = win->k_known[k] ? d->value : 0;
        }
    }
    if (inf_win_ints(c, "strides", n, 1, 1, win->s) < 0 ||
        inf_win_ints(c, "dilations", n, 1, 1, win->d) < 0)
        return -1;
    const int64_t *p;
    cnt = inf_attr_ints(c, "pads", &p);
    if (cnt > 0) {
        if ((size_t)cnt != 2 * n)
            return inf_fail(c, "attribute", "'pads' has %ld values for %zu spatial "
                            "axes (needs %zu)", cnt, n, 2 * n);
        for (size_t k = 0; k < n; k++) {
            win->pb[k] = p[k];
            win->pe[k] = p[k + n];
        }
    }
    if (inf_auto_pad(c, &win->mode) < 0)
        return -1;
    win->ceil = inf_attr_i(c, "ceil_mode") != 0;
    return 0;
}

/* The effective kernel extent (k-1)*d+1 of axis i; false on overflow. */
static bool inf_win_extent(const InfWin *w, size_t i, int64_t *eff)
{
    int64_t t;
    return inf_mul64(w->k[i] - 1, w->d[i], &t) && inf_add64(t, 1, eff);
}

/* Output extent of spatial axis i of a conv or pool for input dim `in`.
 * -1 (failed) when the padded input is smaller than the window. */
static int inf_win_dim(InfCtx *c, const InfWin *w, size_t i, const IrDim *in,
                       IrDim *out)
{
    int64_t eff, s = w->s[i];
    inf_dim_unknown(out);
    if (!w->k_known[i] || !inf_win_extent(w, i, &eff))
        return 0;
    if (w->mode == INF_PAD_SAME_UPPER || w->mode == INF_PAD_SAME_LOWER) {
        if (inf_dim_known(in))
            inf_dim_set(out, in->value / s + (in->value % s != 0));
        else if (s == 1)
            inf_dim_copy(out, in);
        return 0;
    }
    int64_t pb = w->mode == INF_PAD_VALID ? 0 : w->pb[i];
    int64_t pe = w->mode == INF_PAD_VALID ? 0 : w->pe[i];
    bool ceil = w->ceil && w->mode == INF_PAD_NOTSET;
    int64_t total, num, o;
    if (!inf_add64(pb, pe, &total))
        return 0;
    if (!inf_dim_known(in)) {
        /* out = in exactly when stride 1 and the pads cover the window */
        if (s == 1 && total == eff - 1)
            inf_dim_copy(out, in);
        return 0;
    }
    if (!inf_add64(in->value, total, &num) || !inf_sub64(num, eff, &num))
        return 0;
    if (num < 0)
        return inf_fail(c, "shape", "spatial axis %zu: padded input %lld is smaller "
                        "than the window %lld", i, (long long)(in->value + total),
                        (long long)eff);
    o = num / s + 1;
    if (ceil && num % s != 0) {
        o++;
        /* the last window must start inside the input or its left pad */
        int64_t start, limit;
        if (!inf_mul64(o - 1, s, &start) ||
            (inf_add64(in->value, pb, &limit) && start >= limit))
            o--;
    }
    inf_dim_set(out, o);
    return 0;
}

/* Conv-like ops: X [N, C, D...] and W [M, C/group, k...] give
 * [N, M, O...]. xi and wi are the input positions of X and W. */
int inf_conv_at(InfCtx *c, size_t xi, size_t wi)
{
    const IrShape *x = inf_in_shape(c, xi), *w = inf_in_shape(c, wi);
    if (!x && w && w->rank >= 2) {
        /* the output has the weight's rank and M channels */
        IrShape *o = inf_out_shape(c, 0, w->rank);
        if (o)
            inf_dim_copy(&o->dims[1], &w->dims[0]);
        return 0;
    }
    if (!x)
        return 0;
    if (x->rank < 2)
        return inf_fail(c, "rank", "input has rank %zu; needs N, C and spatial axes",
                        x->rank);
    if (w && w->rank != x->rank)
        return inf_fail(c, "rank", "weight has rank %zu, input %zu", w->rank, x->rank);
    int64_t group = inf_attr_i(c, "group");
    if (group < 1)
        return inf_fail(c, "attribute", "group %lld is not positive", (long long)group);
    if (w && inf_dim_known(&x->dims[1]) && inf_dim_known(&w->dims[1])) {
        int64_t need;
        if (inf_mul64(w->dims[1].value, group, &need) && need != x->dims[1].value)
            return inf_fail(c, "shape", "input has %lld channels, weight expects "
                            "%lld x group %lld", (long long)x->dims[1].value,
                            (long long)w->dims[1].value, (long long)group);
    }
    size_t n = x->rank - 2;
    InfWin win;
    int rc = inf_win_read(c, n, w, &win);
    if (rc < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, x->rank);
    if (!o)
        return 0;
    inf_dim_copy(&o->dims[0], &x->dims[0]);
    if (w)
        inf_dim_copy(&o->dims[1], &w->dims[0]);
    for (size_t k = 0; rc == 0 && k < n; k++)
        if (inf_win_dim(c, &win, k, &x->dims[k + 2], &o->dims[k + 2]) < 0)
            return -1;
    return 0;
}

/* Conv, ConvInteger: X is input 0, W input 1. */
int inf_conv(InfCtx *c) { return inf_conv_at(c, 0, 1); }

/* ConvTranspose: X [N, C, D...], W [C, M/group, k...] give
 * [N, M, O...] with O from output_shape, or
 * stride*(D-1) + output_padding + (k-1)*dilation + 1 - pads
 * (D*stride with SAME_*). */
static int inf_convtranspose(InfCtx *c)
{
    const IrShape *x = inf_in_shape(c, 0), *w = inf_in_shape(c, 1);
    if (!x)
        return 0;
    if (x->rank < 2)
        return inf_fail(c, "rank", "input has rank %zu; needs N, C and spatial axes",
                        x->rank);
    if (w && w->rank != x->rank)
        return inf_fail(c, "rank", "weight has rank %zu, input %zu", w->rank, x->rank);
    int64_t group = inf_attr_i(c, "group");
    if (group < 1)
        return inf_fail(c, "attribute", "group %lld is not positive", (long long)group);
    if (w && inf_dim_differ(&x->dims[1], &w->dims[0]))
        return inf_fail(c, "shape", "input has %lld channels, weight %lld",
                        (long long)x->dims[1].value, (long long)w->dims[0].value);
    size_t n = x->rank - 2;
    InfWin win;
    int rc = inf_win_read(c, n, w, &win);
    if (rc < 0)
        return -1;
    int64_t opad[INF_MAX_SPATIAL] = {0};
    if (rc == 0 && inf_win_ints(c, "output_padding", n, 0, 0, opad) < 0)
        return -1;
    const int64_t *os;
    long nos = inf_attr_ints(c, "output_shape", &os);
    bool has_os = nos > 0;
    IrShape *o = inf_out_shape(c, 0, x->rank);
    if (!o)
        return 0;
    inf_dim_copy(&o->dims[0], &x->dims[0]);
    if (w)
        inf_dim_mul(&o->dims[1], &w->dims[1], &(IrDim){.kind = IR_DIM_VALUE, .value = group});
    if (rc != 0)
        return 0;
    for (size_t k = 0; k < n; k++) {
        const IrDim *in = &x->dims[k + 2];
        IrDim *out = &o->dims[k + 2];
        int64_t s = win.s[k], eff, v;
        if (has_os) {
            /* the spatial output extents (another count: left unknown) */
            if ((size_t)nos == n && os[k] >= 0)
                inf_dim_set(out, os[k]);
            continue;
        }
        if (win.mode == INF_PAD_SAME_UPPER || win.mode == INF_PAD_SAME_LOWER) {
            if (inf_dim_known(in) && inf_mul64(in->value, s, &v))
                inf_dim_set(out, v);
            else if (s == 1)
                inf_dim_copy(out, in);
            continue;
        }
        if (!win.k_known[k] || !inf_win_extent(&win, k, &eff))
            continue;
        int64_t pads = 0, extra;
        if (win.mode == INF_PAD_NOTSET && !inf_add64(win.pb[k], win.pe[k], &pads))
            continue;
        /* extra = output_padding + eff - pads: out = s*(in-1) + extra */
        if (!inf_add64(opad[k], eff, &extra) || !inf_sub64(extra, pads, &extra))
            continue;
        if (!inf_dim_known(in)) {
            if (s == 1 && extra == 1)
                inf_dim_copy(out, in);
            continue;
        }
        if (in->value < 1 || !inf_mul64(s, in->value - 1, &v) || !inf_add64(v, extra, &v))
            continue;
        if (v < 0)
            return inf_fail(c, "shape", "spatial axis %zu: output extent %lld is "
                            "negative", k, (long long)v);
        inf_dim_set(out, v);
    }
    return 0;
}

/* DeformConv: like Conv (no auto_pad). */
static int inf_deformconv(InfCtx *c) { return inf_conv_at(c, 0, 1); }

/* AveragePool, MaxPool, LpPool: [N, C, D...] gives [N, C, O...]; MaxPool's
 * Indices has the same shape. */
static int inf_pool(InfCtx *c)
{
    const IrShape *x = inf_in_shape(c, 0);
    if (!x)
        return 0;
    if (x->rank < 2)
        return inf_fail(c, "rank", "input has rank %zu; needs N, C and spatial axes",
                        x->rank);
    size_t n = x->rank - 2;
    InfWin win;
    int rc = inf_win_read(c, n, NULL, &win);
    if (rc < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, x->rank);
    if (!o)
        return 0;
    inf_dim_copy(&o->dims[0], &x->dims[0]);
    inf_dim_copy(&o->dims[1], &x->dims[1]);
    for (size_t k = 0; rc == 0 && k < n; k++)
        if (inf_win_dim(c, &win, k, &x->dims[k + 2], &o->dims[k + 2]) < 0)
            return -1;
    if (inf_has_out(c, 1))
        inf_out_copy(c, 1, o);
    return 0;
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: [N, C, 1, ...]. */
static int inf_global_pool(InfCtx *c)
{
    const IrShape *x = inf_in_shape(c, 0);
    if (!x)
        return 0;
    if (x->rank < 2)
        return inf_fail(c, "rank", "input has rank %zu; needs N and C", x->rank);
    IrShape *o = inf_out_shape(c, 0, x->rank);
    for (size_t k = 0; o && k < x->rank; k++) {
        if (k < 2)
            inf_dim_copy(&o->dims[k], &x->dims[k]);
        else
            inf_dim_set(&o->dims[k], 1);
    }
    return 0;
}

/* MaxUnpool: output_shape input when it is known, else
 * (D-1)*stride + kernel - pads per spatial axis. */
static int inf_maxunpool(InfCtx *c)
{
    const IrShape *x = inf_in_shape(c, 0);
    if (inf_has_in(c, 2)) {
        int64_t *v;
        size_t nv;
        const IrShape *sv = inf_in_symval(c, 2);
        if (inf_in_ints(c, 2, &v, &nv)) {
            IrShape *o = inf_out_shape(c, 0, nv);
            for (size_t k = 0; o && k < nv; k++)
                if (v[k] >= 0)
                    inf_dim_set(&o->dims[k], v[k]);
            free(v);
        } else if (sv) {
            inf_out_copy(c, 0, sv);
        } else if (x) {
            inf_out_shape(c, 0, x->rank);
        }
        return 0;
    }
    if (!x)
        return 0;
    if (x->rank < 2)
        return inf_fail(c, "rank", "input has rank %zu; needs N, C and spatial axes",
                        x->rank);
    size_t n = x->rank - 2;
    InfWin win;
    int rc = inf_win_read(c, n, NULL, &win);
    if (rc < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, x->rank);
    if (!o)
        return 0;
    inf_dim_copy(&o->dims[0], &x->dims[0]);
    inf_dim_copy(&o->dims[1], &x->dims[1]);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const IrDim *in = &x->dims[k + 2];
        int64_t v;
        if (!win.k_known[k] || !inf_dim_known(in) || in->value < 1)
            continue;
        if (inf_mul64(in->value - 1, win.s[k], &v) && inf_add64(v, win.k[k], &v) &&
            inf_sub64(v, win.pb[k], &v) && inf_sub64(v, win.pe[k], &v) && v >= 0)
            inf_dim_set(&o->dims[k + 2], v);
    }
    return 0;
}

/* MaxRoiPool: X [N, C, H, W], rois [R, 5] give [R, C, ph, pw]. */
static int inf_maxroipool(InfCtx *c)
{
    const int64_t *ps;
    long n = inf_attr_ints(c, "pooled_shape", &ps);
    if (n >= 0 && inf_attr_has(c, "pooled_shape") && n != 2)
        return inf_fail(c, "attribute", "'pooled_shape' has %ld values, needs 2", n);
    if (inf_need_rank(c, 0, 4, "X") < 0 || inf_need_rank(c, 1, 2, "rois") < 0)
        return -1;
    const IrShape *x = inf_in_shape(c, 0), *r = inf_in_shape(c, 1);
    IrShape *o = inf_out_shape(c, 0, 4);
    if (!o)
        return 0;
    if (r)
        inf_dim_copy(&o->dims[0], &r->dims[0]);
    if (x)
        inf_dim_copy(&o->dims[1], &x->dims[1]);
    for (int k = 0; n == 2 && k < 2; k++)
        if (ps[k] >= 0)
            inf_dim_set(&o->dims[2 + k], ps[k]);
    return 0;
}

/* RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] give
 * [R, C, output_height, output_width]. */
static int inf_roialign(InfCtx *c)
{
    if (inf_need_rank(c, 0, 4, "X") < 0 || inf_need_rank(c, 1, 2, "rois") < 0 ||
        inf_need_rank(c, 2, 1, "batch_indices") < 0)
        return -1;
    const IrShape *x = inf_in_shape(c, 0), *r = inf_in_shape(c, 1),
                  *b = inf_in_shape(c, 2);
    IrShape *o = inf_out_shape(c, 0, 4);
    if (!o)
        return 0;
    if (r && r->rank == 2)
        inf_dim_copy(&o->dims[0], &r->dims[0]);
    else if (b && b->rank == 1)
        inf_dim_copy(&o->dims[0], &b->dims[0]);
    if (x)
        inf_dim_copy(&o->dims[1], &x->dims[1]);
    int64_t h = inf_attr_i(c, "output_height"), w = inf_attr_i(c, "output_width");
    if (h >= 0)
        inf_dim_set(&o->dims[2], h);
    if (w >= 0)
        inf_dim_set(&o->dims[3], w);
    return 0;
}

/* ---- Dropout ------------------------------------------------------- */

/* Dropout: output and mask shaped like the input (the mask's type: T
 * before opset 10, bool after, both from the schema). Before opset 7,
 * is_test set means the mask is not filled: its shape stays unknown. */
static int inf_dropout(InfCtx *c)
{
    inf_out_shape_of(c, 0, 0);
    if (c->since >= 7 || inf_attr_i(c, "is_test") == 0)
        inf_out_shape_of(c, 1, 0);
    return 0;
}

/* ---- matrix products ----------------------------------------------- */

/* Gemm: A [M, K] (transA: [K, M]) and B [K, N] (transB: [N, K]) give
 * [M, N]. */
static int inf_gemm(InfCtx *c)
{
    if (inf_need_rank(c, 0, 2, "A") < 0 || inf_need_rank(c, 1, 2, "B") < 0)
        return -1;
    const IrShape *a = inf_in_shape(c, 0), *b = inf_in_shape(c, 1);
    bool ta = inf_attr_i(c, "transA") != 0, tb = inf_attr_i(c, "transB") != 0;
    if (a && b && inf_dim_differ(&a->dims[ta ? 0 : 1], &b->dims[tb ? 1 : 0]))
        return inf_fail(c, "shape", "inner dimensions %lld and %lld differ",
                        (long long)a->dims[ta ? 0 : 1].value,
                        (long long)b->dims[tb ? 1 : 0].value);
    if (!a && !b)
        return 0;
    IrShape *o = inf_out_shape(c, 0, 2);
    if (!o)
        return 0;
    if (a)
        inf_dim_copy(&o->dims[0], &a->dims[ta ? 1 : 0]);
    if (b)
        inf_dim_copy(&o->dims[1], &b->dims[tb ? 0 : 1]);
    return 0;
}

/* MatMul with numpy semantics over inputs ai and bi: 1-D operands are
 * promoted (and the added axis dropped), batch axes broadcast. */
int inf_matmul_at(InfCtx *c, size_t ai, size_t bi)
{
    const IrShape *a = inf_in_shape(c, ai), *b = inf_in_shape(c, bi);
    if ((a && a->rank == 0) || (b && b->rank == 0))
        return inf_fail(c, "rank", "MatMul operands must have rank >= 1");
    if (!a || !b)
        return 0;
    size_t ra = a->rank, rb = b->rank;
    const IrDim *ka = &a->dims[ra - 1];
    const IrDim *kb = &b->dims[rb == 1 ? 0 : rb - 2];
    if (inf_dim_differ(ka, kb))
        return inf_fail(c, "shape", "inner dimensions %lld and %lld differ",
                        (long long)ka->value, (long long)kb->value);
    IrShape *ba = inf_sub_shape(a, 0, ra >= 2 ? ra - 2 : 0);
    IrShape *bb = inf_sub_shape(b, 0, rb >= 2 ? rb - 2 : 0);
    const IrShape *parts[2] = {ba, bb};
    IrShape *batch;
    int rc = inf_broadcast(c, parts, 2, &batch);
    ir_shape_free(ba);
    ir_shape_free(bb);
    if (rc < 0)
        return -1;
    size_t rank = batch->rank + (ra >= 2) + (rb >= 2);
    IrShape *o = inf_out_shape(c, 0, rank);
    if (o) {
        size_t k = 0;
        for (; k < batch->rank; k++)
            inf_dim_copy(&o->dims[k], &batch->dims[k]);
        if (ra >= 2)
            inf_dim_copy(&o->dims[k++], &a->dims[ra - 2]);
        if (rb >= 2)
            inf_dim_copy(&o->dims[k], &b->dims[rb - 1]);
    }
    ir_shape_free(batch);
    return 0;
}

/* MatMul, MatMulInteger: A and B are inputs 0 and 1. */
int inf_matmul(InfCtx *c) { return inf_matmul_at(c, 0, 1); }

/* ---- CausalConvWithState ------------------------------------------- */

/* CausalConvWithState (opset 27): output like input [B, C, L];
 * present_state [B, C, k-1] for weight [C, 1, k]. */
static int inf_causalconv(InfCtx *c)
{
    if (inf_need_rank(c, 0, 3, "input") < 0 || inf_need_rank(c, 1, 3, "weight") < 0)
        return -1;
    const IrShape *x = inf_in_shape(c, 0), *w = inf_in_shape(c, 1);
    inf_out_shape_of(c, 0, 0);
    if (!x && !w)
        return 0;
    IrShape *s = inf_out_shape(c, 1, 3);
    if (!s)
        return 0;
    if (x) {
        inf_dim_copy(&s->dims[0], &x->dims[0]);
        inf_dim_copy(&s->dims[1], &x->dims[1]);
    }
    if (w && !inf_dim_known(&s->dims[1]))
        inf_dim_copy(&s->dims[1], &w->dims[0]);
    if (w && inf_dim_known(&w->dims[2]) && w->dims[2].value >= 1)
        inf_dim_set(&s->dims[2], w->dims[2].value - 1);
    return 0;
}

/* ---- Col2Im -------------------------------------------------------- */

/* Col2Im: input [N, C*prod(block), L] with image_shape [n values] and
 * block_shape [n values] gives [N, C, image_shape...]. */
static int inf_col2im(InfCtx *c)
{
    if (inf_need_rank(c, 0, 3, "input") < 0)
        return -1;
    const IrShape *x = inf_in_shape(c, 0), *is = inf_in_shape(c, 1);
    const IrShape *isv = inf_in_symval(c, 1);
    int64_t *img = NULL, *blk = NULL;
    size_t ni = 0, nb = 0;
    bool have_img = inf_in_ints(c, 1, &img, &ni);
    bool have_blk = inf_in_ints(c, 2, &blk, &nb);
    long n = -1;
    if (have_img)
        n = (long)ni;
    else if (isv)
        n = (long)isv->rank;
    else if (is && is->rank == 1 && inf_dim_known(&is->dims[0]))
        n = (long)is->dims[0].value;
    int rc = 0;
    if (have_img && have_blk && ni != nb)
        rc = inf_fail(c, "shape", "image_shape has %zu values, block_shape %zu", ni, nb);
    for (size_t k = 0; rc == 0 && have_blk && k < nb; k++)
        if (blk[k] < 1)
            rc = inf_fail(c, "shape", "block_shape value %lld is not positive",
                          (long long)blk[k]);
    if (rc == 0 && n >= 0 && n <= 64) {
        IrShape *o = inf_out_shape(c, 0, (size_t)n + 2);
        if (o && x) {
            inf_dim_copy(&o->dims[0], &x->dims[0]);
            int64_t prod = 1;
            bool ok = have_blk && nb == (size_t)n;
            for (size_t k = 0; ok && k < nb; k++)
                ok = inf_mul64(prod, blk[k], &prod);
            if (ok)
                inf_dim_div(&o->dims[1], &x->dims[1], prod);
        }
        for (size_t k = 0; o && k < (size_t)n; k++) {
            if (have_img && img[k] >= 0)
                inf_dim_set(&o->dims[k + 2], img[k]);
            else if (!have_img && isv)
                inf_dim_copy(&o->dims[k + 2], &isv->dims[k]);
        }
    }
    free(img);
    free(blk);
    return rc;
}

const InfOp inf_ops_nn[] = {
    {"", "Conv", inf_conv},
    {"", "ConvTranspose", inf_convtranspose},
    {"", "DeformConv", inf_deformconv},
    {"", "AveragePool", inf_pool}, {"", "MaxPool", inf_pool}, {"", "LpPool", inf_pool},
    {"", "GlobalAveragePool", inf_global_pool}, {"", "GlobalMaxPool", inf_global_pool},
    {"", "GlobalLpPool", inf_global_pool},
    {"", "MaxRoiPool", inf_maxroipool}, {"", "MaxUnpool", inf_maxunpool},
    {"", "RoiAlign", inf_roialign},
    {"", "Dropout", inf_dropout},
    {"", "Gemm", inf_gemm}, {"", "MatMul", inf_matmul},
    {"", "Col2Im", inf_col2im},
    {"", "CausalConvWithState", inf_causalconv},
    {NULL, NULL, NULL}};
