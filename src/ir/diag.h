/*
 * diag.h - one diagnostic: why a stage refused or failed, and where
 * (prefix dg_).
 *
 * The reasons are a JSON contract (docs/json.md: an error's
 * "reason", the batch summary's counts), so they are listed once here,
 * each with its JSON name, and code names them by enum. A node is named
 * one way everywhere (dg_label); a diagnostic prints one way (dg_format)
 * for the command line, the JSON report's message, batch mode and the C
 * library's error string. Nothing here allocates, prints or exits.
 */
#ifndef OC_DIAG_H
#define OC_DIAG_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Every reason: X(enum suffix, JSON name, what it means). DG_NONE (0, "")
 * is "no reason yet", so that `if (c->refusal)` asks whether one is set. */
#define DG_REASONS(X) \
    /* a node the converter or an adapter refused */ \
    X(ATTRIBUTE, "attribute", "an attribute value the target cannot express") \
    X(ATTRIBUTE_REFERENCE, "attribute-reference", "an attribute refers to a function's") \
    X(ARITY, "arity", "more or fewer inputs or outputs than the target allows") \
    X(BROADCAST, "broadcast", "a broadcast the target does not do") \
    X(DEPRECATED, "deprecated", "the op is deprecated at the target") \
    X(EXPAND, "expand", "--expand names an op without an expansion there") \
    X(IMPOSSIBLE, "impossible", "no exact conversion exists (adapters/impossible.c)") \
    X(INFERENCE, "inference", "the rewritten node does not check") \
    X(INTERNAL, "internal", "building the rewrite failed") \
    X(INVALID_SOURCE, "invalid-source", "the node is not valid at its own opset") \
    X(NO_ADAPTER, "no-adapter", "no adapter for the step") \
    X(NO_OLDER_FORM, "no-older-form", "the op has no form at the older opset") \
    X(NOT_CONSTANT, "not-constant", "an input must be a known constant") \
    X(SEMANTICS, "semantics", "the meaning differs and cannot be rewritten") \
    X(SHAPE, "shape", "a shape the target cannot handle") \
    X(SHAPE_UNKNOWN, "shape-unknown", "a shape that must be known is not") \
    X(TOO_LARGE, "too-large", "the rewrite would be too large") \
    X(TYPE, "type", "an element type the target lacks") \
    X(TYPE_ABSENT, "type-absent", "the type does not exist at the target at all") \
    X(TYPE_UNKNOWN, "type-unknown", "a type that must be known is not") \
    X(ADAPTER, "adapter", "an adapter failed without a reason") \
    X(REFUSED, "refused", "the converter refused without a reason") \
    /* the converter's model-level refusals */ \
    X(IR_VERSION, "ir-version", "the model needs another IR version") \
    X(CAFFE2_VARIANT, "caffe2-variant", "a Caffe2 variant the target cannot hold") \
    X(IF, "if", "an If whose branch could not be taken") \
    /* the other stages of a job */ \
    X(LOAD, "load", "the model cannot be read") \
    X(SAVE, "save", "the model cannot be written") \
    X(OPTIMIZE, "optimize", "an optimization pass failed") \
    X(PRECISION, "precision", "the precision change was refused") \
    X(COREML_UNSUPPORTED, "coreml-unsupported", "Core ML: no lowering for the op, attribute or type") \
    X(COREML_TARGET, "coreml-target", "Core ML: the MIL op is newer than the target") \
    X(COREML_CONSTANT, "coreml-constant", "Core ML: the MIL op takes only a constant there") \
    X(COREML_INVALID, "coreml-invalid", "Core ML: the exported program failed its check") \
    X(TOPO_ORDER, "topo-order", "the nodes cannot be put in order") \
    X(INPUT_SHAPE, "input-shape", "--input-shape does not fit the model") \
    X(DIFFERS, "differs", "verification: the results differ") \
    X(EVAL, "eval", "verification: a model could not run") \
    X(TIMEOUT, "timeout", "batch: the worker ran out of time") \
    X(CRASH, "crash", "batch: the worker died") \
    X(INVALID, "invalid", "the checker refused, naming no rule") \
    /* the checker refused the model: the JSON name is the checker's rule \
     * (DgDiag.rule), which check.c owns */ \
    X(RULE, "rule", "a checker rule (its name is the reason)")

