/* Control flow: If, Loop, Scan (8, and 9 onwards) and SequenceMap, all
 * running a body graph through ev_run_subgraph.
 *
 * Ownership: every value a body returns is a new reference. The kernels
 * keep them in ev_tmp arrays and release what they still hold on every
 * exit path (the ev_*_free helpers), so a failing iteration leaks nothing.
 *
 * Scan outputs are stacked along a new axis from the per-iteration values,
 * which must all have one shape and type. When there are no iterations the
 * shape comes from the body's declared output type (unknown dims count as
 * 0, an unknown rank as a scalar), so that the result is still an empty
 * tensor of the right element type.
 *
 * Loop follows the spec's table: M absent and cond absent loops until the
 * evaluator's iteration bound stops it with an error; a cond input that is
 * absent makes the body's condition output ignored (the body still gets
 * `true`). Scan-8 has a leading batch axis on states and scan inputs, and
 * optional sequence_lens; a scan output's steps past a batch entry's length
 * are zeros. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

/* ---- helpers ---------------------------------------------------------- */

/* A growable list owning references to values. */
typedef struct EvList {
    size_t n, cap;
    EvValue **v;
} EvList;

static void ev_list_push(EvList *l, EvValue *v)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = mem_grow(l->v, l->cap, sizeof *l->v);
    }
    l->v[l->n++] = v;
}

