/*
 * caffe2.h - the PyTorch/Caffe2 variant of IR 3 (prefix c2_).
 *
 * Some PyTorch/Caffe2 builds wrote models with the seed onnx.proto of
 * package torch (caffe2/proto/torch.proto in pytorch, autumn 2018) and
 * ir_version 0x103, "IR 3 plus their extensions". That proto adds fields
 * to ONNX's messages and gives a few ONNX field numbers another meaning.
 *
 * The loader renumbers every field of the variant (reused or added) to a
 * private number, C2_TAG_BASE + its own, before protobuf-c decodes the
 * model, so a reused number is never read with ONNX's meaning; the fields
 * then ride in the `unk` list of the IR element they belong to, where
 * this module finds them ("variant data"). save writes them back under
 * their own numbers, so a plain round trip keeps the variant.
 * c2_standardize turns a variant model into a standard IR 3 one.
 */
#ifndef OC_CAFFE2_H
#define OC_CAFFE2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* The ir_version of the variant. */
#define C2_IR_VERSION 0x103
/* The variant's element type SPECIAL ("the real type is elsewhere"). */
#define C2_DTYPE_SPECIAL 51
/* Private field numbers: C2_TAG_BASE + the variant's number (all < 64),
 * below load_borrow's ticket (the largest number protobuf allows). */
#define C2_TAG_BASE 536870400u
#define C2_TAG_SPAN 64u

/* The messages the variant changes. */
typedef enum C2Msg {
    C2_MODEL, C2_GRAPH, C2_NODE, C2_TENSOR, C2_SEGMENT, C2_SHAPE, C2_TYPE,
    C2_SEQUENCE,  /* TypeProto.Sequence */
    C2_N_MSG
} C2Msg;

/* What conversion does with a field. */
typedef enum C2Fate {
    C2_DROP,      /* no standard equivalent: dropped (or kept) and reported */
    C2_STRIDES,   /* dropped when row-major (what ONNX assumes), else refused */
    C2_ALIAS,     /* mapped: the tensor takes the named initializer's data */
    C2_EXTFILE    /* refused: a file this tool does not read */
} C2Fate;

/* One field of the variant that standard onnx.proto (IR 3) lacks or reads
 * differently. */
typedef struct C2Field {
    C2Msg msg;
    uint32_t num;
    const char *name;     /* "TensorProto.strides" */
    const char *type;     /* its proto type in the variant */
    const char *onnx;     /* what ONNX uses the number for; NULL = free */
    C2Fate fate;
} C2Field;

/* The table (c2_fields()[0 .. c2_n_fields())). */
const C2Field *c2_fields(void);
size_t c2_n_fields(void);
/* The index of (msg, num) in the table, or -1. */
int c2_find(C2Msg msg, uint32_t num);
/* True for the variant's ir_version. */
bool c2_is_variant(const IrModel *m);
/* The field number to write for a kept unknown field's tag: a private
 * number goes back to the variant's own. */
uint32_t c2_wire_num(uint32_t tag);

/* How many times each table field occurs in m (counts[i] for c2_fields()[i];
 * counts has c2_n_fields() entries). Returns the total. */
size_t c2_count(const IrModel *m, size_t *counts);

/* Called by the loader on a variant model: a tensor without data whose
 * TensorProto.alias names an initializer takes a copy of its data (what
 * the alias means), so that check and the evaluator see it. An alias
 * naming nothing is left for check and conversion to report. */
void c2_adopt(IrModel *m);

/* Makes a variant model a standard one in place: maps what has a standard
 * equivalent, removes the rest, counting removals in dropped[] (one per
 * table field) or, with keep, keeps fields whose number ONNX leaves free
 * as unknown fields under their own number. Sets ir_version 3.
 * Returns 0, or -1 with err naming the tensor or value (strides that are
 * not row-major, external data file, alias to nothing, element type
 * SPECIAL); m may then be partly standardized. */
int c2_standardize(IrModel *m, bool keep, size_t *dropped, IrError *err);

#endif
