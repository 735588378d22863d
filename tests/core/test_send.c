/* test_send.c - sending (core/actor/send.c): per-sender FIFO, exact mailbox
 * limits, SHOAL_ENOPROC after every way an actor ends, payload kinds
 * (inline, heap copy, handed over) and high-priority delivery.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics, and the test thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define WAIT_S 20.0 /* every wait ends: a bug fails the test instead of hanging it */

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

enum { T_BLOCK = 1, T_DATA = 2, T_EXIT = 3, T_FAIL = 4, T_GO = 5, T_CTRL = 6 };

/* ---- per-sender FIFO ------------------------------------------------------ */

#define FIFO_THREADS 4
#define FIFO_ACTORS 4
#define FIFO_SENDERS (FIFO_THREADS + FIFO_ACTORS)
#define FIFO_MSGS 20000
#define FIFO_BATCH 97

typedef struct {
    uint32_t sender;
    uint32_t seq;
} fifo_msg_t;

static shoal_runtime_t *fifo_rt;
static shoal_pid_t fifo_receiver;
static shoal_pid_t fifo_sender_pid[FIFO_SENDERS]; /* PID_NONE for threads */
static int64_t fifo_last[FIFO_SENDERS];           /* receiver only */
static atomic_int fifo_bad_order, fifo_bad_from, fifo_total, fifo_send_err;

static int fifo_recv(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    fifo_msg_t m;
    if (msg->type != T_DATA || msg->size != sizeof m) {
        atomic_fetch_add(&fifo_bad_order, 1);
        return 0;
    }
    memcpy(&m, msg->data, sizeof m);
    if (m.sender >= FIFO_SENDERS) {
        atomic_fetch_add(&fifo_bad_order, 1);
        return 0;
    }
    /* Nothing is refused (unbounded), so each sender's run has no gaps. */
    if ((int64_t)m.seq != fifo_last[m.sender] + 1)
        atomic_fetch_add(&fifo_bad_order, 1);
    fifo_last[m.sender] = m.seq;
    if (msg->from != fifo_sender_pid[m.sender])
        atomic_fetch_add(&fifo_bad_from, 1);
    atomic_fetch_add(&fifo_total, 1);
    return 0;
}

typedef struct {
    uint32_t id;
    uint32_t next;
} fifo_sender_state_t;

static int fifo_sender_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((fifo_sender_state_t *)state)->id = *(const uint32_t *)args;
    return 0;
}

/* Sends a batch per message and re-sends GO to itself, so its batches
 * interleave with other senders' and run on whatever worker is free. */
static int fifo_sender(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    fifo_sender_state_t *s = state;
    if (msg->type != T_GO)
        return 0;
    for (int i = 0; i < FIFO_BATCH && s->next < FIFO_MSGS; i++) {
        fifo_msg_t m = {s->id, s->next++};
        if (shoal_send(ctx, fifo_receiver, T_DATA, &m, sizeof m) != SHOAL_OK)
            atomic_fetch_add(&fifo_send_err, 1);
    }
    if (s->next < FIFO_MSGS && shoal_send(ctx, shoal_self(ctx), T_GO, NULL, 0) != SHOAL_OK)
        atomic_fetch_add(&fifo_send_err, 1);
    return 0;
}

static void *fifo_thread(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = 0; i < FIFO_MSGS; i++) {
        fifo_msg_t m = {id, i};
        if (shoal_runtime_send(fifo_rt, fifo_receiver, T_DATA, &m, sizeof m) != SHOAL_OK)
            atomic_fetch_add(&fifo_send_err, 1);
    }
    return NULL;
}

