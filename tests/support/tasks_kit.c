/* tasks_kit.c - the task pool suites' job model, pools and callers
 * (tasks_kit.h). */
#include "tasks_kit.h"

#include <stdio.h>
#include <string.h>

#define THREADS 6u /* blocked tasks hold threads: the pool's actor needs one */

tk_job_t tk_jobs[TK_MAXN];
atomic_int tk_ran[TK_MAXN], tk_gate_of[TK_MAXN], tk_hooked_of[TK_MAXN];
atomic_int tk_done, tk_entered, tk_gate;
atomic_int tk_hooked, tk_hook_bad;
static int hook_user;

void (*tk_spawn_children)(shoal_ctx_t *ctx, tk_job_t *j);
void (*tk_call_foreign)(void);

/* ---- the job model ---------------------------------------------------------------- */

void tk_reset(void)
{
    for (int i = 0; i < TK_MAXN; i++) {
        tk_jobs[i] = (tk_job_t){i, 0, 0};
        atomic_store(&tk_ran[i], 0);
        atomic_store(&tk_gate_of[i], 0);
        atomic_store(&tk_hooked_of[i], 0);
    }
    atomic_store(&tk_done, 0);
    atomic_store(&tk_entered, 0);
    atomic_store(&tk_gate, 0);
    atomic_store(&tk_hooked, 0);
    atomic_store(&tk_hook_bad, 0);
}

int tk_job_fn(shoal_ctx_t *ctx, void *arg)
{
    tk_job_t *j = arg;
    if (j->act & A_BLOCK) {
        atomic_fetch_add(&tk_entered, 1);
        shoal_test_wait_flag(&tk_gate, TK_WAIT_S);
    }
    if (j->act & A_OWN) {
        atomic_fetch_add(&tk_entered, 1);
        shoal_test_wait_flag(&tk_gate_of[j->idx], TK_WAIT_S);
    }
    if (j->act & A_SPAWN)
        tk_spawn_children(ctx, j);
    if (j->act & A_FOREIGN)
        tk_call_foreign();
    atomic_fetch_add(&tk_ran[j->idx], 1);
    atomic_fetch_add(&tk_done, 1); /* last: `tk_done` counts tasks that have finished */
    if (j->act & A_PANIC)
        shoal_panic(ctx, "storm %d", j->idx);
    return j->ret;
}

static void hook(void *arg, const char *why, void *user)
{
    tk_job_t *j = arg;
    char want[32];
    if (user != &hook_user || j < tk_jobs || j >= tk_jobs + TK_MAXN) {
        atomic_fetch_add(&tk_hook_bad, 1);
        return;
    }
    snprintf(want, sizeof want, "storm %d", j->idx);
    if (strcmp(why, want) != 0)
        atomic_fetch_add(&tk_hook_bad, 1);
    atomic_fetch_add(&tk_hooked_of[j->idx], 1);
    atomic_fetch_add(&tk_hooked, 1);
}

tk_job_t *tk_job(int i, int act, int ret)
{
    tk_jobs[i].act = act;
    tk_jobs[i].ret = ret;
    return &tk_jobs[i];
}

int tk_ran_times(int from, int to, int want)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += atomic_load(&tk_ran[i]) == want;
    return n;
}

/* ---- runtimes and pools ------------------------------------------------------------ */

shoal_runtime_t *tk_runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    return rt;
}

shoal_tasks_opts_t tk_opts(uint32_t size, uint32_t queue)
{
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.size = size;
    o.queue = queue;
    o.panic_hook = hook;
    o.panic_user = &hook_user;
    return o;
}

shoal_tasks_t *tk_make_with(shoal_runtime_t *rt, const shoal_tasks_opts_t *o)
{
    shoal_tasks_t *t = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_create(rt, o, &t), SHOAL_OK);
    return t;
}

shoal_tasks_t *tk_make(shoal_runtime_t *rt, uint32_t size, uint32_t queue)
{
    shoal_tasks_opts_t o = tk_opts(size, queue);
    return tk_make_with(rt, &o);
}

shoal_pool_stats_t tk_stats(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    return shoal_test_pool_stats(rt, shoal_tasks_pid(t));
}

void tk_finish(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    atomic_store(&tk_gate, 1);
    for (int i = 0; i < TK_MAXN; i++)
        atomic_store(&tk_gate_of[i], 1);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- a caller on its own thread ---------------------------------------------------- */

static void *caller_main(void *arg)
{
    tk_caller_t *c = arg;
    int rc;
    switch (c->how) {
    case C_SUBMIT:
        rc = shoal_tasks_submit(c->t, tk_job_fn, c->job, TK_LONG_MS);
        break;
    case C_FOREVER:
        rc = shoal_tasks_submit(c->t, tk_job_fn, c->job, UINT64_MAX);
        break;
    case C_SUBMIT_WAIT:
        rc = shoal_tasks_submit_wait(c->t, tk_job_fn, c->job, TK_LONG_MS, &c->result);
        break;
    case C_GROUP:
        rc = shoal_task_group_submit(c->g, tk_job_fn, c->job, TK_LONG_MS);
        break;
    default:
        rc = shoal_tasks_release(c->t);
        break;
    }
    atomic_store(&c->rc, rc);
    atomic_store(&c->returned, 1);
    return NULL;
}

void tk_start(tk_caller_t *c, shoal_tasks_t *t, int how, tk_job_t *j)
{
    c->t = t;
    c->how = how;
    c->job = j;
    c->result = 12345;
    atomic_store(&c->rc, 12345);
    atomic_store(&c->returned, 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&c->th, NULL, caller_main, c), 0);
}

int tk_returned(tk_caller_t *c, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += atomic_load(&c[i].returned);
    return k;
}
