/* test_pull_faults.c - a pull pool's members failing (core/pool/pull.c): a
 * member that dies loses only what it held; with redeliver, failed items
 * are given again, each handled once, and those that always fail reach the
 * dead letter with an exact, balanced ledger -- with redeliver 0 at once,
 * and in the pools above a nested pull pool too; a member woken for an
 * item that ends before it takes it, unreplaced, passes its wake-up on.
 *
 * Handlers never call CUnit: they record into atomics (pull_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs items
 * to stay queued, members block on a gate the test opens.
 */
#include <string.h>

#include "actor/actor.h" /* SHOAL_SCHED_SCHEDULED */
#include "pool/pool.h"
#include "pool/pull.h"
#include "pull_kit.h"
#include "runtime/runtime.h" /* shoal__actor_at */

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PU_WAIT_S)

/* ---- faults ------------------------------------------------------------------------ */

/* A member that panics loses the one item it held (failed); the buffer's
 * other items are handled by the rest and by its replacement. */
static void a_dying_member_loses_only_what_it_held(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 2, 1, 300);
    shoal_pid_t p = pu_spawn(rt, &s);
    for (uint32_t i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(pu_job(rt, p, i, i % 50 == 7 ? A_PANIC : A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_done) == 196);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 196);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_failed == 4 &&
               shoal_test_pool_stats(rt, p).messages_handled == 196);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 200);
    CU_ASSERT_EQUAL(st.messages_handled, 196);
    CU_ASSERT_EQUAL(st.messages_failed, 4);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.worker_restarts, 4);
    for (uint32_t i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(atomic_load(&pu_seen[i]), 1);
    shoal_runtime_destroy(rt);
}

/* redeliver 2: jobs that fail or panic on their first attempt are handled
 * successfully on the second, each exactly once; jobs that always fail go
 * to the dead letter after 1 + 2 attempts, with their sender, type and
 * payload. The counts are exact and the ledger balances:
 * received = handled + failed + dead-lettered. */
static _Atomic uint64_t dl_seen;
static atomic_int dl_bad;
static int dl_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    pu_job_t j;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_JOB || msg->size != sizeof j ||
        msg->from != SHOAL_PID_NONE || msg->ref != 0) {
        atomic_fetch_add(&dl_bad, 1);
        return 0;
    }
    memcpy(&j, msg->data, sizeof j);
    if (!(j.act & A_FAIL) || (j.act & A_FIRST))
        atomic_fetch_add(&dl_bad, 1);
    atomic_fetch_add(&dl_seen, 1);
    return 0;
}
static const shoal_behaviour_t dead_letters = {.name = "dl", .handle_message = dl_message};

/* A runtime with a dead letter actor (*dl), the counts reset. */
static shoal_runtime_t *dl_begin(shoal_pid_t *dl)
{
    pu_reset();
    atomic_store(&dl_seen, 0);
    atomic_store(&dl_bad, 0);
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &dead_letters, NULL, NULL, dl), SHOAL_OK);
    return rt;
}

