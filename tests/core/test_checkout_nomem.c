/* test_checkout_nomem.c - a checkout pool's give-backs when memory runs
 * out (support/fail_alloc.h): the thread that gives a member back has no
 * envelope in its cache, none in the runtime's depot, and can allocate no
 * slab. The give-back takes one of the runtime's reserve (actor/
 * envelope.c: THE RESERVE) and reaches the pool:
 *   - a member whose transaction failed: returned FAIL, destroyed and
 *     replaced, and the transaction settled (txn_out 0: the next one is
 *     admitted and runs);
 *   - a member whose transaction ended OK past its max_lifetime (its
 *     return is the pool's actor's, to replace it): recycled, none in use;
 *   - a member an actor took, returned FAIL by that actor.
 * Before the reserve each give-back was lost: the seat stayed in use for
 * good (a drain never ended), or the transaction stayed on txn_out (every
 * later one refused SHOAL_ENOMEMBERS), and nothing said so. With the
 * reserve used up too, it is still lost -- and said, once, as an error.
 *
 * One dispatcher thread: a sink that cannot run while a handler holds it
 * keeps every envelope the handler sends it. Handlers never call CUnit:
 * they record into atomics; the test thread asserts after synchronising
 * on them.
 */
#include <stdio.h>

#include "checkout_basic_kit.h"
#include "fail_alloc.h"
#include "actor/ctx.h"     /* a handler's rt and tc */
#include "actor/send.h"    /* shoal__send_reserved */
#include "pool/checkout.h" /* txn_out */
#include "pool/pool.h"     /* shoal__pool_find */

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)
#define SENDS_MAX 1000000

enum {
    T_FAIL_BARE = 7,
    T_OK_BARE = 8,
    T_PLAIN = 9,
    T_TAKE = 10,
    T_RETURN_BARE = 11,
    T_FAIL_DRY = 12
}; /* past cb's */

static _Atomic shoal_pid_t sink, pool_pid, nm_taken;
static atomic_int sent_before, plain_handled, nm_take_rc, reserve_taken;

/* Takes every envelope this thread's cache and the depot hold (casts to the
 * sink, which cannot run meanwhile) with every new slab refused, then
 * leaves the next slab refused: the give-back's. sent_before: the casts
 * that took them (0: nothing was exhausted, and the case proves nothing). */
static void exhaust(shoal_ctx_t *ctx)
{
    fa_arm(FA_ALIGNED, 0, SENDS_MAX);
    int n = 0;
    while (n < SENDS_MAX && shoal_send(ctx, atomic_load(&sink), 1, NULL, 0) == SHOAL_OK)
        n++;
    atomic_store(&sent_before, n);
    fa_arm(FA_ALIGNED, 0, 1);
}

static int member_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    switch (msg->type) {
    case T_PLAIN:
        atomic_fetch_add(&plain_handled, 1);
        return SHOAL_OK;
    case T_FAIL_BARE:
        exhaust(ctx);
        return SHOAL_EFAILED; /* settled failed: a RETURN FAIL to the pool */
    case T_FAIL_DRY: {        /* no slab, and the reserve emptied too */
        exhaust(ctx);
        fa_arm(FA_ALIGNED, 0, SENDS_MAX); /* the sink's first turn disarms it */
        int n = 0;
        while (n < SENDS_MAX && shoal__send_reserved(ctx->rt, ctx->tc, ctx->self,
                                                     atomic_load(&sink), 1, NULL, 0) == SHOAL_OK)
            n++;
        atomic_store(&reserve_taken, n);
        return SHOAL_EFAILED;
    }
    case T_OK_BARE:
        cb_sleep_ms(150); /* past its max_lifetime: its return is the pool actor's */
        exhaust(ctx);
        return SHOAL_OK;
    default:
        return SHOAL_OK;
    }
}

static const shoal_behaviour_t member = {.name = "conn", .handle_message = member_message};

static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    fa_disarm(); /* the dispatcher thread's rule: memory is back */
    return SHOAL_OK;
}

static const shoal_behaviour_t sink_b = {.name = "sink", .handle_message = sink_message};

/* An actor that takes a member (T_TAKE) and gives it back FAIL with no
 * memory to spare (T_RETURN_BARE). */
