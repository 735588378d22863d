/* mailbox.h - an actor's mailbox: an intrusive MPSC queue plus a reservation
 * word that carries the actor's generation, liveness and message count.
 *
 * PROTOCOL
 *
 * Queue (Vyukov's intrusive MPSC queue with a dummy node). The queue always
 * holds one node that is not a message: initially the stub embedded in the
 * actor, later the last message popped. Producers only touch `tail` and the
 * `next` field of the node they swapped out of `tail`; the single consumer
 * owns `head`.
 *   push: n->next = NULL; prev = XCHG(tail, n) [acq_rel]; prev->next = n [release]
 *   pop:  next = head->next [acquire]; if NULL: empty (or a push is between
 *         its XCHG and its link); else head = next and `next` is the message;
 *         the old head is retired (freed unless it is the stub).
 *   - the XCHG's release publishes n->next = NULL before n is reachable as
 *     tail; its acquire orders our store to prev->next after prev's own
 *     initialisation by the producer that published it.
 *   - the store of prev->next [release] pairs with pop's load of head->next
 *     [acquire]: the consumer sees the whole envelope once it sees the link.
 *   A chain (a run of shoal_send_many: first .. last, linked by plain
 *   stores before the push) goes in the same way, with last in the XCHG and
 *   first in prev->next: the consumer reaches the chain's links through
 *   that release, and pops the run one by one.
 *
 * Reservation word (64 bits: generation << 32 | ALIVE | count mod 2^31).
 * Every push is preceded by one successful CAS that checks the generation
 * and ALIVE and adds one to count (a chain of k: one CAS that adds k, and
 * that k is what the push carries). So:
 *   - a sender holding a stale PID fails the CAS and touches nothing else
 *     (SHOAL_ENOPROC); the actor record itself is never freed, only reused;
 *   - the limit check (count - deq >= limit -> SHOAL_EFULL) is part of the
 *     same CAS, so refusals are exact;
 *   - closing clears ALIVE with a CAS; the count it leaves is final: exactly
 *     that many pushes were reserved, and the owner drains until it has
 *     popped that many, after which no producer can still touch the queue.
 * The reservation CAS is seq_cst: it is the sender's half of the Dekker pair
 * with the worker that stores Idle and then reloads this word (turn.c).
 * deq (the consumer's count of pops) is stored [release] by the consumer
 * and read [relaxed] by producers: a stale value only makes the mailbox look
 * fuller, never emptier, so a limit is never exceeded.
 */
#ifndef SHOAL_ACTOR_MAILBOX_H
#define SHOAL_ACTOR_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shoal/error.h"

typedef struct shoal_mq_node_s {
    _Atomic(struct shoal_mq_node_s *) next;
} shoal_mq_node_t;

#define SHOAL_RSV_COUNT_MASK 0x7fffffffu
#define SHOAL_RSV_ALIVE (UINT64_C(1) << 31)
#define SHOAL_RSV_GEN_SHIFT 32

static inline uint32_t shoal__rsv_gen(uint64_t w) { return (uint32_t)(w >> SHOAL_RSV_GEN_SHIFT); }
static inline uint32_t shoal__rsv_count(uint64_t w) { return (uint32_t)w & SHOAL_RSV_COUNT_MASK; }
static inline bool shoal__rsv_alive(uint64_t w) { return (w & SHOAL_RSV_ALIVE) != 0; }

/* Messages reserved and not yet popped, given the consumer's pop count. */
static inline uint32_t shoal__rsv_depth(uint64_t w, uint32_t deq)
{
    return (shoal__rsv_count(w) - deq) & SHOAL_RSV_COUNT_MASK;
}

/* Reserves room for one message. limit == 0: unbounded. Returns SHOAL_OK,
 * SHOAL_ENOPROC (wrong generation or closed) or SHOAL_EFULL. */
static inline int shoal__rsv_reserve(_Atomic uint64_t *word, uint32_t gen, uint32_t limit,
                                     const _Atomic uint32_t *deq)
{
    uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
    for (;;) {
        if (shoal__rsv_gen(old) != gen || !shoal__rsv_alive(old))
            return SHOAL_ENOPROC;
        if (limit != 0 &&
            shoal__rsv_depth(old, atomic_load_explicit(deq, memory_order_relaxed)) >= limit)
            return SHOAL_EFULL;
        uint64_t next =
            (old & ~(uint64_t)SHOAL_RSV_COUNT_MASK) | ((old + 1) & SHOAL_RSV_COUNT_MASK);
        /* seq_cst: the sender's store in the Dekker pair with end_turn (turn.c). */
        if (atomic_compare_exchange_weak_explicit(word, &old, next, memory_order_seq_cst,
                                                  memory_order_relaxed))
            return SHOAL_OK;
    }
}

