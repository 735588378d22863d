/* test_send_actor.c - an actor's shoal_send (core/actor/send.c): its
 * common case runs a path of its own (a small copied payload to a local
 * actor that is not a group), every other case the general one. Each case
 * here has an actor send a script of messages in one turn, across that
 * line and back, and checks each return code, the counters, and what
 * arrived: a bounded receiver's limit and refusals, dead and impossible
 * PIDs, every payload size to 64 bytes, a pool's PID, and more sends in
 * one turn than a thread's stack of envelopes holds.
 *
 * Handlers never call CUnit (it is not thread-safe): they record what they
 * saw in atomics, and the test thread asserts after synchronising on them.
 */
#include <string.h>

#include "send_kit.h"

#include "runtime/runtime.h" /* SHOAL__PID_REMOTE */

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, SK_WAIT_S)

/* ---- the sender: runs a script of sends in one turn ------------------------------ */

enum { T_RUN = 40, MAX_STEPS = 6000 };

typedef struct {
    shoal_pid_t to;
    uint32_t type;
    const void *data;
    size_t size;
} step_t;

static step_t steps[MAX_STEPS];
static int rcs[MAX_STEPS];
static int nsteps;
static long indices[MAX_STEPS];
static atomic_int ran;

/* Written before T_RUN is sent; the handler reads them after its pop (the
 * mailbox's release/acquire pair orders them), and the test thread reads
 * rcs after it saw `ran` (seq_cst). */
static int sender_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->type != T_RUN)
        return 0;
    for (int i = 0; i < nsteps; i++)
        rcs[i] = shoal_send(ctx, steps[i].to, steps[i].type, steps[i].data, steps[i].size);
    atomic_store(&ran, 1);
    return 0;
}

static const shoal_behaviour_t sender_beh = {.name = "sender", .handle_message = sender_handle};

/* Runs the script on a fresh sender; the counters it moved are *before's
 * subtracted from the runtime's after (the T_RUN itself not counted). */
static void run_script(shoal_runtime_t *rt, shoal_runtime_stats_t *moved)
{
    shoal_pid_t s;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &sender_beh, NULL, NULL, &s), SHOAL_OK);
    atomic_store(&ran, 0);
    shoal_runtime_stats_t a = shoal_test_stats(rt);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_send(rt, s, T_RUN, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_test_wait_flag(&ran, SK_WAIT_S), 1);
    shoal_runtime_stats_t b = shoal_test_stats(rt);
    moved->msgs_sent = b.msgs_sent - a.msgs_sent - 1;
    moved->msgs_refused = b.msgs_refused - a.msgs_refused;
    moved->msgs_noproc = b.msgs_noproc - a.msgs_noproc;
}

/* The script: n T_DATA sends to `to`, their payloads the indices 0..n-1
 * (the blocker checks they arrive in order). */
static void data_script(shoal_pid_t to, int n)
{
    nsteps = n;
    for (int i = 0; i < n; i++) {
        indices[i] = i;
        steps[i] = (step_t){to, T_DATA, &indices[i], sizeof(long)};
    }
}

/* How many of rcs[from..to) are rc. */
static int rcs_are(int from, int to, int rc)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += rcs[i] == rc;
    return n;
}

/* ---- the cases ----------------------------------------------------------------------- */

/* A receiver bounded to 3, blocked: 8 sends, the first 3 SHOAL_OK and the
 * other 5 SHOAL_EFULL, each refusal counted once; the 3 arrive in order.
 * Then 3 more from another turn: the refused envelopes went back where
 * they came from, and the thread sends on. */
static void bounded_receiver_refuses_past_its_limit(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t r = sk_spawn_blocked(rt, 3);
    data_script(r, 8);
    shoal_runtime_stats_t m;
    run_script(rt, &m);
    CU_ASSERT_EQUAL(rcs_are(0, 3, SHOAL_OK), 3);
    CU_ASSERT_EQUAL(rcs_are(3, 8, SHOAL_EFULL), 5);
    CU_ASSERT_EQUAL(m.msgs_sent, 3);
    CU_ASSERT_EQUAL(m.msgs_refused, 5);
    CU_ASSERT_EQUAL(m.msgs_noproc, 0);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == 3);
    data_script(r, 3);
    atomic_store(&sk_last_index, -1);
    run_script(rt, &m);
    CU_ASSERT_EQUAL(rcs_are(0, 3, SHOAL_OK), 3);
    WAIT_UNTIL(atomic_load(&sk_data) == 6);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 6);
    CU_ASSERT_EQUAL(atomic_load(&sk_order_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    shoal_runtime_destroy(rt);
}

/* An actor that ended, SHOAL_PID_NONE, a slot past max_actors and a
 * remote slot with no gateway: SHOAL_ENOPROC each, counted; nothing sent. */
static void dead_and_impossible_pids_are_enoproc(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t dead = sk_spawn_blocked(rt, 0);
    atomic_store(&sk_exit_after, 1);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(shoal_runtime_send(rt, dead, T_DATA, NULL, 0) == SHOAL_ENOPROC);
    shoal_pid_t far = (shoal_pid_t)1 << 32 | (SHOAL__PID_REMOTE - 1);
    shoal_pid_t remote = (shoal_pid_t)1 << 32 | SHOAL__PID_REMOTE | 5;
    shoal_pid_t to[] = {dead, SHOAL_PID_NONE, far, remote};
    nsteps = 4;
    for (int i = 0; i < nsteps; i++)
        steps[i] = (step_t){to[i], T_DATA, NULL, 0};
    shoal_runtime_stats_t m;
    run_script(rt, &m);
    CU_ASSERT_EQUAL(rcs_are(0, 4, SHOAL_ENOPROC), 4);
    CU_ASSERT_EQUAL(m.msgs_sent, 0);
    CU_ASSERT_EQUAL(m.msgs_noproc, 4);
    CU_ASSERT_EQUAL(m.msgs_refused, 0);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 0);
    shoal_runtime_destroy(rt);
}

