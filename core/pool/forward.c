/* forward.c - the forward kind (Ergo's act.Pool): choosing a worker on the
 * sender's own thread, the counts a worker makes for its pool, and the
 * kind's ops for the actor layer (actor/group.h).
 *
 * A send to a pool never waits for the pool's actor. The sender reads the
 * pool's record (pool.h) inside a read-side region (runtime/qsbr.h, entered
 * by the actor layer before it routes), starts
 * at its own cursor in the worker FIFO and offers the envelope to each
 * worker once: the first that accepts it keeps it, and the cursor moves past
 * it. A full mailbox (SHOAL_EFULL, or SHOAL_EBUSY from a nested pool) and a
 * worker that is gone or retiring (SHOAL_ENOPROC) both mean "the next one".
 * Each sender thread keeps its own cursor per pool, so senders share no
 * written cache line with each other or with the pool: the only writes are
 * to the chosen worker's mailbox and to the sender's own counter stripe.
 *
 * That is the FIFO strategy (shoal/pool.h). The others only choose where
 * the walk starts: LEAST_LOADED at the worker whose mailbox holds the
 * fewest messages, an idle one before a busy one (it reads each worker's
 * reservation word, mailbox dequeue count and schedule state, relaxed: a
 * recent picture is all a choice needs; it writes nothing shared), ties to
 * the first from the cursor; ROUND_ROBIN at the next value of the pool's
 * shared counter (pool.h: rr). A worker that refuses is passed over for
 * the next in the FIFO, as ever.
 */
#include "pool/pool.h"
#include "pool/elastic.h"

#include "actor/room.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

static shoal_pool_cursor_t *cursor_of(shoal_tcache_t *tc, const shoal_pool_t *p)
{
    shoal_pool_cursor_t *c = &tc->cursors[((uintptr_t)p >> 6) & (SHOAL_POOL_CURSORS - 1)];
    if (c->pool != p) {
        c->pool = p;
        c->next = 0;
    }
    return c;
}

/* Offers e to one worker: into a plain actor's user mailbox (within its
 * limit), or on through a nested pool. A sampled message gets its send time
 * only once a mailbox has room for it (before the push makes it visible). */
static int offer(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t *e,
                 bool sample)
{
    uint32_t slot = shoal__pid_slot(to);
    if (slot >= rt->max_actors)
        return SHOAL_ENOPROC;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP)
        return shoal__deliver(rt, tc, to, e, false);
    /* A stale PLAIN (the slot is a pool now) is harmless: the reservation
     * checks the generation, and a pool places what lands in its own
     * mailbox (actor.c). */
    uint32_t limit = shoal__actor_limit(a);
    int rc = limit == 0 ? shoal__queued_admit(rt, tc) : SHOAL_OK;
    if (rc == SHOAL_OK)
        rc = shoal__rsv_reserve(&a->user_rsv, shoal__pid_gen(to), limit,
                                &shoal__actor_back(rt, a)->user_deq);
    if (rc != SHOAL_OK)
        return rc;
    if (limit == 0)
        shoal__queued_in(tc, e);
    if (sample)
        shoal__pool_stamp(e);
    e->meta |= SHOAL_ENV_POOLED;
    shoal__mq_push(&a->user_tail, &e->node);
    shoal__schedule(rt, tc, a);
    return SHOAL_OK;
}

/* How loaded worker pid looks now, for LEAST_LOADED: its queued messages
 * twice, plus one if it is scheduled or running (so an idle worker comes
 * before a busy one with as many queued). A nested pool, or a PID that is
 * gone, reads as loaded as can be: it is tried only in FIFO order. */
static uint64_t load_of(shoal_runtime_t *rt, shoal_pid_t pid)
{
    uint32_t slot = shoal__pid_slot(pid);
    if (slot >= rt->max_actors)
        return UINT64_MAX;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    if (shoal__rsv_gen(w) != shoal__pid_gen(pid) ||
        atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP)
        return UINT64_MAX;
    uint32_t deq = atomic_load_explicit(&shoal__actor_back(rt, a)->user_deq, memory_order_relaxed);
    bool busy = atomic_load_explicit(&a->sched, memory_order_relaxed) != SHOAL_SCHED_IDLE;
    return (uint64_t)shoal__rsv_depth(w, deq) * 2 + busy;
}

