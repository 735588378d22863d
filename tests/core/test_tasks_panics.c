/* test_tasks_panics.c - tasks that panic (core/tasks/tasks.c: a panicking
 * task's worker ends and is replaced; shoal/tasks.h: the panic hook), in
 * storms and under release, with exact outcomes (test_tasks_submit,
 * _results, _sizing and _release cover each function on its own):
 *   - panic storms (thousands of tasks, from two threads) and panics while
 *     the pool is being released.
 *
 * Tasks never call CUnit: they record into atomics (tasks_kit.h); the test
 * thread asserts after synchronising on them. Tasks that must stay put wait
 * on a gate (one for all, or one of their own) that the test opens.
 * Deadlines here only bound waits: every one is generous.
 */
#include <stdint.h>

#include "tasks_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TK_WAIT_S)

/* ---- panics ---------------------------------------------------------------------- */

#define STORM_PER 1500
#define STORM_EVERY 10 /* every 10th task returns, the rest panic */

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    int from;
    int refused;
} stormer_t;

static void *stormer_main(void *arg)
{
    stormer_t *s = arg;
    for (int i = s->from; i < s->from + STORM_PER; i++) {
        int act = i % STORM_EVERY == 0 ? 0 : A_PANIC;
        s->refused +=
            shoal_tasks_submit(s->t, tk_job_fn, tk_job(i, act, 0), TK_LONG_MS) != SHOAL_OK;
    }
    return NULL;
}

/* 3000 tasks from two threads, nine in ten of them panic: the hook hears
 * each panicking task exactly once with its own arg and text and no other;
 * the counters are exact; the pool is never degraded, has its four workers
 * afterwards and still serves. */
static void panic_storm_from_two_threads(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 4, 256);
    stormer_t s[2] = {{.t = t, .from = 0}, {.t = t, .from = STORM_PER}};
    for (int k = 0; k < 2; k++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&s[k].th, NULL, stormer_main, &s[k]), 0);
    for (int k = 0; k < 2; k++) {
        pthread_join(s[k].th, NULL);
        CU_ASSERT_EQUAL(s[k].refused, 0);
    }
    int n = 2 * STORM_PER, panics = n - n / STORM_EVERY;
    WAIT_UNTIL(shoal_tasks_completed(t) == (uint64_t)n && atomic_load(&tk_hooked) == panics);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), (uint64_t)panics);
    CU_ASSERT_EQUAL(atomic_load(&tk_hooked), panics);
    CU_ASSERT_EQUAL(atomic_load(&tk_hook_bad), 0);
    int hook_right = 0;
    for (int i = 0; i < n; i++)
        hook_right += atomic_load(&tk_hooked_of[i]) == (i % STORM_EVERY == 0 ? 0 : 1);
    CU_ASSERT_EQUAL(hook_right, n);
    CU_ASSERT_EQUAL(tk_ran_times(0, n, 1), n);
    WAIT_UNTIL(tk_stats(rt, t).worker_restarts == (uint64_t)panics &&
               tk_stats(rt, t).pool_size == 4);
    shoal_pool_stats_t st = tk_stats(rt, t);
    CU_ASSERT_EQUAL(st.worker_restarts, (uint64_t)panics);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.pool_size, 4);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 4);
    CU_ASSERT_FALSE(shoal_test_log_has("degraded"));
    int r = -1;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(n, 0, 3), TK_LONG_MS, &r),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(r, 3);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), (uint64_t)n + 1);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), (uint64_t)panics);
    tk_finish(rt, t);
}

/* Two workers held, then 300 tasks that all panic queued behind them (a
 * third of them in a group) when release begins: the draining pool replaces
 * each panicked worker until every task has run; the hook hears each once;
 * the group's first error is SHOAL_EPANIC; release returns SHOAL_OK. */
