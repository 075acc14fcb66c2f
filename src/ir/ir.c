/*
 * ir.c - the mutable IR: memory, values, nodes, walks (prefix ir_).
 */
#include "ir/ir.h"
#include "base/keyset.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- errors -------------------------------------------------------- */

int ir_fail(IrError *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* Messages are one line: fold any control byte (newlines above
         * all) a name smuggled in. */
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
    }
    return -1;
}

void ir_ptrlist_push(IrPtrList *l, void *p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->p = mem_grow(l->p, l->cap, sizeof *l->p);
    }
    l->p[l->n++] = p;
}

void ir_ptrlist_remove_at(IrPtrList *l, size_t i)
{
    memmove(l->p + i, l->p + i + 1, (l->n - i - 1) * sizeof *l->p);
    l->n--;
}

/* ---- element types ------------------------------------------------- */

#define IR_DTYPE_ROW(name, code, bits, cls) [code] = {#name, bits, IR_DC_##cls},
static const struct {
    const char *name;
    int bits;
    IrDtypeClass cls;
} ir_dtypes[] = {IR_DTYPES(IR_DTYPE_ROW)};
#undef IR_DTYPE_ROW

const char *ir_dtype_name(int32_t dtype)
{
    if (dtype < 0 || (size_t)dtype >= sizeof ir_dtypes / sizeof ir_dtypes[0])
        return NULL;
    return ir_dtypes[dtype].name;
}

int ir_dtype_bits(int32_t dtype)
{
    if (dtype < 0 || (size_t)dtype >= sizeof ir_dtypes / sizeof ir_dtypes[0])
        return 0;
    return ir_dtypes[dtype].bits;
}

IrDtypeClass ir_dtype_class(int32_t dtype)
{
    if (dtype < 0 || (size_t)dtype >= sizeof ir_dtypes / sizeof ir_dtypes[0])
        return IR_DC_NONE;
    return ir_dtypes[dtype].cls;
}

bool ir_dtype_is_float(int32_t dtype)
{
    return ir_dtype_class(dtype) == IR_DC_FLOAT;
}

bool ir_dtype_is_int(int32_t dtype)
{
    IrDtypeClass c = ir_dtype_class(dtype);
    return c == IR_DC_SINT || c == IR_DC_UINT;
}

bool ir_dtype_is_signed_int(int32_t dtype)
{
    return ir_dtype_class(dtype) == IR_DC_SINT;
}

bool ir_dtype_is_numeric(int32_t dtype)
{
    IrDtypeClass c = ir_dtype_class(dtype);
    return c == IR_DC_FLOAT || c == IR_DC_SINT || c == IR_DC_UINT || c == IR_DC_COMPLEX;
}

bool ir_tensor_numel(const IrTensor *t, uint64_t *out)
{
    uint64_t n = 1;
    for (size_t i = 0; i < t->ndims; i++) {
        if (t->dims[i] < 0)
            return false;
        uint64_t d = (uint64_t)t->dims[i];
        if (d && n > UINT64_MAX / d)
            return false;
        n *= d;
    }
    *out = n;
    return true;
}

uint64_t ir_tensor_stored_bytes(const IrTensor *t)
{
    uint64_t b = 0;
    if (t->has_raw)
        b += t->raw.len;
    b += (uint64_t)t->n_float * 4 + (uint64_t)t->n_int32 * 4 +
         (uint64_t)t->n_int64 * 8 + (uint64_t)t->n_double * 8 +
         (uint64_t)t->n_uint64 * 8;
    for (size_t i = 0; i < t->n_string; i++)
        b += t->string_data[i].len;
    b += t->ext.len;
    return b;
}

/* ---- freeing -------------------------------------------------------- */

void ir_unknown_free(IrUnknown *u)
{
    for (size_t i = 0; i < u->n; i++)
        free(u->f[i].data);
    free(u->f);
    u->f = NULL;
    u->n = 0;
}

void ir_strmap_free(IrStrMap *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->p[i].key);
        free(m->p[i].value);
        ir_unknown_free(&m->p[i].unk);
    }
    free(m->p);
    m->p = NULL;
    m->n = 0;
}

static void ir_bytes_list_free(IrBytes *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(b[i].data);
    free(b);
}

void ir_tensor_free(IrTensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->doc_string);
    free(t->dims);
    if (t->segment) {
        ir_unknown_free(&t->segment->unk);
        free(t->segment);
    }
    free(t->float_data);
    free(t->int32_data);
    ir_bytes_list_free(t->string_data, t->n_string);
    free(t->int64_data);
    free(t->double_data);
    free(t->uint64_data);
    if (!t->raw_borrowed)
        free(t->raw.data);
    ir_strmap_free(&t->external_data);
    ir_strmap_free(&t->meta);
    ir_unknown_free(&t->unk);
    free(t);
}

void ir_sparse_free(IrSparse *s)
{
    if (!s)
        return;
    ir_tensor_free(s->values);
    ir_tensor_free(s->indices);
    free(s->dims);
    ir_unknown_free(&s->unk);
    free(s);
}

void ir_shape_free(IrShape *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->rank; i++) {
        free(s->dims[i].param);
        free(s->dims[i].denotation);
        ir_unknown_free(&s->dims[i].unk);
    }
    free(s->dims);
    ir_unknown_free(&s->unk);
    free(s);
}

