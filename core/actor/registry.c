/* registry.c - actor records and the slots that name them.
 *
 * One reservation of virtual memory per runtime holds max_actors fronts
 * (64 bytes) and backs (56 bytes); pages are committed by first touch, so an
 * idle actor costs 120 bytes. Records are reused, never unmapped while the
 * runtime lives: a PID's generation is checked in the record itself
 * (mailbox.h). Free slots are cached per thread and in a depot under a
 * mutex, refilled in batches; slots never used are handed out from
 * next_fresh.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime/runtime.h"

#define SLOT_BATCH (SHOAL_SLOT_CACHE / 2)

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int shoal__slots_init(shoal_runtime_t *rt)
{
    rt->fronts_bytes = (size_t)rt->max_actors * sizeof(shoal_actor_t);
    rt->backs_bytes = (size_t)rt->max_actors * sizeof(shoal_actor_back_t);
    rt->fronts = reserve(rt->fronts_bytes);
    rt->backs = reserve(rt->backs_bytes);
    if (rt->fronts == NULL || rt->backs == NULL) {
        shoal__slots_fini(rt);
        return SHOAL_ENOMEM;
    }
    pthread_mutex_init(&rt->slots_lock, NULL);
    rt->next_fresh = 0;
    rt->free_slots = NULL;
    rt->nfree = rt->free_cap = 0;
    return SHOAL_OK;
}

void shoal__slots_fini(shoal_runtime_t *rt)
{
    if (rt->fronts)
        munmap(rt->fronts, rt->fronts_bytes);
    if (rt->backs)
        munmap(rt->backs, rt->backs_bytes);
    rt->fronts = NULL;
    rt->backs = NULL;
    free(rt->free_slots);
    rt->free_slots = NULL;
}

int shoal__slot_alloc(shoal_tcache_t *tc, uint32_t *slot)
{
    if (tc->nslots == 0) {
        shoal_runtime_t *rt = tc->rt;
        pthread_mutex_lock(&rt->slots_lock);
        while (tc->nslots < SLOT_BATCH && rt->nfree != 0)
            tc->slots[tc->nslots++] = rt->free_slots[--rt->nfree];
        /* Fresh slots in ascending order, popped from the end: hand them out
         * lowest first so new actors sit next to each other. */
        uint32_t fresh = SLOT_BATCH - tc->nslots;
        if (fresh > rt->max_actors - rt->next_fresh)
            fresh = rt->max_actors - rt->next_fresh;
        for (uint32_t i = fresh; i-- > 0;)
            tc->slots[tc->nslots++] = rt->next_fresh + i;
        rt->next_fresh += fresh;
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
