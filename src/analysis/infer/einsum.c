/*
 * infer/einsum.c - inference of Einsum: labels of the equation bound to
 * input dims, the output from the labels after "->" or, without one,
 * from the labels seen once.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <stdlib.h>
#include <string.h>

/* What is known of one label's extent over its occurrences. */
typedef struct InfLabel {
    int count;               /* occurrences over all operands */
    bool unknown;            /* an occurrence whose dim is not known */
    bool one;                /* an occurrence of known extent 1 */
    int64_t big;             /* a known extent > 1 (0: none) */
    bool conflict;           /* two different known extents > 1 */
    const IrDim *sym;        /* a symbolic occurrence */
    bool sym_conflict;       /* two different symbols */
} InfLabel;

/* Index of an einsum label letter (ASCII order: 'A'..'Z' then 'a'..'z'),
 * or -1 for another character. */
static int inf_label_index(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return 26 + (ch - 'a');
    return -1;
}

/* Records one occurrence of a label with extent d. */
static void inf_label_see(InfLabel *l, const IrDim *d)
{
    l->count++;
    if (d->kind == IR_DIM_VALUE) {
        if (d->value == 1)
            l->one = true;
        else if (l->big && l->big != d->value)
            l->conflict = true;
        else
            l->big = d->value;
    } else if (d->kind == IR_DIM_PARAM) {
        if (l->sym && !inf_dim_same(l->sym, d))
            l->sym_conflict = true;
        l->sym = d;
    } else {
        l->unknown = true;
    }
}

/* The extent of a label: a known extent > 1 wins (a 1 could only
 * broadcast to it); all ones give 1; one symbol alone gives the symbol. */
static void inf_label_dim(const InfLabel *l, IrDim *out)
{
    inf_dim_unknown(out);
    if (l->conflict)
        return;
    if (l->big)
        inf_dim_set(out, l->big);
    else if (l->one && !l->unknown && !l->sym)
        inf_dim_set(out, 1);
    else if (l->sym && !l->sym_conflict && !l->one && !l->unknown)
        inf_dim_copy(out, l->sym);
}

/* Parses one einsum term (letters and at most one "..."): its labels in
 * order (lab, *nlab) and where the ellipsis is (*ell: position among the
 * labels, -1 for none). -1 (failed) on a malformed term. */
static int inf_einsum_term(InfCtx *c, const char *t, size_t len, int *lab,
                           size_t *nlab, int *ell)
{
    *nlab = 0;
    *ell = -1;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '.') {
            if (*ell >= 0 || i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.')
                return inf_fail(c, "attribute", "malformed ellipsis in einsum term "
                                "'%.*s'", (int)len, t);
            *ell = (int)*nlab;
            i += 2;
            continue;
        }
        int x = inf_label_index(t[i]);
        if (x < 0)
            return inf_fail(c, "attribute", "einsum term '%.*s' has character '%c'",
                            (int)len, t, t[i]);
        if (*nlab >= 64)
            return inf_fail(c, "attribute", "einsum term '%.*s' is too long", (int)len, t);
        lab[(*nlab)++] = x;
    }
    return 0;
}

/* Einsum: output dims from the labels of the equation (explicit after
 * "->", else the ellipsis then the labels seen once, in ASCII order). */
static int inf_einsum(InfCtx *c)
{
    const char *eq0 = inf_attr_s(c, "equation");
    if (!eq0)
        return 0;
    char eq[1024];
    size_t n = 0;
    for (const char *p = eq0; *p && n + 1 < sizeof eq; p++)
        if (*p != ' ')
            eq[n++] = *p;
    eq[n] = '\0';
    char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : n;
    InfLabel labels[52];
    memset(labels, 0, sizeof labels);
    size_t n_in = inf_n_in(c), term = 0;
    bool any_ell = false, ell_known = true;
    IrShape *ell_shape = ir_shape_new(0);
    int rc = 0;
    for (size_t at = 0; at <= lhs_len && rc == 0; term++) {
        size_t end = at;
        while (end < lhs_len && eq[end] != ',')
            end++;
        int lab[64], ell;
        size_t nlab;
        if (term >= n_in) {
            rc = inf_fail(c, "attribute", "the equation has more terms than the %zu "
                          "inputs", n_in);
            break;
        }
        if (inf_einsum_term(c, eq + at, end - at, lab, &nlab, &ell) < 0) {
            rc = -1;
            break;
        }
        const IrShape *s = inf_in_shape(c, term);
        if (ell >= 0)
            any_ell = true;
        if (s && (ell < 0 ? s->rank != nlab : s->rank < nlab)) {
            rc = inf_fail(c, "attribute", "input %zu has rank %zu, its term '%.*s' %s %zu "
                          "labels", term, s->rank, (int)(end - at), eq + at,
                          ell < 0 ? "has" : "has more than", nlab);
            break;
        }
        size_t ell_rank = s ? s->rank - nlab : 0;
        for (size_t i = 0; i < nlab; i++) {
            if (!s) {
                labels[lab[i]].count++;
                labels[lab[i]].unknown = true;
                continue;
            }
            size_t pos = (ell >= 0 && (int)i >= ell) ? i + ell_rank : i;
            inf_label_see(&labels[lab[i]], &s->dims[pos]);
        }
        if (ell >= 0 && !s) {
            ell_known = false;
        } else if (ell >= 0 && ell_known) {
            IrShape *part = inf_sub_shape(s, (size_t)ell, (size_t)ell + ell_rank);
            const IrShape *two[2] = {ell_shape, part};
            IrShape *merged;
            rc = inf_broadcast(c, two, 2, &merged);
            ir_shape_free(part);
            if (rc == 0) {
                ir_shape_free(ell_shape);
                ell_shape = merged;
            }
        }
        at = end + 1;
    }
    if (rc == 0 && term != n_in)
        rc = inf_fail(c, "attribute", "the equation has %zu terms for %zu inputs", term,
                      n_in);
    int out[64];
    size_t nout = 0;
    int out_ell = -1;
    if (rc == 0 && arrow) {
        rc = inf_einsum_term(c, arrow + 2, strlen(arrow + 2), out, &nout, &out_ell);
        for (size_t i = 0; rc == 0 && i < nout; i++)
            if (labels[out[i]].count == 0)
                rc = inf_fail(c, "attribute", "output label '%c' is not an input label",
                              out[i] < 26 ? 'A' + out[i] : 'a' + out[i] - 26);
    } else if (rc == 0) {
        out_ell = any_ell ? 0 : -1;
        for (int x = 0; x < 52; x++)
            if (labels[x].count == 1)
                out[nout++] = x;
    }
    if (rc == 0 && (out_ell < 0 || !any_ell || ell_known)) {
        size_t er = (out_ell >= 0 && any_ell) ? ell_shape->rank : 0;
        IrShape *o = inf_out_shape(c, 0, nout + er);
        for (size_t i = 0, k = 0; o && i <= nout; i++) {
            if ((int)i == out_ell)
                for (size_t j = 0; j < er; j++)
                    inf_dim_copy(&o->dims[k++], &ell_shape->dims[j]);
            if (i < nout)
                inf_label_dim(&labels[out[i]], &o->dims[k++]);
        }
    }
    ir_shape_free(ell_shape);
    return rc;
}

const InfOp inf_ops_einsum[] = {
    {"", "Einsum", inf_einsum},
    {NULL, NULL, NULL}};
