/* test_actor.c - an actor's life (core/actor/actor.c, turn.c): init before any
 * message, init failure, links between parent and children, terminate
 * exactly once with the right reason, panics (also inside terminate),
 * messages dropped behind a crash, state allocation and the actor counters.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define WAIT_S 20.0

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)

/* Polls until pid is gone (its mailboxes closed). A stop request to an actor
 * that is already ending is harmless. */
static bool gone(shoal_runtime_t *rt, shoal_pid_t pid)
{
    WAIT_UNTIL(shoal_runtime_stop_actor(rt, pid) == SHOAL_ENOPROC);
    return shoal_runtime_stop_actor(rt, pid) == SHOAL_ENOPROC;
}

enum {
    T_PING = 1,
    T_EXIT0 = 2,
    T_RET = 3,
    T_PANIC = 4,
    T_BLOCK = 5,
    T_STOPCHILD = 6,
    T_SPAWN = 7,
    T_DIE = 8
};

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

/* ---- a parent that records its children's exits ----------------------------------
 *
 * The parent's init spawns one child per entry of parent_kids (a behaviour
 * and args), publishing their PIDs. EXIT notices are recorded in order. */

#define MAX_KIDS 8
#define MAX_EXITS 32

typedef struct {
    const shoal_behaviour_t *beh[MAX_KIDS];
    const void *args[MAX_KIDS];
    int n;
} kids_t;

static _Atomic shoal_pid_t kid_pid[MAX_KIDS];
static atomic_int kids_spawned, kid_spawn_rc;
static _Atomic shoal_pid_t exit_from[MAX_EXITS];
static atomic_int exit_status[MAX_EXITS], exit_kind_bad;
static atomic_int exits; /* published last */
static atomic_int parent_terms, parent_term_reason, parent_stop_rc;

static void parent_reset(void)
{
    for (int i = 0; i < MAX_KIDS; i++)
        atomic_store(&kid_pid[i], SHOAL_PID_NONE);
    for (int i = 0; i < MAX_EXITS; i++) {
        atomic_store(&exit_from[i], SHOAL_PID_NONE);
        atomic_store(&exit_status[i], 12345);
    }
    atomic_store(&kids_spawned, 0);
    atomic_store(&kid_spawn_rc, 0);
    atomic_store(&exit_kind_bad, 0);
    atomic_store(&exits, 0);
    atomic_store(&parent_terms, 0);
    atomic_store(&parent_term_reason, 12345);
    atomic_store(&parent_stop_rc, 12345);
}

static int parent_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    const kids_t *k = args;
    for (int i = 0; i < k->n; i++) {
        shoal_pid_t c;
        int rc = shoal_spawn(ctx, k->beh[i], k->args[i], NULL, &c);
        if (rc != SHOAL_OK) {
            atomic_store(&kid_spawn_rc, rc);
            return rc;
        }
        atomic_store(&kid_pid[i], c);
    }
    atomic_store(&kids_spawned, k->n);
    return 0;
}

static int parent_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_EXIT) {
        int i = atomic_load(&exits);
        if (i < MAX_EXITS) {
            atomic_store(&exit_from[i], msg->from);
            atomic_store(&exit_status[i], msg->status);
        }
        if (msg->type != 0 || msg->size != 0)
            atomic_fetch_add(&exit_kind_bad, 1);
        atomic_store(&exits, i + 1);
        return 0;
    }
    if (msg->type == T_STOPCHILD) {
        int idx;
        memcpy(&idx, msg->data, sizeof idx);
        atomic_store(&parent_stop_rc, shoal_stop(ctx, atomic_load(&kid_pid[idx])));
    } else if (msg->type == T_DIE) {
        shoal_exit(ctx, 0);
    }
    return 0;
}

static void parent_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    atomic_store(&parent_term_reason, reason);
    atomic_fetch_add(&parent_terms, 1);
}

static const shoal_behaviour_t parent_beh = {.name = "parent",
                                             .init = parent_init,
                                             .handle_message = parent_handle,
                                             .terminate = parent_term};

/* ---- a child that ends on command, recording terminate ------------------------- */

#define KID_SLOTS 8
typedef struct {
    int slot;
} kid_state_t;

