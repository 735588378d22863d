/* send_kit.c - the send suites' blocker (send_kit.h). */
#include "send_kit.h"

#include <string.h>

atomic_int sk_entered, sk_release, sk_exit_after, sk_data, sk_ctrl_seen;
atomic_int sk_ctrl_after, sk_ctrl_flags, sk_bad, sk_data_prio;
atomic_int sk_order_bad;
atomic_long sk_last_index;
const void *sk_expect_ptr; /* set before the message is sent */
const unsigned char *sk_expect;
size_t sk_expect_size;

void sk_reset(void)
{
    atomic_store(&sk_entered, 0);
    atomic_store(&sk_release, 0);
    atomic_store(&sk_exit_after, 0);
    atomic_store(&sk_data, 0);
    atomic_store(&sk_ctrl_seen, 0);
    atomic_store(&sk_ctrl_after, -1);
    atomic_store(&sk_ctrl_flags, -1);
    atomic_store(&sk_bad, 0);
    atomic_store(&sk_data_prio, 0);
    atomic_store(&sk_order_bad, 0);
    atomic_store(&sk_last_index, -1);
    sk_expect_ptr = NULL;
    sk_expect = NULL;
    sk_expect_size = 0;
}

static int blocker_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    switch (msg->type) {
    case T_BLOCK:
        atomic_store(&sk_entered, 1);
        shoal_test_wait_flag(&sk_release, SK_WAIT_S);
        if (atomic_load(&sk_exit_after))
            shoal_exit(ctx, 0);
        return 0;
    case T_DATA:
        if (sk_expect != NULL &&
            (msg->size != sk_expect_size ||
             (msg->size == 0 ? msg->data != NULL : memcmp(msg->data, sk_expect, msg->size) != 0)))
            atomic_fetch_add(&sk_bad, 1);
        if (msg->size != 0 && ((uintptr_t)msg->data & 7) != 0) /* 8-byte aligned */
            atomic_fetch_add(&sk_bad, 1);
        if (sk_expect_ptr != NULL && msg->data != sk_expect_ptr)
            atomic_fetch_add(&sk_bad, 1);
        if (msg->size == sizeof(long)) {
            long idx;
            memcpy(&idx, msg->data, sizeof idx);
            if (idx != atomic_load(&sk_last_index) + 1)
                atomic_fetch_add(&sk_order_bad, 1);
            atomic_store(&sk_last_index, idx);
        }
        if (msg->flags & SHOAL_MSG_PRIORITY)
            atomic_fetch_add(&sk_data_prio, 1);
        atomic_fetch_add(&sk_data, 1);
        return 0;
    case T_CTRL:
        atomic_store(&sk_ctrl_after, atomic_load(&sk_data));
        atomic_store(&sk_ctrl_flags, (int)msg->flags);
        if (msg->kind != SHOAL_MSG_CAST)
            atomic_fetch_add(&sk_bad, 1);
        atomic_store(&sk_ctrl_seen, 1);
        return 0;
    default:
        atomic_fetch_add(&sk_bad, 1);
        return 0;
    }
}

const shoal_behaviour_t sk_blocker = {.name = "blocker", .handle_message = blocker_handle};

/* Spawns a blocker with `limit` and waits until it sits in T_BLOCK: the
 * blocking message has been popped, so the user mailbox is empty. */
shoal_pid_t sk_spawn_blocked(shoal_runtime_t *rt, uint32_t limit)
{
    shoal_spawn_opts_t o = {.mailbox_limit = limit};
    shoal_pid_t pid = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &sk_blocker, NULL, &o, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_BLOCK, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&sk_entered, SK_WAIT_S), 1);
    return pid;
}
