/* test_send_fifo.c - sending (core/actor/send.c) in order: per-sender FIFO
 * from threads and actors sending at once to one receiver.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics (some in send_kit.h), and the test thread asserts after
 * synchronising on them.
 */
#include <pthread.h>
#include <string.h>

#include "send_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, SK_WAIT_S)

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

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"per-sender FIFO from threads and actors", per_sender_fifo_from_threads_and_actors},
        {NULL, NULL},
    };
    return shoal_test_run("send_fifo", cases);
}
