/*
 * fuse_util.h - small helpers the fusion passes share (prefix opt_fu_):
 * matching ai.onnx nodes, "read only here" tests, reading and building
 * small integer constants, and the inferred types of values.
 *
 * Static inline so that each pass file takes only what it uses.
 */
#ifndef OC_FUSE_UTIL_H
#define OC_FUSE_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "../src/eval.h"

#define OPT_FU_MAX_RANK 16

/* k is the ai.onnx op `op`. */
static inline bool opt_fu_is(const IrNode *k, const char *op)
{
    return k && !k->dead && strcmp(k->op_type, op) == 0 &&
           (!k->domain || !k->domain[0] || strcmp(k->domain, "ai.onnx") == 0);
}

/* The node of graph g that produces v as one of its outputs, or NULL. */
static inline IrNode *opt_fu_producer(const IrValue *v, const IrGraph *g)
{
    if (!v || v->kind != IR_VAL_NODE || !v->producer || v->producer->graph != g ||
        v->producer->dead)
        return NULL;
    return v->producer;
}

/* The producer of v when it is op `op` (in g) and v is read by nothing but
 * node `reader` (once) and is not a graph output: an intermediate a fusion
 * may swallow. */
static inline IrNode *opt_fu_sole(const IrValue *v, const IrNode *reader, const char *op)
{
    IrNode *p = opt_fu_producer(v, reader->graph);
    if (!p || !opt_fu_is(p, op) || p->n_out != 1 || v->n_uses != 1 ||
        v->uses[0].node != reader || ir_value_is_graph_output(v))
        return NULL;
    return p;
}

/* The tensor type of v when inference knows its element type, else NULL. */
static inline const IrType *opt_fu_type(const IrValue *v)
{
    const IrType *t = v ? v->type : NULL;
    return t && t->kind == IR_TYPE_TENSOR && t->has_elem_type && t->elem_type ? t : NULL;
}

/* The element type of v, or 0 when unknown. */
static inline int32_t opt_fu_elem(const IrValue *v)
{
    const IrType *t = opt_fu_type(v);
    return t ? t->elem_type : 0;
}

/* The rank of v, or -1 when unknown. */
static inline long opt_fu_rank(const IrValue *v)
{
    const IrType *t = v ? v->type : NULL;
    return t && t->kind == IR_TYPE_TENSOR && t->shape ? (long)t->shape->rank : -1;
}

/* Static extent of dim i of v, or -1 when unknown. */
static inline int64_t opt_fu_dim(const IrValue *v, size_t i)
{
    long r = opt_fu_rank(v);
    if (r < 0 || i >= (size_t)r)
        return -1;
    const IrDim *d = &v->type->shape->dims[i];
    return d->kind == IR_DIM_VALUE && d->value >= 0 ? d->value : -1;
}

/* The constant tensor v holds: an initializer that is not a graph input,
 * or the `value` of a Constant node. NULL otherwise. */
static inline const IrTensor *opt_fu_const(const IrValue *v)
{
    if (!v)
        return NULL;
    if (v->kind == IR_VAL_INIT)
        return v->init;
    if (v->kind == IR_VAL_NODE && v->producer && opt_fu_is(v->producer, "Constant") &&
        v->producer->n_attr == 1) {
        const IrAttr *a = v->producer->attr[0];
        if (a->name && strcmp(a->name, "value") == 0 && !a->ref_attr_name)
            return a->t;
    }
    return NULL;
}

/* The elements of constant integer tensor v (rank <= 1) into out (cap
 * entries). Returns the count, or -1 when v is not such a constant. */
static inline long opt_fu_const_ints(const IrValue *v, int64_t *out, size_t cap)
{
    const IrTensor *t = opt_fu_const(v);
    if (!t || !t->has_data_type || (t->data_type != EV_INT64 && t->data_type != EV_INT32) ||
        t->ndims > 1)
        return -1;
    IrError e;
    EvValue *ev = ev_from_ir_tensor(t, &e);
    if (!ev)
        return -1;
    long n = -1;
    if (ev->numel <= cap) {
        for (size_t i = 0; i < ev->numel; i++)
            out[i] = ev_get_i(ev, i);
        n = (long)ev->numel;
    }
    ev_unref(ev);
    return n;
}

/* A new 1-D int64 constant holding v[0..n), placed as the scope allows
 * (passes/util.c), before node `before`. NULL when it cannot be made. */
static inline IrValue *opt_fu_new_ints(OptCtx *c, IrNode *before, const char *base,
                                       size_t n, const int64_t *v)
{
    if (!opt_can_place_const(c, EV_INT64))
        return NULL;
    int64_t d = (int64_t)n;
    return opt_add_const(c, before, base, ir_tensor_new(NULL, EV_INT64, 1, &d, v, n * sizeof *v));
}

/* An INT attribute of k, or dflt when absent; *ok cleared when present
 * but not a plain int (a reference to a function attribute, say). */
static inline int64_t opt_fu_attr_i(const IrNode *k, const char *name, int64_t dflt, bool *ok)
{
    const IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return dflt;
    if (a->ref_attr_name || !a->has_i) {
        *ok = false;
        return dflt;
    }
    return a->i;
}

/* An INTS attribute of k into out (cap entries): the count, -1 when
 * absent, -2 when unusable (a reference, or too long). */
static inline long opt_fu_attr_ints(const IrNode *k, const char *name, int64_t *out,
                                    size_t cap)
{
    const IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return -1;
    if (a->ref_attr_name || a->n_ints > cap || (a->has_type && a->type != 7))
        return -2;
    memcpy(out, a->ints, a->n_ints * sizeof *out);
    return (long)a->n_ints;
}

/* Sets k's inputs to vals[0..n) (n >= k->n_in), keeping use lists right. */
static inline void opt_fu_set_inputs(IrNode *k, size_t n, IrValue *const *vals)
{
    for (size_t i = 0; i < k->n_in; i++)
        ir_node_set_input(k, i, NULL);
    while (k->n_in < n)
        ir_node_add_input(k, NULL);
    for (size_t i = 0; i < n; i++)
        ir_node_set_input(k, i, vals[i]);
}

/* Runs `one` on every `op` node of c's graph, again while it changes the
 * node (each change removes a node, so this ends); the change count. */
static inline long opt_fu_each(OptCtx *c, const char *op, bool (*one)(OptCtx *, IrNode *))
{
    long n = 0;
    IR_FOR_NODES(c->g, k)
        while (opt_fu_is(k, op) && one(c, k))
            n++;
    return n;
}

/* Whether any attribute of k is not in the NULL-ended list `known`. */
static inline bool opt_fu_other_attrs(const IrNode *k, const char *const *known)
{
    for (size_t a = 0; a < k->n_attr; a++) {
        bool found = false;
        for (size_t i = 0; known[i] && !found; i++)
            found = k->attr[a]->name && strcmp(k->attr[a]->name, known[i]) == 0;
        if (!found)
            return true;
    }
    return false;
}

#endif