static int consumer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == T_TAKE) {
        shoal_pid_t m = SHOAL_PID_NONE;
        atomic_store(&nm_take_rc, shoal_try_take(ctx, atomic_load(&pool_pid), &m));
        atomic_store(&nm_taken, m);
    } else if (msg->type == T_RETURN_BARE) {
        exhaust(ctx);
        (void)shoal_return(ctx, atomic_load(&nm_taken), SHOAL_RETURN_FAIL);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t consumer = {.name = "consumer", .handle_message = consumer_message};

/* One dispatcher thread, a sink, and a checkout pool of one member at
 * most, no queue (txn_limit 1: one transaction left on txn_out refuses
 * every later one); lifetime_ms 0: none. */
static shoal_runtime_t *start(uint64_t lifetime_ms, shoal_pid_t *pool, shoal_pool_t **rec)
{
    atomic_store(&sent_before, 0);
    atomic_store(&plain_handled, 0);
    atomic_store(&reserve_taken, 0);
    shoal_runtime_opts_t o; /* as shoal_test_runtime_fixed(1), its log kept */
    shoal_runtime_opts_init(&o);
    o.threads = 1;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_ERROR;
    o.max_extra_threads = SHOAL_EXTRA_THREADS_NONE;
    shoal_runtime_t *rt = shoal_test_runtime_logged_opts(&o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sink_b, NULL, NULL, &s), SHOAL_OK);
    atomic_store(&sink, s);
    shoal_pool_spec_t sp = cb_spec_of(1, 1);
    sp.checkout.queue_max = 0;
    sp.worker = &member;
    sp.checkout.max_lifetime_ms = lifetime_ms;
    *pool = cb_start(rt, &sp);
    atomic_store(&pool_pid, *pool);
    *rec = shoal__pool_find(rt, *pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*rec);
    return rt;
}

/* Given back FAIL: destroyed and replaced, none in use. Its stats. */
static shoal_pool_stats_t replaced(shoal_runtime_t *rt, shoal_pid_t pool)
{
    WAIT_UNTIL(cb_stats(rt, pool).returned_fail == 1 && cb_stats(rt, pool).free == 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 1); /* its replacement */
    return st;
}

/* The transaction is settled and the pool serves the next one; then the
 * case ends. */
static void serves_on(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pool_t *rec)
{
    CU_ASSERT(atomic_load(&sent_before) > 0); /* memory was used up */
    WAIT_UNTIL(atomic_load(&rec->co->txn_out) == 0);
    CU_ASSERT_EQUAL(atomic_load(&rec->co->txn_out), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_PLAIN, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&plain_handled) == 1);
    CU_ASSERT_EQUAL(atomic_load(&plain_handled), 1);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

static void a_failed_transaction_gives_back(void)
{
    shoal_pid_t pool;
    shoal_pool_t *rec;
    shoal_runtime_t *rt = start(0, &pool, &rec);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool, T_FAIL_BARE, NULL, 0), SHOAL_OK);
    shoal_pool_stats_t st = replaced(rt, pool);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    printf("\n    %d sends used up the envelopes ", atomic_load(&sent_before));
    serves_on(rt, pool, rec);
}

static void an_expired_member_gives_back(void)
{
    shoal_pid_t pool;
    shoal_pool_t *rec;
    shoal_runtime_t *rt = start(50, &pool, &rec);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool, T_OK_BARE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).recycled >= 1 && cb_stats(rt, pool).in_use == 0);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT(st.recycled >= 1); /* and the members after it, each past 50 ms */
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    serves_on(rt, pool, rec);
}

static void an_actor_gives_back(void)
{
    shoal_pid_t pool, c;
    shoal_pool_t *rec;
    shoal_runtime_t *rt = start(0, &pool, &rec);
    atomic_store(&nm_take_rc, -1);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &consumer, NULL, NULL, &c), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, c, T_TAKE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&nm_take_rc) != -1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&nm_take_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).in_use, 1);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, c, T_RETURN_BARE, NULL, 0), SHOAL_OK);
    (void)replaced(rt, pool);
    CU_ASSERT(cb_ended(rt, atomic_load(&nm_taken))); /* destroyed: its state is unknown */
    serves_on(rt, pool, rec);
}

/* The reserve used up too (64 envelopes taken from it after the cache, the
 * depot and every new slab): the give-back is lost -- its seat stays in
 * use and its transaction on txn_out, so the next is refused at once --
 * and the log says so, once. Nothing else fails. */
static void the_reserve_used_up_too(void)
{
    shoal_pid_t pool;
    shoal_pool_t *rec;
    shoal_runtime_t *rt = start(0, &pool, &rec);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pool, T_FAIL_DRY, NULL, 0), SHOAL_OK);
    const char *said = "a member could not give itself back after a transaction: out of memory "
                       "(the reserve of envelopes used up too); the pool holds it as in use";
    WAIT_UNTIL(shoal_test_log_count(said) == 1 && cb_stats(rt, pool).messages_failed == 1);
    CU_ASSERT(atomic_load(&sent_before) > 0);
    CU_ASSERT_EQUAL(atomic_load(&reserve_taken), SHOAL_ENV_RESERVE);
    CU_ASSERT_EQUAL(shoal_test_log_count(said), 1);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(st.returned_ok, 0);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 0);
    CU_ASSERT_EQUAL(atomic_load(&rec->co->txn_out), 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_PLAIN, NULL, 0), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).error_no_members, 1);
    CU_ASSERT_EQUAL(atomic_load(&plain_handled), 0);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a failed transaction's member gives itself back", a_failed_transaction_gives_back},
        {"a member past its lifetime gives itself back", an_expired_member_gives_back},
        {"an actor gives a member back", an_actor_gives_back},
        {"the reserve used up too: said, the seat held", the_reserve_used_up_too},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_nomem", cases);
}
