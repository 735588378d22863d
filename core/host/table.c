/* table.c - the table shoald prints every second (host.h,
 * shoal__host_table): a top line, then the pools' block and the sources'
 * block, each under its header (and a "reloading: STEP" line under the
 * top one while a reload runs: shoald writes the table from its waits
 * too). Rates are per second since the previous
 * call (marked /s), totals are marked (total), latencies are in
 * microseconds in every row. A pull pool's row reads its buffer where a
 * forward pool's reads its queue (queued_text); after the state, every
 * pool's workers running and idle, and an elastic pool's bounds and
 * autoscale's last busy reading and decisions; a checkout pool's its
 * members and takes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/host.h"
#include "host/source.h"
#include "pool/pool.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

/* How long the table waits for an isolated pool's counts before it says
 * `no answer` (its supervisor holds them while it starts or buries a
 * child). */
#define TABLE_PATIENCE_MS 20u

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* "1m05s", "3h02m", "2d04h" */
static void uptime_text(double s, char *buf, size_t size)
{
    uint64_t t = s > 0 ? (uint64_t)s : 0;
    if (t < 3600)
        snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", t / 60, t % 60);
    else if (t < 86400)
        snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m", t / 3600, t / 60 % 60);
    else
        snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h", t / 86400, t / 3600 % 24);
}

static const char *pool_state(const shoal_host_t *h, const shoal_host_pool_t *hp,
                              const shoal_pool_stats_t *st, bool answered)
{
    if (shoal__pool_is_ended(hp->rec))
        return "ended";
    if (!shoal__host_committed(h, hp)) /* a running reload's: it takes nothing yet */
        return "starting";
    if (!answered)
        return "no answer";
    if (hp->draining || st->state == SHOAL_POOL_DRAINING)
        return "draining";
    return st->state == SHOAL_POOL_DEGRADED ? "degraded" : "running";
}

/* Totals a checkout pool's row names only once they are not 0. */
static size_t checkout_totals(const shoal_pool_stats_t *st, char *buf, size_t size)
{
    const struct {
        const char *name;
        uint64_t n;
    } t[] = {
        {"returned fail", st->returned_fail},
        {"no members", st->error_no_members},
        {"take timeouts", st->take_timeouts},
        {"killed free", st->killed_free},
        {"killed in use", st->killed_in_use},
        {"leases expired", st->lease_expired},
        {"culled", st->culled},
        {"recycled", st->recycled},
        {"start failures", st->start_failures},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0] && n < size; i++)
        if (t[i].n != 0)
            n += (size_t)snprintf(buf + n, size - n, ", %s %" PRIu64, t[i].name, t[i].n);
    return n < size ? n : size - 1;
}

/* The queued column and what follows the state. A forward pool: the
 * messages in flight; after the state its workers in a handler and idle
 * (pond's running and idle), pond's totals (submitted, completed; failed
 * and dropped once not 0) and, once not 0, the senders waiting for room
 * and the resizes: "running (running 3, idle 1, submitted 120, completed
 * 116, waiting 2, resizes 4)". A pull pool: its buffer as depth/capacity,
 * and after the state what its workers hold of what they may, then as a
 * forward pool's: "10/10" ... "running (pull, held 2/2, running 2, idle 0,
 * submitted 40, completed 28)". Its in/s is what the
 * buffer accepted, its refused/s the sends refused because it was full.
 * An elastic pool (host.h): the bounds its workers column moves within,
 * and an autoscaled one's busy ratio at autoscale's last reading and its
 * decisions: "running (running 2, idle 0, bounds 2..16, busy 61%, up 3,
 * down 1)". A checkout pool: its queued takers, and "running (checkout, in
 * use 3/4, free 1, takes 120/s)" with its failure and lifecycle totals
 * once not 0 (", no members 2, culled 1"); its wait columns are the takes'
 * wait for a member. */
