/*
 * coreml/rnn.c - Core ML lowering and raising of the rnn family: LSTM,
 * GRU and RNN (MIL's lstm, gru and rnn).
 *
 * MIL facts (coremltools' defs, iOS15 lstm, gru, rnn):
 * - Gate blocks: lstm stacks input, forget, output, cell ("ifoz"; ONNX
 *   stacks input, output, forget, cell); gru stacks reset, output (the
 *   new gate), update ("roz"; ONNX: update, reset, hidden); rnn has one.
 *   One bias per direction: ONNX's Wb and Rb are summed.
 * - gru's new gate is g(W_o x_t + R_o (r_t * h_{t-1}) + b_o): coremltools'
 *   NN backend runs MIL's gru as the NN GRU layer, whose spec defines
 *   c_t = h_{t-1} * r_t and o_t = g(W_o x_t + R_o c_t + b_o). That is ONNX's
 *   linear_before_reset 0, with Wbh + Rbh as the one bias. (The MIL
 *   docstring's "r_t * W_ho h_{t-1}" reads either way; coremltools' torch
 *   frontend says mb.gru cannot express torch's form, which is ONNX's
 *   linear_before_reset 1.)
 * - lstm's peephole is [input, forget, output] (ONNX's P: input, output,
 *   forget), each applied as ONNX does (the NN LSTM layer's spec).
 * - lstm takes both directions in one op ("bidirectional", *_back params;
 *   coremltools' torch frontend relies on its sequence output being in
 *   input order for both halves); gru and rnn take forward or reverse
 *   only, so an ONNX bidirectional GRU or RNN is two ops and a concat. A
 *   reverse LSTM, GRU or RNN is lowered as a forward op over the
 *   time-reversed input, its sequence reversed back: the defs do not say
 *   in which order a lone reverse op's sequence comes out.
 * - States are [B, D*H] and sequences [T, B, D*H]; ONNX's layout 0 has
 *   [D, B, H] and [T, D, B, H], layout 1 [B, D, H] and [B, T, D, H]:
 *   reshapes and transposes on the way in and out.
 * - The NN recurrent layers clip every pre-activation to [-50, 50]:
 *   harmless for sigmoid and tanh (saturated in float32 there), not for
 *   relu.
 *
 * Composed of MIL ops instead:
 * - GRU with linear_before_reset 1 (what PyTorch exports): MIL's gru
 *   computes the other form, and iOS18's reset_after does not document
 *   where the recurrent bias of the new gate goes, so the GRU is unrolled
 *   over its static time steps in linear, split, add, mul, sigmoid/tanh
 *   and concat ops (see rnn_lower_gru_unrolled).
 *
 * Refused, and why:
 * - GRU with linear_before_reset 1 over more than RNN_MAX_STEPS steps
 *   (the unrolled program grows with T).
 * - Activations other than Sigmoid and Tanh (Relu: the clip above; the
 *   rest have no MIL name or take alpha/beta that MIL's activation
 *   strings lack); an LSTM whose two directions' activations differ.
 * - LSTM clip (ONNX clips the gates' inputs, MIL's clip bounds the cell)
 *   and input_forget (MIL has no coupled gates).
 * - sequence_lens, unless a constant equal to the sequence length for
 *   every batch entry (then it changes nothing): MIL has no lengths.
 * - Non-constant W, R, B, P (MIL requires them const); element types
 *   other than float32; dims inference cannot give (the reshapes need
 *   them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreml/rules.h"

#define RNN_MAX_ELEMS (1u << 24)
#define RNN_MAX_ACT 3

/* One ONNX recurrent op and its MIL counterpart. */
typedef struct RnnKind {
    const char *onnx, *mil;
    size_t gates;
    int perm[4];            /* MIL gate block k is ONNX block perm[k] */
    size_t n_act;           /* activations per direction, ONNX's order */
    const char *act_param[RNN_MAX_ACT];
    const char *act_dflt[RNN_MAX_ACT];
    bool both;              /* the MIL op takes "bidirectional" */
} RnnKind;

static const RnnKind rnn_kinds[] = {
    {"LSTM", "lstm", 4, {0, 2, 1, 3}, 3,
     {"recurrent_activation", "cell_activation", "activation"}, {"Sigmoid", "Tanh", "Tanh"},
     true},
    {"GRU", "gru", 3, {1, 2, 0}, 2, {"recurrent_activation", "activation"},
     {"Sigmoid", "Tanh"}, false},
    {"RNN", "rnn", 1, {0}, 1, {"activation"}, {"Tanh"}, false},
};

/* MIL's lstm peephole block k is ONNX's P block rnn_peep_perm[k]. */
static const int rnn_peep_perm[3] = {0, 2, 1};

