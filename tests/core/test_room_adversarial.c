/* test_room_adversarial.c - backpressure without polling (room.h, forward.c,
 * pull_room.c; shoal_runtime_send_wait and shoal_notify_room), used the way
 * a careless operator and a hostile caller would, with exact outcomes:
 *   - eight threads send_wait into one bounded actor, a forward pool, a
 *     pull pool: exactly the capacity gets in, exactly max_waiting wait,
 *     the rest get SHOAL_EOVERLOAD at once; the receiver drains, is
 *     stopped, is drained, resized down and up, or a worker crashes: every
 *     waiter gets the documented answer and none is left counted;
 *   - a checkout pool (sends are transactions: SHOAL_ENOMEMBERS, and it
 *     cannot tell: SHOAL_ENOTSUP) and a pool of pools (max_waiting refused;
 *     room in a leaf is room in it: at once, for a thread whose ask comes
 *     after the leaves drained, and after a resize);
 *   - notify_room asked twice, for a receiver that has room already, for
 *     receivers that are gone, by askers that end before their ROOM, by
 *     thousands of askers at once, by producers streaming against drains;
 *   - send_wait with timeouts of 0, UINT64_MAX and one just short of "no
 *     limit", with bad arguments, from a dispatcher thread, and with short
 *     timeouts racing the drains that tell them.
 *
 * Four bugs this suite found are fixed, and the cases hold them: a pool of
 * pools with room told nobody at once (a send_wait into it could sleep to
 * its deadline); a pull pool that ended told its waiting actors SHOAL_OK,
 * not SHOAL_ENOPROC; an asker that ended still counted as waiting (and
 * against max_waiting); a timeout just short of "no limit" overflowed the
 * deadline into the past.
 *
 * No assertion is about time: deadlines are only upper bounds of waits.
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actor/room.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
/* An upper bound for a wait that should end at once (nothing is stuck);
 * a bug makes the case wait for it in full. */
#define SOON_S 5.0
#define TMO 10000u
#define LONG_MS 60000u /* send_wait timeouts that must not expire */
#define NIDS 32768u
#define NA 2400u /* askers */
#define NT 8     /* threads that send_wait */

enum { T_ITEM = 1, T_BLOCK = 2, T_NOP = 3, T_ORDER = 4 };
enum { ROLE_WAIT = 0, ROLE_PANIC = 1 };

/* ---- the receiver ----------------------------------------------------------- */

static atomic_int gate, gate2, entered, handled, slow_us;
static atomic_int seen[NIDS];

/* T_BLOCK (payload: a role, or none) waits until `gate` opens -- or, role
 * ROLE_PANIC, until `gate2` opens, then panics. T_ITEM (payload: an id)
 * is counted, once per id in seen[]. */
static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == T_BLOCK) {
        uint32_t role = ROLE_WAIT;
        if (msg->size == sizeof role)
            memcpy(&role, msg->data, sizeof role);
        atomic_fetch_add(&entered, 1);
        if (role == ROLE_PANIC) {
            shoal_test_wait_flag(&gate2, WAIT_S);
            shoal_panic(ctx, "a worker crashes on purpose");
        }
        shoal_test_wait_flag(&gate, WAIT_S);
        return 0;
    }
    if (msg->type == T_ITEM && msg->size == sizeof(uint32_t)) {
        uint32_t id;
        memcpy(&id, msg->data, sizeof id);
        int us = atomic_load(&slow_us);
        if (us != 0) {
            struct timespec ts = {0, us * 1000L};
            nanosleep(&ts, NULL);
        }
        if (id < NIDS)
            atomic_fetch_add(&seen[id], 1);
        atomic_fetch_add(&handled, 1);
    }
    return 0;
}

static const shoal_behaviour_t sink = {.name = "sink", .handle_message = sink_message};

/* ---- the asker: an actor that sends, and asks for ROOM when refused --------- */

enum { O_ASK = 1, O_PRODUCE, O_SYNC, O_EXIT };

/* O_PRODUCE: items id, id + 1, ... (n of them, at least one) to `to`. */
typedef struct {
    uint32_t op;
    uint32_t id;
    uint32_t n;
    shoal_pid_t to;
} order_t;

typedef struct {
    uint32_t i;
    uint32_t id, left; /* the next item, and how many are left */
    shoal_pid_t to;
    bool produce;
} asker_t;

/* Per asker i: orders done (acks), asks that returned SHOAL_OK, the last
 * ask's result (99: none), sends refused full/busy, the last other send
 * result, whether all its items went in or it gave up, the ROOMs it got with
 * the last one's status and sender, ROOMs from a receiver it did not ask
 * (bad), and whether it has ended. */
static atomic_int a_acks[NA], a_asks[NA], a_ask_rc[NA], a_refused[NA], a_send_rc[NA], a_sent[NA],
    a_gaveup[NA], a_rooms[NA], a_room_status[NA], a_bad[NA], a_ended[NA];
static _Atomic shoal_pid_t a_room_from[NA];
static uint32_t a_index[NA];

/* Sends until refused; refused full or busy, asks for ROOM and stops until
 * it comes (never a retry without one). */
static void produce(shoal_ctx_t *ctx, asker_t *st)
{
    int rc = SHOAL_OK;
    while (st->left != 0 &&
           (rc = shoal_send(ctx, st->to, T_ITEM, &st->id, sizeof st->id)) == SHOAL_OK) {
        st->id++;
        st->left--;
    }
    if (st->left == 0) {
        atomic_store(&a_sent[st->i], 1);
        return;
    }
    if (rc != SHOAL_EFULL && rc != SHOAL_EBUSY) {
        atomic_store(&a_send_rc[st->i], rc);
        atomic_store(&a_gaveup[st->i], 1);
        return;
    }
    atomic_fetch_add(&a_refused[st->i], 1);
    int ask = shoal_notify_room(ctx, st->to);
    atomic_store(&a_ask_rc[st->i], ask);
    if (ask == SHOAL_OK)
        atomic_fetch_add(&a_asks[st->i], 1);
    else
        atomic_store(&a_gaveup[st->i], 1);
}

static int asker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    asker_t *st = state;
    st->i = *(const uint32_t *)args;
    return 0;
}

static int asker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    asker_t *st = state;
    if (msg->kind == SHOAL_MSG_ROOM) {
        atomic_store(&a_room_status[st->i], msg->status);
        atomic_store(&a_room_from[st->i], msg->from);
        if (msg->from != st->to)
            atomic_fetch_add(&a_bad[st->i], 1);
        atomic_fetch_add(&a_rooms[st->i], 1);
        if (st->produce && st->left != 0 && msg->status == SHOAL_OK)
            produce(ctx, st);
        return 0;
    }
    order_t o;
    if (msg->type != T_ORDER || msg->size != sizeof o)
        return 0;
    memcpy(&o, msg->data, sizeof o);
    switch (o.op) {
    case O_ASK: {
        st->to = o.to;
        int rc = shoal_notify_room(ctx, o.to);
        atomic_store(&a_ask_rc[st->i], rc);
        if (rc == SHOAL_OK)
            atomic_fetch_add(&a_asks[st->i], 1);
        break;
    }
    case O_PRODUCE:
        st->to = o.to;
        st->id = o.id;
        st->left = o.n != 0 ? o.n : 1;
        st->produce = true;
        produce(ctx, st);
        break;
    case O_EXIT:
        shoal_exit(ctx, SHOAL_OK);
        break;
    default:
        break;
    }
    atomic_fetch_add(&a_acks[st->i], 1);
    return 0;
}

static void asker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)reason;
    atomic_store(&a_ended[((asker_t *)state)->i], 1);
}

static const shoal_behaviour_t asker = {.name = "asker",
                                        .state_size = sizeof(asker_t),
                                        .init = asker_init,
                                        .handle_message = asker_message,
                                        .terminate = asker_terminate};

