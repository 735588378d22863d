/* inspect_kit.h - what the inspect suites share (test_inspect_json,
 * test_inspect_mailbox, test_inspect_errors, test_inspect_async): a
 * runtime that keeps its log, an exact-string check, a PID as the answer
 * writes it, a blocking inspect that checks the answer's framing, the plain
 * and fields behaviours, the gated actor, the inspector actor, and a thread
 * that inspects.
 *
 * Handlers never call CUnit: they record into the atomics below; the test
 * thread asserts after synchronising on them.
 */
#ifndef SHOAL_TEST_INSPECT_KIT_H
#define SHOAL_TEST_INSPECT_KIT_H

#include <pthread.h>
#include <stddef.h>

#include "support.h"

/* ---- checks ------------------------------------------------------------------------- */

/* Three workers: a gated actor holds one, the others keep running. */
shoal_runtime_t *ik_runtime(void);
/* CU_ASSERT that got is want; prints both if not. */
void ik_same(const char *got, const char *want);
/* "slot.gen", as the answer writes a PID (four buffers in turn). */
const char *ik_pid_text(shoal_pid_t pid);
/* Inspects pid from this thread; on SHOAL_OK with status 0, copies the JSON
 * into out (checking it is NUL-terminated and answer.size counts the NUL).
 * Returns the call's code; *status gets the answer's status. */
int ik_inspect_json(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap, int *status);

/* ---- behaviours ------------------------------------------------------------------ */

/* A handler that ignores every message. */
int ik_ignore(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg);
/* No inspect callback. */
extern const shoal_behaviour_t ik_plain;
/* An inspect callback adding every field kind: i -42, min INT64_MIN, u
 * UINT64_MAX, t true, f false, s "x", n NULL, d 0.5. */
extern const shoal_behaviour_t ik_fields;

/* gated: a BLOCK message holds the worker until the gate opens (then
 * BLOCK_FAIL ends the actor); every other message counts as handled, which
 * its inspect callback reports. */
enum { TYPE_WORK = 1, TYPE_BLOCK = 2, TYPE_BLOCK_FAIL = 3 };
extern atomic_int ik_gate_open;
extern _Atomic unsigned ik_handled;
extern const shoal_behaviour_t ik_gated;
void ik_gate_reset(void);
/* Blocks a gated actor: sends `type` and waits until it is in the handler. */
void ik_block(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type);

/* inspector: inspects on command, from inside an actor (OP_ASYNC:
 * shoal_inspect; OP_BLOCKING: shoal_runtime_inspect), and records the
 * notices that come back (ik_notice_json is written before ik_nnotices is
 * published). */
enum { OP_ASYNC = 1, OP_BLOCKING = 2 };
#define IK_MAX_NOTICES 4
extern _Atomic int ik_request_rc;
extern _Atomic shoal_ref_t ik_request_ref;
extern _Atomic unsigned ik_nnotices;
extern _Atomic uint32_t ik_notice_kind[IK_MAX_NOTICES];
extern _Atomic int ik_notice_status[IK_MAX_NOTICES];
extern _Atomic shoal_ref_t ik_notice_ref[IK_MAX_NOTICES];
extern _Atomic shoal_pid_t ik_notice_from[IK_MAX_NOTICES];
extern _Atomic size_t ik_notice_size[IK_MAX_NOTICES];
extern char ik_notice_json[IK_MAX_NOTICES][512];
extern const shoal_behaviour_t ik_inspector;
void ik_inspector_reset(void);
/* Has the inspector run op on target; waits until it did. */
void ik_inspector_do(shoal_runtime_t *rt, shoal_pid_t insp, uint32_t op, shoal_pid_t target,
                     uint64_t timeout_ms);
/* Spawns beh (with opts, or none) as *pid and an inspector as *insp
 * (asserting both, fatally). */
void ik_spawn_with_inspector(shoal_runtime_t *rt, const shoal_behaviour_t *beh,
                             const shoal_spawn_opts_t *opts, shoal_pid_t *pid, shoal_pid_t *insp);
/* The gate and the inspector's record cleared, a runtime (asserted,
 * fatally), a gated actor *pid blocked (TYPE_BLOCK) and an inspector *insp. */
shoal_runtime_t *ik_blocked_with_inspector(shoal_pid_t *pid, shoal_pid_t *insp);

/* ---- a thread that inspects and keeps the result ---------------------------------- */

typedef struct helper_s {
    pthread_t thread;
    shoal_runtime_t *rt;
    shoal_pid_t pid;
    int rc, status;
    char json[512];
} ik_helper_t;

/* Starts a helper inspecting pid and returns once its request is in pid's
 * system mailbox (the runtime counts it as sent only after delivery). */
void ik_helper_start(ik_helper_t *h, shoal_runtime_t *rt, shoal_pid_t pid);

#endif
