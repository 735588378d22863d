/* name_index.c - names to their positions in an array (name_index.h). */
#include "host/name_index.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/hash.h"
#include "shoal/error.h"

int shoal__name_index_build(shoal_name_index_t *x, const void *arr, size_t n, shoal_name_at_t at)
{
    *x = (shoal_name_index_t){0};
    if (n >= UINT32_MAX / 2)
        return SHOAL_ENOMEM;
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    if ((x->slot = calloc(slots, sizeof *x->slot)) == NULL)
        return SHOAL_ENOMEM;
    x->mask = slots - 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = at(arr, i);
        if (name == NULL)
            continue;
        size_t s = (size_t)shoal__name_hash(name) & x->mask;
        while (x->slot[s] != 0 && strcmp(at(arr, x->slot[s] - 1), name) != 0)
            s = (s + 1) & x->mask;
        if (x->slot[s] == 0) /* the first of equal names stays */
            x->slot[s] = (uint32_t)i + 1;
    }
    return SHOAL_OK;
}

size_t shoal__name_index_find(const shoal_name_index_t *x, const void *arr, shoal_name_at_t at,
                              const char *name)
{
    if (x->slot == NULL || name == NULL)
        return SIZE_MAX;
    for (size_t s = (size_t)shoal__name_hash(name) & x->mask; x->slot[s] != 0;
         s = (s + 1) & x->mask)
        if (strcmp(at(arr, x->slot[s] - 1), name) == 0)
            return x->slot[s] - 1;
    return SIZE_MAX;
}

void shoal__name_index_free(shoal_name_index_t *x)
{
    free(x->slot);
    *x = (shoal_name_index_t){0};
}