/* Where LEAST_LOADED starts: the least loaded of slots[0 .. n), the first
 * from `from` on a tie. */
static uint32_t least_loaded(shoal_runtime_t *rt, shoal_pool_t *p, uint32_t n, uint32_t from)
{
    uint32_t best = from;
    uint64_t best_load = UINT64_MAX;
    for (uint32_t k = 0, i = from; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
        /* acquire: see forward_route's nworkers. */
        uint64_t l = load_of(rt, atomic_load_explicit(&p->slots[i], memory_order_acquire));
        if (l < best_load) {
            best_load = l;
            best = i;
            if (l == 0)
                break; /* idle and empty: none is less loaded */
        }
    }
    return best;
}

static int forward_route(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    if (p->remote != NULL) { /* into its child process's ring (remote.c) */
        int rc = shoal__remote_forward(p->remote, tc, e);
        shoal__stripe_add(rc == SHOAL_OK ? &st->forwarded : &st->unhandled, 1, shared);
        return rc;
    }
    /* acquire: pairs with the pool actor's release stores of slots then n. */
    uint32_t n = atomic_load_explicit(&p->nworkers, memory_order_acquire);
    if (n != 0) {
        /* An autoscaled pool's every message: its queue wait is a signal. */
        bool sample =
            shoal__pool_sampled(tc) || atomic_load_explicit(&p->g.timed, memory_order_relaxed);
        shoal_pool_cursor_t *c = cursor_of(tc, p);
        uint32_t i = c->next < n ? c->next : c->next % n;
        uint32_t strategy = atomic_load_explicit(&p->strategy, memory_order_relaxed);
        if (strategy == SHOAL_POOL_STRATEGY_LEAST_LOADED)
            i = least_loaded(rt, p, n, i);
        else if (strategy == SHOAL_POOL_STRATEGY_ROUND_ROBIN)
            i = atomic_fetch_add_explicit(&p->rr, 1, memory_order_relaxed) % n;
        for (uint32_t k = 0; k < n; k++) {
            /* acquire: see nworkers. */
            shoal_pid_t wp = atomic_load_explicit(&p->slots[i], memory_order_acquire);
            if (++i == n)
                i = 0;
            if (offer(rt, tc, wp, e, sample) == SHOAL_OK) {
                c->next = i;
                shoal__stripe_add(&st->forwarded, 1, shared);
                return SHOAL_OK;
            }
        }
    }
    /* An elastic pool may start a worker for it instead (elastic.c); one
     * that drains refuses it as closed. */
    int rc = SHOAL_EBUSY;
    if (atomic_load_explicit(&p->lazy, memory_order_relaxed) &&
        (rc = shoal__pool_lazy_take(rt, tc, p, e, n)) == SHOAL_OK) {
        shoal__stripe_add(&st->forwarded, 1, shared);
        return SHOAL_OK;
    }
    shoal__stripe_add(&st->unhandled, 1, shared);
    return rc == SHOAL_ENOPROC ? SHOAL_ENOPROC : SHOAL_EBUSY;
}

/* Offers envs[0 .. n) to one worker: as many as its mailbox has room for
 * (a nested pool takes them one by one, as its route does); *took. */
static int offer_many(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t to, shoal_env_t **envs,
                      uint32_t n, uint32_t *took)
{
    uint32_t slot = shoal__pid_slot(to);
    *took = 0;
    if (slot >= rt->max_actors)
        return SHOAL_ENOPROC;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP) {
        int rc = SHOAL_OK;
        while (*took < n && (rc = shoal__deliver(rt, tc, to, envs[*took], false)) == SHOAL_OK)
            ++*took;
        return rc;
    }
    return shoal__deliver_many_plain(rt, tc, a, to, envs, n, SHOAL_ENV_POOLED, took);
}

/* route_many for the FIFO strategy: from the sender's cursor, each worker
 * in turn takes a fair share of what is left (what is left over the
 * workers not yet offered, rounded up) or what its mailbox has room for;
 * then a second walk gives what is still left to any worker with room. So
 * a batch is spread as evenly as single sends would spread it, and is
 * refused (SHOAL_EBUSY) only in part, and only when every worker is full.
 * Every 16th message a thread forwards is stamped, as for single sends
 * (here: one of each chunk that crosses a multiple of 16; a timed pool's
 * every one), before it is offered. Other strategies, an isolated pool,
 * a pool without workers or one that may grow lazily: one by one. */
