/* w5.c - W5 skewed pool: `W5 N W [RATE]`.
 *
 * One producer actor, W workers, N jobs; job i carries (i, sent_i) and
 * costs r(i) chained xs50 calls, r(i) = 1000 for every 1000th job, else 1
 * (w5_work). Each worker keeps a latency histogram (completion - sent_i, ns)
 * and reports (count, acc, histogram) to the collector, which sums, XORs and
 * merges them.
 *
 * How jobs reach the workers (SHOAL_BENCH_POOL, SHOAL_BENCH_DIRECT):
 *   pull (default; pool=shoal-pull): a pull pool (SHOAL_POOL_KIND_PULL) of W
 *     workers, prefetch 1, buffer W x 100 (SHOAL_BENCH_W5_BUFFER): the
 *     producer sends to the pool's pid, an idle worker takes the next job.
 *     The pool holds at most buffer + W x prefetch jobs, as go-chan holds its
 *     channel of W x 100 plus the one job each goroutine is working on. A
 *     runtime that refuses the spec, or spawns something that is not a pull
 *     pool, ends the run with exit status 3 (unsupported), never a result.
 *   forward (pool=shoal-forward): a forward pool of W workers, mailbox 100
 *     each; the pool puts a job in the next worker's mailbox that has room.
 *   SHOAL_BENCH_DIRECT=1 (pool=rr-actors): W plain workers, mailbox 100,
 *     job i to worker i mod W (go-chan-rr), MSG_DONE markers by FIFO.
 * Pools are drained (SHOAL_POOL_DRAIN) after job N-1 and the workers report
 * from their terminate callback, as in W1.
 *
 * The producer sends up to `chunk` jobs per turn (SHOAL_BENCH_CHUNK, default
 * 64), then sends itself MSG_CONT:
 *   saturating (RATE 0): sent_i is read right before the first attempt to
 *     send job i. A refused send (SHOAL_EBUSY / SHOAL_EFULL: the pool or the
 *     mailbox is full) ends the turn; the same job, with the same sent_i, is
 *     offered again when the pull pool says it has room (SHOAL_MSG_ROOM,
 *     counted in room_waits=), or, from a receiver that cannot say so (a
 *     forward pool, a worker's mailbox), next turn after shoal_yield
 *     (counted in retries=);
 *   paced (RATE > 0): job i is due at t0 + i/RATE and sent_i is that due
 *     time, so a producer held up (a full pool, a late turn) is charged to
 *     the latency. Each turn sends the jobs that are due; when the next one
 *     is not, the producer waits: more than W5_SLEEP_NS ahead, on a timer
 *     (ms resolution, woken about 1 ms early); less, by yielding its turn
 *     (ahead_yields=). max_lag_us= is how late the latest send was.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "shoal/pool.h"
#include "shoal/pull.h"

#define W5_CAP 100u         /* jobs per worker (the spec's bound) */
#define W5_PREFETCH 1u      /* pull: jobs a worker holds */
#define W5_SLEEP_NS 2000000 /* paced: further ahead than this, sleep on a timer */
#define W5_LONG_EVERY 1000u /* every 1000th job is long ... */
#define W5_LONG_COST 1000u  /* ... 1000 xs50 calls instead of one */
#define W5_SUB_BITS 6       /* histogram: 64 linear sub-buckets per power of two */
#define W5_BUCKETS ((64 - W5_SUB_BITS) << W5_SUB_BITS)

enum { W5_PULL, W5_FORWARD, W5_DIRECT };

/* ---- the job and its latency -------------------------------------------- */

typedef struct w5_job_s {
    uint64_t v;
    int64_t sent; /* ns, CLOCK_MONOTONIC */
} w5_job_t;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Job i's work: xs50(i), chained 999 more times for every 1000th job. */
static uint32_t w5_work(uint64_t i)
{
    uint32_t s = xs50(i);
    unsigned r = i % W5_LONG_EVERY == 0 ? W5_LONG_COST : 1;
    for (unsigned k = 1; k < r; k++)
        s = xs50(s);
    return s;
}

/* The W5 checksum for n jobs: the spec's table, else computed. */
static uint32_t w5_expected_check(uint64_t n)
{
    if (n == 200000)
        return 1024201162u;
    if (n == 2000000)
        return 2826556261u;
    uint32_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc ^= w5_work(i);
    return acc;
}

