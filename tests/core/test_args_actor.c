/* test_args_actor.c - the public args getters (host/args.c) inside an
 * actor: a failing getter in init ends the actor with its code and leaves
 * its message in shoal_ctx_error (logged as the actor); the next getter
 * call clears it, and a callback that called none sees ""; shoal_arg_error
 * (a plugin's own check) reports the same way, at the value of its key.
 *
 * The actors write what they saw into the records below; the test thread
 * reads them after the parent has heard of the end. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "actor/actor.h"
#include "args_kit.h"
#include "runtime/runtime.h"

/* ---- inside an actor ------------------------------------------------------------ */

/* What the actors below saw, written by them, read by the test thread after
 * the parent has heard of the end (the EXIT notice orders the two). */
static char seen_error[600];
static char seen_error_after[600];
static _Atomic int seen_rc;
static _Atomic int exited;
static _Atomic int exit_status;

static int parent_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&exit_status, msg->status);
        atomic_store(&exited, 1);
    }
    return 0;
}

static const shoal_behaviour_t parent = {.name = "args-parent", .handle_message = parent_message};

/* Reads "rate" (1..1000) and ends with the getter's code. */
static int reader_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    int64_t rate = 0;
    int rc = shoal_arg_int(ctx, args, "rate", 0, 1, 1000, &rate);
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    atomic_store(&seen_rc, rc);
    return rc;
}

/* A failing getter, then a good one: the error is cleared. */
static int clearer_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    bool b;
    int64_t rate = 0;
    int rc = shoal_arg_bool(ctx, args, "rate", 0, &b);
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    atomic_store(&seen_rc, rc);
    rc = shoal_arg_int(ctx, args, "rate", 0, 1, 1000, &rate);
    snprintf(seen_error_after, sizeof seen_error_after, "%s", shoal_ctx_error(ctx));
    return rc == SHOAL_OK && rate == 5 ? SHOAL_OK : SHOAL_EFAILED;
}

/* Calls no getter: its callback has seen no error. */
static int quiet_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    return SHOAL_OK;
}

static int ignore(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}

static const shoal_behaviour_t reader = {
    .name = "args-reader", .init = reader_init, .handle_message = ignore};
static const shoal_behaviour_t clearer = {
    .name = "args-clearer", .init = clearer_init, .handle_message = ignore};
static const shoal_behaviour_t quiet = {
    .name = "args-quiet", .init = quiet_init, .handle_message = ignore};

static shoal_runtime_t *runtime(unsigned threads)
{
    shoal_runtime_t *rt = shoal_test_runtime_logged(threads, SHOAL_LOG_ERROR);
    CU_ASSERT_PTR_NOT_NULL(rt);
    return rt;
}

/* Spawns beh as a child of a recording parent with args; waits for its end
 * (want_end) or for init to have run; returns the exit status. */
static int run_child(shoal_runtime_t *rt, const shoal_behaviour_t *beh, const shoal_args_t *args,
                     bool want_end, shoal_pid_t *child)
{
    atomic_store(&exited, 0);
    atomic_store(&exit_status, 12345);
    atomic_store(&seen_rc, 12345);
    seen_error[0] = seen_error_after[0] = '\0';
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &parent, NULL, NULL, &p), SHOAL_OK);
    /* The parent spawns nothing itself: its child is attached through the
     * internal spawn, which takes the parent PID. */
    CU_ASSERT_EQUAL_FATAL(shoal__actor_spawn(rt, shoal__tcache_get(rt), p, beh, args, 0,
                                             SHOAL_ACTOR_PLAIN, NULL, child),
                          SHOAL_OK);
    if (want_end) {
        CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    } else {
        /* A call is handled after init: when it returns, init has run. */
        shoal_answer_t ans;
        CU_ASSERT_EQUAL(shoal_runtime_call(rt, *child, 1, NULL, 0, 10000, &ans), SHOAL_OK);
        shoal_answer_release(&ans);
    }
    return atomic_load(&exit_status);
}

