/* demo.c - shoal-demo: a small actor topology on the runtime, run for a few
 * seconds, one table row per second.
 *
 * The topology, all spawned from code through the public SDK:
 *
 *   supervisor (root)
 *     +-- source   ticks every millisecond (shoal_send_after to itself) and
 *     |            sends WORK at --rate messages/s, round-robin to the
 *     |            workers and the flaky one; every send's result is counted
 *     +-- worker x N   bounded mailboxes (--mailbox); each WORK costs a
 *     |                little CPU, then a RESULT goes to the sink
 *     +-- flaky    a worker that calls shoal_panic() on every k-th message
 *     |            (--panic-every); the supervisor hears SHOAL_MSG_EXIT,
 *     |            spawns a replacement and tells the source its new PID
 *     +-- sink     counts RESULTs; answers a blocking call with its count
 *
 * A send is never retried: SHOAL_EFULL (that mailbox is at its limit) and
 * SHOAL_ENOPROC (the flaky one has just died) are counted as refused. A
 * panic loses the message being handled; what is still queued in the dead
 * flaky's mailbox is dropped by the runtime and counted there.
 *
 * At the end the source stops, main waits until every accepted message is
 * accounted for, checks the ledger against the runtime's own counters,
 * and stops everything with shoal_runtime_destroy. Exit status 0 only when
 * the ledger balances.
 *
 * Counters the actors keep are atomics in one struct that main reads once a
 * second; everything else comes from shoal_runtime_stats.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shoal/shoal.h>

#define MAX_WORKERS 64
#define TICK_MS 1

/* Message types. */
enum {
    MSG_TICK = 1,   /* source -> itself, through the timer */
    MSG_WORK = 2,   /* source -> worker / flaky */
    MSG_RESULT = 3, /* worker / flaky -> sink */
    MSG_FLAKY = 4,  /* supervisor -> source: the flaky one's new PID */
    MSG_STOP = 5,   /* main -> supervisor -> source: stop sending */
    MSG_COUNT = 6,  /* main -> sink (a blocking call): how many results? */
};

typedef struct work_s {
    uint64_t seq;
    uint32_t cost;
} work_t;

typedef struct sink_count_s {
    uint64_t received;
    uint64_t checksum;
} sink_count_t;

/* Settings (written by main before the runtime starts) and the counters the
 * actors keep (relaxed atomics: main reads them while traffic flows). */
typedef struct demo_s {
    unsigned workers;
    unsigned mailbox;
    unsigned panic_every;
    unsigned cost;
    uint64_t rate;
    unsigned surge;  /* the rate multiplier during the surge second */
    double surge_at; /* the surge second starts this long after the source */

    _Atomic uint64_t offered;    /* source: sends tried */
    _Atomic uint64_t accepted;   /* source: SHOAL_OK */
    _Atomic uint64_t full;       /* source: SHOAL_EFULL */
    _Atomic uint64_t noproc;     /* source: SHOAL_ENOPROC */
    _Atomic uint64_t handled;    /* workers and flaky: WORK done, RESULT sent */
    _Atomic uint64_t lost;       /* flaky: the WORK being handled when it panicked */
    _Atomic uint64_t restarts;   /* supervisor: flaky replacements */
    _Atomic uint64_t unexpected; /* supervisor: other children that ended */
    _Atomic uint64_t sunk;       /* sink: RESULTs received */
    _Atomic int source_stopped;
    _Atomic shoal_pid_t sink; /* supervisor init: the sink's PID, for main's call */

    /* Log lines the runtime produced (log_fn), by level. */
    _Atomic uint64_t log_lines[4];
    pthread_mutex_t log_lock;
    char first_log[4][160];
} demo_t;

static uint64_t counter(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static void bump(_Atomic uint64_t *c) { atomic_fetch_add_explicit(c, 1, memory_order_relaxed); }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- worker and flaky ---------------------------------------------------- */

typedef struct worker_args_s {
    demo_t *demo;
    shoal_pid_t sink;
} worker_args_t;

typedef struct worker_s {
    demo_t *demo;
    shoal_pid_t sink;
    uint64_t seen; /* messages this incarnation handled */
} worker_t;

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    worker_t *w = state;
    const worker_args_t *a = args;
    w->demo = a->demo;
    w->sink = a->sink;
    return 0;
}

