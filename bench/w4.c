/* w4.c - W4 fan-in with bounded buffers: `W4 N [block|drop]`.
 *
 * Two producer actors and four workers with a mailbox of CAP = 100 each. The
 * driver (main thread) starts both producers. Each producer turn offers up
 * to `chunk` messages (default 64), then the producer sends itself MSG_CONT
 * and returns, so workers are not starved.
 *
 * Default (bounded=native(pool=4x100)): one shoal pool of 4 workers with
 * mailbox 100 each, so the pool holds at most 400 = 4 x CAP messages and no
 * worker more than CAP. Both producers send to the pool's pid; the pool
 * picks the worker (the next in its FIFO with room), so a message is
 * refused (SHOAL_EBUSY) only when all four workers are full, not when "its"
 * worker (k + p) mod 4 is.
 *   block: on SHOAL_EBUSY the producer asks for SHOAL_MSG_ROOM
 *          (shoal_notify_room) and offers the same message again when it
 *          comes (nothing is dropped, nothing polls: room_waits=); a
 *          receiver that cannot tell is yielded to and retried (retries=,
 *          0 when ROOM works: a run with any fails verification, exit 1,
 *          and so bench/cost's W4-block cell in CI);
 *   drop:  on SHOAL_EBUSY the message is counted as dropped and the producer
 *          goes on with the next one.
 * After its last message a producer reports its dropped count to the
 * collector and exits; the last one to finish drains the pool
 * (SHOAL_POOL_DRAIN): each worker finishes its queue, and reports (count,
 * acc) from its terminate callback.
 *
 * SHOAL_BENCH_DIRECT=1 (bounded=native(mailbox=100)): four plain worker
 * actors with NATIVE bounded mailboxes of 100 (shoal_spawn_opts_t.
 * mailbox_limit; the limit check is part of the reservation CAS, so the
 * bound is exact); message k of producer p goes to worker (k + p) mod 4, and
 * the same block/drop rules apply to SHOAL_EFULL (a bounded actor tells of
 * room too). After its last message a
 * producer sends MSG_DONE to all four workers (in both modes retried on
 * SHOAL_EFULL: a marker is never dropped), reports its dropped count to the
 * collector and exits. A worker reports (count, acc) after MSG_DONE from
 * both producers.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "shoal/pool.h"

#define W4_WORKERS 4u
#define W4_PRODUCERS 2u
#define W4_CAP 100u

typedef struct w4_cfg_s {
    uint64_t n;
    int drop;
    unsigned chunk;
    int pooled;
    bench_worker_args_t worker;           /* collector, dones, pooled */
    shoal_pid_t workers[W4_WORKERS];      /* direct */
    shoal_pid_t pool;                     /* pooled */
    _Atomic unsigned running;             /* producers not finished yet (pooled) */
    _Atomic uint64_t retries, room_waits; /* summed over the producers */
} w4_cfg_t;

typedef struct w4_producer_args_s {
    w4_cfg_t *cfg;
    unsigned p;
} w4_producer_args_t;

typedef struct w4_producer_s {
    w4_cfg_t *cfg;
    unsigned p;
    uint64_t k, cnt, base;
    uint64_t dropped;
    uint64_t full;       /* block: yields after SHOAL_EFULL / SHOAL_EBUSY (retries) */
    uint64_t room_waits; /* block: waits for SHOAL_MSG_ROOM after one */
    uint64_t done_sent;
} w4_producer_t;

static int producer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    w4_producer_t *s = state;
    const w4_producer_args_t *a = args;
    s->cfg = a->cfg;
    s->p = a->p;
    uint64_t half = a->cfg->n / 2;
    s->cnt = a->p == 0 ? half : a->cfg->n - half;
    s->base = a->p * half;
    return 0;
}