/* Frees a value already removed from its graph's table. */
static void ir_value_free(IrValue *v)
{
    free(v->name);
    free(v->uses);
    ir_type_free(v->type);
    ir_shape_free(v->symval);
    ir_tensor_free(v->known);
    free(v);
}

void ir_type_free(IrType *t)
{
    if (!t)
        return;
    ir_shape_free(t->shape);
    ir_type_free(t->elem);
    free(t->opaque_domain);
    free(t->opaque_name);
    free(t->denotation);
    ir_unknown_free(&t->inner_unk);
    ir_unknown_free(&t->unk);
    free(t);
}

static void ir_graph_free_inner(IrGraph *g);

/* Frees a, assuming its subgraphs hold no uses on outer values any more. */
static void ir_attr_free_inner(IrAttr *a)
{
    if (!a)
        return;
    free(a->name);
    free(a->ref_attr_name);
    free(a->doc_string);
    free(a->s.data);
    ir_tensor_free(a->t);
    if (a->g)
        ir_graph_free_inner(a->g);
    ir_sparse_free(a->sparse_tensor);
    ir_type_free(a->tp);
    free(a->floats);
    free(a->ints);
    ir_bytes_list_free(a->strings, a->n_strings);
    for (size_t i = 0; i < a->n_tensors; i++)
        ir_tensor_free(a->tensors[i]);
    free(a->tensors);
    for (size_t i = 0; i < a->n_graphs; i++)
        ir_graph_free_inner(a->graphs[i]);
    free(a->graphs);
    for (size_t i = 0; i < a->n_sparse; i++)
        ir_sparse_free(a->sparse_tensors[i]);
    free(a->sparse_tensors);
    for (size_t i = 0; i < a->n_tps; i++)
        ir_type_free(a->type_protos[i]);
    free(a->type_protos);
    ir_unknown_free(&a->unk);
    free(a);
}

static void ir_shard_spec_free(IrShardSpec *s)
{
    free(s->tensor_name);
    free(s->device);
    for (size_t i = 0; i < s->n_groups; i++) {
        free(s->groups[i].v);
        ir_unknown_free(&s->groups[i].unk);
    }
    free(s->groups);
    for (size_t i = 0; i < s->n_dims; i++) {
        IrShardedDim *d = &s->dims[i];
        for (size_t j = 0; j < d->n; j++) {
            free(d->simple[j].dim_param);
            ir_unknown_free(&d->simple[j].unk);
        }
        free(d->simple);
        ir_unknown_free(&d->unk);
    }
    free(s->dims);
    ir_unknown_free(&s->unk);
}

static void ir_devcfgs_free(IrNodeDevCfg *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].configuration_id);
        for (size_t j = 0; j < c[i].n_specs; j++)
            ir_shard_spec_free(&c[i].specs[j]);
        free(c[i].specs);
        ir_unknown_free(&c[i].unk);
    }
    free(c);
}

void ir_node_clear_devcfg(IrNode *n)
{
    ir_devcfgs_free(n->devcfg, n->n_devcfg);
    n->devcfg = NULL;
    n->n_devcfg = 0;
}

static void ir_graph_detach_outer_uses(IrGraph *g);

void ir_attr_free(IrAttr *a)
{
    if (!a)
        return;
    if (a->g && a->g->parent)
        ir_graph_detach_outer_uses(a->g);
    for (size_t k = 0; k < a->n_graphs; k++)
        if (a->graphs[k]->parent)
            ir_graph_detach_outer_uses(a->graphs[k]);
    ir_attr_free_inner(a);
}

/* Frees a node's own fields; uses must already be detached. */
static void ir_node_free_fields(IrNode *n)
{
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->overload);
    free(n->doc_string);
    free(n->in);
    free(n->out);
    for (size_t i = 0; i < n->n_attr; i++)
        ir_attr_free_inner(n->attr[i]);
    free(n->attr);
    ir_strmap_free(&n->meta);
    ir_devcfgs_free(n->devcfg, n->n_devcfg);
    ir_unknown_free(&n->unk);
    free(n);
}

void ir_valueinfo_free(IrValueInfo *vi)
{
    if (!vi)
        return;
    if (vi->value)
        vi->value->n_infos--;
    ir_type_free(vi->type);
    free(vi->doc_string);
    ir_strmap_free(&vi->meta);
    ir_unknown_free(&vi->unk);
    free(vi);
}

static void ir_vilist_free(IrPtrList *l)
{
    for (size_t i = 0; i < l->n; i++)
        ir_valueinfo_free(l->p[i]);
    free(l->p);
}

/* Removes the use (n, index, g) from v's use list. O(uses). */
static void ir_use_remove(IrValue *v, IrNode *n, size_t index, IrGraph *g)
{
    for (size_t i = 0; i < v->n_uses; i++) {
        IrUse *u = &v->uses[i];
        if (u->node == n && u->index == index && (n || u->graph == g)) {
            *u = v->uses[--v->n_uses];
            return;
        }
    }
}

static void ir_use_add(IrValue *v, IrNode *n, size_t index, IrGraph *g)
{
    if (v->n_uses == v->cap_uses) {
        v->cap_uses = v->cap_uses ? v->cap_uses * 2 : 2;
        v->uses = mem_grow(v->uses, v->cap_uses, sizeof *v->uses);
    }
    v->uses[v->n_uses++] = (IrUse){n, index, n ? NULL : g};
}

