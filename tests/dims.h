/*
 * dims.h - a shape as text for test messages (prefix dims_).
 */
#ifndef OC_DIMS_H
#define OC_DIMS_H

#include <stdio.h>

#include "ir/ir.h"

/* Writes the dims of s as "2,N,?" (a number, a symbol, or ? unknown). */
static inline void dims_text(const IrShape *s, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < s->rank && at < cap; k++) {
        const IrDim *d = &s->dims[k];
        const char *sep = k ? "," : "";
        if (d->kind == IR_DIM_VALUE)
            at += (size_t)snprintf(buf + at, cap - at, "%s%lld", sep, (long long)d->value);
        else if (d->kind == IR_DIM_PARAM)
            at += (size_t)snprintf(buf + at, cap - at, "%s%s", sep, d->param);
        else
            at += (size_t)snprintf(buf + at, cap - at, "%s?", sep);
    }
}

#endif
