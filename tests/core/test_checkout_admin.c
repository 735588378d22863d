/* test_checkout_admin.c - what is done to a checkout pool from outside
 * (core/pool/checkout*.c): its settings changed live (init, max, the
 * members' mailbox limit; bad values change nothing; other kinds' commands
 * refused), max lowered below the members in use, a drain that waits for
 * the members in use, serves the transactions queued (and drops them,
 * counted, answered and logged, when its last member fails) and answers
 * the takes waiting at once, and bad specs; a drain that finds a caller's
 * "gone" note in the pool's mailbox, transactions the runtime's
 * max_queued refused, and transactions sent to the pool's mailbox (the
 * queue could not grow) served in the order they came.
 *
 * Handlers never call CUnit: they record into atomics (checkout_basic_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <string.h>

#include "checkout_basic_kit.h"
#include "fail_alloc.h"
#include "pool/checkout_fast.h"
#include "pool/checkout.h" /* SHOAL__CHECKOUT_CALL_GONE */
#include "pool/pool.h"     /* shoal__pool_find, shoal__pool_peek */

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* ---- settings, drain, bad specs ----------------------------------------------------- */

static void test_set_checkout_live(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    shoal_pool_checkout_update_t u = {3, 4, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).free == 2);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.target_size, 3);
    CU_ASSERT_EQUAL(st.max_size, 4);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 2);
    /* Bad values change nothing. */
    shoal_pool_checkout_update_t bad = {5, 4, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &bad, CB_TMO), SHOAL_EINVAL);
    bad = (shoal_pool_checkout_update_t){1, 2, s.checkout};
    bad.checkout.lease_ms = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &bad, CB_TMO), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).target_size, 3);
    /* Other kinds' commands are not a checkout pool's; its members'
     * mailbox limit is, for every live member. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 3, CB_TMO), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, pool, SHOAL_POOL_STRATEGY_LEAST_LOADED, CB_TMO),
                    SHOAL_EINVAL); /* fifo or lifo only (test_checkout_take) */
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, 8, CB_TMO), SHOAL_OK);
    shoal_answer_t ans;
    bool limited = false;
    for (int k = 0; k < 1000 && !limited; k++) { /* each member sets it in its own turn */
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, a, CB_TMO, &ans), SHOAL_OK);
        limited = ans.data != NULL && strstr(ans.data, "\"mailbox_limit\":8") != NULL;
        shoal_answer_release(&ans);
        if (!limited)
            shoal_test_nap();
    }
    CU_ASSERT_TRUE(limited);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).mailbox, 8);
    /* Lower: free members past the new max end; the one in use stays. */
    u = (shoal_pool_checkout_update_t){1, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).free == 0);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_TRUE(cb_alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int rc;
} drainer_t;

static void *drain_main(void *arg)
{
    drainer_t *d = arg;
    d->rc = shoal_pool_drain(d->rt, d->pool, 10000);
    return NULL;
}

static void test_drain_waits_for_returns(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    drainer_t d = {rt, pool, 99};
    pthread_t th;
    pthread_create(&th, NULL, drain_main, &d);
    WAIT_UNTIL(cb_stats(rt, pool).state == SHOAL_POOL_DRAINING && cb_stats(rt, pool).free == 0);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1); /* the free one has ended; a is still in use */
    CU_ASSERT_TRUE(cb_alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &b), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(d.rc, 99);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_FALSE(cb_alive(rt, a));
    shoal_runtime_destroy(rt);
}

/* A transaction from a thread: a call of type T_BLOCK, and its answer. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int rc, status;
    cb_who_t who;
    bool no_queue; /* the pool's queue cannot grow for this call (fail_alloc) */
} txn_caller_t;

