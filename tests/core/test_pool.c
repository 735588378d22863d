/* test_pool.c - pools (core/pool/): forwarding with the original sender and
 * ref, priority traffic and the manager behaviour, worker choice and the
 * exact EBUSY point, crashes and hand-back, the restart budget and the
 * degraded state, resizing with retiring workers, per-worker mailbox limits,
 * nested pools, drain, the message ledger and inspect, bad specs, pools as
 * children of an actor, and runtime destroy with live pools.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them. Where a test needs full mailboxes,
 * workers block on a gate that the test opens, so what is queued where is
 * decided by the test, never by timing. The runtime has more threads than
 * workers ever block at once, so pool actors keep running.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u /* ms, for every blocking call */
#define THREADS 6u
#define PENDING 12345

enum { T_JOB = 1, T_WHO = 2, T_PANIC = 3, T_GO = 4, T_NOTE = 5, T_ASK = 6 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2, A_FAIL = 4 }; /* what a job does */

typedef struct {
    uint32_t seq, act;
} job_t;

/* What a worker answers to T_WHO: who it is and what it saw. */
typedef struct {
    shoal_pid_t self, from;
    shoal_ref_t ref;
} who_t;

/* ---- the worker ------------------------------------------------------------- */

#define MAXSEQ 256
static _Atomic shoal_pid_t owner[MAXSEQ], from_of[MAXSEQ];
static atomic_int seen[MAXSEQ];
static atomic_int done, entered, gate, other;

static void reset(void)
{
    for (unsigned i = 0; i < MAXSEQ; i++) {
        atomic_store(&owner[i], SHOAL_PID_NONE);
        atomic_store(&from_of[i], SHOAL_PID_NONE);
        atomic_store(&seen[i], 0);
    }
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&other, 0);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    job_t j;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_JOB || msg->size != sizeof j) {
        atomic_fetch_add(&other, 1);
        return 0;
    }
    memcpy(&j, msg->data, sizeof j);
    if (j.seq < MAXSEQ) {
        atomic_store(&owner[j.seq], shoal_self(ctx));
        atomic_store(&from_of[j.seq], msg->from);
        atomic_fetch_add(&seen[j.seq], 1);
    }
    if (j.act & A_BLOCK) { /* until the gate passes the job's level: seq >> 16 */
        atomic_fetch_add(&entered, 1);
        double end = shoal_test_now() + WAIT_S;
        while (atomic_load(&gate) <= (int)(j.seq >> 16) && shoal_test_now() < end)
            shoal_test_nap();
    }
    if (j.act & A_PANIC)
        shoal_panic(ctx, "test panic on job %u", (unsigned)j.seq);
    if (j.act & A_FAIL)
        return 7;
    atomic_fetch_add(&done, 1);
    return 0;
}

static int wk_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "test panic in a call");
    if (msg->type != T_WHO) {
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return 0;
    }
    who_t w = {shoal_self(ctx), msg->from, msg->ref};
    return shoal_reply_set(reply, T_WHO, &w, sizeof w);
}

static const shoal_behaviour_t wk = {
    .name = "wk", .handle_message = wk_message, .handle_call = wk_call};

/* ---- helpers ---------------------------------------------------------------- */

/* Fresh records, and a runtime that keeps its log for the test. */
static void mgr_reset(void);
static shoal_runtime_t *begin(void)
{
    reset();
    mgr_reset();
    return shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
}

static void spec_of(shoal_pool_spec_t *s, const char *name, uint32_t size, uint32_t mailbox)
{
    shoal_pool_spec_init(s);
    s->name = name;
    s->worker = &wk;
    s->size = size;
    s->mailbox = mailbox;
}

static shoal_pid_t spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, s, &p), SHOAL_OK);
    return p;
}

/* A pool of `size` wk workers. */
static shoal_pid_t wk_pool(shoal_runtime_t *rt, const char *name, uint32_t size, uint32_t mailbox)
{
    shoal_pool_spec_t s;
    spec_of(&s, name, size, mailbox);
    return spawn(rt, &s);
}

/* A pool of `size` pools of inner's spec. */
static void nest(shoal_pool_spec_t *s, const char *name, uint32_t size,
                 const shoal_pool_spec_t *inner)
{
    spec_of(s, name, size, 8);
    s->worker = NULL;
    s->worker_pool = inner;
}

static int job(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t seq, uint32_t act)
{
    job_t j = {seq, act};
    return shoal_runtime_send(rt, pool, T_JOB, &j, sizeof j);
}

/* Sends a job that blocks its worker until the gate opens, and waits until
 * a worker is in it. */
static void block(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t seq, uint32_t act)
{
    int before = atomic_load(&entered);
    CU_ASSERT_EQUAL(job(rt, pool, seq, A_BLOCK | act), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == before + 1);
    CU_ASSERT_EQUAL(atomic_load(&entered), before + 1);
}

/* Sends A_OK jobs from *seq on until one is refused; returns how many were
 * accepted, *rc the refusal. The refused seq is skipped. */
static uint32_t fill_up(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t *seq, int *rc)
{
    uint32_t n = 0;
    while ((*rc = job(rt, pool, (*seq)++, A_OK)) == SHOAL_OK && n < 100)
        n++;
    return n;
}

static int stats_rc;
static shoal_pool_stats_t st(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_pool_stats_t s;
    memset(&s, 0, sizeof s);
    s.state = 99;
    stats_rc = shoal_pool_stats(rt, pool, &s, TMO);
    return s;
}

/* Polls the pool's stats into s until cond (over s) holds, or WAIT_S. */
#define WAIT_STATS(s, rt, pool, cond)                                                              \
    do {                                                                                           \
        double end_ = shoal_test_now() + WAIT_S;                                                   \
        for (;;) {                                                                                 \
            (s) = st(rt, pool);                                                                    \
            if ((cond) || shoal_test_now() >= end_)                                                \
                break;                                                                             \
            shoal_test_nap();                                                                      \
        }                                                                                          \
    } while (0)

