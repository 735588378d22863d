/* test_worker.c - the dispatcher (core/sched/worker.c): one thread per actor
 * at a time, fairness between hot and cold actors, a thread count that does
 * not grow with actors, and parking without lost wake-ups.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actor/actor.h"
#include "runtime/runtime.h"
#include "support.h"

#define WAIT_S 30.0

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

static shoal_runtime_t *make_rt(unsigned threads, unsigned throughput, unsigned spin_us)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = threads;
    o.throughput = throughput;
    o.spin_us = spin_us;
    o.debug_checks = 1; /* an actor on two threads at once aborts the process */
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = NULL;
    return shoal_runtime_create(&rt, &o) == SHOAL_OK ? rt : NULL;
}

/* ---- the debug owner check itself -------------------------------------------------- */

static void owner_check_detects_a_second_owner(void)
{
    alignas(64) shoal_actor_t a;
    memset(&a, 0, sizeof a);
    CU_ASSERT_TRUE(shoal__owner_enter(&a, 0));
    CU_ASSERT_FALSE(shoal__owner_enter(&a, 1)); /* a second worker */
    CU_ASSERT_FALSE(shoal__owner_enter(&a, 0)); /* or the same one re-entering */
    shoal__owner_leave(&a);
    CU_ASSERT_TRUE(shoal__owner_enter(&a, 1));
    shoal__owner_leave(&a);
    CU_ASSERT_TRUE(shoal__owner_enter(&a, 7));
    shoal__owner_leave(&a);
    CU_ASSERT_EQUAL(atomic_load(&a.owner), 0);
}

/* ---- exclusion ------------------------------------------------------------------------ */

#define EX_ACTORS 64
#define EX_THREADS 4
#define EX_PER_THREAD 40000

typedef struct {
    atomic_int in_handler; /* our own check, besides the runtime's */
    int index;
    uint64_t handled; /* plain: only the owning turn writes it */
} ex_state_t;

static shoal_runtime_t *ex_rt;
static shoal_pid_t ex_pids[EX_ACTORS];
static atomic_int ex_overlap, ex_total, ex_fwd_err;
static atomic_long ex_handled_sum;

static int ex_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((ex_state_t *)state)->index = *(const int *)args;
    return 0;
}

static int ex_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    ex_state_t *s = state;
    if (atomic_exchange(&s->in_handler, 1) != 0)
        atomic_fetch_add(&ex_overlap, 1);
    s->handled++; /* a data race if two threads were here: TSan would say so */
    for (volatile int i = 0; i < 50; i++) {
    }
    /* Type 1: forward once to another actor, from a worker (own ring). */
    if (msg->type == 1) {
        int next = (s->index * 7 + 3) % EX_ACTORS;
        if (shoal_send(ctx, ex_pids[next], 2, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&ex_fwd_err, 1);
    }
    atomic_store(&s->in_handler, 0);
    atomic_fetch_add(&ex_total, 1);
    return 0;
}

static void ex_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)reason;
    atomic_fetch_add(&ex_handled_sum, (long)((ex_state_t *)state)->handled);
}

static void *ex_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    for (int i = 0; i < EX_PER_THREAD; i++) {
        seed = seed * 1103515245u + 12345u;
        shoal_pid_t to = ex_pids[(seed >> 8) % EX_ACTORS];
        if (shoal_runtime_send(ex_rt, to, 1, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&ex_fwd_err, 1);
    }
    return NULL;
}

