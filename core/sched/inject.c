/* inject.c - a never-refusing MPMC FIFO; the protocol is in inject.h. */
#include "sched/inject.h"

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/error.h"

_Static_assert(sizeof(shoal_inject_cell_t) == 16, "packed: four cells a line");

static inline shoal_inject_cell_t *cell_at(const shoal_inject_t *q, size_t pos)
{
    return (shoal_inject_cell_t *)(void *)((char *)q->cells + ((pos & q->mask) << q->shift));
}

int shoal__inject_init(shoal_inject_t *q, size_t size_pow2, bool spread)
{
    q->shift = spread ? 6 : 4;
    size_t bytes = size_pow2 << q->shift;
    q->cells = aligned_alloc(64, bytes < 64 ? 64 : bytes);
    if (q->cells == NULL)
        return SHOAL_ENOMEM;
    memset(q->cells, 0, bytes);
    q->mask = size_pow2 - 1;
    /* Cell i is free for position i: its seq is the one a cell published
     * a lap before would have (i + 1 - size), which a consumer reads as
     * not published yet. */
    for (size_t i = 0; i < size_pow2; i++)
        atomic_init(&cell_at(q, i)->seq, i + 1 - size_pow2);
    atomic_init(&q->deq_seen, 0);
    atomic_init(&q->enq_pos, 0);
    atomic_init(&q->deq_pos, 0);
    atomic_init(&q->overflow_len, 0);
    pthread_mutex_init(&q->lock, NULL);
    q->ov = NULL;
    q->ov_head = q->ov_len = q->ov_cap = 0;
    return SHOAL_OK;
}

void shoal__inject_fini(shoal_inject_t *q)
{
    free(q->cells);
    free(q->ov);
    pthread_mutex_destroy(&q->lock);
}

/* Claims n cells at once and fills them with a[0 .. n): false when the
 * ring has no room for all n (nothing pushed). */
static bool ring_push_n(shoal_inject_t *q, void *const *a, size_t n)
{
    size_t size = q->mask + 1;
    size_t pos = atomic_load_explicit(&q->enq_pos, memory_order_relaxed);
    for (;;) {
        /* acquire: pairs with the release store of deq_seen below, by
         * another producer, which carries its acquire of deq_pos. */
        size_t deq = atomic_load_explicit(&q->deq_seen, memory_order_acquire);
        if (pos - deq > size - n) {
            /* Full as far as deq_seen tells (or pos is stale): deq_pos
             * itself. acquire: pairs with the consumers' claims [release]
             * -- what they read of the cells is read before we write. */
            deq = atomic_load_explicit(&q->deq_pos, memory_order_acquire);
            atomic_store_explicit(&q->deq_seen, deq, memory_order_release);
            if ((intptr_t)(pos - deq) < 0 || pos - deq > size - n) {
                size_t now = atomic_load_explicit(&q->enq_pos, memory_order_relaxed);
                if (now == pos && (intptr_t)(pos - deq) >= 0)
                    return false; /* full */
                pos = now;
                continue;
            }
        }
        /* seq_cst: the claim counts the items, the producer's half of the
         * no-lost-wake-up pair (inject.h). */
        if (atomic_compare_exchange_weak_explicit(&q->enq_pos, &pos, pos + n, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            for (size_t k = 0; k < n; k++) {
                shoal_inject_cell_t *c = cell_at(q, pos + k);
                atomic_store_explicit(&c->item, a[k], memory_order_relaxed);
                /* release: pairs with the consumer's seq load [acquire]. */
                atomic_store_explicit(&c->seq, pos + k + 1, memory_order_release);
            }
            return true;
        }
    }
}

static bool ring_push(shoal_inject_t *q, void *a) { return ring_push_n(q, &a, 1); }

static void *ring_pop(shoal_inject_t *q)
{
    size_t pos = atomic_load_explicit(&q->deq_pos, memory_order_relaxed);
    for (;;) {
        shoal_inject_cell_t *c = cell_at(q, pos);
        /* acquire: pairs with the producer's seq store [release]. */
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)(seq - (pos + 1));
        if (dif == 0) {
            /* Read before the claim: no producer writes this cell again
             * until deq_pos has passed pos, and then our claim fails. */
            void *a = atomic_load_explicit(&c->item, memory_order_relaxed);
            /* release: pairs with a producer's acquire of deq_pos -- our
             * read of the cell comes before its next write there. */
            if (atomic_compare_exchange_weak_explicit(&q->deq_pos, &pos, pos + 1,
                                                      memory_order_release, memory_order_relaxed)) {
                /* The next item, if published, is likely ours next: its
                 * lines start on their way while this one is handled. A
                 * peek only (relaxed, no claim): another consumer may take
                 * it, and a prefetch of memory freed since is harmless. */
                shoal_inject_cell_t *n = cell_at(q, pos + 1);
                if (atomic_load_explicit(&n->seq, memory_order_relaxed) == pos + 2)
                    __builtin_prefetch(atomic_load_explicit(&n->item, memory_order_relaxed), 0, 3);
                return a;
            }
        } else if (dif < 0) {
            return NULL; /* empty, or the producer has not published yet */
        } else {
            pos = atomic_load_explicit(&q->deq_pos, memory_order_relaxed);
        }
    }
}

