/*
 * infer/training.c - inference of the ai.onnx.preview.training ops:
 * Adagrad, Adam, Momentum (each output group shaped like its input
 * group) and Gradient.
 */
#include "analysis/infer.h"

#include <stdlib.h>
#include <string.h>

/* Output o gets the tensor type (element type and shape) of input i. */
static void inf_copy_in_to_out(InfCtx *c, size_t o, size_t i)
{
    const IrType *t = inf_in(c, i);
    if (!t || t->kind != IR_TYPE_TENSOR || !inf_has_out(c, o))
        return;
    inf_out_elem(c, o, inf_in_elem(c, i));
    inf_out_shape_of(c, o, i);
}

/* Adagrad, Adam, Momentum: inputs R, T, then n_groups groups of n tensors
 * (X, G, ...); each output group mirrors the input group out_groups[g]. */
static int inf_optimizer(InfCtx *c, size_t n_groups, const size_t *out_groups,
                         size_t n_out_groups)
{
    size_t n_in = inf_n_in(c);
    if (n_in < 2 || (n_in - 2) % n_groups != 0)
        return inf_fail(c, "arity", "expected R, T and %zu groups of equal size, "
                        "got %zu inputs", n_groups, n_in);
    size_t n = (n_in - 2) / n_groups;
    if (inf_n_out(c) > n * n_out_groups)
        return inf_fail(c, "arity", "%zu outputs for %zu optimized tensors (at most %zu)",
                        inf_n_out(c), n, n * n_out_groups);
    for (size_t o = 0; o < inf_n_out(c); o++)
        inf_copy_in_to_out(c, o, 2 + out_groups[o / n] * n + o % n);
    return 0;
}

/* Adagrad: (X, G, H) -> (X_new, H_new). */
static int inf_adagrad(InfCtx *c)
{
    static const size_t g[] = {0, 2};
    return inf_optimizer(c, 3, g, 2);
}

/* Adam: (X, G, V, H) -> (X_new, V_new, H_new). */
static int inf_adam(InfCtx *c)
{
    static const size_t g[] = {0, 2, 3};
    return inf_optimizer(c, 4, g, 3);
}

/* Momentum: (X, G, V) -> (X_new, V_new). */
static int inf_momentum(InfCtx *c)
{
    static const size_t g[] = {0, 2};
    return inf_optimizer(c, 3, g, 2);
}

/* Gradient: output i is the gradient with respect to xs[i], which the
 * i-th input feeds: same type and shape. */
static int inf_gradient(InfCtx *c)
{
    const IrAttr *xs = inf_attr(c, "xs");
    size_t n = xs ? xs->n_strings : 0;
    for (size_t o = 0; o < inf_n_out(c) && o < n && o < inf_n_in(c); o++)
        inf_copy_in_to_out(c, o, o);
    return 0;
}

const InfOp inf_ops_training[] = {
    {"ai.onnx.preview.training", "Adagrad", inf_adagrad},
    {"ai.onnx.preview.training", "Adam", inf_adam},
    {"ai.onnx.preview.training", "Momentum", inf_momentum},
    {"ai.onnx.preview.training", "Gradient", inf_gradient},
    {NULL, NULL, NULL}};
