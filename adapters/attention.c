/*
 * attention.c - adapters of the attention ops (Attention, RotaryEmbedding,
 * LinearAttention).
 *
 * The expansions below an op's first version follow the spec's function
 * bodies.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* The total key length (past + new) of an Attention node, or -1. */
static int64_t ad_at_attn_total(const AdCtx *c)
{
    IrValue *k = ad_in(c, 1), *pk = ad_in(c, 4);
    int r = ad_rank(k);
    int64_t kv = r == 4 ? ad_dim_at(k, 2) : r == 3 ? ad_dim_at(k, 1) : -1;
    int64_t past = pk ? ad_dim_at(pk, 2) : 0;
    return kv < 0 || past < 0 ? -1 : kv + past;
}

/* Attention 23 <-> 24 and the mask: at 23 attn_mask broadcasts to the
 * total key length (its last dim is 1 or that length); from 24 a shorter
 * last dim is padded with -inf instead, so a last dim of 1 means
 * something else unless the total length is 1. Refuses unless the mask
 * is absent or its last dim is known to be the total length (or, going
 * up with the total unknown, known to be more than 1: at 23 it then is
 * the total). */
static int ad_at_attn_mask(AdCtx *c, bool up)
{
    IrValue *m = ad_in(c, 3);
    if (!m)
        return 0;
    int64_t md = ad_dim_at(m, -1), total = ad_at_attn_total(c);
    if (md >= 0 && md == total)
        return 0;
    if (up && md > 1 && total < 0)
        return 0;
    return ad_refuse(c, DG_SHAPE,
                     "attn_mask's last dim must be known to equal the total key "
                     "length (padding from 24, broadcasting before)");
}

/* Attention 23 -> 24: nonpad_kv_seqlen added (optional), the short mask
 * rule changed (see ad_at_attn_mask). */
static int ad_at_attn_23_24(AdCtx *c)
{
    return ad_at_attn_mask(c, true);
}

/* 0, 1, ..., n-1 as an INT64 constant of shape dims (n elements). */
static IrValue *ad_at_iota(AdCtx *c, int64_t n, size_t nd, const int64_t *dims)
{
    if (c->refusal)
        return NULL;
    int64_t *v = mem_array((size_t)(n ? n : 1), sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = i;
    IrValue *r = ad_const_tensor(c, IR_INT64, nd, dims, v, (size_t)n * sizeof *v);
    free(v);
    return r;
}

/* nonpad_kv_seqlen (24) as an attn_mask at 23: key j of batch b is seen
 * when j < nonpad[b] and, with is_causal, j < i + nonpad[b] - q_len + 1
 * (24 offsets the causal diagonal so); that bool [B, 1, Sq, T] mask is and-ed
 * with a bool attn_mask, or turned into 0 / -inf and added to a float
 * one (as the bias adds them), and is_causal is dropped. */
static int ad_at_attn_nonpad(AdCtx *c)
{
    IrValue *m = ad_in(c, 3), *np = ad_in(c, 6);
    int32_t mt = m ? ad_elem(m) : 9;
    int rank = ad_rank(ad_in(c, 0));
    int64_t sq = ad_dim_at(ad_in(c, 0), rank == 4 ? 2 : 1), total = ad_at_attn_total(c);
    if ((rank != 3 && rank != 4) || sq < 0 || total < 0)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "nonpad_kv_seqlen needs the sequence lengths");
    if (mt != 9 && mt != 1 && mt != 10 && mt != 11 && mt != 16)
        return ad_refuse(c, DG_TYPE, "a mask of this type cannot take nonpad_kv_seqlen");
    int64_t col[4] = {-1, 1, 1, 1}, trow[1] = {total}, qcol[2] = {sq, 1};
    IrValue *npc = ad_reshape(c, np, 4, col), *j = ad_at_iota(c, total, 1, trow);
    IrValue *keep = ad_op2(c, "Less", j, npc);
    if (ad_attr_i(c, "is_causal")) {
        int64_t back = sq - 1;
        IrValue *pos = ad_op2(c, "Add", ad_at_iota(c, sq, 2, qcol),
                                 ad_op2(c, "Sub", npc, ad_const_i64s(c, 1, &back)));
        keep = ad_op2(c, "And", keep, ad_op2(c, "Less", j, pos));
    }
    if (m && mt == 9) {
        keep = ad_op2(c, "And", keep, m);
    } else if (m) {
        IrValue *in[3] = {keep, ad_const_scalar(c, mt, 0.0), ad_const_scalar(c, mt, -INFINITY)};
        keep = ad_op2(c, "Add", m, ad_fin(c, ad_raw(c, "Where", 3, in, 1)));
    }
    if (c->refusal)
        return -1;
    ad_set_input(c, 3, keep);
    ir_node_set_input(c->n, 6, NULL);
    ad_trim_inputs(c->n);
    ad_drop_attr(c, "is_causal");
    return 0;
}

