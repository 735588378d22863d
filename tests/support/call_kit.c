/* call_kit.c - the call suites' callee (call_kit.h). */
#include "call_kit.h"

#include <time.h>

void cl_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

_Atomic shoal_pid_t cl_saved_from;
_Atomic shoal_ref_t cl_saved_ref;
atomic_int cl_saved, cl_reply_rc, cl_bad, cl_release, cl_entered;
atomic_int cl_rtcall_rc;

static void callee_reset(void)
{
    atomic_store(&cl_saved_from, SHOAL_PID_NONE);
    atomic_store(&cl_saved_ref, 0);
    atomic_store(&cl_saved, 0);
    atomic_store(&cl_reply_rc, 12345);
    atomic_store(&cl_bad, 0);
    atomic_store(&cl_release, 0);
    atomic_store(&cl_entered, 0);
    atomic_store(&cl_rtcall_rc, 12345);
}

cl_call_args_t cl_call_args;

const char cl_answer_text[] = "deferred answer";

static int callee_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CALL || msg->ref == 0 || msg->from == SHOAL_PID_NONE)
        atomic_fetch_add(&cl_bad, 1);
    switch (msg->type) {
    case C_ECHO: {
        unsigned char out[64];
        if (msg->size > sizeof out)
            return SHOAL_EINVAL;
        for (size_t i = 0; i < msg->size; i++)
            out[i] = ((const unsigned char *)msg->data)[msg->size - 1 - i];
        return shoal_reply_set(reply, C_ECHO + 100, out, msg->size);
    }
    case C_BIG: {
        static unsigned char big[4096];
        for (size_t i = 0; i < sizeof big; i++)
            big[i] = (unsigned char)(i * 7);
        return shoal_reply_set(reply, C_BIG, big, sizeof big);
    }
    case C_DEFER:
    case C_DEFER_SELF:
        atomic_store(&cl_saved_from, msg->from);
        atomic_store(&cl_saved_ref, msg->ref);
        atomic_store(&cl_saved, 1);
        if (msg->type == C_DEFER_SELF &&
            shoal_send(ctx, shoal_self(ctx), M_ANSWER, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&cl_bad, 1);
        return SHOAL_DEFER;
    case C_PANIC:
        shoal_panic(ctx, "test panic in handle_call");
    case C_ERROR:
        shoal_reply_set(reply, 1, "x", 1); /* replaced by the error */
        shoal_reply_error(reply, SHOAL_EBUSY);
        return 0;
    case C_FAIL:
        return 5;
    case C_BLOCK:
        atomic_store(&cl_entered, 1);
        shoal_test_wait_flag(&cl_release, CL_WAIT_S);
        return shoal_reply_set(reply, C_BLOCK, "late", 4);
    default:
        return SHOAL_EINVAL;
    }
}

static int callee_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == M_ANSWER) {
        int rc = shoal_reply(ctx, atomic_load(&cl_saved_from), atomic_load(&cl_saved_ref), M_ANSWER,
                             cl_answer_text, sizeof cl_answer_text);
        atomic_store(&cl_reply_rc, rc);
    } else if (msg->type == M_RTCALL) {
        shoal_answer_t a;
        atomic_store(&cl_rtcall_rc, shoal_runtime_call(shoal_ctx_runtime(ctx), shoal_self(ctx),
                                                       C_ECHO, NULL, 0, 100, &a));
    }
    return 0;
}

const shoal_behaviour_t cl_callee = {
    .name = "callee", .handle_message = callee_handle, .handle_call = callee_call};

shoal_runtime_t *cl_setup(shoal_pid_t *callee)
{
    callee_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    if (rt != NULL && shoal_runtime_spawn(rt, &cl_callee, NULL, NULL, callee) != SHOAL_OK) {
        shoal_runtime_destroy(rt);
        rt = NULL;
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    return rt;
}
