/*
 * test_optimize_corpus - the default optimization pipeline over every case
 * with expected outputs: the node tests, the backend's light/, simple/,
 * pytorch-converted/ and pytorch-operator/ models, and ../shared/models.
 *
 * For each case: optimize a copy with the default passes, then
 *   - the optimized model must pass the checker when the original does,
 *   - it must give the case's expected outputs (the evaluator; rtol 1e-3,
 *     atol 1e-7, or 1e-4 for the PyTorch models, as the evaluator's own
 *     corpus tests use),
 *   - optimizing it again must change nothing (idempotence).
 * Cases the evaluator itself cannot judge (tests/xfail.txt, "eval-node" /
 * "eval-models") are counted as unjudged. Prints the node counts before
 * and after per group.
 *
 *   test_optimize_corpus [-v] [--ort-out DIR] [FILTER]
 *
 * --ort-out DIR writes each optimized model the evaluator judged ok, and
 * those it cannot judge, to DIR, listed in DIR/list.txt, for ONNX Runtime
 * to judge (tests/ort_matrix.sh).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/check.h"
#include "corpus.h"
#include "eval/eval.h"
#include "io/load.h"
#include "passes/passes.h"
#include "io/save.h"
#include "t.h"
#include "xfail.h"

static int verbose;
static const char *ort_dir;      /* --ort-out: where judged models go */
static FILE *ort_list;

/* Writes an optimized model the evaluator judged ok for ONNX Runtime to
 * judge too (tests/ort_matrix.sh optimize): "CASE MODEL OPSET" lines. */
static void oc_ort_save(const IrModel *m, const char *group, const char *name,
                        const char *dir)
{
    if (!ort_list)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%s.onnx", ort_dir, group, name);
    IrError err;
    if (save_model_file(m, path, NULL, &err) == 0)
        fprintf(ort_list, "%s %s %lld\n", dir, path, (long long)ir_model_opset(m, ""));
}

typedef struct OcGroup {
    const char *name;
    long cases, ok, wrong, unjudged;
    size_t before, after;
} OcGroup;

/* Optimizes one case and judges it. */
static void oc_case(OcGroup *g, const char *xname, const char *dir, double atol)
{
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    char path[4096], why[600];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    const char *skip = corpus_skip_why(dir);
    if (skip) {
        T_SKIP("%s: %s", name, skip);
        return;
    }
    g->cases++;
    IrError err;
    IrModel *m;
    if (load_model_file(path, NULL, &m, &err)) {
        g->unjudged++;
        return;
    }
    if (xfail_listed(xname, name, NULL, 0)) {
        /* the evaluator cannot judge it; ONNX Runtime may (--ort-out) */
        OptStats st;
        if (opt_optimize(m, NULL, &st, &err) == 0)
            oc_ort_save(m, g->name, name, dir);
        opt_stats_free(&st);
        ir_model_free(m);
        g->unjudged++;
        return;
    }
    int orig_valid = corpus_valid(m, NULL, 0);
    OptStats st;
    int rc = opt_optimize(m, NULL, &st, &err);
    g->before += st.nodes_before;
    g->after += st.nodes_after;
    opt_stats_free(&st);
    EvTestResult res;
    int ok = rc == 0;
    if (!ok)
        snprintf(why, sizeof why, "optimize failed: %s", err.msg);
    if (ok && orig_valid && !corpus_valid(m, why, sizeof why))
        ok = 0;
    if (ok && ev_test_case_model(dir, m, 1e-3, atol, &res, &err)) {
        snprintf(why, sizeof why, "%s", err.msg);
        ok = 0;
    }
    if (ok) {
        long again = 0;
        if (opt_optimize(m, NULL, &st, &err) == 0)
            for (size_t i = 0; i < st.n; i++)
                again += st.changes[i];
        opt_stats_free(&st);
        if (again) {
            snprintf(why, sizeof why, "not idempotent: a second run made %ld changes", again);
            ok = 0;
        }
    }
    T_CHECK(ok, "%s: %s", name, why);
    if (ok) {
        g->ok++;
        oc_ort_save(m, g->name, name, dir);
    } else
        g->wrong++;
    if (verbose)
        printf("%s %s\n", ok ? "OK" : "WRONG", name);
    ir_model_free(m);
}

static void oc_group(OcGroup *g, const char *xname, const char *root, double atol,
                     const char *filter)
{
    CorpusList l = {0};
    corpus_cases_in(root, &l);
    for (size_t i = 0; i < l.n; i++)
        if (!filter || strstr(l.p[i], filter))
            oc_case(g, xname, l.p[i], atol);
    corpus_free(&l);
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--ort-out") && i + 1 < argc)
            ort_dir = argv[++i];
        else
            filter = argv[i];
    }
    if (ort_dir) {
        char p[4096];
        mkdir(ort_dir, 0777);
        snprintf(p, sizeof p, "%s/list.txt", ort_dir);
        ort_list = fopen(p, "w");
    }
    const char *root = corpus_backend_root();
    if (!root)
        T_SKIP("optimize_corpus: no ONNX backend test data ($ONNX_BACKEND_DATA, "
               CORPUS_BACKEND_DIR ", " CORPUS_SYSTEM_DIR ")");
    if (!corpus_is_dir("../shared/models"))
        T_SKIP("optimize_corpus: ../shared/models (PyTorch exports) not found");
    static const char *const names[6] = {"node", "light", "simple", "pytorch-converted",
                                         "pytorch-operator", "models"};
    OcGroup groups[6];
    memset(groups, 0, sizeof groups);
    for (int k = 0; k < 6; k++)
        groups[k].name = names[k];
    for (int k = 0; root && k < 5; k++) {
        char *sub = corpus_join(root, groups[k].name);
        oc_group(&groups[k], k == 0 ? "eval-node" : "eval-models", sub, 1e-7, filter);
        free(sub);
    }
    oc_group(&groups[5], "eval-models", "../shared/models", 1e-4, filter);
    printf("optimizer over the corpus (default passes):\n");
    printf("  %-18s %6s %6s %6s %9s %9s %9s\n", "group", "cases", "ok", "wrong",
           "unjudged", "nodes", "after");
    for (int k = 0; k < 6; k++)
        printf("  %-18s %6ld %6ld %6ld %9ld %9zu %9zu\n", groups[k].name, groups[k].cases,
               groups[k].ok, groups[k].wrong, groups[k].unjudged, groups[k].before,
               groups[k].after);
    if (ort_list)
        fclose(ort_list);
    return t_done("test_optimize_corpus");
}
