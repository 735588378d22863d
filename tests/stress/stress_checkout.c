/* stress_checkout.c - a checkout pool under load, with consumers and
 * members that crash (core/pool/checkout*.c, core/actor/held.c).
 *
 * For 10 s (2 s at least, scaled by SHOAL_STRESS_SCALE), CONSUMERS actors
 * loop: take a member (a short timeout), claim it in an
 * owner table, call it, release the claim, give it back -- OK mostly,
 * FAIL sometimes; now and then one panics or ends while it holds a member
 * (a driver thread starts another in its place). Every TXN_EVERY-th round
 * is a transaction instead (shoal_checkout_call). Members panic on a few
 * calls (in use) and a chaos thread makes free-looking members panic too;
 * the pool culls, recycles by lifetime, and grows and shrinks with demand,
 * while a flipper thread moves its max and queue_max live every 5 ms (as
 * reloads would). A sampler thread asks the pool for its counters all
 * along.
 *
 * Checked: no member is ever held by two consumers (the owner table's
 * claim, a compare-and-swap from 0, never fails; a member's reply is its
 * own); at every sample in_use + free + starting == the live members the
 * pool counts seat by seat, and never more than max; at the end, once the
 * consumers have stopped: nothing in use, nothing queued, the transactions'
 * ledger balances (forwarded = handled + failed + dropped), and every call
 * a consumer made was answered.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define CONSUMERS 12
#define MAXM 6u
#define TXN_EVERY 5
#define OWNERS 65536u /* the runtime's max_actors: a slot is an index */

enum { T_USE = 1, C_GO = 2, C_TICK = 3 };

static shoal_runtime_t *rt;
static shoal_pid_t pool;
static _Atomic shoal_pid_t owner[OWNERS]; /* a member's slot: who claims it */
static atomic_int violations, stop_all, rounds_left, calls_out, calls_answered, bad_replies;
static atomic_int ended_consumers;

/* ---- the member ------------------------------------------------------------- */

static uint32_t slot_of(shoal_pid_t pid) { return (uint32_t)pid % OWNERS; }

static int m_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    /* A new actor in this slot: a claim left by a consumer that crashed
     * holding the slot's last member is void. */
    atomic_store(&owner[slot_of(shoal_self(ctx))], SHOAL_PID_NONE);
    return SHOAL_OK;
}

static int m_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    uint32_t *n = state;
    uint64_t v = 0;
    if (msg->size == sizeof v)
        memcpy(&v, msg->data, sizeof v);
    if (++*n % 97 == 0)
        shoal_panic(ctx, "member breaks on use %u", *n);
    shoal_pid_t self = shoal_self(ctx);
    return shoal_reply_set(reply, msg->type, &self, sizeof self);
}

static int m_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == 77)
        shoal_panic(ctx, "chaos");
    return SHOAL_OK;
}

static const shoal_behaviour_t member = {
    .name = "conn",
    .state_size = sizeof(uint32_t),
    .init = m_init,
    .handle_message = m_message,
    .handle_call = m_call,
};

/* ---- the consumer --------------------------------------------------------------- */

typedef struct {
    uint32_t round;
    shoal_pid_t held;
    shoal_ref_t take_ref, call_ref; /* outstanding: a take, a call (member's or a transaction) */
    uint32_t prng;
} consumer_t;

static uint32_t next_random(consumer_t *c)
{
    uint32_t x = c->prng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return c->prng = x;
}

/* Gives up the claim on m, if it is still ours. */
static void unclaim(shoal_pid_t m)
{
    shoal_pid_t mine = m;
    atomic_compare_exchange_strong(&owner[slot_of(m)], &mine, SHOAL_PID_NONE);
}

/* Claims member m in its slot. Held by nobody, or only by a claim left by
 * an earlier actor of the slot (an older generation: it has ended), the
 * claim is ours. A newer generation there means m has ended and its slot
 * is someone else's already (the pool granted m before it heard): no
 * claim. The same PID there: m is held twice -- the violation. */
