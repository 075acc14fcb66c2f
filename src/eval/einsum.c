/* Einsum (12) of ai.onnx.
 *
 * Subtle points:
 * - Labels a-z and A-Z, one "..." per term (broadcast, right aligned),
 *   repeated labels take diagonals, a dim of 1 broadcasts.
 * - Without "->" the output is the ellipsis dims then the labels used
 *   once, in ASCII order (as numpy). Ellipsis dims missing from an
 *   explicit output are summed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/kernels.h"

#define EV_EIN_LETTERS 52

/* Label ids: a-z 0..25, A-Z 26..51, ellipsis dims 52 + k. */
static int ev_ein_letter(char ch)
{
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a';
    if (ch >= 'A' && ch <= 'Z')
        return 26 + (ch - 'A');
    return -1;
}

/* One term of the equation (NUL-terminated, spaces removed): its labels,
 * with "..." expanded to `ell` labels aligned right in `nell`. */
static int ev_ein_term(EvCtx *c, const char *s, size_t ell, size_t nell,
                       int *lab, size_t *n)
{
    size_t k = 0;
    bool seen = false;
    for (const char *p = s; *p; p++) {
        if (strncmp(p, "...", 3) == 0) {
            if (seen)
                return ev_fail(c, "a term has two ellipses");
            if (k + ell > EV_MAX_RANK)
                return ev_fail(c, "a term has too many labels");
            seen = true;
            for (size_t j = 0; j < ell; j++)
                lab[k++] = EV_EIN_LETTERS + (int)(nell - ell + j);
            p += 2;
            continue;
        }
        int l = ev_ein_letter(*p);
        if (l < 0)
            return ev_fail(c, "equation has a bad character '%c'", *p);
        if (k >= EV_MAX_RANK)
            return ev_fail(c, "a term has too many labels");
        lab[k++] = l;
    }
    *n = k;
    return 0;
}

/* Letters of a term, and whether it has "...". */
static void ev_ein_count(const char *s, size_t *letters, bool *ell)
{
    *letters = 0;
    *ell = strstr(s, "...") != NULL;
    for (; *s; s++)
        *letters += ev_ein_letter(*s) >= 0;
}

typedef struct EvEin {
    size_t nin, nell, nl, nout;  /* inputs, ellipsis dims, labels, out */
    int lab[EV_EIN_LETTERS + EV_MAX_RANK];   /* loop order: out first */
    int64_t dim[EV_EIN_LETTERS + EV_MAX_RANK];   /* by label id */
    size_t *st;                  /* nin x nl strides (0 = broadcast) */
} EvEin;

