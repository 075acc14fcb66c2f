/*
 * nn.c - adapters of the neural-network ops: Conv, ConvTranspose, the
 * pools, Dropout, Gemm, MatMul, Col2Im, DeformConv, CausalConvWithState
 * and RoiAlign.
 *
 * Conv, ConvTranspose and the pools at 11 only reworded their padding
 * text (the SAME_* formula with strides, the defaults of pads, strides
 * and dilations spelled out); ONNX's own converter treats those steps as
 * compatible and so do we.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- helpers -------------------------------------------------------- */

/* Makes output i of c->n a fresh value and gives its old value to output 0
 * of k (a node that computes it from the fresh one, inserted after c->n);
 * returns the fresh value, or NULL with c->err set. */
static IrValue *ad_nn_split_out(AdCtx *c, size_t i, IrNode *k)
{
    char base[200];
    snprintf(base, sizeof base, "%s_out%zu",
             c->n->name && c->n->name[0] ? c->n->name : c->n->op_type, i);
    char *nm = ir_graph_fresh_name(c->g, base);
    const char *outs[1] = {nm};
    IrNode *t = ir_node_new(c->g, c->n, "Identity", NULL, "", 0, NULL, 1, outs, c->err);
    free(nm);
    if (!t) {
        c->refusal = DG_INTERNAL;
        return NULL;
    }
    ir_node_take_output(k, 0, c->n, i);
    ir_node_take_output(c->n, i, t, 0);
    ir_node_delete(t);
    ir_node_set_input(k, 0, c->n->out[i]);
    return c->n->out[i];
}

/* Puts a Cast to `to` behind output i of c->n: the node's own output
 * becomes a fresh value (retyped by inference at the target) and the old
 * value, with its consumers, is now computed by the Cast. */
static int ad_nn_cast_behind(AdCtx *c, size_t i, int64_t to)
{
    IrValue *none[1] = {NULL};
    IrNode *k = ad_node_in(c, c->domain, c->n->next, "Cast", 1, none, 1);
    if (!k)
        return -1;
    ad_set_attr_i(c, k, "to", to);
    if (!ad_nn_split_out(c, i, k))
        return -1;
    if (ad_infer(c, c->n) < 0 || ad_infer(c, k) < 0)
        return -1;
    return 0;
}

/* Drops INTS attribute `name` when it is absent or all ones (the target
 * lacks it and behaves as ones); refuses otherwise. */
static int ad_nn_drop_ones(AdCtx *c, const char *name)
{
    IrAttr *a = ad_attr(c, name);
    if (!a)
        return 0;
    for (size_t i = 0; i < a->n_ints; i++)
        if (a->ints[i] != 1)
            return ad_refuse(c, DG_ATTRIBUTE,
                             "attribute %s has a value other than 1, which the target "
                             "does not have", name);
    ad_drop_attr(c, name);
    return 0;
}

/* ---- pools ---------------------------------------------------------- */

/* The end pads that make a floor-mode pool produce the windows a
 * ceil-mode one does, axis by axis: the ceil grid has one more window when
 * the stride does not divide the padded extent and that window starts
 * inside the input or the begin padding; padding the end by what the
 * window reaches past it gives floor mode the same window. The taps in
 * that padding are ignored by MaxPool, not counted by AveragePool without
 * count_include_pad, and add |0|^p = 0 to LpPool, as past the end they
 * are in ceil mode. Returns 0, or -1 after refusing. */
static int ad_nn_ceil_pads(AdCtx *c, size_t n, int64_t *pads)
{
    const IrType *t = ad_type(ad_in(c, 0));
    IrAttr *ks = ad_attr(c, "kernel_shape"), *st = ad_attr(c, "strides");
    IrAttr *dl = ad_attr(c, "dilations");
    if (!ks || ks->n_ints != n || (st && st->n_ints != n) || (dl && dl->n_ints != n))
        return ad_refuse(c, DG_ATTRIBUTE, "the window attributes do not fit the input");
    for (size_t a = 0; a < n; a++) {
        const IrDim *d = &t->shape->dims[a + 2];
        if (d->kind != IR_DIM_VALUE)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "ceil_mode=1 needs the input's spatial extents");
        int64_t in = d->value, s = st ? st->ints[a] : 1, dil = dl ? dl->ints[a] : 1;
        int64_t span = (ks->ints[a] - 1) * dil + 1;
        int64_t num = in + pads[a] + pads[n + a] - span;
        if (s < 1 || num < 0)
            return ad_refuse(c, DG_ATTRIBUTE, "the window does not fit the input");
        int64_t o = num / s + 1;
        if (num % s != 0 && o * s < in + pads[a])
            o++;
        int64_t e = (o - 1) * s + span - (in + pads[a] + pads[n + a]);
        if (e > 0)
            pads[n + a] += e;
    }
    return 0;
}

static int ad_nn_avgpool_conv(AdCtx *c);

/* AveragePool 10 -> 7, MaxPool 10 -> 8 and LpPool 18 -> 11: ceil_mode
 * added (default 0 = floor). SAME_* and VALID padding give the same grid
 * either way; explicit padding gets the end pads of ad_nn_ceil_pads.
 * AveragePool with count_include_pad would count the extra pads: it
 * becomes the Conv and Div of ad_nn_avgpool_conv, which counts as the
 * pool does. */
