/*
 * adapters.h - version adapters (prefix ad_).
 *
 * An adapter converts one node across one version change of its op, in one
 * direction. Adapters are registered in one table (adapters/table.c) keyed
 * by (domain, op, from, to), where `from` and `to` are versions of the op
 * (since_version values) that are neighbours in the operator table, or
 * to == 0 when the op does not exist at the opset being converted to (it
 * was introduced later, or that opset deprecates it): such an adapter
 * rewrites the node into other ops (an expansion or a rename).
 *
 * The driver (src/convert/convert.c) walks the opsets one step at a time. At step
 * s -> s' it collects every node whose schema at s differs from the one at
 * s' and calls its adapter with an AdCtx. Before the call, inference has
 * given every value of the model a type where it could (IrValue.type).
 *
 * An adapter may:
 *   - edit c->n in place: attributes, inputs (ad_set_input, ad_drop_attr...);
 *   - insert new nodes before c->n (ad_node with before = c->n) or after it
 *     (before = c->n->next), built for opset c->build_opset;
 *   - replace c->n: build the replacement, move each output of c->n to the
 *     node that now computes it (ir_node_take_output), delete c->n
 *     (ir_node_delete). Consumers and graph outputs keep their value.
 * It must not touch any other existing node. It returns 0, or -1 after
 * ad_refuse (which says why the node cannot be converted).
 *
 * After the adapter the driver checks every node in the touched range
 * against its schema at s': the op exists, arity, attribute names and
 * types, and the inferred input/output types are allowed. So a type
 * restriction needs no code: a compatible entry whose node uses a type the
 * target lacks is refused by that check, naming the type.
 *
 * Expansions written for a newer opset than s' (function bodies of the
 * spec are written for some opset B) set c->build_opset = B before building;
 * the driver then lowers the new nodes from B down to s' with the same
 * adapters, recursively, until every node exists at s'.
 */
#ifndef OC_ADAPTERS_H
#define OC_ADAPTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/known.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/tensor_kit.h"
#include "schema/opschema.h"

typedef struct AdCtx {
    IrModel *m;
    IrFunction *fn;          /* the function whose body holds n, or NULL */
    IrGraph *g;              /* n's graph */
    IrNode *n;               /* the node being converted */
    const char *domain;      /* "" (ai.onnx) or "ai.onnx.ml" */
    int64_t from_opset;      /* the step: from_opset -> to_opset (adjacent) */
    int64_t to_opset;
    const OsSchema *from;    /* n's schema at from_opset */
    const OsSchema *to;      /* n's schema at to_opset; NULL when the op does
                                not exist there (or is deprecated there) */
    int64_t build_opset;     /* the opset new nodes are built for; starts at
                                to_opset */
    int64_t goal_opset;      /* the opset the whole conversion goes to: an
                                adapter may pick a form that later steps
                                can carry there (0 = unknown) */
    IrError *err;
    DgReason refusal;        /* set by ad_refuse (DG_NONE until then): why
                                the node cannot be converted */
    int n_new;               /* nodes ad_node built (counter for names) */
    /* Where ad_warn's lines go (the conversion's report), or NULL. */
    void (*warn)(void *arg, const char *line);
    void *warn_arg;
    /* Computes a node from its inputs' known values (the evaluator's
     * prover, handed over by the driver: adapters do not link the
     * evaluator), or NULL: nothing is computed, and an adapter that
     * would fold a node behaves as when its inputs are unknown. */
    KvRunFn run;
} AdCtx;

typedef int (*AdFn)(AdCtx *c);

/* What an entry does (for reports and the table test). */
typedef enum {
    AD_COMPATIBLE = 0,  /* only the version changes: the signatures differ at
                           most in their type lists (the table test checks) */
    AD_ATTR_INPUT,      /* an attribute becomes an input or back */
    AD_SEMANTIC,        /* the meaning changed; the node is rewritten */
    AD_RENAME,          /* the op is replaced by another op */
    AD_EXPAND,          /* the op is expressed with older ops */
    AD_ATTRS            /* attributes added/removed; defaults keep meaning */
} AdKind;

typedef struct AdEntry {
    const char *domain;      /* "" or "ai.onnx.ml" */
    const char *op;
    int from, to;            /* op versions; to == 0: absent at the target */
    AdKind kind;
    AdFn fn;                 /* NULL for AD_COMPATIBLE */
} AdEntry;