/* Waits until the pool counts exactly `handled` and `failed` and nothing is
 * queued (a worker publishes its pop count lazily, mailbox.h). */
static shoal_pool_stats_t settle(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t handled,
                                 uint64_t failed)
{
    shoal_pool_stats_t s;
    WAIT_STATS(s, rt, pool,
               s.messages_handled == handled && s.messages_failed == failed && s.queue_depth == 0);
    CU_ASSERT_EQUAL(stats_rc, SHOAL_OK);
    return s;
}

/* The message counters of s, and the ledger: once traffic has stopped,
 * every accepted message was handled, failed or dropped; none is queued. */
#define COUNTS(s, fwd, handled, failed, unhandled)                                                 \
    do {                                                                                           \
        CU_ASSERT_EQUAL((s).messages_forwarded, fwd);                                              \
        CU_ASSERT_EQUAL((s).messages_handled, handled);                                            \
        CU_ASSERT_EQUAL((s).messages_failed, failed);                                              \
        CU_ASSERT_EQUAL((s).messages_unhandled, unhandled);                                        \
        CU_ASSERT_EQUAL((s).messages_forwarded,                                                    \
                        (s).messages_handled + (s).messages_failed + (s).messages_dropped);        \
        CU_ASSERT_EQUAL((s).queue_depth, 0);                                                       \
    } while (0)

/* The shape of the pool in s. */
#define SHAPE(s, state_, size, target, restarts)                                                   \
    do {                                                                                           \
        CU_ASSERT_EQUAL((s).state, state_);                                                        \
        CU_ASSERT_EQUAL((s).pool_size, size);                                                      \
        CU_ASSERT_EQUAL((s).target_size, target);                                                  \
        CU_ASSERT_EQUAL((s).worker_restarts, restarts);                                            \
    } while (0)

/* Waits until exactly `live` actors live: the inner pools of a nested pool
 * start their workers after shoal_runtime_spawn_pool has returned. */
static bool ready(shoal_runtime_t *rt, uint64_t live)
{
    WAIT_UNTIL(shoal_test_stats(rt).actors_live == live);
    return shoal_test_stats(rt).actors_live == live;
}

static bool all_ended(shoal_runtime_t *rt) { return ready(rt, 0); }

static int inspect(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap)
{
    shoal_answer_t a;
    out[0] = '\0';
    int rc = shoal_runtime_inspect(rt, pid, TMO, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && a.data != NULL)
        snprintf(out, cap, "%s", (const char *)a.data);
    shoal_answer_release(&a);
    return rc;
}

static void has(const char *json, const char *part)
{
    CU_ASSERT_PTR_NOT_NULL(strstr(json, part));
    if (strstr(json, part) == NULL)
        fprintf(stderr, "\n    in:      %s\n    missing: %s\n", json, part);
}

static unsigned owned_by(shoal_pid_t pid, uint32_t from, uint32_t to)
{
    unsigned n = 0;
    for (uint32_t i = from; i < to; i++)
        n += atomic_load(&owner[i]) == pid;
    return n;
}

/* Every seq in [from, to) was handled exactly `times` times. */
static void seen_all(uint32_t from, uint32_t to, int times)
{
    int bad = 0;
    for (uint32_t i = from; i < to; i++)
        bad += atomic_load(&seen[i]) != times;
    CU_ASSERT_EQUAL(bad, 0);
}

/* A blocking drain on its own thread. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int rc;
    pthread_t t;
} drainer_t;

static void *drain_main(void *arg)
{
    drainer_t *d = arg;
    atomic_store(&d->rc, shoal_pool_drain(d->rt, d->pool, 3 * TMO));
    return NULL;
}

static void drainer_start(drainer_t *d, shoal_runtime_t *rt, shoal_pid_t pool)
{
    d->rt = rt;
    d->pool = pool;
    atomic_store(&d->rc, PENDING);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&d->t, NULL, drain_main, d), 0);
}

/* ---- 1. forwarding ---------------------------------------------------------- */

/* An actor that sends a job and makes a call to the pool on T_GO. */
static _Atomic shoal_pid_t snd_pool, snd_reply_from, who_self, who_from;
static _Atomic shoal_ref_t snd_ref, snd_reply_ref, who_ref;
static atomic_int snd_call_rc, snd_replies, snd_status, snd_timeouts;

