/* pool.c - a pool's own actor: it starts and replaces workers, resizes,
 * drains, and answers management and priority traffic. It never sees
 * ordinary messages: those are forwarded on the senders' threads
 * (forward.c). Everything here runs in the pool actor's turns, so the
 * record's `owned by the pool actor` part needs no synchronisation; the
 * worker table is published to senders as pool.h describes.
 *
 * Workers are the pool's children. A worker's end arrives as
 * SHOAL_MSG_EXIT:
 *   - a worker still in the FIFO died: it is replaced in its slot, unless
 *     the restart budget is spent; then the slot is closed up and the pool
 *     is degraded until a retry (timer, with backoff) fills it again;
 *   - a retiring worker finished its mailbox: it is forgotten;
 *   - anything else is a child of the manager behaviour: passed on.
 * A worker that ends with messages still queued hands them back (forward.c,
 * SHOAL_ENV_HANDBACK); the pool keeps them in `orphans` and places each on
 * a live worker: through the FIFO if one has room, else on one over its
 * limit (the dead worker's room is what they occupied). With no live worker
 * they wait for the next one to start; while draining, a sweeper worker is
 * started for them.
 */
#include "pool/pool.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
#include "shoal/inspect.h"

/* Private timer messages (in the range pool.h reserves). */
#define TICK_RETRY 0xFFFE0100u
#define TICK_CHECK 0xFFFE0101u
#define BACKOFF_GROWTH 64u

struct shoal_drain_waiter_s {
    shoal_pid_t from;
    shoal_ref_t ref;
};

/* A nested spec kept by the pool, with its own copy of the name. */
typedef struct nested_spec_s {
    shoal_pool_spec_t spec;
    char name[64];
} nested_spec_t;

static const shoal_behaviour_t pool_behaviour;

static shoal_pool_t *pool_of(void *state) { return *(shoal_pool_t **)state; }

static uint64_t ms_to_ns(uint64_t ms)
{
    return ms > UINT64_MAX / 1000000u ? UINT64_MAX : ms * 1000000u;
}

/* ---- spec ---------------------------------------------------------------- */

SHOAL_API void shoal_pool_spec_init(shoal_pool_spec_t *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->size = 4;
    spec->min_size = 1;
    spec->mailbox = 64;
    spec->restart.max = 5;
    spec->restart.within_ms = 5000;
    spec->restart.backoff_ms = 100;
}

static uint32_t max_of(const shoal_pool_spec_t *s)
{
    if (s->max_size != 0)
        return s->max_size;
    return s->size > 1024 ? s->size : 1024;
}

static int spec_check(const shoal_pool_spec_t *s, uint32_t depth)
{
    if ((s->worker == NULL) == (s->worker_pool == NULL))
        return SHOAL_EINVAL; /* exactly one of them */
    if (s->worker != NULL && s->worker->handle_message == NULL)
        return SHOAL_EINVAL;
    if (depth >= SHOAL_POOL_MAX_DEPTH)
        return SHOAL_EINVAL;
    uint32_t max = max_of(s);
    if (s->min_size > s->size || s->size > max || max > SHOAL_POOL_MAX_SIZE)
        return SHOAL_EINVAL;
    if (s->mailbox == 0 ||
        (s->mailbox > SHOAL_MAILBOX_MAX && s->mailbox != SHOAL_MAILBOX_UNBOUNDED))
        return SHOAL_EINVAL;
    if (s->restart.within_ms == 0 || s->restart.backoff_ms == 0 ||
        s->restart.within_ms > UINT64_MAX / 1000000u)
        return SHOAL_EINVAL;
    if (s->name != NULL && strlen(s->name) >= sizeof((nested_spec_t *)0)->name)
        return SHOAL_EINVAL;
    return s->worker_pool ? spec_check(s->worker_pool, depth + 1) : SHOAL_OK;
}

/* Copies the chain of nested specs below spec into p->nested. */
static int spec_copy(shoal_pool_t *p, const shoal_pool_spec_t *spec)
{
    p->spec = *spec;
    p->spec.max_size = max_of(spec);
    snprintf(p->name, sizeof p->name, "%s", spec->name ? spec->name : "pool");
    p->spec.name = p->name;
    size_t depth = 0;
    for (const shoal_pool_spec_t *s = spec->worker_pool; s != NULL; s = s->worker_pool)
        depth++;
    if (depth == 0)
        return SHOAL_OK;
    nested_spec_t *n = calloc(depth, sizeof *n);
    if (n == NULL)
        return SHOAL_ENOMEM;
    const shoal_pool_spec_t *s = spec->worker_pool;
    for (size_t i = 0; i < depth; i++, s = s->worker_pool) {
        n[i].spec = *s;
        snprintf(n[i].name, sizeof n[i].name, "%s", s->name ? s->name : "pool");
        n[i].spec.name = n[i].name;
        n[i].spec.worker_pool = i + 1 < depth ? &n[i + 1].spec : NULL;
    }
    p->nested = (shoal_pool_spec_t *)(void *)n;
    p->spec.worker_pool = &n[0].spec;
    return SHOAL_OK;
}