/* A little CPU per message, so that the mailboxes have something to hold. */
static uint64_t burn(uint64_t x, uint32_t cost)
{
    for (uint32_t i = 0; i < cost; i++) {
        x ^= x >> 33;
        x *= UINT64_C(0xff51afd7ed558ccd);
    }
    return x;
}

static int do_work(shoal_ctx_t *ctx, worker_t *w, const shoal_msg_t *msg)
{
    work_t job;
    if (msg->size != sizeof job)
        return SHOAL_EINVAL;
    memcpy(&job, msg->data, sizeof job);
    uint64_t r = burn(job.seq + 1, job.cost);
    /* The sink's mailbox is unbounded: this send is not refused. */
    int rc = shoal_send(ctx, w->sink, MSG_RESULT, &r, sizeof r);
    if (rc != SHOAL_OK)
        return rc;
    bump(&w->demo->handled);
    return 0;
}

static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *w = state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != MSG_WORK)
        return 0;
    w->seen++;
    return do_work(ctx, w, msg);
}

static int flaky_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *w = state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != MSG_WORK)
        return 0;
    if (++w->seen % w->demo->panic_every == 0) {
        bump(&w->demo->lost);
        shoal_panic(ctx, "message %" PRIu64 " of this incarnation: giving up", w->seen);
    }
    return do_work(ctx, w, msg);
}

static const shoal_behaviour_t worker_behaviour = {
    .name = "worker",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = worker_handle,
};

static const shoal_behaviour_t flaky_behaviour = {
    .name = "flaky",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = flaky_handle,
};

/* ---- sink ------------------------------------------------------------------ */

typedef struct sink_s {
    demo_t *demo;
    sink_count_t count;
} sink_t;

static int sink_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((sink_t *)state)->demo = (demo_t *)args;
    return 0;
}

static int sink_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    sink_t *s = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == MSG_RESULT && msg->size == sizeof(uint64_t)) {
        uint64_t r;
        memcpy(&r, msg->data, sizeof r);
        s->count.received++;
        s->count.checksum ^= r;
        bump(&s->demo->sunk);
    }
    return 0;
}

static int sink_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    sink_t *s = state;
    if (msg->type != MSG_COUNT) {
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return 0;
    }
    return shoal_reply_set(reply, MSG_COUNT, &s->count, sizeof s->count);
}

static const shoal_behaviour_t sink_behaviour = {
    .name = "sink",
    .state_size = sizeof(sink_t),
    .init = sink_init,
    .handle_message = sink_handle,
    .handle_call = sink_call,
};

/* ---- source ---------------------------------------------------------------- */

typedef struct source_args_s {
    demo_t *demo;
    unsigned ntargets; /* workers, then the flaky one last */
    shoal_pid_t targets[MAX_WORKERS + 1];
} source_args_t;

typedef struct source_s {
    demo_t *demo;
    unsigned ntargets;
    shoal_pid_t targets[MAX_WORKERS + 1];
    unsigned next;
    double start;
    uint64_t offered;
    int stopped;
} source_t;

static int source_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    source_t *s = state;
    const source_args_t *a = args;
    s->demo = a->demo;
    s->ntargets = a->ntargets;
    memcpy(s->targets, a->targets, sizeof s->targets);
    s->start = now_s();
    return shoal_send_after(ctx, shoal_self(ctx), TICK_MS, MSG_TICK, NULL, 0, NULL);
}

/* How many messages the source should have offered `t` seconds in: `rate`
 * per second, times `surge` during one second. */
static uint64_t due_at(const demo_t *d, double t)
{
    double in_surge = t < d->surge_at ? 0 : t > d->surge_at + 1 ? 1 : t - d->surge_at;
    return (uint64_t)((t + (double)(d->surge - 1) * in_surge) * (double)d->rate);
}

/* Sends what the rate asks for since the start, at most 20 ms worth (of the
 * surge rate) at once: a source that fell behind does not flood to catch up. */
