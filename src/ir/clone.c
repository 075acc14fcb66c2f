/*
 * clone.c - deep copies of the IR (prefix ir_; see clone.h).
 *
 * Structs are copied whole first, so that every scalar and presence flag
 * comes along, then every pointer of the copy is replaced by a copy of
 * what it points to: a field forgotten here would be freed twice, which
 * the sanitized tests catch.
 */
#include "ir/clone.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* What one clone needs besides the graph at hand. */
typedef struct IrClone {
    IrGraph *outer;         /* parent of the top graphs cloned, where names
                               read from outside them resolve; or NULL */
    const IrModel *from;    /* whole-model clones: the model whose mappings */
    IrModel *to;            /* external data is rebased from, and the clone */
} IrClone;

/* A graph being cloned and its clone, in the chain of those enclosing it
 * (up is NULL for the top graph of the clone). */
typedef struct IrCloneScope {
    const IrGraph *from;
    IrGraph *to;
    const struct IrCloneScope *up;
    const IrClone *c;
} IrCloneScope;

/* ---- plain data ---------------------------------------------------- */

/* A copy of the n elements of `size` bytes at p; NULL for NULL, so that an
 * array keeps whether it was allocated at all. */
static void *ir_clone_mem(const void *p, size_t n, size_t size)
{
    if (!p)
        return NULL;
    void *d = mem_array(n ? n : 1, size);
    if (n)
        memcpy(d, p, n * size);
    return d;
}

static IrBytes ir_clone_bytes(IrBytes b)
{
    return (IrBytes){b.len, ir_clone_mem(b.data, b.len, 1)};
}

static IrBytes *ir_clone_bytes_list(const IrBytes *b, size_t n)
{
    IrBytes *d = ir_clone_mem(b, n, sizeof *b);
    for (size_t i = 0; i < n; i++)
        d[i] = ir_clone_bytes(b[i]);
    return d;
}

static char **ir_clone_strs(char *const *s, size_t n)
{
    char **d = ir_clone_mem(s, n, sizeof *s);
    for (size_t i = 0; i < n; i++)
        d[i] = mem_strdup(s[i]);
    return d;
}

static void ir_clone_strmap(IrStrMap *d, const IrStrMap *m)
{
    d->n = m->n;
    d->p = ir_clone_mem(m->p, m->n, sizeof *m->p);
    for (size_t i = 0; i < m->n; i++) {
        d->p[i].key = mem_strdup(m->p[i].key);
        d->p[i].value = mem_strdup(m->p[i].value);
        ir_unknown_copy(&d->p[i].unk, &m->p[i].unk);
    }
}

static IrOpset *ir_clone_opsets(const IrOpset *o, size_t n)
{
    IrOpset *d = ir_clone_mem(o, n, sizeof *o);
    for (size_t i = 0; i < n; i++) {
        d[i].domain = mem_strdup(o[i].domain);
        ir_unknown_copy(&d[i].unk, &o[i].unk);
    }
    return d;
}

/* ---- external data ------------------------------------------------- */

/* IrMapping.release of the copies below. */
static void ir_clone_unmap(void *base, size_t len)
{
    munmap(base, len);
}

/* The clone's own copy of the bytes of mapping mp, kept in d (its entry in
 * the clone's list) and made on first need. Shared anonymous memory, not
 * malloc: save releases a mapping's pages behind its writes (madvise
 * MADV_DONTNEED, io/save_out.c), which keeps the contents of shared pages
 * but would turn private ones into zeros. */
