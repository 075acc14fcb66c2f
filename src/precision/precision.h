/*
 * precision.h - changing a model's float precision (prefix pc_).
 *
 * --dtype float16|bfloat16 makes float32 values of the main graph the new
 * type; --dtype float32 makes float16 and bfloat16 values float32. Whether a
 * node may compute in the new type is read from the operator table at the
 * node's version (its type constraints), never from a list of ops: a node
 * whose constraint lacks the type stays in its old type between Casts, and
 * a slot of a fixed type (Resize's scales: tensor(float)) keeps it. Casts go
 * only where a value's stored type differs from what a reader takes, one
 * per (value, type), so no two Casts of ours are ever back to back, and
 * nodes stay in topological order (a Cast goes right after what it reads).
 *
 * Bodies (If, Loop, Scan, SequenceMap: any graph attribute) are converted
 * like the main graph, node by node. The node holding them is decided
 * like any other (its schema, the keep lists); its bodies' boundary
 * follows it: converted, every old-type body input and output takes the
 * new type; kept, they keep the old one and the converted nodes inside
 * sit between Casts inside the body. A reader in a body of an outer
 * value whose type differs gets a Cast first in the body directly inside
 * the value's graph; a body returning an outer value or its own input
 * directly in another type returns a Cast of it. Unnamed nodes of a
 * body are labelled OWNER/ATTR#N ("loop/body#3"), so "#N" stays the main
 * graph's.
 *
 * A call of a model-local function converts like any node (keep lists,
 * known types); its slots all switch and the function's body converts
 * once, node by node, its inputs and outputs taking the new type (types
 * come from the calls, as inference gives them). When every call of a
 * function converts, the function changes in place; when some convert
 * and others keep the old type (--keep-float32-node on one call, or a
 * call inside a function that does not convert), the converting calls
 * get a converted copy, NAME_float16 (NAME_bfloat16, NAME_float32) in
 * the same domain, and the others keep the original. Functions calling
 * functions follow the same rule. Unnamed nodes of a function body are
 * labelled FUNCTION/#N. Still kept in the old type:
 *   - calls of a function whose calls give its values differing element
 *     types ("function called with differing types"): one body cannot
 *     serve both;
 *   - inside a body, an output whose type a referenced attribute sets
 *     (Cast's `to` = ref_attr_name: each call sets it) keeps its type; the
 *     node's inputs still switch (a Cast reads float16 as well), and its
 *     readers that convert read a Cast of it.
 *
 * --store float16 (weights only) stores each float32 initializer of the
 * main graph of at least PC_STORE_MIN elements as float16, followed by a
 * Cast back to float32 under the initializer's old name: the file shrinks,
 * every consumer and the computation stay float32.
 *
 * Shape-like values keep their type: an input the operator table flags
 * shape_in= (Reshape's shape, Upsample's scales, TopK's K, Loop's M, ...)
 * never switches, and the nodes computing its value from constants and
 * shapes alone keep theirs (rounded, 5 * 2.2 = 11 becomes 10: a shape
 * no tolerance covers).
 *
 * Values outside the new type's finite range are clamped to it and
 * counted (strict: refused, naming the tensor); float32 -> bfloat16 and
 * -> float16 round to nearest even.
 */
#ifndef OC_PRECISION_H
#define OC_PRECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Smaller initializers stay float32 under --store float16: the Cast node
 * they would need takes more bytes in the file than the 2 bytes per
 * element saved (a Cast with its names and attribute is ~40 bytes), and
 * the smallest ones are scalars and short vectors (epsilons, shape-like
 * constants, exponents) where a runtime reads the value as it is. */
#define PC_STORE_MIN 16

typedef struct PcOptions {
    int32_t dtype;          /* IR_FLOAT16, IR_BFLOAT16, IR_FLOAT, or 0: none */
    bool keep_io;           /* graph inputs (not IR 3 weights) and outputs keep their type */
    const char *keep_ops;   /* "Softmax,ReduceSum": these ops keep the type */
    const char *keep_nodes; /* node names that keep the type */
    /* a node keep_nodes names keeps all of it in the old type: the
     * Constants it reads (its weights, as its initializers already do)
     * and every node of its bodies (--auto: what it keeps must compute
     * exactly as the original) */
    bool keep_whole;
    bool strict;            /* refuse values outside the new type's range */
    int32_t store;          /* IR_FLOAT16: weights-only half storage, or 0 */
} PcOptions;

/* A node that kept its type although it reads or writes a converted
 * type, and why ("Relu-6 has no type tensor(bfloat16)", "--keep-float32",
 * "--keep-float32-node", "function called with differing types"). Strings
 * owned. */
typedef struct PcKept {
    char *node;             /* its name, or "#N" (its position) */
    char *op;
    char *reason;
} PcKept;

typedef struct PcReport {
    int32_t dtype, store;   /* as asked */
    size_t nodes_converted; /* nodes that compute in the new type (bodies too) */
    size_t n_kept;
    PcKept *kept;
    size_t casts;           /* Cast nodes added */
    size_t clamped;         /* elements clamped to the finite range */
    size_t stored;          /* --store: initializers stored as float16 */
    uint64_t init_bytes_before, init_bytes_after; /* main graph initializers */
    /* what to do when nothing could change ("" otherwise): bfloat16 asked
     * of a model whose opset's Cast lacks it */
    char hint[256];
} PcReport;

/* Changes m (sorted and valid) as o says; r (may be NULL) gets what was
 * done. Returns 0, or -1 with err naming the node or initializer; on -1
 * the model may be half changed (the job drops it). */
int pc_convert(IrModel *m, const PcOptions *o, PcReport *r, IrError *err);

/* A copy of m with every float16 and bfloat16 value widened to float32
 * (--dtype float32): what a runtime computing a half model in float32
 * computes, only the weights' and Casts' half rounding left. 0 and *out
 * (the caller frees), or -1 with err. */
int pc_widen_copy(const IrModel *m, IrModel **out, IrError *err);
/* A copy of m with every float32, float16 and bfloat16 value float64
 * where its node takes double (the others keep their type between
 * Casts, as --dtype does), inputs and outputs too: the original run in a
 * wider type, whose difference from m's own run is m's rounding noise
 * (verification's floor). 0 and *out, or -1 with err. */
int pc_wide_copy(const IrModel *m, IrModel **out, IrError *err);

/* Whether o asks for anything. */
bool pc_wanted(const PcOptions *o);

/* "float16", "bfloat16", "float32" for the codes --dtype takes, 0 for
 * other names; and back (NULL for 0). */
int32_t pc_dtype_parse(const char *name);
const char *pc_dtype_word(int32_t dtype);

void pc_report_free(PcReport *r);

#endif
