/* room.c - the registry of room waiters (protocol: room.h). */
#include "actor/room.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "actor/ctx.h"
#include "actor/group.h"
#include "actor/send.h"
#include "runtime/runtime.h"

typedef struct waiter_s {
    shoal_pid_t receiver, waiter;
} waiter_t;

struct shoal_room_stripe_s {
    pthread_mutex_t lock;
    waiter_t *w;
    size_t n, cap;
};

/* The stripes, and one more past them: the waiters for the runtime's
 * unbounded mailboxes (max_queued, below). */
#define QUEUED_STRIPE SHOAL_ROOM_STRIPES

int shoal__rooms_init(shoal_runtime_t *rt)
{
    rt->rooms = calloc(SHOAL_ROOM_STRIPES + 1, sizeof *rt->rooms);
    if (rt->rooms == NULL)
        return SHOAL_ENOMEM;
    for (unsigned i = 0; i <= SHOAL_ROOM_STRIPES; i++)
        pthread_mutex_init(&rt->rooms[i].lock, NULL);
    return SHOAL_OK;
}

void shoal__rooms_fini(shoal_runtime_t *rt)
{
    if (rt->rooms == NULL)
        return;
    for (unsigned i = 0; i <= SHOAL_ROOM_STRIPES; i++) {
        pthread_mutex_destroy(&rt->rooms[i].lock);
        free(rt->rooms[i].w);
    }
    free(rt->rooms);
    rt->rooms = NULL;
}

static struct shoal_room_stripe_s *stripe_of(shoal_runtime_t *rt, shoal_pid_t receiver)
{
    return &rt->rooms[shoal__pid_slot(receiver) % SHOAL_ROOM_STRIPES];
}

static shoal_actor_t *front_of(shoal_runtime_t *rt, shoal_pid_t pid)
{
    uint32_t slot = shoal__pid_slot(pid);
    return slot < rt->max_actors ? shoal__actor_at(rt, slot) : NULL;
}

bool shoal__room_waiter_alive(shoal_runtime_t *rt, shoal_pid_t waiter)
{
    shoal_actor_t *a = front_of(rt, waiter);
    if (a == NULL)
        return false;
    /* relaxed: a value on its own; a waiter read as alive a moment after it
     * ended is only kept until the receiver next tells. */
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    return shoal__rsv_gen(w) == shoal__pid_gen(waiter) && shoal__rsv_alive(w);
}

/* Under s->lock: takes receiver's waiters that have ended off s, and
 * returns how many of its waiters are left. */
static size_t prune(shoal_runtime_t *rt, struct shoal_room_stripe_s *s, shoal_pid_t receiver)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n;) {
        if (s->w[i].receiver != receiver) {
            i++;
        } else if (!shoal__room_waiter_alive(rt, s->w[i].waiter)) {
            s->w[i] = s->w[--s->n];
        } else {
            n++;
            i++;
        }
    }
    return n;
}

/* Under s->lock: receiver's waiters on s, counted up to `upto`. */
static size_t count(const struct shoal_room_stripe_s *s, shoal_pid_t receiver, size_t upto)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n && n < upto; i++)
        n += s->w[i].receiver == receiver;
    return n;
}

/* Under s->lock: one more waiter on s; false when memory runs out. */
static bool append(struct shoal_room_stripe_s *s, shoal_pid_t receiver, shoal_pid_t waiter)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        waiter_t *w = cap <= (1u << 20) ? realloc(s->w, cap * sizeof *w) : NULL;
        if (w == NULL)
            return false;
        s->w = w;
        s->cap = cap;
    }
    s->w[s->n++] = (waiter_t){receiver, waiter};
    return true;
}

int shoal__room_add(shoal_runtime_t *rt, shoal_pid_t receiver, shoal_pid_t waiter, uint32_t max)
{
    shoal_actor_t *a = front_of(rt, receiver);
    if (a == NULL)
        return SHOAL_ENOPROC;
    struct shoal_room_stripe_s *s = stripe_of(rt, receiver);
    pthread_mutex_lock(&s->lock);
    /* At most max waiters, live ones: those that ended are looked for only
     * when the count says full (each look reads a waiter's slot). */
    if (max != 0 && count(s, receiver, max) >= max && prune(rt, s, receiver) >= max) {
        pthread_mutex_unlock(&s->lock);
        return SHOAL_EOVERLOAD;
    }
    if (!append(s, receiver, waiter)) {
        pthread_mutex_unlock(&s->lock);
        return SHOAL_ENOMEM;
    }
    /* seq_cst: the asker's half of the Dekker pair (room.h: the ask). */
    atomic_fetch_or_explicit(&a->limit, SHOAL_LIMIT_ROOM, memory_order_seq_cst);
    pthread_mutex_unlock(&s->lock);
    return SHOAL_OK;
}

