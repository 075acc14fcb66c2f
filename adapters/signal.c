/*
 * signal.c - adapters of the signal ops (DFT, STFT, the windows; DFT and
 * STFT below 17 by MatMuls with twiddle-factor constants).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* The coefficients a0 - a1 cos(x) + a2 cos(2x) of a window. */
typedef struct AdWin {
    double a0, a1, a2;
} AdWin;

/* One transform along the last axis of a line of J input elements giving
 * K output bins, as four real J x K matrices: the contribution of the real
 * and imaginary input parts to the real and imaginary outputs. */
typedef struct AdDft {
    int64_t n;              /* transform length (dft_length) */
    int64_t j, k;           /* input elements used, output bins */
    int64_t take;           /* elements a line holds (n/2+1 for IRFFT) */
    bool inverse, irfft;
    double *w[4];           /* rr, ir (imag in -> real out), ri, ii */
} AdDft;

static const double ad_m_pi = 3.14159265358979323846;

#define AD_MAX_DFT_RANK 16

/* ---- DFT 17 <-> 20: axis attribute <-> input --------------------------- */

/* 20 moved `axis` from an attribute (default 1) to an optional int64
 * scalar input (default -2). The transform itself is the same (onesided
 * with inverse is the same IRFFT in both). Up: the axis, explicit or 1,
 * becomes a constant input 2, so the default change cannot bite. */
static int ad_dft_17_20(AdCtx *c)
{
    int64_t axis = ad_attr_i(c, "axis");
    IrValue *v = ad_const_scalar(c, IR_INT64, (double)axis);
    return ad_attr_as_input(c, "axis", 2, v);
}

/* Down: the axis input (absent: -2) must be a constant; a negative axis
 * counts from the back of the full rank and is made non-negative with
 * the known rank, as DFT-17 documents only non-negative axes. */
static int ad_dft_20_17(AdCtx *c)
{
    IrValue *in = ad_in(c, 2);
    int64_t axis = -2;
    if (in) {
        int64_t *v;
        size_t n;
        if (!ad_const_ints(in, &v, &n))
            return ad_refuse(c, DG_NOT_CONSTANT,
                             "input axis '%s' must be a constant to become the "
                             "attribute", in->name);
        if (n != 1) {
            free(v);
            return ad_refuse(c, DG_SEMANTICS, "input axis '%s' is not a scalar",
                             in->name);
        }
        axis = v[0];
        free(v);
    }
    if (axis < 0) {
        int r = ad_rank(ad_in(c, 0));
        if (r < 0)
            return ad_refuse(c, DG_SHAPE_UNKNOWN,
                             "axis %lld counts from the back and the input's rank "
                             "is unknown", (long long)axis);
        axis += r;
    }
    ad_set_attr_i(c, c->n, "axis", axis);
    if (in) {
        ir_node_set_input(c->n, 2, NULL);
        ad_trim_inputs(c->n);
        ad_drop_if_dead(c, in);
    }
    return 0;
}

/* ---- windows below 17 ------------------------------------------------- */

static AdWin ad_win_of(const char *op)
{
    if (!strcmp(op, "HammingWindow"))
        return (AdWin){25.0 / 46.0, 21.0 / 46.0, 0.0};
    if (!strcmp(op, "BlackmanWindow"))
        return (AdWin){0.42, 0.5, 0.08};
    return (AdWin){0.5, 0.5, 0.0};
}

/* A constant window of `size` values computed in double and rounded once
 * to float or double: w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N),
 * N = size (periodic) or size - 1. */