static void per_sender_fifo_from_threads_and_actors(void)
{
    static const shoal_behaviour_t recv = {.name = "fifo-recv", .handle_message = fifo_recv};
    static const shoal_behaviour_t sender = {.name = "fifo-send",
                                             .state_size = sizeof(fifo_sender_state_t),
                                             .init = fifo_sender_init,
                                             .handle_message = fifo_sender};
    shoal_runtime_t *rt = fifo_rt = shoal_test_runtime(3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&fifo_bad_order, 0);
    atomic_store(&fifo_bad_from, 0);
    atomic_store(&fifo_total, 0);
    atomic_store(&fifo_send_err, 0);
    for (int i = 0; i < FIFO_SENDERS; i++) {
        fifo_last[i] = -1;
        fifo_sender_pid[i] = SHOAL_PID_NONE;
    }
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &recv, NULL, NULL, &fifo_receiver), SHOAL_OK);
    uint32_t ids[FIFO_ACTORS];
    for (uint32_t i = 0; i < FIFO_ACTORS; i++) {
        ids[i] = FIFO_THREADS + i;
        CU_ASSERT_EQUAL_FATAL(
            shoal_runtime_spawn(rt, &sender, &ids[i], NULL, &fifo_sender_pid[ids[i]]), SHOAL_OK);
    }
    pthread_t th[FIFO_THREADS];
    for (uintptr_t i = 0; i < FIFO_THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, fifo_thread, (void *)i), 0);
    for (int i = 0; i < FIFO_ACTORS; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, fifo_sender_pid[FIFO_THREADS + i], T_GO, NULL, 0),
                        SHOAL_OK);
    for (int i = 0; i < FIFO_THREADS; i++)
        pthread_join(th[i], NULL);
    WAIT_UNTIL(atomic_load(&fifo_total) == FIFO_SENDERS * FIFO_MSGS);
    CU_ASSERT_EQUAL(atomic_load(&fifo_total), FIFO_SENDERS * FIFO_MSGS);
    CU_ASSERT_EQUAL(atomic_load(&fifo_bad_order), 0);
    CU_ASSERT_EQUAL(atomic_load(&fifo_bad_from), 0);
    CU_ASSERT_EQUAL(atomic_load(&fifo_send_err), 0);
    for (int i = 0; i < FIFO_SENDERS; i++)
        CU_ASSERT_EQUAL(fifo_last[i], FIFO_MSGS - 1);
    shoal_runtime_destroy(rt);
}

/* ---- a receiver that blocks in its first message ---------------------------
 *
 * T_BLOCK: sets `entered`, waits for `release`, then ends the actor if
 * `exit_after_block` (shoal_exit 0) or returns `fail_after_block`.
 * T_DATA: counted, payload checked against `expect` when set.
 * T_CTRL: records how many T_DATA ran before it and its flags. */

static atomic_int blk_entered, blk_release, blk_exit_after, blk_data, blk_ctrl_seen;
static atomic_int blk_ctrl_after, blk_ctrl_flags, blk_bad, blk_data_prio;
static atomic_int blk_order_bad;
static atomic_long blk_last_index;
static const void *blk_expect_ptr; /* set before the message is sent */
static const unsigned char *blk_expect;
static size_t blk_expect_size;

static void blk_reset(void)
{
    atomic_store(&blk_entered, 0);
    atomic_store(&blk_release, 0);
    atomic_store(&blk_exit_after, 0);
    atomic_store(&blk_data, 0);
    atomic_store(&blk_ctrl_seen, 0);
    atomic_store(&blk_ctrl_after, -1);
    atomic_store(&blk_ctrl_flags, -1);
    atomic_store(&blk_bad, 0);
    atomic_store(&blk_data_prio, 0);
    atomic_store(&blk_order_bad, 0);
    atomic_store(&blk_last_index, -1);
    blk_expect_ptr = NULL;
    blk_expect = NULL;
    blk_expect_size = 0;
}

