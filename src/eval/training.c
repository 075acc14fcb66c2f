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
 * Gradient differentiates y (attribute) with respect to the xs, seeding
 * dY with ones (so output i is d sum(Y) / dX_i, shaped like X_i). The
 * driver frees intermediate values after their last regular user and
 * Gradient does not list them as inputs, so the kernel recomputes the part
 * of its own graph that y depends on, in double, from its inputs (the xs
 * then the zs, bound by position to those names), initializers and
 * Constant nodes; then it back-propagates in reverse graph order through
 * a small set of ops (see ev_gops), summing over broadcast dims. Any other
 * value or op on the way fails with a reason; an x that y does not depend
 * on gets a zero gradient. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

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
    if (T->dtype != IR_INT64 || T->numel != 1)
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
    double decay = ev_attr_f(c, "decay_factor");
    double eps = ev_attr_f(c, "epsilon");
    double norm = ev_attr_f(c, "norm_coefficient");
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
    double alpha = ev_attr_f_or(c, "alpha", 0), beta = ev_attr_f_or(c, "beta", 0);
    double norm = ev_attr_f_or(c, "norm_coefficient", 0);
    const char *mode = ev_attr_s_or(c, "mode", "");
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
    double alpha = ev_attr_f(c, "alpha");
    double beta = ev_attr_f(c, "beta");
    double eps = ev_attr_f(c, "epsilon");
    double norm = ev_attr_f(c, "norm_coefficient");
    double post = ev_attr_f(c, "norm_coefficient_post");
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

/* ---- Gradient -------------------------------------------------------- */

/* A value of the Gradient node's graph: its recomputed forward value and
 * its gradient (double tensors in ev_tmp memory), NULL until known. */
typedef struct EvGVal {
    const IrValue *v;
    EvValue *fwd, *grad;
    bool leaf;  /* bound to an input of the Gradient node */
    bool need;  /* y depends on it */
    bool dep;   /* it depends on an x */
} EvGVal;

typedef struct EvGrad {
    EvCtx *c;
    const IrGraph *graph;
    size_t n_vals;
    EvGVal *vals;          /* every value of the graph, sorted by address */
    size_t n_nodes;
    const IrNode **nodes;  /* the nodes y depends on, in graph order */
} EvGrad;

typedef enum {
    EV_G_UNARY, EV_G_BINARY, EV_G_SUM, EV_G_MATMUL, EV_G_CONST
} EvGKind;

/* An op Gradient goes through. Elementwise ones: y = f(a, b) (b unused by
 * unary ops), with the partial derivatives da, db given a, b and y. */
typedef struct EvGOp {
    const char *op;
    EvGKind kind;
    double (*f)(double a, double b);
    double (*da)(double a, double b, double y);
    double (*db)(double a, double b, double y);
} EvGOp;

static double ev_g_add(double a, double b) { return a + b; }
static double ev_g_sub(double a, double b) { return a - b; }
static double ev_g_mul(double a, double b) { return a * b; }
static double ev_g_div(double a, double b) { return a / b; }
static double ev_g_neg(double a, double b) { return -a; }
static double ev_g_id(double a, double b) { return a; }
static double ev_g_relu(double a, double b) { return a < 0 ? 0 : a; }
static double ev_g_exp(double a, double b) { return exp(a); }
static double ev_g_log(double a, double b) { return log(a); }
static double ev_g_tanh(double a, double b) { return tanh(a); }
static double ev_g_sigmoid(double a, double b) { return 1 / (1 + exp(-a)); }
static double ev_g_sqrt(double a, double b) { return sqrt(a); }