/* Detaches every use the nodes and outputs of g (and its subgraphs) hold on
 * values of enclosing graphs, so that freeing or dropping a subgraph leaves
 * no dangling use. Uses of values inside g's own tree go too, harmlessly:
 * those values go with it. */
static void ir_graph_detach_outer_uses(IrGraph *g)
{
    for (size_t i = 0; i < g->outputs.n; i++) {
        IrValue *v = ((IrValueInfo *)g->outputs.p[i])->value;
        if (v->graph != g)
            ir_use_remove(v, NULL, i, g);
    }
    for (IrNode *n = g->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_in; i++)
            if (n->in[i] && n->in[i]->graph != g)
                ir_use_remove(n->in[i], n, i, NULL);
        for (size_t a = 0; a < n->n_attr; a++) {
            IrAttr *at = n->attr[a];
            if (at->g)
                ir_graph_detach_outer_uses(at->g);
            for (size_t k = 0; k < at->n_graphs; k++)
                ir_graph_detach_outer_uses(at->graphs[k]);
        }
    }
}

void ir_graph_clear_qann(IrGraph *g)
{
    for (size_t i = 0; i < g->n_qann; i++) {
        free(g->qann[i].tensor_name);
        ir_strmap_free(&g->qann[i].params);
        ir_unknown_free(&g->qann[i].unk);
    }
    free(g->qann);
    g->qann = NULL;
    g->n_qann = 0;
}

static void ir_graph_free_inner(IrGraph *g)
{
    IrNode *n = g->first;
    while (n) {
        IrNode *next = n->next;
        ir_node_free_fields(n);
        n = next;
    }
    for (size_t i = 0; i < g->dead.n; i++)
        ir_node_free_fields(g->dead.p[i]);
    free(g->dead.p);
    /* ValueInfos first: they count themselves off their values. */
    ir_vilist_free(&g->inputs);
    ir_vilist_free(&g->outputs);
    ir_vilist_free(&g->value_info);
    IrValue *v, *tmp;
    HASH_ITER(hh, g->values, v, tmp) {
        HASH_DEL(g->values, v);
        ir_value_free(v);
    }
    for (size_t i = 0; i < g->inits.n; i++)
        ir_tensor_free(g->inits.p[i]);
    free(g->inits.p);
    for (size_t i = 0; i < g->sparse_inits.n; i++)
        ir_sparse_free(g->sparse_inits.p[i]);
    free(g->sparse_inits.p);
    ir_graph_clear_qann(g);
    ir_strmap_free(&g->meta);
    ir_unknown_free(&g->unk);
    free(g->name);
    free(g->doc_string);
    free(g);
}

void ir_graph_free(IrGraph *g)
{
    if (!g)
        return;
    /* Only a subgraph can hold uses on values it does not own. */
    if (g->parent)
        ir_graph_detach_outer_uses(g);
    ir_graph_free_inner(g);
}

void ir_function_free(IrFunction *f)
{
    if (!f)
        return;
    free(f->name);
    free(f->domain);
    free(f->overload);
    free(f->doc_string);
    ir_graph_free(f->body);
    for (size_t i = 0; i < f->n_attr_names; i++)
        free(f->attr_names[i]);
    free(f->attr_names);
    for (size_t i = 0; i < f->n_attr; i++)
        ir_attr_free(f->attr[i]);
    free(f->attr);
    for (size_t i = 0; i < f->n_opsets; i++) {
        free(f->opsets[i].domain);
        ir_unknown_free(&f->opsets[i].unk);
    }
    free(f->opsets);
    ir_strmap_free(&f->meta);
    ir_unknown_free(&f->unk);
    free(f);
}

/* ---- model ---------------------------------------------------------- */

IrModel *ir_model_new(void)
{
    return mem_alloc(sizeof(IrModel));
}

/* Releases the file mappings the loader made for m. */
static void ir_model_unmap(IrModel *m)
{
    for (size_t i = 0; i < m->n_maps; i++) {
        if (m->maps[i].base && m->maps[i].release)
            m->maps[i].release(m->maps[i].base, m->maps[i].len);
        if (m->maps[i].fd >= 0)
            close(m->maps[i].fd);
        free(m->maps[i].path);
        free(m->maps[i].location);
    }
    free(m->maps);
}

void ir_model_clear_configs(IrModel *m)
{
    for (size_t i = 0; i < m->n_configs; i++) {
        IrDevCfg *c = &m->configs[i];
        free(c->name);
        for (size_t j = 0; j < c->n_device; j++)
            free(c->device[j]);
        free(c->device);
        ir_unknown_free(&c->unk);
    }
    free(m->configs);
    m->configs = NULL;
    m->n_configs = 0;
}

void ir_model_free(IrModel *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_opsets; i++) {
        free(m->opsets[i].domain);
        ir_unknown_free(&m->opsets[i].unk);
    }
    free(m->opsets);
    free(m->producer_name);
    free(m->producer_version);
    free(m->domain);
    free(m->doc_string);
    ir_graph_free(m->graph);
    ir_strmap_free(&m->meta);
    for (size_t i = 0; i < m->n_training; i++) {
        IrTraining *t = &m->training[i];
        ir_graph_free(t->initialization);
        ir_graph_free(t->algorithm);
        ir_strmap_free(&t->init_binding);
        ir_strmap_free(&t->update_binding);
        ir_unknown_free(&t->unk);
    }
    free(m->training);
    for (size_t i = 0; i < m->n_functions; i++)
        ir_function_free(m->functions[i]);
    free(m->functions);
    ir_model_clear_configs(m);
    ir_unknown_free(&m->unk);
    ir_model_unmap(m);
    free(m->dir);
    free(m);
}

