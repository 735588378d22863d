/* shoal/pull.h - pull pools and their sources (after Akka's work pulling).
 *
 * A pull pool (shoal_pool_spec_t.kind = SHOAL_POOL_KIND_PULL) holds what is
 * sent to it in one bounded buffer. A normal send or call to the pool is
 * accepted into the buffer (SHOAL_OK) or refused at once when it is full
 * (SHOAL_EBUSY, counted): the pool holds at most buffer + size x prefetch
 * items, those in the buffer and those its workers hold. A worker takes the
 * next item on its own thread when it holds fewer than `prefetch`; it sees
 * the original sender and ref, and answers a call straight to the caller.
 *
 * A SOURCE (the seed's Epic) feeds a pull pool with bounded memory however
 * much work it has: a behaviour the pool spawns as its child, asked for at
 * most as many items as there is room for.
 *
 *   pool -> source   SHOAL_PULL_RESUME  (priority cast; data: the last
 *                    cursor the source reported, size >= 1) -- only to a
 *                    source started again after it failed, or started by
 *                    a pool that took its epic over from the pool a
 *                    reload replaced (the same source, the same args),
 *                    before any request: go on from there.
 *   pool -> source   SHOAL_PULL_REQUEST (priority cast; data: a uint32_t n
 *                    >= 1): send up to n items.
 *   source -> pool   the items: shoal_send (or shoal_send_owned) to
 *                    msg->from, any type outside the reserved ranges. Room
 *                    for n was set aside: they are never refused.
 *   source -> pool   then exactly one of, with shoal_send_priority:
 *                    SHOAL_PULL_SENT (data: an optional cursor, up to
 *                    SHOAL_PULL_CURSOR_MAX bytes: where to resume after the
 *                    items sent so far; size 0: none) -- the request is
 *                    answered, ask again;
 *                    SHOAL_PULL_DONE (data: as for SENT) -- the epic is
 *                    over: no more requests.
 *
 * One request is outstanding at a time. A source that fails (its handler
 * fails or panics, or it exits with an error) is started again under the
 * pool's restart policy with the same args, and sent SHOAL_PULL_RESUME with
 * the last cursor it reported before the next request; items it sent after
 * that cursor may come twice. A source that ends normally before DONE ends
 * the epic as done. A new epic (SHOAL_POOL_EPIC) while one runs is refused
 * with SHOAL_EBUSY.
 */
#ifndef SHOAL_PULL_H
#define SHOAL_PULL_H

#include "shoal/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHOAL_PULL_REQUEST 0xFFFE0201u
#define SHOAL_PULL_SENT 0xFFFE0202u
#define SHOAL_PULL_DONE 0xFFFE0203u
#define SHOAL_PULL_RESUME 0xFFFE0204u

/* The longest cursor a source may report. */
#define SHOAL_PULL_CURSOR_MAX 256u

/* A pull pool's source, as shoal_pool_stats_t.source_state says. */
enum {
    SHOAL_SOURCE_NONE = 0,    /* the pool has no source */
    SHOAL_SOURCE_RUNNING = 1, /* an epic is under way */
    SHOAL_SOURCE_DONE = 2,    /* it said DONE (or ended normally) */
    SHOAL_SOURCE_FAILED = 3   /* it failed beyond the restart budget; a new epic may start it */
};

/* One worker of a pull pool (Akka's GetWorkerStats). Its counters start
 * at 0 when the worker starts (a replacement starts again); the pool's own
 * counters (shoal_pool_stats_t) keep what ended workers did. */
typedef struct shoal_pull_worker_stats_s {
    shoal_pid_t pid;
    uint32_t seat;        /* 0 .. : the lowest free when it started (a
                             replacement takes the seat of the one it replaces) */
    uint32_t in_progress; /* items it holds: taken, not settled */
    uint64_t taken;       /* items it took from the buffer */
    uint64_t completed;   /* items it handled (one it fails on ends it) */
    uint64_t idle_ns;     /* time it waited for work, up to now */
    uint32_t idle;        /* 1: it is waiting for work now */
    uint32_t pad_;
} shoal_pull_worker_stats_t;

/* SHOAL_POOL_WORKER_STATS (no payload), a priority call to a pull pool
 * (others: SHOAL_ENOTSUP): the reply is a uint32_t element size, a
 * uint32_t count, then that many records, one per live worker (those
 * finishing their last items after a resize or a reload included), by
 * seat. The element size lets the record grow at its end. */
#define SHOAL_POOL_WORKER_STATS 0xFFFE000Au

/* From a thread that is not a dispatcher worker: SHOAL_POOL_WORKER_STATS
 * as a blocking call. Fills out[0 .. min(n, cap)) and returns n, the
 * number of live workers (>= 0), or a negative SHOAL_E*. */
SHOAL_API int shoal_pool_worker_stats(shoal_runtime_t *rt, shoal_pid_t pool,
                                      shoal_pull_worker_stats_t *out, size_t cap,
                                      uint64_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
