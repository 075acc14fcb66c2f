/*
 * fuse_gelu.c - fuses the decomposed GELU exporters write into Gelu
 * (opset >= 20).
 *
 *   erf form:  y = x * 0.5 * (1 + Erf(x / sqrt(2)))          -> Gelu(x)
 *   tanh form: y = x * 0.5 * (1 + Tanh(sqrt(2/pi) *
 *                  (x + 0.044715 * x^3)))     -> Gelu(x, approximate="tanh")
 * The product of x, the constant(s) and the (1 + ...) factor may be
 * grouped any way with two Mul nodes (or a final Div by 2); x / sqrt(2) may
 * be Mul by 1/sqrt(2); x^3 may be Pow(x, 3) or x * (x * x); every Mul and
 * Add takes its operands in either order, and an Add may be a Sum of two
 * (as Gelu's own function body writes it).
 *
 * Why it is exact: Gelu-20 is defined as exactly these two formulas.
 * The constants must be scalars (or one-element tensors no higher in rank
 * than x, so nothing broadcasts) equal to the formula's up to the rounding
 * of their element type (relative 1e-6 for float). Every intermediate must
 * be read only inside the pattern, and x must be a float, double, float16
 * or bfloat16 tensor of known rank (Gelu's types).
 */
#include <math.h>

#include "passes/fuse_util.h"

#define OPT_GE_MAX 16

typedef struct OptGe {
    const IrGraph *g;
    IrNode *nodes[OPT_GE_MAX];  /* the pattern's nodes, for deletion */
    size_t n;
    IrValue *x;
    size_t rank;
    bool tanh;
} OptGe;

/* A factor of the outer product and the node reading it. */
typedef struct OptGeLeaf {
    IrValue *v;
    IrNode *reader;
    bool inverse;               /* a divisor */
} OptGeLeaf;

/* The node of op producing v, read only by `reader`; recorded. */
static IrNode *opt_ge_inner(OptGe *p, IrValue *v, const char *op, IrNode *reader)
{
    IrNode *k = opt_fz_def(p->g, v, op);
    if (!k || k->n_out != 1 || k->n_in < 1 || p->n == OPT_GE_MAX ||
        !opt_fz_private(v, &reader, 1))
        return NULL;
    p->nodes[p->n++] = k;
    return k;
}

/* An Add, or a Sum of two, producing v read only by `reader`. */
static IrNode *opt_ge_add(OptGe *p, IrValue *v, IrNode *reader)
{
    IrNode *k = opt_ge_inner(p, v, "Add", reader);
    if (!k)
        k = opt_ge_inner(p, v, "Sum", reader);
    return k && k->n_in == 2 ? k : NULL;
}

/* Binary k with one operand a constant ~ c: the other operand. */
static IrValue *opt_ge_other(const OptGe *p, const IrNode *k, double c)
{
    if (k->n_in != 2)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (opt_fz_near(k->in[1 - i], p->rank, c))
            return k->in[i];
    return NULL;
}

/* Erf's input is x / sqrt(2) or x * (1/sqrt(2)). */
static bool opt_ge_erf(OptGe *p, IrNode *erf)
{
    IrNode *k = opt_ge_inner(p, erf->in[0], "Div", erf);
    if (k)
        return k->n_in == 2 && k->in[0] == p->x && opt_fz_near(k->in[1], p->rank, M_SQRT2);
    k = opt_ge_inner(p, erf->in[0], "Mul", erf);
    return k && opt_ge_other(p, k, M_SQRT1_2) == p->x;
}

/* v = x^3: Pow(x, 3), or x * (x * x) either way round. */
static bool opt_ge_cube(OptGe *p, IrValue *v, IrNode *reader)
{
    double e;
    IrNode *k = opt_ge_inner(p, v, "Pow", reader);
    if (k)
        return k->n_in == 2 && k->in[0] == p->x && opt_fz_scalar(k->in[1], p->rank, &e) &&
               e == 3.0;
    k = opt_ge_inner(p, v, "Mul", reader);
    if (!k || k->n_in != 2)
        return false;
    for (int i = 0; i < 2; i++)
        if (k->in[i] == p->x) {
            IrNode *sq = opt_ge_inner(p, k->in[1 - i], "Mul", k);
            return sq && sq->n_in == 2 && sq->in[0] == p->x && sq->in[1] == p->x;
        }
    return false;
}

