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
#include <stdio.h>

#include "runtime/runtime.h"
#include "sched/futex.h"

#define QUEUED_LOG_NS (60 * 1000000000ull)

void shoal__queued_check(shoal_runtime_t *rt)
{
    /* acquire: pairs with create's release store: the workers exist. */
    if (rt->max_queued == 0 || !atomic_load_explicit(&rt->started, memory_order_acquire))
        return;
    shoal_tstats_t sum;
    shoal__tcache_sum(rt, &sum);
    uint64_t in = atomic_load_explicit(&sum.unbounded_pushed, memory_order_relaxed);
    uint64_t out = atomic_load_explicit(&sum.unbounded_popped, memory_order_relaxed);
    uint64_t queued = in > out ? in - out : 0;
    /* Refuse from the limit on, accept again below 9/10 of it: a consumer
     * that drains one message does not reopen the door for one more. */
    uint32_t was = atomic_load_explicit(&rt->queued_over, memory_order_relaxed);
    uint32_t over = was ? queued >= rt->max_queued - rt->max_queued / 10 : queued >= rt->max_queued;
    if (over == was ||
        atomic_exchange_explicit(&rt->queued_over, over, memory_order_relaxed) == over)
        return; /* no crossing, or another thread's check took it */
    /* One line per crossing, but at most one a minute while the queue
     * swings around the limit; the crossings between are counted. */
    uint64_t now = shoal__now_ns();
    pthread_mutex_lock(&rt->queued_lock);
    bool quiet = rt->queued_logged_ns != 0 && now - rt->queued_logged_ns < QUEUED_LOG_NS;
    uint64_t skipped = rt->queued_skipped;
    if (quiet) {
        rt->queued_skipped++;
    } else {
        rt->queued_logged_ns = now;
        rt->queued_skipped = 0;
    }
    pthread_mutex_unlock(&rt->queued_lock);
    if (quiet)
        return;
    char more[80] = "";
    if (skipped != 0)
        snprintf(more, sizeof more, " (%" PRIu64 " crossings not logged in the last minute)",
                 skipped);
    if (over)
        shoal__log(rt, SHOAL_LOG_WARN, SHOAL_PID_NONE, NULL,
                   "max_queued: unbounded mailboxes hold %" PRIu64
                   " messages (the limit is %" PRIu64
                   "): sends into them are refused with SHOAL_EBUSY until they drain%s",
                   queued, rt->max_queued, more);
    else
        shoal__log(rt, SHOAL_LOG_INFO, SHOAL_PID_NONE, NULL,
                   "max_queued: unbounded mailboxes hold %" PRIu64
                   " messages, below 9/10 of the limit: sends accepted again%s",
                   queued, more);
}
