/*
 * passes_check.h - edit/check helpers for the fusion tests (on top of
 * passes_build.h): edit() derives a model text from a base one, check()
 * runs passes on it through tb_run and checks the change count and the op
 * counts. (tests/test_pass_fuse_norm.c holds its own copy of the same two
 * functions; it can include this instead.)
 */
#ifndef OC_PASSES_CHECK_H
#define OC_PASSES_CHECK_H

#include <stdarg.h>

#include "passes_build.h"

/* base with each "from" line replaced by "to" (pairs, NULL-ended). */
static char *edit(const char *base, ...)
{
    char *s = mem_strdup(base);
    va_list ap;
    va_start(ap, base);
    for (const char *from; (from = va_arg(ap, const char *)) != NULL;) {
        const char *to = va_arg(ap, const char *);
        char *at = strstr(s, from);
        T_CHECK(at != NULL, "edit: '%s' is not in the model", from);
        if (!at)
            continue;
        size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
        char *r = mem_alloc(n);
        memcpy(r, s, (size_t)(at - s));
        strcpy(r + (at - s), to);
        strcat(r, at + strlen(from));
        free(s);
        s = r;
    }
    va_end(ap);
    return s;
}

/* Runs `passes` on the model, expects `want` changes (-1: any positive)
 * and the op counts "Op=n Op=n". Frees text. */
static void check(const char *what, char *text, const char *passes, long want,
                  const char *counts)
{
    IrModel *m = tb_model(text);
    if (getenv("T_VERBOSE"))
        fprintf(stderr, "-- %s\n", what);
    long ch;
    IrModel *o = tb_run(m, passes, &ch);
    T_CHECK(o && (want < 0 ? ch > 0 : ch == want), "%s: %ld changes, expected %ld", what, ch,
            want);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", counts);
    for (char *t = strtok(buf, " "); o && t; t = strtok(NULL, " ")) {
        char *eq = strchr(t, '=');
        *eq = 0;
        size_t n = tb_count(o, t), w = strtoul(eq + 1, NULL, 10);
        T_CHECK(n == w, "%s: %zu %s nodes, expected %zu", what, n, t, w);
    }
    ir_model_free(o);
    ir_model_free(m);
    free(text);
}

#endif