static int forward_route_many(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g,
                              shoal_env_t **envs, uint32_t n, uint32_t *took)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    /* acquire: see forward_route's nworkers. */
    uint32_t nw = atomic_load_explicit(&p->nworkers, memory_order_acquire);
    uint32_t done = 0;
    int rc = SHOAL_OK;
    if (p->remote != NULL || nw == 0 ||
        atomic_load_explicit(&p->strategy, memory_order_relaxed) != SHOAL_POOL_STRATEGY_FIFO ||
        atomic_load_explicit(&p->lazy, memory_order_relaxed)) {
        while (done < n && (rc = forward_route(rt, tc, g, envs[done])) == SHOAL_OK)
            done++;
        *took = done;
        return rc;
    }
    bool timed = atomic_load_explicit(&p->g.timed, memory_order_relaxed);
    shoal_pool_cursor_t *c = cursor_of(tc, p);
    uint32_t i = c->next < nw ? c->next : c->next % nw;
    for (int pass = 0; pass < 2 && done < n; pass++) {
        for (uint32_t k = 0; k < nw && done < n; k++) {
            /* acquire: see nworkers. */
            shoal_pid_t wp = atomic_load_explicit(&p->slots[i], memory_order_acquire);
            if (++i == nw)
                i = 0;
            uint32_t left = n - done;
            uint32_t want = pass == 0 ? (left + (nw - k) - 1) / (nw - k) : left;
            if (timed) {
                for (uint32_t j = 0; j < want; j++)
                    shoal__pool_stamp(envs[done + j]);
            } else if (((tc->pool_sample + want) >> 4) != (tc->pool_sample >> 4)) {
                shoal__pool_stamp(envs[done]);
            }
            uint32_t got;
            offer_many(rt, tc, wp, envs + done, want, &got);
            if (got != 0) {
                tc->pool_sample += got;
                done += got;
                c->next = i;
            }
        }
    }
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    shoal__stripe_add(&st->forwarded, done, shared);
    *took = done;
    if (done == n)
        return SHOAL_OK;
    shoal__stripe_add(&st->unhandled, 1, shared);
    return SHOAL_EBUSY;
}

void shoal__pool_busy(struct shoal_ctx_s *ctx, uint64_t ns)
{
    bool shared;
    shoal_pool_stripe_t *st =
        shoal__pool_stripe(shoal__pool_of_group(ctx->group), ctx->tc, &shared);
    shoal__stripe_add(&st->busy_ns, ns, shared);
}

