/* worker.c - the dispatcher's threads.
 *
 * Each worker takes work in this order: its own ring, the global ring
 * (first, on every other pick, whenever it is not empty, so an actor pushed
 * there is claimed within one turn per worker), half of a sibling's ring,
 * and then spins for spin_us before it parks. From the global ring it takes
 * a run, its share of what waits there (count / threads + 1, at most
 * GLOBAL_BATCH), runs the first and puts the rest at the back of its own
 * ring: actors a thread outside the dispatcher made runnable together --
 * spawned together, so side by side in memory -- run on one thread. Taken
 * one at a time, they alternated between the threads, and two cores
 * working on finely interleaved memory slowed each other (W2 P=1000 from a
 * burst of starts: 27.3M msg/s, against 49.1M in runs; bench/RESULTS.md,
 * the slow mode). Only while its own ring is short (under GLOBAL_RUN_BELOW,
 * an eighth of it), else one at a time as before: a run every other pick
 * from a backlog (10^6 actors made runnable by one thread, W3) grew the
 * rings faster than they ran, to spills and steals (155k of them; W3 took
 * 0.19-1.08 s against 0.22). Compensating workers (started by
 * the monitor while workers are stuck in a handler, monitor.h) are workers
 * like the others: they take, steal, park and are woken the same way.
 *
 * WAKING (no lost wake-up)
 * Work pushed onto a worker's own ring is never stranded: that worker runs
 * it, or, while it is stuck in a handler, the monitor wakes a sibling for
 * it (below). Waking a sibling there is only for parallelism, so it is cheap
 * and best-effort: when the ring holds two or more actors (or, in a long
 * turn -- before its second message and every 16th after -- any actor), no
 * worker is spinning and one is parked, wake one. The woken worker spins
 * and steals. A ring's single actor is stolen only from a worker that has
 * not popped since the thief's last look (ring.h), so a ping-pong pair is not torn across cores; a
 * stuck worker does not pop, so its single actor is taken at a thief's second look. A worker that
 * finds work while it was the last spinner wakes one more if work is still queued (the baton); a
 * worker woken from park counts as a spinner, so the baton passes along until every queued actor
 * has a thread or no thread is parked. Work pushed to the global ring by a thread that is not a
 * worker must wake someone if every worker sleeps. The pair: pusher: claims a cell, or stores a
 * longer overflow [seq_cst] (inject.h: that counts it); then nspinning, nparked [seq_cst loads];
 * wake one if none spins and one is parked. parker: nspinning -= 1, parked = 1, nparked += 1 [all
 * seq_cst]; then the global ring's count [seq_cst loads]; sleep only if it is 0. In the single
 * order of seq_cst operations either the pusher's loads come after the parker's announcements (it
 * sees nparked > 0 and wakes it) or the parker's load of count comes after the push (it does not
 * sleep). A waker claims a sleeper by CAS parked 1 -> 0 [seq_cst] and then futex- wakes it; the
 * sleeper sleeps only while parked == 1 (futex value check), so a wake between its check and its
 * sleep is not lost. Wakers look at the slots below nscan [relaxed]: a compensating slot is below
 * it before its thread starts, and a pusher that counts that thread in nparked has read its
 * increment (an acquiring RMW chain), so it sees nscan past it too.
 *
 * STUCK WORKERS (monitor.c)
 * A worker stuck in a handler runs nothing else. The monitor, on each tick,
 * for a worker seen inside the same callback for a whole tick whose ring is
 * not empty, wakes one as above (shoal__sched_wake); the woken worker steals.
 * When no worker is left to wake (none spins, none is parked) while work is
 * queued, it starts a compensating worker, which spins and steals at once.
 * The monitor sleeps when every live worker is parked. Its pair with a
 * worker that leaves park:
 *   monitor: mon_idle = 1 [seq_cst]; then parked of every live slot and the
 *            state of every compensating slot [seq_cst loads]; sleep only if
 *            all are parked and none is DONE, and only while mon_idle is
 *            still 1 under the timer lock.
 *   worker:  parked 1 -> 0 by CAS [seq_cst] (its own, or a waker's that it
 *            reads with a seq_cst load); then mon_idle [seq_cst load]; if 1,
 *            kick the monitor (clears mon_idle and signals, under the lock).
 * Either the monitor's load sees the 0 or the worker's load sees the 1.
 *
 * RETIRING (compensating workers)
 * The monitor asks one to leave: retire = 1 [seq_cst], then claims it if it
 * is parked (CAS parked 1 -> 0 [seq_cst], then wakes it), as shutdown does.
 * The worker leaves at a safe point: between turns, or instead of sleeping
 * (after announcing itself parked it reads retire [seq_cst], as it reads
 * shutdown). It gives what its ring holds to the global ring (each push
 * counts [seq_cst], then it wakes one as any other pusher), flushes its
 * caches and sets xstate DONE [seq_cst], kicking the monitor if it sleeps
 * (the monitor reads xstate after mon_idle = 1: the same pair). Nothing
 * pushes to a ring but its owner, so the ring stays empty until the slot's
 * next thread.
 */
