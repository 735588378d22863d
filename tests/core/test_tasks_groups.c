/* test_tasks_groups.c - task groups and submit_wait (core/tasks/group.c,
 * shoal/tasks.h), and tasks that submit tasks, used the way a careless
 * operator or a hostile caller would, with exact outcomes
 * (test_tasks_submit, _results, _sizing and _release cover each function on
 * its own):
 *   - submit_wait from four threads with returns that look like the pool's
 *     own codes, panics and timeouts: each caller gets its own result;
 *   - groups: the first error in finish order across a panic and a return,
 *     submitters and waiters at once, a group freed by its own task,
 *     groups waited on and freed after their pool's handle is destroyed;
 *   - tasks that submit tasks, and call another pool's blocking functions.
 *
 * Tasks never call CUnit: they record into atomics (tasks_kit.h); the test
 * thread asserts after synchronising on them. Tasks that must stay put wait
 * on a gate (one for all, or one of their own) that the test opens.
 * Deadlines here only bound waits: every one is generous.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "tasks_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TK_WAIT_S)

/* ---- submit_wait ----------------------------------------------------------------- */

#define SW_THREADS 4
#define SW_PER 250

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int from;
    int wrong; /* a call whose code or result was not its task's */
} waiter_t;

/* What task i does under submit_wait: a code of its own, 0, codes that
 * look like the pool's (SHOAL_ETIMEDOUT, SHOAL_EPANIC, SHOAL_ESHUTDOWN),
 * INT_MIN and INT_MAX, or a panic. */
static void sw_plan(int i, int *act, int *ret)
{
    static const int looks[] = {SHOAL_ETIMEDOUT, SHOAL_EPANIC, SHOAL_ESHUTDOWN, INT_MIN, INT_MAX};
    *act = i % 11 == 3 ? A_PANIC : 0;
    *ret = i % 11 == 3 ? 0 : i % 7 == 0 ? looks[(i / 7) % 5] : i % 2 ? i : 0;
}

static void *waiter_main(void *arg)
{
    waiter_t *w = arg;
    for (int i = w->from; i < w->from + SW_PER; i++) {
        int act, ret, r = 12345;
        sw_plan(i, &act, &ret);
        int rc = shoal_tasks_submit_wait(w->t, tk_job_fn, tk_job(i, act, ret), TK_LONG_MS, &r);
        w->wrong += rc != SHOAL_OK || r != (act & A_PANIC ? SHOAL_EPANIC : ret);
    }
    return NULL;
}

/* Four threads, 250 submit_waits each on three workers: each caller gets
 * SHOAL_OK and its own task's return -- a task returning SHOAL_ETIMEDOUT or
 * SHOAL_EPANIC is told apart from a timeout or a panic only by the call's
 * code, and counts as no panic --, or SHOAL_EPANIC for its own panic. Then
 * five submit_waits that time out on held tasks: each task still runs once
 * later. */
static void submit_wait_results_never_cross(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 3, 16);
    waiter_t w[SW_THREADS];
    for (int k = 0; k < SW_THREADS; k++) {
        w[k] = (waiter_t){.t = t, .from = k * SW_PER};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&w[k].th, NULL, waiter_main, &w[k]), 0);
    }
    int wrong = 0;
    for (int k = 0; k < SW_THREADS; k++) {
        pthread_join(w[k].th, NULL);
        wrong += w[k].wrong;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    int n = SW_THREADS * SW_PER, panics = 0;
    for (int i = 0; i < n; i++) {
        int act, ret;
        sw_plan(i, &act, &ret);
        panics += (act & A_PANIC) != 0;
    }
    CU_ASSERT_EQUAL(tk_ran_times(0, n, 1), n);
    WAIT_UNTIL(atomic_load(&tk_hooked) == panics && shoal_tasks_completed(t) == (uint64_t)n);
    CU_ASSERT_EQUAL(atomic_load(&tk_hooked), panics);
    CU_ASSERT_EQUAL(atomic_load(&tk_hook_bad), 0);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), (uint64_t)panics);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n);

    for (int i = n; i < n + 5; i++) {
        int r = 777;
        CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(i, A_OWN, 9), 30, &r),
                        SHOAL_ETIMEDOUT);
        CU_ASSERT_EQUAL(r, 777); /* no result: left as it was */
    }
    WAIT_UNTIL(atomic_load(&tk_entered) == 3);
    CU_ASSERT_EQUAL(tk_ran_times(n, n + 5, 0), 5);
    for (int i = n; i < n + 5; i++)
        atomic_store(&tk_gate_of[i], 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(n, n + 5, 1), 5);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n + 5);
    tk_finish(rt, t); /* ASan: the five groups went with their tasks */
}