static int ad_nn_pool_no_ceil(AdCtx *c)
{
    char buf[32];
    if (ad_attr_i(c, "ceil_mode") == 0 ||
        strcmp(ad_attr_s(c, "auto_pad", buf, sizeof buf), "NOTSET") != 0) {
        ad_drop_attr(c, "ceil_mode");
        return 0;
    }
    if (!strcmp(c->n->op_type, "AveragePool") && ad_attr_i(c, "count_include_pad"))
        return ad_nn_avgpool_conv(c);
    int r = ad_rank(ad_in(c, 0));
    if (r < 3 || r > 10)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of the input is unknown");
    size_t n = (size_t)r - 2;
    int64_t pads[16] = {0};
    IrAttr *p = ad_attr(c, "pads");
    if (p && p->n_ints != 2 * n)
        return ad_refuse(c, DG_ATTRIBUTE, "pads does not fit the input");
    for (size_t i = 0; p && i < 2 * n; i++)
        pads[i] = p->ints[i];
    if (ad_nn_ceil_pads(c, n, pads) < 0)
        return -1;
    ad_set_attr_ints(c, c->n, "pads", 2 * n, pads);
    ad_drop_attr(c, "ceil_mode");
    return 0;
}

/* ---- AveragePool with dilations below 19 ---------------------------- */

/* The window geometry of a pool along its spatial axes, with the input's
 * extents; pads as the pool reads them (SAME_* resolved, VALID zero). */
typedef struct AdPoolGeom {
    size_t n;
    int64_t in[8], k[8], s[8], d[8], pb[8], pe[8], out[8];
} AdPoolGeom;

/* Fills g from c->n (an AveragePool whose input has rank n + 2 and known
 * spatial extents): the output extents the pool computes (ceil_mode's
 * extra window as the evaluator and ONNX's reference count it: only one
 * that starts inside the input or the begin padding). 0, or -1 after
 * refusing. */
static int ad_nn_pool_geom(AdCtx *c, size_t n, AdPoolGeom *g)
{
    IrAttr *ks = ad_attr(c, "kernel_shape"), *st = ad_attr(c, "strides");
    IrAttr *dl = ad_attr(c, "dilations"), *p = ad_attr(c, "pads");
    if (!ks || ks->n_ints != n || (st && st->n_ints != n) || (dl && dl->n_ints != n) ||
        (p && p->n_ints != 2 * n))
        return ad_refuse(c, DG_ATTRIBUTE, "the window attributes do not fit the input");
    char buf[32];
    const char *ap = ad_attr_s(c, "auto_pad", buf, sizeof buf);
    bool same = !strncmp(ap, "SAME_", 5), valid = !strcmp(ap, "VALID");
    bool ceil = ad_attr_i(c, "ceil_mode") != 0 && !same && !valid;
    g->n = n;
    for (size_t a = 0; a < n; a++) {
        g->in[a] = ad_dim(ad_in(c, 0), (int)a + 2);
        g->k[a] = ks->ints[a];
        g->s[a] = st ? st->ints[a] : 1;
        g->d[a] = dl ? dl->ints[a] : 1;
        g->pb[a] = p && !same && !valid ? p->ints[a] : 0;
        g->pe[a] = p && !same && !valid ? p->ints[n + a] : 0;
        if (g->in[a] < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "the Conv that replaces AveragePool needs the input's "
                             "spatial extents to count each window");
        /* bounds that keep every product below far from overflow */
        if (g->k[a] < 1 || g->k[a] > (1 << 20) || g->s[a] < 1 || g->s[a] > (1 << 20) ||
            g->d[a] < 1 || g->d[a] > (1 << 20) || g->in[a] > ((int64_t)1 << 40) ||
            g->pb[a] < 0 || g->pe[a] < 0 || g->pb[a] > (1 << 20) || g->pe[a] > (1 << 20))
            return ad_refuse(c, DG_ATTRIBUTE, "the window attributes are out of range");
        int64_t eff = (g->k[a] - 1) * g->d[a] + 1;
        if (same) {
            g->out[a] = (g->in[a] + g->s[a] - 1) / g->s[a];
            int64_t total = (g->out[a] - 1) * g->s[a] + eff - g->in[a];
            total = total > 0 ? total : 0;
            g->pb[a] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[a] = total - g->pb[a];
            continue;
        }
        int64_t num = g->in[a] + g->pb[a] + g->pe[a] - eff;
        if (num < 0)
            return ad_refuse(c, DG_ATTRIBUTE, "the window does not fit the input");
        g->out[a] = num / g->s[a] + 1;
        if (ceil && num % g->s[a] != 0 && g->out[a] * g->s[a] < g->in[a] + g->pb[a])
            g->out[a]++;
    }
    return 0;
}

/* How many taps of window o along axis a an AveragePool divides by: those
 * inside the input, or (count_include_pad) inside the padded input, not
 * those a ceil_mode window reaches past it. */
static int64_t ad_nn_pool_taps(const AdPoolGeom *g, size_t a, int64_t o, bool with_pad)
{
    int64_t start = o * g->s[a] - g->pb[a], d = g->d[a], k = g->k[a], in = g->in[a];
    if (with_pad) {
        int64_t end = in + g->pe[a] - 1 - start;
        int64_t t = end >= 0 ? end / d + 1 : 0;
        return t < k ? t : k;
    }
    int64_t lo = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t hi = start <= in - 1 ? (in - 1 - start) / d + 1 : 0;
    hi = hi < k ? hi : k;
    return hi > lo ? hi - lo : 0;
}

/* The count of window i (flat index over the output's spatial dims). */
static double ad_nn_pool_count(const AdPoolGeom *g, size_t i, bool with_pad)
{
    double cnt = 1;
    for (size_t a = g->n; a-- > 0;) {
        cnt *= (double)ad_nn_pool_taps(g, a, (int64_t)(i % (size_t)g->out[a]), with_pad);
        i /= (size_t)g->out[a];
    }
    return cnt;
}

/* The divisor of every output position of the pool, as a constant of the
 * input's type: a scalar when every window counts the same (no padding
 * reached, floor mode), else of the output's spatial dims (it broadcasts
 * over N and C). NULL after refusing. */