#include "sched/worker.h"

#include <sched.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "actor/actor.h"
#include "runtime/fault.h"
#include "runtime/runtime.h"
#include "sched/futex.h"
#include "sched/monitor.h"

#define GLOBAL_BATCH 32u
/* Runs from the global ring only while the own ring holds fewer (header). */
#define GLOBAL_RUN_BELOW (SHOAL_RING_SIZE / 8)

shoal_tcache_t *shoal__worker_tcache(shoal_runtime_t *rt, unsigned i) { return &rt->workers[i].tc; }

/* The slots wakers and thieves look at (header). */
static inline unsigned nscan(shoal_runtime_t *rt)
{
    return atomic_load_explicit(&rt->nscan, memory_order_relaxed);
}

static void wake_one(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    unsigned n = nscan(rt);
    unsigned start = atomic_fetch_add_explicit(&rt->wake_rr, 1, memory_order_relaxed);
    for (unsigned i = 0; i < n; i++) {
        shoal_worker_t *w = &rt->workers[(start + i) % n];
        uint32_t one = 1;
        /* seq_cst: claims the sleeper (pairs with its futex check) and is
         * the worker's half of the monitor's idle pair (header). */
        if (atomic_load_explicit(&w->parked, memory_order_relaxed) == 1 &&
            atomic_compare_exchange_strong_explicit(&w->parked, &one, 0, memory_order_seq_cst,
                                                    memory_order_relaxed)) {
            /* seq_cst: the claimer undoes the parker's nparked += 1; read by
             * maybe_wake's seq_cst load (header: the pair). */
            atomic_fetch_sub_explicit(&rt->nparked, 1, memory_order_seq_cst);
            shoal__futex_wake(&w->parked, 1);
            if (tc != NULL)
                SHOAL_STAT_ADD(tc, wakes, 1);
            return;
        }
    }
}

static inline void maybe_wake(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    /* seq_cst loads: the pusher's half of the pair in the header. */
    if (atomic_load_explicit(&rt->nspinning, memory_order_seq_cst) == 0 &&
        atomic_load_explicit(&rt->nparked, memory_order_seq_cst) != 0)
        wake_one(rt, tc);
}

/* The own ring is full: move half of it, oldest first, to the global ring. */
static void spill(shoal_worker_t *w)
{
    shoal_actor_t *batch[256];
    uint32_t left = SHOAL_RING_SIZE / 2;
    while (left != 0) {
        uint32_t k = shoal__ring_take(&w->ring, batch, left < 256 ? left : 256);
        if (k == 0)
            break;
        for (uint32_t i = 0; i < k; i++)
            shoal__inject_push(&w->rt->global, batch[i]);
        left -= k;
    }
}

/* The caller is a worker of rt pushing onto its own ring (header of
 * shoal__sched_push). */
