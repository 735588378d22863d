/* test_resize_capacity.c - parts 1 and 2 of the Resize contract (the
 * elastic-pool seed's, after ants and pond) for forward and pull pools, on
 * the pool's resize (core/pool/workers.c: shoal__pool_resize, fill,
 * retire), under two loaders and a resizer at once:
 *   1. in-flight work never exceeds the capacity in force: handlers running
 *      at once are never more than the largest size a resize in flight or
 *      applied allows (a shrink's old size until its retired workers have
 *      ended), and once a shrink has settled, never more than the new size;
 *   2. a message runs to completion exactly once, or is refused at once
 *      (SHOAL_EBUSY) and never runs -- through resizes and crashes.
 * Parts 3 and 4 are test_resize_calls.c's, 5 test_resize_work.c's.
 *
 * Handlers and the test's own threads never call CUnit: they record into
 * atomics and arrays (support/resize_kit.h); the test thread asserts after
 * synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "resize_kit.h"

/* ---- 1 + 2: capacity, and each message once, through resizes and crashes ---- */

/* One writer at a time: resizer_main, or the test thread while none runs. */
static void set_cap(uint32_t cap)
{
    uint32_t w = atomic_load(&rz_cap_word);
    atomic_store(&rz_cap_word, ((w >> 8) + 1) << 8 | cap);
}

/* A loader sends its ids once each, never again after a refusal. After
 * each refusal it waits for REFUSAL_PACE more jobs to be done before its
 * next send: how many are refused was otherwise the scheduler's -- workers
 * on threads the CPU was taken from refused most of a loader's ids, and
 * "most got in" (n_ok > RZ_NJOBS / 2) failed in an ASan run on a busy CPU.
 * Paced, between two refusals of one loader at least REFUSAL_PACE jobs are
 * done, so the two loaders' refusals are at most 2 / REFUSAL_PACE of the
 * done ones, fewer than RZ_NJOBS / 2 on any schedule (a refusal means the
 * pool is full: its queued jobs get done). The wait also ends when every
 * accepted job has ended: the pool may have emptied before the loader read
 * `rz_done` (a loader the CPU was taken from), and then no more would be done
 * -- both loaders waited out RZ_WAIT_S, 30 s a time, on a busy CPU. An empty
 * pool takes the next send. */
#define REFUSAL_PACE 3

static void *load_main(void *arg)
{
    rz_load_t *l = arg;
    for (uint32_t id = l->from; id < l->to; id++) {
        uint32_t act = id % 997 == 3 ? RZ_A_PANIC : RZ_A_SPIN;
        int rc = rz_job(l->rt, l->pool, id, act);
        if (rc == SHOAL_OK) {
            rz_accepted[id] = 1;
            atomic_fetch_add(&rz_accepted_n, 1);
        } else if (rc != SHOAL_EBUSY)
            rz_accepted[id] = 2; /* never: asserted below */
        if (rc == SHOAL_EBUSY) {
            int until = atomic_load(&rz_done) + REFUSAL_PACE;
            RZ_WAIT_UNTIL(atomic_load(&rz_done) >= until ||
                          atomic_load(&rz_ended) >= atomic_load(&rz_accepted_n));
        }
        if (id % 8 == 0)
            shoal_test_nap(); /* most are accepted, some refused */
    }
    return NULL;
}

/* Whether every worker a shrink retired has ended (each first finishes
 * what it holds: until then its handlers run beside the new size). */
static bool retired_all(shoal_runtime_t *rt, shoal_pid_t p)
{
    shoal_pool_stats_t st;
    return shoal_pool_stats(rt, p, &st, RZ_TMO) == SHOAL_OK && st.retiring == 0;
}

/* Grows and shrinks by 1 to 5, keeping rz_cap_word at the capacity in force:
 * before a call, the larger of the size in force and the size asked (a
 * grow's workers may run before it answers); after it, the size asked --
 * after a shrink, once its retired workers have ended. */