/* ---- spawning ------------------------------------------------------------ */

int shoal__pool_spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                      shoal_pool_t *member_of, const shoal_pool_spec_t *spec,
                      const shoal_pool_hold_t *hold, uint32_t depth, shoal_pid_t *pid)
{
    if (tc == NULL)
        return SHOAL_ENOMEM;
    if (spec == NULL || pid == NULL)
        return SHOAL_EINVAL;
    int rc = spec_check(spec, depth);
    if (rc != SHOAL_OK)
        return rc;
    shoal_pool_t *p = shoal__pool_record_new(rt, max_of(spec));
    if (p == NULL)
        return SHOAL_ENOMEM;
    bool wait = tc->worker == NULL;
    rc = spec_copy(p, spec);
    uint32_t ring = spec->restart.max ? spec->restart.max : 1;
    if (rc == SHOAL_OK && (p->restart_at = calloc(ring, sizeof *p->restart_at)) == NULL)
        rc = SHOAL_ENOMEM;
    if (rc != SHOAL_OK) {
        shoal__pool_record_retire(rt, p); /* never published: limbo frees it */
        return rc;
    }
    p->depth = depth;
    p->target = spec->size;
    p->backoff_ms = spec->restart.backoff_ms;
    /* The record, not the actor, holds the reference on the parent pool:
     * this pool's workers count into the parent (forward.c) for as long as
     * the record lives, which may be after this pool's actor has ended. */
    p->parent = member_of;
    if (hold != NULL)
        p->hold = *hold;
    const char *wname = spec->worker ? spec->worker->name : p->spec.worker_pool->name;
    snprintf(p->label, sizeof p->label, "%s/%s", p->name, wname ? wname : "?");
    /* One reference for the actor, one for us while we wait for init. */
    atomic_store_explicit(&p->refs, wait ? 2 : 1, memory_order_relaxed);
    /* A root pool waits for its own init and every nested one (start_done). */
    p->root = member_of != NULL ? member_of->root : p;
    atomic_fetch_add_explicit(&p->root->starting, 1, memory_order_relaxed);

    shoal_actor_hold_t ah;
    if (hold != NULL) {
        hold->acquire(hold->what);
        ah = (shoal_actor_hold_t){hold->release, hold->what};
    }
    shoal_spawn_t s = {
        .parent = parent,
        .beh = &pool_behaviour,
        .args = p,
        .limit = SHOAL_MAILBOX_UNBOUNDED,
        .kind = SHOAL_ACTOR_POOL,
        .hold = hold ? &ah : NULL,
        .pool = p,
    };
    rc = shoal__actor_spawn_as(rt, tc, &s, pid);
    if (rc != SHOAL_OK) {
        if (hold != NULL)
            hold->release(hold->what);
        if (p->root != p) /* the parent's init sees rc and fails the tree */
            atomic_fetch_sub_explicit(&p->root->starting, 1, memory_order_relaxed);
        shoal__pool_record_retire(rt, p); /* the caller keeps its reference on member_of */
        return rc;
    }
    if (!wait)
        return SHOAL_OK;
    /* acquire: pairs with start_done's acq_rel: every init's result. */
    uint32_t left;
    while ((left = atomic_load_explicit(&p->starting, memory_order_acquire)) != 0)
        shoal__futex_wait(&p->starting, left, NULL);
    rc = atomic_load_explicit(&p->init_rc, memory_order_relaxed);
    shoal__pool_unref(rt, p);
    return rc;
}

/* This pool's init has run (or never will): count it out of its tree's
 * start, keeping the first failure. The root's waiter holds the root's
 * record; a nested record's reference chain holds its root. */
static void start_done(shoal_pool_t *p, int rc)
{
    if (p->start_done)
        return;
    p->start_done = true;
    shoal_pool_t *root = p->root;
    int ok = SHOAL_OK;
    if (rc != SHOAL_OK)
        atomic_compare_exchange_strong_explicit(&root->init_rc, &ok, rc, memory_order_relaxed,
                                                memory_order_relaxed);
    /* acq_rel: releases init_rc to the waiter (acquire load of 0); the last
     * one out also sees every other init's release. */
    if (atomic_fetch_sub_explicit(&root->starting, 1, memory_order_acq_rel) == 1)
        shoal__futex_wake(&root->starting, INT_MAX);
}

/* Spawns one worker for p (a child of the pool actor): a plain actor
 * running the worker behaviour, or a nested pool. */
