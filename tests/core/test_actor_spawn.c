/* test_actor_spawn.c - spawning actors (core/actor/actor.c): the actor
 * counters (spawned, live, ended) exact through stops and failures, PIDs
 * distinct and never reused by a slot's next generation; the arguments
 * spawn refuses.
 *
 * Handlers never call CUnit: they record into atomics (some in actor_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include "actor_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, AK_WAIT_S)

/* ---- counters ------------------------------------------------------------------------ */

static int plain_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    return msg->type == T_RET ? 1 : 0;
}

static void actor_counters_are_exact(void)
{
    static const shoal_behaviour_t beh = {.name = "plain", .handle_message = plain_handle};
    enum { N = 300, STOPPED = 100, FAILED = 50 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    static shoal_pid_t pids[N];
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &pids[i]), SHOAL_OK);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, N);
    CU_ASSERT_EQUAL(s.actors_live, N);
    CU_ASSERT_EQUAL(s.actors_ended, 0);
    /* PIDs are distinct and never 0. */
    int dup = 0;
    for (int i = 0; i < N; i++) {
        dup += pids[i] == SHOAL_PID_NONE;
        for (int j = i + 1; j < N; j++)
            dup += pids[i] == pids[j];
    }
    CU_ASSERT_EQUAL(dup, 0);
    for (int i = 0; i < STOPPED; i++)
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pids[i]), SHOAL_OK);
    for (int i = STOPPED; i < STOPPED + FAILED; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pids[i], T_RET, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == STOPPED + FAILED &&
               shoal_test_stats(rt).actors_live == N - STOPPED - FAILED);
    s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, N);
    CU_ASSERT_EQUAL(s.actors_ended, STOPPED + FAILED);
    CU_ASSERT_EQUAL(s.actors_live, N - STOPPED - FAILED);
    /* Slots are reused with a new generation: old PIDs stay dead. */
    shoal_pid_t fresh[STOPPED];
    for (int i = 0; i < STOPPED; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &fresh[i]), SHOAL_OK);
    for (int i = 0; i < STOPPED + FAILED; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pids[i], 1, NULL, 0), SHOAL_ENOPROC);
    for (int i = 0; i < STOPPED; i++)
        for (int j = 0; j < N; j++)
            CU_ASSERT_NOT_EQUAL(fresh[i], pids[j]);
    s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, N + STOPPED);
    CU_ASSERT_EQUAL(s.actors_live, N - FAILED);
    shoal_runtime_destroy(rt);
}

static void spawn_rejects_bad_arguments(void)
{
    static const shoal_behaviour_t no_handler = {.name = "no-handler"};
    static const shoal_behaviour_t beh = {.name = "plain", .handle_message = plain_handle};
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, NULL, NULL, NULL, &pid), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &no_handler, NULL, NULL, &pid), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, NULL), SHOAL_EINVAL);
    shoal_spawn_opts_t o = {.mailbox_limit = SHOAL_MAILBOX_MAX + 1};
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, &o, &pid), SHOAL_EINVAL);
    o.mailbox_limit = SHOAL_MAILBOX_MAX;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, &o, &pid), SHOAL_OK);
    o.mailbox_limit = SHOAL_MAILBOX_UNBOUNDED;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, &o, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_spawned, 2);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 2);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"actor counters are exact", actor_counters_are_exact},
        {"spawn rejects bad arguments", spawn_rejects_bad_arguments},
        {NULL, NULL},
    };
    return shoal_test_run("actor_spawn", cases);
}
