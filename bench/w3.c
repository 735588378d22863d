/* w3.c - W3 spawn: `W3 A`.
 *
 * The driver (main thread) spawns A actors one after another into a handle
 * array allocated and touched before rss_before is read. The actors have no
 * state and no init, so a spawn is only a record (registry.c); nothing runs
 * until the driver sends each one message carrying (i, collector). On it the
 * actor reports (count 1, acc i) to the collector and exits. The collector's
 * XOR of all i is checked against the XOR of 0 .. A-1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct w3_msg_s {
    uint64_t i;
    shoal_pid_t collector;
} w3_msg_t;

static int actor_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type != MSG_WORK)
        return 0;
    w3_msg_t m;
    memcpy(&m, msg->data, sizeof m);
    bench_report_t r = {.count = 1, .acc = m.i, .dropped = 0};
    int rc = shoal_send(ctx, m.collector, MSG_REPORT, &r, sizeof r);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "report: %s", shoal_strerror(rc));
    shoal_exit(ctx, 0);
    return 0;
}

static const shoal_behaviour_t actor_behaviour = {
    .name = "w3.actor",
    .state_size = 0,
    .handle_message = actor_handle,
};

/* XOR of 0 .. n-1. */
static uint64_t xor_upto(uint64_t n)
{
    uint64_t x = n - 1; /* XOR of 0..x */
    switch (x & 3) {
    case 0:
        return x;
    case 1:
        return 1;
    case 2:
        return x + 1;
    default:
        return 0;
    }
}

int bench_w3(int argc, char **argv)
{
    uint64_t a;
    if (argc != 1 || bench_parse_u64(argv[0], 1, &a) != 0 || a > 1u << 24)
        return BENCH_USAGE;
    bench_t b;
    if (bench_init(&b, "W3") != SHOAL_OK)
        return BENCH_VERIFY;
    if (a + 16 > 1u << 24) {
        fprintf(stderr, "shoal-bench: W3: A beyond the runtime's default max_actors\n");
        bench_finish(&b, BENCH_UNSUPPORTED);
    }

    shoal_pid_t collector;
    shoal_pid_t *pids = malloc(a * sizeof *pids);
    int rc = pids == NULL ? SHOAL_ENOMEM : bench_spawn_collector(&b, a, &collector);
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W3 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    memset(pids, 0xff, a * sizeof *pids); /* touch: not actor memory */
    long rss_before = bench_status_kb("VmRSS");

    bench_begin(&b);
    uint64_t spawned = 0;
    for (; spawned < a; spawned++) {
        rc = shoal_runtime_spawn(b.rt, &actor_behaviour, NULL, NULL, &pids[spawned]);
        if (rc != SHOAL_OK)
            break;
    }
    double t_spawn = bench_now();
    long rss_spawn = bench_status_kb("VmRSS");
    long proc_threads = bench_status_kb("Threads"); /* a count, not kB: with A actors alive */
    uint64_t mallocs_spawn = bench_malloc_calls() - b.mallocs0;
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W3: spawn %llu: %s\n", (unsigned long long)spawned,
                shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    for (uint64_t i = 0; i < a && rc == SHOAL_OK; i++) {
        w3_msg_t m = {.i = i, .collector = collector};
        rc = shoal_runtime_send(b.rt, pids[i], MSG_WORK, &m, sizeof m);
    }
    if (rc != SHOAL_OK || bench_wait(&b) != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W3 send: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    char params[32];
    snprintf(params, sizeof params, "A=%llu", (unsigned long long)a);
    double per_actor = (double)(rss_spawn - rss_before) * 1024.0 / (double)a;
    bench_result(&b, params, b.count, b.t1 - b.t0,
                 "spawn_secs=%.4f msg_secs=%.4f rss_before_kb=%ld rss_after_spawn_kb=%ld "
                 "bytes_per_actor=%.0f driver=main spawn_mallocs=%llu proc_threads=%ld",
                 t_spawn - b.t0, b.t1 - t_spawn, rss_before, rss_spawn, per_actor,
                 (unsigned long long)mallocs_spawn, proc_threads);
    int status = BENCH_OK;
    if (b.count != a || b.acc != xor_upto(a)) {
        fprintf(stderr,
                "shoal-bench: W3 verification failed: %llu reports (want %llu), "
                "xor %llu (want %llu)\n",
                (unsigned long long)b.count, (unsigned long long)a, (unsigned long long)b.acc,
                (unsigned long long)xor_upto(a));
        status = BENCH_VERIFY;
    }
    bench_finish(&b, status);
}