void shoal__room_tell(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t receiver, int status)
{
    shoal_actor_t *a = front_of(rt, receiver);
    if (a == NULL)
        return;
    struct shoal_room_stripe_s *s = stripe_of(rt, receiver);
    shoal_pid_t batch[64];
    for (;;) {
        size_t k = 0;
        bool more = false;
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < s->n;) {
            if (s->w[i].receiver != receiver) {
                i++;
                continue;
            }
            if (k == 64) {
                more = true;
                break;
            }
            batch[k++] = s->w[i].waiter;
            s->w[i] = s->w[--s->n]; /* order does not matter: all are told */
        }
        /* None of its waiters left: the flag goes (under the lock) -- unless
         * a waiter of another PID of the same slot (a later actor, asked
         * about while an earlier one's waiters were told) still counts on
         * it. */
        bool slot_waits = more;
        for (size_t i = 0; i < s->n && !slot_waits; i++)
            slot_waits = shoal__pid_slot(s->w[i].receiver) == shoal__pid_slot(receiver);
        if (!slot_waits)
            atomic_fetch_and_explicit(&a->limit, ~SHOAL_LIMIT_ROOM, memory_order_relaxed);
        pthread_mutex_unlock(&s->lock);
        /* Outside the lock: a waiter that is gone refuses it, and nothing
         * is lost (it no longer waits). */
        for (size_t i = 0; i < k; i++)
            shoal__send_system(rt, tc, batch[i], SHOAL_MSG_ROOM, receiver, (uint32_t)status);
        if (!more)
            return;
    }
}

