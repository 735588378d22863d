/* test_checkout_lifetimes.c - how long a checkout pool's members live
 * (core/pool/checkout*.c): a lease that expires in a thread's hands (and one
 * timed from a hand-over), culling free members down to init after
 * max_age, and max_lifetime acted on only when a member comes back or is
 * found free -- never while in use; culling and lifetimes changed live.
 * Members that fail to start, or fail: test_checkout_starts.c.
 *
 * Handlers never call CUnit: they record into atomics (checkout_basic_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "checkout_basic_kit.h"
#include "pool/pool.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* ---- leases, culling, lifetimes ------------------------------------------------ */

/* A pool of init 1, max 4 grown to 4 (four takes, each starting one) and
 * every member given back, m[0] first: m[3] is the one given back last. */
static void grow_to_4(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pid_t m[4])
{
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
}

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
    grow_to_4(rt, pool, m);
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

/* strategy: lifo (poolboy's default). A pool grown to 4 and then used
 * lightly -- one take and return every 20 ms, one member in use at most
 * -- keeps one member busy and lets the rest age: each take gets the
 * member given back last, so the 3 others are culled past max_age and the
 * pool is back at init while the use goes on. (With fifo, the default,
 * the takes go round all 4, none is unused for max_age, and the pool
 * stays at 4 for as long as such a load lasts: shoal/checkout.h.) */
static void test_cull_under_light_use_lifo(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 4);
    s.strategy = SHOAL_POOL_STRATEGY_LIFO;
    s.checkout.cull_interval_ms = 50;
    s.checkout.max_age_ms = 300;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[4];
    grow_to_4(rt, pool, m);
    unsigned takes = 0, others = 0;
    double end = shoal_test_now() + 5.0; /* max_age is 0.3 s */
    while (cb_stats(rt, pool).culled < 3 && shoal_test_now() < end) {
        shoal_pid_t got;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &got), SHOAL_OK);
        takes++;
        others += got != m[3];
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, got, SHOAL_RETURN_OK), SHOAL_OK);
        cb_sleep_ms(20);
    }
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 3);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(others, 0); /* every take: the member given back last */
    CU_ASSERT(takes >= 5);
    CU_ASSERT_TRUE(cb_alive(rt, m[3]));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_TRUE(cb_ended(rt, m[i]));
    shoal_runtime_destroy(rt);
}

/* A thread's lease expires: the log gives the lease its take was given,
 * not the pool's lease since (200 ms, then set live to an hour). */
static void test_lease_logged_as_given(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.lease_ms = 200;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    shoal_pool_checkout_update_t u = {1, 1, s.checkout};
    u.checkout.lease_ms = 3600000;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).lease_expired == 1);
    char line[160];
    snprintf(line, sizeof line, "a thread held member %u.%u past its lease of 200 ms: destroyed",
             (unsigned)shoal__pid_slot(a), (unsigned)shoal__pid_gen(a));
    WAIT_UNTIL(shoal_test_log_count(line) == 1);
    shoal_test_assert_logged(line);
    shoal_runtime_destroy(rt);
}

/* Members that end by no failure, and not by the pool -- stopped by
 * someone else while free, or while a thread holds them -- are replaced
 * and counted as before, and now said, once each (a failure was said by
 * the member's own end already). */
static void test_member_ends_logged(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &b), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, b), SHOAL_OK); /* free */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, a), SHOAL_OK); /* a thread holds it */
    WAIT_UNTIL(cb_stats(rt, pool).killed_free == 1 && cb_stats(rt, pool).killed_in_use == 1 &&
               cb_stats(rt, pool).free == 2);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_free, 1);
    CU_ASSERT_EQUAL(st.killed_in_use, 1);
    CU_ASSERT_EQUAL(st.free, 2);
    char line[200];
    snprintf(line, sizeof line,
             "member %u.%u ended while free (stopped, not by the pool): counted killed_free; a "
             "new one replaces it",
             (unsigned)shoal__pid_slot(b), (unsigned)shoal__pid_gen(b));
    shoal_test_assert_logged(line);
    CU_ASSERT_EQUAL(shoal_test_log_count(line), 1);
    snprintf(line, sizeof line,
             "member %u.%u ended while in use (stopped, not by the pool): counted killed_in_use; "
             "a new one replaces it",
             (unsigned)shoal__pid_slot(a), (unsigned)shoal__pid_gen(a));
    shoal_test_assert_logged(line);
    CU_ASSERT_EQUAL(shoal_test_log_count(line), 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_EINVAL);
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

/* Culling and lifetimes changed live (shoal_pool_set_checkout, as a
 * reload does): culling off culls nothing however long the members are
 * unused; turned on, it culls to init within a few intervals; a
 * max_lifetime set later applies to the members already there, on return. */
static void cull_and_lifetime_live(uint32_t strategy)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 4);
    s.strategy = strategy;
    s.checkout.cull_interval_ms = 0;
    s.checkout.max_age_ms = 100;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[4];
    grow_to_4(rt, pool, m);
    cb_sleep_ms(400); /* four times max_age, culling off */
    CU_ASSERT_EQUAL(cb_stats(rt, pool).culled, 0);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).free, 4);
    shoal_pool_checkout_update_t u = {1, 4, s.checkout};
    u.checkout.cull_interval_ms = 50;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, 5000), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).culled == 3);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 3);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_TRUE(cb_alive(rt, m[3])); /* the last returned stays */
    /* max_lifetime, set now, for the member that is already there. */
    u.checkout.cull_interval_ms = 0;
    u.checkout.max_lifetime_ms = 100;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, 5000), SHOAL_OK);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &a), SHOAL_OK);
    cb_sleep_ms(300);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).recycled, 0); /* in use: untouched */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).recycled, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

static void test_cull_and_lifetime_live(void) { cull_and_lifetime_live(SHOAL_POOL_STRATEGY_FIFO); }

/* As above with strategy lifo: the members culled are the 3 given back
 * first, whichever end of its free list they are at. */
static void test_cull_and_lifetime_live_lifo(void)
{
    cull_and_lifetime_live(SHOAL_POOL_STRATEGY_LIFO);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a thread's lease expires", test_lease_expiry},
        {"the lease logged is the take's", test_lease_logged_as_given},
        {"members ended by others are said", test_member_ends_logged},
        {"culled to init after max_age", test_cull_to_init},
        {"lifo: light use keeps one member busy, the rest are culled",
         test_cull_under_light_use_lifo},
        {"culling and lifetimes changed live", test_cull_and_lifetime_live},
        {"lifo: culling turned on live culls the members back first",
         test_cull_and_lifetime_live_lifo},
        {"a lease that starts with the member's start is armed", test_lease_armed_on_start},
        {"max_lifetime only on return", test_lifetime_on_return},
        {"a lease timed from a hand-over", test_lease_armed_on_handover},
        {"lifetime checked when found free", test_lifetime_found_free},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_lifetimes", cases);
}