static double ev_d_one(double a, double b, double y) { return 1; }
static double ev_d_minus_one(double a, double b, double y) { return -1; }
static double ev_d_mul_a(double a, double b, double y) { return b; }
static double ev_d_mul_b(double a, double b, double y) { return a; }
static double ev_d_div_a(double a, double b, double y) { return 1 / b; }
static double ev_d_div_b(double a, double b, double y) { return -a / (b * b); }
static double ev_d_relu(double a, double b, double y) { return a > 0; }
static double ev_d_exp(double a, double b, double y) { return y; }
static double ev_d_log(double a, double b, double y) { return 1 / a; }
static double ev_d_tanh(double a, double b, double y) { return 1 - y * y; }
static double ev_d_sigmoid(double a, double b, double y) { return y * (1 - y); }
static double ev_d_sqrt(double a, double b, double y) { return 0.5 / y; }

static const EvGOp ev_gops[] = {
    {"Add", EV_G_BINARY, ev_g_add, ev_d_one, ev_d_one},
    {"Sub", EV_G_BINARY, ev_g_sub, ev_d_one, ev_d_minus_one},
    {"Mul", EV_G_BINARY, ev_g_mul, ev_d_mul_a, ev_d_mul_b},
    {"Div", EV_G_BINARY, ev_g_div, ev_d_div_a, ev_d_div_b},
    {"Neg", EV_G_UNARY, ev_g_neg, ev_d_minus_one, NULL},
    {"Identity", EV_G_UNARY, ev_g_id, ev_d_one, NULL},
    {"Relu", EV_G_UNARY, ev_g_relu, ev_d_relu, NULL},
    {"Exp", EV_G_UNARY, ev_g_exp, ev_d_exp, NULL},
    {"Log", EV_G_UNARY, ev_g_log, ev_d_log, NULL},
    {"Tanh", EV_G_UNARY, ev_g_tanh, ev_d_tanh, NULL},
    {"Sigmoid", EV_G_UNARY, ev_g_sigmoid, ev_d_sigmoid, NULL},
    {"Sqrt", EV_G_UNARY, ev_g_sqrt, ev_d_sqrt, NULL},
    {"Sum", EV_G_SUM, NULL, NULL, NULL},
    {"MatMul", EV_G_MATMUL, NULL, NULL, NULL},
    {"Constant", EV_G_CONST, NULL, NULL, NULL},
};

static const EvGOp *ev_gop(const IrNode *n)
{
    if (*ir_domain_norm(n->domain) || !n->op_type)
        return NULL;
    for (size_t i = 0; i < sizeof ev_gops / sizeof *ev_gops; i++)
        if (!strcmp(ev_gops[i].op, n->op_type))
            return &ev_gops[i];
    return NULL;
}

/* For messages: the node's name, else its first output's. */
static const char *ev_g_label(const IrNode *n)
{
    if (n->name && *n->name)
        return n->name;
    return n->n_out && n->out[0] ? n->out[0]->name : "?";
}

static const IrAttr *ev_g_node_attr(const IrNode *n, const char *name)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->name && !strcmp(n->attr[i]->name, name))
            return n->attr[i];
    return NULL;
}

/* A zeroed double tensor in ev_tmp memory (never ev_unref'ed). Its data
 * is never NULL, even when empty (a NULL gradient means failure), nor its
 * dims, even for a scalar (ev_bcast_init copies them). */
static EvValue *ev_g_tensor(EvCtx *c, size_t rank, const int64_t *dims)
{
    size_t n = 1;
    for (size_t d = 0; d < rank; d++)
        if (dims[d] < 0 || !mem_mul_size(n, (size_t)dims[d], &n)) {
            ev_fail(c, "a tensor of Gradient's graph is too large");
            return NULL;
        }
    double *data = ev_tmp(c, n ? n : 1, sizeof *data);
    if (!data)
        return NULL;
    EvValue *t = ev_tmp(c, 1, sizeof *t);
    int64_t *d = ev_tmp(c, rank ? rank : 1, sizeof *d);
    if (rank)
        memcpy(d, dims, rank * sizeof *d);
    *t = (EvValue){.kind = EV_TENSOR, .refs = 1, .dtype = IR_DOUBLE,
                   .rank = rank, .dims = d, .numel = n, .data = data};
    return t;
}

