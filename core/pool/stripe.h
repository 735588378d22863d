/* stripe.h - a pool's counters (pool.h: counters are striped): one stripe
 * per worker id, written by that thread only (relaxed load + store), and one
 * shared stripe for every other thread (relaxed atomic adds); readers sum
 * them with relaxed loads -- a recent picture while messages flow, exact
 * once they stop. Each counter is a monotonic count on its own: nothing
 * else is published through them. Beside the counts, the latency
 * histograms of the sampled messages (queue wait and service time).
 */
#ifndef SHOAL_POOL_STRIPE_H
#define SHOAL_POOL_STRIPE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Latency histogram: 4 buckets per power of two of nanoseconds, up to 2^36
 * (about 69 s); the last bucket takes everything above. */
#define SHOAL_HIST_BUCKETS 144u

struct shoal_pool_stripe_s {
    alignas(64) _Atomic uint64_t forwarded; /* a pull pool: accepted into its buffer */
    _Atomic uint64_t unhandled;
    _Atomic uint64_t delivered;                  /* a pull pool: taken by a member */
    _Atomic uint64_t redelivered, dead_lettered; /* a pull pool: after a failure */
    _Atomic uint64_t handled;
    _Atomic uint64_t failed;
    _Atomic uint64_t dropped;
    _Atomic uint64_t samples;
    _Atomic uint64_t busy_ns; /* a timed pool's members' turns (actor/group.h: timed) */
    /* The sampled latencies added up (ns), beside their buckets. */
    _Atomic uint64_t wait_sum, service_sum;
    _Atomic uint32_t wait[SHOAL_HIST_BUCKETS];
    _Atomic uint32_t service[SHOAL_HIST_BUCKETS];
};
typedef struct shoal_pool_stripe_s shoal_pool_stripe_t;

/* Latency histograms: buckets summed over stripes, and the sampled
 * latencies added up (ns). */
typedef struct shoal_pool_hist_s {
    uint64_t wait[SHOAL_HIST_BUCKETS], service[SHOAL_HIST_BUCKETS];
    uint64_t wait_sum_ns, service_sum_ns;
} shoal_pool_hist_t;
/* Adds the histograms of stripes x[0..n) into *h (relaxed reads: a recent
 * picture while messages flow). The one walk over stripes' buckets, for
 * the pool's own stripes and a remote pool's children's alike. */
void shoal__pool_hist_add(const shoal_pool_stripe_t *x, uint32_t n, shoal_pool_hist_t *h);
/* The histogram bucket of a latency. */
unsigned shoal__hist_bucket(uint64_t ns);
/* The per_mille-th percentile of histogram h (SHOAL_HIST_BUCKETS buckets),
 * as its bucket's upper bound in ns; 0 for an empty one. */
uint64_t shoal__hist_percentile(const uint64_t *h, unsigned per_mille);

/* Adds n to a stripe counter: plain for a worker's own stripe, atomic for
 * the shared one. */
static inline void shoal__stripe_add(_Atomic uint64_t *c, uint64_t n, bool shared)
{
    if (shared)
        atomic_fetch_add_explicit(c, n, memory_order_relaxed);
    else
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                              memory_order_relaxed);
}

#endif
