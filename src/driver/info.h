/*
 * info.h - the summary `onnx-convert info` prints (prefix info_).
 */
#ifndef OC_INFO_H
#define OC_INFO_H

#include <stdio.h>

#include "ir/ir.h"
#include "base/json.h"

/* Prints a human-readable summary of m to f. */
void info_print_text(FILE *f, const IrModel *m, const char *path);
/* Prints the same facts as one JSON object (UTF-8, RFC 8259) to f. */
void info_print_json(FILE *f, const IrModel *m, const char *path);
/* The same object written to j (no newline after it). */
void info_json(Js *j, const IrModel *m, const char *path);
/* A name for known ir_version values that are not plain IR numbers, such as
 * PyTorch/Caffe2's 0x103, or NULL. */
const char *info_ir_variant(int64_t ir_version);

#endif
