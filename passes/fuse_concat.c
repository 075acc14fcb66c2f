/*
 * fuse_concat.c - inlines a Concat's inputs into the Concat that reads it.
 *
 * y = Concat(a, Concat(b, c; axis), d; axis) is Concat(a, b, c, d; axis):
 * joining along one axis is associative, and the inner result sits in the
 * outer list exactly where its own parts go. Both axes are normalized
 * with the known rank (a negative axis with an unknown rank: skipped);
 * different axes are left alone. Only when the inner result is read by
 * nothing else (once) and is not a graph output. Concat-1's missing axis
 * means 1; from Concat-4 the axis is required.
 */
#include "passes/fuse_util.h"

/* The axis of Concat k normalized for inputs of rank `rank` (-1 =
 * unknown), or -1 when unknown or invalid. */
static int64_t opt_fcc_axis(const OptCtx *c, const IrNode *k, long rank)
{
    bool ok = true;
    int64_t dflt = ir_scope_opset(c->m, c->fn, "") < 4 ? 1 : INT64_MIN;
    int64_t ax = opt_fz_attr_i_or(k, "axis", dflt, &ok);
    if (!ok || ax == INT64_MIN)
        return -1;
    if (ax < 0)
        ax = rank < 0 ? -1 : ax + rank;
    return ax < 0 || (rank >= 0 && ax >= rank) ? -1 : ax;
}

/* The rank of Concat k's inputs or output, or -1 when unknown. */
static long opt_fcc_rank(const IrNode *k)
{
    long r = opt_fz_rank(k->out[0]);
    for (size_t i = 0; i < k->n_in && r < 0; i++)
        r = opt_fz_rank(k->in[i]);
    return r;
}

/* Whether every input of k is present. */
static bool opt_fcc_full(const IrNode *k)
{
    if (k->n_in == 0 || k->n_out != 1 || !k->out[0])
        return false;
    for (size_t i = 0; i < k->n_in; i++)
        if (!k->in[i])
            return false;
    return true;
}

/* Inlines one inner Concat into k; true when one was. */
static bool opt_fcc_one(OptCtx *c, IrNode *k)
{
    static const char *const known[] = {"axis", NULL};
    if (!opt_fcc_full(k) || opt_fz_other_attrs(k, known))
        return false;
    long rank = opt_fcc_rank(k);
    int64_t ax = opt_fcc_axis(c, k, rank);
    if (ax < 0)
        return false;
    for (size_t i = 0; i < k->n_in; i++) {
        IrNode *in = opt_fz_sole(k->in[i], k, "Concat");
        if (!in || !opt_fcc_full(in) || opt_fz_other_attrs(in, known) ||
            opt_fcc_axis(c, in, rank < 0 ? opt_fcc_rank(in) : rank) != ax)
            continue;
        size_t n = k->n_in - 1 + in->n_in;
        IrValue **v = mem_array(n, sizeof *v);
        for (size_t j = 0; j < i; j++)
            v[j] = k->in[j];
        for (size_t j = 0; j < in->n_in; j++)
            v[i + j] = in->in[j];
        for (size_t j = i + 1; j < k->n_in; j++)
            v[in->n_in + j - 1] = k->in[j];
        opt_fz_set_inputs(k, n, v);
        free(v);
        ir_node_delete(in);
        return true;
    }
    return false;
}

static long opt_fcc_run(OptCtx *c)
{
    return opt_fz_each(c, "Concat", opt_fcc_one);
}

const OptPass opt_pass_fuse_concat = {
    "fuse_concat", "inlines the inputs of a Concat read only by a Concat on the same axis",
    true, OPT_NEEDS_TYPES, opt_fcc_run,
};
