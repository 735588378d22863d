/* test_pool_held.c - a pool started held (pool/pool.c, pool/workers.c,
 * pool/commands.c, pool/checkout.c; pool.h: opts held, SHOAL__POOL_GO):
 * its workers -- a nested pool's leaves, a checkout pool's members -- run
 * init, so the start completes, then handle nothing -- not their own
 * casts, not their timers, not what is sent to the pool -- until a thread's
 * GO (a priority cast, or a priority call answered once it is carried
 * out); then each is handled once. A GO from an actor, cast or call
 * (answered SHOAL_ENOTSUP), is not one.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them.
 */
#include <string.h>

#include "checkout_basic_kit.h"
#include "pool/pool.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
/* How long a held pool is watched doing nothing. */
#define HELD_S 0.2
#define NEXT 12 /* messages the test thread sends a pool */

enum {
    M_SELF = 1, /* the cast a worker's init sends itself */
    M_TICK = 2, /* the priority timer it arms (10 ms) */
    M_EXT = 3,  /* a cast to the pool from the test thread, its seq as payload */
    M_GO = 4,   /* to the goer: the pool to send GO to */
};

/* ---- the worker: its init sends itself a cast and arms a timer ----------------- */

static atomic_int inits, selfs, ticks, exts, ext_seen[NEXT], other;

static void reset(void)
{
    atomic_store(&inits, 0);
    atomic_store(&selfs, 0);
    atomic_store(&ticks, 0);
    atomic_store(&exts, 0);
    atomic_store(&other, 0);
    for (int i = 0; i < NEXT; i++)
        atomic_store(&ext_seen[i], 0);
}

static int w_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state, (void)args;
    shoal_pid_t self = shoal_self(ctx);
    int rc = shoal_send(ctx, self, M_SELF, NULL, 0);
    if (rc == SHOAL_OK)
        rc = shoal_send_after_priority(ctx, self, 10, M_TICK, NULL, 0, NULL);
    atomic_fetch_add(&inits, 1); /* a failed send fails the start: the case fails */
    return rc;
}

static int w_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state;
    int seq;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == M_SELF)
        atomic_fetch_add(&selfs, 1);
    else if (msg->kind == SHOAL_MSG_CAST && msg->type == M_TICK)
        atomic_fetch_add(&ticks, 1);
    else if (msg->kind == SHOAL_MSG_CAST && msg->type == M_EXT && msg->size == sizeof seq) {
        memcpy(&seq, msg->data, sizeof seq);
        if (seq >= 0 && seq < NEXT)
            atomic_fetch_add(&ext_seen[seq], 1);
        atomic_fetch_add(&exts, 1);
    } else
        atomic_fetch_add(&other, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t worker = {.name = "w", .init = w_init, .handle_message = w_message};

/* ---- pools ----------------------------------------------------------------------- */

/* A pool "held" of `size` workers. */
static void leaf_spec(shoal_pool_spec_t *s, uint32_t size)
{
    shoal_pool_spec_init(s);
    s->name = "held";
    s->worker = &worker;
    s->size = size;
    s->mailbox = 100;
}

/* s started held (shoal__pool_start_ex, as a reload starts its new pools). */
static shoal_pid_t start_held(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t pool = SHOAL_PID_NONE;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, s, NULL, &(shoal_pool_opts_t){.held = true}, TMO,
                                               &pool, why, sizeof why),
                          SHOAL_OK);
    return pool;
}

static void settle(void)
{
    double end = shoal_test_now() + HELD_S;
    while (shoal_test_now() < end)
        shoal_test_nap();
}

/* The thread's GO as a call: answered, empty, once carried out. */
static void go_call(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call_priority(rt, pool, SHOAL__POOL_GO, NULL, 0, TMO, &a),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, SHOAL__POOL_GO);
    CU_ASSERT_EQUAL(a.size, 0);
    shoal_answer_release(&a);
}

static void send_ext(shoal_runtime_t *rt, shoal_pid_t pool)
{
    for (int i = 0; i < NEXT; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, M_EXT, &i, sizeof i), SHOAL_OK);
}

/* Nothing handled yet, n inits run. */
static void nothing_handled(int n)
{
    CU_ASSERT_EQUAL(atomic_load(&inits), n);
    CU_ASSERT_EQUAL(atomic_load(&selfs), 0);
    CU_ASSERT_EQUAL(atomic_load(&ticks), 0);
    CU_ASSERT_EQUAL(atomic_load(&exts), 0);
    CU_ASSERT_EQUAL(atomic_load(&other), 0);
}

/* After the GO: n workers' casts and ticks, and the test thread's messages
 * if sent, each handled once -- still so a while later. */
static void all_handled_once(int n, bool sent)
{
    int e = sent ? NEXT : 0;
    WAIT_UNTIL(atomic_load(&selfs) == n && atomic_load(&ticks) == n && atomic_load(&exts) == e);
    settle();
    CU_ASSERT_EQUAL(atomic_load(&selfs), n);
    CU_ASSERT_EQUAL(atomic_load(&ticks), n);
    CU_ASSERT_EQUAL(atomic_load(&exts), e);
    for (int i = 0; i < NEXT; i++)
        CU_ASSERT_EQUAL(atomic_load(&ext_seen[i]), sent ? 1 : 0);
    CU_ASSERT_EQUAL(atomic_load(&other), 0);
    CU_ASSERT_EQUAL(atomic_load(&inits), n);
}

