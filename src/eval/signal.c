/* Signal processing kernels (ai.onnx): DFT, STFT, HannWindow,
 * HammingWindow, BlackmanWindow, MelWeightMatrix.
 *
 * DFT-17 takes the axis as an attribute (default 1), DFT-20 as an optional
 * scalar input (default -2); both count a negative axis from the back of
 * the full rank, so the trailing real/imaginary dimension is never an
 * axis. Input is real (last dim 1) or complex (last dim 2); dft_length
 * crops or zero-pads the signal along the axis. onesided with a forward
 * transform keeps bins [0, n/2]; onesided with inverse=1 is IRFFT: the
 * n/2+1 given bins are extended by conjugate symmetry (n defaults to
 * 2*(len-1)) and the real part is returned with a last dim of 1.
 *
 * Transforms run in double: radix-2 FFT for powers of two, the direct sum
 * for short lengths, Bluestein's chirp-z (through power-of-two FFTs) for
 * the other lengths, so no input length makes the kernel quadratic.
 *
 * Windows follow the spec formulas with N = size (periodic) or size - 1
 * (symmetric); a symmetric window of size 1 is [1]. MelWeightMatrix
 * follows the spec's construction: mel edges computed in the input's
 * float precision, bins floor((dft_length + 1) * hz / sample_rate),
 * triangles written left to right. */
#include <math.h>
#include <string.h>

#include "eval/eval.h"

static const double ev_sig_pi = 3.14159265358979323846;

/* ---- complex transforms ---------------------------------------------- */

typedef struct EvFft {
    size_t n;
    double *re, *im;        /* work arrays of n */
    double *cs, *sn;        /* cos/sin(2 pi j / n) */
    /* Bluestein */
    size_t m;
    double *wre, *wim;      /* chirp exp(-pi i k^2 / n), k < n */
    double *bre, *bim;      /* FFT of the conjugate chirp, length m */
    double *are, *aim;      /* length m */
    struct EvFft *sub;      /* plan of length m */
} EvFft;

static bool ev_sig_pow2(size_t n)
{
    return n && !(n & (n - 1));
}

static int ev_fft_plan(EvCtx *c, EvFft *p, size_t n);

/* In-place radix-2 transform; sign -1 forward, +1 backward (unscaled). */
static void ev_fft_radix2(const EvFft *p, double *re, double *im, int sign)
{
    size_t n = p->n;
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j |= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t half = len / 2, step = n / len;
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < half; k++) {
                double wr = p->cs[k * step], wi = sign * p->sn[k * step];
                double *ar = re + i + k, *ai = im + i + k;
                double br = ar[half] * wr - ai[half] * wi;
                double bi = ar[half] * wi + ai[half] * wr;
                ar[half] = *ar - br;
                ai[half] = *ai - bi;
                *ar += br;
                *ai += bi;
            }
    }
}

static void ev_fft_direct(const EvFft *p, double *re, double *im, int sign)
{
    size_t n = p->n;
    for (size_t k = 0; k < n; k++) {
        double sr = 0, si = 0;
        for (size_t t = 0, j = 0; t < n; t++) {
            sr += re[t] * p->cs[j] - im[t] * sign * p->sn[j];
            si += re[t] * sign * p->sn[j] + im[t] * p->cs[j];
            j += k;
            if (j >= n)
                j -= n;
        }
        p->re[k] = sr;
        p->im[k] = si;
    }
    memcpy(re, p->re, n * sizeof *re);
    memcpy(im, p->im, n * sizeof *im);
}

/* Bluestein, forward only: X[k] = w[k] * sum_t (x[t] w[t]) conj(w[k - t])
 * with the chirp w[j] = exp(-pi i j^2 / n). */
static void ev_fft_bluestein(const EvFft *p, double *re, double *im)
{
    size_t n = p->n, m = p->m;
    for (size_t t = 0; t < m; t++) {
        if (t < n) {
            double wr = p->wre[t], wi = p->wim[t];
            p->are[t] = re[t] * wr - im[t] * wi;
            p->aim[t] = re[t] * wi + im[t] * wr;
        } else {
            p->are[t] = p->aim[t] = 0;
        }
    }
    ev_fft_radix2(p->sub, p->are, p->aim, -1);
    for (size_t t = 0; t < m; t++) {
        double br = p->bre[t], bi = p->bim[t];
        double r = p->are[t] * br - p->aim[t] * bi;
        p->aim[t] = p->are[t] * bi + p->aim[t] * br;
        p->are[t] = r;
    }
    ev_fft_radix2(p->sub, p->are, p->aim, 1);
    for (size_t k = 0; k < n; k++) {
        double ar = p->are[k] / (double)m, ai = p->aim[k] / (double)m;
        double wr = p->wre[k], wi = p->wim[k];
        re[k] = ar * wr - ai * wi;
        im[k] = ar * wi + ai * wr;
    }
}

