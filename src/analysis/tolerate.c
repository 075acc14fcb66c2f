/*
 * tolerate.c - the table of tolerated defects and their repairs
 * (tolerate.h).
 */
#include "analysis/tolerate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/infer.h"
#include "analysis/irver.h"
#include "base/keyset.h"
#include "schema/opschema.h"

const TolDefect tol_defects[TOL_N] = {
#define TOL_ROW(e, id, what, who, read, write) [TOL_##e] = {id, what, who, read, write},
    TOL_DEFECTS(TOL_ROW)
#undef TOL_ROW
};

int tol_of_message(const char *msg)
{
    for (int k = 0; msg && k < TOL_N; k++) {
        size_t n = strlen(tol_defects[k].id);
        if (!strncmp(msg, tol_defects[k].id, n) && msg[n] == ':')
            return k;
    }
    return -1;
}

/* A dimension both know, with other sizes (a declared -1 knows none). */
static bool tol_dims_differ(const IrDim *a, const IrDim *b)
{
    return a->kind == IR_DIM_VALUE && b->kind == IR_DIM_VALUE && !ir_dim_minus_one(a) &&
           !ir_dim_minus_one(b) && a->value != b->value;
}

bool tol_shape_contradicts(const IrType *decl, const IrType *got)
{
    if (!decl || !got || decl->kind != IR_TYPE_TENSOR || got->kind != IR_TYPE_TENSOR ||
        !decl->shape || !got->shape)
        return false;
    if (decl->shape->rank != got->shape->rank)
        return true;
    for (size_t k = 0; k < decl->shape->rank; k++)
        if (tol_dims_differ(&decl->shape->dims[k], &got->shape->dims[k]))
            return true;
    return false;
}

typedef struct TolShapeWalk {
    TolShapeFn fn;
    void *arg;
    size_t n;
} TolShapeWalk;

static int tol_bad_shapes_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    TolShapeWalk *w = arg;
    if (at->fn || at->training)
        return 0;
    for (size_t k = 0; k < g->value_info.n; k++) {
        IrValueInfo *vi = g->value_info.p[k];
        /* a graph input's or an initializer's value_info restates what
         * the graph declares; inference takes those as given */
        if (vi->value->kind != IR_VAL_NODE)
            continue;
        if (tol_shape_contradicts(vi->type, vi->value->type)) {
            w->n++;
            w->fn(w->arg, vi, "value_info");
        }
    }
    if (at->depth == 0)
        for (size_t k = 0; k < g->outputs.n; k++) {
            IrValueInfo *vi = g->outputs.p[k];
            if (vi->value->kind == IR_VAL_NODE &&
                tol_shape_contradicts(vi->type, vi->value->type)) {
                w->n++;
                w->fn(w->arg, vi, "graph output");
            }
        }
    return 0;
}

size_t tol_each_bad_shape(IrModel *m, TolShapeFn fn, void *arg)
{
    TolShapeWalk w = {.fn = fn, .arg = arg};
    ir_each_graph(m, IR_WALK_MAIN | IR_WALK_SUBGRAPHS, tol_bad_shapes_graph, &w);
    return w.n;
}

char *tol_shape_str(const IrType *t, char *buf, size_t cap)
{
    size_t at = 0;
    if (!cap)
        return buf;
    buf[0] = '\0';
    if (!t || !t->shape) {
        snprintf(buf, cap, "?");
        return buf;
    }
    at += (size_t)snprintf(buf, cap, "[");
    for (size_t k = 0; k < t->shape->rank && at < cap; k++) {
        const IrDim *d = &t->shape->dims[k];
        const char *sep = k ? "," : "";
        if (d->kind == IR_DIM_VALUE && !ir_dim_minus_one(d))
            at += (size_t)snprintf(buf + at, cap - at, "%s%lld", sep, (long long)d->value);
        else if (d->kind == IR_DIM_PARAM && d->param && d->param[0])
            at += (size_t)snprintf(buf + at, cap - at, "%s%s", sep, d->param);
        else
            at += (size_t)snprintf(buf + at, cap - at, "%s?", sep);
    }
    if (at < cap)
        snprintf(buf + at, cap - at, "]");
    return buf;
}

/* ---- what a repair says --------------------------------------------- */

/* The names of the elements one repair changed: the first few, then how
 * many more. */
#define TOL_NAMES 4
typedef struct TolNames {
    size_t n;
    char list[400];
} TolNames;

