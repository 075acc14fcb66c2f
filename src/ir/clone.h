/*
 * clone.h - deep copies of the IR (prefix ir_).
 *
 * A copy made by walking the IR, not by saving and loading it: every field
 * of ir.h's structs is copied, unknown fields, doc strings and inference
 * results (IrValue type, symval, known) included. Nodes deleted and not
 * yet collected (IrGraph.dead) are not copied: they are no longer part of
 * the graph. A clone cannot fail; out of memory aborts, as mem_alloc does.
 *
 * Values keep their structure, not just their names: a use of a value of
 * graph G becomes a use of the same-named value of G's clone, so a name a
 * subgraph reads from an enclosing graph means in the clone what it meant
 * in the original. A value read from a graph outside the ones cloned
 * resolves in `parent` (ir_graph_lookup) where the function takes one; if
 * it is not found there it becomes an undefined value (IR_VAL_UNDEF) of
 * the top graph of the clone.
 *
 * Each graph's value table is filled in the order the loader fills it
 * (inputs, initializers, node outputs, then node by node its subgraphs and
 * inputs, graph outputs, value_info; values nothing refers to come last),
 * so that a walk over g->values sees a clone as it saw a copy made by
 * saving and loading.
 *
 * Payloads: tensor bytes borrowed from a model's file (raw_borrowed) are
 * copied into the clone's tensors, which own them. External data stays
 * external (its location, offset and length are kept as references); its
 * bytes (IrExtRef) are borrowed from the model's mappings, which a tensor
 * cannot own, so:
 * - ir_model_clone gives the clone its own copy of each external file a
 *   tensor reads, as one of the clone's mappings;
 * - ir_graph_clone, ir_function_clone and ir_attr_clone leave external
 *   tensors pointing into the original model's mappings: such a clone
 *   lives in (and must not outlive) the model it was taken from.
 */
#ifndef OC_CLONE_H
#define OC_CLONE_H

#include "ir/ir.h"

/* A copy of m (NULL gives NULL) that does not depend on m: it may be
 * changed or outlive m. Its mapping list says where m came from (the
 * paths save asks about for an in-place rewrite and the side files the
 * input still reads) and holds the copies of external data; saving it
 * gives the bytes saving m gives. The caller frees it (ir_model_free). */
IrModel *ir_model_clone(const IrModel *m);

/* A copy of g (NULL gives NULL) nested in `parent` (NULL for a top-level
 * graph); names g reads from enclosing graphs resolve in parent. Its
 * `owner` is NULL: attach it with ir_attr_graph and ir_node_set_attr to a
 * node of parent, or free it with ir_graph_free. */
IrGraph *ir_graph_clone(const IrGraph *g, IrGraph *parent);

/* A copy of f (NULL gives NULL), body and attribute defaults included;
 * the caller frees it (ir_function_free) or adds it to a model. */
IrFunction *ir_function_clone(const IrFunction *f);

/* A copy of a (NULL gives NULL); its subgraphs are nested in `parent`, the
 * graph of the node that is to hold it (ir_node_set_attr). */
IrAttr *ir_attr_clone(const IrAttr *a, IrGraph *parent);

#endif