static int snd_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_GO) {
        job_t j = {1, A_OK};
        shoal_ref_t ref = 0;
        if (shoal_send(ctx, atomic_load(&snd_pool), T_JOB, &j, sizeof j) != SHOAL_OK)
            atomic_fetch_add(&snd_timeouts, 100);
        int rc = shoal_call(ctx, atomic_load(&snd_pool), T_WHO, NULL, 0, TMO, &ref);
        atomic_store(&snd_ref, ref);
        atomic_store(&snd_call_rc, rc);
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        who_t w = {0, 0, 0};
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
    atomic_store(&snd_call_rc, PENDING);
    atomic_store(&snd_replies, 0);
    atomic_store(&snd_timeouts, 0);
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "fw", 2, 16), snd = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(job(rt, pool, 0, A_OK), SHOAL_OK);
    /* From an actor: a send and an asynchronous call. */
    atomic_store(&snd_pool, pool);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &snd_beh, NULL, NULL, &snd), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, snd, T_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&snd_replies) == 1);
    shoal_pool_stats_t ps = settle(rt, pool, 3, 0); /* two jobs and the call */
    COUNTS(ps, 3, 3, 0, 0);
    CU_ASSERT_EQUAL(atomic_load(&from_of[0]), SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(atomic_load(&from_of[1]), snd);
    CU_ASSERT(atomic_load(&owner[1]) != pool && atomic_load(&owner[1]) != SHOAL_PID_NONE);
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
    who_t w = {0, 0, 0};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, pool, T_WHO, NULL, 0, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, T_WHO);
    CU_ASSERT_EQUAL_FATAL(a.size, sizeof w);
    memcpy(&w, a.data, sizeof w);
    shoal_answer_release(&a);
    CU_ASSERT(w.self != pool && w.self != SHOAL_PID_NONE);
    CU_ASSERT(w.from != SHOAL_PID_NONE && w.ref != 0);

    /* Priority traffic goes to the pool, never to a worker: an unknown call
     * is ENOTSUP (a worker would have answered it), a cast is ignored. */
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, T_WHO, NULL, 0, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    shoal_answer_release(&a);
    job_t j = {2, A_OK};
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, T_JOB, &j, sizeof j), SHOAL_OK);
    ps = st(rt, pool); /* handled after the cast */
    CU_ASSERT_EQUAL(ps.messages_forwarded, 4);
    CU_ASSERT_EQUAL(atomic_load(&seen[2]), 0);
    CU_ASSERT_EQUAL(atomic_load(&other), 0);

    /* A worker that panics in handle_call: the caller sees EPANIC, the
     * worker is replaced. */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pool, T_PANIC, NULL, 0, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EPANIC);
    shoal_answer_release(&a);
    WAIT_STATS(ps, rt, pool, ps.worker_restarts == 1 && ps.pool_size == 2);
    SHAPE(ps, SHOAL_POOL_RUNNING, 2, 2, 1);
    CU_ASSERT_EQUAL(job(rt, pool, 3, A_OK), SHOAL_OK);
    ps = settle(rt, pool, 5, 1);
    COUNTS(ps, 6, 5, 1, 0);
    seen_all(0, 2, 1);
    shoal_runtime_destroy(rt);
}

/* ---- 1b. the manager behaviour ---------------------------------------------- */

typedef struct {
    int base, casts;
} mgr_state_t;

static atomic_int mgr_inits, mgr_casts, mgr_terms, mgr_reason, mgr_bad, mgr_init_rc;
static _Atomic shoal_pid_t mgr_self;
static const int mgr_base = 40;

static void mgr_reset(void)
{
    atomic_store(&mgr_inits, 0);
    atomic_store(&mgr_casts, 0);
    atomic_store(&mgr_terms, 0);
    atomic_store(&mgr_reason, PENDING);
    atomic_store(&mgr_bad, 0);
    atomic_store(&mgr_init_rc, SHOAL_OK);
    atomic_store(&mgr_self, SHOAL_PID_NONE);
}

static int mgr_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    ((mgr_state_t *)state)->base = *(const int *)args;
    atomic_store(&mgr_self, shoal_self(ctx));
    atomic_fetch_add(&mgr_inits, 1);
    return atomic_load(&mgr_init_rc);
}

static int mgr_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_NOTE && (msg->flags & SHOAL_MSG_PRIORITY)) {
        ((mgr_state_t *)state)->casts++;
        atomic_fetch_add(&mgr_casts, 1);
    } else {
        atomic_fetch_add(&mgr_bad, 1);
    }
    return 0;
}

static int mgr_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    int v;
    if (msg->type != T_ASK || msg->size != sizeof v || !(msg->flags & SHOAL_MSG_PRIORITY)) {
        shoal_reply_error(reply, SHOAL_EINVAL);
        return 0;
    }
    memcpy(&v, msg->data, sizeof v);
    v += ((mgr_state_t *)state)->base;
    return shoal_reply_set(reply, T_ASK + 100, &v, sizeof v);
}

static int mgr_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    shoal_inspect_uint(out, "manager_casts", (uint64_t)((mgr_state_t *)state)->casts);
    shoal_inspect_str(out, "manager_note", "hi");
    return 0;
}

static void mgr_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    atomic_store(&mgr_reason, reason);
    atomic_fetch_add(&mgr_terms, 1);
}

static const shoal_behaviour_t mgr = {.name = "mgr",
                                      .state_size = sizeof(mgr_state_t),
                                      .init = mgr_init,
                                      .handle_message = mgr_message,
                                      .handle_call = mgr_call,
                                      .terminate = mgr_terminate,
                                      .inspect = mgr_inspect};

static void manager_answers_priority_traffic(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    spec_of(&s, "managed", 2, 16);
    s.manager = &mgr;
    s.manager_args = &mgr_base;
    shoal_pid_t pool = spawn(rt, &s);
    CU_ASSERT_EQUAL(atomic_load(&mgr_inits), 1); /* spawn waited for init */
    CU_ASSERT_EQUAL(atomic_load(&mgr_self), pool);
    shoal_answer_t a;
    int v = 2;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, T_ASK, &v, sizeof v, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, T_ASK + 100);
    CU_ASSERT(a.size == sizeof v && memcmp(a.data, &(int){42}, sizeof v) == 0);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, T_WHO, NULL, 0, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL); /* the manager's answer, not ENOTSUP */
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, T_NOTE, NULL, 0), SHOAL_OK);
    /* The same type sent normally goes to a worker. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_NOTE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&mgr_casts) == 1 && atomic_load(&other) == 1);
    /* Pool commands stay the pool's. */
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 1, TMO), 3);
    CU_ASSERT_EQUAL(atomic_load(&mgr_casts), 1);
    CU_ASSERT_EQUAL(atomic_load(&other), 1);
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, pool, json, sizeof json), SHOAL_OK);
    has(json, "\"manager_casts\":1");
    has(json, "\"manager_note\":\"hi\"");
    has(json, "\"pool\":\"managed\"");
    has(json, "\"pool_size\":3");
    CU_ASSERT_EQUAL(atomic_load(&mgr_terms), 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&mgr_terms) == 1);
    CU_ASSERT_EQUAL(atomic_load(&mgr_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&mgr_reason), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&mgr_bad), 0);
    CU_ASSERT(all_ended(rt));

    /* A manager whose init fails: spawn fails with its reason, nothing is
     * left running, and terminate does not run. */
    atomic_store(&mgr_init_rc, SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_EINVAL);
    CU_ASSERT(all_ended(rt));
    CU_ASSERT_EQUAL(atomic_load(&mgr_inits), 2);
    CU_ASSERT_EQUAL(atomic_load(&mgr_terms), 1);
    shoal_runtime_destroy(rt);
}

