/* monitor.h - watching the dispatcher for handlers that do not return
 * (after Go's sysmon), compensating for the threads they hold, and listing
 * them.
 *
 * The timer thread runs the monitor (timer.c): no thread of its own, so a
 * runtime still has threads + 1 threads while nothing is stuck. It ticks
 * every tick_ns while any worker is awake and sleeps while every worker is
 * parked (a worker leaving park wakes it; worker.c has the pair).
 *
 * Settings, from stall_warn:
 *   handoff = min(stall_warn, 100 ms): a worker inside one callback that
 *             long (as first seen by the monitor) is stuck, and is listed
 *             (shoal__stalls with all). While workers are stuck, work is
 *             queued (global ring, any ring) and no worker is free to take
 *             it (none spins, none is parked), the monitor starts one
 *             compensating worker a tick, at most one per stuck worker and
 *             max_extra at once (Go's sysmon hands a P stuck in a syscall to
 *             a new M the same way, when it has work).
 *   warn    = stall_warn: the stall is logged once, and listed for status
 *             and inspect; its end is logged once.
 *   tick    = handoff / 5, within 10..100 ms. Elapsed times are measured
 *             from the monitor's first sight, so they are at most one tick
 *             short.
 * A compensating worker retires at its next safe point once fewer workers
 * are stuck than compensating ones run (the one retired is never itself
 * stuck); the thread count returns to `threads` when every stall has
 * ended.
 */
#ifndef SHOAL_SCHED_MONITOR_H
#define SHOAL_SCHED_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor/group.h"
#include "shoal/types.h"

struct shoal_worker_s;
typedef struct shoal_monitor_s shoal_monitor_t;

/* The most groups a stalled actor is listed under (its own, the one that
 * one is a member of, ...: actor/group.h). */
#define SHOAL_STALL_GROUPS_MAX SHOAL_GROUP_MAX_NESTING

/* A handler that has not returned. */
typedef struct shoal_stall_s {
    shoal_pid_t pid;     /* SHOAL_PID_NONE if the monitor could not read it */
    unsigned thread;     /* worker id; >= threads: a compensating worker */
    uint64_t elapsed_ns; /* in that callback, at least */
    bool warned;         /* past stall_warn (it was logged) */
    char name[128];      /* as the actor's log lines name it ("group/behaviour") */
    char group[64];      /* its group's name, "" for an actor in none */
    char behaviour[64];
    /* The group records it counts for (its own group, then each one above),
     * for comparison only; NULL-terminated. */
    const void *groups[SHOAL_STALL_GROUPS_MAX + 1];
} shoal_stall_t;

/* Where a stall is, as the monitor's log lines say it: "pool api,
 * behaviour echo, thread 1" (or without the pool), into buf. */
void shoal__stall_where(const shoal_stall_t *s, char *buf, size_t size);

/* Sets rt->monitor up (after the workers exist). warn_ms >= 1, max_extra:
 * compensating workers at most (rt->nslots - rt->nthreads). SHOAL_ENOMEM. */
int shoal__monitor_create(shoal_runtime_t *rt, uint64_t warn_ms, unsigned max_extra);
/* Frees it; the timer thread and every worker have stopped. */
void shoal__monitor_destroy(shoal_runtime_t *rt);

/* One look at every worker (the timer thread, now = shoal__now_ns()):
 * stalls captured, logged and ended, compensating workers started and
 * retired. Returns when to look next, or 0 to sleep until kicked (every
 * live worker is parked; rt->mon_idle is 1 then). */
uint64_t shoal__monitor_tick(shoal_runtime_t *rt, uint64_t now);

/* Wakes the monitor from its idle sleep (any thread; timer.c). */
void shoal__monitor_kick(shoal_runtime_t *rt);

/* Copies up to cap of the current stalls into out and returns how many
 * there are: with `all`, every worker stuck past the hand-off mark; else
 * only those past stall_warn. Any thread. */
size_t shoal__stalls(shoal_runtime_t *rt, shoal_stall_t *out, size_t cap, bool all);

/* How many workers are inside a behaviour callback now, however long they
 * have been (shoal__stalls lists only those past the hand-off mark: one
 * that entered less than ~100 ms ago is not there yet). A look at each
 * slot's watch_seq; any thread. */
size_t shoal__in_callbacks(shoal_runtime_t *rt);

/* Stalls reported past stall_warn so far; compensating workers started so
 * far, and alive now. */
void shoal__monitor_counts(shoal_runtime_t *rt, uint64_t *stalls, uint64_t *started,
                           uint64_t *live);

#endif