static int ad_win_const(AdCtx *c, int64_t size, bool periodic, int64_t dt)
{
    AdWin w = ad_win_of(c->n->op_type);
    double n = (double)(periodic ? size : size - 1);
    size_t es = dt == IR_DOUBLE ? 8 : 4;
    uint8_t *buf = calloc(size ? (size_t)size : 1, es);
    for (int64_t i = 0; i < size; i++) {
        double a = 2 * ad_m_pi * (double)i / n;
        double v = w.a0 - w.a1 * cos(a) + w.a2 * cos(2 * a);
        if (dt == IR_DOUBLE) {
            memcpy(buf + (size_t)i * 8, &v, 8);
        } else {
            float f = (float)v;
            memcpy(buf + (size_t)i * 4, &f, 4);
        }
    }
    IrValue *out = c->n->out[0];
    int rc = 0;
    if (c->g == c->m->graph && !c->fn && !ir_value_is_graph_output(out)) {
        /* an initializer read by the window's consumers: no op to lower */
        IrValue *v = ad_const_tensor(c, (int32_t)dt, 1, &size, buf, (size_t)size * es);
        if (!v || ir_value_replace_uses(out, v, c->err) < 0)
            rc = v ? ad_refuse(c, DG_INTERNAL, "the window's uses cannot move") : -1;
        else
            ir_node_delete(c->n);
    } else {
        IrNode *k = ad_node_in(c, "", c->n, "Constant", 0, NULL, 1);
        if (k)
            ir_node_set_attr(k, ir_attr_tensor("value", ir_tensor_new(NULL, (int32_t)dt, 1,
                                                                     &size, buf,
                                                                     (size_t)size * es)));
        if (!k || ad_infer(c, k) < 0)
            rc = -1;
        else
            ad_replace(c, k);
    }
    free(buf);
    return rc;
}

/* A float constant scalar of the window expansion. */
static IrValue *ad_win_f(AdCtx *c, double v)
{
    return ad_const_scalar(c, IR_FLOAT, v);
}

/* The spec's function body of a periodic window (size not constant):
 * N = float(size), x = Range(0, N, 1) * (2 pi / N),
 * y = a0 - a1 cos(x) + a2 cos(2 x), cast to output_datatype. With
 * periodic = 1 the body's periodic/symmetric blend reduces to N. The
 * body computes in float, so integer outputs (which truncate values near
 * 1) are refused. */
static int ad_win_body(AdCtx *c, int64_t dt)
{
    if (dt != IR_FLOAT && dt != IR_DOUBLE && dt != IR_FLOAT16 &&
        dt != IR_BFLOAT16)
        return ad_refuse(c, DG_TYPE,
                         "output_datatype %lld: the float expansion would truncate "
                         "values near 1 differently", (long long)dt);
    AdWin w = ad_win_of(c->n->op_type);
    IrValue *n = ad_cast(c, ad_in(c, 0), IR_FLOAT);
    IrValue *zero = ad_win_f(c, 0.0), *one = ad_win_f(c, 1.0);
    IrValue *inc = ad_op2(c, "Div", ad_win_f(c, 2 * ad_m_pi), n);
    IrNode *rg = NULL;
    if (zero && one && n) {
        IrValue *in[3] = {zero, n, one};
        rg = ad_node(c, c->n, "Range", 3, in, 1);
    }
    IrValue *x = rg ? ad_op2(c, "Mul", rg->out[0], inc) : NULL;
    IrValue *x2 = ad_op2(c, "Mul", x, ad_win_f(c, 2.0));
    IrNode *c1 = x ? ad_node(c, c->n, "Cos", 1, &x, 1) : NULL;
    IrNode *c2 = x2 ? ad_node(c, c->n, "Cos", 1, &x2, 1) : NULL;
    if (!c1 || !c2)
        return -1;
    IrValue *t1 = ad_op2(c, "Mul", ad_win_f(c, w.a1), c1->out[0]);
    IrValue *t2 = ad_op2(c, "Mul", ad_win_f(c, w.a2), c2->out[0]);
    IrValue *y = ad_op2(c, "Add", ad_op2(c, "Sub", ad_win_f(c, w.a0), t1), t2);
    if (y && dt != IR_FLOAT)
        y = ad_cast(c, y, dt);
    if (!y)
        return -1;
    ad_replace(c, y->producer);
    return 0;
}

/* HannWindow / HammingWindow / BlackmanWindow-17 below opset 17. A
 * constant size gives a constant tensor (float or double; integer and
 * 16-bit float outputs depend on the last bit of the formula and are
 * refused); otherwise the spec's function body, for periodic windows
 * only (its symmetric form divides by size - 1, which is 0 for size 1). */
