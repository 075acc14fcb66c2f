/*
 * fold_shapes.c - shape-only folding: integer values that depend only on
 * static shapes become constants, even when the tensors they measure are
 * not constant.
 *
 * Shape(x) and Size(x) of an x whose inferred shape is fully static, and
 * any integer node output whose every element inference proved to be a
 * number (IrValue.symval: Gather of a Shape, Concat of such, arithmetic on
 * them), are replaced by constants. Chains over them then fold with the
 * `fold` pass, and Reshape targets built from shapes become constants.
 */
#include <string.h>

#include "passes.h"

/* The static dims of a tensor type (false when not all known). */
static bool opt_fs_dims(const IrType *t, int64_t *d, size_t cap, size_t *rank)
{
    if (!t || t->kind != IR_TYPE_TENSOR || !t->shape || t->shape->rank > cap)
        return false;
    *rank = t->shape->rank;
    for (size_t i = 0; i < *rank; i++) {
        if (t->shape->dims[i].kind != IR_DIM_VALUE || t->shape->dims[i].value < 0)
            return false;
        d[i] = t->shape->dims[i].value;
    }
    return true;
}

/* The elements of output 0 when every one is known: from symval, checked
 * against the output's static type (int32 or int64, rank 0 or 1). */
static bool opt_fs_symval(const IrValue *v, int64_t *e, size_t cap, size_t *n, int32_t *dt)
{
    int64_t d[1];
    size_t rank;
    const IrType *t = v->type;
    if (!v->symval || !opt_fs_dims(t, d, 1, &rank) || !t->has_elem_type ||
        (t->elem_type != 7 && t->elem_type != 6))
        return false;
    size_t numel = rank ? (size_t)d[0] : 1;
    if (numel != v->symval->rank || numel > cap)
        return false;
    for (size_t i = 0; i < numel; i++) {
        if (v->symval->dims[i].kind != IR_DIM_VALUE)
            return false;
        e[i] = v->symval->dims[i].value;
    }
    *n = numel;
    *dt = t->elem_type;
    return true;
}

/* A constant [n] (or scalar when !vec) of int64 or int32 elements. */
static IrTensor *opt_fs_tensor(const int64_t *e, size_t n, bool vec, int32_t dt)
{
    int64_t dim = (int64_t)n;
    if (dt == 7)
        return ir_tensor_new(NULL, 7, vec, &dim, e, n * sizeof *e);
    int32_t v32[64];
    for (size_t i = 0; i < n; i++)
        v32[i] = (int32_t)e[i];
    return ir_tensor_new(NULL, 6, vec, &dim, v32, n * sizeof *v32);
}

/* Folds k's single output when its elements are known; 1, 0 or -1. */
static int opt_fs_node(OptCtx *c, IrNode *k)
{
    if ((k->domain && k->domain[0]) || k->n_out != 1 || !k->out[0] ||
        !strcmp(k->op_type, "Constant"))
        return 0;
    int64_t e[64];
    size_t n = 0, rank;
    int32_t dt = 7;
    IrValue *v = k->out[0];
    bool vec = true;
    if (!strcmp(k->op_type, "Size") && k->n_in == 1 && opt_fs_dims(k->in[0] ? k->in[0]->type : NULL, e, 64, &rank)) {
        int64_t p = 1;
        for (size_t i = 0; i < rank; i++)
            p = e[i] && p > INT64_MAX / e[i] ? -1 : p * e[i];
        if (p < 0)
            return 0;
        e[0] = p, n = 1, vec = false;
    } else if (opt_fs_symval(v, e, 64, &n, &dt)) {
        vec = v->type->shape->rank == 1;
    } else {
        return 0;
    }
    if (!opt_can_place_const(c, dt))
        return 0;
    if (opt_replace_by_const(c, k, 0, opt_fs_tensor(e, n, vec, dt)) < 0)
        return -1;
    ir_node_delete(k);
    return 1;
}

static long opt_fs_run(OptCtx *c)
{
    return opt_each_node(c, opt_fs_node);
}

const OptPass opt_pass_fold_shapes = {
    "fold_shapes", "replaces Shape, Size and integer values computed from static shapes "
    "by constants", true, OPT_NEEDS_TYPES, opt_fs_run,
};
