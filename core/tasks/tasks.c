/* tasks.c - task pools (shoal/tasks.h): the handle over one pull pool, its
 * workers' behaviour, submitting, tuning, the counters and release. Groups
 * and submit_wait are in group.c. The shared state and who writes it:
 * tasks.h.
 */
#include "tasks/tasks.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actor/call.h"
#include "actor/ctx.h"
#include "pool/pool.h"
#include "runtime/tcache.h"
#include "sched/futex.h"

/* How long tune waits for the pool's answer: it is a priority call that the
 * pool's actor answers in its next turn, so only a runtime whose every
 * thread is stuck makes it wait at all. */
#define COMMAND_TIMEOUT_MS 30000u

/* A restart budget panicking tasks can never exhaust (shoal/tasks.h): 1000
 * restarts within 1 ms would take one a microsecond, and a restart (the
 * worker's end, its EXIT handled, a spawn) takes longer than that. */
#define RESTART_MAX 1000u
#define RESTART_WITHIN_MS 1u

/* What a caller built against ABI 1.6 passes: every field up to panic_user
 * (fields appended later take their defaults for it). */
#define OPTS_SIZE_1_6 (offsetof(shoal_tasks_opts_t, panic_user) + sizeof(void *))

/* ---- time ------------------------------------------------------------------- */

bool shoal__tasks_on_dispatcher(void) { return shoal__tcache_dispatching(); }

/* ---- the workers ------------------------------------------------------------- */

typedef struct worker_s {
    const shoal_tasks_t *t;
    shoal__task_t cur; /* the task being run; fn is NULL between tasks */
} worker_t;

static int worker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    worker_t *w = state;
    w->t = args;
    return SHOAL_OK;
}

/* A task's error goes to its group; the worker goes on whatever fn
 * returned (a non-zero return from here would end it). */
static int worker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    worker_t *w = state;
    if (msg->kind != SHOAL_MSG_CAST || msg->type != SHOAL_TASK_MSG || msg->size != sizeof w->cur)
        return SHOAL_OK;
    memcpy(&w->cur, msg->data, sizeof w->cur);
    int rc = w->cur.fn(ctx, w->cur.arg);
    shoal_task_group_t *g = w->cur.group;
    w->cur.fn = NULL;
    if (g != NULL)
        shoal__task_group_done(g, rc);
    return SHOAL_OK;
}

/* What the panic said, without the runtime's "panic: " prefix. The text is
 * the actor layer's (actor/ctx.h): shoal_panic keeps it in the ctx for the
 * rest of the worker's turn, terminate included. */
static const char *panic_text(shoal_ctx_t *ctx, int reason)
{
    const char *s = ctx->panic_text;
    if (reason != SHOAL_EPANIC || s[0] == '\0')
        return shoal_strerror(reason);
    return strncmp(s, "panic: ", 7) == 0 ? s + 7 : s;
}

/* A worker ends. With a task in hand (cur.fn set), that task panicked: it
 * unwound past worker_message. Its group hears first, then the hook: a
 * hook that unwinds too (a shoal_panic with the task's ctx) ends this
 * terminate, and must not leave the group waiting for a task that has
 * finished. The pool starts a replacement. */
static void worker_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    worker_t *w = state;
    if (w->cur.fn == NULL)
        return;
    shoal__task_t task = w->cur;
    w->cur.fn = NULL;
    int rc = reason != SHOAL_OK ? reason : SHOAL_EPANIC;
    if (task.group != NULL)
        shoal__task_group_done(task.group, rc); /* it may be freed: task.group is not read again */
    if (w->t->hook != NULL)
        w->t->hook(task.arg, panic_text(ctx, rc), w->t->user);
}

/* A task the pool dropped unrun (pull.h: on_drop): its pool's PID was
 * stopped with tasks in its buffer, or the runtime stops. Its group, if
 * any, hears SHOAL_ESHUTDOWN, and that it never ran (submit_wait returns
 * that rather than a result): a waiter learns the task will never run
 * rather than waiting to its deadline, and a freed group is not kept by
 * a task that is gone. Only the payload is read: the pool's handle may be
 * gone by now. */
