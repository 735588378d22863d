/* test_strategy.c - how a forward pool picks a worker (core/pool/forward.c,
 * shoal/pool.h SHOAL_POOL_STRATEGY_*): the order each strategy produces.
 *   - fifo: each sender thread rotates on its own: two threads taking turns
 *     each go 0, 1, 2, so the workers get 0 0 1 1 2 2;
 *   - round_robin: one rotation for every sender: the same turns give
 *     0 1 2 0 1 2;
 *   - least_loaded: the worker with the fewest queued messages, an idle one
 *     before a busy one, ties to the next in FIFO order: with 5, 2 and 0
 *     queued behind three busy workers, five sends go to 2 2 1 2 1;
 *   - the strategy changes live (SHOAL_POOL_SET_STRATEGY), is reported in
 *     stats and inspect, and bad ones are refused (EINVAL, ENOTSUP on a pull
 *     pool, EINVAL in a spec).
 *
 * Which worker got a message is recorded by its handler; where a test needs
 * the workers busy, they block on a gate the test opens.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
#define MAXSEQ 64

enum { T_JOB = 1 };
enum { A_OK = 0, A_BLOCK = 1 };

typedef struct {
    uint32_t seq, act;
} job_t;

static _Atomic shoal_pid_t owner[MAXSEQ];
static atomic_int done, entered, gate;

static void reset(void)
{
    for (int i = 0; i < MAXSEQ; i++)
        atomic_store(&owner[i], SHOAL_PID_NONE);
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
}

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    job_t j;
    if (msg->type != T_JOB || msg->size != sizeof j)
        return 0;
    memcpy(&j, msg->data, sizeof j);
    if (j.seq < MAXSEQ)
        atomic_store(&owner[j.seq], shoal_self(ctx));
    if (j.act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    atomic_fetch_add(&done, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

static shoal_pid_t spawn(shoal_runtime_t *rt, uint32_t strategy)
{
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "strat";
    s.worker = &wk;
    s.size = 3;
    s.mailbox = 32;
    s.strategy = strategy;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    return p;
}

static int job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t seq, uint32_t act)
{
    job_t j = {seq, act};
    return shoal_runtime_send(rt, to, T_JOB, &j, sizeof j);
}

/* ---- two senders taking turns -------------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int me; /* 0 or 1: sends seq 2k + me on its k-th turn */
    atomic_int *turn;
} turns_t;

static void *turns_main(void *arg)
{
    turns_t *t = arg;
    for (uint32_t k = 0; k < 6; k++) {
        double end = shoal_test_now() + WAIT_S;
        while (atomic_load(t->turn) != t->me && shoal_test_now() < end)
            shoal_test_nap();
        if (job(t->rt, t->pool, 2 * k + (uint32_t)t->me, A_OK) != SHOAL_OK)
            atomic_fetch_add(&entered, 100); /* asserted: never */
        atomic_store(t->turn, 1 - t->me);
    }
    return NULL;
}

/* Sends seq 0..11 from two threads taking turns (even from one, odd from
 * the other); returns once all are handled. */
static void two_senders(shoal_runtime_t *rt, shoal_pid_t pool)
{
    atomic_int turn = 0;
    turns_t a = {rt, pool, 0, &turn}, b = {rt, pool, 1, &turn};
    pthread_t ta, tb;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, turns_main, &a), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tb, NULL, turns_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    WAIT_UNTIL(atomic_load(&done) == 12);
    CU_ASSERT_EQUAL(atomic_load(&done), 12);
    CU_ASSERT_EQUAL(atomic_load(&entered), 0);
}

/* fifo: each thread's own rotation -- seq 2k and 2k + 1 (one from each
 * thread) go to the same worker, the k-th of the FIFO; the three workers
 * are distinct. */
static void fifo_rotates_per_sender(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn(rt, SHOAL_POOL_STRATEGY_FIFO);
    two_senders(rt, p);
    for (uint32_t k = 0; k < 6; k++)
        CU_ASSERT_EQUAL(atomic_load(&owner[2 * k]), atomic_load(&owner[2 * k + 1]));
    CU_ASSERT_NOT_EQUAL(atomic_load(&owner[0]), atomic_load(&owner[2]));
    CU_ASSERT_NOT_EQUAL(atomic_load(&owner[2]), atomic_load(&owner[4]));
    CU_ASSERT_NOT_EQUAL(atomic_load(&owner[0]), atomic_load(&owner[4]));
    CU_ASSERT_EQUAL(atomic_load(&owner[6]), atomic_load(&owner[0])); /* round again */
    shoal_runtime_destroy(rt);
}

