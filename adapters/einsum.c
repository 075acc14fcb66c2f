/*
 * einsum.c - Einsum (12) below its first version, by older ops.
 *
 * The spec leaves the order of an Einsum's sums open, so a rewrite that
 * sums the same products in another order is exact in the sense the
 * verifier checks (issue 20). The rewrite, for any equation:
 *  - each operand's labels are listed per axis ("..." becomes one label per
 *    broadcast dim, aligned right as numpy aligns them);
 *  - a label repeated within one operand (a diagonal, a trace) is taken
 *    exactly: the two axes move last, are flattened into one, and Gather
 *    picks the elements k*(n+1) - copies, so inf and NaN stay where they
 *    are (a product with an identity mask would turn inf*0 into NaN);
 *  - a label that no other operand and not the output holds is summed
 *    first (ReduceSum), as every einsum implementation does;
 *  - the operands are then contracted left to right, two at a time: the
 *    labels both hold that nothing later needs are summed by a MatMul
 *    (batch labels in front, the others grouped by Reshape), or by Mul and
 *    ReduceSum when the dims a MatMul needs are not known;
 *  - the result is summed over what the output lacks and transposed into
 *    the output's order.
 * Nodes are built for the step's target opset (ReduceSum, Squeeze and
 * Unsqueeze in that opset's form); the driver carries them further down
 * with their own adapters (MatMul-1 takes floats only, Mul broadcasts both
 * ways from 7: the checks there refuse what the target cannot express).
 */
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"

#define AD_EIN_RANK 16         /* most axes an operand may have */
#define AD_EIN_LETTERS 52      /* 'A'..'Z' = 0..25, 'a'..'z' = 26..51 (ASCII order) */
#define AD_EIN_LABELS (AD_EIN_LETTERS + AD_EIN_RANK)

/* A tensor of the rewrite: its value and the label of each axis. */
typedef struct AdEinT {
    IrValue *v;
    int lab[2 * AD_EIN_RANK];
    int r;
} AdEinT;

/* The parsed equation. */
typedef struct AdEin {
    size_t n;                  /* operands */
    AdEinT *t;                 /* n operands (labels may repeat) */
    int out[AD_EIN_LABELS];    /* output labels */
    int nout;
    int nell;                  /* broadcast dims "..." stands for */
} AdEin;

/* The label of an equation letter, -1 for another character. */
static int ad_ein_letter(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return 26 + (ch - 'a');
    return -1;
}

/* Counts the letters of term s[0..len) and whether it has "..."; -1 on a
 * malformed term. */
static int ad_ein_count(const char *s, size_t len, int *letters, bool *ell)
{
    *letters = 0;
    *ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return -1;
            *ell = true;
            i += 2;
        } else if (ad_ein_letter(s[i]) < 0) {
            return -1;
        } else {
            ++*letters;
        }
    }
    return 0;
}

/* The labels of term s[0..len): letters, and "..." as `ell` broadcast
 * labels aligned right among the equation's nell. */
static int ad_ein_labels(const char *s, size_t len, int ell, int nell, int *lab)
{
    int k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int j = 0; j < ell; j++)
                lab[k++] = AD_EIN_LETTERS + nell - ell + j;
            i += 2;
        } else {
            lab[k++] = ad_ein_letter(s[i]);
        }
    }
    return k;
}

/* The equation without blanks (caller frees), NULL when absent. */
static char *ad_ein_equation(AdCtx *c)
{
    IrAttr *a = ad_attr(c, "equation");
    char buf[1024];
    const char *eq = a ? ad_attr_s(c, "equation", buf, sizeof buf) : NULL;
    if (!eq || strlen(eq) + 1 >= sizeof buf)
        return NULL;
    char *s = mem_strdup(eq);
    size_t m = 0;
    for (const char *p = eq; *p; p++)
        if (*p != ' ' && *p != '\t')
            s[m++] = *p;
    s[m] = '\0';
    return s;
}

/* Splits the left side into the operands' terms: start and length of each
 * (n of them). -1 when the count differs from the node's inputs. */
static int ad_ein_terms(const char *lhs, size_t len, size_t n, size_t *at, size_t *tl)
{
    size_t k = 0, s = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || lhs[i] == ',') {
            if (k == n)
                return -1;
            at[k] = s;
            tl[k++] = i - s;
            s = i + 1;
        }
    return k == n ? 0 : -1;
}

