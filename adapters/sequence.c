/*
 * sequence.c - adapters of the sequence and optional ops (SplitToSequence,
 * OptionalGetElement, OptionalHasElement).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

/* ---- optional ops --------------------------------------------------- */

/* Whether v's type is known and not an optional. */
static bool ad_ct_plain(const IrValue *v)
{
    const IrType *t = ad_type(v);
    return t && (t->kind == IR_TYPE_TENSOR || t->kind == IR_TYPE_SEQUENCE);
}

/* OptionalGetElement 18 -> 15: 18 also takes a plain tensor or sequence,
 * which it returns unchanged: that is Identity. An optional input stays. */
static int ad_oge_18_15(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    if (!x || !ad_ct_plain(x))
        return 0;
    IrValue *in[1] = {x};
    IrNode *k = ad_node(c, c->n, "Identity", 1, in, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

/* OptionalHasElement 18 -> 15: 18 makes the input optional (left out:
 * false) and takes plain tensors and sequences (always true); in both
 * cases the answer is a constant. */
static int ad_ohe_18_15(AdCtx *c)
{
    IrValue *x = ad_in(c, 0);
    if (x && !ad_ct_plain(x))
        return 0;
    IrValue *k0 = ad_const_scalar(c, IR_BOOL, x ? 1.0 : 0.0);
    if (!k0)
        return -1;
    IrValue *in[1] = {k0};
    IrNode *k = ad_node(c, c->n, "Identity", 1, in, 1);
    if (!k)
        return -1;
    ad_replace(c, k);
    return 0;
}

static const AdEntry ad_sequence[] = {
    AD_BOTH("SplitToSequence", 11, 24),
    {"", "OptionalGetElement", 15, 18, AD_COMPATIBLE, NULL},
    AD_DOWN("OptionalGetElement", 15, 18, AD_RENAME, ad_oge_18_15),
    {"", "OptionalHasElement", 15, 18, AD_ATTRS, ad_nothing},
    AD_DOWN("OptionalHasElement", 15, 18, AD_SEMANTIC, ad_ohe_18_15),
};

const AdFamily ad_family_sequence = {"sequence", ad_sequence,
                                     sizeof ad_sequence / sizeof ad_sequence[0]};
