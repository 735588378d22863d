/* room.h - waiting for room in a receiver without polling (DESIGN.md
 * "Backpressure without spinning"): an actor refused with SHOAL_EFULL or
 * SHOAL_EBUSY asks for one SHOAL_MSG_ROOM (shoal_notify_room), a thread
 * sleeps until one comes (shoal_runtime_send_wait, through a WAITER actor
 * of its own: waiter.c). This is the registry for receivers that are plain
 * bounded actors and forward pools; a pull pool keeps its own waiters
 * (pool/pull.h: room).
 *
 * PROTOCOL
 *   waiters     per receiver PID, in one of SHOAL_ROOM_STRIPES lists (by
 *               the PID's slot), each under its stripe's mutex.
 *   the flag    SHOAL_LIMIT_ROOM, the top bit of the receiver's front
 *               `limit` word (actor.h; every reader of the limit masks it):
 *               set [fetch_or, seq_cst] under the stripe lock when a waiter
 *               is added, cleared [fetch_and] under it when the receiver's
 *               waiters are told. Set means: someone may wait on this actor.
 *   the ask     add the waiter and set the flag (under the lock), then read
 *               whether the receiver has room now [seq_cst loads of its
 *               reservation and dequeue words]; if it has (or is gone),
 *               tell its waiters at once.
 *   the drain   whoever frees room in the receiver -- the actor itself at
 *               the end of a turn, or a member of a forward pool for the
 *               pool -- reads the flag after its dequeue count is
 *               published: at the end of a turn that goes on [relaxed: a
 *               flag set just now is seen at a later turn's end], and
 *               after its IDLE store [seq_cst load]. The asker, after its
 *               fetch_or, loads the actor's schedule word [seq_cst], then
 *               its counts. Store-buffering on (sched, flag), all seq_cst:
 *               either the drainer's load sees the flag, or the asker's
 *               load of sched reads the IDLE store (or a later one), which
 *               carries the dequeue count published before it [the store
 *               is a release, the load an acquire]: the asker sees the
 *               room. Set, and with room below the low-water mark (a
 *               quarter of the limit free, at least one), it tells. For a
 *               forward pool the asker reads each member so (forward.c);
 *               room that comes with a change of its workers (a resize, a
 *               swap, a worker that ended without a drain) the pool's own
 *               actor tells after each of its callbacks [a seq_cst fence
 *               after its table stores, then the flag; the asker's fence
 *               after its fetch_or, then the table].
 *   the end     an actor that ends with the flag set tells its waiters
 *               SHOAL_ENOPROC (the ROOM message's status): nobody waits on
 *               a receiver that is gone.
 *   A waiter may be told twice (an ask and a drain both see room), never
 *   not; a waiter that gave up (a thread's timeout) takes itself off.
 */
#ifndef SHOAL_ACTOR_ROOM_H
#define SHOAL_ACTOR_ROOM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor/ctx.h"
#include "runtime/runtime.h"
#include "shoal/types.h"

struct shoal_runtime_s;
struct shoal_tcache_s;
struct shoal_actor_s;

#define SHOAL_ROOM_STRIPES 64u

int shoal__rooms_init(struct shoal_runtime_s *rt);
void shoal__rooms_fini(struct shoal_runtime_s *rt);

/* Adds waiter to receiver's waiters and sets its flag. SHOAL_OK,
 * SHOAL_ENOMEM, or SHOAL_EOVERLOAD when max (0: no bound) wait for it
 * already. The caller then checks for room (the ask, above). */
int shoal__room_add(struct shoal_runtime_s *rt, shoal_pid_t receiver, shoal_pid_t waiter,
                    uint32_t max);
/* Tells every waiter of receiver (one SHOAL_MSG_ROOM each, from receiver,
 * with status) and clears its flag. */
void shoal__room_tell(struct shoal_runtime_s *rt, struct shoal_tcache_s *tc, shoal_pid_t receiver,
                      int status);
/* How many wait for room in receiver now: waiters that have ended since
 * they asked (an actor that stopped, crashed or exited first) are taken
 * off here, and before max is counted in shoal__room_add -- they would
 * otherwise hold their places until the receiver next drains. */
size_t shoal__room_count(struct shoal_runtime_s *rt, shoal_pid_t receiver);
/* Whether waiter is still the live actor it was when it asked (its
 * generation alive): a waiter that ended waits for nothing. */