/* ONNX activation name <-> MIL's. */
static const CmMap rnn_act_names[] = {{"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}};

static const RnnKind *rnn_kind(const char *type, bool mil)
{
    for (size_t i = 0; i < sizeof rnn_kinds / sizeof rnn_kinds[0]; i++)
        if (!strcmp(mil ? rnn_kinds[i].mil : rnn_kinds[i].onnx, type))
            return &rnn_kinds[i];
    return NULL;
}

/* Copies the gate blocks of h x cols floats from src to dst in the other
 * framework's order (to_mil: ONNX -> MIL). */
static void rnn_reorder(const RnnKind *k, const float *src, float *dst, size_t h, size_t cols,
                        bool to_mil)
{
    size_t blk = h * cols;
    for (size_t g = 0; g < k->gates; g++) {
        size_t s = to_mil ? (size_t)k->perm[g] : g, d = to_mil ? g : (size_t)k->perm[g];
        memcpy(dst + d * blk, src + s * blk, blk * sizeof *dst);
    }
}

/* Weight of direction d of a const [D, G*H, cols] input as MIL [G*H, cols]. */
static MilTensor *rnn_weight(const RnnKind *k, const double *v, size_t d, size_t h, size_t cols)
{
    size_t n = k->gates * h * cols;
    float *src = mem_array(n, sizeof *src), *dst = mem_array(n, sizeof *dst);
    for (size_t i = 0; i < n; i++)
        src[i] = (float)v[d * n + i];
    rnn_reorder(k, src, dst, h, cols, true);
    int64_t dims[2] = {(int64_t)(k->gates * h), (int64_t)cols};
    MilTensor *t = mil_tensor_new(MIL_FP32, 2, dims, dst);
    free(src);
    free(dst);
    return t;
}

/* Bias of direction d: Wb + Rb reordered (zeros when B is absent). */
static MilTensor *rnn_bias(const RnnKind *k, const double *v, size_t d, size_t h)
{
    size_t gh = k->gates * h;
    float *src = mem_array(gh, sizeof *src), *dst = mem_array(gh, sizeof *dst);
    for (size_t i = 0; v && i < gh; i++)
        src[i] = (float)(v[d * 2 * gh + i] + v[d * 2 * gh + gh + i]);
    rnn_reorder(k, src, dst, h, 1, true);
    int64_t dims[1] = {(int64_t)gh};
    MilTensor *t = mil_tensor_new(MIL_FP32, 1, dims, dst);
    free(src);
    free(dst);
    return t;
}

/* Peephole of direction d of a const [D, 3H] P as MIL's [3H]. */
static MilTensor *rnn_peephole(const double *v, size_t d, size_t h)
{
    float *dst = mem_array(3 * h, sizeof *dst);
    for (size_t g = 0; g < 3; g++)
        for (size_t j = 0; j < h; j++)
            dst[g * h + j] = (float)v[d * 3 * h + (size_t)rnn_peep_perm[g] * h + j];
    int64_t dims[1] = {(int64_t)(3 * h)};
    MilTensor *t = mil_tensor_new(MIL_FP32, 1, dims, dst);
    free(dst);
    return t;
}

/* ---- lowering ------------------------------------------------------------------- */

/* The MIL names of n's activations, acts[dir * n_act + i]; refuses what
 * MIL cannot compute. */
static int rnn_acts(CmLower *c, const IrNode *n, const RnnKind *k, size_t nd, const char **acts)
{
    const IrAttr *a = ir_node_attr(n, "activations");
    if (a && a->n_strings != k->n_act * nd)
        return cml_refuse(c, "activations lists %zu names, %zu expected", a->n_strings,
                          k->n_act * nd);
    for (size_t i = 0; i < k->n_act * nd; i++) {
        char buf[64];
        const char *name = k->act_dflt[i % k->n_act];
        if (a) {
            size_t len = a->strings[i].len < sizeof buf - 1 ? a->strings[i].len : sizeof buf - 1;
            if (len)
                memcpy(buf, a->strings[i].data, len);
            buf[len] = 0;
            name = buf;
        }
        const CmMap *m = cm_map_onnx(rnn_act_names, 2, name);
        if (!m)
            return cml_refuse(c, "activation %s is not lowered (MIL's recurrent ops are exact "
                              "for sigmoid and tanh only)", name);
        acts[i] = m->mil;
    }
    for (size_t i = 0; k->both && nd == 2 && i < k->n_act; i++)
        if (strcmp(acts[i], acts[k->n_act + i]))
            return cml_refuse(c, "the two directions' activations differ (MIL's %s takes one "
                              "set)", k->mil);
    return 0;
}

/* What MIL cannot express, for a sequence of t steps and batch b. */
static int rnn_check(CmLower *c, const IrNode *n, int64_t t, int64_t b)
{
    if (ir_node_attr(n, "clip"))
        return cml_refuse(c, "clip is not lowered (ONNX clips the gates' inputs, MIL's lstm "
                          "the cell)");
    if (cml_attr_i(n, "input_forget"))
        return cml_refuse(c, "input_forget is not lowered (MIL has no coupled gates)");
    if (cml_elem(n->in[0]) != IR_FLOAT)
        return cml_refuse(c, "only float32 %ss are lowered", n->op_type);
    if (!cml_has(n, 4))
        return 0;
    int64_t *v;
    size_t len;
    if (!cml_const_ints(n, 4, &v, &len))
        len = 0, v = NULL;
    bool full = v && len == (size_t)b;
    for (size_t i = 0; full && i < len; i++)
        full = v[i] == t;
    free(v);
    if (!full)
        return cml_refuse(c, "sequence_lens is not a constant equal to the sequence length "
                          "(MIL has no per-batch lengths)");
    return 0;
}

/* The constant W, R, B and P of n, as doubles (B, P NULL when absent). */
typedef struct RnnParams {
    double *v[4];
} RnnParams;

static void rnn_params_free(RnnParams *p)
{
    for (int i = 0; i < 4; i++)
        free(p->v[i]);
}

/* Reads them whole (not through the small-constant reader, whose cap real
 * recurrent nets exceed): at most RNN_MAX_ELEMS each, of the sizes the
 * dims imply. */
static int rnn_params(CmLower *c, const IrNode *n, const RnnKind *k, size_t d, size_t h,
                      size_t in, RnnParams *p)
{
    static const char *names[4] = {"W", "R", "B", "P"};
    static const size_t idx[4] = {1, 2, 3, 7};
    size_t g = k->gates, want[4] = {d * g * h * in, d * g * h * h, d * 2 * g * h, d * 3 * h};
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 4; i++) {
        if (!cml_has(n, idx[i])) {
            if (i < 2)
                return cml_refuse(c, "%s is absent", names[i]);
            continue;
        }
        const IrTensor *t = cml_const_tensor(n, idx[i]);
        size_t nv;
        int rc = 0;
        if (!t)
            rc = cml_refuse(c, "%s is not a constant (MIL requires it const)", names[i]);
        else if (!ir_tensor_to_f64s(t, RNN_MAX_ELEMS, &p->v[i], &nv))
            rc = cml_refuse(c, "%s unreadable or above %u elements", names[i], RNN_MAX_ELEMS);
        else if (nv != want[i])
            rc = cml_refuse(c, "%s has %zu elements, %zu expected", names[i], nv, want[i]);
        if (rc < 0) {
            rnn_params_free(p);
            return -1;
        }
    }
    return 0;
}

/* A one-input MIL op on x with an int list param, output a temporary. */
static const char *rnn_op1(CmLower *c, const char *type, const char *x, const char *param,
                           const int64_t *v, size_t nv, int rank, const int64_t *dims)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    mil_op_in_const(op, param, cml_ints(v, nv));
    return cml_tmp(c, op, MIL_FP32, rank, dims);
}