static int producer_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w4_producer_t *s = state;
    w4_cfg_t *cfg = s->cfg;
    if (msg->kind == SHOAL_MSG_ROOM && msg->status != SHOAL_OK)
        shoal_panic(ctx, "room: %s", shoal_strerror(msg->status));
    if (msg->kind != SHOAL_MSG_ROOM && msg->type != MSG_START && msg->type != MSG_CONT)
        return 0;
    unsigned budget = cfg->chunk;
    uint64_t k = s->k;
    int rc = SHOAL_OK;
    /* Pooled: refused means every worker of the pool is full. */
    int refused = cfg->pooled ? SHOAL_EBUSY : SHOAL_EFULL;
    while (k < s->cnt && budget != 0) {
        uint64_t v = s->base + k;
        shoal_pid_t to = cfg->pooled ? cfg->pool : cfg->workers[(k + s->p) % W4_WORKERS];
        if (cfg->pooled && !cfg->drop) {
            /* A run to the pool (one shoal_send_many, or one by one):
             * what it takes, then the first refused one as below. (Drop
             * offers each message on its own: a full pool refuses a run
             * at the price of building it.) */
            uint64_t m = s->cnt - k < budget ? s->cnt - k : budget, sent;
            rc = bench_send_run(ctx, to, v, m, &sent);
            k += sent;
            budget -= (unsigned)sent;
            if (rc == SHOAL_OK)
                continue;
        } else {
            rc = shoal_send(ctx, to, MSG_WORK, &v, sizeof v);
        }
        budget--;
        if (rc == SHOAL_OK) {
            k++;
        } else if (rc == refused && cfg->drop) {
            s->dropped++;
            k++;
            rc = SHOAL_OK;
        } else if (rc == refused && shoal_notify_room(ctx, to) == SHOAL_OK) {
            s->k = k;
            s->room_waits++; /* the same message again when ROOM comes */
            return 0;
        } else {
            break;
        }
    }
    s->k = k;
    if (k == s->cnt) {
        if (!cfg->pooled)
            rc = bench_send_done(ctx, cfg->workers, W4_WORKERS, &s->done_sent);
        if (cfg->pooled || s->done_sent == W4_WORKERS) {
            bench_report_t r = {.count = 0, .acc = 0, .dropped = s->dropped};
            rc = shoal_send(ctx, cfg->worker.collector, MSG_REPORT, &r, sizeof r);
            if (rc != SHOAL_OK)
                shoal_panic(ctx, "report: %s", shoal_strerror(rc));
            if (cfg->pooled &&
                atomic_fetch_sub_explicit(&cfg->running, 1, memory_order_acq_rel) == 1) {
                rc = shoal_send_priority(ctx, cfg->pool, SHOAL_POOL_DRAIN, NULL, 0);
                if (rc != SHOAL_OK)
                    shoal_panic(ctx, "drain: %s", shoal_strerror(rc));
            }
            atomic_fetch_add_explicit(&cfg->retries, s->full, memory_order_relaxed);
            atomic_fetch_add_explicit(&cfg->room_waits, s->room_waits, memory_order_relaxed);
            fprintf(stderr,
                    "shoal-bench: W4 producer %u: dropped %llu, %llu waits for room, %llu "
                    "retries after a %s\n",
                    s->p, (unsigned long long)s->dropped, (unsigned long long)s->room_waits,
                    (unsigned long long)s->full, cfg->pooled ? "busy pool" : "full mailbox");
            shoal_exit(ctx, 0);
            return 0;
        }
    }
    bench_next_turn(ctx, rc, &s->full);
    return 0;
}

static const shoal_behaviour_t producer_behaviour = {
    .name = "w4.producer",
    .state_size = sizeof(w4_producer_t),
    .init = producer_init,
    .handle_message = producer_handle,
};

