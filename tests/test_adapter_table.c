/*
 * The adapter table is complete and honest: every version change of every
 * op in ai.onnx and ai.onnx.ml has an adapter in both directions (or an
 * "impossible" entry with a reason), every op introduced after opset 1 has
 * an entry for opsets where it does not exist, no key is listed twice or
 * names versions that are not neighbours, and an entry that claims to be
 * "compatible" really has the same attributes, inputs and outputs in both
 * versions (only type lists may differ).
 *
 *   test_adapter_table [-v] [OP]    (-v lists what is missing)
 *   test_adapter_table --coverage FILE...
 *       checks instead that every entry of the table appears in the coverage
 *       files the conversion tests wrote ("domain|op|from|to count" lines of
 *       adapters applied in conversions the evaluator judged right): every
 *       adapter is tested by evaluating a model before and after it.
 */
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"
#include "corpus.h"
#include "schema/opschema.h"
#include "t.h"

static int verbose;

/* Whether (domain, op, from, to) has an adapter or an impossible entry. */
static int covered(const char *d, const char *op, int from, int to)
{
    return ad_find(d, op, from, to) || ad_impossible(d, op, from, to);
}

static int same_attr(const OsAttr *a, const OsAttr *b)
{
    if (a->type != b->type || a->required != b->required || a->has_default != b->has_default)
        return 0;
    if (!a->has_default)
        return 1;
    if (a->def_i != b->def_i || a->def_f != b->def_f || a->def_n != b->def_n)
        return 0;
    return (!a->def_s && !b->def_s) || (a->def_s && b->def_s && !strcmp(a->def_s, b->def_s));
}

static int same_params(const OsParam *a, size_t na, const OsParam *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].optional != b[i].optional || a[i].variadic != b[i].variadic)
            return 0;
    return 1;
}

/* Whether two versions differ at most in their type lists. */
static int same_signature(const OsSchema *a, const OsSchema *b, char *why, size_t cap)
{
    if (a->n_attr != b->n_attr) {
        snprintf(why, cap, "attribute count %u vs %u", a->n_attr, b->n_attr);
        return 0;
    }
    for (size_t i = 0; i < a->n_attr; i++) {
        const OsAttr *o = os_attr(b, a->attr[i].name);
        if (!o || !same_attr(&a->attr[i], o)) {
            snprintf(why, cap, "attribute %s differs", a->attr[i].name);
            return 0;
        }
    }
    if (!same_params(a->in, a->n_in, b->in, b->n_in)) {
        snprintf(why, cap, "inputs differ");
        return 0;
    }
    if (!same_params(a->out, a->n_out, b->out, b->n_out)) {
        snprintf(why, cap, "outputs differ");
        return 0;
    }
    return 1;
}

static int missing;

static void need(const char *d, const char *op, int from, int to)
{
    int ok = covered(d, op, from, to);
    if (!ok) {
        missing++;
        if (verbose)
            printf("missing: %s %s %d -> %d\n", d[0] ? d : "ai.onnx", op, from, to);
    }
    t_passed += ok;
}

/* Every transition of one op. */
static void check_op(const OsSchema *v, size_t n)
{
    const char *d = v[0].domain;
    if (strcmp(d, "") != 0 && strcmp(d, "ai.onnx.ml") != 0)
        return;
    if (v[0].since > 1)
        need(d, v[0].op, v[0].since, 0);
    for (size_t i = 0; i + 1 < n; i++) {
        need(d, v[i].op, v[i].since, v[i + 1].since);
        need(d, v[i].op, v[i + 1].since, v[i].since);
    }
}

/* Each entry names a real transition; compatible ones keep the signature. */
static void check_entry(const AdEntry *e, const char *family)
{
    size_t n;
    const OsSchema *v = os_versions(e->domain, e->op, &n);
    T_CHECK(v != NULL, "%s: entry for unknown op %s", family, e->op);
    if (!v)
        return;
    const OsSchema *a = NULL, *b = NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i].since == e->from)
            a = &v[i];
        if (v[i].since == e->to)
            b = &v[i];
    }
    T_CHECK(a != NULL, "%s: %s has no version %d", family, e->op, e->from);
    if (e->to == 0) {
        T_CHECK(a == &v[0], "%s: %s %d -> 0: only the first version can be absent below",
                family, e->op, e->from);
        T_CHECK(e->fn != NULL, "%s: %s %d -> 0 needs a function", family, e->op, e->from);
        return;
    }
    T_CHECK(b != NULL && a && (b - a == 1 || a - b == 1),
            "%s: %s %d -> %d are not neighbouring versions", family, e->op, e->from, e->to);
    if (e->kind == AD_COMPATIBLE && a && b) {
        char why[128] = "";
        T_CHECK(same_signature(a, b, why, sizeof why),
                "%s: %s %d -> %d is listed compatible but %s", family, e->op, e->from,
                e->to, why);
        T_CHECK(e->fn == NULL, "%s: compatible %s has a function", family, e->op);
    }
}

