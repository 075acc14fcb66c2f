/*
 * infer/control.c - inference of control flow: If, Loop, Scan and
 * SequenceMap (sequence and optional ops: sequence.c).
 *
 * Control-flow ops carry subgraphs; the driver leaves them to the op
 * function (OS_F_CONTROL), so every function here infers each graph
 * attribute of its node, whatever it can tell about the outputs.
 * A subgraph's output type is what inference found for it, with what
 * that leaves unknown filled from the type the subgraph declares for the
 * output (its signature, like its declared inputs).
 *
 * Loop and Scan states may change shape from one iteration to the next:
 * the body is inferred with the initial state types, then again with the
 * union of those and the body's state outputs, until they hold still (or,
 * after a few passes, with state shapes unknown). Outputs that may be
 * either the initial value or an iteration's value get the union of both
 * (an empty initial sequence adds nothing to it).
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* Passes over a loop body before its states are taken as shape-unknown. */
#define INF_STATE_PASSES 3
/* Subgraph nesting from which a loop body is inferred once, with state
 * shapes unknown, so that nested loops cannot multiply passes without
 * bound. */
#define INF_STATE_DEEP 6

/* ---- types ----------------------------------------------------------- */

/* Whether two dims say the same thing (both unknown, or the same value or
 * symbol). */
static bool inf_dim_equal(const IrDim *a, const IrDim *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == IR_DIM_VALUE)
        return a->value == b->value;
    if (a->kind == IR_DIM_PARAM)
        return a->param && b->param && strcmp(a->param, b->param) == 0;
    return true;
}

static bool inf_shape_equal(const IrShape *a, const IrShape *b)
{
    if (!a || !b)
        return a == b;
    if (a->rank != b->rank)
        return false;
    for (size_t k = 0; k < a->rank; k++)
        if (!inf_dim_equal(&a->dims[k], &b->dims[k]))
            return false;
    return true;
}

/* Whether two types carry the same information (kinds, element types,
 * shapes), at every level. */
static bool inf_type_equal(const IrType *a, const IrType *b)
{
    a = inf_known(a);
    b = inf_known(b);
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || a->has_elem_type != b->has_elem_type ||
        (a->has_elem_type && a->elem_type != b->elem_type) ||
        a->has_key_type != b->has_key_type ||
        (a->has_key_type && a->key_type != b->key_type) ||
        !inf_shape_equal(a->shape, b->shape))
        return false;
    return inf_type_equal(a->elem, b->elem);
}

/* Fills what got (taken) leaves unknown from decl, a declared type; a
 * part that disagrees keeps the inferred value. Returns the result. */
static IrType *inf_type_fill(IrType *got, const IrType *decl)
{
    decl = inf_known(decl);
    if (!decl)
        return got;
    if (!inf_known(got)) {
        ir_type_free(got);
        return inf_type_dup(decl);
    }
    if (got->kind != decl->kind)
        return got;
    if (!got->has_elem_type && decl->has_elem_type) {
        got->has_elem_type = true;
        got->elem_type = decl->elem_type;
    }
    if (!got->shape && decl->shape) {
        got->shape = ir_shape_copy(decl->shape);
        inf_type_clean(got);
    } else if (got->shape && decl->shape && got->shape->rank == decl->shape->rank) {
        for (size_t k = 0; k < got->shape->rank; k++)
            if (got->shape->dims[k].kind == IR_DIM_UNSET)
                inf_dim_copy(&got->shape->dims[k], &decl->shape->dims[k]);
    }
    if (decl->elem)
        got->elem = inf_type_fill(got->elem, decl->elem);
    return got;
}

/* The type of output k of subgraph g after its inference (a new type, or
 * NULL): the inferred one, completed from g's declaration. */
