/* spawn.c - an actor's record: spawned into a free slot (its state, its
 * extension, its first messages, published to senders), and freed when it
 * has ended (the generation moves on, so stale PIDs fail their
 * reservation, and the slot is reused). The publication order is actor.h's.
 */
#include "actor/actor.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "actor/call.h"
#include "actor/ctx.h"
#include "actor/group.h"
#include "actor/send.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
#include "sched/worker.h"

int shoal__actor_spawn(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t parent,
                       const shoal_behaviour_t *beh, const void *args, uint32_t limit,
                       uint32_t kind, const shoal_actor_hold_t *hold, shoal_pid_t *pid)
{
    shoal_spawn_t s = {
        .parent = parent, .beh = beh, .args = args, .limit = limit, .kind = kind, .hold = hold};
    return shoal__actor_spawn_as(rt, tc, &s, pid);
}

int shoal__actor_spawn_as(shoal_runtime_t *rt, shoal_tcache_t *tc, const shoal_spawn_t *s,
                          shoal_pid_t *pid)
{
    shoal_pid_t parent = s->parent;
    const shoal_behaviour_t *beh = s->beh;
    const void *args = s->args;
    uint32_t limit = s->limit, kind = s->kind;
    const shoal_actor_hold_t *hold = s->hold;
    if (tc == NULL)
        return SHOAL_ENOMEM;
    if (kind != SHOAL_ACTOR_WAITER && (beh == NULL || beh->handle_message == NULL))
        return SHOAL_EINVAL;
    if (limit == SHOAL_MAILBOX_UNBOUNDED)
        limit = 0;
    else if (limit > SHOAL_MAILBOX_MAX)
        return SHOAL_EINVAL;
    /* acquire: no pairing -- stop_all's seq_cst store of stopping publishes
     * nothing this needs; the check is a flag (runtime.c says why a spawn
     * past it is still reached). */
    if (atomic_load_explicit(&rt->stopping, memory_order_acquire) && kind != SHOAL_ACTOR_WAITER)
        return SHOAL_ESTOPPED;

    uint32_t slot;
    int rc = shoal__slot_alloc(tc, &slot);
    if (rc != SHOAL_OK)
        return rc;
    shoal_actor_t *a = shoal__actor_at(rt, slot);
    shoal_actor_back_t *b = shoal__actor_back(rt, a);
    void *state = NULL;
    shoal_actor_ext_t *ext = NULL;
    shoal_env_t *init = NULL;
    if (beh != NULL && beh->state_size != 0 && (state = calloc(1, beh->state_size)) == NULL)
        goto fail;
    if (parent != SHOAL_PID_NONE || hold != NULL || s->member_of != NULL || s->sends != NULL ||
        s->gated) {
        if ((ext = calloc(1, sizeof *ext)) == NULL)
            goto fail;
        ext->parent = parent;
        ext->member_of = s->member_of;
        if (s->member_words != NULL)
            memcpy(ext->member, s->member_words, sizeof ext->member);
        ext->sends = s->sends;
        ext->notify_start = s->notify_start && parent != SHOAL_PID_NONE;
        ext->gated = s->gated;
        if (hold != NULL)
            ext->hold = *hold;
    }
    /* INIT runs init; without one it is still the turn that tells a
     * parent that asked (notify_start) the actor has started. */
    if (beh != NULL && (beh->init != NULL || (ext != NULL && ext->notify_start)) &&
        (init = shoal__env_new(tc, SHOAL_ENV_INIT, 0, parent, 0, 0, &args, sizeof args)) == NULL)
        goto fail;

    uint64_t uw = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    uint64_t sw = atomic_load_explicit(&a->sys_rsv, memory_order_relaxed);
    uint32_t gen = shoal__rsv_gen(uw);
    if (gen == 0)
        gen = 1; /* a slot never used before */
    shoal__mq_init(&a->user_tail, &b->user_head, &a->user_stub);
    shoal__mq_init(&a->sys_tail, &b->sys_head, &b->sys_stub);
    atomic_store_explicit(&b->user_deq, shoal__rsv_count(uw), memory_order_relaxed);
    b->sys_deq = shoal__rsv_count(sw);
    b->beh = beh;
    b->state = state;
    b->ext = ext;
    atomic_store_explicit(&a->limit, limit, memory_order_relaxed);
    atomic_store_explicit(&a->kind, kind, memory_order_relaxed);
    atomic_store_explicit(&a->owner, 0, memory_order_relaxed);
    if (s->group != NULL)
        s->group->pid = shoal__pid_make(gen, slot);
    /* release: pairs with the acquire load in route_to_group (send.c), whose
     * check of group->pid needs the store above. */
    atomic_store_explicit(&a->group, s->group, memory_order_release);
    /* INIT goes in before the actor is published, so it is always the first
     * message (nothing, not even a STOP, can come ahead of it): the queue is
     * still ours alone, and its reservation is counted in the word below. */
    uint32_t sys_count = shoal__rsv_count(sw);
    if (init != NULL) {
        shoal__mq_push(&a->sys_tail, &init->node);
        sys_count = (sys_count + 1) & SHOAL_RSV_COUNT_MASK;
    }
    /* FREE -> IDLE only now, after every write above. A stale scheduler --
     * a sender of the slot's previous actor between its link and its
     * shoal__schedule, or a pool waking a member that ended meanwhile --
     * may CAS this IDLE to SCHEDULED and push the new actor early: a
     * spurious turn, never one on a half-made record. release: pairs with
     * that CAS (seq_cst, send.c); it also comes before the reservation
     * words below, so a sender whose reservation succeeds finds IDLE (or
     * later), never FREE, and schedules what it sent. */
    atomic_store_explicit(&a->sched, SHOAL_SCHED_IDLE, memory_order_release);
    /* release (both): pairs with the sender's reservation CAS (mailbox.h,
     * seq_cst) and the acquire loads of user_rsv in route_to_group (send.c)
     * and stop_all (runtime.c): a live word's record is set up. */
    uint64_t base = (uint64_t)gen << SHOAL_RSV_GEN_SHIFT | SHOAL_RSV_ALIVE;
    atomic_store_explicit(&a->sys_rsv, base | sys_count, memory_order_release);
    atomic_store_explicit(&a->user_rsv, base | shoal__rsv_count(uw), memory_order_release);
    atomic_fetch_add_explicit(&rt->live, 1, memory_order_relaxed);
    if (kind != SHOAL_ACTOR_WAITER) /* as actors_ended (actor_end) */
        SHOAL_STAT_ADD(tc, actors_spawned, 1);
    *pid = shoal__pid_make(gen, slot);
    if (init != NULL)
        shoal__schedule(rt, tc, a);
    return SHOAL_OK;
fail:
    free(state);
    free(ext);
    shoal__slot_free(tc, slot);
    return SHOAL_ENOMEM;
}

