/*
 * test_roundtrip.c - load followed by save loses nothing.
 *
 * Every *.onnx of the test data (backend data, ../shared/models, testdata/)
 * and a set of models written here byte by byte go through
 * load_model_buffer + save_model_buffer. The result is judged without the
 * project's IR: both byte strings are decoded by protobuf-c and the two
 * message trees are compared field by field, unknown fields included, by a
 * comparator that knows nothing but the descriptors. Saving the reloaded
 * result again must then give the very same bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus.h"
#include "io/load.h"
#include "onnx.pb-c.h"
#include "io/save.h"
#include "t.h"
#include "wire.h"

/* ==== the comparator =================================================
 *
 * pb_cmp_msg walks two decoded messages of the same type in descriptor
 * order and stops at the first difference, leaving in c->msg the path of
 * the differing field and what differs, e.g.
 * "graph.node[3].attribute[0].t.raw_data: length 16 vs 12".
 */

typedef struct PbCmp {
    char path[4096];
    size_t plen;
    char msg[4096 + 512 + 16];
} PbCmp;

/* Appends a path component; returns the length to restore. */
static size_t path_push(PbCmp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static size_t path_push(PbCmp *c, const char *fmt, ...)
{
    size_t old = c->plen;
    va_list ap;
    va_start(ap, fmt);
    if (c->plen < sizeof c->path) {
        int k = vsnprintf(c->path + c->plen, sizeof c->path - c->plen, fmt, ap);
        if (k > 0)
            c->plen += (size_t)k;
        if (c->plen >= sizeof c->path)
            c->plen = sizeof c->path - 1;
    }
    va_end(ap);
    return old;
}

static size_t path_field(PbCmp *c, const char *name)
{
    return c->plen ? path_push(c, ".%s", name) : path_push(c, "%s", name);
}

static void path_pop(PbCmp *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

/* Records the difference at the current path; returns 1. */
static int cmp_fail(PbCmp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int cmp_fail(PbCmp *c, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->msg, sizeof c->msg, "%s: %s", c->plen ? c->path : "(root)",
             what);
    return 1;
}

/* Size of one element of a repeated field of type t. */
static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
        return 4;
    case PROTOBUF_C_TYPE_ENUM:
        return sizeof(int);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    }
    return 0;
}

static int cmp_bytes(PbCmp *c, const uint8_t *a, size_t na, const uint8_t *b,
                     size_t nb)
{
    if (na != nb)
        return cmp_fail(c, "length %zu vs %zu", na, nb);
    if (na == 0 || memcmp(a, b, na) == 0)
        return 0;
    size_t i = 0;
    while (a[i] == b[i])
        i++;
    return cmp_fail(c, "byte %zu of %zu: 0x%02x vs 0x%02x", i, na, a[i], b[i]);
}

static int cmp_string(PbCmp *c, const char *a, const char *b)
{
    if (!a || !b) {
        if (a == b)
            return 0;
        return cmp_fail(c, "%s vs %s", a ? "set" : "NULL", b ? "set" : "NULL");
    }
    if (strcmp(a, b) == 0)
        return 0;
    size_t la = strlen(a), lb = strlen(b);
    if (la < 60 && lb < 60)
        return cmp_fail(c, "\"%s\" vs \"%s\"", a, b);
    size_t i = 0;
    while (a[i] == b[i])
        i++;
    return cmp_fail(c, "strings of length %zu vs %zu differ at byte %zu", la,
                    lb, i);
}

static int pb_cmp_msg(PbCmp *c, const ProtobufCMessage *a,
                      const ProtobufCMessage *b);

/* Compares one value (a singular field or one element of a repeated one). */
static int cmp_elem(PbCmp *c, const ProtobufCFieldDescriptor *f,
                    const void *pa, const void *pb)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: {
        int32_t x, y;
        memcpy(&x, pa, 4);
        memcpy(&y, pb, 4);
        return x == y ? 0 : cmp_fail(c, "%d vs %d", (int)x, (int)y);
    }
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: {
        uint32_t x, y;
        memcpy(&x, pa, 4);
        memcpy(&y, pb, 4);
        return x == y ? 0 : cmp_fail(c, "%u vs %u", (unsigned)x, (unsigned)y);
    }
    case PROTOBUF_C_TYPE_ENUM: {
        int x, y;
        memcpy(&x, pa, sizeof x);
        memcpy(&y, pb, sizeof y);
        return x == y ? 0 : cmp_fail(c, "enum %d vs %d", x, y);
    }
    case PROTOBUF_C_TYPE_BOOL: {
        protobuf_c_boolean x, y;
        memcpy(&x, pa, sizeof x);
        memcpy(&y, pb, sizeof y);
        return x == y ? 0 : cmp_fail(c, "bool %d vs %d", (int)x, (int)y);
    }
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: {
        int64_t x, y;
        memcpy(&x, pa, 8);
        memcpy(&y, pb, 8);
        return x == y ? 0
                      : cmp_fail(c, "%lld vs %lld", (long long)x, (long long)y);
    }
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: {
        uint64_t x, y;
        memcpy(&x, pa, 8);
        memcpy(&y, pb, 8);
        return x == y ? 0
                      : cmp_fail(c, "%llu vs %llu", (unsigned long long)x,
                                 (unsigned long long)y);
    }
    case PROTOBUF_C_TYPE_FLOAT: {
        /* Bit patterns: NaN payloads and -0.0 must survive. */
        uint32_t x, y;
        float fx, fy;
        memcpy(&x, pa, 4);
        memcpy(&y, pb, 4);
        memcpy(&fx, pa, 4);
        memcpy(&fy, pb, 4);
        return x == y ? 0
                      : cmp_fail(c, "%g (0x%08x) vs %g (0x%08x)", (double)fx,
                                 (unsigned)x, (double)fy, (unsigned)y);
    }
    case PROTOBUF_C_TYPE_DOUBLE: {
        uint64_t x, y;
        double dx, dy;
        memcpy(&x, pa, 8);
        memcpy(&y, pb, 8);
        memcpy(&dx, pa, 8);
        memcpy(&dy, pb, 8);
        return x == y ? 0
                      : cmp_fail(c, "%g (0x%016llx) vs %g (0x%016llx)", dx,
                                 (unsigned long long)x, dy,
                                 (unsigned long long)y);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *x, *y;
        memcpy(&x, pa, sizeof x);
        memcpy(&y, pb, sizeof y);
        return cmp_string(c, x, y);
    }
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData x, y;
        memcpy(&x, pa, sizeof x);
        memcpy(&y, pb, sizeof y);
        return cmp_bytes(c, x.data, x.len, y.data, y.len);
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *x, *y;
        memcpy(&x, pa, sizeof x);
        memcpy(&y, pb, sizeof y);
        if (!x || !y)
            return x == y ? 0
                          : cmp_fail(c, "%s vs %s", x ? "present" : "absent",
                                     y ? "present" : "absent");
        return pb_cmp_msg(c, x, y);
    }
    }
    return cmp_fail(c, "unknown field type %d", (int)f->type);
}

/* Whether a non-repeated field is present in message m. */
static int field_present(const ProtobufCFieldDescriptor *f,
                         const ProtobufCMessage *m)
{
    const char *base = (const char *)m;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t which;
        memcpy(&which, base + f->quantifier_offset, sizeof which);
        return which == f->id;
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING) {
        const void *p;
        memcpy(&p, base + f->offset, sizeof p);
        if (f->label == PROTOBUF_C_LABEL_REQUIRED ||
            f->label == PROTOBUF_C_LABEL_NONE)
            return 1;
        /* proto2 optional string or message: NULL means absent (onnx.proto
         * declares no string defaults). */
        return p != NULL;
    }
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
        protobuf_c_boolean has;
        memcpy(&has, base + f->quantifier_offset, sizeof has);
        return has != 0;
    }
    return 1; /* required, or proto3 without presence */
}

