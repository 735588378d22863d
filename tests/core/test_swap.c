/* test_swap.c - a pool's start and its worker swap (core/pool/pool.c start,
 * core/pool/swap.c), and reading a pool from its record (stats.c peek):
 *
 *   - a pool has started only when every first worker's init has run: a
 *     failing, panicking or slow init is what shoal_runtime_spawn_pool
 *     returns (or waits for), with the init's own text for the host, and a
 *     failed start leaves nothing running -- nested pools too;
 *   - PREPARE starts the new workers beside the old ones and answers only
 *     when all have run init; one failure stops them all, answers with its
 *     text, and the old workers never notice; COMMIT puts the new ones in
 *     place (the old ones finish their queues), ABORT drops them; a pull
 *     pool's new members take nothing from its buffer before COMMIT;
 *   - peek reads counters, target and state from the record without the
 *     pool's actor; quiet is true once actor and workers have all ended.
 *
 * Workers carry a tag in their args: a T_WHO call answers it, so the test
 * knows which code answered. Init may fail, panic or wait on a gate.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "shoal/args.h"
#include "support.h"

#define WAIT_S 20.0
#define TMO 10000u
#define THREADS 4u

enum { T_WHO = 2, T_JOB = 3 };
enum { I_OK = 0, I_FAIL = 1, I_PANIC = 2, I_GATE = 3 };

typedef struct {
    int tag;
    int init; /* I_* */
} wargs_t;

static atomic_int inits, gate, handled[3];
static atomic_int hold_old, old_gate; /* tag 0's jobs wait on old_gate while hold_old */

static int w_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    const wargs_t *a = args;
    *(int *)state = a->tag;
    if (a->init == I_GATE) {
        double end = shoal_test_now() + WAIT_S;
        while (!atomic_load(&gate) && shoal_test_now() < end)
            shoal_test_nap();
    }
    atomic_fetch_add(&inits, 1);
    if (a->init == I_FAIL)
        return shoal_arg_error(ctx, NULL, NULL, "tag %d refuses to start", a->tag);
    if (a->init == I_PANIC)
        shoal_panic(ctx, "tag %d panics in init", a->tag);
    return SHOAL_OK;
}

static int w_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    int tag = *(int *)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_JOB && tag == 0 && atomic_load(&hold_old))
        shoal_test_wait_flag(&old_gate, WAIT_S);
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_JOB && tag >= 0 && tag < 3)
        atomic_fetch_add(&handled[tag], 1);
    return 0;
}

static int w_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx, (void)msg;
    return shoal_reply_set(reply, T_WHO, state, sizeof(int));
}

static const shoal_behaviour_t w = {.name = "w",
                                    .state_size = sizeof(int),
                                    .init = w_init,
                                    .handle_message = w_message,
                                    .handle_call = w_call};

static shoal_runtime_t *begin(void)
{
    atomic_store(&inits, 0);
    atomic_store(&gate, 0);
    atomic_store(&hold_old, 0);
    atomic_store(&old_gate, 0);
    for (int i = 0; i < 3; i++)
        atomic_store(&handled[i], 0);
    return shoal_test_runtime_logged(THREADS, SHOAL_LOG_INFO);
}

static void spec_of(shoal_pool_spec_t *s, uint32_t size, const wargs_t *a)
{
    shoal_pool_spec_init(s);
    s->name = "p";
    s->worker = &w;
    s->worker_args = a;
    s->size = size;
    s->max_size = 16;
    s->mailbox = 1000;
}

/* The tag of the worker that answers a call to the pool. */
static int who(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_answer_t a;
    int tag = -1;
    if (shoal_runtime_call(rt, pool, T_WHO, NULL, 0, TMO, &a) == SHOAL_OK) {
        if (a.status == SHOAL_OK && a.size == sizeof tag)
            memcpy(&tag, a.data, sizeof tag);
        shoal_answer_release(&a);
    }
    return tag;
}

static uint64_t live(shoal_runtime_t *rt) { return shoal_test_stats(rt).actors_live; }

/* ---- starting ------------------------------------------------------------------- */

static void start_waits_for_every_init(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = live(rt);
    wargs_t a = {.tag = 0, .init = I_OK};
    shoal_pool_spec_t s;
    spec_of(&s, 5, &a);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&inits), 5); /* all ran before it returned */
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0);
    shoal_runtime_destroy(rt);
}

/* One worker of five refuses: the start fails with its error and text,
 * and nothing is left running. */