static void ev_list_free(EvList *l)
{
    for (size_t i = 0; i < l->n; i++)
        ev_unref(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Releases n owned values of an array, leaving NULLs. */
static void ev_unref_all(EvValue **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        ev_unref(v[i]);
        v[i] = NULL;
    }
}

static IrGraph *ev_body(EvCtx *c, const char *name)
{
    IrGraph *g = ev_attr_graph(c, name);
    if (!g)
        ev_fail(c, "attribute '%s' (a graph) is required", name);
    return g;
}

static const IrType *ev_body_out_type(const IrGraph *g, size_t i)
{
    const IrValueInfo *vi = i < g->outputs.n ? g->outputs.p[i] : NULL;
    return vi ? vi->type : NULL;
}

/* Hands output i to the node, or drops it when the node does not name it. */
static void ev_give(EvCtx *c, size_t i, EvValue *v)
{
    if (i < c->n_out && ev_has_out(c, i))
        ev_out_set(c, i, v);
    else
        ev_unref(v);
}

/* A one-element tensor read as a truth value. */
static int ev_read_bool(EvCtx *c, const EvValue *v, const char *what,
                        bool *out)
{
    if (!v || v->kind != EV_TENSOR || v->numel != 1 || v->dtype == IR_STRING)
        return ev_fail(c, "%s must be a tensor of one element", what);
    *out = ev_dtype_is_float(v->dtype) ? ev_get_f(v, 0) != 0
                                       : ev_get_i(v, 0) != 0;
    return 0;
}

static EvValue *ev_scalar_i64(int64_t x)
{
    EvValue *v = ev_tensor_new(IR_INT64, 0, NULL, NULL);
    ev_set_i(v, 0, x);
    return v;
}

static EvValue *ev_scalar_bool(bool x)
{
    EvValue *v = ev_tensor_new(IR_BOOL, 0, NULL, NULL);
    ev_set_i(v, 0, x);
    return v;
}

/* The slice of x at index idx of axis ax, that axis removed. */
static EvValue *ev_take_at(EvCtx *c, const EvValue *x, size_t ax, size_t idx)
{
    int64_t dims[EV_MAX_RANK];
    for (size_t d = 0, r = 0; d < x->rank; d++)
        if (d != ax)
            dims[r++] = x->dims[d];
    IrError e;
    EvValue *o = ev_tensor_new(x->dtype, x->rank - 1, dims, &e);
    if (!o) {
        ev_fail(c, "%s", e.msg);
        return NULL;
    }
    size_t outer = ev_dims_prod(x->dims, 0, ax);
    size_t inner = ev_dims_prod(x->dims, ax + 1, x->rank);
    size_t len = (size_t)x->dims[ax];
    for (size_t o_ = 0; o_ < outer; o_++)
        ev_copy_elems(o, o_ * inner, x, (o_ * len + idx) * inner, inner);
    return o;
}

/* Element type and shape of a declared per-iteration output type. */
static int ev_decl_shape(EvCtx *c, const IrType *t, int32_t *dtype,
                         size_t *rank, int64_t *dims)
{
    *dtype = IR_FLOAT;
    *rank = 0;
    if (!t)
        return 0;
    if (t->kind != IR_TYPE_TENSOR)
        return ev_fail(c, "scan outputs must be tensors");
    if (t->has_elem_type && ev_dtype_size(t->elem_type))
        *dtype = t->elem_type;
    if (!t->shape)
        return 0;
    if (t->shape->rank > EV_MAX_RANK)
        return ev_fail(c, "a scan output's declared rank is too large");
    *rank = t->shape->rank;
    for (size_t d = 0; d < *rank; d++) {
        const IrDim *dm = &t->shape->dims[d];
        dims[d] = dm->kind == IR_DIM_VALUE && dm->value >= 0 ? dm->value : 0;
    }
    return 0;
}

/* The common type and shape S of n per-iteration values (NULL entries
 * skipped), or of `decl` when there is none. */
static int ev_stack_shape(EvCtx *c, EvValue *const *items, size_t n,
                          const IrType *decl, int32_t *dtype, size_t *r,
                          int64_t *s)
{
    const EvValue *ref = NULL;
    for (size_t t = 0; t < n && !ref; t++)
        ref = items[t];
    if (!ref)
        return ev_decl_shape(c, decl, dtype, r, s);
    if (ref->kind != EV_TENSOR)
        return ev_fail(c, "scan outputs must be tensors");
    *dtype = ref->dtype;
    *r = ref->rank;
    if (*r)
        memcpy(s, ref->dims, *r * sizeof *s);
    for (size_t t = 0; t < n; t++) {
        const EvValue *v = items[t];
        if (v && (v->kind != EV_TENSOR || v->dtype != *dtype ||
                  v->rank != *r || (*r && memcmp(v->dims, s, *r * sizeof *s))))
            return ev_fail(c, "a scan output changes type or shape across "
                           "iterations");
    }
    return 0;
}

/* Stacks n per-iteration values of one shape S (NULL entries stand for
 * zeros) into S with the lead dims (product n) inserted at `axis`; entry t
 * goes to flat lead position t, or n-1-t when rev. `decl` gives S when no
 * entry exists. */
static EvValue *ev_stack(EvCtx *c, EvValue *const *items, size_t n,
                         const int64_t *lead, size_t nlead, int64_t axis,
                         bool rev, const IrType *decl)
{
    int32_t dtype = IR_FLOAT;
    size_t r = 0, ax = 0;
    int64_t s[EV_MAX_RANK], dims[EV_MAX_RANK];
    if (ev_stack_shape(c, items, n, decl, &dtype, &r, s) ||
        ev_axis(c, "scan output axis", axis, r, 1, &ax))
        return NULL;
    if (r + nlead > EV_MAX_RANK) {
        ev_fail(c, "a scan output's rank is too large");
        return NULL;
    }
    memcpy(dims, s, ax * sizeof *s);
    memcpy(dims + ax, lead, nlead * sizeof *lead);
    memcpy(dims + ax + nlead, s + ax, (r - ax) * sizeof *s);
    IrError e;
    EvValue *o = ev_tensor_new(dtype, r + nlead, dims, &e);
    if (!o) {
        ev_fail(c, "%s", e.msg);
        return NULL;
    }
    size_t outer = ev_dims_prod(s, 0, ax), chunk = ev_dims_prod(s, ax, r);
    for (size_t o_ = 0; o_ < outer; o_++)
        for (size_t t = 0; t < n; t++)
            if (items[t])
                ev_copy_elems(o, (o_ * n + (rev ? n - 1 - t : t)) * chunk,
                              items[t], o_ * chunk, chunk);
    return o;
}

static int ev_check_iters(EvCtx *c, uint64_t done)
{
    uint64_t max = ev_max_loop_iters(c);
    if (done >= max)
        return ev_fail(c, "stopped after %llu iterations, the evaluator's "
                       "bound", (unsigned long long)max);
    return 0;
}

/* ---- If --------------------------------------------------------------- */

static int ev_if(EvCtx *c)
{
    bool cond;
    if (ev_read_bool(c, ev_in(c, 0), "cond", &cond))
        return -1;
    IrGraph *g = ev_body(c, cond ? "then_branch" : "else_branch");
    if (!g)
        return -1;
    size_t n = g->outputs.n;
    if (n < c->n_out)
        return ev_fail(c, "the %s branch has %zu outputs, the node %zu",
                       cond ? "then" : "else", n, c->n_out);
    EvValue **out = ev_tmp(c, n + 1, sizeof *out);
    if (ev_run_subgraph(c, g, 0, NULL, n, out))
        return -1;
    for (size_t i = 0; i < n; i++)
        ev_give(c, i, out[i]);
    return 0;
}

/* ---- Loop ------------------------------------------------------------- */

typedef struct EvLoop {
    IrGraph *body;
    size_t n_car, n_scan;
    EvValue **vals;     /* loop-carried values (owned) */
    EvList *scans;      /* per scan output, each iteration's value */
} EvLoop;

static void ev_loop_free(EvLoop *L)
{
    ev_unref_all(L->vals, L->n_car);
    for (size_t k = 0; L->scans && k < L->n_scan; k++)
        ev_list_free(&L->scans[k]);
}

static int ev_loop_iterate(EvCtx *c, EvLoop *L, bool has_trip, int64_t trip,
                           bool has_cond, bool cond)
{
    size_t nb = L->body->outputs.n, nin = 2 + L->n_car;
    EvValue **bin = ev_tmp(c, nin, sizeof *bin);
    EvValue **bout = ev_tmp(c, nb, sizeof *bout);
    for (int64_t i = 0; (!has_trip || i < trip) && cond; i++) {
        if (ev_check_iters(c, (uint64_t)i))
            return -1;
        bin[0] = ev_scalar_i64(i);
        bin[1] = ev_scalar_bool(cond);
        memcpy(bin + 2, L->vals, L->n_car * sizeof *bin);
        memset(bout, 0, nb * sizeof *bout);
        int rc = ev_run_subgraph(c, L->body, nin, bin, nb, bout);
        ev_unref(bin[0]);
        ev_unref(bin[1]);
        if (rc)
            return -1;
        bool next = true;
        rc = has_cond ? ev_read_bool(c, bout[0], "the body's condition", &next)
                      : 0;
        ev_unref(bout[0]);
        for (size_t j = 0; j < L->n_car; j++) {
            ev_unref(L->vals[j]);
            L->vals[j] = bout[1 + j];
        }
        for (size_t k = 0; k < L->n_scan; k++)
            ev_list_push(&L->scans[k], bout[1 + L->n_car + k]);
        if (rc)
            return -1;
        cond = next;
    }
    return 0;
}

static int ev_loop_finish(EvCtx *c, EvLoop *L)
{
    for (size_t j = 0; j < L->n_car; j++) {
        ev_give(c, j, L->vals[j]);
        L->vals[j] = NULL;
    }
    for (size_t k = 0; k < L->n_scan; k++) {
        size_t i = L->n_car + k;
        if (i >= c->n_out || !ev_has_out(c, i))
            continue;
        int64_t n = (int64_t)L->scans[k].n;
        EvValue *o = ev_stack(c, L->scans[k].v, L->scans[k].n, &n, 1, 0,
                              false, ev_body_out_type(L->body, 1 + i));
        if (!o)
            return -1;
        ev_give(c, i, o);
    }
    return 0;
}

static int ev_loop(EvCtx *c)
{
    EvLoop L = {0};
    L.body = ev_body(c, "body");
    if (!L.body)
        return -1;
    L.n_car = c->n_in > 2 ? c->n_in - 2 : 0;
    if (L.body->inputs.n != 2 + L.n_car)
        return ev_fail(c, "the body has %zu inputs, the loop gives %zu",
                       L.body->inputs.n, 2 + L.n_car);
    if (L.body->outputs.n < 1 + L.n_car)
        return ev_fail(c, "the body has %zu outputs, fewer than the %zu "
                       "the loop needs", L.body->outputs.n, 1 + L.n_car);
    L.n_scan = L.body->outputs.n - 1 - L.n_car;
    if (c->n_out > L.n_car + L.n_scan)
        return ev_fail(c, "the node has more outputs than the body gives");
    bool has_trip = ev_in(c, 0) != NULL, has_cond = ev_in(c, 1) != NULL;
    bool cond = true;
    int64_t trip = 0;
    if (has_trip) {
        const EvValue *m = ev_in(c, 0);
        if (m->kind != EV_TENSOR || m->numel != 1 || !ev_dtype_is_int(m->dtype))
            return ev_fail(c, "M must be an integer scalar");
        trip = ev_get_i(m, 0);
    }
    if (has_cond && ev_read_bool(c, ev_in(c, 1), "cond", &cond))
        return -1;
    for (size_t j = 0; j < L.n_car; j++)
        if (!ev_in(c, 2 + j))
            return ev_fail(c, "loop-carried input %zu is missing", j);
    L.vals = ev_tmp(c, L.n_car + 1, sizeof *L.vals);
    L.scans = ev_tmp(c, L.n_scan + 1, sizeof *L.scans);
    for (size_t j = 0; j < L.n_car; j++)
        L.vals[j] = ev_ref(ev_in(c, 2 + j));
    int rc = ev_loop_iterate(c, &L, has_trip, trip, has_cond, cond);
    if (!rc)
        rc = ev_loop_finish(c, &L);
    ev_loop_free(&L);
    return rc;
}

/* ---- Scan 9+ ---------------------------------------------------------- */

typedef struct EvScan {
    IrGraph *body;
    size_t n_st, n_in, n_so;  /* states, scan inputs, scan outputs */
    size_t *in_ax;            /* per scan input: its axis */
    const int64_t *in_dir, *out_ax, *out_dir; /* NULL = all 0 */
    EvValue **st;             /* current states (owned) */
    EvValue **bin;            /* body inputs; slices owned */
    EvList *scans;
} EvScan;

static void ev_scan_free(EvScan *S)
{
    ev_unref_all(S->st, S->n_st);
    if (S->bin)
        ev_unref_all(S->bin + S->n_st, S->n_in);
    for (size_t k = 0; S->scans && k < S->n_so; k++)
        ev_list_free(&S->scans[k]);
}

/* A list attribute of `want` entries, or NULL when absent. */
static int ev_list_attr(EvCtx *c, const char *name, size_t want,
                        const int64_t **out)
{
    long n = ev_attr_ints(c, name, out);
    if (n >= 0 && (size_t)n != want)
        return ev_fail(c, "'%s' has %ld entries, expected %zu", name, n, want);
    return 0;
}

/* Checks the scan inputs; *len = their common length along the axes. */
static int ev_scan_inputs(EvCtx *c, EvScan *S, size_t *len)
{
    const int64_t *axes;
    if (ev_list_attr(c, "scan_input_axes", S->n_in, &axes) ||
        ev_list_attr(c, "scan_input_directions", S->n_in, &S->in_dir) ||
        ev_list_attr(c, "scan_output_axes", S->n_so, &S->out_ax) ||
        ev_list_attr(c, "scan_output_directions", S->n_so, &S->out_dir))
        return -1;
    S->in_ax = ev_tmp(c, S->n_in + 1, sizeof *S->in_ax);
    for (size_t j = 0; j < S->n_in; j++) {
        EvValue *x = ev_in_tensor(c, S->n_st + j);
        int64_t a = axes ? axes[j] : 0;
        if (!x)
            return -1;
        if (a < 0 && c->ver < 11)
            return ev_fail(c, "negative scan_input_axes need opset 11");
        if (ev_axis(c, "scan_input_axes", a, x->rank, 0, &S->in_ax[j]))
            return -1;
        size_t l = (size_t)x->dims[S->in_ax[j]];
        if (j && l != *len)
            return ev_fail(c, "scan input %zu has length %zu, input 0 has "
                           "%zu", j, l, *len);
        *len = l;
    }
    for (size_t k = 0; S->out_ax && k < S->n_so; k++)
        if (S->out_ax[k] < 0 && c->ver < 11)
            return ev_fail(c, "negative scan_output_axes need opset 11");
    return 0;
}

static int ev_scan_iterate(EvCtx *c, EvScan *S, size_t len)
{
    size_t nb = S->body->outputs.n;
    EvValue **bout = ev_tmp(c, nb, sizeof *bout);
    for (size_t t = 0; t < len; t++) {
        if (ev_check_iters(c, t))
            return -1;
        memcpy(S->bin, S->st, S->n_st * sizeof *S->bin);
        for (size_t j = 0; j < S->n_in; j++) {
            size_t idx = S->in_dir && S->in_dir[j] ? len - 1 - t : t;
            S->bin[S->n_st + j] = ev_take_at(c, ev_in(c, S->n_st + j),
                                             S->in_ax[j], idx);
            if (!S->bin[S->n_st + j])
                return -1;
        }
        memset(bout, 0, nb * sizeof *bout);
        int rc = ev_run_subgraph(c, S->body, S->n_st + S->n_in, S->bin, nb,
                                 bout);
        ev_unref_all(S->bin + S->n_st, S->n_in);
        if (rc)
            return -1;
        for (size_t i = 0; i < S->n_st; i++) {
            ev_unref(S->st[i]);
            S->st[i] = bout[i];
        }
        for (size_t k = 0; k < S->n_so; k++)
            ev_list_push(&S->scans[k], bout[S->n_st + k]);
    }
    return 0;
}

static int ev_scan_finish(EvCtx *c, EvScan *S, size_t len)
{
    for (size_t i = 0; i < S->n_st; i++) {
        ev_give(c, i, S->st[i]);
        S->st[i] = NULL;
    }
    int64_t lead = (int64_t)len;
    for (size_t k = 0; k < S->n_so; k++) {
        size_t i = S->n_st + k;
        if (i >= c->n_out || !ev_has_out(c, i))
            continue;
        EvValue *o = ev_stack(c, S->scans[k].v, S->scans[k].n, &lead, 1,
                              S->out_ax ? S->out_ax[k] : 0,
                              S->out_dir && S->out_dir[k],
                              ev_body_out_type(S->body, i));
        if (!o)
            return -1;
        ev_give(c, i, o);
    }
    return 0;
}

/* Scan-8: batch axis 0 on states and scan inputs, time axis 1 on scan
 * inputs, sequence_lens per batch entry. */
static int ev_scan8(EvCtx *c);

static int ev_scan(EvCtx *c)
{
    if (c->ver < 9)
        return ev_scan8(c);
    EvScan S = {0};
    S.body = ev_body(c, "body");
    int64_t m = ev_attr_i_or(c, "num_scan_inputs", -1);
    if (!S.body)
        return -1;
    if (m < 1 || (size_t)m > c->n_in)
        return ev_fail(c, "num_scan_inputs %lld does not fit %zu inputs",
                       (long long)m, c->n_in);
    S.n_in = (size_t)m;
    S.n_st = c->n_in - S.n_in;
    if (S.body->inputs.n != c->n_in)
        return ev_fail(c, "the body has %zu inputs, the node %zu",
                       S.body->inputs.n, c->n_in);
    if (S.body->outputs.n < S.n_st || c->n_out > S.body->outputs.n)
        return ev_fail(c, "the body's %zu outputs do not match the node's",
                       S.body->outputs.n);
    S.n_so = S.body->outputs.n - S.n_st;
    size_t len = 0;
    for (size_t i = 0; i < S.n_st; i++)
        if (!ev_in(c, i))
            return ev_fail(c, "state input %zu is missing", i);
    if (ev_scan_inputs(c, &S, &len))
        return -1;
    S.st = ev_tmp(c, S.n_st + 1, sizeof *S.st);
    S.bin = ev_tmp(c, c->n_in + 1, sizeof *S.bin);
    S.scans = ev_tmp(c, S.n_so + 1, sizeof *S.scans);
    for (size_t i = 0; i < S.n_st; i++)
        S.st[i] = ev_ref(ev_in(c, i));
    int rc = ev_scan_iterate(c, &S, len);
    if (!rc)
        rc = ev_scan_finish(c, &S, len);
    ev_scan_free(&S);
    return rc;
}

/* ---- Scan 8 ----------------------------------------------------------- */

typedef struct EvScan8 {
    IrGraph *body;
    size_t n_st, n_in, n_so, batch, max_len;
    const int64_t *dir;  /* NULL = all forward */
    EvValue **fin;       /* [n_st][batch] final states */
    EvValue **outs;      /* [n_so][batch * max_len] per-step values */
    EvValue **st, **xb, **bin, **bout;
} EvScan8;

static void ev_scan8_free(EvScan8 *S)
{
    ev_unref_all(S->fin, S->n_st * S->batch);
    ev_unref_all(S->outs, S->n_so * S->batch * S->max_len);
    ev_unref_all(S->st, S->n_st);
    ev_unref_all(S->xb, S->n_in);
    if (S->bin)
        ev_unref_all(S->bin + S->n_st, S->n_in);
}

/* Batch size, time length and per-entry lengths; checks shapes. */
static int ev_scan8_shapes(EvCtx *c, EvScan8 *S, int64_t **lens)
{
    for (size_t j = 0; j < S->n_in; j++) {
        EvValue *x = ev_in_tensor(c, 1 + S->n_st + j);
        if (!x)
            return -1;
        if (x->rank < 2)
            return ev_fail(c, "scan input %zu needs batch and time axes", j);
        if (j && ((size_t)x->dims[0] != S->batch ||
                  (size_t)x->dims[1] != S->max_len))
            return ev_fail(c, "scan inputs differ in batch or time length");
        S->batch = (size_t)x->dims[0];
        S->max_len = (size_t)x->dims[1];
    }
    for (size_t i = 0; i < S->n_st; i++) {
        EvValue *s = ev_in_tensor(c, 1 + i);
        if (!s)
            return -1;
        if (s->rank < 1 || (size_t)s->dims[0] != S->batch)
            return ev_fail(c, "state %zu must have the batch size %zu as its "
                           "first dim", i, S->batch);
    }
    *lens = ev_tmp(c, S->batch + 1, sizeof **lens);
    EvValue *sl = ev_in(c, 0);
    for (size_t b = 0; b < S->batch; b++)
        (*lens)[b] = (int64_t)S->max_len;
    if (!sl)
        return 0;
    if (sl->kind != EV_TENSOR || !ev_dtype_is_int(sl->dtype) ||
        sl->numel != S->batch)
        return ev_fail(c, "sequence_lens must hold %zu integers", S->batch);
    for (size_t b = 0; b < S->batch; b++) {
        int64_t l = ev_get_i(sl, b);
        if (l < 0 || (uint64_t)l > S->max_len)
            return ev_fail(c, "sequence_lens[%zu] = %lld is outside [0, %zu]",
                           b, (long long)l, S->max_len);
        (*lens)[b] = l;
    }
    return 0;
}

/* Runs the steps of batch entry b. */
static int ev_scan8_entry(EvCtx *c, EvScan8 *S, size_t b, size_t len,
                          uint64_t *done)
{
    size_t nb = S->body->outputs.n;
    for (size_t i = 0; i < S->n_st; i++)
        if (!(S->st[i] = ev_take_at(c, ev_in(c, 1 + i), 0, b)))
            return -1;
    for (size_t j = 0; j < S->n_in; j++)
        if (!(S->xb[j] = ev_take_at(c, ev_in(c, 1 + S->n_st + j), 0, b)))
            return -1;
    for (size_t t = 0; t < len; t++, (*done)++) {
        if (ev_check_iters(c, *done))
            return -1;
        memcpy(S->bin, S->st, S->n_st * sizeof *S->bin);
        for (size_t j = 0; j < S->n_in; j++) {
            size_t idx = S->dir && S->dir[j] ? len - 1 - t : t;
            if (!(S->bin[S->n_st + j] = ev_take_at(c, S->xb[j], 0, idx)))
                return -1;
        }
        memset(S->bout, 0, nb * sizeof *S->bout);
        int rc = ev_run_subgraph(c, S->body, S->n_st + S->n_in, S->bin, nb,
                                 S->bout);
        ev_unref_all(S->bin + S->n_st, S->n_in);
        if (rc)
            return -1;
        for (size_t i = 0; i < S->n_st; i++) {
            ev_unref(S->st[i]);
            S->st[i] = S->bout[i];
        }
        for (size_t k = 0; k < S->n_so; k++)
            S->outs[(k * S->batch + b) * S->max_len + t] = S->bout[S->n_st + k];
    }
    for (size_t i = 0; i < S->n_st; i++) {
        S->fin[i * S->batch + b] = S->st[i];
        S->st[i] = NULL;
    }
    ev_unref_all(S->xb, S->n_in);
    return 0;
}

static int ev_scan8_finish(EvCtx *c, EvScan8 *S)
{
    int64_t lead[2] = {(int64_t)S->batch, (int64_t)S->max_len};
    for (size_t i = 0; i < S->n_st; i++) {
        if (i >= c->n_out || !ev_has_out(c, i))
            continue;
        EvValue *o = S->batch
            ? ev_stack(c, S->fin + i * S->batch, S->batch, lead, 1, 0, false,
                       NULL)
            : ev_ref(ev_in(c, 1 + i));
        if (!o)
            return -1;
        ev_give(c, i, o);
    }
    size_t steps = S->batch * S->max_len;
    for (size_t k = 0; k < S->n_so; k++) {
        size_t i = S->n_st + k;
        if (i >= c->n_out || !ev_has_out(c, i))
            continue;
        EvValue *o = ev_stack(c, S->outs + k * steps, steps, lead, 2, 0,
                              false, ev_body_out_type(S->body, i));
        if (!o)
            return -1;
        ev_give(c, i, o);
    }
    return 0;
}

static int ev_scan8(EvCtx *c)
{
    EvScan8 S = {0};
    S.body = ev_body(c, "body");
    int64_t m = ev_attr_i_or(c, "num_scan_inputs", -1);
    if (!S.body)
        return -1;
    if (m < 1 || c->n_in < 1 || (size_t)m > c->n_in - 1)
        return ev_fail(c, "num_scan_inputs %lld does not fit %zu inputs",
                       (long long)m, c->n_in);
    S.n_in = (size_t)m;
    S.n_st = c->n_in - 1 - S.n_in;
    if (S.body->inputs.n != S.n_st + S.n_in)
        return ev_fail(c, "the body has %zu inputs, the node gives %zu",
                       S.body->inputs.n, S.n_st + S.n_in);
    if (S.body->outputs.n < S.n_st || c->n_out > S.body->outputs.n)
        return ev_fail(c, "the body's %zu outputs do not match the node's",
                       S.body->outputs.n);
    S.n_so = S.body->outputs.n - S.n_st;
    int64_t *lens = NULL;
    if (ev_list_attr(c, "directions", S.n_in, &S.dir) ||
        ev_scan8_shapes(c, &S, &lens))
        return -1;
    /* The step tables are bounded like a tensor, so that empty inputs
     * with huge batch or time dims fail instead of exhausting memory. */
    size_t steps, nfin, cap = EV_MAX_TENSOR_BYTES / sizeof(EvValue *);
    if (!mem_mul_size(S.batch, S.max_len, &steps) ||
        !mem_mul_size(steps, S.n_so, &steps) || steps > cap ||
        !mem_mul_size(S.batch, S.n_st, &nfin) || nfin > cap)
        return ev_fail(c, "too many scan steps");
    S.fin = ev_tmp(c, nfin + 1, sizeof *S.fin);
    S.outs = ev_tmp(c, steps + 1, sizeof *S.outs);
    S.st = ev_tmp(c, S.n_st + 1, sizeof *S.st);
    S.xb = ev_tmp(c, S.n_in + 1, sizeof *S.xb);
    S.bin = ev_tmp(c, S.n_st + S.n_in + 1, sizeof *S.bin);
    S.bout = ev_tmp(c, S.body->outputs.n + 1, sizeof *S.bout);
    uint64_t done = 0;
    int rc = 0;
    for (size_t b = 0; b < S.batch && !rc; b++)
        rc = ev_scan8_entry(c, &S, b, (size_t)lens[b], &done);
    if (!rc)
        rc = ev_scan8_finish(c, &S);
    ev_scan8_free(&S);
    return rc;
}

/* ---- SequenceMap ------------------------------------------------------ */

/* Runs the body once per item: sequence inputs give their i-th item,
 * tensor inputs are passed whole each time. */
static int ev_seqmap_run(EvCtx *c, IrGraph *body, size_t n, EvValue **outs)
{
    size_t nb = body->outputs.n;
    EvValue **bin = ev_tmp(c, c->n_in, sizeof *bin);
    EvValue **bout = ev_tmp(c, nb + 1, sizeof *bout);
    for (size_t i = 0; i < n; i++) {
        if (ev_check_iters(c, i))
            return -1;
        for (size_t j = 0; j < c->n_in; j++) {
            EvValue *v = ev_in(c, j);
            bin[j] = v->kind == EV_SEQUENCE ? v->items[i] : v;
        }
        memset(bout, 0, (nb + 1) * sizeof *bout);
        if (ev_run_subgraph(c, body, c->n_in, bin, nb, bout))
            return -1;
        for (size_t k = 0; k < nb; k++)
            ev_sequence_push(outs[k], bout[k]);
    }
    return 0;
}

static int ev_sequence_map(EvCtx *c)
{
    IrGraph *body = ev_body(c, "body");
    if (!body)
        return -1;
    EvValue *s = ev_in(c, 0);
    if (!s || s->kind != EV_SEQUENCE)
        return ev_fail(c, "input 0 must be a sequence");
    for (size_t j = 1; j < c->n_in; j++) {
        EvValue *v = ev_in(c, j);
        if (!v || (v->kind != EV_SEQUENCE && v->kind != EV_TENSOR))
            return ev_fail(c, "input %zu must be a sequence or a tensor", j);
        if (v->kind == EV_SEQUENCE && v->n_items != s->n_items)
            return ev_fail(c, "input %zu has %zu items, input 0 has %zu", j,
                           v->n_items, s->n_items);
    }
    if (body->inputs.n != c->n_in)
        return ev_fail(c, "the body has %zu inputs, the node %zu",
                       body->inputs.n, c->n_in);
    size_t nb = body->outputs.n;
    if (c->n_out > nb)
        return ev_fail(c, "the node has more outputs than the body gives");
    EvValue **outs = ev_tmp(c, nb + 1, sizeof *outs);
    for (size_t k = 0; k < nb; k++) {
        const IrType *t = ev_body_out_type(body, k);
        outs[k] = ev_sequence_new();
        if (t && t->kind == IR_TYPE_TENSOR)
            outs[k]->elem_type = ir_type_copy(t);
    }
    if (ev_seqmap_run(c, body, s->n_items, outs)) {
        ev_unref_all(outs, nb);
        return -1;
    }
    for (size_t k = 0; k < nb; k++)
        ev_give(c, k, outs[k]);
    return 0;
}

const EvOp ev_ops_control[] = {
    {"", "If", ev_if},
    {"", "Loop", ev_loop},
    {"", "Scan", ev_scan},
    {"", "SequenceMap", ev_sequence_map},
    {NULL, NULL, NULL}
};