static void queued_text(shoal_pool_t *rec, const shoal_pool_stats_t *st,
                        const shoal_pool_stats_t *last, double span, char *queued, size_t qsize,
                        char *kind, size_t ksize)
{
    char words[320] = "", busy[16];
    size_t n = 0;
    if (st->kind == SHOAL_POOL_KIND_CHECKOUT) {
        /* Its queue is of takers; its members in use and free. */
        snprintf(queued, qsize, "%" PRIu32, st->queued);
        n = (size_t)snprintf(
            words, sizeof words,
            "checkout, in use %" PRIu32 "/%" PRIu32 ", free %" PRIu32 ", takes %.0f/s", st->in_use,
            st->pool_size, st->free, (double)(st->takes - last->takes) / span);
        checkout_totals(st, words + n, sizeof words - n);
        snprintf(kind, ksize, " (%s)", words);
        return;
    }
    if (st->kind != SHOAL_POOL_KIND_PULL) {
        snprintf(queued, qsize, "%" PRIu64, st->queue_depth);
        if (st->running + st->idle != 0) /* a pool of pools: its members say */
            n += (size_t)snprintf(words, sizeof words, "running %" PRIu32 ", idle %" PRIu32,
                                  st->running, st->idle);
    } else {
        /* What the workers hold, from the demand (read with the buffer's
         * admission, one moment): the message counters, summed over their
         * stripes while items flow, are no picture of one moment. */
        uint64_t can_hold = (uint64_t)st->pool_size * st->prefetch;
        uint64_t held = can_hold > st->demand ? can_hold - st->demand : 0;
        snprintf(queued, qsize, "%" PRIu64 "/%" PRIu64, st->buffer_depth, st->buffer);
        n += (size_t)snprintf(words, sizeof words,
                              "pull, held %" PRIu64 "/%" PRIu64 ", running %" PRIu32
                              ", idle %" PRIu32,
                              held, can_hold, st->running, shoal__pull_idle(rec));
    }
    /* pond's totals: what the pool accepted and its workers handled, and
     * once not 0 what failed and what was dropped unhandled. */
    if (n < sizeof words)
        n += (size_t)snprintf(words + n, sizeof words - n,
                              "%ssubmitted %" PRIu64 ", completed %" PRIu64, n ? ", " : "",
                              st->messages_forwarded, st->messages_handled);
    if (st->messages_failed != 0 && n < sizeof words)
        n +=
            (size_t)snprintf(words + n, sizeof words - n, ", failed %" PRIu64, st->messages_failed);
    if (st->messages_dropped != 0 && n < sizeof words)
        n += (size_t)snprintf(words + n, sizeof words - n, ", dropped %" PRIu64,
                              st->messages_dropped);
    if (st->waiting != 0 && n < sizeof words)
        n += (size_t)snprintf(words + n, sizeof words - n, "%swaiting %" PRIu32, n ? ", " : "",
                              st->waiting);
    if (st->resizes != 0 && n < sizeof words)
        n += (size_t)snprintf(words + n, sizeof words - n, "%sresizes %" PRIu64, n ? ", " : "",
                              st->resizes);
    if (shoal__host_is_elastic(st) && n < sizeof words)
        n += (size_t)snprintf(words + n, sizeof words - n, "%sbounds %" PRIu32 "..%" PRIu32,
                              n ? ", " : "", st->min_size, st->max_size);
    if (st->autoscale != 0 && n < sizeof words) {
        shoal__host_percent(st->busy, busy, sizeof busy);
        snprintf(words + n, sizeof words - n, "%sbusy %s, up %" PRIu64 ", down %" PRIu64,
                 n ? ", " : "", busy, st->autoscale_ups, st->autoscale_downs);
    }
    if (words[0] != '\0')
        snprintf(kind, ksize, " (%s)", words);
}