const char *ir_domain_norm(const char *domain)
{
    return !domain || !strcmp(domain, "ai.onnx") ? "" : domain;
}

const char *ir_domain_shown(const char *domain)
{
    domain = ir_domain_norm(domain);
    return domain[0] ? domain : "ai.onnx";
}

/* "" and "ai.onnx" name the same operator set. */
static bool ir_same_domain(const char *a, const char *b)
{
    return !strcmp(ir_domain_norm(a), ir_domain_norm(b));
}

int64_t ir_model_opset(const IrModel *m, const char *domain)
{
    for (size_t i = 0; i < m->n_opsets; i++)
        if (ir_same_domain(m->opsets[i].domain, domain))
            return m->opsets[i].has_version ? m->opsets[i].version : -1;
    return -1;
}

IrFunction *ir_model_function(const IrModel *m, const IrNode *n)
{
    if (!n->op_type)
        return NULL;
    for (size_t k = 0; k < m->n_functions; k++) {
        IrFunction *f = m->functions[k];
        if (f->name && strcmp(f->name, n->op_type) == 0 &&
            ir_same_domain(f->domain, n->domain) &&
            strcmp(f->overload ? f->overload : "", n->overload ? n->overload : "") == 0)
            return f;
    }
    return NULL;
}

int64_t ir_scope_opset(const IrModel *m, const IrFunction *fn, const char *domain)
{
    for (size_t k = 0; fn && k < fn->n_opsets; k++)
        if (ir_same_domain(fn->opsets[k].domain, domain))
            return fn->opsets[k].has_version ? fn->opsets[k].version : -1;
    return ir_model_opset(m, domain);
}

void ir_model_set_opset(IrModel *m, const char *domain, int64_t version)
{
    for (size_t i = 0; i < m->n_opsets; i++) {
        if (ir_same_domain(m->opsets[i].domain, domain)) {
            m->opsets[i].has_version = true;
            m->opsets[i].version = version;
            return;
        }
    }
    m->opsets = mem_grow(m->opsets, m->n_opsets + 1, sizeof *m->opsets);
    m->opsets[m->n_opsets++] =
        (IrOpset){.domain = mem_strdup(domain ? domain : ""),
                  .has_version = true, .version = version};
}

/* ---- graphs and values ---------------------------------------------- */

IrGraph *ir_graph_new(IrGraph *parent)
{
    IrGraph *g = mem_alloc(sizeof *g);
    g->parent = parent;
    return g;
}

IrValue *ir_graph_find_local(const IrGraph *g, const char *name)
{
    IrValue *v = NULL;
    HASH_FIND_STR(g->values, name, v);
    return v;
}

IrValue *ir_graph_lookup(const IrGraph *g, const char *name)
{
    for (; g; g = g->parent) {
        IrValue *v = ir_graph_find_local(g, name);
        if (v)
            return v;
    }
    return NULL;
}

IrValue *ir_graph_value(IrGraph *g, const char *name)
{
    IrValue *v = ir_graph_find_local(g, name);
    if (v)
        return v;
    v = mem_alloc(sizeof *v);
    v->name = mem_strdup(name);
    v->graph = g;
    HASH_ADD_KEYPTR(hh, g->values, v->name, strlen(v->name), v);
    return v;
}

/* Stops a walk at a graph where `name` is taken. */
static int ir_name_taken_in(const IrGraph *g, const IrWalkAt *at, void *name)
{
    return ir_graph_find_local(g, name) != NULL;
}

/* True when `name` is taken in g, an enclosing graph, or a subgraph of g. */
static bool ir_name_taken_below(const IrGraph *g, const char *name)
{
    if (!g->may_nest)
        return ir_graph_find_local(g, name) != NULL;
    return ir_graph_each_subgraph_const(g, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, ir_name_taken_in,
                                        (void *)name) != 0;
}

char *ir_graph_fresh_name(const IrGraph *g, const char *base)
{
    size_t cap = strlen(base) + 32;
    char *s = mem_alloc(cap);
    const IrGraph *top = g;
    while (top->parent)
        top = top->parent;
    for (unsigned long i = 0;; i++) {
        snprintf(s, cap, i ? "%s_%lu" : "%s", base, i);
        if (!ir_name_taken_below(top, s))
            return s;
    }
}

/* The graph a use sits in. */
static IrGraph *ir_use_graph(const IrUse *u)
{
    return u->node ? u->node->graph : u->graph;
}

/* True when, seen from graph g (nested in v->graph), `name` would mean a
 * value other than what v's uses expect: some graph between g and
 * v->graph defines it. */
static bool ir_name_captured(const IrGraph *g, const IrGraph *home,
                             const char *name)
{
    for (; g && g != home; g = g->parent)
        if (ir_graph_find_local(g, name))
            return true;
    return false;
}

/* Renames the quantization annotations of g that mention `from`. */
static void ir_qann_rename(IrGraph *g, const char *from, const char *to)
{
    for (size_t i = 0; i < g->n_qann; i++) {
        IrTensorAnn *a = &g->qann[i];
        if (a->tensor_name && !strcmp(a->tensor_name, from)) {
            free(a->tensor_name);
            a->tensor_name = mem_strdup(to);
        }
        for (size_t k = 0; k < a->params.n; k++) {
            char **val = &a->params.p[k].value;
            if (*val && !strcmp(*val, from)) {
                free(*val);
                *val = mem_strdup(to);
            }
        }
    }
}

