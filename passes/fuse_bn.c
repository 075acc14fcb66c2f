/*
 * fuse_bn.c - folds an inference BatchNormalization into the Conv,
 * ConvTranspose, Gemm or MatMul that feeds it.
 *
 * In inference, BatchNormalization is y = x * s[c] + t[c] per channel c
 * (axis 1), with s = scale / sqrt(var + eps) and t = B - mean * s. When x
 * is a linear op's result whose channel c comes from one slice of a
 * constant weight plus a bias, scaling that slice by s[c] and replacing
 * the bias b by b * s + t gives the same y (up to float rounding; the new
 * values are computed in double and stored in the weight's type):
 *   Conv            W [C_out, C_in/group, k...]: slice W[c]
 *   ConvTranspose   W [C_in, C_out/group, k...]: W[i][j] feeds channel
 *                   (i / (C_in/group)) * (C_out/group) + j
 *   Gemm            column c of op(B); C becomes s * beta * C + t, beta 1
 *   MatMul          A [M,K] x W [K,N] (both 2-D, so the result is [M,N]
 *                   and BN's axis 1 is its last): becomes a Gemm.
 *
 * Only inference forms match: training_mode 0 (14+), no statistics
 * outputs named (7..13 train when they are; 14+ may name unread ones),
 * is_test set (1..6), spatial 1 (before 9). scale, B, mean and var are
 * constant 1-D tensors of C elements, the weight (and bias / Gemm C) are
 * constant, the element type is float or double (not float16: see
 * fuse_util.h), and x is read
 * by the BatchNormalization alone and is not a graph output. The new
 * weights are new constants; the old ones are left to unused_init.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/fuse_util.h"

/* Whether bn is an inference BatchNormalization at this opset. */
static bool opt_bn_inference(const IrNode *bn, int64_t opset)
{
    bool ok = true;
    if (bn->n_in != 5)
        return false;
    for (size_t i = 1; i < bn->n_out; i++) {
        IrValue *v = bn->out[i];
        if (v && (opset < 14 || v->n_uses || ir_value_is_graph_output(v)))
            return false;
    }
    if (opset < 7 && opt_fz_attr_i(bn, "is_test", opset, &ok) == 0)
        return false;
    if (opset < 9 && opt_fz_attr_i(bn, "spatial", opset, &ok) != 1)
        return false;
    if (opset >= 14 && opt_fz_attr_i(bn, "training_mode", opset, &ok) != 0)
        return false;
    return ok;
}

/* s and t (C each) of bn; false when its parameters do not suit. */
static bool opt_bn_affine(const IrNode *bn, int64_t opset, size_t C, double *s, double *t)
{
    bool ok = true;
    double eps = opt_fz_attr_f(bn, "epsilon", opset, &ok);
    TkTensor *p[4] = {0};
    for (size_t i = 0; i < 4 && ok; i++) {
        p[i] = opt_fz_const(bn->in[i + 1]);
        ok = p[i] && opt_fz_float(p[i]->dtype) && p[i]->rank == 1 && p[i]->numel == C;
    }
    for (size_t c = 0; c < C && ok; c++) {
        double v = tk_get_f(p[3], c) + eps;
        ok = v > 0 && isfinite(v);
        s[c] = ok ? tk_get_f(p[0], c) / sqrt(v) : 0;
        t[c] = tk_get_f(p[1], c) - tk_get_f(p[2], c) * s[c];
    }
    for (size_t i = 0; i < 4; i++)
        tk_free(p[i]);
    return ok;
}

/* The weight's layout: which output channel element e of W feeds. */
typedef struct OptBnLayout {
    int kind;        /* 0 Conv, 1 ConvTranspose, 2 Gemm/MatMul with W [K,N], 3 W [N,K] */
    size_t C, d0, d1, inner, group;
} OptBnLayout;

static size_t opt_bn_channel(const OptBnLayout *l, size_t e)
{
    switch (l->kind) {
    case 0: return e / (l->d1 * l->inner);
    case 1: return (e / (l->d1 * l->inner)) / (l->d0 / l->group) * l->d1 + (e / l->inner) % l->d1;
    case 2: return e % l->d1;
    default: return e / l->d1;
    }
}

