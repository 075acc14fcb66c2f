/*
 * infer.h - type and shape inference (prefix inf_).
 *
 * inf_model walks every graph in node order and gives each value an
 * inferred type (IrValue.type): element type and shape, with symbolic
 * dimensions (dim_param) carried through and unknown dimensions allowed.
 * Small integer tensors built by shape arithmetic (Shape, Gather, Concat,
 * ...) also get their elements tracked as dims (IrValue.symval), so that a
 * Reshape fed by Shape->Gather->Concat still gets its output shape.
 *
 * How one node is inferred:
 *   1. generic, from the schema: each type variable is bound from the
 *      inputs, which must be allowed by its constraint and agree with each
 *      other; every output whose type is a bound variable (or a fixed type)
 *      gets that element type, shape unknown;
 *   2. the op's own function (src/analysis/infer/<family>.c) sets output shapes, and
 *      element types that depend on attributes (Cast's `to`, ...);
 *   3. outputs are checked against the schema's constraints, then merged
 *      with any value_info the model declares for them.
 * An op without a function still gets step 1. Inference never guesses: a
 * dimension it cannot prove stays unknown. It fails only on a definite
 * contradiction (shapes that cannot broadcast, an axis out of range, a type
 * the schema forbids), with a message naming the node, the op and the rule.
 *
 * Writing an op function (see src/analysis/infer/elementwise.c for examples):
 *   static int inf_relu(InfCtx *c) { return inf_same_as_input(c, 0); }
 * and list it in the table of the op's family F (the family column of
 * src/schema/opschema_flags.txt), inf_ops_F in src/analysis/infer/F.c:
 * `{"", "Relu", inf_relu}`. What several families share is in
 * src/analysis/infer/common.c, declared in src/analysis/infer/infer_ops.h.
 */
#ifndef OC_INFER_H
#define OC_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/known.h"
#include "ir/ir.h"
#include "schema/opschema.h"

typedef struct InfCtx InfCtx;
typedef int (*InfFn)(InfCtx *c);

/* One op's inference function, for every version of the op (the function
 * reads c->since to tell versions apart). */
typedef struct InfOp {
    const char *domain; /* "" = ai.onnx */
    const char *op;
    InfFn fn;
} InfOp;

/* Options of a run. */
typedef struct InfOptions {
    /* Fill unknown parts of an inferred type from the value_info the model
     * declares for an intermediate value (not for graph outputs: those are
     * what inference is compared against). */
    bool use_value_info;
    /* If set, called after a model-local function's body was inferred for
     * one call, once per value of the body (inputs and node outputs, nested
     * subgraphs too) with the type it had at that call (NULL = unknown).
     * The bodies' types are dropped after each call, as calls differ. */
    void (*body_type)(void *arg, const IrValue *v, const IrType *t);
    void *body_arg;
    /* How deterministic nodes on known inputs are run to prove their
     * outputs known (analysis/known.h): the evaluator's ev_prove_node,
     * handed over by callers that link it; NULL proves nothing that way. */
    KvRunFn run;
    /* Collect declared-vs-inferred disagreements instead of ignoring them. */
    void (*note)(void *arg, const char *msg);
    void *note_arg;
} InfOptions;

struct InfCtx {
    IrModel *model;
    IrNode *node;
    const OsSchema *schema;  /* the node's schema (never NULL in an op fn) */
    int since;               /* schema->since */
    int64_t opset;           /* the model's import of the node's domain */
    const InfOptions *opt;
    IrError *err;
    /* for a node inside a model-local function body: the call site, whose
     * attributes resolve ref_attr_name */
    const IrNode *call;
    const IrFunction *fn;
    int depth;               /* function-call nesting */
    char sbuf[1024];         /* inf_attr_s's copy of a string attribute */
    struct InfDecl *decl;    /* the graph's declared types (driver only) */
    int64_t force_opset;     /* > 0: the opset nodes of force_domain are
                                read at (inf_node_at), instead of the import */
    const char *force_domain;
    /* inf_model's indexes of the model's imports and functions (NULL:
     * look them up one by one), so that 100k nodes under 100k imports
     * are inferred in linear time */
    const struct KsSet *opsets;
    const struct KsSet *funcs;
};

/* Infers every value of every graph of m (main graph, subgraphs, and the
 * bodies of model-local functions at each call). Earlier results are
 * dropped first. Returns 0, or -1 with err naming node, op and rule. */
int inf_model(IrModel *m, const InfOptions *opt, IrError *err);

/* Builds the op lookup index now instead of at the first node inferred.
 * The build is not synchronized: a program that infers on several threads
 * calls it once first (the oc_ library does, under pthread_once). */
void inf_init(void);

