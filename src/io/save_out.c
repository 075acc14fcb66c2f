/*
 * save_out.c - buffered output with file-to-file copies of mapped bytes
 * (prefix so_; see save_out.h).
 */
#define _GNU_SOURCE /* copy_file_range */
#include "io/save_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Pieces at least this big bypass the buffer. */
#define SO_DIRECT (256u * 1024)
#define SO_BUF (1024u * 1024)
/* Written from memory in steps of this much, so that mapped pages can be
 * released behind the write. */
#define SO_STEP (16u * 1024 * 1024)

static void so_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    so_write((SoFile *)b, data, len);
}

void so_init(SoFile *f, int fd, const IrModel *m)
{
    *f = (SoFile){{so_append}, fd, m, NULL, 0, 0, 0, NULL};
}

/* write() until done; records the first error. */
static void so_raw(SoFile *f, const uint8_t *p, size_t len)
{
    while (len && !f->err) {
        ssize_t w = write(f->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            f->err = w < 0 ? errno : EIO;
            return;
        }
        p += w;
        len -= (size_t)w;
    }
}

static void so_flush(SoFile *f)
{
    so_raw(f, f->buf, f->n);
    f->n = 0;
}

/* The model's mapping that holds [p, p+len), or NULL. */
static const IrMapping *so_mapping(const SoFile *f, const uint8_t *p, size_t len)
{
    for (size_t i = 0; f->m && i < f->m->n_maps; i++) {
        const IrMapping *mp = &f->m->maps[i];
        const uint8_t *b = mp->base;
        if (b && p >= b && (size_t)(p - b) <= mp->len && len <= mp->len - (size_t)(p - b))
            return mp;
    }
    return NULL;
}

/* Copies file to file; false (nothing written) when the kernel cannot do
 * it for these two files, so that the caller writes from memory. */
static bool so_copy(SoFile *f, const IrMapping *mp, const uint8_t *p, size_t len)
{
    if (mp->fd < 0)
        return false;
    loff_t in = (loff_t)(p - (const uint8_t *)mp->base);
    bool first = true;
    while (len && !f->err) {
        ssize_t w = copy_file_range(mp->fd, &in, f->fd, NULL, len, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && first && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                               errno == EOPNOTSUPP || errno == EBADF))
            return false;
        if (w == 0) {
            /* the end of the input came early: it was truncated */
            f->err = EIO;
            f->shrunk = mp->path;
            break;
        }
        if (w < 0) {
            f->err = errno;
            break;
        }
        first = false;
        len -= (size_t)w;
    }
    return true;
}

/* Writes from memory in steps; pages of a mapping are released once
 * written (they are clean file pages: reading them again brings them
 * back), so a model's weights never all sit in memory at once. */
static void so_from_memory(SoFile *f, const IrMapping *mp, const uint8_t *p, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t page = pg > 0 ? (uintptr_t)pg : 4096;
    while (len && !f->err) {
        size_t step = len < SO_STEP ? len : SO_STEP;
        so_raw(f, p, step);
        if (mp) {
            uintptr_t lo = ((uintptr_t)p + page - 1) / page * page;
            uintptr_t hi = ((uintptr_t)p + step) / page * page;
            if (hi > lo)
                madvise((void *)lo, hi - lo, MADV_DONTNEED);
        }
        p += step;
        len -= step;
    }
}

void so_write(SoFile *f, const uint8_t *data, size_t len)
{
    f->total += len;
    if (f->err || !len)
        return;
    if (len >= SO_DIRECT) {
        so_flush(f);
        const IrMapping *mp = so_mapping(f, data, len);
        if (!mp || !so_copy(f, mp, data, len))
            so_from_memory(f, mp, data, len);
        return;
    }
    if (!f->buf)
        f->buf = mem_alloc(SO_BUF);
    if (SO_BUF - f->n < len)
        so_flush(f);
    memcpy(f->buf + f->n, data, len);
    f->n += len;
}

void so_seek(SoFile *f, uint64_t off)
{
    so_flush(f);
    if (!f->err && lseek(f->fd, (off_t)off, SEEK_SET) < 0)
        f->err = errno;
}

int so_finish(SoFile *f)
{
    so_flush(f);
    free(f->buf);
    f->buf = NULL;
    return f->err;
}
