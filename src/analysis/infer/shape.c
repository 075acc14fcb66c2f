/*
 * infer/shape.c - inference of the shape family: Reshape, Flatten,
 * Squeeze, Unsqueeze, Concat, Split, Slice, Transpose, Expand, Tile
 * and Pad.
 *
 * Small integer tensors built from shapes keep their elements as dims
 * (symval) through Unsqueeze, Squeeze, Concat, Slice, Reshape and
 * Split, so that a Reshape or Expand target computed with
 * Shape->Gather->Unsqueeze->Concat is still known, symbols included.
 */
#include "analysis/infer.h"
#include "analysis/infer/infer_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Output o keeps input i's tracked elements (ops that only move a small
 * vector's elements between rank 0 and 1). */
static void inf_t_pass_symval(InfCtx *c, size_t o, size_t i)
{
    const IrShape *sv = inf_t_symval(c, i);
    if (sv)
        inf_out_symval(c, o, ir_shape_copy(sv));
}

/* Symbolic element counts: a known product and a multiset of symbols. */
typedef struct InfTCount {
    int64_t known;      /* product of the numeric dims */
    size_t n;           /* symbols in sym[] */
    const char **sym;   /* borrowed names */
    bool ok;            /* false: an unknown dim or an overflow */
} InfTCount;

/* Accumulates dims [from, to) of s except index `skip` into cnt. */
static void inf_t_count(InfTCount *cnt, const IrShape *s, size_t skip)
{
    cnt->known = 1;
    cnt->n = 0;
    cnt->ok = true;
    cnt->sym = mem_array(s->rank ? s->rank : 1, sizeof *cnt->sym);
    for (size_t k = 0; k < s->rank; k++) {
        const IrDim *d = &s->dims[k];
        if (k == skip)
            continue;
        if (inf_dim_known(d)) {
            if (d->value < 0 || (d->value && cnt->known > INT64_MAX / d->value))
                cnt->ok = false;
            else
                cnt->known *= d->value;
        } else if (d->kind == IR_DIM_PARAM && d->param && d->param[0]) {
            cnt->sym[cnt->n++] = d->param;
        } else {
            cnt->ok = false;
        }
    }
}

/* The dim a -1 of Reshape stands for: the input's element count divided
 * by the other output dims, symbols cancelling. Leaves `out` unknown when
 * it cannot be proven; -1 when the numbers surely do not divide. */
static int inf_t_infer_minus1(InfCtx *c, const IrShape *in, const IrShape *out,
                              size_t neg, IrDim *res)
{
    InfTCount a, b;
    inf_t_count(&a, in, (size_t)-1);
    inf_t_count(&b, out, neg);
    int rc = 0;
    if (a.ok && b.ok) {
        bool cancelled = true;
        for (size_t j = 0; j < b.n && cancelled; j++) {
            cancelled = false;
            for (size_t i = 0; i < a.n; i++)
                if (a.sym[i] && strcmp(a.sym[i], b.sym[j]) == 0) {
                    a.sym[i] = NULL;
                    cancelled = true;
                    break;
                }
        }
        const char *left = NULL;
        size_t n_left = 0;
        for (size_t i = 0; i < a.n; i++)
            if (a.sym[i]) {
                left = a.sym[i];
                n_left++;
            }
        if (cancelled && b.known != 0) {
            if (n_left == 0 && a.known % b.known == 0)
                inf_dim_set(res, a.known / b.known);
            else if (n_left == 0 && a.n == 0 && b.n == 0)
                rc = inf_fail(c, "shape", "%lld elements cannot be reshaped with "
                              "the other dims' product %lld", (long long)a.known,
                              (long long)b.known);
            else if (n_left == 1 && a.known == b.known) {
                IrDim sym = {.kind = IR_DIM_PARAM, .param = (char *)left};
                inf_dim_copy(res, &sym);
            }
        }
    }
    free(a.sym);
    free(b.sym);
    return rc;
}

/* Reshape: the target shape from the `shape` attribute (opset 1) or input
 * (5+); 0 copies the input's dim unless allowzero (14+); one -1 is
 * inferred from the element count, symbols cancelling. A small vector
 * keeps its tracked elements. */
