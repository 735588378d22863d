/* checkout_fast.c - a checkout pool's takes, returns and transactions done
 * on the caller's own thread (checkout.h: who touches what).
 *
 * The pool's state is guarded by its lock, which its own actor holds
 * through each of its callbacks. The common cases need nothing else of
 * that actor: a consumer takes a free member when nobody waits for one,
 * gives a member back to the first taker waiting (an actor's take, or a
 * transaction) or to the free FIFO, and a transaction goes straight to a
 * free member, or into the queue behind those waiting (its actor asked
 * for a look when it may start a member for it, as for a take that
 * waits): the pool's actor sees a transaction only when the queue cannot
 * grow (no memory), and then in its own mailbox, as before -- and every
 * later one too, behind it, until the actor has read them all there
 * (txn_mailed), so that transactions keep the order they came in. A caller that
 * gives up drops its transaction from the queue on its own thread too
 * (checkout_ops.c: co_call_gone). Each is what the actor would have done with
 * the same state, under the same lock, so the actor's invariants (the
 * seats agree with the counts and the FIFO; in use + free + starting is
 * the members alive) hold between any two holders. Everything else -- a member to stop
 * or start, a lease or a take's deadline to watch, a thread that waits, a
 * pool that drains -- is left to the actor: the caller sends the message
 * it always sent (SHOAL__CO_SLOW), and nothing here has changed.
 *
 * A member past its lifetime is never given out here; the first consumer
 * to find one asks the actor to replace it (SHOAL__CHECKOUT_POKE, once
 * until the actor has handled it), as a return that leaves a member free
 * while a thread waits (behind takers that were gone) asks it to serve
 * that thread.
 *
 * A grant goes after the lock, so it may find its taker gone: the member
 * is made free again under the lock -- but the pool may have changed
 * meanwhile (a drain, which stops only the free and starting members, or
 * a lower max), so that path always asks the actor for a look (again_free),
 * and the actor offers its free members again as a return would
 * (shoal__co_offer: when draining, to a transaction waiting or stopped;
 * stopped past the max). A return while the pool drains is always the
 * actor's (`open` is clear): it serves the transactions the pool accepted
 * before it stops members (checkout.h: draining). The member may also end
 * before its grant is sent: the decision marks the grant
 * (shoal__co_seat_grant) and the send clears the mark
 * (shoal__co_grant_clear), so that the taker hears of that end after its
 * grant, from the actor or from this thread (checkout.h: grants after the
 * lock).
 *
 * A member that gives itself back after a transaction (in its own turn)
 * and takes the next one queued has it delivered to its own mailbox after
 * the lock, not under it: the seat is IN_USE for it from the decision, and
 * the member, alive until that turn ends, cannot refuse it. The envelope's
 * line -- written by its sender, often on the other core -- is then missed
 * outside the lock (W6 64 8 5000 in transactions: +3.6 % with the cache
 * line between the cores at ~100 ns, +15 % at ~400 ns: bench/RESULTS.md).
 *
 * A hand-off keeps a member's whole cycle (the grant, the consumer's call,
 * the member's turn, the return) on the thread that runs it: the grant
 * makes the taker runnable on this worker's own ring, and the taker's call
 * the member. With every thread busy nothing is stolen, so members stay
 * where they are, and one on a thread with fewer of them, or a faster one,
 * is used more (W6, 64 consumers on 8 members: one member 4.7x the mean).
 * Every SPREAD_EVERY-th hand-off of a pool sends its taker to the global
 * ring, which this worker looks past once (sched/worker.c), so another
 * thread likely runs it: members move between threads, and their uses
 * even out (within 2.5 % of the mean in W6, for ~3 % of its rate). Sending
 * members towards the thread that had fewer (counted per thread) did
 * worse: the ones counted there stayed put, the rest were sent on after a
 * cycle each.
 */
#include "actor/call.h"
#include "actor/send.h"
#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "pool/checkout_fast.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

#define SPREAD_EVERY 16u

/* The clock, read once and only when needed (*now 0: not yet): a read
 * costs about as much as the rest of a take. */
static uint64_t clock_of(uint64_t *now)
{
    if (*now == 0)
        *now = shoal__now_ns();
    return *now;
}

