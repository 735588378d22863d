/* host_ledger.c - the ledger: what every pool the host started has
 * counted, the live ones read from their records, the forgotten ones'
 * final counts kept per generation when they are forgotten; one line in
 * all or one per generation. See host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/grow.h"

/* ---- forgotten pools' counts ---------------------------------------------- */

/* The counts of one entry of gone[] for gen, added if missing. */
static shoal_host_counts_t *gone_of(shoal_host_t *h, uint64_t gen)
{
    for (size_t i = 0; i < h->ngone; i++)
        if (h->gone[i].gen == gen)
            return &h->gone[i];
    shoal_host_counts_t *n = shoal__grow(h->gone, h->ngone, &h->gone_cap, sizeof *n, 8);
    if (n == NULL)
        return NULL;
    h->gone = n;
    size_t at = h->ngone++;
    while (at > 0 && h->gone[at - 1].gen > gen) { /* oldest first */
        h->gone[at] = h->gone[at - 1];
        at--;
    }
    h->gone[at] = (shoal_host_counts_t){.gen = gen};
    return &h->gone[at];
}

static void counts_add(shoal_host_counts_t *c, const shoal_pool_stats_t *st)
{
    c->accepted += st->messages_forwarded;
    c->handled += st->messages_handled;
    c->failed += st->messages_failed;
    c->dropped += st->messages_dropped;
    c->refused += st->messages_unhandled;
    c->dead_lettered += st->dead_lettered;
}

/* Pool entry hp's counts, final, into its generation's in gone[]. */
static void count_gone(shoal_host_t *h, const shoal_host_pool_t *hp)
{
    shoal_pool_stats_t st;
    (void)shoal__pool_counts(hp->rec, &st, 0);
    bool counted = st.messages_forwarded != 0 || st.messages_unhandled != 0;
    shoal_host_counts_t *c = counted ? gone_of(h, hp->gen) : NULL;
    if (c != NULL)
        counts_add(c, &st);
    else if (counted)
        shoal__host_log(h, SHOAL_LOG_ERROR, "out of memory: the ledger loses pool %s's counts",
                        hp->name);
}

void shoal__host_pool_forget(shoal_host_t *h, size_t i)
{
    count_gone(h, &h->pools[i]);
    shoal__host_untrack(h, h->pools, &h->npools, i);
}

void shoal__host_forget_quiet(shoal_host_t *h)
{
    /* The pools kept move down over those forgotten, once each: removing
     * them one at a time moved every pool after each (a reload that
     * dropped 15,000 pools held the host thread for seconds). */
    size_t kept = 0;
    for (size_t i = 0; i < h->npools; i++) {
        shoal_host_pool_t *hp = &h->pools[i];
        if (hp->draining && shoal__pool_is_quiet(hp->rec)) {
            count_gone(h, hp);
            shoal__host_entry_release(h, hp);
            continue;
        }
        if (kept != i)
            h->pools[kept] = *hp;
        kept++;
    }
    h->npools = kept;
}

/* ---- the ledger ----------------------------------------------------------- */

/* The counts of generations first .. last together; the live pools' from
 * snap (their counts read once, indexed as h->pools), or read now when
 * snap is NULL. */
static shoal_host_counts_t ledger_of_range(shoal_host_t *h, uint64_t first, uint64_t last,
                                           const shoal_pool_stats_t *snap)
{
    shoal_host_counts_t c = {.gen = first == last ? first : 0};
    for (size_t i = 0; i < h->ngone; i++) {
        const shoal_host_counts_t *g = &h->gone[i];
        if (g->gen >= first && g->gen <= last) {
            c.accepted += g->accepted;
            c.handled += g->handled;
            c.failed += g->failed;
            c.dropped += g->dropped;
            c.refused += g->refused;
            c.dead_lettered += g->dead_lettered;
        }
    }
    for (size_t i = 0; i < h->npools; i++) {
        if (h->pools[i].gen < first || h->pools[i].gen > last)
            continue;
        shoal_pool_stats_t st;
        if (snap == NULL)
            (void)shoal__pool_counts(h->pools[i].rec, &st, 0);
        counts_add(&c, snap != NULL ? &snap[i] : &st);
    }
    return c;
}