/* round_robin: one rotation shared by both threads: seq i goes to worker
 * i mod 3 of the FIFO. */
static void round_robin_rotates_for_all(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn(rt, SHOAL_POOL_STRATEGY_ROUND_ROBIN);
    two_senders(rt, p);
    CU_ASSERT_NOT_EQUAL(atomic_load(&owner[0]), atomic_load(&owner[1]));
    CU_ASSERT_NOT_EQUAL(atomic_load(&owner[1]), atomic_load(&owner[2]));
    CU_ASSERT_NOT_EQUAL(atomic_load(&owner[0]), atomic_load(&owner[2]));
    for (uint32_t i = 3; i < 12; i++)
        CU_ASSERT_EQUAL(atomic_load(&owner[i]), atomic_load(&owner[i % 3]));
    shoal_runtime_destroy(rt);
}

/* least_loaded: three sends find three idle workers: 0, 1, 2 (the first
 * idle one from the cursor each time); they block. Then 5, 2 and 0 more
 * are queued straight to workers 0, 1 and 2. Five sends to the pool go to
 * 2 (load 0 queued), 2 (1), 1 (2 each: the tie goes to the first from the
 * cursor), 2 (2 against 3), 1 (3 each: the tie again). */
static void least_loaded_picks_the_shortest_queue(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(6);
    shoal_pid_t p = spawn(rt, SHOAL_POOL_STRATEGY_LEAST_LOADED);
    for (uint32_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(job(rt, p, i, A_BLOCK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 3);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), 3);
    shoal_pid_t w[3];
    for (int i = 0; i < 3; i++)
        w[i] = atomic_load(&owner[i]);
    CU_ASSERT_NOT_EQUAL(w[0], w[1]);
    CU_ASSERT_NOT_EQUAL(w[1], w[2]);
    CU_ASSERT_NOT_EQUAL(w[0], w[2]);
    static const uint32_t queued[3] = {5, 2, 0};
    uint32_t seq = 3;
    for (int i = 0; i < 3; i++)
        for (uint32_t k = 0; k < queued[i]; k++)
            CU_ASSERT_EQUAL(job(rt, w[i], seq++, A_OK), SHOAL_OK); /* straight to it */
    static const int want[5] = {2, 2, 1, 2, 1};
    uint32_t first = seq;
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(job(rt, p, seq++, A_OK), SHOAL_OK);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == (int)seq);
    CU_ASSERT_EQUAL(atomic_load(&done), (int)seq);
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(atomic_load(&owner[first + (uint32_t)k]), w[want[k]]);
    shoal_runtime_destroy(rt);
}

/* Live change, reports and refusals. */
static void strategy_changes_live_and_bad_ones_are_refused(void)
{
    reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = spawn(rt, SHOAL_POOL_STRATEGY_FIFO);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).strategy, SHOAL_POOL_STRATEGY_FIFO);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, p, SHOAL_POOL_STRATEGY_ROUND_ROBIN, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).strategy, SHOAL_POOL_STRATEGY_ROUND_ROBIN);
    two_senders(rt, p); /* round robin now */
    for (uint32_t i = 3; i < 12; i++)
        CU_ASSERT_EQUAL(atomic_load(&owner[i]), atomic_load(&owner[i % 3]));
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, p, TMO, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(a.data != NULL ? strstr(a.data, "\"strategy\":\"round_robin\"") : NULL);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, p, 3, TMO), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).strategy, SHOAL_POOL_STRATEGY_ROUND_ROBIN);

    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.worker = &wk;
    s.kind = SHOAL_POOL_KIND_PULL;
    shoal_pid_t q;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &q), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_strategy(rt, q, SHOAL_POOL_STRATEGY_ROUND_ROBIN, TMO),
                    SHOAL_ENOTSUP);
    s.strategy = SHOAL_POOL_STRATEGY_LEAST_LOADED; /* a pull pool takes no strategy */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &q), SHOAL_EINVAL);
    s.kind = SHOAL_POOL_KIND_FORWARD;
    s.strategy = 3;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &q), SHOAL_EINVAL);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"fifo rotates per sender", fifo_rotates_per_sender},
        {"round_robin rotates for all", round_robin_rotates_for_all},
        {"least_loaded picks the shortest queue", least_loaded_picks_the_shortest_queue},
        {"the strategy changes live; bad ones are refused",
         strategy_changes_live_and_bad_ones_are_refused},
        {NULL, NULL}};
    return shoal_test_run("strategy", cases);
}
