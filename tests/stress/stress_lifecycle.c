/* stress_lifecycle.c - create and destroy a runtime 1,000 times under load.
 * Each time: a ticker re-arming shoal_send_after timers, a ping-pong pair
 * passing handed-over heap payloads, an actor making asynchronous calls
 * (some answered, some left to time out), a parent with children, and a
 * blocking call from this thread; then destroy mid-flight. Afterwards:
 * every actor ran terminate once with SHOAL_ESHUTDOWN, every handed-over
 * payload was freed exactly once, and the process is back to its baseline
 * thread count (every thread joined). Under ASan, LeakSanitizer checks that
 * nothing leaked at exit.
 *
 * Sizes scale with SHOAL_STRESS_SCALE (a factor, default 1; sanitizer
 * builds default to 0.3).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

enum { M_TICK = 1, M_BALL = 2, M_CALL = 3, M_WORK = 4 };

static atomic_int terms, bad_reason, inits, errors;
static atomic_long allocs, frees, balls, ticks, replies, timeouts;
static _Atomic shoal_pid_t echo_pid, pong_pid;

static void counted_free(void *p)
{
    atomic_fetch_add(&frees, 1);
    free(p);
}

static void term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    if (reason != SHOAL_ESHUTDOWN)
        atomic_fetch_add(&bad_reason, 1);
    atomic_fetch_add(&terms, 1);
}

/* ---- ticker ---- */
static int tick_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    static const unsigned char payload[200];
    return shoal_send_after(ctx, shoal_self(ctx), 1, M_TICK, payload, sizeof payload, NULL);
}
static int tick_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    atomic_fetch_add(&ticks, 1);
    /* re-arm, plus a far one that is always pending at destroy */
    if (shoal_send_after(ctx, shoal_self(ctx), 1, M_TICK, msg->data, msg->size, NULL) != SHOAL_OK)
        atomic_fetch_add(&errors, 1);
    shoal_timer_t t;
    if (shoal_send_after(ctx, shoal_self(ctx), 100000, M_WORK, msg->data, msg->size, &t) !=
        SHOAL_OK)
        atomic_fetch_add(&errors, 1);
    return 0;
}

/* ---- ping-pong with handed-over payloads ---- */
static int ball_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    return 0;
}
static int ball_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    atomic_fetch_add(&balls, 1);
    void *p = malloc(48);
    atomic_fetch_add(&allocs, 1);
    shoal_pid_t to = msg->from != SHOAL_PID_NONE ? msg->from : atomic_load(&pong_pid);
    if (shoal_send_owned(ctx, to, M_BALL, p, 48, counted_free) != SHOAL_OK)
        counted_free(p);
    return 0;
}

/* ---- echo: answers the caller's odd calls (and every other), leaves the
 * caller's even ones to time out ---- */
static int echo_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    atomic_store(&echo_pid, shoal_self(ctx));
    return 0;
}
static int echo_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}
static int echo_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    uint64_t *n = state;
    if (msg->type == 1 && (++*n & 1) == 0)
        return SHOAL_DEFER; /* never answered: the caller times out */
    return shoal_reply_set(reply, msg->type, msg->data, msg->size);
}

/* ---- caller: one call in flight at a time, 5 ms timeout ---- */
static int caller_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    return shoal_send(ctx, shoal_self(ctx), M_CALL, NULL, 0);
}
static int caller_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_REPLY)
        atomic_fetch_add(&replies, 1);
    else if (msg->kind == SHOAL_MSG_TIMEOUT)
        atomic_fetch_add(&timeouts, 1);
    shoal_ref_t ref;
    unsigned char big[100] = {1};
    int rc = shoal_call(ctx, atomic_load(&echo_pid), 1, big, sizeof big, 5, &ref);
    /* While the runtime is destroyed the echo may end first: ENOPROC. */
    if (rc != SHOAL_OK && rc != SHOAL_ENOPROC)
        atomic_fetch_add(&errors, 1);
    return 0;
}

/* ---- parent with children ---- */
static int idle_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}
static int child_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    return 0;
}
static const shoal_behaviour_t child_beh = {
    .name = "child", .init = child_init, .handle_message = idle_handle, .terminate = term};
static int parent_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    for (int i = 0; i < 2; i++) {
        shoal_pid_t c;
        int rc = shoal_spawn(ctx, &child_beh, NULL, NULL, &c);
        if (rc != SHOAL_OK)
            return rc;
    }
    return 0;
}

static const shoal_behaviour_t tick_beh = {
    .name = "ticker", .init = tick_init, .handle_message = tick_handle, .terminate = term};
static const shoal_behaviour_t ball_beh = {
    .name = "ball", .init = ball_init, .handle_message = ball_handle, .terminate = term};
static const shoal_behaviour_t echo_beh = {.name = "echo",
                                           .state_size = sizeof(uint64_t),
                                           .init = echo_init,
                                           .handle_message = echo_handle,
                                           .handle_call = echo_call,
                                           .terminate = term};
