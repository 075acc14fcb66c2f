/* Recurrent layers: RNN, GRU and LSTM (ai.onnx, every version).
 *
 * All three share one driver: the attributes and shapes are read into an
 * EvRnn, the input projection X*W^T + Wb of every time step is computed
 * once per direction (ev_sgemm for float, cblas_dgemm otherwise), then
 * the recurrence runs step by step in double, with H*R^T + Rb as one dgemm
 * over the batch per step.
 *
 * Subtle points:
 * - Gate order in W/R/B: RNN i; GRU z, r, h; LSTM i, o, f, c. The peephole
 *   P is i, o, f.
 * - GRU h gate: with linear_before_reset = 0 the recurrent term is
 *   (r . H) * Rh^T + Rbh, otherwise r . (H * Rh^T + Rbh). GRU-1 has no such
 *   attribute (always 0). opset 1's output_sequence only says whether Y is
 *   wanted; Y is produced whenever the node names it.
 * - sequence_lens: batch entry b runs len[b] steps; Y rows past len[b] stay
 *   zero, Y_h/Y_c hold the state after the last step run (the initial state
 *   when len[b] is 0). A reverse direction walks t = len[b]-1 down to 0.
 * - activations: n per direction (RNN 1, GRU 2, LSTM 3); a list of exactly
 *   n is used for both directions of a bidirectional layer, and extra
 *   entries are ignored (RNN's default lists two Tanh for one direction).
 *   activation_alpha/beta are consumed in order by the activations that
 *   take them; missing ones get the defaults of the matching ONNX ops.
 * - clip bounds every activation's input to [-clip, clip].
 * - layout 1 (opset 14+) puts batch first in X, initial_h/c, Y, Y_h, Y_c. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "eval/eval.h"
#include "eval/kernels.h"

enum { EV_RNN_SIMPLE, EV_RNN_GRU, EV_RNN_LSTM };

typedef double (*EvActFn)(double x, double alpha, double beta);

typedef struct EvAct {
    EvActFn fn;
    double alpha, beta;
} EvAct;

typedef struct EvRnn {
    int kind;
    size_t gates;        /* blocks of hidden_size rows in W and R */
    size_t n_act;        /* activations per direction */
    size_t nd, seq, batch, in, hid;
    int64_t layout;
    bool reverse_only, lbr, input_forget, has_clip;
    double clip;
    EvAct act[2][3];
    int64_t *lens;       /* batch entries */
    EvValue *x, *w, *r, *b, *h0, *c0, *p;
    EvValue *y, *yh, *yc;
} EvRnn;

/* ---- activations ------------------------------------------------------ */

static double ev_act_relu(double x, double a, double b) { return x > 0 ? x : 0; }
static double ev_act_tanh(double x, double a, double b) { return tanh(x); }
static double ev_act_sigmoid(double x, double a, double b)
{
    return 1.0 / (1.0 + exp(-x));
}
static double ev_act_affine(double x, double a, double b) { return a * x + b; }
static double ev_act_leaky(double x, double a, double b)
{
    return x >= 0 ? x : a * x;
}
static double ev_act_thresh(double x, double a, double b)
{
    return x > a ? x : 0;
}
static double ev_act_scaledtanh(double x, double a, double b)
{
    return a * tanh(b * x);
}
static double ev_act_hardsigmoid(double x, double a, double b)
{
    double v = a * x + b;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}
