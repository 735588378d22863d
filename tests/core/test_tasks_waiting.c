/* test_tasks_waiting.c - a task pool's submitters waiting for room
 * (core/tasks/tasks.c, shoal/tasks.h), the way a careless operator or a
 * hostile caller would make them wait, with exact outcomes
 * (test_tasks_submit, _results, _sizing and _release cover each function on
 * its own):
 *   - submitters of every kind already waiting for room when release comes:
 *     each is refused, none of their tasks ever runs;
 *   - the wait for room: a waiter woken at the low-water mark and not
 *     before, max_waiting under many threads, and waiters against others
 *     that retry past SHOAL_EOVERLOAD.
 *
 * Tasks never call CUnit: they record into atomics (tasks_kit.h); the test
 * thread asserts after synchronising on them. Tasks that must stay put wait
 * on a gate (one for all, or one of their own) that the test opens.
 * Deadlines here only bound waits: every one is generous.
 */
#include <stdint.h>

#include "tasks_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TK_WAIT_S)
#define SOON_S 3.0 /* what should happen at once: bounded, with slack */

/* ---- waiting for room ------------------------------------------------------------ */

/* Seven submitters of every kind wait for room in a full pool (submit with
 * a deadline and without one, submit_wait, a group's submit) when release
 * begins: each is refused with SHOAL_ESHUTDOWN while the running task still
 * holds the pool, the refused group member is no member (its wait returns
 * at once), and none of their tasks ever runs. */
static void release_refuses_every_kind_of_waiter(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 1, 2);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, A_BLOCK, 0), TK_LONG_MS),
                        SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    static tk_caller_t c[7];
    int how[7] = {C_SUBMIT, C_SUBMIT, C_SUBMIT, C_FOREVER, C_FOREVER, C_SUBMIT_WAIT, C_GROUP};
    for (int k = 0; k < 7; k++) {
        c[k].g = g;
        tk_start(&c[k], t, how[k], tk_job(3 + k, 0, 0));
    }
    WAIT_UNTIL(shoal_tasks_waiting(t) == 7);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 7);
    tk_caller_t rel;
    tk_start(&rel, t, C_RELEASE, NULL);
    WAIT_UNTIL(tk_returned(c, 7) == 7);
    CU_ASSERT_EQUAL(tk_returned(c, 7), 7); /* the gate is still shut */
    for (int k = 0; k < 7; k++)
        CU_ASSERT_EQUAL(atomic_load(&c[k].rc), SHOAL_ESHUTDOWN);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_EQUAL(atomic_load(&rel.returned), 0);
    atomic_store(&tk_gate, 1);
    for (int k = 0; k < 7; k++)
        pthread_join(c[k].th, NULL);
    pthread_join(rel.th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&rel.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 3, 1), 3);
    CU_ASSERT_EQUAL(tk_ran_times(3, 10, 0), 7);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    shoal_task_group_free(g);
    tk_finish(rt, t);
}

/* One worker, a queue of 7: eight tasks, each on its own gate, fill the
 * pool's 8 places and a submitter waits. Waiters are woken at the pool's
 * low-water mark, a quarter of the places free (tasks.h), not at each one:
 * with one place free the submitter sleeps on, and that place goes to a
 * try_submit; with two free it is woken and gets in. */
