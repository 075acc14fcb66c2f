/*
 * infer/norm.c - inference of the normalizations: BatchNormalization
 * (with its running and saved statistics), LayerNormalization and
 * RMSNormalization (with stash_type), and the ops shaped like their input
 * (InstanceNormalization, GroupNormalization, LRN, LpNormalization,
 * MeanVarianceNormalization).
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* BatchNormalization: Y like X; the running / saved statistics outputs
 * are shaped like the mean and var inputs, else [C] when the statistics
 * are per channel (spatial, always from opset 9). */
static int inf_batchnorm(InfCtx *c)
{
    inf_out_shape_of(c, 0, 0);
    const IrShape *x = inf_in_shape(c, 0);
    bool spatial = c->since >= 9 || inf_attr_i(c, "spatial") != 0;
    for (size_t o = 1; o < inf_n_out(c) && o < 5; o++) {
        size_t src = (o == 1 || o == 3) ? 3 : 4;
        if (!inf_has_out(c, o))
            continue;
        if (inf_in_shape(c, src)) {
            inf_out_shape_of(c, o, src);
        } else if (spatial && x && x->rank >= 2) {
            IrShape *s = inf_out_shape(c, o, 1);
            if (s)
                inf_dim_copy(&s->dims[0], &x->dims[1]);
        }
    }
    return 0;
}

/* LayerNormalization: Y like X; Mean and InvStdDev like X with the
 * normalized axes (axis..end) set to 1, their type from stash_type. */
static int inf_layernorm(InfCtx *c)
{
    int64_t stash = inf_attr_i(c, "stash_type");
    if (stash > 0 && stash <= INT32_MAX && ir_dtype_name((int32_t)stash)) {
        inf_out_elem(c, 1, (int32_t)stash);
        inf_out_elem(c, 2, (int32_t)stash);
    }
    const IrShape *x = inf_in_shape(c, 0);
    if (!x)
        return 0;
    int ax;
    if (inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)x->rank, 0, &ax) < 0)
        return -1;
    inf_out_shape_of(c, 0, 0);
    for (size_t o = 1; o < 3; o++) {
        IrShape *s = inf_out_shape(c, o, x->rank);
        for (size_t k = 0; s && k < x->rank; k++) {
            if ((int)k < ax)
                inf_dim_copy(&s->dims[k], &x->dims[k]);
            else
                inf_dim_set(&s->dims[k], 1);
        }
    }
    return 0;
}

/* RMSNormalization: Y like X (its type V comes from scale). */
static int inf_rmsnorm(InfCtx *c)
{
    if (inf_check_axis(c, 0) < 0)
        return -1;
    return inf_same_as_input(c, 0);
}

const InfOp inf_ops_norm[] = {
    {"", "BatchNormalization", inf_batchnorm},
    {"", "InstanceNormalization", inf_same},
    {"", "LayerNormalization", inf_layernorm},
    {"", "GroupNormalization", inf_same},
    {"", "RMSNormalization", inf_rmsnorm},
    {"", "LRN", inf_same},
    {"", "LpNormalization", inf_axis_same},
    {"", "MeanVarianceNormalization", inf_same},
    {NULL, NULL, NULL}};
