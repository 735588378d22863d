/* control_status.c - what `status` says (protocol in control.h): the
 * generation, "stopping draining every pool" once shoald stops or
 * "reloading generation N from PATH for T ms: STEP" while a reload runs
 * (STEP: what it waits for, host.h step), "starting generation 1 from
 * PATH for T ms: STEP" while shoald starts, reloads,
 * threads, the ledgers, the control connections, a line per pool, the
 * sources and the stalled handlers. Read from the pools'
 * records, never from their actors: it answers at once whatever the pools
 * and the dispatcher's threads are doing. On the host thread.
 *
 * A pool's line is "pool NAME size N target N in_flight N forwarded N",
 * then, for a pull pool, " pull buffer D/C held H/C idle N refused N",
 * then, for an elastic pool (shoal/pool.h), its facts:
 *   " bounds MIN..MAX waiting N[/MAX_WAITING] [waiting_refused N]
 *     [idle_timeout Dms] [expired N lazy N] [autoscale busy P% [wait_p99 Nus]
 *     [refused N/s] ups N downs N]"
 * and last " draining" or " ended" when it is, or " starting" for one a
 * running reload started and has not committed. A pool with nothing
 * elastic keeps the line it always had.
 *
 * `groups` (shoal__control_groups) says, for each checkout group of the
 * current config, in the config's order:
 *   "group NAME pools N in_use N free N starting N queued N:
 *    POOL (in_use N free N), POOL (...)"
 * the group's members summed, then each pool's; or one line
 * "no groups: no checkout pool names a group".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/control_conn.h"
#include "host/source.h"
#include "sched/futex.h"

/* An elastic pool's facts, as the top of this file shows them; "" for a
 * pool without. */
static void elastic_text(const shoal_pool_stats_t *st, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!shoal__host_is_elastic(st))
        return;
    size_t n = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (n < size)                                                                              \
            n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__);                                 \
    } while (0)
    ADD(" bounds %" PRIu32 "..%" PRIu32 " waiting %" PRIu32, st->min_size, st->max_size,
        st->waiting);
    if (st->max_waiting != 0)
        ADD("/%" PRIu32, st->max_waiting);
    if (st->max_waiting != 0 || st->waiting_refused != 0)
        ADD(" waiting_refused %" PRIu64, st->waiting_refused);
    if (st->idle_timeout_ms != 0)
        ADD(" idle_timeout %" PRIu64 "ms", st->idle_timeout_ms);
    if (st->idle_timeout_ms != 0 || st->expired != 0 || st->lazy_grown != 0)
        ADD(" expired %" PRIu64 " lazy %" PRIu64, st->expired, st->lazy_grown);
    if (st->autoscale != 0) {
        char busy[16];
        shoal__host_percent(st->busy, busy, sizeof busy);
        ADD(" autoscale busy %s", busy);
        if (st->autoscale & SHOAL_AUTOSCALE_WAIT)
            ADD(" wait_p99 %" PRIu64 "us", st->wait_p99_us);
        if (st->autoscale & SHOAL_AUTOSCALE_REFUSED)
            ADD(" refused %" PRIu64 "/s", st->refused_per_s);
    } else if (st->autoscale_ups != 0 || st->autoscale_downs != 0) {
        ADD(" autoscale off");
    }
    if (st->autoscale != 0 || st->autoscale_ups != 0 || st->autoscale_downs != 0)
        ADD(" ups %" PRIu64 " downs %" PRIu64, st->autoscale_ups, st->autoscale_downs);
#undef ADD
}

/* The checkout group hp belongs to in the current config, or NULL (none,
 * not a checkout pool, draining: no longer in the config, or started by a
 * reload that has not committed). */
static const char *group_of(const shoal_host_t *h, const shoal_host_pool_t *hp)
{
    return hp->cp != NULL && hp->cp->kind == SHOAL_POOL_KIND_CHECKOUT &&
                   shoal__host_committed(h, hp)
               ? hp->cp->checkout.group
               : NULL;
}

static bool in_group(const shoal_host_t *h, const shoal_host_pool_t *hp, const char *g)
{
    const char *mine = group_of(h, hp);
    return mine != NULL && strcmp(mine, g) == 0;
}

