/* Activation kernels of ai.onnx, every version:
 *   pointwise: Relu LeakyRelu Elu Selu Celu Sigmoid HardSigmoid HardSwish
 *     Softplus Softsign ThresholdedRelu Mish Swish Gelu PRelu SwiGLU (28);
 *   along an axis: Softmax LogSoftmax Hardmax.
 *
 * Subtle points:
 * - The pointwise ones go through the elementwise family's unary map
 *   (ev_map1 in kernels.h): computed in double and rounded once on store,
 *   with the float32 loops of Relu and Sigmoid kept in elementwise.c beside
 *   the others so that they stay inlined.
 * - PRelu before 7 follows Caffe2: a 1-D slope of C elements goes per
 *   channel; from 7 the slope broadcasts to X unidirectionally.
 * - Softmax/LogSoftmax/Hardmax before version 13 coerce the input to 2-D
 *   at `axis` (default 1) and normalize each row of the flattened
 *   trailing dims; from 13 they work along the single axis (default -1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

/* ---- pointwise ----------------------------------------------------------- */

static double ev_f_relu(double x, const double *p) { return x < 0 ? 0 : x; }

static double ev_f_leakyrelu(double x, const double *p)
{
    return x < 0 ? p[0] * x : x;
}

static double ev_f_elu(double x, const double *p)
{
    return x < 0 ? p[0] * expm1(x) : x;
}

/* p = {alpha, gamma} */
static double ev_f_selu(double x, const double *p)
{
    return x <= 0 ? p[1] * (p[0] * exp(x) - p[0]) : p[1] * x;
}

static double ev_f_celu(double x, const double *p)
{
    return fmax(0, x) + fmin(0, p[0] * expm1(x / p[0]));
}

static double ev_sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static double ev_f_sigmoid(double x, const double *p) { return ev_sigmoid(x); }

/* p = {alpha, beta} */
static double ev_f_hardsigmoid(double x, const double *p)
{
    return fmax(0, fmin(1, p[0] * x + p[1]));
}

static double ev_f_hardswish(double x, const double *p)
{
    return x * fmax(0, fmin(1, x / 6 + 0.5));
}