/* Zeros [B, cols] for a batch B known only at run time: fill with the
 * shape [shape(seq)[1], cols] (seq: the [T, B, I] MIL input). */
static const char *rnn_zeros(CmLower *c, const char *seq, int64_t cols)
{
    int64_t r1[1] = {3}, one[1] = {1}, bi[1] = {1}, cs[1] = {cols}, sd[2] = {-1, cols};
    MilOp *op = cml_op(c, "shape");
    mil_op_in(op, "x", seq);
    const char *sh = cml_tmp(c, op, MIL_INT32, 1, r1);
    op = cml_op(c, "gather");
    mil_op_in(op, "x", sh);
    mil_op_in_const(op, "indices", cml_ints(bi, 1));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    const char *b = cml_tmp(c, op, MIL_INT32, 1, one);
    const char *cc = cml_const(c, cml_ints(cs, 1));
    op = cml_op(c, "concat");
    mil_op_in(op, "values", b);
    mil_op_in(op, "values", cc);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(0));
    mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
    const char *shape = cml_tmp(c, op, MIL_INT32, 1, (int64_t[]){2});
    op = cml_op(c, "fill");
    mil_op_in(op, "shape", shape);
    mil_op_in_const(op, "value", mil_tensor_scalar_f32(0));
    return cml_tmp(c, op, MIL_FP32, 2, sd);
}

/* ONNX state input k as MIL [B, D*H] (layout 0's [D, B, H] transposed
 * first when D is 2; layout 1's [B, D, H] reshaped only); zeros when
 * absent. */
static const char *rnn_state_in(CmLower *c, const IrNode *n, size_t k, int64_t d, int64_t b,
                                int64_t h, bool batch_first, const char *seq)
{
    int64_t dims[2] = {b, d * h};
    if (!cml_has(n, k))
        return b < 0 ? rnn_zeros(c, seq, d * h)
                     : cml_const(c, mil_tensor_new(MIL_FP32, 2, dims, NULL));
    const char *x = cml_in(c, n, k);
    if (!x)
        return NULL;
    int64_t perm[3] = {1, 0, 2}, tdims[3] = {b, d, h};
    if (!batch_first && d > 1)
        x = rnn_op1(c, "transpose", x, "perm", perm, 3, 3, tdims);
    return rnn_op1(c, "reshape", x, "shape", dims, 2, 2, dims);
}

/* MIL's [.., D*H] value x into ONNX output i: reshaped to rdims, then
 * transposed by perm (NULL: the reshape is the output). */
static int rnn_state_out(CmLower *c, const IrNode *n, size_t i, const char *x,
                         const int64_t *rdims, int rank, const int64_t *perm)
{
    if (i >= n->n_out || !n->out[i])
        return 0;
    int open = 0;
    for (int k = 0; k < rank; k++)
        open += rdims[k] < 0;
    MilOp *op = NULL;
    if (open > 1) {
        /* [T, B, D*H] with T and B unknown: a reshape takes one -1, so
         * the last axis is split into its D parts, each given a new
         * axis 2 (then joined) */
        int64_t part[3] = {rdims[0], rdims[1], rdims[3]};
        const char *ps[2] = {x, NULL};
        if (rdims[2] == 2) {
            op = cml_op(c, "split");
            mil_op_in(op, "x", x);
            mil_op_in_const(op, "num_splits", mil_tensor_scalar_i32(2));
            mil_op_in_const(op, "axis", mil_tensor_scalar_i32(2));
            ps[0] = cml_tmp(c, op, MIL_FP32, 3, part);
            ps[1] = cml_tmp(c, op, MIL_FP32, 3, part);
        }
        int64_t one[4] = {rdims[0], rdims[1], 1, rdims[3]}, ax[1] = {2};
        for (int64_t k = 0; k < rdims[2]; k++) {
            op = cml_op(c, "expand_dims");
            mil_op_in(op, "x", ps[k]);
            mil_op_in_const(op, "axes", cml_ints(ax, 1));
            if (rdims[2] == 2)
                ps[k] = cml_tmp(c, op, MIL_FP32, 4, one);
        }
        if (rdims[2] == 2) {
            op = cml_op(c, "concat");
            mil_op_in(op, "values", ps[0]);
            mil_op_in(op, "values", ps[1]);
            mil_op_in_const(op, "axis", mil_tensor_scalar_i32(2));
            mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
        }
    } else {
        op = cml_op(c, "reshape");
        mil_op_in(op, "x", x);
        mil_op_in_const(op, "shape", cml_ints(rdims, (size_t)rank));
    }
    if (perm) {
        const char *t = cml_tmp(c, op, MIL_FP32, rank, rdims);
        op = cml_op(c, "transpose");
        mil_op_in(op, "x", t);
        mil_op_in_const(op, "perm", cml_ints(perm, (size_t)rank));
    }
    return cml_out(c, op, n, i);
}

/* x reversed along its first (time) axis. */
static const char *rnn_reverse(CmLower *c, const char *x, const int64_t *dims)
{
    int64_t axes[1] = {0};
    return rnn_op1(c, "reverse", x, "axes", axes, 1, 3, dims);
}

/* The shape of one lowering: dims and options. */
typedef struct RnnShape {
    int64_t t, b, in, h, d;
    bool rev, batch_first;
} RnnShape;

/* Binds the MIL op's weights, bias and activations of direction dir. */
static void rnn_bind(MilOp *op, const RnnKind *k, const RnnParams *p, const RnnShape *s,
                     size_t dir, const char *suffix, const char **acts)
{
    char name[32];
    size_t h = (size_t)s->h;
    snprintf(name, sizeof name, "weight_ih%s", suffix);
    mil_op_in_const(op, name, rnn_weight(k, p->v[0], dir, h, (size_t)s->in));
    snprintf(name, sizeof name, "weight_hh%s", suffix);
    mil_op_in_const(op, name, rnn_weight(k, p->v[1], dir, h, h));
    snprintf(name, sizeof name, "bias%s", suffix);
    mil_op_in_const(op, name, rnn_bias(k, p->v[2], dir, h));
    if (p->v[3]) {
        snprintf(name, sizeof name, "peephole%s", suffix);
        mil_op_in_const(op, name, rnn_peephole(p->v[3], dir, h));
    }
    if (*suffix)
        return;
    for (size_t i = 0; i < k->n_act; i++)
        mil_op_in_const(op, k->act_param[i], mil_tensor_string(acts[dir * k->n_act + i]));
    mil_op_in_const(op, "output_sequence", mil_tensor_scalar_bool(true));
}