static atomic_int kid_terms[KID_SLOTS], kid_term_reason[KID_SLOTS], kid_handled[KID_SLOTS];
static atomic_int kid_entered, kid_release;

static void kid_reset(void)
{
    for (int i = 0; i < KID_SLOTS; i++) {
        atomic_store(&kid_terms[i], 0);
        atomic_store(&kid_term_reason[i], 12345);
        atomic_store(&kid_handled[i], 0);
    }
    atomic_store(&kid_entered, 0);
    atomic_store(&kid_release, 0);
}

static int kid_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((kid_state_t *)state)->slot = *(const int *)args;
    return 0;
}

static int kid_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    kid_state_t *s = state;
    atomic_fetch_add(&kid_handled[s->slot], 1);
    switch (msg->type) {
    case T_EXIT0:
        shoal_exit(ctx, 0);
        return 0;
    case T_RET:
        return 42;
    case T_PANIC:
        shoal_panic(ctx, "kid %d panics", s->slot);
    case T_BLOCK:
        atomic_store(&kid_entered, 1);
        shoal_test_wait_flag(&kid_release, WAIT_S);
        return -77; /* crash after the release */
    default:
        return 0;
    }
}

static void kid_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    kid_state_t *s = state;
    atomic_store(&kid_term_reason[s->slot], reason);
    atomic_fetch_add(&kid_terms[s->slot], 1);
}

static const shoal_behaviour_t kid_beh = {.name = "kid",
                                          .state_size = sizeof(kid_state_t),
                                          .init = kid_init,
                                          .handle_message = kid_handle,
                                          .terminate = kid_term};

static const int slot_ids[KID_SLOTS] = {0, 1, 2, 3, 4, 5, 6, 7};

/* Spawns a parent with n kids (slots 0..n-1) and waits for their PIDs. */
static shoal_pid_t spawn_family(shoal_runtime_t *rt, kids_t *k, int n)
{
    k->n = n;
    for (int i = 0; i < n; i++) {
        k->beh[i] = &kid_beh;
        k->args[i] = &slot_ids[i];
    }
    shoal_pid_t parent = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &parent_beh, k, NULL, &parent), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&kids_spawned) == n);
    CU_ASSERT_EQUAL(atomic_load(&kids_spawned), n);
    return parent;
}

/* The parent hears of each way a child can end, with the child's PID and
 * reason; each child's terminate runs once with that same reason. */
static void parent_gets_exit_for_each_way_of_ending(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    parent_reset();
    kid_reset();
    static kids_t k;
    shoal_pid_t parent = spawn_family(rt, &k, 5);
    shoal_pid_t kids[5];
    for (int i = 0; i < 5; i++)
        kids[i] = atomic_load(&kid_pid[i]);

    const int expect[5] = {0, 42, SHOAL_EPANIC, SHOAL_ESHUTDOWN, SHOAL_ESHUTDOWN};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kids[0], T_EXIT0, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kids[1], T_RET, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kids[2], T_PANIC, NULL, 0), SHOAL_OK);
    int idx = 3;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, T_STOPCHILD, &idx, sizeof idx), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, kids[4]), SHOAL_OK);

    WAIT_UNTIL(atomic_load(&exits) == 5);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&exits), 5);
    CU_ASSERT_EQUAL(atomic_load(&parent_stop_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&exit_kind_bad), 0);
    for (int i = 0; i < 5; i++) {
        int found = -1;
        for (int j = 0; j < 5; j++)
            if (atomic_load(&exit_from[j]) == kids[i])
                found = j;
        CU_ASSERT_FATAL(found >= 0);
        CU_ASSERT_EQUAL(atomic_load(&exit_status[found]), expect[i]);
        CU_ASSERT_EQUAL(atomic_load(&kid_terms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&kid_term_reason[i]), expect[i]);
        CU_ASSERT(gone(rt, kids[i]));
    }
    /* The parent is unaffected: links tell, they do not kill upwards. */
    CU_ASSERT_EQUAL(atomic_load(&parent_terms), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, T_PING, NULL, 0), SHOAL_OK);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, 6);
    CU_ASSERT_EQUAL(s.actors_ended, 5);
    CU_ASSERT_EQUAL(s.actors_live, 1);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&parent_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&parent_term_reason), SHOAL_ESHUTDOWN);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(atomic_load(&kid_terms[i]), 1); /* not again at destroy */
}

