/* test_monitor.c - the dispatcher's monitor (core/sched/monitor.c): a
 * handler that does not return is logged once past stall_warn and once when
 * it returns, listed while it lasts, and a compensating thread keeps other
 * actors running, then retires; none starts when max_extra_threads says so;
 * a pool worker's turn of such handlers publishes its counts as it goes.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them. Waits are generous deadlines on
 * counts, never timings.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "actor/actor.h"
#include "runtime/runtime.h"
#include "sched/monitor.h"
#include "support.h"

#define WAIT_S 30.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

#define STALLED "stall: in its handler for "
#define RETURNED "stall: returned after "

/* ---- behaviours ---------------------------------------------------------------- */

static atomic_int spinning; /* a spinner is inside its handler */
static atomic_int release;  /* let it return */
static atomic_int counted;  /* messages the counter handled */
static atomic_int spin_panics;

/* Spins until released; with a non-empty payload, then panics. */
static int spin_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    atomic_store(&spinning, 1);
    while (!atomic_load(&release))
        for (volatile int i = 0; i < 1000; i++)
            ;
    atomic_store(&spinning, 0);
    if (msg->size != 0) {
        atomic_fetch_add(&spin_panics, 1);
        shoal_panic(ctx, "after the stall");
    }
    return 0;
}

static int count_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state, (void)msg;
    atomic_fetch_add(&counted, 1);
    return 0;
}

/* Sends one message to `target` (onto this worker's own ring), then spins
 * until released. */
static _Atomic shoal_pid_t target;
static int send_then_spin(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    if (shoal_send(ctx, atomic_load(&target), 1, NULL, 0) != SHOAL_OK)
        return SHOAL_EFAILED;
    return spin_handle(ctx, state, msg);
}

static const shoal_behaviour_t spinner = {.name = "spin", .handle_message = spin_handle};
static const shoal_behaviour_t sender = {.name = "send-spin", .handle_message = send_then_spin};
static const shoal_behaviour_t counter = {.name = "count", .handle_message = count_handle};

static void reset(void)
{
    atomic_store(&spinning, 0);
    atomic_store(&release, 0);
    atomic_store(&counted, 0);
    atomic_store(&spin_panics, 0);
}

/* A runtime of `threads` with stall_warn 100 ms, logging at info. */
static shoal_runtime_t *make_rt(unsigned threads, int max_extra)
{
    return shoal_test_runtime_watched(threads, max_extra, SHOAL_LOG_INFO);
}

static size_t stalls(shoal_runtime_t *rt, shoal_stall_t *out, size_t cap)
{
    return shoal__stalls(rt, out, cap, false);
}

/* ---- a stall, seen and survived --------------------------------------------------- */

static void stall_is_logged_listed_and_compensated(void)
{
    enum { N = 1000 };
    reset();
    int base = shoal_test_thread_base();
    shoal_runtime_t *rt = make_rt(1, 0); /* max_extra 0: as many as threads, 1 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_test_threads(base + 2), base + 2); /* the worker, the timer */
    shoal_pid_t s, c;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &spinner, NULL, NULL, &s), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &c), SHOAL_OK);
    /* The worker parks and the monitor with it: the stall must wake it. */
    WAIT_UNTIL(atomic_load(&rt->mon_idle) == 1);
    CU_ASSERT_EQUAL(atomic_load(&rt->mon_idle), 1);

    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_log_count(STALLED) == 1);
    CU_ASSERT_EQUAL_FATAL(shoal_test_log_count(STALLED), 1);
    char want[160];
    snprintf(want, sizeof want, "warn <%u.%u> spin: " STALLED, shoal__pid_slot(s),
             shoal__pid_gen(s));
    shoal_test_assert_logged(want);
    shoal_test_assert_logged("s (behaviour spin, thread 0)");

    /* Listed while it lasts, with what the log line says. */
    shoal_stall_t st[4];
    CU_ASSERT_EQUAL_FATAL(stalls(rt, st, 4), 1);
    CU_ASSERT_EQUAL(st[0].pid, s);
    CU_ASSERT_EQUAL(st[0].thread, 0);
    CU_ASSERT_STRING_EQUAL(st[0].name, "spin");
    CU_ASSERT_STRING_EQUAL(st[0].behaviour, "spin");
    CU_ASSERT_STRING_EQUAL(st[0].group, "");
    CU_ASSERT(st[0].warned);
    CU_ASSERT(st[0].elapsed_ns >= 100u * 1000000u);

    /* The only worker spins, yet another actor's messages are handled: by
     * the compensating thread. */
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&counted) == N);
    CU_ASSERT_EQUAL(atomic_load(&counted), N);
    CU_ASSERT_EQUAL(atomic_load(&spinning), 1);
    shoal_runtime_stats_t rs = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(rs.extra_threads_started, 1);
    CU_ASSERT_EQUAL(rs.extra_threads_live, 1);
    CU_ASSERT_EQUAL(rs.stalls, 1);
    CU_ASSERT_EQUAL(shoal_test_threads(base + 3), base + 3);
    /* Logged once it started (it may have done all the work by then). */
    WAIT_UNTIL(shoal_test_log_count("dispatcher: compensating thread 1 started") == 1);
    shoal_test_assert_logged("dispatcher: compensating thread 1 started: 1 stuck in a handler");

    /* It returns: one line, and the list is empty. */
    atomic_store(&release, 1);
    WAIT_UNTIL(shoal_test_log_count(RETURNED) == 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(RETURNED), 1);
    snprintf(want, sizeof want, "warn <%u.%u> spin: " RETURNED, shoal__pid_slot(s),
             shoal__pid_gen(s));
    shoal_test_assert_logged(want);
    CU_ASSERT_EQUAL(stalls(rt, st, 4), 0);
    CU_ASSERT_EQUAL(shoal__stalls(rt, st, 4, true), 0);

    /* The compensating thread retires: back to one worker. */
    WAIT_UNTIL(shoal_test_stats(rt).extra_threads_live == 0 &&
               shoal_test_thread_count() == base + 2);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).extra_threads_live, 0);
    CU_ASSERT_EQUAL(shoal_test_threads(base + 2), base + 2);
    shoal_test_assert_logged("dispatcher: compensating thread 1 retired (0 left)");

    /* Still one line each, and the runtime works on its one thread. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&counted) == N + 1);
    CU_ASSERT_EQUAL(atomic_load(&counted), N + 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(STALLED), 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(RETURNED), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).extra_threads_started, 1);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
}

/* ---- the stuck worker's own ring ------------------------------------------------- */

