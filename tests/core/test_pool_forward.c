/* test_pool_forward.c - how a pool (core/pool/) passes work on: forwarding
 * with the original sender and ref, replies straight from the worker,
 * priority traffic kept by the pool and answered by its manager behaviour,
 * worker choice (round robin, the exact EBUSY point), the message ledger
 * and inspect, and workers made runnable together all running.
 *
 * Handlers never call CUnit: they record into atomics (pool_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs full
 * mailboxes, workers block on a gate that the test opens, so what is queued
 * where is decided by the test, never by timing.
 */
#include <stdio.h>
#include <string.h>

#include "pool_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PK_WAIT_S)

/* ---- forwarding ---------------------------------------------------------- */

/* An actor that sends a job and makes a call to the pool on T_GO. */
static _Atomic shoal_pid_t snd_pool, snd_reply_from, who_self, who_from;
static _Atomic shoal_ref_t snd_ref, snd_reply_ref, who_ref;
static atomic_int snd_call_rc, snd_replies, snd_status, snd_timeouts;

static int snd_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_GO) {
        pk_job_t j = {1, A_OK};
        shoal_ref_t ref = 0;
        if (shoal_send(ctx, atomic_load(&snd_pool), T_JOB, &j, sizeof j) != SHOAL_OK)
            atomic_fetch_add(&snd_timeouts, 100);
        int rc = shoal_call(ctx, atomic_load(&snd_pool), T_WHO, NULL, 0, PK_TMO, &ref);
        atomic_store(&snd_ref, ref);
        atomic_store(&snd_call_rc, rc);
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        pk_who_t w = {0, 0, 0};
        if (msg->size == sizeof w)
            memcpy(&w, msg->data, sizeof w);
        atomic_store(&who_self, w.self);
        atomic_store(&who_from, w.from);
        atomic_store(&who_ref, w.ref);
        atomic_store(&snd_reply_from, msg->from);
        atomic_store(&snd_reply_ref, msg->ref);
        atomic_store(&snd_status, msg->status);
        atomic_fetch_add(&snd_replies, 1);
    } else if (msg->kind == SHOAL_MSG_TIMEOUT) {
        atomic_fetch_add(&snd_timeouts, 1);
    }
    return 0;
}

static const shoal_behaviour_t snd_beh = {.name = "sender", .handle_message = snd_message};