static int cmp_unknown(PbCmp *c, const ProtobufCMessage *a,
                       const ProtobufCMessage *b)
{
    size_t old = path_field(c, "unknown_fields");
    if (a->n_unknown_fields != b->n_unknown_fields)
        return cmp_fail(c, "count %u vs %u", a->n_unknown_fields,
                        b->n_unknown_fields);
    for (unsigned i = 0; i < a->n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *x = &a->unknown_fields[i];
        const ProtobufCMessageUnknownField *y = &b->unknown_fields[i];
        size_t o2 = path_push(c, "[%u]", i);
        if (x->tag != y->tag)
            return cmp_fail(c, "tag %u vs %u", (unsigned)x->tag,
                            (unsigned)y->tag);
        if (x->wire_type != y->wire_type)
            return cmp_fail(c, "tag %u: wire type %d vs %d", (unsigned)x->tag,
                            (int)x->wire_type, (int)y->wire_type);
        if (x->len != y->len)
            return cmp_fail(c, "tag %u: length %zu vs %zu", (unsigned)x->tag,
                            x->len, y->len);
        if (x->len && memcmp(x->data, y->data, x->len) != 0)
            return cmp_fail(c, "tag %u: data differs", (unsigned)x->tag);
        path_pop(c, o2);
    }
    path_pop(c, old);
    return 0;
}

/* 0 when a and b are equal in every field and unknown field, else 1 with
 * c->msg naming the first difference. */
static int pb_cmp_msg(PbCmp *c, const ProtobufCMessage *a,
                      const ProtobufCMessage *b)
{
    const ProtobufCMessageDescriptor *d = a->descriptor;
    if (d != b->descriptor)
        return cmp_fail(c, "message type %s vs %s", d->name,
                        b->descriptor->name);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        size_t old = path_field(c, f->name);
        const char *ba = (const char *)a, *bb = (const char *)b;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t na, nb;
            const char *xa, *xb;
            memcpy(&na, ba + f->quantifier_offset, sizeof na);
            memcpy(&nb, bb + f->quantifier_offset, sizeof nb);
            memcpy(&xa, ba + f->offset, sizeof xa);
            memcpy(&xb, bb + f->offset, sizeof xb);
            if (na != nb)
                return cmp_fail(c, "count %zu vs %zu", na, nb);
            size_t es = elem_size(f->type);
            int scalar = f->type != PROTOBUF_C_TYPE_STRING &&
                         f->type != PROTOBUF_C_TYPE_BYTES &&
                         f->type != PROTOBUF_C_TYPE_MESSAGE;
            /* Scalars: one memcmp, element by element only to report. */
            if (scalar && (na == 0 || memcmp(xa, xb, na * es) == 0)) {
                path_pop(c, old);
                continue;
            }
            for (size_t k = 0; k < na; k++) {
                size_t o2 = path_push(c, "[%zu]", k);
                if (cmp_elem(c, f, xa + k * es, xb + k * es))
                    return 1;
                path_pop(c, o2);
            }
        } else {
            int pa = field_present(f, a), pb = field_present(f, b);
            if (pa != pb)
                return cmp_fail(c, "%s vs %s", pa ? "present" : "absent",
                                pb ? "present" : "absent");
            if (pa && cmp_elem(c, f, ba + f->offset, bb + f->offset))
                return 1;
        }
        path_pop(c, old);
    }
    return cmp_unknown(c, a, b);
}

/* Decodes both buffers as ModelProto and compares them. 0 equal, 1 with
 * c->msg set otherwise. */
static int pb_cmp_model_bytes(PbCmp *c, const uint8_t *a, size_t na,
                              const uint8_t *b, size_t nb)
{
    c->plen = 0;
    c->path[0] = '\0';
    c->msg[0] = '\0';
    Onnx__ModelProto *ma = onnx__model_proto__unpack(NULL, na, a);
    Onnx__ModelProto *mb = onnx__model_proto__unpack(NULL, nb, b);
    int r;
    if (!ma || !mb) {
        snprintf(c->msg, sizeof c->msg, "protobuf-c cannot decode the %s",
                 !ma ? "original bytes" : "saved bytes");
        r = 1;
    } else {
        r = pb_cmp_msg(c, &ma->base, &mb->base);
    }
    if (ma)
        onnx__model_proto__free_unpacked(ma, NULL);
    if (mb)
        onnx__model_proto__free_unpacked(mb, NULL);
    return r;
}

/* ==== synthetic models ================================================ */

/* When set, every message built below carries unknown fields 51..60. */
static int g_unk;

/* Unknown fields of every wire type. `salt` varies the payloads so that
 * fields moved between messages would show. */
static void put_unk(WireBuf *m, unsigned salt)
{
    if (!g_unk)
        return;
    WireBuf nested = {0};
    wire_fvarint(&nested, 1, 150 + salt);
    wire_fstr(&nested, 2, "nested");
    wire_fvarint(m, 51, 300 + salt);
    wire_fixed64(m, 52, 0x0102030405060708ull ^ salt);
    static const uint8_t blob[] = {0, 1, 2, 0xff, 0, 'x'};
    wire_fbytes(m, 53, blob, sizeof blob);
    wire_fixed32(m, 54, 0xdeadbeefu ^ salt);
    wire_fvarint(m, 55, UINT64_MAX - salt);
    wire_fbytes(m, 56, "", 0);
    wire_fixed32(m, 57, salt);
    wire_fixed64(m, 58, (uint64_t)-1 - salt);
    wire_fmsg(m, 59, &nested);
    wire_fvarint(m, 60, 0);
}

/* A few unknown fields placed first, before the known ones. */
static void put_unk_head(WireBuf *m, unsigned salt)
{
    if (!g_unk)
        return;
    wire_fvarint(m, 60, salt);
    wire_fixed32(m, 54, salt);
}

static void put_strpair(WireBuf *out, uint32_t field, const char *k,
                        const char *v)
{
    WireBuf m = {0};
    if (k)
        wire_fstr(&m, 1, k);
    if (v)
        wire_fstr(&m, 2, v);
    put_unk(&m, 1);
    wire_fmsg(out, field, &m);
}

static void put_opset(WireBuf *out, uint32_t field, const char *domain,
                      int64_t version)
{
    WireBuf m = {0};
    if (domain)
        wire_fstr(&m, 1, domain);
    if (version >= 0)
        wire_fvarint(&m, 2, (uint64_t)version);
    put_unk(&m, 2);
    wire_fmsg(out, field, &m);
}

/* TensorShapeProto: dims given as "value", "?param", "-" (neither) or
 * "value@denotation". */
static void put_shape(WireBuf *out, uint32_t field, size_t n,
                      const char *const *dims)
{
    WireBuf s = {0};
    put_unk_head(&s, 3);
    for (size_t i = 0; i < n; i++) {
        WireBuf d = {0};
        const char *spec = dims[i];
        const char *at = strchr(spec, '@');
        char body[64];
        size_t bl = at ? (size_t)(at - spec) : strlen(spec);
        if (bl >= sizeof body)
            bl = sizeof body - 1;
        memcpy(body, spec, bl);
        body[bl] = '\0';
        if (body[0] == '?')
            wire_fstr(&d, 2, body + 1);
        else if (body[0] != '-')
            wire_fvarint(&d, 1, (uint64_t)strtoll(body, NULL, 10));
        if (at)
            wire_fstr(&d, 3, at + 1);
        put_unk(&d, 4);
        wire_fmsg(&s, 1, &d);
    }
    put_unk(&s, 5);
    wire_fmsg(out, field, &s);
}

