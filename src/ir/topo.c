/*
 * topo.c - stable topological sort of every scope of a model (prefix
 * topo_). See topo.h.
 *
 * Each scope is planned first and the node lists are relinked only once
 * every scope has an order, so that a cycle anywhere leaves the model
 * untouched. The order: nodes in file order, each preceded by those of
 * its producers not yet placed (a depth-first walk up the producers, in
 * file order). A graph in order stays as it is, and a node written after
 * its readers (the float16 converter's input Cast) is the only one that
 * moves; Kahn's algorithm taking the earliest ready node would also hoist
 * every node that does not depend on it (Constants, Shape of an
 * initializer) above it.
 */
#include "ir/topo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One scope's new order. */
typedef struct TopoPlan {
    IrGraph *g;
    size_t n;
    IrNode **order;   /* owned; only scopes whose order changes get a plan */
} TopoPlan;

typedef struct TopoPlans {
    size_t n, cap;
    TopoPlan *p;
    size_t moved;
} TopoPlans;

/* A node and its position in its graph's list, sorted by address so that
 * a use's node finds its position by binary search. */
typedef struct TopoPos {
    const IrNode *node;
    size_t pos;
} TopoPos;

/* One scope being planned: its nodes, their dependencies as edges
 * producer -> consumer (by position), and the walk's state. */
typedef struct TopoScope {
    IrGraph *g;
    size_t n;
    IrNode **nodes;      /* in file order */
    TopoPos *pos;        /* by address */
    size_t n_edges, cap_edges;
    size_t *from, *to;   /* in order of producer position */
    size_t *first;       /* CSR: producers of consumer i are
                            pred[first[i]..first[i+1]], in file order */
    size_t *pred;
} TopoScope;

static int topo_pos_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const TopoPos *)a)->node;
    uintptr_t y = (uintptr_t)((const TopoPos *)b)->node;
    return x < y ? -1 : x > y;
}

/* The position of node in s, or SIZE_MAX when it is not one of s's. */
static size_t topo_pos_of(const TopoScope *s, const IrNode *node)
{
    TopoPos key = {.node = node};
    const TopoPos *p = bsearch(&key, s->pos, s->n, sizeof *s->pos, topo_pos_cmp);
    return p ? p->pos : SIZE_MAX;
}

/* The node of g that holds a use (the using node itself when it sits in
 * g, else the node of g whose subgraph, at any depth, holds it), or NULL
 * for an output of g itself and anything not nested in g. */
static const IrNode *topo_holder(const IrGraph *g, const IrUse *u)
{
    const IrNode *node = u->node;
    const IrGraph *ug = node ? node->graph : u->graph;
    while (ug && ug != g) {
        node = ug->owner;
        ug = node ? node->graph : NULL;
    }
    return ug == g ? node : NULL;
}

static void topo_edge(TopoScope *s, size_t from, size_t to)
{
    if (s->n_edges == s->cap_edges) {
        s->cap_edges = s->cap_edges ? s->cap_edges * 2 : 64;
        s->from = mem_grow(s->from, s->cap_edges, sizeof *s->from);
        s->to = mem_grow(s->to, s->cap_edges, sizeof *s->to);
    }
    s->from[s->n_edges] = from;
    s->to[s->n_edges++] = to;
}

/* Every dependency of g's nodes on each other: one edge per use of a
 * node's output by a node of g or by a subgraph inside one. */
static void topo_edges(TopoScope *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const IrNode *p = s->nodes[i];
        for (size_t k = 0; k < p->n_out; k++) {
            const IrValue *v = p->out[k];
            for (size_t u = 0; v && u < v->n_uses; u++) {
                const IrNode *h = topo_holder(s->g, &v->uses[u]);
                size_t j = h && !h->dead ? topo_pos_of(s, h) : SIZE_MAX;
                if (j != SIZE_MAX)
                    topo_edge(s, i, j);
            }
        }
    }
}

/* The edges as lists of producers per consumer (CSR), each in file order
 * since the edges were made in producer order. */