static IrType *inf_graph_out(const IrGraph *g, size_t k)
{
    if (k >= g->outputs.n)
        return NULL;
    const IrValueInfo *vi = g->outputs.p[k];
    IrType *t = vi->value ? inf_type_dup(vi->value->type) : NULL;
    return inf_type_fill(t, vi->type);
}

/* The tracked elements of subgraph g's output k, or NULL. */
static const IrShape *inf_graph_out_symval(const IrGraph *g, size_t k)
{
    if (k >= g->outputs.n)
        return NULL;
    const IrValueInfo *vi = g->outputs.p[k];
    return vi->value ? vi->value->symval : NULL;
}

/* ---- subgraphs --------------------------------------------------------- */

/* The graph the node's own attribute `name` holds, or NULL (a graph
 * referred to by ref_attr_name lives in the caller's scope: not inferred
 * here). */
static IrGraph *inf_attr_graph(const InfCtx *c, const char *name)
{
    const IrAttr *a = ir_node_attr(c->node, name);
    return a ? a->g : NULL;
}

/* Infers loop body g with in[0..n) as its input types, where in[s0+k]
 * (k < ns) are loop states that g's output o0+k replaces after each
 * iteration. The states (owned, updated in place) are widened to the union
 * of all they were given and got back until the body holds for every
 * iteration; after INF_STATE_PASSES, their shapes are dropped instead.
 * A state whose initial value is an empty sequence (empty[k], may be
 * NULL) holds no element whose shape the union must keep: after the first
 * pass it is what the body returned. */
static int inf_body_states(InfCtx *c, IrGraph *g, size_t n, IrType **in,
                           size_t s0, size_t ns, size_t o0, const bool *empty)
{
    bool deep = c->depth >= INF_STATE_DEEP;
    for (int pass = 0;; pass++) {
        bool last = deep || pass + 1 >= INF_STATE_PASSES;
        if (pass > 0)
            ir_graph_clear_inferred(g);
        if (last)
            for (size_t k = 0; k < ns; k++)
                inf_type_strip(in[s0 + k]);
        if (inf_subgraph(c, g, n, (const IrType *const *)in) < 0)
            return -1;
        if (last)
            return 0;
        bool changed = false;
        for (size_t k = 0; k < ns; k++) {
            IrType *o = inf_graph_out(g, o0 + k), *u = NULL;
            if (pass == 0 && empty && empty[k] && o && o->kind == IR_TYPE_SEQUENCE &&
                inf_type_union(in[s0 + k], o, &u) == 0) {
                ir_type_free(u);
                u = o;
                o = NULL;
            } else if (inf_type_union(in[s0 + k], o, &u) < 0) {
                /* the state changes kind (an optional fed back as its
                 * content): no one type describes it, keep the kind */
                u = inf_type_dup(in[s0 + k]);
                inf_type_strip(u);
            }
            ir_type_free(o);
            if (inf_type_equal(u, in[s0 + k])) {
                ir_type_free(u);
            } else {
                ir_type_free(in[s0 + k]);
                in[s0 + k] = u;
                changed = true;
            }
        }
        if (!changed)
            return 0;
    }
}

/* The type of a state output: either the initial value (no iteration ran)
 * or the body's output, so their union (just the body's when the initial
 * value is an empty sequence: no element to describe); when the body
 * changes the state's kind (Loop-16 turning an optional into its
 * content), the body's type. */
static IrType *inf_state_out(const IrType *init, bool empty, IrType *body_out)
{
    IrType *u = NULL;
    if (empty && body_out && body_out->kind == IR_TYPE_SEQUENCE &&
        inf_type_union(init, body_out, &u) == 0) {
        ir_type_free(u);
        return body_out;
    }
    if (inf_type_union(init, body_out, &u) < 0) {
        u = body_out;
        body_out = NULL;
    }
    ir_type_free(body_out);
    return u;
}

/* Frees an array of n owned types. */
static void inf_free_types(IrType **t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        ir_type_free(t[k]);
    free(t);
}

