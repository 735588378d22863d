/* pull_room.c - a pull pool's producers waiting for room (pull.h: room):
 * a producer refused with SHOAL_EBUSY asks for one SHOAL_MSG_ROOM
 * (shoal_notify_room, or a thread's shoal_runtime_send_wait), bounded by
 * the pool's max_waiting; a member that settles items tells them when a
 * quarter of the capacity is free; a thread that gave up takes itself
 * off. The pair that keeps a waiter from being forgotten is stated in
 * pull.h.
 */
#include "pool/pull.h"

#include <stdlib.h>
#include <string.h>

#include "actor/room.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

/* The low-water mark: a quarter of the capacity free (at least one). */
bool shoal__pull_has_room(const shoal_pull_t *q, uint64_t admitted)
{
    /* seq_cst: an asker's load of the capacity pair (pull.h: room), after
     * its store of nwaiting; a settling member's look needs no more. */
    uint64_t cap = atomic_load_explicit(&q->capacity, memory_order_seq_cst);
    uint64_t free_min = cap / 4 != 0 ? cap / 4 : 1;
    return admitted + free_min <= cap; /* a source's claimed room is in admitted */
}

/* Tells every waiter there is room: one SHOAL_MSG_ROOM each, from the pool
 * (sent outside the lock, a batch at a time; the list keeps its memory). */
void shoal__pull_tell_waiters(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pool_t *p, int status)
{
    shoal_pull_t *q = p->pull;
    shoal_pid_t batch[64];
    for (;;) {
        pthread_mutex_lock(&q->room_lock);
        size_t n = q->waiting_n < 64 ? q->waiting_n : 64;
        q->waiting_n -= n;
        if (n != 0)
            memcpy(batch, q->waiting + q->waiting_n, n * sizeof *batch);
        atomic_store_explicit(&q->nwaiting, (uint32_t)q->waiting_n, memory_order_relaxed);
        pthread_mutex_unlock(&q->room_lock);
        for (size_t i = 0; i < n; i++)
            shoal__send_system(rt, tc, batch[i], SHOAL_MSG_ROOM, p->g.pid, (uint32_t)status);
        if (n < 64)
            return;
    }
}

/* shoal__pull_room_after_settle once someone waits for room: apart, so a
 * settle with no waiter saves no registers for it. */
static __attribute__((noinline)) void room_after_settle(struct shoal_ctx_s *ctx, shoal_pool_t *p,
                                                        uint64_t out, bool waiters, bool source)
{
    shoal_pull_t *q = p->pull;
    /* seq_cst: after the member's settle; never below the truth (pull.h). */
    uint64_t left = (atomic_load_explicit(&q->admits, memory_order_seq_cst) & ~PULL_CLOSED) - out;
    if (waiters && shoal__pull_has_room(q, left))
        shoal__pull_tell_waiters(ctx->rt, ctx->tc, p, SHOAL_OK);
    if (source)
        shoal__pull_room(ctx, p, left); /* the source's (pull_source.c) */
}

void shoal__pull_room_after_settle(struct shoal_ctx_s *ctx, shoal_pool_t *p, uint64_t out)
{
    shoal_pull_t *q = p->pull;
    /* seq_cst: the member's reads of the room pairs (pull.h, pull_source.c). */
    bool waiters = atomic_load_explicit(&q->nwaiting, memory_order_seq_cst) != 0;
    bool source = atomic_load_explicit(&q->want_room, memory_order_seq_cst) != 0;
    if (__builtin_expect(waiters || source, 0))
        room_after_settle(ctx, p, out, waiters, source);
    /* else admits is not read: its line stays the senders' */
}

/* Under room_lock: takes the waiters that have ended off the list. A
 * lower nwaiting [seq_cst; no pairing: the other lowering stores, in
 * tell_waiters and when a waiter gives up, are relaxed] only spares a
 * settling member a look for waiters that are gone. */
static void prune(shoal_runtime_t *rt, shoal_pull_t *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->waiting_n; i++)
        if (shoal__room_waiter_alive(rt, q->waiting[i]))
            q->waiting[k++] = q->waiting[i];
    q->waiting_n = k;
    atomic_store_explicit(&q->nwaiting, (uint32_t)k, memory_order_seq_cst);
}

uint32_t shoal__pull_waiting(shoal_runtime_t *rt, shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    pthread_mutex_lock(&q->room_lock);
    prune(rt, q);
    uint32_t n = (uint32_t)q->waiting_n;
    pthread_mutex_unlock(&q->room_lock);
    return n;
}

int shoal__pull_room_ask(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_group_t *g,
                         shoal_pid_t waiter)
{
    shoal_pool_t *p = shoal__pool_of_group(g);
    shoal_pull_t *q = p->pull;
    pthread_mutex_lock(&q->room_lock);
    uint32_t max = atomic_load_explicit(&p->max_waiting, memory_order_relaxed);
    if (max != 0 && q->waiting_n >= max)
        prune(rt, q); /* those that ended hold no place (actor/room.h) */
    if (max != 0 && q->waiting_n >= max) {
        pthread_mutex_unlock(&q->room_lock);
        atomic_fetch_add_explicit(&p->waits_refused, 1, memory_order_relaxed);
        return SHOAL_EOVERLOAD;
    }
    if (q->waiting_n == q->waiting_cap) {
        size_t cap = q->waiting_cap ? q->waiting_cap * 2 : 8;
        shoal_pid_t *w = cap <= (1u << 20) ? realloc(q->waiting, cap * sizeof *w) : NULL;
        if (w == NULL) {
            pthread_mutex_unlock(&q->room_lock);
            return SHOAL_ENOMEM;
        }
        q->waiting = w;
        q->waiting_cap = cap;
    }
    q->waiting[q->waiting_n++] = waiter;
    /* seq_cst: the waiter's store of the room pair, then its read. */
    atomic_store_explicit(&q->nwaiting, (uint32_t)q->waiting_n, memory_order_seq_cst);
    pthread_mutex_unlock(&q->room_lock);
    /* A pool that drains or has ended told its waiters when it closed:
     * one that asks after that hears at once. relaxed: the close sets
     * PULL_CLOSED and then tells under room_lock; an ask that took the
     * lock after that tell sees the bit (the lock orders it), one that
     * took it before was in the list that tell emptied. */
    if (atomic_load_explicit(&q->admits, memory_order_relaxed) & PULL_CLOSED)
        shoal__pull_tell_waiters(rt, tc, p, SHOAL_ENOPROC);
    else if (shoal__pull_has_room(q, shoal__pull_admitted(q, memory_order_seq_cst)))
        shoal__pull_tell_waiters(rt, tc, p, SHOAL_OK);
    return SHOAL_OK;
}

/* A thread's waiter that gave up (its send_wait timed out). */
void shoal__pull_room_cancel(shoal_runtime_t *rt, shoal_group_t *g, shoal_pid_t waiter)
{
    (void)rt;
    shoal_pull_t *q = shoal__pool_of_group(g)->pull;
    pthread_mutex_lock(&q->room_lock);
    for (size_t i = 0; i < q->waiting_n; i++) {
        if (q->waiting[i] == waiter) {
            q->waiting[i] = q->waiting[--q->waiting_n];
            break;
        }
    }
    /* relaxed: fewer waiters only means a drain may skip telling nobody. */
    atomic_store_explicit(&q->nwaiting, (uint32_t)q->waiting_n, memory_order_relaxed);
    pthread_mutex_unlock(&q->room_lock);
}
