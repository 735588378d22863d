/* test_checkout_timing.c - when a checkout pool's clocks act
 * (core/pool/checkout_members.c, checkout_take.c, checkout_stats.c), never
 * before their time and within a bound after it:
 *   - max_lifetime +- max_lifetime_jitter: 16 members started together are
 *     replaced over the whole window, none before its lower edge;
 *   - culling: a free member is culled only once unused past max_age, and
 *     only at a cull (every cull_interval from the pool's start);
 *   - a thread's lease fires at its time, not before;
 *   - culling and lifetimes turned on live never touch a member in use;
 *   - a drain that waits for a member in a thread's hands ends when its
 *     lease does; a drain call with a shorter timeout answers
 *     SHOAL_ETIMEDOUT at it, and the member in use is left alone;
 *   - the take wait's p50 and p99: takes that waited a known time read
 *     back within the histogram's resolution;
 *   - inspect says what the stats say, every counter non-zero.
 *
 * Times are measured on the test thread around the events it causes or
 * polls for: a lower bound is the time before the cause (so the test can
 * only be late, never early), an upper bound has room for a slow machine.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "checkout_basic_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* Slack for an upper bound: the machine may be slow (sanitizers, load). */
#define LATE_MS 400.0

static double ms_since(double t0) { return (shoal_test_now() - t0) * 1000.0; }

/* ---- lifetimes and their jitter ------------------------------------------------ */

/* 16 members started at once, max_lifetime 2000 +- 600 ms, culls every 50
 * ms (which replace free members past their lifetime). Each is replaced
 * once within [1400, 2600] ms of its start (+ a cull interval); a
 * replacement lives at least 1400 ms more, so the first 16 replacements
 * are the 16 first members. They spread over the window: with the jitter
 * ignored they would all go within a cull or two of 2000 ms. */
static void test_lifetime_jitter(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(16, 16);
    s.checkout.max_lifetime_ms = 2000;
    s.checkout.max_lifetime_jitter_ms = 600;
    s.checkout.cull_interval_ms = 50;
    s.checkout.max_age_ms = 3600000; /* and init = max: no culling by age */
    double t0 = shoal_test_now();
    shoal_pid_t pool = cb_start(rt, &s);
    double ready = ms_since(t0);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).free, 16);
    double at[16];
    uint64_t seen = 0;
    while (seen < 16 && ms_since(t0) < 2600.0 + 4 * LATE_MS) {
        uint64_t r = cb_stats(rt, pool).recycled;
        double now = ms_since(t0);
        while (seen < r && seen < 16)
            at[seen++] = now;
        cb_sleep_ms(5);
    }
    CU_ASSERT_EQUAL_FATAL(seen, 16);
    /* Never before the window's lower edge (the members started after t0). */
    CU_ASSERT_TRUE(at[0] >= 1400.0);
    /* The last first member within its upper edge (a cull after it). */
    CU_ASSERT_TRUE(at[15] <= ready + 2600.0 + 50.0 + LATE_MS);
    /* Spread over the window: 16 draws from 1200 ms of it span less than
     * 400 ms about once in a million runs. */
    CU_ASSERT_TRUE(at[15] - at[0] >= 400.0);
    if (at[0] < 1400.0 || at[15] - at[0] < 400.0 || at[15] > ready + 2600.0 + 50.0 + LATE_MS)
        fprintf(stderr, "\nreplaced from %.0f to %.0f ms (ready at %.0f)\n", at[0], at[15], ready);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 16); /* each replaced, none lost */
    CU_ASSERT_EQUAL(st.culled, 0);
    shoal_runtime_destroy(rt);
}

/* ---- culling ------------------------------------------------------------------------ */

/* Four members grown from init 1, returned: none is culled while unused for
 * less than max_age (400 ms), though culls run every 50 ms; past it, three
 * are (down to init). */
static void test_cull_after_max_age(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 4);
    s.checkout.cull_interval_ms = 50;
    s.checkout.max_age_ms = 400;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[4];
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    double t0 = shoal_test_now(); /* before the first return: the oldest's unused time */
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    while (ms_since(t0) < 300.0) {
        CU_ASSERT_EQUAL(cb_stats(rt, pool).culled, 0);
        cb_sleep_ms(10);
    }
    while (cb_stats(rt, pool).culled == 0 && ms_since(t0) < 400.0 + 50.0 + 4 * LATE_MS)
        cb_sleep_ms(2);
    double first = ms_since(t0);
    CU_ASSERT_TRUE(first >= 400.0);
    CU_ASSERT_TRUE(first <= 400.0 + 50.0 + LATE_MS);
    WAIT_UNTIL(cb_stats(rt, pool).culled == 3);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 3);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    shoal_runtime_destroy(rt);
}

