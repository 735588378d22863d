/* bulkhead.c - members held back while stuck callbacks hold every spare
 * thread (bulkhead.h has the rule and its protocol).
 */
#include "sched/bulkhead.h"

#include <inttypes.h>
#include <stdlib.h>

#include "actor/envelope.h"
#include "sched/futex.h"
#include "sched/inject.h"
#include "sched/worker.h"

/* A "held" line at most this often: a pool whose handlers each run just
 * past the hand-off mark may close and open the bulkhead at every one. */
#define TELL_EVERY_NS (UINT64_C(10) * 1000000000u)

void shoal__bulkhead_init(shoal_runtime_t *rt, unsigned max_extra)
{
    rt->hold_from = max_extra != 0 ? 1 : UINT32_MAX;
    rt->hold_at = max_extra != 0 ? max_extra : UINT32_MAX;
    pthread_mutex_init(&rt->hold_lock, NULL);
}

void shoal__bulkhead_fini(shoal_runtime_t *rt)
{
    pthread_mutex_destroy(&rt->hold_lock);
    free(rt->held);
    rt->held = NULL;
}

/* Under hold_lock: what is held, taken out to be put back (and whether the
 * "run again" line is due: the bulkhead has opened, stuck < E). */
static shoal_actor_t **take_held(shoal_runtime_t *rt, uint32_t stuck, size_t *n, bool *tell)
{
    shoal_actor_t **back = rt->held;
    *n = rt->nheld;
    *tell = false;
    if (stuck < rt->hold_at && rt->hold_episode) {
        *tell = rt->hold_told && *n != 0;
        rt->hold_episode = rt->hold_told = false;
    }
    rt->held = NULL;
    rt->nheld = rt->held_cap = 0;
    return back;
}

/* Outside the lock: each looks again at its next turn, and is held again
 * if it still must be. */
static void put_back(shoal_runtime_t *rt, shoal_actor_t **back, size_t n, uint32_t stuck, bool tell)
{
    for (size_t i = 0; i < n; i++)
        shoal__inject_push(&rt->global, back[i]);
    free(back);
    if (n != 0)
        shoal__sched_wake(rt);
    if (tell)
        shoal__log(rt, SHOAL_LOG_INFO, SHOAL_PID_NONE, NULL,
                   "dispatcher: a stuck callback returned (%" PRIu32
                   " still stuck): %zu held members run again",
                   stuck, n);
}

void shoal__bulkhead_stuck(shoal_runtime_t *rt, shoal_group_t *g)
{
    /* relaxed: PROTOCOL (counts; the lock orders what depends on them). */
    atomic_fetch_add_explicit(&rt->nstuck, 1, memory_order_relaxed);
    if (g != NULL)
        atomic_fetch_add_explicit(&g->stuck, 1, memory_order_relaxed);
}

void shoal__bulkhead_unstuck(shoal_runtime_t *rt, shoal_group_t *g)
{
    /* relaxed: PROTOCOL (taken off before the lock). */
    if (g != NULL)
        atomic_fetch_sub_explicit(&g->stuck, 1, memory_order_relaxed);
    uint32_t left = atomic_fetch_sub_explicit(&rt->nstuck, 1, memory_order_relaxed) - 1;
    size_t n;
    bool tell;
    pthread_mutex_lock(&rt->hold_lock);
    shoal_actor_t **back = take_held(rt, left, &n, &tell);
    pthread_mutex_unlock(&rt->hold_lock);
    put_back(rt, back, n, left, tell);
}

void shoal__bulkhead_init_end(shoal_runtime_t *rt)
{
    /* relaxed: PROTOCOL (taken off before the lock). */
    atomic_fetch_sub_explicit(&rt->ninit, 1, memory_order_relaxed);
    if (rt->hold_from == UINT32_MAX)
        return; /* off: nothing is ever held */
    size_t n = 0;
    bool tell = false;
    shoal_actor_t **back = NULL;
    pthread_mutex_lock(&rt->hold_lock);
    /* relaxed: PROTOCOL (under the lock). While E are stuck, rule 1 holds
     * whatever rule 2 did: nothing to put back. */
    uint32_t stuck = atomic_load_explicit(&rt->nstuck, memory_order_relaxed);
    if (rt->nheld != 0 && stuck < rt->hold_at)
        back = take_held(rt, stuck, &n, &tell);
    pthread_mutex_unlock(&rt->hold_lock);
    if (back != NULL)
        put_back(rt, back, n, stuck, tell);
}