/* Infers one node (and its subgraphs) as if `domain` ("" = ai.onnx) were
 * imported at `opset` (nodes of other domains use the model's imports),
 * from the types its inputs already have. For the version converter, which
 * builds nodes for the opset it is converting to while the model still
 * imports the old one. Returns 0, or -1 with err set. */
int inf_node_at(IrModel *m, IrNode *n, const char *domain, int64_t opset, IrError *err);

/* Records inferred types as value_info: every node output of g and its
 * subgraphs that is not a graph output and has no value_info yet gets
 * one; graph outputs declared without a shape get the inferred one.
 * Returns how many entries were added or filled. */
size_t inf_write_value_info(IrGraph *g);

/* ---- for op functions: inputs -------------------------------------- */

/* Number of inputs the node has (including left-out ones). */
size_t inf_n_in(const InfCtx *c);
size_t inf_n_out(const InfCtx *c);
/* Whether input i is present (not beyond the end, not ""). */
bool inf_has_in(const InfCtx *c, size_t i);
bool inf_has_out(const InfCtx *c, size_t i);
/* The inferred type of input i, or NULL (absent or unknown). */
const IrType *inf_in(const InfCtx *c, size_t i);
/* Element type of tensor input i, 0 when unknown. */
int32_t inf_in_elem(const InfCtx *c, size_t i);
/* Shape of tensor input i, NULL when the rank is unknown. */
const IrShape *inf_in_shape(const InfCtx *c, size_t i);
/* Rank of tensor input i, -1 when unknown. */
int inf_in_rank(const InfCtx *c, size_t i);
/* The constant tensor input i holds (an initializer or a Constant node's
 * value), or NULL. */
const IrTensor *inf_in_const(const InfCtx *c, size_t i);
/* Reads a constant integer input (int32/int64/uint8.. , rank <= 1) into a
 * new array (*v, caller frees; *n elements). Also succeeds when every
 * element of its symval is a known number. False when not known. */
bool inf_in_ints(const InfCtx *c, size_t i, int64_t **v, size_t *n);
/* Same for a constant floating input (float, double, float16). */
bool inf_in_floats(const InfCtx *c, size_t i, double **v, size_t *n);
/* The same readers on values and tensors, for the version converter:
 * the constant tensor of a value (an initializer, or a Constant node's
 * `value`), or NULL; its elements as integers or as doubles (caller frees
 * *v; false when not a small constant of that kind). inf_value_ints also
 * reads a value whose elements shape arithmetic proved (symval). */
const IrTensor *inf_value_const(const IrValue *v);
bool inf_value_ints(const IrValue *v, int64_t **out, size_t *n);
bool inf_value_floats(const IrValue *v, double **out, size_t *n);
bool inf_tensor_ints(const IrTensor *t, int64_t **v, size_t *n);
bool inf_tensor_floats(const IrTensor *t, double **v, size_t *n);
/* The symbolic elements of input i (see IrValue.symval), or NULL. */
const IrShape *inf_in_symval(const InfCtx *c, size_t i);

/* ---- attributes (schema defaults applied) -------------------------- */

/* The node's attribute (resolving ref_attr_name inside functions), or NULL. */
const IrAttr *inf_attr(const InfCtx *c, const char *name);
bool inf_attr_has(const InfCtx *c, const char *name);
/* The attribute's value, else the default the operator table gives it
 * at the node's version, else 0 (0.0f, NULL): an op function writes no
 * default of its own. */
int64_t inf_attr_i(const InfCtx *c, const char *name);
float inf_attr_f(const InfCtx *c, const char *name);
/* A string attribute as a C string (a copy in c->sbuf, valid until the
 * next call; strings longer than the buffer give NULL). */
const char *inf_attr_s(InfCtx *c, const char *name);
/* The same with dflt in place of 0 when the table has no default: only
 * where it has none (each use is listed in
 * tests/attr_defaults_exceptions.txt with its reason). */
int64_t inf_attr_i_or(const InfCtx *c, const char *name, int64_t dflt);
float inf_attr_f_or(const InfCtx *c, const char *name, float dflt);
const char *inf_attr_s_or(InfCtx *c, const char *name, const char *dflt);
/* An INTS attribute: returns the count and sets *v (borrowed), or -1 when
 * it is absent and the schema has no default. */
long inf_attr_ints(const InfCtx *c, const char *name, const int64_t **v);
long inf_attr_floats(const InfCtx *c, const char *name, const float **v);

/* ---- outputs ------------------------------------------------------- */

/* Makes output i a tensor of element type elem (0 keeps what the generic
 * step bound), with a fresh shape of `rank` unset dims that the caller
 * fills. NULL when the output is left out. */
