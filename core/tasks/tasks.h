/* tasks.h - task pools (shoal/tasks.h): what tasks.c and group.c share.
 *
 * A task pool is a handle on one pull pool whose workers run the behaviour
 * in tasks.c. A task is the message SHOAL_TASK_MSG carrying a shoal__task_t
 * by value (24 bytes: inside the envelope, with room for the pool's latency
 * stamp). This layer sits above core/pool: it sends, calls and spawns
 * through the public SDK, and reads the pool's record (pool/pool.h) only
 * for the counters, which it peeks at without asking the pool's actor.
 *
 * WHO WRITES WHAT
 *   - The handle's settings (rt, pid, rec, nonblocking, hook, user, name)
 *     are written by shoal_tasks_create before the pool is spawned (its
 *     workers get the handle as their args: the spawn publishes them) and
 *     never again.
 *   - closed: set by release [release store]; a submitter's acquire load
 *     sees it and refuses. A submit that read it 0 and races the release is
 *     refused by the pool itself once it drains (SHOAL_ENOPROC, reported as
 *     SHOAL_ESHUTDOWN) or accepted before the drain and run by it: every
 *     task is run or refused with an error its submitter saw. A tune
 *     racing the release is refused the same way (a draining pool refuses
 *     a resize with SHOAL_ENOPROC).
 *   - released: set [release] once the drain has answered (every worker has
 *     ended: no worker reads the handle any more); read [acquire] by
 *     release and destroy.
 *   - A group's fields are under its mutex (group.c).
 *
 * LIFETIME
 *   The handle lives until shoal_tasks_destroy, which first waits for the
 *   pool to end: the workers read it (their args) only while they live.
 *   It holds one reference on the pool's record (shoal__pool_find), so
 *   the counters can be read before, during and after the drain; destroy
 *   drops it. A group lives until its owner has freed it and its last task
 *   has finished, whichever is later. It may outlive the handle (its
 *   pool's tasks have all finished by destroy): its wait and free read
 *   only the group; its submit reads the handle.
 */
#ifndef SHOAL_TASKS_TASKS_H
#define SHOAL_TASKS_TASKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shoal/tasks.h"

struct shoal_pool_s;

/* One task, as it travels (by value, inside the envelope). */
typedef struct shoal__task_s {
    shoal_task_fn fn;
    void *arg;
    shoal_task_group_t *group; /* NULL: a plain submit */
} shoal__task_t;
_Static_assert(sizeof(shoal__task_t) <= 24, "a task leaves room for the latency stamp");

struct shoal_tasks_s {
    shoal_runtime_t *rt;
    shoal_pid_t pid;          /* the pull pool */
    struct shoal_pool_s *rec; /* its record, with our reference (counters) */
    bool nonblocking;
    shoal_task_panic_fn hook;
    void *user;
    _Atomic uint32_t closed;   /* release has begun: no new task */
    _Atomic uint32_t released; /* the pool has ended: every task ran */
    char name[64];
};

/* Puts task into t's pool: with `wait`, as shoal_tasks_submit (waiting for
 * room unless nonblocking or on a dispatcher thread), else as try_submit.
 * SHOAL_OK or the refusal, in shoal/tasks.h's terms. */
int shoal__tasks_put(shoal_tasks_t *t, const shoal__task_t *task, uint64_t timeout_ms, bool wait);

/* Whether the calling thread is a dispatcher thread (a task, an actor) of
 * any runtime, this pool's or another's: it must never block -- it holds
 * one of its runtime's threads either way. */
bool shoal__tasks_on_dispatcher(void);

/* A group's task has finished with rc (its return, or SHOAL_EPANIC); or
 * the pool dropped it unrun (it finishes with SHOAL_ESHUTDOWN, and
 * submit_wait returns that). Any thread (the worker's, or whichever drops
 * it). The group may be freed by either call. */
void shoal__task_group_done(shoal_task_group_t *g, int rc);
void shoal__task_group_dropped(shoal_task_group_t *g);

#endif
