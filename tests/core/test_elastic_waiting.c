/* test_elastic_waiting.c - elastic pools (core/pool/elastic.c,
 * shoal/pool.h) and the senders that wait on them: max_waiting refuses
 * exactly the waiters past it with SHOAL_EOVERLOAD, send_wait times out
 * when its timeout says (not before, hardly after) and then waits no more,
 * and a thread in send_wait wakes soon after room appears -- the last for a
 * bounded actor and a checkout pool too. For forward and pull pools alike.
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

/* ---- max_waiting ------------------------------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int *returned;
    int rc;
} waiter_t;

static void *waiter_main(void *arg)
{
    waiter_t *w = arg;
    uint32_t act = EK_A_OK;
    w->rc = shoal_runtime_send_wait(w->rt, w->pool, EK_T_JOB, &act, sizeof act, 20000);
    atomic_fetch_add(w->returned, 1);
    return NULL;
}

/* A pool of one held full by a blocked worker: of 5 threads in send_wait,
 * max_waiting = 3 wait and exactly 2 are refused at once; once the worker
 * goes on, the 3 get in and every job runs once. */
static void max_waiting_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(kind, 1, 1, 1, 1);
    s.max_waiting = 3;
    shoal_pid_t p = ek_spawn(rt, &s);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
    EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK); /* the one place left */
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_EBUSY);
    atomic_int returned = 0;
    waiter_t w[5];
    pthread_t t[5];
    for (int i = 0; i < 5; i++) {
        w[i] = (waiter_t){rt, p, &returned, 99};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, waiter_main, &w[i]), 0);
    }
    EK_WAIT_UNTIL(atomic_load(&returned) == 2 && EK_STATS(rt, p).waiting == 3);
    CU_ASSERT_EQUAL(atomic_load(&returned), 2);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 3);
    CU_ASSERT_EQUAL(st.max_waiting, 3);
    CU_ASSERT_EQUAL(st.waiting_refused, 2);
    int overload = 0;
    for (int i = 0; i < 5; i++)
        overload += w[i].rc == SHOAL_EOVERLOAD;
    CU_ASSERT_EQUAL(overload, 2);
    atomic_store(&ek_gate, 1);
    for (int i = 0; i < 5; i++)
        pthread_join(t[i], NULL);
    int ok = 0;
    for (int i = 0; i < 5; i++)
        ok += w[i].rc == SHOAL_OK;
    CU_ASSERT_EQUAL(ok, 3);
    EK_WAIT_UNTIL(atomic_load(&ek_done) == 5 && EK_STATS(rt, p).messages_handled == 5);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 5); /* the blocked one, the one queued, the 3 waiters */
    st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.waiting, 0);
    CU_ASSERT_EQUAL(st.waiting_refused, 2);
    CU_ASSERT_EQUAL(st.messages_handled, 5);
    shoal_runtime_destroy(rt);
}

static void forward_max_waiting(void) { max_waiting_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_max_waiting(void) { max_waiting_case(SHOAL_POOL_KIND_PULL); }

/* send_wait into a pool held full times out exactly: of 11 waits of 20 ms,
 * each returns SHOAL_ETIMEDOUT no sooner than 20 ms and is no longer
 * counted as waiting (a pull pool kept it in its list until the next
 * tell); the median returns within 2 ms after (10 ms in a sanitizer
 * build). */
static void times_out_exactly_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(kind, 1, 1, 1, 1);
    shoal_pid_t p = ek_spawn(rt, &s);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
    EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK); /* the one place left */
    enum { TRIES = 11, TMO_MS = 20 };
    double took[TRIES];
    uint32_t act = EK_A_OK;
    for (int i = 0; i < TRIES; i++) {
        double t0 = shoal_test_now();
        CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, p, EK_T_JOB, &act, sizeof act, TMO_MS),
                        SHOAL_ETIMEDOUT);
        took[i] = shoal_test_now() - t0;
        CU_ASSERT(took[i] >= TMO_MS / 1e3);
        CU_ASSERT_EQUAL(EK_STATS(rt, p).waiting, 0);
    }
    double median = shoal_test_median(took, TRIES);
    CU_ASSERT(median < TMO_MS / 1e3 + (shoal_test_sanitized() ? 0.010 : 0.002));
    printf("\n    a %d ms send_wait returned after %.2f ms (median of %d; %.2f..%.2f) ", TMO_MS,
           median * 1e3, TRIES, took[0] * 1e3, took[TRIES - 1] * 1e3);
    atomic_store(&ek_gate, 1);
    EK_WAIT_UNTIL(atomic_load(&ek_done) == 2 && EK_STATS(rt, p).messages_handled == 2);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).messages_handled, 2); /* none of the 11 got in */
    shoal_runtime_destroy(rt);
}