static uint8_t *ir_clone_map_bytes(IrMapping *d, const IrMapping *mp)
{
    if (d->base)
        return d->base;
    void *p = mmap(NULL, mp->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        mem_oom();
    memcpy(p, mp->base, mp->len);
    mprotect(p, mp->len, PROT_READ);   /* read-only, as a file mapping is */
    d->base = p;
    d->len = mp->len;
    d->release = ir_clone_unmap;
    return p;
}

/* Where external bytes at p are in the clone: at the same offset of the
 * clone's copy of the mapping holding them. Unchanged outside a whole-model
 * clone (a graph or function clone stays in the model it came from). */
static const uint8_t *ir_clone_ext(const IrClone *c, const uint8_t *p)
{
    if (!p || !c->from)
        return p;
    for (size_t i = 0; i < c->from->n_maps; i++) {
        const IrMapping *mp = &c->from->maps[i];
        uintptr_t b = (uintptr_t)mp->base, q = (uintptr_t)p;
        if (!mp->base || q < b || q - b > mp->len)
            continue;
        if (!mp->len)
            return NULL;
        return ir_clone_map_bytes(&c->to->maps[i], mp) + (q - b);
    }
    return p;
}

/* The clone's list of where m came from: every mapping's path and
 * location, which save asks about (is the output the input file, does
 * the input still read a side file), without the bytes; external data is
 * copied in as tensors need it (ir_clone_ext), the model file's own bytes
 * go into the tensors that borrowed them. */
static void ir_clone_maps(IrModel *d, const IrModel *m)
{
    d->n_maps = m->n_maps;
    d->maps = ir_clone_mem(m->maps, m->n_maps, sizeof *m->maps);
    for (size_t i = 0; i < m->n_maps; i++)
        d->maps[i] = (IrMapping){mem_strdup(m->maps[i].path),
                                 mem_strdup(m->maps[i].location), NULL, 0, -1, NULL};
}

/* ---- tensors ------------------------------------------------------- */

static IrSegment *ir_clone_segment(const IrSegment *s)
{
    IrSegment *d = ir_clone_mem(s, 1, sizeof *s);
    if (d)
        ir_unknown_copy(&d->unk, &s->unk);
    return d;
}

static IrTensor *ir_clone_tensor(const IrTensor *t, const IrClone *c)
{
    if (!t)
        return NULL;
    IrTensor *d = ir_clone_mem(t, 1, sizeof *t);
    d->name = mem_strdup(t->name);
    d->doc_string = mem_strdup(t->doc_string);
    d->dims = ir_clone_mem(t->dims, t->ndims, sizeof *t->dims);
    d->segment = ir_clone_segment(t->segment);
    d->float_data = ir_clone_mem(t->float_data, t->n_float, sizeof *t->float_data);
    d->int32_data = ir_clone_mem(t->int32_data, t->n_int32, sizeof *t->int32_data);
    d->string_data = ir_clone_bytes_list(t->string_data, t->n_string);
    d->int64_data = ir_clone_mem(t->int64_data, t->n_int64, sizeof *t->int64_data);
    d->double_data = ir_clone_mem(t->double_data, t->n_double, sizeof *t->double_data);
    d->uint64_data = ir_clone_mem(t->uint64_data, t->n_uint64, sizeof *t->uint64_data);
    /* owned even where the original borrows it from the model's file */
    d->raw = ir_clone_bytes(t->raw);
    d->raw_borrowed = false;
    ir_clone_strmap(&d->external_data, &t->external_data);
    d->ext.data = ir_clone_ext(c, t->ext.data);
    ir_clone_strmap(&d->meta, &t->meta);
    ir_unknown_copy(&d->unk, &t->unk);
    return d;
}

static IrSparse *ir_clone_sparse(const IrSparse *s, const IrClone *c)
{
    if (!s)
        return NULL;
    IrSparse *d = ir_clone_mem(s, 1, sizeof *s);
    d->values = ir_clone_tensor(s->values, c);
    d->indices = ir_clone_tensor(s->indices, c);
    d->dims = ir_clone_mem(s->dims, s->ndims, sizeof *s->dims);
    ir_unknown_copy(&d->unk, &s->unk);
    return d;
}

/* ---- values -------------------------------------------------------- */

/* The value named like v in `to` (the clone of v's graph), made on first
 * need with v's own facts; its producer, initializer, uses and ValueInfo
 * count are set by what refers to it, as they are cloned. */
static IrValue *ir_clone_local(IrGraph *to, const IrValue *v, const IrClone *c)
{
    IrValue *w = ir_graph_find_local(to, v->name);
    if (w)
        return w;
    w = ir_graph_value(to, v->name);
    w->kind = v->kind;
    w->producer_index = v->producer_index;
    w->type = ir_type_copy(v->type);
    w->symval = ir_shape_copy(v->symval);
    w->known = ir_clone_tensor(v->known, c);
    w->known_input = v->known_input;
    return w;
}

/* What v, seen from the graph s clones, is in the clone: the value of the
 * clone of v's graph when that graph is being cloned, else (v is read from
 * outside) the value of that name in the clone's parent, else an undefined
 * value of the clone's top graph. */
static IrValue *ir_clone_value(const IrCloneScope *s, const IrValue *v)
{
    const IrCloneScope *k = s;
    for (;; k = k->up) {
        if (k->from == v->graph)
            return ir_clone_local(k->to, v, s->c);
        if (!k->up)
            break;
    }
    IrValue *w = s->c->outer ? ir_graph_lookup(s->c->outer, v->name) : NULL;
    return w ? w : ir_graph_value(k->to, v->name);
}

static void ir_clone_info_fields(IrValueInfo *d, const IrValueInfo *vi)
{
    d->name_absent = vi->name_absent;
    d->type = ir_type_copy(vi->type);
    d->doc_string = mem_strdup(vi->doc_string);
    ir_clone_strmap(&d->meta, &vi->meta);
    ir_unknown_copy(&d->unk, &vi->unk);
}

/* A graph input or value_info entry. */
static IrValueInfo *ir_clone_info(const IrCloneScope *s, const IrValueInfo *vi)
{
    IrValueInfo *d = mem_alloc(sizeof *d);
    d->value = ir_clone_value(s, vi->value);
    d->value->n_infos++;
    ir_clone_info_fields(d, vi);
    return d;
}

/* A graph output, through the IR call that records an output naming an
 * enclosing graph's value as a use of it. */
static void ir_clone_output(const IrCloneScope *s, const IrValueInfo *vi)
{
    IrValueInfo *d = ir_graph_add_output(s->to, ir_clone_value(s, vi->value), NULL);
    ir_clone_info_fields(d, vi);
}

/* ---- attributes ---------------------------------------------------- */

static IrGraph *ir_clone_graph(const IrCloneScope *up, const IrClone *c, const IrGraph *g);

static IrType **ir_clone_types(IrType *const *t, size_t n)
{
    IrType **d = ir_clone_mem(t, n, sizeof *t);
    for (size_t i = 0; i < n; i++)
        d[i] = ir_type_copy(t[i]);
    return d;
}

/* The attribute's lists of tensors, graphs and sparse tensors. */
static void ir_clone_attr_lists(IrAttr *d, const IrAttr *a, const IrCloneScope *up,
                                const IrClone *c)
{
    d->tensors = ir_clone_mem(a->tensors, a->n_tensors, sizeof *a->tensors);
    for (size_t i = 0; i < a->n_tensors; i++)
        d->tensors[i] = ir_clone_tensor(a->tensors[i], c);
    d->graphs = ir_clone_mem(a->graphs, a->n_graphs, sizeof *a->graphs);
    for (size_t i = 0; i < a->n_graphs; i++)
        d->graphs[i] = ir_clone_graph(up, c, a->graphs[i]);
    d->sparse_tensors = ir_clone_mem(a->sparse_tensors, a->n_sparse, sizeof *a->sparse_tensors);
    for (size_t i = 0; i < a->n_sparse; i++)
        d->sparse_tensors[i] = ir_clone_sparse(a->sparse_tensors[i], c);
}

/* A copy of a whose subgraphs nest in the graph up clones (or, with no up,
 * in c->outer); their owner is left for the node that takes the copy. */
static IrAttr *ir_clone_attr(const IrCloneScope *up, const IrClone *c, const IrAttr *a)
{
    IrAttr *d = ir_clone_mem(a, 1, sizeof *a);
    d->name = mem_strdup(a->name);
    d->ref_attr_name = mem_strdup(a->ref_attr_name);
    d->doc_string = mem_strdup(a->doc_string);
    d->s = ir_clone_bytes(a->s);
    d->t = ir_clone_tensor(a->t, c);
    d->g = a->g ? ir_clone_graph(up, c, a->g) : NULL;
    d->sparse_tensor = ir_clone_sparse(a->sparse_tensor, c);
    d->tp = ir_type_copy(a->tp);
    d->floats = ir_clone_mem(a->floats, a->n_floats, sizeof *a->floats);
    d->ints = ir_clone_mem(a->ints, a->n_ints, sizeof *a->ints);
    d->strings = ir_clone_bytes_list(a->strings, a->n_strings);
    ir_clone_attr_lists(d, a, up, c);
    d->type_protos = ir_clone_types(a->type_protos, a->n_tps);
    ir_unknown_copy(&d->unk, &a->unk);
    return d;
}

/* ---- nodes --------------------------------------------------------- */

static void ir_clone_shard_spec(IrShardSpec *d, const IrShardSpec *s)
{
    d->tensor_name = mem_strdup(s->tensor_name);
    d->device = ir_clone_mem(s->device, s->n_device, sizeof *s->device);
    d->groups = ir_clone_mem(s->groups, s->n_groups, sizeof *s->groups);
    for (size_t i = 0; i < s->n_groups; i++) {
        d->groups[i].v = ir_clone_mem(s->groups[i].v, s->groups[i].n, sizeof *s->groups[i].v);
        ir_unknown_copy(&d->groups[i].unk, &s->groups[i].unk);
    }
    d->dims = ir_clone_mem(s->dims, s->n_dims, sizeof *s->dims);
    for (size_t i = 0; i < s->n_dims; i++) {
        const IrShardedDim *x = &s->dims[i];
        IrShardedDim *y = &d->dims[i];
        y->simple = ir_clone_mem(x->simple, x->n, sizeof *x->simple);
        for (size_t j = 0; j < x->n; j++) {
            y->simple[j].dim_param = mem_strdup(x->simple[j].dim_param);
            ir_unknown_copy(&y->simple[j].unk, &x->simple[j].unk);
        }
        ir_unknown_copy(&y->unk, &x->unk);
    }
    ir_unknown_copy(&d->unk, &s->unk);
}

static IrNodeDevCfg *ir_clone_devcfgs(const IrNodeDevCfg *c, size_t n)
{
    IrNodeDevCfg *d = ir_clone_mem(c, n, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        d[i].configuration_id = mem_strdup(c[i].configuration_id);
        d[i].specs = ir_clone_mem(c[i].specs, c[i].n_specs, sizeof *c[i].specs);
        for (size_t j = 0; j < c[i].n_specs; j++)
            ir_clone_shard_spec(&d[i].specs[j], &c[i].specs[j]);
        ir_unknown_copy(&d[i].unk, &c[i].unk);
    }
    return d;
}

/* Appends n to g's node list. */
static void ir_clone_link(IrGraph *g, IrNode *n)
{
    n->graph = g;
    n->prev = g->last;
    if (g->last)
        g->last->next = n;
    else
        g->first = n;
    g->last = n;
    g->n_nodes++;
}

/* The copy of n at the end of s's clone with its outputs defined; its
 * attributes and inputs come once every node's outputs exist (a subgraph
 * or an input may name a later node's output). */
static IrNode *ir_clone_node_shell(const IrCloneScope *s, const IrNode *n)
{
    IrNode *k = mem_alloc(sizeof *k);
    ir_clone_link(s->to, k);
    k->name = mem_strdup(n->name);
    k->op_type = mem_strdup(n->op_type);
    k->domain = mem_strdup(n->domain);
    k->overload = mem_strdup(n->overload);
    k->doc_string = mem_strdup(n->doc_string);
    k->n_out = n->n_out;
    k->out = mem_array(n->n_out + 1, sizeof *k->out);
    for (size_t i = 0; i < n->n_out; i++) {
        if (!n->out[i])
            continue;
        k->out[i] = ir_clone_value(s, n->out[i]);
        if (n->out[i]->producer == n)
            k->out[i]->producer = k;
    }
    k->cap_in = n->n_in + 1;
    k->in = mem_array(k->cap_in, sizeof *k->in);
    k->attr = mem_array(n->n_attr + 1, sizeof *k->attr);
    ir_clone_strmap(&k->meta, &n->meta);
    k->n_devcfg = n->n_devcfg;
    k->devcfg = ir_clone_devcfgs(n->devcfg, n->n_devcfg);
    ir_unknown_copy(&k->unk, &n->unk);
    return k;
}

/* Gives k (the shell of n) copies of n's attributes, its subgraphs
 * first, as the loader reads them, then n's inputs. */
static void ir_clone_node_body(const IrCloneScope *s, const IrNode *n, IrNode *k)
{
    for (size_t i = 0; i < n->n_attr; i++) {
        IrAttr *a = ir_clone_attr(s, s->c, n->attr[i]);
        if (a->g)
            a->g->owner = k;
        for (size_t j = 0; j < a->n_graphs; j++)
            a->graphs[j]->owner = k;
        k->attr[k->n_attr++] = a;
    }
    k->n_in = n->n_in;
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i])
            ir_node_set_input(k, i, ir_clone_value(s, n->in[i]));
}

