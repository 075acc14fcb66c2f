/*
 * coreml/rnn.c - Core ML lowering and raising of the rnn family: LSTM.
 *
 * MIL facts (coremltools' defs, iOS15 lstm): gates are stacked input,
 * forget, output, cell ("ifoz"; ONNX stacks input, output, forget, cell);
 * one bias of 4H (ONNX has Wb and Rb: summed); states are [B, D*H] and the
 * sequence output [T, B, D*H] (ONNX: [D, B, H] and [T, D, B, H]); a
 * bidirectional lstm takes the backward weights as *_back.
 *
 * Refused, and why: layout 1, sequence_lens, peepholes, clip and
 * input_forget (not lowered yet); activations other than the defaults;
 * non-constant W, R, B (MIL requires them const); element types other
 * than float32; dims inference cannot give (the state reshapes need them).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#define RNN_MAX_ELEMS (1u << 24)

/* MIL gate block k is ONNX block rnn_gate[k] (and the reverse: the
 * permutation is its own inverse). */
static const int rnn_gate[4] = {0, 2, 1, 3};

/* Copies the 4 gate blocks of rows x cols floats from src to dst in the
 * other framework's order. */
static void rnn_reorder(const float *src, float *dst, size_t h, size_t cols)
{
    for (size_t k = 0; k < 4; k++)
        memcpy(dst + k * h * cols, src + (size_t)rnn_gate[k] * h * cols, h * cols * sizeof *dst);
}

/* Weight of direction d of a const [D, 4H, cols] input as MIL [4H, cols]. */
static MilTensor *rnn_weight(const double *v, size_t d, size_t h, size_t cols)
{
    size_t n = 4 * h * cols;
    float *src = ir_alloc_array(n, sizeof *src), *dst = ir_alloc_array(n, sizeof *dst);
    for (size_t i = 0; i < n; i++)
        src[i] = (float)v[d * n + i];
    rnn_reorder(src, dst, h, cols);
    int64_t dims[2] = {(int64_t)(4 * h), (int64_t)cols};
    MilTensor *t = mil_tensor_new(MIL_FP32, 2, dims, dst);
    free(src);
    free(dst);
    return t;
}

/* Bias of direction d: Wb + Rb reordered (zeros when B is absent). */
static MilTensor *rnn_bias(const double *v, size_t d, size_t h)
{
    float *src = ir_alloc_array(4 * h, sizeof *src), *dst = ir_alloc_array(4 * h, sizeof *dst);
    for (size_t i = 0; v && i < 4 * h; i++)
        src[i] = (float)(v[d * 8 * h + i] + v[d * 8 * h + 4 * h + i]);
    rnn_reorder(src, dst, h, 1);
    int64_t dims[1] = {(int64_t)(4 * h)};
    MilTensor *t = mil_tensor_new(MIL_FP32, 1, dims, dst);
    free(src);
    free(dst);
    return t;
}

static int rnn_check(CmLower *c, const IrNode *n)
{
    char buf[64];
    if (cml_attr_i(n, "layout", 0))
        return cml_refuse(c, "layout 1 is not lowered");
    if (cml_has(n, 4))
        return cml_refuse(c, "sequence_lens is not lowered");
    if (cml_has(n, 7))
        return cml_refuse(c, "peepholes are not lowered");
    if (ir_node_attr(n, "clip") || cml_attr_i(n, "input_forget", 0))
        return cml_refuse(c, "clip and input_forget are not lowered");
    const IrAttr *a = ir_node_attr(n, "activations");
    for (size_t i = 0; a && i < a->n_strings; i++) {
        const char *want = i % 3 == 0 ? "Sigmoid" : "Tanh";
        size_t len = a->strings[i].len < sizeof buf - 1 ? a->strings[i].len : sizeof buf - 1;
        memcpy(buf, a->strings[i].data, len);
        buf[len] = 0;
        if (strcmp(buf, want))
            return cml_refuse(c, "activation %s is not lowered", buf);
    }
    if (cml_elem(n->in[0]) != IR_FLOAT)
        return cml_refuse(c, "only float32 LSTMs are lowered");
    return 0;
}

/* An ONNX state [D, B, H] (input k) as MIL [B, D*H]: transpose, reshape;
 * zeros when absent. */
