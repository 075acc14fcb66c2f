/*
 * wire.h - a tiny protobuf wire encoder for tests (prefix wire_).
 *
 * Tests write their models byte by byte instead of through protobuf-c so
 * that they can also write what protobuf-c never would: unknown fields,
 * odd encodings, bad lengths and wire types, field numbers past the limit.
 * A WireBuf starts as {0}; the caller frees its p.
 *
 * Every function is static inline: each test uses only some of them, and
 * an unused plain static function would warn (-Werror).
 */
#ifndef OC_WIRE_H
#define OC_WIRE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable byte string: p[0 .. n) is the content. */
typedef struct WireBuf {
    uint8_t *p;
    size_t n, cap;
} WireBuf;

/* Wire types; the group ones are deprecated but a loader still meets them. */
enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_SGROUP = 3,
       WIRE_EGROUP = 4, WIRE_I32 = 5 };

static inline void wire_put(WireBuf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) { /* a test cannot go on without its input */
            perror("realloc");
            abort();
        }
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

static inline void wire_byte(WireBuf *b, uint8_t c)
{
    wire_put(b, &c, 1);
}

static inline void wire_varint(WireBuf *b, uint64_t v)
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
    wire_put(b, t, n);
}

/* The field number is 64 bits wide so that tests can write keys whose
 * number does not fit the 29 bits protobuf allows. */
static inline void wire_key(WireBuf *b, uint64_t field, unsigned wt)
{
    wire_varint(b, (field << 3) | wt);
}

static inline void wire_fvarint(WireBuf *b, uint32_t field, uint64_t v)
{
    wire_key(b, field, WIRE_VARINT);
    wire_varint(b, v);
}

/* Little-endian, as protobuf stores fixed-width values. */
static inline void wire_le(WireBuf *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    wire_put(b, t, (size_t)bytes);
}

static inline void wire_fixed32(WireBuf *b, uint32_t field, uint32_t v)
{
    wire_key(b, field, WIRE_I32);
    wire_le(b, v, 4);
}

static inline void wire_fixed64(WireBuf *b, uint32_t field, uint64_t v)
{
    wire_key(b, field, WIRE_I64);
    wire_le(b, v, 8);
}

static inline void wire_ffloat(WireBuf *b, uint32_t field, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    wire_fixed32(b, field, v);
}

static inline void wire_fbytes(WireBuf *b, uint32_t field, const void *d,
                               size_t n)
{
    wire_key(b, field, WIRE_LEN);
    wire_varint(b, n);
    wire_put(b, d, n);
}

static inline void wire_fstr(WireBuf *b, uint32_t field, const char *s)
{
    wire_fbytes(b, field, s, strlen(s));
}

/* Appends m as a length-delimited field and frees m's storage, so that the
 * same WireBuf can be filled again for the next sub-message. */
static inline void wire_fmsg(WireBuf *b, uint32_t field, WireBuf *m)
{
    wire_fbytes(b, field, m->p, m->n);
    free(m->p);
    memset(m, 0, sizeof *m);
}

/* Packed repeated int64 (varints). */
static inline void wire_fpacked_i64(WireBuf *b, uint32_t field, size_t n,
                                    const int64_t *v)
{
    WireBuf m = {0};
    for (size_t i = 0; i < n; i++)
        wire_varint(&m, (uint64_t)v[i]);
    wire_fmsg(b, field, &m);
}

/* Packed repeated float, given as bit patterns so NaNs stay exact. */
static inline void wire_fpacked_f32(WireBuf *b, uint32_t field, size_t n,
                                    const uint32_t *bits)
{
    WireBuf m = {0};
    for (size_t i = 0; i < n; i++)
        wire_le(&m, bits[i], 4);
    wire_fmsg(b, field, &m);
}

#endif
