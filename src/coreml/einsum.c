/*
 * coreml/einsum.c - Core ML lowering and raising of the einsum family:
 * Einsum as MIL's einsum where it computes the equation, else as a
 * (batched) matmul between transposes and reshapes.
 *
 * MIL facts (coremltools' iOS15 einsum): two fp16/fp32 inputs of the same
 * rank, and only two equations up to renaming the letters (numbered by
 * first appearance over input 1, input 2, output):
 *   rank 4  "nchw,nwhu->nchu"   [0,1,2,3],[0,3,2,4]->[0,1,2,4]
 *   rank 3  "chw,whu->chu"      [0,1,2],[2,1,3]->[0,1,3]
 * MIL's matmul (iOS15) multiplies the last two dims, broadcasts the ones
 * before them as numpy does, transposes the last two dims of x or y itself
 * when transpose_x/transpose_y is set, and takes a 1-D x (y) as one row
 * (column) that it drops from the result.
 *
 * Every other equation of one or two inputs whose letters each appear once
 * per term is a matmul: the letters of both inputs and the output are
 * batch dims, those of both inputs only are contracted (K), those of one
 * input and the output are that side's free dims (M or N). Each input is
 * summed (reduce_sum) over the letters no other term has, transposed to
 * [batch.., M.., K..] ([batch.., K.., N..] for y), its M (N) and K letters
 * reshaped into one dim each; the result is reshaped back to the letters
 * and transposed to the output's order. Of the orders the groups can be
 * taken in (the output's, either input's), and with x and y swapped (the
 * output then transposed by the matmul itself), the plan with the fewest
 * transposes and reshapes is emitted; transpose_x/y replace a transpose
 * that only swaps the last two groups. One input: reduce_sum and a
 * transpose (or identity).
 *
 * Refused, and why: a letter twice in one term (a diagonal: no MIL op
 * takes one), an output letter no input has or one the output repeats,
 * "..." where the input's rank is unknown, more than two inputs, reshapes
 * where a merged dim is unknown or 0 (MIL's reshape reads 0 as "copy"),
 * element types other than fp16, fp32 and int32 (int64 narrowed).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coreml/rules.h"

#define ES_MAX 16       /* letters per term (ellipsis dims included) */
#define ES_ELL 52       /* ids: 0-25 'A'-'Z', 26-51 'a'-'z', then the ellipsis dims */
#define ES_IDS (ES_ELL + ES_MAX)

/* An equation as letter ids: terms 0..n_in-1 are the inputs, term 2 the
 * output (explicit, or numpy's implicit one). */
typedef struct EsEq {
    size_t n_in;
    int t[3][ES_MAX];
    size_t len[3];
} EsEq;

static int es_letter(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return 26 + ch - 'a';
    return -1;
}

/* The character a message shows for id (ellipsis dims as '.'). */
static char es_char(int id)
{
    return (char)(id < 26 ? 'A' + id : id < ES_ELL ? 'a' + id - 26 : '.');
}

/* One term, [s, s+n), as ids; *ell gets the index of "..." among them
 * (-1: none). False when it is not letters, spaces and one "...". */
static bool es_term(const char *s, size_t n, int *ids, size_t *len, int *ell)
{
    *len = 0;
    *ell = -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ')
            continue;
        if (s[i] == '.') {
            if (*ell >= 0 || n - i < 3 || s[i + 1] != '.' || s[i + 2] != '.')
                return false;
            *ell = (int)*len;
            i += 2;
            continue;
        }
        int id = es_letter(s[i]);
        if (id < 0 || *len == ES_MAX)
            return false;
        ids[(*len)++] = id;
    }
    return true;
}

/* Term k of e from raw ids with the ellipsis (at ell, -1 none) expanded to
 * `ne` dims, right-aligned among the equation's `e_max`. */
