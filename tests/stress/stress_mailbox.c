/* stress_mailbox.c - 8 producer threads x 10^6 messages into 4 receivers
 * with mailbox_limit 64. Producers retry on SHOAL_EFULL and count their
 * refusals. Checked: every accepted message is handled exactly once, each
 * producer's messages reach each receiver in order, all 8 x 10^6 are
 * accepted in the end, and the refusals the producers saw equal the
 * runtime's msgs_refused.
 *
 * Sizes scale with SHOAL_STRESS_SCALE (a factor, default 1; sanitizer
 * builds default to 0.1).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define PRODUCERS 8
#define RECEIVERS 4
#define LIMIT 64
#define STALL_S 10.0 /* no progress for this long: fail */

typedef struct {
    uint32_t producer;
    uint32_t seq; /* per producer, over all receivers */
} msg_t;

static shoal_runtime_t *rt;
static shoal_pid_t receivers[RECEIVERS];
static long per_producer;
static atomic_long refused[PRODUCERS];
static atomic_long handled_total;
static atomic_int order_bad, send_bad;

typedef struct {
    int64_t last[PRODUCERS]; /* receiver only */
    int64_t count[PRODUCERS];
} recv_state_t;

static int recv_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)args;
    recv_state_t *s = state;
    for (int i = 0; i < PRODUCERS; i++)
        s->last[i] = -1;
    return 0;
}

static int recv_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    recv_state_t *s = state;
    msg_t m;
    if (msg->size != sizeof m) {
        atomic_fetch_add(&order_bad, 1);
        return 0;
    }
    memcpy(&m, msg->data, sizeof m);
    /* Strictly increasing per producer: no duplicate, no reordering. */
    if (m.producer >= PRODUCERS || (int64_t)m.seq <= s->last[m.producer])
        atomic_fetch_add(&order_bad, 1);
    else
        s->last[m.producer] = m.seq;
    s->count[m.producer]++;
    atomic_fetch_add_explicit(&handled_total, 1, memory_order_relaxed);
    return 0;
}

static atomic_long recv_counts[RECEIVERS][PRODUCERS];
static atomic_int recv_index_next;

static void recv_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)reason;
    recv_state_t *s = state;
    int r = atomic_fetch_add(&recv_index_next, 1);
    for (int p = 0; p < PRODUCERS && r < RECEIVERS; p++)
        atomic_store(&recv_counts[r][p], s->count[p]);
}

static const shoal_behaviour_t recv_beh = {.name = "recv",
                                           .state_size = sizeof(recv_state_t),
                                           .init = recv_init,
                                           .handle_message = recv_handle,
                                           .terminate = recv_term};

static void *producer(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    long refusals = 0;
    for (long i = 0; i < per_producer; i++) {
        msg_t m = {id, (uint32_t)i};
        shoal_pid_t to = receivers[(i + id) % RECEIVERS];
        unsigned spins = 0;
        for (;;) {
            int rc = shoal_runtime_send(rt, to, 1, &m, sizeof m);
            if (rc == SHOAL_OK)
                break;
            if (rc != SHOAL_EFULL) {
                atomic_fetch_add(&send_bad, 1);
                break;
            }
            refusals++;
            if (++spins > 4)
                sched_yield();
        }
        if ((i & 1023) == 0)
            atomic_store(&refused[id], refusals);
    }
    atomic_store(&refused[id], refusals);
    return NULL;
}

static void many_producers_limited_mailboxes(void)
{
    per_producer = (long)(1000000 * shoal_test_stress_scale(0.1));
    if (per_producer < 1000)
        per_producer = 1000;
    const long total = per_producer * PRODUCERS;
    rt = shoal_test_runtime(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_spawn_opts_t o = {.mailbox_limit = LIMIT};
    for (int r = 0; r < RECEIVERS; r++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &recv_beh, NULL, &o, &receivers[r]),
                              SHOAL_OK);
    double t0 = shoal_test_now();
    pthread_t th[PRODUCERS];
    for (uintptr_t p = 0; p < PRODUCERS; p++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[p], NULL, producer, (void *)p), 0);

    /* Watchdog: progress must not stop for STALL_S. */
    long last = -1;
    double last_change = shoal_test_now();
    int stalled = 0;
    while (atomic_load(&handled_total) < total) {
        long h = atomic_load(&handled_total);
        if (h != last) {
            last = h;
            last_change = shoal_test_now();
        } else if (shoal_test_now() - last_change > STALL_S) {
            stalled = 1;
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CU_ASSERT_EQUAL(stalled, 0);
    if (stalled) {
        fprintf(stderr, "stalled at %ld of %ld handled\n", last, total);
        abort(); /* producers may be stuck: do not join them */
    }
    for (int p = 0; p < PRODUCERS; p++)
        pthread_join(th[p], NULL);
    double took = shoal_test_now() - t0;

    long refusals = 0;
    for (int p = 0; p < PRODUCERS; p++)
        refusals += atomic_load(&refused[p]);
    shoal_runtime_stats_t s;
    shoal_runtime_stats(rt, &s);
    fprintf(stderr, "  [%ld messages in %.2f s, %ld refusals] ", total, took, refusals);
    CU_ASSERT_EQUAL(atomic_load(&handled_total), total);
    CU_ASSERT_EQUAL(atomic_load(&order_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&send_bad), 0);
    CU_ASSERT_EQUAL(s.msgs_sent, (uint64_t)total);
    CU_ASSERT_EQUAL(s.msgs_refused, (uint64_t)refusals);
    CU_ASSERT_EQUAL(s.msgs_dropped, 0);
    shoal_runtime_destroy(rt);
    /* Per receiver and producer, exactly the messages addressed to it. */
    CU_ASSERT_EQUAL(atomic_load(&recv_index_next), RECEIVERS);
    for (int p = 0; p < PRODUCERS; p++) {
        long sum = 0;
        for (int r = 0; r < RECEIVERS; r++)
            sum += atomic_load(&recv_counts[r][p]);
        CU_ASSERT_EQUAL(sum, per_producer);
    }
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"8 producers into 4 receivers with limit 64", many_producers_limited_mailboxes},
        {NULL, NULL},
    };
    return shoal_test_run("stress_mailbox", cases);
}
