/* checkout.c - the checkout kind (checkout.h): its spec and record, what
 * its own actor is told (members started and ended, its tick, returns),
 * its live settings and drain, and the kind's ops (a sender's transaction,
 * a member's end of one). Giving members out and taking them back is
 * checkout_take.c's; the seats and the members in them,
 * checkout_members.c's; what other threads read of it, checkout_stats.c's. */
#include "actor/room.h"
#include "pool/checkout.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/held.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

_Static_assert(SHOAL_CO_WAIT_BUCKETS == SHOAL_HIST_BUCKETS, "the take wait uses pool.h's buckets");

/* ---- set-up ---------------------------------------------------------------- */

int shoal__checkout_check(const shoal_pool_spec_t *s)
{
    const shoal_pool_checkout_t *c = &s->checkout;
    if (s->worker == NULL || s->worker_pool != NULL || s->source != NULL ||
        (s->strategy != SHOAL_POOL_STRATEGY_FIFO && s->strategy != SHOAL_POOL_STRATEGY_LIFO))
        return SHOAL_EINVAL;
    if (s->idle_timeout_ms != 0 || s->max_waiting != 0 || s->autoscale.when != 0)
        return SHOAL_EINVAL; /* elastic settings are the other kinds' */
    if (c->member_start_timeout_ms == 0 || c->lease_ms == 0 || c->add_member_retry == 0 ||
        c->queue_max > SHOAL_POOL_MAX_SIZE * 16u)
        return SHOAL_EINVAL;
    if (c->max_lifetime_ms != 0 && c->max_lifetime_jitter_ms >= c->max_lifetime_ms)
        return SHOAL_EINVAL;
    uint64_t lim = UINT64_MAX / 1000000u;
    if (c->member_start_timeout_ms > lim || c->cull_interval_ms > lim || c->max_age_ms > lim ||
        c->max_lifetime_ms > lim || c->lease_ms > lim)
        return SHOAL_EINVAL;
    if (c->group != NULL && (c->group[0] == '\0' || strlen(c->group) >= 64))
        return SHOAL_EINVAL;
    return SHOAL_OK;
}

int shoal__checkout_new(shoal_pool_t *p, const shoal_pool_spec_t *spec)
{
    /* Aligned as its lines are laid out (checkout.h). */
    shoal_checkout_t *co = aligned_alloc(64, sizeof *co);
    if (co == NULL)
        return SHOAL_ENOMEM;
    memset(co, 0, sizeof *co);
    co->nstripes = p->nstripes;
    co->stripes = aligned_alloc(64, co->nstripes * sizeof *co->stripes);
    if (co->stripes == NULL) {
        free(co);
        return SHOAL_ENOMEM;
    }
    memset(co->stripes, 0, co->nstripes * sizeof *co->stripes);
    co->st = &co->stripes[co->nstripes - 1];
    co->st_shared = true;
    co->debug = p->rt->debug_checks;
    /* Its settings are the record's copy of the spec's (pool.c), changed
     * there by SET_CHECKOUT; the group's name is ours. */
    if (spec->checkout.group != NULL)
        snprintf(co->group, sizeof co->group, "%s", spec->checkout.group);
    p->spec.checkout.group = co->group[0] ? co->group : NULL;
    co->cfg = &p->spec.checkout;
    co->pool = p;
    /* A short lock (sched/lock.h): a holder keeps it for a take's or a
     * return's few hundred nanoseconds, so a contender spins a little
     * before it sleeps in the kernel. */
    atomic_init(&co->lock.word, 0);
    co->free_head = co->free_tail = SHOAL_CO_NIL;
    co->tick_at = UINT64_MAX;
    co->next_cull = UINT64_MAX;
    co->due_added = UINT64_MAX;
    uint64_t seed = p->g.pid ^ (uint64_t)(uintptr_t)co;
    co->prng = (uint32_t)(seed ^ seed >> 32) | 1u;
    atomic_store_explicit(&co->txn_limit, (uint64_t)p->spec.max_size + co->cfg->queue_max,
                          memory_order_relaxed);
    p->co = co;
    p->g.exact = true; /* a member gives itself back after each transaction */
    return SHOAL_OK;
}

void shoal__checkout_free(shoal_checkout_t *co)
{
    if (co == NULL)
        return;
    free(co->seats);
    free(co->index);
    free(co->q);
    free(co->stripes);
    free(co);
}

/* ---- members starting and ending (pool.c hands these over) ----------------- */

