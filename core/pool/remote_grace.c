/* remote_grace.c - when a child of a pool whose workers run in a child
 * process (remote.h) may be told to drain, or its channel go: a child is
 * published to the senders (cur), unpublished, and then waits out its
 * grace period, which its supervisor thread (remote_supervisor.c) looks
 * at on every wake and never waits for. Who touches what: remote.c's
 * header. On the supervisor's thread only.
 */
#include <stdlib.h>
#include <unistd.h>

#include "pool/remote_child.h"
#include "runtime/qsbr.h"
#include "runtime/runtime.h"

void shoal__remote_child_free(child_t *c)
{
    shoal__qsbr_snap_free(&c->snap);
    shoal__chan_destroy(c->chan);
    if (c->pidfd >= 0)
        close(c->pidfd);
    free(c);
}

void shoal__remote_free_buried(shoal_remote_t *r)
{
    while (r->buried != NULL) {
        child_t *c = r->buried;
        r->buried = c->next;
        shoal__remote_child_free(c);
    }
}

/* THE GRACE PERIOD. Once a child is no longer published, a sender that
 * found it before may still be pushing into it (runtime/qsbr.h): only once
 * every region that could have seen it has ended may it be told to drain,
 * or its channel go. The supervisor never waits for that: a region can
 * last a whole turn of a handler that runs long, or never returns, and
 * the supervisor is what logs a death, restarts, delivers replies and
 * carries out commands. It takes a snapshot when the child stops being
 * published (grace_begin) and looks at it on every wake
 * (shoal__remote_graced) -- more often while one is pending
 * (grace_poll_ms) -- doing the drain or the free then. */

/* c is no longer published (just now): its grace period begins. */
static void grace_begin(shoal_remote_t *r, child_t *c)
{
    if (!c->published || c->grace_begun)
        return; /* no sender ever found it, or its period began already */
    c->grace_begun = true;
    /* Without memory for the snapshot now, a later look takes it: a later
     * snapshot only waits for more. */
    c->snap_pending = shoal__qsbr_snapshot(r->rt, &c->snap) != SHOAL_OK;
    r->grace_poll_ms = 1;
}

/* Whether no sender can still be pushing into c (a look, never a wait):
 * then its channel may be told to drain, or go. */
bool shoal__remote_graced(shoal_remote_t *r, child_t *c)
{
    if (!c->published || c->graced)
        return true; /* no sender ever found it, or none can any more */
    if (!c->grace_begun)
        return false; /* still published */
    if (c->snap_pending && (c->snap_pending = shoal__qsbr_snapshot(r->rt, &c->snap) != SHOAL_OK))
        return false;
    if (!shoal__qsbr_passed(r->rt, &c->snap))
        return false;
    shoal__qsbr_snap_free(&c->snap);
    c->graced = true;
    return true;
}

/* c takes new work from now on. The child it replaces (at a commit) is no
 * longer published, but senders may still push into it until its grace
 * period has passed. */
void shoal__remote_publish(shoal_remote_t *r, child_t *c)
{
    c->published = true;
    /* seq_cst: the reclaimer's store of qsbr.h's Dekker pair for the child
     * it replaces; and a release: pairs with the senders' load (seq_cst,
     * so an acquire): c's channel is set up. */
    atomic_store_explicit(&r->cur, c, memory_order_seq_cst);
}

/* c takes no new work from now on; its grace period begins. */
void shoal__remote_unpublish(shoal_remote_t *r, child_t *c)
{
    child_t *expect = c;
    /* seq_cst: the reclaimer's store of qsbr.h's Dekker pair. It fails when
     * c was replaced at a commit: then publishing the new one was that
     * store. */
    atomic_compare_exchange_strong_explicit(&r->cur, &expect, NULL, memory_order_seq_cst,
                                            memory_order_relaxed);
    grace_begin(r, c);
}

/* A child is to drain: it takes no new work from now on, and is told once
 * nobody can push into it any more (drain_now, from tend). */
void shoal__remote_ask_drain(shoal_remote_t *r, child_t *c)
{
    if (c->drain_asked || c->drain_pending)
        return;
    shoal__remote_unpublish(r, c);
    c->drain_pending = true;
}

/* Its grace period has passed: its ring holds all it will ever get. */
static void drain_now(child_t *c)
{
    c->drain_pending = false;
    c->drain_asked = true;
    atomic_store_explicit(&c->area->want_drain, 1, memory_order_relaxed);
    /* release: pairs with the child's acquire load of want_seq (bridge,
     * host/isolated.c): it reads want_drain after the new seq. */
    atomic_fetch_add_explicit(&c->area->want_seq, 1, memory_order_release);
    shoal__chan_ring(c->chan);
}

/* The grace periods (above), on every wake: children to drain are told,
 * buried ones freed, once theirs has passed. The poll's timeout: short
 * while one is pending (doubling from 1 ms up to SHOAL__REMOTE_POLL_MS). */
int shoal__remote_tend(shoal_remote_t *r)
{
    bool pending = false;
    for (child_t *c = r->children; c != NULL; c = c->next) {
        if (c->drain_pending && shoal__remote_graced(r, c))
            drain_now(c);
        pending |= c->drain_pending;
    }
    for (child_t **pp = &r->buried; *pp != NULL;) {
        child_t *c = *pp;
        if (shoal__remote_graced(r, c)) {
            *pp = c->next;
            shoal__remote_child_free(c);
        } else {
            pending = true;
            pp = &c->next;
        }
    }
    if (!pending)
        return SHOAL__REMOTE_POLL_MS;
    unsigned ms = r->grace_poll_ms != 0 ? r->grace_poll_ms : 1;
    r->grace_poll_ms = ms * 2 < SHOAL__REMOTE_POLL_MS ? ms * 2 : SHOAL__REMOTE_POLL_MS;
    return (int)ms;
}