/* Attention 24 -> 23: nonpad_kv_seqlen does not exist at 23 and becomes
 * part of the mask (ad_at_attn_nonpad); the mask rule as in
 * ad_at_attn_mask. */
static int ad_at_attn_24_23(AdCtx *c)
{
    if (ad_at_attn_mask(c, false) < 0)
        return -1;
    if (ad_in(c, 6))
        return ad_at_attn_nonpad(c);
    ad_trim_inputs(c->n);
    return 0;
}

/* Attention 25 -> 24: left/right_window_size added with default -1 (no
 * window), which is what 24 does. */
static int ad_at_attn_25_24(AdCtx *c)
{
    if (ad_drop_attr_if(c, "left_window_size", -1) < 0)
        return -1;
    return ad_drop_attr_if(c, "right_window_size", -1);
}

/* x with a new axis of 1 at `axis`. */
static IrValue *ad_at_unsq(AdCtx *c, IrValue *x, int64_t axis)
{
    return ad_axes_op(c, c->n, "Unsqueeze", x, 1, &axis);
}

/* ---- RotaryEmbedding ------------------------------------------------ */

/* RotaryEmbedding below 23 (the function body): the first rotary_dim
 * entries of each head vector (all when the attribute is 0) are rotated
 * pairwise, the pairs being (i, i + rot/2), or (2i, 2i + 1) when
 * interleaved, by the cos/sin cache entries (looked up by position_ids
 * when given, the first rot/2 of each row): real = cos*x1 - sin*x2,
 * imag = sin*x1 + cos*x2; the rest of the vector is kept. A 3-D input is
 * viewed as [B, S, num_heads, head_size]; a 4-D one is [B, H, S, head],
 * so its cache rows broadcast over axis 1 instead of 2 (no transposes). */
static int ad_at_rope_expand(AdCtx *c)
{
    IrValue *x = ad_in(c, 0), *pos = ad_in(c, 3);
    int r = ad_rank(x);
    int64_t nh = ad_attr_i(c, "num_heads"), rd = ad_attr_i(c, "rotary_embedding_dim");
    bool il = ad_attr_i(c, "interleaved") != 0;
    if (r != 3 && r != 4)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rank of X is unknown");
    if (r == 3 && nh <= 0)
        return ad_refuse(c, DG_ATTRIBUTE, "a 3-D input needs num_heads");
    int64_t hd = r == 4 ? ad_dim_at(x, 3) : ad_dim_at(x, 2) >= 0 ? ad_dim_at(x, 2) / nh : -1;
    int64_t rot = rd ? rd : hd, half = rot / 2, head_ax = r == 4 ? 1 : 2;
    if (rot <= 0 || rot % 2)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the rotary dimension is unknown");
    int64_t heads[4] = {0, 0, nh, -1}, flat[3] = {0, 0, -1}, pairs[4] = {0, 0, 0, -1};
    IrValue *xin = r == 4 ? x : ad_reshape(c, x, 4, heads);
    IrValue *xr = rd ? ad_slice_at(c, xin, 0, rd, 3, 1) : xin;
    IrValue *xn = rd ? ad_slice_at(c, xin, rd, INT64_MAX, 3, 1) : NULL;
    IrValue *cs = pos ? ad_op2(c, "Gather", ad_in(c, 1), pos) : ad_in(c, 1);
    IrValue *sn = pos ? ad_op2(c, "Gather", ad_in(c, 2), pos) : ad_in(c, 2);
    cs = ad_at_unsq(c, ad_slice_at(c, cs, 0, half, 2, 1), head_ax);
    sn = ad_at_unsq(c, ad_slice_at(c, sn, 0, half, 2, 1), head_ax);
    IrValue *x1 = il ? ad_slice_at(c, xr, 0, INT64_MAX, 3, 2) : ad_slice_at(c, xr, 0, half, 3, 1);
    IrValue *x2 = il ? ad_slice_at(c, xr, 1, INT64_MAX, 3, 2)
                     : ad_slice_at(c, xr, half, INT64_MAX, 3, 1);
    IrValue *re = ad_op2(c, "Sub", ad_op2(c, "Mul", cs, x1), ad_op2(c, "Mul", sn, x2));
    IrValue *im = ad_op2(c, "Add", ad_op2(c, "Mul", sn, x1), ad_op2(c, "Mul", cs, x2));
    IrValue *pair[2] = {re, im};
    if (il) {
        pair[0] = ad_at_unsq(c, re, -1);
        pair[1] = ad_at_unsq(c, im, -1);
    }
    IrValue *xo = ad_concat(c, pair, 2, -1);
    if (il)
        xo = ad_reshape(c, xo, 4, pairs);
    if (xn)
        xo = ad_concat(c, (IrValue *[]){xo, xn}, 2, -1);
    IrValue *outs[1] = {r == 4 ? xo : ad_reshape(c, xo, 3, flat)};
    return ad_end(c, 1, outs);
}

