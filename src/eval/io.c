/* Values in files and in memory (the backend tests' input_K.pb /
 * output_K.pb: a TensorProto, or a SequenceProto / OptionalProto /
 * MapProto for values that are not tensors), comparing values, and
 * running a backend-test case folder (the `test` command). The file forms
 * map the file and call the memory forms: one decoder, one encoder. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/eval.h"
#include "io/load.h"
#include "onnx.pb-c.h"
#include "io/save.h"

/* ---- reading ------------------------------------------------------------ */

/* The element type declared inside t (a sequence's or optional's element,
 * a map's value type) when t is of `kind`; NULL when unknown. */
static const IrType *ev_inner(const IrType *t, IrTypeKind kind)
{
    return t && t->kind == kind ? t->elem : NULL;
}

static EvValue *ev_pb_tensor(Onnx__TensorProto *tp, const char *what,
                             IrError *err)
{
    IrTensor *t = load_tensor_message(tp, what, err);
    if (!t)
        return NULL;
    IrError sub;
    EvValue *v = ev_from_ir_tensor(t, &sub);
    ir_tensor_free(t);
    if (!v)
        ir_fail(err, "%s: %s", what, sub.msg);
    return v;
}

static EvValue *ev_pb_sequence(Onnx__SequenceProto *sp, const IrType *type,
                               const char *what, int depth, IrError *err);
static EvValue *ev_pb_map(Onnx__MapProto *mp, const IrType *type,
                          const char *what, int depth, IrError *err);
static EvValue *ev_pb_optional(Onnx__OptionalProto *op, const IrType *type,
                               const char *what, int depth, IrError *err);

static EvValue *ev_pb_sequence(Onnx__SequenceProto *sp, const IrType *type,
                               const char *what, int depth, IrError *err)
{
    if (depth > 64) {
        ir_fail(err, "%s: values nested too deeply", what);
        return NULL;
    }
    if (sp->n_sparse_tensor_values) {
        ir_fail(err, "%s: sparse tensors in sequences are not supported", what);
        return NULL;
    }
    const IrType *et = ev_inner(type, IR_TYPE_SEQUENCE);
    EvValue *seq = ev_sequence_new();
    if (et)
        seq->elem_type = ir_type_copy(et);
    size_t n = sp->n_tensor_values + sp->n_sequence_values + sp->n_map_values +
               sp->n_optional_values;
    for (size_t i = 0; i < n; i++) {
        EvValue *item;
        size_t k = i;
        if (k < sp->n_tensor_values)
            item = ev_pb_tensor(sp->tensor_values[k], what, err);
        else if ((k -= sp->n_tensor_values) < sp->n_sequence_values)
            item = ev_pb_sequence(sp->sequence_values[k], et, what, depth + 1,
                                  err);
        else if ((k -= sp->n_sequence_values) < sp->n_map_values)
            item = ev_pb_map(sp->map_values[k], et, what, depth + 1, err);
        else
            item = ev_pb_optional(sp->optional_values[k - sp->n_map_values],
                                  et, what, depth + 1, err);
        if (!item) {
            ev_unref(seq);
            return NULL;
        }
        ev_sequence_push(seq, item);
    }
    return seq;
}

/* The keys of a MapProto as a 1-D tensor: strings, or the integer type
 * key_type names (int64 when it names none). */
static EvValue *ev_pb_map_keys(const Onnx__MapProto *mp, IrError *err)
{
    bool str = mp->key_type == IR_STRING ||
               (!mp->has_key_type && mp->n_string_keys);
    int32_t dt = str ? IR_STRING
                 : ev_dtype_is_int(mp->key_type) ? mp->key_type : IR_INT64;
    size_t n = str ? mp->n_string_keys : mp->n_keys;
    int64_t dims[1] = {(int64_t)n};
    EvValue *keys = ev_tensor_new(dt, 1, dims, err);
    if (!keys)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        if (!str) {
            ev_set_i(keys, k, mp->keys[k]);
            continue;
        }
        EvStr *s = &((EvStr *)keys->data)[k];
        s->len = mp->string_keys[k].len;
        s->p = mem_alloc(s->len + 1);
        if (s->len)
            memcpy(s->p, mp->string_keys[k].data, s->len);
    }
    return keys;
}

