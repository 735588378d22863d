/* w2.c - W2 ping-pong: `W2 P M` (SHOAL_BENCH_W2_SHUFFLE=1: pairs started
 * in a shuffled order).
 *
 * P pairs. The driver (main thread) sends each ping MSG_START carrying its
 * pong's PID, the collector's PID and M. A ping sends MSG_PING(k) for
 * k = M .. 1, each after MSG_PONG(k+1) came back; after PONG(1) it reports
 * (count = M) to the collector and exits. A pong answers every PING(k) with
 * PONG(k) to the sender and exits after k = 1. Mailboxes are unbounded (at
 * most one message is ever queued).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct w2_ping_s {
    shoal_pid_t collector;
    uint64_t m;
} w2_ping_t;

static int ping_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    w2_ping_t *s = state;
    shoal_pid_t to;
    uint64_t k;
    if (msg->type == MSG_START) {
        w2_start_t st;
        memcpy(&st, msg->data, sizeof st);
        s->collector = st.collector;
        s->m = st.m;
        to = st.pong;
        k = st.m;
    } else if (msg->type == MSG_PONG) {
        k = *(const uint64_t *)msg->data;
        if (k == 1) {
            bench_report_t r = {.count = s->m, .acc = 0, .dropped = 0};
            int rc = shoal_send(ctx, s->collector, MSG_REPORT, &r, sizeof r);
            if (rc != SHOAL_OK)
                shoal_panic(ctx, "report: %s", shoal_strerror(rc));
            shoal_exit(ctx, 0);
            return 0;
        }
        to = msg->from;
        k--;
    } else {
        return 0;
    }
    int rc = shoal_send(ctx, to, MSG_PING, &k, sizeof k);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "ping: %s", shoal_strerror(rc));
    return 0;
}

static int pong_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type != MSG_PING)
        return 0;
    uint64_t k = *(const uint64_t *)msg->data;
    int rc = shoal_send(ctx, msg->from, MSG_PONG, &k, sizeof k);
    if (rc != SHOAL_OK)
        shoal_panic(ctx, "pong: %s", shoal_strerror(rc));
    if (k == 1)
        shoal_exit(ctx, 0);
    return 0;
}

const shoal_behaviour_t bench_w2_ping = {
    .name = "w2.ping",
    .state_size = sizeof(w2_ping_t),
    .handle_message = ping_handle,
};

static const shoal_behaviour_t pong_behaviour = {
    .name = "w2.pong",
    .state_size = 0,
    .handle_message = pong_handle,
};

int bench_w2(int argc, char **argv)
{
    uint64_t p, m;
    if (argc != 2 || bench_parse_u64(argv[0], 1, &p) != 0 || bench_parse_u64(argv[1], 1, &m) != 0 ||
        p > 1u << 22)
        return BENCH_USAGE;
    bench_t b;
    if (bench_init(&b, "W2") != SHOAL_OK)
        return BENCH_VERIFY;

    shoal_pid_t collector;
    shoal_pid_t *pings = malloc(p * sizeof *pings);
    w2_start_t *starts = malloc(p * sizeof *starts);
    int rc =
        pings == NULL || starts == NULL ? SHOAL_ENOMEM : bench_spawn_collector(&b, p, &collector);
    for (uint64_t j = 0; j < p && rc == SHOAL_OK; j++) {
        starts[j].collector = collector;
        starts[j].m = m;
        rc = shoal_runtime_spawn(b.rt, &pong_behaviour, NULL, NULL, &starts[j].pong);
        if (rc == SHOAL_OK)
            rc = shoal_runtime_spawn(b.rt, &bench_w2_ping, NULL, NULL, &pings[j]);
    }
    if (rc != SHOAL_OK) {
        fprintf(stderr, "shoal-bench: W2 set-up: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }

    /* SHOAL_BENCH_W2_SHUFFLE=1: start the pairs in a shuffled (fixed) order,
     * so the pairs each worker ends up with are scattered over memory
     * instead of lying in runs of neighbours (bench/RESULTS.md). */
    uint64_t *order = malloc(p * sizeof *order);
    if (order == NULL) {
        fprintf(stderr, "shoal-bench: W2 set-up: %s\n", shoal_strerror(SHOAL_ENOMEM));
        bench_finish(&b, BENCH_VERIFY);
    }
    for (uint64_t j = 0; j < p; j++)
        order[j] = j;
    if (bench_env_ulong("SHOAL_BENCH_W2_SHUFFLE", 0) != 0) {
        uint64_t x = 88172645463325252u; /* xorshift64, Fisher-Yates */
        for (uint64_t j = p; j-- > 1;) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint64_t k = x % (j + 1), t = order[j];
            order[j] = order[k];
            order[k] = t;
        }
    }
    bench_begin(&b);
    for (uint64_t i = 0; i < p && rc == SHOAL_OK; i++) {
        uint64_t j = order[i];
        rc = shoal_runtime_send(b.rt, pings[j], MSG_START, &starts[j], sizeof starts[j]);
    }
    free(order);
    if (rc != SHOAL_OK || bench_wait(&b) != 0) {
        if (rc != SHOAL_OK)
            fprintf(stderr, "shoal-bench: W2 start: %s\n", shoal_strerror(rc));
        bench_finish(&b, BENCH_VERIFY);
    }
    bench_end(&b);

    double secs = b.t1 - b.t0;
    char params[64];
    snprintf(params, sizeof params, "P=%llu,M=%llu", (unsigned long long)p, (unsigned long long)m);
    bench_result(&b, params, 2 * p * m, secs, "rtt_ns=%.1f driver=main", secs * 1e9 / (double)m);
    int status = BENCH_OK;
    if (b.count != p * m) {
        fprintf(stderr, "shoal-bench: W2 verification failed: %llu round trips (want %llu)\n",
                (unsigned long long)b.count, (unsigned long long)(p * m));
        status = BENCH_VERIFY;
    }
    bench_finish(&b, status);
}