int ir_value_rename(IrValue *v, const char *name, IrError *err)
{
    if (!strcmp(v->name, name))
        return 0;
    if (ir_graph_find_local(v->graph, name))
        return ir_fail(err, "cannot rename value '%s' to '%s': name taken",
                       v->name, name);
    for (size_t i = 0; i < v->n_uses; i++)
        if (ir_name_captured(ir_use_graph(&v->uses[i]), v->graph, name))
            return ir_fail(err, "cannot rename value '%s' to '%s': a "
                           "subgraph that reads it defines that name",
                           v->name, name);
    ir_qann_rename(v->graph, v->name, name);
    HASH_DEL(v->graph->values, v);
    free(v->name);
    v->name = mem_strdup(name);
    HASH_ADD_KEYPTR(hh, v->graph->values, v->name, strlen(v->name), v);
    if (v->init) {
        free(v->init->name);
        v->init->name = mem_strdup(name);
    }
    if (v->sparse_init && v->sparse_init->values) {
        free(v->sparse_init->values->name);
        v->sparse_init->values->name = mem_strdup(name);
    }
    return 0;
}

/* Points output `index` of subgraph g at v, keeping use lists right. */
static void ir_graph_set_output(IrGraph *g, size_t index, IrValue *v)
{
    IrValueInfo *vi = g->outputs.p[index];
    if (vi->value->graph != g)
        ir_use_remove(vi->value, NULL, index, g);
    vi->value = v;
    if (v->graph != g)
        ir_use_add(v, NULL, index, g);
}

void ir_graph_point_output(IrGraph *g, size_t index, IrValue *v)
{
    IrValue *old = ((IrValueInfo *)g->outputs.p[index])->value;
    if (old == v)
        return;
    ir_graph_set_output(g, index, v);
    old->n_infos--;
    v->n_infos++;
}

int ir_value_replace_uses(IrValue *from, IrValue *to, IrError *err)
{
    if (from == to)
        return 0;
    for (size_t i = 0; i < from->n_uses; i++) {
        IrGraph *ug = ir_use_graph(&from->uses[i]);
        if (ir_graph_lookup(ug, to->name) != to)
            return ir_fail(err, "cannot replace '%s' by '%s': in a subgraph "
                           "that reads it, '%s' names another value",
                           from->name, to->name, to->name);
    }
    while (from->n_uses) {
        IrUse u = from->uses[from->n_uses - 1];
        if (u.node)
            ir_node_set_input(u.node, u.index, to);
        else
            ir_graph_set_output(u.graph, u.index, to);
    }
    return 0;
}

bool ir_value_is_graph_output(const IrValue *v)
{
    const IrPtrList *l = &v->graph->outputs;
    for (size_t i = 0; i < l->n; i++)
        if (((IrValueInfo *)l->p[i])->value == v)
            return true;
    return false;
}

void ir_value_drop_if_unused(IrValue *v)
{
    if (v->n_uses || v->producer || v->init || v->sparse_init ||
        v->kind == IR_VAL_INPUT || v->n_infos)
        return;
    HASH_DEL(v->graph->values, v);
    ir_value_free(v);
}

size_t ir_graph_drop_unused_inits(IrGraph *g)
{
    size_t n = 0;
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

static IrValueInfo *ir_valueinfo_new(IrValue *v, IrType *type)
{
    IrValueInfo *vi = mem_alloc(sizeof *vi);
    vi->value = v;
    vi->type = type;
    v->n_infos++;
    return vi;
}

IrValueInfo *ir_graph_add_input(IrGraph *g, const char *name, IrType *type)
{
    IrValue *v = ir_graph_value(g, name);
    if (v->kind == IR_VAL_INPUT || v->kind == IR_VAL_NODE)
        return NULL;
    v->kind = IR_VAL_INPUT;
    IrValueInfo *vi = ir_valueinfo_new(v, type);
    ir_ptrlist_push(&g->inputs, vi);
    return vi;
}

IrValueInfo *ir_graph_add_output(IrGraph *g, IrValue *v, IrType *type)
{
    IrValueInfo *vi = ir_valueinfo_new(v, type);
    ir_ptrlist_push(&g->outputs, vi);
    if (v->graph != g)
        ir_use_add(v, NULL, g->outputs.n - 1, g);
    return vi;
}

IrValueInfo *ir_graph_add_value_info(IrGraph *g, IrValue *v, IrType *type)
{
    IrValueInfo *vi = ir_valueinfo_new(v, type);
    ir_ptrlist_push(&g->value_info, vi);
    return vi;
}

void ir_strmap_set(IrStrMap *m, const char *key, const char *value)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->p[i].key && !strcmp(m->p[i].key, key)) {
            free(m->p[i].value);
            m->p[i].value = mem_strdup(value);
            return;
        }
    }
    m->p = mem_grow(m->p, m->n + 1, sizeof *m->p);
    m->p[m->n++] = (IrStrPair){mem_strdup(key), mem_strdup(value), {0, NULL}};
}

