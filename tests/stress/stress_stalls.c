/* stress_stalls.c - compensating threads start and retire over and over
 * while messages flow (core/sched/monitor.c, worker.c RETIRING).
 *
 * 64 relay actors pass each message on for HOPS hops (sends from handlers:
 * work on the workers' own rings, stealing), fed by two foreign threads.
 * In each of ROUNDS rounds, both dispatcher threads get stuck in a handler
 * (a "stuck" actor per thread that holds its thread until a compensating
 * thread has started, and a little longer), so compensating threads start
 * while the rings and the global ring hold work, and retire with their
 * rings' actors handed back. Debug checks abort on an actor run on two
 * threads at once. At the end every message has been handled exactly once,
 * every stall was logged and ended once, and the thread count is back.
 *
 * Sizes scale with SHOAL_STRESS_SCALE (sanitizer builds default to 0.1).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define WAIT_S 60.0
#define RELAYS 64
#define HOPS 8

static shoal_pid_t relays[RELAYS];
static atomic_ulong handled;
static atomic_int send_errors, stuck_timeouts, stuck_done;
static atomic_int producing;

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A message carries the hops left. */
static int relay_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    uint32_t hops;
    memcpy(&hops, msg->data, sizeof hops);
    atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
    if (hops == 0)
        return 0;
    hops--;
    shoal_pid_t to = relays[(shoal_self(ctx) + hops) % RELAYS];
    if (shoal_send(ctx, to, 1, &hops, sizeof hops) != SHOAL_OK)
        atomic_fetch_add(&send_errors, 1);
    return 0;
}

/* Holds its thread until a compensating thread runs (or 10 s: counted),
 * then 20 ms more, so the work queued meanwhile runs elsewhere. */
static int stuck_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state, (void)msg;
    shoal_runtime_t *rt = shoal_ctx_runtime(ctx);
    double end = shoal_test_now() + 10.0;
    shoal_runtime_stats_t s;
    do {
        nap_ms(1);
        shoal_runtime_stats(rt, &s);
    } while (s.extra_threads_live == 0 && shoal_test_now() < end);
    if (s.extra_threads_live == 0)
        atomic_fetch_add(&stuck_timeouts, 1);
    nap_ms(20);
    atomic_fetch_add(&stuck_done, 1);
    return 0;
}

static const shoal_behaviour_t relay = {.name = "relay", .handle_message = relay_handle};
static const shoal_behaviour_t stuck = {.name = "stuck", .handle_message = stuck_handle};

typedef struct producer_s {
    shoal_runtime_t *rt;
    unsigned id;
    unsigned long sent;
} producer_t;

static void *produce(void *arg)
{
    producer_t *p = arg;
    uint32_t hops = HOPS;
    for (unsigned long i = 0; atomic_load(&producing); i++) {
        if (shoal_runtime_send(p->rt, relays[(i * 2 + p->id) % RELAYS], 1, &hops, sizeof hops) !=
            SHOAL_OK) {
            atomic_fetch_add(&send_errors, 1);
            break;
        }
        p->sent++;
        if (i % 64 == 63)
            nap_ms(1); /* a steady flow, not an unbounded queue */
    }
    return NULL;
}

static void stalls_under_load(void)
{
    unsigned rounds = (unsigned)(20 * shoal_test_stress_scale(0.1));
    rounds = rounds < 2 ? 2 : rounds;
    int base = shoal_test_thread_base();
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_WARN;
    o.stall_warn_ms = 30;
    shoal_runtime_t *rt = shoal_test_runtime_logged_opts(&o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    for (int i = 0; i < RELAYS; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &relay, NULL, NULL, &relays[i]), SHOAL_OK);
    shoal_pid_t st[2];
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &stuck, NULL, NULL, &st[i]), SHOAL_OK);
    atomic_store(&producing, 1);
    pthread_t th[2];
    producer_t prod[2] = {{rt, 0, 0}, {rt, 1, 0}};
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, produce, &prod[i]), 0);
    for (unsigned r = 0; r < rounds; r++) {
        for (int i = 0; i < 2; i++)
            CU_ASSERT_EQUAL(shoal_runtime_send(rt, st[i], 1, NULL, 0), SHOAL_OK);
        /* Both stalls end, and their compensating threads retire, before
         * the next round: each round starts at least one anew. */
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&stuck_done) == 2 * (int)(r + 1) &&
                                  shoal_test_stats(rt).extra_threads_live == 0,
                              WAIT_S);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&stuck_done), 2 * (int)(r + 1));
    }
    atomic_store(&producing, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    unsigned long sent = prod[0].sent + prod[1].sent;
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled) == sent * (HOPS + 1), WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled), sent * (HOPS + 1));
    CU_ASSERT_EQUAL(atomic_load(&send_errors), 0);
    CU_ASSERT_EQUAL(atomic_load(&stuck_timeouts), 0);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.extra_threads_live, 0);
    CU_ASSERT(s.extra_threads_started >= rounds);
    CU_ASSERT_EQUAL(shoal_test_log_count("stall: in its handler"),
                    shoal_test_log_count("stall: returned after"));
    fprintf(stderr,
            "  [%u rounds, %lu messages x %d hops, %llu compensating threads, %llu stalls] ",
            rounds, sent, HOPS + 1, (unsigned long long)s.extra_threads_started,
            (unsigned long long)s.stalls);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(shoal_test_threads(base), base);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"compensating threads come and go under load", stalls_under_load},
        {NULL, NULL},
    };
    return shoal_test_run("stalls", cases);
}