/* The output labels when the equation has no "->": the broadcast labels,
 * then the letters seen exactly once, in ASCII order. */
static void ad_ein_implicit(AdEin *e)
{
    int cnt[AD_EIN_LETTERS] = {0};
    for (size_t i = 0; i < e->n; i++)
        for (int d = 0; d < e->t[i].r; d++)
            if (e->t[i].lab[d] < AD_EIN_LETTERS)
                cnt[e->t[i].lab[d]]++;
    e->nout = 0;
    for (int j = 0; j < e->nell; j++)
        e->out[e->nout++] = AD_EIN_LETTERS + j;
    for (int l = 0; l < AD_EIN_LETTERS; l++)
        if (cnt[l] == 1)
            e->out[e->nout++] = l;
}

/* Whether an operand holds label l. */
static bool ad_ein_has(const AdEinT *t, int l)
{
    for (int d = 0; d < t->r; d++)
        if (t->lab[d] == l)
            return true;
    return false;
}

/* The explicit output term: every label once, each held by an operand. */
static int ad_ein_explicit(AdCtx *c, AdEin *e, const char *s)
{
    int letters;
    bool ell;
    if (ad_ein_count(s, strlen(s), &letters, &ell) < 0 || letters + e->nell > AD_EIN_LABELS)
        return ad_refuse(c, DG_ATTRIBUTE, "the equation's output term '%s' is malformed", s);
    e->nout = ad_ein_labels(s, strlen(s), ell ? e->nell : 0, e->nell, e->out);
    for (int k = 0; k < e->nout; k++) {
        bool held = false;
        for (size_t i = 0; i < e->n && !held; i++)
            held = ad_ein_has(&e->t[i], e->out[k]);
        for (int j = 0; j < k; j++)
            held = held && e->out[j] != e->out[k];
        if (!held)
            return ad_refuse(c, DG_ATTRIBUTE, "output label %d of equation term '%s' is "
                             "repeated or held by no operand", k, s);
    }
    return 0;
}

/* Parses the equation against the inputs' ranks (needed where a term has
 * "..."). */
static int ad_ein_parse(AdCtx *c, AdEin *e, const char *eq)
{
    const char *arrow = strstr(eq, "->");
    size_t lhs = arrow ? (size_t)(arrow - eq) : strlen(eq);
    size_t *at = mem_array(3 * e->n, sizeof *at), *tl = at + e->n, *ew = tl + e->n;
    int rc = 0;
    if (ad_ein_terms(eq, lhs, e->n, at, tl) < 0)
        rc = ad_refuse(c, DG_ATTRIBUTE, "the equation '%s' does not have one term per input "
                       "(%zu inputs)", eq, e->n);
    e->nell = 0;
    for (size_t i = 0; rc == 0 && i < e->n; i++) {
        int letters, r = ad_rank(ad_in(c, i));
        bool ell;
        if (ad_ein_count(eq + at[i], tl[i], &letters, &ell) < 0 || letters > AD_EIN_RANK)
            rc = ad_refuse(c, DG_ATTRIBUTE, "term %zu of equation '%s' is malformed", i, eq);
        else if (ell && r < 0)
            rc = ad_refuse(c, DG_SHAPE_UNKNOWN, "input %zu's rank is unknown: its term has "
                           "'...'", i);
        else if ((r >= 0 && (ell ? r < letters : r != letters)) || r > AD_EIN_RANK)
            rc = ad_refuse(c, DG_SHAPE, "input %zu has rank %d, its term %d labels", i, r,
                           letters);
        else if (ell && r - letters > e->nell)
            e->nell = r - letters;
        ew[i] = rc == 0 && ell ? (size_t)(r - letters) : 0;   /* dims "..." stands for */
    }
    for (size_t i = 0; rc == 0 && i < e->n; i++) {
        e->t[i].v = ad_in(c, i);
        e->t[i].r = ad_ein_labels(eq + at[i], tl[i], (int)ew[i], e->nell, e->t[i].lab);
    }
    free(at);
    if (rc < 0)
        return -1;
    if (!arrow) {
        ad_ein_implicit(e);
        return 0;
    }
    if (strstr(arrow + 2, "->"))
        return ad_refuse(c, DG_ATTRIBUTE, "the equation '%s' has two arrows", eq);
    return ad_ein_explicit(c, e, arrow + 2);
}