static EvValue *ev_g_like(EvCtx *c, const EvValue *t)
{
    return ev_g_tensor(c, t->rank, t->dims);
}

static EvValue *ev_g_copy(EvCtx *c, const EvValue *t)
{
    EvValue *d = ev_g_like(c, t);
    for (size_t k = 0; d && k < t->numel; k++)
        ((double *)d->data)[k] = ev_get_f(t, k);
    return d;
}

/* A float initializer or Constant attribute as a double tensor. */
static EvValue *ev_g_decode(EvCtx *c, const IrTensor *t, const char *name)
{
    IrError err;
    EvValue *v = ev_from_ir_tensor(t, &err), *d = NULL;
    if (!v)
        ev_fail(c, "'%s': %s", name, err.msg);
    else if (!ev_dtype_is_float(v->dtype))
        ev_fail(c, "'%s' is not a float tensor", name);
    else
        d = ev_g_copy(c, v);
    ev_unref(v);
    return d;
}

static int ev_g_cmp(const void *pa, const void *pb)
{
    uintptr_t a = (uintptr_t)((const EvGVal *)pa)->v;
    uintptr_t b = (uintptr_t)((const EvGVal *)pb)->v;
    return (a > b) - (a < b);
}

static EvGVal *ev_g_val(const EvGrad *g, const IrValue *v)
{
    EvGVal key = {.v = v};
    return v ? bsearch(&key, g->vals, g->n_vals, sizeof key, ev_g_cmp) : NULL;
}

static int ev_g_table(EvGrad *g)
{
    g->n_vals = HASH_COUNT(g->graph->values);
    g->vals = ev_tmp(g->c, g->n_vals ? g->n_vals : 1, sizeof *g->vals);
    if (!g->vals)
        return -1;
    size_t i = 0;
    for (IrValue *v = g->graph->values; v && i < g->n_vals; v = v->hh.next)
        g->vals[i++].v = v;
    g->n_vals = i;
    qsort(g->vals, g->n_vals, sizeof *g->vals, ev_g_cmp);
    return 0;
}

/* Gradient's outputs are float16, float, bfloat16 or double, each in the
 * type of its x. */
static bool ev_g_out_type(int32_t dtype)
{
    return dtype == IR_FLOAT || dtype == IR_DOUBLE || dtype == IR_FLOAT16 ||
           dtype == IR_BFLOAT16;
}

static const char *ev_g_name(EvCtx *c, const IrBytes *b)
{
    char *s = ev_tmp(c, b->len + 1, 1);
    if (s && b->len)
        memcpy(s, b->data, b->len);
    return s;
}

/* The value named names[i] of the graph, or NULL with failure. */
static EvGVal *ev_g_named(EvGrad *g, const char *attr, const IrBytes *name)
{
    const char *s = ev_g_name(g->c, name);
    if (!s)
        return NULL;
    EvGVal *v = ev_g_val(g, ir_graph_find_local(g->graph, s));
    if (!v)
        ev_fail(g->c, "%s names '%s', which is not a value of the graph",
                attr, s);
    return v;
}

/* Binds the node's inputs first.. to the n values named by attribute
 * `attr` (xs or zs): the recomputation starts from them. Non-float zs stay
 * unbound; using one fails. */
static int ev_g_bind(EvGrad *g, const char *attr, size_t first, size_t n,
                     const IrBytes *names, bool is_x)
{
    EvCtx *c = g->c;
    for (size_t i = 0; i < n; i++) {
        EvGVal *s = ev_g_named(g, attr, &names[i]);
        EvValue *t = s ? ev_in_tensor(c, first + i) : NULL;
        if (!t)
            return -1;
        if (s->leaf)
            return ev_fail(c, "'%s' is listed twice in xs and zs",
                           s->v->name);
        if (is_x && !ev_g_out_type(t->dtype))
            return ev_fail(c, "x '%s' is not a float16, float, bfloat16 or "
                           "double tensor", s->v->name);
        s->leaf = true;
        s->dep = is_x;
        if (ev_dtype_is_float(t->dtype) && !(s->fwd = ev_g_copy(c, t)))
            return -1;
    }
    return 0;
}

