/*
 * corpus.h - finding and reading the model corpus for tests (prefix
 * corpus_).
 *
 * The corpus is the ONNX backend test data (see corpus_backend_root) plus
 * whatever folders a test adds (../shared/models, testdata/). A test walks
 * each root into one CorpusList, sorts it so runs are reproducible, reads
 * each file with corpus_read_all and ends with corpus_free.
 *
 * Every function is static inline: each test uses only some of them, and
 * an unused plain static function would warn (-Werror).
 */
#ifndef OC_CORPUS_H
#define OC_CORPUS_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/check.h"
#include "io/load.h"
#include "io/save.h"

/* The default places of the backend data: beside this checkout, then the
 * Debian package. $ONNX_BACKEND_DATA overrides both. */
#define CORPUS_BACKEND_DIR "../shared/testdata/onnx-backend"
#define CORPUS_SYSTEM_DIR "/usr/share/libonnx-testdata/data"

/* Symlinked folders are never followed, so a walk cannot loop; this limit
 * only bounds the recursion on an absurdly deep tree. */
#define CORPUS_MAX_DEPTH 32

/* Malloc'd paths, each "root/relative/name.onnx". */
typedef struct CorpusList {
    size_t n, cap;
    char **p;
} CorpusList;

/* Whether p names a folder (following a symlink); NULL and "" do not. */
static inline int corpus_is_dir(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The backend data root, or NULL when there is none. A non-empty
 * $ONNX_BACKEND_DATA is returned even if it does not exist, so that a
 * wrong setting shows as missing data instead of quietly testing another
 * data set. */
static inline const char *corpus_backend_root(void)
{
    const char *env = getenv("ONNX_BACKEND_DATA");
    if (env && *env)
        return env;
    if (corpus_is_dir(CORPUS_BACKEND_DIR))
        return CORPUS_BACKEND_DIR;
    if (corpus_is_dir(CORPUS_SYSTEM_DIR))
        return CORPUS_SYSTEM_DIR;
    return NULL;
}

/* Whether path lies in Debian's copy of the backend data (ONNX 1.12). */
static inline int corpus_in_system_data(const char *path)
{
    size_t n = strlen(CORPUS_SYSTEM_DIR);
    return !strncmp(path, CORPUS_SYSTEM_DIR, n) && (!path[n] || path[n] == '/');
}

/* Which tests a skip below applies to. */
#define CORPUS_SKIP_ALL 1     /* every test that runs or checks the case */
#define CORPUS_SKIP_INFER 2   /* shape inference against declared shapes */
#define CORPUS_SKIP_DATA 4    /* tests that run the case's data */

/* Cases of Debian's ONNX 1.12 data whose files differ from what later
 * ONNX releases ship (and ../shared holds): a test skips them there, by
 * name, with the reason; NULL for every other path and other tests. */
static inline const char *corpus_skip_why_for(const char *path, int what)
{
    static const char *const runtime_sizes =
        "ONNX 1.12's model declares output shapes that its sizes, a graph input "
        "there, do not determine";
    static const struct {
        const char *suffix, *why;
        int what;
    } skips[] = {
        {"/node/test_split_variable_parts_1d", NULL, CORPUS_SKIP_INFER},
        {"/node/test_split_variable_parts_2d", NULL, CORPUS_SKIP_INFER},
        {"/node/test_split_variable_parts_default_axis", NULL, CORPUS_SKIP_INFER},
        {"/node/test_split_zero_size_splits", NULL, CORPUS_SKIP_INFER},
        {"/node/test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn", NULL,
         CORPUS_SKIP_INFER},
        {"/node/test_adam_multiple",
         "ONNX 1.12's expected output differs from later releases' (which we match)",
         CORPUS_SKIP_DATA},
        {"/node/test_cast_BFLOAT16_to_FLOAT", "ONNX 1.12 stores BFLOAT16 data as UINT16", CORPUS_SKIP_DATA},
        {"/node/test_cast_FLOAT_to_BFLOAT16", "ONNX 1.12 stores BFLOAT16 data as UINT16", CORPUS_SKIP_DATA},
        {"/node/test_castlike_BFLOAT16_to_FLOAT", "ONNX 1.12 stores BFLOAT16 data as UINT16", CORPUS_SKIP_DATA},
        {"/node/test_castlike_BFLOAT16_to_FLOAT_expanded",
         "ONNX 1.12 stores BFLOAT16 data as UINT16", CORPUS_SKIP_DATA},
        {"/node/test_castlike_FLOAT_to_BFLOAT16", "ONNX 1.12 stores BFLOAT16 data as UINT16", CORPUS_SKIP_DATA},
        {"/node/test_castlike_FLOAT_to_BFLOAT16_expanded",
         "ONNX 1.12 stores BFLOAT16 data as UINT16", CORPUS_SKIP_DATA},
        {"/pytorch-converted/test_PixelShuffle",
         "ONNX 1.12's model has a Constant-1 of int64, which that schema does not allow",
         CORPUS_SKIP_ALL},
        {"/pytorch-operator/test_operator_repeat",
         "ONNX 1.12's model has a Constant-1 of int64, which that schema does not allow",
         CORPUS_SKIP_ALL},
        {"/pytorch-operator/test_operator_repeat_dim_overflow",
         "ONNX 1.12's model has a Constant-1 of int64, which that schema does not allow",
         CORPUS_SKIP_ALL},
    };
    if (!corpus_in_system_data(path))
        return NULL;
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof skips / sizeof skips[0]; i++) {
        if (!(skips[i].what & what))
            continue;
        size_t k = strlen(skips[i].suffix);
        /* the case folder, or a file inside it */
        if ((n >= k && !strcmp(path + n - k, skips[i].suffix)) ||
            (strstr(path, skips[i].suffix) &&
             strstr(path, skips[i].suffix)[k] == '/'))
            return skips[i].why ? skips[i].why : runtime_sizes;
    }
    return NULL;
}