static int inf_reshape(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    IrShape *tgt = NULL;
    if (c->since < 5) {
        const int64_t *v;
        long n = inf_attr_ints(c, "shape", &v);
        if (n >= 0)
            tgt = inf_t_shape_of_ints(v, (size_t)n);
    } else {
        tgt = inf_t_in_dims(c, 1);
    }
    if (!tgt) {
        int64_t n = c->since >= 5 ? inf_t_in_len(c, 1) : -1;
        if (n >= 0)
            inf_out_shape(c, 0, (size_t)n);
        return 0;
    }
    bool allowzero = c->since >= 14 && inf_attr_i(c, "allowzero") != 0;
    size_t neg = (size_t)-1;
    bool zero = false;
    int rc = 0;
    for (size_t k = 0; k < tgt->rank && rc == 0; k++) {
        IrDim *d = &tgt->dims[k];
        if (!inf_dim_known(d))
            continue;
        if (d->value == -1) {
            if (neg != (size_t)-1)
                rc = inf_fail(c, "shape", "the shape has more than one -1");
            neg = k;
            inf_dim_unknown(d);
        } else if (d->value < -1) {
            rc = inf_fail(c, "shape", "dimension %zu is %lld", k, (long long)d->value);
        } else if (d->value == 0 && allowzero) {
            zero = true;
        } else if (d->value == 0) {
            if (in && k >= in->rank)
                rc = inf_fail(c, "shape", "dimension %zu is 0 (copy the input's) "
                              "but the input has rank %zu", k, in->rank);
            else if (in)
                inf_dim_copy(d, &in->dims[k]);
            else
                inf_dim_unknown(d);
        }
    }
    if (rc == 0 && zero && neg != (size_t)-1)
        rc = inf_fail(c, "shape", "with allowzero, the shape cannot hold both 0 and -1");
    if (rc == 0 && in && neg != (size_t)-1)
        rc = inf_t_infer_minus1(c, in, tgt, neg, &tgt->dims[neg]);
    if (rc == 0 && in && neg == (size_t)-1) {
        /* numbers only: the element counts must agree */
        InfTCount a, b;
        inf_t_count(&a, in, (size_t)-1);
        inf_t_count(&b, tgt, (size_t)-1);
        if (a.ok && b.ok && a.n == 0 && b.n == 0 && a.known != b.known)
            rc = inf_fail(c, "shape", "%lld elements cannot take a shape of %lld",
                          (long long)a.known, (long long)b.known);
        free(a.sym);
        free(b.sym);
    }
    if (rc == 0) {
        inf_t_out_dims(c, 0, tgt);
        if (tgt->rank <= 1)
            inf_t_pass_symval(c, 0, 0);
    }
    ir_shape_free(tgt);
    return rc;
}

/* Flatten: [prod(dims before axis), prod(dims from axis)]. */
static int inf_flatten(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in) {
        inf_out_shape(c, 0, 2);
        return 0;
    }
    /* axis in [-r, r]; a negative one counts from r */
    int a;
    int64_t axis = inf_attr_i(c, "axis");
    if (inf_axis(c, "axis", axis, (int)in->rank, axis < 0 ? 0 : 1, &a) < 0)
        return -1;
    IrShape *o = inf_out_shape(c, 0, 2);
    if (o) {
        inf_dims_product(&o->dims[0], in, 0, (size_t)a);
        inf_dims_product(&o->dims[1], in, (size_t)a, in->rank);
    }
    return 0;
}

/* Squeeze: drops the listed axes (attribute before 13, input from 13),
 * which must be 1; with none, drops every dim known to be 1 (the rank is
 * then unknown if some dim is). */
