/* checkout_ops.c - the checkout kind's ops (actor/group.h): a sender's
 * transaction routed (co_route), what the pool's actor reads in its own
 * mailbox, a member's end of a transaction (it gives itself back), a
 * caller that gave up, the pool's end -- and room for transactions
 * (actor/room.h). Who touches what: checkout.h.
 */
#include <string.h>

#include "actor/call.h"
#include "actor/held.h"
#include "actor/room.h"
#include "actor/send.h"
#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "pool/checkout_fast.h"
#include "pool/pool.h"
#include "pool/elastic.h"
#include "runtime/runtime.h"

/* ---- room for transactions (actor/room.h) ------------------------------------- */

/* Whether a transaction would be admitted with room to spare: a quarter
 * of max + queue_max free (at least one), as the other kinds' low-water
 * mark. seq_cst: the room pair's loads (below). */
static bool txn_room(shoal_checkout_t *co)
{
    uint64_t limit = atomic_load_explicit(&co->txn_limit, memory_order_seq_cst);
    uint64_t out = atomic_load_explicit(&co->txn_out, memory_order_seq_cst);
    uint64_t free_min = limit / 4 != 0 ? limit / 4 : 1;
    return out + free_min <= limit;
}

void shoal__co_txn_out(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
    /* seq_cst, then the flag's seq_cst load: the settler's half of the room
     * pair with co_room's flag, then its loads of txn_out (room.h: the
     * drain). One of the two sees the other. */
    atomic_fetch_sub_explicit(&p->co->txn_out, 1, memory_order_seq_cst);
    const shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(p->g.pid));
    if (__builtin_expect(atomic_load_explicit(&a->limit, memory_order_seq_cst) & SHOAL_LIMIT_ROOM,
                         0) &&
        txn_room(p->co))
        shoal__room_tell(rt, tc, p->g.pid, SHOAL_OK);
}

/* A sender refused SHOAL_ENOMEMBERS (transactions past max + queue_max)
 * asks for room: a waiter on the pool's PID (the registry, room.h), told
 * when a settled transaction leaves a quarter of the limit free -- or at
 * once if one already does, or with SHOAL_ENOPROC if the pool drains or
 * has ended. */
static int co_room(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g, shoal_pid_t waiter)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    int rc = shoal__pool_room_add(rt, p, waiter);
    if (rc != SHOAL_OK)
        return rc;
    bool gone;
    /* seq_cst (each load in shoal__room_in): after the flag's fetch_or, a
     * drain's close of the mailbox (it tells after it) is seen here. */
    shoal__room_in(rt, g->pid, memory_order_seq_cst, &gone);
    if (gone)
        shoal__room_tell(rt, tc, g->pid, SHOAL_ENOPROC);
    else if (txn_room(p->co)) /* seq_cst loads: after the flag (above) */
        shoal__room_tell(rt, tc, g->pid, SHOAL_OK);
    return SHOAL_OK;
}

/* ---- the kind's ops (actor/group.h) ------------------------------------------ */

/* A sender's transaction: admitted against max + queue_max, then into the
 * pool's own mailbox (own_message places it). */
