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

#include "ir/ir.h"

/* What a pass needs before it runs (OptPass.needs). */
enum {
    OPT_NEEDS_TYPES = 1   /* inferred types on values (IrValue.type) */
};

typedef struct OptOptions {
    const char *passes;     /* comma-separated pass names; NULL = default */
    int max_iters;          /* fixed-point iteration cap; 0 = 8 */
    uint64_t fold_limit;    /* bytes one constant fold may add; 0 = 1 MiB */
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
 * pass name, or a pass that failed). A failure before the first round
 * leaves m unchanged and st->iterations 0. */
int opt_optimize(IrModel *m, const OptOptions *o, OptStats *st, IrError *err);
void opt_stats_free(OptStats *st);
/* 0 when every name of the comma-separated list is a pass; else -1 naming
 * the first that is not (what opt_optimize would refuse it with). */
int opt_passes_check(const char *list, IrError *err);

/* Applies `--input-shape NAME=D1,D2,...` (passes/input_shape.c): the main
 * graph input NAME gets these static dims (an empty list: a scalar). The
 * rank and any dims the model fixes must agree. 0, or -1 with err set. */
int opt_set_input_shape(IrModel *m, const char *spec, IrError *err);

/* Nodes in every scope the passes see. */
size_t opt_count_nodes(const IrModel *m);

/* ---- helpers several passes share (passes/util.c) ---- */

/* The tensor a value always holds: an initializer that is not a graph
 * input (one that is, is a default a caller may replace), or an ai.onnx
 * Constant node's `value`; else NULL. Borrowed. */
const IrTensor *opt_const_tensor(const IrValue *v);
/* Whether c's scope may hold initializers that are not graph inputs: the
 * main graph and its subgraphs from IR 4 (below, an initializer is also a
 * graph input, part of the interface, and a subgraph's inputs are fixed by
 * its op); never a function body (FunctionProto has no initializers). */
bool opt_inits_ok(const OptCtx *c);
/* Whether a constant of dtype can be placed in c's scope (initializers
 * where opt_inits_ok; Constant nodes elsewhere, which hold only float
 * types below opset 9). */
bool opt_can_place_const(const OptCtx *c, int32_t dtype);
/* Makes output i of k a constant holding t (takes t): an initializer of
 * the same name where opt_inits_ok, else a Constant node inserted before k
 * that takes over the value. k keeps its other outputs. 0 or -1. */
int opt_replace_by_const(OptCtx *c, IrNode *k, size_t i, IrTensor *t);
/* A new constant value named after base holding t (takes t), inserted
 * before `before` when it is a Constant node; NULL on failure. */
IrValue *opt_add_const(OptCtx *c, IrNode *before, const char *base, IrTensor *t);

/* Calls fn on every node of c->g in order (fn may delete the node it is
 * given): the sum of its results (1 per rewrite), or -1 when one fails. */
long opt_each_node(OptCtx *c, int (*fn)(OptCtx *c, IrNode *k));

/* The passes (one per file in passes/). */
extern const OptPass opt_pass_dead_code;
extern const OptPass opt_pass_identity;
extern const OptPass opt_pass_constant_to_init;
extern const OptPass opt_pass_unused_init;
extern const OptPass opt_pass_fold;
extern const OptPass opt_pass_fold_shapes;
extern const OptPass opt_pass_if_const;
extern const OptPass opt_pass_fuse_layernorm;
extern const OptPass opt_pass_fuse_gelu;
extern const OptPass opt_pass_fuse_rmsnorm;
extern const OptPass opt_pass_fuse_pad;
extern const OptPass opt_pass_fuse_bn;
extern const OptPass opt_pass_fuse_conv_add;
extern const OptPass opt_pass_fuse_conv_mul;
extern const OptPass opt_pass_fuse_transpose;
extern const OptPass opt_pass_fuse_reshape;
extern const OptPass opt_pass_fuse_cast;
extern const OptPass opt_pass_fuse_concat;
extern const OptPass opt_pass_fuse_gemm;
extern const OptPass opt_pass_fuse_slice;
extern const OptPass opt_pass_noop;
extern const OptPass opt_pass_dedup_init;
extern const OptPass opt_pass_cse;
extern const OptPass opt_pass_value_info;
extern const OptPass opt_pass_fuse_attention;

#endif
