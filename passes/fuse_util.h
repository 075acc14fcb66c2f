/*
 * fuse_util.h - helpers the fusion passes share (prefix opt_fu_): matching
 * ai.onnx nodes, reading attributes and constant tensors, finding the one
 * reader of a value, and adding new constants to a scope.
 */
#ifndef OC_FUSE_UTIL_H
#define OC_FUSE_UTIL_H

#include "passes.h"
#include "../src/eval.h"

/* k is the ai.onnx op `op`. */
bool opt_fu_is(const IrNode *k, const char *op);
/* Integer attribute (dflt when absent). *ok is cleared when the attribute
 * is a reference (function bodies) or not an int. */
int64_t opt_fu_attr_i(const IrNode *k, const char *name, int64_t dflt, bool *ok);
/* Float attribute, likewise. */
double opt_fu_attr_f(const IrNode *k, const char *name, double dflt, bool *ok);
/* The decoded value of a constant (an initializer that is not a graph
 * input, or a Constant node's `value`), or NULL. Caller ev_unrefs. */
EvValue *opt_fu_const(const IrValue *v);
/* The node of g that is v's only reader (*index = its input slot), when
 * v is read once, by a node of g, and is not a graph output; else NULL. */
IrNode *opt_fu_sole_reader(const IrGraph *g, const IrValue *v, size_t *index);
/* float or double: the types the fusions compute exactly enough. Not
 * float16: rounding the folded weights to half precision moves results
 * by more than the verifier's tolerance (rtol 1e-3, atol 1e-5) where the
 * channel's terms cancel, while the original rounds only its output. */
bool opt_fu_float(int32_t dtype);
/* Adds t as a new constant of the scope named after `base`: an
 * initializer in the main graph (IR >= 4), else a Constant node placed
 * before `before`. The value, or NULL with c->err set. */
IrValue *opt_fu_emit(OptCtx *c, IrNode *before, const EvValue *t, const char *base);
/* Whether every dims entry of t past `from` is 1. */
bool opt_fu_ones_from(const EvValue *t, size_t from);

#endif
