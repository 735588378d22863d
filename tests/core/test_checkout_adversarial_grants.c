/* test_checkout_adversarial_grants.c - checkout pools' grants and their
 * returns (core/pool/checkout_fast.c) used the way a careless or hostile
 * consumer would, with exact outcomes:
 *   - a consumer that crashes with a grant unread (granted at once, or
 *     handed over by a return while it was busy), or with its take queued
 *     (one or several dead takers ahead of a live one);
 *   - returns of a member one does not hold, twice, with a bad `how`, of
 *     SHOAL_PID_NONE, after the member crashed and before its EXIT is read;
 *   - a member that crashes while a return's grant of it to the next taker
 *     is on its way (held on its way: the taker's PID is remote, so the
 *     grant goes through the runtime's gateway, the test's);
 *   - members that crash mid-transaction among many transactions.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actor/envelope.h"
#include "actor/held.h"
#include "actor/send.h"
#include "checkout_kit.h"
#include "runtime/runtime.h"

/* ---- consumers that crash around a grant ------------------------------------- */

/* Granted at once (a free member, on its own thread), it panics in the same
 * turn: the grant was never read, so the member goes back as it is. */
static void crash_with_an_immediate_grant_unread(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t t = ck_spawn_consumer(rt, 0), b = ck_spawn_consumer(rt, 1);
    ck_tell(rt, t, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = CK_TMO});
    CK_WAIT_UNTIL(ck_dead(rt, t) && ck_stats(rt, pool).free == 1);
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
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), t = ck_spawn_consumer(rt, 1);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    ck_tell(rt, t, (ck_order_t){.what = C_TAKE_BLOCK_PANIC, .pool = pool, .timeout_ms = CK_TMO});
    CK_WAIT_UNTIL(atomic_load(&stage[1]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&take_rc[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).queued, 1);
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).takes == 2);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.in_use, 1); /* t's now, though it has not read it */
    CU_ASSERT_EQUAL(st.queued, 0);
    atomic_store(&cgate[1], 1);
    CK_WAIT_UNTIL(ck_dead(rt, t) && ck_stats(rt, pool).free == 1);
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
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), d1 = ck_spawn_consumer(rt, 1),
                d2 = ck_spawn_consumer(rt, 2), l = ck_spawn_consumer(rt, 3),
                x = ck_spawn_consumer(rt, 4);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    ck_tell(rt, d1, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
    CK_WAIT_UNTIL(ck_dead(rt, d1));
    ck_tell(rt, d2, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
    CK_WAIT_UNTIL(ck_dead(rt, d2));
    CU_ASSERT_EQUAL(ck_take(rt, l, 3, pool, 60000), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).queued == 3);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).queued, 3); /* the dead ones still counted */
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&grants[3]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&got[3]), m);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 0);
    /* Dead takers only: the member comes back free. */
    shoal_pid_t d3 = ck_spawn_consumer(rt, 5);
    ck_tell(rt, d3, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
    CK_WAIT_UNTIL(ck_dead(rt, d3));
    CU_ASSERT_EQUAL(ck_give_back(rt, l, 3, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 1);
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
    shoal_runtime_t *rt = ck_runtime(2);
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
    CK_WAIT_UNTIL(atomic_load(&ck_started) == 2 && ck_stats(rt, pool).free == 1);
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
    CK_WAIT_UNTIL(ck_dead(rt, m));
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
        shoal_runtime_t *rt = ck_runtime(4);
        shoal_pid_t pool = ck_start(rt, 1, 1, 8);
        shoal_pid_t a = ck_spawn_consumer(rt, 0);
        CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, a, 0, pool), SHOAL_OK);
        shoal_pid_t m = atomic_load(&got[0]);
        ck_tell(rt, a, (ck_order_t){.what = C_BLOCK_RETURN, .how = how});
        CK_WAIT_UNTIL(atomic_load(&stage[0]) == 1);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, T_PANIC, NULL, 0), SHOAL_OK);
        CK_WAIT_UNTIL(ck_stats(rt, pool).killed_in_use == 1 && ck_stats(rt, pool).free == 1);
        atomic_store(&cgate[0], 1);
        CK_WAIT_UNTIL(atomic_load(&return_rc[0]) != 99 && atomic_load(&exits[0]) == 1);
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
    shoal_runtime_t *rt = ck_runtime(4);
    /* Every crash is a restart: a budget for all of them, so none waits
     * for a degraded pool's backoff. */
    shoal_pool_spec_t s = ck_spec(2, 3, 512);
    s.restart.max = 1000;
    shoal_pid_t pool = ck_start_spec(rt, &s);
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
    CK_WAIT_UNTIL(atomic_load(&ck_handled) == total && ck_stats(rt, pool).in_use == 0 &&
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

/* ---- a member that crashes while its grant is on its way ------------------ */

/* What the gateway was given for the taker of another process, in order:
 * a grant (kind REPLY: the member it carries) or an EXIT (from the member,
 * with its reason). A grant waits at the gateway while gw_hold is set
 * (gw_in: one waits) until gw_release: the grant's thread, between the
 * pool's lock and the grant's delivery, held there. */
typedef struct {
    unsigned kind;
    shoal_pid_t member;
    shoal_ref_t ref;
    int status;
} gw_seen_t;

static pthread_mutex_t gw_lock = PTHREAD_MUTEX_INITIALIZER;
static gw_seen_t gw_log[8];
static atomic_int gw_n, gw_hold, gw_in, gw_release;

static int gateway(void *user, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e, bool sys)
{
    (void)user;
    (void)to;
    (void)sys;
    gw_seen_t seen = {.kind = shoal__env_kind(e), .member = e->from, .status = (int)e->type};
    if (shoal__held_is_grant(e)) {
        shoal_checkout_member_t g;
        memcpy(&g, shoal__env_data(e), sizeof g);
        seen.member = g.member;
        seen.ref = shoal__env_ref(e);
        seen.status = SHOAL_OK;
        if (atomic_load(&gw_hold)) {
            atomic_store(&gw_in, 1);
            shoal_test_wait_flag(&gw_release, CK_WAIT_S);
        }
    }
    pthread_mutex_lock(&gw_lock);
    int n = atomic_load(&gw_n);
    if (n < 8)
        gw_log[n] = seen;
    atomic_store(&gw_n, n + 1);
    pthread_mutex_unlock(&gw_lock);
    shoal__env_free(tc, e);
    return SHOAL_OK;
}

static gw_seen_t gw_at(int n)
{
    pthread_mutex_lock(&gw_lock);
    gw_seen_t seen = gw_log[n];
    pthread_mutex_unlock(&gw_lock);
    return seen;
}

/* The pool's one member is held by consumer a; a taker of another process
 * (its PID remote: what is sent to it goes through the runtime's gateway,
 * here the test's) waits for it. a gives it back, on its own thread, which
 * hands it to that taker: the seat is the taker's, and the grant goes after
 * the lock, through the gateway, which holds it -- the window between the
 * lock and the grant's delivery, held open. Then the member crashes and
 * the pool hears of it, its holder being that taker: the taker must be
 * told after its grant (checkout.h: grants after the lock), not before it
 * -- it would drop an EXIT for a member it does not hold yet, then hold a
 * dead one. */
static void crash_while_its_grant_is_on_its_way(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    atomic_store(&gw_n, 0);
    atomic_store(&gw_hold, 0);
    atomic_store(&gw_in, 0);
    atomic_store(&gw_release, 0);
    rt->gateway = gateway; /* before any message to a remote PID */
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t a = ck_spawn_consumer(rt, 0);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, a, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    /* The remote taker's take, as its process's gateway would hand it in:
     * a priority call from its PID. */
    shoal_pid_t far = shoal__pid_make(1, 5 | SHOAL__PID_REMOTE);
    const shoal_ref_t ref = 4242;
    shoal_held_take_t take = {.timeout_ms = 10000};
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CALL, SHOAL_ENV_PRIORITY, far, ref,
                                    SHOAL__CHECKOUT_TAKE, &take, sizeof take);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL_FATAL(shoal__deliver(rt, tc, pool, e, true), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).queued == 1);
    CU_ASSERT_EQUAL_FATAL(ck_stats(rt, pool).queued, 1);
    /* a's return hands the member over; its grant is held at the gateway. */
    atomic_store(&gw_hold, 1);
    ck_tell(rt, a, (ck_order_t){.what = C_RETURN, .how = SHOAL_RETURN_OK});
    CK_WAIT_UNTIL(atomic_load(&gw_in) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&gw_in), 1);
    CU_ASSERT_EQUAL(atomic_load(&gw_n), 0);
    /* The member crashes; the pool hears of it (counted, replaced). */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, T_PANIC, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).killed_in_use == 1 && ck_stats(rt, pool).free == 1);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).killed_in_use, 1);
    /* Nothing for the taker yet: its grant is not delivered. */
    CU_ASSERT_EQUAL(atomic_load(&gw_n), 0);
    atomic_store(&gw_release, 1);
    CK_WAIT_UNTIL(atomic_load(&return_rc[0]) != 99 && atomic_load(&gw_n) >= 2);
    CU_ASSERT_EQUAL(atomic_load(&return_rc[0]), SHOAL_OK);
    /* The grant, then the EXIT, once: a's return has sent all it sends and
     * the pool has handled the member's end. */
    CU_ASSERT_EQUAL_FATAL(atomic_load(&gw_n), 2);
    gw_seen_t first = gw_at(0), second = gw_at(1);
    CU_ASSERT_EQUAL(first.kind, SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(first.member, m);
    CU_ASSERT_EQUAL(first.ref, ref);
    CU_ASSERT_EQUAL(second.kind, SHOAL_MSG_EXIT);
    CU_ASSERT_EQUAL(second.member, m);
    CU_ASSERT_EQUAL(second.status, SHOAL_EPANIC);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.killed_in_use, 1);
    CU_ASSERT_EQUAL(st.killed_free, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 2);
    CU_ASSERT_EQUAL(atomic_load(&exits[0]), 0); /* a gave it back before: not told */
    shoal_runtime_destroy(rt);
}

