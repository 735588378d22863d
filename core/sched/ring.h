/* ring.h - a worker's bounded ring of runnable actors.
 *
 * PROTOCOL (single producer, many consumers; after Go's runq)
 *
 * The owning worker pushes at `tail` and pops at `head`, so its own ring is
 * FIFO: an actor that used its whole turn goes to the back. Thieves take the
 * oldest half from `head`. Counters are free-running uint32_t; a slot is
 * slot[i % SHOAL_RING_SIZE].
 *   push (owner only): h = head [acquire]; if tail - h < size: write the
 *     slot [relaxed], then tail = t + 1 [release].
 *   pop (owner):  CAS head h -> h + 1 [acq_rel], after reading slot[h].
 *   grab (thief): h = head [acquire], t = tail [acquire], n = ceil((t-h)/2),
 *     read the n slots [relaxed], then CAS head h -> h + n [acq_rel].
 * Pairings:
 *   - tail store [release] in push  <->  tail load [acquire] in grab: a
 *     thief that sees the new tail sees the slot written before it.
 *   - head CAS [acq_rel] in pop/grab  <->  head load [acquire] in push: the
 *     owner overwrites a slot only after the consumer that read it has won
 *     its CAS, so no reader can see a slot change under it and still win.
 * A consumer whose CAS fails read slots that may since have been reused; it
 * discards them and retries. Slots are atomics so those racy reads are
 * defined.
 * `progress` counts the owner's pops [relaxed]: a thief may take a ring's
 * single actor only when progress has not moved since its last look (the
 * owner is stuck in a long turn), so a ping-pong pair stays on one worker.
 */
#ifndef SHOAL_SCHED_RING_H
#define SHOAL_SCHED_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHOAL_RING_SIZE 4096u

struct shoal_actor_s;

typedef struct shoal_ring_s {
    alignas(64) _Atomic uint32_t head; /* owner pop and thieves, by CAS */
    alignas(64) _Atomic uint32_t tail; /* owner only */
    _Atomic uint32_t progress;         /* owner's pops, for the staleness test */
    alignas(64) _Atomic(struct shoal_actor_s *) slot[SHOAL_RING_SIZE];
} shoal_ring_t;

void shoal__ring_init(shoal_ring_t *r);

/* Owner: append; false when full. */
static inline bool shoal__ring_push(shoal_ring_t *r, struct shoal_actor_s *a)
{
    /* acquire: pairs with the head CAS of pop/grab (slot reuse). */
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t - h >= SHOAL_RING_SIZE)
        return false;
    atomic_store_explicit(&r->slot[t % SHOAL_RING_SIZE], a, memory_order_relaxed);
    /* release: pairs with the tail load [acquire] in grab. */
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return true;
}

/* Owner: take the oldest; NULL when empty. */
static inline struct shoal_actor_s *shoal__ring_pop(shoal_ring_t *r)
{
    /* acquire: pairs with a thief's head CAS in grab (ring.c); the owner reads
     * only slots it wrote itself, so nothing rides on it here. */
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    for (;;) {
        uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        if (h == t)
            return NULL;
        struct shoal_actor_s *a =
            atomic_load_explicit(&r->slot[h % SHOAL_RING_SIZE], memory_order_relaxed);
        /* acq_rel: see the header; on failure h is reloaded [acquire]. */
        if (atomic_compare_exchange_weak_explicit(&r->head, &h, h + 1, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            uint32_t p = atomic_load_explicit(&r->progress, memory_order_relaxed);
            atomic_store_explicit(&r->progress, p + 1, memory_order_relaxed);
            return a;
        }
    }
}

/* Approximate length (any thread). */
static inline uint32_t shoal__ring_len(shoal_ring_t *r)
{
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    return t - h;
}

/* Owner: take up to n oldest actors into out[]; returns how many. */
uint32_t shoal__ring_take(shoal_ring_t *r, struct shoal_actor_s **out, uint32_t n);

/* Thief: move half (rounded up) of victim's actors into `into` (the
 * thief's own ring, which must be empty) and return one of them to run, or
 * NULL. A single actor is taken only if allow_single. */
struct shoal_actor_s *shoal__ring_steal(shoal_ring_t *victim, shoal_ring_t *into, bool allow_single,
                                        uint32_t *stolen);

#endif