static void test_in_actor_init(void)
{
    shoal_runtime_t *rt = runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t child;

    /* A wrong type: the actor ends with SHOAL_EINVAL, the message is kept
     * and logged as the actor. */
    const shoal_args_t *args = ag_yaml("rate: fast\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_EINVAL);
    ag_same(seen_error, "pool.yaml:1:7: args 'rate': expected an integer, got 'fast'", "actor");
    CU_ASSERT(shoal_test_log_has(
        "args-reader: pool.yaml:1:7: args 'rate': expected an integer, got 'fast'"));
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, 1, NULL, 0), SHOAL_ENOPROC);

    /* Out of range. */
    args = ag_yaml("rate: 1001\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_EINVAL);
    ag_same(seen_error, "pool.yaml:1:7: args 'rate': 1001 is out of range: expected 1 to 1000",
            "actor range");

    /* A missing key: SHOAL_ENOKEY. */
    args = ag_yaml("speed: 3\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_ENOKEY);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_ENOKEY);
    ag_same(seen_error, "pool.yaml:1:1: args: missing required key 'rate'", "actor missing");

    /* Good args: init succeeds, no error. */
    args = ag_yaml("rate: 5\n");
    run_child(rt, &reader, args, false, &child);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(seen_error, "");
    CU_ASSERT_EQUAL(atomic_load(&exited), 0);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status), SHOAL_ESHUTDOWN);

    /* The error lasts until the next getter call. */
    run_child(rt, &clearer, args, false, &child);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_EINVAL);
    ag_same(seen_error, "pool.yaml:1:7: args 'rate': expected true or false, got '5'", "clearer");
    CU_ASSERT_STRING_EQUAL(seen_error_after, "");
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    shoal_runtime_destroy(rt);
    ag_drop();
}

/* shoal_ctx_error is "the last getter error seen in this callback": a
 * callback that called no getter sees "", even when the actor that ran
 * before it on the same worker thread failed one. */
static void test_ctx_error_per_callback(void)
{
    shoal_runtime_t *rt = runtime(1); /* one worker: both actors share its ctx */
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t child;
    const shoal_args_t *args = ag_yaml("rate: fast\n");
    CU_ASSERT_EQUAL(run_child(rt, &reader, args, true, &child), SHOAL_EINVAL);
    CU_ASSERT_STRING_NOT_EQUAL(seen_error, "");
    run_child(rt, &quiet, NULL, false, &child);
    CU_ASSERT_STRING_EQUAL(seen_error, "");
    if (seen_error[0] != '\0')
        fprintf(stderr, "\n    a callback with no getter call saw: %s\n", seen_error);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    shoal_runtime_destroy(rt);
    ag_drop();
}

/* shoal_arg_error and the two new getters as a plugin uses them: each
 * message kept in shoal_ctx_error and logged as the actor. */
#define NCHECKS 8
static char check_error[NCHECKS][600];
static _Atomic int check_rc[NCHECKS];

static void keep(shoal_ctx_t *ctx, int i, int rc)
{
    snprintf(check_error[i], sizeof check_error[i], "%s", shoal_ctx_error(ctx));
    atomic_store(&check_rc[i], rc);
}

static int checker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    static const char *const modes[] = {"panic", "fail", "exit", NULL};
    unsigned mode = 99;
    uint64_t us = 0;
    int64_t rate = 0;
    keep(ctx, 0, shoal_arg_error(ctx, args, "rate", "%d is odd", 5));
    keep(ctx, 1, shoal_arg_error(ctx, args, "speed", "needed with '%s'", "rate"));
    keep(ctx, 2, shoal_arg_error(ctx, args, NULL, "rate and mode do not mix"));
    keep(ctx, 3,
         shoal_arg_error(ctx, args, "list", "has %zu items",
                         shoal_args_len(shoal_args_item(args, 3))));
    keep(ctx, 4, shoal_arg_enum(ctx, args, "mode", 0, modes, &mode));
    keep(ctx, 5, shoal_arg_duration_us(ctx, args, "spin", 0, &us));
    keep(ctx, 6, shoal_arg_error(ctx, NULL, "x", "no args at all"));
    keep(ctx, 7, shoal_arg_int(ctx, args, "rate", 0, 0, 10, &rate)); /* clears it */
    return mode == 99 && us == 0 && rate == 5 ? SHOAL_OK : SHOAL_EFAILED;
}

