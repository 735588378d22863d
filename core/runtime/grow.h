/* grow.h - room for one more item in an array that doubles as it fills. */
#ifndef SHOAL_RUNTIME_GROW_H
#define SHOAL_RUNTIME_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* An array `items` of *cap slots of elem bytes holds n: returns it as is if
 * there is room for one more, else reallocated to twice the slots (first
 * when empty) with *cap updated. NULL when memory runs out: items and *cap
 * are then unchanged, and still the caller's. */
static inline void *shoal__grow(void *items, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap)
        return items;
    size_t want = *cap ? *cap * 2 : first;
    void *more = realloc(items, want * elem);
    if (more != NULL)
        *cap = want;
    return more;
}

#endif
