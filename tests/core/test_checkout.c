/* test_checkout.c - checkout pools (core/pool/checkout*.c, the consumer's
 * side core/actor/held.c), with exact counts: take and return from a
 * thread and from actors, waiting and refusals (queue_max, timeouts),
 * growth to max, consumers that end normally or crash, members that crash
 * in use and free, leases, culling to init, max_lifetime only on return,
 * transactions (ok, failed, admission), groups, live settings, start
 * failures, and drain.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "pool/checkout.h"
#include "pool/pool.h"
#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 5000u

enum { T_WHO = 1, T_FAIL = 2, T_BLOCK = 3, T_PANIC = 4 };

static atomic_int started, init_fail, init_delay_ms, gate, blocked, exits_seen;
static _Atomic shoal_pid_t exit_from;

/* ---- the member: answers T_WHO with its PID and its uses ------------------ */

typedef struct {
    uint64_t uses;
} member_t;

typedef struct {
    shoal_pid_t pid;
    uint64_t uses;
} who_t;

static int m_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    if (atomic_load(&init_fail))
        return SHOAL_EFAILED;
    int d = atomic_load(&init_delay_ms);
    if (d > 0) { /* a slow connect */
        struct timespec ts = {0, d * 1000000L};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&started, 1);
    return SHOAL_OK;
}

static int m_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    member_t *m = state;
    m->uses++;
    if (msg->type == T_BLOCK) {
        atomic_fetch_add(&blocked, 1);
        while (!atomic_load(&gate))
            shoal_test_nap();
    }
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "member asked to panic");
    if (msg->type == T_FAIL)
        return SHOAL_EFAILED;
    return SHOAL_OK;
}

static int m_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    member_t *m = state;
    m->uses++;
    if (msg->type == T_FAIL)
        return SHOAL_EFAILED;
    if (msg->type == T_BLOCK) {
        atomic_fetch_add(&blocked, 1);
        while (!atomic_load(&gate))
            shoal_test_nap();
    }
    who_t w = {shoal_self(ctx), m->uses};
    return shoal_reply_set(reply, msg->type, &w, sizeof w);
}

static const shoal_behaviour_t member = {
    .name = "conn",
    .state_size = sizeof(member_t),
    .init = m_init,
    .handle_message = m_message,
    .handle_call = m_call,
};

static void reset(void)
{
    atomic_store(&started, 0);
    atomic_store(&init_fail, 0);
    atomic_store(&init_delay_ms, 0);
    atomic_store(&gate, 0);
    atomic_store(&blocked, 0);
    atomic_store(&exits_seen, 0);
    atomic_store(&exit_from, SHOAL_PID_NONE);
}

static shoal_pool_spec_t spec_of(uint32_t init, uint32_t max)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "db";
    s.kind = SHOAL_POOL_KIND_CHECKOUT;
    s.worker = &member;
    s.size = init;
    s.max_size = max;
    return s;
}

static shoal_pid_t start(shoal_runtime_t *rt, const shoal_pool_spec_t *s)
{
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, s, &pool), SHOAL_OK);
    return pool;
}

static shoal_pool_stats_t stats(shoal_runtime_t *rt, shoal_pid_t pool)
{
    return shoal_test_pool_stats(rt, pool);
}

static bool alive(shoal_runtime_t *rt, shoal_pid_t pid)
{
    return shoal_runtime_send_priority(rt, pid, 999, NULL, 0) == SHOAL_OK;
}

/* Whether pid has ended, waiting for its end (up to WAIT_S). A member the
 * pool stops -- returned FAIL, past its lifetime, past its lease -- is
 * counted, unseated and replaced when the pool sends it the stop; it ends
 * when a dispatcher thread runs that stop, which may come after its
 * replacement has started, been counted free, or been given out (an ASan
 * run on a busy CPU saw a recycled member still alive after the take that
 * got its replacement). So a case asserts such an end once it happened:
 * waiting for it, not assuming it came first. */
