/* shoal_bench.c - shoal-bench: the command line and what the workloads share.
 *
 *   shoal-bench W1 N W | W2 P M | W3 A | W4 N [block|drop] | W5 N W [RATE] | TASKS N W
 *             | W6 C M K
 *   shoal-bench SCALE BASE FACTOR SECS   (scale.c: an autoscaled pool, a step)
 *
 * The spec is /work/shared/bench/README.md. Environment:
 *   SHOAL_THREADS          dispatcher threads (default: the runtime's, max(CPUs, 2))
 *   SHOAL_BENCH_DESTROY=1  destroy the runtime before exiting (default: _Exit)
 *   SHOAL_BENCH_TIMEOUT    seconds to wait for the collector (default 300)
 *   SHOAL_BENCH_W1_MAILBOX W1 worker mailbox limit (default 1024; 0 = unbounded)
 *   SHOAL_BENCH_CHUNK      sends per producer turn (W1 default 256, W4 64)
 *   SHOAL_BENCH_DIRECT=1   W1 and W4 without a pool: producers send straight
 *                          to plain worker actors (W1 round-robin,
 *                          pool=rr-actors; W4 worker (k+p) mod 4,
 *                          bounded=native(mailbox=100)), done markers by
 *                          per-sender FIFO. Default: through a shoal pool
 *                          (pool=shoal-pool), done by SHOAL_POOL_DRAIN.
 *   SHOAL_BENCH_PRODUCERS  W1 only, for comparing pool and direct: this many
 *                          producer actors (default 1, as the spec's W1),
 *                          producer p sends messages [p*N/P, (p+1)*N/P)
 *                          (RESULT extra producers=P)
 *   SHOAL_BENCH_INSPECT_MS pool mode (W1, W4): the main thread inspects the
 *                          pool this often while it waits (default 50;
 *                          0 = never); RESULT extras inspect_*
 *   SHOAL_BENCH_POOL       W5: pull (default, a pull pool) or forward (a
 *                          forward pool); SHOAL_BENCH_DIRECT=1 overrides
 *   SHOAL_BENCH_W5_BUFFER  W5 pull pool buffer (default W x 100)
 *   SHOAL_BENCH_SVC_US     SCALE: a message's sleep in its handler (default 5000)
 *   SHOAL_BENCH_LOG_LEVEL  the runtime's log level (default 1, warnings; 2: info,
 *                          e.g. SCALE's autoscale decisions)
 *   SHOAL_BENCH_TASKS_QUEUE TASKS: the task pool's queue (default 1024)
 *   SHOAL_BENCH_SPIN_US    how long an idle dispatcher thread spins before
 *                          it parks (default: the runtime's, 50)
 *   SHOAL_BENCH_W6         W6: take (default: take, call, return) or txn
 *                          (shoal_checkout_call: one transaction)
 */
#include "bench.h"
#include "host/isolated.h"
#include "host/version.h"

#include "shoal/pool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long bench_status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    size_t klen = strlen(key);
    long kb = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            kb = strtol(line + klen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

unsigned long bench_env_ulong(const char *name, unsigned long dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        fprintf(stderr, "shoal-bench: ignoring %s=%s (not a number)\n", name, s);
        return dflt;
    }
    return v;
}

int bench_parse_u64(const char *s, uint64_t min, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min)
        return -1;
    *out = v;
    return 0;
}

uint32_t bench_expected_check(uint64_t n)
{
    switch (n) {
    case 200000:
        return 4157333466u;
    case 1000000:
        return 3111071181u;
    case 2000000:
        return 3697708317u;
    case 10000000:
        return 1546984362u;
    default:
        break;
    }
    uint32_t acc = 0;
    for (uint64_t v = 0; v < n; v++)
        acc ^= xs50(v);
    return acc;
}

/* ---- the collector ------------------------------------------------------ */

typedef struct collector_s {
    bench_t *b;
    uint64_t expected;
    uint64_t reports, count, acc, dropped;
} collector_t;

typedef struct collector_args_s {
    bench_t *b;
    uint64_t expected;
} collector_args_t;

static int collector_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    collector_t *c = state;
    const collector_args_t *a = args;
    c->b = a->b;
    c->expected = a->expected;
    return 0;
}

static int collector_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    collector_t *c = state;
    if (msg->type != MSG_REPORT || msg->size != sizeof(bench_report_t))
        return 0;
    bench_report_t r;
    memcpy(&r, msg->data, sizeof r);
    c->count += r.count;
    c->acc ^= r.acc;
    c->dropped += r.dropped;
    if (++c->reports == c->expected) {
        bench_t *b = c->b;
        b->reports = c->reports;
        b->count = c->count;
        b->acc = c->acc;
        b->dropped = c->dropped;
        sem_post(&b->done); /* publishes the fields above to the waiter */
        shoal_exit(ctx, 0);
    }
    return 0;
}

