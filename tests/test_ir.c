/*
 * test_ir.c - unit tests of the mutable IR (src/ir/ir.h) and of a save/load
 * round trip of a small model built through it.
 *
 * Every check compares real values (pointers, counts, names, bytes), so a
 * wrong answer from the IR fails the test instead of merely running.
 * Values are re-fetched by name after an edit that may free them, so that a
 * dropped value shows up as a failed check rather than a use after free.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "io/load.h"
#include "io/save.h"
#include "t.h"

/* AttributeProto.AttributeType codes used here. */
enum { AT_FLOAT = 1, AT_INT = 2, AT_STRING = 3, AT_GRAPH = 5, AT_INTS = 7 };

#define MAX_NAMES 8

/* Stops the whole program: used where a NULL would only lead to a crash in
 * the checks that follow. Counts as one failure. */
static void need(int ok, const char *what)
{
    if (ok)
        return;
    fprintf(stderr, "FATAL: %s\n", what);
    t_failed++;
    exit(t_done("test_ir"));
}

/* Splits a comma-separated list of names into `names` (empty entries stay
 * empty: they are left-out optional inputs). "" gives zero names. */
static size_t split_names(const char *csv, char names[][32],
                          const char **ptrs)
{
    size_t n = 0, len = 0;
    if (!csv || !*csv)
        return 0;
    for (const char *p = csv;; p++) {
        if (*p == ',' || *p == '\0') {
            need(n < MAX_NAMES, "too many names in a test node");
            names[n][len] = '\0';
            ptrs[n] = names[n];
            n++;
            len = 0;
            if (*p == '\0')
                break;
        } else if (len < 31) {
            names[n][len++] = *p;
        }
    }
    return n;
}

/* A node of op `op` named `name` with inputs/outputs given as comma lists;
 * appended (before == NULL) or inserted before `before`. Fatal on failure. */
static IrNode *mk(IrGraph *g, IrNode *before, const char *op,
                  const char *name, const char *ins, const char *outs)
{
    char in_buf[MAX_NAMES][32], out_buf[MAX_NAMES][32];
    const char *in[MAX_NAMES], *out[MAX_NAMES];
    size_t n_in = split_names(ins, in_buf, in);
    size_t n_out = split_names(outs, out_buf, out);
    IrError err = {{0}};
    IrNode *node = ir_node_new(g, before, op, "", name, n_in, in, n_out, out,
                               &err);
    if (!node)
        fprintf(stderr, "ir_node_new(%s): %s\n", op, err.msg);
    need(node != NULL, "ir_node_new failed");
    return node;
}

/* A float tensor type of the given shape (owned by the caller). */
static IrType *ftype(size_t rank, const int64_t *dims)
{
    return ir_type_tensor(IR_FLOAT, rank, dims);
}

/* A 1-D float tensor named `name` holding `n` values. */
static IrTensor *ftensor(const char *name, size_t n, const float *v)
{
    int64_t dim = (int64_t)n;
    return ir_tensor_new(name, IR_FLOAT, 1, &dim, v, n * sizeof(float));
}

/* A graph input named `name`, float [1,4]; returns its value. */
static IrValue *add_input(IrGraph *g, const char *name)
{
    static const int64_t dims[2] = {1, 4};
    IrValueInfo *vi = ir_graph_add_input(g, name, ftype(2, dims));
    need(vi && vi->value, "ir_graph_add_input returned no value");
    return vi->value;
}

/* Hangs `sub` on node n as a GRAPH attribute named `name`, so that freeing
 * n's graph frees it. The IR has no constructor for graph attributes, so
 * the attribute is built by hand; ir_node_set_attr must set sub->owner. */
static void attach_graph(IrNode *n, const char *name, IrGraph *sub)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->has_type = true;
    a->type = AT_GRAPH;
    a->g = sub;
    ir_node_set_attr(n, a);
    T_CHECK(sub->owner == n, "set_attr(%s) did not set the graph's owner",
            name);
}

/* Node names of g in list order, joined by ',' ("" for none). Also checks
 * that walking backwards from g->last gives the same nodes. */
static const char *order(const IrGraph *g)
{
    static char buf[256];
    size_t len = 0, count = 0;
    const IrNode *prev = NULL;
    buf[0] = '\0';
    for (const IrNode *n = g->first; n; n = n->next) {
        int w = snprintf(buf + len, sizeof buf - len, "%s%s",
                         count ? "," : "", n->name ? n->name : "?");
        if (w < 0 || (size_t)w >= sizeof buf - len)
            break;
        len += (size_t)w;
        count++;
        T_CHECK(n->prev == prev, "node %s: prev link broken", n->name);
        prev = n;
    }
    T_CHECK(g->last == prev, "graph->last is not the last node");
    T_CHECK(g->n_nodes == count, "n_nodes %zu but %zu linked", g->n_nodes,
            count);
    return buf;
}

/* True when v is used as input `index` of node `n`. */
static bool has_use(const IrValue *v, const IrNode *n, size_t index)
{
    for (size_t i = 0; i < v->n_uses; i++)
        if (v->uses[i].node == n && v->uses[i].index == index)
            return true;
    return false;
}

/* ---- building a graph ---------------------------------------------- */

