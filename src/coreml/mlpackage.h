/*
 * mlpackage.h - Core ML ML Program packages (.mlpackage folders) to and
 * from the in-memory program of mil.h (prefix mlp_).
 *
 * A package is a folder:
 *   Manifest.json                                the items and which is the root model
 *   Data/com.apple.CoreML/model.mlmodel          the Model message (proto/coreml.proto)
 *   Data/com.apple.CoreML/weights/weight.bin     large constants, MIL blob storage
 * This module is the only one that knows protobuf-c's generated Core ML
 * types, the manifest's JSON and the blob file layout.
 */
#ifndef OC_MLPACKAGE_H
#define OC_MLPACKAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "coreml/mil.h"

/* A const whose value has at least this many elements, of a type the
 * blob file can hold at the model's target, goes to weight.bin; smaller
 * ones stay immediate values in model.mlmodel. Ten is coremltools' own
 * rule (should_use_weight_file), so a package we write splits its
 * constants the way Apple's converter would. */
#define MLP_BLOB_MIN_ELEMS 10

/* Limits on what a package read may declare. model.mlmodel holds the
 * program and only small constants (the big ones are in weight.bin), and
 * protobuf-c's decoded form costs a multiple of the bytes; 256 MiB is far
 * above any real program. */
#define MLP_MAX_MODEL_BYTES ((size_t)256 << 20)
#define MLP_MAX_MANIFEST_BYTES ((size_t)1 << 20)
#define MLP_MAX_RANK 64

typedef struct MlpOptions {
    /* Another threshold than MLP_BLOB_MIN_ELEMS (0: that one); tests use
     * it to send every eligible const to the blob file. */
    size_t blob_min_elems;
} MlpOptions;

/* Writes m as the package folder `path` (conventionally ending in
 * .mlpackage). Everything is written into a new folder beside `path` and
 * moved into place only when complete; an existing package at `path` is
 * replaced then (anything else there is refused, never deleted). On
 * failure nothing is left behind. 0, or -1 with err naming the package and
 * the element at fault. o may be NULL. */
int mlp_write(const MilModel *m, const char *path, const MlpOptions *o, IrError *err);

/* Reads the package folder `path`. Every size, count and offset from the
 * files is checked (nesting, ranks, blob bounds, the blob's dtype and byte
 * count against the declared type). On success *out owns the program (free
 * with mil_model_free), else -1 with err: one line naming the file and the
 * field at fault. */
int mlp_read(const char *path, MilModel **out, IrError *err);

/* What mlp_read_stats counts besides the program: the blobs its consts
 * were read from and their bytes. */
typedef struct MlpStats {
    size_t n_blobs;
    uint64_t blob_bytes;
} MlpStats;

/* mlp_read, also filling *st (when not NULL). */
int mlp_read_stats(const char *path, MilModel **out, MlpStats *st, IrError *err);

/* The description's multi-array element code of a MIL dtype (0: none) and
 * back. */
int mlp_array_code(int32_t mil_dtype);

/* Whether a const of t's dtype and size goes to the blob file at
 * specification version `spec` (threshold 0: MLP_BLOB_MIN_ELEMS). */
bool mlp_uses_blob(const MilTensor *t, int spec, size_t threshold);

#endif
