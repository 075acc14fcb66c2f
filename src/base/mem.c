/*
 * mem.c - allocation that cannot fail silently (prefix mem_).
 */
#include "base/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Out of memory is not a user error we can report usefully mid-edit. */
_Noreturn void mem_oom(void)
{
    fputs("onnx-convert: out of memory\n", stderr);
    abort();
}

void *mem_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        mem_oom();
    return p;
}

void *mem_array(size_t n, size_t size)
{
    size_t total;
    if (!mem_mul_size(n, size, &total))
        mem_oom();
    return mem_alloc(total);
}

void *mem_grow(void *p, size_t n, size_t size)
{
    size_t total;
    if (!mem_mul_size(n, size, &total))
        mem_oom();
    void *q = realloc(p, total ? total : 1);
    if (!q)
        mem_oom();
    return q;
}

char *mem_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = mem_alloc(n);
    memcpy(d, s, n);
    return d;
}

bool mem_mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

bool mem_add_size(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b)
        return false;
    *out = a + b;
    return true;
}
