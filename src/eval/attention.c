/* Attention-family kernels of the reference evaluator: Attention (23, 24,
 * 25), RotaryEmbedding (23), LinearAttention (27) and ai.onnx.preview
 * FlexAttention (1).
 *
 * Attention follows the spec's function body step by step:
 *   scores = (Q K^T) * scale                   -> qk_matmul_output mode 0
 *   scores = softcap * tanh(scores / softcap)  -> mode 1 (when softcap != 0)
 *   scores += bias (attn_mask, is_causal, nonpad_kv_seqlen)   -> mode 2
 *   probs = softmax(scores), 0 on rows whose bias is all -inf -> mode 3
 *   Y = probs V
 * A bool mask gives 0 (attend) / -inf, other masks are added as numbers.
 * From 24 a mask whose last dim is shorter than the total sequence is
 * padded with -inf; in 23 it broadcasts. The causal diagonal is offset by
 * the past length, or by nonpad_kv_seqlen[b] - q_len when that input is
 * given. GQA maps query head h to kv head h / (q_heads / kv_heads). The
 * window attributes of 25 are taken as: a key j is masked when
 * j < i - left_window_size or j > i + right_window_size (i the query's
 * absolute position, as for is_causal); no test data covers them.
 * The products run through ev_sgemm (cblas_dgemm for double); scores
 * are rounded to the input type where the function body computes in it
 * (float16/bfloat16), and the softmax runs in double.
 *
 * FlexAttention materializes the [B, H, L, S] scores in the softmax
 * precision (float, double for double) and runs score_mod/prob_mod on them
 * as whole tensors; it has no fully-masked-row guard (the spec's body has
 * none either). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

static bool ev_at_same_shape(const EvValue *a, const EvValue *b)
{
    if (a->rank != b->rank)
        return false;
    for (size_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

/* A positive integer attribute that the op requires. */
static int ev_at_heads(EvCtx *c, const char *name, int64_t *out)
{
    if (!ev_attr(c, name))
        return ev_fail(c, "attribute %s is required", name);
    *out = ev_attr_i(c, name);
    if (*out <= 0)
        return ev_fail(c, "%s must be positive", name);
    return 0;
}

/* ---- compute buffers: float (sgemm) or double (dgemm) -------------------- */

typedef struct EvAtBuf {
    bool dbl;
    void *p;
} EvAtBuf;

static int ev_at_buf(EvCtx *c, bool dbl, size_t n, EvAtBuf *b)
{
    b->dbl = dbl;
    b->p = ev_tmp(c, n ? n : 1, dbl ? sizeof(double) : sizeof(float));
    return b->p ? 0 : -1;
}

static double ev_at_rd(const EvAtBuf *b, size_t k)
{
    return b->dbl ? ((const double *)b->p)[k] : ((const float *)b->p)[k];
}

static void ev_at_wr(const EvAtBuf *b, size_t k, double v)
{
    if (b->dbl)
        ((double *)b->p)[k] = v;
    else
        ((float *)b->p)[k] = (float)v;
}

/* out[m x n] = alpha * A[m x k] . B, where B is [k x n], or [n x k] used
 * transposed; all row-major and contiguous, at element offsets. */
static void ev_at_gemm(const EvAtBuf *a, size_t ao, const EvAtBuf *b,
                       size_t bo, bool bt, const EvAtBuf *out, size_t oo,
                       size_t m, size_t n, size_t k, double alpha)
{
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        for (size_t i = 0; i < m * n; i++)
            ev_at_wr(out, oo + i, 0.0);
        return;
    }
    enum CBLAS_TRANSPOSE tb = bt ? CblasTrans : CblasNoTrans;
    blasint ldb = (blasint)(bt ? k : n);
    if (out->dbl)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, (blasint)m, (blasint)n,
                    (blasint)k, alpha, (const double *)a->p + ao, (blasint)k,
                    (const double *)b->p + bo, ldb, 0.0,
                    (double *)out->p + oo, (blasint)n);
    else
        ev_sgemm(false, bt, m, n, k, (float)alpha, (const float *)a->p + ao, k,
                 (const float *)b->p + bo, (size_t)ldb, 0.0f, (float *)out->p + oo, n);
}

/* Copies a [B, H, S, D] (4-D) or [B, S, H*D] (3-D) tensor into dst at
 * head-major layout [B, H, S_total, D], rows from `at` on. */
static void ev_at_heads_in(const EvValue *t, bool is3d, size_t bn, size_t h,
                           size_t s, size_t d, const EvAtBuf *dst,
                           size_t total, size_t at)
{
    if (d == 0)
        return;
    for (size_t b = 0; b < bn; b++)
        for (size_t hi = 0; hi < h; hi++)
            for (size_t si = 0; si < s; si++) {
                size_t src = is3d ? ((b * s + si) * h + hi) * d
                                  : ((b * h + hi) * s + si) * d;
                size_t o = ((b * h + hi) * total + at + si) * d;
                if (t->dtype == IR_FLOAT && !dst->dbl && d)
                    memcpy((float *)dst->p + o, (const float *)t->data + src,
                           d * sizeof(float));
                else
                    for (size_t k = 0; k < d; k++)
                        ev_at_wr(dst, o + k, ev_at_get(t, src + k));
            }
}

/* Softmax of v[0..n) in place, in double. */
static void ev_at_softmax(double *v, size_t n)
{
    if (n == 0)
        return;
    double m = v[0], s = 0;
    for (size_t j = 1; j < n; j++)
        if (v[j] > m)
            m = v[j];
    for (size_t j = 0; j < n; j++) {
        v[j] = exp(v[j] - m);
        s += v[j];
    }
    for (size_t j = 0; j < n; j++)
        v[j] /= s;
}

/* ---- Attention ----------------------------------------------------------- */

