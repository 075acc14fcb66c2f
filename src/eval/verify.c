/*
 * verify.c - evaluate two models on the same inputs and compare.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/eval.h"
#include "schema/opschema.h"
#include "eval/verify.h"

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
            ((EvStr *)v->data)[k].p = mem_alloc(1);   /* "" */
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
    *in = mem_array(nf ? nf : 1, sizeof **in);
    *n = nf;
    uint64_t seed = o->seed ? o->seed : 1, left = o->max_input_bytes;
    for (size_t i = 0; i < nf; i++) {
        (*in)[i] = vf_random_input(feeds[i], o, &seed, &left, err);
        if (!(*in)[i]) {
            for (size_t k = 0; k < i; k++)
                ev_unref((*in)[k]);
            free(*in);
            *in = NULL;   /* the caller's cleanup must not free it again */
            *n = 0;
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

/* v as element type dt stores it (float16 and bfloat16 round to nearest
 * even, float32 rounds from double; other types unchanged). */
static double vf_round(int32_t dt, double v)
{
    if (dt == IR_FLOAT16)
        return half_f16_to_f32(half_f32_to_f16((float)v));
    if (dt == IR_BFLOAT16)
        return half_bf16_to_f32(half_f32_to_bf16((float)v));
    if (dt == IR_FLOAT)
        return (float)v;
    return v;
}

/* The element type of feed vi when it is a float tensor, else 0. */
static int32_t vf_float_type(const IrValueInfo *vi)
{
    const IrType *t = vi->type;
    if (!t || t->kind != IR_TYPE_TENSOR || !t->has_elem_type ||
        !ev_dtype_is_float(t->elem_type))
        return 0;
    return t->elem_type;
}

/* A new tensor of type dt holding g's values rounded to tb, then to ta
 * (the two models' types, in that order for both, so that both models get
 * the very same numbers: the difference of their outputs is then the
 * computation's). */
static EvValue *vf_retype(const EvValue *g, int32_t dt, int32_t ta,
                          int32_t tb, IrError *err)
{
    EvValue *v = ev_tensor_new(dt, g->rank, g->dims, err);
    for (size_t k = 0; v && k < v->numel; k++)
        ev_set_f(v, k, vf_round(ta, vf_round(tb, ev_get_f(g, k))));
    return v;
}

/* Each model's own inputs: where feed i is a float tensor of different
 * types in the two models (float32 and float16, ...), both get in[i]
 * rounded to both types, each in its own type; elsewhere in[i] itself
 * (new references in *a and *b, ev_values_free). 0, or -1 with err. */
static int vf_split_inputs(IrModel *before, IrModel *after, EvValue **in,
                           size_t n, EvValue ***a, EvValue ***b, IrError *err)
{
    IrValueInfo **fa, **fb;
    size_t na = ev_model_feeds(before, &fa), nb = ev_model_feeds(after, &fb);
    *a = mem_array(n ? n : 1, sizeof **a);
    *b = mem_array(n ? n : 1, sizeof **b);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t ta = na == n ? vf_float_type(fa[i]) : 0;
        int32_t tb = nb == n ? vf_float_type(fb[i]) : 0;
        bool split = ta && tb && ta != tb && in[i]->kind == EV_TENSOR &&
                     ev_dtype_is_float(in[i]->dtype);
        if (!split) {
            (*a)[i] = ev_ref(in[i]);
            (*b)[i] = ev_ref(in[i]);
            continue;
        }
        (*a)[i] = vf_retype(in[i], ta, ta, tb, err);
        (*b)[i] = vf_retype(in[i], tb, ta, tb, err);
        if (!(*a)[i] || !(*b)[i]) {
            rc = -1;
            break;
        }
    }
    free(fa);
    free(fb);
    return rc;
}

/* The tolerance of outputs computed in float type dt by one model and
 * in a wider float type by the other (see docs/evaluator.md). */
static void vf_type_tol(int32_t dt, double *rtol, double *atol)
{
    if (dt == IR_BFLOAT16) {
        *rtol = VF_BFLOAT16_RTOL;
        *atol = VF_BFLOAT16_ATOL;
    } else if (dt == IR_FLOAT16) {
        *rtol = VF_FLOAT16_RTOL;
        *atol = VF_FLOAT16_ATOL;
    }
}

/* The narrower of two float types: the one whose rounding bounds how
 * close two computations can be. */
static int32_t vf_narrower(int32_t a, int32_t b)
{
    if (a == IR_BFLOAT16 || b == IR_BFLOAT16)
        return IR_BFLOAT16;
    if (a == IR_FLOAT16 || b == IR_FLOAT16)
        return IR_FLOAT16;
    return a == IR_DOUBLE ? b : a;
}

/* The narrowest float type graph g computes in, into *(int32_t *)arg:
 * its values' types and initializers, value_info, and Cast `to` (a
 * float16 island between Casts keeps float32 inputs and outputs). */
static int vf_narrowest_in(const IrGraph *g, const IrWalkAt *at, void *arg)
{
    (void)at;
    int32_t dt = *(int32_t *)arg;
    for (const IrValue *v = g->values; v; v = v->hh.next) {
        if (v->type && v->type->kind == IR_TYPE_TENSOR &&
            v->type->has_elem_type && ev_dtype_is_float(v->type->elem_type))
            dt = vf_narrower(dt, v->type->elem_type);
        if (v->init && ev_dtype_is_float(v->init->data_type))
            dt = vf_narrower(dt, v->init->data_type);
    }
    for (size_t i = 0; i < g->value_info.n; i++) {
        const IrValueInfo *vi = g->value_info.p[i];
        int32_t t = vf_float_type(vi);
        if (t)
            dt = vf_narrower(dt, t);
    }
    IR_FOR_NODES(g, n) {
        const IrAttr *to = strcmp(n->op_type, "Cast") == 0 &&
                           !ir_domain_norm(n->domain)[0]
                           ? ir_node_attr(n, "to") : NULL;
        if (to && to->has_i && ev_dtype_is_float((int32_t)to->i))
            dt = vf_narrower(dt, (int32_t)to->i);
    }
    *(int32_t *)arg = dt;
    return 0;
}

/* The narrowest float type model m computes in, over its main graph,
 * the bodies in it and its functions (a half island may sit inside a
 * Loop body or a function whose boundary stays float32). IR_FLOAT when
 * nothing narrower shows. */
static int32_t vf_narrowest(const IrModel *m)
{
    int32_t dt = IR_FLOAT;
    ir_each_graph_const(m, IR_WALK_MAIN | IR_WALK_SUBGRAPHS | IR_WALK_FUNCTIONS,
                        vf_narrowest_in, &dt);
    return dt;
}

/* got against want, where one model computes in float type `narrow`
 * and the other does not (0: both compute alike): float tensors compare
 * in double, within narrow's tolerance (or the caller's, if looser);
 * everything else exactly as ev_value_equal with rtol/atol. */
bool vf_output_equal(const EvValue *got, const EvValue *want, const EvValue *wide,
                     const EvValue *wide_got, int32_t narrow, double rtol, double atol,
                     VfFigure *fig, char *why, size_t cap)
{
    /* a sequence or optional of float tensors (a SequenceMap's result):
     * item by item, each within the same tolerance */
    if (narrow && got->kind == want->kind && got->kind != EV_TENSOR &&
        got->kind != EV_MAP && got->n_items == want->n_items) {
        for (size_t i = 0; i < got->n_items; i++) {
            char sub[200];
            VfFigure item = {0};
            if (!vf_output_equal(got->items[i], want->items[i], NULL, NULL, narrow, rtol, atol,
                                 &item, sub, sizeof sub)) {
                snprintf(why, cap, "item %zu: %s", i, sub);
                return false;
            }
        }
        return true;
    }
    bool floats = got->kind == EV_TENSOR && want->kind == EV_TENSOR &&
                  ev_dtype_is_float(got->dtype) && ev_dtype_is_float(want->dtype);
    /* two models that both compute in float16 inside (a model already
     * half with float32 I/O, made half at its I/O too) still differ in
     * their outputs' types: a change to or from a half type compares as
     * such (float32 against double stays an error) */
    int32_t io = floats ? vf_narrower(got->dtype, want->dtype) : 0;
    if (!narrow && got->dtype != want->dtype && (io == IR_FLOAT16 || io == IR_BFLOAT16))
        narrow = io;
    if (!floats || (!narrow && got->dtype != want->dtype))
        return ev_value_equal(got, want, rtol, atol, why, cap);
    if (wide && (wide->kind != EV_TENSOR || !ev_dtype_is_float(wide->dtype)))
        wide = NULL;
    if (wide_got && (wide_got->kind != EV_TENSOR || !ev_dtype_is_float(wide_got->dtype)))
        wide_got = NULL;
    /* the converted model's own noise vouches within one model's types; a
     * half model against a wider one answers to its type's tolerance */
    if (!narrow)
        return vf_floor_judge(got, want, wide, wide_got, rtol, atol, false, fig, why, cap);
    double tr = rtol, ta = atol;
    vf_type_tol(vf_narrower(narrow, vf_narrower(got->dtype, want->dtype)), &tr, &ta);
    return vf_floor_judge(got, want, wide, NULL, tr > rtol ? tr : rtol, ta > atol ? ta : atol,
                          true, fig, why, cap);
}

/* Whether an input of m that --verify fills at random has an open
 * (symbolic or unknown) dim. */
static bool vf_open_inputs(IrModel *m)
{
    IrValueInfo **feeds;
    size_t nf = ev_model_feeds(m, &feeds);
    bool open = false;
    for (size_t i = 0; i < nf && !open; i++) {
        const IrType *t = feeds[i]->type;
        for (size_t k = 0; t && t->shape && k < t->shape->rank; k++)
            open |= t->shape->dims[k].kind != IR_DIM_VALUE;
    }
    free(feeds);
    return open;
}

/* The sizes random inputs give open dims, tried in turn while the
 * original model refuses to run on them (a 2 x 2 image is smaller than
 * most convolution windows; an index table may reach past 2; a short
 * speech window needs 256 samples or more). */
static const int64_t vf_open_sizes[] = {2, 8, 32, 128, 512};

/* in (the numbers `after` was fed) in m's own input types: a float
 * feed of another float type gets the same values (exact: they are
 * already rounded to both types). New references in *out. 0 or -1. */
static int vf_inputs_as(IrModel *m, EvValue **in, size_t n, EvValue ***out,
                        IrError *err)
{
    IrValueInfo **f;
    size_t nf = ev_model_feeds(m, &f);
    *out = mem_array(n ? n : 1, sizeof **out);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int32_t t = nf == n ? vf_float_type(f[i]) : 0;
        if (!t || in[i]->kind != EV_TENSOR || !ev_dtype_is_float(in[i]->dtype) ||
            in[i]->dtype == t) {
            (*out)[i] = ev_ref(in[i]);
            continue;
        }
        (*out)[i] = vf_retype(in[i], t, t, t, err);
        rc = (*out)[i] ? 0 : -1;
    }
    free(f);
    return rc;
}

