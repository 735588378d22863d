/* tasks_basic_kit.h - what the task pool suites split from the first one
 * share (test_tasks_submit, test_tasks_results, test_tasks_sizing,
 * test_tasks_release): a job model -- one task function whose behaviour
 * each job picks (block on a gate, panic, submit into tb_inner_pool, call
 * the blocking functions or tune from a task) and that records what ran --,
 * a panic hook that records what it hears, pool and runtime makers, and a
 * submitter on a thread of its own. (The adversarial test_tasks_* suites
 * have theirs in tasks_kit.h.)
 *
 * Tasks never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (tb_reset() clears them before
 * a case). Where tasks must stay queued, running ones block on tb_gate,
 * which the test opens.
 */
#ifndef SHOAL_TEST_TASKS_BASIC_KIT_H
#define SHOAL_TEST_TASKS_BASIC_KIT_H

#include <pthread.h>

#include "support.h"

#define TB_WAIT_S 20.0
#define TB_LONG_MS 20000u
#define TB_MAXN 4096

/* ---- the job model ---------------------------------------------------------------- */

enum { A_BLOCK = 1, A_PANIC = 2, A_SUBMIT = 4, A_BLOCKING_CALLS = 8, A_TUNE = 16 };

typedef struct {
    int idx;
    int ret; /* what the task returns */
    int act; /* A_* */
} tb_job_t;

extern tb_job_t tb_jobs[TB_MAXN];
extern atomic_int tb_ran[TB_MAXN];
extern atomic_int tb_done, tb_entered, tb_gate;
/* A_SUBMIT / A_BLOCKING_CALLS / A_TUNE: what the task saw. tb_inner_pool is
 * the pool tb_make made last. */
extern shoal_tasks_t *tb_inner_pool;
extern atomic_int tb_inner_rc[5];
extern _Atomic double tb_inner_secs;
/* The panic hook's record: tb_why_of[i] is written before tb_hooked is
 * raised; tb_hook_user_ok drops to 0 if the hook hears a foreign user. */
extern atomic_int tb_hooked, tb_hooked_of[TB_MAXN], tb_hook_user_ok;
extern char tb_why_of[TB_MAXN][64];

/* Clears every record and shuts the gate. */
void tb_reset(void);
/* A task that does nothing and returns 0. */
int tb_noop(shoal_ctx_t *ctx, void *arg);
/* The task: arg is a tb_job_t. The gate (A_BLOCK), then what else its act
 * asks for, then it counts as ran and done, then it panics ("boom <idx>")
 * or returns ret. */
int tb_job_fn(shoal_ctx_t *ctx, void *arg);

/* ---- runtimes and pools ------------------------------------------------------------ */

/* A runtime of 6 threads (blocked tasks hold threads: the pool's actor
 * needs one) whose log is kept (panics log one line each), not printed. */
shoal_runtime_t *tb_runtime(void);
/* A pool of `size` workers and a queue of `queue` (o_in's other options, or
 * the defaults if NULL) with the kit's panic hook; it becomes
 * tb_inner_pool. */
shoal_tasks_t *tb_make(shoal_runtime_t *rt, uint32_t size, uint32_t queue,
                       shoal_tasks_opts_t *o_in);
/* Submits tb_jobs[i], set to do `act` and return `ret`. */
int tb_submit(shoal_tasks_t *t, int i, int act, int ret);
/* n tasks (tb_jobs[from, from + n)) block on the gate; returns once all
 * have entered. */
void tb_block(shoal_tasks_t *t, int from, int n);
/* Opens the gate, destroys the pool (asserting SHOAL_OK), then rt. */
void tb_finish(shoal_runtime_t *rt, shoal_tasks_t *t);

/* ---- a submitter on its own thread ------------------------------------------------- */

typedef struct {
    shoal_tasks_t *t;
    tb_job_t *job;
    uint64_t timeout_ms;
    atomic_int rc, returned;
    _Atomic double at; /* when it returned */
} tb_submitter_t;

/* Starts s on *th: it submits job into t (TB_LONG_MS), then records when it
 * returned, rc and returned. */
void tb_start_submitter(pthread_t *th, tb_submitter_t *s, shoal_tasks_t *t, tb_job_t *job);
/* Starts s on *th submitting tb_jobs[2] into t, a full pool, and returns
 * once it waits for room (asserting waiting is 1). */
void tb_wait_submitter(pthread_t *th, tb_submitter_t *s, shoal_tasks_t *t);

#endif
