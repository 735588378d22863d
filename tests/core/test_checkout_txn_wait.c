/* test_checkout_txn_wait.c - transactions that wait in a checkout pool's
 * queue, put there from the sender's thread (checkout_fast.c): a caller
 * that gives up has its transaction dropped at once, from its own thread,
 * with every dispatcher thread busy; callers that give up by the hundred
 * leave nothing queued, nothing refused and the ledger balanced; members
 * that keep being recycled serve every transaction; a transaction served
 * before the pool's actor reads the look it asked for starts no member; a
 * caller that gives up while the pool drains has its transaction dropped
 * all the same, and its note, left in the pool's mailbox when the pool
 * ends, is counted nowhere; a transaction that came past the pool's route
 * (a send that read the slot's kind stale) is admitted by the pool's
 * actor, so the admission count comes back to 0 and later ones are not
 * refused. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "actor/send.h" /* shoal__deliver_over */
#include "checkout_basic_kit.h"
#include "pool/checkout.h"   /* txn_out */
#include "pool/pool.h"       /* shoal__pool_find, shoal__pool_peek */
#include "runtime/runtime.h" /* shoal__tcache_get */

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

/* ---- a caller gone, with no thread for the pool's actor ------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint64_t tmo_ms; /* 0: 30 s */
    int rc, status;
} blocker_t;

static void *blocker_main(void *arg)
{
    blocker_t *b = arg;
    shoal_answer_t a;
    b->rc = shoal_runtime_checkout_call(b->rt, b->pool, T_BLOCK, NULL, 0,
                                        b->tmo_ms != 0 ? b->tmo_ms : 30000, &a);
    if (b->rc == SHOAL_OK) {
        b->status = a.status;
        shoal_answer_release(&a);
    }
    return NULL;
}

/* init = max = 1, two dispatcher threads: one runs the member, held in a
 * transaction; the other runs a hog. A transaction from this thread waits
 * in the queue; its 100 ms pass: SHOAL_ETIMEDOUT, and it is off the queue
 * at once -- queued 0, take_timeouts 1, dropped 1, read without asking the
 * pool's actor, which has no thread to run on (before, a note went to it
 * and the transaction stayed queued until it ran). Let go, the member has
 * handled the held one and the next only: the dropped one never ran. */
static void gone_caller_dropped_at_once(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(2); /* no thread made up for the held ones */
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 4;
    shoal_pid_t pool = cb_start(rt, &s);
    blocker_t b = {.rt = rt, .pool = pool};
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, blocker_main, &b), 0);
    WAIT_UNTIL(atomic_load(&cb_blocked) == 1);
    (void)cb_hog_hold(rt);
    shoal_pool_t *rec = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);

    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, 100, &a),
                    SHOAL_ETIMEDOUT);
    shoal_pool_stats_t st;
    shoal__pool_peek(rec, &st);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.take_timeouts, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    CU_ASSERT_EQUAL(st.in_use, 1);

    atomic_store(&cb_gate, 1);
    atomic_store(&cb_hog_gate, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(b.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(b.status, SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, CB_TMO, &a),
                          SHOAL_OK);
    cb_who_t w;
    CU_ASSERT_EQUAL_FATAL(a.size, sizeof w);
    memcpy(&w, a.data, sizeof w);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(w.uses, 2); /* the held one, this one */
    st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 3);
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    WAIT_UNTIL(cb_stats(rt, pool).messages_handled == 2);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).messages_handled, 2);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

/* init = max = 1, two dispatcher threads: this thread's transaction holds
 * the member and gives up after 100 ms while it runs, so its caller's note
 * goes to the pool's own mailbox -- where the pool's actor, with a hog on
 * the other thread, cannot read it. The pool is stopped then, the note
 * still there: it is no message of the ledger's, so the ledger reads the
 * one transaction, forwarded and handled, and nothing dropped (before the
 * fix the note was counted dropped: forwarded 1, handled 1, dropped 1). */
static void a_gone_note_left_at_the_end_is_counted_nowhere(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(2); /* no thread made up for the held ones */
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pool_t *rec = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    blocker_t b = {.rt = rt, .pool = pool, .tmo_ms = 100};
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, blocker_main, &b), 0);
    WAIT_UNTIL(atomic_load(&cb_blocked) == 1);
    (void)cb_hog_hold(rt); /* the pool's actor has no thread now */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(b.rc, SHOAL_ETIMEDOUT); /* its note waits in the pool's mailbox */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pool), SHOAL_OK);
    atomic_store(&cb_gate, 1);
    atomic_store(&cb_hog_gate, 1);
    CU_ASSERT_TRUE(cb_ended(rt, pool));
    shoal_pool_stats_t st;
    WAIT_UNTIL((shoal__pool_peek(rec, &st), st.messages_handled == 1));
    shoal__pool_peek(rec, &st);
    CU_ASSERT_EQUAL(st.messages_forwarded, 1);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, 0);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

