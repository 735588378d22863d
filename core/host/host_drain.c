/* host_drain.c - the host's end: the sources stopped, then every pool
 * drained, within one deadline; the pools still busy then, and after it
 * the handlers still stuck and the messages lost with them. See host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "host/source.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "sched/bulkhead.h"
#include "sched/futex.h"
#include "sched/monitor.h"

int shoal__host_wait_ended(const shoal_host_pool_t *list, size_t n, uint64_t end_ns,
                           bool (*interrupted)(void *), void *arg)
{
    /* Each is read from its record: one whose actor gets no thread (every
     * dispatcher thread stuck) neither stretches the deadline nor hides
     * its counts. */
    for (;;) {
        if (interrupted != NULL && interrupted(arg))
            return -1;
        int busy = 0;
        for (size_t i = 0; i < n; i++)
            busy += !shoal__pool_is_ended(list[i].rec);
        if (busy == 0 || shoal__now_ns() >= end_ns)
            return busy;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int shoal__host_drain(shoal_host_t *h, uint64_t deadline_ms, bool (*interrupted)(void *), void *arg)
{
    /* One deadline for all: the sources stop first (producers before the
     * pools drain), within it, and the pools drain in what is left. */
    uint64_t end_ns = shoal__deadline_ns(shoal__now_ns(), deadline_ms);
    if (h->nsources != 0) {
        size_t n = h->nsources;
        int left = shoal__host_sources_stop(h, end_ns, interrupted, arg);
        if (left < 0)
            return -1;
        shoal__host_log(h, left ? SHOAL_LOG_WARN : SHOAL_LOG_INFO,
                        "shutdown: %zu source%s stopped%s, the pools drain", n - (size_t)left,
                        n - (size_t)left == 1 ? "" : "s", left ? " (some did not)" : "");
    }
    /* dead-letter targets after the pools that send to them (host_pull.c) */
    int busy = shoal__host_pull_drain_all(h, end_ns, interrupted, arg);
    if (busy < 0)
        return -1;
    for (size_t i = 0; i < h->npools; i++) {
        const shoal_host_pool_t *hp = &h->pools[i];
        if (shoal__pool_is_ended(hp->rec))
            continue;
        shoal_pool_stats_t st;
        shoal__host_peek(hp, &st);
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "shutdown: pool %s still busy after %" PRIu64 " ms: %" PRIu64
                        " in flight, %u worker%s, %u retiring",
                        hp->name, deadline_ms, st.queue_depth, st.pool_size,
                        st.pool_size == 1 ? "" : "s", st.retiring);
    }
    return busy;
}

size_t shoal__host_log_stuck(shoal_host_t *h, const char *when, const char *tail)
{
    size_t n;
    shoal_stall_t *s = shoal__host_stalls_now(h, true, &n);
    for (size_t i = 0; i < n; i++) {
        char where[224];
        shoal__stall_where(&s[i], where, sizeof where);
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "<%" PRIu32 ".%" PRIu32
                        "> %s: %s: still in its handler after %.1f s (%s)%s",
                        shoal__pid_slot(s[i].pid), shoal__pid_gen(s[i].pid), s[i].name, when,
                        (double)s[i].elapsed_ns / 1e9, where, tail);
    }
    free(s);
    uint64_t held, held_total;
    shoal__bulkhead_counts(h->rt, &held, &held_total);
    if (held != 0) /* their pools' busy lines, if any, are theirs */
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "%s: %" PRIu64 " member%s held back waiting for a stuck handler to return "
                        "(sched/bulkhead.h): never run again",
                        when, held, held == 1 ? "" : "s");
    return n;
}

size_t shoal__host_wait_stuck(shoal_host_t *h, uint64_t wait_ms, bool (*interrupted)(void *),
                              void *arg, const char *when)
{
    /* Any handler in a callback, however young: the monitor lists one only
     * past its hand-off mark (~100 ms, monitor.h), and an init entered just
     * before a stop counted as none -- the threads were then joined, and
     * the process hung in the join until the init returned (30 s). */
    struct timespec tick = {0, 10 * 1000 * 1000};
    uint64_t end = shoal__deadline_ns(shoal__now_ns(), wait_ms);
    while (shoal__in_callbacks(h->rt) != 0 && shoal__now_ns() < end &&
           !(interrupted != NULL && interrupted(arg)))
        nanosleep(&tick, NULL);
    size_t inside = shoal__in_callbacks(h->rt);
    /* Left in one: named once the monitor has seen it (its hand-off mark
     * and a tick, 200 ms at most), so that the log says which. */
    uint64_t named = shoal__deadline_ns(shoal__now_ns(), 200);
    while (inside != 0 && shoal__stalls(h->rt, NULL, 0, true) < inside && shoal__now_ns() < named &&
           (inside = shoal__in_callbacks(h->rt)) != 0)
        nanosleep(&tick, NULL);
    size_t logged = shoal__host_log_stuck(h, when, ": not waited for");
    if (inside > logged)
        shoal__host_log(h, SHOAL_LOG_WARN,
                        "%s: %zu handler%s in plugin code for less than the monitor's hand-off "
                        "mark: not waited for",
                        when, inside - logged, inside - logged == 1 ? "" : "s");
    return inside > logged ? inside : logged;
}

void shoal__host_report_lost(shoal_host_t *h)
{
    (void)shoal__host_log_stuck(h, "shutdown", "");
    /* Whatever is not settled now never will be: counted as dropped (the
     * ledger's in flight, settled as its line settles it). The ledger's
     * dropped also holds what was dropped before (a pool stopped, a
     * reload): the line says both, so its sum is the ledger's. */
    shoal_host_counts_t c = shoal__host_ledger_of(h, 0);
    uint64_t settled = c.handled + c.failed + c.dropped + c.dead_lettered;
    uint64_t lost = c.accepted > settled ? c.accepted - settled : 0;
    uint64_t before = c.dropped;
    c.dropped += lost;
    char ledger[256], also[96] = "";
    shoal__host_ledger_text(&c, ledger, sizeof ledger);
    if (before != 0)
        snprintf(also, sizeof also, ", and %" PRIu64 " dropped before (dropped %" PRIu64 " in all)",
                 before, c.dropped);
    shoal__host_log(h, SHOAL_LOG_WARN,
                    "shutdown: %" PRIu64 " message%s lost (queued, or in handlers that did not "
                    "return), counted as dropped%s; ledger: %s",
                    lost, lost == 1 ? "" : "s", also, ledger);
}