static void forward_keeps_sender_ref_and_replies_direct(void)
{
    atomic_store(&snd_call_rc, PK_PENDING);
    atomic_store(&snd_replies, 0);
    atomic_store(&snd_timeouts, 0);
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "fw", 2, 16), snd = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(pk_job(rt, pool, 0, A_OK), SHOAL_OK);
    /* From an actor: a send and an asynchronous call. */
    atomic_store(&snd_pool, pool);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &snd_beh, NULL, NULL, &snd), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, snd, T_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&snd_replies) == 1);
    shoal_pool_stats_t ps = pk_settle(rt, pool, 3, 0); /* two jobs and the call */
    PK_COUNTS(ps, 3, 3, 0, 0);
    CU_ASSERT_EQUAL(atomic_load(&pk_from_of[0]), SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(atomic_load(&pk_from_of[1]), snd);
    CU_ASSERT(atomic_load(&pk_owner[1]) != pool && atomic_load(&pk_owner[1]) != SHOAL_PID_NONE);
    CU_ASSERT(atomic_load(&snd_call_rc) == SHOAL_OK && atomic_load(&snd_replies) == 1);
    CU_ASSERT(atomic_load(&snd_status) == SHOAL_OK && atomic_load(&snd_timeouts) == 0);
    /* The worker saw the caller and its ref; the reply came from the worker. */
    CU_ASSERT_EQUAL(atomic_load(&who_from), snd);
    CU_ASSERT_EQUAL(atomic_load(&who_ref), atomic_load(&snd_ref));
    CU_ASSERT_EQUAL(atomic_load(&snd_reply_ref), atomic_load(&snd_ref));
    CU_ASSERT_EQUAL(atomic_load(&snd_reply_from), atomic_load(&who_self));
    CU_ASSERT(atomic_load(&who_self) != pool && atomic_load(&who_self) != SHOAL_PID_NONE);

    /* A blocking call from this thread is answered by a worker. */
    shoal_answer_t a;
    pk_who_t w = {0, 0, 0};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, pool, T_WHO, NULL, 0, PK_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, T_WHO);
    CU_ASSERT_EQUAL_FATAL(a.size, sizeof w);
    memcpy(&w, a.data, sizeof w);
    shoal_answer_release(&a);
    CU_ASSERT(w.self != pool && w.self != SHOAL_PID_NONE);
    CU_ASSERT(w.from != SHOAL_PID_NONE && w.ref != 0);

    /* Priority traffic goes to the pool, never to a worker: an unknown call
     * is ENOTSUP (a worker would have answered it), a cast is ignored. */
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, T_WHO, NULL, 0, PK_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    shoal_answer_release(&a);
    pk_job_t j = {2, A_OK};
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, T_JOB, &j, sizeof j), SHOAL_OK);
    ps = pk_st(rt, pool); /* handled after the cast */
    CU_ASSERT_EQUAL(ps.messages_forwarded, 4);
    CU_ASSERT_EQUAL(atomic_load(&pk_seen[2]), 0);
    CU_ASSERT_EQUAL(atomic_load(&pk_other), 0);

    /* A worker that panics in handle_call: the caller sees EPANIC, the
     * worker is replaced. */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pool, T_PANIC, NULL, 0, PK_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EPANIC);
    shoal_answer_release(&a);
    PK_WAIT_STATS(ps, rt, pool, ps.worker_restarts == 1 && ps.pool_size == 2);
    PK_SHAPE(ps, SHOAL_POOL_RUNNING, 2, 2, 1);
    CU_ASSERT_EQUAL(pk_job(rt, pool, 3, A_OK), SHOAL_OK);
    ps = pk_settle(rt, pool, 5, 1);
    PK_COUNTS(ps, 6, 5, 1, 0);
    pk_seen_all(0, 2, 1);
    shoal_runtime_destroy(rt);
}

/* ---- the manager behaviour ---------------------------------------------- */

static void manager_answers_priority_traffic(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    pk_spec_of(&s, "managed", 2, 16);
    s.manager = &pk_mgr;
    s.manager_args = &pk_mgr_base;
    shoal_pid_t pool = pk_spawn(rt, &s);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_inits), 1); /* spawn waited for init */
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_self), pool);
    shoal_answer_t a;
    int v = 2;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, T_ASK, &v, sizeof v, PK_TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, T_ASK + 100);
    CU_ASSERT(a.size == sizeof v && memcmp(a.data, &(int){42}, sizeof v) == 0);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, T_WHO, NULL, 0, PK_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL); /* the manager's answer, not ENOTSUP */
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, T_NOTE, NULL, 0), SHOAL_OK);
    /* The same type sent normally goes to a worker. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_NOTE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pk_mgr_casts) == 1 && atomic_load(&pk_other) == 1);
    /* Pool commands stay the pool's. */
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 1, PK_TMO), 3);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_casts), 1);
    CU_ASSERT_EQUAL(atomic_load(&pk_other), 1);
    char json[4096];
    CU_ASSERT_EQUAL(pk_inspect(rt, pool, json, sizeof json), SHOAL_OK);
    pk_has(json, "\"manager_casts\":1");
    pk_has(json, "\"manager_note\":\"hi\"");
    pk_has(json, "\"pool\":\"managed\"");
    pk_has(json, "\"pool_size\":3");
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_terms), 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, PK_TMO), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pk_mgr_terms) == 1);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_reason), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_bad), 0);
    CU_ASSERT(pk_all_ended(rt));

    /* A manager whose init fails: spawn fails with its reason, nothing is
     * left running, and terminate does not run. */
    atomic_store(&pk_mgr_init_rc, SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_EINVAL);
    CU_ASSERT(pk_all_ended(rt));
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_inits), 2);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_terms), 1);
    shoal_runtime_destroy(rt);
}

