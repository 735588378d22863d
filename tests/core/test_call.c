/* test_call.c - calls and replies (core/actor/call.c): blocking calls from
 * threads, asynchronous calls from actors, deferred replies, timeouts, late
 * replies, and the statuses a caller sees when the callee cannot answer.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define WAIT_S 20.0

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

enum {
    C_ECHO = 1,       /* reply: type + 100, payload reversed */
    C_BIG = 2,        /* reply: 4 KiB pattern */
    C_DEFER = 3,      /* return SHOAL_DEFER, remember (from, ref) */
    C_DEFER_SELF = 4, /* DEFER, then answer from a later message to self */
    C_PANIC = 5,      /* shoal_panic inside handle_call */
    C_ERROR = 6,      /* shoal_reply_error(SHOAL_EBUSY) */
    C_FAIL = 7,       /* return 5: the actor ends, caller sees SHOAL_EFAILED */
    C_BLOCK = 8,      /* wait for `release`, then answer at once */
    M_ANSWER = 20,    /* cast: answer the remembered call now */
    M_GO = 21,        /* cast to the async caller: make its call */
    M_RTCALL = 22,    /* cast: try shoal_runtime_call from a worker */
};

/* ---- the callee ----------------------------------------------------------- */

static _Atomic shoal_pid_t callee_saved_from;
static _Atomic shoal_ref_t callee_saved_ref;
static atomic_int callee_saved, callee_reply_rc, callee_bad, callee_release, callee_entered;
static atomic_int callee_rtcall_rc;

static void callee_reset(void)
{
    atomic_store(&callee_saved_from, SHOAL_PID_NONE);
    atomic_store(&callee_saved_ref, 0);
    atomic_store(&callee_saved, 0);
    atomic_store(&callee_reply_rc, 12345);
    atomic_store(&callee_bad, 0);
    atomic_store(&callee_release, 0);
    atomic_store(&callee_entered, 0);
    atomic_store(&callee_rtcall_rc, 12345);
}

static const char answer_text[] = "deferred answer";

static int callee_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)state;
    if (msg->kind != SHOAL_MSG_CALL || msg->ref == 0 || msg->from == SHOAL_PID_NONE)
        atomic_fetch_add(&callee_bad, 1);
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
        atomic_store(&callee_saved_from, msg->from);
        atomic_store(&callee_saved_ref, msg->ref);
        atomic_store(&callee_saved, 1);
        if (msg->type == C_DEFER_SELF &&
            shoal_send(ctx, shoal_self(ctx), M_ANSWER, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&callee_bad, 1);
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
        atomic_store(&callee_entered, 1);
        shoal_test_wait_flag(&callee_release, WAIT_S);
        return shoal_reply_set(reply, C_BLOCK, "late", 4);
    default:
        return SHOAL_EINVAL;
    }
}

static int callee_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == M_ANSWER) {
        int rc = shoal_reply(ctx, atomic_load(&callee_saved_from), atomic_load(&callee_saved_ref),
                             M_ANSWER, answer_text, sizeof answer_text);
        atomic_store(&callee_reply_rc, rc);
    } else if (msg->type == M_RTCALL) {
        shoal_answer_t a;
        atomic_store(&callee_rtcall_rc, shoal_runtime_call(shoal_ctx_runtime(ctx), shoal_self(ctx),
                                                           C_ECHO, NULL, 0, 100, &a));
    }
    return 0;
}

static const shoal_behaviour_t callee_beh = {
    .name = "callee", .handle_message = callee_handle, .handle_call = callee_call};

static int no_call_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}
static const shoal_behaviour_t no_call_beh = {.name = "no-call", .handle_message = no_call_handle};

static shoal_runtime_t *setup(shoal_pid_t *callee)
{
    callee_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    if (rt != NULL && shoal_runtime_spawn(rt, &callee_beh, NULL, NULL, callee) != SHOAL_OK) {
        shoal_runtime_destroy(rt);
        return NULL;
    }
    return rt;
}

/* ---- blocking calls --------------------------------------------------------- */