/* Latencies in ns: each power of two split into 64 linear sub-buckets (a
 * bucket is at most 1/64 of its lower edge wide, exact below 128 ns), as the
 * Go peer's latHist, so percentiles compare; the maximum is exact. */
typedef struct w5_hist_s {
    uint64_t n;
    int64_t max;
    uint64_t counts[W5_BUCKETS];
} w5_hist_t;

static unsigned hist_bucket(uint64_t v)
{
    if (v < 2u << W5_SUB_BITS)
        return (unsigned)v;
    unsigned shift = 63u - (unsigned)__builtin_clzll(v) - W5_SUB_BITS;
    return ((shift + 1) << W5_SUB_BITS) + (unsigned)(v >> shift) - (1u << W5_SUB_BITS);
}

/* The largest value that falls into bucket b. */
static int64_t hist_upper(unsigned b)
{
    if (b < 2u << W5_SUB_BITS)
        return b;
    unsigned shift = (b >> W5_SUB_BITS) - 1;
    uint64_t m = (b & ((1u << W5_SUB_BITS) - 1)) + (1u << W5_SUB_BITS);
    return (int64_t)(((m + 1) << shift) - 1);
}

static void hist_record(w5_hist_t *h, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    h->counts[hist_bucket((uint64_t)ns)]++;
    h->n++;
    if (ns > h->max)
        h->max = ns;
}

static void hist_merge(w5_hist_t *into, const w5_hist_t *h)
{
    for (unsigned b = 0; b < W5_BUCKETS; b++)
        into->counts[b] += h->counts[b];
    into->n += h->n;
    if (h->max > into->max)
        into->max = h->max;
}

/* Percentile p by nearest rank: the upper edge of the bucket that holds
 * sample ceil(p*n/100), capped at the maximum. */
static int64_t hist_percentile(const w5_hist_t *h, uint64_t p)
{
    uint64_t rank = (h->n * p + 99) / 100, seen = 0;
    if (rank == 0)
        return 0;
    for (unsigned b = 0; b < W5_BUCKETS; b++) {
        seen += h->counts[b];
        if (seen >= rank)
            return hist_upper(b) < h->max ? hist_upper(b) : h->max;
    }
    return h->max;
}

/* ---- configuration, shared by the actors ---------------------------------- */

typedef struct w5_cfg_s {
    uint64_t n, rate;
    unsigned w, chunk;
    int mode;   /* W5_PULL, W5_FORWARD, W5_DIRECT */
    int64_t t0; /* ns: job i is due at t0 + i/rate */
    shoal_pid_t collector;
    shoal_pid_t pool;     /* pooled */
    shoal_pid_t *workers; /* direct */
    uint64_t buffer;      /* pull: as the pool reports it */
    uint32_t prefetch;
    bench_t *b;
    w5_hist_t merged; /* the collector's; read by main after b->done */
    /* The producer's counters, written before its last sends (so the
     * collector's post publishes them to main). */
    uint64_t retries, room_waits, ahead_yields, sleeps;
    int64_t max_lag;
} w5_cfg_t;

/* What a worker reports: its histogram is handed over (the collector frees). */
typedef struct w5_report_s {
    uint64_t count;
    uint64_t acc;
    w5_hist_t *hist;
} w5_report_t;

/* ---- the collector ------------------------------------------------------ */

typedef struct w5_collector_s {
    w5_cfg_t *cfg;
    uint64_t reports, count, acc;
} w5_collector_t;

static int collector_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((w5_collector_t *)state)->cfg = (w5_cfg_t *)args;
    return 0;
}

static int collector_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w5_collector_t *c = state;
    if (msg->type != MSG_REPORT || msg->size != sizeof(w5_report_t))
        return 0;
    w5_report_t r;
    memcpy(&r, msg->data, sizeof r);
    c->count += r.count;
    c->acc ^= r.acc;
    hist_merge(&c->cfg->merged, r.hist);
    free(r.hist);
    if (++c->reports == c->cfg->w) {
        bench_t *b = c->cfg->b;
        b->reports = c->reports;
        b->count = c->count;
        b->acc = c->acc;
        sem_post(&b->done); /* publishes the fields above and cfg->merged */
        shoal_exit(ctx, 0);
    }
    return 0;
}

static const shoal_behaviour_t collector_behaviour = {
    .name = "w5.collector",
    .state_size = sizeof(w5_collector_t),
    .init = collector_init,
    .handle_message = collector_handle,
};

/* ---- the worker --------------------------------------------------------- */