static void failed_items_are_given_again(void)
{
    shoal_pid_t dl;
    shoal_runtime_t *rt = dl_begin(&dl);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 3, 2, 64);
    s.redeliver = 2;
    s.dead_letter = dl;
    s.restart.max = 1000; /* every failure ends its worker (a handler's error is its end) */
    s.restart.within_ms = 60000;
    shoal_pid_t p = pu_spawn(rt, &s);
    uint32_t fail_once = 0, panic_once = 0, always = 0;
    for (uint32_t i = 0; i < 600; i++) {
        uint32_t act = A_OK;
        if (i % 10 == 1)
            act = A_FAIL | A_FIRST, fail_once++;
        else if (i % 50 == 3)
            act = A_PANIC | A_FIRST, panic_once++;
        else if (i % 100 == 7)
            act = A_FAIL, always++;
        int rc;
        double end = shoal_test_now() + PU_WAIT_S;
        while ((rc = pu_job(rt, p, i, act, 0)) == SHOAL_EBUSY && shoal_test_now() < end)
            shoal_test_nap();
        CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    }
    WAIT_UNTIL(atomic_load(&dl_seen) == always &&
               shoal_test_pool_stats(rt, p).messages_handled == 600 - always);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 600);
    CU_ASSERT_EQUAL(st.messages_handled, 600 - always);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, always);
    CU_ASSERT_EQUAL(st.redelivered, fail_once + panic_once + 2 * always);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(atomic_load(&dl_seen), always);
    CU_ASSERT_EQUAL(atomic_load(&dl_bad), 0);
    CU_ASSERT_EQUAL(st.worker_restarts, fail_once + panic_once + 3 * always);
    uint32_t once = 0, twice = 0, thrice = 0;
    for (uint32_t i = 0; i < 600; i++) {
        int n = atomic_load(&pu_seen[i]);
        once += n == 1;
        twice += n == 2;
        thrice += n == 3;
    }
    CU_ASSERT_EQUAL(once, 600 - fail_once - panic_once - always);
    CU_ASSERT_EQUAL(twice, fail_once + panic_once); /* never again after a success */
    CU_ASSERT_EQUAL(thrice, always);
    /* Without redeliver: a failure is final (at most once). */
    pu_reset();
    pu_pull_spec(&s, 2, 1, 64);
    shoal_pid_t q = pu_spawn(rt, &s);
    for (uint32_t i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(pu_job(rt, q, i, i % 4 == 0 ? A_FAIL : A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, q).messages_failed == 5 &&
               shoal_test_pool_stats(rt, q).messages_handled == 15);
    st = shoal_test_pool_stats(rt, q);
    CU_ASSERT_EQUAL(st.messages_failed, 5);
    CU_ASSERT_EQUAL(st.redelivered, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, 0);
    shoal_runtime_destroy(rt);
}

/* redeliver 0 with a dead letter: a failed item goes to the dead letter at
 * once (it was counted failed and lost: only a pool with redeliver kept
 * its payload). */
static void a_dead_letter_without_redeliver(void)
{
    shoal_pid_t dl;
    shoal_runtime_t *rt = dl_begin(&dl);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 2, 1, 64);
    s.dead_letter = dl;
    s.restart.max = 1000;
    s.restart.within_ms = 60000;
    shoal_pid_t p = pu_spawn(rt, &s);
    for (uint32_t i = 0; i < 40; i++)
        CU_ASSERT_EQUAL(pu_job(rt, p, i, i % 8 == 0 ? A_FAIL : A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&dl_seen) == 5 && shoal_test_pool_stats(rt, p).messages_handled == 35);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 40);
    CU_ASSERT_EQUAL(st.messages_handled, 35);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, 5);
    CU_ASSERT_EQUAL(st.redelivered, 0);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(atomic_load(&dl_seen), 5);
    CU_ASSERT_EQUAL(atomic_load(&dl_bad), 0);
    for (uint32_t i = 0; i < 40; i++)
        CU_ASSERT_EQUAL(atomic_load(&pu_seen[i]), 1); /* once each: never given again */
    shoal_runtime_destroy(rt);
}

/* A forward pool whose worker is a pull pool with a dead letter: what the
 * pull pool passes on is settled in the pool above it too (its ledger was
 * left with 3 in flight for good). */
