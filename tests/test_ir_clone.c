/*
 * test_ir_clone.c - deep copies of the IR (src/ir/clone.h).
 *
 * - every model of testdata/ and of the ONNX backend data: loaded, cloned,
 *   the original freed, the clone saved; the bytes must be those of a
 *   freshly loaded original saved, and the clone's graphs must have the
 *   loader's structure (value tables in order, uses, where each input's
 *   value lives);
 * - a model built here with every field of ir.h set: the same, plus the
 *   inference results a save does not show;
 * - a clone edited (node deleted, value renamed, attribute changed,
 *   initializer replaced, bytes overwritten) leaves the original's bytes;
 * - ir_function_clone, ir_graph_clone and ir_attr_clone of graphs that read
 *   values of an enclosing graph keep what those names mean;
 * - external data: the clone keeps its own copy, saves the same side file
 *   (twice: save releases pages behind its writes) and survives the
 *   original's files being replaced.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus.h"
#include "io/load.h"
#include "io/save.h"
#include "ir/clone.h"
#include "t.h"

/* Stops the test where going on would only crash; one failure. */
static void need(int ok, const char *what)
{
    if (ok)
        return;
    fprintf(stderr, "FATAL: %s\n", what);
    t_failed++;
    exit(t_done("test_ir_clone"));
}

/* m's bytes (malloc'd into *b), or NULL with the reason printed. */
static uint8_t *saved(const IrModel *m, size_t *n, const char *what)
{
    uint8_t *b = NULL;
    IrError err = {{0}};
    if (save_model_buffer(m, &b, n, &err) < 0) {
        fprintf(stderr, "%s: save failed: %s\n", what, err.msg);
        return NULL;
    }
    return b;
}

/* Whether two byte strings are equal; says where they part when not. */
static bool same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb,
                       const char *what)
{
    if (a && b && na == nb && !memcmp(a, b, na))
        return true;
    size_t i = 0;
    while (a && b && i < na && i < nb && a[i] == b[i])
        i++;
    fprintf(stderr, "%s: %zu vs %zu bytes, first difference at %zu\n", what, na, nb, i);
    return false;
}

/* ---- structure as the loader builds it --------------------------------- */

/* How many scopes up from g the graph `home` is, or -1. */
static int hops(const IrGraph *g, const IrGraph *home)
{
    int k = 0;
    for (; g && g != home; g = g->parent)
        k++;
    return g ? k : -1;
}

/* Whether each use of v (of clone graph b) points back at v. */
static bool uses_ok(const IrValue *v)
{
    for (size_t i = 0; i < v->n_uses; i++) {
        const IrUse *u = &v->uses[i];
        const IrValue *at = u->node ? (u->index < u->node->n_in ? u->node->in[u->index] : NULL)
                            : u->index < u->graph->outputs.n
                                ? ((IrValueInfo *)u->graph->outputs.p[u->index])->value
                                : NULL;
        if (at != v)
            return false;
    }
    return true;
}

/* The value tables of a (loaded) and b (cloned), in order. */
static bool same_values(const IrGraph *a, const IrGraph *b, char *why, size_t cap)
{
    const IrValue *v = a->values, *w = b->values;
    for (; v && w; v = v->hh.next, w = w->hh.next) {
        if (strcmp(v->name, w->name) || v->kind != w->kind || v->n_uses != w->n_uses ||
            v->n_infos != w->n_infos || !v->init != !w->init ||
            !v->sparse_init != !w->sparse_init || !v->producer != !w->producer ||
            (v->producer && v->producer_index != w->producer_index)) {
            snprintf(why, cap, "value '%s' / '%s' differs", v->name, w->name);
            return false;
        }
        if (w->graph != b || !uses_ok(w) || (w->producer && w->producer->graph != b)) {
            snprintf(why, cap, "value '%s' of the clone is not wired to its graph", w->name);
            return false;
        }
    }
    if (v || w)
        snprintf(why, cap, "value tables of graph '%s' differ in length",
                 a->name ? a->name : "");
    return !v && !w;
}

static bool same_graph(const IrGraph *a, const IrGraph *b, char *why, size_t cap);

/* Node n (loaded) and k (cloned): inputs by name and scope, subgraphs. */
static bool same_node(const IrNode *n, const IrNode *k, char *why, size_t cap)
{
    bool ok = n->n_in == k->n_in && n->n_attr == k->n_attr && n->n_out == k->n_out;
    for (size_t i = 0; ok && i < n->n_in; i++)
        ok = !n->in[i] == !k->in[i] &&
             (!n->in[i] || (!strcmp(n->in[i]->name, k->in[i]->name) &&
                            hops(n->graph, n->in[i]->graph) == hops(k->graph, k->in[i]->graph)));
    for (size_t i = 0; ok && i < n->n_attr; i++) {
        const IrAttr *x = n->attr[i], *y = k->attr[i];
        ok = !x->g == !y->g && x->n_graphs == y->n_graphs;
        if (ok && x->g)
            ok = y->g->owner == k && y->g->parent == k->graph && same_graph(x->g, y->g, why, cap);
        for (size_t j = 0; ok && j < x->n_graphs; j++)
            ok = y->graphs[j]->owner == k && y->graphs[j]->parent == k->graph &&
                 same_graph(x->graphs[j], y->graphs[j], why, cap);
    }
    if (!ok && !why[0])
        snprintf(why, cap, "node '%s' (%s) differs", n->name ? n->name : "",
                 n->op_type ? n->op_type : "");
    return ok;
}

