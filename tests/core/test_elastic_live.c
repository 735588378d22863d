/* test_elastic_live.c - a running elastic pool (core/pool/elastic.c,
 * shoal/pool.h) read and changed live: an autoscaled pool's ledger read
 * mid-turn counts no message twice; SET_BOUNDS and SET_ELASTIC on a running
 * pool, forward and pull; neither for a pool of pools.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elastic_kit.h"

/* ---- the ledger of an autoscaled pool -------------------------------------------- */

/* An autoscaled pool counts each message as its worker finishes it (not at
 * the end of the turn). Read while its worker is in the middle of a turn
 * -- one job done after the first, the next one blocked -- the pool's
 * stats never count a message both handled and queued:
 *   handled + failed + dropped + queue_depth <= forwarded
 * (the job being handled is still in flight). */
static void autoscaled_ledger_mid_turn(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 1, 1, 1, 64);
    s.autoscale.when = SHOAL_AUTOSCALE_BUSY;
    s.autoscale.up_for_ms = 600000; /* readings, but no decision */
    s.autoscale.down_idle_ms = 600000;
    shoal_pid_t p = ek_spawn(rt, &s);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
    EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK2), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
    atomic_store(&ek_gate, 1); /* the first goes on, the next runs, the third blocks */
    EK_WAIT_UNTIL(atomic_load(&ek_entered2) == 1);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 6);
    CU_ASSERT_EQUAL(st.messages_handled, 2);
    CU_ASSERT(st.messages_handled + st.messages_failed + st.messages_dropped + st.queue_depth <=
              st.messages_forwarded);
    CU_ASSERT_EQUAL(st.queue_depth, 4); /* the blocked one and three queued */
    atomic_store(&ek_gate2, 1);
    EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 6);
    st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* ---- bounds and settings on a running pool --------------------------------------- */

static void set_bounds_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(kind, 4, 1, 8, 16);
    shoal_pid_t p = ek_spawn(rt, &s);
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 2, 5, EK_TMO), 4);
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 5, 6, EK_TMO), 5); /* clamped up */
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 1, 2, EK_TMO), 2); /* and down */
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 3, 2, EK_TMO), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 1, 9, EK_TMO), SHOAL_EINVAL); /* past its start */
    CU_ASSERT_EQUAL(shoal_pool_set_bounds(rt, p, 0, 0, EK_TMO), SHOAL_EINVAL);
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 2 && EK_STATS(rt, p).retiring == 0);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.min_size, 1);
    CU_ASSERT_EQUAL(st.max_size, 2);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 7, EK_TMO), 2); /* within the bounds */
    shoal_runtime_destroy(rt);
}

static void forward_set_bounds(void) { set_bounds_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_set_bounds(void) { set_bounds_case(SHOAL_POOL_KIND_PULL); }

static void set_elastic_live(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 3, 1, 8, 16);
    shoal_pid_t p = ek_spawn(rt, &s);
    shoal_pool_elastic_t el = {.idle_timeout_ms = 20, .max_waiting = 7, .autoscale = s.autoscale};
    CU_ASSERT_EQUAL(shoal_pool_set_elastic(rt, p, &el, EK_TMO), SHOAL_OK);
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 1);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.expired, 2);
    CU_ASSERT_EQUAL(st.max_waiting, 7);
    CU_ASSERT_EQUAL(st.idle_timeout_ms, 20);
    /* Bad thresholds: a down one not below its up one. */
    el.autoscale.when = SHOAL_AUTOSCALE_BUSY;
    el.autoscale.down_busy = el.autoscale.up_busy;
    CU_ASSERT_EQUAL(shoal_pool_set_elastic(rt, p, &el, EK_TMO), SHOAL_EINVAL);
    el.autoscale.down_busy = 100;
    el.autoscale.up_step = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_elastic(rt, p, &el, EK_TMO), SHOAL_EINVAL);
    /* Off again: nothing expires any more. */
    shoal_pool_elastic_t off = {0};
    CU_ASSERT_EQUAL(shoal_pool_set_elastic(rt, p, &off, EK_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 3, EK_TMO), 3);
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.expired, 2);
    CU_ASSERT_EQUAL(st.max_waiting, 0);
    shoal_runtime_destroy(rt);
}

/* Where elastic settings do not apply: a pool of pools refuses them. */
static void not_for_pools_of_pools(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t inner = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 2, 1, 4, 8);
    shoal_pool_spec_t outer;
    shoal_pool_spec_init(&outer);
    outer.worker_pool = &inner;
    outer.size = 2;
    outer.idle_timeout_ms = 100;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_EINVAL);
    outer.idle_timeout_ms = 0;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_OK);
    shoal_pool_elastic_t el = {.max_waiting = 4};
    CU_ASSERT_EQUAL(shoal_pool_set_elastic(rt, p, &el, EK_TMO), SHOAL_ENOTSUP);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"autoscaled: the ledger mid-turn counts no message twice", autoscaled_ledger_mid_turn},
        {"forward: bounds on a running pool", forward_set_bounds},
        {"pull: bounds on a running pool", pull_set_bounds},
        {"elastic settings on a running pool", set_elastic_live},
        {"not for a pool of pools", not_for_pools_of_pools},
        {NULL, NULL},
    };
    return shoal_test_run("elastic_live", cases);
}