typedef struct EvAttn {
    bool is3d;
    size_t bn, hq, hkv, sq, skv, past, total, d, dv;
    double scale, softcap;
    int64_t mode;
    bool causal;
    int64_t left, right;          /* window sizes (25); -1 = unlimited */
    const EvValue *mask;
    size_t mstride[4];            /* mask strides over [B, Hq, Sq, T] */
    size_t mlast;                 /* mask's last dim (columns it covers) */
    const int64_t *nonpad;        /* nonpad_kv_seqlen, or NULL */
    int32_t qtype;
} EvAttn;

/* Checks attn_mask against [B, Hq, Sq, T] and sets its strides. */
static int ev_attn_mask(EvCtx *c, EvAttn *a, const EvValue *m)
{
    if (m->kind != EV_TENSOR || m->dtype == IR_STRING ||
        !(ev_dtype_is_real(m->dtype) || m->dtype == IR_BOOL ||
          ev_dtype_is_int(m->dtype)))
        return ev_fail(c, "attn_mask has an unsupported type");
    if (m->rank < 1 || m->rank > 4)
        return ev_fail(c, "attn_mask must have rank 1 to 4");
    size_t want[4] = {a->bn, a->hq, a->sq, a->total};
    size_t s = 1;
    for (size_t k = 0; k < 4; k++)
        a->mstride[k] = 0;
    for (size_t k = 1; k <= m->rank; k++) {
        size_t md = (size_t)m->dims[m->rank - k], wd = want[4 - k];
        if (k == 1) {
            a->mlast = md;
            bool pad = c->ver >= 24 && md < wd;
            if (md != wd && md != 1 && !pad)
                return ev_fail(c, "attn_mask's last dim %zu does not fit the "
                               "total sequence length %zu", md, wd);
            if (md == 1 && !pad)
                a->mlast = wd; /* broadcast column */
            a->mstride[3] = md == 1 ? 0 : 1;
        } else {
            if (md != wd && md != 1)
                return ev_fail(c, "attn_mask dim %zu does not broadcast",
                               m->rank - k);
            a->mstride[4 - k] = md == 1 ? 0 : s;
        }
        s *= md;
    }
    a->mask = m;
    return 0;
}

/* The additive bias of row i of head (b, h): mask, causal, padding and
 * window terms. */
static void ev_attn_bias(const EvAttn *a, size_t b, size_t h, size_t i,
                         double *bias)
{
    int64_t off = a->nonpad ? a->nonpad[b] - (int64_t)a->sq
                            : (int64_t)a->past;
    int64_t pos = (int64_t)i + off;
    size_t mo = b * a->mstride[0] + h * a->mstride[1] + i * a->mstride[2];
    for (size_t j = 0; j < a->total; j++) {
        double v = 0;
        if (a->mask) {
            if (j >= a->mlast) {
                v = -INFINITY;
            } else {
                size_t k = mo + j * a->mstride[3];
                if (a->mask->dtype == IR_BOOL)
                    v = ((const uint8_t *)a->mask->data)[k] ? 0 : -INFINITY;
                else
                    v = ev_at_get(a->mask, k);
            }
        }
        int64_t jj = (int64_t)j;
        if ((a->causal && jj > pos) ||
            (a->nonpad && jj >= a->nonpad[b]) ||
            (a->left >= 0 && jj < pos - a->left) ||
            (a->right >= 0 && jj > pos + a->right))
            v += -INFINITY;
        bias[j] = v;
    }
}

/* Reads the shapes of Q, K, V, past_key, past_value into a. */
static int ev_attn_shapes(EvCtx *c, EvAttn *a, EvValue *q, EvValue *k,
                          EvValue *v, EvValue *pk, EvValue *pv)
{
    if (q->rank != k->rank || q->rank != v->rank ||
        (q->rank != 3 && q->rank != 4))
        return ev_fail(c, "Q, K and V must all be 3-D or all 4-D");
    a->is3d = q->rank == 3;
    a->bn = (size_t)q->dims[0];
    if ((size_t)k->dims[0] != a->bn || (size_t)v->dims[0] != a->bn)
        return ev_fail(c, "Q, K and V disagree on the batch size");
    if (a->is3d) {
        int64_t hq, hkv;
        if (ev_at_heads(c, "q_num_heads", &hq) ||
            ev_at_heads(c, "kv_num_heads", &hkv))
            return -1;
        if (q->dims[2] % hq || k->dims[2] % hkv || v->dims[2] % hkv)
            return ev_fail(c, "hidden sizes must divide by the head counts");
        a->hq = (size_t)hq;
        a->hkv = (size_t)hkv;
        a->sq = (size_t)q->dims[1];
        a->skv = (size_t)k->dims[1];
        a->d = (size_t)(q->dims[2] / hq);
        a->dv = (size_t)(v->dims[2] / hkv);
        if ((size_t)(k->dims[2] / hkv) != a->d)
            return ev_fail(c, "Q and K head sizes differ");
        if ((size_t)v->dims[1] != a->skv)
            return ev_fail(c, "K and V sequence lengths differ");
    } else {
        a->hq = (size_t)q->dims[1];
        a->hkv = (size_t)k->dims[1];
        a->sq = (size_t)q->dims[2];
        a->skv = (size_t)k->dims[2];
        a->d = (size_t)q->dims[3];
        a->dv = (size_t)v->dims[3];
        if ((size_t)k->dims[3] != a->d)
            return ev_fail(c, "Q and K head sizes differ");
        if ((size_t)v->dims[1] != a->hkv || (size_t)v->dims[2] != a->skv)
            return ev_fail(c, "K and V shapes disagree");
    }
    if (a->hkv == 0 || a->hq % a->hkv)
        return ev_fail(c, "q heads (%zu) must be a multiple of kv heads (%zu)",
                       a->hq, a->hkv);
    if (!pk != !pv)
        return ev_fail(c, "past_key and past_value go together");
    a->past = 0;
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || (size_t)pk->dims[0] != a->bn ||
            (size_t)pk->dims[1] != a->hkv || (size_t)pk->dims[3] != a->d ||
            (size_t)pv->dims[0] != a->bn || (size_t)pv->dims[1] != a->hkv ||
            pv->dims[2] != pk->dims[2] || (size_t)pv->dims[3] != a->dv)
            return ev_fail(c, "past_key/past_value shapes do not fit K/V");
        a->past = (size_t)pk->dims[2];
    }
    a->total = a->past + a->skv;
    return 0;
}

