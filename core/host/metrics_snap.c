/* metrics_snap.c - the snapshot of what shoald runs that the host thread
 * publishes for /metrics (metrics.h: what the renderer reads): built,
 * compared with what runs now, freed. Host thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/metrics.h"
#include "pool/pool.h"

void shoal__metrics_snap_free(shoal_metrics_snap_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->npools; i++)
        shoal__pool_unref(s->rt, s->pools[i].rec);
    for (size_t i = 0; i < s->nsources; i++)
        shoal__pool_unref(s->rt, s->sources[i].rec);
    free(s->pools);
    free(s->sources);
    free(s);
}

/* The draining pools' counts, summed (read from their records). */
static void draining_counts(shoal_host_t *h, shoal_host_counts_t *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < h->npools; i++) {
        if (!h->pools[i].draining)
            continue;
        shoal_pool_stats_t st;
        (void)shoal__pool_counts(h->pools[i].rec, &st, 0);
        c->accepted += st.messages_forwarded;
        c->handled += st.messages_handled;
        c->failed += st.messages_failed;
        c->dropped += st.messages_dropped;
        c->refused += st.messages_unhandled;
    }
}

/* The entries of e[0..n) that are not draining, into out (room for n),
 * each with a reference on its record: how many. */
static size_t list_running(const shoal_host_pool_t *e, size_t n, shoal_metrics_pool_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].draining)
            continue;
        shoal_metrics_pool_t *mp = &out[k++];
        snprintf(mp->name, sizeof mp->name, "%s", e[i].name);
        shoal__pool_ref(e[i].rec);
        mp->rec = e[i].rec;
    }
    return k;
}

/* Whether have[0..nhave) is what list_running would list of e[0..n):
 * the same records, in e's order. */
static bool same_running(const shoal_host_pool_t *e, size_t n, const shoal_metrics_pool_t *have,
                         size_t nhave)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].draining)
            continue;
        if (k >= nhave || have[k].rec != e[i].rec)
            return false;
        k++;
    }
    return k == nhave;
}

shoal_metrics_snap_t *shoal__metrics_snap_new(shoal_host_t *h, _Atomic uint64_t *ledger_seen,
                                              uint64_t seq)
{
    shoal_metrics_snap_t *s = calloc(1, sizeof *s);
    if (s == NULL || (h->npools && (s->pools = calloc(h->npools, sizeof *s->pools)) == NULL) ||
        (h->nsources && (s->sources = calloc(h->nsources, sizeof *s->sources)) == NULL)) {
        if (s != NULL)
            free(s->pools);
        free(s);
        return NULL;
    }
    s->rt = h->rt;
    s->seq = seq;
    s->ledger_seen = ledger_seen;
    s->generation = h->generation;
    s->reloads = h->reloads;
    s->reloads_failed = h->reloads_failed;
    for (size_t i = 0; i < h->ngone; i++) {
        s->gone.accepted += h->gone[i].accepted;
        s->gone.handled += h->gone[i].handled;
        s->gone.failed += h->gone[i].failed;
        s->gone.dropped += h->gone[i].dropped;
        s->gone.refused += h->gone[i].refused;
    }
    /* A reference only on the pools of the current config: one held on a
     * draining pool would keep it from ever being quiet enough to forget
     * (shoal__pool_is_quiet). A draining pool has no series; its counts
     * go into the ledger from the copy taken here (a new snapshot when
     * they move: shoal__metrics_snap_same), and from gone[] once it is
     * forgotten. */
    draining_counts(h, &s->draining);
    s->npools = list_running(h->pools, h->npools, s->pools);
    /* The running sources alike (a stopping one is forgotten once ended). */
    s->nsources = list_running(h->sources, h->nsources, s->sources);
    return s;
}

bool shoal__metrics_snap_same(const shoal_metrics_snap_t *s, shoal_host_t *h)
{
    if (s == NULL || s->rt != h->rt || s->generation != h->generation || s->reloads != h->reloads ||
        s->reloads_failed != h->reloads_failed)
        return false;
    if (!same_running(h->pools, h->npools, s->pools, s->npools) ||
        !same_running(h->sources, h->nsources, s->sources, s->nsources))
        return false;
    shoal_host_counts_t d;
    draining_counts(h, &d);
    return memcmp(&d, &s->draining, sizeof d) == 0;
}
