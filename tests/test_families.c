/*
 * test_families.c - every op's code sits in the files of its one family.
 *
 * The operator table gives each op a family (src/schema/opschema_flags.txt,
 * second column). The op's adapters, inference, kernel and Core ML
 * lowering must then be registered in adapters/F.c, src/analysis/infer/F.c,
 * src/eval/F.c and src/coreml/F.c of that same family F, so that a
 * newcomer finds an op's whole story from one name. Checked here:
 *  - every op of the table has a family;
 *  - every registration (adapter entry, inference function, kernel, Core
 *    ML lowering) of an op is in the table of the op's family;
 *  - each family table is defined in the file named after it (the source
 *    is read, from the project root, where `make check` runs the tests);
 *  - every .c file of the four folders is a family of the table or one of
 *    the helper files listed below;
 *  - every op of the table has a kernel and inference (the evaluator and
 *    inference cover every op).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "adapters/adapters.h"
#include "eval/eval.h"
#include "analysis/infer.h"
#include "coreml/rules.h"
#include "schema/opschema.h"
#include "t.h"

/* Files in the four folders that hold shared code, not one family's. */
static const char *const tf_helpers[] = {
    "adapters/common.c", "adapters/table.c", "adapters/impossible.c",
    "adapters/resize_lower.c", "src/eval/eval.c", "src/eval/value.c", "src/eval/io.c",
    "src/eval/block.c", "src/eval/parallel.c", "src/eval/verify_floor.c",
    "src/eval/verify_locate.c", "src/eval/sgemm.c",
    "src/eval/verify.c", "src/analysis/infer/common.c",
    "src/coreml/coreml.c", "src/coreml/rules.c", "src/coreml/lower.c",
    "src/coreml/export.c", "src/coreml/import.c", "src/coreml/constexpr.c",
    "src/coreml/mil.c", "src/coreml/milcheck.c", "src/coreml/milops.c",
    "src/coreml/milops_table.c", "src/coreml/mlpackage.c",
    "src/coreml/mlpackage_read.c", "src/coreml/mlpackage_manifest.c",
    "src/coreml/info_mil.c",
};

static const char *tf_family(const char *domain, const char *op)
{
    const OsSchema *s = os_find(domain, op, 1000);
    if (!s) {
        size_t n = 0;
        const OsSchema *v = os_versions(domain, op, &n);
        s = n ? v : NULL;
    }
    return s ? s->family : NULL;
}

/* One registration: op of domain registered in the family table `fam` of
 * `what` (adapters, inference, kernels). */
static void tf_check_op(const char *what, const char *fam, const char *domain,
                        const char *op)
{
    const char *want = tf_family(domain, op);
    T_CHECK(want != NULL, "%s: %s:%s registered in %s is not in the operator table",
            what, domain, op, fam);
    if (want)
        T_CHECK(strcmp(want, fam) == 0, "%s of %s%s%s: in family '%s', the table says '%s'",
                what, domain && *domain ? domain : "", domain && *domain ? ":" : "", op,
                fam, want);
}

/* Whether the file `path` defines the symbol `sym` (as "sym[]" or
 * "sym =" at the start of a definition line). */
static bool tf_defines(const char *path, const char *decl_type, const char *sym)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[512], want[200];
    snprintf(want, sizeof want, "%s %s", decl_type, sym);
    bool hit = false;
    while (!hit && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, want);
        if (p && (p[strlen(want)] == '[' || p[strlen(want)] == ' '))
            hit = true;
    }
    fclose(f);
    return hit;
}

/* Whether a line of the file `path` contains `needle`. */
static bool tf_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[512];
    bool hit = false;
    while (!hit && fgets(line, sizeof line, f))
        hit = strstr(line, needle) != NULL;
    fclose(f);
    return hit;
}

static bool tf_is_family(const char *name)
{
    for (size_t i = 0; i < os_table_n; i++)
        if (strcmp(os_table[i].family, name) == 0)
            return true;
    return false;
}

static bool tf_is_helper(const char *path)
{
    for (size_t i = 0; i < sizeof tf_helpers / sizeof tf_helpers[0]; i++)
        if (strcmp(tf_helpers[i], path) == 0)
            return true;
    return false;
}

/* Every .c file in dir is a family or a listed helper. */
static void tf_check_dir(const char *dir)
{
    DIR *d = opendir(dir);
    T_CHECK(d != NULL, "cannot list %s (run from the project root)", dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0)
            continue;
        char path[300], name[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(n - 2), e->d_name);
        T_CHECK(tf_is_family(name) || tf_is_helper(path),
                "%s is neither a family of the operator table nor a listed helper file", path);
    }
    closedir(d);
}