static bool member_started(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int status,
                           const char *why)
{
    shoal_checkout_t *co = p->co;
    int64_t at = shoal__co_find(co, pid);
    if (at < 0)
        return false;
    shoal_co_seat_t *s = &co->seats[at];
    if (s->state != SHOAL_CO_STARTING)
        return true; /* stopped already (its start took too long) */
    co->nstarting--;
    uint64_t now = shoal__now_ns();
    if (status == SHOAL_OK) {
        co->fails_in_row = 0;
        co->retry_ms = 0;
        if (p->state != SHOAL_POOL_DEGRADED) /* a degraded pool's wait stands */
            co->retry_at = 0;
        s->state = SHOAL_CO_FREE;
        s->used_ns = now;
        s->expires = shoal__co_lifetime(co, now);
        /* Its start deadline is gone (an armed tick for it finds nothing
         * due); what the offer sets is armed, not found by a pass over
         * every seat and taker: a pool of n members starting made n^2
         * steps (65536 members: 3 s of one thread). The armed tick is
         * no later than every other deadline already. */
        co->due_added = UINT64_MAX;
        shoal__co_offer(ctx, p, (uint32_t)at);
        shoal__co_arm_at(ctx->rt, ctx->tc, co, co->due_added);
        return true;
    }
    s->state = SHOAL_CO_ENDING; /* its init failed: it ends by itself */
    co->nending++;
    const char *text = why != NULL && why[0] ? why : shoal_strerror(status);
    /* One of the pool's own start: the start fails here (pool.c would,
     * next), before a replacement could start. */
    if (p->start_pending)
        co->start_lost = shoal__pool_start_fail(ctx, p, status, text);
    char what[300];
    snprintf(what, sizeof what, "a member did not start: %s", text);
    shoal__co_start_failed(ctx, p, now, what);
    shoal__co_fill(ctx, p);
    shoal__co_rearm(ctx, co);
    return true;
}

static bool member_exited(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_pid_t pid, int reason)
{
    shoal_checkout_t *co = p->co;
    int64_t at = shoal__co_find(co, pid);
    if (at < 0)
        return false;
    shoal_co_seat_t *s = &co->seats[at];
    /* Ended by a failure (checkout.h: failures): free or in use, or
     * stopped after one. */
    if (s->failed || s->state == SHOAL_CO_FREE || s->state == SHOAL_CO_IN_USE)
        shoal__co_member_failed(ctx, p, shoal__now_ns(), reason);
    /* A member that ends by a failure is in the log already (the actor's
     * end says why); one that ended by itself (shoal_exit) or was stopped
     * by someone else than the pool would otherwise be replaced without a
     * word. */
    if ((s->state == SHOAL_CO_FREE || s->state == SHOAL_CO_IN_USE) &&
        (reason == SHOAL_OK || reason == SHOAL_ESHUTDOWN))
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                   "member %" PRIu32 ".%" PRIu32 " ended while %s (%s, not by the pool): "
                   "counted %s; a new one replaces it",
                   shoal__pid_slot(pid), shoal__pid_gen(pid),
                   s->state == SHOAL_CO_FREE ? "free" : "in use",
                   reason == SHOAL_OK ? "it exited" : "stopped",
                   s->state == SHOAL_CO_FREE ? "killed_free" : "killed_in_use");
    switch (s->state) {
    case SHOAL_CO_FREE:
        shoal__co_count(co, SHOAL_CO_KILLED_FREE, 1);
        if (shoal__co_free_listed(co, (uint32_t)at))
            shoal__co_free_remove(co, (uint32_t)at);
        break;
    case SHOAL_CO_IN_USE:
        /* Its transaction was settled or handed back before this EXIT
         * (they come first from it); a holder hears that it ended. */
        shoal__co_count(co, SHOAL_CO_KILLED_IN_USE, 1);
        co->nin_use--;
        if (s->by == SHOAL_CO_BY_ACTOR) /* after its grant (checkout.h) */
            shoal__co_tell_holder(ctx->rt, ctx->tc, co, (uint32_t)at, reason);
        break;
    case SHOAL_CO_STARTING: { /* ended before its start notice */
        co->nstarting--;
        char what[200];
        snprintf(what, sizeof what, "a member ended before it started: %s", shoal_strerror(reason));
        shoal__co_start_failed(ctx, p, shoal__now_ns(), what);
        break;
    }
    case SHOAL_CO_ENDING:
        co->nending--;
        break;
    default:
        break;
    }
    shoal__co_index_del(co, (uint32_t)at);
    *s = (shoal_co_seat_t){.pid = SHOAL_PID_NONE, .state = SHOAL_CO_EMPTY};
    while (co->nseats != 0 && co->seats[co->nseats - 1].state == SHOAL_CO_EMPTY)
        co->nseats--;
    if (p->state == SHOAL_POOL_DRAINING) {
        if (co->nseats == 0)
            shoal__pool_drain_finish(ctx, p);
        return true;
    }
    shoal__co_fill(ctx, p);
    shoal__co_rearm(ctx, co);
    return true;
}

