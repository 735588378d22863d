/* call_kit.h - what the call suites share (test_call_blocking,
 * test_call_failures, test_call_async, test_call_timers): the call and
 * message types, a callee that answers each type its own way and records
 * what it did, a runtime with one callee, what a calling actor calls, and
 * a sleep.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them.
 */
#ifndef SHOAL_TEST_CALL_KIT_H
#define SHOAL_TEST_CALL_KIT_H

#include "support.h"

#define CL_WAIT_S 20.0

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

/* ---- the callee ----------------------------------------------------------- *
 *
 * It remembers a deferred call's caller and ref (cl_saved_from,
 * cl_saved_ref, then cl_saved) and answers it on M_ANSWER with
 * cl_answer_text (shoal_reply's code in cl_reply_rc); C_BLOCK raises
 * cl_entered and waits for cl_release; M_RTCALL records shoal_runtime_call's
 * code from a worker in cl_rtcall_rc. A call that does not look like one
 * counts in cl_bad. */

extern _Atomic shoal_pid_t cl_saved_from;
extern _Atomic shoal_ref_t cl_saved_ref;
extern atomic_int cl_saved, cl_reply_rc, cl_bad, cl_release, cl_entered;
extern atomic_int cl_rtcall_rc;
extern const char cl_answer_text[16];
extern const shoal_behaviour_t cl_callee;

/* The callee's record cleared, a runtime of 2 threads and one callee
 * (*callee); asserts (fatally) that both were made. */
shoal_runtime_t *cl_setup(shoal_pid_t *callee);

/* What a calling actor calls (set before it is spawned). */
typedef struct {
    shoal_pid_t callee;
    uint32_t type;
    uint64_t timeout_ms;
} cl_call_args_t;

extern cl_call_args_t cl_call_args;

void cl_sleep_ms(unsigned ms);

#endif