/* TypeProto variants. */
static void put_type(WireBuf *out, uint32_t field, int variant)
{
    WireBuf t = {0}, in = {0};
    switch (variant) {
    case 0: { /* tensor float [N, 3, unset, 224@denot] */
        static const char *const d[] = {"?N", "3", "-", "224@DATA_CHANNEL"};
        wire_fvarint(&in, 1, 1);
        put_shape(&in, 2, 4, d);
        put_unk(&in, 6);
        wire_fmsg(&t, 1, &in);
        break;
    }
    case 1: { /* sequence of int64 tensors of unknown rank */
        WireBuf e = {0}, et = {0};
        wire_fvarint(&et, 1, 7);
        put_unk(&et, 7);
        wire_fmsg(&e, 1, &et);
        put_unk(&e, 8);
        wire_fmsg(&in, 1, &e);
        put_unk(&in, 9);
        wire_fmsg(&t, 4, &in);
        break;
    }
    case 2: { /* map<int64, float scalar> (shape present, rank 0) */
        WireBuf v = {0}, vt = {0};
        wire_fvarint(&vt, 1, 1);
        put_shape(&vt, 2, 0, NULL);
        wire_fmsg(&v, 1, &vt);
        wire_fvarint(&in, 1, 7);
        wire_fmsg(&in, 2, &v);
        put_unk(&in, 10);
        wire_fmsg(&t, 5, &in);
        break;
    }
    case 3: { /* optional(sequence(tensor float)) */
        WireBuf s = {0}, si = {0}, e = {0}, et = {0};
        wire_fvarint(&et, 1, 1);
        wire_fmsg(&e, 1, &et);
        wire_fmsg(&si, 1, &e);
        wire_fmsg(&s, 4, &si);
        wire_fmsg(&in, 1, &s);
        put_unk(&in, 11);
        wire_fmsg(&t, 9, &in);
        break;
    }
    case 4: { /* sparse tensor float [10, 20] */
        static const char *const d[] = {"10", "20"};
        wire_fvarint(&in, 1, 1);
        put_shape(&in, 2, 2, d);
        put_unk(&in, 12);
        wire_fmsg(&t, 8, &in);
        break;
    }
    case 5: /* opaque */
        wire_fstr(&in, 1, "com.example");
        wire_fstr(&in, 2, "Blob");
        put_unk(&in, 13);
        wire_fmsg(&t, 7, &in);
        break;
    case 6: /* no member, only a denotation */
        wire_fstr(&t, 6, "IMAGE");
        break;
    case 7: /* empty tensor member (no elem_type, no shape) + denotation */
        put_unk(&in, 14);
        wire_fmsg(&t, 1, &in);
        wire_fstr(&t, 6, "TENSOR");
        break;
    case 8: /* empty opaque, empty sequence, and nothing else */
        wire_fmsg(&t, 7, &in);
        break;
    default: /* tensor float of rank 1 */
    {
        static const char *const d[] = {"4"};
        wire_fvarint(&in, 1, 1);
        put_shape(&in, 2, 1, d);
        wire_fmsg(&t, 1, &in);
        break;
    }
    }
    put_unk(&t, 15);
    wire_fmsg(out, field, &t);
}

static void put_value_info(WireBuf *out, uint32_t field, const char *name,
                           int type_variant)
{
    WireBuf v = {0};
    put_unk_head(&v, 16);
    if (name)
        wire_fstr(&v, 1, name);
    if (type_variant >= 0)
        put_type(&v, 2, type_variant);
    wire_fstr(&v, 3, "value info doc");
    put_strpair(&v, 4, "vi_key", "vi_value");
    put_unk(&v, 17);
    wire_fmsg(out, field, &v);
}

/* TensorProto variants. */
static void put_tensor(WireBuf *out, uint32_t field, const char *name,
                       int variant)
{
    WireBuf t = {0};
    put_unk_head(&t, 18);
    switch (variant) {
    case 0: { /* raw float with NUL bytes, segment, metadata */
        static const int64_t dims[] = {2, 2};
        static const uint8_t raw[16] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0,
                                        0, 0, 0, 0xc0, 1, 0, 0xc0, 0x7f};
        WireBuf seg = {0};
        for (int i = 0; i < 2; i++)
            wire_fvarint(&t, 1, (uint64_t)dims[i]);
        wire_fvarint(&t, 2, 1);
        wire_fvarint(&seg, 1, 0);
        wire_fvarint(&seg, 2, 4);
        put_unk(&seg, 19);
        wire_fmsg(&t, 3, &seg);
        wire_fbytes(&t, 9, raw, sizeof raw);
        wire_fstr(&t, 12, "tensor doc");
        put_strpair(&t, 16, "t_key", "t_value");
        break;
    }
    case 1: { /* float_data with a NaN payload, -0.0, inf */
        static const uint32_t bits[] = {0x7fc01234u, 0x80000000u, 0x7f800000u,
                                        0x3f800000u};
        wire_fvarint(&t, 1, 4);
        wire_fvarint(&t, 2, 1);
        wire_fpacked_f32(&t, 4, 4, bits);
        break;
    }
    case 2: { /* int32_data with negatives (INT8) */
        static const int64_t v[] = {-128, -1, 0, 127};
        wire_fvarint(&t, 1, 4);
        wire_fvarint(&t, 2, 3);
        wire_fpacked_i64(&t, 5, 4, v);
        break;
    }
    case 3: /* strings, one empty, one with a NUL */
        wire_fvarint(&t, 1, 3);
        wire_fvarint(&t, 2, 8);
        wire_fbytes(&t, 6, "", 0);
        wire_fbytes(&t, 6, "a\0b", 3);
        wire_fstr(&t, 6, "xyz");
        break;
    case 4: { /* int64, double and uint64 lists together, location DEFAULT */
        static const int64_t v[] = {INT64_MIN, -1, INT64_MAX};
        WireBuf m = {0};
        wire_fvarint(&t, 1, 3);
        wire_fvarint(&t, 2, 7);
        wire_fpacked_i64(&t, 7, 3, v);
        for (int i = 0; i < 3; i++) {
            uint8_t d8[8];
            double d = i == 0 ? -0.0 : i == 1 ? 1e300 : 0.1;
            uint64_t u;
            memcpy(&u, &d, 8);
            for (int k = 0; k < 8; k++)
                d8[k] = (uint8_t)(u >> (8 * k));
            wire_put(&m, d8, 8);
        }
        wire_fmsg(&t, 10, &m);
        wire_fpacked_i64(&t, 11, 3, (const int64_t[]){0, 1, -1});
        wire_fvarint(&t, 14, 0);
        break;
    }
    case 5: /* raw_data present and empty, dims [0] */
        wire_fvarint(&t, 1, 0);
        wire_fvarint(&t, 2, 1);
        wire_fbytes(&t, 9, "", 0);
        break;
    case 6: /* a data type code beyond the enum, no data */
        wire_fvarint(&t, 2, 99);
        break;
    default: /* scalar int64 */
        wire_fvarint(&t, 2, 7);
        wire_fpacked_i64(&t, 7, 1, (const int64_t[]){42});
        break;
    }
    if (name)
        wire_fstr(&t, 8, name);
    put_unk(&t, 20);
    wire_fmsg(out, field, &t);
}

static void put_sparse(WireBuf *out, uint32_t field, const char *name)
{
    WireBuf s = {0}, v = {0}, ix = {0};
    static const uint32_t vals[] = {0x3f800000u, 0x40000000u};
    wire_fvarint(&v, 1, 2);
    wire_fvarint(&v, 2, 1);
    wire_fpacked_f32(&v, 4, 2, vals);
    if (name)
        wire_fstr(&v, 8, name);
    put_unk(&v, 21);
    wire_fmsg(&s, 1, &v);
    wire_fvarint(&ix, 1, 2);
    wire_fvarint(&ix, 2, 7);
    wire_fpacked_i64(&ix, 7, 2, (const int64_t[]){3, 17});
    put_unk(&ix, 22);
    wire_fmsg(&s, 2, &ix);
    wire_fvarint(&s, 3, 4);
    wire_fvarint(&s, 3, 5);
    put_unk(&s, 23);
    wire_fmsg(out, field, &s);
}

static void put_graph(WireBuf *out, uint32_t field, int depth, const char *tag);