/* ---- answers that look like grants ------------------------------------------ */

/* A "forger": a call of type FORGE (payload a shoal_checkout_member_t) is
 * answered with that payload as type SHOAL_CHECKOUT_MEMBER -- at once, or
 * (FORGE_LATE) once it is told GO, after its caller gave up. As an actor
 * that passes on a take's answer it got does, or one that makes one up. */
enum { FORGE = 0x51, FORGE_LATE = 0x52, GO = 0x53, ASK = 0x54, GIVE = 0x55 };
static shoal_pid_t fg_to;
static shoal_ref_t fg_ref;
static shoal_checkout_member_t fg_g;
static atomic_int fg_waiting, fg_sent;

static int forger_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)state;
    if (msg->size != sizeof fg_g)
        return SHOAL_OK;
    if (msg->type == FORGE)
        return shoal_reply_set(reply, SHOAL_CHECKOUT_MEMBER, msg->data, msg->size);
    memcpy(&fg_g, msg->data, sizeof fg_g);
    fg_to = msg->from;
    fg_ref = msg->ref;
    atomic_store(&fg_waiting, 1);
    return SHOAL_DEFER;
}

static int forger_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == GO && atomic_load(&fg_waiting)) {
        shoal_reply(ctx, fg_to, fg_ref, SHOAL_CHECKOUT_MEMBER, &fg_g, sizeof fg_g);
        atomic_store(&fg_sent, 1);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t forger = {
    .name = "forger", .handle_message = forger_message, .handle_call = forger_call};

/* An "asker": ASK {pool, forger, late} -- takes a member of pool (try_take;
 * none: member NONE) and calls the forger with it (FORGE_LATE: 50 ms, so
 * it gives up before the answer), or only calls it with member m (no take);
 * GIVE -- shoal_return of that member. It records what it hears. */
typedef struct {
    shoal_pid_t pool, forger, m;
    int late;
} ask_t;
static _Atomic shoal_pid_t as_member;
static atomic_int as_replies, as_timeouts, as_return_rc = 99, as_take_rc = 99;

static int asker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_REPLY)
        atomic_fetch_add(&as_replies, 1);
    if (msg->kind == SHOAL_MSG_TIMEOUT)
        atomic_fetch_add(&as_timeouts, 1);
    if (msg->kind != SHOAL_MSG_CAST)
        return SHOAL_OK;
    if (msg->type == GIVE) {
        atomic_store(&as_return_rc, shoal_return(ctx, atomic_load(&as_member), SHOAL_RETURN_OK));
        return SHOAL_OK;
    }
    ask_t a;
    if (msg->type != ASK || msg->size != sizeof a)
        return SHOAL_OK;
    memcpy(&a, msg->data, sizeof a);
    shoal_pid_t m = a.m;
    if (m == SHOAL_PID_NONE)
        atomic_store(&as_take_rc, shoal_try_take(ctx, a.pool, &m));
    atomic_store(&as_member, m);
    shoal_checkout_member_t g = {m, a.pool};
    shoal_ref_t ref;
    shoal_call(ctx, a.forger, a.late ? FORGE_LATE : FORGE, &g, sizeof g, a.late ? 50 : CK_TMO,
               &ref);
    return SHOAL_OK;
}