static inline bool own_ring(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    return tc->worker != NULL && tc->worker->rt == rt && !tc->push_global;
}

/* shoal__sched_push's rare cases, apart so the common one saves no
 * registers for them: the own ring is full (half of it spills to the
 * global ring, which wakes one as any push there does), or the actor goes
 * to the global ring. */
static __attribute__((noinline)) void push_slow(shoal_runtime_t *rt, shoal_tcache_t *tc,
                                                shoal_actor_t *a)
{
    shoal_worker_t *w = tc->worker;
    if (own_ring(rt, tc)) {
        do
            spill(w);
        while (!shoal__ring_push(&w->ring, a));
    } else {
        if (w != NULL && w->rt == rt)
            w->took_global = 1; /* our own ring first: a sibling is likelier to take it */
        shoal__inject_push(&rt->global, a);
    }
    maybe_wake(rt, tc);
}

void shoal__sched_push(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a)
{
    if (__builtin_expect(own_ring(rt, tc), 1) &&
        __builtin_expect(shoal__ring_push(&tc->worker->ring, a), 1)) {
        if (shoal__ring_len(&tc->worker->ring) >= 2)
            maybe_wake(rt, tc);
        return;
    }
    push_slow(rt, tc, a);
}

void shoal__sched_share_slow(shoal_worker_t *w) { maybe_wake(w->rt, &w->tc); }

void shoal__sched_wake(shoal_runtime_t *rt) { maybe_wake(rt, NULL); }

static shoal_actor_t *take_global(shoal_worker_t *w)
{
    shoal_runtime_t *rt = w->rt;
    void *batch[GLOBAL_BATCH];
    size_t n = shoal__inject_count(&rt->global, memory_order_relaxed) / rt->nthreads + 1;
    size_t want = n < GLOBAL_BATCH ? n : GLOBAL_BATCH;
    if (shoal__ring_len(&w->ring) >= GLOBAL_RUN_BELOW)
        want = 1; /* header: a backlog is not moved into a ring already long */
    size_t k = shoal__inject_take(&rt->global, batch, want);
    if (k == 0)
        return NULL;
    for (size_t i = 1; i < k; i++)
        while (!shoal__ring_push(&w->ring, batch[i]))
            spill(w);
    return batch[0];
}

static shoal_actor_t *steal(shoal_worker_t *w)
{
    shoal_runtime_t *rt = w->rt;
    unsigned n = nscan(rt);
    w->rng = w->rng * 6364136223846793005u + 1442695040888963407u;
    unsigned start = (unsigned)(w->rng >> 33) % n;
    for (unsigned i = 0; i < n; i++) {
        unsigned v = (start + i) % n;
        if (v == w->id)
            continue;
        shoal_ring_t *victim = &rt->workers[v].ring;
        uint32_t progress = atomic_load_explicit(&victim->progress, memory_order_relaxed);
        bool stale = progress == w->seen_progress[v];
        w->seen_progress[v] = progress;
        uint32_t stolen;
        shoal_actor_t *a = shoal__ring_steal(victim, &w->ring, stale, &stolen);
        if (a != NULL) {
            SHOAL_STAT_ADD(&w->tc, steals, stolen);
            return a;
        }
    }
    return NULL;
}

/* A compensating worker asked to leave (header: RETIRING). */
static inline bool retiring(shoal_worker_t *w, memory_order mo)
{
    return w->extra && atomic_load_explicit(&w->retire, mo);
}

static void unpark_self(shoal_worker_t *w)
{
    uint32_t one = 1;
    /* seq_cst, both ways: the worker's half of the monitor's idle pair; a
     * failure reads the waker's CAS (header). */
    if (atomic_compare_exchange_strong_explicit(&w->parked, &one, 0, memory_order_seq_cst,
                                                memory_order_seq_cst))
        /* seq_cst: as wake_one's (read by maybe_wake). */
        atomic_fetch_sub_explicit(&w->rt->nparked, 1, memory_order_seq_cst);
    /* else a waker claimed us and did the accounting */
}

