/* test_elastic_grow.c - elastic pools (core/pool/elastic.c,
 * shoal/pool.h) growing: a send that finds every worker full while fewer
 * than max_size run has one started for it (lazy grow), exactly up to
 * max_size; from zero workers; growing and expiring under four senders; a
 * pool that ends with sends on its grow list; a worker that could not start
 * for a send starts later. For forward and pull pools alike where both have
 * the feature.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elastic_kit.h"

/* ---- lazy grow ------------------------------------------------------------------- */

/* A forward pool of 1 (max 3, mailbox 2): each worker holds a blocked job
 * and two queued; a send that finds them all full starts one more, until
 * 3 run; then SHOAL_EBUSY. Exactly 9 accepted, 2 started, 1 refused. */
static void forward_lazy_grow(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 1, 1, 3, 2);
    s.idle_timeout_ms = 60000;
    shoal_pid_t p = ek_spawn(rt, &s);
    for (int w = 1; w <= 3; w++) {
        /* The first job of worker w blocks it (w > 1: it is the send that
         * starts it). */
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
        EK_WAIT_UNTIL(atomic_load(&ek_entered) == w);
        CU_ASSERT_EQUAL(atomic_load(&ek_entered), w);
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
        shoal_pool_stats_t st = EK_STATS(rt, p);
        CU_ASSERT_EQUAL(st.pool_size, (uint32_t)w);
        CU_ASSERT_EQUAL(st.target_size, (uint32_t)w);
        CU_ASSERT_EQUAL(st.lazy_grown, (uint64_t)w - 1);
    }
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_EBUSY); /* 3 of 3 full */
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 9);
    CU_ASSERT_EQUAL(st.messages_unhandled, 1);
    CU_ASSERT_EQUAL(st.lazy_grown, 2);
    atomic_store(&ek_gate, 1);
    EK_WAIT_UNTIL(atomic_load(&ek_done) == 9);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 9);
    EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 9);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).messages_handled, 9);
    shoal_runtime_destroy(rt);
}

/* Down to min 0 by idle expiry, then work comes: a worker starts for it
 * (one: the rest fit in its mailbox or its buffer), and all of it runs.
 * The first job holds the worker it started (A_BLOCK) until the other 19
 * are in: idle for 20 ms between two of the test thread's sends (a thread
 * the CPU was taken from), it would end, and the next send would start a
 * second one -- a forward pool's lazy_grown 2, not 1. Held, it cannot be
 * idle, whatever the pace of the sends. */
static void lazy_from_zero_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(kind, 2, 0, 4, 64);
    s.idle_timeout_ms = 20;
    shoal_pid_t p = ek_spawn(rt, &s);
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 0 && EK_STATS(rt, p).retiring == 0);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).expired, 2);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
    EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ek_entered), 1);
    for (int i = 1; i < 20; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
    atomic_store(&ek_gate, 1);
    EK_WAIT_UNTIL(atomic_load(&ek_done) == 20);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 20);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT(st.lazy_grown >= 1);
    if (kind == SHOAL_POOL_KIND_FORWARD)
        CU_ASSERT_EQUAL(st.lazy_grown, 1); /* 20 fit in one worker's 64 */
    CU_ASSERT_EQUAL(st.messages_forwarded, 20);
    EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 20);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).messages_handled, 20);
    /* ... and idles away again. */
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 0);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).pool_size, 0);
    shoal_runtime_destroy(rt);
}

static void forward_lazy_from_zero(void) { lazy_from_zero_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_lazy_from_zero(void) { lazy_from_zero_case(SHOAL_POOL_KIND_PULL); }

/* Senders on four threads into a pool that grows and idles away under
 * them: every accepted job runs once, every refusal is counted. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int ok, busy, other;
} burst_t;

static void *burst_main(void *arg)
{
    burst_t *b = arg;
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 500; i++) {
            int rc = ek_job(b->rt, b->pool, EK_A_OK);
            b->ok += rc == SHOAL_OK;
            b->busy += rc == SHOAL_EBUSY;
            b->other += rc != SHOAL_OK && rc != SHOAL_EBUSY;
        }
        struct timespec ts = {0, 30000000};
        nanosleep(&ts, NULL); /* some idle time: workers end */
    }
    return NULL;
}

static void lazy_under_load_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pool_spec_t s = ek_spec_of(kind, 1, 0, 6, 4);
    s.idle_timeout_ms = 5;
    shoal_pid_t p = ek_spawn(rt, &s);
    burst_t b[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        b[i] = (burst_t){rt, p, 0, 0, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, burst_main, &b[i]), 0);
    }
    int ok = 0, busy = 0, other = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ok += b[i].ok;
        busy += b[i].busy;
        other += b[i].other;
    }
    CU_ASSERT_EQUAL(other, 0);
    EK_WAIT_UNTIL(atomic_load(&ek_done) == ok);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), ok);
    EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == (uint64_t)ok);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)ok);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)busy);
    CU_ASSERT_EQUAL(st.messages_handled, (uint64_t)ok);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT(st.lazy_grown >= 1);
    /* Every worker that ever started idles away: the first and each grown. */
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 0 && EK_STATS(rt, p).retiring == 0);
    st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 0);
    CU_ASSERT_EQUAL(st.expired, 1 + st.lazy_grown);
    shoal_runtime_destroy(rt);
}