bool shoal__room_waiter_alive(struct shoal_runtime_s *rt, shoal_pid_t waiter);
/* Takes waiter off receiver's waiters (a thread that gave up). */
void shoal__room_cancel(struct shoal_runtime_s *rt, shoal_pid_t receiver, shoal_pid_t waiter);

/* Room in the runtime's unbounded mailboxes. While they hold max_queued
 * messages (runtime opts; queued.c) a send into one is refused whatever
 * room its receiver has, so a waiter asking then -- of a receiver with
 * room of its own, or of a group -- is listed apart and told (SHOAL_OK,
 * from the receiver) when they have drained below 9/10 of it: by the timer
 * thread, which lowers the flag and then tells while the list holds any
 * (every 10 ms while max_queued is set), or by the ask itself when it
 * finds the flag down after listing (both under the list's lock: one sees
 * the other). A receiver that ends meanwhile answers the retry with
 * SHOAL_ENOPROC. SHOAL_ENOTSUP from the ask: not such a refusal (the
 * receiver's own room is asked for); SHOAL_ENOMEM. */
int shoal__room_ask_queued(struct shoal_runtime_s *rt, struct shoal_tcache_s *tc,
                           shoal_pid_t receiver, shoal_pid_t waiter, bool group);
void shoal__room_tell_queued(struct shoal_runtime_s *rt, struct shoal_tcache_s *tc);
bool shoal__room_queued_waiting(struct shoal_runtime_s *rt);
void shoal__room_cancel_queued(struct shoal_runtime_s *rt, shoal_pid_t receiver,
                               shoal_pid_t waiter);

/* Whether the plain actor pid has room below its low-water mark (true for
 * an unbounded one; false for a group's own actor: its members tell), with
 * *gone set when pid is no longer that actor.
 * mo: the loads' order (seq_cst for the ask and after an IDLE store). */
bool shoal__room_in(struct shoal_runtime_s *rt, shoal_pid_t pid, memory_order mo, bool *gone);

struct shoal_ctx_s;
/* The drain (above). The receivers the running actor frees room in: itself,
 * then each group above it (room in a member is room in its group), into
 * pids[SHOAL_ROOM_RECEIVERS], read while the actor is still ours; returns
 * how many. Then, its dequeue count published, shoal__room_drain tells
 * those with waiters if the actor has room: with mo relaxed at the end of
 * a turn that goes on, seq_cst after the IDLE store (it reads only the
 * actor table, never a group's record: the actor may run elsewhere by
 * then). */
#define SHOAL_ROOM_RECEIVERS (1u + SHOAL_GROUP_MAX_NESTING) /* itself, its groups */
static inline unsigned shoal__room_receivers(const struct shoal_ctx_s *ctx, shoal_pid_t *pids)
{
    /* Not a group's own actor: room in its mailbox is not room in the
     * group (the group's waiters wait for its members). */
    if (ctx->own != NULL)
        return 0;
    unsigned n = 0;
    pids[n++] = ctx->self;
    /* A member's reference keeps its group's record (and those above)
     * while it runs. */
    for (const shoal_group_t *g = ctx->group; g != NULL && n < SHOAL_ROOM_RECEIVERS; g = g->parent)
        pids[n++] = g->pid;
    return n;
}
/* The drain's work once a flag is seen set (room.c). */
void shoal__room_drain_flagged(struct shoal_runtime_s *rt, struct shoal_tcache_s *tc,
                               const shoal_pid_t *pids, unsigned n, memory_order mo);
static inline void shoal__room_drain(struct shoal_runtime_s *rt, struct shoal_tcache_s *tc,
                                     const shoal_pid_t *pids, unsigned n, memory_order mo)
{
    for (unsigned i = 0; i < n; i++) {
        const shoal_actor_t *a = shoal__actor_at(rt, shoal__pid_slot(pids[i]));
        if (atomic_load_explicit(&a->limit, mo) & SHOAL_LIMIT_ROOM) {
            shoal__room_drain_flagged(rt, tc, pids, n, mo);
            return;
        }
    }
}

/* The plain actor pid: asks for room for waiter (the ask, above): SHOAL_OK
 * (told now or later), SHOAL_ENOPROC (told now), SHOAL_ENOMEM. */
int shoal__room_ask(struct shoal_runtime_s *rt, struct shoal_tcache_s *tc, shoal_pid_t receiver,
                    shoal_pid_t waiter);

#endif
