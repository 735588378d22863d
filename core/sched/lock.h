/* lock.h - a short lock: spins a little, then sleeps on a futex.
 *
 * For state held for a few hundred nanoseconds by whichever thread needs
 * it (a checkout pool's seats and queue). glibc's adaptive mutex costs
 * ~130 instructions a lock and unlock uncontended (W6, callgrind); this
 * one costs about 15.
 *
 * Protocol (Drepper, "Futexes Are Tricky", mutex #3). `word` is
 *   0  free,
 *   1  held, no thread sleeps on it,
 *   2  held, and a thread may sleep on it.
 * shoal__lock: a CAS 0 -> 1 [acquire]; failing, up to SHOAL__LOCK_SPINS looks
 * (relaxed loads, a pause each) for 0 and a CAS 0 -> 1 [acquire] when
 * seen; then an exchange to 2 [acquire] -- the old value 0 means taken
 * (it is then 2: the unlock wakes one that need not be there, never
 * fewer) -- else a futex wait while it is 2, and the exchange again.
 * shoal__unlock: an exchange to 0 [release]; the old value 2 wakes one
 * sleeper. Pairing: every acquire (the CAS or the exchange that takes the
 * lock) reads the value the previous holder's release exchange wrote, so
 * what that holder wrote under the lock happens before what the next one
 * reads. A sleeper cannot miss its wake: it sleeps only while the word is
 * 2 (the futex compares under the kernel's lock), and only a holder that
 * sees 2 on unlock wakes, after storing 0.
 *
 * Not recursive, not fair (a spinner may overtake a sleeper woken), no
 * owner check: callers that want one keep it (checkout.h's debug holder).
 */
#ifndef SHOAL_SCHED_LOCK_H
#define SHOAL_SCHED_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "sched/futex.h"

typedef struct shoal_lock_s {
    _Atomic uint32_t word;
} shoal_lock_t; /* free when zeroed: {0} */

#define SHOAL__LOCK_SPINS 128

void shoal__lock_slow(shoal_lock_t *l);

static inline void shoal__lock(shoal_lock_t *l)
{
    uint32_t expect = 0;
    if (__builtin_expect(atomic_compare_exchange_strong_explicit(
                             &l->word, &expect, 1, memory_order_acquire, memory_order_relaxed),
                         1))
        return;
    shoal__lock_slow(l);
}

static inline void shoal__unlock(shoal_lock_t *l)
{
    if (__builtin_expect(atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2, 0))
        shoal__futex_wake(&l->word, 1);
}

#endif