static void no_actor_runs_on_two_threads(void)
{
    static const shoal_behaviour_t beh = {.name = "excl",
                                          .state_size = sizeof(ex_state_t),
                                          .init = ex_init,
                                          .handle_message = ex_handle,
                                          .terminate = ex_term};
    static int idx[EX_ACTORS];
    shoal_runtime_t *rt = ex_rt = make_rt(4, 4, 0); /* short turns: many hand-overs */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&ex_overlap, 0);
    atomic_store(&ex_total, 0);
    atomic_store(&ex_fwd_err, 0);
    atomic_store(&ex_handled_sum, 0);
    for (int i = 0; i < EX_ACTORS; i++) {
        idx[i] = i;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, &idx[i], NULL, &ex_pids[i]), SHOAL_OK);
    }
    pthread_t th[EX_THREADS];
    for (uintptr_t i = 0; i < EX_THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, ex_thread, (void *)i), 0);
    for (int i = 0; i < EX_THREADS; i++)
        pthread_join(th[i], NULL);
    const int expect = 2 * EX_THREADS * EX_PER_THREAD; /* each message forwards one */
    WAIT_UNTIL(atomic_load(&ex_total) == expect);
    CU_ASSERT_EQUAL(atomic_load(&ex_total), expect);
    CU_ASSERT_EQUAL(atomic_load(&ex_overlap), 0);
    CU_ASSERT_EQUAL(atomic_load(&ex_fwd_err), 0);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT(s.turns > 0);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&ex_handled_sum), expect);
}

/* ---- fairness ---------------------------------------------------------------------------
 *
 * T hot actors keep their own mailboxes non-empty (each handled message sends
 * one more to itself; each starts with SEED of them), so every turn uses the
 * whole budget of `throughput` messages. A thread that is not a worker then
 * sends to a cold actor: it goes to the global ring.
 *
 * Bound, from find_work() in worker.c: a worker takes from the global ring
 * before its own ring whenever its previous pick did not come from the
 * global ring (took_global == 0), and after at most one own-ring pick when
 * it did. So from the moment of the push, each worker starts at most one
 * more turn (besides the one it is in) before it picks the cold actor. A
 * hot actor can only run on a worker, one turn at a time; within that window
 * it can run at most two turns per worker (the one in progress and the one
 * more), so at most 2 * T turns, 2 * T * throughput messages. In practice a
 * hot actor stays on its worker (a ring's single actor is not stolen from a
 * worker that makes progress), which gives 2 * throughput; we assert the
 * bound that holds whatever the stealing does.
 *
 * What is counted: the messages each hot actor handles while the cold actor
 * is SCHEDULED (its schedule word, actor.h: set by the send, before the
 * push; cleared when a worker starts its turn) and still unclaimed in the
 * global ring (enq_pos != deq_pos: a worker claims a cell by advancing
 * deq_pos, inject.h; nothing else goes to the global ring once the hot
 * actors run from their own rings). Messages handled after the CAS but
 * before the push, while this thread may be descheduled inside the send,
 * are not the dispatcher's fault: the count read when the send returns is
 * subtracted. Counting up to the start of the cold turn would also count
 * what hot actors do while the OS has descheduled the worker that already
 * claimed the cold actor (seen on a 2-core machine with 3 workers: 32k
 * messages, one time slice). */

#define HOT_MAX 8
#define HOT_SEED 64

static atomic_long hot_count[HOT_MAX];
static atomic_long hot_pending[HOT_MAX]; /* handled while the cold one was queued */
static shoal_actor_t *cold_front;        /* the cold actor's record (internal) */
static shoal_inject_t *cold_global;      /* the global ring it is pushed to */
static atomic_int cold_runs, hot_err, hot_stop;
static int hot_n;

static int hot_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    int i = (int)msg->type;
    atomic_fetch_add(&hot_count[i], 1);
    if (atomic_load(&cold_front->sched) == SHOAL_SCHED_SCHEDULED &&
        atomic_load(&cold_global->enq_pos) != atomic_load(&cold_global->deq_pos))
        atomic_fetch_add(&hot_pending[i], 1);
    if (!atomic_load_explicit(&hot_stop, memory_order_relaxed) &&
        shoal_send(ctx, shoal_self(ctx), msg->type, NULL, 0) != SHOAL_OK)
        atomic_fetch_add(&hot_err, 1);
    return 0;
}

static int cold_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&cold_runs, 1);
    return 0;
}

