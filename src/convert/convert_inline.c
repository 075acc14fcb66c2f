/*
 * convert_inline.c - inlines model-local functions for an IR version that
 * predates them (prefix cvi_; declared in convert.h).
 *
 * Each call site gets its own copy of the body: a clone (ir/clone.h) of
 * the function with the call's attribute values in place of its
 * attribute_proto, so the copy is deep (tensors included). The copy's
 * nodes are then rebuilt in the calling graph before the call: formal
 * inputs become the call's inputs, formal outputs the call's outputs,
 * every other value a name new to the graph; attribute references take
 * the call's value (or the function's default, or disappear when neither
 * is given, as ONNX reads an absent attribute). The new nodes are walked
 * again, so calls inside a body are inlined too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert.h"
#include "ir/clone.h"
#include "ir/diag.h"
#include "uthash.h"

/* A body value's name in the calling graph. */
typedef struct CviName {
    char *from;            /* the key: the name in the body */
    char *to;              /* owned */
    bool fresh;            /* made by this inlining, its producer not yet
                              handed a call output */
    UT_hash_handle hh;
} CviName;

static void cvi_map_set(CviName **map, const char *from, const char *to, bool fresh)
{
    CviName *e;
    HASH_FIND_STR(*map, from, e);
    if (!e) {
        e = mem_alloc(sizeof *e);
        e->from = mem_strdup(from);
        HASH_ADD_KEYPTR(hh, *map, e->from, strlen(e->from), e);
    } else {
        free(e->to);
    }
    e->to = mem_strdup(to);
    e->fresh = fresh;
}

static CviName *cvi_map_get(CviName *map, const char *from)
{
    CviName *e;
    HASH_FIND_STR(map, from, e);
    return e;
}

static void cvi_map_free(CviName **map)
{
    CviName *e, *tmp;
    HASH_ITER(hh, *map, e, tmp) {
        HASH_DEL(*map, e);
        free(e->from);
        free(e->to);
        free(e);
    }
}

/* The attribute of the call (or the function's default) that `ref` names,
 * or NULL. */
static IrAttr *cvi_attr_value(const IrFunction *f, const IrNode *call, const char *ref)
{
    IrAttr *a = ir_node_attr(call, ref);
    if (a)
        return a;
    for (size_t i = 0; i < f->n_attr; i++)
        if (f->attr[i]->name && !strcmp(f->attr[i]->name, ref))
            return f->attr[i];
    return NULL;
}

/* Node n's label (diag.h) in buf. */
static const char *cvi_label(const IrNode *n, char *buf, size_t cap)
{
    DgDiag d = dg_none();
    dg_set_node(&d, n, NULL, 0);
    return dg_label(&d, buf, cap);
}

/* A deep copy of f holding, in place of the function's attribute list,
 * the values of its attribute references at this call in body order
 * (found[j]: whether reference j has one). NULL with err set. */
static IrFunction *cvi_copy(const IrFunction *f, const IrNode *call, bool **found,
                            IrError *err)
{
    IrPtrList vals = {0};
    size_t nref = 0;
    for (const IrNode *n = f->body->first; n; n = n->next)
        for (size_t i = 0; i < n->n_attr; i++)
            if (n->attr[i]->ref_attr_name) {
                IrAttr *v = cvi_attr_value(f, call, n->attr[i]->ref_attr_name);
                if (v && (v->g || v->n_graphs)) {
                    char lb[256];
                    free(vals.p);
                    ir_fail(err, "%s: cannot inline function '%s' "
                            "for an IR before 8: attribute '%s' passes a graph; "
                            "write IR 8 or newer", cvi_label(call, lb, sizeof lb),
                            f->name ? f->name : "", v->name);
                    return NULL;
                }
                *found = mem_grow(*found, nref + 1, sizeof **found);
                (*found)[nref++] = v != NULL;
                if (v)
                    ir_ptrlist_push(&vals, v);
            }
    /* a borrowed view: nothing here is freed but the array */
    IrFunction tf = *f;
    tf.n_attr_names = 0;
    tf.attr = (IrAttr **)vals.p;
    tf.n_attr = vals.n;
    IrFunction *cf = ir_function_clone(&tf);
    free(vals.p);
    return cf;
}

