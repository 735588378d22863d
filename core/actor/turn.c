/* turn.c - an actor's turn (shoal__actor_run): the system mailbox first,
 * then up to `throughput` user messages (a group's member asks its group
 * for more when its mailbox is empty), re-checking the system mailbox
 * before each, so a control message waits for at most one more user
 * message; then the actor goes to the back of its worker's ring if work
 * remains, or becomes IDLE (the protocol is in actor.h). Handling one
 * envelope is actor.c's (handle.h); the end of a turn that ended the actor
 * is end.c's (shoal__actor_end).
 */
#include <stdlib.h>

#include "actor/actor.h"
#include "actor/call.h"
#include "actor/ctx.h"
#include "actor/group.h"
#include "actor/handle.h"
#include "actor/room.h"
#include "runtime/qsbr.h"
#include "runtime/runtime.h"
#include "sched/bulkhead.h"
#include "sched/futex.h"
#include "sched/worker.h"

/* Pops the next user message inside a turn. The pop count that senders
 * read for the limit is published lazily: when the queue looks empty, every
 * publish_every pops, and at the end of the turn. A sender that reads a stale
 * count sees the mailbox fuller than it is, never emptier (mailbox.h), and
 * the receiver's cache line is no longer pulled away by every send. */
static shoal_env_t *pop_user(struct shoal_ctx_s *ctx, shoal_actor_back_t *b, shoal_actor_t *a,
                             shoal_tcache_t *tc)
{
    shoal_mq_node_t *retired;
    shoal_mq_node_t *n = shoal__mq_pop(&b->user_head, &retired);
    if (n == NULL)
        return NULL;
    shoal_mq_node_t *after = atomic_load_explicit(&n->next, memory_order_relaxed);
    if (after != NULL)
        __builtin_prefetch(after, 0, 3);
    if (retired != &a->user_stub)
        shoal__env_free(tc, shoal__env_of(retired));
    ctx->deq = (ctx->deq + 1) & SHOAL_RSV_COUNT_MASK;
    shoal__queued_out(tc, shoal__env_of(n));
    if (after == NULL || ++ctx->unpublished >= ctx->publish_every) {
        /* release: see shoal__actor_pop. */
        atomic_store_explicit(&b->user_deq, ctx->deq, memory_order_release);
        ctx->unpublished = 0;
    }
    return shoal__env_of(n);
}

static void publish_deq(struct shoal_ctx_s *ctx)
{
    if (ctx->unpublished != 0) {
        /* release: as in shoal__actor_pop (the count a room asker reads). */
        atomic_store_explicit(&ctx->b->user_deq, ctx->deq, memory_order_release);
        ctx->unpublished = 0;
    }
}

/* A timed group's member (group.h: timed): the time since the last mark
 * goes to its group as busy time. Once per message, so a long turn shows
 * as it goes, not all at its end. */
static void busy_mark(struct shoal_ctx_s *ctx)
{
    uint64_t now = shoal__now_ns();
    ctx->group->ops->busy(ctx, now - ctx->turn_start);
    ctx->turn_start = now;
}

/* A member's message: counted for its group, and timed when the sender
 * stamped it. handle() drops the payload, not the envelope: settled still
 * sees its flags, type and sender. A message counted at once (not with the
 * turn's) has its pop count published first, as at the end of a turn: a
 * reader of the counters, then the depth (stats.c), never sees it both
 * handled and queued. */
static void handle_for_group(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    const shoal_group_ops_t *ops = ctx->group->ops;
    bool user = shoal__env_is_pooled(e);
    if (!(shoal__env_flags(e) & SHOAL_ENV_STAMP)) {
        bool ok = shoal__actor_handle_user(ctx, e);
        bool timed = ctx->turn_start != 0;
        if (timed)
            busy_mark(ctx);
        /* Counted now: a process that may die (exact), or beside its busy
         * time (timed: autoscale divides one by the other). */
        if (ok && user && !ctx->group_exact && !timed) {
            ctx->group_handled++; /* counted once per turn (actor_run) */
        } else if (user) {
            publish_deq(ctx);
            if (ok)
                ops->turn_end(ctx, 1);
            else
                ops->settled(ctx, e, false, NULL);
        }
        return;
    }
    uint64_t sent = *shoal__env_stamp(e);
    uint64_t start = shoal__now_ns();
    bool ok = shoal__actor_handle_user(ctx, e);
    uint64_t end = shoal__now_ns();
    if (ctx->turn_start != 0) {
        ops->busy(ctx, end - ctx->turn_start);
        ctx->turn_start = end;
    }
    shoal_group_timing_t t = {start > sent ? start - sent : 0, end - start};
    if (user) {
        publish_deq(ctx);
        ops->settled(ctx, e, ok, ok ? &t : NULL);
    }
}

