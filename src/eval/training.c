/* Training ops of ai.onnx.preview.training: Adagrad, Adam, Momentum
 * (standard and Nesterov) and Gradient.
 *
 * The optimizers update several tensors at once: inputs are R (learning
 * rate, float or double scalar), T (update count, int64 scalar), then the
 * tensors X_1..X_n followed by one group of n per state (gradients, then
 * accumulators); outputs are the new X's, then the new accumulators. Each
 * group's tensors must have the shape of their X (the spec allows numpy
 * broadcasting, but every producer uses equal shapes). Arithmetic is in
 * double, rounded once into the output type.
 *
 * The spec's epsilon default for Adagrad and Adam is 1e-6 (the operator
 * table records 0; the kernels pass the spec's value).
 *
 * Gradient needs automatic differentiation of the enclosing graph, which
 * the evaluator does not do: it fails with that reason. */
#include <math.h>
#include <string.h>

#include "eval.h"

/* The n optimized tensors with `groups` input groups (X, G, states...),
 * checked: float/double tensors, each group member shaped like its X. */
static int ev_opt_inputs(EvCtx *c, size_t groups, size_t *n, double *r,
                         int64_t *t)
{
    if (c->n_in < 2 || (c->n_in - 2) % groups)
        return ev_fail(c, "expects R, T and %zu groups of tensors", groups);
    *n = (c->n_in - 2) / groups;
    if (c->n_out != *n * (groups - 1))
        return ev_fail(c, "expects %zu outputs", *n * (groups - 1));
    EvValue *R = ev_in_tensor(c, 0), *T = R ? ev_in_tensor(c, 1) : NULL;
    if (!T)
        return -1;
    if (!ev_dtype_is_float(R->dtype) || R->numel != 1)
        return ev_fail(c, "R must be a float scalar");
    if (T->dtype != EV_INT64 || T->numel != 1)
        return ev_fail(c, "T must be an int64 scalar");
    *r = ev_get_f(R, 0);
    *t = ev_get_i(T, 0);
    for (size_t i = 0; i < *n; i++) {
        EvValue *x = ev_in_tensor(c, 2 + i);
        if (!x)
            return -1;
        if (!ev_dtype_is_float(x->dtype))
            return ev_fail(c, "optimized tensor %zu must be float", i);
        for (size_t g = 1; g < groups; g++) {
            EvValue *y = ev_in_tensor(c, 2 + g * *n + i);
            if (!y)
                return -1;
            if (y->rank != x->rank ||
                (x->rank && memcmp(y->dims, x->dims, x->rank * sizeof *x->dims)))
                return ev_fail(c, "input %zu's shape differs from tensor %zu's",
                               2 + g * *n + i, i);
        }
    }
    return 0;
}

/* Output k shaped like input `like`, in its element type. */
static EvValue *ev_opt_out(EvCtx *c, size_t k, const EvValue *like)
{
    return ev_out_tensor(c, k, like->dtype, like->rank, like->dims);
}

static int ev_adagrad(EvCtx *c)
{
    size_t n;
    double R;
    int64_t T;
    if (ev_opt_inputs(c, 3, &n, &R, &T))
        return -1;
    double decay = ev_attr_f(c, "decay_factor", 0.0f);
    double eps = ev_attr_f(c, "epsilon", 1e-6f);
    double norm = ev_attr_f(c, "norm_coefficient", 0.0f);
    double r = R / (1.0 + (double)T * decay);
    for (size_t i = 0; i < n; i++) {
        const EvValue *X = c->in[2 + i], *G = c->in[2 + n + i],
                      *H = c->in[2 + 2 * n + i];
        EvValue *Xn = ev_opt_out(c, i, X), *Hn = Xn ? ev_opt_out(c, n + i, H) : NULL;
        if (!Hn)
            return -1;
        for (size_t k = 0; k < X->numel; k++) {
            double x = ev_get_f(X, k);
            double g = norm * x + ev_get_f(G, k);
            double h = ev_get_f(H, k) + g * g;
            ev_set_f(Hn, k, h);
            ev_set_f(Xn, k, x - r * g / (sqrt(h) + eps));
        }
    }
    return 0;
}

