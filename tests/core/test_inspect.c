/* test_inspect.c - inspection (actor/inspect.c, and its requests in
 * actor/call.c and actor/actor.c): the exact JSON of an actor with and
 * without an inspect callback; every field kind, string escaping and
 * doubles; mailbox_depth while the actor is blocked and mailbox_limit null
 * when unbounded; the request overtaking 1,000 queued messages; a dead PID,
 * an actor that ends with the request queued, an inspect callback that
 * fails or panics; the asynchronous shoal_inspect (one REPLY, or one TIMEOUT
 * when the target is blocked past it); and shoal_runtime_inspect refused on
 * a worker thread.
 *
 * A "gated" actor blocks inside a handler until the test opens its gate, so
 * what is queued meanwhile is known exactly. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "actor/actor.h"
#include "runtime/runtime.h"
#include "support.h"

/* ---- a runtime that keeps its log ---------------------------------------------- */

/* Three workers: a gated actor holds one, the others keep running. */
static shoal_runtime_t *runtime(void)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(3, SHOAL_LOG_WARN);
    CU_ASSERT_PTR_NOT_NULL(rt);
    return rt;
}

static void same(const char *got, const char *want)
{
    CU_ASSERT_STRING_EQUAL(got, want);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n    got:  %s\n    want: %s\n", got, want);
}

static void contains(const char *got, const char *part)
{
    CU_ASSERT_PTR_NOT_NULL(strstr(got, part));
    if (strstr(got, part) == NULL)
        fprintf(stderr, "\n    in:      %s\n    missing: %s\n", got, part);
}

/* "slot.gen", as the answer writes a PID. */
static const char *pid_text(shoal_pid_t pid)
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
static int inspect_json(shoal_runtime_t *rt, shoal_pid_t pid, char *out, size_t cap, int *status)
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

static int ignore(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}

static const shoal_behaviour_t plain = {.name = "plain", .handle_message = ignore};

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

static const shoal_behaviour_t fields = {
    .name = "fields", .handle_message = ignore, .inspect = fields_inspect};

static int escape_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_str(out, "quote", "say \"hi\"");
    shoal_inspect_str(out, "backslash", "C:\\dir\\");
    shoal_inspect_str(out, "controls",
                      "a\x01"
                      "b\nc\td\re\x1f"
                      "f");
    shoal_inspect_str(out, "kept", "/ \x7f caf\xc3\xa9"); /* slash, DEL, UTF-8: as they are */
    shoal_inspect_str(out, "empty", "");
    shoal_inspect_str(out, "k\"e\\y\n", "v"); /* keys are escaped too */
    return 0;
}

/* The behaviour's name is a JSON string as well. */
static const shoal_behaviour_t escaper = {
    .name = "esc\"aper\\", .handle_message = ignore, .inspect = escape_inspect};

static int doubles_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_double(out, "half", 1.5);
    shoal_inspect_double(out, "neg", -2.25);
    shoal_inspect_double(out, "tenth", 0.1); /* round-trips: 17 digits */
    shoal_inspect_double(out, "three", 3.0);
    shoal_inspect_double(out, "big", 1e300);
    shoal_inspect_double(out, "tiny", 5e-324);
    shoal_inspect_double(out, "zero", 0.0);
    shoal_inspect_double(out, "nan", NAN);
    shoal_inspect_double(out, "inf", INFINITY);
    shoal_inspect_double(out, "ninf", -INFINITY);
    return 0;
}

static const shoal_behaviour_t doubles = {
    .name = "doubles", .handle_message = ignore, .inspect = doubles_inspect};

/* gated: a BLOCK message holds the worker until the gate opens (then
 * BLOCK_FAIL ends the actor); every other message counts as handled. */
enum { TYPE_WORK = 1, TYPE_BLOCK = 2, TYPE_BLOCK_FAIL = 3 };
static atomic_int gate_open;
static atomic_int blocked;
static _Atomic unsigned handled;

