/* pull.c - the pull kind: its ops for the actor layer (actor/group.h), its
 * part of the record (new, free, what the pool's actor changes live, close,
 * stats), the senders' side (the buffer's admission, the put, the wake-up of
 * a sleeping member) and the pool's own actor. The members' side (take,
 * settle, hand back) is pull_members.c. The protocol is in pull.h; the rest
 * of a pull pool (its worker table, restarts, resizing, swaps) is the pool
 * record's, shared with the forward kind (pool.c, workers.c, swap.c).
 */
#include "pool/pull.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "pool/elastic.h"
#include "runtime/runtime.h"

/* ---- the record's part ----------------------------------------------------- */

/* The buffer's ring: its capacity at the start, as a power of two between
 * 64 and 65536; beyond that its overflow list takes what comes. */
static size_t ring_size(uint64_t cap)
{
    size_t n = 64;
    while (n < cap && n < 65536)
        n *= 2;
    return n;
}

int shoal__pull_new(shoal_pool_t *p, const shoal_pool_spec_t *spec)
{
    shoal_pull_t *q = aligned_alloc(64, sizeof *q);
    if (q == NULL)
        return SHOAL_ENOMEM;
    memset(q, 0, sizeof *q);
    /* Spread: members on different cores take neighbouring items (inject.h). */
    uint64_t items = spec->buffer + (uint64_t)spec->size * spec->prefetch;
    if (shoal__inject_init(&q->queue, ring_size(items), true) != SHOAL_OK) {
        free(q);
        return SHOAL_ENOMEM;
    }
    pthread_mutex_init(&q->room_lock, NULL);
    pthread_mutex_init(&q->seats_lock, NULL);
    q->buffer = spec->buffer;
    atomic_store_explicit(&q->buffer_pub, spec->buffer, memory_order_relaxed);
    q->redeliver = spec->redeliver;
    q->dead_letter = spec->dead_letter;
    q->has_source = spec->source != NULL;
    atomic_store_explicit(&q->prefetch, spec->prefetch, memory_order_relaxed);
    atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
    atomic_store_explicit(&q->vain, UINT64_MAX, memory_order_relaxed); /* no scan yet */
    p->pull = q;
    p->g.ops = &shoal__pull_ops;
    /* Every item settled at once, not once a turn nor in batches: a
     * member's long turn must not keep room from senders for items it has
     * finished (batches of 8 were tried: with a small buffer, members
     * holding finished items' room refused sends that had room). */
    p->g.exact = true;
    shoal__pull_update(p);
    return SHOAL_OK;
}

void shoal__pull_free(shoal_runtime_t *rt, shoal_pull_t *q)
{
    if (q == NULL)
        return;
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    void *item;
    while (shoal__inject_take(&q->queue, &item, 1) == 1) {
        if (tc != NULL)
            shoal__env_free(tc, item);
    }
    shoal__inject_fini(&q->queue);
    pthread_mutex_destroy(&q->room_lock);
    pthread_mutex_destroy(&q->seats_lock);
    shoal__pull_epic_drop(q->epic);
    for (uint32_t i = 0; i < q->nseats; i++)
        free(q->seats[i]);
    free(q->seats);
    free(q->waiting);
    free(q);
}

void shoal__pull_update(shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    /* A lazy pool (elastic.c) admits for the workers it may start, too:
     * what they would hold waits in the buffer while they start. */
    uint32_t workers =
        atomic_load_explicit(&p->lazy, memory_order_relaxed) && p->spec.max_size > p->target
            ? p->spec.max_size
            : p->target;
    uint64_t cap =
        q->buffer + (uint64_t)workers * atomic_load_explicit(&q->prefetch, memory_order_relaxed);
    /* seq_cst: the resize's store of the capacity pair (pull.h: room),
     * then its load of nwaiting below. */
    atomic_store_explicit(&q->capacity, cap, memory_order_seq_cst);
    /* More room (a resize, a bigger buffer): producers waiting for it hear.
     * seq_cst (nwaiting, then settles and admits): the loads a settling
     * member makes (pull.h: room), against shoal__pull_room_ask's seq_cst
     * store of nwaiting and its reads of admitted and (shoal__pull_has_room)
     * capacity: an ask racing this update sees the new capacity, or this
     * sees its nwaiting and tells it. */
    if (atomic_load_explicit(&q->nwaiting, memory_order_seq_cst) != 0 &&
        shoal__pull_has_room(q, shoal__pull_admitted(q, memory_order_seq_cst)))
        shoal__pull_tell_waiters(p->rt, shoal__tcache_get(p->rt), p, SHOAL_OK);
}

