/* test_tasks_release.c - ending a task pool (core/tasks/, shoal/tasks.h):
 * release closing at once (every submit after it: SHOAL_ESHUTDOWN) and
 * waiting for the queued and running tasks; release_timeout, then the pool
 * finishing; and what a task may not do on its dispatcher thread (the
 * blocking functions, release and destroy: SHOAL_EINVAL); and a pool whose
 * PID is stopped instead of released telling groups of the tasks it drops,
 * and counting no worker from its end on (cap, running, free: 0).
 *
 * Tasks never call CUnit: they record into atomics (tasks_basic_kit.h); the
 * test thread asserts after synchronising on them. Where tasks must stay
 * queued, running ones block on a gate the test opens.
 */
#include <pthread.h>

#include "tasks_basic_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TB_WAIT_S)

/* ---- release ---------------------------------------------------------------------- */

typedef struct {
    shoal_tasks_t *t;
    atomic_int rc, returned;
} releaser_t;

static void *releaser(void *arg)
{
    releaser_t *r = arg;
    atomic_store(&r->rc, shoal_tasks_release(r->t));
    atomic_store(&r->returned, 1);
    return NULL;
}

/* release closes at once (every submit after it: SHOAL_ESHUTDOWN) and
 * returns only when the running and the queued tasks have all run; then
 * the counters are final and a second release is SHOAL_OK at once. */
static void release_waits_for_running_and_queued_tasks(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 2, 16, NULL);
    tb_block(t, 0, 2);
    for (int i = 2; i < 7; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, 0, 0), SHOAL_OK);
    pthread_t th;
    releaser_t r = {.t = t};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, releaser, &r), 0);
    /* closed is set before the drain is asked for */
    WAIT_UNTIL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tb_noop, NULL), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tb_noop, NULL, TB_LONG_MS), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_noop, NULL, TB_LONG_MS, NULL), SHOAL_ESHUTDOWN);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_noop, NULL, TB_LONG_MS), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, NULL), SHOAL_OK); /* nothing in it */
    shoal_task_group_free(g);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 3), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&r.returned), 0); /* two tasks are held at the gate */
    atomic_store(&tb_gate, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&r.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 7);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 7);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 7);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    tb_finish(rt, t);
}

/* release_timeout: SHOAL_ETIMEDOUT no earlier than its deadline while a
 * task runs; the pool goes on and finishes it; the next call succeeds. A
 * submitter that was waiting for room when the release began is refused
 * with SHOAL_ESHUTDOWN at once -- while the blocked task still runs -- and
 * its task never runs. */
static void release_timeout_then_the_pool_finishes(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 1, NULL);
    tb_block(t, 0, 1);
    CU_ASSERT_EQUAL(tb_submit(t, 1, 0, 0), SHOAL_OK);
    pthread_t th;
    tb_submitter_t s;
    tb_wait_submitter(&th, &s, t);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 150), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.15);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tb_noop, NULL), SHOAL_ESHUTDOWN);
    pthread_join(th, NULL); /* told by the drain, not by a task's end: the gate is shut */
    CU_ASSERT_EQUAL(atomic_load(&s.rc), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 0);
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(atomic_load(&tb_done) == 2);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 2);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, TB_LONG_MS), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[2]), 0);
    tb_finish(rt, t);
}

/* On a dispatcher thread the blocking functions refuse (SHOAL_EINVAL):
 * submit_wait, group_wait, release and destroy (which frees nothing then:
 * the pool still takes tasks). */
static void blocking_calls_refused_inside_a_task(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 2, 16, NULL);
    CU_ASSERT_EQUAL(tb_submit(t, 0, A_BLOCKING_CALLS, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_done) == 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[1]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[2]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[3]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[4]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tb_noop, NULL, TB_LONG_MS), SHOAL_OK); /* not released */
    tb_finish(rt, t);
}

/* The pool's PID stopped (shoal_runtime_stop_actor) rather than released:
 * the running task finishes, the queued ones are dropped unrun, and their
 * group hears SHOAL_ESHUTDOWN for each -- its wait returns with that as
 * its first error once the running one is done, not at its deadline;
 * later submits are refused. */
static void a_stopped_pool_tells_groups_of_dropped_tasks(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 16, NULL);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    for (int i = 0; i < 6; i++) {
        tb_jobs[i] = (tb_job_t){.idx = i, .ret = 0, .act = i == 0 ? A_BLOCK : 0};
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, tb_job_fn, &tb_jobs[i], TB_LONG_MS), SHOAL_OK);
        if (i == 0)
            WAIT_UNTIL(atomic_load(&tb_entered) == 1); /* the one worker holds it */
    }
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal_tasks_pid(t)), SHOAL_OK);
    shoal_pool_stats_t st;
    WAIT_UNTIL(shoal_pool_stats(rt, shoal_tasks_pid(t), &st, TB_LONG_MS) != SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, NULL), SHOAL_ETIMEDOUT); /* the first still runs */
    atomic_store(&tb_gate, 1);
    int first = SHOAL_OK;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 5000, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[0]), 1);
    for (int i = 1; i < 6; i++)
        CU_ASSERT_EQUAL(atomic_load(&tb_ran[i]), 0);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tb_noop, NULL), SHOAL_ESHUTDOWN);
    shoal_task_group_free(g);
    tb_finish(rt, t);
}

/* The pool's PID stopped while a task runs: from the pool's end on it has
 * no worker, as after a release -- cap, running and free read 0 at once
 * (they read 3, 3 and 0 for ever, counted from workers that had ended) --
 * and the running task still finishes; a release then is SHOAL_OK and the
 * counters stay final. */
static void a_stopped_pool_counts_no_workers(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 3, 8, NULL);
    tb_block(t, 0, 1);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 3);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal_tasks_pid(t)), SHOAL_OK);
    shoal_pool_stats_t st;
    WAIT_UNTIL(shoal_pool_stats(rt, shoal_tasks_pid(t), &st, TB_LONG_MS) != SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 0); /* held at the gate */
    atomic_store(&tb_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    tb_finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"release waits for running and queued tasks", release_waits_for_running_and_queued_tasks},
        {"release_timeout, then the pool finishes", release_timeout_then_the_pool_finishes},
        {"blocking calls refused inside a task", blocking_calls_refused_inside_a_task},
        {"a stopped pool tells groups of dropped tasks",
         a_stopped_pool_tells_groups_of_dropped_tasks},
        {"a stopped pool counts no workers", a_stopped_pool_counts_no_workers},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_release", cases);
}
