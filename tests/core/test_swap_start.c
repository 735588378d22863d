/* test_swap_start.c - a pool's start (core/pool/pool.c start) and reading a
 * pool from its record (stats.c peek):
 *
 *   - a pool has started only when every first worker's init has run: a
 *     failing, panicking or slow init is what shoal_runtime_spawn_pool
 *     returns (or waits for), with the init's own text for the host, and a
 *     failed start leaves nothing running -- nested pools too;
 *   - peek reads counters, target and state from the record without the
 *     pool's actor; quiet is true once actor and workers have all ended.
 *
 * The worker, whose init may fail, panic or wait on a gate, and the
 * runtime: support/swap_kit.h.
 */
#include <stdio.h>
#include <string.h>

#include "swap_kit.h"

/* ---- starting ------------------------------------------------------------------- */

static void start_waits_for_every_init(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = sw_live(rt);
    sw_wargs_t a = {.tag = 0, .init = SW_I_OK};
    shoal_pool_spec_t s;
    sw_spec_of(&s, 5, &a);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&sw_inits), 5); /* all ran before it returned */
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, SW_TMO), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0);
    shoal_runtime_destroy(rt);
}

/* One worker of five refuses: the start fails with its error and text,
 * and nothing is left running. */
static void start_fails_with_the_init_error(void)
{
    static const int modes[] = {SW_I_FAIL, SW_I_PANIC};
    static const int rcs[] = {SHOAL_EINVAL, SHOAL_EPANIC};
    static const char *const texts[] = {"tag 1 refuses to start", "panic: tag 1 panics in init"};
    for (int m = 0; m < 2; m++) {
        shoal_runtime_t *rt = sw_begin();
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        uint64_t live0 = sw_live(rt);
        sw_wargs_t a = {.tag = 1, .init = modes[m]};
        shoal_pool_spec_t s;
        sw_spec_of(&s, 5, &a);
        shoal_pid_t pool = 77;
        char why[300];
        CU_ASSERT_EQUAL(shoal__pool_start(rt, &s, NULL, SW_TMO, &pool, why, sizeof why), rcs[m]);
        CU_ASSERT_EQUAL(pool, SHOAL_PID_NONE);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, texts[m]));
        if (strstr(why, texts[m]) == NULL)
            fprintf(stderr, "\n    why: %s\n", why);
        SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
        CU_ASSERT_EQUAL(sw_live(rt), live0); /* the pool and its other workers are gone */
        /* The public call says the same. */
        CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pool), rcs[m]);
        SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
        CU_ASSERT_EQUAL(sw_live(rt), live0);
        shoal_runtime_destroy(rt);
    }
}

/* Nested two deep: a leaf two levels down that fails fails the root. */
static void nested_start_fails_from_a_leaf(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = sw_live(rt);
    sw_wargs_t a = {.tag = 2, .init = SW_I_FAIL};
    shoal_pool_spec_t leaf, mid, top;
    sw_spec_of(&leaf, 3, &a);
    sw_spec_of(&mid, 2, NULL);
    mid.worker = NULL;
    mid.worker_pool = &leaf;
    sw_spec_of(&top, 2, NULL);
    top.worker = NULL;
    top.worker_pool = &mid;
    shoal_pid_t pool;
    char why[300];
    CU_ASSERT_EQUAL(shoal__pool_start(rt, &top, NULL, SW_TMO, &pool, why, sizeof why),
                    SHOAL_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "tag 2 refuses to start"));
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0);
    /* And when all start, the whole tree has run init before it returns. */
    a.init = SW_I_OK;
    atomic_store(&sw_inits, 0);
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start(rt, &top, NULL, SW_TMO, &pool, why, sizeof why),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&sw_inits), 2 * 2 * 3);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, SW_TMO), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* An init that does not finish in time: SHOAL_ETIMEDOUT, the pool stopped
 * (once the init returns, it ends). */
static void start_times_out(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = sw_live(rt);
    sw_wargs_t a = {.tag = 0, .init = SW_I_GATE};
    shoal_pool_spec_t s;
    sw_spec_of(&s, 1, &a);
    shoal_pid_t pool;
    char why[300];
    CU_ASSERT_EQUAL(shoal__pool_start(rt, &s, NULL, 100, &pool, why, sizeof why), SHOAL_ETIMEDOUT);
    CU_ASSERT_STRING_EQUAL(why, "its workers did not start within 100 ms");
    atomic_store(&sw_gate, 1);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0);
    shoal_runtime_destroy(rt);
}

/* ---- reading the record ------------------------------------------------------- */

static void peek_reads_the_record(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t a = {.tag = 0, .init = SW_I_OK};
    shoal_pool_spec_t s;
    sw_spec_of(&s, 3, &a);
    shoal_pid_t pool, plain;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sw_worker, &a, NULL, &plain), SHOAL_OK);
    CU_ASSERT_PTR_NULL(shoal__pool_find(rt, plain));
    CU_ASSERT_PTR_NULL(shoal__pool_find(rt, SHOAL_PID_NONE));
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    sw_send_jobs(rt, pool, 50);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_handled[0]) == 50, SW_WAIT_S);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 5, SW_TMO), 5);
    shoal_pool_stats_t st;
    /* The handled count is published at the end of each worker's turn. */
    double end = shoal_test_now() + SW_WAIT_S;
    do
        shoal__pool_peek(p, &st);
    while (st.messages_handled != 50 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.messages_forwarded, 50);
    CU_ASSERT_EQUAL(st.messages_handled, 50);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.pool_size, 5);
    CU_ASSERT_EQUAL(st.target_size, 5);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.mailbox, 1000);
    CU_ASSERT(!shoal__pool_is_ended(p));
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, SW_TMO), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal__pool_is_quiet(p), SW_WAIT_S);
    CU_ASSERT(shoal__pool_is_quiet(p));
    shoal__pool_peek(p, &st); /* final counts, after the pool has gone */
    CU_ASSERT_EQUAL(st.messages_forwarded, 50);
    CU_ASSERT_EQUAL(st.messages_handled, 50);
    CU_ASSERT_EQUAL(st.pool_size, 0);
    CU_ASSERT_PTR_NULL(shoal__pool_find(rt, pool)); /* gone: no new reference */
    shoal__pool_unref(rt, p);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"start waits for every init", start_waits_for_every_init},
        {"start fails with the init error", start_fails_with_the_init_error},
        {"nested start fails from a leaf", nested_start_fails_from_a_leaf},
        {"start times out", start_times_out},
        {"peek reads the record", peek_reads_the_record},
        {NULL, NULL},
    };
    return shoal_test_run("swap: a pool's start and its record", cases);
}