/* Map values as the kernels take them: a 1-D tensor when every value is
 * a scalar tensor of one type (or there are none and the declared value
 * type is a tensor type); else the sequence itself. Takes seq. */
static EvValue *ev_map_values(EvValue *seq, const IrType *vt, IrError *err)
{
    size_t n = seq->n_items;
    int32_t dt = n ? seq->items[0]->dtype
                   : vt && vt->kind == IR_TYPE_TENSOR && vt->has_elem_type
                   ? vt->elem_type : 0;
    for (size_t i = 0; i < n && dt; i++)
        if (seq->items[i]->kind != EV_TENSOR || seq->items[i]->rank != 0 ||
            seq->items[i]->dtype != dt)
            dt = 0;
    if (!dt || !ev_dtype_size(dt))
        return seq;
    int64_t dims[1] = {(int64_t)n};
    EvValue *t = ev_tensor_new(dt, 1, dims, err);
    for (size_t i = 0; t && i < n; i++)
        ev_copy_elems(t, i, seq->items[i], 0, 1);
    ev_unref(seq);
    return t;
}

static EvValue *ev_pb_map(Onnx__MapProto *mp, const IrType *type,
                          const char *what, int depth, IrError *err)
{
    const IrType *vt = ev_inner(type, IR_TYPE_MAP);
    size_t nv = mp->values ? mp->values->n_tensor_values +
                mp->values->n_sequence_values + mp->values->n_map_values +
                mp->values->n_optional_values : 0;
    size_t nk = mp->n_string_keys ? mp->n_string_keys : mp->n_keys;
    if (nk != nv) {
        ir_fail(err, "%s: a map of %zu keys and %zu values", what, nk, nv);
        return NULL;
    }
    EvValue *keys = ev_pb_map_keys(mp, err);
    if (!keys)
        return NULL;
    EvValue *vals = NULL;
    if (!mp->values)
        vals = ev_sequence_new();
    else {
        /* the values are a sequence of the map's value type */
        IrType seq_t = {.kind = IR_TYPE_SEQUENCE, .elem = (IrType *)vt};
        vals = ev_pb_sequence(mp->values, vt ? &seq_t : NULL, what,
                              depth + 1, err);
    }
    if (vals)
        vals = ev_map_values(vals, vt, err);
    if (!vals) {
        ev_unref(keys);
        return NULL;
    }
    EvValue *m = mem_alloc(sizeof *m);
    m->kind = EV_MAP;
    m->refs = 1;
    m->keys = keys;
    m->vals = vals;
    return m;
}

static EvValue *ev_pb_optional(Onnx__OptionalProto *op, const IrType *type,
                               const char *what, int depth, IrError *err)
{
    if (depth > 64) {
        ir_fail(err, "%s: values nested too deeply", what);
        return NULL;
    }
    const IrType *et = ev_inner(type, IR_TYPE_OPTIONAL);
    EvValue *item = NULL;
    if (op->tensor_value)
        item = ev_pb_tensor(op->tensor_value, what, err);
    else if (op->sequence_value)
        item = ev_pb_sequence(op->sequence_value, et, what, depth + 1, err);
    else if (op->map_value)
        item = ev_pb_map(op->map_value, et, what, depth + 1, err);
    else if (op->optional_value)
        item = ev_pb_optional(op->optional_value, et, what, depth + 1, err);
    else if (op->sparse_tensor_value) {
        ir_fail(err, "%s: sparse tensors in optionals are not supported", what);
        return NULL;
    } else
        return ev_optional_new(NULL);
    return item ? ev_optional_new(item) : NULL;
}

