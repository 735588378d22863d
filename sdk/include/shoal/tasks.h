/* shoal/tasks.h - task pools for C programs that embed shoal (after Go's
 * ants, tunny and pond): submit a function and its argument, and a worker
 * runs it.
 *
 * A task pool is a thin layer over one pull pool (shoal/pull.h): its
 * workers are actors of the runtime, a submitted task is a message {fn, arg}
 * put into the pool's bounded buffer, and a free worker takes the next one
 * on its own thread, so one slow task never has others queued behind it
 * while another worker is free. Everything the pool does holds here too:
 * idle workers end after idle_timeout_ms down to min_size and come back
 * when tasks do (lazy grow), submitters waiting for room are bounded by
 * max_waiting, and a worker whose task panicked is replaced.
 *
 * A task is shoal_task_fn: it runs on a dispatcher thread with the
 * worker's ctx (it may shoal_send, shoal_log, submit more tasks, and
 * shoal_panic) and returns 0 or an error code of its own choosing, which
 * shoal_tasks_submit_wait and task groups report. A task that calls
 * shoal_panic() ends its worker: the panic hook is called once with the
 * task's arg and the panic's text, the task counts as failed with
 * SHOAL_EPANIC, and the pool starts a replacement (a task can never spend
 * the pool's restart budget: 1000 restarts within 1 ms). A task should not
 * block for long: it holds one of the runtime's threads while it runs.
 *
 * The pool holds at most `queue` tasks waiting for a worker plus one per
 * worker being run. When it is full, shoal_tasks_submit waits for room
 * (sleeping, never polling) up to its deadline, unless the pool is
 * nonblocking; shoal_tasks_try_submit never waits. A waiting submitter is
 * woken when a quarter of those places are free (the pool's low-water
 * mark, as shoal_notify_room's), not at each one, so waiters wake in
 * batches: a place that frees before that may go to shoal_tasks_try_submit
 * or to a submit that did not have to wait. A woken submitter that finds
 * the pool full again waits again, and is counted against max_waiting
 * again (as ants' MaxBlockingTasks): it may then get SHOAL_EOVERLOAD.
 *
 * Errors: SHOAL_EBUSY (full, and not waiting), SHOAL_ETIMEDOUT (the deadline
 * passed), SHOAL_EOVERLOAD (max_waiting submitters wait already),
 * SHOAL_ESHUTDOWN (the pool is released: it takes no new task), SHOAL_EINVAL,
 * SHOAL_ELIMIT (the runtime is at max_actors: a thread that blocks here --
 * a submit waiting for room, tune -- waits as an actor record of its own,
 * and there is none free; retry once actors have ended. Release and
 * destroy never need one).
 *
 * Ownership: shoal_tasks_create gives a handle the caller destroys with
 * shoal_tasks_destroy, after every thread has stopped using it and before
 * shoal_runtime_destroy. A task's arg stays the caller's: the pool only
 * passes the pointer on. Type ids: a task pool's workers take type
 * SHOAL_TASK_MSG only. ABI 1.6.
 */
#ifndef SHOAL_TASKS_H
#define SHOAL_TASKS_H

#include "shoal/ctx.h"
#include "shoal/runtime.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shoal_tasks_s shoal_tasks_t;           /* a task pool */
typedef struct shoal_task_group_s shoal_task_group_t; /* tasks waited for together */

/* A task: runs on a dispatcher thread; returns 0 or an error code. */
typedef int (*shoal_task_fn)(shoal_ctx_t *ctx, void *arg);

/* Called once for a task that panicked, on its worker's thread as the
 * worker ends: arg is the task's, why the panic's text (valid during the
 * call), user the one given in the options. It runs after the task's
 * group has heard SHOAL_EPANIC, so it may run after
 * shoal_tasks_submit_wait or shoal_task_group_wait has already returned
 * it for that task. It must not block. */
typedef void (*shoal_task_panic_fn)(void *arg, const char *why, void *user);

/* The message type a task travels as (in the range applications use). */
#define SHOAL_TASK_MSG 0x7A5C0001u

/* What a task pool is. Fill with shoal_tasks_opts_init, then set fields.
 * New fields are only appended (the _sized functions below). */
