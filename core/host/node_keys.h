/* node_keys.h - a YAML mapping's keys as node.c parses it, for the
 * duplicate check. Up to 32 keys a new one is compared with each; past
 * that, an open-addressed table of the keys' indices by hash, grown to
 * keep it at most half full. Compared pairwise, a file's mapping of 40,000
 * keys that share a long prefix held the host's thread for 102 s (a
 * `shoalctl diff` of it, any control client's). The hash is keyed
 * (runtime/hash.h): with FNV-1a, 32,768 keys made to share one hash held
 * it for 8 s. */
#ifndef SHOAL_HOST_NODE_KEYS_H
#define SHOAL_HOST_NODE_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "host/node.h"

typedef struct shoal_node_keys_s {
    struct {
        uint32_t hash, at; /* at: the key's index + 1; 0: empty */
    } * slot;
    size_t cap; /* a power of two; 0: not built yet */
} shoal_node_keys_t;

/* The index of the key among keys[0 .. n) written as `text`, or n when
 * there is none -- then text is noted as keys[n], the one appended next.
 * SIZE_MAX: no memory for the table. ix starts zeroed; free its slot. */
size_t shoal__node_keys_find_add(shoal_node_keys_t *ix, shoal_node_t *const *keys, size_t n,
                                 const char *text);

#endif
