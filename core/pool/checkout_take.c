/* checkout_take.c - a checkout pool giving members out and taking them
 * back (checkout.h): takes, transactions, grants, returns, and the one
 * timer that watches their deadlines (the queue of takers they wait in:
 * checkout_queue.c). The pool's own
 * actor's turns, under the pool's lock (the entry points take it); the
 * pieces shared with the fast paths (checkout_fast.c) need only the lock. */
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/held.h"
#include "actor/send.h"
#include "actor/timer.h"
#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "pool/checkout_fast.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

void shoal__co_note_wait(shoal_checkout_t *co, uint64_t ns)
{
    /* In the holder's stripe (checkout.h: stripes). */
    if (__builtin_expect(co->debug, 0))
        shoal__co_check_holder(co);
    _Atomic uint32_t *b = &co->st->wait[shoal__hist_bucket(ns)];
    if (co->st_shared)
        atomic_fetch_add_explicit(b, 1, memory_order_relaxed);
    else
        atomic_store_explicit(b, atomic_load_explicit(b, memory_order_relaxed) + 1,
                              memory_order_relaxed);
}

/* ---- the tick ---------------------------------------------------------- */

/* The tick is the pool's own priority cast to itself, sent after a delay:
 * as shoal_send_after_priority from the pool's actor would send it, from
 * whichever thread holds the lock. */
void shoal__co_arm_at(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_checkout_t *co, uint64_t at)
{
    if (at == UINT64_MAX || at >= co->tick_at)
        return;
    if (co->tick_at != UINT64_MAX)
        (void)shoal__timer_cancel(rt, tc, co->tick_timer); /* fired already: one extra tick */
    co->tick_at = UINT64_MAX;
    uint64_t ms = shoal__ms_until(shoal__now_ns(), at);
    shoal_pool_t *p = co->pool;
    /* Armed or owed (actor/timer.h: ticks that are never lost), it comes:
     * tick_timer 0 when owed (a cancel of it is a no-op, and an arm that
     * supersedes it takes it off the list). */
    int rc = shoal__tick_arm(rt, tc, &p->ticks[SHOAL__POOL_TICK_AT_CHECKOUT], p->g.pid, ms,
                             SHOAL__POOL_TICK_CHECKOUT, &co->tick_timer);
    co->tick_at = at;
    shoal__pool_tick_armed(rt, p, SHOAL__POOL_TICK_AT_CHECKOUT, rc);
}

