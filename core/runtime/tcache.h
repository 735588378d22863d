/* tcache.h - what one thread keeps for one runtime: free envelopes, free
 * actor slots and its own counters.
 *
 * Every worker has one inside its worker struct. Any other thread that
 * sends, spawns or calls gets one on first use, found through a pthread key
 * of the runtime; it is returned to the runtime when the thread exits, and
 * freed with the runtime. Only the owning thread writes a tcache; counters
 * are atomics written with relaxed load+store and read by shoal_runtime_stats.
 */
#ifndef SHOAL_RUNTIME_TCACHE_H
#define SHOAL_RUNTIME_TCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shoal/types.h"

struct shoal_env_s;
struct shoal_worker_s;

#define SHOAL_ENV_BATCH 64u   /* envelopes moved to/from the depot at once */
#define SHOAL_ENV_STACK 128u  /* free envelopes a thread keeps: two batches */
#define SHOAL_ENV_RESERVE 64u /* envelopes the runtime keeps back (envelope.c) */
#define SHOAL_SLOT_CACHE 64u  /* free actor slots kept per thread */

/* One counter per shoal_runtime_stats_t field that threads produce. */
/* One counter per line. */
/* clang-format off */
#define SHOAL_TSTATS_MAP(X) \
    X(actors_spawned) \
    X(actors_ended) \
    X(msgs_sent) \
    X(msgs_refused) \
    X(msgs_noproc) \
    X(msgs_handled) \
    X(msgs_dropped) \
    X(timer_refused) \
    X(replies_late) \
    X(turns) \
    X(steals) \
    X(parks) \
    X(wakes) \
    X(env_slabs) \
    X(heap_payloads) \
    X(unbounded_pushed) \
    X(unbounded_popped) \
    X(refused_queued)
/* clang-format on */

typedef struct shoal_tstats_s {
#define SHOAL__TSTAT_FIELD(name) _Atomic uint64_t name;
    SHOAL_TSTATS_MAP(SHOAL__TSTAT_FIELD)
#undef SHOAL__TSTAT_FIELD
} shoal_tstats_t;

/* Single-writer increment: no locked instruction. */
#define SHOAL_STAT_ADD(tc, field, n)                                                               \
    atomic_store_explicit(&(tc)->stats.field,                                                      \
                          atomic_load_explicit(&(tc)->stats.field, memory_order_relaxed) + (n),    \
                          memory_order_relaxed)

/* Where this thread sends next in a pool it forwards to (pool/forward.c):
 * a small direct-mapped cache keyed by the pool record. */
#define SHOAL_POOL_CURSORS 8u
typedef struct shoal_pool_cursor_s {
    const struct shoal_pool_s *pool;
    uint32_t next;
} shoal_pool_cursor_t;

typedef struct shoal_tcache_s {
    shoal_runtime_t *rt;
    struct shoal_worker_s *worker; /* NULL: not a dispatcher thread */
    uint32_t env_nfree;            /* envs[0 .. env_nfree): free, the newest last */
    uint32_t nslots;
    uint32_t slots[SHOAL_SLOT_CACHE];
    shoal_tstats_t stats;
    /* pool forwarding (runtime/qsbr.h, pool/forward.c) */
    _Atomic uint64_t qs; /* odd while inside a read-side region */
    bool in_region;
    uint32_t pool_sample; /* counts forwards; every 16th is timed */
    /* Set around one send: the actor it makes runnable goes onto the global
     * ring, not this worker's own (sched/worker.c shoal__sched_push). */
    bool push_global;
    /* Call references handed out by this thread: ref_next .. ref_end, a
     * block taken from the runtime's count (call.c: shoal__ref_next). */
    uint64_t ref_next, ref_end;
    /* This cache's number, never another's in the process (a thread's
     * take from a checkout pool is known by it: checkout_api.c). Its
     * address is not: a thread's cache freed at its end is often the next
     * thread's. */
    uint64_t serial;
    shoal_pool_cursor_t cursors[SHOAL_POOL_CURSORS];
    struct shoal_env_s *envs[SHOAL_ENV_STACK]; /* envelope.c */
    struct shoal_tcache_s *next, *prev;        /* the runtime's list of foreign caches */
} shoal_tcache_t;

void shoal__tcache_init(shoal_tcache_t *tc, shoal_runtime_t *rt, struct shoal_worker_s *w);
/* Returns envelopes and slots to the runtime. */
void shoal__tcache_flush(shoal_tcache_t *tc);

/* The calling thread's cache for rt; NULL only on ENOMEM. */
shoal_tcache_t *shoal__tcache_get(shoal_runtime_t *rt);
/* A worker thread's own cache for rt, from its start (tc) to its end
 * (NULL): what shoal__tcache_get returns on that thread meanwhile; or a
 * foreign cache made for a thread before it started (the timer's), which
 * the thread's end then frees as any foreign cache. */
void shoal__tcache_bind(shoal_runtime_t *rt, shoal_tcache_t *tc);
/* Whether the calling thread is a dispatcher thread of any runtime (its
 * worker's cache bound): a caller that must never block there asks this,
 * not only whether it is one of a given runtime's. */
bool shoal__tcache_dispatching(void);
/* A foreign cache, in the runtime's list (freed with the runtime's key at
 * the latest) and bound to no thread yet; NULL on ENOMEM. */
shoal_tcache_t *shoal__tcache_new_foreign(shoal_runtime_t *rt);

/* The runtime's pthread key for foreign caches (create / delete). */
int shoal__tcache_key_init(shoal_runtime_t *rt);
void shoal__tcache_key_fini(shoal_runtime_t *rt);

/* Worker i's cache (worker.c). */
shoal_tcache_t *shoal__worker_tcache(shoal_runtime_t *rt, unsigned i);

/* Sums every thread's counters into *out (fields as in tstats). */
void shoal__tcache_sum(shoal_runtime_t *rt, shoal_tstats_t *out);

#endif
