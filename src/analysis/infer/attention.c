/*
 * infer/attention.c - inference of the attention ops: Attention,
 * LinearAttention, RotaryEmbedding (shaped like its input) and
 * ai.onnx.preview FlexAttention.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* The head count and per-head size of a 3-D [B, L, heads*size] or 4-D
 * [B, heads, L, size] attention input; heads from `attr_heads` (0 =
 * unknown) for 3-D. seq gets L. Returns false when the rank is unknown. */
static bool inf_attn_split(const IrShape *s, int64_t attr_heads, IrDim *heads,
                           IrDim *seq, IrDim *size)
{
    inf_dim_unknown(heads);
    inf_dim_unknown(seq);
    inf_dim_unknown(size);
    if (!s)
        return false;
    if (s->rank == 4) {
        inf_dim_copy(heads, &s->dims[1]);
        inf_dim_copy(seq, &s->dims[2]);
        inf_dim_copy(size, &s->dims[3]);
    } else if (s->rank == 3) {
        if (attr_heads > 0)
            inf_dim_set(heads, attr_heads);
        inf_dim_copy(seq, &s->dims[1]);
        inf_dim_div(size, &s->dims[2], attr_heads);
    }
    return true;
}

/* Attention (opset 23+): Q, K, V are 3-D [B, L, heads*size] or 4-D
 * [B, heads, L, size]. Y is [B, Hq, Lq, Ev] (3-D Q: [B, Lq, Hq*Ev]);
 * present_key / present_value are [B, Hkv, past+Lkv, E or Ev];
 * qk_matmul_output is [B, Hq, Lq, past+Lkv]. */
static int inf_attention(InfCtx *c)
{
    for (size_t i = 0; i < 3; i++) {
        int r = inf_in_rank(c, i);
        if (r >= 0 && r != 3 && r != 4)
            return inf_fail(c, "rank", "input %zu must have rank 3 or 4, has %d", i, r);
    }
    const IrShape *q = inf_in_shape(c, 0), *k = inf_in_shape(c, 1),
                  *v = inf_in_shape(c, 2), *pk = inf_in_shape(c, 4),
                  *pv = inf_in_shape(c, 5);
    int64_t qh = inf_attr_has(c, "q_num_heads") ? inf_attr_i(c, "q_num_heads") : 0;
    int64_t kvh = inf_attr_has(c, "kv_num_heads") ? inf_attr_i(c, "kv_num_heads") : 0;
    IrDim hq = {0}, lq = {0}, e = {0}, hkv = {0}, lkv = {0}, ek = {0}, hv = {0},
          lv = {0}, ev = {0}, total = {0}, batch = {0};
    inf_attn_split(q, qh, &hq, &lq, &e);
    inf_attn_split(k, kvh, &hkv, &lkv, &ek);
    inf_attn_split(v, kvh, &hv, &lv, &ev);
    if (q)
        inf_dim_copy(&batch, &q->dims[0]);
    if (!inf_dim_known(&hkv))
        inf_dim_copy(&hkv, &hv);
    if (!inf_dim_known(&ek))
        inf_dim_copy(&ek, &e);
    if (pk && pk->rank == 4 && !inf_dim_known(&ek))
        inf_dim_copy(&ek, &pk->dims[3]);
    if (pv && pv->rank == 4 && !inf_dim_known(&ev))
        inf_dim_copy(&ev, &pv->dims[3]);
    if (!inf_has_in(c, 4))
        inf_dim_copy(&total, &lkv);
    else if (pk && pk->rank == 4)
        inf_dim_add(&total, &pk->dims[2], &lkv);
    if (q) {
        IrShape *y = inf_out_shape(c, 0, q->rank);
        if (y && q->rank == 4) {
            inf_dim_copy(&y->dims[0], &batch);
            inf_dim_copy(&y->dims[1], &hq);
            inf_dim_copy(&y->dims[2], &lq);
            inf_dim_copy(&y->dims[3], &ev);
        } else if (y) {
            inf_dim_copy(&y->dims[0], &batch);
            inf_dim_copy(&y->dims[1], &lq);
            if (v && v->rank == 3 && qh > 0 && qh == kvh)
                inf_dim_copy(&y->dims[2], &v->dims[2]);
            else
                inf_dim_mul(&y->dims[2], &hq, &ev);
        }
    }
    for (size_t o = 1; o < 3; o++) {
        IrShape *p = inf_out_shape(c, o, 4);
        if (!p)
            continue;
        inf_dim_copy(&p->dims[0], &batch);
        inf_dim_copy(&p->dims[1], &hkv);
        inf_dim_copy(&p->dims[2], &total);
        inf_dim_copy(&p->dims[3], o == 1 ? &ek : &ev);
    }
    IrShape *qk = inf_out_shape(c, 3, 4);
    if (qk) {
        inf_dim_copy(&qk->dims[0], &batch);
        inf_dim_copy(&qk->dims[1], &hq);
        inf_dim_copy(&qk->dims[2], &lq);
        inf_dim_copy(&qk->dims[3], &total);
    }
    IrDim *all[] = {&hq, &lq, &e, &hkv, &lkv, &ek, &hv, &lv, &ev, &total, &batch};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        inf_dim_unknown(all[i]);
    return 0;
}