static void reset(void)
{
    atomic_store(&gate, 0);
    atomic_store(&gate2, 0);
    atomic_store(&entered, 0);
    atomic_store(&handled, 0);
    atomic_store(&slow_us, 0);
    for (uint32_t i = 0; i < NIDS; i++)
        atomic_store(&seen[i], 0);
    for (uint32_t i = 0; i < NA; i++) {
        a_index[i] = i;
        atomic_store(&a_acks[i], 0);
        atomic_store(&a_asks[i], 0);
        atomic_store(&a_ask_rc[i], 99);
        atomic_store(&a_refused[i], 0);
        atomic_store(&a_send_rc[i], 99);
        atomic_store(&a_sent[i], 0);
        atomic_store(&a_gaveup[i], 0);
        atomic_store(&a_rooms[i], 0);
        atomic_store(&a_room_status[i], 99);
        atomic_store(&a_bad[i], 0);
        atomic_store(&a_ended[i], 0);
        atomic_store(&a_room_from[i], SHOAL_PID_NONE);
    }
}

static shoal_pid_t spawn_asker(shoal_runtime_t *rt, uint32_t i)
{
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &asker, &a_index[i], NULL, &pid), SHOAL_OK);
    return pid;
}

static void tell(shoal_runtime_t *rt, shoal_pid_t who, uint32_t op, shoal_pid_t to, uint32_t id)
{
    order_t o = {.op = op, .id = id, .to = to};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, who, T_ORDER, &o, sizeof o), SHOAL_OK);
}

static void tell_stream(shoal_runtime_t *rt, shoal_pid_t who, shoal_pid_t to, uint32_t first,
                        uint32_t n)
{
    order_t o = {.op = O_PRODUCE, .id = first, .n = n, .to = to};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, who, T_ORDER, &o, sizeof o), SHOAL_OK);
}

/* Asker i asks for ROOM from `to`, then handles a SYNC: a ROOM told during
 * the ask (at once) is in its system mailbox before the SYNC is handled,
 * and the system mailbox goes first, so its count is exact afterwards.
 * Returns the ask's result. */
static int ask_sync(shoal_runtime_t *rt, shoal_pid_t who, uint32_t i, shoal_pid_t to)
{
    int before = atomic_load(&a_acks[i]);
    tell(rt, who, O_ASK, to, 0);
    tell(rt, who, O_SYNC, SHOAL_PID_NONE, 0);
    WAIT_UNTIL(atomic_load(&a_acks[i]) == before + 2);
    CU_ASSERT_EQUAL(atomic_load(&a_acks[i]), before + 2);
    return atomic_load(&a_ask_rc[i]);
}

/* ---- threads that send_wait --------------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    uint32_t id;
    uint64_t timeout_ms;
    int rc;
    atomic_int done;
    pthread_t t;
} waiter_t;

static void *waiter_main(void *arg)
{
    waiter_t *w = arg;
    w->rc = shoal_runtime_send_wait(w->rt, w->to, T_ITEM, &w->id, sizeof w->id, w->timeout_ms);
    atomic_store(&w->done, 1);
    return NULL;
}

static void start_waiters(waiter_t *w, int n, shoal_runtime_t *rt, shoal_pid_t to,
                          uint32_t first_id, uint64_t timeout_ms)
{
    for (int k = 0; k < n; k++) {
        w[k] = (waiter_t){.rt = rt, .to = to, .id = first_id + (uint32_t)k};
        w[k].timeout_ms = timeout_ms;
        atomic_init(&w[k].done, 0);
        CU_ASSERT_EQUAL_FATAL(pthread_create(&w[k].t, NULL, waiter_main, &w[k]), 0);
    }
}

static void join_waiters(waiter_t *w, int n)
{
    for (int k = 0; k < n; k++)
        pthread_join(w[k].t, NULL);
}

static int done_count(waiter_t *w, int n)
{
    int d = 0;
    for (int k = 0; k < n; k++)
        d += atomic_load(&w[k].done);
    return d;
}

/* Of the waiters that are done, how many returned rc. */
static int rc_count(waiter_t *w, int n, int rc)
{
    int c = 0;
    for (int k = 0; k < n; k++)
        c += atomic_load(&w[k].done) && w[k].rc == rc;
    return c;
}

/* ---- receivers ------------------------------------------------------------------ */

static shoal_pid_t spawn_sink(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &sink, NULL, &o, &pid), SHOAL_OK);
    return pid;
}

/* A forward pool of `size` sinks with mailboxes of `mailbox`, least
 * loaded first (a second T_BLOCK goes to an idle worker, not behind the
 * first), or a pull pool of `size` sinks, prefetch 1, buffer `mailbox`. */
static shoal_pool_spec_t pool_spec(uint32_t kind, uint32_t size, uint32_t mailbox,
                                   uint32_t max_waiting)
{
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.worker = &sink;
    sp.size = size;
    sp.kind = kind;
    sp.max_waiting = max_waiting;
    if (kind == SHOAL_POOL_KIND_PULL) {
        sp.prefetch = 1;
        sp.buffer = mailbox;
    } else {
        sp.mailbox = mailbox;
        sp.strategy = SHOAL_POOL_STRATEGY_LEAST_LOADED;
    }
    return sp;
}

static shoal_pid_t spawn_pool(shoal_runtime_t *rt, const shoal_pool_spec_t *sp)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, sp, &p), SHOAL_OK);
    return p;
}

/* Sends n T_BLOCKs, one at a time, each entering its handler (a worker of
 * its own) before the next. */
static void block(shoal_runtime_t *rt, shoal_pid_t to, int n)
{
    int before = atomic_load(&entered);
    for (int k = 0; k < n; k++) {
        uint32_t role = ROLE_WAIT;
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, to, T_BLOCK, &role, sizeof role), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&entered) == before + k + 1);
        CU_ASSERT_EQUAL(atomic_load(&entered), before + k + 1);
    }
}

/* Items first_id, first_id + 1, ... until the receiver refuses one (full or
 * busy); how many went in. */
static int fill(shoal_runtime_t *rt, shoal_pid_t to, uint32_t first_id)
{
    for (uint32_t n = 0; n < 1000; n++) {
        uint32_t id = first_id + n;
        int rc = shoal_runtime_send(rt, to, T_ITEM, &id, sizeof id);
        if (rc != SHOAL_OK) {
            CU_ASSERT(rc == SHOAL_EFULL || rc == SHOAL_EBUSY);
            return (int)n;
        }
    }
    CU_FAIL("the receiver never refused");
    return 1000;
}

static uint32_t waiting_of(shoal_runtime_t *rt, shoal_pid_t pool)
{
    return shoal_test_pool_stats(rt, pool).waiting;
}

/* Waiters registered for room in the plain actor `receiver`, and its flag
 * agrees (room.h). */
static size_t waiters_of(shoal_runtime_t *rt, shoal_pid_t receiver)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(receiver));
    size_t n = shoal__room_count(rt, receiver);
    if (n != 0 && !(atomic_load(&a->limit) & SHOAL_LIMIT_ROOM))
        return 1000; /* a waiter without the flag: it would never be told */
    return n;
}

static int seen_of(uint32_t id) { return atomic_load(&seen[id]); }

/* ---- many threads into one bounded actor ------------------------------------- */

/* A sink of mailbox 3, stuck: of eight threads, exactly three get in and
 * five wait (nothing handled yet); the gate opens: all eight get SHOAL_OK,
 * each item handled once, nobody left waiting. Then a sink of mailbox 1,
 * stuck and full, with eight waiters, is stopped: each hears SHOAL_ENOPROC,
 * none of their items is handled, none is left waiting. */
