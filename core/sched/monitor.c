/* monitor.c - the dispatcher's monitor: stalls seen, logged, listed, and
 * compensated for (monitor.h). Go's sysmon retake() is the model: a
 * counter each P bumps, compared with the value and time of the last look.
 *
 * WATCHING (no clock on the hot path)
 * A worker makes watch_seq odd on entering a callback [release] and even on
 * leaving it [relaxed] (worker.h). The monitor reads it [acquire] on every
 * tick: the same odd value as at its last look means the same callback,
 * and its age is measured from the first look that saw it (`since`).
 *
 * CAPTURE (reading a stuck worker's names safely)
 * The names of a stall (ctx->name, the pool's and behaviour's) live in
 * records that may be freed once the callback returns (the actor ends, its
 * pool record goes, its plugin closes). So the monitor reads them only while
 * the worker provably cannot get past the end of that callback:
 *   monitor: flag = PROBE [relaxed]; membarrier; seq [acquire]: still X?
 *            yes: read the ctx and names (the worker is inside X, or waits
 *                 at its end: below), list the stall, flag = CAPTURED
 *                 [release]; no: flag = NONE [release]. Then futex-wake.
 *   worker:  leaving X: seq = X + 1 [relaxed]; signal fence; flag
 *            [relaxed]: if not NONE, wait while it is PROBE [acquire], and
 *            if CAPTURED, unlist the stall (under the lock), flag = NONE,
 *            and log its end if it was logged.
 * The membarrier is a full fence on every thread of the process, which
 * with the worker's compiler fence makes a Dekker pair of (flag store, seq
 * load) and (seq store, flag load): either the monitor sees X + 1 and reads
 * nothing, or the worker sees the flag and waits until the monitor is done
 * (its acquire of the final flag orders the monitor's reads before any
 * free). The ctx fields themselves were written before the odd seq store
 * [release] that the monitor acquired. Without membarrier (an old kernel,
 * a seccomp filter) the monitor lists the stall without names and ends it
 * itself when seq moves.
 *
 * A listed stall counts for the bulkhead (bulkhead.h) from its listing,
 * before the flag says CAPTURED, to its end.
 *
 * The list (entries, one per worker slot) is under `lock`: the monitor
 * fills an entry and marks it warned (logging the warning under the lock),
 * the worker clears it, so a stall's warning always precedes its end line,
 * and each is written once.
 */
#include "sched/monitor.h"

#include <inttypes.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "actor/timer.h"
#include "actor/group.h"
#include "runtime/runtime.h"
#include "sched/bulkhead.h"
#include "sched/futex.h"
#include "sched/worker.h"

#define MS 1000000u
#define HANDOFF_MAX_NS (100u * MS)
#define TICK_MIN_NS (10u * MS)
#define TICK_MAX_NS (100u * MS)

/* What the monitor remembers of a slot between ticks (its own). */
typedef struct look_s {
    uint64_t seq;   /* watch_seq at the last look */
    uint64_t since; /* first look that saw it inside that callback; 0: not inside */
    bool listed;    /* captured: the entry is ours until the worker clears it */
    bool blind;     /* listed without names: we end it ourselves */
} look_t;

/* A listed stall (under the monitor's lock). */
typedef struct entry_s {
    bool active;
    bool warned;
    uint64_t seq; /* the callback */
    uint64_t start;
    shoal_group_t *member_of; /* a member's group, counted stuck for the bulkhead */
    bool init;                /* ... in its init */
    char where[224];          /* "pool api, behaviour echo, thread 1" */
    shoal_stall_t info;
} entry_t;

struct shoal_monitor_s {
    uint64_t warn_ns, handoff_ns, tick_ns;
    unsigned max_extra;
    int barrier; /* -1: not tried yet; 0: none; else the membarrier command */
    bool told_no_thread;
    look_t *looks;
    pthread_mutex_t lock;
    entry_t *entries;
    _Atomic uint64_t stalls, started, live;
};

