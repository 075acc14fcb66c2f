/*
 * constant_to_init.c - turns Constant nodes into initializers.
 *
 * A Constant whose attribute is a plain tensor (`value`, or value_float(s)
 * / value_int(s)) becomes an initializer of the same name in its own
 * graph: the same tensor, with no node to run, and later folds see it as
 * a constant. In the main graph and in If/Loop/Scan bodies (a subgraph may
 * hold initializers of its own; ONNX Runtime makes the same move), not in
 * function bodies (FunctionProto has no initializers), not below IR 4
 * (where initializers are graph inputs), and not for sparse_value or
 * value_string(s).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* The tensor a Constant's attributes define (`value`'s own tensor is taken
 * from the node, which is deleted next), or NULL for the kinds this pass
 * leaves alone. */
static IrTensor *opt_ci_tensor(IrNode *k)
{
    if (k->n_attr != 1 || k->attr[0]->ref_attr_name)
        return NULL;
    IrAttr *a = k->attr[0];
    if (strcmp(a->name, "value") == 0 && a->t) {
        IrTensor *t = a->t;
        a->t = NULL;
        return t;
    }
    if (strcmp(a->name, "value_float") == 0 && a->has_f)
        return ir_tensor_new(NULL, IR_FLOAT, 0, NULL, &a->f, sizeof a->f);
    if (strcmp(a->name, "value_int") == 0 && a->has_i)
        return ir_tensor_new(NULL, IR_INT64, 0, NULL, &a->i, sizeof a->i);
    if (strcmp(a->name, "value_floats") == 0) {
        int64_t d = (int64_t)a->n_floats;
        return ir_tensor_new(NULL, IR_FLOAT, 1, &d, a->floats, a->n_floats * sizeof *a->floats);
    }
    if (strcmp(a->name, "value_ints") == 0) {
        int64_t d = (int64_t)a->n_ints;
        return ir_tensor_new(NULL, IR_INT64, 1, &d, a->ints, a->n_ints * sizeof *a->ints);
    }
    return NULL;
}

static long opt_ci_run(OptCtx *c)
{
    if (!opt_inits_ok(c))
        return 0;
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        if (strcmp(k->op_type, "Constant") != 0 || (k->domain && k->domain[0]) ||
            k->n_out != 1 || !k->out[0])
            continue;
        IrTensor *t = opt_ci_tensor(k);
        if (!t)
            continue;
        free(t->name);
        t->name = mem_strdup(k->out[0]->name);
        ir_node_delete(k);               /* the value stays: it is read */
        if (!ir_graph_add_init(c->g, t))
            ir_tensor_free(t);           /* cannot happen: the name is free */
        n++;
    }
    return n;
}

const OptPass opt_pass_constant_to_init = {
    "constant_to_init", "turns Constant nodes into initializers (not in function bodies)", true, 0,
    opt_ci_run,
};
