/* tasks_kit.h - what the adversarial task pool suites share
 * (test_tasks_lifecycle, test_tasks_waiting, test_tasks_panics,
 * test_tasks_groups): a job model -- one task function whose behaviour each
 * job picks (wait on a gate, panic, return a code, submit more tasks) and
 * that records what ran --, a panic hook that checks what it hears, pool
 * and runtime makers, and a caller that submits or releases on a thread of
 * its own.
 *
 * Tasks never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them. Tasks that must stay put wait
 * on a gate (one for all, or one of their own) that the test opens.
 * Deadlines here only bound waits: every one is generous.
 */
#ifndef SHOAL_TEST_TASKS_KIT_H
#define SHOAL_TEST_TASKS_KIT_H

#include <pthread.h>

#include "support.h"

#define TK_WAIT_S 20.0
#define TK_LONG_MS 20000u
#define TK_MAXN 8192 /* jobs: each its own slot idx in the records */

/* ---- the job model ---------------------------------------------------------------- */

enum {
    A_BLOCK = 1,   /* waits for tk_gate */
    A_OWN = 2,     /* waits for tk_gate_of[idx] */
    A_PANIC = 4,   /* panics after it ran */
    A_SPAWN = 8,   /* submits children (tasks submitting tasks) */
    A_FOREIGN = 16 /* calls another pool's blocking functions */
};

typedef struct {
    int idx;
    int ret; /* what the task returns */
    int act; /* A_* */
} tk_job_t;

/* Per job: how often it ran, its own gate, how often the hook heard it.
 * tk_done counts tasks that have finished, tk_entered those that reached
 * a gate; tk_gate is the gate for all. The panic hook's record: a call
 * with a foreign arg, a wrong user or a text not the task's own counts in
 * tk_hook_bad. */
extern tk_job_t tk_jobs[TK_MAXN];
extern atomic_int tk_ran[TK_MAXN], tk_gate_of[TK_MAXN], tk_hooked_of[TK_MAXN];
extern atomic_int tk_done, tk_entered, tk_gate;
extern atomic_int tk_hooked, tk_hook_bad;

/* What an A_SPAWN and an A_FOREIGN task do: set by the suite that uses
 * them (test_tasks_groups) before its cases run. */
extern void (*tk_spawn_children)(shoal_ctx_t *ctx, tk_job_t *j);
extern void (*tk_call_foreign)(void);

/* Clears every record and shuts every gate. */
void tk_reset(void);
/* The task: arg is a tk_job_t. Gates first, then children and foreign
 * calls, then it counts as ran and done, then it panics ("storm <idx>") or
 * returns ret. */
int tk_job_fn(shoal_ctx_t *ctx, void *arg);
/* jobs[i] set to do `act` and return `ret`. */
tk_job_t *tk_job(int i, int act, int ret);
/* How many of jobs[from, to) ran exactly `want` times. */
int tk_ran_times(int from, int to, int want);

/* ---- runtimes and pools ------------------------------------------------------------ */

/* A runtime of 6 threads (blocked tasks hold threads: the pool's actor
 * needs one) whose log is kept (each panic logs a line), not printed. */
shoal_runtime_t *tk_runtime(void);
/* Options of a pool of `size` workers and a queue of `queue`, with the
 * kit's panic hook. */
shoal_tasks_opts_t tk_opts(uint32_t size, uint32_t queue);
shoal_tasks_t *tk_make_with(shoal_runtime_t *rt, const shoal_tasks_opts_t *o);
shoal_tasks_t *tk_make(shoal_runtime_t *rt, uint32_t size, uint32_t queue);
shoal_pool_stats_t tk_stats(shoal_runtime_t *rt, shoal_tasks_t *t);
/* Opens every gate, destroys the pool (asserting SHOAL_OK), then rt. */
void tk_finish(shoal_runtime_t *rt, shoal_tasks_t *t);

/* ---- a caller on its own thread ---------------------------------------------------- */

enum { C_SUBMIT, C_FOREVER, C_SUBMIT_WAIT, C_GROUP, C_RELEASE };

typedef struct {
    pthread_t th;
    shoal_tasks_t *t;
    shoal_task_group_t *g;
    int how; /* C_* */
    tk_job_t *job;
    int result; /* submit_wait's */
    atomic_int rc, returned;
} tk_caller_t;

/* Starts c on its own thread: it submits j `how` (C_GROUP: to c->g, set
 * beforehand) or releases t (C_RELEASE), then records rc and returned. */
void tk_start(tk_caller_t *c, shoal_tasks_t *t, int how, tk_job_t *j);
/* How many of c[0, n) have returned. */
int tk_returned(tk_caller_t *c, int n);

#endif