int ev_value_read_mem(const void *buf, size_t len, const IrType *type,
                      const char *what, EvValue **out, IrError *err)
{
    *out = NULL;
    IrTypeKind kind = type ? type->kind : IR_TYPE_TENSOR;
    bool tensor = kind == IR_TYPE_TENSOR || kind == IR_TYPE_NONE ||
                  kind == IR_TYPE_SPARSE_TENSOR;
    if (!tensor && kind != IR_TYPE_SEQUENCE && kind != IR_TYPE_MAP &&
        kind != IR_TYPE_OPTIONAL)
        return ir_fail(err, "%s: values of an opaque type cannot be read", what);
    const ProtobufCMessageDescriptor *d =
        tensor ? &onnx__tensor_proto__descriptor
        : kind == IR_TYPE_SEQUENCE ? &onnx__sequence_proto__descriptor
        : kind == IR_TYPE_MAP ? &onnx__map_proto__descriptor
                              : &onnx__optional_proto__descriptor;
    ProtobufCMessage *msg = load_message_buffer(buf, len, d, what, err);
    if (!msg)
        return -1;
    if (tensor)
        *out = ev_pb_tensor((Onnx__TensorProto *)msg, what, err);
    else if (kind == IR_TYPE_SEQUENCE)
        *out = ev_pb_sequence((Onnx__SequenceProto *)msg, type, what, 0, err);
    else if (kind == IR_TYPE_MAP)
        *out = ev_pb_map((Onnx__MapProto *)msg, type, what, 0, err);
    else
        *out = ev_pb_optional((Onnx__OptionalProto *)msg, type, what, 0, err);
    protobuf_c_message_free_unpacked(msg, NULL);
    return *out ? 0 : -1;
}

int ev_value_read(const char *path, const IrType *type, EvValue **out,
                  IrError *err)
{
    *out = NULL;
    const void *base;
    size_t len;
    if (load_map_readonly(path, &base, &len, err))
        return -1;
    int rc = ev_value_read_mem(base, len, type, path, out, err);
    load_unmap_readonly(base, len);
    return rc;
}

/* ---- writing -------------------------------------------------------------- */

/* Builds protobuf-c messages for a value; the IrTensors made on the way are
 * kept in `tensors` until the message is packed. */
typedef struct EvPb {
    IrPtrList tensors;   /* IrTensor* */
    IrPtrList msgs;      /* malloc'ed message structs and arrays */
} EvPb;

static void *ev_pb_alloc(EvPb *pb, size_t size)
{
    void *p = mem_alloc(size ? size : 1);
    ir_ptrlist_push(&pb->msgs, p);
    return p;
}

static Onnx__TensorProto *ev_pb_from_tensor(EvPb *pb, const EvValue *v)
{
    IrTensor *t = ev_to_ir_tensor(v, "");
    ir_ptrlist_push(&pb->tensors, t);
    Onnx__TensorProto *tp = ev_pb_alloc(pb, sizeof *tp);
    onnx__tensor_proto__init(tp);
    tp->n_dims = t->ndims;
    tp->dims = t->dims;
    tp->has_data_type = true;
    tp->data_type = t->data_type;
    if (t->has_raw) {
        tp->has_raw_data = true;
        tp->raw_data.len = t->raw.len;
        tp->raw_data.data = t->raw.data;
    }
    if (t->n_string) {
        tp->n_string_data = t->n_string;
        tp->string_data = ev_pb_alloc(pb, t->n_string * sizeof *tp->string_data);
        for (size_t k = 0; k < t->n_string; k++) {
            tp->string_data[k].len = t->string_data[k].len;
            tp->string_data[k].data = t->string_data[k].data;
        }
    }
    return tp;
}

static Onnx__SequenceProto *ev_pb_to_sequence(EvPb *pb, const EvValue *v);
static Onnx__MapProto *ev_pb_to_map(EvPb *pb, const EvValue *v);
static Onnx__OptionalProto *ev_pb_to_optional(EvPb *pb, const EvValue *v);