enum {
    ATTR_F, ATTR_I, ATTR_S, ATTR_T, ATTR_G, ATTR_SPARSE, ATTR_TP, ATTR_FLOATS,
    ATTR_INTS, ATTR_STRINGS, ATTR_TENSORS, ATTR_GRAPHS, ATTR_SPARSES,
    ATTR_TPS, ATTR_REF, ATTR_IR1, ATTR_TYPE_ONLY, ATTR_COUNT
};

/* AttributeProto of one kind; `tag` makes subgraph names unique. */
static void put_attr(WireBuf *out, uint32_t field, int kind, const char *tag)
{
    WireBuf a = {0};
    char name[64], sub[64];
    snprintf(name, sizeof name, "attr_%d", kind);
    put_unk_head(&a, 24);
    wire_fstr(&a, 1, name);
    switch (kind) {
    case ATTR_F:
        wire_ffloat(&a, 2, 0.5f);
        wire_fvarint(&a, 20, 1);
        break;
    case ATTR_I:
        wire_fvarint(&a, 3, (uint64_t)-5);
        wire_fvarint(&a, 20, 2);
        break;
    case ATTR_S:
        wire_fbytes(&a, 4, "s\0x", 3);
        wire_fvarint(&a, 20, 3);
        break;
    case ATTR_T:
        put_tensor(&a, 5, "attr_tensor", 0);
        wire_fvarint(&a, 20, 4);
        break;
    case ATTR_G:
        snprintf(sub, sizeof sub, "%s_g", tag);
        put_graph(&a, 6, 9, sub);
        wire_fvarint(&a, 20, 5);
        break;
    case ATTR_SPARSE:
        put_sparse(&a, 22, "attr_sparse");
        wire_fvarint(&a, 20, 11);
        break;
    case ATTR_TP:
        put_type(&a, 14, 3);
        wire_fvarint(&a, 20, 13);
        break;
    case ATTR_FLOATS:
        wire_ffloat(&a, 7, 1.0f);
        wire_ffloat(&a, 7, -2.5f);
        wire_fvarint(&a, 20, 6);
        break;
    case ATTR_INTS:
        wire_fpacked_i64(&a, 8, 3, (const int64_t[]){1, -2, INT64_MAX});
        wire_fvarint(&a, 20, 7);
        break;
    case ATTR_STRINGS:
        wire_fbytes(&a, 9, "", 0);
        wire_fstr(&a, 9, "two");
        wire_fvarint(&a, 20, 8);
        break;
    case ATTR_TENSORS:
        put_tensor(&a, 10, "ts0", 1);
        put_tensor(&a, 10, "ts1", 3);
        wire_fvarint(&a, 20, 9);
        break;
    case ATTR_GRAPHS:
        snprintf(sub, sizeof sub, "%s_g0", tag);
        put_graph(&a, 11, 9, sub);
        snprintf(sub, sizeof sub, "%s_g1", tag);
        put_graph(&a, 11, 9, sub);
        wire_fvarint(&a, 20, 10);
        break;
    case ATTR_SPARSES:
        put_sparse(&a, 23, "sp0");
        put_sparse(&a, 23, NULL);
        wire_fvarint(&a, 20, 12);
        break;
    case ATTR_TPS:
        put_type(&a, 15, 5);
        put_type(&a, 15, 2);
        put_type(&a, 15, 6);
        wire_fvarint(&a, 20, 14);
        break;
    case ATTR_REF:
        wire_fstr(&a, 21, "outer_alpha");
        wire_fvarint(&a, 20, 1);
        break;
    case ATTR_IR1: /* IR-1 style: several values, no type */
        wire_ffloat(&a, 2, 3.0f);
        wire_fvarint(&a, 3, 7);
        wire_fstr(&a, 4, "both");
        wire_fvarint(&a, 8, 1);
        wire_fvarint(&a, 8, 2);
        wire_ffloat(&a, 7, 9.0f);
        break;
    case ATTR_TYPE_ONLY: /* a type and no value */
        wire_fvarint(&a, 20, 4);
        break;
    }
    wire_fstr(&a, 13, "attr doc");
    put_unk(&a, 25);
    wire_fmsg(out, field, &a);
}

static void put_devcfg_node(WireBuf *out, uint32_t field)
{
    WireBuf c = {0}, spec = {0}, grp = {0}, sd = {0}, ss = {0}, ss2 = {0},
        ss3 = {0};
    wire_fstr(&c, 1, "cfg0");
    wire_fstr(&spec, 1, "Y");
    wire_fpacked_i64(&spec, 2, 2, (const int64_t[]){0, 1});
    wire_fvarint(&grp, 1, 0);
    wire_fpacked_i64(&grp, 2, 2, (const int64_t[]){0, 1});
    put_unk(&grp, 26);
    wire_fmsg(&spec, 3, &grp);
    wire_fvarint(&sd, 1, 0);
    wire_fvarint(&ss, 1, 8);
    wire_fvarint(&ss, 3, 2);
    put_unk(&ss, 27);
    wire_fmsg(&sd, 2, &ss);
    wire_fstr(&ss2, 2, "batch");
    wire_fvarint(&ss2, 3, 4);
    wire_fmsg(&sd, 2, &ss2);
    wire_fvarint(&ss3, 3, 1); /* neither dim_value nor dim_param */
    wire_fmsg(&sd, 2, &ss3);
    put_unk(&sd, 28);
    wire_fmsg(&spec, 4, &sd);
    put_unk(&spec, 29);
    wire_fmsg(&c, 2, &spec);
    wire_fvarint(&c, 3, 1);
    put_unk(&c, 30);
    wire_fmsg(out, field, &c);
}

/* NodeProto: op `op`, inputs/outputs from NULL-terminated lists. */
static void put_node(WireBuf *out, uint32_t field, const char *op,
                     const char *const *in, const char *const *outs,
                     const char *name)
{
    WireBuf n = {0};
    put_unk_head(&n, 31);
    for (; in && *in; in++)
        wire_fstr(&n, 1, *in);
    for (; outs && *outs; outs++)
        wire_fstr(&n, 2, *outs);
    if (name)
        wire_fstr(&n, 3, name);
    wire_fstr(&n, 4, op);
    wire_fstr(&n, 6, "node doc");
    put_unk(&n, 32);
    wire_fmsg(out, field, &n);
}

/* A graph: at depth 0 the main graph with every field and attribute kind;
 * deeper, a small body that reads an outer value. */