void shoal__pool_count(shoal_tcache_t *tc, shoal_pool_t *p, bool failed, uint64_t wait_ns,
                       uint64_t service_ns, bool sampled)
{
    unsigned wb = sampled ? shoal__hist_bucket(wait_ns) : 0;
    unsigned sb = sampled ? shoal__hist_bucket(service_ns) : 0;
    /* The worker holds a reference on its pool's record, each record one on
     * its parent's (pool.c). */
    for (; p != NULL; p = shoal__pool_parent(p)) {
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
        shoal__stripe_add(failed ? &st->failed : &st->handled, 1, shared);
        if (!sampled)
            continue;
        shoal__stripe_add(&st->samples, 1, shared);
        shoal__stripe_add(&st->wait_sum, wait_ns, shared);
        shoal__stripe_add(&st->service_sum, service_ns, shared);
        if (shared) {
            atomic_fetch_add_explicit(&st->wait[wb], 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->service[sb], 1, memory_order_relaxed);
        } else {
            atomic_store_explicit(&st->wait[wb],
                                  atomic_load_explicit(&st->wait[wb], memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            atomic_store_explicit(&st->service[sb],
                                  atomic_load_explicit(&st->service[sb], memory_order_relaxed) + 1,
                                  memory_order_relaxed);
        }
    }
}

void shoal__pool_count_handled(shoal_tcache_t *tc, shoal_pool_t *p, uint64_t n)
{
    for (; p != NULL; p = shoal__pool_parent(p)) {
        /* release: after the worker's pop count (published first, turn.c):
         * a reader that acquires this sees those messages off the queue. A
         * worker thread writes only its own stripe. */
        shoal_pool_stripe_t *st = &p->stripes[tc->worker->id];
        atomic_store_explicit(&st->handled,
                              atomic_load_explicit(&st->handled, memory_order_relaxed) + n,
                              memory_order_release);
    }
}

void shoal__pool_count_dropped(shoal_tcache_t *tc, shoal_pool_t *p)
{
    for (; p != NULL; p = shoal__pool_parent(p)) {
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
        shoal__stripe_add(&st->dropped, 1, shared);
    }
}

void shoal__pool_count_dead_lettered(shoal_tcache_t *tc, shoal_pool_t *p)
{
    for (; p != NULL; p = shoal__pool_parent(p)) {
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
        shoal__stripe_add(&st->dead_lettered, 1, shared);
    }
}

bool shoal__pool_hand_back(struct shoal_ctx_s *ctx, shoal_pool_t *counted, shoal_pid_t to,
                           shoal_env_t *e)
{
    if (to != SHOAL_PID_NONE && !atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed)) {
        shoal_env_t *m = shoal__env_move(ctx->tc, e);
        if (m != NULL) {
            m->meta |= SHOAL_ENV_HANDBACK;
            if (shoal__deliver(ctx->rt, ctx->tc, to, m, true) == SHOAL_OK)
                return true;
            /* The pool is gone: the message stays ours to dead-letter. */
            e->from = m->from;
            e->meta = m->meta & ~(uint64_t)SHOAL_ENV_HANDBACK;
            e->type = m->type;
            e->size = m->size;
            e->payload = m->payload;
            m->meta &= ~(uint64_t)SHOAL_ENV_HEAP;
            shoal__env_free(ctx->tc, m);
        }
    }
    shoal__pool_count_dropped(ctx->tc, counted);
    return false;
}

/* ---- the kind's ops (actor/group.h) --------------------------------------- */

static void forward_settled(struct shoal_ctx_s *ctx, shoal_env_t *e, bool ok,
                            const shoal_group_timing_t *t)
{
    (void)e;
    shoal__pool_count(ctx->tc, shoal__pool_of_group(ctx->group), !ok, t ? t->wait_ns : 0,
                      t ? t->service_ns : 0, t != NULL);
}

static void forward_turn_end(struct shoal_ctx_s *ctx, uint64_t handled)
{
    shoal__pool_count_handled(ctx->tc, shoal__pool_of_group(ctx->group), handled);
}

static bool forward_hand_back(struct shoal_ctx_s *ctx, shoal_group_t *g, shoal_pid_t to,
                              shoal_env_t *e)
{
    return shoal__pool_hand_back(ctx, shoal__pool_of_group(g), to, e);
}

static void forward_own_end(struct shoal_ctx_s *ctx) { shoal__pool_ended(ctx); }

static void forward_unref(shoal_runtime_t *rt, shoal_group_t *g)
{
    shoal__pool_unref(rt, shoal__pool_of_group(g));
}

/* Whether worker `wp` of a forward pool would take a send now: a worker
 * with room below its low-water mark (room.h); a nested pool, any of its
 * own workers that would, down its levels, or a nested pull pool with
 * room. Only a look: a leaf that drains later tells up its chain of groups
 * (room.h), and a ROOM told when a send would still be refused only makes
 * its asker try again. The record is held by a reference while it is read
 * (shoal__pool_find). */
static bool worker_has_room(shoal_runtime_t *rt, shoal_pid_t wp, unsigned depth)
{
    bool gone;
    /* seq_cst (each load in shoal__room_in): after the asker's flag. */
    if (shoal__room_in(rt, wp, memory_order_seq_cst, &gone))
        return true;
    if (gone || depth >= SHOAL_POOL_MAX_DEPTH)
        return false;
    shoal_pool_t *q = shoal__pool_find(rt, wp);
    if (q == NULL)
        return false; /* a plain worker without room, or a pool that ended */
    bool room = false;
    if (q->pull != NULL) {
        room = shoal__pull_has_room(q->pull, shoal__pull_admitted(q->pull, memory_order_seq_cst));
    } else if (q->remote == NULL && q->co == NULL) {
        /* acquire: see forward_route's nworkers. */
        uint32_t n = atomic_load_explicit(&q->nworkers, memory_order_acquire);
        /* acquire (slots[i]): as nworkers. */
        for (uint32_t i = 0; i < n && !room; i++)
            room = worker_has_room(rt, atomic_load_explicit(&q->slots[i], memory_order_acquire),
                                   depth + 1);
    }
    shoal__pool_unref(rt, q);
    return room;
}

/* A producer refused with SHOAL_EBUSY asks for room (actor/room.h: the
 * ask, for a group): waiters on the pool's PID; any worker with room below
 * its low-water mark means a send would be taken. Each worker tells them
 * when it drains (turn.c, end_turn). A pool whose workers are in a child
 * process looks at the child's counts, and its supervisor tells
 * (remote.h: ROOM). */
static int forward_room(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g,
                        shoal_pid_t waiter)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    int rc = shoal__pool_room_add(rt, p, waiter);
    if (rc != SHOAL_OK)
        return rc;
    /* seq_cst fence: the table is read after the flag is set, against the
     * pool's actor, which changes the table and then reads the flag
     * (shoal__forward_room_recheck): one of the two sees the other. */
    atomic_thread_fence(memory_order_seq_cst);
    bool gone;
    /* seq_cst (each load in shoal__room_in): after the flag's fetch_or. */
    shoal__room_in(rt, g->pid, memory_order_seq_cst, &gone); /* the pool's actor ended? */
    if (gone) {
        shoal__room_tell(rt, tc, g->pid, SHOAL_ENOPROC);
        return SHOAL_OK;
    }
    if (p->remote != NULL) { /* in the pool's read-side region, as shoal__remote_room needs */
        if (shoal__remote_room(p->remote))
            shoal__room_tell(rt, tc, g->pid, SHOAL_OK);
        else
            shoal__remote_room_wake(p->remote);
        return SHOAL_OK;
    }
    /* acquire: see forward_route's nworkers. */
    uint32_t n = atomic_load_explicit(&p->nworkers, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        /* acquire: as nworkers. */
        if (worker_has_room(rt, atomic_load_explicit(&p->slots[i], memory_order_acquire), 1)) {
            shoal__room_tell(rt, tc, g->pid, SHOAL_OK);
            break;
        }
    }
    return SHOAL_OK;
}