/* ---- If ---------------------------------------------------------------- */

/* The union of two symvals (elements known alike in both), or NULL. */
static IrShape *inf_symval_union(const IrShape *a, const IrShape *b)
{
    if (!a || !b || a->rank != b->rank)
        return NULL;
    return inf_shape_union(a, b);
}

/* If: both branches are inferred; each output is the union of the
 * branches' outputs, or the taken branch's when cond is a constant. */
static int inf_if(InfCtx *c)
{
    IrGraph *tg = inf_attr_graph(c, "then_branch");
    IrGraph *eg = inf_attr_graph(c, "else_branch");
    if (inf_other_subgraphs(c, NULL) < 0)
        return -1;
    if (!tg || !eg)
        return 0;
    size_t n = inf_n_out(c);
    if (tg->outputs.n != n || eg->outputs.n != n)
        return inf_fail(c, "subgraph", "then_branch has %zu outputs and "
                        "else_branch %zu, but the node has %zu", tg->outputs.n,
                        eg->outputs.n, n);
    int64_t *cv = NULL;
    size_t ncv = 0;
    int taken = -1; /* 1 then, 0 else, -1 unknown */
    if (inf_in_ints(c, 0, &cv, &ncv)) {
        if (ncv == 1)
            taken = cv[0] != 0;
        free(cv);
    }
    for (size_t k = 0; k < n; k++) {
        IrType *a = inf_graph_out(tg, k), *b = inf_graph_out(eg, k), *u = NULL;
        int rc = inf_type_union(a, b, &u);
        if (rc < 0) {
            char x[96], y[96];
            os_type_str(a, x, sizeof x);
            os_type_str(b, y, sizeof y);
            ir_type_free(a);
            ir_type_free(b);
            return inf_fail(c, "subgraph", "output %zu is %s in then_branch "
                            "but %s in else_branch", k, x, y);
        }
        const IrShape *sa = inf_graph_out_symval(tg, k);
        const IrShape *sb = inf_graph_out_symval(eg, k);
        if (taken >= 0 && inf_known(taken ? a : b)) {
            ir_type_free(u);
            u = taken ? a : b;
            if (taken) a = NULL; else b = NULL;
            inf_out_symval(c, k, ir_shape_copy(taken ? sa : sb));
        } else {
            inf_out_symval(c, k, inf_symval_union(sa, sb));
        }
        ir_type_free(a);
        ir_type_free(b);
        inf_out_type(c, k, u);
    }
    return 0;
}

/* ---- Loop -------------------------------------------------------------- */

/* Whether the loop condition stays true: a constant true cond input that
 * the body passes back unchanged (directly or through Identity). */
static bool inf_loop_cond_true(InfCtx *c, const IrGraph *g)
{
    int64_t *v;
    size_t n;
    if (!inf_in_ints(c, 1, &v, &n))
        return false;
    bool on = n == 1 && v[0] != 0;
    free(v);
    const IrValue *in = ((const IrValueInfo *)g->inputs.p[1])->value;
    const IrValue *out = ((const IrValueInfo *)g->outputs.p[0])->value;
    const IrNode *p = out && out->kind == IR_VAL_NODE ? out->producer : NULL;
    if (p && p->op_type && strcmp(p->op_type, "Identity") == 0 && p->n_in == 1 &&
        !ir_domain_norm(p->domain)[0])
        out = p->in[0];
    return on && in && out == in;
}

/* The number of iterations of a Loop when the trip count M alone decides
 * it: no condition input (the body's condition is then ignored), or one
 * that stays true. Sets d from M's value or tracked symbol (else leaves it
 * unknown). */
static void inf_loop_trips(InfCtx *c, const IrGraph *g, IrDim *d)
{
    const IrShape *m = inf_in_symval(c, 0);
    if (!m || m->rank != 1 || (inf_has_in(c, 1) && !inf_loop_cond_true(c, g)))
        return;
    if (inf_dim_known(&m->dims[0]))
        inf_dim_set(d, m->dims[0].value < 0 ? 0 : m->dims[0].value);
    else
        inf_dim_copy(d, &m->dims[0]);
}

