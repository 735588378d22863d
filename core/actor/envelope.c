/* envelope.c - envelope allocation: per-thread free lists, a runtime depot
 * of batches, slabs from the heap only when the depot is empty. */
#include "actor/envelope.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/grow.h"
#include "runtime/runtime.h"

#define SLAB_ENVS 1024u /* 64 KiB */

static shoal_env_t *next_of(shoal_env_t *e)
{
    return shoal__env_of(atomic_load_explicit(&e->node.next, memory_order_relaxed));
}
static void set_next(shoal_env_t *e, shoal_env_t *n)
{
    atomic_store_explicit(&e->node.next, n ? &n->node : NULL, memory_order_relaxed);
}

/* Depot batches are stored as chains; the chain length rides in `size` of
 * its first envelope. */
static int depot_put(shoal_runtime_t *rt, shoal_env_t *chain, uint32_t n)
{
    chain->size = n;
    pthread_mutex_lock(&rt->env_lock);
    shoal_env_t **nb =
        shoal__grow(rt->env_batches, rt->env_nbatches, &rt->env_batches_cap, sizeof *nb, 64);
    if (nb == NULL) {
        pthread_mutex_unlock(&rt->env_lock);
        return SHOAL_ENOMEM;
    }
    rt->env_batches = nb;
    rt->env_batches[rt->env_nbatches++] = chain;
    pthread_mutex_unlock(&rt->env_lock);
    return SHOAL_OK;
}

static int refill(shoal_tcache_t *tc)
{
    shoal_runtime_t *rt = tc->rt;
    pthread_mutex_lock(&rt->env_lock);
    if (rt->env_nbatches != 0) {
        shoal_env_t *chain = rt->env_batches[--rt->env_nbatches];
        pthread_mutex_unlock(&rt->env_lock);
        tc->env_nfree = chain->size;
        tc->env_free = chain;
        return SHOAL_OK;
    }
    void **ns = shoal__grow(rt->env_slabs, rt->env_nslabs, &rt->env_slabs_cap, sizeof *ns, 64);
    if (ns == NULL)
        goto fail;
    rt->env_slabs = ns;
    shoal_env_t *slab = aligned_alloc(64, SLAB_ENVS * sizeof *slab);
    if (slab == NULL)
        goto fail;
    rt->env_slabs[rt->env_nslabs++] = slab;
    pthread_mutex_unlock(&rt->env_lock);
    for (uint32_t i = 0; i < SLAB_ENVS; i++)
        set_next(&slab[i], i + 1 < SLAB_ENVS ? &slab[i + 1] : NULL);
    tc->env_free = slab;
    tc->env_nfree = SLAB_ENVS;
    SHOAL_STAT_ADD(tc, env_slabs, 1);
    return SHOAL_OK;
fail:
    pthread_mutex_unlock(&rt->env_lock);
    return SHOAL_ENOMEM;
}

shoal_env_t *shoal__env_alloc(shoal_tcache_t *tc)
{
    if (tc->env_free == NULL && refill(tc) != SHOAL_OK)
        return NULL;
    shoal_env_t *e = tc->env_free;
    tc->env_free = next_of(e);
    tc->env_nfree--;
    /* Envelopes often come back from another core's cache: start taking
     * the next one for writing now. */
    if (tc->env_free != NULL)
        __builtin_prefetch(tc->env_free, 1, 3);
    return e;
}

void shoal__env_drop_payload(shoal_env_t *e)
{
    if (shoal__env_flags(e) & SHOAL_ENV_HEAP) {
        e->payload.heap.free_fn(e->payload.heap.ptr);
        e->meta &= ~(uint64_t)SHOAL_ENV_HEAP;
        e->size = 0;
    }
}

shoal_env_t *shoal__env_move(shoal_tcache_t *tc, shoal_env_t *e)
{
    shoal_env_t *m = shoal__env_alloc(tc);
    if (m == NULL)
        return NULL;
    /* Not the node: e is still its mailbox's dummy, whose link a producer
     * may be writing right now (mailbox.h). */
    atomic_store_explicit(&m->node.next, NULL, memory_order_relaxed);
    m->from = e->from;
    m->meta = e->meta;
    m->type = e->type;
    m->size = e->size;
    m->payload = e->payload;
    e->meta &= ~(uint64_t)SHOAL_ENV_HEAP;
    e->size = 0;
    return m;
}