/* ---- groups ---------------------------------------------------------------------- */

/* The first error is the first in the order tasks finished, a panic's
 * included (its worker ends after it): a panic that finished (its worker
 * replaced) before a task returned 7 comes first; in a second group a task
 * that returned 7 before another panicked comes first. Four workers, so the
 * two run on different threads. */
static void group_first_error_in_finish_order(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 4, 64);
    shoal_task_group_t *g = NULL;
    int first = -1;

    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tk_job_fn, tk_job(0, A_OWN, 7), TK_LONG_MS),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tk_job_fn, tk_job(1, A_PANIC, 0), TK_LONG_MS),
                    SHOAL_OK);
    for (int i = 2; i < 20; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, tk_job_fn, tk_job(i, 0, 0), TK_LONG_MS),
                        SHOAL_OK);
    WAIT_UNTIL(tk_stats(rt, t).worker_restarts == 1 && atomic_load(&tk_done) == 19);
    CU_ASSERT_EQUAL(atomic_load(&tk_hooked_of[1]), 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_ETIMEDOUT); /* 0 still held */
    atomic_store(&tk_gate_of[0], 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TK_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    shoal_task_group_free(g);
    /* completed counts a task after its group heard of it */
    WAIT_UNTIL(shoal_tasks_completed(t) == 20);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_completed(t), 20);

    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(
        shoal_task_group_submit(g, tk_job_fn, tk_job(20, A_OWN | A_PANIC, 0), TK_LONG_MS),
        SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, tk_job_fn, tk_job(21, 0, 7), TK_LONG_MS), SHOAL_OK);
    WAIT_UNTIL(shoal_tasks_completed(t) == 21);
    CU_ASSERT_EQUAL(atomic_load(&tk_ran[21]), 1);
    atomic_store(&tk_gate_of[20], 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TK_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 7);
    WAIT_UNTIL(atomic_load(&tk_hooked) == 2);
    CU_ASSERT_EQUAL(atomic_load(&tk_hooked_of[20]), 1);
    shoal_task_group_free(g);
    tk_finish(rt, t);
}

#define GS_THREADS 3
#define GS_PER 400

typedef struct {
    pthread_t th;
    shoal_task_group_t *g;
    int from;
    int refused;
} gsubmitter_t;

static void *gsubmitter_main(void *arg)
{
    gsubmitter_t *s = arg;
    for (int i = s->from; i < s->from + GS_PER; i++)
        s->refused += shoal_task_group_submit(s->g, tk_job_fn, tk_job(i, 0, i == 777 ? 13 : 0),
                                              TK_LONG_MS) != SHOAL_OK;
    return NULL;
}

static shoal_task_group_t *own_group; /* the group free_own_group frees */

static int free_own_group(shoal_ctx_t *ctx, void *arg)
{
    shoal_task_group_free(own_group); /* its memory must outlive this task */
    return tk_job_fn(ctx, arg);
}

/* Three threads submit 400 tasks each to one group while the test thread
 * waits on it with short deadlines (SHOAL_OK or SHOAL_ETIMEDOUT only);
 * then one wait sees all 1200 run, with the one failure (13) as the first
 * error. A second group is freed by one of its own tasks while 50 more of
 * its tasks are queued: every one runs, nothing touches freed memory
 * (ASan). */
static void groups_under_concurrent_submits_and_freed_by_a_task(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 3, 64);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    gsubmitter_t s[GS_THREADS];
    for (int k = 0; k < GS_THREADS; k++) {
        s[k] = (gsubmitter_t){.g = g, .from = k * GS_PER};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&s[k].th, NULL, gsubmitter_main, &s[k]), 0);
    }
    int odd = 0, first = -1;
    for (int k = 0; k < 200; k++) {
        int rc = shoal_task_group_wait(g, 1, &first);
        odd += rc != SHOAL_OK && rc != SHOAL_ETIMEDOUT;
    }
    for (int k = 0; k < GS_THREADS; k++) {
        pthread_join(s[k].th, NULL);
        CU_ASSERT_EQUAL(s[k].refused, 0);
    }
    CU_ASSERT_EQUAL(odd, 0);
    first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, TK_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 13);
    CU_ASSERT_EQUAL(tk_ran_times(0, GS_THREADS * GS_PER, 1), GS_THREADS * GS_PER);
    shoal_task_group_free(g);

    int base = GS_THREADS * GS_PER;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &own_group), SHOAL_OK);
    for (int i = base; i < base + 3; i++) /* every worker held */
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, A_BLOCK, 0), TK_LONG_MS),
                        SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 3);
    CU_ASSERT_EQUAL(
        shoal_task_group_submit(own_group, free_own_group, tk_job(base + 3, 0, 4), TK_LONG_MS),
        SHOAL_OK);
    for (int i = base + 4; i < base + 54; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(own_group, tk_job_fn, tk_job(i, 0, 1), TK_LONG_MS),
                        SHOAL_OK);
    atomic_store(&tk_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(base, base + 54, 1), 54);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)base + 54);
    tk_finish(rt, t);
}

