/*
 * infer/rnn.c - inference of the recurrent layers RNN, GRU and LSTM:
 * Y, Y_h (and LSTM's Y_c) from the sequence, batch, direction and
 * hidden sizes.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* RNN (gates 1), GRU (3), LSTM (4): X [seq, batch, input] (layout 1:
 * [batch, seq, input]) gives Y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]) and Y_h, Y_c [dirs, batch, hidden]
 * (layout 1: [batch, dirs, hidden]). */
static int inf_rnn_gates(InfCtx *c, int64_t gates)
{
    if (inf_need_rank(c, 0, 3, "X") < 0 || inf_need_rank(c, 1, 3, "W") < 0 ||
        inf_need_rank(c, 2, 3, "R") < 0)
        return -1;
    const IrShape *x = inf_in_shape(c, 0), *w = inf_in_shape(c, 1),
                  *r = inf_in_shape(c, 2);
    int64_t layout = c->since >= 14 ? inf_attr_i(c, "layout") : 0;
    if (layout != 0 && layout != 1)
        return inf_fail(c, "attribute", "layout %lld is not 0 or 1", (long long)layout);
    IrDim seq = {0}, batch = {0}, dirs = {0}, hidden = {0};
    if (x) {
        inf_dim_copy(&seq, &x->dims[layout ? 1 : 0]);
        inf_dim_copy(&batch, &x->dims[layout ? 0 : 1]);
    }
    const char *dir = inf_attr_s(c, "direction");
    if (dir && strcmp(dir, "bidirectional") == 0)
        inf_dim_set(&dirs, 2);
    else if (dir && (strcmp(dir, "forward") == 0 || strcmp(dir, "reverse") == 0 ||
                     strcmp(dir, "foward") == 0))
        inf_dim_set(&dirs, 1);
    else if (w)
        inf_dim_copy(&dirs, &w->dims[0]);
    int rc = 0;
    if (w && inf_dim_differ(&dirs, &w->dims[0]))
        rc = inf_fail(c, "shape", "W has %lld directions, direction '%s' needs "
                      "%lld", (long long)w->dims[0].value, dir ? dir : "?",
                      (long long)dirs.value);
    int64_t hs = inf_attr_i(c, "hidden_size");
    if (inf_attr_has(c, "hidden_size") && hs > 0)
        inf_dim_set(&hidden, hs);
    else if (r)
        inf_dim_copy(&hidden, &r->dims[2]);
    else if (w)
        inf_dim_div(&hidden, &w->dims[1], gates);
    IrShape *y = rc == 0 ? inf_out_shape(c, 0, 4) : NULL;
    if (y) {
        inf_dim_copy(&y->dims[layout ? 1 : 0], &seq);
        inf_dim_copy(&y->dims[layout ? 2 : 1], &dirs);
        inf_dim_copy(&y->dims[layout ? 0 : 2], &batch);
        inf_dim_copy(&y->dims[3], &hidden);
    }
    for (size_t o = 1; rc == 0 && o < 3 && o < inf_n_out(c); o++) {
        IrShape *h = inf_out_shape(c, o, 3);
        if (!h)
            continue;
        inf_dim_copy(&h->dims[layout ? 1 : 0], &dirs);
        inf_dim_copy(&h->dims[layout ? 0 : 1], &batch);
        inf_dim_copy(&h->dims[2], &hidden);
    }
    inf_dim_unknown(&seq);
    inf_dim_unknown(&batch);
    inf_dim_unknown(&dirs);
    inf_dim_unknown(&hidden);
    return rc;
}

/* RNN: one gate. */
static int inf_rnn(InfCtx *c) { return inf_rnn_gates(c, 1); }
/* GRU: three gates (z, r, h). */
static int inf_gru(InfCtx *c) { return inf_rnn_gates(c, 3); }
/* LSTM: four gates (i, o, f, c). */
static int inf_lstm(InfCtx *c) { return inf_rnn_gates(c, 4); }

const InfOp inf_ops_rnn[] = {
    {"", "RNN", inf_rnn},
    {"", "GRU", inf_gru},
    {"", "LSTM", inf_lstm},
    {NULL, NULL, NULL}};
