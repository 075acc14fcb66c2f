/*
 * dedup_init.c - makes readers of equal initializers read one of them.
 *
 * Two initializers of the main graph (not graph inputs, whose initializer
 * is a default a caller may replace) with the same element type, the same
 * dims and the same decoded elements, bit for bit, hold the same tensor:
 * every reader of the later one may read the first instead. The later one
 * is then unread and unused_init removes it. Elements are compared after
 * decoding (raw, typed fields or external bytes alike) and bitwise, so
 * 0.0 and -0.0, or NaNs with different payloads, stay apart. Tensors kept
 * as raw or external bytes are compared as stored, after a hash of samples,
 * so big weights are neither copied nor read whole. Skipped when
 * the model has training_info, whose graphs may update either tensor.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "ir/tensor_kit.h"

/* One initializer: its value, its tensor and the hash of its elements. */
typedef struct OptDiItem {
    IrValue *v;
    const IrTensor *t;
    size_t pos;    /* place in the file's initializer list */
    uint64_t hash;
    bool hashed;   /* hash computed */
    bool stored;   /* hash of sampled stored bytes (opt_di_stored), not of
                      the decoded elements */
    bool dup;      /* found equal to an earlier one */
} OptDiItem;

/* FNV-1a over the decoded elements (strings: lengths and bytes). */
static uint64_t opt_di_hash_value(const TkTensor *e)
{
    uint64_t h = 1469598103934665603ull;
    const uint8_t *p = e->data;
    if (e->dtype == IR_STRING) {
        const IrBytes *s = e->data;
        for (size_t k = 0; k < e->numel; k++) {
            h = (h ^ s[k].len) * 1099511628211ull;
            for (size_t j = 0; j < s[k].len; j++)
                h = (h ^ s[k].data[j]) * 1099511628211ull;
        }
        return h;
    }
    for (size_t k = 0; k < e->nbytes; k++)
        h = (h ^ p[k]) * 1099511628211ull;
    return h;
}

/* Whether two decoded tensors of one dtype and shape hold the same bits. */
static bool opt_di_same_value(const TkTensor *a, const TkTensor *b)
{
    if (a->numel != b->numel)
        return false;
    if (a->dtype != IR_STRING)
        return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
    const IrBytes *x = a->data, *y = b->data;
    for (size_t k = 0; k < a->numel; k++)
        if (x[k].len != y[k].len || (x[k].len && memcmp(x[k].data, y[k].data, x[k].len) != 0))
            return false;
    return true;
}

/* Same element type and dims (the cheap test before decoding). */
static bool opt_di_same_kind(const IrTensor *a, const IrTensor *b)
{
    return a->has_data_type && b->has_data_type && a->data_type == b->data_type &&
           a->ndims == b->ndims &&
           (a->ndims == 0 || memcmp(a->dims, b->dims, a->ndims * sizeof *a->dims) == 0);
}

/* The tensor's elements as stored, when the stored bytes are exactly its
 * little-endian elements (raw or external data of a whole-byte type): two
 * such tensors are equal bit for bit when their bytes are, with no need to
 * decode (copy) weights that may be gigabytes in a mapped file. */
static const uint8_t *opt_di_stored(const IrTensor *t, size_t *len)
{
    int bits = ir_dtype_bits(t->data_type);
    if (bits <= 0 || bits % 8)
        return NULL;
    if (t->has_data_location && t->data_location == 1) {
        *len = t->ext.len;
        return t->ext.bound ? t->ext.data : NULL;
    }
    *len = t->raw.len;
    return t->has_raw ? t->raw.data : NULL;
}

/* FNV-1a over the length and three 4 KiB samples (start, middle, end):
 * weights that differ almost always differ there, and only the few pairs
 * that agree are compared whole, so most pages are never read. */
static uint64_t opt_di_sample_hash(const uint8_t *p, size_t n)
{
    enum { SAMPLE = 4096 };
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof n; i++)
        h = (h ^ ((n >> (8 * i)) & 0xff)) * 1099511628211ull;
    size_t at[3] = {0, n / 2, n > SAMPLE ? n - SAMPLE : 0};
    for (int k = 0; k < 3; k++)
        for (size_t i = at[k]; i < n && i < at[k] + SAMPLE; i++)
            h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Hashes item it (decoding its tensor once unless its stored bytes can
 * be sampled); false when it cannot be decoded. */