static const shoal_behaviour_t caller_beh = {
    .name = "caller", .init = caller_init, .handle_message = caller_handle, .terminate = term};
static const shoal_behaviour_t parent_beh = {
    .name = "parent", .init = parent_init, .handle_message = idle_handle, .terminate = term};

#define ACTORS 8 /* ticker, ping, pong, echo, caller, parent + 2 children */

static void create_destroy_under_load(void)
{
    int iterations = (int)(1000 * shoal_test_stress_scale(0.3));
    if (iterations < 20)
        iterations = 20;
    int base = shoal_test_thread_base();
    CU_ASSERT_FATAL(base > 0);
    double t0 = shoal_test_now();
    int failed = 0;
    for (int it = 0; it < iterations && !failed; it++) {
        atomic_store(&terms, 0);
        atomic_store(&bad_reason, 0);
        atomic_store(&inits, 0);
        atomic_store(&errors, 0);
        atomic_store(&balls, 0);
        atomic_store(&echo_pid, SHOAL_PID_NONE);
        long ticks0 = atomic_load(&ticks), timeouts0 = atomic_load(&timeouts);
        shoal_runtime_t *rt = shoal_test_runtime(2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        shoal_pid_t p, ping, pong, echo;
        int ok = 1;
        ok &= shoal_runtime_spawn(rt, &echo_beh, NULL, NULL, &echo) == SHOAL_OK;
        atomic_store(&echo_pid, echo); /* before the caller's init reads it */
        ok &= shoal_runtime_spawn(rt, &tick_beh, NULL, NULL, &p) == SHOAL_OK;
        ok &= shoal_runtime_spawn(rt, &ball_beh, NULL, NULL, &ping) == SHOAL_OK;
        ok &= shoal_runtime_spawn(rt, &ball_beh, NULL, NULL, &pong) == SHOAL_OK;
        atomic_store(&pong_pid, pong);
        ok &= shoal_runtime_spawn(rt, &caller_beh, NULL, NULL, &p) == SHOAL_OK;
        ok &= shoal_runtime_spawn(rt, &parent_beh, NULL, NULL, &p) == SHOAL_OK;
        ok &= shoal_runtime_send(rt, ping, M_BALL, NULL, 0) == SHOAL_OK; /* ping -> pong */
        CU_ASSERT(ok);
        /* A blocking call from this thread, answered at once. */
        shoal_answer_t a;
        int rc = shoal_runtime_call(rt, echo, 7, "abc", 3, 10000, &a);
        CU_ASSERT_EQUAL(rc, SHOAL_OK);
        if (rc == SHOAL_OK) {
            CU_ASSERT_EQUAL(a.size, 3);
            shoal_answer_release(&a);
        }
        /* Let every init run (a spawn racing destroy fails with ESTOPPED,
         * which is right but not what this test counts), and traffic flow
         * a little, varying the point of destruction. */
        long want = 20 + (it % 7) * 30;
        /* Every tenth time, also until timers fired and a call timed out. */
        long want_ticks = it % 10 == 0 ? ticks0 + 3 : 0;
        long want_timeouts = it % 10 == 0 ? timeouts0 + 1 : 0;
        double end = shoal_test_now() + 10.0;
        while ((atomic_load(&balls) < want || atomic_load(&inits) < ACTORS ||
                atomic_load(&ticks) < want_ticks || atomic_load(&timeouts) < want_timeouts) &&
               shoal_test_now() < end) {
            struct timespec ts = {0, 50 * 1000};
            nanosleep(&ts, NULL);
        }
        CU_ASSERT(atomic_load(&balls) >= want);
        CU_ASSERT(atomic_load(&ticks) >= want_ticks);
        CU_ASSERT(atomic_load(&timeouts) >= want_timeouts);
        shoal_runtime_destroy(rt);
        CU_ASSERT_EQUAL(atomic_load(&inits), ACTORS);
        CU_ASSERT_EQUAL(atomic_load(&terms), ACTORS);
        CU_ASSERT_EQUAL(atomic_load(&bad_reason), 0);
        CU_ASSERT_EQUAL(atomic_load(&errors), 0);
        CU_ASSERT_EQUAL(atomic_load(&frees), atomic_load(&allocs));
        if (atomic_load(&terms) != ACTORS || atomic_load(&frees) != atomic_load(&allocs)) {
            fprintf(stderr, "iteration %d: terms %d, allocs %ld, frees %ld\n", it,
                    atomic_load(&terms), atomic_load(&allocs), atomic_load(&frees));
            failed = 1;
        }
        if (it % 100 == 0)
            CU_ASSERT_EQUAL(shoal_test_threads(base), base);
    }
    fprintf(stderr, "  [%d runtimes in %.2f s; %ld ticks, %ld replies, %ld timeouts] ", iterations,
            shoal_test_now() - t0, atomic_load(&ticks), atomic_load(&replies),
            atomic_load(&timeouts));
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"create and destroy 1,000 runtimes under load", create_destroy_under_load},
        {NULL, NULL},
    };
    return shoal_test_run("stress_lifecycle", cases);
}