/* The first free member, in FIFO order, that may still be given out now,
 * off the FIFO; SHOAL_CO_NIL if none. *stale: one past its lifetime was
 * passed over. */
static uint32_t free_fit(shoal_checkout_t *co, uint64_t *now, bool *stale)
{
    for (uint32_t i = co->free_head; i != SHOAL_CO_NIL; i = co->seats[i].next) {
        if (co->seats[i].expires == UINT64_MAX || clock_of(now) < co->seats[i].expires) {
            shoal__co_free_remove(co, i);
            return i;
        }
        *stale = true;
    }
    return SHOAL_CO_NIL;
}

/* After unlocking: the actor is asked, once, for a look (stale members to
 * replace, a member to start). Not sent (no memory for it), the once-flag
 * is cleared, so the next take, return or transaction asks again -- else
 * nobody ever would, and a transaction waiting for a member to start
 * would wait for good. */
static void ask_recycle(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, bool ask)
{
    if (!ask)
        return;
    int rc = shoal__send(rt, tc, SHOAL_PID_NONE, p->g.pid, SHOAL__CHECKOUT_POKE, NULL, 0, true,
                         NULL, NULL);
    if (rc == SHOAL_OK || rc == SHOAL_ENOPROC) /* ENOPROC: the pool has ended */
        return;
    shoal__co_lock_tc(p->co, tc);
    p->co->recycle_asked = false;
    shoal__co_unlock(p);
    shoal__log(rt, SHOAL_LOG_WARN, p->g.pid, p->name,
               "could not ask the pool's actor for a look (%s): the next take, return or "
               "transaction asks again",
               shoal_strerror(rc));
}

/* With the lock: whether the actor should be asked for a look now. */
static bool recycle_due(shoal_checkout_t *co, bool stale)
{
    if (!stale || co->recycle_asked)
        return false;
    co->recycle_asked = true;
    return true;
}

/* With the lock: member seat i, given and then not delivered (its taker
 * has ended), is free again. The lock was let go in between, so the actor
 * is asked for a look at it (the pool may drain or have a lower max now);
 * true if this holder is to send the POKE. */
static bool again_free(shoal_checkout_t *co, uint32_t i)
{
    shoal__co_seat_ungive(co, i);
    shoal__co_free_push(co, i);
    return recycle_due(co, true);
}

int shoal__co_fast_take(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_pid_t taker,
                        shoal_pid_t *member, uint32_t *seat)
{
    shoal_checkout_t *co = p->co;
    int rc = SHOAL_ENOMEMBERS;
    bool stale = false;
    /* Takers wait, or none is free, and the pool is at max (ending members
     * counted: checkout.h, members), as last published (each holder of the
     * lock publishes before it lets go): none for this taker either, said
     * without the lock -- a member freed since is found by the next look.
     * (Below max the lock is taken: a member is started for the next
     * taker; a pool that drains says so.) */
    uint32_t fr = atomic_load_explicit(&co->pub_free, memory_order_relaxed);
    if ((fr == 0 || atomic_load_explicit(&co->pub_queued, memory_order_relaxed) != 0) &&
        fr + atomic_load_explicit(&co->pub_in_use, memory_order_relaxed) +
                atomic_load_explicit(&co->pub_starting, memory_order_relaxed) +
                atomic_load_explicit(&co->pub_ending, memory_order_relaxed) >=
            atomic_load_explicit(&p->pub_max, memory_order_relaxed) &&
        atomic_load_explicit(&p->pub_state, memory_order_relaxed) != SHOAL_POOL_DRAINING) {
        shoal__co_refused_early(co, tc);
        return SHOAL_ENOMEMBERS;
    }
    shoal__co_lock_tc(co, tc);
    if (!co->open) {
        rc = SHOAL_ENOPROC;
    } else if (co->qlive == 0) { /* nobody waits before it */
        uint64_t now = 0;
        uint32_t i = free_fit(co, &now, &stale);
        if (i != SHOAL_CO_NIL) {
            shoal__co_seat_give(co, i, taker, SHOAL_CO_BY_ACTOR, 0, now);
            shoal__co_note_wait(co, 0);
            *member = co->seats[i].pid;
            *seat = i;
            rc = SHOAL_OK;
        }
    }
    if (rc == SHOAL_ENOMEMBERS) {
        /* As a take that cannot wait: counted, and the actor is asked for a
         * look, which starts a member for the next taker below max. */
        shoal__co_count(co, SHOAL_CO_NO_MEMBERS, 1);
        if (co->nfree + co->nin_use + co->nstarting + co->nending < p->spec.max_size)
            stale = co->spare_asked = true;
    }
    bool ask = recycle_due(co, stale);
    shoal__co_unlock(p);
    ask_recycle(rt, tc, p, ask);
    return rc;
}