/* Whether a and b are both float tensors. */
static bool vf_float_tensors(const EvValue *a, const EvValue *b)
{
    return a && b && a->kind == EV_TENSOR && b->kind == EV_TENSOR &&
           ev_dtype_is_float(a->dtype) && ev_dtype_is_float(b->dtype);
}

/* What messages call model k of d (0 the original, 1 the converted). */
static const char *vf_name(const VfOptions *d, int k)
{
    static const char *const dflt[2] = {"the original model", "the converted model"};
    return d->names[k] ? d->names[k] : dflt[k];
}

/* The half type `before` and m are judged in: narrow_opt when given,
 * else the narrower one's when one computes in a narrower float type
 * than the other (its tolerance then), else 0. */
static int32_t vf_judge_narrow(const IrModel *before, const IrModel *m, int32_t narrow_opt)
{
    int32_t na = vf_narrowest(before), nb = vf_narrowest(m);
    return narrow_opt ? narrow_opt : na != nb ? vf_narrower(na, nb) : 0;
}

/* Outputs `got` of model m against the original's `want` (and its wide
 * run's, NULL when not had), figures into figs (n of them, may be NULL):
 * 0, or -2 with err naming the first that differs (note, if any,
 * appended). */
static int vf_judge(const IrModel *before, const IrModel *m, int32_t narrow_opt,
                    const VfOptions *d, EvValue **want, EvValue **got, EvValue **wide,
                    EvValue **wide_b, size_t n, VfFigure *figs, const char *note,
                    IrError *err)
{
    int32_t narrow = vf_judge_narrow(before, m, narrow_opt);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char why[400];
        VfFigure scratch = {0}, *fig = figs ? &figs[i] : &scratch;
        const IrValueInfo *vo = i < m->graph->outputs.n ? m->graph->outputs.p[i] : NULL;
        *fig = (VfFigure){.floor = -1};
        snprintf(fig->name, sizeof fig->name, "%s", vo ? vo->value->name : "");
        fig->wide_err = -1;
        if (wide && wide_b && vf_float_tensors(wide[i], wide_b[i]))
            fig->wide_err = vf_wide_diff(wide_b[i], wide[i]);
        /* every output is judged, for its figures; the first that
         * differs is the message */
        fig->differs = !vf_output_equal(got[i], want[i], wide ? wide[i] : NULL,
                                        wide && wide_b ? wide_b[i] : NULL, narrow,
                                        d->rtol, d->atol, fig, why, sizeof why);
        if (fig->differs && rc == 0) {
            const IrValueInfo *vi = m->graph->outputs.p[i];
            rc = ir_fail(err, "verify: output '%s' differs %s%s: %s%s%s%s",
                         vi->value->name, d->names[1] ? "in " : "after conversion",
                         d->names[1] ? d->names[1] : "", why, note ? " (" : "",
                         note ? note : "", note ? ")" : "") - 1;
        }
    }
    return rc;
}

