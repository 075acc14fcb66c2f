/*
 * keyset.h - sets of names for linear-time duplicate checks and look-ups
 * (prefix ks_).
 *
 * A key is one or more strings (NULL counts as ""), compared as a whole:
 * (name, domain, overload) identifies a function, a normalized domain an
 * opset import. Each key carries a number (an index, a version) stored
 * with its first insertion. Built on uthash, like the graph's name table,
 * so that a model with 100k attributes or 200k imports is checked in
 * linear time instead of comparing every pair.
 */
#ifndef OC_KEYSET_H
#define OC_KEYSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct KsEntry KsEntry;
typedef struct KsSet {
    KsEntry *head;
} KsSet;

/* Adds the key made of parts[0..n) with value val. Returns false (and
 * keeps the first value) when the key was there already. */
bool ks_add(KsSet *s, const char *const *parts, size_t n, int64_t val);
/* The value of the key made of parts[0..n), or false when absent. */
bool ks_find(const KsSet *s, const char *const *parts, size_t n, int64_t *val);
void ks_free(KsSet *s);

#endif
