/* lock.c - a short lock's contended path (lock.h: the protocol). */
#include "sched/lock.h"

void shoal__lock_slow(shoal_lock_t *l)
{
    for (int i = 0; i < SHOAL__LOCK_SPINS; i++) {
        shoal__cpu_relax();
        uint32_t expect = 0;
        if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->word, &expect, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
    }
    /* Taken as 2 from here on: this thread may have slept, and another may
     * still sleep; the unlock that sees 2 wakes one. */
    while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
        shoal__futex_wait(&l->word, 2, NULL);
}
