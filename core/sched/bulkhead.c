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

/* A held member (rt->held[], under hold_lock). */
typedef struct shoal_held_back_s {
    shoal_actor_t *a;
    const shoal_group_t *g; /* its group: live while it is (it cannot end, held) */
    bool starting;          /* not started: rule 2 may hold it */
} held_back_t;

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

/* The rule (bulkhead.h). The counts are read [relaxed]: PROTOCOL. */
static bool must_hold(shoal_runtime_t *rt, const shoal_group_t *g, bool starting)
{
    uint32_t stuck = atomic_load_explicit(&rt->nstuck, memory_order_relaxed);
    if (stuck >= rt->hold_at && atomic_load_explicit(&g->stuck, memory_order_relaxed) != 0)
        return true;
    return starting && atomic_load_explicit(&rt->nstuck_init, memory_order_relaxed) != 0 &&
           (stuck >= rt->hold_at ||
            atomic_load_explicit(&rt->ninit, memory_order_relaxed) >= rt->hold_at);
}

/* Under hold_lock: every held member the rule no longer holds, moved into
 * back[] (n of them; the caller puts them back after the lock). starting
 * only: only those (an init's end changes nothing for the others). Whether
 * the "run again" line is due: nothing is held any more. */
static held_back_t *take_released(shoal_runtime_t *rt, bool starting_only, size_t *n, bool *tell)
{
    *n = 0;
    *tell = false;
    if (rt->nheld == 0 || (starting_only && rt->nheld_new == 0))
        return NULL;
    held_back_t *back = malloc(rt->nheld * sizeof *back);
    size_t kept = 0;
    for (size_t i = 0; i < rt->nheld; i++) {
        held_back_t h = rt->held[i];
        bool look = !starting_only || h.starting;
        /* No memory for the list: all go back, and are held again if they
         * must be. */
        if (back == NULL || (look && !must_hold(rt, h.g, h.starting))) {
            if (back != NULL)
                back[(*n)++] = h;
            else
                shoal__inject_push(&rt->global, h.a); /* (under the lock: rare) */
            rt->nheld_new -= h.starting;
            continue;
        }
        rt->held[kept++] = h;
    }
    rt->nheld = kept;
    if (kept == 0 && rt->hold_episode) {
        *tell = rt->hold_told;
        rt->hold_episode = rt->hold_told = false;
    }
    return back;
}

/* After the lock: each looks again at its next turn. */
static void put_back(shoal_runtime_t *rt, held_back_t *back, size_t n, bool tell)
{
    for (size_t i = 0; i < n; i++)
        shoal__inject_push(&rt->global, back[i].a);
    free(back);
    if (n != 0)
        shoal__sched_wake(rt);
    if (tell)
        shoal__log(rt, SHOAL_LOG_INFO, SHOAL_PID_NONE, NULL,
                   "dispatcher: stuck callbacks returned (%" PRIu32
                   " still stuck): the last %zu held members run again",
                   atomic_load_explicit(&rt->nstuck, memory_order_relaxed), n);
}

static void release(shoal_runtime_t *rt, bool starting_only)
{
    if (rt->hold_from == UINT32_MAX) /* off: nothing is ever held */
        return;
    size_t n;
    bool tell;
    pthread_mutex_lock(&rt->hold_lock);
    held_back_t *back = take_released(rt, starting_only, &n, &tell);
    pthread_mutex_unlock(&rt->hold_lock);
    put_back(rt, back, n, tell);
}

void shoal__bulkhead_stuck(shoal_runtime_t *rt, shoal_group_t *g, bool init)
{
    /* relaxed: PROTOCOL (counts; the lock orders what depends on them). */
    atomic_fetch_add_explicit(&rt->nstuck, 1, memory_order_relaxed);
    if (init)
        atomic_fetch_add_explicit(&rt->nstuck_init, 1, memory_order_relaxed);
    if (g != NULL)
        atomic_fetch_add_explicit(&g->stuck, 1, memory_order_relaxed);
}

void shoal__bulkhead_unstuck(shoal_runtime_t *rt, shoal_group_t *g, bool init)
{
    /* relaxed: PROTOCOL (taken off before the lock). */
    if (g != NULL)
        atomic_fetch_sub_explicit(&g->stuck, 1, memory_order_relaxed);
    if (init)
        atomic_fetch_sub_explicit(&rt->nstuck_init, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&rt->nstuck, 1, memory_order_relaxed);
    release(rt, false);
}

void shoal__bulkhead_init_end(shoal_runtime_t *rt)
{
    /* relaxed: PROTOCOL (taken off before the lock). */
    atomic_fetch_sub_explicit(&rt->ninit, 1, memory_order_relaxed);
    release(rt, true);
}

/* It has not started: its INIT, for an init of its behaviour, is still the
 * first of its system mailbox (spawn.c pushes it there before anything can
 * be sent to it). An INIT that runs no plugin code cannot hang. */
static bool not_started(shoal_runtime_t *rt, shoal_actor_t *a)
{
    shoal_actor_back_t *b = shoal__actor_back(rt, a);
    if (b->beh->init == NULL)
        return false;
    /* acquire: pairs with the mailbox push's release of the link (mailbox.h). */
    shoal_mq_node_t *first = atomic_load_explicit(&b->sys_head->next, memory_order_acquire);
    return first != NULL && shoal__env_kind(shoal__env_of(first)) == SHOAL_ENV_INIT;
}

bool shoal__bulkhead_hold(shoal_runtime_t *rt, shoal_actor_t *a, const shoal_group_t *g)
{
    bool starting = not_started(rt, a);
    if (!must_hold(rt, g, starting)) /* a first look: read again under the lock */
        return false;
    uint64_t now = shoal__now_ns();
    bool held = false, tell = false;
    pthread_mutex_lock(&rt->hold_lock);
    if (must_hold(rt, g, starting)) {
        if (rt->nheld == rt->held_cap) {
            size_t cap = rt->held_cap ? rt->held_cap * 2 : 16;
            held_back_t *grown = realloc(rt->held, cap * sizeof *grown);
            if (grown != NULL) {
                rt->held = grown;
                rt->held_cap = cap;
            }
        }
        if (rt->nheld < rt->held_cap) { /* else (no memory) it runs: nothing is lost */
            rt->held[rt->nheld++] = (held_back_t){a, g, starting};
            rt->nheld_new += starting;
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
    /* relaxed: for the line only. */
    uint32_t stuck = atomic_load_explicit(&rt->nstuck, memory_order_relaxed);
    uint32_t inits = atomic_load_explicit(&rt->nstuck_init, memory_order_relaxed);
    pthread_mutex_unlock(&rt->hold_lock);
    if (tell)
        shoal__log(rt, SHOAL_LOG_WARN, SHOAL_PID_NONE, NULL,
                   "dispatcher: %" PRIu32 " callbacks stuck (%" PRIu32
                   " of them inits), runtime.max_extra_threads %" PRIu32
                   ": members of pools with a stuck callback, and new members while inits are "
                   "stuck, wait until one returns, so the other pools keep their threads (first "
                   "held: a %s member of pool %s)",
                   stuck, inits, rt->hold_at, starting ? "new" : "running",
                   g->name != NULL ? g->name : "?");
    return held;
}

void shoal__bulkhead_counts(shoal_runtime_t *rt, uint64_t *held, uint64_t *held_total)
{
    pthread_mutex_lock(&rt->hold_lock);
    *held = rt->nheld;
    *held_total = rt->held_total;
    pthread_mutex_unlock(&rt->hold_lock);
}