/* A version change that has no correct conversion, with the reason. */
typedef struct AdImpossible {
    const char *domain, *op;
    int from, to;
    const char *reason;
} AdImpossible;

/* A family's adapters: adapters/<family>.c defines one of these. */
typedef struct AdFamily {
    const char *name;
    const AdEntry *e;
    size_t n;
} AdFamily;

/* Entry shorthands for family tables. AD_BOTH lists a compatible change in
 * both directions; AD_UP / AD_DOWN give one direction of a change between
 * versions a < b (AD_DOWN is the entry b -> a); AD_GONE is the entry for an
 * op of version a at an opset where it does not exist (to == 0). */
#define AD_BOTH(op, a, b) \
    {"", op, a, b, AD_COMPATIBLE, NULL}, {"", op, b, a, AD_COMPATIBLE, NULL}
#define AD_UP(op, a, b, kind, fn) {"", op, a, b, kind, fn}
#define AD_DOWN(op, a, b, kind, fn) {"", op, b, a, kind, fn}
#define AD_GONE(op, a, kind, fn) {"", op, a, 0, kind, fn}
#define AD_ML_UP(op, a, b, kind, fn) {"ai.onnx.ml", op, a, b, kind, fn}
#define AD_ML_DOWN(op, a, b, kind, fn) {"ai.onnx.ml", op, b, a, kind, fn}
#define AD_ML_GONE(op, a, kind, fn) {"ai.onnx.ml", op, a, 0, kind, fn}
#define AD_ML_BOTH(op, a, b) \
    {"ai.onnx.ml", op, a, b, AD_COMPATIBLE, NULL}, \
    {"ai.onnx.ml", op, b, a, AD_COMPATIBLE, NULL}

/* ---- the table (adapters/table.c) ------------------------------------ */

/* Builds the lookup index now instead of at the first lookup. The build
 * is not synchronized: a program that converts on several threads calls it
 * once first (the oc_ library does, under pthread_once). */
void ad_init(void);
/* The adapter for (domain, op, from, to), or NULL. */
const AdEntry *ad_find(const char *domain, const char *op, int from, int to);
/* The "impossible" entry for it, or NULL. */
const AdImpossible *ad_impossible(const char *domain, const char *op,
                                  int from, int to);
/* Every family, for tests and reports. */
extern const AdFamily *const ad_families[];
extern const size_t ad_families_n;
extern const AdImpossible ad_impossible_list[];
extern const size_t ad_impossible_n;
const char *ad_kind_name(AdKind k);

/* ---- refusing ------------------------------------------------------- */

/* Fills c->err with the diagnostic's one line (src/ir/diag.h: "node 'N'
 * (Op-v): opset s -> s': <message>"), sets c->refusal = r; returns -1. */