static int blk_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    switch (msg->type) {
    case T_BLOCK:
        atomic_store(&blk_entered, 1);
        shoal_test_wait_flag(&blk_release, WAIT_S);
        if (atomic_load(&blk_exit_after))
            shoal_exit(ctx, 0);
        return 0;
    case T_DATA:
        if (blk_expect != NULL &&
            (msg->size != blk_expect_size ||
             (msg->size == 0 ? msg->data != NULL : memcmp(msg->data, blk_expect, msg->size) != 0)))
            atomic_fetch_add(&blk_bad, 1);
        if (msg->size != 0 && ((uintptr_t)msg->data & 7) != 0) /* 8-byte aligned */
            atomic_fetch_add(&blk_bad, 1);
        if (blk_expect_ptr != NULL && msg->data != blk_expect_ptr)
            atomic_fetch_add(&blk_bad, 1);
        if (msg->size == sizeof(long)) {
            long idx;
            memcpy(&idx, msg->data, sizeof idx);
            if (idx != atomic_load(&blk_last_index) + 1)
                atomic_fetch_add(&blk_order_bad, 1);
            atomic_store(&blk_last_index, idx);
        }
        if (msg->flags & SHOAL_MSG_PRIORITY)
            atomic_fetch_add(&blk_data_prio, 1);
        atomic_fetch_add(&blk_data, 1);
        return 0;
    case T_CTRL:
        atomic_store(&blk_ctrl_after, atomic_load(&blk_data));
        atomic_store(&blk_ctrl_flags, (int)msg->flags);
        if (msg->kind != SHOAL_MSG_CAST)
            atomic_fetch_add(&blk_bad, 1);
        atomic_store(&blk_ctrl_seen, 1);
        return 0;
    default:
        atomic_fetch_add(&blk_bad, 1);
        return 0;
    }
}

static const shoal_behaviour_t blk_beh = {.name = "blocker", .handle_message = blk_handle};

/* Spawns a blocker with `limit` and waits until it sits in T_BLOCK: the
 * blocking message has been popped, so the user mailbox is empty. */
static shoal_pid_t blk_spawn_blocked(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &blk_beh, NULL, &o, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_BLOCK, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&blk_entered, WAIT_S), 1);
    return pid;
}

static void efull_counts_are_exact_at_the_limit(void)
{
    enum { L = 16, N = 100 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid = blk_spawn_blocked(rt, L);
    /* The blocking message was popped before its handler ran: L free places. */
    int accepted = 0, refused = 0, other = 0, first_refused = -1;
    for (int i = 0; i < N; i++) {
        int rc = shoal_runtime_send(rt, pid, T_DATA, NULL, 0);
        if (rc == SHOAL_OK) {
            accepted++;
        } else if (rc == SHOAL_EFULL) {
            if (first_refused < 0)
                first_refused = i;
            refused++;
        } else {
            other++;
        }
    }
    CU_ASSERT_EQUAL(accepted, L);
    CU_ASSERT_EQUAL(refused, N - L);
    CU_ASSERT_EQUAL(accepted + refused, N);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(first_refused, L); /* nothing is popped meanwhile */
    /* A blocking call is a user message too: refused the same way. */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pid, T_DATA, NULL, 0, 1000, &ans), SHOAL_EFULL);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.msgs_refused, (uint64_t)(N - L) + 1);
    CU_ASSERT_EQUAL(s.msgs_sent, (uint64_t)L + 1); /* + the blocking message */
    /* A priority message has no limit. */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_CTRL, NULL, 0), SHOAL_OK);

    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&blk_data) == L && atomic_load(&blk_ctrl_seen));
    CU_ASSERT_EQUAL(atomic_load(&blk_data), L);
    CU_ASSERT_EQUAL(atomic_load(&blk_ctrl_seen), 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_ctrl_after), 0);
    /* Drained: room again, and exactly the accepted ones were handled. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_handled == (uint64_t)L + 2);
    s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.msgs_handled, (uint64_t)L + 2); /* block + L + ctrl */
    CU_ASSERT_EQUAL(s.msgs_dropped, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&blk_data) == L + 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), L + 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_bad), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_refused, (uint64_t)(N - L) + 1);
    shoal_runtime_destroy(rt);
}

/* max_queued bounds what unbounded mailboxes hold together: past it a send
 * into one is refused with SHOAL_EBUSY (counted), within 10 ms; bounded
 * mailboxes and priority sends are not affected; once drained, accepted. */
