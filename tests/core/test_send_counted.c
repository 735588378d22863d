/* test_send_counted.c - a source's sends, counted (actor/ctx.h
 * shoal__ctx_count_send, send.c send_counted and shoal_send_many, call.c
 * call_counted): the workers of a pool started with count_sends (shoald's
 * sources, host/source.c) count in the pool's record what they sent and
 * what was refused for want of room -- a full actor (SHOAL_EFULL), a
 * forward pool's workers all full (SHOAL_EBUSY), a checkout pool past
 * max + queue_max (SHOAL_ENOMEMBERS) -- by shoal_send, shoal_send_many
 * and shoal_call alike; a send to itself and one to no actor are neither.
 * The runtime's msgs_refused counts the same refusals.
 *
 * A bug this suite holds: a checkout pool's SHOAL_ENOMEMBERS was counted
 * neither by a source (its refused/s read 0 while every transaction was
 * refused) nor by the runtime.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <string.h>

#include "checkout_kit.h"
#include "pool/pool.h"

#define WAIT_UNTIL(cond) CK_WAIT_UNTIL(cond)

/* ---- a receiver that blocks in its first message ------------------------------ */

enum { T_RUN = 40, T_ITEM = 41, T_HOLD = 42, MAX_STEPS = 16 };

static atomic_int rx_entered, rx_gate, rx_n;

/* T_HOLD: waits at rx_gate (counted in rx_entered first). */
static int rx_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return SHOAL_OK;
    if (msg->type == T_HOLD) {
        atomic_fetch_add(&rx_entered, 1);
        while (!atomic_load(&rx_gate))
            shoal_test_nap();
    }
    atomic_fetch_add(&rx_n, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t rx = {.name = "rx", .handle_message = rx_message};

/* ---- the source: runs a script of sends in one turn ----------------------------- */

enum { OP_SEND, OP_MANY, OP_CALL, OP_SELF };

typedef struct {
    int op;
    shoal_pid_t to;
    uint32_t type;
    size_t n; /* OP_MANY's */
} step_t;

static step_t steps[MAX_STEPS];
static int rcs[MAX_STEPS];
static size_t many_sent[MAX_STEPS];
static int nsteps;
static atomic_int ran;

/* Written before T_RUN is sent; read after its pop (the mailbox's
 * release/acquire pair orders them); the test thread reads rcs after it
 * saw `ran` (seq_cst). */
static int src_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != T_RUN)
        return SHOAL_OK;
    uint64_t v[4] = {0};
    for (int i = 0; i < nsteps; i++) {
        const step_t *s = &steps[i];
        shoal_ref_t ref;
        switch (s->op) {
        case OP_SEND:
            rcs[i] = shoal_send(ctx, s->to, s->type, v, sizeof v[0]);
            break;
        case OP_MANY:
            rcs[i] = shoal_send_many(ctx, s->to, s->type, v, sizeof v[0], s->n, &many_sent[i]);
            break;
        case OP_CALL:
            rcs[i] = shoal_call(ctx, s->to, s->type, v, sizeof v[0], 5000, &ref);
            break;
        default:
            rcs[i] = shoal_send(ctx, shoal_self(ctx), T_ITEM, v, sizeof v[0]);
            break;
        }
    }
    atomic_store(&ran, 1);
    return SHOAL_OK;
}

static const shoal_behaviour_t src = {.name = "src", .handle_message = src_message};

/* A pool "src" of one worker whose sends are counted, as shoald starts a
 * source. */
static shoal_pid_t start_source(shoal_runtime_t *rt)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "src";
    s.worker = &src;
    s.size = 1;
    shoal_pool_opts_t o = {.count_sends = true};
    shoal_pid_t pid = SHOAL_PID_NONE;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, &s, NULL, &o, 5000, &pid, why, sizeof why),
                          SHOAL_OK);
    return pid;
}

static void counts_of(shoal_runtime_t *rt, shoal_pid_t source, uint64_t *sent, uint64_t *refused)
{
    shoal_pool_t *p = shoal__pool_find(rt, source);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    *sent = atomic_load_explicit(&p->sends.sent, memory_order_relaxed);
    *refused = atomic_load_explicit(&p->sends.refused, memory_order_relaxed);
    shoal__pool_unref(rt, p);
}

static void run_script(shoal_runtime_t *rt, shoal_pid_t source)
{
    atomic_store(&ran, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, source, T_RUN, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ran) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ran), 1);
}

/* ---- the cases ---------------------------------------------------------------------- */

/* Against a full actor, a full forward pool and a checkout pool whose one
 * member is in a transaction (queue_max 0): each refusal counted once, by
 * every way of sending; a send to itself and one to an ended actor not at
 * all; the runtime's msgs_refused moved by as many. */
