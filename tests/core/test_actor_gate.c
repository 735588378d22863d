/* test_actor_gate.c - gated actors (actor/actor.c, actor/turn.c,
 * actor/end.c; shoal_spawn_t.gated): init runs, then nothing of the
 * behaviour's until SHOAL_ENV_OPEN -- the user mailbox unread, what comes
 * to the system mailbox for the behaviour set aside in order and handled
 * first at OPEN, STOP and INSPECT carried out meanwhile; what a gated actor
 * held when it ends dropped as an ended actor's mailbox is; an OPEN to an
 * actor that is not gated changes nothing; the calls its init made keep a
 * reply that came while it was gated, though their deadline passed too.
 *
 * Handlers never call CUnit: they record into a gk_rec_t of atomics (the
 * actor's args); the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "actor/actor.h"
#include "actor/envelope.h"
#include "actor/send.h"
#include "runtime/tcache.h"
#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define CALL_TMO_MS 30000u
/* How long a gated actor is watched doing nothing. */
#define GATED_MS 200u

enum {
    M_SELF = 1,      /* a cast init sends itself */
    M_SELF_PRIO = 2, /* a priority cast init sends itself */
    M_TICK = 3,      /* a priority timer tick init arms (10 ms) */
    M_EXT = 4,       /* a cast from the test thread */
    M_EXT_PRIO = 5,  /* a priority cast from the test thread */
    M_CALL = 6,      /* a call: answered with type + 100, the payload reversed */
    M_CALL_PRIO = 7, /* the same, sent with priority */
    M_LATE = 8,      /* a cast sent after OPEN */
};

/* What init sends (gk_rec_t.mode). */
enum { SEND_SELF = 1, SEND_SELF_PRIO = 2, SEND_TICK = 4 };

#define GK_ORDER 16

/* One actor's record. */
typedef struct {
    int mode;           /* set before the spawn */
    atomic_int inits;   /* raised at the end of init, after its sends */
    atomic_int handled; /* casts and calls the handlers saw */
    atomic_int order[GK_ORDER];
    atomic_int prio;  /* of them, flagged SHOAL_MSG_PRIORITY */
    atomic_int calls; /* of them, calls */
    atomic_int other; /* messages of any other kind */
    atomic_int terms, term_reason;
} gk_rec_t;

static void rec_reset(gk_rec_t *r, int mode)
{
    memset(r, 0, sizeof *r);
    r->mode = mode;
    atomic_store(&r->term_reason, 12345);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void record(gk_rec_t *r, const shoal_msg_t *msg)
{
    int i = atomic_load(&r->handled);
    if (i < GK_ORDER)
        atomic_store(&r->order[i], (int)msg->type);
    atomic_fetch_add(&r->prio, (msg->flags & SHOAL_MSG_PRIORITY) != 0);
    atomic_fetch_add(&r->handled, 1); /* published last */
}

static int gk_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    gk_rec_t *r = (gk_rec_t *)args;
    *(gk_rec_t **)state = r;
    shoal_pid_t self = shoal_self(ctx);
    int rc = SHOAL_OK;
    if ((r->mode & SEND_SELF) && rc == SHOAL_OK)
        rc = shoal_send(ctx, self, M_SELF, NULL, 0);
    if ((r->mode & SEND_SELF_PRIO) && rc == SHOAL_OK)
        rc = shoal_send_priority(ctx, self, M_SELF_PRIO, NULL, 0);
    if ((r->mode & SEND_TICK) && rc == SHOAL_OK)
        rc = shoal_send_after_priority(ctx, self, 10, M_TICK, NULL, 0, NULL);
    atomic_fetch_add(&r->inits, 1); /* a failed send ends the actor: the case fails */
    return rc;
}

static int gk_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    gk_rec_t *r = *(gk_rec_t **)state;
    if (msg->kind == SHOAL_MSG_CAST)
        record(r, msg);
    else
        atomic_fetch_add(&r->other, 1);
    return SHOAL_OK;
}

static int gk_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    gk_rec_t *r = *(gk_rec_t **)state;
    char back[16];
    size_t n = msg->size < sizeof back ? msg->size : sizeof back;
    for (size_t i = 0; i < n; i++)
        back[i] = ((const char *)msg->data)[n - 1 - i];
    atomic_fetch_add(&r->calls, 1);
    record(r, msg);
    return shoal_reply_set(reply, msg->type + 100, back, n);
}