/* ---- Attention below 23 --------------------------------------------- */

/* The causal bias [sq, total] of type t as a constant: 0 where key j may
 * be seen by query i (j <= i + past), -inf elsewhere. */
static IrValue *ad_at_causal_const(AdCtx *c, int32_t t, int64_t sq, int64_t total,
                                   int64_t past)
{
    size_t w = t == IR_DOUBLE ? 8 : t == IR_FLOAT ? 4 : 2, n = (size_t)(sq * total);
    uint8_t ninf[8] = {0};
    switch (t) {
    case IR_FLOAT: ninf[2] = 0x80; ninf[3] = 0xff; break;
    case IR_DOUBLE: ninf[6] = 0xf0; ninf[7] = 0xff; break;
    case IR_FLOAT16: ninf[1] = 0xfc; break;
    case IR_BFLOAT16: ninf[0] = 0x80; ninf[1] = 0xff; break;
    default:
        ad_refuse(c, DG_TYPE, "no causal mask of this type");
        return NULL;
    }
    uint8_t *buf = mem_array(n ? n : 1, w);
    for (int64_t i = 0; i < sq; i++)
        for (int64_t j = i + past + 1; j < total; j++)
            memcpy(buf + (size_t)(i * total + j) * w, ninf, w);
    int64_t dims[2] = {sq, total};
    IrValue *v = c->refusal ? NULL : ad_const_tensor(c, t, 2, dims, buf, n * w);
    free(buf);
    return v;
}

/* The causal bias [sq, total]: a constant when small (it then converts to
 * any opset), else built at run time from two index vectors (key j is
 * seen when j < i + past + 1) so that long sequences do not store it. */
static IrValue *ad_at_causal(AdCtx *c, int32_t t, int64_t sq, int64_t total,
                             int64_t past)
{
    if (sq * total <= 65536)
        return ad_at_causal_const(c, t, sq, total, past);
    int64_t trow[1] = {total}, qcol[2] = {sq, 1}, lim = past + 1;
    IrValue *pos = ad_op2(c, "Add", ad_at_iota(c, sq, 2, qcol), ad_const_i64s(c, 1, &lim));
    IrValue *in[3] = {ad_op2(c, "Less", ad_at_iota(c, total, 1, trow), pos),
                      ad_const_scalar(c, t, 0.0), ad_const_scalar(c, t, -INFINITY)};
    return ad_fin(c, ad_raw(c, "Where", 3, in, 1));
}

/* The sizes an Attention expansion needs, from attributes and types. */
typedef struct AdAttn {
    int rank;
    int32_t t;
    int64_t hq, hkv, d, dv, sq, past, total;
} AdAttn;