void shoal__env_free(shoal_tcache_t *tc, shoal_env_t *e)
{
    shoal__env_drop_payload(e);
    set_next(e, tc->env_free);
    tc->env_free = e;
    if (++tc->env_nfree < 2 * SHOAL_ENV_BATCH)
        return;
    /* Too many: give the oldest-linked batch back to the depot. */
    shoal_env_t *last = tc->env_free;
    for (uint32_t i = 1; i < SHOAL_ENV_BATCH; i++)
        last = next_of(last);
    shoal_env_t *chain = tc->env_free;
    shoal_env_t *rest = next_of(last);
    set_next(last, NULL);
    if (depot_put(tc->rt, chain, SHOAL_ENV_BATCH) == SHOAL_OK) {
        tc->env_free = rest;
        tc->env_nfree -= SHOAL_ENV_BATCH;
    } else {
        set_next(last, rest); /* keep them; try again next time */
    }
}

void shoal__envs_flush(shoal_tcache_t *tc)
{
    while (tc->env_free != NULL) {
        uint32_t n = 1;
        shoal_env_t *last = tc->env_free;
        while (n < SHOAL_ENV_BATCH && next_of(last) != NULL) {
            last = next_of(last);
            n++;
        }
        shoal_env_t *chain = tc->env_free;
        shoal_env_t *rest = next_of(last);
        set_next(last, NULL);
        if (depot_put(tc->rt, chain, n) != SHOAL_OK) {
            set_next(last, rest); /* slabs are freed with the runtime anyway */
            return;
        }
        tc->env_free = rest;
        tc->env_nfree -= n;
    }
}

void shoal__envs_fini(shoal_runtime_t *rt)
{
    for (size_t i = 0; i < rt->env_nslabs; i++)
        free(rt->env_slabs[i]);
    free(rt->env_slabs);
    free(rt->env_batches);
    rt->env_slabs = NULL;
    rt->env_batches = NULL;
    rt->env_nslabs = rt->env_nbatches = 0;
}

static shoal_env_t *env_head(shoal_tcache_t *tc, unsigned kind, unsigned flags, shoal_pid_t from,
                             shoal_ref_t ref, uint32_t type, size_t size)
{
    shoal_env_t *e = shoal__env_alloc(tc);
    if (e == NULL)
        return NULL;
    e->from = from;
    e->type = type;
    e->size = (uint32_t)size;
    shoal__env_set_meta(e, ref, kind, flags);
    return e;
}

shoal_env_t *shoal__env_new(shoal_tcache_t *tc, unsigned kind, unsigned flags, shoal_pid_t from,
                            shoal_ref_t ref, uint32_t type, const void *data, size_t size)
{
    if (size > UINT32_MAX)
        return NULL;
    if (size <= SHOAL_INLINE_MAX) {
        shoal_env_t *e = env_head(tc, kind, flags, from, ref, type, size);
        if (e != NULL && size != 0)
            memcpy(e->payload.bytes, data, size);
        return e;
    }
    void *copy = malloc(size);
    if (copy == NULL)
        return NULL;
    memcpy(copy, data, size);
    shoal_env_t *e = shoal__env_new_owned(tc, kind, flags, from, ref, type, copy, size, free);
    if (e == NULL)
        free(copy);
    return e;
}

shoal_env_t *shoal__env_new_owned(shoal_tcache_t *tc, unsigned kind, unsigned flags,
                                  shoal_pid_t from, shoal_ref_t ref, uint32_t type, void *data,
                                  size_t size, shoal_free_fn free_fn)
{
    if (size > UINT32_MAX)
        return NULL;
    shoal_env_t *e = env_head(tc, kind, flags | SHOAL_ENV_HEAP, from, ref, type, size);
    if (e == NULL)
        return NULL;
    e->payload.heap.ptr = data;
    e->payload.heap.free_fn = free_fn ? free_fn : free;
    SHOAL_STAT_ADD(tc, heap_payloads, 1);
    return e;
}
