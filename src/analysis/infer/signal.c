/*
 * infer/signal.c - inference of signal processing: the windows
 * (HannWindow, HammingWindow, BlackmanWindow), MelWeightMatrix, DFT and
 * STFT. Element types come from the generic step except where the
 * output_datatype attribute decides.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* floor(n/2)+1 of a known non-negative dim (one-sided spectrum bins). */
static void inf_dim_half_plus_one(IrDim *dst, const IrDim *n)
{
    if (inf_dim_known(n) && n->value >= 0)
        inf_dim_set(dst, n->value / 2 + 1);
    else
        inf_dim_unknown(dst);
}

/* HannWindow, HammingWindow, BlackmanWindow: [size] of output_datatype. */
static int inf_window(InfCtx *c)
{
    int32_t dt = inf_dtype_attr(c, "output_datatype");
    if (dt < 0)
        return -1;
    inf_out_elem(c, 0, dt);
    IrShape *s = inf_out_shape(c, 0, 1);
    if (s) {
        inf_scalar_in_dim(c, 0, &s->dims[0]);
        if (inf_dim_known(&s->dims[0]) && s->dims[0].value < 0)
            inf_dim_unknown(&s->dims[0]);
    }
    return 0;
}

/* MelWeightMatrix: [floor(dft_length/2)+1, num_mel_bins]. */
static int inf_melweight(InfCtx *c)
{
    int32_t dt = inf_dtype_attr(c, "output_datatype");
    if (dt < 0)
        return -1;
    inf_out_elem(c, 0, dt);
    IrShape *s = inf_out_shape(c, 0, 2);
    if (!s)
        return 0;
    IrDim n = {0};
    inf_scalar_in_dim(c, 1, &n);
    inf_dim_half_plus_one(&s->dims[0], &n);
    inf_dim_unknown(&n);
    inf_scalar_in_dim(c, 0, &s->dims[1]);
    if (inf_dim_known(&s->dims[1]) && s->dims[1].value < 0)
        inf_dim_unknown(&s->dims[1]);
    return 0;
}

/* The DFT's output size along the transformed axis of input size d:
 * n = dft_length (given) or d (2*(d-1) for the inverse one-sided case);
 * one-sided forward keeps floor(n/2)+1 bins. */
static void inf_dft_axis_dim(IrDim *out, const IrDim *d, const IrDim *len,
                             bool has_len, bool onesided, bool inverse)
{
    IrDim n = {0};
    if (has_len)
        inf_dim_copy(&n, len);
    else if (!(onesided && inverse))
        inf_dim_copy(&n, d);
    else if (inf_dim_known(d) && d->value >= 1 && d->value <= INT64_MAX / 2)
        inf_dim_set(&n, 2 * (d->value - 1));
    if (onesided && !inverse)
        inf_dim_half_plus_one(out, &n);
    else
        inf_dim_copy(out, &n);
    inf_dim_unknown(&n);
}

/* The DFT axis: the attribute (version 17, default 1) or the optional
 * scalar input 2 (version 20, default -2). Returns 1 with *ax normalized,
 * 0 when the input is not known, -1 when out of [-r, -2] u [0, r-2]. */
static int inf_dft_axis(InfCtx *c, int rank, int *ax)
{
    int64_t a;
    if (c->since < 20) {
        a = inf_attr_i(c, "axis");
    } else if (!inf_has_in(c, 2)) {
        a = -2;
    } else {
        IrDim d = {0};
        inf_scalar_in_dim(c, 2, &d);
        if (!inf_dim_known(&d)) {
            inf_dim_unknown(&d);
            return 0;
        }
        a = d.value;
    }
    if (!((a >= -(int64_t)rank && a <= -2) || (a >= 0 && a <= (int64_t)rank - 2)))
        return inf_fail(c, "axis", "axis %lld is out of range for rank %d", (long long)a,
                        rank);
    *ax = (int)(a < 0 ? a + rank : a);
    return 1;
}

/* DFT: the input's shape with the axis dim transformed (see
 * inf_dft_axis_dim) and the last dim 2 (complex), or 1 for the inverse
 * one-sided (real) case. When the axis is unknown, a dim is known only
 * if it comes out the same whether or not it is the axis. */
static int inf_dft(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    int r = (int)in->rank;
    if (r < 2)
        return inf_fail(c, "rank", "input must have rank >= 2, has %d", r);
    bool onesided = inf_attr_i(c, "onesided") != 0;
    bool inverse = inf_attr_i(c, "inverse") != 0;
    int ax = -1;
    int known = inf_dft_axis(c, r, &ax);
    if (known < 0)
        return -1;
    bool has_len = inf_has_in(c, 1);
    IrDim len = {0}, t = {0};
    if (has_len)
        inf_scalar_in_dim(c, 1, &len);
    IrShape *s = inf_out_shape(c, 0, in->rank);
    for (int k = 0; s && k < r - 1; k++) {
        const IrDim *d = &in->dims[k];
        if (known && k != ax) {
            inf_dim_copy(&s->dims[k], d);
            continue;
        }
        inf_dft_axis_dim(&t, d, &len, has_len, onesided, inverse);
        if (known || inf_dim_same(&t, d))
            inf_dim_copy(&s->dims[k], &t);
    }
    if (s)
        inf_dim_set(&s->dims[r - 1], onesided && inverse ? 1 : 2);
    inf_dim_unknown(&len);
    inf_dim_unknown(&t);
    return 0;
}

/* STFT: signal [batch, length, 1|2] -> [batch, frames, bins, 2] with
 * frames = floor((length - frame_length) / frame_step) + 1 and bins =
 * frame_length, or floor(frame_length/2)+1 when onesided. frame_length is
 * input 3, else the window's length. */
static int inf_stft(InfCtx *c)
{
    const IrShape *sig = inf_in_shape(c, 0), *win = inf_in_shape(c, 2);
    if (sig && sig->rank != 3)
        return inf_fail(c, "rank", "signal must have rank 3, has %zu", sig->rank);
    if (win && win->rank != 1)
        return inf_fail(c, "rank", "window must have rank 1, has %zu", win->rank);
    IrShape *s = inf_out_shape(c, 0, 4);
    if (!s)
        return 0;
    IrDim fl = {0}, step = {0};
    if (inf_has_in(c, 3))
        inf_scalar_in_dim(c, 3, &fl);
    if (!inf_dim_known(&fl) && win)
        inf_dim_copy(&fl, &win->dims[0]);
    inf_scalar_in_dim(c, 1, &step);
    if (sig)
        inf_dim_copy(&s->dims[0], &sig->dims[0]);
    if (sig && inf_dim_known(&sig->dims[1]) && inf_dim_known(&fl) &&
        inf_dim_known(&step) && step.value > 0 && fl.value > 0 &&
        sig->dims[1].value >= fl.value)
        inf_dim_set(&s->dims[1], (sig->dims[1].value - fl.value) / step.value + 1);
    if (inf_attr_i(c, "onesided") != 0)
        inf_dim_half_plus_one(&s->dims[2], &fl);
    else
        inf_dim_copy(&s->dims[2], &fl);
    inf_dim_set(&s->dims[3], 2);
    inf_dim_unknown(&fl);
    inf_dim_unknown(&step);
    return 0;
}

const InfOp inf_ops_signal[] = {
    {"", "HannWindow", inf_window},
    {"", "HammingWindow", inf_window},
    {"", "BlackmanWindow", inf_window},
    {"", "MelWeightMatrix", inf_melweight},
    {"", "DFT", inf_dft},
    {"", "STFT", inf_stft},
    {NULL, NULL, NULL}};