/* ---- a look asked for a transaction served meanwhile ------------------------ */

/* An actor that, told GO (the pool's pid), takes a member; granted it,
 * sends the pool a transaction (which waits: the member is its) and gives
 * the member back (which serves that transaction), all in one turn. */
enum { SP_GO = 20 };
static atomic_int sp_take_rc = 99, sp_txn_rc = 99, sp_return_rc = 99;
static shoal_pid_t sp_pool; /* from GO */

static int sp_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == SP_GO && msg->size == sizeof sp_pool) {
        memcpy(&sp_pool, msg->data, sizeof sp_pool);
        shoal_ref_t ref;
        atomic_store(&sp_take_rc, shoal_take(ctx, sp_pool, CB_TMO, &ref));
    } else if (msg->kind == SHOAL_MSG_REPLY && msg->status == SHOAL_OK &&
               msg->type == SHOAL_CHECKOUT_MEMBER) {
        shoal_checkout_member_t g;
        memcpy(&g, msg->data, sizeof g);
        atomic_store(&sp_txn_rc, shoal_send(ctx, sp_pool, T_WHO, NULL, 0));
        atomic_store(&sp_return_rc, shoal_return(ctx, g.member, SHOAL_RETURN_OK));
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t sp_holder = {.name = "holder", .handle_message = sp_message};

/* init 1, max 2, one dispatcher thread. The transaction finds its member
 * held, waits in the queue and asks the pool's actor for a look (a member
 * may be started for it); the return in the same turn serves it, before
 * the actor reads the look. The look then starts nothing: nobody waits
 * (before, it started a spare member, as for a take refused, and the pool
 * grew to 2 for a transaction that needed none). */
static void a_served_transaction_starts_no_spare(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    shoal_pool_spec_t s = cb_spec_of(1, 2);
    s.checkout.queue_max = 4;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pid_t h;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sp_holder, NULL, NULL, &h), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, SP_GO, &pool, sizeof pool), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&sp_return_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&sp_take_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&sp_txn_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&sp_return_rc), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).messages_handled == 1);
    /* A thread's take goes through the pool's actor, after the look. */
    shoal_pid_t m;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, CB_TMO, &m), SHOAL_OK);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 0);
    CU_ASSERT_EQUAL(st.starting, 0);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- churn ---------------------------------------------------------------- */

enum { Q_SLOW = 5, Q_SLOW2 = 6 };

static int q_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}

static int q_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    cb_sleep_ms(msg->type == Q_SLOW2 ? 2 : msg->type == Q_SLOW ? 1 : 0);
    shoal_pid_t me = shoal_self(ctx);
    return shoal_reply_set(reply, msg->type, &me, sizeof me);
}

static const shoal_behaviour_t q_member = {
    .name = "q",
    .handle_message = q_message,
    .handle_call = q_call,
};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int n;
    uint64_t tmo;
    uint32_t type;
    int ok, timedout, other;
} caller_t;

static void *caller_main(void *arg)
{
    caller_t *c = arg;
    for (int i = 0; i < c->n; i++) {
        shoal_answer_t a;
        int rc = shoal_runtime_checkout_call(c->rt, c->pool, c->type, NULL, 0, c->tmo, &a);
        if (rc == SHOAL_OK && a.status == SHOAL_OK)
            c->ok++;
        else if (rc == SHOAL_ETIMEDOUT)
            c->timedout++;
        else
            c->other++;
        if (rc == SHOAL_OK)
            shoal_answer_release(&a);
    }
    return NULL;
}

/* Runs n threads of `per` transactions each; sums into *sum. */
static void callers(shoal_runtime_t *rt, shoal_pid_t pool, int n, int per, uint64_t tmo,
                    uint32_t type, caller_t *sum)
{
    caller_t c[8];
    pthread_t th[8];
    *sum = (caller_t){0};
    for (int i = 0; i < n; i++) {
        c[i] = (caller_t){.rt = rt, .pool = pool, .n = per, .tmo = tmo, .type = type};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, caller_main, &c[i]), 0);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        sum->ok += c[i].ok;
        sum->timedout += c[i].timedout;
        sum->other += c[i].other;
    }
}