/* The skips of a test that runs the case's data (evaluator, optimizer). */
static inline const char *corpus_skip_why(const char *path)
{
    return corpus_skip_why_for(path, CORPUS_SKIP_ALL | CORPUS_SKIP_DATA);
}

/* Takes ownership of s. */
static inline void corpus_push(CorpusList *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        char **q = realloc(l->p, l->cap * sizeof *q);
        if (!q)
            abort();
        l->p = q;
    }
    l->p[l->n++] = s;
}

static inline int corpus_ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* "dir/name", malloc'd. */
static inline char *corpus_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        abort();
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* A model is a *.onnx that is a regular file, directly or through a
 * symlink: a FIFO or a folder with that name is never opened as one. */
static inline int corpus_is_model(const char *path, const char *name)
{
    struct stat st;
    return corpus_ends_with(name, ".onnx") && stat(path, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* Whether path is a real folder; lstat, so a symlinked one is not. */
static inline int corpus_is_real_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static inline void corpus_walk_at(const char *dir, CorpusList *out, int depth)
{
    DIR *d = depth < CORPUS_MAX_DEPTH ? opendir(dir) : NULL;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = corpus_join(dir, e->d_name);
        if (corpus_is_real_dir(p)) {
            corpus_walk_at(p, out, depth + 1);
        } else if (corpus_is_model(p, e->d_name)) {
            corpus_push(out, p);
            continue;
        }
        free(p);
    }
    closedir(d);
}

/* Appends every model under dir, in directory order (see corpus_sort). A
 * missing dir adds nothing. */
static inline void corpus_walk(const char *dir, CorpusList *out)
{
    corpus_walk_at(dir, out, 0);
}

static inline int corpus_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts by path: readdir order differs between file systems. */
static inline void corpus_sort(CorpusList *l)
{
    if (l->n)
        qsort(l->p, l->n, sizeof *l->p, corpus_cmp_str);
}

static inline void corpus_free(CorpusList *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->p[i]);
    free(l->p);
    memset(l, 0, sizeof *l);
}

/* Reads the whole file into *out (malloc'd, not NULL even when the file is
 * empty) and its size into *len. Returns 0, or -1 with errno set when the
 * file cannot be opened or a read fails: a short read must not pass for a
 * shorter model. */
static inline int corpus_read_all(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16, n = 0, k;
    uint8_t *p = malloc(cap);
    if (!p)
        abort();
    while ((k = fread(p + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            cap *= 2;
            uint8_t *q = realloc(p, cap);
            if (!q)
                abort();
            p = q;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(p);
        return -1;
    }
    *out = p;
    *len = n;
    return 0;
}

/* The case folders (those with a model.onnx) directly under dir, sorted. */
static inline void corpus_cases_in(const char *dir, CorpusList *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    CorpusList l = {0};
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *c = corpus_join(dir, e->d_name);
        char *m = corpus_join(c, "model.onnx");
        if (corpus_is_model(m, "model.onnx"))
            corpus_push(&l, c);
        else
            free(c);
        free(m);
    }
    closedir(d);
    corpus_sort(&l);
    for (size_t i = 0; i < l.n; i++)
        corpus_push(out, l.p[i]);
    free(l.p);
}


/* A deep copy of m through the wire format, or NULL. */
static inline IrModel *corpus_copy_model(const IrModel *m)
{
    uint8_t *buf;
    size_t len;
    IrError err;
    IrModel *out = NULL;
    if (save_model_buffer(m, &buf, &len, &err))
        return NULL;
    if (load_model_buffer(buf, len, m->dir, "copy", NULL, &out, &err))
        out = NULL;
    free(buf);
    return out;
}

/* Whether m passes the checker; the first broken rule goes to why. */
static inline int corpus_valid(IrModel *m, char *why, size_t cap)
{
    ChkReport rep;
    int bad = chk_model(m, &rep);
    if (bad && why)
        snprintf(why, cap, "%s", chk_first_error(&rep) ? chk_first_error(&rep) : "invalid");
    chk_report_free(&rep);
    return !bad;
}

#endif