/* A message sent from the stuck handler waits on the stuck worker's own
 * ring, its only actor: the compensating thread steals it (a ring whose
 * owner does not pop gives up its single actor, ring.h). */
static void lone_actor_on_a_stuck_ring_is_taken(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s, c;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &c), SHOAL_OK);
    atomic_store(&target, c);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sender, NULL, NULL, &s), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&counted) == 1);
    CU_ASSERT_EQUAL(atomic_load(&counted), 1);
    CU_ASSERT_EQUAL(atomic_load(&spinning), 1); /* handled while the sender spins */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).extra_threads_started, 1);
    atomic_store(&release, 1);
    WAIT_UNTIL(shoal_test_stats(rt).extra_threads_live == 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).extra_threads_live, 0);
    shoal_runtime_destroy(rt);
}

/* ---- no compensating thread when asked for none ------------------------------------ */

static void none_means_none(void)
{
    enum { N = 10 };
    reset();
    shoal_runtime_t *rt = make_rt(1, SHOAL_EXTRA_THREADS_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s, c;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &spinner, NULL, NULL, &s), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &counter, NULL, NULL, &c), SHOAL_OK);
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&counted) == N);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 1, NULL, 0), SHOAL_OK);
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, NULL, 0), SHOAL_OK);
    /* The hand-off mark (100 ms) is no later than the warning: by the time
     * it is logged, a compensating thread would have started. */
    WAIT_UNTIL(shoal_test_log_count(STALLED) == 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(STALLED), 1);
    shoal_runtime_stats_t rs = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(rs.extra_threads_started, 0);
    CU_ASSERT_EQUAL(rs.extra_threads_live, 0);
    CU_ASSERT_EQUAL(atomic_load(&counted), N); /* nothing else runs */
    CU_ASSERT_FALSE(shoal_test_log_has("compensating thread"));
    atomic_store(&release, 1);
    WAIT_UNTIL(atomic_load(&counted) == 2 * N);
    CU_ASSERT_EQUAL(atomic_load(&counted), 2 * N);
    WAIT_UNTIL(shoal_test_log_count(RETURNED) == 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(RETURNED), 1);
    shoal_runtime_destroy(rt);
}

/* ---- a pool's worker: named as its log lines are, shown in inspect ---------------- */

/* A pool named `name` of one worker running beh (asserted). */
static shoal_pid_t pool_of_one(shoal_runtime_t *rt, const char *name, const shoal_behaviour_t *beh)
{
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.name = name;
    spec.worker = beh;
    spec.size = 1;
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &spec, &pool), SHOAL_OK);
    return pool;
}

