/*
 * guard.c - lists of live temporary files and mappings, and the signal
 * handlers that use them (prefix guard_; see guard.h).
 *
 * A handler may run between any two instructions of the code that edits a
 * list (on this thread or another), so a list is only ever replaced
 * whole: a bigger copy is built and published with one pointer store; the
 * old one is kept (a handler may still be reading it; the lists double,
 * so what is kept is never more than what is in use). An entry is filled
 * before the count that exposes it grows, and cleared before its string
 * is freed. Edits hold a mutex (threads may load and save different
 * models at once); the handlers take no lock, only read, and call only
 * async-signal-safe functions (unlink, write, sigaction, raise, _exit).
 */
#define _GNU_SOURCE
#include "base/guard.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/mem.h"

typedef struct GuardMap {
    const char *base;
    size_t len;
    char *path;
} GuardMap;

typedef struct GuardList {
    size_t n, cap;
    char **tmp;
    GuardMap *map;
} GuardList;

static GuardList guard_tmps, guard_maps;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
/* Replaced arrays, kept for a handler that may still read one. */
static void *guard_retired[64];
static size_t guard_n_retired;
static const char *guard_prog = "onnx-convert";

/* A free slot of l (growing it), as an index. */
static size_t guard_slot(GuardList *l, bool maps)
{
    for (size_t i = 0; i < l->n; i++)
        if (maps ? !l->map[i].base : !l->tmp[i])
            return i;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        size_t size = maps ? sizeof(GuardMap) : sizeof(char *);
        void *p = mem_array(cap, size);
        if (l->n)
            memcpy(p, maps ? (void *)l->map : (void *)l->tmp, l->n * size);
        void *old = maps ? (void *)l->map : (void *)l->tmp;
        atomic_thread_fence(memory_order_seq_cst);
        if (maps)
            l->map = p;
        else
            l->tmp = p;
        atomic_thread_fence(memory_order_seq_cst);
        l->cap = cap;
        if (old && guard_n_retired < 64)
            guard_retired[guard_n_retired++] = old;
    }
    return l->n;
}

/* Publishes slot i once its entry is complete. */
static void guard_publish(GuardList *l, size_t i)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (i == l->n)
        l->n++;
}

void guard_keep(const char *path)
{
    char *s = mem_strdup(path);
    pthread_mutex_lock(&guard_lock);
    size_t i = guard_slot(&guard_tmps, false);
    guard_tmps.tmp[i] = s;
    guard_publish(&guard_tmps, i);
    pthread_mutex_unlock(&guard_lock);
}

void guard_forget(const char *path)
{
    char *gone = NULL;
    pthread_mutex_lock(&guard_lock);
    for (size_t i = 0; i < guard_tmps.n && !gone; i++) {
        char *s = guard_tmps.tmp[i];
        if (s && !strcmp(s, path)) {
            guard_tmps.tmp[i] = NULL;
            gone = s;
        }
    }
    pthread_mutex_unlock(&guard_lock);
    atomic_thread_fence(memory_order_seq_cst);
    free(gone);
}

void guard_discard(const char *path)
{
    unlink(path);
    guard_forget(path);
}

int guard_tmp_open(const char *prefix, char **path)
{
    static const char al[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t n = strlen(prefix);
    char *p = mem_alloc(n + 9);
    memcpy(p, prefix, n);
    for (int tries = 0; tries < 100; tries++) {
        uint8_t r[8];
        if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            /* No entropy yet: O_EXCL still makes the name unique. */
            static unsigned seq;
            uint64_t x = (uint64_t)getpid() * 2654435761u + ++seq * 40503u;
            for (size_t k = 0; k < sizeof r; k++, x >>= 7)
                r[k] = (uint8_t)x;
        }
        for (size_t k = 0; k < 8; k++)
            p[n + k] = al[r[k] % (sizeof al - 1)];
        p[n + 8] = 0;
        int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            guard_keep(p);
            *path = p;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    free(p);
    *path = NULL;
    errno = e;
    return -1;
}

void guard_map_add(const void *base, size_t len, const char *path)
{
    if (!base)
        return;
    char *s = mem_strdup(path);
    pthread_mutex_lock(&guard_lock);
    size_t i = guard_slot(&guard_maps, true);
    guard_maps.map[i].len = len;
    guard_maps.map[i].path = s;
    atomic_thread_fence(memory_order_seq_cst);
    guard_maps.map[i].base = base;
    guard_publish(&guard_maps, i);
    pthread_mutex_unlock(&guard_lock);
}

void guard_map_remove(const void *base)
{
    char *gone = NULL;
    pthread_mutex_lock(&guard_lock);
    for (size_t i = 0; base && i < guard_maps.n && !gone; i++) {
        if (guard_maps.map[i].base == base) {
            guard_maps.map[i].base = NULL;
            atomic_thread_fence(memory_order_seq_cst);
            gone = guard_maps.map[i].path;
            guard_maps.map[i].path = NULL;
        }
    }
    pthread_mutex_unlock(&guard_lock);
    free(gone);
}

/* ---- handlers (async-signal-safe only) ------------------------------- */

static void guard_unlink_all(void)
{
    for (size_t i = 0; i < guard_tmps.n; i++) {
        const char *s = guard_tmps.tmp[i];
        if (s)
            unlink(s);
    }
}

static void guard_put(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(2, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void guard_default(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void guard_on_stop(int sig)
{
    guard_unlink_all();
    guard_default(sig);
    raise(sig); /* delivered when this handler returns: dies of sig */
}

static void guard_on_bus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const char *a = si ? si->si_addr : NULL;
    for (size_t i = 0; a && i < guard_maps.n; i++) {
        const GuardMap *m = &guard_maps.map[i];
        if (m->base && a >= m->base && (size_t)(a - m->base) < m->len) {
            guard_put(guard_prog);
            guard_put(": ");
            guard_put(m->path);
            guard_put(": file changed size while being read\n");
            guard_unlink_all();
            _exit(1);
        }
    }
    /* Not ours: the fault repeats with the default action. */
    guard_unlink_all();
    guard_default(sig);
}

void guard_install_signals(const char *prog)
{
    guard_prog = prog ? prog : guard_prog;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = guard_on_stop;
    int stops[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        struct sigaction old;
        /* A signal the caller ignores (nohup) stays ignored. */
        if (sigaction(stops[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(stops[i], &sa, NULL);
    }
    sa.sa_handler = NULL;
    sa.sa_sigaction = guard_on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, NULL);
}
