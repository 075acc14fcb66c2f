/*
 * convert.h - the version converter driver (prefix cv_).
 *
 * cv_convert walks a model from its opset to a target opset one step at a
 * time. At each step it applies the adapter (adapters/) of every node whose
 * op changes at that step, in the main graph, every subgraph, the training
 * graphs and every model-local function body (a function that imports the
 * domain itself is walked from its own version). Nodes of other domains pass
 * through untouched and are counted in the report. Afterwards the IR version
 * is chosen by the policy of cv_policy (docs/converter.md "IR versions"), and the
 * model is checked to hold nothing that IR version lacks.
 *
 * On a refusal the model is left half converted: callers discard it (the
 * CLI writes nothing).
 */
#ifndef OC_CONVERT_H
#define OC_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct CvOptions {
    int64_t opset;        /* target ai.onnx opset; 0 = keep the model's */
    int64_t opset_ml;     /* target ai.onnx.ml opset; 0 = keep */
    int64_t ir_version;   /* 0 = what the target opsets need */
    bool keep_metadata;   /* --keep-metadata: keep annotation-only content
                             (and a higher IR) instead of dropping it */
    const char *expand;   /* --expand: ai.onnx ops (comma separated) rewritten
                             with their expansion into older ops even where
                             the target opset has them (for runtimes that
                             lack them); NULL = none */
} CvOptions;

/* A domain the converter passed through untouched. */
typedef struct CvCustom {
    char *domain;
    size_t nodes;
} CvCustom;

typedef struct CvReport {
    size_t steps;           /* opset steps walked (all domains, all scopes) */
    size_t adapted;         /* nodes an adapter was applied to */
    size_t by_kind[8];      /* of those, by AdKind */
    size_t n_custom;
    CvCustom *custom;       /* owned; free with cv_report_free */
    int64_t ir_from, ir_to;
    const char *reason;     /* on refusal: a short key ("not-constant",
                               "type", "impossible", ...) for counting */
    /* On a refusal that a node is to blame for: its name ("" when it has
     * none), op, domain and the opset step (owned; NULL otherwise). */
    char *fail_node, *fail_op, *fail_domain;
    int64_t fail_from, fail_to;
    int fail_version;       /* the op's version at fail_from, 0 unknown */
    long long fail_index;   /* an unnamed node's position (diag.h), else -1 */
    /* If set, called for every adapter applied: (domain, op, version from,
     * version to). The tests use it to know which adapters were exercised. */
    void (*on_adapt)(void *arg, const char *domain, const char *op, int from, int to);
    void *on_adapt_arg;
    /* What the conversion dropped to fit the target (metadata, fields of a
     * vendor variant), one short line each ("NodeProto.metadata_props x12");
     * owned, freed by cv_report_free. */
    char **dropped;
    size_t n_dropped;
    /* What the conversion wrote exactly but a user should know, one line
     * each, naming the node ("node 'c' (ConvInteger-10): opset 10 -> 9:
     * ... a Conv on double ..."); owned, freed by cv_report_free. */
    char **warnings;
    size_t n_warnings;
    /* If nodes whose condition is known, replaced by the branch they take
     * before the walk (the other branch may hold what the target lacks) */
    size_t ifs_taken;
} CvReport;

/* Converts m in place. Returns 0, or -1 with err naming the node, op, step
 * and reason (and r->reason set). */
int cv_convert(IrModel *m, const CvOptions *o, CvReport *r, IrError *err);
void cv_report_free(CvReport *r);
/* Adds `line` to the CvReport `report`'s warnings (once: an adapter run
 * again on the same node says the same). The AdCtx.warn callback. */
void cv_report_warn(void *report, const char *line);
/* Adds one line to r->dropped. */
void cv_report_drop(CvReport *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether o's ir_version can be written: 0 (the policy chooses), or 3..14
 * and not below what o's target opsets need (Versioning.md). -1 with err
 * saying why (the command line makes it a usage error). */
int cv_options_check(const CvOptions *o, IrError *err);

/* Whether every op of the comma-separated list has an expansion (the
 * adapter that writes it with older ops where it does not exist). -1 with
 * err naming the first that has none (cv_expandable lists those that
 * have one). */
int cv_expand_check(const char *list, IrError *err);
/* The ops that have an expansion, comma separated, in buf (truncated to
 * cap). */
void cv_expandable(char *buf, size_t cap);

/* Inlines every call of a model-local function (main graph, subgraphs,
 * training graphs, calls in bodies) and removes the functions, for an IR
 * version that predates them (convert_inline.c). *calls = call sites
 * expanded. -1 with err naming the function and call it cannot inline. */
int cvi_inline(IrModel *m, size_t *calls, IrError *err);

/* The IR version a model importing ai.onnx at `opset` needs (the release
 * table of ONNX's versioning document), or -1 for an unknown opset. */
int64_t cv_ir_for_opset(int64_t opset);
/* Same for ai.onnx.ml. */
int64_t cv_ir_for_ml(int64_t opset);

#endif