static int gated_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind != SHOAL_MSG_CAST)
        return 0;
    if (msg->type == TYPE_BLOCK || msg->type == TYPE_BLOCK_FAIL) {
        atomic_store(&blocked, 1);
        while (!atomic_load(&gate_open))
            shoal_test_nap();
        return msg->type == TYPE_BLOCK_FAIL ? SHOAL_EFAILED : 0;
    }
    atomic_fetch_add(&handled, 1);
    return 0;
}

static int gated_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_uint(out, "handled", atomic_load(&handled));
    return 0;
}

static const shoal_behaviour_t gated = {
    .name = "gated", .handle_message = gated_message, .inspect = gated_inspect};

static void gate_reset(void)
{
    atomic_store(&gate_open, 0);
    atomic_store(&blocked, 0);
    atomic_store(&handled, 0);
}

/* An inspect callback that fails with inspect_rc, or panics. */
static _Atomic int inspect_rc;

static int failing_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)ctx;
    (void)state;
    shoal_inspect_int(out, "before", 1); /* what was added is thrown away */
    return atomic_load(&inspect_rc);
}

static int panicking_inspect(shoal_ctx_t *ctx, void *state, shoal_inspect_t *out)
{
    (void)state;
    shoal_inspect_int(out, "before", 1);
    shoal_panic(ctx, "inspect panics");
}

static const shoal_behaviour_t failing = {
    .name = "failing", .handle_message = ignore, .inspect = failing_inspect};
static const shoal_behaviour_t panicking = {
    .name = "panicking", .handle_message = ignore, .inspect = panicking_inspect};

/* A parent that records how its children end. */
static atomic_int exited;
static _Atomic int exit_status;
static _Atomic shoal_pid_t exit_from;

static int parent_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&exit_status, msg->status);
        atomic_store(&exit_from, msg->from);
        atomic_store(&exited, 1);
    }
    return 0;
}

static const shoal_behaviour_t parent = {.name = "parent", .handle_message = parent_message};

/* Spawns beh as a child of a fresh recording parent. */
static shoal_pid_t spawn_child(shoal_runtime_t *rt, const shoal_behaviour_t *beh)
{
    atomic_store(&exited, 0);
    atomic_store(&exit_status, 12345);
    shoal_pid_t p = SHOAL_PID_NONE, c = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &parent, NULL, NULL, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(
        shoal__actor_spawn(rt, shoal__tcache_get(rt), p, beh, NULL, 0, SHOAL_ACTOR_PLAIN, NULL, &c),
        SHOAL_OK);
    return c;
}

/* inspector: inspects on command, from inside an actor, and records the
 * notices that come back. */
enum { OP_ASYNC = 1, OP_BLOCKING = 2 };

typedef struct cmd_s {
    uint32_t op;
    shoal_pid_t target;
    uint64_t timeout_ms;
} cmd_t;

#define MAX_NOTICES 4
static _Atomic int request_rc;
static _Atomic shoal_ref_t request_ref;
static atomic_int requested;
static _Atomic unsigned nnotices;
static _Atomic uint32_t notice_kind[MAX_NOTICES];
static _Atomic int notice_status[MAX_NOTICES];
static _Atomic shoal_ref_t notice_ref[MAX_NOTICES];
static _Atomic shoal_pid_t notice_from[MAX_NOTICES];
static _Atomic size_t notice_size[MAX_NOTICES];
static char notice_json[MAX_NOTICES][512]; /* written before nnotices is published */