/* Reads the sizes; refuses when what the node uses is unknown. */
static int ad_at_attn_sizes(AdCtx *c, AdAttn *a)
{
    IrValue *q = ad_in(c, 0), *k = ad_in(c, 1), *v = ad_in(c, 2), *pk = ad_in(c, 4);
    a->rank = ad_rank(q);
    a->t = ad_elem(q);
    if ((a->rank != 3 && a->rank != 4) || ad_rank(k) != a->rank || ad_rank(v) != a->rank)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "Q, K and V must be known 3-D or 4-D");
    if (!a->t || ad_elem(k) != a->t || ad_elem(v) != a->t)
        return ad_refuse(c, DG_TYPE, "Q, K and V must have one known type");
    if (a->rank == 4) {
        a->hq = ad_dim_at(q, 1);
        a->hkv = ad_dim_at(k, 1);
        a->d = ad_dim_at(q, 3);
        a->dv = ad_dim_at(v, 3);
    } else {
        a->hq = ad_attr_i(c, "q_num_heads");
        a->hkv = ad_attr_i(c, "kv_num_heads");
        a->d = a->hq > 0 && ad_dim_at(q, 2) >= 0 ? ad_dim_at(q, 2) / a->hq : -1;
        a->dv = a->hkv > 0 && ad_dim_at(v, 2) >= 0 ? ad_dim_at(v, 2) / a->hkv : -1;
    }
    a->sq = ad_dim_at(q, a->rank == 4 ? 2 : 1);
    a->past = pk ? ad_dim_at(pk, 2) : 0;
    a->total = ad_at_attn_total(c);
    if (a->hq <= 0 || a->hkv <= 0 || a->hq % a->hkv)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the head counts are unknown");
    if (a->d <= 0 && !ad_attr(c, "scale"))
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the head size is unknown");
    if (a->hq != a->hkv && (a->d <= 0 || a->dv <= 0))
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "grouped heads need the head sizes");
    if (ad_attr_i(c, "is_causal") && (a->sq < 0 || a->total < 0 || a->past < 0))
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "a causal mask needs the sequence lengths");
    if (!ad_in(c, 4) != !ad_in(c, 5))
        return ad_refuse(c, DG_SEMANTICS, "past_key and past_value go together");
    return 0;
}

/* x [B, S, H*E] as [B, H, S, E] (4-D inputs are already so). */
static IrValue *ad_at_attn_heads(AdCtx *c, const AdAttn *a, IrValue *x, int64_t h)
{
    if (a->rank == 4)
        return x;
    int64_t split[4] = {0, 0, h, -1}, perm[4] = {0, 2, 1, 3};
    return ad_transpose(c, ad_reshape(c, x, 4, split), 4, perm);
}

/* Each of the hkv heads of x [B, hkv, T, e] repeated hq/hkv times in a
 * row: [B, hq, T, e] (query head h reads kv head h / (hq/hkv)). */
static IrValue *ad_at_attn_repeat(AdCtx *c, const AdAttn *a, IrValue *x, int64_t e)
{
    if (a->hq == a->hkv)
        return x;
    int64_t rep[5] = {1, 1, a->hq / a->hkv, 1, 1}, shape[4] = {0, a->hq, -1, e};
    IrValue *u = ad_op2(c, "Expand", ad_at_unsq(c, x, 2), ad_const_i64s(c, 5, rep));
    return ad_reshape(c, u, 4, shape);
}

/* The additive bias of the scores: attn_mask (bool: 0 / -inf, numbers as
 * they are) plus the causal mask; NULL when there is neither. */
static IrValue *ad_at_attn_bias(AdCtx *c, const AdAttn *a)
{
    IrValue *m = ad_in(c, 3), *bias = NULL;
    if (m && ad_elem(m) == IR_BOOL) {
        IrValue *in[3] = {m, ad_const_scalar(c, a->t, 0.0), ad_const_scalar(c, a->t, -INFINITY)};
        bias = ad_fin(c, ad_raw(c, "Where", 3, in, 1));
    } else if (m) {
        bias = ad_cast(c, m, a->t);
    }
    if (ad_attr_i(c, "is_causal")) {
        IrValue *cm = ad_at_causal(c, a->t, a->sq, a->total, a->past);
        bias = bias ? ad_op2(c, "Add", bias, cm) : cm;
    }
    return bias;
}

/* The softmax over the keys in softmax_precision (the scores' own type
 * when absent), back in the scores' type. */
static IrValue *ad_at_attn_softmax(AdCtx *c, const AdAttn *a, IrValue *s)
{
    int32_t sp = (int32_t)ad_attr_i_or(c, "softmax_precision", a->t);
    IrValue *in[1] = {ad_cast(c, s, sp)};
    IrNode *k = ad_raw(c, "Softmax", 1, in, 1);
    if (k)
        ad_set_attr_i(c, k, "axis", -1);
    return ad_cast(c, ad_fin(c, k), a->t);
}