static double ev_act_elu(double x, double a, double b)
{
    return x >= 0 ? x : a * (exp(x) - 1.0);
}
static double ev_act_softsign(double x, double a, double b)
{
    return x / (1.0 + fabs(x));
}
static double ev_act_softplus(double x, double a, double b)
{
    /* log(1 + e^x) without overflow for large x */
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

typedef struct EvActDef {
    const char *name;
    EvActFn fn;
    int n_alpha, n_beta; /* how many of each the function takes (0 or 1) */
    double alpha, beta;  /* defaults */
} EvActDef;

static const EvActDef ev_act_defs[] = {
    {"Relu", ev_act_relu, 0, 0, 0, 0},
    {"Tanh", ev_act_tanh, 0, 0, 0, 0},
    {"Sigmoid", ev_act_sigmoid, 0, 0, 0, 0},
    {"Affine", ev_act_affine, 1, 1, 1.0, 0.0},
    {"LeakyRelu", ev_act_leaky, 1, 0, 0.01, 0},
    {"ThresholdedRelu", ev_act_thresh, 1, 0, 1.0, 0},
    {"ScaledTanh", ev_act_scaledtanh, 1, 1, 1.0, 1.0},
    {"HardSigmoid", ev_act_hardsigmoid, 1, 1, 0.2, 0.5},
    {"Elu", ev_act_elu, 1, 0, 1.0, 0},
    {"Softsign", ev_act_softsign, 0, 0, 0, 0},
    {"Softplus", ev_act_softplus, 0, 0, 0, 0},
};

static const EvActDef *ev_act_find(const IrBytes *s)
{
    for (size_t k = 0; k < sizeof ev_act_defs / sizeof ev_act_defs[0]; k++) {
        const char *n = ev_act_defs[k].name;
        /* case-insensitive: exporters disagree on "Relu" vs "relu" */
        if (strlen(n) == s->len && s->len &&
            !strncasecmp(n, (const char *)s->data, s->len))
            return &ev_act_defs[k];
    }
    return NULL;
}

static double ev_rnn_act(const EvRnn *r, const EvAct *a, double x)
{
    if (r->has_clip)
        x = x < -r->clip ? -r->clip : x > r->clip ? r->clip : x;
    return a->fn(x, a->alpha, a->beta);
}

/* Fills r->act from activations / activation_alpha / activation_beta. */
static int ev_rnn_acts(EvCtx *c, EvRnn *r)
{
    static const char *const dflt[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const IrBytes *names;
    long n = ev_attr_strings(c, "activations", &names);
    const float *al = NULL, *be = NULL;
    long n_al = ev_attr_floats(c, "activation_alpha", &al);
    long n_be = ev_attr_floats(c, "activation_beta", &be);
    long k_al = 0, k_be = 0;
    if (n < 0) {
        for (size_t d = 0; d < r->nd; d++)
            for (size_t k = 0; k < r->n_act; k++) {
                IrBytes s = {strlen(dflt[r->kind][k]),
                             (uint8_t *)dflt[r->kind][k]};
                const EvActDef *def = ev_act_find(&s);
                r->act[d][k] = (EvAct){def->fn, def->alpha, def->beta};
            }
        return 0;
    }
    size_t per_dir = r->n_act;
    bool shared = (size_t)n < per_dir * r->nd;
    if ((size_t)n < per_dir)
        return ev_fail(c, "activations lists %ld functions, %zu needed", n,
                       per_dir * r->nd);
    for (size_t d = 0; d < (shared ? 1 : r->nd); d++)
        for (size_t k = 0; k < per_dir; k++) {
            const IrBytes *s = &names[d * per_dir + k];
            const EvActDef *def = ev_act_find(s);
            if (!def)
                return ev_fail(c, "unsupported activation '%.*s'",
                               (int)(s->len > 64 ? 64 : s->len),
                               s->data ? (const char *)s->data : "");
            EvAct a = {def->fn, def->alpha, def->beta};
            if (def->n_alpha && k_al < n_al)
                a.alpha = al[k_al++];
            if (def->n_beta && k_be < n_be)
                a.beta = be[k_be++];
            r->act[d][k] = a;
            if (shared && r->nd == 2)
                r->act[1][k] = a;
        }
    return 0;
}

/* ---- set-up ------------------------------------------------------------ */

/* Checks that optional input t has exactly the dims d0, d1[, d2]. */
static int ev_rnn_shape(EvCtx *c, const EvValue *t, const char *what,
                        size_t rank, size_t d0, size_t d1, size_t d2)
{
    size_t want[3] = {d0, d1, d2};
    if (t->kind != EV_TENSOR || t->rank != rank)
        return ev_fail(c, "%s must have rank %zu", what, rank);
    for (size_t k = 0; k < rank; k++)
        if ((uint64_t)t->dims[k] != want[k])
            return ev_fail(c, "%s dim %zu is %lld, expected %zu", what, k,
                           (long long)t->dims[k], want[k]);
    return 0;
}

static EvValue *ev_rnn_opt_in(EvCtx *c, size_t i, int32_t dtype,
                              const char *what, bool *bad)
{
    EvValue *v = ev_in(c, i);
    if (!v)
        return NULL;
    if (v->kind != EV_TENSOR || v->dtype != dtype) {
        *bad = true;
        ev_fail(c, "%s must be a tensor of X's type", what);
        return NULL;
    }
    return v;
}

static int ev_rnn_direction(EvCtx *c, EvRnn *r)
{
    const char *dir = ev_attr_s_or(c, "direction", "forward");
    if (!dir)
        return ev_fail(c, "bad direction attribute");
    if (!strcmp(dir, "forward") || !strcmp(dir, "foward"))
        r->nd = 1;
    else if (!strcmp(dir, "reverse")) {
        r->nd = 1;
        r->reverse_only = true;
    } else if (!strcmp(dir, "bidirectional"))
        r->nd = 2;
    else
        return ev_fail(c, "unknown direction '%s'", dir);
    return 0;
}

/* Reads X, W, R, B, sequence_lens, initial states and attributes. */
static int ev_rnn_setup(EvCtx *c, EvRnn *r)
{
    static const size_t gates[3] = {1, 3, 4};
    r->gates = gates[r->kind];
    r->n_act = r->kind == EV_RNN_SIMPLE ? 1 : r->kind == EV_RNN_GRU ? 2 : 3;
    if (ev_rnn_direction(c, r))
        return -1;
    r->layout = c->ver >= 14 ? ev_attr_i(c, "layout") : 0;
    if (r->layout != 0 && r->layout != 1)
        return ev_fail(c, "layout must be 0 or 1");
    r->lbr = r->kind == EV_RNN_GRU && c->ver >= 3 &&
             ev_attr_i(c, "linear_before_reset") != 0;
    r->input_forget = r->kind == EV_RNN_LSTM &&
                      ev_attr_i(c, "input_forget") != 0;
    if (ev_attr(c, "clip")) {
        r->has_clip = true;
        r->clip = ev_attr_f_or(c, "clip", 0);
        if (!(r->clip >= 0))
            return ev_fail(c, "clip must not be negative");
    }
    if (ev_rnn_acts(c, r))
        return -1;

    r->x = ev_in_tensor(c, 0);
    r->w = r->x ? ev_in_tensor(c, 1) : NULL;
    r->r = r->w ? ev_in_tensor(c, 2) : NULL;
    if (!r->r)
        return -1;
    int32_t dt = r->x->dtype;
    if (!ev_dtype_is_float(dt) || dt == IR_COMPLEX64 || dt == IR_COMPLEX128)
        return ev_fail(c, "unsupported input type %d", (int)dt);
    if (r->w->dtype != dt || r->r->dtype != dt)
        return ev_fail(c, "W and R must have X's type");
    if (r->x->rank != 3 || r->w->rank != 3 || r->r->rank != 3)
        return ev_fail(c, "X, W and R must have rank 3");
    r->seq = (size_t)r->x->dims[r->layout ? 1 : 0];
    r->batch = (size_t)r->x->dims[r->layout ? 0 : 1];
    r->in = (size_t)r->x->dims[2];
    r->hid = (size_t)r->r->dims[2];
    if (ev_attr(c, "hidden_size")) {
        int64_t hs = ev_attr_i_or(c, "hidden_size", 0);
        if (hs < 0 || (uint64_t)hs != r->hid)
            return ev_fail(c, "hidden_size %lld does not match R",
                           (long long)hs);
    }
    size_t gh;
    if (!mem_mul_size(r->gates, r->hid, &gh))
        return ev_fail(c, "hidden_size too large");
    if (ev_rnn_shape(c, r->w, "W", 3, r->nd, gh, r->in) ||
        ev_rnn_shape(c, r->r, "R", 3, r->nd, gh, r->hid))
        return -1;

    bool bad = false;
    r->b = ev_rnn_opt_in(c, 3, dt, "B", &bad);
    EvValue *sl = ev_in(c, 4);
    r->h0 = ev_rnn_opt_in(c, 5, dt, "initial_h", &bad);
    if (r->kind == EV_RNN_LSTM) {
        r->c0 = ev_rnn_opt_in(c, 6, dt, "initial_c", &bad);
        r->p = ev_rnn_opt_in(c, 7, dt, "P", &bad);
    }
    if (bad)
        return -1;
    if (r->b && ev_rnn_shape(c, r->b, "B", 2, r->nd, 2 * gh, 0))
        return -1;
    size_t s0 = r->layout ? r->batch : r->nd, s1 = r->layout ? r->nd : r->batch;
    if (r->h0 && ev_rnn_shape(c, r->h0, "initial_h", 3, s0, s1, r->hid))
        return -1;
    if (r->c0 && ev_rnn_shape(c, r->c0, "initial_c", 3, s0, s1, r->hid))
        return -1;
    if (r->p && ev_rnn_shape(c, r->p, "P", 2, r->nd, 3 * r->hid, 0))
        return -1;

    r->lens = ev_tmp(c, r->batch ? r->batch : 1, sizeof *r->lens);
    if (!r->lens)
        return -1;
    if (sl) {
        size_t n;
        int64_t *v = ev_in_ints(c, 4, &n);
        if (!v)
            return -1;
        if (sl->rank != 1 || n != r->batch)
            return ev_fail(c, "sequence_lens must have shape [batch_size]");
        for (size_t b = 0; b < n; b++) {
            if (v[b] < 0 || (uint64_t)v[b] > r->seq)
                return ev_fail(c, "sequence_lens[%zu] = %lld is outside "
                               "[0, %zu]", b, (long long)v[b], r->seq);
            r->lens[b] = v[b];
        }
    } else {
        for (size_t b = 0; b < r->batch; b++)
            r->lens[b] = (int64_t)r->seq;
    }
    return 0;
}

static int ev_rnn_outputs(EvCtx *c, EvRnn *r)
{
    int32_t dt = r->x->dtype;
    int64_t s = (int64_t)r->seq, n = (int64_t)r->batch, d = (int64_t)r->nd,
            h = (int64_t)r->hid;
    int64_t ydims0[4] = {s, d, n, h}, ydims1[4] = {n, s, d, h};
    int64_t hdims0[3] = {d, n, h}, hdims1[3] = {n, d, h};
    const int64_t *yd = r->layout ? ydims1 : ydims0;
    const int64_t *hd = r->layout ? hdims1 : hdims0;
    if (ev_has_out(c, 0) && !(r->y = ev_out_tensor(c, 0, dt, 4, yd)))
        return -1;
    if (ev_has_out(c, 1) && !(r->yh = ev_out_tensor(c, 1, dt, 3, hd)))
        return -1;
    if (r->kind == EV_RNN_LSTM && ev_has_out(c, 2) &&
        !(r->yc = ev_out_tensor(c, 2, dt, 3, hd)))
        return -1;
    return 0;
}

/* ---- the computation -------------------------------------------------- */

/* n zeroed doubles (at least one, so that empty shapes get a pointer). */
static double *ev_rnn_zeros(EvCtx *c, size_t n)
{
    return ev_tmp(c, n ? n : 1, sizeof(double));
}

/* Elements [off, off+n) of t as doubles in scratch memory. */
static double *ev_rnn_doubles(EvCtx *c, const EvValue *t, size_t off,
                              size_t n)
{
    double *v = ev_rnn_zeros(c, n);
    if (!v)
        return NULL;
    if (t->dtype == IR_FLOAT) {
        const float *f = (const float *)t->data + off;
        for (size_t k = 0; k < n; k++)
            v[k] = f[k];
    } else {
        for (size_t k = 0; k < n; k++)
            v[k] = ev_get_f(t, off + k);
    }
    return v;
}

/* X*W_d^T + Wb_d for every (time, batch) row, in X's row order
 * (t*batch + b, or b*seq + t with layout 1). */
static double *ev_rnn_project(EvCtx *c, const EvRnn *r, size_t d)
{
    size_t gh = r->gates * r->hid, rows = r->seq * r->batch, n;
    if (!mem_mul_size(rows, gh, &n)) {
        ev_fail(c, "input projection too large");
        return NULL;
    }
    double *out = ev_rnn_zeros(c, n);
    if (!out)
        return NULL;
    if (n && r->in) {
        if (r->x->dtype == IR_FLOAT) {
            float *f = ev_tmp(c, n, sizeof *f);
            if (!f)
                return NULL;
            ev_sgemm(false, true, rows, gh, r->in, 1.0f, r->x->data, r->in,
                     (const float *)r->w->data + d * gh * r->in, r->in, 0.0f, f, gh);
            for (size_t k = 0; k < n; k++)
                out[k] = f[k];
        } else {
            double *xd = ev_rnn_doubles(c, r->x, 0, r->x->numel);
            double *wd = ev_rnn_doubles(c, r->w, d * gh * r->in,
                                        gh * r->in);
            if (!xd || !wd)
                return NULL;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows,
                        (int)gh, (int)r->in, 1.0, xd, (int)r->in, wd,
                        (int)r->in, 0.0, out, (int)gh);
        }
    }
    if (r->b)
        for (size_t k = 0; k < rows; k++)
            for (size_t g = 0; g < gh; g++)
                out[k * gh + g] += ev_get_f(r->b, d * 2 * gh + g);
    return out;
}

/* Offset of the state of (direction d, batch b) in initial_h/c, Y_h, Y_c. */
static size_t ev_rnn_state_off(const EvRnn *r, size_t d, size_t b)
{
    return (r->layout ? b * r->nd + d : d * r->batch + b) * r->hid;
}

static size_t ev_rnn_y_off(const EvRnn *r, size_t t, size_t d, size_t b)
{
    return (r->layout ? (b * r->seq + t) * r->nd + d
                      : (t * r->nd + d) * r->batch + b) * r->hid;
}

/* out[b*ldo + j] = sum_k a[b*H + k] * R_d[row0 + j][k] + Rb[row0 + j]
 * for every batch row, j < n_rows. */
static void ev_rnn_recur(const EvRnn *r, const double *a, const double *rd,
                         const double *rb, size_t row0, size_t n_rows,
                         double *out, size_t ldo)
{
    size_t H = r->hid;
    if (r->batch == 0 || n_rows == 0)
        return;
    if (H)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)r->batch,
                    (int)n_rows, (int)H, 1.0, a, (int)H, rd + row0 * H,
                    (int)H, 0.0, out, (int)ldo);
    else
        for (size_t b = 0; b < r->batch; b++)
            memset(out + b * ldo, 0, n_rows * sizeof *out);
    for (size_t b = 0; b < r->batch; b++)
        for (size_t j = 0; j < n_rows; j++)
            out[b * ldo + j] += rb[row0 + j];
}