static void eight_threads_into_one_bounded_actor(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn_sink(rt, 3);
    block(rt, s, 1);
    waiter_t w[NT];
    start_waiters(w, NT, rt, s, 0, LONG_MS);
    WAIT_UNTIL(done_count(w, NT) == 3 && waiters_of(rt, s) == NT - 3);
    CU_ASSERT_EQUAL(done_count(w, NT), 3);
    CU_ASSERT_EQUAL(rc_count(w, NT, SHOAL_OK), 3);
    CU_ASSERT_EQUAL(waiters_of(rt, s), NT - 3);
    CU_ASSERT_EQUAL(atomic_load(&handled), 0);
    atomic_store(&gate, 1);
    join_waiters(w, NT);
    for (int k = 0; k < NT; k++)
        CU_ASSERT_EQUAL(w[k].rc, SHOAL_OK);
    /* A marker sent after every send returned is handled after them all
     * (one mailbox, first in first out): then the count is final. */
    uint32_t marker = 999;
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, s, T_ITEM, &marker, sizeof marker, LONG_MS),
                    SHOAL_OK);
    WAIT_UNTIL(seen_of(marker) == 1);
    CU_ASSERT_EQUAL(atomic_load(&handled), NT + 1);
    for (int k = 0; k < NT; k++)
        CU_ASSERT_EQUAL(seen_of((uint32_t)k), 1);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);

    /* The same eight wait on a receiver that is stopped. */
    atomic_store(&gate, 0);
    shoal_pid_t s2 = spawn_sink(rt, 1);
    block(rt, s2, 1);
    CU_ASSERT_EQUAL(fill(rt, s2, 100), 1);
    start_waiters(w, NT, rt, s2, 200, LONG_MS);
    WAIT_UNTIL(waiters_of(rt, s2) == NT);
    CU_ASSERT_EQUAL(waiters_of(rt, s2), NT);
    CU_ASSERT_EQUAL(done_count(w, NT), 0);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, s2), SHOAL_OK);
    atomic_store(&gate, 1); /* its handler returns; the STOP ends it */
    join_waiters(w, NT);
    for (int k = 0; k < NT; k++) {
        CU_ASSERT_EQUAL(w[k].rc, SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(seen_of(200u + (uint32_t)k), 0);
    }
    CU_ASSERT_EQUAL(waiters_of(rt, s2), 0);
    shoal_runtime_destroy(rt);
}

/* ---- max_waiting --------------------------------------------------------------- */

/* A forward pool (2 workers, mailbox 1) and a pull pool (1 worker, buffer
 * 2), each stuck and full, max_waiting 3: of eight threads exactly three
 * wait and five get SHOAL_EOVERLOAD while the pool is still stuck (counted:
 * waiting 3, waiting_refused 5); the gate opens: the three get in, their
 * items handled once, the five's never; nobody is left waiting. */
static void max_waiting_bounds_threads_in_forward_and_pull_pools(void)
{
    for (uint32_t kind = SHOAL_POOL_KIND_FORWARD; kind <= SHOAL_POOL_KIND_PULL; kind++) {
        reset();
        shoal_runtime_t *rt = shoal_test_runtime(4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        bool fwd = kind == SHOAL_POOL_KIND_FORWARD;
        shoal_pool_spec_t sp = pool_spec(kind, fwd ? 2 : 1, fwd ? 1 : 2, 3);
        shoal_pid_t p = spawn_pool(rt, &sp);
        block(rt, p, fwd ? 2 : 1);
        CU_ASSERT_EQUAL(fill(rt, p, 0), 2);
        waiter_t w[NT];
        start_waiters(w, NT, rt, p, 100, LONG_MS);
        WAIT_UNTIL(done_count(w, NT) == NT - 3 && waiting_of(rt, p) == 3);
        CU_ASSERT_EQUAL(done_count(w, NT), NT - 3);
        CU_ASSERT_EQUAL(rc_count(w, NT, SHOAL_EOVERLOAD), NT - 3);
        shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
        CU_ASSERT_EQUAL(st.waiting, 3);
        CU_ASSERT_EQUAL(st.max_waiting, 3);
        CU_ASSERT_EQUAL(st.waiting_refused, NT - 3);
        CU_ASSERT_EQUAL(atomic_load(&handled), 0);
        atomic_store(&gate, 1);
        join_waiters(w, NT);
        CU_ASSERT_EQUAL(rc_count(w, NT, SHOAL_OK), 3);
        CU_ASSERT_EQUAL(rc_count(w, NT, SHOAL_EOVERLOAD), NT - 3);
        WAIT_UNTIL(atomic_load(&handled) == 2 + 3);
        st = shoal_test_pool_stats(rt, p);
        CU_ASSERT_EQUAL(st.messages_forwarded, (fwd ? 2u : 1u) + 2 + 3);
        WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == st.messages_forwarded);
        st = shoal_test_pool_stats(rt, p);
        CU_ASSERT_EQUAL(st.messages_handled, st.messages_forwarded);
        CU_ASSERT_EQUAL(atomic_load(&handled), 2 + 3);
        CU_ASSERT_EQUAL(st.waiting, 0);
        CU_ASSERT_EQUAL(st.waiting_refused, NT - 3);
        CU_ASSERT_EQUAL(seen_of(0), 1);
        CU_ASSERT_EQUAL(seen_of(1), 1);
        for (int k = 0; k < NT; k++)
            CU_ASSERT_EQUAL(seen_of(w[k].id), w[k].rc == SHOAL_OK ? 1 : 0);
        shoal_runtime_destroy(rt);
    }
}

/* ---- a checkout pool ----------------------------------------------------------- */

/* Sends to a checkout pool are transactions (shoal/checkout.h): with its
 * one member in use and no queue (max + queue_max = 1 outstanding), one
 * more is refused SHOAL_ENOMEMBERS -- not full or busy, so send_wait gives
 * it at once and waits for nothing; notify_room on it is SHOAL_ENOTSUP
 * (takers wait in its own queue); max_waiting is refused at spawn (an
 * elastic setting, not a checkout pool's). Nothing waits or is counted
 * waiting; once the member is back, send_wait gets in. */
static void a_checkout_pool_neither_waits_nor_tells(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.kind = SHOAL_POOL_KIND_CHECKOUT;
    sp.worker = &sink;
    sp.size = 1;
    sp.max_size = 1;
    sp.checkout.queue_max = 0;
    sp.checkout.cull_interval_ms = 0;
    sp.max_waiting = 1;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &sp, &p), SHOAL_EINVAL);
    sp.max_waiting = 0;
    p = spawn_pool(rt, &sp);
    block(rt, p, 1); /* a transaction: the member is in use */
    uint32_t id = 7;
    /* Bounded: a send_wait that waited here would come back ETIMEDOUT. */
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, p, T_ITEM, &id, sizeof id, 5000), SHOAL_ENOMEMBERS);
    shoal_pid_t a = spawn_asker(rt, 0);
    tell(rt, a, O_PRODUCE, p, 8);
    WAIT_UNTIL(atomic_load(&a_acks[0]) == 1);
    CU_ASSERT_EQUAL(ask_sync(rt, a, 0, p), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(atomic_load(&a_send_rc[0]), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(atomic_load(&a_refused[0]), 0);
    CU_ASSERT_EQUAL(atomic_load(&a_asks[0]), 0);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[0]), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 0);
    CU_ASSERT_EQUAL(st.waiting_refused, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 2);
    atomic_store(&gate, 1); /* the transaction ends: its member is free again */
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).free == 1);
    uint32_t id2 = 9;
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, p, T_ITEM, &id2, sizeof id2, LONG_MS), SHOAL_OK);
    WAIT_UNTIL(seen_of(9) == 1);
    CU_ASSERT_EQUAL(seen_of(9), 1);
    CU_ASSERT_EQUAL(seen_of(7), 0);
    CU_ASSERT_EQUAL(seen_of(8), 0);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[0]), 0);
    shoal_runtime_destroy(rt);
}

/* ---- pools of pools ------------------------------------------------------------ */

static void nested_specs(shoal_pool_spec_t *outer, shoal_pool_spec_t *inner, uint32_t outer_size,
                         uint32_t inner_mailbox)
{
    shoal_pool_spec_init(inner);
    inner->worker = &sink;
    inner->size = 1;
    inner->mailbox = inner_mailbox;
    shoal_pool_spec_init(outer);
    outer->worker_pool = inner;
    outer->size = outer_size;
    outer->max_size = 4;
}

#define STREAM 10000u

/* One thread streams STREAM items with send_wait (timeout SOON_S) into
 * the pool `to`, where nothing is stuck: whether each returned SHOAL_OK --
 * a refusal is followed by room as soon as the workers drain -- and every
 * item was handled once, with nobody left waiting. */