static int inf_squeeze(InfCtx *c)
{
    int64_t *axes;
    size_t na;
    int st = inf_t_ints(c, c->since < 13, "axes", 1, &axes, &na);
    inf_t_pass_symval(c, 0, 0);
    const IrShape *in = inf_in_shape(c, 0);
    if (!in || st < 0) {
        free(axes);
        return 0;
    }
    size_t r = in->rank;
    bool *drop = mem_array(r ? r : 1, sizeof *drop);
    int *ax = mem_array(na ? na : 1, sizeof *ax);
    int rc = 0;
    bool rank_known = true;
    if (st == 1) {
        rc = inf_t_axes(c, "axes", axes, na, (int)r, 0, false, ax);
        for (size_t k = 0; rc == 0 && k < na; k++) {
            const IrDim *d = &in->dims[ax[k]];
            if (inf_dim_known(d) && d->value != 1)
                rc = inf_fail(c, "shape", "axis %d has size %lld, not 1", ax[k],
                              (long long)d->value);
            drop[ax[k]] = true;
        }
    } else {
        for (size_t k = 0; k < r; k++) {
            if (!inf_dim_known(&in->dims[k]))
                rank_known = false;
            drop[k] = inf_dim_known(&in->dims[k]) && in->dims[k].value == 1;
        }
    }
    if (rc == 0 && rank_known) {
        size_t n = 0;
        for (size_t k = 0; k < r; k++)
            n += !drop[k];
        IrShape *o = inf_out_shape(c, 0, n);
        for (size_t k = 0, j = 0; o && k < r; k++)
            if (!drop[k])
                inf_dim_copy(&o->dims[j++], &in->dims[k]);
    }
    free(drop);
    free(ax);
    free(axes);
    return rc;
}

/* Unsqueeze: inserts 1s at the listed axes of the output (attribute
 * before 13, input from 13). */
static int inf_unsqueeze(InfCtx *c)
{
    int64_t *axes;
    size_t na;
    int st = inf_t_ints(c, c->since < 13, "axes", 1, &axes, &na);
    const IrShape *in = inf_in_shape(c, 0);
    if (in && in->rank == 0 && st == 1 && na == 1)
        inf_t_pass_symval(c, 0, 0); /* a scalar becomes a 1-element vector */
    if (!in || st == 0) {
        free(axes);
        return 0;
    }
    if (st < 0) {
        int64_t n = inf_t_in_len(c, 1);
        if (n >= 0 && in->rank + (size_t)n <= INF_T_MAX_RANK)
            inf_out_shape(c, 0, in->rank + (size_t)n);
        return 0;
    }
    size_t r = in->rank + na;
    int *ax = mem_array(na ? na : 1, sizeof *ax);
    bool *ins = mem_array(r ? r : 1, sizeof *ins);
    int rc = r > INF_T_MAX_RANK ? 0 : inf_t_axes(c, "axes", axes, na, (int)r, 0, true, ax);
    if (rc == 0 && r <= INF_T_MAX_RANK) {
        for (size_t k = 0; k < na; k++)
            ins[ax[k]] = true;
        IrShape *o = inf_out_shape(c, 0, r);
        for (size_t k = 0, j = 0; o && k < r; k++) {
            if (ins[k])
                inf_dim_set(&o->dims[k], 1);
            else
                inf_dim_copy(&o->dims[k], &in->dims[j++]);
        }
    }
    free(ins);
    free(ax);
    free(axes);
    return rc;
}

/* Concatenates the tracked elements of the inputs (vectors); an input
 * whose elements are not tracked but whose length is known adds that many
 * unknown elements, so that the rest of a shape stays known. */
static void inf_t_concat_symval(InfCtx *c)
{
    size_t total = 0;
    bool some = false;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *sv = inf_t_symval(c, i);
        int64_t len = inf_in_rank(c, i) == 1 ? inf_t_in_len(c, i) : -1;
        if (sv)
            some = true;
        if (sv && inf_in_rank(c, i) <= 1)
            total += sv->rank;
        else if (len >= 0 && len <= INF_T_MAX_SYMVAL)
            total += (size_t)len;
        else
            return;
        if (total > INF_T_MAX_SYMVAL)
            return;
    }
    if (!some)
        return;
    IrShape *out = ir_shape_new(total);
    size_t at = 0;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *sv = inf_t_symval(c, i);
        size_t n = sv ? sv->rank : (size_t)inf_t_in_len(c, i);
        for (size_t k = 0; k < n; k++, at++)
            if (sv)
                inf_dim_copy(&out->dims[at], &sv->dims[k]);
    }
    inf_out_symval(c, 0, out);
}

