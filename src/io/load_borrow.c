/*
 * load_borrow.c - leaving tensor bytes in the mapped file (prefix lb_).
 *
 * protobuf-c copies every bytes field it decodes. For a model whose weights
 * are embedded as raw_data that is a second copy of the whole file, and
 * reading the file touches every page once more. Instead, before decoding,
 * lb_strip writes a small copy of the message in which each TensorProto's
 * raw_data is replaced by a "ticket": a varint field LB_TICKET_FIELD whose
 * value indexes a table of (pointer, length) into the original mapping.
 * protobuf-c decodes the small copy; the loader finds the ticket among the
 * tensor's unknown fields and points the IR tensor at the mapped bytes.
 * The weights' pages are then only read when something reads the weights
 * (a fold, the evaluator, or the save that writes them out).
 *
 * Enclosing messages change length, so the strip walks the tree twice:
 * once to size every message (sizes kept in visit order), once to emit.
 * The input has already passed load_wire_check, so the walk can trust
 * keys, lengths and nesting.
 */
#include "io/load_borrow.h"

#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* TensorProto.raw_data. */
#define LB_RAW_FIELD 9u

/* The sizes pass's results, in the order the emit pass needs them. */
typedef struct LbWalk {
    size_t *sizes;
    size_t n_sizes, cap_sizes, next;
    LbHoles *holes;
    uint8_t *out;
    size_t at;
    bool clash;        /* the input has a ticket field of its own */
} LbWalk;

static size_t lb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t lb_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads a varint the wire check already accepted. */
static uint64_t lb_varint(const uint8_t *p, size_t *i)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

/* One field of a checked message: its key and where its body lies. */
typedef struct LbField {
    size_t start, body, end;   /* key at start, payload [body, end) */
    uint64_t num;
    unsigned wt;
} LbField;

static void lb_next(const uint8_t *p, size_t *i, LbField *f)
{
    f->start = *i;
    uint64_t key = lb_varint(p, i);
    f->num = key >> 3;
    f->wt = key & 7;
    uint64_t v = 0;
    switch (f->wt) {
    case 0:
        (void)lb_varint(p, i);
        break;
    case 1:
        *i += 8;
        break;
    case 5:
        *i += 4;
        break;
    default:
        v = lb_varint(p, i);
        break;
    }
    f->body = *i;
    if (f->wt == 2)
        *i += (size_t)v;
    f->end = *i;
}

/* Counts the raw_data fields of one TensorProto: only a tensor with
 * exactly one is stripped (with two, the last wins, and a ticket would
 * reorder them). Notes a ticket field the input brought itself. */
static size_t lb_raw_count(LbWalk *w, const uint8_t *p, size_t len)
{
    size_t n = 0, i = 0;
    LbField f;
    while (i < len) {
        lb_next(p, &i, &f);
        if (f.num == LB_RAW_FIELD && f.wt == 2)
            n++;
        if (f.num == LB_TICKET_FIELD)
            w->clash = true;
    }
    return n;
}

/* The field of message d this is, when it holds a sub-message. */
static const ProtobufCMessageDescriptor *lb_sub(const ProtobufCMessageDescriptor *d,
                                                const LbField *f)
{
    if (f->wt != 2)
        return NULL;
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(d, (unsigned)f->num);
    return fd && fd->type == PROTOBUF_C_TYPE_MESSAGE ? fd->descriptor : NULL;
}

static bool lb_is_tensor(const ProtobufCMessageDescriptor *d)
{
    return d == &onnx__tensor_proto__descriptor;
}

static size_t lb_ticket_len(size_t index)
{
    return lb_varint_len((uint64_t)LB_TICKET_FIELD << 3) + lb_varint_len(index);
}

/* Pass 1: the stripped size of message d at p[0..len). Sub-message sizes
 * are appended to w->sizes in visit order (a slot is taken before the
 * children are visited, so the emit pass finds them in the same order). */
