/*
 * mem.h - memory every room allocates through (prefix mem_).
 *
 * Allocation failure is not an error a caller could report usefully in
 * the middle of an edit, so these print one line and abort; sizes are
 * overflow-checked before anything is asked of the allocator.
 */
#ifndef OC_MEM_H
#define OC_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* Prints "onnx-convert: out of memory" and aborts: for memory of another
 * kind (a mapping) that could not be had. */
_Noreturn void mem_oom(void);

void *mem_alloc(size_t n);                 /* zeroed */
void *mem_array(size_t n, size_t size);    /* zeroed, overflow-checked */
void *mem_grow(void *p, size_t n, size_t size); /* realloc, overflow-checked */
char *mem_strdup(const char *s);           /* NULL stays NULL */

/* Overflow-checked size arithmetic: false on overflow. */
bool mem_mul_size(size_t a, size_t b, size_t *out);
bool mem_add_size(size_t a, size_t b, size_t *out);

#endif