static void gk_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    gk_rec_t *r = *(gk_rec_t **)state;
    atomic_store(&r->term_reason, reason);
    atomic_fetch_add(&r->terms, 1);
}

static const shoal_behaviour_t gk_beh = {
    .name = "gate",
    .state_size = sizeof(gk_rec_t *),
    .init = gk_init,
    .handle_message = gk_handle,
    .handle_call = gk_call,
    .terminate = gk_terminate,
};

/* Spawns an actor recording into r: gated or not; counting its sends in
 * *sends (so it has an ext record) unless NULL. */
static shoal_pid_t spawn_rec(shoal_runtime_t *rt, gk_rec_t *r, bool gated,
                             shoal_send_counts_t *sends)
{
    shoal_spawn_t s = {
        .parent = SHOAL_PID_NONE,
        .beh = &gk_beh,
        .args = r,
        .limit = SHOAL_MAILBOX_UNBOUNDED,
        .kind = SHOAL_ACTOR_PLAIN,
        .sends = sends,
        .gated = gated,
    };
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal__actor_spawn_as(rt, shoal__tcache_get(rt), &s, &pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&r->inits) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&r->inits), 1);
    return pid;
}

static int send_open(shoal_runtime_t *rt, shoal_pid_t pid)
{
    return shoal__send_system(rt, shoal__tcache_get(rt), pid, SHOAL_ENV_OPEN, SHOAL_PID_NONE, 0);
}

/* ---- a blocking call on a thread of its own --------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    bool priority;
    pthread_t th;
    atomic_int done; /* published last */
    int rc, status;
    uint32_t type;
    char data[16];
    size_t size;
} gk_caller_t;

static void *caller_main(void *arg)
{
    gk_caller_t *c = arg;
    shoal_answer_t a = {0};
    uint32_t type = c->priority ? M_CALL_PRIO : M_CALL;
    c->rc = c->priority
                ? shoal_runtime_call_priority(c->rt, c->to, type, "gate", 4, CALL_TMO_MS, &a)
                : shoal_runtime_call(c->rt, c->to, type, "gate", 4, CALL_TMO_MS, &a);
    c->status = a.status;
    c->type = a.type;
    c->size = a.data != NULL && a.size <= sizeof c->data ? a.size : 0;
    if (c->size != 0)
        memcpy(c->data, a.data, c->size);
    shoal_answer_release(&a);
    atomic_store(&c->done, 1);
    return NULL;
}

static void caller_start(gk_caller_t *c, shoal_runtime_t *rt, shoal_pid_t to, bool priority)
{
    memset(c, 0, sizeof *c);
    c->rt = rt;
    c->to = to;
    c->priority = priority;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&c->th, NULL, caller_main, c), 0);
}

/* ---- a blocker: holds the only worker until released ---------------------- */

static atomic_int blk_entered, blk_release;

static int blk_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_store(&blk_entered, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&blk_release) != 0, WAIT_S);
    return SHOAL_OK;
}

static const shoal_behaviour_t blk_beh = {.name = "blocker", .handle_message = blk_handle};

/* ---- cases ------------------------------------------------------------------- */

/* Init runs; the five messages queued meanwhile (a cast and a priority
 * cast from init to itself, its priority timer tick, a cast and a priority
 * cast from the test thread) wait for OPEN, the actor idle, not spun; then
 * each runs once: the system mailbox's three in the order they came, then
 * a priority cast queued behind the OPEN (one worker, held by a blocker
 * while both are sent), then the two casts. */