static const shoal_behaviour_t collector_behaviour = {
    .name = "bench.collector",
    .state_size = sizeof(collector_t),
    .init = collector_init,
    .handle_message = collector_handle,
};

int bench_spawn_collector(bench_t *b, uint64_t expected, shoal_pid_t *pid)
{
    /* init runs later on a worker: the args must outlive this call. */
    static collector_args_t args;
    args.b = b;
    args.expected = expected;
    return shoal_runtime_spawn(b->rt, &collector_behaviour, &args, NULL, pid);
}

/* ---- the worker (W1, W4) ------------------------------------------------ */

typedef struct worker_s {
    uint64_t count;
    uint32_t acc;
    unsigned dones; /* MSG_DONEs heard */
    const bench_worker_args_t *args;
} worker_t;

static void worker_report(shoal_ctx_t *ctx, const worker_t *s)
{
    bench_report_t r = {.count = s->count, .acc = s->acc, .dropped = 0};
    int rc = shoal_send(ctx, s->args->collector, MSG_REPORT, &r, sizeof r);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "report: %s", shoal_strerror(rc));
}

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((worker_t *)state)->args = args;
    return 0;
}

/* MSG_WORK: process (xs50, count, acc). Direct: after args->dones
 * MSG_DONEs, report (count, acc) to the collector and exit. Pooled: no
 * MSG_DONE comes; worker_terminate reports. */
static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *s = state;
    if (msg->type == MSG_WORK) {
        uint64_t v;
        memcpy(&v, msg->data, sizeof v);
        s->count++;
        s->acc ^= xs50(v);
    } else if (msg->type == MSG_DONE && !s->args->pooled && ++s->dones == s->args->dones) {
        worker_report(ctx, s);
        shoal_exit(ctx, 0);
    }
    return 0;
}

/* A pool's worker ends with reason 0 when the drained pool retired it and it
 * has handled everything queued for it: that is its report. Any other end
 * (it failed, the runtime stopped) reports nothing, so the collector never
 * completes and the run fails by timeout. */
static void worker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    worker_t *s = state;
    if (!s->args->pooled)
        return;
    if (reason == 0)
        worker_report(ctx, s);
    else
        fprintf(stderr, "shoal-bench: pool worker ended with %s after %llu messages\n",
                shoal_strerror(reason), (unsigned long long)s->count);
}

static const shoal_behaviour_t worker_behaviour = {
    .name = "bench.worker",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = worker_handle,
    .terminate = worker_terminate,
};

int bench_spawn_worker(bench_t *b, const bench_worker_args_t *args, uint32_t mailbox_limit,
                       shoal_pid_t *pid)
{
    shoal_spawn_opts_t o = {.mailbox_limit = mailbox_limit};
    return shoal_runtime_spawn(b->rt, &worker_behaviour, args, &o, pid);
}

int bench_spawn_worker_pool(bench_t *b, const char *name, const bench_worker_args_t *args,
                            uint32_t size, uint32_t mailbox, shoal_pid_t *pid)
{
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.name = name;
    spec.worker = &worker_behaviour;
    spec.worker_args = args;
    spec.size = size;
    spec.min_size = 1;
    spec.max_size = size > 1024 ? size : 1024;
    spec.mailbox = mailbox;
    if (bench_pull()) { /* the same capacity, in one buffer */
        spec.kind = SHOAL_POOL_KIND_PULL;
        spec.prefetch = 1;
        spec.buffer = mailbox == SHOAL_MAILBOX_UNBOUNDED                 ? SHOAL_POOL_MAX_BUFFER
                      : (uint64_t)size * mailbox > SHOAL_POOL_MAX_BUFFER ? SHOAL_POOL_MAX_BUFFER
                                                                         : size * mailbox;
    }
    return shoal_runtime_spawn_pool(b->rt, &spec, pid);
}

int bench_pull(void)
{
    const char *k = getenv("SHOAL_BENCH_POOL");
    return k != NULL && strcmp(k, "pull") == 0;
}

int bench_wait_room(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t *waits)
{
    if (shoal_notify_room(ctx, to) != SHOAL_OK)
        return 0;
    (*waits)++;
    return 1;
}

int bench_direct(void) { return bench_env_ulong("SHOAL_BENCH_DIRECT", 0) != 0; }