/* Every payload size from 0 to 64 (inline up to 32 bytes, on the heap
 * past it), each byte its own value, arrives intact; NULL data with a size
 * is SHOAL_EINVAL and sends nothing, NULL with size 0 is an empty message. */
static atomic_int pay_good, pay_bad;

static int payload_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    const unsigned char *d = msg->data;
    bool ok = msg->size == msg->type && (msg->size == 0) == (d == NULL);
    for (size_t i = 0; ok && i < msg->size; i++)
        ok = d[i] == (unsigned char)(msg->size * 7 + i);
    atomic_fetch_add(ok ? &pay_good : &pay_bad, 1);
    return 0;
}

static const shoal_behaviour_t payload_beh = {.name = "payload", .handle_message = payload_handle};

static void every_payload_size_arrives_intact(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&pay_good, 0);
    atomic_store(&pay_bad, 0);
    shoal_pid_t r;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &payload_beh, NULL, NULL, &r), SHOAL_OK);
    static unsigned char bufs[65][64];
    nsteps = 0;
    for (size_t n = 0; n <= 64; n++) {
        for (size_t i = 0; i < n; i++)
            bufs[n][i] = (unsigned char)(n * 7 + i);
        steps[nsteps++] = (step_t){r, (uint32_t)n, n != 0 ? bufs[n] : NULL, n};
    }
    steps[nsteps++] = (step_t){r, 5, NULL, 5};
    shoal_runtime_stats_t m;
    run_script(rt, &m);
    CU_ASSERT_EQUAL(rcs_are(0, 65, SHOAL_OK), 65);
    CU_ASSERT_EQUAL(rcs[65], SHOAL_EINVAL);
    CU_ASSERT_EQUAL(m.msgs_sent, 65);
    WAIT_UNTIL(atomic_load(&pay_good) + atomic_load(&pay_bad) == 65);
    CU_ASSERT_EQUAL(atomic_load(&pay_good), 65);
    CU_ASSERT_EQUAL(atomic_load(&pay_bad), 0);
    shoal_runtime_destroy(rt);
}

/* A forward pool's PID: routed to its workers (every message once), as a
 * send from a thread is. */
static atomic_int pool_handled;

static int counted_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    if (msg->type == T_DATA)
        atomic_fetch_add(&pool_handled, 1);
    return 0;
}

static const shoal_behaviour_t counted_beh = {.name = "counted", .handle_message = counted_handle};

static void a_pool_pid_is_routed_to_its_workers(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    atomic_store(&pool_handled, 0);
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.worker = &counted_beh;
    spec.size = 3;
    spec.mailbox = SHOAL_MAILBOX_UNBOUNDED;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &spec, &pool), SHOAL_OK);
    data_script(pool, 300);
    shoal_runtime_stats_t m;
    run_script(rt, &m);
    CU_ASSERT_EQUAL(rcs_are(0, 300, SHOAL_OK), 300);
    WAIT_UNTIL(atomic_load(&pool_handled) == 300);
    CU_ASSERT_EQUAL(atomic_load(&pool_handled), 300);
    shoal_runtime_destroy(rt);
}

/* 5000 sends in one turn to a blocked unbounded receiver: more than a
 * thread's stack of envelopes holds, so the path that takes from it runs
 * dry and the general one refills it, again and again; every send
 * SHOAL_OK, all 5000 handled in the order sent. */
static void more_sends_than_a_stack_of_envelopes(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sk_reset();
    shoal_pid_t r = sk_spawn_blocked(rt, 0);
    data_script(r, 5000);
    shoal_runtime_stats_t m;
    run_script(rt, &m);
    CU_ASSERT_EQUAL(rcs_are(0, 5000, SHOAL_OK), 5000);
    CU_ASSERT_EQUAL(m.msgs_sent, 5000);
    atomic_store(&sk_release, 1);
    WAIT_UNTIL(atomic_load(&sk_data) == 5000);
    CU_ASSERT_EQUAL(atomic_load(&sk_data), 5000);
    CU_ASSERT_EQUAL(atomic_load(&sk_order_bad), 0);
    CU_ASSERT_EQUAL(atomic_load(&sk_bad), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a bounded receiver refuses past its limit", bounded_receiver_refuses_past_its_limit},
        {"dead and impossible PIDs are SHOAL_ENOPROC", dead_and_impossible_pids_are_enoproc},
        {"every payload size arrives intact", every_payload_size_arrives_intact},
        {"a pool's PID is routed to its workers", a_pool_pid_is_routed_to_its_workers},
        {"more sends than a stack of envelopes", more_sends_than_a_stack_of_envelopes},
        {NULL, NULL},
    };
    return shoal_test_run("send_actor", cases);
}