static void a_gated_actor_runs_init_then_nothing_until_open(void)
{
    static gk_rec_t r;
    rec_reset(&r, SEND_SELF | SEND_SELF_PRIO | SEND_TICK);
    atomic_store(&blk_entered, 0);
    atomic_store(&blk_release, 0);
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_rec(rt, &r, true, NULL);
    /* Init's two sends and the tick (timer.c counts its delivery), so the
     * test thread's priority cast comes after the tick. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == 3);
    CU_ASSERT_EQUAL_FATAL(shoal_test_stats(rt).msgs_sent, 3);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, M_EXT, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, M_EXT_PRIO, NULL, 0), SHOAL_OK);
    uint64_t turns = shoal_test_stats(rt).turns;
    sleep_ms(GATED_MS);
    CU_ASSERT_EQUAL(atomic_load(&r.inits), 1);
    CU_ASSERT_EQUAL(atomic_load(&r.handled), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.other), 0);
    /* Idle while gated: at most the turns the two sends began. */
    CU_ASSERT(shoal_test_stats(rt).turns - turns <= 2);
    /* Inspected meanwhile: answered, its two casts still queued. */
    shoal_answer_t ans = {0};
    CU_ASSERT_EQUAL(shoal_runtime_inspect(rt, pid, CALL_TMO_MS, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, 0);
    CU_ASSERT_PTR_NOT_NULL(ans.data != NULL ? strstr(ans.data, "\"mailbox_depth\":2") : NULL);
    shoal_answer_release(&ans);
    CU_ASSERT_EQUAL(atomic_load(&r.handled), 0);

    shoal_pid_t blocker;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &blk_beh, NULL, NULL, &blocker), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, blocker, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&blk_entered) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&blk_entered), 1);
    CU_ASSERT_EQUAL(send_open(rt, pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, M_LATE, NULL, 0), SHOAL_OK);
    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&r.handled) == 6);
    sleep_ms(50); /* nothing more comes */
    CU_ASSERT_EQUAL(atomic_load(&r.handled), 6);
    static const int want[6] = {M_SELF_PRIO, M_TICK, M_EXT_PRIO, M_LATE, M_SELF, M_EXT};
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(atomic_load(&r.order[i]), want[i]);
    CU_ASSERT_EQUAL(atomic_load(&r.prio), 4);
    CU_ASSERT_EQUAL(atomic_load(&r.other), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.terms), 0);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&r.terms) == 1);
    CU_ASSERT_EQUAL(atomic_load(&r.terms), 1);
    shoal_runtime_destroy(rt);
}

/* A thread's call waits in the user mailbox: no answer while gated, the
 * right one after OPEN. */
static void a_call_to_a_gated_actor_is_answered_after_open(void)
{
    static gk_rec_t r;
    static gk_caller_t c;
    rec_reset(&r, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_rec(rt, &r, true, NULL);
    caller_start(&c, rt, pid, false);
    WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == 1); /* the call is queued */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 1);
    sleep_ms(GATED_MS);
    CU_ASSERT_EQUAL(atomic_load(&c.done), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.calls), 0);

    CU_ASSERT_EQUAL(send_open(rt, pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&c.done) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&c.done), 1);
    pthread_join(c.th, NULL);
    CU_ASSERT_EQUAL(c.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(c.status, 0);
    CU_ASSERT_EQUAL(c.type, M_CALL + 100);
    CU_ASSERT_EQUAL(c.size, 4);
    CU_ASSERT_EQUAL(memcmp(c.data, "etag", 4), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.calls), 1);
    CU_ASSERT_EQUAL(atomic_load(&r.handled), 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&r.terms) == 1);
    CU_ASSERT_EQUAL(atomic_load(&r.terms), 1);
    shoal_runtime_destroy(rt);
}

/* Stopped while gated: a priority call (set aside) and a call (in the user
 * mailbox) are both answered SHOAL_ENOPROC; the casts set aside or queued
 * are dropped, counted unless the actor sent them itself; terminate runs
 * once; no handler ran. */
static void a_gated_actor_stopped_before_open_drops_what_it_held(void)
{
    static gk_rec_t r;
    static gk_caller_t prio, plain;
    rec_reset(&r, SEND_SELF_PRIO);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_rec(rt, &r, true, NULL);
    caller_start(&prio, rt, pid, true);
    caller_start(&plain, rt, pid, false);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, M_EXT_PRIO, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, M_EXT, NULL, 0), SHOAL_OK);
    /* init's priority cast, the two calls, the two casts: all queued. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == 5);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 5);
    sleep_ms(GATED_MS);
    CU_ASSERT_EQUAL(atomic_load(&prio.done), 0);
    CU_ASSERT_EQUAL(atomic_load(&plain.done), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.handled), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, 0);

    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&prio.done) == 1 && atomic_load(&plain.done) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&prio.done) + atomic_load(&plain.done), 2);
    pthread_join(prio.th, NULL);
    pthread_join(plain.th, NULL);
    CU_ASSERT_EQUAL(prio.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(prio.status, SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(prio.size, 0);
    CU_ASSERT_EQUAL(plain.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(plain.status, SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(plain.size, 0);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == 1);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_ended, 1);
    CU_ASSERT_EQUAL(s.msgs_dropped, 4); /* two calls, two casts; not init's own */
    CU_ASSERT_EQUAL(atomic_load(&r.terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&r.term_reason), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&r.handled), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.calls), 0);
    CU_ASSERT_EQUAL(atomic_load(&r.other), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, M_EXT, NULL, 0), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&r.terms), 1);
}

