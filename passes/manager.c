/*
 * manager.c - the pass list and the pass manager (prefix opt_).
 *
 * A pipeline is a list of passes run in order, over and over, until one
 * round changes nothing (a fixed point) or the round cap is reached. Each
 * pass sees each scope separately: the main graph, then its subgraphs
 * (depth first), then each function body and its subgraphs. Passes that
 * need types get a fresh inference of the whole model first, since an
 * earlier pass may have changed what flows where.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "eval/eval.h"
#include "ir/diag.h"
#include "analysis/infer.h"

#define OPT_DEFAULT_ITERS 8

/* The default pipeline, in this order. */
const OptPass *const opt_passes[] = {
    &opt_pass_constant_to_init,
    &opt_pass_fold_shapes,
    &opt_pass_fold,
    &opt_pass_if_const,
    &opt_pass_identity,
    &opt_pass_noop,
    &opt_pass_dedup_init,
    &opt_pass_cse,
    &opt_pass_fuse_transpose,
    &opt_pass_fuse_reshape,
    &opt_pass_fuse_cast,
    &opt_pass_fuse_concat,
    &opt_pass_fuse_slice,
    &opt_pass_fuse_pad,
    &opt_pass_fuse_bn,
    &opt_pass_fuse_conv_add,
    &opt_pass_fuse_conv_mul,
    &opt_pass_fuse_gemm,
    &opt_pass_fuse_layernorm,
    &opt_pass_fuse_gelu,
    &opt_pass_fuse_rmsnorm,
    &opt_pass_fuse_attention,
    &opt_pass_dead_code,
    &opt_pass_unused_init,
    &opt_pass_value_info,
};
const size_t opt_passes_n = sizeof opt_passes / sizeof opt_passes[0];

const OptPass *opt_find(const char *name)
{
    for (size_t i = 0; i < opt_passes_n; i++)
        if (strcmp(opt_passes[i]->name, name) == 0)
            return opt_passes[i];
    return NULL;
}

/* ---- walking scopes --------------------------------------------------- */

static int opt_count_graph(const IrGraph *g, const IrWalkAt *at, void *n)
{
    for (const IrNode *k = g->first; k; k = k->next)
        (*(size_t *)n)++;
    return 0;
}

/* Whether node k lacks its op_type or has an attribute without a name. */
static bool opt_unnamed(const IrNode *k)
{
    if (!k->op_type)
        return true;
    for (size_t a = 0; a < k->n_attr; a++)
        if (!k->attr[a]->name)
            return true;
    return false;
}

/* The first node of g or its subgraphs that opt_unnamed finds, or NULL.
 * "First" is node by node, each node's subgraphs right after it, which
 * ir_each_graph (graph by graph) does not give: the message names it. */
static const IrNode *opt_find_unnamed(const IrGraph *g)
{
    for (const IrNode *k = g->first; k; k = k->next) {
        if (opt_unnamed(k))
            return k;
        for (size_t a = 0; a < k->n_attr; a++) {
            const IrNode *bad = k->attr[a]->g ? opt_find_unnamed(k->attr[a]->g) : NULL;
            for (size_t j = 0; !bad && j < k->attr[a]->n_graphs; j++)
                bad = opt_find_unnamed(k->attr[a]->graphs[j]);
            if (bad)
                return bad;
        }
    }
    return NULL;
}

size_t opt_count_nodes(const IrModel *m)
{
    size_t n = 0;
    ir_each_graph_const(m, IR_WALK_MAIN | IR_WALK_FUNCTIONS | IR_WALK_SUBGRAPHS,
                        opt_count_graph, &n);
    return n;
}

/* One pass's run over the scopes of a model. */
typedef struct OptRun {
    OptCtx *c;
    const OptPass *p;
    long total;
} OptRun;

/* Runs the pass on g (called after g's subgraphs, so that a node's body
 * is simplified before the node is judged). */
static int opt_run_graph(IrGraph *g, const IrWalkAt *at, void *arg)
{
    OptRun *run = arg;
    OptCtx *c = run->c;
    c->fn = at->fn;
    c->g = g;
    c->main = !at->node && !at->fn;
    long r = run->p->run(c);
    if (r < 0)
        return -1;
    if (r > 0)
        ir_graph_collect(g);
    run->total += r;
    return 0;
}