/* ---- worker choice --------------------------------------------------------- */

static void full_pool_refuses_with_ebusy_at_exact_capacity(void)
{
    enum { S = 3, M = 4 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "busy", S, M);
    for (uint32_t i = 0; i < S; i++) /* one to each worker, which blocks in it */
        pk_block(rt, pool, i, 0);
    int rc;
    uint32_t seq = S, accepted = pk_fill_up(rt, pool, &seq, &rc);
    CU_ASSERT_EQUAL(accepted, S * M);
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    uint64_t busy = 1;
    for (int k = 0; k < 5; k++, busy++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, seq++, A_OK), SHOAL_EBUSY);
    shoal_answer_t a; /* a call is refused the same way */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pool, T_WHO, NULL, 0, PK_TMO, &a), SHOAL_EBUSY);
    busy++;
    shoal_pool_stats_t ps = pk_st(rt, pool);
    CU_ASSERT_EQUAL(ps.messages_unhandled, busy);
    CU_ASSERT_EQUAL(ps.messages_forwarded, S + S * M);
    CU_ASSERT_EQUAL(ps.queue_depth, S * M);
    atomic_store(&pk_gate, 1);
    ps = pk_settle(rt, pool, S + S * M, 0);
    PK_COUNTS(ps, S + S * M, S + S * M, 0, busy);
    CU_ASSERT_EQUAL(ps.messages_requeued, 0);
    pk_seen_all(0, S + S * M, 1);
    pk_seen_all(S + S * M, seq, 0); /* refused: never handled */
    /* Each worker handled the one it blocked in and a full mailbox. */
    for (uint32_t i = 0; i < S; i++)
        CU_ASSERT_EQUAL(pk_owned_by(atomic_load(&pk_owner[i]), 0, S + S * M), 1 + M);
    shoal_runtime_destroy(rt);
}

static void one_sender_goes_round_robin(void)
{
    enum { S = 3, N = 30 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "rr", S, 64);
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = pk_settle(rt, pool, N, 0);
    PK_COUNTS(ps, N, N, 0, 0);
    pk_seen_all(0, N, 1);
    CU_ASSERT(atomic_load(&pk_owner[0]) != atomic_load(&pk_owner[1]));
    CU_ASSERT(atomic_load(&pk_owner[1]) != atomic_load(&pk_owner[2]));
    CU_ASSERT(atomic_load(&pk_owner[0]) != atomic_load(&pk_owner[2]));
    int off = 0; /* message i went to the worker of message i mod S */
    for (uint32_t i = 0; i < N; i++)
        off += atomic_load(&pk_owner[i]) != atomic_load(&pk_owner[i % S]);
    CU_ASSERT_EQUAL(off, 0);
    shoal_runtime_destroy(rt);
}

/* ---- the ledger and inspect -------------------------------------------------------- */

