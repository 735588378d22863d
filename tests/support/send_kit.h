/* send_kit.h - what the send suites share (test_send_fifo,
 * test_send_limits, test_send_enoproc, test_send_payloads,
 * test_send_priority): the message types, and a receiver that blocks in its
 * first message ("blocker") so that what queues behind it is known exactly.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in the atomics below, and the test thread asserts after synchronising
 * on them (sk_reset() clears them before a case).
 */
#ifndef SHOAL_TEST_SEND_KIT_H
#define SHOAL_TEST_SEND_KIT_H

#include <stddef.h>

#include "support.h"

#define SK_WAIT_S 20.0 /* every wait ends: a bug fails the test instead of hanging it */

enum { T_BLOCK = 1, T_DATA = 2, T_EXIT = 3, T_FAIL = 4, T_GO = 5, T_CTRL = 6 };

/* ---- a receiver that blocks in its first message ---------------------------
 *
 * T_BLOCK: sets sk_entered, waits for sk_release, then ends the actor if
 * sk_exit_after (shoal_exit 0).
 * T_DATA: counted in sk_data (sk_data_prio if high-priority); the payload
 * checked against sk_expect/sk_expect_size (and its address against
 * sk_expect_ptr) when set, and 8-byte alignment; a long payload is an index
 * that must follow the last (sk_order_bad). Anything wrong counts in
 * sk_bad.
 * T_CTRL: records how many T_DATA ran before it (sk_ctrl_after) and its
 * flags, then sets sk_ctrl_seen. */

extern atomic_int sk_entered, sk_release, sk_exit_after, sk_data, sk_ctrl_seen;
extern atomic_int sk_ctrl_after, sk_ctrl_flags, sk_bad, sk_data_prio;
extern atomic_int sk_order_bad;
extern atomic_long sk_last_index;
extern const void *sk_expect_ptr; /* set before the message is sent */
extern const unsigned char *sk_expect;
extern size_t sk_expect_size;
extern const shoal_behaviour_t sk_blocker;

void sk_reset(void);
/* Spawns a blocker with `limit` and waits until it sits in T_BLOCK: the
 * blocking message has been popped, so the user mailbox is empty. */
shoal_pid_t sk_spawn_blocked(shoal_runtime_t *rt, uint32_t limit);

#endif