static void tf_check_families_have_names(void)
{
    for (size_t i = 0; i < os_table_n; i++)
        T_CHECK(os_table[i].family && *os_table[i].family, "%s:%s-%d has no family",
                os_table[i].domain, os_table[i].op, os_table[i].since);
}

static void tf_check_adapters(void)
{
    for (size_t f = 0; f < ad_families_n; f++) {
        const AdFamily *fam = ad_families[f];
        char path[200], sym[200];
        snprintf(path, sizeof path, "adapters/%s.c", fam->name);
        snprintf(sym, sizeof sym, "ad_family_%s", fam->name);
        T_CHECK(tf_defines(path, "AdFamily", sym), "%s does not define %s", path, sym);
        for (size_t i = 0; i < fam->n; i++)
            tf_check_op("adapter", fam->name, fam->e[i].domain, fam->e[i].op);
    }
}

static void tf_check_infer(void)
{
    for (size_t f = 0; f < inf_families_n; f++) {
        const InfFamily *fam = &inf_families[f];
        char path[200], sym[200];
        snprintf(path, sizeof path, "src/analysis/infer/%s.c", fam->name);
        snprintf(sym, sizeof sym, "inf_ops_%s", fam->name);
        T_CHECK(tf_defines(path, "InfOp", sym), "%s does not define %s", path, sym);
        for (const InfOp *o = fam->ops; o->op; o++)
            tf_check_op("inference", fam->name, o->domain, o->op);
    }
}

static void tf_check_eval(void)
{
    for (size_t f = 0; f < ev_families_n; f++) {
        const EvFamily *fam = &ev_families[f];
        char path[200], sym[200];
        snprintf(path, sizeof path, "src/eval/%s.c", fam->name);
        snprintf(sym, sizeof sym, "ev_ops_%s", fam->name);
        T_CHECK(tf_defines(path, "EvOp", sym), "%s does not define %s", path, sym);
        for (const EvOp *o = fam->ops; o->op; o++)
            tf_check_op("kernel", fam->name, o->domain, o->op);
    }
}

/* The Core ML lowerings: family F's table cm_family_F is defined in
 * src/coreml/F.c and lowers only ops of family F. (Its raisings read MIL
 * ops, which the operator table does not know.) */
static void tf_check_coreml(void)
{
    for (size_t f = 0; f < cm_families_n; f++) {
        const CmFamily *fam = cm_families[f];
        char path[200], sym[200];
        snprintf(path, sizeof path, "src/coreml/%s.c", fam->name);
        snprintf(sym, sizeof sym, "CM_FAMILY(cm_family_%s,", fam->name);
        T_CHECK(tf_is_family(fam->name), "Core ML family %s is not a family of the table",
                fam->name);
        T_CHECK(tf_contains(path, sym), "%s does not define cm_family_%s", path, fam->name);
        for (size_t i = 0; i < fam->n_lower; i++)
            tf_check_op("Core ML lowering", fam->name, "", fam->lower[i].op);
    }
}

/* Every op of the table has a kernel and an inference function. */
static void tf_check_coverage(void)
{
    for (size_t i = 0; i < os_table_n; i++) {
        const OsSchema *s = &os_table[i];
        if (s->next_since)
            continue; /* once per op: its newest version */
        bool kernel = false, infer = false;
        for (size_t f = 0; f < ev_families_n && !kernel; f++)
            for (const EvOp *o = ev_families[f].ops; o->op && !kernel; o++)
                kernel = strcmp(o->op, s->op) == 0 &&
                         strcmp(ir_domain_norm(o->domain), ir_domain_norm(s->domain)) == 0;
        for (size_t f = 0; f < inf_families_n && !infer; f++)
            for (const InfOp *o = inf_families[f].ops; o->op && !infer; o++)
                infer = strcmp(o->op, s->op) == 0 &&
                        strcmp(ir_domain_norm(o->domain), ir_domain_norm(s->domain)) == 0;
        T_CHECK(kernel, "%s:%s has no kernel", s->domain, s->op);
        T_CHECK(infer, "%s:%s has no inference function", s->domain, s->op);
    }
}

int main(void)
{
    tf_check_families_have_names();
    tf_check_adapters();
    tf_check_infer();
    tf_check_eval();
    tf_check_coreml();
    tf_check_coverage();
    tf_check_dir("adapters");
    tf_check_dir("src/analysis/infer");
    tf_check_dir("src/eval");
    tf_check_dir("src/coreml");
    return t_done("test_families");
}