static int spawn_worker(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t *pid)
{
    /* The new worker's reference on p (it passes to the worker). */
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    int rc;
    if (p->spec.worker_pool != NULL) {
        rc = shoal__pool_spawn(ctx->rt, ctx->tc, ctx->self, p, p->spec.worker_pool,
                               p->hold.acquire ? &p->hold : NULL, p->depth + 1, pid);
    } else {
        shoal_actor_hold_t ah = {p->hold.release, p->hold.what};
        if (p->hold.acquire != NULL)
            p->hold.acquire(p->hold.what);
        shoal_spawn_t s = {
            .parent = ctx->self,
            .beh = p->spec.worker,
            .args = p->spec.worker_args,
            .limit = p->spec.mailbox,
            .kind = SHOAL_ACTOR_PLAIN,
            .hold = p->hold.acquire ? &ah : NULL,
            .member_of = p,
        };
        rc = shoal__actor_spawn_as(ctx->rt, ctx->tc, &s, pid);
        if (rc != SHOAL_OK && p->hold.release != NULL)
            p->hold.release(p->hold.what);
    }
    if (rc != SHOAL_OK) {
        atomic_fetch_sub_explicit(&p->refs, 1, memory_order_relaxed); /* ours is still held */
        return rc;
    }
    if (shoal__children_add(ctx, *pid) != SHOAL_OK) {
        /* Untracked it must not live: it ends, and its EXIT is not ours. */
        shoal__send_system(ctx->rt, ctx->tc, *pid, SHOAL_ENV_STOP, ctx->self,
                           (uint32_t)SHOAL_ESHUTDOWN);
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

/* ---- the worker table (pool.h: publication order) ------------------------ */

static uint32_t live_count(shoal_pool_t *p)
{
    return atomic_load_explicit(&p->nworkers, memory_order_relaxed);
}

static shoal_pid_t slot_get(shoal_pool_t *p, uint32_t i)
{
    return atomic_load_explicit(&p->slots[i], memory_order_relaxed);
}

static void slot_set(shoal_pool_t *p, uint32_t i, shoal_pid_t pid)
{
    /* release: a sender that reads this PID sees the worker spawned. */
    atomic_store_explicit(&p->slots[i], pid, memory_order_release);
}

static void table_append(shoal_pool_t *p, shoal_pid_t pid)
{
    uint32_t n = live_count(p);
    slot_set(p, n, pid);
    /* release: pairs with the sender's acquire of nworkers: slots[n] is set. */
    atomic_store_explicit(&p->nworkers, n + 1, memory_order_release);
}

static void table_remove_at(shoal_pool_t *p, uint32_t i)
{
    uint32_t n = live_count(p);
    slot_set(p, i, slot_get(p, n - 1));
    /* release: as in table_append (a sender that still sees n reads the
     * last PID twice, harmlessly). */
    atomic_store_explicit(&p->nworkers, n - 1, memory_order_release);
}

static bool table_find(shoal_pool_t *p, shoal_pid_t pid, uint32_t *at)
{
    uint32_t n = live_count(p);
    for (uint32_t i = 0; i < n; i++) {
        if (slot_get(p, i) == pid) {
            *at = i;
            return true;
        }
    }
    return false;
}

/* ---- retiring ------------------------------------------------------------ */

/* Closes a worker's user mailbox (with the generation checked, so a stale
 * PID touches nothing): from now on sends to it answer SHOAL_ENOPROC, and
 * its final count is fixed (mailbox.h). */
static void close_mailbox(shoal_runtime_t *rt, shoal_pid_t pid)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    while (shoal__rsv_gen(w) == shoal__pid_gen(pid) && shoal__rsv_alive(w)) {
        /* acq_rel: as shoal__rsv_close. */
        if (atomic_compare_exchange_weak_explicit(&a->user_rsv, &w, w & ~SHOAL_RSV_ALIVE,
                                                  memory_order_acq_rel, memory_order_relaxed))
            break;
    }
}

static int retiring_add(shoal_pool_t *p, shoal_pid_t pid)
{
    if (p->nretiring == p->retiring_cap) {
        uint32_t cap = p->retiring_cap ? p->retiring_cap * 2 : 8;
        shoal_pid_t *n = realloc(p->retiring_pids, cap * sizeof *n);
        if (n == NULL)
            return SHOAL_ENOMEM;
        p->retiring_pids = n;
        p->retiring_cap = cap;
    }
    p->retiring_pids[p->nretiring++] = pid;
    return SHOAL_OK;
}

static bool retiring_remove(shoal_pool_t *p, shoal_pid_t pid)
{
    for (uint32_t i = 0; i < p->nretiring; i++) {
        if (p->retiring_pids[i] == pid) {
            p->retiring_pids[i] = p->retiring_pids[--p->nretiring];
            return true;
        }
    }
    return false;
}

/* The worker (already out of the FIFO) gets nothing new, finishes its
 * mailbox and ends; its EXIT then finds it in retiring_pids. */
static void retire(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid)
{
    if (retiring_add(p, pid) != SHOAL_OK) {
        /* Cannot track it: stop it instead; its queue comes back to us. */
        shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_STOP, ctx->self, (uint32_t)SHOAL_OK);
        return;
    }
    close_mailbox(ctx->rt, pid);
    shoal__send_system(ctx->rt, ctx->tc, pid, SHOAL_ENV_RETIRE, ctx->self, 0);
}

