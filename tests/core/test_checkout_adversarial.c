/* test_checkout_adversarial.c - checkout pools' fast paths (takes, returns
 * and transactions on the consumer's own thread, core/pool/checkout_fast.c)
 * and shoal_send_many, used the way a careless or hostile consumer would,
 * with exact outcomes:
 *   - a consumer that crashes with a grant unread (granted at once, or
 *     handed over by a return while it was busy), or with its take queued
 *     (one or several dead takers ahead of a live one);
 *   - returns of a member one does not hold, twice, with a bad `how`, of
 *     SHOAL_PID_NONE, after the member crashed and before its EXIT is read;
 *   - members that crash mid-transaction among many transactions;
 *   - max, init and queue_max changed while takers wait;
 *   - drain while actors and a thread wait, then returns, sends and
 *     send_many to the drained pool;
 *   - takes with timeouts of 0, 1 and 2 ms and try_takes racing returns,
 *     from actors and threads: every counter equals what the consumers saw;
 *   - send_many to a checkout pool (admission), with n = SIZE_MAX and no
 *     payload, and mixed with single sends from several threads.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkout_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CK_WAIT_S)

/* ---- consumers that crash around a grant ------------------------------------- */

/* Granted at once (a free member, on its own thread), it panics in the same
 * turn: the grant was never read, so the member goes back as it is. */
static void crash_with_an_immediate_grant_unread(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t t = ck_spawn_consumer(rt, 0), b = ck_spawn_consumer(rt, 1);
    ck_tell(rt, t, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = CK_TMO});
    WAIT_UNTIL(ck_dead(rt, t) && ck_stats(rt, pool).free == 1);
    CU_ASSERT_EQUAL(atomic_load(&take_rc[0]), SHOAL_OK);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 1);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 1); /* not replaced: never seen */
    CU_ASSERT_EQUAL(ck_try_take(rt, b, 1, pool), SHOAL_OK);
    CU_ASSERT_EQUAL(ck_give_back(rt, b, 1, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* Its take queued, it is busy when a return hands the member over (the
 * grant waits in its mailbox), then it panics. */
static void crash_with_a_handed_over_grant_unread(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), t = ck_spawn_consumer(rt, 1);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    ck_tell(rt, t, (ck_order_t){.what = C_TAKE_BLOCK_PANIC, .pool = pool, .timeout_ms = CK_TMO});
    WAIT_UNTIL(atomic_load(&stage[1]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&take_rc[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).queued, 1);
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).takes == 2);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.in_use, 1); /* t's now, though it has not read it */
    CU_ASSERT_EQUAL(st.queued, 0);
    atomic_store(&cgate[1], 1);
    WAIT_UNTIL(ck_dead(rt, t) && ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 2);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 1);
    CU_ASSERT_EQUAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* Takers that queue and crash: a return skips them, to the live one behind;
 * with none behind, the member is free and a try_take finds it (the dead
 * entries do not block it until their deadline). */
static void crashed_takers_in_the_queue_are_skipped(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), d1 = ck_spawn_consumer(rt, 1),
                d2 = ck_spawn_consumer(rt, 2), l = ck_spawn_consumer(rt, 3),
                x = ck_spawn_consumer(rt, 4);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    ck_tell(rt, d1, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
    WAIT_UNTIL(ck_dead(rt, d1));
    ck_tell(rt, d2, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
    WAIT_UNTIL(ck_dead(rt, d2));
    CU_ASSERT_EQUAL(ck_take(rt, l, 3, pool, 60000), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).queued == 3);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).queued, 3); /* the dead ones still counted */
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&grants[3]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&got[3]), m);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 0);
    /* Dead takers only: the member comes back free. */
    shoal_pid_t d3 = ck_spawn_consumer(rt, 5);
    ck_tell(rt, d3, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
    WAIT_UNTIL(ck_dead(rt, d3));
    CU_ASSERT_EQUAL(ck_give_back(rt, l, 3, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(ck_try_take(rt, x, 4, pool), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&got[4]), m);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 3);
    CU_ASSERT_EQUAL(st.returned_ok, 2);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.take_timeouts, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 1);
    shoal_runtime_destroy(rt);
}

/* ---- returns that are not the consumer's to make ------------------------------- */

