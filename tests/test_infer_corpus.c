/*
 * test_infer_corpus.c - inference agrees with the types and shapes the
 * ONNX node tests and the PyTorch exports declare.
 *
 * Node tests (every case folder under onnx-backend/node): inference runs from the graph inputs
 * alone (declared graph-output types are never consulted). For each case,
 * every graph output's inferred type must equal the declared one (kind and
 * element type, nested through seq/optional/map), and wherever the case
 * declares a fully static shape, the inferred shape must be that shape.
 * A case that disagrees must be listed in tests/xfail.txt with a reason;
 * at least 98% of cases must agree on types.
 *
 * Real models (every model under shared/models): every declared value_info and graph
 * output shape must agree with inference dimension by dimension wherever
 * both are known (a symbol the exporter wrote is not compared).
 *
 * Usage: test_infer_corpus [-v] [SUBSTRING]  (-v prints each disagreement;
 * SUBSTRING limits the run to cases whose path contains it).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "dims.h"
#include "analysis/infer.h"
#include "ir/ir.h"
#include "io/load.h"
#include "t.h"
#include "xfail.h"

static bool verbose;
static const char *filter;

/* Compares kinds and element types (not shapes) of two types. */
static bool types_equal(const IrType *a, const IrType *b)
{
    char x[128], y[128];
    if (!a || !b)
        return false;
    os_type_str(a, x, sizeof x);
    os_type_str(b, y, sizeof y);
    return strcmp(x, y) == 0 && !strchr(x, '?');
}

/* A tensor type's shape is fully static. */
static bool shape_static(const IrType *t)
{
    if (!t || t->kind != IR_TYPE_TENSOR || !t->shape)
        return false;
    for (size_t k = 0; k < t->shape->rank; k++)
        if (t->shape->dims[k].kind != IR_DIM_VALUE)
            return false;
    return true;
}

static bool shapes_equal(const IrShape *a, const IrShape *b)
{
    if (!a || !b || a->rank != b->rank)
        return false;
    for (size_t k = 0; k < a->rank; k++)
        if (a->dims[k].kind != IR_DIM_VALUE || b->dims[k].kind != IR_DIM_VALUE ||
            a->dims[k].value != b->dims[k].value)
            return false;
    return true;
}

static void shape_str(const IrType *t, char *buf, size_t cap)
{
    char dims[256];
    if (!t || !t->shape) {
        snprintf(buf, cap, "unranked");
        return;
    }
    dims_text(t->shape, dims, sizeof dims);
    snprintf(buf, cap, "[%s]", dims);
}

/* The case name of a node-test model path (.../node/NAME/model.onnx). */
static const char *case_name(const char *path, char *buf, size_t cap)
{
    const char *end = strrchr(path, '/');
    const char *start = end;
    while (start && start > path && start[-1] != '/')
        start--;
    if (!end || !start)
        return path;
    snprintf(buf, cap, "%.*s", (int)(end - start), start);
    return buf;
}

typedef struct Tally {
    int cases, type_ok, shape_cases, shape_ok, xfail;
} Tally;

/* Checks one node test; returns whether it agrees, with a reason. */
static bool node_case(IrModel *m, char *why, size_t cap, bool *had_static,
                      bool *shape_good)
{
    IrError err = {{0}};
    InfOptions opt = {.use_value_info = false};
    *had_static = false;
    *shape_good = true;
    if (inf_model(m, &opt, &err) < 0) {
        snprintf(why, cap, "inference failed: %s", err.msg);
        *shape_good = false;
        return false;
    }
    bool ok = true;
    IrGraph *g = m->graph;
    for (size_t k = 0; g && k < g->outputs.n; k++) {
        const IrValueInfo *vi = g->outputs.p[k];
        const IrType *want = vi->type, *got = vi->value->type;
        char a[128], b[128], sa[128], sb[128];
        if (!types_equal(want, got)) {
            if (ok)
                snprintf(why, cap, "output %zu '%s': inferred %s, declared %s", k,
                         vi->value->name, os_type_str(got, a, sizeof a),
                         os_type_str(want, b, sizeof b));
            ok = false;
            continue;
        }
        if (shape_static(want)) {
            *had_static = true;
            if (!shapes_equal(want->shape, got->shape)) {
                shape_str(got, sa, sizeof sa);
                shape_str(want, sb, sizeof sb);
                if (ok)
                    snprintf(why, cap, "output %zu '%s': inferred shape %s, declared %s",
                             k, vi->value->name, sa, sb);
                *shape_good = false;
            }
        }
    }
    return ok && *shape_good;
}