/* ---- orphans (messages handed back) -------------------------------------- */

static void orphans_push(shoal_orphans_t *o, shoal_env_t *e)
{
    atomic_store_explicit(&e->node.next, NULL, memory_order_relaxed);
    if (o->tail != NULL)
        atomic_store_explicit(&o->tail->node.next, &e->node, memory_order_relaxed);
    else
        o->head = e;
    o->tail = e;
    o->n++;
}

static void orphans_push_front(shoal_orphans_t *o, shoal_env_t *e)
{
    atomic_store_explicit(&e->node.next, o->head ? &o->head->node : NULL, memory_order_relaxed);
    o->head = e;
    if (o->tail == NULL)
        o->tail = e;
    o->n++;
}

static shoal_env_t *orphans_pop(shoal_orphans_t *o)
{
    shoal_env_t *e = o->head;
    if (e == NULL)
        return NULL;
    o->head = shoal__env_of(atomic_load_explicit(&e->node.next, memory_order_relaxed));
    if (o->head == NULL)
        o->tail = NULL;
    o->n--;
    return e;
}

static void place_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p);

void shoal__pool_take_hand_back(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_pool_t *p = pool_of(ctx->b->state);
    bool from_worker = (shoal__env_flags(e) & SHOAL_ENV_HANDBACK) != 0;
    if (!from_worker) {
        /* Placed here by a parent pool, or a send that raced a spawn
         * (send.c): this pool accepts it now. */
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, ctx->tc, &shared);
        shoal__stripe_add(&st->forwarded, 1, shared);
    }
    shoal_env_t *m = shoal__env_move(ctx->tc, e);
    if (m == NULL) {
        shoal__pool_count_dropped(ctx->tc, p);
        shoal__dead_letter(ctx, e);
        return;
    }
    m->meta &= ~(uint64_t)SHOAL_ENV_HANDBACK;
    orphans_push(&p->orphans, m);
    /* A dying worker's queue is placed when its EXIT comes (it follows its
     * hand-backs), after its replacement has started; anything else now. */
    if (!from_worker)
        place_orphans(ctx, p);
}

/* Puts e on worker `to` even when its mailbox is full. */
static int deliver_over(struct shoal_ctx_s *ctx, shoal_pid_t to, shoal_env_t *e)
{
    shoal_actor_t *a = shoal__actor_at(ctx->rt, shoal__pid_slot(to));
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_POOL)
        return shoal__deliver_over(ctx->rt, ctx->tc, to, e);
    /* A nested pool takes it through its system mailbox and places it the
     * same way (shoal__pool_take_hand_back). */
    return shoal__deliver(ctx->rt, ctx->tc, to, e, true);
}

/* Places e on a live worker: one with room first, else any open one. */
static int place(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *e)
{
    uint32_t n = live_count(p);
    for (uint32_t i = 0; i < n; i++)
        if (shoal__deliver(ctx->rt, ctx->tc, slot_get(p, i), e, false) == SHOAL_OK)
            return SHOAL_OK;
    for (uint32_t i = 0; i < n; i++)
        if (deliver_over(ctx, slot_get(p, i), e) == SHOAL_OK)
            return SHOAL_OK;
    return SHOAL_ENOPROC;
}

static bool restart_allowed(shoal_pool_t *p, uint64_t now);
static void restart_note(shoal_pool_t *p, uint64_t now);
static void schedule(struct shoal_ctx_s *ctx, uint64_t ms, uint32_t tick, bool *pending);
static void drain_finish_if_done(struct shoal_ctx_s *ctx, shoal_pool_t *p);

/* The pool ends with messages it still holds: up to the parent pool if
 * it is a nested one, else dropped (counted, calls answered). */
static void orphans_give_up(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_pid_t up = p->parent != NULL ? ctx->b->ext->parent : SHOAL_PID_NONE;
    shoal_env_t *e;
    while ((e = orphans_pop(&p->orphans)) != NULL) {
        if (!shoal__pool_hand_back(ctx, p, up, e))
            shoal__dead_letter(ctx, e);
        shoal__env_free(ctx->tc, e);
    }
}

