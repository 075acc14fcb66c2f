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

/* The dims a random input gets: declared values as they are, open
 * (symbolic or unknown) ones `open`. Its size in bytes, or UINT64_MAX when
 * that overflows. */
static uint64_t vf_dims(const IrType *t, int64_t open, int64_t *dims)
{
    uint64_t n = ev_dtype_size(t->elem_type);
    for (size_t k = 0; k < t->shape->rank; k++) {
        const IrDim *d = &t->shape->dims[k];
        dims[k] = d->kind == IR_DIM_VALUE ? d->value : open;
        if (dims[k] < 0)
            return UINT64_MAX;
        if (n && dims[k] && (uint64_t)dims[k] > UINT64_MAX / n)
            n = UINT64_MAX;
        else
            n *= (uint64_t)dims[k];
    }
    return n;
}

/* "[100000,3,32,32]" into buf. */
static const char *vf_dims_text(const int64_t *dims, size_t rank, char *buf,
                                size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (size_t k = 0; k < rank && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", k ? "," : "",
                                (long long)dims[k]);
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
    return buf;
}

/* Picks the dims of a random input within *left bytes (open dims
 * dim_default, else 1), taking its size off *left; refuses naming the
 * input, and what would make it fit, when even that is too large. */
static int vf_pick_dims(const IrValueInfo *vi, const VfOptions *o,
                        uint64_t *left, int64_t *dims, IrError *err)
{
    const IrType *t = vi->type;
    uint64_t bytes = vf_dims(t, o->dim_default, dims);
    bool open = false;
    for (size_t k = 0; k < t->shape->rank; k++)
        open |= t->shape->dims[k].kind != IR_DIM_VALUE;
    if (bytes > *left && open)
        bytes = vf_dims(t, 1, dims);
    if (bytes <= *left) {
        *left -= bytes;
        return 0;
    }
    char shape[256], need[32], max[32];
    const char *name = vi->value->name;
    vf_dims_text(dims, t->shape->rank, shape, sizeof shape);
    ev_fmt_bytes(bytes, need, sizeof need);
    ev_fmt_bytes(o->max_input_bytes, max, sizeof max);
    if (bytes == UINT64_MAX)
        snprintf(need, sizeof need, "too large");
    /* --input-shape fixes open dims only; a declared size can be fed by a
     * case's own inputs, or fit a larger budget. */
    if (open)
        return ir_fail(err, "verify: input '%s' is %s (%s), over the %s of "
                       "random inputs --verify makes; fix its open dims "
                       "smaller with --input-shape %s=DIMS", name, shape,
                       need, max, name);
    return ir_fail(err, "verify: input '%s' is declared %s (%s), over the %s "
                   "of random inputs --verify makes (not changed by "
                   "--input-shape: its dims are fixed); verify on a test "
                   "case's inputs, or raise --max-memory (a quarter of it "
                   "goes to inputs)", name, shape, need, max);
}

/* A random tensor of the declared type: floats in [-1, 1), integers in
 * [0, 4), booleans either way, within *left bytes (vf_pick_dims). */
static EvValue *vf_random_input(const IrValueInfo *vi, const VfOptions *o,
                                uint64_t *seed, uint64_t *left, IrError *err)
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
    if (vf_pick_dims(vi, o, left, dims, err))
        return NULL;
    EvValue *v = ev_tensor_new(t->elem_type, t->shape->rank, dims, err);
    if (!v)
        return NULL;
    for (size_t k = 0; k < v->numel; k++) {
        uint64_t r = vf_next(seed);
        if (ev_dtype_is_float(t->elem_type))
            ev_set_f(v, k, (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        else if (t->elem_type == IR_STRING)
            ((EvStr *)v->data)[k].p = ir_alloc(1);   /* "" */
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
    uint64_t seed = o->seed ? o->seed : 1, left = o->max_input_bytes;
    for (size_t i = 0; i < nf; i++) {
        (*in)[i] = vf_random_input(feeds[i], o, &seed, &left, err);
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

/* o with its zero fields given their defaults (see VfOptions). */
static VfOptions vf_defaults(const VfOptions *o)
{
    VfOptions d = *o;
    if (d.dim_default <= 0)
        d.dim_default = 2;
    if (d.rtol <= 0)
        d.rtol = 1e-3;
    if (d.atol <= 0)
        d.atol = 1e-5;
    /* Random inputs: a quarter of the memory budget, and no more than
     * VF_MAX_INPUT_BYTES unless --max-memory was given. */
    if (!d.max_input_bytes && d.eval.max_memory) {
        d.max_input_bytes = d.eval.max_memory / 4;
    } else if (!d.max_input_bytes) {
        d.max_input_bytes = ev_default_max_memory() / 4;
        if (d.max_input_bytes > VF_MAX_INPUT_BYTES)
            d.max_input_bytes = VF_MAX_INPUT_BYTES;
    }
    return d;
}

int vf_make_inputs(IrModel *m, const VfOptions *o, EvValue ***in, size_t *n,
                   IrError *err)
{
    VfOptions d = vf_defaults(o);
    return vf_inputs(m, &d, in, n, err);
}

int vf_compare(IrModel *before, IrModel *after, const VfOptions *o, IrError *err)
{
    VfOptions d = vf_defaults(o);
    EvValue **in, **out_a = NULL, **out_b = NULL;
    size_t n_in, n_a = 0, n_b = 0;
    /* `after` may declare more specific input shapes (--input-shape) */
    if (vf_inputs(after, &d, &in, &n_in, err) < 0)
        return -1;
    EvOptions eo = d.eval;
    eo.seed = d.seed;
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
