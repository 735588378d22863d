/* fail_alloc.h - allocations that fail on demand, for the tests of what
 * shoal does when memory runs out.
 *
 * An executable linked with shoal_test_fail_alloc (tests/CMakeLists.txt)
 * has every call to malloc, calloc, realloc and aligned_alloc made by its
 * own objects -- the static libshoal's among them -- sent here by the
 * linker (--wrap): each passes to the C library unless a rule armed on the
 * calling thread refuses it, returning NULL as the C library does when
 * memory runs out. Nothing of this is in libshoal itself, nor in any other
 * test executable.
 *
 * A rule belongs to the thread that armed it: other threads' allocations
 * (the runtime's workers, the timer's) pass, so a test fails exactly the
 * allocations of the thread it drives -- its own, or a pool actor's in the
 * pool's init, armed from there by the pool's manager (fa_manager).
 */
#ifndef SHOAL_TEST_FAIL_ALLOC_H
#define SHOAL_TEST_FAIL_ALLOC_H

#include <stddef.h>

#include "shoal/shoal.h"

/* Which functions a rule refuses. */
enum { FA_MALLOC = 1u, FA_CALLOC = 2u, FA_REALLOC = 4u, FA_ALIGNED = 8u, FA_ANY = 15u };

/* On the calling thread, from now on: the next `times` calls to one of
 * `fns` that ask for exactly `bytes` (calloc: nmemb x size; 0: any size)
 * return NULL; every other call passes. Replaces the thread's rule. */
void fa_arm(unsigned fns, size_t bytes, unsigned times);

/* The calling thread's rule is off. */
void fa_disarm(void);

/* Calls refused so far, on every thread. */
unsigned long fa_refused(void);

/* A rule, as fa_arm takes it. */
typedef struct fa_rule_s {
    unsigned fns;
    size_t bytes;
    unsigned times;
} fa_rule_t;

/* A pool's manager behaviour (shoal_pool_spec_t.manager) whose init arms
 * the rule its args point at (a const fa_rule_t *) and which handles
 * nothing else. A manager's init runs in the pool's own init (pool.c:
 * pool_init), on the pool actor's thread, before the pool starts its
 * first workers and applies its elastic settings: the rule meets those
 * allocations, in that order, and no other thread's. */
extern const shoal_behaviour_t fa_manager;

#endif
