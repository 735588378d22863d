/* end.c - an actor's end: terminate, the members it holds from checkout
 * pools given back, its mailboxes closed and drained (a member's queued
 * work handed back to its group, a CALL answered with SHOAL_ENOPROC, a
 * checkout pool's grant given back, the rest dropped and counted) and so
 * is what a gate set aside (actor.h: gated), its
 * children stopped, its parent told, its record freed, its references
 * dropped last. */
#include <sched.h>

#include "actor/actor.h"
#include "actor/call.h"
#include "actor/ctx.h"
#include "actor/group.h"
#include "actor/held.h"
#include "actor/room.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
#include "sched/worker.h"

void shoal__dead_letter(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    switch (shoal__env_kind(e)) {
    case SHOAL_MSG_CALL:
    case SHOAL_ENV_INSPECT: {
        struct shoal_reply_s reply = {.tc = ctx->tc, .env = NULL, .status = SHOAL_ENOPROC};
        shoal__reply_send(ctx->rt, ctx->tc, ctx->self, e->from, shoal__env_ref(e), &reply);
        SHOAL_STAT_ADD(ctx->tc, msgs_dropped, 1);
        break;
    }
    case SHOAL_MSG_REPLY:
        /* A member a checkout pool gave it, never seen: it goes back. */
        if (shoal__held_is_grant(e))
            shoal__held_give_back(ctx->rt, ctx->tc, ctx->self, e);
        break;
    case SHOAL_MSG_CAST:
        /* A cast the actor sent itself (a pool's tick still queued when it
         * ends) is nobody's lost message. */
        if (e->from != ctx->self)
            SHOAL_STAT_ADD(ctx->tc, msgs_dropped, 1);
        break;
    default:
        break;
    }
    shoal__env_drop_payload(e);
}

/* Pops until `fin` messages have been popped in all: after that no producer
 * can touch the queue (mailbox.h). A producer between its reservation and
 * its link is waited for; that window is a few instructions. */
static void drain(struct shoal_ctx_s *ctx, bool sys, uint32_t fin)
{
    /* Work queued in a member goes back to its group; a nested group hands
     * what it holds up to the group it is a member of. */
    shoal_pid_t back_to = SHOAL_PID_NONE;
    shoal_group_t *g = ctx->group != NULL ? ctx->group : ctx->own;
    if (ctx->group != NULL || (ctx->own != NULL && ctx->own->parent != NULL))
        back_to = ctx->b->ext->parent;
    shoal_actor_back_t *b = ctx->b;
    unsigned spins = 0;
    for (;;) {
        uint32_t deq = sys ? b->sys_deq : atomic_load_explicit(&b->user_deq, memory_order_relaxed);
        if (deq == fin)
            return;
        shoal_env_t *e = shoal__actor_pop(ctx->tc, ctx->a, sys);
        if (e == NULL) {
            if (++spins < 64)
                shoal__cpu_relax();
            else
                sched_yield();
            continue;
        }
        if (g != NULL && (ctx->own != NULL ? shoal__env_is_user(e) : shoal__env_is_pooled(e)) &&
            g->ops->hand_back(ctx, g, back_to, e))
            continue;
        shoal__dead_letter(ctx, e);
    }
}

void shoal__actor_end(struct shoal_ctx_s *ctx)
{
    shoal_actor_back_t *b = ctx->b;
    int reason = ctx->reason;
    /* Ended before its start was told: the parent hears why (the args
     * getter's message, the panic's, or the reason's name). */
    if (b->ext != NULL && b->ext->notify_start)
        shoal__actor_started(ctx, reason != SHOAL_OK ? reason : SHOAL_ESHUTDOWN,
                             ctx->error[0] ? ctx->error : ctx->panic_text);
    if (!ctx->init_failed && !ctx->in_terminate && b->beh->terminate != NULL) {
        ctx->in_terminate = true;
        ctx->error[0] = '\0';
        uint64_t watch = shoal__watch_enter(ctx->w);
        b->beh->terminate(ctx, b->state, reason);
        shoal__watch_leave(ctx->w, watch);
    }
    ctx->in_terminate = true;
    /* What it still holds from checkout pools goes back (held.h). */
    shoal__held_end(ctx, reason);
    shoal_group_t *own = ctx->own;
    if (own != NULL)
        own->ops->own_end(ctx);
    if (ctx->group != NULL && ctx->group->ops->member_end != NULL)
        ctx->group->ops->member_end(ctx);
    uint32_t ufin = shoal__rsv_close(&ctx->a->user_rsv);
    uint32_t sfin = shoal__rsv_close(&ctx->a->sys_rsv);
    /* Its room waiters are told it is gone (room.h: the end). seq_cst
     * fence: after the close, against an asker's fetch_or and its read of
     * the closed word -- one of the two tells. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&ctx->a->limit, memory_order_relaxed) & SHOAL_LIMIT_ROOM)
        shoal__room_tell(ctx->rt, ctx->tc, ctx->self, SHOAL_ENOPROC);
    drain(ctx, true, sfin);
    drain(ctx, false, ufin);
    shoal_actor_ext_t *ext = b->ext;
    /* What a gate set aside, never opened: dropped as the mailboxes are. */
    while (ext != NULL && ext->gate_head != NULL) {
        shoal_env_t *e = ext->gate_head;
        ext->gate_head = shoal__env_of(atomic_load_explicit(&e->node.next, memory_order_relaxed));
        shoal__dead_letter(ctx, e);
        shoal__env_free(ctx->tc, e);
    }
    if (ext != NULL) {
        for (uint32_t i = 0; i < ext->nchildren; i++)
            shoal__send_system(ctx->rt, ctx->tc, ext->children[i], SHOAL_ENV_STOP, ctx->self,
                               (uint32_t)SHOAL_ESHUTDOWN);
        shoal__calls_cancel_all(ctx);
        if (ext->parent != SHOAL_PID_NONE)
            shoal__send_system(ctx->rt, ctx->tc, ext->parent, SHOAL_MSG_EXIT, ctx->self,
                               (uint32_t)reason);
    }
    if (reason != SHOAL_OK && reason != SHOAL_ESHUTDOWN)
        shoal__log(ctx->rt, SHOAL_LOG_WARN, ctx->self, ctx->name, "ended: %s (%d)",
                   shoal_strerror(reason), reason);
    SHOAL_STAT_ADD(ctx->tc, actors_ended, 1);
    shoal_group_t *member_of = ext != NULL ? ext->member_of : NULL;
    shoal__actor_release(ctx->rt, ctx->tc, ctx->a);
    /* Last (ctx->name may point into a record): a member's reference on its
     * group, a group's actor's on its own record; either may free it. */
    if (member_of != NULL)
        member_of->ops->unref(ctx->rt, member_of);
    if (own != NULL)
        own->ops->unref(ctx->rt, own);
}