/* Concat: inputs of one rank, equal except on `axis`, whose sizes add. */
static int inf_concat(InfCtx *c)
{
    inf_t_concat_symval(c);
    const IrShape *ref = NULL;
    bool some_unknown = false;
    for (size_t i = 0; i < inf_n_in(c); i++) {
        if (!inf_has_in(c, i))
            continue;
        const IrShape *s = inf_in_shape(c, i);
        if (!s) {
            some_unknown = true;
            continue;
        }
        if (ref && s->rank != ref->rank)
            return inf_fail(c, "rank", "inputs have ranks %zu and %zu", ref->rank,
                            s->rank);
        ref = s;
    }
    const IrAttr *aa = inf_attr(c, "axis");
    if (!ref || (!(aa && aa->has_i) && c->since >= 4))
        return 0;
    int axis;
    if (inf_axis(c, "axis", aa && aa->has_i ? aa->i : 1, (int)ref->rank, 0, &axis) < 0)
        return -1;
    IrShape *o = ir_shape_new(ref->rank);
    IrDim sum = {.kind = IR_DIM_VALUE, .value = 0};
    int rc = 0;
    for (size_t i = 0; i < inf_n_in(c) && rc == 0; i++) {
        const IrShape *s = inf_has_in(c, i) ? inf_in_shape(c, i) : NULL;
        if (!s)
            continue;
        inf_dim_add(&sum, &sum, &s->dims[axis]);
        for (size_t d = 0; d < s->rank && rc == 0; d++)
            if ((int)d != axis && inf_t_merge_dim(&o->dims[d], &s->dims[d]) < 0)
                rc = inf_fail(c, "shape", "dimension %zu differs between inputs "
                              "(%lld and %lld)", d, (long long)o->dims[d].value,
                              (long long)s->dims[d].value);
    }
    if (rc == 0) {
        if (!some_unknown)
            inf_dim_copy(&o->dims[axis], &sum);
        inf_t_out_dims(c, 0, o);
    }
    inf_dim_unknown(&sum);
    ir_shape_free(o);
    return rc;
}

/* Gives output k of Split the input's tracked elements [at, at+len). */
static void inf_t_split_symval(InfCtx *c, size_t k, int64_t at, int64_t len)
{
    const IrShape *sv = inf_t_symval(c, 0);
    if (!sv || inf_in_rank(c, 0) != 1 || at < 0 || len < 0 ||
        at > (int64_t)sv->rank || len > (int64_t)sv->rank - at)
        return;
    IrShape *o = ir_shape_new((size_t)len);
    for (int64_t j = 0; j < len; j++)
        inf_dim_copy(&o->dims[j], &sv->dims[at + j]);
    inf_out_symval(c, k, o);
}

/* Whether node n sits in a branch of an If, which may never run: ONNX's
 * own models (affine_grid's expansion) keep a Split there that only the
 * other branch's shapes allow. */
static bool inf_t_in_branch(const IrNode *n)
{
    for (const IrGraph *g = n->graph; g; g = g->parent)
        if (g->owner && g->owner->op_type && !strcmp(g->owner->op_type, "If"))
            return true;
    return false;
}

/* Whether n outputs can split a dim d (known or not) with no `split`:
 * into equal parts, or with num_outputs (`uneven`) into parts of
 * ceil(d/n) and a last one of what is left; 0 or -1 with the error. */
static int inf_split_parts(InfCtx *c, const IrDim *d, size_t n, bool uneven)
{
    if (!inf_dim_known(d) || n == 0)
        return 0;
    int64_t dv = d->value, np = (int64_t)n;
    int64_t chunk = dv / np + (dv % np != 0);
    /* more outputs than elements, or parts of ceil(d/n) that leave the
     * last one less than nothing (5 into 4: 2, 2, 2, -1) */
    if (uneven && !inf_t_in_branch(c->node) &&
        ((dv > 0 && np > dv) || (np > 1 && chunk > dv / (np - 1))))
        return inf_fail(c, "shape", "num_outputs %zu exceeds what the axis of size %lld "
                        "can give", n, (long long)dv);
    if (!uneven && dv % np != 0)
        return inf_fail(c, "shape", "the axis of size %lld does not split evenly into "
                        "%zu outputs", (long long)dv, n);
    return 0;
}

/* Split: the sizes along `axis` from `split` (attribute before 13, input
 * from 13, also an input in opset 1), else num_outputs parts (18+, the
 * last one smaller), else equal parts. */