static void test_inputs_and_inits(void)
{
    IrGraph *g = ir_graph_new(NULL);
    need(g != NULL, "ir_graph_new(NULL)");
    T_CHECK(g->parent == NULL, "top-level graph has a parent");

    static const int64_t dims[2] = {1, 4};
    IrValueInfo *vi = ir_graph_add_input(g, "x", ftype(2, dims));
    need(vi && vi->value, "add_input x");
    IrValue *x = vi->value;
    T_CHECK(strcmp(x->name, "x") == 0, "input named %s", x->name);
    T_CHECK(x->kind == IR_VAL_INPUT, "input kind %d", (int)x->kind);
    T_CHECK(x->graph == g, "input value in another graph");
    T_CHECK(g->inputs.n == 1 && g->inputs.p[0] == vi, "input list wrong");
    T_CHECK(vi->type && vi->type->kind == IR_TYPE_TENSOR &&
                vi->type->has_elem_type && vi->type->elem_type == IR_FLOAT,
            "input type not float tensor");
    T_CHECK(vi->type && vi->type->shape && vi->type->shape->rank == 2 &&
                vi->type->shape->dims[1].kind == IR_DIM_VALUE &&
                vi->type->shape->dims[1].value == 4,
            "input shape not [1,4]");

    static const float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    IrTensor *t = ftensor("w", 4, w);
    IrValue *wv = ir_graph_add_init(g, t);
    need(wv != NULL, "add_init w");
    T_CHECK(wv->kind == IR_VAL_INIT, "initializer kind %d", (int)wv->kind);
    T_CHECK(wv->init == t, "initializer value does not point at its tensor");
    T_CHECK(g->inits.n == 1 && g->inits.p[0] == t, "inits list wrong");
    T_CHECK(ir_graph_find_local(g, "w") == wv, "find_local(w)");
    T_CHECK(ir_graph_find_local(g, "x") == x, "find_local(x)");
    T_CHECK(ir_graph_find_local(g, "nothere") == NULL, "find_local(nothere)");

    /* An initializer that is also a graph input stays an input (IR < 4
     * style, or an overridable default). */
    IrValue *b = add_input(g, "b");
    IrValue *bi = ir_graph_add_init(g, ftensor("b", 4, w));
    T_CHECK(bi == b, "initializer of an input made a second value");
    T_CHECK(b->kind == IR_VAL_INPUT && b->init != NULL,
            "input with initializer: kind %d init %p", (int)b->kind,
            (void *)b->init);

    /* ir_graph_value creates an undefined value once, then finds it. */
    IrValue *u = ir_graph_value(g, "later");
    T_CHECK(u && u->kind == IR_VAL_UNDEF && u->producer == NULL,
            "ir_graph_value did not create an undefined value");
    T_CHECK(ir_graph_value(g, "later") == u, "ir_graph_value made a twin");
    ir_graph_free(g);
}

static void test_nodes_and_outputs(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    static const float w[4] = {0.5f, -1.0f, 2.0f, 0.0f};
    IrValue *wv = ir_graph_add_init(g, ftensor("w", 4, w));

    IrNode *mul = mk(g, NULL, "Mul", "mul", "x,w", "y");
    T_CHECK(mul->graph == g, "node graph");
    T_CHECK(strcmp(mul->op_type, "Mul") == 0, "op_type %s", mul->op_type);
    T_CHECK(mul->n_in == 2 && mul->in[0] == x && mul->in[1] == wv,
            "Mul inputs are not x, w");
    T_CHECK(mul->n_out == 1 && mul->out[0] &&
                strcmp(mul->out[0]->name, "y") == 0,
            "Mul output is not y");
    IrValue *y = ir_graph_find_local(g, "y");
    T_CHECK(y == mul->out[0], "find_local(y) is not Mul's output");
    T_CHECK(y && y->kind == IR_VAL_NODE && y->producer == mul &&
                y->producer_index == 0,
            "y's producer is not Mul:0");
    T_CHECK(x->n_uses == 1 && has_use(x, mul, 0), "x uses wrong");
    T_CHECK(wv->n_uses == 1 && has_use(wv, mul, 1), "w uses wrong");
    T_CHECK(g->first == mul && g->last == mul && g->n_nodes == 1,
            "node list after one node");

    /* Second output of a multi-output node knows its index. */
    IrNode *topk = mk(g, NULL, "TopK", "topk", "y,k", "vals,idx");
    IrValue *idx = ir_graph_find_local(g, "idx");
    T_CHECK(idx && idx->producer == topk && idx->producer_index == 1,
            "TopK's second output: producer index wrong");
    IrValue *k = ir_graph_find_local(g, "k");
    T_CHECK(k && k->kind == IR_VAL_UNDEF && has_use(k, topk, 1),
            "an input named before it is defined is not an undefined value");

    /* Empty names are left-out optional inputs and outputs. */
    IrNode *clip = mk(g, NULL, "Clip", "clip", "y,,w", "c");
    T_CHECK(clip->n_in == 3 && clip->in[0] == y && clip->in[1] == NULL &&
                clip->in[2] == wv,
            "left-out optional input not NULL");
    IrNode *drop = mk(g, NULL, "Dropout", "drop", "c", "d,");
    T_CHECK(drop->n_out == 2 && drop->out[0] && drop->out[1] == NULL,
            "left-out optional output not NULL");
    T_CHECK(ir_graph_find_local(g, "") == NULL, "a value named \"\" exists");

    /* A second producer of y is refused and leaves the graph alone. */
    IrError err = {{0}};
    const char *in[1] = {"x"}, *out[1] = {"y"};
    IrNode *dup = ir_node_new(g, NULL, "Relu", "", "dup", 1, in, 1, out, &err);
    T_CHECK(dup == NULL, "a second producer of y was accepted");
    T_CHECK(err.msg[0] != '\0', "refusal without a message");
    T_CHECK(g->n_nodes == 4 && y->producer == mul && x->n_uses == 1,
            "refused node changed the graph (n_nodes %zu, x uses %zu)",
            g->n_nodes, x->n_uses);

    /* Graph outputs. */
    static const int64_t dims[2] = {1, 4};
    IrValueInfo *ov = ir_graph_add_output(g, y, ftype(2, dims));
    T_CHECK(ov && ov->value == y && g->outputs.n == 1 &&
                g->outputs.p[0] == ov,
            "output list wrong");
    T_CHECK(ir_value_is_graph_output(y), "y not a graph output");
    T_CHECK(!ir_value_is_graph_output(x), "x is a graph output");
    T_CHECK(strcmp(order(g), "mul,topk,clip,drop") == 0, "order %s",
            order(g));
    ir_graph_free(g);
}