static bool es_expand(EsEq *e, size_t k, const int *raw, size_t len, int ell, size_t ne,
                      size_t e_max)
{
    if (len + ne > ES_MAX)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if ((int)i == ell)
            for (size_t j = 0; j < ne; j++)
                e->t[k][o++] = ES_ELL + (int)(e_max - ne + j);
        e->t[k][o++] = raw[i];
    }
    if (ell == (int)len)
        for (size_t j = 0; j < ne; j++)
            e->t[k][o++] = ES_ELL + (int)(e_max - ne + j);
    e->len[k] = o;
    return true;
}

/* numpy's implicit output: the ellipsis dims, then the letters that
 * appear exactly once, in alphabetical (ASCII) order. */
static void es_implicit(EsEq *e, size_t e_max)
{
    int count[ES_IDS] = {0};
    for (size_t k = 0; k < e->n_in; k++)
        for (size_t i = 0; i < e->len[k]; i++)
            count[e->t[k][i]]++;
    size_t o = 0;
    for (size_t j = 0; j < e_max; j++)
        e->t[2][o++] = ES_ELL + (int)j;
    for (int id = 0; id < ES_ELL && o < ES_MAX; id++)
        if (count[id] == 1)
            e->t[2][o++] = id;
    e->len[2] = o;
}

/* Parses eq for n_in inputs of the given ranks (-1 unknown). False with
 * why when malformed or "..." meets an unknown rank. */
static bool es_parse(const char *eq, size_t n_in, const int *ranks, EsEq *e, char *why,
                     size_t cap)
{
    memset(e, 0, sizeof *e);
    e->n_in = n_in;
    const char *arrow = strstr(eq, "->");
    size_t lhs = arrow ? (size_t)(arrow - eq) : strlen(eq);
    int raw[2][ES_MAX], ell[2];
    size_t len[2], ne[2], e_max = 0, k = 0;
    for (const char *s = eq, *end = eq + lhs; k <= n_in; k++) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *stop = comma ? comma : end;
        if (k == n_in || !es_term(s, (size_t)(stop - s), raw[k], &len[k], &ell[k])) {
            snprintf(why, cap, "equation '%s' is not %zu terms of letters", eq, n_in);
            return false;
        }
        if (ell[k] >= 0 ? ranks[k] < 0 || (size_t)ranks[k] < len[k]
                        : ranks[k] >= 0 && (size_t)ranks[k] != len[k]) {
            snprintf(why, cap, "input %zu has rank %d, which term %zu of '%s' does not name",
                     k, ranks[k], k, eq);
            return false;
        }
        ne[k] = ell[k] >= 0 ? (size_t)ranks[k] - len[k] : 0;
        e_max = ne[k] > e_max ? ne[k] : e_max;
        if (!comma) {
            k++;
            break;
        }
        s = comma + 1;
    }
    if (k != n_in) {
        snprintf(why, cap, "equation '%s' has %zu input terms for %zu inputs", eq, k, n_in);
        return false;
    }
    for (k = 0; k < n_in; k++)
        if (!es_expand(e, k, raw[k], len[k], ell[k], ne[k], e_max)) {
            snprintf(why, cap, "more than %d dims in a term", ES_MAX);
            return false;
        }
    if (!arrow) {
        es_implicit(e, e_max);
        return true;
    }
    int out[ES_MAX], oell;
    size_t olen;
    if (!es_term(arrow + 2, strlen(arrow + 2), out, &olen, &oell) ||
        !es_expand(e, 2, out, olen, oell, oell >= 0 ? e_max : 0, e_max)) {
        snprintf(why, cap, "the output term of '%s' is not letters", eq);
        return false;
    }
    return true;
}

/* ---- MIL's own einsum ------------------------------------------------------------ */

static bool es_is(const int *v, size_t n, const int *want, size_t nw)
{
    return n == nw && !memcmp(v, want, n * sizeof *v);
}

/* Whether e is one of MIL's two equations: its ids renumbered by first
 * appearance over input 1, input 2, output. */
