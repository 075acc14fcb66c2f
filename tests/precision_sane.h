/*
 * precision_sane.h - what every precision test result must be (prefix
 * ps_): valid, in topological order, and no Cast reading a Cast in any
 * graph (main graph, bodies, functions), but for a Cast whose `to` each
 * call of its function sets (ref_attr_name): its type is not ours to
 * choose. Shared by test_precision and test_precision_auto.
 */
#ifndef OC_PRECISION_SANE_H
#define OC_PRECISION_SANE_H

#include <string.h>

#include "ir/ir.h"
#include "driver/job.h"
#include "t.h"
#include "ir/topo.h"

static inline int ps_no_cast_pair(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    for (IrNode *n = g->first; n; n = n->next) {
        if (strcmp(n->op_type, "Cast") || !n->in[0] || !n->in[0]->producer)
            continue;
        const IrAttr *to = ir_node_attr(n->in[0]->producer, "to");
        if (to && to->ref_attr_name)
            continue;
        T_CHECK(strcmp(n->in[0]->producer->op_type, "Cast") != 0,
                "%s: Cast '%s' reads Cast '%s'", (const char *)arg, n->name,
                n->in[0]->producer->name);
    }
    return 0;
}

static inline void ps_assert_sane(IrModel *m, const char *what)
{
    const char *rule;
    char msg[512];
    T_CHECK(job_validate(m, &rule, msg, sizeof msg, NULL) == 0, "%s: invalid: %s", what, msg);
    size_t moved = 99;
    IrError err;
    T_CHECK(topo_sort_model(m, &moved, &err) == 0 && moved == 0,
            "%s: not in topological order (%zu moved)", what, moved);
    ir_each_graph(m, IR_WALK_ALL, ps_no_cast_pair, (void *)what);
}

#endif