static void a_waiter_wakes_at_the_low_water_mark(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 1, 7);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(i, A_OWN, 0)), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(10, 0, 0)), SHOAL_EBUSY);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    tk_caller_t c;
    tk_start(&c, t, C_SUBMIT, tk_job(8, 0, 0));
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 1);
    atomic_store(&tk_gate_of[0], 1);
    WAIT_UNTIL(atomic_load(&tk_entered) == 2); /* task 0 settled, task 1 runs: 7 of 8 held */
    CU_ASSERT_EQUAL(atomic_load(&c.returned), 0);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(9, 0, 0)),
                    SHOAL_OK); /* the one place */
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(10, 0, 0)), SHOAL_EBUSY);
    atomic_store(&tk_gate_of[1], 1);
    WAIT_UNTIL(atomic_load(&tk_entered) == 3); /* one place free again */
    CU_ASSERT_EQUAL(atomic_load(&c.returned), 0);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    atomic_store(&tk_gate_of[2], 1); /* two free: the mark */
    WAIT_UNTIL(atomic_load(&c.returned));
    CU_ASSERT_EQUAL(atomic_load(&c.returned), 1);
    CU_ASSERT_EQUAL(atomic_load(&c.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    for (int i = 3; i < 8; i++)
        atomic_store(&tk_gate_of[i], 1);
    pthread_join(c.th, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 10, 1), 10);
    CU_ASSERT_EQUAL(atomic_load(&tk_ran[10]), 0); /* refused twice: never runs */
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 10);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 10);
    tk_finish(rt, t);
}

#define MW_THREADS 12
#define MW_MAX 3

/* max_waiting 3 and twelve submitters at once into a full pool: exactly
 * three wait, nine are refused with SHOAL_EOVERLOAD (counted), none of
 * theirs runs; once the gate opens the three get in and run once each. */
static void max_waiting_under_twelve_threads(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(1, 1);
    o.max_waiting = MW_MAX;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(0, A_BLOCK, 0), TK_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(1, 0, 0)), SHOAL_OK);
    static tk_caller_t c[MW_THREADS];
    for (int k = 0; k < MW_THREADS; k++)
        tk_start(&c[k], t, k % 2 ? C_SUBMIT : C_FOREVER, tk_job(2 + k, 0, 0));
    WAIT_UNTIL(tk_returned(c, MW_THREADS) == MW_THREADS - MW_MAX &&
               shoal_tasks_waiting(t) == MW_MAX);
    CU_ASSERT_EQUAL(tk_returned(c, MW_THREADS), MW_THREADS - MW_MAX);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), MW_MAX);
    int overload = 0;
    for (int k = 0; k < MW_THREADS; k++)
        overload += atomic_load(&c[k].returned) && atomic_load(&c[k].rc) == SHOAL_EOVERLOAD;
    CU_ASSERT_EQUAL(overload, MW_THREADS - MW_MAX);
    CU_ASSERT_EQUAL(tk_stats(rt, t).waiting_refused, MW_THREADS - MW_MAX);
    bool waited[MW_THREADS];
    for (int k = 0; k < MW_THREADS; k++)
        waited[k] = !atomic_load(&c[k].returned);
    atomic_store(&tk_gate, 1);
    int ok = 0, right = 0;
    for (int k = 0; k < MW_THREADS; k++) {
        pthread_join(c[k].th, NULL);
        ok += atomic_load(&c[k].rc) == SHOAL_OK;
        right += waited[k] == (atomic_load(&c[k].rc) == SHOAL_OK);
    }
    CU_ASSERT_EQUAL(ok, MW_MAX);
    CU_ASSERT_EQUAL(right, MW_THREADS);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    int ran_right = 0;
    for (int k = 0; k < MW_THREADS; k++)
        ran_right += atomic_load(&tk_ran[2 + k]) == (waited[k] ? 1 : 0);
    CU_ASSERT_EQUAL(ran_right, MW_THREADS);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2 + MW_MAX);
    tk_finish(rt, t);
}

#define PUSHERS 4

static atomic_int push_stop, push_ran, push_ok, push_overload, push_odd;

static int push_fn(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&push_ran, 1);
    return 0;
}

/* Submits again at once after each SHOAL_EOVERLOAD, until told to stop. */
static void *pusher_main(void *arg)
{
    shoal_tasks_t *t = arg;
    while (!atomic_load(&push_stop)) {
        int rc = shoal_tasks_submit(t, push_fn, NULL, TK_LONG_MS);
        atomic_fetch_add(rc == SHOAL_OK          ? &push_ok
                         : rc == SHOAL_EOVERLOAD ? &push_overload
                                                 : &push_odd,
                         1);
    }
    return NULL;
}

#define KEEP_ROUNDS 5

