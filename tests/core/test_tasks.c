/* test_tasks.c - task pools (core/tasks/, shoal/tasks.h): every function and
 * every error. Submit, try_submit and submit_wait with their refusals
 * (full: SHOAL_EBUSY; deadline: SHOAL_ETIMEDOUT no earlier than it;
 * max_waiting: exactly the excess SHOAL_EOVERLOAD; released:
 * SHOAL_ESHUTDOWN); nonblocking pools; groups (the first error, every task
 * still run); tune and the counters; idle expiry down to min_size and lazy
 * grow back; the panic hook once per panicking task with its worker
 * replaced; release waiting for queued and running tasks, release_timeout;
 * what a task may and may not do on its dispatcher thread.
 *
 * Tasks never call CUnit: they record into atomics; the test thread asserts
 * after synchronising on them. Where tasks must stay queued, running ones
 * block on a gate the test opens.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define WAIT_S 20.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define LONG_MS 20000u
#define THREADS 6u /* blocked tasks hold threads: the pool's actor needs one */
#define MAXN 4096

enum { A_BLOCK = 1, A_PANIC = 2, A_SUBMIT = 4, A_BLOCKING_CALLS = 8, A_TUNE = 16 };

typedef struct {
    int idx;
    int ret; /* what the task returns */
    int act; /* A_* */
} job_t;

static job_t jobs[MAXN];
static atomic_int ran[MAXN];
static atomic_int done, entered, gate;
/* A_SUBMIT / A_BLOCKING_CALLS / A_TUNE: what the task saw. */
static shoal_tasks_t *inner_pool;
static atomic_int inner_rc[5];
static _Atomic double inner_secs;
/* The panic hook's record: why_of[i] is written before hooked is raised. */
static atomic_int hooked, hooked_of[MAXN], hook_user_ok;
static char why_of[MAXN][64];
static int hook_user;

static void reset(void)
{
    for (int i = 0; i < MAXN; i++) {
        jobs[i] = (job_t){i, 0, 0};
        atomic_store(&ran[i], 0);
        atomic_store(&hooked_of[i], 0);
        why_of[i][0] = '\0';
    }
    atomic_store(&done, 0);
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    atomic_store(&hooked, 0);
    atomic_store(&hook_user_ok, 1);
    for (int i = 0; i < 5; i++)
        atomic_store(&inner_rc[i], 1);
}

static int noop(shoal_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    return 0;
}

static int job_fn(shoal_ctx_t *ctx, void *arg)
{
    job_t *j = arg;
    if (j->act & A_BLOCK) {
        atomic_fetch_add(&entered, 1);
        shoal_test_wait_flag(&gate, WAIT_S);
    }
    if (j->act & A_SUBMIT) { /* on a dispatcher thread: never blocks */
        double t0 = shoal_test_now();
        atomic_store(&inner_rc[0], shoal_tasks_submit(inner_pool, noop, NULL, LONG_MS));
        atomic_store(&inner_secs, shoal_test_now() - t0);
    }
    if (j->act & A_BLOCKING_CALLS) {
        int r = 0;
        atomic_store(&inner_rc[1], shoal_tasks_submit_wait(inner_pool, noop, NULL, 10, &r));
        shoal_task_group_t *g = NULL;
        shoal_task_group_create(inner_pool, &g);
        atomic_store(&inner_rc[2], shoal_task_group_wait(g, 10, NULL));
        shoal_task_group_free(g);
        atomic_store(&inner_rc[3], shoal_tasks_release_timeout(inner_pool, 10));
        atomic_store(&inner_rc[4], shoal_tasks_destroy(inner_pool)); /* nothing freed */
    }
    if (j->act & A_TUNE)
        atomic_store(&inner_rc[0], shoal_tasks_tune(inner_pool, 3));
    atomic_fetch_add(&ran[j->idx], 1);
    atomic_fetch_add(&done, 1);
    if (j->act & A_PANIC)
        shoal_panic(ctx, "boom %d", j->idx);
    return j->ret;
}