IrValue *ir_graph_add_init(IrGraph *g, IrTensor *t)
{
    IrValue *v = ir_graph_value(g, t->name ? t->name : "");
    if (v->init || v->kind == IR_VAL_NODE)
        return NULL;
    if (v->kind == IR_VAL_UNDEF)
        v->kind = IR_VAL_INIT;
    v->init = t;
    ir_ptrlist_push(&g->inits, t);
    return v;
}

/* ---- nodes ---------------------------------------------------------- */

static void ir_node_link(IrGraph *g, IrNode *n, IrNode *before)
{
    n->graph = g;
    if (!before) {
        n->prev = g->last;
        n->next = NULL;
        if (g->last)
            g->last->next = n;
        else
            g->first = n;
        g->last = n;
    } else {
        n->next = before;
        n->prev = before->prev;
        if (before->prev)
            before->prev->next = n;
        else
            g->first = n;
        before->prev = n;
    }
    g->n_nodes++;
}

/* Takes n out of the list; n->next is left pointing on so that a walk
 * standing on n can continue. */
static void ir_node_unlink(IrNode *n)
{
    IrGraph *g = n->graph;
    if (n->prev)
        n->prev->next = n->next;
    else
        g->first = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        g->last = n->prev;
    n->prev = NULL;
    g->n_nodes--;
}

/* The first output name of out[0..n) that an earlier one repeats, or
 * NULL: pairwise for the usual few, by hash past that (a Split of 100k
 * outputs must not take 5e9 comparisons). */
static const char *ir_node_out_twice(size_t n, const char *const *out)
{
    const char *twice = NULL;
    if (n <= 16) {
        for (size_t i = 0; i < n && !twice; i++)
            for (size_t j = 0; j < i && !twice; j++)
                if (out[i][0] && !strcmp(out[i], out[j]))
                    twice = out[i];
        return twice;
    }
    KsSet seen = {0};
    for (size_t i = 0; i < n && !twice; i++)
        if (out[i][0] && !ks_add(&seen, &out[i], 1, 0))
            twice = out[i];
    ks_free(&seen);
    return twice;
}

IrNode *ir_node_new(IrGraph *g, IrNode *before, const char *op_type,
                    const char *domain, const char *name,
                    size_t n_in, const char *const *in,
                    size_t n_out, const char *const *out, IrError *err)
{
    const char *twice = ir_node_out_twice(n_out, out);
    if (twice) {
        ir_fail(err, "node '%s' (%s): output '%s' is already defined",
                name ? name : "", op_type, twice);
        return NULL;
    }
    for (size_t i = 0; i < n_out; i++) {
        if (!out[i][0])
            continue;
        IrValue *v = ir_graph_find_local(g, out[i]);
        if (v && v->kind != IR_VAL_UNDEF) {
            ir_fail(err, "node '%s' (%s): output '%s' is already defined",
                    name ? name : "", op_type, out[i]);
            return NULL;
        }
    }
    IrNode *n = mem_alloc(sizeof *n);
    n->op_type = mem_strdup(op_type);
    n->domain = mem_strdup(domain);
    n->name = mem_strdup(name);
    ir_node_link(g, n, before);
    n->in = mem_array(n_in ? n_in : 1, sizeof *n->in);
    n->cap_in = n_in ? n_in : 1;
    n->n_in = n_in;
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i][0])
            continue;
        IrValue *v = ir_graph_lookup(g, in[i]);
        if (!v)
            v = ir_graph_value(g, in[i]);
        n->in[i] = v;
        ir_use_add(v, n, i, NULL);
    }
    n->out = mem_array(n_out ? n_out : 1, sizeof *n->out);
    n->n_out = n_out;
    for (size_t i = 0; i < n_out; i++) {
        if (!out[i][0])
            continue;
        IrValue *v = ir_graph_value(g, out[i]);
        v->kind = IR_VAL_NODE;
        v->producer = n;
        v->producer_index = i;
        n->out[i] = v;
    }
    return n;
}

void ir_node_set_input(IrNode *n, size_t i, IrValue *v)
{
    if (n->in[i])
        ir_use_remove(n->in[i], n, i, NULL);
    n->in[i] = v;
    if (v)
        ir_use_add(v, n, i, NULL);
}

void ir_node_add_input(IrNode *n, IrValue *v)
{
    if (n->n_in >= n->cap_in) {
        n->cap_in = n->n_in ? n->n_in * 2 : 2;
        n->in = mem_grow(n->in, n->cap_in, sizeof *n->in);
    }
    n->in[n->n_in] = NULL;
    n->n_in++;
    ir_node_set_input(n, n->n_in - 1, v);
}

void ir_node_delete(IrNode *n)
{
    if (n->dead)
        return;
    for (size_t i = 0; i < n->n_in; i++) {
        IrValue *v = n->in[i];
        if (!v)
            continue;
        ir_use_remove(v, n, i, NULL);
        n->in[i] = NULL;
        ir_value_drop_if_unused(v);
    }
    for (size_t a = 0; a < n->n_attr; a++) {
        IrAttr *at = n->attr[a];
        if (at->g)
            ir_graph_detach_outer_uses(at->g);
        for (size_t k = 0; k < at->n_graphs; k++)
            ir_graph_detach_outer_uses(at->graphs[k]);
    }
    for (size_t i = 0; i < n->n_out; i++) {
        IrValue *v = n->out[i];
        if (!v)
            continue;
        v->producer = NULL;
        v->kind = v->init ? IR_VAL_INIT : IR_VAL_UNDEF;
        n->out[i] = NULL;
        ir_value_drop_if_unused(v);
    }
    ir_node_unlink(n);
    n->dead = true;
    ir_ptrlist_push(&n->graph->dead, n);
}