/* A SequenceProto's elem_type code for values of kind k (the same numbers
 * as OptionalProto's). */
static int ev_pb_kind_code(EvKind k)
{
    return k == EV_SEQUENCE ? ONNX__SEQUENCE_PROTO__DATA_TYPE__SEQUENCE
           : k == EV_MAP ? ONNX__SEQUENCE_PROTO__DATA_TYPE__MAP
           : k == EV_OPTIONAL ? ONNX__SEQUENCE_PROTO__DATA_TYPE__OPTIONAL
                              : ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
}

/* A sequence holds one kind of value; each item goes to the list of its
 * kind, so a mixed sequence (which no op makes) still loses nothing. */
static Onnx__SequenceProto *ev_pb_to_sequence(EvPb *pb, const EvValue *v)
{
    Onnx__SequenceProto *sp = ev_pb_alloc(pb, sizeof *sp);
    onnx__sequence_proto__init(sp);
    size_t n = v->n_items;
    sp->has_elem_type = true;
    sp->elem_type = (Onnx__SequenceProto__DataType)ev_pb_kind_code(
        n ? v->items[0]->kind : EV_TENSOR);
    sp->tensor_values = ev_pb_alloc(pb, n * sizeof(void *));
    sp->sequence_values = ev_pb_alloc(pb, n * sizeof(void *));
    sp->map_values = ev_pb_alloc(pb, n * sizeof(void *));
    sp->optional_values = ev_pb_alloc(pb, n * sizeof(void *));
    for (size_t i = 0; i < n; i++) {
        const EvValue *x = v->items[i];
        if (x->kind == EV_SEQUENCE)
            sp->sequence_values[sp->n_sequence_values++] = ev_pb_to_sequence(pb, x);
        else if (x->kind == EV_MAP)
            sp->map_values[sp->n_map_values++] = ev_pb_to_map(pb, x);
        else if (x->kind == EV_OPTIONAL)
            sp->optional_values[sp->n_optional_values++] = ev_pb_to_optional(pb, x);
        else
            sp->tensor_values[sp->n_tensor_values++] = ev_pb_from_tensor(pb, x);
    }
    return sp;
}

/* Map values kept as one 1-D tensor go out as a sequence of scalars, the
 * way ONNX writes a map's values. */
static Onnx__SequenceProto *ev_pb_map_values(EvPb *pb, const EvValue *vals)
{
    if (vals->kind != EV_TENSOR)
        return ev_pb_to_sequence(pb, vals);
    Onnx__SequenceProto *sp = ev_pb_alloc(pb, sizeof *sp);
    onnx__sequence_proto__init(sp);
    sp->has_elem_type = true;
    sp->elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
    sp->tensor_values = ev_pb_alloc(pb, vals->numel * sizeof(void *));
    sp->n_tensor_values = vals->numel;
    for (size_t i = 0; i < vals->numel; i++) {
        EvValue *s = ev_tensor_new(vals->dtype, 0, NULL, NULL);
        ev_copy_elems(s, 0, vals, i, 1);
        sp->tensor_values[i] = ev_pb_from_tensor(pb, s);
        ev_unref(s);
    }
    return sp;
}

static Onnx__MapProto *ev_pb_to_map(EvPb *pb, const EvValue *v)
{
    Onnx__MapProto *mp = ev_pb_alloc(pb, sizeof *mp);
    onnx__map_proto__init(mp);
    const EvValue *k = v->keys;
    mp->has_key_type = true;
    mp->key_type = k->dtype;
    if (k->dtype == IR_STRING) {
        mp->n_string_keys = k->numel;
        mp->string_keys = ev_pb_alloc(pb, k->numel * sizeof *mp->string_keys);
        for (size_t i = 0; i < k->numel; i++) {
            const EvStr *s = &((const EvStr *)k->data)[i];
            mp->string_keys[i].len = s->len;
            mp->string_keys[i].data = (uint8_t *)s->p;
        }
    } else {
        mp->n_keys = k->numel;
        mp->keys = ev_pb_alloc(pb, k->numel * sizeof *mp->keys);
        for (size_t i = 0; i < k->numel; i++)
            mp->keys[i] = ev_get_i(k, i);
    }
    mp->values = ev_pb_map_values(pb, v->vals);
    return mp;
}