static const char *rnn_state_in(CmLower *c, const IrNode *n, size_t k, int64_t d, int64_t b,
                                int64_t h)
{
    int64_t dims[2] = {b, d * h};
    if (!cml_has(n, k))
        return cml_const(c, mil_tensor_new(MIL_FP32, 2, dims, NULL));
    const char *x = cml_in(c, n, k);
    if (!x)
        return NULL;
    int64_t perm[3] = {1, 0, 2}, tdims[3] = {b, d, h};
    MilOp *op = cml_op(c, "transpose");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "perm", cml_ints(perm, 3));
    const char *t = cml_tmp(c, op, MIL_FP32, 3, tdims);
    op = cml_op(c, "reshape");
    mil_op_in(op, "x", t);
    mil_op_in_const(op, "shape", cml_ints(dims, 2));
    return cml_tmp(c, op, MIL_FP32, 2, dims);
}

/* MIL's [.., D*H] output back to ONNX's layout: reshape to `rdims`, then
 * transpose by perm into ONNX output i. */
static int rnn_state_out(CmLower *c, const IrNode *n, size_t i, const char *x,
                         const int64_t *rdims, int rank, const int64_t *perm)
{
    if (i >= n->n_out || !n->out[i])
        return 0;
    MilOp *op = cml_op(c, "reshape");
    mil_op_in(op, "x", x);
    mil_op_in_const(op, "shape", cml_ints(rdims, (size_t)rank));
    const char *t = cml_tmp(c, op, MIL_FP32, rank, rdims);
    op = cml_op(c, "transpose");
    mil_op_in(op, "x", t);
    mil_op_in_const(op, "perm", cml_ints(perm, (size_t)rank));
    return cml_out(c, op, n, i);
}

static int lower_lstm(CmLower *c, const IrNode *n)
{
    if (rnn_check(c, n) < 0)
        return -1;
    char dbuf[32];
    const char *dir = cml_attr_s(n, "direction", dbuf, sizeof dbuf, "forward");
    bool bi = !strcmp(dir, "bidirectional");
    int64_t h = cml_attr_i(n, "hidden_size", 0), xd[3];
    size_t xr;
    if (!cml_dims(n->in[0], xd, 3, &xr) || xr != 3 || h <= 0 || h > (1 << 20))
        return cml_refuse(c, "input dims or hidden_size unknown");
    int64_t t = xd[0], b = xd[1], in = xd[2], d = bi ? 2 : 1;
    if (in <= 0 || in > (1 << 20) || t <= 0 || b <= 0 || b > (1 << 20) ||
        (uint64_t)b * (uint64_t)(d * h) > RNN_MAX_ELEMS)
        return cml_refuse(c, "input dims out of range");
    /* the weights are read whole (not through the small-constant reader,
     * whose cap real LSTMs exceed): at most RNN_MAX_ELEMS each */
    const IrTensor *wt = cml_const_tensor(n, 1), *rt = cml_const_tensor(n, 2);
    const IrTensor *bt = cml_has(n, 3) ? cml_const_tensor(n, 3) : NULL;
    double *w = NULL, *r = NULL, *bias = NULL;
    size_t nw, nr, nb;
    int rc = 0;
    if (!wt || !rt || (cml_has(n, 3) && !bt))
        rc = cml_refuse(c, "W, R or B is not a constant (MIL requires them const)");
    else if (!ir_tensor_to_f64s(wt, RNN_MAX_ELEMS, &w, &nw) ||
             !ir_tensor_to_f64s(rt, RNN_MAX_ELEMS, &r, &nr) ||
             (bt && !ir_tensor_to_f64s(bt, RNN_MAX_ELEMS, &bias, &nb)))
        rc = cml_refuse(c, "W, R or B unreadable or above %u elements", RNN_MAX_ELEMS);
    else if (nw != (size_t)(d * 4 * h * in) || nr != (size_t)(d * 4 * h * h) ||
             (bias && nb != (size_t)(d * 8 * h)))
        rc = cml_refuse(c, "W, R or B has the wrong size");
    const char *x = rc ? NULL : cml_in(c, n, 0);
    const char *h0 = x ? rnn_state_in(c, n, 5, d, b, h) : NULL;
    const char *c0 = h0 ? rnn_state_in(c, n, 6, d, b, h) : NULL;
    if (!c0) {
        free(w);
        free(r);
        free(bias);
        return -1;
    }
    MilOp *op = cml_op(c, "lstm");
    mil_op_in(op, "x", x);
    mil_op_in(op, "initial_h", h0);
    mil_op_in(op, "initial_c", c0);
    mil_op_in_const(op, "weight_ih", rnn_weight(w, 0, (size_t)h, (size_t)in));
    mil_op_in_const(op, "weight_hh", rnn_weight(r, 0, (size_t)h, (size_t)h));
    mil_op_in_const(op, "bias", rnn_bias(bias, 0, (size_t)h));
    if (bi) {
        mil_op_in_const(op, "weight_ih_back", rnn_weight(w, 1, (size_t)h, (size_t)in));
        mil_op_in_const(op, "weight_hh_back", rnn_weight(r, 1, (size_t)h, (size_t)h));
        mil_op_in_const(op, "bias_back", rnn_bias(bias, 1, (size_t)h));
    }
    free(w);
    free(r);
    free(bias);
    mil_op_in_const(op, "direction", mil_tensor_string(dir));
    mil_op_in_const(op, "output_sequence", mil_tensor_scalar_bool(true));
    int64_t od[3] = {t, b, d * h}, sd[2] = {b, d * h};
    const char *o = cml_tmp(c, op, MIL_FP32, 3, od);
    const char *ho = cml_tmp(c, op, MIL_FP32, 2, sd);
    const char *co = cml_tmp(c, op, MIL_FP32, 2, sd);
    int64_t y4[4] = {t, b, d, h}, p4[4] = {0, 2, 1, 3}, s3[3] = {b, d, h}, p3[3] = {1, 0, 2};
    if (rnn_state_out(c, n, 0, o, y4, 4, p4) < 0 || rnn_state_out(c, n, 1, ho, s3, 3, p3) < 0 ||
        rnn_state_out(c, n, 2, co, s3, 3, p3) < 0)
        return -1;
    return 0;
}

