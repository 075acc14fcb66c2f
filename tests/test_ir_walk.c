/*
 * test_ir_walk.c - the scope walker (ir_each_graph, ir_graph_each_subgraph):
 * on a model built here, with If/Loop subgraphs nested three deep, a node
 * holding a GRAPHS list, two training entries and two functions (one with
 * a subgraph), every flag combination visits exactly the expected graphs
 * in the expected order, reports where each sits, and stops when asked.
 */
#include "ir/ir.h"
#include "t.h"

#include <stdlib.h>
#include <string.h>

/* A graph named `name` below parent. */
static IrGraph *tw_graph(IrGraph *parent, const char *name)
{
    IrGraph *g = ir_graph_new(parent);
    g->name = mem_strdup(name);
    return g;
}

/* Appends a node `op` named `name` to g; returns it. */
static IrNode *tw_node(IrGraph *g, const char *op, const char *name)
{
    IrError err;
    const char *out[1] = {name};
    IrNode *n = ir_node_new(g, NULL, op, "", name, 0, NULL, 1, out, &err);
    T_CHECK(n != NULL, "node %s: %s", name, err.msg);
    return n;
}

/* Gives n an attribute `attr` holding a new subgraph named `name`. */
static IrGraph *tw_sub(IrNode *n, const char *attr, const char *name)
{
    IrGraph *g = tw_graph(n->graph, name);
    ir_node_set_attr(n, ir_attr_graph(attr, g));
    return g;
}

/* main: If i (then: Loop l { body: If j { then: lb.t } }, else), Relu r,
 * Loop k (body), X x with a GRAPHS attribute (x.0, x.1); training 0:
 * t0.init, t0.algo (If: t0.algo.then); training 1: t1.algo only;
 * functions f0 (flat) and f1 (If: f1.then). */
static IrModel *tw_model(void)
{
    IrModel *m = ir_model_new();
    m->graph = tw_graph(NULL, "main");
    IrNode *i = tw_node(m->graph, "If", "i");
    IrGraph *then = tw_sub(i, "then_branch", "m.then");
    tw_sub(i, "else_branch", "m.else");
    IrNode *l = tw_node(then, "Loop", "l");
    IrGraph *lb = tw_sub(l, "body", "m.then.body");
    tw_sub(tw_node(lb, "If", "j"), "then_branch", "m.then.body.then");
    tw_node(m->graph, "Relu", "r");
    tw_sub(tw_node(m->graph, "Loop", "k"), "body", "m.loop");
    IrNode *x = tw_node(m->graph, "X", "x");
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup("gs");
    a->has_type = true;
    a->type = 10; /* GRAPHS */
    a->n_graphs = 2;
    a->graphs = mem_array(2, sizeof *a->graphs);
    a->graphs[0] = tw_graph(m->graph, "x.0");
    a->graphs[1] = tw_graph(m->graph, "x.1");
    ir_node_set_attr(x, a);

    m->n_training = 2;
    m->training = mem_array(2, sizeof *m->training);
    m->training[0].initialization = tw_graph(NULL, "t0.init");
    m->training[0].algorithm = tw_graph(NULL, "t0.algo");
    tw_sub(tw_node(m->training[0].algorithm, "If", "ti"), "then_branch", "t0.algo.then");
    m->training[1].algorithm = tw_graph(NULL, "t1.algo");

    m->n_functions = 2;
    m->functions = mem_array(2, sizeof *m->functions);
    for (int f = 0; f < 2; f++) {
        m->functions[f] = mem_alloc(sizeof **m->functions);
        m->functions[f]->name = mem_strdup(f ? "f1" : "f0");
        m->functions[f]->body = tw_graph(NULL, f ? "f1" : "f0");
        m->functions[f]->body->is_function = true;
    }
    tw_sub(tw_node(m->functions[1]->body, "If", "fi"), "then_branch", "f1.then");
    return m;
}

/* What a walk saw: the names in order, and where each sat. */
typedef struct TwSeen {
    char names[512];
    char where[1024];
    const char *stop_at; /* return 7 on the graph of this name */
} TwSeen;

static int tw_record(IrGraph *g, const IrWalkAt *at, void *arg)
{
    TwSeen *s = arg;
    char w[96];
    if (s->names[0])
        strcat(s->names, ",");
    strcat(s->names, g->name);
    snprintf(w, sizeof w, "%s:%u:%s:%s:%s:%s;", g->name, at->depth,
             at->node ? at->node->name : "-", at->attr ? at->attr->name : "-",
             at->fn ? at->fn->name : "-", at->training ? "T" : "-");
    strcat(s->where, w);
    return s->stop_at && !strcmp(g->name, s->stop_at) ? 7 : 0;
}