static int ad_win_below_17(AdCtx *c)
{
    int64_t dt = ad_attr_i(c, "output_datatype");
    bool periodic = ad_attr_i(c, "periodic") != 0;
    int64_t *v;
    size_t n;
    if (ad_const_ints(ad_in(c, 0), &v, &n)) {
        int64_t size = n == 1 ? v[0] : -1;
        free(v);
        if (size < 0 || (!periodic && size < 2))
            return ad_refuse(c, DG_SEMANTICS,
                             "size %lld has no well-defined window", (long long)size);
        if (dt != IR_FLOAT && dt != IR_DOUBLE)
            return ad_refuse(c, DG_TYPE,
                             "output_datatype %lld: only float and double windows "
                             "are folded into constants", (long long)dt);
        return ad_win_const(c, size, periodic, dt);
    }
    if (!periodic)
        return ad_refuse(c, DG_NOT_CONSTANT,
                         "a symmetric window needs a constant size (size 1 divides by 0)");
    return ad_win_body(c, dt);
}

/* ---- DFT and STFT below 17: MatMul with constant twiddle factors ------ */

/* Largest twiddle matrix (elements) a transform is written with. */
#define AD_DFT_CAP (INT64_C(1) << 22)

/* Adds input element m's weight at bin k, the element entering the line
 * at position p with sign `conj` on its imaginary part. */
static void ad_dft_add(AdDft *d, int64_t m, int64_t p, int64_t k, double conj)
{
    double th = 2.0 * ad_m_pi * (double)((p * k) % d->n) / (double)d->n;
    double sg = d->inverse ? 1.0 : -1.0, sc = d->inverse ? 1.0 / (double)d->n : 1.0;
    size_t e = (size_t)(m * d->k + k);
    /* (xr + i conj xi)(cos th + i sg sin th) */
    d->w[0][e] += sc * cos(th);
    d->w[1][e] += -sg * conj * sc * sin(th);
    d->w[2][e] += sg * sc * sin(th);
    d->w[3][e] += conj * sc * cos(th);
}

/* Fills the matrices in double: element m < j sits at position m, and for
 * IRFFT also at n - m (the conjugate-symmetric half the line is extended
 * with), as the evaluator's definition loads a line. */
static void ad_dft_fill(AdDft *d)
{
    size_t cnt = (size_t)(d->j * d->k);
    for (int q = 0; q < 4; q++)
        d->w[q] = mem_array(cnt + 1, sizeof *d->w[q]);
    for (int64_t m = 0; m < d->j; m++)
        for (int64_t k = 0; k < d->k; k++) {
            ad_dft_add(d, m, m, k, 1.0);
            if (d->irfft && m > 0 && d->n - m >= d->take && d->n - m < d->n)
                ad_dft_add(d, m, d->n - m, k, -1.0);
        }
}

static void ad_dft_free(AdDft *d)
{
    for (int q = 0; q < 4; q++)
        free(d->w[q]);
}

/* Matrix q as a constant of element type t (float built, then cast for
 * float16 / bfloat16); NULL when it is all zeros (no term). */
static IrValue *ad_dft_matrix(AdCtx *c, const AdDft *d, int q, int32_t t)
{
    size_t cnt = (size_t)(d->j * d->k);
    bool zero = true;
    for (size_t e = 0; e < cnt && zero; e++)
        zero = d->w[q][e] == 0.0;
    if (zero)
        return NULL;
    int64_t dims[2] = {d->j, d->k};
    if (t == IR_DOUBLE)
        return ad_const_tensor(c, t, 2, dims, d->w[q], cnt * sizeof(double));
    float *f = mem_array(cnt + 1, sizeof *f);
    for (size_t e = 0; e < cnt; e++)
        f[e] = (float)d->w[q][e];
    IrValue *v = ad_const_tensor(c, IR_FLOAT, 2, dims, f, cnt * sizeof *f);
    free(f);
    return ad_cast(c, v, t);
}