static const CmLowerRule rnn_lower[] = {
    {"LSTM", lower_lstm},
};

/* ---- raising -------------------------------------------------------------------- */

/* Reads a const fp32 [4H, cols] param into v (4H*cols floats, ONNX order). */
static bool rnn_read(CmRaise *r, const MilOp *op, const char *param, size_t h, size_t cols,
                     float *v)
{
    const MilTensor *t = cmr_const(r, op, param);
    if (!t || t->dtype != MIL_FP32 || t->nbytes != 4 * h * cols * sizeof(float))
        return false;
    float *src = ir_alloc_array(4 * h * cols, sizeof *src);
    memcpy(src, t->data, t->nbytes);
    rnn_reorder(src, v, h, cols);
    free(src);
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

static int raise_lstm(CmRaise *r, const MilOp *op)
{
    const char *dir = cmr_string(cmr_const(r, op, "direction"));
    bool bi = dir && !strcmp(dir, "bidirectional");
    const MilTensor *whh = cmr_const(r, op, "weight_hh"), *wih = cmr_const(r, op, "weight_ih");
    if (!whh || !wih || whh->rank != 2 || wih->rank != 2 || op->n_out != 3 ||
        !cmr_bool(r, op, "output_sequence", false))
        return cmr_fail(r, "weights, outputs or output_sequence not as the export writes them");
    size_t h = (size_t)whh->dims[1], in = (size_t)wih->dims[1], d = bi ? 2 : 1;
    if (whh->dims[0] != (int64_t)(4 * h) || wih->dims[0] != (int64_t)(4 * h) || h > (1u << 20) ||
        in > (1u << 24) || wih->nbytes != 4 * h * in * sizeof(float) ||
        whh->nbytes != 4 * h * h * sizeof(float))
        return cmr_fail(r, "weight dims");
    /* the sizes are now bounded by the weights the file holds */
    float *w = ir_alloc_array(d * 4 * h * in, sizeof *w), *rr = ir_alloc_array(d * 4 * h * h,
                                                                               sizeof *rr);
    float *bb = ir_alloc_array(d * 8 * h, sizeof *bb);
    bool ok = rnn_read(r, op, "weight_ih", h, in, w) && rnn_read(r, op, "weight_hh", h, h, rr);
    if (cmr_const(r, op, "bias"))
        ok = ok && rnn_read(r, op, "bias", h, 1, bb);
    if (bi) {
        ok = ok && rnn_read(r, op, "weight_ih_back", h, in, w + 4 * h * in) &&
             rnn_read(r, op, "weight_hh_back", h, h, rr + 4 * h * h);
        if (cmr_const(r, op, "bias_back"))
            ok = ok && rnn_read(r, op, "bias_back", h, 1, bb + 8 * h);
    }
    int64_t wd[3] = {(int64_t)d, (int64_t)(4 * h), (int64_t)in};
    int64_t rd[3] = {(int64_t)d, (int64_t)(4 * h), (int64_t)h}, bd[2] = {(int64_t)d,
                                                                        (int64_t)(8 * h)};
    const char *wn = cmr_tmp(r, "W"), *rn = cmr_tmp(r, "R"), *bn = cmr_tmp(r, "B");
    if (ok) {
        ir_graph_add_init(r->g, ir_tensor_new(wn, IR_FLOAT, 3, wd, w, d * 4 * h * in * 4));
        ir_graph_add_init(r->g, ir_tensor_new(rn, IR_FLOAT, 3, rd, rr, d * 4 * h * h * 4));
        ir_graph_add_init(r->g, ir_tensor_new(bn, IR_FLOAT, 2, bd, bb, d * 8 * h * 4));
    }
    free(w);
    free(rr);
    free(bb);
    if (!ok)
        return cmr_fail(r, "weights are not const fp32 of the expected size");
    /* states in: [B, D*H] -> [B, D, H] -> [D, B, H] */
    int64_t s3[3] = {0, (int64_t)d, (int64_t)h}, p3[3] = {1, 0, 2};
    const char *st[2] = {NULL, NULL}, *pname[2] = {"initial_h", "initial_c"};
    for (int k = 0; k < 2; k++) {
        const char *x = cmr_in(r, op, pname[k], 0), *t1 = cmr_tmp(r, "st"),
                   *t2 = cmr_tmp(r, "st");
        if (!x || rnn_node(r, "Reshape", x, t1, s3, 3, false) < 0 ||
            rnn_node(r, "Transpose", t1, t2, p3, 3, true) < 0)
            return cmr_fail(r, "%s missing", pname[k]);
        st[k] = t2;
    }
    const char *y = cmr_tmp(r, "Y"), *yh = cmr_tmp(r, "Y_h"), *yc = cmr_tmp(r, "Y_c");
    const char *in7[7] = {cmr_in(r, op, "x", 0), wn, rn, bn, "", st[0], st[1]};
    const char *out3[3] = {y, yh, yc};
    IrNode *node;
    if (cmr_node(r, "LSTM", 7, in7, 3, out3, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_int("hidden_size", (int64_t)h));
    ir_node_set_attr(node, ir_attr_string("direction", dir ? dir : "forward"));
    /* Y [T, D, B, H] -> [T, B, D, H] -> [T, B, D*H]; states [D, B, H] ->
     * [B, D, H] -> [B, D*H] */
    int64_t p4[4] = {0, 2, 1, 3}, o3[3] = {0, 0, (int64_t)(d * h)}, o2[2] = {0, (int64_t)(d * h)};
    const char *t1 = cmr_tmp(r, "yt"), *t2 = cmr_tmp(r, "ht"), *t3 = cmr_tmp(r, "ct");
    if (rnn_node(r, "Transpose", y, t1, p4, 4, true) < 0 ||
        rnn_node(r, "Reshape", t1, cmr_out(op, 0), o3, 3, false) < 0 ||
        rnn_node(r, "Transpose", yh, t2, p3, 3, true) < 0 ||
        rnn_node(r, "Reshape", t2, cmr_out(op, 1), o2, 2, false) < 0 ||
        rnn_node(r, "Transpose", yc, t3, p3, 3, true) < 0 ||
        rnn_node(r, "Reshape", t3, cmr_out(op, 2), o2, 2, false) < 0)
        return -1;
    return 0;
}

static const CmRaiseRule rnn_raise[] = {
    {"lstm", raise_lstm},
};

CM_FAMILY(cm_family_rnn, "rnn", rnn_lower, rnn_raise);
