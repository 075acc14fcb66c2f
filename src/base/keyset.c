/*
 * keyset.c - sets of names keyed by one or more strings (prefix ks_).
 */
#include "base/keyset.h"

#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "uthash.h"

struct KsEntry {
    UT_hash_handle hh;
    int64_t val;
    size_t len;
    char key[];
};

/* The parts joined by NUL bytes (names hold none) into a new buffer of
 * *len bytes. */
static char *ks_join(const char *const *parts, size_t n, size_t *len)
{
    size_t total = n;
    for (size_t i = 0; i < n; i++) {
        size_t l = parts[i] ? strlen(parts[i]) : 0;
        if (total > SIZE_MAX - l)
            abort();   /* the strings are in memory: cannot happen */
        total += l;
    }
    char *buf = mem_alloc(total ? total : 1), *p = buf;
    for (size_t i = 0; i < n; i++) {
        size_t l = parts[i] ? strlen(parts[i]) : 0;
        memcpy(p, parts[i] ? parts[i] : "", l);
        p += l;
        *p++ = '\0';
    }
    *len = total;
    return buf;
}

static KsEntry *ks_lookup(const KsSet *s, const char *key, size_t len)
{
    KsEntry *e = NULL;
    HASH_FIND(hh, s->head, key, len, e);
    return e;
}

bool ks_add(KsSet *s, const char *const *parts, size_t n, int64_t val)
{
    size_t len;
    char *key = ks_join(parts, n, &len);
    bool fresh = ks_lookup(s, key, len) == NULL;
    if (fresh) {
        KsEntry *e = mem_array(1, sizeof *e + len);
        e->val = val;
        e->len = len;
        memcpy(e->key, key, len);
        HASH_ADD(hh, s->head, key[0], len, e);
    }
    free(key);
    return fresh;
}

bool ks_find(const KsSet *s, const char *const *parts, size_t n, int64_t *val)
{
    size_t len;
    char *key = ks_join(parts, n, &len);
    KsEntry *e = ks_lookup(s, key, len);
    free(key);
    if (e && val)
        *val = e->val;
    return e != NULL;
}

void ks_free(KsSet *s)
{
    KsEntry *e, *tmp;
    HASH_ITER(hh, s->head, e, tmp) {
        HASH_DEL(s->head, e);
        free(e);
    }
    s->head = NULL;
}