/* ---- cases ------------------------------------------------------------------------ */

/* 3 workers start (3 inits, the start answered OK) and handle nothing --
 * their own cast and timer, the thread's 12 messages to the pool --
 * within 200 ms; the thread's GO call is answered, then each is handled
 * once. */
static void held_workers_wait_for_go(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    leaf_spec(&s, 3);
    shoal_pid_t pool = start_held(rt, &s);
    WAIT_UNTIL(atomic_load(&inits) == 3);
    send_ext(rt, pool);
    settle();
    nothing_handled(3);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, pool).messages_handled, 0);
    go_call(rt, pool);
    all_handled_once(3, true);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, pool).pool_size, 3);
    shoal_runtime_destroy(rt);
}

/* A pool of 2 nested pools of 2 workers, held: its nested pools are held
 * too -- 4 leaf inits, nothing handled, the thread's messages neither --;
 * the GO (a cast) reaches them through their parent, and every leaf
 * handles its own. */
static void held_nested_pools_open_at_go(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t inner, outer;
    leaf_spec(&inner, 2);
    shoal_pool_spec_init(&outer);
    outer.name = "outer";
    outer.worker_pool = &inner;
    outer.size = 2;
    outer.mailbox = 100;
    shoal_pid_t pool = start_held(rt, &outer);
    WAIT_UNTIL(atomic_load(&inits) == 4);
    send_ext(rt, pool);
    settle();
    nothing_handled(4);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    all_handled_once(4, true);
    shoal_runtime_destroy(rt);
}

/* ---- GO from an actor ---- */

static atomic_int goer_cast_rc, goer_call_rc, goer_status;

/* Told a pool (M_GO), it sends it GO as the host would from its thread: a
 * priority cast, then a priority call; the reply's status is recorded. */
static int goer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    shoal_pid_t to;
    if (msg->kind == SHOAL_MSG_REPLY || msg->kind == SHOAL_MSG_TIMEOUT) {
        atomic_store(&goer_status, msg->kind == SHOAL_MSG_REPLY ? msg->status : SHOAL_ETIMEDOUT);
        return SHOAL_OK;
    }
    if (msg->kind != SHOAL_MSG_CAST || msg->type != M_GO || msg->size != sizeof to)
        return SHOAL_OK;
    memcpy(&to, msg->data, sizeof to);
    atomic_store(&goer_cast_rc, shoal_send_priority(ctx, to, SHOAL__POOL_GO, NULL, 0));
    shoal_ref_t ref;
    atomic_store(&goer_call_rc, shoal_call_priority(ctx, to, SHOAL__POOL_GO, NULL, 0, TMO, &ref));
    return SHOAL_OK;
}

static const shoal_behaviour_t goer = {.name = "goer", .handle_message = goer_message};

/* An actor's GO cast (sent, and ignored) and GO call (answered
 * SHOAL_ENOTSUP) leave the pool held: nothing handled 200 ms after; the
 * thread's GO then opens it. */
static void an_actors_go_is_not_go(void)
{
    reset();
    atomic_store(&goer_cast_rc, 99);
    atomic_store(&goer_call_rc, 99);
    atomic_store(&goer_status, 99);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s;
    leaf_spec(&s, 3);
    shoal_pid_t pool = start_held(rt, &s), g;
    WAIT_UNTIL(atomic_load(&inits) == 3);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &goer, NULL, NULL, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, g, M_GO, &pool, sizeof pool), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&goer_status) != 99);
    CU_ASSERT_EQUAL(atomic_load(&goer_cast_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&goer_call_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&goer_status), SHOAL_ENOTSUP);
    settle();
    nothing_handled(3);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    all_handled_once(3, false);
    shoal_runtime_destroy(rt);
}

/* A checkout pool of one member, held: a thread's take is granted (the
 * pool itself serves), but a call to the member is not answered within
 * 200 ms; after the GO call a second call is answered -- the member's
 * second use: the first call, waiting in its mailbox, was handled first. */
static void held_checkout_members_wait_for_go(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    shoal_pid_t pool = start_held(rt, &s), m = SHOAL_PID_NONE;
    WAIT_UNTIL(atomic_load(&cb_started) == 1);
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 1);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, CB_TMO, &m), SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, m, T_WHO, NULL, 0, (uint64_t)(HELD_S * 1000), &a),
                    SHOAL_ETIMEDOUT);
    go_call(rt, pool);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, m, T_WHO, NULL, 0, CB_TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    cb_who_t w = {0};
    CU_ASSERT_EQUAL(a.size, sizeof w);
    if (a.size == sizeof w)
        memcpy(&w, a.data, sizeof w);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(w.pid, m);
    CU_ASSERT_EQUAL(w.uses, 2);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).takes, 1);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a held pool's workers run init, then nothing until GO", held_workers_wait_for_go},
        {"a held pool of nested pools opens its leaves at GO", held_nested_pools_open_at_go},
        {"GO from an actor is not GO", an_actors_go_is_not_go},
        {"a held checkout pool's members handle nothing until GO",
         held_checkout_members_wait_for_go},
        {NULL, NULL},
    };
    return shoal_test_run("pool_held", cases);
}