/* Attention below 23 (the function body): Q, K, V as [B, heads, S, E];
 * past keys/values prepended (they are present_key/present_value); K/V
 * heads repeated for grouped queries; scores = (Q*sqrt(scale)) x
 * (K*sqrt(scale))^T, scale 1/sqrt(head size) by default, softcapped
 * (softcap*tanh(s/softcap)), plus the mask bias; softmax over the keys,
 * 0 on rows whose bias is all -inf; Y = probabilities x V, back to
 * [B, S, heads*E] for 3-D inputs. qk_matmul_output is the scores after
 * the step its mode names. */
static int ad_at_attn_expand(AdCtx *c)
{
    AdAttn a = {0};
    if (ad_at_attn_sizes(c, &a) < 0)
        return -1;
    int64_t mode = ad_attr_i(c, "qk_matmul_output_mode"), tr[4] = {0, 1, 3, 2};
    int64_t back[4] = {0, 2, 1, 3}, flat[3] = {0, 0, -1}, last[1] = {-1};
    double scale = ad_attr(c, "scale") ? ad_attr_f(c, "scale") : 1.0 / sqrt((double)a.d);
    double cap = ad_attr_f(c, "softcap");
    if (mode < 0 || mode > 3)
        return ad_refuse(c, DG_ATTRIBUTE, "qk_matmul_output_mode %lld", (long long)mode);
    IrValue *q = ad_at_attn_heads(c, &a, ad_in(c, 0), a.hq);
    IrValue *k = ad_at_attn_heads(c, &a, ad_in(c, 1), a.hkv);
    IrValue *v = ad_at_attn_heads(c, &a, ad_in(c, 2), a.hkv);
    if (ad_in(c, 4)) {
        k = ad_concat(c, (IrValue *[]){ad_in(c, 4), k}, 2, 2);
        v = ad_concat(c, (IrValue *[]){ad_in(c, 5), v}, 2, 2);
    }
    IrValue *kx = ad_at_attn_repeat(c, &a, k, a.d), *vx = ad_at_attn_repeat(c, &a, v, a.dv);
    IrValue *sq = ad_const_scalar(c, a.t, sqrt(scale));
    IrValue *s = ad_op2(c, "MatMul", ad_op2(c, "Mul", q, sq),
                           ad_op2(c, "Mul", ad_transpose(c, kx, 4, tr), sq));
    IrValue *qk[4] = {s, s, s, NULL};
    if (cap != 0.0) {
        IrValue *cv = ad_const_scalar(c, a.t, cap);
        s = ad_op2(c, "Mul", ad_op1(c, "Tanh", ad_op2(c, "Div", s, cv)), cv);
        qk[1] = qk[2] = s;
    }
    IrValue *bias = ad_at_attn_bias(c, &a);
    if (bias)
        qk[2] = s = ad_op2(c, "Add", s, bias);
    IrValue *p = ad_at_attn_softmax(c, &a, s);
    if (ad_in(c, 3)) {
        IrValue *rmax = ad_op2(c, "ReduceMax", bias, ad_const_i64s(c, 1, last));
        IrValue *all = ad_op2(c, "Equal", rmax, ad_const_scalar(c, a.t, -INFINITY));
        IrValue *in[3] = {all, ad_const_scalar(c, a.t, 0.0), p};
        p = ad_fin(c, ad_raw(c, "Where", 3, in, 1));
    }
    qk[3] = p;
    IrValue *y = ad_op2(c, "MatMul", p, vx);
    if (a.rank == 3)
        y = ad_reshape(c, ad_transpose(c, y, 4, back), 3, flat);
    IrValue *outs[4] = {y, k, v, qk[mode]};
    return ad_end(c, 4, outs);
}

/* ---- LinearAttention ------------------------------------------------ */

/* A node `op` appended to the subgraph g (inputs may be values of g or of
 * the enclosing graphs), one fresh output; NULL after a failure. Typed
 * later, when the Scan that owns g is inferred. */
