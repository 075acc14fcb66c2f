/*
 * infer/random.c - inference of the random generators: RandomNormal and
 * RandomUniform (shape and dtype from attributes), their *Like forms and
 * Bernoulli (shaped like the input), and Multinomial.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* RandomNormal, RandomUniform: shape and dtype (default float) from
 * attributes. */
static int inf_random(InfCtx *c)
{
    int32_t dt = inf_dtype_attr(c, "dtype");
    if (dt < 0)
        return -1;
    inf_out_elem(c, 0, dt);
    const int64_t *dims;
    long n = inf_attr_ints(c, "shape", &dims);
    if (n < 0)
        return 0;
    for (long k = 0; k < n; k++)
        if (dims[k] < 0)
            return inf_fail(c, "attribute", "shape[%ld] is negative (%lld)", k,
                            (long long)dims[k]);
    IrShape *s = inf_out_shape(c, 0, (size_t)n);
    for (long k = 0; s && k < n; k++)
        inf_dim_set(&s->dims[k], dims[k]);
    return 0;
}

/* RandomNormalLike, RandomUniformLike, Bernoulli: the input's shape;
 * element type from dtype, else the input's. */
static int inf_random_like(InfCtx *c)
{
    int32_t dt = inf_dtype_attr(c, "dtype");
    if (dt < 0)
        return -1;
    if (dt == 0)
        dt = inf_in_elem(c, 0);
    if (dt)
        inf_out_elem(c, 0, dt);
    return inf_same_as_input(c, 0);
}

/* Multinomial: [batch_size, class_size] -> [batch_size, sample_size],
 * element type from dtype (default int32). */
static int inf_multinomial(InfCtx *c)
{
    int32_t dt = inf_dtype_attr(c, "dtype");
    if (dt < 0)
        return -1;
    inf_out_elem(c, 0, dt);
    const IrShape *in = inf_in_shape(c, 0);
    if (in && in->rank != 2)
        return inf_fail(c, "rank", "input must have rank 2, has %zu", in->rank);
    IrShape *s = inf_out_shape(c, 0, 2);
    if (!s)
        return 0;
    if (in)
        inf_dim_copy(&s->dims[0], &in->dims[0]);
    int64_t n = inf_attr_i(c, "sample_size");
    if (n >= 0)
        inf_dim_set(&s->dims[1], n);
    return 0;
}

const InfOp inf_ops_random[] = {
    {"", "RandomNormal", inf_random},
    {"", "RandomUniform", inf_random},
    {"", "RandomNormalLike", inf_random_like},
    {"", "RandomUniformLike", inf_random_like},
    {"", "Bernoulli", inf_random_like},
    {"", "Multinomial", inf_multinomial},
    {NULL, NULL, NULL}};