static IrValue *ad_nn_pool_counts(AdCtx *c, const AdPoolGeom *g, int32_t t)
{
    bool with_pad = ad_attr_i(c, "count_include_pad") != 0;
    size_t total = 1;
    for (size_t a = 0; a < g->n; a++)
        if (!mem_mul_size(total, (size_t)g->out[a], &total) || total > ((size_t)1 << 24)) {
            ad_refuse(c, DG_ATTRIBUTE, "the pool's output is too large to count");
            return NULL;
        }
    double first = total ? ad_nn_pool_count(g, 0, with_pad) : 1;
    size_t i = 1;
    while (i < total && ad_nn_pool_count(g, i, with_pad) == first)
        i++;
    if (i >= total)
        return ad_const_scalar(c, t, first);
    int32_t ct = t == IR_DOUBLE ? IR_DOUBLE : IR_FLOAT;   /* float16 counts are cast from float */
    size_t w = ct == IR_DOUBLE ? 8 : 4;
    uint8_t *buf = mem_array(total, w);
    for (i = 0; i < total; i++) {
        double cnt = ad_nn_pool_count(g, i, with_pad);
        float f = (float)cnt;
        memcpy(buf + i * w, ct == IR_DOUBLE ? (const void *)&cnt : (const void *)&f, w);
    }
    IrValue *v = ad_const_tensor(c, ct, g->n, g->out, buf, total * w);
    free(buf);
    return ad_cast(c, v, t);
}

/* AveragePool as a sum over the (dilated) window divided by a count; the
 * spec leaves a sum's order open, so a depthwise Conv with an all-ones
 * kernel (same kernel_shape, strides, dilations and pads, group = C)
 * followed by a Div by the per-position count (built now from the static
 * input shape) computes it, exact up to that order. ceil_mode becomes
 * extra end pads (zeros, which add nothing to the sum; the count ignores
 * them as AveragePool does). Conv has every attribute used from opset 1. */
static int ad_nn_avgpool_conv(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x);
    int64_t ch = ad_dim(x, 1);
    int32_t t = ad_elem(x);
    if (r < 3 || r > 10 || ch < 1)
        return ad_refuse(c, DG_SHAPE_UNKNOWN,
                         "the Conv that replaces AveragePool needs the input's rank and "
                         "channel count (one group per channel)");
    if (t != IR_FLOAT && t != IR_FLOAT16 && t != IR_DOUBLE)
        return ad_refuse(c, DG_TYPE, "AveragePool of this type has no Conv form");
    size_t n = (size_t)r - 2;
    AdPoolGeom g;
    if (ad_nn_pool_geom(c, n, &g) < 0)
        return -1;
    int64_t wd[10] = {ch, 1}, pads[16];
    size_t wn = (size_t)ch;
    for (size_t a = 0; a < n; a++) {
        wd[a + 2] = g.k[a];
        if (!mem_mul_size(wn, (size_t)g.k[a], &wn) || wn > ((size_t)1 << 24))
            return ad_refuse(c, DG_ATTRIBUTE, "the all-ones kernel would be too large");
        /* a ceil_mode window past the end reads zeros from extra end pads */
        int64_t reach = (g.out[a] - 1) * g.s[a] + (g.k[a] - 1) * g.d[a] + 1;
        int64_t extra = reach - (g.in[a] + g.pb[a] + g.pe[a]);
        pads[a] = g.pb[a];
        pads[n + a] = g.pe[a] + (extra > 0 ? extra : 0);
    }
    IrValue *w = ad_const_fill(c, t, (size_t)r, wd, 1);
    IrValue *cnt = w ? ad_nn_pool_counts(c, &g, t) : NULL;
    IrValue *in[2] = {x, w};
    /* typed once its attributes are set (group 1 does not fit the kernel) */
    IrNode *conv = cnt ? ad_node_in(c, c->domain, c->n, "Conv", 2, in, 1) : NULL;
    if (!conv)
        return -1;
    ad_set_attr_ints(c, conv, "kernel_shape", n, g.k);
    ad_set_attr_ints(c, conv, "strides", n, g.s);
    ad_set_attr_ints(c, conv, "dilations", n, g.d);
    ad_set_attr_ints(c, conv, "pads", 2 * n, pads);
    ad_set_attr_i(c, conv, "group", ch);
    if (ad_infer(c, conv) < 0)
        return -1;
    IrValue *y = ad_op2(c, "Div", conv->out[0], cnt);
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* AveragePool 19 -> 11: dilations added (default ones); other dilations
 * take the Conv form. */
static int ad_nn_avgpool_19_11(AdCtx *c)
{
    IrAttr *dl = ad_attr(c, "dilations");
    bool ones = true;
    for (size_t i = 0; dl && i < dl->n_ints; i++)
        ones &= dl->ints[i] == 1;
    return ones ? ad_nn_drop_ones(c, "dilations") : ad_nn_avgpool_conv(c);
}

/* MaxPool 10 -> 8 and LpPool 18 -> 11: dilations and ceil_mode added
 * together, both with defaults that mean what the older version does;
 * ceil_mode=1 as in ad_nn_pool_no_ceil. */
static int ad_nn_pool_plain(AdCtx *c)
{
    if (ad_nn_drop_ones(c, "dilations") < 0)
        return -1;
    return ad_nn_pool_no_ceil(c);
}

/* Whether the explicit pads of c->n (NOTSET padding) are all zero; *n
 * gets their count. */
static bool ad_nn_pads_zero(const AdCtx *c, size_t *n)
{
    IrAttr *p = ad_attr(c, "pads");
    *n = p ? p->n_ints : 0;
    for (size_t i = 0; p && i < p->n_ints; i++)
        if (p->ints[i] != 0)
            return false;
    return true;
}

