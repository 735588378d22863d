/* test_checkout_take.c - taking members of a checkout pool
 * (core/pool/checkout*.c) from a thread and giving them back, with exact
 * counts: FIFO reuse, returns refused (twice, a bad `how`, another
 * thread's -- one that has ended too --, to what is no checkout pool),
 * waiting takers and queue_max, timeouts (and UINT64_MAX: none),
 * growth to max on demand, a take that cannot wait still starting a member,
 * members that fail or are too slow to start (add_member_retry, the
 * backoff), a takers' queue that stays bounded, and a look at the free
 * members that sees each once (lifo too).
 *
 * Handlers never call CUnit: they record into atomics (checkout_basic_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "checkout_basic_kit.h"
#include "actor/timer.h"
#include "pool/checkout.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* ---- from a thread ---------------------------------------------------------- */

static void test_thread_take_return(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 2);
    shoal_pid_t a, b, c;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &c), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(c, SHOAL_PID_NONE);
    /* The consumer uses the member directly. */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, a, T_WHO, NULL, 0, CB_TMO, &ans), SHOAL_OK);
    cb_who_t w;
    memcpy(&w, ans.data, sizeof w);
    shoal_answer_release(&ans);
    CU_ASSERT_EQUAL(w.pid, a);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_CHECKOUT);
    CU_ASSERT_EQUAL(st.in_use, 2);
    CU_ASSERT_EQUAL(st.free, 0);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, 7), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_FAIL), SHOAL_OK);
    /* FAIL: b is destroyed, a new member takes its place. */
    WAIT_UNTIL(cb_stats(rt, pool).free == 2);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 3);
    CU_ASSERT_TRUE(cb_ended(rt, b));
    CU_ASSERT_TRUE(cb_alive(rt, a));
    /* FIFO: the member given back first is taken first. */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &c), SHOAL_OK);
    CU_ASSERT_EQUAL(c, a);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, c, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* Whether pool's inspect says "strategy":"<name>". */
static bool strategy_is(shoal_runtime_t *rt, shoal_pid_t pool, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "\"strategy\":\"%s\"", name);
    shoal_answer_t ans;
    if (shoal_runtime_inspect(rt, pool, CB_TMO, &ans) != SHOAL_OK)
        return false;
    bool is = ans.status == 0 && ans.data != NULL && strstr(ans.data, want) != NULL;
    shoal_answer_release(&ans);
    return is;
}

/* A look at the free members (SHOAL__CHECKOUT_POKE: a take found one past
 * its lifetime, or a grant came back undelivered) offers each once, with
 * lifo too: there the fresh member at the head was offered again and
 * again, and the two past their lifetime behind it stayed until a take
 * came to them. */
static void test_look_offers_every_free_member_lifo(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(3, 3);
    s.strategy = SHOAL_POOL_STRATEGY_LIFO;
    s.checkout.max_lifetime_ms = 300;
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[3];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &m[i]), SHOAL_OK);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    cb_sleep_ms(400);
    /* m[2], past its lifetime, is replaced as it comes back: the fresh one
     * goes to the head, before m[1] and m[0], both past theirs. */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[2], SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).free == 3);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL_FATAL(st.free, 3);
    CU_ASSERT_EQUAL(st.recycled, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL__CHECKOUT_POKE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).recycled == 3 && cb_stats(rt, pool).free == 3);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.recycled, 3);
    CU_ASSERT_EQUAL(st.free, 3);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 6);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_TRUE(cb_ended(rt, m[i]));
    shoal_runtime_destroy(rt);
}

/* Which free member a take gets (spec.strategy, ABI 1.13): with lifo the
 * one given back last (with fifo, the default, the one free the longest:
 * above); shoal_pool_set_strategy switches live, for the members given
 * back from then on. A forward pool's strategies are refused, and lifo is
 * refused by a forward pool. */
