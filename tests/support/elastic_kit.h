/* elastic_kit.h - what the elastic pool suites share (test_elastic_waiting,
 * test_elastic_expiry, test_elastic_grow, test_elastic_live): a worker that
 * handles a job at once or blocks on one of two gates, the atomics it
 * records into, a pool spec of a kind with its bounds, a pool spawn, a job
 * sent, and the pool's stats.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (ek_reset() clears them before
 * a case).
 */
#ifndef SHOAL_TEST_ELASTIC_KIT_H
#define SHOAL_TEST_ELASTIC_KIT_H

#include "pool/pool.h"
#include "support.h"

#define EK_WAIT_S 20.0
#define EK_WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, EK_WAIT_S)
#define EK_TMO 10000u

/* The worker's one message type, and what a job asks of it: nothing, or to
 * block until ek_gate (EK_A_BLOCK) and/or ek_gate2 (EK_A_BLOCK2). */
enum { EK_T_JOB = 1 };
enum { EK_A_OK = 0, EK_A_BLOCK = 1, EK_A_BLOCK2 = 2 };

/* Jobs done; workers blocked on gate and gate2 so far; the gates. */
extern atomic_int ek_done, ek_entered, ek_gate, ek_entered2, ek_gate2;
extern _Atomic double ek_left_at; /* when the last blocked handler went on */

void ek_reset(void);

/* A pool of the worker ("pull" or "forward" after its kind): size, min_size,
 * max_size, and mailbox (a pull pool's buffer too). */
shoal_pool_spec_t ek_spec_of(uint32_t kind, uint32_t size, uint32_t min, uint32_t max,
                             uint32_t mailbox);
/* Spawns the pool (asserting it spawns); its pid. */
shoal_pid_t ek_spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s);
/* The same worker as a plain actor with a mailbox limit, and as a checkout
 * pool's members (init = max = size, no queue, no culling). */
shoal_pid_t ek_spawn_bounded(shoal_runtime_t *rt, uint32_t limit);
shoal_pool_spec_t ek_spec_checkout(uint32_t size);
/* Sends the job act to `to`: shoal_runtime_send's result. */
int ek_job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t act);

#define EK_STATS(rt, p) shoal_test_pool_stats(rt, p)

#endif
