/*
 * precision_auto.c - --auto: keep in float32 the fewest nodes needed for
 * the outputs to stay within tolerance (see precision_auto.h).
 *
 * Why this order of search: a half model's output error is, to first
 * order, the sum of what each node's own rounding adds, carried forward
 * by what follows. The nodes whose own half computation already moves
 * their output by a large part of its scale (a sum that overflows, an
 * Exp of big logits, a Softmax whose inputs lose their differences) are
 * the ones a full conversion cannot survive, and they are few; so the
 * nodes are ranked by that local error, measured on the float32 values
 * they see in the original model (one pass over the graph, no whole-model
 * run per node), and the search only asks how many of the top of that
 * ranking must stay float32: "top k kept passes" is monotone in k to first
 * order, so a binary search over k needs ceil(log2 n) + 1 runs. A final
 * greedy pass tries dropping each kept node, in case the ranking put a
 * harmless one above a needed one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "analysis/infer.h"
#include "ir/clone.h"
#include "precision/precision_auto.h"
#include "uthash.h"

/* ---- the error of outputs -------------------------------------------- */

/* Error of `got` against `want` as the tolerance measures it: max over
 * elements of |got - want| / (atol * scale + rtol * |want|), scale the
 * largest finite |want| (at least 1), as --verify does for half models;
 * <= 1 is within. Non-float values count 0 when equal, else infinity. */
static double pa_value_error(const EvValue *got, const EvValue *want, double rtol,
                             double atol)
{
    if (got->kind != EV_TENSOR || want->kind != EV_TENSOR ||
        !ev_dtype_is_float(got->dtype) || !ev_dtype_is_float(want->dtype)) {
        char why[64];
        return ev_value_equal(got, want, 0, 0, why, sizeof why) ? 0 : INFINITY;
    }
    if (got->numel != want->numel)
        return INFINITY;
    double scale = 1, e = 0;
    for (size_t k = 0; k < want->numel; k++) {
        double x = fabs(ev_get_f(want, k));
        if (isfinite(x) && x > scale)
            scale = x;
    }
    for (size_t k = 0; k < want->numel; k++) {
        double w = ev_get_f(want, k), g = ev_get_f(got, k);
        if (g == w || (isnan(g) && isnan(w)))
            continue;
        double d = fabs(g - w) / (atol * scale + rtol * fabs(w));
        if (!(d <= e))   /* NaN and infinity win */
            e = isnan(d) ? INFINITY : d;
    }
    return e;
}

/* "[1,3,10,12]" into buf. */
static void pa_dims(const EvValue *x, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < x->rank && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)x->dims[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
}

/* What makes an infinite error, in words (output `name`): a shape that
 * differs (one dim: a count, of detections say), NaN or infinity where
 * the original has a number, or non-float values that differ. */
static void pa_describe(const EvValue *got, const EvValue *want, const char *name, char *buf,
                        size_t cap)
{
    char g[96], w[96];
    if (got->kind != EV_TENSOR || want->kind != EV_TENSOR) {
        snprintf(buf, cap, "output '%s' is not the kind of value expected", name);
        return;
    }
    pa_dims(got, g, sizeof g);
    pa_dims(want, w, sizeof w);
    size_t diff = 0, at = 0;
    for (size_t i = 0; got->rank == want->rank && i < got->rank; i++)
        if (got->dims[i] != want->dims[i])
            diff++, at = i;
    if (got->rank != want->rank || diff > 1 || got->numel != want->numel) {
        if (diff == 1)
            snprintf(buf, cap, "output '%s' has shape %s against %s: a count differs "
                     "(dim %zu: %lld against %lld, e.g. of detections)", name, g, w, at,
                     (long long)got->dims[at], (long long)want->dims[at]);
        else
            snprintf(buf, cap, "output '%s' has shape %s against %s", name, g, w);
        return;
    }
    bool fl = ev_dtype_is_float(got->dtype) && ev_dtype_is_float(want->dtype);
    for (size_t k = 0; fl && k < want->numel; k++) {
        double x = ev_get_f(got, k), y = ev_get_f(want, k);
        if (!isfinite(x) && isfinite(y)) {
            snprintf(buf, cap, "output '%s' has %s at element %zu where the original has %g",
                     name, isnan(x) ? "NaN" : "infinity", k, y);
            return;
        }
    }
    char why[128] = "";
    ev_value_equal(got, want, 0, 0, why, sizeof why);
    snprintf(buf, cap, "output '%s' differs: %s", name, why);
}