int shoal__monitor_create(shoal_runtime_t *rt, uint64_t warn_ms, unsigned max_extra)
{
    shoal_monitor_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return SHOAL_ENOMEM;
    m->looks = calloc(rt->nslots, sizeof *m->looks);
    m->entries = calloc(rt->nslots, sizeof *m->entries);
    if (m->looks == NULL || m->entries == NULL) {
        free(m->looks);
        free(m->entries);
        free(m);
        return SHOAL_ENOMEM;
    }
    m->warn_ns = warn_ms * MS;
    m->handoff_ns = m->warn_ns < HANDOFF_MAX_NS ? m->warn_ns : HANDOFF_MAX_NS;
    m->tick_ns = m->handoff_ns / 5;
    m->tick_ns = m->tick_ns < TICK_MIN_NS ? TICK_MIN_NS : m->tick_ns;
    m->tick_ns = m->tick_ns > TICK_MAX_NS ? TICK_MAX_NS : m->tick_ns;
    m->max_extra = max_extra;
    m->barrier = -1;
    pthread_mutex_init(&m->lock, NULL);
    rt->monitor = m;
    return SHOAL_OK;
}

void shoal__monitor_destroy(shoal_runtime_t *rt)
{
    shoal_monitor_t *m = rt->monitor;
    if (m == NULL)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->looks);
    free(m->entries);
    free(m);
    rt->monitor = NULL;
}

/* ---- capture ----------------------------------------------------------------- */

/* A full fence on every thread of the process; false if there is none. */
static bool heavy_fence(shoal_monitor_t *m)
{
    if (m->barrier < 0) {
        long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        m->barrier = 0;
        if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
            m->barrier = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
        else if (cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL))
            m->barrier = MEMBARRIER_CMD_GLOBAL;
    }
    return m->barrier != 0 && syscall(SYS_membarrier, m->barrier, 0, 0) == 0;
}

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src != NULL ? src : "?");
}

/* Reads what worker w runs: CAPTURE says why it cannot change under us. */
static void read_names(shoal_worker_t *w, entry_t *e)
{
    const struct shoal_ctx_s *c = &w->ctx;
    shoal_stall_t *s = &e->info;
    const shoal_group_t *g = c->group != NULL ? c->group : c->own; /* a member, a group's actor */
    e->member_of = c->group;
    e->init = c->in_init;
    s->pid = c->self;
    copy(s->name, sizeof s->name, c->name);
    copy(s->behaviour, sizeof s->behaviour, c->b->beh->name);
    copy(s->group, sizeof s->group, g != NULL ? g->name : "");
    for (unsigned k = 0; g != NULL && k < SHOAL_STALL_GROUPS_MAX; g = g->parent)
        s->groups[k++] = g;
    shoal__stall_where(s, e->where, sizeof e->where);
}

void shoal__stall_where(const shoal_stall_t *s, char *buf, size_t size)
{
    if (s->group[0] != '\0') /* a group is a pool, to whoever reads the log */
        snprintf(buf, size, "pool %s, behaviour %s, thread %u", s->group, s->behaviour, s->thread);
    else
        snprintf(buf, size, "behaviour %s, thread %u", s->behaviour, s->thread);
}

/* Worker i has been inside callback `seq` since `since`: list it. False if
 * it has left that callback meanwhile. */
static bool capture(shoal_runtime_t *rt, shoal_monitor_t *m, unsigned i, uint64_t seq,
                    uint64_t since, bool *blind)
{
    shoal_worker_t *w = &rt->workers[i];
    entry_t e = {.active = true, .seq = seq, .start = since};
    e.info.thread = i;
    e.info.pid = SHOAL_PID_NONE;
    atomic_store_explicit(&w->watch_flag, SHOAL_WATCH_PROBE, memory_order_relaxed);
    *blind = !heavy_fence(m);
    /* acquire: pairs with watch_enter's release (the ctx fields). */
    bool inside = atomic_load_explicit(&w->watch_seq, memory_order_acquire) == seq;
    if (inside && !*blind) {
        read_names(w, &e);
    } else if (inside) {
        copy(e.info.name, sizeof e.info.name, "(unknown: no membarrier)");
        snprintf(e.where, sizeof e.where, "thread %u", i);
    }
    if (inside) {
        pthread_mutex_lock(&m->lock);
        m->entries[i] = e;
        pthread_mutex_unlock(&m->lock);
        /* Before the flag below: its end (the worker's, or ours when
         * blind) takes it off again, the group still live. */
        shoal__bulkhead_stuck(rt, e.member_of, e.init);
    }
    /* release: our reads of its names happen before what the worker does
     * after it reads this (it may free them). */
    atomic_store_explicit(&w->watch_flag,
                          inside && !*blind ? SHOAL_WATCH_CAPTURED : SHOAL_WATCH_NONE,
                          memory_order_release);
    shoal__futex_wake(&w->watch_flag, 1);
    return inside;
}

