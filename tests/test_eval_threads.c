/* The evaluator's outputs do not depend on its thread count (parallel.c):
 * every shared model and the backend's light_resnet50 run on 1, 2 and 3
 * threads give the same bits. The kernels cut their work into tasks of a
 * fixed size; a cut that dropped or repeated work under more threads, or
 * two tasks writing one output, fails here (checked by planting one); so
 * would a float sum regrouped by thread count, since ev_sgemm sums in
 * float32. The pool of workers also survives fork(): a child (batch mode
 * forks one per model) runs parallel work without the parent's threads. */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corpus.h"
#include "eval/eval.h"
#include "io/load.h"
#include "t.h"

/* The outputs of one run on `threads` threads; NULL when it failed. */
static EvValue **te_run(IrModel *m, EvValue **in, size_t n_in, size_t threads,
                        size_t *n_out)
{
    EvOptions o = {.threads = threads};
    EvValue **out;
    IrError err;
    if (ev_model_run(m, &o, n_in, in, &out, n_out, &err)) {
        T_CHECK(0, "%zu threads: %s", threads, err.msg);
        return NULL;
    }
    return out;
}

static bool te_same(const EvValue *a, const EvValue *b)
{
    if (a->kind != EV_TENSOR || b->kind != EV_TENSOR)
        return a->kind == b->kind;
    return a->dtype == b->dtype && a->numel == b->numel && a->dtype != IR_STRING &&
           memcmp(a->data, b->data, a->numel * ev_dtype_size(a->dtype)) == 0;
}

static void te_case(const char *dir)
{
    char path[4096];
    IrError err;
    IrModel *m;
    EvValue **in;
    size_t n_in;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (load_model_file(path, NULL, &m, &err)) {
        T_CHECK(0, "%s: %s", dir, err.msg);
        return;
    }
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    if (ev_inputs_read(m, path, &in, &n_in, &err)) {
        T_CHECK(0, "%s: %s", dir, err.msg);
        ir_model_free(m);
        return;
    }
    size_t n1 = 0, n = 0;
    EvValue **one = te_run(m, in, n_in, 1, &n1);
    for (size_t t = 2; one && t <= 3; t++) {
        EvValue **more = te_run(m, in, n_in, t, &n);
        if (!more)
            break;
        bool same = n == n1;
        for (size_t k = 0; same && k < n; k++)
            same = te_same(one[k], more[k]);
        T_CHECK(same, "%s: outputs on %zu threads differ from 1 thread's", dir, t);
        ev_values_free(more, n);
    }
    if (one)
        ev_values_free(one, n1);
    ev_values_free(in, n_in);
    ir_model_free(m);
}

static atomic_size_t te_done;

static void te_task(void *ctx, size_t t, size_t worker)
{
    atomic_fetch_add(&te_done, 1);
}

/* Parallel work in the parent starts the pool; a forked child then runs
 * parallel work of its own and must finish (it waited forever on workers
 * it does not have before the pool reset itself after fork). */
static void te_fork(void)
{
    ev_parallel(2, 64, te_task, NULL);
    T_CHECK(te_done == 64, "parent: %zu of 64 tasks ran", (size_t)te_done);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);   /* a hang ends the child with SIGALRM */
        atomic_store(&te_done, 0);
        ev_parallel(2, 64, te_task, NULL);
        _exit(te_done == 64 ? 0 : 1);
    }
    int st = 0;
    T_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork or wait failed");
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
            "the forked child's parallel work %s",
            WIFSIGNALED(st) ? "hung or crashed" : "lost tasks");
}

int main(void)
{
    te_fork();
    CorpusList l = {0};
    corpus_cases_in("../shared/models", &l);
    if (!l.n)
        T_SKIP("eval_threads: ../shared/models not found");
    const char *root = corpus_backend_root();
    if (root) {
        char *dir = corpus_join(root, "light/light_resnet50");
        if (corpus_is_dir(dir))
            te_case(dir);
        free(dir);
    }
    for (size_t i = 0; i < l.n; i++)
        te_case(l.p[i]);
    corpus_free(&l);
    return t_done("eval_threads");
}
