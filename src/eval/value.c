/* Run-time values of the evaluator: tensors, sequences, optionals and
 * maps, their element accessors, and the conversion from and to the
 * TensorProto storage of the IR (raw bytes, typed fields, external data,
 * packed 4- and 2-bit types). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "eval/eval.h"
#include "base/fconv.h"

/* The evaluator reads raw_data by memcpy: TensorProto is little-endian. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the evaluator assumes a little-endian host");

/* The unpacked element size is the IR's; strings are EvStr. */
size_t ev_dtype_size(int32_t dtype)
{
    return dtype == IR_STRING ? sizeof(EvStr) : ir_dtype_host_size(dtype);
}

/* The class tests are the IR's (IR_DTYPES); these names stay for the
 * kernels. */
bool ev_dtype_is_float(int32_t dtype)
{
    return ir_dtype_is_float(dtype);
}

bool ev_dtype_is_unsigned(int32_t dtype)
{
    return ir_dtype_class(dtype) == IR_DC_UINT;
}

bool ev_dtype_is_int(int32_t dtype)
{
    return ir_dtype_is_int(dtype);
}

bool ev_dtype_is_real(int32_t dtype)
{
    return dtype == IR_FLOAT || dtype == IR_DOUBLE || dtype == IR_FLOAT16 ||
           dtype == IR_BFLOAT16;
}

/* ---- the memory budget ------------------------------------------------- */

/* Per thread: runs on other threads have their own budgets. */
static _Thread_local EvBudget *ev_budget_top;
static uint64_t ev_budget_ids;

void ev_budget_push(EvBudget *b, uint64_t max)
{
    b->id = __atomic_add_fetch(&ev_budget_ids, 1, __ATOMIC_RELAXED);
    b->max = max;
    b->live = 0;
    b->prev = ev_budget_top;
    ev_budget_top = b;
}

void ev_budget_pop(EvBudget *b)
{
    /* Pops b and anything a failed inner run left above it. */
    for (EvBudget *p = ev_budget_top; p; p = p->prev)
        if (p == b) {
            ev_budget_top = b->prev;
            return;
        }
}

const char *ev_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (n < 1024) {
        snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
        return buf;
    }
    double x = (double)n / 1024;
    size_t u = 0;
    while (x >= 1024 && u + 1 < sizeof unit / sizeof *unit) {
        x /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.4g %s", x, unit[u]);
    return buf;
}

int ev_budget_take(size_t bytes, uint64_t *id, IrError *err)
{
    EvBudget *b = ev_budget_top;
    *id = 0;
    if (!b)
        return 0;
    if (err && (bytes > b->max || b->live > b->max - bytes)) {
        char need[32], max[32], used[32];
        return ir_fail(err, "needs %s, over the memory budget of %s (%s in "
                       "use); raise --max-memory",
                       ev_fmt_bytes(bytes, need, sizeof need),
                       ev_fmt_bytes(b->max, max, sizeof max),
                       ev_fmt_bytes(b->live, used, sizeof used));
    }
    b->live += bytes;
    *id = b->id;
    return 0;
}

void ev_budget_give(uint64_t id, size_t bytes)
{
    for (EvBudget *b = ev_budget_top; id && b; b = b->prev)
        if (b->id == id) {
            b->live = bytes < b->live ? b->live - bytes : 0;
            return;
        }
}

uint64_t ev_value_bytes(const EvValue *v)
{
    uint64_t n = sizeof *v + v->rank * sizeof(int64_t) +
                 (uint64_t)v->numel * ev_dtype_size(v->dtype);
    for (size_t i = 0; i < v->n_items; i++)
        n += ev_value_bytes(v->items[i]);
    if (v->keys)
        n += ev_value_bytes(v->keys);
    if (v->vals)
        n += ev_value_bytes(v->vals);
    return n;
}

uint64_t ev_default_max_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || size <= 0)
        return 4ull << 30;
    return (uint64_t)pages / 4 * 3 * (uint64_t)size;
}

/* ---- creation and lifetime ---------------------------------------------- */

/* A tensor whose data is `borrow` (not owned, not charged) when given,
 * else a new block, zeroed when asked. */