static void claim(shoal_pid_t m)
{
    _Atomic shoal_pid_t *o = &owner[slot_of(m)];
    shoal_pid_t seen = atomic_load(o);
    for (;;) {
        if (seen == m) {
            atomic_fetch_add(&violations, 1);
            return;
        }
        if (seen != SHOAL_PID_NONE && (seen >> 32) > (m >> 32))
            return; /* stale grant of an ended member */
        if (atomic_compare_exchange_weak(o, &seen, m))
            return;
    }
}

static void next_round(shoal_ctx_t *ctx, consumer_t *c)
{
    if (atomic_load(&stop_all) || atomic_fetch_sub(&rounds_left, 1) <= 0) {
        shoal_exit(ctx, SHOAL_OK);
        return;
    }
    c->round++;
    if (c->round % TXN_EVERY == 0) {
        uint64_t v = c->round;
        if (shoal_checkout_call(ctx, pool, T_USE, &v, sizeof v, 2000, &c->call_ref) == SHOAL_OK)
            atomic_fetch_add(&calls_out, 1);
        else
            shoal_send(ctx, shoal_self(ctx), C_TICK, NULL, 0); /* refused: try again */
        return;
    }
    if (shoal_take(ctx, pool, 20, &c->take_ref) != SHOAL_OK)
        shoal_send(ctx, shoal_self(ctx), C_TICK, NULL, 0);
}

/* The answer to the member's call, or to a transaction. */
static void on_call_answer(shoal_ctx_t *ctx, consumer_t *c, const shoal_msg_t *msg)
{
    atomic_fetch_add(&calls_answered, 1);
    shoal_pid_t m = c->held;
    if (m == SHOAL_PID_NONE) { /* a transaction, or our member ended meanwhile */
        next_round(ctx, c);
        return;
    }
    if (msg->kind == SHOAL_MSG_REPLY && msg->status == SHOAL_OK) {
        shoal_pid_t who;
        memcpy(&who, msg->data, sizeof who);
        if (who != m)
            atomic_fetch_add(&bad_replies, 1);
    }
    unclaim(m);
    uint32_t r = next_random(c) % 100;
    if (r == 0)
        shoal_panic(ctx, "consumer crashes holding a member");
    if (r == 1) { /* ends holding it: it goes back by itself */
        atomic_fetch_add(&ended_consumers, 1);
        shoal_exit(ctx, SHOAL_OK);
        return;
    }
    c->held = SHOAL_PID_NONE;
    shoal_return(ctx, m, r < 6 ? SHOAL_RETURN_FAIL : SHOAL_RETURN_OK);
    next_round(ctx, c);
}

static void on_take_answer(shoal_ctx_t *ctx, consumer_t *c, const shoal_msg_t *msg)
{
    if (msg->kind != SHOAL_MSG_REPLY || msg->status != SHOAL_OK) {
        next_round(ctx, c);
        return;
    }
    shoal_checkout_member_t g;
    memcpy(&g, msg->data, sizeof g);
    claim(g.member);
    c->held = g.member;
    uint64_t v = c->round;
    if (shoal_call(ctx, g.member, T_USE, &v, sizeof v, 2000, &c->call_ref) == SHOAL_OK) {
        atomic_fetch_add(&calls_out, 1);
        return;
    }
    /* It has ended already (its EXIT is on the way): on to the next round. */
    unclaim(g.member);
    c->held = SHOAL_PID_NONE;
    shoal_return(ctx, g.member, SHOAL_RETURN_OK);
    next_round(ctx, c);
}