/* When the parent ends, its children are stopped. */
static void children_stop_when_parent_ends(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    parent_reset();
    kid_reset();
    static kids_t k;
    shoal_pid_t parent = spawn_family(rt, &k, 4);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, T_DIE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == 5 && shoal_test_stats(rt).actors_live == 0);
    CU_ASSERT_EQUAL(atomic_load(&parent_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&parent_term_reason), 0);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(atomic_load(&kid_terms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&kid_term_reason[i]), SHOAL_ESHUTDOWN);
        shoal_pid_t c = atomic_load(&kid_pid[i]);
        CU_ASSERT(gone(rt, c));
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, T_PING, NULL, 0), SHOAL_ENOPROC);
    }
    CU_ASSERT(gone(rt, parent));
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, 5);
    CU_ASSERT_EQUAL(s.actors_ended, 5);
    CU_ASSERT_EQUAL(s.actors_live, 0);
    shoal_runtime_destroy(rt);
}

/* Three generations: stopping the root stops the grandchildren too. */
static _Atomic shoal_pid_t chain_pid[3];
static atomic_int chain_terms[3], chain_reason[3];

static int chain_init(shoal_ctx_t *ctx, void *state, const void *args);
static int chain_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return 0;
}
static void chain_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    int level = *(int *)state;
    atomic_store(&chain_reason[level], reason);
    atomic_fetch_add(&chain_terms[level], 1);
}
static const shoal_behaviour_t chain_beh = {.name = "chain",
                                            .state_size = sizeof(int),
                                            .init = chain_init,
                                            .handle_message = chain_handle,
                                            .terminate = chain_term};
static const int levels[3] = {0, 1, 2};
static int chain_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    int level = *(const int *)args;
    *(int *)state = level;
    atomic_store(&chain_pid[level], shoal_self(ctx));
    if (level < 2) {
        shoal_pid_t c;
        return shoal_spawn(ctx, &chain_beh, &levels[level + 1], NULL, &c);
    }
    return 0;
}

static void stop_cascades_to_grandchildren(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    for (int i = 0; i < 3; i++) {
        atomic_store(&chain_pid[i], SHOAL_PID_NONE);
        atomic_store(&chain_terms[i], 0);
        atomic_store(&chain_reason[i], 12345);
    }
    shoal_pid_t root;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &chain_beh, &levels[0], NULL, &root), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&chain_pid[2]) != SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, root), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_live == 0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(atomic_load(&chain_terms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&chain_reason[i]), SHOAL_ESHUTDOWN);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, atomic_load(&chain_pid[i]), 1, NULL, 0),
                        SHOAL_ENOPROC);
    }
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 3);
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
    parent_reset();
    atomic_store(&bad_init_msgs, 0);
    atomic_store(&bad_init_terms, 0);
    static const int how[3] = {0, 1, 2};
    static kids_t k = {.beh = {&bad_init_beh, &bad_init_beh, &bad_init_beh},
                       .args = {&how[0], &how[1], &how[2]},
                       .n = 3};
    shoal_pid_t parent;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &parent_beh, &k, NULL, &parent), SHOAL_OK);
    /* Kids may already be gone when the test sends: those sends are
     * refused (ENOPROC) or accepted and dropped; never handled. */
    WAIT_UNTIL(atomic_load(&exits) == 3);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&exits), 3);
    const int expect[3] = {77, SHOAL_EPANIC, SHOAL_ENOMEM};
    for (int i = 0; i < 3; i++) {
        shoal_pid_t c = atomic_load(&kid_pid[i]);
        int found = -1;
        for (int j = 0; j < 3; j++)
            if (atomic_load(&exit_from[j]) == c)
                found = j;
        CU_ASSERT_FATAL(found >= 0);
        CU_ASSERT_EQUAL(atomic_load(&exit_status[found]), expect[i]);
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
    shoal_test_wait_flag(&gate_release, WAIT_S);
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
    CU_ASSERT(gone(rt, pid));
    shoal_runtime_destroy(rt);
}

/* ---- crashes ----------------------------------------------------------------------- */