static void max_queued_bounds_unbounded_mailboxes(void)
{
    enum { MAXQ = 100 };
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.max_queued = MAXQ;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    blk_reset();
    shoal_pid_t u = blk_spawn_blocked(rt, 0); /* unbounded */
    shoal_pid_t b = SHOAL_PID_NONE;
    shoal_spawn_opts_t so = {.mailbox_limit = 1000};
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &blk_beh, NULL, &so, &b), SHOAL_OK);
    for (int i = 0; i < MAXQ; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, u, T_DATA, NULL, 0), SHOAL_OK);
    /* Refused once the timer thread has summed them (10 ms). */
    int rc = SHOAL_OK, sent = 0;
    double end = shoal_test_now() + WAIT_S;
    while (rc == SHOAL_OK && shoal_test_now() < end) {
        rc = shoal_runtime_send(rt, u, T_DATA, NULL, 0);
        sent += rc == SHOAL_OK;
        if (rc == SHOAL_OK)
            shoal_test_nap();
    }
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    shoal_runtime_stats_t st = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(st.refused_queued, 1);
    /* (the T_BLOCK it sits in went in and out first) */
    CU_ASSERT_EQUAL(st.unbounded_pushed, (uint64_t)(1 + MAXQ + sent));
    CU_ASSERT_EQUAL(st.unbounded_popped, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, T_DATA, NULL, 0), SHOAL_OK); /* bounded: fine */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, u, T_CTRL, NULL, 0), SHOAL_OK);
    /* Drained: accepted again. */
    atomic_store(&blk_release, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&blk_data) == MAXQ + sent + 1, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), MAXQ + sent + 1);
    rc = SHOAL_EBUSY;
    end = shoal_test_now() + WAIT_S;
    while (rc == SHOAL_EBUSY && shoal_test_now() < end)
        if ((rc = shoal_runtime_send(rt, u, T_DATA, NULL, 0)) == SHOAL_EBUSY)
            shoal_test_nap();
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    end = shoal_test_now() + WAIT_S;
    do
        st = shoal_test_stats(rt);
    while (st.unbounded_popped != st.unbounded_pushed && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.unbounded_popped, st.unbounded_pushed);
    CU_ASSERT_EQUAL(atomic_load(&blk_bad), 0);
    shoal_runtime_destroy(rt);
}

static void limit_one_accepts_exactly_one(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid = blk_spawn_blocked(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 0), SHOAL_OK);
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 0), SHOAL_EFULL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_refused, 10);
    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&blk_data) == 1 && shoal_test_stats(rt).msgs_handled == 2);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_handled, 2);
    shoal_runtime_destroy(rt);
}

/* ---- SHOAL_ENOPROC after every way of ending ------------------------------- */

/* A child that ends on command: T_EXIT -> shoal_exit(0), T_FAIL -> returns 42,
 * T_BLOCK -> waits (for shoal_stop / stop_actor to reach it). */
static int mortal_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == T_EXIT) {
        shoal_exit(ctx, 0);
        return 0;
    }
    if (msg->type == T_FAIL)
        return 42;
    return 0;
}

static const shoal_behaviour_t mortal_beh = {.name = "mortal", .handle_message = mortal_handle};

/* A parent: init spawns one mortal child and publishes its PID; EXIT notices
 * are recorded; T_EXIT asks it to stop the child with shoal_stop. */
static _Atomic shoal_pid_t sup_child, sup_exit_from;
static atomic_int sup_exits, sup_exit_status, sup_stop_rc;

static int sup_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    shoal_pid_t c;
    int rc = shoal_spawn(ctx, &mortal_beh, NULL, NULL, &c);
    if (rc == SHOAL_OK)
        atomic_store(&sup_child, c);
    return rc;
}