static bool stream_send_wait(shoal_runtime_t *rt, shoal_pid_t to, uint32_t first)
{
    uint32_t n = 0;
    while (n < STREAM) {
        uint32_t id = first + n;
        if (shoal_runtime_send_wait(rt, to, T_ITEM, &id, sizeof id, (uint64_t)(SOON_S * 1000)) !=
            SHOAL_OK)
            break;
        n++;
    }
    WAIT_UNTIL(shoal_test_pool_stats(rt, to).messages_handled == n);
    int once = 0;
    for (uint32_t k = 0; k < n; k++)
        once += seen_of(first + k) == 1;
    return n == STREAM && shoal_test_pool_stats(rt, to).messages_handled == n && once == (int)n &&
           waiting_of(rt, to) == 0;
}

/* A pool of two pools of one idle worker each has room: an ask is told at
 * once (ctx.h: "at once if there is room already"), as a flat forward pool
 * of idle workers is. max_waiting is refused on a pool of pools. Then one
 * thread streams items with send_wait into a flat pool and a pool of pools
 * (each 2 leaves of mailbox 1), nothing stuck: it never sleeps to its
 * deadline -- when its ask comes after the leaves have drained, the pool
 * of pools must still see their room (room.h: the ask). */
static void a_pool_of_pools_with_room_tells_at_once(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t outer, inner;
    nested_specs(&outer, &inner, 2, 4);
    outer.max_waiting = 2;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &outer, &p), SHOAL_EINVAL);
    outer.max_waiting = 0;
    p = spawn_pool(rt, &outer);
    shoal_pool_spec_t flat = pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 4, 0);
    shoal_pid_t f = spawn_pool(rt, &flat);
    shoal_pid_t a = spawn_asker(rt, 0), b = spawn_asker(rt, 1);
    CU_ASSERT_EQUAL(ask_sync(rt, a, 0, f), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[0]), 1); /* the flat pool: at once */
    CU_ASSERT_EQUAL(atomic_load(&a_room_status[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(ask_sync(rt, b, 1, p), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[1]), 1); /* the pool of pools: at once too */
    CU_ASSERT_EQUAL(atomic_load(&a_room_status[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_room_from[1]), p);
    /* However it went: one item through it, and by then exactly one ROOM
     * (a leaf's drain tells, if nothing did before). */
    uint32_t id = 5;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ITEM, &id, sizeof id), SHOAL_OK);
    WAIT_UNTIL(seen_of(5) == 1 && atomic_load(&a_rooms[1]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[1]), 1);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 0);
    shoal_runtime_destroy(rt);

    /* send_wait, one item after another, nothing stuck. */
    rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t flat1 = pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 1, 0);
    flat1.strategy = SHOAL_POOL_STRATEGY_FIFO;
    shoal_pool_spec_t outer1, inner1;
    nested_specs(&outer1, &inner1, 2, 1);
    CU_ASSERT(stream_send_wait(rt, spawn_pool(rt, &flat1), 100));
    CU_ASSERT(stream_send_wait(rt, spawn_pool(rt, &outer1), 100 + STREAM));
    shoal_runtime_destroy(rt);
}

/* A pool of one pool of one worker (mailbox 1), stuck and full; a thread
 * waits. The outer pool grows to 2: the new inner pool's idle worker is
 * room no drain announces -- as for a flat pool (test_room: "a new worker
 * is room") the waiter is told and gets in while the old leaf is still
 * stuck. */
static void a_pool_of_pools_grown_under_a_waiter_tells_it(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t outer, inner;
    nested_specs(&outer, &inner, 1, 1);
    shoal_pid_t p = spawn_pool(rt, &outer);
    block(rt, p, 1);
    CU_ASSERT_EQUAL(fill(rt, p, 0), 1);
    waiter_t w[1];
    start_waiters(w, 1, rt, p, 10, LONG_MS);
    WAIT_UNTIL(waiting_of(rt, p) == 1);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, TMO), 2);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&w[0].done) == 1, SOON_S);
    CU_ASSERT_EQUAL(atomic_load(&w[0].done), 1); /* in, with the old leaf still stuck */
    CU_ASSERT_EQUAL(atomic_load(&entered), 1);
    atomic_store(&gate, 1);
    join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(seen_of(0) == 1 && seen_of(10) == 1);
    CU_ASSERT_EQUAL(seen_of(0), 1);
    CU_ASSERT_EQUAL(seen_of(10), 1);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 0);
    shoal_runtime_destroy(rt);
}

/* ---- pools that end under waiters ------------------------------------------- */

/* One pool, stuck and full, with four threads and two askers waiting;
 * `stop`: the pool is stopped, else drained (a priority send: the test
 * does not wait for it). Each thread gets SHOAL_ENOPROC and each asker
 * exactly one ROOM, while the pool is still stuck; nobody is left counted
 * waiting; none of the waiters' items is handled. Returns the pool. With
 * `strict`, each ROOM's status must be SHOAL_ENOPROC; else (a drain: the
 * pool has not ended yet) a ROOM of SHOAL_OK is allowed if the asker's
 * next send then finds the pool gone. */
static void pool_ends_under_waiters(uint32_t kind, bool stop, bool strict)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    bool fwd = kind == SHOAL_POOL_KIND_FORWARD;
    shoal_pool_spec_t sp = pool_spec(kind, fwd ? 2 : 1, 1, 0);
    shoal_pid_t p = spawn_pool(rt, &sp);
    block(rt, p, fwd ? 2 : 1);
    int filled = fill(rt, p, 0);
    CU_ASSERT_EQUAL(filled, fwd ? 2 : 1);
    shoal_pid_t a[2] = {spawn_asker(rt, 0), spawn_asker(rt, 1)};
    for (uint32_t i = 0; i < 2; i++)
        tell(rt, a[i], O_PRODUCE, p, 20 + i);
    waiter_t w[4];
    start_waiters(w, 4, rt, p, 10, LONG_MS);
    WAIT_UNTIL(waiting_of(rt, p) == 6);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 6);
    CU_ASSERT_EQUAL(atomic_load(&a_asks[0]) + atomic_load(&a_asks[1]), 2);
    if (stop) {
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, p), SHOAL_OK);
    } else {
        CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    }
    WAIT_UNTIL(done_count(w, 4) == 4 && atomic_load(&a_rooms[0]) == 1 &&
               atomic_load(&a_rooms[1]) == 1);
    CU_ASSERT_EQUAL(rc_count(w, 4, SHOAL_ENOPROC), 4);
    CU_ASSERT_EQUAL(atomic_load(&entered), fwd ? 2 : 1); /* still stuck */
    for (uint32_t i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(atomic_load(&a_rooms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&a_room_from[i]), p);
        CU_ASSERT_EQUAL(atomic_load(&a_bad[i]), 0);
        int status = atomic_load(&a_room_status[i]);
        if (strict) {
            CU_ASSERT_EQUAL(status, SHOAL_ENOPROC);
        } else {
            CU_ASSERT(status == SHOAL_ENOPROC || status == SHOAL_OK);
            if (status == SHOAL_OK) {
                WAIT_UNTIL(atomic_load(&a_gaveup[i]) == 1);
                CU_ASSERT_EQUAL(atomic_load(&a_send_rc[i]), SHOAL_ENOPROC);
            }
        }
        CU_ASSERT_EQUAL(atomic_load(&a_sent[i]), 0);
    }
    if (!stop) /* the pool's actor still answers while its workers finish */
        CU_ASSERT_EQUAL(waiting_of(rt, p), 0);
    atomic_store(&gate, 1);
    join_waiters(w, 4);
    if (!stop) { /* a drain finishes what is queued */
        WAIT_UNTIL(atomic_load(&handled) == filled);
        CU_ASSERT_EQUAL(atomic_load(&handled), filled);
    }
    uint32_t id = 30;
    WAIT_UNTIL(shoal_runtime_send(rt, p, T_ITEM, &id, sizeof id) == SHOAL_ENOPROC);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(seen_of(10 + i), 0);
    CU_ASSERT_EQUAL(seen_of(20) + seen_of(21) + seen_of(30), 0);
    /* Told once: nothing of theirs was left to tell again. */
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[0]) + atomic_load(&a_rooms[1]), 2);
    shoal_runtime_destroy(rt);
}

/* A forward pool drained, then one stopped, under four threads and two
 * askers. */
