/* Sequence and optional ops: SequenceConstruct, SequenceEmpty, SequenceAt,
 * SequenceInsert, SequenceErase, SequenceLength, SplitToSequence,
 * ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement.
 *
 * Values are immutable once made, so a sequence holds references to its
 * tensors: inserting, erasing or reading an item shares the tensors
 * (ev_ref) instead of copying them. A new sequence carries the element
 * type of the one it came from, so that an empty result still says what it
 * would hold.
 *
 * Positions (SequenceAt/Insert/Erase) accept negative values counting from
 * the end: [-n, n-1] for reading and erasing, [-n, n] for inserting. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"

/* ---- helpers ---------------------------------------------------------- */

/* A tensor type of elem type dtype and unknown shape, for elem_type. */
static IrType *ev_tensor_type(int32_t dtype)
{
    IrType *t = mem_alloc(sizeof *t);
    t->kind = IR_TYPE_TENSOR;
    t->has_elem_type = true;
    t->elem_type = dtype;
    return t;
}

/* Input i, which must be a sequence. */
static EvValue *ev_in_seq(EvCtx *c, size_t i)
{
    EvValue *v = ev_in(c, i);
    if (!v) {
        ev_fail(c, "input %zu is missing", i);
        return NULL;
    }
    if (v->kind != EV_SEQUENCE) {
        ev_fail(c, "input %zu must be a sequence", i);
        return NULL;
    }
    return v;
}

/* The element type code a sequence holds, from its items or its declared
 * element type; 0 when unknown. */
static int32_t ev_seq_dtype(const EvValue *s)
{
    if (s->n_items && s->items[0]->kind == EV_TENSOR)
        return s->items[0]->dtype;
    if (s->elem_type && s->elem_type->kind == IR_TYPE_TENSOR &&
        s->elem_type->has_elem_type)
        return s->elem_type->elem_type;
    return 0;
}

/* A new empty sequence carrying src's element type. */
static EvValue *ev_seq_like(const EvValue *src)
{
    EvValue *s = ev_sequence_new();
    if (src->elem_type)
        s->elem_type = ir_type_copy(src->elem_type);
    else if (ev_seq_dtype(src))
        s->elem_type = ev_tensor_type(ev_seq_dtype(src));
    return s;
}

/* A scalar integer input (position, split size) read as int64. */
static int ev_in_scalar_int(EvCtx *c, size_t i, const char *what,
                            int64_t *out)
{
    EvValue *t = ev_in_tensor(c, i);
    if (!t)
        return -1;
    if (t->dtype != IR_INT32 && t->dtype != IR_INT64)
        return ev_fail(c, "%s must be int32 or int64", what);
    if (t->numel != 1 || t->rank > 1)
        return ev_fail(c, "%s must be a scalar", what);
    *out = ev_get_i(t, 0);
    return 0;
}

/* Normalizes a position against n items; `extra` is 1 where n itself is
 * valid (insertion at the end). */
static int ev_position(EvCtx *c, int64_t pos, size_t n, size_t extra,
                       size_t *out)
{
    int64_t hi = (int64_t)n + (int64_t)extra;
    if (pos < -(int64_t)n || pos >= hi)
        return ev_fail(c, "position %lld is out of range for a sequence of "
                       "%zu", (long long)pos, n);
    *out = (size_t)(pos < 0 ? pos + (int64_t)n : pos);
    return 0;
}

/* ---- sequences -------------------------------------------------------- */

static int ev_sequence_construct(EvCtx *c)
{
    if (c->n_in == 0)
        return ev_fail(c, "needs at least one input");
    int32_t dtype = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        EvValue *t = ev_in_tensor(c, i);
        if (!t)
            return -1;
        if (i && t->dtype != dtype)
            return ev_fail(c, "input %zu has element type %d, input 0 has %d",
                           i, (int)t->dtype, (int)dtype);
        dtype = t->dtype;
    }
    if (ev_charge(c, c->n_in))
        return -1;
    EvValue *s = ev_sequence_new();
    s->elem_type = ev_tensor_type(dtype);
    for (size_t i = 0; i < c->n_in; i++)
        ev_sequence_push(s, ev_ref(c->in[i]));
    ev_out_set(c, 0, s);
    return 0;
}