static void source_tick(shoal_ctx_t *ctx, source_t *s)
{
    demo_t *d = s->demo;
    uint64_t due = due_at(d, now_s() - s->start);
    uint64_t cap = d->rate * d->surge / 50 + 1;
    if (due > s->offered + cap)
        due = s->offered + cap;
    while (s->offered < due) {
        work_t job = {.seq = s->offered, .cost = d->cost};
        int rc = shoal_send(ctx, s->targets[s->next], MSG_WORK, &job, sizeof job);
        s->next = (s->next + 1) % s->ntargets;
        s->offered++;
        bump(&d->offered);
        if (rc == SHOAL_OK)
            bump(&d->accepted);
        else if (rc == SHOAL_EFULL)
            bump(&d->full);
        else if (rc == SHOAL_ENOPROC)
            bump(&d->noproc);
        else
            shoal_panic(ctx, "send: %s", shoal_strerror(rc));
    }
}

static int source_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    source_t *s = state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    switch (msg->type) {
    case MSG_TICK:
        if (s->stopped)
            return 0;
        source_tick(ctx, s);
        return shoal_send_after(ctx, shoal_self(ctx), TICK_MS, MSG_TICK, NULL, 0, NULL);
    case MSG_FLAKY:
        if (msg->size == sizeof(shoal_pid_t))
            memcpy(&s->targets[s->ntargets - 1], msg->data, sizeof(shoal_pid_t));
        return 0;
    case MSG_STOP:
        s->stopped = 1;
        /* release: main reads the source's counters after seeing this. */
        atomic_store_explicit(&s->demo->source_stopped, 1, memory_order_release);
        return 0;
    default:
        return 0;
    }
}

static const shoal_behaviour_t source_behaviour = {
    .name = "source",
    .state_size = sizeof(source_t),
    .init = source_init,
    .handle_message = source_handle,
};

/* ---- supervisor -------------------------------------------------------------- */

typedef struct supervisor_s {
    demo_t *demo;
    shoal_pid_t sink, source, flaky;
    /* Args of the children: they must live until each child's init has
     * run, and a replacement flaky reuses worker_args. */
    worker_args_t worker_args;
    source_args_t source_args;
} supervisor_t;

static int supervisor_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    supervisor_t *sv = state;
    demo_t *d = (demo_t *)args;
    shoal_spawn_opts_t bounded = {.mailbox_limit = d->mailbox};
    shoal_spawn_opts_t unbounded = {.mailbox_limit = SHOAL_MAILBOX_UNBOUNDED};
    sv->demo = d;
    int rc = shoal_spawn(ctx, &sink_behaviour, d, &unbounded, &sv->sink);
    if (rc != SHOAL_OK)
        return rc;
    /* release: main loads it (acquire) to call the sink. */
    atomic_store_explicit(&d->sink, sv->sink, memory_order_release);
    sv->worker_args = (worker_args_t){.demo = d, .sink = sv->sink};
    sv->source_args.demo = d;
    for (unsigned i = 0; i < d->workers; i++) {
        rc = shoal_spawn(ctx, &worker_behaviour, &sv->worker_args, &bounded,
                         &sv->source_args.targets[i]);
        if (rc != SHOAL_OK)
            return rc;
    }
    if ((rc = shoal_spawn(ctx, &flaky_behaviour, &sv->worker_args, &bounded, &sv->flaky)) != 0)
        return rc;
    sv->source_args.targets[d->workers] = sv->flaky;
    sv->source_args.ntargets = d->workers + 1;
    return shoal_spawn(ctx, &source_behaviour, &sv->source_args, &unbounded, &sv->source);
}

static int supervisor_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    supervisor_t *sv = state;
    demo_t *d = sv->demo;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == MSG_STOP)
        return shoal_send_priority(ctx, sv->source, MSG_STOP, NULL, 0);
    if (msg->kind != SHOAL_MSG_EXIT)
        return 0;
    if (msg->status == SHOAL_ESHUTDOWN)
        return 0; /* stopped: shoal_runtime_destroy is under way */
    if (msg->from != sv->flaky) {
        bump(&d->unexpected);
        shoal_log(ctx, SHOAL_LOG_ERROR, "child %#" PRIx64 " ended: %s", msg->from,
                  shoal_strerror(msg->status));
        return 0;
    }
    /* The flaky one died: replace it and point the source at the new one.
     * Until the source hears of it, its sends there return SHOAL_ENOPROC. */
    shoal_spawn_opts_t bounded = {.mailbox_limit = d->mailbox};
    int rc = shoal_spawn(ctx, &flaky_behaviour, &sv->worker_args, &bounded, &sv->flaky);
    if (rc != SHOAL_OK)
        return rc;
    bump(&d->restarts);
    return shoal_send_priority(ctx, sv->source, MSG_FLAKY, &sv->flaky, sizeof sv->flaky);
}

