/* pool.c - a pool: spawning it (its spec checked and copied: spec.c), and
 * its own actor's behaviour, which answers management and priority
 * traffic. The pool's actor never sees ordinary messages: those are
 * forwarded on the senders' threads (forward.c). Its work is split by
 * concept: the worker FIFO, restarts,
 * resizing and draining (workers.c), messages handed back by workers that
 * ended (orphans.c), counters and inspection (stats.c). All of it runs in
 * the pool actor's turns, so the record's `owned by the pool actor` part
 * needs no synchronisation.
 */
#include "pool/pool.h"
#include "pool/swap.h"
#include "pool/elastic.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "pool/checkout.h"
#include "runtime/grow.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

static const shoal_behaviour_t pool_behaviour;
static int spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                 shoal_pool_t *member_of, const shoal_pool_spec_t *spec,
                 const shoal_pool_hold_t *hold, uint32_t depth, bool notify, bool wait,
                 const shoal_pool_opts_t *opts, shoal_pid_t *pid, shoal_pool_t **out);

/* ---- spawning ------------------------------------------------------------ */

int shoal__pool_spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                      shoal_pool_t *member_of, const shoal_pool_spec_t *spec,
                      const shoal_pool_hold_t *hold, uint32_t depth, bool notify, shoal_pid_t *pid)
{
    return spawn(rt, tc, parent, member_of, spec, hold, depth, notify, false, NULL, pid, NULL);
}

/* Spawns the pool; with `wait` (a root pool started by a thread), *out gets
 * the record with a second reference, for the waiter. */
static int spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                 shoal_pool_t *member_of, const shoal_pool_spec_t *spec,
                 const shoal_pool_hold_t *hold, uint32_t depth, bool notify, bool wait,
                 const shoal_pool_opts_t *opts, shoal_pid_t *pid, shoal_pool_t **out)
{
    const shoal_remote_launch_t *launch = opts != NULL ? opts->remote : NULL;
    int rc = SHOAL_OK;
    if (tc == NULL)
        rc = SHOAL_ENOMEM;
    else if (spec == NULL || pid == NULL ||
             (launch != NULL &&
              (spec->worker_pool != NULL || spec->kind != SHOAL_POOL_KIND_FORWARD)))
        rc = SHOAL_EINVAL; /* (a remote pool's nesting is the child's; it forwards) */
    else
        rc = shoal__pool_spec_check(spec, depth, launch != NULL);
    shoal_pool_t *p = NULL;
    if (rc == SHOAL_OK &&
        (p = shoal__pool_record_new(rt, shoal__pool_max_of(spec), opts ? opts->stripes : NULL,
                                    opts ? opts->nstripes : 0)) == NULL)
        rc = SHOAL_ENOMEM;
    if (rc != SHOAL_OK) {
        if (launch != NULL && launch->release != NULL)
            launch->release(launch->user); /* taken over, even when refused */
        return rc;
    }
    p->g.ops = spec->kind == SHOAL_POOL_KIND_CHECKOUT ? &shoal__checkout_ops : &shoal__forward_ops;
    p->g.exact = opts != NULL && opts->exact;
    p->count_sends = opts != NULL && opts->count_sends;
    /* (member_of: the parent's record, read in its actor's turn) */
    p->held = (opts != NULL && opts->held) ||
              (member_of != NULL && (member_of->held || member_of->staging));
    rc = shoal__pool_spec_copy(p, spec);
    uint32_t ring = spec->restart.max ? spec->restart.max : 1;
    if (rc == SHOAL_OK && (p->restart_at = calloc(ring, sizeof *p->restart_at)) == NULL)
        rc = SHOAL_ENOMEM;
    p->rt = rt;
    if (rc == SHOAL_OK && launch != NULL && (p->remote = shoal__remote_new(p, launch)) == NULL)
        rc = SHOAL_ENOMEM;
    else if (launch != NULL && p->remote == NULL && launch->release != NULL)
        launch->release(launch->user);
    if (rc != SHOAL_OK) {
        shoal__pool_record_retire(rt, p); /* never published: limbo frees it */
        return rc;
    }
    p->depth = depth;
    p->target = spec->size;
    atomic_store_explicit(&p->strategy, spec->strategy, memory_order_relaxed);
    if (spec->kind == SHOAL_POOL_KIND_CHECKOUT && (rc = shoal__checkout_new(p, spec)) != SHOAL_OK) {
        shoal__pool_record_retire(rt, p);
        return rc;
    }
    if (spec->kind == SHOAL_POOL_KIND_PULL && (rc = shoal__pull_new(p, spec)) != SHOAL_OK) {
        shoal__pool_record_retire(rt, p);
        return rc;
    }
    p->backoff_ms = spec->restart.backoff_ms;
    /* The record, not the actor, holds the reference on the parent pool:
     * this pool's workers count into the parent (forward.c) for as long as
     * the record lives, which may be after this pool's actor has ended. */
    p->g.parent = member_of != NULL ? &member_of->g : NULL;
    if (hold != NULL) {
        hold->acquire(hold->what); /* the record's (released when the actor ends) */
        p->hold = *hold;
    }
    const char *wname = spec->worker ? spec->worker->name : p->spec.worker_pool->name;
    snprintf(p->label, sizeof p->label, "%s/%s", p->name, wname ? wname : "?");
    /* One reference for the actor, one for the waiter. */
    atomic_store_explicit(&p->refs, wait ? 2 : 1, memory_order_relaxed);
    p->wait_start = wait;
    atomic_store_explicit(&p->starting, wait ? 1 : 0, memory_order_relaxed);
    shoal__pool_publish(p);

    shoal_spawn_t s = {
        .parent = parent,
        .beh = &pool_behaviour,
        .args = p,
        .limit = SHOAL_MAILBOX_UNBOUNDED,
        .kind = SHOAL_ACTOR_GROUP,
        .group = &p->g,
        .notify_start = notify,
    };
    rc = shoal__actor_spawn_as(rt, tc, &s, pid);
    if (rc != SHOAL_OK) {
        if (hold != NULL)
            hold->release(hold->what);
        shoal__pool_record_retire(rt, p); /* the caller keeps its reference on member_of */
        return rc;
    }
    if (out != NULL)
        *out = p;
    return SHOAL_OK;
}