/* ---- building blocks ------------------------------------------------ */

/* A Transpose of t so that its labels read order[0..r) (t's labels in
 * another order); no node when the order is already t's. */
static void ad_ein_order(AdCtx *c, AdEinT *t, const int *order)
{
    int64_t perm[2 * AD_EIN_RANK];
    bool same = true, used[2 * AD_EIN_RANK] = {false};
    for (int i = 0; i < t->r; i++) {
        /* a label still repeated (a diagonal pending) takes its axes in order */
        for (int d = 0; d < t->r; d++)
            if (t->lab[d] == order[i] && !used[d]) {
                perm[i] = d;
                used[d] = true;
                break;
            }
        same = same && perm[i] == i;
    }
    if (same || !t->v)
        return;
    t->v = ad_transpose(c, t->v, (size_t)t->r, perm);
    memcpy(t->lab, order, (size_t)t->r * sizeof *order);
}

/* The diagonal of the last two axes of x (rank r, equal extents known only
 * at run time, opset 11 for Range): x flattened to [..., n*n] (the shape
 * built from Shape(x)) and Gather at Range(0, n) * (n+1). */
static IrValue *ad_ein_diagonal_dyn(AdCtx *c, IrValue *x, int r)
{
    int64_t head[2 * AD_EIN_RANK], last = r - 1;
    for (int i = 0; i < r - 2; i++)
        head[i] = i;
    IrValue *s = ad_op1(c, "Shape", x);
    IrValue *in2[2] = {s, ad_const_int_tensor(c, IR_INT64, 0, NULL, &last, 1)};
    IrValue *n = ad_gather(c, in2[0], in2[1], 0);      /* scalar */
    IrValue *nn = ad_axes_op(c, c->n, "Unsqueeze", ad_op2(c, "Mul", n, n), 1,
                             (const int64_t[]){0});
    IrValue *shape = nn;
    if (r > 2) {
        int64_t nh = r - 2;
        in2[1] = ad_const_int_tensor(c, IR_INT64, 1, &nh, head, (size_t)nh);
        IrValue *cat[2] = {ad_gather(c, in2[0], in2[1], 0), nn};
        shape = ad_concat(c, cat, 2, 0);
    }
    IrValue *flat = ad_op2(c, "Reshape", x, shape);
    IrValue *rin[3] = {ad_const_int(c, IR_INT64, 0), n, ad_const_int(c, IR_INT64, 1)};
    IrNode *k = rin[0] && n && rin[2] && !c->refusal ? ad_node(c, c->n, "Range", 3, rin, 1)
                                                    : NULL;
    IrValue *step = ad_op2(c, "Add", n, ad_const_int(c, IR_INT64, 1));
    IrValue *gin[2] = {flat, k ? ad_op2(c, "Mul", k->out[0], step) : NULL};
    return ad_gather(c, gin[0], gin[1], r - 2);
}

/* Takes the diagonal of the axes p < q of t (same label, same extent):
 * both move last, are flattened, and Gather picks k*(n+1). */
static int ad_ein_diagonal(AdCtx *c, AdEinT *t, int p, int q)
{
    int64_t n = ad_dim(t->v, p), nq = ad_dim(t->v, q);
    bool dyn = n < 0 || nq < 0;
    if (dyn && c->build_opset < 11)
        return ad_refuse(c, DG_SHAPE_UNKNOWN, "the diagonal of a repeated label needs its "
                         "extent (axes %d and %d) below opset 11 (Range)", p, q);
    if (!dyn && n != nq)
        return ad_refuse(c, DG_SHAPE, "a repeated label has extents %lld and %lld",
                         (long long)n, (long long)nq);
    int order[2 * AD_EIN_RANK], k = 0, l = t->lab[p];
    for (int d = 0; d < t->r; d++)
        if (d != p && d != q)
            order[k++] = t->lab[d];
    /* the two axes carry the same label: mark the first apart to order them */
    t->lab[p] = -1;
    order[k++] = -1;
    order[k++] = l;
    ad_ein_order(c, t, order);
    if (dyn) {
        t->v = ad_ein_diagonal_dyn(c, t->v, t->r);
        t->r--;
        t->lab[t->r - 1] = l;
        return t->v ? 0 : -1;
    }
    int64_t shape[2 * AD_EIN_RANK] = {0}, *idx = mem_array((size_t)n + 1, sizeof *idx);
    shape[t->r - 2] = n * n;
    for (int64_t j = 0; j < n; j++)
        idx[j] = j * (n + 1);
    IrValue *flat = ad_reshape(c, t->v, (size_t)(t->r - 1), shape);
    IrValue *iv = flat ? ad_const_int_tensor(c, IR_INT64, 1, &n, idx, (size_t)n) : NULL;
    free(idx);
    t->v = ad_gather(c, flat, iv, t->r - 2);
    t->r--;
    t->lab[t->r - 1] = l;
    return t->v ? 0 : -1;
}