/* ---- 2. worker choice --------------------------------------------------------- */

static void full_pool_refuses_with_ebusy_at_exact_capacity(void)
{
    enum { S = 3, M = 4 };
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "busy", S, M);
    for (uint32_t i = 0; i < S; i++) /* one to each worker, which blocks in it */
        block(rt, pool, i, 0);
    int rc;
    uint32_t seq = S, accepted = fill_up(rt, pool, &seq, &rc);
    CU_ASSERT_EQUAL(accepted, S * M);
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    uint64_t busy = 1;
    for (int k = 0; k < 5; k++, busy++)
        CU_ASSERT_EQUAL(job(rt, pool, seq++, A_OK), SHOAL_EBUSY);
    shoal_answer_t a; /* a call is refused the same way */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pool, T_WHO, NULL, 0, TMO, &a), SHOAL_EBUSY);
    busy++;
    shoal_pool_stats_t ps = st(rt, pool);
    CU_ASSERT_EQUAL(ps.messages_unhandled, busy);
    CU_ASSERT_EQUAL(ps.messages_forwarded, S + S * M);
    CU_ASSERT_EQUAL(ps.queue_depth, S * M);
    atomic_store(&gate, 1);
    ps = settle(rt, pool, S + S * M, 0);
    COUNTS(ps, S + S * M, S + S * M, 0, busy);
    CU_ASSERT_EQUAL(ps.messages_requeued, 0);
    seen_all(0, S + S * M, 1);
    seen_all(S + S * M, seq, 0); /* refused: never handled */
    /* Each worker handled the one it blocked in and a full mailbox. */
    for (uint32_t i = 0; i < S; i++)
        CU_ASSERT_EQUAL(owned_by(atomic_load(&owner[i]), 0, S + S * M), 1 + M);
    shoal_runtime_destroy(rt);
}

static void one_sender_goes_round_robin(void)
{
    enum { S = 3, N = 30 };
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "rr", S, 64);
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = settle(rt, pool, N, 0);
    COUNTS(ps, N, N, 0, 0);
    seen_all(0, N, 1);
    CU_ASSERT(atomic_load(&owner[0]) != atomic_load(&owner[1]));
    CU_ASSERT(atomic_load(&owner[1]) != atomic_load(&owner[2]));
    CU_ASSERT(atomic_load(&owner[0]) != atomic_load(&owner[2]));
    int off = 0; /* message i went to the worker of message i mod S */
    for (uint32_t i = 0; i < N; i++)
        off += atomic_load(&owner[i]) != atomic_load(&owner[i % S]);
    CU_ASSERT_EQUAL(off, 0);
    shoal_runtime_destroy(rt);
}

/* ---- 3. crashes ----------------------------------------------------------------- */

/* Worker X blocks in job 0 and then crashes (act); worker Y blocks in job 1.
 * Jobs 2..11 alternate between them; X's five come back to the pool and are
 * handled by Y or X's replacement. (Under TSan this once caught
 * shoal__env_move copying a popped envelope's mailbox link while a producer
 * could still store it: the popped node is the queue's dummy.) */
static void crash_case(uint32_t act, const char *logged)
{
    enum { K = 5 };
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "crash", 2, 8);
    block(rt, pool, 0, act);
    block(rt, pool, 1, 0);
    for (uint32_t i = 2; i < 2 + 2 * K; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(st(rt, pool).queue_depth, 2 * K);
    atomic_store(&gate, 1);
    shoal_pool_stats_t ps;
    WAIT_STATS(ps, rt, pool,
               ps.messages_handled == 1 + 2 * K && ps.messages_failed == 1 &&
                   ps.worker_restarts == 1 && ps.pool_size == 2 && ps.messages_requeued == K &&
                   ps.queue_depth == 0);
    COUNTS(ps, 2 + 2 * K, 1 + 2 * K, 1, 0);
    CU_ASSERT_EQUAL(ps.messages_requeued, K);
    SHAPE(ps, SHOAL_POOL_RUNNING, 2, 2, 1);
    seen_all(0, 2 + 2 * K, 1);
    CU_ASSERT_EQUAL(atomic_load(&done), 1 + 2 * K);
    shoal_pid_t dead = atomic_load(&owner[0]), y = atomic_load(&owner[1]);
    CU_ASSERT(dead != y);
    /* X's queued jobs were handled elsewhere; Y's by Y. */
    CU_ASSERT_EQUAL(owned_by(dead, 0, 2 + 2 * K), 1);
    for (uint32_t i = 3; i < 2 + 2 * K; i += 2)
        CU_ASSERT_EQUAL(atomic_load(&owner[i]), y);
    shoal_test_assert_logged(logged);
    /* The pool serves on. */
    for (uint32_t i = 12; i < 16; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    ps = settle(rt, pool, 5 + 2 * K, 1);
    COUNTS(ps, 6 + 2 * K, 5 + 2 * K, 1, 0);
    shoal_runtime_destroy(rt);
}

static void worker_panic_hands_back_its_queue(void) { crash_case(A_PANIC, "test panic on job 0"); }

static void worker_error_hands_back_its_queue(void)
{
    crash_case(A_FAIL, "ended: unknown error (7)");
}

static void spec_restart(shoal_pool_spec_t *s, uint32_t max, uint64_t within, uint64_t backoff)
{
    s->restart.max = max;
    s->restart.within_ms = within;
    s->restart.backoff_ms = backoff;
}

/* restart.max = 2 in a long window: the third death degrades the pool. */
static void restart_budget_spent_degrades_once(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    spec_of(&s, "budget", 3, 8);
    spec_restart(&s, 2, 60000, 60000);
    shoal_pid_t pool = spawn(rt, &s);
    for (uint32_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_PANIC), SHOAL_OK);
    shoal_pool_stats_t ps;
    WAIT_STATS(ps, rt, pool, ps.messages_failed == 3 && ps.state == SHOAL_POOL_DEGRADED);
    SHAPE(ps, SHOAL_POOL_DEGRADED, 2, 3, 2);
    CU_ASSERT_EQUAL(ps.messages_failed, 3);
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, pool, json, sizeof json), SHOAL_OK);
    has(json, "\"state\":\"degraded\"");
    has(json, "\"pool_size\":2,");
    has(json, "\"target_size\":3,");
    has(json, "\"worker_restarts\":2,");
    CU_ASSERT_EQUAL(shoal_test_log_count("degraded:"), 1);
    shoal_test_assert_logged("serving with 2 of 3 workers");
    /* It serves with the workers it has. */
    for (uint32_t i = 3; i < 9; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    ps = settle(rt, pool, 6, 3);
    SHAPE(ps, SHOAL_POOL_DEGRADED, 2, 3, 2);
    COUNTS(ps, 9, 6, 3, 0);
    shoal_runtime_destroy(rt); /* with the retry timer still pending */
}

