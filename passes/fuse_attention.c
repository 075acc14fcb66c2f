/*
 * fuse_attention.c - fuses the scaled dot-product attention exporters
 * write, on 4-D [B, H, S, D] operands, into Attention (opset >= 23).
 *
 *   Kt     = Transpose(K, perm=[0,1,3,2])
 *   scores = MatMul(Q, Kt)
 *   scores = Mul(scores, c) or Div(scores, c)         (optional)
 *   scores = Add(scores, mask)                        (optional)
 *   probs  = Softmax(scores, axis=-1 or 3)
 *   Y      = MatMul(probs, V)
 * becomes Y = Attention(Q, K, V[, mask], scale=s). Q and Kt may each be
 * pre-scaled by a scalar (Mul or Div: PyTorch's SDPA export scales both
 * by sqrt(scale)), and K by a scalar before the Transpose; s is the
 * product of every factor. Mul and Add take their
 * operands in either order.
 *
 * Why it is exact: Attention-23 with 4-D inputs, no past key/value,
 * is_causal 0, softcap 0 and no softmax_precision computes
 * Softmax(Q K^T * scale + mask, last axis) V in Q's element type, with a
 * float mask added to the scaled scores as a number, broadcast to
 * [B, H, S_q, S_kv]; scalar factors commute with the products up to float
 * rounding. The refusals keep it so:
 * - Q, K, V are float, float16, bfloat16 or double tensors of rank 4 with
 *   one element type, and their batch and head dims are provably equal
 *   (the same number or the same symbol): MatMul would broadcast a 1
 *   where Attention would fail or pair heads differently.
 * - The scale factors are one-element constants of rank <= 4 (they
 *   broadcast without growing anything); the total must be finite and
 *   non-zero.
 * - The mask has rank 1..4, Q's element type, and each dim 1 or equal to
 *   the scores' dim there (so Add leaves the scores' shape alone). It must
 *   be added after the scaling: (scores + mask) * c is another function.
 *   A constant mask with a row that is all -inf is refused: the chain
 *   gives NaN there, while Attention's fully-masked-row rule gives 0.
 *   A mask computed at run time is taken as it is (see the report): only
 *   rows that the chain turns into NaN could differ.
 * - The scores, the scaled scores, the masked scores and the
 *   probabilities are read only inside the chain, and neither the mask
 *   nor V is one of them (Add(s, s), MatMul(p, p)); the Transpose and
 *   the pre-scalings are deleted only when nothing else reads them.
 * 3-D attention ([B*H, S, D], as torch's MultiheadAttention exports it)
 * is not fused: Attention's 3-D form splits heads out of the last axis,
 * another layout.
 */
#include <math.h>
#include <string.h>

#include "passes/fuse_util.h"

typedef struct OptAt {
    const IrGraph *g;
    IrNode *mm1, *scale, *add, *sm, *mm2;   /* the chain, swallowed */
    IrNode *pre[3];                         /* Q, Kt and K scalings */
    IrNode *tr;
    IrValue *q, *k, *v, *mask, *scores;
    double factor;
} OptAt;

/* v = Mul(x, c), Mul(c, x) or Div(x, c) with c a one-element constant:
 * returns x, multiplies *f by c (or 1/c) and sets *node; else v itself. */
static IrValue *opt_at_unscale(const IrGraph *g, IrValue *v, IrNode **node, double *f)
{
    IrNode *k = opt_fz_def(g, v, "Mul");
    bool div = false;
    if (!k) {
        k = opt_fz_def(g, v, "Div");
        div = true;
    }
    *node = NULL;
    if (!k || k->n_in != 2 || k->n_out != 1 || !k->in[0] || !k->in[1])
        return v;
    double c, other;
    for (int i = 0; i < (div ? 1 : 2); i++)
        if (opt_fz_scalar(k->in[1 - i], 4, &c) && !opt_fz_scalar(k->in[i], 4, &other) &&
            c != 0) {
            *f = div ? *f / c : *f * c;
            *node = k;
            return k->in[i];
        }
    return v;
}

/* Both dims are the same number or the same symbol. */
static bool opt_at_same_dim(const IrDim *a, const IrDim *b)
{
    if (a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE)
        return a->value == b->value;
    return a->kind == IR_DIM_PARAM && b->kind == IR_DIM_PARAM && a->param && b->param &&
           strcmp(a->param, b->param) == 0;
}

