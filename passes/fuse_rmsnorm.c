/*
 * fuse_rmsnorm.c - fuses hand-written RMS normalization (LLaMA-style
 * code, as exported) into RMSNormalization (opset >= 23).
 *
 *   ms = ReduceMean(Pow(x, 2) or Mul(x, x), last k axes, keepdims=1)
 *   s  = Add(ms, eps)
 *   n  = Div(x, Sqrt(s))  or  Mul(x, r) with r = Reciprocal(Sqrt(s)),
 *        Div(1, Sqrt(s)) or Pow(s, -0.5)
 *   y  = Mul(n, w)        (optional; either order)
 * becomes y = RMSNormalization(x, w, axis=-k, epsilon=eps).
 *
 * Why it is exact: RMSNormalization-23 computes x / sqrt(mean(x^2 over
 * the axes from `axis` on) + epsilon) * scale, which is the chain; eps must
 * be added to the mean square inside the root. w must be a constant of x's
 * element type that scales the normalized axes elementwise without
 * changing x's shape; when absent or merely broadcast, a full-size Scale is
 * made (ones when absent: Scale is required). Intermediates are read only
 * inside the chain; x is float, double, float16 or bfloat16 of known rank
 * and normalized dims. Statistics run in float (stash_type 1), or in
 * double for double inputs (stash_type 11), so never less precisely than
 * the chain.
 */
#include "passes/fuse_util.h"

#define OPT_RMS_MAX 8

typedef struct OptRms {
    IrNode *nodes[OPT_RMS_MAX];  /* the chain's nodes, for deletion */
    size_t n;
    IrNode *norm, *mul;          /* the normalizing node, the weight Mul */
    IrValue *x, *s, *w;          /* input, mean square + eps, weight */
    IrValue *cst[2];             /* the exponent -0.5 or the 1 of 1/sqrt */
    size_t n_cst;
    double eps;
    size_t k;
} OptRms;

/* The node of op producing v, read only by `reader`; recorded. */
static IrNode *opt_rms_inner(const IrGraph *g, OptRms *p, IrValue *v, const char *op,
                             IrNode *reader)
{
    IrNode *k = opt_fz_def(g, v, op);
    if (!k || k->n_out != 1 || k->n_in < 1 || p->n == OPT_RMS_MAX ||
        !opt_fz_private(v, &reader, 1))
        return NULL;
    p->nodes[p->n++] = k;
    return k;
}

/* v = 1 / sqrt(s) read by `reader`: sets p->s. */
static bool opt_rms_inv(const IrGraph *g, OptRms *p, IrValue *v, IrNode *reader)
{
    double e;
    size_t base = p->n;
    IrNode *k = opt_rms_inner(g, p, v, "Pow", reader), *sq;
    if (k) {
        p->s = k->in[0];
        p->cst[p->n_cst++] = k->in[1];
        if (k->n_in == 2 && opt_fz_scalar(k->in[1], TK_MAX_RANK, &e) && e == -0.5)
            return true;
        p->n = base;
        p->n_cst = 0;
        return false;
    }
    if ((k = opt_rms_inner(g, p, v, "Reciprocal", reader)) != NULL)
        sq = opt_rms_inner(g, p, k->in[0], "Sqrt", k);
    else if ((k = opt_rms_inner(g, p, v, "Div", reader)) != NULL && k->n_in == 2 &&
             opt_fz_near(k->in[0], TK_MAX_RANK, 1.0)) {
        p->cst[p->n_cst++] = k->in[0];
        sq = opt_rms_inner(g, p, k->in[1], "Sqrt", k);
    }
    else
        sq = NULL;
    if (!sq) {
        p->n = base;
        p->n_cst = 0;
        return false;
    }
    p->s = sq->in[0];
    return true;
}

/* The normalizing node k: Div(x, Sqrt(s)) or Mul(x, 1/sqrt(s)). */
static bool opt_rms_norm(const IrGraph *g, OptRms *p, IrNode *k)
{
    if (k->n_in != 2 || k->n_out != 1 || !k->out[0])
        return false;
    p->norm = k;
    p->nodes[p->n++] = k;
    if (opt_fz_op(k, "Div")) {
        IrNode *sq = opt_rms_inner(g, p, k->in[1], "Sqrt", k);
        p->x = k->in[0];
        p->s = sq ? sq->in[0] : NULL;
        return sq != NULL;
    }
    if (!opt_fz_op(k, "Mul"))
        return false;
    for (int i = 0; i < 2; i++)
        if (opt_rms_inv(g, p, k->in[1 - i], k)) {
            p->x = k->in[i];
            return true;
        }
    return false;
}

