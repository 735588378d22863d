/* pull.c - the pull kind: its ops for the actor layer (actor/group.h), the
 * buffer's admission and wake-up, and what the pool's actor changes live.
 * The protocol is in pull.h; the rest of a pull pool (its worker table,
 * restarts, resizing, swaps) is the pool record's, shared with the forward
 * kind (pool.c, workers.c, swap.c).
 */
#include "pool/pull.h"

#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

/* The most items one take moves (the rest of a member's demand waits for
 * its next take). */
#define TAKE_MAX 64u

/* A member's own words (pull.h). */
typedef shoal_pull_member_t member_t;

static member_t *member_of(struct shoal_ctx_s *ctx) { return (member_t *)(void *)ctx->member; }

static shoal_pool_t *pool_of_ctx(struct shoal_ctx_s *ctx)
{
    return shoal__pool_of_group(ctx->group);
}

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
    if (shoal__inject_init(&q->queue, ring_size(spec->buffer + (uint64_t)spec->size *
                                                                   spec->prefetch)) != SHOAL_OK) {
        free(q);
        return SHOAL_ENOMEM;
    }
    pthread_mutex_init(&q->room_lock, NULL);
    pthread_mutex_init(&q->seats_lock, NULL);
    q->buffer = spec->buffer;
    q->redeliver = spec->redeliver;
    q->dead_letter = spec->dead_letter;
    q->has_source = spec->source != NULL;
    atomic_store_explicit(&q->prefetch, spec->prefetch, memory_order_relaxed);
    atomic_store_explicit(&q->source_pid, SHOAL_PID_NONE, memory_order_relaxed);
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
    atomic_store_explicit(&q->capacity, cap, memory_order_relaxed);
    /* More room (a resize, a bigger buffer): producers waiting for it hear. */
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
    uint64_t cap = atomic_load_explicit(&q->capacity, memory_order_relaxed);
    uint64_t admitted = shoal__pull_admitted(q, memory_order_relaxed);
    uint64_t buffered = shoal__inject_count(&q->queue, memory_order_relaxed);
    uint64_t held = admitted > buffered ? admitted - buffered : 0;
    uint64_t can_hold = (uint64_t)st->pool_size * pf;
    st->prefetch = pf;
    st->buffer = cap > (uint64_t)st->target_size * pf ? cap - (uint64_t)st->target_size * pf : 0;
    st->buffer_depth = buffered;
    st->demand = can_hold > held ? can_hold - held : 0;
    st->source_state = !q->has_source
                           ? SHOAL_SOURCE_NONE
                           : atomic_load_explicit(&q->source_state, memory_order_relaxed);
    st->source_restarts = atomic_load_explicit(&q->source_restarts, memory_order_relaxed);
    st->source_items = atomic_load_explicit(&q->source_items, memory_order_relaxed);
}

/* ---- a member's seat (pull.h: seats; the table: pull_seats.c) ------------------------ */

/* A member's counter: it is the only writer. */
static inline void seat_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* The member starts waiting for work, or stops: when it takes an item, or
 * retires or ends. A turn that takes nothing (a sender's wake-up that
 * another member answered, the pool listing it again after a move in the
 * table) does not start its wait over: idle expiry (elastic.c) counts
 * from the first. */
static void idle_begin(member_t *m)
{
    if (m->seat != NULL && atomic_load_explicit(&m->seat->idle_since, memory_order_relaxed) == 0)
        atomic_store_explicit(&m->seat->idle_since, shoal__now_ns(), memory_order_relaxed);
}
static void idle_end(member_t *m)
{
    if (m->seat == NULL)
        return;
    uint64_t since = atomic_load_explicit(&m->seat->idle_since, memory_order_relaxed);
    if (since == 0)
        return;
    uint64_t now = shoal__now_ns();
    seat_add(&m->seat->idle_ns, now > since ? now - since : 0);
    atomic_store_explicit(&m->seat->idle_since, 0, memory_order_relaxed);
}

/* ---- senders ----------------------------------------------------------------- */

/* Drops what a pool that has ended still finds in its buffer: a call is
 * answered with SHOAL_ENOPROC, everything is counted as dropped. */
