/* test_tasks_results.c - what a task pool (core/tasks/, shoal/tasks.h) gives
 * back of its tasks: submit_wait's result (a return, a panic as
 * SHOAL_EPANIC, SHOAL_ETIMEDOUT no earlier than the deadline, SHOAL_ESHUTDOWN
 * for a task a stopped pool dropped unrun -- never SHOAL_OK); groups (the
 * first error, every task still run, a group freed while its tasks run);
 * the panic hook once per panicking task, with its worker replaced.
 *
 * Tasks never call CUnit: they record into atomics (tasks_basic_kit.h); the
 * test thread asserts after synchronising on them. Where tasks must stay
 * queued, running ones block on a gate the test opens.
 */
#include <stdio.h>

#include "tasks_basic_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TB_WAIT_S)

/* ---- submit_wait --------------------------------------------------------------- */

/* The task's return comes back (0 and not), a panic as SHOAL_EPANIC; a
 * deadline that passes while the task runs (it still finishes) or while
 * waiting for room (it never runs) gives SHOAL_ETIMEDOUT, no earlier. */
static void submit_wait_returns_the_result(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 0, NULL);
    int r = -1;
    tb_jobs[0].ret = 42;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[0], TB_LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, 42);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[0]), 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[1], TB_LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, 0);
    tb_jobs[2].act = A_PANIC;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[2], TB_LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, SHOAL_EPANIC);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[3], TB_LONG_MS, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[3]), 1); /* the replacement ran it */

    tb_jobs[4].act = A_BLOCK;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[4], 150, &r), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.15);
    CU_ASSERT_EQUAL(atomic_load(&tb_entered), 1); /* it runs, blocked */
    t0 = shoal_test_now(); /* queue 0: no room by the deadline -- never runs (EBUSY) */
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[5], 150, &r), SHOAL_EBUSY);
    CU_ASSERT(shoal_test_now() - t0 >= 0.15);
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(atomic_load(&tb_ran[4]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[4]), 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_noop, NULL, TB_LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[5]), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, NULL, NULL, 0, &r), SHOAL_EINVAL);
    tb_finish(rt, t);
}

typedef struct {
    shoal_tasks_t *t;
    tb_job_t *job;
    int result;
    atomic_int rc;
} sw_caller_t;

static void *sw_caller(void *arg)
{
    sw_caller_t *c = arg;
    atomic_store(&c->rc, shoal_tasks_submit_wait(c->t, tb_job_fn, c->job, TB_LONG_MS, &c->result));
    return NULL;
}

/* submit_wait tells a task that ran from one that never did: a task that
 * returns SHOAL_ESHUTDOWN gives SHOAL_OK with that as its result; a task
 * still queued when the pool's PID is stopped is dropped unrun, and its
 * submit_wait returns SHOAL_ESHUTDOWN itself, at the stop (the running
 * task is still held), with *result untouched. (It returned SHOAL_OK with
 * *result = SHOAL_ESHUTDOWN: what the first task gives.) */
static void submit_wait_of_a_task_never_run(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 8, NULL);
    int r = -1;
    tb_jobs[0].ret = SHOAL_ESHUTDOWN;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[0], TB_LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[0]), 1);
    tb_block(t, 1, 1);
    sw_caller_t c = {.t = t, .job = &tb_jobs[2], .result = 55, .rc = 1};
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, sw_caller, &c), 0);
    WAIT_UNTIL(shoal_tasks_queued(t) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal_tasks_pid(t)), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&c.rc), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(c.result, 55);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[2]), 0);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 1); /* the held task has not finished */
    tb_finish(rt, t);
}

/* ---- groups --------------------------------------------------------------------- */

/* One worker runs a group in order: the first error (5) is reported, not a
 * later one (8) nor the panic after it, and every task ran. A second wait
 * gives the same; a wait that times out says so, then succeeds. */
