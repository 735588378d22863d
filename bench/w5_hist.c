/* w5_hist.c - W5's latency histogram, the parts off the per-job path:
 * merging the workers' histograms and reading percentiles (w5_hist.h has
 * the type and the per-job w5_hist_bucket, w5_hist_record).
 */
#include "w5_hist.h"

/* The largest value that falls into bucket b. */
static int64_t hist_upper(unsigned b)
{
    if (b < 2u << W5_SUB_BITS)
        return b;
    unsigned shift = (b >> W5_SUB_BITS) - 1;
    uint64_t m = (b & ((1u << W5_SUB_BITS) - 1)) + (1u << W5_SUB_BITS);
    return (int64_t)(((m + 1) << shift) - 1);
}

void w5_hist_merge(w5_hist_t *into, const w5_hist_t *h)
{
    for (unsigned b = 0; b < W5_BUCKETS; b++)
        into->counts[b] += h->counts[b];
    into->n += h->n;
    if (h->max > into->max)
        into->max = h->max;
}

int64_t w5_hist_percentile(const w5_hist_t *h, uint64_t p)
{
    uint64_t rank = (h->n * p + 99) / 100, seen = 0;
    if (rank == 0)
        return 0;
    for (unsigned b = 0; b < W5_BUCKETS; b++) {
        seen += h->counts[b];
        if (seen >= rank)
            return hist_upper(b) < h->max ? hist_upper(b) : h->max;
    }
    return h->max;
}