/* max_age 20 ms, but culls every 1000 ms from the pool's start: members
 * unused for long past max_age wait for the next cull -- the first, 1000
 * ms after the start, and the one after it, 1000 ms later. */
static void test_cull_at_interval(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 3);
    s.checkout.cull_interval_ms = 1000;
    s.checkout.max_age_ms = 20;
    double t0 = shoal_test_now(); /* before the start: the first cull is 1000 ms after it */
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[3];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_TRUE(ms_since(t0) < 600.0); /* (else the machine is too slow to tell) */
    while (ms_since(t0) < 900.0) {
        CU_ASSERT_EQUAL(cb_stats(rt, pool).culled, 0);
        cb_sleep_ms(10);
    }
    while (cb_stats(rt, pool).culled == 0 && ms_since(t0) < 1000.0 + 4 * LATE_MS)
        cb_sleep_ms(2);
    double first = ms_since(t0);
    CU_ASSERT_TRUE(first >= 1000.0);
    CU_ASSERT_TRUE(first <= 1000.0 + LATE_MS);
    WAIT_UNTIL(cb_stats(rt, pool).culled == 2);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).pool_size, 1);
    /* Two more, unused from now on: the next cull, 1000 ms after the
     * first, ends them. */
    double t1 = shoal_test_now(); /* after the first cull: the next is 1000 ms after it, or more */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    double cull1 = (t1 - t0) * 1000.0 - 1000.0; /* how late the first was seen, at most */
    while (ms_since(t0) < 1900.0) {
        CU_ASSERT_EQUAL(cb_stats(rt, pool).culled, 2);
        cb_sleep_ms(10);
    }
    while (cb_stats(rt, pool).culled == 2 && ms_since(t0) < 2000.0 + cull1 + 4 * LATE_MS)
        cb_sleep_ms(2);
    double second = ms_since(t0);
    CU_ASSERT_TRUE(second >= 2000.0);
    CU_ASSERT_TRUE(second <= 2000.0 + cull1 + LATE_MS);
    WAIT_UNTIL(cb_stats(rt, pool).culled == 4);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).pool_size, 1);
    shoal_runtime_destroy(rt);
}

/* ---- leases and drains ----------------------------------------------------------- */

/* A lease of 500 ms: the member is the thread's until then, destroyed at it. */
static void test_lease_on_time(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.lease_ms = 500;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    while (ms_since(t0) < 400.0) {
        CU_ASSERT_EQUAL(cb_stats(rt, pool).lease_expired, 0);
        cb_sleep_ms(10);
    }
    CU_ASSERT_TRUE(cb_alive(rt, a));
    while (cb_stats(rt, pool).lease_expired == 0 && ms_since(t0) < 500.0 + 4 * LATE_MS)
        cb_sleep_ms(2);
    double fired = ms_since(t0);
    CU_ASSERT_TRUE(fired >= 500.0);
    CU_ASSERT_TRUE(fired <= 500.0 + LATE_MS);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    shoal_runtime_destroy(rt);
}

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint64_t timeout_ms;
    int rc;
    double took_ms;
} drain_t;

static void *drain_main(void *arg)
{
    drain_t *d = arg;
    double t0 = shoal_test_now();
    d->rc = shoal_pool_drain(d->rt, d->pool, d->timeout_ms);
    d->took_ms = ms_since(t0);
    return NULL;
}

/* A drain waits for the member a thread holds; the thread never gives it
 * back, and its lease of 400 ms ends the wait: the member is destroyed
 * (counted), and the drain answers OK. */
static void test_drain_ends_with_a_lease(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    s.checkout.lease_ms = 400;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    drain_t d = {rt, pool, 10000, 99, 0};
    pthread_t th;
    pthread_create(&th, NULL, drain_main, &d);
    pthread_join(th, NULL);
    double took = ms_since(t0);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_TRUE(took >= 400.0);
    CU_ASSERT_TRUE(took <= 400.0 + LATE_MS);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    CU_ASSERT_TRUE(cb_ended(rt, pool));
    shoal_runtime_destroy(rt);
}

/* A drain call of 300 ms while a thread holds a member under a 30 s lease:
 * SHOAL_ETIMEDOUT at 300 ms; the pool goes on draining, the member in use
 * untouched, and it ends once the member is back. */
static void test_drain_call_times_out(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    drain_t d = {rt, pool, 300, 99, 0};
    pthread_t th;
    pthread_create(&th, NULL, drain_main, &d);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_ETIMEDOUT);
    CU_ASSERT_TRUE(d.took_ms >= 300.0);
    CU_ASSERT_TRUE(d.took_ms <= 300.0 + LATE_MS);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.lease_expired, 0);
    CU_ASSERT_TRUE(cb_alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    CU_ASSERT_TRUE(cb_ended(rt, pool));
    shoal_runtime_destroy(rt);
}

