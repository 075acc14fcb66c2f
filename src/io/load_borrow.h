/*
 * load_borrow.h - tensor bytes borrowed from the mapped model file instead
 * of copied by protobuf-c (prefix lb_; used by load.c only).
 */
#ifndef OC_LOAD_BORROW_H
#define OC_LOAD_BORROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "ir/ir.h"

/* The field number that stands in for a stripped raw_data: the largest
 * protobuf allows, so no ONNX field will ever take it. A file that uses it
 * itself is decoded the ordinary way. */
#define LB_TICKET_FIELD 536870911u
/* raw_data shorter than this is cheaper to copy than to ticket. */
#define LB_MIN_BYTES 256u

/* The raw_data payloads left in the file, by ticket number. */
typedef struct LbHoles {
    size_t n;
    IrBytes *h;        /* pointers into the caller's buffer */
} LbHoles;

/* A malloc'ed copy of the checked ModelProto buf[0..len) with every
 * TensorProto raw_data of at least LB_MIN_BYTES replaced by a ticket, its
 * length in *out_len and the payloads in *holes (free holes->h). NULL when
 * there is nothing to strip or the input has a ticket field of its own. */
uint8_t *lb_strip(const uint8_t *buf, size_t len, LbHoles *holes,
                  size_t *out_len);

/* If f is a ticket of `holes` not yet taken, marks it in used[] (one flag
 * per hole), sets *out to the payload and returns true. */
bool lb_take(const LbHoles *holes, bool *used,
             const ProtobufCMessageUnknownField *f, IrBytes *out);

#endif