static Onnx__OptionalProto *ev_pb_to_optional(EvPb *pb, const EvValue *v)
{
    Onnx__OptionalProto *op = ev_pb_alloc(pb, sizeof *op);
    onnx__optional_proto__init(op);
    op->has_elem_type = true;
    if (!v->n_items) {
        op->elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__UNDEFINED;
        return op;
    }
    const EvValue *x = v->items[0];
    op->elem_type = (Onnx__OptionalProto__DataType)ev_pb_kind_code(x->kind);
    if (x->kind == EV_SEQUENCE)
        op->sequence_value = ev_pb_to_sequence(pb, x);
    else if (x->kind == EV_MAP)
        op->map_value = ev_pb_to_map(pb, x);
    else if (x->kind == EV_OPTIONAL)
        op->optional_value = ev_pb_to_optional(pb, x);
    else
        op->tensor_value = ev_pb_from_tensor(pb, x);
    return op;
}

static void ev_pb_free(EvPb *pb)
{
    for (size_t i = 0; i < pb->tensors.n; i++)
        ir_tensor_free(pb->tensors.p[i]);
    for (size_t i = 0; i < pb->msgs.n; i++)
        free(pb->msgs.p[i]);
    free(pb->tensors.p);
    free(pb->msgs.p);
}

int ev_value_write_mem(const EvValue *v, const char *name, uint8_t **buf,
                       size_t *len, IrError *err)
{
    *buf = NULL;
    *len = 0;
    EvPb pb = {0};
    const ProtobufCMessage *msg;
    char *nm = (char *)(name ? name : "");
    if (v->kind == EV_TENSOR) {
        Onnx__TensorProto *tp = ev_pb_from_tensor(&pb, v);
        tp->name = nm;
        msg = &tp->base;
    } else if (v->kind == EV_SEQUENCE) {
        Onnx__SequenceProto *sp = ev_pb_to_sequence(&pb, v);
        sp->name = nm;
        msg = &sp->base;
    } else if (v->kind == EV_MAP) {
        Onnx__MapProto *mp = ev_pb_to_map(&pb, v);
        mp->name = nm;
        msg = &mp->base;
    } else {
        Onnx__OptionalProto *op = ev_pb_to_optional(&pb, v);
        op->name = nm;
        msg = &op->base;
    }
    size_t n = protobuf_c_message_get_packed_size(msg);
    /* protobuf's readers refuse a message of 2 GiB or more */
    int rc = 0;
    if (n >= (size_t)INT32_MAX)
        rc = ir_fail(err, "value '%s': %zu bytes serialized, past protobuf's 2 "
                     "GiB limit", nm, n);
    if (!rc) {
        *buf = mem_alloc(n + 1);
        protobuf_c_message_pack(msg, *buf);
        *len = n;
    }
    ev_pb_free(&pb);
    return rc;
}

int ev_value_write(const EvValue *v, const char *name, const char *path,
                   IrError *err)
{
    uint8_t *buf;
    size_t len;
    IrError sub;
    if (ev_value_write_mem(v, name, &buf, &len, &sub))
        return ir_fail(err, "%s: %s", path, sub.msg);
    int rc = save_bytes_file(buf, len, path, err);
    free(buf);
    return rc;
}

/* ---- comparing -------------------------------------------------------- */