static void a_forward_pool_ending_under_waiters_tells_enoproc(void)
{
    pool_ends_under_waiters(SHOAL_POOL_KIND_FORWARD, false, true);
    pool_ends_under_waiters(SHOAL_POOL_KIND_FORWARD, true, true);
}

/* The same for a pull pool. Drained: a ROOM of SHOAL_OK followed by a send
 * refused SHOAL_ENOPROC is allowed (the pool has not ended when it tells).
 * Stopped: the pool has ended, so the ROOM's status must say so (ctx.h:
 * "with status SHOAL_ENOPROC if `to` ends first"; message.h). */
static void a_pull_pool_ending_under_waiters_tells_enoproc(void)
{
    pool_ends_under_waiters(SHOAL_POOL_KIND_PULL, false, false);
    pool_ends_under_waiters(SHOAL_POOL_KIND_PULL, true, true);
}

/* ---- resizes and crashes under waiters ---------------------------------------- */

/* A forward pool of two workers (mailbox 1), stuck and full, four threads
 * waiting. Down to one: nothing frees (the removed worker is still stuck),
 * all four still wait. Up to three: the two new workers are room, all four
 * get in while the old ones are still stuck; then every item once. */
static void a_forward_pool_resized_down_then_up_under_waiters(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp = pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 1, 0);
    sp.max_size = 4;
    shoal_pid_t p = spawn_pool(rt, &sp);
    block(rt, p, 2);
    CU_ASSERT_EQUAL(fill(rt, p, 0), 2);
    waiter_t w[4];
    start_waiters(w, 4, rt, p, 10, LONG_MS);
    WAIT_UNTIL(waiting_of(rt, p) == 4);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 4);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 1, TMO), 1);
    CU_ASSERT_EQUAL(done_count(w, 4), 0); /* no room anywhere yet */
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 4);
    CU_ASSERT_EQUAL(st.retiring, 1);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 3, TMO), 3);
    WAIT_UNTIL(done_count(w, 4) == 4 && atomic_load(&handled) == 4);
    CU_ASSERT_EQUAL(rc_count(w, 4, SHOAL_OK), 4);
    CU_ASSERT_EQUAL(atomic_load(&handled), 4); /* the new workers' */
    CU_ASSERT_EQUAL(atomic_load(&entered), 2); /* the old ones still stuck */
    atomic_store(&gate, 1);
    join_waiters(w, 4);
    WAIT_UNTIL(atomic_load(&handled) == 6 && shoal_test_pool_stats(rt, p).retiring == 0);
    CU_ASSERT_EQUAL(atomic_load(&handled), 6);
    for (uint32_t id = 0; id < 2; id++)
        CU_ASSERT_EQUAL(seen_of(id), 1);
    for (uint32_t id = 10; id < 14; id++)
        CU_ASSERT_EQUAL(seen_of(id), 1);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.retiring, 0);
    CU_ASSERT_EQUAL(st.waiting, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 2 + 2 + 4);
    CU_ASSERT_EQUAL(st.messages_handled, 2 + 2 + 4);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    shoal_runtime_destroy(rt);
}

/* A forward pool of two workers (mailbox 1), both stuck, both full, four
 * threads waiting. One worker panics: it loses only the message it was
 * handling, its queued item goes on, its replacement is room, and all four
 * threads get in while the other worker is still stuck. Every item once;
 * forwarded = handled + failed. */
static void a_forward_worker_crashes_under_waiters(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_ERROR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t sp = pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 1, 0);
    shoal_pid_t p = spawn_pool(rt, &sp);
    uint32_t role = ROLE_PANIC;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_BLOCK, &role, sizeof role), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    block(rt, p, 1);
    CU_ASSERT_EQUAL(fill(rt, p, 0), 2);
    waiter_t w[4];
    start_waiters(w, 4, rt, p, 10, LONG_MS);
    WAIT_UNTIL(waiting_of(rt, p) == 4);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 4);
    CU_ASSERT_EQUAL(done_count(w, 4), 0);
    atomic_store(&gate2, 1); /* the first worker panics */
    WAIT_UNTIL(done_count(w, 4) == 4 && atomic_load(&handled) == 5);
    CU_ASSERT_EQUAL(rc_count(w, 4, SHOAL_OK), 4);
    CU_ASSERT_EQUAL(atomic_load(&handled), 5); /* its queued item and the four */
    atomic_store(&gate, 1);
    join_waiters(w, 4);
    WAIT_UNTIL(atomic_load(&handled) == 6);
    CU_ASSERT_EQUAL(atomic_load(&handled), 6);
    for (uint32_t id = 0; id < 2; id++)
        CU_ASSERT_EQUAL(seen_of(id), 1);
    for (uint32_t id = 10; id < 14; id++)
        CU_ASSERT_EQUAL(seen_of(id), 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 7);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 2 + 2 + 4);
    CU_ASSERT_EQUAL(st.messages_handled, 7);
    CU_ASSERT_EQUAL(st.messages_failed, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.messages_requeued, 1); /* the crashed worker's queued item */
    CU_ASSERT_EQUAL(st.worker_restarts, 1);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.waiting, 0);
    shoal_runtime_destroy(rt);
}

/* ---- notify_room's contract, one asker at a time ------------------------------ */

/* Asked twice before room comes, an asker gets two ROOMs (one per ask),
 * both SHOAL_OK from the receiver, and nothing stays registered: a stuck
 * bounded actor, then a stuck pull pool (counted waiting 2 meanwhile). */
static void asked_twice_an_asker_gets_two_rooms(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn_sink(rt, 2);
    block(rt, s, 1);
    CU_ASSERT_EQUAL(fill(rt, s, 0), 2);
    shoal_pid_t a = spawn_asker(rt, 0);
    CU_ASSERT_EQUAL(ask_sync(rt, a, 0, s), SHOAL_OK);
    CU_ASSERT_EQUAL(ask_sync(rt, a, 0, s), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[0]), 0);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 2);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&a_rooms[0]) == 2 && waiters_of(rt, s) == 0);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0); /* none left: no third can come */
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[0]), 2);
    CU_ASSERT_EQUAL(atomic_load(&a_room_status[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_bad[0]), 0);

    atomic_store(&gate, 0);
    shoal_pool_spec_t sp = pool_spec(SHOAL_POOL_KIND_PULL, 1, 1, 0);
    shoal_pid_t p = spawn_pool(rt, &sp);
    block(rt, p, 1);
    CU_ASSERT_EQUAL(fill(rt, p, 10), 1);
    shoal_pid_t b = spawn_asker(rt, 1);
    CU_ASSERT_EQUAL(ask_sync(rt, b, 1, p), SHOAL_OK);
    CU_ASSERT_EQUAL(ask_sync(rt, b, 1, p), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[1]), 0);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 2);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&a_rooms[1]) == 2 && waiting_of(rt, p) == 0);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 0);
    CU_ASSERT_EQUAL(atomic_load(&a_rooms[1]), 2);
    CU_ASSERT_EQUAL(atomic_load(&a_room_status[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&a_bad[1]), 0);
    shoal_runtime_destroy(rt);
}

/* A receiver with room already: SHOAL_OK and one ROOM (SHOAL_OK) at once --
 * an idle bounded actor, an unbounded one, an idle forward pool, an idle
 * pull pool. A receiver that is gone: the asker hears exactly once --
 * either the ask returns SHOAL_ENOPROC and no ROOM comes, or it returns
 * SHOAL_OK and one ROOM with status SHOAL_ENOPROC (ctx.h allows both
 * readings) -- a stopped actor, a drained pool; SHOAL_PID_NONE and a PID
 * that no slot has: SHOAL_ENOPROC and nothing. */