static void returns_one_may_not_make(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t a = ck_spawn_consumer(rt, 0), b = ck_spawn_consumer(rt, 1);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, a, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    CU_ASSERT_EQUAL(ck_give_back(rt, b, 1, m, SHOAL_RETURN_OK), SHOAL_EINVAL);   /* not b's */
    CU_ASSERT_EQUAL(ck_give_back(rt, b, 1, m, SHOAL_RETURN_FAIL), SHOAL_EINVAL); /* not b's */
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, 7), SHOAL_EINVAL);                 /* bad how */
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, -1), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, pool, SHOAL_RETURN_OK), SHOAL_EINVAL); /* the pool */
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, a, SHOAL_RETURN_OK), SHOAL_EINVAL);    /* itself */
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1); /* still a's */
    CU_ASSERT_EQUAL(st.returned_ok, 0);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, SHOAL_RETURN_OK), SHOAL_EINVAL); /* twice */
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, SHOAL_RETURN_FAIL), SHOAL_EINVAL);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(st.free, 1);
    /* b holds it now: a, which held it before, cannot give it back. */
    CU_ASSERT_EQUAL(ck_try_take(rt, b, 1, pool), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&got[1]), m);
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, SHOAL_RETURN_OK), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, SHOAL_RETURN_FAIL), SHOAL_EINVAL);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_TRUE(ck_alive(rt, m));
    /* b's FAIL: destroyed, replaced; twice is refused. */
    CU_ASSERT_EQUAL(ck_give_back(rt, b, 1, m, SHOAL_RETURN_FAIL), SHOAL_OK);
    CU_ASSERT_EQUAL(ck_give_back(rt, b, 1, m, SHOAL_RETURN_FAIL), SHOAL_EINVAL);
    WAIT_UNTIL(atomic_load(&ck_started) == 2 && ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 2);
    /* The pool counts m's FAIL and starts its replacement when it sends m
     * its stop; m ends when a dispatcher thread runs that stop, which may
     * come after the replacement is free: its end is waited for, then
     * asserted. */
    WAIT_UNTIL(ck_dead(rt, m));
    CU_ASSERT_FALSE(ck_alive(rt, m));
    shoal_runtime_destroy(rt);
}

/* The member crashes while its holder is busy: the holder's return (OK, then
 * in a second round FAIL) comes before it reads the EXIT. Nothing is counted
 * given back, and the replacement is not touched. */
static void return_after_the_member_crashed(void)
{
    for (int round = 0; round < 2; round++) {
        int how = round == 0 ? SHOAL_RETURN_OK : SHOAL_RETURN_FAIL;
        ck_reset();
        shoal_runtime_t *rt = shoal_test_runtime(4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        shoal_pid_t pool = ck_start(rt, 1, 1, 8);
        shoal_pid_t a = ck_spawn_consumer(rt, 0);
        CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, a, 0, pool), SHOAL_OK);
        shoal_pid_t m = atomic_load(&got[0]);
        ck_tell(rt, a, (ck_order_t){.what = C_BLOCK_RETURN, .how = how});
        WAIT_UNTIL(atomic_load(&stage[0]) == 1);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, T_PANIC, NULL, 0), SHOAL_OK);
        WAIT_UNTIL(ck_stats(rt, pool).killed_in_use == 1 && ck_stats(rt, pool).free == 1);
        atomic_store(&cgate[0], 1);
        WAIT_UNTIL(atomic_load(&return_rc[0]) != 99 && atomic_load(&exits[0]) == 1);
        /* It still held it when it returned (the EXIT unread): nothing to
         * give back, said OK. */
        CU_ASSERT_EQUAL(atomic_load(&return_rc[0]), SHOAL_OK);
        CU_ASSERT_EQUAL(atomic_load(&exit_from[0]), m);
        CU_ASSERT_EQUAL(ck_give_back(rt, a, 0, m, how), SHOAL_EINVAL); /* now it knows */
        shoal_pool_stats_t st = ck_stats(rt, pool);
        CU_ASSERT_EQUAL(st.killed_in_use, 1);
        CU_ASSERT_EQUAL(st.killed_free, 0);
        CU_ASSERT_EQUAL(st.returned_ok, 0);
        CU_ASSERT_EQUAL(st.returned_fail, 0);
        CU_ASSERT_EQUAL(st.free, 1);
        CU_ASSERT_EQUAL(st.in_use, 0);
        CU_ASSERT_EQUAL(atomic_load(&ck_started), 2); /* one replacement, untouched */
        CU_ASSERT_EQUAL(ck_try_take(rt, a, 0, pool), SHOAL_OK);
        CU_ASSERT_NOT_EQUAL(atomic_load(&got[0]), m);
        CU_ASSERT_TRUE(ck_alive(rt, atomic_load(&got[0])));
        shoal_runtime_destroy(rt);
    }
}