/* The entry of slot i ends: unlisted, and its end logged if its start was. */
static void end_entry(shoal_runtime_t *rt, shoal_monitor_t *m, unsigned i, uint64_t now)
{
    pthread_mutex_lock(&m->lock);
    entry_t e = m->entries[i];
    m->entries[i].active = false;
    pthread_mutex_unlock(&m->lock);
    if (e.active && e.warned)
        shoal__log(rt, SHOAL_LOG_WARN, e.info.pid, e.info.name, "stall: returned after %.1f s (%s)",
                   (double)(now - e.start) / 1e9, e.where);
    if (e.active)
        shoal__bulkhead_unstuck(rt, e.member_of, e.init);
}

/* What the monitor remembers of slot i is dropped (its thread retired, or
 * a new one takes the slot): a stall listed blind there is ended first --
 * the worker ends the others itself, but a blind one only the monitor
 * does, and left listed it would count as stuck for good (bulkhead.h). */
static void forget(shoal_runtime_t *rt, shoal_monitor_t *m, unsigned i, uint64_t now)
{
    if (m->looks[i].listed && m->looks[i].blind)
        end_entry(rt, m, i, now);
    m->looks[i] = (look_t){0};
}

void shoal__watch_flagged(shoal_worker_t *w)
{
    uint32_t f;
    /* acquire: pairs with capture's final store. */
    while ((f = atomic_load_explicit(&w->watch_flag, memory_order_acquire)) == SHOAL_WATCH_PROBE)
        shoal__futex_wait(&w->watch_flag, SHOAL_WATCH_PROBE, NULL);
    if (f != SHOAL_WATCH_CAPTURED)
        return;
    /* It ran long: its turn ends after it, as on shoal_yield -- the end
     * of a turn publishes what it has handled (actor/turn.c), so a turn
     * of slow handlers shows them handled as it goes (a shutdown past its
     * deadline inside one counted them lost), and the actors behind it on
     * this thread's ring get their turn. (Reset at the next turn's start:
     * a callback outside a turn ends nothing.) This worker's own field. */
    w->ctx.yield = true;
    shoal_runtime_t *rt = w->rt;
    end_entry(rt, rt->monitor, w->id, shoal__now_ns());
    atomic_store_explicit(&w->watch_flag, SHOAL_WATCH_NONE, memory_order_relaxed);
}

/* ---- the tick ---------------------------------------------------------------- */

static uint32_t xstate(shoal_runtime_t *rt, unsigned i, memory_order mo)
{
    return atomic_load_explicit(&rt->workers[i].xstate, mo);
}

/* Slot i has a thread that runs actors now. */
static bool live(shoal_runtime_t *rt, unsigned i)
{
    /* acquire: pairs with extra_done's seq_cst store of DONE (worker.c);
     * ON is this thread's own store, and join_retired has already acquired
     * a DONE, so nothing read after this depends on it. */
    return i < rt->nthreads || xstate(rt, i, memory_order_acquire) == SHOAL_EXTRA_ON;
}

/* Joins the compensating workers that retired. */
static void join_retired(shoal_runtime_t *rt, shoal_monitor_t *m)
{
    for (unsigned i = rt->nthreads; i < rt->nslots; i++) {
        /* acquire: pairs with extra_done's store; what it did is ours. */
        if (xstate(rt, i, memory_order_acquire) != SHOAL_EXTRA_DONE)
            continue;
        pthread_join(rt->workers[i].thread, NULL);
        forget(rt, m, i, shoal__now_ns());
        atomic_store_explicit(&rt->workers[i].xstate, SHOAL_EXTRA_OFF, memory_order_relaxed);
        uint64_t n = atomic_load_explicit(&m->live, memory_order_relaxed) - 1;
        atomic_store_explicit(&m->live, n, memory_order_relaxed);
        shoal__log(rt, SHOAL_LOG_INFO, SHOAL_PID_NONE, NULL,
                   "dispatcher: compensating thread %u retired (%" PRIu64 " left)", i, n);
    }
}

