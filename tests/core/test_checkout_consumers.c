/* test_checkout_consumers.c - a checkout pool's members used by actors
 * (core/pool/checkout*.c, the consumer's side core/actor/held.c), with
 * exact counts: a consumer that ends normally, crashes, or ends with its
 * takes unanswered; members that crash in use (the holder hears an EXIT)
 * and free; transactions (a call or cast the pool runs on a member: ok,
 * failed, admission), and one whose caller gave up. Groups of pools:
 * test_checkout_groups.c.
 *
 * Handlers never call CUnit: they record into atomics (checkout_basic_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <string.h>

#include "checkout_basic_kit.h"
#include "fail_alloc.h"
#include "pool/checkout.h" /* shoal_co_taker_t */
#include "pool/pool.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* ---- from actors -------------------------------------------------------------- */

/* A consumer: on `go` it takes `n` members; when all have come it does
 * what `then` says: end normally, panic, or wait (and record EXITs). */
enum { THEN_EXIT = 0, THEN_PANIC = 1, THEN_HOLD = 2, THEN_EXIT_AT_ONCE = 3 };
typedef struct {
    shoal_pid_t pool;
    int n, then;
} consumer_args_t;
typedef struct {
    consumer_args_t a;
    int got;
    shoal_pid_t held[8];
} consumer_t;

static atomic_int granted;
static _Atomic shoal_pid_t last_held;
static atomic_int return_rc = 99;

enum { C_GO = 10, C_RETURN = 11 };

static int c_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    consumer_t *c = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_GO) {
        memcpy(&c->a, msg->data, sizeof c->a);
        for (int i = 0; i < c->a.n; i++) {
            shoal_ref_t ref;
            if (shoal_take(ctx, c->a.pool, 5000, &ref) != SHOAL_OK)
                return SHOAL_EFAILED;
        }
        if (c->a.then == THEN_EXIT_AT_ONCE)
            shoal_exit(ctx, SHOAL_OK);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_RETURN) {
        shoal_pid_t m;
        memcpy(&m, msg->data, sizeof m);
        atomic_store(&return_rc, shoal_return(ctx, m, SHOAL_RETURN_OK));
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&cb_exit_from, msg->from);
        atomic_fetch_add(&cb_exits_seen, 1);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY && msg->status == SHOAL_OK &&
        msg->type == SHOAL_CHECKOUT_MEMBER) {
        shoal_checkout_member_t g;
        memcpy(&g, msg->data, sizeof g);
        c->held[c->got++] = g.member;
        atomic_store(&last_held, g.member);
        atomic_fetch_add(&granted, 1);
        if (c->got == c->a.n && c->a.then == THEN_EXIT)
            shoal_exit(ctx, SHOAL_OK);
        if (c->got == c->a.n && c->a.then == THEN_PANIC)
            shoal_panic(ctx, "consumer crashes holding %d members", c->got);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t consumer = {
    .name = "consumer",
    .state_size = sizeof(consumer_t),
    .handle_message = c_message,
};

static shoal_pid_t consume(shoal_runtime_t *rt, shoal_pid_t pool, int n, int then)
{
    consumer_args_t a = {pool, n, then};
    shoal_pid_t c;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &consumer, NULL, NULL, &c), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, C_GO, &a, sizeof a), SHOAL_OK);
    return c;
}

/* Every take counted so far has been given back: OK, or destroyed with
 * its crashed holder. */
static bool all_settled(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_pool_stats_t st = cb_stats(rt, pool);
    return st.takes == st.returned_ok + st.killed_in_use;
}

static void test_consumer_ends(void)
{
    cb_reset();
    atomic_store(&granted, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    /* Normal end: both members come back as they are. */
    consume(rt, pool, 2, THEN_EXIT);
    WAIT_UNTIL(atomic_load(&granted) == 2 && cb_stats(rt, pool).free == 2);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 2);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 2);
    /* A crash: they are destroyed and replaced. */
    atomic_store(&granted, 0);
    consume(rt, pool, 2, THEN_PANIC);
    WAIT_UNTIL(atomic_load(&granted) == 2 && atomic_load(&cb_started) == 4 &&
               cb_stats(rt, pool).free == 2);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_in_use, 2);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 4);
    /* Ends with its takes unanswered: the grants come back by themselves. */
    /* (Served on the consumer's thread, its takes are granted before it
     * ends: the grants still queued in its mailbox go back OK; a grant
     * that found it gone would not be counted as a take at all.) */
    /* (The consumer starts after consume returns: the state before its
     * takes -- every take settled, both free -- is no sign it is done.) */
    uint64_t before = st.takes;
    consume(rt, pool, 2, THEN_EXIT_AT_ONCE);
    WAIT_UNTIL(cb_stats(rt, pool).takes == before + 2 && all_settled(rt, pool) &&
               cb_stats(rt, pool).free == 2);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, before + 2);
    CU_ASSERT_EQUAL(st.takes, st.returned_ok + st.killed_in_use);
    CU_ASSERT_EQUAL(st.killed_in_use, 2);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 4);
    shoal_runtime_destroy(rt);
}

