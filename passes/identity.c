/*
 * identity.c - removes Identity nodes (and other copies of one input).
 *
 * y = Identity(x): every reader of y may read x instead, and the node
 * goes. When y is an output of its graph the node stays (the graph's
 * interface keeps its names); when renaming would clash with a value of
 * x's name in a subgraph that reads y, it stays too.
 */
#include <string.h>

#include "passes/passes.h"

static long opt_id_run(OptCtx *c)
{
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        if (strcmp(k->op_type, "Identity") != 0 || (k->domain && k->domain[0]) ||
            k->n_in != 1 || k->n_out != 1 || !k->in[0] || !k->out[0])
            continue;
        IrValue *x = k->in[0], *y = k->out[0];
        if (ir_value_is_graph_output(y))
            continue;
        IrError e;
        if (ir_value_replace_uses(y, x, &e) < 0)
            continue;
        ir_node_delete(k);
        n++;
    }
    return n;
}

const OptPass opt_pass_identity = {
    "identity", "removes Identity nodes, reading their input instead", true, 0, opt_id_run,
};
