/*
 * infer/misc.c - inference of the ops that fit no other family:
 * NonMaxSuppression, TfIdfVectorizer and ImageDecoder.
 */
#include "analysis/infer.h"

#include <stdlib.h>
#include <string.h>

/* NonMaxSuppression: [num_selected, 3]; how many are selected is known
 * only at run time. */
static int inf_nms(InfCtx *c)
{
    IrShape *s = inf_out_shape(c, 0, 2);
    if (s)
        inf_dim_set(&s->dims[1], 3);
    return 0;
}

/* TfIdfVectorizer: [C] -> [D] or [N, C] -> [N, D], D = max(ngram_indexes)+1. */
static int inf_tfidf(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    if (in->rank != 1 && in->rank != 2)
        return inf_fail(c, "rank", "input must have rank 1 or 2, has %zu", in->rank);
    IrShape *s = inf_out_shape(c, 0, in->rank);
    if (!s)
        return 0;
    if (in->rank == 2)
        inf_dim_copy(&s->dims[0], &in->dims[0]);
    const int64_t *idx;
    long n = inf_attr_ints(c, "ngram_indexes", &idx);
    int64_t max = -1;
    for (long k = 0; k < n; k++)
        if (idx[k] > max)
            max = idx[k];
    if (n > 0 && max >= 0 && max < INT64_MAX)
        inf_dim_set(&s->dims[in->rank - 1], max + 1);
    return 0;
}

/* ImageDecoder: an image [H, W, C], every dim known only after decoding
 * (an undecodable stream gives an empty one). */
static int inf_image_decoder(InfCtx *c)
{
    inf_out_shape(c, 0, 3);
    return 0;
}

const InfOp inf_ops_misc[] = {
    {"", "NonMaxSuppression", inf_nms},
    {"", "TfIdfVectorizer", inf_tfidf}, {"", "ImageDecoder", inf_image_decoder},
    {NULL, NULL, NULL}};
