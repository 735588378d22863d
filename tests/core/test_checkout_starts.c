/* test_checkout_starts.c - a checkout pool's members that fail to start or
 * fail (core/pool/checkout*.c): inits that hang count against max, a start
 * past member_start_timeout fails (a spare's too), transactions hear when
 * starts keep failing, failed starts wait longer after each round up to 64
 * times the backoff, and members that keep failing degrade the pool.
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
        {NULL, NULL},
    };
    return shoal_test_run("checkout_starts", cases);
}
