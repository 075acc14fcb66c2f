/*
 * verify.c - evaluate two models on the same inputs and compare.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "verify.h"

/* A small deterministic generator (splitmix64). */
static uint64_t vf_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A random tensor of the declared type: floats in [-1, 1), integers in
 * [0, 4), booleans either way. Symbolic or unknown dims get dim_default. */
static EvValue *vf_random_input(const IrValueInfo *vi, const VfOptions *o,
                                uint64_t *seed, IrError *err)
{
    const IrType *t = vi->type;
    if (!t || t->kind != IR_TYPE_TENSOR || !t->has_elem_type || !t->shape) {
        ir_fail(err, "input '%s': random inputs need a tensor type with a rank",
                vi->value->name);
        return NULL;
    }
    int64_t dims[EV_MAX_RANK];
    if (t->shape->rank > EV_MAX_RANK) {
        ir_fail(err, "input '%s': rank too large", vi->value->name);
        return NULL;
    }
    for (size_t k = 0; k < t->shape->rank; k++) {
        const IrDim *d = &t->shape->dims[k];
        dims[k] = d->kind == IR_DIM_VALUE ? d->value : o->dim_default;
    }
    EvValue *v = ev_tensor_new(t->elem_type, t->shape->rank, dims, err);
    if (!v)
        return NULL;
    for (size_t k = 0; k < v->numel; k++) {
        uint64_t r = vf_next(seed);
        if (ev_dtype_is_float(t->elem_type))
            ev_set_f(v, k, (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        else if (t->elem_type == 8)
            ;   /* strings stay empty */
        else
            ev_set_i(v, k, (int64_t)(r % 4));
    }
    return v;
}

/* The inputs both models get: read from o->inputs_dir, or random. */
static int vf_inputs(IrModel *m, const VfOptions *o, EvValue ***in, size_t *n,
                     IrError *err)
{
    if (o->inputs_dir)
        return ev_inputs_read(m, o->inputs_dir, in, n, err);
    IrValueInfo **feeds;
    size_t nf = ev_model_feeds(m, &feeds);
    *in = ir_alloc_array(nf ? nf : 1, sizeof **in);
    *n = nf;
    uint64_t seed = o->seed ? o->seed : 1;
    for (size_t i = 0; i < nf; i++) {
        (*in)[i] = vf_random_input(feeds[i], o, &seed, err);
        if (!(*in)[i]) {
            for (size_t k = 0; k < i; k++)
                ev_unref((*in)[k]);
            free(*in);
            free(feeds);
            return -1;
        }
    }
    free(feeds);
    return 0;
}

int vf_compare(IrModel *before, IrModel *after, const VfOptions *o, IrError *err)
{
    VfOptions d = *o;
    if (d.dim_default <= 0)
        d.dim_default = 2;
    if (d.rtol <= 0)
        d.rtol = 1e-3;
    if (d.atol <= 0)
        d.atol = 1e-5;
    EvValue **in, **out_a = NULL, **out_b = NULL;
    size_t n_in, n_a = 0, n_b = 0;
    /* `after` may declare more specific input shapes (--input-shape) */
    if (vf_inputs(after, &d, &in, &n_in, err) < 0)
        return -1;
    EvOptions eo = {.seed = d.seed};
    IrError e;
    int rc = 0;
    if (ev_model_run(before, &eo, n_in, in, &out_a, &n_a, &e) < 0)
        rc = ir_fail(err, "verify: the original model does not run: %s", e.msg);
    else if (ev_model_run(after, &eo, n_in, in, &out_b, &n_b, &e) < 0)
        rc = ir_fail(err, "verify: the converted model does not run: %s", e.msg);
    else if (n_a != n_b)
        rc = ir_fail(err, "verify: %zu outputs before, %zu after", n_a, n_b) - 1;
    for (size_t i = 0; rc == 0 && i < n_a; i++) {
        char why[256];
        if (!ev_value_equal(out_b[i], out_a[i], d.rtol, d.atol, why, sizeof why)) {
            const IrValueInfo *vi = after->graph->outputs.p[i];
            rc = ir_fail(err, "verify: output '%s' differs after conversion: %s",
                         vi->value->name, why) - 1;
        }
    }
    ev_values_free(in, n_in);
    ev_values_free(out_a, n_a);
    ev_values_free(out_b, n_b);
    return rc;
}
