/* test_tasks_edges.c - a task pool at the edges of its options and of its
 * workers' lives (core/tasks/, shoal/tasks.h): no workers at all, a queue
 * of none, tune to 0 and past max_size, options at their bounds (sizes
 * past the runtime's, max_waiting UINT32_MAX, idle_timeout at its limit);
 * tasks that end their own worker (shoal_exit) or stop their own pool; a
 * live raise of the buffer under a waiting submitter; zero deadlines; a
 * destroy while another thread waits on a group. Every task accepted is
 * run or counted dropped: submitted = completed + dropped once it ends.
 *
 * Tasks never call CUnit: they record into atomics (tasks_kit.h); the test
 * thread asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "tasks_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TK_WAIT_S)

static void assert_balance(shoal_tasks_t *t)
{
    uint64_t sub = shoal_tasks_submitted(t), done = shoal_tasks_completed(t),
             drop = shoal_tasks_dropped(t);
    CU_ASSERT_EQUAL(sub, done + drop);
    if (sub != done + drop)
        fprintf(stderr, "\n  submitted %llu completed %llu dropped %llu\n", (unsigned long long)sub,
                (unsigned long long)done, (unsigned long long)drop);
}

/* size 0, min_size 0: tasks wait in the queue; release still runs them. */
static void no_workers_release_runs_the_queue(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(0, 4);
    o.min_size = 0;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(i, 0, 0)), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(4, 0, 0)), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 4);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 5000), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 4, 1), 4);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 4);
    assert_balance(t);
    tk_finish(rt, t);
}

/* queue 0 and no worker: a submitter waits; a tune that starts a worker
 * lets it in. */
static void no_room_at_all_then_a_tune(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(0, 0);
    o.min_size = 0;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(0, 0, 0)), SHOAL_EBUSY);
    tk_caller_t c;
    tk_start(&c, t, C_SUBMIT, tk_job(1, 0, 0));
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 1), 1);
    WAIT_UNTIL(atomic_load(&c.returned));
    CU_ASSERT_EQUAL(atomic_load(&c.rc), SHOAL_OK);
    pthread_join(c.th, NULL);
    WAIT_UNTIL(atomic_load(&tk_done) == 1);
    CU_ASSERT_EQUAL(tk_ran_times(1, 2, 1), 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    assert_balance(t);
    tk_finish(rt, t);
}

/* tune past max_size clamps; tune to 0 with tasks queued holds them;
 * a tune up runs them. */
static void tune_to_the_extremes(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(2, 16);
    o.min_size = 0;
    o.max_size = 8;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, UINT32_MAX), 8);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 8);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 0), 0);
    WAIT_UNTIL(tk_stats(rt, t).pool_size == 0);
    CU_ASSERT_EQUAL(tk_stats(rt, t).pool_size, 0);
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), 0), SHOAL_OK);
    usleep(50000);
    CU_ASSERT_EQUAL(atomic_load(&tk_done), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 10);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 3), 3);
    WAIT_UNTIL(atomic_load(&tk_done) == 10);
    CU_ASSERT_EQUAL(tk_ran_times(0, 10, 1), 10);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    assert_balance(t);
    tk_finish(rt, t);
}

/* tune to 0 while workers run blocked tasks and more are queued; release
 * then runs the queued ones. */
static void shrink_to_zero_under_work_then_release(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(3, 16);
    o.min_size = 0;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, A_BLOCK, 0), 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 3);
    for (int i = 3; i < 12; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 0), 0);
    atomic_store(&tk_gate, 1);
    WAIT_UNTIL(tk_stats(rt, t).pool_size == 0);
    CU_ASSERT_EQUAL(tk_stats(rt, t).pool_size, 0);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 5000), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 12, 1), 12);
    assert_balance(t);
    tk_finish(rt, t);
}

/* Options at their bounds: max_waiting UINT32_MAX; sizes past the
 * runtime's actors; idle timeout at its bound. */