typedef struct w5_worker_s {
    const w5_cfg_t *cfg;
    uint64_t count;
    uint32_t acc;
    w5_hist_t *hist; /* NULL once handed to the collector */
} w5_worker_t;

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    w5_worker_t *s = state;
    s->cfg = args;
    s->hist = calloc(1, sizeof *s->hist);
    return s->hist != NULL ? 0 : SHOAL_ENOMEM;
}

static void worker_report(shoal_ctx_t *ctx, w5_worker_t *s)
{
    w5_report_t r = {.count = s->count, .acc = s->acc, .hist = s->hist};
    int rc = shoal_send(ctx, s->cfg->collector, MSG_REPORT, &r, sizeof r);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "report: %s", shoal_strerror(rc));
    s->hist = NULL;
}

/* MSG_WORK: the job's work, then its latency. Direct: MSG_DONE (from the
 * one producer, behind all its jobs) reports and exits; pooled: the drained
 * pool ends the worker and worker_terminate reports. */
static int worker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w5_worker_t *s = state;
    if (msg->type == MSG_WORK && msg->size == sizeof(w5_job_t)) {
        w5_job_t j;
        memcpy(&j, msg->data, sizeof j);
        s->acc ^= w5_work(j.v);
        s->count++;
        hist_record(s->hist, now_ns() - j.sent);
    } else if (msg->type == MSG_DONE && s->cfg->mode == W5_DIRECT) {
        worker_report(ctx, s);
        shoal_exit(ctx, 0);
    }
    return 0;
}

/* A pool's worker that ends with reason 0 has handled all it was given: that
 * is its report. Any other end reports nothing; the run then fails by
 * timeout. */
static void worker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    w5_worker_t *s = state;
    if (s->cfg->mode != W5_DIRECT && s->hist != NULL) {
        if (reason == 0)
            worker_report(ctx, s);
        else
            fprintf(stderr, "shoal-bench: W5 pool worker ended with %s after %llu jobs\n",
                    shoal_strerror(reason), (unsigned long long)s->count);
    }
    free(s->hist);
}

static const shoal_behaviour_t worker_behaviour = {
    .name = "w5.worker",
    .state_size = sizeof(w5_worker_t),
    .init = worker_init,
    .handle_message = worker_handle,
    .terminate = worker_terminate,
};

/* ---- the producer ------------------------------------------------------- */

typedef struct w5_producer_s {
    w5_cfg_t *cfg;
    uint64_t i;         /* next job */
    int64_t held_sent;  /* saturating: sent_i of job i, refused last turn ... */
    int held;           /* ... if set */
    uint64_t done_sent; /* direct: MSG_DONEs sent so far */
    uint64_t retries, ahead_yields, sleeps, room_waits;
    int64_t max_lag;
} w5_producer_t;

static int producer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((w5_producer_t *)state)->cfg = (w5_cfg_t *)args;
    return 0;
}

/* Job i's due time, ns: t0 + i/rate without overflowing i * 1e9 (rate is at
 * most 1e9). */
static int64_t due_ns(const w5_cfg_t *cfg, uint64_t i)
{
    uint64_t r = cfg->rate;
    return cfg->t0 + (int64_t)((i / r) * 1000000000u + (i % r) * 1000000000u / r);
}

static int send_job(shoal_ctx_t *ctx, const w5_cfg_t *cfg, uint64_t i, int64_t sent)
{
    w5_job_t j = {.v = i, .sent = sent};
    shoal_pid_t to = cfg->mode == W5_DIRECT ? cfg->workers[i % cfg->w] : cfg->pool;
    return shoal_send(ctx, to, MSG_WORK, &j, sizeof j);
}

/* The end of work: a pool is drained, direct workers get MSG_DONE (retried
 * on SHOAL_EFULL like a job). 1 when everything is sent, else 0 and *rc says
 * why not. */
static int finish(shoal_ctx_t *ctx, w5_producer_t *s, int *rc)
{
    w5_cfg_t *cfg = s->cfg;
    cfg->retries = s->retries;
    cfg->room_waits = s->room_waits;
    cfg->ahead_yields = s->ahead_yields;
    cfg->sleeps = s->sleeps;
    cfg->max_lag = s->max_lag;
    if (cfg->mode == W5_DIRECT) {
        *rc = bench_send_done(ctx, cfg->workers, cfg->w, &s->done_sent);
        return s->done_sent == cfg->w;
    }
    *rc = shoal_send_priority(ctx, cfg->pool, SHOAL_POOL_DRAIN, NULL, 0);
    if (*rc != SHOAL_OK)
        shoal_panic(ctx, "drain: %s", shoal_strerror(*rc));
    return 1;
}