/* Short window and backoff: the retry refills the pool, and after a window
 * without deaths it is running again. */
static void degraded_pool_refills_and_recovers(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    spec_of(&s, "recover", 3, 8);
    spec_restart(&s, 2, 1000, 50);
    shoal_pid_t pool = spawn(rt, &s);
    for (uint32_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_PANIC), SHOAL_OK);
    WAIT_UNTIL(shoal_test_log_has("degraded:"));
    shoal_test_assert_logged("serving with 2 of 3 workers");
    shoal_pool_stats_t ps;
    /* Two restarts, then the retry's one. */
    WAIT_STATS(ps, rt, pool, ps.state == SHOAL_POOL_RUNNING && ps.worker_restarts == 3);
    SHAPE(ps, SHOAL_POOL_RUNNING, 3, 3, 3);
    CU_ASSERT_EQUAL(ps.messages_failed, 3);
    CU_ASSERT_EQUAL(shoal_test_log_count("degraded:"), 1);
    shoal_test_assert_logged("recovered: 3 workers");
    for (uint32_t i = 3; i < 9; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    ps = settle(rt, pool, 6, 3);
    COUNTS(ps, 9, 6, 3, 0);
    shoal_runtime_destroy(rt);
}

/* ---- 4. resize ------------------------------------------------------------------ */

static void resize_returns_clamped_size(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    spec_of(&s, "resize", 2, 16);
    s.min_size = 1;
    s.max_size = 5;
    shoal_pid_t pool = spawn(rt, &s);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 2, TMO), 4);
    CU_ASSERT_EQUAL(st(rt, pool).pool_size, 4);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 10, TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_remove_workers(rt, pool, 1, TMO), 4);
    CU_ASSERT_EQUAL(st(rt, pool).pool_size, 4);
    CU_ASSERT_EQUAL(shoal_pool_remove_workers(rt, pool, 100, TMO), 1);
    CU_ASSERT_EQUAL(st(rt, pool).pool_size, 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 0, TMO), 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 99, TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 3, TMO), 3);
    /* A command as a priority cast; a bad payload is EINVAL. */
    uint32_t one = 1;
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL_POOL_ADD_WORKERS, &one, sizeof one),
                    SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, pool, SHOAL_POOL_ADD_WORKERS, "x", 1, TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL);
    shoal_answer_release(&a);
    shoal_pool_stats_t ps;
    WAIT_STATS(ps, rt, pool, ps.retiring == 0);
    SHAPE(ps, SHOAL_POOL_RUNNING, 4, 4, 0); /* resizing is not restarting */
    CU_ASSERT(ps.min_size == 1 && ps.max_size == 5 && ps.retiring == 0);
    /* The four take turns. */
    for (uint32_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    ps = settle(rt, pool, 8, 0);
    COUNTS(ps, 8, 8, 0, 0);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(owned_by(atomic_load(&owner[i]), 0, 8), 2);

    /* A pool allowed to be empty refuses until it has a worker. */
    spec_of(&s, "empty", 0, 4);
    s.min_size = 0;
    pool = spawn(rt, &s);
    CU_ASSERT_EQUAL(job(rt, pool, 20, A_OK), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 1, TMO), 1);
    CU_ASSERT_EQUAL(job(rt, pool, 21, A_OK), SHOAL_OK);
    ps = settle(rt, pool, 1, 0);
    COUNTS(ps, 1, 1, 0, 1);
    shoal_runtime_destroy(rt);
}

/* Worker X blocks in job 0, Y in job 1, each has two more queued; one is
 * removed. It finishes its own queue, gets nothing new, and the pool's
 * capacity is what the other one has left. */