static void options_at_their_bounds(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(1, 1);
    o.max_waiting = UINT32_MAX;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(0, 0, 7), TK_LONG_MS, NULL),
                    SHOAL_OK);
    tk_finish(rt, t);

    rt = tk_runtime();
    o = tk_opts(UINT32_MAX, 1);
    t = NULL;
    int rc = shoal_tasks_create(rt, &o, &t);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(t);
    o = tk_opts(1, 1);
    o.max_size = UINT32_MAX;
    o.idle_timeout_ms = 10;
    rc = shoal_tasks_create(rt, &o, &t);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL); /* past the runtime's pool bound */
    CU_ASSERT_PTR_NULL(t);
    o = tk_opts(1, 1);
    o.idle_timeout_ms = UINT64_MAX;
    t = NULL;
    rc = shoal_tasks_create(rt, &o, &t);
    CU_ASSERT_EQUAL(rc, SHOAL_EINVAL);
    o.idle_timeout_ms = UINT64_MAX / 1000000u;
    rc = shoal_tasks_create(rt, &o, &t);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc == SHOAL_OK) {
        int r = 0;
        CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(2, 0, 7), TK_LONG_MS, &r),
                        SHOAL_OK);
        CU_ASSERT_EQUAL(r, 7);
        CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    }
    shoal_runtime_destroy(rt);
}

/* ---- tasks that end their worker or their pool ------------------------------------ */

static atomic_int exit_ran;
static int exit_task(shoal_ctx_t *ctx, void *arg)
{
    atomic_fetch_add(&exit_ran, 1);
    shoal_exit(ctx, (int)(intptr_t)arg);
    return 3;
}

/* A task that ends its worker by shoal_exit (normal, or with an error):
 * it counts as run, its group hears its return, the worker is replaced
 * and the pool goes on. */
static void tasks_that_exit_their_worker(void)
{
    tk_reset();
    atomic_store(&exit_ran, 0);
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 2, 64);
    int r = 0;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, exit_task, (void *)(intptr_t)0, TK_LONG_MS, &r),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(r, 3);
    CU_ASSERT_EQUAL(
        shoal_tasks_submit_wait(t, exit_task, (void *)(intptr_t)SHOAL_EFAILED, TK_LONG_MS, &r),
        SHOAL_OK);
    CU_ASSERT_EQUAL(r, 3);
    for (int i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, exit_task,
                                           (void *)(intptr_t)(i & 1 ? SHOAL_EFAILED : 0),
                                           TK_LONG_MS),
                        SHOAL_OK);
    for (int i = 0; i < 50; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_done) == 50 && atomic_load(&exit_ran) == 202);
    CU_ASSERT_EQUAL(atomic_load(&exit_ran), 202);
    CU_ASSERT_EQUAL(tk_ran_times(0, 50, 1), 50);
    WAIT_UNTIL(tk_stats(rt, t).pool_size == 2);
    CU_ASSERT_EQUAL(tk_stats(rt, t).pool_size, 2);
    CU_ASSERT_EQUAL(tk_stats(rt, t).state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 252);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 0);
    assert_balance(t);
    CU_ASSERT_EQUAL(atomic_load(&tk_hooked), 0);
    tk_finish(rt, t);
}

static shoal_tasks_t *self_pool;
static atomic_int stop_go, stop_saw, stop_rc;

/* Waits for stop_go, stops its own pool, then waits until the pool
 * refuses (it has ended) before it returns, so its worker takes nothing
 * more. */
static int stop_own_pool(shoal_ctx_t *ctx, void *arg)
{
    (void)arg;
    shoal_test_wait_flag(&stop_go, TK_WAIT_S);
    atomic_store(&stop_rc, shoal_stop(ctx, shoal_tasks_pid(self_pool)));
    double end = shoal_test_now() + TK_WAIT_S;
    int rc;
    while ((rc = shoal_tasks_try_submit(self_pool, tk_job_fn, &tk_jobs[40])) != SHOAL_ESHUTDOWN &&
           shoal_test_now() < end)
        ;
    atomic_store(&stop_saw, rc);
    /* Held here until the pool's end has dropped the 20 tasks queued: no
     * member is free to take one before (the other runs job 0, which
     * blocks), so every one is dropped. Returning at once let this member
     * take what the buffer held before the sweep -- under TSan, all 20. */
    while (shoal_tasks_dropped(self_pool) < 20 && shoal_test_now() < end)
        shoal_test_nap();
    return 0;
}

/* A task that stops its own pool's PID with tasks queued behind it: they
 * are counted dropped, their group hears SHOAL_ESHUTDOWN, later submits
 * are refused, and the counters balance. */