/* Saturating, into a pool, a run at a time (shoal_send_many): up to chunk
 * jobs, stamped once right before the run is tried (a later job of the run
 * is sent a little after its stamp: its latency is, if anything,
 * overstated); the first refused one keeps its stamp for the next try. */
static int produce_run(shoal_ctx_t *ctx, w5_producer_t *s)
{
    const w5_cfg_t *cfg = s->cfg;
    w5_job_t jobs[256];
    uint64_t m = cfg->n - s->i;
    if (m > cfg->chunk)
        m = cfg->chunk;
    if (m > 256)
        m = 256;
    int64_t now = now_ns();
    for (uint64_t k = 0; k < m; k++)
        jobs[k] = (w5_job_t){.v = s->i + k, .sent = k == 0 && s->held ? s->held_sent : now};
    size_t sent;
    int rc = shoal_send_many(ctx, cfg->pool, MSG_WORK, jobs, sizeof jobs[0], m, &sent);
    s->i += sent;
    s->held = rc != SHOAL_OK;
    if (s->held)
        s->held_sent = jobs[sent].sent;
    return rc;
}

/* Saturating: up to chunk jobs, each stamped right before its first try. */
static int produce_saturating(shoal_ctx_t *ctx, w5_producer_t *s)
{
    const w5_cfg_t *cfg = s->cfg;
    int rc = SHOAL_OK;
    if (cfg->mode != W5_DIRECT && bench_send_many())
        return produce_run(ctx, s);
    for (unsigned budget = cfg->chunk; s->i < cfg->n && budget != 0; budget--) {
        int64_t sent = s->held ? s->held_sent : now_ns();
        rc = send_job(ctx, cfg, s->i, sent);
        if (rc != SHOAL_OK) {
            s->held = 1;
            s->held_sent = sent;
            break;
        }
        s->held = 0;
        s->i++;
    }
    return rc;
}

/* Paced: the jobs that are due, up to chunk of them. 1 if the turn ended
 * because the next job is not due yet (the producer then waited). */
static int produce_paced(shoal_ctx_t *ctx, w5_producer_t *s, int *rc)
{
    const w5_cfg_t *cfg = s->cfg;
    int64_t now = now_ns();
    *rc = SHOAL_OK;
    for (unsigned budget = cfg->chunk; s->i < cfg->n && budget != 0; budget--) {
        int64_t due = due_ns(cfg, s->i);
        if (due > now && due > (now = now_ns())) {
            /* Ahead: sleep on a timer while far ahead, else yield. */
            int64_t ahead = due - now;
            if (ahead > W5_SLEEP_NS) {
                s->sleeps++;
                *rc = shoal_send_after(ctx, shoal_self(ctx), (uint64_t)(ahead / 1000000) - 1,
                                       MSG_CONT, NULL, 0, NULL);
                if (*rc != SHOAL_OK)
                    shoal_panic(ctx, "timer: %s", shoal_strerror(*rc));
            } else {
                s->ahead_yields++;
                *rc = bench_yield(ctx);
                if (*rc != SHOAL_OK)
                    shoal_panic(ctx, "continue: %s", shoal_strerror(*rc));
            }
            return 1;
        }
        if (now - due > s->max_lag)
            s->max_lag = now - due;
        *rc = send_job(ctx, cfg, s->i, due);
        if (*rc != SHOAL_OK)
            break;
        s->i++;
    }
    return 0;
}

static int producer_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w5_producer_t *s = state;
    if (msg->kind != SHOAL_MSG_ROOM && msg->type != MSG_START && msg->type != MSG_CONT)
        return 0;
    int rc;
    if (s->cfg->rate == 0)
        rc = produce_saturating(ctx, s);
    else if (produce_paced(ctx, s, &rc))
        return 0; /* waiting until the next job is due */
    if (s->i == s->cfg->n && finish(ctx, s, &rc)) {
        fprintf(stderr,
                "shoal-bench: W5 producer: %llu retries, %llu ahead-yields, %llu sleeps, "
                "max lag %.1f us\n",
                (unsigned long long)s->retries, (unsigned long long)s->ahead_yields,
                (unsigned long long)s->sleeps, (double)s->max_lag / 1e3);
        shoal_exit(ctx, 0);
        return 0;
    }
    if (rc == SHOAL_EBUSY && shoal_notify_room(ctx, s->cfg->pool) == SHOAL_OK) {
        s->room_waits++; /* SHOAL_MSG_ROOM brings the next turn */
        return 0;
    }
    bench_next_turn(ctx, rc, &s->retries);
    return 0;
}