static bool same_graph(const IrGraph *a, const IrGraph *b, char *why, size_t cap)
{
    if (!same_values(a, b, why, cap))
        return false;
    if (a->n_nodes != b->n_nodes || a->outputs.n != b->outputs.n) {
        snprintf(why, cap, "graph '%s': %zu vs %zu nodes", a->name ? a->name : "",
                 a->n_nodes, b->n_nodes);
        return false;
    }
    const IrNode *k = b->first;
    for (const IrNode *n = a->first; n; n = n->next, k = k->next)
        if (!same_node(n, k, why, cap))
            return false;
    return true;
}

/* Every top graph of a (loaded) against b (its clone). */
static bool same_model(const IrModel *a, const IrModel *b, char *why, size_t cap)
{
    why[0] = '\0';
    bool ok = !a->graph == !b->graph && a->n_training == b->n_training &&
              a->n_functions == b->n_functions;
    if (ok && a->graph)
        ok = same_graph(a->graph, b->graph, why, cap);
    for (size_t i = 0; ok && i < a->n_training; i++) {
        const IrTraining *x = &a->training[i], *y = &b->training[i];
        ok = !x->initialization == !y->initialization && !x->algorithm == !y->algorithm &&
             (!x->initialization || same_graph(x->initialization, y->initialization, why, cap)) &&
             (!x->algorithm || same_graph(x->algorithm, y->algorithm, why, cap));
    }
    for (size_t i = 0; ok && i < a->n_functions; i++)
        ok = same_graph(a->functions[i]->body, b->functions[i]->body, why, cap);
    if (!ok && !why[0])
        snprintf(why, cap, "graphs, training or functions differ in number");
    return ok;
}

/* ---- every model file ------------------------------------------------ */

/* Counts over the corpus. */
typedef struct Seen {
    size_t models, borrowed;
} Seen;

static size_t count_borrowed(const IrGraph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->inits.n; i++)
        n += ((IrTensor *)g->inits.p[i])->raw_borrowed;
    return n;
}

/* Load, clone, free the original, save the clone; against a fresh load. */
static void clone_file(const char *path, Seen *seen)
{
    IrModel *m = NULL, *fresh = NULL;
    IrError err = {{0}};
    if (load_model_file(path, NULL, &m, &err) < 0) {
        printf("  note: %s does not load: %s\n", path, err.msg);
        return;
    }
    seen->models++;
    seen->borrowed += m->graph ? count_borrowed(m->graph) : 0;
    IrModel *c = ir_model_clone(m);
    ir_model_free(m);
    size_t n1 = 0, n2 = 0;
    uint8_t *b1 = saved(c, &n1, path);
    need(load_model_file(path, NULL, &fresh, &err) == 0, "a model loads only once");
    uint8_t *b2 = saved(fresh, &n2, path);
    T_CHECK(same_bytes(b1, n1, b2, n2, path), "%s: the clone saves other bytes", path);
    char why[512];
    T_CHECK(same_model(fresh, c, why, sizeof why), "%s: %s", path, why);
    T_CHECK(c->n_maps == fresh->n_maps && c->n_maps && !strcmp(c->maps[0].path, path) &&
            !c->maps[0].base, "%s: the clone does not say where it came from", path);
    free(b1);
    free(b2);
    ir_model_free(c);
    ir_model_free(fresh);
}

/* Whether path is a case's model (each backend case folder has one
 * model.onnx; testdata/ has models of any name). */
static bool is_case_model(const char *path)
{
    const char *slash = strrchr(path, '/');
    return !strncmp(path, "testdata/", 9) || !strcmp(slash ? slash + 1 : path, "model.onnx");
}

static void test_corpus(void)
{
    CorpusList l = {0};
    const char *backend = corpus_backend_root();
    if (!backend)
        T_SKIP("clone: no backend test data ($ONNX_BACKEND_DATA, "
               "../shared/testdata/onnx-backend, /usr/share/libonnx-testdata/data)");
    else if (!corpus_is_dir(backend))
        T_SKIP("clone: %s not found", backend);
    else
        corpus_walk(backend, &l);
    corpus_walk("testdata", &l);
    corpus_sort(&l);
    Seen seen = {0};
    for (size_t i = 0; i < l.n; i++)
        if (is_case_model(l.p[i]))
            clone_file(l.p[i], &seen);
    printf("clone: %zu models, %zu initializers borrowed from their files\n", seen.models,
           seen.borrowed);
    T_CHECK(seen.models >= 2 && seen.borrowed > 0,
            "the corpus has %zu models, %zu borrowed initializers", seen.models, seen.borrowed);
    corpus_free(&l);
}

/* ---- a model with every field ------------------------------------------- */

/* One unknown field (a varint of value salt) at the end of u. */
static void put_unk(IrUnknown *u, unsigned salt)
{
    u->f = mem_grow(u->f, u->n + 1, sizeof *u->f);
    uint8_t *d = mem_alloc(1);
    d[0] = (uint8_t)(salt & 0x7f);
    u->f[u->n++] = (IrUnknownField){900 + salt, 0, 1, d};
}