/* LSTM: one lstm op for either direction count (its own "bidirectional"). */
static int rnn_lower_lstm(CmLower *c, const IrNode *n, const RnnParams *p, const RnnShape *s,
                          const char *x, const char *dir, const char **acts, const char **o,
                          const char **ho, const char **co)
{
    const RnnKind *k = rnn_kind("LSTM", false);
    const char *h0 = rnn_state_in(c, n, 5, s->d, s->b, s->h, s->batch_first, x);
    const char *c0 = h0 ? rnn_state_in(c, n, 6, s->d, s->b, s->h, s->batch_first, x) : NULL;
    if (!c0)
        return -1;
    MilOp *op = cml_op(c, "lstm");
    mil_op_in(op, "x", x);
    mil_op_in(op, "initial_h", h0);
    mil_op_in(op, "initial_c", c0);
    rnn_bind(op, k, p, s, 0, "", acts);
    if (s->d == 2)
        rnn_bind(op, k, p, s, 1, "_back", acts);
    mil_op_in_const(op, "direction", mil_tensor_string(dir));
    int64_t od[3] = {s->t, s->b, s->d * s->h}, sd[2] = {s->b, s->d * s->h};
    *o = cml_tmp(c, op, MIL_FP32, 3, od);
    *ho = cml_tmp(c, op, MIL_FP32, 2, sd);
    *co = cml_tmp(c, op, MIL_FP32, 2, sd);
    return 0;
}

/* GRU, RNN: one forward op per direction (a backward one over the
 * time-reversed input, its sequence reversed back), joined by concat. */
static int rnn_lower_dirs(CmLower *c, const IrNode *n, const RnnKind *k, const RnnParams *p,
                          const RnnShape *s, const char *x, const char **acts, const char **o,
                          const char **ho)
{
    const char *h0 = rnn_state_in(c, n, 5, s->d, s->b, s->h, s->batch_first, x);
    if (!h0)
        return -1;
    int64_t od[3] = {s->t, s->b, s->h}, sd[2] = {s->b, s->h}, xd[3] = {s->t, s->b, s->in};
    const char *hs[2] = {h0, NULL}, *os[2] = {NULL, NULL}, *hos[2] = {NULL, NULL};
    if (s->d == 2) {
        MilOp *op = cml_op(c, "split");
        mil_op_in(op, "x", h0);
        mil_op_in_const(op, "num_splits", mil_tensor_scalar_i32(2));
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32(1));
        hs[0] = cml_tmp(c, op, MIL_FP32, 2, sd);
        hs[1] = cml_tmp(c, op, MIL_FP32, 2, sd);
    }
    for (size_t dir = 0; dir < (size_t)s->d; dir++) {
        bool back = s->rev || dir == 1;
        const char *xin = back ? rnn_reverse(c, x, xd) : x;
        MilOp *op = cml_op(c, k->mil);
        mil_op_in(op, "x", xin);
        mil_op_in(op, "initial_h", hs[dir]);
        rnn_bind(op, k, p, s, dir, "", acts);
        mil_op_in_const(op, "direction", mil_tensor_string("forward"));
        os[dir] = cml_tmp(c, op, MIL_FP32, 3, od);
        hos[dir] = cml_tmp(c, op, MIL_FP32, 2, sd);
        if (back)
            os[dir] = rnn_reverse(c, os[dir], od);
    }
    *o = os[0];
    *ho = hos[0];
    if (s->d == 1)
        return 0;
    int64_t od2[3] = {s->t, s->b, 2 * s->h}, sd2[2] = {s->b, 2 * s->h};
    const char **parts[2] = {os, hos}, **res[2] = {o, ho};
    for (int i = 0; i < 2; i++) {
        MilOp *op = cml_op(c, "concat");
        mil_op_in(op, "values", parts[i][0]);
        mil_op_in(op, "values", parts[i][1]);
        mil_op_in_const(op, "axis", mil_tensor_scalar_i32(i ? 1 : 2));
        mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
        *res[i] = cml_tmp(c, op, MIL_FP32, i ? 2 : 3, i ? sd2 : od2);
    }
    return 0;
}

/* ---- GRU with linear_before_reset 1: unrolled over time -------------------------- */

/* MIL's gru computes the other reset form, so this GRU is written out step
 * by step in MIL ops (T is static; at most RNN_MAX_STEPS steps over all
 * directions). Gates stay in ONNX's order z, r, h; per direction d:
 *   xw = linear(x, W_d, [Wb_z + Rb_z, Wb_r + Rb_r, Wb_h])    [T, B, 3H]
 * split into xzr [T, B, 2H] and xh [T, B, H], then each into T steps;
 * with h [1, B, H], each step is
 *   z, r = split(f(xzr_t + linear(h, R_zr)))
 *   n    = g(xh_t + r * linear(h, R_h, Rb_h))
 *   h    = n + z * (h - n)
 * and Y is the steps' states concatenated in time order. */
#define RNN_MAX_STEPS 256

/* rows [r0, r0 + rows) of direction d of a [D, G*H, cols] weight as MIL
 * [rows, cols]; a bias (cols 1) as rank 1. */
static MilTensor *rnn_rows(const double *v, size_t d, size_t total_rows, size_t r0,
                           size_t rows, size_t cols)
{
    float *dst = mem_array(rows * cols, sizeof *dst);
    for (size_t i = 0; i < rows * cols; i++)
        dst[i] = v ? (float)v[(d * total_rows + r0) * cols + i] : 0.0f;
    int64_t dims[2] = {(int64_t)rows, (int64_t)cols};
    MilTensor *t = cols == 1 ? mil_tensor_new(MIL_FP32, 1, dims, dst)
                             : mil_tensor_new(MIL_FP32, 2, dims, dst);
    free(dst);
    return t;
}

/* A MIL op of two value operands x, y; its output a temporary. */
static const char *rnn_bin(CmLower *c, const char *type, const char *x, const char *y,
                           int rank, const int64_t *dims)
{
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    if (y)
        mil_op_in(op, "y", y);
    return cml_tmp(c, op, MIL_FP32, rank, dims);
}