static void forward_times_out_exactly(void) { times_out_exactly_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_times_out_exactly(void) { times_out_exactly_case(SHOAL_POOL_KIND_PULL); }

/* ---- send_wait wakes soon ---------------------------------------------------- */

static double woke_at;

static void *sender_main(void *arg)
{
    waiter_t *w = arg;
    uint32_t act = EK_A_OK;
    w->rc = shoal_runtime_send_wait(w->rt, w->pool, EK_T_JOB, &act, sizeof act, 20000);
    woke_at = shoal_test_now();
    atomic_fetch_add(w->returned, 1);
    return NULL;
}

/* From the moment the blocked worker goes on (room comes when it has taken
 * the queued job -- or, in a pull pool, settled the blocked one:
 * microseconds later) to the waiting thread's return: median of 21 tries
 * under 1 ms (10 ms in a sanitizer build). The waiter sleeps on a futex
 * meanwhile: it is told, never polls. */
static void send_wait_wakes_soon_case(uint32_t kind)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(kind, 1, 1, 1, 1);
    shoal_pid_t p = ek_spawn(rt, &s);
    enum { TRIES = 21 };
    double took[TRIES];
    for (int i = 0; i < TRIES; i++) {
        ek_reset();
        CU_ASSERT_EQUAL_FATAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
        EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
        CU_ASSERT_EQUAL_FATAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
        atomic_int returned = 0;
        waiter_t w = {rt, p, &returned, 99};
        pthread_t t;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, sender_main, &w), 0);
        EK_WAIT_UNTIL(EK_STATS(rt, p).waiting == 1);
        struct timespec ts = {0, 2000000}; /* asleep by now */
        nanosleep(&ts, NULL);
        atomic_store(&ek_gate, 1);
        pthread_join(t, NULL);
        CU_ASSERT_EQUAL(w.rc, SHOAL_OK);
        took[i] = woke_at - atomic_load(&ek_left_at);
        EK_WAIT_UNTIL(atomic_load(&ek_done) == 3);
    }
    double median = shoal_test_median(took, TRIES);
    CU_ASSERT(median < (shoal_test_sanitized() ? 0.010 : 0.001));
    printf("\n    %s: send_wait woke %.0f us after the worker went on (median of %d) ",
           kind == SHOAL_POOL_KIND_PULL ? "pull" : "forward", median * 1e6, TRIES);
    shoal_runtime_destroy(rt);
}

/* The same for a bounded actor (a mailbox of 1: the blocked job in hand,
 * one queued; room once that one is taken) and a checkout pool (one
 * member, no queue: its transaction in hand; room once it settles). The
 * waiter is asleep once its refusal is counted and a little after (the
 * runtime's msgs_refused, the pool's error_no_members). */
static uint64_t refusals(shoal_runtime_t *rt, shoal_pid_t to, bool checkout)
{
    if (checkout)
        return EK_STATS(rt, to).error_no_members;
    shoal_runtime_stats_t st;
    shoal_runtime_stats(rt, &st);
    return st.msgs_refused;
}

static void send_wait_wakes_soon_other(bool checkout)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t p = SHOAL_PID_NONE;
    if (checkout) {
        shoal_pool_spec_t s = ek_spec_checkout(1);
        p = ek_spawn(rt, &s);
    } else {
        p = ek_spawn_bounded(rt, 1);
    }
    enum { TRIES = 21 };
    double took[TRIES];
    for (int i = 0; i < TRIES; i++) {
        ek_reset();
        CU_ASSERT_EQUAL_FATAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
        EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
        int queued = 0;
        if (!checkout) {
            CU_ASSERT_EQUAL_FATAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
            queued = 1;
        }
        uint64_t before = refusals(rt, p, checkout);
        atomic_int returned = 0;
        waiter_t w = {rt, p, &returned, 99};
        pthread_t t;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, sender_main, &w), 0);
        EK_WAIT_UNTIL(refusals(rt, p, checkout) == before + 1);
        struct timespec ts = {0, 5000000}; /* asleep by now */
        nanosleep(&ts, NULL);
        CU_ASSERT_EQUAL(atomic_load(&returned), 0);
        atomic_store(&ek_gate, 1);
        pthread_join(t, NULL);
        CU_ASSERT_EQUAL(w.rc, SHOAL_OK);
        CU_ASSERT_EQUAL(refusals(rt, p, checkout), before + 1); /* told, never retried */
        took[i] = woke_at - atomic_load(&ek_left_at);
        EK_WAIT_UNTIL(atomic_load(&ek_done) == 2 + queued);
        CU_ASSERT_EQUAL(atomic_load(&ek_done), 2 + queued);
        /* A member gives itself back after its handler has returned (the
         * count above is made inside it): the next try's transaction finds
         * it free, not SHOAL_ENOMEMBERS (seen once in a parallel run). */
        if (checkout)
            EK_WAIT_UNTIL(EK_STATS(rt, p).free == 1);
    }
    double median = shoal_test_median(took, TRIES);
    CU_ASSERT(median < (shoal_test_sanitized() ? 0.010 : 0.001));
    printf("\n    %s: send_wait woke %.0f us after the handler went on (median of %d) ",
           checkout ? "checkout" : "bounded actor", median * 1e6, TRIES);
    shoal_runtime_destroy(rt);
}

static void actor_send_wait_wakes_soon(void) { send_wait_wakes_soon_other(false); }
static void checkout_send_wait_wakes_soon(void) { send_wait_wakes_soon_other(true); }

static void forward_send_wait_wakes_soon(void)
{
    send_wait_wakes_soon_case(SHOAL_POOL_KIND_FORWARD);
}
static void pull_send_wait_wakes_soon(void) { send_wait_wakes_soon_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: max_waiting refuses exactly the excess", forward_max_waiting},
        {"pull: max_waiting refuses exactly the excess", pull_max_waiting},
        {"forward: send_wait times out exactly, and waits no more", forward_times_out_exactly},
        {"pull: send_wait times out exactly, and waits no more", pull_times_out_exactly},
        {"forward: send_wait wakes soon after room appears", forward_send_wait_wakes_soon},
        {"pull: send_wait wakes soon after room appears", pull_send_wait_wakes_soon},
        {"a bounded actor: send_wait wakes soon after room appears", actor_send_wait_wakes_soon},
        {"checkout: send_wait wakes soon after room appears", checkout_send_wait_wakes_soon},
        {NULL, NULL},
    };
    return shoal_test_run("elastic_waiting", cases);
}
