/* checkout_members.c - a checkout pool's seats and the members in them
 * (checkout.h): starting members, stopping them, the free FIFO, and the
 * sweep of leases, start deadlines, culling and lifetimes. The pool's own
 * actor's turns only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/send.h"
#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

uint32_t shoal__co_live(const shoal_checkout_t *co)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < co->nseats; i++)
        n += co->seats[i].state != SHOAL_CO_EMPTY && co->seats[i].state != SHOAL_CO_ENDING;
    return n;
}

bool shoal__co_consistent(const shoal_checkout_t *co, char *why, size_t size)
{
    uint32_t n[5] = {0, 0, 0, 0, 0}, listed = 0;
    for (uint32_t i = 0; i < co->nseats; i++)
        n[co->seats[i].state]++;
    for (uint32_t i = co->free_head; i != SHOAL_CO_NIL && listed <= co->nseats;
         i = co->seats[i].next)
        listed += co->seats[i].state == SHOAL_CO_FREE ? 1 : 1000000;
    /* The index (checkout_index.c): each seat with a member found at its
     * own place, and nothing else in it. */
    uint32_t seated = co->nseats - n[SHOAL_CO_EMPTY], indexed = 0, found = 0;
    for (uint64_t k = 0; co->index != NULL && k < UINT64_C(1) << co->index_bits; k++)
        indexed += co->index[k] != 0;
    for (uint32_t i = 0; i < co->nseats; i++)
        found += co->seats[i].state != SHOAL_CO_EMPTY && shoal__co_find(co, co->seats[i].pid) == i;
    if (n[SHOAL_CO_FREE] == co->nfree && listed == co->nfree && n[SHOAL_CO_IN_USE] == co->nin_use &&
        n[SHOAL_CO_STARTING] == co->nstarting && n[SHOAL_CO_ENDING] == co->nending &&
        indexed == seated && found == seated)
        return true;
    snprintf(why, size,
             "free %u (counted %u, listed %u), in use %u (%u), starting %u (%u), ending %u (%u), "
             "seated %u (indexed %u, found %u)",
             n[SHOAL_CO_FREE], co->nfree, listed, n[SHOAL_CO_IN_USE], co->nin_use,
             n[SHOAL_CO_STARTING], co->nstarting, n[SHOAL_CO_ENDING], co->nending, seated, indexed,
             found);
    return false;
}

/* ---- the free list: taken from the head; given back at the tail (FIFO:
 * use spreads over every member) or at the head (LIFO: the member given
 * back last is taken first, and the others age) ---------------------------- */

void shoal__co_free_push(shoal_checkout_t *co, uint32_t i)
{
    shoal_co_seat_t *s = &co->seats[i];
    s->state = SHOAL_CO_FREE;
    co->nfree++;
    /* relaxed: the strategy is a value on its own (commands.c). */
    if (atomic_load_explicit(&co->pool->strategy, memory_order_relaxed) ==
        SHOAL_POOL_STRATEGY_LIFO) {
        s->prev = SHOAL_CO_NIL;
        s->next = co->free_head;
        if (co->free_head != SHOAL_CO_NIL)
            co->seats[co->free_head].prev = i;
        else
            co->free_tail = i;
        co->free_head = i;
        return;
    }
    s->next = SHOAL_CO_NIL;
    s->prev = co->free_tail;
    if (co->free_tail != SHOAL_CO_NIL)
        co->seats[co->free_tail].next = i;
    else
        co->free_head = i;
    co->free_tail = i;
}

bool shoal__co_free_listed(const shoal_checkout_t *co, uint32_t i)
{
    return co->free_head == i || co->seats[i].prev != SHOAL_CO_NIL;
}

void shoal__co_free_remove(shoal_checkout_t *co, uint32_t i)
{
    shoal_co_seat_t *s = &co->seats[i];
    if (s->prev != SHOAL_CO_NIL)
        co->seats[s->prev].next = s->next;
    else
        co->free_head = s->next;
    if (s->next != SHOAL_CO_NIL)
        co->seats[s->next].prev = s->prev;
    else
        co->free_tail = s->prev;
    s->prev = s->next = SHOAL_CO_NIL;
    co->nfree--;
}