static void place_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    /* Off the list before it is placed: a mailbox links it through the same
     * node. */
    shoal_env_t *e;
    while ((e = orphans_pop(&p->orphans)) != NULL) {
        if (place(ctx, p, e) != SHOAL_OK) {
            orphans_push_front(&p->orphans, e);
            break;
        }
        p->requeued++;
    }
    if (p->orphans.head == NULL || p->state != SHOAL_POOL_DRAINING)
        return;
    /* Draining, and no worker is open: a sweeper handles them and ends.
     * Within the restart budget; past it, the retry timer tries again. */
    uint64_t now = shoal__now_ns();
    shoal_pid_t sweeper;
    if (!restart_allowed(p, now) || spawn_worker(ctx, p, &sweeper) != SHOAL_OK) {
        schedule(ctx, p->backoff_ms, TICK_RETRY, &p->retry_pending);
        return;
    }
    restart_note(p, now);
    p->restarts++;
    while ((e = orphans_pop(&p->orphans)) != NULL) {
        if (deliver_over(ctx, sweeper, e) == SHOAL_OK) {
            p->requeued++;
        } else { /* it died at once: the rest go with the next one */
            orphans_push_front(&p->orphans, e);
            break;
        }
    }
    retire(ctx, p, sweeper);
}

/* ---- restarts ------------------------------------------------------------ */

static bool restart_allowed(shoal_pool_t *p, uint64_t now)
{
    uint64_t within = ms_to_ns(p->spec.restart.within_ms);
    uint32_t recent = 0;
    for (uint32_t i = 0; i < p->restart_n; i++)
        if (now - p->restart_at[i] < within)
            recent++;
    return recent < p->spec.restart.max;
}

static void restart_note(shoal_pool_t *p, uint64_t now)
{
    uint32_t ring = p->spec.restart.max ? p->spec.restart.max : 1;
    p->restart_at[p->restart_head] = now;
    p->restart_head = (p->restart_head + 1) % ring;
    if (p->restart_n < ring)
        p->restart_n++;
}

static void schedule(struct shoal_ctx_s *ctx, uint64_t ms, uint32_t tick, bool *pending)
{
    if (*pending)
        return;
    shoal_timer_t t;
    if (shoal_send_after_priority(ctx, ctx->self, ms, tick, NULL, 0, &t) == SHOAL_OK)
        *pending = true;
}

static void degrade(struct shoal_ctx_s *ctx, shoal_pool_t *p, int reason)
{
    if (p->state == SHOAL_POOL_RUNNING) {
        p->state = SHOAL_POOL_DEGRADED;
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                   "degraded: more than %" PRIu32 " restarts within %" PRIu64
                   " ms (last: %s); serving with %" PRIu32 " of %" PRIu32
                   " workers, retrying in %" PRIu64 " ms",
                   p->spec.restart.max, p->spec.restart.within_ms, shoal_strerror(reason),
                   live_count(p), p->target, p->backoff_ms);
    }
    schedule(ctx, p->backoff_ms, TICK_RETRY, &p->retry_pending);
}

/* Starts workers until the FIFO holds target of them (or one fails). */
static void fill(struct shoal_ctx_s *ctx, shoal_pool_t *p, bool count_restarts)
{
    uint64_t now = shoal__now_ns();
    while (live_count(p) < p->target) {
        shoal_pid_t pid;
        int rc = spawn_worker(ctx, p, &pid);
        if (rc != SHOAL_OK) {
            shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, p->name, "cannot start a worker: %s",
                       shoal_strerror(rc));
            degrade(ctx, p, rc);
            break;
        }
        table_append(p, pid);
        if (count_restarts) {
            restart_note(p, now);
            p->restarts++;
        }
    }
    place_orphans(ctx, p);
}

static void on_retry(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    p->retry_pending = false;
    if (p->state == SHOAL_POOL_DRAINING) { /* orphans waiting for a sweeper */
        place_orphans(ctx, p);
        drain_finish_if_done(ctx, p);
        return;
    }
    if (p->state != SHOAL_POOL_DEGRADED)
        return;
    uint64_t max = p->spec.restart.backoff_ms * BACKOFF_GROWTH;
    p->backoff_ms = p->backoff_ms * 2 < max ? p->backoff_ms * 2 : max;
    fill(ctx, p, true);
    schedule(ctx, p->spec.restart.within_ms, TICK_CHECK, &p->check_pending);
}

static void on_check(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    p->check_pending = false;
    if (p->state != SHOAL_POOL_DEGRADED)
        return;
    uint64_t within = ms_to_ns(p->spec.restart.within_ms);
    if (shoal__now_ns() - p->last_death_ns < within || live_count(p) < p->target) {
        schedule(ctx, p->spec.restart.within_ms, TICK_CHECK, &p->check_pending);
        return;
    }
    p->state = SHOAL_POOL_RUNNING;
    p->backoff_ms = p->spec.restart.backoff_ms;
    shoal__log(ctx->rt, SHOAL_LOG_INFO, ctx->self, p->name,
               "recovered: %" PRIu32 " workers, no restart for %" PRIu64 " ms", live_count(p),
               p->spec.restart.within_ms);
}

/* ---- draining ------------------------------------------------------------ */

static void drain_finish_if_done(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->state != SHOAL_POOL_DRAINING || p->nretiring != 0 || live_count(p) != 0 ||
        p->orphans.head != NULL)
        return;
    for (uint32_t i = 0; i < p->nwaiters; i++)
        shoal_reply(ctx, p->waiters[i].from, p->waiters[i].ref, 0, NULL, 0);
    p->nwaiters = 0;
    shoal_exit(ctx, SHOAL_OK);
}

