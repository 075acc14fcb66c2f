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
#include "io/load_caffe2.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ir/caffe2.h"
#include "onnx.pb-c.h"

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
        {&onnx__type_proto__sequence__descriptor, C2_SEQUENCE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].d == d)
            return (int)map[i].m;
    return -1;
}

/* The walk's state. Two passes over the input, as lb_strip does, so that
 * a deep nest costs one output buffer and not a copy per level: the size
 * pass checks the wire and records every rewritten sub-message's length in
 * visit order; the emit pass writes into the buffer of the final size. */
typedef struct Lc2Run {
    int bad;          /* 1 malformed (left to the wire check), -1 a clash */
    uint64_t clash;
    size_t *sizes;    /* sub-message lengths, visit order */
    size_t n_sizes, cap_sizes, next;
    uint8_t *out;     /* emit pass only */
    size_t at;
    int max_depth;    /* deeper messages are copied, not descended */
} Lc2Run;

static size_t lc2_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void lc2_emit_varint(Lc2Run *r, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        r->out[r->at++] = c | (v ? 0x80 : 0);
    } while (v);
}

static void lc2_emit(Lc2Run *r, const uint8_t *p, size_t n)
{
    memcpy(r->out + r->at, p, n);
    r->at += n;
}

/* What to do with one field of message d: 1 renumber, 2 descend, 0 copy. */
static int lc2_action(const Lc2Run *r, const ProtobufCMessageDescriptor *d, int kind,
                      int depth, const Lc2Field *f, const ProtobufCMessageDescriptor **sub)
{
    if (kind >= 0 && c2_find((C2Msg)kind, (uint32_t)f->num) >= 0)
        return 1;
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(d, (unsigned)f->num);
    if (f->wt == 2 && fd && fd->type == PROTOBUF_C_TYPE_MESSAGE && depth < r->max_depth) {
        *sub = fd->descriptor;
        return 2;
    }
    return 0;
}

/* One pass over message d at p[0..len): with r->out NULL, returns its
 * renumbered size (and records sub-message sizes); else writes it. */
static size_t lc2_msg(Lc2Run *r, const uint8_t *p, size_t len,
                      const ProtobufCMessageDescriptor *d, int depth)
{
    int kind = lc2_kind(d);
    size_t i = 0, total = 0;
    Lc2Field f;
    while (i < len && !r->bad) {
        size_t start = i;
        if (!lc2_next(p, len, &i, &f) || f.num == 0 || f.num > 536870911u) {
            r->bad = 1;
            return 0;
        }
        if (f.num >= C2_TAG_BASE && f.num < C2_TAG_BASE + C2_TAG_SPAN) {
            r->bad = -1;
            r->clash = f.num;
            return 0;
        }
        const ProtobufCMessageDescriptor *sub = NULL;
        int act = lc2_action(r, d, kind, depth, &f, &sub);
        uint64_t key = ((uint64_t)(C2_TAG_BASE + f.num) << 3) | f.wt;
        if (act == 1 && r->out) {
            lc2_emit_varint(r, key);
            lc2_emit(r, p + f.value, f.end - f.value);
        } else if (act == 1) {
            total += lc2_varint_len(key) + (f.end - f.value);
        } else if (act == 2 && r->out) {
            lc2_emit(r, p + start, f.value - start);
            lc2_emit_varint(r, r->sizes[r->next++]);
            (void)lc2_msg(r, p + f.body, f.end - f.body, sub, depth + 1);
        } else if (act == 2) {
            if (r->n_sizes == r->cap_sizes) {
                r->cap_sizes = r->cap_sizes ? 2 * r->cap_sizes : 256;
                r->sizes = mem_grow(r->sizes, r->cap_sizes, sizeof *r->sizes);
            }
            size_t slot = r->n_sizes++;
            size_t n = lc2_msg(r, p + f.body, f.end - f.body, sub, depth + 1);
            r->sizes[slot] = n;
            total += (f.value - start) + lc2_varint_len(n) + n;
        } else if (r->out) {
            lc2_emit(r, p + start, f.end - start);
        } else {
            total += f.end - start;
        }
    }
    return total;
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

int lc2_rewrite(const uint8_t *buf, size_t len, int max_depth, uint8_t **out,
                size_t *out_len, IrError *err)
{
    *out = NULL;
    *out_len = 0;
    /* A renumbered key grows by at most 4 bytes and a length by 9, on
     * fields of 2 bytes or more: the copy is under 8 times the input, so
     * no size below overflows. */
    if (!lc2_ir_variant(buf, len) || len > SIZE_MAX / 8)
        return 0;
    Lc2Run r = {0};
    r.max_depth = max_depth;
    const ProtobufCMessageDescriptor *d = &onnx__model_proto__descriptor;
    size_t n = lc2_msg(&r, buf, len, d, 1);
    if (r.bad) {
        free(r.sizes);
        if (r.bad < 0)
            return ir_fail(err, "field number %llu is one this tool reserves for "
                           "the PyTorch/Caffe2 variant's fields",
                           (unsigned long long)r.clash);
        return 0;
    }
    r.out = mem_alloc(n ? n : 1);
    (void)lc2_msg(&r, buf, len, d, 1);
    free(r.sizes);
    *out = r.out;
    *out_len = r.at;
    return 0;
}
