/* checkout_kit.h - what the checkout pool suites share (test_checkout_fast,
 * test_checkout_adversarial_grants, test_checkout_adversarial_waiters,
 * test_checkout_adversarial_races, test_checkout_adversarial_send_many): a
 * member, a consumer actor that does what
 * the test thread tells it and records what it got, and helpers that tell
 * it and wait for the answer.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them (the helpers do, and reset()
 * clears them before a case).
 */
#ifndef SHOAL_TEST_CHECKOUT_KIT_H
#define SHOAL_TEST_CHECKOUT_KIT_H

#include "support.h"

#define CK_WAIT_S 20.0
#define CK_WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CK_WAIT_S)
#define CK_TMO 5000u /* a take's timeout when the case gives none */

/* ---- the member ---------------------------------------------------------- */

/* Casts of these types to a member: counted in ck_handled; T_PANIC panics,
 * T_BLOCK waits until ck_mgate is set (counted in ck_mblocked). A call
 * answers its own type with the member's PID (T_PANIC: panics). */
enum { T_OK = 1, T_PANIC = 2, T_BLOCK = 3 };

extern atomic_int ck_started, ck_handled, ck_mgate, ck_mblocked;
extern const shoal_behaviour_t ck_member;
int ck_member_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg);

/* A checkout pool of ck_member: init, max, queue_max; no culling. */
shoal_pool_spec_t ck_spec(uint32_t init, uint32_t max, uint32_t queue_max);
shoal_pid_t ck_start_spec(shoal_runtime_t *rt, const shoal_pool_spec_t *s);
shoal_pid_t ck_start(shoal_runtime_t *rt, uint32_t init, uint32_t max, uint32_t queue_max);
/* Its stats, asserting in use + free + starting == the members alive. */
shoal_pool_stats_t ck_stats(shoal_runtime_t *rt, shoal_pid_t pool);
/* pid is alive (takes a priority cast) / has ended. */
bool ck_alive(shoal_runtime_t *rt, shoal_pid_t pid);
bool ck_dead(shoal_runtime_t *rt, shoal_pid_t pid);

/* ---- the consumer -------------------------------------------------------- */

enum {
    C_TRY = 1,          /* shoal_try_take */
    C_TAKE,             /* shoal_take(timeout_ms) */
    C_RETURN,           /* shoal_return(member, or what it got; how) */
    C_TAKE_PANIC,       /* shoal_take, then panic in the same turn */
    C_TAKE_BLOCK_PANIC, /* shoal_take, then wait for its gate, then panic */
    C_BLOCK_RETURN,     /* wait for its gate, then shoal_return(what it got, how) */
    C_PANIC,
    C_EXIT, /* shoal_exit(OK): a normal end */
};

typedef struct {
    int what, how;
    shoal_pid_t pool, member;
    uint64_t timeout_ms;
} ck_order_t;

#define CK_NC 8 /* consumers: each its own slot i in the records */

/* Per consumer: each call's result (99: none yet), the grants (a take's
 * REPLY with a member) and every REPLY, the last REPLY's status, the
 * member it holds, in which order the grants came (1, 2, ...), its gate
 * (stage 1: waiting at it), the EXITs it got and from whom. */
extern atomic_int try_rc[CK_NC], take_rc[CK_NC], return_rc[CK_NC], grants[CK_NC], answers[CK_NC],
    answer_status[CK_NC], grant_order[CK_NC], stage[CK_NC], cgate[CK_NC], exits[CK_NC];
extern _Atomic shoal_pid_t got[CK_NC], exit_from[CK_NC];

void ck_reset(void);
/* ck_reset(), then a runtime of `threads` dispatcher threads (asserted, fatally). */
shoal_runtime_t *ck_runtime(unsigned threads);
/* Consumer i (0 <= i < CK_NC). */
shoal_pid_t ck_spawn_consumer(shoal_runtime_t *rt, int i);
void ck_tell(shoal_runtime_t *rt, shoal_pid_t c, ck_order_t o);
/* Tell consumer c (slot i) and wait for its result. */
int ck_try_take(shoal_runtime_t *rt, shoal_pid_t c, int i, shoal_pid_t pool);
int ck_take(shoal_runtime_t *rt, shoal_pid_t c, int i, shoal_pid_t pool, uint64_t timeout_ms);
/* m SHOAL_PID_NONE: what it got. */
int ck_give_back(shoal_runtime_t *rt, shoal_pid_t c, int i, shoal_pid_t m, int how);

#endif