/* Runs o->also[k] on in_b (the numbers `after` got) and judges it
 * against out_a: as vf_compare. */
static int vf_also(IrModel *before, const VfAlso *x, const VfOptions *d,
                   EvOptions eo, EvValue **in_b, size_t n_in, EvValue **out_a,
                   size_t n_a, IrError *err)
{
    EvValue **in = NULL, **out = NULL;
    size_t n_out = 0;
    IrError e;
    int rc = vf_inputs_as(x->model, in_b, n_in, &in, err);
    if (rc == 0 && ev_model_run(x->model, &eo, n_in, in, &out, &n_out, &e) < 0)
        rc = ir_fail(err, "verify: %s does not run (%s): %s", vf_name(d, 1),
                     x->note ? x->note : "again", e.msg);
    else if (rc == 0 && n_out != n_a)
        rc = ir_fail(err, "verify: %zu outputs before, %zu after", n_a, n_out) - 1;
    if (rc == 0)
        rc = vf_judge(before, x->model, x->narrow, d, out_a, out, NULL, NULL, n_a, NULL,
                      x->note, err);
    ev_values_free(in, in ? n_in : 0);
    ev_values_free(out, n_out);
    return rc;
}

double vf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether the deadline of o (0: none) has come. */
static bool vf_late(const VfOptions *o)
{
    return o->deadline > 0 && vf_now() >= o->deadline;
}

