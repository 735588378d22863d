/* worker.c - the dispatcher's threads.
 *
 * Each worker takes work in this order: its own ring, the global ring
 * (first, on every other pick, whenever it is not empty, so an actor pushed
 * there waits at most one turn per worker), half of a sibling's ring, and
 * then spins for spin_us before it parks.
 *
 * WAKING (no lost wake-up)
 * Work pushed onto a worker's own ring is never stranded: that worker runs
 * it. Waking a sibling there is only for parallelism, so it is cheap and
 * best-effort: when the ring holds two or more actors (or, between two
 * messages of a turn, any actor), no worker is spinning and one is parked,
 * wake one. The woken worker spins and steals. A ring's single actor is
 * stolen only from a worker that has not popped since the thief's last look
 * (ring.h), so a ping-pong pair is not torn across cores.
 * A worker that finds work while it was the last spinner wakes one more if
 * work is still queued (the baton); a worker woken from park counts as a
 * spinner, so the baton passes along until every queued actor has a thread
 * or no thread is parked.
 * Work pushed to the global ring by a thread that is not a worker must
 * wake someone if every worker sleeps. The pair:
 *   pusher: count += 1 [seq_cst] (inject.c); then nspinning, nparked
 *           [seq_cst loads]; wake one if none spins and one is parked.
 *   parker: nspinning -= 1, parked = 1, nparked += 1 [all seq_cst]; then
 *           count [seq_cst load]; sleep only if it is 0.
 * In the single order of seq_cst operations either the pusher's loads come
 * after the parker's announcements (it sees nparked > 0 and wakes it) or the
 * parker's load of count comes after the push (it does not sleep).
 * A waker claims a sleeper by CAS parked 1 -> 0 [acq_rel] and then futex-
 * wakes it; the sleeper sleeps only while parked == 1 (futex value check),
 * so a wake between its check and its sleep is not lost.
 */
#include "sched/worker.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "actor/actor.h"
#include "runtime/fault.h"
#include "runtime/runtime.h"
#include "sched/futex.h"

#define GLOBAL_BATCH 32u

shoal_tcache_t *shoal__worker_tcache(shoal_runtime_t *rt, unsigned i) { return &rt->workers[i].tc; }