static int co_route(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g, shoal_env_t *e)
{
    /* A caller that gave up (co_call_gone): into the pool's own mailbox,
     * behind its transaction if that still waits there. */
    if (__builtin_expect(shoal__co_is_call_gone(e), 0))
        return SHOAL_GROUP_OWN_MAILBOX;
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal_checkout_t *co = p->co;
    if (atomic_load_explicit(&p->pub_state, memory_order_relaxed) == SHOAL_POOL_DRAINING)
        return SHOAL_ENOPROC;
    /* relaxed: a count bounding memory (checkout.h). */
    uint64_t n = atomic_fetch_add_explicit(&co->txn_out, 1, memory_order_relaxed);
    if (n < atomic_load_explicit(&co->txn_limit, memory_order_relaxed)) {
        /* On a free member now, from this thread (checkout_fast.c); else
         * it waits in the pool's own mailbox, as before. */
        int rc = shoal__co_fast_txn(rt, tc, p, e);
        if (rc != SHOAL__CO_SLOW) {
            if (rc != SHOAL_OK)
                shoal__co_txn_out(rt, tc, p);
            return rc;
        }
        /* Into the pool's own mailbox, put there from here (not by the
         * actor layer, SHOAL_GROUP_OWN_MAILBOX): refused (max_queued, a
         * drain that closed it since the look above), it is no longer
         * out -- else txn_out kept it for good, and enough of them
         * refused every transaction. Flagged POOLED: admitted here
         * (co_own_message tells it from a send that came past this). */
        uint32_t took;
        rc = shoal__deliver_many_plain(rt, tc, shoal__actor_at(rt, shoal__pid_slot(g->pid)), g->pid,
                                       &e, 1, SHOAL_ENV_POOLED, &took);
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
        if (rc != SHOAL_OK) {
            shoal__co_lock_tc(co, tc);
            shoal__co_mailed_done(co);
            shoal__co_unlock(p);
            shoal__co_txn_out(rt, tc, p);
            shoal__stripe_add(&st->unhandled, 1, shared);
            return rc;
        }
        /* Accepted: counted now, while it waits in the pool's own mailbox
         * (the ledger's in flight; lost there at a stuck shutdown, it is
         * counted lost), not when the pool's actor reads it. */
        shoal__stripe_add(&st->forwarded, 1, shared);
        return SHOAL_OK;
    }
    shoal__co_txn_out(rt, tc, p);
    shoal__co_refused_early(co, tc);
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    shoal__stripe_add(&st->unhandled, 1, shared);
    return SHOAL_ENOMEMBERS;
}

/* A draining pool kept its free members for the transactions still in its
 * mailbox (drain_step counts them): one that was no transaction after all
 * (a caller gone) or could not be kept (no memory) lets it look again --
 * else, that the last, the pool never ended. */
static void drain_again(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal__co_lock(p->co);
    if (p->state == SHOAL_POOL_DRAINING)
        shoal__co_drain_step(ctx, p);
    shoal__co_unlock(p);
    shoal__pool_publish(p);
}

/* A user message in the pool's own mailbox that co_route did not put
 * there: a send that read the slot's kind stale (send.c) reserved the
 * mailbox as a plain actor's. Neither a hand-back nor flagged POOLED by
 * co_route, nor a caller's note. */
static bool came_past_route(const shoal_env_t *e)
{
    return (shoal__env_flags(e) & (SHOAL_ENV_HANDBACK | SHOAL_ENV_POOLED)) == 0 &&
           !shoal__co_is_call_gone(e);
}