/* max_waiting 2: two submitters wait in a full pool; four more threads
 * submit again at once after each SHOAL_EOVERLOAD. One slot frees, then
 * the rest. A woken waiter that finds the pool full again is counted
 * against max_waiting again (tasks.h, as ants): it gets in or is refused
 * with SHOAL_EOVERLOAD, nothing else; the waiters never number more than
 * max_waiting; and over five pools every task is accounted for. */
static void waiters_against_retries_past_max_waiting(void)
{
    shoal_runtime_t *rt = tk_runtime();
    int other = 0, odd = 0, lost = 0;
    uint32_t most = 0;
    for (int round = 0; round < KEEP_ROUNDS; round++) {
        tk_reset();
        atomic_store(&push_stop, 0);
        atomic_store(&push_ran, 0);
        atomic_store(&push_ok, 0);
        atomic_store(&push_overload, 0);
        atomic_store(&push_odd, 0);
        shoal_tasks_opts_t o = tk_opts(1, 1);
        o.max_waiting = 2;
        shoal_tasks_t *t = tk_make_with(rt, &o);
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(0, A_OWN, 0), TK_LONG_MS),
                        SHOAL_OK);
        WAIT_UNTIL(atomic_load(&tk_entered) == 1);
        CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(1, A_OWN, 0)), SHOAL_OK);
        tk_caller_t c[2];
        tk_start(&c[0], t, C_SUBMIT, tk_job(2, 0, 0));
        tk_start(&c[1], t, C_SUBMIT, tk_job(3, 0, 0));
        WAIT_UNTIL(shoal_tasks_waiting(t) == 2);
        CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 2);
        pthread_t p[PUSHERS];
        for (int k = 0; k < PUSHERS; k++)
            CU_ASSERT_EQUAL_FATAL(pthread_create(&p[k], NULL, pusher_main, t), 0);
        WAIT_UNTIL(atomic_load(&push_overload) >= 100);
        for (int k = 0; k < 1000; k++) { /* sampled while the retries hammer */
            uint32_t w = shoal_tasks_waiting(t);
            most = w > most ? w : most;
        }
        atomic_store(&tk_gate_of[0], 1); /* one slot */
        WAIT_UNTIL(atomic_load(&tk_entered) == 2);
        SHOAL_TEST_WAIT_UNTIL(tk_returned(c, 2) != 0 || atomic_load(&push_ok) != 0, SOON_S);
        for (int k = 0; k < 1000; k++) {
            uint32_t w = shoal_tasks_waiting(t);
            most = w > most ? w : most;
        }
        atomic_store(&tk_gate_of[1], 1); /* and the rest */
        atomic_store(&push_stop, 1);
        int c_ok = 0;
        for (int k = 0; k < 2; k++) {
            pthread_join(c[k].th, NULL);
            int rc = atomic_load(&c[k].rc);
            c_ok += rc == SHOAL_OK;
            other += rc != SHOAL_OK && rc != SHOAL_EOVERLOAD;
        }
        for (int k = 0; k < PUSHERS; k++)
            pthread_join(p[k], NULL);
        odd += atomic_load(&push_odd);
        CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
        for (int k = 0; k < 2; k++)
            lost += atomic_load(&tk_ran[2 + k]) != (atomic_load(&c[k].rc) == SHOAL_OK ? 1 : 0);
        lost += atomic_load(&push_ran) != atomic_load(&push_ok);
        lost += shoal_tasks_completed(t) != (uint64_t)(2 + c_ok + atomic_load(&push_ok));
        CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    }
    CU_ASSERT(most <= 2);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(odd, 0);
    CU_ASSERT_EQUAL(lost, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"release refuses every kind of waiter", release_refuses_every_kind_of_waiter},
        {"a waiter wakes at the low-water mark", a_waiter_wakes_at_the_low_water_mark},
        {"max_waiting under twelve threads", max_waiting_under_twelve_threads},
        {"waiters against retries past max_waiting", waiters_against_retries_past_max_waiting},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_waiting", cases);
}
