/*
 * fuse_layernorm.c - fuses the decomposed layer normalization exporters
 * write below opset 17 into LayerNormalization (opset >= 17).
 *
 *   mean = ReduceMean(x, last k axes, keepdims=1)
 *   d    = Sub(x, mean)
 *   var  = ReduceMean(Pow(d, 2) or Mul(d, d), the same axes)
 *   n    = Div(d, Sqrt(Add(var, eps)))  or  Mul(d, Reciprocal(Sqrt(...)))
 *   y    = Add(Mul(n, gamma), beta)     (Mul and Add each optional)
 * becomes y = LayerNormalization(x, gamma, beta, axis=-k, epsilon=eps).
 *
 * Why it is exact: LayerNormalization-17 computes, over the axes from
 * `axis` on, (x - mean) / sqrt(var + epsilon) * Scale + B with the
 * population variance, which is what the chain spells out; the chain's
 * eps must be the constant added to the variance inside the square root
 * (eps added after the Sqrt is another function and does not match).
 * gamma and beta must be constants of x's element type that scale the
 * normalized axes elementwise without changing x's shape; when they are
 * absent or merely broadcast, full-size constants are made (Scale of ones;
 * no B). Every intermediate must be read only inside the chain (d exactly
 * by the square and the division), and x's element type (float, float16,
 * bfloat16), rank and normalized dims must be known. The statistics run in
 * float (stash_type 1), at least as precise as the chain for float16 and
 * bfloat16. Double is not fused: stash_type cannot be double, and the
 * fused node would round the chain's double statistics to float.
 */
#include "passes/fuse_util.h"

typedef struct OptLn {
    IrNode *mean, *sub, *sq, *var, *add, *sqrt, *recip, *div, *mul, *bias;
    IrValue *x, *gamma, *beta;
    double eps;
    size_t k;
} OptLn;

/* k is Div(d, s) or Mul(d, Reciprocal(s)) in either order: sets p->div,
 * p->recip, and the d and s values. */
static bool opt_ln_divide(const IrGraph *g, IrNode *k, OptLn *p, IrValue **d, IrValue **s)
{
    if (k->n_in != 2 || k->n_out != 1 || !k->out[0])
        return false;
    p->div = k;
    if (opt_fz_op(k, "Div")) {
        *d = k->in[0];
        *s = k->in[1];
        return true;
    }
    if (!opt_fz_op(k, "Mul"))
        return false;
    for (int i = 0; i < 2; i++) {
        IrNode *r = opt_fz_def(g, k->in[1 - i], "Reciprocal");
        if (r && opt_fz_def(g, k->in[i], "Sub") && r->n_in == 1 &&
            opt_fz_private(r->out[0], &k, 1)) {
            p->recip = r;
            *d = k->in[i];
            *s = r->in[0];
            return true;
        }
    }
    return false;
}

/* var + eps, then the variance: var = ReduceMean(d*d) read only here. */
static bool opt_ln_variance(const IrGraph *g, OptLn *p, IrValue *d, size_t rank)
{
    IrNode *a = p->add;
    if (a->n_in != 2 || !opt_fz_private(a->out[0], &p->sqrt, 1))
        return false;
    for (int i = 0; i < 2 && !p->var; i++)
        if (opt_fz_def(g, a->in[i], "ReduceMean") && opt_fz_scalar(a->in[1 - i], rank, &p->eps))
            p->var = a->in[i]->producer;
    if (!p->var || p->var->n_in < 1 || !opt_fz_private(p->var->out[0], &p->add, 1))
        return false;
    IrValue *sq = p->var->in[0];
    double two;
    if ((p->sq = opt_fz_def(g, sq, "Pow")) != NULL) {
        if (p->sq->n_in != 2 || p->sq->in[0] != d || !opt_fz_scalar(p->sq->in[1], rank, &two) ||
            two != 2.0)
            return false;
    } else if ((p->sq = opt_fz_def(g, sq, "Mul")) != NULL) {
        if (p->sq->n_in != 2 || p->sq->in[0] != d || p->sq->in[1] != d)
            return false;
    } else {
        return false;
    }
    IrNode *readers[2] = {p->sq, p->div};
    return opt_fz_private(sq, &p->var, 1) && opt_fz_private(d, readers, 2);
}