static double pa_outputs_error(EvValue **got, EvValue **want, size_t n, double rtol,
                               double atol)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double x = pa_value_error(got[i], want[i], rtol, atol);
        if (x > e)
            e = x;
    }
    return e;
}

/* ---- running models -------------------------------------------------- */

typedef struct PaCtx {
    const PcOptions *o;
    double rtol, atol;
    EvOptions eo;
    const IrModel *snap;         /* the original as given: each candidate is
                                    a clone of it (the original is run and
                                    inferred in the meantime) */
    EvValue **in;                /* the inputs (float32, rounded as fed) */
    size_t n_in;
    EvValue **want;              /* the original's outputs */
    size_t n_out;
    size_t evals, max_evals;
    const IrModel *orig;         /* for its output names */
    char inf_why[400];           /* the last run whose error was infinite: why */
} PaCtx;

/* Notes in c->inf_why why the outputs' error is infinite. */
static void pa_note_inf(PaCtx *c, EvValue **got)
{
    for (size_t i = 0; i < c->n_out; i++) {
        if (isfinite(pa_value_error(got[i], c->want[i], c->rtol, c->atol)))
            continue;
        const IrPtrList *outs = &c->orig->graph->outputs;
        const IrValueInfo *vi = i < outs->n ? outs->p[i] : NULL;
        pa_describe(got[i], c->want[i], vi && vi->value ? vi->value->name : "?",
                    c->inf_why, sizeof c->inf_why);
        return;
    }
}

/* in[] as model m's feeds take them: a float input of another float type
 * becomes a new tensor of that type (same numbers, already rounded).
 * New references, ev_values_free. */
static EvValue **pa_feeds(const IrModel *m, EvValue **in, size_t n, IrError *err)
{
    IrValueInfo **f;
    size_t nf = ev_model_feeds(m, &f);
    EvValue **out = mem_array(n ? n : 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const IrType *t = i < nf ? f[i]->type : NULL;
        int32_t dt = t && t->kind == IR_TYPE_TENSOR && t->has_elem_type ? t->elem_type : 0;
        if (!dt || in[i]->kind != EV_TENSOR || dt == in[i]->dtype ||
            !ev_dtype_is_float(dt) || !ev_dtype_is_float(in[i]->dtype)) {
            out[i] = ev_ref(in[i]);
            continue;
        }
        out[i] = ev_tensor_new(dt, in[i]->rank, in[i]->dims, err);
        for (size_t k = 0; out[i] && k < in[i]->numel; k++)
            ev_set_f(out[i], k, ev_get_f(in[i], k));
        if (!out[i]) {
            ev_values_free(out, i);
            free(f);
            return NULL;
        }
    }
    free(f);
    return out;
}

/* Runs m on the inputs: 0 and *out (n_out values), or -1 with err. */
static int pa_run(PaCtx *c, IrModel *m, const char *what, EvValue ***out, IrError *err)
{
    IrError e;
    size_t n_out;
    EvValue **feeds = pa_feeds(m, c->in, c->n_in, &e);
    c->evals++;
    int rc = feeds ? ev_model_run(m, &c->eo, c->n_in, feeds, out, &n_out, &e) : -1;
    ev_values_free(feeds, feeds ? c->n_in : 0);
    if (rc < 0)
        return ir_fail(err, "--auto: %s does not run: %s", what, e.msg);
    if (out != &c->want && n_out != c->n_out) {
        ev_values_free(*out, n_out);
        *out = NULL;
        return ir_fail(err, "--auto: %s has %zu outputs, the original %zu", what,
                       n_out, c->n_out);
    }
    c->n_out = n_out;
    return 0;
}

