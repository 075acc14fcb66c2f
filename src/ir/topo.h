/*
 * topo.h - putting nodes into topological order (prefix topo_).
 *
 * ONNX requires a graph's nodes in topological order, yet tools write
 * graphs that are not (onnxconverter-common's float16 conversion appends
 * its input and output Casts after the nodes that read them), and ONNX
 * Runtime runs them. The converter, the optimizer and the evaluator walk
 * the node list in order, so such a graph is sorted before they see it.
 *
 * The sort is stable: nodes keep their file order, and a node moves only
 * when an earlier node needs its output (it then goes just before the
 * first such reader, with whatever it needs in turn). A graph already in
 * order is left as it is. Graph inputs, initializers and values of
 * enclosing graphs are ready from the start; a node holding subgraphs
 * depends on every value of its own graph that its subgraphs read, at
 * any depth.
 */
#ifndef OC_TOPO_H
#define OC_TOPO_H

#include <stddef.h>

#include "ir/ir.h"

/* Sorts every scope of m: the main graph, every subgraph, the training
 * graphs and the bodies of model-local functions. *moved (if not NULL)
 * gets the number of nodes that changed place relative to the others
 * (the fewest nodes whose moving gives the new order: each scope's node
 * count less the longest run of nodes that kept their relative order).
 * Returns 0, or -1 with err "SCOPE: node 'NAME' (OP) is on a cycle: ..."
 * (a cycle breaks the checker's rule topo-order); on -1 nothing changed.
 * O(n log n + uses x nesting depth). */
int topo_sort_model(IrModel *m, size_t *moved, IrError *err);

/* The same for one graph and the subgraphs nested in it. */
int topo_sort_graph(IrGraph *g, size_t *moved, IrError *err);

#endif
