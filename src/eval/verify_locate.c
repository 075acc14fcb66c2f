/*
 * verify_locate.c - the first node whose value moved (prefix vf_).
 *
 * When a converted model's outputs differ, the user needs the node that
 * made them differ, not the output where it showed. Both models are run
 * again, watching every node of the main graph: the values that survive
 * a conversion under the same name (the outputs of unchanged nodes and
 * the boundaries of each rewritten region) are kept from the converted
 * model and from both models' float64 runs, then compared, in the
 * original's order, by the outputs' rule against the original's own
 * noise. The first that leaves it is named.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/opschema.h"
#include "eval/verify.h"

/* One value both models compute under the same name. */
typedef struct VfKept {
    char *name;              /* the hash key (the value's) */
    const IrNode *after;     /* its producer in the converted model */
    EvValue *got, *wide;     /* the converted model's, the original's in float64 */
    EvValue *wide_got;       /* the converted model's in float64 */
    UT_hash_handle hh;
} VfKept;

/* The runs that keep values, in turn. */
enum { VF_PASS_AFTER, VF_PASS_WIDE, VF_PASS_WIDE_AFTER };

typedef struct VfLocate {
    VfKept *kept;
    uint64_t bytes, cap;     /* values held, and at most */
    bool full;               /* some were not kept: the cap came first */
    int pass;                /* the run watched: VF_PASS_* */
    bool two_sided;          /* the judging pass uses the converted model's
                                own noise (vf_floor_judge's element rule) */
    /* the original's pass */
    int32_t narrow;
    double rtol, atol;
    VfWhere *where;
    const IrModel *before, *after_model;
} VfLocate;

/* The names of the main graph's computed values of `after` that `before`
 * computes too: the ones worth keeping. */
static void vf_locate_names(VfLocate *l, const IrModel *before, const IrModel *after)
{
    IR_FOR_NODES(after->graph, n) {
        for (size_t i = 0; i < n->n_out; i++) {
            const IrValue *o = n->out[i];
            const IrValue *b = o ? ir_graph_find_local(before->graph, o->name) : NULL;
            VfKept *k = NULL;
            if (!b || !b->producer)
                continue;
            HASH_FIND_STR(l->kept, o->name, k);
            if (k)
                continue;
            k = mem_alloc(sizeof *k);
            k->name = mem_strdup(o->name);
            k->after = n;
            HASH_ADD_KEYPTR(hh, l->kept, k->name, strlen(k->name), k);
        }
    }
}

/* Keeps the outputs of n that are on the list, within the cap (the
 * converted model's pass, then the float64 one). */
static int vf_locate_keep(void *arg, const IrNode *n, EvValue *const *out)
{
    VfLocate *l = arg;
    for (size_t i = 0; i < n->n_out; i++) {
        VfKept *k = NULL;
        if (!n->out[i] || !out[i])
            continue;
        HASH_FIND_STR(l->kept, n->out[i]->name, k);
        if (!k || (l->pass != VF_PASS_AFTER && !k->got))
            continue;
        uint64_t b = ev_value_bytes(out[i]);
        if (l->bytes + b > l->cap) {
            l->full = true;
            continue;
        }
        l->bytes += b;
        EvValue **slot = l->pass == VF_PASS_WIDE ? &k->wide
                         : l->pass == VF_PASS_WIDE_AFTER ? &k->wide_got : &k->got;
        *slot = ev_ref(out[i]);
    }
    return 0;
}

/* "Conv-11": n's op and the since_version it has in m. */
static void vf_op_text(const IrModel *m, const IrNode *n, char *buf, size_t cap)
{
    const OsSchema *s = os_find(n->domain, n->op_type, ir_model_opset(m, n->domain));
    if (s)
        snprintf(buf, cap, "%s-%d", n->op_type, s->since);
    else
        snprintf(buf, cap, "%s", n->op_type);
}

/* What the absolute tolerance is scaled by for value v: its largest
 * |element| when below 1, else 1. A scale factor of 1e-7 changed by half
 * is within an absolute 1e-5 of the original: only its readers would
 * show it, and the wrong node would be named. */
