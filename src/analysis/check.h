/*
 * check.h - validation of a loaded model (prefix chk_).
 *
 * The rules of onnx.checker and those it misses: IR version and opset
 * imports, every node against its schema (op exists at the opset, arity,
 * attributes), graph structure (SSA across scopes, topological order,
 * every input defined, every output produced), tensor payloads (data type,
 * dims, size, overflow), sparse tensors, model-local functions (unique, not
 * recursive), features newer than the declared IR version, and, once the
 * structure holds, type and shape inference (types against the schemas'
 * constraints, shapes that cannot fit). Subgraphs and function bodies are
 * checked with the same rules.
 *
 * Every finding is one line "RULE: WHERE: WHAT", WHERE naming the graph
 * element (node by name, or by index and op). Rules are listed in
 * chk_rules (docs/checker.md). A finding is an error (the model is
 * invalid), a warning (a defect of the table of tolerate.h, which other
 * tools write and ONNX Runtime accepts: the model is valid, `check
 * --strict` refuses it, and convert and optimize repair it; its rule is
 * the defect's id) or a note (a declared element type that disagrees
 * with inference: a hint, not computation).
 */
#ifndef OC_CHECK_H
#define OC_CHECK_H

#include <stddef.h>

#include "analysis/known.h"
#include "ir/ir.h"

typedef enum { CHK_ERROR = 0, CHK_NOTE = 1, CHK_WARNING = 2 } ChkSeverity;

typedef struct ChkItem {
    ChkSeverity sev;
    char msg[512];
} ChkItem;

/* What a check found. Items beyond CHK_MAX_ITEMS are counted, not kept. */
#define CHK_MAX_ITEMS 1000
typedef struct ChkReport {
    size_t n, cap;
    ChkItem *items;
    size_t n_errors, n_notes, n_warnings;
    unsigned defects;     /* the tolerated defects found: bits 1u << TolId */
    size_t n_nodes;       /* nodes checked, subgraphs and functions included */
    size_t n_unchecked;   /* nodes of custom domains (no schema to check) */
} ChkReport;

/* Checks m; fills r (free with chk_report_free). Returns the number of
 * errors (0 = valid). */
size_t chk_model(IrModel *m, ChkReport *r);
/* The same, with inference proving values known by running nodes through
 * `run` (InfOptions.run: the evaluator's ev_prove_node, which the checker
 * does not link itself), so that a declared shape a computed Reshape
 * target contradicts is found. What the product's check runs. */
size_t chk_model_run(IrModel *m, KvRunFn run, ChkReport *r);
void chk_report_free(ChkReport *r);
/* The first error's message, or NULL. */
const char *chk_first_error(const ChkReport *r);
/* The first warning's message (a tolerated defect), or NULL. */
const char *chk_first_warning(const ChkReport *r);

/* The gate before anything runs a model (the evaluator, `run`, `test`,
 * --verify, the library's oc_evaluate): 0 when chk_model accepts m; else
 * -1 with err "WHAT: FIRST FINDING", WHAT naming the file. */
int chk_require(IrModel *m, const char *what, IrError *err);

/* The checker's rules for node n on its own, as it sits in m (in the body
 * of fn, or NULL): op_type set, the op known at the scope's opset, arity,
 * left-out required inputs, attribute names, types, values and required
 * attributes. Not its place in the graph, nor types (the whole model's
 * check does those); a node holding a subgraph is refused (its names
 * resolve in the scopes around it). For a node a pass made, before
 * constant folding runs it. Returns the number of errors; fills r as
 * chk_model does. */
size_t chk_node_alone(IrModel *m, const IrFunction *fn, IrNode *n, ChkReport *r);

/* The rule names of errors, NULL-terminated (for documentation and
 * tests); the warnings' are the ids of tolerate.h's table. */
extern const char *const chk_rules[];

#endif