static void room_at_once_and_receivers_that_are_gone(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t fs = pool_spec(SHOAL_POOL_KIND_FORWARD, 2, 4, 0);
    shoal_pool_spec_t ps = pool_spec(SHOAL_POOL_KIND_PULL, 2, 4, 0);
    shoal_pid_t live[4] = {spawn_sink(rt, 4), spawn_sink(rt, 0), spawn_pool(rt, &fs),
                           spawn_pool(rt, &ps)};
    for (uint32_t i = 0; i < 4; i++) {
        shoal_pid_t a = spawn_asker(rt, i);
        CU_ASSERT_EQUAL(ask_sync(rt, a, i, live[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(atomic_load(&a_rooms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&a_room_status[i]), SHOAL_OK);
        CU_ASSERT_EQUAL(atomic_load(&a_room_from[i]), live[i]);
    }
    CU_ASSERT_EQUAL(waiters_of(rt, live[0]), 0);
    CU_ASSERT_EQUAL(waiters_of(rt, live[1]), 0);
    CU_ASSERT_EQUAL(waiting_of(rt, live[2]), 0);
    CU_ASSERT_EQUAL(waiting_of(rt, live[3]), 0);

    /* Gone. */
    shoal_pid_t dead_sink = spawn_sink(rt, 4);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, dead_sink), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, dead_sink, T_NOP, NULL, 0) == SHOAL_ENOPROC);
    shoal_pool_spec_t ds = pool_spec(SHOAL_POOL_KIND_FORWARD, 1, 4, 0);
    shoal_pid_t dead_pool = spawn_pool(rt, &ds);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, dead_pool, TMO), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, dead_pool, T_NOP, NULL, 0) == SHOAL_ENOPROC);
    shoal_pid_t gone[2] = {dead_sink, dead_pool};
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t i = 4 + k;
        shoal_pid_t a = spawn_asker(rt, i);
        int rc = ask_sync(rt, a, i, gone[k]);
        CU_ASSERT(rc == SHOAL_OK || rc == SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(atomic_load(&a_rooms[i]), rc == SHOAL_OK ? 1 : 0);
        if (rc == SHOAL_OK) {
            CU_ASSERT_EQUAL(atomic_load(&a_room_status[i]), SHOAL_ENOPROC);
            CU_ASSERT_EQUAL(atomic_load(&a_room_from[i]), gone[k]);
        }
        CU_ASSERT_EQUAL(waiters_of(rt, gone[k]), 0);
    }
    shoal_pid_t none[2] = {SHOAL_PID_NONE, UINT64_MAX};
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t i = 6 + k;
        shoal_pid_t a = spawn_asker(rt, i);
        CU_ASSERT_EQUAL(ask_sync(rt, a, i, none[k]), SHOAL_ENOPROC);
        CU_ASSERT_EQUAL(atomic_load(&a_rooms[i]), 0);
    }
    shoal_runtime_destroy(rt);
}

/* Askers that end before their ROOM comes: a bounded actor and a forward
 * pool (max_waiting 2), each stuck and full, two askers each; the askers
 * exit. An ended asker waits for nothing: the pool counts no sender waiting
 * (pool.h: "senders waiting for room now") and a thread's send_wait then
 * waits in its place instead of being refused SHOAL_EOVERLOAD. Once the
 * gates open nothing breaks (the ROOMs to the ended askers are dropped),
 * nothing stays registered, the thread gets in. */
static void askers_that_end_before_their_room(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn_sink(rt, 1);
    shoal_pool_spec_t sp = pool_spec(SHOAL_POOL_KIND_FORWARD, 1, 1, 2);
    shoal_pid_t p = spawn_pool(rt, &sp);
    block(rt, s, 1);
    block(rt, p, 1);
    CU_ASSERT_EQUAL(fill(rt, s, 0), 1);
    CU_ASSERT_EQUAL(fill(rt, p, 1), 1);
    shoal_pid_t a[4];
    for (uint32_t i = 0; i < 4; i++) {
        a[i] = spawn_asker(rt, i);
        tell(rt, a[i], O_PRODUCE, i < 2 ? s : p, 10 + i);
    }
    WAIT_UNTIL(waiters_of(rt, s) == 2 && waiting_of(rt, p) == 2);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 2);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 2);
    for (uint32_t i = 0; i < 4; i++)
        tell(rt, a[i], O_EXIT, SHOAL_PID_NONE, 0);
    WAIT_UNTIL(atomic_load(&a_ended[0]) + atomic_load(&a_ended[1]) + atomic_load(&a_ended[2]) +
                   atomic_load(&a_ended[3]) ==
               4);
    for (uint32_t i = 0; i < 4; i++)
        WAIT_UNTIL(shoal_runtime_send(rt, a[i], T_NOP, NULL, 0) == SHOAL_ENOPROC);
    /* Nobody waits for room in the pool now. */
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 0);
    waiter_t w[1];
    start_waiters(w, 1, rt, p, 20, LONG_MS);
    WAIT_UNTIL(atomic_load(&w[0].done) == 1 || waiting_of(rt, p) == 1);
    CU_ASSERT_EQUAL(atomic_load(&w[0].done), 0); /* it waits: not SHOAL_EOVERLOAD */
    atomic_store(&gate, 1);
    join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(atomic_load(&handled) == 2 + (w[0].rc == SHOAL_OK) && waiters_of(rt, s) == 0 &&
               waiting_of(rt, p) == 0);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    CU_ASSERT_EQUAL(waiting_of(rt, p), 0);
    CU_ASSERT_EQUAL(seen_of(0), 1);
    CU_ASSERT_EQUAL(seen_of(1), 1);
    for (uint32_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(seen_of(10 + i), 0);
        CU_ASSERT_EQUAL(atomic_load(&a_rooms[i]), 0);
    }
    shoal_runtime_destroy(rt);
}

/* ---- thousands of askers -------------------------------------------------------- */

#define N_PLAIN 1400u
#define N_POOL 900u
#define POOL_MAX_WAITING 500u

/* N_PLAIN producers into one bounded actor (mailbox 8), stuck: exactly 8
 * get in, every other one asks (SHOAL_OK); the gate opens: every item once,
 * each producer got exactly one ROOM per ask, all SHOAL_OK, from that actor.
 * Then N_POOL producers into a forward pool (max_waiting 500), stuck and
 * full: exactly 500 asks are taken and N_POOL - 500 refused SHOAL_EOVERLOAD
 * (counted); once it drains the 500 get in, once each, with one ROOM per
 * ask, the refused ones get no ROOM and nothing of theirs is handled. */