/* A fresh copy of the original converted keeping `keep` (node labels,
 * comma-separated, added to the user's --keep-float32-node). 0 and *out
 * (r: its report, may be NULL), or -1 with err. */
static int pa_convert_copy(PaCtx *c, const char *keep, IrModel **out, PcReport *r,
                           IrError *err)
{
    IrModel *m = ir_model_clone(c->snap);
    PcOptions o = *c->o;
    char *list = NULL;
    if (keep && *keep) {
        const char *u = o.keep_nodes ? o.keep_nodes : "";
        size_t cap = strlen(u) + strlen(keep) + 2;
        list = malloc(cap);
        snprintf(list, cap, "%s%s%s", u, *u ? "," : "", keep);
        o.keep_nodes = list;
        o.keep_whole = true;
    }
    PcReport tmp = {0};
    int rc = pc_convert(m, &o, r ? r : &tmp, err);
    pc_report_free(&tmp);
    free(list);
    if (rc < 0) {
        ir_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

/* got's error raises *e (NaN counts as above all); the first run of a
 * candidate found infinitely off says why, naming its arithmetic (how),
 * for the message that every node kept does not help. Frees got. */
static void pa_worst(PaCtx *c, EvValue **got, const char *how, double *e)
{
    double x = pa_outputs_error(got, c->want, c->n_out, c->rtol, c->atol);
    if (!isfinite(x) && isfinite(*e)) {
        pa_note_inf(c, got);
        size_t len = strlen(c->inf_why);
        snprintf(c->inf_why + len, sizeof c->inf_why - len, "%s", how);
    }
    if (x > *e || x != x)
        *e = x;
    ev_values_free(got, c->n_out);
}

/* The seed of the third arithmetic (EvOptions.jitter); fixed, so that
 * a search repeats. */
#define PA_JITTER_SEED 0x6a6974746572ull

/* The error of converted model m: the largest of its own run's, of its
 * run computed in float32 (pc_widen_copy: --verify judges both, see
 * job.c), and of its run with half results jittered (EvOptions.jitter),
 * so that what is kept holds in arithmetics that round elsewhere.
 * Why the third here and not in --verify: a detector's scores lie closer
 * than float16 resolves, and a set that keeps its boxes in both of our
 * arithmetics lost them in ONNX Runtime's (SSDlite, Keypoint R-CNN in
 * the corpus); the search may keep more float32 at no risk, while
 * --verify refusing what jitter moves would refuse RAFT, whose float16
 * run ONNX Runtime keeps at an eighth of the tolerance. 0 and *e, or -1. */
static int pa_error(PaCtx *c, IrModel *m, double *e, IrError *err)
{
    EvValue **got;
    IrModel *w = NULL;
    *e = 0;
    if (pa_run(c, m, "the converted model", &got, err) < 0)
        return -1;
    pa_worst(c, got, "", e);
    if (pc_widen_copy(m, &w, err) < 0 ||
        pa_run(c, w, "the converted model in float32", &got, err) < 0) {
        ir_model_free(w);
        return -1;
    }
    c->evals--;   /* one evaluation: the same candidate, in three arithmetics */
    pa_worst(c, got, " (computed in float32)", e);
    ir_model_free(w);
    EvOptions keep = c->eo;
    c->eo.jitter = PA_JITTER_SEED;
    int rc = pa_run(c, m, "the converted model, rounded otherwise", &got, err);
    c->eo = keep;
    if (rc < 0)
        return -1;
    c->evals--;
    pa_worst(c, got, " (with half results moved one unit)", e);
    return 0;
}

/* The error of the original converted keeping `keep`: 0 and *e, or -1. */
static int pa_try(PaCtx *c, const char *keep, double *e, IrError *err)
{
    IrModel *m;
    if (pa_convert_copy(c, keep, &m, NULL, err) < 0)
        return -1;
    int rc = pa_error(c, m, e, err);
    ir_model_free(m);
    return rc;
}

/* ---- ranking nodes by their own half error --------------------------- */

/* A value of the original while it runs node by node: held only until
 * its last reader has run, so the walk holds what one run would. */
typedef struct PaVal {
    const IrValue *v;
    EvValue *x;                  /* NULL: not made yet, or dropped */
    size_t last;                 /* position of its last reader */
    bool read;                   /* some node reads it */
    UT_hash_handle hh;
} PaVal;

/* The score of a node holding bodies: its bodies compute in half too,
 * which running it alone on half inputs does not measure (nor can it run
 * alone when a body reads outer values), so it ranks first: kept, it
 * keeps its bodies whole (keep_whole). */
#define PA_UNMEASURED 1e30

typedef struct PaCand {
    char *label;                 /* name or "#N" (precision.c's label) */
    double score;                /* its own half error, of its output's scale */
    bool body;                   /* holds bodies: PA_UNMEASURED */
} PaCand;

static EvValue *pa_val_get(PaVal *t, const IrValue *v)
{
    PaVal *e;
    HASH_FIND_PTR(t, &v, e);
    return e ? e->x : NULL;
}

static PaVal *pa_val_entry(PaVal **t, const IrValue *v)
{
    PaVal *e;
    HASH_FIND_PTR(*t, &v, e);
    if (!e) {
        e = mem_alloc(sizeof *e);
        e->v = v;
        HASH_ADD_PTR(*t, v, e);
    }
    return e;
}

/* Takes x as v's value (the table owns the reference). */
static void pa_val_put(PaVal **t, const IrValue *v, EvValue *x)
{
    PaVal *e = pa_val_entry(t, v);
    ev_unref(e->x);
    e->x = x;
}

/* Records where each value of g is last read (idx: node positions). */
static void pa_val_readers(PaVal **t, const IrGraph *g)
{
    size_t idx = 0;
    for (const IrNode *n = g->first; n; n = n->next, idx++)
        for (size_t i = 0; i < n->n_in; i++)
            if (n->in[i]) {
                PaVal *e = pa_val_entry(t, n->in[i]);
                e->last = idx;
                e->read = true;
            }
}

/* Drops the values node n (at idx) was the last to read, and the outputs
 * it made that nothing reads. */
static void pa_val_drop(PaVal *t, const IrNode *n, size_t idx)
{
    for (size_t k = 0; k < n->n_in + n->n_out; k++) {
        const IrValue *v = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
        PaVal *e;
        if (!v)
            continue;
        HASH_FIND_PTR(t, &v, e);
        if (e && (!e->read || (k < n->n_in && e->last == idx))) {
            ev_unref(e->x);
            e->x = NULL;
        }
    }
}

static void pa_vals_free(PaVal **t)
{
    PaVal *e, *tmp;
    HASH_ITER(hh, *t, e, tmp) {
        HASH_DEL(*t, e);
        ev_unref(e->x);
        free(e);
    }
}

/* x rounded to float type dt, as a tensor of type `as` (new reference). */
static EvValue *pa_round(const EvValue *x, int32_t dt, int32_t as, IrError *err)
{
    EvValue *v = ev_tensor_new(as, x->rank, x->dims, err);
    for (size_t k = 0; v && k < x->numel; k++) {
        double d = ev_get_f(x, k);
        ev_set_f(v, k, dt == IR_FLOAT16 ? half_f16_to_f32(half_f32_to_f16((float)d))
                       : half_bf16_to_f32(half_f32_to_bf16((float)d)));
    }
    return v;
}

/* Drops one reference to each of n values of an array the caller owns. */
static void pa_unref_all(EvValue **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ev_unref(v[i]);
}

static bool pa_is_f32(const EvValue *x)
{
    return x && x->kind == EV_TENSOR && x->dtype == IR_FLOAT;
}

/* Node n run on its float32 inputs in[] made half: in type dt when its
 * kernel takes it, else (a slot that must stay float32) rounded to dt
 * but kept float32, with the outputs rounded to dt after. The largest
 * error of its float outputs against f32[] relative to their scale
 * (0: unknown, or none). */
static double pa_node_score(IrModel *m, IrNode *n, EvValue **in, EvValue **f32, int32_t dt)
{
    double best = 0;
    for (int as_half = 1; as_half >= 0; as_half--) {
        EvValue *hin[n->n_in ? n->n_in : 1], *hout[n->n_out ? n->n_out : 1];
        IrError e;
        bool ok = true;
        for (size_t j = 0; j < n->n_out; j++)
            hout[j] = NULL;   /* ev_node_run replaces what is there */
        for (size_t i = 0; i < n->n_in; i++) {
            hin[i] = pa_is_f32(in[i]) ? pa_round(in[i], dt, as_half ? dt : IR_FLOAT, &e)
                     : in[i] ? ev_ref(in[i]) : NULL;
            ok &= !in[i] || hin[i];
        }
        ok = ok && ev_node_run(m, NULL, n, hin, hout, &e) == 0;
        pa_unref_all(hin, n->n_in);
        if (!ok)
            continue;
        for (size_t j = 0; j < n->n_out; j++) {
            EvValue *h = hout[j];
            if (h && !as_half && pa_is_f32(h)) {
                EvValue *r = pa_round(h, dt, IR_FLOAT, &e);
                ev_unref(h);
                h = hout[j] = r;
            }
            if (h && f32[j] && ev_dtype_is_float(h->dtype) && pa_is_f32(f32[j])) {
                /* rtol 0, atol 1: |h - f| / scale */
                double x = pa_value_error(h, f32[j], 0, 1);
                best = x > best ? x : best;
            }
        }
        pa_unref_all(hout, n->n_out);
        return best;
    }
    return 0;
}

/* Whether the label is among `kept` (the full conversion's report). */
static bool pa_in_report(const PcReport *r, const char *label)
{
    for (size_t i = 0; i < r->n_kept; i++)
        if (!strcmp(r->kept[i].node, label))
            return true;
    return false;
}

/* Whether n reads or writes a float32 tensor value. */
static bool pa_touches_f32(const IrNode *n)
{
    for (size_t k = 0; k < n->n_in + n->n_out; k++) {
        const IrValue *v = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
        if (v && v->type && v->type->kind == IR_TYPE_TENSOR && v->type->has_elem_type &&
            v->type->elem_type == IR_FLOAT)
            return true;
    }
    return false;
}

static bool pa_has_body(const IrNode *n)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->g || n->attr[i]->n_graphs)
            return true;
    return false;
}