/* It has not started: its INIT is still the first of its system mailbox
 * (spawn.c pushes it there before anything can be sent to it). */
static bool not_started(shoal_runtime_t *rt, shoal_actor_t *a)
{
    shoal_actor_back_t *b = shoal__actor_back(rt, a);
    /* acquire: pairs with the mailbox push's release of the link (mailbox.h). */
    shoal_mq_node_t *first = atomic_load_explicit(&b->sys_head->next, memory_order_acquire);
    return first != NULL && shoal__env_kind(shoal__env_of(first)) == SHOAL_ENV_INIT;
}

/* The rule (bulkhead.h), on counts read [relaxed] by the caller. */
static bool must_hold(shoal_runtime_t *rt, const shoal_group_t *g, uint32_t stuck, bool starting)
{
    if (stuck >= rt->hold_at &&
        (starting || atomic_load_explicit(&g->stuck, memory_order_relaxed) != 0))
        return true;
    return starting && stuck != 0 &&
           atomic_load_explicit(&rt->ninit, memory_order_relaxed) >= rt->hold_at;
}

bool shoal__bulkhead_hold(shoal_runtime_t *rt, shoal_actor_t *a, const shoal_group_t *g)
{
    bool starting = not_started(rt, a);
    /* relaxed: PROTOCOL (a first look; read again under the lock). */
    if (!must_hold(rt, g, atomic_load_explicit(&rt->nstuck, memory_order_relaxed), starting))
        return false;
    uint64_t now = shoal__now_ns();
    bool held = false, tell = false;
    pthread_mutex_lock(&rt->hold_lock);
    /* relaxed: PROTOCOL (under the lock). */
    uint32_t stuck = atomic_load_explicit(&rt->nstuck, memory_order_relaxed);
    if (must_hold(rt, g, stuck, starting)) {
        if (rt->nheld == rt->held_cap) {
            size_t cap = rt->held_cap ? rt->held_cap * 2 : 16;
            shoal_actor_t **grown = realloc(rt->held, cap * sizeof *grown);
            if (grown != NULL) {
                rt->held = grown;
                rt->held_cap = cap;
            }
        }
        if (rt->nheld < rt->held_cap) { /* else (no memory) it runs: nothing is lost */
            rt->held[rt->nheld++] = a;
            rt->held_total++;
            held = true;
            if (!rt->hold_episode) {
                rt->hold_episode = true;
                tell = rt->held_told_ns == 0 || now - rt->held_told_ns >= TELL_EVERY_NS;
                rt->hold_told = tell;
                if (tell)
                    rt->held_told_ns = now;
            }
        }
    }
    pthread_mutex_unlock(&rt->hold_lock);
    if (tell)
        shoal__log(rt, SHOAL_LOG_WARN, SHOAL_PID_NONE, NULL,
                   "dispatcher: %" PRIu32 " callbacks stuck, %" PRIu32
                   " members in init, runtime.max_extra_threads %" PRIu32
                   ": new members, and members of pools with a stuck callback, wait until one "
                   "returns, so the other pools keep their threads (first held: a %s member of "
                   "pool %s)",
                   stuck, atomic_load_explicit(&rt->ninit, memory_order_relaxed), rt->hold_at,
                   starting ? "new" : "running", g->name != NULL ? g->name : "?");
    return held;
}

void shoal__bulkhead_counts(shoal_runtime_t *rt, uint64_t *held, uint64_t *held_total)
{
    pthread_mutex_lock(&rt->hold_lock);
    *held = rt->nheld;
    *held_total = rt->held_total;
    pthread_mutex_unlock(&rt->hold_lock);
}