/* ---- a take ---------------------------------------------------------------- */

/* What a take under the lock leaves for after it. */
typedef struct take_out_s {
    int status;            /* the error to answer with, unless answered */
    bool answered;         /* granted now, or waiting (answered later) */
    bool ask;              /* the actor is to be asked for a look */
    shoal_pid_t granted;   /* granted now: its grant goes after the lock */
    uint32_t gi;           /* ... from this seat */
    shoal_co_stripe_t *st; /* ... marked in this stripe (shoal__co_seat_grant) */
} take_out_t;

/* With the lock: taker's take (its call's ref), as the actor's would go
 * (checkout_take.c): a free member when nobody waits before it, else a
 * place in the queue, else SHOAL_ENOMEMBERS at once. */
static void take_locked(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_pid_t taker,
                        shoal_ref_t ref, uint64_t timeout_ms, uint64_t *now, take_out_t *o)
{
    shoal_checkout_t *co = p->co;
    bool stale = false;
    *o = (take_out_t){.status = SHOAL_OK, .granted = SHOAL_PID_NONE, .gi = SHOAL_CO_NIL};
    if (!co->open) {
        o->status = SHOAL_ENOPROC;
    } else {
        uint32_t i = co->qlive == 0 ? free_fit(co, now, &stale) : SHOAL_CO_NIL;
        if (i != SHOAL_CO_NIL) {
            /* Ours now; its grant goes after the lock (take_after). */
            o->st = shoal__co_seat_grant(co, i, taker, *now);
            shoal__co_note_wait(co, 0);
            o->granted = co->seats[i].pid;
            o->gi = i;
            o->answered = true;
        } else {
            shoal_co_taker_t t = {.from = taker, .ref = ref};
            t.since = clock_of(now);
            t.deadline = shoal__deadline_ns(*now, timeout_ms);
            bool wait = timeout_ms != 0 && co->qtakers < co->cfg->queue_max &&
                        shoal__co_queue_put(co, &t, false) == SHOAL_OK;
            uint32_t alive = co->nfree + co->nin_use + co->nstarting + co->nending; /* max's */
            if (wait) {
                o->answered = true; /* later, by whoever frees a member */
                shoal__co_arm_at(rt, tc, co, t.deadline);
                stale |= co->qlive > co->nstarting && alive < p->spec.max_size; /* start one */
            } else {
                shoal__co_count(co, SHOAL_CO_NO_MEMBERS, 1);
                o->status = SHOAL_ENOMEMBERS;
                if (alive < p->spec.max_size) /* a member for the next taker */
                    stale = co->spare_asked = true;
            }
        }
    }
    o->ask = recycle_due(co, stale);
}

/* After the lock: the look take_locked asked for, the grant, or the error
 * -- but for SHOAL_ENOPROC (the pool closed), returned, not sent. */
static int take_after(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_pid_t taker,
                      shoal_ref_t ref, const take_out_t *o)
{
    shoal_checkout_t *co = p->co;
    ask_recycle(rt, tc, p, o->ask);
    if (o->granted != SHOAL_PID_NONE) {
        bool sent = shoal__co_grant_send(rt, tc, p, o->granted, taker, ref);
        shoal__co_grant_clear(rt, tc, o->st, o->granted, taker, sent);
        if (!sent) {
            /* Not delivered (no memory for it: the taker is us): free again. */
            uint32_t gi = o->gi;
            shoal__co_lock_tc(co, tc);
            bool poke = co->seats[gi].pid == o->granted && co->seats[gi].state == SHOAL_CO_IN_USE &&
                        co->seats[gi].owner == taker && again_free(co, gi);
            shoal__co_unlock(p);
            ask_recycle(rt, tc, p, poke);
        }
    }
    if (o->answered)
        return SHOAL_OK;
    if (o->status == SHOAL_ENOPROC)
        return SHOAL_ENOPROC;
    struct shoal_reply_s reply = {.tc = tc, .env = NULL, .status = o->status};
    shoal__reply_send(rt, tc, p->g.pid, taker, ref, &reply);
    return SHOAL_OK;
}

