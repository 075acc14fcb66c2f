/*
 * unused_init.c - removes initializers nothing reads.
 *
 * Only initializers that are not graph inputs (an input's initializer is
 * a default a caller may override: part of the interface), in the main
 * graph and in subgraphs (where folding puts constants too; a read from a
 * nested subgraph is a use like any other), and not in the main graph
 * when the model has training_info, whose graphs name its initializers.
 */
#include "passes/passes.h"

static long opt_ui_run(OptCtx *c)
{
    if (c->fn || (c->main && c->m->n_training))
        return 0;
    return (long)ir_graph_drop_unused_inits(c->g);
}

const OptPass opt_pass_unused_init = {
    "unused_init", "removes initializers nothing reads (not graph inputs)", true, 0,
    opt_ui_run,
};
