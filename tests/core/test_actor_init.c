/* test_actor_init.c - an actor's start (core/actor/actor.c, turn.c): init
 * runs before any message, with its args and zeroed state (NULL for
 * state_size 0); an init that fails ends the actor without messages, its
 * parent told, and drops what was queued behind it.
 *
 * Handlers never call CUnit: they record into atomics (some in actor_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <string.h>

#include "actor_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, AK_WAIT_S)

/* ---- init ------------------------------------------------------------------- */

#define BIG_STATE 4096

typedef struct {
    int inited;
    int args_value;
    int was_zero;
    int handled;
    unsigned char pad[BIG_STATE - 4 * sizeof(int)];
} init_state_t;

static atomic_int init_runs, init_first_ok, init_msgs, init_bad, init_terms;

static int init_cb(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    init_state_t *s = state;
    /* State arrives zeroed, all state_size bytes of it. */
    const unsigned char *p = state;
    int zero = 1;
    for (size_t i = 0; i < sizeof *s; i++)
        zero &= p[i] == 0;
    memset(s->pad, 0xab, sizeof s->pad); /* every byte is ours (ASan) */
    s->was_zero = zero;
    s->inited = 1;
    s->args_value = *(const int *)args;
    atomic_fetch_add(&init_runs, 1);
    return 0;
}

static int init_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)msg;
    init_state_t *s = state;
    if (s->handled++ == 0)
        atomic_store(&init_first_ok, s->inited == 1 && s->args_value == 4242 && s->was_zero);
    if (s->pad[BIG_STATE - 4 * sizeof(int) - 1] != 0xab)
        atomic_fetch_add(&init_bad, 1);
    atomic_fetch_add(&init_msgs, 1);
    return 0;
}

static void init_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    (void)reason;
    atomic_fetch_add(&init_terms, 1);
}

static void init_runs_first_with_args_and_zeroed_state(void)
{
    static const shoal_behaviour_t beh = {.name = "init",
                                          .state_size = sizeof(init_state_t),
                                          .init = init_cb,
                                          .handle_message = init_handle,
                                          .terminate = init_term};
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&init_runs, 0);
    atomic_store(&init_first_ok, -1);
    atomic_store(&init_msgs, 0);
    atomic_store(&init_bad, 0);
    atomic_store(&init_terms, 0);
    enum { N = 50 };
    static int args[N];
    shoal_pid_t pids[N];
    for (int i = 0; i < N; i++) {
        args[i] = 4242;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, &args[i], NULL, &pids[i]), SHOAL_OK);
        /* Sent at once, likely before init ran: init still comes first. */
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pids[i], T_PING, NULL, 0), SHOAL_OK);
    }
    WAIT_UNTIL(atomic_load(&init_msgs) == N);
    CU_ASSERT_EQUAL(atomic_load(&init_msgs), N);
    CU_ASSERT_EQUAL(atomic_load(&init_runs), N);
    CU_ASSERT_EQUAL(atomic_load(&init_first_ok), 1);
    CU_ASSERT_EQUAL(atomic_load(&init_bad), 0);
    /* Init is not a message to the handler, but it is handled: N + N. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_handled == 2 * N);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_handled, 2 * N);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&init_terms), N);
}

/* state_size 0: state is NULL. */
static atomic_int null_state_ok;
static int null_state_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)msg;
    atomic_store(&null_state_ok, state == NULL ? 1 : 2);
    return 0;
}

static void state_size_zero_gives_null_state(void)
{
    static const shoal_behaviour_t beh = {.name = "stateless", .handle_message = null_state_handle};
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&null_state_ok, 0);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, T_PING, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&null_state_ok) != 0);
    CU_ASSERT_EQUAL(atomic_load(&null_state_ok), 1);
    shoal_runtime_destroy(rt);
}

/* ---- init failure ------------------------------------------------------------------ */

static atomic_int bad_init_msgs, bad_init_terms;
static int bad_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    int how = *(const int *)args;
    if (how == 1)
        shoal_panic(ctx, "init panics");
    return how == 2 ? SHOAL_ENOMEM : 77;
}
static int bad_init_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&bad_init_msgs, 1);
    return 0;
}
static void bad_init_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    (void)reason;
    atomic_fetch_add(&bad_init_terms, 1);
}
static const shoal_behaviour_t bad_init_beh = {.name = "bad-init",
                                               .init = bad_init,
                                               .handle_message = bad_init_handle,
                                               .terminate = bad_init_term};

static void init_failure_ends_the_actor_without_messages(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    ak_parent_reset();
    atomic_store(&bad_init_msgs, 0);
    atomic_store(&bad_init_terms, 0);
    static const int how[3] = {0, 1, 2};
    static ak_kids_t k = {.beh = {&bad_init_beh, &bad_init_beh, &bad_init_beh},
                          .args = {&how[0], &how[1], &how[2]},
                          .n = 3};
    shoal_pid_t parent;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &ak_parent_beh, &k, NULL, &parent), SHOAL_OK);
    /* Kids may already be gone when the test sends: those sends are
     * refused (ENOPROC) or accepted and dropped; never handled. */
    WAIT_UNTIL(atomic_load(&ak_exits) == 3);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ak_exits), 3);
    const int expect[3] = {77, SHOAL_EPANIC, SHOAL_ENOMEM};
    for (int i = 0; i < 3; i++) {
        shoal_pid_t c = atomic_load(&ak_kid_pid[i]);
        int found = -1;
        for (int j = 0; j < 3; j++)
            if (atomic_load(&ak_exit_from[j]) == c)
                found = j;
        CU_ASSERT_FATAL(found >= 0);
        CU_ASSERT_EQUAL(atomic_load(&ak_exit_status[found]), expect[i]);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, 1, NULL, 0), SHOAL_ENOPROC);
    }
    CU_ASSERT_EQUAL(atomic_load(&bad_init_msgs), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_init_terms), 0);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&bad_init_terms), 0);
}

/* A root actor whose init fails, with messages queued before init ran. */
static atomic_int gate_release;
static int gated_bad_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    shoal_test_wait_flag(&gate_release, AK_WAIT_S);
    return 5;
}
static void queued_messages_behind_failed_init_are_dropped(void)
{
    static const shoal_behaviour_t beh = {.name = "gated-bad-init",
                                          .init = gated_bad_init,
                                          .handle_message = bad_init_handle,
                                          .terminate = bad_init_term};
    enum { K = 9 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&bad_init_msgs, 0);
    atomic_store(&bad_init_terms, 0);
    atomic_store(&gate_release, 0);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &pid), SHOAL_OK);
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pid, 1, NULL, 0), SHOAL_OK);
    atomic_store(&gate_release, 1);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == 1 && shoal_test_stats(rt).msgs_dropped == K);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, K);
    CU_ASSERT_EQUAL(atomic_load(&bad_init_msgs), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad_init_terms), 0);
    CU_ASSERT(ak_gone(rt, pid));
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"init runs first, with args and zeroed state", init_runs_first_with_args_and_zeroed_state},
        {"state_size 0 gives NULL state", state_size_zero_gives_null_state},
        {"init failure ends the actor without messages",
         init_failure_ends_the_actor_without_messages},
        {"queued messages behind a failed init are dropped",
         queued_messages_behind_failed_init_are_dropped},
        {NULL, NULL},
    };
    return shoal_test_run("actor_init", cases);
}