static void forward_lazy_under_load(void) { lazy_under_load_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_lazy_under_load(void) { lazy_under_load_case(SHOAL_POOL_KIND_PULL); }

/* A pull pool of 1 (max 6, prefetch 1) whose member sleeps: a burst of 6
 * jobs that each hold their member, sent before any member has taken one.
 * Each job that finds no member free has one started for it at once -- not
 * one a tick (250 ms, the idle_timeout of a minute) after the first: once
 * the pool's actor has read what the sends asked (the stats call comes
 * after them from the same thread), 6 members live and 5 were grown. Jobs
 * that found the sleeping member already woken (sleepers counts it until
 * it takes) asked too. */
static void pull_lazy_burst(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(8); /* 6 held, and the pool's actor */
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_PULL, 1, 1, 6, 4);
    s.prefetch = 1;
    s.idle_timeout_ms = 60000;
    shoal_pid_t p = ek_spawn(rt, &s);
    EK_WAIT_UNTIL(EK_STATS(rt, p).idle == 1);
    CU_ASSERT_EQUAL_FATAL(EK_STATS(rt, p).idle, 1);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).buffer, 4);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 6);
    CU_ASSERT_EQUAL(st.lazy_grown, 5);
    /* The buffer as configured, though the lazy pool's capacity counts the
     * members it may start (it read 4 + (6 - 6) x 1 here, but 4 + 5 x 1 at
     * a size of 1: 9, and a reload set it back). */
    CU_ASSERT_EQUAL(st.buffer, 4);
    EK_WAIT_UNTIL(atomic_load(&ek_entered) == 6);
    CU_ASSERT_EQUAL(atomic_load(&ek_entered), 6);
    st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 6);
    CU_ASSERT_EQUAL(st.lazy_grown, 5);
    CU_ASSERT_EQUAL(st.buffer_depth, 0);
    atomic_store(&ek_gate, 1);
    EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 6);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).messages_handled, 6);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 6);
    shoal_runtime_destroy(rt);
}

/* A pool ended with sends on its grow list: none is lost unseen -- each
 * is counted dropped (the ledger still balances). */
static void ended_with_grow_list(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 1, 1, 8, 1);
    s.idle_timeout_ms = 60000;
    shoal_pid_t p = ek_spawn(rt, &s);
    int ok = 0;
    for (int i = 0; i < 200; i++)
        ok += ek_job(rt, p, EK_A_OK) == SHOAL_OK;
    shoal_runtime_destroy(rt); /* whatever was accepted is handled or dropped, counted */
    CU_ASSERT(ok >= 1);
}

/* ---- a worker that cannot be started -------------------------------------------- */

static int idle_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}

static const shoal_behaviour_t idler = {.name = "idler", .handle_message = idle_message};

/* A pool idled down to no worker; a send comes while no actor can be
 * spawned (max_actors reached): it is accepted for a worker to be started,
 * the start fails. Once an actor's slot is free again, a worker starts for
 * it and it runs -- it does not wait for the next send (a forward pool
 * held it with nobody to try again). */
static void lazy_start_fails_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.debug_checks = 1;
    o.max_actors = 16;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = shoal_test_runtime_logged_opts(&o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = ek_spec_of(kind, 1, 0, 2, 4);
    s.idle_timeout_ms = 20;
    shoal_pid_t p = ek_spawn(rt, &s);
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 0 && EK_STATS(rt, p).retiring == 0);
    CU_ASSERT_EQUAL_FATAL(EK_STATS(rt, p).pool_size, 0);
    shoal_pid_t fill[16];
    int n = 0;
    while (n < 16 && shoal_runtime_spawn(rt, &idler, NULL, NULL, &fill[n]) == SHOAL_OK)
        n++;
    CU_ASSERT_FATAL(n >= 1 && n < 16);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK); /* taken for a worker to be started */
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 0); /* no worker could start */
    shoal_test_assert_logged("cannot start a worker for a send");
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, fill[--n]), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ek_done) == 1, 3.0);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 1);
    while (n > 0)
        shoal_runtime_stop_actor(rt, fill[--n]);
    shoal_pool_stats_t st;
    double end = shoal_test_now() + EK_WAIT_S; /* a call needs an actor's slot too */
    while ((shoal_pool_stats(rt, p, &st, EK_TMO) != SHOAL_OK || st.messages_handled != 1) &&
           shoal_test_now() < end)
        shoal_test_nap();
    CU_ASSERT_EQUAL(st.messages_forwarded, 1);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    shoal_runtime_destroy(rt);
}

static void forward_lazy_start_fails(void) { lazy_start_fails_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_lazy_start_fails(void) { lazy_start_fails_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: lazy grow starts a worker per full pool, up to max", forward_lazy_grow},
        {"forward: from zero workers, one starts for the work", forward_lazy_from_zero},
        {"pull: from zero workers, one starts for the work", pull_lazy_from_zero},
        {"forward: growing and expiring under four senders", forward_lazy_under_load},
        {"pull: growing and expiring under four senders", pull_lazy_under_load},
        {"pull: a burst that finds every member busy grows one for each", pull_lazy_burst},
        {"a pool that ends with sends on its grow list", ended_with_grow_list},
        {"forward: a worker that could not start for a send starts later",
         forward_lazy_start_fails},
        {"pull: a worker that could not start for a send starts later", pull_lazy_start_fails},
        {NULL, NULL},
    };
    return shoal_test_run("elastic_grow", cases);
}
