/*
 * fuse_conv_add.c - folds an Add (fuse_conv_add) or Mul (fuse_conv_mul)
 * of a per-channel constant into the Conv before it.
 *
 * y = Conv(x, W, b) + k, where k holds one value per output channel c,
 * is Conv(x, W, b + k): channel c of the sum is channel c of the
 * convolution plus k[c]. Likewise y = Conv(x, W, b) * k is
 * Conv(x, W * k[c] per output slice W[c], b * k) by linearity. Exact up
 * to float rounding (computed in double, stored in W's type).
 *
 * k is constant, finite, of W's type (float or double; not float16, see
 * fuse_util.h), and
 * broadcasts to the Conv output [N, C, D1...] with every dim 1 except
 * maybe the channel dim (1 or C): [C,1,1], [1,C,1,1], [1], a scalar ...
 * so the result keeps the Conv output's shape. Either operand order from
 * opset 7; before 7 Add/Mul broadcast only with broadcast=1 (k second,
 * aligned at `axis` or at the end) or have equal shapes. The Conv output
 * must be read by the Add/Mul alone and not be a graph output; the Conv's
 * weight and bias (when present) are constant. The new weight/bias are
 * new constants.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/fuse_util.h"

/* Where k's first dim sits on the Conv output's axes (rank r), or -1
 * when the op's broadcasting does not suit. `second`: k is input 1. */
static long opt_ca_start(const IrNode *op, const TkTensor *k, size_t r, bool second,
                         int64_t opset)
{
    if (k->rank > r)
        return -1;
    if (opset >= 7)
        return (long)(r - k->rank);
    bool ok = true;
    int64_t bc = opt_fz_attr_i(op, "broadcast", 0, &ok);
    int64_t axis = opt_fz_attr_i(op, "axis", -1, &ok);
    if (!ok)
        return -1;
    if (!bc)
        return k->rank == r ? 0 : -1;
    if (!second || (ir_node_attr(op, "axis") && axis < 0))
        return -1;
    long start = ir_node_attr(op, "axis") ? (long)axis : (long)(r - k->rank);
    return (size_t)start + k->rank <= r ? start : -1;
}

/* k's value for each of the C channels into v, or false when k is not
 * one value per channel of an output of rank r from axis `start`. */
static bool opt_ca_channels(const TkTensor *k, long start, size_t C, double *v)
{
    bool by_c = false;
    for (size_t j = 0; j < k->rank; j++) {
        size_t a = (size_t)start + j;
        if (a == 1 && (size_t)k->dims[j] == C)
            by_c = true;
        else if (k->dims[j] != 1)
            return false;
    }
    for (size_t c = 0; c < C; c++) {
        v[c] = tk_get_f(k, by_c ? c : 0);
        if (!isfinite(v[c]))
            return false;
    }
    return true;
}

/* The new Conv weight (Mul) and bias (b + v for Add, b * v for Mul; NULL
 * for a Mul of a Conv without bias). false when the bias does not suit. */
static bool opt_ca_fold(const TkTensor *w, const IrValue *bv, const double *v, size_t C,
                        bool mul, TkTensor **nw, TkTensor **nb)
{
    IrError e;
    TkTensor *b = bv ? opt_fz_const(bv) : NULL;
    bool ok = !bv || (b && b->dtype == w->dtype && b->rank == 1 && b->numel == C);
    int64_t d = (int64_t)C;
    if (ok && (b || !mul))
        *nb = tk_new(w->dtype, 1, &d, &e);
    for (size_t c = 0; *nb && c < C; c++) {
        double x = b ? tk_get_f(b, c) : 0;
        tk_set_f(*nb, c, mul ? x * v[c] : x + v[c]);
    }
    if (ok && mul)
        *nw = tk_clone(w);
    size_t per = w->numel / C;
    for (size_t i = 0; *nw && i < w->numel; i++)
        tk_set_f(*nw, i, tk_get_f(w, i) * v[i / per]);
    tk_free(b);
    return ok;
}

/* Emits the new constants and points conv at them; -1 on error. */
static int opt_ca_rewire(OptCtx *c, IrNode *conv, const TkTensor *nw, const TkTensor *nb)
{
    if (nw) {
        IrValue *wv = opt_fz_emit(c, conv, nw, "conv_fused_W");
        if (!wv)
            return -1;
        ir_node_set_input(conv, 1, wv);
    }
    if (nb) {
        IrValue *bv = opt_fz_emit(c, conv, nb, "conv_fused_B");
        if (!bv)
            return -1;
        if (conv->n_in > 2)
            ir_node_set_input(conv, 2, bv);
        else
            ir_node_add_input(conv, bv);
    }
    return 0;
}

/* Folds op (an Add/Mul reading conv's output at slot `slot`) into conv:
 * 1 done, 0 not, -1 error. */
static int opt_ca_try(OptCtx *c, IrNode *conv, IrNode *op, size_t slot, bool mul, int64_t opset)
{
    TkTensor *w = conv->n_in > 1 ? opt_fz_const(conv->in[1]) : NULL;
    TkTensor *k = op->n_in == 2 ? opt_fz_const(op->in[1 - slot]) : NULL, *nw = NULL, *nb = NULL;
    double *v = NULL;
    int r = 0;
    if (!w || !k || conv->n_in > 3 || !opt_fz_float(w->dtype) || k->dtype != w->dtype ||
        w->rank < 3 || w->numel == 0)
        goto done;
    size_t C = (size_t)w->dims[0];
    long start = opt_ca_start(op, k, w->rank, slot == 0, opset);
    v = mem_array(C, sizeof *v);
    if (start < 0 || !opt_ca_channels(k, start, C, v) ||
        !opt_ca_fold(w, conv->n_in > 2 ? conv->in[2] : NULL, v, C, mul, &nw, &nb) ||
        (!nw && !nb) || (mul && !nw))
        goto done;
    if (opt_ca_rewire(c, conv, nw, nb) < 0) {
        r = -1;
        goto done;
    }
    ir_node_take_output(conv, 0, op, 0);
    ir_node_delete(op);
    r = 1;
done:
    free(v);
    tk_free(w);
    tk_free(k);
    tk_free(nw);
    tk_free(nb);
    return r;
}

static long opt_ca_run_op(OptCtx *c, bool mul)
{
    int64_t opset = ir_scope_opset(c->m, c->fn, "");
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        if (!opt_fz_op(k, "Conv") || k->n_out != 1 || !k->out[0])
            continue;
        size_t slot;
        IrNode *op = opt_fz_sole_reader(c->g, k->out[0], &slot);
        if (!op || !opt_fz_op(op, mul ? "Mul" : "Add") || op->n_out != 1 || !op->out[0])
            continue;
        int r = opt_ca_try(c, k, op, slot, mul, opset);
        if (r < 0)
            return -1;
        n += r;
    }
    return n;
}

static long opt_ca_run_add(OptCtx *c)
{
    return opt_ca_run_op(c, false);
}

static long opt_ca_run_mul(OptCtx *c)
{
    return opt_ca_run_op(c, true);
}

const OptPass opt_pass_fuse_conv_add = {
    "fuse_conv_add", "folds an Add of a per-channel constant after a Conv into its bias",
    true, 0, opt_ca_run_add,
};

const OptPass opt_pass_fuse_conv_mul = {
    "fuse_conv_mul", "folds a Mul by a per-channel constant after a Conv into its weight and bias",
    true, 0, opt_ca_run_mul,
};