/* FlexAttention (ai.onnx.preview): Q [B, Hq, L, E], K [B, Hkv, S, E],
 * V [B, Hkv, S, Ev] give Y [B, Hq, L, Ev]. */
static int inf_flexattention(InfCtx *c)
{
    if (inf_need_rank(c, 0, 4, "Q") < 0 || inf_need_rank(c, 1, 4, "K") < 0 ||
        inf_need_rank(c, 2, 4, "V") < 0)
        return -1;
    const IrShape *q = inf_in_shape(c, 0), *v = inf_in_shape(c, 2);
    if (!q && !v)
        return 0;
    IrShape *y = inf_out_shape(c, 0, 4);
    if (!y)
        return 0;
    if (q)
        for (size_t k = 0; k < 3; k++)
            inf_dim_copy(&y->dims[k], &q->dims[k]);
    else
        inf_dim_copy(&y->dims[0], &v->dims[0]);
    if (v)
        inf_dim_copy(&y->dims[3], &v->dims[3]);
    return 0;
}

/* LinearAttention (opset 27): query [B, T, Hq*Dk], value [B, T, Hkv*Dv]
 * give output [B, T, Hq*Dv] and present_state [B, Hkv, Dk, Dv]. The
 * state's type is past_state's, else query's (the function body casts
 * the state like query when there is no past_state). */
static int inf_linearattention(InfCtx *c)
{
    if (inf_need_rank(c, 0, 3, "query") < 0 || inf_need_rank(c, 1, 3, "key") < 0 ||
        inf_need_rank(c, 2, 3, "value") < 0)
        return -1;
    int64_t qh = inf_attr_i(c, "q_num_heads"), kvh = inf_attr_i(c, "kv_num_heads");
    if (!inf_has_in(c, 3) && inf_in_elem(c, 0))
        inf_out_elem(c, 1, inf_in_elem(c, 0));
    const IrShape *q = inf_in_shape(c, 0), *v = inf_in_shape(c, 2);
    IrDim dk = {0}, dv = {0}, hq = {0};
    if (q)
        inf_dim_div(&dk, &q->dims[2], qh);
    if (v)
        inf_dim_div(&dv, &v->dims[2], kvh);
    if (qh > 0)
        inf_dim_set(&hq, qh);
    if (q) {
        IrShape *o = inf_out_shape(c, 0, 3);
        if (o) {
            inf_dim_copy(&o->dims[0], &q->dims[0]);
            inf_dim_copy(&o->dims[1], &q->dims[1]);
            if (v && qh > 0 && qh == kvh)
                inf_dim_copy(&o->dims[2], &v->dims[2]);
            else
                inf_dim_mul(&o->dims[2], &hq, &dv);
        }
    }
    IrShape *s = inf_out_shape(c, 1, 4);
    if (s) {
        if (q)
            inf_dim_copy(&s->dims[0], &q->dims[0]);
        if (kvh > 0)
            inf_dim_set(&s->dims[1], kvh);
        inf_dim_copy(&s->dims[2], &dk);
        inf_dim_copy(&s->dims[3], &dv);
    }
    inf_dim_unknown(&dk);
    inf_dim_unknown(&dv);
    inf_dim_unknown(&hq);
    return 0;
}

const InfOp inf_ops_attention[] = {
    {"", "Attention", inf_attention},
    {"", "RotaryEmbedding", inf_same},
    {"", "LinearAttention", inf_linearattention},
    {"ai.onnx.preview", "FlexAttention", inf_flexattention},
    {NULL, NULL, NULL}};
