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
 *                    source started again after it failed, before any
 *                    request: go on from there.
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

#ifdef __cplusplus
}
#endif
#endif