void ir_node_take_output(IrNode *n, size_t i, IrNode *from, size_t j)
{
    IrValue *v = from->out[j];
    from->out[j] = NULL;
    IrValue *old = n->out[i];
    if (old && old != v) {
        old->producer = NULL;
        old->kind = old->init ? IR_VAL_INIT : IR_VAL_UNDEF;
        ir_value_drop_if_unused(old);
    }
    n->out[i] = v;
    if (v) {
        v->kind = IR_VAL_NODE;
        v->producer = n;
        v->producer_index = i;
    }
}

void ir_node_move_before(IrNode *n, IrNode *before)
{
    if (n == before)
        return;
    ir_node_unlink(n);
    ir_node_link(n->graph, n, before);
}

IrNode *ir_walk_first(const IrGraph *g)
{
    IrNode *n = g->first;
    return n && n->dead ? ir_walk_next(n) : n;
}

IrNode *ir_walk_next(const IrNode *n)
{
    IrNode *p = n->next;
    while (p && p->dead)
        p = p->next;
    return p;
}

/* Frees the nodes deleted since the last collect. Their subgraphs' outer
 * uses were detached at delete time. */
void ir_graph_collect(IrGraph *g)
{
    for (size_t i = 0; i < g->dead.n; i++)
        ir_node_free_fields(g->dead.p[i]);
    g->dead.n = 0;
}

IrAttr *ir_node_attr(const IrNode *n, const char *name)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->name && !strcmp(n->attr[i]->name, name))
            return n->attr[i];
    return NULL;
}

void ir_node_set_attr(IrNode *n, IrAttr *a)
{
    if (a->g || a->n_graphs)
        n->graph->may_nest = true;
    if (a->g) {
        a->g->owner = n;
        a->g->parent = n->graph;
    }
    for (size_t k = 0; k < a->n_graphs; k++) {
        a->graphs[k]->owner = n;
        a->graphs[k]->parent = n->graph;
    }
    for (size_t i = 0; i < n->n_attr; i++) {
        if (n->attr[i]->name && a->name && !strcmp(n->attr[i]->name, a->name)) {
            ir_attr_free(n->attr[i]);
            n->attr[i] = a;
            return;
        }
    }
    n->attr = mem_grow(n->attr, n->n_attr + 1, sizeof *n->attr);
    n->attr[n->n_attr++] = a;
}

bool ir_node_remove_attr(IrNode *n, const char *name)
{
    for (size_t i = 0; i < n->n_attr; i++) {
        if (n->attr[i]->name && !strcmp(n->attr[i]->name, name)) {
            ir_attr_free(n->attr[i]);
            memmove(n->attr + i, n->attr + i + 1,
                    (n->n_attr - i - 1) * sizeof *n->attr);
            n->n_attr--;
            return true;
        }
    }
    return false;
}

static IrAttr *ir_attr_new(const char *name, int type)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->has_type = true;
    a->type = type;
    return a;
}

IrAttr *ir_attr_int(const char *name, int64_t v)
{
    IrAttr *a = ir_attr_new(name, IR_AT_INT);
    a->has_i = true;
    a->i = v;
    return a;
}

IrAttr *ir_attr_float(const char *name, float v)
{
    IrAttr *a = ir_attr_new(name, IR_AT_FLOAT);
    a->has_f = true;
    a->f = v;
    return a;
}

IrAttr *ir_attr_ints(const char *name, size_t n, const int64_t *v)
{
    IrAttr *a = ir_attr_new(name, IR_AT_INTS);
    a->n_ints = n;
    a->ints = mem_array(n ? n : 1, sizeof *a->ints);
    if (n)
        memcpy(a->ints, v, n * sizeof *v);
    return a;
}

IrAttr *ir_attr_floats(const char *name, size_t n, const float *v)
{
    IrAttr *a = ir_attr_new(name, IR_AT_FLOATS);
    a->n_floats = n;
    a->floats = mem_array(n ? n : 1, sizeof *a->floats);
    if (n)
        memcpy(a->floats, v, n * sizeof *v);
    return a;
}

IrAttr *ir_attr_string(const char *name, const char *s)
{
    IrAttr *a = ir_attr_new(name, IR_AT_STRING);
    a->has_s = true;
    a->s.len = strlen(s);
    a->s.data = mem_alloc(a->s.len + 1);
    memcpy(a->s.data, s, a->s.len);
    return a;
}

IrAttr *ir_attr_strings(const char *name, size_t n, const char *const *v)
{
    IrAttr *a = ir_attr_new(name, IR_AT_STRINGS);
    a->n_strings = n;
    a->strings = mem_array(n ? n : 1, sizeof *a->strings);
    for (size_t i = 0; i < n; i++) {
        a->strings[i].len = strlen(v[i]);
        a->strings[i].data = mem_alloc(a->strings[i].len + 1);
        memcpy(a->strings[i].data, v[i], a->strings[i].len);
    }
    return a;
}

IrAttr *ir_attr_tensor(const char *name, IrTensor *t)
{
    IrAttr *a = ir_attr_new(name, IR_AT_TENSOR);
    a->t = t;
    return a;
}