/* run_messages' fast path: handle() for a message ctx->fast_meta
 * describes, and a member's count for its group. A panic unwinds with
 * ctx->cur set, as from handle(). */
static inline void handle_fast(struct shoal_ctx_s *ctx, const shoal_actor_back_t *b, shoal_env_t *e)
{
    ctx->cur = e;
    ctx->error[0] = '\0'; /* shoal_ctx_error is per callback */
    shoal_worker_t *w = ctx->w;
    uint64_t watch = shoal__watch_enter(w); /* the monitor's view (sched/monitor.c) */
    shoal_msg_t msg = {
        .type = e->type,
        .kind = SHOAL_MSG_CAST,
        .data = e->size != 0 ? e->payload.bytes : NULL,
        .size = e->size,
        .from = e->from,
        .ref = shoal__env_ref(e),
    };
    int rc = b->beh->handle_message(ctx, b->state, &msg);
    shoal__watch_leave(w, watch);
    SHOAL_STAT_ADD(ctx->tc, msgs_handled, 1);
    ctx->cur = NULL;
    if (__builtin_expect(rc != SHOAL_OK, 0)) {
        shoal__ctx_fail(ctx, rc);
        if (ctx->group != NULL) { /* failed: settled at once (handle_for_group) */
            publish_deq(ctx);
            ctx->group->ops->settled(ctx, e, false, NULL);
        }
        return;
    }
    if (ctx->group != NULL)
        ctx->group_handled++; /* counted once per turn (actor_run) */
}

/* What a member's group holds for it once its mailbox is empty. */
static shoal_env_t *take_item(struct shoal_ctx_s *ctx)
{
    shoal_env_t *(*take)(struct shoal_ctx_s *) = ctx->group->ops->take;
    return take != NULL ? take(ctx) : NULL;
}

/* A gated actor was opened (actor.c: SHOAL_ENV_OPEN): what its gate set
 * aside is handled now, in the order it came, before anything after the
 * OPEN. Each is the turn's own, not a mailbox's node (ctx->taken: freed
 * after a panic); one left when the actor ends is dropped by end.c. */
static void gate_replay(struct shoal_ctx_s *ctx)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    ctx->opened = false;
    while (x->gate_head != NULL && !ctx->exiting) {
        shoal_env_t *e = x->gate_head;
        x->gate_head = shoal__env_of(atomic_load_explicit(&e->node.next, memory_order_relaxed));
        if (x->gate_head == NULL)
            x->gate_tail = NULL;
        ctx->taken = e;
        shoal__actor_handle(ctx, e);
        ctx->taken = NULL;
        shoal__env_free(ctx->tc, e);
    }
    if (!ctx->exiting) /* the calls whose tick came while it was gated (actor.c) */
        shoal__calls_rearm(ctx);
}

/* The body of a turn. Locals here are not used after a panic unwinds. */
static void run_messages(struct shoal_ctx_s *ctx)
{
    /* The turn's actor, read once: the handler's calls may write *ctx,
     * never which actor it is. */
    shoal_actor_t *a = ctx->a;
    shoal_actor_back_t *b = ctx->b;
    shoal_tcache_t *tc = ctx->tc;
    /* Gated: the system mailbox only (an OPEN there ends the gate; the
     * user messages wait for the next turn). share: budget's value mod 16
     * when a sibling is looked for (below). */
    uint32_t budget = ctx->gated ? 0 : ctx->rt->throughput, share = (budget - 1) & 15u;
    for (;;) {
        /* The system mailbox first, through its dummy node (actor.h): a
         * message reserved but not linked yet is found at the end of the
         * turn (pending). Looked at here before the pop's call: it is
         * empty for almost every message. */
        shoal_env_t *e;
        while (atomic_load_explicit(&b->sys_head->next, memory_order_relaxed) != NULL &&
               (e = shoal__actor_pop(tc, a, true)) != NULL) {
            shoal__actor_handle(ctx, e);
            if (__builtin_expect(ctx->opened, 0))
                gate_replay(ctx);
            if (ctx->exiting)
                return;
        }
        if (budget == 0)
            return;
        e = pop_user(ctx, b, a, tc);
        if (e == NULL && ctx->group != NULL)
            e = ctx->taken = take_item(ctx);
        if (e == NULL)
            return;
        /* A long turn: the ring's waiting actors may want a parked
         * sibling, looked for before the second message and every 16th
         * after it (a look reads the ring's ends and, when it holds any,
         * the dispatcher's spinning and parked counts): one message
         * handled, mod 16. */
        if ((budget & 15u) == share)
            shoal__sched_share(ctx->w);
        budget--;
        if (((uint32_t)e->meta & ctx->fast_mask) == ctx->fast_meta)
            handle_fast(ctx, b, e);
        else if (ctx->group != NULL)
            handle_for_group(ctx, e);
        else
            shoal__actor_handle_user(ctx, e);
        if (ctx->taken != NULL) { /* not a mailbox's node: ours to free */
            shoal__env_free(tc, ctx->taken);
            ctx->taken = NULL;
        }
        if (ctx->exiting || ctx->yield) /* yield: shoal_yield, or a handler that ran long */
            return;
    }
}

