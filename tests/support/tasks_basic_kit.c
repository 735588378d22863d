/* tasks_basic_kit.c - the task pool suites' job model, pools and
 * submitter (tasks_basic_kit.h). */
#include "tasks_basic_kit.h"

#include <stdio.h>

#define THREADS 6u /* blocked tasks hold threads: the pool's actor needs one */
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TB_WAIT_S)

tb_job_t tb_jobs[TB_MAXN];
atomic_int tb_ran[TB_MAXN];
atomic_int tb_done, tb_entered, tb_gate;
shoal_tasks_t *tb_inner_pool;
atomic_int tb_inner_rc[5];
_Atomic double tb_inner_secs;
atomic_int tb_hooked, tb_hooked_of[TB_MAXN], tb_hook_user_ok;
char tb_why_of[TB_MAXN][64];
static int hook_user;

/* ---- the job model ---------------------------------------------------------------- */

void tb_reset(void)
{
    for (int i = 0; i < TB_MAXN; i++) {
        tb_jobs[i] = (tb_job_t){i, 0, 0};
        atomic_store(&tb_ran[i], 0);
        atomic_store(&tb_hooked_of[i], 0);
        tb_why_of[i][0] = '\0';
    }
    atomic_store(&tb_done, 0);
    atomic_store(&tb_entered, 0);
    atomic_store(&tb_gate, 0);
    atomic_store(&tb_hooked, 0);
    atomic_store(&tb_hook_user_ok, 1);
    for (int i = 0; i < 5; i++)
        atomic_store(&tb_inner_rc[i], 1);
}

int tb_noop(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    return 0;
}

int tb_job_fn(shoal_ctx_t *ctx, void *arg)
{
    tb_job_t *j = arg;
    if (j->act & A_BLOCK) {
        atomic_fetch_add(&tb_entered, 1);
        shoal_test_wait_flag(&tb_gate, TB_WAIT_S);
    }
    if (j->act & A_SUBMIT) { /* on a dispatcher thread: never blocks */
        double t0 = shoal_test_now();
        atomic_store(&tb_inner_rc[0], shoal_tasks_submit(tb_inner_pool, tb_noop, NULL, TB_LONG_MS));
        atomic_store(&tb_inner_secs, shoal_test_now() - t0);
    }
    if (j->act & A_BLOCKING_CALLS) {
        int r = 0;
        atomic_store(&tb_inner_rc[1],
                     shoal_tasks_submit_wait(tb_inner_pool, tb_noop, NULL, 10, &r));
        shoal_task_group_t *g = NULL;
        shoal_task_group_create(tb_inner_pool, &g);
        atomic_store(&tb_inner_rc[2], shoal_task_group_wait(g, 10, NULL));
        shoal_task_group_free(g);
        atomic_store(&tb_inner_rc[3], shoal_tasks_release_timeout(tb_inner_pool, 10));
        atomic_store(&tb_inner_rc[4], shoal_tasks_destroy(tb_inner_pool)); /* nothing freed */
    }
    if (j->act & A_TUNE)
        atomic_store(&tb_inner_rc[0], shoal_tasks_tune(tb_inner_pool, 3));
    atomic_fetch_add(&tb_ran[j->idx], 1);
    atomic_fetch_add(&tb_done, 1);
    if (j->act & A_PANIC)
        shoal_panic(ctx, "boom %d", j->idx);
    return j->ret;
}

static void hook(void *arg, const char *why, void *user)
{
    tb_job_t *j = arg;
    if (user != &hook_user)
        atomic_store(&tb_hook_user_ok, 0);
    snprintf(tb_why_of[j->idx], sizeof tb_why_of[j->idx], "%s", why);
    atomic_fetch_add(&tb_hooked_of[j->idx], 1);
    atomic_fetch_add(&tb_hooked, 1); /* seq_cst: after why_of, for the test thread */
}

/* ---- runtimes and pools ------------------------------------------------------------ */

/* A runtime whose log is kept (panics log one line each), not printed. */
shoal_runtime_t *tb_runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    return rt;
}

shoal_tasks_t *tb_make(shoal_runtime_t *rt, uint32_t size, uint32_t queue, shoal_tasks_opts_t *o_in)
{
    shoal_tasks_opts_t o;
    if (o_in != NULL)
        o = *o_in;
    else
        shoal_tasks_opts_init(&o);
    o.size = size;
    o.queue = queue;
    o.panic_hook = hook;
    o.panic_user = &hook_user;
    shoal_tasks_t *t = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_create(rt, &o, &t), SHOAL_OK);
    tb_inner_pool = t;
    return t;
}

int tb_submit(shoal_tasks_t *t, int i, int act, int ret)
{
    tb_jobs[i].act = act;
    tb_jobs[i].ret = ret;
    return shoal_tasks_submit(t, tb_job_fn, &tb_jobs[i], TB_LONG_MS);
}

/* n tasks block on the gate; returns once all have entered. */
void tb_block(shoal_tasks_t *t, int from, int n)
{
    int before = atomic_load(&tb_entered);
    for (int i = from; i < from + n; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_entered) == before + n);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&tb_entered), before + n);
}

void tb_finish(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    atomic_store(&tb_gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- a submitter on its own thread ------------------------------------------------- */

static void *submitter(void *arg)
{
    tb_submitter_t *s = arg;
    int rc = shoal_tasks_submit(s->t, tb_job_fn, s->job, s->timeout_ms);
    atomic_store(&s->at, shoal_test_now());
    atomic_store(&s->rc, rc);
    atomic_store(&s->returned, 1);
    return NULL;
}

void tb_start_submitter(pthread_t *th, tb_submitter_t *s, shoal_tasks_t *t, tb_job_t *job)
{
    s->t = t;
    s->job = job;
    s->timeout_ms = TB_LONG_MS;
    atomic_store(&s->returned, 0);
    atomic_store(&s->rc, 1);
    CU_ASSERT_EQUAL_FATAL(pthread_create(th, NULL, submitter, s), 0);
}

void tb_wait_submitter(pthread_t *th, tb_submitter_t *s, shoal_tasks_t *t)
{
    tb_start_submitter(th, s, t, &tb_jobs[2]);
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
}