/* Culling and lifetimes turned on live (shoal_pool_set_checkout, as a
 * reload does) while every member is in use, under leases long enough,
 * and a thread keeps taking (it waits in the queue): for 300 ms, past the
 * new max_age and max_lifetime many times over, no member in use is
 * culled, recycled or stopped. Given back, each is past its lifetime and
 * replaced then; culling takes the pool down to init. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int stop, takes, bad;
} churn_t;

static void *churn_main(void *arg)
{
    churn_t *c = arg;
    while (!atomic_load(&c->stop)) {
        shoal_pid_t m;
        int rc = shoal_runtime_take(c->rt, c->pool, 50, &m);
        if (rc == SHOAL_OK) {
            atomic_fetch_add(&c->takes, 1);
            if (shoal_runtime_return(c->rt, c->pool, m, SHOAL_RETURN_OK) != SHOAL_OK)
                atomic_fetch_add(&c->bad, 1);
        } else if (rc != SHOAL_ETIMEDOUT) {
            atomic_fetch_add(&c->bad, 1);
        }
    }
    return NULL;
}

static void test_live_cull_spares_members_in_use(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 4);
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[4];
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    churn_t c = {rt, pool, 0, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, churn_main, &c);
    s.checkout.cull_interval_ms = 10;
    s.checkout.max_age_ms = 10;
    s.checkout.max_lifetime_ms = 20;
    shoal_pool_checkout_update_t u = {1, 4, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    double t0 = shoal_test_now();
    while (ms_since(t0) < 300.0) {
        shoal_pool_stats_t st = cb_stats(rt, pool);
        CU_ASSERT_EQUAL(st.in_use, 4);
        CU_ASSERT_EQUAL(st.culled + st.recycled + st.killed_in_use + st.lease_expired, 0);
        cb_sleep_ms(10);
    }
    for (int i = 0; i < 4; i++)
        CU_ASSERT_TRUE(cb_alive(rt, m[i]));
    CU_ASSERT_EQUAL(atomic_load(&c.takes), 0); /* it waited behind the four, in vain */
    atomic_store(&c.stop, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&c.bad), 0);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
        CU_ASSERT_TRUE(cb_ended(rt, m[i])); /* past its lifetime: replaced on return */
    }
    WAIT_UNTIL(cb_stats(rt, pool).recycled >= 4 && cb_stats(rt, pool).pool_size == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_TRUE(st.recycled >= 4);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    shoal_runtime_destroy(rt);
}

/* ---- the take wait ------------------------------------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int slow; /* the take (0, 1, ...) after which it holds the member 200 ms, not 20; -1: none */
    int bad;
} holder_t;

/* 11 takes, each holding the member 20 ms (or 200) before giving it back. */
static void *holder_main(void *arg)
{
    holder_t *h = arg;
    for (int k = 0; k < 11; k++) {
        shoal_pid_t m;
        if (shoal_runtime_take(h->rt, h->pool, 10000, &m) != SHOAL_OK) {
            h->bad++;
            continue;
        }
        cb_sleep_ms(k == h->slow ? 200 : 20);
        if (shoal_runtime_return(h->rt, h->pool, m, SHOAL_RETURN_OK) != SHOAL_OK)
            h->bad++;
    }
    return NULL;
}

/* One member, two threads that take it in turn, each holding it 20 ms (one
 * of them 200 ms once): every take but the first waits for the other's
 * hold. Of the 22 waits, one is 0, one 200 ms and twenty 20 ms: the median
 * reads back as 20 ms and the 99th percentile as 200 ms, each within the
 * histogram's bucket (its top is at most a quarter above) and the time a
 * hand-over takes. */