int shoal__co_take_here(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_pid_t taker,
                        shoal_ref_t ref, uint64_t timeout_ms, uint64_t now)
{
    shoal_checkout_t *co = p->co;
    /* The clock before the lock, when this take will likely wait: no read
     * of it while others wait for the lock (the caller's reading, when it
     * took one for the take's call). */
    if (now == 0 && (atomic_load_explicit(&co->pub_free, memory_order_relaxed) == 0 ||
                     atomic_load_explicit(&co->pub_queued, memory_order_relaxed) != 0))
        now = shoal__now_ns();
    take_out_t o;
    shoal__co_lock_tc(co, tc);
    take_locked(rt, tc, p, taker, ref, timeout_ms, &now, &o);
    shoal__co_unlock(p);
    return take_after(rt, tc, p, taker, ref, &o);
}

/* ---- a return -------------------------------------------------------------- */

/* The seat `member` sits in: `hint` if it is there, else found; -1. */
static int64_t seat_of(const shoal_checkout_t *co, shoal_pid_t member, uint32_t hint)
{
    if (hint < co->nseats && co->seats[hint].pid == member &&
        co->seats[hint].state != SHOAL_CO_EMPTY)
        return hint;
    return shoal__co_find(co, member);
}

/* The first live taker, without taking it off; NULL when none waits. */
static const shoal_co_taker_t *first_taker(const shoal_checkout_t *co)
{
    for (uint32_t k = 0; k < co->qlen; k++) {
        const shoal_co_taker_t *t = shoal__co_qat(co, k);
        if (!t->gone)
            return t;
    }
    return NULL;
}

/* What a return under the lock leaves for after it. */
typedef struct ret_out_s {
    uint64_t now;          /* the clock, once read (0: not yet) */
    uint32_t i;            /* the member's seat */
    shoal_pid_t to;        /* the actor it was given to: its grant goes after the lock
                            * (SHOAL_PID_NONE: none) */
    shoal_ref_t ref;       /* ... for its take's call */
    shoal_co_stripe_t *st; /* ... marked in this stripe (shoal__co_seat_grant) */
    bool away;             /* that grant goes to the global ring (SPREAD_EVERY) */
    bool poke;             /* the actor is to be asked for a look */
    bool self;             /* the member gives itself back, in its own turn */
    shoal_env_t *txn;      /* ... and takes this transaction: delivered after the lock */
} ret_out_t;

/* With the lock: seat i's member, free, to the first taker waiting -- an
 * actor's take (its grant after the lock: o->to), or a transaction -- else
 * into the free FIFO. again: offered before, and not delivered. */