/* An OPEN to an actor that is not gated -- a plain one, one with an ext
 * record, one opened already -- changes nothing: its messages run as
 * usual, each once. A gated one beside them, sent the same, runs nothing
 * until its OPEN. */
static void an_actor_not_gated_ignores_open(void)
{
    enum { PLAIN, EXT, GATED, N };
    static gk_rec_t r[N];
    static shoal_send_counts_t sends; /* only for the ext record */
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid[N];
    for (int i = 0; i < N; i++) {
        rec_reset(&r[i], SEND_SELF | SEND_SELF_PRIO);
        pid[i] = spawn_rec(rt, &r[i], i == GATED, i == EXT ? &sends : NULL);
    }
    /* An OPEN among the messages of the two that are not gated. */
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid[i], M_EXT, NULL, 0), SHOAL_OK);
        if (i != GATED)
            CU_ASSERT_EQUAL(send_open(rt, pid[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid[i], M_EXT_PRIO, NULL, 0), SHOAL_OK);
    }
    WAIT_UNTIL(atomic_load(&r[PLAIN].handled) == 4 && atomic_load(&r[EXT].handled) == 4);
    sleep_ms(GATED_MS);
    for (int i = PLAIN; i <= EXT; i++) {
        CU_ASSERT_EQUAL(atomic_load(&r[i].handled), 4);
        CU_ASSERT_EQUAL(atomic_load(&r[i].prio), 2);
    }
    CU_ASSERT_EQUAL(atomic_load(&r[GATED].handled), 0);

    /* OPEN to all: the gated one runs its four; the others nothing more. */
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(send_open(rt, pid[i]), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&r[GATED].handled) == 4);
    sleep_ms(50);
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(atomic_load(&r[i].handled), 4);
        CU_ASSERT_EQUAL(atomic_load(&r[i].prio), 2);
    }
    /* A second OPEN, then a cast and a call: handled as usual, once. */
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(send_open(rt, pid[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid[i], M_LATE, NULL, 0), SHOAL_OK);
        shoal_answer_t a = {0};
        CU_ASSERT_EQUAL(shoal_runtime_call(rt, pid[i], M_CALL, "ab", 2, CALL_TMO_MS, &a), SHOAL_OK);
        CU_ASSERT_EQUAL(a.status, 0);
        CU_ASSERT_EQUAL(a.type, M_CALL + 100);
        CU_ASSERT(a.size == 2 && a.data != NULL && memcmp(a.data, "ba", 2) == 0);
        shoal_answer_release(&a);
    }
    sleep_ms(50);
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(atomic_load(&r[i].handled), 6);
        CU_ASSERT_EQUAL(atomic_load(&r[i].order[4]), M_LATE);
        CU_ASSERT_EQUAL(atomic_load(&r[i].order[5]), M_CALL);
        CU_ASSERT_EQUAL(atomic_load(&r[i].calls), 1);
        CU_ASSERT_EQUAL(atomic_load(&r[i].other), 0);
        CU_ASSERT_EQUAL(atomic_load(&r[i].inits), 1);
        CU_ASSERT_EQUAL(atomic_load(&r[i].terms), 0);
    }
    shoal_runtime_destroy(rt);
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(atomic_load(&r[i].terms), 1);
}

/* ---- calls made in init, their deadlines come while it is gated ---------------- */

enum { C_A = 20, C_B = 21, C_ANSWER = 22 };

/* The callee: answers C_A 150 ms after it came (a timer to itself), never
 * answers C_B. */
typedef struct {
    shoal_pid_t from;
    shoal_ref_t ref;
} late_t;

static int late_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    late_t *l = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_ANSWER)
        return shoal_reply(ctx, l->from, l->ref, C_A + 100, NULL, 0) == SHOAL_OK ? SHOAL_OK
                                                                                 : SHOAL_EFAILED;
    return SHOAL_OK;
}