int bench_w4(int argc, char **argv)
{
    uint64_t n;
    int drop = 0;
    if (argc < 1 || argc > 2 || bench_parse_u64(argv[0], 1, &n) != 0)
        return BENCH_USAGE;
    if (argc == 2) {
        if (strcmp(argv[1], "drop") == 0)
            drop = 1;
        else if (strcmp(argv[1], "block") != 0)
            return BENCH_USAGE;
    }
    bench_t b;
    if (bench_init(&b, "W4") != SHOAL_OK)
        return BENCH_VERIFY;

    static w4_cfg_t cfg; /* read by the actors until the end */
    static w4_producer_args_t pargs[W4_PRODUCERS];
    cfg.n = n;
    cfg.drop = drop;
    cfg.chunk = (unsigned)bench_env_ulong("SHOAL_BENCH_CHUNK", 64);
    if (cfg.chunk == 0)
        cfg.chunk = 1;
    cfg.pooled = !bench_direct();
    atomic_store(&cfg.running, W4_PRODUCERS);
    cfg.worker.pooled = cfg.pooled;
    cfg.worker.dones = cfg.pooled ? 0 : W4_PRODUCERS; /* direct: a MSG_DONE from each producer */
    shoal_pid_t producers[W4_PRODUCERS];
    int rc = bench_spawn_collector(&b, W4_WORKERS + W4_PRODUCERS, &cfg.worker.collector);
    if (rc == SHOAL_OK && cfg.pooled)
        rc = bench_spawn_worker_pool(&b, "w4.pool", &cfg.worker, W4_WORKERS, W4_CAP, &cfg.pool);
    for (unsigned j = 0; j < W4_WORKERS && rc == SHOAL_OK && !cfg.pooled; j++)
        rc = bench_spawn_worker(&b, &cfg.worker, W4_CAP, &cfg.workers[j]);
    for (unsigned p = 0; p < W4_PRODUCERS && rc == SHOAL_OK; p++) {
        pargs[p].cfg = &cfg;
        pargs[p].p = p;
        rc = shoal_runtime_spawn(b.rt, &producer_behaviour, &pargs[p], NULL, &producers[p]);
    }
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W4 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_inspect_t insp = {0};
    bench_begin(&b);
    for (unsigned p = 0; p < W4_PRODUCERS && rc == SHOAL_OK; p++)
        rc = shoal_runtime_send(b.rt, producers[p], MSG_START, NULL, 0);
    int waited = rc != SHOAL_OK ? -1
                 : cfg.pooled   ? bench_wait_inspect(&b, cfg.pool, &insp)
                                : bench_wait(&b);
    if (waited != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W4 start: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    char params[64], bounded[48], ins[160];
    snprintf(params, sizeof params, "N=%llu,policy=%s", (unsigned long long)n,
             drop ? "drop" : "block");
    if (cfg.pooled)
        snprintf(bounded, sizeof bounded, "native(pool=%ux%u)", W4_WORKERS, W4_CAP);
    else
        snprintf(bounded, sizeof bounded, "native(mailbox=%u)", W4_CAP);
    bench_result(&b, params, b.count, b.t1 - b.t0,
                 "delivered=%llu dropped=%llu check=%llu bounded=%s pool=%s producer=actor "
                 "chunk=%u send=%s wait=room retries=%llu room_waits=%llu%s",
                 (unsigned long long)b.count, (unsigned long long)b.dropped,
                 (unsigned long long)b.acc, bounded, cfg.pooled ? "shoal-pool" : "direct-actors",
                 cfg.chunk, cfg.pooled && !drop && bench_send_many() ? "send_many" : "send",
                 (unsigned long long)atomic_load(&cfg.retries),
                 (unsigned long long)atomic_load(&cfg.room_waits),
                 bench_inspect_extras(&insp, ins, sizeof ins));
    int status = BENCH_OK;
    if (b.count + b.dropped != n) {
        fprintf(stderr,
                "shoal-bench: W4 verification failed: delivered %llu + dropped %llu "
                "!= N %llu\n",
                (unsigned long long)b.count, (unsigned long long)b.dropped, (unsigned long long)n);
        status = BENCH_VERIFY;
    } else if (!drop) {
        uint32_t want = bench_expected_check(n);
        uint64_t retries = atomic_load(&cfg.retries);
        if (b.dropped != 0 || b.acc != want) {
            fprintf(stderr,
                    "shoal-bench: W4 block verification failed: dropped %llu, check "
                    "%llu (want %u)\n",
                    (unsigned long long)b.dropped, (unsigned long long)b.acc, want);
            status = BENCH_VERIFY;
        } else if (retries != 0) {
            /* A producer refused waits for ROOM; a retry means a receiver
             * could not tell it (the "they should be zero"). */
            fprintf(stderr,
                    "shoal-bench: W4 block verification failed: %llu retries (a refused "
                    "producer could not wait for ROOM)\n",
                    (unsigned long long)retries);
            status = BENCH_VERIFY;
        }
    }
    bench_finish(&b, status);
}
