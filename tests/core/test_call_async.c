/* test_call_async.c - asynchronous calls from actors (core/actor/call.c):
 * exactly one reply, an error status arriving as a reply, one TIMEOUT and
 * the late reply dropped, a dead PID (nothing sent), a caller gone before
 * the reply.
 *
 * Handlers never call CUnit: they record into atomics (some in call_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <string.h>

#include "call_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CL_WAIT_S)

/* ---- asynchronous calls from an actor ------------------------------------------ */

static _Atomic shoal_ref_t ac_ref;
static atomic_int ac_call_rc, ac_replies, ac_timeouts, ac_other, ac_ref_bad, ac_status;
static atomic_int ac_payload_ok, ac_from_ok;
static shoal_pid_t ac_callee; /* set before the caller is spawned */

static void ac_reset(void)
{
    atomic_store(&ac_ref, 0);
    atomic_store(&ac_call_rc, 12345);
    atomic_store(&ac_replies, 0);
    atomic_store(&ac_timeouts, 0);
    atomic_store(&ac_other, 0);
    atomic_store(&ac_ref_bad, 0);
    atomic_store(&ac_status, 12345);
    atomic_store(&ac_payload_ok, 0);
    atomic_store(&ac_from_ok, 0);
}

static int ac_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == M_GO) {
        shoal_ref_t ref = 0;
        int rc = shoal_call(ctx, cl_call_args.callee, cl_call_args.type, "xyz", 3,
                            cl_call_args.timeout_ms, &ref);
        atomic_store(&ac_ref, ref);
        atomic_store(&ac_call_rc, rc);
        return 0;
    }
    if (msg->ref != atomic_load(&ac_ref))
        atomic_fetch_add(&ac_ref_bad, 1);
    if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_store(&ac_status, msg->status);
        atomic_store(&ac_payload_ok, msg->type == C_ECHO + 100 && msg->size == 3 &&
                                         memcmp(msg->data, "zyx", 3) == 0);
        atomic_store(&ac_from_ok, msg->from == cl_call_args.callee);
        atomic_fetch_add(&ac_replies, 1);
    } else if (msg->kind == SHOAL_MSG_TIMEOUT) {
        atomic_store(&ac_status, msg->status);
        atomic_fetch_add(&ac_timeouts, 1);
    } else {
        atomic_fetch_add(&ac_other, 1);
    }
    return 0;
}

static const shoal_behaviour_t ac_beh = {.name = "async-caller", .handle_message = ac_handle};

static shoal_pid_t ac_start(shoal_runtime_t *rt, shoal_pid_t callee, uint32_t type,
                            uint64_t timeout_ms)
{
    ac_reset();
    cl_call_args = (cl_call_args_t){callee, type, timeout_ms};
    shoal_pid_t caller = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &ac_beh, NULL, NULL, &caller), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, caller, M_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ac_call_rc) != 12345);
    return caller;
}

static void async_call_gets_exactly_one_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    ac_callee = callee;
    ac_start(rt, callee, C_ECHO, 200);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    CU_ASSERT(atomic_load(&ac_ref) != 0);
    WAIT_UNTIL(atomic_load(&ac_replies) == 1);
    /* Past the call's timeout: its timer was cancelled by the reply. */
    cl_sleep_ms(400);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_other), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_ref_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_status), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&ac_payload_ok), 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_from_ok), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    shoal_runtime_destroy(rt);
}

static void async_call_error_status_arrives_as_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    ac_start(rt, callee, C_ERROR, 5000);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ac_replies) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_status), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_ref_bad), 0);
    shoal_runtime_destroy(rt);
}

static void async_call_times_out_once_and_late_reply_is_dropped(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_pid_t caller = ac_start(rt, callee, C_DEFER, 50);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ac_timeouts) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_status), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_ref_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&cl_saved), 1);
    CU_ASSERT_EQUAL(atomic_load(&cl_saved_from), caller);
    CU_ASSERT_EQUAL(atomic_load(&cl_saved_ref), atomic_load(&ac_ref));
    /* Now the callee answers: the caller is alive, so delivery succeeds,
     * but the call is settled: not passed to the handler, counted late. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_ANSWER, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).replies_late == 1);
    CU_ASSERT_EQUAL(atomic_load(&cl_reply_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 1);
    /* The caller is still consistent: handles one more message in order. */
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, caller, 1, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_other), 0);
    shoal_runtime_destroy(rt);
}

static void async_call_to_dead_pid_sends_nothing(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, callee), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, callee) == SHOAL_ENOPROC);
    ac_start(rt, callee, C_ECHO, 30);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_ENOPROC);
    cl_sleep_ms(200); /* past the timeout the failed call must not have armed */
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_other), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_noproc, 1);
    shoal_runtime_destroy(rt);
}

/* The caller ends while its call is pending: the timer is cancelled and the
 * reply finds it gone. */
static void async_caller_gone_before_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_pid_t caller = ac_start(rt, callee, C_DEFER, 100);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cl_saved) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, caller), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, caller) == SHOAL_ENOPROC);
    cl_sleep_ms(250); /* the timeout would have fired by now */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_ANSWER, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cl_reply_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&cl_reply_rc), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"async call gets exactly one reply", async_call_gets_exactly_one_reply},
        {"async call error status arrives as a reply", async_call_error_status_arrives_as_reply},
        {"async call times out once; late reply dropped",
         async_call_times_out_once_and_late_reply_is_dropped},
        {"async call to a dead PID sends nothing", async_call_to_dead_pid_sends_nothing},
        {"async caller gone before the reply", async_caller_gone_before_reply},
        {NULL, NULL},
    };
    return shoal_test_run("call_async", cases);
}