IrShape *inf_out_shape(InfCtx *c, size_t i, size_t rank);
/* Sets the element type of output i (a tensor), keeping its shape. */
void inf_out_elem(InfCtx *c, size_t i, int32_t elem);
/* Replaces output i's type (takes ownership; NULL = unknown). */
void inf_out_type(InfCtx *c, size_t i, IrType *t);
/* The current type of output i (after the generic step), or NULL. */
const IrType *inf_out(const InfCtx *c, size_t i);
/* Sets output i's tracked elements (takes ownership). */
void inf_out_symval(InfCtx *c, size_t i, IrShape *sv);
/* Output `o` gets input `i`'s shape (element type: the generic one). */
int inf_out_shape_of(InfCtx *c, size_t o, size_t i);
/* Output 0 gets input 0's shape: unary elementwise ops. Returns 0. */
int inf_same_as_input(InfCtx *c, size_t i);

/* ---- dims and shapes ----------------------------------------------- */

/* A local IrDim must start zeroed (IrDim d = {0}): the setters free a
 * previous symbol. Free a local that may hold one with inf_dim_unknown. */

bool inf_dim_known(const IrDim *d);
void inf_dim_set(IrDim *d, int64_t value);
void inf_dim_unknown(IrDim *d);
/* Copies value or symbol (not denotation). */
void inf_dim_copy(IrDim *dst, const IrDim *src);
/* Whether two dims are surely equal (same value or same symbol). */
bool inf_dim_same(const IrDim *a, const IrDim *b);
/* Whether two dims are surely different (two different values). */
bool inf_dim_differ(const IrDim *a, const IrDim *b);
/* dst = a * b, or a + b: known when both are known (overflow: unknown);
 * x*1 keeps x's symbol. */
void inf_dim_mul(IrDim *dst, const IrDim *a, const IrDim *b);
void inf_dim_add(IrDim *dst, const IrDim *a, const IrDim *b);
/* Product of dims [from, to) of s into dst (unknown if any is). */
void inf_dims_product(IrDim *dst, const IrShape *s, size_t from, size_t to);
/* Multidirectional (numpy) broadcast of n shapes (none NULL) into out
 * (a new shape). -1 with a message when two known dims conflict. */
int inf_broadcast(InfCtx *c, const IrShape *const *shapes, size_t n,
                  IrShape **out);
/* Normalizes a possibly negative axis for a tensor of `rank`
 * (`extra` = 1 for ops whose axis may equal rank, e.g. Unsqueeze).
 * -1 with a message naming the attribute when out of range. */
int inf_axis(InfCtx *c, const char *what, int64_t axis, int rank, int extra,
             int *out);

/* ---- errors -------------------------------------------------------- */

/* Fills c->err with "RULE: node 'NAME' (OP-VER): ..." and returns -1. */
int inf_fail(InfCtx *c, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- subgraphs (control flow) -------------------------------------- */

/* Infers subgraph g, first giving its formal input k the type in_types[k]
 * where g declares none (n_in may be less than g's inputs). Returns 0 or
 * -1; the subgraph's outputs' types are then on g->outputs values. */
int inf_subgraph(InfCtx *c, IrGraph *g, size_t n_in,
                 const IrType *const *in_types);

/* Infers every subgraph of the node (without input types) except the
 * graph attribute named `skip` (NULL: none): for ops that infer some
 * subgraphs themselves, and for nodes no op function looks inside, so
 * that every inner value gets its types. */
int inf_other_subgraphs(InfCtx *c, const char *skip);

/* The op-function tables of each family (src/analysis/infer/F.c defines
 * inf_ops_F; F is the op's family in the operator table, the same file
 * name as its adapters and kernel), NULL-op ended. */
extern const InfOp inf_ops_activation[];
extern const InfOp inf_ops_attention[];
extern const InfOp inf_ops_control[];
extern const InfOp inf_ops_einsum[];
extern const InfOp inf_ops_elementwise[];
extern const InfOp inf_ops_index[];
extern const InfOp inf_ops_misc[];
extern const InfOp inf_ops_ml[];
extern const InfOp inf_ops_nn[];
extern const InfOp inf_ops_norm[];
extern const InfOp inf_ops_quant[];
extern const InfOp inf_ops_random[];
extern const InfOp inf_ops_reduce[];
extern const InfOp inf_ops_resize[];
extern const InfOp inf_ops_rnn[];
extern const InfOp inf_ops_sample[];
extern const InfOp inf_ops_sequence[];
extern const InfOp inf_ops_shape[];
extern const InfOp inf_ops_signal[];
extern const InfOp inf_ops_string[];
extern const InfOp inf_ops_tensor[];
extern const InfOp inf_ops_training[];

/* Every family's table by family name, so that a test can tell which
 * family an op is registered in; the driver's lookup index is built
 * from this list. */
typedef struct InfFamily {
    const char *name;
    const InfOp *ops;
} InfFamily;
extern const InfFamily inf_families[];
extern const size_t inf_families_n;

#endif
