/* test_tasks_release.c - ending a task pool (core/tasks/, shoal/tasks.h):
 * release closing at once (every submit after it: SHOAL_ESHUTDOWN) and
 * waiting for the queued and running tasks; release_timeout, then the pool
 * finishing; and what a task may not do on its dispatcher thread (the
 * blocking functions, release and destroy: SHOAL_EINVAL), into a pool of
 * its own runtime or another's; and a pool whose
 * PID is stopped instead of released telling groups of the tasks it drops,
 * counting them (dropped) and no worker from its end on (cap, running,
 * free: 0); a release under way when the PID is stopped; submit_wait on a
 * pool that stays full (SHOAL_EBUSY: never run); and submitters racing a
 * stop: every task run or dropped, none lost.
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

/* The same from a task of another runtime, into a full pool: that task is
 * on a dispatcher thread all the same. BUG: only the pool's own runtime's
 * threads counted as dispatchers -- the submit waited out its 20 s deadline
 * on the other runtime's thread, submit_wait waited too and answered
 * SHOAL_EBUSY, and release and destroy would have waited for the pool. */
static void blocking_calls_refused_inside_a_task_of_another_runtime(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_runtime_t *other = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 2, 16, NULL);
    shoal_tasks_t *full = tb_make(other, 1, 1, NULL); /* tb_inner_pool */
    tb_block(full, 0, 1);
    CU_ASSERT_EQUAL(tb_submit(full, 1, 0, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(tb_submit(t, 2, A_SUBMIT | A_BLOCKING_CALLS, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_ran[2]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[0]), SHOAL_EBUSY); /* at once: as try_submit */
    CU_ASSERT(atomic_load(&tb_inner_secs) < 1.0);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[1]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[2]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[3]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[4]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    shoal_runtime_destroy(rt);
    atomic_store(&tb_gate, 1);
    if (atomic_load(&tb_inner_rc[4]) != SHOAL_EINVAL) { /* the task destroyed it */
        shoal_runtime_destroy(other);
        return;
    }
    /* not released */
    CU_ASSERT_EQUAL(shoal_tasks_submit(full, tb_noop, NULL, TB_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(shoal_tasks_completed(full) == 3);
    CU_ASSERT_EQUAL(shoal_tasks_completed(full), 3);
    tb_finish(other, full);
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
    CU_ASSERT_EQUAL(shoal_tasks_dropped(t), 5);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 1); /* 6 = 0 completed + 5 dropped + 1 */
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
    atomic_store(&tb_gate, 1);
    int first = SHOAL_OK;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 5000, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[0]), 1);
    for (int i = 1; i < 6; i++)
        CU_ASSERT_EQUAL(atomic_load(&tb_ran[i]), 0);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tb_noop, NULL), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 6);
    WAIT_UNTIL(shoal_tasks_completed(t) == 1); /* counted after its group heard (tasks.h) */
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_dropped(t), 5);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
    shoal_task_group_free(g);
    tb_finish(rt, t);
}

/* A release waiting for a running task when the pool's PID is stopped: the
 * pool has ended, which is what the release waited for -- it returns
 * SHOAL_OK once the task's worker has ended (it returned the end's
 * SHOAL_ESHUTDOWN at once, and destroy then kept the handle), and destroy
 * frees the handle. */
static void a_release_under_way_when_the_pid_is_stopped(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 4, NULL);
    tb_block(t, 0, 1);
    pthread_t th;
    releaser_t r = {.t = t};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, releaser, &r), 0);
    WAIT_UNTIL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal_tasks_pid(t)), SHOAL_OK);
    shoal_pool_stats_t st;
    WAIT_UNTIL(shoal_pool_stats(rt, shoal_tasks_pid(t), &st, TB_LONG_MS) != SHOAL_OK);
    shoal_test_nap();
    CU_ASSERT_EQUAL(atomic_load(&r.returned), 0); /* the task's worker has not ended */
    atomic_store(&tb_gate, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&r.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_dropped(t), 0);
    tb_finish(rt, t); /* destroy: SHOAL_OK, the handle freed (ASan) */
}

/* submit_wait on a pool that stays full until the deadline: SHOAL_EBUSY --
 * fn never runs, arg is the caller's again -- where a task that was queued
 * and has not finished is SHOAL_ETIMEDOUT (test_tasks_groups.c). */
