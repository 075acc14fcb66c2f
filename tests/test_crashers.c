/*
 * test_crashers.c - every input the fuzzer ever broke us with
 * (tests/crashers/, one file each, named after what it broke) goes through
 * the fuzz target again: load, check, convert, optimize, save. The target
 * aborts on a broken promise and the sanitized build catches memory errors,
 * so reaching the end of a file is the assertion.
 *
 * Usage: test_crashers [DIR]   (default tests/crashers)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_target.h"
#include "t.h"

static uint8_t *tc_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

static int tc_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/crashers";
    DIR *d = opendir(dir);
    T_CHECK(d != NULL, "%s: cannot open the crasher folder", dir);
    if (!d)
        return t_done("crashers");
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README"))
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, tc_name_cmp);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len = 0;
        uint8_t *buf = tc_read(path, &len);
        T_CHECK(buf != NULL, "%s: cannot read", path);
        if (buf) {
            fz_run(buf, len);  /* aborts on a broken promise */
            t_passed++;        /* got here: the promise held */
        }
        free(buf);
        free(names[i]);
    }
    free(names);
    T_CHECK(n > 0, "%s: no crasher files (the folder should keep them all)", dir);
    return t_done("crashers");
}
