/* test_call_blocking.c - blocking calls from threads (core/actor/call.c):
 * the reply and its payload, bad arguments, timeouts (a deferred or an
 * immediate reply after one is counted late), a deferred reply sent with
 * shoal_reply, a call its caller stops waiting for (shoal__runtime_call_until).
 *
 * Handlers never call CUnit: they record into atomics (some in call_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <string.h>

#include "actor/call.h"
#include "call_kit.h"
#include "sched/futex.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CL_WAIT_S)

/* ---- blocking calls --------------------------------------------------------- */

static void blocking_call_gets_the_reply(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
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
    CU_ASSERT_EQUAL(atomic_load(&cl_bad), 0);
    shoal_runtime_destroy(rt);
}

static void blocking_call_rejects_bad_arguments(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 0, 1000, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_ECHO, NULL, 3, 1000, &a), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, 0);
    shoal_runtime_destroy(rt);
}

/* The callee saved a C_DEFER call its caller then gave up on: told to
 * answer it now, its shoal_reply is refused (SHOAL_ENOPROC) and counted
 * late, once. */
static void late_answer_is_refused(shoal_runtime_t *rt, shoal_pid_t callee)
{
    CU_ASSERT_EQUAL(atomic_load(&cl_saved), 1);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, callee, M_ANSWER, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&cl_reply_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&cl_reply_rc), SHOAL_ENOPROC);
    /* shoal_reply has returned: a count it makes is already there. */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 1);
}

static void blocking_call_times_out(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_answer_t a;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_DEFER, NULL, 0, 50, &a), SHOAL_ETIMEDOUT);
    double took = shoal_test_now() - t0;
    CU_ASSERT(took >= 0.049);
    CU_ASSERT(took < 5.0);
    CU_ASSERT_PTR_NULL(a.data);
    late_answer_is_refused(rt, callee);
    shoal_runtime_destroy(rt);
}

/* An immediate reply that comes after the blocking caller timed out. */
static void immediate_reply_after_timeout_is_counted_late(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, callee, C_BLOCK, NULL, 0, 30, &a), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&cl_entered, CL_WAIT_S), 1);
    atomic_store(&cl_release, 1);
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
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call(rt, callee, C_DEFER_SELF, NULL, 0, 5000, &a),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    CU_ASSERT_EQUAL(a.type, M_ANSWER);
    CU_ASSERT_EQUAL(a.size, sizeof cl_answer_text);
    CU_ASSERT(a.data != NULL && memcmp(a.data, cl_answer_text, sizeof cl_answer_text) == 0);
    shoal_answer_release(&a);
    WAIT_UNTIL(atomic_load(&cl_reply_rc) != 12345);
    CU_ASSERT_EQUAL(atomic_load(&cl_reply_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    shoal_runtime_destroy(rt);
}

/* interrupted(): counts its asks; says true at the third. */
static int asks;
static bool third_ask(void *arg)
{
    (void)arg;
    return ++asks == 3;
}

/* interrupted() that counts its asks and never says true. */
static bool any_ask(void *arg)
{
    (void)arg;
    asks++;
    return false;
}

/* A caller's `interrupted` ends its wait: SHOAL_ESHUTDOWN after exactly
 * three asks (before the first sleep, then every SHOAL_ASK_EVERY_MS: the
 * callee never answers), long before its timeout; the answer that comes
 * after is late and counted. Asked when it never says true, a call
 * answered is answered. Without one, the call waits its timeout. */
static void call_until_stops_when_interrupted(void)
{
    shoal_pid_t callee;
    shoal_runtime_t *rt = cl_setup(&callee);
    shoal_answer_t a;
    asks = 0;
    double t0 = shoal_test_now();
    CU_ASSERT_EQUAL(
        shoal__runtime_call_until(rt, callee, C_DEFER, NULL, 0, 60000, third_ask, NULL, &a),
        SHOAL_ESHUTDOWN);
    double took = shoal_test_now() - t0;
    CU_ASSERT_EQUAL(asks, 3);
    CU_ASSERT(took >= 2 * SHOAL_ASK_EVERY_MS / 1e3 - 0.001); /* two slices */
    CU_ASSERT(took < 30.0);                                  /* not the 60 s timeout */
    CU_ASSERT_PTR_NULL(a.data);
    late_answer_is_refused(rt, callee);
    /* An answer in time, with an interrupted that never says true. */
    asks = 0;
    CU_ASSERT_EQUAL(shoal__runtime_call_until(rt, callee, C_ECHO, "ab", 2, 5000, any_ask, NULL, &a),
                    SHOAL_OK);
    CU_ASSERT(a.size == 2 && a.data != NULL && memcmp(a.data, "ba", 2) == 0);
    shoal_answer_release(&a);
    /* None: the timeout. */
    CU_ASSERT_EQUAL(shoal__runtime_call_until(rt, callee, C_DEFER, NULL, 0, 50, NULL, NULL, &a),
                    SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 1); /* the waiters are gone */
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
        {"a call given up when its caller is interrupted", call_until_stops_when_interrupted},
        {NULL, NULL},
    };
    return shoal_test_run("call_blocking", cases);
}
