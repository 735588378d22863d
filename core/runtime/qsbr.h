/* qsbr.h - knowing when no thread can still be reading a record that was
 * unpublished (quiescent-state reclamation), for records that senders read
 * without a lock (a group's, actor/group.h).
 *
 * PROTOCOL
 * A reader brackets its reads in a region: its thread's counter `qs` is odd
 * inside one, even outside.
 *   enter: qs += 1 [seq_cst store]; then it finds the record through the
 *          published pointer [seq_cst load] and reads it.
 *   exit:  qs += 1 [release store]: the reads are done.
 * A dispatcher worker enters on its first forward of a turn and exits at
 * the end of the turn (one seq_cst store per turn, not per message); any
 * other thread enters and exits around each forward.
 * A reclaimer first unpublishes the record (for a pool: clears the actor
 * front's pointer [seq_cst store], pool.c), then, in any thread that the
 * unpublishing happens before:
 *   snapshot: record every thread whose qs is odd, with its value
 *             [seq_cst loads];
 *   passed:   every recorded thread's qs has changed [acquire loads].
 * Once passed, the record may be freed. Why: the reader's (store qs, load
 * pointer) and the reclaimer's (store pointer, load qs) are a Dekker pair in
 * the single order of seq_cst operations. If the reader's load found the
 * record, its odd store comes before the reclaimer's load of qs, which sees
 * it (or a later value); the snapshot then waits for the exit, whose release
 * store carries the reads. Otherwise the reader found NULL (or a later
 * record) and never touches this one. Threads outside a region at the
 * snapshot are not waited for.
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
    /* seq_cst: the reader's store of the Dekker pair (above). */
    atomic_store_explicit(&tc->qs, atomic_load_explicit(&tc->qs, memory_order_relaxed) + 1,
                          memory_order_seq_cst);
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

/* A record unpublished and waiting in the runtime's limbo until every
 * region that could have seen it has ended; then `free` frees it. Embed
 * one in the record. */
typedef struct shoal_qsbr_retired_s {
    struct shoal_qsbr_retired_s *next;
    shoal_qsbr_snap_t snap;
    bool snap_pending; /* without a snapshot yet (ENOMEM): a later collect takes it */
    void (*free)(struct shoal_qsbr_retired_s *r);
} shoal_qsbr_retired_t;

/* Puts r in limbo, after its record was unpublished [seq_cst] in a way
 * that happens before this call; then frees whatever has passed. */
void shoal__qsbr_retire(shoal_runtime_t *rt, shoal_qsbr_retired_t *r);
/* Frees what in limbo has passed its grace period (all of it if `all`:
 * only when no thread can read records any more, at runtime destroy). */
void shoal__qsbr_collect(shoal_runtime_t *rt, bool all);

/* Takes a snapshot (after the unpublishing). SHOAL_ENOMEM. */
int shoal__qsbr_snapshot(shoal_runtime_t *rt, shoal_qsbr_snap_t *snap);
/* True when every thread of the snapshot has left that region. */
bool shoal__qsbr_passed(shoal_runtime_t *rt, const shoal_qsbr_snap_t *snap);
void shoal__qsbr_snap_free(shoal_qsbr_snap_t *snap);

#endif