static bool es_supported(const EsEq *e)
{
    static const int a4[] = {0, 1, 2, 3}, b4[] = {0, 3, 2, 4}, c4[] = {0, 1, 2, 4};
    static const int a3[] = {0, 1, 2}, b3[] = {2, 1, 3}, c3[] = {0, 1, 3};
    int num[ES_IDS], t[3][ES_MAX], next = 0;
    if (e->n_in != 2)
        return false;
    memset(num, -1, sizeof num);
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < e->len[k]; i++) {
            int id = e->t[k][i];
            if (num[id] < 0)
                num[id] = next++;
            t[k][i] = num[id];
        }
    return (es_is(t[0], e->len[0], a4, 4) && es_is(t[1], e->len[1], b4, 4) &&
            es_is(t[2], e->len[2], c4, 4)) ||
           (es_is(t[0], e->len[0], a3, 3) && es_is(t[1], e->len[1], b3, 3) &&
            es_is(t[2], e->len[2], c3, 3));
}

/* ---- the matmul plan ------------------------------------------------------------ */

/* A value under construction: its letters, dims (-1 unknown), and either
 * its MIL name or the op that will compute it (output not yet added, so
 * that the last op can take the ONNX output's name and type). */
typedef struct EsVal {
    const char *name;
    MilOp *op;
    int32_t dt;
    size_t rank;
    int ids[ES_MAX];
    int64_t dims[ES_MAX];
} EsVal;

/* The groups of a plan, each an ordered list of ids: batch, contracted,
 * x's and y's free letters (M, N), and the leading free letters of one
 * side that stay batch dims of that side only (matmul broadcasts the
 * other's missing ones), so that they need no reshape. */
enum { ES_B, ES_K, ES_FX, ES_FY, ES_L, ES_NG };

typedef struct EsPlan {
    bool swap;              /* x is input 1 */
    bool tx, ty;            /* matmul's transpose_x, transpose_y */
    bool vx, vy;            /* x (y) enters as a 1-D vector */
    int lead;               /* ES_L holds free letters of x (1), y (2), none (0) */
    int g[ES_NG][ES_MAX];
    size_t n[ES_NG];
} EsPlan;

static int es_find(const int *ids, size_t n, int id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return (int)i;
    return -1;
}

static size_t es_cat(int *dst, size_t at, const int *src, size_t n)
{
    memcpy(dst + at, src, n * sizeof *src);
    return at + n;
}

/* The product of the dims of letters `ids` (n of them); -1 when one is
 * unknown. */
static int64_t es_volume(const int *ids, size_t n, const int64_t *dim_of)
{
    int64_t p = 1;
    for (size_t i = 0; i < n; i++) {
        if (dim_of[ids[i]] < 0)
            return -1;
        p *= dim_of[ids[i]];
    }
    return p;
}

/* The batch dims of x (y; the result: both): its leading letters, then
 * the shared batch letters. */
static size_t es_batch(const EsPlan *p, int side, int *ids)
{
    size_t o = p->lead & side ? es_cat(ids, 0, p->g[ES_L], p->n[ES_L]) : 0;
    return es_cat(ids, o, p->g[ES_B], p->n[ES_B]);
}

/* The layout x (y) takes before the matmul: batch, then M and K (K and N),
 * the two swapped when the flag is set; vectors are K alone. */
static size_t es_layout(const EsPlan *p, bool is_y, int *ids)
{
    bool vec = is_y ? p->vy : p->vx, flip = is_y ? !p->ty : p->tx;
    int free_g = is_y ? ES_FY : ES_FX;
    if (vec)
        return es_cat(ids, 0, p->g[ES_K], p->n[ES_K]);
    size_t o = es_batch(p, is_y ? 2 : 1, ids);
    if (flip) {
        o = es_cat(ids, o, p->g[ES_K], p->n[ES_K]);
        return es_cat(ids, o, p->g[free_g], p->n[free_g]);
    }
    o = es_cat(ids, o, p->g[free_g], p->n[free_g]);
    return es_cat(ids, o, p->g[ES_K], p->n[ES_K]);
}

