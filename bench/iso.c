/* iso.c - pools with `isolation: process` (host/isolated.h), beside the
 * same pool in the process: `ISO W1 N W`, `ISO W2 M`, `ISO CALL K`.
 *
 * The pool runs a behaviour of the bench plugin (plugin/benchpool.c: an
 * isolated pool's child loads its code from a plugin), started from a
 * config text as shoald starts it; SHOAL_BENCH_ISOLATION=none starts the
 * same pool, same plugin, in the process, for the ratio.
 *
 *   W1 N W   one producer actor sends N messages to a pool of W workers
 *            (mailbox 1024) as W1 does, yielding on SHOAL_EBUSY; then drains
 *            it: each worker reports (count, acc) to the producer, which
 *            passes the reports on to the collector. check= as W1's.
 *   W2 M     W2 with one pair: the ping here, the pong a pool of one
 *            worker: M round trips.
 *   CALL K   the main thread calls the pool (one worker) K times, each a
 *            blocking call: the round trip's median and tail.
 *
 * The child process is this program again (--isolated-worker): main hands
 * that to the host's child main before anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "host/code.h"
#include "host/config.h"
#include "host/host.h"
#include "host/isolated.h"
#include "pool/pool.h"

typedef struct iso_s {
    bool isolated;
    shoal_loader_t *loader;
    shoal_config_t *config;
    shoal_pid_t pool;
} iso_t;

/* The pool, as shoald starts one from its config. */
static int iso_pool(bench_t *b, iso_t *iso, const char *behaviour, uint32_t size, uint32_t mailbox)
{
    const char *mode = getenv("SHOAL_BENCH_ISOLATION");
    iso->isolated = mode == NULL || strcmp(mode, "none") != 0;
    char text[1024], why[1200];
    snprintf(text, sizeof text,
             "runtime: { threads: %s }\n"
             "plugins: { benchpool: %s }\n"
             "pools:\n"
             "  iso: { worker: benchpool.%s, size: %u, mailbox: %u, isolation: %s }\n",
             getenv("SHOAL_BENCH_CHILD_THREADS") ? getenv("SHOAL_BENCH_CHILD_THREADS") : "auto",
             SHOAL_BENCH_PLUGIN, behaviour, size, mailbox, iso->isolated ? "process" : "none");
    shoal_diag_t err = {0};
    int rc = shoal__config_parse("shoal-bench.yaml", text, strlen(text), &iso->config, &err);
    if (rc == SHOAL_OK)
        rc = shoal__loader_create(&iso->loader);
    if (rc == SHOAL_OK)
        rc = shoal__config_resolve(iso->config, iso->loader, &err);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: ISO: %s\n", shoal__diag_format(&err, why, sizeof why));
        return rc;
    }
    const shoal_config_pool_t *cp = &iso->config->pools[0];
    shoal_pool_spec_t specs[SHOAL_POOL_MAX_DEPTH];
    const shoal_config_pool_t *leaf = NULL;
    shoal__host_spec_chain(cp, specs, &leaf);
    shoal_remote_launch_t launch;
    shoal_pool_opts_t opts = {0};
    if (iso->isolated) {
        if ((rc = shoal__host_isolated_spec(iso->config, cp, 1, specs, &launch, why, sizeof why)) !=
            SHOAL_OK) {
            fprintf(stderr, "shoal-bench: ISO: %s\n", why);
            return rc;
        }
        opts.remote = &launch;
    }
    shoal_code_t *code = shoal__code_new(leaf->module, leaf->args);
    if (code == NULL)
        return SHOAL_ENOMEM;
    shoal_pool_hold_t hold = shoal__code_hold(code);
    rc = shoal__pool_start_ex(b->rt, &specs[0], &hold, &opts, 10000, &iso->pool, why, sizeof why);
    shoal__code_release(code);
    if (rc != SHOAL_OK)
        fprintf(stderr, "shoal-bench: ISO: the pool did not start: %s\n", why);
    return rc;
}