/* One pass over every scope of the model. */
/* *typed says whether the inferred types still describe the model: a
 * pass that needs them re-infers only after some pass changed something. */
static long opt_run_pass(IrModel *m, const OptOptions *o, const OptPass *p, bool *typed,
                         IrError *err)
{
    if ((p->needs & OPT_NEEDS_TYPES) && !*typed) {
        IrError e;
        InfOptions proving = {.use_value_info = true, .run = ev_prove_node};
        if (inf_model(m, &proving, &e) < 0)
            return ir_fail(err, "%s: types are needed and inference failed: %s", p->name,
                           e.msg);
        *typed = true;
    }
    OptCtx c = {.m = m, .o = o, .err = err};
    OptRun run = {&c, p, 0};
    if (ir_each_graph(m, IR_WALK_MAIN | IR_WALK_FUNCTIONS | IR_WALK_SUBGRAPHS | IR_WALK_POST,
                      opt_run_graph, &run))
        return -1;
    return run.total;
}

/* ---- the pipeline ----------------------------------------------------- */

/* Fills st->pass from a comma-separated list (NULL: the default). */
static int opt_pick(const char *list, OptStats *st, IrError *err)
{
    if (!list) {
        st->n = opt_passes_n;
        st->pass = mem_array(st->n, sizeof *st->pass);
        for (size_t i = 0; i < st->n; i++)
            st->pass[i] = opt_passes[i];
        return 0;
    }
    size_t cap = 1;
    for (const char *s = list; *s; s++)
        cap += *s == ',';
    st->pass = mem_array(cap, sizeof *st->pass);
    const char *s = list;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char name[64];
        if (len == 0 || len >= sizeof name)
            return ir_fail(err, "--passes: an empty or too long pass name");
        memcpy(name, s, len);
        name[len] = 0;
        const OptPass *p = opt_find(name);
        if (!p)
            return ir_fail(err, "--passes: no pass named '%s' (see --list-passes)", name);
        st->pass[st->n++] = p;
        s += len + (e ? 1 : 0);
    }
    if (st->n == 0)
        return ir_fail(err, "--passes: no pass named");
    return 0;
}

int opt_passes_check(const char *list, IrError *err)
{
    OptStats st;
    memset(&st, 0, sizeof st);
    int rc = opt_pick(list, &st, err);
    opt_stats_free(&st);
    return rc;
}

int opt_optimize(IrModel *m, const OptOptions *o, OptStats *st, IrError *err)
{
    memset(st, 0, sizeof *st);
    if (opt_pick(o ? o->passes : NULL, st, err) < 0)
        return -1;
    /* The loader keeps a NodeProto without op_type, or an attribute
     * without a name (the checker reports both). Such a node computes
     * nothing anyone can name, so no pass can reason about it, and every
     * pass may rely on op_type and attribute names being set. */
    const IrNode *bad = m->graph ? opt_find_unnamed(m->graph) : NULL;
    for (size_t i = 0; !bad && i < m->n_functions; i++)
        if (m->functions[i]->body)
            bad = opt_find_unnamed(m->functions[i]->body);
    if (bad) {
        DgDiag d = dg_none();
        char label[300];
        dg_set_node(&d, bad, NULL, 0);
        return ir_fail(err, "%s lacks its op_type or an attribute name: cannot "
                       "optimize a model with it", dg_label(&d, label, sizeof label));
    }
    st->changes = mem_array(st->n, sizeof *st->changes);
    st->nodes_before = opt_count_nodes(m);
    int cap = o && o->max_iters > 0 ? o->max_iters : OPT_DEFAULT_ITERS;
    bool typed = false;     /* inference has run since the last change */
    for (int it = 0; it < cap; it++) {
        long round = 0;
        st->iterations = it + 1;
        for (size_t i = 0; i < st->n; i++) {
            long r = opt_run_pass(m, o, st->pass[i], &typed, err);
            if (r < 0)
                return -1;
            typed = typed && r == 0;
            st->changes[i] += r;
            round += r;
        }
        if (round == 0)
            break;
    }
    if (m->graph)
        ir_graph_clear_inferred(m->graph);
    st->nodes_after = opt_count_nodes(m);
    return 0;
}

void opt_stats_free(OptStats *st)
{
    free(st->pass);
    free(st->changes);
    memset(st, 0, sizeof *st);
}