/* Loop: body inputs (iteration_num, cond, N states), outputs (cond, N
 * states, K per-iteration values); node outputs: N final states, then K
 * scan outputs stacked along a new leading axis. */
static int inf_loop(InfCtx *c)
{
    IrGraph *g = inf_attr_graph(c, "body");
    if (!g)
        return inf_other_subgraphs(c, NULL);
    if (inf_other_subgraphs(c, "body") < 0)
        return -1;
    size_t nin = inf_n_in(c), ns = nin > 2 ? nin - 2 : 0;
    if (g->inputs.n != ns + 2)
        return inf_fail(c, "subgraph", "body has %zu inputs, expected %zu "
                        "(iteration number, condition and %zu loop-carried values)",
                        g->inputs.n, ns + 2, ns);
    if (g->outputs.n < ns + 1)
        return inf_fail(c, "subgraph", "body has %zu outputs, expected at least "
                        "%zu (condition and %zu loop-carried values)", g->outputs.n,
                        ns + 1, ns);
    size_t nk = g->outputs.n - 1 - ns;
    if (inf_n_out(c) > ns + nk)
        return inf_fail(c, "subgraph", "the node has %zu outputs but the body "
                        "yields %zu (%zu loop-carried, %zu scan)", inf_n_out(c),
                        ns + nk, ns, nk);
    IrType **in = mem_array(ns + 2, sizeof *in);
    bool *empty = mem_array(ns + 1, sizeof *empty);
    in[0] = ir_type_tensor(IR_INT64, 0, NULL);
    in[1] = ir_type_tensor(IR_BOOL, 0, NULL);
    for (size_t k = 0; k < ns; k++) {
        in[2 + k] = inf_type_dup(inf_in(c, 2 + k));
        empty[k] = inf_in_producer(c, 2 + k, "SequenceEmpty") != NULL;
    }
    int rc = inf_body_states(c, g, ns + 2, in, 2, ns, 1, empty);
    inf_free_types(in, ns + 2);
    for (size_t k = 0; rc == 0 && k < ns && k < inf_n_out(c); k++)
        inf_out_type(c, k, inf_state_out(inf_in(c, 2 + k), empty[k],
                                         inf_graph_out(g, 1 + k)));
    free(empty);
    if (rc < 0)
        return -1;
    IrDim trips = {0};
    inf_loop_trips(c, g, &trips);
    for (size_t j = 0; ns + j < inf_n_out(c); j++) {
        IrType *o = inf_graph_out(g, 1 + ns + j);
        if (o && o->kind == IR_TYPE_TENSOR && o->shape) {
            IrShape *s = inf_shape_insert(o->shape, 0, &trips);
            ir_shape_free(o->shape);
            o->shape = s;
        } else if (o && o->kind != IR_TYPE_TENSOR) {
            ir_type_free(o); /* scan outputs are tensors: not this one */
            o = NULL;
        }
        inf_out_type(c, ns + j, o);
    }
    inf_dim_unknown(&trips);
    return 0;
}

/* ---- Scan -------------------------------------------------------------- */

/* A length the inputs first..first+m share (`what`: the scan length, v8's
 * batch size): dim ax[j] (or `fixed_axis` when ax is NULL) of input j.
 * A known value wins, else a symbol they all agree on. Known lengths that
 * differ are a contradiction. */
