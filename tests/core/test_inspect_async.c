/* test_inspect_async.c - inspection from an actor (actor/inspect.c,
 * actor/call.c): the asynchronous shoal_inspect (exactly one REPLY, or one
 * TIMEOUT when the target is blocked past it; a dead PID), and
 * shoal_runtime_inspect refused on a worker thread.
 *
 * A "gated" actor (inspect_kit.h) blocks inside a handler until the test
 * opens its gate; an "inspector" actor inspects on command and records the
 * notices that come back.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "inspect_kit.h"

/* ---- cases: from an actor ---------------------------------------------------------------- */

static void async_inspect_one_reply(void)
{
    ik_inspector_reset();
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    shoal_spawn_opts_t opts = {.mailbox_limit = 5};
    ik_spawn_with_inspector(rt, &ik_fields, &opts, &pid, &insp);
    ik_inspector_do(rt, insp, OP_ASYNC, pid, 300);
    CU_ASSERT_EQUAL(atomic_load(&ik_request_rc), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(atomic_load(&ik_request_ref), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ik_nnotices) >= 1, 10.0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ik_nnotices), 1);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_kind[0]), SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_status[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_ref[0]), atomic_load(&ik_request_ref));
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_from[0]), pid);
    char want[512];
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"fields\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":5,\"info\":{\"i\":-42,\"min\":-9223372036854775808,"
             "\"u\":18446744073709551615,\"t\":true,\"f\":false,\"s\":\"x\",\"n\":null,"
             "\"d\":0.5}}",
             ik_pid_text(pid));
    ik_same(ik_notice_json[0], want);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_size[0]), strlen(want) + 1); /* with the NUL */
    /* Past the timeout: the reply settled the call, no TIMEOUT follows. */
    struct timespec ts = {0, 500 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&ik_nnotices), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    shoal_runtime_destroy(rt);
}

static void async_inspect_times_out_on_a_blocked_target(void)
{
    shoal_pid_t pid, insp;
    shoal_runtime_t *rt = ik_blocked_with_inspector(&pid, &insp);
    double t0 = shoal_test_now();
    ik_inspector_do(rt, insp, OP_ASYNC, pid, 100);
    CU_ASSERT_EQUAL(atomic_load(&ik_request_rc), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ik_nnotices) >= 1, 10.0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ik_nnotices), 1);
    CU_ASSERT(shoal_test_now() - t0 >= 0.100);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_kind[0]), SHOAL_MSG_TIMEOUT);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_status[0]), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_ref[0]), atomic_load(&ik_request_ref));
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_size[0]), 0);
    /* The target answers once unblocked; that reply is late and dropped. */
    uint64_t late0 = shoal_test_stats(rt).replies_late;
    atomic_store(&ik_gate_open, 1);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).replies_late == late0 + 1, 10.0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, late0 + 1);
    CU_ASSERT_EQUAL(atomic_load(&ik_nnotices), 1);
    shoal_runtime_destroy(rt);
}

static void async_inspect_of_a_dead_pid(void)
{
    ik_inspector_reset();
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    ik_spawn_with_inspector(rt, &ik_plain, NULL, &pid, &insp);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_runtime_send(rt, pid, 1, NULL, 0) == SHOAL_ENOPROC, 10.0);
    ik_inspector_do(rt, insp, OP_ASYNC, pid, 50);
    CU_ASSERT_EQUAL(atomic_load(&ik_request_rc), SHOAL_ENOPROC);
    /* Nothing was sent, so nothing arrives: not even the timeout. */
    struct timespec ts = {0, 200 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&ik_nnotices), 0);
    shoal_runtime_destroy(rt);
}

static void blocking_inspect_on_a_worker_is_einval(void)
{
    ik_inspector_reset();
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    ik_spawn_with_inspector(rt, &ik_plain, NULL, &pid, &insp);
    ik_inspector_do(rt, insp, OP_BLOCKING, pid, 1000);
    CU_ASSERT_EQUAL(atomic_load(&ik_request_rc), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&ik_nnotices), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"async inspect: exactly one REPLY", async_inspect_one_reply},
        {"async inspect: a TIMEOUT when the target is blocked",
         async_inspect_times_out_on_a_blocked_target},
        {"async inspect of a dead PID", async_inspect_of_a_dead_pid},
        {"blocking inspect on a worker thread is EINVAL", blocking_inspect_on_a_worker_is_einval},
        {NULL, NULL},
    };
    return shoal_test_run("inspect_async", cases);
}
