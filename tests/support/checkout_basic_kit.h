/* checkout_basic_kit.h - what the checkout pool suites split from the first
 * one share (test_checkout_take, test_checkout_consumers,
 * test_checkout_lifetimes, test_checkout_admin): a member that counts its
 * uses and can be told to fail, block or panic -- or to fail or be slow to
 * start --, pool makers, liveness checks, and a taker on a thread of its
 * own. (test_checkout_fast and the test_checkout_adversarial_* suites have
 * theirs in checkout_kit.h.)
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (cb_reset() clears them before
 * a case).
 */
#ifndef SHOAL_TEST_CHECKOUT_BASIC_KIT_H
#define SHOAL_TEST_CHECKOUT_BASIC_KIT_H

#include <pthread.h>

#include "support.h"

#define CB_WAIT_S 20.0
#define CB_TMO 5000u

/* ---- the member ("conn") ------------------------------------------------------ */

/* A call of any type but T_FAIL is answered with a cb_who_t of that type: its
 * PID and its uses so far (messages and calls, this one included). T_FAIL
 * fails the message or call (SHOAL_EFAILED); T_BLOCK waits until cb_gate is
 * set (counted in cb_blocked), and a call of it then fails if cb_gate is
 * CB_GATE_FAIL; a cast of T_PANIC panics; T_EXIT, a cast or a call
 * (answered first), ends the member by shoal_exit(SHOAL_OK). */
enum { T_WHO = 1, T_FAIL = 2, T_BLOCK = 3, T_PANIC = 4, T_EXIT = 5 };
#define CB_GATE_FAIL 2

typedef struct {
    shoal_pid_t pid;
    uint64_t uses;
} cb_who_t;

/* Members started (init succeeded); init fails while cb_init_fail is set
 * and sleeps cb_init_delay_ms first (a slow connect). The EXITs a consumer
 * heard (test_checkout_consumers) and the last one's sender. */
extern atomic_int cb_started, cb_init_fail, cb_init_delay_ms, cb_gate, cb_blocked, cb_exits_seen;
extern _Atomic shoal_pid_t cb_exit_from;
extern const shoal_behaviour_t cb_member;

/* An actor that holds its dispatcher thread from each message it gets
 * until cb_hog_gate is set (cb_hog_in: it holds now), so that what is sent
 * meanwhile waits in mailboxes. */
extern atomic_int cb_hog_gate, cb_hog_in;
extern const shoal_behaviour_t cb_hog;
/* A hog spawned and sent a message, once it holds its thread: its PID. */
shoal_pid_t cb_hog_hold(shoal_runtime_t *rt);

/* Clears the records above. */
void cb_reset(void);

/* ---- pools -------------------------------------------------------------------- */

/* A checkout pool "db" of cb_member: init members, at most max. */
shoal_pool_spec_t cb_spec_of(uint32_t init, uint32_t max);
shoal_pid_t cb_start(shoal_runtime_t *rt, const shoal_pool_spec_t *s);
shoal_pool_stats_t cb_stats(shoal_runtime_t *rt, shoal_pid_t pool);
/* pid is alive (takes a priority cast). */
bool cb_alive(shoal_runtime_t *rt, shoal_pid_t pid);
/* Whether pid has ended, waiting for its end (up to CB_WAIT_S). */
bool cb_ended(shoal_runtime_t *rt, shoal_pid_t pid);

/* ---- a taker on its own thread ------------------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool, got;
    uint64_t timeout_ms;
    int rc;
    double took;
    int back_rc; /* its own return of what it got (only this thread may) */
    int keep;    /* 1: it keeps what it got */
    atomic_int done;
} cb_taker_t;

/* pthread_create's start routine: takes from pool within timeout_ms, and
 * gives it back unless keep; then sets done. */
void *cb_taker_main(void *arg);

void cb_sleep_ms(long ms);

#endif