static void hook(void *arg, const char *why, void *user)
{
    job_t *j = arg;
    if (user != &hook_user)
        atomic_store(&hook_user_ok, 0);
    snprintf(why_of[j->idx], sizeof why_of[j->idx], "%s", why);
    atomic_fetch_add(&hooked_of[j->idx], 1);
    atomic_fetch_add(&hooked, 1); /* seq_cst: after why_of, for the test thread */
}

/* A runtime whose log is kept (panics log one line each), not printed. */
static shoal_runtime_t *runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(THREADS, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    return rt;
}

static shoal_tasks_t *make(shoal_runtime_t *rt, uint32_t size, uint32_t queue,
                           shoal_tasks_opts_t *o_in)
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
    inner_pool = t;
    return t;
}

static int submit(shoal_tasks_t *t, int i, int act, int ret)
{
    jobs[i].act = act;
    jobs[i].ret = ret;
    return shoal_tasks_submit(t, job_fn, &jobs[i], LONG_MS);
}

/* n tasks block on the gate; returns once all have entered. */
static void block(shoal_tasks_t *t, int from, int n)
{
    int before = atomic_load(&entered);
    for (int i = from; i < from + n; i++)
        CU_ASSERT_EQUAL(submit(t, i, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == before + n);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&entered), before + n);
}

static void finish(shoal_runtime_t *rt, shoal_tasks_t *t)
{
    atomic_store(&gate, 1);
    CU_ASSERT_EQUAL(shoal_tasks_destroy(t), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* ---- creating ------------------------------------------------------------------ */

/* The defaults, the pool underneath (a pull pool, prefetch 1, buffer =
 * queue), and options the pool refuses. */
static void create_defaults_and_bad_options(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
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
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 3, 64, NULL);
    for (int i = 0; i < 3000; i++)
        CU_ASSERT_EQUAL(submit(t, i, 0, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_tasks_completed(t) == 3000);
    CU_ASSERT_EQUAL(atomic_load(&done), 3000);
    int once = 0;
    for (int i = 0; i < 3000; i++)
        once += atomic_load(&ran[i]) == 1;
    CU_ASSERT_EQUAL(once, 3000);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 3000);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 3000);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, NULL, NULL, 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, NULL, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit(NULL, noop, NULL, 0), SHOAL_EINVAL);
    finish(rt, t);
}

/* Two workers blocked, a queue of 3: exactly 3 of 10 try_submits are
 * taken, 7 refused with SHOAL_EBUSY; running 2, free 0, queued 3. */
static void try_submit_refuses_when_full(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 2, 3, NULL);
    block(t, 0, 2);
    int ok = 0, busy = 0;
    for (int i = 2; i < 12; i++) {
        int rc = shoal_tasks_try_submit(t, job_fn, &jobs[i]);
        ok += rc == SHOAL_OK;
        busy += rc == SHOAL_EBUSY;
    }
    CU_ASSERT_EQUAL(ok, 3);
    CU_ASSERT_EQUAL(busy, 7);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 2);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_queued(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 5);
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 5);
    CU_ASSERT_EQUAL(atomic_load(&done), 5);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(atomic_load(&ran[i]), 1);
    finish(rt, t);
}

/* A full pool: submit returns SHOAL_ETIMEDOUT no earlier than its deadline
 * (and 0 ms refuses at once); the refused tasks never run. */
static void submit_times_out_at_its_deadline(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 1, NULL);
    block(t, 0, 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, &jobs[1]), SHOAL_OK);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, &jobs[2], 200), SHOAL_ETIMEDOUT);
    double secs = shoal_test_now() - t0;
    CU_ASSERT(secs >= 0.2);
    CU_ASSERT(secs < 10.0);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, &jobs[3], 0), SHOAL_ETIMEDOUT);
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 2);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2);
    CU_ASSERT_EQUAL(atomic_load(&ran[2]), 0);
    CU_ASSERT_EQUAL(atomic_load(&ran[3]), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 2);
    finish(rt, t);
}

typedef struct {
    shoal_tasks_t *t;
    job_t *job;
    uint64_t timeout_ms;
    atomic_int rc, returned;
    _Atomic double at; /* when it returned */
} submitter_t;