/* Takes every diagonal of t until each label holds one axis. */
static int ad_ein_diagonals(AdCtx *c, AdEinT *t)
{
    for (int p = 0; p < t->r; p++)
        for (int q = p + 1; q < t->r; q++)
            if (t->lab[p] == t->lab[q]) {
                if (ad_ein_diagonal(c, t, p, q) < 0)
                    return -1;
                p = -1;        /* the axes moved: start over */
                break;
            }
    return 0;
}

/* Whether label l is needed after the contractions so far: by the output
 * or by an operand from index `from` on, or by `other` (may be NULL). */
static bool ad_ein_needed(const AdEin *e, int l, size_t from, const AdEinT *other)
{
    for (int k = 0; k < e->nout; k++)
        if (e->out[k] == l)
            return true;
    for (size_t i = from; i < e->n; i++)
        if (ad_ein_has(&e->t[i], l))
            return true;
    return other && ad_ein_has(other, l);
}

/* Sums t over its labels nothing after it needs. */
static void ad_ein_sum_unneeded(AdCtx *c, const AdEin *e, AdEinT *t, size_t from,
                                const AdEinT *other)
{
    int64_t axes[2 * AD_EIN_RANK];
    int n = 0, k = 0;
    for (int d = 0; d < t->r; d++) {
        if (ad_ein_needed(e, t->lab[d], from, other))
            t->lab[k++] = t->lab[d];
        else
            axes[n++] = d;
    }
    if (n == 0)
        return;
    t->v = ad_reduce(c, "ReduceSum", t->v, (size_t)n, axes, false);
    t->r = k;
}

/* ---- contracting two operands --------------------------------------- */

/* The groups of a contraction of a and b: labels both hold and a later
 * operand or the output needs (batch), the ones only a or b holds, and the
 * ones both hold that are summed here (sum). */
typedef struct AdEinPair {
    int batch[AD_EIN_LABELS], ao[AD_EIN_LABELS], bo[AD_EIN_LABELS], sum[AD_EIN_LABELS];
    int nb, na, nbo, ns;
} AdEinPair;

static void ad_ein_groups(const AdEin *e, const AdEinT *a, const AdEinT *b, size_t from,
                          AdEinPair *p)
{
    p->nb = p->na = p->nbo = p->ns = 0;
    for (int d = 0; d < a->r; d++) {
        int l = a->lab[d];
        if (!ad_ein_has(b, l))
            p->ao[p->na++] = l;
        else if (ad_ein_needed(e, l, from, NULL))
            p->batch[p->nb++] = l;
        else
            p->sum[p->ns++] = l;
    }
    for (int d = 0; d < b->r; d++)
        if (!ad_ein_has(a, b->lab[d]))
            p->bo[p->nbo++] = b->lab[d];
}

/* The extent of label l in t, -1 when unknown. */
static int64_t ad_ein_extent(const AdEinT *t, int l)
{
    for (int d = 0; d < t->r; d++)
        if (t->lab[d] == l)
            return ad_dim(t->v, d);
    return -1;
}

/* The product of the extents of labels ls[0..n) in t, -1 when one is
 * unknown (or the product is absurd). */
static int64_t ad_ein_prod(const AdEinT *t, const int *ls, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = ad_ein_extent(t, ls[i]);
        if (d < 0 || (d && p > INT64_C(1) << 40) || (d && d > INT64_C(1) << 40))
            return -1;
        p *= d;
    }
    return p;
}

/* Whether a MatMul can do the contraction: the summed labels have the
 * same known extents in a and b (a 1 against n broadcasts, which only
 * Mul does), and a group of more than one label has known extents (it is
 * flattened and restored by Reshape). */