static void removed_worker_finishes_its_queue(void)
{
    enum { M = 4 };
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "retire", 2, M); /* min_size 1 */
    block(rt, pool, 0, 0);
    block(rt, pool, 1, 0);
    for (uint32_t i = 2; i < 6; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_remove_workers(rt, pool, 1, TMO), 1);
    shoal_pool_stats_t ps = st(rt, pool);
    SHAPE(ps, SHOAL_POOL_RUNNING, 1, 1, 0);
    CU_ASSERT_EQUAL(ps.retiring, 1);
    CU_ASSERT_EQUAL(ps.queue_depth, 4); /* the retiring worker's count too */
    int rc;
    uint32_t seq = 6;
    CU_ASSERT_EQUAL(fill_up(rt, pool, &seq, &rc), M - 2);
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    atomic_store(&gate, 1);
    WAIT_STATS(ps, rt, pool, ps.messages_handled == 8 && ps.retiring == 0 && ps.queue_depth == 0);
    SHAPE(ps, SHOAL_POOL_RUNNING, 1, 1, 0);
    CU_ASSERT_EQUAL(ps.retiring, 0);
    COUNTS(ps, 8, 8, 0, 1);
    seen_all(0, 8, 1);
    for (uint32_t i = 2; i < 6; i++) /* each finished its own queue */
        CU_ASSERT_EQUAL(atomic_load(&owner[i]), atomic_load(&owner[i % 2]));
    shoal_pid_t kept = atomic_load(&owner[6]);
    CU_ASSERT_EQUAL(atomic_load(&owner[7]), kept);
    CU_ASSERT(kept == atomic_load(&owner[0]) || kept == atomic_load(&owner[1]));
    CU_ASSERT_EQUAL(owned_by(kept, 0, 8), 5);
    shoal_runtime_destroy(rt);
}

static void set_mailbox_applies_to_live_workers(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "limit", 2, 8);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, 3, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, 0, TMO), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(st(rt, pool).mailbox, 3);
    block(rt, pool, 0, 0);
    block(rt, pool, 1, 0);
    int rc;
    uint32_t seq = 2;
    CU_ASSERT_EQUAL(fill_up(rt, pool, &seq, &rc), 2 * 3);
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    atomic_store(&gate, 1);
    shoal_pool_stats_t ps = settle(rt, pool, 8, 0);
    COUNTS(ps, 8, 8, 0, 1);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, SHOAL_MAILBOX_UNBOUNDED, TMO), SHOAL_OK);
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, pool, json, sizeof json), SHOAL_OK);
    has(json, "\"worker_mailbox_size\":\"unbounded\"");
    shoal_runtime_destroy(rt);
}

/* ---- 5. nested pools ------------------------------------------------------------ */

/* Work reaches the leaves and the counts roll up to the outer pool. Then
 * one leaf blocks with work queued behind it, and draining the outer pool
 * drains the inner ones: the drain answers once that work is done. */
static void nested_case(unsigned depth)
{
    enum { N = 40, Q = 20 };
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t leaf, mid, outer;
    spec_of(&leaf, "leaf", 2, 16);
    nest(&mid, "mid", 2, &leaf);
    nest(&outer, "outer", 2, depth == 3 ? &mid : &leaf);
    shoal_pid_t pool = spawn(rt, &outer);
    unsigned leaves = depth == 3 ? 8 : 4;
    CU_ASSERT(ready(rt, 2 * leaves - 1)); /* the pools and their leaves */
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = settle(rt, pool, N, 0);
    CU_ASSERT_EQUAL(ps.pool_size, 2);
    COUNTS(ps, N, N, 0, 0);
    seen_all(0, N, 1);
    CU_ASSERT_EQUAL(owned_by(pool, 0, N), 0); /* only leaves handle work */
    char json[4096];
    CU_ASSERT_EQUAL(inspect(rt, pool, json, sizeof json), SHOAL_OK);
    has(json, "\"worker_is_pool\":true");
    has(json, depth == 3 ? "\"worker_behaviour\":\"mid\"" : "\"worker_behaviour\":\"leaf\"");

    block(rt, pool, N, 0);
    for (uint32_t i = N + 1; i < N + Q; i++) /* what lands behind it stays queued */
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    WAIT_STATS(ps, rt, pool, ps.messages_handled + ps.queue_depth == N + Q - 1);
    CU_ASSERT_EQUAL(ps.messages_handled + ps.queue_depth, N + Q - 1);
    drainer_t d;
    drainer_start(&d, rt, pool);
    /* The inner pool without the blocked leaf drains and ends. */
    WAIT_STATS(ps, rt, pool, ps.state == SHOAL_POOL_DRAINING && ps.retiring == 1);
    SHAPE(ps, SHOAL_POOL_DRAINING, 0, 0, 0);
    CU_ASSERT_EQUAL(ps.retiring, 1);
    /* A second drain, as a priority cast, changes nothing. */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(job(rt, pool, N + Q, A_OK), SHOAL_ENOPROC);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pool, T_WHO, NULL, 0, TMO, &a), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(st(rt, pool).state, SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(atomic_load(&d.rc), PENDING); /* a leaf is blocked */
    atomic_store(&gate, 1);
    pthread_join(d.t, NULL);
    CU_ASSERT_EQUAL(atomic_load(&d.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&done), N + Q);
    seen_all(0, N + Q, 1);
    CU_ASSERT(all_ended(rt)); /* the inner pools and every leaf too */
    shoal_runtime_destroy(rt);
}

static void nested_depth_2(void) { nested_case(2); }
static void nested_depth_3(void) { nested_case(3); }

/* ---- 6. drain ----------------------------------------------------------------------- */

/* Draining with a worker that crashes on the way: its queue comes back to
 * the pool, which has no open worker left, and is still handled. */