/* Fills l for producer p with weight w; false when p does not suit. */
static bool opt_bn_layout(const IrNode *p, const TkTensor *w, int64_t opset, OptBnLayout *l)
{
    bool ok = true;
    memset(l, 0, sizeof *l);
    if (!opt_fz_float(w->dtype) || w->numel == 0)
        return false;
    if (opt_fz_op(p, "Conv") || opt_fz_op(p, "ConvTranspose")) {
        int64_t g = opt_fz_attr_i(p, "group", opset, &ok);
        if (!ok || w->rank < 3 || g < 1 || w->dims[0] % g)
            return false;
        l->kind = opt_fz_op(p, "ConvTranspose");
        l->d0 = (size_t)w->dims[0], l->d1 = (size_t)w->dims[1], l->group = (size_t)g;
        l->inner = w->numel / (l->d0 * l->d1);
        l->C = l->kind ? l->d1 * l->group : l->d0;
        return true;
    }
    if (w->rank != 2)
        return false;
    l->d0 = (size_t)w->dims[0], l->d1 = (size_t)w->dims[1], l->inner = 1;
    if (opt_fz_op(p, "Gemm")) {
        int64_t tb = opt_fz_attr_i(p, "transB", opset, &ok);
        if (!ok || opset < 7)
            return false;
        l->kind = tb ? 3 : 2;
        l->C = tb ? l->d0 : l->d1;
        return true;
    }
    const IrValue *a = p->in[0];
    if (!opt_fz_op(p, "MatMul") || opset < 7 || !a || !a->type || !a->type->shape ||
        a->type->shape->rank != 2)
        return false;
    l->kind = 2;
    l->C = l->d1;
    return true;
}

/* W' = W scaled per channel, or NULL. */
static TkTensor *opt_bn_weight(const TkTensor *w, const OptBnLayout *l, const double *s)
{
    TkTensor *nw = tk_clone(w);
    for (size_t i = 0; nw && i < nw->numel; i++)
        tk_set_f(nw, i, tk_get_f(w, i) * s[opt_bn_channel(l, i)]);
    return nw;
}

/* The new bias b * s + t of a Conv/ConvTranspose (b absent = 0), or NULL. */
static TkTensor *opt_bn_bias(const IrValue *bv, int32_t dtype, size_t C, const double *s,
                            const double *t)
{
    IrError e;
    TkTensor *b = bv ? opt_fz_const(bv) : NULL;
    if (bv && (!b || b->dtype != dtype || b->rank != 1 || b->numel != C)) {
        tk_free(b);
        return NULL;
    }
    int64_t d = (int64_t)C;
    TkTensor *nb = tk_new(dtype, 1, &d, &e);
    for (size_t c = 0; nb && c < C; c++)
        tk_set_f(nb, c, (b ? tk_get_f(b, c) : 0) * s[c] + t[c]);
    tk_free(b);
    return nb;
}

/* Gemm's new C: s * beta * C + t, shaped [C.d0, N] when C is 2-D, else
 * [N]; NULL when C does not suit. */
static TkTensor *opt_bn_gemm_c(const IrNode *p, int64_t opset, int32_t dtype, size_t N,
                               const double *s, const double *t)
{
    IrError e;
    bool ok = true;
    double beta = opt_fz_attr_f(p, "beta", opset, &ok);
    IrValue *cv = p->n_in > 2 ? p->in[2] : NULL;
    TkTensor *cc = cv ? opt_fz_const(cv) : NULL;
    if (!ok || (cv && (!cc || cc->dtype != dtype || cc->rank > 2 ||
                       (cc->rank >= 1 && cc->dims[cc->rank - 1] != 1 &&
                        (size_t)cc->dims[cc->rank - 1] != N)))) {
        tk_free(cc);
        return NULL;
    }
    int64_t d[2] = {cc && cc->rank == 2 ? cc->dims[0] : (int64_t)N, (int64_t)N};
    size_t rank = cc && cc->rank == 2 ? 2 : 1, cols = cc && cc->rank ? (size_t)cc->dims[cc->rank - 1] : 1;
    TkTensor *nc = tk_new(dtype, rank, rank == 2 ? d : d + 1, &e);
    for (size_t i = 0; nc && i < nc->numel; i++) {
        size_t n = i % N, m = i / N;
        double x = cc ? tk_get_f(cc, m * cols + (cols == 1 ? 0 : n)) : 0;
        tk_set_f(nc, i, s[n] * beta * x + t[n]);
    }
    tk_free(cc);
    return nc;
}