static EvValue *ev_tensor_make(int32_t dtype, size_t rank, const int64_t *dims,
                               const void *borrow, bool zero, IrError *err)
{
    size_t esize = ev_dtype_size(dtype);
    if (!esize) {
        ir_fail(err, "element type %d is not supported", (int)dtype);
        return NULL;
    }
    if (rank > EV_MAX_RANK) {
        ir_fail(err, "rank %zu is above the evaluator's limit of %d", rank,
                EV_MAX_RANK);
        return NULL;
    }
    /* A zero dim makes the tensor empty whatever the other dims are, so
     * [2^40, 2^40, 0] is as valid as [0, 2^40, 2^40]. */
    size_t numel = 1;
    for (size_t i = 0; i < rank; i++)
        if (dims[i] == 0)
            numel = 0;
    for (size_t i = 0; i < rank && numel; i++) {
        if (dims[i] < 0 || !mem_mul_size(numel, (size_t)dims[i], &numel)) {
            ir_fail(err, "tensor dims overflow or are negative");
            return NULL;
        }
    }
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            ir_fail(err, "tensor dim %zu is negative", i);
            return NULL;
        }
    }
    size_t bytes;
    if (!mem_mul_size(numel, esize, &bytes) || bytes > EV_MAX_TENSOR_BYTES) {
        ir_fail(err, "a tensor of %zu elements is above the evaluator's "
                "limit of %llu bytes", numel, EV_MAX_TENSOR_BYTES);
        return NULL;
    }
    /* Checked before allocating: what is refused is never touched. The
     * cost counts the bookkeeping too, so that a sequence of a million
     * scalars is not free. */
    uint64_t id;
    size_t cost = (borrow ? 0 : bytes) + sizeof(EvValue) + rank * sizeof(int64_t);
    if (ev_budget_take(cost, &id, err))
        return NULL;
    EvValue *v = mem_alloc(sizeof *v);
    v->budget = id;
    v->charged = cost;
    v->kind = EV_TENSOR;
    v->refs = 1;
    v->dtype = dtype;
    v->rank = rank;
    if (rank) {
        v->dims = mem_array(rank, sizeof *v->dims);
        memcpy(v->dims, dims, rank * sizeof *dims);
    }
    v->numel = numel;
    /* An empty tensor still gets a block: kernels compute `data + offset`
     * with offset 0, which is undefined on a NULL pointer. */
    if (borrow) {
        v->data = (void *)borrow;   /* kernels never write their inputs */
        return v;
    }
    v->data_bytes = numel ? bytes : sizeof(max_align_t);
    v->data = ev_block_get(v->data_bytes, zero || dtype == IR_STRING);
    return v;
}

EvValue *ev_tensor_new(int32_t dtype, size_t rank, const int64_t *dims,
                       IrError *err)
{
    return ev_tensor_make(dtype, rank, dims, NULL, true, err);
}

EvValue *ev_tensor_new_raw(int32_t dtype, size_t rank, const int64_t *dims,
                           IrError *err)
{
    return ev_tensor_make(dtype, rank, dims, NULL, false, err);
}

EvValue *ev_scalar_new(int32_t dtype, double x)
{
    EvValue *v = ev_tensor_new(dtype, 0, NULL, NULL);
    if (v)
        ev_set_f(v, 0, x);
    return v;
}

EvValue *ev_sequence_new(void)
{
    EvValue *v = mem_alloc(sizeof *v);
    v->kind = EV_SEQUENCE;
    v->refs = 1;
    return v;
}

/* The items array grows to powers of two (at least 4), so its capacity
 * follows from n_items alone: a sequence built item by item costs
 * linear time, not a realloc per item (quadratic where realloc copies,
 * as under AddressSanitizer). Only this function writes items. */
void ev_sequence_push(EvValue *seq, EvValue *item)
{
    size_t n = seq->n_items;
    if (n == 0)
        seq->items = mem_grow(seq->items, 4, sizeof *seq->items);
    else if (n >= 4 && (n & (n - 1)) == 0)
        seq->items = mem_grow(seq->items, 2 * n, sizeof *seq->items);
    seq->items[seq->n_items++] = item;
}

EvValue *ev_optional_new(EvValue *item)
{
    EvValue *v = mem_alloc(sizeof *v);
    v->kind = EV_OPTIONAL;
    v->refs = 1;
    if (item)
        ev_sequence_push(v, item);
    return v;
}

