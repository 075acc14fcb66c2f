/*
 * util.c - what several passes need: putting new constants into a scope,
 * as initializers or Constant nodes as the scope allows (prefix opt_).
 * Reading constants: opt_const_tensor here; decoded, opt_fz_const
 * (passes/fuse_util.h).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "analysis/known.h"

/* The one rule of src/analysis/known.h: an initializer that is not a graph input,
 * a Constant, or a value inference proved ahead of time. */
const IrTensor *opt_const_tensor(const IrValue *v)
{
    return kv_value(v);
}

bool opt_inits_ok(const OptCtx *c)
{
    return !c->fn && !(c->m->has_ir_version && c->m->ir_version < 4);
}

/* Constant-1..8 holds only float16, float and double tensors. */
static bool opt_constant_holds(const OptCtx *c, int32_t dtype)
{
    if (ir_scope_opset(c->m, c->fn, "") >= 9)
        return true;
    return dtype == IR_FLOAT || dtype == IR_FLOAT16 || dtype == IR_DOUBLE;
}

bool opt_can_place_const(const OptCtx *c, int32_t dtype)
{
    return opt_inits_ok(c) || opt_constant_holds(c, dtype);
}

int opt_replace_by_const(OptCtx *c, IrNode *k, size_t i, IrTensor *t)
{
    IrValue *v = k->out[i];
    if (opt_inits_ok(c)) {
        /* The value keeps its name and uses; it loses its producer and
         * becomes the initializer's. */
        k->out[i] = NULL;
        v->kind = IR_VAL_UNDEF;
        v->producer = NULL;
        free(t->name);
        t->name = mem_strdup(v->name);
        if (!ir_graph_add_init(c->g, t)) {
            ir_tensor_free(t);
            return ir_fail(c->err, "fold: cannot add initializer '%s'", v->name);
        }
        return 0;
    }
    IrError e;
    char *nm = ir_graph_fresh_name(c->g, "folded");
    const char *none[1] = {""};
    IrNode *kc = ir_node_new(c->g, k, "Constant", NULL, nm, 0, NULL, 1, none, &e);
    free(nm);
    if (!kc) {
        ir_tensor_free(t);
        return ir_fail(c->err, "fold: %s", e.msg);
    }
    free(t->name);
    t->name = NULL;
    ir_node_set_attr(kc, ir_attr_tensor("value", t));
    ir_node_take_output(kc, 0, k, i);
    return 0;
}

IrValue *opt_add_const(OptCtx *c, IrNode *before, const char *base, IrTensor *t)
{
    char *nm = ir_graph_fresh_name(c->g, base);
    IrValue *v = NULL;
    if (opt_inits_ok(c)) {
        free(t->name);
        t->name = nm;
        v = ir_graph_add_init(c->g, t);
        if (!v)
            ir_tensor_free(t);
        return v;
    }
    IrError e;
    const char *outs[1] = {nm};
    IrNode *kc = ir_node_new(c->g, before, "Constant", NULL, nm, 0, NULL, 1, outs, &e);
    free(nm);
    if (!kc) {
        ir_tensor_free(t);
        return NULL;
    }
    free(t->name);
    t->name = NULL;
    ir_node_set_attr(kc, ir_attr_tensor("value", t));
    return kc->out[0];
}

long opt_each_node(OptCtx *c, int (*fn)(OptCtx *c, IrNode *k))
{
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        int r = fn(c, k);
        if (r < 0)
            return -1;
        n += r;
    }
    return n;
}