static void test_member_crashes(void)
{
    cb_reset();
    atomic_store(&granted, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(2, 2);
    shoal_pid_t pool = cb_start(rt, &s);
    /* In use: its holder hears an EXIT from it, and no longer holds it. */
    shoal_pid_t c = consume(rt, pool, 1, THEN_HOLD);
    WAIT_UNTIL(atomic_load(&granted) == 1);
    shoal_pid_t m = atomic_load(&last_held);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, T_PANIC, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cb_exits_seen) == 1);
    CU_ASSERT_EQUAL(atomic_load(&cb_exit_from), m);
    WAIT_UNTIL(cb_stats(rt, pool).free == 2);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_in_use, 1);
    CU_ASSERT_EQUAL(st.killed_free, 0);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, C_RETURN, &m, sizeof m), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&return_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&return_rc), SHOAL_EINVAL);
    /* Free: counted killed_free, replaced. */
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, T_PANIC, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).killed_free == 1 && cb_stats(rt, pool).free == 2);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_free, 1);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 4);
    shoal_runtime_destroy(rt);
}

/* ---- transactions -------------------------------------------------------------- */

/* A transaction of `type` (T_WHO, T_EXIT) from this thread, answered OK:
 * who ran it. */
static cb_who_t txn_who(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type)
{
    shoal_answer_t ans;
    cb_who_t w = {SHOAL_PID_NONE, 0};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_checkout_call(rt, pool, type, NULL, 0, CB_TMO, &ans),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(ans.size, sizeof w);
    memcpy(&w, ans.data, sizeof w);
    shoal_answer_release(&ans);
    return w;
}

static void test_transactions(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 2;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_answer_t ans;
    cb_who_t w = txn_who(rt, pool, T_WHO);
    shoal_pid_t first = w.pid;
    CU_ASSERT_EQUAL(w.uses, 1);
    WAIT_UNTIL(cb_stats(rt, pool).free == 1);
    /* A call that fails: the member is returned FAIL and replaced. */
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_FAIL, NULL, 0, CB_TMO, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_EFAILED);
    shoal_answer_release(&ans);
    WAIT_UNTIL(cb_stats(rt, pool).free == 1 && atomic_load(&cb_started) == 2);
    CU_ASSERT_TRUE(cb_ended(rt, first));
    /* Admission: max (1) + queue_max (2) at once, the next refused. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).messages_handled == 2 && cb_stats(rt, pool).free == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    uint64_t handled0 = st.messages_handled;
    CU_ASSERT_EQUAL(handled0, 2); /* the first call and the cast; the failed call failed */
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cb_blocked) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_ENOMEMBERS);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    atomic_store(&cb_gate, 1);
    WAIT_UNTIL(cb_stats(rt, pool).messages_handled == handled0 + 3);
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_handled, handled0 + 3);
    CU_ASSERT_EQUAL(st.messages_forwarded, st.messages_handled + st.messages_failed);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* A member that ends by itself (shoal_exit) in a transaction -- a call,
 * answered first, and a cast -- ended in use: counted killed_in_use and
 * said once, not returned_ok and then killed_free as a member that
 * ended while free; and its transaction is settled, so the next is
 * admitted (queue_max 0: max + queue_max is 1 transaction out at once). */
static void test_transaction_member_exits(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 0;
    shoal_pid_t pool = cb_start(rt, &s);
    for (int k = 0; k < 3; k++) {
        WAIT_UNTIL(cb_stats(rt, pool).free == 1);
        cb_who_t w = txn_who(rt, pool, T_EXIT);
        CU_ASSERT_EQUAL(w.uses, 1);
        WAIT_UNTIL(cb_ended(rt, w.pid) && cb_stats(rt, pool).killed_in_use == (uint64_t)k + 1);
        char line[200];
        snprintf(line, sizeof line,
                 "member %u.%u ended while in use (it exited, not by the pool): counted "
                 "killed_in_use; a new one replaces it",
                 (unsigned)shoal__pid_slot(w.pid), (unsigned)shoal__pid_gen(w.pid));
        CU_ASSERT_EQUAL(shoal_test_log_count(line), 1);
    }
    WAIT_UNTIL(cb_stats(rt, pool).free == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_EXIT, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).killed_in_use == 4 && cb_stats(rt, pool).free == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_in_use, 4);
    CU_ASSERT_EQUAL(st.killed_free, 0);
    CU_ASSERT_EQUAL(st.returned_ok, 0);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    CU_ASSERT_EQUAL(st.messages_handled, 4);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 5);
    /* Nothing left out: the next transaction runs, on the fifth member. */
    CU_ASSERT_EQUAL(txn_who(rt, pool, T_WHO).uses, 1);
    WAIT_UNTIL(cb_stats(rt, pool).returned_ok == 1);
    shoal_runtime_destroy(rt);
}

