/* envelope.c - envelope allocation: per-thread stacks of free envelopes, a
 * runtime depot they trade batches with, slabs from the heap only when the
 * depot is empty.
 *
 * A thread's free envelopes are a stack of pointers in its own cache
 * (tcache.h), not a list linked through the envelopes. A list writes each
 * envelope when it is freed, and each allocation must read the envelope it
 * takes to learn the next one's address: where one thread sends and another
 * frees (a producer and a pool's workers on two cores), every allocation
 * waited for a line the other core had just written, one after another
 * (perf: 24 % of W1's samples on that one load). Freeing now writes nothing
 * into the envelope, and the sender's first write to it is the only
 * transfer. (Prefetching the envelope a few allocations ahead, tried too,
 * cost W2 P=1000 more than it gained W1: not kept.)
 *
 * The depot (runtime.h: env_depot, under env_lock) is a stack of pointers
 * too; threads move SHOAL_ENV_BATCH at a time: a thread with 2 x BATCH
 * free gives the oldest BATCH back, one with none takes a BATCH.
 *
 * THE RESERVE. Some messages must not be lost for want of memory: what
 * they stand for is lost with them. A member given back to its checkout
 * pool (its seat stays in use for good), a member lent to a taker (the
 * taker is never answered), an EXIT (a monitor, a pool's seat, waits for
 * it for good), a STOP. Their envelopes come from the thread's cache as
 * any, but when it is empty, the depot too and no slab can be allocated,
 * from SHOAL_ENV_RESERVE envelopes the runtime keeps back (runtime.h:
 * env_reserve, under env_lock) -- as a kernel's mempool guarantees
 * writeback its few buffers. A refill that gets envelopes tops the reserve
 * up first, so it is full again as soon as memory is; ordinary sends never
 * draw on it. */
#include "actor/envelope.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/grow.h"
#include "runtime/runtime.h"

#define SLAB_ENVS 1024u /* 64 KiB */

_Static_assert(SHOAL_ENV_STACK == 2 * SHOAL_ENV_BATCH, "a thread keeps up to two batches");
_Static_assert(SLAB_ENVS >= SHOAL_ENV_BATCH, "a slab fills a thread's stack");

/* Room for n more pointers in the depot. With rt->env_lock held. */
static int depot_room_locked(shoal_runtime_t *rt, uint32_t n)
{
    /* One grow is enough: the depot doubles, and n <= its first size. */
    shoal_env_t **d = shoal__grow(rt->env_depot, rt->env_ndepot + n - 1, &rt->env_depot_cap,
                                  sizeof *d, SLAB_ENVS);
    if (d == NULL)
        return SHOAL_ENOMEM;
    rt->env_depot = d;
    return SHOAL_OK;
}

static int depot_put(shoal_runtime_t *rt, shoal_env_t *const *envs, uint32_t n)
{
    pthread_mutex_lock(&rt->env_lock);
    int rc = depot_room_locked(rt, n);
    if (rc == SHOAL_OK) {
        memcpy(rt->env_depot + rt->env_ndepot, envs, n * sizeof *envs);
        rt->env_ndepot += n;
    }
    pthread_mutex_unlock(&rt->env_lock);
    return rc;
}

/* The reserve, topped up from the depot. With rt->env_lock held. */
static void reserve_top_up_locked(shoal_runtime_t *rt)
{
    while (rt->env_nreserve < SHOAL_ENV_RESERVE && rt->env_ndepot != 0)
        rt->env_reserve[rt->env_nreserve++] = rt->env_depot[--rt->env_ndepot];
}

/* Fills an empty stack: a batch from the depot, else a new slab (the part
 * that does not fit the stack goes to the depot). The reserve first. */