/* A retiring member ends once it has popped the final count of its closed
 * mailbox (its group closes it, then sends RETIRE). Checked after every
 * turn, however it ended (budget, yield, empty): a retiring worker with an
 * empty mailbox is never scheduled again. The relaxed load is enough: the
 * pop of RETIRE (acquire) ordered it after the close, so it reads the final
 * word. */
static void retire_if_done(struct shoal_ctx_s *ctx)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x != NULL && x->retiring &&
        shoal__rsv_count(atomic_load_explicit(&ctx->a->user_rsv, memory_order_relaxed)) == ctx->deq)
        shoal__ctx_fail(ctx, SHOAL_OK);
}

/* Messages reserved but not yet popped, given the worker's pop counts;
 * a gated actor's user messages are not (they wait for its OPEN, which
 * comes to the system mailbox). */
static bool pending(shoal_actor_t *a, uint32_t udeq, uint32_t sdeq, bool gated, memory_order mo)
{
    return (!gated && shoal__rsv_count(atomic_load_explicit(&a->user_rsv, mo)) != udeq) ||
           shoal__rsv_count(atomic_load_explicit(&a->sys_rsv, mo)) != sdeq;
}

/* Whether a member's group has work for it beyond its mailbox (group.h). */
static int group_more(struct shoal_ctx_s *ctx)
{
    int (*more)(struct shoal_ctx_s *) = ctx->group != NULL ? ctx->group->ops->more : NULL;
    return more != NULL ? more(ctx) : SHOAL_GROUP_NONE;
}

/* gated: ctx->gated, a constant at each call (turn_finish), so that the
 * turns of actors never gated pay nothing for the gate here. */