static int ev_sequence_empty(EvCtx *c)
{
    int64_t dtype = ev_attr_i_or(c, "dtype", IR_FLOAT);
    if (dtype <= 0 || dtype > INT32_MAX || !ev_dtype_size((int32_t)dtype))
        return ev_fail(c, "dtype %lld is not a supported element type",
                       (long long)dtype);
    EvValue *s = ev_sequence_new();
    s->elem_type = ev_tensor_type((int32_t)dtype);
    ev_out_set(c, 0, s);
    return 0;
}

static int ev_sequence_at(EvCtx *c)
{
    EvValue *s = ev_in_seq(c, 0);
    int64_t pos = 0;
    size_t k = 0;
    if (!s || ev_in_scalar_int(c, 1, "position", &pos) ||
        ev_position(c, pos, s->n_items, 0, &k))
        return -1;
    ev_out_set(c, 0, ev_ref(s->items[k]));
    return 0;
}

static int ev_sequence_insert(EvCtx *c)
{
    EvValue *s = ev_in_seq(c, 0);
    EvValue *t = s ? ev_in_tensor(c, 1) : NULL;
    if (!t)
        return -1;
    int32_t want = ev_seq_dtype(s);
    if (want && t->dtype != want)
        return ev_fail(c, "tensor of element type %d cannot go into a "
                       "sequence of %d", (int)t->dtype, (int)want);
    size_t k = s->n_items;
    if (ev_in(c, 2)) {
        int64_t pos;
        if (ev_in_scalar_int(c, 2, "position", &pos) ||
            ev_position(c, pos, s->n_items, 1, &k))
            return -1;
    }
    if (ev_charge(c, s->n_items))
        return -1;
    EvValue *r = ev_seq_like(s);
    if (!r->elem_type)
        r->elem_type = ev_tensor_type(t->dtype);
    for (size_t i = 0; i <= s->n_items; i++) {
        if (i == k)
            ev_sequence_push(r, ev_ref(t));
        if (i < s->n_items)
            ev_sequence_push(r, ev_ref(s->items[i]));
    }
    ev_out_set(c, 0, r);
    return 0;
}

static int ev_sequence_erase(EvCtx *c)
{
    EvValue *s = ev_in_seq(c, 0);
    if (!s)
        return -1;
    if (s->n_items == 0)
        return ev_fail(c, "cannot erase from an empty sequence");
    size_t k = s->n_items - 1;
    if (ev_in(c, 1)) {
        int64_t pos;
        if (ev_in_scalar_int(c, 1, "position", &pos) ||
            ev_position(c, pos, s->n_items, 0, &k))
            return -1;
    }
    if (ev_charge(c, s->n_items))
        return -1;
    EvValue *r = ev_seq_like(s);
    for (size_t i = 0; i < s->n_items; i++)
        if (i != k)
            ev_sequence_push(r, ev_ref(s->items[i]));
    ev_out_set(c, 0, r);
    return 0;
}

static int ev_sequence_length(EvCtx *c)
{
    EvValue *s = ev_in_seq(c, 0);
    if (!s)
        return -1;
    EvValue *o = ev_out_tensor(c, 0, IR_INT64, 0, NULL);
    if (!o)
        return -1;
    ev_set_i(o, 0, (int64_t)s->n_items);
    return 0;
}

/* The chunk lengths SplitToSequence cuts dimension `len` into: ones when
 * split is absent, equal chunks (the last one shorter) for a scalar, the
 * listed lengths for a 1-D split. *n = count (ev_tmp array). */
static int ev_split_lengths(EvCtx *c, int64_t len, int64_t **out, size_t *n)
{
    EvValue *sp = ev_in(c, 1);
    if (!sp) {
        *out = ev_tmp(c, len ? (size_t)len : 1, sizeof **out);
        for (int64_t i = 0; i < len; i++)
            (*out)[i] = 1;
        *n = (size_t)len;
        return 0;
    }
    if (sp->kind != EV_TENSOR || (sp->dtype != IR_INT32 && sp->dtype != IR_INT64))
        return ev_fail(c, "split must be an int32 or int64 tensor");
    if (sp->rank == 0) {
        int64_t s = ev_get_i(sp, 0);
        if (s <= 0)
            return ev_fail(c, "split %lld must be positive", (long long)s);
        size_t cnt = (size_t)(len / s + (len % s != 0));
        *out = ev_tmp(c, cnt ? cnt : 1, sizeof **out);
        for (size_t i = 0; i < cnt; i++)
            (*out)[i] = i + 1 < cnt ? s : len - s * (int64_t)(cnt - 1);
        *n = cnt;
        return 0;
    }
    if (sp->rank != 1)
        return ev_fail(c, "split must be a scalar or 1-D");
    *out = ev_tmp(c, sp->numel ? sp->numel : 1, sizeof **out);
    int64_t sum = 0;
    for (size_t i = 0; i < sp->numel; i++) {
        int64_t s = ev_get_i(sp, i);
        if (s < 0 || s > len - sum)
            return ev_fail(c, "split lengths must be non-negative and sum "
                           "to %lld", (long long)len);
        sum += s;
        (*out)[i] = s;
    }
    if (sum != len)
        return ev_fail(c, "split lengths sum to %lld, the axis has %lld",
                       (long long)sum, (long long)len);
    *n = sp->numel;
    return 0;
}