static double ev_softplus(double x)
{
    /* log(1 + e^x) without overflow for large x */
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double ev_f_softplus(double x, const double *p)
{
    return ev_softplus(x);
}

static double ev_f_softsign(double x, const double *p)
{
    return x / (1 + fabs(x));
}

static double ev_f_thresholdedrelu(double x, const double *p)
{
    return x > p[0] ? x : 0;
}

static double ev_f_mish(double x, const double *p)
{
    return x * tanh(ev_softplus(x));
}

static double ev_f_swish(double x, const double *p)
{
    return x * ev_sigmoid(p[0] * x);
}

static double ev_f_gelu(double x, const double *p)
{
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

static double ev_f_gelu_tanh(double x, const double *p)
{
    double k = sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * x * (1 + tanh(k * (x + 0.044715 * x * x * x)));
}

static int ev_relu(EvCtx *c)
{
    return ev_map1(c, ev_f_relu, NULL, EV_CF | EV_CS, EV_I_RELU,
                   EV_FAST_RELU);
}

static int ev_softplus_op(EvCtx *c)
{
    return ev_float1(c, ev_f_softplus, NULL);
}

static int ev_softsign(EvCtx *c) { return ev_float1(c, ev_f_softsign, NULL); }

static int ev_hardswish(EvCtx *c) { return ev_float1(c, ev_f_hardswish, NULL); }

static int ev_mish(EvCtx *c) { return ev_float1(c, ev_f_mish, NULL); }

static int ev_sigmoid_op(EvCtx *c)
{
    return ev_map1(c, ev_f_sigmoid, NULL, EV_CF, EV_I_NONE, EV_FAST_SIGMOID);
}

static int ev_leakyrelu(EvCtx *c)
{
    double p[1] = { ev_attr_f(c, "alpha") };
    return ev_float1(c, ev_f_leakyrelu, p);
}

static int ev_elu(EvCtx *c)
{
    double p[1] = { ev_attr_f(c, "alpha") };
    return ev_float1(c, ev_f_elu, p);
}

/* Selu-1's defaults were the constants rounded to 4 decimals (the
 * table has both). */
static int ev_selu(EvCtx *c)
{
    double p[2] = { ev_attr_f(c, "alpha"), ev_attr_f(c, "gamma") };
    return ev_float1(c, ev_f_selu, p);
}

static int ev_celu(EvCtx *c)
{
    double p[1] = { ev_attr_f(c, "alpha") };
    if (p[0] == 0)
        return ev_fail(c, "alpha must not be 0");
    return ev_float1(c, ev_f_celu, p);
}

static int ev_hardsigmoid(EvCtx *c)
{
    double p[2] = { ev_attr_f(c, "alpha"), ev_attr_f(c, "beta") };
    return ev_float1(c, ev_f_hardsigmoid, p);
}

static int ev_thresholdedrelu(EvCtx *c)
{
    double p[1] = { ev_attr_f(c, "alpha") };
    return ev_float1(c, ev_f_thresholdedrelu, p);
}

static int ev_swish(EvCtx *c)
{
    double p[1] = { ev_attr_f(c, "alpha") };
    return ev_float1(c, ev_f_swish, p);
}

static int ev_gelu(EvCtx *c)
{
    const char *a = ev_attr_s(c, "approximate");
    if (!a)
        return -1;
    if (!strcmp(a, "none"))
        return ev_float1(c, ev_f_gelu, NULL);
    if (!strcmp(a, "tanh"))
        return ev_float1(c, ev_f_gelu_tanh, NULL);
    return ev_fail(c, "approximate '%s' is not none or tanh", a);
}

/* ---- PRelu -------------------------------------------------------------- */

/* The slope as a view broadcastable to X's shape. From opset 7 the slope
 * broadcasts to X unidirectionally. Before, it came from Caffe2's PRelu: a
 * 1-element slope is shared and a 1-D slope of C elements goes per channel
 * (axis 1); other shapes are taken as broadcasting. */
static int ev_prelu_slope(EvCtx *c, const EvValue *x, const EvValue *s,
                          EvValue *view, int64_t *dims)
{
    *view = *s;
    if (c->ver < 7 && s->numel == 1) {
        view->rank = 0;
        view->dims = NULL;
        return 0;
    }
    if (c->ver < 7 && s->rank == 1 && x->rank >= 2 &&
        s->dims[0] == x->dims[1]) {
        for (size_t i = 0; i < x->rank; i++)
            dims[i] = i == 1 ? s->dims[0] : 1;
        view->rank = x->rank;
        view->dims = dims;
        return 0;
    }
    bool ok = s->rank <= x->rank;
    for (size_t i = 0; ok && i < s->rank; i++) {
        int64_t sd = s->dims[s->rank - 1 - i], xd = x->dims[x->rank - 1 - i];
        ok = sd == 1 || sd == xd;
    }
    if (ok)
        return 0;
    return ev_fail(c, "slope shape does not broadcast to X's shape");
}

static int ev_prelu(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0), *s = x ? ev_in_tensor(c, 1) : NULL;
    if (!s || ev_need(c, x, EV_CNUM))
        return -1;
    if (s->dtype != x->dtype)
        return ev_fail(c, "slope type %s differs from X's %s",
                       ev_dt_name(s->dtype), ev_dt_name(x->dtype));
    EvValue view;
    int64_t vdims[EV_MAX_RANK];
    if (ev_prelu_slope(c, x, s, &view, vdims))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    EvValue *ts[2] = { x, &view };
    EvBcast b;
    ev_bcast_init(&b, 2, ts, x->rank, x->dims);
    unsigned cl = ev_class(x->dtype);
    for (size_t k = 0; k < x->numel; k++, ev_bcast_next(&b)) {
        if (cl == EV_CF) {
            double v = ev_get_f(x, b.off[0]);
            ev_set_f(y, k, v < 0 ? v * ev_get_f(&view, b.off[1]) : v);
        } else if (cl == EV_CS) {
            int64_t v = ev_get_i(x, b.off[0]);
            if (v < 0)
                v = (int64_t)((uint64_t)v *
                              (uint64_t)ev_get_i(&view, b.off[1]));
            ev_set_i(y, k, v);
        } else {
            ev_set_u(y, k, ev_get_u(x, b.off[0]));  /* never negative */
        }
    }
    return 0;
}

/* ---- Softmax, LogSoftmax, Hardmax ---------------------------------------- */

typedef enum { EV_SM_SOFT, EV_SM_LOG, EV_SM_HARD } EvSmKind;

/* One contiguous float row: the hot case of transformer models. */
static void ev_sm_row_f(EvSmKind kind, const float *x, float *y, size_t n)
{
    float m = x[0];
    for (size_t j = 1; j < n; j++)
        if (x[j] > m)
            m = x[j];
    double s = 0;
    if (kind == EV_SM_SOFT) {
        for (size_t j = 0; j < n; j++) {
            float e = expf(x[j] - m);
            y[j] = e;
            s += e;
        }
        float inv = (float)(1.0 / s);
        for (size_t j = 0; j < n; j++)
            y[j] *= inv;
    } else {
        for (size_t j = 0; j < n; j++)
            s += expf(x[j] - m);
        float ls = (float)log(s);
        for (size_t j = 0; j < n; j++)
            y[j] = x[j] - m - ls;
    }
}

/* A float block of n rows by `inner` columns, normalized down the rows
 * (softmax along a middle axis), walking memory in order. */
static void ev_sm_block_f(EvSmKind kind, const float *x, float *y, size_t n,
                          size_t inner, float *mx, double *sum)
{
    memcpy(mx, x, inner * sizeof *mx);
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < inner; j++)
            if (x[i * inner + j] > mx[j])
                mx[j] = x[i * inner + j];
    memset(sum, 0, inner * sizeof *sum);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < inner; j++) {
            float e = expf(x[i * inner + j] - mx[j]);
            if (kind == EV_SM_SOFT)
                y[i * inner + j] = e;
            sum[j] += e;
        }
    for (size_t j = 0; j < inner; j++)
        sum[j] = kind == EV_SM_SOFT ? 1.0 / sum[j] : log(sum[j]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < inner; j++) {
            size_t k = i * inner + j;
            y[k] = kind == EV_SM_SOFT ? (float)(y[k] * sum[j])
                                      : (float)(x[k] - mx[j] - sum[j]);
        }
}