/* eo with its timeout cut to what is left before o's deadline. */
static EvOptions vf_eval_opts(const VfOptions *o, EvOptions eo)
{
    double left = o->deadline > 0 ? o->deadline - vf_now() : 0;
    if (o->deadline > 0 && (eo.timeout <= 0 || left < eo.timeout))
        eo.timeout = left > 1e-3 ? left : 1e-3;
    return eo;
}

/* A run of m that the deadline stopped: about how long the whole
 * verification (four runs of about this one's length) would take, from
 * how far it got through m's main graph. */
static double vf_estimate(const IrModel *m, double took, size_t done)
{
    size_t total = 0;
    IR_FOR_NODES(m->graph, n)
        total++;
    return 4 * took * (double)(total ? total : 1) / (double)(done ? done : 1);
}

static void vf_set_stop(const VfOptions *o, VfStop s, double needed)
{
    if (o->stop)
        *o->stop = s;
    if (o->needed && s == VF_NO_TIME)
        *o->needed = needed;
}

/* The wide copy of the original on the original's inputs (each in the
 * copy's own type): its outputs, or NULL when it cannot run (no floor
 * then: the verdict falls back to the tolerance alone). */
static EvValue **vf_wide_run(IrModel *wide, const VfOptions *o, EvOptions eo,
                             EvValue **in_a, size_t n_in)
{
    EvValue **in = NULL, **out = NULL;
    size_t n_out = 0;
    IrError e;
    if (vf_late(o))
        return NULL;
    eo = vf_eval_opts(o, eo);
    if (vf_inputs_as(wide, in_a, n_in, &in, &e) < 0 ||
        ev_model_run(wide, &eo, n_in, in, &out, &n_out, &e) < 0)
        out = NULL;
    ev_values_free(in, in ? n_in : 0);
    return out;
}

