/* pull_members.c - the pull kind's members' side (pull.h: members,
 * wake-up, admission), in each member's own turns: it takes items from the
 * buffer up to its prefetch, announces itself as a sleeper when there are
 * none, settles what it handled, failed or dropped (a failed cast given
 * again, or to the dead letter), and hands back what it holds when it ends;
 * its seat's counters (the table: pull_seats.c). These are the kind's
 * ops->take, more, recheck, settled, turn_end, hand_back and member_end
 * (actor/group.h; the ops table is in pull.c). The protocol is in pull.h.
 */
#include "pool/pull.h"

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

/* ---- members ----------------------------------------------------------------- */

void shoal__pull_listed(shoal_pool_t *p, shoal_pid_t pid)
{
    /* A member takes nothing and announces nothing until it is listed (a
     * swap's new members run init beside the old ones and must not serve
     * before COMMIT: pull.h, wake-up): it is told so, and the message runs
     * it a turn -- it takes what there is, or announces itself. The
     * seq_cst fence orders the listing before the send, for senders whose
     * scan follows (shoal__pull_wake). A stale PID: the send finds it gone. */
    atomic_thread_fence(memory_order_seq_cst);
    shoal__send_system(p->rt, shoal__tcache_get(p->rt), pid, SHOAL_ENV_LISTED, p->g.pid, 0);
}

/* Not listed by its pool yet, or removed from it: it takes nothing. */
static bool unlisted(struct shoal_ctx_s *ctx)
{
    return !ctx->b->ext->listed || ctx->b->ext->retiring;
}

uint32_t shoal__pull_held(struct shoal_ctx_s *ctx)
{
    return member_of(ctx)->held - (uint32_t)ctx->group_handled;
}

static bool has_work(struct shoal_ctx_s *ctx, memory_order mo)
{
    shoal_pull_t *q = pool_of_ctx(ctx)->pull;
    if (unlisted(ctx))
        return false;
    if (member_of(ctx)->held >= atomic_load_explicit(&q->prefetch, memory_order_relaxed))
        return false;
    return shoal__inject_count(&q->queue, mo) != 0;
}

shoal_env_t *shoal__pull_take(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = pool_of_ctx(ctx);
    shoal_pull_t *q = p->pull;
    member_t *m = member_of(ctx);
    if (m->asleep) {
        m->asleep = 0;
        atomic_fetch_sub_explicit(&q->sleepers, 1, memory_order_relaxed);
    }
    if (!ctx->b->ext->listed)
        return NULL; /* no sender can have woken it: it is in no table */
    if (ctx->b->ext->retiring) {
        idle_end(m);
        /* Removed from the pool: it finishes what it holds and takes
         * nothing more. A sender may have woken it for an item (it was
         * still listed, IDLE, pull.h: wake-up): that wake-up goes on to a
         * listed member. seq_cst: as a sender's read after its claim. */
        if (shoal__inject_count(&q->queue, memory_order_seq_cst) != 0)
            shoal__pull_wake(ctx->rt, ctx->tc, p);
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
            shoal__pull_put(ctx->rt, ctx->tc, p, batch[i]);
        }
    }
    if (m->seat != NULL)
        seat_add(&m->seat->taken, kept);
    return batch[0];
}