/* One row in double, in place. Hardmax marks the first maximum (a NaN
 * counts as the maximum, as argmax does). */
static void ev_sm_row_d(EvSmKind kind, double *v, size_t n)
{
    if (kind == EV_SM_HARD) {
        size_t best = 0;
        for (size_t j = 1; j < n && !isnan(v[best]); j++)
            if (isnan(v[j]) || v[j] > v[best])
                best = j;
        for (size_t j = 0; j < n; j++)
            v[j] = j == best ? 1.0 : 0.0;
        return;
    }
    double m = v[0];
    for (size_t j = 1; j < n; j++)
        if (v[j] > m)
            m = v[j];
    double s = 0;
    for (size_t j = 0; j < n; j++)
        s += exp(v[j] - m);
    for (size_t j = 0; j < n; j++)
        v[j] = kind == EV_SM_SOFT ? exp(v[j] - m) / s : v[j] - m - log(s);
}

static int ev_softmax_kind(EvCtx *c, EvSmKind kind)
{
    EvValue *x = ev_in_real(c, 0);
    if (!x)
        return -1;
    bool old = c->ver < 13;
    size_t outer = 1, n = 1, inner = 1;
    if (x->rank > 0) {
        size_t ax;
        if (ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank,
                    0, &ax))
            return -1;
        outer = ev_dims_prod(x->dims, 0, ax);
        if (old) {
            n = ev_dims_prod(x->dims, ax, x->rank);
        } else {
            n = (size_t)x->dims[ax];
            inner = ev_dims_prod(x->dims, ax + 1, x->rank);
        }
    }
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return -1;
    if (x->numel == 0)
        return 0;
    if (x->dtype == IR_FLOAT && kind != EV_SM_HARD) {
        const float *xf = x->data;
        float *yf = y->data, *mx = NULL;
        double *sum = NULL;
        if (inner > 1 && (!(mx = ev_tmp(c, inner, sizeof *mx)) ||
                          !(sum = ev_tmp(c, inner, sizeof *sum))))
            return -1;
        for (size_t o = 0; o < outer; o++) {
            if (inner == 1)
                ev_sm_row_f(kind, xf + o * n, yf + o * n, n);
            else
                ev_sm_block_f(kind, xf + o * n * inner, yf + o * n * inner,
                              n, inner, mx, sum);
        }
        return 0;
    }
    double *row = ev_tmp(c, n, sizeof *row);
    if (!row)
        return -1;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t base = o * n * inner + i;
            for (size_t j = 0; j < n; j++)
                row[j] = ev_get_f(x, base + j * inner);
            ev_sm_row_d(kind, row, n);
            for (size_t j = 0; j < n; j++)
                ev_set_f(y, base + j * inner, row[j]);
        }
    }
    return 0;
}

