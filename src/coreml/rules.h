/*
 * coreml/rules.h - what the family files of the Core ML export and import
 * share with the drivers (coreml/export.c, coreml/import.c): the lowering
 * context (ONNX node -> MIL ops, its kit in coreml/lower.c) and the
 * raising context (MIL op -> ONNX nodes, its kit in coreml/import.c), and
 * the rule tables each family exports (found through coreml/rules.c).
 *
 * A lowering rule reads the node's inputs (cml_in: the MIL value of an ONNX
 * value, consts emitted on first use), attributes and inferred types, adds
 * MIL ops with cml_op (which records the op's first target) and binds the
 * node's outputs with cml_out. It returns 0, or -1 after cml_refuse (the
 * node, op, target and reason in one line).
 *
 * A raising rule reads the op's inputs (cmr_in: a value name, immediates
 * become initializers; cmr_const: a constant parameter's value) and adds
 * ONNX nodes with cmr_node. It returns 0 or -1 with err.
 */
#ifndef OC_COREML_RULES_H
#define OC_COREML_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coreml/coreml.h"
#include "ir/ir.h"
#include "base/keyset.h"
#include "coreml/mil.h"

/* The metadata key prefix under which the export records an ONNX name
 * the package had to change (KEY + MIL name -> ONNX name); the import
 * reads it back. */
#define CM_NAME_KEY "onnx-convert.onnx_name."

/* ---- lowering ------------------------------------------------------------ */

typedef struct CmName CmName;

typedef struct CmLower {
    const IrModel *m;
    const IrGraph *g;
    MilBlock *b;            /* the block being filled */
    MilBlock *root;         /* the function's block: consts go there, ahead
                               of every op that holds a nested block */
    IrError *err;
    int limit;              /* explicit target, or -1 */
    int need;               /* highest first target of the ops emitted */
    CmReport *r;
    const IrNode *node;     /* the node being lowered */
    bool failed;            /* cml_op met an op above the limit */
    CmName *onnx;           /* ONNX value name -> MIL value name */
    CmName *used;           /* MIL names taken */
    size_t n_tmp;
} CmLower;

typedef int (*CmLowerFn)(CmLower *c, const IrNode *n);

/* The rule lowering ai.onnx op `op`, or NULL (coreml/rules.c). */
CmLowerFn cm_lower_rule(const char *op);

/* What the export (coreml/export.c) takes from the kit (coreml/lower.c):
 * a fresh MIL identifier from `base` (recorded as taken; caller frees),
 * the MIL value an ONNX value is bound to (NULL: none yet), the const op
 * of a known value, the node's op version, a refusal's fields in the
 * report, and the name tables' release. */
char *cml_fresh(CmLower *c, const char *base);
const char *cml_lookup(const CmLower *c, const char *onnx);
const char *cml_const_value(CmLower *c, const IrValue *v, const IrTensor *t);
int cml_onnx_version(const IrNode *n);
void cml_note_failure(CmReport *r, const IrNode *n, const char *mil_op, int first,
                      const char *kind);
void cml_free_names(CmLower *c);

typedef struct CmLowerRule {
    const char *op;         /* ONNX op (ai.onnx) */
    CmLowerFn fn;
} CmLowerRule;

/* Refuses the current node: err gets "node 'X' (Op-V): target T: reason".
 * Returns -1. */