/* Writes the rows [r0, r0+rn) of one head's scores and probabilities:
 * s holds the raw products on entry and the probabilities on return. */
static void ev_attn_rows(const EvAttn *a, EvValue *qk, size_t b, size_t h,
                         size_t r0, size_t rn, const EvAtBuf *s, double *row,
                         double *bias)
{
    size_t t = a->total;
    for (size_t r = 0; r < rn; r++) {
        size_t i = r0 + r;
        size_t qo = ((b * a->hq + h) * a->sq + i) * t;
        for (size_t j = 0; j < t; j++)
            row[j] = ev_at_round(a->qtype, ev_at_rd(s, r * t + j));
        if (qk && a->mode == 0)
            for (size_t j = 0; j < t; j++)
                ev_at_put(qk, qo + j, row[j]);
        if (a->softcap != 0)
            for (size_t j = 0; j < t; j++)
                row[j] = a->softcap * tanh(row[j] / a->softcap);
        if (qk && a->mode == 1)
            for (size_t j = 0; j < t; j++)
                ev_at_put(qk, qo + j, row[j]);
        ev_attn_bias(a, b, h, i, bias);
        bool all_masked = true;
        for (size_t j = 0; j < t; j++) {
            row[j] += bias[j];
            if (bias[j] != -INFINITY)
                all_masked = false;
        }
        if (qk && a->mode == 2)
            for (size_t j = 0; j < t; j++)
                ev_at_put(qk, qo + j, row[j]);
        if (all_masked)
            memset(row, 0, t * sizeof *row);
        else
            ev_at_softmax(row, t);
        for (size_t j = 0; j < t; j++)
            row[j] = ev_at_round(a->qtype, row[j]);
        if (qk && a->mode == 3)
            for (size_t j = 0; j < t; j++)
                ev_at_put(qk, qo + j, row[j]);
        for (size_t j = 0; j < t; j++)
            ev_at_wr(s, r * t + j, row[j]);
    }
}

/* Runs every (batch, head) of the attention, in blocks of query rows. */
static int ev_attn_run(EvCtx *c, const EvAttn *a, const EvAtBuf *qb,
                       const EvAtBuf *kb, const EvAtBuf *vb, EvValue *y,
                       EvValue *qk)
{
    size_t t = a->total, rep = a->hq / a->hkv;
    size_t rb = t ? (size_t)(1u << 20) / t : a->sq;
    if (rb == 0)
        rb = 1;
    if (rb > a->sq)
        rb = a->sq;
    EvAtBuf sb, ob;
    double *row = ev_tmp(c, t + 1, sizeof *row);
    double *bias = ev_tmp(c, t + 1, sizeof *bias);
    if (!row || !bias || ev_at_buf(c, qb->dbl, rb * t, &sb) ||
        ev_at_buf(c, qb->dbl, rb * a->dv, &ob))
        return -1;
    for (size_t b = 0; b < a->bn; b++)
        for (size_t h = 0; h < a->hq; h++) {
            size_t kvh = h / rep;
            size_t ko = (b * a->hkv + kvh) * t * a->d;
            size_t vo = (b * a->hkv + kvh) * t * a->dv;
            for (size_t r0 = 0; r0 < a->sq; r0 += rb) {
                size_t rn = a->sq - r0 < rb ? a->sq - r0 : rb;
                size_t qo = ((b * a->hq + h) * a->sq + r0) * a->d;
                ev_at_gemm(qb, qo, kb, ko, true, &sb, 0, rn, t, a->d,
                           a->scale);
                ev_attn_rows(a, qk, b, h, r0, rn, &sb, row, bias);
                ev_at_gemm(&sb, 0, vb, vo, false, &ob, 0, rn, a->dv, t, 1.0);
                if (t == 0)
                    for (size_t k = 0; k < rn * a->dv; k++)
                        ev_at_wr(&ob, k, 0.0);
                for (size_t r = 0; r < rn; r++)
                    for (size_t k = 0; k < a->dv; k++) {
                        size_t i = r0 + r;
                        size_t yo = a->is3d
                            ? ((b * a->sq + i) * a->hq + h) * a->dv + k
                            : ((b * a->hq + h) * a->sq + i) * a->dv + k;
                        ev_at_put(y, yo, ev_at_rd(&ob, r * a->dv + k));
                    }
            }
        }
    return 0;
}

/* present_key/present_value (output i) from the head-major buffer. */
static int ev_attn_present(EvCtx *c, size_t i, int32_t dtype,
                           const EvAttn *a, size_t d, const EvAtBuf *src)
{
    if (!ev_has_out(c, i))
        return 0;
    int64_t dims[4] = {(int64_t)a->bn, (int64_t)a->hkv, (int64_t)a->total,
                       (int64_t)d};
    EvValue *p = ev_out_tensor(c, i, dtype, 4, dims);
    if (!p)
        return -1;
    for (size_t k = 0; k < p->numel; k++)
        ev_at_put(p, k, ev_at_rd(src, k));
    return 0;
}

