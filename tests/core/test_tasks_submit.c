/* test_tasks_submit.c - getting tasks into a task pool (core/tasks/,
 * shoal/tasks.h): create's defaults, the pool underneath and the options it
 * refuses; submit and try_submit with their refusals (full: SHOAL_EBUSY;
 * deadline: SHOAL_ETIMEDOUT no earlier than it; max_waiting: exactly the
 * excess SHOAL_EOVERLOAD); a submitter waiting for room; nonblocking pools
 * and submits from a task, which never wait.
 *
 * Tasks never call CUnit: they record into atomics (tasks_basic_kit.h); the
 * test thread asserts after synchronising on them. Where tasks must stay
 * queued, running ones block on a gate the test opens.
 */
#include <pthread.h>

#include "tasks_basic_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TB_WAIT_S)

/* A pool of one worker, blocked on the gate (tb_jobs[0]), and a queue of
 * one, filled (tb_jobs[1]): full. */
static shoal_tasks_t *make_full(shoal_runtime_t *rt, shoal_tasks_opts_t *o)
{
    shoal_tasks_t *t = tb_make(rt, 1, 1, o);
    tb_block(t, 0, 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tb_job_fn, &tb_jobs[1]), SHOAL_OK);
    return t;
}

/* ---- creating ------------------------------------------------------------------ */

/* The defaults, the pool underneath (a pull pool, prefetch 1, buffer =
 * queue), and options the pool refuses. */
static void create_defaults_and_bad_options(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_create(rt, NULL, &t), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 4);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 4);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_PULL);
    CU_ASSERT_EQUAL(st.prefetch, 1);
    CU_ASSERT_EQUAL(st.buffer, 1024);
    CU_ASSERT_EQUAL(st.min_size, 1);
    CU_ASSERT_EQUAL(st.max_size, 1024);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);

    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.size = 2;
    o.min_size = 3; /* above size */
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &t), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(t);
    shoal_tasks_opts_init(&o);
    o.queue = SHOAL_POOL_MAX_BUFFER + 1;
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &t), SHOAL_EINVAL);
    shoal_tasks_opts_init(&o);
    o.name = "a name far too long for a pool: sixty-four bytes or more, it is refused";
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, &o, &t), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_create(NULL, NULL, &t), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_create(rt, NULL, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_create_sized(rt, &o, 8, &t), SHOAL_EINVAL); /* no such ABI */
    shoal_runtime_destroy(rt);
}

/* ---- submitting ---------------------------------------------------------------- */

/* 3000 tasks from the test thread: each runs exactly once; the counters
 * add up. */
static void submit_runs_every_task_once(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 3, 64, NULL);
    for (int i = 0; i < 3000; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, 0, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_tasks_completed(t) == 3000);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 3000);
    int once = 0;
    for (int i = 0; i < 3000; i++)
        once += atomic_load(&tb_ran[i]) == 1;
    CU_ASSERT_EQUAL(once, 3000);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 3000);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 3000);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, NULL, NULL, 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, NULL, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit(NULL, tb_noop, NULL, 0), SHOAL_EINVAL);
    tb_finish(rt, t);
}

/* Two workers blocked, a queue of 3: exactly 3 of 10 try_submits are
 * taken, 7 refused with SHOAL_EBUSY; running 2, free 0, queued 3. */
static void try_submit_refuses_when_full(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 2, 3, NULL);
    tb_block(t, 0, 2);
    int ok = 0, busy = 0;
    for (int i = 2; i < 12; i++) {
        int rc = shoal_tasks_try_submit(t, tb_job_fn, &tb_jobs[i]);
        ok += rc == SHOAL_OK;
        busy += rc == SHOAL_EBUSY;
    }
    CU_ASSERT_EQUAL(ok, 3);
    CU_ASSERT_EQUAL(busy, 7);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 2);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 5);
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 5);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 5);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(atomic_load(&tb_ran[i]), 1);
    tb_finish(rt, t);
}

/* A full pool: submit returns SHOAL_ETIMEDOUT no earlier than its deadline
 * (and 0 ms refuses at once); the refused tasks never run. */