/* Finds the nodes y depends on, walking the graph backwards from it; the
 * bound values end the walk. */
static int ev_g_mark(EvGrad *g, EvGVal *y)
{
    size_t n = 0;
    for (const IrNode *nd = g->graph->first; nd; nd = nd->next)
        n++;
    const IrNode **list = ev_tmp(g->c, n ? n : 1, sizeof *list);
    if (!list)
        return -1;
    size_t k = n;
    y->need = true;
    for (const IrNode *nd = g->graph->last; nd && k; nd = nd->prev) {
        bool need = false;
        for (size_t o = 0; o < nd->n_out; o++) {
            EvGVal *s = ev_g_val(g, nd->out[o]);
            need |= s && s->need && !s->leaf;
        }
        if (!need)
            continue;
        for (size_t i = 0; i < nd->n_in; i++) {
            EvGVal *s = ev_g_val(g, nd->in[i]);
            if (s)
                s->need = true;
        }
        list[--k] = nd;
    }
    g->nodes = list + k;
    g->n_nodes = n - k;
    return 0;
}

/* The forward value of v, an input of a node on the way to y: computed
 * already, or an initializer; anything else fails. */
static EvValue *ev_g_input(EvGrad *g, const IrValue *v)
{
    EvCtx *c = g->c;
    EvGVal *s = ev_g_val(g, v);
    if (!v)
        ev_fail(c, "y depends on a node with an input left out");
    else if (!s)
        ev_fail(c, "y depends on '%s' of an enclosing graph; pass it in zs",
                v->name);
    else if (s->fwd)
        return s->fwd;
    else if (s->leaf)
        ev_fail(c, "'%s' is not a float tensor", v->name);
    else if (v->kind == IR_VAL_INIT && v->init)
        return s->fwd = ev_g_decode(c, v->init, v->name);
    else if (v->kind == IR_VAL_INPUT)
        ev_fail(c, "y depends on graph input '%s', which Gradient does not "
                "take; list it in zs", v->name);
    else
        ev_fail(c, "y depends on '%s', which is not available to Gradient",
                v->name);
    return NULL;
}

static EvValue *ev_g_constant(EvCtx *c, const IrNode *nd)
{
    const IrAttr *a;
    EvValue *t = NULL;
    if ((a = ev_g_node_attr(nd, "value")) && a->t && !a->ref_attr_name) {
        t = ev_g_decode(c, a->t, ev_g_label(nd));
    } else if ((a = ev_g_node_attr(nd, "value_float")) && !a->ref_attr_name) {
        if ((t = ev_g_tensor(c, 0, NULL)))
            *(double *)t->data = a->f;
    } else if ((a = ev_g_node_attr(nd, "value_floats")) && !a->ref_attr_name) {
        int64_t n = (int64_t)a->n_floats;
        t = ev_g_tensor(c, 1, &n);
        for (size_t k = 0; t && k < a->n_floats; k++)
            ((double *)t->data)[k] = a->floats[k];
    } else {
        ev_fail(c, "Constant '%s' on the way to y has no float value "
                "Gradient can read", ev_g_label(nd));
    }
    return t;
}

/* y = f(a, b) with numpy broadcasting (b NULL for unary ops). */
static EvValue *ev_g_elementwise(EvCtx *c, const EvGOp *op, EvValue *a,
                                 EvValue *b)
{
    EvValue *t[2] = {a, b};
    size_t n = b ? 2 : 1, rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_broadcast_shape(c, n, t, &rank, dims))
        return NULL;
    EvValue *y = ev_g_tensor(c, rank, dims);
    if (!y)
        return NULL;
    const double *A = a->data, *B = b ? b->data : NULL;
    double *Y = y->data;
    EvBcast it;
    ev_bcast_init(&it, n, t, rank, dims);
    for (size_t k = 0; k < y->numel; k++, ev_bcast_next(&it))
        Y[k] = op->f(A[it.off[0]], B ? B[it.off[1]] : 0);
    return y;
}

