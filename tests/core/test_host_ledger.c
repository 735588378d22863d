/* test_host_ledger.c - the host's ledger (core/host/host_ledger.c) from
 * the final counts of forgotten pools: every field of each generation's
 * entry summed, per generation and in all, dead-lettered items included
 * (a replaced pull pool's were left out: its ledger then kept them "in
 * flight" for ever); and the line's text; and, over many generations,
 * the newest each on its line and the ones before summed.
 *
 * No runtime: a host with no live pool, only forgotten ones' counts.
 */
#include <stdio.h>
#include <stdlib.h>
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

/* A host of many generations: the newest SHOAL_HOST_LEDGER_GENS that
 * started pools each get a line, the ones before are summed in one, and
 * the total comes last, within SHOAL_HOST_LEDGERS_MAX bytes. (Before, one
 * line for each: a host reloaded 250 times had its status cut in the
 * middle of the 182nd line, and no total.) Generations 1 .. 20 but 7,
 * each of its number accepted and handled. */
static void many_generations_bounded(void)
{
    shoal_host_counts_t gone[19];
    size_t n = 0;
    for (uint64_t g = 1; g <= 20; g++)
        if (g != 7)
            gone[n++] = (shoal_host_counts_t){.gen = g, .accepted = g, .handled = g};
    shoal_host_t h;
    memset(&h, 0, sizeof h);
    h.gone = gone;
    h.ngone = n;
    h.gone_cap = n;
    h.generation = 21;
    char lines[SHOAL_HOST_LEDGERS_MAX], want[SHOAL_HOST_LEDGERS_MAX];
    shoal__host_ledgers(&h, lines, sizeof lines);
    size_t len = (size_t)snprintf(want, sizeof want,
                                  "ledger gens 1..3: accepted 6 = handled 6 + failed 0 + dropped 0 "
                                  "+ in flight 0; refused 0\n");
    for (uint64_t g = 4; g <= 20; g++)
        if (g != 7)
            len += (size_t)snprintf(want + len, sizeof want - len,
                                    "ledger gen %llu: accepted %llu = handled %llu + failed 0 + "
                                    "dropped 0 + in flight 0; refused 0\n",
                                    (unsigned long long)g, (unsigned long long)g,
                                    (unsigned long long)g);
    snprintf(want + len, sizeof want - len,
             "ledger total: accepted 203 = handled 203 + failed 0 + dropped 0 + in flight 0; "
             "refused 0\n");
    CU_ASSERT_STRING_EQUAL(lines, want);
    /* 1,000 generations: the same shape, the same bound. */
    shoal_host_counts_t *many = calloc(1000, sizeof *many);
    CU_ASSERT_PTR_NOT_NULL_FATAL(many);
    for (uint64_t g = 1; g <= 1000; g++)
        many[g - 1] = (shoal_host_counts_t){.gen = g, .accepted = 1, .handled = 1};
    h.gone = many;
    h.ngone = h.gone_cap = 1000;
    h.generation = 1000;
    shoal__host_ledgers(&h, lines, sizeof lines);
    CU_ASSERT_PTR_NOT_NULL(strstr(lines, "ledger gens 1..984: accepted 984 = handled 984 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(lines, "\nledger gen 985: accepted 1 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(lines, "\nledger gen 1000: accepted 1 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(lines, "\nledger total: accepted 1000 = handled 1000 + failed "
                                         "0 + dropped 0 + in flight 0; refused 0\n"));
    size_t nl = 0;
    for (const char *c = lines; *c; c++)
        nl += *c == '\n';
    CU_ASSERT_EQUAL(nl, SHOAL_HOST_LEDGER_GENS + 2);
    free(many);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forgotten pools are counted whole", forgotten_pools_counted_whole},
        {"many generations: the newest each, the rest summed", many_generations_bounded},
        {NULL, NULL},
    };
    return shoal_test_run("host_ledger", cases);
}