/* linear(x, w, b) with w and b const ops' names (b may be NULL). */
static const char *rnn_linear(CmLower *c, const char *x, const char *w, const char *b, int rank,
                              const int64_t *dims)
{
    MilOp *op = cml_op(c, "linear");
    mil_op_in(op, "x", x);
    mil_op_in(op, "weight", w);
    if (b)
        mil_op_in(op, "bias", b);
    return cml_tmp(c, op, MIL_FP32, rank, dims);
}

/* split of x along axis into n parts (sizes, or equal when NULL), each
 * typed dims with dims[axis] its size; names into out. */
static void rnn_split(CmLower *c, const char *x, int axis, size_t n, const int64_t *sizes,
                      int rank, const int64_t *dims, const char **out)
{
    if (n == 1) {
        out[0] = x;
        return;
    }
    MilOp *op = cml_op(c, "split");
    mil_op_in(op, "x", x);
    if (sizes)
        mil_op_in_const(op, "split_sizes", cml_ints(sizes, n));
    else
        mil_op_in_const(op, "num_splits", mil_tensor_scalar_i32((int32_t)n));
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(axis));
    int64_t d[4];
    memcpy(d, dims, (size_t)rank * sizeof *d);
    for (size_t i = 0; i < n; i++) {
        d[axis] = sizes ? sizes[i] : dims[axis] / (int64_t)n;
        out[i] = cml_tmp(c, op, MIL_FP32, rank, d);
    }
}

/* concat of n values along axis (one: itself). */
static const char *rnn_concat(CmLower *c, const char *const *v, size_t n, int axis, int rank,
                              const int64_t *dims)
{
    if (n == 1)
        return v[0];
    MilOp *op = cml_op(c, "concat");
    for (size_t i = 0; i < n; i++)
        mil_op_in(op, "values", v[i]);
    mil_op_in_const(op, "axis", mil_tensor_scalar_i32(axis));
    mil_op_in_const(op, "interleave", mil_tensor_scalar_bool(false));
    return cml_tmp(c, op, MIL_FP32, rank, dims);
}

/* One direction: fills ys[t] (each [1, B, H]) and returns the last state. */
static const char *rnn_gru_dir(CmLower *c, const RnnParams *p, const RnnShape *s, size_t dir,
                               const char *x, const char *h, const char **acts, const char **ys)
{
    size_t H = (size_t)s->h, I = (size_t)s->in, T = (size_t)s->t;
    int64_t xw_d[3] = {s->t, s->b, 3 * s->h}, h1[3] = {1, s->b, s->h};
    int64_t zr1[3] = {1, s->b, 2 * s->h}, sz[2] = {2 * s->h, s->h};
    /* input bias: Wb, plus Rb for z and r (Rb_h stays inside the reset) */
    double *bin = mem_array(3 * H, sizeof *bin);
    for (size_t i = 0; i < 3 * H; i++)
        bin[i] = p->v[2] ? p->v[2][dir * 6 * H + i] + (i < 2 * H ? p->v[2][dir * 6 * H + 3 * H + i]
                                                                   : 0)
                         : 0;
    const char *bt = cml_const(c, rnn_rows(bin, 0, 3 * H, 0, 3 * H, 1));
    free(bin);
    const char *wx = cml_const(c, rnn_rows(p->v[0], dir, 3 * H, 0, 3 * H, I));
    const char *wzr = cml_const(c, rnn_rows(p->v[1], dir, 3 * H, 0, 2 * H, H));
    const char *wh = cml_const(c, rnn_rows(p->v[1], dir, 3 * H, 2 * H, H, H));
    const char *rbh = p->v[2] ? cml_const(c, rnn_rows(p->v[2], dir, 6 * H, 5 * H, H, 1)) : NULL;
    const char *xw = rnn_linear(c, x, wx, bt, 3, xw_d);
    const char *parts[2];
    rnn_split(c, xw, 2, 2, sz, 3, xw_d, parts);
    const char **xzr = mem_array(T, sizeof *xzr), **xh = mem_array(T, sizeof *xh);
    int64_t zr_d[3] = {s->t, s->b, 2 * s->h}, h_d[3] = {s->t, s->b, s->h};
    rnn_split(c, parts[0], 0, T, NULL, 3, zr_d, xzr);
    rnn_split(c, parts[1], 0, T, NULL, 3, h_d, xh);
    bool back = s->rev || dir == 1;
    for (size_t k = 0; k < T; k++) {
        size_t t = back ? T - 1 - k : k;
        const char *a = rnn_linear(c, h, wzr, NULL, 3, zr1);
        const char *zr = rnn_bin(c, acts[dir * 2], rnn_bin(c, "add", xzr[t], a, 3, zr1), NULL, 3,
                                 zr1);
        const char *zrs[2];
        rnn_split(c, zr, 2, 2, NULL, 3, zr1, zrs);
        const char *hh = rnn_linear(c, h, wh, rbh, 3, h1);
        const char *nn = rnn_bin(c, "add", xh[t], rnn_bin(c, "mul", zrs[1], hh, 3, h1), 3, h1);
        const char *n = rnn_bin(c, acts[dir * 2 + 1], nn, NULL, 3, h1);
        const char *zd = rnn_bin(c, "mul", zrs[0], rnn_bin(c, "sub", h, n, 3, h1), 3, h1);
        h = ys[t] = rnn_bin(c, "add", n, zd, 3, h1);
    }
    free(xzr);
    free(xh);
    return h;
}