void shoal__actor_release(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a)
{
    shoal_actor_back_t *b = shoal__actor_back(rt, a);
    if (b->user_head != &a->user_stub)
        shoal__env_free(tc, shoal__env_of(b->user_head));
    if (b->sys_head != &b->sys_stub)
        shoal__env_free(tc, shoal__env_of(b->sys_head));
    shoal__mq_init(&a->user_tail, &b->user_head, &a->user_stub);
    shoal__mq_init(&a->sys_tail, &b->sys_head, &b->sys_stub);
    free(b->state);
    shoal_actor_hold_t hold = {NULL, NULL, NULL};
    if (b->ext != NULL) {
        hold = b->ext->hold;
        free(b->ext->children);
        free(b->ext->calls);
        free(b->ext->held);
        free(b->ext);
    }
    b->state = NULL;
    b->ext = NULL;
    b->beh = NULL;
    atomic_store_explicit(&a->owner, 0, memory_order_relaxed);
    /* The next generation: stale PIDs now fail their reservation. Only the
     * owner writes a closed word (every CAS on it fails), so a store is
     * enough; release orders the clean-up above before the slot's reuse.
     * release (all three): pairs with the acquire loads of user_rsv in
     * route_to_group (send.c) and stop_all (runtime.c), and with a stale
     * sender's seq_cst load of sched (send.c); the next spawn on this slot
     * is ordered by slots_lock or by this thread's cache (registry.c). */
    uint64_t uw = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    uint64_t sw = atomic_load_explicit(&a->sys_rsv, memory_order_relaxed);
    uint32_t gen = shoal__rsv_gen(uw) + 1;
    if (gen == 0)
        gen = 1;
    atomic_store_explicit(&a->user_rsv, (uint64_t)gen << SHOAL_RSV_GEN_SHIFT | shoal__rsv_count(uw),
                          memory_order_release);
    atomic_store_explicit(&a->sys_rsv, (uint64_t)gen << SHOAL_RSV_GEN_SHIFT | shoal__rsv_count(sw),
                          memory_order_release);
    atomic_store_explicit(&a->sched, SHOAL_SCHED_FREE, memory_order_release);
    shoal__slot_free(tc, shoal__actor_slot(rt, a));
    /* Last: this may close the plugin whose code the actor ran. */
    if (hold.release != NULL)
        hold.release(hold.what);
    /* seq_cst (the fetch_sub and the load of stopping): the ending
     * actor's half of the shutdown pair with stop_all (runtime.c), which
     * stores stopping and then loads live, both seq_cst: either stop_all
     * sees live at 0, or the last one out sees stopping and wakes it. The
     * fetch_sub also pairs with every other ending actor's (one release
     * sequence) and with stop_all's load of live: the last one out, and
     * stop_all, see every actor's clean-up. */
    if (atomic_fetch_sub_explicit(&rt->live, 1, memory_order_seq_cst) == 1 &&
        atomic_load_explicit(&rt->stopping, memory_order_seq_cst)) {
        /* release: no acquiring partner -- all_ended is only the futex word
         * stop_all sleeps on; it rechecks live [acquire], which carries the
         * clean-up (the fetch_sub above). */
        atomic_store_explicit(&rt->all_ended, 1, memory_order_release);
        shoal__futex_wake(&rt->all_ended, INT_MAX);
    }
}