static double vf_locate_scale(const EvValue *v)
{
    double s = 0;
    if (v->kind != EV_TENSOR || !ev_dtype_is_float(v->dtype))
        return 1;
    for (size_t k = 0; k < v->numel; k++) {
        double x = fabs(ev_get_f(v, k));
        if (isfinite(x) && x > s)
            s = x;
    }
    return s > 0 && s < 1 ? s : 1;
}

/* Whether value v of the original has a counterpart in the converted
 * model (a value of its name that both compute). */
static bool vf_has_counterpart(const VfLocate *l, const IrValue *v)
{
    VfKept *k = NULL;
    HASH_FIND_STR(l->kept, v->name, k);
    return k != NULL;
}

/* Walks back from node n of the original through the values without a
 * counterpart, naming their producers in w->region: the region where
 * the difference that shows at n may start. */
static void vf_locate_region(const VfLocate *l, const IrNode *n, VfWhere *w)
{
    IrPtrList todo = {0}, seen = {0};
    ir_ptrlist_push(&todo, (void *)n);
    for (size_t t = 0; t < todo.n; t++) {
        const IrNode *at = todo.p[t];
        for (size_t i = 0; i < at->n_in; i++) {
            const IrValue *v = at->in[i];
            const IrNode *p = v ? v->producer : NULL;
            bool known = false;
            for (size_t k = 0; p && k < seen.n && !known; k++)
                known = seen.p[k] == p;
            if (!p || known || vf_has_counterpart(l, v))
                continue;
            ir_ptrlist_push(&seen, (void *)p);
            ir_ptrlist_push(&todo, (void *)p);
            if (w->n_region < VF_REGION_KEEP)
                snprintf(w->region[w->n_region], sizeof w->region[0], "%s",
                         p->name ? p->name : "");
            w->n_region++;
        }
    }
    free(todo.p);
    free(seen.p);
}

/* The original's pass: judges each kept value of n as the outputs are
 * judged; the first that differs fills the where and stops the run. */
static int vf_locate_judge(void *arg, const IrNode *n, EvValue *const *out)
{
    VfLocate *l = arg;
    for (size_t i = 0; i < n->n_out; i++) {
        VfKept *k = NULL;
        if (n->out[i] && out[i])
            HASH_FIND_STR(l->kept, n->out[i]->name, k);
        if (!k || !k->got)
            continue;
        VfFigure fig = {.floor = -1};
        char why[400];
        if (vf_output_equal(k->got, out[i], k->wide, l->two_sided ? k->wide_got : NULL,
                            l->narrow, l->rtol,
                            l->atol * vf_locate_scale(out[i]), &fig, why, sizeof why))
            continue;
        VfWhere *w = l->where;
        w->found = true;
        snprintf(w->node, sizeof w->node, "%s", n->name ? n->name : "");
        snprintf(w->value, sizeof w->value, "%s", k->name);
        vf_op_text(l->before, n, w->op_before, sizeof w->op_before);
        vf_op_text(l->after_model, k->after, w->op_after, sizeof w->op_after);
        snprintf(w->node_after, sizeof w->node_after, "%s",
                 k->after->name ? k->after->name : "");
        w->max_err = fig.max_err;
        w->floor = fig.floor;
        snprintf(w->why, sizeof w->why, "%s", why);
        vf_locate_region(l, n, w);
        return 1;
    }
    return 0;
}

static void vf_locate_free(VfLocate *l)
{
    VfKept *k, *tmp;
    HASH_ITER(hh, l->kept, k, tmp) {
        HASH_DEL(l->kept, k);
        ev_unref(k->got);
        ev_unref(k->wide);
        ev_unref(k->wide_got);
        free(k->name);
        free(k);
    }
}

/* Runs m on in (n_in values) with watch, within what is left before the
 * deadline; the outputs are dropped (the watch keeps what it needs). */
static void vf_watched_run(IrModel *m, EvOptions eo, double deadline, EvValue **in,
                           size_t n_in,
                           int (*watch)(void *, const IrNode *, EvValue *const *),
                           VfLocate *l)
{
    EvValue **out = NULL;
    size_t n_out = 0;
    IrError e;
    /* each run gets what is left of the time, not the whole of it again */
    double left = deadline > 0 ? deadline - vf_now() : 0;
    if (deadline > 0 && left <= 0)
        return;
    if (deadline > 0 && (eo.timeout <= 0 || left < eo.timeout))
        eo.timeout = left;
    eo.watch = watch;
    eo.watch_arg = l;
    if (ev_model_run(m, &eo, n_in, in, &out, &n_out, &e) == 0)
        ev_values_free(out, n_out);
}