/* Tanh's input is sqrt(2/pi) * (x + 0.044715 * x^3). */
static bool opt_ge_tanh(OptGe *p, IrNode *th)
{
    IrNode *k = opt_ge_inner(p, th->in[0], "Mul", th);
    IrValue *w = k ? opt_ge_other(p, k, sqrt(2.0 / M_PI)) : NULL;
    IrNode *a = w ? opt_ge_add(p, w, k) : NULL;
    if (!a)
        return false;
    for (int i = 0; i < 2; i++)
        if (a->in[i] == p->x) {
            IrNode *m = opt_ge_inner(p, a->in[1 - i], "Mul", a);
            IrValue *x3 = m ? opt_ge_other(p, m, 0.044715) : NULL;
            return x3 && opt_ge_cube(p, x3, m);
        }
    return false;
}

/* The factor 1 + Erf(...) or 1 + Tanh(...). */
static bool opt_ge_one_plus(OptGe *p, const OptGeLeaf *f)
{
    IrNode *a = opt_ge_add(p, f->v, f->reader);
    IrValue *t = a ? opt_ge_other(p, a, 1.0) : NULL;
    IrNode *e = t ? opt_ge_inner(p, t, "Erf", a) : NULL;
    if (e)
        return opt_ge_erf(p, e);
    e = t ? opt_ge_inner(p, t, "Tanh", a) : NULL;
    p->tanh = true;
    return e && opt_ge_tanh(p, e);
}

/* The factors of f = Mul(a, b) or Div(a, b), expanding one private Mul
 * operand; *nl of them. */
static void opt_ge_factors(OptGe *p, IrNode *f, OptGeLeaf *lv, size_t *nl)
{
    bool div = opt_fz_op(f, "Div");
    *nl = 0;
    for (int i = 0; i < 2; i++) {
        IrValue *v = f->in[i];
        IrNode *m = div && i == 1 ? NULL : opt_fz_def(p->g, v, "Mul");
        if (m && m->n_in == 2 && m->n_out == 1 && f->in[0] != f->in[1] &&
            opt_fz_private(v, &f, 1)) {
            p->nodes[p->n++] = m;
            lv[(*nl)++] = (OptGeLeaf){m->in[0], m, false};
            lv[(*nl)++] = (OptGeLeaf){m->in[1], m, false};
        } else {
            lv[(*nl)++] = (OptGeLeaf){v, f, div && i == 1};
        }
    }
}

/* Tries x = nc[ix] with constants cs[0..ncs): their product must be 1/2. */
static bool opt_ge_try(OptGe *p, const OptGeLeaf *x, const OptGeLeaf *a,
                       const OptGeLeaf *cs, size_t ncs)
{
    p->x = x->v;
    if (!opt_fz_real(p->x, &p->rank))
        return false;
    double prod = 1;
    for (size_t i = 0; i < ncs; i++) {
        double v;
        if (!opt_fz_scalar(cs[i].v, p->rank, &v) || v == 0)
            return false;
        prod = cs[i].inverse ? prod / v : prod * v;
    }
    p->tanh = false;
    return fabs(prod - 0.5) <= 0.5e-6 && opt_ge_one_plus(p, a);
}

static bool opt_ge_match(OptGe *p, IrNode *f)
{
    if ((!opt_fz_op(f, "Mul") && !opt_fz_op(f, "Div")) || f->n_in != 2 || f->n_out != 1 ||
        !f->out[0])
        return false;
    OptGeLeaf lv[4], nc[4], cs[4];
    size_t nl, n_nc = 0, n_cs = 0;
    p->n = 0;
    p->nodes[p->n++] = f;
    opt_ge_factors(p, f, lv, &nl);
    for (size_t i = 0; i < nl; i++) {
        double v;
        if (opt_fz_scalar(lv[i].v, TK_MAX_RANK, &v))
            cs[n_cs++] = lv[i];
        else if (!lv[i].inverse)
            nc[n_nc++] = lv[i];
        else
            return false;
    }
    if (n_nc != 2 || n_cs == 0)
        return false;
    size_t base = p->n;
    for (int i = 0; i < 2; i++) {
        p->n = base;
        if (opt_ge_try(p, &nc[i], &nc[1 - i], cs, n_cs))
            return true;
    }
    return false;
}

static int opt_ge_fuse(OptCtx *c, IrNode *k)
{
    OptGe p = {.g = c->g};
    if (!opt_ge_match(&p, k))
        return 0;
    IrNode *ge = opt_fz_replace(c, k, "Gelu", 1, &p.x);
    if (!ge)
        return -1;
    if (p.tanh)
        ir_node_set_attr(ge, ir_attr_string("approximate", "tanh"));
    opt_fz_delete(p.nodes, p.n);
    return 1;
}

static long opt_ge_run(OptCtx *c)
{
    return opt_fz_run(c, 20, opt_ge_fuse);
}

const OptPass opt_pass_fuse_gelu = {
    "fuse_gelu", "fuses erf and tanh GELU formulas into Gelu (opset >= 20)", true,
    OPT_NEEDS_TYPES, opt_ge_run,
};