static void topo_csr(TopoScope *s)
{
    s->first = mem_array(s->n + 2, sizeof *s->first);
    s->pred = mem_array(s->n_edges + 1, sizeof *s->pred);
    for (size_t e = 0; e < s->n_edges; e++)
        s->first[s->to[e] + 1]++;
    for (size_t i = 0; i < s->n; i++)
        s->first[i + 1] += s->first[i];
    size_t *fill = mem_array(s->n + 1, sizeof *fill);
    memcpy(fill, s->first, s->n * sizeof *fill);
    for (size_t e = 0; e < s->n_edges; e++)
        s->pred[fill[s->to[e]]++] = s->from[e];
    free(fill);
}

/* The walk: fills order with positions, each node after its producers.
 * Returns SIZE_MAX, or the position of a node on a cycle (met again while
 * the walk is still inside its producers). Iterative: a 100k-node chain
 * would overflow the C stack. */
static size_t topo_walk(const TopoScope *s, size_t *order)
{
    enum { FRESH = 0, OPEN = 1, DONE = 2 };
    unsigned char *state = mem_array(s->n + 1, 1);
    size_t *stack = mem_array(s->n + 1, sizeof *stack);
    size_t *cursor = mem_array(s->n + 1, sizeof *cursor);
    size_t placed = 0, depth = 0, cycle = SIZE_MAX;
    for (size_t i = 0; i < s->n && cycle == SIZE_MAX; i++) {
        if (state[i] != FRESH)
            continue;
        state[i] = OPEN;
        cursor[i] = s->first[i];
        stack[depth++] = i;
        while (depth && cycle == SIZE_MAX) {
            size_t v = stack[depth - 1];
            if (cursor[v] == s->first[v + 1]) {
                state[v] = DONE;
                order[placed++] = v;
                depth--;
                continue;
            }
            size_t p = s->pred[cursor[v]++];
            if (state[p] == OPEN) {
                cycle = p;
            } else if (state[p] == FRESH) {
                state[p] = OPEN;
                cursor[p] = s->first[p];
                stack[depth++] = p;
            }
        }
    }
    free(state);
    free(stack);
    free(cursor);
    return cycle;
}

/* The length of the longest increasing run (not necessarily contiguous)
 * of order: the nodes that kept their relative order. O(n log n). */
static size_t topo_kept(const size_t *order, size_t n)
{
    size_t *tail = mem_array(n + 1, sizeof *tail);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = 0, hi = len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (tail[mid] < order[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        tail[lo] = order[i];
        if (lo == len)
            len++;
    }
    free(tail);
    return len;
}

static void topo_scope_free(TopoScope *s)
{
    free(s->nodes);
    free(s->pos);
    free(s->from);
    free(s->to);
    free(s->first);
    free(s->pred);
}

/* Refuses a cycle, naming a node on it and its scope (label: how a
 * top-level scope is called; NULL: "graph 'NAME'"). */
static int topo_cycle_fail(const TopoScope *s, size_t at, const char *label,
                           IrError *err)
{
    const IrNode *n = s->nodes[at];
    char who[300], scope[200];
    if (n->name && n->name[0])
        snprintf(who, sizeof who, "'%.200s'", n->name);
    else
        snprintf(who, sizeof who, "%zu", at);
    if (label)
        snprintf(scope, sizeof scope, "%s", label);
    else if (s->g->name && s->g->name[0])
        snprintf(scope, sizeof scope, "graph '%.150s'", s->g->name);
    else
        snprintf(scope, sizeof scope, "%s", s->g->parent ? "a subgraph" : "the main graph");
    return ir_fail(err, "%s: node %s (%.60s) is on a cycle: an input it "
                   "reads depends on its own output", scope, who,
                   n->op_type ? n->op_type : "");
}

/* Records s's new order (positions in order) in ps, unless nothing moved. */
static void topo_plan_add(TopoPlans *ps, const TopoScope *s, const size_t *order)
{
    size_t kept = topo_kept(order, s->n);
    if (kept == s->n)
        return;
    IrNode **nodes = mem_array(s->n, sizeof *nodes);
    for (size_t i = 0; i < s->n; i++)
        nodes[i] = s->nodes[order[i]];
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 8;
        ps->p = mem_grow(ps->p, ps->cap, sizeof *ps->p);
    }
    ps->p[ps->n++] = (TopoPlan){s->g, s->n, nodes};
    ps->moved += s->n - kept;
}

