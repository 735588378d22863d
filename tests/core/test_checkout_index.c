/* test_checkout_index.c - a checkout pool's seats by their members' pids
 * (core/pool/checkout_index.c), on hand-made seats with no runtime:
 *   - every seated pid is found at its seat; a pid not seated, and
 *     SHOAL_PID_NONE, are not;
 *   - 200,000 random puts and removals on a table at half load (clusters
 *     form and wrap past its end): after each, every seated pid is found,
 *     every removed one is not, and the table holds exactly the seated;
 *   - growing the table (more seats) keeps every entry;
 *   - a reserve past SHOAL_CO_INDEX_MAX seats is refused (SHOAL_ENOMEM)
 *     and changes nothing.
 * The pools that use it check it after every callback of their actor
 * (shoal__co_consistent, debug checks: every checkout suite).
 */
#include <stdlib.h>

#include "pool/checkout.h"
#include "pool/checkout_members.h"
#include "support.h"

static uint64_t rng = 0x243F6A8885A308D3u;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A pid no seat has: random, never SHOAL_PID_NONE. */
static shoal_pid_t fresh_pid(void) { return next_rand() | 1u; }

static shoal_checkout_t *make(uint32_t cap)
{
    shoal_checkout_t *co = calloc(1, sizeof *co);
    CU_ASSERT_PTR_NOT_NULL_FATAL(co);
    co->seats = calloc(cap, sizeof *co->seats);
    CU_ASSERT_PTR_NOT_NULL_FATAL(co->seats);
    co->nseats = co->seats_cap = cap;
    CU_ASSERT_EQUAL_FATAL(shoal__co_index_reserve(co, cap), SHOAL_OK);
    return co;
}

static void destroy(shoal_checkout_t *co)
{
    free(co->index);
    free(co->seats);
    free(co);
}

static void seat(shoal_checkout_t *co, uint32_t i, shoal_pid_t pid)
{
    co->seats[i].pid = pid;
    co->seats[i].state = SHOAL_CO_FREE;
    shoal__co_index_put(co, i);
}

static void unseat(shoal_checkout_t *co, uint32_t i)
{
    shoal__co_index_del(co, i);
    co->seats[i] = (shoal_co_seat_t){.pid = SHOAL_PID_NONE, .state = SHOAL_CO_EMPTY};
}

static uint32_t slots_used(const shoal_checkout_t *co)
{
    uint32_t n = 0;
    for (uint64_t k = 0; k < UINT64_C(1) << co->index_bits; k++)
        n += co->index[k] != 0;
    return n;
}

/* Every seated pid at its seat; the number of entries the seated. */
static bool all_found(const shoal_checkout_t *co)
{
    uint32_t seated = 0;
    for (uint32_t i = 0; i < co->nseats; i++) {
        if (co->seats[i].state == SHOAL_CO_EMPTY)
            continue;
        seated++;
        if (shoal__co_find(co, co->seats[i].pid) != i)
            return false;
    }
    return slots_used(co) == seated;
}

static void seated_found_others_not(void)
{
    shoal_checkout_t *co = make(8);
    CU_ASSERT_EQUAL(co->index_bits, 4); /* 16 slots: at most half full */
    shoal_pid_t pids[8];
    for (uint32_t i = 0; i < 8; i++)
        seat(co, i, pids[i] = fresh_pid());
    for (uint32_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(shoal__co_find(co, pids[i]), i);
    CU_ASSERT_EQUAL(shoal__co_find(co, fresh_pid()), -1);
    CU_ASSERT_EQUAL(shoal__co_find(co, SHOAL_PID_NONE), -1);
    CU_ASSERT_EQUAL(slots_used(co), 8);
    unseat(co, 3);
    CU_ASSERT_EQUAL(shoal__co_find(co, pids[3]), -1);
    CU_ASSERT_TRUE(all_found(co));
    destroy(co);
}

static void random_puts_and_removals(void)
{
    enum { CAP = 8, OPS = 200000 };
    shoal_checkout_t *co = make(CAP);
    shoal_pid_t gone[64] = {0};
    uint32_t ngone = 0, failures = 0, seated = 0, most = 0;
    for (uint32_t op = 0; op < OPS; op++) {
        uint32_t i = (uint32_t)(next_rand() % CAP);
        if (co->seats[i].state == SHOAL_CO_EMPTY) {
            seat(co, i, fresh_pid());
            seated++;
        } else {
            gone[ngone++ % 64] = co->seats[i].pid;
            unseat(co, i);
            seated--;
        }
        most = seated > most ? seated : most;
        if (!all_found(co))
            failures++;
        for (uint32_t g = 0; g < 64 && g < ngone; g++)
            failures += shoal__co_find(co, gone[g]) != -1;
    }
    CU_ASSERT_EQUAL(failures, 0);
    CU_ASSERT_EQUAL(most, CAP); /* the table was at half load */
    destroy(co);
}

static void growing_keeps_entries(void)
{
    shoal_checkout_t *co = make(8);
    shoal_pid_t pids[1000];
    for (uint32_t i = 0; i < 8; i++)
        seat(co, i, pids[i] = fresh_pid());
    unseat(co, 5);
    co->seats = realloc(co->seats, 1000 * sizeof *co->seats);
    CU_ASSERT_PTR_NOT_NULL_FATAL(co->seats);
    for (uint32_t i = 8; i < 1000; i++)
        co->seats[i] = (shoal_co_seat_t){.pid = SHOAL_PID_NONE, .state = SHOAL_CO_EMPTY};
    co->nseats = co->seats_cap = 1000;
    CU_ASSERT_EQUAL(shoal__co_index_reserve(co, 1000), SHOAL_OK);
    CU_ASSERT_EQUAL(co->index_bits, 11); /* 2048 slots */
    CU_ASSERT_TRUE(all_found(co));
    CU_ASSERT_EQUAL(shoal__co_find(co, pids[5]), -1);
    for (uint32_t i = 8; i < 1000; i++)
        seat(co, i, pids[i] = fresh_pid());
    CU_ASSERT_TRUE(all_found(co));
    CU_ASSERT_EQUAL(slots_used(co), 999);
    /* Asking for less, or as much, keeps the table as it is. */
    uint32_t *before = co->index;
    CU_ASSERT_EQUAL(shoal__co_index_reserve(co, 1000), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__co_index_reserve(co, 8), SHOAL_OK);
    CU_ASSERT_PTR_EQUAL(co->index, before);
    CU_ASSERT_EQUAL(co->index_bits, 11);
    destroy(co);
}

static void refused_reserve_changes_nothing(void)
{
    shoal_checkout_t *co = make(8);
    for (uint32_t i = 0; i < 8; i++)
        seat(co, i, fresh_pid());
    uint32_t *before = co->index;
    CU_ASSERT_EQUAL(shoal__co_index_reserve(co, SHOAL_CO_INDEX_MAX + 1), SHOAL_ENOMEM);
    CU_ASSERT_EQUAL(shoal__co_index_reserve(co, UINT32_MAX), SHOAL_ENOMEM);
    CU_ASSERT_PTR_EQUAL(co->index, before);
    CU_ASSERT_EQUAL(co->index_bits, 4);
    CU_ASSERT_TRUE(all_found(co));
    destroy(co);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"seated pids are found, others are not", seated_found_others_not},
        {"200,000 random puts and removals at half load", random_puts_and_removals},
        {"growing keeps every entry", growing_keeps_entries},
        {"a refused reserve changes nothing", refused_reserve_changes_nothing},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_index", cases);
}
