/* test_checkout_lifetimes.c - how long a checkout pool's members live
 * (core/pool/checkout*.c): a lease that expires in a thread's hands (and one
 * timed from a hand-over), culling free members down to init after
 * max_age, and max_lifetime acted on only when a member comes back or is
 * found free -- never while in use; members that fail to start, their
 * starts waiting longer after each round up to 64 times the backoff.
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

/* ---- starts that fail, members that fail (an adversarial test found each) -------- */

/* A member whose init waits for hang_gate (a connect that hangs): how many
 * inits have begun, run now, and ran at once at most. */
static atomic_int hang_gate, hang_entered, hang_now, hang_most;

static int hang_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    atomic_fetch_add(&hang_entered, 1);
    int n = atomic_fetch_add(&hang_now, 1) + 1;
    int most = atomic_load(&hang_most);
    while (n > most && !atomic_compare_exchange_weak(&hang_most, &most, n))
        ;
    while (!atomic_load(&hang_gate))
        shoal_test_nap();
    atomic_fetch_sub(&hang_now, 1);
    return SHOAL_OK;
}

static int hang_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}

static const shoal_behaviour_t hang_member = {
    .name = "conn",
    .init = hang_init,
    .handle_message = hang_message,
};

static void hang_reset(void)
{
    atomic_store(&hang_gate, 0);
    atomic_store(&hang_entered, 0);
    atomic_store(&hang_now, 0);
    atomic_store(&hang_most, 0);
}

/* A member stopped past member_start_timeout still runs its init on a
 * thread: it counts against max until it ends, so inits that hang never
 * hold more than max threads (they held every dispatcher and compensating
 * thread, a new one started each backoff). When they return, the pool
 * recovers. */
static void test_hung_inits_within_max(void)
{
    cb_reset();
    hang_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_ERROR);
    shoal_pool_spec_t s = cb_spec_of(0, 2);
    s.worker = &hang_member;
    s.checkout.member_start_timeout_ms = 50;
    s.checkout.add_member_retry = 1000; /* takers keep waiting: starts go on */
    s.checkout.cull_interval_ms = 0;
    s.restart.backoff_ms = 10;
    shoal_pid_t pool = cb_start(rt, &s);
    cb_taker_t t[2] = {{rt, pool, SHOAL_PID_NONE, 20000, 99, 0, 99, 0, 0},
                       {rt, pool, SHOAL_PID_NONE, 20000, 99, 0, 99, 0, 0}};
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, cb_taker_main, &t[k]);
    WAIT_UNTIL(atomic_load(&hang_entered) >= 2);
    cb_sleep_ms(800); /* 16 start timeouts' worth */
    CU_ASSERT_EQUAL(atomic_load(&hang_most), 2);
    CU_ASSERT_EQUAL(atomic_load(&hang_entered), 2);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).start_failures, 2);
    atomic_store(&hang_gate, 1);
    for (int k = 0; k < 2; k++) {
        pthread_join(th[k], NULL);
        CU_ASSERT_EQUAL(t[k].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(t[k].back_rc, SHOAL_OK);
    }
    CU_ASSERT_TRUE(atomic_load(&hang_most) <= 2);
    shoal_runtime_destroy(rt);
}

/* A member of the pool's own start past member_start_timeout fails that
 * start, as a failed init does, at once and naming the setting (it was
 * started again and again, and the start failed only at the waiter's
 * 10 s); nothing more is started. */
static void test_start_fails_on_member_timeout(void)
{
    cb_reset();
    hang_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_ERROR);
    shoal_pool_spec_t s = cb_spec_of(2, 4);
    s.worker = &hang_member;
    s.checkout.member_start_timeout_ms = 200;
    shoal_pid_t pool;
    char why[256];
    double t0 = shoal_test_now();
    int rc = shoal__pool_start(rt, &s, NULL, 10000, &pool, why, sizeof why);
    double took = shoal_test_now() - t0;
    CU_ASSERT_EQUAL(rc, SHOAL_ETIMEDOUT);
    CU_ASSERT_TRUE(took < 2.0);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "did not start within 200 ms (member_start_timeout)"));
    cb_sleep_ms(500);
    CU_ASSERT_EQUAL(atomic_load(&hang_entered), 2);
    atomic_store(&hang_gate, 1);
    shoal_runtime_destroy(rt);
}