static void *resizer_main(void *arg)
{
    static const uint32_t sizes[] = {1, 4, 2, 6, 1, 3, 5, 2};
    rz_load_t *l = arg;
    uint32_t k = 0, now = rz_cap_of(atomic_load(&rz_cap_word));
    while (!atomic_load(l->stop)) {
        uint32_t want = sizes[k++ % (sizeof sizes / sizeof sizes[0])];
        set_cap(want > now ? want : now);
        if (shoal_pool_set_size(l->rt, l->pool, want, RZ_TMO) != (int)want)
            atomic_fetch_add(&rz_bad_resize, 1); /* asserted below */
        if (want < now) {
            RZ_WAIT_UNTIL(retired_all(l->rt, l->pool));
            if (!retired_all(l->rt, l->pool))
                atomic_fetch_add(&rz_bad_resize, 1);
        }
        set_cap(want);
        now = want;
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void capacity_and_once_case(uint32_t kind)
{
    rz_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = rz_spawn(rt, kind, 3, 32);
    set_cap(3);
    atomic_int stop = 0;
    rz_load_t a = {rt, p, 0, RZ_NJOBS / 2, &stop}, b = {rt, p, RZ_NJOBS / 2, RZ_NJOBS, &stop};
    rz_load_t r = {rt, p, 0, 0, &stop};
    pthread_t ta, tb, tr;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tr, NULL, resizer_main, &r), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, load_main, &a), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&tb, NULL, load_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    atomic_store(&stop, 1);
    pthread_join(tr, NULL);
    CU_ASSERT_EQUAL(atomic_load(&rz_bad_resize), 0); /* each answered its size; shrinks settled */
    uint32_t n_ok = 0, n_panic = 0, bad = 0;
    for (uint32_t id = 0; id < RZ_NJOBS; id++) {
        n_ok += rz_accepted[id] == 1;
        n_panic += rz_accepted[id] == 1 && id % 997 == 3;
        bad += rz_accepted[id] == 2;
    }
    CU_ASSERT_EQUAL(bad, 0);
    RZ_WAIT_UNTIL(shoal_test_pool_stats(rt, p).queue_depth == 0 &&
                  (uint32_t)atomic_load(&rz_done) == n_ok - n_panic);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, n_ok);
    CU_ASSERT_EQUAL(st.messages_handled, n_ok - n_panic);
    CU_ASSERT_EQUAL(st.messages_failed, n_panic);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.messages_unhandled, RZ_NJOBS - n_ok);
    CU_ASSERT(n_ok > RZ_NJOBS / 2); /* most got in: the check above means something */
    if (n_ok <= RZ_NJOBS / 2)
        printf("\n    accepted %u of %u\n", n_ok, RZ_NJOBS);
    /* Exactly once each accepted one that did not panic; never a refused one. */
    uint32_t wrong = 0;
    for (uint32_t id = 0; id < RZ_NJOBS; id++)
        wrong += rz_runs[id] != (rz_accepted[id] == 1 && id % 997 != 3 ? 1 : 0);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(atomic_load(&rz_over_cap), 0); /* never above the capacity in force */
    CU_ASSERT(atomic_load(&rz_max_running) >= 2);  /* handlers did run side by side */
    /* Nearly every handler was checked (two resizes between two loads
     * take a preemption longer than the resizer's pause). */
    int checked = atomic_load(&rz_cap_checked), unchecked = atomic_load(&rz_cap_unchecked);
    CU_ASSERT(checked >= (int)(n_ok / 2) && unchecked <= checked / 10);
    if (checked < (int)(n_ok / 2) || unchecked > checked / 10)
        printf("\n    capacity checked %d, unchecked %d\n", checked, unchecked);

    /* Shrunk to 2 and settled: no more than 2 handlers at once from now on. */
    set_cap(RZ_MAXW);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, RZ_TMO), 2);
    RZ_WAIT_UNTIL(rz_settled_at(rt, p, 2));
    CU_ASSERT(rz_settled_at(rt, p, 2));
    atomic_store(&rz_max_running, 0);
    set_cap(2);
    for (uint32_t id = 0; id < 2000; id++) {
        while (rz_job(rt, p, RZ_NJOBS, RZ_A_SPIN) == SHOAL_EBUSY)
            shoal_test_nap();
    }
    RZ_WAIT_UNTIL(shoal_test_pool_stats(rt, p).queue_depth == 0);
    CU_ASSERT(atomic_load(&rz_max_running) <= 2);
    CU_ASSERT_EQUAL(atomic_load(&rz_over_cap), 0);
    shoal_runtime_destroy(rt);
}

static void forward_capacity_and_once(void) { capacity_and_once_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_capacity_and_once(void) { capacity_and_once_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: capacity, and each message once", forward_capacity_and_once},
        {"pull: capacity, and each message once", pull_capacity_and_once},
        {NULL, NULL}};
    return shoal_test_run("resize: capacity, and each message once", cases);
}