/* The part [start, start+len) of x along axis ax (dropped when squeeze). */
static EvValue *ev_take_range(EvCtx *c, const EvValue *x, size_t ax,
                              int64_t start, int64_t len, bool squeeze)
{
    int64_t dims[EV_MAX_RANK];
    size_t r = 0;
    for (size_t d = 0; d < x->rank; d++) {
        if (d == ax && squeeze)
            continue;
        dims[r++] = d == ax ? len : x->dims[d];
    }
    IrError e;
    EvValue *o = ev_tensor_new(x->dtype, r, dims, &e);
    if (!o) {
        ev_fail(c, "%s", e.msg);
        return NULL;
    }
    size_t outer = ev_dims_prod(x->dims, 0, ax);
    size_t inner = ev_dims_prod(x->dims, ax + 1, x->rank);
    size_t full = (size_t)x->dims[ax];
    for (size_t o_ = 0; o_ < outer; o_++)
        ev_copy_elems(o, o_ * (size_t)len * inner, x,
                      (o_ * full + (size_t)start) * inner, (size_t)len * inner);
    return o;
}

static int ev_split_to_sequence(EvCtx *c)
{
    EvValue *x = ev_in_tensor(c, 0);
    size_t ax;
    if (!x || ev_axis(c, "axis", ev_attr_i(c, "axis"), x->rank, 0, &ax))
        return -1;
    bool squeeze = !ev_in(c, 1) && ev_attr_i(c, "keepdims") == 0;
    int64_t *lens = NULL;
    size_t n = 0;
    if (ev_split_lengths(c, x->dims[ax], &lens, &n))
        return -1;
    /* Filled first, handed over last: ev_out_set drops a value for an
     * output the node does not have, so s must not be touched after. */
    EvValue *s = ev_sequence_new();
    s->elem_type = ev_tensor_type(x->dtype);
    int64_t start = 0;
    for (size_t i = 0; i < n; i++) {
        EvValue *part = ev_take_range(c, x, ax, start, lens[i], squeeze);
        if (!part) {
            ev_unref(s);
            return -1;
        }
        ev_sequence_push(s, part);
        start += lens[i];
    }
    ev_out_set(c, 0, s);
    return 0;
}

/* Output dims of ConcatFromSequence: items agree on rank and on every dim
 * but the axis (all dims when stacking along a new axis). */
static int ev_concat_dims(EvCtx *c, const EvValue *s, size_t ax, bool stack,
                          int64_t *dims, size_t *rank)
{
    const EvValue *f = s->items[0];
    int64_t total = 0;
    for (size_t i = 0; i < s->n_items; i++) {
        const EvValue *t = s->items[i];
        if (t->kind != EV_TENSOR || t->dtype != f->dtype || t->rank != f->rank)
            return ev_fail(c, "item %zu differs from item 0 in type or rank", i);
        for (size_t d = 0; d < f->rank; d++)
            if ((stack || d != ax) && t->dims[d] != f->dims[d])
                return ev_fail(c, "item %zu has dim %zu = %lld, item 0 has "
                               "%lld", i, d, (long long)t->dims[d],
                               (long long)f->dims[d]);
        int64_t add = stack ? 1 : t->dims[ax];
        if (total > INT64_MAX - add)
            return ev_fail(c, "concatenated size overflows");
        total += add;
    }
    *rank = f->rank + stack;
    for (size_t d = 0, k = 0; d < *rank; d++) {
        if (d == ax)
            dims[d] = total;
        else
            dims[d] = f->dims[k];
        if (d != ax || !stack)
            k++;
    }
    return 0;
}