static int rnn_lower_gru_unrolled(CmLower *c, const IrNode *n, const RnnParams *p,
                                  const RnnShape *s, const char *x, const char **acts)
{
    size_t T = (size_t)s->t, D = (size_t)s->d;
    if (s->t < 0 || s->b < 0)
        return cml_refuse(c, "linear_before_reset 1 is unrolled over time (MIL's gru computes "
                          "the other form), which needs a static sequence length and batch");
    if (T * D > RNN_MAX_STEPS)
        return cml_refuse(c, "linear_before_reset 1 is unrolled over time (MIL's gru computes "
                          "the other form): %zu steps, at most %d", T * D, RNN_MAX_STEPS);
    int64_t h1[3] = {1, s->b, s->h}, hd[3] = {s->d, s->b, s->h}, perm3[3] = {1, 0, 2};
    const char *h0s[2] = {NULL, NULL};
    if (cml_has(n, 5)) {
        const char *h0 = cml_in(c, n, 5);
        if (!h0)
            return -1;
        if (s->batch_first)
            h0 = rnn_op1(c, "transpose", h0, "perm", perm3, 3, 3, hd);
        rnn_split(c, h0, 0, D, NULL, 3, hd, h0s);
    } else {
        h0s[0] = h0s[1] = cml_const(c, mil_tensor_new(MIL_FP32, 3, h1, NULL));
    }
    const char **ys = mem_array(T * D, sizeof *ys), *last[2];
    for (size_t d = 0; d < D; d++) {
        const char **yd = mem_array(T, sizeof *yd);
        last[d] = rnn_gru_dir(c, p, s, d, x, h0s[d], acts, yd);
        for (size_t t = 0; t < T; t++)
            ys[t * D + d] = yd[t];
        free(yd);
    }
    /* Y: the states in (t, d) order, [T*D, B, H] -> [T, D, B, H] */
    int64_t all[3] = {s->t * s->d, s->b, s->h}, y4[4] = {s->t, s->d, s->b, s->h};
    const char *y = rnn_concat(c, ys, T * D, 0, 3, all);
    free(ys);
    int64_t p4b[4] = {2, 0, 1, 3};
    int rc = 0;
    if (n->n_out > 0 && n->out[0]) {
        MilOp *op = cml_op(c, "reshape");
        mil_op_in(op, "x", y);
        mil_op_in_const(op, "shape", cml_ints(y4, 4));
        if (s->batch_first) {
            const char *t = cml_tmp(c, op, MIL_FP32, 4, y4);
            op = cml_op(c, "transpose");
            mil_op_in(op, "x", t);
            mil_op_in_const(op, "perm", cml_ints(p4b, 4));
        }
        rc = cml_out(c, op, n, 0);
    }
    if (rc < 0 || n->n_out < 2 || !n->out[1])
        return rc;
    const char *yh = rnn_concat(c, last, D, 0, 3, hd);
    MilOp *op = cml_op(c, s->batch_first ? "transpose" : "identity");
    mil_op_in(op, "x", yh);
    if (s->batch_first)
        mil_op_in_const(op, "perm", cml_ints(perm3, 3));
    return cml_out(c, op, n, 1);
}

static int lower_rnn(CmLower *c, const IrNode *n)
{
    const RnnKind *k = rnn_kind(n->op_type, false);
    char dbuf[32];
    const char *dir = cml_attr_s(n, "direction", dbuf, sizeof dbuf);
    RnnShape s = {.rev = !strcmp(dir, "reverse"), .batch_first = cml_attr_i(n, "layout") != 0};
    bool bi = !strcmp(dir, "bidirectional");
    if (!bi && !s.rev && strcmp(dir, "forward"))
        return cml_refuse(c, "direction '%s'", dir);
    int64_t xd[3];
    size_t xr;
    s.h = cml_attr_i_or(n, "hidden_size", 0);
    if (!cml_dims_open(n->in[0], xd, 3, &xr) || xr != 3 || xd[2] < 0 || s.h <= 0 ||
        s.h > (1 << 20))
        return cml_refuse(c, "input rank, input size or hidden_size unknown");
    s.t = s.batch_first ? xd[1] : xd[0];
    s.b = s.batch_first ? xd[0] : xd[1];
    s.in = xd[2];
    s.d = bi ? 2 : 1;
    /* the sequence length and the batch may be unknown (-1): MIL's
     * recurrent ops take any, the reshapes use -1 and the zero states fill */
    if (s.in <= 0 || s.in > (1 << 20) || s.t == 0 || s.t > (1 << 24) || s.b == 0 ||
        s.b > (1 << 20) || (s.b > 0 && (uint64_t)s.b * (uint64_t)(s.d * s.h) > RNN_MAX_ELEMS))
        return cml_refuse(c, "input dims out of range");
    const char *acts[2 * RNN_MAX_ACT];
    RnnParams p;
    if (rnn_check(c, n, s.t, s.b) < 0 || rnn_acts(c, n, k, (size_t)s.d, acts) < 0 ||
        rnn_params(c, n, k, (size_t)s.d, (size_t)s.h, (size_t)s.in, &p) < 0)
        return -1;
    const char *x = cml_in(c, n, 0), *o = NULL, *ho = NULL, *co = NULL;
    int64_t perm3[3] = {1, 0, 2}, tdims[3] = {s.t, s.b, s.in};
    if (x && s.batch_first)
        x = rnn_op1(c, "transpose", x, "perm", perm3, 3, 3, tdims);
    if (x && !k->both && k->gates == 3 && cml_attr_i(n, "linear_before_reset")) {
        int urc = rnn_lower_gru_unrolled(c, n, &p, &s, x, acts);
        rnn_params_free(&p);
        return urc;
    }
    /* a reverse lstm too runs forward over the reversed sequence */
    int64_t od[3] = {s.t, s.b, s.d * s.h};
    if (x && k->both && s.rev)
        x = rnn_reverse(c, x, tdims);
    int rc = !x ? -1
             : k->both ? rnn_lower_lstm(c, n, &p, &s, x, s.rev ? "forward" : dir, acts, &o,
                                        &ho, &co)
                       : rnn_lower_dirs(c, n, k, &p, &s, x, acts, &o, &ho);
    rnn_params_free(&p);
    if (rc < 0)
        return -1;
    if (k->both && s.rev)
        o = rnn_reverse(c, o, od);
    /* Y: [T, B, D, H] to [T, D, B, H] (layout 0) or [B, T, D, H]; the
     * states: [B, D, H] to [D, B, H] (layout 0) or as they are */
    int64_t y4[4] = {s.t, s.b, s.d, s.h}, s3[3] = {s.b, s.d, s.h};
    int64_t p4[4] = {0, 2, 1, 3}, p4b[4] = {1, 0, 2, 3};
    const int64_t *ps = s.batch_first ? NULL : perm3;
    if (rnn_state_out(c, n, 0, o, y4, 4, s.batch_first ? p4b : p4) < 0 ||
        rnn_state_out(c, n, 1, ho, s3, 3, ps) < 0 ||
        (co && rnn_state_out(c, n, 2, co, s3, 3, ps) < 0))
        return -1;
    return 0;
}