static void put_graph(WireBuf *out, uint32_t field, int depth, const char *tag)
{
    WireBuf g = {0};
    char y[80], t[80];
    put_unk_head(&g, 33);
    if (depth > 0) {
        snprintf(y, sizeof y, "%s_y", tag);
        snprintf(t, sizeof t, "%s_t", tag);
        const char *in[] = {"X", t, NULL}, *o[] = {y, NULL};
        put_tensor(&g, 5, t, 7);
        put_node(&g, 1, "Add", in, o, NULL);
        wire_fstr(&g, 2, tag);
        put_value_info(&g, 12, y, 9);
        put_unk(&g, 34);
        wire_fmsg(out, field, &g);
        return;
    }
    /* nodes */
    {
        WireBuf n = {0};
        put_unk_head(&n, 35);
        wire_fstr(&n, 1, "X");
        wire_fstr(&n, 1, "");    /* left-out optional input */
        wire_fstr(&n, 1, "W");
        wire_fstr(&n, 2, "Y");
        wire_fstr(&n, 2, "");    /* left-out optional output */
        wire_fstr(&n, 3, "n0");
        wire_fstr(&n, 4, "Everything");
        wire_fstr(&n, 7, "custom");
        wire_fstr(&n, 8, "ov1");
        for (int k = 0; k < ATTR_COUNT; k++) {
            char tg[32];
            snprintf(tg, sizeof tg, "a%d", k);
            put_attr(&n, 5, k, tg);
        }
        wire_fstr(&n, 6, "node doc");
        put_strpair(&n, 9, "node_key", "node_value");
        put_strpair(&n, 9, "", NULL);
        put_devcfg_node(&n, 10);
        put_unk(&n, 36);
        wire_fmsg(&g, 1, &n);
    }
    {
        const char *in[] = {"Y", "S", NULL}, *o[] = {"Z", NULL};
        put_node(&g, 1, "Mul", in, o, "n1");
    }
    {
        const char *in[] = {"Z", NULL}, *o[] = {"Q", NULL};
        put_node(&g, 1, "MyFn", in, o, "n2");
    }
    wire_fstr(&g, 2, "main");
    put_tensor(&g, 5, "W", 0);
    put_tensor(&g, 5, "W1", 1);
    put_tensor(&g, 5, "W2", 2);
    put_tensor(&g, 5, "W3", 3);
    put_tensor(&g, 5, "W4", 4);
    put_tensor(&g, 5, "W5", 5);
    put_tensor(&g, 5, "W6", 6);
    put_sparse(&g, 15, "S");
    wire_fstr(&g, 10, "graph doc");
    put_value_info(&g, 11, "X", 0);
    put_value_info(&g, 11, "W", 9);
    put_value_info(&g, 12, "Q", 0);
    put_value_info(&g, 12, "Z", -1);
    for (int k = 1; k <= 8; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "vi%d", k);
        put_value_info(&g, 13, nm, k);
    }
    put_value_info(&g, 13, "Y", 0);
    {
        WireBuf qa = {0};
        wire_fstr(&qa, 1, "W");
        put_strpair(&qa, 2, "SCALE_TENSOR", "W_scale");
        put_strpair(&qa, 2, "ZERO_POINT_TENSOR", "W_zp");
        put_unk(&qa, 37);
        wire_fmsg(&g, 14, &qa);
    }
    put_strpair(&g, 16, "graph_key", "graph_value");
    put_unk(&g, 38);
    wire_fmsg(out, field, &g);
}

static void put_function(WireBuf *out, uint32_t field)
{
    WireBuf f = {0};
    put_unk_head(&f, 39);
    wire_fstr(&f, 1, "MyFn");
    wire_fstr(&f, 4, "a");
    wire_fstr(&f, 5, "c");
    wire_fstr(&f, 6, "alpha");
    wire_fstr(&f, 6, "gamma");
    {
        WireBuf a = {0};
        wire_fstr(&a, 1, "beta");
        wire_fvarint(&a, 3, 3);
        wire_fvarint(&a, 20, 2);
        put_unk(&a, 40);
        wire_fmsg(&f, 11, &a);
    }
    {
        WireBuf n = {0};
        wire_fstr(&n, 1, "a");
        wire_fstr(&n, 2, "t");
        wire_fstr(&n, 4, "LeakyRelu");
        put_attr(&n, 5, ATTR_REF, "fn");
        wire_fmsg(&f, 7, &n);
        const char *in[] = {"t", "t", NULL}, *o[] = {"c", NULL};
        put_node(&f, 7, "Add", in, o, "fn_add");
    }
    wire_fstr(&f, 8, "function doc");
    put_opset(&f, 9, "", 18);
    wire_fstr(&f, 10, "custom");
    wire_fstr(&f, 13, "ov1");
    put_value_info(&f, 12, "t", 0);
    put_strpair(&f, 14, "fn_key", "fn_value");
    put_unk(&f, 41);
    wire_fmsg(out, field, &f);
}

static void put_training(WireBuf *out, uint32_t field)
{
    WireBuf tr = {0};
    put_graph(&tr, 1, 1, "train_init");
    put_graph(&tr, 2, 1, "train_algo");
    put_strpair(&tr, 3, "W", "train_init_y");
    put_strpair(&tr, 4, "W", "train_algo_y");
    put_unk(&tr, 42);
    wire_fmsg(out, field, &tr);
}

static void put_config(WireBuf *out, uint32_t field)
{
    WireBuf c = {0};
    wire_fstr(&c, 1, "cfg0");
    wire_fvarint(&c, 2, 2);
    wire_fstr(&c, 3, "gpu:0");
    wire_fstr(&c, 3, "gpu:1");
    put_unk(&c, 43);
    wire_fmsg(out, field, &c);
}

/* The model with every field of IR 1..13 (external data aside). */
static void build_full(WireBuf *m, int with_unknown)
{
    g_unk = with_unknown;
    put_unk_head(m, 44);
    wire_fvarint(m, 1, 0x103);
    put_opset(m, 8, "", 21);
    put_opset(m, 8, "custom", 1);
    put_opset(m, 8, NULL, -1);
    wire_fstr(m, 2, "synthetic");
    wire_fstr(m, 3, "1.0");
    wire_fstr(m, 4, "org.example");
    wire_fvarint(m, 5, 7);
    wire_fstr(m, 6, "model doc");
    put_graph(m, 7, 0, "main");
    put_strpair(m, 14, "model_key", "model_value");
    put_strpair(m, 14, NULL, "only value");
    put_training(m, 20);
    put_function(m, 25);
    put_config(m, 26);
    put_unk(m, 45);
    g_unk = 0;
}

/* Empty strings present versus absent, everywhere they can be. */
static void build_empty_strings(WireBuf *m)
{
    WireBuf g = {0};
    wire_fvarint(m, 1, 9);
    put_opset(m, 8, "", 17);
    put_opset(m, 8, NULL, 1);
    wire_fstr(m, 2, "");    /* producer_name present, empty */
    wire_fstr(m, 4, "");    /* domain present, empty; version absent */
    {
        WireBuf n = {0};
        wire_fstr(&n, 1, "A");
        wire_fstr(&n, 2, "B");
        wire_fstr(&n, 3, "");  /* name "" */
        wire_fstr(&n, 4, "Relu");
        wire_fstr(&n, 7, "");  /* domain "" */
        wire_fstr(&n, 6, "");
        wire_fmsg(&g, 1, &n);
    }
    {
        WireBuf n = {0}, a = {0}, t = {0};
        wire_fstr(&n, 1, "B");
        wire_fstr(&n, 2, "C");
        wire_fstr(&n, 4, "Identity"); /* no name, no domain */
        wire_fstr(&a, 1, "");
        wire_fbytes(&a, 4, "", 0);  /* s present, empty */
        wire_fbytes(&a, 9, "", 0);
        wire_fbytes(&a, 9, "", 0);
        wire_fvarint(&a, 20, 3);
        wire_fmsg(&n, 5, &a);
        wire_fstr(&a, 1, "empty_t");
        wire_fstr(&t, 8, "");       /* tensor name "" */
        wire_fbytes(&t, 9, "", 0);
        wire_fstr(&t, 12, "");
        wire_fmsg(&a, 5, &t);
        wire_fvarint(&a, 20, 4);
        wire_fmsg(&n, 5, &a);
        wire_fmsg(&a, 5, &t);       /* nameless attribute, no type */
        wire_fmsg(&n, 5, &a);
        put_strpair(&n, 9, "", "");
        put_strpair(&n, 9, NULL, NULL);
        wire_fmsg(&g, 1, &n);
    }
    wire_fstr(&g, 2, "");
    wire_fstr(&g, 10, "");
    {
        WireBuf v = {0};
        wire_fstr(&v, 1, "A");
        wire_fstr(&v, 3, "");
        wire_fmsg(&g, 11, &v);
        wire_fstr(&v, 1, "C");
        wire_fmsg(&g, 12, &v);
        wire_fmsg(&g, 13, &v); /* a value_info with no name at all */
        wire_fstr(&v, 1, "B");
        {
            WireBuf ty = {0}, in = {0};
            wire_fmsg(&ty, 1, &in);  /* tensor member present, empty */
            wire_fstr(&ty, 6, "");
            wire_fmsg(&v, 2, &ty);
        }
        wire_fmsg(&g, 13, &v);
    }
    wire_fmsg(m, 7, &g);
    put_strpair(m, 14, "", "");
}

