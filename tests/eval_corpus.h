/*
 * eval_corpus.h - the evaluator against the ONNX backend tests: every case
 * folder under node/ (and, with --models, the real-model folders) is run
 * with `ev_test_case` and compared with the expected outputs the ONNX
 * project (or PyTorch) computed.
 *
 *   test_eval_node [-v] [FILTER]      the node tests
 *   test_eval_models [-v] [FILTER]    the real models
 *
 * Node tests: the 1802 node tests, tolerances rtol 1e-3, atol 1e-7
 * (the backend defaults). Models: ../shared/models/ (PyTorch's
 * outputs, rtol 1e-3, atol 1e-4) and the backend's light/, simple/,
 * pytorch-converted/ and pytorch-operator/ folders (backend defaults).
 * A case listed in tests/xfail.txt ("eval-node: CASE: reason" or
 * "eval-models: CASE: reason") is an expected failure; a listed case that
 * passes fails, so the list only shrinks.
 */
#ifndef OC_EVAL_CORPUS_H
#define OC_EVAL_CORPUS_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "eval/eval.h"
#include "t.h"
#include "xfail.h"

static int verbose;
static int n_xfail;

static void run_case(const char *list, const char *dir, double rtol,
                     double atol)
{
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    IrError err;
    EvTestResult res;
    char reason[512];
    const char *skip = corpus_skip_why(dir);
    if (skip) {
        T_SKIP("%s: %s", name, skip);
        return;
    }
    int ok = ev_test_case(dir, NULL, rtol, atol, &res, &err) == 0;
    int listed = xfail_listed(list, name, reason, sizeof reason);
    /* tests/xfail.txt describes ../shared's data; 1.12's may not differ */
    if (ok && listed && corpus_in_system_data(dir)) {
        T_CHECK(1, "%s", name);
        return;
    }
    if (ok && listed) {
        T_CHECK(0, "%s: passes but is listed in tests/xfail.txt (%s)", name,
                reason);
        return;
    }
    if (!ok && listed) {
        n_xfail++;
        if (verbose)
            printf("XFAIL %s: %s\n", name, reason);
        return;
    }
    T_CHECK(ok, "%s: %s", name, err.msg);
    if (ok && verbose)
        printf("PASS %s (%zu sets)\n", name, res.sets);
}

static int filtered_out(const char *dir, const char *filter)
{
    return filter && !strstr(dir, filter);
}

static int eval_corpus_main(int argc, char **argv, int models)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else
            filter = argv[i];
    }
    const char *name = models ? "eval-models" : "eval-node";
    const char *root = corpus_backend_root();
    if (!root)
        T_SKIP("%s: no ONNX backend test data ($ONNX_BACKEND_DATA, " CORPUS_BACKEND_DIR
               ", " CORPUS_SYSTEM_DIR ")", name);
    CorpusList l = {0};
    if (root && !models) {
        char *node = corpus_join(root, "node");
        corpus_cases_in(node, &l);
        free(node);
        /* ../shared holds 1802 node tests, Debian's ONNX 1.12 copy 932 */
        size_t want = corpus_in_system_data(root) ? 932 : 1802;
        T_CHECK(l.n >= want || filter, "only %zu node tests found in %s", l.n, root);
        for (size_t i = 0; i < l.n; i++)
            if (!filtered_out(l.p[i], filter))
                run_case(name, l.p[i], 1e-3, 1e-7);
    }
    if (root && models) {
        const char *dirs[] = {"light", "simple", "pytorch-converted",
                              "pytorch-operator"};
        for (size_t d = 0; d < 4; d++) {
            char *sub = corpus_join(root, dirs[d]);
            size_t before = l.n;
            corpus_cases_in(sub, &l);
            free(sub);
            for (size_t i = before; i < l.n; i++)
                if (!filtered_out(l.p[i], filter))
                    run_case(name, l.p[i], 1e-3, 1e-7);
        }
        size_t before = l.n;
        corpus_cases_in("../shared/models", &l);
        if (!corpus_is_dir("../shared/models"))
            T_SKIP("%s: ../shared/models (PyTorch exports) not found", name);
        else
            T_CHECK(l.n > before || filter, "no models in ../shared/models");
        for (size_t i = before; i < l.n; i++)
            if (!filtered_out(l.p[i], filter))
                run_case(name, l.p[i], 1e-3, 1e-4);
    }
    corpus_free(&l);
    printf("%s: %d expected failures (tests/xfail.txt)\n", name, n_xfail);
    return t_done(name);
}

#endif