/* ---- members that crash mid-transaction ----------------------------------------- */

#define TXN_N 300
#define TXN_EVERY 10 /* every 10th panics */

static void members_crash_mid_transaction(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 2, 3, 512);
    int npanic = 0;
    for (int k = 0; k < TXN_N; k++) {
        bool p = k % TXN_EVERY == TXN_EVERY - 1;
        npanic += p;
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, p ? T_PANIC : T_OK, NULL, 0), SHOAL_OK);
    }
    /* And a call that crashes its member: answered, not hung. */
    shoal_answer_t ans;
    int rc = shoal_runtime_checkout_call(rt, pool, T_PANIC, NULL, 0, CK_TMO, &ans);
    bool answered = rc == SHOAL_OK && ans.status != SHOAL_OK;
    if (rc == SHOAL_OK)
        shoal_answer_release(&ans);
    if (!answered)
        fprintf(stderr, "\ncrashing call: rc %d\n", rc);
    CU_ASSERT_TRUE(answered);
    npanic++;
    int total = TXN_N + 1;
    WAIT_UNTIL(atomic_load(&ck_handled) == total && ck_stats(rt, pool).in_use == 0 &&
               ck_stats(rt, pool).starting == 0 &&
               atomic_load(&ck_started) == (int)ck_stats(rt, pool).pool_size + npanic);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), total);
    CU_ASSERT_EQUAL(st.takes, (uint64_t)total);
    CU_ASSERT_EQUAL(st.returned_ok, (uint64_t)(total - npanic));
    CU_ASSERT_EQUAL(st.returned_fail + st.killed_in_use, (uint64_t)npanic);
    CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)total);
    CU_ASSERT_EQUAL(st.messages_failed, (uint64_t)npanic);
    CU_ASSERT_EQUAL(st.messages_handled, (uint64_t)(total - npanic));
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_TRUE(st.pool_size >= 2 && st.pool_size <= 3);
    CU_ASSERT_EQUAL((uint64_t)atomic_load(&ck_started), st.pool_size + (uint64_t)npanic);
    if (st.returned_ok != (uint64_t)(total - npanic) || st.takes != (uint64_t)total)
        fprintf(stderr, "\ntakes %llu ok %llu fail %llu killed %llu handled %llu failed %llu\n",
                (unsigned long long)st.takes, (unsigned long long)st.returned_ok,
                (unsigned long long)st.returned_fail, (unsigned long long)st.killed_in_use,
                (unsigned long long)st.messages_handled, (unsigned long long)st.messages_failed);
    shoal_runtime_destroy(rt);
}

/* ---- settings changed while takers wait ----------------------------------------- */

static void settings_changed_while_takers_wait(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = ck_spec(1, 1, 8);
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), c[3];
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    for (int k = 0; k < 3; k++) {
        c[k] = ck_spawn_consumer(rt, k + 1);
        CU_ASSERT_EQUAL(ck_take(rt, c[k], k + 1, pool, 60000), SHOAL_OK);
        WAIT_UNTIL(ck_stats(rt, pool).queued == (uint32_t)k + 1);
    }
    /* max 1 -> 3: two members start, for the first two waiting. */
    shoal_pool_checkout_update_t u = {1, 3, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CK_TMO), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&grants[1]) == 1 && atomic_load(&grants[2]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&grants[1]), 1);
    CU_ASSERT_EQUAL(atomic_load(&grants[2]), 1);
    CU_ASSERT_EQUAL(atomic_load(&grants[3]), 0);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 3);
    CU_ASSERT_EQUAL(st.queued, 1);
    /* queue_max 8 -> 0: the one still waiting is refused. */
    u.checkout.queue_max = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CK_TMO), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&answers[3]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&answer_status[3]), SHOAL_ENOMEMBERS);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    /* A take now cannot wait at all. */
    CU_ASSERT_EQUAL(ck_take(rt, c[2], 3, pool, 60000), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&answers[3]) == 2);
    CU_ASSERT_EQUAL(atomic_load(&answer_status[3]), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).error_no_members, 2);
    /* max 3 -> 1 with all three in use: none touched; the first two given
     * back end (culled), the last stays. */
    u = (shoal_pool_checkout_update_t){1, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CK_TMO), SHOAL_OK);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 3);
    CU_ASSERT_EQUAL(st.culled, 0);
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).culled == 1 && ck_stats(rt, pool).pool_size == 2);
    CU_ASSERT_EQUAL(ck_give_back(rt, c[0], 1, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).culled == 2 && ck_stats(rt, pool).pool_size == 1);
    CU_ASSERT_EQUAL(ck_give_back(rt, c[1], 2, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 2);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.takes, 3);
    CU_ASSERT_EQUAL(st.returned_ok, 3);
    CU_ASSERT_EQUAL(st.max_size, 1);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 3);
    shoal_runtime_destroy(rt);
}