static bool ended(shoal_runtime_t *rt, shoal_pid_t pid)
{
    WAIT_UNTIL(!alive(rt, pid));
    return !alive(rt, pid);
}

/* ---- from a thread ---------------------------------------------------------- */

static void test_thread_take_return(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(2, 2);
    shoal_pid_t pool = start(rt, &s);
    CU_ASSERT_EQUAL(atomic_load(&started), 2);
    shoal_pid_t a, b, c;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &c), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(c, SHOAL_PID_NONE);
    /* The consumer uses the member directly. */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, a, T_WHO, NULL, 0, TMO, &ans), SHOAL_OK);
    who_t w;
    memcpy(&w, ans.data, sizeof w);
    shoal_answer_release(&ans);
    CU_ASSERT_EQUAL(w.pid, a);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_CHECKOUT);
    CU_ASSERT_EQUAL(st.in_use, 2);
    CU_ASSERT_EQUAL(st.free, 0);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, 7), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_FAIL), SHOAL_OK);
    /* FAIL: b is destroyed, a new member takes its place. */
    WAIT_UNTIL(stats(rt, pool).free == 2);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.returned_ok, 1);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(atomic_load(&started), 3);
    CU_ASSERT_TRUE(ended(rt, b));
    CU_ASSERT_TRUE(alive(rt, a));
    /* FIFO: the member given back first is taken first. */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &c), SHOAL_OK);
    CU_ASSERT_EQUAL(c, a);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, c, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool, got;
    uint64_t timeout_ms;
    int rc;
    double took;
    int back_rc; /* its own return of what it got (only this thread may) */
    int keep;    /* 1: it keeps what it got */
    atomic_int done;
} taker_t;

static void *taker_main(void *arg)
{
    taker_t *t = arg;
    double t0 = shoal_test_now();
    t->rc = shoal_runtime_take(t->rt, t->pool, t->timeout_ms, &t->got);
    t->took = shoal_test_now() - t0;
    if (t->rc == SHOAL_OK && !t->keep)
        t->back_rc = shoal_runtime_return(t->rt, t->pool, t->got, SHOAL_RETURN_OK);
    atomic_store(&t->done, 1);
    return NULL;
}

/* Another thread's return of w->got (one it does not hold). */
static void *returner_main(void *arg)
{
    taker_t *t = arg;
    t->back_rc = shoal_runtime_return(t->rt, t->pool, t->got, SHOAL_RETURN_OK);
    return NULL;
}

static void test_queue_and_timeouts(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.queue_max = 1;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a, x;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    /* A taker that waits and times out. */
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 150, &x), SHOAL_ETIMEDOUT);
    CU_ASSERT_TRUE(shoal_test_now() - t0 >= 0.149);
    CU_ASSERT_EQUAL(stats(rt, pool).take_timeouts, 1);
    /* One waits (the queue holds one); the next is refused at once. */
    taker_t w = {rt, pool, SHOAL_PID_NONE, 10000, 1, 0, 1, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, taker_main, &w);
    WAIT_UNTIL(stats(rt, pool).queued == 1);
    CU_ASSERT_EQUAL(stats(rt, pool).queued, 1);
    t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 10000, &x), SHOAL_ENOMEMBERS);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 5.0);
    /* Given back: the waiter gets it. */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(w.got, a);
    CU_ASSERT_EQUAL(w.back_rc, SHOAL_OK); /* it gave it back itself */
    /* A thread cannot give back what another took (nor twice). */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_EINVAL);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 2);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.take_timeouts, 1);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_TRUE(st.take_wait_ns[1] > 0);
    /* queue_max 0: never a wait. */
    shoal_pool_checkout_update_t u = {1, 1, s.checkout};
    u.checkout.queue_max = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 10000, &x), SHOAL_ENOMEMBERS);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 5.0);
    CU_ASSERT_EQUAL(stats(rt, pool).error_no_members, 2);
    /* Another thread's second return of a member it gave back and this
     * thread took since: refused, the member stays this thread's. */
    taker_t w2 = {rt, pool, SHOAL_PID_NONE, 0, 1, 0, 1, 0, 0};
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_create(&th, NULL, taker_main, &w2); /* takes a, gives it back */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w2.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(w2.back_rc, SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &x), SHOAL_OK);
    CU_ASSERT_EQUAL(x, a);
    w2.got = a; /* the stale second return, from another thread */
    pthread_create(&th, NULL, returner_main, &w2);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w2.back_rc, SHOAL_EINVAL);
    CU_ASSERT_EQUAL(stats(rt, pool).in_use, 1);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &x), SHOAL_ENOMEMBERS);
    shoal_runtime_destroy(rt);
}