static const shoal_behaviour_t asker = {.name = "asker", .handle_message = asker_message};

static void forge_reset(void)
{
    atomic_store(&fg_waiting, 0);
    atomic_store(&fg_sent, 0);
    atomic_store(&as_member, SHOAL_PID_NONE);
    atomic_store(&as_replies, 0);
    atomic_store(&as_timeouts, 0);
    atomic_store(&as_return_rc, 99);
    atomic_store(&as_take_rc, 99);
}

/* The holder of the pool's one member calls an actor that answers with a
 * grant of that very member -- late, after the call gave up. A late grant
 * goes back to its pool by itself (call.c), so this one, taken for the
 * pool's, gave the member back while its holder still used it: the next
 * taker got it too (two consumers on one member). Only the pool's own
 * replies are grants (held.c): the member stays in use, a take finds none,
 * and the holder's own return is the one that gives it back. */
static void a_late_forged_grant_gives_nothing_back(void)
{
    forge_reset();
    shoal_runtime_t *rt = ck_runtime(2);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t f, x;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &forger, NULL, NULL, &f), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &asker, NULL, NULL, &x), SHOAL_OK);
    ask_t a = {pool, f, SHOAL_PID_NONE, 1};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, x, ASK, &a, sizeof a), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&as_timeouts) == 1 && atomic_load(&fg_waiting) == 1);
    CU_ASSERT_EQUAL(atomic_load(&as_take_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, f, GO, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&fg_sent) == 1);
    struct timespec ts = {0, 100000000}; /* the late answer is read (and was given back, before) */
    nanosleep(&ts, NULL);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 0);
    CU_ASSERT_EQUAL(st.returned_ok, 0);
    shoal_pid_t other;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &other), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, x, GIVE, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&as_return_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&as_return_rc), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    shoal_runtime_destroy(rt);
}

