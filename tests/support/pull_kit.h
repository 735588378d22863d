/* pull_kit.h - what the pull pool suites split from the first one share
 * (test_pull_capacity, test_pull_demand, test_pull_faults,
 * test_pull_specs): a member ("wk") that records which job it handled,
 * when, how often, and how much it held, and can block on a gate, sleep,
 * panic or fail; pull pool specs, spawning, and sending a job.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (pu_reset() clears them before
 * a case). Where a test needs items to stay queued, members block on
 * pu_gate, which the test opens.
 */
#ifndef SHOAL_TEST_PULL_KIT_H
#define SHOAL_TEST_PULL_KIT_H

#include "support.h"

#define PU_WAIT_S 20.0
#define PU_TMO 10000u
#define PU_THREADS 6u
#define PU_MAXSEQ 4096

enum { T_JOB = 1, T_WHO = 2 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2, A_SLEEP = 4, A_FAIL = 8, A_FIRST = 16 };
/* A_PANIC and A_FAIL: on every attempt, or with A_FIRST only on the first. */

typedef struct {
    uint32_t seq, act;
    uint32_t sleep_ms;
    double sent; /* shoal_test_now() at the send */
} pu_job_t;

/* Per job seq: the member that took it, how often it was seen, when it
 * started and ended. pu_done counts jobs handled, pu_entered those that
 * reached the gate; pu_max_held is the most a member ever held (the item in
 * hand included), pu_over_held how often one held more than pu_prefetch_now
 * (or none). */
extern _Atomic shoal_pid_t pu_owner[PU_MAXSEQ];
extern atomic_int pu_seen[PU_MAXSEQ];
extern _Atomic double pu_started_at[PU_MAXSEQ], pu_ended_at[PU_MAXSEQ];
extern atomic_int pu_done, pu_entered, pu_gate, pu_max_held, pu_over_held;
extern _Atomic uint32_t pu_prefetch_now;

/* A call's answer (type T_WHO): the member that took it, and the caller's
 * PID and ref as the member saw them. */
typedef struct {
    shoal_pid_t self, from;
    shoal_ref_t ref;
} pu_who_t;

/* The member: T_JOB casts (a pu_job_t) and calls (answered with a
 * pu_who_t). */
extern const shoal_behaviour_t pu_wk;

/* Clears every record and shuts the gate. */
void pu_reset(void);
void pu_sleep_ms(uint32_t ms);
/* A pull pool of `size` members of pu_wk (min_size too) with prefetch and
 * buffer; sets pu_prefetch_now. */
void pu_pull_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t prefetch, uint32_t buffer);
/* Spawns the pool (asserting SHOAL_OK). */
shoal_pid_t pu_spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s);
/* Sends job seq doing act (A_SLEEP: ms); the send's code. */
int pu_job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t seq, uint32_t act, uint32_t ms);

#endif