/* Attributes, attn_mask and nonpad_kv_seqlen, once the shapes are known. */
static int ev_attn_options(EvCtx *c, EvAttn *a)
{
    a->scale = ev_attr(c, "scale") ? (double)ev_attr_f_or(c, "scale", 1.0f)
                                   : 1.0 / sqrt((double)a->d);
    a->softcap = ev_attr_f(c, "softcap");
    a->mode = ev_attr_i(c, "qk_matmul_output_mode");
    if (a->mode < 0 || a->mode > 3)
        return ev_fail(c, "qk_matmul_output_mode must be 0 to 3");
    a->causal = ev_attr_i(c, "is_causal") != 0;
    a->left = c->ver >= 25 ? ev_attr_i_or(c, "left_window_size", -1) : -1;
    a->right = c->ver >= 25 ? ev_attr_i_or(c, "right_window_size", -1) : -1;
    EvValue *m = ev_in(c, 3);
    if (m && ev_attn_mask(c, a, m))
        return -1;
    EvValue *np = c->ver >= 24 ? ev_in(c, 6) : NULL;
    if (np) {
        size_t n;
        if (np->kind != EV_TENSOR || np->dtype != IR_INT64 ||
            np->numel != a->bn)
            return ev_fail(c, "nonpad_kv_seqlen must be int64 of shape [B]");
        if (!(a->nonpad = ev_in_ints(c, 6, &n)))
            return -1;
    }
    return 0;
}

/* Q, and past + new K and V, head-major in compute buffers. */
static int ev_attn_load(EvCtx *c, const EvAttn *a, EvValue *const *in,
                        EvAtBuf *qb, EvAtBuf *kb, EvAtBuf *vb)
{
    EvValue *q = in[0], *k = in[1], *v = in[2], *pk = in[4], *pv = in[5];
    bool dbl = q->dtype == IR_DOUBLE || v->dtype == IR_DOUBLE;
    if (ev_at_buf(c, dbl, q->numel, qb) ||
        ev_at_buf(c, dbl, a->bn * a->hkv * a->total * a->d, kb) ||
        ev_at_buf(c, dbl, a->bn * a->hkv * a->total * a->dv, vb))
        return -1;
    ev_at_heads_in(q, a->is3d, a->bn, a->hq, a->sq, a->d, qb, a->sq, 0);
    if (pk) {
        ev_at_heads_in(pk, false, a->bn, a->hkv, a->past, a->d, kb, a->total,
                       0);
        ev_at_heads_in(pv, false, a->bn, a->hkv, a->past, a->dv, vb,
                       a->total, 0);
    }
    ev_at_heads_in(k, a->is3d, a->bn, a->hkv, a->skv, a->d, kb, a->total,
                   a->past);
    ev_at_heads_in(v, a->is3d, a->bn, a->hkv, a->skv, a->dv, vb, a->total,
                   a->past);
    return 0;
}

static int ev_attention(EvCtx *c)
{
    /* Q, K, V, (attn_mask), past_key, past_value */
    EvValue *in[6] = {ev_in_real(c, 0), ev_in_real(c, 1), ev_in_real(c, 2)};
    bool bad = false;
    in[4] = ev_in_real_opt(c, 4, &bad);
    in[5] = ev_in_real_opt(c, 5, &bad);
    EvValue *q = in[0], *k = in[1], *v = in[2];
    if (!q || !k || !v || bad)
        return -1;
    if (k->dtype != q->dtype || (in[4] && in[4]->dtype != q->dtype) ||
        (in[5] && in[5]->dtype != v->dtype))
        return ev_fail(c, "Q, K, past_key (and V, past_value) must share "
                       "their element type");
    EvAttn a = {0};
    EvAtBuf qb, kb, vb;
    if (ev_attn_shapes(c, &a, q, k, v, in[4], in[5]) ||
        ev_attn_options(c, &a) || ev_attn_load(c, &a, in, &qb, &kb, &vb))
        return -1;
    a.qtype = q->dtype;
    int64_t yd[4] = {(int64_t)a.bn, (int64_t)a.hq, (int64_t)a.sq,
                     (int64_t)a.dv};
    if (a.is3d) {
        yd[1] = (int64_t)a.sq;
        yd[2] = (int64_t)(a.hq * a.dv);
    }
    EvValue *y = ev_out_tensor(c, 0, q->dtype, a.is3d ? 3 : 4, yd);
    if (!y || ev_attn_present(c, 1, k->dtype, &a, a.d, &kb) ||
        ev_attn_present(c, 2, v->dtype, &a, a.dv, &vb))
        return -1;
    EvValue *qk = NULL;
    if (ev_has_out(c, 3)) {
        int64_t qd[4] = {(int64_t)a.bn, (int64_t)a.hq, (int64_t)a.sq,
                         (int64_t)a.total};
        if (!(qk = ev_out_tensor(c, 3, q->dtype, 4, qd)))
            return -1;
    }
    if (y->numel == 0 && (!qk || qk->numel == 0))
        return 0;
    return ev_attn_run(c, &a, &qb, &kb, &vb, y, qk);
}

/* ---- FlexAttention (ai.onnx.preview) ------------------------------------- */

/* Runs a score_mod/prob_mod subgraph on t (same shape out), replacing it. */
static int ev_flex_mod(EvCtx *c, const char *name, EvValue **t)
{
    IrGraph *g = ev_attr_graph(c, name);
    if (!g)
        return 0;
    EvValue *out = NULL;
    if (ev_run_subgraph(c, g, 1, t, 1, &out))
        return -1;
    EvValue *in = *t;
    bool ok = out->kind == EV_TENSOR && ev_dtype_is_real(out->dtype) &&
              ev_at_same_shape(out, in);
    if (!ok) {
        ev_unref(out);
        return ev_fail(c, "%s must return a float tensor of the scores' shape",
                       name);
    }
    ev_unref(in);
    *t = out;
    return 0;
}

typedef struct EvFlex {
    size_t bn, hq, hkv, l, s, e, ev;
} EvFlex;