static int inspector_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_REPLY || msg->kind == SHOAL_MSG_TIMEOUT) {
        unsigned i = atomic_load(&nnotices);
        if (i < MAX_NOTICES) {
            atomic_store(&notice_kind[i], msg->kind);
            atomic_store(&notice_status[i], msg->status);
            atomic_store(&notice_ref[i], msg->ref);
            atomic_store(&notice_from[i], msg->from);
            atomic_store(&notice_size[i], msg->size);
            notice_json[i][0] = '\0';
            if (msg->size != 0 && msg->data != NULL)
                snprintf(notice_json[i], sizeof notice_json[i], "%.*s", (int)msg->size,
                         (const char *)msg->data);
        }
        atomic_store(&nnotices, i + 1);
        return 0;
    }
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof(cmd_t))
        return 0;
    cmd_t c;
    memcpy(&c, msg->data, sizeof c);
    if (c.op == OP_ASYNC) {
        shoal_ref_t ref = 0;
        atomic_store(&request_rc, shoal_inspect(ctx, c.target, c.timeout_ms, &ref));
        atomic_store(&request_ref, ref);
    } else {
        shoal_answer_t ans;
        atomic_store(&request_rc,
                     shoal_runtime_inspect(shoal_ctx_runtime(ctx), c.target, c.timeout_ms, &ans));
    }
    atomic_store(&requested, 1);
    return 0;
}

static const shoal_behaviour_t inspector = {.name = "inspector",
                                            .handle_message = inspector_message};

static void inspector_reset(void)
{
    atomic_store(&request_rc, 12345);
    atomic_store(&request_ref, 0);
    atomic_store(&requested, 0);
    atomic_store(&nnotices, 0);
}

/* Has the inspector run op on target; waits until it did. */
static void inspector_do(shoal_runtime_t *rt, shoal_pid_t insp, uint32_t op, shoal_pid_t target,
                         uint64_t timeout_ms)
{
    atomic_store(&requested, 0);
    cmd_t c = {.op = op, .target = target, .timeout_ms = timeout_ms};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, insp, 1, &c, sizeof c), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_test_wait_flag(&requested, 10.0), 1);
}

/* A thread that inspects and keeps the result. */
typedef struct helper_s {
    pthread_t thread;
    shoal_runtime_t *rt;
    shoal_pid_t pid;
    int rc, status;
    char json[512];
} helper_t;

static void *helper_main(void *arg)
{
    helper_t *h = arg;
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
static void helper_start(helper_t *h, shoal_runtime_t *rt, shoal_pid_t pid)
{
    uint64_t sent0 = shoal_test_stats(rt).msgs_sent;
    h->rt = rt;
    h->pid = pid;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&h->thread, NULL, helper_main, h), 0);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == sent0 + 1, 10.0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, sent0 + 1);
}

/* Blocks a gated actor: sends `type` and waits until it is in the handler. */
static void block(shoal_runtime_t *rt, shoal_pid_t pid, uint32_t type)
{
    atomic_store(&blocked, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, pid, type, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_test_wait_flag(&blocked, 10.0), 1);
}

/* ---- cases: the JSON --------------------------------------------------------------- */

static void without_callback_exact_json(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &plain, NULL, NULL, &pid), SHOAL_OK);
    char json[512], want[512];
    int status;
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"plain\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":null,\"info\":{}}",
             pid_text(pid));
    same(json, want);
    /* Inspection is not work: the actor is still there, nothing counted
     * against it, and it can be inspected again with the same answer. */
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    same(json, want);
    shoal_runtime_destroy(rt);
}

static void with_callback_fields_in_order(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    shoal_spawn_opts_t opts = {.mailbox_limit = 16};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &fields, NULL, &opts, &pid), SHOAL_OK);
    char json[512], want[512];
    int status;
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"fields\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":16,\"info\":{\"i\":-42,\"min\":-9223372036854775808,"
             "\"u\":18446744073709551615,\"t\":true,\"f\":false,\"s\":\"x\",\"n\":null,"
             "\"d\":0.5}}",
             pid_text(pid));
    same(json, want);
    shoal_runtime_destroy(rt);
}

static void strings_are_escaped(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &escaper, NULL, NULL, &pid), SHOAL_OK);
    char json[512], want[512];
    int status;
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"esc\\\"aper\\\\\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":null,\"info\":{"
             "\"quote\":\"say \\\"hi\\\"\","
             "\"backslash\":\"C:\\\\dir\\\\\","
             "\"controls\":\"a\\u0001b\\u000ac\\u0009d\\u000de\\u001ff\","
             "\"kept\":\"/ \x7f caf\xc3\xa9\","
             "\"empty\":\"\","
             "\"k\\\"e\\\\y\\u000a\":\"v\"}}",
             pid_text(pid));
    same(json, want);
    shoal_runtime_destroy(rt);
}