/* ---- drain while takers wait ------------------------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool, got;
    uint64_t timeout_ms;
    int rc;
    atomic_int done;
} thread_take_t;

static void *thread_take_main(void *arg)
{
    thread_take_t *t = arg;
    t->rc = shoal_runtime_take(t->rt, t->pool, t->timeout_ms, &t->got);
    atomic_store(&t->done, 1);
    return NULL;
}

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int rc;
    atomic_int done;
} drainer_t;

static void *drain_main(void *arg)
{
    drainer_t *d = arg;
    d->rc = shoal_pool_drain(d->rt, d->pool, 15000);
    atomic_store(&d->done, 1);
    return NULL;
}

static void drain_while_takers_wait(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), w[3], late = ck_spawn_consumer(rt, 4);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    for (int k = 0; k < 3; k++) {
        w[k] = ck_spawn_consumer(rt, k + 1);
        CU_ASSERT_EQUAL(ck_take(rt, w[k], k + 1, pool, 60000), SHOAL_OK);
    }
    WAIT_UNTIL(ck_stats(rt, pool).queued == 3);
    thread_take_t tt = {.rt = rt, .pool = pool, .timeout_ms = 60000, .rc = 99};
    pthread_t th, dh;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, thread_take_main, &tt), 0);
    WAIT_UNTIL(ck_stats(rt, pool).queued == 4);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).queued, 4);
    /* A transaction waits too. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_OK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(ck_stats(rt, pool).queued == 5);
    drainer_t d = {.rt = rt, .pool = pool, .rc = 99};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&dh, NULL, drain_main, &d), 0);
    for (int k = 1; k <= 3; k++)
        WAIT_UNTIL(atomic_load(&answers[k]) == 1);
    WAIT_UNTIL(atomic_load(&tt.done) == 1);
    for (int k = 1; k <= 3; k++) {
        CU_ASSERT_EQUAL(atomic_load(&answers[k]), 1);
        CU_ASSERT_EQUAL(atomic_load(&answer_status[k]), SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(atomic_load(&grants[k]), 0);
    }
    CU_ASSERT_EQUAL(tt.rc, SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(tt.got, SHOAL_PID_NONE);
    pthread_join(th, NULL);
    /* Nothing new gets in; the member in use is still h's. */
    CU_ASSERT_EQUAL(ck_try_take(rt, late, 4, pool), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(ck_take(rt, late, 4, pool, 1000), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&answers[4]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&answer_status[4]), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_OK, NULL, 0), SHOAL_ENOPROC);
    uint64_t v[4] = {0};
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_OK, v, sizeof v[0], 4, &sent),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(sent, 0);
    CU_ASSERT_EQUAL(atomic_load(&d.done), 0);
    CU_ASSERT_TRUE(ck_alive(rt, m));
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.takes, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 1); /* the transaction */
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(dh, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_FALSE(ck_alive(rt, m));
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), 0);
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, m, SHOAL_RETURN_OK), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(ck_try_take(rt, late, 4, pool), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* A return hands the member to a taker that has crashed (the grant cannot
 * be delivered) while the pool starts to drain: the member must still end
 * and the drain finish. Many rounds, the return and the drain let go at
 * once. */
#define DRAIN_RACE_ROUNDS 200

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int rc;
    atomic_int go;
} racing_drainer_t;

static void *racing_drain_main(void *arg)
{
    racing_drainer_t *d = arg;
    while (!atomic_load(&d->go))
        ;
    d->rc = shoal_pool_drain(d->rt, d->pool, 3000);
    return NULL;
}

