/*
 * fuse_util.h - pattern-matching helpers the fusion passes share
 * (fuse_layernorm, fuse_gelu, fuse_rmsnorm; prefix opt_fz_).
 *
 * A fusion finds a chain of ai.onnx nodes of the scope being optimized,
 * checks that every intermediate is read only inside the chain, reads its
 * constants (initializers or Constant nodes), and replaces the chain by one
 * node that takes over the chain's last value (name, readers, graph-output
 * listing).
 */
#ifndef OC_FUSE_UTIL_H
#define OC_FUSE_UTIL_H

#include "passes/passes.h"
#include "ir/tensor_kit.h"

/* k is the ai.onnx op `op`. */
bool opt_fz_op(const IrNode *k, const char *op);
/* The node of g that produces v when it is the ai.onnx op `op`, else NULL. */
IrNode *opt_fz_def(const IrGraph *g, const IrValue *v, const char *op);
/* Every reader of v is one of nodes[0..n) (at least one read), and v is
 * not an output of its graph: the chain may swallow v. */
bool opt_fz_private(const IrValue *v, IrNode *const *nodes, size_t n);
/* The single node reading v (once) when v is not a graph output, else NULL. */
IrNode *opt_fz_reader(const IrValue *v);

/* The tensor of a constant value (an initializer that is not a graph
 * input, or a Constant node's output), decoded; NULL when not constant.
 * The caller tk_frees it. */
TkTensor *opt_fz_const(const IrValue *v);
/* v is a constant of one element and rank <= max_rank (so that it
 * broadcasts without growing a rank-max_rank operand); its value in *out. */
bool opt_fz_scalar(const IrValue *v, size_t max_rank, double *out);
/* opt_fz_scalar and the value equals want up to the rounding of the
 * constant's element type (relative 1e-6 for float and double). */
bool opt_fz_near(const IrValue *v, size_t max_rank, double want);

/* The element type of v when inference knows it is a float, double,
 * float16 or bfloat16 tensor of known rank (in *rank), else 0. */
int32_t opt_fz_real(const IrValue *v, size_t *rank);
/* The static dims of the last k axes of v (known, positive) into dims;
 * false when any is unknown. */
bool opt_fz_tail_dims(const IrValue *v, size_t k, int64_t *dims);
/* ReduceMean node rm with keepdims=1 reducing exactly the last k axes of a
 * rank-`rank` input (axes as attribute below opset 18, as a constant input
 * from 18; absent = all): returns k, else 0. */
size_t opt_fz_tail_axes(const OptCtx *c, const IrNode *rm, size_t rank);

/* Whether constant p (NULL = none) can scale the last k axes of x
 * elementwise without changing x's shape: x's element type, rank <= x's,
 * each dim 1 or equal to x's on the last k axes and 1 before them. */
bool opt_fz_param_ok(const IrValue *p, const IrValue *x, size_t k);
/* A constant of shape x's last k dims for p (p itself when it has that
 * shape already; its values broadcast, or `fill` everywhere when p is
 * NULL), made before node `before`. NULL with c->err set on failure. */
IrValue *opt_fz_param(OptCtx *c, IrNode *before, IrValue *p, const IrValue *x, size_t k,
                      double fill);

/* A new node `op` with inputs in[0..n_in) (NULL = left out), placed before
 * `last`, that takes over last's output 0. NULL with c->err set. */
IrNode *opt_fz_replace(OptCtx *c, IrNode *last, const char *op, size_t n_in,
                       IrValue *const *in);
/* Deletes nodes[0..n) (NULL entries skipped), last first. */
void opt_fz_delete(IrNode *const *nodes, size_t n);

/* A fusion tried at node k: 1 when it rewrote, 0 when k does not end the
 * pattern, -1 with c->err set on failure. */
typedef int (*OptFzFuse)(OptCtx *c, IrNode *k);
/* Runs `fuse` at every node of c->g when the scope's ai.onnx opset is at
 * least min_opset; the number of rewrites, or -1. */
