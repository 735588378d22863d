/* queued.c - bounding what unbounded mailboxes hold (runtime opts
 * max_queued).
 *
 * Every push into an unbounded user mailbox marks the envelope and counts
 * one in, every pop of a marked envelope counts one out, both in the
 * calling thread's own counters (tcache.h: no shared cache line on the hot
 * path). The timer thread sums them every 10 ms while max_queued is set and
 * raises or lowers one flag; a send into an unbounded mailbox reads the flag
 * and is refused with SHOAL_EBUSY while it is up. The bound is so checked
 * at most 10 ms late: between two checks senders may add what they manage
 * in that time; so a sender also checks after every SHOAL_QUEUED_BATCH of
 * its own pushes (runtime.h), which bounds the excess by that many per
 * sending thread.
 */
#include <inttypes.h>

#include "runtime/runtime.h"

void shoal__queued_check(shoal_runtime_t *rt)
{
    if (rt->max_queued == 0)
        return;
    shoal_tstats_t sum;
    shoal__tcache_sum(rt, &sum);
    uint64_t in = atomic_load_explicit(&sum.unbounded_pushed, memory_order_relaxed);
    uint64_t out = atomic_load_explicit(&sum.unbounded_popped, memory_order_relaxed);
    uint64_t queued = in > out ? in - out : 0;
    uint32_t over = queued >= rt->max_queued;
    if (atomic_load_explicit(&rt->queued_over, memory_order_relaxed) == over ||
        atomic_exchange_explicit(&rt->queued_over, over, memory_order_relaxed) == over)
        return; /* no crossing, or another thread's check logged it */
    if (over)
        shoal__log(rt, SHOAL_LOG_WARN, SHOAL_PID_NONE, NULL,
                   "max_queued: unbounded mailboxes hold %" PRIu64
                   " messages (the limit is %" PRIu64
                   "): sends into them are refused with SHOAL_EBUSY until they drain",
                   queued, rt->max_queued);
    else
        shoal__log(rt, SHOAL_LOG_INFO, SHOAL_PID_NONE, NULL,
                   "max_queued: unbounded mailboxes hold %" PRIu64
                   " messages, below the limit again: sends accepted",
                   queued);
}
