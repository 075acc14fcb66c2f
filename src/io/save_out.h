/*
 * save_out.h - the output file save.c writes through (prefix so_).
 *
 * A small buffer for the message's many small pieces, and for a large
 * payload that still lives in a file the model mapped (embedded raw_data
 * borrowed by the loader, or external data) a file-to-file copy
 * (copy_file_range): the bytes go from the page cache to the new file
 * without being read into this process, so a model's weights cost neither
 * time in user space nor resident memory. Other large payloads are
 * written straight from where they are.
 */
#ifndef OC_SAVE_OUT_H
#define OC_SAVE_OUT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "ir/ir.h"

typedef struct SoFile {
    ProtobufCBuffer base;   /* protobuf-c packs into this */
    int fd;
    const IrModel *m;       /* whose mappings may be copied from, or NULL */
    uint8_t *buf;
    size_t n;
    int err;                /* errno of the first failure; 0 = none */
    uint64_t total;         /* bytes handed to so_write */
    const char *shrunk;     /* a mapped file found shorter than its
                               mapping while copied from, or NULL */
} SoFile;

void so_init(SoFile *f, int fd, const IrModel *m);
void so_write(SoFile *f, const uint8_t *data, size_t len);
/* Later bytes go at file offset `off` (flushes first). */
void so_seek(SoFile *f, uint64_t off);
/* Flushes and frees the buffer: 0, or the errno of the first failure. The
 * caller still owns (and closes) fd. */
int so_finish(SoFile *f);

#endif
