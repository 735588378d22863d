/* w1.c - W1 pool throughput: `W1 N W`.
 *
 * shoal has no pools yet, so this is round-robin over W plain worker actors
 * (pool=rr-actors). The producer is an actor: each turn it sends up to
 * `chunk` messages (message i to worker i mod W), then sends itself MSG_CONT
 * and returns, so the workers get the CPU. Worker mailboxes are bounded
 * (mailbox=1024, like the Go peer's channel capacity): on SHOAL_EFULL the
 * producer ends its turn the same way and retries the same i in its next
 * turn; nothing is dropped. After message N-1 it sends MSG_DONE to every
 * worker (retrying on SHOAL_EFULL too); per-sender FIFO puts it behind that
 * worker's work. Workers report (count, acc) to the collector and exit.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

typedef struct w1_cfg_s {
    uint64_t n;
    unsigned w;
    unsigned chunk;
    bench_worker_args_t worker; /* collector, dones */
    shoal_pid_t *workers;
} w1_cfg_t;

typedef struct w1_producer_s {
    const w1_cfg_t *cfg;
    uint64_t i;         /* next message */
    unsigned next_w;    /* i mod W */
    uint64_t done_sent; /* MSG_DONEs sent so far */
    uint64_t full;      /* SHOAL_EFULL seen (each ends a turn) */
} w1_producer_t;

static int producer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((w1_producer_t *)state)->cfg = args;
    return 0;
}

static int producer_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w1_producer_t *s = state;
    const w1_cfg_t *cfg = s->cfg;
    if (msg->type != MSG_START && msg->type != MSG_CONT)
        return 0;
    unsigned budget = cfg->chunk;
    uint64_t i = s->i;
    unsigned wi = s->next_w;
    int rc = SHOAL_OK;
    while (i < cfg->n && budget != 0) {
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
    if (i == cfg->n) {
        rc = bench_send_done(ctx, cfg->workers, cfg->w, &s->done_sent);
        if (s->done_sent == cfg->w) {
            fprintf(stderr, "shoal-bench: W1 producer: %llu turns ended by a full mailbox\n",
                    (unsigned long long)s->full);
            shoal_exit(ctx, 0);
            return 0;
        }
    }
    bench_next_turn(ctx, rc, &s->full);
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
    bench_t b;
    if (bench_init(&b, "W1") != SHOAL_OK)
        return BENCH_VERIFY;

    static w1_cfg_t cfg; /* read by init and the producer until the end */
    cfg.n = n;
    cfg.w = (unsigned)w;
    cfg.chunk = (unsigned)bench_env_ulong("SHOAL_BENCH_CHUNK", 256);
    if (cfg.chunk == 0)
        cfg.chunk = 1;
    cfg.workers = malloc(w * sizeof *cfg.workers);
    uint32_t limit = (uint32_t)bench_env_ulong("SHOAL_BENCH_W1_MAILBOX", 1024);
    cfg.worker.dones = 1; /* one producer */
    shoal_pid_t producer;
    int rc =
        cfg.workers == NULL ? SHOAL_ENOMEM : bench_spawn_collector(&b, w, &cfg.worker.collector);
    for (uint64_t j = 0; j < w && rc == SHOAL_OK; j++)
        rc = bench_spawn_worker(&b, &cfg.worker, limit, &cfg.workers[j]);
    if (rc == SHOAL_OK)
        rc = shoal_runtime_spawn(b.rt, &producer_behaviour, &cfg, NULL, &producer);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W1 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_begin(&b);
    rc = shoal_runtime_send(b.rt, producer, MSG_START, NULL, 0);
    if (rc != SHOAL_OK || bench_wait(&b) != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W1 start: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    uint32_t want = bench_expected_check(n);
    char params[64], mbox[24];
    snprintf(params, sizeof params, "N=%llu,W=%llu", (unsigned long long)n, (unsigned long long)w);
    if (limit == 0)
        snprintf(mbox, sizeof mbox, "unbounded");
    else
        snprintf(mbox, sizeof mbox, "%u", limit);
    bench_result(&b, params, b.count, b.t1 - b.t0,
                 "check=%llu pool=rr-actors producer=actor mailbox=%s chunk=%u yield=shoal_yield",
                 (unsigned long long)b.acc, mbox, cfg.chunk);
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