/* sign -1 forward, +1 backward (unscaled); the backward transform of
 * Bluestein's is conj(forward(conj(x))). */
static void ev_fft_run(const EvFft *p, double *re, double *im, int sign)
{
    if (ev_sig_pow2(p->n)) {
        ev_fft_radix2(p, re, im, sign);
    } else if (p->m == 0) {
        ev_fft_direct(p, re, im, sign);
    } else {
        for (size_t k = 0; sign > 0 && k < p->n; k++)
            im[k] = -im[k];
        ev_fft_bluestein(p, re, im);
        for (size_t k = 0; sign > 0 && k < p->n; k++)
            im[k] = -im[k];
    }
}

static int ev_fft_bluestein_plan(EvCtx *c, EvFft *p)
{
    size_t n = p->n, m = 1, k2 = 0;
    while (m < 2 * n - 1)
        m <<= 1;
    p->m = m;
    p->wre = ev_tmp(c, n, sizeof(double));
    p->wim = ev_tmp(c, n, sizeof(double));
    p->bre = ev_tmp(c, m, sizeof(double));
    p->bim = ev_tmp(c, m, sizeof(double));
    p->are = ev_tmp(c, m, sizeof(double));
    p->aim = ev_tmp(c, m, sizeof(double));
    p->sub = ev_tmp(c, 1, sizeof *p->sub);
    if (!p->wre || !p->wim || !p->bre || !p->bim || !p->are || !p->aim || !p->sub)
        return ev_fail(c, "transform too large");
    for (size_t k = 0; k < n; k++) {
        /* k^2 mod 2n, kept exact; angle -pi k^2 / n */
        double a = -ev_sig_pi * (double)k2 / (double)n;
        p->wre[k] = cos(a);
        p->wim[k] = sin(a);
        k2 += 2 * k + 1;
        while (k2 >= 2 * n)
            k2 -= 2 * n;
    }
    for (size_t t = 0; t < n; t++) {
        p->bre[t] = p->wre[t];
        p->bim[t] = -p->wim[t];
        if (t) {
            p->bre[m - t] = p->wre[t];
            p->bim[m - t] = -p->wim[t];
        }
    }
    if (ev_fft_plan(c, p->sub, m) < 0)
        return -1;
    ev_fft_radix2(p->sub, p->bre, p->bim, -1);
    return 0;
}

static int ev_fft_plan(EvCtx *c, EvFft *p, size_t n)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->re = ev_tmp(c, n, sizeof(double));
    p->im = ev_tmp(c, n, sizeof(double));
    p->cs = ev_tmp(c, n, sizeof(double));
    p->sn = ev_tmp(c, n, sizeof(double));
    if (!p->re || !p->im || !p->cs || !p->sn)
        return ev_fail(c, "transform too large");
    for (size_t j = 0; j < n; j++) {
        double a = 2 * ev_sig_pi * (double)j / (double)n;
        p->cs[j] = cos(a);
        p->sn[j] = sin(a);
    }
    if (!ev_sig_pow2(n) && n > 64)
        return ev_fft_bluestein_plan(c, p);
    return 0;
}

/* ---- DFT ------------------------------------------------------------- */

static bool ev_sig_float(int32_t dt)
{
    return dt == IR_FLOAT || dt == IR_DOUBLE || dt == IR_FLOAT16 ||
           dt == IR_BFLOAT16;
}

/* A scalar integer input (NULL allowed: *present false). */
static int ev_sig_scalar(EvCtx *c, size_t i, bool *present, int64_t *v)
{
    EvValue *t = ev_in(c, i);
    *present = t != NULL;
    if (!t)
        return 0;
    if (t->kind != EV_TENSOR || t->numel != 1 || t->rank > 1 ||
        (t->dtype != IR_INT32 && t->dtype != IR_INT64))
        return ev_fail(c, "input %zu must be an integer scalar", i);
    *v = ev_get_i(t, 0);
    return 0;
}

