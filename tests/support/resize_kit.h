/* resize_kit.h - what the suites of the Resize contract for forward and
 * pull pools share (test_resize_capacity, test_resize_calls,
 * test_resize_work): a worker whose jobs may block on a gate, spin or
 * panic, the records it keeps -- each id's completions, the most handlers
 * at once, and whether one ran past the capacity in force (rz_cap_word) or
 * after drain returned (rz_drained) -- a pool of it of either kind, a job
 * sent, and whether the pool has settled at a size.
 *
 * Handlers and the test's own threads never call CUnit: they record into
 * the atomics and arrays below; the test thread asserts after
 * synchronising on them (rz_reset clears them before a case).
 */
#ifndef SHOAL_TEST_RESIZE_KIT_H
#define SHOAL_TEST_RESIZE_KIT_H

#include "support.h"

#define RZ_WAIT_S 30.0
#define RZ_WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, RZ_WAIT_S)
#define RZ_TMO 10000u
#define RZ_MAXW 6u /* max_size of every pool here */
#define RZ_NJOBS 20000u

/* What a job asks of the worker (bits): nothing, to block until rz_gate,
 * to panic once done, to spin 20 us. */
enum { RZ_A_OK = 0, RZ_A_BLOCK = 1, RZ_A_PANIC = 2, RZ_A_SPIN = 4 };

extern unsigned char rz_runs[RZ_NJOBS];     /* completions per id */
extern unsigned char rz_accepted[RZ_NJOBS]; /* the send returned SHOAL_OK */
/* The most handlers at once; jobs done (not those that panicked); handlers
 * blocked on rz_gate, and the gate; jobs begun after rz_drained was set;
 * set once drain has returned. */
extern atomic_int rz_max_running, rz_done, rz_entered, rz_gate, rz_after_drain, rz_drained;
/* Sends accepted (test_resize_capacity's loaders); handlers ended, panics
 * too. */
extern atomic_int rz_accepted_n, rz_ended;
/* Sends begun after drain returned; of them, refused SHOAL_ENOPROC. */
extern atomic_int rz_sent_after, rz_refused_after;
/* The capacity in force (test_resize_capacity's resizer), with a
 * generation: (changes << 8) | capacity. One writer at a time (its
 * set_cap). */
extern atomic_uint rz_cap_word;
/* Handlers that found more running than the capacity in force; handlers
 * checked, and not (two changes meanwhile); the resizer's answers not the
 * size asked and waits that failed. */
extern atomic_int rz_over_cap, rz_cap_checked, rz_cap_unchecked, rz_bad_resize;

void rz_reset(void);

/* The capacity in a word of rz_cap_word. */
uint32_t rz_cap_of(uint32_t w);

/* The worker. */
extern const shoal_behaviour_t rz_wk;

/* A pool of rz_wk ("pull" or "forward" after its kind): size, min_size 1,
 * max_size max (rz_spawn: RZ_MAXW), mailbox (a pull pool's buffer too),
 * restarts all but unbounded. Its spawn is asserted. */
shoal_pid_t rz_spawn_max(shoal_runtime_t *rt, uint32_t kind, uint32_t size, uint32_t mailbox,
                         uint32_t max);
shoal_pid_t rz_spawn(shoal_runtime_t *rt, uint32_t kind, uint32_t size, uint32_t mailbox);

/* Sends job `id` asking `act` (RZ_A_*); the send's result. */
int rz_job(shoal_runtime_t *rt, shoal_pid_t to, uint32_t id, uint32_t act);

/* Until the pool has settled at `size`: live = target = size, none retiring. */
bool rz_settled_at(shoal_runtime_t *rt, shoal_pid_t p, uint32_t size);

/* A thread's part: a loader's ids, or a resizer's or sender's pool; all
 * stop once *stop is set. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    uint32_t from, to; /* ids */
    atomic_int *stop;
} rz_load_t;

#endif