static void test_strategy_lifo(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(3, 3);
    s.strategy = SHOAL_POOL_STRATEGY_LIFO;
    shoal_pid_t pool = cb_start(rt, &s);
    CU_ASSERT_TRUE(strategy_is(rt, pool, "lifo"));
    shoal_pid_t m[3], got;
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &m[i]), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &got), SHOAL_OK);
    CU_ASSERT_EQUAL(got, m[2]); /* given back last */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, got, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &got), SHOAL_OK);
    CU_ASSERT_EQUAL(got, m[2]); /* again */
    /* fifo from now on: m[2] goes behind m[1] and m[0]. */
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, pool, SHOAL_POOL_STRATEGY_FIFO, CB_TMO), SHOAL_OK);
    CU_ASSERT_TRUE(strategy_is(rt, pool, "fifo"));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, got, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &got), SHOAL_OK);
    CU_ASSERT_EQUAL(got, m[1]);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, got, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &got), SHOAL_OK);
    CU_ASSERT_EQUAL(got, m[0]);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, got, SHOAL_RETURN_OK), SHOAL_OK);
    /* Refused, and nothing changed. */
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, pool, SHOAL_POOL_STRATEGY_ROUND_ROBIN, CB_TMO),
                    SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, pool, 99, CB_TMO), SHOAL_EINVAL);
    CU_ASSERT_TRUE(strategy_is(rt, pool, "fifo"));
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = s.worker;
    f.size = 1;
    f.strategy = SHOAL_POOL_STRATEGY_LIFO;
    shoal_pid_t fwd = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &f, &fwd), SHOAL_EINVAL);
    f.strategy = SHOAL_POOL_STRATEGY_FIFO;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &f, &fwd), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, fwd, SHOAL_POOL_STRATEGY_LIFO, CB_TMO),
                    SHOAL_EINVAL);
    CU_ASSERT_TRUE(strategy_is(rt, fwd, "fifo"));
    shoal_runtime_destroy(rt);
}

/* Another thread's return of w->got (one it does not hold). */
static void *returner_main(void *arg)
{
    cb_taker_t *t = arg;
    t->back_rc = shoal_runtime_return(t->rt, t->pool, t->got, SHOAL_RETURN_OK);
    return NULL;
}

static void test_queue_and_timeouts(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 1;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, x;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    /* A taker that waits and times out. */
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 150, &x), SHOAL_ETIMEDOUT);
    CU_ASSERT_TRUE(shoal_test_now() - t0 >= 0.149);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).take_timeouts, 1);
    /* One waits (the queue holds one); the next is refused at once. */
    cb_taker_t w = {rt, pool, SHOAL_PID_NONE, 10000, 1, 0, 1, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, cb_taker_main, &w);
    WAIT_UNTIL(cb_stats(rt, pool).queued == 1);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).queued, 1);
    t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 10000, &x), SHOAL_ENOMEMBERS);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 5.0);
    /* Given back: the waiter gets it. */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(w.got, a);
    CU_ASSERT_EQUAL(w.back_rc, SHOAL_OK); /* it gave it back itself */
    /* A thread cannot give back what another took (nor twice). */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_EINVAL);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 2);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.take_timeouts, 1);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_TRUE(st.take_wait_ns[1] > 0);
    /* queue_max 0: never a wait. */
    shoal_pool_checkout_update_t u = {1, 1, s.checkout};
    u.checkout.queue_max = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 10000, &x), SHOAL_ENOMEMBERS);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 5.0);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).error_no_members, 2);
    /* Another thread's second return of a member it gave back and this
     * thread took since: refused, the member stays this thread's. */
    cb_taker_t w2 = {rt, pool, SHOAL_PID_NONE, 0, 1, 0, 1, 0, 0};
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_create(&th, NULL, cb_taker_main, &w2); /* takes a, gives it back */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w2.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(w2.back_rc, SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &x), SHOAL_OK);
    CU_ASSERT_EQUAL(x, a);
    w2.got = a; /* the stale second return, from another thread */
    pthread_create(&th, NULL, returner_main, &w2);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w2.back_rc, SHOAL_EINVAL);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).in_use, 1);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &x), SHOAL_ENOMEMBERS);
    shoal_runtime_destroy(rt);
}