static void put_meta(IrStrMap *m, const char *key, unsigned salt)
{
    ir_strmap_set(m, key, "v");
    put_unk(&m->p[m->n - 1].unk, salt);
}

/* A float tensor type with a number, a symbol and an unset dimension. */
static IrType *full_type(unsigned salt)
{
    static const int64_t dims[3] = {2, -1, 3};
    IrType *t = ir_type_tensor(IR_FLOAT, 3, dims);
    t->shape->dims[1].kind = IR_DIM_PARAM;
    t->shape->dims[1].param = mem_strdup("N");
    t->shape->dims[0].denotation = mem_strdup("DATA_BATCH");
    put_unk(&t->shape->dims[0].unk, salt);
    put_unk(&t->shape->unk, salt + 1);
    put_unk(&t->inner_unk, salt + 2);
    put_unk(&t->unk, salt + 3);
    t->denotation = mem_strdup("TENSOR");
    return t;
}

/* A type of kind k whose element (if any) is elem. */
static IrType *kind_type(IrTypeKind k, IrType *elem)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = k;
    t->elem = elem;
    return t;
}

static int64_t *i64s(size_t n, int64_t first)
{
    int64_t *v = mem_array(n, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = first + (int64_t)i;
    return v;
}

/* A tensor with every storage field, segment, metadata and unknowns. */
static IrTensor *full_tensor(const char *name, unsigned salt)
{
    static const int64_t dim = 2;
    const float raw[2] = {1.5f, -2.0f};
    IrTensor *t = ir_tensor_new(name, IR_FLOAT, 1, &dim, raw, sizeof raw);
    t->doc_string = mem_strdup("tensor doc");
    t->segment = mem_alloc(sizeof *t->segment);
    *t->segment = (IrSegment){true, true, 0, 2, {0, NULL}};
    put_unk(&t->segment->unk, salt);
    t->n_float = 1;
    t->float_data = mem_alloc(sizeof(float));
    t->n_int32 = 2;
    t->int32_data = mem_array(2, sizeof(int32_t));
    t->n_int64 = 3;
    t->int64_data = i64s(3, 7);
    t->n_double = 1;
    t->double_data = mem_alloc(sizeof(double));
    t->n_uint64 = 1;
    t->uint64_data = mem_alloc(sizeof(uint64_t));
    t->n_string = 1;
    t->string_data = mem_alloc(sizeof(IrBytes));
    t->string_data[0] = (IrBytes){2, (uint8_t *)mem_strdup("ab")};
    t->has_data_location = true;
    put_meta(&t->meta, "tensor_key", salt + 1);
    put_unk(&t->unk, salt + 2);
    return t;
}

static IrSparse *full_sparse(const char *name, unsigned salt)
{
    IrSparse *s = mem_alloc(sizeof *s);
    s->values = full_tensor(name, salt);
    static const int64_t one = 1, idx = 0;
    s->indices = ir_tensor_new(NULL, IR_INT64, 1, &one, &idx, sizeof idx);
    s->ndims = 2;
    s->dims = i64s(2, 4);
    put_unk(&s->unk, salt + 3);
    return s;
}

/* An attribute of `type` with nothing set, for the lists built by hand. */
static IrAttr *bare_attr(const char *name, int type)
{
    IrAttr *a = mem_alloc(sizeof *a);
    a->name = mem_strdup(name);
    a->has_type = true;
    a->type = type;
    return a;
}

static void put_devcfg(IrNode *n)
{
    n->n_devcfg = 1;
    n->devcfg = mem_alloc(sizeof *n->devcfg);
    IrNodeDevCfg *d = n->devcfg;
    d->configuration_id = mem_strdup("cfg");
    d->has_pipeline_stage = true;
    d->pipeline_stage = 1;
    d->n_specs = 1;
    d->specs = mem_alloc(sizeof *d->specs);
    IrShardSpec *s = d->specs;
    s->tensor_name = mem_strdup("r");
    s->n_device = 2;
    s->device = i64s(2, 0);
    s->n_groups = 1;
    s->groups = mem_alloc(sizeof *s->groups);
    *s->groups = (IrIntList){true, 5, 2, i64s(2, 0), {0, NULL}};
    put_unk(&s->groups->unk, 40);
    s->n_dims = 1;
    s->dims = mem_alloc(sizeof *s->dims);
    s->dims->has_axis = true;
    s->dims->n = 2;
    s->dims->simple = mem_array(2, sizeof *s->dims->simple);
    s->dims->simple[0] = (IrSimpleShard){IR_DIM_VALUE, 4, NULL, true, 2, {0, NULL}};
    s->dims->simple[1] = (IrSimpleShard){IR_DIM_PARAM, 0, mem_strdup("S"), false, 0, {0, NULL}};
    put_unk(&s->dims->simple[1].unk, 41);
    put_unk(&s->dims->unk, 42);
    put_unk(&s->unk, 43);
    put_unk(&d->unk, 44);
}

static IrNode *mk(IrGraph *g, const char *op, const char *name, size_t n_in,
                  const char *const *in, size_t n_out, const char *const *out)
{
    IrError err = {{0}};
    IrNode *n = ir_node_new(g, NULL, op, "", name, n_in, in, n_out, out, &err);
    if (!n)
        fprintf(stderr, "ir_node_new(%s): %s\n", op, err.msg);
    need(n != NULL, "ir_node_new failed");
    return n;
}

/* A branch nested in g: Identity of g's x, returning that and x itself,
 * with a value_info naming x. */
static IrGraph *outer_reader(IrGraph *g, const char *out)
{
    IrGraph *sub = ir_graph_new(g);
    sub->name = mem_strdup(out);
    IrNode *n = mk(sub, "Identity", out, 1, (const char *[]){"x"}, 1, (const char *[]){out});
    ir_graph_add_output(sub, n->out[0], full_type(60));
    IrValue *x = ir_graph_lookup(g, "x");
    ir_graph_add_output(sub, x, NULL);
    ir_graph_add_value_info(sub, x, full_type(64));
    return sub;
}

/* Every kind of attribute value, on node n of graph g. */
static void put_attrs(IrNode *n, IrGraph *g)
{
    ir_node_set_attr(n, ir_attr_float("f", 0.5f));
    IrAttr *i = ir_attr_int("i", 3);
    i->doc_string = mem_strdup("attr doc");
    put_unk(&i->unk, 50);
    ir_node_set_attr(n, i);
    ir_node_set_attr(n, ir_attr_string("s", "text"));
    ir_node_set_attr(n, ir_attr_tensor("t", full_tensor(NULL, 51)));
    ir_node_set_attr(n, ir_attr_graph("then_branch", outer_reader(g, "b0")));
    ir_node_set_attr(n, ir_attr_floats("fs", 2, (const float[]){1, 2}));
    ir_node_set_attr(n, ir_attr_ints("is", 3, (const int64_t[]){1, 2, 3}));
    ir_node_set_attr(n, ir_attr_strings("ss", 2, (const char *[]){"a", "b"}));
    IrAttr *ts = bare_attr("ts", IR_AT_TENSORS);
    ts->n_tensors = 2;
    ts->tensors = mem_array(2, sizeof *ts->tensors);
    ts->tensors[0] = full_tensor("t0", 52);
    ts->tensors[1] = full_tensor(NULL, 53);
    ir_node_set_attr(n, ts);
    IrAttr *gs = bare_attr("gs", IR_AT_GRAPHS);
    gs->n_graphs = 2;
    gs->graphs = mem_array(2, sizeof *gs->graphs);
    gs->graphs[0] = outer_reader(g, "b1");
    gs->graphs[1] = outer_reader(g, "b2");
    ir_node_set_attr(n, gs);
    IrAttr *sp = bare_attr("sp", IR_AT_SPARSE_TENSOR);
    sp->sparse_tensor = full_sparse("spv", 54);
    ir_node_set_attr(n, sp);
    IrAttr *sps = bare_attr("sps", IR_AT_SPARSE_TENSORS);
    sps->n_sparse = 1;
    sps->sparse_tensors = mem_alloc(sizeof *sps->sparse_tensors);
    sps->sparse_tensors[0] = full_sparse("spw", 55);
    ir_node_set_attr(n, sps);
    IrAttr *tp = bare_attr("tp", IR_AT_TYPE_PROTO);
    tp->tp = full_type(56);
    ir_node_set_attr(n, tp);
    IrAttr *tps = bare_attr("tps", IR_AT_TYPE_PROTOS);
    tps->n_tps = 2;
    tps->type_protos = mem_array(2, sizeof *tps->type_protos);
    tps->type_protos[0] = kind_type(IR_TYPE_SEQUENCE, full_type(57));
    tps->type_protos[1] = kind_type(IR_TYPE_OPAQUE, NULL);
    tps->type_protos[1]->opaque_domain = mem_strdup("d");
    tps->type_protos[1]->opaque_name = mem_strdup("o");
    ir_node_set_attr(n, tps);
}

/* Function "fn" (domain test, overload o1): y = If(...) whose branch reads
 * the body's input a, and a Neg whose alpha refers to the call's. */
static IrFunction *full_function(void)
{
    IrFunction *f = mem_alloc(sizeof *f);
    f->name = mem_strdup("fn");
    f->domain = mem_strdup("test");
    f->overload = mem_strdup("o1");
    f->doc_string = mem_strdup("function doc");
    IrGraph *b = f->body = ir_graph_new(NULL);
    b->is_function = true;
    ir_graph_add_input(b, "a", NULL);
    IrNode *neg = mk(b, "Neg", "neg", 1, (const char *[]){"a"}, 1, (const char *[]){"na"});
    IrAttr *ref = ir_attr_float("alpha", 0);
    ref->has_f = false;
    ref->ref_attr_name = mem_strdup("alpha");
    ir_node_set_attr(neg, ref);
    IrNode *iff = mk(b, "If", "if", 1, (const char *[]){"na"}, 1, (const char *[]){"y"});
    IrGraph *br = ir_graph_new(b);
    IrNode *id = mk(br, "Identity", "id", 1, (const char *[]){"a"}, 1, (const char *[]){"z"});
    ir_graph_add_output(br, id->out[0], NULL);
    ir_node_set_attr(iff, ir_attr_graph("then_branch", br));
    ir_graph_add_output(b, iff->out[0], NULL);
    ir_graph_add_value_info(b, neg->out[0], full_type(70));
    f->n_attr_names = 1;
    f->attr_names = mem_alloc(sizeof *f->attr_names);
    f->attr_names[0] = mem_strdup("alpha");
    f->n_attr = 2;
    f->attr = mem_array(2, sizeof *f->attr);
    f->attr[0] = ir_attr_float("beta", 2);
    f->attr[1] = ir_attr_tensor("gamma", full_tensor(NULL, 71));
    f->n_opsets = 1;
    f->opsets = mem_alloc(sizeof *f->opsets);
    f->opsets[0] = (IrOpset){mem_strdup(""), true, 21, {0, NULL}};
    put_unk(&f->opsets[0].unk, 72);
    put_meta(&f->meta, "fn_key", 73);
    put_unk(&f->unk, 74);
    return f;
}

/* The main graph: inputs of every type kind, a dense and a sparse
 * initializer, x -> Relu -> r -> Custom (every attribute) -> c1, c2;
 * c1 -> fn -> f1; outputs f1, c2, x; value_info and annotations. */
static IrGraph *full_graph(void)
{
    IrGraph *g = ir_graph_new(NULL);
    g->name = mem_strdup("main");
    g->doc_string = mem_strdup("graph doc");
    IrValueInfo *xi = ir_graph_add_input(g, "x", full_type(1));
    xi->doc_string = mem_strdup("input doc");
    put_meta(&xi->meta, "in_key", 5);
    put_unk(&xi->unk, 6);
    ir_graph_add_input(g, "s", kind_type(IR_TYPE_SEQUENCE, full_type(7)));
    IrType *map = kind_type(IR_TYPE_MAP, full_type(11));
    map->has_key_type = true;
    map->key_type = IR_INT64;
    ir_graph_add_input(g, "mp", map);
    ir_graph_add_input(g, "op", kind_type(IR_TYPE_OPTIONAL, kind_type(IR_TYPE_SEQUENCE, NULL)));
    IrType *sparse = full_type(15);
    sparse->kind = IR_TYPE_SPARSE_TENSOR;
    ir_graph_add_input(g, "spi", sparse);
    ir_graph_add_init(g, full_tensor("w", 20));
    IrSparse *sp = full_sparse("sw", 24);
    ir_ptrlist_push(&g->sparse_inits, sp);
    IrValue *swv = ir_graph_value(g, "sw");
    swv->kind = IR_VAL_INIT;
    swv->sparse_init = sp;
    mk(g, "Relu", "relu", 1, (const char *[]){"x"}, 1, (const char *[]){"r"});
    IrNode *c = mk(g, "Custom", "custom", 4, (const char *[]){"r", "w", "", "sw"}, 3,
                   (const char *[]){"c1", "", "c2"});
    free(c->domain);
    c->domain = mem_strdup("test");
    c->overload = mem_strdup("ov");
    c->doc_string = mem_strdup("node doc");
    put_meta(&c->meta, "node_key", 30);
    put_unk(&c->unk, 31);
    put_devcfg(c);
    put_attrs(c, g);
    IrNode *call = mk(g, "fn", "call", 1, (const char *[]){"c1"}, 1, (const char *[]){"f1"});
    free(call->domain);
    call->domain = mem_strdup("test");
    call->overload = mem_strdup("o1");
    ir_graph_add_output(g, call->out[0], full_type(32));
    ir_graph_add_output(g, c->out[2], NULL);
    ir_graph_add_output(g, ir_graph_find_local(g, "x"), NULL);
    IrValueInfo *vi = ir_graph_add_value_info(g, c->out[0], full_type(33));
    vi->name_absent = false;
    put_meta(&vi->meta, "vi_key", 34);
    g->n_qann = 1;
    g->qann = mem_alloc(sizeof *g->qann);
    g->qann->tensor_name = mem_strdup("r");
    put_meta(&g->qann->params, "SCALE_TENSOR", 35);
    put_unk(&g->qann->unk, 36);
    put_meta(&g->meta, "graph_key", 37);
    put_unk(&g->unk, 38);
    return g;
}

/* A training graph of one node. */
static IrGraph *train_graph(const char *name)
{
    IrGraph *g = ir_graph_new(NULL);
    g->name = mem_strdup(name);
    IrNode *n = mk(g, "Neg", name, 1, (const char *[]){"w"}, 1, (const char *[]){"w_new"});
    ir_graph_add_output(g, n->out[0], NULL);
    return g;
}

static IrModel *full_model(void)
{
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 10;
    ir_model_set_opset(m, "", 21);
    ir_model_set_opset(m, "test", 1);
    put_unk(&m->opsets[0].unk, 80);
    m->producer_name = mem_strdup("test_ir_clone");
    m->producer_version = mem_strdup("1");
    m->domain = mem_strdup("org.test");
    m->doc_string = mem_strdup("model doc");
    m->has_model_version = true;
    m->model_version = 4;
    m->graph = full_graph();
    put_meta(&m->meta, "model_key", 81);
    m->n_training = 1;
    m->training = mem_alloc(sizeof *m->training);
    m->training->initialization = train_graph("init");
    m->training->algorithm = train_graph("algo");
    put_meta(&m->training->init_binding, "w", 82);
    put_meta(&m->training->update_binding, "w", 83);
    put_unk(&m->training->unk, 84);
    m->n_functions = 1;
    m->functions = mem_alloc(sizeof *m->functions);
    m->functions[0] = full_function();
    m->n_configs = 1;
    m->configs = mem_alloc(sizeof *m->configs);
    m->configs->name = mem_strdup("cfg");
    m->configs->has_num_devices = true;
    m->configs->num_devices = 2;
    m->configs->n_device = 2;
    m->configs->device = mem_array(2, sizeof(char *));
    m->configs->device[0] = mem_strdup("cpu0");
    m->configs->device[1] = mem_strdup("cpu1");
    put_unk(&m->configs->unk, 85);
    put_unk(&m->unk, 86);
    /* what inference leaves, which save does not write */
    IrValue *x = ir_graph_find_local(m->graph, "x");
    x->type = full_type(90);
    x->symval = ir_shape_new(1);
    x->known = full_tensor("known", 91);
    x->known_input = true;
    return m;
}

static IrNode *node_named(const IrGraph *g, const char *name)
{
    for (IrNode *n = g->first; n; n = n->next)
        if (n->name && !strcmp(n->name, name))
            return n;
    return NULL;
}

static void test_full_model(void)
{
    IrModel *m = full_model();
    size_t n0 = 0, n1 = 0, n2 = 0;
    uint8_t *b0 = saved(m, &n0, "the full model");
    need(b0 != NULL, "the full model saves");
    IrModel *c = ir_model_clone(m);
    const IrValue *x = ir_graph_find_local(m->graph, "x");
    const IrValue *cx = ir_graph_find_local(c->graph, "x");
    T_CHECK(cx && cx != x && cx->type && cx->type != x->type && cx->symval &&
            cx->symval->rank == 1 && cx->known && cx->known != x->known && cx->known_input,
            "inference results are not copied");
    const IrNode *k = node_named(c->graph, "custom");
    const IrAttr *br = k ? ir_node_attr(k, "then_branch") : NULL;
    T_CHECK(br && br->g->owner == k && br->g->parent == c->graph &&
            br->g->first->in[0] == cx && ((IrValueInfo *)br->g->outputs.p[1])->value == cx,
            "the clone's branch does not read the clone's x");
    T_CHECK(cx->n_uses == x->n_uses && cx->n_infos == x->n_infos,
            "x has %zu uses, %zu infos in the clone, %zu, %zu in the original",
            cx->n_uses, cx->n_infos, x->n_uses, x->n_infos);
    ir_model_free(m);
    uint8_t *b1 = saved(c, &n1, "the full model's clone");
    T_CHECK(same_bytes(b0, n0, b1, n1, "full model"), "the clone saves other bytes");
    IrModel *c2 = ir_model_clone(c);
    ir_model_free(c);
    uint8_t *b2 = saved(c2, &n2, "the clone's clone");
    T_CHECK(same_bytes(b0, n0, b2, n2, "full model"), "the clone's clone saves other bytes");
    ir_model_free(c2);
    free(b0);
    free(b1);
    free(b2);
}

/* ---- edits of a clone ------------------------------------------------ */

/* Replaces initializer i of g by a tensor of zeros of its shape. */
static void replace_init(IrGraph *g, size_t i)
{
    IrTensor *t = g->inits.p[i];
    IrValue *v = ir_graph_find_local(g, t->name);
    uint64_t numel = 0;
    need(v && v->init == t && ir_tensor_numel(t, &numel), "an initializer to replace");
    size_t bytes = (size_t)numel * (size_t)ir_dtype_bits(t->data_type) / 8;
    uint8_t *zero = mem_alloc(bytes);
    IrTensor *z = ir_tensor_new(t->name, t->data_type, t->ndims, t->dims, zero, bytes);
    free(zero);
    g->inits.p[i] = z;
    v->init = z;
    ir_tensor_free(t);
}

/* Overwrites the bytes of the first raw initializer after index `from`:
 * the clone owns them, the original's stay in its read-only file. */
static bool scribble(IrGraph *g, size_t from)
{
    for (size_t i = from; i < g->inits.n; i++) {
        IrTensor *t = g->inits.p[i];
        if (t->has_raw && t->raw.len && !t->raw_borrowed) {
            memset(t->raw.data, 0x5a, t->raw.len);
            return true;
        }
    }
    return false;
}

static void test_edits(const char *path)
{
    IrModel *m = NULL;
    IrError err = {{0}};
    need(load_model_file(path, NULL, &m, &err) == 0, path);
    size_t n0 = 0, n1 = 0, n2 = 0;
    uint8_t *b0 = saved(m, &n0, path);
    IrModel *c = ir_model_clone(m);
    IrGraph *g = c->graph;
    need(g->n_nodes >= 3 && g->inits.n >= 2, "a model with nodes and weights to edit");
    ir_node_delete(g->first);
    ir_graph_collect(g);
    IrValue *in = ((IrValueInfo *)g->inputs.p[0])->value;
    T_CHECK(ir_value_rename(in, "renamed_by_test", &err) == 0, "rename: %s", err.msg);
    IrNode *n = g->first;
    while (n && !n->n_attr)
        n = n->next;
    need(n != NULL, "a node with an attribute");
    ir_node_set_attr(n, ir_attr_int(n->attr[0]->name, 12345));
    replace_init(g, 0);
    T_CHECK(scribble(g, 1), "no raw initializer to overwrite in the clone");
    uint8_t *b1 = saved(m, &n1, path);
    T_CHECK(same_bytes(b0, n0, b1, n1, path), "editing the clone changed the original");
    uint8_t *b2 = saved(c, &n2, "the edited clone");
    T_CHECK(b2 && !(n2 == n0 && !memcmp(b0, b2, n0)), "the clone's edits do not show");
    ir_model_free(c);
    free(b1);
    b1 = saved(m, &n1, path);
    T_CHECK(same_bytes(b0, n0, b1, n1, path), "freeing the clone changed the original");
    ir_model_free(m);
    free(b0);
    free(b1);
    free(b2);
}

/* ---- clones of functions, graphs and attributes ------------------------ */

static void test_function_clone(void)
{
    IrModel *m = full_model();
    size_t n0 = 0, n1 = 0;
    uint8_t *b0 = saved(m, &n0, "the full model");
    IrFunction *f = m->functions[0];
    IrFunction *cf = ir_function_clone(f);
    IrNode *iff = node_named(cf->body, "if");
    need(iff && iff->n_attr == 1 && iff->attr[0]->g, "the clone's body has its If");
    const IrGraph *br = iff->attr[0]->g;
    IrValue *a = ir_graph_find_local(cf->body, "a");
    IrValue *fa = ir_graph_find_local(f->body, "a");
    T_CHECK(br->parent == cf->body && br->owner == iff && br->first->in[0] == a && a != fa,
            "the cloned branch does not read the cloned body's input");
    T_CHECK(a->kind == IR_VAL_INPUT && a->n_uses == fa->n_uses && a->n_infos == fa->n_infos,
            "the body's input has %zu uses, the original's %zu", a->n_uses, fa->n_uses);
    T_CHECK(cf->n_attr == 2 && cf->attr[1]->t && cf->attr[1]->t != f->attr[1]->t &&
            cf->body->is_function && node_named(cf->body, "neg")->attr[0]->ref_attr_name,
            "defaults or references not copied");
    ir_function_free(f);
    m->functions[0] = cf;
    uint8_t *b1 = saved(m, &n1, "the model with the cloned function");
    T_CHECK(same_bytes(b0, n0, b1, n1, "function"), "the cloned function saves other bytes");
    ir_model_free(m);
    free(b0);
    free(b1);
}

/* A branch cloned into its own parent reads the same outer x (and holds
 * uses on it until freed); cloned with no parent, x is its own. */
static void test_graph_clone(void)
{
    IrModel *m = full_model();
    size_t n0 = 0, n1 = 0;
    uint8_t *b0 = saved(m, &n0, "the full model");
    IrGraph *g = m->graph;
    IrNode *custom = node_named(g, "custom");
    IrValue *x = ir_graph_find_local(g, "x");
    size_t uses = x->n_uses, infos = x->n_infos;
    IrGraph *sub = ir_graph_clone(ir_node_attr(custom, "then_branch")->g, g);
    T_CHECK(sub->parent == g && !sub->owner && sub->first->in[0] == x &&
            ((IrValueInfo *)sub->outputs.p[1])->value == x &&
            ((IrValueInfo *)sub->value_info.p[0])->value == x,
            "the cloned branch does not read the graph's x");
    T_CHECK(x->n_uses == uses + 2 && x->n_infos == infos + 2,
            "x: %zu uses, %zu infos; want %zu, %zu", x->n_uses, x->n_infos, uses + 2, infos + 2);
    IrGraph *alone = ir_graph_clone(sub, NULL);
    IrValue *ax = ir_graph_find_local(alone, "x");
    T_CHECK(ax && ax != x && ax->kind == IR_VAL_UNDEF && alone->first->in[0] == ax &&
            x->n_uses == uses + 2, "a branch cloned alone does not own its x");
    ir_graph_free(alone);
    ir_node_set_attr(custom, ir_attr_graph("then_branch", sub));
    T_CHECK(sub->owner == custom && x->n_uses == uses && x->n_infos == infos,
            "x: %zu uses, %zu infos after the swap; want %zu, %zu", x->n_uses, x->n_infos,
            uses, infos);
    uint8_t *b1 = saved(m, &n1, "the model with the cloned branch");
    T_CHECK(same_bytes(b0, n0, b1, n1, "branch"), "the cloned branch saves other bytes");
    IrGraph *gc = ir_graph_clone(g, NULL);
    IrNode *k = node_named(gc, "custom");
    IrAttr *gs = ir_node_attr(k, "gs");
    IrValue *gx = ir_graph_find_local(gc, "x");
    T_CHECK(gx != x && gs->graphs[1]->first->in[0] == gx && gs->graphs[1]->parent == gc &&
            x->n_uses == uses, "the graph's clone: its branches do not read its own x");
    IrAttr *ac = ir_attr_clone(gs, g);
    T_CHECK(ac->n_graphs == 2 && ac->graphs[0]->parent == g && ac->graphs[0]->first->in[0] == x,
            "an attribute's clone does not read the parent's x");
    ir_attr_free(ac);
    T_CHECK(x->n_uses == uses, "the attribute's clone left uses on x");
    ir_graph_free(gc);
    ir_model_free(m);
    free(b0);
    free(b1);
}

/* ---- external data ---------------------------------------------------------- */

/* Removes the files of dir (one level of folders below) and dir. */
static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = corpus_join(dir, e->d_name);
        if (corpus_is_real_dir(p))
            rm_tree(p);
        else
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Saves m as DIR/SUB/model.onnx (side file w.bin); the two files' bytes. */
static bool save_pair(const IrModel *m, const char *dir, const char *sub, uint8_t **model,
                      size_t *nm, uint8_t **side, size_t *ns)
{
    char path[512];
    IrError err = {{0}};
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, sub);
    if (save_model_file(m, path, NULL, &err) < 0) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return false;
    }
    int rc = corpus_read_all(path, model, nm);
    snprintf(path, sizeof path, "%s/%s/w.bin", dir, sub);
    return rc == 0 && corpus_read_all(path, side, ns) == 0;
}