static int overflow_push(shoal_inject_t *q, void *a)
{
    if (q->ov_len == q->ov_cap) {
        size_t cap = q->ov_cap ? q->ov_cap * 2 : 1024;
        void **nv = malloc(cap * sizeof *nv);
        if (nv == NULL)
            return SHOAL_ENOMEM;
        for (size_t i = 0; i < q->ov_len; i++)
            nv[i] = q->ov[(q->ov_head + i) % q->ov_cap];
        free(q->ov);
        q->ov = nv;
        q->ov_cap = cap;
        q->ov_head = 0;
    }
    q->ov[(q->ov_head + q->ov_len) % q->ov_cap] = a;
    q->ov_len++;
    /* seq_cst: as the claim of a cell in ring_push (inject.h). */
    atomic_store_explicit(&q->overflow_len, q->ov_len, memory_order_seq_cst);
    return SHOAL_OK;
}

/* The ring is full, or the overflow holds items: under the lock. Apart from
 * shoal__inject_push, so its fast path saves no registers for it. */
static __attribute__((noinline)) void push_slow(shoal_inject_t *q, void *a)
{
    pthread_mutex_lock(&q->lock);
    /* Re-check under the lock: if the overflow drained meanwhile and the
     * ring has room, keep to the ring. */
    if (q->ov_len == 0 && ring_push(q, a)) {
        pthread_mutex_unlock(&q->lock);
        return;
    }
    while (overflow_push(q, a) != SHOAL_OK) {
        /* No memory for a bigger overflow buffer: the item must not be
         * lost, so wait for consumers to make room in the ring. */
        pthread_mutex_unlock(&q->lock);
        if (ring_push(q, a))
            return;
        sched_yield();
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
}

void shoal__inject_push(shoal_inject_t *q, void *a)
{
    if (__builtin_expect(atomic_load_explicit(&q->overflow_len, memory_order_relaxed) == 0, 1) &&
        __builtin_expect(ring_push(q, a), 1))
        return;
    push_slow(q, a);
}

void shoal__inject_push_many(shoal_inject_t *q, void *const *items, size_t n)
{
    if (n == 0)
        return;
    if (n > q->mask + 1 || atomic_load_explicit(&q->overflow_len, memory_order_relaxed) != 0 ||
        !ring_push_n(q, items, n)) {
        for (size_t k = 0; k < n; k++) /* one at a time, into the overflow if need be */
            shoal__inject_push(q, items[k]);
    }
}

/* shoal__inject_take's part from the overflow, under the lock (apart, as
 * push_slow): up to n - k more items into out[k ..); returns the new k. */
static __attribute__((noinline)) size_t take_overflow(shoal_inject_t *q, void **out, size_t k,
                                                      size_t n)
{
    pthread_mutex_lock(&q->lock);
    while (k < n && q->ov_len != 0) {
        out[k++] = q->ov[q->ov_head];
        q->ov_head = (q->ov_head + 1) % q->ov_cap;
        q->ov_len--;
    }
    atomic_store_explicit(&q->overflow_len, q->ov_len, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    return k;
}

size_t shoal__inject_take(shoal_inject_t *q, void **out, size_t n)
{
    size_t k = 0;
    while (k < n) {
        void *a = ring_pop(q);
        if (a == NULL)
            break;
        out[k++] = a;
    }
    /* The overflow holds younger items than any still in the ring: go to
     * it only when the ring is really empty, not merely waiting for a
     * producer to publish a cell it has claimed. acquire (both): no
     * pairing needed -- deq_pos moves by release CAS (ring_pop, for the
     * producers' reuse of a cell), and nothing is read through either
     * position here (the overflow's items are read under the lock). */
    if (k < n && atomic_load_explicit(&q->overflow_len, memory_order_relaxed) != 0 &&
        atomic_load_explicit(&q->enq_pos, memory_order_acquire) ==
            atomic_load_explicit(&q->deq_pos, memory_order_acquire))
        k = take_overflow(q, out, k, n);
    return k;
}