/* Messages queued behind a crash are dropped and counted; a queued call
 * is answered with SHOAL_ENOPROC. */
static shoal_runtime_t *crash_rt;
static _Atomic shoal_pid_t crash_pid;
static atomic_int crash_call_rc, crash_call_status;

static void *crash_call_thread(void *arg)
{
    (void)arg;
    shoal_answer_t a;
    int rc = shoal_runtime_call(crash_rt, atomic_load(&crash_pid), 1, NULL, 0, 10000, &a);
    atomic_store(&crash_call_status, a.status);
    shoal_answer_release(&a);
    atomic_store(&crash_call_rc, rc);
    return NULL;
}

static void messages_queued_behind_a_crash_are_dropped(void)
{
    enum { K = 10 };
    shoal_runtime_t *rt = crash_rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    parent_reset();
    kid_reset();
    static kids_t k;
    shoal_pid_t parent = spawn_family(rt, &k, 1);
    shoal_pid_t kid = atomic_load(&kid_pid[0]);
    atomic_store(&crash_pid, kid);
    atomic_store(&crash_call_rc, 12345);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kid, T_BLOCK, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_wait_flag(&kid_entered, WAIT_S), 1);
    uint64_t sent0 = shoal_test_stats(rt).msgs_sent;
    for (int i = 0; i < K; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, kid, T_PING, NULL, 0), SHOAL_OK);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, crash_call_thread, NULL), 0);
    /* The call is queued once it is counted as sent. */
    WAIT_UNTIL(shoal_test_stats(rt).msgs_sent == sent0 + K + 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_sent, sent0 + K + 1);
    atomic_store(&kid_release, 1); /* the handler returns -77: a crash */
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&crash_call_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&crash_call_status), SHOAL_ENOPROC);
    WAIT_UNTIL(atomic_load(&exits) == 1);
    CU_ASSERT_EQUAL(atomic_load(&exit_status[0]), -77);
    CU_ASSERT_EQUAL(atomic_load(&exit_from[0]), kid);
    CU_ASSERT_EQUAL(atomic_load(&kid_handled[0]), 1); /* only the one that crashed */
    CU_ASSERT_EQUAL(atomic_load(&kid_terms[0]), 1);
    CU_ASSERT_EQUAL(atomic_load(&kid_term_reason[0]), -77);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, K + 1);
    CU_ASSERT(gone(rt, kid));
    (void)parent;
    shoal_runtime_destroy(rt);
}

/* A panic inside terminate: terminate is not run again, the actor ends. */
static atomic_int tp_terms, tp_msgs;
static int tp_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    atomic_fetch_add(&tp_msgs, 1);
    if (msg->type == T_PANIC)
        shoal_panic(ctx, "handler panics first");
    return 0;
}
static void tp_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)state;
    (void)reason;
    atomic_fetch_add(&tp_terms, 1);
    shoal_panic(ctx, "terminate panics");
}
static const shoal_behaviour_t tp_beh = {
    .name = "term-panic", .handle_message = tp_handle, .terminate = tp_term};

static void panic_in_terminate_does_not_loop(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    parent_reset();
    atomic_store(&tp_terms, 0);
    atomic_store(&tp_msgs, 0);
    static kids_t k = {.beh = {&tp_beh, &tp_beh, &tp_beh}, .args = {NULL, NULL, NULL}, .n = 3};
    shoal_pid_t parent;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &parent_beh, &k, NULL, &parent), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&kids_spawned) == 3);
    shoal_pid_t a = atomic_load(&kid_pid[0]), b = atomic_load(&kid_pid[1]),
                c = atomic_load(&kid_pid[2]);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, a), SHOAL_OK);             /* stop, then panic */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, T_PANIC, NULL, 0), SHOAL_OK); /* panic twice */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, T_EXIT0, NULL, 0), SHOAL_OK); /* plain msg */
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, c), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&exits) == 3);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&exits), 3);
    CU_ASSERT_EQUAL(atomic_load(&tp_terms), 3);
    for (int i = 0; i < 3; i++) {
        /* The panic in terminate is the last word: the reason is EPANIC. */
        CU_ASSERT_EQUAL(atomic_load(&exit_status[i]), SHOAL_EPANIC);
    }
    CU_ASSERT(gone(rt, a) && gone(rt, b) && gone(rt, c));
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_ended, 3);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&tp_terms), 3);
}