static inline __attribute__((always_inline)) void end_turn(struct shoal_ctx_s *ctx, bool gated)
{
    shoal_worker_t *w = ctx->w;
    shoal_actor_t *a = ctx->a;
    shoal_actor_back_t *b = ctx->b;
    if (w->rt->debug_checks)
        shoal__owner_leave(a);
    /* Read the pop counts while we still own the actor: once it is IDLE,
     * another worker may run it and move them. */
    uint32_t udeq = atomic_load_explicit(&b->user_deq, memory_order_relaxed);
    uint32_t sdeq = b->sys_deq;
    /* Who may wait for room in it (room.h), read while it is ours: a
     * member, itself and its groups; an actor in no group, itself (its own
     * flag is read in place); a group's own actor, nobody. */
    shoal_pid_t rooms[SHOAL_ROOM_RECEIVERS];
    unsigned nrooms = ctx->group != NULL ? shoal__room_receivers(ctx, rooms) : 0;
    bool alone = ctx->group == NULL && ctx->own == NULL;
    shoal_pid_t self = ctx->self;
    int more = SHOAL_GROUP_NONE;
    if (pending(a, udeq, sdeq, gated, memory_order_relaxed) ||
        (!gated && (more = group_more(ctx)) == SHOAL_GROUP_MORE)) { /* gated: no work */
        if (nrooms != 0)
            shoal__room_drain(w->rt, &w->tc, rooms, nrooms, memory_order_relaxed);
        else if (alone &&
                 (atomic_load_explicit(&a->limit, memory_order_relaxed) & SHOAL_LIMIT_ROOM))
            shoal__room_drain_flagged(w->rt, &w->tc, &self, 1, memory_order_relaxed);
        atomic_store_explicit(&a->sched, SHOAL_SCHED_SCHEDULED, memory_order_relaxed);
        shoal__sched_push(w->rt, &w->tc, a);
        return;
    }
    /* From the IDLE store on, another worker may run the actor: only what
     * was read above, and shared words, are ours to read. The group's
     * record may lose the member's reference then: a read-side region
     * (qsbr.h, left at the end of the turn) keeps it for recheck. */
    shoal_group_t *g = more == SHOAL_GROUP_WATCH ? ctx->group : NULL;
    if (g != NULL)
        shoal__qsbr_enter(&w->tc);
    /* seq_cst store, then seq_cst reloads: the worker's half of the Dekker
     * pair with shoal__rsv_reserve + shoal__schedule (actor.h), and with a
     * group's senders that wake idle members (recheck, group.h). */
    atomic_store_explicit(&a->sched, SHOAL_SCHED_IDLE, memory_order_seq_cst);
    /* seq_cst: the drainer's load after its IDLE store (room.h). */
    if (nrooms != 0)
        shoal__room_drain(w->rt, &w->tc, rooms, nrooms, memory_order_seq_cst);
    else if (alone && (atomic_load_explicit(&a->limit, memory_order_seq_cst) & SHOAL_LIMIT_ROOM))
        shoal__room_drain_flagged(w->rt, &w->tc, &self, 1, memory_order_seq_cst);
    if (pending(a, udeq, sdeq, gated, memory_order_seq_cst) || (g != NULL && g->ops->recheck(g))) {
        uint32_t idle = SHOAL_SCHED_IDLE;
        if (atomic_compare_exchange_strong_explicit(&a->sched, &idle, SHOAL_SCHED_SCHEDULED,
                                                    memory_order_seq_cst, memory_order_relaxed))
            shoal__sched_push(w->rt, &w->tc, a);
    }
}

/* After shoal_panic unwound to shoal__actor_run. */
static void after_panic(struct shoal_ctx_s *ctx)
{
    shoal__watch_unwound(ctx->w);
    free(ctx->inspect.buf); /* a panic in an inspect callback */
    ctx->inspect = (struct shoal_inspect_s){0};
    shoal_env_t *e = ctx->cur;
    if (e != NULL) {
        if (shoal__env_kind(e) == SHOAL_MSG_CALL || shoal__env_kind(e) == SHOAL_ENV_INSPECT) {
            struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = SHOAL_EPANIC};
            shoal__reply_send(ctx->rt, ctx->tc, ctx->self, e->from, shoal__env_ref(e), &reply);
        }
        if (shoal__env_kind(e) == SHOAL_ENV_INIT)
            ctx->init_failed = true;
        shoal__actor_init_over(ctx);
        if (ctx->group != NULL && shoal__env_is_pooled(e)) {
            publish_deq(ctx); /* as handle_for_group: not handled and queued */
            ctx->group->ops->settled(ctx, e, false, NULL);
        }
        shoal__env_drop_payload(e);
        ctx->cur = NULL;
    }
    if (ctx->taken != NULL) {
        shoal__env_free(ctx->tc, ctx->taken);
        ctx->taken = NULL;
    }
    ctx->exiting = 0;
    shoal__ctx_fail(ctx, SHOAL_EPANIC);
}

/* What a turn of `a` needs to know about it, into ctx. False: the
 * bulkhead holds it (sched/bulkhead.h), and nothing of it runs now. */