static int inf_split(InfCtx *c)
{
    int64_t *split = NULL;
    size_t ns = 0, n = inf_n_out(c);
    int st;
    if (c->since < 13) {
        st = inf_t_ints(c, true, "split", 0, &split, &ns);
        if (st == 0 && c->since < 2)
            st = inf_t_ints(c, false, NULL, 1, &split, &ns);
    } else {
        st = inf_t_ints(c, false, NULL, 1, &split, &ns);
    }
    const IrShape *in = inf_in_shape(c, 0);
    int rc = 0, axis = 0;
    if (in)
        rc = inf_axis(c, "axis", inf_attr_i(c, "axis"), (int)in->rank, 0, &axis);
    int64_t sum = 0;
    for (size_t k = 0; rc == 0 && st == 1 && k < ns; k++) {
        if (split[k] < 0)
            rc = inf_fail(c, "shape", "split entry %zu is %lld", k, (long long)split[k]);
        else if (sum > INT64_MAX - split[k])
            rc = inf_fail(c, "shape", "the split sizes overflow");
        else
            sum += split[k];
    }
    if (rc == 0 && st == 1 && ns != n)
        rc = inf_fail(c, "shape", "split has %zu entries but the node has %zu outputs",
                      ns, n);
    /* a split input whose values come at run time still has a length */
    const IrShape *ss = st < 0 ? inf_in_shape(c, 1) : NULL;
    if (rc == 0 && ss && ss->rank == 1 && inf_dim_known(&ss->dims[0]) &&
        ss->dims[0].value != (int64_t)n)
        rc = inf_fail(c, "shape", "split has %lld entries but the node has %zu outputs",
                      (long long)ss->dims[0].value, n);
    if (rc == 0 && st == 1 && in && inf_dim_known(&in->dims[axis]) &&
        in->dims[axis].value != sum)
        rc = inf_fail(c, "shape", "split sums to %lld but the axis has size %lld",
                      (long long)sum, (long long)in->dims[axis].value);
    int64_t parts = (int64_t)n;
    bool uneven = false;
    if (rc == 0 && st == 0 && c->since >= 18 && inf_attr_has(c, "num_outputs")) {
        parts = inf_attr_i(c, "num_outputs");
        uneven = true;
        if (parts != (int64_t)n)
            rc = inf_fail(c, "shape", "num_outputs is %lld but the node has %zu outputs",
                          (long long)parts, n);
    }
    if (rc == 0 && st != 0 && c->since >= 18 && inf_attr_has(c, "num_outputs"))
        rc = inf_fail(c, "attribute", "both split and num_outputs are given");
    if (rc == 0 && st == 0 && in)
        rc = inf_split_parts(c, &in->dims[axis], n, uneven);
    if (rc < 0 || !in) {
        free(split);
        return rc;
    }
    const IrDim *d = &in->dims[axis];
    int64_t chunk = -1, last = -1;
    if (st == 0 && inf_dim_known(d) && n > 0) {
        int64_t dv = d->value, np = (int64_t)n;
        if (uneven) {
            chunk = dv / np + (dv % np != 0);
            last = dv - chunk * (np - 1);
            if (last < 0)
                chunk = last = -1; /* no valid split: leave unknown */
        } else if (dv % np == 0) {
            chunk = last = dv / np;
        }
    }
    int64_t at = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t len = st == 1 ? split[k] : st < 0 ? -1 : k + 1 == n ? last : chunk;
        if (inf_has_out(c, k)) {
            IrShape *o = inf_out_shape(c, k, in->rank);
            for (size_t j = 0; j < in->rank; j++)
                if ((int)j != axis)
                    inf_dim_copy(&o->dims[j], &in->dims[j]);
            if (len >= 0)
                inf_dim_set(&o->dims[axis], len);
            else if (n == 1)
                inf_dim_copy(&o->dims[axis], d);
            if (len >= 0 && at >= 0)
                inf_t_split_symval(c, k, at, len);
        }
        at = len >= 0 && at >= 0 ? at + len : -1;
    }
    free(split);
    return 0;
}

/* Start and end of a slice of a dim of size d after the spec's clamping. */
static void inf_t_slice_clamp(int64_t d, int64_t step, int64_t *start, int64_t *end)
{
    int64_t s = *start, e = *end;
    if (s < 0)
        s += d; /* s >= INT64_MIN and d >= 0: no overflow */
    if (e < 0)
        e += d;
    if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
    } else {
        s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    }
    *start = s;
    *end = e;
}