int shoal__pool_start(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                      const shoal_pool_hold_t *hold, uint64_t timeout_ms, shoal_pid_t *pid,
                      char *why, size_t why_size)
{
    return shoal__pool_start_ex(rt, spec, hold, NULL, timeout_ms, pid, why, why_size);
}

int shoal__pool_start_ex(shoal_runtime_t *rt, const shoal_pool_spec_t *spec,
                         const shoal_pool_hold_t *hold, const shoal_pool_opts_t *opts,
                         uint64_t timeout_ms, shoal_pid_t *pid, char *why, size_t why_size)
{
    shoal_pool_t *p = NULL;
    if (why != NULL && why_size != 0)
        why[0] = '\0';
    int rc = spawn(rt, shoal__tcache_get(rt), SHOAL_PID_NONE, NULL, spec, hold, 0, false, true,
                   opts, pid, &p);
    if (rc != SHOAL_OK) {
        if (why != NULL && why_size != 0)
            snprintf(why, why_size, "%s", shoal_strerror(rc));
        return rc;
    }
    uint64_t end = timeout_ms ? shoal__deadline_ns(shoal__now_ns(), timeout_ms) : UINT64_MAX;
    bool stopped = false; /* by opts->interrupted */
    /* Until the deadline, asking interrupted every SHOAL_ASK_EVERY_MS. */
    bool asks = opts != NULL && opts->interrupted != NULL;
    uint64_t slice = asks ? (uint64_t)SHOAL_ASK_EVERY_MS * 1000000u : UINT64_MAX;
    /* acquire: pairs with start_done's release store of 0 (init_rc and
     * init_text are written before it). */
    while (atomic_load_explicit(&p->starting, memory_order_acquire) != 0) {
        uint64_t now = shoal__now_ns();
        if (now >= end)
            break;
        if (asks && opts->interrupted(opts->interrupted_arg)) {
            stopped = true;
            break;
        }
        uint64_t left = end - now > slice ? slice : end - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        shoal__futex_wait(&p->starting, 1, timeout_ms != 0 || asks ? &ts : NULL);
    }
    /* acquire: as the loop's. */
    if (atomic_load_explicit(&p->starting, memory_order_acquire) != 0) {
        /* Still starting: stop it (its workers go with it). */
        shoal_runtime_stop_actor(rt, *pid);
        rc = stopped ? SHOAL_ESHUTDOWN : SHOAL_ETIMEDOUT;
        if (why != NULL && stopped)
            snprintf(why, why_size, "interrupted while its workers started");
        else if (why != NULL)
            snprintf(why, why_size, "its workers did not start within %llu ms",
                     (unsigned long long)timeout_ms);
    } else if ((rc = atomic_load_explicit(&p->init_rc, memory_order_relaxed)) != SHOAL_OK &&
               why != NULL) {
        snprintf(why, why_size, "%s", p->init_text[0] ? p->init_text : shoal_strerror(rc));
    }
    shoal__pool_unref(rt, p);
    if (rc != SHOAL_OK)
        *pid = SHOAL_PID_NONE;
    return rc;
}