static EvValue *ev_g_sum(EvCtx *c, size_t n, EvValue **in)
{
    size_t rank;
    int64_t dims[EV_MAX_RANK];
    if (ev_broadcast_shape(c, n, in, &rank, dims))
        return NULL;
    EvValue *y = ev_g_tensor(c, rank, dims);
    for (size_t j = 0; y && j < n; j++) {
        const double *X = in[j]->data;
        EvBcast it;
        ev_bcast_init(&it, 1, &in[j], rank, dims);
        for (size_t k = 0; k < y->numel; k++, ev_bcast_next(&it))
            ((double *)y->data)[k] += X[it.off[0]];
    }
    return y;
}

static EvValue *ev_g_matmul(EvCtx *c, const EvValue *a, const EvValue *b)
{
    if (a->rank != 2 || b->rank != 2 || a->dims[1] != b->dims[0])
        return ev_fail(c, "Gradient through MatMul needs 2-D operands "
                       "[M, K] and [K, N]"), NULL;
    size_t m = (size_t)a->dims[0], kk = (size_t)a->dims[1],
           n = (size_t)b->dims[1];
    EvValue *y = ev_g_tensor(c, 2, (int64_t[]){a->dims[0], b->dims[1]});
    const double *A = a->data, *B = b->data;
    for (size_t i = 0; y && i < m; i++)
        for (size_t p = 0; p < kk; p++)
            for (size_t j = 0; j < n; j++)
                ((double *)y->data)[i * n + j] += A[i * kk + p] * B[p * n + j];
    return y;
}

/* The forward value of node nd's only output. */
static EvValue *ev_g_eval(EvGrad *g, const IrNode *nd, const EvGOp *op,
                          EvValue **in)
{
    EvCtx *c = g->c;
    size_t n = nd->n_in;
    size_t want = op->kind == EV_G_UNARY ? 1 : op->kind == EV_G_CONST ? 0 : 2;
    if (op->kind == EV_G_SUM ? n < 1 : n != want)
        return ev_fail(c, "%s node '%s' has %zu inputs", nd->op_type,
                       ev_g_label(nd), n), NULL;
    /* Opset 1-6 binary ops could align b at an axis; numpy broadcasting
     * covers only their default (b a suffix of a's shape). */
    if (op->kind == EV_G_BINARY && ev_g_node_attr(nd, "axis"))
        return ev_fail(c, "Gradient through %s with a legacy 'axis' "
                       "broadcast is not supported", nd->op_type), NULL;
    switch (op->kind) {
    case EV_G_UNARY: return ev_g_elementwise(c, op, in[0], NULL);
    case EV_G_BINARY: return ev_g_elementwise(c, op, in[0], in[1]);
    case EV_G_SUM: return ev_g_sum(c, n, in);
    case EV_G_MATMUL: return ev_g_matmul(c, in[0], in[1]);
    case EV_G_CONST: return ev_g_constant(c, nd);
    }
    return NULL;
}

/* Recomputes the nodes y depends on, in graph order. */
static int ev_g_forward(EvGrad *g)
{
    EvCtx *c = g->c;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const IrNode *nd = g->nodes[i];
        bool dep = false;
        for (size_t j = 0; j < nd->n_in; j++) {
            EvGVal *s = ev_g_val(g, nd->in[j]);
            dep |= s && s->dep;
        }
        const EvGOp *op = ev_gop(nd);
        if (!op && dep)
            return ev_fail(c, "Gradient through %s is not supported by the "
                           "evaluator", nd->op_type);
        if (!op)
            return ev_fail(c, "y depends on %s node '%s', which Gradient "
                           "cannot recompute; pass its output in zs",
                           nd->op_type, ev_g_label(nd));
        if (nd->n_out != 1 || !nd->out[0])
            return ev_fail(c, "%s node '%s' must have one output",
                           nd->op_type, ev_g_label(nd));
        EvValue **in = ev_tmp(c, nd->n_in ? nd->n_in : 1, sizeof *in);
        if (!in)
            return -1;
        for (size_t j = 0; j < nd->n_in; j++)
            if (!(in[j] = ev_g_input(g, nd->in[j])))
                return -1;
        EvGVal *out = ev_g_val(g, nd->out[0]);
        if (!out || !(out->fwd = ev_g_eval(g, nd, op, in)))
            return out ? -1 : ev_fail(c, "output of '%s' is unknown",
                                      ev_g_label(nd));
        out->dep = dep;
    }
    return 0;
}

