/*
 * if_const.c - an If whose condition is a constant is replaced by the
 * branch it always takes.
 *
 * The branch's nodes move before the If, into the If's graph, and its
 * initializers with them (where the graph may hold initializers); every
 * value they define gets a name new to the whole scope tree (a sibling
 * subgraph may use the same name, which would then shadow it). The If's
 * readers read what the branch returns. A branch whose nodes have
 * subgraphs of their own is left alone (their reads of the branch's values
 * would need renaming scope by scope), as is one with sparse
 * initializers. ONNX Runtime's basic level does the same (its constant
 * folding inlines such an If); exporters write them for shape cases that
 * static shapes decide (e.g. AffineGrid's 2-D/3-D test).
 */
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "passes/passes.h"
#include "passes/fuse_util.h"

/* A branch value and the value of the If's graph that replaces it. */
typedef struct OptIcMap {
    const IrValue *from;
    IrValue *to;
    UT_hash_handle hh;
} OptIcMap;

static void opt_ic_set(OptIcMap **map, const IrValue *from, IrValue *to)
{
    OptIcMap *e;
    HASH_FIND_PTR(*map, &from, e);
    if (!e) {
        e = mem_alloc(sizeof *e);
        e->from = from;
        HASH_ADD_PTR(*map, from, e);
    }
    e->to = to;
}

/* The value replacing branch value v: its mapping, else v itself (a value
 * of an enclosing graph, which the If's graph sees too). */
static IrValue *opt_ic_get(OptIcMap *map, IrValue *v)
{
    OptIcMap *e;
    HASH_FIND_PTR(map, &v, e);
    return e ? e->to : v;
}

static void opt_ic_free(OptIcMap **map)
{
    OptIcMap *e, *tmp;
    HASH_ITER(hh, *map, e, tmp) {
        HASH_DEL(*map, e);
        free(e);
    }
}

/* The branch k always takes, or NULL when its condition is not a known
 * constant or the branch cannot move (see the top of the file). */
static IrGraph *opt_ic_branch(const OptCtx *c, const IrNode *k)
{
    if (strcmp(k->op_type, "If") != 0 || ir_domain_norm(k->domain)[0] || k->n_in != 1 ||
        !k->in[0])
        return NULL;
    TkTensor *cond = opt_fz_const(k->in[0]);
    bool ok = cond && cond->numel == 1;
    bool taken = ok && tk_get_i(cond, 0) != 0;
    tk_free(cond);
    const IrAttr *a = ok ? ir_node_attr(k, taken ? "then_branch" : "else_branch") : NULL;
    IrGraph *g = a && !a->ref_attr_name ? a->g : NULL;
    if (!g || g->outputs.n != k->n_out || g->sparse_inits.n ||
        (g->inits.n && !opt_inits_ok(c)))
        return NULL;
    for (const IrNode *n = g->first; n; n = n->next)
        for (size_t i = 0; i < n->n_attr; i++)
            if (n->attr[i]->g || n->attr[i]->n_graphs)
                return NULL;
    return g;
}

/* Moves the branch's initializers to c->g under new names. */
static void opt_ic_inits(OptCtx *c, IrGraph *b, OptIcMap **map)
{
    while (b->inits.n) {
        IrTensor *t = b->inits.p[0];
        ir_ptrlist_remove_at(&b->inits, 0);
        IrValue *v = t->name ? ir_graph_find_local(b, t->name) : NULL;
        if (v && v->init == t) {
            v->init = NULL;
            v->kind = IR_VAL_UNDEF;
        }
        char *fresh = ir_graph_fresh_name(c->g, t->name ? t->name : "init");
        free(t->name);
        t->name = fresh;
        IrValue *nv = ir_graph_add_init(c->g, t);
        if (!nv)
            ir_tensor_free(t);    /* cannot happen: the name is new */
        else if (v)
            opt_ic_set(map, v, nv);
    }
}

