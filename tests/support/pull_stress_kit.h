/* pull_stress_kit.h - what the pull pool stress suites share
 * (stress_pull_churn, stress_pull_ending): a pull pool (core/pool/pull.c)
 * under concurrency -- senders, callers, live changes and crashes at once --
 * run to an exact ledger.
 *
 * Two producer threads (shoal_runtime_send) and two producer actors
 * (shoal_send, a batch per turn) send items with unique ids, never
 * retried: each is accepted (SHOAL_OK) or refused (SHOAL_EBUSY). A caller
 * thread makes calls through the pool with ids of their own (a refused one
 * is tried again, a while); every call returns (a timeout is a failure: a
 * lost wake-up or a lost item). Meanwhile
 * a churner thread sets the size (1..6), the prefetch (1..8) and the buffer
 * (0..48) at random, and members panic on ids divisible by CRASH_PRIME.
 * Checked, for the scenarios that run to quiescence:
 *   - every sender saw only OK or EBUSY; every call OK with status 0 or
 *     SHOAL_EPANIC (the ids that panic);
 *   - per id: handled once if accepted, never if refused; no member ever
 *     holds more than the largest prefetch set;
 *   - the pool's stats: forwarded = accepted, unhandled = refused, handled
 *     = accepted - panicked, failed = panicked, nothing dropped, queue and
 *     buffer empty, forwarded = handled + failed + dropped + queue_depth;
 *   - no admission leaked: with members blocked, exactly buffer + size x
 *     prefetch further items are accepted;
 *   - the drain ends the pool; nothing was dropped (runtime stats).
 * A scenario is the churn above, optionally on a forward pool of 2 pull
 * pools (the outer one resized 2 -> 1 -> 2), optionally with the pool ending
 * (drained, or stopped) while everyone still sends: then every accepted
 * item is handled once, failed, or dropped and counted (runtime
 * msgs_dropped), and every call returns.
 *
 * Sizes scale with SHOAL_STRESS_SCALE (default 1; sanitizer builds 0.1).
 */
#ifndef SHOAL_TEST_PULL_STRESS_KIT_H
#define SHOAL_TEST_PULL_STRESS_KIT_H

#include "support.h"

enum { PS_END_NONE, PS_END_DRAIN, PS_END_STOP };

typedef struct {
    const char *name;
    int nested; /* a forward pool of 2 pull pools */
    int end;    /* PS_END_*: the pool ends under traffic */
} ps_scenario_t;

/* Runs scenario s (two rounds, the second only if the first passed). */
void ps_run(const ps_scenario_t *s);

#endif
