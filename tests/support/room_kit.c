/* room_kit.c - the backpressure suites' receiver, asker, send_wait threads
 * and receivers (room_kit.h). */
#include "room_kit.h"

#include <string.h>
#include <time.h>

#include "actor/room.h"
#include "runtime/runtime.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, RK_WAIT_S)

/* ---- the receiver ----------------------------------------------------------- */

atomic_int rk_gate, rk_gate2, rk_entered, rk_handled, rk_slow_us;
static atomic_int seen[RK_NIDS];

/* T_BLOCK (payload: a role, or none) waits until `rk_gate` opens -- or, role
 * ROLE_PANIC, until `rk_gate2` opens, then panics. T_ITEM (payload: an id)
 * is counted, once per id in seen[]. */
static int sink_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == T_BLOCK) {
        uint32_t role = ROLE_WAIT;
        if (msg->size == sizeof role)
            memcpy(&role, msg->data, sizeof role);
        atomic_fetch_add(&rk_entered, 1);
        if (role == ROLE_PANIC) {
            shoal_test_wait_flag(&rk_gate2, RK_WAIT_S);
            shoal_panic(ctx, "a worker crashes on purpose");
        }
        shoal_test_wait_flag(&rk_gate, RK_WAIT_S);
        return 0;
    }
    if (msg->type == T_ITEM && msg->size == sizeof(uint32_t)) {
        uint32_t id;
        memcpy(&id, msg->data, sizeof id);
        int us = atomic_load(&rk_slow_us);
        if (us != 0) {
            struct timespec ts = {0, us * 1000L};
            nanosleep(&ts, NULL);
        }
        if (id < RK_NIDS)
            atomic_fetch_add(&seen[id], 1);
        atomic_fetch_add(&rk_handled, 1);
    }
    return 0;
}

const shoal_behaviour_t rk_sink = {.name = "sink", .handle_message = sink_message};

/* ---- the asker: an actor that sends, and asks for ROOM when refused --------- */

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

atomic_int rk_acks[RK_NA], rk_asks[RK_NA], rk_ask_rc[RK_NA], rk_refused[RK_NA], rk_send_rc[RK_NA],
    rk_sent[RK_NA], rk_gaveup[RK_NA], rk_rooms[RK_NA], rk_room_status[RK_NA], rk_bad[RK_NA],
    rk_ended[RK_NA];
_Atomic shoal_pid_t rk_room_from[RK_NA];
static uint32_t a_index[RK_NA]; /* each asker's args: its i */

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
        atomic_store(&rk_sent[st->i], 1);
        return;
    }
    /* SHOAL_ENOMEMBERS: a checkout pool's transactions past max +
     * queue_max, which tells of room too. */
    if (rc != SHOAL_EFULL && rc != SHOAL_EBUSY && rc != SHOAL_ENOMEMBERS) {
        atomic_store(&rk_send_rc[st->i], rc);
        atomic_store(&rk_gaveup[st->i], 1);
        return;
    }
    atomic_fetch_add(&rk_refused[st->i], 1);
    int ask = shoal_notify_room(ctx, st->to);
    atomic_store(&rk_ask_rc[st->i], ask);
    if (ask == SHOAL_OK)
        atomic_fetch_add(&rk_asks[st->i], 1);
    else
        atomic_store(&rk_gaveup[st->i], 1);
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
        atomic_store(&rk_room_status[st->i], msg->status);
        atomic_store(&rk_room_from[st->i], msg->from);
        if (msg->from != st->to)
            atomic_fetch_add(&rk_bad[st->i], 1);
        atomic_fetch_add(&rk_rooms[st->i], 1);
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
        atomic_store(&rk_ask_rc[st->i], rc);
        if (rc == SHOAL_OK)
            atomic_fetch_add(&rk_asks[st->i], 1);
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
    atomic_fetch_add(&rk_acks[st->i], 1);
    return 0;
}

static void asker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)reason;
    atomic_store(&rk_ended[((asker_t *)state)->i], 1);
}

static const shoal_behaviour_t asker = {.name = "asker",
                                        .state_size = sizeof(asker_t),
                                        .init = asker_init,
                                        .handle_message = asker_message,
                                        .terminate = asker_terminate};

void rk_reset(void)
{
    atomic_store(&rk_gate, 0);
    atomic_store(&rk_gate2, 0);
    atomic_store(&rk_entered, 0);
    atomic_store(&rk_handled, 0);
    atomic_store(&rk_slow_us, 0);
    for (uint32_t i = 0; i < RK_NIDS; i++)
        atomic_store(&seen[i], 0);
    for (uint32_t i = 0; i < RK_NA; i++) {
        a_index[i] = i;
        atomic_store(&rk_acks[i], 0);
        atomic_store(&rk_asks[i], 0);
        atomic_store(&rk_ask_rc[i], 99);
        atomic_store(&rk_refused[i], 0);
        atomic_store(&rk_send_rc[i], 99);
        atomic_store(&rk_sent[i], 0);
        atomic_store(&rk_gaveup[i], 0);
        atomic_store(&rk_rooms[i], 0);
        atomic_store(&rk_room_status[i], 99);
        atomic_store(&rk_bad[i], 0);
        atomic_store(&rk_ended[i], 0);
        atomic_store(&rk_room_from[i], SHOAL_PID_NONE);
    }
}

shoal_pid_t rk_spawn_asker(shoal_runtime_t *rt, uint32_t i)
{
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &asker, &a_index[i], NULL, &pid), SHOAL_OK);
    return pid;
}