static int ev_concat_from_sequence(EvCtx *c)
{
    EvValue *s = ev_in_seq(c, 0);
    if (!s)
        return -1;
    const IrAttr *a = ev_attr(c, "axis");
    if (!a)
        return ev_fail(c, "attribute 'axis' is required");
    if (s->n_items == 0)
        return ev_fail(c, "cannot concatenate an empty sequence");
    if (s->items[0]->kind != EV_TENSOR)
        return ev_fail(c, "the sequence must hold tensors");
    bool stack = ev_attr_i(c, "new_axis") != 0;
    size_t ax = 0, rank = 0;
    int64_t dims[EV_MAX_RANK + 1];
    if (ev_axis(c, "axis", ev_attr_i_or(c, "axis", 0), s->items[0]->rank, stack,
                &ax) ||
        ev_concat_dims(c, s, ax, stack, dims, &rank))
        return -1;
    EvValue *o = ev_out_tensor(c, 0, s->items[0]->dtype, rank, dims);
    if (!o)
        return -1;
    /* Each item fills a block of prod(dims[ax:]) elements per outer index,
     * whether it is stacked (a size-1 slot) or concatenated. */
    const EvValue *f = s->items[0];
    size_t outer = ev_dims_prod(f->dims, 0, ax);
    size_t pos = 0;
    for (size_t o_ = 0; o_ < outer; o_++)
        for (size_t i = 0; i < s->n_items; i++) {
            const EvValue *t = s->items[i];
            size_t chunk = ev_dims_prod(t->dims, ax, t->rank);
            ev_copy_elems(o, pos, t, o_ * chunk, chunk);
            pos += chunk;
        }
    return 0;
}

/* ---- optionals -------------------------------------------------------- */

static int ev_optional(EvCtx *c)
{
    EvValue *x = ev_in(c, 0);
    if (x) {
        ev_out_set(c, 0, ev_optional_new(ev_ref(x)));
        return 0;
    }
    const IrAttr *a = ev_attr(c, "type");
    if (!a || !a->tp)
        return ev_fail(c, "an empty Optional needs the 'type' attribute");
    EvValue *o = ev_optional_new(NULL);
    o->elem_type = ir_type_copy(a->tp);
    ev_out_set(c, 0, o);
    return 0;
}

/* From opset 18 the input may be a plain tensor or sequence (it then has
 * an element) or left out (it has none). Opset 15 asks for an optional,
 * but a plain value is accepted there too: a loop-carried optional
 * comes back from the body as the plain value it was assigned (as in
 * test_loop16_seq_none), which stands for an optional holding it. */
static int ev_optional_has_element(EvCtx *c)
{
    EvValue *x = ev_in(c, 0);
    if (!x && c->ver < 18)
        return ev_fail(c, "input 0 is missing");
    bool has = x && (x->kind != EV_OPTIONAL || x->n_items > 0);
    EvValue *o = ev_out_tensor(c, 0, IR_BOOL, 0, NULL);
    if (!o)
        return -1;
    ev_set_i(o, 0, has);
    return 0;
}

/* A plain tensor or sequence is returned as it is (opset 18; accepted at
 * 15 too, as for OptionalHasElement). */
static int ev_optional_get_element(EvCtx *c)
{
    EvValue *x = ev_in(c, 0);
    if (!x)
        return ev_fail(c, "input 0 is missing");
    if (x->kind != EV_OPTIONAL) {
        ev_out_set(c, 0, ev_ref(x));
        return 0;
    }
    if (x->n_items == 0)
        return ev_fail(c, "the optional input is empty");
    ev_out_set(c, 0, ev_ref(x->items[0]));
    return 0;
}

const EvOp ev_ops_sequence[] = {
    {"", "SequenceConstruct", ev_sequence_construct},
    {"", "SequenceEmpty", ev_sequence_empty},
    {"", "SequenceAt", ev_sequence_at},
    {"", "SequenceInsert", ev_sequence_insert},
    {"", "SequenceErase", ev_sequence_erase},
    {"", "SequenceLength", ev_sequence_length},
    {"", "SplitToSequence", ev_split_to_sequence},
    {"", "ConcatFromSequence", ev_concat_from_sequence},
    {"", "Optional", ev_optional},
    {"", "OptionalHasElement", ev_optional_has_element},
    {"", "OptionalGetElement", ev_optional_get_element},
    {NULL, NULL, NULL}
};
