/*
 * infer/activation.c - inference of the activation family: the
 * elementwise activations (output shaped like the input), PRelu (slope
 * broadcast to X), Softmax/LogSoftmax/Hardmax (the axis must fit the
 * rank) and SwiGLU. Element types come from the generic step.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* PRelu: slope broadcasts to X (unidirectionally from opset 7). */
static int inf_prelu(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

/* SwiGLU (opset 28): Swish(A) * B, so the broadcast of A and B. */
static int inf_swiglu(InfCtx *c)
{
    const IrShape *a = inf_in_shape(c, 0), *b = inf_in_shape(c, 1);
    if (!a || !b)
        return 0;
    const IrShape *parts[2] = {a, b};
    IrShape *o;
    if (inf_broadcast(c, parts, 2, &o) < 0)
        return -1;
    inf_out_copy(c, 0, o);
    ir_shape_free(o);
    return 0;
}

const InfOp inf_ops_activation[] = {
    {"", "PRelu", inf_prelu},
    {"", "Celu", inf_unary},
    {"", "Elu", inf_unary},
    {"", "Gelu", inf_unary},
    {"", "HardSigmoid", inf_unary},
    {"", "HardSwish", inf_unary},
    {"", "LeakyRelu", inf_unary},
    {"", "Mish", inf_unary},
    {"", "Relu", inf_unary},
    {"", "Selu", inf_unary},
    {"", "Sigmoid", inf_unary},
    {"", "Softplus", inf_unary},
    {"", "Softsign", inf_unary},
    {"", "Swish", inf_unary},
    {"", "ThresholdedRelu", inf_unary},
    {"", "Softmax", inf_axis_same},
    {"", "LogSoftmax", inf_axis_same},
    {"", "Hardmax", inf_axis_same},
    {"", "SwiGLU", inf_swiglu},
    {NULL, NULL, NULL}};