/* Scores [B, Hq, L, S] of type pt: (Q K^T) * scale per (batch, head). */
static int ev_flex_scores(EvCtx *c, const EvFlex *f, const EvAtBuf *qb,
                          const EvAtBuf *kb, double scale, int32_t qtype,
                          EvValue *sc)
{
    EvAtBuf sb;
    if (sc->numel == 0)
        return 0;
    if (ev_at_buf(c, qb->dbl, f->l * f->s, &sb))
        return -1;
    size_t rep = f->hq / f->hkv;
    for (size_t b = 0; b < f->bn; b++)
        for (size_t h = 0; h < f->hq; h++) {
            size_t qo = (b * f->hq + h) * f->l * f->e;
            size_t ko = (b * f->hkv + h / rep) * f->s * f->e;
            ev_at_gemm(qb, qo, kb, ko, true, &sb, 0, f->l, f->s, f->e, scale);
            size_t so = (b * f->hq + h) * f->l * f->s;
            for (size_t k = 0; k < f->l * f->s; k++)
                ev_at_put(sc, so + k, ev_at_round(qtype, ev_at_rd(&sb, k)));
        }
    return 0;
}

/* Y = probs V per (batch, head). */
static int ev_flex_out(EvCtx *c, const EvFlex *f, const EvValue *pr,
                       const EvAtBuf *vb, EvValue *y)
{
    EvAtBuf pb, ob;
    if (y->numel == 0)
        return 0;
    if (ev_at_buf(c, vb->dbl, f->l * f->s, &pb) ||
        ev_at_buf(c, vb->dbl, f->l * f->ev, &ob))
        return -1;
    size_t rep = f->hq / f->hkv;
    for (size_t b = 0; b < f->bn; b++)
        for (size_t h = 0; h < f->hq; h++) {
            size_t po = (b * f->hq + h) * f->l * f->s;
            for (size_t k = 0; k < f->l * f->s; k++)
                ev_at_wr(&pb, k, ev_at_get(pr, po + k));
            size_t vo = (b * f->hkv + h / rep) * f->s * f->ev;
            ev_at_gemm(&pb, 0, vb, vo, false, &ob, 0, f->l, f->ev, f->s, 1.0);
            if (f->s == 0)
                for (size_t k = 0; k < f->l * f->ev; k++)
                    ev_at_wr(&ob, k, 0.0);
            size_t yo = (b * f->hq + h) * f->l * f->ev;
            for (size_t k = 0; k < f->l * f->ev; k++)
                ev_at_put(y, yo + k, ev_at_rd(&ob, k));
        }
    return 0;
}

static int ev_flex_shapes(EvCtx *c, const EvValue *q, const EvValue *k,
                          const EvValue *v, EvFlex *f)
{
    if (k->dtype != q->dtype || v->dtype != q->dtype)
        return ev_fail(c, "Q, K and V must share their element type");
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return ev_fail(c, "Q, K and V must be 4-D");
    *f = (EvFlex){(size_t)q->dims[0], (size_t)q->dims[1], (size_t)k->dims[1],
                  (size_t)q->dims[2], (size_t)k->dims[2], (size_t)q->dims[3],
                  (size_t)v->dims[3]};
    if ((size_t)k->dims[0] != f->bn || (size_t)v->dims[0] != f->bn ||
        (size_t)k->dims[3] != f->e || (size_t)v->dims[1] != f->hkv ||
        (size_t)v->dims[2] != f->s)
        return ev_fail(c, "Q, K and V shapes disagree");
    if (f->hkv == 0 || f->hq % f->hkv)
        return ev_fail(c, "Q heads must be a multiple of K/V heads");
    return 0;
}

/* The softmax precision: the attribute, else float (double for double). */
static int ev_flex_precision(EvCtx *c, int32_t qtype, int32_t *pt)
{
    *pt = qtype == IR_DOUBLE ? IR_DOUBLE : IR_FLOAT;
    if (!ev_attr(c, "softmax_precision"))
        return 0;
    int64_t sp = ev_attr_i_or(c, "softmax_precision", IR_FLOAT);
    if (sp < 0 || sp > INT32_MAX || !ev_dtype_is_real((int32_t)sp))
        return ev_fail(c, "softmax_precision must be a float type");
    *pt = (int32_t)sp;
    return 0;
}

/* Replaces the scores by their softmax along the last axis (on a private
 * copy when the tensor is shared, e.g. returned by score_mod as is). */
static int ev_flex_softmax(EvCtx *c, const EvFlex *f, EvValue **sc)
{
    IrError sub;
    EvValue *pr = (*sc)->refs > 1 ? ev_tensor_copy(*sc, &sub) : ev_ref(*sc);
    if (!pr)
        return ev_fail(c, "probabilities: %s", sub.msg);
    ev_unref(*sc);
    *sc = pr;
    double *row = ev_tmp(c, f->s + 1, sizeof *row);
    if (!row)
        return -1;
    size_t rows = pr->numel ? f->bn * f->hq * f->l : 0;
    for (size_t r = 0; r < rows; r++) {
        for (size_t j = 0; j < f->s; j++)
            row[j] = ev_at_get(pr, r * f->s + j);
        ev_at_softmax(row, f->s);
        for (size_t j = 0; j < f->s; j++)
            ev_at_put(pr, r * f->s + j, row[j]);
    }
    return 0;
}