uint32_t shoal__co_free_pop(shoal_checkout_t *co)
{
    uint32_t i = co->free_head;
    if (i != SHOAL_CO_NIL)
        shoal__co_free_remove(co, i);
    return i;
}

/* ---- starting and stopping ------------------------------------------------ */

uint64_t shoal__co_lifetime(shoal_checkout_t *co, uint64_t now)
{
    if (co->cfg->max_lifetime_ms == 0)
        return UINT64_MAX;
    uint64_t life = shoal__ms_to_ns(co->cfg->max_lifetime_ms);
    uint64_t jitter = shoal__ms_to_ns(co->cfg->max_lifetime_jitter_ms);
    if (life == UINT64_MAX)
        return UINT64_MAX;
    if (jitter != 0) { /* uniform in [-jitter, +jitter] (xorshift32) */
        uint32_t x = co->prng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        co->prng = x;
        uint64_t r = (((uint64_t)x << 32) | x) % (2 * jitter + 1);
        life = life - jitter + r;
    }
    return life >= UINT64_MAX - now ? UINT64_MAX : now + life;
}

/* An empty seat (a new one past the last if none), or SHOAL_CO_NIL. */
static uint32_t seat_empty(shoal_checkout_t *co)
{
    /* Looked for only when one is there (the seats not counted in a
     * state): a pool starting its members appends each. */
    bool any = co->nfree + co->nin_use + co->nstarting + co->nending < co->nseats;
    for (uint32_t i = 0; any && i < co->nseats; i++)
        if (co->seats[i].state == SHOAL_CO_EMPTY)
            return i;
    if (co->nseats == co->seats_cap) {
        /* Doubled, aligned: a seat is one line (checkout.h). */
        size_t cap = co->seats_cap ? (size_t)co->seats_cap * 2 : 8;
        shoal_co_seat_t *s = cap <= UINT32_MAX ? aligned_alloc(64, cap * sizeof *s) : NULL;
        if (s == NULL)
            return SHOAL_CO_NIL;
        if (co->nseats != 0)
            memcpy(s, co->seats, co->nseats * sizeof *s);
        free(co->seats);
        co->seats = s;
        co->seats_cap = (uint32_t)cap;
    }
    if (shoal__co_index_reserve(co, co->seats_cap) != SHOAL_OK)
        return SHOAL_CO_NIL;
    return co->nseats++;
}

/* Starts one member: STARTING until its start notice (or its deadline). */
static int start_one(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now, bool for_start)
{
    shoal_checkout_t *co = p->co;
    uint32_t i = seat_empty(co);
    if (i == SHOAL_CO_NIL)
        return SHOAL_ENOMEM;
    uint64_t words[SHOAL_MEMBER_WORDS] = {(uint64_t)i + 1};
    shoal_pid_t pid;
    int rc = shoal__pool_spawn_member(ctx, p, &p->spec, &p->hold, true, words, &pid);
    if (rc != SHOAL_OK) {
        if (i == co->nseats - 1)
            co->nseats--;
        return rc;
    }
    co->seats[i] = (shoal_co_seat_t){
        .pid = pid,
        .state = SHOAL_CO_STARTING,
        .for_start = for_start,
        .prev = SHOAL_CO_NIL,
        .next = SHOAL_CO_NIL,
        .deadline = shoal__deadline_ns(now, co->cfg->member_start_timeout_ms),
        .expires = UINT64_MAX,
        .used_ns = now,
    };
    shoal__co_due(co, co->seats[i].deadline);
    shoal__co_index_put(co, i);
    co->nstarting++;
    return SHOAL_OK;
}