static const CmLowerRule rnn_lower[] = {
    {"LSTM", lower_rnn},
    {"GRU", lower_rnn},
    {"RNN", lower_rnn},
};

/* ---- raising -------------------------------------------------------------------- */

/* Reads a const fp32 [G*H, cols] param into v (G*H*cols floats, ONNX's
 * gate order). */
static bool rnn_read(CmRaise *r, const MilOp *op, const RnnKind *k, const char *param,
                     size_t h, size_t cols, float *v)
{
    const MilTensor *t = cmr_const(r, op, param);
    size_t n = k->gates * h * cols;
    if (!t || t->dtype != MIL_FP32 || t->nbytes != n * sizeof(float))
        return false;
    float *src = mem_array(n, sizeof *src);
    memcpy(src, t->data, t->nbytes);
    rnn_reorder(k, src, v, h, cols, false);
    free(src);
    return true;
}

/* A const fp32 [3H] peephole param into ONNX's P order (v: 3H floats). */
static bool rnn_read_peep(CmRaise *r, const MilOp *op, const char *param, size_t h, float *v)
{
    const MilTensor *t = cmr_const(r, op, param);
    if (!t || t->dtype != MIL_FP32 || t->nbytes != 3 * h * sizeof(float))
        return false;
    for (size_t g = 0; g < 3; g++)
        memcpy(v + (size_t)rnn_peep_perm[g] * h, t->data + g * h * sizeof(float),
               h * sizeof(float));
    return true;
}

static int rnn_node(CmRaise *r, const char *type, const char *x, const char *y,
                    const int64_t *v, size_t nv, bool is_perm)
{
    const char *in[2] = {x, is_perm ? NULL : cmr_init_i64(r, v, nv, false)}, *out[1] = {y};
    IrNode *node;
    if (cmr_node(r, type, is_perm ? 1 : 2, in, 1, out, &node) < 0)
        return -1;
    if (is_perm)
        ir_node_set_attr(node, ir_attr_ints("perm", nv, v));
    return 0;
}

/* The ONNX activations list of op (its direction count d), or -1. */
static int rnn_raise_acts(CmRaise *r, const MilOp *op, const RnnKind *k, size_t d, IrNode *node)
{
    const char *names[2 * RNN_MAX_ACT];
    for (size_t i = 0; i < k->n_act; i++) {
        const char *m = cmr_string(cmr_const(r, op, k->act_param[i]));
        const CmMap *map = m ? cm_map_mil(rnn_act_names, 2, m) : NULL;
        if (m && !map)
            return cmr_fail(r, "%s '%s' has no ONNX equivalent here", k->act_param[i], m);
        names[i] = map ? map->onnx : k->act_dflt[i];
        if (d == 2)
            names[k->n_act + i] = names[i];
    }
    ir_node_set_attr(node, ir_attr_strings("activations", k->n_act * d, names));
    return 0;
}

/* The ONNX W, R, B (and P) initializers of op; names in `names`. */
static int rnn_raise_params(CmRaise *r, const MilOp *op, const RnnKind *k, size_t d, size_t h,
                            size_t in, const char **names)
{
    size_t g = k->gates;
    float *w = mem_array(d * g * h * in, sizeof *w), *rr = mem_array(d * g * h * h,
                                                                               sizeof *rr);
    float *bb = mem_array(d * 2 * g * h, sizeof *bb), *pp = mem_array(d * 3 * h,
                                                                               sizeof *pp);
    bool peep = cmr_const(r, op, "peephole") != NULL;
    static const char *sfx[2] = {"", "_back"};
    bool ok = true;
    for (size_t dir = 0; ok && dir < d; dir++) {
        char pn[32];
        snprintf(pn, sizeof pn, "weight_ih%s", sfx[dir]);
        ok = rnn_read(r, op, k, pn, h, in, w + dir * g * h * in);
        snprintf(pn, sizeof pn, "weight_hh%s", sfx[dir]);
        ok = ok && rnn_read(r, op, k, pn, h, h, rr + dir * g * h * h);
        snprintf(pn, sizeof pn, "bias%s", sfx[dir]);
        if (ok && cmr_const(r, op, pn))
            ok = rnn_read(r, op, k, pn, h, 1, bb + dir * 2 * g * h);
        snprintf(pn, sizeof pn, "peephole%s", sfx[dir]);
        if (ok && peep)
            ok = rnn_read_peep(r, op, pn, h, pp + dir * 3 * h);
    }
    int64_t wd[3] = {(int64_t)d, (int64_t)(g * h), (int64_t)in};
    int64_t rd[3] = {(int64_t)d, (int64_t)(g * h), (int64_t)h};
    int64_t bd[2] = {(int64_t)d, (int64_t)(2 * g * h)}, pd[2] = {(int64_t)d, (int64_t)(3 * h)};
    names[0] = cmr_tmp(r, "W");
    names[1] = cmr_tmp(r, "R");
    names[2] = cmr_tmp(r, "B");
    names[3] = peep ? cmr_tmp(r, "P") : NULL;
    if (ok) {
        ir_graph_add_init(r->g, ir_tensor_new(names[0], IR_FLOAT, 3, wd, w, d * g * h * in * 4));
        ir_graph_add_init(r->g, ir_tensor_new(names[1], IR_FLOAT, 3, rd, rr, d * g * h * h * 4));
        ir_graph_add_init(r->g, ir_tensor_new(names[2], IR_FLOAT, 2, bd, bb, d * 2 * g * h * 4));
        if (peep)
            ir_graph_add_init(r->g, ir_tensor_new(names[3], IR_FLOAT, 2, pd, pp, d * 3 * h * 4));
    }
    free(w);
    free(rr);
    free(bb);
    free(pp);
    return ok ? 0 : cmr_fail(r, "weights are not const fp32 of the expected size");
}

/* lstm, gru, rnn -> LSTM, GRU, RNN: MIL's [B, D*H] states and [T, B, D*H]
 * sequence to and from ONNX's layout 0. */