typedef struct EvDft {
    size_t axis, len, n, outlen, nc;   /* nc: input components */
    bool inverse, onesided;
} EvDft;

static int ev_dft_setup(EvCtx *c, const EvValue *x, EvDft *d)
{
    int64_t axis = -2, n = 0;
    bool has_n, has_axis;
    size_t r = x->rank;

    d->inverse = ev_attr_i(c, "inverse") != 0;
    d->onesided = ev_attr_i(c, "onesided") != 0;
    if (ev_sig_scalar(c, 1, &has_n, &n) < 0)
        return -1;
    if (c->ver < 20)
        axis = ev_attr_i_or(c, "axis", 1);
    else if (ev_sig_scalar(c, 2, &has_axis, &axis) < 0)
        return -1;
    if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
        return ev_fail(c, "input must end in a dim of 1 (real) or 2 (complex)");
    if (!ev_sig_float(x->dtype))
        return ev_fail(c, "unsupported input type %d", x->dtype);
    if (axis < -(int64_t)r || axis > (int64_t)r - 2 || axis == -1)
        return ev_fail(c, "axis %lld out of range for rank %zu", (long long)axis, r);
    d->axis = (size_t)(axis < 0 ? axis + (int64_t)r : axis);
    d->len = (size_t)x->dims[d->axis];
    d->nc = (size_t)x->dims[r - 1];
    if (d->onesided && !d->inverse && d->nc == 2)
        return ev_fail(c, "onesided forward transform needs real input");
    if (!has_n)
        n = d->onesided && d->inverse ? 2 * ((int64_t)d->len - 1) : (int64_t)d->len;
    if (n < 1)
        return ev_fail(c, "dft_length %lld must be positive", (long long)n);
    d->n = (size_t)n;
    d->outlen = d->onesided && !d->inverse ? d->n / 2 + 1 : d->n;
    return 0;
}

/* Loads one line (offset base, element stride st) into re/im with the
 * transform's zero padding / Hermitian extension. */
static void ev_dft_load(const EvDft *d, const EvValue *x, size_t base, size_t st,
                        double *re, double *im)
{
    size_t n = d->n, take = d->onesided && d->inverse ? n / 2 + 1 : n;
    for (size_t k = 0; k < n; k++) {
        re[k] = im[k] = 0;
        if (k < take && k < d->len) {
            size_t e = (base + k * st) * d->nc;
            re[k] = ev_get_f(x, e);
            im[k] = d->nc == 2 ? ev_get_f(x, e + 1) : 0.0;
        }
    }
    if (d->onesided && d->inverse)
        for (size_t k = take; k < n; k++) {
            re[k] = re[n - k];
            im[k] = -im[n - k];
        }
}

static int ev_dft(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *y;
    EvDft d = { 0 };
    EvFft p;
    int64_t dims[EV_MAX_RANK];
    bool irfft;

    if (!x || ev_dft_setup(c, x, &d) < 0)
        return -1;
    irfft = d.onesided && d.inverse;
    memcpy(dims, x->dims, x->rank * sizeof *dims);
    dims[d.axis] = (int64_t)d.outlen;
    dims[x->rank - 1] = irfft ? 1 : 2;
    y = ev_out_tensor(c, 0, x->dtype, x->rank, dims);
    if (!y)
        return -1;
    if (y->numel == 0)
        return 0;
    if (ev_fft_plan(c, &p, d.n) < 0)
        return -1;
    size_t outer = ev_dims_prod(x->dims, 0, d.axis);
    size_t inner = ev_dims_prod(x->dims, d.axis + 1, x->rank - 1);
    double *re = ev_tmp(c, d.n, sizeof *re), *im = ev_tmp(c, d.n, sizeof *im);
    size_t oc = irfft ? 1 : 2;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            ev_dft_load(&d, x, o * d.len * inner + i, inner, re, im);
            ev_fft_run(&p, re, im, d.inverse ? 1 : -1);
            for (size_t k = 0; k < d.outlen; k++) {
                size_t e = ((o * d.outlen + k) * inner + i) * oc;
                double sc = d.inverse ? 1.0 / (double)d.n : 1.0;
                ev_set_f(y, e, re[k] * sc);
                if (!irfft)
                    ev_set_f(y, e + 1, im[k] * sc);
            }
        }
    return 0;
}

/* ---- STFT ------------------------------------------------------------ */