static void fairness_with(unsigned threads)
{
    static const shoal_behaviour_t hot = {.name = "hot", .handle_message = hot_handle};
    static const shoal_behaviour_t cold = {.name = "cold", .handle_message = cold_handle};
    enum { TP = 32, TRIALS = 30 };
    shoal_runtime_t *rt = make_rt(threads, TP, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    hot_n = (int)threads;
    atomic_store(&cold_runs, 0);
    atomic_store(&hot_err, 0);
    atomic_store(&hot_stop, 0);
    for (int i = 0; i < hot_n; i++)
        atomic_store(&hot_count[i], 0);
    shoal_pid_t cold_pid, hot_pid[HOT_MAX];
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &cold, NULL, NULL, &cold_pid), SHOAL_OK);
    cold_front = shoal__actor_at(rt, shoal__pid_slot(cold_pid));
    cold_global = &rt->global;
    for (int i = 0; i < hot_n; i++) {
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &hot, NULL, NULL, &hot_pid[i]), SHOAL_OK);
        for (int k = 0; k < HOT_SEED; k++)
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, hot_pid[i], (uint32_t)i, NULL, 0), SHOAL_OK);
    }
    /* Let every hot actor get going. */
    for (int i = 0; i < hot_n; i++)
        WAIT_UNTIL(atomic_load(&hot_count[i]) > 100000);
    const long bound = 2L * (long)threads * TP;
    long worst = 0;
    for (int t = 0; t < TRIALS; t++) {
        /* The cold actor is idle again (its last turn has ended). */
        WAIT_UNTIL(atomic_load(&cold_front->sched) == SHOAL_SCHED_IDLE);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&cold_front->sched), SHOAL_SCHED_IDLE);
        long at_send[HOT_MAX];
        for (int i = 0; i < hot_n; i++)
            atomic_store(&hot_pending[i], 0);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, cold_pid, 0, NULL, 0), SHOAL_OK);
        for (int i = 0; i < hot_n; i++)
            at_send[i] = atomic_load(&hot_pending[i]);
        WAIT_UNTIL(atomic_load(&cold_runs) == t + 1);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&cold_runs), t + 1);
        for (int i = 0; i < hot_n; i++) {
            long d = atomic_load(&hot_pending[i]) - at_send[i];
            if (d > worst)
                worst = d;
            CU_ASSERT(d <= bound);
            if (d > bound)
                fprintf(stderr, "  trial %d hot %d: %ld messages > %ld\n", t, i, d, bound);
        }
    }
    fprintf(stderr, "  [%u threads: worst %ld hot messages before the cold one, bound %ld] ",
            threads, worst, bound);
    CU_ASSERT_EQUAL(atomic_load(&hot_err), 0);
    atomic_store(&hot_stop, 1);
    shoal_runtime_destroy(rt);
}

static void cold_actor_runs_within_one_turn_per_worker(void)
{
    fairness_with(2);
    fairness_with(3);
}

/* An actor made runnable from inside a hot actor's handler goes to the same
 * worker's ring; the hot actor, at the end of its turn, goes behind it. So
 * the hot actor handles at most throughput - 1 more messages on that worker
 * (the rest of its turn) before the neighbour starts there.
 *
 * Counted precisely: the hot actor counts the messages it handles on the
 * sending worker's thread while the neighbour has not started. (Counting
 * hot messages until the neighbour reads a counter would also count turns
 * the hot actor ran on a sibling while the OS had descheduled the
 * neighbour's thread mid-turn; seen under TSan.) A neighbour that a sibling
 * stole is not bounded by the hot actor at all; those rounds are counted
 * apart, and with one worker there are none. */
static _Atomic shoal_pid_t near_cold;
static atomic_long near_same; /* hot messages on the sender's thread while pending */
static atomic_int near_sent, near_started, near_runs, near_stop;
static _Atomic uintptr_t near_sender_thread;

