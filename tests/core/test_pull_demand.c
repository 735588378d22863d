/* test_pull_demand.c - how a pull pool's members (core/pool/pull.c) take
 * items: no member ever holding more than prefetch; no short job waiting
 * behind a slow one while a member is idle; calls answered by the member
 * that takes them; idle members woken without a lost wake-up.
 *
 * Handlers never call CUnit: they record into atomics (pull_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs items
 * to stay queued, members block on a gate the test opens.
 */
#include <pthread.h>
#include <string.h>

#include "pull_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PU_WAIT_S)

/* ---- demand --------------------------------------------------------------------- */

/* 4 members, prefetch 3, 3000 items from two threads while they run: no
 * member ever holds more than 3 (checked in every handler), each item is
 * handled once. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t p;
    uint32_t from, n;
    int refused;
} feeder_t;

static void *feed(void *arg)
{
    feeder_t *f = arg;
    for (uint32_t i = f->from; i < f->from + f->n; i++) {
        int rc;
        while ((rc = pu_job(f->rt, f->p, i, A_OK, 0)) == SHOAL_EBUSY) {
            f->refused++;
            shoal_test_nap();
        }
        if (rc != SHOAL_OK)
            break;
    }
    return NULL;
}

static void demand_never_exceeds_prefetch(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 4, 3, 16);
    shoal_pid_t p = pu_spawn(rt, &s);
    feeder_t f[2] = {{rt, p, 0, 1500, 0}, {rt, p, 1500, 1500, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, feed, &f[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    WAIT_UNTIL(atomic_load(&pu_done) == 3000);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 3000);
    int once = 0;
    for (uint32_t i = 0; i < 3000; i++)
        once += atomic_load(&pu_seen[i]) == 1;
    CU_ASSERT_EQUAL(once, 3000);
    CU_ASSERT_EQUAL(atomic_load(&pu_over_held), 0);
    CU_ASSERT(atomic_load(&pu_max_held) >= 1 && atomic_load(&pu_max_held) <= 3);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 3000);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 3000);
    CU_ASSERT_EQUAL(st.messages_handled, 3000);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)(f[0].refused + f[1].refused));
    CU_ASSERT_EQUAL(st.delivered, 3000);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

/* ---- uneven jobs ----------------------------------------------------------------- */

/* One 300 ms job, then 90 jobs of 1 ms on 4 members with prefetch 1: the
 * member with the slow job starts no other while it runs, and the short
 * ones are all done long before it ends (3 members: ~30 ms of work). A
 * forward pool would queue a quarter of them behind the slow job. */
static void no_item_waits_behind_a_slow_one(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 4, 1, 256);
    shoal_pid_t p = pu_spawn(rt, &s);
    CU_ASSERT_EQUAL(pu_job(rt, p, 0, A_SLEEP, 300), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_seen[0]) == 1);
    for (uint32_t i = 1; i <= 90; i++)
        CU_ASSERT_EQUAL(pu_job(rt, p, i, A_SLEEP, 1), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_done) == 91);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&pu_done), 91);
    shoal_pid_t slow = atomic_load(&pu_owner[0]);
    double slow_start = atomic_load(&pu_started_at[0]), slow_end = atomic_load(&pu_ended_at[0]);
    int on_slow = 0, after_slow = 0;
    for (uint32_t i = 1; i <= 90; i++) {
        double st = atomic_load(&pu_started_at[i]);
        on_slow += atomic_load(&pu_owner[i]) == slow && st > slow_start && st < slow_end;
        after_slow += atomic_load(&pu_ended_at[i]) > slow_end;
    }
    CU_ASSERT_EQUAL(on_slow, 0);
    CU_ASSERT_EQUAL(after_slow, 0);
    shoal_runtime_destroy(rt);
}

/* ---- calls and drain ----------------------------------------------------------- */

/* A call is answered by the member that took it, straight to the caller:
 * the member saw the caller's PID and ref. */
static void calls_are_answered_by_the_member(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 3, 1, 8);
    shoal_pid_t p = pu_spawn(rt, &s);
    for (int i = 0; i < 50; i++) {
        shoal_answer_t a;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, p, T_WHO, NULL, 0, PU_TMO, &a), SHOAL_OK);
        CU_ASSERT_EQUAL(a.status, SHOAL_OK);
        pu_who_t w;
        CU_ASSERT_EQUAL_FATAL(a.size, sizeof w);
        memcpy(&w, a.data, sizeof w);
        CU_ASSERT_NOT_EQUAL(w.self, p);
        CU_ASSERT_NOT_EQUAL(w.from, SHOAL_PID_NONE);
        shoal_answer_release(&a);
    }
    shoal_runtime_destroy(rt);
}

/* Drain: nothing new is taken (SHOAL_ENOPROC), everything in the buffer is
 * still handled, then the pool ends. */

/* ---- wake-up ------------------------------------------------------------------------ */

/* 3000 calls one at a time with idle members between them (each call finds
 * every member asleep or going to sleep): every one is answered. A lost
 * wake-up would leave a call to time out. Then bursts from 4 threads. */
static void no_lost_wake_up(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(PU_THREADS);
    shoal_pool_spec_t s;
    pu_pull_spec(&s, 3, 1, 64);
    shoal_pid_t p = pu_spawn(rt, &s);
    int answered = 0;
    for (int i = 0; i < 3000; i++) {
        shoal_answer_t a;
        int rc = shoal_runtime_call(rt, p, T_WHO, NULL, 0, PU_TMO, &a);
        if (rc == SHOAL_OK) {
            answered += a.status == SHOAL_OK;
            shoal_answer_release(&a);
        }
    }
    CU_ASSERT_EQUAL(answered, 3000);
    feeder_t f[4] = {
        {rt, p, 0, 800, 0}, {rt, p, 800, 800, 0}, {rt, p, 1600, 800, 0}, {rt, p, 2400, 800, 0}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, feed, &f[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    WAIT_UNTIL(atomic_load(&pu_done) == 3200);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 3200);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"demand never exceeds prefetch", demand_never_exceeds_prefetch},
        {"no item waits behind a slow one", no_item_waits_behind_a_slow_one},
        {"calls are answered by the member", calls_are_answered_by_the_member},
        {"no lost wake-up", no_lost_wake_up},
        {NULL, NULL},
    };
    return shoal_test_run("pull_demand", cases);
}