/* Puts the call's attribute values into the copy's references. */
static void cvi_bind_attrs(IrFunction *cf, const bool *found)
{
    size_t j = 0, v = 0;
    for (IrNode *n = cf->body->first; n; n = n->next)
        for (size_t i = 0; i < n->n_attr; i++) {
            IrAttr *a = n->attr[i];
            if (!a->ref_attr_name)
                continue;
            if (!found[j++]) {
                ir_node_remove_attr(n, a->name);
                i--;
                continue;
            }
            IrAttr *val = cf->attr[v];
            cf->attr[v++] = NULL;
            free(val->name);
            val->name = mem_strdup(a->name);
            n->attr[i] = val;
            if (val->g || val->n_graphs)
                n->graph->may_nest = true;
            ir_attr_free(a);
        }
}

/* A name new to g for body value `name` of the call. */
static char *cvi_fresh(IrGraph *g, const IrNode *call, const IrFunction *f,
                       const char *name)
{
    const char *who = call->name && call->name[0] ? call->name : f->name;
    size_t cap = strlen(who) + strlen(name) + 2;
    char *base = mem_alloc(cap);
    snprintf(base, cap, "%s/%s", who, name);
    char *fresh = ir_graph_fresh_name(g, base);
    free(base);
    ir_graph_value(g, fresh);   /* reserved until its node is built */
    return fresh;
}

/* Builds the copy of body node n before `call`. NULL with err set. */
static IrNode *cvi_node(IrGraph *g, IrNode *call, const IrFunction *f, IrNode *n,
                        CviName **map, IrError *err)
{
    const char **in = mem_array(n->n_in ? n->n_in : 1, sizeof *in);
    const char **out = mem_array(n->n_out ? n->n_out : 1, sizeof *out);
    char **owned = mem_array(n->n_out ? n->n_out : 1, sizeof *owned);
    for (size_t i = 0; i < n->n_in; i++) {
        CviName *e = n->in[i] ? cvi_map_get(*map, n->in[i]->name) : NULL;
        in[i] = e ? e->to : "";
    }
    for (size_t i = 0; i < n->n_out; i++) {
        owned[i] = n->out[i] ? cvi_fresh(g, call, f, n->out[i]->name) : NULL;
        out[i] = owned[i] ? owned[i] : "";
    }
    /* node names need not be unique: the call's name says where it came from */
    const char *who = call->name && call->name[0] ? call->name : f->name;
    size_t cap = strlen(who) + (n->name ? strlen(n->name) : 0) + 2;
    char *name = mem_alloc(cap);
    snprintf(name, cap, "%s/%s", who, n->name ? n->name : "");
    IrNode *k = ir_node_new(g, call, n->op_type, n->domain, name,
                            n->n_in, in, n->n_out, out, err);
    free(name);
    for (size_t i = 0; k && i < n->n_out; i++)
        if (owned[i])
            cvi_map_set(map, n->out[i]->name, owned[i], true);
    for (size_t i = 0; i < n->n_out; i++)
        free(owned[i]);
    free(owned);
    free(in);
    free(out);
    if (!k)
        return NULL;
    for (size_t i = 0; i < n->n_attr; i++)
        ir_node_set_attr(k, n->attr[i]);
    n->n_attr = 0;
    k->overload = n->overload;
    n->overload = NULL;
    k->doc_string = n->doc_string;
    n->doc_string = NULL;
    k->meta = n->meta;
    n->meta = (IrStrMap){0};
    return k;
}

/* Makes call output j the value the body's formal output `src` names:
 * the producing copy takes it over, or an Identity when the body returns
 * an input or a value already returned. */
static int cvi_output(IrGraph *g, IrNode *call, const IrFunction *f, size_t j,
                      const char *src, CviName **map, IrError *err)
{
    CviName *e = cvi_map_get(*map, src);
    IrValue *v = e ? ir_graph_lookup(g, e->to) : NULL;
    if (!v)
        return ir_fail(err, "function '%s': output '%s' is defined nowhere in its body",
                       f->name ? f->name : "", src);
    if (!e->fresh || v->kind != IR_VAL_NODE) {
        char *fresh = cvi_fresh(g, call, f, src);
        const char *in[1] = {v->name}, *out[1] = {fresh};
        IrNode *id = ir_node_new(g, call, "Identity", "", "", 1, in, 1, out, err);
        free(fresh);
        if (!id)
            return -1;
        v = id->out[0];
    }
    /* the copy's readers move to the call's output first: taking the
     * output then frees v, unused */
    IrValue *target = call->out[j];
    if (ir_value_replace_uses(v, target, err) < 0)
        return -1;
    ir_node_take_output(v->producer, v->producer_index, call, j);
    if (e->fresh) {
        free(e->to);
        e->to = mem_strdup(target->name);
        e->fresh = false;
    }
    return 0;
}

/* Whether some node of the body has a subgraph (not inlined: its names
 * would need renaming scope by scope). */
