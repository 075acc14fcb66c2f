/*
 * fuse_pad.c - folds a zero Pad of the spatial axes into the Conv or
 * AveragePool that reads it.
 *
 * Conv pads its input with zeros by its `pads` attribute, so
 * Conv(Pad(x, p, 0)) is Conv(x) with pads increased by p's spatial part:
 * the padded tensor the kernel slides over is the same. AveragePool with
 * count_include_pad=1 counts padded zeros like real elements, so it takes
 * p the same way; one with count_include_pad=0 and no pads of its own
 * takes p by turning count_include_pad on (without pads of its own the
 * flag changed nothing). MaxPool is left alone: its pads are -inf.
 *
 * The Pad: mode "constant", value 0 (attribute before 11; input, absent or
 * a constant 0, from 11), constant non-negative pads (attribute `pads`
 * 2..10, `paddings` 1, an input from 11, with the constant `axes` input
 * from 18) that are 0 on the batch and channel axes. Its output is read by
 * the Conv/AveragePool alone (as input 0) and is not a graph output. The
 * consumer has auto_pad NOTSET; AveragePool is from opset 7
 * (count_include_pad exists) with ceil_mode 0.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/fuse_util.h"

#define OPT_PD_MAX 16   /* axes handled */

static bool opt_pd_str_is(const IrNode *k, const char *name, const char *dflt, const char *want)
{
    IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return strcmp(dflt, want) == 0;
    return !a->ref_attr_name && a->has_s && a->s.len == strlen(want) &&
           memcmp(a->s.data, want, a->s.len) == 0;
}

/* Values of a constant integer input (<= cap), count into *n; false when
 * not constant. */
static bool opt_pd_const_ints(const IrValue *v, int64_t *out, size_t cap, size_t *n)
{
    TkTensor *t = opt_fz_const(v);
    bool ok = t && ir_dtype_is_int(t->dtype) && t->rank == 1 && t->numel <= cap;
    for (size_t i = 0; ok && i < t->numel; i++)
        out[i] = tk_get_i(t, i);
    *n = ok ? t->numel : 0;
    tk_free(t);
    return ok;
}

/* Pad's padding value is 0. */
static bool opt_pd_zero_value(const IrNode *pad, int64_t opset)
{
    bool ok = true;
    if (opset < 11)
        return opt_fz_attr_f(pad, "value", opset, &ok) == 0.0 && ok;
    if (pad->n_in < 3 || !pad->in[2])
        return true;
    TkTensor *t = opt_fz_const(pad->in[2]);
    ok = t && t->numel == 1 && tk_get_f(t, 0) == 0.0;
    tk_free(t);
    return ok;
}

/* The Pad's pads over all r axes (begins then ends) into p; false when
 * they are not known, negative, or touch axes 0 and 1. */
static bool opt_pd_pads(const IrNode *pad, int64_t opset, size_t r, int64_t *p)
{
    int64_t raw[2 * OPT_PD_MAX], axes[OPT_PD_MAX];
    size_t n = 0, na = r;
    if (r > OPT_PD_MAX || !opt_pd_str_is(pad, "mode", "constant", "constant") ||
        !opt_pd_zero_value(pad, opset))
        return false;
    if (opset < 11) {
        IrAttr *a = ir_node_attr(pad, opset < 2 ? "paddings" : "pads");
        if (!a || a->ref_attr_name || a->n_ints > 2 * OPT_PD_MAX)
            return false;
        n = a->n_ints;
        memcpy(raw, a->ints, n * sizeof *raw);
    } else if (pad->n_in < 2 || !opt_pd_const_ints(pad->in[1], raw, 2 * OPT_PD_MAX, &n)) {
        return false;
    }
    for (size_t i = 0; i < r; i++)
        axes[i] = (int64_t)i;
    if (opset >= 18 && pad->n_in > 3 && pad->in[3] &&
        !opt_pd_const_ints(pad->in[3], axes, OPT_PD_MAX, &na))
        return false;
    if (n != 2 * na)
        return false;
    memset(p, 0, 2 * r * sizeof *p);
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + (int64_t)r : axes[i];
        if (a < 0 || a >= (int64_t)r || raw[i] < 0 || raw[na + i] < 0)
            return false;
        p[a] += raw[i];
        p[r + a] += raw[na + i];
    }
    return p[0] == 0 && p[1] == 0 && p[r] == 0 && p[r + 1] == 0;
}

