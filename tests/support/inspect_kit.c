/* inspect_kit.c - the inspect suites' runtime, checks, behaviours,
 * inspector actor and helper thread (inspect_kit.h). */
#include "inspect_kit.h"

#include <stdio.h>
#include <string.h>

#include "actor/actor.h"

/* ---- a runtime that keeps its log ---------------------------------------------- */

/* Three workers: a gated actor holds one, the others keep running. */
shoal_runtime_t *ik_runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(3, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL(rt);
    return rt;
}

void ik_same(const char *got, const char *want)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:  %s\n    want: %s\n", got, want);
}

/* "slot.gen", as the answer writes a PID. */
const char *ik_pid_text(shoal_pid_t pid)
{
    static char bufs[4][32];
    static unsigned next;
    char *b = bufs[next++ % 4];
    snprintf(b, 32, "%u.%u", (unsigned)shoal__pid_slot(pid), (unsigned)shoal__pid_gen(pid));
    return b;
}

/* Inspects pid from this thread; on SHOAL_OK with status 0, copies the JSON
 * into out (checking it is NUL-terminated and answer.size counts the NUL).
 * Returns the call's code; *status gets the answer's status. */
int ik_inspect_json(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap, int *status)
{
    shoal_answer_t ans;
    out[0] = '\0';
    *status = 12345;
    int rc = shoal_runtime_inspect(rt, pid, 10000, &ans);
    if (rc != SHOAL_OK)
        return rc;
    *status = ans.status;
    if (ans.status == SHOAL_OK) {
        CU_ASSERT_PTR_NOT_NULL(ans.data);
        CU_ASSERT(ans.size >= 1);
        if (ans.data != NULL && ans.size >= 1) {
            const char *s = ans.data;
            CU_ASSERT_EQUAL(s[ans.size - 1], '\0');
            CU_ASSERT_EQUAL(strlen(s) + 1, ans.size);
            snprintf(out, cap, "%s", s);
        }
        CU_ASSERT_EQUAL(ans.type, 0);
    } else {
        CU_ASSERT_EQUAL(ans.size, 0);
    }
    shoal_answer_release(&ans);
    return rc;
}

/* ---- behaviours ------------------------------------------------------------------ */

int ik_ignore(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}

const shoal_behaviour_t ik_plain = {.name = "plain", .handle_message = ik_ignore};

static int fields_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_int(out, "i", -42);
    shoal_inspect_int(out, "min", INT64_MIN);
    shoal_inspect_uint(out, "u", UINT64_MAX);
    shoal_inspect_bool(out, "t", true);
    shoal_inspect_bool(out, "f", false);
    shoal_inspect_str(out, "s", "x");
    shoal_inspect_str(out, "n", NULL);
    shoal_inspect_double(out, "d", 0.5);
    return 0;
}

const shoal_behaviour_t ik_fields = {
    .name = "fields", .handle_message = ik_ignore, .inspect = fields_inspect};

/* gated */
atomic_int ik_gate_open;
static atomic_int blocked;
_Atomic unsigned ik_handled;

static int gated_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (msg->type == TYPE_BLOCK || msg->type == TYPE_BLOCK_FAIL) {
        atomic_store(&blocked, 1);
        while (!atomic_load(&ik_gate_open))
            shoal_test_nap();
        return msg->type == TYPE_BLOCK_FAIL ? SHOAL_EFAILED : 0;
    }
    atomic_fetch_add(&ik_handled, 1);
    return 0;
}

static int gated_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_uint(out, "handled", atomic_load(&ik_handled));
    return 0;
}

const shoal_behaviour_t ik_gated = {
    .name = "gated", .handle_message = gated_message, .inspect = gated_inspect};

void ik_gate_reset(void)
{
    atomic_store(&ik_gate_open, 0);
    atomic_store(&blocked, 0);
    atomic_store(&ik_handled, 0);
}

/* inspector */

typedef struct cmd_s {
    uint32_t op;
    shoal_pid_t target;
    uint64_t timeout_ms;
} cmd_t;

_Atomic int ik_request_rc;
_Atomic shoal_ref_t ik_request_ref;
static atomic_int requested;
_Atomic unsigned ik_nnotices;
_Atomic uint32_t ik_notice_kind[IK_MAX_NOTICES];
_Atomic int ik_notice_status[IK_MAX_NOTICES];
_Atomic shoal_ref_t ik_notice_ref[IK_MAX_NOTICES];
_Atomic shoal_pid_t ik_notice_from[IK_MAX_NOTICES];
_Atomic size_t ik_notice_size[IK_MAX_NOTICES];
char ik_notice_json[IK_MAX_NOTICES][512]; /* written before nnotices is published */