/* Rebuilds branch node n before k in c->g; 0 or -1. */
static int opt_ic_node(OptCtx *c, IrNode *k, IrNode *n, OptIcMap **map)
{
    const char **in = mem_array(n->n_in + 1, sizeof *in);
    const char **out = mem_array(n->n_out + 1, sizeof *out);
    char **owned = mem_array(n->n_out + 1, sizeof *owned);
    for (size_t i = 0; i < n->n_in; i++)
        in[i] = n->in[i] ? opt_ic_get(*map, n->in[i])->name : "";
    for (size_t i = 0; i < n->n_out; i++) {
        owned[i] = n->out[i] ? ir_graph_fresh_name(c->g, n->out[i]->name) : NULL;
        if (owned[i])
            ir_graph_value(c->g, owned[i]);     /* reserved for this node */
        out[i] = owned[i] ? owned[i] : "";
    }
    IrError e;
    IrNode *kn = ir_node_new(c->g, k, n->op_type, n->domain, n->name, n->n_in, in, n->n_out,
                             out, &e);
    for (size_t i = 0; kn && i < n->n_out; i++)
        if (n->out[i])
            opt_ic_set(map, n->out[i], kn->out[i]);
    for (size_t i = 0; i < n->n_out; i++)
        free(owned[i]);
    free(owned);
    free(in);
    free(out);
    if (!kn)
        return ir_fail(c->err, "if_const: %s", e.msg);
    for (size_t i = 0; i < n->n_attr; i++)
        ir_node_set_attr(kn, n->attr[i]);
    n->n_attr = 0;
    kn->overload = n->overload;
    n->overload = NULL;
    kn->doc_string = n->doc_string;
    n->doc_string = NULL;
    return 0;
}

/* Makes k's output j the value v the branch returns: the moved node that
 * produces v takes the output over when `own` (v is a moved node's output
 * not returned already); else k's readers read v, or (a graph output, whose name must
 * stay) an Identity of v. 0 or -1. */
static int opt_ic_output(OptCtx *c, IrNode *k, size_t j, IrValue *v, bool own)
{
    IrValue *y = k->out[j];
    IrError e;
    if (!y)
        return 0;
    if (own && ir_value_replace_uses(v, y, &e) == 0) {
        ir_node_take_output(v->producer, v->producer_index, k, j);
        return 0;
    }
    if (!ir_value_is_graph_output(y) && ir_value_replace_uses(y, v, &e) == 0)
        return 0;
    const char *in[1] = {v->name}, *out[1] = {""};
    IrNode *id = ir_node_new(c->g, k, "Identity", NULL, k->name, 1, in, 1, out, &e);
    if (!id)
        return ir_fail(c->err, "if_const: %s", e.msg);
    ir_node_take_output(id, 0, k, j);
    return 0;
}

/* Whether branch output j returns the same value as an earlier one. */
static bool opt_ic_repeat(const IrGraph *b, size_t j)
{
    for (size_t i = 0; i < j; i++)
        if (((IrValueInfo *)b->outputs.p[i])->value == ((IrValueInfo *)b->outputs.p[j])->value)
            return true;
    return false;
}

static int opt_ic_if(OptCtx *c, IrNode *k)
{
    IrGraph *b = opt_ic_branch(c, k);
    if (!b)
        return 0;
    OptIcMap *map = NULL;
    int rc = 0;
    opt_ic_inits(c, b, &map);
    for (IrNode *n = b->first; n && rc == 0; n = n->next)
        rc = opt_ic_node(c, k, n, &map);
    for (size_t j = 0; j < k->n_out && rc == 0; j++) {
        IrValue *o = ((IrValueInfo *)b->outputs.p[j])->value;
        bool own = o->graph == b && o->kind == IR_VAL_NODE && !opt_ic_repeat(b, j);
        rc = opt_ic_output(c, k, j, opt_ic_get(map, o), own);
    }
    opt_ic_free(&map);
    if (rc < 0)
        return -1;
    ir_node_delete(k);
    return 1;
}

static long opt_ic_run(OptCtx *c)
{
    return opt_each_node(c, opt_ic_if);
}

const OptPass opt_pass_if_const = {
    "if_const", "replaces an If whose condition is a constant by the branch it takes", true,
    0, opt_ic_run,
};