void rk_tell(shoal_runtime_t *rt, shoal_pid_t who, uint32_t op, shoal_pid_t to, uint32_t id)
{
    order_t o = {.op = op, .id = id, .to = to};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, who, T_ORDER, &o, sizeof o), SHOAL_OK);
}

void rk_tell_stream(shoal_runtime_t *rt, shoal_pid_t who, shoal_pid_t to, uint32_t first,
                    uint32_t n)
{
    order_t o = {.op = O_PRODUCE, .id = first, .n = n, .to = to};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, who, T_ORDER, &o, sizeof o), SHOAL_OK);
}

/* Asker i asks for ROOM from `to`, then handles a SYNC: a ROOM told during
 * the ask (at once) is in its system mailbox before the SYNC is handled,
 * and the system mailbox goes first, so its count is exact afterwards.
 * Returns the ask's result. */
int rk_ask_sync(shoal_runtime_t *rt, shoal_pid_t who, uint32_t i, shoal_pid_t to)
{
    int before = atomic_load(&rk_acks[i]);
    rk_tell(rt, who, O_ASK, to, 0);
    rk_tell(rt, who, O_SYNC, SHOAL_PID_NONE, 0);
    WAIT_UNTIL(atomic_load(&rk_acks[i]) == before + 2);
    CU_ASSERT_EQUAL(atomic_load(&rk_acks[i]), before + 2);
    return atomic_load(&rk_ask_rc[i]);
}

/* ---- threads that send_wait --------------------------------------------------- */

static void *waiter_main(void *arg)
{
    rk_waiter_t *w = arg;
    w->rc = shoal_runtime_send_wait(w->rt, w->to, T_ITEM, &w->id, sizeof w->id, w->timeout_ms);
    atomic_store(&w->done, 1);
    return NULL;
}

void rk_start_waiters(rk_waiter_t *w, int n, shoal_runtime_t *rt, shoal_pid_t to, uint32_t first_id,
                      uint64_t timeout_ms)
{
    for (int k = 0; k < n; k++) {
        w[k] = (rk_waiter_t){.rt = rt, .to = to, .id = first_id + (uint32_t)k};
        w[k].timeout_ms = timeout_ms;
        atomic_init(&w[k].done, 0);
        CU_ASSERT_EQUAL_FATAL(pthread_create(&w[k].t, NULL, waiter_main, &w[k]), 0);
    }
}

void rk_join_waiters(rk_waiter_t *w, int n)
{
    for (int k = 0; k < n; k++)
        pthread_join(w[k].t, NULL);
}

int rk_done_count(rk_waiter_t *w, int n)
{
    int d = 0;
    for (int k = 0; k < n; k++)
        d += atomic_load(&w[k].done);
    return d;
}

/* Of the waiters that are done, how many returned rc. */
int rk_rc_count(rk_waiter_t *w, int n, int rc)
{
    int c = 0;
    for (int k = 0; k < n; k++)
        c += atomic_load(&w[k].done) && w[k].rc == rc;
    return c;
}

/* ---- receivers ------------------------------------------------------------------ */

shoal_pid_t rk_spawn_sink(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &rk_sink, NULL, &o, &pid), SHOAL_OK);
    return pid;
}

/* A forward pool of `size` sinks with mailboxes of `mailbox`, least
 * loaded first (a second T_BLOCK goes to an idle worker, not behind the
 * first), or a pull pool of `size` sinks, prefetch 1, buffer `mailbox`. */
shoal_pool_spec_t rk_pool_spec(uint32_t kind, uint32_t size, uint32_t mailbox, uint32_t max_waiting)
{
    shoal_pool_spec_t sp;
    shoal_pool_spec_init(&sp);
    sp.worker = &rk_sink;
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

shoal_pid_t rk_spawn_pool(shoal_runtime_t *rt, const shoal_pool_spec_t *sp)
{
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, sp, &p), SHOAL_OK);
    return p;
}

/* Sends n T_BLOCKs, one at a time, each entering its handler (a worker of
 * its own) before the next. */
void rk_block(shoal_runtime_t *rt, shoal_pid_t to, int n)
{
    int before = atomic_load(&rk_entered);
    for (int k = 0; k < n; k++) {
        uint32_t role = ROLE_WAIT;
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, to, T_BLOCK, &role, sizeof role), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&rk_entered) == before + k + 1);
        CU_ASSERT_EQUAL(atomic_load(&rk_entered), before + k + 1);
    }
}

/* Items first_id, first_id + 1, ... until the receiver refuses one (full or
 * busy); how many went in. */
int rk_fill(shoal_runtime_t *rt, shoal_pid_t to, uint32_t first_id)
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

uint32_t rk_waiting_of(shoal_runtime_t *rt, shoal_pid_t pool)
{
    return shoal_test_pool_stats(rt, pool).waiting;
}

/* Waiters registered for room in the plain actor `receiver`, and its flag
 * agrees (room.h). */
size_t rk_waiters_of(shoal_runtime_t *rt, shoal_pid_t receiver)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(receiver));
    size_t n = shoal__room_count(rt, receiver);
    if (n != 0 && !(atomic_load(&a->limit) & SHOAL_LIMIT_ROOM))
        return 1000; /* a waiter without the flag: it would never be told */
    return n;
}

int rk_seen_of(uint32_t id) { return atomic_load(&seen[id]); }
