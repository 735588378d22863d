/* elastic.h - what an elastic pool's actor keeps between its ticks
 * (elastic.c: idle expiry; autoscale.c: the readings autoscale decides
 * on). Owned by the pool's actor: touched in its turns only. */
#ifndef SHOAL_POOL_ELASTIC_H
#define SHOAL_POOL_ELASTIC_H

#include <stdbool.h>
#include <stdint.h>

#include "pool/pool.h"

/* A forward pool's worker as the tick last saw it (elastic.c). */
typedef struct shoal_seen_s {
    shoal_pid_t pid;
    uint32_t deq;
    uint64_t since;
} shoal_seen_t;

/* Autoscale's sums at the last tick, and its state (autoscale.c). */
typedef struct shoal_autoscale_state_s {
    bool primed; /* the sums below have been read once */
    uint64_t at_ns;
    uint64_t busy_ns, forwarded, unhandled, settled;
    uint64_t wait[SHOAL_HIST_BUCKETS];
    uint32_t live;           /* workers at the last tick */
    uint64_t pressure_since; /* 0: no pressure now */
    uint64_t calm_since;     /* 0: not calm now */
    uint64_t changed_at;     /* the last change of size (a decision or a command), or 0 */
} shoal_autoscale_state_t;

struct shoal_elastic_s {
    shoal_seen_t *seen; /* by FIFO slot: the record's cap of them */
    shoal_autoscale_state_t as;
};

#endif
