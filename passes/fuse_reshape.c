/*
 * fuse_reshape.c - shortens chains of shape-only ops.
 *
 * 1. y = Reshape(m, s) where m = Reshape/Flatten/Squeeze/Unsqueeze(x):
 *    these only relabel the shape, so m holds x's elements in x's order
 *    and Reshape's result depends on m only through that element list and
 *    its count, plus m's dims where s has a 0 (allowzero = 0: "copy this
 *    dim of the input"). y = Reshape(x, s) when s is a constant without 0
 *    (or allowzero = 1, where 0 is a literal size); a 0 at position i is
 *    replaced by m's static dim i when inference knows it (and it is not
 *    0 itself), else the chain stays. Opset 5 and later (shape input).
 * 2. y = Unsqueeze(Squeeze(x, a), a) is x: Squeeze drops size-1 dims at
 *    a (axes of x), Unsqueeze puts size-1 dims back at the same places of
 *    a tensor of x's rank. y = Squeeze(Unsqueeze(x, a), a) is x likewise
 *    (both axes count in the unsqueezed rank). Readers of y read x; when
 *    y is a graph output the pair stays. Squeeze without axes: skipped.
 * 3. y = Unsqueeze(Unsqueeze(x, a1), a2) is Unsqueeze(x, a) with a = a2
 *    plus, for each axis j of a1, the j-th position of y not in a2 (the
 *    middle tensor's dims land on y's positions outside a2, in order).
 * Axes are an attribute below opset 13 and a constant input from 13.
 * Negative axes are normalized with inferred ranks (unknown: skipped).
 * The middle value must be read only by y and not be a graph output.
 */
#include "passes/fuse_util.h"

/* The axes of Squeeze/Unsqueeze k (attribute below 13, constant input
 * from 13) into out; count or -1 when absent or not constant. */
static long opt_frs_axes(const OptCtx *c, const IrNode *k, int64_t *out)
{
    if (ir_scope_opset(c->m, c->fn, "") < 13) {
        long n = opt_fz_attr_ints(k, "axes", out, OPT_FZ_MAX_RANK);
        return n < 0 ? -1 : n;
    }
    return k->n_in >= 2 && k->in[1] ? opt_fz_const_ints(k->in[1], out, OPT_FZ_MAX_RANK) : -1;
}

/* Normalizes n axes for rank `rank` (-1 = unknown) and marks them in
 * set[rank]; false when one is out of range, repeated or needs the
 * unknown rank. */
static bool opt_frs_mark(int64_t *ax, long n, long rank, bool *set)
{
    if (rank < 0 || rank > OPT_FZ_MAX_RANK)
        return false;
    memset(set, 0, (size_t)rank * sizeof *set);
    for (long i = 0; i < n; i++) {
        if (ax[i] < 0)
            ax[i] += rank;
        if (ax[i] < 0 || ax[i] >= rank || set[ax[i]])
            return false;
        set[ax[i]] = true;
    }
    return true;
}

/* The Reshape input of y's chain: y's own shape input when it needs no
 * change, a new constant with the 0s resolved from m, or NULL. */
static IrValue *opt_frs_target(OptCtx *c, IrNode *y, const IrValue *m)
{
    bool ok = true;
    if (opt_fz_attr_i_or(y, "allowzero", 0, &ok) == 1 && ok)
        return y->in[1];
    int64_t s[OPT_FZ_MAX_RANK];
    long n = opt_fz_const_ints(y->in[1], s, OPT_FZ_MAX_RANK);
    if (!ok || n < 0)
        return NULL;
    bool zero = false;
    for (long i = 0; i < n; i++) {
        if (s[i] != 0)
            continue;
        s[i] = opt_fz_dim(m, (size_t)i);
        if (s[i] <= 0)
            return NULL;
        zero = true;
    }
    return zero ? opt_fz_new_ints(c, y, "shape", (size_t)n, s) : y->in[1];
}