static void start_fails_with_the_init_error(void)
{
    static const int modes[] = {I_FAIL, I_PANIC};
    static const int rcs[] = {SHOAL_EINVAL, SHOAL_EPANIC};
    static const char *const texts[] = {"tag 1 refuses to start", "panic: tag 1 panics in init"};
    for (int m = 0; m < 2; m++) {
        shoal_runtime_t *rt = begin();
        CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
        uint64_t live0 = live(rt);
        wargs_t a = {.tag = 1, .init = modes[m]};
        shoal_pool_spec_t s;
        spec_of(&s, 5, &a);
        shoal_pid_t pool = 77;
        char why[300];
        CU_ASSERT_EQUAL(shoal__pool_start(rt, &s, NULL, TMO, &pool, why, sizeof why), rcs[m]);
        CU_ASSERT_EQUAL(pool, SHOAL_PID_NONE);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, texts[m]));
        if (strstr(why, texts[m]) == NULL)
            fprintf(stderr, "\n    why: %s\n", why);
        SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
        CU_ASSERT_EQUAL(live(rt), live0); /* the pool and its other workers are gone */
        /* The public call says the same. */
        CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pool), rcs[m]);
        SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
        CU_ASSERT_EQUAL(live(rt), live0);
        shoal_runtime_destroy(rt);
    }
}

/* Nested two deep: a leaf two levels down that fails fails the root. */
static void nested_start_fails_from_a_leaf(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = live(rt);
    wargs_t a = {.tag = 2, .init = I_FAIL};
    shoal_pool_spec_t leaf, mid, top;
    spec_of(&leaf, 3, &a);
    spec_of(&mid, 2, NULL);
    mid.worker = NULL;
    mid.worker_pool = &leaf;
    spec_of(&top, 2, NULL);
    top.worker = NULL;
    top.worker_pool = &mid;
    shoal_pid_t pool;
    char why[300];
    CU_ASSERT_EQUAL(shoal__pool_start(rt, &top, NULL, TMO, &pool, why, sizeof why), SHOAL_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "tag 2 refuses to start"));
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0);
    /* And when all start, the whole tree has run init before it returns. */
    a.init = I_OK;
    atomic_store(&inits, 0);
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start(rt, &top, NULL, TMO, &pool, why, sizeof why), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&inits), 2 * 2 * 3);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* An init that does not finish in time: SHOAL_ETIMEDOUT, the pool stopped
 * (once the init returns, it ends). */
static void start_times_out(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    uint64_t live0 = live(rt);
    wargs_t a = {.tag = 0, .init = I_GATE};
    shoal_pool_spec_t s;
    spec_of(&s, 1, &a);
    shoal_pid_t pool;
    char why[300];
    CU_ASSERT_EQUAL(shoal__pool_start(rt, &s, NULL, 100, &pool, why, sizeof why), SHOAL_ETIMEDOUT);
    CU_ASSERT_STRING_EQUAL(why, "its workers did not start within 100 ms");
    atomic_store(&gate, 1);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0);
    shoal_runtime_destroy(rt);
}

/* ---- the swap ---------------------------------------------------------------------- */

/* A step of the swap, from this thread as the host sends it. */
static int step(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, const void *data, size_t size,
                void *out, size_t out_size)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, type, data, size, TMO, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && out != NULL) {
        CU_ASSERT_EQUAL(a.size, out_size);
        if (a.size == out_size)
            memcpy(out, a.data, out_size);
    }
    shoal_answer_release(&a);
    return rc;
}

static shoal_pool_swap_result_t prepare(shoal_runtime_t *rt, shoal_pid_t pool, const wargs_t *a,
                                        uint32_t size)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    spec_of(&sw->chain[0], size, a);
    sw->size = size;
    shoal_pool_swap_result_t r = {.status = 12345};
    int rc = step(rt, pool, SHOAL__POOL_SWAP, &sw, sizeof sw, &r, sizeof r);
    CU_ASSERT_EQUAL(rc, SHOAL_OK);
    if (rc != SHOAL_OK)
        fprintf(stderr, "\n    prepare: %s\n", shoal_errname(rc));
    return r;
}

/* A PREPARE on a thread of its own, for a slow init. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    const wargs_t *a;
    uint32_t size;
    shoal_pool_swap_result_t r;
    atomic_int answered;
} prep_t;

static void *prepare_thread(void *arg)
{
    prep_t *pr = arg;
    pr->r = prepare(pr->rt, pr->pool, pr->a, pr->size);
    atomic_store(&pr->answered, 1);
    return NULL;
}

static void send_jobs(shoal_runtime_t *rt, shoal_pid_t pool, int n)
{
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_JOB, &i, sizeof i), SHOAL_OK);
}

/* PREPARE with an init that fails: the answer carries the error and its
 * text, the new workers are stopped, the old ones serve on; ABORT after it
 * is harmless. */