static bool es_same(const int *a, const int *b, size_t n)
{
    return !memcmp(a, b, n * sizeof *a);
}

/* Ops an operand needs (transpose, reshape); -1 when its reshape would
 * have more than one unknown dim (MIL's reshape infers one: -1). */
static int es_operand_cost(const EsPlan *p, const EsVal *v, bool is_y, const int64_t *dim_of)
{
    int want[ES_MAX], batch[ES_MAX];
    es_layout(p, is_y, want);
    int free_g = is_y ? ES_FY : ES_FX;
    bool vec = is_y ? p->vy : p->vx;
    bool reshape = !vec && (p->n[free_g] != 1 || p->n[ES_K] != 1);
    if (reshape) {
        size_t nb = es_batch(p, is_y ? 2 : 1, batch);
        int unknown = (es_volume(p->g[free_g], p->n[free_g], dim_of) < 0) +
                      (es_volume(p->g[ES_K], p->n[ES_K], dim_of) < 0);
        for (size_t i = 0; i < nb; i++)
            unknown += v->dims[es_find(v->ids, v->rank, batch[i])] < 0;
        if (unknown > 1)
            return -1;
    }
    return !es_same(want, v->ids, v->rank) + reshape;
}

/* Whether the matmul's result needs a reshape into the letters. */
static bool es_out_reshape(const EsPlan *p)
{
    return (!p->vx && p->n[ES_FX] != 1) || (!p->vy && p->n[ES_FY] != 1);
}

/* The letters of the result once reshaped: batch, x's free, y's free. */
static size_t es_result_ids(const EsPlan *p, int *ids)
{
    size_t o = es_batch(p, 3, ids);
    o = es_cat(ids, o, p->g[ES_FX], p->n[ES_FX]);
    return es_cat(ids, o, p->g[ES_FY], p->n[ES_FY]);
}

/* The ids of src (in src's order) that are in group g, by membership
 * in input 0 (a), input 1 (b) and the output (o). */
static size_t es_pick(const int *src, size_t n, int g, bool swap, const bool *a,
                      const bool *b, const bool *o, int *dst)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int id = src[i];
        bool in_x = swap ? b[id] : a[id], in_y = swap ? a[id] : b[id];
        bool is = g == ES_B ? in_x && in_y && o[id]
                : g == ES_K ? in_x && in_y && !o[id]
                : g == ES_FX ? in_x && !in_y
                : in_y && !in_x;
        if (is)
            dst[k++] = id;
    }
    return k;
}

/* Whether the result's reshape, if any, has one unknown dim at most
 * (the operands' are es_operand_cost's). */
static bool es_result_known(const EsPlan *p, const int64_t *dim_of)
{
    int ids[ES_MAX], unknown = 0;
    size_t n = es_result_ids(p, ids);
    for (size_t i = 0; es_out_reshape(p) && i < n; i++)
        unknown += dim_of[ids[i]] < 0;
    return unknown <= 1;
}

/* The cheapest plan for the two inputs (reduced already) and output of
 * e; false when every plan needs a reshape of unknown dims. Each group
 * takes its letters in the order of one term that has them all: batch
 * letters the output's or either input's, contracted ones either input's,
 * free ones the output's or their input's. 576 plans: 2 (swap) x 2 x 2
 * (transpose flags) x 3 x 2 x 2 x 2 (orders) x 3 (leading letters: none,
 * x's, y's); the first of the cheapest wins, so that the plain one (no
 * swap, no flags) is kept on a tie. */