static void drain(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->state == SHOAL_POOL_DRAINING)
        return;
    place_orphans(ctx, p); /* while workers are still open */
    p->state = SHOAL_POOL_DRAINING;
    shoal__rsv_close(&ctx->a->user_rsv); /* senders now get SHOAL_ENOPROC */
    uint32_t n = live_count(p);
    atomic_store_explicit(&p->nworkers, 0, memory_order_release);
    for (uint32_t i = 0; i < n; i++)
        retire(ctx, p, slot_get(p, i));
    p->target = 0;
    place_orphans(ctx, p);
    drain_finish_if_done(ctx, p);
}

void shoal__pool_retire(struct shoal_ctx_s *ctx) { drain(ctx, pool_of(ctx->b->state)); }

/* ---- resizing ------------------------------------------------------------ */

static uint32_t clamp_size(const shoal_pool_t *p, uint64_t want)
{
    if (want < p->spec.min_size)
        return p->spec.min_size;
    return want > p->spec.max_size ? p->spec.max_size : (uint32_t)want;
}

static uint32_t resize(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t want)
{
    if (p->state == SHOAL_POOL_DRAINING)
        return 0;
    uint32_t size = clamp_size(p, want);
    if (size > p->target) {
        p->target = size;
        fill(ctx, p, false);
    } else {
        p->target = size;
        while (live_count(p) > size) {
            uint32_t n = live_count(p);
            shoal_pid_t pid = slot_get(p, n - 1);
            /* release: out of the FIFO before its mailbox closes. */
            atomic_store_explicit(&p->nworkers, n - 1, memory_order_release);
            retire(ctx, p, pid);
        }
    }
    return p->target;
}

static int set_mailbox(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t limit)
{
    if (limit == 0 || (limit > SHOAL_MAILBOX_MAX && limit != SHOAL_MAILBOX_UNBOUNDED))
        return SHOAL_EINVAL;
    p->spec.mailbox = limit;
    if (p->spec.worker_pool != NULL)
        return SHOAL_OK; /* nested pools keep their own limits */
    uint32_t n = live_count(p);
    /* Each worker sets its own limit (it cannot end meanwhile, unlike a
     * store from here to a record whose PID may be stale). */
    for (uint32_t i = 0; i < n; i++)
        shoal__send_system(ctx->rt, ctx->tc, slot_get(p, i), SHOAL_ENV_LIMIT, ctx->self,
                           limit == SHOAL_MAILBOX_UNBOUNDED ? 0 : limit);
    return SHOAL_OK;
}

/* ---- a worker ended ------------------------------------------------------ */

/* Returns false if pid was not one of ours (the manager's child). */
static bool on_worker_exit(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int reason)
{
    uint32_t i;
    if (!table_find(p, pid, &i)) {
        if (!retiring_remove(p, pid))
            return false;
        place_orphans(ctx, p);
        drain_finish_if_done(ctx, p);
        return true;
    }
    if (atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed)) {
        table_remove_at(p, i); /* the runtime stops: no replacement, no alarm */
        return true;
    }
    uint64_t now = shoal__now_ns();
    p->last_death_ns = now;
    shoal_pid_t fresh;
    int rc = SHOAL_EFAILED;
    if (p->state == SHOAL_POOL_RUNNING && restart_allowed(p, now) &&
        (rc = spawn_worker(ctx, p, &fresh)) == SHOAL_OK) {
        slot_set(p, i, fresh); /* the replacement takes the dead one's place */
        restart_note(p, now);
        p->restarts++;
    } else {
        table_remove_at(p, i);
        degrade(ctx, p, rc == SHOAL_EFAILED ? reason : rc);
    }
    place_orphans(ctx, p);
    return true;
}

/* ---- queue depth and stats ----------------------------------------------- */

static uint64_t depth_of(shoal_runtime_t *rt, shoal_pid_t pid, unsigned level);

/* Messages held by the pool at front `a` (its workers' and its own). */
static uint64_t pool_depth(shoal_runtime_t *rt, shoal_pool_t *p, unsigned level)
{
    uint64_t d = p->orphans.n;
    uint32_t n = live_count(p); /* our own table */
    for (uint32_t i = 0; i < n; i++)
        d += depth_of(rt, slot_get(p, i), level + 1);
    return d;
}