static void panics_while_the_pool_is_released(void)
{
    tk_reset();
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_t *t = tk_make(rt, 2, 512);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(shoal_tasks_submit(t, tk_job_fn, tk_job(i, A_BLOCK, 0), TK_LONG_MS),
                        SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tk_entered) == 2);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    for (int i = 2; i < 302; i++) {
        tk_job_t *j = tk_job(i, A_PANIC, 0);
        CU_ASSERT_EQUAL(i % 3 ? shoal_tasks_submit(t, tk_job_fn, j, TK_LONG_MS)
                              : shoal_task_group_submit(g, tk_job_fn, j, TK_LONG_MS),
                        SHOAL_OK);
    }
    tk_caller_t rel;
    tk_start(&rel, t, C_RELEASE, NULL);
    WAIT_UNTIL(tk_stats(rt, t).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, tk_job_fn, tk_job(400, 0, 0)), SHOAL_ESHUTDOWN);
    atomic_store(&tk_gate, 1);
    pthread_join(rel.th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&rel.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(tk_ran_times(0, 302, 1), 302);
    CU_ASSERT_EQUAL(atomic_load(&tk_ran[400]), 0);
    CU_ASSERT_EQUAL(atomic_load(&tk_hooked), 300);
    CU_ASSERT_EQUAL(atomic_load(&tk_hook_bad), 0);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 302);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 300);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    shoal_task_group_free(g);
    tk_finish(rt, t);
}

/* ---- a hook that panics ------------------------------------------------------------ */

/* A task that hands its ctx to the hook through its arg, then panics; the
 * hook (on the same thread, in the worker's end) panics with it in turn. */
typedef struct {
    shoal_ctx_t *ctx;
    int idx;
} relay_t;

#define RELAYS 41
static relay_t relays[RELAYS];
static atomic_int relay_hooked;

static int relay_task(shoal_ctx_t *ctx, void *arg)
{
    relay_t *r = arg;
    r->ctx = ctx;
    shoal_panic(ctx, "relay %d", r->idx);
}

static void panicking_hook(void *arg, const char *why, void *user)
{
    (void)why;
    (void)user;
    relay_t *r = arg;
    atomic_fetch_add(&relay_hooked, 1);
    shoal_panic(r->ctx, "the hook of relay %d panics too", r->idx);
}

/* 40 tasks of a group and one submit_wait, each panicking, and the hook
 * panics for each: the hook is heard once per task, and still every task
 * is settled -- the group's wait returns SHOAL_OK with SHOAL_EPANIC at
 * once (the hook heard the last one), submit_wait SHOAL_EPANIC; the
 * counters are exact and the pool still serves. */
static void a_hook_that_panics(void)
{
    tk_reset();
    atomic_store(&relay_hooked, 0);
    shoal_runtime_t *rt = tk_runtime();
    shoal_tasks_opts_t o = tk_opts(2, 64);
    o.panic_hook = panicking_hook;
    shoal_tasks_t *t = tk_make_with(rt, &o);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    for (int i = 0; i < RELAYS - 1; i++) {
        relays[i] = (relay_t){NULL, i};
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, relay_task, &relays[i], TK_LONG_MS), SHOAL_OK);
    }
    relays[RELAYS - 1] = (relay_t){NULL, RELAYS - 1};
    int r = -1;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, relay_task, &relays[RELAYS - 1], TK_LONG_MS, &r),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(r, SHOAL_EPANIC);
    WAIT_UNTIL(atomic_load(&relay_hooked) == RELAYS && shoal_tasks_completed(t) == RELAYS);
    CU_ASSERT_EQUAL(atomic_load(&relay_hooked), RELAYS);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    shoal_task_group_free(g);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), RELAYS);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), RELAYS);
    r = -1;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, tk_job_fn, tk_job(0, 0, 5), TK_LONG_MS, &r),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(r, 5);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), RELAYS + 1);
    CU_ASSERT_EQUAL(atomic_load(&relay_hooked), RELAYS);
    tk_finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"panic storm from two threads", panic_storm_from_two_threads},
        {"panics while the pool is released", panics_while_the_pool_is_released},
        {"a hook that panics", a_hook_that_panics},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_panics", cases);
}