static void *txn_call_main(void *arg)
{
    txn_caller_t *c = arg;
    shoal_answer_t a;
    if (c->no_queue)
        fa_arm(FA_ALIGNED, 8 * sizeof(shoal_co_taker_t), 1); /* the queue's first 8 entries */
    c->rc = shoal_runtime_checkout_call(c->rt, c->pool, T_BLOCK, NULL, 0, 30000, &a);
    fa_disarm();
    if (c->rc != SHOAL_OK)
        return NULL;
    c->status = a.status;
    if (a.status == SHOAL_OK && a.size == sizeof c->who)
        memcpy(&c->who, a.data, sizeof c->who);
    shoal_answer_release(&a);
    return NULL;
}

/* Four transactions to a pool of one member, each from a thread of its
 * own: the first in the member (held at the gate), then three queued. */
static void four_callers(shoal_runtime_t *rt, shoal_pid_t pool, txn_caller_t c[4], pthread_t th[4])
{
    for (int k = 0; k < 4; k++) {
        c[k] = (txn_caller_t){.rt = rt, .pool = pool, .rc = 99, .status = 99};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[k], NULL, txn_call_main, &c[k]), 0);
        if (k == 0)
            WAIT_UNTIL(atomic_load(&cb_blocked) == 1);
        else
            WAIT_UNTIL(cb_stats(rt, pool).queued == (uint32_t)k);
    }
}

/* A drain serves the transactions the pool accepted: one in its only
 * member (held at the gate), three queued; each is answered once, by the
 * member, and the drain ends after the last (F5: they were dropped at the
 * drain's start, their calls answered SHOAL_ENOPROC). */
static void test_drain_serves_queued_transactions(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    txn_caller_t c[4];
    pthread_t th[4];
    four_callers(rt, pool, c, th);
    drainer_t d = {rt, pool, 99};
    pthread_t dh;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&dh, NULL, drain_main, &d), 0);
    WAIT_UNTIL(cb_stats(rt, pool).state == SHOAL_POOL_DRAINING);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.queued, 3);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_ENOPROC); /* closed */
    for (int k = 1; k < 4; k++)
        CU_ASSERT_EQUAL(c[k].rc, 99); /* still waiting */
    CU_ASSERT_EQUAL(d.rc, 99);
    atomic_store(&cb_gate, 1);
    uint64_t uses = 0;
    for (int k = 0; k < 4; k++) {
        pthread_join(th[k], NULL);
        CU_ASSERT_EQUAL(c[k].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(c[k].status, SHOAL_OK);
        CU_ASSERT_TRUE(c[k].who.uses >= 1 && c[k].who.uses <= 4);
        uses |= UINT64_C(1) << c[k].who.uses; /* each use once: 1, 2, 3, 4 */
    }
    CU_ASSERT_EQUAL(uses, 0x1e);
    pthread_join(dh, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cb_blocked), 4);
    CU_ASSERT_TRUE(cb_ended(rt, c[0].who.pid));
    shoal_runtime_destroy(rt);
}

/* A drain whose last member fails: no member starts while the pool drains,
 * so the three transactions queued behind the failed one are dropped --
 * each caller answered SHOAL_ENOPROC at once, not left to its timeout --,
 * counted as dropped (the ledger balances) and logged in one line; the
 * drain then ends. */
static void test_drain_last_member_fails(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    txn_caller_t c[4];
    pthread_t th[4];
    four_callers(rt, pool, c, th);
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    drainer_t d = {rt, pool, 99};
    pthread_t dh;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&dh, NULL, drain_main, &d), 0);
    WAIT_UNTIL(cb_stats(rt, pool).state == SHOAL_POOL_DRAINING);
    int started = atomic_load(&cb_started);
    double t0 = shoal_test_now();
    atomic_store(&cb_gate, CB_GATE_FAIL);
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);
    pthread_join(dh, NULL);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 10.0); /* not the callers' 30 s */
    CU_ASSERT_EQUAL(c[0].rc, SHOAL_OK);
    CU_ASSERT_EQUAL(c[0].status, SHOAL_EFAILED);
    for (int k = 1; k < 4; k++) {
        CU_ASSERT_EQUAL(c[k].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(c[k].status, SHOAL_ENOPROC);
    }
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&cb_blocked), 1); /* nothing else ran */
    CU_ASSERT_EQUAL(atomic_load(&cb_started), started);
    shoal_pool_stats_t st; /* its final counts, from its record */
    shoal__pool_peek(p, &st);
    shoal__pool_unref(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 4);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 3);
    CU_ASSERT_EQUAL(st.messages_handled, 0);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(
        shoal_test_log_count("ended with 3 transactions not run (queued for a member): dropped"),
        1);
    shoal_runtime_destroy(rt);
}

