/* pull_source_kit.h - what the pull source suites share (test_pull_source,
 * test_pull_source_held): a source of the test's own ("counter": items
 * next .. total-1, its cursor next, as the bundled seq does), pull pool
 * members ("wk") that record which item they handled and how often, and an
 * "epic" pool of them fed by the counter.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (ps_reset() clears them before
 * a case).
 */
#ifndef SHOAL_TEST_PULL_SOURCE_KIT_H
#define SHOAL_TEST_PULL_SOURCE_KIT_H

#include "pool/pool.h"
#include "support.h"

#define PS_WAIT_S 30.0
#define PS_WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PS_WAIT_S)
#define PS_TMO 10000u
#define PS_ITEM 7u /* an item's type */
#define PS_MAXITEMS (1u << 20)

/* The source: what it was set to do, and what it heard. */
extern _Atomic uint64_t ps_total;          /* items in the epic (args, a uint64_t *, end sooner) */
extern _Atomic uint64_t ps_panic_at;       /* panic when asked with next >= this ... */
extern atomic_int ps_panics_left;          /* ... this many times */
extern atomic_int ps_requests, ps_resumes; /* heard */
extern _Atomic uint32_t ps_max_n;          /* the largest request */
extern _Atomic uintptr_t ps_last_args;     /* what the last init got */
extern atomic_int ps_inits;
extern const shoal_behaviour_t ps_counter;

/* The members: item i seen ps_seen[i] times; handled, and handled again. An
 * item 0 waits while ps_gate is 0 (up to PS_WAIT_S). */
extern unsigned char ps_seen[PS_MAXITEMS];
extern _Atomic uint64_t ps_handled, ps_dups;
extern atomic_int ps_gate;
extern const shoal_behaviour_t ps_wk;

/* Clears what the source and the members recorded; the epic is n items. */
void ps_reset(uint64_t n);
/* A pull pool "epic" of `size` wk members, buffer `buffer`, fed by the
 * counter; ps_spawn starts one (asserting it did). */
void ps_epic_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t buffer);
shoal_pid_t ps_spawn(shoal_runtime_t *rt, uint32_t size, uint32_t buffer);
/* Whether items 0 .. n-1 were each handled exactly once. */
bool ps_all_once(uint64_t n);
/* Whether items 0 .. n-1 were each handled, once or more (ps_handled counts
 * the duplicates too: it reaches n before the last items do). */
bool ps_all_seen(uint64_t n);
/* Long enough (0.2 s) for a request the pool should not have made to be
 * seen. */
void ps_settle(void);

#endif