/* ---- graphs -------------------------------------------------------- */

/* Copies of g's initializers, each bound to its value as in g. */
static void ir_clone_inits(const IrCloneScope *s)
{
    const IrGraph *g = s->from;
    for (size_t i = 0; i < g->inits.n; i++) {
        const IrTensor *t = g->inits.p[i];
        IrTensor *d = ir_clone_tensor(t, s->c);
        ir_ptrlist_push(&s->to->inits, d);
        const IrValue *v = ir_graph_find_local(g, t->name ? t->name : "");
        IrValue *w = v ? ir_clone_value(s, v) : NULL;
        if (w && v->init == t)
            w->init = d;
    }
    for (size_t i = 0; i < g->sparse_inits.n; i++) {
        const IrSparse *sp = g->sparse_inits.p[i];
        IrSparse *d = ir_clone_sparse(sp, s->c);
        ir_ptrlist_push(&s->to->sparse_inits, d);
        const char *name = sp->values && sp->values->name ? sp->values->name : "";
        const IrValue *v = ir_graph_find_local(g, name);
        IrValue *w = v ? ir_clone_value(s, v) : NULL;
        if (w && v->sparse_init == sp)
            w->sparse_init = d;
    }
}

static IrTensorAnn *ir_clone_qann(const IrTensorAnn *a, size_t n)
{
    IrTensorAnn *d = ir_clone_mem(a, n, sizeof *a);
    for (size_t i = 0; i < n; i++) {
        d[i].tensor_name = mem_strdup(a[i].tensor_name);
        ir_clone_strmap(&d[i].params, &a[i].params);
        ir_unknown_copy(&d[i].unk, &a[i].unk);
    }
    return d;
}