/* Per-direction working set. */
typedef struct EvRnnDir {
    size_t d;
    double *xw, *rd, *rb, *p;
    double *h, *cs, *hr, *tmp;
} EvRnnDir;

/* One step for batch entry b at time t; the gate pre-activations from the
 * input are xw row `row`, from the state hr row b. */
static void ev_rnn_cell(const EvRnn *r, EvRnnDir *w, size_t b, size_t row)
{
    size_t H = r->hid, gh = r->gates * H;
    const double *x = w->xw + row * gh, *hr = w->hr + b * gh;
    double *h = w->h + b * H;
    const EvAct *act = r->act[w->d];
    if (r->kind == EV_RNN_SIMPLE) {
        for (size_t j = 0; j < H; j++)
            h[j] = ev_rnn_act(r, &act[0], x[j] + hr[j]);
        return;
    }
    if (r->kind == EV_RNN_GRU) {
        /* w->tmp holds the h gate's recurrent term (see ev_rnn_gru_pre) */
        const double *hh = w->tmp + b * H;
        for (size_t j = 0; j < H; j++) {
            double z = ev_rnn_act(r, &act[0], x[j] + hr[j]);
            double rg = ev_rnn_act(r, &act[0], x[H + j] + hr[H + j]);
            double pre = r->lbr ? x[2 * H + j] + rg * hh[j]
                                : x[2 * H + j] + hh[j];
            double n = ev_rnn_act(r, &act[1], pre);
            h[j] = (1.0 - z) * n + z * h[j];
        }
        return;
    }
    double *cs = w->cs + b * H;
    const double *pi = w->p, *po = w->p + H, *pf = w->p + 2 * H;
    for (size_t j = 0; j < H; j++) {
        double i = ev_rnn_act(r, &act[0], x[j] + hr[j] + pi[j] * cs[j]);
        double f = r->input_forget
                       ? 1.0 - i
                       : ev_rnn_act(r, &act[0], x[2 * H + j] + hr[2 * H + j] +
                                                    pf[j] * cs[j]);
        double g = ev_rnn_act(r, &act[1], x[3 * H + j] + hr[3 * H + j]);
        double cn = f * cs[j] + i * g;
        double o = ev_rnn_act(r, &act[0], x[H + j] + hr[H + j] + po[j] * cn);
        cs[j] = cn;
        h[j] = o * ev_rnn_act(r, &act[2], cn);
    }
}