int vf_locate(const VfLocateIn *x, VfWhere *where)
{
    VfLocate l = {.narrow = x->narrow, .rtol = x->rtol, .atol = x->atol, .where = where,
                  .before = x->before, .after_model = x->after};
    uint64_t mem = x->eval.max_memory ? x->eval.max_memory : ev_default_max_memory();
    l.cap = mem / 4;
    *where = (VfWhere){.floor = -1};
    vf_locate_names(&l, x->before, x->after);
    /* a converted model that fails part-way keeps what it computed before
     * the failure; without the float64 run the tolerance alone judges */
    vf_watched_run(x->after, x->eval, x->deadline, x->in_b, x->n_in, vf_locate_keep, &l);
    if (x->wide && x->in_wide) {
        l.pass = VF_PASS_WIDE;
        vf_watched_run(x->wide, x->eval, x->deadline, x->in_wide, x->n_in, vf_locate_keep,
                       &l);
    }
    /* the converted model's own noise, for the two-sided rule */
    if (x->wide && x->in_wide && x->wide_after && x->in_wide_b) {
        l.pass = VF_PASS_WIDE_AFTER;
        vf_watched_run(x->wide_after, x->eval, x->deadline, x->in_wide_b, x->n_in,
                       vf_locate_keep, &l);
    }
    l.pass = VF_PASS_AFTER;
    /* the walk stops at the first value judged to differ: by the rule
     * the count of noisy elements vouches for, then, when that finds
     * none (a model so noisy that the count excuses anything), element
     * by element with the converted model's own noise */
    vf_watched_run(x->before, x->eval, x->deadline, x->in_a, x->n_in, vf_locate_judge, &l);
    if (!where->found && x->wide_after && x->in_wide_b) {
        l.two_sided = true;
        vf_watched_run(x->before, x->eval, x->deadline, x->in_a, x->n_in, vf_locate_judge,
                       &l);
    }
    where->partial = l.full;
    vf_locate_free(&l);
    return where->found ? 0 : -1;
}

const char *vf_where_text(const VfWhere *w, char *buf, size_t cap)
{
    char node[200], ops[360], figs[420];
    if (w->node[0])
        snprintf(node, sizeof node, "node '%s'", w->node);
    else
        snprintf(node, sizeof node, "the node computing '%s'", w->value);
    bool renamed = strcmp(w->node, w->node_after) != 0;
    if (strcmp(w->op_before, w->op_after) == 0 && !renamed)
        snprintf(ops, sizeof ops, "%s, unchanged", w->op_before);
    else if (renamed && w->node_after[0])
        snprintf(ops, sizeof ops, "%s -> %s '%s'", w->op_before, w->op_after, w->node_after);
    else
        snprintf(ops, sizeof ops, "%s -> %s", w->op_before, w->op_after);
    /* a value of another shape or type has no error to give */
    if (w->max_err > 0 && w->floor >= 0)
        snprintf(figs, sizeof figs, "max error %.3g, floor %.3g", w->max_err, w->floor);
    else if (w->max_err > 0)
        snprintf(figs, sizeof figs, "max error %.3g (no floor measured)", w->max_err);
    else
        snprintf(figs, sizeof figs, "%s", w->why);
    int len = snprintf(buf, cap, "first difference at %s (%s): %s", node, ops, figs);
    for (size_t i = 0; i < w->n_region && i < 3 && len >= 0 && (size_t)len < cap; i++)
        len += snprintf(buf + len, cap - (size_t)len, "%s'%s'",
                        i ? ", " : "; it reads what the other model does not compute, "
                                   "from nodes ", w->region[i]);
    if (w->n_region > 3 && len >= 0 && (size_t)len < cap)
        len += snprintf(buf + len, cap - (size_t)len, " and %zu more", w->n_region - 3);
    if (w->partial && len >= 0 && (size_t)len < cap)
        snprintf(buf + len, cap - (size_t)len, " (not every value could be kept: an "
                 "earlier one may differ too)");
    return buf;
}
