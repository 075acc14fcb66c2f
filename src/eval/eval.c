/* The evaluator's driver: runs graphs node by node, finds each node's
 * kernel, calls model-local functions and subgraphs, and gives kernels the
 * helpers of eval.h (inputs, attributes, outputs, broadcasting).
 *
 * Values live in frames, one per graph activation, keyed by the IR value;
 * a subgraph's frame has its owner's frame as parent, so names of enclosing
 * graphs resolve the way the spec scopes them. A function body's frame has
 * no parent: a body sees only its formal inputs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "eval/eval.h"
#include "ir/diag.h"

/* A decoded initializer, shared by every frame of the run. */
typedef struct EvInit {
    const IrTensor *key;
    EvValue *v;
    UT_hash_handle hh;
} EvInit;

/* A graph's drop lists (see ev_drops_build), made once per run: a Loop or
 * Scan body runs many times with the same lists. */
typedef struct EvDrops {
    const IrGraph *key;
    size_t n_nodes;
    IrPtrList *at;
    UT_hash_handle hh;
} EvDrops;

struct EvRun {
    IrModel *m;
    EvOptions opt;
    uint64_t rng;
    uint64_t jitter;          /* EvOptions.jitter's generator state */
    unsigned depth;
    uint64_t steps;           /* node and subgraph runs so far */
    double deadline;          /* ev_now() past which the run stops; 0 none */
    EvBudget budget;
    EvInit *inits;
    EvDrops *drops;
    int blas_was;             /* OpenBLAS's threads before the run */
};

typedef struct EvSlot {
    const IrValue *key;
    EvValue *v;
    UT_hash_handle hh;
} EvSlot;

struct EvFrame {
    EvFrame *parent;
    EvSlot *slots;
};

/* The attributes ref_attr_name refers to: those of the node calling the
 * function whose body runs, then the function's defaults. */
struct EvScope {
    const IrNode *call;
    const IrFunction *fn;
    EvScope *parent;
};

/* ---- the kernel registry ---------------------------------------------- */

typedef struct EvReg {
    char *key;            /* "domain|op" */
    EvKernel fn;
    UT_hash_handle hh;
} EvReg;

static EvReg *ev_registry;

static void ev_register(const EvOp *ops)
{
    for (size_t i = 0; ops[i].op; i++) {
        size_t n = strlen(ops[i].domain) + strlen(ops[i].op) + 2;
        EvReg *r = mem_alloc(sizeof *r);
        r->key = mem_alloc(n);
        snprintf(r->key, n, "%s|%s", ops[i].domain, ops[i].op);
        r->fn = ops[i].fn;
        EvReg *old;
        HASH_FIND_STR(ev_registry, r->key, old);
        if (old) {
            free(r->key);
            free(r);
            continue;
        }
        HASH_ADD_KEYPTR(hh, ev_registry, r->key, strlen(r->key), r);
    }
}

const EvFamily ev_families[] = {
    {"activation", ev_ops_activation},  {"attention", ev_ops_attention},
    {"control", ev_ops_control},        {"einsum", ev_ops_einsum},
    {"elementwise", ev_ops_elementwise}, {"index", ev_ops_index},
    {"misc", ev_ops_misc},              {"ml", ev_ops_ml},
    {"nn", ev_ops_nn},                  {"norm", ev_ops_norm},
    {"quant", ev_ops_quant},            {"random", ev_ops_random},
    {"reduce", ev_ops_reduce},          {"resize", ev_ops_resize},
    {"rnn", ev_ops_rnn},                {"sample", ev_ops_sample},
    {"sequence", ev_ops_sequence},      {"shape", ev_ops_shape},
    {"signal", ev_ops_signal},          {"string", ev_ops_string},
    {"tensor", ev_ops_tensor},          {"training", ev_ops_training},
};
const size_t ev_families_n = sizeof ev_families / sizeof *ev_families;

void ev_init(void)
{
    if (ev_registry)
        return;
    for (size_t i = 0; i < ev_families_n; i++)
        ev_register(ev_families[i].ops);
}

static EvKernel ev_kernel(const char *domain, const char *op)
{
    ev_init();
    char key[256];
    snprintf(key, sizeof key, "%s|%s", ir_domain_norm(domain), op);
    EvReg *r;
    HASH_FIND_STR(ev_registry, key, r);
    return r ? r->fn : NULL;
}

/* ---- frames --------------------------------------------------------------- */

static void ev_frame_set(EvFrame *f, const IrValue *key, EvValue *v)
{
    EvSlot *s;
    HASH_FIND_PTR(f->slots, &key, s);
    if (s) {
        ev_unref(s->v);
        s->v = v;
        return;
    }
    s = mem_alloc(sizeof *s);
    s->key = key;
    s->v = v;
    HASH_ADD_PTR(f->slots, key, s);
}

static void ev_frame_clear(EvFrame *f)
{
    EvSlot *s, *tmp;
    HASH_ITER(hh, f->slots, s, tmp) {
        HASH_DEL(f->slots, s);
        ev_unref(s->v);
        free(s);
    }
}

static EvValue *ev_init_value(EvRun *r, const IrValue *iv, IrError *err)
{
    EvInit *e;
    HASH_FIND_PTR(r->inits, &iv->init, e);
    if (e)
        return e->v;
    EvValue *v = ev_from_ir_tensor_borrow(iv->init, err);
    if (!v)
        return NULL;
    e = mem_alloc(sizeof *e);
    e->key = iv->init;
    e->v = v;
    HASH_ADD_PTR(r->inits, key, e);
    return v;
}

/* The value bound to iv in f or an enclosing frame, else its initializer;
 * borrowed. NULL (err set) when nothing defines it yet. */