static void park(shoal_worker_t *w)
{
    shoal_runtime_t *rt = w->rt;
    /* seq_cst: the parker's half of the pair in the header. */
    atomic_store_explicit(&w->parked, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&rt->nparked, 1, memory_order_seq_cst);
    if (shoal__inject_count(&rt->global, memory_order_seq_cst) != 0 ||
        atomic_load_explicit(&rt->shutdown, memory_order_seq_cst) ||
        retiring(w, memory_order_seq_cst)) {
        unpark_self(w);
        return;
    }
    SHOAL_STAT_ADD(&w->tc, parks, 1);
    /* seq_cst: reads the waker's CAS [seq_cst] (header: the idle pair). */
    while (atomic_load_explicit(&w->parked, memory_order_seq_cst) == 1)
        shoal__futex_wait(&w->parked, 1, NULL);
}

static void stop_spinning(shoal_worker_t *w)
{
    if (w->spinning) {
        w->spinning = 0;
        /* seq_cst: the parker's nspinning -= 1 (header: the pair), read by
         * maybe_wake's seq_cst load of nspinning. */
        atomic_fetch_sub_explicit(&w->rt->nspinning, 1, memory_order_seq_cst);
    }
}

static shoal_actor_t *find_work(shoal_worker_t *w)
{
    shoal_runtime_t *rt = w->rt;
    uint64_t spin_start = 0;
    for (;;) {
        shoal_actor_t *a = NULL;
        bool global = shoal__inject_count(&rt->global, memory_order_relaxed) != 0;
        if (global && (!w->took_global || shoal__ring_len(&w->ring) == 0))
            a = take_global(w);
        w->took_global = a != NULL;
        if (a == NULL)
            a = shoal__ring_pop(&w->ring);
        if (a == NULL && global && (a = take_global(w)) != NULL)
            w->took_global = 1;
        if (a == NULL)
            a = steal(w);
        if (a != NULL) {
            if (w->spinning) {
                stop_spinning(w);
                /* We were the last one looking; there may be more. seq_cst:
                 * as maybe_wake's load (the baton, header), after our own
                 * fetch_sub in stop_spinning. */
                if (atomic_load_explicit(&rt->nspinning, memory_order_seq_cst) == 0 &&
                    (shoal__ring_len(&w->ring) != 0 ||
                     shoal__inject_count(&rt->global, memory_order_relaxed) != 0))
                    maybe_wake(rt, &w->tc);
            }
            return a;
        }
        /* acquire: no pairing -- shoal__workers_join's seq_cst store of
         * shutdown publishes nothing read after it (a flag; the sleeping
         * side reads it seq_cst in park). */
        if (atomic_load_explicit(&rt->shutdown, memory_order_acquire) ||
            retiring(w, memory_order_relaxed)) {
            stop_spinning(w);
            return NULL;
        }
        if (!w->spinning) {
            w->spinning = 1;
            /* seq_cst: a spinner announces itself; read by maybe_wake's
             * seq_cst load (a pusher that sees a spinner wakes nobody: the
             * spinner looks again, and parks only through park's pair). */
            atomic_fetch_add_explicit(&rt->nspinning, 1, memory_order_seq_cst);
            spin_start = shoal__now_ns();
        } else if (shoal__now_ns() - spin_start > rt->spin_ns) {
            stop_spinning(w);
            park(w);
            /* Woken (or not asleep after all): look as a spinner, so that
             * finding work passes the baton on to a parked sibling when
             * more is queued. A woken worker that did not count as a
             * spinner took one actor and woke nobody, and the rest waited
             * for a busy thread's turn to end while threads slept. */
            w->spinning = 1;
            /* seq_cst: as above (a woken worker counts as a spinner). */
            atomic_fetch_add_explicit(&rt->nspinning, 1, memory_order_seq_cst);
            /* seq_cst: the worker's load of the idle pair (header). */
            if (atomic_load_explicit(&rt->mon_idle, memory_order_seq_cst))
                shoal__monitor_kick(rt);
            spin_start = shoal__now_ns();
            continue;
        }
        for (int i = 0; i < 16; i++)
            shoal__cpu_relax();
        /* Past the first few microseconds, give the core to any other
         * runnable thread (a producer, a sibling with work) while looking. */
        if (shoal__now_ns() - spin_start > 5000)
            sched_yield();
    }
}