static void a_task_stops_its_own_pool(void)
{
    tk_reset();
    atomic_store(&stop_go, 0);
    atomic_store(&stop_saw, 0);
    atomic_store(&stop_rc, -1);
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 2, 64);
    self_pool = t;
    shoal_task_group_t *g;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(0, A_BLOCK, 0), 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, stop_own_pool, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_tasks_running(t) == 2);
    for (int i = 1; i < 21; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, tk_job_fn, tk_job(i, 0, 0), 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 20);
    atomic_store(&stop_go, 1);
    int first = 0;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TK_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_ESHUTDOWN);
    /* None ran: both members were busy until the sweep dropped them all. */
    int ran = tk_ran_times(1, 21, 1);
    CU_ASSERT_EQUAL(ran, 0);
    CU_ASSERT_EQUAL(tk_ran_times(1, 21, 0), 20);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(31, 0, 0), 0), SHOAL_ESHUTDOWN);
    atomic_store(&tk_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&stop_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&stop_saw), SHOAL_ESHUTDOWN);
    /* job 40's copies: what the stopping task got in before the close */
    uint64_t j40 = shoal_tasks_submitted(t) - 22;
    CU_ASSERT_EQUAL(shoal_tasks_dropped(t) + shoal_tasks_completed(t), 22 + j40);
    CU_ASSERT_EQUAL(shoal_tasks_dropped(t),
                    (uint64_t)(20 - ran) + j40 - (uint64_t)atomic_load(&tk_ran[40]));
    assert_balance(t);
    shoal_task_group_free(g);
    tk_finish(rt, t);
}

/* ---- live changes and zero deadlines ---------------------------------------------- */

/* A pool of one worker and a queue of one, full: job 0 blocks the worker
 * (until tk_gate), job 1 waits in the queue. */
static void fill(shoal_tasks_t *t)
{
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(0, A_BLOCK, 0), 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(1, 0, 0), 0), SHOAL_OK);
}

/* A full pool (one worker blocked, a queue of one) with a submitter
 * waiting: a live raise of the buffer lets it in at once. */
static void a_live_buffer_raise_lets_a_waiter_in(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 1, 1);
    fill(t);
    tk_caller_t c;
    tk_start(&c, t, C_SUBMIT, tk_job(2, 0, 0));
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    uint32_t v = 8;
    shoal_answer_t ans;
    int crc = shoal_runtime_call_priority(rt, shoal_tasks_pid(t), SHOAL_POOL_SET_BUFFER, &v,
                                          sizeof v, TK_LONG_MS, &ans);
    CU_ASSERT_EQUAL(crc, SHOAL_OK);
    shoal_answer_release(&ans);
    WAIT_UNTIL(atomic_load(&c.returned));
    CU_ASSERT_EQUAL(atomic_load(&c.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&tk_done), 0); /* the gate is still shut */
    pthread_join(c.th, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 2);
    atomic_store(&tk_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 3, 1), 3);
    assert_balance(t);
    tk_finish(rt, t);
}

/* Zero deadlines: a submit into a full pool, a submit_wait into an idle
 * one, a release_timeout of an idle pool. None leaves a waiter behind;
 * a task that was let in runs exactly once. */
static void zero_deadlines(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 1, 1);
    fill(t);
    int rc = shoal_tasks_submit(t, tk_job_fn, tk_job(2, 0, 0), 0);
    CU_ASSERT(rc == SHOAL_ETIMEDOUT || rc == SHOAL_EBUSY);
    int r = 99;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(3, 0, 5), 0, &r), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(r, 99);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    atomic_store(&tk_gate, 1);
    WAIT_UNTIL(atomic_load(&tk_done) == 2);
    rc = shoal_tasks_submit_wait(t, tk_job_fn, tk_job(4, 0, 5), 0, &r);
    CU_ASSERT(rc == SHOAL_OK || rc == SHOAL_ETIMEDOUT);
    CU_ASSERT(rc != SHOAL_OK || r == 5);
    WAIT_UNTIL(atomic_load(&tk_done) == 3);
    rc = shoal_tasks_release_timeout(t, 0);
    CU_ASSERT(rc == SHOAL_OK || rc == SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(5, 0, 0), 0), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 6, 1), 3);
    CU_ASSERT_EQUAL(tk_ran[4], 1);
    assert_balance(t);
    tk_finish(rt, t);
}

/* A submit refused after its wait is one refusal, as a send_wait's is:
 * counted once in messages_unhandled (its first, quick try is the one
 * counted; its wait's own first try counted it again), and a submit
 * refused at once (max_waiting) once too, beside waiting_refused. */
