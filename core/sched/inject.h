/* inject.h - a multi-producer, multi-consumer FIFO of pointers that never
 * refuses a push. The dispatcher's global ring is one (runnable actors
 * pushed by threads that are not workers, and the overflow of full worker
 * rings); a pull pool's buffer is another (pool/pull.c), bounded by its own
 * admission count.
 *
 * Cells are packed (four to a cache line: the global ring) or spread (one
 * to a line: a pull pool's buffer, where the members taking one item each
 * on two cores would otherwise write the same line for neighbouring items:
 * the task cell ran 1.08x with them spread, bench/RESULTS.md).
 *
 * PROTOCOL
 *
 * A bounded MPMC ring of sequence-numbered cells for the fast path, plus an
 * unbounded overflow list under a mutex for when the ring is full, because
 * an actor whose message was accepted must never be refused a place.
 * Consumers only read the cells: a cell's line travels from the producer
 * that wrote it to the consumer that reads it and never back, and no
 * producer waits for a line a consumer wrote.
 *   publish   cell p carries seq = p + 1 once item p is in it. A producer
 *             claims position p (CAS on enq_pos: p -> p + 1; or p .. p + n
 *             - 1 at once, p -> p + n, each then filled in order), writes
 *             the item [relaxed] and stores seq = p + 1 [release]. A cell that
 *             holds no item of this lap has an older seq (it starts at
 *             p + 1 - size): a consumer reads that as nothing published.
 *   take      a consumer at deq_pos = p loads cell p's seq [acquire, pairs
 *             with the producer's release]; if it is p + 1, it reads the
 *             item [relaxed], then claims it (CAS on deq_pos: p -> p + 1,
 *             [release]). A failed claim drops what it read: somebody else
 *             took p.
 *   reuse     a producer writes cell p only once deq_pos has passed
 *             p - size, i.e. item p - size was claimed -- and so already
 *             read: its claimer read it before its claim. The producer's
 *             load of deq_pos [acquire] pairs with that claim [release].
 *             Producers keep deq_seen, a value deq_pos had [release store
 *             after that acquire, acquire load: the pairing passes on], and
 *             read deq_pos itself only when deq_seen says full.
 * A consumer that has taken cell p peeks at cell p + 1 (relaxed loads of
 * its seq and item, no claim) only to prefetch the item's memory: nothing
 * is read through that pointer, so it needs no ordering, and the item may
 * be taken by another consumer, or freed, by the time the prefetch lands.
 * FIFO across the two parts: while the overflow list is non-empty, pushes
 * go to it too, and consumers take from the ring first, then the list.
 * The count (ring + overflow) is not a word of its own, which every push
 * and take would have to write: it is enq_pos - deq_pos + overflow_len.
 * A producer's claim of a cell (the CAS on enq_pos) and its store of a
 * longer overflow_len (under the lock) are seq_cst: the producer's half of
 * a no-lost-wake-up pair with a consumer that announces it is going to
 * sleep [seq_cst] and then reads the count [seq_cst loads of deq_pos, then
 * enq_pos, then overflow_len] (a parking worker, worker.c; an idle
 * pull-pool member, pool/pull_members.c). deq_pos is read first: what it says
 * was taken was claimed before the enq_pos read after it, so the
 * difference is never negative. An item is counted from its claim on: a
 * consumer that sees a count may still find nothing for a moment (a
 * producer between its claim and its seq store).
 */
#ifndef SHOAL_SCHED_INJECT_H
#define SHOAL_SCHED_INJECT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct shoal_inject_cell_s {
    _Atomic size_t seq;
    _Atomic(void *) item; /* relaxed: ordered by seq; atomic so a consumer may peek */
} shoal_inject_cell_t;

typedef struct shoal_inject_s {
    alignas(64) _Atomic size_t enq_pos;
    _Atomic size_t deq_seen; /* a value deq_pos had, for producers (PROTOCOL) */
    alignas(64) _Atomic size_t deq_pos;
    alignas(64) _Atomic size_t overflow_len;
    size_t mask;
    unsigned shift; /* log2 of a cell's stride: 4 packed, 6 spread */
    void *cells;
    pthread_mutex_t lock; /* overflow */
    void **ov;            /* circular buffer */
    size_t ov_head, ov_len, ov_cap;
} shoal_inject_t;

/* size_pow2 cells, packed or spread (above). SHOAL_ENOMEM. */
int shoal__inject_init(shoal_inject_t *q, size_t size_pow2, bool spread);
void shoal__inject_fini(shoal_inject_t *q);
void shoal__inject_push(shoal_inject_t *q, void *item);
/* Pushes items[0 .. n) in that order, claimed at once when the ring has
 * room for all of them (else one at a time, as shoal__inject_push). */
void shoal__inject_push_many(shoal_inject_t *q, void *const *items, size_t n);
/* Takes up to n items, oldest first; returns how many. */
size_t shoal__inject_take(shoal_inject_t *q, void **out, size_t n);

/* Items in the ring and the overflow (see the protocol for mo seq_cst). */
static inline size_t shoal__inject_count(shoal_inject_t *q, memory_order mo)
{
    size_t deq = atomic_load_explicit(&q->deq_pos, mo);
    size_t enq = atomic_load_explicit(&q->enq_pos, mo);
    /* Relaxed loads may be reordered (not on x86): an enq_pos older than
     * deq_pos reads as an empty ring, never as a huge one. */
    size_t ring = enq - deq <= q->mask + 1 ? enq - deq : 0;
    return ring + atomic_load_explicit(&q->overflow_len, mo);
}

#endif