int shoal__co_start_init(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    uint64_t now = shoal__now_ns();
    for (uint32_t k = 0; k < p->spec.size; k++) {
        int rc = start_one(ctx, p, now, true);
        if (rc != SHOAL_OK)
            return rc;
        p->start_awaiting++; /* the pool has started when all have (pool.c) */
    }
    return SHOAL_OK;
}

void shoal__co_fill(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    if (p->state == SHOAL_POOL_DRAINING || co->start_lost ||
        atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed))
        return;
    uint64_t now = shoal__now_ns();
    if (co->retry_at != 0 && now < co->retry_at)
        return; /* starts failed add_member_retry times, or degraded: after the backoff */
    for (;;) {
        /* Ending members count against max: one may be an init still
         * running on its thread (checkout.h: members). */
        uint32_t alive = co->nfree + co->nin_use + co->nstarting;
        bool room = alive + co->nending < p->spec.max_size;
        bool for_init = alive < p->spec.size && room;
        bool for_takers = co->qlive > co->nstarting && room;
        if (!for_init && !for_takers)
            return;
        int rc = start_one(ctx, p, now, false);
        if (rc != SHOAL_OK) {
            shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                       "could not start a member: %s; trying again in %" PRIu64 " ms",
                       shoal_strerror(rc), p->spec.restart.backoff_ms);
            co->retry_at = shoal__deadline_ns(now, p->spec.restart.backoff_ms);
            shoal__co_due(co, co->retry_at);
            return;
        }
        if (co->owed_restarts != 0) { /* a failed member's replacement, late */
            co->owed_restarts--;
            shoal__pool_restart_note(p, now);
            p->restarts++;
        }
    }
}

void shoal__co_start_spare(struct shoal_ctx_s *ctx, shoal_pool_t *p)
{
    shoal_checkout_t *co = p->co;
    uint64_t now = shoal__now_ns();
    if (p->state == SHOAL_POOL_DRAINING || co->start_lost ||
        atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed) ||
        (co->retry_at != 0 && now < co->retry_at) || co->nstarting > co->qlive ||
        co->nfree + co->nin_use + co->nstarting + co->nending >= p->spec.max_size)
        return;
    if (start_one(ctx, p, now, false) != SHOAL_OK)
        co->retry_at = shoal__deadline_ns(now, p->spec.restart.backoff_ms);
    shoal__co_due(co, co->retry_at);
}

void shoal__co_start_failed(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now,
                            const char *what)
{
    shoal_checkout_t *co = p->co;
    shoal__co_count(co, SHOAL_CO_START_FAILURES, 1);
    bool first = co->fails_in_row++ == 0;
    if (co->fails_in_row < co->cfg->add_member_retry) {
        if (first) /* the rest of the round is told by its end */
            shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name, "%s", what);
        return;
    }
    /* Enough tries for now: starts wait, longer after each round, and
     * takers hear so. One line a round, not one a failure. */
    uint64_t wait = co->retry_ms != 0 ? co->retry_ms : p->spec.restart.backoff_ms;
    uint64_t cap = p->spec.restart.backoff_ms * SHOAL__POOL_BACKOFF_GROWTH;
    co->retry_ms = wait * 2 < cap ? wait * 2 : cap;
    uint64_t at = shoal__deadline_ns(now, wait);
    if (at > co->retry_at) /* a degraded pool's wait may be longer */
        co->retry_at = at;
    shoal__co_due(co, co->retry_at);
    shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
               "%s; %" PRIu32 " start%s in a row failed: starting again in %" PRIu64 " ms", what,
               co->fails_in_row, co->fails_in_row == 1 ? "" : "s", wait);
    /* Not while a member is free: one freed on a consumer's thread while
     * they waited is theirs when its POKE comes (checkout_fast.c). (Not
     * offered here: a caller may hold a pointer into the seats, which a
     * start from the offer can move.) */
    if (co->nstarting == 0 && co->nfree == 0)
        shoal__co_queue_fail_takes(ctx, co);
}