void ev_copy_elems(EvValue *dst, size_t doff, const EvValue *src, size_t soff,
                   size_t n)
{
    if (!n)
        return;
    if (src->dtype == IR_STRING) {
        const EvStr *s = (const EvStr *)src->data + soff;
        EvStr *d = (EvStr *)dst->data + doff;
        for (size_t k = 0; k < n; k++) {
            d[k].len = s[k].len;
            d[k].p = mem_alloc(s[k].len + 1);
            if (s[k].len)
                memcpy(d[k].p, s[k].p, s[k].len);
        }
        return;
    }
    size_t es = ev_dtype_size(src->dtype);
    memcpy((char *)dst->data + doff * es, (const char *)src->data + soff * es,
           n * es);
}

EvValue *ev_tensor_copy(const EvValue *t, IrError *err)
{
    EvValue *v = ev_tensor_new(t->dtype, t->rank, t->dims, err);
    if (v)
        ev_copy_elems(v, 0, t, 0, t->numel);
    return v;
}

EvValue *ev_ref(EvValue *v)
{
    if (v)
        v->refs++;
    return v;
}

static void ev_value_free(EvValue *v)
{
    ev_budget_give(v->budget, v->charged);
    if (v->dtype == IR_STRING && v->kind == EV_TENSOR) {
        EvStr *s = v->data;
        for (size_t k = 0; k < v->numel; k++)
            free(s[k].p);
    }
    for (size_t i = 0; i < v->n_items; i++)
        ev_unref(v->items[i]);
    ev_unref(v->keys);
    ev_unref(v->vals);
    ir_type_free(v->elem_type);
    free(v->items);
    free(v->dims);
    if (v->data_bytes)
        ev_block_put(v->data, v->data_bytes);
    free(v);
}

void ev_unref(EvValue *v)
{
    if (v && --v->refs <= 0)
        ev_value_free(v);
}

void ev_values_free(EvValue **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        ev_unref(v[i]);
    free(v);
}

/* ---- element access -------------------------------------------------- */

/* The layout and the conversions are the kit's (ir/tensor_kit.c), the one
 * element access of the product. */

double ev_get_f(const EvValue *t, size_t k)
{
    return tk_load_f(t->dtype, t->data, k);
}

int64_t ev_get_i(const EvValue *t, size_t k)
{
    return tk_load_i(t->dtype, t->data, k);
}

uint64_t ev_get_u(const EvValue *t, size_t k)
{
    return tk_load_u(t->dtype, t->data, k);
}

void ev_set_i(EvValue *t, size_t k, int64_t v)
{
    tk_store_i(t->dtype, t->data, k, v);
}

void ev_set_u(EvValue *t, size_t k, uint64_t v)
{
    tk_store_u(t->dtype, t->data, k, v);
}

void ev_set_f(EvValue *t, size_t k, double v)
{
    tk_store_f(t->dtype, t->data, k, v);
}

/* ---- TensorProto <-> value --------------------------------------------- */

/* Strings are the evaluator's own (EvStr); every other type is decoded by
 * the IR's one tensor decoder (src/ir/ir_tensor.c). */
static int ev_decode_strings(EvValue *v, const IrTensor *t, const char *name,
                             IrError *err)
{
    if (t->n_string != v->numel)
        return ir_fail(err, "tensor '%s': string_data has %zu values, its "
                       "dims need %zu", name, t->n_string, v->numel);
    EvStr *s = v->data;
    for (size_t k = 0; k < v->numel; k++) {
        s[k].len = t->string_data[k].len;
        s[k].p = mem_alloc(s[k].len + 1);
        if (s[k].len)
            memcpy(s[k].p, t->string_data[k].data, s[k].len);
    }
    return 0;
}

EvValue *ev_from_ir_tensor(const IrTensor *t, IrError *err)
{
    const char *name = t->name ? t->name : "";
    if (!t->has_data_type || !ev_dtype_size(t->data_type)) {
        ir_fail(err, "tensor '%s': element type %d is not supported", name,
                (int)t->data_type);
        return NULL;
    }
    if (ir_tensor_check_declared(t, err))
        return NULL;
    IrError sub;
    /* not zeroed: the decode writes every element (strings excepted) */
    EvValue *v = ev_tensor_make(t->data_type, t->ndims, t->dims, NULL, false, &sub);
    if (!v) {
        ir_fail(err, "tensor '%s': %s", name, sub.msg);
        return NULL;
    }
    int rc;
    if (t->data_type == IR_STRING && !t->has_raw && !ir_tensor_is_external(t))
        rc = ev_decode_strings(v, t, name, err);
    else
        rc = ir_tensor_decode(t, v->data, v->numel, err);
    if (rc) {
        ev_unref(v);
        return NULL;
    }
    return v;
}

