/* name_index.h - names to their positions in an array that does not change
 * while the index is used (a config's pools, the host's live pools during
 * one plan): open addressing over 2^k slots, at most half full, a slot
 * holding a position + 1 (0: empty). A lookup costs the same for 10 pools
 * or 15,000; a scan of the array for each of its names made a reload or a
 * diff of a 15,000-pool file take 7 s. */
#ifndef SHOAL_HOST_NAME_INDEX_H
#define SHOAL_HOST_NAME_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* The name at position i of arr, or NULL when it is not to be found. */
typedef const char *(*shoal_name_at_t)(const void *arr, size_t i);

typedef struct shoal_name_index_s {
    uint32_t *slot;
    size_t mask; /* slots - 1; 0 with no slots */
} shoal_name_index_t;

/* Indexes the n names of arr (the first of two equal names is found).
 * SHOAL_OK, or SHOAL_ENOMEM: x has no slots, and its user scans arr as it
 * would without one (shoal__name_index_ready says which). */
int shoal__name_index_build(shoal_name_index_t *x, const void *arr, size_t n, shoal_name_at_t at);
/* Whether x was built (a find answers for every name of arr). */
static inline int shoal__name_index_ready(const shoal_name_index_t *x) { return x->slot != NULL; }
/* The position of name in arr, SIZE_MAX if none (x ready). */
size_t shoal__name_index_find(const shoal_name_index_t *x, const void *arr, shoal_name_at_t at,
                              const char *name);
void shoal__name_index_free(shoal_name_index_t *x);

#endif