int bench_send_many(void)
{
    static int many = -1; /* read once: the producers' turns ask often */
    if (many < 0) {
        const char *v = getenv("SHOAL_BENCH_SEND");
        many = v == NULL || strcmp(v, "one") != 0;
    }
    return many;
}

int bench_send_run(shoal_ctx_t *ctx, shoal_pid_t to, uint64_t first, uint64_t n, uint64_t *sent)
{
    int rc = SHOAL_OK;
    *sent = 0;
    if (!bench_send_many()) {
        for (uint64_t v = first; *sent < n; v++, ++*sent)
            if ((rc = shoal_send(ctx, to, MSG_WORK, &v, sizeof v)) != SHOAL_OK)
                break;
        return rc;
    }
    uint64_t vals[256];
    while (*sent < n) {
        size_t m = n - *sent < 256 ? (size_t)(n - *sent) : 256, took;
        for (size_t j = 0; j < m; j++)
            vals[j] = first + *sent + j;
        rc = shoal_send_many(ctx, to, MSG_WORK, vals, sizeof vals[0], m, &took);
        *sent += took;
        if (rc != SHOAL_OK)
            break;
    }
    return rc;
}

/* ---- yielding ----------------------------------------------------------- */

int bench_send_done(shoal_ctx_t *ctx, const shoal_pid_t *workers, uint64_t n, uint64_t *sent)
{
    int rc = SHOAL_OK;
    while (*sent < n && (rc = shoal_send(ctx, workers[*sent], MSG_DONE, NULL, 0)) == SHOAL_OK)
        (*sent)++;
    return rc;
}

void bench_next_turn(shoal_ctx_t *ctx, int rc, uint64_t *full)
{
    if (rc == SHOAL_EFULL || rc == SHOAL_EBUSY) {
        (*full)++;
        rc = bench_yield(ctx);
    } else if (rc != SHOAL_OK) {
        shoal_panic(ctx, "send: %s", shoal_strerror(rc));
    } else {
        rc = shoal_send(ctx, shoal_self(ctx), MSG_CONT, NULL, 0);
    }
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "continue: %s", shoal_strerror(rc));
}

int bench_yield(shoal_ctx_t *ctx)
{
    /* MSG_CONT to ourselves, and shoal_yield so it is not handled in this
     * turn: the actors queued on this worker (the consumers) run first. */
    int rc = shoal_send(ctx, shoal_self(ctx), MSG_CONT, NULL, 0);
    shoal_yield(ctx);
    return rc;
}

/* ---- set-up, timing, output --------------------------------------------- */

int bench_init(bench_t *b, const char *workload)
{
    memset(b, 0, sizeof *b);
    b->workload = workload;
    if (sem_init(&b->done, 0, 0) != 0)
        return SHOAL_ENOMEM;
    shoal_runtime_opts_t opts;
    shoal_runtime_opts_init(&opts);
    opts.threads = (unsigned)bench_env_ulong("SHOAL_THREADS", 0);
    opts.log_level = (int)bench_env_ulong("SHOAL_BENCH_LOG_LEVEL", SHOAL_LOG_WARN);
    opts.spin_us = (unsigned)bench_env_ulong("SHOAL_BENCH_SPIN_US", 0);
    int rc = shoal_runtime_create(&b->rt, &opts);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: shoal_runtime_create: %s\n", shoal_strerror(rc));
        return rc;
    }
    b->threads = shoal_runtime_threads(b->rt);
    return SHOAL_OK;
}

void bench_begin(bench_t *b)
{
    shoal_runtime_stats(b->rt, &b->st0);
    b->mallocs0 = bench_malloc_calls();
    b->t0 = bench_now();
}

static void print_stats(const bench_t *b, const char *when)
{
    const shoal_runtime_stats_t *s = &b->st1, *z = &b->st0;
    fprintf(stderr,
            "shoal-bench: %s stats (%s): turns=%llu steals=%llu parks=%llu wakes=%llu "
            "sent=%llu handled=%llu refused=%llu dropped=%llu spawned=%llu ended=%llu "
            "live=%llu env_slabs=%llu heap_payloads=%llu mallocs=%llu\n",
            b->workload, when, (unsigned long long)(s->turns - z->turns),
            (unsigned long long)(s->steals - z->steals), (unsigned long long)(s->parks - z->parks),
            (unsigned long long)(s->wakes - z->wakes),
            (unsigned long long)(s->msgs_sent - z->msgs_sent),
            (unsigned long long)(s->msgs_handled - z->msgs_handled),
            (unsigned long long)(s->msgs_refused - z->msgs_refused),
            (unsigned long long)(s->msgs_dropped - z->msgs_dropped),
            (unsigned long long)(s->actors_spawned - z->actors_spawned),
            (unsigned long long)(s->actors_ended - z->actors_ended),
            (unsigned long long)s->actors_live, (unsigned long long)(s->env_slabs - z->env_slabs),
            (unsigned long long)(s->heap_payloads - z->heap_payloads),
            (unsigned long long)(b->mallocs1 - b->mallocs0));
}