/* The bytes of t when the evaluator can use them in place: a fixed-size
 * type stored one element per host element (not bool, whose raw bytes
 * may be other than 0 and 1), the exact length, aligned. NULL otherwise. */
static const void *ev_borrowable(const IrTensor *t, size_t numel)
{
    int32_t dt = t->data_type;
    size_t len, es = ev_dtype_size(dt);
    const uint8_t *p = ir_tensor_bytes(t, &len);
    if (!p || !numel || dt == IR_STRING || dt == IR_BOOL || ir_dtype_per_byte(dt) != 1 ||
        es != ir_dtype_host_size(dt) || len / es != numel || len % es ||
        (uintptr_t)p % es)
        return NULL;
    return p;
}

EvValue *ev_from_ir_tensor_borrow(const IrTensor *t, IrError *err)
{
    size_t numel = 1;
    if (!t->has_data_type || !ev_dtype_size(t->data_type) ||
        ir_tensor_check_declared(t, err))
        return ev_from_ir_tensor(t, err);
    for (size_t i = 0; i < t->ndims; i++)
        if (t->dims[i] < 0 || !mem_mul_size(numel, (size_t)t->dims[i], &numel))
            return ev_from_ir_tensor(t, err);
    const void *p = ev_borrowable(t, numel);
    IrError sub;
    EvValue *v = p ? ev_tensor_make(t->data_type, t->ndims, t->dims, p, false, &sub) : NULL;
    return v ? v : ev_from_ir_tensor(t, err);
}

EvValue *ev_value_own(EvValue *v, IrError *err)
{
    if (!v)
        return NULL;
    if (v->kind == EV_TENSOR)
        return v->data_bytes || v->dtype == IR_STRING ? ev_ref(v) : ev_tensor_copy(v, err);
    bool borrowed = false;
    for (size_t i = 0; i < v->n_items; i++)
        borrowed |= v->items[i]->kind == EV_TENSOR && v->items[i]->dtype != IR_STRING &&
                    !v->items[i]->data_bytes;
    if (!borrowed || (v->kind != EV_SEQUENCE && v->kind != EV_OPTIONAL))
        return ev_ref(v);
    EvValue *o = v->kind == EV_SEQUENCE ? ev_sequence_new() : ev_optional_new(NULL);
    o->elem_type = v->elem_type ? ir_type_copy(v->elem_type) : NULL;
    for (size_t i = 0; i < v->n_items; i++) {
        EvValue *item = ev_value_own(v->items[i], err);
        if (!item) {
            ev_unref(o);
            return NULL;
        }
        ev_sequence_push(o, item);
    }
    return o;
}

IrTensor *ev_to_ir_tensor(const EvValue *v, const char *name)
{
    IrTensor *t = mem_alloc(sizeof *t);
    t->name = mem_strdup(name);
    t->has_data_type = true;
    t->data_type = v->dtype;
    t->ndims = v->rank;
    if (v->rank) {
        t->dims = mem_array(v->rank, sizeof *t->dims);
        memcpy(t->dims, v->dims, v->rank * sizeof *t->dims);
    }
    if (v->dtype == IR_STRING) {
        const EvStr *s = v->data;
        t->n_string = v->numel;
        t->string_data = mem_array(v->numel ? v->numel : 1,
                                        sizeof *t->string_data);
        for (size_t k = 0; k < v->numel; k++) {
            t->string_data[k].len = s[k].len;
            t->string_data[k].data = mem_alloc(s[k].len + 1);
            if (s[k].len)
                memcpy(t->string_data[k].data, s[k].p, s[k].len);
        }
        return t;
    }
    unsigned per = ir_dtype_per_byte(v->dtype);
    size_t len = per > 1 ? (v->numel + per - 1) / per
                         : v->numel * ev_dtype_size(v->dtype);
    t->has_raw = true;
    t->raw.len = len;
    t->raw.data = mem_alloc(len + 1);
    if (per > 1) {
        unsigned bits = 8 / per;
        uint8_t mask = (uint8_t)((1u << bits) - 1);
        for (size_t k = 0; k < v->numel; k++) {
            uint8_t x = (uint8_t)(((const uint8_t *)v->data)[k] & mask);
            t->raw.data[k / per] |= (uint8_t)(x << (bits * (k % per)));
        }
    } else if (len) {
        memcpy(t->raw.data, v->data, len);
    }
    return t;
}