/* Looks at slot i; true if it is stuck (past the hand-off mark). */
static bool look(shoal_runtime_t *rt, shoal_monitor_t *m, unsigned i, uint64_t now)
{
    look_t *x = &m->looks[i];
    shoal_worker_t *w = &rt->workers[i];
    /* acquire: see capture. */
    uint64_t s = atomic_load_explicit(&w->watch_seq, memory_order_acquire);
    if (x->listed && x->blind && s != x->seq)
        end_entry(rt, m, i, now); /* a worker listed without names: we end it */
    if ((s & 1) == 0 || s != x->seq || x->since == 0) {
        *x = (look_t){.seq = s, .since = (s & 1) ? now : 0};
        return false;
    }
    /* Inside the same callback for a whole tick: its ring runs nothing. */
    if (shoal__ring_len(&w->ring) != 0)
        shoal__sched_wake(rt);
    if (now - x->since < m->handoff_ns)
        return false;
    if (!x->listed && !(x->listed = capture(rt, m, i, s, x->since, &x->blind))) {
        x->since = 0; /* it returned meanwhile */
        return false;
    }
    return true;
}

/* Logs the stalls past stall_warn that were not logged yet. */
static void warn(shoal_runtime_t *rt, shoal_monitor_t *m, uint64_t now)
{
    for (unsigned i = 0; i < rt->nslots; i++) {
        look_t *x = &m->looks[i];
        if (!x->listed || now - x->since < m->warn_ns)
            continue;
        pthread_mutex_lock(&m->lock);
        entry_t *e = &m->entries[i];
        if (e->active && e->seq == x->seq && !e->warned) {
            e->warned = true;
            e->info.warned = true;
            atomic_fetch_add_explicit(&m->stalls, 1, memory_order_relaxed);
            /* Under the lock: the worker's end line waits for this one. */
            shoal__log(rt, SHOAL_LOG_WARN, e->info.pid, e->info.name,
                       "stall: in its handler for %.1f s (%s)", (double)(now - e->start) / 1e9,
                       e->where);
        }
        pthread_mutex_unlock(&m->lock);
    }
}

/* Compensating workers: one more when workers are stuck, work is queued
 * and no worker is free to take it (none spins, none is parked), as Go's
 * handoffp starts an M only for a P with work; at most one per stuck worker
 * and max_extra in all. One retires for each stuck worker that returned. */
static void balance(shoal_runtime_t *rt, shoal_monitor_t *m, unsigned stuck, bool needed)
{
    unsigned want = stuck < m->max_extra ? stuck : m->max_extra, on = 0;
    for (unsigned i = rt->nthreads; i < rt->nslots; i++)
        on += xstate(rt, i, memory_order_relaxed) == SHOAL_EXTRA_ON &&
              !atomic_load_explicit(&rt->workers[i].retire, memory_order_relaxed);
    for (unsigned i = rt->nthreads; i < rt->nslots && needed && on < want; i++) {
        if (xstate(rt, i, memory_order_relaxed) != SHOAL_EXTRA_OFF)
            continue;
        /* Counted before it starts: whoever sees its work done (stats,
         * a test) sees it counted. Undone if it cannot start. */
        uint64_t n = atomic_load_explicit(&m->live, memory_order_relaxed) + 1;
        atomic_fetch_add_explicit(&m->started, 1, memory_order_relaxed);
        atomic_store_explicit(&m->live, n, memory_order_relaxed);
        if (shoal__extra_start(rt, i) != SHOAL_OK) {
            atomic_fetch_sub_explicit(&m->started, 1, memory_order_relaxed);
            atomic_store_explicit(&m->live, n - 1, memory_order_relaxed);
            if (!m->told_no_thread)
                shoal__log(rt, SHOAL_LOG_ERROR, SHOAL_PID_NONE, NULL,
                           "dispatcher: cannot start a compensating thread");
            m->told_no_thread = true;
            break;
        }
        on++;
        forget(rt, m, i, shoal__now_ns());
        shoal__log(rt, SHOAL_LOG_INFO, SHOAL_PID_NONE, NULL,
                   "dispatcher: compensating thread %u started: %u stuck in a handler (%" PRIu64
                   " of at most %u running)",
                   i, stuck, n, m->max_extra);
        break; /* one a tick: the next look says whether more are needed */
    }
    /* The last ones first, and never one that is itself stuck. */
    for (unsigned i = rt->nslots; i-- > rt->nthreads && on > stuck;) {
        shoal_worker_t *w = &rt->workers[i];
        look_t *x = &m->looks[i];
        bool stuck_here = x->since != 0 && x->listed;
        if (xstate(rt, i, memory_order_relaxed) != SHOAL_EXTRA_ON ||
            atomic_load_explicit(&w->retire, memory_order_relaxed) || stuck_here)
            continue;
        shoal__extra_retire(rt, i);
        on--;
    }
}