static int ev_flex_attention(EvCtx *c)
{
    EvValue *q = ev_in_real(c, 0), *k = ev_in_real(c, 1), *v = ev_in_real(c, 2);
    EvFlex f = {0};
    int32_t pt;
    if (!q || !k || !v || ev_flex_shapes(c, q, k, v, &f) ||
        ev_flex_precision(c, q->dtype, &pt))
        return -1;
    double scale = ev_attr(c, "scale") ? (double)ev_attr_f_or(c, "scale", 1.0f)
                                       : 1.0 / sqrt((double)f.e);
    bool dbl = q->dtype == IR_DOUBLE || pt == IR_DOUBLE;
    EvAtBuf qb, kb, vb;
    if (ev_at_buf(c, dbl, q->numel, &qb) || ev_at_buf(c, dbl, k->numel, &kb) ||
        ev_at_buf(c, dbl, v->numel, &vb))
        return -1;
    ev_at_heads_in(q, false, f.bn, f.hq, f.l, f.e, &qb, f.l, 0);
    ev_at_heads_in(k, false, f.bn, f.hkv, f.s, f.e, &kb, f.s, 0);
    ev_at_heads_in(v, false, f.bn, f.hkv, f.s, f.ev, &vb, f.s, 0);
    int64_t sd[4] = {(int64_t)f.bn, (int64_t)f.hq, (int64_t)f.l,
                     (int64_t)f.s};
    IrError sub;
    EvValue *sc = ev_tensor_new(pt, 4, sd, &sub);
    if (!sc)
        return ev_fail(c, "scores: %s", sub.msg);
    /* From here on, sc (the scores, then the probabilities) is ours. */
    int rc = ev_flex_scores(c, &f, &qb, &kb, scale, q->dtype, sc);
    if (!rc)
        rc = ev_flex_mod(c, "score_mod", &sc);
    if (!rc)
        rc = ev_flex_softmax(c, &f, &sc);
    if (!rc)
        rc = ev_flex_mod(c, "prob_mod", &sc);
    int64_t yd[4] = {(int64_t)f.bn, (int64_t)f.hq, (int64_t)f.l,
                     (int64_t)f.ev};
    EvValue *y = rc ? NULL : ev_out_tensor(c, 0, q->dtype, 4, yd);
    rc = y ? ev_flex_out(c, &f, sc, &vb, y) : -1;
    ev_unref(sc);
    return rc;
}

/* ---- RotaryEmbedding ----------------------------------------------------- */

typedef struct EvRope {
    size_t bn, h, s, d, rot;
    bool is3d, interleaved;
    const EvValue *cos, *sin;
    const int64_t *pos;           /* [B, S] position ids, or NULL */
    size_t cache_rows, cache_w;   /* cache [rows, w] with position ids */
} EvRope;

/* Offset of the cos/sin entries for (b, s), or SIZE_MAX when the position
 * id is out of the cache. */
static size_t ev_rope_cache(const EvRope *r, size_t b, size_t s)
{
    if (!r->pos)
        return (b * r->s + s) * r->cache_w;
    int64_t p = r->pos[b * r->s + s];
    if (p < 0)
        p += (int64_t)r->cache_rows;
    if (p < 0 || (size_t)p >= r->cache_rows)
        return SIZE_MAX;
    return (size_t)p * r->cache_w;
}

/* Rotates the head vector x (d values) in place, rounding each step to
 * the element type as the function body does. */
static void ev_rope_vec(const EvRope *r, int32_t dt, size_t co, double *x,
                        double *tmp)
{
    size_t half = r->rot / 2;
    for (size_t i = 0; i < half; i++) {
        size_t i1 = r->interleaved ? 2 * i : i;
        size_t i2 = r->interleaved ? 2 * i + 1 : i + half;
        double cs = ev_at_get(r->cos, co + i), sn = ev_at_get(r->sin, co + i);
        double x1 = x[i1], x2 = x[i2];
        double re = ev_at_round(dt, ev_at_round(dt, cs * x1) -
                                        ev_at_round(dt, sn * x2));
        double im = ev_at_round(dt, ev_at_round(dt, sn * x1) +
                                        ev_at_round(dt, cs * x2));
        tmp[i1] = re;
        tmp[i2] = im;
    }
    memcpy(x, tmp, r->rot * sizeof *x);
}

static int ev_rope_caches(EvCtx *c, EvRope *r, EvValue *cs, EvValue *sn,
                          EvValue *pid)
{
    size_t half = r->rot / 2;
    if (!ev_at_same_shape(cs, sn))
        return ev_fail(c, "cos_cache and sin_cache shapes differ");
    if (pid) {
        size_t n;
        if (pid->kind != EV_TENSOR || pid->dtype != IR_INT64 ||
            pid->rank != 2 || (size_t)pid->dims[0] != r->bn ||
            (size_t)pid->dims[1] != r->s)
            return ev_fail(c, "position_ids must be int64 of shape [B, S]");
        if (cs->rank != 2 || (size_t)cs->dims[1] < half)
            return ev_fail(c, "caches must be [max_position, rotary_dim/2]");
        if (!(r->pos = ev_in_ints(c, 3, &n)))
            return -1;
        r->cache_rows = (size_t)cs->dims[0];
        r->cache_w = (size_t)cs->dims[1];
    } else {
        if (cs->rank != 3 || (size_t)cs->dims[0] != r->bn ||
            (size_t)cs->dims[1] != r->s || (size_t)cs->dims[2] < half)
            return ev_fail(c, "caches must be [B, S, rotary_dim/2] without "
                           "position_ids");
        r->cache_w = (size_t)cs->dims[2];
    }
    r->cos = cs;
    r->sin = sn;
    return 0;
}