static void doubles_finite_and_not(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &doubles, NULL, NULL, &pid), SHOAL_OK);
    char json[512];
    int status;
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_OK);
    contains(json, "\"info\":{\"half\":1.5,\"neg\":-2.25,\"tenth\":0.10000000000000001,"
                   "\"three\":3,\"big\":1.0000000000000001e+300,"
                   "\"tiny\":4.9406564584124654e-324,\"zero\":0,"
                   "\"nan\":null,\"inf\":null,\"ninf\":null}}");
    /* And the whole object ends there. */
    CU_ASSERT_EQUAL(json[strlen(json) - 1], '}');
    CU_ASSERT_PTR_NULL(strstr(json, ":nan"));
    CU_ASSERT_PTR_NULL(strstr(json, ":inf"));
    CU_ASSERT_PTR_NULL(strstr(json, ":-inf"));
    shoal_runtime_destroy(rt);
}

/* ---- cases: the mailbox --------------------------------------------------------------- */

static void depth_is_the_queued_count_while_blocked(void)
{
    gate_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    shoal_spawn_opts_t opts = {.mailbox_limit = 10};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &gated, NULL, &opts, &pid), SHOAL_OK);
    block(rt, pid, TYPE_BLOCK);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, TYPE_WORK, &i, sizeof i), SHOAL_OK);
    helper_t h;
    helper_start(&h, rt, pid);
    atomic_store(&gate_open, 1);
    CU_ASSERT_EQUAL(pthread_join(h.thread, NULL), 0);
    CU_ASSERT_EQUAL(h.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(h.status, SHOAL_OK);
    char want[256];
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"gated\",\"mailbox_depth\":7,"
             "\"mailbox_limit\":10,\"info\":{\"handled\":0}}",
             pid_text(pid));
    same(h.json, want);
    /* Once they are handled: empty. */
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled) == 7, 10.0);
    char json[256];
    int status;
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    contains(json, "\"mailbox_depth\":0,\"mailbox_limit\":10,\"info\":{\"handled\":7}}");
    shoal_runtime_destroy(rt);
}

static void answered_before_1000_queued_messages(void)
{
    gate_reset();
    inspector_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &gated, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &inspector, NULL, NULL, &insp), SHOAL_OK);
    block(rt, pid, TYPE_BLOCK);
    int bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += shoal_runtime_send(rt, pid, TYPE_WORK, &i, sizeof i) != SHOAL_OK;
    CU_ASSERT_EQUAL(bad, 0);
    /* The request goes in after all of them... */
    inspector_do(rt, insp, OP_ASYNC, pid, 10000);
    CU_ASSERT_EQUAL(atomic_load(&request_rc), SHOAL_OK);
    atomic_store(&gate_open, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nnotices) == 1, 10.0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&nnotices), 1);
    /* ...and is answered before any of them. */
    CU_ASSERT_EQUAL(atomic_load(&notice_kind[0]), SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(atomic_load(&notice_status[0]), SHOAL_OK);
    char want[256];
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"gated\",\"mailbox_depth\":1000,"
             "\"mailbox_limit\":null,\"info\":{\"handled\":0}}",
             pid_text(pid));
    same(notice_json[0], want);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled) == 1000, 10.0);
    CU_ASSERT_EQUAL(atomic_load(&handled), 1000);
    shoal_runtime_destroy(rt);
}

/* ---- cases: no answer to give --------------------------------------------------------- */