static const IrNode *cvi_subgraph_node(const IrFunction *f)
{
    for (const IrNode *n = f->body->first; n; n = n->next)
        for (size_t i = 0; i < n->n_attr; i++)
            if (n->attr[i]->g || n->attr[i]->n_graphs)
                return n;
    return NULL;
}

/* Adds the function's imports the model lacks (its nodes move there). */
static void cvi_imports(IrModel *m, const IrFunction *f)
{
    for (size_t i = 0; i < f->n_opsets; i++) {
        const char *d = f->opsets[i].domain ? f->opsets[i].domain : "";
        if (ir_model_opset(m, d) < 0 && f->opsets[i].has_version)
            ir_model_set_opset(m, d, f->opsets[i].version);
    }
}

/* Replaces call (of f, in g) by a copy of f's body. */
static int cvi_call(IrModel *m, IrGraph *g, IrNode *call, const IrFunction *f,
                    IrError *err)
{
    const IrNode *sub = cvi_subgraph_node(f);
    char lb[256], lb2[256];
    if (sub)
        return ir_fail(err, "%s: cannot inline function '%s' for an IR "
                       "before 8: its %s has a subgraph; write IR 8 or newer",
                       cvi_label(call, lb, sizeof lb), f->name ? f->name : "",
                       cvi_label(sub, lb2, sizeof lb2));
    bool *found = NULL;
    IrFunction *cf = cvi_copy(f, call, &found, err);
    if (!cf) {
        free(found);
        return -1;
    }
    cvi_bind_attrs(cf, found);
    free(found);
    cvi_imports(m, f);
    CviName *map = NULL;
    int rc = 0;
    for (size_t i = 0; i < cf->body->inputs.n; i++) {
        IrValueInfo *vi = cf->body->inputs.p[i];
        cvi_map_set(&map, vi->value->name,
                    i < call->n_in && call->in[i] ? call->in[i]->name : "", false);
    }
    for (IrNode *n = cf->body->first; n && rc == 0; n = n->next)
        if (!cvi_node(g, call, f, n, &map, err))
            rc = -1;
    for (size_t j = 0; rc == 0 && j < cf->body->outputs.n && j < call->n_out; j++) {
        IrValueInfo *vi = cf->body->outputs.p[j];
        if (call->out[j])
            rc = cvi_output(g, call, f, j, vi->value->name, &map, err);
    }
    cvi_map_free(&map);
    ir_function_free(cf);
    if (rc == 0)
        ir_node_delete(call);
    return rc;
}

/* Inlines every call in g and the graphs nested in it. Not
 * ir_graph_each_subgraph: it edits g's node list as it goes and walks the
 * nodes an inlined body brings, subgraphs of each node as it meets it. */
static int cvi_graph(IrModel *m, IrGraph *g, size_t *calls, IrError *err)
{
    for (IrNode *k = g->first; k;) {
        IrFunction *f = ir_model_function(m, k);
        if (!f) {
            for (size_t a = 0; a < k->n_attr; a++) {
                IrAttr *at = k->attr[a];
                if (at->g && cvi_graph(m, at->g, calls, err) < 0)
                    return -1;
                for (size_t j = 0; j < at->n_graphs; j++)
                    if (cvi_graph(m, at->graphs[j], calls, err) < 0)
                        return -1;
            }
            k = k->next;
            continue;
        }
        /* the copy's nodes come before the call: walk them next, so that
         * calls inside the body are inlined too (the checker refused
         * recursion before the conversion started) */
        IrNode *before = k->prev;
        if (!f->body || cvi_call(m, g, k, f, err) < 0)
            return f->body ? -1 : ir_fail(err, "function '%s' has no body", f->name);
        ++*calls;
        k = before ? before->next : g->first;
    }
    ir_graph_collect(g);
    return 0;
}

typedef struct CviRun {
    IrModel *m;
    size_t *calls;
    IrError *err;
} CviRun;

static int cvi_top_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    CviRun *r = arg;
    return cvi_graph(r->m, g, r->calls, r->err) < 0 ? -1 : 0;
}

int cvi_inline(IrModel *m, size_t *calls, IrError *err)
{
    *calls = 0;
    CviRun r = {m, calls, err};
    if (ir_each_graph(m, IR_WALK_MAIN | IR_WALK_TRAINING, cvi_top_graph, &r))
        return -1;
    for (size_t i = 0; i < m->n_functions; i++)
        ir_function_free(m->functions[i]);
    free(m->functions);
    m->functions = NULL;
    m->n_functions = 0;
    return 0;
}