/* Reserves room for up to n >= 1 messages at once, as many as the limit
 * leaves (all n when unbounded): *reserved is how many (1 .. n) on SHOAL_OK.
 * One CAS for all of them, the same protocol as shoal__rsv_reserve (the
 * count moves by *reserved; the pushes that follow are *reserved pushes). Returns
 * SHOAL_OK, SHOAL_ENOPROC or SHOAL_EFULL (no room for even one). */
static inline int shoal__rsv_reserve_many(_Atomic uint64_t *word, uint32_t gen, uint32_t limit,
                                          const _Atomic uint32_t *deq, uint32_t n,
                                          uint32_t *reserved)
{
    uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
    for (;;) {
        if (shoal__rsv_gen(old) != gen || !shoal__rsv_alive(old))
            return SHOAL_ENOPROC;
        uint32_t k = n;
        if (limit != 0) {
            uint32_t depth = shoal__rsv_depth(old, atomic_load_explicit(deq, memory_order_relaxed));
            if (depth >= limit)
                return SHOAL_EFULL;
            if (limit - depth < k)
                k = limit - depth;
        }
        uint64_t next =
            (old & ~(uint64_t)SHOAL_RSV_COUNT_MASK) | ((old + k) & SHOAL_RSV_COUNT_MASK);
        /* seq_cst: as shoal__rsv_reserve's. */
        if (atomic_compare_exchange_weak_explicit(word, &old, next, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            *reserved = k;
            return SHOAL_OK;
        }
    }
}

/* Clears ALIVE; returns the final count. The owner closes; so may a pool
 * retiring its worker (pool.c, a CAS that checks the generation first):
 * the owner's later close then finds ALIVE clear and the same count. */
static inline uint32_t shoal__rsv_close(_Atomic uint64_t *word)
{
    /* acq_rel: the final count is ordered after every successful reserve
     * (same word, modification order); nothing else rides on it. */
    uint64_t old = atomic_fetch_and_explicit(word, ~SHOAL_RSV_ALIVE, memory_order_acq_rel);
    return shoal__rsv_count(old);
}

static inline void shoal__mq_init(_Atomic(shoal_mq_node_t *) *tail, shoal_mq_node_t **head,
                                  shoal_mq_node_t *stub)
{
    atomic_store_explicit(&stub->next, NULL, memory_order_relaxed);
    atomic_store_explicit(tail, stub, memory_order_relaxed);
    *head = stub;
}

static inline void shoal__mq_push(_Atomic(shoal_mq_node_t *) *tail, shoal_mq_node_t *n)
{
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    /* acq_rel: release publishes n->next = NULL; acquire orders the store
     * below after prev's initialisation by its producer. */
    shoal_mq_node_t *prev = atomic_exchange_explicit(tail, n, memory_order_acq_rel);
    /* release: pairs with the acquire load of head->next in shoal__mq_pop. */
    atomic_store_explicit(&prev->next, n, memory_order_release);
}

/* Pushes a chain of nodes at once: first .. last, already linked through
 * their `next` fields by the caller (plain stores, before this call). The
 * XCHG's release publishes those links with the chain's end; the consumer
 * reaches first through prev->next [release, as for one node] and then
 * follows links that were written before it. Several reservations, one
 * push: the consumer pops them one by one, in order. */
static inline void shoal__mq_push_chain(_Atomic(shoal_mq_node_t *) *tail, shoal_mq_node_t *first,
                                        shoal_mq_node_t *last)
{
    atomic_store_explicit(&last->next, NULL, memory_order_relaxed);
    /* acq_rel: as shoal__mq_push's. */
    shoal_mq_node_t *prev = atomic_exchange_explicit(tail, last, memory_order_acq_rel);
    /* release: pairs with the acquire load of head->next in shoal__mq_pop. */
    atomic_store_explicit(&prev->next, first, memory_order_release);
}

/* Pops one message. Returns it, or NULL if none is linked yet. *retired is
 * set to the old dummy node, which the caller frees unless it is the stub. */
static inline shoal_mq_node_t *shoal__mq_pop(shoal_mq_node_t **head, shoal_mq_node_t **retired)
{
    shoal_mq_node_t *h = *head;
    /* acquire: pairs with the release store of prev->next in shoal__mq_push. */
    shoal_mq_node_t *next = atomic_load_explicit(&h->next, memory_order_acquire);
    if (next == NULL)
        return NULL;
    *head = next;
    *retired = h;
    return next;
}

#endif