/* The inputs and the original's run, trying the ladder of open-dim
 * sizes while it refuses them: 0 with v's inputs and out_a set, or -1
 * with err (and the stop of o set: no run, or no time). */
typedef struct VfRun {
    EvValue **in, **in_a, **in_b, **out_a;
    size_t n_in, n_a;
} VfRun;

static void vf_run_free(VfRun *v)
{
    ev_values_free(v->in, v->n_in);
    ev_values_free(v->in_a, v->in_a ? v->n_in : 0);
    ev_values_free(v->in_b, v->in_b ? v->n_in : 0);
    ev_values_free(v->out_a, v->n_a);
    *v = (VfRun){0};
}

static int vf_run_original(IrModel *before, IrModel *after, VfOptions *d, const VfOptions *o,
                           EvOptions eo, VfRun *v, IrError *err)
{
    bool retry = !o->inputs_dir && o->dim_default <= 0 && vf_open_inputs(after);
    size_t n_try = retry ? sizeof vf_open_sizes / sizeof vf_open_sizes[0] : 1;
    IrError e;
    for (size_t k = 0; k < n_try; k++) {
        if (retry)
            d->dim_default = vf_open_sizes[k];
        /* `after` may declare more specific input shapes (--input-shape) */
        if (vf_inputs(after, d, &v->in, &v->n_in, err) < 0) {
            vf_set_stop(o, VF_NO_RUN, 0);
            return -1;
        }
        int rc = vf_split_inputs(before, after, v->in, v->n_in, &v->in_a, &v->in_b, err);
        size_t done = 0;
        EvOptions ek = vf_eval_opts(o, eo);
        ek.progress = &done;
        double t0 = vf_now();
        if (rc == 0 && ev_model_run(before, &ek, v->n_in, v->in_a, &v->out_a, &v->n_a, &e) == 0)
            return 0;
        if (rc == 0 && vf_late(o)) {
            vf_set_stop(o, VF_NO_TIME, vf_estimate(before, vf_now() - t0, done));
            vf_run_free(v);
            return ir_fail(err, "verify: %s did not finish in time: %s", vf_name(o, 0),
                           e.msg);
        }
        if (rc == 0)
            rc = ir_fail(err, "verify: %s does not run%s: %s", vf_name(o, 0),
                         retry ? " with its open dims at 2, 8, 32, 128 or 512" : "", e.msg);
        else
            k = n_try - 1;          /* not a matter of size */
        vf_run_free(v);
        if (k + 1 == n_try) {
            vf_set_stop(o, VF_NO_RUN, 0);
            return rc;
        }
    }
    return -1;
}

/* After a difference: the first node that made it, into d->where and
 * appended to err's message (nothing when the deadline has come or none
 * is found). */