static void sweep(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
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
        atomic_fetch_add_explicit(&p->pull->settles, 1, memory_order_relaxed);
        shoal__env_free(tc, e);
    }
}

/* Schedules one IDLE member (pull.h: wake-up). */
static void wake(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p)
{
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
}

/* Puts an admitted item into the buffer and wakes a member if one sleeps;
 * if the pool has ended meanwhile, sweeps (pull.h: its end). */
static void put(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e)
{
    shoal_pull_t *q = p->pull;
    shoal__inject_push(&q->queue, e); /* counted by its claim [seq_cst] (inject.h) */
    /* seq_cst: the sender's read of the wake-up pair (pull.h). */
    if (atomic_load_explicit(&q->sleepers, memory_order_seq_cst) != 0)
        wake(rt, tc, p);
    else if (atomic_load_explicit(&p->lazy, memory_order_relaxed) &&
             atomic_load_explicit(&p->nworkers, memory_order_relaxed) <
                 atomic_load_explicit(&p->lazy_max, memory_order_relaxed))
        shoal__pool_lazy_ask(rt, tc, p); /* no member waits: elastic.c may start one */
    /* seq_cst: pairs with own_end's store of ended: it sweeps after it, or
     * we see it and sweep ourselves. */
    if (atomic_load_explicit(&p->pull_ended, memory_order_seq_cst))
        sweep(rt, tc, p);
}

/* Admits up to `want` items (pull.h: admission), the source's `reserved`
 * one alone: *got (1 .. want) of them on SHOAL_OK; SHOAL_EBUSY when there
 * is room for none (counted unhandled); SHOAL_ENOPROC when it drains or
 * has ended. One CAS on admits for all of them. */
static int admit(shoal_pull_t *q, shoal_pool_stripe_t *st, bool shared, bool reserved,
                 uint64_t want, uint64_t *got)
{
    uint64_t n = atomic_load_explicit(&q->admits, memory_order_relaxed);
    uint64_t out = atomic_load_explicit(&q->seen, memory_order_relaxed);
    for (;;) {
        if (n & PULL_CLOSED)
            return SHOAL_ENOPROC; /* draining or ended (pull.h: admission) */
        uint64_t cap = atomic_load_explicit(&q->capacity, memory_order_relaxed);
        uint64_t rsv = atomic_load_explicit(&q->reserved, memory_order_relaxed);
        /* n - out is never below admitted; out past n (n read before out
         * moved on) looks full too, and is looked at again. */
        if (!reserved && (out > n || n - out + rsv >= cap)) {
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
            if (n - out + rsv >= cap) {
                shoal__stripe_add(&st->unhandled, 1, shared);
                return SHOAL_EBUSY;
            }
        }
        /* As many as the room `seen` shows: never more than there is. */
        uint64_t k = reserved ? 1 : cap - (n - out + rsv) < want ? cap - (n - out + rsv) : want;
        /* relaxed: the count publishes nothing (pull.h: admission). */
        if (atomic_compare_exchange_weak_explicit(&q->admits, &n, n + k, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *got = k;
            return SHOAL_OK;
        }
    }
}

/* An admitted item, flagged and stamped as the pool's, before it is put. */
static void admitted(shoal_tcache_t *tc, shoal_pool_t *p, shoal_env_t *e)
{
    if (shoal__pool_sampled(tc) || atomic_load_explicit(&p->g.timed, memory_order_relaxed))
        shoal__pool_stamp(e);
    e->meta |= SHOAL_ENV_POOLED;
    if (p->pull->redeliver != 0 && shoal__env_kind(e) == SHOAL_MSG_CAST)
        e->meta |= SHOAL_ENV_KEEP; /* its payload kept for another worker */
}

static int pull_route(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal_pull_t *q = p->pull;
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, tc, &shared);
    shoal_pid_t src = atomic_load_explicit(&q->source_pid, memory_order_relaxed);
    /* The source's item, in the room set aside for it: only the source's
     * thread lowers `reserved` (pull_source.c). */
    bool reserved = src != SHOAL_PID_NONE && e->from == src &&
                    atomic_load_explicit(&q->reserved, memory_order_relaxed) != 0;
    uint64_t got;
    int rc = admit(q, st, shared, reserved, 1, &got);
    if (rc != SHOAL_OK)
        return rc;
    if (reserved) {
        atomic_fetch_sub_explicit(&q->reserved, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&q->source_items, 1, memory_order_relaxed);
    }
    admitted(tc, p, e);
    /* Counted before it can be taken: no reader sees it settled first. */
    shoal__stripe_add(&st->forwarded, 1, shared);
    put(rt, tc, p, e);
    return SHOAL_OK;
}