static void pool_line(shoal_control_conn_t *k, const shoal_host_t *h, shoal_host_pool_t *hp,
                      bool stopping)
{
    shoal_pool_stats_t st;
    shoal__host_peek(hp, &st);
    char pull[160] = ""; /* a pull pool's buffer, what its workers hold, its refusals */
    uint64_t can_hold = (uint64_t)st.pool_size * st.prefetch;
    if (st.kind == SHOAL_POOL_KIND_PULL) /* held from the demand: one moment (table.c) */
        snprintf(pull, sizeof pull,
                 " pull buffer %" PRIu64 "/%" PRIu64 " held %" PRIu64 "/%" PRIu64 " idle %" PRIu32
                 " refused %" PRIu64,
                 st.buffer_depth, st.buffer, can_hold > st.demand ? can_hold - st.demand : 0,
                 can_hold, shoal__pull_idle(hp->rec), st.messages_unhandled);
    const char *group = group_of(h, hp);
    if (st.kind == SHOAL_POOL_KIND_CHECKOUT) /* its members, takers and what befell them */
        snprintf(pull, sizeof pull,
                 " checkout in_use %" PRIu32 " free %" PRIu32 " starting %" PRIu32
                 " queued %" PRIu32 " takes %" PRIu64 " no_members %" PRIu64 " killed %" PRIu64
                 "%s%s",
                 st.in_use, st.free, st.starting, st.queued, st.takes, st.error_no_members,
                 st.killed_free + st.killed_in_use, group ? " group " : "", group ? group : "");
    char elastic[320];
    elastic_text(&st, elastic, sizeof elastic);
    shoal__control_say(
        k, "pool %s size %u target %u in_flight %" PRIu64 " forwarded %" PRIu64 "%s%s%s\n",
        hp->name, st.pool_size, st.target_size, st.queue_depth, st.messages_forwarded, pull,
        elastic,
        shoal__pool_is_ended(hp->rec)     ? " ended"
        : hp->draining || stopping        ? " draining"
        : !shoal__host_committed(h, hp)   ? " starting"
        : st.state == SHOAL_POOL_DEGRADED ? " degraded" /* past its restart budget */
                                          : "");
}

void shoal__control_groups(shoal_control_t *c, shoal_control_conn_t *k)
{
    shoal_host_t *h = c->h;
    bool any = false;
    shoal__control_say(k, "0 ok\n");
    for (size_t i = 0; i < h->npools; i++) {
        const char *g = group_of(h, &h->pools[i]);
        bool said = g == NULL;
        for (size_t j = 0; !said && j < i; j++) /* said with its first pool */
            said = in_group(h, &h->pools[j], g);
        if (said)
            continue;
        any = true;
        uint32_t n = 0, in_use = 0, nfree = 0, starting = 0, queued = 0;
        char pools[1024];
        size_t len = 0;
        for (size_t j = i; j < h->npools; j++) {
            if (!in_group(h, &h->pools[j], g))
                continue;
            shoal_pool_stats_t st;
            shoal__host_peek(&h->pools[j], &st);
            n++;
            in_use += st.in_use;
            nfree += st.free;
            starting += st.starting;
            queued += st.queued;
            if (len < sizeof pools) /* past it, the line ends at 1023 bytes */
                len += (size_t)snprintf(pools + len, sizeof pools - len,
                                        "%s%s (in_use %" PRIu32 " free %" PRIu32 ")",
                                        n > 1 ? ", " : "", h->pools[j].name, st.in_use, st.free);
        }
        shoal__control_say(k,
                           "group %s pools %" PRIu32 " in_use %" PRIu32 " free %" PRIu32
                           " starting %" PRIu32 " queued %" PRIu32 ": %s\n",
                           g, n, in_use, nfree, starting, queued, pools);
    }
    if (!any)
        shoal__control_say(k, "no groups: no checkout pool names a group\n");
}

void shoal__control_status(shoal_control_t *c, shoal_control_conn_t *k)
{
    shoal_host_t *h = c->h;
    static char ledgers[SHOAL_HOST_LEDGERS_MAX]; /* the host thread's */
    shoal__host_ledgers(h, ledgers, sizeof ledgers);
    shoal__control_say(k, "0 ok\ngeneration %" PRIu64 "\n%s", h->generation,
                       c->stopping ? "stopping draining every pool\n" : "");
    if (h->starting)
        shoal__control_say(k, "starting generation %" PRIu64 " from %s for %" PRIu64 " ms: %s\n",
                           h->generation, c->config,
                           (shoal__now_ns() - h->starting_since_ns) / 1000000u, h->step);
    if (c->reloading)
        shoal__control_say(k, "reloading generation %" PRIu64 " from %s for %" PRIu64 " ms: %s\n",
                           c->reload_from + 1, c->config,
                           (shoal__now_ns() - c->reload_since_ns) / 1000000u, h->step);
    if (c->diffing)
        shoal__control_say(k, "diffing %s for %" PRIu64 " ms: %s\n", c->diff_running,
                           (shoal__now_ns() - c->diff_since_ns) / 1000000u, c->diff_step);
    shoal__control_say(k, "reloads %" PRIu64 " ok, %" PRIu64 " failed\nthreads %u\n", h->reloads,
                       h->reloads_failed, shoal_runtime_threads(h->rt));
    shoal__control_put(k, ledgers, strlen(ledgers));
    size_t open = 0; /* closed ones keep their slot until the sweep */
    for (size_t i = 0; i < c->nconns; i++)
        open += c->conns[i]->fd >= 0;
    shoal__control_say(
        k, "control %zu open, %" PRIu64 " accepted, %" PRIu64 " dropped, %" PRIu64 " refused\n",
        open, c->accepted, c->dropped, c->refused);
    for (size_t i = 0; i < h->npools; i++)
        pool_line(k, h, &h->pools[i], c->stopping);
    for (size_t i = 0; i < h->nsources; i++) { /* each whole, however many */
        char line[512];
        shoal__host_source_status(h, i, line, sizeof line);
        shoal__control_put(k, line, strlen(line));
    }
    shoal__control_say(k, "%s", shoal__host_stall_lines(h));
}
