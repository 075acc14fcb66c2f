/*
 * mlpackage_int.h - what the three files of the package module
 * (mlpackage.c, mlpackage_read.c, mlpackage_manifest.c) share; not for
 * other modules.
 */
#ifndef OC_MLPACKAGE_INT_H
#define OC_MLPACKAGE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* The package layout coremltools writes (its modelpackage library and
 * models/utils.py): the manifest's items live below Data/. */
#define MLP_DATA_DIR "Data/com.apple.CoreML"
#define MLP_MODEL_ITEM "com.apple.CoreML/model.mlmodel"
#define MLP_WEIGHTS_ITEM "com.apple.CoreML/weights"
/* How a const names its blob: "@model_path" is the folder holding
 * model.mlmodel. */
#define MLP_BLOB_PREFIX "@model_path/"
#define MLP_BLOB_REF MLP_BLOB_PREFIX "weights/weight.bin"

/* MIL blob storage (MILBlob/Blob/StorageFormat.hpp): a 64-byte header
 * (count u32, version u32 = 2, reserved), then per blob a 64-byte
 * metadata record (sentinel u32, dtype code u32, size u64, data offset
 * u64, padding bits u64, reserved) and its data, each 64-byte aligned. A
 * BlobFileValue's offset is that of the metadata record. */
#define MLP_BLOB_ALIGN 64
#define MLP_BLOB_SENTINEL 0xDEADBEEFu
#define MLP_BLOB_VERSION 2

/* The blob file's dtype code of a MIL dtype as written at specification
 * version spec (0: that dtype stays immediate there), and the MIL dtype of
 * a code (0: unknown or a sub-byte type). */
uint32_t mlp_blob_code(int32_t mil_dtype, int spec);
int32_t mlp_blob_dtype(uint32_t code);
int32_t mlp_array_dtype(int code);

/* Prefixes err's message with "what: " (returns -1): each level of the
 * walk names its element, so the one line reads from the file down. */
int mlp_wrap(IrError *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

char *mlp_join(const char *dir, const char *name);
void mlp_remove_tree(const char *dir);
int mlp_write_file(const char *path, const void *buf, size_t n, IrError *err);

/* Writes dir/Manifest.json naming the model and weights items. */
int mlp_manifest_write(const char *dir, IrError *err);
/* Reads pkg/Manifest.json: the root model's path below pkg/Data (a
 * relative path that stays inside it; malloc'ed in *model). */
int mlp_manifest_read(const char *pkg, char **model, IrError *err);

/* Whether rel is a relative path of plain names ("a/b", no "..", ".",
 * empty parts or leading '/'). */
bool mlp_safe_relpath(const char *rel);

#endif