static const shoal_behaviour_t supervisor_behaviour = {
    .name = "supervisor",
    .state_size = sizeof(supervisor_t),
    .init = supervisor_init,
    .handle_message = supervisor_handle,
};

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
            "  --seconds N      how long the source sends (default 5)\n"
            "  --threads N      dispatcher threads (default 0 = max(CPUs, 2))\n"
            "  --rate N         messages per second the source offers (default 200000)\n"
            "  --surge N        ... times that during the middle second (default 4; 1 = none)\n"
            "  --workers N      workers besides the flaky one, 1..%d (default 4)\n"
            "  --mailbox N      mailbox limit of each worker (default 64)\n"
            "  --panic-every N  the flaky worker panics on its N-th message (default 5000)\n"
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
    uint64_t offered, accepted, full, noproc, handled, lost, restarts;
    shoal_runtime_stats_t rt;
} snap_t;

static void snap_take(demo_t *d, shoal_runtime_t *rt, snap_t *s)
{
    s->offered = counter(&d->offered);
    s->accepted = counter(&d->accepted);
    s->full = counter(&d->full);
    s->noproc = counter(&d->noproc);
    s->handled = counter(&d->handled);
    s->lost = counter(&d->lost);
    s->restarts = counter(&d->restarts);
    shoal_runtime_stats(rt, &s->rt);
}