static void dead_pid_is_enoproc(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &plain, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_runtime_send(rt, pid, 1, NULL, 0) == SHOAL_ENOPROC, 10.0);
    uint64_t noproc0 = shoal_test_stats(rt).msgs_noproc;
    shoal_answer_t ans;
    memset(&ans, 0xab, sizeof ans);
    CU_ASSERT_EQUAL(shoal_runtime_inspect(rt, pid, 10000, &ans), SHOAL_ENOPROC);
    CU_ASSERT_PTR_NULL(ans.data);
    CU_ASSERT_EQUAL(ans.size, 0);
    shoal_answer_release(&ans);
    CU_ASSERT_EQUAL(shoal_runtime_inspect(rt, SHOAL_PID_NONE, 10000, &ans), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_noproc, noproc0 + 2);
    CU_ASSERT_EQUAL(shoal_runtime_inspect(rt, pid, 10000, NULL), SHOAL_EINVAL);
    /* Only the waiters came and went: nothing left behind. */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 0);
    shoal_runtime_destroy(rt);
}

static void actor_ending_with_the_request_queued_answers_enoproc(void)
{
    gate_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_child(rt, &gated);
    block(rt, pid, TYPE_BLOCK_FAIL);
    helper_t h;
    helper_start(&h, rt, pid);
    atomic_store(&gate_open, 1); /* the handler returns SHOAL_EFAILED: the actor ends */
    CU_ASSERT_EQUAL(pthread_join(h.thread, NULL), 0);
    CU_ASSERT_EQUAL(h.rc, SHOAL_OK);
    CU_ASSERT_EQUAL(h.status, SHOAL_ENOPROC);
    CU_ASSERT_STRING_EQUAL(h.json, "");
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), SHOAL_EFAILED);
    shoal_runtime_destroy(rt);
}

static void inspect_callback_error_ends_the_actor(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    char json[256];
    int status;

    /* A negative code: the requester gets it, the parent too. */
    atomic_store(&inspect_rc, SHOAL_EBUSY);
    shoal_pid_t pid = spawn_child(rt, &failing);
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_EBUSY);
    CU_ASSERT_STRING_EQUAL(json, "");
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_from), pid);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_inspect(rt, pid, 10000, &(shoal_answer_t){0}), SHOAL_ENOPROC);

    /* A positive value: the requester sees SHOAL_EFAILED, the parent the
     * value itself (as for a failing handle_call). */
    atomic_store(&inspect_rc, 77);
    pid = spawn_child(rt, &failing);
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_EFAILED);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), 77);
    CU_ASSERT(shoal_test_log_has("failing: ended: unknown error (77)"));
    shoal_runtime_destroy(rt);
}

static void inspect_callback_panic_is_epanic(void)
{
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_child(rt, &panicking);
    char json[256];
    int status;
    CU_ASSERT_EQUAL(inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_EPANIC);
    CU_ASSERT_STRING_EQUAL(json, "");
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), SHOAL_EPANIC);
    CU_ASSERT(shoal_test_log_has("panicking: panic: inspect panics"));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- cases: from an actor ---------------------------------------------------------------- */

static void async_inspect_one_reply(void)
{
    inspector_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    shoal_spawn_opts_t opts = {.mailbox_limit = 5};
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &fields, NULL, &opts, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &inspector, NULL, NULL, &insp), SHOAL_OK);
    inspector_do(rt, insp, OP_ASYNC, pid, 300);
    CU_ASSERT_EQUAL(atomic_load(&request_rc), SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(atomic_load(&request_ref), 0);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nnotices) >= 1, 10.0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&nnotices), 1);
    CU_ASSERT_EQUAL(atomic_load(&notice_kind[0]), SHOAL_MSG_REPLY);
    CU_ASSERT_EQUAL(atomic_load(&notice_status[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&notice_ref[0]), atomic_load(&request_ref));
    CU_ASSERT_EQUAL(atomic_load(&notice_from[0]), pid);
    char want[512];
    snprintf(want, sizeof want,
             "{\"pid\":\"%s\",\"behaviour\":\"fields\",\"mailbox_depth\":0,"
             "\"mailbox_limit\":5,\"info\":{\"i\":-42,\"min\":-9223372036854775808,"
             "\"u\":18446744073709551615,\"t\":true,\"f\":false,\"s\":\"x\",\"n\":null,"
             "\"d\":0.5}}",
             pid_text(pid));
    same(notice_json[0], want);
    CU_ASSERT_EQUAL(atomic_load(&notice_size[0]), strlen(want) + 1); /* with the NUL */
    /* Past the timeout: the reply settled the call, no TIMEOUT follows. */
    struct timespec ts = {0, 500 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&nnotices), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, 0);
    shoal_runtime_destroy(rt);
}