static bool ad_ein_matmul_ok(const AdEinT *a, const AdEinT *b, const AdEinPair *p)
{
    if (p->ns == 0)
        return false;
    for (int i = 0; i < p->ns; i++) {
        int64_t x = ad_ein_extent(a, p->sum[i]);
        if (x < 0 || x != ad_ein_extent(b, p->sum[i]))
            return false;
    }
    if (ad_ein_prod(a, p->sum, p->ns) <= 0)
        return false;
    return (p->na <= 1 || ad_ein_prod(a, p->ao, p->na) >= 0) &&
           (p->nbo <= 1 || ad_ein_prod(b, p->bo, p->nbo) >= 0);
}

/* Orders t as g1 g2 g3 (label lists). */
static void ad_ein_layout(AdCtx *c, AdEinT *t, const int *g1, int n1, const int *g2, int n2,
                          const int *g3, int n3)
{
    int order[2 * AD_EIN_RANK];
    memcpy(order, g1, (size_t)n1 * sizeof *g1);
    memcpy(order + n1, g2, (size_t)n2 * sizeof *g2);
    memcpy(order + n1 + n2, g3, (size_t)n3 * sizeof *g3);
    ad_ein_order(c, t, order);
}

/* t (laid out as nb batch axes then two groups of n1 and n2 labels) as
 * [batch, prod(group 1), prod(group 2)]; nothing to do when both groups
 * are one axis. An unknown product (a group of one unknown extent) is -1. */
static IrValue *ad_ein_group2(AdCtx *c, const AdEinT *t, int nb, const int *g1, int n1,
                              const int *g2, int n2)
{
    if (n1 == 1 && n2 == 1)
        return t->v;
    int64_t shape[AD_EIN_LABELS] = {0};
    shape[nb] = ad_ein_prod(t, g1, n1);
    shape[nb + 1] = ad_ein_prod(t, g2, n2);
    return ad_reshape(c, t->v, (size_t)(nb + 2), shape);
}

/* The contraction by MatMul: a as [batch, A, K], b as [batch, K, B], the
 * product [batch, A, B] restored to the groups' labels. */
static AdEinT ad_ein_by_matmul(AdCtx *c, AdEinT *a, AdEinT *b, const AdEinPair *p)
{
    AdEinT y = {.r = p->nb + p->na + p->nbo};
    ad_ein_layout(c, a, p->batch, p->nb, p->ao, p->na, p->sum, p->ns);
    ad_ein_layout(c, b, p->batch, p->nb, p->sum, p->ns, p->bo, p->nbo);
    IrValue *va = ad_ein_group2(c, a, p->nb, p->ao, p->na, p->sum, p->ns);
    IrValue *vb = ad_ein_group2(c, b, p->nb, p->sum, p->ns, p->bo, p->nbo);
    y.v = ad_op2(c, "MatMul", va, vb);
    if (p->na > 1 || p->nbo > 1) {
        int64_t shape[AD_EIN_LABELS] = {0};
        for (int i = 0; i < p->na; i++)
            shape[p->nb + i] = ad_ein_extent(a, p->ao[i]);
        for (int i = 0; i < p->nbo; i++)
            shape[p->nb + p->na + i] = ad_ein_extent(b, p->bo[i]);
        y.v = ad_reshape(c, y.v, (size_t)y.r, shape);
    } else if (p->na == 0 || p->nbo == 0) {
        int64_t ax[2], n = 0;
        if (p->na == 0)
            ax[n++] = p->nb;
        if (p->nbo == 0)
            ax[n++] = p->nb + 1;
        y.v = ad_axes_op(c, c->n, "Squeeze", y.v, (size_t)n, ax);
    }
    memcpy(y.lab, p->batch, (size_t)p->nb * sizeof *y.lab);
    memcpy(y.lab + p->nb, p->ao, (size_t)p->na * sizeof *y.lab);
    memcpy(y.lab + p->nb + p->na, p->bo, (size_t)p->nbo * sizeof *y.lab);
    return y;
}

/* Unsqueeze of x at the n axes from `at` on (none when n = 0). */
static IrValue *ad_ein_ones(AdCtx *c, IrValue *x, int at, int n)
{
    int64_t ax[AD_EIN_LABELS];
    for (int i = 0; i < n; i++)
        ax[i] = at + i;
    return n == 0 ? x : ad_axes_op(c, c->n, "Unsqueeze", x, (size_t)n, ax);
}