/* Q, K, V: one real element type, rank 4, equal batch and head dims. */
static bool opt_at_types(const OptAt *p)
{
    size_t rq, rk, rv;
    int32_t dt = opt_fz_real(p->q, &rq);
    /* float16/bfloat16: the chain rounds the scores twice, Attention once;
     * with a scale that is not a power of two they differ by a few ulp */
    if ((dt != IR_FLOAT && dt != IR_DOUBLE) || rq != 4 || opt_fz_real(p->k, &rk) != dt || rk != 4 ||
        opt_fz_real(p->v, &rv) != dt || rv != 4)
        return false;
    const IrDim *q = p->q->type->shape->dims, *k = p->k->type->shape->dims,
                *v = p->v->type->shape->dims;
    for (int i = 0; i < 2; i++)
        if (!opt_at_same_dim(&q[i], &k[i]) || !opt_at_same_dim(&q[i], &v[i]))
            return false;
    return true;
}

/* The mask is a constant with no row (along its last axis) that is all
 * -inf. Such a row gives NaN in the chain and 0 in Attention, so a mask
 * computed at run time, which might hold one, is not fused either. */
static bool opt_at_rows_finite(const IrValue *mask)
{
    TkTensor *t = opt_fz_const(mask);
    if (!t)
        return false;
    bool ok = t->rank >= 1 && t->dims[t->rank - 1] > 0;
    size_t row = ok ? (size_t)t->dims[t->rank - 1] : 0;
    for (size_t r = 0; ok && r < t->numel; r += row) {
        bool all = true;
        for (size_t j = 0; all && j < row; j++)
            all = isinf(tk_get_f(t, r + j)) && tk_get_f(t, r + j) < 0;
        ok = !all;
    }
    tk_free(t);
    return ok;
}

/* The mask: Q's element type, rank 1..4, each dim 1 or the scores'. */
static bool opt_at_mask_ok(const OptAt *p)
{
    size_t rm, rs;
    int32_t dt = opt_fz_real(p->mask, &rm);
    if (!dt || dt != opt_fz_real(p->q, &rs) || rm < 1 || rm > 4 ||
        opt_fz_real(p->scores, &rs) != dt || rs != 4)
        return false;
    const IrDim *m = p->mask->type->shape->dims, *s = p->scores->type->shape->dims;
    for (size_t i = 0; i < rm; i++) {
        const IrDim *md = &m[rm - 1 - i], *sd = &s[3 - i];
        if (!(md->kind == IR_DIM_VALUE && md->value == 1) && !opt_at_same_dim(md, sd))
            return false;
    }
    return opt_at_rows_finite(p->mask);
}

/* Softmax over the last axis of a rank-4 tensor, read only by mm2. */
static bool opt_at_softmax(OptAt *p, IrValue *probs)
{
    p->sm = opt_fz_def(p->g, probs, "Softmax");
    if (!p->sm || p->sm->n_in != 1 || p->sm->n_out != 1 || !opt_fz_private(probs, &p->mm2, 1))
        return false;
    for (size_t i = 0; i < p->sm->n_attr; i++)
        if (strcmp(p->sm->attr[i]->name, "axis") != 0)
            return false;
    const IrAttr *a = ir_node_attr(p->sm, "axis");
    return !a || (!a->ref_attr_name && a->has_i && (a->i == -1 || a->i == 3));
}

/* K from Kt = Transpose(K, [0,1,3,2]) (K maybe scaled before it). */
static bool opt_at_key(OptAt *p, IrValue *kt)
{
    p->tr = opt_fz_def(p->g, kt, "Transpose");
    if (!p->tr || p->tr->n_in != 1 || p->tr->n_out != 1 || p->tr->n_attr != 1)
        return false;
    const IrAttr *perm = ir_node_attr(p->tr, "perm");
    static const int64_t want[4] = {0, 1, 3, 2};
    if (!perm || perm->ref_attr_name || perm->n_ints != 4)
        return false;
    for (int i = 0; i < 4; i++)
        if (perm->ints[i] != want[i])
            return false;
    p->k = opt_at_unscale(p->g, p->tr->in[0], &p->pre[2], &p->factor);
    return true;
}