static void drain_races_a_hand_off_to_a_crashed_taker(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    int hung = 0, bad_rc = 0;
    for (int r = 0; r < DRAIN_RACE_ROUNDS && hung == 0; r++) {
        ck_reset();
        shoal_pid_t pool = ck_start(rt, 1, 1, 8);
        shoal_pid_t h = ck_spawn_consumer(rt, 0), d = ck_spawn_consumer(rt, 1);
        CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
        ck_tell(rt, d, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
        WAIT_UNTIL(ck_dead(rt, d));
        ck_tell(rt, h, (ck_order_t){.what = C_BLOCK_RETURN, .how = SHOAL_RETURN_OK});
        WAIT_UNTIL(atomic_load(&stage[0]) == 1);
        racing_drainer_t dr = {.rt = rt, .pool = pool, .rc = 99};
        pthread_t th;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, racing_drain_main, &dr), 0);
        atomic_store(&dr.go, 1);
        atomic_store(&cgate[0], 1);
        pthread_join(th, NULL);
        WAIT_UNTIL(atomic_load(&return_rc[0]) != 99);
        bad_rc += atomic_load(&return_rc[0]) != SHOAL_OK;
        if (dr.rc != SHOAL_OK) {
            shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
            fprintf(stderr,
                    "\nround %d: drain %d; state %u in_use %u free %u starting %u queued %u "
                    "takes %llu returned_ok %llu\n",
                    r, dr.rc, (unsigned)st.state, st.in_use, st.free, st.starting, st.queued,
                    (unsigned long long)st.takes, (unsigned long long)st.returned_ok);
            hung++;
        }
        (void)shoal_runtime_stop_actor(rt, h);
    }
    CU_ASSERT_EQUAL(hung, 0);
    CU_ASSERT_EQUAL(bad_rc, 0);
    shoal_runtime_destroy(rt);
}

/* ---- tiny timeouts racing returns ------------------------------------------------ */

#define RACE_ACTORS 16
#define RACE_K 1000
#define RACE_THREADS 2
#define RACE_TK 250

static atomic_llong r_grants, r_nomem, r_timeouts, r_bad, r_done;

typedef struct {
    shoal_pid_t pool, held;
    int left;
} racer_t;

enum { R_START = 1, R_NEXT = 2, R_RELEASE = 3 };

static void racer_next(shoal_ctx_t *ctx, racer_t *r)
{
    if (r->left == 0) {
        atomic_fetch_add(&r_done, 1);
        return;
    }
    int mode = --r->left % 4;
    if (mode == 0) {
        shoal_pid_t m;
        int rc = shoal_try_take(ctx, r->pool, &m);
        if (rc == SHOAL_OK) {
            atomic_fetch_add(&r_grants, 1);
            r->held = m;
            if (shoal_send(ctx, shoal_self(ctx), R_RELEASE, NULL, 0) != SHOAL_OK)
                atomic_fetch_add(&r_bad, 1);
            return;
        }
        if (rc == SHOAL_ENOMEMBERS)
            atomic_fetch_add(&r_nomem, 1);
        else
            atomic_fetch_add(&r_bad, 1);
        if (shoal_send(ctx, shoal_self(ctx), R_NEXT, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&r_bad, 1);
        return;
    }
    shoal_ref_t ref;
    if (shoal_take(ctx, r->pool, (uint64_t)(mode - 1), &ref) != SHOAL_OK)
        atomic_fetch_add(&r_bad, 1);
}

static int racer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    racer_t *r = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == R_START) {
        memcpy(&r->pool, msg->data, sizeof r->pool);
        r->left = RACE_K;
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->type == R_NEXT) {
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->type == R_RELEASE) {
        if (shoal_return(ctx, r->held, SHOAL_RETURN_OK) != SHOAL_OK)
            atomic_fetch_add(&r_bad, 1);
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY) {
        if (msg->status == SHOAL_OK && msg->type == SHOAL_CHECKOUT_MEMBER) {
            shoal_checkout_member_t g;
            memcpy(&g, msg->data, sizeof g);
            r->held = g.member;
            atomic_fetch_add(&r_grants, 1);
            if (shoal_send(ctx, shoal_self(ctx), R_RELEASE, NULL, 0) != SHOAL_OK)
                atomic_fetch_add(&r_bad, 1);
            return SHOAL_OK;
        }
        if (msg->status == SHOAL_ENOMEMBERS)
            atomic_fetch_add(&r_nomem, 1);
        else if (msg->status == SHOAL_ETIMEDOUT)
            atomic_fetch_add(&r_timeouts, 1);
        else
            atomic_fetch_add(&r_bad, 1);
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    atomic_fetch_add(&r_bad, 1); /* a call's TIMEOUT, an EXIT: neither should come */
    return SHOAL_OK;
}