/* GRU: the recurrent terms of z and r, then the h gate's: H*Rh^T + Rbh
 * (linear_before_reset) or (r . H)*Rh^T + Rbh, into w->tmp. */
static void ev_rnn_gru_pre(const EvRnn *r, EvRnnDir *w, size_t step)
{
    size_t H = r->hid, gh = 3 * H;
    ev_rnn_recur(r, w->h, w->rd, w->rb, 0, 2 * H, w->hr, gh);
    if (r->lbr) {
        ev_rnn_recur(r, w->h, w->rd, w->rb, 2 * H, H, w->tmp, H);
        return;
    }
    /* r . H needs r first; inactive rows give garbage that is not used */
    double *rh = w->tmp + r->batch * H;
    for (size_t b = 0; b < r->batch; b++) {
        size_t t = step, len = (size_t)r->lens[b];
        if (t >= len) {
            memset(rh + b * H, 0, H * sizeof *rh);
            continue;
        }
        if (r->reverse_only || w->d == 1)
            t = len - 1 - step;
        size_t row = r->layout ? b * r->seq + t : t * r->batch + b;
        const double *x = w->xw + row * gh, *hr = w->hr + b * gh;
        for (size_t j = 0; j < H; j++) {
            double rg = ev_rnn_act(r, &r->act[w->d][0], x[H + j] + hr[H + j]);
            rh[b * H + j] = rg * w->h[b * H + j];
        }
    }
    ev_rnn_recur(r, rh, w->rd, w->rb, 2 * H, H, w->tmp, H);
}