/* The gradient of s, created (zeros shaped like its value) on first use;
 * NULL when s does not depend on an x, so it needs none. */
static double *ev_g_grad(EvGrad *g, EvGVal *s)
{
    if (!s->dep)
        return NULL;
    if (!s->grad)
        s->grad = ev_g_like(g->c, s->fwd);
    return s->grad ? s->grad->data : NULL;
}

/* Adds G * dy/da and G * dy/db into the operands' gradients, summing over
 * the dims they were broadcast along. */
static void ev_g_back_elementwise(const EvGOp *op, const EvGVal *y,
                                  EvGVal *a, double *ga, EvGVal *b, double *gb)
{
    EvValue *t[2] = {a->fwd, b ? b->fwd : NULL};
    const double *A = a->fwd->data, *B = b ? b->fwd->data : NULL;
    const double *Y = y->fwd->data, *G = y->grad->data;
    EvBcast it;
    ev_bcast_init(&it, b ? 2 : 1, t, y->fwd->rank, y->fwd->dims);
    for (size_t k = 0; k < y->fwd->numel; k++, ev_bcast_next(&it)) {
        double av = A[it.off[0]], bv = B ? B[it.off[1]] : 0;
        if (ga)
            ga[it.off[0]] += G[k] * op->da(av, bv, Y[k]);
        if (gb)
            gb[it.off[1]] += G[k] * op->db(av, bv, Y[k]);
    }
}

static void ev_g_back_sum(const EvGVal *y, EvGVal *x, double *gx)
{
    const double *G = y->grad->data;
    EvBcast it;
    ev_bcast_init(&it, 1, &x->fwd, y->fwd->rank, y->fwd->dims);
    for (size_t k = 0; k < y->fwd->numel; k++, ev_bcast_next(&it))
        gx[it.off[0]] += G[k];
}

/* dA = G B^T, dB = A^T G. */
static void ev_g_back_matmul(const EvGVal *y, EvGVal *a, double *ga,
                             EvGVal *b, double *gb)
{
    size_t m = (size_t)a->fwd->dims[0], kk = (size_t)a->fwd->dims[1],
           n = (size_t)b->fwd->dims[1];
    const double *A = a->fwd->data, *B = b->fwd->data, *G = y->grad->data;
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < kk; p++)
            for (size_t j = 0; j < n; j++) {
                if (ga)
                    ga[i * kk + p] += G[i * n + j] * B[p * n + j];
                if (gb)
                    gb[p * n + j] += A[i * kk + p] * G[i * n + j];
            }
}

/* Propagates the gradients from y back to the xs, in reverse graph
 * order, so each node's output gradient is complete when it is used. */
