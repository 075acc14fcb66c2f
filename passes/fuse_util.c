/*
 * fuse_util.c - helpers the fusion passes share (see fuse_util.h).
 */
#include <stdlib.h>
#include <string.h>

#include "fuse_util.h"

bool opt_fu_is(const IrNode *k, const char *op)
{
    return !k->dead && strcmp(k->op_type, op) == 0 &&
           (!k->domain || !k->domain[0] || strcmp(k->domain, "ai.onnx") == 0);
}

int64_t opt_fu_attr_i(const IrNode *k, const char *name, int64_t dflt, bool *ok)
{
    IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return dflt;
    if (a->ref_attr_name || !a->has_i) {
        *ok = false;
        return dflt;
    }
    return a->i;
}

double opt_fu_attr_f(const IrNode *k, const char *name, double dflt, bool *ok)
{
    IrAttr *a = ir_node_attr(k, name);
    if (!a)
        return dflt;
    if (a->ref_attr_name || !a->has_f) {
        *ok = false;
        return dflt;
    }
    return a->f;
}

EvValue *opt_fu_const(const IrValue *v)
{
    IrError e;
    if (!v)
        return NULL;
    if (v->kind == IR_VAL_INIT && v->init)
        return ev_from_ir_tensor(v->init, &e);
    if (v->kind != IR_VAL_NODE || !v->producer || !opt_fu_is(v->producer, "Constant") ||
        v->producer->n_attr != 1)
        return NULL;
    IrAttr *a = v->producer->attr[0];
    if (a->ref_attr_name || strcmp(a->name, "value") != 0 || !a->t)
        return NULL;
    return ev_from_ir_tensor(a->t, &e);
}

IrNode *opt_fu_sole_reader(const IrGraph *g, const IrValue *v, size_t *index)
{
    if (!v || v->n_uses != 1 || ir_value_is_graph_output(v))
        return NULL;
    const IrUse *u = &v->uses[0];
    if (!u->node || u->node->graph != g || u->node->dead)
        return NULL;
    *index = u->index;
    return u->node;
}

bool opt_fu_float(int32_t dtype)
{
    return dtype == EV_FLOAT || dtype == EV_DOUBLE;
}

IrValue *opt_fu_emit(OptCtx *c, IrNode *before, const EvValue *t, const char *base)
{
    char *name = ir_graph_fresh_name(c->g, base);
    IrTensor *tp = ev_to_ir_tensor(t, name);
    IrValue *v = NULL;
    if (c->main && !(c->m->has_ir_version && c->m->ir_version < 4)) {
        if (!(v = ir_graph_add_init(c->g, tp))) {
            ir_tensor_free(tp);
            ir_fail(c->err, "cannot add initializer '%s'", name);
        }
        free(name);
        return v;
    }
    const char *outs[1] = {name};
    IrNode *k = ir_node_new(c->g, before, "Constant", NULL, name, 0, NULL, 1, outs, c->err);
    free(name);
    if (!k) {
        ir_tensor_free(tp);
        return NULL;
    }
    free(tp->name);
    tp->name = NULL;
    ir_node_set_attr(k, ir_attr_tensor("value", tp));
    return k->out[0];
}

bool opt_fu_ones_from(const EvValue *t, size_t from)
{
    for (size_t i = from; i < t->rank; i++)
        if (t->dims[i] != 1)
            return false;
    return true;
}