static bool opt_di_hash(OptDiItem *it)
{
    if (it->hashed)
        return true;
    size_t len;
    const uint8_t *bytes = opt_di_stored(it->t, &len);
    if (bytes) {
        it->hash = opt_di_sample_hash(bytes, len);
        it->hashed = it->stored = true;
        return true;
    }
    IrError e;
    TkTensor *x = tk_from_ir(it->t, &e);
    if (!x)
        return false;
    it->hash = opt_di_hash_value(x);
    it->hashed = true;
    tk_free(x);
    return true;
}

/* Whether the tensors of a and b hold the same elements. */
static bool opt_di_equal(const OptDiItem *a, const OptDiItem *b)
{
    if (a->stored != b->stored)
        return false; /* hashed differently: not worth a decode to find out */
    size_t la, lb;
    const uint8_t *pa = opt_di_stored(a->t, &la), *pb = opt_di_stored(b->t, &lb);
    if (a->stored)
        return la == lb && (la == 0 || memcmp(pa, pb, la) == 0);
    IrError e;
    TkTensor *x = tk_from_ir(a->t, &e);
    TkTensor *y = x ? tk_from_ir(b->t, &e) : NULL;
    bool same = x && y && x->dtype == y->dtype && opt_di_same_value(x, y);
    tk_free(x);
    tk_free(y);
    return same;
}

/* The initializers this pass may merge, in file order. */
static size_t opt_di_collect(IrGraph *g, OptDiItem *items)
{
    size_t n = 0;
    for (size_t i = 0; i < g->inits.n; i++) {
        IrTensor *t = g->inits.p[i];
        IrValue *v = t->name ? ir_graph_find_local(g, t->name) : NULL;
        if (v && v->kind == IR_VAL_INIT && v->init == t)
            items[n++] = (OptDiItem){.v = v, .t = t, .pos = i};
    }
    return n;
}

/* Orders items by element type, then dims, then file order. */
static int opt_di_cmp(const void *pa, const void *pb)
{
    const IrTensor *a = ((const OptDiItem *)pa)->t, *b = ((const OptDiItem *)pb)->t;
    if (a->data_type != b->data_type)
        return a->data_type < b->data_type ? -1 : 1;
    if (a->ndims != b->ndims)
        return a->ndims < b->ndims ? -1 : 1;
    for (size_t i = 0; i < a->ndims; i++)
        if (a->dims[i] != b->dims[i])
            return a->dims[i] < b->dims[i] ? -1 : 1;
    const OptDiItem *x = pa, *y = pb;
    return x->pos == y->pos ? 0 : (x->pos < y->pos ? -1 : 1);
}

/* Within one run of items of the same kind, points the readers of each
 * later duplicate at its first equal. Returns the changes. */
static long opt_di_run_group(OptDiItem *it, size_t n)
{
    long changes = 0;
    for (size_t j = 1; j < n; j++) {
        if (!opt_di_hash(&it[j]))
            continue;
        for (size_t i = 0; i < j; i++) {
            if (it[i].dup || !opt_di_hash(&it[i]) || it[i].hash != it[j].hash ||
                !opt_di_equal(&it[i], &it[j]))
                continue;
            it[j].dup = true;
            IrError e;
            if (it[j].v->n_uses && ir_value_replace_uses(it[j].v, it[i].v, &e) == 0)
                changes++;
            break;
        }
    }
    return changes;
}

static long opt_di_run(OptCtx *c)
{
    IrGraph *g = c->g;
    if (!c->main || c->m->n_training || g->inits.n < 2)
        return 0;
    OptDiItem *items = mem_array(g->inits.n, sizeof *items);
    size_t n = opt_di_collect(g, items);
    qsort(items, n, sizeof *items, opt_di_cmp);
    long changes = 0;
    for (size_t s = 0; s < n;) {
        size_t e = s + 1;
        while (e < n && opt_di_same_kind(items[s].t, items[e].t))
            e++;
        changes += opt_di_run_group(items + s, e - s);
        s = e;
    }
    free(items);
    return changes;
}

const OptPass opt_pass_dedup_init = {
    "dedup_init", "makes readers of equal initializers read the first of them", true, 0,
    opt_di_run,
};