static int raise_rnn(CmRaise *r, const MilOp *op)
{
    const RnnKind *k = rnn_kind(op->type, true);
    const char *dir = cmr_string(cmr_const(r, op, "direction"));
    bool bi = dir && !strcmp(dir, "bidirectional");
    const MilTensor *whh = cmr_const(r, op, "weight_hh"), *wih = cmr_const(r, op, "weight_ih");
    size_t n_state = k->both ? 2 : 1;
    if (!whh || !wih || whh->rank != 2 || wih->rank != 2 || op->n_out != 1 + n_state)
        return cmr_fail(r, "weights or outputs not as the export writes them");
    if (cmr_const(r, op, "clip") || cmr_bool(r, op, "reset_after", false) ||
        cmr_const(r, op, "input_bias"))
        return cmr_fail(r, "clip, reset_after and input_bias have no ONNX equivalent here");
    size_t h = (size_t)whh->dims[1], in = (size_t)wih->dims[1], d = bi ? 2 : 1, g = k->gates;
    if (whh->dims[0] != (int64_t)(g * h) || wih->dims[0] != (int64_t)(g * h) ||
        h > (1u << 20) || in > (1u << 24) || wih->nbytes != g * h * in * sizeof(float) ||
        whh->nbytes != g * h * h * sizeof(float))
        return cmr_fail(r, "weight dims");
    /* the sizes are now bounded by the weights the file holds */
    const char *pn[4];
    if (rnn_raise_params(r, op, k, d, h, in, pn) < 0)
        return -1;
    /* states in: [B, D*H] -> [B, D, H] -> [D, B, H] */
    int64_t s3[3] = {0, (int64_t)d, (int64_t)h}, p3[3] = {1, 0, 2};
    const char *st[2] = {NULL, NULL}, *sname[2] = {"initial_h", "initial_c"};
    for (size_t i = 0; i < n_state; i++) {
        const char *x = cmr_in(r, op, sname[i], 0), *t1 = cmr_tmp(r, "st"),
                   *t2 = cmr_tmp(r, "st");
        if (!x || rnn_node(r, "Reshape", x, t1, s3, 3, false) < 0 ||
            rnn_node(r, "Transpose", t1, t2, p3, 3, true) < 0)
            return cmr_fail(r, "%s missing", sname[i]);
        st[i] = t2;
    }
    const char *y = cmr_tmp(r, "Y"), *yh = cmr_tmp(r, "Y_h"), *yc = cmr_tmp(r, "Y_c");
    const char *in8[8] = {cmr_in(r, op, "x", 0), pn[0], pn[1], pn[2], "", st[0], st[1], pn[3]};
    const char *out3[3] = {y, yh, yc};
    size_t n_in = pn[3] ? 8 : 5 + n_state;
    if (pn[3])
        in8[6] = st[1];
    IrNode *node;
    if (!in8[0])
        return cmr_fail(r, "x missing");
    if (cmr_node(r, k->onnx, n_in, in8, 1 + n_state, out3, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("hidden_size", (int64_t)h));
    ir_node_set_attr(node, ir_attr_string("direction", dir ? dir : "forward"));
    if (rnn_raise_acts(r, op, k, d, node) < 0)
        return -1;
    /* Y [T, D, B, H] -> [T, B, D, H] -> [T, B, D*H] (the last step only,
     * [1, B, D*H], without output_sequence); states [D, B, H] ->
     * [B, D, H] -> [B, D*H] */
    int64_t p4[4] = {0, 2, 1, 3}, o3[3] = {0, 0, (int64_t)(d * h)}, o2[2] = {0, (int64_t)(d * h)};
    int64_t last[3] = {1, -1, (int64_t)(d * h)};
    bool seq = cmr_bool(r, op, "output_sequence", false);
    const char *t1 = cmr_tmp(r, "yt"), *t2 = cmr_tmp(r, "ht"), *t3 = cmr_tmp(r, "ct");
    if (rnn_node(r, "Transpose", yh, t2, p3, 3, true) < 0 ||
        rnn_node(r, "Reshape", t2, cmr_out(op, 1), o2, 2, false) < 0 ||
        (seq ? rnn_node(r, "Transpose", y, t1, p4, 4, true) < 0 ||
                   rnn_node(r, "Reshape", t1, cmr_out(op, 0), o3, 3, false) < 0
             : rnn_node(r, "Reshape", t2, cmr_out(op, 0), last, 3, false) < 0) ||
        (n_state == 2 && (rnn_node(r, "Transpose", yc, t3, p3, 3, true) < 0 ||
                          rnn_node(r, "Reshape", t3, cmr_out(op, 2), o2, 2, false) < 0)))
        return -1;
    return 0;
}

/* reverse(x, axes): a Slice stepping -1 from the end along each axis
 * (starts and steps both -1). */
static int raise_reverse(CmRaise *r, const MilOp *op)
{
    int64_t *axes = NULL;
    size_t na = 0;
    const MilTensor *t = cmr_const(r, op, "axes");
    int rank = op->n_out ? op->out[0].type.rank : -1;
    if (t ? !cmr_ints(t, &axes, &na) : rank < 0)
        return cmr_fail(r, "axes are not constant ints, nor is the rank known");
    if (!t) {
        na = (size_t)rank;
        axes = mem_array(na ? na : 1, sizeof *axes);
        for (size_t i = 0; i < na; i++)
            axes[i] = (int64_t)i;
    }
    int64_t *st = mem_array(na ? na : 1, sizeof *st), *en = mem_array(na ? na : 1,
                                                                               sizeof *en);
    for (size_t i = 0; i < na; i++) {
        st[i] = -1;
        en[i] = INT64_MIN;
    }
    const char *in[5] = {cmr_in(r, op, "x", 0), cmr_init_i64(r, st, na, false),
                         cmr_init_i64(r, en, na, false), cmr_init_i64(r, axes, na, false),
                         cmr_init_i64(r, st, na, false)};
    free(axes);
    free(st);
    free(en);
    if (!in[0])
        return cmr_fail(r, "x missing");
    return cmr_simple(r, op, "Slice", 5, in, NULL);
}

static const CmRaiseRule rnn_raise[] = {
    {"lstm", raise_rnn},
    {"gru", raise_rnn},
    {"rnn", raise_rnn},
    {"reverse", raise_reverse},
};

CM_FAMILY(cm_family_rnn, "rnn", rnn_lower, rnn_raise);
