/* group.h - the interface a kind of group implements: a GROUP is an actor
 * whose user sends are routed by its kind, and whose MEMBERS (its workers)
 * work for it. Which kinds exist, and what they do, is the layer above's:
 * each kind fills in one shoal_group_ops_t, and the actor layer calls
 * nothing else of it.
 *
 *   sender side   a user send to a group's PID is handed to ops->route on
 *                 the sender's thread, once send.c has checked that the
 *                 PID's generation is a live group and entered a read-side
 *                 region for its record (runtime/qsbr.h); a refused sender
 *                 that asks to be told of room goes to ops->room so.
 *   the group     its own actor's turns: a user message that lands in its
 *                 own mailbox (a member's hand-back, a send that raced the
 *                 spawn) goes to ops->own_message; RETIRE to ops->own_retire;
 *                 its end to ops->own_end (after terminate, before its
 *                 mailboxes are drained).
 *   a member      a message that came through the group (SHOAL_ENV_POOLED)
 *                 is settled with ops->settled (failed, or timed) or counted
 *                 and given to ops->turn_end once a turn (handled); when
 *                 its mailbox is empty it asks ops->take for the next item
 *                 (kinds that hold work for their members: the item is the
 *                 member's until handled, then the actor layer frees it;
 *                 one taken with others may place those in the member's own
 *                 mailbox, flagged SHOAL_ENV_POOLED); at the end of a
 *                 turn ops->more says whether it has work beyond its
 *                 mailbox, and if not whether to ask ops->recheck once more
 *                 after the member has gone IDLE; when it ends, what is
 *                 queued for the group goes to ops->hand_back
 *                 (ops->member_end first: what the kind keeps for it goes).
 *   lifetime      members and the group's own actor each hold a reference
 *                 on the record, dropped with ops->unref after the actor's
 *                 record is freed.
 *
 * The record of every kind starts with a shoal_group_t. Its fields are set
 * before the group's actor is published and never change after (the
 * strings live as long as the record) -- but `timed`, below.
 */
#ifndef SHOAL_ACTOR_GROUP_H
#define SHOAL_ACTOR_GROUP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor/envelope.h"
#include "shoal/types.h"

/* The longest chain of groups a member counts for (its group, the one that
 * group is a member of, ...). A pool kind nests no deeper (pool.h checks);
 * what walks the chain (a stall's record, room's receivers) holds this
 * many. */
#define SHOAL_GROUP_MAX_NESTING 8u

struct shoal_actor_s;
struct shoal_ctx_s;
struct shoal_tcache_s;
typedef struct shoal_group_s shoal_group_t;

/* What ops->more says. */
enum { SHOAL_GROUP_NONE = 0, SHOAL_GROUP_MORE = 1, SHOAL_GROUP_WATCH = 2 };

/* A timed message's latencies (the sender stamped it). */
typedef struct shoal_group_timing_s {
    uint64_t wait_ns, service_ns;
} shoal_group_timing_t;

/* What route may answer besides SHOAL_OK and an error: put e into the
 * group's own user mailbox, where its own actor takes it (own_message). */
#define SHOAL_GROUP_OWN_MAILBOX 1