static void test_grow_to_max(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(0, 3);
    shoal_pid_t pool = start(rt, &s);
    CU_ASSERT_EQUAL(stats(rt, pool).pool_size, 0);
    shoal_pid_t m[4];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&started), 3);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 50, &m[3]), SHOAL_ETIMEDOUT);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.in_use, 3);
    CU_ASSERT_EQUAL(st.max_size, 3);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(stats(rt, pool).free, 3);
    shoal_runtime_destroy(rt);
}

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
        atomic_store(&exit_from, msg->from);
        atomic_fetch_add(&exits_seen, 1);
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
    shoal_pool_stats_t st = stats(rt, pool);
    return st.takes == st.returned_ok + st.killed_in_use;
}

static void test_consumer_ends(void)
{
    reset();
    atomic_store(&granted, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(2, 2);
    shoal_pid_t pool = start(rt, &s);
    /* Normal end: both members come back as they are. */
    consume(rt, pool, 2, THEN_EXIT);
    WAIT_UNTIL(atomic_load(&granted) == 2 && stats(rt, pool).free == 2);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.returned_ok, 2);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&started), 2);
    /* A crash: they are destroyed and replaced. */
    atomic_store(&granted, 0);
    consume(rt, pool, 2, THEN_PANIC);
    WAIT_UNTIL(atomic_load(&granted) == 2 && atomic_load(&started) == 4 &&
               stats(rt, pool).free == 2);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_in_use, 2);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(atomic_load(&started), 4);
    /* Ends with its takes unanswered: the grants come back by themselves. */
    /* (Served on the consumer's thread, its takes are granted before it
     * ends: the grants still queued in its mailbox go back OK; a grant
     * that found it gone would not be counted as a take at all.) */
    /* (The consumer starts after consume returns: the state before its
     * takes -- every take settled, both free -- is no sign it is done.) */
    uint64_t before = st.takes;
    consume(rt, pool, 2, THEN_EXIT_AT_ONCE);
    WAIT_UNTIL(stats(rt, pool).takes == before + 2 && all_settled(rt, pool) &&
               stats(rt, pool).free == 2);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, before + 2);
    CU_ASSERT_EQUAL(st.takes, st.returned_ok + st.killed_in_use);
    CU_ASSERT_EQUAL(st.killed_in_use, 2);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(atomic_load(&started), 4);
    shoal_runtime_destroy(rt);
}

static void test_member_crashes(void)
{
    reset();
    atomic_store(&granted, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(2, 2);
    shoal_pid_t pool = start(rt, &s);
    /* In use: its holder hears an EXIT from it, and no longer holds it. */
    shoal_pid_t c = consume(rt, pool, 1, THEN_HOLD);
    WAIT_UNTIL(atomic_load(&granted) == 1);
    shoal_pid_t m = atomic_load(&last_held);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, m, T_PANIC, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&exits_seen) == 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_from), m);
    WAIT_UNTIL(stats(rt, pool).free == 2);
    shoal_pool_stats_t st = stats(rt, pool);
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
    WAIT_UNTIL(stats(rt, pool).killed_free == 1 && stats(rt, pool).free == 2);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.killed_free, 1);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(atomic_load(&started), 4);
    shoal_runtime_destroy(rt);
}

/* ---- leases, culling, lifetimes ------------------------------------------------ */