static int sup_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&sup_exit_from, msg->from);
        atomic_store(&sup_exit_status, msg->status);
        atomic_fetch_add(&sup_exits, 1); /* last: the test waits on it */
    } else if (msg->type == T_EXIT) {
        atomic_store(&sup_stop_rc, shoal_stop(ctx, atomic_load(&sup_child)));
    }
    return 0;
}

static const shoal_behaviour_t sup_beh = {
    .name = "sup", .init = sup_init, .handle_message = sup_handle};

/* How the child is made to end. */
enum { END_EXIT, END_FAIL, END_SHOAL_STOP, END_STOP_ACTOR };

static void enoproc_after(int how, int expect_status)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&sup_child, SHOAL_PID_NONE);
    atomic_store(&sup_exit_from, SHOAL_PID_NONE);
    atomic_store(&sup_exits, 0);
    atomic_store(&sup_exit_status, 12345);
    atomic_store(&sup_stop_rc, 12345);
    shoal_pid_t sup;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sup_beh, NULL, NULL, &sup), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&sup_child) != SHOAL_PID_NONE);
    shoal_pid_t child = atomic_load(&sup_child);
    CU_ASSERT_FATAL(child != SHOAL_PID_NONE);
    switch (how) {
    case END_EXIT:
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_EXIT, NULL, 0), SHOAL_OK);
        break;
    case END_FAIL:
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_FAIL, NULL, 0), SHOAL_OK);
        break;
    case END_SHOAL_STOP:
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, sup, T_EXIT, NULL, 0), SHOAL_OK);
        break;
    case END_STOP_ACTOR:
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
        break;
    }
    /* The parent hears of the end after the child's mailboxes are closed. */
    WAIT_UNTIL(atomic_load(&sup_exits) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&sup_exits), 1);
    CU_ASSERT_EQUAL(atomic_load(&sup_exit_from), child);
    CU_ASSERT_EQUAL(atomic_load(&sup_exit_status), expect_status);
    if (how == END_SHOAL_STOP)
        CU_ASSERT_EQUAL(atomic_load(&sup_stop_rc), SHOAL_OK);

    uint64_t noproc0 = shoal_test_stats(rt).msgs_noproc;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_DATA, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, child, T_DATA, NULL, 0), SHOAL_ENOPROC);
    unsigned char big[200] = {0};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_DATA, big, sizeof big), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_ENOPROC);
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, child, T_DATA, NULL, 0, 1000, &ans), SHOAL_ENOPROC);
    /* Three sends and the call were refused with ENOPROC (stop_actor is a
     * control signal, not a counted send). */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_noproc - noproc0, 4);
    /* A PID that never named an actor, and PID_NONE. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, SHOAL_PID_NONE, T_DATA, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, ((shoal_pid_t)7 << 32) | 9999, T_DATA, NULL, 0),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, UINT64_MAX, T_DATA, NULL, 0), SHOAL_ENOPROC);
    /* The parent is alive and untouched. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, sup, T_DATA, NULL, 0), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

static void enoproc_after_shoal_exit(void) { enoproc_after(END_EXIT, 0); }
static void enoproc_after_error_return(void) { enoproc_after(END_FAIL, 42); }
static void enoproc_after_shoal_stop(void) { enoproc_after(END_SHOAL_STOP, SHOAL_ESHUTDOWN); }
static void enoproc_after_stop_actor(void) { enoproc_after(END_STOP_ACTOR, SHOAL_ESHUTDOWN); }

/* ---- payloads ------------------------------------------------------------- */

static void payload_roundtrip(shoal_runtime_t *rt, shoal_pid_t pid, const unsigned char *data,
                              size_t size, int n_before)
{
    blk_expect = data;
    blk_expect_size = size;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, data, size), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&blk_data) == n_before + 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), n_before + 1);
}