static int inf_scan_len(InfCtx *c, const char *what, size_t first, size_t m,
                        const int *ax, int fixed_axis, IrDim *len)
{
    const IrDim *known = NULL, *sym = NULL;
    size_t kj = 0;
    bool mixed = false;
    for (size_t j = 0; j < m; j++) {
        const IrShape *s = inf_in_shape(c, first + j);
        int a = ax ? ax[j] : fixed_axis;
        if (!s || a < 0 || (size_t)a >= s->rank)
            continue;
        const IrDim *d = &s->dims[a];
        if (d->kind == IR_DIM_VALUE) {
            if (known && known->value != d->value)
                return inf_fail(c, "shape", "inputs %zu and %zu differ in "
                                "%s: %lld and %lld", first + kj, first + j, what,
                                (long long)known->value, (long long)d->value);
            known = d;
            kj = j;
        } else if (d->kind == IR_DIM_PARAM) {
            mixed = mixed || (sym && !inf_dim_same(sym, d));
            sym = d;
        }
    }
    if (known)
        inf_dim_copy(len, known);
    else if (sym && !mixed)
        inf_dim_copy(len, sym);
    return 0;
}

/* Reads an optional INTS attribute of exactly `want` entries into ax,
 * normalized against ranks given per entry (rank -1 = unknown: the axis
 * kept as is when non-negative, else -1). Absent: all 0. */
static int inf_scan_axes(InfCtx *c, const char *name, size_t want,
                         const int *ranks, int extra, int *ax)
{
    const int64_t *v;
    long n = inf_attr_ints(c, name, &v);
    if (n >= 0 && (size_t)n != want)
        return inf_fail(c, "attribute", "%s has %ld entries, expected %zu", name,
                        n, want);
    for (size_t j = 0; j < want; j++) {
        int64_t a = n >= 0 ? v[j] : 0;
        ax[j] = -1;
        if (ranks[j] >= 0) {
            if (inf_axis(c, name, a, ranks[j], extra, &ax[j]) < 0)
                return -1;
        } else if (a >= 0 && a <= 0x7fffffff) {
            ax[j] = (int)a;
        }
    }
    return 0;
}

/* Scan's layout: node inputs from `in0` are N states then M scan inputs;
 * body inputs likewise; body and node outputs are N states then K scan
 * outputs. v8 adds a batch axis 0 to everything and sequence_lens. */
typedef struct InfScan {
    size_t in0, ns, m, nk;
    bool v8;
    int *in_ax, *out_ax; /* scan axis per scan input / output (v9+; -1 unknown) */
    IrDim len, batch;
} InfScan;

/* The body's view of node input k (from in0): a state as it is (v8:
 * without the batch axis), a scan input without its scan axis (v8:
 * without batch and sequence axes). */
static IrType *inf_scan_body_in1(InfCtx *c, const InfScan *sc, size_t k)
{
    IrType *t = inf_type_dup(inf_in(c, sc->in0 + k));
    const IrShape *s = inf_tshape(t);
    if (!s || (!sc->v8 && k < sc->ns))
        return t;
    IrShape *r = NULL;
    if (sc->v8 && k < sc->ns && s->rank >= 1) {
        r = inf_shape_drop(s, 0);
    } else if (sc->v8 && k >= sc->ns && s->rank >= 2) {
        IrShape *x = inf_shape_drop(s, 0);
        r = inf_shape_drop(x, 0);
        ir_shape_free(x);
    } else if (!sc->v8) {
        int a = sc->in_ax[k - sc->ns];
        if (a >= 0 && (size_t)a < s->rank)
            r = inf_shape_drop(s, (size_t)a);
    }
    ir_shape_free(t->shape);
    t->shape = r;
    return t;
}

/* Body input types of every state and scan input. */
static IrType **inf_scan_body_in(InfCtx *c, const InfScan *sc)
{
    IrType **in = mem_array(sc->ns + sc->m + 1, sizeof *in);
    for (size_t k = 0; k < sc->ns + sc->m; k++)
        in[k] = inf_scan_body_in1(c, sc, k);
    return in;
}

/* Final states (v8: batch axis in front again) and scan outputs (the scan
 * length inserted at the output axis; v8: batch and length in front).
 * init: the initial states as the body saw them. */