/* Runs the original m node by node on c's inputs (float32), scoring
 * every node the full conversion computes in half (not in `full`'s kept
 * list). *cand gets them, best first. A node that cannot run alone (a
 * subgraph reading outer values) scores 0 and so do those reading what
 * it makes: they are ranked last. */
static size_t pa_rank(PaCtx *c, IrModel *m, const PcReport *full, PaCand **cand)
{
    PaVal *vals = NULL;
    IrError e;
    /* the values' types say which nodes touch float32 (as precision.c
     * reads them); pc_convert inferred the same model already */
    InfOptions proving = {.use_value_info = true, .run = ev_prove_node};
    if (inf_model(m, &proving, &e) < 0) {
        *cand = NULL;
        return 0;
    }
    IrValueInfo **f;
    size_t nf = ev_model_feeds(m, &f), nc = 0, idx = 0;
    pa_val_readers(&vals, m->graph);
    for (size_t i = 0; i < nf && i < c->n_in; i++)
        pa_val_put(&vals, f[i]->value, ev_ref(c->in[i]));
    free(f);
    *cand = NULL;
    for (IrNode *n = m->graph->first; n; n = n->next, idx++) {
        EvValue *in[n->n_in ? n->n_in : 1], *out[n->n_out ? n->n_out : 1];
        bool have = true;
        for (size_t j = 0; j < n->n_out; j++)
            out[j] = NULL;    /* ev_node_run replaces what is there */
        for (size_t i = 0; i < n->n_in; i++) {
            const IrValue *v = n->in[i];
            in[i] = v ? pa_val_get(vals, v) : NULL;
            if (v && !in[i] && v->init) {
                in[i] = ev_from_ir_tensor(v->init, &e);
                if (in[i])
                    pa_val_put(&vals, v, in[i]);
            }
            have &= !v || in[i];
        }
        bool ran = have && ev_node_run(m, NULL, n, in, out, &e) == 0;
        char label[32];
        snprintf(label, sizeof label, "#%zu", idx);
        const char *name = n->name && n->name[0] ? n->name : label;
        bool body = pa_has_body(n);   /* its bodies may compute in half */
        if (body || (pa_touches_f32(n) && !pa_in_report(full, name))) {
            *cand = mem_grow(*cand, nc + 1, sizeof **cand);
            (*cand)[nc++] = (PaCand){mem_strdup(name),
                                     body ? PA_UNMEASURED
                                     : ran ? pa_node_score(m, n, in, out, c->o->dtype) : 0,
                                     body};
        }
        for (size_t j = 0; ran && j < n->n_out; j++)
            if (n->out[j] && out[j])
                pa_val_put(&vals, n->out[j], out[j]);
            else
                ev_unref(out[j]);
        pa_val_drop(vals, n, idx);
    }
    pa_vals_free(&vals);
    ir_graph_clear_inferred(m->graph);
    for (size_t i = 0; i < m->n_functions; i++)
        ir_graph_clear_inferred(m->functions[i]->body);
    return nc;
}

