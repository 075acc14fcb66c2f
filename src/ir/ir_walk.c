/*
 * ir_walk.c - the one scope walker (prefix ir_): every graph of a model,
 * or of a graph, that a caller's flags select, in one stated order.
 * Modules used to write this loop themselves, each with its own idea of
 * "the model's graphs"; see ir.h "scope walking" for the contract.
 */
#include "ir/ir.h"

/* One walk's fixed parts. */
typedef struct IrWalk {
    unsigned flags;
    IrGraphFn fn;
    void *arg;
} IrWalk;

static int ir_walk_graph(const IrWalk *w, IrGraph *g, IrWalkAt at);

/* Walks the graphs held by n's attributes, in attribute order. */
static int ir_walk_node(const IrWalk *w, IrNode *n, const IrWalkAt *up)
{
    for (size_t a = 0; a < n->n_attr; a++) {
        IrAttr *at = n->attr[a];
        IrWalkAt here = {n, at, up->fn, up->training, up->depth + 1};
        int rc = at->g ? ir_walk_graph(w, at->g, here) : 0;
        for (size_t k = 0; rc == 0 && k < at->n_graphs; k++)
            if (at->graphs[k])
                rc = ir_walk_graph(w, at->graphs[k], here);
        if (rc)
            return rc;
    }
    return 0;
}

/* Visits g and, when asked, its subgraphs, in the order flags say. The
 * next node is read after a node's subgraphs are walked, so that fn may
 * rewrite those. */
static int ir_walk_graph(const IrWalk *w, IrGraph *g, IrWalkAt at)
{
    bool post = w->flags & IR_WALK_POST;
    int rc = post ? 0 : w->fn(g, &at, w->arg);
    if (rc == 0 && (w->flags & IR_WALK_SUBGRAPHS))
        for (IrNode *n = g->first; n && rc == 0; n = n->next)
            if (!n->dead)
                rc = ir_walk_node(w, n, &at);
    if (rc == 0 && post)
        rc = w->fn(g, &at, w->arg);
    return rc;
}

int ir_graph_each_subgraph(IrGraph *g, unsigned flags, IrGraphFn fn, void *arg)
{
    IrWalk w = {flags, fn, arg};
    IrWalkAt at = {0};
    if (!g)
        return 0;
    if (flags & IR_WALK_MAIN)
        return ir_walk_graph(&w, g, at);
    if (!(flags & IR_WALK_SUBGRAPHS))
        return 0;
    int rc = 0;
    for (IrNode *n = g->first; n && rc == 0; n = n->next)
        if (!n->dead)
            rc = ir_walk_node(&w, n, &at);
    return rc;
}

/* The training graphs, each TrainingInfo's initialization then algorithm. */
static int ir_walk_training(const IrWalk *w, IrModel *m)
{
    int rc = 0;
    for (size_t i = 0; i < m->n_training && rc == 0; i++) {
        IrTraining *t = &m->training[i];
        IrWalkAt at = {.training = t};
        if (t->initialization)
            rc = ir_walk_graph(w, t->initialization, at);
        if (rc == 0 && t->algorithm)
            rc = ir_walk_graph(w, t->algorithm, at);
    }
    return rc;
}

int ir_each_graph(IrModel *m, unsigned flags, IrGraphFn fn, void *arg)
{
    IrWalk w = {flags, fn, arg};
    int rc = 0;
    if ((flags & IR_WALK_MAIN) && m->graph)
        rc = ir_walk_graph(&w, m->graph, (IrWalkAt){0});
    if (rc == 0 && (flags & IR_WALK_TRAINING))
        rc = ir_walk_training(&w, m);
    for (size_t i = 0; rc == 0 && (flags & IR_WALK_FUNCTIONS) && i < m->n_functions; i++)
        if (m->functions[i] && m->functions[i]->body)
            rc = ir_walk_graph(&w, m->functions[i]->body,
                               (IrWalkAt){.fn = m->functions[i]});
    return rc;
}

/* ---- read-only walks ------------------------------------------------ */

/* A read-only walk runs the same walker: it edits nothing itself, so the
 * const it drops is never written through. */
typedef struct IrConstWalk {
    IrConstGraphFn fn;
    void *arg;
} IrConstWalk;

static int ir_walk_const_call(IrGraph *g, const IrWalkAt *at, void *arg)
{
    const IrConstWalk *cw = arg;
    return cw->fn(g, at, cw->arg);
}

int ir_each_graph_const(const IrModel *m, unsigned flags, IrConstGraphFn fn, void *arg)
{
    IrConstWalk cw = {fn, arg};
    return ir_each_graph((IrModel *)m, flags, ir_walk_const_call, &cw);
}

int ir_graph_each_subgraph_const(const IrGraph *g, unsigned flags, IrConstGraphFn fn,
                                 void *arg)
{
    IrConstWalk cw = {fn, arg};
    return ir_graph_each_subgraph((IrGraph *)g, flags, ir_walk_const_call, &cw);
}