/* What the loader reads of a graph before its nodes: names, inputs and
 * initializers. A function body's attribute defaults come next
 * (ir_clone_function), then ir_clone_graph_rest. */
static void ir_clone_graph_head(const IrCloneScope *s)
{
    const IrGraph *g = s->from;
    IrGraph *h = s->to;
    h->name = mem_strdup(g->name);
    h->doc_string = mem_strdup(g->doc_string);
    h->is_function = g->is_function;
    h->may_nest = g->may_nest;
    for (size_t i = 0; i < g->inputs.n; i++)
        ir_ptrlist_push(&h->inputs, ir_clone_info(s, g->inputs.p[i]));
    ir_clone_inits(s);
}

/* The nodes (every shell, then every body), outputs, value_info,
 * annotations, and last the values nothing refers to. */
static void ir_clone_graph_rest(const IrCloneScope *s)
{
    const IrGraph *g = s->from;
    IrGraph *h = s->to;
    for (const IrNode *n = g->first; n; n = n->next)
        ir_clone_node_shell(s, n);
    IrNode *k = h->first;
    for (const IrNode *n = g->first; n; n = n->next, k = k->next)
        ir_clone_node_body(s, n, k);
    for (size_t i = 0; i < g->outputs.n; i++)
        ir_clone_output(s, g->outputs.p[i]);
    for (size_t i = 0; i < g->value_info.n; i++)
        ir_ptrlist_push(&h->value_info, ir_clone_info(s, g->value_info.p[i]));
    h->n_qann = g->n_qann;
    h->qann = ir_clone_qann(g->qann, g->n_qann);
    ir_clone_strmap(&h->meta, &g->meta);
    ir_unknown_copy(&h->unk, &g->unk);
    for (const IrValue *v = g->values; v; v = v->hh.next)
        ir_clone_local(h, v, s->c);
}