/* An actor that takes from `pool` when told (TK_GO) and records the
 * answer to its take. */
enum { TK_GO = 20 };
static atomic_int tk_take_rc = 99, tk_answers, tk_status = 99;

static int tk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == TK_GO) {
        shoal_pid_t pool;
        memcpy(&pool, msg->data, sizeof pool);
        shoal_ref_t ref;
        atomic_store(&tk_take_rc, shoal_take(ctx, pool, 60000, &ref));
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_store(&tk_status, msg->status);
        atomic_fetch_add(&tk_answers, 1);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t taker_actor = {
    .name = "taker",
    .handle_message = tk_message,
};

/* Takes waiting when a drain begins -- an actor's and a thread's -- are
 * answered SHOAL_ESHUTDOWN at once (a member given to one would be held
 * for as long as its taker liked), counted take_shutdowns; the member in
 * use ends when it is returned, and the drain with it. */
static void test_drain_answers_waiting_takes(void)
{
    cb_reset();
    atomic_store(&tk_take_rc, 99);
    atomic_store(&tk_answers, 0);
    atomic_store(&tk_status, 99);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t a, actor;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &taker_actor, NULL, NULL, &actor), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, actor, TK_GO, &pool, sizeof pool), SHOAL_OK);
    /* Queued is published inside shoal_take, before it returns and the
     * actor stores its rc: wait for both. */
    WAIT_UNTIL(cb_stats(rt, pool).queued == 1 && atomic_load(&tk_take_rc) != 99);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).queued, 1);
    CU_ASSERT_EQUAL(atomic_load(&tk_take_rc), SHOAL_OK);
    cb_taker_t t = {.rt = rt, .pool = pool, .timeout_ms = 60000, .rc = 99, .keep = 1};
    pthread_t th, dh;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, cb_taker_main, &t), 0);
    WAIT_UNTIL(cb_stats(rt, pool).queued == 2);
    drainer_t d = {rt, pool, 99};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&dh, NULL, drain_main, &d), 0);
    WAIT_UNTIL(atomic_load(&tk_answers) == 1 && atomic_load(&t.done) == 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&tk_answers), 1);
    CU_ASSERT_EQUAL(atomic_load(&tk_status), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(t.rc, SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(t.got, SHOAL_PID_NONE);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.take_timeouts, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    shoal_answer_t ans;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, pool, CB_TMO, &ans), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(ans.data != NULL ? strstr(ans.data, "\"take_shutdowns\":2") : NULL);
    shoal_answer_release(&ans);
    /* A take after the drain began is refused as before. */
    shoal_pid_t b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 1000, &b), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(d.rc, 99);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(dh, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_TRUE(cb_ended(rt, a));
    shoal_runtime_destroy(rt);
}

static void test_bad_specs(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(1);
    shoal_pid_t p;
    shoal_pool_spec_t s = cb_spec_of(3, 2); /* init past max */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = cb_spec_of(1, 2);
    s.checkout.lease_ms = 0;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = cb_spec_of(1, 2);
    s.checkout.max_lifetime_ms = 100;
    s.checkout.max_lifetime_jitter_ms = 100;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = cb_spec_of(1, 2);
    s.idle_timeout_ms = 100; /* elastic settings are not a checkout pool's */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = cb_spec_of(1, 2);
    s.checkout.group = "";
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    /* A take from a pool that is not a checkout pool. */
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &cb_member;
    f.size = 1;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &f, &p), SHOAL_OK);
    shoal_pid_t m;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, p, 0, &m), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, 12345, 0, &m), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- edges a review found (each failed before its fix) -------------------------- */

