/* actor.c - handling one envelope: the behaviour's callbacks for each kind
 * of message, system and user (the common user cast's fast version is in
 * handle.h), and an actor's start notice. A turn -- which envelopes are
 * handled, and what happens after -- is turn.c's; spawning and freeing a
 * record, spawn.c's; its end, end.c's.
 */
#include "actor/actor.h"
#include "actor/handle.h"

#include <string.h>

#include "actor/call.h"
#include "actor/ctx.h"
#include "actor/held.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/bulkhead.h"
#include "sched/futex.h"
#include "sched/worker.h"

bool shoal__owner_enter(shoal_actor_t *a, uint32_t worker_id)
{
    /* acq_rel: pairs with owner_leave's release by the previous runner. */
    return atomic_exchange_explicit(&a->owner, worker_id + 1, memory_order_acq_rel) == 0;
}

void shoal__owner_leave(shoal_actor_t *a)
{
    /* release: pairs with the acquire half of the next runner's exchange in
     * shoal__owner_enter: it sees this turn's writes. */
    atomic_store_explicit(&a->owner, 0, memory_order_release);
}

shoal_env_t *shoal__actor_pop(shoal_tcache_t *tc, shoal_actor_t *a, bool sys)
{
    shoal_actor_back_t *b = shoal__actor_back(tc->rt, a);
    shoal_mq_node_t *retired;
    shoal_mq_node_t *n = shoal__mq_pop(sys ? &b->sys_head : &b->user_head, &retired);
    if (n == NULL)
        return NULL;
    /* The next message, if linked, was written on the sender's core: start
     * fetching it while this one is handled. */
    shoal_mq_node_t *after = atomic_load_explicit(&n->next, memory_order_relaxed);
    if (after != NULL)
        __builtin_prefetch(after, 0, 3);
    if (retired != (sys ? &b->sys_stub : &a->user_stub))
        shoal__env_free(tc, shoal__env_of(retired));
    if (sys) {
        b->sys_deq = (b->sys_deq + 1) & SHOAL_RSV_COUNT_MASK;
    } else {
        shoal__queued_out(tc, shoal__env_of(n));
        uint32_t d = atomic_load_explicit(&b->user_deq, memory_order_relaxed);
        /* release: pairs with the load of user_deq in shoal__room_in (seq_cst
         * for an asker); senders read it [relaxed] for the limit (mailbox.h).
         * No data rides on it beyond the count itself. */
        atomic_store_explicit(&b->user_deq, (d + 1) & SHOAL_RSV_COUNT_MASK, memory_order_release);
    }
    return shoal__env_of(n);
}

/* ---- handling one envelope ---------------------------------------------- */

static int call_handler(struct shoal_ctx_s *ctx, shoal_env_t *e, unsigned kind, int status)
{
    shoal_msg_t msg = {
        .type = kind == SHOAL_MSG_EXIT || kind == SHOAL_MSG_ROOM ? 0 : e->type,
        .kind = kind,
        .data = shoal__env_data(e),
        .size = e->size,
        .from = e->from,
        .ref = (shoal__env_flags(e) & SHOAL_ENV_KEEP) ? 0 : shoal__env_ref(e),
        .status = status,
        .flags = (shoal__env_flags(e) & SHOAL_ENV_PRIORITY) ? SHOAL_MSG_PRIORITY : 0,
    };
    return ctx->b->beh->handle_message(ctx, ctx->b->state, &msg);
}

static bool handle_call(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = 0};
    const shoal_behaviour_t *beh = ctx->b->beh;
    int rc = SHOAL_OK;
    if (beh->handle_call == NULL) {
        reply.status = SHOAL_ENOTSUP;
    } else {
        shoal_msg_t msg = {
            .type = e->type,
            .kind = SHOAL_MSG_CALL,
            .data = shoal__env_data(e),
            .size = e->size,
            .from = e->from,
            .ref = shoal__env_ref(e),
            .flags = (shoal__env_flags(e) & SHOAL_ENV_PRIORITY) ? SHOAL_MSG_PRIORITY : 0,
        };
        rc = beh->handle_call(ctx, ctx->b->state, &msg, &reply);
    }
    if (rc == SHOAL_DEFER) {
        shoal__reply_discard(&reply);
        return true;
    }
    if (rc != SHOAL_OK) {
        shoal__reply_discard(&reply);
        reply.status = rc < 0 ? rc : SHOAL_EFAILED;
        shoal__ctx_fail(ctx, rc);
    }
    shoal__reply_send(ctx->rt, ctx->tc, ctx->self, e->from, shoal__env_ref(e), &reply);
    return rc == SHOAL_OK;
}

