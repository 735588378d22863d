/* swap_kit.h - what the suites of a pool's start and worker swap share
 * (test_swap_start, test_swap_steps, test_swap_tokens): a worker that
 * carries a tag in its args -- a call to the pool answers it, so the test
 * knows which code answered; its init may fail, panic or wait on sw_gate --
 * a runtime for it, a pool spec of it, a pool of tag 0's code, and the
 * swap's steps as the host sends them (pool.h: shoal__pool_swap_ask,
 * _step), from the test thread.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (sw_begin clears them before a
 * case).
 */
#ifndef SHOAL_TEST_SWAP_KIT_H
#define SHOAL_TEST_SWAP_KIT_H

#include "pool/pool.h"
#include "pool/swap.h"
#include "support.h"

#define SW_WAIT_S 20.0
#define SW_TMO 10000u
#define SW_THREADS 4u /* a runtime's dispatcher threads (sw_begin) */

/* What a worker's init does: return at once, fail, panic, wait on sw_gate
 * (SW_WAIT_S at most), or send itself a cast and arm a 10 ms priority
 * timer (both counted in sw_own when handled). */
enum { SW_I_OK = 0, SW_I_FAIL = 1, SW_I_PANIC = 2, SW_I_GATE = 3, SW_I_SELF = 4 };

typedef struct {
    int tag;
    int init; /* SW_I_* */
} sw_wargs_t;

/* Inits run; the gate SW_I_GATE's inits wait on; jobs handled per tag
 * (0..2), and an SW_I_SELF init's own messages. Tag 0's jobs wait on
 * sw_old_gate while sw_hold_old. */
extern atomic_int sw_inits, sw_gate, sw_handled[3], sw_own[3];
extern atomic_int sw_hold_old, sw_old_gate;

/* The worker: its state is its tag. */
extern const shoal_behaviour_t sw_worker;

/* Clears the atomics above, then a runtime of SW_THREADS dispatcher
 * threads, debug checks on, INFO kept for shoal_test_log_has; sw_begin_with
 * takes max_extra_threads (SHOAL_EXTRA_THREADS_NONE: none made up for a
 * held thread). */
shoal_runtime_t *sw_begin_with(int max_extra_threads);
shoal_runtime_t *sw_begin(void);

/* A pool "p" of `size` workers of a's code (max_size 16, mailbox 1000). */
void sw_spec_of(shoal_pool_spec_t *s, uint32_t size, const sw_wargs_t *a);

/* The tag of the worker that answers a call to the pool (-1: no answer). */
int sw_who(shoal_runtime_t *rt, shoal_pid_t pool);

/* The runtime's live actors. */
uint64_t sw_live(shoal_runtime_t *rt);

/* A pool of `size` workers of tag 0's code (asserted, fatally). */
shoal_pid_t sw_spawn_old(shoal_runtime_t *rt, uint32_t size);

/* n jobs cast to the pool, each send asserted. */
void sw_send_jobs(shoal_runtime_t *rt, shoal_pid_t pool, int n);

/* ---- the swap's steps -------------------------------------------------------------- */

/* A PREPARE of the swap sw (the call takes it) within tmo_ms; *token: the
 * swap's, *r: the pool's answer. Returns the call's own result. */
int sw_ask(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pool_swap_t *sw, uint64_t tmo_ms,
           uint64_t *token, shoal_pool_swap_result_t *r);

/* A COMMIT or ABORT (type) of the swap named by token, within SW_TMO;
 * *replaced (if not NULL): the slots a COMMIT replaced. */
int sw_step(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, uint64_t token,
            uint32_t *replaced);

/* A swap to `size` workers of a's code, for sw_ask. */
shoal_pool_swap_t *sw_new_swap(const sw_wargs_t *a, uint32_t size);

/* A PREPARE of size workers of a's code; *token: the swap's. The call
 * itself must answer what the pool did (CU_FAIL if not). */
shoal_pool_swap_result_t sw_prepare(shoal_runtime_t *rt, shoal_pid_t pool, const sw_wargs_t *a,
                                    uint32_t size, uint64_t *token);

#endif