/* Number of elements a slice takes from a dim of size d. */
static int64_t inf_t_slice_len(int64_t d, int64_t start, int64_t end, int64_t step)
{
    inf_t_slice_clamp(d, step, &start, &end);
    uint64_t span, ustep;
    if (step > 0) {
        if (end <= start)
            return 0;
        span = (uint64_t)(end - start);
        ustep = (uint64_t)step;
    } else {
        if (start <= end)
            return 0;
        span = (uint64_t)(start - end);
        ustep = (uint64_t)(-(step + 1)) + 1;
    }
    return (int64_t)(span / ustep + (span % ustep != 0));
}

/* The sliced dim when d is not a number: the whole dim (forward from 0 to
 * INT64_MAX, or backward from -1 to INT64_MIN, by 1) keeps it. */
static void inf_t_slice_sym(IrDim *o, const IrDim *d, int64_t start, int64_t end,
                            int64_t step)
{
    if ((step == 1 && start == 0 && end == INT64_MAX) ||
        (step == -1 && (start == -1 || start == INT64_MAX) && end == INT64_MIN))
        inf_dim_copy(o, d);
    else
        inf_dim_unknown(o);
}

/* The tracked elements of a sliced vector. */
static void inf_t_slice_symval(InfCtx *c, int64_t start, int64_t end, int64_t step)
{
    const IrShape *sv = inf_t_symval(c, 0);
    if (!sv || inf_in_rank(c, 0) != 1)
        return;
    int64_t d = (int64_t)sv->rank;
    int64_t len = inf_t_slice_len(d, start, end, step);
    inf_t_slice_clamp(d, step, &start, &end);
    IrShape *o = ir_shape_new((size_t)len);
    for (int64_t k = 0; k < len; k++)
        inf_dim_copy(&o->dims[k], &sv->dims[start + k * step]);
    inf_out_symval(c, 0, o);
}

/* Slice: starts/ends/axes as attributes (opset 1) or inputs with steps
 * (10+). Known dims are sliced as the spec clamps; an axis whose
 * parameters are unknown gets an unknown size; a 1-D slice keeps the
 * tracked elements. */
static int inf_slice(InfCtx *c)
{
    bool attr = c->since < 10;
    int64_t *st, *en, *ax, *sp;
    size_t nst, nen, nax, nsp;
    int kst = inf_t_ints(c, attr, "starts", 1, &st, &nst);
    int ken = inf_t_ints(c, attr, "ends", 2, &en, &nen);
    int kax = inf_t_ints(c, attr, "axes", 3, &ax, &nax);
    int ksp = attr ? 0 : inf_t_ints(c, false, NULL, 4, &sp, &nsp);
    if (attr)
        sp = NULL, nsp = 0;
    const IrShape *in = inf_in_shape(c, 0);
    int rc = 0;
    /* the number of sliced axes, where known */
    int64_t n = kst == 1 ? (int64_t)nst : ken == 1 ? (int64_t)nen
              : kax == 1 ? (int64_t)nax : attr ? -1 : inf_t_in_len(c, 1);
    if ((kst == 1 && (int64_t)nst != n) || (ken == 1 && (int64_t)nen != n) ||
        (kax == 1 && (int64_t)nax != n) || (ksp == 1 && (int64_t)nsp != n))
        rc = inf_fail(c, "shape", "starts, ends, axes and steps differ in length");
    for (size_t k = 0; rc == 0 && ksp == 1 && k < nsp; k++)
        if (sp[k] == 0)
            rc = inf_fail(c, "shape", "step %zu is 0", k);
    int r = in ? (int)in->rank : -1;
    int *axes = NULL;
    bool axes_known = false;
    if (rc == 0 && n >= 0 && kax == 1 && in) {
        axes = mem_array(nax ? nax : 1, sizeof *axes);
        rc = inf_t_axes(c, "axes", ax, nax, r, 0, true, axes);
        axes_known = true;
    } else if (rc == 0 && n >= 0 && kax == 0 && in) {
        if (n > r)
            rc = inf_fail(c, "shape", "%lld axes sliced of a rank-%d input",
                          (long long)n, r);
        axes = mem_array(n ? (size_t)n : 1, sizeof *axes);
        for (int64_t k = 0; k < n && k < r; k++)
            axes[k] = (int)k;
        axes_known = true;
    }
    bool params = kst == 1 && ken == 1 && ksp >= 0;
    if (rc == 0 && in) {
        IrShape *o = ir_shape_new(in->rank);
        for (size_t k = 0; k < in->rank; k++)
            if (axes_known)
                inf_dim_copy(&o->dims[k], &in->dims[k]);
        for (int64_t k = 0; axes_known && k < n; k++) {
            const IrDim *d = &in->dims[axes[k]];
            IrDim *od = &o->dims[axes[k]];
            int64_t step = ksp == 1 ? sp[k] : 1;
            if (!params)
                inf_dim_unknown(od);
            else if (inf_dim_known(d) && d->value >= 0)
                inf_dim_set(od, inf_t_slice_len(d->value, st[k], en[k], step));
            else
                inf_t_slice_sym(od, d, st[k], en[k], step);
        }
        inf_t_out_dims(c, 0, o);
        ir_shape_free(o);
    }
    if (rc == 0 && params && n == 1 && (!axes_known || axes[0] == 0) &&
        (kax != 1 || ax[0] == 0 || ax[0] == -1))
        inf_t_slice_symval(c, st[0], en[0], ksp == 1 ? sp[0] : 1);
    free(axes);
    free(st);
    free(en);
    free(ax);
    free(sp);
    return rc;
}