/* Whether a gated actor sets e aside (shoal_spawn_t.gated): what would run
 * its behaviour's handlers. The runtime's own envelopes are carried out. */
static bool gate_holds(unsigned kind)
{
    return kind != SHOAL_ENV_INIT && kind != SHOAL_ENV_STOP && kind != SHOAL_ENV_INSPECT &&
           kind != SHOAL_ENV_RETIRE && kind != SHOAL_ENV_LIMIT && kind != SHOAL_ENV_LISTED &&
           kind != SHOAL_ENV_OPEN;
}

/* e, popped from the system mailbox of a gated actor, moved to the end of
 * what its gate holds (e stays the mailbox's node). Without memory to move
 * it the actor cannot keep it for later: it is dropped as an ended actor's
 * mailbox is (a call answered SHOAL_ENOPROC), and the actor ends. */
static void gate_park(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    shoal_env_t *m = shoal__env_move(ctx->tc, e);
    if (m == NULL) {
        shoal__log(ctx->rt, SHOAL_LOG_ERROR, ctx->self, ctx->name,
                   "out of memory to keep a message until it is opened: it ends");
        shoal__dead_letter(ctx, e);
        shoal__ctx_fail(ctx, SHOAL_ENOMEM);
        return;
    }
    if (x->gate_tail != NULL)
        atomic_store_explicit(&x->gate_tail->node.next, &m->node, memory_order_relaxed);
    else
        x->gate_head = m;
    x->gate_tail = m;
}

/* The call timer's tick, come while the actor is gated: not kept. Its calls
 * are looked at after OPEN, once the replies set aside before it have been
 * handled (turn.c: gate_replay rearms the timer) -- a tick handled then
 * would time out a call whose reply came after it but before the OPEN. */
static void gate_tick(struct shoal_ctx_s *ctx)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x->call_timer_at != 0 && x->call_timer_at <= shoal__now_ns())
        x->call_timer_at = 0; /* that timer has fired */
}

