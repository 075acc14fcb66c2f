/*
 * convert.c - plans and runs adapter chains between opsets.
 *
 * The walk, for one domain and one scope (the main graph with the training
 * graphs, or a function body that imports the domain itself):
 *   for each step s -> s' (s' = s +- 1) between the scope's opset and the
 *   target: if some node's schema differs between s and s', set the scope's
 *   import to s, infer types, then convert graph by graph, each node after
 *   the nodes of its subgraphs; set the import to s'.
 * Converting a node: find its entry in the adapter table by (domain, op,
 * version at s, version at s' or 0), run it, lower the nodes it built for a
 * newer opset down to s' (recursively, same machinery), then check every
 * node of the touched range against its schema at s'.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert.h"
#include "ir/diag.h"
#include "analysis/known.h"
#include "passes/passes.h"
#include "uthash.h"
#include "ir/caffe2.h"
#include "analysis/infer.h"
#include "eval/eval.h"
#include "analysis/irver.h"
#include "schema/opschema.h"
#include "adapters/adapters.h"

/* The state of one cv_convert call. */
typedef struct CvRun {
    IrModel *m;
    CvReport *r;
    IrError *err;
    const char *domain;     /* the domain being walked */
    IrFunction *fn;         /* the function being walked, NULL = main scope */
    int64_t goal;           /* the opset the walk of this domain ends at */
    int depth;              /* lowering recursion */
} CvRun;

#define CV_MAX_DEPTH 16

/* ---- IR versions ---------------------------------------------------- */

int64_t cv_ir_for_opset(int64_t opset)
{
    static const int8_t ir[29] = {0, 3, 3, 3, 3, 3, 3, 3, 3, 4, 5, 6, 7, 7, 7,
                                  8, 8, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14};
    return opset >= 1 && opset <= 28 ? ir[opset] : -1;
}

/* ai.onnx.ml 1 came with ONNX 1.2 (IR 3), 2 with 1.6 (IR 6), 3 with 1.11
 * (IR 8: Versioning.md's table; 1.9 had only defined it), 4 with 1.15 (IR
 * 9), 5 with 1.17 (IR 10). */
int64_t cv_ir_for_ml(int64_t opset)
{
    static const int8_t ir[6] = {0, 3, 6, 8, 9, 10};
    return opset >= 1 && opset <= 5 ? ir[opset] : -1;
}

/* ---- schemas -------------------------------------------------------- */

/* The schema of op at opset. A deprecated version is returned too: a model
 * may use one (it keeps the previous version's meaning), and adapters are
 * keyed by it; only a node the converter writes may not use one
 * (cv_check_node). */
static const OsSchema *cv_schema(const char *domain, const char *op, int64_t opset)
{
    return os_find(domain, op, opset);
}

/* Whether node k belongs to the domain being walked (and is not a call of
 * a model-local function). */
static bool cv_mine(const CvRun *run, const IrNode *k)
{
    if (!k->op_type || ir_model_function(run->m, k))
        return false;
    return strcmp(ir_domain_norm(k->domain), run->domain) == 0;
}

/* Whether k's op changes between opsets s and t. */
static bool cv_changes(const CvRun *run, const IrNode *k, int64_t s, int64_t t)
{
    return cv_mine(run, k) &&
           os_find(run->domain, k->op_type, s) != os_find(run->domain, k->op_type, t);
}

/* ---- checking a converted node --------------------------------------- */