/* The consumer's spatial rank, or 0 when it cannot take the pads. Sets
 * *include when an AveragePool must turn count_include_pad on. */
static size_t opt_pd_consumer(const IrNode *k, int64_t opset, bool *include)
{
    bool ok = true;
    *include = false;
    if (!opt_pd_str_is(k, "auto_pad", "NOTSET", "NOTSET"))
        return 0;
    IrAttr *ks = ir_node_attr(k, "kernel_shape");
    if (opt_fz_op(k, "Conv")) {
        TkTensor *w = k->n_in > 1 ? opt_fz_const(k->in[1]) : NULL;
        size_t r = w && w->rank >= 3 ? w->rank - 2 : 0;
        tk_free(w);
        if (!r && ks && !ks->ref_attr_name)
            r = ks->n_ints;
        return r;
    }
    if (!opt_fz_op(k, "AveragePool") || opset < 7 || !ks || ks->ref_attr_name ||
        opt_fz_attr_i_or(k, "ceil_mode", 0, &ok) != 0 || !ok)
        return 0;
    if (opt_fz_attr_i(k, "count_include_pad", opset, &ok) == 0) {
        IrAttr *pa = ir_node_attr(k, "pads");
        for (size_t i = 0; pa && i < pa->n_ints; i++)
            ok = ok && !pa->ref_attr_name && pa->ints[i] == 0;
        *include = true;
    }
    return ok ? ks->n_ints : 0;
}

/* The consumer's pads plus the Pad's spatial ones; false when its pads
 * attribute does not fit. */
static bool opt_pd_merge(const IrNode *k, const int64_t *p, size_t s, int64_t *out)
{
    IrAttr *pa = ir_node_attr(k, "pads");
    if (pa && (pa->ref_attr_name || pa->n_ints != 2 * s))
        return false;
    for (size_t i = 0; i < s; i++) {
        out[i] = (pa ? pa->ints[i] : 0) + p[2 + i];
        out[s + i] = (pa ? pa->ints[s + i] : 0) + p[s + 2 + 2 + i];
    }
    return true;
}

static long opt_pd_run(OptCtx *c)
{
    int64_t opset = ir_scope_opset(c->m, c->fn, "");
    long n = 0;
    IR_FOR_NODES(c->g, pad) {
        if (!opt_fz_op(pad, "Pad") || pad->n_out != 1 || !pad->out[0] || !pad->in[0])
            continue;
        size_t slot;
        bool include;
        IrNode *k = opt_fz_sole_reader(c->g, pad->out[0], &slot);
        size_t s = k && slot == 0 ? opt_pd_consumer(k, opset, &include) : 0;
        int64_t p[2 * OPT_PD_MAX], merged[2 * OPT_PD_MAX];
        if (!s || s + 2 > OPT_PD_MAX || !opt_pd_pads(pad, opset, s + 2, p) ||
            !opt_pd_merge(k, p, s, merged))
            continue;
        ir_node_set_attr(k, ir_attr_ints("pads", 2 * s, merged));
        if (include)
            ir_node_set_attr(k, ir_attr_int("count_include_pad", 1));
        ir_node_set_input(k, 0, pad->in[0]);
        ir_node_delete(pad);
        n++;
    }
    return n;
}

const OptPass opt_pass_fuse_pad = {
    "fuse_pad", "folds a zero Pad of the spatial axes into the Conv/AveragePool reading it",
    true, 0, opt_pd_run,
};