static int ev_momentum(EvCtx *c)
{
    size_t n;
    double R;
    int64_t T;
    if (ev_opt_inputs(c, 3, &n, &R, &T))
        return -1;
    static const char *const req[] = {"alpha", "beta", "norm_coefficient",
                                      "mode"};
    for (size_t i = 0; i < 4; i++)
        if (!ev_attr(c, req[i]))
            return ev_fail(c, "attribute '%s' is required", req[i]);
    double alpha = ev_attr_f(c, "alpha", 0), beta = ev_attr_f(c, "beta", 0);
    double norm = ev_attr_f(c, "norm_coefficient", 0);
    const char *mode = ev_attr_s(c, "mode", "");
    bool nesterov = !strcmp(mode, "nesterov");
    if (!nesterov && strcmp(mode, "standard"))
        return ev_fail(c, "mode '%s' is neither 'standard' nor 'nesterov'",
                       mode);
    /* The first update (T = 0) takes the whole gradient. */
    double b = T > 0 ? beta : 1.0;
    for (size_t i = 0; i < n; i++) {
        const EvValue *X = c->in[2 + i], *G = c->in[2 + n + i],
                      *V = c->in[2 + 2 * n + i];
        EvValue *Xn = ev_opt_out(c, i, X), *Vn = Xn ? ev_opt_out(c, n + i, V) : NULL;
        if (!Vn)
            return -1;
        for (size_t k = 0; k < X->numel; k++) {
            double x = ev_get_f(X, k);
            double g = norm * x + ev_get_f(G, k);
            double v = alpha * ev_get_f(V, k) + b * g;
            ev_set_f(Vn, k, v);
            ev_set_f(Xn, k, nesterov ? x - R * (g + alpha * v) : x - R * v);
        }
    }
    return 0;
}

static int ev_adam(EvCtx *c)
{
    size_t n;
    double R;
    int64_t T;
    if (ev_opt_inputs(c, 4, &n, &R, &T))
        return -1;
    double alpha = ev_attr_f(c, "alpha", 0.9f);
    double beta = ev_attr_f(c, "beta", 0.999f);
    double eps = ev_attr_f(c, "epsilon", 1e-6f);
    double norm = ev_attr_f(c, "norm_coefficient", 0.0f);
    double post = ev_attr_f(c, "norm_coefficient_post", 0.0f);
    /* Bias correction of the running averages, from the second update. */
    double ra = T > 0 ? R * sqrt(1.0 - pow(beta, (double)T)) /
                            (1.0 - pow(alpha, (double)T))
                      : R;
    for (size_t i = 0; i < n; i++) {
        const EvValue *X = c->in[2 + i], *G = c->in[2 + n + i],
                      *V = c->in[2 + 2 * n + i], *H = c->in[2 + 3 * n + i];
        EvValue *Xn = ev_opt_out(c, i, X);
        EvValue *Vn = Xn ? ev_opt_out(c, n + i, V) : NULL;
        EvValue *Hn = Vn ? ev_opt_out(c, 2 * n + i, H) : NULL;
        if (!Hn)
            return -1;
        for (size_t k = 0; k < X->numel; k++) {
            double x = ev_get_f(X, k);
            double g = norm * x + ev_get_f(G, k);
            double v = alpha * ev_get_f(V, k) + (1.0 - alpha) * g;
            double h = beta * ev_get_f(H, k) + (1.0 - beta) * g * g;
            ev_set_f(Vn, k, v);
            ev_set_f(Hn, k, h);
            ev_set_f(Xn, k, (1.0 - post) * (x - ra * v / (sqrt(h) + eps)));
        }
    }
    return 0;
}

static int ev_gradient(EvCtx *c)
{
    return ev_fail(c, "Gradient needs automatic differentiation of the "
                   "graph, which the evaluator does not do");
}

const EvOp ev_ops_training[] = {
    {"ai.onnx.preview.training", "Adagrad", ev_adagrad},
    {"ai.onnx.preview.training", "Adam", ev_adam},
    {"ai.onnx.preview.training", "Momentum", ev_momentum},
    {"ai.onnx.preview.training", "Gradient", ev_gradient},
    {NULL, NULL, NULL}
};