static int refill(shoal_tcache_t *tc)
{
    shoal_runtime_t *rt = tc->rt;
    pthread_mutex_lock(&rt->env_lock);
    reserve_top_up_locked(rt);
    if (rt->env_ndepot != 0) {
        uint32_t n = rt->env_ndepot < SHOAL_ENV_BATCH ? (uint32_t)rt->env_ndepot : SHOAL_ENV_BATCH;
        rt->env_ndepot -= n;
        memcpy(tc->envs, rt->env_depot + rt->env_ndepot, n * sizeof *tc->envs);
        pthread_mutex_unlock(&rt->env_lock);
        tc->env_nfree = n;
        return SHOAL_OK;
    }
    void **ns = shoal__grow(rt->env_slabs, rt->env_nslabs, &rt->env_slabs_cap, sizeof *ns, 64);
    if (ns == NULL)
        goto fail;
    rt->env_slabs = ns;
    shoal_env_t *slab = aligned_alloc(64, SLAB_ENVS * sizeof *slab);
    if (slab == NULL)
        goto fail;
    /* No envelope out of a cache owns a heap payload: fresh ones are zero,
     * and a free drops a payload and its flag (shoal__env_free), so one
     * that was allocated and never filled may still be freed. */
    memset(slab, 0, SLAB_ENVS * sizeof *slab);
    if (depot_room_locked(rt, SLAB_ENVS - SHOAL_ENV_BATCH) != SHOAL_OK) {
        free(slab);
        goto fail;
    }
    for (uint32_t i = SHOAL_ENV_BATCH; i < SLAB_ENVS; i++)
        rt->env_depot[rt->env_ndepot++] = &slab[i];
    rt->env_slabs[rt->env_nslabs++] = slab;
    reserve_top_up_locked(rt);
    pthread_mutex_unlock(&rt->env_lock);
    for (uint32_t i = 0; i < SHOAL_ENV_BATCH; i++)
        tc->envs[i] = &slab[SHOAL_ENV_BATCH - 1 - i]; /* the slab's start handed out first */
    tc->env_nfree = SHOAL_ENV_BATCH;
    SHOAL_STAT_ADD(tc, env_slabs, 1);
    return SHOAL_OK;
fail:
    pthread_mutex_unlock(&rt->env_lock);
    return SHOAL_ENOMEM;
}

shoal_env_t *shoal__env_refill(shoal_tcache_t *tc)
{
    if (refill(tc) != SHOAL_OK)
        return NULL;
    return tc->envs[--tc->env_nfree];
}

shoal_env_t *shoal__env_refill_reserved(shoal_tcache_t *tc)
{
    shoal_env_t *e = shoal__env_refill(tc);
    if (e != NULL)
        return e;
    shoal_runtime_t *rt = tc->rt;
    pthread_mutex_lock(&rt->env_lock);
    if (rt->env_nreserve != 0)
        e = rt->env_reserve[--rt->env_nreserve];
    pthread_mutex_unlock(&rt->env_lock);
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

void shoal__env_spill(shoal_tcache_t *tc, shoal_env_t *e)
{
    if (tc->env_nfree == SHOAL_ENV_STACK)
        return; /* the depot could not grow (out of memory): e stays unused
                   in its slab, which is freed with the runtime */
    tc->envs[tc->env_nfree++] = e;
    /* Two batches: the older (the bottom, freed longest ago) to the depot. */
    if (tc->env_nfree == SHOAL_ENV_STACK &&
        depot_put(tc->rt, tc->envs, SHOAL_ENV_BATCH) == SHOAL_OK) {
        memmove(tc->envs, tc->envs + SHOAL_ENV_BATCH,
                (SHOAL_ENV_STACK - SHOAL_ENV_BATCH) * sizeof *tc->envs);
        tc->env_nfree -= SHOAL_ENV_BATCH;
    }
}

void shoal__envs_flush(shoal_tcache_t *tc)
{
    if (tc->env_nfree != 0 && depot_put(tc->rt, tc->envs, tc->env_nfree) == SHOAL_OK)
        tc->env_nfree = 0;
    /* else they stay here; slabs are freed with the runtime anyway */
}

void shoal__envs_fini(shoal_runtime_t *rt)
{
    for (size_t i = 0; i < rt->env_nslabs; i++)
        free(rt->env_slabs[i]);
    free(rt->env_slabs);
    free(rt->env_depot);
    rt->env_slabs = NULL;
    rt->env_depot = NULL;
    rt->env_nslabs = rt->env_ndepot = rt->env_depot_cap = 0;
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

shoal_env_t *shoal__env_new_heap(shoal_tcache_t *tc, unsigned kind, unsigned flags,
                                 shoal_pid_t from, shoal_ref_t ref, uint32_t type, const void *data,
                                 size_t size)
{
    if (size > UINT32_MAX)
        return NULL;
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