static void blocking_call_gets_the_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    memset(&a, 0xff, sizeof a);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_ECHO, "abcdef", 6, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, C_ECHO + 100);
    CU_ASSERT_EQUAL(a.size, 6);
    CU_ASSERT(a.data != NULL && memcmp(a.data, "fedcba", 6) == 0);
    shoal_answer_release(&a);
    CU_ASSERT_PTR_NULL(a.data);
    shoal_answer_release(&a); /* safe on a released (zeroed) answer */

    /* A reply larger than the envelope. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_BIG, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.size, 4096);
    int bad = 0;
    for (size_t i = 0; i < a.size && a.data != NULL; i++)
        bad += ((const unsigned char *)a.data)[i] != (unsigned char)(i * 7);
    CU_ASSERT_EQUAL(bad, 0);
    shoal_answer_release(&a);

    /* An empty reply. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.size, 0);
    CU_ASSERT_PTR_NULL(a.data);
    shoal_answer_release(&a);

    /* Many in a row: each waiter record is returned. */
    for (int i = 0; i < 1000; i++) {
        int v = i;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_ECHO, &v, 1, 5000, &a), SHOAL_OK);
        CU_ASSERT_EQUAL(((const unsigned char *)a.data)[0], (unsigned char)i);
        shoal_answer_release(&a);
    }
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 1); /* only the callee: waiters are gone */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    CU_ASSERT_EQUAL(atomic_load(&callee_bad), 0);
    shoal_runtime_destroy(rt);
}

static void blocking_call_rejects_bad_arguments(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 0, 1000, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 3, 1000, &a), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 0);
    shoal_runtime_destroy(rt);
}

static void blocking_call_times_out(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_DEFER, NULL, 0, 50, &a), SHOAL_ETIMEDOUT);
    double took = shoal_test_now() - t0;
    CU_ASSERT(took >= 0.049);
    CU_ASSERT(took < 5.0);
    CU_ASSERT_PTR_NULL(a.data);
    CU_ASSERT_EQUAL(atomic_load(&callee_saved), 1);
    /* The callee answers after the caller gave up: refused, and counted. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_ANSWER, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&callee_reply_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&callee_reply_rc), SHOAL_ENOPROC);
    /* shoal_reply has returned: a count it makes is already there. */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 1);
    shoal_runtime_destroy(rt);
}

/* An immediate reply that comes after the blocking caller timed out. */
static void immediate_reply_after_timeout_is_counted_late(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_BLOCK, NULL, 0, 30, &a), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&callee_entered, WAIT_S), 1);
    atomic_store(&callee_release, 1);
    WAIT_UNTIL(shoal_test_stats(rt).replies_late == 1 && shoal_test_stats(rt).msgs_handled == 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_handled, 1);
    /* The callee lives on and answers the next one. */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_BLOCK, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.size, 4);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 1);
    shoal_runtime_destroy(rt);
}

static void deferred_reply_with_shoal_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_DEFER_SELF, NULL, 0, 5000, &a),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, M_ANSWER);
    CU_ASSERT_EQUAL(a.size, sizeof answer_text);
    CU_ASSERT(a.data != NULL && memcmp(a.data, answer_text, sizeof answer_text) == 0);
    shoal_answer_release(&a);
    WAIT_UNTIL(atomic_load(&callee_reply_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&callee_reply_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    shoal_runtime_destroy(rt);
}

static void callee_without_handle_call_answers_enotsup(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &no_call_beh, NULL, NULL, &pid), SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, pid, 1, "x", 1, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(a.size, 0);
    shoal_answer_release(&a);
    /* ... and lives on. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

static void call_to_dead_pid_is_enoproc(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, callee), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_live == 0);
    shoal_answer_t a;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 0, 5000, &a), SHOAL_ENOPROC);
    CU_ASSERT(shoal_test_now() - t0 < 1.0); /* at once, not after the timeout */
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, SHOAL_PID_NONE, C_ECHO, NULL, 0, 5000, &a),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_noproc, 2);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 0);
    shoal_runtime_destroy(rt);
}

static void callee_panic_answers_epanic(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_PANIC, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EPANIC);
    CU_ASSERT_EQUAL(a.size, 0);
    shoal_answer_release(&a);
    /* The callee ended. */
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 1);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, callee) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 0, 5000, &a), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

static void callee_error_statuses(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_ERROR, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EBUSY);
    CU_ASSERT_EQUAL(a.size, 0);
    shoal_answer_release(&a);
    /* An unknown type: handle_call returns SHOAL_EINVAL, which is the
     * answer's status and ends the callee. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, 999, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EINVAL);
    shoal_answer_release(&a);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, callee) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 1);

    /* A positive return ends the callee; the caller sees SHOAL_EFAILED. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &callee_beh, NULL, NULL, &callee), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_FAIL, NULL, 0, 5000, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EFAILED);
    shoal_answer_release(&a);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == 2);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 2);
    shoal_runtime_destroy(rt);
}

static void runtime_call_from_a_worker_is_einval(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_RTCALL, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&callee_rtcall_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&callee_rtcall_rc), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 1); /* the call was never sent */
    shoal_runtime_destroy(rt);
}

/* ---- asynchronous calls from an actor ------------------------------------------ */