static int pa_cand_cmp(const void *a, const void *b)
{
    double x = ((const PaCand *)a)->score, y = ((const PaCand *)b)->score;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* ---- the search ------------------------------------------------------ */

/* "a,b,c": the labels of cand[i] for the i where pick[i] (malloc'ed). */
static char *pa_join(const PaCand *cand, const bool *pick, size_t n)
{
    size_t cap = 1;
    for (size_t i = 0; i < n; i++)
        cap += pick[i] ? strlen(cand[i].label) + 1 : 0;
    char *s = malloc(cap), *p = s;
    *p = 0;
    for (size_t i = 0; i < n; i++)
        if (pick[i])
            p += sprintf(p, "%s%s", p == s ? "" : ",", cand[i].label);
    return s;
}

/* The error when the top k of cand stay float32 (pick: its top k). */
static int pa_try_top(PaCtx *c, const PaCand *cand, size_t n, size_t k, bool *pick,
                      double *e, IrError *err)
{
    for (size_t i = 0; i < n; i++)
        pick[i] = i < k;
    char *keep = pa_join(cand, pick, n);
    int rc = pa_try(c, keep, e, err);
    free(keep);
    return rc;
}

/* Finds the fewest top-ranked nodes to keep (binary search on k: top 0
 * fails, as the caller saw), then drops kept ones not needed while
 * evaluations are left. pick[] ends as the set kept, *e its error. */
static int pa_search(PaCtx *c, const PaCand *cand, size_t n, bool *pick, double *e,
                     IrError *err)
{
    size_t lo = 0, hi = n;
    double ehi = INFINITY, x;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (pa_try_top(c, cand, n, mid, pick, &x, err) < 0)
            return -1;
        if (x <= 1) {
            hi = mid;
            ehi = x;
        } else {
            lo = mid;
        }
    }
    if (!isfinite(ehi) || ehi > 1) {    /* hi == n, not tried yet */
        if (pa_try_top(c, cand, n, hi, pick, &ehi, err) < 0)
            return -1;
        if (ehi > 1 && !isfinite(ehi))
            return ir_fail(err, "--auto: even with every converted node kept in "
                           "float32, %s", c->inf_why);
        if (ehi > 1)
            return ir_fail(err, "--auto: even with every converted node kept in "
                           "float32 the outputs' error is %.3g times the tolerance "
                           "(rtol %g, atol %g)", ehi, c->rtol, c->atol);
    }
    for (size_t i = 0; i < n; i++)
        pick[i] = i < hi;
    /* greedy: the least harmful kept node first */
    for (size_t i = hi; i-- > 0 && hi > 1 && c->evals < c->max_evals;) {
        pick[i] = false;
        char *keep = pa_join(cand, pick, n);
        int rc = pa_try(c, keep, &x, err);
        free(keep);
        if (rc < 0)
            return -1;
        if (x <= 1)
            ehi = x;
        else
            pick[i] = true;
    }
    *e = ehi;
    return 0;
}

