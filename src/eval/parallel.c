/*
 * parallel.c - the evaluator's own threads.
 *
 * A kernel cuts its work into tasks whose bounds do not depend on the
 * number of threads (tiles of a fixed size, channels, planes), and each
 * task computes its outputs alone, in one fixed order. Which thread runs
 * a task then changes nothing in the result: outputs are the same bits
 * at any --threads. OpenBLAS, called inside tasks, is held to one thread
 * of its own for the whole run (ev_blas_hold), so that a product's
 * rounding does not depend on how OpenBLAS would split it either.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"

/* OpenBLAS's own controls (declared here: cblas.h may be another BLAS's
 * header; the library linked is OpenBLAS). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
/* Its choice of kernels, in a build for every CPU (DYNAMIC_ARCH, as
 * Debian's): weak, so that another build, which lacks them, links too. */
char *openblas_get_corename(void) __attribute__((weak));
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));

/* The kernels a machine's features allow, by OpenBLAS's names: NULL when
 * nothing better than its oldest ones. */
static const char *ev_blas_core_for_cpu(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
    return NULL;
}

/* OpenBLAS picks its kernels by CPU model, and a model newer than the
 * library (0.3.21 in Debian 12 does not know family 6 model 207, a 2023
 * Xeon) gets its oldest, Prescott's SSE3 ones: dgemm, most of the
 * evaluator's time on convolution networks, ran several times slower
 * than the machine can (bench/README.md). When the user has not chosen
 * (OPENBLAS_CORETYPE unset) and OpenBLAS says Prescott on a machine with
 * AVX2 or AVX-512, its selection is run again with the kernels the
 * features allow, before main and so before any product; the environment
 * is left as it was. */
static bool ev_blas_repicked;    /* set once, before main */

__attribute__((constructor)) static void ev_blas_pick_core(void)
{
    if (!openblas_get_corename || !gotoblas_dynamic_init || !gotoblas_dynamic_quit ||
        getenv("OPENBLAS_CORETYPE"))
        return;
    const char *core = openblas_get_corename(), *pick = ev_blas_core_for_cpu();
    if (!core || strcmp(core, "Prescott") != 0 || !pick)
        return;
    if (setenv("OPENBLAS_CORETYPE", pick, 0) != 0)
        return;
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
    ev_blas_repicked = true;
}

const char *ev_blas_kernels(bool *repicked)
{
    *repicked = ev_blas_repicked;
    return openblas_get_corename ? openblas_get_corename() : NULL;
}

enum { EV_MAX_THREADS = 64 };

size_t ev_threads_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > EV_MAX_THREADS ? EV_MAX_THREADS : (size_t)n;
}

int ev_blas_hold(void)
{
    int was = openblas_get_num_threads();
    openblas_set_num_threads(1);
    return was;
}

void ev_blas_release(int was)
{
    if (was > 0)
        openblas_set_num_threads(was);
}

typedef struct EvPar {
    EvTaskFn fn;
    void *ctx;
    size_t n_tasks;
    atomic_size_t next;
} EvPar;

typedef struct EvWorker {
    EvPar *par;
    size_t id;
    pthread_t th;
} EvWorker;

static void ev_par_loop(EvPar *p, size_t worker)
{
    for (;;) {
        size_t t = atomic_fetch_add(&p->next, 1);
        if (t >= p->n_tasks)
            return;
        p->fn(p->ctx, t, worker);
    }
}

/* ---- the pool ----------------------------------------------------------- */

/* Workers live for the process, started as runs first ask for them:
 * starting threads for every node cost more than two-thread convolution
 * gained (light_densenet121 ran slower on 2 threads than on 1), and each
 * new thread began with an empty block cache (block.c), so it faulted its
 * scratch in again and left it behind when it ended. One run at a time
 * uses the pool; another thread's run meanwhile, or a task that asks for
 * threads itself, gets threads of its own as before. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    size_t started;      /* workers 1..started exist */
    _Atomic uint64_t gen;   /* bumped for every job (under mu) */
    EvPar *job;
    size_t job_threads;  /* workers 1..job_threads-1 take part */
    atomic_size_t busy;  /* of those, still working (changed under mu) */
    atomic_flag owned;
    uint64_t born[EV_MAX_THREADS];   /* gen when worker i was started */
} ev_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
             PTHREAD_COND_INITIALIZER, 0, 0, NULL, 0, 0, ATOMIC_FLAG_INIT, {0}};

/* Whether this thread is running a pool task (then it must not wait for
 * the pool itself). */
static _Thread_local bool ev_in_pool;

/* Spins of a thread waiting for the next job or for its workers before
 * it sleeps on the condition: a node's job is often a few hundred
 * microseconds, and waking a sleeping thread took tens of them here. */
enum { EV_POOL_SPIN = 1 << 14 };

