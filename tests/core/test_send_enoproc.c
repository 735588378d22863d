/* test_send_enoproc.c - sending to an actor that ended (core/actor/send.c):
 * SHOAL_ENOPROC after every way an actor ends (shoal_exit, an error
 * return, shoal_stop, shoal_runtime_stop_actor), its parent told once.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics (some in send_kit.h), and the test thread asserts after
 * synchronising on them.
 */
#include "send_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, SK_WAIT_S)

/* ---- SHOAL_ENOPROC after every way of ending ------------------------------- */

/* A child that ends on command: T_EXIT -> shoal_exit(0), T_FAIL -> returns 42,
 * T_BLOCK -> waits (for shoal_stop / stop_actor to reach it). */
static int mortal_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type == T_EXIT) {
        shoal_exit(ctx, 0);
        return 0;
    }
    if (msg->type == T_FAIL)
        return 42;
    return 0;
}

static const shoal_behaviour_t mortal_beh = {.name = "mortal", .handle_message = mortal_handle};

/* A parent: init spawns one mortal child and publishes its PID; EXIT notices
 * are recorded; T_EXIT asks it to stop the child with shoal_stop. */
static _Atomic shoal_pid_t sup_child, sup_exit_from;
static atomic_int sup_exits, sup_exit_status, sup_stop_rc;

static int sup_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    shoal_pid_t c;
    int rc = shoal_spawn(ctx, &mortal_beh, NULL, NULL, &c);
    if (rc == SHOAL_OK)
        atomic_store(&sup_child, c);
    return rc;
}

static int sup_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&sup_exit_from, msg->from);
        atomic_store(&sup_exit_status, msg->status);
        atomic_fetch_add(&sup_exits, 1); /* last: the test waits on it */
    } else if (msg->type == T_EXIT) {
        atomic_store(&sup_stop_rc, shoal_stop(ctx, atomic_load(&sup_child)));
    }
    return 0;
}

static const shoal_behaviour_t sup_beh = {
    .name = "sup", .init = sup_init, .handle_message = sup_handle};

/* How the child is made to end. */
enum { END_EXIT, END_FAIL, END_SHOAL_STOP, END_STOP_ACTOR };

static void enoproc_after(int how, int expect_status)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&sup_child, SHOAL_PID_NONE);
    atomic_store(&sup_exit_from, SHOAL_PID_NONE);
    atomic_store(&sup_exits, 0);
    atomic_store(&sup_exit_status, 12345);
    atomic_store(&sup_stop_rc, 12345);
    shoal_pid_t sup;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sup_beh, NULL, NULL, &sup), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&sup_child) != SHOAL_PID_NONE);
    shoal_pid_t child = atomic_load(&sup_child);
    CU_ASSERT_FATAL(child != SHOAL_PID_NONE);
    switch (how) {
    case END_EXIT:
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_EXIT, NULL, 0), SHOAL_OK);
        break;
    case END_FAIL:
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_FAIL, NULL, 0), SHOAL_OK);
        break;
    case END_SHOAL_STOP:
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, sup, T_EXIT, NULL, 0), SHOAL_OK);
        break;
    case END_STOP_ACTOR:
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_OK);
        break;
    }
    /* The parent hears of the end after the child's mailboxes are closed. */
    WAIT_UNTIL(atomic_load(&sup_exits) == 1);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&sup_exits), 1);
    CU_ASSERT_EQUAL(atomic_load(&sup_exit_from), child);
    CU_ASSERT_EQUAL(atomic_load(&sup_exit_status), expect_status);
    if (how == END_SHOAL_STOP)
        CU_ASSERT_EQUAL(atomic_load(&sup_stop_rc), SHOAL_OK);

    uint64_t noproc0 = shoal_test_stats(rt).msgs_noproc;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_DATA, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, child, T_DATA, NULL, 0), SHOAL_ENOPROC);
    unsigned char big[200] = {0};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, child, T_DATA, big, sizeof big), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, child), SHOAL_ENOPROC);
    shoal_answer_t ans;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, child, T_DATA, NULL, 0, 1000, &ans), SHOAL_ENOPROC);
    /* Three sends and the call were refused with ENOPROC (stop_actor is a
     * control signal, not a counted send). */
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_noproc - noproc0, 4);
    /* A PID that never named an actor, and PID_NONE. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, SHOAL_PID_NONE, T_DATA, NULL, 0), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, ((shoal_pid_t)7 << 32) | 9999, T_DATA, NULL, 0),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, UINT64_MAX, T_DATA, NULL, 0), SHOAL_ENOPROC);
    /* The parent is alive and untouched. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, sup, T_DATA, NULL, 0), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

static void enoproc_after_shoal_exit(void) { enoproc_after(END_EXIT, 0); }
static void enoproc_after_error_return(void) { enoproc_after(END_FAIL, 42); }
static void enoproc_after_shoal_stop(void) { enoproc_after(END_SHOAL_STOP, SHOAL_ESHUTDOWN); }
static void enoproc_after_stop_actor(void) { enoproc_after(END_STOP_ACTOR, SHOAL_ESHUTDOWN); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"ENOPROC after shoal_exit", enoproc_after_shoal_exit},
        {"ENOPROC after an error return", enoproc_after_error_return},
        {"ENOPROC after shoal_stop", enoproc_after_shoal_stop},
        {"ENOPROC after shoal_runtime_stop_actor", enoproc_after_stop_actor},
        {NULL, NULL},
    };
    return shoal_test_run("send_enoproc", cases);
}