static bool es_plan(const EsVal *in, const EsEq *e, const int64_t *dim_of, EsPlan *best)
{
    bool a[ES_IDS] = {0}, b[ES_IDS] = {0}, o[ES_IDS] = {0};
    for (size_t i = 0; i < in[0].rank; i++)
        a[in[0].ids[i]] = true;
    for (size_t i = 0; i < in[1].rank; i++)
        b[in[1].ids[i]] = true;
    for (size_t i = 0; i < e->len[2]; i++)
        o[e->t[2][i]] = true;
    const int *src[3] = {e->t[2], in[0].ids, in[1].ids};
    size_t srcn[3] = {e->len[2], in[0].rank, in[1].rank};
    int best_cost = -1;
    for (int c = 0; c < 3 * 192; c++) {
        EsPlan p = {.swap = c & 1, .tx = c >> 1 & 1, .ty = c >> 2 & 1, .lead = c / 192};
        int rest = c % 192 >> 3, xs = p.swap ? 2 : 1;
        int from[ES_L] = {rest % 3, 1 + rest / 3 % 2, rest / 6 % 2 ? xs : 0,
                          rest / 12 % 2 ? 3 - xs : 0};
        for (int g = 0; g < ES_L; g++)
            p.n[g] = es_pick(src[from[g]], srcn[from[g]], g, p.swap, a, b, o, p.g[g]);
        if (p.lead) {
            /* all of that side's free letters but the last lead */
            int f = p.lead == 1 ? ES_FX : ES_FY;
            if (p.n[f] < 2)
                continue;
            p.n[ES_L] = es_cat(p.g[ES_L], 0, p.g[f], p.n[f] - 1);
            p.g[f][0] = p.g[f][p.n[f] - 1];
            p.n[f] = 1;
        }
        p.vx = !p.n[ES_B] && !p.n[ES_FX] && p.n[ES_K] == 1;
        p.vy = !p.n[ES_B] && !p.n[ES_FY] && p.n[ES_K] == 1;
        if ((p.vx && p.tx) || (p.vy && p.ty) || !es_result_known(&p, dim_of))
            continue;
        int cx = es_operand_cost(&p, &in[p.swap], false, dim_of);
        int cy = es_operand_cost(&p, &in[!p.swap], true, dim_of);
        if (cx < 0 || cy < 0)
            continue;
        int res[ES_MAX];
        size_t nr = es_result_ids(&p, res);
        int co = es_out_reshape(&p) + !es_same(res, e->t[2], nr);
        if (best_cost < 0 || cx + cy + co < best_cost) {
            best_cost = cx + cy + co;
            *best = p;
        }
    }
    return best_cost >= 0;
}

/* ---- emitting -------------------------------------------------------------------- */

/* v's MIL name, adding its pending op's output. */
static const char *es_name(CmLower *c, EsVal *v)
{
    if (v->op) {
        v->name = cml_tmp(c, v->op, v->dt, (int)v->rank, v->dims);
        v->op = NULL;
    }
    return v->name;
}

/* v becomes op(v, param = ints) with letters ids and dims (which may be
 * v's own); returns the op. */
static MilOp *es_apply(CmLower *c, EsVal *v, const char *type, const char *param,
                       const int64_t *ints, size_t n_ints, const int *ids, const int64_t *dims,
                       size_t rank)
{
    const char *x = es_name(c, v);
    MilOp *op = cml_op(c, type);
    mil_op_in(op, "x", x);
    mil_op_in_const(op, param, cml_ints(ints, n_ints));
    int tids[ES_MAX];
    int64_t tdims[ES_MAX];
    memcpy(tids, ids, rank * sizeof *ids);
    memcpy(tdims, dims, rank * sizeof *dims);
    memcpy(v->ids, tids, rank * sizeof *ids);
    memcpy(v->dims, tdims, rank * sizeof *dims);
    v->rank = rank;
    v->op = op;
    return op;
}

