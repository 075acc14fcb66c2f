/*
 * fuse_transpose.c - merges two consecutive Transposes into one.
 *
 * t = Transpose(x, perm=p), y = Transpose(t, perm=q): output dim i of y is
 * dim q[i] of t, which is dim p[q[i]] of x, and every element moves the
 * same way, so y = Transpose(x, perm=r) with r[i] = p[q[i]]. A missing perm
 * reverses the dims (the rank is then taken from the inferred type). When
 * r is the identity, y's readers read x and both nodes go (unless y is a
 * graph output: then one Transpose with the identity perm stays). Only
 * when t has no other reader and is not a graph output.
 */
#include "passes/fuse_util.h"

/* The perm of Transpose k whose input has rank `rank` (-1 = unknown) into
 * p; returns the rank, or -1 when it is unknown or the perm is not a
 * permutation. */
static long opt_ft_perm(const IrNode *k, long rank, int64_t *p)
{
    long n = opt_fz_attr_ints(k, "perm", p, OPT_FZ_MAX_RANK);
    if (n == -2)
        return -1;
    if (n == -1) {
        if (rank < 0 || rank > OPT_FZ_MAX_RANK)
            return -1;
        for (long i = 0; i < rank; i++)
            p[i] = rank - 1 - i;
        n = rank;
    }
    if (rank >= 0 && n != rank)
        return -1;
    bool seen[OPT_FZ_MAX_RANK] = {false};
    for (long i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]])
            return -1;
        seen[p[i]] = true;
    }
    return n;
}

/* Tries to merge Transpose y with the Transpose producing its input. */
static bool opt_ft_one(OptCtx *c, IrNode *y)
{
    if (y->n_in != 1 || y->n_out != 1 || !y->in[0] || !y->out[0])
        return false;
    IrNode *t = opt_fz_sole(y->in[0], y, "Transpose");
    if (!t || t->n_in != 1 || !t->in[0])
        return false;
    int64_t p[OPT_FZ_MAX_RANK], q[OPT_FZ_MAX_RANK], r[OPT_FZ_MAX_RANK];
    long n = opt_ft_perm(t, opt_fz_rank(t->in[0]), p);
    if (n < 0 || opt_ft_perm(y, n, q) != n)
        return false;
    bool ident = true;
    for (long i = 0; i < n; i++) {
        r[i] = p[q[i]];
        ident = ident && r[i] == i;
    }
    IrValue *x = t->in[0];
    IrError e;
    if (ident && !ir_value_is_graph_output(y->out[0]) &&
        ir_value_replace_uses(y->out[0], x, &e) == 0) {
        ir_node_delete(y);
        ir_node_delete(t);
        return true;
    }
    ir_node_set_attr(y, ir_attr_ints("perm", (size_t)n, r));
    ir_node_set_input(y, 0, x);
    ir_node_delete(t);
    return true;
}

static long opt_ft_run(OptCtx *c)
{
    return opt_fz_each(c, "Transpose", opt_ft_one);
}

const OptPass opt_pass_fuse_transpose = {
    "fuse_transpose", "merges consecutive Transposes into one (or none when they cancel)",
    true, OPT_NEEDS_TYPES, opt_ft_run,
};