static void arm(struct shoal_ctx_s *ctx, shoal_checkout_t *co, uint64_t at)
{
    shoal__co_arm_at(ctx->rt, ctx->tc, co, at);
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The next time anything is due: a taker's deadline, a seat's, a cull, a
 * retry of starts, a degraded pool's recovery. */
static uint64_t next_due(const shoal_checkout_t *co)
{
    uint64_t at = min_u64(shoal__co_seats_next(co), co->next_cull);
    if (co->retry_at != 0)
        at = min_u64(at, co->retry_at);
    const shoal_pool_t *p = co->pool;
    if (p->state == SHOAL_POOL_DEGRADED)
        at = min_u64(at, shoal__deadline_ns(p->last_death_ns, p->spec.restart.within_ms));
    for (uint32_t k = 0; k < co->qlen; k++) {
        const shoal_co_taker_t *t = shoal__co_qat(co, k);
        if (!t->gone)
            at = min_u64(at, t->deadline);
    }
    return at;
}

void shoal__co_rearm(struct shoal_ctx_s *ctx, shoal_checkout_t *co) { arm(ctx, co, next_due(co)); }

/* ---- giving members out ------------------------------------------------- */

static shoal_co_seat_t *seat_give(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner, uint8_t by,
                                  uint64_t token, uint64_t now)
{
    shoal_co_seat_t *s = &co->seats[i];
    if (__builtin_expect(co->debug, 0) && s->state != SHOAL_CO_FREE)
        shoal__co_owner_fault(co, i, owner); /* exclusivity: only a free member is given */
    s->state = SHOAL_CO_IN_USE;
    s->by = by;
    s->owner = owner;
    s->token = token;
    s->deadline =
        by == SHOAL_CO_BY_THREAD ? shoal__deadline_ns(now, co->cfg->lease_ms) : UINT64_MAX;
    if (by == SHOAL_CO_BY_THREAD)
        s->used_ns = now; /* its lease is deadline - this (shoal__co_sweep says it) */
    shoal__co_due(co, s->deadline);
    co->nin_use++;
    shoal__co_count(co, SHOAL_CO_TAKES, 1);
    return s;
}

void shoal__co_seat_give(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner, uint8_t by,
                         uint64_t token, uint64_t now)
{
    seat_give(co, i, owner, by, token, now);
}

shoal_co_stripe_t *shoal__co_seat_grant(shoal_checkout_t *co, uint32_t i, shoal_pid_t owner,
                                        uint64_t now)
{
    shoal_co_seat_t *s = seat_give(co, i, owner, SHOAL_CO_BY_ACTOR, 0, now);
    /* Only an actor's take or return marks a grant (checkout_fast.c), so
     * only a dispatcher thread, whose stripe is its own: one grant on its
     * way at a time per word; the shared stripe never holds a mark. */
    shoal_co_stripe_t *st = co->st;
    s->granter = st;
    /* relaxed: the actor's CAS of it (shoal__co_tell_holder) comes under
     * the lock, after this holder has let it go. */
    atomic_store_explicit(&st->granting, s->pid, memory_order_relaxed);
    return st;
}

void shoal__co_seat_ungive(shoal_checkout_t *co, uint32_t i)
{
    shoal_co_seat_t *s = &co->seats[i];
    s->state = SHOAL_CO_FREE;
    s->owner = SHOAL_PID_NONE;
    co->nin_use--;
    shoal__co_count(co, SHOAL_CO_TAKES, (uint64_t)-1);
}

/* With the lock: seat i's member, given a transaction, had ended free
 * (its EXIT is on the way, and starts the replacement). */
static void txn_not_given(shoal_checkout_t *co, uint32_t i)
{
    shoal__co_seat_ungive(co, i);
    shoal__co_count(co, SHOAL_CO_KILLED_FREE, 1);
    co->seats[i].state = SHOAL_CO_ENDING;
    co->seats[i].failed = true;
    co->nending++;
}

bool shoal__co_txn_give(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, uint32_t i,
                        shoal_env_t *m, uint64_t now)
{
    shoal_checkout_t *co = p->co;
    shoal__co_seat_give(co, i, m->from, SHOAL_CO_BY_TXN, 0, now);
    if (shoal__deliver_over(rt, tc, co->seats[i].pid, m) == SHOAL_OK)
        return true;
    txn_not_given(co, i);
    return false;
}

bool shoal__co_txn_lost_give(shoal_checkout_t *co, uint32_t i, shoal_pid_t member, shoal_env_t *m)
{
    const shoal_co_seat_t *s = &co->seats[i];
    if (s->pid == member && s->state == SHOAL_CO_IN_USE && s->by == SHOAL_CO_BY_TXN)
        txn_not_given(co, i);
    shoal_co_taker_t t = {.from = m->from, .deadline = UINT64_MAX, .txn = m};
    return shoal__co_queue_put(co, &t, true) == SHOAL_OK;
}

bool shoal__co_grant_send(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p,
                          shoal_pid_t member, shoal_pid_t taker, shoal_ref_t ref)
{
    shoal_checkout_member_t g = {member, p->g.pid};
    struct shoal_reply_s reply = {.tc = tc, .env = NULL, .status = SHOAL_OK};
    /* Lost, the taker would never be answered (envelope.c: THE RESERVE). */
    reply.env =
        shoal__env_new_reserved(tc, SHOAL_MSG_REPLY, 0, 0, 0, SHOAL_CHECKOUT_MEMBER, &g, sizeof g);
    return reply.env != NULL && shoal__reply_send(rt, tc, p->g.pid, taker, ref, &reply);
}

void shoal__co_grant_ended(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t ended,
                           shoal_pid_t member, shoal_pid_t taker, bool sent)
{
    if (sent) /* the reason is the mark's high word (shoal__co_ended) */
        shoal__send_system(rt, tc, taker, SHOAL_MSG_EXIT, member, (uint32_t)(ended >> 32));
}

void shoal__co_tell_holder(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_checkout_t *co,
                           uint32_t i, int reason)
{
    const shoal_co_seat_t *s = &co->seats[i];
    shoal_pid_t seen = s->pid;
    /* acquire, on success and on failure: pairs with the release of the
     * grant's thread clearing its mark (shoal__co_grant_clear). Failing,
     * the mark is cleared (or is another grant's): the grant is in the
     * holder's mailbox, and this EXIT goes after it. Succeeding, the grant
     * may still be on its way: its thread finds `ended` as it clears the
     * mark, and sends the EXIT after it (shoal__co_grant_ended). */
    if (s->granter != NULL && atomic_compare_exchange_strong_explicit(
                                  &s->granter->granting, &seen, shoal__co_ended(reason),
                                  memory_order_acquire, memory_order_acquire))
        return;
    shoal__send_system(rt, tc, s->owner, SHOAL_MSG_EXIT, s->pid, (uint32_t)reason);
}

bool shoal__co_grant(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, uint32_t i,
                     const shoal_co_taker_t *t, uint64_t now)
{
    shoal_checkout_t *co = p->co;
    /* Sent under the lock: no mark (an actor's seat: granter NULL). */
    shoal__co_seat_give(co, i, t->from, t->lease ? SHOAL_CO_BY_THREAD : SHOAL_CO_BY_ACTOR,
                        t->lease ? t->token : 0, now);
    if (shoal__co_grant_send(rt, tc, p, co->seats[i].pid, t->from, t->ref)) {
        shoal__co_note_wait(co, now - t->since);
        return true;
    }
    shoal__co_seat_ungive(co, i);
    return false;
}

void shoal__co_offer_free(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    /* Each free member once: taken from the end a push does not go to
     * (the head with fifo, the tail with lifo), so one offered and kept
     * is not met again -- with lifo, the head offered nfree times, the
     * stale ones behind a fresh head were never looked at -- and those
     * kept end in the order they had. relaxed: the strategy is a value on
     * its own (commands.c); one switched meanwhile only reorders. */
    bool lifo =
        atomic_load_explicit(&p->strategy, memory_order_relaxed) == SHOAL_POOL_STRATEGY_LIFO;
    for (uint32_t n = co->nfree; n != 0 && co->free_head != SHOAL_CO_NIL; n--) {
        uint32_t i = lifo ? co->free_tail : co->free_head;
        shoal__co_free_remove(co, i);
        shoal__co_offer(ctx, p, i);
    }
}

void shoal__co_offer(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t i)
{
    shoal_checkout_t *co = p->co;
    shoal_co_seat_t *s = &co->seats[i];
    uint64_t now = shoal__now_ns();
    shoal_co_taker_t t;
    if (p->state == SHOAL_POOL_DRAINING) {
        /* The transactions it accepted first (checkout.h: draining): the
         * first queued gets it -- whatever its lifetime or the max, as the
         * pool ends anyway --, one still in the mailbox finds it free. */
        while (shoal__co_queue_pop(co, &t)) {
            if (t.txn == NULL) { /* none queues while it drains; said so if one did */
                shoal__co_count(co, SHOAL_CO_TAKE_SHUTDOWNS, 1);
                shoal__co_answer_error(ctx, t.from, t.ref, SHOAL_ESHUTDOWN);
                continue;
            }
            if (shoal__co_txn_give(ctx->rt, ctx->tc, p, i, t.txn, now))
                return;
            /* The member has gone (its EXIT is on the way): first for the next. */
            if (shoal__co_queue_put(co, &t, true) != SHOAL_OK)
                shoal__co_txn_drop(ctx, p, t.txn);
            return;
        }
        if (shoal__co_mailbox_txns(ctx) != 0)
            shoal__co_free_push(co, i);
        else
            shoal__co_stop(ctx, p, i);
        return;
    }
    if (now >= s->expires) { /* past its lifetime */
        shoal__co_count(co, SHOAL_CO_RECYCLED, 1);
        shoal__co_stop(ctx, p, i);
        shoal__co_fill(ctx, p);
        return;
    }
    if (co->nfree + co->nin_use + co->nstarting + 1 > p->spec.max_size) {
        shoal__co_count(co, SHOAL_CO_CULLED, 1); /* above a max lowered since it was taken */
        shoal__co_stop(ctx, p, i);
        return;
    }
    while (shoal__co_queue_pop(co, &t)) {
        if (t.txn != NULL) {
            if (shoal__co_txn_give(ctx->rt, ctx->tc, p, i, t.txn, now))
                return;
            /* The member has gone: first for the next. */
            if (shoal__co_queue_put(co, &t, true) != SHOAL_OK)
                shoal__co_txn_drop(ctx, p, t.txn);
            shoal__co_fill(ctx, p);
            return;
        }
        if (shoal__co_grant(ctx->rt, ctx->tc, p, i, &t, now))
            return;
    }
    shoal__co_free_push(co, i);
}

/* A transaction to run: on a free member now, else queued (a member is
 * started for it if the pool may grow). front: handed back, it was first. */
void shoal__co_txn_place(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *m, bool front)
{
    shoal_checkout_t *co = p->co;
    uint64_t now = shoal__now_ns();
    uint32_t i;
    while ((i = shoal__co_free_take(ctx, p, now)) != SHOAL_CO_NIL)
        if (shoal__co_txn_give(ctx->rt, ctx->tc, p, i, m, now))
            return;
    shoal_co_taker_t t = {.from = m->from, .since = now, .deadline = UINT64_MAX, .txn = m};
    if (shoal__co_queue_put(co, &t, front) != SHOAL_OK) {
        shoal__co_txn_drop(ctx, p, m);
        return;
    }
    shoal__co_fill(ctx, p);
}

/* ---- the pool's actor: takes and returns ----------------------------------- */

static int take_locked(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                       shoal_reply_t *reply)
{
    shoal_checkout_t *co = p->co;
    shoal_held_take_t req;
    if (msg->size != sizeof req) {
        shoal_reply_error(reply, SHOAL_EINVAL);
        return SHOAL_OK;
    }
    memcpy(&req, msg->data, sizeof req);
    if (p->state == SHOAL_POOL_DRAINING) {
        shoal_reply_error(reply, SHOAL_ENOPROC);
        return SHOAL_OK;
    }
    uint64_t now = shoal__now_ns();
    shoal_co_taker_t t = {.from = msg->from,
                          .ref = msg->ref,
                          .since = now,
                          .deadline = shoal__deadline_ns(now, req.timeout_ms),
                          .token = req.token,
                          .lease = req.lease != 0};
    /* Takers wait while members are free (a return on a consumer's thread
     * left one for a thread's take and asked for a look: the POKE is
     * still on its way): theirs first, in FIFO order, as the POKE would. */
    if (co->qlive != 0)
        shoal__co_offer_free(ctx, p);
    uint32_t i = co->qlive == 0 ? shoal__co_free_take(ctx, p, now) : SHOAL_CO_NIL;
    if (i != SHOAL_CO_NIL) {
        /* Answered here, not through `reply`: a taker gone by now (the
         * answer cannot be delivered) leaves the member free. */
        if (!shoal__co_grant(ctx->rt, ctx->tc, p, i, &t, now))
            shoal__co_free_push(co, i);
        shoal__co_rearm(ctx, co); /* a lease to watch */
        return SHOAL_DEFER;
    }
    bool wait = req.timeout_ms != 0 && co->qtakers < co->cfg->queue_max;
    if (wait && shoal__co_queue_put(co, &t, false) != SHOAL_OK)
        wait = false;
    if (!wait) {
        shoal__co_start_spare(ctx, p); /* a member for the next */
        shoal__co_rearm(ctx, co);      /* its start deadline to watch */
        shoal__co_count(co, SHOAL_CO_NO_MEMBERS, 1);
        shoal_reply_error(reply, SHOAL_ENOMEMBERS);
        return SHOAL_OK;
    }
    shoal__co_fill(ctx, p); /* a member for it, if the pool may grow */
    shoal__co_rearm(ctx, co);
    return SHOAL_DEFER;
}

int shoal__checkout_take(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg,
                         shoal_reply_t *reply)
{
    shoal__co_lock(p->co);
    int rc = take_locked(ctx, p, msg, reply);
    shoal__co_unlock(p);
    return rc;
}

/* Whether a return's sender may give back seat s. */
static bool may_return(shoal_runtime_t *rt, const shoal_co_seat_t *s, shoal_pid_t from,
                       uint64_t token)
{
    switch (s->by) {
    case SHOAL_CO_BY_ACTOR:
        return from == s->owner;
    case SHOAL_CO_BY_THREAD: /* its take's late answer, or the thread that took (a new waiter) */
        return from == s->owner || (token == s->token && shoal__pool_from_thread(rt, from));
    case SHOAL_CO_BY_TXN:
        return from == s->pid;
    default:
        return false;
    }
}

static bool lease_expired(const shoal_checkout_t *co, shoal_pid_t member)
{
    if (member == SHOAL_PID_NONE) /* the ring's empty entries */
        return false;
    for (uint32_t k = 0; k < SHOAL_CO_EXPIRED_RING; k++)
        if (co->expired[k] == member)
            return true;
    return false;
}

int shoal__co_return_locked(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal_checkout_t *co = p->co;
    shoal_held_return_t r;
    if (msg->size != sizeof r)
        return SHOAL_EINVAL;
    memcpy(&r, msg->data, sizeof r);
    int64_t at = -1;
    if (r.seat != 0 && r.seat <= co->nseats && co->seats[r.seat - 1].pid == r.member &&
        co->seats[r.seat - 1].state != SHOAL_CO_EMPTY)
        at = r.seat - 1; /* the member's own word (checkout.h: members) */
    else if (r.member != SHOAL_PID_NONE)
        at = shoal__co_find(co, r.member);
    shoal_co_seat_t *s = at >= 0 ? &co->seats[at] : NULL;
    if (s == NULL || s->state != SHOAL_CO_IN_USE || !may_return(ctx->rt, s, msg->from, r.token))
        return lease_expired(co, r.member) ? SHOAL_ETIMEDOUT : SHOAL_EINVAL;
    if (r.how != SHOAL_RETURN_OK && r.how != SHOAL_RETURN_FAIL && r.how != SHOAL__RETURN_CRASHED)
        return SHOAL_EINVAL;
    uint32_t i = (uint32_t)at;
    if (s->by == SHOAL_CO_BY_TXN)
        shoal__co_txn_out(ctx->rt, ctx->tc, p);
    if (r.how != SHOAL_RETURN_OK) {
        shoal__co_count(
            co, r.how == SHOAL_RETURN_FAIL ? SHOAL_CO_RETURNED_FAIL : SHOAL_CO_KILLED_IN_USE, 1);
        s->failed = true;          /* its replacement is a restart (checkout.h: failures) */
        shoal__co_stop(ctx, p, i); /* its replacement starts when it has ended */
        shoal__co_rearm(ctx, co);
        return SHOAL_OK;
    }
    shoal__co_count(co, SHOAL_CO_RETURNED_OK, 1);
    s->state = SHOAL_CO_FREE;
    s->owner = SHOAL_PID_NONE;
    s->used_ns = shoal__now_ns();
    co->nin_use--;
    shoal__co_offer(ctx, p, i);
    shoal__co_rearm(ctx, co); /* a lease, a start: the offer may have begun one */
    return SHOAL_OK;
}

int shoal__checkout_return(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal__co_lock(p->co);
    int rc = shoal__co_return_locked(ctx, p, msg);
    shoal__co_unlock(p);
    return rc;
}