static void dead_letters_settle_in_the_pool_above(void)
{
    shoal_pid_t dl;
    shoal_runtime_t *rt = dl_begin(&dl);
    shoal_pool_spec_t inner, outer;
    pu_pull_spec(&inner, 1, 1, 16);
    inner.redeliver = 1;
    inner.dead_letter = dl;
    inner.restart.max = 1000;
    inner.restart.within_ms = 60000;
    shoal_pool_spec_init(&outer);
    outer.name = "outer";
    outer.worker_pool = &inner;
    outer.size = 1;
    outer.mailbox = 64;
    shoal_pid_t p = pu_spawn(rt, &outer);
    for (uint32_t i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(pu_job(rt, p, i, i % 2 == 0 ? A_FAIL : A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&dl_seen) == 3);
    CU_ASSERT_EQUAL(atomic_load(&dl_seen), 3);
    shoal_pool_t *rec = shoal__pool_find(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    shoal_pool_stats_t st;
    double end = shoal_test_now() + PU_WAIT_S;
    do /* the handled count is published at the end of each turn */
        shoal__pool_peek(rec, &st);
    while (st.messages_handled != 3 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.messages_forwarded, 6);
    CU_ASSERT_EQUAL(st.messages_handled, 3);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(st.dead_lettered, 3);
    CU_ASSERT_EQUAL(st.queue_depth, 0); /* in flight: nothing */
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

/* ---- a wake-up whose member ends ---------------------------------------------------- */

/* An actor that holds the only dispatcher thread from its first message
 * until hog_gate is set (hog_in: it holds now). */
static atomic_int hog_gate, hog_in;
static int hog_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_store(&hog_in, 1);
    shoal_test_wait_flag(&hog_gate, PU_WAIT_S);
    return SHOAL_OK;
}
static const shoal_behaviour_t hog = {.name = "hog", .handle_message = hog_message};

/* Two members asleep, one dispatcher thread, no restart left (the budget
 * of 1 spent, and a retry waits a minute). A job wakes one member -- the
 * last in the pool's table: a sender's scan starts at its count of puts,
 * 1 here (pull.c) -- and before it runs, it is stopped: it ends without
 * taking the job, and nothing replaces it, nor moves into its place (a
 * member moved in the table is listed again, which gives it a turn).
 * Its wake-up passes on, as a retiring member's does (pull.h: wake-up):
 * the other member takes the job. (Before, the job waited for the next
 * put, or a retry a minute later.) */
static void a_woken_member_that_ends_passes_its_wake_up_on(void)
{
    pu_reset();
    atomic_store(&hog_gate, 0);
    atomic_store(&hog_in, 0);
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 2, 1, 64);
    s.restart.max = 1;
    s.restart.within_ms = 600000;
    s.restart.backoff_ms = 60000;
    shoal_pid_t p = pu_spawn(rt, &s);
    shoal_pool_t *rec = shoal__pool_find(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    WAIT_UNTIL(atomic_load(&rec->pull->sleepers) == 2);
    /* The one restart the budget allows, spent: the next member that ends
     * is not replaced. */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal__pool_slot(rec, 0)), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).worker_restarts == 1 &&
               atomic_load(&rec->pull->sleepers) == 2);
    CU_ASSERT_EQUAL_FATAL(shoal__pool_live(rec), 2);
    shoal_pid_t h;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &hog, NULL, NULL, &h), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&hog_in) == 1);
    CU_ASSERT_EQUAL(pu_job(rt, p, 0, A_OK, 0), SHOAL_OK);
    /* The member the job woke: the one scheduled (the thread is held). */
    shoal_pid_t woken = shoal__pool_slot(rec, 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&shoal__actor_at(rt, shoal__pid_slot(woken))->sched),
                          SHOAL_SCHED_SCHEDULED);
    shoal_pid_t other = shoal__pool_slot(rec, 0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&shoal__actor_at(rt, shoal__pid_slot(other))->sched),
                          SHOAL_SCHED_IDLE);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, woken), SHOAL_OK);
    atomic_store(&hog_gate, 1);
    WAIT_UNTIL(atomic_load(&pu_done) == 1);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&pu_seen[0]), 1);
    CU_ASSERT_EQUAL(atomic_load(&pu_owner[0]), other);
    WAIT_UNTIL(shoal__pool_live(rec) == 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.worker_restarts, 1);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_DEGRADED);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a dying member loses only what it held", a_dying_member_loses_only_what_it_held},
        {"failed items are given again", failed_items_are_given_again},
        {"a dead letter without redeliver", a_dead_letter_without_redeliver},
        {"dead letters settle in the pool above", dead_letters_settle_in_the_pool_above},
        {"a woken member that ends passes its wake-up on",
         a_woken_member_that_ends_passes_its_wake_up_on},
        {NULL, NULL},
    };
    return shoal_test_run("pull_faults", cases);
}
