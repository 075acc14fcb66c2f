/*
 * dead_code.c - removes nodes whose results nothing reads.
 *
 * A node is dead when none of its outputs is read by another node (here or
 * in a subgraph) or is an output of its graph. Removing one can make its
 * producers dead, so the graph is walked from the end. Every ONNX op is
 * free of side effects, so dropping an unread result changes nothing a
 * caller can see (a random op's draw is not observable once unread).
 */
#include "passes/passes.h"

/* Whether any output of k is read or is a graph output. */
static bool opt_dc_live(const IrNode *k)
{
    for (size_t i = 0; i < k->n_out; i++) {
        const IrValue *v = k->out[i];
        if (v && (v->n_uses || ir_value_is_graph_output(v)))
            return true;
    }
    return false;
}

static long opt_dc_run(OptCtx *c)
{
    long n = 0;
    IrNode *k = c->g->last;
    while (k) {
        IrNode *prev = k->prev;
        if (!opt_dc_live(k)) {
            ir_node_delete(k);
            n++;
        }
        k = prev;
    }
    return n;
}

const OptPass opt_pass_dead_code = {
    "dead_code", "removes nodes whose outputs nothing reads", true, 0, opt_dc_run,
};