/* A root pool's start has ended (all first workers started, or one failed,
 * or the pool ended first): its waiter hears how. Once. */
static void start_done(shoal_pool_t *p, int rc, const char *why)
{
    if (!p->wait_start)
        return;
    p->wait_start = false;
    atomic_store_explicit(&p->init_rc, rc, memory_order_relaxed);
    snprintf(p->init_text, sizeof p->init_text, "%.255s", why ? why : "");
    /* release: pairs with the waiter's acquire load (shoal__pool_start). */
    atomic_store_explicit(&p->starting, 0, memory_order_release);
    shoal__futex_wake(&p->starting, INT_MAX);
}

/* Every first worker has started (rc 0), or one has not: whoever waits for
 * this pool hears it -- the thread that spawned a root pool, or the parent
 * pool that spawned this one as a worker. A failed start that someone
 * waited for ends the pool (its workers with it); one nobody waits for
 * (a nested pool restarted later) is left to the restart policy. */
static void start_finish(struct shoal_ctx_s *ctx, shoal_pool_t *p, int rc, const char *why)
{
    if (!p->start_pending)
        return;
    p->start_pending = false;
    bool waited = p->wait_start || (ctx->b->ext != NULL && ctx->b->ext->notify_start);
    start_done(p, rc, why);
    shoal__actor_started(ctx, rc, why);
    if (rc != SHOAL_OK && waited)
        shoal_exit(ctx, rc);
}

bool shoal__pool_start_fail(struct shoal_ctx_s *ctx, shoal_pool_t *p, int rc, const char *why)
{
    bool waited = p->wait_start || (ctx->b->ext != NULL && ctx->b->ext->notify_start);
    if (!p->start_pending)
        return false;
    start_finish(ctx, p, rc, why);
    return waited;
}

/* A worker's start notice (SHOAL_ENV_STARTED). */
static void on_started(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    char why[256];
    size_t n = msg->size < sizeof why - 1 ? msg->size : sizeof why - 1;
    if (shoal__pool_swap_on_started(ctx, p, msg->from, msg->status, msg->data, msg->size))
        return;
    if (!p->start_pending)
        return;
    if (msg->status == SHOAL_OK) {
        if (--p->start_awaiting == 0)
            start_finish(ctx, p, SHOAL_OK, NULL);
        return;
    }
    if (n != 0)
        memcpy(why, msg->data, n);
    why[n] = '\0';
    start_finish(ctx, p, msg->status, n != 0 ? why : shoal_strerror(msg->status));
}

/* ---- the behaviour ------------------------------------------------------- */