uint32_t shoal__pull_set_prefetch(shoal_pool_t *p, uint32_t v, int *rc)
{
    if (p->pull == NULL || v == 0 || v > SHOAL_POOL_MAX_PREFETCH) {
        *rc = p->pull == NULL ? SHOAL_ENOTSUP : SHOAL_EINVAL;
        return 0;
    }
    atomic_store_explicit(&p->pull->prefetch, v, memory_order_relaxed);
    p->spec.prefetch = v;
    shoal__pull_update(p);
    *rc = SHOAL_OK;
    return v;
}

uint32_t shoal__pull_set_buffer(shoal_pool_t *p, uint32_t v, int *rc)
{
    if (p->pull == NULL || v > SHOAL_POOL_MAX_BUFFER) {
        *rc = p->pull == NULL ? SHOAL_ENOTSUP : SHOAL_EINVAL;
        return 0;
    }
    p->pull->buffer = v;
    /* relaxed: a value on its own (the stats' buffer). */
    atomic_store_explicit(&p->pull->buffer_pub, v, memory_order_relaxed);
    p->spec.buffer = v;
    shoal__pull_update(p);
    *rc = SHOAL_OK;
    return v;
}

void shoal__pull_close(shoal_pool_t *p)
{
    atomic_fetch_or_explicit(&p->pull->admits, PULL_CLOSED, memory_order_relaxed);
    /* Producers waiting for room are told now that it is gone
     * (SHOAL_ENOPROC), rather than sleep until an item settles. */
    shoal__pull_tell_waiters(p->rt, shoal__tcache_get(p->rt), p, SHOAL_ENOPROC);
}

bool shoal__pull_draining(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    (void)ctx;
    return shoal__pull_admitted(p->pull, memory_order_relaxed) != 0;
}

void shoal__pull_stats(const shoal_pool_t *p, shoal_pool_stats_t *st)
{
    st->kind = p->pull != NULL ? SHOAL_POOL_KIND_PULL : SHOAL_POOL_KIND_FORWARD;
    if (p->pull == NULL)
        return;
    shoal_pull_t *q = p->pull;
    uint32_t pf = atomic_load_explicit(&q->prefetch, memory_order_relaxed);
    uint64_t admitted = shoal__pull_admitted(q, memory_order_relaxed);
    uint64_t buffered = shoal__inject_count(&q->queue, memory_order_relaxed);
    uint64_t held = admitted > buffered ? admitted - buffered : 0;
    uint64_t can_hold = (uint64_t)st->pool_size * pf;
    st->prefetch = pf;
    /* The buffer as configured: the capacity less the members' share is
     * not it for a lazy pool, whose capacity counts the members it may
     * start (shoal__pull_update): 1038 read for a buffer of 16, and every
     * reload set it back. */
    st->buffer = atomic_load_explicit(&q->buffer_pub, memory_order_relaxed);
    st->buffer_depth = buffered;
    st->demand = can_hold > held ? can_hold - held : 0;
    st->source_state = !q->has_source
                           ? SHOAL_SOURCE_NONE
                           : atomic_load_explicit(&q->source_state, memory_order_relaxed);
    st->source_restarts = atomic_load_explicit(&q->source_restarts, memory_order_relaxed);
    st->source_items = atomic_load_explicit(&q->source_items, memory_order_relaxed);
}

void shoal__pull_on_drop(shoal_pool_t *p, shoal_pull_drop_fn fn)
{
    atomic_store_explicit(&p->pull->on_drop, fn, memory_order_relaxed);
}

void shoal__pull_dropped(shoal_pool_t *p, const shoal_env_t *e)
{
    shoal_pull_drop_fn fn = atomic_load_explicit(&p->pull->on_drop, memory_order_relaxed);
    if (fn != NULL && shoal__env_kind(e) == SHOAL_MSG_CAST)
        fn(e->type, shoal__env_data(e), e->size);
}

/* ---- senders ----------------------------------------------------------------- */

/* What sweep takes: every item published in the buffer now. */
static void sweep_published(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
    void *item;
    while (shoal__inject_take(&p->pull->queue, &item, 1) == 1) {
        shoal_env_t *e = item;
        if (shoal__env_kind(e) == SHOAL_MSG_CALL) {
            struct shoal_reply_s reply = {.tc = tc, .env = NULL, .status = SHOAL_ENOPROC};
            shoal__reply_send(rt, tc, p->g.pid, e->from, shoal__env_ref(e), &reply);
        }
        SHOAL_STAT_ADD(tc, msgs_dropped, 1);
        shoal__pool_count_dropped(tc, p);
        shoal__pull_dropped(p, e);
        atomic_fetch_add_explicit(&p->pull->settles, 1, memory_order_relaxed);
        shoal__env_free(tc, e);
    }
}