int shoal__pull_more(struct shoal_ctx_s *ctx)
{
    if (has_work(ctx, memory_order_relaxed))
        return SHOAL_GROUP_MORE;
    member_t *m = member_of(ctx);
    if (unlisted(ctx) ||
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
bool shoal__pull_recheck(shoal_group_t *g)
{
    shoal_pull_t *q = shoal__pool_of_group(g)->pull;
    /* seq_cst: a sleep counted after the IDLE store, before the read below
     * (pull.h: the vain mark). */
    atomic_fetch_add_explicit(&q->sleeps, 1, memory_order_seq_cst);
    /* seq_cst: the member's second read of the wake-up pair (pull.h). */
    return shoal__inject_count(&q->queue, memory_order_seq_cst) != 0;
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
        shoal__pull_put(ctx->rt, ctx->tc, p, m);
        return true;
    }
    shoal__env_set_meta(m, 0, SHOAL_MSG_CAST,
                        shoal__env_flags(m) & ~(SHOAL_ENV_KEEP | SHOAL_ENV_POOLED));
    if (shoal__deliver(ctx->rt, ctx->tc, dl, m, false) != SHOAL_OK) {
        shoal__env_free(ctx->tc, m); /* the dead letter refused it: failed after all */
        return false;
    }
    shoal__pool_count_dead_lettered(ctx->tc, p); /* and in the pools above it, settled */
    release(ctx, 1, false);
    return true;
}

void shoal__pull_settled(struct shoal_ctx_s *ctx, shoal_env_t *e, bool ok,
                         const shoal_group_timing_t *t)
{
    shoal_pool_t *p = pool_of_ctx(ctx);
    if (!ok && (shoal__env_flags(e) & SHOAL_ENV_KEEP) && give_again(ctx, p, e))
        return;
    shoal__pool_count(ctx->tc, p, !ok, t ? t->wait_ns : 0, t ? t->service_ns : 0, t != NULL);
    release(ctx, 1, ok);
}

void shoal__pull_turn_end(struct shoal_ctx_s *ctx, uint64_t handled)
{
    shoal__pool_count_handled(ctx->tc, pool_of_ctx(ctx), handled);
    release(ctx, handled, true);
}

/* A member that ends is no sleeper any more (it may be counted as one: a
 * STOP while it was idle). A sender may have woken it for an item it now
 * never takes (a STOP, read before any take in its turn): that wake-up
 * goes on to another member, as a retiring member's does (pull.h:
 * wake-up) -- else, with the others asleep and nothing moving it, the
 * item waited for the next put. seq_cst: as a sender's read after its
 * claim. */
void shoal__pull_member_end(struct shoal_ctx_s *ctx)
{
    shoal_pool_t *p = pool_of_ctx(ctx);
    member_t *m = member_of(ctx);
    if (m->asleep) {
        m->asleep = 0;
        atomic_fetch_sub_explicit(&p->pull->sleepers, 1, memory_order_relaxed);
    }
    idle_end(m);
    if (shoal__inject_count(&p->pull->queue, memory_order_seq_cst) != 0)
        shoal__pull_wake(ctx->rt, ctx->tc, p);
}

/* A member that ends gives back what it held, for the others to take. The
 * pool's own actor, ending with sends in its own mailbox (a sender read the
 * slot's kind stale, or the pool above placed them there), has no member
 * words: those were never admitted here; as a forward pool's, they go up to
 * the pool this one is a worker of (`to`), else they are counted received
 * and dropped here, and the caller dead-letters them. */
bool shoal__pull_hand_back(struct shoal_ctx_s *ctx, shoal_group_t *g, shoal_pid_t to,
                           shoal_env_t *e)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    if (ctx->member == NULL) {
        if (to != SHOAL_PID_NONE && shoal__pool_hand_back(ctx, p, to, e))
            return true;
        shoal__pool_count_forwarded(ctx->tc, p);
        if (to == SHOAL_PID_NONE) {
            shoal__pool_count_dropped(ctx->tc, p); /* (else hand_back counted it) */
            shoal__pull_dropped(p, e);
        }
        return false;
    }
    member_of(ctx)->held--;
    shoal_env_t *m = NULL;
    if (!atomic_load_explicit(&ctx->rt->stopping, memory_order_relaxed))
        m = shoal__env_move(ctx->tc, e); /* e is its mailbox's node */
    if (m != NULL) {
        shoal__pull_put(ctx->rt, ctx->tc, p, m);
        return true;
    }
    shoal__pool_count_dropped(ctx->tc, p);
    shoal__pull_dropped(p, e);
    /* As release() settles: an earlier settle may have read this item's
     * admission as no room. */
    settle(ctx, p, 1);
    return false;
}