/* AveragePool 7 -> 1: version 7 added count_include_pad, whose default 0
 * is what version 1 does (average over the input elements a window
 * covers). A node that counts the padding is rewritten as an explicit
 * zero Pad followed by the pool without padding: the window then sums the
 * same values (the pad zeros) and divides by the whole kernel size, which
 * is what counting the pads means. SAME_* padding depends on the input
 * shape and is refused. */
static int ad_nn_avgpool_7_1(AdCtx *c)
{
    char buf[32];
    const char *ap = ad_attr_s(c, "auto_pad", buf, sizeof buf);
    size_t np;
    bool zero = ad_nn_pads_zero(c, &np);
    if (ad_attr_i(c, "count_include_pad") == 0 || !strcmp(ap, "VALID") ||
        (!strcmp(ap, "NOTSET") && zero)) {
        ad_drop_attr(c, "count_include_pad");
        return 0;
    }
    if (strcmp(ap, "NOTSET") != 0)
        return ad_refuse(c, DG_ATTRIBUTE,
                         "count_include_pad=1 with auto_pad=%s: the padding depends on "
                         "the input shape", ap);
    IrAttr *p = ad_attr(c, "pads");
    size_t sp = np / 2, rank = sp + 2;
    int64_t *full = mem_array(2 * rank, sizeof *full);
    for (size_t i = 0; i < sp; i++) {
        full[2 + i] = p->ints[i];
        full[rank + 2 + i] = p->ints[sp + i];
    }
    IrValue *in[1] = {ad_in(c, 0)};
    IrNode *k = ad_node_in(c, c->domain, c->n, "Pad", 1, in, 1);
    if (k)
        ad_set_attr_ints(c, k, "pads", 2 * rank, full);
    free(full);
    if (!k || ad_infer(c, k) < 0)
        return -1;
    ad_set_input(c, 0, k->out[0]);
    ad_drop_attr(c, "pads");
    ad_drop_attr(c, "count_include_pad");
    return ad_infer(c, c->n);
}

/* MaxPool 8 -> 1: version 8 added the Indices output and storage_order,
 * which only orders the indices. Without Indices the node is the same. */
static int ad_nn_maxpool_8_1(AdCtx *c)
{
    if (ad_named_out(c, 1))
        return ad_refuse(c, DG_SEMANTICS,
                         "the Indices output of MaxPool exists from opset 8");
    ad_trim_outputs(c, 1);
    ad_drop_attr(c, "storage_order");
    return 0;
}

/* LpPool / GlobalLpPool 1 -> 2: p became an INT (default 2, as the FLOAT
 * default 2.0 was). A whole p converts; another one cannot. LpPool 2 also
 * requires kernel_shape. */
static int ad_nn_p_to_int(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "p");
    if (!strcmp(c->n->op_type, "LpPool") && !ad_attr(c, "kernel_shape"))
        return ad_refuse(c, DG_ATTRIBUTE, "LpPool-2 requires kernel_shape");
    if (!a)
        return 0;
    if (!a->has_f || a->f != floorf(a->f) || a->f < 1.0f || a->f > 1e9f)
        return ad_refuse(c, DG_ATTRIBUTE, "p=%g is not a whole number", a->has_f ? a->f : 0.0);
    ir_node_set_attr(c->n, ir_attr_int("p", (int64_t)a->f));
    return 0;
}

/* LpPool / GlobalLpPool 2 -> 1: p back to a FLOAT. */
static int ad_nn_p_to_float(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "p");
    if (!a)
        return 0;
    if (!a->has_i || a->i < 1 || a->i > (1 << 24))
        return ad_refuse(c, DG_ATTRIBUTE, "p=%lld has no FLOAT form",
                         (long long)(a->has_i ? a->i : 0));
    ir_node_set_attr(c->n, ir_attr_float("p", (float)a->i));
    return 0;
}

/* ---- Dropout -------------------------------------------------------- */

/* Dropout 6 -> 7: is_test removed; from 7 the runtime decides the mode,
 * and inference (what a converted model is for) is the identity. A node
 * with is_test=1 is that; is_test=0 (the default) asks for random
 * dropping, which 7 cannot ask for, unless ratio is 0 (nothing dropped,
 * scale 1). */
static int ad_nn_dropout_6_7(AdCtx *c)
{
    if (ad_attr_i(c, "is_test") == 0 && ad_attr_f(c, "ratio") != 0.0f)
        return ad_refuse(c, DG_SEMANTICS,
                         "Dropout with is_test=0 drops at random (training mode), "
                         "which opset 7 cannot ask for");
    ad_drop_attr(c, "is_test");
    return 0;
}

/* Dropout 7 -> 6: the inference a version-7 node means is is_test=1. */
static int ad_nn_dropout_7_6(AdCtx *c)
{
    ad_set_attr_i(c, c->n, "is_test", 1);
    return 0;
}

/* Dropout 7 -> 10: the mask output became bool (it was of the data type,
 * 1 for kept, 0 for dropped); a Cast back to the data type keeps its
 * consumers' type and values. */
static int ad_nn_dropout_7_10(AdCtx *c)
{
    if (!ad_named_out(c, 1))
        return 0;
    int32_t t = ad_elem(ad_in(c, 0));
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of the data is unknown");
    return ad_nn_cast_behind(c, 1, t);
}

/* Dropout 10 -> 7: the mask is of the data type at 7; a Cast to bool keeps
 * the consumers' bool mask (1 -> true, 0 -> false). */