/* ---- scopes -------------------------------------------------------- */

static void test_lookup_scopes(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    IrValue *s_outer = add_input(g, "s");
    add_input(g, "cond");
    IrNode *owner = mk(g, NULL, "If", "if", "cond", "r");

    IrGraph *sub = ir_graph_new(g);
    need(sub != NULL, "ir_graph_new(parent)");
    T_CHECK(sub->parent == g, "subgraph parent");
    attach_graph(owner, "then_branch", sub);

    /* An outer name resolves from the subgraph but is not local there. */
    T_CHECK(ir_graph_find_local(sub, "x") == NULL, "x local in subgraph");
    T_CHECK(ir_graph_lookup(sub, "x") == x, "lookup(sub, x) not outer x");
    T_CHECK(ir_graph_lookup(sub, "nope") == NULL, "lookup of unknown name");

    /* A local name shadows the outer one inside, not outside. */
    IrValue *s_inner = add_input(sub, "s");
    T_CHECK(s_inner != s_outer, "subgraph input s is the outer value");
    T_CHECK(s_inner->graph == sub, "inner s not in subgraph");
    T_CHECK(ir_graph_lookup(sub, "s") == s_inner, "inner s not shadowing");
    T_CHECK(ir_graph_lookup(g, "s") == s_outer, "outer s lost");

    /* A node of the subgraph reading x reads the outer value itself. */
    IrNode *sn = mk(sub, NULL, "Identity", "sid", "x", "sx");
    T_CHECK(sn->in[0] == x, "subgraph node input is not outer x");
    T_CHECK(has_use(x, sn, 0), "outer x does not list the subgraph use");
    T_CHECK(sn->out[0] && sn->out[0]->graph == sub, "sx not in subgraph");
    T_CHECK(ir_graph_find_local(g, "sx") == NULL, "sx leaked to parent");
    ir_graph_add_output(sub, sn->out[0], NULL);

    /* Two levels down, names resolve through both scopes. */
    IrGraph *sub2 = ir_graph_new(sub);
    attach_graph(sn, "body", sub2);
    T_CHECK(ir_graph_lookup(sub2, "x") == x, "lookup two levels up");
    T_CHECK(ir_graph_lookup(sub2, "s") == s_inner, "nearest scope wins");
    T_CHECK(ir_graph_lookup(sub2, "sx") == sn->out[0], "lookup one up");
    T_CHECK(ir_graph_count_subgraphs(g) == 2, "count_subgraphs %zu",
            ir_graph_count_subgraphs(g));
    ir_graph_free(g);
}

/* ---- producers and uses under edits ---------------------------------- */

static void test_uses_bookkeeping(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    IrNode *a = mk(g, NULL, "Relu", "A", "x", "a");
    IrNode *c = mk(g, NULL, "Neg", "C", "a", "c");
    IrValue *av = a->out[0];

    /* Insert B before C. */
    IrNode *b = mk(g, c, "Abs", "B", "x", "b");
    IrValue *bv = b->out[0];
    T_CHECK(strcmp(order(g), "A,B,C") == 0, "order after insert: %s",
            order(g));
    T_CHECK(bv && bv->kind == IR_VAL_NODE && bv->producer == b &&
                bv->producer_index == 0,
            "inserted node's output has the wrong producer");
    T_CHECK(x->n_uses == 2 && has_use(x, a, 0) && has_use(x, b, 0),
            "x uses after insert: %zu", x->n_uses);

    /* Inserting before the first node makes it the head. */
    IrNode *z = mk(g, a, "Identity", "Z", "x", "zz");
    T_CHECK(g->first == z && strcmp(order(g), "Z,A,B,C") == 0,
            "insert before head: %s", order(g));

    /* Rewire C from a to b. */
    ir_node_set_input(c, 0, bv);
    T_CHECK(c->in[0] == bv, "set_input did not rewire");
    T_CHECK(av->n_uses == 0, "a still used %zu times", av->n_uses);
    T_CHECK(bv->n_uses == 1 && has_use(bv, c, 0), "b uses after set_input");

    /* Append a as C's second input. */
    ir_node_add_input(c, av);
    T_CHECK(c->n_in == 2 && c->in[1] == av, "add_input did not append");
    T_CHECK(av->n_uses == 1 && has_use(av, c, 1), "a use index after add");

    /* The same value twice: removing one use keeps the other. */
    IrNode *add = mk(g, NULL, "Add", "D", "x,x", "d");
    /* x is read by Z, A, B and twice by D. */
    T_CHECK(x->n_uses == 5 && has_use(x, add, 0) && has_use(x, add, 1),
            "x read twice by one node: %zu uses", x->n_uses);
    ir_node_set_input(add, 1, bv);
    T_CHECK(x->n_uses == 4 && has_use(x, add, 0) && !has_use(x, add, 1),
            "set_input removed the wrong use of x");
    T_CHECK(bv->n_uses == 2 && has_use(bv, add, 1), "b uses after rewire");

    /* Leaving an input out removes its use. */
    ir_node_set_input(add, 1, NULL);
    T_CHECK(add->in[1] == NULL && bv->n_uses == 1 && !has_use(bv, add, 1),
            "set_input(NULL) kept a use");
    ir_graph_free(g);
}

/* ---- rename and replace -------------------------------------------- */