/* The run did not complete within limit seconds: record the end as it is
 * and say so. */
static void timed_out(bench_t *b, double limit)
{
    b->t1 = bench_now();
    b->mallocs1 = bench_malloc_calls();
    shoal_runtime_stats(b->rt, &b->st1);
    fprintf(stderr, "shoal-bench: %s: no completion after %.0f s (hang?)\n", b->workload, limit);
    print_stats(b, "at timeout");
}

int bench_wait(bench_t *b)
{
    double limit = (double)bench_env_ulong("SHOAL_BENCH_TIMEOUT", 300);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)limit;
    while (sem_timedwait(&b->done, &ts) != 0) {
        if (errno == EINTR)
            continue;
        timed_out(b, limit);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int bench_wait_inspect(bench_t *b, shoal_pid_t pid, bench_inspect_t *out)
{
    memset(out, 0, sizeof *out);
    out->every_ms = (unsigned)bench_env_ulong("SHOAL_BENCH_INSPECT_MS", 50);
    if (out->every_ms == 0)
        return bench_wait(b);
    double limit = (double)bench_env_ulong("SHOAL_BENCH_TIMEOUT", 300);
    double deadline = bench_now() + limit;
    size_t cap = 256;
    double *lat = malloc(cap * sizeof *lat);
    char last[2048] = "";
    int rc = 0;
    for (;;) {
        /* sem_timedwait takes a CLOCK_REALTIME instant: now + the period. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(out->every_ms % 1000) * 1000000L;
        ts.tv_sec += (time_t)(out->every_ms / 1000) + ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        if (sem_timedwait(&b->done, &ts) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (bench_now() > deadline) {
            timed_out(b, limit);
            rc = -1;
            break;
        }
        shoal_answer_t a;
        memset(&a, 0, sizeof a);
        double t = bench_now();
        int irc = shoal_runtime_inspect(b->rt, pid, 1000, &a);
        double ms = (bench_now() - t) * 1e3;
        if (irc == SHOAL_OK && a.status == SHOAL_OK && a.data != NULL) {
            if (out->n == cap) {
                double *n = realloc(lat, 2 * cap * sizeof *lat);
                if (n != NULL) {
                    lat = n;
                    cap *= 2;
                }
            }
            if (lat != NULL && out->n < cap)
                lat[out->n] = ms;
            out->n++;
            if (ms > out->max_ms)
                out->max_ms = ms;
            snprintf(last, sizeof last, "%s", (const char *)a.data);
        } else {
            out->fail++; /* typically: the drained pool has just ended */
        }
        shoal_answer_release(&a);
    }
    if (lat != NULL && out->n != 0) {
        size_t n = out->n < cap ? (size_t)out->n : cap;
        qsort(lat, n, sizeof *lat, cmp_double);
        out->p50_ms = n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2;
    }
    free(lat);
    if (last[0] != '\0')
        fprintf(stderr, "shoal-bench: %s: last inspect answer: %s\n", b->workload, last);
    fprintf(stderr,
            "shoal-bench: %s: inspected the pool every %u ms: %llu answers, p50 %.3f ms, "
            "max %.3f ms, %llu failed\n",
            b->workload, out->every_ms, (unsigned long long)out->n, out->p50_ms, out->max_ms,
            (unsigned long long)out->fail);
    return rc;
}

const char *bench_inspect_extras(const bench_inspect_t *in, char *buf, size_t size)
{
    if (in->every_ms == 0) {
        if (size != 0)
            buf[0] = '\0';
        return buf;
    }
    if (in->n == 0) { /* the run was shorter than one period */
        snprintf(buf, size,
                 " inspect_every_ms=%u inspect_n=0 inspect_p50_ms=na inspect_max_ms=na "
                 "inspect_fail=%llu",
                 in->every_ms, (unsigned long long)in->fail);
        return buf;
    }
    snprintf(buf, size,
             " inspect_every_ms=%u inspect_n=%llu inspect_p50_ms=%.3f inspect_max_ms=%.3f "
             "inspect_fail=%llu",
             in->every_ms, (unsigned long long)in->n, in->p50_ms, in->max_ms,
             (unsigned long long)in->fail);
    return buf;
}