static uint64_t depth_of(shoal_runtime_t *rt, shoal_pid_t pid, unsigned level)
{
    shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
    /* acquire: pairs with spawn's release store (actor.c) of this word. */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
    if (shoal__rsv_gen(w) != shoal__pid_gen(pid))
        return 0;
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_POOL) {
        uint32_t deq =
            atomic_load_explicit(&shoal__actor_back(rt, a)->user_deq, memory_order_relaxed);
        return shoal__rsv_depth(w, deq);
    }
    /* A nested pool: read inside our turn's region (qsbr.h: seq_cst, the
     * reader's load). We count its workers' mailboxes. */
    shoal_pool_t *q = atomic_load_explicit(&a->pool, memory_order_seq_cst);
    if (q == NULL || q->pid != pid || level >= SHOAL_POOL_MAX_DEPTH)
        return 0;
    uint64_t d = 0;
    /* acquire: pair with that pool's release stores, as a sender's do. */
    uint32_t n = atomic_load_explicit(&q->nworkers, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        d += depth_of(rt, atomic_load_explicit(&q->slots[i], memory_order_acquire), level + 1);
    return d;
}

static void fill_stats(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pool_stats_t *st)
{
    memset(st, 0, sizeof *st);
    st->size_ = (uint32_t)sizeof *st;
    st->state = p->state;
    st->pool_size = live_count(p);
    st->target_size = p->target;
    st->min_size = p->spec.min_size;
    st->max_size = p->spec.max_size;
    st->mailbox = p->spec.mailbox;
    st->retiring = p->nretiring;
    st->worker_restarts = p->restarts;
    st->messages_requeued = p->requeued;
    shoal__qsbr_enter(ctx->tc);
    st->queue_depth = pool_depth(ctx->rt, p, 0);
    for (uint32_t i = 0; i < p->nretiring; i++)
        st->queue_depth += depth_of(ctx->rt, p->retiring_pids[i], 1);
    shoal__pool_sum(p, st);
}

static const char *state_name(uint32_t s)
{
    return s == SHOAL_POOL_DEGRADED   ? "degraded"
           : s == SHOAL_POOL_DRAINING ? "draining"
                                      : "running";
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
    while (rc == SHOAL_OK && live_count(p) < p->target) {
        shoal_pid_t pid;
        if ((rc = spawn_worker(ctx, p, &pid)) == SHOAL_OK)
            table_append(p, pid);
    }
    start_done(p, rc);
    return rc;
}

static int manager_message(shoal_ctx_t *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    const shoal_behaviour_t *m = p->spec.manager;
    if (m == NULL)
        return SHOAL_OK; /* an unknown priority message: nothing to do */
    return m->handle_message(ctx, p->manager_state, msg);
}

static uint32_t payload_u32(const shoal_msg_t *msg, bool *ok)
{
    uint32_t v = 0;
    *ok = msg->size == sizeof v;
    if (*ok)
        memcpy(&v, msg->data, sizeof v);
    return v;
}

/* A command, from a priority send or call. *out: the reply's uint32. */
static int command(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg, uint32_t *out)
{
    bool ok;
    uint32_t v = payload_u32(msg, &ok);
    switch (msg->type) {
    case SHOAL_POOL_ADD_WORKERS:
        *out = ok ? resize(ctx, p, (uint64_t)p->target + v) : 0;
        return ok ? SHOAL_OK : SHOAL_EINVAL;
    case SHOAL_POOL_REMOVE_WORKERS:
        *out = ok ? resize(ctx, p, v > p->target ? 0 : p->target - v) : 0;
        return ok ? SHOAL_OK : SHOAL_EINVAL;
    case SHOAL_POOL_SET_SIZE:
        *out = ok ? resize(ctx, p, v) : 0;
        return ok ? SHOAL_OK : SHOAL_EINVAL;
    case SHOAL_POOL_SET_MAILBOX:
        *out = v;
        return ok ? set_mailbox(ctx, p, v) : SHOAL_EINVAL;
    case SHOAL_POOL_DRAIN:
        drain(ctx, p);
        *out = 0;
        return SHOAL_OK;
    default:
        return SHOAL_ENOTSUP;
    }
}

static int pool_handle_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    shoal_pool_t *p = pool_of(state);
    if (msg->kind == SHOAL_MSG_EXIT) {
        if (on_worker_exit(ctx, p, msg->from, msg->status))
            return SHOAL_OK;
        return manager_message(ctx, p, msg);
    }
    if (msg->kind != SHOAL_MSG_CAST || msg->from != ctx->self ||
        (msg->type != TICK_RETRY && msg->type != TICK_CHECK)) {
        uint32_t out;
        if (msg->kind == SHOAL_MSG_CAST && command(ctx, p, msg, &out) != SHOAL_ENOTSUP)
            return SHOAL_OK;
        return manager_message(ctx, p, msg);
    }
    if (msg->type == TICK_RETRY)
        on_retry(ctx, p);
    else
        on_check(ctx, p);
    return SHOAL_OK;
}

