/*
 * unused_init.c - removes initializers nothing reads.
 *
 * Only initializers that are not graph inputs (an input's initializer is
 * a default a caller may override: part of the interface), in the main
 * graph and in subgraphs (where folding puts constants too; a read from a
 * nested subgraph is a use like any other), and not in the main graph
 * when the model has training_info, whose graphs name its initializers.
 */
#include "passes.h"

static long opt_ui_run(OptCtx *c)
{
    if (c->fn || (c->main && c->m->n_training))
        return 0;
    long n = 0;
    IrGraph *g = c->g;
    for (size_t i = g->inits.n; i-- > 0;) {
        IrTensor *t = g->inits.p[i];
        IrValue *v = t->name ? ir_graph_find_local(g, t->name) : NULL;
        if (!v || v->kind != IR_VAL_INIT || v->n_uses || ir_value_is_graph_output(v))
            continue;
        ir_ptrlist_remove_at(&g->inits, i);
        v->init = NULL;
        v->kind = IR_VAL_UNDEF;
        ir_tensor_free(t);
        ir_value_drop_if_unused(v);
        n++;
    }
    return n;
}

const OptPass opt_pass_unused_init = {
    "unused_init", "removes initializers nothing reads (not graph inputs)", true, 0,
    opt_ui_run,
};