static int ev_stft(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *w = ev_in(c, 2), *y;
    bool onesided = ev_attr_i(c, "onesided") != 0, has_step, has_fl;
    int64_t step = 0, fl = 0, dims[4];
    size_t len, nc, frames, bins;
    EvFft p;

    if (!x || ev_sig_scalar(c, 1, &has_step, &step) < 0 ||
        ev_sig_scalar(c, 3, &has_fl, &fl) < 0)
        return -1;
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return ev_fail(c, "signal must be [batch, length, 1 or 2]");
    if (!ev_sig_float(x->dtype))
        return ev_fail(c, "unsupported signal type %d", x->dtype);
    if (!has_step || step < 1)
        return ev_fail(c, "frame_step must be a positive scalar");
    if (w && (w->kind != EV_TENSOR || w->rank != 1 || !ev_sig_float(w->dtype)))
        return ev_fail(c, "window must be a 1-D float tensor");
    len = (size_t)x->dims[1];
    nc = (size_t)x->dims[2];
    if (!has_fl)
        fl = w ? w->dims[0] : (int64_t)len;
    if (w && w->dims[0] != fl)
        return ev_fail(c, "window length %lld differs from frame_length %lld",
                       (long long)w->dims[0], (long long)fl);
    if (fl < 1 || (size_t)fl > len)
        return ev_fail(c, "frame_length %lld does not fit signal length %zu",
                       (long long)fl, len);
    if (onesided && nc == 2)
        return ev_fail(c, "onesided output needs a real signal");
    frames = (len - (size_t)fl) / (size_t)step + 1;
    bins = onesided ? (size_t)fl / 2 + 1 : (size_t)fl;
    dims[0] = x->dims[0];
    dims[1] = (int64_t)frames;
    dims[2] = (int64_t)bins;
    dims[3] = 2;
    y = ev_out_tensor(c, 0, x->dtype, 4, dims);
    if (!y)
        return -1;
    if (y->numel == 0)
        return 0;
    if (ev_fft_plan(c, &p, (size_t)fl) < 0)
        return -1;
    double *re = ev_tmp(c, (size_t)fl, sizeof *re), *im = ev_tmp(c, (size_t)fl, sizeof *im);
    for (size_t b = 0, e = 0; b < (size_t)x->dims[0]; b++)
        for (size_t f = 0; f < frames; f++) {
            for (size_t t = 0; t < (size_t)fl; t++) {
                size_t s = (b * len + f * (size_t)step + t) * nc;
                double wv = w ? ev_get_f(w, t) : 1.0;
                re[t] = ev_get_f(x, s) * wv;
                im[t] = nc == 2 ? ev_get_f(x, s + 1) * wv : 0.0;
            }
            ev_fft_run(&p, re, im, -1);
            for (size_t k = 0; k < bins; k++, e += 2) {
                ev_set_f(y, e, re[k]);
                ev_set_f(y, e + 1, im[k]);
            }
        }
    return 0;
}

/* ---- windows --------------------------------------------------------- */

static bool ev_sig_out_type_ok(int64_t dt)
{
    switch (dt) {
    case IR_UINT8: case IR_UINT16: case IR_UINT32: case IR_UINT64:
    case IR_INT8: case IR_INT16: case IR_INT32: case IR_INT64:
    case IR_FLOAT16: case IR_FLOAT: case IR_DOUBLE: case IR_BFLOAT16:
        return true;
    default:
        return false;
    }
}

enum { EV_WIN_HANN, EV_WIN_HAMMING, EV_WIN_BLACKMAN };

static int ev_window(EvCtx *c, int kind)
{
    int64_t size = 0, dt = ev_attr_i(c, "output_datatype");
    bool periodic = ev_attr_i(c, "periodic") != 0, has;
    EvValue *y;
    double denom;

    if (ev_sig_scalar(c, 0, &has, &size) < 0)
        return -1;
    if (!has || size < 0)
        return ev_fail(c, "size must be a non-negative scalar");
    if (!ev_sig_out_type_ok(dt))
        return ev_fail(c, "unsupported output_datatype %lld", (long long)dt);
    y = ev_out_tensor(c, 0, (int32_t)dt, 1, &size);
    if (!y)
        return -1;
    denom = (double)(periodic ? size : size - 1);
    for (int64_t i = 0; i < size; i++) {
        double a = denom > 0 ? 2 * ev_sig_pi * (double)i / denom : 0.0, v;
        if (kind == EV_WIN_HANN)
            v = 0.5 - 0.5 * cos(a);
        else if (kind == EV_WIN_HAMMING)
            v = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
        else
            v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        if (denom <= 0)
            v = 1.0;
        ev_set_f(y, (size_t)i, v);
    }
    return 0;
}