typedef enum {
    DG_NONE = 0,
#define DG_ENUM(e, name, what) DG_##e,
    DG_REASONS(DG_ENUM)
#undef DG_ENUM
    DG_N_REASONS
} DgReason;

/* The JSON name of r ("" for DG_NONE or an out-of-range value). */
const char *dg_reason_name(DgReason r);
/* The reason whose JSON name is `name`, or DG_NONE. */
DgReason dg_reason_parse(const char *name);

/* Where in a run a diagnostic arose. The names are the JSON "stage". */
#define DG_STAGES(X) \
    X(LOAD, "load") X(CHECK, "check") X(CONVERT, "convert") \
    X(INPUT_SHAPE, "input-shape") X(PRECISION, "precision") X(OPTIMIZE, "optimize") \
    X(COREML, "coreml") X(VERIFY, "verify") X(SAVE, "save") X(RUN, "run")

typedef enum {
    DG_STAGE_NONE = 0,
#define DG_SENUM(e, name) DG_STAGE_##e,
    DG_STAGES(DG_SENUM)
#undef DG_SENUM
    DG_N_STAGES
} DgStage;

const char *dg_stage_name(DgStage s);
DgStage dg_stage_parse(const char *name);

/* One diagnostic. Strings are borrowed (the caller keeps them alive while
 * the diagnostic is used); NULL or "" means "not known". */
typedef struct DgDiag {
    DgStage stage;
    DgReason reason;
    const char *rule;        /* reason DG_RULE: the checker's rule name */
    const char *node;        /* the node's name */
    long long index;         /* its position in its graph, -1 unknown */
    const char *op;
    const char *domain;      /* "" or "ai.onnx": the default domain */
    int version;             /* the op's version (since_version), 0 unknown */
    int64_t step_from, step_to; /* the opset step; step_from 0: none */
    const char *msg;
} DgDiag;

/* A diagnostic with nothing known yet (index -1). */
DgDiag dg_none(void);
/* The JSON name of d's reason: its rule for DG_RULE. */
const char *dg_diag_reason(const DgDiag *d);

/* The node's label, the one form everywhere:
 *   node 'NAME' (DOMAIN:Op-V)      a named node
 *   node #I (DOMAIN:Op-V)          an unnamed node whose index is known
 *   node '' (DOMAIN:Op-V)          neither
 * "DOMAIN:" is left out for the default domain, "-V" when the version is
 * unknown. Written to buf (truncated to cap, always terminated); returns
 * buf. */
char *dg_label(const DgDiag *d, char *buf, size_t cap);

/* Fills d's node fields from n: its name, op and domain (n's own unless
 * `domain` is given), `version` (the op's since_version, 0 unknown) and,
 * for a node without a name, its position among its graph's live nodes
 * now (counted here: only refusals and failures ask). Borrows n's
 * strings. */
void dg_set_node(DgDiag *d, const IrNode *n, const char *domain, int version);

/* n's label (dg_label of dg_set_node(n, NULL, version)) in buf: what
 * inference's and the evaluator's messages name a node by. Returns buf. */
char *dg_node_label(const IrNode *n, int version, char *buf, size_t cap);

/* Where d arose: its label, then ": opset F -> T" when a step is known;
 * "" without a node. Returns the length it needed (as snprintf). */
int dg_where(const DgDiag *d, char *buf, size_t cap);

/* The one-line text of d (its where, then the message):
 *   LABEL: opset F -> T: MSG       when a node and a step are known
 *   LABEL: MSG                     a node without a step
 *   MSG                            no node
 * Returns the length it needed (as snprintf). */
int dg_format(const DgDiag *d, char *buf, size_t cap);

#endif
