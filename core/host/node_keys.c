/* node_keys.c - a mapping's keys for the duplicate check (node_keys.h). */
#include "host/node_keys.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/hash.h"

#define KEYS_LINEAR 32u /* keys compared one by one, before the table */

static uint32_t key_hash(const char *s) { return (uint32_t)shoal__name_hash(s); }

/* Notes key index i, of hash h, in the table. */
static void key_put(shoal_node_keys_t *ix, size_t i, uint32_t h)
{
    size_t k = h & (ix->cap - 1);
    while (ix->slot[k].at != 0)
        k = (k + 1) & (ix->cap - 1);
    ix->slot[k].hash = h;
    ix->slot[k].at = (uint32_t)i + 1;
}

size_t shoal__node_keys_find_add(shoal_node_keys_t *ix, shoal_node_t *const *keys, size_t n,
                                 const char *text)
{
    if (n < KEYS_LINEAR) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(keys[i]->text, text) == 0)
                return i;
        return n;
    }
    if ((n + 1) * 2 > ix->cap) {
        size_t cap = ix->cap != 0 ? ix->cap * 2 : 4 * KEYS_LINEAR;
        while ((n + 1) * 2 > cap)
            cap *= 2;
        free(ix->slot);
        if ((ix->slot = calloc(cap, sizeof *ix->slot)) == NULL) {
            ix->cap = 0;
            return SIZE_MAX;
        }
        ix->cap = cap;
        for (size_t i = 0; i < n; i++)
            key_put(ix, i, key_hash(keys[i]->text));
    }
    uint32_t h = key_hash(text);
    for (size_t k = h & (ix->cap - 1); ix->slot[k].at != 0; k = (k + 1) & (ix->cap - 1))
        if (ix->slot[k].hash == h && strcmp(keys[ix->slot[k].at - 1]->text, text) == 0)
            return ix->slot[k].at - 1;
    key_put(ix, n, h);
    return n;
}