static void tol_name(TolNames *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tol_name(TolNames *l, const char *fmt, ...)
{
    if (l->n++ >= TOL_NAMES)
        return;
    size_t at = strlen(l->list);
    if (at + 3 >= sizeof l->list)
        return;
    if (at)
        at += (size_t)snprintf(l->list + at, sizeof l->list - at, ", ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->list + at, sizeof l->list - at, fmt, ap);
    va_end(ap);
}

/* "A, B, C and 5 more" into buf. */
static const char *tol_names_str(const TolNames *l, char *buf, size_t cap)
{
    if (l->n > TOL_NAMES)
        snprintf(buf, cap, "%s and %zu more", l->list, l->n - TOL_NAMES);
    else
        snprintf(buf, cap, "%s", l->list);
    return buf;
}

static void tol_say(TolReport *r, TolId id, size_t count, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void tol_say(TolReport *r, TolId id, size_t count, const char *fmt, ...)
{
    if (!r || r->n >= TOL_N)
        return;
    TolRepair *e = &r->items[r->n++];
    e->id = id;
    e->count = count;
    int at = snprintf(e->msg, sizeof e->msg, "%s: ", tol_defects[id].id);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + at, sizeof e->msg - (size_t)at, fmt, ap);
    va_end(ap);
}

/* ---- the repairs ---------------------------------------------------- */

/* Drops every later import of a domain imported before at the same
 * version (the checker refused other versions), by hash: a model may
 * import 200k domains. */
static void tol_opsets(IrModel *m, TolReport *r)
{
    TolNames l = {0};
    KsSet seen = {0};
    size_t w = 0;
    for (size_t k = 0; k < m->n_opsets; k++) {
        IrOpset *o = &m->opsets[k];
        const char *d = ir_domain_norm(o->domain);
        int64_t v = o->has_version ? o->version : -1, before;
        bool again = ks_find(&seen, (const char *[]){d}, 1, &before) && before == v;
        ks_add(&seen, (const char *[]){d}, 1, v);
        if (again) {
            tol_name(&l, "'%s' %lld", ir_domain_shown(d), (long long)o->version);
            free(o->domain);
            ir_unknown_free(&o->unk);
            continue;
        }
        m->opsets[w++] = *o;
    }
    ks_free(&seen);
    m->n_opsets = w;
    char names[500];
    if (l.n)
        tol_say(r, TOL_OPSET_REPEATED, l.n, "opset_import of %s repeated: written once",
                tol_names_str(&l, names, sizeof names));
}

/* Makes every -1 dimension of t unknown; returns how many. */
static size_t tol_type_dims(IrType *t, int depth)
{
    size_t n = 0;
    if (!t || depth > 32)
        return 0;
    for (size_t k = 0; t->shape && k < t->shape->rank; k++) {
        IrDim *d = &t->shape->dims[k];
        if (ir_dim_minus_one(d)) {
            d->kind = IR_DIM_UNSET;
            d->value = 0;
            n++;
        }
    }
    return n + tol_type_dims(t->elem, depth + 1);
}

static void tol_list_dims(IrPtrList *l, const char *role, TolNames *names)
{
    for (size_t k = 0; k < l->n; k++) {
        IrValueInfo *vi = l->p[k];
        if (tol_type_dims(vi->type, 0))
            tol_name(names, "%s '%s'", role, vi->value->name);
    }
}

static int tol_dims_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    tol_list_dims(&g->inputs, "graph input", arg);
    tol_list_dims(&g->outputs, "graph output", arg);
    tol_list_dims(&g->value_info, "value_info", arg);
    return 0;
}

static void tol_dims(IrModel *m, TolReport *r)
{
    TolNames l = {0};
    ir_each_graph(m, IR_WALK_ALL, tol_dims_graph, &l);
    char names[500];
    if (l.n)
        tol_say(r, TOL_DIM_MINUS_ONE, l.n, "dim_value -1 in %s: written as unknown "
                "dimensions", tol_names_str(&l, names, sizeof names));
}

/* Main-graph outputs without a type take the inferred one. */
static void tol_outputs(IrModel *m, TolReport *r)
{
    TolNames l = {0};
    char a[96];
    IrGraph *g = m->graph;
    for (size_t k = 0; k < g->outputs.n; k++) {
        IrValueInfo *vi = g->outputs.p[k];
        const IrType *t = vi->value->type;
        if ((vi->type && vi->type->kind != IR_TYPE_NONE) || !t)
            continue;
        ir_type_free(vi->type);
        vi->type = ir_type_copy(t);
        char shape[200];
        tol_name(&l, "'%s' %s %s", vi->value->name, os_type_str(t, a, sizeof a),
                 tol_shape_str(t, shape, sizeof shape));
    }
    char names[500];
    if (l.n)
        tol_say(r, TOL_OUTPUT_UNTYPED, l.n, "graph outputs without a type written with "
                "the inferred one: %s", tol_names_str(&l, names, sizeof names));
}

/* The declared shape takes the inferred one: inferred where inference
 * knows a dimension, declared where it does not (a name the declaration
 * gives a dimension stays); the inferred shape whole when the ranks
 * differ. */
static void tol_replace_shape(void *arg, IrValueInfo *vi, const char *role)
{
    TolNames *l = arg;
    const IrType *got = vi->value->type;
    char was[200], now[200];
    tol_shape_str(vi->type, was, sizeof was);
    if (vi->type->shape->rank != got->shape->rank) {
        ir_shape_free(vi->type->shape);
        vi->type->shape = ir_shape_copy(got->shape);
    } else {
        for (size_t k = 0; k < got->shape->rank; k++) {
            IrDim *d = &vi->type->shape->dims[k];
            const IrDim *i = &got->shape->dims[k];
            if (i->kind != IR_DIM_VALUE || (d->kind == IR_DIM_VALUE && d->value == i->value))
                continue;
            free(d->param);
            d->param = NULL;
            d->kind = IR_DIM_VALUE;
            d->value = i->value;
        }
    }
    tol_name(l, "%s '%s' %s -> %s", role, vi->value->name, was,
             tol_shape_str(vi->type, now, sizeof now));
}

static void tol_shapes(IrModel *m, TolReport *r)
{
    TolNames l = {0};
    tol_each_bad_shape(m, tol_replace_shape, &l);
    char names[500];
    if (l.n)
        tol_say(r, TOL_DECLARED_SHAPE, l.n, "declared shapes inference contradicts, "
                "written as inferred: %s", tol_names_str(&l, names, sizeof names));
}

/* The initializers of the main graph that are not graph inputs, named in
 * r for tol_fit_ir. */
static void tol_note_inits(const IrModel *m, TolReport *r)
{
    TolNames l = {0};
    const IrGraph *g = m->graph;
    for (size_t k = 0; k < g->inits.n; k++) {
        const IrTensor *t = g->inits.p[k];
        const IrValue *v = t->name ? ir_graph_find_local(g, t->name) : NULL;
        if (v && v->kind != IR_VAL_INPUT)
            tol_name(&l, "'%s'", t->name);
    }
    r->init_names = l.n;
    tol_names_str(&l, r->init_list, sizeof r->init_list);
}

int tol_repair(IrModel *m, unsigned found, KvRunFn run, TolReport *r, IrError *err)
{
    if (r)
        memset(r, 0, sizeof *r);
    if (!m->graph)
        return 0;
    if (found & (1u << TOL_OPSET_REPEATED))
        tol_opsets(m, r);
    if (found & (1u << TOL_DIM_MINUS_ONE))
        tol_dims(m, r);
    if (found & (1u << TOL_INIT_NOT_INPUT) && r) {
        tol_note_inits(m, r);
        r->pending |= 1u << TOL_INIT_NOT_INPUT;
    }
    if (!(found & (1u << TOL_OUTPUT_UNTYPED | 1u << TOL_DECLARED_SHAPE)))
        return 0;
    /* as the checker inferred them: declared intermediate types fill
     * what inference leaves open */
    InfOptions opt = {.use_value_info = true, .run = run};
    if (inf_model(m, &opt, err) < 0)
        return -1;
    if (found & (1u << TOL_OUTPUT_UNTYPED))
        tol_outputs(m, r);
    if (found & (1u << TOL_DECLARED_SHAPE))
        tol_shapes(m, r);
    ir_graph_clear_inferred(m->graph);
    return 0;
}

void tol_fit_ir(IrModel *m, TolReport *r)
{
    int64_t ir = m->has_ir_version ? m->ir_version : 0;
    if (ir > 0 && ir < 4)
        irv_fit(m, ir);
    if (!r || !(r->pending & (1u << TOL_INIT_NOT_INPUT)))
        return;
    r->pending &= ~(1u << TOL_INIT_NOT_INPUT);
    if (ir > 0 && ir < 4)
        tol_say(r, TOL_INIT_NOT_INPUT, r->init_names, "initializers %s were not graph "
                "inputs: added as inputs, as IR %lld requires", r->init_list, (long long)ir);
    else
        tol_say(r, TOL_INIT_NOT_INPUT, r->init_names, "initializers %s were not graph "
                "inputs at IR 3: written at IR %lld, which does not require it (nothing "
                "added)", r->init_list, (long long)ir);
}
