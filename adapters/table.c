/*
 * table.c - the one adapter table: every family's entries, found by
 * (domain, op, from, to), and the list of version changes that have no
 * correct conversion (adapters/impossible.c).
 *
 * To add a family: write adapters/<family>.c defining
 * `const AdFamily ad_family_<family>` and list it below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/adapters.h"
#include "uthash.h"

#define AD_FAMILIES(X) \
    X(elementwise) \
    X(tensor) \
    X(norm) \
    X(nn) \
    X(ml) \
    X(misc) \
    X(quant) \
    X(control) \
    X(resize) \
    X(sample) \
    X(activation) \
    X(shape) \
    X(reduce) \
    X(einsum) \
    X(index) \
    X(attention) \
    X(random) \
    X(signal) \
    X(rnn) \
    X(sequence)

#define AD_DECLARE(f) extern const AdFamily ad_family_##f;
AD_FAMILIES(AD_DECLARE)
#undef AD_DECLARE

#define AD_LIST(f) &ad_family_##f,
const AdFamily *const ad_families[] = {AD_FAMILIES(AD_LIST)};
#undef AD_LIST
const size_t ad_families_n = sizeof ad_families / sizeof ad_families[0];

const char *ad_kind_name(AdKind k)
{
    static const char *const names[] = {"compatible", "attribute-input", "semantic",
                                        "rename", "expand", "attributes"};
    return (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* The lookup index: "domain|op|from|to" -> entry. */
typedef struct AdIndex {
    char key[128];
    const AdEntry *e;
    const AdImpossible *imp;
    UT_hash_handle hh;
} AdIndex;

static AdIndex *ad_index;

static void ad_key(char *buf, size_t cap, const char *domain, const char *op,
                   int from, int to)
{
    snprintf(buf, cap, "%s|%s|%d|%d", domain ? domain : "", op, from, to);
}

static AdIndex *ad_slot(const char *domain, const char *op, int from, int to)
{
    char key[128];
    ad_key(key, sizeof key, domain, op, from, to);
    AdIndex *x;
    HASH_FIND_STR(ad_index, key, x);
    if (!x) {
        x = mem_alloc(sizeof *x);
        memcpy(x->key, key, sizeof key);
        HASH_ADD_STR(ad_index, key, x);
    }
    return x;
}

/* Builds the index on first use. A key listed twice keeps its first entry;
 * the table test reports duplicates. */
void ad_init(void)
{
    if (ad_index)
        return;
    for (size_t f = 0; f < ad_families_n; f++)
        for (size_t i = 0; i < ad_families[f]->n; i++) {
            const AdEntry *e = &ad_families[f]->e[i];
            AdIndex *x = ad_slot(e->domain, e->op, e->from, e->to);
            if (!x->e)
                x->e = e;
        }
    for (size_t i = 0; i < ad_impossible_n; i++) {
        const AdImpossible *e = &ad_impossible_list[i];
        AdIndex *x = ad_slot(e->domain, e->op, e->from, e->to);
        if (!x->imp)
            x->imp = e;
    }
}

static const AdIndex *ad_lookup(const char *domain, const char *op, int from, int to)
{
    ad_init();
    char key[128];
    ad_key(key, sizeof key, domain, op, from, to);
    AdIndex *x;
    HASH_FIND_STR(ad_index, key, x);
    return x;
}

const AdEntry *ad_find(const char *domain, const char *op, int from, int to)
{
    const AdIndex *x = ad_lookup(domain, op, from, to);
    return x ? x->e : NULL;
}

const AdImpossible *ad_impossible(const char *domain, const char *op, int from, int to)
{
    const AdIndex *x = ad_lookup(domain, op, from, to);
    return x ? x->imp : NULL;
}
