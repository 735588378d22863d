/* orphans.c - messages a pool holds between a worker that ended and a live
 * one.
 *
 * A worker that ends with messages still queued hands them back (forward.c,
 * SHOAL_ENV_HANDBACK, into the pool's system mailbox); the pool keeps them
 * in `orphans` and places each on a live worker: through the FIFO if one has
 * room, else on one over its limit (the dead worker's room is what they
 * occupied). With no live worker they wait for the next one to start; while
 * draining, a sweeper worker is started for them. Runs in the pool actor's
 * turns.
 */
#include "pool/pool.h"

#include "actor/call.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

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

void shoal__pool_take_hand_back(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of(ctx->b->state);
    bool from_worker = (shoal__env_flags(e) & SHOAL_ENV_HANDBACK) != 0;
    if (!from_worker) {
        /* Placed here by a parent pool, or a send that raced a spawn
         * (send.c): this pool accepts it now. */
        shoal__pool_count_forwarded(ctx->tc, p);
    }
    shoal_env_t *m = shoal__env_move(ctx->tc, e);
    if (m == NULL) {
        shoal__pool_count_dropped(ctx->tc, p);
        shoal__dead_letter(ctx, e);
        return;
    }
    m->meta &= ~(uint64_t)SHOAL_ENV_HANDBACK;
    m->meta |= SHOAL_ENV_POOLED; /* counted by the worker that gets it */
    orphans_push(&p->orphans, m);
    /* A dying worker's queue is placed when its EXIT comes (it follows its
     * hand-backs), after its replacement has started; anything else now. */
    if (!from_worker)
        shoal__pool_place_orphans(ctx, p);
    shoal__pool_publish(p);
}

void shoal__pool_hold(shoal_pool_t *p, shoal_env_t *e) { orphans_push(&p->orphans, e); }

void shoal__pool_hold_placed(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *e)
{
    shoal__pool_hold(p, e);
    shoal__pool_place_orphans(ctx, p);
}

/* Puts e on worker `to` even when its mailbox is full. */
static int deliver_over(struct shoal_ctx_s *ctx, shoal_pid_t to, shoal_env_t *e)
{
    shoal_actor_t *a = shoal__actor_at(ctx->rt, shoal__pid_slot(to));
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) != SHOAL_ACTOR_GROUP)
        return shoal__deliver_over(ctx->rt, ctx->tc, to, e);
    /* A nested pool takes it through its system mailbox and places it the
     * same way (shoal__pool_take_hand_back). */
    return shoal__deliver(ctx->rt, ctx->tc, to, e, true);
}

/* Places e on a live worker: one with room first, else any open one. */
static int place(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *e)
{
    uint32_t n = shoal__pool_live(p);
    for (uint32_t i = 0; i < n; i++)
        if (shoal__deliver(ctx->rt, ctx->tc, shoal__pool_slot(p, i), e, false) == SHOAL_OK)
            return SHOAL_OK;
    for (uint32_t i = 0; i < n; i++)
        if (deliver_over(ctx, shoal__pool_slot(p, i), e) == SHOAL_OK)
            return SHOAL_OK;
    return SHOAL_ENOPROC;
}

/* The pool ends with messages it still holds: up to the parent pool if
 * it is a nested one, else dropped (counted, calls answered). */
void shoal__pool_give_up_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_pid_t up = p->g.parent != NULL ? ctx->b->ext->parent : SHOAL_PID_NONE;
    shoal_env_t *e;
    while ((e = orphans_pop(&p->orphans)) != NULL) {
        if (!shoal__pool_hand_back(ctx, p, up, e))
            shoal__dead_letter(ctx, e);
        shoal__env_free(ctx->tc, e);
    }
}

void shoal__pool_place_orphans(struct shoal_ctx_s *ctx, shoal_pool_t *p)
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
    if (!shoal__pool_restart_allowed(p, now) ||
        shoal__pool_spawn_worker(ctx, p, &p->spec, &p->hold, false, &sweeper) != SHOAL_OK) {
        shoal__pool_schedule(ctx, p, p->backoff_ms, SHOAL__POOL_TICK_RETRY, &p->retry_pending);
        return;
    }
    shoal__pool_restart_note(p, now);
    p->restarts++;
    while ((e = orphans_pop(&p->orphans)) != NULL) {
        if (deliver_over(ctx, sweeper, e) == SHOAL_OK) {
            p->requeued++;
        } else { /* it died at once: the rest go with the next one */
            orphans_push_front(&p->orphans, e);
            break;
        }
    }
    shoal__pool_retire_worker(ctx, p, sweeper);
}