static void inf_scan_outputs(InfCtx *c, IrGraph *g, IrType **init,
                             const InfScan *sc)
{
    for (size_t k = 0; k < sc->ns && k < inf_n_out(c); k++) {
        IrType *t = inf_state_out(init[k], false, inf_graph_out(g, k));
        if (sc->v8 && t && t->kind == IR_TYPE_TENSOR && t->shape) {
            IrShape *s = inf_shape_insert(t->shape, 0, &sc->batch);
            ir_shape_free(t->shape);
            t->shape = s;
        }
        inf_out_type(c, k, t);
    }
    for (size_t j = 0; sc->ns + j < inf_n_out(c); j++) {
        IrType *t = inf_graph_out(g, sc->ns + j);
        if (t && t->kind != IR_TYPE_TENSOR) {
            ir_type_free(t); /* scan outputs are tensors: not this one */
            t = NULL;
        }
        if (t && t->shape) {
            IrShape *s = NULL;
            if (sc->v8) {
                IrShape *x = inf_shape_insert(t->shape, 0, &sc->len);
                s = inf_shape_insert(x, 0, &sc->batch);
                ir_shape_free(x);
            } else if (sc->out_ax[j] >= 0 && (size_t)sc->out_ax[j] <= t->shape->rank) {
                s = inf_shape_insert(t->shape, (size_t)sc->out_ax[j], &sc->len);
            }
            ir_shape_free(t->shape);
            t->shape = s;
        }
        inf_out_type(c, sc->ns + j, t);
    }
}

/* v9+: the scan axis of each scan input, and the scan length. */
static int inf_scan_in_axes(InfCtx *c, InfScan *sc)
{
    int *ranks = mem_array(sc->m + 1, sizeof *ranks);
    for (size_t j = 0; j < sc->m; j++)
        ranks[j] = inf_in_rank(c, sc->in0 + sc->ns + j);
    sc->in_ax = mem_array(sc->m + 1, sizeof *sc->in_ax);
    int rc = inf_scan_axes(c, "scan_input_axes", sc->m, ranks, 0, sc->in_ax);
    free(ranks);
    if (rc == 0)
        rc = inf_scan_len(c, "scan length", sc->in0 + sc->ns, sc->m, sc->in_ax,
                          0, &sc->len);
    return rc;
}

/* v9+: the axis of each scan output, against the body outputs' ranks. */
static int inf_scan_out_axes(InfCtx *c, IrGraph *g, InfScan *sc)
{
    int *ranks = mem_array(sc->nk + 1, sizeof *ranks);
    for (size_t j = 0; j < sc->nk; j++) {
        IrType *t = inf_graph_out(g, sc->ns + j);
        const IrShape *s = inf_tshape(t);
        ranks[j] = s ? (int)s->rank : -1;
        ir_type_free(t);
    }
    sc->out_ax = mem_array(sc->nk + 1, sizeof *sc->out_ax);
    int rc = inf_scan_axes(c, "scan_output_axes", sc->nk, ranks, 1, sc->out_ax);
    free(ranks);
    return rc;
}

/* Checks the counts of a Scan node against its body and fills sc's. */
static int inf_scan_counts(InfCtx *c, IrGraph *g, InfScan *sc)
{
    sc->v8 = c->since < 9;
    sc->in0 = sc->v8 ? 1 : 0;
    size_t nin = inf_n_in(c) > sc->in0 ? inf_n_in(c) - sc->in0 : 0;
    int64_t m = inf_attr_i_or(c, "num_scan_inputs", -1);
    if (m < 1 || (uint64_t)m > nin)
        return inf_fail(c, "attribute", "num_scan_inputs %lld does not fit the "
                        "node's %zu state and scan inputs", (long long)m, nin);
    sc->m = (size_t)m;
    sc->ns = nin - sc->m;
    if (g->inputs.n != nin)
        return inf_fail(c, "subgraph", "body has %zu inputs, expected %zu",
                        g->inputs.n, nin);
    if (g->outputs.n < sc->ns || inf_n_out(c) > g->outputs.n)
        return inf_fail(c, "subgraph", "body has %zu outputs; the node has %zu "
                        "states and %zu outputs", g->outputs.n, sc->ns, inf_n_out(c));
    sc->nk = g->outputs.n - sc->ns;
    return 0;
}