static int pool_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    shoal_pool_t *p = (shoal_pool_t *)(uintptr_t)args;
    *(shoal_pool_t **)state = p;
    int rc = SHOAL_OK;
    const shoal_behaviour_t *m = p->spec.manager;
    if (m != NULL && m->state_size != 0 && (p->manager_state = calloc(1, m->state_size)) == NULL)
        rc = SHOAL_ENOMEM;
    if (rc == SHOAL_OK && m != NULL && m->init != NULL)
        rc = m->init(ctx, p->manager_state, p->spec.manager_args);
    /* The first workers tell when they have started: the pool has started
     * when all have (on_started); a remote pool when its child says its
     * pool has (on_remote). */
    p->start_pending = true;
    if (rc == SHOAL_OK && p->remote != NULL) {
        shoal__remote_control(p->remote, p->target, p->spec.mailbox);
        if ((rc = shoal__remote_start(ctx, p->remote)) == SHOAL_OK)
            p->start_awaiting = 1;
    }
    if (rc == SHOAL_OK && p->co != NULL)
        rc = shoal__checkout_start(ctx, p);
    while (rc == SHOAL_OK && p->remote == NULL && p->co == NULL &&
           shoal__pool_live(p) < p->target) {
        shoal_pid_t pid;
        if ((rc = shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, true, &pid)) == SHOAL_OK) {
            shoal__pool_table_append(p, pid);
            p->start_awaiting++;
        }
    }
    if (rc == SHOAL_OK)
        rc = shoal__pull_source_start(ctx, p);
    char why[128];
    if (rc == SHOAL_OK && (rc = shoal__pool_elastic_start(ctx, p, why, sizeof why)) != SHOAL_OK)
        start_finish(ctx, p, rc, why); /* whoever waits hears why, not just rc */
    if (rc == SHOAL_OK && p->start_awaiting == 0)
        start_finish(ctx, p, SHOAL_OK, NULL);
    shoal__pool_publish(p);
    if (rc == SHOAL_OK && p->pull != NULL)
        shoal__pull_source_ask(ctx, p);
    return rc; /* a failure ends the actor: pool_ended tells the waiter */
}

static int manager_message(shoal_ctx_t *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    const shoal_behaviour_t *m = p->spec.manager;
    if (m == NULL)
        return SHOAL_OK; /* an unknown priority message: nothing to do */
    return m->handle_message(ctx, p->manager_state, msg);
}

/* The supervisor of a remote pool says what happened (remote.h). */
static void on_remote(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal_remote_ev_t ev;
    if (p->remote == NULL || msg->size != sizeof ev)
        return;
    memcpy(&ev, msg->data, sizeof ev);
    ev.why[sizeof ev.why - 1] = '\0';
    switch (ev.ev) {
    case SHOAL_REMOTE_EV_UP:
        p->remote_up = true;
        if (p->start_pending)
            start_finish(ctx, p, SHOAL_OK, NULL);
        break;
    case SHOAL_REMOTE_EV_START_FAILED:
        if (p->start_pending) { /* the waiter says why */
            start_finish(ctx, p, ev.status, ev.why);
            break;
        }
        shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, p->name,
                   "its isolated worker process did not start: %s",
                   ev.why[0] ? ev.why : shoal_strerror(ev.status));
        shoal__pool_remote_down(ctx, p, ev.status);
        break;
    case SHOAL_REMOTE_EV_DOWN:
        p->remote_up = false;
        shoal__pool_remote_down(ctx, p, ev.status);
        break;
    case SHOAL_REMOTE_EV_DRAINED:
        p->remote_up = false;
        p->remote_done = true;
        shoal__pool_drain_finish(ctx, p);
        break;
    case SHOAL_REMOTE_EV_PREPARED:
    case SHOAL_REMOTE_EV_PREPARE_FAILED:
        shoal__pool_swap_on_remote(ctx, p, ev.ev == SHOAL_REMOTE_EV_PREPARED ? SHOAL_OK : ev.status,
                                   ev.why);
        break;
    default:
        break;
    }
}

/* The reload that started the pool held has committed (pool.h: opts
 * held). The workers in its table (a checkout pool's members: checkout.c)
 * were spawned gated; one that ended meanwhile was replaced gated too, and
 * one spawned from now on is not. A pull pool takes over the epic of the
 * pool it replaces if the GO carries one (shoal_pull_handover_t), then
 * asks its source once the message is handled (pool_handle_message,
 * pool_handle_call), as after any. */
void shoal__pool_go(shoal_ctx_t *ctx, shoal_pool_t *p, const void *data, size_t size)
{
    if (!p->held)
        return;
    p->held = false;
    if (p->pull != NULL) {
        shoal_pull_handover_t h;
        if (size == sizeof h)
            memcpy(&h, data, sizeof h);
        shoal__pull_go(ctx, p, size == sizeof h ? &h : NULL);
    }
    if (p->co != NULL) {
        shoal__checkout_go(ctx, p);
        return;
    }
    for (uint32_t i = 0; i < shoal__pool_live(p); i++)
        shoal__pool_open_worker(ctx, p, shoal__pool_slot(p, i));
}