static void *submitter(void *arg)
{
    submitter_t *s = arg;
    int rc = shoal_tasks_submit(s->t, job_fn, s->job, s->timeout_ms);
    atomic_store(&s->at, shoal_test_now());
    atomic_store(&s->rc, rc);
    atomic_store(&s->returned, 1);
    return NULL;
}

static void start_submitter(pthread_t *th, submitter_t *s, shoal_tasks_t *t, job_t *job)
{
    s->t = t;
    s->job = job;
    s->timeout_ms = LONG_MS;
    atomic_store(&s->returned, 0);
    atomic_store(&s->rc, 1);
    CU_ASSERT_EQUAL_FATAL(pthread_create(th, NULL, submitter, s), 0);
}

/* A submitter into a full pool waits (counted in waiting) and gets in once
 * a worker frees room: its task runs. */
static void submit_waits_for_room(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 1, NULL);
    block(t, 0, 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, &jobs[1]), SHOAL_OK);
    pthread_t th;
    submitter_t s;
    start_submitter(&th, &s, t, &jobs[2]);
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    CU_ASSERT_EQUAL(atomic_load(&s.returned), 0);
    double opened = shoal_test_now();
    atomic_store(&gate, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&s.rc), SHOAL_OK);
    CU_ASSERT(atomic_load(&s.at) >= opened);
    WAIT_UNTIL(shoal_tasks_completed(t) == 3);
    CU_ASSERT_EQUAL(atomic_load(&ran[2]), 1);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 0);
    finish(rt, t);
}

/* A nonblocking pool (ants' Nonblocking) refuses at once, whatever the
 * timeout; so does a submit from a task (a dispatcher thread). */
static void nonblocking_and_dispatcher_submits_never_wait(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.nonblocking = 1;
    shoal_tasks_t *t = make(rt, 1, 1, &o);
    jobs[0].act = A_BLOCK | A_SUBMIT; /* submits into its own full pool */
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, &jobs[0], LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, &jobs[1]), SHOAL_OK);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, job_fn, &jobs[2], LONG_MS), SHOAL_EBUSY);
    int r = 0;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[3], LONG_MS, &r), SHOAL_EBUSY);
    CU_ASSERT(shoal_test_now() - t0 < 5.0);
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 2);
    CU_ASSERT_EQUAL(atomic_load(&inner_rc[0]), SHOAL_EBUSY); /* still full: task 1 queued */
    CU_ASSERT(atomic_load(&inner_secs) < 5.0);
    CU_ASSERT_EQUAL(atomic_load(&ran[2]) + atomic_load(&ran[3]), 0);
    finish(rt, t);
}

/* max_waiting 2 (ants' MaxBlockingTasks): with the pool full and two
 * submitters waiting, each of three more is refused at once with
 * SHOAL_EOVERLOAD (counted in waiting_refused); the two get in later. */
static void max_waiting_refuses_exactly_the_excess(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.max_waiting = 2;
    shoal_tasks_t *t = make(rt, 1, 1, &o);
    block(t, 0, 1);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, job_fn, &jobs[1]), SHOAL_OK);
    pthread_t th[5];
    submitter_t s[5];
    for (int i = 0; i < 2; i++)
        start_submitter(&th[i], &s[i], t, &jobs[2 + i]);
    WAIT_UNTIL(shoal_tasks_waiting(t) == 2);
    CU_ASSERT_EQUAL_FATAL(shoal_tasks_waiting(t), 2);
    for (int i = 2; i < 5; i++)
        start_submitter(&th[i], &s[i], t, &jobs[2 + i]);
    for (int i = 2; i < 5; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(atomic_load(&s[i].rc), SHOAL_EOVERLOAD);
    }
    CU_ASSERT_EQUAL(atomic_load(&s[0].returned) + atomic_load(&s[1].returned), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.waiting_refused, 3);
    CU_ASSERT_EQUAL(st.max_waiting, 2);
    atomic_store(&gate, 1);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(atomic_load(&s[i].rc), SHOAL_OK);
    }
    WAIT_UNTIL(shoal_tasks_completed(t) == 4);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 4);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(atomic_load(&ran[i]), i < 4 ? 1 : 0);
    finish(rt, t);
}

