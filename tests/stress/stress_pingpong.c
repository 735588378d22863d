/* stress_pingpong.c - 10^7 round trips between two actors whose mailboxes
 * hold one message each. Each side sends only after it received, so a send
 * must never be refused: every SHOAL_EFULL is counted and must be 0. A
 * watchdog fails the test if no round trip completes for 10 s.
 *
 * Sizes scale with SHOAL_STRESS_SCALE (a factor, default 1; sanitizer
 * builds default to 0.05).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define STALL_S 10.0

static uint64_t rounds;
static _Atomic shoal_pid_t ping_pid, pong_pid;
static atomic_ulong round_trips; /* written by ping */
static atomic_int efull_ping, efull_pong, other_err, seq_bad, done;

typedef struct {
    uint64_t expect; /* ping: the next number it expects back (starts at 0);
                        pong: the last number it saw (starts at 0) */
} side_t;

/* Ping: receives n back from pong, checks it, sends n + 1. */
static int ping_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    side_t *s = state;
    uint64_t n;
    memcpy(&n, msg->data, sizeof n);
    if (n != s->expect)
        atomic_fetch_add(&seq_bad, 1);
    s->expect = n + 1;
    atomic_store_explicit(&round_trips, n, memory_order_relaxed);
    if (n >= rounds) {
        atomic_store(&done, 1);
        return 0;
    }
    n++;
    int rc =
        shoal_send(ctx, atomic_load_explicit(&pong_pid, memory_order_relaxed), 1, &n, sizeof n);
    if (rc == SHOAL_EFULL)
        atomic_fetch_add(&efull_ping, 1);
    else if (rc != SHOAL_OK)
        atomic_fetch_add(&other_err, 1);
    if (rc != SHOAL_OK)
        atomic_store(&done, 1); /* the chain is broken: end the test now */
    return 0;
}

/* Pong: checks n follows the last one, echoes n back. */
static int pong_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    side_t *s = state;
    uint64_t n;
    memcpy(&n, msg->data, sizeof n);
    if (n != s->expect + 1)
        atomic_fetch_add(&seq_bad, 1);
    s->expect = n;
    int rc = shoal_send(ctx, msg->from, 1, &n, sizeof n);
    if (rc == SHOAL_EFULL)
        atomic_fetch_add(&efull_pong, 1);
    else if (rc != SHOAL_OK)
        atomic_fetch_add(&other_err, 1);
    if (rc != SHOAL_OK)
        atomic_store(&done, 1);
    return 0;
}

static void run(unsigned threads)
{
    static const shoal_behaviour_t ping = {
        .name = "ping", .state_size = sizeof(side_t), .handle_message = ping_handle};
    static const shoal_behaviour_t pong = {
        .name = "pong", .state_size = sizeof(side_t), .handle_message = pong_handle};
    atomic_store(&round_trips, 0);
    atomic_store(&efull_ping, 0);
    atomic_store(&efull_pong, 0);
    atomic_store(&other_err, 0);
    atomic_store(&seq_bad, 0);
    atomic_store(&done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(threads);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_spawn_opts_t one = {.mailbox_limit = 1};
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ping, NULL, &one, &a), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &pong, NULL, &one, &b), SHOAL_OK);
    atomic_store(&ping_pid, a);
    atomic_store(&pong_pid, b);
    /* The first ball: 0 to ping, as if pong had echoed it; ping sends 1. */
    double t0 = shoal_test_now();
    uint64_t zero = 0;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, a, 1, &zero, sizeof zero), SHOAL_OK);
    uint64_t last = UINT64_MAX;
    double last_change = shoal_test_now();
    int stalled = 0;
    while (!atomic_load(&done)) {
        uint64_t r = atomic_load(&round_trips);
        if (r != last) {
            last = r;
            last_change = shoal_test_now();
        } else if (shoal_test_now() - last_change > STALL_S) {
            stalled = 1;
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    double took = shoal_test_now() - t0;
    fprintf(stderr, "  [%u threads: %llu round trips in %.2f s] ", threads,
            (unsigned long long)atomic_load(&round_trips), took);
    CU_ASSERT_EQUAL(stalled, 0);
    if (stalled) {
        fprintf(stderr, "stalled at round trip %llu\n", (unsigned long long)last);
        abort();
    }
    CU_ASSERT_EQUAL(atomic_load(&efull_pong), 0);
    CU_ASSERT_EQUAL(atomic_load(&efull_ping), 0);
    CU_ASSERT_EQUAL(atomic_load(&other_err), 0);
    CU_ASSERT_EQUAL(atomic_load(&seq_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&round_trips), rounds);
    shoal_runtime_stats_t s;
    shoal_runtime_stats(rt, &s);
    CU_ASSERT_EQUAL(s.msgs_refused, 0);
    CU_ASSERT_EQUAL(s.msgs_sent, 2 * rounds + 1);
    shoal_runtime_destroy(rt);
}

static void pingpong_with_mailbox_limit_one(void)
{
    rounds = (uint64_t)(10000000 * shoal_test_stress_scale(0.05));
    if (rounds < 1000)
        rounds = 1000;
    run(2);
    /* More workers than cores: preemption mid-turn, steals. */
    uint64_t full = rounds;
    rounds = full / 4 > 1000 ? full / 4 : 1000;
    run(4);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"ping-pong with mailbox limit 1", pingpong_with_mailbox_limit_one},
        {NULL, NULL},
    };
    return shoal_test_run("stress_pingpong", cases);
}