static void test_lease_expiry(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.lease_ms = 100;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    WAIT_UNTIL(stats(rt, pool).lease_expired == 1 && stats(rt, pool).free == 1);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.lease_expired, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_TRUE(ended(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_ETIMEDOUT);
    shoal_test_assert_logged("past its lease of 100 ms: destroyed");
    shoal_runtime_destroy(rt);
}

static void test_cull_to_init(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 4);
    s.checkout.cull_interval_ms = 50;
    s.checkout.max_age_ms = 150;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t m[4];
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(stats(rt, pool).free, 4);
    WAIT_UNTIL(stats(rt, pool).culled == 3);
    struct timespec ts = {0, 400000000}; /* well past another max_age */
    nanosleep(&ts, NULL);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 3);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    /* The longest unused went first: the last returned stays. */
    CU_ASSERT_TRUE(alive(rt, m[3]));
    shoal_runtime_destroy(rt);
}

static void test_lifetime_on_return(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.max_lifetime_ms = 100;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    /* Past its lifetime, but in use: untouched. */
    CU_ASSERT_EQUAL(stats(rt, pool).recycled, 0);
    CU_ASSERT_TRUE(alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_TRUE(ended(rt, a));
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.recycled, 1);
    CU_ASSERT_EQUAL(atomic_load(&started), 2);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- transactions -------------------------------------------------------------- */

static void test_transactions(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.queue_max = 2;
    shoal_pid_t pool = start(rt, &s);
    shoal_answer_t ans;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_checkout_call(rt, pool, T_WHO, NULL, 0, TMO, &ans),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    who_t w;
    memcpy(&w, ans.data, sizeof w);
    shoal_answer_release(&ans);
    shoal_pid_t first = w.pid;
    CU_ASSERT_EQUAL(w.uses, 1);
    WAIT_UNTIL(stats(rt, pool).free == 1);
    /* A call that fails: the member is returned FAIL and replaced. */
    CU_ASSERT_EQUAL(shoal_runtime_checkout_call(rt, pool, T_FAIL, NULL, 0, TMO, &ans), SHOAL_OK);
    CU_ASSERT_EQUAL(ans.status, SHOAL_EFAILED);
    shoal_answer_release(&ans);
    WAIT_UNTIL(stats(rt, pool).free == 1 && atomic_load(&started) == 2);
    CU_ASSERT_TRUE(ended(rt, first));
    /* Admission: max (1) + queue_max (2) at once, the next refused. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(stats(rt, pool).messages_handled == 2 && stats(rt, pool).free == 1);
    shoal_pool_stats_t st = stats(rt, pool);
    uint64_t handled0 = st.messages_handled;
    CU_ASSERT_EQUAL(handled0, 2); /* the first call and the cast; the failed call failed */
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&blocked) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_ENOMEMBERS);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    atomic_store(&gate, 1);
    WAIT_UNTIL(stats(rt, pool).messages_handled == handled0 + 3);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_handled, handled0 + 3);
    CU_ASSERT_EQUAL(st.messages_forwarded, st.messages_handled + st.messages_failed);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(st.returned_fail, 1);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* ---- groups ------------------------------------------------------------------------ */

static atomic_int group_rc = 99;

