/* w1.c - W1 pool throughput: `W1 N W`.
 *
 * Default (pool=shoal-pool): a shoal pool (shoal_runtime_spawn_pool) of W
 * workers running the shared worker behaviour, mailbox 1024 per worker. The
 * producer is an actor: each turn it sends up to `chunk` messages to the
 * POOL's pid (message i carries i; the pool picks the worker on the
 * producer's thread), then sends itself MSG_CONT and returns, so the workers
 * get the CPU. On SHOAL_EBUSY (every worker full) it ends its turn the same
 * way (shoal_yield) and retries the same i in its next turn; nothing is
 * dropped. After message N-1 it sends SHOAL_POOL_DRAIN to the pool (priority
 * send): every worker finishes what is queued for it and ends, and its
 * terminate callback (reason 0) reports (count, acc) to the collector.
 * While it waits, the main thread inspects the pool every 50 ms
 * (SHOAL_BENCH_INSPECT_MS) and reports the latency of those calls.
 *
 * SHOAL_BENCH_DIRECT=1 (pool=rr-actors): W plain worker actors, mailbox
 * 1024, message i to worker i mod W; on SHOAL_EFULL the producer yields as
 * above. After message N-1 it sends MSG_DONE to every worker (retrying on
 * SHOAL_EFULL too); per-sender FIFO puts it behind that worker's work.
 * Workers report (count, acc) to the collector and exit.
 *
 * SHOAL_BENCH_PRODUCERS=P (default 1, the spec's W1; in both modes) is for
 * comparing pool and direct sends with more senders: P producer actors,
 * producer p sends messages [p*N/P, (p+1)*N/P). Direct: message i still goes
 * to worker i mod W, and each worker reports after P MSG_DONEs. Pool: the
 * last producer to finish drains the pool.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "shoal/pool.h"

#define W1_MAX_PRODUCERS 64u

typedef struct w1_cfg_s {
    uint64_t n;
    unsigned w;
    unsigned chunk;
    unsigned producers;
    int pooled;
    bench_worker_args_t worker; /* collector, dones, pooled */
    shoal_pid_t *workers;       /* direct */
    shoal_pid_t pool;           /* pooled */
    _Atomic unsigned running;   /* producers not finished yet (pooled) */
} w1_cfg_t;

typedef struct w1_producer_args_s {
    w1_cfg_t *cfg;
    unsigned p;
} w1_producer_args_t;

typedef struct w1_producer_s {
    w1_cfg_t *cfg;
    unsigned p;
    uint64_t i;          /* next message */
    uint64_t end;        /* one past this producer's last message */
    unsigned next_w;     /* direct: i mod W */
    uint64_t done_sent;  /* direct: MSG_DONEs sent so far */
    uint64_t full;       /* SHOAL_EFULL / SHOAL_EBUSY seen (each ends a turn) */
    uint64_t room_waits; /* ... of them, waits for SHOAL_MSG_ROOM (a pull pool) */
} w1_producer_t;

static int producer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    w1_producer_t *s = state;
    const w1_producer_args_t *a = args;
    s->cfg = a->cfg;
    s->p = a->p;
    uint64_t n = a->cfg->n, np = a->cfg->producers;
    s->i = n / np * a->p;
    s->end = a->p + 1 == np ? n : n / np * (a->p + 1);
    s->next_w = (unsigned)(s->i % a->cfg->w);
    return 0;
}

static void producer_finished(shoal_ctx_t *ctx, w1_producer_t *s)
{
    fprintf(stderr, "shoal-bench: W1 producer %u: %llu turns ended by a %s\n", s->p,
            (unsigned long long)s->full, s->cfg->pooled ? "busy pool" : "full mailbox");
    shoal_exit(ctx, 0);
}

/* Pooled: sends up to `chunk` messages to the pool; at the end, the last
 * producer drains it. */