static void submit_times_out_at_its_deadline(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = make_full(rt, NULL);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tb_job_fn, &tb_jobs[2], 200), SHOAL_ETIMEDOUT);
    double secs = shoal_test_now() - t0;
    CU_ASSERT(secs >= 0.2);
    CU_ASSERT(secs < 10.0);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tb_job_fn, &tb_jobs[3], 0), SHOAL_ETIMEDOUT);
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 2);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[2]), 0);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[3]), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 2);
    tb_finish(rt, t);
}

/* A submitter into a full pool waits (counted in waiting) and gets in once
 * a worker frees room: its task runs. */
static void submit_waits_for_room(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = make_full(rt, NULL);
    pthread_t th;
    tb_submitter_t s;
    tb_wait_submitter(&th, &s, t);
    CU_ASSERT_EQUAL(atomic_load(&s.returned), 0);
    double opened = shoal_test_now();
    atomic_store(&tb_gate, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&s.rc), SHOAL_OK);
    CU_ASSERT(atomic_load(&s.at) >= opened);
    WAIT_UNTIL(shoal_tasks_completed(t) == 3);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[2]), 1);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    tb_finish(rt, t);
}

/* A nonblocking pool (ants' Nonblocking) refuses at once, whatever the
 * timeout; so does a submit from a task (a dispatcher thread). */
static void nonblocking_and_dispatcher_submits_never_wait(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.nonblocking = 1;
    shoal_tasks_t *t = tb_make(rt, 1, 1, &o);
    tb_jobs[0].act = A_BLOCK | A_SUBMIT; /* submits into its own full pool */
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tb_job_fn, &tb_jobs[0], TB_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tb_job_fn, &tb_jobs[1]), SHOAL_OK);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tb_job_fn, &tb_jobs[2], TB_LONG_MS), SHOAL_EBUSY);
    int r = 0;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[3], TB_LONG_MS, &r),
                    SHOAL_EBUSY);
    CU_ASSERT(shoal_test_now() - t0 < 5.0);
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 2);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[0]), SHOAL_EBUSY); /* still full: task 1 queued */
    CU_ASSERT(atomic_load(&tb_inner_secs) < 5.0);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[2]) + atomic_load(&tb_ran[3]), 0);
    tb_finish(rt, t);
}

/* max_waiting 2 (ants' MaxBlockingTasks): with the pool full and two
 * submitters waiting, each of three more is refused at once with
 * SHOAL_EOVERLOAD (counted in waiting_refused); the two get in later. */
static void max_waiting_refuses_exactly_the_excess(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.max_waiting = 2;
    shoal_tasks_t *t = make_full(rt, &o);
    pthread_t th[5];
    tb_submitter_t s[5];
    for (int i = 0; i < 2; i++)
        tb_start_submitter(&th[i], &s[i], t, &tb_jobs[2 + i]);
    WAIT_UNTIL(shoal_tasks_waiting(t) == 2);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 2);
    for (int i = 2; i < 5; i++)
        tb_start_submitter(&th[i], &s[i], t, &tb_jobs[2 + i]);
    for (int i = 2; i < 5; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(atomic_load(&s[i].rc), SHOAL_EOVERLOAD);
    }
    CU_ASSERT_EQUAL(atomic_load(&s[0].returned) + atomic_load(&s[1].returned), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.waiting_refused, 3);
    CU_ASSERT_EQUAL(st.max_waiting, 2);
    atomic_store(&tb_gate, 1);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(atomic_load(&s[i].rc), SHOAL_OK);
    }
    WAIT_UNTIL(shoal_tasks_completed(t) == 4);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 4);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(atomic_load(&tb_ran[i]), i < 4 ? 1 : 0);
    tb_finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"create: defaults, the pool underneath, bad options", create_defaults_and_bad_options},
        {"submit runs every task once", submit_runs_every_task_once},
        {"try_submit refuses when full", try_submit_refuses_when_full},
        {"submit times out at its deadline", submit_times_out_at_its_deadline},
        {"submit waits for room", submit_waits_for_room},
        {"nonblocking and dispatcher submits never wait",
         nonblocking_and_dispatcher_submits_never_wait},
        {"max_waiting refuses exactly the excess", max_waiting_refuses_exactly_the_excess},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_submit", cases);
}