/* Room that comes without a member's drain: a worker added (a resize, a
 * swap's new workers, a restart) or one that ended (a retired worker's last
 * turn ends the actor, not the turn: it drains no waiter). After each of
 * its callbacks the pool's actor looks (seq_cst fence, after its table
 * stores, then its flag) and, with someone waiting and any worker with
 * room, tells them. */
void shoal__forward_room_recheck(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    if (p->pull != NULL || p->remote != NULL)
        return;
    /* seq_cst fence: after our table stores, before the flag; pairs with the
     * asker's fence in forward_room (room.h: the drain). */
    atomic_thread_fence(memory_order_seq_cst);
    shoal_actor_t *a = ctx->a;
    if (!(atomic_load_explicit(&a->limit, memory_order_relaxed) & SHOAL_LIMIT_ROOM))
        return;
    uint32_t n = shoal__pool_live(p); /* our own table */
    for (uint32_t i = 0; i < n; i++) {
        if (worker_has_room(ctx->rt, shoal__pool_slot(p, i), 1)) {
            shoal__room_tell(ctx->rt, ctx->tc, p->g.pid, SHOAL_OK);
            return;
        }
    }
}

/* A caller gave up its call to the pool (shoal__call_gone): an isolated
 * pool takes it out of its table of calls (remote.h: CALLS); a pool in
 * the process keeps nothing waiting (its worker answers, late). */
static void forward_call_gone(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g,
                              shoal_pid_t caller, shoal_ref_t ref)
{
    (void)rt;
    (void)tc;
    shoal_pool_t *p = shoal__pool_of_group(g);
    if (p->remote != NULL)
        shoal__remote_call_gone(p->remote, caller, ref);
}

const shoal_group_ops_t shoal__forward_ops = {
    .route = forward_route,
    .route_many = forward_route_many,
    .own_message = shoal__pool_take_hand_back,
    .own_retire = shoal__pool_retire,
    .own_end = forward_own_end,
    .settled = forward_settled,
    .turn_end = forward_turn_end,
    .take = NULL, /* it holds nothing: every message is in a worker's mailbox */
    .more = NULL,
    .recheck = NULL,
    .hand_back = forward_hand_back,
    .member_end = NULL,
    .room = forward_room,
    .room_cancel = NULL, /* its waiters are in the registry (room.h) */
    .call_gone = forward_call_gone,
    .busy = shoal__pool_busy,
    .unref = forward_unref,
};
