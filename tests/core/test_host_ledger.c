/* test_host_ledger.c - the host's ledger (core/host/host_ledger.c) from
 * the final counts of forgotten pools: every field of each generation's
 * entry summed, per generation and in all, dead-lettered items included
 * (a replaced pull pool's were left out: its ledger then kept them "in
 * flight" for ever); and the line's text.
 *
 * No runtime: a host with no live pool, only forgotten ones' counts.
 */
#include <string.h>

#include "host/host.h"
#include "support.h"

static void forgotten_pools_counted_whole(void)
{
    /* gen 1: a pull pool replaced after it passed 3 items on to its
     * dead_letter pool; gen 2: that pool (it handled them) and another. */
    shoal_host_counts_t gone[2] = {
        {.gen = 1,
         .accepted = 10,
         .handled = 5,
         .failed = 1,
         .dropped = 1,
         .refused = 4,
         .dead_lettered = 3},
        {.gen = 2, .accepted = 7, .handled = 7, .refused = 2},
    };
    shoal_host_t h;
    memset(&h, 0, sizeof h);
    h.gone = gone;
    h.ngone = 2;
    h.gone_cap = 2;
    h.generation = 2;

    shoal_host_counts_t g1 = shoal__host_ledger_of(&h, 1);
    CU_ASSERT_EQUAL(g1.accepted, 10);
    CU_ASSERT_EQUAL(g1.handled, 5);
    CU_ASSERT_EQUAL(g1.failed, 1);
    CU_ASSERT_EQUAL(g1.dropped, 1);
    CU_ASSERT_EQUAL(g1.refused, 4);
    CU_ASSERT_EQUAL(g1.dead_lettered, 3);
    shoal_host_counts_t all = shoal__host_ledger_of(&h, 0);
    CU_ASSERT_EQUAL(all.accepted, 17);
    CU_ASSERT_EQUAL(all.handled, 12);
    CU_ASSERT_EQUAL(all.dead_lettered, 3);
    CU_ASSERT_EQUAL(all.refused, 6);

    char text[256];
    shoal__host_ledger_text(&g1, text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "accepted 10 = handled 5 + failed 1 + dropped 1 + dead-lettered 3 "
                                 "+ in flight 0; refused 4");
    char lines[1024];
    shoal__host_ledgers(&h, lines, sizeof lines);
    CU_ASSERT_STRING_EQUAL(lines,
                           "ledger gen 1: accepted 10 = handled 5 + failed 1 + dropped 1 + "
                           "dead-lettered 3 + in flight 0; refused 4\n"
                           "ledger gen 2: accepted 7 = handled 7 + failed 0 + dropped 0 + in "
                           "flight 0; refused 2\n"
                           "ledger total: accepted 17 = handled 12 + failed 1 + dropped 1 + "
                           "dead-lettered 3 + in flight 0; refused 6\n");
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forgotten pools are counted whole", forgotten_pools_counted_whole},
        {NULL, NULL},
    };
    return shoal_test_run("host_ledger", cases);
}