static void task_dropped(uint32_t type, const void *data, size_t size)
{
    shoal__task_t task;
    if (type != SHOAL_TASK_MSG || size != sizeof task)
        return;
    memcpy(&task, data, sizeof task);
    if (task.group != NULL)
        shoal__task_group_dropped(task.group);
}

static const shoal_behaviour_t worker_behaviour = {
    .name = "task",
    .state_size = sizeof(worker_t),
    .init = worker_init,
    .handle_message = worker_message,
    .terminate = worker_terminate,
};

/* ---- creating ------------------------------------------------------------------ */

static void opts_defaults(shoal_tasks_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->size = 4;
    o->min_size = 1;
    o->queue = 1024;
}

SHOAL_API void shoal_tasks_opts_init_sized(shoal_tasks_opts_t *opts, size_t size)
{
    shoal_tasks_opts_t d;
    opts_defaults(&d);
    if (opts != NULL)
        memcpy(opts, &d, size < sizeof d ? size : sizeof d);
}

/* The pull pool a task pool is. */
static void pool_spec(shoal_tasks_t *t, const shoal_tasks_opts_t *o, shoal_pool_spec_t *s)
{
    shoal_pool_spec_init(s);
    s->name = t->name;
    s->worker = &worker_behaviour;
    s->worker_args = t;
    s->kind = SHOAL_POOL_KIND_PULL;
    s->prefetch = 1; /* a free worker takes one task at a time */
    s->buffer = o->queue;
    s->size = o->size;
    s->min_size = o->min_size;
    s->max_size = o->max_size;
    s->restart = (shoal_pool_restart_t){RESTART_MAX, RESTART_WITHIN_MS, 100};
    s->idle_timeout_ms = o->idle_timeout_ms;
    s->max_waiting = o->max_waiting;
}

SHOAL_API int shoal_tasks_create_sized(shoal_runtime_t *rt, const shoal_tasks_opts_t *opts,
                                       size_t size, shoal_tasks_t **tasks)
{
    if (rt == NULL || tasks == NULL || (opts != NULL && size < OPTS_SIZE_1_6))
        return SHOAL_EINVAL;
    *tasks = NULL;
    shoal_tasks_opts_t o;
    opts_defaults(&o);
    if (opts != NULL)
        memcpy(&o, opts, size < sizeof o ? size : sizeof o); /* a newer caller's extra fields */
    if (o.name != NULL && strlen(o.name) >= sizeof((shoal_tasks_t *)0)->name)
        return SHOAL_EINVAL;
    shoal_tasks_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return SHOAL_ENOMEM;
    snprintf(t->name, sizeof t->name, "%s", o.name != NULL ? o.name : "tasks");
    t->rt = rt;
    t->nonblocking = o.nonblocking != 0;
    t->hook = o.panic_hook;
    t->user = o.panic_user;
    shoal_pool_spec_t s;
    pool_spec(t, &o, &s);
    int rc = shoal_runtime_spawn_pool(rt, &s, &t->pid);
    if (rc != SHOAL_OK)
        goto fail;
    if ((t->rec = shoal__pool_find(rt, t->pid)) == NULL) {
        rc = SHOAL_ESTOPPED; /* it ended at once: the runtime stops */
        shoal_runtime_stop_actor(rt, t->pid);
        goto fail;
    }
    shoal__pull_on_drop(t->rec, task_dropped); /* before any task is submitted */
    *tasks = t;
    return SHOAL_OK;
fail:
    free(t);
    return rc;
}

SHOAL_API shoal_pid_t shoal_tasks_pid(const shoal_tasks_t *tasks)
{
    return tasks != NULL ? tasks->pid : SHOAL_PID_NONE;
}

/* ---- submitting ---------------------------------------------------------------- */

/* The pool's refusals in this header's terms: a pool that drains or has
 * ended answers SHOAL_ENOPROC, which for a task pool means released. */
static int refusal(int rc) { return rc == SHOAL_ENOPROC ? SHOAL_ESHUTDOWN : rc; }