static IrValue *ad_at_bop(AdCtx *c, IrGraph *g, const char *op, size_t n,
                          IrValue *const *in)
{
    if (c->refusal)
        return NULL;
    const char *ins[8];
    for (size_t i = 0; i < n && i < 8; i++) {
        if (!in[i])
            return ad_refuse(c, DG_INTERNAL, "a body input is missing"), NULL;
        ins[i] = in[i]->name;
    }
    /* g is not attached to a node yet, so fresh names (which look from
     * the top graph down) do not see its values: the counter keeps them
     * apart. */
    char base[64];
    int id = ++c->n_new;
    snprintf(base, sizeof base, "step_%s%d", op, id);
    char *nm = ir_graph_fresh_name(g, base);
    snprintf(base, sizeof base, "step_%s%d_y", op, id);
    char *on = ir_graph_fresh_name(g, base);
    const char *outs[1] = {on};
    IrNode *k = ir_node_new(g, NULL, op, NULL, nm, n, ins, 1, outs, c->err);
    free(nm);
    free(on);
    if (!k) {
        c->refusal = DG_INTERNAL;
        return NULL;
    }
    return k->out[0];
}

static IrValue *ad_at_bop2(AdCtx *c, IrGraph *g, const char *op, IrValue *a, IrValue *b)
{
    IrValue *in[2] = {a, b};
    return ad_at_bop(c, g, op, 2, in);
}

/* x cast to float in the body (x itself when it is float). */
static IrValue *ad_at_bcast(AdCtx *c, IrGraph *g, IrValue *x, int32_t from, int32_t to)
{
    if (from == to || !x)
        return x;
    IrValue *y = ad_at_bop(c, g, "Cast", 1, &x);
    if (y)
        ir_node_set_attr(y->producer, ir_attr_int("to", to));
    return y;
}

/* A typed input of the body g: elem type t, rank r, unknown dims. */
static IrValue *ad_at_bin_input(AdCtx *c, IrGraph *g, const char *base, int32_t t, size_t r)
{
    if (c->refusal)
        return NULL;
    int64_t dims[4] = {-1, -1, -1, -1};
    char *nm = ir_graph_fresh_name(g, base);
    IrValueInfo *vi = ir_graph_add_input(g, nm, ir_type_tensor(t, r, dims));
    free(nm);
    if (!vi)
        return ad_refuse(c, DG_INTERNAL, "cannot add a body input"), NULL;
    return vi->value;
}

/* What a LinearAttention expansion needs to know. */
typedef struct AdLin {
    int32_t t;                   /* query/key/value type */
    int64_t hq, hkv, dk, dv;
    bool gated, delta;
    IrValue *m1, *m2, *two, *rep, *read, *scale;   /* outer constants */
} AdLin;

/* The Scan body of one time step (the function body's): in float,
 * decay the state by exp(decay) (gated rules), write k (x) r where r is
 * v, or beta * (v - state^T k) (delta rules), read q^T state (state heads
 * repeated for grouped queries) times scale. Inputs: state, q_t, k_t,
 * v_t, [decay_t], [beta_t]; outputs: new state, output_t. */