static EvValue *ev_lookup(EvRun *r, EvFrame *f, const IrValue *iv,
                          IrError *err)
{
    for (EvFrame *p = f; p; p = p->parent) {
        EvSlot *s;
        HASH_FIND_PTR(p->slots, &iv, s);
        if (s)
            return s->v;
    }
    if (iv->init)
        return ev_init_value(r, iv, err);
    ir_fail(err, "value '%s' has no value at run time", iv->name);
    return NULL;
}

/* ---- kernel context helpers -------------------------------------------- */

typedef struct EvTmp {
    struct EvTmp *next;
    uint64_t budget;          /* as EvValue's: what was charged, and where */
    size_t charged;
    max_align_t data[];
} EvTmp;

static void *ev_tmp_get(EvCtx *c, size_t n, size_t size, bool zero)
{
    size_t bytes;
    if (!mem_mul_size(n, size, &bytes) ||
        !mem_add_size(bytes, sizeof(EvTmp), &bytes) ||
        bytes > EV_MAX_TENSOR_BYTES) {
        ev_fail(c, "scratch memory of %zu x %zu bytes is too large", n, size);
        return NULL;
    }
    uint64_t id;
    IrError sub;
    if (ev_budget_take(bytes, &id, &sub)) {
        ev_fail(c, "scratch memory %s", sub.msg);
        return NULL;
    }
    EvTmp *t = ev_block_get(bytes, zero);
    t->budget = id;
    t->charged = bytes;
    t->next = c->tmp;
    c->tmp = t;
    return t->data;
}

void *ev_tmp(EvCtx *c, size_t n, size_t size)
{
    return ev_tmp_get(c, n, size, true);
}

void *ev_tmp_raw(EvCtx *c, size_t n, size_t size)
{
    return ev_tmp_get(c, n, size, false);
}

static void ev_tmp_free(EvCtx *c)
{
    for (EvTmp *t = c->tmp, *next; t; t = next) {
        next = t->next;
        ev_budget_give(t->budget, t->charged);
        ev_block_put(t, t->charged);
    }
    c->tmp = NULL;
}