/* A model of one 1.5 MiB weight (big enough for save's file-to-file and
 * page-releasing paths), written with its weight in src/w.bin. */
static void write_external(const char *dir)
{
    enum { N = 3 << 17 };
    float *w = mem_array(N, sizeof *w);
    for (size_t i = 0; i < N; i++)
        w[i] = (float)i;
    IrModel *m = ir_model_new();
    m->has_ir_version = true;
    m->ir_version = 8;
    ir_model_set_opset(m, "", 17);
    m->graph = ir_graph_new(NULL);
    int64_t dim = N;
    ir_graph_add_init(m->graph, ir_tensor_new("w", IR_FLOAT, 1, &dim, w, N * sizeof *w));
    mk(m->graph, "Neg", "neg", 1, (const char *[]){"w"}, 1, (const char *[]){"y"});
    ir_graph_add_output(m->graph, ir_graph_find_local(m->graph, "y"), NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/src", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/src/model.onnx", dir);
    SaveOptions so = {.external_file = "w.bin", .external_threshold = 1024};
    IrError err = {{0}};
    need(save_model_file(m, path, &so, &err) == 0, "the external-data model saves");
    ir_model_free(m);
    free(w);
}

/* Element i of initializer w of the model at path, or -1. */
static double weight_at(const char *path, size_t i)
{
    IrModel *m = NULL;
    IrError err = {{0}};
    double v = -1;
    if (load_model_file(path, NULL, &m, &err) < 0) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return -1;
    }
    if (!ir_tensor_get_f64(m->graph->inits.p[0], i, &v))
        v = -1;
    ir_model_free(m);
    return v;
}