static IrGraph *ad_at_lin_body(AdCtx *c, const AdLin *l)
{
    IrGraph *g = ir_graph_new(c->g);
    g->name = mem_strdup("linear_attention_step");
    IrValue *st = ad_at_bin_input(c, g, "state_in", IR_FLOAT, 4);
    IrValue *q = ad_at_bcast(c, g, ad_at_bin_input(c, g, "q_t", l->t, 3), l->t, IR_FLOAT);
    IrValue *k = ad_at_bcast(c, g, ad_at_bin_input(c, g, "k_t", l->t, 3), l->t, IR_FLOAT);
    IrValue *v = ad_at_bcast(c, g, ad_at_bin_input(c, g, "v_t", l->t, 3), l->t, IR_FLOAT);
    IrValue *dec = l->gated ? ad_at_bin_input(c, g, "decay_t", l->t, 3) : NULL;
    IrValue *beta = l->delta ? ad_at_bin_input(c, g, "beta_t", l->t, 3) : NULL;
    if (dec) {
        IrValue *e = ad_at_bop(c, g, "Exp", 1,
                               (IrValue *[]){ad_at_bcast(c, g, dec, l->t, IR_FLOAT)});
        st = ad_at_bop2(c, g, "Mul", st, ad_at_bop2(c, g, "Unsqueeze", e, l->m1));
    }
    IrValue *kcol = ad_at_bop2(c, g, "Unsqueeze", k, l->m1), *r = v;
    if (beta) {
        IrValue *stt = ad_at_bop(c, g, "Transpose", 1, &st);
        if (stt)
            ir_node_set_attr(stt->producer, ir_attr_ints("perm", 4, (int64_t[]){0, 1, 3, 2}));
        IrValue *got = ad_at_bop2(c, g, "Squeeze", ad_at_bop2(c, g, "MatMul", stt, kcol), l->m1);
        r = ad_at_bop2(c, g, "Mul", ad_at_bcast(c, g, beta, l->t, IR_FLOAT),
                       ad_at_bop2(c, g, "Sub", v, got));
    }
    IrValue *out_st = ad_at_bop2(c, g, "Add", st,
                                 ad_at_bop2(c, g, "MatMul", kcol,
                                            ad_at_bop2(c, g, "Unsqueeze", r, l->m2)));
    IrValue *rd = out_st;
    if (l->hq != l->hkv)
        rd = ad_at_bop2(c, g, "Reshape",
                        ad_at_bop2(c, g, "Expand", ad_at_bop2(c, g, "Unsqueeze", out_st, l->two),
                                   l->rep), l->read);
    IrValue *o = ad_at_bop2(c, g, "MatMul", ad_at_bop2(c, g, "Unsqueeze", q, l->m2), rd);
    o = ad_at_bop2(c, g, "Mul", l->scale, ad_at_bop2(c, g, "Squeeze", o, l->m2));
    o = ad_at_bcast(c, g, o, IR_FLOAT, l->t);
    if (c->refusal) {
        ir_graph_free(g);
        return NULL;
    }
    int64_t d4[4] = {-1, l->hkv, l->dk, l->dv}, d3[3] = {-1, l->hq, l->dv};
    ir_graph_add_output(g, out_st, ir_type_tensor(IR_FLOAT, 4, d4));
    ir_graph_add_output(g, o, ir_type_tensor(l->t, 3, d3));
    return g;
}

/* x [B, T, heads*E] as the scan sequence [T, B, heads, E] (E = -1: the
 * rest). */
static IrValue *ad_at_lin_seq(AdCtx *c, IrValue *x, int64_t heads, int64_t e)
{
    int64_t shape[4] = {0, 0, heads, e}, perm[4] = {1, 0, 2, 3};
    return ad_transpose(c, ad_reshape(c, x, 4, shape), 4, perm);
}

/* Reads sizes and rule; refuses what is unknown. */
static int ad_at_lin_sizes(AdCtx *c, AdLin *l)
{
    char buf[16];
    const char *rule = ad_attr_s(c, "update_rule", buf, sizeof buf);
    IrValue *q = ad_in(c, 0), *v = ad_in(c, 2);
    l->t = ad_elem(q);
    l->hq = ad_attr_i(c, "q_num_heads");
    l->hkv = ad_attr_i(c, "kv_num_heads");
    l->gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    l->delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!l->gated && !l->delta && strcmp(rule, "linear") != 0)
        return ad_refuse(c, DG_ATTRIBUTE, "update_rule '%s' is unknown", rule);
    if (l->hq <= 0 || l->hkv <= 0 || l->hq % l->hkv)
        return ad_refuse(c, DG_ATTRIBUTE, "the head counts are invalid");
    l->dk = ad_dim_at(q, 2) >= 0 ? ad_dim_at(q, 2) / l->hq : -1;
    l->dv = ad_dim_at(v, 2) >= 0 ? ad_dim_at(v, 2) / l->hkv : -1;
    if (!l->t || ad_elem(ad_in(c, 1)) != l->t || ad_elem(v) != l->t)
        return ad_refuse(c, DG_TYPE, "query, key and value must have one known type");
    if (l->dk <= 0 || l->dv <= 0 || ad_rank(q) != 3)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the head sizes are unknown");
    if ((l->gated && !ad_in(c, 4)) || (l->delta && !ad_in(c, 5)))
        return ad_refuse(c, DG_SEMANTICS, "the update rule needs decay/beta");
    return 0;
}

/* LinearAttention below 27 (the function body): a Scan over the time
 * steps of the state recurrence (ad_at_lin_body), from past_state or
 * zeros; the outputs go back to [B, T, q_heads*d_v], the final state is
 * present_state (in past_state's type, else the query's). Built at 26. */