static int ev_rnn_dir_init(EvCtx *c, const EvRnn *r, EvRnnDir *w, size_t d)
{
    size_t H = r->hid, gh = r->gates * H, bh = r->batch * H;
    w->d = d;
    w->xw = ev_rnn_project(c, r, d);
    w->rd = ev_rnn_doubles(c, r->r, d * gh * H, gh * H);
    w->rb = ev_rnn_zeros(c, gh);
    w->p = ev_rnn_zeros(c, 3 * H);
    w->h = ev_rnn_zeros(c, bh);
    w->cs = ev_rnn_zeros(c, bh);
    w->hr = ev_rnn_zeros(c, r->batch * gh);
    w->tmp = ev_rnn_zeros(c, 2 * bh);
    if (!w->xw || !w->rd || !w->rb || !w->p || !w->h || !w->cs || !w->hr ||
        !w->tmp)
        return -1;
    if (r->b)
        for (size_t g = 0; g < gh; g++)
            w->rb[g] = ev_get_f(r->b, d * 2 * gh + gh + g);
    if (r->p)
        for (size_t j = 0; j < 3 * H; j++)
            w->p[j] = ev_get_f(r->p, d * 3 * H + j);
    for (size_t b = 0; b < r->batch; b++)
        for (size_t j = 0; j < H; j++) {
            size_t o = ev_rnn_state_off(r, d, b) + j;
            w->h[b * H + j] = r->h0 ? ev_get_f(r->h0, o) : 0.0;
            w->cs[b * H + j] = r->c0 ? ev_get_f(r->c0, o) : 0.0;
        }
    return 0;
}