static int message(shoal_ctx_t *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    if (msg->kind == SHOAL_MSG_CAST && msg->from == SHOAL_PID_NONE &&
        (msg->flags & SHOAL_MSG_PRIORITY) && msg->type == SHOAL__POOL_REMOTE) {
        on_remote(ctx, p, msg);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->type == SHOAL__POOL_GO &&
        (msg->flags & SHOAL_MSG_PRIORITY) &&
        (msg->from == SHOAL_PID_NONE || (p->g.parent != NULL && msg->from == p->g.parent->pid))) {
        shoal__pool_go(ctx, p, msg->data, msg->size);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_ENV_STARTED && p->pull != NULL && shoal__pull_source_started(p, msg))
        return SHOAL_OK;
    if (msg->kind == SHOAL_ENV_STARTED) {
        /* A checkout pool's members start on demand too (checkout.c): only
         * its `init` members' notices count for its start. */
        bool counts = p->co == NULL || shoal__checkout_start_counts(p, msg->from);
        if (p->co != NULL)
            shoal__checkout_message(ctx, p, msg);
        if (counts)
            on_started(ctx, p, msg);
        return SHOAL_OK;
    }
    if (p->co != NULL && shoal__checkout_message(ctx, p, msg))
        return SHOAL_OK;
    if (msg->kind == SHOAL_MSG_EXIT) {
        if (p->pull != NULL)
            shoal__pull_seat_drop(p, msg->from);
        if (shoal__pull_source_exit(ctx, p, msg->from, msg->status))
            return SHOAL_OK;
        if (shoal__pool_on_exit(ctx, p, msg->from, msg->status)) {
            if (p->pull != NULL && p->el != NULL) /* items it left, no member waiting */
                shoal__pool_on_grow(ctx, p);
            return SHOAL_OK;
        }
        return manager_message(ctx, p, msg);
    }
    if ((msg->flags & SHOAL_MSG_PRIORITY) && shoal__pull_source_message(ctx, p, msg))
        return SHOAL_OK;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == SHOAL__POOL_TICK_GROW &&
        (msg->flags & SHOAL_MSG_PRIORITY)) { /* a sender's: the grow list has sends */
        shoal__pool_on_grow(ctx, p);
        return SHOAL_OK;
    }
    if (msg->kind != SHOAL_MSG_CAST || msg->from != ctx->self ||
        (msg->type != SHOAL__POOL_TICK_RETRY && msg->type != SHOAL__POOL_TICK_CHECK &&
         msg->type != SHOAL__POOL_TICK_DRAIN && msg->type != SHOAL__POOL_TICK_ELASTIC)) {
        uint32_t out;
        if (msg->kind == SHOAL_MSG_CAST && shoal__pool_command(ctx, p, msg, &out) != SHOAL_ENOTSUP)
            return SHOAL_OK;
        return manager_message(ctx, p, msg);
    }
    shoal__pool_tick_came(ctx->rt, p, shoal__pool_tick_at(msg->type));
    if (msg->type == SHOAL__POOL_TICK_DRAIN)
        shoal__pool_drain_workers(ctx, p);
    else if (msg->type == SHOAL__POOL_TICK_ELASTIC)
        shoal__pool_on_elastic_tick(ctx, p);
    else if (msg->type == SHOAL__POOL_TICK_RETRY)
        shoal__pool_on_retry(ctx, p);
    else
        shoal__pool_on_check(ctx, p);
    return SHOAL_OK;
}

static int pool_handle_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    shoal_pool_t *p = shoal__pool_of(state);
    int rc = message(ctx, p, msg);
    shoal__pool_publish(p);
    shoal__pull_source_ask(ctx, p); /* room may have come (resize, prefetch, buffer) */
    shoal__forward_room_recheck(ctx, p);
    return rc;
}