/* The optional Mul(n, gamma) and Add(., beta) after the division. */
static void opt_ln_affine(const IrGraph *g, OptLn *p)
{
    IrNode *last = p->div;
    for (int step = 0; step < 2; step++) {
        IrNode *r = opt_fz_reader(last->out[0]);
        const char *op = step == 0 ? "Mul" : "Add";
        if (!r || r->graph != g || !opt_fz_op(r, op) || r->n_in != 2 || r->n_out != 1)
            continue;
        int i = r->in[0] == last->out[0] ? 1 : 0;
        IrValue *c = r->in[i];
        if (c == last->out[0] || !opt_fz_param_ok(c, p->x, p->k))
            continue;
        if (step == 0)
            p->mul = r, p->gamma = c;
        else
            p->bias = r, p->beta = c;
        last = r;
    }
}

/* Matches the chain ending at k (the division). */
static bool opt_ln_match(const OptCtx *c, IrNode *k, OptLn *p)
{
    const IrGraph *g = c->g;
    IrValue *d, *s;
    size_t rank;
    if (!opt_ln_divide(g, k, p, &d, &s))
        return false;
    p->sub = opt_fz_def(g, d, "Sub");
    p->sqrt = opt_fz_def(g, s, "Sqrt");
    if (!p->sub || !p->sqrt || p->sub->n_in != 2 || p->sqrt->n_in != 1)
        return false;
    p->x = p->sub->in[0];
    p->mean = opt_fz_def(g, p->sub->in[1], "ReduceMean");
    /* double: LayerNormalization-17's statistics are at most float */
    if (!p->x || !opt_fz_real(p->x, &rank) || opt_fz_real(p->x, &rank) == IR_DOUBLE || !p->mean || p->mean->n_in < 1 ||
        p->mean->in[0] != p->x || !opt_fz_private(p->mean->out[0], &p->sub, 1) ||
        !opt_fz_private(s, p->recip ? &p->recip : &p->div, 1))
        return false;
    p->add = opt_fz_def(g, p->sqrt->in[0], "Add");
    if (!p->add || !opt_ln_variance(g, p, d, rank))
        return false;
    int64_t dims[TK_MAX_RANK];
    p->k = opt_fz_tail_axes(c, p->mean, rank);
    if (p->k == 0 || opt_fz_tail_axes(c, p->var, rank) != p->k ||
        !opt_fz_tail_dims(p->x, p->k, dims))
        return false;
    opt_ln_affine(g, p);
    return true;
}

static int opt_ln_rewrite(OptCtx *c, OptLn *p)
{
    IrNode *last = p->bias ? p->bias : p->mul ? p->mul : p->div;
    IrValue *in[3] = {p->x, opt_fz_param(c, last, p->gamma, p->x, p->k, 1.0), NULL};
    if (!in[1] || (p->beta && !(in[2] = opt_fz_param(c, last, p->beta, p->x, p->k, 0.0))))
        return -1;
    IrNode *ln = opt_fz_replace(c, last, "LayerNormalization", p->beta ? 3 : 2, in);
    if (!ln)
        return -1;
    ir_node_set_attr(ln, ir_attr_int("axis", -(int64_t)p->k));
    ir_node_set_attr(ln, ir_attr_float("epsilon", (float)p->eps));
    IrNode *dead[] = {p->mean, p->sub, p->sq, p->var, p->add, p->sqrt, p->recip, p->div,
                      p->mul, p->bias};
    opt_fz_delete(dead, sizeof dead / sizeof dead[0]);
    return 0;
}

static int opt_ln_fuse(OptCtx *c, IrNode *k)
{
    OptLn p = {0};
    if (!opt_ln_match(c, k, &p))
        return 0;
    return opt_ln_rewrite(c, &p) < 0 ? -1 : 1;
}

static long opt_ln_run(OptCtx *c)
{
    return opt_fz_run(c, 17, opt_ln_fuse);
}

const OptPass opt_pass_fuse_layernorm = {
    "fuse_layernorm",
    "fuses ReduceMean/Sub/Pow/Sqrt/Div layer norms into LayerNormalization (opset >= 17)", true,
    OPT_NEEDS_TYPES, opt_ln_run,
};