/* A pool of q_member, init 0, at most max, members living lifetime_ms
 * (+/- 3 ms; 0: for ever), 64 takers waiting at most, on a runtime of two
 * dispatcher threads (*rt). */
static shoal_pid_t q_pool(shoal_runtime_t **rt, uint32_t max, uint64_t lifetime_ms)
{
    cb_reset();
    *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(0, max);
    s.worker = &q_member;
    s.checkout.max_lifetime_ms = lifetime_ms;
    s.checkout.max_lifetime_jitter_ms = lifetime_ms != 0 ? 3 : 0;
    s.checkout.queue_max = 64;
    return cb_start(*rt, &s);
}

/* Once quiet: nothing queued or in use, and every transaction forwarded
 * was handled, failed or dropped. */
static shoal_pool_stats_t settled(shoal_runtime_t *rt, shoal_pid_t pool)
{
    WAIT_UNTIL(cb_stats(rt, pool).queued == 0 && cb_stats(rt, pool).in_use == 0 &&
               cb_stats(rt, pool).messages_forwarded == cb_stats(rt, pool).messages_handled +
                                                            cb_stats(rt, pool).messages_failed +
                                                            cb_stats(rt, pool).messages_dropped);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded,
                    st.messages_handled + st.messages_failed + st.messages_dropped);
    return st;
}

/* 4 threads x 400 transactions, each given 3 ms, on a pool of at most 2
 * members that take 2 ms each (init 0, queue_max 64): most callers give
 * up while their transaction waits. At most 4 are live at once, far below
 * max + queue_max, so none is refused; every one given up while queued is
 * dropped unrun (take_timeouts = dropped); the pool still serves and
 * drains. Before gone callers were dropped on their own thread, their
 * notes waited behind the members' turns while the members ran them, and
 * the transactions they kept out filled max + queue_max: ~680 of 1600
 * refused SHOAL_ENOMEMBERS. */
static void timeouts_churn(void)
{
    shoal_runtime_t *rt;
    shoal_pid_t pool = q_pool(&rt, 2, 0);
    caller_t sum;
    callers(rt, pool, 4, 400, 3, Q_SLOW2, &sum);
    printf("\n    %d answered, %d timed out, %d refused ", sum.ok, sum.timedout, sum.other);
    shoal_pool_stats_t st = settled(rt, pool);
    CU_ASSERT_EQUAL(sum.other, 0);
    CU_ASSERT_EQUAL(sum.ok + sum.timedout, 1600);
    CU_ASSERT(st.take_timeouts > 0);
    CU_ASSERT_EQUAL(st.take_timeouts, st.messages_dropped);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, CB_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, CB_TMO), SHOAL_OK);
    CU_ASSERT_TRUE(cb_ended(rt, pool));
    shoal_runtime_destroy(rt);
}

/* init 0, max 1, members living 10 +- 3 ms: 3 threads x 200 transactions
 * of 1 ms each mostly find none free and wait in the queue while members
 * are recycled under them; the pool's actor starts each replacement
 * (asked from the senders' threads). Every one is served. */
static void lifetimes_churn(void)
{
    shoal_runtime_t *rt;
    shoal_pid_t pool = q_pool(&rt, 1, 10);
    caller_t sum;
    callers(rt, pool, 3, 200, 5000, Q_SLOW, &sum);
    CU_ASSERT_EQUAL(sum.ok, 600);
    shoal_pool_stats_t st = settled(rt, pool);
    CU_ASSERT(st.recycled > 0);
    CU_ASSERT_EQUAL(st.messages_handled, 600);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    printf("\n    600 served, %llu members recycled ", (unsigned long long)st.recycled);
    shoal_runtime_destroy(rt);
}

/* ---- a caller gone while the pool drains ------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint64_t timeout_ms;
    int rc;
    atomic_int done;
} waiter_t;

static void *drainer_main(void *arg)
{
    waiter_t *w = arg;
    w->rc = shoal_pool_drain(w->rt, w->pool, w->timeout_ms);
    atomic_store(&w->done, 1);
    return NULL;
}

static void *who_main(void *arg)
{
    waiter_t *w = arg;
    shoal_answer_t a;
    w->rc = shoal_runtime_checkout_call(w->rt, w->pool, T_WHO, NULL, 0, w->timeout_ms, &a);
    if (w->rc == SHOAL_OK)
        shoal_answer_release(&a);
    atomic_store(&w->done, 1);
    return NULL;
}

/* init = max = 1: the member is held in a transaction, a second waits in
 * the queue, then the pool begins to drain (it serves what is queued),
 * then the second's caller gives up: its transaction is dropped at once,
 * as while the pool runs -- never run. The drain ends once the held one
 * is done: the member handled one. (Before the fix a caller that gave up
 * during the drain sent its note to the pool's actor, whose mailbox the
 * drain had closed: the note was lost, and the transaction ran for a
 * caller that had its TIMEOUT.) */