static void test_rename(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    static const float w[4] = {1, 2, 3, 4};
    IrValue *wv = ir_graph_add_init(g, ftensor("w", 4, w));
    IrNode *mul = mk(g, NULL, "Mul", "mul", "x,w", "y");
    IrError err = {{0}};

    T_CHECK(ir_value_rename(wv, "weight", &err) == 0, "rename w: %s",
            err.msg);
    T_CHECK(strcmp(wv->name, "weight") == 0, "value name %s", wv->name);
    T_CHECK(ir_graph_find_local(g, "w") == NULL, "old name still found");
    T_CHECK(ir_graph_find_local(g, "weight") == wv, "new name not found");
    T_CHECK(wv->init && strcmp(wv->init->name, "weight") == 0,
            "initializer tensor not renamed");
    T_CHECK(strcmp(((IrTensor *)g->inits.p[0])->name, "weight") == 0,
            "inits list tensor not renamed");
    T_CHECK(mul->in[1] == wv && wv->n_uses == 1, "rename broke the use");

    /* A taken name is refused and nothing changes. */
    memset(&err, 0, sizeof err);
    T_CHECK(ir_value_rename(wv, "x", &err) == -1, "rename onto x accepted");
    T_CHECK(err.msg[0] != '\0', "refused rename without a message");
    T_CHECK(strcmp(wv->name, "weight") == 0, "refused rename changed name");
    T_CHECK(ir_graph_find_local(g, "x") == x &&
                ir_graph_find_local(g, "weight") == wv,
            "refused rename changed the index");

    /* A node output renamed keeps its producer. */
    IrValue *y = mul->out[0];
    T_CHECK(ir_value_rename(y, "y2", &err) == 0, "rename y: %s", err.msg);
    T_CHECK(ir_graph_find_local(g, "y2") == y && y->producer == mul &&
                mul->out[0] == y,
            "renamed output lost its producer");
    ir_graph_free(g);
}

static void test_replace_uses(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    IrValue *y = add_input(g, "y");
    add_input(g, "cond");
    IrNode *relu = mk(g, NULL, "Relu", "relu", "x", "r");
    IrNode *owner = mk(g, NULL, "If", "if", "cond", "o");
    IrGraph *sub = ir_graph_new(g);
    attach_graph(owner, "then_branch", sub);
    IrNode *sn = mk(sub, NULL, "Identity", "sid", "x", "sx");
    ir_graph_add_output(sub, sn->out[0], NULL);
    ir_graph_add_output(g, x, NULL); /* x is also the model's output */
    T_CHECK(x->n_uses == 2, "x uses before replace: %zu", x->n_uses);

    T_CHECK(ir_value_replace_uses(x, y, NULL) == 0, "replace_uses refused");
    T_CHECK(relu->in[0] == y, "main-graph use not replaced");
    T_CHECK(sn->in[0] == y, "subgraph use of outer x not replaced");
    T_CHECK(x->n_uses == 0, "x still has %zu uses", x->n_uses);
    T_CHECK(y->n_uses == 2 && has_use(y, relu, 0) && has_use(y, sn, 0),
            "y uses after replace: %zu", y->n_uses);
    T_CHECK(ir_value_is_graph_output(x) &&
                ((IrValueInfo *)g->outputs.p[0])->value == x,
            "graph output was rewired");
    T_CHECK(ir_graph_find_local(g, "x") == x, "x dropped while an output");
    ir_graph_free(g);
}

/* ---- subgraph edge cases -------------------------------------------- */

/* Replacing a graph attribute frees the old subgraph, drops the uses it
 * held on outer values and makes n the new subgraph's owner. */
static void test_graph_attr_replace(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    add_input(g, "cond");
    IrNode *owner = mk(g, NULL, "If", "if", "cond", "r");
    IrGraph *first = ir_graph_new(g);
    attach_graph(owner, "then_branch", first);
    mk(first, NULL, "Neg", "neg", "x", "n1");
    T_CHECK(x->n_uses == 1, "x uses with one subgraph: %zu", x->n_uses);

    IrGraph *second = ir_graph_new(g);
    IrNode *abs_node = mk(second, NULL, "Abs", "abs", "x", "n2");
    attach_graph(owner, "then_branch", second);
    T_CHECK(owner->n_attr == 1 && ir_node_attr(owner, "then_branch") &&
                ir_node_attr(owner, "then_branch")->g == second,
            "graph attribute not replaced");
    T_CHECK(x->n_uses == 1 && has_use(x, abs_node, 0),
            "x keeps %zu uses after its reader's subgraph was replaced",
            x->n_uses);
    T_CHECK(ir_graph_count_subgraphs(g) == 1, "subgraphs: %zu",
            ir_graph_count_subgraphs(g));
    ir_graph_free(g);
}

/* Renaming an outer value onto a name a subgraph defines would make the
 * subgraph's reads of it resolve to its own value once saved: either the
 * rename is refused or every reader still resolves the name to v. */
static void test_rename_shadowed(void)
{
    IrGraph *g = ir_graph_new(NULL);
    IrValue *x = add_input(g, "x");
    add_input(g, "cond");
    IrNode *owner = mk(g, NULL, "If", "if", "cond", "r");
    IrGraph *sub = ir_graph_new(g);
    attach_graph(owner, "then_branch", sub);
    mk(sub, NULL, "Neg", "neg", "cond", "t");
    IrNode *reader = mk(sub, NULL, "Add", "add", "x,t", "out");
    ir_graph_add_output(sub, reader->out[0], NULL);

    IrError err = {{0}};
    int rc = ir_value_rename(x, "t", &err);
    T_CHECK(rc != 0 || ir_graph_lookup(sub, x->name) == x,
            "rename of outer x to 't' accepted, but its reader in the "
            "subgraph now resolves 't' to the subgraph's own value");
    T_CHECK(reader->in[0] == x, "reader rewired by rename");
    ir_graph_free(g);
}

/* Deleting a node whose subgraph's subgraph reads an outer value, then the
 * producer of that value, then collecting, must not touch freed values
 * (AddressSanitizer reports it when it does). */