/* route_many (actor/group.h): admitted as many at a time as there is room
 * for, until none is. The source's items go one by one (its reserved
 * room). */
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
        if ((rc = admit(q, st, shared, false, n - done, &got)) != SHOAL_OK)
            break;
        for (uint64_t i = 0; i < got; i++)
            admitted(tc, p, envs[done + i]);
        shoal__stripe_add(&st->forwarded, got, shared);
        for (uint64_t i = 0; i < got; i++)
            put(rt, tc, p, envs[done + i]);
        done += (uint32_t)got;
    }
    *took = done;
    return rc;
}

/* ---- members ----------------------------------------------------------------- */

void shoal__pull_listed(shoal_pool_t *p, shoal_pid_t pid)
{
    /* A member that has never run a turn has not announced itself as a
     * sleeper yet (a replacement without init runs none): it runs one now,
     * takes what there is, or announces itself (pull.h: wake-up). The
     * seq_cst fence orders the listing before our read of its schedule
     * word, for senders whose scan follows (wake). */
    atomic_thread_fence(memory_order_seq_cst);
    shoal_actor_t *a = shoal__actor_at(p->rt, shoal__pid_slot(pid));
    /* acquire: the member's spawn (its generation) is visible. */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_acquire);
    if (shoal__rsv_gen(w) == shoal__pid_gen(pid))
        shoal__schedule(p->rt, shoal__tcache_get(p->rt), a);
}

uint32_t shoal__pull_held(struct shoal_ctx_s *ctx)
{
    return member_of(ctx)->held - (uint32_t)ctx->group_handled;
}

static bool has_work(struct shoal_ctx_s *ctx, memory_order mo)
{
    shoal_pull_t *q = pool_of_ctx(ctx)->pull;
    if (ctx->b->ext->retiring)
        return false;
    if (member_of(ctx)->held >= atomic_load_explicit(&q->prefetch, memory_order_relaxed))
        return false;
    return shoal__inject_count(&q->queue, mo) != 0;
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

static shoal_env_t *pull_take(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = pool_of_ctx(ctx);
    shoal_pull_t *q = p->pull;
    member_t *m = member_of(ctx);
    if (m->asleep) {
        m->asleep = 0;
        atomic_fetch_sub_explicit(&q->sleepers, 1, memory_order_relaxed);
    }
    if (ctx->b->ext->retiring) {
        idle_end(m);
        /* Removed from the pool: it finishes what it holds and takes
         * nothing more. A sender may have woken it for an item (it was
         * still listed, IDLE, pull.h: wake-up): that wake-up goes on to a
         * listed member. */
        if (shoal__inject_count(&q->queue, memory_order_seq_cst) != 0)
            wake(ctx->rt, ctx->tc, p);
        return NULL;
    }
    /* The successes of this turn are not settled yet (turn_end). */
    uint32_t held = m->held - (uint32_t)ctx->group_handled;
    uint32_t pf = atomic_load_explicit(&q->prefetch, memory_order_relaxed);
    if (held >= pf)
        return NULL;
    uint32_t want = pf - held < TAKE_MAX ? pf - held : TAKE_MAX;
    void *batch[TAKE_MAX];
    size_t k = shoal__inject_take(&q->queue, batch, want);
    if (k == 0)
        return NULL; /* still waiting for work (idle_begin) */
    idle_end(m);
    m->held += (uint32_t)k;
    size_t kept = k;
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, ctx->tc, &shared);
    shoal__stripe_add(&st->delivered, k, shared);
    /* The rest of a batch waits in the member's own mailbox: it holds it. */
    for (size_t i = 1; i < k; i++) {
        if (shoal__deliver_over(ctx->rt, ctx->tc, ctx->self, batch[i]) != SHOAL_OK) {
            m->held--;
            kept--;
            put(ctx->rt, ctx->tc, p, batch[i]);
        }
    }
    if (m->seat != NULL)
        seat_add(&m->seat->taken, kept);
    return batch[0];
}