static int ev_softmax(EvCtx *c)
{
    return ev_softmax_kind(c, EV_SM_SOFT);
}

static int ev_logsoftmax(EvCtx *c)
{
    return ev_softmax_kind(c, EV_SM_LOG);
}

static int ev_hardmax(EvCtx *c)
{
    return ev_softmax_kind(c, EV_SM_HARD);
}

/* ---- SwiGLU -------------------------------------------------------------- */

/* Y = Swish(A, alpha) * B, Swish(a) = a * sigmoid(alpha * a). */
static int ev_swiglu(EvCtx *c)
{
    EvValue *t[2] = {ev_in_real(c, 0), ev_in_real(c, 1)};
    if (!t[0] || !t[1])
        return -1;
    if (t[0]->dtype != t[1]->dtype)
        return ev_fail(c, "A and B must share their element type");
    double alpha = ev_attr_f(c, "alpha");
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_broadcast_shape(c, 2, t, &rank, dims))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, t[0]->dtype, rank, dims);
    if (!y)
        return -1;
    EvBcast bc;
    ev_bcast_init(&bc, 2, t, rank, dims);
    int32_t dt = t[0]->dtype;
    for (size_t k = 0; k < y->numel; k++) {
        double a = ev_at_get(t[0], bc.off[0]);
        double sw = ev_at_round(dt, a / (1.0 + exp(-alpha * a)));
        ev_at_put(y, k, sw * ev_at_get(t[1], bc.off[1]));
        ev_bcast_next(&bc);
    }
    return 0;
}

const EvOp ev_ops_activation[] = {
    {"", "Relu", ev_relu},
    {"", "LeakyRelu", ev_leakyrelu},
    {"", "Elu", ev_elu},
    {"", "Selu", ev_selu},
    {"", "Celu", ev_celu},
    {"", "Sigmoid", ev_sigmoid_op},
    {"", "HardSigmoid", ev_hardsigmoid},
    {"", "HardSwish", ev_hardswish},
    {"", "Softplus", ev_softplus_op},
    {"", "Softsign", ev_softsign},
    {"", "ThresholdedRelu", ev_thresholdedrelu},
    {"", "Mish", ev_mish},
    {"", "Swish", ev_swish},
    {"", "Gelu", ev_gelu},
    {"", "PRelu", ev_prelu},
    {"", "SwiGLU", ev_swiglu},
    {"", "Softmax", ev_softmax},
    {"", "LogSoftmax", ev_logsoftmax},
    {"", "Hardmax", ev_hardmax},
    {NULL, NULL, NULL}
};