/* ---- submit_wait --------------------------------------------------------------- */

/* The task's return comes back (0 and not), a panic as SHOAL_EPANIC; a
 * deadline that passes while the task runs (it still finishes) or while
 * waiting for room (it never runs) gives SHOAL_ETIMEDOUT, no earlier. */
static void submit_wait_returns_the_result(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 0, NULL);
    int r = -1;
    jobs[0].ret = 42;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[0], LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, 42);
    CU_ASSERT_EQUAL(atomic_load(&ran[0]), 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[1], LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, 0);
    jobs[2].act = A_PANIC;
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[2], LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r, SHOAL_EPANIC);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[3], LONG_MS, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&ran[3]), 1); /* the replacement ran it */

    jobs[4].act = A_BLOCK;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[4], 150, &r), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.15);
    CU_ASSERT_EQUAL(atomic_load(&entered), 1); /* it runs, blocked */
    t0 = shoal_test_now();                     /* queue 0: no room now */
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, job_fn, &jobs[5], 150, &r), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.15);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&ran[4]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ran[4]), 1);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, noop, NULL, LONG_MS, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&ran[5]), 0);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, NULL, NULL, 0, &r), SHOAL_EINVAL);
    finish(rt, t);
}

/* ---- groups --------------------------------------------------------------------- */

/* One worker runs a group in order: the first error (5) is reported, not a
 * later one (8) nor the panic after it, and every task ran. A second wait
 * gives the same; a wait that times out says so, then succeeds. */
static void group_reports_the_first_error_and_runs_all(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 256, NULL);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    int rets[8] = {0, 0, 5, 0, 8, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        jobs[i].ret = rets[i];
        jobs[i].act = i == 6 ? A_PANIC : 0;
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, &jobs[i], LONG_MS), SHOAL_OK);
    }
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 5);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(atomic_load(&ran[i]), 1);
    WAIT_UNTIL(atomic_load(&hooked) == 1);
    CU_ASSERT_EQUAL(atomic_load(&hooked_of[6]), 1);

    jobs[8].act = A_BLOCK;
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, &jobs[8], LONG_MS), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 1);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 100, &first), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.1);
    atomic_store(&gate, 1);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, 5);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, NULL, NULL, 0), SHOAL_EINVAL);
    shoal_task_group_free(g);
    finish(rt, t);
}

/* 600 tasks on three workers, one panics first of all failures and one
 * returns 9: the first error is the panic's, every other task ran; a
 * group freed while its tasks still run is freed by its last one. */
static void group_with_a_panic_and_a_group_freed_early(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 3, 1024, NULL);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    jobs[0].act = A_PANIC;
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, &jobs[0], LONG_MS), SHOAL_OK);
    int first = -1;
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    for (int i = 1; i < 600; i++) {
        jobs[i].ret = i == 300 ? 9 : 0;
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, &jobs[i], LONG_MS), SHOAL_OK);
    }
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, LONG_MS, &first), SHOAL_OK);
    CU_ASSERT_EQUAL(first, SHOAL_EPANIC);
    CU_ASSERT_EQUAL(atomic_load(&done), 600);
    shoal_task_group_free(g);

    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    block(t, 600, 3);
    for (int i = 603; i < 613; i++)
        CU_ASSERT_EQUAL(shoal_task_group_submit(g, job_fn, &jobs[i], LONG_MS), SHOAL_OK);
    shoal_task_group_free(g); /* ten tasks still queued: they free it */
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 613);
    CU_ASSERT_EQUAL(atomic_load(&done), 613);
    finish(rt, t); /* ASan: no leak, no use after free */
}

/* ---- tune and counters ---------------------------------------------------------- */

/* tune grows at once and shrinks letting busy workers finish, clamped to
 * [min, max]; cap, running and free follow. From a task it does not wait. */