int ev_fail(EvCtx *c, const char *fmt, ...)
{
    char msg[400], label[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dg_node_label(c->node, c->ver > 0 && c->ver <= INT32_MAX ? (int)c->ver : 0,
                  label, sizeof label);
    return ir_fail(c->err, "%s: %s", label, msg);
}

EvValue *ev_in(const EvCtx *c, size_t i)
{
    return i < c->n_in ? c->in[i] : NULL;
}

EvValue *ev_in_tensor(EvCtx *c, size_t i)
{
    EvValue *v = ev_in(c, i);
    if (!v) {
        ev_fail(c, "input %zu is missing", i);
        return NULL;
    }
    if (v->kind != EV_TENSOR) {
        ev_fail(c, "input %zu is not a tensor", i);
        return NULL;
    }
    return v;
}

int64_t *ev_in_ints(EvCtx *c, size_t i, size_t *n)
{
    EvValue *v = ev_in_tensor(c, i);
    if (!v)
        return NULL;
    if (v->dtype == IR_STRING) {
        ev_fail(c, "input %zu must be numeric", i);
        return NULL;
    }
    int64_t *out = ev_tmp(c, v->numel + 1, sizeof *out);
    if (!out)
        return NULL;
    for (size_t k = 0; k < v->numel; k++)
        out[k] = ev_get_i(v, k);
    *n = v->numel;
    return out;
}

EvValue *ev_in_real(EvCtx *c, size_t i)
{
    EvValue *t = ev_in_tensor(c, i);
    if (t && !ev_dtype_is_real(t->dtype)) {
        ev_fail(c, "input %zu has unsupported element type %d", i,
                (int)t->dtype);
        return NULL;
    }
    return t;
}

EvValue *ev_in_real_opt(EvCtx *c, size_t i, bool *bad)
{
    if (!ev_in(c, i))
        return NULL;
    EvValue *t = ev_in_real(c, i);
    if (!t)
        *bad = true;
    return t;
}

bool ev_has_out(const EvCtx *c, size_t i)
{
    return i < c->node->n_out && c->node->out[i] != NULL;
}

static const IrAttr *ev_node_attr(const IrNode *n, const char *name)
{
    for (size_t i = 0; i < n->n_attr; i++)
        if (n->attr[i]->name && strcmp(n->attr[i]->name, name) == 0)
            return n->attr[i];
    return NULL;
}

/* Follows ref_attr_name up the function-call scopes. */
static const IrAttr *ev_resolve_attr(const EvScope *s, const IrAttr *a)
{
    while (a && a->ref_attr_name && a->ref_attr_name[0]) {
        if (!s || !s->call)
            return NULL;
        const char *ref = a->ref_attr_name;
        a = ev_node_attr(s->call, ref);
        if (!a && s->fn) {
            for (size_t i = 0; i < s->fn->n_attr; i++)
                if (s->fn->attr[i]->name &&
                    strcmp(s->fn->attr[i]->name, ref) == 0)
                    a = s->fn->attr[i];
            /* A default lives in the function's own scope: it cannot
             * refer further. */
            return a;
        }
        s = s->parent;
    }
    return a;
}

const IrAttr *ev_attr(const EvCtx *c, const char *name)
{
    return ev_resolve_attr(c->scope, ev_node_attr(c->node, name));
}

/* The table's default of attribute `name` for the node's op at its
 * version, or NULL (an op the table does not know, an attribute the
 * version does not have or that has no default). */
static const OsAttr *ev_attr_default(const EvCtx *c, const char *name)
{
    const OsAttr *d = c->schema ? os_attr(c->schema, name) : NULL;
    return d && d->has_default ? d : NULL;
}

int64_t ev_attr_i(const EvCtx *c, const char *name)
{
    const IrAttr *a = ev_attr(c, name);
    if (a && a->has_i)
        return a->i;
    const OsAttr *d = ev_attr_default(c, name);
    return d ? d->def_i : 0;
}

float ev_attr_f(const EvCtx *c, const char *name)
{
    const IrAttr *a = ev_attr(c, name);
    if (a && a->has_f)
        return a->f;
    const OsAttr *d = ev_attr_default(c, name);
    if (!d)
        return 0.0f;
    /* an INT default read as a float converts */
    return d->type == IR_AT_FLOAT ? d->def_f : (float)d->def_i;
}

const char *ev_attr_s(EvCtx *c, const char *name)
{
    const OsAttr *d = ev_attr_default(c, name);
    return ev_attr_s_or(c, name, d ? d->def_s : NULL);
}

int64_t ev_attr_i_or(const EvCtx *c, const char *name, int64_t dflt)
{
    const IrAttr *a = ev_attr(c, name);
    return a && a->has_i ? a->i : dflt;
}

float ev_attr_f_or(const EvCtx *c, const char *name, float dflt)
{
    const IrAttr *a = ev_attr(c, name);
    return a && a->has_f ? a->f : dflt;
}

const char *ev_attr_s_or(EvCtx *c, const char *name, const char *dflt)
{
    const IrAttr *a = ev_attr(c, name);
    if (!a || !a->has_s)
        return dflt;
    char *s = ev_tmp(c, a->s.len + 1, 1);
    if (!s)
        return dflt;
    if (a->s.len)
        memcpy(s, a->s.data, a->s.len);
    return s;
}

long ev_attr_ints(const EvCtx *c, const char *name, const int64_t **v)
{
    const IrAttr *a = ev_attr(c, name);
    *v = NULL;
    if (!a || (!a->n_ints && !(a->has_type && a->type == IR_AT_INTS)))
        return -1;
    *v = a->ints;
    return (long)a->n_ints;
}

long ev_attr_floats(const EvCtx *c, const char *name, const float **v)
{
    const IrAttr *a = ev_attr(c, name);
    *v = NULL;
    if (!a || (!a->n_floats && !(a->has_type && a->type == IR_AT_FLOATS)))
        return -1;
    *v = a->floats;
    return (long)a->n_floats;
}

long ev_attr_strings(const EvCtx *c, const char *name, const IrBytes **v)
{
    const IrAttr *a = ev_attr(c, name);
    *v = NULL;
    if (!a || (!a->n_strings && !(a->has_type && a->type == IR_AT_STRINGS)))
        return -1;
    *v = a->strings;
    return (long)a->n_strings;
}

EvValue *ev_attr_tensor(EvCtx *c, const char *name)
{
    const IrAttr *a = ev_attr(c, name);
    if (!a || !a->t)
        return NULL;
    IrError sub;
    EvValue *v = ev_from_ir_tensor(a->t, &sub);
    if (!v)
        ev_fail(c, "attribute '%s': %s", name, sub.msg);
    return v;
}

IrGraph *ev_attr_graph(const EvCtx *c, const char *name)
{
    const IrAttr *a = ev_attr(c, name);
    return a ? a->g : NULL;
}

void ev_out_set(EvCtx *c, size_t i, EvValue *v)
{
    if (i >= c->n_out) {
        ev_unref(v);
        return;
    }
    ev_unref(c->out[i]);
    c->out[i] = v;
}

static EvValue *ev_out_make(EvCtx *c, size_t i, int32_t dtype, size_t rank,
                            const int64_t *dims, bool zero)
{
    IrError sub;
    EvValue *v = zero ? ev_tensor_new(dtype, rank, dims, &sub)
                      : ev_tensor_new_raw(dtype, rank, dims, &sub);
    if (!v) {
        ev_fail(c, "output %zu: %s", i, sub.msg);
        return NULL;
    }
    if (i >= c->n_out) {
        /* An output the node does not name: still usable as scratch. */
        ev_fail(c, "output %zu does not exist", i);
        ev_unref(v);
        return NULL;
    }
    ev_out_set(c, i, v);
    return v;
}

EvValue *ev_out_tensor(EvCtx *c, size_t i, int32_t dtype, size_t rank,
                       const int64_t *dims)
{
    return ev_out_make(c, i, dtype, rank, dims, true);
}

EvValue *ev_out_tensor_raw(EvCtx *c, size_t i, int32_t dtype, size_t rank,
                           const int64_t *dims)
{
    return ev_out_make(c, i, dtype, rank, dims, false);
}

int ev_axis(EvCtx *c, const char *what, int64_t axis, size_t rank,
            size_t extra, size_t *out)
{
    int64_t r = (int64_t)(rank + extra);
    if (axis < -r || axis >= r)
        return ev_fail(c, "%s %lld is out of range for rank %zu", what,
                       (long long)axis, rank);
    *out = (size_t)(axis < 0 ? axis + r : axis);
    return 0;
}

int ev_broadcast_shape(EvCtx *c, size_t n, EvValue *const *t, size_t *rank,
                       int64_t *dims)
{
    size_t r = 0;
    for (size_t j = 0; j < n; j++)
        if (t[j]->rank > r)
            r = t[j]->rank;
    if (r > EV_MAX_RANK)
        return ev_fail(c, "rank %zu is above the limit", r);
    for (size_t d = 0; d < r; d++)
        dims[d] = 1;
    for (size_t j = 0; j < n; j++) {
        size_t off = r - t[j]->rank;
        for (size_t d = 0; d < t[j]->rank; d++) {
            int64_t x = t[j]->dims[d], *o = &dims[off + d];
            if (x == *o || x == 1)
                continue;
            if (*o != 1)
                return ev_fail(c, "shapes cannot broadcast: dim %zu is %lld "
                               "and %lld", off + d, (long long)*o,
                               (long long)x);
            *o = x;
        }
    }
    *rank = r;
    return 0;
}

void ev_bcast_init(EvBcast *b, size_t n, EvValue *const *t, size_t rank,
                   const int64_t *dims)
{
    memset(b, 0, sizeof *b);
    b->n = n < EV_BCAST_MAX ? n : EV_BCAST_MAX;
    b->rank = rank;
    if (rank)   /* a scalar's dims may be NULL */
        memcpy(b->dims, dims, rank * sizeof *dims);
    for (size_t j = 0; j < b->n; j++) {
        size_t off = rank - t[j]->rank, s = 1;
        for (size_t d = t[j]->rank; d-- > 0;) {
            b->stride[j][off + d] = t[j]->dims[d] == 1 ? 0 : s;
            s *= (size_t)t[j]->dims[d];
        }
    }
}

void ev_bcast_next(EvBcast *b)
{
    for (size_t d = b->rank; d-- > 0;) {
        b->idx[d]++;
        for (size_t j = 0; j < b->n; j++)
            b->off[j] += b->stride[j][d];
        if (b->idx[d] < (size_t)b->dims[d])
            return;
        for (size_t j = 0; j < b->n; j++)
            b->off[j] -= b->stride[j][d] * b->idx[d];
        b->idx[d] = 0;
    }
}

size_t ev_dims_prod(const int64_t *dims, size_t from, size_t to)
{
    size_t p = 1;
    for (size_t i = from; i < to; i++)
        p *= (size_t)dims[i];
    return p;
}

void ev_strides(size_t rank, const int64_t *dims, size_t *strides)
{
    size_t s = 1;
    for (size_t d = rank; d-- > 0;) {
        strides[d] = s;
        s *= (size_t)dims[d];
    }
}

/* splitmix64: small, fast, and good enough for random-op outputs whose
 * values no test can demand exactly. */
double ev_random(EvCtx *c)
{
    uint64_t z = (c->run->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t ev_max_loop_iters(const EvCtx *c)
{
    return c->run->opt.max_loop_iters ? c->run->opt.max_loop_iters
                                      : EV_MAX_LOOP_ITERS;
}

/* ---- the work budget -------------------------------------------------- */

static double ev_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ev_limits_start(EvRun *r)
{
    if (!r->opt.max_steps)
        r->opt.max_steps = EV_DEFAULT_MAX_STEPS;
    if (!r->opt.max_memory)
        r->opt.max_memory = ev_default_max_memory();
    r->deadline = r->opt.timeout > 0 ? ev_now() + r->opt.timeout : 0;
    if (!r->opt.threads)
        r->opt.threads = ev_threads_default();
    r->blas_was = ev_blas_hold();
    ev_budget_push(&r->budget, r->opt.max_memory);
}

size_t ev_ctx_threads(const EvCtx *c)
{
    return c->run->opt.threads;
}

typedef struct EvRange {
    EvRangeFn fn;
    void *ctx;
    size_t n, grain;
} EvRange;

static void ev_range_task(void *ctx, size_t t, size_t worker)
{
    const EvRange *r = ctx;
    size_t lo = t * r->grain, hi = lo + r->grain < r->n ? lo + r->grain : r->n;
    r->fn(r->ctx, lo, hi);
}

void ev_par_range(const EvCtx *c, size_t n, size_t grain, EvRangeFn fn, void *ctx)
{
    size_t tasks = grain ? (n + grain - 1) / grain : 1;
    if (tasks <= 1 || ev_ctx_threads(c) <= 1) {
        fn(ctx, 0, n);
        return;
    }
    EvRange r = {fn, ctx, n, grain};
    ev_parallel(ev_ctx_threads(c), tasks, ev_range_task, &r);
}

/* Counts one node or subgraph run of n: 0, or -1 with err naming n when
 * the run has used up its steps or its time. */
static int ev_tick(EvRun *r, const IrNode *n, IrError *err)
{
    r->steps++;
    bool steps = r->steps > r->opt.max_steps;
    if (!steps && !r->deadline)
        return 0;
    if (!steps && ev_now() <= r->deadline)
        return 0;
    char label[200];
    dg_node_label(n, 0, label, sizeof label);
    if (steps)
        return ir_fail(err, "%s: over the work budget of %llu node "
                       "runs; raise --max-steps", label,
                       (unsigned long long)r->opt.max_steps);
    return ir_fail(err, "%s: over the time limit of %g s; raise "
                   "--timeout", label, r->opt.timeout);
}

/* Counts `units` of work a kernel does beyond its own node run (a
 * sequence op copying its items). A Loop that grows a sequence does work
 * that grows with the square of its iterations; counting node runs alone
 * would let it run for hours under the default budget. */
int ev_charge(EvCtx *c, uint64_t units)
{
    EvRun *r = c->run;
    if (!r)
        return 0;
    r->steps += units;
    if (r->steps <= r->opt.max_steps)
        return 0;
    return ev_fail(c, "over the work budget of %llu node runs (the items a "
                   "sequence op copies count too); raise --max-steps",
                   (unsigned long long)r->opt.max_steps);
}

/* ---- running graphs ---------------------------------------------------- */

static int ev_graph(EvRun *r, EvFrame *f, EvScope *s, const IrFunction *fn,
                    IrGraph *g, IrError *err);

static int ev_bind_inputs(EvFrame *f, IrGraph *g, size_t n_in,
                          EvValue *const *in, const char *what, IrError *err)
{
    if (n_in > g->inputs.n)
        return ir_fail(err, "%s takes %zu inputs, %zu were given", what,
                       g->inputs.n, n_in);
    for (size_t k = 0; k < n_in; k++) {
        IrValueInfo *vi = g->inputs.p[k];
        if (in[k])
            ev_frame_set(f, vi->value, ev_ref(in[k]));
    }
    return 0;
}

static int ev_collect_outputs(EvRun *r, EvFrame *f, IrGraph *g, size_t n_out,
                              EvValue **out, IrError *err)
{
    for (size_t k = 0; k < n_out; k++) {
        out[k] = NULL;
        if (k >= g->outputs.n)
            continue;
        IrValueInfo *vi = g->outputs.p[k];
        EvValue *v = ev_lookup(r, f, vi->value, err);
        if (!v) {
            for (size_t j = 0; j < k; j++) {
                ev_unref(out[j]);
                out[j] = NULL;
            }
            return -1;
        }
        out[k] = ev_ref(v);
    }
    return 0;
}

int ev_run_subgraph(EvCtx *c, IrGraph *g, size_t n_in, EvValue *const *in,
                    size_t n_out, EvValue **out)
{
    EvRun *r = c->run;
    if (r->depth >= EV_MAX_CALL_DEPTH)
        return ev_fail(c, "subgraphs nest deeper than %d at run time",
                       EV_MAX_CALL_DEPTH);
    /* Each iteration counts, even of a body with no nodes. */
    if (ev_tick(r, c->node, c->err))
        return -1;
    EvFrame f = {c->frame, NULL};
    IrError sub;
    int rc = ev_bind_inputs(&f, g, n_in, in, "the subgraph", &sub);
    r->depth++;
    if (!rc)
        rc = ev_graph(r, &f, c->scope, c->scope ? c->scope->fn : NULL, g,
                      &sub);
    r->depth--;
    if (!rc)
        rc = ev_collect_outputs(r, &f, g, n_out, out, &sub);
    ev_frame_clear(&f);
    if (rc) {
        /* Inner failures already name their node; say where they came from. */
        char label[200];
        dg_node_label(c->node, 0, label, sizeof label);
        return ir_fail(c->err, "%s (in subgraph of %s)", sub.msg, label);
    }
    return 0;
}

static int ev_call_function(EvRun *r, EvScope *s, const IrFunction *fn,
                            const IrNode *n, EvValue **in, EvValue **out,
                            IrError *err)
{
    char label[200];
    dg_node_label(n, 0, label, sizeof label);
    if (r->depth >= EV_MAX_CALL_DEPTH)
        return ir_fail(err, "%s: function calls nest deeper than %d",
                       label, EV_MAX_CALL_DEPTH);
    EvFrame f = {NULL, NULL};
    EvScope inner = {n, fn, s};
    IrError sub;
    size_t n_in = n->n_in < fn->body->inputs.n ? n->n_in : fn->body->inputs.n;
    int rc = ev_bind_inputs(&f, fn->body, n_in, in, "the function", &sub);
    r->depth++;
    if (!rc)
        rc = ev_graph(r, &f, &inner, fn, fn->body, &sub);
    r->depth--;
    if (!rc)
        rc = ev_collect_outputs(r, &f, fn->body, n->n_out, out, &sub);
    ev_frame_clear(&f);
    if (!rc)
        return 0;
    /* Each frame once: a recursive function would otherwise fill the
     * message with 64 copies of the same call before saying anything. */
    char frame[512];
    snprintf(frame, sizeof frame, " (in function %s called by node %s)",
             fn->name ? fn->name : "", label);
    if (strstr(sub.msg, frame))
        return ir_fail(err, "%s", sub.msg);
    return ir_fail(err, "%s%s", sub.msg, frame);
}

/* A node the checker would refuse for its inputs' arity, a left-out
 * required input or too many outputs: the callers run checked models
 * only, but a kernel must never read past its inputs when called on an
 * unchecked node. (Too few outputs are left to the kernels, which never
 * write past c->n_out.) */
static int ev_node_fits(EvCtx *c, const OsSchema *sc)
{
    const IrNode *n = c->node;
    if ((int64_t)n->n_in < sc->min_in || (sc->max_in >= 0 && (int64_t)n->n_in > sc->max_in) ||
        (sc->max_out >= 0 && (int64_t)n->n_out > sc->max_out))
        return ev_fail(c, "%zu inputs and %zu outputs: the schema does not allow them",
                       n->n_in, n->n_out);
    for (size_t i = 0; i < n->n_in; i++) {
        const OsParam *p = os_in_param(sc, i);
        if (!c->in[i] && p && !p->optional)
            return ev_fail(c, "required input %zu is missing", i);
    }
    return 0;
}

/* Elements of a string tensor a kernel left unset (padding, say) become
 * empty strings, so that every EvStr.p is a string, as eval.h promises
 * the next kernel. */
static void ev_strings_fill(EvValue *v)
{
    if (!v || v->kind != EV_TENSOR || v->dtype != IR_STRING)
        return;
    EvStr *s = v->data;
    for (size_t k = 0; k < v->numel; k++)
        if (!s[k].p) {
            s[k].p = mem_alloc(1);
            s[k].len = 0;
        }
}

/* The schema and kernel of (domain, op, opset), found once: the lookups
 * (a formatted key, a binary search of the operator table) cost a tenth
 * of a small model's run. A per-thread table indexed by the node's
 * address; an entry is used only when domain, op and opset are equal, so
 * a node freed and another made at its address can never take a wrong
 * one. */
enum { EV_DISPATCH_SLOTS = 256 };

typedef struct EvDispatch {
    char op[32], domain[32];
    int64_t opset;
    const OsSchema *sc;
    EvKernel k;
    bool used;
} EvDispatch;

static _Thread_local EvDispatch ev_dispatch[EV_DISPATCH_SLOTS];

static void ev_dispatch_find(const IrNode *n, int64_t opset, const OsSchema **sc,
                             EvKernel *k)
{
    const char *dom = ir_domain_norm(n->domain);
    EvDispatch *e = &ev_dispatch[((uintptr_t)n >> 4) % EV_DISPATCH_SLOTS];
    if (e->used && e->opset == opset && strcmp(e->op, n->op_type) == 0 &&
        strcmp(e->domain, dom) == 0) {
        *sc = e->sc;
        *k = e->k;
        return;
    }
    *sc = os_find(n->domain, n->op_type, opset);
    *k = ev_kernel(dom, n->op_type);
    if (strlen(n->op_type) >= sizeof e->op || strlen(dom) >= sizeof e->domain)
        return;   /* not kept: names this long are rare */
    strcpy(e->op, n->op_type);
    strcpy(e->domain, dom);
    e->opset = opset;
    e->sc = *sc;
    e->k = *k;
    e->used = true;
}

static int ev_call_kernel(EvRun *r, EvFrame *f, EvScope *s,
                          const IrFunction *fn, IrNode *n, EvValue **in,
                          EvValue **out, IrError *err)
{
    if (!n->op_type || !n->op_type[0])
        return ir_fail(err, "a node has no op_type");
    int64_t opset = ir_scope_opset(r->m, fn, n->domain);
    const OsSchema *sc;
    EvKernel k;
    ev_dispatch_find(n, opset, &sc, &k);
    EvCtx c = {.run = r, .frame = f, .scope = s, .node = n, .schema = sc,
               .ver = sc ? sc->since : opset, .opset = opset,
               .n_in = n->n_in, .in = in, .n_out = n->n_out, .out = out,
               .err = err};
    if (!sc && os_domain_max(n->domain) >= 0)
        return ev_fail(&c, "%s does not exist at opset %lld of its domain",
                       n->op_type, (long long)opset);
    if (sc && ev_node_fits(&c, sc))
        return -1;
    if (!k)
        return ev_fail(&c, "the evaluator has no kernel for %s%s%s",
                       n->domain && n->domain[0] ? n->domain : "",
                       n->domain && n->domain[0] ? "." : "", n->op_type);
    int rc = k(&c);
    ev_tmp_free(&c);
    if (rc)
        return -1;
    for (size_t i = 0; i < n->n_out; i++) {
        if (n->out[i] && !out[i])
            return ev_fail(&c, "output %zu was not produced", i);
        ev_strings_fill(out[i]);
    }
    return 0;
}

/* ---- jitter: another arithmetic that rounds differently ------------------ */

/* Ops whose half outputs are copies, picks or exact results of their
 * inputs (the table's `exact`): no implementation rounds them, so jitter
 * leaves them alone (and the control ops, whose outputs come from bodies
 * already jittered). */
static bool ev_jitter_skips(const IrNode *n)
{
    return !ir_domain_norm(n->domain)[0] && (os_op_flags("", n->op_type) & OS_F_EXACT);
}

/* One element in EV_JITTER_ONE_IN moves away from zero, one toward it,
 * the rest stay. Why so few: two correct runtimes round alike on most
 * elements (their kernels differ only where they fuse or widen), and
 * moving every element piles up noise no runtime makes; yet among the
 * thousands of near ties of a detector's scores, moving one in eight
 * still reorders some. */
#define EV_JITTER_ONE_IN 16

/* One element's bits moved one unit in the last place away from or
 * toward zero, or left, at random (z); zero, the largest finite value
 * (away) and Inf/NaN stay (exp_mask: the exponent bits of the type). */
static uint16_t ev_jitter_bits(uint16_t h, uint16_t exp_mask, uint64_t z)
{
    uint16_t mag = h & 0x7fff;
    z %= EV_JITTER_ONE_IN;
    if (mag == 0 || (mag & exp_mask) == exp_mask || (z != 1 && z != 2))
        return h;
    if (z == 1)
        return mag + 1 == exp_mask ? h : (uint16_t)(h + 1);   /* away */
    return (uint16_t)(h - 1);                                 /* toward */
}

/* out[]'s float16 and bfloat16 tensors, each element moved as
 * ev_jitter_bits says (a shared value is copied first): EvOptions.jitter. */
static int ev_jitter(EvRun *r, const IrNode *n, EvValue **out, IrError *err)
{
    if (!r->opt.jitter || ev_jitter_skips(n))
        return 0;
    for (size_t i = 0; i < n->n_out; i++) {
        EvValue *x = out[i];
        if (!x || x->kind != EV_TENSOR ||
            (x->dtype != IR_FLOAT16 && x->dtype != IR_BFLOAT16))
            continue;
        if (x->refs > 1) {
            EvValue *c = ev_tensor_copy(x, err);
            if (!c)
                return -1;
            ev_unref(x);
            out[i] = x = c;
        }
        uint16_t mask = x->dtype == IR_FLOAT16 ? 0x7c00 : 0x7f80;
        uint16_t *d = x->data;
        for (size_t k = 0; k < x->numel; k++) {
            uint64_t z = (r->jitter += 0x9e3779b97f4a7c15ull);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            d[k] = ev_jitter_bits(d[k], mask, z ^ (z >> 27));
        }
    }
    return 0;
}

static int ev_node(EvRun *r, EvFrame *f, EvScope *s, const IrFunction *fn,
                   IrNode *n, IrError *err)
{
    if (ev_tick(r, n, err))
        return -1;
    EvValue **in = mem_array(n->n_in + 1, sizeof *in);
    EvValue **out = mem_array(n->n_out + 1, sizeof *out);
    int rc = 0;
    for (size_t i = 0; i < n->n_in && !rc; i++) {
        if (!n->in[i])
            continue;
        IrError sub;
        in[i] = ev_lookup(r, f, n->in[i], &sub);
        if (!in[i]) {
            char label[200];
            dg_node_label(n, 0, label, sizeof label);
            rc = ir_fail(err, "%s: input %zu: %s", label, i, sub.msg);
        }
    }
    const IrFunction *callee = rc ? NULL : ir_model_function(r->m, n);
    if (!rc)
        rc = callee ? ev_call_function(r, s, callee, n, in, out, err)
                    : ev_call_kernel(r, f, s, fn, n, in, out, err);
    if (!rc && !callee)
        rc = ev_jitter(r, n, out, err);
    if (!rc && r->opt.watch && !fn && n->graph == r->m->graph &&
        r->opt.watch(r->opt.watch_arg, n, out))
        rc = ir_fail(err, "node '%s': the run was stopped after it", n->name ? n->name : "");
    for (size_t i = 0; i < n->n_out; i++) {
        if (!rc && n->out[i])
            ev_frame_set(f, n->out[i], out[i]);
        else
            ev_unref(out[i]);
    }
    free(in);
    free(out);
    return rc;
}

/* Position of a node in its graph, to find each value's last user. */
typedef struct EvPos {
    const IrNode *key;
    size_t idx;
    UT_hash_handle hh;
} EvPos;

/* The top-level node of g that holds use u (the user itself, or the node
 * owning the subgraph it sits in); NULL when u is an output of g or lies
 * outside g. */
static const IrNode *ev_use_holder(const IrGraph *g, const IrUse *u)
{
    const IrNode *n = u->node;
    if (!n) {
        if (u->graph == g)
            return NULL;
        n = u->graph ? u->graph->owner : NULL;
    }
    while (n && n->graph != g)
        n = n->graph ? n->graph->owner : NULL;
    return n;
}

/* Index of the last node of g that needs v, or -1 when v must live until
 * the graph ends (a graph output, a use that cannot be placed, none). */
static long ev_last_use(const IrGraph *g, const IrValue *v, EvPos *pos)
{
    long last = -1;
    for (size_t k = 0; k < v->n_uses; k++) {
        const IrNode *n = ev_use_holder(g, &v->uses[k]);
        EvPos *p = NULL;
        if (n)
            HASH_FIND_PTR(pos, &n, p);
        if (!p)
            return -1;
        if ((long)p->idx > last)
            last = (long)p->idx;
    }
    return last;
}

/* For each node position, the values of g whose last user it is: they are
 * dropped from the frame right after it runs, so that a large model keeps
 * only the activations still needed. */
static IrPtrList *ev_drops_build(const IrGraph *g, size_t *n_nodes)
{
    EvPos *pos = NULL, *p, *tmp;
    size_t i = 0;
    for (const IrNode *n = g->first; n; n = n->next, i++) {
        p = mem_alloc(sizeof *p);
        p->key = n;
        p->idx = i;
        HASH_ADD_PTR(pos, key, p);
    }
    IrPtrList *at = mem_array(i + 1, sizeof *at);
    for (const IrValue *v = g->values; v; v = v->hh.next) {
        if (v->kind == IR_VAL_INIT || v->kind == IR_VAL_UNDEF || v->init ||
            ir_value_is_graph_output(v))
            continue;
        long last = ev_last_use(g, v, pos);
        if (last >= 0)
            ir_ptrlist_push(&at[last], (void *)v);
    }
    HASH_ITER(hh, pos, p, tmp) {
        HASH_DEL(pos, p);
        free(p);
    }
    *n_nodes = i;
    return at;
}

static void ev_frame_drop(EvFrame *f, const IrValue *key)
{
    EvSlot *s;
    HASH_FIND_PTR(f->slots, &key, s);
    if (s) {
        HASH_DEL(f->slots, s);
        ev_unref(s->v);
        free(s);
    }
}

static int ev_graph(EvRun *r, EvFrame *f, EvScope *s, const IrFunction *fn,
                    IrGraph *g, IrError *err)
{
    EvDrops *d;
    HASH_FIND_PTR(r->drops, &g, d);
    if (!d) {
        d = mem_alloc(sizeof *d);
        d->key = g;
        d->at = ev_drops_build(g, &d->n_nodes);
        HASH_ADD_PTR(r->drops, key, d);
    }
    size_t i = 0;
    int rc = 0;
    for (IrNode *n = g->first; n && !rc; n = n->next, i++) {
        rc = ev_node(r, f, s, fn, n, err);
        if (!rc && r->opt.progress && g == r->m->graph)
            ++*r->opt.progress;
        for (size_t k = 0; !rc && i < d->n_nodes && k < d->at[i].n; k++)
            ev_frame_drop(f, d->at[i].p[k]);
    }
    return rc;
}

static void ev_run_free(EvRun *r)
{
    EvInit *e, *etmp;
    HASH_ITER(hh, r->inits, e, etmp) {
        HASH_DEL(r->inits, e);
        ev_unref(e->v);
        free(e);
    }
    ev_blas_release(r->blas_was);
    EvDrops *d, *dtmp;
    HASH_ITER(hh, r->drops, d, dtmp) {
        HASH_DEL(r->drops, d);
        for (size_t k = 0; k < d->n_nodes; k++)
            free(d->at[k].p);
        free(d->at);
        free(d);
    }
    ev_budget_pop(&r->budget);
}

/* ---- the model --------------------------------------------------------- */

size_t ev_model_feeds(const IrModel *m, IrValueInfo ***feeds)
{
    const IrGraph *g = m->graph;
    size_t n_inputs = g ? g->inputs.n : 0;   /* no graph: nothing to feed */
    IrValueInfo **list = mem_array(n_inputs + 1, sizeof *list);
    size_t n = 0;
    for (size_t k = 0; k < n_inputs; k++) {
        IrValueInfo *vi = g->inputs.p[k];
        if (!vi->value->init)
            list[n++] = vi;
    }
    *feeds = list;
    return n;
}

static const char *ev_kind_name(EvKind k)
{
    switch (k) {
    case EV_TENSOR: return "a tensor";
    case EV_SEQUENCE: return "a sequence";
    case EV_OPTIONAL: return "an optional";
    default: return "a map";
    }
}

/* A fed value against the input's declared type: kind, element type,
 * rank and every fixed dim. */
static int ev_check_feed(const IrValueInfo *vi, const EvValue *v, IrError *err)
{
    const IrType *t = vi->type;
    const char *name = vi->value->name;
    if (!t)
        return 0;
    EvKind want = t->kind == IR_TYPE_SEQUENCE ? EV_SEQUENCE
                : t->kind == IR_TYPE_OPTIONAL ? EV_OPTIONAL
                : t->kind == IR_TYPE_MAP ? EV_MAP : EV_TENSOR;
    if (t->kind == IR_TYPE_OPTIONAL && v->kind != EV_OPTIONAL)
        return 0;   /* a present value may stand for an optional */
    if (v->kind != want)
        return ir_fail(err, "input '%s': got %s, the model declares %s", name,
                       ev_kind_name(v->kind), ev_kind_name(want));
    if (want != EV_TENSOR || t->kind != IR_TYPE_TENSOR)
        return 0;
    if (t->has_elem_type && t->elem_type != v->dtype) {
        const char *a = ir_dtype_name(v->dtype), *b = ir_dtype_name(t->elem_type);
        return ir_fail(err, "input '%s': element type %s, the model declares %s",
                       name, a ? a : "?", b ? b : "?");
    }
    if (!t->shape)
        return 0;
    if (t->shape->rank != v->rank)
        return ir_fail(err, "input '%s': rank %zu, the model declares %zu",
                       name, v->rank, t->shape->rank);
    for (size_t d = 0; d < v->rank; d++) {
        const IrDim *dim = &t->shape->dims[d];
        if (dim->kind == IR_DIM_VALUE && dim->value != v->dims[d])
            return ir_fail(err, "input '%s': dim %zu is %lld, the model "
                           "declares %lld", name, d, (long long)v->dims[d],
                           (long long)dim->value);
    }
    return 0;
}

static int ev_bind_feeds(IrModel *m, EvFrame *f, size_t n_in,
                         EvValue *const *in, IrError *err)
{
    IrGraph *g = m->graph;
    IrValueInfo **feeds;
    size_t n_feeds = ev_model_feeds(m, &feeds);
    bool all = n_in == g->inputs.n && n_in != n_feeds;
    size_t want = all ? g->inputs.n : n_feeds;
    int rc = 0;
    if (n_in != want)
        rc = ir_fail(err, "the model has %zu inputs to feed, %zu were given",
                     n_feeds, n_in);
    for (size_t k = 0; k < n_in && !rc; k++) {
        IrValueInfo *vi = all ? g->inputs.p[k] : feeds[k];
        if (!in[k])
            continue;
        rc = ev_check_feed(vi, in[k], err);
        if (!rc)
            ev_frame_set(f, vi->value, ev_ref(in[k]));
    }
    free(feeds);
    return rc;
}

int ev_node_run(IrModel *m, const IrFunction *fn, IrNode *n, EvValue *const *in,
                EvValue **out, IrError *err)
{
    EvRun r = {.m = m};
    r.rng = 0x6f6e6e78636f6e76ull;
    ev_limits_start(&r);
    EvFrame f = {NULL, NULL};
    const IrFunction *callee = ir_model_function(m, n);
    EvValue **ins = (EvValue **)in;
    int rc = callee ? ev_call_function(&r, NULL, callee, n, ins, out, err)
                    : ev_call_kernel(&r, &f, NULL, fn, n, ins, out, err);
    ev_frame_clear(&f);
    ev_run_free(&r);
    if (rc)
        for (size_t i = 0; i < n->n_out; i++) {
            ev_unref(out[i]);
            out[i] = NULL;
        }
    return rc;
}

int ev_prove_node(IrModel *m, IrNode *n, const IrTensor *const *in, IrTensor **out)
{
    EvValue **ev_in = mem_array(n->n_in ? n->n_in : 1, sizeof *ev_in);
    EvValue **ev_out = mem_array(n->n_out ? n->n_out : 1, sizeof *ev_out);
    IrError err;
    int rc = 0;
    for (size_t i = 0; i < n->n_in && rc == 0; i++)
        if (in[i] && !(ev_in[i] = ev_from_ir_tensor(in[i], &err)))
            rc = -1;
    if (rc == 0)
        rc = ev_node_run(m, NULL, n, ev_in, ev_out, &err);
    for (size_t i = 0; i < n->n_out; i++) {
        const EvValue *o = ev_out[i];
        out[i] = rc == 0 && o && o->kind == EV_TENSOR
                     ? ev_to_ir_tensor(o, n->out[i] ? n->out[i]->name : NULL) : NULL;
        ev_unref(ev_out[i]);
    }
    for (size_t i = 0; i < n->n_in; i++)
        ev_unref(ev_in[i]);
    free(ev_in);
    free(ev_out);
    return rc;
}

int ev_model_run(IrModel *m, const EvOptions *opt, size_t n_in,
                 EvValue *const *in, EvValue ***out, size_t *n_out,
                 IrError *err)
{
    *out = NULL;
    *n_out = 0;
    if (!m->graph)
        return ir_fail(err, "the model has no graph");
    EvRun r = {.m = m};
    if (opt)
        r.opt = *opt;
    r.rng = r.opt.seed ? r.opt.seed : 0x6f6e6e78636f6e76ull;
    r.jitter = r.opt.jitter;
    ev_limits_start(&r);
    /* The fed values are live for the whole run: they count. */
    for (size_t k = 0; k < n_in; k++)
        r.budget.live += in[k] ? ev_value_bytes(in[k]) : 0;
    EvFrame f = {NULL, NULL};
    IrGraph *g = m->graph;
    size_t n = g->outputs.n;
    EvValue **res = mem_array(n + 1, sizeof *res);
    int rc = ev_bind_feeds(m, &f, n_in, in, err);
    if (!rc)
        rc = ev_graph(&r, &f, NULL, NULL, g, err);
    if (!rc)
        rc = ev_collect_outputs(&r, &f, g, n, res, err);
    /* An output that is an initializer borrows the model's bytes; the
     * caller may free the model before the outputs. */
    for (size_t k = 0; !rc && k < n; k++) {
        EvValue *own = ev_value_own(res[k], err);
        ev_unref(res[k]);
        res[k] = own;
        if (!own && k < g->outputs.n) {
            for (size_t j = 0; j < n; j++) {
                ev_unref(res[j]);
                res[j] = NULL;
            }
            rc = -1;
        }
    }
    ev_frame_clear(&f);
    ev_run_free(&r);
    if (rc) {
        free(res);
        return -1;
    }
    *out = res;
    *n_out = n;
    return 0;
}