static int ad_nn_dropout_10_7(AdCtx *c)
{
    if (!ad_named_out(c, 1))
        return 0;
    return ad_nn_cast_behind(c, 1, 9);
}

/* Dropout 10 -> 12: ratio moved from an attribute to an optional input and
 * training_mode (default false: inference) was added. The ratio is kept as
 * a constant input so that a training runtime would still see it. */
static int ad_nn_dropout_10_12(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "ratio");
    if (!a)
        return 0;
    if (a->has_f && a->f != 0.5f) {
        IrValue *r = ad_const_scalar(c, IR_FLOAT, a->f);
        if (!r)
            return -1;
        ad_set_input(c, 1, r);
    }
    ad_drop_attr(c, "ratio");
    return 0;
}

/* Dropout 12 -> 10: version 10 has no training_mode; its node is the
 * inference identity. training_mode absent or constant false is that, and
 * so is training with a constant ratio of 0 (nothing dropped, scale 1).
 * A constant ratio goes back to the attribute; seed only matters for
 * training. */
static int ad_nn_dropout_12_10(AdCtx *c)
{
    IrValue *r = ad_in(c, 1), *t = ad_in(c, 2);
    bool training = false, rconst = false;
    double ratio = 0.5;
    if (t) {
        int64_t *v;
        size_t n;
        if (!ad_const_ints(t, &v, &n))
            return ad_refuse(c, DG_NOT_CONSTANT,
                             "training_mode '%s' is not a constant", t->name);
        training = n == 1 && v[0] != 0;
        free(v);
    }
    if (r) {
        double *f;
        size_t n;
        if (ad_const_floats(r, &f, &n)) {
            rconst = n == 1;
            ratio = n == 1 ? f[0] : ratio;
            free(f);
        }
    }
    if (training && !(rconst && ratio == 0.0))
        return ad_refuse(c, DG_SEMANTICS,
                         "training-mode Dropout drops at random; opset 10 cannot ask "
                         "for it");
    /* Before 12 the spec leaves the mask of an inference-mode Dropout
     * undefined (ONNX Runtime returns all false; 12 says all true). */
    if (c->n->n_out > 1 && c->n->out[1])
        return ad_refuse(c, DG_SEMANTICS,
                         "the mask output of Dropout before opset 12 is not defined in "
                         "inference mode (runtimes differ)");
    if (rconst && !training && ratio != 0.5)
        ad_set_attr_f(c, c->n, "ratio", (float)ratio);
    for (size_t i = 1; i < 3 && i < c->n->n_in; i++) {
        IrValue *v = c->n->in[i];
        ir_node_set_input(c->n, i, NULL);
        if (v)
            ir_value_drop_if_unused(v);
    }
    ad_trim_inputs(c->n);
    ad_drop_attr(c, "seed");
    return 0;
}

/* ---- Gemm ----------------------------------------------------------- */

/* Gemm 6 -> 7: broadcast removed; 7 always broadcasts C to (M, N) the
 * numpy way. With broadcast=0 C already is (M, N); with broadcast=1 the
 * shapes version 6 accepts broadcast the same way. */
static int ad_nn_gemm_6_7(AdCtx *c)
{
    ad_drop_attr(c, "broadcast");
    return 0;
}

/* Whether two dimensions are known to be equal. */
static bool ad_nn_dim_eq(const IrDim *a, const IrDim *b)
{
    if (a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE)
        return a->value == b->value;
    return a->kind == IR_DIM_PARAM && b->kind == IR_DIM_PARAM && a->param &&
           b->param && !strcmp(a->param, b->param);
}

static bool ad_nn_dim_is(const IrDim *a, int64_t v)
{
    return a->kind == IR_DIM_VALUE && a->value == v;
}

/* Gemm 7 -> 6: C must be (M, N), or broadcast=1 and a shape the legacy
 * broadcast accepts: a scalar, a one-element tensor or a vector of N (it
 * aligns trailing dimensions, as numpy does). A (1, N) row is reshaped
 * to the vector (same values, same broadcast); an (M, 1) column has no
 * legacy form and is refused. */
static int ad_nn_gemm_7_6(AdCtx *c)
{
    const IrType *ct = ad_type(ad_in(c, 2)), *yt = ad_type(c->n->out[0]);
    if (!ct || ct->kind != IR_TYPE_TENSOR || !ct->shape || !yt || !yt->shape ||
        yt->shape->rank != 2)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the shapes of C and Y are unknown");
    const IrShape *cs = ct->shape, *ys = yt->shape;
    bool ones = true;
    for (size_t i = 0; i < cs->rank; i++)
        ones = ones && ad_nn_dim_is(&cs->dims[i], 1);
    if (cs->rank == 2 && ad_nn_dim_eq(&cs->dims[0], &ys->dims[0]) &&
        ad_nn_dim_eq(&cs->dims[1], &ys->dims[1]))
        return 0;
    if (ones || (cs->rank == 1 && ad_nn_dim_eq(&cs->dims[0], &ys->dims[1]))) {
        ad_set_attr_i(c, c->n, "broadcast", 1);
        return 0;
    }
    if (cs->rank == 2 && ad_nn_dim_is(&cs->dims[0], 1) &&
        ad_nn_dim_eq(&cs->dims[1], &ys->dims[1])) {
        int64_t flat[1] = {-1};
        IrValue *in[2] = {ad_in(c, 2), ad_const_i64s(c, 1, flat)};
        IrNode *k = in[1] ? ad_node(c, c->n, "Reshape", 2, in, 1) : NULL;
        if (!k)
            return -1;
        ad_set_input(c, 2, k->out[0]);
        ad_set_attr_i(c, c->n, "broadcast", 1);
        return 0;
    }
    return ad_refuse(c, DG_SHAPE,
                     "C does not have a shape Gemm-6's broadcast accepts (M x N, "
                     "a scalar, or N)");
}