static void pool_worker_stall_in_inspect(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pool_of_one(rt, "slow", &spinner);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_log_count(STALLED) == 1);
    shoal_test_assert_logged(" slow/spin: " STALLED);
    shoal_test_assert_logged("s (pool slow, behaviour spin, thread 0)");
    shoal_stall_t st[2];
    CU_ASSERT_EQUAL_FATAL(stalls(rt, st, 2), 1);
    CU_ASSERT_STRING_EQUAL(st[0].name, "slow/spin");
    CU_ASSERT_STRING_EQUAL(st[0].group, "slow");
    char want[96];
    snprintf(want, sizeof want,
             "\"stalled\":[{\"pid\":\"%u.%u\",\"ms\":", shoal__pid_slot(st[0].pid),
             shoal__pid_gen(st[0].pid));
    /* The pool's actor answers on the compensating thread. */
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, pool, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(a.data ? strstr(a.data, want) : NULL);
    CU_ASSERT_PTR_NOT_NULL(a.data ? strstr(a.data, ",\"thread\":0}]") : NULL);
    shoal_answer_release(&a);
    atomic_store(&release, 1);
    WAIT_UNTIL(shoal_test_log_count(RETURNED) == 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(RETURNED), 1);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_inspect(rt, pool, 5000, &a), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL(a.data ? strstr(a.data, "\"stalled\":[]") : NULL);
    shoal_answer_release(&a);
    shoal_runtime_destroy(rt);
}

/* ---- a turn of long handlers publishes as it goes ------------------------------- */

static int nap_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    struct timespec ts = {0, 300 * 1000000L}; /* past the monitor's hand-off mark */
    nanosleep(&ts, NULL);
    return SHOAL_OK;
}
static const shoal_behaviour_t napper = {.name = "nap", .handle_message = nap_handle};

/* Four sends to a pool of one worker whose handler takes 300 ms: one turn
 * used to run them all. A handler the monitor captured ends its turn (as
 * shoal_yield does), whose end publishes what it handled, so the pool's
 * counts show the first handled while the other three wait -- where they
 * used to show none until the turn ended with all four (a shutdown past
 * its deadline inside such a turn counted the messages it had handled as
 * lost). */
static void long_handlers_publish_as_they_go(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pool_of_one(rt, "naps", &napper);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, 1, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pool).messages_handled >= 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT(st.messages_handled >= 1 && st.messages_handled < 4);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pool).messages_handled == 4);
    st = shoal_test_pool_stats(rt, pool);
    CU_ASSERT_EQUAL(st.messages_handled, 4);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* ---- a stall that ends in a panic is still ended once ------------------------------ */

static void panic_ends_the_stall(void)
{
    reset();
    shoal_runtime_t *rt = make_rt(1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t s;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &spinner, NULL, NULL, &s), SHOAL_OK);
    char x = 'x';
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, s, 1, &x, 1), SHOAL_OK);
    WAIT_UNTIL(shoal_test_log_count(STALLED) == 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(STALLED), 1);
    atomic_store(&release, 1);
    WAIT_UNTIL(shoal_test_log_count(RETURNED) == 1);
    CU_ASSERT_EQUAL(shoal_test_log_count(RETURNED), 1);
    CU_ASSERT_EQUAL(atomic_load(&spin_panics), 1);
    shoal_test_assert_logged("panic: after the stall");
    CU_ASSERT_EQUAL(shoal__stalls(rt, NULL, 0, true), 0);
    shoal_runtime_destroy(rt);
}

/* ---- options ------------------------------------------------------------------------ */

static void bad_options_are_einval(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_t *rt = NULL;
    shoal_runtime_opts_init(&o);
    CU_ASSERT_EQUAL(o.stall_warn_ms, 0);
    CU_ASSERT_EQUAL(o.max_extra_threads, 0);
    o.log_level = SHOAL_LOG_ERROR;
    o.stall_warn_ms = SHOAL_STALL_WARN_MAX_MS + 1;
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &o), SHOAL_EINVAL);
    o.stall_warn_ms = 0;
    o.max_extra_threads = -2;
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &o), SHOAL_EINVAL);
    o.max_extra_threads = 1025;
    CU_ASSERT_EQUAL(shoal_runtime_create(&rt, &o), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a stall is logged, listed and compensated", stall_is_logged_listed_and_compensated},
        {"a lone actor on a stuck worker's ring is taken", lone_actor_on_a_stuck_ring_is_taken},
        {"max_extra_threads none starts no thread", none_means_none},
        {"a pool worker's stall shows in inspect", pool_worker_stall_in_inspect},
        {"a stall that ends in a panic ends once", panic_ends_the_stall},
        {"a turn of long handlers publishes as it goes", long_handlers_publish_as_they_go},
        {"bad options are SHOAL_EINVAL", bad_options_are_einval},
        {NULL, NULL},
    };
    return shoal_test_run("monitor", cases);
}