/* ---- the tick, settings, drain ------------------------------------------------ */

static void tick(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    shoal__pool_tick_came(ctx->rt, p, SHOAL__POOL_TICK_AT_CHECKOUT);
    co->tick_at = UINT64_MAX;
    uint64_t now = shoal__now_ns();
    shoal__co_queue_expire(ctx, co, now);
    shoal__co_sweep(ctx, p, now);
    if (co->retry_at != 0 && now >= co->retry_at) {
        co->retry_at = 0;
        co->fails_in_row = 0;
    }
    /* Degraded, and no member has failed for restart.within_ms: as a
     * forward pool recovers (workers.c: on_check). */
    uint64_t within = shoal__ms_to_ns(p->spec.restart.within_ms);
    if (p->state == SHOAL_POOL_DEGRADED && now - p->last_death_ns >= within) {
        p->state = SHOAL_POOL_RUNNING;
        p->backoff_ms = p->spec.restart.backoff_ms;
        shoal__log(ctx->rt, SHOAL_LOG_INFO, ctx->self, p->name,
                   "recovered: %" PRIu32 " members, no failure for %" PRIu64 " ms",
                   co->nfree + co->nin_use + co->nstarting, p->spec.restart.within_ms);
    }
    shoal__co_fill(ctx, p);
    shoal__co_rearm(ctx, co);
}

static bool message_locked(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    if (msg->kind == SHOAL_ENV_STARTED) {
        char why[256];
        size_t n = msg->size < sizeof why - 1 ? msg->size : sizeof why - 1;
        if (n != 0)
            memcpy(why, msg->data, n);
        why[n] = '\0';
        return member_started(ctx, p, msg->from, msg->status, why);
    }
    if (msg->kind == SHOAL_MSG_EXIT)
        return member_exited(ctx, p, msg->from, msg->status);
    if (msg->kind != SHOAL_MSG_CAST || !(msg->flags & SHOAL_MSG_PRIORITY))
        return false;
    if (msg->type == SHOAL__CHECKOUT_RETURN) {
        (void)shoal__co_return_locked(ctx, p, msg); /* a cast's refusal is nobody's to hear */
        return true;
    }
    if (msg->type == SHOAL__POOL_TICK_CHECKOUT && msg->from == ctx->self) {
        tick(ctx, p);
        return true;
    }
    if (msg->type == SHOAL__CHECKOUT_POKE) { /* checkout_fast.c: a look asked for */
        shoal_checkout_t *co = p->co;
        co->recycle_asked = false;
        /* Every free member, in FIFO order, offered again as a return
         * offers one (shoal__co_offer): a draining pool gives it to a
         * transaction waiting or stops it (one made free again after the
         * drain, its grant's taker gone), one past its lifetime is
         * replaced, one past a max lowered meanwhile ends, the first
         * taker waiting gets it; else it is free again. */
        shoal__co_offer_free(ctx, p);
        if (p->state == SHOAL_POOL_DRAINING)
            return true;
        if (co->spare_asked && co->nfree == 0)
            shoal__co_start_spare(ctx, p); /* a take found none */
        co->spare_asked = false;
        shoal__co_fill(ctx, p);
        shoal__co_rearm(ctx, co);
        return true;
    }
    return false;
}

bool shoal__checkout_message(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal__co_lock(p->co);
    bool mine = message_locked(ctx, p, msg);
    shoal__co_unlock(p);
    return mine;
}

int shoal__checkout_start(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    shoal__co_lock(co);
    co->open = true;
    uint64_t now = shoal__now_ns();
    if (co->cfg->cull_interval_ms != 0)
        co->next_cull = shoal__deadline_ns(now, co->cfg->cull_interval_ms);
    int rc =
        co->cfg->group != NULL ? shoal__group_join(ctx->rt, co->cfg->group, ctx->self) : SHOAL_OK;
    if (rc == SHOAL_OK)
        rc = shoal__co_start_init(ctx, p);
    shoal__co_rearm(ctx, co);
    shoal__co_unlock(p);
    return rc;
}