/* A scalar constant of dtype that adds nothing: -0.0 for the floating
 * types (x + -0.0 is x for every x, -0.0 and NaN included), 0 for the
 * integers. */
static IrValue *ad_nn_neutral_add(AdCtx *c, int32_t dtype)
{
    uint8_t buf[8] = {0};
    size_t bytes;
    switch (dtype) {
    case IR_FLOAT: buf[3] = 0x80; bytes = 4; break;
    case IR_DOUBLE: buf[7] = 0x80; bytes = 8; break;
    case IR_FLOAT16: case IR_BFLOAT16: buf[1] = 0x80; bytes = 2; break;
    case IR_INT32: case IR_UINT32: bytes = 4; break;
    case IR_INT64: case IR_UINT64: bytes = 8; break;
    default:
        ad_refuse(c, DG_TYPE, "no neutral constant of type %s",
                  ir_dtype_name(dtype) ? ir_dtype_name(dtype) : "?");
        return NULL;
    }
    return ad_const_tensor(c, dtype, 0, NULL, buf, bytes);
}

/* Gemm 11 -> 9: C became optional at 11 (absent = no addition). At 9 the
 * node gets C = -0.0 (0 for integers) with beta = 1, which adds nothing. */
static int ad_nn_gemm_11_9(AdCtx *c)
{
    if (ad_in(c, 2))
        return 0;
    int32_t t = ad_elem(ad_in(c, 0));
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of A is unknown");
    IrValue *z = ad_nn_neutral_add(c, t);
    return ad_attr_as_input(c, "beta", 2, z);
}

/* ---- Col2Im ---------------------------------------------------------- */

/* Reads a constant INT64 vector input of exactly n_want entries (any
 * count when n_want is 0) into v (at most 8); returns the count, 0 after
 * refusing. */
static size_t ad_nn_const_vec(AdCtx *c, size_t i, size_t n_want, int64_t *v)
{
    int64_t *x;
    size_t n;
    if (!ad_const_ints(ad_in(c, i), &x, &n)) {
        ad_refuse(c, DG_NOT_CONSTANT, "input %zu must be a constant", i);
        return 0;
    }
    bool ok = n >= 1 && n <= 8 && (!n_want || n == n_want);
    for (size_t k = 0; ok && k < n; k++)
        v[k] = x[k];
    free(x);
    if (!ok)
        ad_refuse(c, DG_SHAPE, "input %zu has an unexpected length", i);
    return ok ? n : 0;
}

/* The INTS attribute `name` of c->n (n entries), or `dflt` everywhere. */
static bool ad_nn_ints_attr(AdCtx *c, const char *name, size_t n, int64_t dflt, int64_t *v)
{
    IrAttr *a = ad_attr(c, name);
    if (a && a->n_ints != n)
        return false;
    for (size_t k = 0; k < n; k++)
        v[k] = a ? a->ints[k] : dflt;
    return true;
}

/* The flat positions, in the padded image, that column entry (k, l) of
 * Col2Im adds to (k the kernel tap, l the block, both row-major), in the
 * order k * L + l; NULL after refusing. *kl gets K * L. */
static int64_t *ad_nn_col2im_index(AdCtx *c, size_t n, const int64_t *img,
                                   const int64_t *blk, const int64_t *dil,
                                   const int64_t *pads, const int64_t *str,
                                   size_t *kl)
{
    int64_t grid[8], padded[8], taps = 1, blocks = 1;
    for (size_t d = 0; d < n; d++) {
        padded[d] = img[d] + pads[d] + pads[n + d];
        int64_t span = dil[d] * (blk[d] - 1) + 1;
        if (blk[d] < 1 || dil[d] < 1 || str[d] < 1 || padded[d] < span)
            return ad_refuse(c, DG_ATTRIBUTE, "Col2Im geometry is invalid"), NULL;
        grid[d] = (padded[d] - span) / str[d] + 1;
        taps *= blk[d];
        blocks *= grid[d];
    }
    if (taps * blocks > (1 << 24))
        return ad_refuse(c, DG_SHAPE, "Col2Im is too large to index"), NULL;
    *kl = (size_t)(taps * blocks);
    int64_t *idx = mem_array(*kl, sizeof *idx);
    for (int64_t k = 0; k < taps; k++)
        for (int64_t l = 0; l < blocks; l++) {
            int64_t kr = k, lr = l, pos = 0, stride = 1;
            for (size_t d = n; d-- > 0;) {
                int64_t kd = kr % blk[d], ld = lr % grid[d];
                kr /= blk[d];
                lr /= grid[d];
                pos += (ld * str[d] + kd * dil[d]) * stride;
                stride *= padded[d];
            }
            idx[k * blocks + l] = pos;
        }
    return idx;
}

/* Col2Im below 18: each column entry is added into a zero padded image
 * with ScatterElements (reduction "add", opset 16) at the position its
 * block and kernel tap cover, and the padding is cut off. The image and
 * block shapes must be constants (they fix the positions). Sums run in
 * another order than a direct loop; inf and NaN propagate as they do. */