/* Scan (v8 with sequence_lens and a batch axis; v9+ with scan axes). */
static int inf_scan(InfCtx *c)
{
    IrGraph *g = inf_attr_graph(c, "body");
    if (!g)
        return inf_other_subgraphs(c, NULL);
    if (inf_other_subgraphs(c, "body") < 0)
        return -1;
    InfScan sc = {0};
    int rc = inf_scan_counts(c, g, &sc);
    if (rc == 0 && sc.v8) {
        rc = inf_scan_len(c, "batch size", sc.in0, sc.ns + sc.m, NULL, 0,
                          &sc.batch);
        if (rc == 0)
            rc = inf_scan_len(c, "sequence length", sc.in0 + sc.ns, sc.m, NULL, 1,
                              &sc.len);
    } else if (rc == 0) {
        rc = inf_scan_in_axes(c, &sc);
    }
    IrType **in = rc == 0 ? inf_scan_body_in(c, &sc) : NULL;
    if (rc == 0)
        rc = inf_body_states(c, g, sc.ns + sc.m, in, 0, sc.ns, 0, NULL);
    if (rc == 0 && !sc.v8)
        rc = inf_scan_out_axes(c, g, &sc);
    if (rc == 0) {
        IrType **init = inf_scan_body_in(c, &sc);
        inf_scan_outputs(c, g, init, &sc);
        inf_free_types(init, sc.ns + sc.m);
    }
    if (in)
        inf_free_types(in, sc.ns + sc.m);
    free(sc.in_ax);
    free(sc.out_ax);
    inf_dim_unknown(&sc.len);
    inf_dim_unknown(&sc.batch);
    return rc;
}

/* ---- SequenceMap ------------------------------------------------------- */

/* SequenceMap: the body runs once per position of the sequence inputs,
 * seeing their elements (the sequence's element type) and the tensor
 * inputs as they are; each output is a sequence of a body output. */
static int inf_sequence_map(InfCtx *c)
{
    IrGraph *g = inf_attr_graph(c, "body");
    if (!g)
        return inf_other_subgraphs(c, NULL);
    if (inf_other_subgraphs(c, "body") < 0)
        return -1;
    size_t n = inf_n_in(c);
    if (g->inputs.n != n)
        return inf_fail(c, "subgraph", "body has %zu inputs, the node %zu",
                        g->inputs.n, n);
    if (g->outputs.n != inf_n_out(c))
        return inf_fail(c, "subgraph", "body has %zu outputs, the node %zu",
                        g->outputs.n, inf_n_out(c));
    const IrType **in = mem_array(n + 1, sizeof *in);
    for (size_t i = 0; i < n; i++) {
        const IrType *t = inf_known(inf_in(c, i));
        in[i] = t && t->kind == IR_TYPE_SEQUENCE ? t->elem : t;
    }
    int rc = inf_subgraph(c, g, n, in);
    free(in);
    for (size_t k = 0; rc == 0 && k < inf_n_out(c); k++)
        inf_out_type(c, k, inf_wrap(IR_TYPE_SEQUENCE, inf_graph_out(g, k)));
    return rc;
}

const InfOp inf_ops_control[] = {
    {"", "If", inf_if},
    {"", "Loop", inf_loop},
    {"", "Scan", inf_scan},
    {"", "SequenceMap", inf_sequence_map},
    {NULL, NULL, NULL}};