/* Transpose: dims permuted by `perm` (default: reversed). */
static int inf_transpose(InfCtx *c)
{
    const int64_t *perm;
    long np = inf_attr_ints(c, "perm", &perm);
    const IrShape *in = inf_in_shape(c, 0);
    if (!in) {
        if (np >= 0 && np <= INF_T_MAX_RANK)
            inf_out_shape(c, 0, (size_t)np);
        return 0;
    }
    size_t r = in->rank;
    if (np >= 0 && (size_t)np != r)
        return inf_fail(c, "shape", "perm has %ld entries for a rank-%zu input",
                        np, r);
    bool *seen = mem_array(r ? r : 1, sizeof *seen);
    for (size_t k = 0; np >= 0 && k < r; k++) {
        if (perm[k] < 0 || (uint64_t)perm[k] >= r || seen[perm[k]]) {
            free(seen);
            return inf_fail(c, "shape", "perm is not a permutation of 0..%zu",
                            r ? r - 1 : 0);
        }
        seen[perm[k]] = true;
    }
    free(seen);
    IrShape *o = inf_out_shape(c, 0, r);
    for (size_t k = 0; o && k < r; k++)
        inf_dim_copy(&o->dims[k], &in->dims[np >= 0 ? (size_t)perm[k] : r - 1 - k]);
    return 0;
}

/* Expand: the input broadcast with the target shape (which may hold
 * symbols through its tracked elements). */
static int inf_expand(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    IrShape *tgt = inf_t_in_dims(c, 1);
    if (!tgt) {
        int64_t n = inf_t_in_len(c, 1);
        if (n < 0 || !in)
            return 0;
        tgt = ir_shape_new((size_t)n);
    }
    if (!in) {
        ir_shape_free(tgt);
        return 0;
    }
    for (size_t k = 0; k < tgt->rank; k++)
        if (inf_dim_known(&tgt->dims[k]) && tgt->dims[k].value < 0) {
            long long v = (long long)tgt->dims[k].value;
            ir_shape_free(tgt);
            return inf_fail(c, "shape", "target dimension %zu is %lld", k, v);
        }
    const IrShape *both[2] = {in, tgt};
    IrShape *out;
    int rc = inf_broadcast(c, both, 2, &out);
    ir_shape_free(tgt);
    if (rc < 0)
        return -1;
    inf_t_out_dims(c, 0, out);
    ir_shape_free(out);
    return 0;
}

/* Tile: each dim times its repeat (inputs `repeats` from opset 6; before,
 * scalar `tiles` and `axis` inputs). */