static int ev_hannwindow(EvCtx *c)
{
    return ev_window(c, EV_WIN_HANN);
}

static int ev_hammingwindow(EvCtx *c)
{
    return ev_window(c, EV_WIN_HAMMING);
}

static int ev_blackmanwindow(EvCtx *c)
{
    return ev_window(c, EV_WIN_BLACKMAN);
}

/* ---- MelWeightMatrix ------------------------------------------------- */

/* Hertz -> mel in the edges' precision (float unless double). */
static double ev_mel(bool dbl, double hz)
{
    if (dbl)
        return 2595.0 * log10(1.0 + hz / 700.0);
    return (double)(2595.0f * log10f(1.0f + (float)hz / 700.0f));
}

static int ev_melweightmatrix(EvCtx *c)
{
    int64_t nmel = 0, dft = 0, rate = 0, dt = ev_attr_i(c, "output_datatype");
    EvValue *lo = ev_in_tensor(c, 3), *hi = ev_in_tensor(c, 4), *y;
    bool h1, h2, h3, dbl;
    double lmel, step;
    int64_t *bin;

    if (ev_sig_scalar(c, 0, &h1, &nmel) < 0 || ev_sig_scalar(c, 1, &h2, &dft) < 0 ||
        ev_sig_scalar(c, 2, &h3, &rate) < 0 || !lo || !hi)
        return -1;
    if (!h1 || !h2 || !h3 || nmel < 1 || dft < 1 || rate < 1)
        return ev_fail(c, "num_mel_bins, dft_length and sample_rate must be positive");
    if (nmel > ((int64_t)1 << 30) || dft > ((int64_t)1 << 40))
        return ev_fail(c, "num_mel_bins or dft_length too large");
    if (lo->numel != 1 || hi->numel != 1 || !ev_sig_float(lo->dtype))
        return ev_fail(c, "edge frequencies must be float scalars");
    if (!ev_sig_out_type_ok(dt))
        return ev_fail(c, "unsupported output_datatype %lld", (long long)dt);
    int64_t dims[2] = { dft / 2 + 1, nmel };
    y = ev_out_tensor(c, 0, (int32_t)dt, 2, dims);
    if (!y)
        return -1;
    dbl = lo->dtype == IR_DOUBLE;
    lmel = ev_mel(dbl, ev_get_f(lo, 0));
    step = ev_mel(dbl, ev_get_f(hi, 0)) - lmel;
    step = dbl ? step / (double)(nmel + 2) : (double)((float)step / (float)(nmel + 2));
    bin = ev_tmp(c, (size_t)nmel + 2, sizeof *bin);
    for (int64_t i = 0; i < nmel + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + lmel) / 2595.0) - 1.0);
        double b = floor((double)(dft + 1) * hz / (double)rate);
        if (!(b >= 0 && b < (double)dims[0]))
            return ev_fail(c, "mel edge %lld falls outside the %lld spectrogram bins",
                           (long long)i, (long long)dims[0]);
        bin[i] = (int64_t)b;
    }
    for (int64_t i = 0; i < nmel; i++) {
        int64_t l = bin[i], m = bin[i + 1], h = bin[i + 2];
        if (m == l)
            ev_set_f(y, (size_t)(m * nmel + i), 1.0);
        for (int64_t j = l; m > l && j <= m; j++)
            ev_set_f(y, (size_t)(j * nmel + i), (double)(j - l) / (double)(m - l));
        for (int64_t j = m; h > m && j < h; j++)
            ev_set_f(y, (size_t)(j * nmel + i), (double)(h - j) / (double)(h - m));
    }
    return 0;
}

const EvOp ev_ops_signal[] = {
    { "", "DFT", ev_dft },
    { "", "STFT", ev_stft },
    { "", "HannWindow", ev_hannwindow },
    { "", "HammingWindow", ev_hammingwindow },
    { "", "BlackmanWindow", ev_blackmanwindow },
    { "", "MelWeightMatrix", ev_melweightmatrix },
    { NULL, NULL, NULL }
};