static void test_delete_nested_subgraph(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "in");
    add_input(g, "cond");
    IrNode *p = mk(g, NULL, "Relu", "P", "in", "x");
    IrNode *outer = mk(g, NULL, "If", "L", "cond", "r");
    IrGraph *sub = ir_graph_new(g);
    attach_graph(outer, "then_branch", sub);
    IrNode *inner = mk(sub, NULL, "If", "K", "cond", "r2");
    IrGraph *sub2 = ir_graph_new(sub);
    attach_graph(inner, "then_branch", sub2);
    IrNode *deep = mk(sub2, NULL, "Identity", "deep", "x", "y2");
    T_CHECK(deep->in[0] == p->out[0], "deep reader not wired to x");
    ir_graph_add_output(g, outer->out[0], NULL);

    ir_node_delete(outer);
    T_CHECK(p->out[0]->n_uses == 0, "x still used by a deleted subgraph");
    ir_node_delete(p);
    ir_graph_collect(g);
    T_CHECK(g->n_nodes == 0 && g->first == NULL, "nodes left: %zu",
            g->n_nodes);
    T_CHECK(ir_graph_find_local(g, "x") == NULL, "unused x kept");
    ir_graph_free(g);
}

/* A subgraph may return an outer value directly (an If branch passing x
 * through). That reference must keep x alive and visible as needed, or a
 * dead-code pass deletes x's producer and the branch dangles. */
static void test_subgraph_returns_outer_value(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "in");
    add_input(g, "cond");
    IrNode *p = mk(g, NULL, "Relu", "P", "in", "x");
    IrNode *owner = mk(g, NULL, "If", "if", "cond", "r");
    IrGraph *sub = ir_graph_new(g);
    attach_graph(owner, "then_branch", sub);
    IrValue *x = p->out[0];
    ir_graph_add_output(sub, x, NULL);
    ir_graph_add_output(g, owner->out[0], NULL);

    T_CHECK(x->n_uses > 0 || ir_value_is_graph_output(x),
            "x, returned by a subgraph, looks unused (0 uses, not an "
            "output): a dead-code pass would delete its producer");
    ir_node_delete(p);
    ir_graph_collect(g);
    IrValueInfo *vi = sub->outputs.p[0];
    T_CHECK(ir_graph_find_local(g, "x") == vi->value,
            "subgraph output points at a value dropped from the graph");
    ir_graph_free(g);
}

/* ---- deleting while walking ---------------------------------------- */

/* A -> B (unused) ; A -> C -> D -> E(C, D); E's output is the graph's. */
static IrGraph *delete_fixture(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "in");
    mk(g, NULL, "Relu", "A", "in", "a");
    mk(g, NULL, "Neg", "B", "a", "b");
    mk(g, NULL, "Abs", "C", "a", "c");
    mk(g, NULL, "Exp", "D", "c", "d");
    IrNode *e = mk(g, NULL, "Add", "E", "c,d", "e");
    ir_graph_add_output(g, e->out[0], NULL);
    return g;
}

static void test_delete_in_walk(void)
{
    IrGraph *g = delete_fixture();
    char seen[16] = {0};
    size_t n_seen = 0;
    bool b_dead_in_walk = false;

    IR_FOR_NODES(g, n) {
        if (n_seen < sizeof seen - 1)
            seen[n_seen++] = n->name[0];
        if (strcmp(n->name, "B") == 0) {
            ir_node_delete(n); /* the current node */
            b_dead_in_walk = n->dead;
        } else if (strcmp(n->name, "C") == 0) {
            need(n->next != NULL, "C has no next node");
            ir_node_delete(n->next); /* D, not yet visited */
        }
    }
    T_CHECK(strcmp(seen, "ABCE") == 0, "walk visited %s", seen);
    T_CHECK(b_dead_in_walk, "deleted node not marked dead");
    T_CHECK(g->dead.n == 2, "%zu dead nodes pending", g->dead.n);
    T_CHECK(strcmp(order(g), "A,C,E") == 0, "order after delete: %s",
            order(g));
    ir_graph_collect(g);
    T_CHECK(g->dead.n == 0, "collect left %zu dead nodes", g->dead.n);
    T_CHECK(strcmp(order(g), "A,C,E") == 0, "order after collect: %s",
            order(g));

    /* B's output had no reader: dropped. D's output is still read by E:
     * kept, but undefined. Inputs of the deleted nodes lost those uses. */
    T_CHECK(ir_graph_find_local(g, "b") == NULL, "unused output b kept");
    IrValue *d = ir_graph_find_local(g, "d");
    T_CHECK(d && d->kind == IR_VAL_UNDEF && d->producer == NULL,
            "d still has a producer after D was deleted");
    T_CHECK(d && d->n_uses == 1 && d->uses[0].node == g->last,
            "d lost its use by E");
    IrValue *a = ir_graph_find_local(g, "a");
    T_CHECK(a && a->n_uses == 1 && a->uses[0].node == g->first->next,
            "a still used by deleted B (%zu uses)", a ? a->n_uses : 0);
    IrValue *c = ir_graph_find_local(g, "c");
    T_CHECK(c && c->n_uses == 1, "c still used by deleted D");

    /* Deleting the node of a graph output keeps the value, unproduced. */
    ir_node_delete(g->last);
    ir_graph_collect(g);
    IrValue *e = ir_graph_find_local(g, "e");
    T_CHECK(e && e->kind == IR_VAL_UNDEF && e->producer == NULL,
            "graph output e lost or still produced");
    T_CHECK(e && ir_value_is_graph_output(e) &&
                ((IrValueInfo *)g->outputs.p[0])->value == e,
            "graph output list broken by delete");
    T_CHECK(strcmp(order(g), "A,C") == 0, "order: %s", order(g));
    ir_graph_free(g);
}

/* Deleting the current node and then the node after it in one step leaves
 * the walk standing on a node whose `next` is dead: the walk must skip it. */