/* max lowered below the members in use: they end as they come back. */
static void test_lower_max_in_use(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(0, 3);
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m[3];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    shoal_pool_checkout_update_t u = {0, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).pool_size == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.culled, 2);
    CU_ASSERT_TRUE(cb_alive(rt, m[2])); /* the last back is the one kept */
    shoal_runtime_destroy(rt);
}

/* max lowered below the free members: they end at once, each counted
 * culled (they ended uncounted: inspect's counts did not add up). */
static void test_lower_max_free(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(4, 4);
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    WAIT_UNTIL(cb_stats(rt, pool).free == 4);
    shoal_pool_checkout_update_t u = {1, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CB_TMO), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).pool_size == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.culled, 3);
    CU_ASSERT_EQUAL(st.killed_free, 0);
    CU_ASSERT_EQUAL(st.recycled, 0);
    shoal_runtime_destroy(rt);
}

/* A drain that begins with a caller's "gone" note (a transaction call that
 * timed out: co_call_gone) still in the pool's mailbox: the drain keeps the
 * free members for it as for a transaction, and once the note is read the
 * pool looks again, stops them and ends (it kept them for ever: the drain
 * timed out, the pool never ended). One dispatcher thread, held, so the
 * note and the drain wait together; the drain, a priority call, is read
 * first. */
static void test_drain_with_a_gone_note_queued(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    WAIT_UNTIL(cb_stats(rt, pool).free == 2);
    (void)cb_hog_hold(rt);
    shoal_ref_t ref = 12345; /* a call the pool no longer has: nothing to undo */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, SHOAL__CHECKOUT_CALL_GONE, &ref, sizeof ref),
                    SHOAL_OK);
    drainer_t d = {rt, pool, 99};
    pthread_t dh;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&dh, NULL, drain_main, &d), 0);
    cb_sleep_ms(50); /* the drain's call is in the pool's mailbox */
    atomic_store(&cb_hog_gate, 1);
    pthread_join(dh, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_TRUE(cb_ended(rt, pool));
    shoal_runtime_destroy(rt);
}

/* A transaction with no member free waits in the pool's queue, put there
 * from the sender's thread; only when the queue cannot grow (no memory)
 * does it go to the pool's own mailbox, as all did before. Those that
 * co_route counted out but that mailbox then refused (runtime.max_queued:
 * SHOAL_EBUSY) are no longer counted out: with init = max = 1 and
 * queue_max 1 (2 out at most), three refused so (the queue's first
 * allocation failed on this thread), a fourth waits in the queue --
 * max_queued, which bounds mailboxes, does not refuse it -- and with the
 * overload gone and the member given back it runs, then two transactions
 * are served (every one would be refused SHOAL_ENOMEMBERS for good had
 * the refused ones stayed out); each refusal is counted unhandled. */
