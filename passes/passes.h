/*
 * passes.h - optimization passes and the pass manager (prefix opt_).
 *
 * A pass is a descriptor (OptPass: name, one-line description, whether it
 * is idempotent, what it needs) and a function that rewrites one graph and
 * returns how many changes it made. passes/<name>.c holds one pass each;
 * passes/manager.c lists them and runs a pipeline to a fixed point.
 *
 * The manager calls a pass once per scope: the main graph, every subgraph
 * (If/Loop/Scan bodies, at any depth) and every model-local function body.
 * Training graphs (training_info) are never touched: they name values of
 * the main graph.
 *
 * Every pass keeps the graph's inputs and outputs as they are (names, types,
 * order): a value that is a graph output of its scope is never renamed or
 * removed, and graph inputs stay even when unused.
 */
#ifndef OC_PASSES_H
#define OC_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/ir.h"

/* What a pass needs before it runs (OptPass.needs). */
enum {
    OPT_NEEDS_TYPES = 1   /* inferred types on values (IrValue.type) */
};

typedef struct OptOptions {
    const char *passes;     /* comma-separated pass names; NULL = default */
    int max_iters;          /* fixed-point iteration cap; 0 = 8 */
} OptOptions;

/* One scope being optimized. */
typedef struct OptCtx {
    IrModel *m;
    IrGraph *g;             /* the graph the pass rewrites */
    IrFunction *fn;         /* the function whose body holds g, or NULL */
    bool main;              /* g is the model's main graph */
    const OptOptions *o;
    IrError *err;
} OptCtx;

typedef struct OptPass {
    const char *name;
    const char *what;       /* one line, for --list-passes */
    bool idempotent;
    unsigned needs;         /* OPT_NEEDS_* */
    long (*run)(OptCtx *c); /* changes made, or -1 with c->err set */
} OptPass;

/* Changes each pass made over a whole run. */
typedef struct OptStats {
    size_t n;               /* passes in the pipeline */
    const OptPass **pass;
    long *changes;
    int iterations;         /* pipeline rounds run (the last made none) */
    size_t nodes_before, nodes_after;   /* in all scopes */
} OptStats;

/* Every pass, in the order the default pipeline runs them. */
extern const OptPass *const opt_passes[];
extern const size_t opt_passes_n;

/* The pass named `name`, or NULL. */
const OptPass *opt_find(const char *name);

/* Runs the pipeline (o->passes, or the default) over every scope of m
 * until a round changes nothing or o->max_iters rounds ran. Fills *st
 * (free with opt_stats_free). Returns 0, or -1 with err set (an unknown
 * pass name, or a pass that failed). */
int opt_optimize(IrModel *m, const OptOptions *o, OptStats *st, IrError *err);
void opt_stats_free(OptStats *st);

/* Nodes in every scope the passes see. */
size_t opt_count_nodes(const IrModel *m);

/* The passes (one per file in passes/). */
extern const OptPass opt_pass_dead_code;
extern const OptPass opt_pass_identity;
extern const OptPass opt_pass_constant_to_init;
extern const OptPass opt_pass_unused_init;
extern const OptPass opt_pass_fuse_pad;
extern const OptPass opt_pass_fuse_bn;
extern const OptPass opt_pass_fuse_conv_add;
extern const OptPass opt_pass_fuse_conv_mul;

#endif
