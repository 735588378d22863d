/* worker.h - a dispatcher thread: its ring, its caches, its handler context,
 * and what the monitor watches (monitor.h).
 *
 * A runtime has `nthreads` workers that run from create to destroy, and
 * `nslots - nthreads` slots for compensating workers (ids nthreads ..
 * nslots - 1) that the monitor starts while workers are stuck in a handler
 * and that retire when the stall ends. Everything indexed by worker id
 * (counter stripes, steal bookkeeping, thread caches) is sized for nslots.
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

/* A compensating slot's thread (xstate). */
enum {
    SHOAL_EXTRA_OFF = 0,  /* no thread */
    SHOAL_EXTRA_ON = 1,   /* started by the monitor, running or parked */
    SHOAL_EXTRA_DONE = 2, /* retired: left its loop, to be joined by the monitor */
};

/* The watch flag: what the monitor is doing about the current callback. */
enum {
    SHOAL_WATCH_NONE = 0,
    SHOAL_WATCH_PROBE = 1,    /* the monitor is checking whether it is still inside it */
    SHOAL_WATCH_CAPTURED = 2, /* it is listed as a stall: its end is reported */
};

typedef struct shoal_worker_s {
    shoal_ring_t ring;
    /* written by this worker only */
    alignas(64) shoal_runtime_t *rt;
    uint32_t id;
    uint32_t extra; /* a compensating slot (id >= nthreads) */
    uint32_t spinning;
    uint32_t took_global; /* last pick came from the global ring */
    uint64_t rng;
    uint32_t *seen_progress; /* per slot: its ring progress at our last look */
    pthread_t thread;
    shoal_tcache_t tc;
    struct shoal_ctx_s ctx;
    /* The monitor's view (monitor.c): watch_seq is written by this worker
     * on entering and leaving every callback, watch_flag by the monitor. */
    alignas(64) _Atomic uint64_t watch_seq; /* odd while inside a callback */
    _Atomic uint32_t watch_flag;            /* SHOAL_WATCH_* (futex word) */
    /* written by wakers: 1 while parked (futex word); by the monitor: retire
     * (a compensating worker leaves at its next safe point), xstate */
    alignas(64) _Atomic uint32_t parked;
    _Atomic uint32_t retire;
    _Atomic uint32_t xstate; /* SHOAL_EXTRA_*, compensating slots only */
} shoal_worker_t;

/* Sets up every slot and starts the nthreads workers. */
int shoal__workers_start(shoal_runtime_t *rt);
/* Wakes every worker for exit and joins them, compensating ones included
 * (the monitor has stopped: no new one starts). */
void shoal__workers_join(shoal_runtime_t *rt);
void shoal__workers_free(shoal_runtime_t *rt);

/* Makes `a` runnable (it was just moved IDLE -> SCHEDULED by the caller):
 * onto the caller's own ring if it is a worker of rt, else (or when the
 * caller has set tc->push_global, for another worker to take) the global
 * ring, which that worker then looks past once. Wakes a parked worker when
 * one is parked. */
void shoal__sched_push(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a);

/* The worker's ring is non-empty while siblings are parked and none is
 * looking for work: wake one so it can steal (called in a long turn: before
 * its second message and every 16th after, turn.c).
 * Inline: most calls find the ring empty or a sibling looking. */
void shoal__sched_share_slow(shoal_worker_t *w);
static inline void shoal__sched_share(shoal_worker_t *w)
{
    /* The ring is ours: its tail is our own store, its head moves only
     * forward (a thief's steal), so a stale head reads it longer. */
    if (atomic_load_explicit(&w->ring.tail, memory_order_relaxed) !=
        atomic_load_explicit(&w->ring.head, memory_order_relaxed))
        shoal__sched_share_slow(w);
}

/* The monitor: a stuck worker's ring holds work: wake a parked worker if
 * none is looking, as shoal__sched_share does for a worker that runs. */
void shoal__sched_wake(shoal_runtime_t *rt);

/* The monitor, in its own thread: start compensating slot i (its xstate is
 * OFF). SHOAL_OK or SHOAL_ENOMEM (no thread). */
int shoal__extra_start(shoal_runtime_t *rt, unsigned i);
/* The monitor: ask compensating slot i (ON) to retire at its next safe
 * point, waking it if it sleeps. */
void shoal__extra_retire(shoal_runtime_t *rt, unsigned i);

/* A callback's end while the monitor has flagged it (monitor.c). */
void shoal__watch_flagged(shoal_worker_t *w);

/* Around every behaviour callback (actor.c, handle.h): watch_seq goes odd, then even.
 * Two stores on the worker's own line and a load; no clock. The release on
 * entry publishes the turn's ctx fields to a monitor that acquires the odd
 * value. On leaving, the flag is read after the even store: the compiler
 * keeps that order (signal fence) and the monitor's membarrier supplies the
 * processor's (monitor.c, CAPTURE). */
static inline uint64_t shoal__watch_enter(shoal_worker_t *w)
{
    uint64_t s = atomic_load_explicit(&w->watch_seq, memory_order_relaxed) + 1;
    /* release: pairs with the monitor's acquire load of watch_seq. */
    atomic_store_explicit(&w->watch_seq, s, memory_order_release);
    return s;
}

/* s: what shoal__watch_enter returned. */
static inline void shoal__watch_leave(shoal_worker_t *w, uint64_t s)
{
    atomic_store_explicit(&w->watch_seq, s + 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&w->watch_flag, memory_order_relaxed) != 0, 0))
        shoal__watch_flagged(w);
}

/* After a panic unwound past shoal__watch_leave: leave that callback. */
static inline void shoal__watch_unwound(shoal_worker_t *w)
{
    uint64_t s = atomic_load_explicit(&w->watch_seq, memory_order_relaxed);
    if (s & 1)
        shoal__watch_leave(w, s);
}

#endif