static int tw_record_const(const IrGraph *g, const IrWalkAt *at, void *arg)
{
    return tw_record((IrGraph *)g, at, arg);
}

/* The names ir_each_graph(m, flags) visits. */
static void tw_expect(IrModel *m, unsigned flags, const char *want)
{
    TwSeen s = {0};
    int rc = ir_each_graph(m, flags, tw_record, &s);
    T_CHECK(rc == 0 && !strcmp(s.names, want), "flags %#x: rc %d, visited\n  %s\nwanted\n  %s",
            flags, rc, s.names, want);
    TwSeen c = {0};
    ir_each_graph_const(m, flags, tw_record_const, &c);
    T_CHECK(!strcmp(c.names, s.names), "flags %#x: the const walk visited %s", flags,
            c.names);
}

static const char *const tw_main_pre =
    "main,m.then,m.then.body,m.then.body.then,m.else,m.loop,x.0,x.1";
static const char *const tw_main_post =
    "m.then.body.then,m.then.body,m.then,m.else,m.loop,x.0,x.1,main";

static void tw_flag_sets(IrModel *m)
{
    const unsigned M = IR_WALK_MAIN, S = IR_WALK_SUBGRAPHS, F = IR_WALK_FUNCTIONS,
                   T = IR_WALK_TRAINING, P = IR_WALK_POST;
    char all[512];
    tw_expect(m, 0, "");
    tw_expect(m, S, "");
    tw_expect(m, M, "main");
    tw_expect(m, F, "f0,f1");
    tw_expect(m, T, "t0.init,t0.algo,t1.algo");
    tw_expect(m, M | F | T, "main,t0.init,t0.algo,t1.algo,f0,f1");
    tw_expect(m, M | S, tw_main_pre);
    tw_expect(m, M | S | P, tw_main_post);
    tw_expect(m, M | P, "main");
    tw_expect(m, F | S, "f0,f1,f1.then");
    tw_expect(m, F | S | P, "f0,f1.then,f1");
    tw_expect(m, T | S, "t0.init,t0.algo,t0.algo.then,t1.algo");
    tw_expect(m, T | S | P, "t0.init,t0.algo.then,t0.algo,t1.algo");
    tw_expect(m, M | F | S, "main,m.then,m.then.body,m.then.body.then,m.else,m.loop,x.0,"
                            "x.1,f0,f1,f1.then");
    snprintf(all, sizeof all, "%s,t0.init,t0.algo,t0.algo.then,t1.algo,f0,f1,f1.then",
             tw_main_pre);
    tw_expect(m, IR_WALK_ALL, all);
    snprintf(all, sizeof all, "%s,t0.init,t0.algo.then,t0.algo,t1.algo,f0,f1.then,f1",
             tw_main_post);
    tw_expect(m, IR_WALK_ALL | P, all);
}

/* Where each graph sits: depth, holding node and attribute, function,
 * training entry. */
static void tw_where(IrModel *m)
{
    TwSeen s = {0};
    ir_each_graph(m, IR_WALK_ALL, tw_record, &s);
    const char *want =
        "main:0:-:-:-:-;m.then:1:i:then_branch:-:-;m.then.body:2:l:body:-:-;"
        "m.then.body.then:3:j:then_branch:-:-;m.else:1:i:else_branch:-:-;"
        "m.loop:1:k:body:-:-;x.0:1:x:gs:-:-;x.1:1:x:gs:-:-;t0.init:0:-:-:-:T;"
        "t0.algo:0:-:-:-:T;t0.algo.then:1:ti:then_branch:-:T;t1.algo:0:-:-:-:T;"
        "f0:0:-:-:f0:-;f1:0:-:-:f1:-;f1.then:1:fi:then_branch:f1:-;";
    T_CHECK(!strcmp(s.where, want), "where:\n  %s\nwanted\n  %s", s.where, want);
    T_CHECK(ir_each_graph(m, IR_WALK_TRAINING, tw_record, &(TwSeen){0}) == 0, "training");
    TwSeen t = {0};
    ir_each_graph(m, IR_WALK_TRAINING, tw_record, &t);
    T_CHECK(strstr(t.where, "t1.algo:0:-:-:-:T") != NULL, "t1.algo's entry: %s", t.where);
}