static void check_duplicates(void)
{
    for (size_t f = 0; f < ad_families_n; f++)
        for (size_t i = 0; i < ad_families[f]->n; i++) {
            const AdEntry *e = &ad_families[f]->e[i];
            T_CHECK(ad_find(e->domain, e->op, e->from, e->to) == e,
                    "%s: %s %d -> %d is listed twice", ad_families[f]->name, e->op,
                    e->from, e->to);
            T_CHECK(!ad_impossible(e->domain, e->op, e->from, e->to),
                    "%s: %s %d -> %d has an adapter and an impossible entry",
                    ad_families[f]->name, e->op, e->from, e->to);
        }
}

/* Whether `key` is a line's first word in one of the files. */
static int in_files(char **files, int n, const char *key)
{
    char line[512];
    size_t kl = strlen(key);
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(files[i], "r");
        if (!f)
            continue;
        int found = 0;
        while (!found && fgets(line, sizeof line, f))
            found = !strncmp(line, key, kl) && line[kl] == ' ';
        fclose(f);
        if (found)
            return 1;
    }
    return 0;
}

/* Every entry with a function or a compatible entry must have run in a
 * judged conversion. */
static int coverage_main(char **files, int n)
{
    int missed = 0;
    /* The demand holds for ../shared's data (the node tests of the newest
     * ONNX and the PyTorch models); with less, an adapter no case reaches
     * is skipped by name instead. */
    const char *root = corpus_backend_root();
    const char *partial = !root ? "no backend test data"
                          : corpus_in_system_data(root) ? "ONNX 1.12's node tests only"
                          : !corpus_is_dir("../shared/models") ? "no ../shared/models"
                                                              : NULL;
    for (size_t f = 0; f < ad_families_n; f++)
        for (size_t i = 0; i < ad_families[f]->n; i++) {
            const AdEntry *e = &ad_families[f]->e[i];
            char key[200];
            snprintf(key, sizeof key, "%s|%s|%d|%d", e->domain, e->op, e->from, e->to);
            int ok = in_files(files, n, key);
            if (!ok && partial) {
                T_SKIP("adapter_coverage: %s %s %d -> %d: no judged conversion in the "
                       "data here (%s)", e->domain[0] ? e->domain : "ai.onnx", e->op,
                       e->from, e->to, partial);
                continue;
            }
            if (!ok && verbose)
                printf("not exercised: %s %s %s %d -> %d\n", ad_families[f]->name,
                       e->domain[0] ? e->domain : "ai.onnx", e->op, e->from, e->to);
            missed += !ok;
            t_passed += ok;
        }
    T_CHECK(missed == 0, "%d adapters are not exercised by any judged conversion "
            "(node tests, models or tests/adapters/*.txt; -v lists them)", missed);
    return t_done("adapter_coverage");
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--coverage"))
            return coverage_main(argv + i + 1, argc - i - 1);
        else
            only = argv[i];
    }
    size_t entries = 0, compat = 0;
    for (size_t f = 0; f < ad_families_n; f++)
        for (size_t i = 0; i < ad_families[f]->n; i++) {
            check_entry(&ad_families[f]->e[i], ad_families[f]->name);
            entries++;
            compat += ad_families[f]->e[i].kind == AD_COMPATIBLE;
        }
    check_duplicates();
    for (size_t i = 0; i < os_table_n; i++) {
        const OsSchema *s = &os_table[i];
        if (i > 0 && !strcmp(os_table[i - 1].op, s->op) &&
            !strcmp(os_table[i - 1].domain, s->domain))
            continue;
        if (only && strcmp(only, s->op) != 0)
            continue;
        size_t n;
        const OsSchema *v = os_versions(s->domain, s->op, &n);
        if (v)
            check_op(v, n);
    }
    T_CHECK(missing == 0, "%d version changes have neither an adapter nor an impossible "
            "entry (run with -v to list them)", missing);
    printf("adapter table: %zu entries (%zu compatible) in %zu families, %zu impossible\n",
           entries, compat, ad_families_n, ad_impossible_n);
    return t_done("test_adapter_table");
}