static void refusals_of_every_kind_are_counted(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    atomic_store(&rx_entered, 0);
    atomic_store(&rx_gate, 0);
    atomic_store(&rx_n, 0);
    /* A bounded actor of mailbox 1, in a message: room for one. */
    shoal_pid_t full = SHOAL_PID_NONE;
    shoal_spawn_opts_t so = {.mailbox_limit = 1};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, &so, &full), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, full, T_HOLD, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rx_entered) == 1);
    /* A forward pool of one worker of mailbox 1, in a message, its one
     * place taken. */
    shoal_pool_spec_t fs;
    shoal_pool_spec_init(&fs);
    fs.name = "fw";
    fs.worker = &rx;
    fs.size = 1;
    fs.mailbox = 1;
    shoal_pid_t fw = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &fs, &fw), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, fw, T_HOLD, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rx_entered) == 2);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, fw, T_ITEM, NULL, 0), SHOAL_OK);
    /* A checkout pool of one member, no queue, its member in a transaction. */
    shoal_pid_t co = ck_start(rt, 1, 1, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, co, T_BLOCK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ck_mblocked) == 1);
    shoal_pid_t gone = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &rx, NULL, NULL, &gone), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, gone), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_send(rt, gone, T_ITEM, NULL, 0) == SHOAL_ENOPROC);

    shoal_pid_t source = start_source(rt);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    const step_t script[] = {
        {OP_SEND, full, T_ITEM, 0},      /* OK: its one place */
        {OP_SEND, full, T_ITEM, 0},      /* EFULL */
        {OP_MANY, full, T_ITEM, 3},      /* EFULL, 0 sent */
        {OP_CALL, full, T_ITEM, 0},      /* EFULL */
        {OP_SEND, co, T_OK, 0},          /* ENOMEMBERS */
        {OP_MANY, co, T_OK, 3},          /* ENOMEMBERS, 0 sent */
        {OP_CALL, co, T_OK, 0},          /* ENOMEMBERS */
        {OP_SEND, fw, T_ITEM, 0},        /* EBUSY */
        {OP_MANY, fw, T_ITEM, 2},        /* EBUSY, 0 sent */
        {OP_CALL, fw, T_ITEM, 0},        /* EBUSY */
        {OP_SELF, SHOAL_PID_NONE, 0, 0}, /* OK, not counted */
        {OP_SEND, gone, T_ITEM, 0},      /* ENOPROC, not counted */
        {OP_MANY, gone, T_ITEM, 2},      /* ENOPROC, not counted */
    };
    nsteps = (int)(sizeof script / sizeof script[0]);
    memcpy(steps, script, sizeof script);
    run_script(rt, source);
    const int want[] = {SHOAL_OK,         SHOAL_EFULL,      SHOAL_EFULL,      SHOAL_EFULL,
                        SHOAL_ENOMEMBERS, SHOAL_ENOMEMBERS, SHOAL_ENOMEMBERS, SHOAL_EBUSY,
                        SHOAL_EBUSY,      SHOAL_EBUSY,      SHOAL_OK,         SHOAL_ENOPROC,
                        SHOAL_ENOPROC};
    for (int i = 0; i < nsteps; i++)
        CU_ASSERT_EQUAL(rcs[i], want[i]);
    CU_ASSERT_EQUAL(many_sent[2], 0);
    CU_ASSERT_EQUAL(many_sent[5], 0);
    CU_ASSERT_EQUAL(many_sent[8], 0);
    uint64_t sent, refused;
    counts_of(rt, source, &sent, &refused);
    CU_ASSERT_EQUAL(sent, 1);
    CU_ASSERT_EQUAL(refused, 9);
    shoal_runtime_stats_t after = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(after.msgs_refused - before.msgs_refused, 9);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, co).error_no_members, 3);

    /* Everything let go: what got in is handled, nothing else -- a marker
     * sent to each after the rest, handled after it (one mailbox each, in
     * order), makes the counts final. */
    atomic_store(&ck_mgate, 1);
    atomic_store(&rx_gate, 1);
    WAIT_UNTIL(atomic_load(&rx_n) == 4 && ck_stats(rt, co).free == 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, full, T_ITEM, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, fw, T_ITEM, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, co, T_OK, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&rx_n) == 6 && atomic_load(&ck_handled) == 2);
    CU_ASSERT_EQUAL(atomic_load(&rx_n), 6);       /* full: 2 + its marker, fw: 2 + its marker */
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), 2); /* the transaction let in, the marker */
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"refusals of every kind are counted", refusals_of_every_kind_are_counted},
        {NULL, NULL},
    };
    return shoal_test_run("send_counted", cases);
}