/* ---- a transaction whose caller gave up ------------------------------------------- */

static atomic_int tx_kind = 0; /* the answer's SHOAL_MSG_* (0: none yet) */

static int tx_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_GO && msg->size == sizeof(shoal_pid_t)) {
        shoal_pid_t pool;
        memcpy(&pool, msg->data, sizeof pool);
        shoal_ref_t ref;
        int rc = shoal_checkout_call(ctx, pool, T_WHO, NULL, 0, 50, &ref);
        if (rc != SHOAL_OK)
            atomic_store(&tx_kind, -rc);
    } else if (msg->kind == SHOAL_MSG_TIMEOUT || msg->kind == SHOAL_MSG_REPLY) {
        atomic_store(&tx_kind, (int)msg->kind);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t tx_caller = {.name = "tx", .handle_message = tx_message};

/* Gives back `held`, the pool's one member, and has one transaction of
 * its own say that nobody used the member meanwhile (its first use). */
static void assert_unused(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pid_t held)
{
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, held, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, 5000, &a),
                          SHOAL_OK);
    cb_who_t w;
    CU_ASSERT_EQUAL_FATAL(a.size, sizeof w);
    memcpy(&w, a.data, sizeof w);
    CU_ASSERT_EQUAL(w.pid, held);
    CU_ASSERT_EQUAL(w.uses, 1);
    shoal_answer_release(&a);
}

/* poolboy's cancel_waiting: a transaction still queued when its caller's
 * call times out (50 ms; the pool's one member held meanwhile) never
 * runs -- from an actor and from a thread alike. Once the member is back
 * it is used by nobody (its uses stay 0), the pool counts the transaction
 * dropped and a take timeout, nothing is queued, and its ledger balances. */
static void test_transaction_caller_gone(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s), held, caller;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &held), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &tx_caller, NULL, NULL, &caller), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, caller, C_GO, &pool, sizeof pool), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tx_kind) != 0);
    CU_ASSERT_EQUAL(atomic_load(&tx_kind), SHOAL_MSG_TIMEOUT);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, 50, &a), SHOAL_ETIMEDOUT);
    WAIT_UNTIL(cb_stats(rt, pool).take_timeouts == 2);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.take_timeouts, 2);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.messages_dropped, 2);
    assert_unused(rt, pool, held);
    WAIT_UNTIL(cb_stats(rt, pool).messages_handled == 1); /* counted once its turn ends */
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 3);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.messages_forwarded,
                    st.messages_handled + st.messages_failed + st.messages_dropped);
    shoal_runtime_destroy(rt);
}

/* A transaction that finds no member free waits in the pool's queue, put
 * there from its sender's thread, and its caller giving up drops it from
 * there at once (test_checkout_txn_wait). When the queue cannot grow (its
 * first allocation fails here, on the sender's thread) the transaction
 * goes to the pool's own mailbox instead, and may still wait there
 * unread when its caller gives up (the pool's actor had no thread: one
 * dispatcher thread, held): it is in the pool's ledger from the moment it
 * was accepted, and the word that its caller gave up comes after it, so
 * it is dropped all the same. */
static void test_transaction_gone_before_read(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s), held;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &held), SHOAL_OK);
    (void)cb_hog_hold(rt);
    shoal_answer_t a;
    unsigned long refused = fa_refused();
    fa_arm(FA_ALIGNED, 8 * sizeof(shoal_co_taker_t), 1); /* the queue's first 8 entries */
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, 50, &a), SHOAL_ETIMEDOUT);
    fa_disarm();
    CU_ASSERT_EQUAL(fa_refused(), refused + 1);
    /* Accepted, unread: in the pool's ledger already (read from its
     * record: its actor has no thread to answer). */
    shoal_pool_t *rec = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    shoal_pool_stats_t peek;
    shoal__pool_peek(rec, &peek);
    shoal__pool_unref(rt, rec);
    CU_ASSERT_EQUAL(peek.messages_forwarded, 1);
    CU_ASSERT_EQUAL(peek.queue_depth, 1); /* in flight */
    atomic_store(&cb_hog_gate, 1); /* the pool's actor reads the transaction, then the word */
    WAIT_UNTIL(cb_stats(rt, pool).take_timeouts == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.take_timeouts, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    CU_ASSERT_EQUAL(st.queued, 0);
    assert_unused(rt, pool, held);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a consumer's end: normal, crash, unanswered takes", test_consumer_ends},
        {"members crashing in use and free", test_member_crashes},
        {"transactions: ok, failed, admission", test_transactions},
        {"a member that exits in a transaction ended in use", test_transaction_member_exits},
        {"a transaction whose caller gave up never runs", test_transaction_caller_gone},
        {"... nor one still unread when its caller gave up", test_transaction_gone_before_read},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_consumers", cases);
}