static int g_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_GO) {
        shoal_ref_t ref;
        int rc = shoal_take_group(ctx, "dbs", 1000, &ref);
        if (rc != SHOAL_OK)
            atomic_store(&group_rc, rc);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY) {
        shoal_checkout_member_t g;
        if (msg->status == SHOAL_OK) {
            memcpy(&g, msg->data, sizeof g);
            atomic_store(&last_held, g.pool);
            shoal_return(ctx, g.member, SHOAL_RETURN_OK);
        }
        atomic_store(&group_rc, msg->status);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t group_taker = {.name = "gt", .handle_message = g_message};

static int group_take(shoal_runtime_t *rt, shoal_pid_t taker, shoal_pid_t *from)
{
    atomic_store(&group_rc, 99);
    atomic_store(&last_held, SHOAL_PID_NONE);
    shoal_runtime_send(rt, taker, C_GO, NULL, 0);
    WAIT_UNTIL(atomic_load(&group_rc) != 99);
    *from = atomic_load(&last_held);
    return atomic_load(&group_rc);
}

static void test_groups(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[3];
    for (int i = 0; i < 3; i++) {
        shoal_pool_spec_t s = spec_of(1, 1);
        s.checkout.group = "dbs";
        pools[i] = start(rt, &s);
    }
    shoal_pid_t taker, from, held[3];
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_taker, NULL, NULL, &taker), SHOAL_OK);
    /* Random first: over many takes every pool is picked. */
    int seen[3] = {0, 0, 0};
    for (int k = 0; k < 60; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        WAIT_UNTIL(stats(rt, from).free == 1);
        for (int i = 0; i < 3; i++)
            seen[i] += from == pools[i];
    }
    CU_ASSERT_EQUAL(seen[0] + seen[1] + seen[2], 60);
    CU_ASSERT_TRUE(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
    /* The random one has none: the one with the most free members. (Each
     * count is seen once the pool has published it: after a stats call.) */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pools[0], 0, &held[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pools[1], 0, &held[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(stats(rt, pools[0]).free + stats(rt, pools[1]).free, 0);
    for (int k = 0; k < 10; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        CU_ASSERT_EQUAL(from, pools[2]);
        WAIT_UNTIL(stats(rt, pools[2]).free == 1);
    }
    /* None has any: no member. */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pools[2], 0, &held[2]), SHOAL_OK);
    CU_ASSERT_EQUAL(stats(rt, pools[2]).free, 0);
    CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_ENOMEMBERS);
    uint64_t refused = 0;
    for (int i = 0; i < 3; i++)
        refused += stats(rt, pools[i]).error_no_members;
    CU_ASSERT_EQUAL(refused, 1);
    shoal_runtime_destroy(rt);
}

/* ---- settings, start failures, drain ------------------------------------------------- */

static void test_set_checkout_live(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 2);
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    shoal_pool_checkout_update_t u = {3, 4, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, TMO), SHOAL_OK);
    WAIT_UNTIL(stats(rt, pool).free == 2);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.target_size, 3);
    CU_ASSERT_EQUAL(st.max_size, 4);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.free, 2);
    /* Bad values change nothing. */
    shoal_pool_checkout_update_t bad = {5, 4, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &bad, TMO), SHOAL_EINVAL);
    bad = (shoal_pool_checkout_update_t){1, 2, s.checkout};
    bad.checkout.lease_ms = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &bad, TMO), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(stats(rt, pool).target_size, 3);
    /* Other kinds' commands are not a checkout pool's; its members'
     * mailbox limit is, for every live member. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 3, TMO), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, pool, SHOAL_POOL_STRATEGY_FIFO, TMO),
                    SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_pool_set_mailbox(rt, pool, 8, TMO), SHOAL_OK);
    shoal_answer_t ans;
    bool limited = false;
    for (int k = 0; k < 1000 && !limited; k++) { /* each member sets it in its own turn */
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, a, TMO, &ans), SHOAL_OK);
        limited = ans.data != NULL && strstr(ans.data, "\"mailbox_limit\":8") != NULL;
        shoal_answer_release(&ans);
        if (!limited)
            shoal_test_nap();
    }
    CU_ASSERT_TRUE(limited);
    CU_ASSERT_EQUAL(stats(rt, pool).mailbox, 8);
    /* Lower: free members past the new max end; the one in use stays. */
    u = (shoal_pool_checkout_update_t){1, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, TMO), SHOAL_OK);
    WAIT_UNTIL(stats(rt, pool).free == 0);
    st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_TRUE(alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

static void test_start_failures(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = spec_of(0, 2);
    s.checkout.add_member_retry = 2;
    s.restart.backoff_ms = 100;
    shoal_pid_t pool = start(rt, &s);
    atomic_store(&init_fail, 1);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &a), SHOAL_ENOMEMBERS);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.start_failures, 2);
    CU_ASSERT_EQUAL(st.pool_size, 0);
    shoal_test_assert_logged("a member did not start");
    /* The backend is back: after the backoff, takes work again. */
    atomic_store(&init_fail, 0);
    struct timespec ts = {0, 150000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    /* A pool whose init members cannot start does not start. */
    atomic_store(&init_fail, 1);
    shoal_pool_spec_t s2 = spec_of(2, 2);
    shoal_pid_t p2;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s2, &p2), SHOAL_EFAILED);
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
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(2, 2);
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    drainer_t d = {rt, pool, 99};
    pthread_t th;
    pthread_create(&th, NULL, drain_main, &d);
    WAIT_UNTIL(stats(rt, pool).state == SHOAL_POOL_DRAINING && stats(rt, pool).free == 0);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1); /* the free one has ended; a is still in use */
    CU_ASSERT_TRUE(alive(rt, a));
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &b), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_WHO, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(d.rc, 99);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_FALSE(alive(rt, a));
    shoal_runtime_destroy(rt);
}

