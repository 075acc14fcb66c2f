/*
 * input_shape.c - `--input-shape name=1,3,224,224`: makes the dynamic
 * dimensions of a graph input static, so that shapes downstream become
 * known and more of the graph folds.
 *
 * This is the one change to a graph's interface the optimizer makes, and
 * only on request: the model then accepts only inputs of that shape.
 * Dimensions the model already fixes must agree with the request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

#define OPT_IS_MAX_DIM (INT64_C(1) << 40)

/* Parses "1,3,224,224" (at most 64 dims) into d; false when malformed. */
static bool opt_is_parse(const char *s, int64_t *d, size_t *rank)
{
    *rank = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 0 || v > OPT_IS_MAX_DIM || *rank == 64 ||
            (*end && *end != ','))
            return false;
        d[(*rank)++] = v;
        s = *end ? end + 1 : end;
        if (*end && !*s)
            return false;
    }
    return true;    /* "" is a scalar */
}

/* The main graph's input named name (len bytes), or NULL. */
static IrValueInfo *opt_is_input(IrModel *m, const char *name, size_t len)
{
    for (size_t i = 0; m->graph && i < m->graph->inputs.n; i++) {
        IrValueInfo *vi = m->graph->inputs.p[i];
        if (strlen(vi->value->name) == len && !strncmp(vi->value->name, name, len))
            return vi;
    }
    return NULL;
}

int opt_set_input_shape(IrModel *m, const char *spec, IrError *err)
{
    const char *eq = strchr(spec, '=');
    int64_t d[64];
    size_t rank;
    if (!eq || eq == spec || !opt_is_parse(eq + 1, d, &rank))
        return ir_fail(err, "--input-shape '%s': expected NAME=D1,D2,... with dims 0..2^40",
                       spec);
    int nl = (int)(eq - spec);
    IrValueInfo *vi = opt_is_input(m, spec, (size_t)(eq - spec));
    if (!vi)
        return ir_fail(err, "--input-shape: the model has no graph input '%.*s'", nl, spec);
    IrType *t = vi->type;
    if (!t || t->kind != IR_TYPE_TENSOR)
        return ir_fail(err, "--input-shape: input '%.*s' is not a tensor", nl, spec);
    if (t->shape && t->shape->rank != rank)
        return ir_fail(err, "--input-shape: input '%.*s' has rank %zu, not %zu", nl, spec,
                       t->shape->rank, rank);
    for (size_t i = 0; t->shape && i < rank; i++)
        if (t->shape->dims[i].kind == IR_DIM_VALUE && t->shape->dims[i].value != d[i])
            return ir_fail(err, "--input-shape: input '%.*s' has dimension %zu fixed to %lld, "
                           "not %lld", nl, spec, i, (long long)t->shape->dims[i].value,
                           (long long)d[i]);
    IrShape *s = ir_shape_new(rank);
    for (size_t i = 0; i < rank; i++) {
        s->dims[i].kind = IR_DIM_VALUE;
        s->dims[i].value = d[i];
        if (t->shape && t->shape->dims[i].denotation)
            s->dims[i].denotation = mem_strdup(t->shape->dims[i].denotation);
    }
    ir_shape_free(t->shape);
    t->shape = s;
    return 0;
}