/* Drops what a pool that has ended still finds in its buffer: a call is
 * answered with SHOAL_ENOPROC, everything is counted as dropped. The pool's
 * actor (claimed: true) also waits out the items claimed before its store
 * of pull_ended and not yet published (pull.h: the end). */
static void sweep(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, bool claimed)
{
    for (;;) {
        sweep_published(rt, tc, p);
        /* seq_cst: the actor's read of the end pair (pull.h), after its
         * store of pull_ended. */
        if (!claimed || shoal__inject_count(&p->pull->queue, memory_order_seq_cst) == 0)
            return;
        sched_yield(); /* a sender between its claim and its publication */
    }
}

/* No member waits for an item just put: a lazy pool may start one
 * (elastic.c: lazy grow). */
static void grow_if_lazy(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
    if (atomic_load_explicit(&p->lazy, memory_order_relaxed) &&
        atomic_load_explicit(&p->nworkers, memory_order_relaxed) <
            atomic_load_explicit(&p->lazy_max, memory_order_relaxed))
        shoal__pool_lazy_ask(rt, tc, p);
}

/* Schedules one IDLE member (pull.h: wake-up). None found -- every member
 * `sleepers` counts is running again (it is taken off at its next take) --
 * is, for a lazy pool, no member waiting: it may start one. */
void shoal__pull_wake(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    /* seq_cst: after the claim, against a member's bump (pull.h: the vain
     * mark). No member has gone to sleep since a scan found none IDLE. */
    uint64_t sleeps = atomic_load_explicit(&q->sleeps, memory_order_seq_cst);
    if (sleeps == atomic_load_explicit(&q->vain, memory_order_relaxed)) {
        grow_if_lazy(rt, tc, p);
        return;
    }
    /* seq_cst: pairs with the pool actor's listing (release stores, then
     * a seq_cst fence, shoal__pull_listed): a member listed before it
     * tried to schedule it is seen here. */
    uint32_t n = atomic_load_explicit(&p->nworkers, memory_order_seq_cst);
    uint32_t i = n != 0 ? tc->pool_sample % n : 0; /* senders start apart */
    for (uint32_t k = 0; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
        /* seq_cst: see nworkers. */
        shoal_pid_t pid = atomic_load_explicit(&p->slots[i], memory_order_seq_cst);
        if (shoal__pid_slot(pid) >= rt->max_actors)
            continue;
        shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pid));
        /* acquire: the generation's spawn is visible (spawn.c). A member
         * that ends right after: a turn for its slot's next actor, which
         * finds what it finds; never a lost item (the next one wakes). */
        uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
        if (shoal__rsv_gen(w) == shoal__pid_gen(pid) && shoal__rsv_alive(w) &&
            shoal__schedule(rt, tc, a))
            return;
    }
    atomic_store_explicit(&q->vain, sleeps, memory_order_relaxed);
    grow_if_lazy(rt, tc, p);
}

/* After n items were put: for each, a member woken if one sleeps (as if
 * each put had looked on its own); if the pool has ended meanwhile, a
 * sweep (pull.h: its end). */
static void put_after(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, size_t n)
{
    shoal_pull_t *q = p->pull;
    for (size_t k = 0; k < n; k++) {
        /* seq_cst: the sender's read of the wake-up pair (pull.h). */
        if (atomic_load_explicit(&q->sleepers, memory_order_seq_cst) != 0)
            shoal__pull_wake(rt, tc, p);
        else
            grow_if_lazy(rt, tc, p);
    }
    /* seq_cst: the sender's read of the end pair (pull.h): after its claim,
     * as own_end's read of the count is after its store of pull_ended. */
    if (atomic_load_explicit(&p->pull_ended, memory_order_seq_cst))
        sweep(rt, tc, p, false);
}

/* Puts an admitted item into the buffer and wakes a member if one sleeps;
 * if the pool has ended meanwhile, sweeps (pull.h: its end). */
void shoal__pull_put(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e)
{
    shoal__inject_push(&p->pull->queue, e); /* counted by its claim [seq_cst] (inject.h) */
    put_after(rt, tc, p, 1);
}

