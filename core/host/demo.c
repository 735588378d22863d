/* demo.c - shoal-demo: two pools under load for a few seconds, one table
 * row per second.
 *
 * The topology, all spawned from code through the public SDK:
 *
 *   source   ticks every millisecond (shoal_send_after to itself) and offers
 *   |        WORK at --rate messages/s: one message in FLAKY_SHARE to the
 *   |        flaky pool, the rest to the api pool; every result is counted
 *   +-> api pool     --workers workers, mailbox --mailbox each; each WORK
 *   |                costs a little CPU, then a RESULT goes to the sink
 *   +-> flaky pool   2 workers that panic on every --panic-every-th message;
 *                    the pool replaces them and hands what was queued behind
 *                    the panic to the other worker
 *   sink     counts RESULTs; answers a blocking call with its count
 *
 * A send is never retried: SHOAL_EBUSY (every worker of that pool is full)
 * is counted as refused. During the surge second main adds --workers more
 * workers to the api pool, and takes them away after it (they finish what
 * they hold first).
 *
 * At the end the source stops, main waits until every accepted message is
 * accounted for, checks the ledger of both pools against the source's and
 * the runtime's counters, and stops everything with shoal_runtime_destroy.
 * Exit status 0 only when the ledger balances.
 *
 * The actors are demo_actors.c; what they and main share, demo.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shoal/shoal.h>

#include "host/demo.h"
#include "host/version.h" /* the --version line every program prints */

#define MAX_WORKERS 64

static uint64_t counter(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* ---- main ------------------------------------------------------------------ */

/* Counts the runtime's log lines instead of printing them: the flaky one's
 * panics would flood the table. The first line of each level is kept. */
static void log_to_counters(void *user, int level, const char *line)
{
    demo_t *d = user;
    if (level < 0 || level > 3)
        level = 3;
    if (atomic_fetch_add_explicit(&d->log_lines[level], 1, memory_order_relaxed) == 0) {
        pthread_mutex_lock(&d->log_lock);
        snprintf(d->first_log[level], sizeof d->first_log[level], "%s", line);
        pthread_mutex_unlock(&d->log_lock);
    }
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: shoal-demo [--seconds N] [--threads N] [--rate N] [--workers N]\n"
            "                  [--surge N] [--mailbox N] [--panic-every N] [--cost N]\n"
            "       shoal-demo --version | --help\n"
            "  --seconds N      how long the source sends (default 5)\n"
            "  --threads N      dispatcher threads (default 0 = max(CPUs, 2))\n"
            "  --rate N         messages per second the source offers (default 200000)\n"
            "  --surge N        ... times that during the middle second (default 4; 1 = none)\n"
            "  --workers N      workers of the api pool, 1..%d (default 4)\n"
            "  --mailbox N      mailbox limit of each worker (default 64)\n"
            "  --panic-every N  a flaky worker panics on its N-th message (default 5000)\n"
            "  --cost N         rounds of busy work per message (default 200)\n",
            MAX_WORKERS);
}