static int ev_g_backward(EvGrad *g)
{
    for (size_t i = g->n_nodes; i-- > 0;) {
        const IrNode *nd = g->nodes[i];
        EvGVal *y = ev_g_val(g, nd->out[0]);
        const EvGOp *op = ev_gop(nd);
        if (!y->dep || !y->grad)
            continue;
        EvGVal **in = ev_tmp(g->c, nd->n_in, sizeof *in);
        double **gin = ev_tmp(g->c, nd->n_in, sizeof *gin);
        if (!in || !gin)
            return -1;
        for (size_t j = 0; j < nd->n_in; j++) {
            in[j] = ev_g_val(g, nd->in[j]);
            gin[j] = ev_g_grad(g, in[j]);
            if (in[j]->dep && !gin[j])
                return -1;
        }
        switch (op->kind) {
        case EV_G_UNARY:
            ev_g_back_elementwise(op, y, in[0], gin[0], NULL, NULL);
            break;
        case EV_G_BINARY:
            ev_g_back_elementwise(op, y, in[0], gin[0], in[1], gin[1]);
            break;
        case EV_G_SUM:
            for (size_t j = 0; j < nd->n_in; j++)
                if (gin[j])
                    ev_g_back_sum(y, in[j], gin[j]);
            break;
        case EV_G_MATMUL:
            ev_g_back_matmul(y, in[0], gin[0], in[1], gin[1]);
            break;
        case EV_G_CONST:
            break;
        }
    }
    return 0;
}

/* Output i: the gradient of x_i in its type (zeros when y does not depend
 * on it). */
static int ev_g_outputs(EvGrad *g, const IrBytes *xs, size_t nx)
{
    EvCtx *c = g->c;
    for (size_t i = 0; i < nx; i++) {
        if (!ev_has_out(c, i))
            continue;
        const EvValue *x = c->in[i];
        EvGVal *s = ev_g_named(g, "xs", &xs[i]);
        EvValue *o = s ? ev_out_tensor(c, i, x->dtype, x->rank, x->dims) : NULL;
        if (!o)
            return -1;
        for (size_t k = 0; s->grad && k < o->numel; k++)
            ev_set_f(o, k, ((double *)s->grad->data)[k]);
    }
    return 0;
}

static int ev_gradient(EvCtx *c)
{
    const IrBytes *xs, *zs;
    long nx = ev_attr_strings(c, "xs", &xs), nz = ev_attr_strings(c, "zs", &zs);
    if (nx <= 0)
        return ev_fail(c, "attribute 'xs' is required");
    if (nz < 0)
        nz = 0;
    if (!ev_attr(c, "y"))
        return ev_fail(c, "attribute 'y' is required");
    if (c->n_in != (size_t)(nx + nz))
        return ev_fail(c, "expects %ld inputs (the xs then the zs), got %zu",
                       nx + nz, c->n_in);
    if (c->n_out != (size_t)nx)
        return ev_fail(c, "expects %ld outputs (one per x), got %zu", nx,
                       c->n_out);
    EvGrad g = {.c = c, .graph = c->node->graph};
    if (ev_g_table(&g) || ev_g_bind(&g, "xs", 0, (size_t)nx, xs, true) ||
        ev_g_bind(&g, "zs", (size_t)nx, (size_t)nz, zs, false))
        return -1;
    const char *yname = ev_attr_s_or(c, "y", "");
    EvGVal *y = ev_g_val(&g, ir_graph_find_local(g.graph, yname));
    if (!y)
        return ev_fail(c, "y '%s' is not a value of the graph", yname);
    if (ev_g_mark(&g, y) || ev_g_forward(&g) || !ev_g_input(&g, y->v))
        return -1;
    /* dY = ones: the outputs are the gradients of sum(Y). */
    if (y->dep && ev_g_grad(&g, y))
        for (size_t k = 0; k < y->fwd->numel; k++)
            ((double *)y->grad->data)[k] = 1;
    if (y->dep && !y->grad)
        return -1;
    if (ev_g_backward(&g))
        return -1;
    return ev_g_outputs(&g, xs, (size_t)nx);
}

const EvOp ev_ops_training[] = {
    {"ai.onnx.preview.training", "Adagrad", ev_adagrad},
    {"ai.onnx.preview.training", "Adam", ev_adam},
    {"ai.onnx.preview.training", "Momentum", ev_momentum},
    {"ai.onnx.preview.training", "Gradient", ev_gradient},
    {NULL, NULL, NULL}
};
