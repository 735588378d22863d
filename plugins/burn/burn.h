/* burn.h - the burn plugin's protocol (see plugins/burn/README.md).
 *
 * burn.burn does a fixed amount of CPU work per message: `rounds` rounds of
 * xorshift32 (13, 17, 5) over a 32-bit state seeded with v + 1, where v is
 * the message's first 8 bytes read as a native-endian uint64_t (or, for a
 * payload shorter than 8 bytes, the number of messages this actor has
 * worked on so far). With rounds = 50 that is the benchmark spec's xs50, so
 * a burn actor fed v = 0 .. N-1 ends with acc = the spec checksum for N
 * (N = 1000000: 3111071181).
 */
#ifndef SHOAL_PLUGIN_BURN_H
#define SHOAL_PLUGIN_BURN_H

#include <shoal/types.h>

/* A call of this type is answered with a burn_stats_t (reply type the same).
 * Any other call is worked on like a message and answered with the 4-byte
 * result (a uint32_t) under the request's type. */
#define BURN_MSG_STATS 0xFFFF0001u

typedef struct burn_stats_s {
    uint64_t count;  /* messages and calls worked on */
    uint32_t acc;    /* XOR of every result */
    uint32_t rounds; /* the configured rounds */
} burn_stats_t;

#endif
