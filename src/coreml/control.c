/*
 * coreml/control.c - Core ML lowering and raising of the control family:
 * If as cond (a bool scalar pred, a block per branch whose outputs are the
 * cond's).
 *
 * Refused, and why: Loop and Scan (while_loop is not lowered yet); branch
 * outputs that are sequences or optionals (MIL's cond returns tensors).
 */
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int lower_if(CmLower *c, const IrNode *n)
{
    const IrAttr *t = ir_node_attr(n, "then_branch"), *e = ir_node_attr(n, "else_branch");
    if (!t || !t->g || !e || !e->g)
        return cml_refuse(c, "a branch is missing");
    if (t->g->outputs.n != n->n_out || e->g->outputs.n != n->n_out)
        return cml_refuse(c, "branches return %zu and %zu values for %zu outputs",
                          t->g->outputs.n, e->g->outputs.n, n->n_out);
    const char *pred = cml_in(c, n, 0);
    if (!pred)
        return -1;
    if (cml_rank(n->in[0]) != 0) {
        /* ONNX's cond is any one-element bool tensor; MIL's pred a scalar */
        MilOp *op = cml_op(c, "reshape");
        mil_op_in(op, "x", pred);
        mil_op_in_const(op, "shape", mil_tensor_new(MIL_INT32, 1, (int64_t[]){0}, NULL));
        pred = cml_tmp(c, op, MIL_BOOL, 0, NULL);
    }
    /* the branches first: consts they need go to the function's block
     * ahead of the cond */
    MilBlock *bt = mil_block_new(), *be = mil_block_new();
    int rc = cml_lower_graph(c, t->g, bt);
    if (rc == 0)
        rc = cml_lower_graph(c, e->g, be);
    MilOp *op = cml_op(c, "cond");
    op->blocks = ir_alloc_array(2, sizeof *op->blocks);
    op->blocks[0] = bt;
    op->blocks[1] = be;
    op->n_blocks = 2;
    if (rc < 0)
        return -1;
    mil_op_in(op, "pred", pred);
    for (size_t i = 0; i < n->n_out; i++)
        if (cml_out(c, op, n, i) < 0)
            return -1;
    return 0;
}

static const CmLowerRule ctl_lower[] = {
    {"If", lower_if},
};

static int raise_cond(CmRaise *r, const MilOp *op)
{
    if (op->n_blocks != 2 || !op->n_out || op->n_out > 4096)
        return cmr_fail(r, "cond needs two blocks and outputs");
    for (size_t k = 0; k < 2; k++)
        if (op->blocks[k]->n_out != op->n_out)
            return cmr_fail(r, "block %zu returns %zu values for %zu outputs", k,
                            op->blocks[k]->n_out, op->n_out);
    const char *pred = cmr_in(r, op, "pred", 0);
    const char **out = ir_alloc_array(op->n_out, sizeof *out);
    for (size_t i = 0; i < op->n_out; i++)
        out[i] = op->out[i].name;
    IrNode *node;
    int rc = cmr_node(r, "If", 1, &pred, op->n_out, out, &node);
    free(out);
    for (size_t k = 0; rc == 0 && k < 2; k++) {
        IrGraph *g = ir_graph_new(r->g);
        g->name = ir_strdup(k ? "else_branch" : "then_branch");
        rc = cmr_block(r, op->blocks[k], g, op->out);
        ir_node_set_attr(node, ir_attr_graph(k ? "else_branch" : "then_branch", g));
    }
    return rc;
}

static const CmRaiseRule ctl_raise[] = {
    {"cond", raise_cond},
};

CM_FAMILY(cm_family_control, "control", ctl_lower, ctl_raise);