/* A copy of g nested in the graph up clones, or for the top graph (no
 * up) in c->outer. */
static IrGraph *ir_clone_graph(const IrCloneScope *up, const IrClone *c, const IrGraph *g)
{
    IrCloneScope s = {g, ir_graph_new(up ? up->to : c->outer), up, c};
    ir_clone_graph_head(&s);
    ir_clone_graph_rest(&s);
    return s.to;
}

/* ---- functions and models ------------------------------------------ */

static IrFunction *ir_clone_function(const IrFunction *f, const IrClone *c)
{
    IrFunction *d = mem_alloc(sizeof *d);
    d->name = mem_strdup(f->name);
    d->domain = mem_strdup(f->domain);
    d->overload = mem_strdup(f->overload);
    d->doc_string = mem_strdup(f->doc_string);
    d->n_attr_names = f->n_attr_names;
    d->attr_names = ir_clone_strs(f->attr_names, f->n_attr_names);
    d->n_attr = f->n_attr;
    d->attr = ir_clone_mem(f->attr, f->n_attr, sizeof *f->attr);
    /* the defaults' subgraphs nest in the body, read after its inputs */
    IrCloneScope s = {f->body, f->body ? ir_graph_new(NULL) : NULL, NULL, c};
    d->body = s.to;
    if (f->body)
        ir_clone_graph_head(&s);
    for (size_t i = 0; i < f->n_attr; i++)
        d->attr[i] = ir_clone_attr(f->body ? &s : NULL, c, f->attr[i]);
    if (f->body)
        ir_clone_graph_rest(&s);
    d->n_opsets = f->n_opsets;
    d->opsets = ir_clone_opsets(f->opsets, f->n_opsets);
    ir_clone_strmap(&d->meta, &f->meta);
    ir_unknown_copy(&d->unk, &f->unk);
    return d;
}