static int ad_at_lin_expand(AdCtx *c)
{
    AdLin l = {0};
    if (ad_at_lin_sizes(c, &l) < 0)
        return -1;
    IrValue *q = ad_in(c, 0), *past = ad_in(c, 3);
    int64_t m1 = -1, m2 = -2, two = 2, rep[5] = {1, 1, l.hq / l.hkv, 1, 1};
    int64_t rd[4] = {0, l.hq, l.dk, l.dv}, sd[3] = {l.hkv, l.dk, l.dv};
    int64_t back[4] = {1, 0, 2, 3}, flat[3] = {0, 0, -1};
    double sc = ad_attr_f(c, "scale");
    l.m1 = ad_const_i64s(c, 1, &m1);
    l.m2 = ad_const_i64s(c, 1, &m2);
    l.two = ad_const_i64s(c, 1, &two);
    l.rep = ad_const_i64s(c, 5, rep);
    l.read = ad_const_i64s(c, 4, rd);
    l.scale = ad_const_scalar(c, IR_FLOAT, sc != 0.0 ? sc : 1.0 / sqrt((double)l.dk));
    IrValue *st0;
    if (past) {
        st0 = ad_cast(c, past, IR_FLOAT);
    } else {
        IrNode *bs = ad_raw(c, "Shape", 1, &q, 1);
        if (bs)
            ad_set_attr_i(c, bs, "end", 1);
        IrValue *shape = ad_concat(c, (IrValue *[]){ad_fin(c, bs), ad_const_i64s(c, 3, sd)}, 2, 0);
        st0 = ad_op2(c, "Expand", ad_const_scalar(c, IR_FLOAT, 0.0), shape);
    }
    IrValue *in[6] = {st0, ad_at_lin_seq(c, q, l.hq, -1),
                      ad_at_lin_seq(c, ad_in(c, 1), l.hkv, -1),
                      ad_at_lin_seq(c, ad_in(c, 2), l.hkv, -1)};
    size_t n = 4;
    if (l.gated)
        in[n++] = ad_at_lin_seq(c, ad_in(c, 4), l.hkv, -1);
    if (l.delta) {
        int64_t bshape[4] = {0, 0, -1, 1}, perm[4] = {1, 0, 2, 3};
        in[n++] = ad_transpose(c, ad_reshape(c, ad_in(c, 5), 4, bshape), 4, perm);
    }
    IrGraph *body = c->refusal ? NULL : ad_at_lin_body(c, &l);
    IrNode *scan = body ? ad_raw(c, "Scan", n, in, 2) : NULL;
    if (!scan) {
        if (body)
            ir_graph_free(body);
        return c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "no Scan");
    }
    ir_node_set_attr(scan, ir_attr_graph("body", body));
    ad_set_attr_i(c, scan, "num_scan_inputs", (int64_t)n - 1);
    if (ad_infer(c, scan) < 0)
        return -1;
    IrValue *y = ad_reshape(c, ad_transpose(c, scan->out[1], 4, back), 3, flat);
    int32_t s = past ? ad_elem(past) : l.t;
    if (!s)
        return ad_refuse(c, DG_TYPE_UNKNOWN, "the type of past_state is unknown");
    IrValue *outs[2] = {y, ad_cast(c, scan->out[0], s)};
    return ad_end(c, 2, outs);
}

static const AdEntry ad_attention[] = {

    AD_UP("Attention", 23, 24, AD_SEMANTIC, ad_at_attn_23_24),
    AD_DOWN("Attention", 23, 24, AD_SEMANTIC, ad_at_attn_24_23),
    AD_UP("Attention", 24, 25, AD_ATTRS, ad_nothing),
    AD_DOWN("Attention", 24, 25, AD_ATTRS, ad_at_attn_25_24),
    AD_GONE("RotaryEmbedding", 23, AD_EXPAND, ad_at_rope_expand),
    AD_GONE("Attention", 23, AD_EXPAND, ad_at_attn_expand),
    AD_GONE("LinearAttention", 27, AD_EXPAND, ad_at_lin_expand),
};

const AdFamily ad_family_attention = {"attention", ad_attention,
                                      sizeof ad_attention / sizeof ad_attention[0]};