/* Returns and takes a thread may not make, each refused with nothing
 * changed: a member another thread took, after that thread has ended (a
 * thread is known by its cache's serial, which a later thread's cache
 * never has -- its address it often does: that return was accepted); a
 * return or a take sent to a PID that is no checkout pool (a member
 * answered them as ordinary calls, and a return so "answered" said
 * SHOAL_OK while the member stayed checked out); a return of no member
 * (SHOAL_ETIMEDOUT, "its lease had ended", before). */
static void test_thread_refusals(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m = SHOAL_PID_NONE, x;
    for (int k = 0; k < 2; k++) {
        cb_taker_t t = {rt, pool, SHOAL_PID_NONE, 0, 1, 0, 1, 1, 0}; /* keeps it */
        pthread_t th;
        pthread_create(&th, NULL, cb_taker_main, &t);
        pthread_join(th, NULL); /* ended, its member held under its lease */
        CU_ASSERT_EQUAL_FATAL(t.rc, SHOAL_OK);
        m = t.got;
        cb_taker_t r = t;
        pthread_create(&th, NULL, returner_main, &r);
        pthread_join(th, NULL);
        CU_ASSERT_EQUAL(r.back_rc, SHOAL_EINVAL);
        CU_ASSERT_EQUAL(cb_stats(rt, pool).in_use, (uint32_t)k + 1);
    }
    /* The pool and the member swapped; a take from the member. */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, m, pool, SHOAL_RETURN_OK), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, m, 0, &x), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, SHOAL_PID_NONE, m, SHOAL_RETURN_OK), SHOAL_ENOPROC);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 0);
    CU_ASSERT_EQUAL(st.lease_expired, 0);
    CU_ASSERT_TRUE(cb_alive(rt, m));
    shoal_runtime_destroy(rt);
}

static void test_grow_to_max(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(0, 3);
    shoal_pid_t pool = cb_start(rt, &s);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).pool_size, 0);
    shoal_pid_t m[4];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 3);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 50, &m[3]), SHOAL_ETIMEDOUT);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.in_use, 3);
    CU_ASSERT_EQUAL(st.max_size, 3);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).free, 3);
    shoal_runtime_destroy(rt);
}

/* Takers while the pool starts: the spare started for one is not one of
 * `init`. The pool (init 1, max 2, its member's connect 1.5 s) is found
 * through its group while that member connects; two takers then wait, and
 * the second's spare starts at once. That spare's start notice -- a
 * failure, or a success -- leaves the pool's start alone: the spawn
 * returns SHOAL_OK once the init member has started (before, the failed
 * spare failed the start and ended the pool, and a spare that started
 * ended the start early). Both takers get a member. */