typedef struct shoal_tasks_opts_s {
    const char *name;  /* the pool's name in logs and inspect; NULL = "tasks" */
    uint32_t size;     /* workers at start; default 4 */
    uint32_t min_size; /* tune and idle expiry stay within [min_size, max_size]; default 1 */
    uint32_t max_size; /* default max(size, 1024) */
    uint32_t queue;    /* tasks waiting for a worker, at most; default 1024 */
    /* ants' Nonblocking: shoal_tasks_submit never waits for room, it
     * refuses a task at once with SHOAL_EBUSY (as shoal_tasks_try_submit). */
    int nonblocking;
    /* ants' MaxBlockingTasks: submitters waiting for room at once, at most;
     * one more gets SHOAL_EOVERLOAD at once. 0: no bound. */
    uint32_t max_waiting;
    /* ants' ExpiryDuration, pond's IdleTimeout: a worker idle this long
     * ends, down to min_size, and a task that finds no idle worker while
     * fewer than max_size run gets a new one (lazy grow): with it, the pool
     * also takes a task for each worker it may still start (max_size, not
     * only the size now), which waits while that worker starts. 0: never. */
    uint64_t idle_timeout_ms;
    shoal_task_panic_fn panic_hook; /* NULL: panics are only logged (the runtime logs each) */
    void *panic_user;
} shoal_tasks_opts_t;

/* Fills opts with the defaults above. Any thread. */
SHOAL_API void shoal_tasks_opts_init_sized(shoal_tasks_opts_t *opts, size_t size);
#define shoal_tasks_opts_init(opts) shoal_tasks_opts_init_sized((opts), sizeof(shoal_tasks_opts_t))

/* Creates a task pool on rt and starts its workers; *tasks gets the handle,
 * owned by the caller (shoal_tasks_destroy). opts may be NULL (defaults);
 * it is copied (name included). `size` is sizeof the caller's opts (the
 * macro passes it): fields past it take their defaults. Any thread (on a
 * dispatcher thread it does not wait for the workers to start). SHOAL_OK;
 * SHOAL_EINVAL for bad options (as shoal_runtime_spawn_pool checks a pool
 * spec); SHOAL_ENOMEM; SHOAL_ELIMIT; SHOAL_ESTOPPED. */
SHOAL_API int shoal_tasks_create_sized(shoal_runtime_t *rt, const shoal_tasks_opts_t *opts,
                                       size_t size, shoal_tasks_t **tasks);
#define shoal_tasks_create(rt, opts, tasks)                                                        \
    shoal_tasks_create_sized((rt), (opts), sizeof(shoal_tasks_opts_t), (tasks))

/* Submits fn(ctx, arg). When the pool is full, waits for room until
 * timeout_ms has passed (UINT64_MAX: no limit) -- except in a nonblocking
 * pool, and on a dispatcher thread (inside a task or any actor, of this
 * runtime or another), where it never blocks: there it is
 * shoal_tasks_try_submit. Any thread. SHOAL_OK
 * (the task will run once); SHOAL_ETIMEDOUT; SHOAL_EBUSY (nonblocking, or a
 * dispatcher thread, and full); SHOAL_EOVERLOAD (max_waiting submitters wait
 * already); SHOAL_ESHUTDOWN (released); SHOAL_EINVAL (fn NULL);
 * SHOAL_ENOMEM; SHOAL_ELIMIT (full, and the runtime at max_actors has no
 * actor slot for this thread's wait: retry once actors have ended). Nothing
 * of a refused task runs. */
SHOAL_API int shoal_tasks_submit(shoal_tasks_t *tasks, shoal_task_fn fn, void *arg,
                                 uint64_t timeout_ms);

/* Submits fn(ctx, arg) if there is room now, never waiting. Any thread.
 * SHOAL_OK; SHOAL_EBUSY (full); SHOAL_ESHUTDOWN; SHOAL_EINVAL; SHOAL_ENOMEM. */
SHOAL_API int shoal_tasks_try_submit(shoal_tasks_t *tasks, shoal_task_fn fn, void *arg);

