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
 *
 * This file sets the run up and prints its RESULT line; the actors are in
 * w5_worker.c (worker, collector) and w5_producer.c, the latency histogram
 * in w5_hist.c, what they share in w5.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/pool.h"
#include "w5.h"

/* ---- set-up ------------------------------------------------------------- */

/* The pool of the run's kind. A pull spec the runtime refuses returns its error;
 * a pool of another kind than asked is SHOAL_ENOTSUP (both said on stderr). */
static int spawn_pool(bench_t *b, w5_cfg_t *cfg, uint32_t buffer)
{
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.name = "w5.pool";
    spec.worker = &w5_worker_behaviour;
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
    int rc = shoal_runtime_spawn(b.rt, &w5_collector_behaviour, &cfg, NULL, &cfg.collector);
    if (rc == SHOAL_OK && mode != W5_DIRECT) {
        rc = spawn_pool(&b, &cfg, (uint32_t)buffer);
    } else if (rc == SHOAL_OK) {
        shoal_spawn_opts_t o = {.mailbox_limit = W5_CAP};
        cfg.workers = malloc(w * sizeof *cfg.workers);
        if (cfg.workers == NULL)
            rc = SHOAL_ENOMEM;
        for (uint64_t j = 0; j < w && rc == SHOAL_OK; j++)
            rc = shoal_runtime_spawn(b.rt, &w5_worker_behaviour, &cfg, &o, &cfg.workers[j]);
    }
    if (rc == SHOAL_OK)
        rc = shoal_runtime_spawn(b.rt, &w5_producer_behaviour, &cfg, NULL, &producer);
    if (rc == SHOAL_ENOTSUP) /* no pull pools here: said above, no result */
        bench_finish(&b, BENCH_UNSUPPORTED);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W5 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    bench_inspect_t insp = {0};
    bench_begin(&b);
    cfg.t0 = w5_now_ns(); /* read by the producer after MSG_START */
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
    bench_result(
        &b, params, b.count, b.t1 - b.t0,
        "check=%llu p50_us=%.1f p99_us=%.1f max_us=%.1f pool=%s bound=%s "
        "producer=actor chunk=%u send=%s retries=%llu room_waits=%llu ahead_yields=%llu "
        "sleeps=%llu "
        "max_lag_us=%.1f latency=hist(log2/%u)%s",
        (unsigned long long)b.acc, (double)w5_hist_percentile(h, 50) / 1e3,
        (double)w5_hist_percentile(h, 99) / 1e3, (double)h->max / 1e3, pool, bound, cfg.chunk,
        cfg.mode != W5_DIRECT && cfg.rate == 0 && bench_send_many() ? "send_many" : "send",
        (unsigned long long)cfg.retries, (unsigned long long)cfg.room_waits,
        (unsigned long long)cfg.ahead_yields, (unsigned long long)cfg.sleeps,
        (double)cfg.max_lag / 1e3, 1u << W5_SUB_BITS, bench_inspect_extras(&insp, ins, sizeof ins));
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