/* The contraction by broadcasting Mul then ReduceSum: a as [batch, A, 1.., K],
 * b as [batch, 1.., B, K]; works for any extents, 1s broadcasting. */
static AdEinT ad_ein_by_mul(AdCtx *c, AdEinT *a, AdEinT *b, const AdEinPair *p)
{
    AdEinT y = {.r = p->nb + p->na + p->nbo};
    ad_ein_layout(c, a, p->batch, p->nb, p->ao, p->na, p->sum, p->ns);
    ad_ein_layout(c, b, p->batch, p->nb, p->bo, p->nbo, p->sum, p->ns);
    IrValue *va = ad_ein_ones(c, a->v, p->nb + p->na, p->nbo);
    IrValue *vb = ad_ein_ones(c, b->v, p->nb, p->na);
    y.v = ad_op2(c, "Mul", va, vb);
    if (p->ns > 0) {
        int64_t ax[AD_EIN_LABELS];
        for (int i = 0; i < p->ns; i++)
            ax[i] = y.r + i;
        y.v = ad_reduce(c, "ReduceSum", y.v, (size_t)p->ns, ax, false);
    }
    memcpy(y.lab, p->batch, (size_t)p->nb * sizeof *y.lab);
    memcpy(y.lab + p->nb, p->ao, (size_t)p->na * sizeof *y.lab);
    memcpy(y.lab + p->nb + p->na, p->bo, (size_t)p->nbo * sizeof *y.lab);
    return y;
}

/* Contracts acc with operand i; the result replaces acc. */
static int ad_ein_contract(AdCtx *c, const AdEin *e, AdEinT *acc, size_t i)
{
    AdEinT b = e->t[i];
    ad_ein_sum_unneeded(c, e, acc, i, &b);
    ad_ein_sum_unneeded(c, e, &b, i + 1, acc);
    AdEinPair p;
    ad_ein_groups(e, acc, &b, i + 1, &p);
    if (p.nb + p.na + p.nbo + p.ns > 2 * AD_EIN_RANK)
        return ad_refuse(c, DG_SHAPE, "the contraction with operand %zu has more than %d "
                         "labels", i, 2 * AD_EIN_RANK);
    *acc = ad_ein_matmul_ok(acc, &b, &p) ? ad_ein_by_matmul(c, acc, &b, &p)
                                          : ad_ein_by_mul(c, acc, &b, &p);
    return acc->v ? 0 : -1;
}

/* Einsum (12) where it does not exist (see the top of the file). */
static int ad_einsum_gone(AdCtx *c)
{
    char *eq = ad_ein_equation(c);
    if (!eq)
        return ad_refuse(c, DG_ATTRIBUTE, "the equation is missing or too long");
    AdEin e = {.n = c->n->n_in};
    e.t = mem_array(e.n + 1, sizeof *e.t);
    int rc = e.n ? ad_ein_parse(c, &e, eq) : ad_refuse(c, DG_ARITY, "Einsum has no input");
    for (size_t i = 0; rc == 0 && i < e.n; i++)
        rc = ad_ein_diagonals(c, &e.t[i]);
    AdEinT acc = e.n ? e.t[0] : (AdEinT){0};
    for (size_t i = 1; rc == 0 && i < e.n; i++)
        rc = ad_ein_contract(c, &e, &acc, i);
    if (rc == 0) {
        ad_ein_sum_unneeded(c, &e, &acc, e.n, NULL);
        ad_ein_order(c, &acc, e.out);
        if (acc.v && acc.v == ad_in(c, 0))
            acc.v = ad_op1(c, "Identity", acc.v);
        if (!acc.v || !acc.v->producer)
            rc = c->refusal ? -1 : ad_refuse(c, DG_INTERNAL, "the rewrite could not be built");
        else
            ad_replace(c, acc.v->producer);
    }
    free(e.t);
    free(eq);
    return rc;
}

static const AdEntry ad_einsum[] = {
    AD_GONE("Einsum", 12, AD_EXPAND, ad_einsum_gone),
};

const AdFamily ad_family_einsum = {"einsum", ad_einsum, sizeof ad_einsum / sizeof ad_einsum[0]};