static void a_refused_submit_is_counted_once(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.size = o.max_size = 1;
    o.queue = 1;
    o.max_waiting = 1;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    fill(t);
    uint64_t before = tk_stats(rt, t).messages_unhandled;
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(2, 0, 0), 30), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(tk_stats(rt, t).messages_unhandled, before + 1);
    /* The same wait through the pool's PID: one, as before. */
    CU_ASSERT_EQUAL(shoal_runtime_send_wait(rt, shoal_tasks_pid(t), SHOAL_TASK_MSG, NULL, 0, 30),
                    SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(tk_stats(rt, t).messages_unhandled, before + 2);
    /* One submitter waits; the next is refused at once (max_waiting 1). */
    tk_caller_t c;
    tk_start(&c, t, C_SUBMIT, tk_job(3, 0, 0));
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    uint64_t mid = tk_stats(rt, t).messages_unhandled;
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(4, 0, 0), 5000), SHOAL_EOVERLOAD);
    shoal_pool_stats_t st = tk_stats(rt, t);
    CU_ASSERT_EQUAL(st.messages_unhandled, mid + 1);
    CU_ASSERT_EQUAL(st.waiting_refused, 1);
    atomic_store(&tk_gate, 1);
    WAIT_UNTIL(atomic_load(&c.returned));
    CU_ASSERT_EQUAL(atomic_load(&c.rc), SHOAL_OK);
    pthread_join(c.th, NULL);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 5, 1), 3); /* 0, 1 and 3 */
    CU_ASSERT_EQUAL(tk_ran[2] + tk_ran[4], 0);
    assert_balance(t);
    tk_finish(rt, t);
}

/* A group waited on by another thread while the pool is destroyed: the
 * destroy waits for the group's tasks, the waiter wakes with their first
 * error, and the group is freed after. */
static shoal_task_group_t *wait_group;
static atomic_int waited_rc, waited_first, waited;
static void *group_waiter(void *arg)
{
    (void)arg;
    int first = -1;
    atomic_store(&waited_rc, shoal_task_group_wait(wait_group, UINT64_MAX, &first));
    atomic_store(&waited_first, first);
    atomic_store(&waited, 1);
    return NULL;
}

static void destroy_with_a_group_waited_on(void)
{
    tk_reset();
    atomic_store(&waited, 0);
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 2, 16);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &wait_group), SHOAL_OK);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(wait_group, tk_job_fn,
                                                tk_job(i, A_BLOCK | (i == 5 ? A_PANIC : 0), i),
                                                TK_LONG_MS),
                        SHOAL_OK);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, group_waiter, NULL), 0);
    tk_caller_t rel;
    tk_start(&rel, t, C_RELEASE, NULL);
    usleep(20000);
    CU_ASSERT_EQUAL(atomic_load(&waited), 0);
    CU_ASSERT_EQUAL(atomic_load(&rel.returned), 0);
    atomic_store(&tk_gate, 1);
    pthread_join(rel.th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&rel.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&waited_rc), SHOAL_OK);
    int first = atomic_load(&waited_first);
    CU_ASSERT(first == 1 || first == 2 || first == 3 || first == 4 || first == SHOAL_EPANIC ||
              first == 6 || first == 7);
    CU_ASSERT_EQUAL(tk_ran_times(0, 8, 1), 8);
    int again = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(wait_group, 0, &again), SHOAL_OK);
    CU_ASSERT_EQUAL(again, first);
    shoal_task_group_free(wait_group);
    shoal_runtime_destroy(rt);
}

/* A NULL handle: every counter reads 0 (it dereferenced NULL). */
static void counters_of_a_null_handle(void)
{
    CU_ASSERT_EQUAL(shoal_tasks_running(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_cap(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_free(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_completed(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(NULL), 0);
    CU_ASSERT_EQUAL(shoal_tasks_dropped(NULL), 0);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"no workers: release runs the queue", no_workers_release_runs_the_queue},
        {"no room at all, then a tune", no_room_at_all_then_a_tune},
        {"tune to the extremes", tune_to_the_extremes},
        {"shrink to zero under work, then release", shrink_to_zero_under_work_then_release},
        {"options at their bounds", options_at_their_bounds},
        {"tasks that exit their worker", tasks_that_exit_their_worker},
        {"a task stops its own pool", a_task_stops_its_own_pool},
        {"a live buffer raise lets a waiter in", a_live_buffer_raise_lets_a_waiter_in},
        {"zero deadlines", zero_deadlines},
        {"destroy with a group waited on", destroy_with_a_group_waited_on},
        {"counters of a NULL handle", counters_of_a_null_handle},
        {"a refused submit is counted once", a_refused_submit_is_counted_once},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_edges", cases);
}