void shoal__co_member_failed(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now, int reason)
{
    shoal_checkout_t *co = p->co;
    if (p->state == SHOAL_POOL_DRAINING ||
        atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed))
        return;
    p->last_death_ns = now;
    if (p->state == SHOAL_POOL_RUNNING && shoal__pool_restart_allowed(p, now)) {
        shoal__pool_restart_note(p, now);
        p->restarts++;
        return;
    }
    /* Past the budget: starts wait, as a forward pool's restarts do
     * (workers.c: degrade, on_retry); a failure after a wait doubles it.
     * Its replacement, started after the wait, is a restart then (as
     * on_retry's are counted): shoal__co_fill. */
    co->owed_restarts++;
    if (p->state == SHOAL_POOL_RUNNING) {
        p->state = SHOAL_POOL_DEGRADED;
        p->backoff_ms = p->spec.restart.backoff_ms;
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                   "degraded: more than %" PRIu32 " restarts within %" PRIu64
                   " ms (last: %s); serving with %" PRIu32 " of at most %" PRIu32
                   " members, starting more in %" PRIu64 " ms",
                   p->spec.restart.max, p->spec.restart.within_ms, shoal_strerror(reason),
                   co->nfree + co->nin_use + co->nstarting, p->spec.max_size, p->backoff_ms);
    } else if (co->retry_at == 0 || now >= co->retry_at) {
        uint64_t cap = p->spec.restart.backoff_ms * SHOAL__POOL_BACKOFF_GROWTH;
        p->backoff_ms = p->backoff_ms * 2 < cap ? p->backoff_ms * 2 : cap;
    } else {
        return; /* a wait is on */
    }
    co->retry_at = shoal__deadline_ns(now, p->backoff_ms);
    shoal__co_due(co, co->retry_at);
}

uint32_t shoal__co_free_take(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now)
{
    shoal_checkout_t *co = p->co;
    uint32_t i;
    while ((i = shoal__co_free_pop(co)) != SHOAL_CO_NIL) {
        if (now < co->seats[i].expires)
            return i;
        shoal__co_count(co, SHOAL_CO_RECYCLED, 1); /* its replacement: fill */
        shoal__co_stop(ctx, p, i);                 /* FREE, popped: unlisted */
    }
    return SHOAL_CO_NIL;
}

void shoal__co_stop(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t i)
{
    shoal_checkout_t *co = p->co;
    shoal_co_seat_t *s = &co->seats[i];
    switch (s->state) {
    case SHOAL_CO_FREE: /* listed, or being offered (shoal__co_offer) */
        if (shoal__co_free_listed(co, i))
            shoal__co_free_remove(co, i);
        break;
    case SHOAL_CO_IN_USE:
        co->nin_use--;
        break;
    case SHOAL_CO_STARTING:
        co->nstarting--;
        break;
    default:
        return; /* ending already */
    }
    s->state = SHOAL_CO_ENDING;
    s->owner = SHOAL_PID_NONE;
    co->nending++;
    /* Gone already, its EXIT is on the way: either way, the seat empties then. */
    shoal__send_system(ctx->rt, ctx->tc, s->pid, SHOAL_ENV_STOP, ctx->self,
                       (uint32_t)SHOAL_ESHUTDOWN);
}

void shoal__co_set_limit(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint32_t limit)
{
    shoal_checkout_t *co = p->co;
    /* Each member sets its own limit, as a forward pool's workers do
     * (workers.c); one ending meanwhile is not told, harmlessly. */
    shoal__co_lock(co);
    for (uint32_t i = 0; i < co->nseats; i++)
        if (co->seats[i].state != SHOAL_CO_EMPTY && co->seats[i].state != SHOAL_CO_ENDING)
            shoal__send_system(ctx->rt, ctx->tc, co->seats[i].pid, SHOAL_ENV_LIMIT, ctx->self,
                               limit == SHOAL_MAILBOX_UNBOUNDED ? 0 : limit);
    shoal__co_unlock(p);
}