static int near_hot_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    (void)msg;
    long n = atomic_fetch_add(&hot_count[0], 1) + 1;
    if (atomic_load(&near_started) < atomic_load(&near_sent) &&
        (uintptr_t)pthread_self() == atomic_load(&near_sender_thread))
        atomic_fetch_add(&near_same, 1);
    if (n % 5000 == 0 && atomic_load(&near_runs) == atomic_load(&near_sent)) {
        atomic_store(&near_same, 0);
        atomic_store(&near_sender_thread, (uintptr_t)pthread_self());
        atomic_fetch_add(&near_sent, 1);
        if (shoal_send(ctx, atomic_load(&near_cold), 0, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&hot_err, 1);
    }
    if (!atomic_load(&near_stop) && shoal_send(ctx, shoal_self(ctx), 0, NULL, 0) != SHOAL_OK)
        atomic_fetch_add(&hot_err, 1);
    return 0;
}

static atomic_long near_worst;
static atomic_int near_violations, near_stolen;

static int near_cold_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&near_started, 1);
    if ((uintptr_t)pthread_self() != atomic_load(&near_sender_thread)) {
        atomic_fetch_add(&near_stolen, 1);
    } else {
        /* The hot actor cannot run on this thread now: final. */
        long d = atomic_load(&near_same);
        if (d > atomic_load(&near_worst))
            atomic_store(&near_worst, d);
        if (d > 32 - 1)
            atomic_fetch_add(&near_violations, 1);
    }
    atomic_fetch_add(&near_runs, 1);
    return 0;
}

static void hot_actor_cannot_starve_its_neighbour(unsigned threads)
{
    static const shoal_behaviour_t hot = {.name = "near-hot", .handle_message = near_hot_handle};
    static const shoal_behaviour_t cold = {.name = "near-cold", .handle_message = near_cold_handle};
    enum { ROUNDS = 200 };
    shoal_runtime_t *rt = make_rt(threads, 32, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&hot_count[0], 0);
    atomic_store(&near_same, 0);
    atomic_store(&near_started, 0);
    atomic_store(&near_sent, 0);
    atomic_store(&near_runs, 0);
    atomic_store(&near_stop, 0);
    atomic_store(&near_worst, 0);
    atomic_store(&near_violations, 0);
    atomic_store(&near_stolen, 0);
    atomic_store(&hot_err, 0);
    shoal_pid_t c, h;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &cold, NULL, NULL, &c), SHOAL_OK);
    atomic_store(&near_cold, c);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &hot, NULL, NULL, &h), SHOAL_OK);
    for (int k = 0; k < HOT_SEED; k++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, 0, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&near_runs) >= ROUNDS);
    CU_ASSERT(atomic_load(&near_runs) >= ROUNDS);
    atomic_store(&near_stop, 1);
    fprintf(stderr, "  [%u threads: worst %ld on the same worker, %d of %d stolen] ", threads,
            atomic_load(&near_worst), atomic_load(&near_stolen), atomic_load(&near_runs));
    if (threads == 1)
        CU_ASSERT_EQUAL(atomic_load(&near_stolen), 0);
    CU_ASSERT_EQUAL(atomic_load(&near_violations), 0);
    CU_ASSERT_EQUAL(atomic_load(&hot_err), 0);
    shoal_runtime_destroy(rt);
}

static void neighbour_runs_within_one_hot_turn(void)
{
    hot_actor_cannot_starve_its_neighbour(1);
    hot_actor_cannot_starve_its_neighbour(2);
}

/* ---- threads do not grow with actors --------------------------------------------------- */

static atomic_int idle_handled;
static int idle_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&idle_handled, 1);
    return 0;
}

static void idle_actors_add_no_threads(void)
{
    static const shoal_behaviour_t beh = {.name = "idle", .handle_message = idle_handle};
    enum { N = 100000, T = 3 };
    atomic_store(&idle_handled, 0);
    int base = shoal_test_thread_base();
    CU_ASSERT_FATAL(base > 0);
    shoal_runtime_t *rt = make_rt(T, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_runtime_threads(rt), T);
    /* workers + the timer thread */
    CU_ASSERT_EQUAL(shoal_test_threads(base + T + 1), base + T + 1);
    shoal_pid_t pid;
    for (int i = 0; i < N; i++) {
        if (shoal_runtime_spawn(rt, &beh, NULL, NULL, &pid) != SHOAL_OK ||
            shoal_runtime_send(rt, pid, 0, NULL, 0) != SHOAL_OK) {
            CU_FAIL("spawn or send failed");
            break;
        }
    }
    WAIT_UNTIL(atomic_load(&idle_handled) == N);
    CU_ASSERT_EQUAL(atomic_load(&idle_handled), N);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, N);
    CU_ASSERT_EQUAL(shoal_test_threads(base + T + 1), base + T + 1);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
}

