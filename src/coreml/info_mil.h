/*
 * info_mil.h - what `onnx-convert info` prints for a Core ML package
 * (prefix info_mil_).
 */
#ifndef OC_INFO_MIL_H
#define OC_INFO_MIL_H

#include <stdio.h>

#include "coreml/mil.h"
#include "coreml/mlpackage.h"

/* Prints a summary of a Core ML package's program : target,
 * functions with opset and op counts, inputs, outputs, weights (st: what
 * mlp_read_stats counted, or NULL), metadata. */
void info_mil_print_text(FILE *f, const MilModel *m, const MlpStats *st, const char *path);
/* The same as one JSON object (docs/json.md: info of a Core ML package). */
void info_mil_print_json(FILE *f, const MilModel *m, const MlpStats *st, const char *path);
#endif