/* Transposes v so that its letters read `want` (a permutation of them). */
static void es_permute(CmLower *c, EsVal *v, const int *want)
{
    int64_t perm[ES_MAX], dims[ES_MAX];
    bool id = true;
    for (size_t i = 0; i < v->rank; i++) {
        perm[i] = es_find(v->ids, v->rank, want[i]);
        dims[i] = v->dims[perm[i]];
        id &= perm[i] == (int64_t)i;
    }
    if (!id)
        es_apply(c, v, "transpose", "perm", perm, v->rank, want, dims, v->rank);
}

/* Sums v over its letters that `keep` (n ids) lacks. */
static void es_reduce(CmLower *c, EsVal *v, const bool *keep)
{
    int64_t axes[ES_MAX], dims[ES_MAX];
    int ids[ES_MAX];
    size_t na = 0, nk = 0;
    for (size_t i = 0; i < v->rank; i++) {
        if (keep[v->ids[i]]) {
            ids[nk] = v->ids[i];
            dims[nk++] = v->dims[i];
        } else {
            axes[na++] = (int64_t)i;
        }
    }
    if (na)
        mil_op_in_const(es_apply(c, v, "reduce_sum", "axes", axes, na, ids, dims, nk),
                        "keep_dims", mil_tensor_scalar_bool(false));
}

/* Reshapes an operand laid out as es_layout says into [batch.., A, B]
 * (an unknown dim as -1). */
static void es_merge(CmLower *c, EsVal *v, const EsPlan *p, bool is_y, const int64_t *dim_of)
{
    bool vec = is_y ? p->vy : p->vx, flip = is_y ? !p->ty : p->tx;
    int free_g = is_y ? ES_FY : ES_FX;
    if (vec || (p->n[free_g] == 1 && p->n[ES_K] == 1))
        return;
    int64_t dims[ES_MAX];
    int ids[ES_MAX];
    size_t nb = es_batch(p, is_y ? 2 : 1, ids);
    memcpy(dims, v->dims, nb * sizeof *dims);
    int64_t f = es_volume(p->g[free_g], p->n[free_g], dim_of);
    int64_t k = es_volume(p->g[ES_K], p->n[ES_K], dim_of);
    dims[nb] = flip ? k : f;
    dims[nb + 1] = flip ? f : k;
    ids[nb] = ids[nb + 1] = -1;
    es_apply(c, v, "reshape", "shape", dims, nb + 2, ids, dims, nb + 2);
}

/* dim_of[id]: the largest known dim of each letter over the inputs (a
 * broadcast batch dim of 1 meets n); false with why when two known dims
 * of a contracted or free letter differ. */
static bool es_dims(const EsVal *in, size_t n_in, const bool *in_out, int64_t *dim_of,
                    char *why, size_t cap)
{
    for (int i = 0; i < ES_IDS; i++)
        dim_of[i] = -1;
    for (size_t k = 0; k < n_in; k++)
        for (size_t i = 0; i < in[k].rank; i++) {
            int id = in[k].ids[i];
            int64_t d = in[k].dims[i], *have = &dim_of[id];
            if (d < 0 || *have == d) {
                continue;
            } else if (*have < 0 || (*have == 1 && in_out[id])) {
                *have = d;
            } else if (!(d == 1 && in_out[id])) {
                snprintf(why, cap, "letter '%c' is %lld in one input and %lld in another",
                         es_char(id), (long long)*have, (long long)d);
                return false;
            }
        }
    return true;
}