static void ev_pool_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *ev_pool_main(void *arg)
{
    size_t id = (size_t)(uintptr_t)arg;
    ev_in_pool = true;
    pthread_mutex_lock(&ev_pool.mu);
    /* the job it was started for, if any, is still to do */
    uint64_t seen = ev_pool.born[id];
    for (;;) {
        pthread_mutex_unlock(&ev_pool.mu);
        for (int i = 0; i < EV_POOL_SPIN && atomic_load(&ev_pool.gen) == seen; i++)
            ev_pool_pause();
        pthread_mutex_lock(&ev_pool.mu);
        while (ev_pool.gen == seen)
            pthread_cond_wait(&ev_pool.go, &ev_pool.mu);
        seen = ev_pool.gen;
        if (id >= ev_pool.job_threads)
            continue;
        EvPar *p = ev_pool.job;
        pthread_mutex_unlock(&ev_pool.mu);
        ev_par_loop(p, id);
        pthread_mutex_lock(&ev_pool.mu);
        if (--ev_pool.busy == 0)
            pthread_cond_signal(&ev_pool.done);
    }
    return NULL;
}

/* A child of fork() has none of the parent's workers (batch mode forks
 * one process per model): it starts with an empty pool. */
static void ev_pool_after_fork(void)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    ev_pool.mu = mu;
    ev_pool.go = cv;
    ev_pool.done = cv;
    ev_pool.started = 0;
    ev_pool.job = NULL;
    ev_pool.job_threads = 0;
    atomic_store(&ev_pool.busy, 0);
    atomic_flag_clear(&ev_pool.owned);
    ev_in_pool = false;
}

static pthread_once_t ev_pool_once = PTHREAD_ONCE_INIT;

static void ev_pool_init(void)
{
    pthread_atfork(NULL, NULL, ev_pool_after_fork);
}

/* Starts workers up to n - 1; the number of workers there are. */
static size_t ev_pool_grow(size_t n)
{
    pthread_once(&ev_pool_once, ev_pool_init);
    while (ev_pool.started + 1 < n) {
        pthread_t th;
        pthread_attr_t at;
        if (pthread_attr_init(&at) != 0)
            break;
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        ev_pool.born[ev_pool.started + 1] = ev_pool.gen;
        int rc = pthread_create(&th, &at, ev_pool_main,
                                (void *)(uintptr_t)(ev_pool.started + 1));
        pthread_attr_destroy(&at);
        if (rc != 0)
            break;   /* the workers there are take the tasks */
        ev_pool.started++;
    }
    return ev_pool.started;
}

/* Threads started for this call only, as before the pool. */
static void *ev_par_main(void *arg)
{
    EvWorker *w = arg;
    ev_par_loop(w->par, w->id);
    return NULL;
}

static void ev_parallel_own(EvPar *p, size_t n)
{
    EvWorker w[EV_MAX_THREADS];
    size_t started = 1;
    /* a thread that cannot be started leaves its tasks to the others */
    for (size_t i = 1; i < n; i++) {
        w[started] = (EvWorker){p, started, 0};
        if (pthread_create(&w[started].th, NULL, ev_par_main, &w[started]) == 0)
            started++;
    }
    ev_par_loop(p, 0);
    for (size_t i = 1; i < started; i++)
        pthread_join(w[i].th, NULL);
}

void ev_parallel(size_t threads, size_t n_tasks, EvTaskFn fn, void *ctx)
{
    EvPar p = {fn, ctx, n_tasks, 0};
    size_t n = threads < n_tasks ? threads : n_tasks;
    if (n > EV_MAX_THREADS)
        n = EV_MAX_THREADS;
    if (n <= 1) {
        ev_par_loop(&p, 0);
        return;
    }
    if (ev_in_pool || atomic_flag_test_and_set(&ev_pool.owned)) {
        ev_parallel_own(&p, n);
        return;
    }
    pthread_mutex_lock(&ev_pool.mu);
    size_t have = ev_pool_grow(n);
    n = have + 1 < n ? have + 1 : n;
    ev_pool.job = &p;
    ev_pool.job_threads = n;
    ev_pool.busy = n - 1;
    ev_pool.gen++;
    pthread_cond_broadcast(&ev_pool.go);
    pthread_mutex_unlock(&ev_pool.mu);
    ev_in_pool = true;
    ev_par_loop(&p, 0);
    ev_in_pool = false;
    for (int i = 0; i < EV_POOL_SPIN && atomic_load(&ev_pool.busy) > 0; i++)
        ev_pool_pause();
    pthread_mutex_lock(&ev_pool.mu);
    while (ev_pool.busy > 0)
        pthread_cond_wait(&ev_pool.done, &ev_pool.mu);
    ev_pool.job = NULL;
    pthread_mutex_unlock(&ev_pool.mu);
    atomic_flag_clear(&ev_pool.owned);
}