int ad_refuse(AdCtx *c, DgReason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds a warning to the conversion's report, one line formatted as a
 * refusal's ("node 'N' (Op-v): opset s -> s': <message>"): for a
 * conversion that is exact and valid but that users should know about
 * (a type no common runtime of the target has a kernel for). */
void ad_warn(AdCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Why c refused (DG_NONE when it did not): what the driver reports. */
DgReason ad_refusal(const AdCtx *c);

/* ---- reading the node ----------------------------------------------- */

/* The attribute, or NULL. */
IrAttr *ad_attr(const AdCtx *c, const char *name);
/* INT / FLOAT / STRING attribute value of c->n; when absent, the
 * operator table's default for c->n's op at its version (c->from), and
 * when the table has none, 0 / 0.0f / NULL. */
int64_t ad_attr_i(const AdCtx *c, const char *name);
float ad_attr_f(const AdCtx *c, const char *name);
/* The STRING attribute as a NUL-terminated copy in buf, else the table's
 * default (a static string), else NULL. */
const char *ad_attr_s(const AdCtx *c, const char *name, char *buf, size_t cap);
/* The same with an explicit fallback, only where the table has no default
 * for the attribute at that version (tests/attr_defaults_exceptions.txt
 * lists each use and why). */
int64_t ad_attr_i_or(const AdCtx *c, const char *name, int64_t dflt);
float ad_attr_f_or(const AdCtx *c, const char *name, float dflt);
const char *ad_attr_s_or(const AdCtx *c, const char *name, const char *dflt,
                         char *buf, size_t cap);
/* Input i of n, or NULL (left out or beyond the end). */
IrValue *ad_in(const AdCtx *c, size_t i);
/* The inferred type of a value, or NULL. */
const IrType *ad_type(const IrValue *v);
/* Tensor element type of v, 0 when unknown. */
int32_t ad_elem(const IrValue *v);
/* Rank of v, -1 when unknown. */
int ad_rank(const IrValue *v);
/* Dimension i (0 <= i < rank) of v when it is a known number, else -1. */
int64_t ad_dim(const IrValue *v, int i);
/* Makes the axes ax[0..n) non-negative against rank (each must lie in
 * [-rank, rank-1]); refuses ("shape-unknown") a negative one when the rank
 * is unknown (-1) and ("attribute") one out of range, naming it `what`.
 * *changed says whether any entry moved. */
int ad_norm_axes(AdCtx *c, int64_t *ax, size_t n, int rank, const char *what,
                 bool *changed);
/* The known value of v (src/analysis/known.h: an initializer that is not a graph
 * input, a Constant, or a value inference proved ahead of time, such as a
 * chain computed from the Shape of a static input). NULL otherwise. */
const IrTensor *ad_const(const IrValue *v);
/* Reads a constant integer value (rank <= 1) into *v (caller frees), *n
 * elements. False when v is not a known constant. */
bool ad_const_ints(const IrValue *val, int64_t **v, size_t *n);
/* Same for floating constants (float, double, float16, bfloat16). */
bool ad_const_floats(const IrValue *val, double **v, size_t *n);

/* ---- building ------------------------------------------------------- */

/* A new node of `op` (domain of c) inserted before `before` (NULL = end of
 * c->g), named after c->n, with inputs `in` (NULL entries = left out) and
 * n_out fresh output values. Its outputs are typed by inference at
 * c->build_opset. Returns the node, or NULL with c->err set (the adapter
 * then returns -1). */
IrNode *ad_node(AdCtx *c, IrNode *before, const char *op, size_t n_in,
                IrValue *const *in, size_t n_out);
/* A name free as a value name in g's scope tree and as a node name in g
 * (runtimes refuse two nodes of one name). Caller frees. */
char *ad_fresh_name(const IrGraph *g, const char *base);
/* Same, in another domain. */
IrNode *ad_node_in(AdCtx *c, const char *domain, IrNode *before,
                   const char *op, size_t n_in, IrValue *const *in,
                   size_t n_out);
/* Re-runs inference on node k at c->build_opset (after its attributes were
 * set). Returns 0 or -1 with c->err set. */
int ad_infer(AdCtx *c, IrNode *k);
/* A constant value: an initializer in a main graph, a Constant node (before
 * c->n) in a subgraph or function body. Returns the value, or NULL with
 * c->err set (e.g. a Constant of that type does not exist at the opset). */
IrValue *ad_const_tensor(AdCtx *c, int32_t dtype, size_t ndims,
                         const int64_t *dims, const void *data, size_t bytes);
/* Whether constants become initializers (the main graph) rather than
 * Constant nodes (subgraphs, function bodies). */
bool ad_const_is_init(const AdCtx *c);
/* An integer constant of type dtype (int8..uint64), dims[0..ndims), values
 * v[0..n). A Constant node that will live below opset 9 (Constant-1 is
 * floating only) is a float Constant cast to dtype when a float holds
 * every value exactly, else refused. */
IrValue *ad_const_int_tensor(AdCtx *c, int32_t dtype, size_t ndims, const int64_t *dims,
                             const int64_t *v, size_t n);
IrValue *ad_const_int(AdCtx *c, int32_t dtype, int64_t v);
/* A constant of numeric type t and dims d[0..r) (all known) filled with 0
 * or 1 (unit). */
IrValue *ad_const_fill(AdCtx *c, int32_t t, size_t r, const int64_t *d, int unit);
/* A 1-D INT64 constant of n elements. */
IrValue *ad_const_i64s(AdCtx *c, size_t n, const int64_t *v);
/* A 0-D (scalar) constant of the given element type holding x. */
IrValue *ad_const_scalar(AdCtx *c, int32_t dtype, double x);

/* Subgraphs (If branches, Loop bodies): make one with ad_sub_new (a graph
 * nested in c->g; runtimes require a graph name) and attach it with
 * ir_node_set_attr(node, ir_attr_graph(name, sub)).
 * ad_sub_node appends a node of `op` to sub (inputs may be values of sub or
 * of an enclosing graph), typed at c->build_opset when `infer` (set its
 * attributes first, or pass false and call ad_sub_infer after). Constants
 * a subgraph needs are best made in c->g before the node (ad_const_*) and
 * read from there. */
IrGraph *ad_sub_new(AdCtx *c, const char *name);
IrNode *ad_sub_node(AdCtx *c, IrGraph *sub, const char *op, size_t n_in,
                    IrValue *const *in, size_t n_out, bool infer);
int ad_sub_infer(AdCtx *c, IrNode *k);
/* A scalar input of sub (a Loop body's iteration number or condition). */
IrValue *ad_sub_input(IrGraph *sub, const char *base, int32_t dtype);
/* Makes v an output of sub, typed with dtype and no shape. */
void ad_sub_output(IrGraph *sub, IrValue *v, int32_t dtype);

/* The output of op(a) / op(a, b) / op(a, b, d), a new node before c->n
 * typed at c->build_opset; NULL when building failed or an input is NULL
 * (a builder before it failed) or an earlier refusal is pending
 * (c->refusal), so that expressions can be chained and checked once. */
IrValue *ad_op1(AdCtx *c, const char *op, IrValue *a);
IrValue *ad_op2(AdCtx *c, const char *op, IrValue *a, IrValue *b);
IrValue *ad_op3(AdCtx *c, const char *op, IrValue *a, IrValue *b, IrValue *d);
/* Reduce op (ReduceSum, ReduceMax, ...) of x over axes[0..n) (n = 0: all),
 * in c->build_opset's form (axes an attribute or an input). */
IrValue *ad_reduce(AdCtx *c, const char *op, IrValue *x, size_t n, const int64_t *axes,
                   bool keepdims);
/* For axes known only at run time (a 1-D int64 value of n entries) and a
 * rank r: the int64 [n, r] matrix whose entry (k, j) is 1 when axes[k]
 * names axis j (as j or j - r), else 0. */
IrValue *ad_axes_hits(AdCtx *c, IrValue *axes, int r);
/* The exclusive prefix sums of the int64 vector v of n entries (entry j
 * is the sum of the entries before j), through a triangular constant. */
IrValue *ad_prefix_sums(AdCtx *c, IrValue *v, int n);
/* x cast to element type `to` (x itself when it has that type already),
 * in c->build_opset's form (`to` a type name before opset 6). */
IrValue *ad_cast(AdCtx *c, IrValue *x, int32_t to);
/* Squeeze or Unsqueeze (op) of x at `axes`, in c->build_opset's form (an
 * attribute before 13, an input from 13), inserted before `before`.
 * Returns its output, or NULL (also when x is NULL, a failed builder). */
IrValue *ad_axes_op(AdCtx *c, IrNode *before, const char *op, IrValue *x,
                    size_t n, const int64_t *axes);
/* Sets/replaces input i of c->n, growing the input list when needed. */
void ad_set_input(AdCtx *c, size_t i, IrValue *v);
/* Removes v when nothing uses it any more and it is a constant: an
 * initializer that is not a graph input, or a Constant node's output (after
 * an input became an attribute, the constant that fed it is dead). */
void ad_drop_if_dead(AdCtx *c, IrValue *v);
/* Drops trailing left-out inputs of k. */
void ad_trim_inputs(IrNode *k);
/* Whether output i of c->n is named. */
bool ad_named_out(const AdCtx *c, size_t i);
/* Drops the trailing left-out outputs of c->n while it has more than keep. */
void ad_trim_outputs(AdCtx *c, size_t keep);
/* Removes attribute `name` from c->n (no-op when absent). */
void ad_drop_attr(AdCtx *c, const char *name);
void ad_set_attr_i(AdCtx *c, IrNode *k, const char *name, int64_t v);
void ad_set_attr_f(AdCtx *c, IrNode *k, const char *name, float v);
void ad_set_attr_ints(AdCtx *c, IrNode *k, const char *name, size_t n,
                      const int64_t *v);
void ad_set_attr_s(AdCtx *c, IrNode *k, const char *name, const char *s);

/* Computes c->n in a wider element type w and replaces it: each input i
 * with bit i of in_mask set is cast to w, a node of c->n's op takes the
 * inputs and c->n's attributes (built at c->build_opset), and each output
 * j with bit j of out_mask set is cast back to t (the others move as they
 * are). The caller argues exactness: w holds every value of t, and the
 * op in w cast back to t is the op in t (the Cast back keeps the low bits
 * of an integer, as Cast does between integer types). Returns 0 or -1. */
int ad_widen(AdCtx *c, int32_t t, int32_t w, uint32_t in_mask, uint32_t out_mask);
/* Its first half: the node of c->n's op on the cast inputs, holding c->n's
 * attributes (c->n keeps its outputs; the caller moves them and deletes
 * c->n). NULL with c->err set on failure. */
IrNode *ad_widen_node(AdCtx *c, int32_t w, uint32_t in_mask);

/* Replaces c->n by `by`: each output i of c->n moves to output i of `by`,
 * then c->n is deleted. */
void ad_replace(AdCtx *c, IrNode *by);
/* Moves output i of c->n to output j of k. */
void ad_move_output(AdCtx *c, size_t i, IrNode *k, size_t j);

/* ---- generic adapters (usable as AdEntry.fn) ------------------------- */

/* Nothing to do in this direction (e.g. the upgrade of a change that added
 * an attribute whose default keeps the old meaning). */
int ad_nothing(AdCtx *c);
/* Drops `consumed_inputs`, opset 1's hint for in-place execution that
 * never changes the result (version 6 removed it). */
int ad_drop_consumed(AdCtx *c);

/* Attribute `name` moves to input `index` (upgrade, e.g. Squeeze 11->13
 * axes): builds an INT64 constant from the attribute. */
int ad_attr_to_input(AdCtx *c, const char *name, size_t index);
/* Sets input i of c->n to v, built from attribute `name` (or standing
 * for it), and drops the attribute; -1 when v was not built. */
int ad_attr_as_input(AdCtx *c, const char *name, size_t i, IrValue *v);
/* Input `index` moves to attribute `name` (downgrade): refuses with
 * "not-constant" when the input is not a constant. A left-out input
 * leaves the attribute absent. */
int ad_input_to_attr(AdCtx *c, size_t index, const char *name);
/* Drops INT attribute `name` (which the target lacks) when it is absent or
 * holds `neutral`, the value that behaves as the target does; refuses
 * naming the attribute otherwise. */
int ad_drop_attr_if(AdCtx *c, const char *name, int64_t neutral);
/* Makes explicit the attributes whose default differs between c->from and
 * c->to (e.g. Softmax axis 1 -> -1), so the node keeps its meaning. */
void ad_pin_defaults(AdCtx *c);

/* ---- the builder kit (common.c) --------------------------------------
 * What the rewrites of several families share. The builders return the
 * output of a new node inserted before c->n and typed by inference at
 * c->build_opset, in the form ops take there (attributes or inputs), or
 * NULL once anything failed: a NULL input (a failed builder before) or a
 * pending refusal gives NULL again, so a rewrite is a straight sequence
 * checked once at the end (ad_replace_by, ad_end). */

/* The largest constant an adapter writes into the model (folded outputs,
 * masks, index tables), in bytes. */
#define AD_MAX_CONST ((uint64_t)1 << 22)
/* The most dims of a static shape the index and tensor rewrites handle;
 * AD_MAX_RANK, those of the elementwise and reduce rewrites. */
#define AD_MAX_STATIC_RANK 32
#define AD_MAX_RANK 16
/* The most elements of the tables and fills the elementwise select and
 * the reduce scans build as constants. */
#define AD_SELECT_CAP (INT64_C(1) << 20)

/* Whether `op` at c->build_opset takes element type t for its first
 * input; ad_need_type refuses ("type") when it does not, else 0. */
bool ad_has_type(const AdCtx *c, const char *op, int32_t t);
int ad_need_type(AdCtx *c, const char *op, int32_t t);
/* Renames c->n to op (the same inputs, outputs and attributes). */
void ad_rename(AdCtx *c, const char *op);

/* Every dim of v into dims and its rank; -1 when the rank is unknown or
 * above cap, or any dim is not a known number. */
int ad_static(const IrValue *v, int64_t *dims, size_t cap);
/* Product of dims[from, to), or -1 when it passes cap on the way. */
int64_t ad_prod(const int64_t *dims, size_t from, size_t to, int64_t cap);
/* The known dimension d of v (negative d counts from the back), or -1. */
int64_t ad_dim_at(const IrValue *v, int d);
/* Normalizes axis `a` for rank r (+extra for ops whose axis indexes the
 * output); false when out of range, or r is unknown and a < 0. */
bool ad_axis(int64_t a, int r, int extra, int64_t *out);
/* The known value of v decoded (caller tk_frees), or NULL. */
TkTensor *ad_const_tk(const IrValue *v);
/* Whether v is known to hold no negative number: an unsigned type, or a
 * constant (including one shape arithmetic proved) without one. */
bool ad_nonneg(const IrValue *v);

/* A node of op before c->n with inputs in[0..n_in) and n_out outputs, not
 * yet inferred (set its attributes, then ad_fin); NULL after a failure. */
IrNode *ad_raw(AdCtx *c, const char *op, size_t n_in, IrValue *const *in, size_t n_out);
/* Infers k and gives its output 0, or NULL. */
IrValue *ad_fin(AdCtx *c, IrNode *k);
/* A node of op before c->n in c->n's domain, with inputs in[0..n_in) and
 * n_out outputs (fresh where keep[i], left out elsewhere), that takes
 * over c->n's attributes. Not yet inferred. */
IrNode *ad_clone(AdCtx *c, const char *op, size_t n_in, IrValue *const *in, size_t n_out,
                 const bool *keep);
IrValue *ad_gather(AdCtx *c, IrValue *x, IrValue *idx, int64_t axis);
/* Concat of in[0..n) along axis. */
IrValue *ad_concat(AdCtx *c, IrValue *const *in, size_t n, int64_t axis);
IrValue *ad_transpose(AdCtx *c, IrValue *x, size_t n, const int64_t *perm);
/* Reshape of x to a constant shape of n entries. */
IrValue *ad_reshape(AdCtx *c, IrValue *x, size_t n, const int64_t *shape);
/* Zero-padding of x by pads (n = 2 * rank entries, begins then ends). */
IrValue *ad_pad(AdCtx *c, IrValue *x, size_t n, const int64_t *pads);
/* Clip of x (element type t) to [lo, hi]. */
IrValue *ad_clip(AdCtx *c, IrValue *x, int32_t t, double lo, double hi);
/* Slice of x along n axes (as Slice takes them; steps NULL: all 1, the
 * only steps before opset 10). */
IrValue *ad_slice(AdCtx *c, IrValue *x, size_t n, const int64_t *starts, const int64_t *ends,
                  const int64_t *axes, const int64_t *steps);
/* x[..., start:end:step, ...] along one axis (opset 10 and later). */
IrValue *ad_slice_at(AdCtx *c, IrValue *x, int64_t start, int64_t end, int64_t axis,
                     int64_t step);
/* idx + dim * (idx < 0): indices counted from the end made non-negative.
 * idx is int32 or int64; dim has idx's type and broadcasts against it. An
 * index below -dim stays negative, so the older op still rejects it. */
IrValue *ad_wrap(AdCtx *c, IrValue *idx, IrValue *dim);

/* A constant int64 tensor of the given dims holding v (refused past
 * AD_MAX_CONST bytes). */
IrValue *ad_const_table(AdCtx *c, int rank, const int64_t *dims, const int64_t *v);
/* A 1-D constant of FLOAT (v rounded) or DOUBLE holding v[0..n). */
IrValue *ad_const_reals(AdCtx *c, int32_t dtype, size_t n, const double *v);
/* The tensor v as a constant value (refused past AD_MAX_CONST bytes and
 * for strings: a constant of strings needs string_data, which
 * ad_const_tensor does not write). */
IrValue *ad_const_of(AdCtx *c, const TkTensor *v);

/* Sets input i of c->n to v; the constant it replaces goes when dead. */
void ad_swap_input(AdCtx *c, size_t i, IrValue *v);
/* Replaces c->n by the node computing y (its first output); constants
 * that only fed c->n go with it. -1 (refused) when y was not built. */
int ad_replace_by(AdCtx *c, IrValue *y);
/* Replaces c->n (one output) by an Identity of v. */
int ad_replace_value(AdCtx *c, IrValue *v);
/* Ends an expansion of c->n: output i moves to the node computing vals[i]
 * (n <= 8; an input of c->n passed through gets an Identity; new nodes
 * that read vals[i] read the moved value), c->n is deleted and the moved
 * values are typed again. 0, or -1 when something was not built. */
int ad_end(AdCtx *c, size_t n, IrValue *const *vals);
/* Replaces c->n (one output) by a constant: its output computed by
 * c->run on its inputs, when every present input is known. The constant
 * is refused past max_bytes. 1 when replaced, 0 when some input is not
 * known or there is no c->run (nothing done), -1 when refused. */
int ad_fold(AdCtx *c, uint64_t max_bytes);

#endif