/* A graph walk starts at any graph; MAIN says whether it visits that one. */
static void tw_graph_walks(IrModel *m)
{
    IrGraph *then = m->graph->first->attr[0]->g;
    const unsigned M = IR_WALK_MAIN, S = IR_WALK_SUBGRAPHS, P = IR_WALK_POST;
    struct { unsigned flags; const char *want; } cases[] = {
        {M, "m.then"},
        {S, "m.then.body,m.then.body.then"},
        {M | S, "m.then,m.then.body,m.then.body.then"},
        {M | S | P, "m.then.body.then,m.then.body,m.then"},
        {S | P, "m.then.body.then,m.then.body"},
        {0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        TwSeen s = {0};
        int rc = ir_graph_each_subgraph(then, cases[i].flags, tw_record, &s);
        T_CHECK(rc == 0 && !strcmp(s.names, cases[i].want), "graph walk %#x: %s, wanted %s",
                cases[i].flags, s.names, cases[i].want);
        TwSeen c = {0};
        ir_graph_each_subgraph_const(then, cases[i].flags, tw_record_const, &c);
        T_CHECK(!strcmp(c.names, s.names), "const graph walk %#x: %s", cases[i].flags,
                c.names);
    }
    TwSeen s = {0};
    ir_graph_each_subgraph(then, S, tw_record, &s);
    T_CHECK(strstr(s.where, "m.then.body:1:l:body:") != NULL,
            "depth counts from the graph given: %s", s.where);
    T_CHECK(ir_graph_each_subgraph(NULL, IR_WALK_ALL, tw_record, &s) == 0, "NULL graph");
}

/* A nonzero return stops the walk at once and is what the walk returns. */
static void tw_stop(IrModel *m)
{
    struct { unsigned flags; const char *at, *seen; } cases[] = {
        {IR_WALK_ALL, "m.then.body", "main,m.then,m.then.body"},
        {IR_WALK_ALL | IR_WALK_POST, "m.then.body", "m.then.body.then,m.then.body"},
        {IR_WALK_ALL, "main", "main"},
        {IR_WALK_ALL, "t0.algo.then", NULL},
        {IR_WALK_ALL | IR_WALK_POST, "main", NULL},
        {IR_WALK_ALL, "f1", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        TwSeen s = {.stop_at = cases[i].at};
        int rc = ir_each_graph(m, cases[i].flags, tw_record, &s);
        size_t len = strlen(s.names), at = strlen(cases[i].at);
        T_CHECK(rc == 7, "stop at %s: returned %d", cases[i].at, rc);
        T_CHECK(len >= at && !strcmp(s.names + len - at, cases[i].at),
                "stop at %s: visited on to %s", cases[i].at, s.names);
        if (cases[i].seen)
            T_CHECK(!strcmp(s.names, cases[i].seen), "stop at %s: visited %s",
                    cases[i].at, s.names);
    }
    TwSeen s = {.stop_at = "m.then.body.then"};
    T_CHECK(ir_graph_each_subgraph(m->graph, IR_WALK_SUBGRAPHS, tw_record, &s) == 7 &&
            !strcmp(s.names, "m.then,m.then.body,m.then.body.then"),
            "graph walk stop: %s", s.names);
}

/* A POST walk may delete g's nodes, subgraphs included, and collect them. */
static int tw_drop_ifs(IrGraph *g, const IrWalkAt *at, void *arg)
{
    IR_FOR_NODES(g, n)
        if (!strcmp(n->op_type, "If"))
            ir_node_delete(n);
    ir_graph_collect(g);
    (*(int *)arg)++;
    return 0;
}

static void tw_edit(IrModel *m)
{
    int n = 0;
    T_CHECK(ir_each_graph(m, IR_WALK_ALL | IR_WALK_POST, tw_drop_ifs, &n) == 0, "edit walk");
    T_CHECK(n == 15, "edit walk visited %d graphs", n);
    tw_expect(m, IR_WALK_ALL, "main,m.loop,x.0,x.1,t0.init,t0.algo,t1.algo,f0,f1");
}

int main(void)
{
    IrModel *m = tw_model();
    tw_flag_sets(m);
    tw_where(m);
    tw_graph_walks(m);
    tw_stop(m);
    tw_edit(m);
    ir_model_free(m);
    return t_done("test_ir_walk");
}