static void offer_locked(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, uint32_t i,
                         bool again, ret_out_t *o)
{
    shoal_checkout_t *co = p->co;
    o->to = SHOAL_PID_NONE;
    const shoal_co_taker_t *t = first_taker(co);
    if (t == NULL || (t->txn == NULL && t->lease)) {
        /* Free; a thread waiting first (behind takers that were gone) is
         * the actor's to serve: it is asked to, as it is to look at a
         * member offered again (again_free). */
        shoal__co_free_push(co, i);
        o->poke |= recycle_due(co, t != NULL || again);
        return;
    }
    shoal_co_taker_t w;
    shoal__co_queue_pop(co, &w);
    if (w.txn != NULL) {
        if (o->self) {
            /* The member gives itself back in its own turn, and it lives
             * until that turn ends: its mailbox takes the transaction for
             * certain, after the lock (return_after), so that the
             * envelope's line -- its sender's, likely on the other core
             * -- is missed outside the lock. The seat's holder is the
             * queue's copy of the sender, not read from the envelope. */
            __builtin_prefetch(w.txn, 1, 3); /* its line on its way as the lock is let go */
            shoal__co_seat_give(co, i, w.from, SHOAL_CO_BY_TXN, 0, o->now);
            o->txn = w.txn;
            return;
        }
        /* Not given: the member has ended (its EXIT is on the way and
         * starts the replacement): the transaction is first again, in the
         * room its pop left. */
        if (!shoal__co_txn_give(rt, tc, p, i, w.txn, o->now))
            (void)shoal__co_queue_put(co, &w, true);
        return;
    }
    /* The first actor waiting: the member is its now; its wait is timed. */
    clock_of(&o->now);
    o->st = shoal__co_seat_grant(co, i, w.from, o->now);
    shoal__co_note_wait(co, o->now - w.since);
    o->away = ++co->handoffs % SPREAD_EVERY == 0;
    o->to = w.from;
    o->ref = w.ref;
}

/* With the lock: `member` (at `seat`, a hint) given back OK by `from`, as
 * the actor's return would go (checkout_take.c), then offered. SHOAL_OK:
 * *o says what is left; SHOAL_EINVAL: not held by `from` (it ended
 * meanwhile): nothing to give back; SHOAL__CO_SLOW: the actor's to do,
 * nothing changed. */
static int return_locked(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p,
                         shoal_pid_t member, uint32_t seat, shoal_pid_t from, ret_out_t *o)
{
    shoal_checkout_t *co = p->co;
    int64_t at = seat_of(co, member, seat);
    shoal_co_seat_t *s = at >= 0 ? &co->seats[at] : NULL;
    const shoal_co_taker_t *t = first_taker(co);
    if (s == NULL || s->state != SHOAL_CO_IN_USE ||
        !(s->by == SHOAL_CO_BY_ACTOR ? s->owner == from
                                     : s->by == SHOAL_CO_BY_TXN && from == member))
        return SHOAL_EINVAL;
    if (!co->open || (s->expires != UINT64_MAX && clock_of(&o->now) >= s->expires) ||
        co->nfree + co->nin_use + co->nstarting > p->spec.max_size ||
        (t != NULL && t->txn == NULL && t->lease))
        return SHOAL__CO_SLOW; /* to stop, to replace, or for a thread to hold under a lease */
    uint32_t i = (uint32_t)at;
    o->self = s->by == SHOAL_CO_BY_TXN; /* from == member: checked above */
    if (o->self)
        shoal__co_txn_out(rt, tc, p);
    shoal__co_count(co, SHOAL_CO_RETURNED_OK, 1);
    s->state = SHOAL_CO_FREE;
    s->owner = SHOAL_PID_NONE;
    if (co->cfg->cull_interval_ms != 0) /* only culling reads it (set_locked) */
        s->used_ns = clock_of(&o->now);
    co->nin_use--;
    o->i = i;
    o->poke = false;
    offer_locked(rt, tc, p, i, false, o);
    return SHOAL_OK;
}

/* After the lock: the grant return_locked left, if any. Not delivered (its
 * taker has ended), the member is offered again, to the next. */
