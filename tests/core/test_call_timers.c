/* test_call_timers.c - one call timer per actor (core/actor/call.c): calls
 * with deadlines out of order each time out once, earliest first; calls
 * answered in time never do.
 *
 * Handlers never call CUnit: they record into atomics (some in call_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include "call_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CL_WAIT_S)

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
            int rc = shoal_call(ctx, cl_call_args.callee, cl_call_args.type, NULL, 0,
                                mt_timeouts[i], &ref);
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
    if (msg->status != SHOAL_ETIMEDOUT || msg->from != cl_call_args.callee)
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
    cl_call_args = (cl_call_args_t){callee, type, 0};
    shoal_pid_t caller = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &caller), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, caller, M_GO, NULL, 0), SHOAL_OK);
    return caller;
}

static void calls_time_out_in_deadline_order(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_pid_t caller = mt_start(rt, callee, C_DEFER); /* never answered */
    WAIT_UNTIL(atomic_load(&mt_n) == 3);
    cl_sleep_ms(100); /* the fourth (5 s) must not come early */
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
    shoal_runtime_t *rt = cl_setup(&callee);
    mt_start(rt, callee, C_ECHO);
    WAIT_UNTIL(atomic_load(&mt_replies) == MT_CALLS);
    cl_sleep_ms(400); /* past every deadline but the last: the ticks find nothing */
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
        {"calls time out in deadline order, once each", calls_time_out_in_deadline_order},
        {"calls answered in time never time out", calls_answered_in_time_never_time_out},
        {NULL, NULL},
    };
    return shoal_test_run("call_timers", cases);
}