static void tune_up_and_down(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.max_size = 6;
    shoal_tasks_t *t = make(rt, 2, 16, &o);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 4), 4);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 4);
    block(t, 0, 4);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 4);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 2), 2);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 2);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 2); /* the other two finish, then end */
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 4 && shoal_tasks_running(t) == 0);
    CU_ASSERT_EQUAL(atomic_load(&done), 4);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 2);
    WAIT_UNTIL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).retiring == 0);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).pool_size, 2);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 100), 6);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 0), 1);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 1);
    jobs[10].act = A_TUNE; /* tune(3) from a task */
    CU_ASSERT_EQUAL(submit(t, 10, A_TUNE, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ran[10]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&inner_rc[0]), 3);
    WAIT_UNTIL(shoal_tasks_cap(t) == 3);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_tune(NULL, 3), SHOAL_EINVAL);
    finish(rt, t);
}

/* idle_timeout: idle workers end down to min_size (expired), and tasks
 * that find no idle worker get new ones up to max_size (lazy_grown). */
static void idle_expiry_and_lazy_grow(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.min_size = 1;
    o.max_size = 3;
    o.idle_timeout_ms = 40;
    shoal_tasks_t *t = make(rt, 3, 8, &o);
    shoal_pid_t pid = shoal_tasks_pid(t);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pid).expired == 2);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pid);
    CU_ASSERT_EQUAL(st.expired, 2);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 1);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(submit(t, i, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&entered) == 3);
    CU_ASSERT_EQUAL(atomic_load(&entered), 3);
    st = shoal_test_pool_stats(rt, pid);
    CU_ASSERT_EQUAL(st.lazy_grown, 2);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 3);
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pid).expired == 4);
    st = shoal_test_pool_stats(rt, pid);
    CU_ASSERT_EQUAL(st.expired, 4);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 3);
    finish(rt, t);
}

/* ---- panics ----------------------------------------------------------------------- */

/* Each of 5 panicking tasks reaches the hook exactly once, with its arg and
 * the panic's text; its worker is replaced (restarts, never degraded) and
 * every other task runs, later ones too. 200 panics in a row do not
 * degrade the pool. */
static void panic_hook_once_and_worker_replaced(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 2, 1024, NULL);
    for (int i = 0; i < 25; i++)
        CU_ASSERT_EQUAL(submit(t, i, i % 5 == 0 ? A_PANIC : 0, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&hooked) == 5 && shoal_tasks_completed(t) == 25);
    CU_ASSERT_EQUAL(atomic_load(&hooked), 5);
    CU_ASSERT_EQUAL(atomic_load(&hook_user_ok), 1);
    for (int i = 0; i < 25; i += 5) {
        CU_ASSERT_EQUAL(atomic_load(&hooked_of[i]), 1);
        char want[64];
        snprintf(want, sizeof want, "boom %d", i);
        CU_ASSERT_STRING_EQUAL(why_of[i], want);
    }
    CU_ASSERT_EQUAL(atomic_load(&done), 25);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 25);
    CU_ASSERT_EQUAL(shoal_tasks_panicked(t), 5);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.worker_restarts, 5);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    shoal_test_assert_logged("tasks/task: panic: boom 20");
    for (int i = 25; i < 225; i++)
        CU_ASSERT_EQUAL(submit(t, i, A_PANIC, 0), SHOAL_OK);
    for (int i = 225; i < 235; i++)
        CU_ASSERT_EQUAL(submit(t, i, 0, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&hooked) == 205 && shoal_tasks_completed(t) == 235);
    CU_ASSERT_EQUAL(atomic_load(&hooked), 205);
    CU_ASSERT_EQUAL(atomic_load(&done), 235);
    st = shoal_test_pool_stats(rt, shoal_tasks_pid(t));
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.worker_restarts, 205);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_FALSE(shoal_test_log_has("degraded"));
    finish(rt, t);
}

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
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 2, 16, NULL);
    block(t, 0, 2);
    for (int i = 2; i < 7; i++)
        CU_ASSERT_EQUAL(submit(t, i, 0, 0), SHOAL_OK);
    pthread_t th;
    releaser_t r = {.t = t};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, releaser, &r), 0);
    /* closed is set before the drain is asked for */
    WAIT_UNTIL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, noop, NULL), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, noop, NULL, LONG_MS), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_tasks_submit_wait(t, noop, NULL, LONG_MS, NULL), SHOAL_ESHUTDOWN);
    shoal_task_group_t *g = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_task_group_create(t, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_task_group_submit(g, noop, NULL, LONG_MS), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(shoal_task_group_wait(g, 0, NULL), SHOAL_OK); /* nothing in it */
    shoal_task_group_free(g);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 3), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&r.returned), 0); /* two tasks are held at the gate */
    atomic_store(&gate, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&r.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&done), 7);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 7);
    CU_ASSERT_EQUAL(shoal_tasks_submitted(t), 7);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_release(t), SHOAL_OK);
    finish(rt, t);
}