static void thousands_of_askers_on_one_receiver(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn_sink(rt, 8);
    block(rt, s, 1);
    shoal_pid_t *a = calloc(N_PLAIN + N_POOL, sizeof *a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    for (uint32_t i = 0; i < N_PLAIN; i++) {
        a[i] = spawn_asker(rt, i);
        tell(rt, a[i], O_PRODUCE, s, i);
    }
    int acked = 0;
    double end = shoal_test_now() + WAIT_S;
    while (shoal_test_now() < end) {
        acked = 0;
        for (uint32_t i = 0; i < N_PLAIN; i++)
            acked += atomic_load(&a_acks[i]);
        if (acked == (int)N_PLAIN)
            break;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(acked, (int)N_PLAIN);
    int sent = 0, asks = 0;
    for (uint32_t i = 0; i < N_PLAIN; i++) {
        sent += atomic_load(&a_sent[i]);
        asks += atomic_load(&a_asks[i]);
    }
    CU_ASSERT_EQUAL(sent, 8);
    CU_ASSERT_EQUAL(asks, (int)N_PLAIN - 8);
    CU_ASSERT_EQUAL(waiters_of(rt, s), N_PLAIN - 8);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&handled) == (int)N_PLAIN && waiters_of(rt, s) == 0);
    CU_ASSERT_EQUAL(atomic_load(&handled), (int)N_PLAIN);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    int once = 0, matched = 0, ok = 0, bad = 0, gaveup = 0;
    for (uint32_t i = 0; i < N_PLAIN; i++) {
        once += seen_of(i) == 1;
        matched += atomic_load(&a_rooms[i]) == atomic_load(&a_asks[i]);
        ok += atomic_load(&a_rooms[i]) == 0 || atomic_load(&a_room_status[i]) == SHOAL_OK;
        bad += atomic_load(&a_bad[i]);
        gaveup += atomic_load(&a_gaveup[i]);
    }
    CU_ASSERT_EQUAL(once, (int)N_PLAIN);
    CU_ASSERT_EQUAL(matched, (int)N_PLAIN);
    CU_ASSERT_EQUAL(ok, (int)N_PLAIN);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(gaveup, 0);

    /* A pool with max_waiting. */
    atomic_store(&gate, 0);
    shoal_pool_spec_t sp = pool_spec(SHOAL_POOL_KIND_FORWARD, 1, 1, POOL_MAX_WAITING);
    shoal_pid_t p = spawn_pool(rt, &sp);
    block(rt, p, 1);
    CU_ASSERT_EQUAL(fill(rt, p, NIDS - 1), 1);
    for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++) {
        a[i] = spawn_asker(rt, i);
        tell(rt, a[i], O_PRODUCE, p, i);
    }
    end = shoal_test_now() + WAIT_S;
    while (shoal_test_now() < end) {
        acked = 0;
        for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++)
            acked += atomic_load(&a_acks[i]);
        if (acked == (int)N_POOL)
            break;
        shoal_test_nap();
    }
    CU_ASSERT_EQUAL(acked, (int)N_POOL);
    int overload = 0;
    asks = 0;
    for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++) {
        asks += atomic_load(&a_asks[i]);
        overload += atomic_load(&a_gaveup[i]) && atomic_load(&a_ask_rc[i]) == SHOAL_EOVERLOAD;
    }
    CU_ASSERT_EQUAL(asks, (int)POOL_MAX_WAITING);
    CU_ASSERT_EQUAL(overload, (int)(N_POOL - POOL_MAX_WAITING));
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting, POOL_MAX_WAITING);
    CU_ASSERT_EQUAL(st.waiting_refused, N_POOL - POOL_MAX_WAITING);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&handled) == (int)(N_PLAIN + 1 + POOL_MAX_WAITING) &&
               waiting_of(rt, p) == 0);
    CU_ASSERT_EQUAL(atomic_load(&handled), (int)(N_PLAIN + 1 + POOL_MAX_WAITING));
    CU_ASSERT_EQUAL(waiting_of(rt, p), 0);
    int in = 0, out = 0;
    matched = 0;
    bad = 0;
    for (uint32_t i = N_PLAIN; i < N_PLAIN + N_POOL; i++) {
        bool refused = atomic_load(&a_ask_rc[i]) == SHOAL_EOVERLOAD && atomic_load(&a_gaveup[i]);
        if (refused)
            out += seen_of(i) == 0 && atomic_load(&a_rooms[i]) == 0;
        else
            in += seen_of(i) == 1 && atomic_load(&a_sent[i]) == 1;
        matched += atomic_load(&a_rooms[i]) == atomic_load(&a_asks[i]);
        bad += atomic_load(&a_bad[i]);
    }
    CU_ASSERT_EQUAL(in, (int)POOL_MAX_WAITING);
    CU_ASSERT_EQUAL(out, (int)(N_POOL - POOL_MAX_WAITING));
    CU_ASSERT_EQUAL(matched, (int)N_POOL);
    CU_ASSERT_EQUAL(bad, 0);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.waiting_refused, N_POOL - POOL_MAX_WAITING);
    free(a);
    shoal_runtime_destroy(rt);
}

/* ---- send_wait's arguments and timeouts --------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
} tries_args_t;

static atomic_int tries_rc;

/* On a dispatcher thread send_wait is refused, even towards a real,
 * full receiver: it must not block the dispatcher. */
static int tries_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    tries_args_t t;
    if (msg->size != sizeof t)
        return 0;
    memcpy(&t, msg->data, sizeof t);
    uint32_t id = 50;
    atomic_store(&tries_rc, shoal_runtime_send_wait(t.rt, t.to, T_ITEM, &id, sizeof id, LONG_MS));
    return 0;
}

static const shoal_behaviour_t tries = {.name = "tries", .handle_message = tries_message};

/* A sink of mailbox 1, stuck and full. timeout 0: SHOAL_ETIMEDOUT, nothing
 * registered, nothing delivered; towards a receiver with room: SHOAL_OK.
 * NULL data with a size, a size past UINT32_MAX: SHOAL_EINVAL, even when
 * full. SHOAL_PID_NONE, a PID no slot has, an actor that has ended:
 * SHOAL_ENOPROC. From a dispatcher thread: SHOAL_EINVAL at once, nothing
 * registered. UINT64_MAX: it waits, and gets in once the gate opens. */
static void send_wait_arguments_and_timeouts(void)
{
    reset();
    atomic_store(&tries_rc, 99);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn_sink(rt, 1), open = spawn_sink(rt, 4);
    block(rt, s, 1);
    CU_ASSERT_EQUAL(fill(rt, s, 0), 1);
    uint32_t id = 1;
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, s, T_ITEM, &id, sizeof id, 0), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    id = 2;
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, open, T_ITEM, &id, sizeof id, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, s, T_ITEM, NULL, 4, LONG_MS), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, s, T_ITEM, &id, (size_t)UINT32_MAX + 1, LONG_MS),
                    SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, open, T_ITEM, NULL, 4, LONG_MS), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    id = 3;
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, SHOAL_PID_NONE, T_ITEM, &id, sizeof id, LONG_MS),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, UINT64_MAX, T_ITEM, &id, sizeof id, LONG_MS),
                    SHOAL_ENOPROC);
    shoal_pid_t dead = spawn_sink(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, dead), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, dead, T_NOP, NULL, 0) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, dead, T_ITEM, &id, sizeof id, LONG_MS),
                    SHOAL_ENOPROC);
    /* From a dispatcher thread. */
    shoal_pid_t t;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &tries, NULL, NULL, &t), SHOAL_OK);
    tries_args_t ta = {rt, s};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, t, 1, &ta, sizeof ta), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tries_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&tries_rc), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    /* No limit. */
    waiter_t w[1];
    start_waiters(w, 1, rt, s, 4, UINT64_MAX);
    WAIT_UNTIL(waiters_of(rt, s) == 1);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 1);
    CU_ASSERT_EQUAL(atomic_load(&w[0].done), 0);
    atomic_store(&gate, 1);
    join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(seen_of(4) == 1);
    CU_ASSERT_EQUAL(seen_of(0), 1);
    CU_ASSERT_EQUAL(seen_of(1), 0);
    CU_ASSERT_EQUAL(seen_of(2), 1);
    CU_ASSERT_EQUAL(seen_of(3), 0);
    CU_ASSERT_EQUAL(seen_of(4), 1);
    CU_ASSERT_EQUAL(seen_of(50), 0);
    CU_ASSERT_EQUAL(waiters_of(rt, s), 0);
    shoal_runtime_destroy(rt);
}

/* A timeout just short of "no limit" (UINT64_MAX / 1000000 - 1 ms, some 584
 * years) into a stuck, full receiver: the thread waits -- it is not told
 * SHOAL_ETIMEDOUT at once -- and gets in once the gate opens. */
static void send_wait_with_a_timeout_short_of_no_limit(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s = spawn_sink(rt, 1);
    block(rt, s, 1);
    CU_ASSERT_EQUAL(fill(rt, s, 0), 1);
    waiter_t w[1];
    start_waiters(w, 1, rt, s, 1, UINT64_MAX / 1000000u - 1);
    WAIT_UNTIL(atomic_load(&w[0].done) == 1 || waiters_of(rt, s) == 1);
    CU_ASSERT_EQUAL(atomic_load(&w[0].done), 0); /* it waits */
    CU_ASSERT_EQUAL(waiters_of(rt, s), 1);
    atomic_store(&gate, 1);
    join_waiters(w, 1);
    CU_ASSERT_EQUAL(w[0].rc, SHOAL_OK);
    WAIT_UNTIL(atomic_load(&handled) == 1 + (w[0].rc == SHOAL_OK));
    CU_ASSERT_EQUAL(seen_of(1), w[0].rc == SHOAL_OK ? 1 : 0);
    shoal_runtime_destroy(rt);
}

/* ---- short timeouts racing the drains ---------------------------------------- */

#define RACE_PER_THREAD 120u

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t to;
    uint32_t first;
    int rc[RACE_PER_THREAD];
} racer_t;