static void prepare_failure_changes_nothing(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t old = {.tag = 0, .init = I_OK}, bad = {.tag = 1, .init = I_FAIL};
    shoal_pool_spec_t s;
    spec_of(&s, 3, &old);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    uint64_t live0 = live(rt);
    shoal_pool_swap_result_t r = prepare(rt, pool, &bad, 3);
    CU_ASSERT_EQUAL(r.status, SHOAL_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "tag 1 refuses to start"));
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, NULL, 0, NULL, 0), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0); /* the new ones are gone, the old ones stay */
    send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[0]) == 30, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 30);
    CU_ASSERT_EQUAL(atomic_load(&handled[1]), 0);
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    /* Nothing prepared: COMMIT refuses. */
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, NULL, 0, NULL, 0), SHOAL_EINVAL);
    shoal_pool_stats_t st;
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.retiring, 0);
    shoal_runtime_destroy(rt);
}

/* PREPARE answers only when every new worker's init has run; until
 * COMMIT, the old code serves; after it, the new; ABORT drops a prepared
 * swap. The new size is the swap's. */
static void prepare_commit_and_abort(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t old = {.tag = 0, .init = I_OK}, slow = {.tag = 1, .init = I_GATE},
            next = {.tag = 2, .init = I_OK};
    shoal_pool_spec_t s;
    spec_of(&s, 2, &old);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    uint64_t live0 = live(rt);

    /* A prepared swap that is aborted. */
    shoal_pool_swap_result_t r = prepare(rt, pool, &next, 4);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(r.started, 4);
    CU_ASSERT_EQUAL(live(rt), live0 + 4); /* beside the old ones */
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, NULL, 0, NULL, 0), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0);

    /* A slow init: no answer until every new worker has run init. */
    prep_t pr = {.rt = rt, .pool = pool, .a = &slow, .size = 3};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, prepare_thread, &pr), 0);
    /* Spawned, their init waiting on the gate: 3 new workers, and the
     * record of the thread blocked in its call. */
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0 + 3 + 1, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0 + 3 + 1);
    /* One swap at a time; nothing to commit yet. */
    shoal_pool_swap_t *sw2 = calloc(1, sizeof *sw2);
    spec_of(&sw2->chain[0], 3, &next);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP, &sw2, sizeof sw2, NULL, 0), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, NULL, 0, NULL, 0), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&pr.answered), 0); /* the inits wait on the gate */
    atomic_store(&gate, 1);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(pr.r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(pr.r.started, 3);
    send_jobs(rt, pool, 20);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[0]) == 20, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 20); /* still the old code */
    uint32_t n = 0;
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, NULL, 0, &n, sizeof n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2); /* two slots replaced, one added */
    CU_ASSERT_EQUAL(who(rt, pool), 1);
    send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[1]) == 30, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[1]), 30);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 20);
    shoal_pool_stats_t st;
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.target_size, 3);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0 + 1, WAIT_S); /* the two old ones have ended */
    CU_ASSERT_EQUAL(live(rt), live0 + 1);

    /* A smaller swap: the extra old workers retire too. */
    r = prepare(rt, pool, &next, 1);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, NULL, 0, &n, sizeof n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(who(rt, pool), 2);
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.target_size, 1);
    shoal_runtime_destroy(rt);
}

/* A pull pool's new members, prepared while its buffer holds items (the
 * old members held at a gate), take none of them: the old code serves
 * every item until COMMIT, and after an ABORT the new code has handled
 * none (they took items from their first turn on: a reload that then
 * failed had run its new code). After a second PREPARE and its COMMIT, the
 * new code serves. */
