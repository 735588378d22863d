/* group.c - task groups (pond's Group) and submit_wait (tunny's Process),
 * which is a group of one task.
 *
 * A group counts its tasks that are submitted and not finished (pending)
 * and keeps the first error and how many were dropped unrun, all under its
 * mutex; the worker that finishes a task (tasks.c: worker_message, or
 * worker_terminate for one that panicked) calls shoal__task_group_done, a
 * pool that drops one unrun (tasks.c: task_dropped) calls
 * shoal__task_group_dropped, and either wakes the waiters when pending
 * reaches 0. The group is freed by whichever comes last: its owner's
 * shoal_task_group_free, or the done of its last task -- both decide under
 * the mutex, so exactly one of them frees it, after unlocking.
 * Waiting uses a condition variable on CLOCK_MONOTONIC: a waiter sleeps
 * until woken or its deadline, never polling.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "tasks/tasks.h"

#include "sched/futex.h"

struct shoal_task_group_s {
    /* set at creation, never changed: its pool, which only a submit reads
     * -- a group may be waited on and freed after the handle is destroyed
     * (tasks.h: LIFETIME) */
    shoal_tasks_t *t;
    pthread_mutex_t lock;
    pthread_cond_t done; /* pending reached 0 */
    /* under lock */
    uint64_t pending; /* tasks submitted (or being submitted) and not finished */
    uint64_t dropped; /* tasks the pool dropped unrun (tasks.c: task_dropped) */
    int first;        /* the first error a task finished with, or 0 */
    bool held;        /* the owner has not freed it */
};

/* How a task of a group settled: it ran (returned or panicked), the pool
 * dropped it unrun (it finished with SHOAL_ESHUTDOWN), or its submit was
 * refused (it never was a member). */
enum { RAN, DROPPED, REFUSED };

static void group_destroy(shoal_task_group_t *g)
{
    pthread_cond_destroy(&g->done);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

SHOAL_API int shoal_task_group_create(shoal_tasks_t *tasks, shoal_task_group_t **group)
{
    if (tasks == NULL || group == NULL)
        return SHOAL_EINVAL;
    *group = NULL;
    shoal_task_group_t *g = calloc(1, sizeof *g);
    pthread_condattr_t ca;
    bool ca_ok = false, lock_ok = false;
    if (g == NULL)
        goto fail;
    if (pthread_condattr_init(&ca) != 0)
        goto fail;
    ca_ok = true;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_mutex_init(&g->lock, NULL) != 0)
        goto fail;
    lock_ok = true;
    if (pthread_cond_init(&g->done, &ca) != 0)
        goto fail;
    pthread_condattr_destroy(&ca);
    g->t = tasks;
    g->held = true;
    *group = g;
    return SHOAL_OK;
fail:
    if (lock_ok)
        pthread_mutex_destroy(&g->lock);
    if (ca_ok)
        pthread_condattr_destroy(&ca);
    free(g);
    return SHOAL_ENOMEM;
}

/* One task fewer pending, settled `how` with rc; frees the group if it was
 * the last thing holding it. */
static void group_settle(shoal_task_group_t *g, int rc, int how)
{
    pthread_mutex_lock(&g->lock);
    if (how != REFUSED && rc != SHOAL_OK && g->first == SHOAL_OK)
        g->first = rc;
    g->dropped += how == DROPPED;
    if (--g->pending == 0)
        pthread_cond_broadcast(&g->done);
    bool gone = !g->held && g->pending == 0;
    pthread_mutex_unlock(&g->lock);
    if (gone)
        group_destroy(g);
}

void shoal__task_group_done(shoal_task_group_t *g, int rc) { group_settle(g, rc, RAN); }

void shoal__task_group_dropped(shoal_task_group_t *g) { group_settle(g, SHOAL_ESHUTDOWN, DROPPED); }

SHOAL_API int shoal_task_group_submit(shoal_task_group_t *group, shoal_task_fn fn, void *arg,
                                      uint64_t timeout_ms)
{
    if (group == NULL || fn == NULL)
        return SHOAL_EINVAL;
    /* Pending before the task can run: its done must find it counted. */
    pthread_mutex_lock(&group->lock);
    group->pending++;
    pthread_mutex_unlock(&group->lock);
    shoal__task_t task = {fn, arg, group};
    int rc = shoal__tasks_put(group->t, &task, timeout_ms, true);
    if (rc != SHOAL_OK)
        group_settle(group, rc, REFUSED); /* no member: nothing of it runs */
    return rc;
}

/* Waits until no task of g is pending or deadline (ns, CLOCK_MONOTONIC)
 * passes: true with *first and *dropped (each may be NULL) set, or false. */
static bool group_wait_until(shoal_task_group_t *g, uint64_t deadline, int *first,
                             uint64_t *dropped)
{
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    pthread_mutex_lock(&g->lock);
    while (g->pending != 0) {
        int r = deadline == UINT64_MAX ? pthread_cond_wait(&g->done, &g->lock)
                                       : pthread_cond_timedwait(&g->done, &g->lock, &ts);
        if (r != 0 && r != EINTR)
            break; /* ETIMEDOUT */
    }
    bool all = g->pending == 0;
    if (all && first != NULL)
        *first = g->first;
    if (all && dropped != NULL)
        *dropped = g->dropped;
    pthread_mutex_unlock(&g->lock);
    return all;
}

SHOAL_API int shoal_task_group_wait(shoal_task_group_t *group, uint64_t timeout_ms,
                                    int *first_error)
{
    if (group == NULL || shoal__tasks_on_dispatcher())
        return SHOAL_EINVAL;
    return group_wait_until(group, shoal__deadline_ns(shoal__now_ns(), timeout_ms), first_error,
                            NULL)
               ? SHOAL_OK
               : SHOAL_ETIMEDOUT;
}

SHOAL_API void shoal_task_group_free(shoal_task_group_t *group)
{
    if (group == NULL)
        return;
    pthread_mutex_lock(&group->lock);
    group->held = false;
    bool gone = group->pending == 0;
    pthread_mutex_unlock(&group->lock);
    if (gone)
        group_destroy(group);
}

SHOAL_API int shoal_tasks_submit_wait(shoal_tasks_t *tasks, shoal_task_fn fn, void *arg,
                                      uint64_t timeout_ms, int *result)
{
    if (tasks == NULL || fn == NULL || shoal__tasks_on_dispatcher())
        return SHOAL_EINVAL;
    uint64_t deadline = shoal__deadline_ns(shoal__now_ns(), timeout_ms);
    shoal_task_group_t *g;
    int rc = shoal_task_group_create(tasks, &g);
    if (rc != SHOAL_OK)
        return rc;
    rc = shoal_task_group_submit(g, fn, arg, timeout_ms);
    if (rc == SHOAL_ETIMEDOUT)
        rc = SHOAL_EBUSY; /* no room by the deadline: fn never runs (tasks.h) */
    int first = SHOAL_OK;
    uint64_t dropped = 0;
    /* The wait for room and the wait for the result share the deadline. */
    if (rc == SHOAL_OK && !group_wait_until(g, deadline, &first, &dropped))
        rc = SHOAL_ETIMEDOUT; /* it runs later; the group goes with it */
    else if (rc == SHOAL_OK && dropped != 0)
        rc = SHOAL_ESHUTDOWN; /* fn never ran (the pool was stopped): no result */
    if (rc == SHOAL_OK && result != NULL)
        *result = first; /* the task's return, 0 included, or SHOAL_EPANIC */
    shoal_task_group_free(g);
    return rc;
}
