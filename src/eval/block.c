/*
 * block.c - the evaluator's big memory blocks, kept for the next node.
 *
 * Why: a profile of light_vgg19 (perf, one thread) put 56% of a run in
 * page faults and the kernel zeroing fresh pages, and tinybert 45% in
 * faults and calloc's memset: every node's output and scratch was a new
 * block, which glibc takes from mmap (or the top of the heap) and gives
 * back at free, so the next node faults the same memory in again. A
 * freed block of at least EV_BLOCK_MIN bytes goes to a small per-thread
 * cache instead, and the next request of about its size takes it back.
 *
 * The cache outlives a run: emptying it at the end of each run measured
 * 31 ms a run of squeezenet1_1 against 10 ms when the next run finds
 * its blocks (the first touch of a page costs more than its use). It
 * holds at most EV_BLOCK_SLOTS blocks and EV_BLOCK_CAP bytes; when
 * malloc fails the cache is emptied and the allocation tried once more,
 * so memory held here never makes a run fail.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/mem.h"
#include "eval/eval.h"

/* Under AddressSanitizer nothing is kept: a block freed and used again
 * must stay visible to it as freed. */
#if defined(__SANITIZE_ADDRESS__)
#define EV_BLOCK_KEEP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EV_BLOCK_KEEP 0
#endif
#endif
#ifndef EV_BLOCK_KEEP
#define EV_BLOCK_KEEP 1
#endif

enum {
    EV_BLOCK_MIN = 64 * 1024,   /* below: malloc's own bins do well */
    EV_BLOCK_SLOTS = 256        /* 64 left light_densenet121, whose concats
                                   grow by a size class at every layer,
                                   90 fresh blocks a run */
};
#define EV_BLOCK_CAP (1ull << 30)
#define EV_HUGE ((size_t)2 << 20)

typedef struct {
    void *p[EV_BLOCK_SLOTS];
    size_t size[EV_BLOCK_SLOTS];
    size_t n;
    size_t total;
} EvBlockCache;

static _Thread_local EvBlockCache ev_blocks;

/* Requests are rounded up to a size class, a quarter power of two apart
 * (at most 19% more), so that a block freed by one node serves the next
 * node's request of about its size. */
static size_t ev_block_round(size_t bytes)
{
    if (bytes < EV_BLOCK_MIN)
        return bytes ? bytes : 1;
    size_t p = EV_BLOCK_MIN;
    while (p <= bytes / 2)
        p *= 2;
    for (size_t q = 4; q <= 8; q++) {
        size_t cls = p / 4 * q;
        if (cls >= bytes)
            return cls;
    }
    return bytes;
}

/* The cached block that fits best: at least `bytes`, at most 4 times it
 * (a bigger one would hold memory the budget does not see). */
static void *ev_block_take(size_t bytes)
{
    EvBlockCache *c = &ev_blocks;
    size_t best = c->n;
    for (size_t i = 0; i < c->n; i++)
        if (c->size[i] >= bytes && c->size[i] / 4 <= bytes &&
            (best == c->n || c->size[i] < c->size[best]))
            best = i;
    if (best == c->n)
        return NULL;
    void *p = c->p[best];
    c->total -= c->size[best];
    c->n--;
    c->p[best] = c->p[c->n];
    c->size[best] = c->size[c->n];
    return p;
}

/* A new block. One of EV_HUGE bytes or more is aligned to that and asks
 * for huge pages: on this project's machines (a virtual machine) a page
 * fault costs about 15 us of wall time, and a 2 MB page takes one fault
 * where 4 KB pages take 512. */
static void *ev_block_fresh(size_t size, bool zero)
{
    if (size < EV_HUGE)
        return zero ? calloc(1, size) : malloc(size);
    void *p = NULL;
    size_t whole = (size + EV_HUGE - 1) / EV_HUGE * EV_HUGE;
    if (whole < size || posix_memalign(&p, EV_HUGE, whole))
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, whole, MADV_HUGEPAGE);   /* advice only: failure is harmless */
#endif
    if (zero)
        memset(p, 0, size);
    return p;
}

void *ev_block_get(size_t bytes, bool zero)
{
    size_t size = ev_block_round(bytes);
    void *p = size >= EV_BLOCK_MIN ? ev_block_take(size) : NULL;
    if (p) {
        if (zero)
            memset(p, 0, bytes);
        return p;
    }
    /* A cached block's size is its request rounded; a fresh one is
     * allocated at that size so that ev_block_put's size is the truth. */
    p = ev_block_fresh(size, zero);
    if (!p) {
        ev_block_trim();
        p = ev_block_fresh(size, zero);
    }
    if (!p)
        mem_oom();
    return p;
}

void ev_block_put(void *p, size_t bytes)
{
    EvBlockCache *c = &ev_blocks;
    size_t size = ev_block_round(bytes);
    if (!p)
        return;
    if (!EV_BLOCK_KEEP || size < EV_BLOCK_MIN || c->n == EV_BLOCK_SLOTS ||
        c->total + size > EV_BLOCK_CAP) {
        free(p);
        return;
    }
    c->p[c->n] = p;
    c->size[c->n] = size;
    c->n++;
    c->total += size;
}

void ev_block_trim(void)
{
    EvBlockCache *c = &ev_blocks;
    for (size_t i = 0; i < c->n; i++)
        free(c->p[i]);
    c->n = 0;
    c->total = 0;
}