/* The matmul of the plan on the two reduced inputs; r gets the result. */
static void es_matmul(CmLower *c, EsVal *in, const EsPlan *p, const int64_t *dim_of,
                      EsVal *r)
{
    EsVal *x = &in[p->swap], *y = &in[!p->swap];
    int want[ES_MAX];
    es_layout(p, false, want);
    es_permute(c, x, want);
    es_merge(c, x, p, false, dim_of);
    es_layout(p, true, want);
    es_permute(c, y, want);
    es_merge(c, y, p, true, dim_of);
    const char *xn = es_name(c, x), *yn = es_name(c, y);
    MilOp *op = cml_op(c, "matmul");
    mil_op_in(op, "x", xn);
    mil_op_in(op, "y", yn);
    if (p->tx)
        mil_op_in_const(op, "transpose_x", mil_tensor_scalar_bool(true));
    if (p->ty)
        mil_op_in_const(op, "transpose_y", mil_tensor_scalar_bool(true));
    *r = (EsVal){.op = op, .dt = x->dt};
    r->rank = es_batch(p, 3, r->ids);
    for (size_t i = 0; i < r->rank; i++)
        r->dims[i] = dim_of[r->ids[i]];
    if (!p->vx) {
        r->ids[r->rank] = p->n[ES_FX] == 1 ? p->g[ES_FX][0] : -1;
        r->dims[r->rank++] = es_volume(p->g[ES_FX], p->n[ES_FX], dim_of);
    }
    if (!p->vy) {
        r->ids[r->rank] = p->n[ES_FY] == 1 ? p->g[ES_FY][0] : -1;
        r->dims[r->rank++] = es_volume(p->g[ES_FY], p->n[ES_FY], dim_of);
    }
    for (size_t i = 0; i < r->rank; i++)
        if (r->dims[i] < 0)
            r->dims[i] = -1;
    if (es_out_reshape(p)) {
        int ids[ES_MAX];
        int64_t dims[ES_MAX];
        size_t n = es_result_ids(p, ids);
        for (size_t i = 0; i < n; i++)
            dims[i] = dim_of[ids[i]];
        es_apply(c, r, "reshape", "shape", dims, n, ids, dims, n);
    }
}

/* Checks what no plan can take: a letter twice in a term, output letters
 * in no input. */
static bool es_letters_ok(const EsEq *e, char *why, size_t cap)
{
    bool in_any[ES_IDS] = {0};
    for (size_t k = 0; k < 3; k++) {
        if (k == e->n_in)
            k = 2;
        bool seen[ES_IDS] = {0};
        for (size_t i = 0; i < e->len[k]; i++) {
            int id = e->t[k][i];
            if (seen[id]) {
                snprintf(why, cap, "letter '%c' twice in %s: %s", es_char(id),
                         k == 2 ? "the output" : "one input",
                         k == 2 ? "no MIL op repeats a dim" : "a diagonal, which no MIL op takes");
                return false;
            }
            seen[id] = true;
            if (k < 2)
                in_any[id] = true;
            else if (!in_any[id]) {
                snprintf(why, cap, "output letter '%c' is in no input", es_char(id));
                return false;
            }
        }
    }
    return true;
}

/* The input value k of n with the letters of term k. */
static bool es_input(CmLower *c, const IrNode *n, const EsEq *e, size_t k, int32_t dt,
                     EsVal *v)
{
    *v = (EsVal){.name = cml_in(c, n, k), .dt = dt, .rank = e->len[k]};
    memcpy(v->ids, e->t[k], v->rank * sizeof *v->ids);
    MilType t = cml_type(n->in[k]);
    for (size_t i = 0; i < v->rank; i++)
        v->dims[i] = t.rank == (int)v->rank ? t.dims[i] : -1;
    mil_type_clear(&t);
    return v->name != NULL;
}