long opt_fz_run(OptCtx *c, int64_t min_opset, OptFzFuse fuse);

/* A constant holding t (not taken), named after base, placed before
 * `before`: an initializer in the main graph, a Constant node elsewhere.
 * NULL with c->err set on failure. */
IrValue *opt_fz_emit(OptCtx *c, IrNode *before, const TkTensor *t, const char *base);
/* Integer attribute of k (an ai.onnx node read at `opset`): its value, or
 * the operator table's default when absent. *ok is cleared when the
 * attribute is a reference (function bodies), not an int, or absent
 * without a default. */
int64_t opt_fz_attr_i(const IrNode *k, const char *name, int64_t opset, bool *ok);
/* The same with the caller's dflt when absent: for an attribute the table
 * gives no default at some version (listed in
 * tests/attr_defaults_exceptions.txt). */
int64_t opt_fz_attr_i_or(const IrNode *k, const char *name, int64_t dflt, bool *ok);
/* Float attribute, as opt_fz_attr_i. */
double opt_fz_attr_f(const IrNode *k, const char *name, int64_t opset, bool *ok);
/* The node of g that is v's only reader (*index = its input slot), when
 * v is read once, by a node of g, and is not a graph output; else NULL. */
IrNode *opt_fz_sole_reader(const IrGraph *g, const IrValue *v, size_t *index);
/* float or double: the types the weight fusions compute exactly enough.
 * Not float16: rounding the folded weights to half precision moves
 * results by more than the verifier's tolerance (rtol 1e-3, atol 1e-5)
 * where the channel's terms cancel, while the original rounds only its
 * output. */
bool opt_fz_float(int32_t dtype);
/* Whether every dims entry of t past `from` is 1. */
bool opt_fz_ones_from(const TkTensor *t, size_t from);


/* ---- the chain fusions (transpose, reshape, cast, concat, slice, gemm) ---- */

#define OPT_FZ_MAX_RANK 16

/* The node of graph g that produces v as one of its outputs, or NULL. */
IrNode *opt_fz_producer(const IrValue *v, const IrGraph *g);
/* The producer of v when it is op `op` (in g) and v is read by nothing but
 * node `reader` (once) and is not a graph output: an intermediate a fusion
 * may swallow. */
IrNode *opt_fz_sole(const IrValue *v, const IrNode *reader, const char *op);
/* The tensor type of v when inference knows its element type, else NULL. */
const IrType *opt_fz_type(const IrValue *v);
/* The element type of v, or 0 when unknown. */
int32_t opt_fz_elem(const IrValue *v);
/* The rank of v, or -1 when unknown. */
long opt_fz_rank(const IrValue *v);
/* Static extent of dim i of v, or -1 when unknown. */
int64_t opt_fz_dim(const IrValue *v, size_t i);
/* The elements of constant integer tensor v (rank <= 1) into out (cap
 * entries). Returns the count, or -1 when v is not such a constant. */
long opt_fz_const_ints(const IrValue *v, int64_t *out, size_t cap);
/* A new 1-D int64 constant holding v[0..n), placed as the scope allows
 * (passes/util.c), before node `before`. NULL when it cannot be made. */
IrValue *opt_fz_new_ints(OptCtx *c, IrNode *before, const char *base, size_t n, const int64_t *v);
/* An INTS attribute of k into out (cap entries): the count, -1 when
 * absent, -2 when unusable (a reference, or too long). */
long opt_fz_attr_ints(const IrNode *k, const char *name, int64_t *out, size_t cap);
/* Sets k's inputs to vals[0..n) (n >= k->n_in), keeping use lists right. */
void opt_fz_set_inputs(IrNode *k, size_t n, IrValue *const *vals);
/* Runs `one` on every `op` node of c's graph, again while it changes the
 * node (each change removes a node, so this ends); the change count. */
long opt_fz_each(OptCtx *c, const char *op, bool (*one)(OptCtx *, IrNode *));
/* Whether any attribute of k is not in the NULL-ended list `known`. */
bool opt_fz_other_attrs(const IrNode *k, const char *const *known);

#endif