static void drain_handles_everything_even_after_a_crash(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "drain", 2, 8);
    block(rt, pool, 0, A_PANIC);
    block(rt, pool, 1, 0);
    for (uint32_t i = 2; i < 8; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    drainer_t d;
    drainer_start(&d, rt, pool);
    shoal_pool_stats_t ps;
    WAIT_STATS(ps, rt, pool, ps.state == SHOAL_POOL_DRAINING);
    SHAPE(ps, SHOAL_POOL_DRAINING, 0, 0, 0);
    CU_ASSERT_EQUAL(ps.retiring, 2);
    CU_ASSERT_EQUAL(ps.queue_depth, 6);
    CU_ASSERT_EQUAL(job(rt, pool, 8, A_OK), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 1, TMO), SHOAL_ENOPROC); /* no resizing now */
    CU_ASSERT_EQUAL(atomic_load(&d.rc), PENDING);
    atomic_store(&gate, 1);
    pthread_join(d.t, NULL);
    CU_ASSERT_EQUAL(atomic_load(&d.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&done), 7);
    seen_all(0, 8, 1);
    CU_ASSERT_EQUAL(owned_by(atomic_load(&owner[0]), 0, 8), 1);
    CU_ASSERT(all_ended(rt));
    /* The ended pool answers nothing. */
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &ps, TMO), SHOAL_ENOPROC);
    char json[64];
    CU_ASSERT_EQUAL(inspect(rt, pool, json, sizeof json), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 3, TMO), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(job(rt, pool, 9, A_OK), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- 7. the ledger and inspect -------------------------------------------------------- */

static void inspect_reports_the_ledger(void)
{
    enum { N = 50 };
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    char name[] = "ledger";
    spec_of(&s, name, 3, 64);
    shoal_pid_t pool = spawn(rt, &s);
    name[0] = 'X'; /* the pool copied its spec */
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = settle(rt, pool, N, 0);
    CU_ASSERT_EQUAL(ps.size_, sizeof ps);
    COUNTS(ps, N, N, 0, 0);
    /* One forward in 16 from this thread is timed. */
    CU_ASSERT_EQUAL(ps.latency_samples, N / 16);
    CU_ASSERT(ps.queue_wait_ns[0] > 0);
    CU_ASSERT(ps.queue_wait_ns[0] <= ps.queue_wait_ns[1] &&
              ps.queue_wait_ns[1] <= ps.queue_wait_ns[2]);
    CU_ASSERT(ps.service_ns[0] <= ps.service_ns[1] && ps.service_ns[1] <= ps.service_ns[2]);
    char json[4096], want[128];
    CU_ASSERT_EQUAL(inspect(rt, pool, json, sizeof json), SHOAL_OK);
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
        has(json, keys[i]);
    snprintf(want, sizeof want, "\"queue_wait_p50_ns\":%llu,",
             (unsigned long long)ps.queue_wait_ns[0]);
    has(json, want);
    shoal_runtime_destroy(rt);
}

/* ---- 8. bad specs --------------------------------------------------------------------- */

static const shoal_behaviour_t no_handler = {.name = "no-handler"};

static void bad_specs_are_einval(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s, inner;
    shoal_pid_t pid;
    spec_of(&inner, "inner", 2, 8);
#define BAD(change)                                                                                \
    do {                                                                                           \
        spec_of(&s, "bad", 2, 8);                                                                  \
        change;                                                                                    \
        CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pid), SHOAL_EINVAL);                     \
    } while (0)
    BAD(s.worker = NULL);
    BAD(s.worker_pool = &inner);
    BAD(s.worker = &no_handler);
    BAD((s.size = 5, s.max_size = 4));
    BAD(s.min_size = 3);
    BAD(s.max_size = SHOAL_POOL_MAX_SIZE + 1);
    BAD(s.mailbox = 0);
    BAD(s.mailbox = SHOAL_MAILBOX_MAX + 1);
    BAD(s.restart.within_ms = 0);
    BAD(s.restart.backoff_ms = 0);
    char name[65];
    memset(name, 'n', 64);
    name[64] = '\0';
    BAD(s.name = name); /* 64 characters: one too many */
    inner.mailbox = 0;
    BAD((s.worker = NULL, s.worker_pool = &inner)); /* the nested spec is checked too */
#undef BAD
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, NULL, &pid), SHOAL_EINVAL);
    spec_of(&s, "ok", 1, 8);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 0);
    /* The boundaries themselves are fine: 63 characters, 8 levels. */
    name[63] = '\0';
    s.name = name;
    pid = spawn(rt, &s);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pid, TMO), SHOAL_OK);
    CU_ASSERT(all_ended(rt));
    shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH + 1];
    spec_of(&chain[SHOAL_POOL_MAX_DEPTH], "leaf", 1, 4);
    for (unsigned i = 0; i < SHOAL_POOL_MAX_DEPTH; i++)
        nest(&chain[i], "level", 1, &chain[i + 1]);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &chain[0], &pid), SHOAL_EINVAL); /* 9 levels */
    pid = spawn(rt, &chain[1]);
    CU_ASSERT(ready(rt, 9)); /* 8 pools and the leaf */
    CU_ASSERT_EQUAL(job(rt, pid, 0, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = settle(rt, pid, 1, 0);
    COUNTS(ps, 1, 1, 0, 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pid, TMO), SHOAL_OK);
    CU_ASSERT(all_ended(rt));
    shoal_runtime_destroy(rt);
}

/* ---- a pool as the child of an actor ----------------------------------------------------- */

static shoal_pool_spec_t par_spec;
static _Atomic shoal_pid_t par_pool, par_exit_from;
static atomic_int par_rc, par_bad_rc, par_exits, par_exit_status;

static int par_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_GO) {
        shoal_pid_t p = SHOAL_PID_NONE, q = SHOAL_PID_NONE;
        shoal_pool_spec_t bad = par_spec;
        bad.mailbox = 0;
        atomic_store(&par_bad_rc, shoal_spawn_pool(ctx, &bad, &q));
        int rc = shoal_spawn_pool(ctx, &par_spec, &p);
        atomic_store(&par_pool, p);
        atomic_store(&par_rc, rc);
    } else if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&par_exit_from, msg->from);
        atomic_store(&par_exit_status, msg->status);
        atomic_fetch_add(&par_exits, 1);
    }
    return 0;
}

