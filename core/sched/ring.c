/* ring.c - the slow paths of a worker's ring; the protocol is in ring.h. */
#include "sched/ring.h"

void shoal__ring_init(shoal_ring_t *r)
{
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->progress, 0);
    for (uint32_t i = 0; i < SHOAL_RING_SIZE; i++)
        atomic_init(&r->slot[i], NULL);
}

uint32_t shoal__ring_take(shoal_ring_t *r, struct shoal_actor_s **out, uint32_t n)
{
    /* acquire: as pop's (ring.h); the owner reads only slots it wrote itself. */
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    for (;;) {
        uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint32_t k = t - h < n ? t - h : n;
        if (k == 0)
            return 0;
        for (uint32_t i = 0; i < k; i++)
            out[i] =
                atomic_load_explicit(&r->slot[(h + i) % SHOAL_RING_SIZE], memory_order_relaxed);
        /* acq_rel: as pop (ring.h). */
        if (atomic_compare_exchange_weak_explicit(&r->head, &h, h + k, memory_order_acq_rel,
                                                  memory_order_acquire))
            return k;
    }
}

struct shoal_actor_s *shoal__ring_steal(shoal_ring_t *victim, shoal_ring_t *into, bool allow_single,
                                        uint32_t *stolen)
{
    uint32_t mytail = atomic_load_explicit(&into->tail, memory_order_relaxed);
    for (;;) {
        /* acquire (both): head pairs with other consumers' CAS, tail with
         * the owner's release store in push. */
        uint32_t h = atomic_load_explicit(&victim->head, memory_order_acquire);
        uint32_t t = atomic_load_explicit(&victim->tail, memory_order_acquire);
        uint32_t len = t - h;
        uint32_t n = len - len / 2;
        if (n == 0 || (len == 1 && !allow_single)) {
            *stolen = 0;
            return NULL;
        }
        if (n > SHOAL_RING_SIZE / 2)
            continue; /* h and t read at different moments; read again */
        /* The oldest runs now; the rest go to our own ring, in order. */
        struct shoal_actor_s *run =
            atomic_load_explicit(&victim->slot[h % SHOAL_RING_SIZE], memory_order_relaxed);
        for (uint32_t i = 1; i < n; i++) {
            struct shoal_actor_s *a = atomic_load_explicit(&victim->slot[(h + i) % SHOAL_RING_SIZE],
                                                           memory_order_relaxed);
            atomic_store_explicit(&into->slot[(mytail + i - 1) % SHOAL_RING_SIZE], a,
                                  memory_order_relaxed);
        }
        /* acq_rel: release lets the victim's owner reuse the slots we read
         * (pairs with its head load [acquire] in push). */
        if (atomic_compare_exchange_weak_explicit(&victim->head, &h, h + n, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            /* release: pairs with thieves' tail load [acquire] in grab. */
            atomic_store_explicit(&into->tail, mytail + n - 1, memory_order_release);
            *stolen = n;
            return run;
        }
    }
}