/* Whether every live worker sleeps (then the monitor may too). Sets
 * mon_idle first: the idle pair of worker.c. */
static bool all_parked(shoal_runtime_t *rt)
{
    /* seq_cst: the monitor's store of the idle pair (worker.c). */
    atomic_store_explicit(&rt->mon_idle, 1, memory_order_seq_cst);
    for (unsigned i = 0; i < rt->nslots; i++) {
        uint32_t st = i < rt->nthreads ? SHOAL_EXTRA_ON : xstate(rt, i, memory_order_seq_cst);
        /* seq_cst: the monitor's loads of the idle pair. */
        if (st == SHOAL_EXTRA_DONE ||
            (st == SHOAL_EXTRA_ON &&
             atomic_load_explicit(&rt->workers[i].parked, memory_order_seq_cst) != 1)) {
            atomic_store_explicit(&rt->mon_idle, 0, memory_order_relaxed);
            return false;
        }
    }
    return true;
}

uint64_t shoal__monitor_tick(shoal_runtime_t *rt, uint64_t now)
{
    shoal_monitor_t *m = rt->monitor;
    join_retired(rt, m);
    unsigned stuck = 0;
    bool queued = shoal__inject_count(&rt->global, memory_order_relaxed) != 0;
    for (unsigned i = 0; i < rt->nslots; i++) {
        if (live(rt, i)) {
            stuck += look(rt, m, i, now);
            queued |= shoal__ring_len(&rt->workers[i].ring) != 0;
        } else {
            forget(rt, m, i, now);
        }
    }
    bool idle_worker = atomic_load_explicit(&rt->nspinning, memory_order_relaxed) != 0 ||
                       atomic_load_explicit(&rt->nparked, memory_order_relaxed) != 0;
    balance(rt, m, stuck, stuck != 0 && queued && !idle_worker);
    warn(rt, m, now);
    return all_parked(rt) ? 0 : now + m->tick_ns;
}

void shoal__monitor_kick(shoal_runtime_t *rt) { shoal__timers_kick(rt); }

/* ---- what others read -------------------------------------------------------- */

size_t shoal__stalls(shoal_runtime_t *rt, shoal_stall_t *out, size_t cap, bool all)
{
    shoal_monitor_t *m = rt->monitor;
    size_t n = 0;
    uint64_t now = shoal__now_ns();
    pthread_mutex_lock(&m->lock);
    for (unsigned i = 0; i < rt->nslots; i++) {
        const entry_t *e = &m->entries[i];
        if (!e->active || (!all && !e->warned))
            continue;
        if (n < cap) {
            out[n] = e->info;
            out[n].elapsed_ns = now > e->start ? now - e->start : 0;
        }
        n++;
    }
    pthread_mutex_unlock(&m->lock);
    return n;
}

size_t shoal__in_callbacks(shoal_runtime_t *rt)
{
    size_t n = 0;
    for (unsigned i = 0; i < rt->nslots; i++) {
        /* relaxed: a count to poll; nothing is read through it. */
        if (atomic_load_explicit(&rt->workers[i].watch_seq, memory_order_relaxed) & 1)
            n++;
    }
    return n;
}

void shoal__monitor_counts(shoal_runtime_t *rt, uint64_t *stalls, uint64_t *started,
                           uint64_t *live_now)
{
    shoal_monitor_t *m = rt->monitor;
    *stalls = atomic_load_explicit(&m->stalls, memory_order_relaxed);
    *started = atomic_load_explicit(&m->started, memory_order_relaxed);
    *live_now = atomic_load_explicit(&m->live, memory_order_relaxed);
}
