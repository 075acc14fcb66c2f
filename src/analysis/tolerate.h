/*
 * tolerate.h - the defects other tools write that ONNX Runtime (and
 * onnx.checker, but for one) accept, which we read and repair (prefix
 * tol_).
 *
 * One table, TOL_DEFECTS, names each: its id (the rule `check` warns
 * with, `check --strict` refuses with, and the report's repairs name),
 * what it is, which exporters write it, how we read it and what we write
 * instead (docs/tolerated.md is the same table). The checker finds them
 * (check.c: a CHK_WARNING whose message starts with the id, and the bit
 * 1u << id in ChkReport.defects); tol_repair changes a model the checker
 * accepted so that nothing of the table is left in what is written.
 * Nothing here prints or exits.
 */
#ifndef OC_TOLERATE_H
#define OC_TOLERATE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/known.h"
#include "ir/ir.h"

/* X(ENUM, id, what it is, who writes it, read as, written as) */
#define TOL_DEFECTS(X)                                                              \
    X(OPSET_REPEATED, "opset-repeated",                                             \
      "a domain imported twice at the same version: \"\" twice, or \"\" and "        \
      "\"ai.onnx\" (one domain)",                                                   \
      "scikit-learn's exporter (skl2onnx)",                                         \
      "the one import",                                                             \
      "the import once")                                                            \
    X(DIM_MINUS_ONE, "dim-minus-one",                                               \
      "a declared dimension (graph input, output, value_info) with dim_value -1",   \
      "Kaldi-based exporters",                                                      \
      "an unknown dimension (no value, no name)",                                   \
      "an unknown dimension; other negative values stay refused (value-type)")      \
    X(INIT_NOT_INPUT, "init-not-input",                                             \
      "before IR 4, an initializer of the main graph that is not a graph input",    \
      "onnxmltools (its Core ML converter, IR 3 files)",                            \
      "a constant, as from IR 4 on (ONNX Runtime reads it so)",                     \
      "written at IR < 4: added to the graph inputs with the initializer's type, "  \
      "as IR 3 requires; at IR 4 or later: as it is (nothing to add)")              \
    X(OUTPUT_UNTYPED, "output-untyped",                                             \
      "a main-graph output without a type (no type field in its ValueInfo)",        \
      "graph editors that make a value an output without its type "                 \
      "(onnx-graphsurgeon, onnx.helper.make_empty_tensor_value_info)",              \
      "the type inference gives the value (refused, value-type, when it gives none)", \
      "the inferred type")                                                          \
    X(DECLARED_SHAPE, "declared-shape",                                             \
      "a declared shape (value_info, main-graph output) that contradicts "          \
      "inference: another rank, or another known size of a dimension",             \
      "graph editors and exporters that keep a shape from before an edit",         \
      "inference's shape (the declared one is a hint, and ONNX Runtime computes "   \
      "the inferred one)",                                                          \
      "the inferred shape in place of the declared one")

typedef enum {
#define TOL_ENUM(e, id, what, who, read, write) TOL_##e,
    TOL_DEFECTS(TOL_ENUM)
#undef TOL_ENUM
    TOL_N
} TolId;

typedef struct TolDefect {
    const char *id, *what, *who, *read, *write;
} TolDefect;

/* The table, indexed by TolId. */
extern const TolDefect tol_defects[TOL_N];

/* The defect whose id starts msg ("ID:"), or -1. */
int tol_of_message(const char *msg);

/* Where a declared shape contradicts the inferred one `got`: another
 * rank, or a dimension both know with other sizes (a declared -1 is
 * unknown). false when either has no shape. */
bool tol_shape_contradicts(const IrType *decl, const IrType *got);

/* Calls fn for each declared shape inference contradicts, after
 * inf_model ran on m: the value_info of the main graph and its
 * subgraphs, and the main graph's outputs (function bodies are inferred
 * per call, their types not kept). role is "value_info" or "graph
 * output". Returns how many. */
typedef void (*TolShapeFn)(void *arg, IrValueInfo *vi, const char *role);
size_t tol_each_bad_shape(IrModel *m, TolShapeFn fn, void *arg);

/* "[2,?,N]": a shape as reports print it (unknown rank "?"). Returns buf. */
char *tol_shape_str(const IrType *t, char *buf, size_t cap);

/* What a repair did: one line per defect repaired. */
typedef struct TolRepair {
    TolId id;
    size_t count;            /* elements repaired */
    char msg[600];
} TolRepair;

typedef struct TolReport {
    size_t n;
    TolRepair items[TOL_N];
    unsigned pending;        /* found, not yet repaired (tol_fit_ir's) */
    size_t init_names;       /* initializers that were not graph inputs */
    char init_list[500];     /* their first names */
} TolReport;

/* Repairs in m (which the checker accepts, reporting the defects of the
 * mask `found`, bits 1u << TolId) every defect that reading alone
 * settles: repeated imports written once, -1 dims made unknown, untyped
 * outputs typed and contradicted shapes replaced (both by inference,
 * which runs here when one of them was found, proving with `run` as the
 * checker did: see chk_model_run). INIT_NOT_INPUT waits for
 * the IR version written: tol_fit_ir. r (may be NULL) gets one line per
 * defect. Returns 0, or -1 with err when inference fails. */
int tol_repair(IrModel *m, unsigned found, KvRunFn run, TolReport *r, IrError *err);

/* Before writing m at its ir_version: when it is below 4, adds the main
 * graph's initializers that are not graph inputs to the inputs (irv_fit),
 * as IR 3 requires. Reports the INIT_NOT_INPUT that tol_repair left
 * pending (what was added, or that the IR written needs nothing). */
void tol_fit_ir(IrModel *m, TolReport *r);

#endif
