/* test_pool_crashes.c - a pool's workers (core/pool/) that crash: a worker
 * that panics or fails hands its queued work back to the pool, which is
 * handled elsewhere; the restart budget spent degrades the pool once, and a
 * degraded pool refills and recovers after a window without deaths.
 *
 * Handlers never call CUnit: they record into atomics (pool_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs full
 * mailboxes, workers block on a gate that the test opens, so what is queued
 * where is decided by the test, never by timing.
 */
#include "pool_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PK_WAIT_S)

/* ---- crashes ----------------------------------------------------------------- */

/* Worker X blocks in job 0 and then crashes (act); worker Y blocks in job 1.
 * Jobs 2..11 alternate between them; X's five come back to the pool and are
 * handled by Y or X's replacement. (Under TSan this once caught
 * shoal__env_move copying a popped envelope's mailbox link while a producer
 * could still store it: the popped node is the queue's dummy.) */
static void crash_case(uint32_t act, const char *logged)
{
    enum { K = 5 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "crash", 2, 8);
    pk_block(rt, pool, 0, act);
    pk_block(rt, pool, 1, 0);
    for (uint32_t i = 2; i < 2 + 2 * K; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(pk_st(rt, pool).queue_depth, 2 * K);
    atomic_store(&pk_gate, 1);
    shoal_pool_stats_t ps;
    PK_WAIT_STATS(ps, rt, pool,
                  ps.messages_handled == 1 + 2 * K && ps.messages_failed == 1 &&
                      ps.worker_restarts == 1 && ps.pool_size == 2 && ps.messages_requeued == K &&
                      ps.queue_depth == 0);
    PK_COUNTS(ps, 2 + 2 * K, 1 + 2 * K, 1, 0);
    CU_ASSERT_EQUAL(ps.messages_requeued, K);
    PK_SHAPE(ps, SHOAL_POOL_RUNNING, 2, 2, 1);
    pk_seen_all(0, 2 + 2 * K, 1);
    CU_ASSERT_EQUAL(atomic_load(&pk_done), 1 + 2 * K);
    shoal_pid_t dead = atomic_load(&pk_owner[0]), y = atomic_load(&pk_owner[1]);
    CU_ASSERT(dead != y);
    /* X's queued jobs were handled elsewhere; Y's by Y. */
    CU_ASSERT_EQUAL(pk_owned_by(dead, 0, 2 + 2 * K), 1);
    for (uint32_t i = 3; i < 2 + 2 * K; i += 2)
        CU_ASSERT_EQUAL(atomic_load(&pk_owner[i]), y);
    shoal_test_assert_logged(logged);
    /* The pool serves on. */
    for (uint32_t i = 12; i < 16; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    ps = pk_settle(rt, pool, 5 + 2 * K, 1);
    PK_COUNTS(ps, 6 + 2 * K, 5 + 2 * K, 1, 0);
    shoal_runtime_destroy(rt);
}

static void worker_panic_hands_back_its_queue(void) { crash_case(A_PANIC, "test panic on job 0"); }

static void worker_error_hands_back_its_queue(void)
{
    crash_case(A_FAIL, "ended: unknown error (7)");
}

/* A pool of 3 workers allowed 2 restarts within `within` ms (retried after
 * `backoff` ms once degraded), sent three jobs that panic. */
static shoal_pid_t three_deaths(shoal_runtime_t *rt, const char *name, uint64_t within,
                                uint64_t backoff)
{
    shoal_pool_spec_t s;
    pk_spec_of(&s, name, 3, 8);
    pk_spec_restart(&s, 2, within, backoff);
    shoal_pid_t pool = pk_spawn(rt, &s);
    for (uint32_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_PANIC), SHOAL_OK);
    return pool;
}

/* restart.max = 2 in a long window: the third death degrades the pool. */
static void restart_budget_spent_degrades_once(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = three_deaths(rt, "budget", 60000, 60000);
    shoal_pool_stats_t ps;
    PK_WAIT_STATS(ps, rt, pool, ps.messages_failed == 3 && ps.state == SHOAL_POOL_DEGRADED);
    PK_SHAPE(ps, SHOAL_POOL_DEGRADED, 2, 3, 2);
    CU_ASSERT_EQUAL(ps.messages_failed, 3);
    char json[4096];
    CU_ASSERT_EQUAL(pk_inspect(rt, pool, json, sizeof json), SHOAL_OK);
    pk_has(json, "\"state\":\"degraded\"");
    pk_has(json, "\"pool_size\":2,");
    pk_has(json, "\"target_size\":3,");
    pk_has(json, "\"worker_restarts\":2,");
    CU_ASSERT_EQUAL(shoal_test_log_count("degraded:"), 1);
    shoal_test_assert_logged("serving with 2 of 3 workers");
    /* It serves with the workers it has. */
    for (uint32_t i = 3; i < 9; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    ps = pk_settle(rt, pool, 6, 3);
    PK_SHAPE(ps, SHOAL_POOL_DEGRADED, 2, 3, 2);
    PK_COUNTS(ps, 9, 6, 3, 0);
    shoal_runtime_destroy(rt); /* with the retry timer still pending */
}

/* Short window and backoff: the retry refills the pool, and after a window
 * without deaths it is running again. */
static void degraded_pool_refills_and_recovers(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = three_deaths(rt, "recover", 1000, 50);
    WAIT_UNTIL(shoal_test_log_has("degraded:"));
    shoal_test_assert_logged("serving with 2 of 3 workers");
    shoal_pool_stats_t ps;
    /* Two restarts, then the retry's one. */
    PK_WAIT_STATS(ps, rt, pool, ps.state == SHOAL_POOL_RUNNING && ps.worker_restarts == 3);
    PK_SHAPE(ps, SHOAL_POOL_RUNNING, 3, 3, 3);
    CU_ASSERT_EQUAL(ps.messages_failed, 3);
    CU_ASSERT_EQUAL(shoal_test_log_count("degraded:"), 1);
    shoal_test_assert_logged("recovered: 3 workers");
    for (uint32_t i = 3; i < 9; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    ps = pk_settle(rt, pool, 6, 3);
    PK_COUNTS(ps, 9, 6, 3, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"worker panic hands back its queue", worker_panic_hands_back_its_queue},
        {"worker error hands back its queue", worker_error_hands_back_its_queue},
        {"restart budget spent degrades once", restart_budget_spent_degrades_once},
        {"degraded pool refills and recovers", degraded_pool_refills_and_recovers},
        {NULL, NULL},
    };
    return shoal_test_run("pool_crashes", cases);
}
