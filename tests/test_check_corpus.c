/*
 * test_check_corpus.c - the checker accepts every valid model we have: the
 * ONNX backend-test models, the PyTorch exports in ../shared/models, and
 * the project's testdata/. Each model is one case; a refusal prints the
 * checker's first error. Zero false rejections is the requirement, so
 * nothing here may be listed as an expected failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "corpus.h"
#include "ir/ir.h"
#include "io/load.h"
#include "t.h"

/* Checks every model under dir; returns how many there were. */
static size_t check_dir(const char *dir, size_t *unchecked_nodes, size_t *notes,
                        size_t *warnings)
{
    CorpusList l = {0};
    corpus_walk(dir, &l);
    corpus_sort(&l);
    for (size_t i = 0; i < l.n; i++) {
        const char *skip = corpus_skip_why_for(l.p[i], CORPUS_SKIP_ALL);
        if (skip) {
            T_SKIP("%s: %s", l.p[i], skip);
            continue;
        }
        IrError err;
        IrModel *m = NULL;
        if (load_model_file(l.p[i], NULL, &m, &err) < 0) {
            T_CHECK(0, "%s: load: %s", l.p[i], err.msg);
            continue;
        }
        ChkReport r;
        size_t n = chk_model(m, &r);
        T_CHECK(n == 0, "%s: refused: %s", l.p[i], chk_first_error(&r));
        *unchecked_nodes += r.n_unchecked;
        *notes += r.n_notes;
        /* a defect other tools write (tolerate.h), which these models,
         * written by onnx's and PyTorch's own exporters, do not have: a
         * warning here would be the checker's mistake (a declared shape
         * our inference gets wrong), which convert would then "repair" */
        T_CHECK(r.n_warnings == 0, "%s: warning: %s", l.p[i], chk_first_warning(&r));
        *warnings += r.n_warnings;
        chk_report_free(&r);
        ir_model_free(m);
    }
    size_t n = l.n;
    corpus_free(&l);
    return n;
}

int main(void)
{
    const char *roots[3] = {corpus_backend_root(), "../shared/models", "testdata"};
    size_t total = 0, unchecked = 0, notes = 0, warnings = 0;
    for (size_t i = 0; i < 3; i++) {
        if (!roots[i] || !corpus_is_dir(roots[i])) {
            T_SKIP("check_corpus: %s not found", roots[i] ? roots[i] : "backend data");
            continue;
        }
        total += check_dir(roots[i], &unchecked, &notes, &warnings);
    }
    printf("checked %zu models: %zu nodes in custom domains left unchecked, %zu notes "
           "(declared types that disagree with inference), %zu warnings (tolerated "
           "defects)\n", total, unchecked, notes, warnings);
    return t_done("check_corpus");
}