static int parse_num(const char *flag, const char *s, unsigned long min, unsigned long max,
                     unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = s ? strtoul(s, &end, 10) : 0;
    if (s == NULL || *s == '\0' || *s == '-' || *end != '\0' || errno != 0 || v < min || v > max) {
        fprintf(stderr, "shoal-demo: %s wants a number in %lu..%lu, got '%s'\n", flag, min, max,
                s ? s : "");
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct snap_s {
    uint64_t offered, accepted, busy, handled, lost;
    shoal_pool_stats_t api, flaky;
    shoal_runtime_stats_t rt;
} snap_t;

static void snap_take(demo_t *d, shoal_runtime_t *rt, shoal_pid_t api, shoal_pid_t flaky, snap_t *s)
{
    s->offered = counter(&d->offered);
    s->accepted = counter(&d->accepted);
    s->busy = counter(&d->busy);
    s->handled = counter(&d->handled);
    s->lost = counter(&d->lost);
    /* Priority calls to the pools: answered in their next turn, while the
     * workers go on (forwarding never waits for a pool's own actor). */
    if (shoal_pool_stats(rt, api, &s->api, 1000) != SHOAL_OK)
        memset(&s->api, 0, sizeof s->api);
    if (shoal_pool_stats(rt, flaky, &s->flaky, 1000) != SHOAL_OK)
        memset(&s->flaky, 0, sizeof s->flaky);
    shoal_runtime_stats(rt, &s->rt);
}

static void sleep_until(double t)
{
    double left = t - shoal__demo_now_s();
    if (left <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)left,
                          .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A latency for the table: ns, us or ms, at most 6 characters. */
static const char *fmt_ns(char buf[24], uint64_t ns)
{
    if (ns < 10000)
        snprintf(buf, 24, "%" PRIu64 "ns", ns);
    else if (ns < 10000000)
        snprintf(buf, 24, "%" PRIu64 "us", ns / 1000);
    else
        snprintf(buf, 24, "%" PRIu64 "ms", ns / 1000000);
    return buf;
}

/* Both pools' counters added up. */
static uint64_t both(const snap_t *s, size_t offset)
{
    uint64_t a, f;
    memcpy(&a, (const char *)&s->api + offset, sizeof a);
    memcpy(&f, (const char *)&s->flaky + offset, sizeof f);
    return a + f;
}
#define BOTH(s, field) both(s, offsetof(shoal_pool_stats_t, field))

int main(int argc, char **argv)
{
    unsigned long seconds = 5, threads = 0, rate = 200000, workers = 4, mailbox = 64;
    unsigned long panic_every = 5000, cost = 200, surge = 4;
    for (int i = 1; i < argc; i += 2) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc;
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(f, "--version") == 0) {
            shoal__version_print(stdout, "shoal-demo");
            return 0;
        } else if (strcmp(f, "--seconds") == 0) {
            rc = parse_num(f, v, 1, 3600, &seconds);
        } else if (strcmp(f, "--threads") == 0) {
            rc = parse_num(f, v, 0, 1024, &threads);
        } else if (strcmp(f, "--rate") == 0) {
            rc = parse_num(f, v, 1, 100000000, &rate);
        } else if (strcmp(f, "--surge") == 0) {
            rc = parse_num(f, v, 1, 1000, &surge);
        } else if (strcmp(f, "--workers") == 0) {
            rc = parse_num(f, v, 1, MAX_WORKERS, &workers);
        } else if (strcmp(f, "--mailbox") == 0) {
            rc = parse_num(f, v, 1, SHOAL_MAILBOX_MAX, &mailbox);
        } else if (strcmp(f, "--panic-every") == 0) {
            rc = parse_num(f, v, 1, UINT_MAX, &panic_every);
        } else if (strcmp(f, "--cost") == 0) {
            rc = parse_num(f, v, 0, 1000000, &cost);
        } else {
            return shoal__usage_error(
                "shoal-demo", f[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", f);
        }
        if (rc != 0)
            return 2;
    }

    demo_t *d = calloc(1, sizeof *d);
    if (d == NULL)
        return 1;
    pthread_mutex_init(&d->log_lock, NULL);
    d->workers = (unsigned)workers;
    d->mailbox = (unsigned)mailbox;
    d->panic_every = (unsigned)panic_every;
    d->cost = (unsigned)cost;
    d->rate = rate;
    d->surge = (unsigned)surge;
    d->surge_at = (double)(seconds / 2);

    shoal_runtime_opts_t opts;
    shoal_runtime_opts_init(&opts);
    opts.threads = (unsigned)threads;
    opts.log_level = SHOAL_LOG_WARN;
    opts.log_fn = log_to_counters;
    opts.log_user = d;
    shoal_runtime_t *rt;
    int rc = shoal_runtime_create(&rt, &opts);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-demo: shoal_runtime_create: %s\n", shoal_strerror(rc));
        return 1;
    }
    printf("shoal-demo: %u dispatcher threads, %lu s. A source actor offers %lu msg/s "
           "(x%lu in second %lu)\n"
           "to the api pool (%lu workers) and 1 in %d to the flaky pool (2 workers that panic on\n"
           "their %lu-th message). Mailbox limit %lu per worker; when every worker of a pool is\n"
           "full the pool refuses, and nobody retries.\n\n",
           shoal_runtime_threads(rt), seconds, rate, surge, seconds / 2 + 1, workers, FLAKY_SHARE,
           panic_every, mailbox);

    /* The sink first (the workers need its PID), then the pools, then the
     * source that feeds them. All root actors: main owns them. */
    shoal_pid_t sink, api, flaky, source;
    shoal_spawn_opts_t unbounded = {.mailbox_limit = SHOAL_MAILBOX_UNBOUNDED};
    worker_args_t wargs = {.demo = d};
    shoal_pool_spec_t api_spec, flaky_spec;
    shoal_pool_spec_init(&api_spec);
    api_spec.name = "api";
    api_spec.worker = &shoal__demo_worker;
    api_spec.worker_args = &wargs;
    api_spec.size = d->workers;
    api_spec.max_size = 2 * d->workers;
    api_spec.mailbox = d->mailbox;
    shoal_pool_spec_init(&flaky_spec);
    flaky_spec.name = "flaky";
    flaky_spec.worker = &shoal__demo_flaky;
    flaky_spec.worker_args = &wargs;
    flaky_spec.size = 2;
    flaky_spec.mailbox = d->mailbox;
    flaky_spec.restart.max = 100; /* per second: a crash now and then is business as usual */
    flaky_spec.restart.within_ms = 1000;
    source_args_t sargs = {.demo = d};
    if ((rc = shoal_runtime_spawn(rt, &shoal__demo_sink, d, &unbounded, &sink)) != SHOAL_OK ||
        (wargs.sink = sink, rc = shoal_runtime_spawn_pool(rt, &api_spec, &api)) != SHOAL_OK ||
        (rc = shoal_runtime_spawn_pool(rt, &flaky_spec, &flaky)) != SHOAL_OK ||
        (sargs.api = api, sargs.flaky = flaky,
         rc = shoal_runtime_spawn(rt, &shoal__demo_source, &sargs, &unbounded, &source)) !=
            SHOAL_OK) {
        fprintf(stderr, "shoal-demo: spawn: %s\n", shoal_strerror(rc));
        shoal_runtime_destroy(rt);
        return 1;
    }

    printf("%4s %10s %10s %8s %10s %5s %6s %8s %9s %8s %8s %8s\n", "t/s", "offered/s", "accepted/s",
           "busy", "handled/s", "api", "depth", "failed", "requeued", "restarts", "wait_p99",
           "svc_p99");
    snap_t prev, cur;
    memset(&prev, 0, sizeof prev);
    double start = shoal__demo_now_s();
    for (unsigned long t = 1; t <= seconds; t++) {
        sleep_until(start + (double)t);
        snap_take(d, rt, api, flaky, &cur);
        char w99[24], s99[24];
        printf("%4lu %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %10" PRIu64 " %5" PRIu32 " %6" PRIu64
               " %8" PRIu64 " %9" PRIu64 " %8" PRIu64 " %8s %8s\n",
               t, cur.offered - prev.offered, cur.accepted - prev.accepted, cur.busy - prev.busy,
               cur.handled - prev.handled, cur.api.pool_size, BOTH(&cur, queue_depth),
               BOTH(&cur, messages_failed) - BOTH(&prev, messages_failed),
               BOTH(&cur, messages_requeued) - BOTH(&prev, messages_requeued),
               BOTH(&cur, worker_restarts) - BOTH(&prev, worker_restarts),
               fmt_ns(w99, cur.api.queue_wait_ns[2]), fmt_ns(s99, cur.api.service_ns[2]));
        fflush(stdout);
        prev = cur;
        /* The surge second: twice the api workers, then back. */
        if (t == seconds / 2 && shoal_pool_add_workers(rt, api, d->workers, 1000) < 0)
            fprintf(stderr, "shoal-demo: add_workers failed\n");
        if (t == seconds / 2 + 1 && shoal_pool_remove_workers(rt, api, d->workers, 1000) < 0)
            fprintf(stderr, "shoal-demo: remove_workers failed\n");
    }

    printf("busy: SHOAL_EBUSY (every worker of the pool was full); api: its live workers\n"
           "(doubled during second %lu); depth: queued in both pools; failed: being handled\n"
           "when a worker panicked; requeued: queued behind a panic and handed to another\n"
           "worker; p99 of queue wait and service time in the api pool (sampled, since start).\n",
           seconds / 2 + 1);

    /* Stop the source, then wait until both pools have handled (or lost in
     * a panic) every message they accepted. */
    double t_stop = shoal__demo_now_s();
    rc = shoal_runtime_send_priority(rt, source, MSG_STOP, NULL, 0);
    if (rc != SHOAL_OK)
        fprintf(stderr, "shoal-demo: stop: %s\n", shoal_strerror(rc));
    int drained = 0;
    while (shoal__demo_now_s() - t_stop < 10.0) {
        snap_take(d, rt, api, flaky, &cur);
        /* acquire: pairs with the source's release store of source_stopped
         * (MSG_STOP, demo_actors.c): the snapshot after the loop reads its
         * final counters. */
        if (atomic_load_explicit(&d->source_stopped, memory_order_acquire) &&
            BOTH(&cur, messages_forwarded) ==
                BOTH(&cur, messages_handled) + BOTH(&cur, messages_failed) &&
            BOTH(&cur, queue_depth) == 0 && counter(&d->sunk) == cur.handled) {
            drained = 1;
            break;
        }
        sleep_until(shoal__demo_now_s() + 0.005);
    }
    double t_drained = shoal__demo_now_s();
    snap_take(d, rt, api, flaky, &cur);

    /* A blocking call from this (non-actor) thread: the sink's own count.
     * It queues behind any RESULT still in the sink's mailbox. */
    sink_count_t count = {0, 0};
    shoal_answer_t answer;
    int call_rc = shoal_runtime_call(rt, sink, MSG_COUNT, NULL, 0, 5000, &answer);
    if (call_rc == SHOAL_OK && answer.status == SHOAL_OK && answer.size == sizeof count)
        memcpy(&count, answer.data, sizeof count);
    else if (call_rc == SHOAL_OK)
        call_rc = answer.status != SHOAL_OK ? answer.status : SHOAL_EINVAL;
    shoal_answer_release(&answer);

    /* Drain the api pool the way a host removes one: it refuses from now
     * on, and ends when its workers have. */
    int drain_rc = shoal_pool_drain(rt, api, 5000);
    int after_drain = shoal_runtime_send(rt, api, MSG_WORK, NULL, 0);

    double t_destroy = shoal__demo_now_s();
    shoal_runtime_destroy(rt);
    double destroy_ms = (shoal__demo_now_s() - t_destroy) * 1e3;

    /* The ledger: every offer was accepted or refused; the pools forwarded
     * every accepted message and counted every refusal; each was handled or
     * lost in a panic; the runtime saw the same refusals; the sink got every
     * result. */
    const char *why = NULL;
    if (!drained)
        why = "accepted messages unaccounted for after 10 s";
    else if (cur.offered != cur.accepted + cur.busy)
        why = "offered != accepted + busy";
    else if (BOTH(&cur, messages_forwarded) != cur.accepted ||
             BOTH(&cur, messages_unhandled) != cur.busy)
        why = "the pools counted other sends than the source saw";
    else if (cur.busy != cur.rt.msgs_refused)
        why = "the runtime counted other refusals than the source saw";
    else if (BOTH(&cur, messages_handled) != cur.handled || cur.flaky.messages_failed != cur.lost ||
             BOTH(&cur, messages_dropped) != 0)
        why = "handled + failed differs from what the workers counted";
    else if (call_rc != SHOAL_OK || count.received != cur.handled)
        why = "the sink's count differs from handled";
    else if (drain_rc != SHOAL_OK || after_drain != SHOAL_ENOPROC)
        why = "the drained api pool did not end";
    printf("\nstopped the source; %s in %.0f ms; shoal_runtime_destroy took %.1f ms\n",
           drained ? "every accepted message accounted for" : "NOT DRAINED",
           (t_drained - t_stop) * 1e3, destroy_ms);
    printf("offered  %" PRIu64 " = accepted %" PRIu64 " + busy %" PRIu64 "\n", cur.offered,
           cur.accepted, cur.busy);
    printf("accepted %" PRIu64 " = forwarded by api %" PRIu64 " + by flaky %" PRIu64 "\n",
           cur.accepted, cur.api.messages_forwarded, cur.flaky.messages_forwarded);
    printf("forwarded = handled %" PRIu64 " + failed %" PRIu64 " (panics); requeued %" PRIu64
           ", flaky restarts %" PRIu64 "\n",
           BOTH(&cur, messages_handled), BOTH(&cur, messages_failed), BOTH(&cur, messages_requeued),
           cur.flaky.worker_restarts);
    if (call_rc != SHOAL_OK)
        printf("call to the sink failed: %s\n", shoal_strerror(call_rc));
    printf("sink, asked by a blocking call: received %" PRIu64 " (= handled)\n", count.received);
    printf("api pool drained: %s; a send after it: %s\n", shoal_strerror(drain_rc),
           shoal_errname(after_drain));
    printf("runtime: %" PRIu64 " actors spawned, %" PRIu64 " turns, %" PRIu64 " steals, %" PRIu64
           " parks\n",
           cur.rt.actors_spawned, cur.rt.turns, cur.rt.steals, cur.rt.parks);
    printf("log lines (counted, not shown): %" PRIu64 " error, %" PRIu64 " warn\n",
           counter(&d->log_lines[SHOAL_LOG_ERROR]), counter(&d->log_lines[SHOAL_LOG_WARN]));
    if (d->first_log[SHOAL_LOG_ERROR][0])
        printf("  first error: %s\n", d->first_log[SHOAL_LOG_ERROR]);
    if (d->first_log[SHOAL_LOG_WARN][0])
        printf("  first warn:  %s\n", d->first_log[SHOAL_LOG_WARN]);
    printf("ledger: %s%s\n", why ? "MISMATCH: " : "OK", why ? why : "");
    pthread_mutex_destroy(&d->log_lock);
    free(d);
    return why ? 1 : 0;
}