static const shoal_behaviour_t producer_behaviour = {
    .name = "w5.producer",
    .state_size = sizeof(w5_producer_t),
    .init = producer_init,
    .handle_message = producer_handle,
};

/* ---- set-up ------------------------------------------------------------- */

/* The pool of the run's kind. A pull spec the runtime refuses returns its error;
 * a pool of another kind than asked is SHOAL_ENOTSUP (both said on stderr). */
static int spawn_pool(bench_t *b, w5_cfg_t *cfg, uint32_t buffer)
{
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.name = "w5.pool";
    spec.worker = &worker_behaviour;
    spec.worker_args = cfg;
    spec.size = cfg->w;
    spec.min_size = 1;
    spec.max_size = cfg->w > 1024 ? cfg->w : 1024;
    if (cfg->mode == W5_FORWARD) {
        spec.kind = SHOAL_POOL_KIND_FORWARD;
        spec.mailbox = W5_CAP;
        return shoal_runtime_spawn_pool(b->rt, &spec, &cfg->pool);
    }
    spec.kind = SHOAL_POOL_KIND_PULL;
    spec.prefetch = W5_PREFETCH;
    spec.buffer = buffer;
    int rc = shoal_runtime_spawn_pool(b->rt, &spec, &cfg->pool);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W5: spawning a pull pool (prefetch %u, buffer %u): %s\n",
                W5_PREFETCH, buffer, shoal_strerror(rc));
        return rc;
    }
    /* A runtime without pull pools may ignore the kind: ask what it made. */
    shoal_pool_stats_t st;
    memset(&st, 0, sizeof st);
    rc = shoal_pool_stats(b->rt, cfg->pool, &st, 5000);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W5: stats of the pull pool: %s\n", shoal_strerror(rc));
        return rc;
    }
    if (st.size_ < offsetof(shoal_pool_stats_t, kind) + sizeof st.kind ||
        st.kind != SHOAL_POOL_KIND_PULL) {
        fprintf(stderr,
                "shoal-bench: W5: asked for a pull pool (prefetch %u, buffer %u), the runtime "
                "made a pool of kind %u: this build does not run pull pools "
                "(SHOAL_BENCH_POOL=forward runs a forward pool)\n",
                W5_PREFETCH, buffer, st.size_ > offsetof(shoal_pool_stats_t, kind) ? st.kind : 0);
        return SHOAL_ENOTSUP;
    }
    cfg->buffer = st.buffer;
    cfg->prefetch = st.prefetch;
    return SHOAL_OK;
}

/* SHOAL_BENCH_DIRECT=1, else SHOAL_BENCH_POOL (pull or forward); -1 if bad. */
static int w5_mode(void)
{
    if (bench_direct())
        return W5_DIRECT;
    const char *p = getenv("SHOAL_BENCH_POOL");
    if (p == NULL || *p == '\0' || strcmp(p, "pull") == 0)
        return W5_PULL;
    if (strcmp(p, "forward") == 0)
        return W5_FORWARD;
    fprintf(stderr, "shoal-bench: W5: SHOAL_BENCH_POOL=%s (pull or forward)\n", p);
    return -1;
}