static void produce_pooled(shoal_ctx_t *ctx, w1_producer_t *s)
{
    w1_cfg_t *cfg = s->cfg;
    unsigned budget = cfg->chunk;
    uint64_t i = s->i, end = s->end;
    shoal_pid_t pool = cfg->pool;
    uint64_t sent;
    int rc = bench_send_run(ctx, pool, i, end - i < budget ? end - i : budget, &sent);
    i += sent;
    s->i = i;
    if (i == end) {
        if (atomic_fetch_sub_explicit(&cfg->running, 1, memory_order_acq_rel) == 1) {
            rc = shoal_send_priority(ctx, pool, SHOAL_POOL_DRAIN, NULL, 0);
            if (rc != SHOAL_OK)
                shoal_panic(ctx, "drain: %s", shoal_strerror(rc));
        }
        producer_finished(ctx, s);
        return;
    }
    if (rc == SHOAL_EBUSY && bench_wait_room(ctx, pool, &s->room_waits)) {
        s->full++;
        return; /* SHOAL_MSG_ROOM brings the next turn */
    }
    bench_next_turn(ctx, rc, &s->full);
}

/* Direct: round-robin over the workers, then MSG_DONE to each. */
static void produce_direct(shoal_ctx_t *ctx, w1_producer_t *s)
{
    const w1_cfg_t *cfg = s->cfg;
    unsigned budget = cfg->chunk;
    uint64_t i = s->i;
    unsigned wi = s->next_w;
    int rc = SHOAL_OK;
    while (i < s->end && budget != 0) {
        rc = shoal_send(ctx, cfg->workers[wi], MSG_WORK, &i, sizeof i);
        if (rc != SHOAL_OK)
            break;
        i++;
        if (++wi == cfg->w)
            wi = 0;
        budget--;
    }
    s->i = i;
    s->next_w = wi;
    if (i == s->end) {
        rc = bench_send_done(ctx, cfg->workers, cfg->w, &s->done_sent);
        if (s->done_sent == cfg->w) {
            producer_finished(ctx, s);
            return;
        }
    }
    bench_next_turn(ctx, rc, &s->full);
}

static int producer_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w1_producer_t *s = state;
    if (msg->kind != SHOAL_MSG_ROOM && msg->type != MSG_START && msg->type != MSG_CONT)
        return 0;
    if (s->cfg->pooled)
        produce_pooled(ctx, s);
    else
        produce_direct(ctx, s);
    return 0;
}

static const shoal_behaviour_t producer_behaviour = {
    .name = "w1.producer",
    .state_size = sizeof(w1_producer_t),
    .init = producer_init,
    .handle_message = producer_handle,
};