static void pool_rows(shoal_host_t *h, FILE *out, double dt)
{
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        shoal_pool_stats_t st;
        bool answered = shoal__pool_peek_within(hp->rec, &st, TABLE_PATIENCE_MS);
        const char *state = pool_state(h, hp, &st, answered);
        if (!answered) { /* numbers we could not read are not shown as zeros */
            fprintf(out, "%-16s %7s %10s %10s %9s %8s %15s %11s %11s %s\n", hp->name, "-", "-", "-",
                    "-", "-", "-", "-", "-", state);
            hp->unread_s += dt; /* the next rates are over this time too */
            continue;
        }
        double span = dt + hp->unread_s;
        char queued[48], kind[328] = "";
        queued_text(hp->rec, &st, &hp->last, span, queued, sizeof queued, kind, sizeof kind);
        bool co = st.kind == SHOAL_POOL_KIND_CHECKOUT;
        uint64_t p50 = co ? st.take_wait_ns[0] : st.queue_wait_ns[0];
        uint64_t p99 = co ? st.take_wait_ns[1] : st.queue_wait_ns[2];
        fprintf(out, "%-16s %7u %10.0f %10.0f %9.0f %8s %15" PRIu64 " %11.1f %11.1f %s%s\n",
                hp->name, st.pool_size,
                (double)(st.messages_forwarded - hp->last.messages_forwarded) / span,
                (double)(st.messages_unhandled - hp->last.messages_unhandled) / span,
                (double)(st.messages_failed - hp->last.messages_failed) / span, queued,
                st.worker_restarts, (double)p50 / 1e3, (double)p99 / 1e3, state, kind);
        hp->last = st;
        hp->unread_s = 0;
    }
}

/* One block: the top line, the pools' header and rows, the sources'. */
static void block(shoal_host_t *h, FILE *out, double seconds)
{
    double dt = seconds > 0 ? seconds : 1;
    char up[32];
    uptime_text((double)(shoal__now_ns() - h->started_ns) / 1e9, up, sizeof up);
    size_t npools = 0, nsources = shoal__host_sources_running(h);
    for (size_t i = 0; i < h->npools; i++)
        npools += !h->pools[i].draining && shoal__host_committed(h, &h->pools[i]);
    fprintf(out, "shoald: generation %" PRIu64 ", up %s, %zu pool%s, %zu source%s, %u thread%s\n",
            h->generation, up, npools, plural(npools), nsources, plural(nsources), h->rt->nthreads,
            plural(h->rt->nthreads));
    if (h->step[0] != '\0') /* a reload runs (the table goes on from its waits) */
        fprintf(out, "reloading: %s\n", h->step);
    fprintf(out, "%-16s %7s %10s %10s %9s %8s %15s %11s %11s %s\n", "pool", "workers", "in/s",
            "refused/s", "failed/s", "queued", "restarts(total)", "wait_p50_us", "wait_p99_us",
            "state");
    pool_rows(h, out, dt);
    if (h->nsources != 0) {
        fprintf(out, "%-16s %-9s %10s %10s %16s\n", "source", "state", "sent/s", "refused/s",
                "restarts(total)");
        shoal__host_sources_table(h, out, seconds);
    }
}

void shoal__host_table(shoal_host_t *h, FILE *out, double seconds, bool tty)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return;
    block(h, mem, seconds);
    if (fclose(mem) != 0) {
        free(text);
        return;
    }
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    /* relaxed: only a count (host.h) */
    uint64_t logged = atomic_load_explicit(&h->log_lines, memory_order_relaxed);
    /* On a terminal: over the previous block (up that many lines, clear to
     * the end of the screen), unless a log line came since it: then below,
     * so that no log line is ever wiped. Piped: plain blocks. */
    if (tty && h->table_lines != 0 && logged == h->table_log_seen)
        fprintf(out, "\033[%zuA\033[J", h->table_lines);
    fwrite(text, 1, len, out);
    if (!tty)
        fputc('\n', out);
    fflush(out);
    free(text);
    h->table_lines = lines;
    h->table_log_seen = atomic_load_explicit(&h->log_lines, memory_order_relaxed);
}
