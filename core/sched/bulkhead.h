/* bulkhead.h - stuck callbacks may hold the spare threads, not the ones
 * that serve.
 *
 * The monitor (monitor.h) makes up for a thread stuck in a callback with a
 * compensating one, at most E = max_extra of them. Past that, each more
 * thread a stuck callback holds is one fewer for the pools that work, and
 * a pool whose workers all hang (an init that never returns, in a reload
 * that then fails; a handler that loops on one kind of message) would take
 * every thread, one after another. So a group's member waits -- is held
 * back, not run -- when
 *   1. E callbacks are stuck and its group has a member stuck now: its
 *      other members are likely to hang the same way (a handler that
 *      waits for a sibling member to run then waits until a stuck
 *      callback returns: README); or
 *   2. it has not started (its INIT, for an init of its behaviour, is still
 *      the first message of its system mailbox), a member's init is among
 *      the stuck callbacks -- a new member's init is what hangs in a
 *      reload -- and either E callbacks are stuck or E members are inside
 *      their init now: those may be stuck too, not yet listed (the monitor
 *      lists a callback only past the hand-off mark), and a compensating
 *      thread started for the first of them would otherwise take the next
 *      new member before the second is seen.
 * Plain actors, groups' own actors, the running members of groups with
 * nothing stuck, and new members while no init is stuck run as before. When
 * a stuck callback returns or a member's init ends, each held member the
 * rule no longer holds goes back to the dispatcher; the others stay held.
 * E = 0 (max_extra_threads none) turns this off, with compensation.
 *
 * PROTOCOL
 * rt->nstuck and group->stuck count the callbacks the monitor has listed as
 * stuck (past the hand-off mark), rt->nstuck_init those of them that are
 * members' inits, rt->ninit the members inside init now: each
 * is added to [relaxed] when one begins (the monitor lists it; a worker
 * enters init), and taken off [relaxed] when it ends -- a listing on the
 * worker as it leaves the callback, while the group is still live -- and
 * only then does the ender take hold_lock to put back what is held. A
 * worker reads the counts [relaxed] at the start of a member's turn; when
 * they say hold, it takes hold_lock and reads them again before it holds
 * the member. The ender, under the lock, reads them and puts back every
 * held member the rule no longer holds. The lock orders the two: if the
 * ender's lock comes after the holder's, it finds the member held and puts
 * it back; if before, the holder's lock acquires the ender's release and
 * its reads see the counts taken off. So a member is never held by a count
 * that has since gone down. A stale first read only lets one more turn
 * run, or takes the lock for nothing. A held actor stays SCHEDULED: no
 * sender pushes it, and it is in no ring, so no other worker runs it
 * meanwhile.
 */
#ifndef SHOAL_SCHED_BULKHEAD_H
#define SHOAL_SCHED_BULKHEAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor/actor.h"
#include "actor/group.h"
#include "runtime/runtime.h"

/* Sets it up: E = max_extra (0: never holds). */
void shoal__bulkhead_init(shoal_runtime_t *rt, unsigned max_extra);
void shoal__bulkhead_fini(shoal_runtime_t *rt);

/* The monitor has listed a stuck callback (a member of g, or g NULL; in
 * that member's init or not). */
void shoal__bulkhead_stuck(shoal_runtime_t *rt, shoal_group_t *g, bool init);
/* That listing has ended (g and init as given to shoal__bulkhead_stuck; g
 * still live). */
void shoal__bulkhead_unstuck(shoal_runtime_t *rt, shoal_group_t *g, bool init);

/* A member enters, and leaves (returns or panics), its init. */
static inline void shoal__bulkhead_init_begin(shoal_runtime_t *rt)
{
    /* relaxed: PROTOCOL. */
    atomic_fetch_add_explicit(&rt->ninit, 1, memory_order_relaxed);
}
void shoal__bulkhead_init_end(shoal_runtime_t *rt);

/* Whether a member's turn must look further: a callback is stuck (the hot
 * path's one read). */
static inline bool shoal__bulkhead_closing(shoal_runtime_t *rt)
{
    /* relaxed: PROTOCOL (what it says is read again). */
    return __builtin_expect(
        atomic_load_explicit(&rt->nstuck, memory_order_relaxed) >= rt->hold_from, 0);
}

/* At the start of a turn of a (SCHEDULED) member a of g, when
 * shoal__bulkhead_closing: true if it is held (the caller runs nothing of
 * it), false if it may run. */
bool shoal__bulkhead_hold(shoal_runtime_t *rt, shoal_actor_t *a, const shoal_group_t *g);

/* Members held now, and how many times one was held so far. */
void shoal__bulkhead_counts(shoal_runtime_t *rt, uint64_t *held, uint64_t *held_total);

#endif