/* Legal encodings a writer may not have used: non-minimal varints,
 * packed fields sent unpacked and the reverse, repeated fields split up,
 * an optional scalar given twice (last wins), the graph given twice
 * (merged). The decoded trees must still match. */
static void build_odd_encodings(WireBuf *m)
{
    static const uint8_t overlong_ir[] = {0x08, 0x87, 0x80, 0x80, 0x00};
    wire_fvarint(m, 1, 3);              /* replaced by the next one */
    wire_put(m, overlong_ir, sizeof overlong_ir); /* ir_version 7, 4 bytes */
    put_opset(m, 8, "", 13);
    {
        WireBuf g = {0}, t = {0};
        const char *in[] = {"X", NULL}, *o[] = {"Y", NULL};
        put_node(&g, 1, "Relu", in, o, "r0");
        wire_fstr(&g, 2, "first name");
        wire_fpacked_i64(&t, 1, 2, (const int64_t[]){2, 3}); /* dims packed */
        wire_fvarint(&t, 2, 1);
        for (int i = 0; i < 6; i++)                       /* float unpacked */
            wire_ffloat(&t, 4, (float)i);
        wire_fvarint(&t, 5, (uint64_t)-1);                 /* int32 unpacked */
        wire_fstr(&t, 8, "K");
        wire_fmsg(&g, 5, &t);
        wire_fmsg(m, 7, &g);
    }
    wire_fstr(m, 2, "odd");
    {
        WireBuf g = {0};
        const char *in[] = {"Y", "K", NULL}, *o[] = {"Z", NULL};
        put_node(&g, 1, "Add", in, o, "a0");
        wire_fstr(&g, 2, "second name");
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 12, "Z", 0);
        wire_fmsg(m, 7, &g);
    }
    put_opset(m, 8, "ai.onnx.ml", 3);  /* opset_import split by other fields */
    wire_fvarint(m, 5, (uint64_t)-3);   /* negative model_version */
    {
        /* An int32 of -2 as a 5-byte varint (writers should use 10). */
        static const uint8_t short_neg[] = {0x10, 0xfe, 0xff, 0xff, 0xff, 0x0f};
        WireBuf g = {0}, t = {0};
        wire_put(&t, short_neg, sizeof short_neg);   /* data_type -2 */
        wire_fstr(&t, 8, "neg_dtype");
        wire_fmsg(&g, 5, &t);
        wire_fmsg(m, 7, &g);                         /* a third graph part */
    }
}

/* Enum codes onnx.proto does not list: attribute type 99, data_location
 * 7, and a tensor elem_type of 1000 in a type. */
static void build_unknown_enums(WireBuf *m)
{
    WireBuf g = {0}, n = {0}, a = {0}, t = {0};
    wire_fvarint(m, 1, 8);
    put_opset(m, 8, "", 17);
    wire_fstr(&a, 1, "strange");
    wire_fvarint(&a, 3, 1);
    wire_fvarint(&a, 20, 99);
    wire_fmsg(&n, 5, &a);
    wire_fstr(&n, 1, "X");
    wire_fstr(&n, 2, "Y");
    wire_fstr(&n, 4, "Relu");
    wire_fmsg(&g, 1, &n);
    wire_fvarint(&t, 1, 1);
    wire_fvarint(&t, 2, 1);
    wire_fbytes(&t, 9, "\0\0\0\0", 4);
    wire_fvarint(&t, 14, 7);
    wire_fstr(&t, 8, "W");
    wire_fmsg(&g, 5, &t);
    {
        WireBuf v = {0}, ty = {0}, in = {0};
        wire_fvarint(&in, 1, 1000);
        wire_fmsg(&ty, 1, &in);
        wire_fstr(&v, 1, "X");
        wire_fmsg(&v, 2, &ty);
        wire_fmsg(&g, 11, &v);
    }
    wire_fmsg(m, 7, &g);
}

/* Graphs the IR's value model may find strange. The loader may refuse
 * them (with a message); if it accepts one it must keep it exactly. */
static void build_odd_graph(WireBuf *m, int which)
{
    WireBuf g = {0};
    wire_fvarint(m, 1, 8);
    put_opset(m, 8, "", 17);
    switch (which) {
    case 0: { /* two value_info for one name, one for an unused name */
        const char *in[] = {"X", NULL}, *o[] = {"Y", NULL};
        put_node(&g, 1, "Relu", in, o, NULL);
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 12, "Y", 0);
        put_value_info(&g, 13, "Y", 9);
        put_value_info(&g, 13, "Y", 0);
        put_value_info(&g, 13, "nowhere", 1);
        break;
    }
    case 1: { /* a graph output that is a graph input; an undefined input */
        const char *in[] = {"X", "undefined_name", NULL}, *o[] = {"Y", NULL};
        put_node(&g, 1, "Add", in, o, NULL);
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 12, "X", 0);
        put_value_info(&g, 12, "Y", 0);
        break;
    }
    case 2: { /* an input that is also an initializer (IR < 4 style), an
               * initializer nobody reads, a node with no outputs */
        const char *in[] = {"X", "W", NULL}, *o[] = {"Y", NULL};
        const char *in2[] = {"Y", NULL};
        put_node(&g, 1, "Add", in, o, NULL);
        put_node(&g, 1, "Print", in2, NULL, NULL);
        put_tensor(&g, 5, "W", 1);
        put_tensor(&g, 5, "unused", 7);
        put_value_info(&g, 11, "X", 9);
        put_value_info(&g, 11, "W", 9);
        put_value_info(&g, 12, "Y", 9);
        break;
    }
    case 3: { /* the same graph input listed twice */
        const char *in[] = {"X", "X", NULL}, *o[] = {"Y", NULL};
        put_node(&g, 1, "Add", in, o, NULL);
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 12, "Y", 0);
        break;
    }
    case 4: { /* a node that lists one output name twice; two nodes
               * producing the same name */
        const char *in[] = {"X", NULL}, *o[] = {"Y", "Y", NULL};
        const char *o2[] = {"Y", NULL};
        put_node(&g, 1, "Split", in, o, NULL);
        put_node(&g, 1, "Relu", in, o2, NULL);
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 12, "Y", 0);
        break;
    }
    default: { /* a subgraph that shadows an outer name, and reads "X"
                * from two levels up */
        WireBuf n = {0}, a = {0}, sub = {0};
        const char *in[] = {"X", NULL}, *o[] = {"Y", NULL};
        const char *oi[] = {"Y_sub", NULL};
        put_node(&sub, 1, "Relu", in, o, NULL); /* "Y" again, shadowing */
        put_node(&sub, 1, "Identity", (const char *[]){"Y", NULL}, oi, NULL);
        put_value_info(&sub, 12, "Y_sub", 9);
        wire_fstr(&a, 1, "then_branch");
        wire_fmsg(&a, 6, &sub);
        wire_fvarint(&a, 20, 5);
        wire_fstr(&n, 1, "C");
        wire_fstr(&n, 2, "Y");
        wire_fstr(&n, 4, "If");
        wire_fmsg(&n, 5, &a);
        wire_fmsg(&g, 1, &n);
        put_value_info(&g, 11, "C", 0);
        put_value_info(&g, 11, "X", 0);
        put_value_info(&g, 12, "Y", 0);
        break;
    }
    }
    wire_fmsg(m, 7, &g);
}

/* ==== the round trip ================================================== */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Stats {
    size_t models, equal, differ, refused;
    uint64_t bytes;
    double io_s;   /* load + save */
    double cmp_s;  /* decoding and comparing */
    int shown;     /* failures printed */
} Stats;

#define MAX_SHOWN 60