static void test_delete_current_and_next(void)
{
    IrGraph *g = delete_fixture();
    char seen[16] = {0};
    size_t n_seen = 0;
    bool dead_visited = false;

    IR_FOR_NODES(g, n) {
        dead_visited = dead_visited || n->dead;
        if (n_seen < sizeof seen - 1)
            seen[n_seen++] = n->name[0];
        if (strcmp(n->name, "B") == 0) {
            IrNode *next = n->next;
            ir_node_delete(n);
            ir_node_delete(next); /* C */
        }
    }
    T_CHECK(strcmp(seen, "ABDE") == 0, "walk visited %s", seen);
    T_CHECK(!dead_visited, "walk visited a deleted node");
    ir_graph_collect(g);
    T_CHECK(strcmp(order(g), "A,D,E") == 0, "order: %s", order(g));
    IrValue *c = ir_graph_find_local(g, "c");
    T_CHECK(c && c->kind == IR_VAL_UNDEF && c->n_uses == 2,
            "c, still read by D and E, lost or produced");
    ir_graph_free(g);
}

/* A value_info entry must not be left pointing at a dropped value. */
static void test_delete_with_value_info(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "in");
    IrNode *a = mk(g, NULL, "Relu", "A", "in", "a");
    mk(g, NULL, "Neg", "B", "in", "b");
    ir_graph_add_value_info(g, a->out[0], NULL);
    ir_node_delete(a);
    ir_graph_collect(g);
    bool ok = true;
    for (size_t i = 0; i < g->value_info.n; i++) {
        IrValueInfo *v = g->value_info.p[i];
        ok = ok && ir_graph_find_local(g, v->value->name) == v->value;
    }
    T_CHECK(ok, "value_info points at a value no longer in the graph");
    ir_graph_free(g);
}

static void test_move_before(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "x");
    IrNode *a = mk(g, NULL, "Relu", "A", "x", "a");
    IrNode *b = mk(g, NULL, "Relu", "B", "x", "b");
    IrNode *c = mk(g, NULL, "Relu", "C", "x", "c");

    ir_node_move_before(c, a);
    T_CHECK(strcmp(order(g), "C,A,B") == 0, "move to head: %s", order(g));
    T_CHECK(g->first == c && c->prev == NULL, "head links");
    ir_node_move_before(c, NULL);
    T_CHECK(strcmp(order(g), "A,B,C") == 0, "move to end: %s", order(g));
    T_CHECK(g->last == c && c->next == NULL, "tail links");
    ir_node_move_before(a, c);
    T_CHECK(strcmp(order(g), "B,A,C") == 0, "move to middle: %s", order(g));
    T_CHECK(c->out[0]->producer == c && b->out[0]->producer == b,
            "move changed producers");
    ir_graph_free(g);
}

/* ---- attributes ---------------------------------------------------- */

static void test_attrs(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "x");
    IrNode *n = mk(g, NULL, "Softmax", "sm", "x", "y");

    IrAttr *a1 = ir_attr_int("axis", 1);
    T_CHECK(a1->has_type && a1->type == AT_INT && a1->has_i && a1->i == 1,
            "ir_attr_int fields");
    ir_node_set_attr(n, a1);
    T_CHECK(n->n_attr == 1 && ir_node_attr(n, "axis") == a1, "attr added");
    ir_node_set_attr(n, ir_attr_int("axis", -1));
    T_CHECK(n->n_attr == 1, "replace added a second attr (%zu)", n->n_attr);
    IrAttr *got = ir_node_attr(n, "axis");
    T_CHECK(got && got->i == -1, "replaced attr value");

    static const int64_t perm[3] = {0, 2, 1};
    ir_node_set_attr(n, ir_attr_ints("perm", 3, perm));
    got = ir_node_attr(n, "perm");
    T_CHECK(got && got->type == AT_INTS && got->n_ints == 3 &&
                got->ints[2] == 1,
            "ints attr");
    ir_node_set_attr(n, ir_attr_float("alpha", 0.25f));
    got = ir_node_attr(n, "alpha");
    T_CHECK(got && got->type == AT_FLOAT && got->has_f && got->f == 0.25f,
            "float attr");
    ir_node_set_attr(n, ir_attr_string("mode", "edge"));
    got = ir_node_attr(n, "mode");
    T_CHECK(got && got->type == AT_STRING && got->has_s &&
                got->s.len == 4 && memcmp(got->s.data, "edge", 4) == 0,
            "string attr");
    T_CHECK(ir_node_attr(n, "missing") == NULL, "missing attr found");

    T_CHECK(ir_node_remove_attr(n, "axis"), "remove existing attr");
    T_CHECK(ir_node_attr(n, "axis") == NULL && n->n_attr == 3,
            "attr still there after remove (%zu)", n->n_attr);
    T_CHECK(!ir_node_remove_attr(n, "axis"), "removed twice");
    T_CHECK(ir_node_attr(n, "perm") && ir_node_attr(n, "mode"),
            "remove took the wrong attr");
    ir_graph_free(g);
}

/* ---- fresh names --------------------------------------------------- */

/* True when `name` is used in g, sub or sub2. */
static bool name_used(IrGraph *g, IrGraph *sub, IrGraph *sub2,
                      const char *name)
{
    return ir_graph_find_local(g, name) || ir_graph_find_local(sub, name) ||
           ir_graph_find_local(sub2, name);
}

/* Asks sub for fresh names repeatedly, each time taking the answer in a
 * different one of the three related graphs, so whatever naming scheme the
 * IR uses, it must look up, here and down. */
static void test_fresh_name(void)
{
    IrGraph *g = ir_graph_new(NULL);
    add_input(g, "t");
    IrNode *owner = mk(g, NULL, "Loop", "loop", "t", "lo");
    IrGraph *sub = ir_graph_new(g);
    attach_graph(owner, "body", sub);
    IrNode *inner = mk(sub, NULL, "Loop", "inner", "t", "t_1");
    IrGraph *sub2 = ir_graph_new(sub);
    attach_graph(inner, "body", sub2);
    ir_graph_value(sub2, "t_0");
    ir_graph_value(sub2, "t0");

    char *names[6] = {0};
    IrGraph *where[3] = {g, sub, sub2};
    for (size_t i = 0; i < 6; i++) {
        names[i] = ir_graph_fresh_name(sub, "t");
        need(names[i] != NULL, "fresh_name returned NULL");
        T_CHECK(strcmp(names[i], "t") != 0, "fresh name is the taken base");
        T_CHECK(!name_used(g, sub, sub2, names[i]),
                "fresh name %s already used", names[i]);
        ir_graph_value(where[i % 3], names[i]);
    }
    for (size_t i = 0; i < 6; i++)
        free(names[i]);

    char *free_base = ir_graph_fresh_name(g, "zzz");
    T_CHECK(free_base && !name_used(g, sub, sub2, free_base),
            "fresh name from an unused base is used");
    free(free_base);
    ir_graph_free(g);
}

