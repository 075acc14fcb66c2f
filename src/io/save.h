/*
 * save.h - writing the IR back to .onnx (prefix save_).
 *
 * The writer builds protobuf-c message structs that point into the IR (no
 * copy of tensor data) and packs them straight into the output stream.
 * Files are written to a temporary name beside the target and renamed, so a
 * failure never leaves a half-written model.
 */
#ifndef OC_SAVE_H
#define OC_SAVE_H

#include <stdio.h>

#include "ir/ir.h"

/* The largest ModelProto written: protobuf's 2 GiB limit on one message.
 * A bigger model is refused with a hint to use external data. */
#define SAVE_MAX_MESSAGE 2147483647u

typedef struct SaveOptions {
    /* When set, every tensor whose payload is at least external_threshold
     * bytes is written to this one side file (a plain file name, created
     * beside the model) and referenced from the model. When NULL, tensors
     * keep the location, offset and length they were loaded with, and
     * their side files are written again beside the output. */
    const char *external_file;
    size_t external_threshold;
} SaveOptions;

/* Writes m to `path` (and its side files). 0 or -1 with err set. */
int save_model_file(const IrModel *m, const char *path,
                    const SaveOptions *opt, IrError *err);

/* Writes only the ModelProto bytes of m to f; external tensors are written
 * as references, their bytes are not. 0 or -1 with err set. */
int save_model_stream(const IrModel *m, FILE *f, IrError *err);

/* Serializes m into a malloc'ed buffer (for tests and hashing). */
int save_model_buffer(const IrModel *m, uint8_t **buf, size_t *len,
                      IrError *err);

/* Writes one TensorProto to `path` (run's output_K.pb). */
int save_tensor_file(const IrTensor *t, const char *path, IrError *err);

/* Writes len bytes to `path` the way every file is written: a temporary
 * file beside it (random name, O_EXCL|O_NOFOLLOW) renamed over it. */
int save_bytes_file(const uint8_t *data, size_t len, const char *path,
                    IrError *err);

/* Every output path: an existing target that is not a regular file (a
 * FIFO, a device, a socket, a folder) is refused; a symbolic link is
 * followed and the file it names replaced in its own folder; a replaced
 * file keeps its mode (and owner, when permitted). Side files are never
 * overwritten: when a file of that name exists, the new model names a new
 * file, the model is renamed last, and after an in-place rewrite the old
 * side files are removed; a crash at any point leaves the old pair valid.
 *
 * Installs the handlers that remove live temporary files on SIGINT,
 * SIGTERM and SIGHUP, and turn a SIGBUS inside a mapped input (a file
 * that shrank while read) into the line "PROG: FILE: file changed size
 * while being read" and exit 1. The library installs nothing unless
 * asked; the CLI calls this first. */
void save_cleanup_on_signals(const char *prog);

/* Test-only: save_model_file _exit(99)s at the named point
 * ("after-side-files", "before-model-rename", "after-model-rename");
 * NULL turns it off. */
void save_test_die_at(const char *point);

#endif
