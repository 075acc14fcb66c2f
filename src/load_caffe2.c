/*
 * load_caffe2.c - renumbers the PyTorch/Caffe2 variant's fields before
 * protobuf-c decodes a 0x103 model (prefix lc2_).
 *
 * protobuf-c only knows standard onnx.proto: given the variant's
 * TensorProto.strides (14) it would read ONNX's data_location, given
 * NodeProto.annotations (8) ONNX's overload. So the copy handed to it
 * carries each variant field under C2_TAG_BASE + its number; the walk
 * follows the standard descriptors into every sub-message, which the
 * variant shares with IR 3.
 */
#include "load_caffe2.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "caffe2.h"
#include "load.h"
#include "onnx.pb-c.h"

/* A growable output buffer. */
typedef struct Lc2Buf {
    uint8_t *p;
    size_t n, cap;
} Lc2Buf;

static void lc2_put(Lc2Buf *b, const void *d, size_t n)
{
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n < n) {
            if (cap > SIZE_MAX / 2)
                abort(); /* larger than the input could ever make it */
            cap *= 2;
        }
        b->p = ir_grow(b->p, cap, 1);
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void lc2_put_varint(Lc2Buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[n] |= 0x80;
        n++;
    } while (v);
    lc2_put(b, t, n);
}

static bool lc2_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && *i < len; shift += 7) {
        uint8_t c = p[(*i)++];
        if (shift < 64)
            v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* One field: number, wire type, where its value starts (after the key)
 * and ends, and for wire type 2 where its payload starts. */
typedef struct Lc2Field {
    uint64_t num;
    unsigned wt;
    size_t value, body, end;
} Lc2Field;

/* Reads the field at p[*i..len); false when malformed. */
static bool lc2_next(const uint8_t *p, size_t len, size_t *i, Lc2Field *f)
{
    uint64_t key, v;
    if (!lc2_varint(p, len, i, &key))
        return false;
    f->num = key >> 3;
    f->wt = key & 7;
    f->value = *i;
    switch (f->wt) {
    case 0:
        if (!lc2_varint(p, len, i, &v))
            return false;
        break;
    case 1:
    case 5: {
        size_t w = f->wt == 1 ? 8 : 4;
        if (len - *i < w)
            return false;
        *i += w;
        break;
    }
    case 2:
        if (!lc2_varint(p, len, i, &v) || v > len - *i)
            return false;
        *i += (size_t)v;
        break;
    default:
        return false;
    }
    f->body = f->wt == 2 ? *i - (size_t)v : *i;
    f->end = *i;
    return true;
}

/* Which of the variant's messages d is, or -1. */
static int lc2_kind(const ProtobufCMessageDescriptor *d)
{
    static const struct {
        const ProtobufCMessageDescriptor *d;
        C2Msg m;
    } map[] = {
        {&onnx__model_proto__descriptor, C2_MODEL},
        {&onnx__graph_proto__descriptor, C2_GRAPH},
        {&onnx__node_proto__descriptor, C2_NODE},
        {&onnx__tensor_proto__descriptor, C2_TENSOR},
        {&onnx__tensor_proto__segment__descriptor, C2_SEGMENT},
        {&onnx__tensor_shape_proto__descriptor, C2_SHAPE},
        {&onnx__type_proto__descriptor, C2_TYPE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].d == d)
            return (int)map[i].m;
    return -1;
}

/* The walk's state: 1 malformed (leave it to the wire check), -1 a
 * private number in the input. */
typedef struct Lc2Run {
    int bad;
    uint64_t clash;
} Lc2Run;

/* Writes message d at p[0..len) to out with the variant's fields
 * renumbered. */
static void lc2_msg(Lc2Run *r, const uint8_t *p, size_t len,
                    const ProtobufCMessageDescriptor *d, int depth, Lc2Buf *out)
{
    int kind = lc2_kind(d);
    size_t i = 0;
    Lc2Field f;
    while (i < len && !r->bad) {
        size_t start = i;
        if (!lc2_next(p, len, &i, &f) || f.num == 0 || f.num > 536870911u) {
            r->bad = 1;
            return;
        }
        if (f.num >= C2_TAG_BASE && f.num < C2_TAG_BASE + C2_TAG_SPAN) {
            r->bad = -1;
            r->clash = f.num;
            return;
        }
        const ProtobufCFieldDescriptor *fd =
            protobuf_c_message_descriptor_get_field(d, (unsigned)f.num);
        if (kind >= 0 && c2_find((C2Msg)kind, (uint32_t)f.num) >= 0) {
            lc2_put_varint(out, ((uint64_t)(C2_TAG_BASE + f.num) << 3) | f.wt);
            lc2_put(out, p + f.value, f.end - f.value);
        } else if (f.wt == 2 && fd && fd->type == PROTOBUF_C_TYPE_MESSAGE &&
                   depth < LOAD_MAX_DEPTH) {
            Lc2Buf sub = {0};
            lc2_msg(r, p + f.body, f.end - f.body, fd->descriptor, depth + 1, &sub);
            lc2_put(out, p + start, f.value - start);
            lc2_put_varint(out, sub.n);
            lc2_put(out, sub.p, sub.n);
            free(sub.p);
        } else {
            lc2_put(out, p + start, f.end - start);
        }
    }
}

/* The last top-level ir_version of a ModelProto, or -1. */
static int64_t lc2_ir_version(const uint8_t *p, size_t len)
{
    int64_t ir = -1;
    size_t i = 0;
    Lc2Field f;
    while (i < len && lc2_next(p, len, &i, &f)) {
        size_t at = f.value;
        uint64_t v;
        if (f.num == 1 && f.wt == 0 && lc2_varint(p, len, &at, &v))
            ir = (int64_t)v;
    }
    return ir;
}

bool lc2_ir_variant(const uint8_t *buf, size_t len)
{
    return lc2_ir_version(buf, len) == C2_IR_VERSION;
}

int lc2_rewrite(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len,
                IrError *err)
{
    *out = NULL;
    *out_len = 0;
    if (!lc2_ir_variant(buf, len))
        return 0;
    Lc2Run r = {0};
    Lc2Buf b = {0};
    lc2_msg(&r, buf, len, &onnx__model_proto__descriptor, 1, &b);
    if (r.bad) {
        free(b.p);
        if (r.bad < 0)
            return ir_fail(err, "field number %llu is one this tool reserves for "
                           "the PyTorch/Caffe2 variant's fields",
                           (unsigned long long)r.clash);
        return 0;
    }
    if (!b.p)
        b.p = ir_alloc(1);
    *out = b.p;
    *out_len = b.n;
    return 0;
}