static const shoal_behaviour_t racer = {
    .name = "racer", .state_size = sizeof(racer_t), .handle_message = racer_message};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    long ok, nomem, timedout, bad;
} race_thread_t;

static void *race_thread_main(void *arg)
{
    race_thread_t *t = arg;
    for (int k = 0; k < RACE_TK; k++) {
        shoal_pid_t m;
        int rc = shoal_runtime_take(t->rt, t->pool, (uint64_t)(k % 3), &m);
        if (rc == SHOAL_OK) {
            t->ok++;
            struct timespec ts = {0, 2000000}; /* long enough for 1-2 ms takes to time out */
            nanosleep(&ts, NULL);
            if (shoal_runtime_return(t->rt, t->pool, m, SHOAL_RETURN_OK) != SHOAL_OK)
                t->bad++;
        } else if (rc == SHOAL_ENOMEMBERS) {
            t->nomem++;
        } else if (rc == SHOAL_ETIMEDOUT) {
            t->timedout++;
        } else {
            t->bad++;
        }
    }
    return NULL;
}

static void tiny_timeouts_race_returns(void)
{
    ck_reset();
    atomic_store(&r_grants, 0);
    atomic_store(&r_nomem, 0);
    atomic_store(&r_timeouts, 0);
    atomic_store(&r_bad, 0);
    atomic_store(&r_done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 2, 2, 64);
    WAIT_UNTIL(ck_stats(rt, pool).free == 2);
    race_thread_t th[RACE_THREADS];
    pthread_t tid[RACE_THREADS];
    for (int k = 0; k < RACE_THREADS; k++) {
        th[k] = (race_thread_t){.rt = rt, .pool = pool};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[k], NULL, race_thread_main, &th[k]), 0);
    }
    for (int k = 0; k < RACE_ACTORS; k++) {
        shoal_pid_t c;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &racer, NULL, NULL, &c), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, R_START, &pool, sizeof pool), SHOAL_OK);
    }
    for (int k = 0; k < RACE_THREADS; k++)
        pthread_join(tid[k], NULL);
    WAIT_UNTIL(atomic_load(&r_done) + atomic_load(&r_bad) >= RACE_ACTORS);
    WAIT_UNTIL(ck_stats(rt, pool).in_use == 0 && ck_stats(rt, pool).queued == 0);
    long t_ok = 0, t_nomem = 0, t_to = 0, t_bad = 0;
    for (int k = 0; k < RACE_THREADS; k++) {
        t_ok += th[k].ok;
        t_nomem += th[k].nomem;
        t_to += th[k].timedout;
        t_bad += th[k].bad;
    }
    long long grants_n = atomic_load(&r_grants) + t_ok;
    long long nomem_n = atomic_load(&r_nomem) + t_nomem;
    long long to_n = atomic_load(&r_timeouts) + t_to;
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(atomic_load(&r_done), RACE_ACTORS);
    CU_ASSERT_EQUAL(atomic_load(&r_bad), 0);
    CU_ASSERT_EQUAL(t_bad, 0);
    /* Every take answered once: actors' and threads' outcomes add up. */
    CU_ASSERT_EQUAL(grants_n + nomem_n + to_n,
                    (long long)RACE_ACTORS * RACE_K + (long long)RACE_THREADS * RACE_TK);
    CU_ASSERT_EQUAL(st.takes, (uint64_t)grants_n);
    CU_ASSERT_EQUAL(st.returned_ok, (uint64_t)grants_n);
    CU_ASSERT_EQUAL(st.error_no_members, (uint64_t)nomem_n);
    CU_ASSERT_EQUAL(st.take_timeouts, (uint64_t)to_n);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.lease_expired, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 2);
    if (st.takes != (uint64_t)grants_n || st.error_no_members != (uint64_t)nomem_n ||
        st.take_timeouts != (uint64_t)to_n || getenv("SHOAL_TEST_VERBOSE") != NULL)
        fprintf(stderr,
                "\nseen: grants %lld nomem %lld timeouts %lld; pool: takes %llu "
                "no_members %llu timeouts %llu returned_ok %llu\n",
                grants_n, nomem_n, to_n, (unsigned long long)st.takes,
                (unsigned long long)st.error_no_members, (unsigned long long)st.take_timeouts,
                (unsigned long long)st.returned_ok);
    shoal_runtime_destroy(rt);
}

/* ---- send_many ---------------------------------------------------------------------- */

/* A run to a checkout pool is that many transactions: admitted up to
 * max + queue_max, the next refused SHOAL_ENOMEMBERS (counted once). */