void ev_index_text(const EvValue *t, size_t k, char *buf, size_t cap)
{
    size_t used = 0;
    size_t rem = k, idx[EV_MAX_RANK];
    for (size_t d = t->rank; d-- > 0;) {
        size_t n = (size_t)t->dims[d];
        idx[d] = n ? rem % n : 0;
        rem = n ? rem / n : 0;
    }
    used += (size_t)snprintf(buf + used, cap - used, "[");
    for (size_t d = 0; d < t->rank && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%zu", d ? "," : "",
                                 idx[d]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
}

static bool ev_float_close(double g, double w, double rtol, double atol)
{
    if (isnan(w) || isnan(g))
        return isnan(w) && isnan(g);
    if (isinf(w) || isinf(g))
        return g == w;
    return fabs(g - w) <= atol + rtol * fabs(w);
}

static bool ev_tensor_equal(const EvValue *g, const EvValue *w, double rtol,
                            double atol, char *why, size_t cap)
{
    if (g->dtype != w->dtype) {
        const char *a = ir_dtype_name(g->dtype), *b = ir_dtype_name(w->dtype);
        snprintf(why, cap, "element type %s, expected %s", a ? a : "?",
                 b ? b : "?");
        return false;
    }
    bool same = g->rank == w->rank;
    for (size_t d = 0; same && d < g->rank; d++)
        same = g->dims[d] == w->dims[d];
    if (!same) {
        char a[200] = "", b[200] = "";
        size_t ua = 0, ub = 0;
        for (size_t d = 0; d < g->rank && ua < sizeof a; d++)
            ua += (size_t)snprintf(a + ua, sizeof a - ua, "%s%lld", d ? "," : "",
                                   (long long)g->dims[d]);
        for (size_t d = 0; d < w->rank && ub < sizeof b; d++)
            ub += (size_t)snprintf(b + ub, sizeof b - ub, "%s%lld", d ? "," : "",
                                   (long long)w->dims[d]);
        snprintf(why, cap, "shape [%s], expected [%s]", a, b);
        return false;
    }
    for (size_t k = 0; k < g->numel; k++) {
        char at[160];
        if (g->dtype == IR_STRING) {
            const EvStr *a = &((const EvStr *)g->data)[k];
            const EvStr *b = &((const EvStr *)w->data)[k];
            if (a->len == b->len && (!a->len || !memcmp(a->p, b->p, a->len)))
                continue;
            ev_index_text(g, k, at, sizeof at);
            snprintf(why, cap, "element %s is \"%.40s\", expected \"%.40s\"",
                     at, a->p ? a->p : "", b->p ? b->p : "");
            return false;
        }
        if (g->dtype == IR_COMPLEX64 || g->dtype == IR_COMPLEX128) {
            bool c64 = g->dtype == IR_COMPLEX64;
            for (size_t part = 0; part < 2; part++) {
                double a = c64 ? ((const float *)g->data)[2 * k + part]
                               : ((const double *)g->data)[2 * k + part];
                double b = c64 ? ((const float *)w->data)[2 * k + part]
                               : ((const double *)w->data)[2 * k + part];
                if (!ev_float_close(a, b, rtol, atol)) {
                    ev_index_text(g, k, at, sizeof at);
                    snprintf(why, cap, "element %s (%s part) is %.9g, "
                             "expected %.9g", at, part ? "imaginary" : "real",
                             a, b);
                    return false;
                }
            }
            continue;
        }
        if (ev_dtype_is_float(g->dtype)) {
            double a = ev_get_f(g, k), b = ev_get_f(w, k);
            if (ev_float_close(a, b, rtol, atol))
                continue;
            ev_index_text(g, k, at, sizeof at);
            snprintf(why, cap, "element %s is %.9g, expected %.9g (rtol %g, "
                     "atol %g)", at, a, b, rtol, atol);
            return false;
        }
        if (ev_get_u(g, k) == ev_get_u(w, k))
            continue;
        ev_index_text(g, k, at, sizeof at);
        if (g->dtype == IR_UINT64)
            snprintf(why, cap, "element %s is %llu, expected %llu", at,
                     (unsigned long long)ev_get_u(g, k),
                     (unsigned long long)ev_get_u(w, k));
        else
            snprintf(why, cap, "element %s is %lld, expected %lld", at,
                     (long long)ev_get_i(g, k), (long long)ev_get_i(w, k));
        return false;
    }
    return true;
}

bool ev_value_equal(const EvValue *got, const EvValue *want, double rtol,
                    double atol, char *why, size_t cap)
{
    /* An optional holding a value compares equal to the bare value: the
     * test files do not always wrap optional outputs. */
    if (got->kind == EV_OPTIONAL && want->kind != EV_OPTIONAL &&
        got->n_items == 1)
        got = got->items[0];
    if (want->kind == EV_OPTIONAL && got->kind != EV_OPTIONAL &&
        want->n_items == 1)
        want = want->items[0];
    if (got->kind != want->kind) {
        snprintf(why, cap, "got a value of kind %d, expected kind %d",
                 (int)got->kind, (int)want->kind);
        return false;
    }
    if (got->kind == EV_TENSOR)
        return ev_tensor_equal(got, want, rtol, atol, why, cap);
    if (got->kind == EV_MAP) {
        if (!ev_tensor_equal(got->keys, want->keys, 0, 0, why, cap))
            return false;
        return ev_value_equal(got->vals, want->vals, rtol, atol, why, cap);
    }
    if (got->n_items != want->n_items) {
        snprintf(why, cap, "%zu elements, expected %zu", got->n_items,
                 want->n_items);
        return false;
    }
    for (size_t i = 0; i < got->n_items; i++) {
        char sub[400];
        if (!ev_value_equal(got->items[i], want->items[i], rtol, atol, sub,
                            sizeof sub)) {
            snprintf(why, cap, "item %zu: %s", i, sub);
            return false;
        }
    }
    return true;
}

/* ---- backend test cases ------------------------------------------------- */

static int ev_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test_data_set_* folders of a case, sorted. */
static size_t ev_list_sets(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    char **names = NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strncmp(e->d_name, "test_data_set_", 14) != 0)
                continue;
            names = mem_grow(names, n + 1, sizeof *names);
            names[n++] = mem_strdup(e->d_name);
        }
        closedir(d);
    }
    if (n)
        qsort(names, n, sizeof *names, ev_name_cmp);
    *out = names;
    return n;
}