static void inspect_reports_the_ledger(void)
{
    enum { N = 50 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    char name[] = "ledger";
    pk_spec_of(&s, name, 3, 64);
    shoal_pid_t pool = pk_spawn(rt, &s);
    name[0] = 'X'; /* the pool copied its spec */
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = pk_settle(rt, pool, N, 0);
    CU_ASSERT_EQUAL(ps.size_, sizeof ps);
    PK_COUNTS(ps, N, N, 0, 0);
    /* One forward in 16 from this thread is timed. */
    CU_ASSERT_EQUAL(ps.latency_samples, N / 16);
    CU_ASSERT(ps.queue_wait_ns[0] > 0);
    CU_ASSERT(ps.queue_wait_ns[0] <= ps.queue_wait_ns[1] &&
              ps.queue_wait_ns[1] <= ps.queue_wait_ns[2]);
    CU_ASSERT(ps.service_ns[0] <= ps.service_ns[1] && ps.service_ns[1] <= ps.service_ns[2]);
    char json[4096], want[128];
    CU_ASSERT_EQUAL(pk_inspect(rt, pool, json, sizeof json), SHOAL_OK);
    static const char *const keys[] = {"\"queue_wait_p90_ns\":",    "\"queue_wait_p99_ns\":",
                                       "\"service_p50_ns\":",       "\"service_p90_ns\":",
                                       "\"service_p99_ns\":",       "\"messages_dropped\":0,",
                                       "\"messages_requeued\":0,",  "\"retiring\":0,",
                                       "\"behaviour\":\"pool\"",    "\"pool\":\"ledger\"",
                                       "\"state\":\"running\"",     "\"pool_size\":3,",
                                       "\"target_size\":3,",        "\"worker_behaviour\":\"wk\"",
                                       "\"worker_is_pool\":false",  "\"worker_mailbox_size\":64,",
                                       "\"worker_restarts\":0,",    "\"messages_forwarded\":50,",
                                       "\"messages_unhandled\":0,", "\"messages_handled\":50,",
                                       "\"messages_failed\":0,",    "\"queue_depth\":0,"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        pk_has(json, keys[i]);
    snprintf(want, sizeof want, "\"queue_wait_p50_ns\":%llu,",
             (unsigned long long)ps.queue_wait_ns[0]);
    pk_has(json, want);
    shoal_runtime_destroy(rt);
}

/* ---- workers made runnable together all run --------------------------------------------- */

/* Four idle workers get a blocking job each, back to back, and then the pool
 * is asked for its stats: with six dispatcher threads, all four jobs and the
 * pool must run while two threads are free. A regression test for the
 * scheduler's wake chain (core/sched/worker.c, 5e95237): before it, a worker
 * woken from park did not count as spinning, so when it took work it woke
 * no one although the global ring still held actors; those then waited,
 * with threads parked, until a busy thread ended its turn (here: never).
 * Each round that strands one waits 3 s (a liveness bound, not a timing
 * measurement). */
static void workers_made_runnable_together_all_run(void)
{
    enum { S = 4, ROUNDS = 100 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "together", S, 4);
    int stranded = -1;
    for (uint32_t r = 0; r < ROUNDS && stranded < 0; r++) {
        for (uint32_t i = 0; i < S; i++)
            CU_ASSERT_EQUAL(pk_job(rt, pool, r << 16 | i, A_BLOCK), SHOAL_OK);
        shoal_pool_stats_t ps;
        int rc = shoal_pool_stats(rt, pool, &ps, 3000);
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&pk_entered) == (int)(S * (r + 1)), 3.0);
        if (rc != SHOAL_OK || atomic_load(&pk_entered) != (int)(S * (r + 1)))
            stranded = (int)r;
        atomic_store(&pk_gate, (int)r + 1);
        WAIT_UNTIL(atomic_load(&pk_done) == (int)(S * (r + 1)));
    }
    CU_ASSERT_EQUAL(stranded, -1);
    if (stranded >= 0)
        fprintf(stderr, "\n    round %d: a runnable actor was stranded\n", stranded);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward keeps sender and ref; replies go direct",
         forward_keeps_sender_ref_and_replies_direct},
        {"manager answers priority traffic", manager_answers_priority_traffic},
        {"full pool refuses with EBUSY at exact capacity",
         full_pool_refuses_with_ebusy_at_exact_capacity},
        {"one sender goes round robin", one_sender_goes_round_robin},
        {"inspect reports the ledger", inspect_reports_the_ledger},
        {"workers made runnable together all run", workers_made_runnable_together_all_run},
        {NULL, NULL},
    };
    return shoal_test_run("pool_forward", cases);
}