/* Emits nw and nb and points p at them (for MatMul: a new Gemm that
 * replaces p). The node that now computes x. NULL with c->err set. */
static IrNode *opt_bn_rewire(OptCtx *c, IrNode *p, const TkTensor *nw, const TkTensor *nb)
{
    IrValue *wv = opt_fz_emit(c, p, nw, "bn_fused_W");
    IrValue *bv = wv ? opt_fz_emit(c, p, nb, "bn_fused_B") : NULL;
    if (!bv)
        return NULL;
    if (opt_fz_op(p, "MatMul")) {
        const char *in[3] = {p->in[0]->name, wv->name, bv->name}, *out[1] = {""};
        IrNode *g = ir_node_new(c->g, p, "Gemm", NULL, p->name, 3, in, 1, out, c->err);
        return g;
    }
    ir_node_set_input(p, 1, wv);
    if (p->n_in > 2)
        ir_node_set_input(p, 2, bv);
    else
        ir_node_add_input(p, bv);
    if (opt_fz_op(p, "Gemm"))
        ir_node_set_attr(p, ir_attr_float("beta", 1.0f));
    return p;
}

/* Folds bn into p, the producer of its input. 1 done, 0 not, -1 error. */
static int opt_bn_fold(OptCtx *c, IrNode *p, IrNode *bn, int64_t opset)
{
    TkTensor *w = p->n_in > 1 ? opt_fz_const(p->in[1]) : NULL, *nw = NULL, *nb = NULL;
    OptBnLayout l;
    double *s = NULL, *t = NULL;
    int r = 0;
    if (!w || !opt_bn_layout(p, w, opset, &l))
        goto done;
    s = mem_array(l.C, sizeof *s);
    t = mem_array(l.C, sizeof *t);
    if (!opt_bn_affine(bn, opset, l.C, s, t))
        goto done;
    if (l.kind >= 2)
        nb = opt_fz_op(p, "Gemm") ? opt_bn_gemm_c(p, opset, w->dtype, l.C, s, t)
                                  : opt_bn_bias(NULL, w->dtype, l.C, s, t);
    else
        nb = opt_bn_bias(p->n_in > 2 ? p->in[2] : NULL, w->dtype, l.C, s, t);
    if (!nb || !(nw = opt_bn_weight(w, &l, s)))
        goto done;
    IrNode *q = opt_bn_rewire(c, p, nw, nb);
    if (!q) {
        r = -1;
        goto done;
    }
    ir_node_take_output(q, 0, bn, 0);
    ir_node_delete(bn);
    if (q != p)
        ir_node_delete(p);
    r = 1;
done:
    free(s);
    free(t);
    tk_free(w);
    tk_free(nw);
    tk_free(nb);
    return r;
}

static long opt_bn_run(OptCtx *c)
{
    int64_t opset = ir_scope_opset(c->m, c->fn, "");
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        if (!opt_fz_op(k, "BatchNormalization") || !opt_bn_inference(k, opset))
            continue;
        IrValue *x = k->in[0];
        size_t idx;
        if (!x || x->kind != IR_VAL_NODE || !x->producer || x->producer_index != 0 ||
            x->producer->graph != c->g || opt_fz_sole_reader(c->g, x, &idx) != k || idx != 0)
            continue;
        int r = opt_bn_fold(c, x->producer, k, opset);
        if (r < 0)
            return -1;
        n += r;
    }
    return n;
}

const OptPass opt_pass_fuse_bn = {
    "fuse_bn", "folds inference BatchNormalization into the Conv/ConvTranspose/Gemm/MatMul before it",
    true, OPT_NEEDS_TYPES, opt_bn_run,
};