static void send_many_to_a_checkout_pool(void)
{
    ck_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 1, 1, 2);
    uint64_t v[10] = {0};
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_BLOCK, v, sizeof v[0], 10, &sent),
                    SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(sent, 3);
    WAIT_UNTIL(atomic_load(&ck_mblocked) == 1);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    /* n = 0: nothing, OK; no payload: refused as a single send would be. */
    static const char none[1];
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_OK, none, 0, 0, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_OK, none, 0, 5, &sent), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(sent, 0);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).error_no_members, 2);
    atomic_store(&ck_mgate, 1);
    WAIT_UNTIL(atomic_load(&ck_handled) == 3 && ck_stats(rt, pool).free == 1);
    /* Room again: a run of SIZE_MAX without payload takes exactly 3. */
    atomic_store(&ck_mgate, 0);
    atomic_store(&ck_mblocked, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_BLOCK, none, 0, SIZE_MAX, &sent),
                    SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(sent, 3);
    atomic_store(&ck_mgate, 1);
    WAIT_UNTIL(atomic_load(&ck_handled) == 6 && ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), 6);
    CU_ASSERT_EQUAL(st.takes, 6);
    CU_ASSERT_EQUAL(st.returned_ok, 6);
    CU_ASSERT_EQUAL(st.messages_forwarded, 6);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    CU_ASSERT_EQUAL(st.error_no_members, 3);
    CU_ASSERT_EQUAL(st.messages_unhandled, 3);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 1);
    shoal_runtime_destroy(rt);
}

/* A receiver that counts, blocked on its gate in its first message. */
static atomic_int rx_n, rx_entered, rx_gate;

static int rx_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return SHOAL_OK;
    atomic_fetch_add(&rx_entered, 1);
    while (!atomic_load(&rx_gate))
        shoal_test_nap();
    atomic_fetch_add(&rx_n, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t rx = {.name = "rx", .handle_message = rx_message};

/* n = SIZE_MAX with no payload: a bounded actor and a full pool take their
 * room and refuse the rest at once. */
static void send_many_of_size_max(void)
{
    atomic_store(&rx_n, 0);
    atomic_store(&rx_entered, 0);
    atomic_store(&rx_gate, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_spawn_opts_t o = {.mailbox_limit = 16};
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, &o, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rx_entered) == 1);
    size_t sent = 99;
    static const char none[1];
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, a, 1, none, 0, SIZE_MAX, &sent), SHOAL_EFULL);
    size_t room = sent;
    CU_ASSERT_TRUE(room >= 15 && room <= 16);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, NULL, 0), SHOAL_EFULL);
    /* A forward pool: 3 workers of mailbox 4, each holding one. */
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "fwd";
    s.worker = &rx;
    s.size = 3;
    s.mailbox = 4;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, 1, none, 0, 3, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 3);
    WAIT_UNTIL(atomic_load(&rx_entered) == 4);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rx_entered), 4);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, 1, none, 0, SIZE_MAX, &sent), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(sent, 12);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_EBUSY);
    atomic_store(&rx_gate, 1);
    WAIT_UNTIL(atomic_load(&rx_n) == (int)(1 + room + 3 + 12));
    CU_ASSERT_EQUAL(atomic_load(&rx_n), (int)(1 + room + 3 + 12));
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 15);
    CU_ASSERT_EQUAL(st.messages_unhandled, 2);
    shoal_runtime_destroy(rt);
}

/* Several threads mix runs and single sends into one pool: every message
 * arrives once, each sender's messages in order at each worker. */
#define MIX_THREADS 4
#define MIX_ROUNDS 200
#define MIX_RUN 37
#define MIX_PER (MIX_ROUNDS * (MIX_RUN + 1))

static atomic_int mix_n, mix_bad;

typedef struct {
    int64_t last[MIX_THREADS];
} mix_state_t;

static int mix_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)args;
    mix_state_t *s = state;
    for (int k = 0; k < MIX_THREADS; k++)
        s->last[k] = -1;
    return SHOAL_OK;
}

static int mix_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    mix_state_t *s = state;
    uint64_t v;
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof v) {
        atomic_fetch_add(&mix_bad, 1);
        return SHOAL_OK;
    }
    memcpy(&v, msg->data, sizeof v);
    unsigned who = (unsigned)(v >> 32);
    int64_t seq = (int64_t)(v & 0xffffffffu);
    if (who >= MIX_THREADS || seq <= s->last[who])
        atomic_fetch_add(&mix_bad, 1);
    else
        s->last[who] = seq;
    atomic_fetch_add(&mix_n, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t mixer = {.name = "mix",
                                        .state_size = sizeof(mix_state_t),
                                        .init = mix_init,
                                        .handle_message = mix_message};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    unsigned who;
    long sent, errors;
} mix_thread_t;