/* release_timeout: SHOAL_ETIMEDOUT no earlier than its deadline while a
 * task runs; the pool goes on and finishes it; the next call succeeds. A
 * submitter that was waiting for room when the release began is refused
 * with SHOAL_ESHUTDOWN at once -- while the blocked task still runs -- and
 * its task never runs. */
static void release_timeout_then_the_pool_finishes(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 1, 1, NULL);
    block(t, 0, 1);
    CU_ASSERT_EQUAL(submit(t, 1, 0, 0), SHOAL_OK);
    pthread_t th;
    submitter_t s;
    start_submitter(&th, &s, t, &jobs[2]);
    WAIT_UNTIL(shoal_tasks_waiting(t) == 1);
    CU_ASSERT_EQUAL(shoal_tasks_waiting(t), 1);
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, 150), SHOAL_ETIMEDOUT);
    CU_ASSERT(shoal_test_now() - t0 >= 0.15);
    CU_ASSERT_EQUAL(shoal_tasks_try_submit(t, noop, NULL), SHOAL_ESHUTDOWN);
    pthread_join(th, NULL); /* told by the drain, not by a task's end: the gate is shut */
    CU_ASSERT_EQUAL(atomic_load(&s.rc), SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(atomic_load(&done), 0);
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&done) == 2);
    CU_ASSERT_EQUAL(atomic_load(&done), 2);
    CU_ASSERT_EQUAL(shoal_tasks_release_timeout(t, LONG_MS), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 2);
    CU_ASSERT_EQUAL(atomic_load(&ran[2]), 0);
    finish(rt, t);
}

/* On a dispatcher thread the blocking functions refuse (SHOAL_EINVAL):
 * submit_wait, group_wait, release and destroy (which frees nothing then:
 * the pool still takes tasks). */
static void blocking_calls_refused_inside_a_task(void)
{
    reset();
    shoal_runtime_t *rt = runtime();
    shoal_tasks_t *t = make(rt, 2, 16, NULL);
    CU_ASSERT_EQUAL(submit(t, 0, A_BLOCKING_CALLS, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&done) == 1);
    CU_ASSERT_EQUAL(atomic_load(&inner_rc[1]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&inner_rc[2]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&inner_rc[3]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&inner_rc[4]), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_tasks_submit(t, noop, NULL, LONG_MS), SHOAL_OK); /* not released */
    finish(rt, t);
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
        {"submit_wait returns the result", submit_wait_returns_the_result},
        {"group reports the first error and runs all", group_reports_the_first_error_and_runs_all},
        {"group with a panic; a group freed early", group_with_a_panic_and_a_group_freed_early},
        {"tune up and down", tune_up_and_down},
        {"idle expiry and lazy grow", idle_expiry_and_lazy_grow},
        {"panic hook once, worker replaced", panic_hook_once_and_worker_replaced},
        {"release waits for running and queued tasks", release_waits_for_running_and_queued_tasks},
        {"release_timeout, then the pool finishes", release_timeout_then_the_pool_finishes},
        {"blocking calls refused inside a task", blocking_calls_refused_inside_a_task},
        {NULL, NULL},
    };
    return shoal_test_run("tasks", cases);
}
