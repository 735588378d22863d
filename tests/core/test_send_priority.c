/* test_send_priority.c - high-priority delivery (core/actor/send.c): a
 * priority message overtaking 10,000 queued ones, and priority messages
 * among themselves FIFO and never refused as full.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics (some in send_kit.h), and the test thread asserts after
 * synchronising on them.
 */
#include "send_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, SK_WAIT_S)

/* ---- priority --------------------------------------------------------------- */

static void priority_overtakes_ten_thousand_queued(void)
{
    enum { N = 10000 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid = sk_spawn_blocked(rt, 0);
    for (long i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, &i, sizeof i), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_CTRL, NULL, 0), SHOAL_OK);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == N);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), N);
    CU_ASSERT_EQUAL(atomic_load(&sk_ctrl_seen), 1);
    /* The system mailbox is checked before every user message. */
    int after = atomic_load(&sk_ctrl_after);
    CU_ASSERT(after >= 0 && after <= 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_ctrl_flags), (int)SHOAL_MSG_PRIORITY);
    CU_ASSERT_EQUAL(atomic_load(&sk_data_prio), 0); /* user messages carry no flag */
    CU_ASSERT_EQUAL(atomic_load(&sk_order_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&sk_last_index), N - 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    shoal_runtime_destroy(rt);
}

/* Priority messages from one sender keep their order too, and a full user
 * mailbox does not refuse them. */
static void priority_is_fifo_and_never_full(void)
{
    enum { N = 500 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid = sk_spawn_blocked(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_CTRL, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_CTRL, NULL, 0), SHOAL_EFULL);
    for (long i = 0; i < N; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_DATA, &i, sizeof i), SHOAL_OK);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == N && atomic_load(&sk_ctrl_seen));
    CU_ASSERT_EQUAL(atomic_load(&sk_data), N);
    CU_ASSERT_EQUAL(atomic_load(&sk_data_prio), N);
    CU_ASSERT_EQUAL(atomic_load(&sk_order_bad), 0);
    /* The queued user message ran after every priority one. */
    CU_ASSERT_EQUAL(atomic_load(&sk_ctrl_after), N);
    CU_ASSERT_EQUAL(atomic_load(&sk_ctrl_flags), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"priority overtakes 10,000 queued", priority_overtakes_ten_thousand_queued},
        {"priority is FIFO and never full", priority_is_fifo_and_never_full},
        {NULL, NULL},
    };
    return shoal_test_run("send_priority", cases);
}