static int late_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)reply;
    late_t *l = state;
    if (msg->type == C_A) {
        l->from = msg->from;
        l->ref = msg->ref;
        return shoal_send_after_priority(ctx, shoal_self(ctx), 150, C_ANSWER, NULL, 0, NULL) ==
                       SHOAL_OK
                   ? SHOAL_DEFER
                   : SHOAL_EFAILED;
    }
    return SHOAL_DEFER; /* C_B: never answered */
}

static const shoal_behaviour_t late_beh = {.name = "late",
                                           .state_size = sizeof(late_t),
                                           .handle_message = late_handle,
                                           .handle_call = late_call};

/* The caller: its init calls the callee (args) with C_A, 400 ms, and C_B,
 * 100 ms; it counts what comes back for each. */
static shoal_ref_t cg_ref_a, cg_ref_b;
static atomic_int cg_reply_a, cg_timeout_a, cg_reply_b, cg_timeout_b;

static int cg_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    shoal_pid_t callee = *(const shoal_pid_t *)args;
    int rc = shoal_call(ctx, callee, C_A, NULL, 0, 400, &cg_ref_a);
    return rc == SHOAL_OK ? shoal_call(ctx, callee, C_B, NULL, 0, 100, &cg_ref_b) : rc;
}

static int cg_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    bool a = msg->ref == cg_ref_a, b = msg->ref == cg_ref_b;
    if (msg->kind == SHOAL_MSG_REPLY && msg->status == 0)
        atomic_fetch_add(a ? &cg_reply_a : &cg_reply_b, a || b);
    else if (msg->kind == SHOAL_MSG_TIMEOUT)
        atomic_fetch_add(a ? &cg_timeout_a : &cg_timeout_b, a || b);
    return SHOAL_OK;
}

static const shoal_behaviour_t cg_beh = {
    .name = "caller", .init = cg_init, .handle_message = cg_handle};

/* A gated actor's init makes two calls: B's deadline (100 ms) comes while
 * it is gated, then A's reply (150 ms), then A's deadline (400 ms); it is
 * opened at 600 ms. A's reply came in time: A is answered, B times out,
 * each once. (The timer's tick, had it been set aside and handled first at
 * OPEN, would have timed A out too -- its deadline past by then -- and
 * dropped its reply as late.) */
static void calls_made_in_init_keep_their_replies(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&cg_reply_a, 0);
    atomic_store(&cg_timeout_a, 0);
    atomic_store(&cg_reply_b, 0);
    atomic_store(&cg_timeout_b, 0);
    shoal_pid_t callee;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &late_beh, NULL, 0, &callee), SHOAL_OK);
    shoal_spawn_t s = {.parent = SHOAL_PID_NONE,
                       .beh = &cg_beh,
                       .args = &callee,
                       .limit = SHOAL_MAILBOX_UNBOUNDED,
                       .kind = SHOAL_ACTOR_PLAIN,
                       .gated = true};
    shoal_pid_t caller;
    CU_ASSERT_EQUAL_FATAL(shoal__actor_spawn_as(rt, shoal__tcache_get(rt), &s, &caller), SHOAL_OK);
    sleep_ms(600);
    CU_ASSERT_EQUAL(atomic_load(&cg_reply_a) + atomic_load(&cg_timeout_a) +
                        atomic_load(&cg_reply_b) + atomic_load(&cg_timeout_b),
                    0);
    CU_ASSERT_EQUAL(send_open(rt, caller), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cg_reply_a) + atomic_load(&cg_timeout_a) == 1 &&
               atomic_load(&cg_timeout_b) == 1);
    sleep_ms(GATED_MS); /* nothing more comes */
    CU_ASSERT_EQUAL(atomic_load(&cg_reply_a), 1);
    CU_ASSERT_EQUAL(atomic_load(&cg_timeout_a), 0);
    CU_ASSERT_EQUAL(atomic_load(&cg_reply_b), 0);
    CU_ASSERT_EQUAL(atomic_load(&cg_timeout_b), 1);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a gated actor runs init, then nothing until OPEN",
         a_gated_actor_runs_init_then_nothing_until_open},
        {"a call to a gated actor is answered after OPEN",
         a_call_to_a_gated_actor_is_answered_after_open},
        {"a gated actor stopped before OPEN drops what it held",
         a_gated_actor_stopped_before_open_drops_what_it_held},
        {"an actor not gated ignores OPEN", an_actor_not_gated_ignores_open},
        {"calls made in init keep their replies", calls_made_in_init_keep_their_replies},
        {NULL, NULL},
    };
    return shoal_test_run("actor_gate", cases);
}