static void *racer_main(void *arg)
{
    racer_t *r = arg;
    for (uint32_t k = 0; k < RACE_PER_THREAD; k++) {
        uint32_t id = r->first + k;
        r->rc[k] = shoal_runtime_send_wait(r->rt, r->to, T_ITEM, &id, sizeof id, k % 3);
    }
    return NULL;
}

#define NPROD 16u
#define PER_PROD 300u

/* Sixteen producer actors stream 300 items each into a slow receiver (as
 * below), asking for ROOM at each refusal and sending nothing until it
 * comes. No producer is left waiting for a ROOM that never comes: every
 * item is handled once, each producer got exactly one ROOM per ask, all
 * SHOAL_OK from its receiver, and nothing stays registered. */
static void producers_race_the_drains(void)
{
    for (int r = 0; r < 3; r++) {
        reset();
        atomic_store(&slow_us, 20);
        shoal_runtime_t *rt = shoal_test_runtime(2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        shoal_pid_t to;
        if (r == 0) {
            to = spawn_sink(rt, 4);
        } else {
            uint32_t kind = r == 1 ? SHOAL_POOL_KIND_FORWARD : SHOAL_POOL_KIND_PULL;
            shoal_pool_spec_t sp = pool_spec(kind, 2, r == 1 ? 2 : 4, 0);
            sp.strategy = SHOAL_POOL_STRATEGY_FIFO;
            to = spawn_pool(rt, &sp);
        }
        for (uint32_t i = 0; i < NPROD; i++)
            tell_stream(rt, spawn_asker(rt, i), to, i * PER_PROD, PER_PROD);
        int done = 0;
        double end = shoal_test_now() + WAIT_S;
        while (shoal_test_now() < end) {
            done = 0;
            for (uint32_t i = 0; i < NPROD; i++)
                done += atomic_load(&a_sent[i]);
            if (done == (int)NPROD && atomic_load(&handled) == (int)(NPROD * PER_PROD))
                break;
            shoal_test_nap();
        }
        CU_ASSERT_EQUAL(done, (int)NPROD);
        CU_ASSERT_EQUAL(atomic_load(&handled), (int)(NPROD * PER_PROD));
        int once = 0, matched = 0, ok = 0, bad = 0, gaveup = 0;
        for (uint32_t id = 0; id < NPROD * PER_PROD; id++)
            once += seen_of(id) == 1;
        for (uint32_t i = 0; i < NPROD; i++) {
            matched += atomic_load(&a_rooms[i]) == atomic_load(&a_asks[i]);
            ok += atomic_load(&a_rooms[i]) == 0 || atomic_load(&a_room_status[i]) == SHOAL_OK;
            bad += atomic_load(&a_bad[i]);
            gaveup += atomic_load(&a_gaveup[i]);
        }
        CU_ASSERT_EQUAL(once, (int)(NPROD * PER_PROD));
        CU_ASSERT_EQUAL(matched, (int)NPROD);
        CU_ASSERT_EQUAL(ok, (int)NPROD);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(gaveup, 0);
        CU_ASSERT_EQUAL(r == 0 ? waiters_of(rt, to) : waiting_of(rt, to), 0);
        shoal_runtime_destroy(rt);
    }
}

/* Eight threads send_wait with timeouts of 0, 1 and 2 ms into a slow
 * receiver -- a bounded actor (mailbox 2), a forward pool (2 x mailbox 1),
 * a pull pool (2 workers, buffer 2) -- so waiters give up while drains tell
 * them. Each call returns SHOAL_OK or SHOAL_ETIMEDOUT; exactly the items
 * whose call returned SHOAL_OK are handled, each once; nobody is left
 * registered or counted waiting. Then producer actors (above). */
static void threads_and_actors_race_the_drains(void)
{
    for (int r = 0; r < 3; r++) {
        reset();
        atomic_store(&slow_us, 30);
        shoal_runtime_t *rt = shoal_test_runtime(2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        shoal_pid_t to;
        if (r == 0) {
            to = spawn_sink(rt, 2);
        } else {
            uint32_t kind = r == 1 ? SHOAL_POOL_KIND_FORWARD : SHOAL_POOL_KIND_PULL;
            shoal_pool_spec_t sp = pool_spec(kind, 2, r == 1 ? 1 : 2, 0);
            sp.strategy = SHOAL_POOL_STRATEGY_FIFO;
            to = spawn_pool(rt, &sp);
        }
        racer_t rs[NT];
        pthread_t th[NT];
        for (int k = 0; k < NT; k++) {
            rs[k].rt = rt;
            rs[k].to = to;
            rs[k].first = (uint32_t)k * RACE_PER_THREAD;
            CU_ASSERT_EQUAL_FATAL(pthread_create(&th[k], NULL, racer_main, &rs[k]), 0);
        }
        for (int k = 0; k < NT; k++)
            pthread_join(th[k], NULL);
        int ok = 0, other = 0;
        for (int k = 0; k < NT; k++)
            for (uint32_t j = 0; j < RACE_PER_THREAD; j++) {
                ok += rs[k].rc[j] == SHOAL_OK;
                other += rs[k].rc[j] != SHOAL_OK && rs[k].rc[j] != SHOAL_ETIMEDOUT;
            }
        CU_ASSERT_EQUAL(other, 0);
        if (r == 0) {
            uint32_t marker = NIDS - 1; /* after every item (one mailbox, FIFO) */
            CU_ASSERT_EQUAL(
                shoal_runtime_send_wait(rt, to, T_ITEM, &marker, sizeof marker, LONG_MS), SHOAL_OK);
            WAIT_UNTIL(seen_of(marker) == 1);
            CU_ASSERT_EQUAL(atomic_load(&handled), ok + 1);
            CU_ASSERT_EQUAL(waiters_of(rt, to), 0);
        } else {
            shoal_pool_stats_t st = shoal_test_pool_stats(rt, to);
            CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)ok);
            WAIT_UNTIL(atomic_load(&handled) == ok);
            CU_ASSERT_EQUAL(atomic_load(&handled), ok);
            st = shoal_test_pool_stats(rt, to);
            CU_ASSERT_EQUAL(st.messages_handled, (uint64_t)ok);
            CU_ASSERT_EQUAL(st.waiting, 0);
        }
        int exact = 0;
        for (int k = 0; k < NT; k++)
            for (uint32_t j = 0; j < RACE_PER_THREAD; j++)
                exact += seen_of(rs[k].first + j) == (rs[k].rc[j] == SHOAL_OK ? 1 : 0);
        CU_ASSERT_EQUAL(exact, NT * (int)RACE_PER_THREAD);
        shoal_runtime_destroy(rt);
    }
    producers_race_the_drains();
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"eight threads into one bounded actor", eight_threads_into_one_bounded_actor},
        {"max_waiting bounds threads in forward and pull pools",
         max_waiting_bounds_threads_in_forward_and_pull_pools},
        {"a checkout pool neither waits nor tells", a_checkout_pool_neither_waits_nor_tells},
        {"a pool of pools with room tells at once", a_pool_of_pools_with_room_tells_at_once},
        {"a pool of pools grown under a waiter tells it",
         a_pool_of_pools_grown_under_a_waiter_tells_it},
        {"a forward pool ending under waiters tells ENOPROC",
         a_forward_pool_ending_under_waiters_tells_enoproc},
        {"a pull pool ending under waiters tells ENOPROC",
         a_pull_pool_ending_under_waiters_tells_enoproc},
        {"a forward pool resized down then up under waiters",
         a_forward_pool_resized_down_then_up_under_waiters},
        {"a forward worker crashes under waiters", a_forward_worker_crashes_under_waiters},
        {"asked twice, an asker gets two rooms", asked_twice_an_asker_gets_two_rooms},
        {"room at once, and receivers that are gone", room_at_once_and_receivers_that_are_gone},
        {"askers that end before their room", askers_that_end_before_their_room},
        {"thousands of askers on one receiver", thousands_of_askers_on_one_receiver},
        {"send_wait arguments and timeouts", send_wait_arguments_and_timeouts},
        {"send_wait with a timeout short of no limit", send_wait_with_a_timeout_short_of_no_limit},
        {"threads and actors race the drains", threads_and_actors_race_the_drains},
        {NULL, NULL}};
    return shoal_test_run("room_adversarial", cases);
}
