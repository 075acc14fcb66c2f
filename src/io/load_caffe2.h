/*
 * load_caffe2.h - reading the PyTorch/Caffe2 variant (ir_version 0x103)
 * with its own field meanings (prefix lc2_; used by load.c only).
 */
#ifndef OC_LOAD_CAFFE2_H
#define OC_LOAD_CAFFE2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* True when buf[0..len) is a ModelProto whose ir_version is 0x103. */
bool lc2_ir_variant(const uint8_t *buf, size_t len);

/* When buf[0..len) is a ModelProto with ir_version 0x103, sets *out to a
 * malloc'ed copy (length *out_len) in which every field of the variant's
 * table (caffe2.h) carries its private number, so that protobuf-c keeps it
 * as an unknown field of its message instead of reading an ONNX field of
 * the same number; messages nested deeper than max_depth (the loader's
 * LOAD_MAX_DEPTH) are copied as they are. Otherwise *out is NULL. Malformed input is left to the
 * wire check (*out NULL). Returns -1 with err set when the input uses a
 * private number itself. */
int lc2_rewrite(const uint8_t *buf, size_t len, int max_depth, uint8_t **out,
                size_t *out_len, IrError *err);

#endif