/* ---- W1 ------------------------------------------------------------------------ */

typedef struct iso_w1_s {
    shoal_pid_t pool, collector;
    uint64_t n, i;
    unsigned chunk;
    uint64_t full;
} iso_w1_t;

static int w1_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    memcpy(state, args, sizeof(iso_w1_t));
    return 0;
}

/* Sends as W1's producer; the workers' reports come back to it (they reply
 * to who sent them work) and go on to the collector. */
static int w1_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    iso_w1_t *s = state;
    if (msg->type == MSG_REPORT) {
        if (shoal_send(ctx, s->collector, MSG_REPORT, msg->data, msg->size) != SHOAL_OK)
            shoal_panic(ctx, "report");
        return 0;
    }
    if (msg->type != MSG_START && msg->type != MSG_CONT)
        return 0;
    int rc = SHOAL_OK;
    for (unsigned k = 0; k < s->chunk && s->i < s->n; k++) {
        if ((rc = shoal_send(ctx, s->pool, MSG_WORK, &s->i, sizeof s->i)) != SHOAL_OK)
            break;
        s->i++;
    }
    if (s->i == s->n) {
        if (shoal_send_priority(ctx, s->pool, SHOAL_POOL_DRAIN, NULL, 0) != SHOAL_OK)
            shoal_panic(ctx, "drain");
        fprintf(stderr, "shoal-bench: ISO W1 producer: %llu turns ended by a busy pool\n",
                (unsigned long long)s->full);
        return 0; /* stays, for the reports */
    }
    bench_next_turn(ctx, rc, &s->full);
    return 0;
}

static const shoal_behaviour_t w1_producer = {
    .name = "iso.w1.producer",
    .state_size = sizeof(iso_w1_t),
    .init = w1_init,
    .handle_message = w1_handle,
};

static int iso_w1(bench_t *b, iso_t *iso, int argc, char **argv)
{
    uint64_t n, w;
    if (argc != 2 || bench_parse_u64(argv[0], 1, &n) != 0 || bench_parse_u64(argv[1], 1, &w) != 0 ||
        w > 1024)
        return BENCH_USAGE;
    static iso_w1_t args;
    shoal_pid_t producer;
    int rc = iso_pool(b, iso, "w1", (uint32_t)w, 1024);
    if (rc == SHOAL_OK)
        rc = bench_spawn_collector(b, w, &args.collector);
    args.pool = iso->pool;
    args.n = n;
    args.chunk = (unsigned)bench_env_ulong("SHOAL_BENCH_CHUNK", 256);
    if (rc == SHOAL_OK)
        rc = shoal_runtime_spawn(b->rt, &w1_producer, &args, NULL, &producer);
    if (rc != SHOAL_OK)
        return BENCH_VERIFY;
    bench_begin(b);
    if (shoal_runtime_send(b->rt, producer, MSG_START, NULL, 0) != SHOAL_OK || bench_wait(b) != 0)
        return BENCH_VERIFY;
    bench_end(b);
    char params[64];
    snprintf(params, sizeof params, "N=%llu,W=%llu", (unsigned long long)n, (unsigned long long)w);
    bench_result(b, params, b->count, b->t1 - b->t0,
                 "check=%llu pool=%s producer=actor mailbox=1024 done=drain",
                 (unsigned long long)b->acc, iso->isolated ? "isolated-process" : "in-process");
    if (b->count != n || b->acc != bench_expected_check(n)) {
        fprintf(stderr, "shoal-bench: ISO W1 verification failed: count %llu (want %llu)\n",
                (unsigned long long)b->count, (unsigned long long)n);
        return BENCH_VERIFY;
    }
    return BENCH_OK;
}

/* ---- W2 ------------------------------------------------------------------------ */

