/* test_actor_crashes.c - an actor that crashes (core/actor/actor.c,
 * turn.c): the messages queued behind the crash are dropped (a caller
 * waiting on one is told), and a panic inside terminate does not loop.
 *
 * Handlers never call CUnit: they record into atomics (some in actor_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <pthread.h>

#include "actor_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, AK_WAIT_S)

/* ---- crashes ----------------------------------------------------------------------- */

/* Messages queued behind a crash are dropped and counted; a queued call
 * is answered with SHOAL_ENOPROC. */
static shoal_runtime_t *crash_rt;
static _Atomic shoal_pid_t crash_pid;
static atomic_int crash_call_rc, crash_call_status;

static void *crash_call_thread(void *arg)
{
    (void)arg;
    shoal_answer_t a;
    int rc = shoal_runtime_call(crash_rt, atomic_load(&crash_pid), 1, NULL, 0, 10000, &a);
    atomic_store(&crash_call_status, a.status);
    shoal_answer_release(&a);
    atomic_store(&crash_call_rc, rc);
    return NULL;
}

static void messages_queued_behind_a_crash_are_dropped(void)
{
    enum { K = 10 };
    shoal_runtime_t *rt = crash_rt = ak_runtime();
    static ak_kids_t k;
    shoal_pid_t parent = ak_spawn_family(rt, &k, 1);
    shoal_pid_t kid = atomic_load(&ak_kid_pid[0]);
    atomic_store(&crash_pid, kid);
    atomic_store(&crash_call_rc, 12345);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kid, T_BLOCK, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&ak_kid_entered, AK_WAIT_S), 1);
    uint64_t sent0 = shoal_test_stats(rt).msgs_sent;
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, kid, T_PING, NULL, 0), SHOAL_OK);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, crash_call_thread, NULL), 0);
    /* The call is queued once it is counted as sent. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == sent0 + K + 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, sent0 + K + 1);
    atomic_store(&ak_kid_release, 1); /* the handler returns -77: a crash */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&crash_call_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&crash_call_status), SHOAL_ENOPROC);
    WAIT_UNTIL(atomic_load(&ak_exits) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ak_exit_status[0]), -77);
    CU_ASSERT_EQUAL(atomic_load(&ak_exit_from[0]), kid);
    CU_ASSERT_EQUAL(atomic_load(&ak_kid_handled[0]), 1); /* only the one that crashed */
    CU_ASSERT_EQUAL(atomic_load(&ak_kid_terms[0]), 1);
    CU_ASSERT_EQUAL(atomic_load(&ak_kid_term_reason[0]), -77);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, K + 1);
    CU_ASSERT(ak_gone(rt, kid));
    (void)parent;
    shoal_runtime_destroy(rt);
}

/* A panic inside terminate: terminate is not run again, the actor ends. */
static atomic_int tp_terms, tp_msgs;
static int tp_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    atomic_fetch_add(&tp_msgs, 1);
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "handler panics first");
    return 0;
}
static void tp_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)state;
    (void)reason;
    atomic_fetch_add(&tp_terms, 1);
    shoal_panic(ctx, "terminate panics");
}
static const shoal_behaviour_t tp_beh = {
    .name = "term-panic", .handle_message = tp_handle, .terminate = tp_term};

static void panic_in_terminate_does_not_loop(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    ak_parent_reset();
    atomic_store(&tp_terms, 0);
    atomic_store(&tp_msgs, 0);
    static ak_kids_t k = {.beh = {&tp_beh, &tp_beh, &tp_beh}, .args = {NULL, NULL, NULL}, .n = 3};
    shoal_pid_t parent;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ak_parent_beh, &k, NULL, &parent), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ak_kids_spawned) == 3);
    shoal_pid_t a = atomic_load(&ak_kid_pid[0]), b = atomic_load(&ak_kid_pid[1]),
                c = atomic_load(&ak_kid_pid[2]);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, a), SHOAL_OK);             /* stop, then panic */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, T_PANIC, NULL, 0), SHOAL_OK); /* panic twice */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, T_EXIT0, NULL, 0), SHOAL_OK); /* plain msg */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, c), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ak_exits) == 3);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ak_exits), 3);
    CU_ASSERT_EQUAL(atomic_load(&tp_terms), 3);
    for (int i = 0; i < 3; i++) {
        /* The panic in terminate is the last word: the reason is EPANIC. */
        CU_ASSERT_EQUAL(atomic_load(&ak_exit_status[i]), SHOAL_EPANIC);
    }
    CU_ASSERT(ak_gone(rt, a) && ak_gone(rt, b) && ak_gone(rt, c));
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 3);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&tp_terms), 3);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"messages queued behind a crash are dropped", messages_queued_behind_a_crash_are_dropped},
        {"panic in terminate does not loop", panic_in_terminate_does_not_loop},
        {NULL, NULL},
    };
    return shoal_test_run("actor_crashes", cases);
}