static void test_refused_transactions_are_not_counted_out(void)
{
    enum { MAXQ = 64 };
    cb_reset();
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.max_queued = MAXQ;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 1;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, CB_TMO, &m), SHOAL_OK);
    /* An unbounded mailbox filled past max_queued (its actor held). */
    shoal_pid_t bl = cb_hog_hold(rt);
    int rc = SHOAL_OK;
    double end = shoal_test_now() + CB_WAIT_S;
    while (rc == SHOAL_OK && shoal_test_now() < end) {
        rc = shoal_runtime_send(rt, bl, 0, NULL, 0);
        if (rc == SHOAL_OK)
            shoal_test_nap();
    }
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_EBUSY); /* the runtime is over max_queued */
    uint64_t unhandled = cb_stats(rt, pool).messages_unhandled;
    unsigned long refused = fa_refused();
    fa_arm(FA_ALIGNED, 8 * sizeof(shoal_co_taker_t), 3); /* the queue's first 8 entries */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_EBUSY);
    fa_disarm();
    CU_ASSERT_EQUAL(fa_refused(), refused + 3);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).messages_unhandled, unhandled + 3);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).messages_forwarded, 0);
    uint64_t handled = cb_stats(rt, pool).messages_handled;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK); /* queued */
    CU_ASSERT_EQUAL(cb_stats(rt, pool).messages_forwarded, 1);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).queued, 1);
    atomic_store(&cb_hog_gate, 1); /* drained: below max_queued again (10 ms) */
    WAIT_UNTIL(shoal_runtime_send(rt, bl, 0, NULL, 0) == SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).messages_handled == handled + 1);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).messages_handled, handled + 1); /* the queued one ran */
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, CB_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, CB_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    shoal_runtime_destroy(rt);
}

/* A transaction that goes to the pool's own mailbox because the queue
 * cannot grow is served before one sent after it, which finds the queue
 * able to grow: the later one goes to the mailbox too, behind it (before,
 * it was queued at once, and the pool's actor placed the first behind it
 * when it read it). The pool's actor is held off (the hog holds the only
 * dispatcher thread) until both are sent; then the member, given back,
 * serves them: the first is its first use, the second its second. */
static void test_mailed_transactions_keep_their_order(void)
{
    cb_reset();
    atomic_store(&cb_gate, 1);                         /* T_BLOCK answers at once */
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1); /* no thread made up for the hog's */
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 4;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t m;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, CB_TMO, &m), SHOAL_OK);
    (void)cb_hog_hold(rt);
    /* Read without the pool's actor, which has no thread to run on. */
    shoal_pool_t *rec = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    shoal_pool_stats_t st;
    unsigned long refused = fa_refused();
    txn_caller_t c[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        c[k] = (txn_caller_t){.rt = rt, .pool = pool, .rc = 99, .status = 99, .no_queue = k == 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[k], NULL, txn_call_main, &c[k]), 0);
        WAIT_UNTIL((shoal__pool_peek(rec, &st), st.messages_forwarded == (uint64_t)k + 1));
    }
    shoal__pool_unref(rt, rec);
    CU_ASSERT_EQUAL(fa_refused(), refused + 1); /* the first could not be queued */
    CU_ASSERT_EQUAL(st.queued, 0);              /* both wait in the mailbox */
    CU_ASSERT_EQUAL(c[0].rc, 99);
    CU_ASSERT_EQUAL(c[1].rc, 99);
    atomic_store(&cb_hog_gate, 1);
    WAIT_UNTIL(cb_stats(rt, pool).queued == 2);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_OK), SHOAL_OK);
    for (int k = 0; k < 2; k++) {
        pthread_join(th[k], NULL);
        CU_ASSERT_EQUAL(c[k].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(c[k].status, SHOAL_OK);
        CU_ASSERT_EQUAL(c[k].who.pid, m);
        CU_ASSERT_EQUAL(c[k].who.uses, (uint64_t)k + 1); /* in the order they were sent */
    }
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"settings changed live", test_set_checkout_live},
        {"drain waits for members in use", test_drain_waits_for_returns},
        {"drain serves the transactions queued", test_drain_serves_queued_transactions},
        {"drain whose last member fails drops the queued", test_drain_last_member_fails},
        {"drain answers the takes waiting", test_drain_answers_waiting_takes},
        {"bad specs", test_bad_specs},
        {"max lowered below the members in use", test_lower_max_in_use},
        {"max lowered below the free members", test_lower_max_free},
        {"a drain with a caller's gone note queued", test_drain_with_a_gone_note_queued},
        {"refused transactions are not counted out", test_refused_transactions_are_not_counted_out},
        {"mailed transactions keep their order", test_mailed_transactions_keep_their_order},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_admin", cases);
}
