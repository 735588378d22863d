/* host_watch.c - what the host watches while it runs: pools whose messages
 * in flight pass their warn_queue (shoal__host_watch, once a second), and
 * handlers stalled past runtime.stall_warn (the status lines of
 * shoal__host_stall_lines; the drain's report of those still stuck reads
 * the same list). See host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/source.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "sched/bulkhead.h"
#include "sched/monitor.h"

/* ---- memory ---------------------------------------------------------------- */

/* How long the watch waits for an isolated pool's counts, as the table
 * (table.c): shoald's thread must not wait on a supervisor that holds
 * them; the pool is looked at again the next second. */
#define WATCH_PATIENCE_MS 20u

void shoal__host_watch(shoal_host_t *h)
{
    shoal__host_sources_watch(h);
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->cp == NULL || hp->cp->warn_queue == 0)
            continue;
        shoal_pool_stats_t st;
        if (!shoal__pool_counts(hp->rec, &st, WATCH_PATIENCE_MS))
            continue;
        uint64_t warn = hp->cp->warn_queue;
        if (!hp->over_warn && st.queue_depth > warn) {
            hp->over_warn = true;
            shoal__host_log(h, SHOAL_LOG_WARN,
                            "pool %s: %" PRIu64 " messages queued, past its warn_queue %" PRIu64
                            " (each holds memory until handled: more workers, bounded mailboxes "
                            "or runtime.max_queued bound it)",
                            hp->name, st.queue_depth, warn);
        } else if (hp->over_warn && st.queue_depth <= warn - warn / 10) {
            hp->over_warn = false;
            shoal__host_log(h, SHOAL_LOG_INFO,
                            "pool %s: %" PRIu64
                            " messages queued, back below its warn_queue %" PRIu64,
                            hp->name, st.queue_depth, warn);
        }
    }
}

/* ---- stalls ------------------------------------------------------------------ */

shoal_stall_t *shoal__host_stalls_now(shoal_host_t *h, bool all, size_t *n)
{
    size_t want = shoal__stalls(h->rt, NULL, 0, all);
    shoal_stall_t *s = want != 0 ? calloc(want, sizeof *s) : NULL;
    *n = s != NULL ? shoal__stalls(h->rt, s, want, all) : 0;
    if (*n > want)
        *n = want; /* more came meanwhile: the ones copied */
    return s;
}

#define STALL_LINES_MAX 16

const char *shoal__host_stall_lines(shoal_host_t *h)
{
    size_t n;
    shoal_stall_t *s = shoal__host_stalls_now(h, false, &n);
    size_t need = 320 + (n < STALL_LINES_MAX ? n : STALL_LINES_MAX) * 400;
    if (need > h->stall_cap) {
        char *t = realloc(h->stall_text, need);
        if (t == NULL) {
            free(s);
            return "";
        }
        h->stall_text = t;
        h->stall_cap = need;
    }
    size_t len = 0;
    h->stall_text[0] = '\0';
    for (size_t i = 0; i < n && i < STALL_LINES_MAX; i++) {
        char where[224];
        shoal__stall_where(&s[i], where, sizeof where);
        len += (size_t)snprintf(h->stall_text + len, h->stall_cap - len,
                                "stalled <%" PRIu32 ".%" PRIu32 "> %s for %" PRIu64 " ms (%s)\n",
                                shoal__pid_slot(s[i].pid), shoal__pid_gen(s[i].pid), s[i].name,
                                s[i].elapsed_ns / 1000000u, where);
    }
    if (n > STALL_LINES_MAX)
        len += (size_t)snprintf(h->stall_text + len, h->stall_cap - len, "stalled: %zu more\n",
                                n - STALL_LINES_MAX);
    uint64_t stalls, started, extra;
    shoal__monitor_counts(h->rt, &stalls, &started, &extra);
    if (extra != 0)
        len += (size_t)snprintf(
            h->stall_text + len, h->stall_cap - len,
            "compensating threads %" PRIu64 " (for handlers that do not return)\n", extra);
    uint64_t held, held_total;
    shoal__bulkhead_counts(h->rt, &held, &held_total);
    if (held != 0)
        snprintf(h->stall_text + len, h->stall_cap - len,
                 "held back %" PRIu64 " members (new ones, and those of pools with a stuck "
                 "handler: they wait for a stuck one to return)\n",
                 held);
    free(s);
    return h->stall_text;
}