static void test_bad_specs(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(1);
    shoal_pid_t p;
    shoal_pool_spec_t s = spec_of(3, 2); /* init past max */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = spec_of(1, 2);
    s.checkout.lease_ms = 0;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = spec_of(1, 2);
    s.checkout.max_lifetime_ms = 100;
    s.checkout.max_lifetime_jitter_ms = 100;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = spec_of(1, 2);
    s.idle_timeout_ms = 100; /* elastic settings are not a checkout pool's */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    s = spec_of(1, 2);
    s.checkout.group = "";
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    /* A take from a pool that is not a checkout pool. */
    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &member;
    f.size = 1;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &f, &p), SHOAL_OK);
    shoal_pid_t m;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, p, 0, &m), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, 12345, 0, &m), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- edges a review found (each failed before its fix) -------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A take that cannot wait (timeout 0) still starts a member for the next. */
static void test_nowait_take_starts_member(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(0, 2);
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t m;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &m), SHOAL_ENOMEMBERS);
    WAIT_UNTIL(stats(rt, pool).free == 1);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &m), SHOAL_OK);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    CU_ASSERT_EQUAL(atomic_load(&started), 1);
    shoal_runtime_destroy(rt);
}

/* UINT64_MAX is no limit: the take waits. */
static void test_unbounded_timeout(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    taker_t t = {rt, pool, SHOAL_PID_NONE, UINT64_MAX, 99, 0, 99, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, taker_main, &t);
    sleep_ms(300);
    CU_ASSERT_EQUAL(atomic_load(&t.done), 0);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(t.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(t.got, a);
    shoal_runtime_destroy(rt);
}

/* A lease that starts when a return hands the member to a waiting thread
 * is timed from then. */
static void test_lease_armed_on_handover(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.lease_ms = 100;
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = start(rt, &s);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&blocked) == 1); /* a transaction holds the only member */
    taker_t t = {rt, pool, SHOAL_PID_NONE, 30000, 99, 0, 99, 1, 0};
    pthread_t th;
    pthread_create(&th, NULL, taker_main, &t);
    WAIT_UNTIL(stats(rt, pool).queued == 1);
    atomic_store(&gate, 1); /* the transaction ends: the member goes to the thread */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL_FATAL(t.rc, SHOAL_OK);
    WAIT_UNTIL(stats(rt, pool).lease_expired == 1);
    CU_ASSERT_EQUAL(stats(rt, pool).lease_expired, 1);
    CU_ASSERT_TRUE(ended(rt, t.got));
    shoal_runtime_destroy(rt);
}

/* max lowered below the members in use: they end as they come back. */
static void test_lower_max_in_use(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(0, 3);
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t m[3];
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &m[i]), SHOAL_OK);
    shoal_pool_checkout_update_t u = {0, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, TMO), SHOAL_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, m[i], SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(stats(rt, pool).pool_size == 1);
    shoal_pool_stats_t st = stats(rt, pool);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.culled, 2);
    CU_ASSERT_TRUE(alive(rt, m[2])); /* the last back is the one kept */
    shoal_runtime_destroy(rt);
}