static void group_reports_the_first_error_and_runs_all(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 256, NULL);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    int rets[8] = {0, 0, 5, 0, 8, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        tb_jobs[i].ret = rets[i];
        tb_jobs[i].act = i == 6 ? A_PANIC : 0;
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_job_fn, &tb_jobs[i], TB_LONG_MS), SHOAL_OK);
    }
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TB_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 5);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(atomic_load(&tb_ran[i]), 1);
    WAIT_UNTIL(atomic_load(&tb_hooked) == 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_hooked_of[6]), 1);

    tb_jobs[8].act = A_BLOCK;
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_job_fn, &tb_jobs[8], TB_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_entered) == 1);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 100, &first), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.1);
    atomic_store(&tb_gate, 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TB_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 5);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, NULL, NULL, 0), SHOAL_EINVAL);
    shoal_task_group_free(g);
    tb_finish(rt, t);
}

/* 600 tasks on three workers, one panics first of all failures and one
 * returns 9: the first error is the panic's, every other task ran; a
 * group freed while its tasks still run is freed by its last one. */
static void group_with_a_panic_and_a_group_freed_early(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 3, 1024, NULL);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    tb_jobs[0].act = A_PANIC;
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_job_fn, &tb_jobs[0], TB_LONG_MS), SHOAL_OK);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TB_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    for (int i = 1; i < 600; i++) {
        tb_jobs[i].ret = i == 300 ? 9 : 0;
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_job_fn, &tb_jobs[i], TB_LONG_MS), SHOAL_OK);
    }
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TB_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 600);
    shoal_task_group_free(g);

    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    tb_block(t, 600, 3);
    for (int i = 603; i < 613; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_job_fn, &tb_jobs[i], TB_LONG_MS), SHOAL_OK);
    shoal_task_group_free(g); /* ten tasks still queued: they free it */
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(atomic_load(&tb_done) == 613);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 613);
    tb_finish(rt, t); /* ASan: no leak, no use after free */
}

/* ---- panics ----------------------------------------------------------------------- */

/* Each of 5 panicking tasks reaches the hook exactly once, with its arg and
 * the panic's text; its worker is replaced (restarts, never degraded) and
 * every other task runs, later ones too. 200 panics in a row do not
 * degrade the pool. */
static void panic_hook_once_and_worker_replaced(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 2, 1024, NULL);
    for (int i = 0; i < 25; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, i % 5 == 0 ? A_PANIC : 0, 0), SHOAL_OK);
    /* a task is counted when it panics; its worker's restart when the pool
     * hears of its end, later */
    WAIT_UNTIL(atomic_load(&tb_hooked) == 5 && shoal_tasks_completed(t) == 25 &&
               shoal_test_pool_stats(rt, shoal_tasks_pid(t)).worker_restarts == 5);
    CU_ASSERT_EQUAL(atomic_load(&tb_hooked), 5);
    CU_ASSERT_EQUAL(atomic_load(&tb_hook_user_ok), 1);
    for (int i = 0; i < 25; i += 5) {
        CU_ASSERT_EQUAL(atomic_load(&tb_hooked_of[i]), 1);
        char want[64];
        snprintf(want, sizeof want, "boom %d", i);
        CU_ASSERT_STRING_EQUAL(tb_why_of[i], want);
    }
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 25);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 25);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 5);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.worker_restarts, 5);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    shoal_test_assert_logged("tasks/task: panic: boom 20");
    for (int i = 25; i < 225; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, A_PANIC, 0), SHOAL_OK);
    for (int i = 225; i < 235; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, 0, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_hooked) == 205 && shoal_tasks_completed(t) == 235 &&
               shoal_test_pool_stats(rt, shoal_tasks_pid(t)).worker_restarts == 205);
    CU_ASSERT_EQUAL(atomic_load(&tb_hooked), 205);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 235);
    st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.worker_restarts, 205);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_FALSE(shoal_test_log_has("degraded"));
    tb_finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"submit_wait returns the result", submit_wait_returns_the_result},
        {"submit_wait of a task never run", submit_wait_of_a_task_never_run},
        {"group reports the first error and runs all", group_reports_the_first_error_and_runs_all},
        {"group with a panic; a group freed early", group_with_a_panic_and_a_group_freed_early},
        {"panic hook once, worker replaced", panic_hook_once_and_worker_replaced},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_results", cases);
}