static void async_inspect_times_out_on_a_blocked_target(void)
{
    gate_reset();
    inspector_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &gated, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &inspector, NULL, NULL, &insp), SHOAL_OK);
    block(rt, pid, TYPE_BLOCK);
    double t0 = shoal_test_now();
    inspector_do(rt, insp, OP_ASYNC, pid, 100);
    CU_ASSERT_EQUAL(atomic_load(&request_rc), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&nnotices) >= 1, 10.0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&nnotices), 1);
    CU_ASSERT(shoal_test_now() - t0 >= 0.100);
    CU_ASSERT_EQUAL(atomic_load(&notice_kind[0]), SHOAL_MSG_TIMEOUT);
    CU_ASSERT_EQUAL(atomic_load(&notice_status[0]), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(atomic_load(&notice_ref[0]), atomic_load(&request_ref));
    CU_ASSERT_EQUAL(atomic_load(&notice_size[0]), 0);
    /* The target answers once unblocked; that reply is late and dropped. */
    uint64_t late0 = shoal_test_stats(rt).replies_late;
    atomic_store(&gate_open, 1);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).replies_late == late0 + 1, 10.0);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).replies_late, late0 + 1);
    CU_ASSERT_EQUAL(atomic_load(&nnotices), 1);
    shoal_runtime_destroy(rt);
}

static void async_inspect_of_a_dead_pid(void)
{
    inspector_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &plain, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &inspector, NULL, NULL, &insp), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pid), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal_runtime_send(rt, pid, 1, NULL, 0) == SHOAL_ENOPROC, 10.0);
    inspector_do(rt, insp, OP_ASYNC, pid, 50);
    CU_ASSERT_EQUAL(atomic_load(&request_rc), SHOAL_ENOPROC);
    /* Nothing was sent, so nothing arrives: not even the timeout. */
    struct timespec ts = {0, 200 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&nnotices), 0);
    shoal_runtime_destroy(rt);
}

static void blocking_inspect_on_a_worker_is_einval(void)
{
    inspector_reset();
    shoal_runtime_t *rt = runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid, insp;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &plain, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &inspector, NULL, NULL, &insp), SHOAL_OK);
    inspector_do(rt, insp, OP_BLOCKING, pid, 1000);
    CU_ASSERT_EQUAL(atomic_load(&request_rc), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&nnotices), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"without a callback: the exact JSON", without_callback_exact_json},
        {"with a callback: every field kind, in order", with_callback_fields_in_order},
        {"strings are escaped", strings_are_escaped},
        {"doubles: finite, and NaN/inf as null", doubles_finite_and_not},
        {"mailbox_depth is the queued count while blocked",
         depth_is_the_queued_count_while_blocked},
        {"answered before 1,000 queued messages", answered_before_1000_queued_messages},
        {"a dead PID is ENOPROC", dead_pid_is_enoproc},
        {"an actor ending with the request queued answers ENOPROC",
         actor_ending_with_the_request_queued_answers_enoproc},
        {"an inspect callback error ends the actor", inspect_callback_error_ends_the_actor},
        {"an inspect callback panic is EPANIC", inspect_callback_panic_is_epanic},
        {"async inspect: exactly one REPLY", async_inspect_one_reply},
        {"async inspect: a TIMEOUT when the target is blocked",
         async_inspect_times_out_on_a_blocked_target},
        {"async inspect of a dead PID", async_inspect_of_a_dead_pid},
        {"blocking inspect on a worker thread is EINVAL", blocking_inspect_on_a_worker_is_einval},
        {NULL, NULL},
    };
    return shoal_test_run("inspect", cases);
}