/* Groups still held when their pool's handle is destroyed stay the
 * caller's: every task of theirs has finished by then, so a wait returns
 * SHOAL_OK at once with the first error -- 42; 0 for a group with no task;
 * SHOAL_ESHUTDOWN for one whose queued tasks a stopped pool dropped -- and
 * free frees them. (The wait read the freed handle: ASan's
 * heap-use-after-free, else a crash or garbage.) */
static void groups_waited_on_after_their_pool_is_destroyed(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 2, 64);
    shoal_task_group_t *g = NULL, *empty = NULL, *dropped = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &empty), SHOAL_OK);
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(
            shoal_task_group_submit(g, tk_job_fn, tk_job(i, 0, i == 3 ? 42 : 0), TK_LONG_MS),
            SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK); /* waits: every task has run */
    CU_ASSERT_EQUAL(tk_ran_times(0, 10, 1), 10);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 42);
    CU_ASSERT_EQUAL(shoal_task_group_wait(empty, TK_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 0);
    shoal_task_group_free(g);
    shoal_task_group_free(empty);

    t = tk_make(rt, 1, 8);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &dropped), SHOAL_OK);
    for (int i = 10; i < 14; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(dropped, tk_job_fn,
                                                tk_job(i, i == 10 ? A_BLOCK : 0, 0), TK_LONG_MS),
                        SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, shoal_tasks_pid(t)), SHOAL_OK);
    shoal_pool_stats_t st;
    WAIT_UNTIL(shoal_pool_stats(rt, shoal_tasks_pid(t), &st, TK_LONG_MS) != SHOAL_OK);
    atomic_store(&tk_gate, 1); /* the pool has ended: the queued three are dropped */
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(10, 11, 1), 1);
    CU_ASSERT_EQUAL(tk_ran_times(11, 14, 0), 3);
    CU_ASSERT_EQUAL(shoal_task_group_wait(dropped, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_ESHUTDOWN);
    shoal_task_group_free(dropped);
    shoal_runtime_destroy(rt);
}

/* ---- tasks that submit, and call what they may not ------------------------------- */

#define FAN 3
#define DEPTH 5

static shoal_tasks_t *fan_pool, *other_pool;
static shoal_task_group_t *fan_group;
static atomic_int fan_next, fan_ok, fan_busy, fan_odd, fan_member;
static int depth_of[TK_MAXN]; /* written before the task is submitted */
static atomic_int foreign_rc[5];

/* FAN children per task down to DEPTH: the first a group's, the others
 * plain submits, none with a deadline; full pool: SHOAL_EBUSY at once,
 * never a wait. */
static void spawn_children(shoal_ctx_t *ctx, tk_job_t *j)
{
    (void)ctx;
    if (depth_of[j->idx] >= DEPTH)
        return;
    for (int k = 0; k < FAN; k++) {
        int i = atomic_fetch_add(&fan_next, 1);
        if (i >= TK_MAXN)
            return;
        depth_of[i] = depth_of[j->idx] + 1;
        tk_job_t *c = tk_job(i, A_SPAWN, 0);
        bool member = k == 0;
        int rc = member ? shoal_task_group_submit(fan_group, tk_job_fn, c, UINT64_MAX)
                        : shoal_tasks_submit(fan_pool, tk_job_fn, c, UINT64_MAX);
        if (rc == SHOAL_OK) {
            atomic_fetch_add(&fan_ok, 1);
            atomic_fetch_add(&fan_member, member);
        } else if (rc == SHOAL_EBUSY) {
            atomic_fetch_add(&fan_busy, 1);
        } else {
            atomic_fetch_add(&fan_odd, 1);
        }
    }
}