static void inline_and_heap_payloads_arrive_intact(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &blk_beh, NULL, NULL, &pid), SHOAL_OK);
    static unsigned char buf[4096];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    int n = 0;
    payload_roundtrip(rt, pid, buf, 0, n++);
    payload_roundtrip(rt, pid, buf, 1, n++);
    payload_roundtrip(rt, pid, buf, SHOAL_INLINE_MAX, n++);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).heap_payloads, 0); /* <= 32 B: inside the envelope */
    payload_roundtrip(rt, pid, buf, SHOAL_INLINE_MAX + 1, n++);
    payload_roundtrip(rt, pid, buf, sizeof buf, n++);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).heap_payloads, 2);
    CU_ASSERT_EQUAL(atomic_load(&blk_bad), 0);
    shoal_runtime_destroy(rt);
}

/* The copy is taken at send time: changing the buffer later changes nothing. */
static void payload_is_copied_at_send(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid = blk_spawn_blocked(rt, 0);
    static unsigned char big[4096], orig_big[4096];
    for (size_t i = 0; i < sizeof orig_big; i++)
        orig_big[i] = (unsigned char)(i ^ 0x3c);
    memcpy(big, orig_big, sizeof big);
    blk_expect = orig_big;
    blk_expect_size = sizeof big;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, big, sizeof big), SHOAL_OK);
    memset(big, 0, sizeof big);
    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&blk_data) == 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_bad), 0);
    shoal_runtime_destroy(rt);
}

static atomic_int owned_frees;
static void owned_free(void *p)
{
    atomic_fetch_add(&owned_frees, 1);
    free(p);
}

static unsigned char *owned_buf(size_t size, unsigned char seed)
{
    unsigned char *p = malloc(size);
    for (size_t i = 0; i < size; i++)
        p[i] = (unsigned char)(seed + i);
    return p;
}

static void owned_payload_is_handed_over_and_freed_once(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    atomic_store(&owned_frees, 0);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &blk_beh, NULL, NULL, &pid), SHOAL_OK);
    for (int i = 0; i < 3; i++) {
        size_t size = i == 0 ? 8 : 4096; /* small ones are handed over too */
        unsigned char *p = owned_buf(size, (unsigned char)i);
        unsigned char *want = owned_buf(size, (unsigned char)i);
        blk_expect = want;
        blk_expect_size = size;
        blk_expect_ptr = p; /* handed over: the handler sees the very buffer */
        CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, p, size, owned_free), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&owned_frees) == i + 1);
        CU_ASSERT_EQUAL(atomic_load(&owned_frees), i + 1);
        CU_ASSERT_EQUAL(atomic_load(&blk_data), i + 1);
        free(want);
    }
    CU_ASSERT_EQUAL(atomic_load(&blk_bad), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).heap_payloads, 3);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), 3);
}

static void owned_payload_freed_when_dropped_kept_on_error(void)
{
    enum { K = 5 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    atomic_store(&owned_frees, 0);
    shoal_pid_t pid = blk_spawn_blocked(rt, K);
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, owned_buf(64, 1), 64, owned_free),
                        SHOAL_OK);
    /* Full: refused, and the caller still owns the buffer. */
    unsigned char *mine = owned_buf(64, 2);
    CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, mine, 64, owned_free), SHOAL_EFULL);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), 0);
    CU_ASSERT_EQUAL(mine[63], (unsigned char)(2 + 63)); /* still ours and intact (ASan) */
    /* The receiver ends after the blocking message: the K queued are dropped. */
    atomic_store(&blk_exit_after, 1);
    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&owned_frees) == K && shoal_test_stats(rt).msgs_dropped == K);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, K);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), 0);
    /* Gone: refused with ENOPROC, the caller still owns it. */
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, pid) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, mine, 64, owned_free), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_owned(rt, pid, T_DATA, NULL, 64, owned_free), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
    CU_ASSERT_EQUAL(mine[0], 2);
    free(mine);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
}