static int inspector_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_REPLY || msg->kind == SHOAL_MSG_TIMEOUT) {
        unsigned i = atomic_load(&ik_nnotices);
        if (i < IK_MAX_NOTICES) {
            atomic_store(&ik_notice_kind[i], msg->kind);
            atomic_store(&ik_notice_status[i], msg->status);
            atomic_store(&ik_notice_ref[i], msg->ref);
            atomic_store(&ik_notice_from[i], msg->from);
            atomic_store(&ik_notice_size[i], msg->size);
            ik_notice_json[i][0] = '\0';
            if (msg->size != 0 && msg->data != NULL)
                snprintf(ik_notice_json[i], sizeof ik_notice_json[i], "%.*s", (int)msg->size,
                         (const char *)msg->data);
        }
        atomic_store(&ik_nnotices, i + 1);
        return 0;
    }
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof(cmd_t))
        return 0;
    cmd_t c;
    memcpy(&c, msg->data, sizeof c);
    if (c.op == OP_ASYNC) {
        shoal_ref_t ref = 0;
        atomic_store(&ik_request_rc, shoal_inspect(ctx, c.target, c.timeout_ms, &ref));
        atomic_store(&ik_request_ref, ref);
    } else {
        shoal_answer_t ans;
        atomic_store(&ik_request_rc,
                     shoal_runtime_inspect(shoal_ctx_runtime(ctx), c.target, c.timeout_ms, &ans));
    }
    atomic_store(&requested, 1);
    return 0;
}

const shoal_behaviour_t ik_inspector = {.name = "inspector", .handle_message = inspector_message};

void ik_inspector_reset(void)
{
    atomic_store(&ik_request_rc, 12345);
    atomic_store(&ik_request_ref, 0);
    atomic_store(&requested, 0);
    atomic_store(&ik_nnotices, 0);
}

/* Has the inspector run op on target; waits until it did. */
void ik_inspector_do(shoal_runtime_t *rt, shoal_pid_t insp, uint32_t op, shoal_pid_t target,
                     uint64_t timeout_ms)
{
    atomic_store(&requested, 0);
    cmd_t c = {.op = op, .target = target, .timeout_ms = timeout_ms};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, insp, 1, &c, sizeof c), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_test_wait_flag(&requested, 10.0), 1);
}

void ik_spawn_with_inspector(shoal_runtime_t *rt, const shoal_behaviour_t *beh,
                             const shoal_spawn_opts_t *opts, shoal_pid_t *pid, shoal_pid_t *insp)
{
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, beh, NULL, opts, pid), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ik_inspector, NULL, NULL, insp), SHOAL_OK);
}

static void *helper_main(void *arg)
{
    ik_helper_t *h = arg;
    shoal_answer_t ans;
    h->rc = shoal_runtime_inspect(h->rt, h->pid, 10000, &ans);
    h->status = 12345;
    h->json[0] = '\0';
    if (h->rc == SHOAL_OK) {
        h->status = ans.status;
        if (ans.data != NULL)
            snprintf(h->json, sizeof h->json, "%s", (const char *)ans.data);
        shoal_answer_release(&ans);
    }
    return NULL;
}

/* Starts a helper inspecting pid and returns once its request is in pid's
 * system mailbox (the runtime counts it as sent only after delivery). */
void ik_helper_start(ik_helper_t *h, shoal_runtime_t *rt, shoal_pid_t pid)
{
    uint64_t sent0 = shoal_test_stats(rt).msgs_sent;
    h->rt = rt;
    h->pid = pid;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&h->thread, NULL, helper_main, h), 0);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == sent0 + 1, 10.0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, sent0 + 1);
}

/* Blocks a gated actor: sends `type` and waits until it is in the handler. */
void ik_block(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type)
{
    atomic_store(&blocked, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pid, type, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_test_wait_flag(&blocked, 10.0), 1);
}

shoal_runtime_t *ik_blocked_with_inspector(shoal_pid_t *pid, shoal_pid_t *insp)
{
    ik_gate_reset();
    ik_inspector_reset();
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    ik_spawn_with_inspector(rt, &ik_gated, NULL, pid, insp);
    ik_block(rt, *pid, TYPE_BLOCK);
    return rt;
}