int bench_w5(int argc, char **argv)
{
    uint64_t n, w, rate = 0;
    if (argc < 2 || argc > 3 || bench_parse_u64(argv[0], 1, &n) != 0 ||
        bench_parse_u64(argv[1], 1, &w) != 0 || w > SHOAL_POOL_MAX_SIZE ||
        (argc == 3 && (bench_parse_u64(argv[2], 0, &rate) != 0 || rate > 1000000000u)))
        return BENCH_USAGE;
    int mode = w5_mode();
    if (mode < 0)
        return BENCH_USAGE;
    unsigned long buffer = bench_env_ulong("SHOAL_BENCH_W5_BUFFER", w * W5_CAP);
    if (buffer > SHOAL_POOL_MAX_BUFFER) {
        fprintf(stderr, "shoal-bench: W5: SHOAL_BENCH_W5_BUFFER is at most %u\n",
                SHOAL_POOL_MAX_BUFFER);
        return BENCH_USAGE;
    }
    bench_t b;
    if (bench_init(&b, "W5") != SHOAL_OK)
        return BENCH_VERIFY;

    static w5_cfg_t cfg; /* read by the actors until the end */
    cfg.n = n;
    cfg.w = (unsigned)w;
    cfg.rate = rate;
    cfg.mode = mode;
    cfg.b = &b;
    cfg.chunk = (unsigned)bench_env_ulong("SHOAL_BENCH_CHUNK", 64);
    if (cfg.chunk == 0)
        cfg.chunk = 1;
    shoal_pid_t producer;
    int rc = shoal_runtime_spawn(b.rt, &collector_behaviour, &cfg, NULL, &cfg.collector);
    if (rc == SHOAL_OK && mode != W5_DIRECT) {
        rc = spawn_pool(&b, &cfg, (uint32_t)buffer);
    } else if (rc == SHOAL_OK) {
        shoal_spawn_opts_t o = {.mailbox_limit = W5_CAP};
        cfg.workers = malloc(w * sizeof *cfg.workers);
        if (cfg.workers == NULL)
            rc = SHOAL_ENOMEM;
        for (uint64_t j = 0; j < w && rc == SHOAL_OK; j++)
            rc = shoal_runtime_spawn(b.rt, &worker_behaviour, &cfg, &o, &cfg.workers[j]);
    }
    if (rc == SHOAL_OK)
        rc = shoal_runtime_spawn(b.rt, &producer_behaviour, &cfg, NULL, &producer);
    if (rc == SHOAL_ENOTSUP) /* no pull pools here: said above, no result */
        bench_finish(&b, BENCH_UNSUPPORTED);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W5 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_inspect_t insp = {0};
    bench_begin(&b);
    cfg.t0 = now_ns(); /* read by the producer after MSG_START */
    rc = shoal_runtime_send(b.rt, producer, MSG_START, NULL, 0);
    int waited = rc != SHOAL_OK      ? -1
                 : mode != W5_DIRECT ? bench_wait_inspect(&b, cfg.pool, &insp)
                                     : bench_wait(&b);
    if (waited != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W5 start: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    char params[80], bound[64], ins[160];
    snprintf(params, sizeof params, "N=%llu,W=%llu,rate=%llu", (unsigned long long)n,
             (unsigned long long)w, (unsigned long long)rate);
    const char *pool = mode == W5_PULL      ? "shoal-pull"
                       : mode == W5_FORWARD ? "shoal-forward"
                                            : "rr-actors";
    if (mode == W5_PULL)
        snprintf(bound, sizeof bound, "buffer(%llu)+prefetch(%u)x%u",
                 (unsigned long long)cfg.buffer, cfg.prefetch, cfg.w);
    else
        snprintf(bound, sizeof bound, "mailbox(%u)x%u", W5_CAP, cfg.w);
    const w5_hist_t *h = &cfg.merged;
    bench_result(&b, params, b.count, b.t1 - b.t0,
                 "check=%llu p50_us=%.1f p99_us=%.1f max_us=%.1f pool=%s bound=%s "
                 "producer=actor chunk=%u send=%s retries=%llu room_waits=%llu ahead_yields=%llu "
                 "sleeps=%llu "
                 "max_lag_us=%.1f latency=hist(log2/%u)%s",
                 (unsigned long long)b.acc, (double)hist_percentile(h, 50) / 1e3,
                 (double)hist_percentile(h, 99) / 1e3, (double)h->max / 1e3, pool, bound, cfg.chunk,
                 cfg.mode != W5_DIRECT && cfg.rate == 0 && bench_send_many() ? "send_many" : "send",
                 (unsigned long long)cfg.retries, (unsigned long long)cfg.room_waits,
                 (unsigned long long)cfg.ahead_yields, (unsigned long long)cfg.sleeps,
                 (double)cfg.max_lag / 1e3, 1u << W5_SUB_BITS,
                 bench_inspect_extras(&insp, ins, sizeof ins));
    uint32_t want = w5_expected_check(n);
    int status = BENCH_OK;
    if (b.count != n || h->n != n || b.acc != want) {
        fprintf(stderr,
                "shoal-bench: W5 verification failed: count %llu, latencies %llu (want %llu), "
                "check %llu (want %u)\n",
                (unsigned long long)b.count, (unsigned long long)h->n, (unsigned long long)n,
                (unsigned long long)b.acc, want);
        status = BENCH_VERIFY;
    }
    bench_finish(&b, status);
}