static void test_take_wait_percentiles(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    holder_t h[2] = {{rt, pool, -1, 0}, {rt, pool, 4, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, holder_main, &h[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(h[0].bad + h[1].bad, 0);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 22);
    double p50 = (double)st.take_wait_ns[0] / 1e6, p99 = (double)st.take_wait_ns[1] / 1e6;
    bool ok50 = p50 >= 20.0 && p50 <= 20.0 * 1.25 + LATE_MS / 10;
    bool ok99 = p99 >= 200.0 && p99 <= 200.0 * 1.25 + LATE_MS;
    CU_ASSERT_TRUE(ok50);
    CU_ASSERT_TRUE(ok99);
    if (!ok50 || !ok99)
        fprintf(stderr, "\ntake wait p50 %.2f ms, p99 %.2f ms\n", p50, p99);
    shoal_runtime_destroy(rt);
}

/* ---- inspect, counter by counter ------------------------------------------------ */

/* The value of "key": in an inspection's JSON (a number), or UINT64_MAX. */
static uint64_t json_u64(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    if (p == NULL)
        return UINT64_MAX;
    uint64_t v = 0;
    if (sscanf(p + strlen(pat), "%" SCNu64, &v) != 1)
        return UINT64_MAX;
    return v;
}

/* Every counter made non-zero by its own event, then read from an
 * inspection: the same numbers as the stats. */
static void test_inspect_counters(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_ERROR);
    shoal_pool_spec_t s = cb_spec_of(2, 3);
    s.checkout.lease_ms = 100;
    s.checkout.queue_max = 1;
    s.checkout.add_member_retry = 1;
    s.restart.backoff_ms = 10;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, b, c, x;
    /* A return FAIL; a thread's lease that expires (then 60 s leases). */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_FAIL), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).lease_expired == 1);
    s.checkout.lease_ms = 60000;
    shoal_pool_checkout_update_t u = {2, 3, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    /* All three in use: a take that may not wait, one that times out. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000, &c), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &x), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 50, &x), SHOAL_ETIMEDOUT);
    /* A member in use that crashes; a free one that crashes. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, T_PANIC, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).killed_in_use == 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, T_PANIC, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).killed_free == 1);
    /* A member given back FAIL whose replacement cannot start. */
    atomic_store(&cb_init_fail, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, c, SHOAL_RETURN_FAIL), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).start_failures >= 1);
    atomic_store(&cb_init_fail, 0);
    WAIT_UNTIL(cb_stats(rt, pool).free == 2);
    for (int i = 0; i < 3; i++) /* three members, all free */
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 5000,
                                                 i == 0   ? &a
                                                 : i == 1 ? &b
                                                          : &c),
                              SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, c, SHOAL_RETURN_OK), SHOAL_OK);
    /* Culling (init 1 now, max_age 50 ms) and a lifetime of 150 ms from
     * now: two members culled, the third replaced once past its lifetime. */
    s.checkout.cull_interval_ms = 20;
    s.checkout.max_age_ms = 50;
    s.checkout.max_lifetime_ms = 150;
    u = (shoal_pool_checkout_update_t){1, 3, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).culled >= 1 && cb_stats(rt, pool).recycled >= 1);
    /* Quiet: no lifetime or cull moves a count from now on. */
    s.checkout.cull_interval_ms = 0;
    s.checkout.max_lifetime_ms = 0;
    u = (shoal_pool_checkout_update_t){1, 3, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).starting == 0);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    char json[8192] = "";
    shoal_answer_t ans;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, pool, CB_TMO, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    if (ans.status == SHOAL_OK && ans.data != NULL)
        snprintf(json, sizeof json, "%s", (const char *)ans.data);
    shoal_answer_release(&ans);
    struct {
        const char *key;
        uint64_t stat;
    } want[] = {
        {"takes", st.takes},
        {"returned_ok", st.returned_ok},
        {"returned_fail", st.returned_fail},
        {"error_no_members", st.error_no_members},
        {"take_timeouts", st.take_timeouts},
        {"killed_free", st.killed_free},
        {"killed_in_use", st.killed_in_use},
        {"lease_expired", st.lease_expired},
        {"culled", st.culled},
        {"recycled", st.recycled},
        {"start_failures", st.start_failures},
        {"take_wait_p99_ns", st.take_wait_ns[1]},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint64_t got = json_u64(json, want[i].key);
        CU_ASSERT_EQUAL(got, want[i].stat);
        CU_ASSERT_NOT_EQUAL(want[i].stat, 0);
        if (got != want[i].stat || want[i].stat == 0)
            fprintf(stderr, "\n%s: inspect %" PRIu64 ", stats %" PRIu64 "\n", want[i].key, got,
                    want[i].stat);
    }
    CU_ASSERT_EQUAL(st.returned_fail, 2);
    CU_ASSERT_EQUAL(st.lease_expired, 1);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.take_timeouts, 1);
    CU_ASSERT_EQUAL(st.killed_in_use, 1);
    CU_ASSERT_EQUAL(st.killed_free, 1);
    CU_ASSERT_EQUAL(st.culled, 2);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"lifetimes spread over max_lifetime +- jitter", test_lifetime_jitter},
        {"culled only once unused past max_age", test_cull_after_max_age},
        {"culled only at a cull, every cull_interval", test_cull_at_interval},
        {"a lease fires at its time, not before", test_lease_on_time},
        {"a drain ends when a thread's lease does", test_drain_ends_with_a_lease},
        {"a drain call times out at its timeout", test_drain_call_times_out},
        {"live culling spares the members in use", test_live_cull_spares_members_in_use},
        {"the take wait's p50 and p99", test_take_wait_percentiles},
        {"inspect says what the stats say", test_inspect_counters},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_timing", cases);
}