int shoal__tasks_put(shoal_tasks_t *t, const shoal__task_t *task, uint64_t timeout_ms, bool wait)
{
    /* acquire: pairs with release's store (tasks.h: closed). */
    if (atomic_load_explicit(&t->closed, memory_order_acquire))
        return SHOAL_ESHUTDOWN;
    /* A plain send first (what send_wait tries first too): a pool with room
     * takes the task without the dispatcher-thread check. The handle holds
     * a reference on the pool's record: straight into its buffer. */
    shoal_tcache_t *tc = shoal__tcache_get(t->rt);
    int rc = shoal__pull_send(t->rt, tc, t->rec, SHOAL_TASK_MSG, task, sizeof *task);
    /* Refused (and counted): the wait goes on from that refusal, not from
     * a second attempt of its own, which counted the same refusal twice. */
    if (rc == SHOAL_EBUSY && wait && tc != NULL && !t->nonblocking && !shoal__tasks_on_dispatcher())
        rc = shoal__send_wait_after(t->rt, tc, t->pid, SHOAL_TASK_MSG, task, sizeof *task,
                                    shoal__deadline_ns(shoal__now_ns(), timeout_ms), rc);
    return refusal(rc);
}

SHOAL_API int shoal_tasks_submit(shoal_tasks_t *tasks, shoal_task_fn fn, void *arg,
                                 uint64_t timeout_ms)
{
    if (tasks == NULL || fn == NULL)
        return SHOAL_EINVAL;
    shoal__task_t task = {fn, arg, NULL};
    return shoal__tasks_put(tasks, &task, timeout_ms, true);
}

SHOAL_API int shoal_tasks_try_submit(shoal_tasks_t *tasks, shoal_task_fn fn, void *arg)
{
    if (tasks == NULL || fn == NULL)
        return SHOAL_EINVAL;
    shoal__task_t task = {fn, arg, NULL};
    return shoal__tasks_put(tasks, &task, 0, false);
}

/* ---- tuning and counters --------------------------------------------------------- */

/* The counters below read this; a NULL handle reads as all 0. */
static void peek(shoal_tasks_t *t, shoal_pool_stats_t *st)
{
    if (t == NULL) {
        memset(st, 0, sizeof *st);
        return;
    }
    shoal__pool_peek(t->rec, st);
}

