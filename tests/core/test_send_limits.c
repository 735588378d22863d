/* test_send_limits.c - what a send refuses (core/actor/send.c): exact
 * mailbox limits (SHOAL_EFULL counted at the limit, a limit of 1),
 * runtime.max_queued bounding unbounded mailboxes, and bad arguments.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics (some in send_kit.h), and the test thread asserts after
 * synchronising on them.
 */
#include "send_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, SK_WAIT_S)

static void efull_counts_are_exact_at_the_limit(void)
{
    enum { L = 16, N = 100 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid = sk_spawn_blocked(rt, L);
    /* The blocking message was popped before its handler ran: L free places. */
    int accepted = 0, refused = 0, other = 0, first_refused = -1;
    for (int i = 0; i < N; i++) {
        int rc = shoal_runtime_send(rt, pid, T_DATA, NULL, 0);
        if (rc == SHOAL_OK) {
            accepted++;
        } else if (rc == SHOAL_EFULL) {
            if (first_refused < 0)
                first_refused = i;
            refused++;
        } else {
            other++;
        }
    }
    CU_ASSERT_EQUAL(accepted, L);
    CU_ASSERT_EQUAL(refused, N - L);
    CU_ASSERT_EQUAL(accepted + refused, N);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(first_refused, L); /* nothing is popped meanwhile */
    /* A blocking call is a user message too: refused the same way. */
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pid, T_DATA, NULL, 0, 1000, &ans), SHOAL_EFULL);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.msgs_refused, (uint64_t)(N - L) + 1);
    CU_ASSERT_EQUAL(s.msgs_sent, (uint64_t)L + 1); /* + the blocking message */
    /* A priority message has no limit. */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_CTRL, NULL, 0), SHOAL_OK);

    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == L && atomic_load(&sk_ctrl_seen));
    CU_ASSERT_EQUAL(atomic_load(&sk_data), L);
    CU_ASSERT_EQUAL(atomic_load(&sk_ctrl_seen), 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_ctrl_after), 0);
    /* Drained: room again, and exactly the accepted ones were handled. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_handled == (uint64_t)L + 2);
    s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.msgs_handled, (uint64_t)L + 2); /* block + L + ctrl */
    CU_ASSERT_EQUAL(s.msgs_dropped, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&sk_data) == L + 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), L + 1);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_refused, (uint64_t)(N - L) + 1);
    shoal_runtime_destroy(rt);
}

/* max_queued bounds what unbounded mailboxes hold together: past it a send
 * into one is refused with SHOAL_EBUSY (counted), within 10 ms; bounded
 * mailboxes and priority sends are not affected; once drained, accepted. */
static void max_queued_bounds_unbounded_mailboxes(void)
{
    enum { MAXQ = 100 };
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 2;
    o.max_queued = MAXQ;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    sk_reset();
    shoal_pid_t u = sk_spawn_blocked(rt, 0); /* unbounded */
    shoal_pid_t b = SHOAL_PID_NONE;
    shoal_spawn_opts_t so = {.mailbox_limit = 1000};
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &sk_blocker, NULL, &so, &b), SHOAL_OK);
    for (int i = 0; i < MAXQ; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, u, T_DATA, NULL, 0), SHOAL_OK);
    /* Refused once the timer thread has summed them (10 ms). */
    int rc = SHOAL_OK, sent = 0;
    double end = shoal_test_now() + SK_WAIT_S;
    while (rc == SHOAL_OK && shoal_test_now() < end) {
        rc = shoal_runtime_send(rt, u, T_DATA, NULL, 0);
        sent += rc == SHOAL_OK;
        if (rc == SHOAL_OK)
            shoal_test_nap();
    }
    CU_ASSERT_EQUAL(rc, SHOAL_EBUSY);
    shoal_runtime_stats_t st = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(st.refused_queued, 1);
    CU_ASSERT_EQUAL(st.msgs_refused, 1); /* the same refusal (metrics: queue_limit) */
    /* (the T_BLOCK it sits in went in and out first) */
    CU_ASSERT_EQUAL(st.unbounded_pushed, (uint64_t)(1 + MAXQ + sent));
    CU_ASSERT_EQUAL(st.unbounded_popped, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, T_DATA, NULL, 0), SHOAL_OK); /* bounded: fine */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, u, T_CTRL, NULL, 0), SHOAL_OK);
    /* Drained: accepted again. */
    atomic_store(&sk_release, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sk_data) == MAXQ + sent + 1, SK_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), MAXQ + sent + 1);
    rc = SHOAL_EBUSY;
    end = shoal_test_now() + SK_WAIT_S;
    while (rc == SHOAL_EBUSY && shoal_test_now() < end)
        if ((rc = shoal_runtime_send(rt, u, T_DATA, NULL, 0)) == SHOAL_EBUSY)
            shoal_test_nap();
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    end = shoal_test_now() + SK_WAIT_S;
    do
        st = shoal_test_stats(rt);
    while (st.unbounded_popped != st.unbounded_pushed && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.unbounded_popped, st.unbounded_pushed);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    shoal_runtime_destroy(rt);
}

static void limit_one_accepts_exactly_one(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid = sk_spawn_blocked(rt, 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 0), SHOAL_OK);
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 0), SHOAL_EFULL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_refused, 10);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == 1 && shoal_test_stats(rt).msgs_handled == 2);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_handled, 2);
    shoal_runtime_destroy(rt);
}

static void send_rejects_bad_arguments(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sk_blocker, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_DATA, NULL, 5), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pid, T_DATA, NULL, 5), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 0);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 0);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"EFULL counts are exact at the limit", efull_counts_are_exact_at_the_limit},
        {"limit 1 accepts exactly one", limit_one_accepts_exactly_one},
        {"max_queued bounds unbounded mailboxes", max_queued_bounds_unbounded_mailboxes},
        {"send rejects bad arguments", send_rejects_bad_arguments},
        {NULL, NULL},
    };
    return shoal_test_run("send_limits", cases);
}