/* A plugin's own range check failing init. */
static int odd_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    int64_t rate = 0;
    int rc = shoal_arg_int(ctx, args, "rate", 0, 0, 100, &rate);
    if (rc == SHOAL_OK && rate % 2 != 0)
        rc = shoal_arg_error(ctx, args, "rate", "%" PRId64 " is odd: expected an even rate", rate);
    snprintf(seen_error, sizeof seen_error, "%s", shoal_ctx_error(ctx));
    atomic_store(&seen_rc, rc);
    return rc;
}

static const shoal_behaviour_t checker = {
    .name = "args-checker", .init = checker_init, .handle_message = ignore};
static const shoal_behaviour_t odd = {
    .name = "args-odd", .init = odd_init, .handle_message = ignore};

static void test_arg_error_in_actor(void)
{
    shoal_runtime_t *rt = runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t child;
    const shoal_args_t *args = ag_yaml("rate: 5\nmode: boom\nspin: 50\nlist: [1, 2]\n");
    for (int i = 0; i < NCHECKS; i++)
        atomic_store(&check_rc[i], 12345);
    run_child(rt, &checker, args, false, &child); /* init succeeded: the actor lives */
    CU_ASSERT_EQUAL(atomic_load(&exited), 0);
    static const char *const want[NCHECKS] = {
        /* at the value of a present key */
        "pool.yaml:1:7: args 'rate': 5 is odd",
        /* an absent key: at the args mapping */
        "pool.yaml:1:1: args 'speed': needed with 'rate'",
        /* key NULL: at the args mapping, no key named */
        "pool.yaml:1:1: args: rate and mode do not mix",
        /* a list value: at the list */
        "pool.yaml:4:7: args 'list': has 2 items",
        /* the enum getter lists the choices */
        "pool.yaml:2:7: args 'mode': expected one of panic, fail, exit, got 'boom'",
        /* duration_us: a number needs its unit */
        ("pool.yaml:3:7: args 'spin': '50' has no unit: expected a duration like 50us, 250ms, "
         "2s or 1m"),
        /* no args at all: no place to point at */
        "args 'x': no args at all",
        /* a good getter call clears it */
        "",
    };
    static const int want_rc[NCHECKS] = {SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_EINVAL,
                                         SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_EINVAL, SHOAL_OK};
    for (int i = 0; i < NCHECKS; i++) {
        CU_ASSERT_EQUAL(atomic_load(&check_rc[i]), want_rc[i]);
        ag_same(check_error[i], want[i], "checker");
    }
    CU_ASSERT(shoal_test_log_has("args-checker: pool.yaml:1:7: args 'rate': 5 is odd\n"));
    CU_ASSERT(shoal_test_log_has("args-checker: pool.yaml:1:1: args: rate and mode do not mix\n"));
    CU_ASSERT(shoal_test_log_has("args-checker: args 'x': no args at all\n"));
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);

    /* Returned from init, it ends the actor with SHOAL_EINVAL. */
    args = ag_yaml("rate: 7\n");
    CU_ASSERT_EQUAL(run_child(rt, &odd, args, true, &child), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_EINVAL);
    ag_same(seen_error, "pool.yaml:1:7: args 'rate': 7 is odd: expected an even rate", "odd");
    CU_ASSERT(shoal_test_log_has(
        "args-odd: pool.yaml:1:7: args 'rate': 7 is odd: expected an even rate"));
    args = ag_yaml("rate: 8\n");
    run_child(rt, &odd, args, false, &child);
    CU_ASSERT_EQUAL(atomic_load(&seen_rc), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(seen_error, "");
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&exited, 10.0), 1);
    shoal_runtime_destroy(rt);
    ag_drop();
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"getter in actor init", test_in_actor_init},
        {"ctx error is per callback", test_ctx_error_per_callback},
        {"arg_error and the new getters in an actor", test_arg_error_in_actor},
        {NULL, NULL},
    };
    return shoal_test_run("args_actor", cases);
}