/* Admits up to `want` items (pull.h: admission): *got (1 .. want) of them
 * on SHOAL_OK; SHOAL_EBUSY when there is room for none (counted
 * unhandled); SHOAL_ENOPROC when it drains or has ended. One CAS on admits
 * for all of them. Inline in both routes (a call cost a task submit 14
 * instructions, bench/cost TASKS). */
static inline __attribute__((always_inline)) int admit(shoal_pull_t *q, shoal_pool_stripe_t *st,
                                                       bool shared, uint64_t want, uint64_t *got)
{
    uint64_t n = atomic_load_explicit(&q->admits, memory_order_relaxed);
    uint64_t out = atomic_load_explicit(&q->seen, memory_order_relaxed);
    for (;;) {
        if (n & PULL_CLOSED)
            return SHOAL_ENOPROC; /* draining or ended (pull.h: admission) */
        uint64_t cap = atomic_load_explicit(&q->capacity, memory_order_relaxed);
        /* n - out is never below admitted; out past n (n read before out
         * moved on) looks full too, and is looked at again. */
        if (out > n || n - out >= cap) {
            /* Full as far as `seen` tells: settles itself, between two
             * reads of admits that agree (then admitted was n - out).
             * seq_cst: the three reads in one order (a refusal is rare). */
            n = atomic_load_explicit(&q->admits, memory_order_seq_cst);
            out = atomic_load_explicit(&q->settles, memory_order_seq_cst);
            atomic_store_explicit(&q->seen, out, memory_order_relaxed);
            uint64_t now = atomic_load_explicit(&q->admits, memory_order_seq_cst);
            if (now != n || (n & PULL_CLOSED)) {
                n = now; /* admits moved: look again */
                continue;
            }
            if (n - out >= cap) {
                shoal__stripe_add(&st->unhandled, 1, shared);
                return SHOAL_EBUSY;
            }
        }
        /* As many as the room `seen` shows: never more than there is. */
        uint64_t k = cap - (n - out) < want ? cap - (n - out) : want;
        /* relaxed: the count publishes nothing (pull.h: admission). */
        if (atomic_compare_exchange_weak_explicit(&q->admits, &n, n + k, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *got = k;
            return SHOAL_OK;
        }
    }
}

/* The source's item, if room its request claimed is left for it (pull.h:
 * admission, the reservation): that room is taken, and the item is
 * admitted already. Only a source's items are; the pool's actor may take
 * the rest back meanwhile (an exchange): each reserved place goes one way.
 * Out of line: every other send inlines admit() instead. */
static __attribute__((noinline)) bool take_reserved(shoal_pull_t *q)
{
    uint64_t r = atomic_load_explicit(&q->reserved, memory_order_relaxed);
    /* relaxed: one word's RMWs (the actor's exchange, this CAS); the room
     * was claimed in admits by the actor, which publishes nothing either. */
    while (r != 0 && !atomic_compare_exchange_weak_explicit(
                         &q->reserved, &r, r - 1, memory_order_relaxed, memory_order_relaxed))
        ;
    return r != 0;
}

/* An admitted item, flagged and stamped as the pool's, before it is put. */
static void admitted(shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e)
{
    if (shoal__pool_sampled(tc) || atomic_load_explicit(&p->g.timed, memory_order_relaxed))
        shoal__pool_stamp(e);
    e->meta |= SHOAL_ENV_POOLED;
    /* Its payload kept for another worker, or for the dead letter (with
     * redeliver 0 a failed cast goes there at once). */
    if ((p->pull->redeliver != 0 || p->pull->dead_letter != SHOAL_PID_NONE) &&
        shoal__env_kind(e) == SHOAL_MSG_CAST)
        e->meta |= SHOAL_ENV_KEEP;
}

static int pull_route(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal_pull_t *q = p->pull;
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    shoal_pid_t src = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    /* The source's item, in the room its request claimed: admitted. */
    if (src != SHOAL_PID_NONE && e->from == src && take_reserved(q)) {
        atomic_fetch_add_explicit(&q->source_items, 1, memory_order_relaxed);
    } else {
        uint64_t got;
        int rc = admit(q, st, shared, 1, &got);
        if (rc != SHOAL_OK)
            return rc;
    }
    admitted(tc, p, e);
    /* Counted before it can be taken: no reader sees it settled first. */
    shoal__stripe_add(&st->forwarded, 1, shared);
    shoal__pull_put(rt, tc, p, e);
    return SHOAL_OK;
}

/* The most items route_many puts into the buffer with one claim. */
#define PUT_BATCH 64u

/* route_many (actor/group.h): admitted as many at a time as there is room
 * for, until none is. The source's items go one by one (the room its
 * request claimed). */
static int pull_route_many(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g,
                           shoal_env_t **envs, uint32_t n, uint32_t *took)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal_pull_t *q = p->pull;
    uint32_t done = 0;
    int rc = SHOAL_OK;
    shoal_pid_t src = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    if (src != SHOAL_PID_NONE && envs[0]->from == src) {
        while (done < n && (rc = pull_route(rt, tc, g, envs[done])) == SHOAL_OK)
            done++;
        *took = done;
        return rc;
    }
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    while (done < n) {
        uint64_t got;
        if ((rc = admit(q, st, shared, n - done, &got)) != SHOAL_OK)
            break;
        for (uint64_t i = 0; i < got; i++)
            admitted(tc, p, envs[done + i]);
        shoal__stripe_add(&st->forwarded, got, shared);
        /* Into the buffer with one claim for as many as fit a batch (counted
         * by it [seq_cst], inject.h), then the look for sleeping members. */
        for (uint64_t i = 0; i < got;) {
            void *batch[PUT_BATCH];
            size_t k = 0;
            for (; k < PUT_BATCH && i + k < got; k++)
                batch[k] = envs[done + i + k];
            shoal__inject_push_many(&q->queue, batch, k);
            put_after(rt, tc, p, k);
            i += k;
        }
        done += (uint32_t)got;
    }
    *took = done;
    return rc;
}