/* xr @ W[a] + xi @ W[b] (xi NULL: real input; a zero matrix is no term). */
static IrValue *ad_dft_part(AdCtx *c, const AdDft *d, IrValue *xr, IrValue *xi, int a,
                            int b, int32_t t)
{
    IrValue *ma = ad_dft_matrix(c, d, a, t), *mb = xi ? ad_dft_matrix(c, d, b, t) : NULL;
    IrValue *y = ma ? ad_op2(c, "MatMul", xr, ma) : NULL;
    IrValue *z = mb ? ad_op2(c, "MatMul", xi, mb) : NULL;
    if (y && z)
        return ad_op2(c, "Add", y, z);
    if (y || z)
        return y ? y : z;
    /* every weight is 0 (a transform of nothing): xr @ 0 keeps the shape */
    int64_t dims[2] = {d->j, d->k};
    return ad_op2(c, "MatMul", xr, ad_const_fill(c, t, 2, dims, 0));
}

/* Component `comp` (0 real, 1 imaginary) of x [..., C] without its last
 * axis (rank r). */
static IrValue *ad_dft_comp(AdCtx *c, IrValue *x, int r, int64_t comp)
{
    IrValue *in[2] = {x, ad_const_int_tensor(c, IR_INT64, 0, NULL, &comp, 1)};
    IrNode *k = in[1] && !c->refusal ? ad_node_in(c, c->domain, c->n, "Gather", 2, in, 1)
                                    : NULL;
    if (!k)
        return NULL;
    ad_set_attr_i(c, k, "axis", r - 1);
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

/* Transpose of x by perm[0..r) (no node for the identity). */
static IrValue *ad_dft_perm(AdCtx *c, IrValue *x, int r, const int64_t *perm)
{
    bool same = true;
    for (int i = 0; i < r; i++)
        same = same && perm[i] == i;
    if (same || !x || c->refusal)
        return x;
    IrNode *k = ad_node_in(c, c->domain, c->n, "Transpose", 1, &x, 1);
    if (!k)
        return NULL;
    ad_set_attr_ints(c, k, "perm", (size_t)r, perm);
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

/* Gather of x at the constant int64 indices idx (dims id, rank ir) along
 * axis. */
static IrValue *ad_dft_take(AdCtx *c, IrValue *x, const int64_t *idx, size_t ir,
                            const int64_t *id, size_t n, int64_t axis)
{
    IrValue *in[2] = {x, ad_const_int_tensor(c, IR_INT64, ir, id, idx, n)};
    IrNode *k = x && in[1] && !c->refusal ? ad_node_in(c, c->domain, c->n, "Gather", 2, in, 1)
                                         : NULL;
    if (!k)
        return NULL;
    ad_set_attr_i(c, k, "axis", axis);
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

/* The output [..., K, 2] (or [..., K, 1] for IRFFT) from the real and
 * imaginary parts [..., K]. */
static IrValue *ad_dft_pack(AdCtx *c, IrValue *yr, IrValue *yi, int r)
{
    int64_t last = r;
    IrValue *a = ad_axes_op(c, c->n, "Unsqueeze", yr, 1, &last);
    if (!yi)
        return a;
    IrValue *in[2] = {a, ad_axes_op(c, c->n, "Unsqueeze", yi, 1, &last)};
    IrNode *k = in[0] && in[1] && !c->refusal
                    ? ad_node_in(c, c->domain, c->n, "Concat", 2, in, 1) : NULL;
    if (!k)
        return NULL;
    ad_set_attr_i(c, k, "axis", r);
    return ad_infer(c, k) < 0 ? NULL : k->out[0];
}

/* The transform's sizes from a line of len elements and length n. */
static int ad_dft_sizes(AdCtx *c, AdDft *d, int64_t len, bool onesided)
{
    d->irfft = onesided && d->inverse;
    d->take = d->irfft ? d->n / 2 + 1 : d->n;
    d->j = len < d->take ? len : d->take;
    d->k = onesided && !d->inverse ? d->n / 2 + 1 : d->n;
    if (d->n < 1 || d->j < 1 || d->k > AD_DFT_CAP / d->j)
        return ad_refuse(c, DG_SHAPE, "a transform of length %lld from %lld elements is "
                         "not written as a matrix (at most %lld weights)", (long long)d->n,
                         (long long)len, (long long)AD_DFT_CAP);
    return 0;
}

/* A scalar integer input that must be known (dft_length, frame_step,
 * frame_length); *v keeps dflt when the input is absent. */
static int ad_dft_scalar(AdCtx *c, size_t i, const char *what, int64_t *v)
{
    IrValue *in = ad_in(c, i);
    int64_t *vals;
    size_t n;
    if (!in)
        return 0;
    if (!ad_const_ints(in, &vals, &n))
        return ad_refuse(c, DG_NOT_CONSTANT, "%s '%s' must be a constant: the twiddle "
                         "factors are built from it", what, in->name);
    bool one = n == 1;
    if (one)
        *v = vals[0];
    free(vals);
    return one ? 0 : ad_refuse(c, DG_ATTRIBUTE, "%s '%s' is not one value", what, in->name);
}

/* DFT-17 below 17: the line along `axis` moves last, is cropped to the
 * elements the transform reads, and is multiplied by the twiddle matrices
 * (cos and sin of 2 pi k m / n in double, stored in the input's type);
 * zero padding needs no element (its rows would be 0); IRFFT's
 * conjugate-symmetric extension is folded into the weights. A MatMul sums
 * in another order than an FFT, which the spec leaves open (issue 20). */
static int ad_dft_below_17(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int r = ad_rank(x);
    int32_t t = ad_elem(x);
    int64_t axis = ad_attr_i(c, "axis"), nc = r > 0 ? ad_dim(x, r - 1) : -1;
    AdDft d = {.inverse = ad_attr_i(c, "inverse") != 0};
    bool onesided = ad_attr_i(c, "onesided") != 0;
    if (r < 2 || (nc != 1 && nc != 2) || !t)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the input's rank, type and last dim (1 or 2) "
                         "must be known");
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis > r - 2)
        return ad_refuse(c, DG_ATTRIBUTE, "axis %lld is out of range", (long long)axis);
    int64_t len = ad_dim(x, (int)axis);
    if (len < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the signal length (dim %lld) is unknown",
                         (long long)axis);
    d.n = d.inverse && onesided ? 2 * (len - 1) : len;
    if (ad_dft_scalar(c, 1, "dft_length", &d.n) < 0 || ad_dft_sizes(c, &d, len, onesided) < 0)
        return -1;
    if (onesided && !d.inverse && nc == 2)
        return ad_refuse(c, DG_ATTRIBUTE, "a onesided forward transform needs a real input");
    int64_t perm[AD_MAX_DFT_RANK], back[AD_MAX_DFT_RANK], idx_n = d.j;
    if (r > AD_MAX_DFT_RANK)
        return ad_refuse(c, DG_SHAPE, "rank %d is above %d", r, AD_MAX_DFT_RANK);
    for (int i = 0, k = 0; i < r - 1; i++)
        if (i != axis)
            perm[k++] = i;
    perm[r - 2] = axis;
    for (int i = 0; i < r - 1; i++)
        back[perm[i]] = i;
    back[r - 1] = r - 1;
    ad_dft_fill(&d);
    IrValue *xr = ad_dft_perm(c, ad_dft_comp(c, x, r, 0), r - 1, perm);
    IrValue *xi = nc == 2 ? ad_dft_perm(c, ad_dft_comp(c, x, r, 1), r - 1, perm) : NULL;
    if (d.j < len) {
        int64_t *idx = mem_array((size_t)d.j, sizeof *idx);
        for (int64_t m = 0; m < d.j; m++)
            idx[m] = m;
        xr = ad_dft_take(c, xr, idx, 1, &idx_n, (size_t)d.j, r - 2);
        xi = xi ? ad_dft_take(c, xi, idx, 1, &idx_n, (size_t)d.j, r - 2) : NULL;
        free(idx);
    }
    IrValue *yr = ad_dft_part(c, &d, xr, xi, 0, 1, t);
    IrValue *yi = d.irfft ? NULL : ad_dft_part(c, &d, xr, xi, 2, 3, t);
    ad_dft_free(&d);
    IrValue *y = ad_dft_perm(c, ad_dft_pack(c, yr, yi, r - 1), r, back);
    if (!y || !y->producer)
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "the rewrite could not be built");
    if (y == x)
        return ad_refuse(c, DG_INTERNAL, "the rewrite built nothing");
    ad_replace(c, y->producer);
    return 0;
}