static const shoal_behaviour_t par_beh = {.name = "parent", .handle_message = par_message};

static shoal_pid_t par_spawn_pool(shoal_runtime_t *rt, shoal_pid_t par)
{
    atomic_store(&par_rc, PENDING);
    atomic_store(&par_pool, SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, par, T_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&par_rc) != PENDING);
    CU_ASSERT_EQUAL(atomic_load(&par_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&par_bad_rc), SHOAL_EINVAL);
    return atomic_load(&par_pool);
}

static void pool_as_child_of_an_actor(void)
{
    atomic_store(&par_exits, 0);
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    spec_of(&par_spec, "child", 2, 8);
    shoal_pid_t par;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &par_beh, NULL, NULL, &par), SHOAL_OK);
    shoal_pid_t pool = par_spawn_pool(rt, par);
    /* The stats call is queued behind the pool's init: its workers exist. */
    CU_ASSERT_EQUAL(st(rt, pool).pool_size, 2);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = settle(rt, pool, 4, 0);
    COUNTS(ps, 4, 4, 0, 0);
    /* Drained, it ends normally and its parent hears it. */
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&par_exits) == 1);
    CU_ASSERT_EQUAL(atomic_load(&par_exits), 1);
    CU_ASSERT_EQUAL(atomic_load(&par_exit_from), pool);
    CU_ASSERT_EQUAL(atomic_load(&par_exit_status), SHOAL_OK);
    /* Stopping the parent stops a child pool and its workers. */
    pool = par_spawn_pool(rt, par);
    CU_ASSERT_EQUAL(st(rt, pool).pool_size, 2);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, par), SHOAL_OK);
    CU_ASSERT(all_ended(rt));
    CU_ASSERT_EQUAL(job(rt, pool, 10, A_OK), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- 9. destroy with live pools --------------------------------------------------------- */

static void destroy_with_live_pools(void)
{
    shoal_runtime_t *rt = begin();
    atomic_store(&gate, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t leaf, mid, outer, deg, managed;
    shoal_pid_t p1 = wk_pool(rt, "plain", 3, 64);
    for (uint32_t i = 0; i < 60; i++)
        CU_ASSERT_EQUAL(job(rt, p1, i, A_OK), SHOAL_OK);
    spec_of(&leaf, "leaf", 2, 8);
    nest(&mid, "mid", 2, &leaf);
    nest(&outer, "outer", 2, &mid);
    shoal_pid_t p2 = spawn(rt, &outer);
    CU_ASSERT(ready(rt, 4 + 15));
    for (uint32_t i = 60; i < 80; i++)
        CU_ASSERT_EQUAL(job(rt, p2, i, A_OK), SHOAL_OK);
    /* No restart allowed: the first death degrades it, for a minute. */
    spec_of(&deg, "degraded", 2, 8);
    spec_restart(&deg, 0, 60000, 60000);
    shoal_pid_t p3 = spawn(rt, &deg);
    CU_ASSERT_EQUAL(job(rt, p3, 80, A_PANIC), SHOAL_OK);
    shoal_pool_stats_t ps;
    WAIT_STATS(ps, rt, p3, ps.state == SHOAL_POOL_DEGRADED);
    SHAPE(ps, SHOAL_POOL_DEGRADED, 1, 2, 0);
    spec_of(&managed, "managed", 2, 8);
    managed.manager = &mgr;
    managed.manager_args = &mgr_base;
    spawn(rt, &managed);
    shoal_runtime_destroy(rt);
    /* Stopped, not drained: the manager heard why. */
    CU_ASSERT_EQUAL(atomic_load(&mgr_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&mgr_reason), SHOAL_ESHUTDOWN);
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
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = wk_pool(rt, "together", S, 4);
    int stranded = -1;
    for (uint32_t r = 0; r < ROUNDS && stranded < 0; r++) {
        for (uint32_t i = 0; i < S; i++)
            CU_ASSERT_EQUAL(job(rt, pool, r << 16 | i, A_BLOCK), SHOAL_OK);
        shoal_pool_stats_t ps;
        int rc = shoal_pool_stats(rt, pool, &ps, 3000);
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&entered) == (int)(S * (r + 1)), 3.0);
        if (rc != SHOAL_OK || atomic_load(&entered) != (int)(S * (r + 1)))
            stranded = (int)r;
        atomic_store(&gate, (int)r + 1);
        WAIT_UNTIL(atomic_load(&done) == (int)(S * (r + 1)));
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
        {"worker panic hands back its queue", worker_panic_hands_back_its_queue},
        {"worker error hands back its queue", worker_error_hands_back_its_queue},
        {"restart budget spent degrades once", restart_budget_spent_degrades_once},
        {"degraded pool refills and recovers", degraded_pool_refills_and_recovers},
        {"resize returns the clamped size", resize_returns_clamped_size},
        {"removed worker finishes its queue", removed_worker_finishes_its_queue},
        {"set_mailbox applies to live workers", set_mailbox_applies_to_live_workers},
        {"nested depth 2: counts roll up, drain drains the inner pools", nested_depth_2},
        {"nested depth 3: counts roll up, drain drains the inner pools", nested_depth_3},
        {"drain handles everything, even after a crash",
         drain_handles_everything_even_after_a_crash},
        {"inspect reports the ledger", inspect_reports_the_ledger},
        {"bad specs are EINVAL", bad_specs_are_einval},
        {"pool as the child of an actor", pool_as_child_of_an_actor},
        {"destroy with live pools", destroy_with_live_pools},
        {"workers made runnable together all run", workers_made_runnable_together_all_run},
        {NULL, NULL},
    };
    return shoal_test_run("pool", cases);
}