static void return_after(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p,
                         shoal_pid_t member, ret_out_t *o)
{
    shoal_checkout_t *co = p->co;
    while (o->to != SHOAL_PID_NONE) {
        tc->push_global = o->away;
        bool sent = shoal__co_grant_send(rt, tc, p, member, o->to, o->ref);
        tc->push_global = false;
        shoal__co_grant_clear(rt, tc, o->st, member, o->to, sent);
        if (sent)
            break;
        shoal__co_lock_tc(co, tc);
        uint32_t i = o->i;
        if (co->seats[i].pid != member || co->seats[i].state != SHOAL_CO_IN_USE ||
            co->seats[i].owner != o->to) {
            o->to = SHOAL_PID_NONE; /* the member ended meanwhile (its EXIT settled the seat) */
        } else if (!co->open ||
                   (co->seats[i].expires != UINT64_MAX &&
                    clock_of(&o->now) >= co->seats[i].expires) ||
                   co->nfree + co->nin_use + co->nstarting > p->spec.max_size) {
            /* Draining since the lock was let go (no take is left to offer
             * it to: the actor gives it to a transaction waiting or stops
             * it), or, as return_locked asks, past its lifetime or above a
             * max lowered meanwhile: the actor's to replace or stop. */
            o->poke |= again_free(co, i);
            o->to = SHOAL_PID_NONE;
        } else {
            shoal__co_seat_ungive(co, i);
            offer_locked(rt, tc, p, i, true, o);
        }
        shoal__co_unlock(p);
    }
    if (o->txn != NULL && shoal__deliver_over(rt, tc, member, o->txn) != SHOAL_OK) {
        /* Never, while the member runs this turn (offer_locked): said, and
         * as shoal__co_txn_give's failure -- the seat ends, and the
         * transaction is first in the queue again, or, with no memory for
         * the queue, dropped and counted (its caller times out). */
        shoal__log(rt, SHOAL_LOG_ERROR, member, p->name,
                   "a member giving itself back could not take the next transaction "
                   "(its mailbox has closed while it runs)");
        shoal__co_lock_tc(co, tc);
        bool queued = shoal__co_txn_lost_give(co, o->i, member, o->txn);
        shoal__co_unlock(p);
        if (!queued)
            shoal__co_txn_forget(rt, tc, p, o->txn);
    }
    ask_recycle(rt, tc, p, o->poke);
}

int shoal__co_fast_return(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p,
                          shoal_pid_t member, uint32_t seat, shoal_pid_t from)
{
    /* The clock is read under the lock, when a taker waits (its wait is
     * timed): a look before it for whether one waits would pull the lock's
     * line here (pub_queued) only to have to pull it again. */
    ret_out_t o = {.now = 0}; /* the rest zero: no transaction taken yet */
    shoal__co_lock_tc(p->co, tc);
    int rc = return_locked(rt, tc, p, member, seat, from, &o);
    shoal__co_unlock(p);
    if (rc == SHOAL_OK)
        return_after(rt, tc, p, member, &o);
    return rc;
}

void shoal__co_mailed_done(shoal_checkout_t *co)
{
    if (co->txn_mailed != 0)
        co->txn_mailed--;
}

int shoal__co_fast_txn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e)
{
    shoal_checkout_t *co = p->co;
    int rc = SHOAL__CO_SLOW;
    bool stale = false;
    shoal__co_lock_tc(co, tc);
    if (!co->open) {
        rc = SHOAL_ENOPROC;
    } else if (co->txn_mailed == 0) { /* else it goes behind those in the mailbox */
        uint64_t now = 0;
        e->meta |= SHOAL_ENV_POOLED;
        uint32_t i;
        while (co->qlive == 0 && (i = free_fit(co, &now, &stale)) != SHOAL_CO_NIL) {
            if (shoal__co_txn_give(rt, tc, p, i, e, now)) {
                rc = SHOAL_OK;
                break;
            }
        }
        if (rc != SHOAL_OK) {
            /* No member for it now: it waits behind whoever waits, as the
             * pool's actor would have placed it (shoal__co_txn_place), and
             * the actor is asked for a look when the pool may start one
             * for it (the POKE: shoal__co_fill). */
            /* No clock read: only a take's wait is timed (note_wait). */
            shoal_co_taker_t t = {.from = e->from, .deadline = UINT64_MAX, .txn = e};
            if (shoal__co_queue_put(co, &t, false) == SHOAL_OK) {
                rc = SHOAL_OK;
                stale |= co->qlive > co->nstarting &&
                         co->nfree + co->nin_use + co->nstarting + co->nending < p->spec.max_size;
            }
        }
        if (rc == SHOAL_OK) {
            shoal__pool_count_forwarded(tc, p);
        } else {
            e->meta &= ~(uint64_t)SHOAL_ENV_POOLED; /* the pool's own mailbox sets it again */
        }
    }
    if (rc == SHOAL__CO_SLOW)
        co->txn_mailed++; /* the caller sends it to the mailbox (co_route) */
    bool ask = recycle_due(co, stale);
    shoal__co_unlock(p);
    ask_recycle(rt, tc, p, ask);
    return rc;
}