/* An actor that is answered, in time, with a grant of a member another
 * holds does not hold it: its return is refused (SHOAL_EINVAL, it never
 * took it), and the holder keeps it. And shoal_take on a member is
 * SHOAL_ENOTSUP at once. */
static void a_forged_grant_is_no_take(void)
{
    forge_reset();
    shoal_runtime_t *rt = ck_runtime(2);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t c = ck_spawn_consumer(rt, 0);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, c, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    shoal_pid_t f, x;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &forger, NULL, NULL, &f), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &asker, NULL, NULL, &x), SHOAL_OK);
    ask_t a = {pool, f, m, 0};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, x, ASK, &a, sizeof a), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&as_replies) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, x, GIVE, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&as_return_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&as_return_rc), SHOAL_EINVAL);
    /* A take from a member (no checkout pool) is refused as it is asked:
     * the member is not sent it, to answer as an ordinary call. */
    shoal_pid_t c2 = ck_spawn_consumer(rt, 1);
    CU_ASSERT_EQUAL(ck_take(rt, c2, 1, m, 100), SHOAL_ENOTSUP);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.returned_ok, 0);
    CU_ASSERT_EQUAL(ck_give_back(rt, c, 0, m, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 1);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).returned_ok, 1);
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
        {"a crash while its grant is on its way", crash_while_its_grant_is_on_its_way},
        {"members crash mid-transaction", members_crash_mid_transaction},
        {"a late forged grant gives nothing back", a_late_forged_grant_gives_nothing_back},
        {"a forged grant is no take", a_forged_grant_is_no_take},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_adversarial_grants", cases);
}