static void run_node_tests(const char *root, Tally *t)
{
    CorpusList l = {0};
    char *dir = corpus_join(root, "node");
    corpus_walk(dir, &l);
    corpus_sort(&l);
    for (size_t i = 0; i < l.n; i++) {
        char name[256], why[700], reason[512];
        if (filter && !strstr(l.p[i], filter))
            continue;
        case_name(l.p[i], name, sizeof name);
        const char *skip = corpus_skip_why_for(l.p[i], CORPUS_SKIP_ALL | CORPUS_SKIP_INFER);
        if (skip) {
            T_SKIP("%s: %s", name, skip);
            continue;
        }
        IrError err;
        IrModel *m = NULL;
        if (load_model_file(l.p[i], NULL, &m, &err) < 0) {
            T_CHECK(0, "%s: load: %s", name, err.msg);
            continue;
        }
        bool had_static, shape_good;
        bool ok = node_case(m, why, sizeof why, &had_static, &shape_good);
        bool types_ok = ok || (strstr(why, "inferred shape") != NULL);
        t->cases++;
        t->type_ok += types_ok;
        t->shape_cases += had_static;
        t->shape_ok += had_static && shape_good;
        bool listed = xfail_listed("infer-corpus", name, reason, sizeof reason);
        if (!ok && listed) {
            t->xfail++;
            if (verbose)
                printf("XFAIL %s: %s (listed: %s)\n", name, why, reason);
        } else if (ok && listed && corpus_in_system_data(l.p[i])) {
            T_CHECK(1, "%s", name);   /* the list describes ../shared's data */
        } else if (ok && listed) {
            T_CHECK(0, "%s: agrees now but is listed in " XFAIL_FILE "; remove it", name);
        } else {
            T_CHECK(ok, "%s: %s", name, why);
        }
        ir_model_free(m);
    }
    corpus_free(&l);
    free(dir);
}

/* Records declared-vs-inferred notes of a real model. */
typedef struct Notes {
    int n;
    char first[512];
} Notes;

static void on_note(void *arg, const char *msg)
{
    Notes *n = arg;
    if (n->n++ == 0)
        snprintf(n->first, sizeof n->first, "%s", msg);
}

/* Compares one declared type with the inferred one where both are known. */
static int compare_declared(const IrValueInfo *vi, const char *model, int *known)
{
    const IrType *want = vi->type, *got = vi->value->type;
    if (!want || want->kind != IR_TYPE_TENSOR || !want->shape)
        return 0;
    char a[128], b[128];
    if (!got || !got->shape || got->shape->rank != want->shape->rank) {
        shape_str(got, a, sizeof a);
        shape_str(want, b, sizeof b);
        T_CHECK(0, "%s: value '%s': inferred %s, exporter declared %s", model,
                vi->value->name, a, b);
        return 1;
    }
    for (size_t k = 0; k < want->shape->rank; k++) {
        const IrDim *w = &want->shape->dims[k], *g = &got->shape->dims[k];
        if (w->kind != IR_DIM_VALUE)
            continue;
        if (g->kind != IR_DIM_VALUE || g->value != w->value) {
            shape_str(got, a, sizeof a);
            shape_str(want, b, sizeof b);
            T_CHECK(0, "%s: value '%s': inferred %s, exporter declared %s", model,
                    vi->value->name, a, b);
            return 1;
        }
        (*known)++;
    }
    return 0;
}

static void run_real_models(const char *root)
{
    CorpusList l = {0};
    corpus_walk(root, &l);
    corpus_sort(&l);
    for (size_t i = 0; i < l.n; i++) {
        if (filter && !strstr(l.p[i], filter))
            continue;
        IrError err;
        IrModel *m = NULL;
        if (load_model_file(l.p[i], NULL, &m, &err) < 0) {
            T_CHECK(0, "%s: load: %s", l.p[i], err.msg);
            continue;
        }
        Notes notes = {0};
        InfOptions opt = {.use_value_info = false, .note = on_note, .note_arg = &notes};
        int rc = inf_model(m, &opt, &err);
        T_CHECK(rc == 0, "%s: inference failed: %s", l.p[i], err.msg);
        int bad = 0, known = 0, n = 0;
        for (size_t k = 0; rc == 0 && k < m->graph->value_info.n; k++, n++)
            bad += compare_declared(m->graph->value_info.p[k], l.p[i], &known);
        for (size_t k = 0; rc == 0 && k < m->graph->outputs.n; k++, n++)
            bad += compare_declared(m->graph->outputs.p[k], l.p[i], &known);
        T_CHECK(n > 0, "%s: the exporter declared no shapes to compare", l.p[i]);
        if (verbose)
            printf("%s: %d declared values, %d known dims agree, %d disagree\n",
                   l.p[i], n, known, bad);
        ir_model_free(m);
    }
    corpus_free(&l);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = true;
        else
            filter = argv[i];
    }
    const char *root = corpus_backend_root();
    Tally t = {0};
    if (!root) {
        T_SKIP("infer_corpus: no ONNX backend test data, node tests not run");
    } else {
        run_node_tests(root, &t);
        if (!filter) {
            T_CHECK(t.type_ok * 100 >= t.cases * 98,
                    "types agree on %d of %d node tests, under 98%%", t.type_ok, t.cases);
        }
        printf("node tests: %d cases, types agree %d (%.1f%%), static shapes agree "
               "%d of %d, %d listed as expected failures\n", t.cases, t.type_ok,
               t.cases ? 100.0 * t.type_ok / t.cases : 0.0, t.shape_ok, t.shape_cases,
               t.xfail);
    }
    if (corpus_is_dir("../shared/models"))
        run_real_models("../shared/models");
    else
        T_SKIP("infer_corpus: ../shared/models (PyTorch exports) not found");
    return t_done("infer_corpus");
}
