/*
 * coreml.h - ONNX <-> Core ML ML Program (prefix cm_): the export lowers an
 * ONNX model (already converted to CM_ONNX_OPSET) to a MilModel, the import
 * raises a MilModel to ONNX at CM_ONNX_OPSET, so that the reference
 * evaluator can judge an export by a round trip.
 *
 * Each op's lowering and raising live in the family files src/coreml/
 * <family>.c (the families of src/schema/opschema_flags.txt), which export rule
 * tables this driver lists; Conv's lowering is in src/coreml/nn.c.
 */
#ifndef OC_COREML_H
#define OC_COREML_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "coreml/mil.h"

/* The one ONNX opset the export reads and the import writes: 17 holds
 * LayerNormalization (lowered to one layer_norm instead of its expansion)
 * and every op of the shared models; the caller converts first (cv_convert),
 * so each op is lowered from one version only. */
#define CM_ONNX_OPSET 17

typedef struct CmOptions {
    int target;             /* index into mil_targets, or -1: the lowest one
                               that holds every MIL op emitted */
} CmOptions;

/* An input or output whose name in the package is not the graph's (made
 * a MIL identifier: a word MIL reserves such as `state` gets coremltools'
 * "_workaround" suffix, other characters become '_'), or a scalar input
 * that crosses as [1] (Apple's loader takes no rank-0 function input). */
typedef struct CmIoNote {
    char onnx[256], mil[256];
    bool input, scalar;
} CmIoNote;

/* The io notes a report keeps (n_io_notes counts them all). */
#define CM_MAX_IO_NOTES 16

typedef struct CmReport {
    int target;             /* the target chosen (index into mil_targets) */
    int lowest;             /* the lowest target that holds the model (the
                               one chosen unless a target was asked) */
    /* The MIL op that forced it (the first emitted whose first target is
     * the model's), and the ONNX node and op it was lowered from; "" when
     * nothing was emitted. */
    char forced_op[64];
    char forced_node[256];
    char forced_onnx_op[64];
    size_t n_nodes;         /* ONNX nodes lowered */
    size_t n_folded;        /* ONNX nodes whose outputs were known constants
                               (shape arithmetic), emitted as const ops */
    size_t n_ops;           /* MIL ops emitted, consts included */
    size_t n_consts;
    /* A refusal, besides err's line: the ONNX node, op and version at
     * fault ("" and 0 when none), the MIL op concerned ("" when none), the
     * first target whose version of it fits (-1: none, or no question of
     * target) and the kind: "unsupported" (no lowering for the op, an
     * attribute or a type), "target" (the MIL op is newer than the target
     * asked) or "constant-parameter" (it takes a constant only); NULL when
     * the export did not refuse. */
    char fail_node[256];
    char fail_op[64];
    int fail_version;
    char fail_mil_op[64];
    int fail_first;
    const char *fail_kind;
    size_t n_io_notes;
    CmIoNote io_notes[CM_MAX_IO_NOTES];
} CmReport;

/* Lowers m (ai.onnx at CM_ONNX_OPSET, no other domain) to a new MilModel
 * (*out, the caller frees it with mil_model_free) with one function "main":
 * graph inputs become its inputs (int64 as int32, as coremltools does;
 * float64 is refused, not narrowed: a silent loss of precision is worse
 * than a clear refusal), initializers and known values become const ops,
 * each node is lowered by its family's rule and the outputs keep the
 * graph's names (made into MIL identifiers where they are not). The model
 * description lists the inputs and outputs (symbolic dims flexible).
 * Type inference runs on m first: its inferred types (the IR's caches) are
 * refreshed, nothing else of m changes. Returns 0, or -1 with err naming
 * the node, op, target and reason (nothing in *out). */
int cm_export(const IrModel *m, const CmOptions *o, MilModel **out, CmReport *r,
              IrError *err);

/* Raises the function "main" of mm to a new ONNX model at CM_ONNX_OPSET
 * (*out, freed by the caller): const ops become initializers, every other
 * op the export emits becomes ONNX nodes. Returns 0, or -1 with err naming
 * the MIL op (type and name) that has no raising or is malformed. */
int cm_import(const MilModel *mm, IrModel **out, IrError *err);

/* Gives the import rt of an export of orig orig's boundary types where
 * Core ML changed them (int64 computed as int32; bool, and float16 below
 * iOS16, carried as fp32 across the description): a Cast after each such
 * input and before each such output, so that the evaluator feeds and
 * compares both models with the original's data. Inputs and outputs pair
 * by position; any other difference is left for the comparison to find. */
void cm_retype_like(IrModel *rt, const IrModel *orig);

/* Whether the export has a lowering for ai.onnx op `op` (it may still
 * refuse some attribute combinations). */
bool cm_lowers(const char *op);

/* ONNX element type <-> MIL dtype; 0 when there is none. int64 maps to
 * int32 (Core ML computes indices in int32); the reverse maps int32 to
 * INT32. */
int32_t cm_dtype_to_mil(int32_t onnx_dtype);
int32_t cm_dtype_to_onnx(int32_t mil_dtype);

#endif