/* ---- parking and waking ------------------------------------------------------------------ */

static int echo_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&idle_handled, 1);
    return 0;
}

static int echo_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)state;
    return shoal_reply_set(reply, msg->type, msg->data, msg->size);
}

static const shoal_behaviour_t echo_beh = {
    .name = "echo", .handle_message = echo_handle, .handle_call = echo_call};

static void no_lost_wakeup_after_parking(void)
{
    enum { CALLS = 10000, PARKED_ROUNDS = 300 };
    shoal_runtime_t *rt = make_rt(2, 0, 1); /* spin 1 us: park almost at once */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &echo_beh, NULL, NULL, &pid), SHOAL_OK);
    uint64_t parks0 = shoal_test_stats(rt).parks;
    int fails = 0;
    for (int i = 0; i < CALLS && fails < 5; i++) {
        shoal_answer_t a;
        int rc = shoal_runtime_call(rt, pid, (uint32_t)i, &i, sizeof i, 5000, &a);
        if (rc != SHOAL_OK || a.type != (uint32_t)i || a.size != sizeof i ||
            memcmp(a.data, &i, sizeof i) != 0) {
            fails++;
            CU_FAIL("call lost or wrong");
        }
        shoal_answer_release(&a);
    }
    CU_ASSERT_EQUAL(fails, 0);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT(s.parks > parks0);
    CU_ASSERT(s.wakes > 0);

    /* Wait until every worker sleeps, then send from this (foreign) thread:
     * the message must still be handled. */
    atomic_store(&idle_handled, 0);
    for (int i = 0; i < PARKED_ROUNDS; i++) {
        WAIT_UNTIL(atomic_load(&rt->nparked) == shoal_runtime_threads(rt));
        CU_ASSERT_EQUAL_FATAL(atomic_load(&rt->nparked), shoal_runtime_threads(rt));
        uint64_t parks = shoal_test_stats(rt).parks;
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 0, NULL, 0), SHOAL_OK);
        WAIT_UNTIL(atomic_load(&idle_handled) == i + 1);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&idle_handled), i + 1);
        CU_ASSERT(shoal_test_stats(rt).parks >= parks);
    }
    shoal_runtime_destroy(rt);
}

/* Many foreign threads wake a runtime that keeps falling asleep. */
static shoal_runtime_t *wk_rt;
static shoal_pid_t wk_pid;
static atomic_int wk_fail;

static void *wk_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        shoal_answer_t a;
        if (shoal_runtime_call(wk_rt, wk_pid, 1, &i, sizeof i, 5000, &a) != SHOAL_OK ||
            memcmp(a.data, &i, sizeof i) != 0)
            atomic_fetch_add(&wk_fail, 1);
        shoal_answer_release(&a);
    }
    return NULL;
}

static void concurrent_foreign_wakers(void)
{
    shoal_runtime_t *rt = wk_rt = make_rt(2, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&wk_fail, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &echo_beh, NULL, NULL, &wk_pid), SHOAL_OK);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, wk_thread, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&wk_fail), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"owner check detects a second owner", owner_check_detects_a_second_owner},
        {"no actor runs on two threads", no_actor_runs_on_two_threads},
        {"cold actor runs within one turn per worker", cold_actor_runs_within_one_turn_per_worker},
        {"neighbour runs within one hot turn", neighbour_runs_within_one_hot_turn},
        {"100,000 idle actors add no threads", idle_actors_add_no_threads},
        {"no lost wake-up after parking", no_lost_wakeup_after_parking},
        {"concurrent foreign wakers", concurrent_foreign_wakers},
        {NULL, NULL},
    };
    return shoal_test_run("worker", cases);
}