void bench_end(bench_t *b)
{
    b->t1 = bench_now();
    b->mallocs1 = bench_malloc_calls();
    shoal_runtime_stats(b->rt, &b->st1);
}

void bench_result(bench_t *b, const char *params, uint64_t msgs, double secs, const char *fmt, ...)
{
    char extra[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(extra, sizeof extra, fmt, ap);
    va_end(ap);
    double rate = secs > 0 ? (double)msgs / secs : 0.0;
    printf("RESULT workload=%s impl=shoal params=%s msgs=%llu secs=%.6f rate=%.0f rss_kb=%ld%s%s"
           " threads=%u mallocs=%llu heap_payloads=%llu env_slabs=%llu\n",
           b->workload, params, (unsigned long long)msgs, secs, rate, bench_status_kb("VmHWM"),
           extra[0] ? " " : "", extra, b->threads, (unsigned long long)(b->mallocs1 - b->mallocs0),
           (unsigned long long)(b->st1.heap_payloads - b->st0.heap_payloads),
           (unsigned long long)(b->st1.env_slabs - b->st0.env_slabs));
    fflush(stdout);
    print_stats(b, "timed interval");
}

_Noreturn void bench_finish(bench_t *b, int rc)
{
    fflush(stdout);
    fflush(stderr);
    if (bench_env_ulong("SHOAL_BENCH_DESTROY", 0) != 0 && b->rt != NULL) {
        double t = bench_now();
        shoal_runtime_destroy(b->rt);
        fprintf(stderr, "shoal-bench: runtime destroyed in %.4f s\n", bench_now() - t);
        sem_destroy(&b->done);
        exit(rc);
    }
    _Exit(rc);
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *to)
{
    fprintf(to,
            "usage: shoal-bench W1 N W | W2 P M | W3 A | W4 N [block|drop] | W5 N W [RATE]\n"
            "       shoal-bench TASKS N W  (N xs50 tasks from the main thread, shoal/tasks.h)\n"
            "       shoal-bench W6 C M K   (C consumers x K checkout transactions on M members)\n"
            "       shoal-bench ISO W1 N W | ISO W2 M | ISO CALL K\n"
            "       shoal-bench SCALE BASE FACTOR SECS  (an autoscaled pool, a step in load)\n"
            "         (a pool with isolation: process; SHOAL_BENCH_ISOLATION=none: the same\n"
            "          pool in this process)\n"
            "       shoal-bench --version | --help\n"
            "The workloads, their arguments and output: bench/README.md.\n");
}

/* A usage error (version.h): what is wrong, a hint; exit status 2. */
static int bad(const char *fmt, const char *what)
{
    return shoal__usage_error("shoal-bench", fmt, what);
}

int main(int argc, char **argv)
{
    /* An isolated pool's child process (ISO): this program again. */
    if (argc == 2 && strcmp(argv[1], "--isolated-worker") == 0)
        return shoal__isolated_main();
    if (argc < 2)
        return bad("%s", "no workload (W1, W2, W3, W4, W5, W6, ISO, TASKS, SCALE)");
    const char *w = argv[1];
    if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(w, "--version") == 0) {
        shoal__version_print(stdout, "shoal-bench");
        return 0;
    }
    if (w[0] == '-')
        return bad("unknown option '%s'", w);
    int rc;
    if (strcmp(w, "W1") == 0)
        rc = bench_w1(argc - 2, argv + 2);
    else if (strcmp(w, "W2") == 0)
        rc = bench_w2(argc - 2, argv + 2);
    else if (strcmp(w, "W3") == 0)
        rc = bench_w3(argc - 2, argv + 2);
    else if (strcmp(w, "W4") == 0)
        rc = bench_w4(argc - 2, argv + 2);
    else if (strcmp(w, "W5") == 0)
        rc = bench_w5(argc - 2, argv + 2);
    else if (strcmp(w, "ISO") == 0)
        rc = bench_iso(argc - 2, argv + 2);
    else if (strcmp(w, "SCALE") == 0)
        rc = bench_scale(argc - 2, argv + 2);
    else if (strcmp(w, "TASKS") == 0)
        rc = bench_tasks(argc - 2, argv + 2);
    else if (strcmp(w, "W6") == 0)
        rc = bench_w6(argc - 2, argv + 2);
    else
        return bad("unknown workload '%s' (W1, W2, W3, W4, W5, W6, ISO, TASKS, SCALE)", w);
    if (rc == BENCH_USAGE)
        usage(stderr);
    return rc;
}