static int c_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    consumer_t *c = state;
    if (msg->kind == SHOAL_MSG_CAST && (msg->type == C_GO || msg->type == C_TICK)) {
        if (c->prng == 0)
            c->prng = (uint32_t)shoal_self(ctx) | 1u;
        next_round(ctx, c);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_EXIT) { /* the member we hold ended */
        if (msg->from == c->held) {
            unclaim(c->held);
            c->held = SHOAL_PID_NONE; /* the call's answer (ENOPROC or TIMEOUT) goes on */
        }
        return SHOAL_OK;
    }
    if (msg->kind != SHOAL_MSG_REPLY && msg->kind != SHOAL_MSG_TIMEOUT)
        return SHOAL_OK;
    if (c->take_ref != 0 && msg->ref == c->take_ref) {
        c->take_ref = 0;
        on_take_answer(ctx, c, msg);
    } else if (c->call_ref != 0 && msg->ref == c->call_ref) {
        c->call_ref = 0;
        on_call_answer(ctx, c, msg);
    }
    return SHOAL_OK;
}

static void c_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    (void)reason;
}

static const shoal_behaviour_t consumer = {
    .name = "consumer",
    .state_size = sizeof(consumer_t),
    .handle_message = c_message,
    .terminate = c_terminate,
};

/* ---- threads ----------------------------------------------------------------------- */

static atomic_int samples, bad_samples;