static void co_own_message(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of(ctx->b->state);
    bool back = (shoal__env_flags(e) & SHOAL_ENV_HANDBACK) != 0;
    /* One that came past co_route is admitted now, as co_route would have
     * (its sender saw SHOAL_OK): on txn_out, counted forwarded, and in no
     * count of txn_mailed. Admitted over txn_limit if need be: it is in
     * memory already, and the queue's own bound refuses it (counted). */
    bool mailed = !back;
    if (came_past_route(e)) {
        mailed = false;
        /* relaxed: as co_route's (checkout.h: txn_out). */
        atomic_fetch_add_explicit(&p->co->txn_out, 1, memory_order_relaxed);
        shoal__pool_count_forwarded(ctx->tc, p);
    }
    if (shoal__co_is_call_gone(e) && !back) {
        shoal_ref_t ref;
        if (e->size == sizeof ref) {
            memcpy(&ref, shoal__env_data(e), sizeof ref);
            shoal__co_lock(p->co);
            (void)shoal__co_txn_gone(ctx, p, e->from, ref);
            shoal__co_unlock(p);
        }
        shoal__env_drop_payload(e);
        drain_again(ctx, p);
        return;
    }
    /* A transaction was counted as co_route accepted it; a hand-back was
     * counted when it first came. A transaction leaves txn_mailed under the
     * same lock that places it: one sent after it is placed behind it. */
    shoal_env_t *m = shoal__env_move(ctx->tc, e);
    if (m == NULL) {
        if (mailed) {
            shoal__co_lock(p->co);
            shoal__co_mailed_done(p->co);
            shoal__co_unlock(p);
        }
        shoal__dead_letter(ctx, e);
        shoal__pool_count_dropped(ctx->tc, p);
        shoal__co_txn_out(ctx->rt, ctx->tc, p);
        drain_again(ctx, p);
        return;
    }
    m->meta &= ~(uint64_t)SHOAL_ENV_HANDBACK;
    m->meta |= SHOAL_ENV_POOLED;
    shoal__co_lock(p->co);
    if (mailed)
        shoal__co_mailed_done(p->co);
    if (p->state == SHOAL_POOL_DRAINING) {
        /* Accepted before the drain closed the mailbox (or handed back by
         * a member that ended): served as the ones queued, in order. */
        uint64_t now = shoal__now_ns();
        shoal_co_taker_t t = {.from = m->from, .since = now, .deadline = UINT64_MAX, .txn = m};
        if (shoal__co_queue_put(p->co, &t, back) != SHOAL_OK)
            shoal__co_txn_drop(ctx, p, m);
        shoal__co_drain_step(ctx, p);
    } else {
        shoal__co_txn_place(ctx, p, m, back);
        shoal__co_rearm(ctx, p->co);
    }
    shoal__co_unlock(p);
    shoal__pool_publish(p); /* own messages end no callback that would */
}

static void co_own_end(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = shoal__pool_ended(ctx);
    shoal_checkout_t *co = p->co;
    if (co->cfg->group != NULL)
        shoal__group_leave(ctx->rt, co->cfg->group, ctx->self);
    shoal__co_lock(co);
    co->open = false;
    /* Transactions still waiting when the pool is stopped are dropped (a
     * drain's were when its last member went: shoal__co_drain_step). */
    shoal__co_drop_unserved(ctx, p);
    /* Its members end with it (its children): an actor holding one hears
     * so, as when a member ends in use, and no longer holds it. */
    for (uint32_t i = 0; i < co->nseats; i++)
        if (co->seats[i].state == SHOAL_CO_IN_USE && co->seats[i].by == SHOAL_CO_BY_ACTOR)
            shoal__co_tell_holder(ctx->rt, ctx->tc, co, i, SHOAL_ESHUTDOWN);
    /* Then every seat is ending, as the pool's stop makes one: no EXIT
     * comes to empty it any more, and what is published (the unlock) is
     * no member in use, free or starting -- an ended pool has none. A
     * member's late return finds its seat ending: nothing to give back. */
    for (uint32_t i = 0; i < co->nseats; i++)
        shoal__co_stop(ctx, p, i);
    shoal__co_unlock(p);
}

/* A member has handled a transaction: counted, and it gives itself back:
 * at once when that needs nothing of the pool's actor (checkout_fast.c),
 * else by a return to it. One that ends after this callback (shoal_exit in
 * it, its call answered) gives nothing back: it ended in use, and its EXIT
 * says so (killed_in_use, logged) -- given back, it was counted
 * returned_ok, then killed_free as its EXIT found it free. Its transaction
 * is settled here all the same. */
static void member_done(struct shoal_ctx_s *ctx, bool ok)
{
    shoal_pool_t *p = shoal__pool_of_group(ctx->group);
    shoal__pool_count(ctx->tc, p, !ok, 0, 0, false);
    if (ok && __builtin_expect(ctx->exiting, 0)) {
        shoal__co_txn_out(ctx->rt, ctx->tc, p);
        return;
    }
    if (ok && shoal__co_fast_return(ctx->rt, ctx->tc, p, ctx->self, (uint32_t)ctx->member[0] - 1,
                                    ctx->self) != SHOAL__CO_SLOW)
        return;
    shoal_held_return_t r = {.member = ctx->self,
                             .how = ok ? SHOAL_RETURN_OK : SHOAL_RETURN_FAIL,
                             .seat = (uint32_t)ctx->member[0]};
    /* Sent without memory to spare (envelope.c: THE RESERVE): lost, the
     * seat stayed in use and the transaction on txn_out for good. */
    int rc = shoal__send_reserved(ctx->rt, ctx->tc, ctx->self, p->g.pid, SHOAL__CHECKOUT_RETURN, &r,
                                  sizeof r);
    if (rc != SHOAL_OK && rc != SHOAL_ENOPROC)
        shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, p->name,
                   "a member could not give itself back after a transaction: %s (the reserve "
                   "of envelopes used up too); the pool holds it as in use",
                   shoal_strerror(rc));
}