typedef struct {
    shoal_pid_t callee;
    uint32_t type;
    uint64_t timeout_ms;
} acall_args_t;

static _Atomic shoal_ref_t ac_ref;
static atomic_int ac_call_rc, ac_replies, ac_timeouts, ac_other, ac_ref_bad, ac_status;
static atomic_int ac_payload_ok, ac_from_ok;
static shoal_pid_t ac_callee; /* set before the caller is spawned */
static acall_args_t ac_args;

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
        int rc = shoal_call(ctx, ac_args.callee, ac_args.type, "xyz", 3, ac_args.timeout_ms, &ref);
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
        atomic_store(&ac_from_ok, msg->from == ac_args.callee);
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
    ac_args = (acall_args_t){callee, type, timeout_ms};
    shoal_pid_t caller = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &ac_beh, NULL, NULL, &caller), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, caller, M_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ac_call_rc) != 12345);
    return caller;
}

static void async_call_gets_exactly_one_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    ac_callee = callee;
    ac_start(rt, callee, C_ECHO, 200);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    CU_ASSERT(atomic_load(&ac_ref) != 0);
    WAIT_UNTIL(atomic_load(&ac_replies) == 1);
    /* Past the call's timeout: its timer was cancelled by the reply. */
    sleep_ms(400);
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
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
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
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t caller = ac_start(rt, callee, C_DEFER, 50);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&ac_timeouts) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 1);
    CU_ASSERT_EQUAL(atomic_load(&ac_status), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_ref_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&callee_saved), 1);
    CU_ASSERT_EQUAL(atomic_load(&callee_saved_from), caller);
    CU_ASSERT_EQUAL(atomic_load(&callee_saved_ref), atomic_load(&ac_ref));
    /* Now the callee answers: the caller is alive, so delivery succeeds,
     * but the call is settled: not passed to the handler, counted late. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_ANSWER, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).replies_late == 1);
    CU_ASSERT_EQUAL(atomic_load(&callee_reply_rc), SHOAL_OK);
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
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, callee), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, callee) == SHOAL_ENOPROC);
    ac_start(rt, callee, C_ECHO, 30);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_ENOPROC);
    sleep_ms(200); /* past the timeout the failed call must not have armed */
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
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t caller = ac_start(rt, callee, C_DEFER, 100);
    CU_ASSERT_EQUAL(atomic_load(&ac_call_rc), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&callee_saved) == 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, caller), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, caller) == SHOAL_ENOPROC);
    sleep_ms(250); /* the timeout would have fired by now */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    CU_ASSERT_EQUAL(atomic_load(&ac_timeouts), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_ANSWER, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&callee_reply_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&callee_reply_rc), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(atomic_load(&ac_replies), 0);
    shoal_runtime_destroy(rt);
}

/* ---- one call timer per actor ---------------------------------------------
 * Calls with deadlines out of order each time out once, earliest first, from
 * their callee; calls answered in time never do; the tick that finds nothing
 * due says nothing to the behaviour. */

#define MT_CALLS 4
static const uint64_t mt_timeouts[MT_CALLS] = {300, 60, 180, 5000};
static _Atomic shoal_ref_t mt_ref[MT_CALLS];
static atomic_int mt_order[MT_CALLS]; /* position its TIMEOUT came in, -1: none */
static atomic_int mt_n, mt_rc, mt_bad, mt_replies, mt_other;
static _Atomic uint64_t mt_at[MT_CALLS]; /* ns since the calls went */
static uint64_t mt_t0;

static int mt_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == M_GO) {
        mt_t0 = (uint64_t)(shoal_test_now() * 1e9);
        for (int i = 0; i < MT_CALLS; i++) {
            shoal_ref_t ref = 0;
            int rc = shoal_call(ctx, ac_args.callee, ac_args.type, NULL, 0, mt_timeouts[i], &ref);
            if (rc != SHOAL_OK)
                atomic_store(&mt_rc, rc);
            atomic_store(&mt_ref[i], ref);
        }
        return 0;
    }
    if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_fetch_add(&mt_replies, 1);
        return 0;
    }
    if (msg->kind != SHOAL_MSG_TIMEOUT) {
        atomic_fetch_add(&mt_other, 1);
        return 0;
    }
    if (msg->status != SHOAL_ETIMEDOUT || msg->from != ac_args.callee)
        atomic_fetch_add(&mt_bad, 1);
    for (int i = 0; i < MT_CALLS; i++) {
        if (msg->ref == atomic_load(&mt_ref[i])) {
            if (atomic_load(&mt_order[i]) != -1)
                atomic_fetch_add(&mt_bad, 1); /* twice */
            atomic_store(&mt_order[i], atomic_fetch_add(&mt_n, 1));
            atomic_store(&mt_at[i], (uint64_t)(shoal_test_now() * 1e9) - mt_t0);
            return 0;
        }
    }
    atomic_fetch_add(&mt_bad, 1); /* no such call */
    return 0;
}

