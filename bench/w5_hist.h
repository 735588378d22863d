/* w5_hist.h - W5's latency histogram: the type, and recording a latency
 * (w5_hist_record: a worker's, per job, so inline here). Merging and
 * percentiles, for the collector and the RESULT line: w5_hist.c.
 */
#ifndef SHOAL_BENCH_W5_HIST_H
#define SHOAL_BENCH_W5_HIST_H

#include <stdint.h>

#define W5_SUB_BITS 6 /* histogram: 64 linear sub-buckets per power of two */
#define W5_BUCKETS ((64 - W5_SUB_BITS) << W5_SUB_BITS)

/* Latencies in ns: each power of two split into 64 linear sub-buckets (a
 * bucket is at most 1/64 of its lower edge wide, exact below 128 ns), as the
 * Go peer's latHist, so percentiles compare; the maximum is exact. */
typedef struct w5_hist_s {
    uint64_t n;
    int64_t max;
    uint64_t counts[W5_BUCKETS];
} w5_hist_t;

static inline unsigned w5_hist_bucket(uint64_t v)
{
    if (v < 2u << W5_SUB_BITS)
        return (unsigned)v;
    unsigned shift = 63u - (unsigned)__builtin_clzll(v) - W5_SUB_BITS;
    return ((shift + 1) << W5_SUB_BITS) + (unsigned)(v >> shift) - (1u << W5_SUB_BITS);
}

static inline void w5_hist_record(w5_hist_t *h, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    h->counts[w5_hist_bucket((uint64_t)ns)]++;
    h->n++;
    if (ns > h->max)
        h->max = ns;
}

/* Merges h into `into` (the collector, per report). */
void w5_hist_merge(w5_hist_t *into, const w5_hist_t *h);

/* Percentile p by nearest rank: the upper edge of the bucket that holds
 * sample ceil(p*n/100), capped at the maximum. */
int64_t w5_hist_percentile(const w5_hist_t *h, uint64_t p);

#endif
