/*
 * fuse_slice.c - merges a Slice of a Slice on different axes into one.
 *
 * m = Slice(x, s1, e1, a1), y = Slice(m, s2, e2, a2) with step 1
 * everywhere and no axis in both a1 and a2: the first slice leaves the
 * axes of a2 untouched, so their extents in m are x's and the second
 * slice clamps its starts and ends against the same sizes it would see in
 * x; slicing independent axes commutes. y = Slice(x, s1+s2, e1+e2, a1+a2).
 * Starts, ends, axes and steps must be constants (missing axes mean
 * 0..n-1; missing steps mean 1); negative axes are normalized with the
 * known rank (unknown: skipped). Slice-10 and later (inputs, not
 * attributes); the middle value must be read only by y.
 */
#include "passes/fuse_util.h"

typedef struct OptSlArgs {
    long n;
    int64_t st[OPT_FZ_MAX_RANK], en[OPT_FZ_MAX_RANK], ax[OPT_FZ_MAX_RANK];
} OptSlArgs;

/* Reads Slice k's constant arguments for input rank `rank`; false when
 * one is not constant, a step is not 1, or an axis is unusable. */
static bool opt_sl_args(const IrNode *k, long rank, OptSlArgs *a)
{
    if (k->n_in < 3 || k->n_in > 5 || !k->in[0] || !k->in[1] || !k->in[2] || k->n_out != 1 ||
        k->n_attr || rank < 0 || rank > OPT_FZ_MAX_RANK)
        return false;
    a->n = opt_fz_const_ints(k->in[1], a->st, OPT_FZ_MAX_RANK);
    if (a->n < 0 || opt_fz_const_ints(k->in[2], a->en, OPT_FZ_MAX_RANK) != a->n)
        return false;
    if (k->n_in > 3 && k->in[3]) {
        if (opt_fz_const_ints(k->in[3], a->ax, OPT_FZ_MAX_RANK) != a->n)
            return false;
    } else {
        for (long i = 0; i < a->n; i++)
            a->ax[i] = i;
    }
    if (k->n_in > 4 && k->in[4]) {
        int64_t steps[OPT_FZ_MAX_RANK];
        if (opt_fz_const_ints(k->in[4], steps, OPT_FZ_MAX_RANK) != a->n)
            return false;
        for (long i = 0; i < a->n; i++)
            if (steps[i] != 1)
                return false;
    }
    for (long i = 0; i < a->n; i++) {
        if (a->ax[i] < 0)
            a->ax[i] += rank;
        if (a->ax[i] < 0 || a->ax[i] >= rank)
            return false;
    }
    return true;
}

static bool opt_sl_one(OptCtx *c, IrNode *y)
{
    IrNode *p = y->n_in >= 1 && y->in[0] ? opt_fz_sole(y->in[0], y, "Slice") : NULL;
    long rank = p ? opt_fz_rank(p->in[0]) : -1;
    OptSlArgs a, b;
    if (!p || !opt_sl_args(p, rank, &a) || !opt_sl_args(y, rank, &b) ||
        a.n + b.n > OPT_FZ_MAX_RANK || !opt_can_place_const(c, IR_INT64))
        return false;
    bool used[OPT_FZ_MAX_RANK] = {false};
    for (long i = 0; i < a.n + b.n; i++) {
        int64_t ax = i < a.n ? a.ax[i] : b.ax[i - a.n];
        if (used[ax])
            return false;
        used[ax] = true;
    }
    memcpy(a.st + a.n, b.st, (size_t)b.n * sizeof *b.st);
    memcpy(a.en + a.n, b.en, (size_t)b.n * sizeof *b.en);
    memcpy(a.ax + a.n, b.ax, (size_t)b.n * sizeof *b.ax);
    size_t n = (size_t)(a.n + b.n);
    IrValue *v[4] = {p->in[0], opt_fz_new_ints(c, y, "starts", n, a.st),
                     opt_fz_new_ints(c, y, "ends", n, a.en), opt_fz_new_ints(c, y, "axes", n, a.ax)};
    if (!v[1] || !v[2] || !v[3])
        return false;   /* unread constants are swept by unused_init/dead_code */
    if (y->n_in == 5) {
        ir_node_set_input(y, 4, NULL);
        y->n_in = 4;
    }
    opt_fz_set_inputs(y, 4, v);
    ir_node_delete(p);
    return true;
}

static long opt_sl_run(OptCtx *c)
{
    if (ir_scope_opset(c->m, c->fn, "") < 10)
        return 0;
    return opt_fz_each(c, "Slice", opt_sl_one);
}

const OptPass opt_pass_fuse_slice = {
    "fuse_slice", "merges a Slice of a Slice on other axes (step 1, constant bounds) into one",
    true, OPT_NEEDS_TYPES, opt_sl_run,
};
