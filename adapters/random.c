/*
 * random.c - adapters of the random ops (Bernoulli, Multinomial,
 * RandomNormal[Like], RandomUniform[Like]).
 *
 * The random ops changed only their type lists (22 added bfloat16); their
 * draws cannot be compared, so an expansion is judged by its distribution.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- Bernoulli below 15 ------------------------------------------------ */

/* Bernoulli-15 below opset 15: the spec's construction, u =
 * RandomUniformLike(input) in [0, 1), output = Cast(u < p) to `dtype`
 * (default: the input's type). The comparison gives 1 with probability p,
 * as the op's text says (the spec's function body compares the other way
 * round and would give 1 - p). The draw is taken in double, so that
 * P(u < p) is p for every input type (a float16 draw would be coarser
 * than p). Built in opset-14 forms, lowered by the driver. */
static int ad_bernoulli_below_15(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    int32_t t = ad_elem(x);
    if (!t)
        return ad_refuse(c, DG_TYPE_UNKNOWN,
                         "the input's type is unknown; the output type defaults to it");
    int64_t to = ad_attr_i_or(c, "dtype", t);
    c->build_opset = 14;
    IrNode *u = ad_node_in(c, c->domain, c->n, "RandomUniformLike", 1, &x, 1);
    if (!u)
        return -1;
    ad_set_attr_i(c, u, "dtype", IR_DOUBLE);
    ad_set_attr_f(c, u, "low", 0.0f);
    ad_set_attr_f(c, u, "high", 1.0f);
    const IrAttr *seed = ad_attr(c, "seed");
    if (seed && seed->has_f)
        ad_set_attr_f(c, u, "seed", seed->f);
    if (ad_infer(c, u) < 0)
        return -1;
    IrValue *p = x;
    if (t != IR_DOUBLE) {
        IrNode *cp = ad_node_in(c, c->domain, c->n, "Cast", 1, &x, 1);
        if (!cp)
            return -1;
        ad_set_attr_i(c, cp, "to", IR_DOUBLE);
        if (ad_infer(c, cp) < 0)
            return -1;
        p = cp->out[0];
    }
    IrValue *in[2] = {u->out[0], p};
    IrNode *lt = ad_node(c, c->n, "Less", 2, in, 1);
    if (!lt)
        return -1;
    IrNode *y = ad_node_in(c, c->domain, c->n, "Cast", 1, lt->out, 1);
    if (!y)
        return -1;
    ad_set_attr_i(c, y, "to", to);
    if (ad_infer(c, y) < 0)
        return -1;
    ad_replace(c, y);
    return 0;
}

static const AdEntry ad_random[] = {
    /* random ops: 22 added bfloat16 */
    AD_GONE("Bernoulli", 15, AD_EXPAND, ad_bernoulli_below_15),
    AD_BOTH("Bernoulli", 15, 22),
    AD_BOTH("Multinomial", 7, 22),
    AD_BOTH("RandomNormal", 1, 22),
    AD_BOTH("RandomNormalLike", 1, 22),
    AD_BOTH("RandomUniform", 1, 22),
    AD_BOTH("RandomUniformLike", 1, 22),
};

const AdFamily ad_family_random = {"random", ad_random, sizeof ad_random / sizeof ad_random[0]};