static void test_external(void)
{
    char dir[] = "/tmp/test_ir_clone.XXXXXX";
    need(mkdtemp(dir) != NULL, "mkdtemp");
    write_external(dir);
    char src[512];
    snprintf(src, sizeof src, "%s/src/model.onnx", dir);
    IrModel *m = NULL;
    IrError err = {{0}};
    need(load_model_file(src, NULL, &m, &err) == 0, "the external-data model loads");
    IrTensor *t = m->graph->inits.p[0];
    need(ir_tensor_is_external(t) && t->ext.bound, "the weight is external");
    uint8_t *om, *os, *cm, *cs;
    size_t nom, nos, ncm, ncs;
    need(save_pair(m, dir, "orig", &om, &nom, &os, &nos), "the original saves");
    IrModel *c = ir_model_clone(m);
    ir_model_free(m);
    const IrTensor *ct = c->graph->inits.p[0];
    double v = -1;
    T_CHECK(ct->ext.bound && ct->ext.data && ir_tensor_get_f64(ct, 12345, &v) && v == 12345,
            "the clone's external weight reads %g", v);
    bool listed = false;
    for (size_t i = 0; i < c->n_maps; i++)
        listed |= c->maps[i].location && !strcmp(c->maps[i].location, "w.bin") &&
                  c->maps[i].base && c->maps[i].fd < 0;
    T_CHECK(listed, "the clone holds no copy of w.bin");
    for (int round = 1; round <= 2; round++) {
        char sub[16];
        snprintf(sub, sizeof sub, "c%d", round);
        need(save_pair(c, dir, sub, &cm, &ncm, &cs, &ncs), "the clone saves");
        T_CHECK(same_bytes(om, nom, cm, ncm, "model.onnx"), "save %d: model bytes differ", round);
        T_CHECK(same_bytes(os, nos, cs, ncs, "w.bin"), "save %d: side file differs", round);
        free(cm);
        free(cs);
    }
    /* in place: the old w.bin goes, the clone's copy does not */
    T_CHECK(save_model_file(c, src, NULL, &err) == 0, "in-place save: %s", err.msg);
    ir_model_free(c);
    T_CHECK(weight_at(src, 777) == 777, "the model saved in place lost its weight");
    free(om);
    free(os);
    rm_tree(dir);
}

int main(void)
{
    test_corpus();
    test_full_model();
    test_edits("testdata/small_cnn.onnx");
    test_edits("testdata/tiny_transformer.onnx");
    test_function_clone();
    test_graph_clone();
    test_external();
    return t_done("test_ir_clone");
}
