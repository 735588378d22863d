/* checkout_index.c - a checkout pool's members by PID: which seat each sits
 * in (checkout.h), so a return, a start notice or an EXIT finds its seat
 * in a few probes, not by a scan of every seat. A scan held the pool's
 * lock for a pass over all of them on every return whose holder did not
 * know the seat (a take that waited): W6 with 4096 members spent half its
 * instructions there.
 *
 * An open-addressing table under the pool's lock: slots hold seat + 1 (0:
 * empty), keyed by that seat's pid, probed linearly from the pid's hash.
 * Every seat that is not EMPTY is in it exactly once (start_one puts it
 * when it gives the seat a pid; member_exited takes it out before it
 * empties the seat), and nothing else is. It has at least twice as many
 * slots as there are seats (shoal__co_index_reserve, before the seats
 * grow), so a probe ends within a few slots and the table never fills. A
 * removal shifts the entries after it back (no tombstones), so probes
 * stay short however members come and go.
 */
#include <stdlib.h>

#include "pool/checkout.h"
#include "pool/checkout_members.h"

/* The home slot of pid in a table of 2^bits slots (Fibonacci hashing). */
static uint32_t home_of(shoal_pid_t pid, uint32_t bits)
{
    return (uint32_t)((pid * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

static void put_in(uint32_t *slots, uint32_t bits, shoal_pid_t pid, uint32_t seat)
{
    uint32_t mask = (UINT32_C(1) << bits) - 1;
    uint32_t k = home_of(pid, bits);
    while (slots[k] != 0)
        k = (k + 1) & mask;
    slots[k] = seat + 1;
}

int shoal__co_index_reserve(shoal_checkout_t *co, uint32_t seats)
{
    if (seats > SHOAL_CO_INDEX_MAX)
        return SHOAL_ENOMEM; /* bits stays below 32: the masks are 32 bits */
    uint32_t bits = 4;
    while ((UINT64_C(1) << bits) < 2 * (uint64_t)seats)
        bits++;
    if (co->index != NULL && bits <= co->index_bits)
        return SHOAL_OK;
    uint32_t *slots = calloc(UINT64_C(1) << bits, sizeof *slots);
    if (slots == NULL)
        return SHOAL_ENOMEM;
    for (uint32_t i = 0; i < co->nseats; i++)
        if (co->seats[i].state != SHOAL_CO_EMPTY)
            put_in(slots, bits, co->seats[i].pid, i);
    free(co->index);
    co->index = slots;
    co->index_bits = bits;
    return SHOAL_OK;
}

void shoal__co_index_put(shoal_checkout_t *co, uint32_t i)
{
    put_in(co->index, co->index_bits, co->seats[i].pid, i);
}

/* The slot holding seat i (which is in the table). */
static uint32_t slot_of(const shoal_checkout_t *co, uint32_t i)
{
    uint32_t mask = (UINT32_C(1) << co->index_bits) - 1;
    uint32_t k = home_of(co->seats[i].pid, co->index_bits);
    while (co->index[k] != i + 1)
        k = (k + 1) & mask;
    return k;
}

void shoal__co_index_del(shoal_checkout_t *co, uint32_t i)
{
    uint32_t *t = co->index;
    uint32_t mask = (UINT32_C(1) << co->index_bits) - 1;
    uint32_t hole = slot_of(co, i);
    /* Each entry after the hole, up to the next empty slot, moves into it
     * unless its home lies cyclically in (hole, k]: there a probe for it
     * would never pass the hole. */
    for (uint32_t k = (hole + 1) & mask; t[k] != 0; k = (k + 1) & mask) {
        uint32_t home = home_of(co->seats[t[k] - 1].pid, co->index_bits);
        bool stays = hole < k ? hole < home && home <= k : hole < home || home <= k;
        if (!stays) {
            t[hole] = t[k];
            hole = k;
        }
    }
    t[hole] = 0;
}

int64_t shoal__co_find(const shoal_checkout_t *co, shoal_pid_t pid)
{
    if (co->index == NULL || pid == SHOAL_PID_NONE)
        return -1;
    uint32_t mask = (UINT32_C(1) << co->index_bits) - 1;
    for (uint32_t k = home_of(pid, co->index_bits); co->index[k] != 0; k = (k + 1) & mask) {
        uint32_t i = co->index[k] - 1;
        if (co->seats[i].pid == pid)
            return i;
    }
    return -1;
}
