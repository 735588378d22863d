/* checkout.c - the checkout kind (checkout.h): its spec and record, what
 * its own actor is told (members started and ended, its tick, returns),
 * its live settings and drain. The kind's ops (a sender's transaction, a
 * member's end of one, room for transactions) are checkout_ops.c's;
 * giving members out and taking them back, checkout_take.c's; the seats
 * and the members in them, checkout_members.c's; what other threads read
 * of it, checkout_stats.c's. */
#include "actor/room.h"
#include "pool/checkout.h"
#include "pool/checkout_members.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/held.h"
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
    if (p->start_pending && s->for_start)
        co->start_lost = shoal__pool_start_fail(ctx, p, status, text);
    char what[300];
    snprintf(what, sizeof what, "a member did not start: %s", text);
    shoal__co_start_failed(ctx, p, now, what);
    shoal__co_fill(ctx, p);
    shoal__co_rearm(ctx, co);
    return true;
}

bool shoal__checkout_start_counts(const shoal_pool_t *p, shoal_pid_t member)
{
    const shoal_checkout_t *co = p->co;
    int64_t at = shoal__co_find(co, member);
    return at >= 0 && co->seats[at].state == SHOAL_CO_STARTING && co->seats[at].for_start;
}

/* With the lock: a draining pool with no member left ends, once every
 * transaction it accepted has come out of its mailbox (`mailbox` of them
 * are still there: each comes to the queue in a later turn, and calls
 * this again). What is queued then no member will run -- none starts
 * while it drains -- and is dropped now, before the drain's callers hear
 * it done: the counts they read are final. */
static void drain_end_if_done(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t mailbox)
{
    if (mailbox != 0)
        return;
    shoal__co_drop_unserved(ctx, p);
    shoal__pool_drain_finish(ctx, p);
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
            drain_end_if_done(ctx, p, shoal__co_mailbox_txns(ctx));
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
    /* Running, back at init: no failed member is still to be replaced (one
     * past a max lowered meanwhile never will be). */
    if (p->state == SHOAL_POOL_RUNNING && co->nfree + co->nin_use + co->nstarting >= p->spec.size)
        co->owed_restarts = 0;
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
    /* A reload's pool joins closed, and opens once the reload has
     * committed (shoal__checkout_go): its memory is taken now, where a
     * failure fails the reload. */
    int rc = co->cfg->group != NULL
                 ? shoal__group_join(ctx->rt, co->cfg->group, ctx->self, !p->held)
                 : SHOAL_OK;
    if (rc == SHOAL_OK)
        rc = shoal__co_start_init(ctx, p);
    shoal__co_rearm(ctx, co);
    shoal__co_unlock(p);
    return rc;
}

void shoal__checkout_go(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    shoal__co_lock(co);
    bool join = co->open && co->cfg->group != NULL;
    /* Its members, spawned gated (workers.c), and those still starting. */
    for (uint32_t i = 0; i < co->nseats; i++)
        if (co->seats[i].state != SHOAL_CO_EMPTY && co->seats[i].pid != SHOAL_PID_NONE)
            shoal__pool_open_worker(ctx, p, co->seats[i].pid);
    shoal__co_unlock(p);
    if (join)
        (void)shoal__group_open(ctx->rt, co->cfg->group, ctx->self); /* joined at its start */
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
     * now, those in use when they are returned (shoal__co_offer); each
     * counted culled. */
    while (co->nfree + co->nin_use + co->nstarting > u.max && co->nfree != 0) {
        shoal__co_count(co, SHOAL_CO_CULLED, 1);
        shoal__co_stop(ctx, p, co->free_head);
    }
    for (uint32_t i = 0; i < co->nseats && co->nfree + co->nin_use + co->nstarting > u.max; i++)
        if (co->seats[i].state == SHOAL_CO_STARTING) {
            shoal__co_count(co, SHOAL_CO_CULLED, 1);
            shoal__co_stop(ctx, p, i);
        }
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
 * member and none in the mailbox, the pool ends. */
void shoal__co_drain_step(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    shoal__co_offer_free(ctx, p);
    uint32_t mailbox = shoal__co_mailbox_txns(ctx);
    for (uint32_t i = 0; co->qlive == 0 && mailbox == 0 && i < co->nseats; i++)
        if (co->seats[i].state == SHOAL_CO_STARTING)
            shoal__co_stop(ctx, p, i);
    if (co->nseats == 0)
        drain_end_if_done(ctx, p, mailbox);
}

void shoal__checkout_drain(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    if (p->state == SHOAL_POOL_DRAINING)
        return;
    shoal__co_lock(co);
    co->open = false;
    p->state = SHOAL_POOL_DRAINING;
    /* Said at once, not at the end of this turn: a group's pick (relaxed,
     * checkout_api.c) passes it by from now on. */
    atomic_store_explicit(&p->pub_state, p->state, memory_order_relaxed);
    shoal__rsv_close(&ctx->a->user_rsv); /* transactions now get SHOAL_ENOPROC */
    shoal__co_queue_shut_takes(ctx, co); /* those accepted are served first */
    shoal__co_drain_step(ctx, p);
    shoal__co_unlock(p);
    shoal__room_tell(ctx->rt, ctx->tc, p->g.pid, SHOAL_ENOPROC); /* nobody waits for room now */
}