/* The same through the loader: a model whose Loop body defines "t" and
 * "t_0" is saved and read back, and the main graph's fresh name for "t"
 * still avoids both (the loader, not ir_node_set_attr, attached the body;
 * ir_graph_fresh_name walks below only where a graph attribute was
 * attached). A graph that never held one answers from its own names. */
static void test_fresh_name_loaded(void)
{
    IrModel *m = ir_model_new();
    need(m != NULL, "ir_model_new");
    m->graph = ir_graph_new(NULL);
    IrGraph *g = m->graph;
    add_input(g, "x");
    IrNode *owner = mk(g, NULL, "Loop", "loop", "x", "lo");
    IrGraph *sub = ir_graph_new(g);
    attach_graph(owner, "body", sub);
    mk(sub, NULL, "Relu", "r", "x", "t");
    mk(sub, NULL, "Relu", "r2", "t", "t_0");
    uint8_t *buf = NULL;
    size_t len = 0;
    IrError err;
    IrModel *back = NULL;
    need(save_model_buffer(m, &buf, &len, &err) == 0, err.msg);
    need(load_model_buffer(buf, len, NULL, "memory", NULL, &back, &err) == 0, err.msg);
    T_CHECK(back->graph->may_nest, "the loader did not mark the graph holding a body");
    char *name = ir_graph_fresh_name(back->graph, "t");
    T_CHECK(name && strcmp(name, "t") && strcmp(name, "t_0"), "fresh name %s is the body's",
            name ? name : "(null)");
    free(name);
    IrGraph *flat = ir_graph_new(NULL);
    add_input(flat, "t");
    name = ir_graph_fresh_name(flat, "t");
    T_CHECK(!flat->may_nest && name && !strcmp(name, "t_1"), "flat graph: %s",
            name ? name : "(null)");
    free(name);
    ir_graph_free(flat);
    free(buf);
    ir_model_free(back);
    ir_model_free(m);
}

/* ---- sizes --------------------------------------------------------- */

static void test_numel(void)
{
    static const int64_t dims[3] = {2, 3, 4};
    float data[24] = {0};
    IrTensor *t = ir_tensor_new("t", IR_FLOAT, 3, dims, data, sizeof data);
    need(t != NULL, "ir_tensor_new");
    uint64_t n = 0;
    T_CHECK(ir_tensor_numel(t, &n) && n == 24, "numel of [2,3,4]: %llu",
            (unsigned long long)n);
    T_CHECK(t->has_raw && t->raw.len == sizeof data && t->ndims == 3 &&
                t->dims[2] == 4 && t->data_type == IR_FLOAT,
            "ir_tensor_new fields");
    T_CHECK(ir_tensor_stored_bytes(t) == sizeof data, "stored bytes %llu",
            (unsigned long long)ir_tensor_stored_bytes(t));

    /* 2^32 * 2^32 * 2^32 does not fit in 64 bits. */
    t->dims[0] = t->dims[1] = t->dims[2] = INT64_C(1) << 32;
    T_CHECK(!ir_tensor_numel(t, &n), "2^96 elements accepted");
    t->dims[0] = INT64_MAX;
    t->dims[1] = 3;
    t->dims[2] = 1;
    T_CHECK(!ir_tensor_numel(t, &n), "INT64_MAX*3 elements accepted");
    /* -1 read as unsigned would not overflow here: only a sign check
     * refuses it. */
    t->dims[0] = 1;
    t->dims[1] = -1;
    t->dims[2] = 1;
    T_CHECK(!ir_tensor_numel(t, &n), "negative dim accepted");
    t->ndims = 0;
    T_CHECK(ir_tensor_numel(t, &n) && n == 1, "scalar numel %llu",
            (unsigned long long)n);
    ir_tensor_free(t);
}

static void test_size_math(void)
{
    size_t out = 0;
    T_CHECK(mem_mul_size(3, 5, &out) && out == 15, "3*5");
    T_CHECK(mem_mul_size(0, SIZE_MAX, &out) && out == 0, "0*SIZE_MAX");
    T_CHECK(!mem_mul_size(SIZE_MAX / 2 + 1, 2, &out), "mul overflow missed");
    T_CHECK(!mem_mul_size(SIZE_MAX, SIZE_MAX, &out), "max*max accepted");
    T_CHECK(mem_add_size(SIZE_MAX - 1, 1, &out) && out == SIZE_MAX, "add");
    T_CHECK(!mem_add_size(SIZE_MAX, 1, &out), "add overflow missed");
    T_CHECK(ir_dtype_bits(IR_FLOAT) == 32 && ir_dtype_bits(IR_INT64) == 64 &&
                ir_dtype_bits(IR_STRING) == 0,
            "dtype bits");
    T_CHECK(ir_dtype_name(IR_FLOAT) &&
                strcmp(ir_dtype_name(IR_FLOAT), "FLOAT") == 0 &&
                ir_dtype_name(9999) == NULL,
            "dtype names");
}

/* ---- model, opsets and a round trip through the wire format ---------- */

