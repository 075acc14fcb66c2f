/*
 * value_info.c - drops value_info entries of values that are gone.
 *
 * When an earlier pass deletes the node that produced a value, the value
 * stays in the graph (defined nowhere, read by nothing) only because a
 * value_info entry still names it. Such an entry describes nothing the
 * graph computes: it goes, and with it the value. Entries of values that
 * are still produced, read, inputs or initializers stay as they are.
 */
#include "passes.h"

/* Drops g's value_info entries of values defined nowhere and read by
 * nothing; returns how many went. Not recursive: the pass manager visits
 * each scope. */
long opt_vi_drop_stale(IrGraph *g);

long opt_vi_drop_stale(IrGraph *g)
{
    long n = 0;
    for (size_t i = g->value_info.n; i-- > 0;) {
        IrValueInfo *vi = g->value_info.p[i];
        IrValue *v = vi->value;
        if (!v || v->kind != IR_VAL_UNDEF || v->n_uses || ir_value_is_graph_output(v))
            continue;
        ir_ptrlist_remove_at(&g->value_info, i);
        ir_valueinfo_free(vi);
        ir_value_drop_if_unused(v);
        n++;
    }
    return n;
}

static long opt_vi_run(OptCtx *c)
{
    return opt_vi_drop_stale(c->g);
}

const OptPass opt_pass_value_info = {
    "value_info", "drops value_info entries of values no node produces any more", true, 0,
    opt_vi_run,
};
