/*
 * infer/string.c - inference of the string ops: StringNormalizer,
 * StringSplit, StringConcat (broadcast) and RegexFullMatch (same shape).
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* StringNormalizer: [C] or [1, C]. Without stopwords nothing is dropped
 * and the shape stays (for C > 0); with them C' is unknown. */
static int inf_strnorm(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    if (in->rank != 1 && in->rank != 2)
        return inf_fail(c, "rank", "input must be [C] or [1, C], has rank %zu", in->rank);
    if (in->rank == 2 && inf_dim_known(&in->dims[0]) && in->dims[0].value != 1)
        return inf_fail(c, "shape", "input must be [1, C], has %lld rows",
                        (long long)in->dims[0].value);
    const IrAttr *sw = inf_attr(c, "stopwords");
    const IrDim *cd = &in->dims[in->rank - 1];
    IrShape *s = inf_out_shape(c, 0, in->rank);
    if (!s)
        return 0;
    if (in->rank == 2)
        inf_dim_set(&s->dims[0], 1);
    if ((!sw || sw->n_strings == 0) && inf_dim_known(cd) && cd->value > 0)
        inf_dim_copy(&s->dims[in->rank - 1], cd);
    return 0;
}

/* StringSplit: substrings have the input's shape plus one dim (the
 * largest split count, unknown); lengths have the input's shape. */
static int inf_strsplit(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    IrShape *s = inf_out_shape(c, 0, in->rank + 1);
    for (size_t k = 0; s && k < in->rank; k++)
        inf_dim_copy(&s->dims[k], &in->dims[k]);
    inf_out_shape_of(c, 1, 0);
    return 0;
}

/* RegexFullMatch and other elementwise string maps: the input's shape. */
static int inf_same_shape(InfCtx *c)
{
    return inf_same_as_input(c, 0);
}

const InfOp inf_ops_string[] = {
    {"", "StringNormalizer", inf_strnorm},
    {"", "StringSplit", inf_strsplit},
    {"", "StringConcat", inf_bcast_all},
    {"", "RegexFullMatch", inf_same_shape},
    {NULL, NULL, NULL}};