/* scores = MatMul(Q', Kt') read only by `reader`, scalings peeled off. */
static bool opt_at_product(OptAt *p, IrValue *s, IrNode *reader)
{
    p->mm1 = opt_fz_def(p->g, s, "MatMul");
    if (!p->mm1 || p->mm1->n_in != 2 || p->mm1->n_out != 1 || !opt_fz_private(s, &reader, 1))
        return false;
    p->scores = s;
    p->q = opt_at_unscale(p->g, p->mm1->in[0], &p->pre[0], &p->factor);
    return opt_at_key(p, opt_at_unscale(p->g, p->mm1->in[1], &p->pre[1], &p->factor));
}

/* The scores feeding `reader` (Softmax or Add): optionally scaled. */
static bool opt_at_scores(OptAt *p, IrValue *s, IrNode *reader)
{
    IrNode *sc;
    double f = 1.0;
    IrValue *raw = opt_at_unscale(p->g, s, &sc, &f);
    if (sc && !opt_fz_private(s, &reader, 1))
        return false;
    p->scale = sc;
    p->factor = f;
    return opt_at_product(p, raw, sc ? sc : reader);
}

static bool opt_at_match(OptAt *p, IrNode *k)
{
    if (!opt_fz_op(k, "MatMul") || k->n_in != 2 || k->n_out != 1 || !k->out[0] || !k->in[0])
        return false;
    p->mm2 = k;
    p->v = k->in[1];
    if (p->v == k->in[0])
        return false;       /* V is the probabilities themselves */
    if (!opt_at_softmax(p, k->in[0]))
        return false;
    IrValue *x = p->sm->in[0];
    IrNode *add = opt_fz_def(p->g, x, "Add");
    if (add && add->n_in == 2 && add->n_out == 1 && add->in[0] != add->in[1] &&
        opt_fz_private(x, &p->sm, 1)) {
        for (int i = 0; i < 2; i++) {
            OptAt t = *p;
            t.add = add;
            t.mask = add->in[1 - i];
            if (add->in[i] && t.mask && opt_at_scores(&t, add->in[i], add) &&
                opt_at_types(&t) && opt_at_mask_ok(&t)) {
                *p = t;
                return true;
            }
        }
    }
    return opt_at_scores(p, x, p->sm) && opt_at_types(p);
}

/* n, when nothing outside the chain reads its output. Judged once the
 * Attention node exists, so its own reads (Q may be the Transpose's
 * output itself, as in Kt Kt) keep a node alive. */
static IrNode *opt_at_if_private(IrNode *n, IrNode *reader)
{
    return n && opt_fz_private(n->out[0], &reader, 1) ? n : NULL;
}

static int opt_at_fuse(OptCtx *c, IrNode *k)
{
    OptAt p = {.g = c->g};
    if (!opt_at_match(&p, k))
        return 0;
    float scale = (float)p.factor;
    if (!isfinite(scale) || scale == 0.0f)
        return 0;
    IrValue *in[4] = {p.q, p.k, p.v, p.mask};
    IrNode *at = opt_fz_replace(c, k, "Attention", p.mask ? 4 : 3, in);
    if (!at)
        return -1;
    ir_node_set_attr(at, ir_attr_float("scale", scale));
    /* The scalings and the Transpose go only with their last reader. */
    IrNode *kmul = opt_at_if_private(p.pre[1], p.mm1);
    IrNode *tr = p.pre[1] && !kmul ? NULL
                                   : opt_at_if_private(p.tr, p.pre[1] ? p.pre[1] : p.mm1);
    IrNode *kpre = tr ? opt_at_if_private(p.pre[2], p.tr) : NULL;
    IrNode *dead[] = {kpre, tr, kmul, opt_at_if_private(p.pre[0], p.mm1), p.mm1, p.scale,
                      p.add, p.sm, p.mm2};
    opt_fz_delete(dead, sizeof dead / sizeof dead[0]);
    return 1;
}

static long opt_at_run(OptCtx *c)
{
    return opt_fz_run(c, 23, opt_at_fuse);
}

const OptPass opt_pass_fuse_attention = {
    "fuse_attention",
    "fuses 4-D MatMul/Transpose/Softmax/MatMul attention into Attention (opset >= 23)", true,
    OPT_NEEDS_TYPES, opt_at_run,
};