static int ev_rnn_run_dir(EvCtx *c, const EvRnn *r, size_t d)
{
    EvRnnDir w;
    size_t H = r->hid;
    if (ev_rnn_dir_init(c, r, &w, d))
        return -1;
    bool rev = r->reverse_only || d == 1;
    for (size_t step = 0; step < r->seq; step++) {
        if (r->kind == EV_RNN_GRU)
            ev_rnn_gru_pre(r, &w, step);
        else
            ev_rnn_recur(r, w.h, w.rd, w.rb, 0, r->gates * H, w.hr,
                         r->gates * H);
        for (size_t b = 0; b < r->batch; b++) {
            size_t len = (size_t)r->lens[b];
            if (step >= len)
                continue;
            size_t t = rev ? len - 1 - step : step;
            ev_rnn_cell(r, &w, b, r->layout ? b * r->seq + t
                                            : t * r->batch + b);
            if (r->y)
                for (size_t j = 0; j < H; j++)
                    ev_set_f(r->y, ev_rnn_y_off(r, t, d, b) + j,
                             w.h[b * H + j]);
        }
    }
    for (size_t b = 0; b < r->batch; b++)
        for (size_t j = 0; j < H; j++) {
            size_t o = ev_rnn_state_off(r, d, b) + j;
            if (r->yh)
                ev_set_f(r->yh, o, w.h[b * H + j]);
            if (r->yc)
                ev_set_f(r->yc, o, w.cs[b * H + j]);
        }
    return 0;
}

static int ev_rnn_common(EvCtx *c, int kind)
{
    EvRnn r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    if (ev_rnn_setup(c, &r) || ev_rnn_outputs(c, &r))
        return -1;
    /* BLAS takes int sizes */
    size_t lim = (size_t)1 << 31, rows;
    if (!mem_mul_size(r.seq, r.batch, &rows) || rows >= lim ||
        r.gates * r.hid >= lim || r.in >= lim)
        return ev_fail(c, "dimensions too large for BLAS");
    for (size_t d = 0; d < r.nd; d++)
        if (ev_rnn_run_dir(c, &r, d))
            return -1;
    return 0;
}

static int ev_rnn(EvCtx *c) { return ev_rnn_common(c, EV_RNN_SIMPLE); }
static int ev_gru(EvCtx *c) { return ev_rnn_common(c, EV_RNN_GRU); }
static int ev_lstm(EvCtx *c) { return ev_rnn_common(c, EV_RNN_LSTM); }

const EvOp ev_ops_rnn[] = {
    {"", "RNN", ev_rnn},
    {"", "GRU", ev_gru},
    {"", "LSTM", ev_lstm},
    {NULL, NULL, NULL},
};