size_t shoal__room_count(shoal_runtime_t *rt, shoal_pid_t receiver)
{
    struct shoal_room_stripe_s *s = stripe_of(rt, receiver);
    pthread_mutex_lock(&s->lock);
    size_t n = prune(rt, s, receiver);
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Takes (receiver, waiter) off s, if it is there. */
static void take_off(struct shoal_room_stripe_s *s, shoal_pid_t receiver, shoal_pid_t waiter)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n; i++) {
        if (s->w[i].receiver == receiver && s->w[i].waiter == waiter) {
            s->w[i] = s->w[--s->n];
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
}

void shoal__room_cancel(shoal_runtime_t *rt, shoal_pid_t receiver, shoal_pid_t waiter)
{
    /* The flag may stay set with no waiter left: the receiver's next check
     * tells nobody and clears it. */
    take_off(stripe_of(rt, receiver), receiver, waiter);
}

bool shoal__room_in(shoal_runtime_t *rt, shoal_pid_t pid, memory_order mo, bool *gone)
{
    *gone = false;
    shoal_actor_t *a = front_of(rt, pid);
    if (a == NULL) {
        *gone = true;
        return false;
    }
    /* seq_cst (an asker): a worker's IDLE store read here carries the
     * dequeue count it published before (room.h: the drain). */
    (void)atomic_load_explicit(&a->sched, mo);
    uint64_t w = atomic_load_explicit(&a->user_rsv, mo);
    if (shoal__rsv_gen(w) != shoal__pid_gen(pid) || !shoal__rsv_alive(w)) {
        *gone = true;
        return false;
    }
    /* A group's own actor (a nested pool): its mailbox is no room; its
     * members tell for it, each up its chain of groups. */
    if (atomic_load_explicit(&a->kind, memory_order_relaxed) == SHOAL_ACTOR_GROUP)
        return false;
    uint32_t limit = atomic_load_explicit(&a->limit, mo) & ~SHOAL_LIMIT_ROOM; /* actor.h */
    if (limit == 0)
        return true;
    uint32_t deq = atomic_load_explicit(&shoal__actor_back(rt, a)->user_deq, mo);
    uint32_t free_min = limit / 4 != 0 ? limit / 4 : 1;
    return (uint64_t)shoal__rsv_depth(w, deq) + free_min <= limit;
}

void shoal__room_drain_flagged(shoal_runtime_t *rt, shoal_tcache_t *tc, const shoal_pid_t *pids,
                               unsigned n, memory_order mo)
{
    bool room = false, known = false, gone;
    for (unsigned i = 0; i < n; i++) {
        shoal_actor_t *ra = front_of(rt, pids[i]);
        if (ra == NULL || !(atomic_load_explicit(&ra->limit, mo) & SHOAL_LIMIT_ROOM))
            continue;
        if (!known) { /* room in the actor itself: so has each group above */
            room = shoal__room_in(rt, pids[0], mo, &gone);
            known = true;
        }
        if (room)
            shoal__room_tell(rt, tc, pids[i], SHOAL_OK);
    }
}

int shoal__room_ask(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t receiver,
                    shoal_pid_t waiter)
{
    int rc = shoal__room_add(rt, receiver, waiter, 0);
    if (rc != SHOAL_OK)
        return rc;
    bool gone;
    /* seq_cst: after the flag's fetch_or (room.h: the ask). */
    if (shoal__room_in(rt, receiver, memory_order_seq_cst, &gone) || gone)
        shoal__room_tell(rt, tc, receiver, gone ? SHOAL_ENOPROC : SHOAL_OK);
    return SHOAL_OK;
}

/* ---- room in the runtime's unbounded mailboxes (max_queued) ---------------- */

/* Whether a sender refused now was refused for max_queued: the flag is up
 * and the receiver has room of its own (an unbounded actor always has), or
 * it is a group, whose members may be unbounded. */
static bool queued_refusal(shoal_runtime_t *rt, shoal_pid_t receiver, bool group)
{
    if (rt->max_queued == 0 || !atomic_load_explicit(&rt->queued_over, memory_order_relaxed))
        return false;
    bool gone;
    return group || (shoal__room_in(rt, receiver, memory_order_relaxed, &gone) && !gone);
}

int shoal__room_ask_queued(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_pid_t receiver,
                           shoal_pid_t waiter, bool group)
{
    if (!queued_refusal(rt, receiver, group))
        return SHOAL_ENOTSUP; /* the receiver's own room, not the runtime's */
    struct shoal_room_stripe_s *s = &rt->rooms[QUEUED_STRIPE];
    pthread_mutex_lock(&s->lock);
    bool listed = false;
    for (size_t i = 0; i < s->n && !listed; i++)
        listed = s->w[i].receiver == receiver && s->w[i].waiter == waiter;
    if (!listed && !append(s, receiver, waiter)) {
        pthread_mutex_unlock(&s->lock);
        return SHOAL_ENOMEM;
    }
    pthread_mutex_unlock(&s->lock);
    /* relaxed: ordered by the lock against the timer thread, which lowers
     * the flag (queued.c) before it takes the lock to tell (below): either
     * it finds this waiter, or this load finds the flag down. */
    if (!atomic_load_explicit(&rt->queued_over, memory_order_relaxed))
        shoal__room_tell_queued(rt, tc);
    return SHOAL_OK;
}

void shoal__room_tell_queued(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    struct shoal_room_stripe_s *s = &rt->rooms[QUEUED_STRIPE];
    for (;;) {
        waiter_t batch[64];
        size_t k = 0;
        pthread_mutex_lock(&s->lock);
        while (s->n != 0 && k < 64)
            batch[k++] = s->w[--s->n];
        bool more = s->n != 0;
        pthread_mutex_unlock(&s->lock);
        for (size_t i = 0; i < k; i++)
            shoal__send_system(rt, tc, batch[i].waiter, SHOAL_MSG_ROOM, batch[i].receiver,
                               (uint32_t)SHOAL_OK);
        if (!more)
            return;
    }
}

bool shoal__room_queued_waiting(shoal_runtime_t *rt)
{
    struct shoal_room_stripe_s *s = &rt->rooms[QUEUED_STRIPE];
    pthread_mutex_lock(&s->lock);
    bool any = s->n != 0;
    pthread_mutex_unlock(&s->lock);
    return any;
}

void shoal__room_cancel_queued(shoal_runtime_t *rt, shoal_pid_t receiver, shoal_pid_t waiter)
{
    take_off(&rt->rooms[QUEUED_STRIPE], receiver, waiter);
}