static int set_locked(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal_checkout_t *co = p->co;
    shoal_pool_checkout_update_t u;
    if (msg->size != sizeof u)
        return SHOAL_EINVAL;
    memcpy(&u, msg->data, sizeof u);
    shoal_pool_spec_t s = p->spec;
    s.size = u.init;
    s.max_size = u.max;
    s.checkout = u.checkout;
    s.checkout.group = co->cfg->group; /* not changed here */
    if (u.max == 0 || u.init > u.max || u.max > SHOAL_POOL_MAX_SIZE ||
        shoal__checkout_check(&s) != SHOAL_OK)
        return SHOAL_EINVAL;
    bool cull_changed = u.checkout.cull_interval_ms != co->cfg->cull_interval_ms;
    bool cull_on = co->cfg->cull_interval_ms == 0 && u.checkout.cull_interval_ms != 0;
    bool life_changed = u.checkout.max_lifetime_ms != co->cfg->max_lifetime_ms ||
                        u.checkout.max_lifetime_jitter_ms != co->cfg->max_lifetime_jitter_ms;
    p->spec.size = p->target = u.init;
    p->spec.max_size = u.max;
    p->spec.checkout = s.checkout;
    atomic_store_explicit(&co->txn_limit, (uint64_t)u.max + co->cfg->queue_max,
                          memory_order_relaxed);
    uint64_t now = shoal__now_ns();
    if (cull_changed)
        co->next_cull = co->cfg->cull_interval_ms != 0
                            ? shoal__deadline_ns(now, co->cfg->cull_interval_ms)
                            : UINT64_MAX;
    /* Without culling, returns on the consumers' threads do not stamp
     * when a member was last used (checkout_fast.c): from now on they do,
     * and the free members count as used now -- a nanosecond apart, in
     * the order they came back (from the head of a FIFO, the tail of a
     * LIFO), so that the one back first is culled first. */
    bool fifo = p->spec.strategy != SHOAL_POOL_STRATEGY_LIFO;
    uint64_t stamp = now - co->nfree;
    for (uint32_t i = fifo ? co->free_head : co->free_tail; cull_on && i != SHOAL_CO_NIL;
         i = fifo ? co->seats[i].next : co->seats[i].prev)
        co->seats[i].used_ns = ++stamp;
    /* A new lifetime holds for the members already there too, counted
     * from now (one started under "never" would else never be replaced);
     * a member in use is replaced only when it is returned, as ever. */
    for (uint32_t i = 0; life_changed && i < co->nseats; i++)
        if (co->seats[i].state == SHOAL_CO_FREE || co->seats[i].state == SHOAL_CO_IN_USE)
            co->seats[i].expires = shoal__co_lifetime(co, now);
    /* Fewer members allowed: free and starting ones past the new max end
     * now, those in use when they are returned (shoal__co_offer). */
    while (co->nfree + co->nin_use + co->nstarting > u.max && co->nfree != 0)
        shoal__co_stop(ctx, p, co->free_head);
    for (uint32_t i = 0; i < co->nseats && co->nfree + co->nin_use + co->nstarting > u.max; i++)
        if (co->seats[i].state == SHOAL_CO_STARTING)
            shoal__co_stop(ctx, p, i);
    shoal__co_queue_trim(ctx, co);
    shoal__co_fill(ctx, p);
    shoal__co_rearm(ctx, co);
    return SHOAL_OK;
}

int shoal__checkout_set(struct shoal_ctx_s *ctx, shoal_pool_t *p, const shoal_msg_t *msg)
{
    shoal__co_lock(p->co);
    int rc = set_locked(ctx, p, msg);
    shoal__co_unlock(p);
    return rc;
}

/* A draining pool's next step (checkout.h: draining), after it began or a
 * transaction came to it: its free members serve the transactions queued
 * (shoal__co_offer: else kept for one still in the mailbox, else
 * stopped); with none left to serve, members starting end too; with no
 * member and none in the mailbox, the pool ends (what is still queued is
 * dropped then: co_own_end). */
static void drain_step(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    shoal__co_offer_free(ctx, p);
    uint32_t mailbox = shoal__co_mailbox_txns(ctx);
    for (uint32_t i = 0; co->qlive == 0 && mailbox == 0 && i < co->nseats; i++)
        if (co->seats[i].state == SHOAL_CO_STARTING)
            shoal__co_stop(ctx, p, i);
    if (co->nseats == 0 && mailbox == 0)
        shoal__pool_drain_finish(ctx, p);
}