static void co_settled(struct shoal_ctx_s *ctx, shoal_env_t *e, bool ok,
                       const shoal_group_timing_t *t)
{
    (void)e;
    (void)t;
    member_done(ctx, ok);
}

static void co_turn_end(struct shoal_ctx_s *ctx, uint64_t handled)
{
    for (uint64_t k = 0; k < handled; k++) /* exact: one at a time */
        member_done(ctx, true);
}

static bool co_hand_back(struct shoal_ctx_s *ctx, shoal_group_t *g, shoal_pid_t to, shoal_env_t *e)
{
    /* Left in the pool's own mailbox at its end: a caller's note that it
     * gave up (co_call_gone) is no message of the ledger's -- taken here,
     * counted nowhere; one that came past co_route is accepted, then
     * dropped (the ledger balances). */
    if (ctx->own == g && shoal__co_is_call_gone(e) && !(shoal__env_flags(e) & SHOAL_ENV_HANDBACK)) {
        shoal__env_drop_payload(e);
        return true;
    }
    if (ctx->own == g && came_past_route(e))
        shoal__pool_count_forwarded(ctx->tc, shoal__pool_of_group(g));
    return shoal__pool_hand_back(ctx, shoal__pool_of_group(g), to, e);
}

static void co_unref(shoal_runtime_t *rt, shoal_group_t *g)
{
    shoal__pool_unref(rt, shoal__pool_of_group(g));
}

/* A transaction's caller gave up (on the caller's thread). Still queued
 * -- put there from its sender's thread (checkout_fast.c) -- it is dropped
 * from here, now: a note to the pool's actor would wait behind the
 * members' turns while the members ran it. So while the pool drains too:
 * its mailbox is closed then, and a note would be lost -- the transaction
 * run for a caller that had its TIMEOUT. (A draining pool keeps no member
 * free while one is queued: the drain goes on at the next return.) Else
 * (given to a member, or in the pool's own mailbox because the queue
 * could not grow) the note goes to the pool's actor as before: an
 * ordinary cast from the caller, so it comes after a transaction still in
 * that mailbox (one producer's sends keep their order), and the actor
 * drops it if it is queued then (shoal__co_txn_gone). */
static void co_call_gone(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g,
                         shoal_pid_t caller, shoal_ref_t ref)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal__co_lock_tc(p->co, tc);
    shoal_env_t *m = shoal__co_txn_unqueue(p->co, caller, ref);
    shoal__co_unlock(p);
    if (m != NULL) {
        shoal__co_txn_forget(rt, tc, p, m);
        return;
    }
    (void)shoal__send(rt, tc, caller, g->pid, SHOAL__CHECKOUT_CALL_GONE, &ref, sizeof ref, false,
                      NULL, NULL);
}

const shoal_group_ops_t shoal__checkout_ops = {
    .route = co_route,
    .own_message = co_own_message,
    .own_retire = shoal__pool_retire,
    .own_end = co_own_end,
    .settled = co_settled,
    .turn_end = co_turn_end,
    .take = NULL, /* a member's transaction is in its mailbox */
    .more = NULL,
    .recheck = NULL,
    .hand_back = co_hand_back,
    .member_end = NULL,
    .room = co_room,     /* room for transactions; takers wait in its queue */
    .room_cancel = NULL, /* the registry's (room.h) */
    .call_gone = co_call_gone,
    .busy = shoal__pool_busy,
    .unref = co_unref,
};
