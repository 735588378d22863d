/* worker.h - a dispatcher thread: its ring, its caches, its handler context.
 */
#ifndef SHOAL_SCHED_WORKER_H
#define SHOAL_SCHED_WORKER_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "actor/ctx.h"
#include "runtime/tcache.h"
#include "sched/ring.h"

typedef struct shoal_worker_s {
    shoal_ring_t ring;
    /* written by this worker only */
    alignas(64) shoal_runtime_t *rt;
    uint32_t id;
    uint32_t spinning;
    uint32_t took_global; /* last pick came from the global ring */
    uint64_t rng;
    uint32_t *seen_progress; /* per sibling: its ring progress at our last look */
    pthread_t thread;
    shoal_tcache_t tc;
    struct shoal_ctx_s ctx;
    /* written by wakers: 1 while parked (futex word) */
    alignas(64) _Atomic uint32_t parked;
} shoal_worker_t;

int shoal__workers_start(shoal_runtime_t *rt);
/* Wakes every worker for exit and joins them. */
void shoal__workers_join(shoal_runtime_t *rt);
void shoal__workers_free(shoal_runtime_t *rt);

/* Makes `a` runnable (it was just moved IDLE -> SCHEDULED by the caller):
 * onto the caller's own ring if it is a worker of rt, else the global ring.
 * Wakes a parked worker when one is parked. */
void shoal__sched_push(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a);

/* The worker's ring is non-empty while siblings are parked and none is
 * looking for work: wake one so it can steal (called between messages). */
void shoal__sched_share(shoal_worker_t *w);

#endif
