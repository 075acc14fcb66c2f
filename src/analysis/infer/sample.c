/*
 * infer/sample.c - inference of GridSample and AffineGrid.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* GridSample: X [N, C, D1..Dr] and grid [N, O1..Or, r] give
 * [N, C, O1..Or]. */
static int inf_gridsample(InfCtx *c)
{
    const IrShape *x = inf_in_shape(c, 0), *g = inf_in_shape(c, 1);
    if (x && x->rank < 3)
        return inf_fail(c, "rank", "X has rank %zu; needs N, C and spatial axes",
                        x->rank);
    if (x && g && g->rank != x->rank)
        return inf_fail(c, "rank", "grid has rank %zu, X %zu", g->rank, x->rank);
    const IrShape *r = x ? x : g;
    if (!r || r->rank < 3)
        return 0;
    IrShape *o = inf_out_shape(c, 0, r->rank);
    if (!o)
        return 0;
    inf_dim_copy(&o->dims[0], x ? &x->dims[0] : &g->dims[0]);
    if (x)
        inf_dim_copy(&o->dims[1], &x->dims[1]);
    for (size_t k = 2; g && k < r->rank; k++)
        inf_dim_copy(&o->dims[k], &g->dims[k - 1]);
    return 0;
}

/* AffineGrid: theta [N, 2, 3] and size (N, C, H, W) give [N, H, W, 2];
 * theta [N, 3, 4] and size (N, C, D, H, W) give [N, D, H, W, 3]. */
static int inf_affinegrid(InfCtx *c)
{
    const IrShape *th = inf_in_shape(c, 0), *sz = inf_in_shape(c, 1);
    const IrShape *sv = inf_in_symval(c, 1);
    if (inf_need_rank(c, 0, 3, "theta") < 0)
        return -1;
    long n = -1;
    if (sv)
        n = (long)sv->rank;
    else if (sz && sz->rank == 1 && inf_dim_known(&sz->dims[0]))
        n = (long)sz->dims[0].value;
    else if (th && inf_dim_known(&th->dims[1]) && (th->dims[1].value == 2 ||
                                                   th->dims[1].value == 3))
        n = (long)th->dims[1].value + 2;
    if (n < 0)
        return 0;
    if (n != 4 && n != 5)
        return inf_fail(c, "shape", "size has %ld values; needs 4 (2-D) or 5 (3-D)", n);
    IrShape *o = inf_out_shape(c, 0, (size_t)n);
    if (!o)
        return 0;
    if (sv)
        inf_dim_copy(&o->dims[0], &sv->dims[0]);
    if (!inf_dim_known(&o->dims[0]) && th)
        inf_dim_copy(&o->dims[0], &th->dims[0]);
    for (size_t k = 2; sv && k < (size_t)n; k++)
        inf_dim_copy(&o->dims[k - 1], &sv->dims[k]);
    inf_dim_set(&o->dims[(size_t)n - 1], n - 2);
    return 0;
}

const InfOp inf_ops_sample[] = {
    {"", "GridSample", inf_gridsample},
    {"", "AffineGrid", inf_affinegrid},
    {NULL, NULL, NULL}};
