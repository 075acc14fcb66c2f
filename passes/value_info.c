/*
 * value_info.c - drops value_info entries of values that are gone.
 *
 * When an earlier pass deletes the node that produced a value, the value
 * stays in the graph (defined nowhere, read by nothing) only because a
 * value_info entry still names it. Such an entry describes nothing the
 * graph computes: it goes, and with it the value. Entries of values that
 * are still produced, read, inputs or initializers stay as they are.
 */
#include "passes/passes.h"

static long opt_vi_run(OptCtx *c)
{
    return (long)ir_graph_drop_stale_info(c->g);
}

const OptPass opt_pass_value_info = {
    "value_info", "drops value_info entries of values no node produces any more", true, 0,
    opt_vi_run,
};