SHOAL_API int shoal_tasks_tune(shoal_tasks_t *tasks, uint32_t size)
{
    if (tasks == NULL)
        return SHOAL_EINVAL;
    /* acquire: as shoal__tasks_put's (tasks.h: closed). */
    if (atomic_load_explicit(&tasks->closed, memory_order_acquire))
        return SHOAL_ESHUTDOWN;
    /* A release that began after the check above drains the pool: a
     * draining pool refuses the resize (SHOAL_ENOPROC: released). */
    if (!shoal__tasks_on_dispatcher())
        return refusal(shoal_pool_set_size(tasks->rt, tasks->pid, size, COMMAND_TIMEOUT_MS));
    /* A dispatcher thread never waits: the command goes as a priority
     * send, and the answer is what the pool will clamp it to. */
    int rc =
        shoal_runtime_send_priority(tasks->rt, tasks->pid, SHOAL_POOL_SET_SIZE, &size, sizeof size);
    if (rc != SHOAL_OK)
        return refusal(rc);
    shoal_pool_stats_t st;
    peek(tasks, &st);
    uint32_t n = size < st.min_size ? st.min_size : size > st.max_size ? st.max_size : size;
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

SHOAL_API uint32_t shoal_tasks_running(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    if (tasks == NULL || !shoal__pool_is_ended(tasks->rec))
        return st.running;
    /* No worker any more: what was taken and is not settled yet is a
     * task still finishing after the stop (tasks.h). */
    uint64_t left = st.queue_depth > st.buffer_depth ? st.queue_depth - st.buffer_depth : 0;
    return left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
}

SHOAL_API uint32_t shoal_tasks_cap(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.target_size;
}

SHOAL_API uint32_t shoal_tasks_free(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.target_size > st.running ? st.target_size - st.running : 0;
}

SHOAL_API uint32_t shoal_tasks_waiting(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.waiting;
}

SHOAL_API uint64_t shoal_tasks_queued(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.buffer_depth;
}

SHOAL_API uint64_t shoal_tasks_submitted(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.messages_forwarded;
}

SHOAL_API uint64_t shoal_tasks_completed(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.messages_handled + st.messages_failed;
}

SHOAL_API uint64_t shoal_tasks_panicked(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.messages_failed;
}

SHOAL_API uint64_t shoal_tasks_dropped(shoal_tasks_t *tasks)
{
    shoal_pool_stats_t st;
    peek(tasks, &st);
    return st.messages_dropped;
}

/* ---- release ------------------------------------------------------------------------ */

/* The pool had ended before our drain asked (an earlier release timed out,
 * or someone stopped the pool's PID): its last workers may still be ending.
 * Or the drain was cast (no actor was left to wait as). Waits until none
 * holds the record -- each drops its reference after its terminate, the
 * last thing it does -- polling every millisecond: only these rare paths
 * poll, for as long as a worker takes to end, or the drain's tasks. */
static int quiet(shoal_tasks_t *t, uint64_t deadline)
{
    while (!shoal__pool_is_quiet(t->rec)) {
        if (shoal__now_ns() >= deadline)
            return SHOAL_ETIMEDOUT;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return SHOAL_OK;
}

SHOAL_API int shoal_tasks_release_timeout(shoal_tasks_t *tasks, uint64_t timeout_ms)
{
    if (tasks == NULL || shoal__tasks_on_dispatcher())
        return SHOAL_EINVAL;
    /* release: pairs with the submitters' acquire loads (tasks.h: closed). */
    atomic_store_explicit(&tasks->closed, 1, memory_order_release);
    /* acquire: pairs with the store below, by another releasing thread. */
    if (atomic_load_explicit(&tasks->released, memory_order_acquire))
        return SHOAL_OK;
    /* The drain takes no new task, lets the workers empty the buffer, and
     * answers once every worker has ended (terminate run: no worker reads
     * the handle any more). A pool that has ended already answers
     * SHOAL_ENOPROC: the drain (of an earlier, timed-out call) is done. One
     * that ends while our drain waits (its PID stopped) answers with its
     * end's reason (SHOAL_ESHUTDOWN): done as well. */
    uint64_t deadline = shoal__deadline_ns(shoal__now_ns(), timeout_ms);
    int rc = shoal_pool_drain(tasks->rt, tasks->pid, timeout_ms);
    if (rc == SHOAL_ELIMIT) {
        /* No actor to wait for the drain's answer as (every one of
         * runtime.max_actors taken -- this pool's workers may be most of
         * them, and they end only by this drain): the drain is cast
         * instead, and its end waited for (quiet). */
        rc = shoal_runtime_send_priority(tasks->rt, tasks->pid, SHOAL_POOL_DRAIN, NULL, 0);
        if (rc == SHOAL_OK || rc == SHOAL_ENOPROC)
            rc = quiet(tasks, deadline);
    } else if (rc == SHOAL_ENOPROC ||
               (rc != SHOAL_OK && rc != SHOAL_ETIMEDOUT && shoal__pool_is_ended(tasks->rec))) {
        rc = quiet(tasks, deadline);
    }
    /* release: pairs with the acquire load of released above, by a later
     * release (or destroy, through it) in another thread: the drain's answer
     * came after every worker's last read of the handle. */
    if (rc == SHOAL_OK)
        atomic_store_explicit(&tasks->released, 1, memory_order_release);
    return rc;
}

SHOAL_API int shoal_tasks_release(shoal_tasks_t *tasks)
{
    return shoal_tasks_release_timeout(tasks, UINT64_MAX);
}

SHOAL_API int shoal_tasks_destroy(shoal_tasks_t *tasks)
{
    if (tasks == NULL)
        return SHOAL_OK;
    int rc = shoal_tasks_release(tasks);
    if (rc != SHOAL_OK)
        return rc; /* workers may still read the handle: it stays */
    shoal__pool_unref(tasks->rt, tasks->rec);
    free(tasks);
    return SHOAL_OK;
}