IrAttr *ir_attr_graph(const char *name, IrGraph *g)
{
    IrAttr *a = ir_attr_new(name, IR_AT_GRAPH);
    a->g = g;
    return a;
}

IrTensor *ir_tensor_new(const char *name, int32_t dtype, size_t ndims,
                        const int64_t *dims, const void *data, size_t bytes)
{
    IrTensor *t = mem_alloc(sizeof *t);
    t->name = mem_strdup(name);
    t->has_data_type = true;
    t->data_type = dtype;
    t->ndims = ndims;
    t->dims = mem_array(ndims ? ndims : 1, sizeof *t->dims);
    if (ndims)
        memcpy(t->dims, dims, ndims * sizeof *dims);
    t->has_raw = true;
    t->raw.len = bytes;
    t->raw.data = mem_alloc(bytes);
    if (bytes)
        memcpy(t->raw.data, data, bytes);
    return t;
}

IrType *ir_type_tensor(int32_t elem_type, size_t rank, const int64_t *dims)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_TENSOR;
    t->has_elem_type = true;
    t->elem_type = elem_type;
    t->shape = mem_alloc(sizeof *t->shape);
    t->shape->rank = rank;
    t->shape->dims = mem_array(rank ? rank : 1, sizeof(IrDim));
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] >= 0) {
            t->shape->dims[i].kind = IR_DIM_VALUE;
            t->shape->dims[i].value = dims[i];
        }
    }
    return t;
}

static int ir_count_one(const IrGraph *g, const IrWalkAt *at, void *c)
{
    (*(size_t *)c)++;
    return 0;
}

size_t ir_graph_count_subgraphs(const IrGraph *g)
{
    size_t c = 0;
    ir_graph_each_subgraph_const(g, IR_WALK_SUBGRAPHS, ir_count_one, &c);
    return c;
}

/* ---- copies of types ----------------------------------------------- */

void ir_unknown_copy(IrUnknown *dst, const IrUnknown *src)
{
    dst->n = src->n;
    dst->f = src->n ? mem_array(src->n, sizeof *dst->f) : NULL;
    for (size_t i = 0; i < src->n; i++) {
        dst->f[i] = src->f[i];
        dst->f[i].data = NULL;
        if (src->f[i].len) {
            dst->f[i].data = mem_alloc(src->f[i].len);
            memcpy(dst->f[i].data, src->f[i].data, src->f[i].len);
        }
    }
}

IrShape *ir_shape_new(size_t rank)
{
    IrShape *s = mem_alloc(sizeof *s);
    s->rank = rank;
    s->dims = mem_array(rank ? rank : 1, sizeof(IrDim));
    return s;
}

IrShape *ir_shape_copy(const IrShape *src)
{
    if (!src)
        return NULL;
    IrShape *s = ir_shape_new(src->rank);
    for (size_t i = 0; i < src->rank; i++) {
        s->dims[i].kind = src->dims[i].kind;
        s->dims[i].value = src->dims[i].value;
        s->dims[i].param = mem_strdup(src->dims[i].param);
        s->dims[i].denotation = mem_strdup(src->dims[i].denotation);
        ir_unknown_copy(&s->dims[i].unk, &src->dims[i].unk);
    }
    ir_unknown_copy(&s->unk, &src->unk);
    return s;
}

IrType *ir_type_copy(const IrType *src)
{
    if (!src)
        return NULL;
    IrType *t = mem_alloc(sizeof *t);
    t->kind = src->kind;
    t->has_elem_type = src->has_elem_type;
    t->elem_type = src->elem_type;
    t->shape = ir_shape_copy(src->shape);
    t->elem = ir_type_copy(src->elem);
    t->has_key_type = src->has_key_type;
    t->key_type = src->key_type;
    t->opaque_domain = mem_strdup(src->opaque_domain);
    t->opaque_name = mem_strdup(src->opaque_name);
    t->denotation = mem_strdup(src->denotation);
    ir_unknown_copy(&t->inner_unk, &src->inner_unk);
    ir_unknown_copy(&t->unk, &src->unk);
    return t;
}

/* Clears one graph's values (each graph's are its own: any order does). */
static int ir_clear_inferred_one(IrGraph *g, const IrWalkAt *at, void *arg)
{
    for (IrValue *v = g->values; v; v = v->hh.next) {
        ir_type_free(v->type);
        v->type = NULL;
        ir_shape_free(v->symval);
        v->symval = NULL;
        ir_tensor_free(v->known);
        v->known = NULL;
        v->known_input = false;
    }
    return 0;
}

void ir_graph_clear_inferred(IrGraph *g)
{
    ir_graph_each_subgraph(g, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, ir_clear_inferred_one, NULL);
}

size_t ir_graph_drop_stale_info(IrGraph *g)
{
    size_t n = 0;
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

bool ir_type_static_dims(const IrType *t, int64_t *dims, size_t cap, size_t *rank)
{
    if (!t || t->kind != IR_TYPE_TENSOR || !t->shape || t->shape->rank > cap)
        return false;
    for (size_t i = 0; i < t->shape->rank; i++) {
        if (t->shape->dims[i].kind != IR_DIM_VALUE || t->shape->dims[i].value < 0)
            return false;
        dims[i] = t->shape->dims[i].value;
    }
    *rank = t->shape->rank;
    return true;
}

bool ir_dim_minus_one(const IrDim *d)
{
    return d->kind == IR_DIM_VALUE && d->value == -1;
}