/* A transaction waiting while member starts keep failing is answered
 * SHOAL_ENOMEMBERS after add_member_retry of them, as a take is, and
 * settled: it waited for ever, in flight. */
static void test_txn_answered_when_starts_fail(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_ERROR);
    shoal_pool_spec_t s = cb_spec_of(0, 2);
    s.checkout.add_member_retry = 3;
    s.restart.backoff_ms = 60000; /* one round */
    shoal_pid_t pool = cb_start(rt, &s);
    atomic_store(&cb_init_fail, 1);
    shoal_answer_t ans;
    int rc = shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, 3000, &ans);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc == SHOAL_OK) {
        CU_ASSERT_EQUAL(ans.status, SHOAL_ENOMEMBERS);
        shoal_answer_release(&ans);
    }
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.start_failures, 3);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    CU_ASSERT_EQUAL(st.queue_depth, 0); /* nothing in flight */
    shoal_runtime_destroy(rt);
}

/* Rounds of failed starts wait longer each time: restart.backoff_ms,
 * doubling (they came every backoff, for ever: 50 a second here). Round j
 * begins no sooner than backoff x (2^(j-1) - 1) after the first. */
static void test_failed_starts_back_off_doubling(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_ERROR);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.add_member_retry = 1;
    s.restart.backoff_ms = 20;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &m), SHOAL_OK);
    atomic_store(&cb_init_fail, 1);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_FAIL), SHOAL_OK);
    cb_sleep_ms(1000);
    uint64_t failures = cb_stats(rt, pool).start_failures;
    double ms = (shoal_test_now() - t0) * 1000.0;
    uint64_t rounds = 0; /* the most that fit in ms */
    while (20.0 * ((double)(UINT64_C(1) << rounds) - 1.0) <= ms)
        rounds++;
    CU_ASSERT_TRUE(failures >= 3);
    CU_ASSERT_TRUE(failures <= rounds);
    if (failures > rounds)
        fprintf(stderr, "\n%" PRIu64 " start failures in %.0f ms: at most %" PRIu64 "\n", failures,
                ms, rounds);
    shoal_runtime_destroy(rt);
}

/* The wait between rounds of failed starts doubles up to 64 times
 * restart.backoff_ms and stays there (SHOAL__POOL_BACKOFF_GROWTH), and
 * with add_member_retry 1 each round is one line, naming its wait: 1, 2,
 * 4, ... 64, 64 ms with a backoff of 1 ms. */
static void test_failed_starts_back_off_capped(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.add_member_retry = 1;
    s.restart.backoff_ms = 1;
    s.restart.max = 1000; /* no degraded pool: its wait is the restarts' */
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &m), SHOAL_OK);
    atomic_store(&cb_init_fail, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_FAIL), SHOAL_OK);
    double t0 = shoal_test_now();
    while (shoal_test_log_count("failed: starting again in 64 ms") < 3 &&
           shoal_test_now() - t0 < 20.0)
        cb_sleep_ms(10);
    atomic_store(&cb_init_fail, 0);
    /* The starts' failures stop with the next round (a start that works). */
    while (cb_stats(rt, pool).pool_size != 1 && shoal_test_now() - t0 < 30.0)
        cb_sleep_ms(10);
    static const char *const waits[] = {"1", "2", "4", "8", "16", "32"};
    char what[96];
    for (size_t i = 0; i < sizeof waits / sizeof *waits; i++) {
        snprintf(what, sizeof what, "1 start in a row failed: starting again in %s ms", waits[i]);
        CU_ASSERT_EQUAL(shoal_test_log_count(what), 1);
    }
    unsigned capped = shoal_test_log_count("1 start in a row failed: starting again in 64 ms");
    CU_ASSERT_TRUE(capped >= 3);
    CU_ASSERT_EQUAL(shoal_test_log_count("starting again in 128 ms"), 0);
    /* One line a round, and every failure ended a round. */
    uint64_t failures = cb_stats(rt, pool).start_failures;
    CU_ASSERT_EQUAL(failures, 6 + capped);
    CU_ASSERT_EQUAL(shoal_test_log_count("a member did not start"), failures);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).pool_size, 1);
    shoal_runtime_destroy(rt);
}