static int pull_more(struct shoal_ctx_s *ctx)
{
    if (has_work(ctx, memory_order_relaxed))
        return SHOAL_GROUP_MORE;
    member_t *m = member_of(ctx);
    if (ctx->b->ext->retiring ||
        m->held >= atomic_load_explicit(&pool_of_ctx(ctx)->pull->prefetch, memory_order_relaxed))
        return SHOAL_GROUP_NONE; /* it takes nothing more now: nothing to wait for */
    if (!m->asleep) {
        m->asleep = 1;
        idle_begin(m);
        /* seq_cst: the member's announcement (pull.h: wake-up). */
        atomic_fetch_add_explicit(&pool_of_ctx(ctx)->pull->sleepers, 1, memory_order_seq_cst);
    }
    return SHOAL_GROUP_WATCH;
}

/* After the member's IDLE store: the buffer only (the member may already
 * run elsewhere). */
static bool pull_recheck(shoal_group_t *g)
{
    /* seq_cst: the member's second read of the wake-up pair (pull.h). */
    return shoal__inject_count(&shoal__pool_of_group(g)->pull->queue, memory_order_seq_cst) != 0;
}

/* n items leave the buffer's admission (handled, failed, dropped by a
 * member), and whoever waits for room hears of it. */
static void settle(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t n)
{
    /* seq_cst: the member's half of the room pairs (pull.h, pull_source.c). */
    uint64_t out = atomic_fetch_add_explicit(&p->pull->settles, n, memory_order_seq_cst) + n;
    shoal__pull_room_after_settle(ctx, p, out);
}

/* One item settled: it leaves the member and the buffer's admission. */
static void release(struct shoal_ctx_s *ctx, uint64_t n, bool ok)
{
    member_t *m = member_of(ctx);
    m->held -= (uint32_t)n;
    if (m->seat != NULL) {
        if (ok)
            seat_add(&m->seat->completed, n);
    }
    settle(ctx, pool_of_ctx(ctx), n);
}

/* A cast whose handler failed or panicked, kept for another try (route
 * flagged it SHOAL_ENV_KEEP): into the buffer again while it has tries
 * left, the attempt counted in its ref field (a cast has none); then to
 * dead_letter, as an ordinary send from its first sender. True if it went
 * either way (counted), false: it failed for good. */
static bool give_again(struct shoal_ctx_s *ctx, shoal_pool_t *p, shoal_env_t *e)
{
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, ctx->tc, &shared);
    uint64_t tries = shoal__env_ref(e);
    shoal_pid_t dl = p->pull->dead_letter;
    if (tries >= p->pull->redeliver && dl == SHOAL_PID_NONE)
        return false;
    shoal_env_t *m = shoal__env_move(ctx->tc, e); /* e may be its mailbox's node */
    if (m == NULL)
        return false;
    m->meta &= ~(uint64_t)SHOAL_ENV_STAMP; /* its wait starts again */
    if (tries < p->pull->redeliver) {
        shoal__env_set_meta(m, tries + 1, SHOAL_MSG_CAST, shoal__env_flags(m));
        member_of(ctx)->held--; /* still admitted: it is the buffer's again */
        shoal__stripe_add(&st->redelivered, 1, shared);
        put(ctx->rt, ctx->tc, p, m);
        return true;
    }
    shoal__env_set_meta(m, 0, SHOAL_MSG_CAST,
                        shoal__env_flags(m) & ~(SHOAL_ENV_KEEP | SHOAL_ENV_POOLED));
    if (shoal__deliver(ctx->rt, ctx->tc, dl, m, false) != SHOAL_OK) {
        shoal__env_free(ctx->tc, m); /* the dead letter refused it: failed after all */
        return false;
    }
    shoal__stripe_add(&st->dead_lettered, 1, shared);
    release(ctx, 1, false);
    return true;
}