static int ev_rotary_embedding(EvCtx *c)
{
    EvValue *x = ev_in_real(c, 0), *cs = ev_in_real(c, 1), *sn = ev_in_real(c, 2);
    if (!x || !cs || !sn)
        return -1;
    if (cs->dtype != x->dtype || sn->dtype != x->dtype)
        return ev_fail(c, "the caches must have X's element type");
    EvRope r = {0};
    r.interleaved = ev_attr_i(c, "interleaved") != 0;
    if (x->rank == 4) {
        r.bn = (size_t)x->dims[0];
        r.h = (size_t)x->dims[1];
        r.s = (size_t)x->dims[2];
        r.d = (size_t)x->dims[3];
    } else if (x->rank == 3) {
        int64_t nh;
        if (ev_at_heads(c, "num_heads", &nh))
            return -1;
        if (x->dims[2] % nh)
            return ev_fail(c, "hidden size must divide by num_heads");
        r.is3d = true;
        r.bn = (size_t)x->dims[0];
        r.s = (size_t)x->dims[1];
        r.h = (size_t)nh;
        r.d = (size_t)(x->dims[2] / nh);
    } else {
        return ev_fail(c, "X must be 3-D or 4-D");
    }
    int64_t rd = ev_attr_i(c, "rotary_embedding_dim");
    if (rd < 0 || (size_t)rd > r.d || (rd == 0 ? r.d : (size_t)rd) % 2)
        return ev_fail(c, "rotary_embedding_dim must be even and at most the "
                       "head size");
    r.rot = rd ? (size_t)rd : r.d;
    if (ev_rope_caches(c, &r, cs, sn, ev_in(c, 3)))
        return -1;
    EvValue *y = ev_out_tensor(c, 0, x->dtype, x->rank, x->dims);
    double *vec = ev_tmp(c, r.d + 1, sizeof *vec);
    double *tmp = ev_tmp(c, r.d + 1, sizeof *tmp);
    if (!y || !vec || !tmp)
        return -1;
    if (x->numel == 0)
        return 0;
    for (size_t b = 0; b < r.bn; b++)
        for (size_t s = 0; s < r.s; s++) {
            size_t co = ev_rope_cache(&r, b, s);
            if (co == SIZE_MAX)
                return ev_fail(c, "position id at [%zu, %zu] is outside the "
                               "cache", b, s);
            for (size_t h = 0; h < r.h; h++) {
                size_t xo = r.is3d ? ((b * r.s + s) * r.h + h) * r.d
                                   : ((b * r.h + h) * r.s + s) * r.d;
                for (size_t k = 0; k < r.d; k++)
                    vec[k] = ev_at_get(x, xo + k);
                ev_rope_vec(&r, x->dtype, co, vec, tmp);
                for (size_t k = 0; k < r.d; k++)
                    ev_at_put(y, xo + k, vec[k]);
            }
        }
    return 0;
}

/* ---- LinearAttention ----------------------------------------------------- */

typedef enum { EV_LA_LINEAR, EV_LA_GATED, EV_LA_DELTA, EV_LA_GATED_DELTA }
    EvLaRule;

typedef struct EvLin {
    size_t bn, t, hq, hkv, dk, dv;
    EvLaRule rule;
    double scale;
    const EvValue *q, *k, *v, *decay, *beta;
    bool decay_per_key;           /* decay [B, T, Hkv*dk], else [B, T, Hkv] */
    bool beta_shared;             /* beta [B, T, 1], else [B, T, Hkv] */
} EvLin;

static int ev_lin_rule(EvCtx *c, EvLaRule *rule)
{
    static const char *const names[] = {"linear", "gated", "delta",
                                        "gated_delta"};
    const char *s = ev_attr_s(c, "update_rule");
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *rule = (EvLaRule)i;
            return 0;
        }
    return ev_fail(c, "unknown update_rule '%s'", s ? s : "");
}

/* One time step of one (batch, kv head): updates the state st[dk][dv]. */
static void ev_lin_step(const EvLin *l, size_t b, size_t hk, size_t t,
                        double *st, double *kv, double *vv, double *rv)
{
    size_t dk = l->dk, dv = l->dv;
    size_t row = (b * l->t + t) * l->hkv;
    for (size_t i = 0; i < dk; i++)
        kv[i] = ev_at_get(l->k, (row + hk) * dk + i);
    for (size_t j = 0; j < dv; j++)
        vv[j] = ev_at_get(l->v, (row + hk) * dv + j);
    if (l->rule == EV_LA_GATED || l->rule == EV_LA_GATED_DELTA)
        for (size_t i = 0; i < dk; i++) {
            size_t at = l->decay_per_key ? (row + hk) * dk + i : row + hk;
            double e = exp(ev_at_get(l->decay, at));
            for (size_t j = 0; j < dv; j++)
                st[i * dv + j] *= e;
        }
    if (l->rule == EV_LA_DELTA || l->rule == EV_LA_GATED_DELTA) {
        double beta = ev_at_get(l->beta, l->beta_shared ? b * l->t + t
                                                        : row + hk);
        for (size_t j = 0; j < dv; j++) {
            double s = 0;
            for (size_t i = 0; i < dk; i++)
                s += st[i * dv + j] * kv[i];
            rv[j] = beta * (vv[j] - s);
        }
    } else {
        memcpy(rv, vv, dv * sizeof *rv);
    }
    for (size_t i = 0; i < dk; i++)
        for (size_t j = 0; j < dv; j++)
            st[i * dv + j] += kv[i] * rv[j];
}

/* Reads decay/beta shapes once the sizes are known. */
static int ev_lin_gates(EvCtx *c, EvLin *l)
{
    bool need_decay = l->rule == EV_LA_GATED || l->rule == EV_LA_GATED_DELTA;
    bool need_beta = l->rule == EV_LA_DELTA || l->rule == EV_LA_GATED_DELTA;
    if (need_decay) {
        const EvValue *g = l->decay;
        if (!g)
            return ev_fail(c, "this update_rule needs decay");
        if (g->rank != 3 || (size_t)g->dims[0] != l->bn ||
            (size_t)g->dims[1] != l->t ||
            ((size_t)g->dims[2] != l->hkv * l->dk &&
             (size_t)g->dims[2] != l->hkv))
            return ev_fail(c, "decay must be [B, T, kv_heads*d_k] or "
                           "[B, T, kv_heads]");
        l->decay_per_key = (size_t)g->dims[2] == l->hkv * l->dk;
    }
    if (need_beta) {
        const EvValue *be = l->beta;
        if (!be)
            return ev_fail(c, "this update_rule needs beta");
        if (be->rank != 3 || (size_t)be->dims[0] != l->bn ||
            (size_t)be->dims[1] != l->t ||
            ((size_t)be->dims[2] != l->hkv && be->dims[2] != 1))
            return ev_fail(c, "beta must be [B, T, kv_heads] or [B, T, 1]");
        l->beta_shared = be->dims[2] == 1 && l->hkv != 1;
    }
    return 0;
}