/* ---- the sweep --------------------------------------------------------------- */

uint64_t shoal__co_seats_next(const shoal_checkout_t *co)
{
    uint64_t at = UINT64_MAX;
    for (uint32_t i = 0; i < co->nseats; i++) {
        const shoal_co_seat_t *s = &co->seats[i];
        bool watched = s->state == SHOAL_CO_STARTING ||
                       (s->state == SHOAL_CO_IN_USE && s->by == SHOAL_CO_BY_THREAD);
        if (watched && s->deadline < at)
            at = s->deadline;
    }
    return at;
}

/* Free members unused past max_age end, the longest unused first, down to
 * init; free members past their lifetime are replaced. */
static void cull(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now)
{
    shoal_checkout_t *co = p->co;
    uint64_t age = shoal__ms_to_ns(co->cfg->max_age_ms);
    for (uint32_t i = co->free_head; i != SHOAL_CO_NIL;) {
        uint32_t next = co->seats[i].next;
        if (now >= co->seats[i].expires) {
            shoal__co_count(co, SHOAL_CO_RECYCLED, 1);
            shoal__co_stop(ctx, p, i);
        }
        i = next;
    }
    for (;;) {
        uint32_t alive = co->nfree + co->nin_use + co->nstarting;
        if (alive <= p->spec.size || co->nfree == 0)
            return;
        uint32_t oldest = SHOAL_CO_NIL;
        for (uint32_t i = co->free_head; i != SHOAL_CO_NIL; i = co->seats[i].next)
            if (oldest == SHOAL_CO_NIL || co->seats[i].used_ns < co->seats[oldest].used_ns)
                oldest = i;
        if (now - co->seats[oldest].used_ns <= age)
            return;
        shoal__co_count(co, SHOAL_CO_CULLED, 1);
        shoal__co_stop(ctx, p, oldest);
    }
}

void shoal__co_sweep(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t now)
{
    shoal_checkout_t *co = p->co;
    for (uint32_t i = 0; i < co->nseats; i++) {
        shoal_co_seat_t *s = &co->seats[i];
        if (s->state == SHOAL_CO_STARTING && now >= s->deadline) {
            char what[200];
            int n = snprintf(what, sizeof what,
                             "a member did not start within %" PRIu64 " ms (member_start_timeout)",
                             co->cfg->member_start_timeout_ms);
            /* One of the pool's own start: that start fails, as when an
             * init fails (pool.c), and the pool ends with nothing more
             * started. (A spare a take started meanwhile is a failed start
             * like any other.) */
            if (p->start_pending && s->for_start)
                co->start_lost = shoal__pool_start_fail(ctx, p, SHOAL_ETIMEDOUT, what);
            snprintf(what + n, sizeof what - (size_t)n,
                     ": stopping it (its init still runs: it counts against max until it ends)");
            shoal__co_stop(ctx, p, i);
            shoal__co_start_failed(ctx, p, now, what);
        } else if (s->state == SHOAL_CO_IN_USE && s->by == SHOAL_CO_BY_THREAD &&
                   now >= s->deadline) {
            /* The lease its take was given (the pool's may have changed
             * since: seat_give). */
            shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, p->name,
                       "a thread held member %" PRIu32 ".%" PRIu32 " past its lease of %" PRIu64
                       " ms: destroyed",
                       shoal__pid_slot(s->pid), shoal__pid_gen(s->pid),
                       (s->deadline - s->used_ns) / 1000000u);
            shoal__co_count(co, SHOAL_CO_LEASE_EXPIRED, 1);
            co->expired[co->expired_next++ % SHOAL_CO_EXPIRED_RING] = s->pid;
            shoal__co_stop(ctx, p, i);
        }
    }
    if (now >= co->next_cull) {
        cull(ctx, p, now);
        co->next_cull = shoal__deadline_ns(now, co->cfg->cull_interval_ms);
    }
}
