/* test_checkout_lifetimes.c - how long a checkout pool's members live
 * (core/pool/checkout*.c): a lease that expires in a thread's hands (and one
 * timed from a hand-over), culling free members down to init after
 * max_age, and max_lifetime acted on only when a member comes back or is
 * found free -- never while in use.
 *
 * Handlers never call CUnit: they record into atomics (checkout_basic_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <time.h>

#include "checkout_basic_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* ---- leases, culling, lifetimes ------------------------------------------------ */

static void test_lease_expiry(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.lease_ms = 100;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).lease_expired == 1 && cb_stats(rt, pool).free == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.lease_expired, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_ETIMEDOUT);
    shoal_test_assert_logged("past its lease of 100 ms: destroyed");
    shoal_runtime_destroy(rt);
}

static void test_cull_to_init(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 4);
    s.checkout.cull_interval_ms = 50;
    s.checkout.max_age_ms = 150;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[4];
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).free, 4);
    WAIT_UNTIL(cb_stats(rt, pool).culled == 3);
    struct timespec ts = {0, 400000000}; /* well past another max_age */
    nanosleep(&ts, NULL);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 3);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    /* The longest unused went first: the last returned stays. */
    CU_ASSERT_TRUE(cb_alive(rt, m[3]));
    shoal_runtime_destroy(rt);
}

static void test_lifetime_on_return(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.max_lifetime_ms = 100;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    /* Past its lifetime, but in use: untouched. */
    CU_ASSERT_EQUAL(cb_stats(rt, pool).recycled, 0);
    CU_ASSERT_TRUE(cb_alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.recycled, 1);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 2);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- edges a review found (each failed before its fix) -------------------------- */

/* A lease that starts when a return hands the member to a waiting thread
 * is timed from then. */
static void test_lease_armed_on_handover(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.lease_ms = 100;
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cb_blocked) == 1); /* a transaction holds the only member */
    cb_taker_t t = {rt, pool, SHOAL_PID_NONE, 30000, 99, 0, 99, 1, 0};
    pthread_t th;
    pthread_create(&th, NULL, cb_taker_main, &t);
    WAIT_UNTIL(cb_stats(rt, pool).queued == 1);
    atomic_store(&cb_gate, 1); /* the transaction ends: the member goes to the thread */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL_FATAL(t.rc, SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).lease_expired == 1);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).lease_expired, 1);
    CU_ASSERT_TRUE(cb_ended(rt, t.got));
    shoal_runtime_destroy(rt);
}

/* A lease that starts with the member's start (the thread waited for it)
 * is timed from then: the start notice arms it. Every other deadline is
 * far off (the take's 30 s, the start's 60 s), so a lease left unarmed
 * would be found only then. */
static void test_lease_armed_on_start(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(0, 1);
    s.checkout.lease_ms = 100;
    s.checkout.cull_interval_ms = 0;
    s.checkout.member_start_timeout_ms = 60000;
    shoal_pid_t pool = cb_start(rt, &s);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).pool_size, 0);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 30000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 1);
    for (int i = 0; i < 300 && cb_stats(rt, pool).lease_expired == 0; i++)
        cb_sleep_ms(10); /* 3 s at most: the lease is 100 ms */
    CU_ASSERT_EQUAL(cb_stats(rt, pool).lease_expired, 1);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    shoal_runtime_destroy(rt);
}

/* A free member past its lifetime is replaced when it would be given out. */
static void test_lifetime_found_free(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.max_lifetime_ms = 100;
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    cb_sleep_ms(300);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).recycled, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a thread's lease expires", test_lease_expiry},
        {"culled to init after max_age", test_cull_to_init},
        {"a lease that starts with the member's start is armed", test_lease_armed_on_start},
        {"max_lifetime only on return", test_lifetime_on_return},
        {"a lease timed from a hand-over", test_lease_armed_on_handover},
        {"lifetime checked when found free", test_lifetime_found_free},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_lifetimes", cases);
}