/* Einsum through reduce_sum, transpose, reshape and matmul. */
static int es_lower_general(CmLower *c, const IrNode *n, const EsEq *e, int32_t dt)
{
    char why[160];
    if (!es_letters_ok(e, why, sizeof why))
        return cml_refuse(c, "%s", why);
    EsVal in[2];
    bool keep[2][ES_IDS] = {{0}}, in_out[ES_IDS] = {0};
    for (size_t i = 0; i < e->len[2]; i++)
        in_out[e->t[2][i]] = true;
    for (size_t k = 0; k < e->n_in; k++) {
        if (!es_input(c, n, e, k, dt, &in[k]))
            return -1;
        for (size_t i = 0; i < e->len[2]; i++)
            keep[k][e->t[2][i]] = true;
        for (size_t i = 0; e->n_in == 2 && i < e->len[1 - k]; i++)
            keep[k][e->t[1 - k][i]] = true;
    }
    int64_t dim_of[ES_IDS];
    if (!es_dims(in, e->n_in, in_out, dim_of, why, sizeof why))
        return cml_refuse(c, "%s", why);
    for (size_t k = 0; k < e->n_in; k++)
        es_reduce(c, &in[k], keep[k]);
    EsVal *r = &in[0], res;
    if (e->n_in == 2) {
        EsPlan p;
        if (!es_plan(in, e, dim_of, &p))
            return cml_refuse(c, "the matmul needs a reshape with more than one unknown dim");
        for (int i = 0; i < ES_IDS; i++)
            if (dim_of[i] == 0)
                return cml_refuse(c, "letter '%c' has dim 0, which MIL's reshape reads as "
                                  "'copy the input dim'", es_char(i));
        es_matmul(c, in, &p, dim_of, &res);
        r = &res;
    }
    es_permute(c, r, e->t[2]);
    MilOp *op = r->op;
    if (!op) {
        op = cml_op(c, "identity");
        mil_op_in(op, "x", r->name);
    }
    return cml_out(c, op, n, 0);
}

static int lower_einsum(CmLower *c, const IrNode *n)
{
    char buf[160], why[200];
    const char *eq = cml_attr_s(n, "equation", buf, sizeof buf);
    if (strlen(eq) + 1 >= sizeof buf)
        return cml_refuse(c, "equation longer than %zu characters", sizeof buf - 2);
    if (n->n_in < 1 || n->n_in > 2)
        return cml_refuse(c, "%zu inputs: the lowering takes one or two", n->n_in);
    int32_t dt = cm_dtype_to_mil(cml_elem(n->out[0]));
    if (dt != MIL_FP32 && dt != MIL_FP16 && dt != MIL_INT32)
        return cml_refuse(c, "einsum of a type other than fp16, fp32 and int32");
    int ranks[2] = {cml_rank(n->in[0]), n->n_in > 1 ? cml_rank(n->in[1]) : -1};
    EsEq e;
    if (!es_parse(eq, n->n_in, ranks, &e, why, sizeof why))
        return cml_refuse(c, "%s", why);
    if (!es_supported(&e) || dt == MIL_INT32)
        return es_lower_general(c, n, &e, dt);
    const char *a = cml_in(c, n, 0), *b = a ? cml_in(c, n, 1) : NULL;
    if (!b)
        return -1;
    MilOp *op = cml_op(c, "einsum");
    mil_op_in(op, "values", a);
    mil_op_in(op, "values", b);
    mil_op_in_const(op, "equation", mil_tensor_string(eq));
    return cml_out(c, op, n, 0);
}

static const CmLowerRule es_lower[] = {
    {"Einsum", lower_einsum},
};

/* ---- raising -------------------------------------------------------------------- */

static int raise_einsum(CmRaise *r, const MilOp *op)
{
    const char *eq = cmr_string(cmr_const(r, op, "equation"));
    int ranks[2] = {-1, -1};
    EsEq e;
    char why[200];
    if (!eq || !es_parse(eq, 2, ranks, &e, why, sizeof why) || !es_supported(&e))
        return cmr_fail(r, "equation absent or not one MIL defines");
    const char *in[2] = {cmr_in(r, op, "values", 0), cmr_in(r, op, "values", 1)};
    IrNode *node;
    if (cmr_simple(r, op, "Einsum", 2, in, &node) < 0)
        return -1;
    ir_node_set_attr(node, ir_attr_string("equation", eq));
    return 0;
}

static const CmRaiseRule es_raise[] = {
    {"einsum", raise_einsum},
};

CM_FAMILY(cm_family_einsum, "einsum", es_lower, es_raise);