/* ---- compensating workers (header: RETIRING) ------------------------------ */

/* Leaving: what the ring holds goes to the global ring. */
static void extra_hand_back(shoal_worker_t *w)
{
    shoal_actor_t *batch[256];
    uint32_t k, moved = 0;
    while ((k = shoal__ring_take(&w->ring, batch, 256)) != 0) {
        for (uint32_t i = 0; i < k; i++)
            shoal__inject_push(&w->rt->global, batch[i]);
        moved += k;
    }
    if (moved != 0)
        maybe_wake(w->rt, &w->tc);
}

static void extra_done(shoal_worker_t *w)
{
    /* seq_cst: the retiree's store of the idle pair (header). */
    atomic_store_explicit(&w->xstate, SHOAL_EXTRA_DONE, memory_order_seq_cst);
    if (atomic_load_explicit(&w->rt->mon_idle, memory_order_seq_cst))
        shoal__monitor_kick(w->rt);
}

/* Turns until shutdown (or a compensating worker's retirement). The jump
 * point a handler's shoal_panic lands on is set here, once (actor.h):
 * after one, the turn it ended is finished and the loop goes on. Nothing
 * of this frame that changes after the setjmp is read after a longjmp. */
static void run_turns(shoal_worker_t *w)
{
    if (setjmp(w->ctx.panic) != 0)
        shoal__actor_unwound(w);
    for (;;) {
        shoal_actor_t *a = find_work(w);
        if (a == NULL)
            break;
        shoal__actor_run(w, a);
        if (retiring(w, memory_order_relaxed)) /* between turns: a safe point */
            break;
    }
}

static void *worker_main(void *arg)
{
    shoal_worker_t *w = arg;
    shoal_runtime_t *rt = w->rt;
    shoal__fault_thread_start(w, NULL); /* a crash report names this worker's actor */
    shoal__tcache_bind(rt, &w->tc);
    run_turns(w);
    if (w->extra)
        extra_hand_back(w);
    shoal__tcache_flush(&w->tc);
    shoal__tcache_bind(rt, NULL);
    if (w->extra)
        extra_done(w);
    shoal__fault_thread_end();
    return NULL;
}

int shoal__extra_start(shoal_runtime_t *rt, unsigned i)
{
    shoal_worker_t *w = &rt->workers[i];
    /* OFF: the slot's last thread (if any) was joined, so what it wrote is
     * ours to see, and its ring is empty. pthread_create passes all of it
     * on to the new thread. */
    w->spinning = 0;
    w->took_global = 0;
    atomic_store_explicit(&w->retire, 0, memory_order_relaxed);
    atomic_store_explicit(&w->xstate, SHOAL_EXTRA_ON, memory_order_relaxed);
    if (nscan(rt) < i + 1)
        atomic_store_explicit(&rt->nscan, i + 1, memory_order_relaxed); /* only we raise it */
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        atomic_store_explicit(&w->xstate, SHOAL_EXTRA_OFF, memory_order_relaxed);
        return SHOAL_ENOMEM;
    }
    return SHOAL_OK;
}

/* Claims w if it is parked and wakes it (shutdown, retire). */
static void unpark_other(shoal_runtime_t *rt, shoal_worker_t *w)
{
    uint32_t one = 1;
    /* seq_cst: after the store the parker reads (shutdown, retire), as a
     * waker's claim (header). */
    if (atomic_compare_exchange_strong_explicit(&w->parked, &one, 0, memory_order_seq_cst,
                                                memory_order_relaxed)) {
        atomic_fetch_sub_explicit(&rt->nparked, 1, memory_order_seq_cst);
        shoal__futex_wake(&w->parked, 1);
    }
}