/* tunny's Process: submits fn(ctx, arg) as shoal_tasks_submit does and
 * waits until it has run; the wait for room and the wait for the result
 * share one deadline, timeout_ms (UINT64_MAX: no limit). SHOAL_OK with
 * *result = what fn returned, or SHOAL_EPANIC if it panicked: fn ran.
 * Otherwise *result is untouched: the submit's error (above, the
 * nonblocking pool's SHOAL_EBUSY and SHOAL_ELIMIT included; waiting for
 * the result takes no actor slot), except that a pool still full at the
 * deadline is SHOAL_EBUSY here, not SHOAL_ETIMEDOUT -- fn never runs, and
 * arg is the caller's again; SHOAL_ETIMEDOUT only when fn was submitted
 * and has not finished by the deadline: it still runs later (arg must
 * stay valid until it has) and its result is lost; or SHOAL_ESHUTDOWN
 * when fn never ran: the task was queued when the pool's PID was stopped
 * (shoal_tasks_pid), or the runtime stopped. Not on a dispatcher thread (SHOAL_EINVAL): a task must
 * not block its worker. result may be NULL. */
SHOAL_API int shoal_tasks_submit_wait(shoal_tasks_t *tasks, shoal_task_fn fn, void *arg,
                                      uint64_t timeout_ms, int *result);

/* tune: the pool's size from now on, clamped to [min_size, max_size]
 * (ants' Tune). Grows at once; shrinking lets busy workers finish their
 * task first. Any thread. Returns the new size (>= 0) or a negative
 * SHOAL_E*: SHOAL_ESHUTDOWN once released, SHOAL_ETIMEDOUT if the pool's
 * actor has not answered within 30 s (every dispatcher thread stuck),
 * SHOAL_ELIMIT if the runtime is at max_actors (no actor slot for this
 * thread's wait for the answer: the size is unchanged; retry once actors
 * have ended). From a dispatcher thread it does not wait: the size is asked
 * for and the clamped value returned. */
SHOAL_API int shoal_tasks_tune(shoal_tasks_t *tasks, uint32_t size);

/* Counters (pond's names), read without asking the pool's actor: a recent
 * picture, exact once tasks stop. Any thread; once the pool has ended --
 * released, or its PID stopped -- it has no worker, so cap and free are 0,
 * and running counts the tasks still finishing after the stop (0 after a
 * release): submitted = completed + dropped + running from then on.
 *   running    workers running a task (or taking the next);
 *   cap        workers the pool has now: the size tune set, as idle
 *              expiry and lazy grow have moved it since;
 *   free       cap - running;
 *   waiting    submitters waiting for room now;
 *   queued     tasks submitted and not taken by a worker yet;
 *   submitted  tasks accepted since the start;
 *   completed  tasks that have run: returned (whatever they returned) or
 *              panicked;
 *   panicked   of those, the ones that panicked;
 *   dropped    tasks accepted that never ran: queued when the pool's PID
 *              was stopped or the runtime stopped (ABI 1.12).
 * A NULL handle reads as 0 in each. */
SHOAL_API uint32_t shoal_tasks_running(shoal_tasks_t *tasks);
SHOAL_API uint32_t shoal_tasks_cap(shoal_tasks_t *tasks);
SHOAL_API uint32_t shoal_tasks_free(shoal_tasks_t *tasks);
SHOAL_API uint32_t shoal_tasks_waiting(shoal_tasks_t *tasks);
SHOAL_API uint64_t shoal_tasks_queued(shoal_tasks_t *tasks);
SHOAL_API uint64_t shoal_tasks_submitted(shoal_tasks_t *tasks);
SHOAL_API uint64_t shoal_tasks_completed(shoal_tasks_t *tasks);
SHOAL_API uint64_t shoal_tasks_panicked(shoal_tasks_t *tasks);
SHOAL_API uint64_t shoal_tasks_dropped(shoal_tasks_t *tasks);

/* The pool's PID, for what shoal/pool.h offers beyond this header
 * (shoal_pool_stats, shoal_runtime_inspect, shoal_runtime_register). Its
 * workers and buffer are the task pool's: send it nothing but through the
 * functions here. Stopping it (shoal_runtime_stop_actor) rather than
 * releasing the pool ends it at once: the running tasks finish, and the
 * queued ones are dropped as the pool's actor ends (counted in
 * shoal_tasks_dropped) -- a worker that finishes a task between the stop
 * and that end may still take queued ones, which then run and count as
 * completed -- their groups hear SHOAL_ESHUTDOWN for each
 * dropped one (as an error of theirs), and a submit_wait whose task it was
 * returns SHOAL_ESHUTDOWN itself; later submits are refused. Either way
 * each task accepted is run once or counted dropped. Any thread. */