static void wake_one(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    unsigned n = rt->nthreads;
    unsigned start = atomic_fetch_add_explicit(&rt->wake_rr, 1, memory_order_relaxed);
    for (unsigned i = 0; i < n; i++) {
        shoal_worker_t *w = &rt->workers[(start + i) % n];
        uint32_t one = 1;
        if (atomic_load_explicit(&w->parked, memory_order_relaxed) == 1 &&
            atomic_compare_exchange_strong_explicit(&w->parked, &one, 0, memory_order_acq_rel,
                                                    memory_order_relaxed)) {
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

void shoal__sched_push(shoal_runtime_t *rt, shoal_tcache_t *tc, shoal_actor_t *a)
{
    shoal_worker_t *w = tc->worker;
    if (w != NULL && w->rt == rt) {
        while (!shoal__ring_push(&w->ring, a))
            spill(w);
        if (shoal__ring_len(&w->ring) >= 2)
            maybe_wake(rt, tc);
        return;
    }
    shoal__inject_push(&rt->global, a);
    maybe_wake(rt, tc);
}

void shoal__sched_share(shoal_worker_t *w)
{
    if (shoal__ring_len(&w->ring) != 0)
        maybe_wake(w->rt, &w->tc);
}

static shoal_actor_t *take_global(shoal_worker_t *w)
{
    shoal_runtime_t *rt = w->rt;
    shoal_actor_t *batch[GLOBAL_BATCH];
    size_t want = 1;
    if (shoal__ring_len(&w->ring) == 0) {
        size_t n = shoal__inject_count(&rt->global, memory_order_relaxed) / rt->nthreads + 1;
        want = n < GLOBAL_BATCH ? n : GLOBAL_BATCH;
    }
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
    unsigned n = rt->nthreads;
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

static void unpark_self(shoal_worker_t *w)
{
    uint32_t one = 1;
    if (atomic_compare_exchange_strong_explicit(&w->parked, &one, 0, memory_order_acq_rel,
                                                memory_order_relaxed))
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
        atomic_load_explicit(&rt->shutdown, memory_order_seq_cst)) {
        unpark_self(w);
        return;
    }
    SHOAL_STAT_ADD(&w->tc, parks, 1);
    /* acquire: pairs with the waker's CAS [acq_rel]. */
    while (atomic_load_explicit(&w->parked, memory_order_acquire) == 1)
        shoal__futex_wait(&w->parked, 1, NULL);
}

static void stop_spinning(shoal_worker_t *w)
{
    if (w->spinning) {
        w->spinning = 0;
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
                /* We were the last one looking; there may be more. */
                if (atomic_load_explicit(&rt->nspinning, memory_order_seq_cst) == 0 &&
                    (shoal__ring_len(&w->ring) != 0 ||
                     shoal__inject_count(&rt->global, memory_order_relaxed) != 0))
                    maybe_wake(rt, &w->tc);
            }
            return a;
        }
        if (atomic_load_explicit(&rt->shutdown, memory_order_acquire)) {
            stop_spinning(w);
            return NULL;
        }
        if (!w->spinning) {
            w->spinning = 1;
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
            atomic_fetch_add_explicit(&rt->nspinning, 1, memory_order_seq_cst);
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

static void *worker_main(void *arg)
{
    shoal_worker_t *w = arg;
    shoal_runtime_t *rt = w->rt;
    shoal__fault_thread_start(w, NULL); /* a crash report names this worker's actor */
    pthread_setspecific(rt->tc_key, &w->tc);
    for (;;) {
        shoal_actor_t *a = find_work(w);
        if (a == NULL)
            break;
        shoal__actor_run(w, a);
    }
    shoal__tcache_flush(&w->tc);
    pthread_setspecific(rt->tc_key, NULL);
    shoal__fault_thread_end();
    return NULL;
}

int shoal__workers_start(shoal_runtime_t *rt)
{
    unsigned n = rt->nthreads;
    rt->workers = aligned_alloc(64, n * sizeof *rt->workers);
    if (rt->workers == NULL)
        return SHOAL_ENOMEM;
    memset(rt->workers, 0, n * sizeof *rt->workers);
    for (unsigned i = 0; i < n; i++) {
        shoal_worker_t *w = &rt->workers[i];
        shoal__ring_init(&w->ring);
        w->rt = rt;
        w->id = i;
        w->rng = 0x9e3779b97f4a7c15u * (i + 1);
        w->seen_progress = calloc(n, sizeof *w->seen_progress);
        atomic_init(&w->parked, 0);
        shoal__tcache_init(&w->tc, rt, w);
        w->ctx.rt = rt;
        w->ctx.w = w;
        w->ctx.tc = &w->tc;
        if (w->seen_progress == NULL)
            goto fail;
    }
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&rt->workers[i].thread, NULL, worker_main, &rt->workers[i]) != 0) {
            rt->nthreads = i; /* join what started */
            shoal__workers_join(rt);
            rt->nthreads = n;
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

void shoal__workers_join(shoal_runtime_t *rt)
{
    atomic_store_explicit(&rt->shutdown, 1, memory_order_seq_cst);
    for (unsigned i = 0; i < rt->nthreads; i++) {
        shoal_worker_t *w = &rt->workers[i];
        uint32_t one = 1;
        if (atomic_compare_exchange_strong_explicit(&w->parked, &one, 0, memory_order_acq_rel,
                                                    memory_order_relaxed))
            atomic_fetch_sub_explicit(&rt->nparked, 1, memory_order_seq_cst);
        shoal__futex_wake(&w->parked, 1);
    }
    for (unsigned i = 0; i < rt->nthreads; i++)
        pthread_join(rt->workers[i].thread, NULL);
}

void shoal__workers_free(shoal_runtime_t *rt)
{
    if (rt->workers == NULL)
        return;
    for (unsigned i = 0; i < rt->nthreads; i++)
        free(rt->workers[i].seen_progress);
    free(rt->workers);
    rt->workers = NULL;
}
