/* host_ledger.c - the ledger: what every pool the host started has
 * counted, the live ones read from their records, the forgotten ones'
 * final counts kept per generation when they are forgotten; one line in
 * all or one per generation. See host.h.
 */
#include "host/host.h"

#include <inttypes.h>
#include <stdio.h>

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

void shoal__host_pool_forget(shoal_host_t *h, size_t i)
{
    shoal_host_pool_t *hp = &h->pools[i];
    shoal_pool_stats_t st;
    shoal__host_peek(hp, &st);
    bool counted = st.messages_forwarded != 0 || st.messages_unhandled != 0;
    shoal_host_counts_t *c = counted ? gone_of(h, hp->gen) : NULL;
    if (c != NULL)
        counts_add(c, &st);
    else if (counted)
        shoal__host_log(h, SHOAL_LOG_ERROR, "out of memory: the ledger loses pool %s's counts",
                        hp->name);
    shoal__host_untrack(h, h->pools, &h->npools, i);
}

/* ---- the ledger ----------------------------------------------------------- */

shoal_host_counts_t shoal__host_ledger_of(shoal_host_t *h, uint64_t gen)
{
    shoal_host_counts_t c = {.gen = gen};
    for (size_t i = 0; i < h->ngone; i++) {
        const shoal_host_counts_t *g = &h->gone[i];
        if (gen == 0 || g->gen == gen) {
            c.accepted += g->accepted;
            c.handled += g->handled;
            c.failed += g->failed;
            c.dropped += g->dropped;
            c.refused += g->refused;
            c.dead_lettered += g->dead_lettered;
        }
    }
    for (size_t i = 0; i < h->npools; i++) {
        if (gen != 0 && h->pools[i].gen != gen)
            continue;
        shoal_pool_stats_t st;
        shoal__host_peek(&h->pools[i], &st);
        counts_add(&c, &st);
    }
    return c;
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

void shoal__host_ledgers(shoal_host_t *h, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    /* Every generation that started pools, oldest first. */
    for (uint64_t g = 1; g <= h->generation && n < size; g++) {
        bool any = false;
        for (size_t i = 0; i < h->ngone && !any; i++)
            any = h->gone[i].gen == g;
        for (size_t i = 0; i < h->npools && !any; i++)
            any = h->pools[i].gen == g;
        if (!any)
            continue;
        shoal_host_counts_t c = shoal__host_ledger_of(h, g);
        char text[256];
        shoal__host_ledger_text(&c, text, sizeof text);
        n += (size_t)snprintf(buf + n, size - n, "ledger gen %" PRIu64 ": %s\n", g, text);
    }
    if (n < size) {
        shoal_host_counts_t c = shoal__host_ledger_of(h, 0);
        char text[256];
        shoal__host_ledger_text(&c, text, sizeof text);
        snprintf(buf + n, size - n, "ledger total: %s\n", text);
    }
}