int cml_refuse(CmLower *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The MIL value holding ONNX input i of n (a const op is emitted for an
 * initializer or a known value on first use); NULL after a refusal (an
 * absent input, or a type Core ML lacks). */
const char *cml_in(CmLower *c, const IrNode *n, size_t i);
/* A new MIL op of `type` for the current node (named after it). */
MilOp *cml_op(CmLower *c, const char *type);
/* Raises the target to `since` (an index into mil_targets) for a use of
 * op `type` that its first version does not take (a cast of 8-bit
 * integers is iOS17's); fails the node past an explicit limit. */
void cml_need(CmLower *c, const char *type, int since);
/* Binds output i of n to a new output of op, typed as inference typed it;
 * -1 (refused) when the type has no MIL equivalent. */
int cml_out(CmLower *c, MilOp *op, const IrNode *n, size_t i);
/* A new temporary output of op (dims NULL with rank -1: unknown shape);
 * returns its name (owned by op). */
const char *cml_tmp(CmLower *c, MilOp *op, int32_t dtype, int rank, const int64_t *dims);
/* A fresh MIL value name built from base (caller frees), and the binding
 * of an ONNX value name to a MIL name (block inputs of while_loop). */
char *cml_name(CmLower *c, const char *base);
void cml_bind(CmLower *c, const char *onnx, const char *mil);
/* A const op holding t (owned); returns its name. */
const char *cml_const(CmLower *c, MilTensor *t);
/* A one-op helper: op `type` with x bound to `x`, output typed as ONNX
 * output i of n. For unary maps. */
MilOp *cml_unary(CmLower *c, const IrNode *n, const char *type, const char *x);

/* The int32 indices `i` (ONNX input k of n) with `size` (a MIL value
 * that broadcasts against them) added where negative: select(i < 0,
 * i + size, i); `i` itself when the input is a constant with no negative
 * value. For MIL ops that do not wrap negative indices (index.c). */
const char *cml_wrap_index(CmLower *c, const IrNode *n, size_t k, const char *i,
                           const char *size);

/* A float32 conv of MIL values x and w (the weight is ONNX value wv)
 * with node n's window (Conv's attributes: QLinearConv, ConvInteger); its
 * output's name, NULL after a refusal. */
const char *cml_conv_float(CmLower *c, const IrNode *n, const char *x, const char *w,
                           const IrValue *wv);

/* x (of float MIL type dt, shaped as ONNX value o) rounded half to even
 * from floor and comparisons: the select op giving it (unbound). */
MilOp *cml_round_even(CmLower *c, const IrValue *o, int32_t dt, const char *x);

/* Lowers the nodes of subgraph g into block b (new ops go there, consts
 * to the function's block) and names g's outputs as b's (an output that
 * is not b's own value passes through an identity). 0 or -1 refused. */
int cml_lower_graph(CmLower *c, const IrGraph *g, MilBlock *b);

/* The MIL type of an ONNX value (dtype 0 when it has none). */
MilType cml_type(const IrValue *v);
/* Static dims of an ONNX value; false when a dim or the rank is unknown. */
bool cml_dims(const IrValue *v, int64_t *dims, size_t cap, size_t *rank);
/* Dims of an ONNX value of known rank (at most cap), -1 where a dim is
 * unknown or symbolic; false when the rank is unknown or above cap. */
bool cml_dims_open(const IrValue *v, int64_t *dims, size_t cap, size_t *rank);
/* Rank of an ONNX value, -1 when unknown. */
int cml_rank(const IrValue *v);
/* Element type (ONNX) of a value, 0 unknown. */
int32_t cml_elem(const IrValue *v);
/* The elements of a constant or known integer input (caller frees *v). */
bool cml_const_ints(const IrNode *n, size_t i, int64_t **v, size_t *len);
bool cml_const_floats(const IrNode *n, size_t i, double **v, size_t *len);
/* The value the export takes as constant, or NULL: the converter's
 * known-value rule (kv_value: initializers, Constants, values inference
 * proved from static shapes), and a graph input's default initializer
 * (Core ML has no input with a default, so such an input is a const).
 * Every lowering reads constants through it (cml_in, cml_const_*). */
const IrTensor *cml_known(const IrValue *v);
/* The constant tensor of input i (cml_known), or NULL. */
const IrTensor *cml_const_tensor(const IrNode *n, size_t i);
/* An ONNX tensor as a MIL tensor (int64 narrowed to int32, -1 with err
 * when a value does not fit); NULL on refusal. */
MilTensor *cml_tensor(CmLower *c, const IrTensor *t);
/* Attribute readers: the node's value, else the operator table's default
 * at CM_ONNX_OPSET, else 0 or "" (a required attribute, which the checker
 * made sure is there). The _or forms take the caller's `dflt` instead, for
 * an optional attribute the table gives no default; each such call is
 * listed in tests/attr_defaults_exceptions.txt. */
int64_t cml_attr_i(const IrNode *n, const char *name);
int64_t cml_attr_i_or(const IrNode *n, const char *name, int64_t dflt);
float cml_attr_f(const IrNode *n, const char *name);
const char *cml_attr_s(const IrNode *n, const char *name, char *buf, size_t cap);
const char *cml_attr_s_or(const IrNode *n, const char *name, char *buf, size_t cap,
                          const char *dflt);
/* An INTS attribute (borrowed), -1 when absent. */
long cml_attr_ints(const IrNode *n, const char *name, const int64_t **v);
/* rank-1 int32 tensor from int64s (values must fit: callers clamp). */
MilTensor *cml_ints(const int64_t *v, size_t n);
/* Normalizes a possibly negative axis; false when out of range. */
bool cml_axis(int64_t axis, int rank, int64_t *out);
/* True when the input exists (not left out). */
bool cml_has(const IrNode *n, size_t i);

/* A scalar of MIL dtype (fp32, fp16, int32, bool) holding v. */
MilTensor *cml_scalar(int32_t dtype, double v);
/* An ONNX <-> MIL op name pair, for the families whose ops map one to one. */
typedef struct CmMap {
    const char *onnx, *mil;
} CmMap;
const CmMap *cm_map_onnx(const CmMap *t, size_t n, const char *onnx);
const CmMap *cm_map_mil(const CmMap *t, size_t n, const char *mil);

/* ---- raising --------------------------------------------------------------- */

typedef struct CmConst CmConst;

typedef struct CmRaise {
    IrModel *m;
    IrGraph *g;
    IrError *err;
    CmConst *consts;        /* MIL value name -> its const value and type
                               (borrowed) */
    const MilOp *op;        /* the op being raised */
    IrPtrList pool;         /* names made by cmr_tmp (char *), freed at the end */
    KsSet node_names;       /* node names given (ONNX Runtime refuses a
                               model where two nodes share one) */
    bool in_failed;         /* cmr_in refused an argument and said why in
                               err: cmr_node keeps that reason */
    IrPtrList owned;        /* values folded from constexpr_* ops
                               (MilTensor *), freed at the end */
} CmRaise;

typedef int (*CmRaiseFn)(CmRaise *r, const MilOp *op);

/* The rule raising MIL op `op`, or NULL (coreml/rules.c). */
CmRaiseFn cm_raise_rule(const char *op);

typedef struct CmRaiseRule {
    const char *op;         /* MIL op */
    CmRaiseFn fn;
} CmRaiseRule;

/* Fails raising the current op: err gets "MIL op 'type' (name): reason". */
int cmr_fail(CmRaise *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The value of parameter `param` when it is an immediate or a const op's
 * output (borrowed), else NULL. */
const MilTensor *cmr_const(CmRaise *r, const MilOp *op, const char *param);
/* ONNX value name of argument k of `param` (an immediate becomes an
 * initializer); NULL when absent. */
const char *cmr_in(CmRaise *r, const MilOp *op, const char *param, size_t k);
/* A new ONNX node; 0 or -1 with err. */
int cmr_node(CmRaise *r, const char *op_type, size_t n_in, const char *const *in,
             size_t n_out, const char *const *out, IrNode **node);
/* The rank of MIL value `name` as the op or function (block) input that
 * defines it declares it; -1 unknown. */
int cmr_rank(CmRaise *r, const char *name);
/* The static dims of MIL value `name` as the op or function (block) input
 * that defines it declares them (at most cap); false when the rank or a
 * dim is unknown. */
bool cmr_dims(CmRaise *r, const char *name, int64_t *dims, size_t cap, size_t *rank);
/* A fresh value name built from base (owned by r's pool). */
const char *cmr_tmp(CmRaise *r, const char *base);
/* Makes t (owned from now on) the constant value of op's one output, as
 * a const op's: the rules read it with cmr_const, and it becomes an
 * initializer where its type is ONNX's. */
int cmr_const_value(CmRaise *r, const MilOp *op, MilTensor *t);
/* Folds a constexpr_* op (coreml/constexpr.c). */
int cmx_fold(CmRaise *r, const MilOp *op);
/* The ONNX element type of op's input param (a const, an op's output or
 * a graph input); 0 when unknown. */
int32_t cmr_elem(CmRaise *r, const MilOp *op, const char *param);
/* New initializers; return their names. */
const char *cmr_init_i64(CmRaise *r, const int64_t *v, size_t n, bool scalar);
const char *cmr_init_f32(CmRaise *r, const float *v, size_t n, bool scalar);
const char *cmr_init_tensor(CmRaise *r, const MilTensor *t);
/* Elements of an integer/bool MIL tensor (caller frees *v). */
bool cmr_ints(const MilTensor *t, int64_t **v, size_t *n);
/* A float scalar of a MIL tensor (fp32/fp16). */
bool cmr_float(const MilTensor *t, double *v);
/* A string scalar, or NULL. */
const char *cmr_string(const MilTensor *t);
/* A bool scalar param (default when absent). */
bool cmr_bool(CmRaise *r, const MilOp *op, const char *param, bool dflt);
/* The ONNX type of a MIL type (owned by the caller). */
IrType *cmr_type(const MilType *t);
/* Output k's name. */
const char *cmr_out(const MilOp *op, size_t k);
/* Raises the ops of block b into subgraph g (which the caller attaches)
 * and lists b's outputs as g's, typed by `types` (b->n_out of them). */
int cmr_block(CmRaise *r, const MilBlock *b, IrGraph *g, const MilNamedType *types);
/* One-node helper: ONNX op with the given inputs and output k of op. */
int cmr_simple(CmRaise *r, const MilOp *op, const char *onnx_op, size_t n_in,
               const char *const *in, IrNode **node);
/* One ONNX node of one or two inputs (a, and b when n_in is 2) into a
 * fresh temporary: its name, or NULL with err (the first reason kept: a
 * NULL input after an earlier failure adds none). For compositions. */
const char *cmr_tnode(CmRaise *r, const char *op_type, size_t n_in, const char *a,
                      const char *b, IrNode **node);
/* A scalar initializer of v in the element type of op's output 0 (fp32,
 * fp16, int32, bool); NULL with err for another type. */
const char *cmr_init_scalar(CmRaise *r, const MilOp *op, double v);

/* ---- the families -------------------------------------------------------------- */

typedef struct CmFamily {
    const char *name;
    const CmLowerRule *lower;
    size_t n_lower;
    const CmRaiseRule *raise;
    size_t n_raise;
} CmFamily;

extern const CmFamily cm_family_nn, cm_family_activation, cm_family_elementwise,
    cm_family_shape, cm_family_tensor, cm_family_index, cm_family_norm,
    cm_family_reduce, cm_family_resize, cm_family_rnn, cm_family_quant, cm_family_control,
    cm_family_einsum, cm_family_sample;

/* Every family (coreml/rules.c), for the rule look-ups and the tests. */
extern const CmFamily *const cm_families[];
extern const size_t cm_families_n;

#define CM_FAMILY(var, fname, lower, raise) \
    const CmFamily var = {fname, lower, sizeof lower / sizeof lower[0], \
                          raise, sizeof raise / sizeof raise[0]}

#endif
