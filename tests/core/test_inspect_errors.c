/* test_inspect_errors.c - inspection with no answer to give
 * (actor/inspect.c, actor/call.c, actor/actor.c): a dead PID; an actor
 * that ends with the request queued; an inspect callback that fails (the
 * actor ends) or panics.
 *
 * A "gated" actor (inspect_kit.h) blocks inside a handler until the test
 * opens its gate, so what is queued meanwhile is known exactly.
 */
#include <string.h>

#include "actor/actor.h"
#include "inspect_kit.h"
#include "runtime/runtime.h"

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
    .name = "failing", .handle_message = ik_ignore, .inspect = failing_inspect};
static const shoal_behaviour_t panicking = {
    .name = "panicking", .handle_message = ik_ignore, .inspect = panicking_inspect};

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

/* ---- cases: no answer to give --------------------------------------------------------- */

static void dead_pid_is_enoproc(void)
{
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ik_plain, NULL, NULL, &pid), SHOAL_OK);
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
    ik_gate_reset();
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_child(rt, &ik_gated);
    ik_block(rt, pid, TYPE_BLOCK_FAIL);
    ik_helper_t h;
    ik_helper_start(&h, rt, pid);
    atomic_store(&ik_gate_open, 1); /* the handler returns SHOAL_EFAILED: the actor ends */
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
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    char json[256];
    int status;

    /* A negative code: the requester gets it, the parent too. */
    atomic_store(&inspect_rc, SHOAL_EBUSY);
    shoal_pid_t pid = spawn_child(rt, &failing);
    CU_ASSERT_EQUAL(ik_inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
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
    CU_ASSERT_EQUAL(ik_inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_EFAILED);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), 77);
    CU_ASSERT(shoal_test_log_has("failing: ended: unknown error (77)"));
    shoal_runtime_destroy(rt);
}

static void inspect_callback_panic_is_epanic(void)
{
    shoal_runtime_t *rt = ik_runtime();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid = spawn_child(rt, &panicking);
    char json[256];
    int status;
    CU_ASSERT_EQUAL(ik_inspect_json(rt, pid, json, sizeof json, &status), SHOAL_OK);
    CU_ASSERT_EQUAL(status, SHOAL_EPANIC);
    CU_ASSERT_STRING_EQUAL(json, "");
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), SHOAL_EPANIC);
    CU_ASSERT(shoal_test_log_has("panicking: panic: inspect panics"));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a dead PID is ENOPROC", dead_pid_is_enoproc},
        {"an actor ending with the request queued answers ENOPROC",
         actor_ending_with_the_request_queued_answers_enoproc},
        {"an inspect callback error ends the actor", inspect_callback_error_ends_the_actor},
        {"an inspect callback panic is EPANIC", inspect_callback_panic_is_epanic},
        {NULL, NULL},
    };
    return shoal_test_run("inspect_errors", cases);
}