/* ---- counters ------------------------------------------------------------------------ */

static int plain_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    return msg->type == T_RET ? 1 : 0;
}

static void actor_counters_are_exact(void)
{
    static const shoal_behaviour_t beh = {.name = "plain", .handle_message = plain_handle};
    enum { N = 300, STOPPED = 100, FAILED = 50 };
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    static shoal_pid_t pids[N];
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &pids[i]), SHOAL_OK);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, N);
    CU_ASSERT_EQUAL(s.actors_live, N);
    CU_ASSERT_EQUAL(s.actors_ended, 0);
    /* PIDs are distinct and never 0. */
    int dup = 0;
    for (int i = 0; i < N; i++) {
        dup += pids[i] == SHOAL_PID_NONE;
        for (int j = i + 1; j < N; j++)
            dup += pids[i] == pids[j];
    }
    CU_ASSERT_EQUAL(dup, 0);
    for (int i = 0; i < STOPPED; i++)
        CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pids[i]), SHOAL_OK);
    for (int i = STOPPED; i < STOPPED + FAILED; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pids[i], T_RET, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == STOPPED + FAILED &&
               shoal_test_stats(rt).actors_live == N - STOPPED - FAILED);
    s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, N);
    CU_ASSERT_EQUAL(s.actors_ended, STOPPED + FAILED);
    CU_ASSERT_EQUAL(s.actors_live, N - STOPPED - FAILED);
    /* Slots are reused with a new generation: old PIDs stay dead. */
    shoal_pid_t fresh[STOPPED];
    for (int i = 0; i < STOPPED; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, &fresh[i]), SHOAL_OK);
    for (int i = 0; i < STOPPED + FAILED; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pids[i], 1, NULL, 0), SHOAL_ENOPROC);
    for (int i = 0; i < STOPPED; i++)
        for (int j = 0; j < N; j++)
            CU_ASSERT_NOT_EQUAL(fresh[i], pids[j]);
    s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, N + STOPPED);
    CU_ASSERT_EQUAL(s.actors_live, N - FAILED);
    shoal_runtime_destroy(rt);
}

static void spawn_rejects_bad_arguments(void)
{
    static const shoal_behaviour_t no_handler = {.name = "no-handler"};
    static const shoal_behaviour_t beh = {.name = "plain", .handle_message = plain_handle};
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pid;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, NULL, NULL, NULL, &pid), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &no_handler, NULL, NULL, &pid), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, NULL, NULL), SHOAL_EINVAL);
    shoal_spawn_opts_t o = {.mailbox_limit = SHOAL_MAILBOX_MAX + 1};
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, &o, &pid), SHOAL_EINVAL);
    o.mailbox_limit = SHOAL_MAILBOX_MAX;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, &o, &pid), SHOAL_OK);
    o.mailbox_limit = SHOAL_MAILBOX_UNBOUNDED;
    CU_ASSERT_EQUAL(shoal_runtime_spawn(rt, &beh, NULL, &o, &pid), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_spawned, 2);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 2);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"init runs first, with args and zeroed state", init_runs_first_with_args_and_zeroed_state},
        {"state_size 0 gives NULL state", state_size_zero_gives_null_state},
        {"parent gets EXIT for each way of ending", parent_gets_exit_for_each_way_of_ending},
        {"children stop when the parent ends", children_stop_when_parent_ends},
        {"stop cascades to grandchildren", stop_cascades_to_grandchildren},
        {"init failure ends the actor without messages",
         init_failure_ends_the_actor_without_messages},
        {"queued messages behind a failed init are dropped",
         queued_messages_behind_failed_init_are_dropped},
        {"messages queued behind a crash are dropped", messages_queued_behind_a_crash_are_dropped},
        {"panic in terminate does not loop", panic_in_terminate_does_not_loop},
        {"actor counters are exact", actor_counters_are_exact},
        {"spawn rejects bad arguments", spawn_rejects_bad_arguments},
        {NULL, NULL},
    };
    return shoal_test_run("actor", cases);
}
