/*
 * rnn.c - adapters of the recurrent layers (RNN, GRU, LSTM).
 *
 * A rewrite replaces c->n by a copy with other inputs or outputs
 * (ad_clone): the copy takes over c->n's attributes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- RNN, GRU, LSTM ------------------------------------------------- */

/* RNN/GRU/LSTM 1 -> 7 (GRU 3 -> 7): output_sequence is gone. It only said
 * whether the output Y is required (1) or may be left out (0); Y is the
 * full sequence whenever the node names it, in both versions. */
static int ad_rnn_drop_outseq(AdCtx *c)
{
    ad_drop_attr(c, "output_sequence");
    return 0;
}

/* The batch-major inputs of a layout-1 node (X, initial_h, initial_c) and
 * the output perms: inputs swap their first two axes; Y goes from
 * [seq, dirs, batch, hid] to [batch, seq, dirs, hid], Y_h / Y_c from
 * [dirs, batch, hid] to [batch, dirs, hid]. */
static const int64_t ad_rnn_swap01[3] = {1, 0, 2};
static const int64_t ad_rnn_y_perm[4] = {2, 0, 1, 3};

/* RNN/GRU/LSTM 14 -> 7: layout is new in 14 (default 0, the only layout of
 * 7). Layout 1 (batch first) is rewritten as layout 0 between Transposes,
 * which move values without changing them. */
static int ad_rnn_14_7(AdCtx *c)
{
    int64_t layout = ad_attr_i(c, "layout");
    if (layout == 0) {
        ad_drop_attr(c, "layout");
        return 0;
    }
    if (layout != 1)
        return ad_refuse(c, DG_ATTRIBUTE, "layout=%lld is not 0 or 1", (long long)layout);
    bool lstm = strcmp(c->n->op_type, "LSTM") == 0;
    size_t n_in = c->n->n_in, n_out = c->n->n_out;
    IrValue **in = mem_array(n_in ? n_in : 1, sizeof *in);
    bool keep[3] = {false, false, false};
    for (size_t i = 0; i < n_in; i++) {
        in[i] = c->n->in[i];
        bool batch_major = i == 0 || i == 5 || (lstm && i == 6);
        if (in[i] && batch_major && !(in[i] = ad_transpose(c, in[i], 3, ad_rnn_swap01))) {
            free(in);
            return -1;
        }
    }
    if (n_out > 3)
        n_out = 3;
    for (size_t i = 0; i < n_out; i++)
        keep[i] = c->n->out[i] != NULL;
    ad_drop_attr(c, "layout");
    IrNode *k = ad_clone(c, c->n->op_type, n_in, in, n_out, keep);
    free(in);
    if (!k || ad_infer(c, k) < 0)
        return -1;
    for (size_t i = 0; i < n_out; i++) {
        if (!keep[i])
            continue;
        IrValue *t = i == 0 ? ad_transpose(c, k->out[0], 4, ad_rnn_y_perm)
                            : ad_transpose(c, k->out[i], 3, ad_rnn_swap01);
        if (!t)
            return -1;
        ad_move_output(c, i, t->producer, 0);
    }
    ir_node_delete(c->n);
    return 0;
}

/* GRU 1 -> 3: 3 adds linear_before_reset (default 0, what 1 computes),
 * fixes the default direction's spelling ("foward" meant forward) and
 * makes Y_h optional. */
static int ad_gru_1_3(AdCtx *c)
{
    char db[32];
    const char *dir = ad_attr_s_or(c, "direction", "forward", db, sizeof db);
    if (strcmp(dir, "foward") == 0)
        ad_set_attr_s(c, c->n, "direction", "forward");
    return 0;
}

/* GRU 3 -> 1: linear_before_reset must be 0; the direction is written out
 * (1's default is spelled "foward"); Y_h, required in 1, is added as an
 * unused output when the node leaves it out. */
static int ad_gru_3_1(AdCtx *c)
{
    if (ad_drop_attr_if(c, "linear_before_reset", 0) < 0)
        return -1;
    if (!ad_attr(c, "direction"))
        ad_set_attr_s(c, c->n, "direction", "forward");
    if (c->n->n_out >= 2 && c->n->out[1])
        return 0;
    bool keep[2] = {c->n->n_out >= 1 && c->n->out[0], true};
    IrNode *k = ad_clone(c, c->n->op_type, c->n->n_in, c->n->in, 2, keep);
    if (!k || ad_infer(c, k) < 0)
        return -1;
    ad_move_output(c, 0, k, 0);
    ir_node_delete(c->n);
    return 0;
}

static const AdEntry ad_rnn[] = {
    /* recurrent layers */
    AD_UP("RNN", 1, 7, AD_ATTRS, ad_rnn_drop_outseq),
    AD_DOWN("RNN", 1, 7, AD_ATTRS, ad_nothing),
    AD_UP("RNN", 7, 14, AD_ATTRS, ad_nothing),
    AD_DOWN("RNN", 7, 14, AD_SEMANTIC, ad_rnn_14_7),
    AD_BOTH("RNN", 14, 22),
    AD_UP("LSTM", 1, 7, AD_ATTRS, ad_rnn_drop_outseq),
    AD_DOWN("LSTM", 1, 7, AD_ATTRS, ad_nothing),
    AD_UP("LSTM", 7, 14, AD_ATTRS, ad_nothing),
    AD_DOWN("LSTM", 7, 14, AD_SEMANTIC, ad_rnn_14_7),
    AD_BOTH("LSTM", 14, 22),
    AD_UP("GRU", 1, 3, AD_ATTRS, ad_gru_1_3),
    AD_DOWN("GRU", 1, 3, AD_ATTRS, ad_gru_3_1),
    AD_UP("GRU", 3, 7, AD_ATTRS, ad_rnn_drop_outseq),
    AD_DOWN("GRU", 3, 7, AD_ATTRS, ad_nothing),
    AD_UP("GRU", 7, 14, AD_ATTRS, ad_nothing),
    AD_DOWN("GRU", 7, 14, AD_SEMANTIC, ad_rnn_14_7),
    AD_BOTH("GRU", 14, 22),
};

const AdFamily ad_family_rnn = {"rnn", ad_rnn, sizeof ad_rnn / sizeof ad_rnn[0]};
