/*
 * milops.c - lookups in the MIL operator table (prefix milop_); the
 * table itself is the generated src/coreml/milops_table.c, sorted by name and
 * then by first target.
 */
#include <string.h>

#include "coreml/milops.h"

/* Index of the first version of op `name` in milop_table, or
 * milop_table_n when the table has no such op. */
static size_t milop_first(const char *name)
{
    size_t lo = 0, hi = milop_table_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(milop_table[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < milop_table_n && !strcmp(milop_table[lo].name, name))
        return lo;
    return milop_table_n;
}

const MilOpSchema *milop_find(const char *name, int target)
{
    if (!name)
        return NULL;
    const MilOpSchema *best = NULL;
    for (size_t i = milop_first(name); i < milop_table_n && !strcmp(milop_table[i].name, name); i++)
        if (milop_table[i].since <= target)
            best = &milop_table[i];
    return best;
}

int milop_since(const char *name)
{
    if (!name)
        return -1;
    size_t i = milop_first(name);
    return i < milop_table_n ? milop_table[i].since : -1;
}
