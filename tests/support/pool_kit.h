/* pool_kit.h - what the forwarding pool suites share (test_pool_forward,
 * test_pool_crashes, test_pool_resize, test_pool_lifecycle): a worker that
 * records which job it handled, from whom, and can block on a gate, panic
 * or fail; a manager behaviour; pool makers; helpers that send jobs, fill
 * mailboxes, read and wait for a pool's stats, check its counts and shape,
 * inspect it, and drain it from a thread of their own.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them. Where a test needs full
 * mailboxes, workers block on a gate that the test opens, so what is queued
 * where is decided by the test, never by timing. The runtime has more
 * threads than workers ever block at once, so pool actors keep running.
 */
#ifndef SHOAL_TEST_POOL_KIT_H
#define SHOAL_TEST_POOL_KIT_H

#include <pthread.h>
#include <stddef.h>

#include "support.h"

#define PK_WAIT_S 20.0
#define PK_TMO 10000u /* ms, for every blocking call */
#define PK_PENDING 12345

enum { T_JOB = 1, T_WHO = 2, T_PANIC = 3, T_GO = 4, T_NOTE = 5, T_ASK = 6 };
enum { A_OK = 0, A_BLOCK = 1, A_PANIC = 2, A_FAIL = 4 }; /* what a job does */

typedef struct {
    uint32_t seq, act;
} pk_job_t;

/* What a worker answers to T_WHO: who it is and what it saw. */
typedef struct {
    shoal_pid_t self, from;
    shoal_ref_t ref;
} pk_who_t;

/* ---- the worker ("wk") ---------------------------------------------------------- */

/* Per job seq (below PK_MAXSEQ): the worker that handled it, its sender, how
 * often it was handled. A job with A_BLOCK counts in pk_entered and waits
 * until pk_gate passes its level (seq >> 16); pk_done counts the jobs that
 * ended well, pk_other the messages that were no job. A T_WHO call is
 * answered with a pk_who_t, T_PANIC panics. */
#define PK_MAXSEQ 256
extern _Atomic shoal_pid_t pk_owner[PK_MAXSEQ], pk_from_of[PK_MAXSEQ];
extern atomic_int pk_seen[PK_MAXSEQ];
extern atomic_int pk_done, pk_entered, pk_gate, pk_other;

/* ---- the manager ("mgr") --------------------------------------------------------- */

/* Its init takes the base (an int: pass &pk_mgr_base) and returns
 * pk_mgr_init_rc; it answers a priority T_ASK with base + the int asked, as
 * type T_ASK + 100, and any other call with SHOAL_EINVAL; it counts priority
 * T_NOTE casts (anything else in pk_mgr_bad) and inspects as manager_casts
 * and manager_note "hi"; terminate records its reason. */
extern atomic_int pk_mgr_inits, pk_mgr_casts, pk_mgr_terms, pk_mgr_reason, pk_mgr_bad,
    pk_mgr_init_rc;
extern _Atomic shoal_pid_t pk_mgr_self;
extern const int pk_mgr_base;
extern const shoal_behaviour_t pk_mgr;

/* ---- pools ------------------------------------------------------------------------ */

/* Fresh records, and a runtime that keeps its log for the test. */
shoal_runtime_t *pk_begin(void);
void pk_spec_of(shoal_pool_spec_t *s, const char *name, uint32_t size, uint32_t mailbox);
shoal_pid_t pk_spawn(shoal_runtime_t *rt, const shoal_pool_spec_t *s);
/* A pool of `size` wk workers. */
shoal_pid_t pk_wk_pool(shoal_runtime_t *rt, const char *name, uint32_t size, uint32_t mailbox);
/* A pool of `size` pools of inner's spec. */
void pk_nest(shoal_pool_spec_t *s, const char *name, uint32_t size, const shoal_pool_spec_t *inner);
void pk_spec_restart(shoal_pool_spec_t *s, uint32_t max, uint64_t within, uint64_t backoff);