int bench_w1(int argc, char **argv)
{
    uint64_t n, w;
    if (argc != 2 || bench_parse_u64(argv[0], 1, &n) != 0 || bench_parse_u64(argv[1], 1, &w) != 0 ||
        w > 1u << 20)
        return BENCH_USAGE;
    int pooled = !bench_direct();
    if (pooled && w > SHOAL_POOL_MAX_SIZE) {
        fprintf(stderr, "shoal-bench: W1: a pool has at most %u workers (SHOAL_BENCH_DIRECT=1)\n",
                SHOAL_POOL_MAX_SIZE);
        return BENCH_USAGE;
    }
    unsigned long np = bench_env_ulong("SHOAL_BENCH_PRODUCERS", 1);
    if (np == 0 || np > W1_MAX_PRODUCERS || np > n) {
        fprintf(stderr, "shoal-bench: W1: SHOAL_BENCH_PRODUCERS must be 1 .. %u (and <= N)\n",
                W1_MAX_PRODUCERS);
        return BENCH_USAGE;
    }
    if (np != 1)
        fprintf(stderr,
                "shoal-bench: W1 with %lu producers (SHOAL_BENCH_PRODUCERS; the spec's W1 "
                "has 1)\n",
                np);
    bench_t b;
    if (bench_init(&b, "W1") != SHOAL_OK)
        return BENCH_VERIFY;

    static w1_cfg_t cfg; /* read by init and the actors until the end */
    static w1_producer_args_t pargs[W1_MAX_PRODUCERS];
    cfg.n = n;
    cfg.w = (unsigned)w;
    cfg.producers = (unsigned)np;
    cfg.pooled = pooled;
    atomic_store(&cfg.running, (unsigned)np);
    cfg.chunk = (unsigned)bench_env_ulong("SHOAL_BENCH_CHUNK", 256);
    if (cfg.chunk == 0)
        cfg.chunk = 1;
    uint32_t limit = (uint32_t)bench_env_ulong("SHOAL_BENCH_W1_MAILBOX", 1024);
    cfg.worker.pooled = pooled;
    cfg.worker.dones = pooled ? 0 : (unsigned)np; /* direct: a MSG_DONE from each producer */
    shoal_pid_t producers[W1_MAX_PRODUCERS];
    int rc = bench_spawn_collector(&b, w, &cfg.worker.collector);
    if (rc == SHOAL_OK && pooled) {
        rc = bench_spawn_worker_pool(&b, "w1.pool", &cfg.worker, (uint32_t)w,
                                     limit == 0 ? SHOAL_MAILBOX_UNBOUNDED : limit, &cfg.pool);
    } else if (rc == SHOAL_OK) {
        cfg.workers = malloc(w * sizeof *cfg.workers);
        if (cfg.workers == NULL)
            rc = SHOAL_ENOMEM;
        for (uint64_t j = 0; j < w && rc == SHOAL_OK; j++)
            rc = bench_spawn_worker(&b, &cfg.worker, limit, &cfg.workers[j]);
    }
    for (unsigned p = 0; p < np && rc == SHOAL_OK; p++) {
        pargs[p].cfg = &cfg;
        pargs[p].p = p;
        rc = shoal_runtime_spawn(b.rt, &producer_behaviour, &pargs[p], NULL, &producers[p]);
    }
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W1 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_inspect_t insp = {0};
    bench_begin(&b);
    for (unsigned p = 0; p < np && rc == SHOAL_OK; p++)
        rc = shoal_runtime_send(b.rt, producers[p], MSG_START, NULL, 0);
    int waited = rc != SHOAL_OK ? -1
                 : pooled       ? bench_wait_inspect(&b, cfg.pool, &insp)
                                : bench_wait(&b);
    if (waited != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W1 start: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    uint32_t want = bench_expected_check(n);
    char params[64], mbox[24], ins[160];
    snprintf(params, sizeof params, "N=%llu,W=%llu", (unsigned long long)n, (unsigned long long)w);
    if (limit == 0)
        snprintf(mbox, sizeof mbox, "unbounded");
    else
        snprintf(mbox, sizeof mbox, "%u", limit);
    bench_result(&b, params, b.count, b.t1 - b.t0,
                 "check=%llu pool=%s producer=actor producers=%u mailbox=%s chunk=%u send=%s "
                 "yield=shoal_yield done=%s%s",
                 (unsigned long long)b.acc,
                 !pooled        ? "rr-actors"
                 : bench_pull() ? "shoal-pull"
                                : "shoal-pool",
                 cfg.producers, mbox, cfg.chunk, pooled && bench_send_many() ? "send_many" : "send",
                 pooled ? "drain" : "fifo-marker", bench_inspect_extras(&insp, ins, sizeof ins));
    int status = BENCH_OK;
    if (b.count != n || b.acc != want) {
        fprintf(stderr,
                "shoal-bench: W1 verification failed: count %llu (want %llu), "
                "check %llu (want %u)\n",
                (unsigned long long)b.count, (unsigned long long)n, (unsigned long long)b.acc,
                want);
        status = BENCH_VERIFY;
    }
    bench_finish(&b, status);
}