int shoal__pull_send(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, uint32_t type,
                     const void *data, size_t size)
{
    if (tc == NULL)
        return SHOAL_ENOMEM;
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_CAST, 0, SHOAL_PID_NONE, 0, type, data, size);
    if (e == NULL)
        return SHOAL_ENOMEM;
    int rc = pull_route(rt, tc, &p->g, e);
    if (__builtin_expect(rc == SHOAL_OK, 1)) {
        SHOAL_STAT_ADD(tc, msgs_sent, 1);
        return SHOAL_OK;
    }
    shoal__env_free(tc, e);
    if (rc == SHOAL_EBUSY)
        SHOAL_STAT_ADD(tc, msgs_refused, 1);
    else if (rc == SHOAL_ENOPROC)
        SHOAL_STAT_ADD(tc, msgs_noproc, 1);
    return rc;
}

/* ---- the pool's own actor ------------------------------------------------------- */

/* A send that found the pool's own mailbox (its kind read stale): placed
 * in the buffer like any, over the capacity (the sender was told OK). */
static void pull_own_message(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of(ctx->b->state);
    shoal__pool_count_forwarded(ctx->tc, p); /* accepted; dropped below if need be */
    shoal_env_t *m = shoal__env_move(ctx->tc, e);
    if (m == NULL) {
        shoal__pull_dropped(p, e);
        shoal__dead_letter(ctx, e);
        shoal__pool_count_dropped(ctx->tc, p);
        return;
    }
    atomic_fetch_add_explicit(&p->pull->admits, 1, memory_order_relaxed);
    m->meta |= SHOAL_ENV_POOLED;
    shoal__pull_put(ctx->rt, ctx->tc, p, m);
}

static void pull_own_end(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = shoal__pool_ended(ctx);
    shoal__pull_close(p);
    /* seq_cst: the actor's store of the end pair (pull.h). */
    atomic_store_explicit(&p->pull_ended, 1, memory_order_seq_cst);
    sweep(ctx->rt, ctx->tc, p, true);
    shoal__pull_tell_waiters(ctx->rt, ctx->tc, p, SHOAL_ENOPROC);
}

static void pull_unref(shoal_runtime_t *rt, shoal_group_t *g)
{
    shoal__pool_unref(rt, shoal__pool_of_group(g));
}

const shoal_group_ops_t shoal__pull_ops = {
    .route = pull_route,
    .route_many = pull_route_many,
    .own_message = pull_own_message,
    .own_retire = shoal__pool_retire,
    .own_end = pull_own_end,
    .settled = shoal__pull_settled,
    .turn_end = shoal__pull_turn_end,
    .take = shoal__pull_take,
    .more = shoal__pull_more,
    .recheck = shoal__pull_recheck,
    .hand_back = shoal__pull_hand_back,
    .member_end = shoal__pull_member_end,
    .room = shoal__pull_room_ask,
    .room_cancel = shoal__pull_room_cancel,
    .busy = shoal__pool_busy,
    .unref = pull_unref,
};
