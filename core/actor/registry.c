/* registry.c - actor records and the slots that name them.
 *
 * One reservation of virtual memory per runtime holds max_actors records
 * (a front and a back, a cache line each, in one 128-byte block: actor.h);
 * they are committed as slots are first handed out (below), so an idle
 * actor costs 128 bytes. Records are reused, never unmapped while the
 * runtime lives: a PID's generation is checked in the record itself
 * (mailbox.h). Free slots are cached per thread and in a depot under a
 * mutex, refilled in batches; slots never used are handed out from
 * next_fresh. Within NEAR_LIMIT of max_actors, frees go straight to the
 * depot and slots are taken one by one (fresh or from the depot), so
 * SHOAL_ELIMIT means that max_actors are live, less at most what threads
 * cached earlier (up to SHOAL_SLOT_CACHE each, and only slots freed while
 * the runtime was far from its limit).
 *
 * Fresh records are committed POPULATE_RECS at a time, ahead of their first
 * spawn (madvise MADV_POPULATE_WRITE, under slots_lock): one call for 64
 * pages instead of 64 page faults. On a VM whose faults are dear, W3's 10^6
 * spawns took 0.39 s with 39k faults, 0.12 s with this (bench/RESULTS.md).
 * At most POPULATE_RECS - 1 records (256 KiB) are committed before they are
 * used. Transparent huge pages, tried too, were faster still when the
 * kernel had a huge page at hand (0.03 s) but 0.29 s when it had to compact
 * for one, and commit up to 2 MiB ahead (130 bytes an actor at 10^6): not
 * kept. Where the call is unknown (before Linux 5.14) it fails and the
 * pages fault in as before.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime/runtime.h"

#define SLOT_BATCH (SHOAL_SLOT_CACHE / 2)
#define NEAR_LIMIT 1024u    /* fresh slots left below which caches stop batching */
#define POPULATE_RECS 2048u /* records committed at once: 256 KiB (header) */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Fewer than NEAR_LIMIT never-used slots remain. next_fresh only grows; a
 * racy read errs towards batching, which only the next call corrects. */
static bool near_limit(shoal_runtime_t *rt)
{
    uint32_t used = atomic_load_explicit(&rt->next_fresh, memory_order_relaxed);
    return rt->max_actors - used <= NEAR_LIMIT;
}

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int shoal__slots_init(shoal_runtime_t *rt)
{
    rt->recs_bytes = (size_t)rt->max_actors * sizeof(shoal_actor_rec_t);
    rt->recs = reserve(rt->recs_bytes); /* page-aligned: each record is 128-aligned */
    if (rt->recs == NULL) {
        shoal__slots_fini(rt);
        return SHOAL_ENOMEM;
    }
    pthread_mutex_init(&rt->slots_lock, NULL);
    atomic_init(&rt->next_fresh, 0);
    rt->populated = 0;
    rt->free_slots = NULL;
    rt->nfree = rt->free_cap = 0;
    return SHOAL_OK;
}

void shoal__slots_fini(shoal_runtime_t *rt)
{
    if (rt->recs)
        munmap(rt->recs, rt->recs_bytes);
    rt->recs = NULL;
    free(rt->free_slots);
    rt->free_slots = NULL;
}

/* Commits the records below `upto` that are not yet (header). With
 * rt->slots_lock held. */
static void populate_locked(shoal_runtime_t *rt, uint32_t upto)
{
    while (rt->populated < upto) {
        uint32_t n = rt->max_actors - rt->populated;
        n = n < POPULATE_RECS ? n : POPULATE_RECS;
        (void)madvise(&rt->recs[rt->populated], (size_t)n * sizeof *rt->recs,
                      MADV_POPULATE_WRITE); /* failure: they fault in one by one */
        rt->populated += n;
    }
}

int shoal__slot_alloc(shoal_tcache_t *tc, uint32_t *slot)
{
    if (tc->nslots == 0) {
        shoal_runtime_t *rt = tc->rt;
        pthread_mutex_lock(&rt->slots_lock);
        /* Near the limit take one at a time, from the depot as fresh ones,
         * so no thread hoards what another needs: a thread that took a
         * batch of the slots a pool had freed kept them from the dispatcher
         * thread that started the next pool's workers (SHOAL_ELIMIT with
         * none live). */
        bool near = near_limit(rt);
        uint32_t want = near ? 1 : SLOT_BATCH;
        while (tc->nslots < want && rt->nfree != 0)
            tc->slots[tc->nslots++] = rt->free_slots[--rt->nfree];
        /* Fresh slots in ascending order, popped from the end: hand them out
         * lowest first so new actors sit next to each other. */
        uint32_t fresh = near ? (tc->nslots == 0) : SLOT_BATCH - tc->nslots;
        uint32_t next = atomic_load_explicit(&rt->next_fresh, memory_order_relaxed);
        if (fresh > rt->max_actors - next)
            fresh = rt->max_actors - next;
        for (uint32_t i = fresh; i-- > 0;)
            tc->slots[tc->nslots++] = next + i;
        populate_locked(rt, next + fresh);
        atomic_store_explicit(&rt->next_fresh, next + fresh, memory_order_relaxed);
        pthread_mutex_unlock(&rt->slots_lock);
        if (tc->nslots == 0)
            return SHOAL_ELIMIT;
    }
    *slot = tc->slots[--tc->nslots];
    return SHOAL_OK;
}

static void depot_put(shoal_runtime_t *rt, const uint32_t *slots, uint32_t n)
{
    pthread_mutex_lock(&rt->slots_lock);
    if (rt->nfree + n > rt->free_cap) {
        uint32_t cap = rt->free_cap ? rt->free_cap * 2 : 1024;
        while (cap < rt->nfree + n)
            cap *= 2;
        uint32_t *nv = realloc(rt->free_slots, (size_t)cap * sizeof *nv);
        if (nv == NULL) {
            /* Cannot grow: these slots stay unused until the runtime ends.
             * Counted capacity shrinks by n; nothing else breaks. */
            pthread_mutex_unlock(&rt->slots_lock);
            return;
        }
        rt->free_slots = nv;
        rt->free_cap = cap;
    }
    for (uint32_t i = 0; i < n; i++)
        rt->free_slots[rt->nfree++] = slots[i];
    pthread_mutex_unlock(&rt->slots_lock);
}

void shoal__slot_free(shoal_tcache_t *tc, uint32_t slot)
{
    if (near_limit(tc->rt)) {
        /* Near the limit a freed slot must be visible to every thread at
         * once, or a spawn elsewhere could be refused while slots are free. */
        depot_put(tc->rt, &slot, 1);
        return;
    }
    if (tc->nslots == SHOAL_SLOT_CACHE) {
        depot_put(tc->rt, tc->slots, SLOT_BATCH);
        tc->nslots -= SLOT_BATCH;
        for (uint32_t i = 0; i < tc->nslots; i++)
            tc->slots[i] = tc->slots[i + SLOT_BATCH];
    }
    tc->slots[tc->nslots++] = slot;
}

void shoal__slots_flush(shoal_tcache_t *tc)
{
    if (tc->nslots != 0)
        depot_put(tc->rt, tc->slots, tc->nslots);
    tc->nslots = 0;
}