/* s = Add(ReduceMean(x^2), eps), every part read only inside. */
static bool opt_rms_mean(const OptCtx *c, OptRms *p)
{
    const IrGraph *g = c->g;
    size_t rank;
    IrNode *reader = p->nodes[p->n - 1];
    IrNode *a = opt_rms_inner(g, p, p->s, "Add", reader), *rm = NULL;
    double v;
    if (!a || a->n_in != 2 || !opt_fz_real(p->x, &rank))
        return false;
    for (size_t i = 0; i < p->n_cst; i++)
        if (!opt_fz_scalar(p->cst[i], rank, &v))
            return false;
    for (int i = 0; i < 2 && !rm; i++)
        if (opt_fz_scalar(a->in[1 - i], rank, &p->eps))
            rm = opt_rms_inner(g, p, a->in[i], "ReduceMean", a);
    if (!rm)
        return false;
    double two;
    IrNode *sq = opt_rms_inner(g, p, rm->in[0], "Pow", rm);
    if (sq) {
        if (sq->n_in != 2 || sq->in[0] != p->x || !opt_fz_scalar(sq->in[1], rank, &two) ||
            two != 2.0)
            return false;
    } else if ((sq = opt_rms_inner(g, p, rm->in[0], "Mul", rm)) != NULL) {
        if (sq->n_in != 2 || sq->in[0] != p->x || sq->in[1] != p->x)
            return false;
    } else {
        return false;
    }
    int64_t dims[TK_MAX_RANK];
    p->k = opt_fz_tail_axes(c, rm, rank);
    return p->k > 0 && opt_fz_tail_dims(p->x, p->k, dims);
}

/* The optional Mul by a constant weight after the normalization. */
static void opt_rms_weight(const IrGraph *g, OptRms *p)
{
    IrValue *y = p->norm->out[0];
    IrNode *r = opt_fz_reader(y);
    if (!r || r->graph != g || !opt_fz_op(r, "Mul") || r->n_in != 2 || r->n_out != 1)
        return;
    IrValue *w = r->in[r->in[0] == y ? 1 : 0];
    if (w != y && opt_fz_param_ok(w, p->x, p->k)) {
        p->mul = r;
        p->w = w;
        p->nodes[p->n++] = r;
    }
}

static int opt_rms_rewrite(OptCtx *c, OptRms *p)
{
    IrNode *last = p->mul ? p->mul : p->norm;
    IrValue *in[2] = {p->x, opt_fz_param(c, last, p->w, p->x, p->k, 1.0)};
    size_t rank;
    if (!in[1])
        return -1;
    IrNode *rn = opt_fz_replace(c, last, "RMSNormalization", 2, in);
    if (!rn)
        return -1;
    ir_node_set_attr(rn, ir_attr_int("axis", -(int64_t)p->k));
    ir_node_set_attr(rn, ir_attr_float("epsilon", (float)p->eps));
    if (opt_fz_real(p->x, &rank) == IR_DOUBLE)
        ir_node_set_attr(rn, ir_attr_int("stash_type", IR_DOUBLE));
    opt_fz_delete(p->nodes, p->n);
    return 0;
}

static int opt_rms_fuse(OptCtx *c, IrNode *k)
{
    OptRms p = {0};
    if (!opt_rms_norm(c->g, &p, k) || !opt_rms_mean(c, &p))
        return 0;
    opt_rms_weight(c->g, &p);
    return opt_rms_rewrite(c, &p) < 0 ? -1 : 1;
}

static long opt_rms_run(OptCtx *c)
{
    return opt_fz_run(c, 23, opt_rms_fuse);
}

const OptPass opt_pass_fuse_rmsnorm = {
    "fuse_rmsnorm", "fuses x / sqrt(mean(x^2) + eps) * w into RMSNormalization (opset >= 23)",
    true, OPT_NEEDS_TYPES, opt_rms_run,
};