static int ad_nn_col2im_expand(AdCtx *c)
{
    int64_t img[8], blk[8], dil[8], pads[16], str[8];
    int32_t t = ad_elem(ad_in(c, 0));
    size_t n = ad_nn_const_vec(c, 1, 0, img), kl;
    if (!n || !ad_nn_const_vec(c, 2, n, blk))
        return -1;
    if (!ad_nn_ints_attr(c, "dilations", n, 1, dil) ||
        !ad_nn_ints_attr(c, "pads", 2 * n, 0, pads) ||
        !ad_nn_ints_attr(c, "strides", n, 1, str))
        return ad_refuse(c, DG_ATTRIBUTE, "an attribute has the wrong length");
    if (t != IR_FLOAT && t != IR_FLOAT16 && t != IR_DOUBLE && t != IR_BFLOAT16 && t != IR_INT32 &&
        t != IR_INT64)
        return ad_refuse(c, DG_TYPE, "Col2Im of this type has no expansion");
    int64_t *idx = ad_nn_col2im_index(c, n, img, blk, dil, pads, str, &kl);
    if (!idx)
        return -1;
    int64_t three[3] = {0, -1, (int64_t)kl}, row[3] = {1, 1, (int64_t)kl};
    int64_t out[10] = {0, 0}, flat = 1;
    for (size_t d = 0; d < n; d++) {
        out[2 + d] = img[d] + pads[d] + pads[n + d];
        flat *= out[2 + d];
    }
    IrValue *pos = c->refusal ? NULL : ad_const_tensor(c, IR_INT64, 3, row, idx, kl * sizeof *idx);
    free(idx);
    IrValue *x3 = ad_reshape(c, ad_in(c, 0), 3, three);
    IrValue *xs = ad_op1(c, "Shape", x3);
    IrNode *sh = ad_raw(c, "Shape", 1, &x3, 1);
    if (sh)
        ad_set_attr_i(c, sh, "end", 2);
    IrValue *nc = ad_fin(c, sh);
    IrValue *cat = ad_concat(c, (IrValue *[]){nc, ad_const_i64s(c, 1, &flat)}, 2, 0);
    IrValue *zero = ad_op2(c, "Expand", ad_const_scalar(c, t, 0.0), cat);
    IrValue *sin[3] = {zero, ad_op2(c, "Expand", pos, xs), x3};
    IrNode *sc = ad_raw(c, "ScatterElements", 3, sin, 1);
    if (sc) {
        ad_set_attr_i(c, sc, "axis", 2);
        ad_set_attr_s(c, sc, "reduction", "add");
    }
    IrValue *y = ad_op2(c, "Reshape", ad_fin(c, sc), ad_const_i64s(c, n + 2, out));
    bool padded = false;
    for (size_t d = 0; d < 2 * n; d++)
        padded = padded || pads[d] != 0;
    if (padded) {
        int64_t st[8], en[8], ax[8];
        for (size_t d = 0; d < n; d++) {
            st[d] = pads[d];
            en[d] = pads[d] + img[d];
            ax[d] = (int64_t)d + 2;
        }
        y = ad_slice(c, y, n, st, en, ax, NULL);
    }
    IrValue *outs[1] = {y};
    return ad_end(c, 1, outs);
}

/* ---- the table ------------------------------------------------------ */

/* MaxPool 12 -> 11: version 12 added int8 and uint8. Their values are
 * exact in float, the max of a window is one of them, and Indices count
 * positions, not values: MaxPool in float cast back is exact. */
static int ad_nn_maxpool_12_11(AdCtx *c)
{
    int32_t t = ad_elem(ad_in(c, 0));
    if (t != IR_UINT8 && t != IR_INT8)
        return 0;
    return ad_widen(c, t, IR_FLOAT, 1u, 1u);
}

/* ---- CausalConvWithState -------------------------------------------- */

/* CausalConvWithState below 27 (the function body): the input with the
 * past state (zeros when absent) in front along the time axis, a
 * depthwise Conv (group = C) with the optional bias, silu (x * sigmoid(x),
 * in float) when asked; the present state is the last K-1 steps of the
 * padded input. Built at 26 with C and K known (Conv's group is an
 * attribute). */
static int ad_nn_ccws_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *w = ad_in(c, 1), *past = ad_in(c, 3);
    char buf[16];
    const char *act = ad_attr_s(c, "activation", buf, sizeof buf);
    bool silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    int32_t t = ad_elem(x);
    int64_t ch = ad_dim_at(w, 0), k = ad_dim_at(w, 2);
    if (!silu && strcmp(act, "none") != 0)
        return ad_refuse(c, DG_ATTRIBUTE, "activation '%s' is unknown", act);
    if (ch <= 0 || k <= 0 || !t)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the channels, kernel size or type are unknown");
    IrValue *padded;
    if (past) {
        padded = ad_concat(c, (IrValue *[]){past, x}, 2, 2);
    } else {
        int64_t pads[6] = {0, 0, k - 1, 0, 0, 0};
        padded = ad_pad(c, x, 6, pads);
    }
    IrValue *in[3] = {padded, w, ad_in(c, 2)};
    IrNode *cv = ad_raw(c, "Conv", ad_in(c, 2) ? 3 : 2, in, 1);
    if (cv)
        ad_set_attr_i(c, cv, "group", ch);
    IrValue *y = ad_fin(c, cv);
    if (silu) {
        IrValue *yf = ad_cast(c, y, IR_FLOAT);
        y = ad_cast(c, ad_op2(c, "Mul", yf, ad_op1(c, "Sigmoid", yf)), t);
    }
    IrValue *st = ad_slice_at(c, padded, k > 1 ? -(k - 1) : INT64_MAX, INT64_MAX, 2, 1);
    IrValue *outs[2] = {y, st};
    return ad_end(c, 2, outs);
}

/* ---- RoiAlign ------------------------------------------------------- */

/* RoiAlign 10 -> 16: 16 adds coordinate_transformation_mode with default
 * half_pixel, while 10 computed what 16 calls output_half_pixel: pin it. */
static int ad_ra_10_16(AdCtx *c)
{
    ad_set_attr_s(c, c->n, "coordinate_transformation_mode", "output_half_pixel");
    return 0;
}