/* dir/name into buf; false when it does not fit (paths past PATH_MAX are
 * refused rather than cut). */
static bool ev_join(char *buf, size_t cap, const char *dir, const char *fmt,
                    size_t k)
{
    char name[64];
    snprintf(name, sizeof name, fmt, k);
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < cap;
}

static bool ev_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int ev_inputs_read(IrModel *m, const char *dir, EvValue ***in,
                   size_t *n_in, IrError *err)
{
    if (!m->graph)
        return ir_fail(err, "the model has no graph");
    IrValueInfo **feeds;
    size_t n_feeds = ev_model_feeds(m, &feeds);
    size_t n = 0;
    char path[4096];
    for (;; n++) {
        if (!ev_join(path, sizeof path, dir, "input_%zu.pb", n) ||
            !ev_file_exists(path))
            break;
    }
    /* All inputs are fed when there is a file for each, initializers
     * included; otherwise exactly the inputs without an initializer. */
    bool all = n == m->graph->inputs.n && n > n_feeds;
    int rc = 0;
    if (!all && n < n_feeds)
        rc = ir_fail(err, "%s/input_%zu.pb: missing: input '%s' of the model "
                     "needs a value", dir, n, feeds[n]->value->name);
    else if (!all && n > n_feeds)
        rc = ir_fail(err, "%s: %zu input files, the model has %zu inputs to "
                     "feed", dir, n, n_feeds);
    EvValue **v = mem_array(n + 1, sizeof *v);
    for (size_t k = 0; k < n && !rc; k++) {
        ev_join(path, sizeof path, dir, "input_%zu.pb", k);
        IrValueInfo *vi = all ? m->graph->inputs.p[k] : feeds[k];
        rc = ev_value_read(path, vi->type, &v[k], err);
    }
    free(feeds);
    if (rc) {
        ev_values_free(v, n);
        return -1;
    }
    *in = v;
    *n_in = n;
    return 0;
}