static void sleep_until(double t)
{
    double left = t - now_s();
    if (left <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)left,
                          .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

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
            fprintf(stderr, "shoal-demo: unknown argument '%s'\n", f);
            usage(stderr);
            return 2;
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
           "round-robin to %lu workers and 1 flaky worker that panics on its %lu-th message\n"
           "(its supervisor replaces it). Mailbox limit %lu per worker; a full mailbox refuses,\n"
           "nobody retries.\n\n",
           shoal_runtime_threads(rt), seconds, rate, surge, seconds / 2 + 1, workers, panic_every,
           mailbox);

    shoal_pid_t supervisor;
    rc = shoal_runtime_spawn(rt, &supervisor_behaviour, d, NULL, &supervisor);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-demo: spawn: %s\n", shoal_strerror(rc));
        shoal_runtime_destroy(rt);
        return 1;
    }

    printf("%4s %10s %10s %9s %7s %10s %6s %8s %8s %5s %9s\n", "t/s", "offered/s", "accepted/s",
           "refused", "noproc", "handled/s", "lost", "dropped", "restarts", "live", "turns/s");
    snap_t prev, cur;
    memset(&prev, 0, sizeof prev);
    double start = now_s();
    for (unsigned long t = 1; t <= seconds; t++) {
        sleep_until(start + (double)t);
        snap_take(d, rt, &cur);
        printf("%4lu %10" PRIu64 " %10" PRIu64 " %9" PRIu64 " %7" PRIu64 " %10" PRIu64 " %6" PRIu64
               " %8" PRIu64 " %8" PRIu64 " %5" PRIu64 " %9" PRIu64 "\n",
               t, cur.offered - prev.offered, cur.accepted - prev.accepted,
               cur.rt.msgs_refused - prev.rt.msgs_refused, cur.rt.msgs_noproc - prev.rt.msgs_noproc,
               cur.handled - prev.handled, cur.lost - prev.lost,
               cur.rt.msgs_dropped - prev.rt.msgs_dropped, cur.restarts - prev.restarts,
               cur.rt.actors_live, cur.rt.turns - prev.rt.turns);
        fflush(stdout);
        prev = cur;
    }

    printf(
        "refused: SHOAL_EFULL; noproc: SHOAL_ENOPROC (the flaky one had died); lost: being\n"
        "handled when it panicked; dropped: still queued in its mailbox then. From the\n"
        "runtime's counters: refused, noproc, dropped, live, turns; the rest from the actors.\n");

    /* Stop the source, then wait until every accepted message is either
     * handled, lost in a panic, or dropped with a dead flaky mailbox. */
    double t_stop = now_s();
    rc = shoal_runtime_send_priority(rt, supervisor, MSG_STOP, NULL, 0);
    if (rc != SHOAL_OK)
        fprintf(stderr, "shoal-demo: stop: %s\n", shoal_strerror(rc));
    int drained = 0;
    while (now_s() - t_stop < 10.0) {
        snap_take(d, rt, &cur);
        if (atomic_load_explicit(&d->source_stopped, memory_order_acquire) &&
            counter(&d->accepted) == cur.handled + cur.lost + cur.rt.msgs_dropped &&
            counter(&d->sunk) == cur.handled) {
            drained = 1;
            break;
        }
        sleep_until(now_s() + 0.005);
    }
    double t_drained = now_s();
    snap_take(d, rt, &cur);

    /* A blocking call from this (non-actor) thread: the sink's own count.
     * It queues behind any RESULT still in the sink's mailbox. */
    sink_count_t sink = {0, 0};
    shoal_answer_t answer;
    int call_rc = shoal_runtime_call(rt, atomic_load_explicit(&d->sink, memory_order_acquire),
                                     MSG_COUNT, NULL, 0, 5000, &answer);
    if (call_rc == SHOAL_OK && answer.status == SHOAL_OK && answer.size == sizeof sink)
        memcpy(&sink, answer.data, sizeof sink);
    else if (call_rc == SHOAL_OK)
        call_rc = answer.status != SHOAL_OK ? answer.status : SHOAL_EINVAL;
    shoal_answer_release(&answer);

    uint64_t unexpected = counter(&d->unexpected);
    double t_destroy = now_s();
    shoal_runtime_destroy(rt);
    double destroy_ms = (now_s() - t_destroy) * 1e3;

    /* The ledger: every offer was accepted or refused; every accepted
     * message was handled, lost in a panic or dropped with a dead mailbox;
     * the runtime counted the same refusals; the sink got every result. */
    const char *why = NULL;
    if (!drained)
        why = "accepted messages unaccounted for after 10 s";
    else if (cur.offered != cur.accepted + cur.full + cur.noproc)
        why = "offered != accepted + refused";
    else if (cur.full != cur.rt.msgs_refused || cur.noproc != cur.rt.msgs_noproc)
        why = "the runtime counted other refusals than the source saw";
    else if (call_rc != SHOAL_OK || sink.received != cur.handled)
        why = "the sink's count differs from handled";
    else if (unexpected != 0)
        why = "an actor other than the flaky one ended";
    printf("\nstopped the source; %s in %.0f ms; shoal_runtime_destroy took %.1f ms\n",
           drained ? "every accepted message accounted for" : "NOT DRAINED",
           (t_drained - t_stop) * 1e3, destroy_ms);
    printf("offered  %" PRIu64 " = accepted %" PRIu64 " + refused %" PRIu64 " (full) + %" PRIu64
           " (no such actor)\n",
           cur.offered, cur.accepted, cur.full, cur.noproc);
    printf("accepted %" PRIu64 " = handled %" PRIu64 " + lost in panics %" PRIu64
           " + dropped with dead mailboxes %" PRIu64 "\n",
           cur.accepted, cur.handled, cur.lost, cur.rt.msgs_dropped);
    if (call_rc != SHOAL_OK)
        printf("call to the sink failed: %s\n", shoal_strerror(call_rc));
    printf("sink, asked by a blocking call: received %" PRIu64
           " (= handled); flaky restarts %" PRIu64 "\nruntime: %" PRIu64 " actors spawned, %" PRIu64
           " turns, %" PRIu64 " steals, %" PRIu64 " parks\n",
           sink.received, cur.restarts, cur.rt.actors_spawned, cur.rt.turns, cur.rt.steals,
           cur.rt.parks);
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