static void take_while_starting(bool spare_fails)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_test_spawner_t t = {.rt = rt, .spec = cb_spec_of(1, 2)};
    t.spec.checkout.group = "starting";
    t.spec.checkout.cull_interval_ms = 0;
    t.spec.restart.backoff_ms = 400; /* the failed spare is started again after it */
    atomic_store(&cb_init_delay_ms, 1500);
    pthread_t th, tk[2];
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, shoal_test_spawner_main, &t), 0);
    shoal_pid_t pool = SHOAL_PID_NONE;
    WAIT_UNTIL(shoal__group_members(rt, "starting", &pool, 1) == 1);
    CU_ASSERT_NOT_EQUAL_FATAL(pool, SHOAL_PID_NONE);
    cb_sleep_ms(200); /* its init member is inside its connect */
    atomic_store(&cb_init_delay_ms, 0);
    atomic_store(&cb_init_fail, spare_fails);
    cb_taker_t k[2];
    for (int i = 0; i < 2; i++) {
        k[i] = (cb_taker_t){rt, pool, SHOAL_PID_NONE, 30000, 99, 0, 99, 0, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tk[i], NULL, cb_taker_main, &k[i]), 0);
    }
    if (spare_fails)
        WAIT_UNTIL(cb_stats(rt, pool).start_failures == 1);
    else
        WAIT_UNTIL(atomic_load(&cb_started) == 1);
    cb_sleep_ms(100);                         /* what the pool does with the spare's notice */
    CU_ASSERT_EQUAL(atomic_load(&t.done), 0); /* the init member still connects */
    atomic_store(&cb_init_fail, 0);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&t.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(t.pid, pool);
    for (int i = 0; i < 2; i++) {
        pthread_join(tk[i], NULL);
        CU_ASSERT_EQUAL(k[i].rc, SHOAL_OK);
    }
    CU_ASSERT_EQUAL(k[0].back_rc, SHOAL_OK);
    CU_ASSERT_EQUAL(k[1].back_rc, SHOAL_OK);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.start_failures, spare_fails ? 1 : 0);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 2);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    shoal_runtime_destroy(rt);
}

static void test_spare_fails_while_starting(void) { take_while_starting(true); }
static void test_spare_starts_while_starting(void) { take_while_starting(false); }

/* ---- members that do not start ---------------------------------------------- */

static void test_start_failures(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(0, 2);
    s.checkout.add_member_retry = 2;
    s.restart.backoff_ms = 100;
    shoal_pid_t pool = cb_start(rt, &s);
    atomic_store(&cb_init_fail, 1);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &a), SHOAL_ENOMEMBERS);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.start_failures, 2);
    CU_ASSERT_EQUAL(st.pool_size, 0);
    /* A round of two tries is two lines: its first failure, and its end
     * with the wait. */
    CU_ASSERT_EQUAL(shoal_test_log_count("a member did not start"), 2);
    CU_ASSERT_EQUAL(shoal_test_log_count("2 starts in a row failed: starting again in 100 ms"), 1);
    /* The backend is back: after the backoff, takes work again. */
    atomic_store(&cb_init_fail, 0);
    struct timespec ts = {0, 150000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    /* A pool whose init members cannot start does not start. */
    atomic_store(&cb_init_fail, 1);
    shoal_pool_spec_t s2 = cb_spec_of(2, 2);
    shoal_pid_t p2;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s2, &p2), SHOAL_EFAILED);
    shoal_runtime_destroy(rt);
}

/* ---- edges a review found (each failed before its fix) -------------------------- */

/* A take that cannot wait (timeout 0) still starts a member for the next. */
static void test_nowait_take_starts_member(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(0, 2);
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &m), SHOAL_ENOMEMBERS);
    WAIT_UNTIL(cb_stats(rt, pool).free == 1);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &m), SHOAL_OK);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 1);
    shoal_runtime_destroy(rt);
}

/* UINT64_MAX is no limit: the take waits. */
static void test_unbounded_timeout(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    cb_taker_t t = {rt, pool, SHOAL_PID_NONE, UINT64_MAX, 99, 0, 99, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, cb_taker_main, &t);
    cb_sleep_ms(300);
    CU_ASSERT_EQUAL(atomic_load(&t.done), 0);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(t.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(t.got, a);
    shoal_runtime_destroy(rt);
}

/* Takes that timed out behind a waiter do not grow the queue for ever. */
static void test_queue_ring_bounded(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 2;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, x;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    cb_taker_t head = {rt, pool, SHOAL_PID_NONE, 20000, 99, 0, 99, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, cb_taker_main, &head);
    WAIT_UNTIL(cb_stats(rt, pool).queued == 1);
    int timeouts = 0;
    for (int k = 0; k < 600; k++)
        timeouts += shoal_runtime_take(rt, pool, 1, &x) == SHOAL_ETIMEDOUT;
    CU_ASSERT_EQUAL(timeouts, 600);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).take_timeouts, 600); /* and a turn of the pool since */
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_TRUE(p->co->qcap <= 16);
    shoal__pool_unref(rt, p);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(head.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(head.got, a);
    shoal_runtime_destroy(rt);
}