static void gone_caller_dropped_while_draining(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.queue_max = 4;
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pool_t *rec = shoal__pool_find(rt, pool); /* its counts after its end */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    blocker_t b = {.rt = rt, .pool = pool};
    pthread_t tb, tw, td;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tb, NULL, blocker_main, &b), 0);
    WAIT_UNTIL(atomic_load(&cb_blocked) == 1);
    waiter_t w = {.rt = rt, .pool = pool, .timeout_ms = 2000};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tw, NULL, who_main, &w), 0);
    WAIT_UNTIL(cb_stats(rt, pool).queued == 1);
    waiter_t d = {.rt = rt, .pool = pool, .timeout_ms = CB_TMO};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&td, NULL, drainer_main, &d), 0);
    WAIT_UNTIL(cb_stats(rt, pool).state == SHOAL_POOL_DRAINING || atomic_load(&w.done));
    CU_ASSERT_FALSE_FATAL(atomic_load(&w.done)); /* the drain began first */
    pthread_join(tw, NULL);
    CU_ASSERT_EQUAL(w.rc, SHOAL_ETIMEDOUT);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.take_timeouts, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    atomic_store(&cb_gate, 1);
    pthread_join(tb, NULL);
    CU_ASSERT_EQUAL(b.rc, SHOAL_OK);
    pthread_join(td, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    shoal__pool_peek(rec, &st);
    CU_ASSERT_EQUAL(st.messages_handled, 1); /* the held one only */
    CU_ASSERT_EQUAL(st.messages_dropped, 1);
    CU_ASSERT_EQUAL(atomic_load(&cb_blocked), 1);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

/* ---- a transaction that came past the route -------------------------------- */

/* A send that read the slot's kind stale (send.c: the kind is read before
 * the generation) reserves the pool's own mailbox as a plain actor's, as
 * shoal__deliver_over does here: the transaction was never admitted on
 * txn_out. Three of them, then a transaction as any sender makes it: all
 * four run, txn_out is 0 after each, the ledger counts four forwarded and
 * four handled. (Before the fix the pool's actor took each as admitted,
 * so its settlement took one off txn_out that was never put on: txn_out
 * wrapped, and every transaction after it was refused SHOAL_ENOMEMBERS.) */
static void a_transaction_past_the_route_is_admitted(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = cb_start(rt, &s);
    shoal_pool_t *rec = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    for (uint64_t i = 1; i <= 3; i++) {
        shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, T_WHO, NULL, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL_FATAL(shoal__deliver_over(rt, tc, pool, e), SHOAL_OK);
        WAIT_UNTIL(cb_stats(rt, pool).messages_handled == i);
        CU_ASSERT_EQUAL(cb_stats(rt, pool).messages_handled, i);
        WAIT_UNTIL(atomic_load(&rec->co->txn_out) == 0);
        CU_ASSERT_EQUAL(atomic_load(&rec->co->txn_out), 0);
    }
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, CB_TMO, &a),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.size, sizeof(cb_who_t));
    cb_who_t who;
    memcpy(&who, a.data, sizeof who);
    CU_ASSERT_EQUAL(who.uses, 4); /* the one member ran all four */
    shoal_answer_release(&a);
    WAIT_UNTIL(atomic_load(&rec->co->txn_out) == 0);
    CU_ASSERT_EQUAL(atomic_load(&rec->co->txn_out), 0);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_forwarded, 4);
    CU_ASSERT_EQUAL(st.messages_handled, 4);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a caller gone: dropped at once, from its thread", gone_caller_dropped_at_once},
        {"a caller's note left at the pool's end is counted nowhere",
         a_gone_note_left_at_the_end_is_counted_nowhere},
        {"a caller gone while the pool drains: dropped, never run",
         gone_caller_dropped_while_draining},
        {"callers giving up by the hundred", timeouts_churn},
        {"members recycled under waiting transactions", lifetimes_churn},
        {"a transaction served before its look starts no spare",
         a_served_transaction_starts_no_spare},
        {"a transaction that came past the route is admitted",
         a_transaction_past_the_route_is_admitted},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_txn_wait", cases);
}