/* ---- jobs ------------------------------------------------------------------------- */

int pk_job(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t seq, uint32_t act);
/* Sends a job that blocks its worker until the gate opens, and waits until
 * a worker is in it. */
void pk_block(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t seq, uint32_t act);
/* Sends A_OK jobs from *seq on until one is refused; returns how many were
 * accepted, *rc the refusal. The refused seq is skipped. */
uint32_t pk_fill_up(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t *seq, int *rc);
/* How many of the jobs in [from, to) pid handled. */
unsigned pk_owned_by(shoal_pid_t pid, uint32_t from, uint32_t to);
/* Every seq in [from, to) was handled exactly `times` times. */
void pk_seen_all(uint32_t from, uint32_t to, int times);

/* ---- stats, counts, inspect ------------------------------------------------------- */

/* The pool's stats (state 99 and zeros if the call failed: its code is
 * pk_stats_rc). */
extern int pk_stats_rc;
shoal_pool_stats_t pk_st(shoal_runtime_t *rt, shoal_pid_t pool);

/* Polls the pool's stats into s until cond (over s) holds, or PK_WAIT_S. */
#define PK_WAIT_STATS(s, rt, pool, cond)                                                           \
    do {                                                                                           \
        double end_ = shoal_test_now() + PK_WAIT_S;                                                \
        for (;;) {                                                                                 \
            (s) = pk_st(rt, pool);                                                                 \
            if ((cond) || shoal_test_now() >= end_)                                                \
                break;                                                                             \
            shoal_test_nap();                                                                      \
        }                                                                                          \
    } while (0)

/* Waits until the pool counts exactly `handled` and `failed` and nothing is
 * queued (a worker publishes its pop count lazily, mailbox.h). */
shoal_pool_stats_t pk_settle(shoal_runtime_t *rt, shoal_pid_t pool, uint64_t handled,
                             uint64_t failed);

/* The message counters of s, and the ledger: once traffic has stopped,
 * every accepted message was handled, failed or dropped; none is queued. */
#define PK_COUNTS(s, fwd, handled, failed, unhandled)                                              \
    do {                                                                                           \
        CU_ASSERT_EQUAL((s).messages_forwarded, fwd);                                              \
        CU_ASSERT_EQUAL((s).messages_handled, handled);                                            \
        CU_ASSERT_EQUAL((s).messages_failed, failed);                                              \
        CU_ASSERT_EQUAL((s).messages_unhandled, unhandled);                                        \
        CU_ASSERT_EQUAL((s).messages_forwarded,                                                    \
                        (s).messages_handled + (s).messages_failed + (s).messages_dropped);        \
        CU_ASSERT_EQUAL((s).queue_depth, 0);                                                       \
    } while (0)

/* The shape of the pool in s. */
#define PK_SHAPE(s, state_, size, target, restarts)                                                \
    do {                                                                                           \
        CU_ASSERT_EQUAL((s).state, state_);                                                        \
        CU_ASSERT_EQUAL((s).pool_size, size);                                                      \
        CU_ASSERT_EQUAL((s).target_size, target);                                                  \
        CU_ASSERT_EQUAL((s).worker_restarts, restarts);                                            \
    } while (0)

/* Waits until exactly `live` actors live: the inner pools of a nested pool
 * start their workers after shoal_runtime_spawn_pool has returned. */
bool pk_ready(shoal_runtime_t *rt, uint64_t live);
bool pk_all_ended(shoal_runtime_t *rt);

/* pid's inspect JSON into out; the call's code, or the answer's status. */
int pk_inspect(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap);
/* CU_ASSERT that json contains part; prints both when not. */
void pk_has(const char *json, const char *part);

/* ---- a blocking drain on its own thread ------------------------------------------- */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    atomic_int rc; /* PK_PENDING until the drain returns */
    pthread_t t;
} pk_drainer_t;

void pk_drainer_start(pk_drainer_t *d, shoal_runtime_t *rt, shoal_pid_t pool);

#endif