typedef struct shoal_group_ops_s {
    /* Any thread, inside a read-side region, g live in `to`'s generation:
     * takes e (SHOAL_OK), refuses it (an error; the caller keeps e), or
     * sends it to the group's own actor (SHOAL_GROUP_OWN_MAILBOX). */
    int (*route)(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g, shoal_env_t *e);
    /* As route, for envs[0 .. n) in order (a shoal_send_many): takes the
     * first *took of them, all n with SHOAL_OK, else fewer and the error
     * the first one not taken met (the caller keeps those). Never answers
     * SHOAL_GROUP_OWN_MAILBOX. May be NULL: the actor layer routes them
     * one by one. */
    int (*route_many)(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g,
                      shoal_env_t **envs, uint32_t n, uint32_t *took);
    /* The group's own actor. */
    void (*own_message)(struct shoal_ctx_s *ctx, shoal_env_t *e);
    void (*own_retire)(struct shoal_ctx_s *ctx);
    void (*own_end)(struct shoal_ctx_s *ctx);
    /* A member (ctx->group is its group). settled: one message failed
     * (ok false), or was handled and timed (t). turn_end: `handled` untimed
     * messages handled since the last call. take: the next item, or NULL
     * (may be NULL for kinds that hold none). more, at the end of a turn
     * that leaves the mailbox empty: SHOAL_GROUP_MORE, work now (the member
     * runs again); SHOAL_GROUP_WATCH, none now but the kind wakes members:
     * the member goes IDLE [seq_cst store, actor.h] and then asks recheck,
     * which must read only g's shared state [seq_cst] -- the member may
     * already run on another thread -- and pairs with the kind's senders;
     * SHOAL_GROUP_NONE, nothing to wait for. May be NULL. hand_back: e was
     * queued for the group when the member (or, for a nested group, the
     * group's actor, g its own record) ended; true if taken, else the
     * caller dead-letters it. */
    void (*settled)(struct shoal_ctx_s *ctx, shoal_env_t *e, bool ok,
                    const shoal_group_timing_t *t);
    void (*turn_end)(struct shoal_ctx_s *ctx, uint64_t handled);
    shoal_env_t *(*take)(struct shoal_ctx_s *ctx);
    int (*more)(struct shoal_ctx_s *ctx);
    bool (*recheck)(shoal_group_t *g);
    bool (*hand_back)(struct shoal_ctx_s *ctx, shoal_group_t *g, shoal_pid_t to, shoal_env_t *e);
    /* A member ends (after terminate, before its mailboxes are drained
     * into hand_back). May be NULL. */
    void (*member_end)(struct shoal_ctx_s *ctx);
    /* Any thread, as route: `waiter` wants one SHOAL_MSG_ROOM when the
     * group has room again (shoal_notify_room); NULL: the kind cannot tell
     * (SHOAL_ENOTSUP). */
    int (*room)(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g,
                shoal_pid_t waiter);
    /* Any thread, as route: `waiter` (a thread's, that gave up) no longer
     * waits for room. May be NULL (nothing to take off). */
    void (*room_cancel)(shoal_runtime_t *rt, shoal_group_t *g, shoal_pid_t waiter);
    /* Any thread, inside a read-side region: the call `caller` sent the
     * group with `ref` timed out at the caller (shoal__call_gone); a kind
     * that keeps calls waiting may drop it unrun. Also told while the
     * group drains (its reserve closed), and after it ended (its record
     * still readable): then it holds nothing new. May be NULL. */
    void (*call_gone)(shoal_runtime_t *rt, struct shoal_tcache_s *tc, shoal_group_t *g,
                      shoal_pid_t caller, shoal_ref_t ref);
    /* A member, at the end of a turn of a `timed` group: the turn took ns. */
    void (*busy)(struct shoal_ctx_s *ctx, uint64_t ns);
    /* Drops a reference on g (a member's, or its own actor's). */
    void (*unref)(shoal_runtime_t *rt, shoal_group_t *g);
} shoal_group_ops_t;

struct shoal_group_s {
    const shoal_group_ops_t *ops;
    shoal_pid_t pid;              /* its actor's */
    struct shoal_group_s *parent; /* the group this one is a member of, or NULL */
    const char *name;             /* for log lines and stall reports */
    const char *label;            /* how its members are named in logs: "name/behaviour" */
    bool exact;                   /* members settle every message at once (not per turn) */
    /* Non-zero, its members time their turns
     * (ops->busy). Written by the group's own actor, read by members at
     * the start of a turn [relaxed: a turn timed or not is a picture of
     * the load, not a count anyone balances]. */
    _Atomic uint32_t timed;
    /* Its members' callbacks listed as stuck now (sched/bulkhead.h has the
     * protocol): while any is, and every spare thread is held by one, its
     * other members wait. */
    _Atomic uint32_t stuck;
};

#endif
