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

static void *ev_par_main(void *arg)
{
    EvWorker *w = arg;
    ev_par_loop(w->par, w->id);
    return NULL;
}

void ev_parallel(size_t threads, size_t n_tasks, EvTaskFn fn, void *ctx)
{
    EvPar p = {fn, ctx, n_tasks, 0};
    EvWorker w[EV_MAX_THREADS];
    size_t n = threads < n_tasks ? threads : n_tasks, started = 1;
    if (n > EV_MAX_THREADS)
        n = EV_MAX_THREADS;
    /* a thread that cannot be started leaves its tasks to the others */
    for (size_t i = 1; i < n; i++) {
        w[started] = (EvWorker){&p, started, 0};
        if (pthread_create(&w[started].th, NULL, ev_par_main, &w[started]) == 0)
            started++;
    }
    ev_par_loop(&p, 0);
    for (size_t i = 1; i < started; i++)
        pthread_join(w[i].th, NULL);
}
