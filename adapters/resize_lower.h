/*
 * resize_lower.h - what adapters/resize.c and adapters/resize_lower.c (the
 * resize family) share: the lowering of a Resize node into constant
 * interpolation tables, and two readers of a Resize node.
 */
#ifndef OC_RESIZE_LOWER_H
#define OC_RESIZE_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "adapters/adapters.h"

/* Replaces the Resize node c->n (any version, 10 to 19) by Gather / Mul /
 * ReduceSum (and Where for tf_crop_and_resize) over constant index and
 * weight tables, built for c->build_opset, which compute what the node
 * computes. Needs X's static shape and known scales or sizes (and roi for
 * tf_crop_and_resize). `why` says why the target's own Resize or Upsample
 * cannot express the node; a refusal names it. 0, or -1 after refusing. */
int ad_rs_lower(AdCtx *c, const char *why);

/* Which of scales (input 2) and sizes (input 3) a Resize-11+ node uses:
 * 2 or 3, or -1 after refusing. */
int ad_rs_which(AdCtx *c);

/* The normalized axes attribute of c->n (NULL when absent or all axes in
 * order; caller frees); *n its length. Refuses (NULL, *bad set) on bad
 * axes or an unknown rank. */
int64_t *ad_rs_axes(AdCtx *c, int r, size_t *n, bool *bad);

#endif