bool shoal__actor_handle(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    unsigned kind = shoal__env_kind(e);
    int rc = SHOAL_OK;
    bool failed = false;
    uint64_t handled = 1; /* messages the behaviour saw (a call tick: its timeouts) */
    if (ctx->own != NULL && shoal__env_is_user(e)) {
        /* A member's hand-back, or a send that raced a spawn (send.c):
         * the group places it. */
        ctx->own->ops->own_message(ctx, e);
        return true;
    }
    if (__builtin_expect(ctx->gated, 0) && gate_holds(kind)) {
        if (kind == SHOAL_ENV_CALL_TICK)
            gate_tick(ctx);
        else
            gate_park(ctx, e);
        return true;
    }
    ctx->cur = e;
    ctx->error[0] = '\0'; /* shoal_ctx_error is per callback */
    if (__builtin_expect(kind == SHOAL_ENV_INIT, 0) && ctx->group != NULL &&
        ctx->b->beh->init != NULL) {
        /* A member's init, counted (sched/bulkhead.h). Before watch_enter:
         * the monitor reads in_init as it reads the names (CAPTURE); ended
         * after watch_leave below, or in after_panic (turn.c). */
        ctx->in_init = true;
        shoal__bulkhead_init_begin(ctx->rt);
    }
    shoal_worker_t *w = ctx->w;
    uint64_t watch = shoal__watch_enter(w); /* the monitor's view (sched/monitor.c) */
    switch (kind) {
    case SHOAL_MSG_CAST:
        rc = call_handler(ctx, e, kind, 0);
        break;
    case SHOAL_MSG_CALL:
        failed = !handle_call(ctx, e);
        break;
    case SHOAL_MSG_REPLY:
    case SHOAL_MSG_TIMEOUT: {
        bool pending = shoal__call_settle(ctx, shoal__env_ref(e), kind == SHOAL_MSG_TIMEOUT);
        /* A checkout pool's member in it is held now, or goes back (held.h). */
        int held = kind == SHOAL_MSG_REPLY ? shoal__held_reply(ctx, e, pending)
                   : pending               ? SHOAL_OK
                                           : SHOAL__HELD_DROP;
        if (held != SHOAL__HELD_DROP) {
            int status = kind == SHOAL_MSG_TIMEOUT                  ? SHOAL_ETIMEDOUT
                         : held != SHOAL_OK                         ? held
                         : (shoal__env_flags(e) & SHOAL_ENV_STATUS) ? (int)e->type
                                                                    : 0;
            rc = call_handler(ctx, e, kind, status);
        } else {
            SHOAL_STAT_ADD(ctx->tc, replies_late, 1);
        }
        break;
    }
    case SHOAL_MSG_EXIT:
        shoal__children_remove(ctx, e->from);
        shoal__held_exit(ctx, e->from);
        rc = call_handler(ctx, e, kind, (int)e->type);
        break;
    case SHOAL_ENV_CALL_TICK: {
        /* The call timer (call.c): each call past its deadline is handed
         * over as a TIMEOUT from its callee, as a message of its own. */
        uint64_t now = shoal__now_ns();
        shoal_ref_t ref;
        shoal_pid_t callee;
        handled = 0;
        while (rc == SHOAL_OK && !ctx->exiting &&
               shoal__call_next_expired(ctx, now, &ref, &callee)) {
            shoal__call_gone(ctx->rt, ctx->tc, callee, ctx->self, ref); /* not to run now */
            shoal_env_t t = {.from = callee, .type = 0, .size = 0};
            shoal__env_set_meta(&t, ref, SHOAL_MSG_TIMEOUT, 0);
            rc = call_handler(ctx, &t, SHOAL_MSG_TIMEOUT, SHOAL_ETIMEDOUT);
            handled++;
        }
        if (!ctx->exiting)
            shoal__calls_rearm(ctx);
        break;
    }
    case SHOAL_MSG_ROOM: /* status: SHOAL_ENOPROC when the receiver has ended */
        rc = call_handler(ctx, e, kind, (int)e->type);
        break;
    case SHOAL_ENV_STARTED: /* only a parent that asked gets these: the groups */
        rc = call_handler(ctx, e, kind, (int)e->type);
        break;
    case SHOAL_ENV_INIT: {
        const void *args;
        memcpy(&args, e->payload.bytes, sizeof args);
        rc = ctx->b->beh->init != NULL ? ctx->b->beh->init(ctx, ctx->b->state, args) : SHOAL_OK;
        if (rc != SHOAL_OK)
            ctx->init_failed = true;
        else if (ctx->own == NULL) /* a group tells when its members have started */
            shoal__actor_started(ctx, SHOAL_OK, NULL);
        break;
    }
    case SHOAL_ENV_STOP:
        shoal__ctx_fail(ctx, (int)e->type);
        break;
    case SHOAL_ENV_INSPECT:
        rc = shoal__inspect_answer(ctx, e);
        break;
    case SHOAL_ENV_RETIRE:
        if (ctx->own != NULL)
            ctx->own->ops->own_retire(ctx);
        else if (ctx->b->ext != NULL)
            ctx->b->ext->retiring = true;
        break;
    case SHOAL_ENV_LISTED:
        if (ctx->b->ext != NULL)
            ctx->b->ext->listed = true;
        break;
    case SHOAL_ENV_OPEN: /* what the gate set aside runs next (turn.c: gate_replay) */
        if (ctx->gated) {
            ctx->b->ext->gated = false;
            ctx->gated = false;
            ctx->opened = true;
        }
        break;
    case SHOAL_ENV_LIMIT: { /* the room flag (room.h) stays as it is */
        uint32_t old = atomic_load_explicit(&ctx->a->limit, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&ctx->a->limit, &old,
                                                      (old & SHOAL_LIMIT_ROOM) | e->type,
                                                      memory_order_relaxed, memory_order_relaxed))
            ;
        break;
    }
    default:
        break;
    }
    shoal__watch_leave(w, watch);
    shoal__actor_init_over(ctx);
    if (rc != SHOAL_OK) {
        shoal__ctx_fail(ctx, rc);
        failed = true;
    }
    SHOAL_STAT_ADD(ctx->tc, msgs_handled, handled);
    if (!(shoal__env_flags(e) & SHOAL_ENV_KEEP)) /* else its group may give it again */
        shoal__env_drop_payload(e);
    ctx->cur = NULL;
    return !failed;
}

void shoal__actor_started(struct shoal_ctx_s *ctx, int status, const char *why)
{
    shoal_actor_ext_t *x = ctx->b->ext;
    if (x == NULL || !x->notify_start)
        return;
    x->notify_start = false;
    size_t n = why != NULL ? strlen(why) : 0;
    shoal_env_t *e =
        shoal__env_new(ctx->tc, SHOAL_ENV_STARTED, 0, ctx->self, 0, (uint32_t)status, why, n);
    if (e != NULL && shoal__deliver(ctx->rt, ctx->tc, x->parent, e, true) != SHOAL_OK)
        shoal__env_free(ctx->tc, e); /* the parent is gone: nobody waits */
}
