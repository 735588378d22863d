/* qsbr.h - knowing when no thread can still be reading a record that was
 * unpublished (quiescent-state reclamation), for pool records that senders
 * read without a lock.
 *
 * PROTOCOL
 * A reader brackets its reads in a region: its thread's counter `qs` is odd
 * inside one, even outside.
 *   enter: qs += 1 [relaxed store]; then a seq_cst fence; then the reads.
 *   exit:  qs += 1 [release store]: the reads are done.
 * A dispatcher worker enters on its first forward of a turn and exits at
 * the end of the turn (one fence per turn, not per message); any other
 * thread enters and exits around each forward.
 * A reclaimer first makes the record unreachable (for a pool: the actor
 * front's pointer is cleared and its generation moved on), then:
 *   snapshot: a seq_cst fence; record every thread whose qs is odd, with
 *             its value [acquire loads];
 *   passed:   every recorded thread's qs has changed [acquire loads].
 * Once passed, the record may be freed. Why: the two seq_cst fences are
 * ordered. If the reader's fence comes first, its odd qs is visible to the
 * snapshot, which then waits for the exit, whose release store carries the
 * reads. If the reclaimer's fence comes first, the reader's reads come after
 * the unpublishing and cannot find the record. Threads that are outside a
 * region at the snapshot are not waited for.
 */
#ifndef SHOAL_RUNTIME_QSBR_H
#define SHOAL_RUNTIME_QSBR_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/tcache.h"

static inline void shoal__qsbr_enter(shoal_tcache_t *tc)
{
    if (tc->in_region)
        return;
    tc->in_region = true;
    atomic_store_explicit(&tc->qs, atomic_load_explicit(&tc->qs, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    /* seq_cst: orders the odd qs before our reads (see above). */
    atomic_thread_fence(memory_order_seq_cst);
}

static inline void shoal__qsbr_exit(shoal_tcache_t *tc)
{
    if (!tc->in_region)
        return;
    tc->in_region = false;
    /* release: our reads of the records happen before a reclaimer that
     * sees this value frees them. */
    atomic_store_explicit(&tc->qs, atomic_load_explicit(&tc->qs, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* The threads that were inside a region when it was taken. */
typedef struct shoal_qsbr_snap_s {
    shoal_tcache_t **tcs;
    uint64_t *qs;
    size_t n;
} shoal_qsbr_snap_t;

/* Takes a snapshot (after the caller unpublished). SHOAL_ENOMEM. */
int shoal__qsbr_snapshot(shoal_runtime_t *rt, shoal_qsbr_snap_t *snap);
/* True when every thread of the snapshot has left that region. */
bool shoal__qsbr_passed(shoal_runtime_t *rt, const shoal_qsbr_snap_t *snap);
void shoal__qsbr_snap_free(shoal_qsbr_snap_t *snap);

#endif