size_t pa_max_evals(size_t n)
{
    size_t lg = 0;
    while (((size_t)1 << lg) < n)
        lg++;
    return 2 * lg + 3;
}

/* ---- the whole ------------------------------------------------------- */

/* c's inputs, float inputs rounded to o->dtype where the fully converted
 * model `full` takes them in it, so that both models see the same numbers
 * and the error measures the computation alone. */
static int pa_inputs(PaCtx *c, IrModel *orig, const IrModel *full, const PaOptions *a,
                     IrError *err)
{
    if (vf_make_inputs(orig, &a->vf, &c->in, &c->n_in, err) < 0)
        return -1;
    IrValueInfo **f;
    size_t nf = ev_model_feeds(full, &f);
    for (size_t i = 0; i < c->n_in && i < nf; i++) {
        const IrType *t = f[i]->type;
        EvValue *x = c->in[i];
        if (!t || t->kind != IR_TYPE_TENSOR || t->elem_type != c->o->dtype ||
            !pa_is_f32(x))
            continue;
        EvValue *r = pa_round(x, c->o->dtype, IR_FLOAT, err);
        if (!r) {
            free(f);
            return -1;
        }
        ev_unref(x);
        c->in[i] = r;
    }
    free(f);
    return 0;
}

/* The reason a kept node's entry gets. */
static void pa_reason(PcReport *r, const PaCand *cand, const bool *pick, size_t n,
                      double rtol)
{
    for (size_t i = 0; i < n; i++) {
        if (!pick[i])
            continue;
        for (size_t k = 0; k < r->n_kept; k++) {
            if (strcmp(r->kept[k].node, cand[i].label))
                continue;
            char why[160];
            if (cand[i].body)
                snprintf(why, sizeof why, "--auto: its bodies' error is not measured "
                         "alone; kept whole");
            else if (cand[i].score > rtol)
                snprintf(why, sizeof why, "--auto: error %.3g > tolerance %g",
                         cand[i].score, rtol);
            else
                snprintf(why, sizeof why, "--auto: error %.3g, needed for the "
                         "outputs' tolerance", cand[i].score);
            free(r->kept[k].reason);
            r->kept[k].reason = mem_strdup(why);
        }
    }
}