/* x[2,3] * w[3] -> Relu -> Transpose(perm 1,0) -> z[3,2], opset 13. */
static IrModel *roundtrip_model(void)
{
    IrModel *m = ir_model_new();
    need(m != NULL, "ir_model_new");
    m->has_ir_version = true;
    m->ir_version = 7;
    ir_model_set_opset(m, "", 13);
    m->producer_name = mem_strdup("test_ir");
    IrGraph *g = m->graph = ir_graph_new(NULL);
    g->name = mem_strdup("roundtrip");

    static const int64_t xd[2] = {2, 3}, zd[2] = {3, 2};
    ir_graph_add_input(g, "x", ftype(2, xd));
    static const float w[3] = {1.5f, -2.0f, 0.25f};
    ir_graph_add_init(g, ftensor("w", 3, w));
    mk(g, NULL, "Mul", "mul", "x,w", "y");
    mk(g, NULL, "Relu", "relu", "y", "r");
    IrNode *tr = mk(g, NULL, "Transpose", "transpose", "r", "z");
    static const int64_t perm[2] = {1, 0};
    ir_node_set_attr(tr, ir_attr_ints("perm", 2, perm));
    ir_graph_add_output(g, tr->out[0], ftype(2, zd));
    return m;
}

static void check_loaded(const IrModel *m)
{
    static const float w[3] = {1.5f, -2.0f, 0.25f};
    static const char *ops[3] = {"Mul", "Relu", "Transpose"};
    const IrGraph *g = m->graph;
    need(g != NULL, "loaded model has no graph");
    T_CHECK(m->has_ir_version && m->ir_version == 7, "ir_version");
    T_CHECK(ir_model_opset(m, "") == 13, "opset %lld",
            (long long)ir_model_opset(m, ""));
    T_CHECK(m->producer_name && strcmp(m->producer_name, "test_ir") == 0,
            "producer_name");
    T_CHECK(g->name && strcmp(g->name, "roundtrip") == 0, "graph name");
    T_CHECK(g->n_nodes == 3, "loaded %zu nodes", g->n_nodes);
    size_t i = 0;
    for (const IrNode *n = g->first; n && i < 3; n = n->next, i++)
        T_CHECK(strcmp(n->op_type, ops[i]) == 0, "node %zu is %s", i,
                n->op_type);
    T_CHECK(g->inputs.n == 1 &&
                strcmp(((IrValueInfo *)g->inputs.p[0])->value->name, "x") ==
                    0,
            "input names");
    IrValueInfo *in = g->inputs.n ? g->inputs.p[0] : NULL;
    T_CHECK(in && in->type && in->type->shape && in->type->shape->rank == 2 &&
                in->type->shape->dims[0].value == 2 &&
                in->type->shape->dims[1].value == 3,
            "input shape");
    T_CHECK(g->outputs.n == 1 &&
                strcmp(((IrValueInfo *)g->outputs.p[0])->value->name, "z") ==
                    0,
            "output names");
    const IrTensor *t = g->inits.n == 1 ? g->inits.p[0] : NULL;
    T_CHECK(t && strcmp(t->name, "w") == 0 && t->ndims == 1 &&
                t->dims[0] == 3 && t->data_type == IR_FLOAT,
            "initializer header");
    T_CHECK(t && t->has_raw && t->raw.len == sizeof w &&
                memcmp(t->raw.data, w, sizeof w) == 0,
            "initializer bytes changed");
    IrValue *wv = ir_graph_find_local(g, "w");
    T_CHECK(wv && wv->init == t && wv->n_uses == 1 &&
                wv->uses[0].node == g->first && wv->uses[0].index == 1,
            "loaded initializer value not wired to Mul");
    IrAttr *perm = g->last ? ir_node_attr(g->last, "perm") : NULL;
    T_CHECK(perm && perm->n_ints == 2 && perm->ints[0] == 1 &&
                perm->ints[1] == 0,
            "perm attribute");
}

static void test_roundtrip(void)
{
    IrModel *m = roundtrip_model();
    IrError err = {{0}};
    uint8_t *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;
    int rc = save_model_buffer(m, &buf, &len, &err);
    T_CHECK(rc == 0 && buf && len > 0, "save_model_buffer: %s", err.msg);
    need(rc == 0, "cannot continue without a saved buffer");

    IrModel *back = NULL;
    rc = load_model_buffer(buf, len, NULL, "roundtrip", NULL, &back, &err);
    T_CHECK(rc == 0 && back, "load_model_buffer: %s", err.msg);
    need(rc == 0 && back, "cannot continue without a loaded model");
    check_loaded(back);

    /* Saving what was loaded gives the same bytes: nothing lost or added. */
    rc = save_model_buffer(back, &buf2, &len2, &err);
    T_CHECK(rc == 0 && len2 == len && memcmp(buf, buf2, len) == 0,
            "second save differs (%zu vs %zu bytes)", len2, len);

    /* A truncated buffer is refused with a reason. */
    IrModel *bad = NULL;
    memset(&err, 0, sizeof err);
    rc = load_model_buffer(buf, len - 1, NULL, "truncated", NULL, &bad, &err);
    T_CHECK(rc == -1 && err.msg[0] != '\0', "truncated model accepted");
    if (rc == 0)
        ir_model_free(bad);

    T_CHECK(ir_model_opset(m, "com.example") == -1, "absent opset");
    ir_model_set_opset(m, "", 17);
    T_CHECK(ir_model_opset(m, "") == 17 && m->n_opsets == 1,
            "set_opset twice made %zu imports", m->n_opsets);
    free(buf);
    free(buf2);
    ir_model_free(back);
    ir_model_free(m);
}

int main(void)
{
    test_inputs_and_inits();
    test_nodes_and_outputs();
    test_lookup_scopes();
    test_uses_bookkeeping();
    test_rename();
    test_replace_uses();
    test_graph_attr_replace();
    test_rename_shadowed();
    test_delete_nested_subgraph();
    test_subgraph_returns_outer_value();
    test_delete_in_walk();
    test_delete_current_and_next();
    test_delete_with_value_info();
    test_move_before();
    test_attrs();
    test_fresh_name();
    test_fresh_name_loaded();
    test_numel();
    test_size_math();
    test_roundtrip();
    return t_done("test_ir");
}