static void pull_settled(struct shoal_ctx_s *ctx, shoal_env_t *e, bool ok,
                         const shoal_group_timing_t *t)
{
    shoal_pool_t *p = pool_of_ctx(ctx);
    if (!ok && (shoal__env_flags(e) & SHOAL_ENV_KEEP) && give_again(ctx, p, e))
        return;
    shoal__pool_count(ctx->tc, p, !ok, t ? t->wait_ns : 0, t ? t->service_ns : 0, t != NULL);
    release(ctx, 1, ok);
}

static void pull_turn_end(struct shoal_ctx_s *ctx, uint64_t handled)
{
    shoal__pool_count_handled(ctx->tc, pool_of_ctx(ctx), handled);
    release(ctx, handled, true);
}

/* A member that ends is no sleeper any more (it may be counted as one: a
 * STOP while it was idle). */
static void pull_member_end(struct shoal_ctx_s *ctx)
{
    member_t *m = member_of(ctx);
    if (m->asleep) {
        m->asleep = 0;
        atomic_fetch_sub_explicit(&pool_of_ctx(ctx)->pull->sleepers, 1, memory_order_relaxed);
    }
    idle_end(m);
}

/* A member that ends gives back what it held, for the others to take. The
 * pool's own actor, ending with sends in its own mailbox (a sender read the
 * slot's kind stale, or the pool above placed them there), has no member
 * words: those were never admitted here; as a forward pool's, they go up to
 * the pool this one is a worker of (`to`), else they are counted received
 * and dropped here, and the caller dead-letters them. */
static bool pull_hand_back(struct shoal_ctx_s *ctx, shoal_group_t *g, shoal_pid_t to,
                           shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    if (ctx->member == NULL) {
        if (to != SHOAL_PID_NONE && shoal__pool_hand_back(ctx, p, to, e))
            return true;
        bool shared;
        shoal_pool_stripe_t *st = shoal__pool_stripe(p, ctx->tc, &shared);
        shoal__stripe_add(&st->forwarded, 1, shared);
        if (to == SHOAL_PID_NONE)
            shoal__pool_count_dropped(ctx->tc, p); /* (else hand_back counted it) */
        return false;
    }
    member_of(ctx)->held--;
    shoal_env_t *m = NULL;
    if (!atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed))
        m = shoal__env_move(ctx->tc, e); /* e is its mailbox's node */
    if (m != NULL) {
        put(ctx->rt, ctx->tc, p, m);
        return true;
    }
    shoal__pool_count_dropped(ctx->tc, p);
    /* As release() settles: an earlier settle may have read this item's
     * admission as no room. */
    settle(ctx, p, 1);
    return false;
}

/* ---- the pool's own actor ------------------------------------------------------- */

/* A send that found the pool's own mailbox (its kind read stale): placed
 * in the buffer like any, over the capacity (the sender was told OK). */
static void pull_own_message(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of(ctx->b->state);
    shoal_env_t *m = shoal__env_move(ctx->tc, e);
    if (m == NULL) {
        shoal__dead_letter(ctx, e);
        shoal__pool_count_dropped(ctx->tc, p);
        return;
    }
    atomic_fetch_add_explicit(&p->pull->admits, 1, memory_order_relaxed);
    m->meta |= SHOAL_ENV_POOLED;
    bool shared;
    shoal_pool_stripe_t *st = shoal__pool_stripe(p, ctx->tc, &shared);
    shoal__stripe_add(&st->forwarded, 1, shared);
    put(ctx->rt, ctx->tc, p, m);
}

static void pull_own_end(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = shoal__pool_ended(ctx);
    shoal__pull_close(p);
    /* seq_cst: pairs with put's load (a sender or member that pushes after
     * our sweep sees it and sweeps). */
    atomic_store_explicit(&p->pull_ended, 1, memory_order_seq_cst);
    sweep(ctx->rt, ctx->tc, p);
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
    .settled = pull_settled,
    .turn_end = pull_turn_end,
    .take = pull_take,
    .more = pull_more,
    .recheck = pull_recheck,
    .hand_back = pull_hand_back,
    .member_end = pull_member_end,
    .room = shoal__pull_room_ask,
    .room_cancel = shoal__pull_room_cancel,
    .busy = shoal__pool_busy,
    .unref = pull_unref,
};