/* A pool of one member whose restart budget is `max` within a minute, its
 * starts past it waiting backoff_ms (doubling). */
static shoal_pid_t budget_pool(shoal_runtime_t *rt, uint32_t max, uint64_t backoff_ms)
{
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.restart.max = max;
    s.restart.within_ms = 60000;
    s.restart.backoff_ms = backoff_ms;
    return cb_start(rt, &s);
}

/* n members taken in turn (each take waits for the last one's
 * replacement) and returned FAIL: each ends. */
static void fail_members(shoal_runtime_t *rt, shoal_pid_t pool, int n)
{
    for (int k = 0; k < n; k++) {
        shoal_pid_t m;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &m), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_FAIL), SHOAL_OK);
        CU_ASSERT_TRUE(cb_ended(rt, m));
    }
}

/* Members that fail are restarts, under restart.max within
 * restart.within_ms as a forward pool's workers: past it the pool is
 * degraded, says so once, and its replacements wait restart.backoff_ms
 * (they were replaced at once, for ever). */
static void test_failing_members_degrade(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pid_t pool = budget_pool(rt, 3, 60000);
    fail_members(rt, pool, 4);
    WAIT_UNTIL(cb_stats(rt, pool).state == SHOAL_POOL_DEGRADED);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_DEGRADED);
    CU_ASSERT_EQUAL(st.worker_restarts, 3);
    CU_ASSERT_EQUAL(st.returned_fail, 4);
    shoal_pid_t m;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 300, &m), SHOAL_ETIMEDOUT); /* none started */
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 4); /* the first, and 3 restarts */
    CU_ASSERT_EQUAL(shoal_test_log_count("degraded: more than 3 restarts within 60000 ms"), 1);
    shoal_runtime_destroy(rt);
}

/* A degraded pool's replacements, started after restart.backoff_ms, are
 * restarts too, as a forward pool's are (they went uncounted: a pool
 * whose members kept failing showed 5 restarts beside 50 failures). */
static void test_degraded_replacements_count(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pid_t pool = budget_pool(rt, 2, 20);
    fail_members(rt, pool, 5);
    WAIT_UNTIL(cb_stats(rt, pool).free == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_DEGRADED);
    CU_ASSERT_EQUAL(st.returned_fail, 5);
    CU_ASSERT_EQUAL(st.worker_restarts, 5); /* 2 at once, 3 after a wait */
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 6);
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

/* A thread's take that cannot wait (timeout 0) while every member is in use
 * is refused at once and starts a spare member for the next taker: that
 * start is watched from then on -- past member_start_timeout it fails,
 * counted and said. (Before the fix the pool's tick was not armed for it:
 * nothing looked until another event did -- a return, a queued take, a
 * lease's end -- and an init that hung held the spare's place under max
 * until then.) */
static void test_spare_start_watched(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(1, 2);
    s.checkout.member_start_timeout_ms = 100;
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    cb_sleep_ms(300); /* the tick its own start armed has come and gone */
    shoal_pid_t held = SHOAL_PID_NONE, none = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, CB_TMO, &held), SHOAL_OK);
    atomic_store(&cb_init_delay_ms, 3000); /* the spare's connect: slow */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &none), SHOAL_ENOMEMBERS);
    SHOAL_TEST_WAIT_UNTIL(cb_stats(rt, pool).start_failures == 1, 2.5);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).start_failures, 1);
    shoal_test_assert_logged("a member did not start within 100 ms (member_start_timeout)");
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, held, SHOAL_RETURN_OK), SHOAL_OK);
    cb_sleep_ms(3100); /* the slow init returns before the runtime goes */
    CU_ASSERT_EQUAL(cb_stats(rt, pool).start_failures, 1);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"hung inits count against max", test_hung_inits_within_max},
        {"a start member's timeout fails the start", test_start_fails_on_member_timeout},
        {"a spare started for the next taker is watched", test_spare_start_watched},
        {"a transaction hears when starts keep failing", test_txn_answered_when_starts_fail},
        {"failed starts back off, doubling", test_failed_starts_back_off_doubling},
        {"failed starts back off up to 64 times, a line a round",
         test_failed_starts_back_off_capped},
        {"failing members degrade the pool", test_failing_members_degrade},
        {"a degraded pool's late replacements are restarts", test_degraded_replacements_count},
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