static int cv_refuse(CvRun *run, const IrNode *k, int64_t s, int64_t t,
                     DgReason why, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Node k at the step s -> t, as a diagnostic (no reason, no message). */
static DgDiag cv_diag(const CvRun *run, const IrNode *k, int64_t s, int64_t t)
{
    const OsSchema *F = k->op_type ? os_find(run->domain, k->op_type, s) : NULL;
    DgDiag d = dg_none();
    dg_set_node(&d, k, run->domain, F ? F->since : 0);
    d.step_from = s;
    d.step_to = t;
    return d;
}

/* Keeps where a refusal happened for reports (the first, innermost one:
 * an enclosing node's failure only passes it on). */
static void cv_note_failure(CvRun *run, const IrNode *k, int64_t s, int64_t t)
{
    CvReport *r = run->r;
    if (r->fail_op)
        return;
    r->fail_node = mem_strdup(k->name ? k->name : "");
    r->fail_op = mem_strdup(k->op_type ? k->op_type : "");
    r->fail_domain = mem_strdup(run->domain);
    r->fail_from = s;
    r->fail_to = t;
    DgDiag d = cv_diag(run, k, s, t);
    r->fail_version = d.version;
    r->fail_index = d.index;
}

/* Fails naming node k, the step and the reason (which reports count). */
static int cv_refuse(CvRun *run, const IrNode *k, int64_t s, int64_t t,
                     DgReason why, const char *fmt, ...)
{
    char msg[300], line[sizeof run->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    run->r->reason = dg_reason_name(why);
    cv_note_failure(run, k, s, t);
    DgDiag d = cv_diag(run, k, s, t);
    d.reason = why;
    d.msg = msg;
    dg_format(&d, line, sizeof line);
    return ir_fail(run->err, "%s", line);
}

/* Whether every type the formal parameter p of `from` allows is also
 * allowed by q of `to` (so an unknown actual type cannot be lost). */
static bool cv_types_kept(const OsSchema *from, const OsParam *p,
                          const OsSchema *to, const OsParam *q)
{
    const OsTypeCons *a = os_tc(from, p->type), *b = os_tc(to, q->type);
    if (!a || !b)
        return (!a && !b && strcmp(p->type, q->type) == 0) || (!a && b);
    for (size_t i = 0; i < a->n; i++) {
        bool found = false;
        for (size_t j = 0; j < b->n && !found; j++)
            found = strcmp(a->types[i], b->types[j]) == 0;
        if (!found)
            return false;
    }
    return true;
}

/* Checks one value of k against the formal parameter q of T; `from`/p
 * describe the same position before the step (NULL for a new node). */
static int cv_check_value(CvRun *run, const IrNode *k, const IrValue *v,
                          const OsSchema *T, const OsParam *q,
                          const OsSchema *F, const OsParam *p,
                          int64_t s, int64_t t)
{
    char tb[96], what[200];
    if (!v || !q)
        return 0;
    if (v->type) {
        if (os_param_allows(T, q, v->type))
            return 0;
        snprintf(what, sizeof what, "%s-%d", k->op_type, T->since);
        /* a type no op of the target has is a true limit, counted apart */
        int since = os_type_since(run->domain, v->type);
        if (since > t)
            return cv_refuse(run, k, s, t, DG_TYPE_ABSENT,
                             "%s has no type %s (value '%s'): no op has that type "
                             "before opset %d", what, os_type_str(v->type, tb, sizeof tb),
                             v->name, since);
        return cv_refuse(run, k, s, t, DG_TYPE, "%s has no type %s (value '%s')",
                         what, os_type_str(v->type, tb, sizeof tb), v->name);
    }
    if (F && p && !cv_types_kept(F, p, T, q)) {
        snprintf(what, sizeof what, "%s-%d", k->op_type, T->since);
        return cv_refuse(run, k, s, t, DG_TYPE_UNKNOWN,
                         "the type of '%s' is unknown and %s allows fewer types",
                         v->name, what);
    }
    return 0;
}

/* Checks k's attributes against T: every one is known with its type, and
 * every required one is present. */
static int cv_check_attrs(CvRun *run, const IrNode *k, const OsSchema *T,
                          int64_t s, int64_t t)
{
    char what[160];
    snprintf(what, sizeof what, "%s-%d", k->op_type, T->since);
    for (size_t i = 0; i < k->n_attr; i++) {
        const IrAttr *a = k->attr[i];
        const OsAttr *d = a->name ? os_attr(T, a->name) : NULL;
        if (!d)
            return cv_refuse(run, k, s, t, DG_ATTRIBUTE,
                             "attribute '%s' does not exist in %s",
                             a->name ? a->name : "", what);
        if (a->has_type && a->type != d->type && !a->ref_attr_name)
            return cv_refuse(run, k, s, t, DG_ATTRIBUTE,
                             "attribute '%s' has another type in %s", a->name, what);
    }
    for (size_t i = 0; i < T->n_attr; i++)
        if (T->attr[i].required && !ir_node_attr(k, T->attr[i].name))
            return cv_refuse(run, k, s, t, DG_ATTRIBUTE,
                             "%s needs attribute '%s'", what, T->attr[i].name);
    return 0;
}

/* Checks that the values of k bound to one type variable of T agree (a
 * version may split or merge variables, as BatchNormalization 14/15 do). */
static int cv_check_vars(CvRun *run, const IrNode *k, const OsSchema *T,
                         int64_t s, int64_t t)
{
    for (size_t v = 0; v < T->n_tc; v++) {
        const char *var = T->tc[v].name;
        const IrType *first = NULL;
        const char *first_name = NULL;
        for (size_t side = 0; side < 2; side++) {
            size_t n = side ? k->n_out : k->n_in;
            for (size_t i = 0; i < n; i++) {
                const IrValue *x = side ? k->out[i] : k->in[i];
                const OsParam *p = side ? os_out_param(T, i) : os_in_param(T, i);
                if (!x || !x->type || !p || strcmp(p->type, var) != 0 || p->heterogeneous)
                    continue;
                char a[96], b[96];
                if (!first) {
                    first = x->type;
                    first_name = x->name;
                } else if (strcmp(os_type_str(first, a, sizeof a),
                                  os_type_str(x->type, b, sizeof b)) != 0 &&
                           (first->kind != IR_TYPE_TENSOR || x->type->kind != IR_TYPE_TENSOR ||
                            first->elem_type != x->type->elem_type)) {
                    return cv_refuse(run, k, s, t, DG_TYPE,
                                     "'%s' and '%s' must have one type (%s) in %s-%d",
                                     first_name, x->name, var, k->op_type, T->since);
                }
            }
        }
    }
    return 0;
}

/* Counts the target's schema forbids although they are within min..max
 * (BatchNormalization-9: 1 or 5 outputs), counted as written as onnx's
 * checker does, so that no adapter writes such a node silently. */
static int cv_check_counts(CvRun *run, const IrNode *k, const OsSchema *T, int64_t s,
                           int64_t t)
{
    char allowed[96];
    if (T->in_counts && !os_in_count_ok(T, k->n_in))
        return cv_refuse(run, k, s, t, DG_ARITY, "%s-%d allows %s inputs, not %zu",
                         k->op_type, T->since, os_counts_str(T, false, allowed, sizeof allowed),
                         k->n_in);
    if (T->out_counts && !os_out_count_ok(T, k->n_out))
        return cv_refuse(run, k, s, t, DG_ARITY, "%s-%d allows %s outputs, not %zu",
                         k->op_type, T->since, os_counts_str(T, true, allowed, sizeof allowed),
                         k->n_out);
    return 0;
}

/* Checks node k at opset t (after the step s -> t); F is its schema before
 * the step when k is the converted node itself. */
static int cv_check_node(CvRun *run, const IrNode *k, const OsSchema *F,
                         int64_t s, int64_t t)
{
    if (!cv_mine(run, k))
        return 0;
    const OsSchema *T = cv_schema(run->domain, k->op_type, t);
    if (!T)
        return cv_refuse(run, k, s, t, DG_NO_OLDER_FORM,
                         "%s does not exist at opset %lld", k->op_type, (long long)t);
    if (T->flags & OS_F_DEPRECATED)
        return cv_refuse(run, k, s, t, DG_DEPRECATED, "%s is deprecated at opset %lld",
                         k->op_type, (long long)t);
    size_t n_in = k->n_in;
    while (n_in > 0 && !k->in[n_in - 1])
        n_in--;
    if ((long)n_in < T->min_in)
        return cv_refuse(run, k, s, t, DG_ARITY, "%s-%d takes at least %d inputs",
                         k->op_type, T->since, T->min_in);
    /* the maxima count inputs and outputs as written, trailing empty
     * names included, as onnx's checker does */
    if (T->max_in >= 0 && (long)k->n_in > T->max_in)
        return cv_refuse(run, k, s, t, DG_ARITY, "%s-%d takes at most %d inputs, not %zu",
                         k->op_type, T->since, T->max_in, k->n_in);
    if (T->max_out >= 0 && (long)k->n_out > T->max_out)
        return cv_refuse(run, k, s, t, DG_ARITY, "%s-%d has at most %d outputs, not %zu",
                         k->op_type, T->since, T->max_out, k->n_out);
    if (cv_check_counts(run, k, T, s, t) < 0 ||
        cv_check_attrs(run, k, T, s, t) < 0 || cv_check_vars(run, k, T, s, t) < 0)
        return -1;
    for (size_t i = 0; i < k->n_in; i++)
        if (cv_check_value(run, k, k->in[i], T, os_in_param(T, i), F,
                           F ? os_in_param(F, i) : NULL, s, t) < 0)
            return -1;
    for (size_t i = 0; i < k->n_out; i++)
        if (cv_check_value(run, k, k->out[i], T, os_out_param(T, i), F,
                           F ? os_out_param(F, i) : NULL, s, t) < 0)
            return -1;
    return 0;
}

/* ---- converting nodes ----------------------------------------------- */

static int cv_step_range(CvRun *run, IrGraph *g, IrNode *after, IrNode *stop,
                         int64_t s, int64_t t);

/* The first node of the range that starts after `after` (NULL = at the
 * graph's start). */
static IrNode *cv_range_first(IrGraph *g, IrNode *after)
{
    return after ? after->next : g->first;
}

/* Lowers (or raises) the nodes of a range, built for opset `from`, to `to`. */
static int cv_move_range(CvRun *run, IrGraph *g, IrNode *after, IrNode *stop,
                         int64_t from, int64_t to)
{
    if (run->depth >= CV_MAX_DEPTH)
        return ir_fail(run->err, "expansions nest deeper than %d", CV_MAX_DEPTH);
    run->depth++;
    int dir = to > from ? 1 : -1;
    int rc = 0;
    for (int64_t s = from; rc == 0 && s != to; s += dir)
        rc = cv_step_range(run, g, after, stop, s, s + dir);
    run->depth--;
    return rc;
}

/* Runs the adapter of node k for the step s -> t. */
static int cv_apply(CvRun *run, IrGraph *g, IrNode *k, int64_t s, int64_t t)
{
    const OsSchema *F = cv_schema(run->domain, k->op_type, s);
    const OsSchema *T = cv_schema(run->domain, k->op_type, t);
    if (!F)
        return cv_refuse(run, k, s, t, DG_INVALID_SOURCE,
                         "%s does not exist at opset %lld (deprecated or not yet defined)",
                         k->op_type, (long long)s);
    if (F == T)
        return 0;
    int from = F->since, to = T ? T->since : 0;
    const AdImpossible *imp = ad_impossible(run->domain, k->op_type, from, to);
    if (imp)
        return cv_refuse(run, k, s, t, DG_IMPOSSIBLE, "%s", imp->reason);
    const AdEntry *e = ad_find(run->domain, k->op_type, from, to);
    if (!e)
        return cv_refuse(run, k, s, t, DG_NO_ADAPTER,
                         "no adapter from %s-%d to version %d", k->op_type, from, to);
    /* Adapters read the inputs their source form requires without looking
     * for holes (ad_in gives NULL past the end): a node missing one is
     * invalid (check reports arity / input-missing) and is refused here,
     * before any rewrite starts. */
    for (size_t i = 0; e->fn && i < (size_t)(F->min_in > 0 ? F->min_in : 0); i++) {
        const OsParam *p = os_in_param(F, i);
        if (i >= k->n_in || (!k->in[i] && p && !p->optional && !p->variadic))
            return cv_refuse(run, k, s, t, DG_ARITY, "%s-%d: required input %zu is missing",
                             k->op_type, F->since, i);
    }
    for (size_t a = 0; e->fn && a < k->n_attr; a++)
        if (k->attr[a]->ref_attr_name)
            return cv_refuse(run, k, s, t, DG_ATTRIBUTE_REFERENCE,
                             "attribute '%s' refers to the function's attribute '%s', "
                             "whose value the rewrite needs",
                             k->attr[a]->name ? k->attr[a]->name : "",
                             k->attr[a]->ref_attr_name);
    AdCtx c = {.m = run->m, .fn = run->fn, .g = g, .n = k, .domain = run->domain,
               .from_opset = s, .to_opset = t, .from = F, .to = T,
               .build_opset = t, .goal_opset = run->goal, .err = run->err,
               .warn = cv_report_warn, .warn_arg = run->r, .run = ev_prove_node};
    IrNode *after = k->prev, *stop = k->next;
    if (e->fn && e->fn(&c) < 0) {
        run->r->reason = dg_reason_name(ad_refusal(&c) ? ad_refusal(&c) : DG_ADAPTER);
        cv_note_failure(run, k, s, t);
        return -1;
    }
    run->r->adapted++;
    if (run->r->on_adapt)
        run->r->on_adapt(run->r->on_adapt_arg, run->domain, F->op, from, to);
    if ((size_t)e->kind < sizeof run->r->by_kind / sizeof run->r->by_kind[0])
        run->r->by_kind[e->kind]++;
    if (c.build_opset != t &&
        cv_move_range(run, g, after, stop, c.build_opset, t) < 0)
        return -1;
    for (IrNode *x = cv_range_first(g, after); x && x != stop; x = x->next)
        if (cv_check_node(run, x, x == k ? F : NULL, s, t) < 0)
            return -1;
    return 0;
}

/* Converts the nodes of g in the range (after, stop) across s -> t, each
 * after the nodes of its own subgraphs. Not ir_each_graph: the order is
 * per node (a node's subgraphs, then the node, then the next node's), on
 * a list taken before adapters add nodes, and a range of g only. */
static int cv_step_range(CvRun *run, IrGraph *g, IrNode *after, IrNode *stop,
                         int64_t s, int64_t t)
{
    IrPtrList todo = {0};
    for (IrNode *x = cv_range_first(g, after); x && x != stop; x = x->next)
        ir_ptrlist_push(&todo, x);
    int rc = 0;
    for (size_t i = 0; i < todo.n && rc == 0; i++) {
        IrNode *k = todo.p[i];
        for (size_t a = 0; a < k->n_attr && rc == 0; a++) {
            IrAttr *at = k->attr[a];
            if (at->g)
                rc = cv_step_range(run, at->g, NULL, NULL, s, t);
            for (size_t j = 0; j < at->n_graphs && rc == 0; j++)
                rc = cv_step_range(run, at->graphs[j], NULL, NULL, s, t);
        }
        if (rc == 0 && cv_changes(run, k, s, t))
            rc = cv_apply(run, g, k, s, t);
    }
    free(todo.p);
    return rc;
}

/* ---- scopes --------------------------------------------------------- */

/* The graphs a scope converts: the function body, or the main graph, the
 * training graphs and the bodies of functions that follow the model's
 * import of the domain. */
typedef struct CvScopeList {
    const CvRun *run;
    IrGraph **out;
    size_t n, cap;
} CvScopeList;

/* Lists g unless it is the body of a function that imports the walked
 * domain itself (that body is a scope of its own). */
static int cv_scope_add(IrGraph *g, const IrWalkAt *at, void *arg)
{
    CvScopeList *l = arg;
    bool own = false;
    for (size_t k = 0; at->fn && k < at->fn->n_opsets; k++)
        own = own || strcmp(ir_domain_norm(at->fn->opsets[k].domain), l->run->domain) == 0;
    if (!own && l->n < l->cap)
        l->out[l->n++] = g;
    return 0;
}

static size_t cv_scope_graphs(const CvRun *run, IrGraph **out, size_t cap)
{
    if (run->fn) {
        out[0] = run->fn->body;
        return 1;
    }
    CvScopeList l = {run, out, 0, cap};
    ir_each_graph(run->m, IR_WALK_MAIN | IR_WALK_TRAINING | IR_WALK_FUNCTIONS, cv_scope_add,
                  &l);
    return l.n;
}

typedef struct CvStep {
    const CvRun *run;
    int64_t s, t;
} CvStep;

/* Stops the walk at a graph with a node that changes in the step. */
static int cv_graph_changes_at(IrGraph *g, const IrWalkAt *at, void *arg)
{
    const CvStep *st = arg;
    for (IrNode *k = g->first; k; k = k->next)
        if (cv_changes(st->run, k, st->s, st->t))
            return 1;
    return 0;
}

/* Whether any node of g (or its subgraphs) changes between s and t. */
static bool cv_graph_changes(const CvRun *run, IrGraph *g, int64_t s, int64_t t)
{
    CvStep st = {run, s, t};
    return ir_graph_each_subgraph(g, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, cv_graph_changes_at,
                                  &st) != 0;
}

/* Sets the scope's import of the walked domain to v. */
static void cv_scope_set(CvRun *run, int64_t v)
{
    if (!run->fn) {
        ir_model_set_opset(run->m, run->domain, v);
        return;
    }
    for (size_t k = 0; k < run->fn->n_opsets; k++)
        if (strcmp(ir_domain_norm(run->fn->opsets[k].domain), run->domain) == 0) {
            run->fn->opsets[k].version = v;
            run->fn->opsets[k].has_version = true;
        }
}

/* The type a value of a function body has at every call of the function,
 * as far as inference knows it. */
typedef struct CvBodyType {
    const IrValue *v;        /* the key */
    IrType *type;            /* NULL = unknown at some call, or calls differ */
    bool open;               /* still agreeing across calls */
    UT_hash_handle hh;
} CvBodyType;

static void cv_body_type(void *arg, const IrValue *v, const IrType *t)
{
    CvBodyType **map = arg, *e;
    HASH_FIND_PTR(*map, &v, e);
    if (!e) {
        e = mem_alloc(sizeof *e);
        e->v = v;
        e->type = ir_type_copy(t);
        e->open = t != NULL;
        HASH_ADD_PTR(*map, v, e);
        return;
    }
    if (!e->open)
        return;
    char a[128], b[128];
    if (!t || t->kind != e->type->kind) {
        e->open = false;
    } else if (strcmp(os_type_str(t, a, sizeof a), os_type_str(e->type, b, sizeof b)) != 0) {
        /* calls agree on the element type but not on the shape: keep the
         * element type, which is what the converter checks */
        if (t->kind == IR_TYPE_TENSOR && t->has_elem_type && e->type->has_elem_type &&
            t->elem_type == e->type->elem_type) {
            ir_shape_free(e->type->shape);
            e->type->shape = NULL;
        } else {
            e->open = false;
        }
    }
}

/* Infers the model and gives each value of a function body the type it has
 * at every call (where all calls agree), so body nodes are checked and
 * rewritten like the main graph's. */
static void cv_infer(CvRun *run)
{
    CvBodyType *map = NULL, *e, *tmp;
    InfOptions io = {.use_value_info = true, .run = ev_prove_node, .body_type = cv_body_type,
                    .body_arg = &map};
    IrError ie;
    /* Types are a help, not a condition: a model inference cannot fully
     * type still converts, and nodes whose types stay unknown are refused
     * only where the target allows fewer types. */
    if (inf_model(run->m, &io, &ie) < 0)
        (void)ie;
    HASH_ITER(hh, map, e, tmp) {
        IrValue *v = (IrValue *)e->v;
        if (e->open && !v->type) {
            v->type = e->type;
            e->type = NULL;
        }
        HASH_DEL(map, e);
        ir_type_free(e->type);
        free(e);
    }
}

/* Drops the call-site types cv_infer gave the function bodies. */
static int cv_forget_types(IrGraph *g, const IrWalkAt *at, void *arg)
{
    ir_graph_clear_inferred(g);
    return 0;
}

static void cv_forget_body_types(CvRun *run)
{
    ir_each_graph(run->m, IR_WALK_FUNCTIONS, cv_forget_types, NULL);
}

/* One step of a scope. */
static int cv_scope_step(CvRun *run, int64_t s, int64_t t)
{
    IrGraph *gs[64];
    size_t n = cv_scope_graphs(run, gs, 64);
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        any = cv_graph_changes(run, gs[i], s, t);
    run->r->steps++;
    if (!any) {
        cv_scope_set(run, t);
        return 0;
    }
    cv_scope_set(run, s);
    cv_infer(run);
    for (size_t i = 0; i < n; i++)
        if (cv_step_range(run, gs[i], NULL, NULL, s, t) < 0) {
            cv_forget_body_types(run);
            return -1;
        }
    cv_forget_body_types(run);
    for (size_t i = 0; i < n; i++)
        ir_graph_collect(gs[i]);
    cv_scope_set(run, t);
    return 0;
}

/* Walks a scope from opset `from` to `to`. */
static int cv_scope_walk(CvRun *run, int64_t from, int64_t to)
{
    int dir = to > from ? 1 : -1;
    for (int64_t s = from; s != to; s += dir)
        if (cv_scope_step(run, s, s + dir) < 0)
            return -1;
    return 0;
}

/* ---- --expand: an op's expansion at the target opset ----------------- */

/* The expansion entry of ai.onnx op `op` (its first version's entry for
 * opsets without it), or NULL. */
static const AdEntry *cv_expansion(const char *op)
{
    const OsSchema *s = os_find("", op, os_domain_max(""));
    if (!s)
        return NULL;
    int v = s->since;
    while (v > 1 && (s = os_find("", op, v - 1)) != NULL)
        v = s->since;
    const AdEntry *e = ad_find("", op, v, 0);
    return e && e->kind == AD_EXPAND && e->fn ? e : NULL;
}

/* Whether op is in the comma-separated list. */
static bool cv_listed(const char *list, const char *op)
{
    size_t n = strlen(op);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, op, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static int cv_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void cv_expandable(char *buf, size_t cap)
{
    const char *names[512];
    size_t n = 0, at = 0;
    for (size_t f = 0; f < ad_families_n; f++)
        for (size_t i = 0; i < ad_families[f]->n && n < 512; i++) {
            const AdEntry *e = &ad_families[f]->e[i];
            if (!e->domain[0] && e->to == 0 && cv_expansion(e->op) == e)
                names[n++] = e->op;
        }
    qsort(names, n, sizeof *names, cv_cmp_str);
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < n && at < cap; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? "," : "", names[i]);
}

int cv_expand_check(const char *list, IrError *err)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char op[128];
        snprintf(op, sizeof op, "%.*s", (int)(len < sizeof op ? len : sizeof op - 1), p);
        if (len == 0 || len >= sizeof op || !cv_expansion(op))
            return ir_fail(err, "'%s' is not an ai.onnx op with an expansion", op);
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Rewrites node k with its op's expansion, at opset t (the scope's): k
 * is carried down to the opset just below its op's first version by the
 * same adapters a conversion there uses (the last step is the expansion),
 * then everything that replaced it is carried back up to t. So the
 * expansion runs where it is written and tested, and every piece ends in
 * its form at t. */
static int cv_expand_node(CvRun *run, IrGraph *g, IrNode *k, int64_t t)
{
    const AdEntry *e = cv_expansion(k->op_type);
    if (!cv_schema("", k->op_type, t) || !e)
        return cv_refuse(run, k, t, t, DG_EXPAND, "%s has no expansion at opset %lld",
                         k->op_type, (long long)t);
    IrNode *after = k->prev, *stop = k->next;
    int64_t below = e->from - 1;
    if (cv_move_range(run, g, after, stop, t, below) < 0 ||
        cv_move_range(run, g, after, stop, below, t) < 0)
        return -1;
    for (IrNode *x = cv_range_first(g, after); x && x != stop; x = x->next)
        if (cv_check_node(run, x, NULL, t, t) < 0)
            return -1;
    return 0;
}

/* Expands the listed ops' nodes of g and its subgraphs, per node like
 * cv_step_range (so not ir_each_graph, which visits graph by graph). */
static int cv_expand_graph(CvRun *run, IrGraph *g, const char *list, int64_t t)
{
    IrPtrList todo = {0};
    for (IrNode *x = g->first; x; x = x->next)
        ir_ptrlist_push(&todo, x);
    int rc = 0;
    for (size_t i = 0; i < todo.n && rc == 0; i++) {
        IrNode *k = todo.p[i];
        for (size_t a = 0; a < k->n_attr && rc == 0; a++) {
            IrAttr *at = k->attr[a];
            if (at->g)
                rc = cv_expand_graph(run, at->g, list, t);
            for (size_t j = 0; j < at->n_graphs && rc == 0; j++)
                rc = cv_expand_graph(run, at->graphs[j], list, t);
        }
        if (rc == 0 && cv_mine(run, k) && cv_listed(list, k->op_type))
            rc = cv_expand_node(run, g, k, t);
    }
    free(todo.p);
    return rc;
}

/* Expands the listed ops in one scope (the main graph's or a function
 * body that imports ai.onnx itself) at its opset t. */
static int cv_expand_scope(CvRun *run, const char *list, int64_t t)
{
    IrGraph *gs[64];
    size_t n = cv_scope_graphs(run, gs, 64);
    run->goal = t;
    cv_infer(run);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = cv_expand_graph(run, gs[i], list, t);
    cv_forget_body_types(run);
    for (size_t i = 0; i < n; i++)
        ir_graph_collect(gs[i]);
    return rc;
}

/* --expand, after the walk to the target. */
static int cv_expand(CvRun *run, const char *list)
{
    if (cv_expand_check(list, run->err) < 0) {
        run->r->reason = dg_reason_name(DG_EXPAND);
        return -1;
    }
    run->domain = "";
    run->fn = NULL;
    int64_t t = ir_model_opset(run->m, "");
    if (t >= 1 && cv_expand_scope(run, list, t) < 0)
        return -1;
    for (size_t i = 0; i < run->m->n_functions; i++) {
        IrFunction *f = run->m->functions[i];
        for (size_t k = 0; k < f->n_opsets; k++)
            if (!strcmp(ir_domain_norm(f->opsets[k].domain), "") && f->opsets[k].has_version) {
                run->fn = f;
                int rc = cv_expand_scope(run, list, f->opsets[k].version);
                run->fn = NULL;
                if (rc < 0)
                    return -1;
                break;
            }
    }
    return 0;
}

/* ---- custom domains ------------------------------------------------- */

/* Counts nodes of custom domains, listing the domains in the order met,
 * node by node with each node's subgraphs right after it: that order is
 * the report's, so this keeps its own walk rather than ir_each_graph's
 * graph-by-graph order. */
static void cv_count_custom(CvReport *r, const IrGraph *g)
{
    for (const IrNode *k = g->first; k; k = k->next) {
        const char *d = ir_domain_norm(k->domain);
        if (os_domain_max(d) < 0) {
            size_t i = 0;
            while (i < r->n_custom && strcmp(r->custom[i].domain, d) != 0)
                i++;
            if (i == r->n_custom) {
                r->custom = mem_grow(r->custom, r->n_custom + 1, sizeof *r->custom);
                r->custom[r->n_custom].domain = mem_strdup(d);
                r->custom[r->n_custom++].nodes = 0;
            }
            r->custom[i].nodes++;
        }
        for (size_t a = 0; a < k->n_attr; a++) {
            if (k->attr[a]->g)
                cv_count_custom(r, k->attr[a]->g);
            for (size_t j = 0; j < k->attr[a]->n_graphs; j++)
                cv_count_custom(r, k->attr[a]->graphs[j]);
        }
    }
}

void cv_report_free(CvReport *r)
{
    for (size_t i = 0; i < r->n_custom; i++)
        free(r->custom[i].domain);
    free(r->custom);
    r->custom = NULL;
    r->n_custom = 0;
    for (size_t i = 0; i < r->n_dropped; i++)
        free(r->dropped[i]);
    free(r->dropped);
    r->dropped = NULL;
    r->n_dropped = 0;
    for (size_t i = 0; i < r->n_warnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    r->warnings = NULL;
    r->n_warnings = 0;
    free(r->fail_node);
    free(r->fail_op);
    free(r->fail_domain);
    r->fail_node = r->fail_op = r->fail_domain = NULL;
}

void cv_report_warn(void *report, const char *line)
{
    CvReport *r = report;
    for (size_t i = 0; i < r->n_warnings; i++)
        if (!strcmp(r->warnings[i], line))
            return;
    r->warnings = mem_grow(r->warnings, r->n_warnings + 1, sizeof *r->warnings);
    r->warnings[r->n_warnings++] = mem_strdup(line);
}

void cv_report_drop(CvReport *r, const char *fmt, ...)
{
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    r->dropped = mem_grow(r->dropped, r->n_dropped + 1, sizeof *r->dropped);
    r->dropped[r->n_dropped++] = mem_strdup(line);
}

/* ---- tidying -------------------------------------------------------- */

/* ---- what the conversion left unread -------------------------------- */

/* Whether k computes something nobody reads, from its inputs alone. */
static bool cv_unread(const IrNode *k)
{
    if (k->dead || !kv_deterministic(NULL, k))
        return false;
    for (size_t i = 0; i < k->n_out; i++)
        if (k->out[i] && (k->out[i]->n_uses || ir_value_is_graph_output(k->out[i])))
            return false;
    return true;
}

/* The graphs the sweep and its notes walk: the main graph and function
 * bodies, each subgraph before the graph holding it (so that a sweep of g
 * sees the uses its subgraphs no longer make). */
#define CV_SWEEP_WALK (IR_WALK_MAIN | IR_WALK_FUNCTIONS | IR_WALK_SUBGRAPHS | IR_WALK_POST)

/* The initializer of v when it is one nobody reads (not a graph input). */
static IrTensor *cv_unread_init(IrGraph *g, IrTensor *t)
{
    IrValue *v = t->name ? ir_graph_find_local(g, t->name) : NULL;
    if (!v || v->kind != IR_VAL_INIT || v->init != t || v->n_uses || ir_value_is_graph_output(v))
        return NULL;
    return t;
}

/* Lists the nodes and initializers of g nobody reads, before converting. */
static int cv_note_unread(IrGraph *g, const IrWalkAt *at, void *arg)
{
    for (IrNode *k = g->first; k; k = k->next)
        if (cv_unread(k))
            ir_ptrlist_push(arg, k);
    for (size_t i = 0; i < g->inits.n; i++)
        if (cv_unread_init(g, g->inits.p[i]))
            ir_ptrlist_push(arg, g->inits.p[i]);
    return 0;
}

static int cv_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* Whether k (a node or an initializer) is in l (sorted with cv_ptr_cmp). */
static bool cv_in_sorted(const IrPtrList *l, const void *k)
{
    return l->n && bsearch(&k, l->p, l->n, sizeof *l->p, cv_ptr_cmp) != NULL;
}

/* Removes what the conversion left unread (nodes, then initializers): the
 * chain that computed a value a rewrite turned into an attribute or a
 * constant (an Upsample's scales from Shape, a Clip's bounds), and helper
 * nodes a rewrite no longer needs. Nodes that were unread in the input
 * stay (`before`, sorted). One backward walk suffices: the graph is in
 * topological order, so a node's readers are behind it, and its
 * subgraphs were swept first (CV_SWEEP_WALK); nodes holding subgraphs are
 * never removed (kv_deterministic). */
static int cv_sweep_graph(IrGraph *g, const IrWalkAt *at, void *before)
{
    for (IrNode *k = g->last; k;) {
        IrNode *prev = k->prev;
        if (cv_unread(k) && !cv_in_sorted(before, k))
            ir_node_delete(k);
        k = prev;
    }
    ir_graph_collect(g);
    for (size_t i = g->inits.n; i-- > 0;) {
        IrTensor *t = cv_unread_init(g, g->inits.p[i]);
        if (!t || cv_in_sorted(before, (const void *)t))
            continue;
        IrValue *v = ir_graph_find_local(g, t->name);
        ir_ptrlist_remove_at(&g->inits, i);
        v->init = NULL;
        v->kind = IR_VAL_UNDEF;
        ir_tensor_free(t);
        ir_value_drop_if_unused(v);
    }
    return 0;
}

/* ---- If nodes with a known condition -------------------------------- */

static bool cv_is_if(const IrNode *k)
{
    return k->op_type && !strcmp(k->op_type, "If") && (!k->domain || !k->domain[0]) &&
           k->n_in > 0;
}

/* Sets *found when g has an If (the walk visits the subgraphs). */
static int cv_note_if(IrGraph *g, const IrWalkAt *at, void *found)
{
    for (const IrNode *k = g->first; k; k = k->next)
        if (cv_is_if(k))
            *(bool *)found = true;
    return 0;
}

/* Sets *found when some If of g has a known condition. */
static int cv_note_known_if(IrGraph *g, const IrWalkAt *at, void *found)
{
    for (const IrNode *k = g->first; k; k = k->next)
        if (cv_is_if(k) && kv_value(k->in[0]))
            *(bool *)found = true;
    return 0;
}

/* An If whose condition is known runs one branch only, and the other may
 * hold what the target cannot express (the expanded AffineGrid tests test
 * the input's rank, which its static shape decides). Such an If is
 * replaced by the branch it takes before the walk: exactly what the model
 * computes, by the optimizer's if_const pass. */
static int cv_known_ifs(IrModel *m, CvReport *r, IrError *err)
{
    IrError ie;
    bool any = false, found = false;
    ir_each_graph(m, IR_WALK_MAIN | IR_WALK_SUBGRAPHS | IR_WALK_POST, cv_note_if, &any);
    /* inference only where there is an If to ask about */
    InfOptions proving = {.use_value_info = true, .run = ev_prove_node};
    if (!any || inf_model(m, &proving, &ie) < 0)
        return 0;
    ir_each_graph(m, IR_WALK_MAIN | IR_WALK_SUBGRAPHS | IR_WALK_POST, cv_note_known_if,
                  &found);
    if (!found)
        return 0;
    OptOptions oo = {.passes = "if_const", .max_iters = 1};
    OptStats st = {0};
    int rc = opt_optimize(m, &oo, &st, err);
    if (rc == 0 && st.n == 1)
        r->ifs_taken = (size_t)st.changes[0];
    opt_stats_free(&st);
    return rc;
}

/* Drops the value_info of values an adapter removed (defined nowhere and
 * used by nothing any more), in every graph of m. */
static int cv_drop_stale_info(IrGraph *g, const IrWalkAt *at, void *arg)
{
    ir_graph_drop_stale_info(g);
    return 0;
}

/* Each graph's drop is its own, so the walk's order does not matter. */
static void cv_tidy(IrModel *m)
{
    ir_each_graph(m, IR_WALK_ALL | IR_WALK_POST, cv_drop_stale_info, NULL);
}

/* ---- the whole conversion ------------------------------------------- */

/* Converts every scope of m in `domain` to opset `to`. */
static int cv_domain(CvRun *run, const char *domain, int64_t to)
{
    int64_t max = os_domain_max(domain);
    if (to < 1 || to > max)
        return ir_fail(run->err, "opset %lld of %s is not one this tool knows (1..%lld)",
                       (long long)to, ir_domain_shown(domain), (long long)max);
    run->domain = domain;
    run->goal = to;
    int64_t from = ir_model_opset(run->m, domain);
    if (from > max)
        return ir_fail(run->err, "the model imports %s opset %lld, newer than this tool knows (%lld)",
                       ir_domain_shown(domain), (long long)from, (long long)max);
    run->fn = NULL;
    if (from >= 1 && cv_scope_walk(run, from, to) < 0)
        return -1;
    for (size_t i = 0; i < run->m->n_functions; i++) {
        IrFunction *f = run->m->functions[i];
        for (size_t k = 0; k < f->n_opsets; k++) {
            if (strcmp(ir_domain_norm(f->opsets[k].domain), domain) != 0)
                continue;
            run->fn = f;
            int64_t v = f->opsets[k].has_version ? f->opsets[k].version : 1;
            int rc = v >= 1 && v <= max ? cv_scope_walk(run, v, to)
                   : ir_fail(run->err, "function '%s' imports %s opset %lld",
                             f->name ? f->name : "", ir_domain_shown(domain),
                             (long long)v);
            run->fn = NULL;
            if (rc < 0)
                return -1;
            break;
        }
    }
    return 0;
}

/* The IR version Versioning.md's table gives the model's imports of
 * ai.onnx and ai.onnx.ml (the higher of the two; 3 with neither). */
static int64_t cv_table_ir(int64_t opset, int64_t opset_ml)
{
    int64_t t = 3;
    if (opset > 0 && cv_ir_for_opset(opset) > t)
        t = cv_ir_for_opset(opset);
    if (opset_ml > 0 && cv_ir_for_ml(opset_ml) > t)
        t = cv_ir_for_ml(opset_ml);
    return t;
}

int cv_options_check(const CvOptions *o, IrError *err)
{
    if (!o->ir_version)
        return 0;
    if (o->ir_version < 3 || o->ir_version > IRV_NEWEST)
        return ir_fail(err, "ir_version %lld is not one this tool writes (3..%d)",
                       (long long)o->ir_version, IRV_NEWEST);
    int64_t t = cv_table_ir(o->opset, o->opset_ml);
    if (o->ir_version < t)
        return ir_fail(err, "ir_version %lld is below IR %lld, which %s opset %lld needs",
                       (long long)o->ir_version, (long long)t,
                       o->opset > 0 && cv_ir_for_opset(o->opset) == t ? "ai.onnx" : "ai.onnx.ml",
                       (long long)(o->opset > 0 && cv_ir_for_opset(o->opset) == t ?
                                   o->opset : o->opset_ml));
    return 0;
}

/* Reports the annotations irv_strip dropped, one line per field. */
static void cv_report_strip(CvReport *r, const size_t counts[IRV_N_ANN])
{
    for (size_t i = 0; i < IRV_N_ANN; i++)
        if (counts[i])
            cv_report_drop(r, "%s x%zu", irv_ann_name[i], counts[i]);
}

/* Re-infers m's types from scratch, so that the IR check sees what the
 * converted nodes compute. */
static void cv_reinfer(IrModel *m)
{
    IrError ie;
    if (m->graph)
        ir_graph_clear_inferred(m->graph);
    InfOptions io = {.use_value_info = true, .run = ev_prove_node};
    if (inf_model(m, &io, &ie) < 0)
        (void)ie;   /* a value inference cannot type is not checked */
}

/* Inlines the model-local functions for IR `ir` (< 8), reporting it as a
 * drop; the calls counted as passed-through custom nodes are gone. */
static int cv_inline(IrModel *m, CvReport *r, int64_t ir, IrError *err)
{
    size_t calls = 0, fns = m->n_functions;
    if (cvi_inline(m, &calls, err) < 0) {
        r->reason = dg_reason_name(DG_IR_VERSION);
        return -1;
    }
    cv_report_drop(r, "ModelProto.functions x%zu (inlined at %zu calls: IR %lld has "
                   "no functions)", fns, calls, (long long)ir);
    for (size_t i = 0; i < r->n_custom; i++)
        free(r->custom[i].domain);
    free(r->custom);
    r->custom = NULL;
    r->n_custom = 0;
    if (m->graph)
        cv_count_custom(r, m->graph);
    cv_reinfer(m);
    return 0;
}

/*
 * The IR version policy (docs/converter.md "IR versions"). `down` says whether some
 * converted domain went to a lower opset; `ir_in` is the input's version.
 *   table    = the Versioning.md IR of the target opsets (cv_table_ir)
 *   content  = the lowest IR holding what the model computes: functions
 *              (8), training info (7), sparse tensors (6), element types
 *              of declared and inferred types and of data-type attributes
 *   default  = max(table, content), and max(.., ir_in) when converting up
 *              or to the same opset; annotation-only fields (irver.h
 *              IRV_ANNOTATIONS) that this IR lacks are dropped and
 *              reported, or with keep_metadata the IR rises to hold them
 *   explicit = o->ir_version exactly (cv_options_check: 3..14, not below
 *              table); annotations it lacks are dropped unless
 *              keep_metadata, and then refused like content
 *   model-local functions in an IR below 8 (only an explicit version can
 *   choose one) are inlined at every call (cvi_inline) and reported.
 * Whatever still does not fit is refused (irv_check), naming it.
 */
static int cv_policy(IrModel *m, const CvOptions *o, CvReport *r, bool down,
                     IrError *err, int64_t *ir_out)
{
    int64_t ir_in = r->ir_from >= 1 && r->ir_from <= IRV_NEWEST ? r->ir_from : 0;
    int64_t table = cv_table_ir(ir_model_opset(m, ""), ir_model_opset(m, "ai.onnx.ml"));
    cv_reinfer(m);
    IrvNeed need = irv_need(m);
    int64_t ir = o->ir_version;
    if (ir && ir < table) {
        r->reason = dg_reason_name(DG_IR_VERSION);
        return ir_fail(err, "ir_version %lld is below IR %lld, which the model's opsets need",
                       (long long)ir, (long long)table);
    }
    if (!ir) {
        ir = table > need.content ? table : need.content;
        if (!down && ir_in > ir)
            ir = ir_in;
        if (o->keep_metadata && need.annotations > ir)
            ir = need.annotations;
    }
    if (ir < 8 && m->n_functions && cv_inline(m, r, ir, err) < 0)
        return -1;
    if (!o->keep_metadata) {
        size_t counts[IRV_N_ANN] = {0};
        irv_strip(m, ir, counts);
        cv_report_strip(r, counts);
    }
    *ir_out = ir;
    return 0;
}

/* A PyTorch/Caffe2 variant model becomes standard IR 3 before anything
 * else (the IR policy then treats it as IR 3); each field dropped on the
 * way is one line of r->dropped. */
static int cv_caffe2(IrModel *m, const CvOptions *o, CvReport *r, IrError *err)
{
    size_t n = c2_n_fields();
    size_t *dropped = mem_array(n, sizeof *dropped);
    int rc = c2_standardize(m, o->keep_metadata, dropped, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (dropped[i])
            cv_report_drop(r, "%s x%zu (PyTorch/Caffe2 variant)",
                           c2_fields()[i].name, dropped[i]);
    free(dropped);
    if (rc < 0)
        r->reason = dg_reason_name(DG_CAFFE2_VARIANT);
    return rc;
}

int cv_convert(IrModel *m, const CvOptions *o, CvReport *r, IrError *err)
{
    CvRun run = {.m = m, .r = r, .err = err};
    r->reason = NULL;
    if (cv_options_check(o, err) < 0) {
        r->reason = dg_reason_name(DG_IR_VERSION);
        return -1;
    }
    if (c2_is_variant(m) && cv_caffe2(m, o, r, err) < 0)
        return -1;
    r->ir_from = m->has_ir_version ? m->ir_version : 0;
    int64_t own = ir_model_opset(m, ""), own_ml = ir_model_opset(m, "ai.onnx.ml");
    bool down = (o->opset > 0 && o->opset < own) || (o->opset_ml > 0 && o->opset_ml < own_ml);
    if (m->graph)
        cv_count_custom(r, m->graph);
    for (size_t i = 0; i < m->n_functions; i++)
        if (m->functions[i]->body)
            cv_count_custom(r, m->functions[i]->body);
    /* training graphs may read main-graph values by name, which the
     * values' uses do not count: nothing is swept in such a model */
    if ((o->opset > 0 || o->opset_ml > 0) && cv_known_ifs(m, r, err) < 0) {
        r->reason = dg_reason_name(DG_IF);
        return -1;
    }
    IrPtrList before = {0};
    if (!m->n_training)
        ir_each_graph(m, CV_SWEEP_WALK, cv_note_unread, &before);
    int rc = 0;
    if (o->opset > 0 && cv_domain(&run, "", o->opset) < 0)
        rc = -1;
    if (rc == 0 && o->opset_ml > 0 && ir_model_opset(m, "ai.onnx.ml") > 0 &&
        cv_domain(&run, "ai.onnx.ml", o->opset_ml) < 0)
        rc = -1;
    if (rc == 0 && o->expand && cv_expand(&run, o->expand) < 0)
        rc = -1;
    if (rc == 0 && !m->n_training) {
        if (before.n)
            qsort(before.p, before.n, sizeof *before.p, cv_ptr_cmp);
        ir_each_graph(m, CV_SWEEP_WALK, cv_sweep_graph, &before);
    }
    free(before.p);
    if (rc < 0)
        return -1;
    cv_tidy(m);
    int64_t ir = 0;
    if (cv_policy(m, o, r, down, err, &ir) < 0)
        return -1;
    r->ir_to = ir;
    irv_fit(m, ir);
    if (irv_check(m, ir, r->ir_from, err) < 0) {
        r->reason = dg_reason_name(DG_IR_VERSION);
        return -1;
    }
    m->ir_version = ir;
    m->has_ir_version = true;
    if (m->graph)
        ir_graph_clear_inferred(m->graph);
    return 0;
}