static int ev_lin_shapes(EvCtx *c, EvLin *l, const EvValue *ps)
{
    const EvValue *q = l->q, *k = l->k, *v = l->v;
    if (q->rank != 3 || k->rank != 3 || v->rank != 3)
        return ev_fail(c, "query, key and value must be 3-D [B, T, H*D]");
    l->bn = (size_t)q->dims[0];
    l->t = (size_t)q->dims[1];
    if ((size_t)k->dims[0] != l->bn || (size_t)v->dims[0] != l->bn ||
        (size_t)k->dims[1] != l->t || (size_t)v->dims[1] != l->t)
        return ev_fail(c, "query, key and value disagree on [B, T]");
    if ((size_t)q->dims[2] % l->hq || (size_t)k->dims[2] % l->hkv ||
        (size_t)v->dims[2] % l->hkv)
        return ev_fail(c, "hidden sizes must divide by the head counts");
    l->dk = (size_t)q->dims[2] / l->hq;
    l->dv = (size_t)v->dims[2] / l->hkv;
    if ((size_t)k->dims[2] / l->hkv != l->dk)
        return ev_fail(c, "query and key head sizes differ");
    if (ps && (ps->rank != 4 || (size_t)ps->dims[0] != l->bn ||
               (size_t)ps->dims[1] != l->hkv ||
               (size_t)ps->dims[2] != l->dk || (size_t)ps->dims[3] != l->dv))
        return ev_fail(c, "past_state must be [B, kv_heads, d_k, d_v]");
    return ev_lin_gates(c, l);
}

static int ev_linear_attention(EvCtx *c)
{
    EvLin l = {0};
    bool bad = false;
    l.q = ev_in_real(c, 0);
    l.k = ev_in_real(c, 1);
    l.v = ev_in_real(c, 2);
    EvValue *ps = ev_in_real_opt(c, 3, &bad);
    l.decay = ev_in_real_opt(c, 4, &bad);
    l.beta = ev_in_real_opt(c, 5, &bad);
    int64_t hq, hkv;
    if (!l.q || !l.k || !l.v || bad || ev_at_heads(c, "q_num_heads", &hq) ||
        ev_at_heads(c, "kv_num_heads", &hkv) || ev_lin_rule(c, &l.rule))
        return -1;
    if (hq % hkv)
        return ev_fail(c, "q_num_heads must be a multiple of kv_num_heads");
    l.hq = (size_t)hq;
    l.hkv = (size_t)hkv;
    if (ev_lin_shapes(c, &l, ps))
        return -1;
    double sc = ev_attr_f(c, "scale");
    l.scale = sc != 0 ? sc : 1.0 / sqrt((double)l.dk);
    int64_t od[3] = {(int64_t)l.bn, (int64_t)l.t, (int64_t)(l.hq * l.dv)};
    int64_t sd[4] = {(int64_t)l.bn, (int64_t)l.hkv, (int64_t)l.dk,
                     (int64_t)l.dv};
    EvValue *out = ev_out_tensor(c, 0, l.q->dtype, 3, od);
    EvValue *pres = NULL;
    if (!out || (ev_has_out(c, 1) &&
                 !(pres = ev_out_tensor(c, 1, ps ? ps->dtype : l.q->dtype, 4,
                                        sd))))
        return -1;
    size_t ssz = l.dk * l.dv, rep = l.hq / l.hkv;
    double *st = ev_tmp(c, ssz + 1, sizeof *st);
    double *kv = ev_tmp(c, l.dk + 1, sizeof *kv);
    double *vv = ev_tmp(c, l.dv + 1, sizeof *vv);
    double *rv = ev_tmp(c, l.dv + 1, sizeof *rv);
    if (!st || !kv || !vv || !rv)
        return -1;
    if (out->numel == 0 && ssz == 0)
        return 0;
    for (size_t b = 0; b < l.bn; b++)
        for (size_t hk = 0; hk < l.hkv; hk++) {
            size_t so = (b * l.hkv + hk) * ssz;
            for (size_t i = 0; i < ssz; i++)
                st[i] = ps ? ev_at_get(ps, so + i) : 0.0;
            for (size_t t = 0; t < l.t; t++) {
                ev_lin_step(&l, b, hk, t, st, kv, vv, rv);
                for (size_t g = 0; g < rep; g++) {
                    size_t h = hk * rep + g;
                    size_t qo = ((b * l.t + t) * l.hq + h) * l.dk;
                    for (size_t j = 0; j < l.dv; j++) {
                        double s = 0;
                        for (size_t i = 0; i < l.dk; i++)
                            s += ev_at_get(l.q, qo + i) * st[i * l.dv + j];
                        ev_at_put(out, ((b * l.t + t) * l.hq + h) * l.dv + j,
                                  l.scale * s);
                    }
                }
            }
            for (size_t i = 0; pres && i < ssz; i++)
                ev_at_put(pres, so + i, st[i]);
        }
    return 0;
}

const EvOp ev_ops_attention[] = {
    {"", "Attention", ev_attention},
    {"", "RotaryEmbedding", ev_rotary_embedding},
    {"", "LinearAttention", ev_linear_attention},
    {"ai.onnx.preview", "FlexAttention", ev_flex_attention},
    {NULL, NULL, NULL}
};