/* Another pool's blocking functions, from a task: each SHOAL_EINVAL. */
static void call_foreign(void)
{
    int r = 0;
    shoal_task_group_t *g = NULL;
    atomic_store(&foreign_rc[0], shoal_tasks_submit_wait(other_pool, tk_job_fn,
                                                         &tk_jobs[TK_MAXN - 1], TK_LONG_MS, &r));
    atomic_store(&foreign_rc[1], shoal_task_group_create(other_pool, &g));
    atomic_store(&foreign_rc[2], shoal_task_group_wait(g, TK_LONG_MS, NULL));
    shoal_task_group_free(g);
    atomic_store(&foreign_rc[3], shoal_tasks_release(other_pool));
    atomic_store(&foreign_rc[4], shoal_tasks_destroy(other_pool));
}

/* A task fans out into a tree of tasks (3 children each, 5 levels) in a
 * pool of two workers and a queue of 4, every submit with no deadline: on
 * a dispatcher thread each is accepted or refused at once with SHOAL_EBUSY;
 * exactly the accepted ones run, once each, and the group holds exactly
 * its accepted members. A task calling another pool's submit_wait,
 * group_wait, release and destroy is refused (SHOAL_EINVAL); that pool
 * still takes and runs tasks. */
static void tasks_submitting_tasks_never_block(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    fan_pool = tk_make(rt, 2, 4);
    other_pool = tk_make(rt, 1, 4);
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(fan_pool, &fan_group), SHOAL_OK);
    atomic_store(&fan_next, 1);
    memset(depth_of, 0, sizeof depth_of);
    atomic_store(&fan_ok, 0);
    atomic_store(&fan_busy, 0);
    atomic_store(&fan_odd, 0);
    atomic_store(&fan_member, 0);
    for (int k = 0; k < 5; k++)
        atomic_store(&foreign_rc[k], 1);
    CU_ASSERT_EQUAL(
        shoal_tasks_submit(fan_pool, tk_job_fn, tk_job(0, A_SPAWN | A_FOREIGN, 0), TK_LONG_MS),
        SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_done) == 1 + atomic_load(&fan_ok));
    CU_ASSERT_EQUAL(atomic_load(&tk_done), 1 + atomic_load(&fan_ok));
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(fan_group, TK_LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_release(fan_pool), SHOAL_OK);
    int ok = atomic_load(&fan_ok), n = atomic_load(&fan_next);
    CU_ASSERT_EQUAL(atomic_load(&fan_odd), 0);
    CU_ASSERT(atomic_load(&fan_busy) > 0); /* the queue of 4 overflowed */
    CU_ASSERT_EQUAL(ok + atomic_load(&fan_busy), n - 1);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(fan_pool), (uint64_t)ok + 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(fan_pool), (uint64_t)ok + 1);
    CU_ASSERT_EQUAL(tk_ran_times(0, n, 1), 1 + ok);
    CU_ASSERT_EQUAL(tk_ran_times(0, n, 0), n - 1 - ok);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT(atomic_load(&fan_member) > 0);
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(atomic_load(&foreign_rc[k]), k == 1 ? SHOAL_OK : SHOAL_EINVAL);
    int r = -1;
    CU_ASSERT_EQUAL(
        shoal_tasks_submit_wait(other_pool, tk_job_fn, tk_job(TK_MAXN - 2, 0, 6), TK_LONG_MS, &r),
        SHOAL_OK);
    CU_ASSERT_EQUAL(r, 6);
    CU_ASSERT_EQUAL(shoal_tasks_release(other_pool), SHOAL_OK); /* counters final */
    CU_ASSERT_EQUAL(shoal_tasks_submitted(other_pool), 1);      /* the foreign call's never ran */
    CU_ASSERT_EQUAL(shoal_tasks_completed(other_pool), 1);
    shoal_task_group_free(fan_group);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(other_pool), SHOAL_OK);
    tk_finish(rt, fan_pool);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"submit_wait results never cross", submit_wait_results_never_cross},
        {"group first error in finish order", group_first_error_in_finish_order},
        {"groups under concurrent submits; freed by a task",
         groups_under_concurrent_submits_and_freed_by_a_task},
        {"groups waited on after their pool is destroyed",
         groups_waited_on_after_their_pool_is_destroyed},
        {"tasks submitting tasks never block", tasks_submitting_tasks_never_block},
        {NULL, NULL},
    };
    tk_spawn_children = spawn_children; /* what A_SPAWN and A_FOREIGN tasks do */
    tk_call_foreign = call_foreign;
    return shoal_test_run("tasks_groups", cases);
}