/* STFT-17 below 17: frames gathered by a constant index table [frames,
 * frame_length] (frame f starts at f * frame_step), multiplied by the
 * window when there is one, then the forward transform of each frame as
 * DFT's: [batch, frames, bins, 2]. */
static int ad_stft_below_17(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *win = ad_in(c, 2);
    int32_t t = ad_elem(x);
    int64_t len = ad_dim(x, 1), nc = ad_dim(x, 2), step = 0, fl = -1;
    bool onesided = ad_attr_i(c, "onesided") != 0;
    if (ad_rank(x) != 3 || len < 0 || (nc != 1 && nc != 2) || !t)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the signal [batch, length, 1 or 2] needs its "
                         "length, last dim and type known");
    if (ad_dft_scalar(c, 1, "frame_step", &step) < 0 ||
        ad_dft_scalar(c, 3, "frame_length", &fl) < 0)
        return -1;
    if (!ad_in(c, 1) || step < 1)
        return ad_refuse(c, DG_ATTRIBUTE, "frame_step must be a positive constant");
    if (fl < 0)
        fl = win ? ad_dim(win, 0) : len;
    if (fl < 1 || fl > len)
        return ad_refuse(c, fl < 0 ? DG_SHAPE_UNKNOWN : DG_SHAPE, "the frame length %lld "
                         "does not fit the signal length %lld", (long long)fl, (long long)len);
    if (onesided && nc == 2)
        return ad_refuse(c, DG_ATTRIBUTE, "a onesided STFT needs a real signal");
    int64_t frames = (len - fl) / step + 1, id[2] = {frames, fl};
    AdDft d = {.n = fl};
    if (ad_dft_sizes(c, &d, fl, onesided) < 0)
        return -1;
    if (frames > AD_DFT_CAP / fl)
        return ad_refuse(c, DG_SHAPE, "%lld frames of %lld are too many to index",
                         (long long)frames, (long long)fl);
    int64_t *idx = mem_array((size_t)(frames * fl), sizeof *idx);
    for (int64_t f = 0; f < frames; f++)
        for (int64_t m = 0; m < fl; m++)
            idx[f * fl + m] = f * step + m;
    ad_dft_fill(&d);
    IrValue *xr = ad_dft_take(c, ad_dft_comp(c, x, 3, 0), idx, 2, id, (size_t)(frames * fl), 1);
    IrValue *xi = nc == 2 ? ad_dft_take(c, ad_dft_comp(c, x, 3, 1), idx, 2, id,
                                        (size_t)(frames * fl), 1) : NULL;
    free(idx);
    if (win) {
        xr = ad_op2(c, "Mul", xr, win);
        xi = xi ? ad_op2(c, "Mul", xi, win) : NULL;
    }
    IrValue *yr = ad_dft_part(c, &d, xr, xi, 0, 1, t);
    IrValue *yi = ad_dft_part(c, &d, xr, xi, 2, 3, t);
    ad_dft_free(&d);
    IrValue *y = ad_dft_pack(c, yr, yi, 3);
    if (!y || !y->producer)
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "the rewrite could not be built");
    ad_replace(c, y->producer);
    return 0;
}

static const AdEntry ad_signal[] = {
    /* signal */
    AD_UP("DFT", 17, 20, AD_ATTR_INPUT, ad_dft_17_20),
    AD_DOWN("DFT", 17, 20, AD_ATTR_INPUT, ad_dft_20_17),
    AD_GONE("DFT", 17, AD_EXPAND, ad_dft_below_17),
    AD_GONE("STFT", 17, AD_EXPAND, ad_stft_below_17),
    AD_GONE("HannWindow", 17, AD_EXPAND, ad_win_below_17),
    AD_GONE("HammingWindow", 17, AD_EXPAND, ad_win_below_17),
    AD_GONE("BlackmanWindow", 17, AD_EXPAND, ad_win_below_17),
};

const AdFamily ad_family_signal = {"signal", ad_signal, sizeof ad_signal / sizeof ad_signal[0]};