/* The search once the full conversion missed: ranks, searches, converts
 * m keeping what it found, and fills ar and r. */
static int pa_keep_some(PaCtx *c, IrModel *m, const PcReport *full, PcReport *r,
                        PaReport *ar, IrError *err)
{
    PaCand *cand;
    size_t n = pa_rank(c, m, full, &cand);
    ar->candidates = n;
    c->max_evals = pa_max_evals(n);
    qsort(cand, n, sizeof *cand, pa_cand_cmp);
    bool *pick = mem_array(n ? n : 1, sizeof *pick);
    int rc = n ? pa_search(c, cand, n, pick, &ar->error, err)
               : !isfinite(ar->error_full)
               ? ir_fail(err, "--auto: no node computes in %s, yet %s",
                         pc_dtype_word(c->o->dtype), c->inf_why)
               : ir_fail(err, "--auto: no node computes in %s, yet the outputs' "
                         "error is %.3g times the tolerance", pc_dtype_word(c->o->dtype),
                         ar->error_full);
    char *keep = rc == 0 ? pa_join(cand, pick, n) : NULL;
    PcOptions o = *c->o;
    char *list = NULL;
    if (keep) {
        const char *u = o.keep_nodes ? o.keep_nodes : "";
        size_t cap = strlen(u) + strlen(keep) + 2;
        list = malloc(cap);
        snprintf(list, cap, "%s%s%s", u, *u && *keep ? "," : "", keep);
        o.keep_nodes = list;
        o.keep_whole = *keep;
        rc = pc_convert(m, &o, r, err);
    }
    if (rc == 0) {
        pa_reason(r, cand, pick, n, c->rtol);
        for (size_t i = 0; i < n; i++)
            if (pick[i]) {
                ar->kept = mem_grow(ar->kept, ar->n_kept + 1, sizeof *ar->kept);
                ar->kept[ar->n_kept++] = mem_strdup(cand[i].label);
            }
    }
    free(keep);
    free(list);
    free(pick);
    for (size_t i = 0; i < n; i++)
        free(cand[i].label);
    free(cand);
    return rc;
}