static void vf_compare_locate(IrModel *before, IrModel *after, const VfOptions *d,
                              EvOptions eo, const VfRun *v, IrError *err)
{
    if (vf_late(d))
        return;
    VfLocateIn x = {.before = before, .after = after, .wide = d->wide,
                    .wide_after = d->wide_after, .in_a = v->in_a,
                    .in_b = v->in_b, .n_in = v->n_in,
                    .narrow = vf_judge_narrow(before, after, d->narrow), .rtol = d->rtol,
                    .atol = d->atol, .eval = eo, .deadline = d->deadline};
    IrError e;
    if (d->wide && vf_inputs_as(d->wide, v->in_a, v->n_in, &x.in_wide, &e) < 0)
        x.in_wide = NULL;
    if (d->wide_after && vf_inputs_as(d->wide_after, v->in_b, v->n_in, &x.in_wide_b, &e) < 0)
        x.in_wide_b = NULL;
    char text[700];
    size_t len = strlen(err->msg);
    if (vf_locate(&x, d->where) == 0 && len < sizeof err->msg)
        snprintf(err->msg + len, sizeof err->msg - len, "; %s",
                 vf_where_text(d->where, text, sizeof text));
    ev_values_free(x.in_wide, x.in_wide ? v->n_in : 0);
    ev_values_free(x.in_wide_b, x.in_wide_b ? v->n_in : 0);
}

int vf_compare(IrModel *before, IrModel *after, const VfOptions *o, IrError *err)
{
    VfOptions d = vf_defaults(o);
    VfRun v = {0};
    EvValue **out_b = NULL;
    size_t n_b = 0;
    EvOptions eo = d.eval;
    eo.seed = d.seed;
    eo.jitter = 0;
    IrError e;
    vf_set_stop(o, VF_JUDGED, 0);
    if (o->figures) {
        *o->figures = NULL;
        *o->n_figures = 0;
    }
    double t0 = vf_now();
    if (vf_run_original(before, after, &d, o, eo, &v, err) < 0)
        return -1;
    if (o->dim_used)
        *o->dim_used = !o->inputs_dir && o->dim_default <= 0 && vf_open_inputs(after)
                           ? d.dim_default : 0;
    EvOptions eb = vf_eval_opts(o, eo);
    int rc = 0;
    bool failed = false;    /* the converted model fails where the original ran */
    if (ev_model_run(after, &eb, v.n_in, v.in_b, &out_b, &n_b, &e) < 0) {
        if (vf_late(o))
            vf_set_stop(o, VF_NO_TIME, 2 * (vf_now() - t0));
        else
            failed = true;
        rc = ir_fail(err, "verify: %s does not run: %s", vf_name(o, 1), e.msg);
    } else if (v.n_a != n_b) {
        rc = ir_fail(err, "verify: %zu outputs before, %zu after", v.n_a, n_b) - 1;
    }
    EvValue **out_w = rc == 0 && o->wide ? vf_wide_run(o->wide, o, eo, v.in_a, v.n_in) : NULL;
    EvValue **out_wb = out_w && o->wide_after
                           ? vf_wide_run(o->wide_after, o, eo, v.in_b, v.n_in) : NULL;
    VfFigure *figs = rc == 0 && o->figures ? mem_array(v.n_a ? v.n_a : 1, sizeof *figs) : NULL;
    if (rc == 0)
        rc = vf_judge(before, after, o->narrow, &d, v.out_a, out_b, out_w, out_wb, v.n_a, figs,
                      NULL, err);
    /* a difference the noise floor might have explained, had there been
     * time for it, is not a verdict */
    if (rc == -2 && o->wide && !out_w && vf_late(o))
        vf_set_stop(o, VF_NO_TIME, 2 * (vf_now() - t0));
    else if ((rc == -2 || failed) && o->where)
        vf_compare_locate(before, after, &d, eo, &v, err);
    ev_values_free(out_wb, out_wb ? v.n_a : 0);
    ev_values_free(out_w, out_w ? v.n_a : 0);
    if (o->figures) {
        *o->figures = figs;
        *o->n_figures = figs ? v.n_a : 0;
    }
    for (size_t k = 0; rc == 0 && k < o->n_also; k++)
        rc = vf_also(before, &o->also[k], &d, eo, v.in_b, v.n_in, v.out_a, v.n_a, err);
    ev_values_free(out_b, n_b);
    vf_run_free(&v);
    return rc;
}
