/* ctx.h - the context a handler runs with (one per worker, reused). */
#ifndef SHOAL_ACTOR_CTX_H
#define SHOAL_ACTOR_CTX_H

#include <setjmp.h>
#include <stdbool.h>

#include "actor/actor.h"
#include "actor/group.h"
#include "runtime/tcache.h"
#include "shoal/error.h"

/* An inspection being built (inspect.c). It lives in the ctx so that a
 * panic inside the behaviour's inspect callback can free it. */
struct shoal_inspect_s {
    char *buf;
    size_t len, cap;
    unsigned fields; /* in the current object */
    bool oom;
};

struct shoal_ctx_s {
    shoal_runtime_t *rt;
    struct shoal_worker_s *w;
    shoal_tcache_t *tc;
    shoal_actor_t *a;
    shoal_actor_back_t *b;
    shoal_pid_t self;
    shoal_env_t *cur;       /* the envelope being handled, for panic clean-up */
    shoal_group_t *group;   /* the group this actor is a member of, or NULL (group.h) */
    uint64_t *member;       /* ... and what the group's kind keeps for it (ext->member) */
    shoal_env_t *taken;     /* the item being handled that came from the group (take) */
    shoal_group_t *own;     /* the actor is this group's own actor, or NULL */
    uint64_t group_handled; /* messages handled this turn, not yet counted for the group */
    bool group_exact;       /* the group counts every message at once */
    /* A user message whose kind and flags (its meta's low 16 bits, under
     * fast_mask) equal fast_meta takes run_messages' fast path (turn.c);
     * fast_meta UINT32_MAX: none does (a group's own actor, an exact or
     * timed group's member). Set at the start of each turn. */
    uint32_t fast_mask, fast_meta;
    uint64_t turn_start;        /* a timed group's member: when this turn began (ns), else 0 */
    shoal_send_counts_t *sends; /* a source's: where its sends are counted (actor.h), or NULL */
    const char *name;           /* for log lines: a member's is its group's label */
    int exiting;                /* shoal_exit called or a callback failed */
    int reason;
    bool init_failed;  /* do not run terminate */
    bool in_init;      /* a member inside its init: counted (sched/bulkhead.h) */
    bool in_terminate; /* a panic here must not run terminate again */
    bool yield;        /* shoal_yield: end the turn after this callback */
    bool gated;        /* ext->gated, as the turn began or since OPEN (turn.c) */
    bool opened;       /* OPEN was just handled: what the gate set aside runs
                          next (turn.c: gate_replay clears it at once) */
    uint32_t deq;      /* user messages popped, published lazily (turn.c) */
    uint32_t unpublished;
    uint32_t publish_every;
    jmp_buf panic;
    char error[512];      /* the last args getter error (shoal_ctx_error) */
    char panic_text[256]; /* what the last shoal_panic said (for a start notice) */
    struct shoal_inspect_s inspect;
};

/* The reply being built inside handle_call. */
struct shoal_reply_s {
    shoal_tcache_t *tc;
    shoal_env_t *env; /* NULL until set */
    int status;
};

/* Records that the running actor ends after this callback. */
static inline void shoal__ctx_fail(struct shoal_ctx_s *ctx, int reason)
{
    if (!ctx->exiting) {
        ctx->exiting = 1;
        ctx->reason = reason;
    }
}

/* rc is a receiver's refusal for want of room, which it tells of when it
 * has some (room.h): a full actor, a pool whose workers are all full, a
 * checkout pool's transactions past max + queue_max. */
static inline bool shoal__rc_refused(int rc)
{
    return rc == SHOAL_EFULL || rc == SHOAL_EBUSY || rc == SHOAL_ENOMEMBERS;
}

/* A source's send or call, counted (actor.h, shoal_send_counts_t: relaxed
 * adds by the thread running the actor); sends to itself are not. The
 * callers test ctx->sends first: other actors pay that one branch. */
static inline void shoal__ctx_count_send(const struct shoal_ctx_s *ctx, shoal_pid_t to, int rc)
{
    if (to == ctx->self)
        return;
    if (rc == SHOAL_OK)
        atomic_fetch_add_explicit(&ctx->sends->sent, 1, memory_order_relaxed);
    else if (shoal__rc_refused(rc))
        atomic_fetch_add_explicit(&ctx->sends->refused, 1, memory_order_relaxed);
}

#endif