static int pool_handle_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg,
                            shoal_reply_t *reply)
{
    shoal_pool_t *p = shoal__pool_of(state);
    int rc = shoal__pool_call(ctx, p, msg, reply);
    shoal__pool_publish(p);
    shoal__pull_source_ask(ctx, p);
    shoal__forward_room_recheck(ctx, p);
    return rc;
}

static int pool_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    shoal_pool_t *p = shoal__pool_of(state);
    shoal__pool_inspect(ctx, p, out);
    const shoal_behaviour_t *m = p->spec.manager;
    if (m != NULL && m->inspect != NULL)
        return m->inspect(ctx, p->manager_state, out);
    return SHOAL_OK;
}

static void pool_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    shoal_pool_t *p = shoal__pool_of(state);
    if (p == NULL)
        return;
    const shoal_behaviour_t *m = p->spec.manager;
    if (m != NULL && m->terminate != NULL)
        m->terminate(ctx, p->manager_state, reason);
}

static const shoal_behaviour_t pool_behaviour = {
    .name = "pool",
    .state_size = sizeof(shoal_pool_t *),
    .init = pool_init,
    .handle_message = pool_handle_message,
    .handle_call = pool_handle_call,
    .terminate = pool_terminate,
    .inspect = pool_inspect,
};

shoal_pool_t *shoal__pool_ended(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = shoal__pool_of_group(ctx->own);
    /* seq_cst: the reclaimer's store in the Dekker pair of qsbr.h: a sender
     * that has not found the record by now never will. */
    atomic_store_explicit(&ctx->a->group, NULL, memory_order_seq_cst);
    /* If the start never ended (stopped first, a worker could not be
     * spawned, the manager's init failed), whoever waits hears why. */
    int why = ctx->reason != SHOAL_OK ? ctx->reason : SHOAL_ESHUTDOWN;
    start_done(p, why, ctx->error[0] ? ctx->error : ctx->panic_text[0] ? ctx->panic_text : NULL);
    if (p->stage != NULL)
        shoal__pool_swap_abort(ctx, p, 0);
    /* A remote pool's children are stopped (killed if still running) and
     * its supervisor joined; the rest of it goes with the record. */
    shoal__remote_stop(p->remote);
    shoal__pool_give_up_orphans(ctx, p);
    shoal__pool_grow_sweep(ctx->rt, ctx->tc, p); /* sends taken for workers never started */
    free(p->manager_state);
    p->manager_state = NULL;
    /* The record's own hold on the workers' code: each live worker keeps
     * its own, and nothing starts workers from here any more. */
    if (p->hold.release != NULL)
        p->hold.release(p->hold.what);
    p->hold = (shoal_pool_hold_t){0};
    /* Its workers, listed and retiring, end with it (actor_end stops its
     * children next): from now on it has none, as a drain leaves it
     * (workers.c) -- whoever reads the record (a task pool's cap, the
     * host's table) sees size 0 and no worker running, however the pool
     * ended (a task pool counts a task still finishing from its counts:
     * tasks.c, shoal_tasks_running).
     * release: as the drain's store; pairs with the senders' acquire load
     * of nworkers. */
    atomic_store_explicit(&p->nworkers, 0, memory_order_release);
    p->target = 0;
    p->nretiring = 0;
    shoal__pool_publish(p);
    /* release: pairs with shoal__pool_is_ended's acquire. */
    atomic_store_explicit(&p->pub_ended, 1, memory_order_release);
    /* DRAIN callers still waiting: a drain that completed answered them
     * SHOAL_OK before its exit (workers.c: drain_finish_if_done), so these
     * saw the pool end otherwise -- its PID stopped while it drained, with
     * workers maybe still running -- and hear why (a stop: SHOAL_ESHUTDOWN),
     * never SHOAL_OK: a task pool's release took that as every worker gone
     * and freed the handle under a running task. Answered after the end is
     * published: a caller that hears it finds the pool ended. */
    int status = ctx->reason != SHOAL_OK ? ctx->reason : SHOAL_ESHUTDOWN;
    for (uint32_t i = 0; i < p->nwaiters; i++) {
        struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = status};
        shoal__reply_send(ctx->rt, ctx->tc, ctx->self, p->waiters[i].from, p->waiters[i].ref,
                          &reply);
    }
    p->nwaiters = 0;
    return p;
}
