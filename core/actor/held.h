/* held.h - the members an actor holds from checkout pools: the consumer's
 * side of shoal/checkout.h. The pool's side is pool/checkout.h; this layer
 * knows only the messages between the two.
 *
 * The table lives in the actor's ext and is touched only in its own turns
 * (no synchronisation). An entry is added when a take's answer -- a REPLY
 * of type SHOAL_CHECKOUT_MEMBER, status 0 -- is handled for a call still
 * pending, and removed by shoal_return, by an EXIT whose sender is the
 * member (its pool tells the holder that it ended in use), or at the end.
 * So that the pool never loses a member to a consumer that stopped
 * looking:
 *   - an answer that finds no pending call (the call timed out first) goes
 *     straight back, OK;
 *   - an answer still queued when the actor ends goes back, OK (end.c);
 *   - what the actor holds when it ends goes back: OK if it ended
 *     normally or was stopped, CRASHED otherwise (the pool destroys it).
 * A thread's take (a waiter, waiter.c) that gave up gives a late answer back
 * the same way.
 */
#ifndef SHOAL_ACTOR_HELD_H
#define SHOAL_ACTOR_HELD_H

#include <stdbool.h>
#include <stdint.h>

#include "actor/envelope.h"
#include "shoal/checkout.h"

struct shoal_ctx_s;
struct shoal_tcache_s;

/* Private message types between consumers and a checkout pool (in the
 * range shoal/pool.h reserves). */
/* consumer -> pool: a priority call asking for a member; payload a
 * shoal_held_take_t. Answered with a REPLY of type SHOAL_CHECKOUT_MEMBER. */
#define SHOAL__CHECKOUT_TAKE 0xFFFE0301u
/* consumer (or a thread, or the member at the end of a transaction) ->
 * pool: a priority cast giving a member back; payload a shoal_held_return_t. */
#define SHOAL__CHECKOUT_RETURN 0xFFFE0303u

/* How a member comes back: the public SHOAL_RETURN_OK / FAIL, and: */
#define SHOAL__RETURN_CRASHED 2 /* its holder crashed: destroy it (killed_in_use) */

typedef struct shoal_held_take_s {
    uint64_t timeout_ms; /* how long the taker waits in the queue; 0: not at all */
    uint32_t lease;      /* 1: a thread's take (held under the pool's lease) */
    uint32_t pad_;
    uint64_t token; /* a thread's: which thread takes (its return must name it) */
} shoal_held_take_t;

typedef struct shoal_held_return_s {
    shoal_pid_t member;
    int32_t how;    /* SHOAL_RETURN_OK, SHOAL_RETURN_FAIL, SHOAL__RETURN_CRASHED */
    uint32_t seat;  /* where the pool keeps it, + 1, if the sender knows (the member); else 0 */
    uint64_t token; /* a thread's return: the token of its take */
} shoal_held_return_t;

/* One member the actor holds, the pool it goes back to, and where that
 * pool keeps it if known (its seat + 1; 0: not known). */
typedef struct shoal_held_s {
    shoal_pid_t member, pool;
    uint32_t seat;
} shoal_held_t;

/* A reply being handled (actor.c); `pending` says whether its call was
 * still pending. SHOAL_OK: deliver it (a member it carries is now held);
 * SHOAL__HELD_DROP: do not (a late reply; a member it carried went
 * straight back); SHOAL_ENOMEM: deliver it with that status instead (the
 * member could not be recorded, so it went back). */
#define SHOAL__HELD_DROP 1
int shoal__held_reply(struct shoal_ctx_s *ctx, const shoal_env_t *e, bool pending);
/* A member the running actor was given on its own thread (a checkout
 * pool's fast take): now held. SHOAL_OK, SHOAL_ENOMEM (not recorded: the
 * caller gives it back). */
int shoal__held_add(struct shoal_ctx_s *ctx, shoal_pid_t member, shoal_pid_t pool, uint32_t seat);
/* shoal_return's first half: the entry for `member` off the table into
 * *out. SHOAL_OK, or SHOAL_EINVAL (not held, or a bad `how`); the caller
 * then gives it back (fast, or with shoal__held_send_back). */
int shoal__held_take_back(struct shoal_ctx_s *ctx, shoal_pid_t member, int how, shoal_held_t *out);
/* Gives `member` back to `pool` from `from` as a message (a priority cast). */
void shoal__held_send_back(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_pid_t from,
                           shoal_pid_t pool, shoal_pid_t member, int how);
/* An EXIT from `from` (actor.c): if it is a member the actor holds, it is
 * no longer held. */
void shoal__held_exit(struct shoal_ctx_s *ctx, shoal_pid_t from);
/* The actor ends (end.c): everything it holds goes back, OK when reason
 * is SHOAL_OK or SHOAL_ESHUTDOWN, CRASHED otherwise; the table is freed. */
void shoal__held_end(struct shoal_ctx_s *ctx, int reason);
/* Whether e is a take's answer carrying a member. */
bool shoal__held_is_grant(const shoal_env_t *e);
/* Gives the member in grant e back to its pool, OK, from `from` (an
 * answer nobody will see: the actor ends, a thread gave up). */
void shoal__held_give_back(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_pid_t from,
                           const shoal_env_t *e);

#endif