int pa_convert(IrModel *m, const PcOptions *o, const PaOptions *a, PcReport *r,
               PaReport *ar, IrError *err)
{
    if (o->dtype != IR_FLOAT16 && o->dtype != IR_BFLOAT16)
        return ir_fail(err, "--auto goes with --dtype float16 or bfloat16");
    PaCtx c = {.o = o, .eo = a->vf.eval, .orig = m};
    c.eo.seed = a->vf.seed;
    c.rtol = a->rtol > 0 ? a->rtol : PA_DEFAULT_RTOL;
    c.atol = a->atol > 0 ? a->atol
             : o->dtype == IR_FLOAT16 ? VF_FLOAT16_ATOL : VF_BFLOAT16_ATOL;
    *ar = (PaReport){.rtol = c.rtol, .atol = c.atol};
    IrModel *snap = ir_model_clone(m);
    c.snap = snap;
    IrModel *full = NULL;
    PcReport fr = {0};
    int rc = pa_convert_copy(&c, NULL, &full, &fr, err);
    if (rc == 0)
        rc = pa_inputs(&c, m, full, a, err);
    if (rc == 0)
        rc = pa_run(&c, m, "the original model", &c.want, err);
    if (rc == 0)
        rc = pa_error(&c, full, &ar->error_full, err);
    if (rc == 0) {
        ar->error = ar->error_full;
        ar->candidates = fr.nodes_converted;
        if (ar->error_full <= 1)
            rc = pc_convert(m, o, r, err);   /* within: the full conversion */
        else
            rc = pa_keep_some(&c, m, &fr, r, ar, err);
    }
    ar->evaluations = c.evals;
    ev_values_free(c.want, c.want ? c.n_out : 0);
    ev_values_free(c.in, c.in ? c.n_in : 0);
    ir_model_free(full);
    pc_report_free(&fr);
    ir_model_free(snap);
    return rc;
}

void pa_report_free(PaReport *r)
{
    for (size_t i = 0; i < r->n_kept; i++)
        free(r->kept[i]);
    free(r->kept);
    *r = (PaReport){0};
}