/* RoiAlign 16 -> 10: only output_half_pixel has a form in 10. */
static int ad_ra_16_10(AdCtx *c)
{
    char cb[48];
    const char *ctm = ad_attr_s(c, "coordinate_transformation_mode", cb,
                              sizeof cb);
    if (strcmp(ctm, "output_half_pixel") != 0)
        return ad_refuse(c, DG_ATTRIBUTE,
                         "RoiAlign-10 only has output_half_pixel coordinates, not '%s'",
                         ctm);
    ad_drop_attr(c, "coordinate_transformation_mode");
    return 0;
}

static const AdEntry ad_nn[] = {
    AD_BOTH("Conv", 1, 11),
    AD_BOTH("Conv", 11, 22),
    AD_BOTH("ConvTranspose", 1, 11),
    AD_BOTH("ConvTranspose", 11, 22),

    AD_UP("AveragePool", 1, 7, AD_ATTRS, ad_nothing),
    AD_DOWN("AveragePool", 1, 7, AD_SEMANTIC, ad_nn_avgpool_7_1),
    AD_UP("AveragePool", 7, 10, AD_ATTRS, ad_nothing),
    AD_DOWN("AveragePool", 7, 10, AD_ATTRS, ad_nn_pool_no_ceil),
    AD_BOTH("AveragePool", 10, 11),
    AD_UP("AveragePool", 11, 19, AD_ATTRS, ad_nothing),
    AD_DOWN("AveragePool", 11, 19, AD_SEMANTIC, ad_nn_avgpool_19_11),
    AD_BOTH("AveragePool", 19, 22),

    AD_UP("MaxPool", 1, 8, AD_ATTRS, ad_nothing),
    AD_DOWN("MaxPool", 1, 8, AD_ATTRS, ad_nn_maxpool_8_1),
    AD_UP("MaxPool", 8, 10, AD_ATTRS, ad_nothing),
    AD_DOWN("MaxPool", 8, 10, AD_ATTRS, ad_nn_pool_plain),
    AD_BOTH("MaxPool", 10, 11),
    AD_UP("MaxPool", 11, 12, AD_COMPATIBLE, NULL),
    AD_DOWN("MaxPool", 11, 12, AD_SEMANTIC, ad_nn_maxpool_12_11),
    AD_BOTH("MaxPool", 12, 22),

    AD_UP("LpPool", 1, 2, AD_ATTRS, ad_nn_p_to_int),
    AD_DOWN("LpPool", 1, 2, AD_ATTRS, ad_nn_p_to_float),
    AD_BOTH("LpPool", 2, 11),
    AD_UP("LpPool", 11, 18, AD_ATTRS, ad_nothing),
    AD_DOWN("LpPool", 11, 18, AD_ATTRS, ad_nn_pool_plain),
    AD_BOTH("LpPool", 18, 22),

    AD_BOTH("GlobalAveragePool", 1, 22),
    AD_BOTH("GlobalMaxPool", 1, 22),
    AD_UP("GlobalLpPool", 1, 2, AD_ATTRS, ad_nn_p_to_int),
    AD_DOWN("GlobalLpPool", 1, 2, AD_ATTRS, ad_nn_p_to_float),
    AD_BOTH("GlobalLpPool", 2, 22),
    AD_BOTH("MaxRoiPool", 1, 22),
    AD_BOTH("MaxUnpool", 9, 11),
    AD_BOTH("MaxUnpool", 11, 22),

    AD_UP("Dropout", 1, 6, AD_ATTRS, ad_drop_consumed),
    AD_DOWN("Dropout", 1, 6, AD_ATTRS, ad_nothing),
    AD_UP("Dropout", 6, 7, AD_SEMANTIC, ad_nn_dropout_6_7),
    AD_DOWN("Dropout", 6, 7, AD_SEMANTIC, ad_nn_dropout_7_6),
    AD_UP("Dropout", 7, 10, AD_SEMANTIC, ad_nn_dropout_7_10),
    AD_DOWN("Dropout", 7, 10, AD_SEMANTIC, ad_nn_dropout_10_7),
    AD_UP("Dropout", 10, 12, AD_ATTR_INPUT, ad_nn_dropout_10_12),
    AD_DOWN("Dropout", 10, 12, AD_ATTR_INPUT, ad_nn_dropout_12_10),
    AD_BOTH("Dropout", 12, 13),
    AD_BOTH("Dropout", 13, 22),

    AD_BOTH("Gemm", 1, 6),
    AD_UP("Gemm", 6, 7, AD_SEMANTIC, ad_nn_gemm_6_7),
    AD_DOWN("Gemm", 6, 7, AD_SEMANTIC, ad_nn_gemm_7_6),
    AD_BOTH("Gemm", 7, 9),
    AD_UP("Gemm", 9, 11, AD_SEMANTIC, ad_nothing),
    AD_DOWN("Gemm", 9, 11, AD_SEMANTIC, ad_nn_gemm_11_9),
    AD_BOTH("Gemm", 11, 13),

    AD_BOTH("MatMul", 1, 9),
    AD_BOTH("MatMul", 9, 13),

    AD_BOTH("DeformConv", 19, 22),
    AD_GONE("Col2Im", 18, AD_EXPAND, ad_nn_col2im_expand),

    AD_GONE("CausalConvWithState", 27, AD_EXPAND, ad_nn_ccws_expand),

    AD_UP("RoiAlign", 10, 16, AD_ATTRS, ad_ra_10_16),
    AD_DOWN("RoiAlign", 10, 16, AD_ATTRS, ad_ra_16_10),
    AD_BOTH("RoiAlign", 16, 22),
};

const AdFamily ad_family_nn = {"nn", ad_nn, sizeof ad_nn / sizeof ad_nn[0]};