void shoal__checkout_drain(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    if (p->state == SHOAL_POOL_DRAINING)
        return;
    shoal__co_lock(co);
    co->open = false;
    p->state = SHOAL_POOL_DRAINING;
    shoal__rsv_close(&ctx->a->user_rsv); /* transactions now get SHOAL_ENOPROC */
    shoal__co_queue_shut_takes(ctx, co); /* those accepted are served first */
    drain_step(ctx, p);
    shoal__co_unlock(p);
    shoal__room_tell(ctx->rt, ctx->tc, p->g.pid, SHOAL_ENOPROC); /* nobody waits for room now */
}

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
    int rc = shoal__room_add(rt, g->pid, waiter,
                             atomic_load_explicit(&p->max_waiting, memory_order_relaxed));
    if (rc == SHOAL_EOVERLOAD)
        atomic_fetch_add_explicit(&p->waits_refused, 1, memory_order_relaxed);
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
         * refused every transaction. */
        uint32_t took;
        rc = shoal__deliver_many_plain(rt, tc, shoal__actor_at(rt, shoal__pid_slot(g->pid)), g->pid,
                                       &e, 1, 0, &took);
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
        drain_step(ctx, p);
    shoal__co_unlock(p);
    shoal__pool_publish(p);
}

static void co_own_message(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of(ctx->b->state);
    bool back = (shoal__env_flags(e) & SHOAL_ENV_HANDBACK) != 0;
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
        if (!back) {
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
    if (!back)
        shoal__co_mailed_done(p->co);
    if (p->state == SHOAL_POOL_DRAINING) {
        /* Accepted before the drain closed the mailbox (or handed back by
         * a member that ended): served as the ones queued, in order. */
        uint64_t now = shoal__now_ns();
        shoal_co_taker_t t = {.from = m->from, .since = now, .deadline = UINT64_MAX, .txn = m};
        if (shoal__co_queue_put(p->co, &t, back) != SHOAL_OK)
            shoal__co_txn_drop(ctx, p, m);
        drain_step(ctx, p);
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
    /* Transactions still waiting -- a drain's whose members all failed, or
     * any when the pool is stopped -- are dropped (counted; those in its
     * mailbox by the actor's end): the log says how many. */
    uint32_t lost = shoal__co_queue_flush(ctx, p, SHOAL_ENOPROC) + shoal__co_mailbox_txns(ctx);
    if (lost != 0)
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                   "ended with %" PRIu32 " transaction%s not run (queued for a member): dropped",
                   lost, lost == 1 ? "" : "s");
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
 * else by a return to it. */
static void member_done(struct shoal_ctx_s *ctx, bool ok)
{
    shoal_pool_t *p = shoal__pool_of_group(ctx->group);
    shoal__pool_count(ctx->tc, p, !ok, 0, 0, false);
    if (ok && shoal__co_fast_return(ctx->rt, ctx->tc, p, ctx->self, (uint32_t)ctx->member[0] - 1,
                                    ctx->self) != SHOAL__CO_SLOW)
        return;
    shoal_held_return_t r = {.member = ctx->self,
                             .how = ok ? SHOAL_RETURN_OK : SHOAL_RETURN_FAIL,
                             .seat = (uint32_t)ctx->member[0]};
    shoal__send(ctx->rt, ctx->tc, ctx->self, p->g.pid, SHOAL__CHECKOUT_RETURN, &r, sizeof r, true,
                NULL, NULL);
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
    return shoal__pool_hand_back(ctx, shoal__pool_of_group(g), to, e);
}

static void co_unref(shoal_runtime_t *rt, shoal_group_t *g)
{
    shoal__pool_unref(rt, shoal__pool_of_group(g));
}

/* A transaction's caller gave up (on the caller's thread). Still queued
 * -- put there from its sender's thread (checkout_fast.c) -- it is dropped
 * from here, now: a note to the pool's actor would wait behind the
 * members' turns while the members ran it. Else (given to a member, or in
 * the pool's own mailbox because the queue could not grow, or the pool
 * drains) the note goes to the pool's actor as before: an ordinary cast
 * from the caller, so it comes after a transaction still in that mailbox
 * (one producer's sends keep their order), and the actor drops it if it
 * is queued then (shoal__co_txn_gone). */
static void co_call_gone(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g,
                         shoal_pid_t caller, shoal_ref_t ref)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal_env_t *m = NULL;
    shoal__co_lock_tc(p->co, tc);
    if (p->co->open)
        m = shoal__co_txn_unqueue(p->co, caller, ref);
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