static int ev_check_outputs(IrModel *m, const char *set, EvValue **got,
                            size_t n_got, double rtol, double atol,
                            IrError *err)
{
    char path[4096];
    for (size_t k = 0; k < n_got; k++) {
        if (!ev_join(path, sizeof path, set, "output_%zu.pb", k) ||
            !ev_file_exists(path))
            return ir_fail(err, "%s: missing (the model has %zu outputs)",
                           path, n_got);
        IrValueInfo *vi = m->graph->outputs.p[k];
        EvValue *want;
        if (ev_value_read(path, vi->type, &want, err))
            return -1;
        char why[400];
        bool ok = ev_value_equal(got[k], want, rtol, atol, why, sizeof why);
        ev_unref(want);
        if (!ok)
            return ir_fail(err, "output %zu '%s': %s", k, vi->value->name, why);
    }
    return 0;
}

static int ev_test_set(IrModel *m, const char *set, const EvOptions *opt,
                       double rtol, double atol, IrError *err)
{
    EvValue **in, **out;
    size_t n_in, n_out;
    if (ev_inputs_read(m, set, &in, &n_in, err))
        return -1;
    int rc = ev_model_run(m, opt, n_in, in, &out, &n_out, err);
    ev_values_free(in, n_in);
    if (rc)
        return -1;
    rc = ev_check_outputs(m, set, out, n_out, rtol, atol, err);
    ev_values_free(out, n_out);
    return rc;
}

int ev_test_case_model(const char *case_dir, IrModel *m, double rtol,
                       double atol, EvTestResult *res, IrError *err)
{
    return ev_test_case_model_opt(case_dir, m, NULL, rtol, atol, res, err);
}

int ev_test_case_model_opt(const char *case_dir, IrModel *m,
                           const EvOptions *opt, double rtol, double atol,
                           EvTestResult *res, IrError *err)
{
    memset(res, 0, sizeof *res);
    char **sets;
    size_t n = ev_list_sets(case_dir, &sets);
    int rc = n ? 0 : ir_fail(err, "%s: no test_data_set_* folders", case_dir);
    for (size_t i = 0; i < n; i++) {
        char set[4096];
        int len = snprintf(set, sizeof set, "%s/%s", case_dir, sets[i]);
        res->sets++;
        if (len < 0 || (size_t)len >= sizeof set) {
            if (!rc)
                rc = ir_fail(err, "%s: path too long", case_dir);
            free(sets[i]);
            continue;
        }
        IrError sub;
        if (ev_test_set(m, set, opt, rtol, atol, &sub)) {
            if (!rc)
                rc = ir_fail(err, "%s: %s", sets[i], sub.msg);
        } else {
            res->passed++;
        }
        free(sets[i]);
    }
    free(sets);
    return rc;
}

int ev_test_case(const char *case_dir, const char *model, double rtol,
                 double atol, EvTestResult *res, IrError *err)
{
    return ev_test_case_opt(case_dir, model, NULL, rtol, atol, res, err);
}

int ev_test_case_opt(const char *case_dir, const char *model,
                     const EvOptions *opt, double rtol, double atol,
                     EvTestResult *res, IrError *err)
{
    memset(res, 0, sizeof *res);
    char path[4096];
    if (!model) {
        if (!ev_join(path, sizeof path, case_dir, "model.onnx", 0))
            return ir_fail(err, "%s: path too long", case_dir);
        model = path;
    }
    IrModel *m;
    if (load_model_file(model, NULL, &m, err))
        return -1;
    int rc = ev_test_case_model_opt(case_dir, m, opt, rtol, atol, res, err);
    ir_model_free(m);
    return rc;
}