/* Plans g's order into ps (not its subgraphs); -1 on a cycle. */
static int topo_plan_scope(IrGraph *g, const char *label, TopoPlans *ps, IrError *err)
{
    TopoScope s = {.g = g};
    for (IrNode *n = g->first; n; n = n->next)
        s.n++;
    if (!s.n)
        return 0;
    s.nodes = mem_array(s.n, sizeof *s.nodes);
    s.pos = mem_array(s.n, sizeof *s.pos);
    size_t i = 0;
    for (IrNode *n = g->first; n; n = n->next, i++) {
        s.nodes[i] = n;
        s.pos[i] = (TopoPos){n, i};
    }
    qsort(s.pos, s.n, sizeof *s.pos, topo_pos_cmp);
    topo_edges(&s);
    topo_csr(&s);
    size_t *order = mem_array(s.n, sizeof *order);
    size_t cycle = topo_walk(&s, order);
    if (cycle != SIZE_MAX) {
        int rc = topo_cycle_fail(&s, cycle, label, err);
        free(order);
        topo_scope_free(&s);
        return rc;
    }
    topo_plan_add(ps, &s, order);
    free(order);
    topo_scope_free(&s);
    return 0;
}

typedef struct TopoWalk {
    const IrModel *m; /* NULL when one graph is sorted */
    TopoPlans *ps;
    IrError *err;
} TopoWalk;

/* Plans g; a top graph of a model other than the main one is named in
 * messages. */
static int topo_plan_at(IrGraph *g, const IrWalkAt *at, void *arg)
{
    TopoWalk *w = arg;
    char label[200];
    const char *l = NULL;
    if (!at->node && at->training) {
        snprintf(label, sizeof label, "training graph %zu (%s)",
                 (size_t)(at->training - w->m->training),
                 g == at->training->initialization ? "initialization" : "algorithm");
        l = label;
    } else if (!at->node && at->fn) {
        snprintf(label, sizeof label, "function '%.150s'", at->fn->name ? at->fn->name : "");
        l = label;
    }
    return topo_plan_scope(g, l, w->ps, w->err) < 0 ? -1 : 0;
}

/* Relinks each planned scope's node list in its new order. */
static void topo_apply(TopoPlans *ps)
{
    for (size_t k = 0; k < ps->n; k++) {
        TopoPlan *p = &ps->p[k];
        IrNode *prev = NULL;
        for (size_t i = 0; i < p->n; i++) {
            IrNode *n = p->order[i];
            n->prev = prev;
            if (prev)
                prev->next = n;
            else
                p->g->first = n;
            prev = n;
        }
        prev->next = NULL;
        p->g->last = prev;
    }
}

static void topo_plans_free(TopoPlans *ps)
{
    for (size_t k = 0; k < ps->n; k++)
        free(ps->p[k].order);
    free(ps->p);
}

/* Applies ps when rc is 0; frees it either way. */
static int topo_finish(TopoPlans *ps, int rc, size_t *moved)
{
    if (rc == 0)
        topo_apply(ps);
    if (moved)
        *moved = rc == 0 ? ps->moved : 0;
    topo_plans_free(ps);
    return rc;
}

int topo_sort_graph(IrGraph *g, size_t *moved, IrError *err)
{
    TopoPlans ps = {0};
    TopoWalk w = {NULL, &ps, err};
    int rc = ir_graph_each_subgraph(g, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, topo_plan_at, &w);
    return topo_finish(&ps, rc, moved);
}

int topo_sort_model(IrModel *m, size_t *moved, IrError *err)
{
    TopoPlans ps = {0};
    TopoWalk w = {m, &ps, err};
    int rc = ir_each_graph(m, IR_WALK_ALL, topo_plan_at, &w);
    return topo_finish(&ps, rc, moved);
}