static void pull_members_serve_only_after_commit(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t old = {.tag = 0, .init = I_OK}, next = {.tag = 2, .init = I_OK};
    shoal_pool_spec_t s;
    spec_of(&s, 2, &old);
    s.kind = SHOAL_POOL_KIND_PULL;
    s.buffer = 1000;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    for (int round = 0; round < 2; round++) {
        int base = atomic_load(&handled[0]);
        atomic_store(&old_gate, 0);
        atomic_store(&hold_old, 1);
        send_jobs(rt, pool, 300);
        shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
        spec_of(&sw->chain[0], 3, &next);
        sw->chain[0].kind = SHOAL_POOL_KIND_PULL;
        sw->chain[0].buffer = 1000;
        sw->size = 3;
        shoal_pool_swap_result_t r = {.status = 12345};
        CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP, &sw, sizeof sw, &r, sizeof r), SHOAL_OK);
        CU_ASSERT_EQUAL(r.status, SHOAL_OK);
        shoal_test_nap(); /* the new members' first turns, with 300 items waiting */
        CU_ASSERT_EQUAL(atomic_load(&handled[2]), 0);
        atomic_store(&hold_old, 0);
        atomic_store(&old_gate, 1);
        SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[0]) + atomic_load(&handled[2]) == base + 300,
                              WAIT_S);
        CU_ASSERT_EQUAL(atomic_load(&handled[0]), base + 300);
        CU_ASSERT_EQUAL(atomic_load(&handled[2]), 0);
        if (round == 0)
            CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, NULL, 0, NULL, 0), SHOAL_OK);
    }
    uint32_t n = 0;
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, NULL, 0, &n, sizeof n), SHOAL_OK);
    send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[2]) == 30, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[2]), 30);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 600);
    shoal_runtime_destroy(rt);
}

/* Only a thread may send the swap steps: an actor gets SHOAL_ENOTSUP. */
static int asker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST) {
        shoal_pid_t to;
        memcpy(&to, msg->data, sizeof to);
        shoal_ref_t ref;
        shoal_call_priority(ctx, to, SHOAL__POOL_SWAP_COMMIT, NULL, 0, TMO, &ref);
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_store(&gate, msg->status);
    }
    return 0;
}
static const shoal_behaviour_t asker = {.name = "asker", .handle_message = asker_message};

static void swap_steps_only_from_a_thread(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t old = {.tag = 0, .init = I_OK};
    shoal_pool_spec_t s;
    spec_of(&s, 1, &old);
    shoal_pid_t pool, a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &asker, NULL, NULL, &a), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, &pool, sizeof pool), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate) != 0, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&gate), SHOAL_ENOTSUP);
    shoal_runtime_destroy(rt);
}

/* ---- reading the record ------------------------------------------------------- */

static void peek_reads_the_record(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t a = {.tag = 0, .init = I_OK};
    shoal_pool_spec_t s;
    spec_of(&s, 3, &a);
    shoal_pid_t pool, plain;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &w, &a, NULL, &plain), SHOAL_OK);
    CU_ASSERT_PTR_NULL(shoal__pool_find(rt, plain));
    CU_ASSERT_PTR_NULL(shoal__pool_find(rt, SHOAL_PID_NONE));
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    send_jobs(rt, pool, 50);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[0]) == 50, WAIT_S);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 5, TMO), 5);
    shoal_pool_stats_t st;
    /* The handled count is published at the end of each worker's turn. */
    double end = shoal_test_now() + WAIT_S;
    do
        shoal__pool_peek(p, &st);
    while (st.messages_handled != 50 && shoal_test_now() < end);
    CU_ASSERT_EQUAL(st.messages_forwarded, 50);
    CU_ASSERT_EQUAL(st.messages_handled, 50);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    CU_ASSERT_EQUAL(st.pool_size, 5);
    CU_ASSERT_EQUAL(st.target_size, 5);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_RUNNING);
    CU_ASSERT_EQUAL(st.mailbox, 1000);
    CU_ASSERT(!shoal__pool_is_ended(p));
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, TMO), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(shoal__pool_is_quiet(p), WAIT_S);
    CU_ASSERT(shoal__pool_is_quiet(p));
    shoal__pool_peek(p, &st); /* final counts, after the pool has gone */
    CU_ASSERT_EQUAL(st.messages_forwarded, 50);
    CU_ASSERT_EQUAL(st.messages_handled, 50);
    CU_ASSERT_EQUAL(st.pool_size, 0);
    CU_ASSERT_PTR_NULL(shoal__pool_find(rt, pool)); /* gone: no new reference */
    shoal__pool_unref(rt, p);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"start waits for every init", start_waits_for_every_init},
        {"start fails with the init error", start_fails_with_the_init_error},
        {"nested start fails from a leaf", nested_start_fails_from_a_leaf},
        {"start times out", start_times_out},
        {"prepare failure changes nothing", prepare_failure_changes_nothing},
        {"prepare, commit and abort", prepare_commit_and_abort},
        {"swap steps only from a thread", swap_steps_only_from_a_thread},
        {"peek reads the record", peek_reads_the_record},
        {"a pull pool's new members serve only after COMMIT", pull_members_serve_only_after_commit},
        {NULL, NULL},
    };
    return shoal_test_run("swap", cases);
}
