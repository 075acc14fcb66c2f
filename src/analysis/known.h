/*
 * known.h - whether a value is known before the model runs, and what it is
 * (prefix kv_). The one rule the adapters, the passes and inference share.
 *
 * A value is known when it is
 *   - an initializer that is not a graph input (a graph input's initializer
 *     is a default the caller may override), except in IR 3 models, where
 *     every initializer had to be listed as an input;
 *   - the output of a Constant node, in any of its value forms;
 *   - an output inference proves: the Shape or Size of a tensor whose shape
 *     is static, a small integer tensor whose every element shape
 *     arithmetic proved (IrValue.symval), or the output of a deterministic
 *     node whose inputs are all known and small, computed by the evaluator
 *     at the scope's opset (so a Shape -> Cast -> Div -> Concat chain that
 *     computes Upsample's scales from a static input is known).
 * Inference computes the proved values as it walks (kv_infer_node) and
 * drops them with its other results, so the answer is as good as the last
 * inference run. Proved values are kept only when small (KV_MAX_ELEMS):
 * they stand for shapes, scales, pads and axes, not for weights.
 */
#ifndef OC_KNOWN_H
#define OC_KNOWN_H

#include <stdbool.h>

#include "ir/ir.h"

/* Elements a proved value (and each input a proof reads) may have. */
#define KV_MAX_ELEMS 65536
/* Elements (read and written) all proofs of one inference run may take:
 * 100k nodes each adding two 64k-element constants would otherwise store
 * gigabytes. */
#define KV_MAX_WORK (1u << 24)

/* Inputs and outputs a proof handles, and the rank of a shape it reads
 * (the evaluator's EV_MAX_RANK). */
#define KV_MAX_IO 64
#define KV_MAX_RANK 64

/* Computes node n of m from its inputs' known values (in[i], NULL where
 * the input is absent): the evaluator's ev_prove_node. Inference takes it
 * from its caller (InfOptions.run), so that analysis never links the
 * evaluator; without it, nothing is proved by running a node. Returns 0
 * with out[i] new tensors (NULL where the output is not a tensor), or -1
 * with nothing in out. */
typedef int (*KvRunFn)(IrModel *m, IrNode *n, const IrTensor *const *in, IrTensor **out);

/* The value of v when it is known (see above), else NULL. */
const IrTensor *kv_value(const IrValue *v);

/* Whether n draws its outputs at random: an op the operator table flags
 * random, or a Dropout in training mode (before version 7 when is_test is
 * 0, its default; from 12 when a training_mode input is present and not
 * known to be false) whose ratio is not known to be 0. In inference mode,
 * or with a ratio of 0, Dropout is the identity, as
 * deterministic as any op. `m` gives the node's opset; with m NULL every
 * Dropout counts as random (the cautious answer). */
bool kv_random(const IrModel *m, const IrNode *n);

/* Whether n computes its outputs from its inputs alone, without running a
 * graph (not random by kv_random, no control flow, no attribute read from
 * a calling function), in ai.onnx or ai.onnx.ml: what may be computed
 * ahead of time. `m` as for kv_random. */
bool kv_deterministic(const IrModel *m, const IrNode *n);

/* The value inference proved for v (the third kind above), or NULL: not
 * an initializer or a Constant, which are constants already. */
const IrTensor *kv_proved(const IrValue *v);

/* Starts an inference run of m: resets the run's work (KV_MAX_WORK) and
 * marks the main graph's inputs that hold a constant (IR 3 models only).
 * Inference calls it before its walk. */
void kv_begin_run(IrModel *m);

/* Proves what can be proved of n's outputs, after inference gave them
 * their types: for inference's walk over a graph of m (not for function
 * bodies, whose values differ per call, nor for nodes built for another
 * opset than the scope's). Deterministic nodes are run through `run`
 * (NULL: not run). Never fails: what cannot be proved stays unknown. */
void kv_infer_node(IrModel *m, IrNode *n, KvRunFn run);

#endif