shoal_host_counts_t shoal__host_ledger_of(shoal_host_t *h, uint64_t gen)
{
    return gen == 0 ? ledger_of_range(h, 0, UINT64_MAX, NULL) : ledger_of_range(h, gen, gen, NULL);
}

void shoal__host_ledger_text(const shoal_host_counts_t *c, char *buf, size_t size)
{
    uint64_t settled = c->handled + c->failed + c->dropped + c->dead_lettered;
    char dl[48] = ""; /* only where a pull pool passed items on */
    if (c->dead_lettered != 0)
        snprintf(dl, sizeof dl, " + dead-lettered %" PRIu64, c->dead_lettered);
    snprintf(buf, size,
             "accepted %" PRIu64 " = handled %" PRIu64 " + failed %" PRIu64 " + dropped %" PRIu64
             "%s + in flight %" PRIu64 "; refused %" PRIu64,
             c->accepted, c->handled, c->failed, c->dropped, dl,
             c->accepted > settled ? c->accepted - settled : 0, c->refused);
}

void shoal__host_ledger(shoal_host_t *h, char *buf, size_t size)
{
    shoal_host_counts_t c = shoal__host_ledger_of(h, 0);
    char text[256];
    shoal__host_ledger_text(&c, text, sizeof text);
    snprintf(buf, size, "ledger: %s", text);
}

/* The newest generation below `below` that started pools, or 0. */
static uint64_t gen_before(const shoal_host_t *h, uint64_t below)
{
    uint64_t g = 0;
    for (size_t i = 0; i < h->ngone; i++)
        if (h->gone[i].gen < below && h->gone[i].gen > g)
            g = h->gone[i].gen;
    for (size_t i = 0; i < h->npools; i++)
        if (h->pools[i].gen < below && h->pools[i].gen > g)
            g = h->pools[i].gen;
    return g;
}

void shoal__host_ledgers(shoal_host_t *h, char *buf, size_t size)
{
    /* The newest SHOAL_HOST_LEDGER_GENS generations that started pools,
     * found newest first; the ones before them, summed. (A host reloaded
     * 250 times, each reload replacing a pool, had its status cut in the
     * middle of a line at the 182nd, and no total.) */
    uint64_t shown[SHOAL_HOST_LEDGER_GENS];
    size_t nshown = 0;
    uint64_t g = UINT64_MAX;
    while (nshown < SHOAL_HOST_LEDGER_GENS && (g = gen_before(h, g)) != 0)
        shown[nshown++] = g;
    uint64_t older = nshown != 0 ? gen_before(h, shown[nshown - 1]) : 0;
    /* Every line from one reading of each live pool: while messages flow,
     * reading them again for the total made it disagree with the lines
     * above it (status: gen 1 accepted 2344, total 2349, with no other
     * generation counting). Without memory, each line reads them anew. */
    shoal_pool_stats_t *snap = calloc(h->npools ? h->npools : 1, sizeof *snap);
    for (size_t i = 0; snap != NULL && i < h->npools; i++)
        (void)shoal__pool_counts(h->pools[i].rec, &snap[i], 0);
    size_t n = 0;
    char text[256];
    buf[0] = '\0';
    if (older != 0) {
        uint64_t first = older;
        for (size_t i = 0; i < h->ngone; i++)
            first = h->gone[i].gen < first ? h->gone[i].gen : first;
        for (size_t i = 0; i < h->npools; i++)
            first = h->pools[i].gen < first ? h->pools[i].gen : first;
        shoal_host_counts_t c = ledger_of_range(h, first, older, snap);
        shoal__host_ledger_text(&c, text, sizeof text);
        n += (size_t)snprintf(buf + n, size - n, "ledger gens %" PRIu64 "..%" PRIu64 ": %s\n",
                              first, older, text);
    }
    for (size_t k = nshown; k-- > 0 && n < size;) {
        shoal_host_counts_t c = ledger_of_range(h, shown[k], shown[k], snap);
        shoal__host_ledger_text(&c, text, sizeof text);
        n += (size_t)snprintf(buf + n, size - n, "ledger gen %" PRIu64 ": %s\n", shown[k], text);
    }
    if (n < size) {
        shoal_host_counts_t c = ledger_of_range(h, 0, UINT64_MAX, snap);
        shoal__host_ledger_text(&c, text, sizeof text);
        snprintf(buf + n, size - n, "ledger total: %s\n", text);
    }
    free(snap);
}