static int pool_handle_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg,
                            shoal_reply_t *reply)
{
    shoal_pool_t *p = pool_of(state);
    if (msg->type == SHOAL_POOL_STATS) {
        shoal_pool_stats_t st;
        fill_stats(ctx, p, &st);
        return shoal_reply_set(reply, SHOAL_POOL_STATS, &st, sizeof st);
    }
    if (msg->type == SHOAL_POOL_DRAIN) {
        if (p->nwaiters == p->waiters_cap) {
            uint32_t cap = p->waiters_cap ? p->waiters_cap * 2 : 4;
            struct shoal_drain_waiter_s *w = realloc(p->waiters, cap * sizeof *w);
            if (w == NULL) {
                shoal_reply_error(reply, SHOAL_ENOMEM);
                return SHOAL_OK;
            }
            p->waiters = w;
            p->waiters_cap = cap;
        }
        p->waiters[p->nwaiters++] = (struct shoal_drain_waiter_s){msg->from, msg->ref};
        drain(ctx, p); /* may answer at once */
        return SHOAL_DEFER;
    }
    uint32_t out;
    int rc = command(ctx, p, msg, &out);
    if (rc == SHOAL_ENOTSUP) {
        const shoal_behaviour_t *m = p->spec.manager;
        if (m != NULL && m->handle_call != NULL)
            return m->handle_call(ctx, p->manager_state, msg, reply);
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return SHOAL_OK;
    }
    if (rc != SHOAL_OK) {
        shoal_reply_error(reply, rc);
        return SHOAL_OK;
    }
    return shoal_reply_set(reply, msg->type, &out, sizeof out);
}

static int pool_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    shoal_pool_t *p = pool_of(state);
    shoal_pool_stats_t st;
    fill_stats(ctx, p, &st);
    shoal_inspect_str(out, "pool", p->name);
    shoal_inspect_str(out, "state", state_name(st.state));
    shoal_inspect_uint(out, "pool_size", st.pool_size);
    shoal_inspect_uint(out, "target_size", st.target_size);
    shoal_inspect_uint(out, "min_size", st.min_size);
    shoal_inspect_uint(out, "max_size", st.max_size);
    shoal_inspect_str(out, "worker_behaviour",
                      p->spec.worker ? p->spec.worker->name : p->spec.worker_pool->name);
    shoal_inspect_bool(out, "worker_is_pool", p->spec.worker_pool != NULL);
    if (st.mailbox == SHOAL_MAILBOX_UNBOUNDED)
        shoal_inspect_str(out, "worker_mailbox_size", "unbounded");
    else
        shoal_inspect_uint(out, "worker_mailbox_size", st.mailbox);
    shoal_inspect_uint(out, "retiring", st.retiring);
    shoal_inspect_uint(out, "worker_restarts", st.worker_restarts);
    shoal_inspect_uint(out, "messages_forwarded", st.messages_forwarded);
    shoal_inspect_uint(out, "messages_unhandled", st.messages_unhandled);
    shoal_inspect_uint(out, "messages_handled", st.messages_handled);
    shoal_inspect_uint(out, "messages_failed", st.messages_failed);
    shoal_inspect_uint(out, "messages_dropped", st.messages_dropped);
    shoal_inspect_uint(out, "messages_requeued", st.messages_requeued);
    shoal_inspect_uint(out, "queue_depth", st.queue_depth);
    shoal_inspect_uint(out, "latency_samples", st.latency_samples);
    static const char *const q[3] = {"p50", "p90", "p99"};
    char key[32];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "queue_wait_%s_ns", q[i]);
        shoal_inspect_uint(out, key, st.queue_wait_ns[i]);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "service_%s_ns", q[i]);
        shoal_inspect_uint(out, key, st.service_ns[i]);
    }
    const shoal_behaviour_t *m = p->spec.manager;
    if (m != NULL && m->inspect != NULL)
        return m->inspect(ctx, p->manager_state, out);
    return SHOAL_OK;
}

static void pool_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    shoal_pool_t *p = pool_of(state);
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
    shoal_pool_t *p = atomic_load_explicit(&ctx->a->pool, memory_order_relaxed);
    /* seq_cst: the reclaimer's store in the Dekker pair of qsbr.h: a sender
     * that has not found the record by now never will. */
    atomic_store_explicit(&ctx->a->pool, NULL, memory_order_seq_cst);
    /* If init never ran to its end (stopped first, or the manager's init
     * panicked), the spawner hears why. */
    start_done(p, ctx->reason != SHOAL_OK ? ctx->reason : SHOAL_ESHUTDOWN);
    orphans_give_up(ctx, p);
    /* DRAIN callers: OK when the drain completed, else why it ended. */
    int status = p->state == SHOAL_POOL_DRAINING && ctx->reason == SHOAL_OK ? SHOAL_OK
                 : ctx->reason != SHOAL_OK                                  ? ctx->reason
                                                                            : SHOAL_ESHUTDOWN;
    for (uint32_t i = 0; i < p->nwaiters; i++) {
        struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = status};
        shoal__reply_send(ctx->rt, ctx->tc, ctx->self, p->waiters[i].from, p->waiters[i].ref,
                          &reply);
    }
    p->nwaiters = 0;
    free(p->manager_state);
    p->manager_state = NULL;
    return p;
}