static IrTraining *ir_clone_training(const IrTraining *t, size_t n, const IrClone *c)
{
    IrTraining *d = ir_clone_mem(t, n, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        d[i].initialization =
            t[i].initialization ? ir_clone_graph(NULL, c, t[i].initialization) : NULL;
        d[i].algorithm = t[i].algorithm ? ir_clone_graph(NULL, c, t[i].algorithm) : NULL;
        ir_clone_strmap(&d[i].init_binding, &t[i].init_binding);
        ir_clone_strmap(&d[i].update_binding, &t[i].update_binding);
        ir_unknown_copy(&d[i].unk, &t[i].unk);
    }
    return d;
}

static IrDevCfg *ir_clone_configs(const IrDevCfg *g, size_t n)
{
    IrDevCfg *d = ir_clone_mem(g, n, sizeof *g);
    for (size_t i = 0; i < n; i++) {
        d[i].name = mem_strdup(g[i].name);
        d[i].device = ir_clone_strs(g[i].device, g[i].n_device);
        ir_unknown_copy(&d[i].unk, &g[i].unk);
    }
    return d;
}

/* The model's own fields, graphs and functions aside. */
static void ir_clone_model_fields(IrModel *d, const IrModel *m)
{
    d->has_ir_version = m->has_ir_version;
    d->ir_version = m->ir_version;
    d->n_opsets = m->n_opsets;
    d->opsets = ir_clone_opsets(m->opsets, m->n_opsets);
    d->producer_name = mem_strdup(m->producer_name);
    d->producer_version = mem_strdup(m->producer_version);
    d->domain = mem_strdup(m->domain);
    d->doc_string = mem_strdup(m->doc_string);
    d->has_model_version = m->has_model_version;
    d->model_version = m->model_version;
    ir_clone_strmap(&d->meta, &m->meta);
    d->n_configs = m->n_configs;
    d->configs = ir_clone_configs(m->configs, m->n_configs);
    ir_unknown_copy(&d->unk, &m->unk);
    d->dir = mem_strdup(m->dir);
}

IrModel *ir_model_clone(const IrModel *m)
{
    if (!m)
        return NULL;
    IrModel *d = ir_model_new();
    IrClone c = {NULL, m, d};
    ir_clone_model_fields(d, m);
    ir_clone_maps(d, m);
    d->graph = m->graph ? ir_clone_graph(NULL, &c, m->graph) : NULL;
    d->n_training = m->n_training;
    d->training = ir_clone_training(m->training, m->n_training, &c);
    d->n_functions = m->n_functions;
    d->functions = ir_clone_mem(m->functions, m->n_functions, sizeof *m->functions);
    for (size_t i = 0; i < m->n_functions; i++)
        d->functions[i] = m->functions[i] ? ir_clone_function(m->functions[i], &c) : NULL;
    return d;
}

IrGraph *ir_graph_clone(const IrGraph *g, IrGraph *parent)
{
    IrClone c = {parent, NULL, NULL};
    return g ? ir_clone_graph(NULL, &c, g) : NULL;
}

IrFunction *ir_function_clone(const IrFunction *f)
{
    IrClone c = {NULL, NULL, NULL};
    return f ? ir_clone_function(f, &c) : NULL;
}

IrAttr *ir_attr_clone(const IrAttr *a, IrGraph *parent)
{
    IrClone c = {parent, NULL, NULL};
    return a ? ir_clone_attr(NULL, &c, a) : NULL;
}