static void submit_wait_on_a_full_pool_is_busy(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_t *t = tb_make(rt, 1, 1, NULL);
    tb_block(t, 0, 1);
    CU_ASSERT_EQUAL(tb_submit(t, 1, 0, 0), SHOAL_OK); /* the queue's one place */
    int r = 777;
    tb_jobs[2] = (tb_job_t){.idx = 2};
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tb_job_fn, &tb_jobs[2], 50, &r), SHOAL_EBUSY);
    CU_ASSERT(shoal_test_now() - t0 >= 0.05);
    CU_ASSERT_EQUAL(r, 777);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 2);
    atomic_store(&tb_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 2);
    CU_ASSERT_EQUAL(atomic_load(&tb_ran[2]), 0);
    tb_finish(rt, t);
}

/* Submitters racing the pool's end: three threads submit_wait until
 * refused while the PID is stopped, 100 pools one after another. Each call
 * is SHOAL_OK (ran) or SHOAL_ESHUTDOWN (dropped, or refused), never a
 * timeout: a task put as the pool ended is swept by the pool or by its
 * submitter (pull.h: the end), never left in the buffer with its waiter
 * waiting. Then submitted = completed + dropped, none queued. */
#define RACE_THREADS 3
#define RACE_POOLS 100

typedef struct {
    shoal_tasks_t *t;
    pthread_t th;
    int ok, shut, other;
} racer_t;

static void *racer_main(void *arg)
{
    racer_t *r = arg;
    for (;;) {
        int rc = shoal_tasks_submit_wait(r->t, tb_noop, NULL, TB_LONG_MS, NULL);
        if (rc == SHOAL_OK) {
            r->ok++;
            continue;
        }
        if (rc == SHOAL_ESHUTDOWN)
            r->shut++;
        else
            r->other++;
        if (shoal_tasks_try_submit(r->t, tb_noop, NULL) == SHOAL_ESHUTDOWN)
            return NULL; /* the pool is closed: it refuses from now on */
    }
}

static void submitters_racing_a_stop_lose_nothing(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    int other = 0, ok = 0, unequal = 0;
    for (int k = 0; k < RACE_POOLS; k++) {
        shoal_tasks_t *t = tb_make(rt, 2, 8, NULL);
        racer_t r[RACE_THREADS];
        for (int i = 0; i < RACE_THREADS; i++) {
            r[i] = (racer_t){.t = t};
            CU_ASSERT_EQUAL_FATAL(pthread_create(&r[i].th, NULL, racer_main, &r[i]), 0);
        }
        WAIT_UNTIL(shoal_tasks_completed(t) >= (uint64_t)(k % 7) * 10);
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal_tasks_pid(t)), SHOAL_OK);
        for (int i = 0; i < RACE_THREADS; i++) {
            pthread_join(r[i].th, NULL);
            other += r[i].other;
            ok += r[i].ok;
        }
        CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
        unequal += shoal_tasks_submitted(t) != shoal_tasks_completed(t) + shoal_tasks_dropped(t) ||
                   shoal_tasks_queued(t) != 0;
        CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    }
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(unequal, 0);
    CU_ASSERT(ok > 0);
    shoal_runtime_destroy(rt);
}

/* The pool's PID stopped while a task runs: from the pool's end on it has
 * no worker, as after a release -- cap and free read 0 at once (they read
 * 3 and 0 for ever, counted from workers that had ended) -- and the
 * running task still finishes, counted running until it has (it read 0,
 * and submitted was not completed + dropped + running); a release then is
 * SHOAL_OK and the counters stay final. */
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
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t) + shoal_tasks_dropped(t), 0);
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
        {"blocking calls refused inside a task of another runtime",
         blocking_calls_refused_inside_a_task_of_another_runtime},
        {"a stopped pool tells groups of dropped tasks",
         a_stopped_pool_tells_groups_of_dropped_tasks},
        {"a stopped pool counts no workers", a_stopped_pool_counts_no_workers},
        {"a release under way when the PID is stopped",
         a_release_under_way_when_the_pid_is_stopped},
        {"submit_wait on a full pool is busy", submit_wait_on_a_full_pool_is_busy},
        {"submitters racing a stop lose nothing", submitters_racing_a_stop_lose_nothing},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_release", cases);
}