/* Start timeouts count toward add_member_retry: then the takers hear
 * SHOAL_ENOMEMBERS and starts wait restart.backoff. */
static void test_start_timeouts_back_off(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(0, 1);
    s.checkout.member_start_timeout_ms = 30;
    s.checkout.add_member_retry = 1;
    s.checkout.cull_interval_ms = 0;
    s.restart.backoff_ms = 5000;
    shoal_pid_t pool = cb_start(rt, &s);
    atomic_store(&cb_init_delay_ms, 80);
    shoal_pid_t m;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 1000, &m), SHOAL_ENOMEMBERS);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 0.9);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).start_failures, 1);
    shoal_test_assert_logged("a member did not start within 30 ms (member_start_timeout): "
                             "stopping it (its init still runs: it counts against max");
    atomic_store(&cb_init_delay_ms, 0);
    cb_sleep_ms(200);
    shoal_runtime_destroy(rt);
}

/* A waiting take's deadline whose tick cannot be armed (no memory,
 * injected): the tick is owed (actor/timer.h), logged, and still comes --
 * the take times out at its deadline, counted, and the log says the tick
 * runs again. Lost, as it was before, nothing would answer the take until
 * the pool's next event (take_timeouts stayed 0). A second streak is
 * logged again. */
static void test_deadline_tick_owed(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 1;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, x;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    const char *owed = "could not arm its checkout tick (out of memory): owed, the timer "
                       "thread sends it once memory allows";
    const char *came = "its checkout tick has come: running again";
    for (unsigned round = 1; round <= 2; round++) {
        shoal__timers_fail(rt, 1);
        double t0 = shoal_test_now();
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 150, &x), SHOAL_ETIMEDOUT);
        CU_ASSERT_TRUE(shoal_test_now() - t0 >= 0.149);
        CU_ASSERT_EQUAL(cb_stats(rt, pool).take_timeouts, round);
        CU_ASSERT_EQUAL(shoal_test_log_count(owed), round);
        /* (Logged as that tick's turn begins; the take's answer is sent in
         * it: by the time the take has returned, it is in the log.) */
        CU_ASSERT_EQUAL(shoal_test_log_count(came), round);
    }
    /* A take after them waits and times out as usual, logging nothing. */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 50, &x), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).take_timeouts, 3);
    CU_ASSERT_EQUAL(shoal_test_log_count(owed), 2);
    CU_ASSERT_EQUAL(shoal_test_log_count(came), 2);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"take and return from a thread", test_thread_take_return},
        {"strategy lifo: the member given back last; switched live", test_strategy_lifo},
        {"lifo: a look offers every free member once", test_look_offers_every_free_member_lifo},
        {"waiting takers, queue_max and timeouts", test_queue_and_timeouts},
        {"a deadline's tick that cannot be armed is owed", test_deadline_tick_owed},
        {"returns and takes a thread may not make", test_thread_refusals},
        {"growth to max on demand", test_grow_to_max},
        {"start failures and add_member_retry", test_start_failures},
        {"a spare that fails while the pool starts leaves the start",
         test_spare_fails_while_starting},
        {"a spare that starts while the pool starts is not an init's",
         test_spare_starts_while_starting},
        {"a take that cannot wait starts a member", test_nowait_take_starts_member},
        {"UINT64_MAX: no limit", test_unbounded_timeout},
        {"the takers' queue stays bounded", test_queue_ring_bounded},
        {"start timeouts back off", test_start_timeouts_back_off},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_take", cases);
}