static int iso_w2(bench_t *b, iso_t *iso, int argc, char **argv)
{
    uint64_t m;
    if (argc != 1 || bench_parse_u64(argv[0], 1, &m) != 0)
        return BENCH_USAGE;
    static w2_start_t start;
    shoal_pid_t ping;
    int rc = iso_pool(b, iso, "pong", 1, 16);
    if (rc == SHOAL_OK)
        rc = bench_spawn_collector(b, 1, &start.collector);
    if (rc == SHOAL_OK)
        rc = shoal_runtime_spawn(b->rt, &bench_w2_ping, NULL, NULL, &ping);
    if (rc != SHOAL_OK)
        return BENCH_VERIFY;
    start.pong = iso->pool;
    start.m = m;
    bench_begin(b);
    if (shoal_runtime_send(b->rt, ping, MSG_START, &start, sizeof start) != SHOAL_OK ||
        bench_wait(b) != 0)
        return BENCH_VERIFY;
    bench_end(b);
    double secs = b->t1 - b->t0;
    char params[64];
    snprintf(params, sizeof params, "P=1,M=%llu", (unsigned long long)m);
    bench_result(b, params, 2 * m, secs, "rtt_ns=%.1f driver=main pool=%s", secs * 1e9 / (double)m,
                 iso->isolated ? "isolated-process" : "in-process");
    return b->count == m ? BENCH_OK : BENCH_VERIFY;
}

/* ---- CALL ------------------------------------------------------------------------ */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int iso_call(bench_t *b, iso_t *iso, int argc, char **argv)
{
    uint64_t k;
    if (argc != 1 || bench_parse_u64(argv[0], 1, &k) != 0 || k > 10000000)
        return BENCH_USAGE;
    if (iso_pool(b, iso, "pong", 1, 16) != SHOAL_OK)
        return BENCH_VERIFY;
    double *us = malloc(k * sizeof *us);
    if (us == NULL)
        return BENCH_VERIFY;
    uint64_t bad = 0;
    bench_begin(b);
    for (uint64_t i = 0; i < k; i++) {
        double t0 = bench_now();
        shoal_answer_t a;
        int rc = shoal_runtime_call(b->rt, iso->pool, MSG_PING, &i, sizeof i, 10000, &a);
        us[i] = (bench_now() - t0) * 1e6;
        bad += rc != SHOAL_OK || a.status != SHOAL_OK || a.size != sizeof i ||
               memcmp(a.data, &i, sizeof i) != 0;
        if (rc == SHOAL_OK)
            shoal_answer_release(&a);
    }
    bench_end(b);
    qsort(us, k, sizeof *us, by_value);
    char params[64];
    snprintf(params, sizeof params, "K=%llu", (unsigned long long)k);
    bench_result(b, params, k, b->t1 - b->t0,
                 "call_p50_us=%.1f call_p90_us=%.1f call_p99_us=%.1f call_max_us=%.1f pool=%s",
                 us[k / 2], us[k * 9 / 10], us[k * 99 / 100], us[k - 1],
                 iso->isolated ? "isolated-process" : "in-process");
    free(us);
    if (bad != 0) {
        fprintf(stderr, "shoal-bench: ISO CALL: %llu calls not answered right\n",
                (unsigned long long)bad);
        return BENCH_VERIFY;
    }
    return BENCH_OK;
}

int bench_iso(int argc, char **argv)
{
    if (argc < 1)
        return BENCH_USAGE;
    const char *what = argv[0];
    bench_t b;
    if (strcmp(what, "W1") != 0 && strcmp(what, "W2") != 0 && strcmp(what, "CALL") != 0)
        return BENCH_USAGE;
    if (bench_init(&b, strcmp(what, "CALL") == 0 ? "CALL" : what) != SHOAL_OK)
        return BENCH_VERIFY;
    iso_t iso = {0};
    int rc = strcmp(what, "W1") == 0   ? iso_w1(&b, &iso, argc - 1, argv + 1)
             : strcmp(what, "W2") == 0 ? iso_w2(&b, &iso, argc - 1, argv + 1)
                                       : iso_call(&b, &iso, argc - 1, argv + 1);
    if (rc == BENCH_USAGE)
        return rc;
    bench_finish(&b, rc);
}