static inline bool turn_begin(shoal_worker_t *w, struct shoal_ctx_s *ctx, shoal_actor_t *a)
{
    shoal_runtime_t *rt = w->rt;
    ctx->a = a;
    ctx->b = shoal__actor_back(rt, a);
    ctx->self = shoal__actor_pid(rt, a);
    ctx->cur = NULL;
    ctx->exiting = 0;
    ctx->reason = SHOAL_OK;
    ctx->panic_text[0] = '\0';
    ctx->init_failed = false;
    ctx->in_terminate = false;
    ctx->yield = false;
    ctx->taken = NULL;
    shoal_actor_ext_t *x = ctx->b->ext;
    uint32_t kind = atomic_load_explicit(&a->kind, memory_order_relaxed);
    if (__builtin_expect(x == NULL && kind != SHOAL_ACTOR_GROUP, 1)) {
        /* A plain actor, in no group, that sends uncounted. */
        ctx->own = NULL;
        ctx->group = NULL;
        ctx->member = NULL;
        ctx->sends = NULL;
        ctx->group_exact = false;
        ctx->turn_start = 0;
        ctx->gated = false;
        ctx->name = ctx->b->beh->name;
    } else {
        /* A nested group's own actor is a member of the group above, but
         * it handles no work: only leaf members count for their groups. */
        ctx->own = kind == SHOAL_ACTOR_GROUP ? atomic_load_explicit(&a->group, memory_order_relaxed)
                                             : NULL;
        ctx->group = x != NULL && ctx->own == NULL ? x->member_of : NULL;
        ctx->member = ctx->group != NULL ? x->member : NULL;
        ctx->sends = x != NULL ? x->sends : NULL;
        ctx->group_exact = ctx->group != NULL && ctx->group->exact;
        ctx->gated = x != NULL && x->gated;
        ctx->name = ctx->b->beh->name;
        if (ctx->group != NULL)
            ctx->name = ctx->group->label;
        else if (ctx->own != NULL)
            ctx->name = ctx->own->name;
        if (ctx->group != NULL && shoal__bulkhead_closing(rt) &&
            shoal__bulkhead_hold(rt, a, ctx->group))
            return false;
        /* A timed group's member (group.h): the turn's time is its busy
         * time, marked after each message (handle_for_group) and at the
         * end. */
        ctx->turn_start =
            ctx->group != NULL && atomic_load_explicit(&ctx->group->timed, memory_order_relaxed)
                ? shoal__now_ns()
                : 0;
    }
    /* The fast path (run_messages): a plain cast -- no priority, no heap
     * payload, nothing kept, no send time -- to an actor in no group, or
     * one that came through its group (POOLED) to a member that counts
     * once a turn. */
    bool fast = ctx->own == NULL && !ctx->group_exact && ctx->turn_start == 0;
    ctx->fast_mask = 0xff00u | SHOAL_ENV_PRIORITY | SHOAL_ENV_HEAP | SHOAL_ENV_KEEP |
                     SHOAL_ENV_STAMP | SHOAL_ENV_POOLED;
    ctx->fast_meta =
        !fast ? UINT32_MAX /* no meta under the mask is that */
              : (uint32_t)SHOAL_MSG_CAST << 8 | (ctx->group != NULL ? SHOAL_ENV_POOLED : 0);
    ctx->deq = atomic_load_explicit(&ctx->b->user_deq, memory_order_relaxed);
    ctx->unpublished = 0;
    uint32_t limit = shoal__actor_limit(a);
    ctx->publish_every = limit == 0 ? 64 : limit < 8 ? 1 : limit / 8 < 16 ? limit / 8 : 16;
    if (rt->debug_checks && !shoal__owner_enter(a, w->id)) {
        shoal__log(rt, SHOAL_LOG_ERROR, ctx->self, NULL,
                   "actor is running on two threads at once (worker %u)", w->id);
        abort();
    }
    atomic_store_explicit(&a->sched, SHOAL_SCHED_PROCESSING, memory_order_relaxed);
    SHOAL_STAT_ADD(&w->tc, turns, 1);
    return true;
}

/* The end of a turn, however its messages ended (a panic included). */
static void turn_finish(shoal_worker_t *w, struct shoal_ctx_s *ctx)
{
    if (ctx->turn_start != 0)
        ctx->group->ops->busy(ctx, shoal__now_ns() - ctx->turn_start);
    if (!ctx->exiting)
        retire_if_done(ctx);
    /* The pop count first, then the handled count: who reads both in the
     * other order (stats.c) never sees a message as handled and queued. */
    publish_deq(ctx);
    if (ctx->group_handled != 0) {
        ctx->group->ops->turn_end(ctx, ctx->group_handled);
        ctx->group_handled = 0;
    }
    if (ctx->exiting)
        shoal__actor_end(ctx);
    else if (__builtin_expect(ctx->gated, 0))
        end_turn(ctx, true);
    else
        end_turn(ctx, false);
    shoal__qsbr_exit(&w->tc); /* if a forward opened a region (qsbr.h) */
}

void shoal__actor_run(shoal_worker_t *w, shoal_actor_t *a)
{
    struct shoal_ctx_s *ctx = &w->ctx;
    if (!turn_begin(w, ctx, a))
        return;
    run_messages(ctx);
    turn_finish(w, ctx);
}

void shoal__actor_unwound(shoal_worker_t *w)
{
    struct shoal_ctx_s *ctx = &w->ctx;
    after_panic(ctx);
    turn_finish(w, ctx);
}