static int inf_tile(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    size_t r = in->rank;
    IrShape *rep;
    if (c->since < 6) {
        int64_t *t, *a;
        size_t nt, na;
        if (!inf_in_ints(c, 1, &t, &nt))
            return 0;
        if (!inf_in_ints(c, 2, &a, &na)) {
            free(t);
            return 0;
        }
        int axis = 0, rc = nt == 1 && na == 1 ? inf_axis(c, "axis", a[0], (int)r, 0, &axis)
                                              : inf_fail(c, "shape", "tiles and axis must be scalars");
        rep = ir_shape_new(r);
        for (size_t k = 0; rc == 0 && k < r; k++)
            inf_dim_set(&rep->dims[k], (int)k == axis ? t[0] : 1);
        free(t);
        free(a);
        if (rc < 0) {
            ir_shape_free(rep);
            return -1;
        }
    } else {
        rep = inf_t_in_dims(c, 1);
        if (!rep) {
            int64_t n = inf_t_in_len(c, 1);
            if (n >= 0 && (size_t)n != r)
                return inf_fail(c, "shape", "repeats has %lld entries for a rank-%zu "
                                "input", (long long)n, r);
            inf_out_shape(c, 0, r);
            return 0;
        }
    }
    int rc = 0;
    if (rep->rank != r)
        rc = inf_fail(c, "shape", "repeats has %zu entries for a rank-%zu input",
                      rep->rank, r);
    for (size_t k = 0; rc == 0 && k < r; k++)
        if (inf_dim_known(&rep->dims[k]) && rep->dims[k].value < 0)
            rc = inf_fail(c, "shape", "repeat %zu is negative", k);
    if (rc == 0) {
        IrShape *o = inf_out_shape(c, 0, r);
        for (size_t k = 0; o && k < r; k++)
            inf_dim_mul(&o->dims[k], &in->dims[k], &rep->dims[k]);
    }
    ir_shape_free(rep);
    return rc;
}

/* Pad: each padded dim grows by its begin and end pads (`paddings`
 * attribute in opset 1, `pads` in 2, an input from 11, with an `axes`
 * input from 18). */
static int inf_pad(InfCtx *c)
{
    const IrShape *in = inf_in_shape(c, 0);
    if (!in)
        return 0;
    int r = (int)in->rank;
    int64_t *pads, *ax;
    size_t np, na;
    int kp = c->since < 11 ? inf_t_ints(c, true, c->since < 2 ? "paddings" : "pads", 0,
                                        &pads, &np)
                           : inf_t_ints(c, false, NULL, 1, &pads, &np);
    int ka = c->since >= 18 ? inf_t_ints(c, false, NULL, 3, &ax, &na) : 0;
    if (ka == 0) {
        na = (size_t)r;
        ax = mem_array(na ? na : 1, sizeof *ax);
        for (size_t k = 0; k < na; k++)
            ax[k] = (int64_t)k;
    }
    int *axes = mem_array(na ? na : 1, sizeof *axes);
    int rc = ka >= 0 ? inf_t_axes(c, "axes", ax, na, r, 0, true, axes) : 0;
    if (rc == 0 && kp == 1 && ka >= 0 && np != 2 * na)
        rc = inf_fail(c, "shape", "pads has %zu entries for %zu padded axes", np, na);
    if (rc == 0) {
        IrShape *o = inf_out_shape(c, 0, (size_t)r);
        for (int k = 0; o && ka >= 0 && k < r; k++)
            inf_dim_copy(&o->dims[k], &in->dims[k]);
        for (size_t k = 0; o && ka >= 0 && k < na && rc == 0; k++) {
            IrDim *d = &o->dims[axes[k]];
            if (kp != 1) {
                inf_dim_unknown(d);
                continue;
            }
            IrDim b = {.kind = IR_DIM_VALUE, .value = pads[k]};
            IrDim e = {.kind = IR_DIM_VALUE, .value = pads[k + na]};
            inf_dim_add(d, d, &b);
            inf_dim_add(d, d, &e);
            if (inf_dim_known(d) && d->value < 0)
                rc = inf_fail(c, "shape", "axis %d would have size %lld", axes[k],
                              (long long)d->value);
        }
    }
    free(axes);
    free(ax);
    free(pads);
    return rc;
}

const InfOp inf_ops_shape[] = {
    {"", "Reshape", inf_reshape},
    {"", "Flatten", inf_flatten},
    {"", "Squeeze", inf_squeeze},
    {"", "Unsqueeze", inf_unsqueeze},
    {"", "Concat", inf_concat},
    {"", "Split", inf_split},
    {"", "Slice", inf_slice},
    {"", "Transpose", inf_transpose},
    {"", "Expand", inf_expand},
    {"", "Tile", inf_tile},
    {"", "Pad", inf_pad},
    {NULL, NULL, NULL}};