/* A free member past its lifetime is replaced when it would be given out. */
static void test_lifetime_found_free(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.max_lifetime_ms = 100;
    s.checkout.cull_interval_ms = 0;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a, b;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    sleep_ms(300);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 5000, &b), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(stats(rt, pool).recycled, 1);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, b, SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* Takes that timed out behind a waiter do not grow the queue for ever. */
static void test_queue_ring_bounded(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = spec_of(1, 1);
    s.checkout.queue_max = 2;
    shoal_pid_t pool = start(rt, &s);
    shoal_pid_t a, x;
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 0, &a), SHOAL_OK);
    taker_t head = {rt, pool, SHOAL_PID_NONE, 20000, 99, 0, 99, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, taker_main, &head);
    WAIT_UNTIL(stats(rt, pool).queued == 1);
    int timeouts = 0;
    for (int k = 0; k < 600; k++)
        timeouts += shoal_runtime_take(rt, pool, 1, &x) == SHOAL_ETIMEDOUT;
    CU_ASSERT_EQUAL(timeouts, 600);
    CU_ASSERT_EQUAL(stats(rt, pool).take_timeouts, 600); /* and a turn of the pool since */
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_TRUE(p->co->qcap <= 16);
    shoal__pool_unref(rt, p);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, a, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(head.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(head.got, a);
    shoal_runtime_destroy(rt);
}

/* Start timeouts count toward add_member_retry: then the takers hear
 * SHOAL_ENOMEMBERS and starts wait restart.backoff. */
static void test_start_timeouts_back_off(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_WARN);
    shoal_pool_spec_t s = spec_of(0, 1);
    s.checkout.member_start_timeout_ms = 30;
    s.checkout.add_member_retry = 1;
    s.checkout.cull_interval_ms = 0;
    s.restart.backoff_ms = 5000;
    shoal_pid_t pool = start(rt, &s);
    atomic_store(&init_delay_ms, 80);
    shoal_pid_t m;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pool, 1000, &m), SHOAL_ENOMEMBERS);
    CU_ASSERT_TRUE(shoal_test_now() - t0 < 0.9);
    CU_ASSERT_EQUAL(stats(rt, pool).start_failures, 1);
    shoal_test_assert_logged("a member did not start within 30 ms: stopped");
    atomic_store(&init_delay_ms, 0);
    sleep_ms(200);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"take and return from a thread", test_thread_take_return},
        {"waiting takers, queue_max and timeouts", test_queue_and_timeouts},
        {"growth to max on demand", test_grow_to_max},
        {"a consumer's end: normal, crash, unanswered takes", test_consumer_ends},
        {"members crashing in use and free", test_member_crashes},
        {"a thread's lease expires", test_lease_expiry},
        {"culled to init after max_age", test_cull_to_init},
        {"max_lifetime only on return", test_lifetime_on_return},
        {"transactions: ok, failed, admission", test_transactions},
        {"groups: random, most free, none", test_groups},
        {"settings changed live", test_set_checkout_live},
        {"start failures and add_member_retry", test_start_failures},
        {"drain waits for members in use", test_drain_waits_for_returns},
        {"bad specs", test_bad_specs},
        {"a take that cannot wait starts a member", test_nowait_take_starts_member},
        {"UINT64_MAX: no limit", test_unbounded_timeout},
        {"a lease timed from a hand-over", test_lease_armed_on_handover},
        {"max lowered below the members in use", test_lower_max_in_use},
        {"lifetime checked when found free", test_lifetime_found_free},
        {"the takers' queue stays bounded", test_queue_ring_bounded},
        {"start timeouts back off", test_start_timeouts_back_off},
        {NULL, NULL},
    };
    return shoal_test_run("checkout", cases);
}