/* Splits the equation into terms (in place), one per input plus output. */
static int ev_ein_split(EvCtx *c, char *eq, char **terms, char **outp)
{
    char *arrow = strstr(eq, "->");
    *outp = NULL;
    if (arrow) {
        *arrow = 0;
        *outp = arrow + 2;
        if (strstr(*outp, "->"))
            return ev_fail(c, "equation has two arrows");
    }
    size_t k = 0;
    for (char *p = eq;; p++) {
        if (k == c->n_in)
            return ev_fail(c, "equation has more terms than the %zu inputs",
                           c->n_in);
        terms[k++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = 0;
    }
    if (k != c->n_in)
        return ev_fail(c, "equation has %zu terms for %zu inputs", k,
                       c->n_in);
    return 0;
}

/* Sets label l's dim from an operand dim (1 broadcasts). */
static int ev_ein_dim(EvCtx *c, EvEin *e, bool *set, int l, int64_t d)
{
    if (!set[l] || e->dim[l] == 1)
        e->dim[l] = d;
    else if (d != 1 && d != e->dim[l])
        return ev_fail(c, "label dims differ: %lld and %lld",
                       (long long)e->dim[l], (long long)d);
    set[l] = true;
    return 0;
}

enum { EV_EIN_NL = EV_EIN_LETTERS + EV_MAX_RANK };

/* The inputs' terms: the ellipsis width, each label's dim (set[]) and
 * how many times it appears (cnt[]). */
static int ev_ein_inputs(EvCtx *c, EvEin *e, char **terms, EvValue **in,
                         bool *set, size_t *cnt)
{
    int lab[EV_MAX_RANK];
    size_t n, letters;
    bool ell;
    e->nell = 0;
    for (size_t j = 0; j < e->nin; j++) {
        ev_ein_count(terms[j], &letters, &ell);
        if (letters > in[j]->rank || (!ell && letters != in[j]->rank))
            return ev_fail(c, "term %zu has %zu labels for rank %zu", j,
                           letters, in[j]->rank);
        if (ell && in[j]->rank - letters > e->nell)
            e->nell = in[j]->rank - letters;
    }
    for (size_t j = 0; j < e->nin; j++) {
        ev_ein_count(terms[j], &letters, &ell);
        if (ev_ein_term(c, terms[j], in[j]->rank - letters, e->nell, lab, &n))
            return -1;
        for (size_t d = 0; d < n; d++) {
            if (ev_ein_dim(c, e, set, lab[d], in[j]->dims[d]))
                return -1;
            cnt[lab[d]]++;
        }
    }
    return 0;
}

/* The output labels, explicit or implicit, then the summed ones. */
static int ev_ein_output(EvCtx *c, EvEin *e, const char *outp,
                         const bool *set, const size_t *cnt)
{
    bool used[EV_EIN_NL] = {false};
    e->nout = 0;
    if (outp) {
        int lab[EV_MAX_RANK];
        size_t n;
        if (ev_ein_term(c, outp, e->nell, e->nell, lab, &n))
            return -1;
        for (size_t d = 0; d < n; d++) {
            if (!set[lab[d]] || used[lab[d]])
                return ev_fail(c, "output label %zu is unknown or repeated",
                               d);
            used[lab[d]] = true;
            e->lab[e->nout++] = lab[d];
        }
    } else {
        static const char order[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "abcdefghijklmnopqrstuvwxyz";
        for (size_t k = 0; k < e->nell; k++) {
            used[EV_EIN_LETTERS + k] = true;
            e->lab[e->nout++] = EV_EIN_LETTERS + (int)k;
        }
        for (const char *p = order; *p; p++) {
            int l = ev_ein_letter(*p);
            if (cnt[l] == 1) {
                used[l] = true;
                e->lab[e->nout++] = l;
            }
        }
    }
    e->nl = e->nout;
    for (int l = 0; l < EV_EIN_NL; l++)
        if (set[l] && !used[l])
            e->lab[e->nl++] = l;
    return 0;
}

/* Each input's stride per loop label: the sum over its dims with that
 * label (a diagonal when repeated), 0 where a dim of 1 broadcasts. */
static int ev_ein_strides(EvCtx *c, EvEin *e, char **terms, EvValue **in)
{
    int lab[EV_MAX_RANK], pos[EV_EIN_NL];
    for (size_t k = 0; k < e->nl; k++)
        pos[e->lab[k]] = (int)k;
    e->st = ev_tmp(c, e->nin * e->nl + 1, sizeof *e->st);
    for (size_t j = 0; j < e->nin; j++) {
        size_t letters, n, xs[EV_MAX_RANK];
        bool ell;
        ev_ein_count(terms[j], &letters, &ell);
        if (ev_ein_term(c, terms[j], in[j]->rank - letters, e->nell, lab, &n))
            return -1;
        ev_strides(in[j]->rank, in[j]->dims, xs);
        for (size_t d = 0; d < n; d++) {
            int l = lab[d];
            for (size_t d2 = 0; d2 < d; d2++)
                if (lab[d2] == l && in[j]->dims[d2] != in[j]->dims[d])
                    return ev_fail(c, "a repeated label has dims %lld and "
                                   "%lld", (long long)in[j]->dims[d2],
                                   (long long)in[j]->dims[d]);
            if (in[j]->dims[d] != 1 || e->dim[l] == 1)
                e->st[j * e->nl + (size_t)pos[l]] += xs[d];
        }
    }
    return 0;
}

/* Orders labels (output ones first) and builds each input's strides. */
static int ev_ein_plan(EvCtx *c, EvEin *e, char **terms, char *outp,
                       EvValue **in)
{
    bool set[EV_EIN_NL] = {false};
    size_t cnt[EV_EIN_NL] = {0};
    if (ev_ein_inputs(c, e, terms, in, set, cnt) ||
        ev_ein_output(c, e, outp, set, cnt))
        return -1;
    return ev_ein_strides(c, e, terms, in);
}

/* Advances the labels [from, to) odometer, keeping offsets in step. */
static void ev_ein_next(const EvEin *e, const int64_t *dims, size_t *coord,
                        size_t *off, size_t from, size_t to)
{
    for (size_t k = to; k-- > from;) {
        for (size_t j = 0; j < e->nin; j++)
            off[j] += e->st[j * e->nl + k];
        if (++coord[k] < (size_t)dims[k])
            return;
        for (size_t j = 0; j < e->nin; j++)
            off[j] -= coord[k] * e->st[j * e->nl + k];
        coord[k] = 0;
    }
}

/* Each output element: the sum over the summed labels of the product of
 * the inputs' elements (double for floats, wrapping uint64 for ints). */
static void ev_ein_run(EvCtx *c, const EvEin *e, EvValue **in,
                       const int64_t *dims, EvValue *y)
{
    size_t nsum = ev_dims_prod(dims, e->nout, e->nl);
    size_t coord[EV_EIN_NL] = {0};
    size_t *off = ev_tmp(c, e->nin, sizeof *off);
    bool fl = ev_dtype_is_float(y->dtype);
    for (size_t i = 0; i < y->numel; i++) {
        double fa = 0;
        uint64_t ia = 0;
        for (size_t s = 0; s < nsum; s++) {
            double fp = 1;
            uint64_t ip = 1;
            for (size_t j = 0; j < e->nin; j++) {
                if (fl)
                    fp *= ev_at_get(in[j], off[j]);
                else
                    ip *= ev_get_u(in[j], off[j]);
            }
            fa += fp, ia += ip;
            ev_ein_next(e, dims, coord, off, e->nout, e->nl);
        }
        if (fl)
            ev_set_f(y, i, fa);
        else
            ev_set_u(y, i, ia);
        ev_ein_next(e, dims, coord, off, 0, e->nout);
    }
}

static int ev_einsum(EvCtx *c)
{
    if (c->n_in == 0)
        return ev_fail(c, "Einsum needs an input");
    EvValue **in = ev_tmp(c, c->n_in, sizeof *in);
    for (size_t j = 0; j < c->n_in; j++) {
        if (!(in[j] = ev_in_tensor(c, j)))
            return -1;
        if (in[j]->dtype != in[0]->dtype)
            return ev_fail(c, "inputs differ in element type");
    }
    int32_t t = in[0]->dtype;
    if (!ev_dtype_is_float(t) && !ev_dtype_is_int(t))
        return ev_fail(c, "element type %d is not supported", (int)t);
    const char *eq0 = ev_attr_s_or(c, "equation", NULL);
    if (!eq0)
        return ev_fail(c, "attribute equation is required");
    char *eq = ev_tmp(c, strlen(eq0) + 1, 1), **terms;
    size_t m = 0;
    for (const char *p = eq0; *p; p++)
        if (*p != ' ' && *p != '\t')
            eq[m++] = *p;
    terms = ev_tmp(c, c->n_in, sizeof *terms);
    char *outp;
    EvEin e = {.nin = c->n_in};
    if (ev_ein_split(c, eq, terms, &outp) ||
        ev_ein_plan(c, &e, terms, outp, in))
        return -1;
    int64_t dims[EV_EIN_LETTERS + EV_MAX_RANK];
    for (size_t k = 0; k < e.nl; k++)
        dims[k] = e.dim[e.lab[k]];
    if (e.nout > EV_MAX_RANK)
        return ev_fail(c, "output rank %zu is above the limit", e.nout);
    EvValue *y = ev_out_tensor(c, 0, t, e.nout, dims);
    if (!y)
        return -1;
    ev_ein_run(c, &e, in, dims, y);
    return 0;
}

const EvOp ev_ops_einsum[] = {
    {"", "Einsum", ev_einsum},
    {NULL, NULL, NULL}
};