SHOAL_API shoal_pid_t shoal_tasks_pid(const shoal_tasks_t *tasks);

/* ants' Release: the pool takes no new task from now on (submits get
 * SHOAL_ESHUTDOWN), and every task already submitted -- queued or
 * running -- still runs; waits until all have, and the workers have ended.
 * A submit that was already waiting for room gets SHOAL_ESHUTDOWN at once.
 * release_timeout waits at most timeout_ms (ants' ReleaseTimeout): then
 * SHOAL_ETIMEDOUT, and the pool goes on finishing its tasks (call again to
 * wait more). Calling either again after SHOAL_OK returns SHOAL_OK at once.
 * With the runtime at max_actors (this pool's workers among them), there is
 * no actor slot for this thread's wait: the wait then polls the pool's
 * record every millisecond instead -- it is never SHOAL_ELIMIT. Does not
 * free the handle. Not on a dispatcher thread (SHOAL_EINVAL). */
SHOAL_API int shoal_tasks_release(shoal_tasks_t *tasks);
SHOAL_API int shoal_tasks_release_timeout(shoal_tasks_t *tasks, uint64_t timeout_ms);

/* Frees the handle: first releases the pool (shoal_tasks_release: waits for
 * every task submitted, without a limit) if that has not completed. Call
 * once, after every other thread has stopped using tasks (its groups'
 * submits included), before shoal_runtime_destroy. SHOAL_OK (NULL is
 * ignored); or, with the handle still valid and nothing freed, what the
 * release returned (SHOAL_EINVAL on a dispatcher thread). Groups still held are the caller's to
 * free (shoal_task_group_free): every task of theirs has finished, so a
 * wait on one returns at once; submitting to one is the caller's error
 * (it names the freed handle). */
SHOAL_API int shoal_tasks_destroy(shoal_tasks_t *tasks);

/* ---- groups (pond's Group) --------------------------------------------------
 * Submit many tasks, wait for all of them, get the first error: when one
 * task fails (returns non-zero, or panics: SHOAL_EPANIC), the others still
 * run. A group belongs to one task pool and is used from threads that are
 * not dispatcher workers (group_submit also from one: then it never
 * waits). It may outlive its pool's handle: after shoal_tasks_destroy it
 * may still be waited on (until shoal_runtime_destroy) and freed, never
 * submitted to. */

/* Creates an empty group of tasks; *group is the caller's
 * (shoal_task_group_free). SHOAL_OK, SHOAL_EINVAL, SHOAL_ENOMEM. */
SHOAL_API int shoal_task_group_create(shoal_tasks_t *tasks, shoal_task_group_t **group);

/* Submits fn(ctx, arg) as one of the group's tasks, as shoal_tasks_submit
 * does (its errors, SHOAL_ELIMIT included; a refused task is no member of
 * the group). Any thread, concurrently with other submits and with a wait;
 * not after its pool's handle is destroyed. */
SHOAL_API int shoal_task_group_submit(shoal_task_group_t *group, shoal_task_fn fn, void *arg,
                                      uint64_t timeout_ms);

/* Waits until every task submitted to the group so far has run, at most
 * timeout_ms (UINT64_MAX: no limit). SHOAL_OK when they have: then
 * *first_error (may be NULL) is the first error in the order tasks
 * finished -- a task's non-zero return, or SHOAL_EPANIC -- or 0 when none
 * failed; a task the pool dropped unrun (its PID stopped) counts as
 * SHOAL_ESHUTDOWN. SHOAL_ETIMEDOUT when some have not (they still run). It
 * takes no actor slot: never SHOAL_ELIMIT. The group may be submitted to
 * and waited on again; the first error stays. Not on a dispatcher thread
 * (SHOAL_EINVAL). */
SHOAL_API int shoal_task_group_wait(shoal_task_group_t *group, uint64_t timeout_ms,
                                    int *first_error);

/* Gives the group up: its memory goes once its last task has run (a task
 * never touches a freed group). Any thread; NULL is ignored. */
SHOAL_API void shoal_task_group_free(shoal_task_group_t *group);

#ifdef __cplusplus
}
#endif
#endif