void shoal__extra_retire(shoal_runtime_t *rt, unsigned i)
{
    shoal_worker_t *w = &rt->workers[i];
    /* seq_cst: pairs with the parker's load of retire (header). */
    atomic_store_explicit(&w->retire, 1, memory_order_seq_cst);
    unpark_other(rt, w);
}

/* ---- all of them ----------------------------------------------------------- */

int shoal__workers_start(shoal_runtime_t *rt)
{
    unsigned n = rt->nslots;
    rt->workers = aligned_alloc(64, n * sizeof *rt->workers);
    if (rt->workers == NULL)
        return SHOAL_ENOMEM;
    memset(rt->workers, 0, n * sizeof *rt->workers);
    atomic_init(&rt->nscan, rt->nthreads);
    for (unsigned i = 0; i < n; i++) {
        shoal_worker_t *w = &rt->workers[i];
        shoal__ring_init(&w->ring);
        w->rt = rt;
        w->id = i;
        w->extra = i >= rt->nthreads;
        w->rng = 0x9e3779b97f4a7c15u * (i + 1);
        w->seen_progress = calloc(n, sizeof *w->seen_progress);
        atomic_init(&w->parked, 0);
        atomic_init(&w->retire, 0);
        atomic_init(&w->xstate, SHOAL_EXTRA_OFF);
        atomic_init(&w->watch_seq, 0);
        atomic_init(&w->watch_flag, SHOAL_WATCH_NONE);
        shoal__tcache_init(&w->tc, rt, w);
        w->ctx.rt = rt;
        w->ctx.w = w;
        w->ctx.tc = &w->tc;
        if (w->seen_progress == NULL)
            goto fail;
    }
    for (unsigned i = 0; i < rt->nthreads; i++) {
        if (pthread_create(&rt->workers[i].thread, NULL, worker_main, &rt->workers[i]) != 0) {
            unsigned nthreads = rt->nthreads;
            rt->nthreads = i; /* join what started */
            shoal__workers_join(rt);
            rt->nthreads = nthreads;
            goto fail;
        }
    }
    return SHOAL_OK;
fail:
    for (unsigned i = 0; i < n; i++)
        free(rt->workers[i].seen_progress);
    free(rt->workers);
    rt->workers = NULL;
    return SHOAL_ENOMEM;
}

/* Whether slot i has a thread to join. */
static bool has_thread(shoal_runtime_t *rt, unsigned i)
{
    /* acquire: a compensating slot's state, set by the monitor, which has
     * stopped (its join happens before ours), or DONE by the thread. */
    return i < rt->nthreads ||
           atomic_load_explicit(&rt->workers[i].xstate, memory_order_acquire) != SHOAL_EXTRA_OFF;
}

void shoal__workers_join(shoal_runtime_t *rt)
{
    /* seq_cst: pairs with park's seq_cst load of shutdown after it announces
     * itself parked; unpark_other below claims whoever already sleeps. */
    atomic_store_explicit(&rt->shutdown, 1, memory_order_seq_cst);
    for (unsigned i = 0; i < rt->nslots; i++)
        if (has_thread(rt, i)) {
            unpark_other(rt, &rt->workers[i]);
            shoal__futex_wake(&rt->workers[i].parked, 1);
        }
    for (unsigned i = 0; i < rt->nslots; i++) {
        if (has_thread(rt, i)) {
            pthread_join(rt->workers[i].thread, NULL);
            if (i >= rt->nthreads)
                atomic_store_explicit(&rt->workers[i].xstate, SHOAL_EXTRA_OFF,
                                      memory_order_relaxed);
        }
    }
}

void shoal__workers_free(shoal_runtime_t *rt)
{
    if (rt->workers == NULL)
        return;
    for (unsigned i = 0; i < rt->nslots; i++)
        free(rt->workers[i].seen_progress);
    free(rt->workers);
    rt->workers = NULL;
}