static void *mix_main(void *arg)
{
    mix_thread_t *t = arg;
    uint64_t seq = 0, v[MIX_RUN];
    for (int r = 0; r < MIX_ROUNDS; r++) {
        for (int j = 0; j < MIX_RUN; j++)
            v[j] = (uint64_t)t->who << 32 | seq++;
        size_t sent = 0;
        int rc = shoal_runtime_send_many(t->rt, t->pool, 1, v, sizeof v[0], MIX_RUN, &sent);
        t->sent += (long)sent;
        t->errors += rc != SHOAL_OK || sent != MIX_RUN;
        uint64_t one = (uint64_t)t->who << 32 | seq++;
        rc = shoal_runtime_send(t->rt, t->pool, 1, &one, sizeof one);
        t->sent += rc == SHOAL_OK;
        t->errors += rc != SHOAL_OK;
    }
    return NULL;
}

static void send_many_mixed_with_sends_from_threads(void)
{
    atomic_store(&mix_n, 0);
    atomic_store(&mix_bad, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "mixed";
    s.worker = &mixer;
    s.size = 3;
    s.mailbox = SHOAL_MAILBOX_UNBOUNDED;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    mix_thread_t t[MIX_THREADS];
    pthread_t tid[MIX_THREADS];
    for (unsigned k = 0; k < MIX_THREADS; k++) {
        t[k] = (mix_thread_t){.rt = rt, .pool = pool, .who = k};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[k], NULL, mix_main, &t[k]), 0);
    }
    long sent = 0, errors = 0;
    for (unsigned k = 0; k < MIX_THREADS; k++) {
        pthread_join(tid[k], NULL);
        sent += t[k].sent;
        errors += t[k].errors;
    }
    CU_ASSERT_EQUAL(errors, 0);
    CU_ASSERT_EQUAL(sent, (long)MIX_THREADS * MIX_PER);
    WAIT_UNTIL(atomic_load(&mix_n) == MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(atomic_load(&mix_n), MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(atomic_load(&mix_bad), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pool).messages_handled == (uint64_t)MIX_THREADS * MIX_PER);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, pool).messages_handled,
                    (uint64_t)MIX_THREADS * MIX_PER);
    shoal_runtime_destroy(rt);
}

/* data NULL with size 0 passes the argument check (a single send of no
 * payload is fine): n of them must be sent too. Last: under UBSan this
 * has hit "applying zero offset to null pointer" in core/actor/send.c. */
static void send_many_of_no_payload_from_null(void)
{
    atomic_store(&rx_n, 0);
    atomic_store(&rx_entered, 0);
    atomic_store(&rx_gate, 1);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, NULL, &a), SHOAL_OK);
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, a, 1, NULL, 0, 0, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 0);
    sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, a, 1, NULL, 0, 100, &sent), SHOAL_OK);
    CU_ASSERT_EQUAL(sent, 100);
    WAIT_UNTIL(atomic_load(&rx_n) == 100);
    CU_ASSERT_EQUAL(atomic_load(&rx_n), 100);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a crash with an immediate grant unread", crash_with_an_immediate_grant_unread},
        {"a crash with a handed-over grant unread", crash_with_a_handed_over_grant_unread},
        {"crashed takers in the queue are skipped", crashed_takers_in_the_queue_are_skipped},
        {"returns one may not make", returns_one_may_not_make},
        {"a return after the member crashed", return_after_the_member_crashed},
        {"members crash mid-transaction", members_crash_mid_transaction},
        {"settings changed while takers wait", settings_changed_while_takers_wait},
        {"drain while takers wait", drain_while_takers_wait},
        {"drain races a hand-off to a crashed taker", drain_races_a_hand_off_to_a_crashed_taker},
        {"tiny timeouts race returns", tiny_timeouts_race_returns},
        {"send_many to a checkout pool", send_many_to_a_checkout_pool},
        {"send_many of SIZE_MAX", send_many_of_size_max},
        {"send_many mixed with sends from threads", send_many_mixed_with_sends_from_threads},
        {"send_many of no payload from NULL", send_many_of_no_payload_from_null},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_adversarial", cases);
}