static void *sampler_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_all)) {
        shoal_pool_stats_t st;
        if (shoal_pool_stats(rt, pool, &st, 5000) == SHOAL_OK) {
            atomic_fetch_add(&samples, 1);
            if (st.in_use + st.free + st.starting != st.pool_size || st.pool_size > MAXM) {
                if (atomic_fetch_add(&bad_samples, 1) == 0)
                    fprintf(stderr, "bad sample: in_use %u free %u starting %u size %u\n",
                            st.in_use, st.free, st.starting, st.pool_size);
            }
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Changes max and queue_max live, as a reload would, all along. */
static atomic_int flips;

static void *flipper_main(void *arg)
{
    const shoal_pool_checkout_t *base = arg;
    for (uint32_t k = 0; !atomic_load(&stop_all); k++) {
        shoal_pool_checkout_update_t u = {2, k % 2 ? MAXM : MAXM - 2, *base};
        u.checkout.queue_max = k % 3 ? CONSUMERS : CONSUMERS / 2;
        if (shoal_pool_set_checkout(rt, pool, &u, 5000) == SHOAL_OK)
            atomic_fetch_add(&flips, 1);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Makes a member that is not known to be held panic now and then. */
static void *chaos_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_all)) {
        shoal_pid_t m;
        if (shoal_runtime_take(rt, pool, 5, &m) == SHOAL_OK) {
            shoal_runtime_return(rt, pool, m, SHOAL_RETURN_OK);
            shoal_runtime_send(rt, m, 77, NULL, 0); /* free now, or someone's: both fine */
        }
        struct timespec ts = {0, 3000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void test_checkout_under_crashes(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_ERROR;
    o.max_actors = OWNERS; /* every live actor has a slot of its own below OWNERS */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    /* Long enough for culls and lifetimes to come round many times. */
    double scale = shoal_test_stress_scale(0.1);
    double seconds = 10 * scale < 2 ? 2 : 10 * scale;
    atomic_store(&rounds_left, INT_MAX);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "db";
    s.kind = SHOAL_POOL_KIND_CHECKOUT;
    s.worker = &member;
    s.size = 2;
    s.max_size = MAXM;
    s.restart.max = 1000000; /* crashes are the point here */
    s.checkout.queue_max = CONSUMERS;
    s.checkout.cull_interval_ms = 10;
    s.checkout.max_age_ms = 20;
    s.checkout.max_lifetime_ms = 4;
    s.checkout.max_lifetime_jitter_ms = 1;
    s.checkout.lease_ms = 1000;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    pthread_t sampler, chaos, flipper;
    pthread_create(&sampler, NULL, sampler_main, NULL);
    pthread_create(&chaos, NULL, chaos_main, NULL);
    pthread_create(&flipper, NULL, flipper_main, &s.checkout);
    shoal_pid_t c[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++) {
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &consumer, NULL, NULL, &c[i]), SHOAL_OK);
        shoal_runtime_send(rt, c[i], C_GO, NULL, 0);
    }
    /* Consumers that end (crash, or end holding) are replaced until the
     * rounds are used up. */
    double end = shoal_test_now() + seconds;
    while (shoal_test_now() < end) {
        for (int i = 0; i < CONSUMERS; i++) {
            if (shoal_runtime_send(rt, c[i], 999, NULL, 0) == SHOAL_ENOPROC &&
                atomic_load(&rounds_left) > 0 &&
                shoal_runtime_spawn(rt, &consumer, NULL, NULL, &c[i]) == SHOAL_OK)
                shoal_runtime_send(rt, c[i], C_GO, NULL, 0);
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    int rounds = INT_MAX - atomic_exchange(&rounds_left, 0);
    /* Every consumer ends once its round finds none left. */
    for (int i = 0; i < CONSUMERS; i++)
        SHOAL_TEST_WAIT_UNTIL(shoal_runtime_send(rt, c[i], 999, NULL, 0) == SHOAL_ENOPROC, 30.0);
    atomic_store(&stop_all, 1);
    pthread_join(sampler, NULL);
    pthread_join(chaos, NULL);
    pthread_join(flipper, NULL);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_pool_stats(rt, pool).in_use == 0 &&
                              shoal_test_pool_stats(rt, pool).queued == 0,
                          30.0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    fprintf(stderr,
            "checkout stress: %d rounds, %d samples, takes %llu, ok %llu, fail %llu, "
            "killed in use %llu, killed free %llu, culled %llu, recycled %llu, no members %llu, "
            "transactions %llu (handled %llu failed %llu), consumers ended holding %d\n",
            rounds, atomic_load(&samples), (unsigned long long)st.takes,
            (unsigned long long)st.returned_ok, (unsigned long long)st.returned_fail,
            (unsigned long long)st.killed_in_use, (unsigned long long)st.killed_free,
            (unsigned long long)st.culled, (unsigned long long)st.recycled,
            (unsigned long long)st.error_no_members, (unsigned long long)st.messages_forwarded,
            (unsigned long long)st.messages_handled, (unsigned long long)st.messages_failed,
            atomic_load(&ended_consumers));
    CU_ASSERT_EQUAL(atomic_load(&violations), 0);
    CU_ASSERT_EQUAL(atomic_load(&calls_out), atomic_load(&calls_answered));
    CU_ASSERT_EQUAL(atomic_load(&bad_replies), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_samples), 0);
    CU_ASSERT_TRUE(atomic_load(&samples) > 0);
    CU_ASSERT_TRUE(atomic_load(&flips) > 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_TRUE(st.pool_size <= MAXM);
    CU_ASSERT_EQUAL(st.in_use + st.free + st.starting, st.pool_size);
    CU_ASSERT_EQUAL(st.messages_forwarded,
                    st.messages_handled + st.messages_failed + st.messages_dropped);
    CU_ASSERT_TRUE(st.takes > 0 && st.killed_in_use > 0 && st.returned_fail > 0);
    CU_ASSERT_TRUE(st.killed_free > 0);
    /* The load gone, idle members end (culled, or recycled past their
     * lifetime) back to init (2), not below. Under load few members live
     * their 4 ms (fails and kills replace them sooner: recycled was 0..7
     * in a run), so recycling is asserted here, where it is certain: the
     * free members pass their lifetime and each cull replaces them. */
    SHOAL_TEST_WAIT_UNTIL(shoal_test_pool_stats(rt, pool).pool_size == 2, 30.0);
    uint64_t recycled = shoal_test_pool_stats(rt, pool).recycled;
    SHOAL_TEST_WAIT_UNTIL(shoal_test_pool_stats(rt, pool).recycled > recycled, 30.0);
    /* One snapshot with both free: a replacement may be starting between
     * two reads. */
    SHOAL_TEST_WAIT_UNTIL((st = shoal_test_pool_stats(rt, pool)).pool_size == 2 && st.free == 2,
                          30.0);
    CU_ASSERT_TRUE(st.recycled > recycled);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.free, 2);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a checkout pool under crashing consumers and members", test_checkout_under_crashes},
        {NULL, NULL},
    };
    return shoal_test_run("stress_checkout", cases);
}
