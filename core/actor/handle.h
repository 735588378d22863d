/* handle.h - handling one envelope (actor.c), and the common user cast's
 * fast version, inline for the turn's loop (turn.c). */
#ifndef SHOAL_ACTOR_HANDLE_H
#define SHOAL_ACTOR_HANDLE_H

#include <stdbool.h>

#include "actor/ctx.h"
#include "sched/bulkhead.h"
#include "sched/worker.h"

/* Handles one envelope of any kind; false if a callback failed on it. The
 * envelope stays the caller's (its heap payload is dropped unless KEEP). */
bool shoal__actor_handle(struct shoal_ctx_s *ctx, shoal_env_t *e);

/* A member's init has ended, returned or panicked (set in shoal__actor_handle
 * before its watch began): its count ends after the watch (sched/bulkhead.h). */
static inline void shoal__actor_init_over(struct shoal_ctx_s *ctx)
{
    if (__builtin_expect(ctx->in_init, 0)) {
        ctx->in_init = false;
        shoal__bulkhead_init_end(ctx->rt);
    }
}

/* A user cast to an actor that is not a group's own (the common message):
 * shoal__actor_handle without its dispatch on the kind. */
static inline bool shoal__actor_handle_cast(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    ctx->cur = e;
    ctx->error[0] = '\0'; /* shoal_ctx_error is per callback */
    shoal_worker_t *w = ctx->w;
    uint64_t watch = shoal__watch_enter(w); /* the monitor's view (sched/monitor.c) */
    unsigned flags = shoal__env_flags(e);
    shoal_msg_t msg = {
        .type = e->type,
        .kind = SHOAL_MSG_CAST,
        .data = e->size != 0 ? ((flags & SHOAL_ENV_HEAP) ? e->payload.heap.ptr : e->payload.bytes)
                             : NULL,
        .size = e->size,
        .from = e->from,
        .ref = (flags & SHOAL_ENV_KEEP) ? 0 : shoal__env_ref(e),
    };
    int rc = ctx->b->beh->handle_message(ctx, ctx->b->state, &msg);
    shoal__watch_leave(w, watch);
    SHOAL_STAT_ADD(ctx->tc, msgs_handled, 1);
    if ((flags & (SHOAL_ENV_HEAP | SHOAL_ENV_KEEP)) == SHOAL_ENV_HEAP)
        shoal__env_drop_payload(e); /* KEEP: its group may give it again */
    ctx->cur = NULL;
    if (__builtin_expect(rc != SHOAL_OK, 0)) {
        shoal__ctx_fail(ctx, rc);
        return false;
    }
    return true;
}

/* shoal__actor_handle, for a message from the user mailbox. */
static inline bool shoal__actor_handle_user(struct shoal_ctx_s *ctx, shoal_env_t *e)
{
    if (__builtin_expect(shoal__env_kind(e) == SHOAL_MSG_CAST && ctx->own == NULL &&
                             !(shoal__env_flags(e) & SHOAL_ENV_PRIORITY),
                         1))
        return shoal__actor_handle_cast(ctx, e);
    return shoal__actor_handle(ctx, e);
}

#endif