static size_t lb_size(LbWalk *w, const uint8_t *p, size_t len,
                      const ProtobufCMessageDescriptor *d)
{
    bool strip = lb_is_tensor(d) && lb_raw_count(w, p, len) == 1;
    size_t total = 0, i = 0;
    LbField f;
    while (i < len) {
        lb_next(p, &i, &f);
        const ProtobufCMessageDescriptor *sub = lb_sub(d, &f);
        if (strip && f.num == LB_RAW_FIELD && f.wt == 2 && f.end - f.body >= LB_MIN_BYTES) {
            total += lb_ticket_len(w->holes->n++);
        } else if (sub) {
            if (w->n_sizes == w->cap_sizes) {
                w->cap_sizes = w->cap_sizes ? 2 * w->cap_sizes : 256;
                w->sizes = mem_grow(w->sizes, w->cap_sizes, sizeof *w->sizes);
            }
            size_t slot = w->n_sizes++;
            size_t n = lb_size(w, p + f.body, f.end - f.body, sub);
            w->sizes[slot] = n;
            total += (f.body - f.start) - lb_varint_len(f.end - f.body) +
                     lb_varint_len(n) + n;
        } else {
            total += f.end - f.start;
        }
    }
    return total;
}

/* The key bytes of field f (everything before its length varint). */
static size_t lb_key_len(const uint8_t *p, const LbField *f)
{
    size_t i = f->start;
    (void)lb_varint(p, &i);
    return i - f->start;
}

/* Pass 2: writes the stripped message; records each hole's bytes. */
static void lb_emit(LbWalk *w, const uint8_t *p, size_t len,
                    const ProtobufCMessageDescriptor *d)
{
    bool strip = lb_is_tensor(d) && lb_raw_count(w, p, len) == 1;
    size_t i = 0;
    LbField f;
    while (i < len) {
        lb_next(p, &i, &f);
        const ProtobufCMessageDescriptor *sub = lb_sub(d, &f);
        if (strip && f.num == LB_RAW_FIELD && f.wt == 2 && f.end - f.body >= LB_MIN_BYTES) {
            size_t k = w->holes->n++;
            w->holes->h[k] = (IrBytes){f.end - f.body, (uint8_t *)(p + f.body)};
            w->at += lb_put_varint(w->out + w->at, (uint64_t)LB_TICKET_FIELD << 3);
            w->at += lb_put_varint(w->out + w->at, k);
        } else if (sub) {
            size_t kl = lb_key_len(p, &f);
            memcpy(w->out + w->at, p + f.start, kl);
            w->at += kl;
            w->at += lb_put_varint(w->out + w->at, w->sizes[w->next++]);
            lb_emit(w, p + f.body, f.end - f.body, sub);
        } else {
            memcpy(w->out + w->at, p + f.start, f.end - f.start);
            w->at += f.end - f.start;
        }
    }
}

uint8_t *lb_strip(const uint8_t *buf, size_t len, LbHoles *holes,
                  size_t *out_len)
{
    const ProtobufCMessageDescriptor *d = &onnx__model_proto__descriptor;
    *holes = (LbHoles){0};
    LbWalk w = {.holes = holes};
    size_t n = lb_size(&w, buf, len, d);
    if (w.clash || !holes->n) {
        free(w.sizes);
        *holes = (LbHoles){0};
        return NULL;
    }
    holes->h = mem_array(holes->n, sizeof *holes->h);
    holes->n = 0;
    w.out = mem_alloc(n ? n : 1);
    lb_emit(&w, buf, len, d);
    free(w.sizes);
    *out_len = w.at;
    return w.out;
}

bool lb_take(const LbHoles *holes, bool *used, const ProtobufCMessageUnknownField *f,
             IrBytes *out)
{
    if (!holes || f->tag != LB_TICKET_FIELD || f->wire_type != PROTOBUF_C_WIRE_TYPE_VARINT)
        return false;
    uint64_t k = 0;
    for (size_t i = 0; i < f->len && i < 10; i++)
        k |= (uint64_t)(f->data[i] & 0x7f) << (7 * i < 63 ? 7 * i : 63);
    if (k >= holes->n || used[k])
        return false;
    used[k] = true;
    *out = holes->h[k];
    return true;
}