/* One failed check, printed for the first MAX_SHOWN only. */
static void report(Stats *st, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(Stats *st, const char *what, const char *fmt, ...)
{
    char msg[5000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (st->shown++ < MAX_SHOWN)
        T_CHECK(0, "%s: %s", what, msg);
    else
        t_failed++;
}

/* Load `len` bytes (from a private copy freed right after loading: the IR
 * must not borrow the input) and save them. 0 with *out set, or -1. */
static int load_save(const uint8_t *buf, size_t len, const char *dir,
                     const char *what, uint8_t **out, size_t *out_len,
                     char *why, size_t why_len)
{
    IrModel *m = NULL;
    IrError err = {{0}};
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        perror("malloc");
        abort();
    }
    if (len)
        memcpy(copy, buf, len);
    int rc = load_model_buffer(copy, len, dir, what, NULL, &m, &err);
    free(copy);
    if (rc != 0 || !m) {
        snprintf(why, why_len, "load failed (rc %d): %s", rc, err.msg);
        if (m)
            ir_model_free(m);
        return -1;
    }
    *out = NULL;
    *out_len = 0;
    rc = save_model_buffer(m, out, out_len, &err);
    ir_model_free(m);
    if (rc != 0) {
        snprintf(why, why_len, "save failed (rc %d): %s", rc, err.msg);
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* The whole check for one model. `may_refuse`: a refusal with a message is
 * acceptable (odd graphs), silent change is not. */
static void roundtrip_one(Stats *st, const uint8_t *orig, size_t len,
                          const char *dir, const char *what, int may_refuse)
{
    char why[1024];
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    PbCmp *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    st->models++;
    st->bytes += len;
    double t0 = now_s();
    int rc = load_save(orig, len, dir, what, &b1, &n1, why, sizeof why);
    st->io_s += now_s() - t0;
    if (rc != 0) {
        if (may_refuse && strstr(why, "load failed") && why[0]) {
            printf("  note: %s refused: %s\n", what, why);
            st->refused++;
            t_passed++;
        } else {
            st->differ++;
            report(st, what, "%s", why);
        }
        free(c);
        return;
    }
    t0 = now_s();
    int diff = pb_cmp_model_bytes(c, orig, len, b1, n1);
    st->cmp_s += now_s() - t0;
    if (diff) {
        st->differ++;
        report(st, what, "saved model differs: %s", c->msg);
    } else {
        st->equal++;
        t_passed++;
    }
    t0 = now_s();
    rc = load_save(b1, n1, dir, what, &b2, &n2, why, sizeof why);
    st->io_s += now_s() - t0;
    if (rc != 0) {
        report(st, what, "second round: %s", why);
    } else if (n1 != n2 || memcmp(b1, b2, n1) != 0) {
        size_t i = 0;
        while (i < n1 && i < n2 && b1[i] == b2[i])
            i++;
        int d2 = pb_cmp_model_bytes(c, b1, n1, b2, n2);
        report(st, what, "save is not stable: %zu vs %zu bytes, first "
               "difference at byte %zu%s%s", n1, n2, i, d2 ? "; " : "",
               d2 ? c->msg : "");
    } else {
        t_passed++;
    }
    free(b1);
    free(b2);
    free(c);
}

static void run_files(Stats *st)
{
    CorpusList l = {0};
    const char *roots[3];
    roots[0] = corpus_backend_root();
    roots[1] = "../shared/models";
    roots[2] = "testdata";
    if (!roots[0])
        T_SKIP("round-trip: no backend test data ($ONNX_BACKEND_DATA, "
               "../shared/testdata/onnx-backend, /usr/share/libonnx-testdata/data)");
    for (int i = 0; i < 3; i++) {
        if (!roots[i])
            continue;
        if (!corpus_is_dir(roots[i])) {
            T_SKIP("round-trip: %s not found", roots[i]);
            continue;
        }
        size_t before = l.n;
        corpus_walk(roots[i], &l);
        printf("round-trip: %zu models under %s\n", l.n - before, roots[i]);
    }
    corpus_sort(&l);
    for (size_t i = 0; i < l.n; i++) {
        uint8_t *buf = NULL;
        size_t len = 0;
        if (corpus_read_all(l.p[i], &buf, &len) != 0) {
            report(st, l.p[i], "cannot read: %s", strerror(errno));
            continue;
        }
        char *dir = strdup(l.p[i]);
        if (!dir)
            abort();
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            strcpy(dir, ".");
        roundtrip_one(st, buf, len, dir, l.p[i], 0);
        free(dir);
        free(buf);
    }
    corpus_free(&l);
}

/* Checks that the comparator itself sees differences (a judge that always
 * says "equal" would make this whole test worthless). */

/* A model of three Relu nodes and a Constant whose tensor holds `raw`
 * (n bytes): the comparator must find a raw_data difference four levels
 * down. */
static void put_const_model(WireBuf *out, const char *raw, size_t n)
{
    WireBuf g = {0}, at = {0}, t = {0}, nn = {0};
    wire_fstr(&t, 8, "k");
    wire_fbytes(&t, 9, raw, n);
    wire_fstr(&at, 1, "value");
    wire_fmsg(&at, 5, &t);
    wire_fstr(&g, 2, "g");
    for (int i = 0; i < 3; i++)
        put_node(&g, 1, "Relu", NULL, NULL, "pad");
    wire_fstr(&nn, 4, "Constant");
    wire_fmsg(&nn, 5, &at);
    wire_fmsg(&g, 1, &nn);
    wire_fmsg(out, 7, &g);
}
static void self_test_comparator(void)
{
    WireBuf a = {0}, b = {0};
    PbCmp *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    build_full(&a, 1);
    T_CHECK(pb_cmp_model_bytes(c, a.p, a.n, a.p, a.n) == 0,
            "comparator: a model differs from itself: %s", c->msg);

    /* Same model without unknown fields: must differ at the first one. */
    build_full(&b, 0);
    T_CHECK(pb_cmp_model_bytes(c, a.p, a.n, b.p, b.n) == 1 &&
                strstr(c->msg, "unknown_fields"),
            "comparator: missed dropped unknown fields (%s)", c->msg);
    free(b.p);
    memset(&b, 0, sizeof b);

    /* raw_data of different lengths deep inside the graph. */
    WireBuf x = {0}, y = {0};
    put_const_model(&x, "0123456789abcdef", 16);
    put_const_model(&y, "0123456789ab", 12);
    T_CHECK(pb_cmp_model_bytes(c, x.p, x.n, y.p, y.n) == 1 &&
                strcmp(c->msg, "graph.node[3].attribute[0].t.raw_data: "
                               "length 16 vs 12") == 0,
            "comparator: wrong report: %s", c->msg);

    /* A float's sign bit, a has_ flag, a oneof case. */
    WireBuf f1 = {0}, f2 = {0};
    {
        WireBuf gg = {0}, tt = {0};
        wire_ffloat(&tt, 4, 0.0f);
        wire_fmsg(&gg, 5, &tt);
        wire_fmsg(&f1, 7, &gg);
        wire_ffloat(&tt, 4, -0.0f);
        wire_fmsg(&gg, 5, &tt);
        wire_fmsg(&f2, 7, &gg);
    }
    T_CHECK(pb_cmp_model_bytes(c, f1.p, f1.n, f2.p, f2.n) == 1 &&
                strstr(c->msg, "graph.initializer[0].float_data"),
            "comparator: missed -0.0 (%s)", c->msg);
    free(f1.p);
    free(f2.p);
    memset(&f1, 0, sizeof f1);
    memset(&f2, 0, sizeof f2);
    wire_fvarint(&f1, 5, 0);
    T_CHECK(pb_cmp_model_bytes(c, f1.p, f1.n, f2.p, f2.n) == 1 &&
                strcmp(c->msg, "model_version: present vs absent") == 0,
            "comparator: missed has_ flag (%s)", c->msg);
    free(f1.p);
    free(f2.p);
    memset(&f1, 0, sizeof f1);
    memset(&f2, 0, sizeof f2);
    /* An empty string against an absent one. */
    wire_fstr(&f1, 2, "");
    T_CHECK(pb_cmp_model_bytes(c, f1.p, f1.n, f2.p, f2.n) == 1 &&
                strcmp(c->msg, "producer_name: present vs absent") == 0,
            "comparator: missed empty vs absent string (%s)", c->msg);
    free(f1.p);
    memset(&f1, 0, sizeof f1);
    /* Two unknown fields swapped. */
    wire_fvarint(&f1, 51, 1);
    wire_fvarint(&f1, 52, 1);
    wire_fvarint(&f2, 52, 1);
    wire_fvarint(&f2, 51, 1);
    T_CHECK(pb_cmp_model_bytes(c, f1.p, f1.n, f2.p, f2.n) == 1 &&
                strcmp(c->msg, "unknown_fields[0]: tag 51 vs 52") == 0,
            "comparator: missed reordered unknown fields (%s)", c->msg);
    free(f1.p);
    free(f2.p);
    memset(&f1, 0, sizeof f1);
    memset(&f2, 0, sizeof f2);
    /* One element more in a repeated field. */
    put_opset(&f1, 8, "", 13);
    put_opset(&f2, 8, "", 13);
    put_opset(&f2, 8, "x", 1);
    T_CHECK(pb_cmp_model_bytes(c, f1.p, f1.n, f2.p, f2.n) == 1 &&
                strcmp(c->msg, "opset_import: count 1 vs 2") == 0,
            "comparator: missed a repeated count (%s)", c->msg);
    free(f1.p);
    free(f2.p);
    memset(&f1, 0, sizeof f1);
    memset(&f2, 0, sizeof f2);
    {
        static const char *const dv[] = {"5"}, *const dp[] = {"?5"};
        WireBuf g1 = {0}, g2 = {0}, v1 = {0}, v2 = {0}, t1 = {0}, t2 = {0},
            i1 = {0}, i2 = {0};
        wire_fvarint(&i1, 1, 1);
        put_shape(&i1, 2, 1, dv);
        wire_fvarint(&i2, 1, 1);
        put_shape(&i2, 2, 1, dp);
        wire_fmsg(&t1, 1, &i1);
        wire_fmsg(&t2, 1, &i2);
        wire_fstr(&v1, 1, "x");
        wire_fstr(&v2, 1, "x");
        wire_fmsg(&v1, 2, &t1);
        wire_fmsg(&v2, 2, &t2);
        wire_fmsg(&g1, 11, &v1);
        wire_fmsg(&g2, 11, &v2);
        wire_fmsg(&f1, 7, &g1);
        wire_fmsg(&f2, 7, &g2);
    }
    T_CHECK(pb_cmp_model_bytes(c, f1.p, f1.n, f2.p, f2.n) == 1 &&
                strcmp(c->msg, "graph.input[0].type.tensor_type.shape.dim[0]"
                               ".dim_value: present vs absent") == 0,
            "comparator: missed oneof case (%s)", c->msg);
    free(f1.p);
    free(f2.p);
    free(a.p);
    free(x.p);
    free(y.p);
    free(c);
}

static int has_bytes(const uint8_t *hay, size_t n, const void *needle,
                     size_t k)
{
    for (size_t i = 0; k <= n && i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return 1;
    return 0;
}

/* `string` fields holding a NUL byte: protobuf-c decodes them into C
 * strings that end at the NUL, so the tree comparison cannot see what is
 * lost; the saved bytes are searched instead. Refusing such a model with
 * a message is fine; cutting "X\0Y" down to "X" (another value's name)
 * silently is not. */
static void check_nul_strings(Stats *st)
{
    WireBuf m = {0}, g = {0};
    const char *in[] = {"X", NULL}, *o[] = {"W", NULL};
    wire_fvarint(&m, 1, 8);
    put_opset(&m, 8, "", 17);
    wire_fbytes(&m, 2, "a\0b", 3);          /* producer_name */
    {
        WireBuf n = {0};
        wire_fbytes(&n, 1, "X\0Y", 3);      /* node input */
        wire_fstr(&n, 2, "Z");
        wire_fstr(&n, 4, "Relu");
        wire_fmsg(&g, 1, &n);
    }
    put_node(&g, 1, "Relu", in, o, "second");
    wire_fmsg(&m, 7, &g);
    char why[1024];
    uint8_t *out = NULL;
    size_t n = 0;
    st->models++;
    st->bytes += m.n;
    if (load_save(m.p, m.n, NULL, "synthetic nul-in-string", &out, &n, why,
                  sizeof why) != 0) {
        T_CHECK(strstr(why, "load failed") && why[0],
                "synthetic nul-in-string: %s", why);
        printf("  note: synthetic nul-in-string refused: %s\n", why);
        st->refused++;
    } else if (has_bytes(out, n, "a\0b", 3) && has_bytes(out, n, "X\0Y", 3)) {
        st->equal++;
        t_passed++;
    } else {
        st->differ++;
        report(st, "synthetic nul-in-string",
               "a string field with a NUL byte was cut at the NUL "
               "(producer_name \"a\\0b\" %s, node input \"X\\0Y\" %s)",
               has_bytes(out, n, "a\0b", 3) ? "kept" : "lost",
               has_bytes(out, n, "X\0Y", 3) ? "kept" : "lost");
    }
    free(out);
    free(m.p);
}

static void run_synthetic(Stats *st)
{
    WireBuf b = {0};
    /* Each model must decode with protobuf-c, or the test itself is wrong. */
#define SYN(label, build, refuse)                                          \
    do {                                                                   \
        memset(&b, 0, sizeof b);                                           \
        build;                                                             \
        Onnx__ModelProto *chk = onnx__model_proto__unpack(NULL, b.n, b.p); \
        T_CHECK(chk != NULL, "synthetic %s: not valid protobuf", label);   \
        if (chk)                                                           \
            onnx__model_proto__free_unpacked(chk, NULL);                   \
        roundtrip_one(st, b.p, b.n, NULL, "synthetic " label, refuse);     \
        free(b.p);                                                         \
    } while (0)
    SYN("full-ir13", build_full(&b, 0), 0);
    SYN("unknown-fields", build_full(&b, 1), 0);
    SYN("empty-strings", build_empty_strings(&b), 0);
    SYN("odd-encodings", build_odd_encodings(&b), 0);
    SYN("unknown enum codes", build_unknown_enums(&b), 1);
    SYN("odd-graph-0 (duplicate value_info)", build_odd_graph(&b, 0), 1);
    SYN("odd-graph-1 (output is input, undefined input)",
        build_odd_graph(&b, 1), 1);
    SYN("odd-graph-2 (input+initializer, no outputs)", build_odd_graph(&b, 2),
        1);
    SYN("odd-graph-3 (input listed twice)", build_odd_graph(&b, 3), 1);
    SYN("odd-graph-4 (output name produced twice)", build_odd_graph(&b, 4), 1);
    SYN("odd-graph-5 (shadowing subgraph)", build_odd_graph(&b, 5), 1);
#undef SYN
    check_nul_strings(st);
}

int main(void)
{
    Stats st = {0};
    double t0 = now_s();
    self_test_comparator();
    run_synthetic(&st);
    printf("round-trip: synthetic: %zu models, %zu equal, %zu differ, "
           "%zu refused\n", st.models, st.equal, st.differ, st.refused);
    run_files(&st);
    double total = now_s() - t0;
    printf("round-trip: %zu models, %zu equal, %zu differ", st.models,
           st.equal, st.differ);
    if (st.refused)
        printf(", %zu refused with a reason (allowed for odd graphs)",
               st.refused);
    printf("\n");
    if (st.shown > MAX_SHOWN)
        printf("round-trip: %d more failures not shown\n",
               st.shown - MAX_SHOWN);
    printf("round-trip: %llu bytes in %.2f s (load+save %.2f s, decode+compare "
           "%.2f s)\n", (unsigned long long)st.bytes, total, st.io_s,
           st.cmp_s);
    return t_done("test_roundtrip");
}
