/*
 * fold_shapes.c - shape-only folding: values that depend only on static
 * shapes become constants, even when the tensors they measure are not
 * constant.
 *
 * Inference proves them (src/analysis/known.h: Shape and Size of a fully static
 * shape, integers shape arithmetic proved, and cheap nodes over such
 * values); a node whose one output it proved, at most
 * OPT_FS_MAX_ELEMS elements, is replaced by that constant. Chains over
 * them then fold with the `fold` pass, and Reshape targets built from
 * shapes become constants.
 */
#include <string.h>

#include "passes/passes.h"
#include "analysis/known.h"

/* Elements of a folded value: shapes, scales and the like, which add a
 * few bytes (a larger proved value is left to `fold` and its size bound). */
#define OPT_FS_MAX_ELEMS 64

/* Folds k's single output when inference proved it; 1, 0 or -1. */
static int opt_fs_node(OptCtx *c, IrNode *k)
{
    if ((k->domain && k->domain[0]) || k->n_out != 1 || !strcmp(k->op_type, "Constant"))
        return 0;
    const IrTensor *t = kv_proved(k->out[0]);
    uint64_t n = 1;
    for (size_t i = 0; t && i < t->ndims && n <= OPT_FS_MAX_ELEMS; i++)
        n = t->dims[i] < 0 ? OPT_FS_MAX_ELEMS + 1 : n * (uint64_t)t->dims[i];
    if (!t || !t->has_raw || n > OPT_FS_MAX_ELEMS || !opt_can_place_const(c, t->data_type))
        return 0;
    IrTensor *copy = ir_tensor_new(NULL, t->data_type, t->ndims, t->dims, t->raw.data,
                                   t->raw.len);
    if (opt_replace_by_const(c, k, 0, copy) < 0)
        return -1;
    ir_node_delete(k);
    return 1;
}

static long opt_fs_run(OptCtx *c)
{
    return opt_each_node(c, opt_fs_node);
}

const OptPass opt_pass_fold_shapes = {
    "fold_shapes", "replaces Shape, Size and small values inference proved from static "
    "shapes by constants", true, OPT_NEEDS_TYPES, opt_fs_run,
};
