/* test_pool_resize.c - resizing a pool (core/pool/): add, remove and set
 * size clamped to min and max, as calls or priority casts; a removed worker
 * finishing its own queue while it retires; a pool allowed to be empty;
 * per-worker mailbox limits changed on live workers.
 *
 * Handlers never call CUnit: they record into atomics (pool_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs full
 * mailboxes, workers block on a gate that the test opens, so what is queued
 * where is decided by the test, never by timing.
 */
#include <string.h>

#include "pool_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PK_WAIT_S)

/* ---- resize ------------------------------------------------------------------ */

static void resize_returns_clamped_size(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    pk_spec_of(&s, "resize", 2, 16);
    s.min_size = 1;
    s.max_size = 5;
    shoal_pid_t pool = pk_spawn(rt, &s);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 2, PK_TMO), 4);
    CU_ASSERT_EQUAL(pk_st(rt, pool).pool_size, 4);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 10, PK_TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_remove_workers(rt, pool, 1, PK_TMO), 4);
    CU_ASSERT_EQUAL(pk_st(rt, pool).pool_size, 4);
    CU_ASSERT_EQUAL(shoal_pool_remove_workers(rt, pool, 100, PK_TMO), 1);
    CU_ASSERT_EQUAL(pk_st(rt, pool).pool_size, 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 0, PK_TMO), 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 99, PK_TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 3, PK_TMO), 3);
    /* A command as a priority cast; a bad payload is EINVAL. */
    uint32_t one = 1;
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL_POOL_ADD_WORKERS, &one, sizeof one),
                    SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(
        shoal_runtime_call_priority(rt, pool, SHOAL_POOL_ADD_WORKERS, "x", 1, PK_TMO, &a),
        SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL);
    shoal_answer_release(&a);
    shoal_pool_stats_t ps;
    PK_WAIT_STATS(ps, rt, pool, ps.retiring == 0);
    PK_SHAPE(ps, SHOAL_POOL_RUNNING, 4, 4, 0); /* resizing is not restarting */
    CU_ASSERT(ps.min_size == 1 && ps.max_size == 5 && ps.retiring == 0);
    /* The four take turns. */
    for (uint32_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    ps = pk_settle(rt, pool, 8, 0);
    PK_COUNTS(ps, 8, 8, 0, 0);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(pk_owned_by(atomic_load(&pk_owner[i]), 0, 8), 2);

    /* A pool allowed to be empty refuses until it has a worker. */
    pk_spec_of(&s, "empty", 0, 4);
    s.min_size = 0;
    pool = pk_spawn(rt, &s);
    CU_ASSERT_EQUAL(pk_job(rt, pool, 20, A_OK), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 1, PK_TMO), 1);
    CU_ASSERT_EQUAL(pk_job(rt, pool, 21, A_OK), SHOAL_OK);
    ps = pk_settle(rt, pool, 1, 0);
    PK_COUNTS(ps, 1, 1, 0, 1);
    shoal_runtime_destroy(rt);
}

/* Worker X blocks in job 0, Y in job 1, each has two more queued; one is
 * removed. It finishes its own queue, gets nothing new, and the pool's
 * capacity is what the other one has left. */
static void removed_worker_finishes_its_queue(void)
{
    enum { M = 4 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "retire", 2, M); /* min_size 1 */
    pk_block(rt, pool, 0, 0);
    pk_block(rt, pool, 1, 0);
    for (uint32_t i = 2; i < 6; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_remove_workers(rt, pool, 1, PK_TMO), 1);
    shoal_pool_stats_t ps = pk_st(rt, pool);
    PK_SHAPE(ps, SHOAL_POOL_RUNNING, 1, 1, 0);
    CU_ASSERT_EQUAL(ps.retiring, 1);
    CU_ASSERT_EQUAL(ps.queue_depth, 4); /* the retiring worker's count too */
    int rc;
    uint32_t seq = 6;
    CU_ASSERT_EQUAL(pk_fill_up(rt, pool, &seq, &rc), M - 2);
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    atomic_store(&pk_gate, 1);
    PK_WAIT_STATS(ps, rt, pool,
                  ps.messages_handled == 8 && ps.retiring == 0 && ps.queue_depth == 0);
    PK_SHAPE(ps, SHOAL_POOL_RUNNING, 1, 1, 0);
    CU_ASSERT_EQUAL(ps.retiring, 0);
    PK_COUNTS(ps, 8, 8, 0, 1);
    pk_seen_all(0, 8, 1);
    for (uint32_t i = 2; i < 6; i++) /* each finished its own queue */
        CU_ASSERT_EQUAL(atomic_load(&pk_owner[i]), atomic_load(&pk_owner[i % 2]));
    shoal_pid_t kept = atomic_load(&pk_owner[6]);
    CU_ASSERT_EQUAL(atomic_load(&pk_owner[7]), kept);
    CU_ASSERT(kept == atomic_load(&pk_owner[0]) || kept == atomic_load(&pk_owner[1]));
    CU_ASSERT_EQUAL(pk_owned_by(kept, 0, 8), 5);
    shoal_runtime_destroy(rt);
}

static void set_mailbox_applies_to_live_workers(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "limit", 2, 8);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, 3, PK_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, 0, PK_TMO), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(pk_st(rt, pool).mailbox, 3);
    pk_block(rt, pool, 0, 0);
    pk_block(rt, pool, 1, 0);
    int rc;
    uint32_t seq = 2;
    CU_ASSERT_EQUAL(pk_fill_up(rt, pool, &seq, &rc), 2 * 3);
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    atomic_store(&pk_gate, 1);
    shoal_pool_stats_t ps = pk_settle(rt, pool, 8, 0);
    PK_COUNTS(ps, 8, 8, 0, 1);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, SHOAL_MAILBOX_UNBOUNDED, PK_TMO), SHOAL_OK);
    char json[4096];
    CU_ASSERT_EQUAL(pk_inspect(rt, pool, json, sizeof json), SHOAL_OK);
    pk_has(json, "\"worker_mailbox_size\":\"unbounded\"");
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"resize returns the clamped size", resize_returns_clamped_size},
        {"removed worker finishes its queue", removed_worker_finishes_its_queue},
        {"set_mailbox applies to live workers", set_mailbox_applies_to_live_workers},
        {NULL, NULL},
    };
    return shoal_test_run("pool_resize", cases);
}