/* 1: Reshape of a shape-only op. */
static bool opt_frs_reshape(OptCtx *c, IrNode *y)
{
    static const char *const firsts[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
    if (ir_scope_opset(c->m, c->fn, "") < 5 || y->n_in != 2 || !y->in[0] || !y->in[1] ||
        y->n_out != 1)
        return false;
    IrNode *p = NULL;
    for (size_t i = 0; i < 4 && !p; i++)
        p = opt_fz_sole(y->in[0], y, firsts[i]);
    if (!p || p->n_in < 1 || !p->in[0])
        return false;
    IrValue *s = opt_frs_target(c, y, y->in[0]);
    if (!s)
        return false;
    ir_node_set_input(y, 1, s);
    ir_node_set_input(y, 0, p->in[0]);
    ir_node_delete(p);
    return true;
}

/* 2: Unsqueeze(Squeeze(x, a), a) or Squeeze(Unsqueeze(x, a), a). */
static bool opt_frs_cancel(OptCtx *c, IrNode *y, const char *inner)
{
    IrNode *p = y->n_in >= 1 && y->in[0] ? opt_fz_sole(y->in[0], y, inner) : NULL;
    if (!p || !p->in[0] || y->n_out != 1 || !y->out[0])
        return false;
    int64_t a1[OPT_FZ_MAX_RANK], a2[OPT_FZ_MAX_RANK];
    long n1 = opt_frs_axes(c, p, a1), n2 = opt_frs_axes(c, y, a2);
    /* the rank both axis lists count in: x's for Squeeze first, the
     * middle value's for Unsqueeze first */
    long rank = strcmp(inner, "Squeeze") == 0 ? opt_fz_rank(p->in[0]) : opt_fz_rank(y->in[0]);
    bool s1[OPT_FZ_MAX_RANK], s2[OPT_FZ_MAX_RANK];
    if (n1 <= 0 || n1 != n2 || !opt_frs_mark(a1, n1, rank, s1) ||
        !opt_frs_mark(a2, n2, rank, s2) || memcmp(s1, s2, (size_t)rank * sizeof *s1) != 0)
        return false;
    IrError e;
    if (ir_value_is_graph_output(y->out[0]) ||
        ir_value_replace_uses(y->out[0], p->in[0], &e) < 0)
        return false;
    ir_node_delete(y);
    ir_node_delete(p);
    return true;
}

/* Sets the axes of Unsqueeze y in the opset's form. */
static bool opt_frs_set_axes(OptCtx *c, IrNode *y, size_t n, const int64_t *ax)
{
    if (ir_scope_opset(c->m, c->fn, "") < 13) {
        ir_node_set_attr(y, ir_attr_ints("axes", n, ax));
        return true;
    }
    IrValue *v = opt_fz_new_ints(c, y, "axes", n, ax);
    if (!v)
        return false;
    ir_node_set_input(y, 1, v);
    return true;
}

/* 3: Unsqueeze(Unsqueeze(x, a1), a2) -> Unsqueeze(x, a). */
static bool opt_frs_unsq2(OptCtx *c, IrNode *y)
{
    IrNode *p = y->n_in >= 1 && y->in[0] ? opt_fz_sole(y->in[0], y, "Unsqueeze") : NULL;
    if (!p || !p->in[0])
        return false;
    int64_t a1[OPT_FZ_MAX_RANK], a2[OPT_FZ_MAX_RANK], a[OPT_FZ_MAX_RANK];
    long n1 = opt_frs_axes(c, p, a1), n2 = opt_frs_axes(c, y, a2);
    long mid = opt_fz_rank(y->in[0]);
    bool s1[OPT_FZ_MAX_RANK], s2[OPT_FZ_MAX_RANK];
    if (n1 <= 0 || n2 <= 0 || mid < 0 || !opt_frs_mark(a1, n1, mid, s1) ||
        !opt_frs_mark(a2, n2, mid + n2, s2))
        return false;
    size_t n = 0;
    long j = 0;
    for (long f = 0; f < mid + n2; f++) {
        if (s2[f])
            a[n++] = f;
        else if (s1[j++])
            a[n++] = f;
    }
    if (!opt_frs_set_axes(c, y, n, a))
        return false;
    ir_node_set_input(y, 0, p->in[0]);
    ir_node_delete(p);
    return true;
}

static long opt_frs_run(OptCtx *c)
{
    long n = 0;
    IR_FOR_NODES(c->g, k) {
        bool done = false;
        if (opt_fz_op(k, "Reshape"))
            done = opt_frs_reshape(c, k);
        else if (opt_fz_op(k, "Unsqueeze"))
            done = opt_frs_cancel(c, k, "Squeeze") || opt_frs_unsq2(c, k);
        else if (opt_fz_op(k, "Squeeze"))
            done = opt_frs_cancel(c, k, "Unsqueeze");
        n += done;
    }
    return n;
}

const OptPass opt_pass_fuse_reshape = {
    "fuse_reshape", "shortens Reshape/Flatten/Squeeze/Unsqueeze chains",
    true, OPT_NEEDS_TYPES, opt_frs_run,
};