/* Owned payloads still queued when the runtime is destroyed are freed too. */
static void owned_payload_freed_on_destroy(void)
{
    enum { K = 7 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    atomic_store(&owned_frees, 0);
    shoal_pid_t pid = blk_spawn_blocked(rt, 0);
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(
            shoal_runtime_send_owned(rt, pid, T_DATA, owned_buf(100, 3), 100, owned_free),
            SHOAL_OK);
    atomic_store(&blk_release, 1); /* destroy waits for the handler to return */
    shoal_runtime_destroy(rt);
    /* Each was either handled (then freed) or dropped (then freed). */
    CU_ASSERT_EQUAL(atomic_load(&owned_frees), K);
}

/* ---- priority --------------------------------------------------------------- */

static void priority_overtakes_ten_thousand_queued(void)
{
    enum { N = 10000 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid = blk_spawn_blocked(rt, 0);
    for (long i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, &i, sizeof i), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_CTRL, NULL, 0), SHOAL_OK);
    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&blk_data) == N);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), N);
    CU_ASSERT_EQUAL(atomic_load(&blk_ctrl_seen), 1);
    /* The system mailbox is checked before every user message. */
    int after = atomic_load(&blk_ctrl_after);
    CU_ASSERT(after >= 0 && after <= 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_ctrl_flags), (int)SHOAL_MSG_PRIORITY);
    CU_ASSERT_EQUAL(atomic_load(&blk_data_prio), 0); /* user messages carry no flag */
    CU_ASSERT_EQUAL(atomic_load(&blk_order_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&blk_last_index), N - 1);
    CU_ASSERT_EQUAL(atomic_load(&blk_bad), 0);
    shoal_runtime_destroy(rt);
}

/* Priority messages from one sender keep their order too, and a full user
 * mailbox does not refuse them. */
static void priority_is_fifo_and_never_full(void)
{
    enum { N = 500 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid = blk_spawn_blocked(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_CTRL, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_CTRL, NULL, 0), SHOAL_EFULL);
    for (long i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_DATA, &i, sizeof i), SHOAL_OK);
    atomic_store(&blk_release, 1);
    WAIT_UNTIL(atomic_load(&blk_data) == N && atomic_load(&blk_ctrl_seen));
    CU_ASSERT_EQUAL(atomic_load(&blk_data), N);
    CU_ASSERT_EQUAL(atomic_load(&blk_data_prio), N);
    CU_ASSERT_EQUAL(atomic_load(&blk_order_bad), 0);
    /* The queued user message ran after every priority one. */
    CU_ASSERT_EQUAL(atomic_load(&blk_ctrl_after), N);
    CU_ASSERT_EQUAL(atomic_load(&blk_ctrl_flags), 0);
    shoal_runtime_destroy(rt);
}

static void send_rejects_bad_arguments(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    blk_reset();
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &blk_beh, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 5), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_DATA, NULL, 5), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 0);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&blk_data), 0);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"per-sender FIFO from threads and actors", per_sender_fifo_from_threads_and_actors},
        {"EFULL counts are exact at the limit", efull_counts_are_exact_at_the_limit},
        {"limit 1 accepts exactly one", limit_one_accepts_exactly_one},
        {"max_queued bounds unbounded mailboxes", max_queued_bounds_unbounded_mailboxes},
        {"ENOPROC after shoal_exit", enoproc_after_shoal_exit},
        {"ENOPROC after an error return", enoproc_after_error_return},
        {"ENOPROC after shoal_stop", enoproc_after_shoal_stop},
        {"ENOPROC after shoal_runtime_stop_actor", enoproc_after_stop_actor},
        {"inline and heap payloads arrive intact", inline_and_heap_payloads_arrive_intact},
        {"payload is copied at send", payload_is_copied_at_send},
        {"owned payload is handed over and freed once",
         owned_payload_is_handed_over_and_freed_once},
        {"owned payload freed when dropped, kept on error",
         owned_payload_freed_when_dropped_kept_on_error},
        {"owned payload freed on destroy", owned_payload_freed_on_destroy},
        {"priority overtakes 10,000 queued", priority_overtakes_ten_thousand_queued},
        {"priority is FIFO and never full", priority_is_fifo_and_never_full},
        {"send rejects bad arguments", send_rejects_bad_arguments},
        {NULL, NULL},
    };
    return shoal_test_run("send", cases);
}