static shoal_pid_t mt_start(shoal_runtime_t *rt, shoal_pid_t callee, uint32_t type)
{
    static const shoal_behaviour_t beh = {.name = "multi-caller", .handle_message = mt_handle};
    for (int i = 0; i < MT_CALLS; i++) {
        atomic_store(&mt_ref[i], 0);
        atomic_store(&mt_order[i], -1);
        atomic_store(&mt_at[i], 0);
    }
    atomic_store(&mt_n, 0);
    atomic_store(&mt_rc, SHOAL_OK);
    atomic_store(&mt_bad, 0);
    atomic_store(&mt_replies, 0);
    atomic_store(&mt_other, 0);
    ac_args = (acall_args_t){callee, type, 0};
    shoal_pid_t caller = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &caller), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, caller, M_GO, NULL, 0), SHOAL_OK);
    return caller;
}

static void calls_time_out_in_deadline_order(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t caller = mt_start(rt, callee, C_DEFER); /* never answered */
    WAIT_UNTIL(atomic_load(&mt_n) == 3);
    sleep_ms(100); /* the fourth (5 s) must not come early */
    CU_ASSERT_EQUAL(atomic_load(&mt_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&mt_n), 3);
    CU_ASSERT_EQUAL(atomic_load(&mt_order[1]), 0); /* 60 ms */
    CU_ASSERT_EQUAL(atomic_load(&mt_order[2]), 1); /* 180 ms */
    CU_ASSERT_EQUAL(atomic_load(&mt_order[0]), 2); /* 300 ms */
    CU_ASSERT_EQUAL(atomic_load(&mt_order[3]), -1);
    for (int i = 0; i < 3; i++) /* never before its deadline */
        CU_ASSERT(atomic_load(&mt_at[i]) >= mt_timeouts[i] * 1000000u);
    CU_ASSERT_EQUAL(atomic_load(&mt_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&mt_replies), 0);
    CU_ASSERT_EQUAL(atomic_load(&mt_other), 0);
    /* Ended with the 5 s call pending: its timer goes with it. */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, caller), SHOAL_OK);
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, caller) == SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    shoal_runtime_destroy(rt);
}

static void calls_answered_in_time_never_time_out(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = setup(&callee);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    mt_start(rt, callee, C_ECHO);
    WAIT_UNTIL(atomic_load(&mt_replies) == MT_CALLS);
    sleep_ms(400); /* past every deadline but the last: the ticks find nothing */
    CU_ASSERT_EQUAL(atomic_load(&mt_replies), MT_CALLS);
    CU_ASSERT_EQUAL(atomic_load(&mt_n), 0);
    CU_ASSERT_EQUAL(atomic_load(&mt_other), 0);
    CU_ASSERT_EQUAL(atomic_load(&mt_bad), 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).timer_refused, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"blocking call gets the reply", blocking_call_gets_the_reply},
        {"blocking call rejects bad arguments", blocking_call_rejects_bad_arguments},
        {"blocking call times out; a late deferred reply is counted", blocking_call_times_out},
        {"immediate reply after timeout is counted late",
         immediate_reply_after_timeout_is_counted_late},
        {"deferred reply with shoal_reply", deferred_reply_with_shoal_reply},
        {"callee without handle_call answers ENOTSUP", callee_without_handle_call_answers_enotsup},
        {"call to a dead PID is ENOPROC", call_to_dead_pid_is_enoproc},
        {"callee panic answers EPANIC", callee_panic_answers_epanic},
        {"callee error statuses", callee_error_statuses},
        {"runtime_call from a worker is EINVAL", runtime_call_from_a_worker_is_einval},
        {"async call gets exactly one reply", async_call_gets_exactly_one_reply},
        {"async call error status arrives as a reply", async_call_error_status_arrives_as_reply},
        {"async call times out once; late reply dropped",
         async_call_times_out_once_and_late_reply_is_dropped},
        {"async call to a dead PID sends nothing", async_call_to_dead_pid_sends_nothing},
        {"async caller gone before the reply", async_caller_gone_before_reply},
        {"calls time out in deadline order, once each", calls_time_out_in_deadline_order},
        {"calls answered in time never time out", calls_answered_in_time_never_time_out},
        {NULL, NULL},
    };
    return shoal_test_run("call", cases);
}
