/* test_inspect_mailbox.c - inspection and the mailbox (actor/inspect.c, its
 * requests in actor/call.c and actor/actor.c): mailbox_depth while the
 * actor is blocked, mailbox_limit null when unbounded; the request
 * overtaking 1,000 queued messages.
 *
 * A "gated" actor (inspect_kit.h) blocks inside a handler until the test
 * opens its gate, so what is queued meanwhile is known exactly.
 */
#include <stdio.h>

#include "inspect_kit.h"
#include "pool_kit.h"

/* ---- cases: the mailbox --------------------------------------------------------------- */

static void depth_is_the_queued_count_while_blocked(void)
{
    ik_gate_reset();
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    shoal_spawn_opts_t opts = {.mailbox_limit = 10};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ik_gated, NULL, &opts, &pid), SHOAL_OK);
    ik_block(rt, pid, TYPE_BLOCK);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, TYPE_WORK, &i, sizeof i), SHOAL_OK);
    ik_helper_t h;
    ik_helper_start(&h, rt, pid);
    atomic_store(&ik_gate_open, 1);
    CU_ASSERT_EQUAL(pthread_join(h.thread, NULL), 0);
    CU_ASSERT_EQUAL(h.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(h.status, SHOAL_OK);
    char want[256];
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"gated\",\"mailbox_depth\":7,"
             "\"mailbox_limit\":10,\"info\":{\"handled\":0}}",
             ik_pid_text(pid));
    ik_same(h.json, want);
    /* Once they are handled: empty. */
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ik_handled) == 7, 10.0);
    char json[256];
    int status;
    CU_ASSERT_EQUAL(ik_inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    pk_has(json, "\"mailbox_depth\":0,\"mailbox_limit\":10,\"info\":{\"handled\":7}}");
    shoal_runtime_destroy(rt);
}

static void answered_before_1000_queued_messages(void)
{
    shoal_pid_t pid, insp;
    shoal_runtime_t *rt = ik_blocked_with_inspector(&pid, &insp);
    int bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += shoal_runtime_send(rt, pid, TYPE_WORK, &i, sizeof i) != SHOAL_OK;
    CU_ASSERT_EQUAL(bad, 0);
    /* The request goes in after all of them... */
    ik_inspector_do(rt, insp, OP_ASYNC, pid, 10000);
    CU_ASSERT_EQUAL(atomic_load(&ik_request_rc), SHOAL_OK);
    atomic_store(&ik_gate_open, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ik_nnotices) == 1, 10.0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ik_nnotices), 1);
    /* ...and is answered before any of them. */
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_kind[0]), SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(atomic_load(&ik_notice_status[0]), SHOAL_OK);
    char want[256];
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"gated\",\"mailbox_depth\":1000,"
             "\"mailbox_limit\":null,\"info\":{\"handled\":0}}",
             ik_pid_text(pid));
    ik_same(ik_notice_json[0], want);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ik_handled) == 1000, 10.0);
    CU_ASSERT_EQUAL(atomic_load(&ik_handled), 1000);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"mailbox_depth is the queued count while blocked",
         depth_is_the_queued_count_while_blocked},
        {"answered before 1,000 queued messages", answered_before_1000_queued_messages},
        {NULL, NULL},
    };
    return shoal_test_run("inspect_mailbox", cases);
}
