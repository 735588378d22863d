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
 *   - each step names its swap by a token: a step without it or with
 *     another's does nothing; a COMMIT the host stopped waiting for (every
 *     dispatcher thread held) is carried out later, and a PREPARE read
 *     after the host took its offer back starts nothing; a pool that
 *     sizes itself keeps its running size through a swap;
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

static shoal_runtime_t *begin_with(int max_extra_threads)
{
    atomic_store(&inits, 0);
    atomic_store(&gate, 0);
    atomic_store(&hold_old, 0);
    atomic_store(&old_gate, 0);
    for (int i = 0; i < 3; i++)
        atomic_store(&handled[i], 0);
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = THREADS;
    o.debug_checks = 1;
    o.log_level = SHOAL_LOG_INFO;
    o.max_extra_threads = max_extra_threads;
    return shoal_test_runtime_logged_opts(&o);
}

static shoal_runtime_t *begin(void) { return begin_with(0); }

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

/* A pool of `size` workers of tag 0's code (its args live as long as the
 * runtime: a static). */
static shoal_pid_t spawn_old(shoal_runtime_t *rt, uint32_t size)
{
    static const wargs_t old = {.tag = 0, .init = I_OK};
    shoal_pool_spec_t s;
    spec_of(&s, size, &old);
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    return pool;
}

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

/* The swap's steps as the host sends them (pool.h: shoal__pool_swap_ask,
 * _step), from this thread. */
static int ask(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pool_swap_t *sw, uint64_t tmo_ms,
               uint64_t *token, shoal_pool_swap_result_t *r)
{
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL(p);
    if (p == NULL) {
        shoal__pool_swap_free(sw);
        return SHOAL_ENOPROC;
    }
    int rc = shoal__pool_swap_ask(rt, p, pool, sw, tmo_ms, token, r);
    shoal__pool_unref(rt, p);
    return rc;
}

static int step(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t type, uint64_t token,
                uint32_t *replaced)
{
    return shoal__pool_swap_step(rt, pool, type, token, TMO, replaced);
}

static shoal_pool_swap_t *new_swap(const wargs_t *a, uint32_t size)
{
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    spec_of(&sw->chain[0], size, a);
    sw->size = size;
    return sw;
}

/* A PREPARE of size workers of a's code; *token: the swap's. */
static shoal_pool_swap_result_t prepare(shoal_runtime_t *rt, shoal_pid_t pool, const wargs_t *a,
                                        uint32_t size, uint64_t *token)
{
    shoal_pool_swap_result_t r;
    int rc = ask(rt, pool, new_swap(a, size), TMO, token, &r);
    if (rc != r.status) {
        CU_FAIL("the call itself failed");
        fprintf(stderr, "\n    prepare: %s\n", shoal_errname(rc));
    }
    return r;
}

/* A PREPARE on a thread of its own, for a slow init. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    const wargs_t *a;
    uint32_t size;
    uint64_t token;
    shoal_pool_swap_result_t r;
    atomic_int answered;
} prep_t;

static void *prepare_thread(void *arg)
{
    prep_t *pr = arg;
    pr->r = prepare(pr->rt, pr->pool, pr->a, pr->size, &pr->token);
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
    uint64_t tok;
    shoal_pool_swap_result_t r = prepare(rt, pool, &bad, 3, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "tag 1 refuses to start"));
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(live(rt), live0); /* the new ones are gone, the old ones stay */
    send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[0]) == 30, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 30);
    CU_ASSERT_EQUAL(atomic_load(&handled[1]), 0);
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    /* Nothing prepared: COMMIT refuses. */
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_EINVAL);
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
    uint64_t tok;
    shoal_pool_swap_result_t r = prepare(rt, pool, &next, 4, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(r.started, 4);
    CU_ASSERT_EQUAL(live(rt), live0 + 4); /* beside the old ones */
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
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
    uint64_t tok2;
    CU_ASSERT_EQUAL(ask(rt, pool, new_swap(&next, 3), TMO, &tok2, &r), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok2, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok2 - 1, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&pr.answered), 0); /* the inits wait on the gate */
    atomic_store(&gate, 1);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(pr.r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(pr.r.started, 3);
    send_jobs(rt, pool, 20);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[0]) == 20, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 20); /* still the old code */
    uint32_t n = 0;
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, pr.token, &n), SHOAL_OK);
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
    r = prepare(rt, pool, &next, 1, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
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
    uint64_t tok = 0;
    for (int round = 0; round < 2; round++) {
        int base = atomic_load(&handled[0]);
        atomic_store(&old_gate, 0);
        atomic_store(&hold_old, 1);
        send_jobs(rt, pool, 300);
        shoal_pool_swap_t *sw = new_swap(&next, 3);
        sw->chain[0].kind = SHOAL_POOL_KIND_PULL;
        sw->chain[0].buffer = 1000;
        shoal_pool_swap_result_t r;
        CU_ASSERT_EQUAL(ask(rt, pool, sw, TMO, &tok, &r), SHOAL_OK);
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
            CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    }
    uint32_t n = 0;
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&handled[2]) == 30, WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&handled[2]), 30);
    CU_ASSERT_EQUAL(atomic_load(&handled[0]), 600);
    shoal_runtime_destroy(rt);
}

/* An actor's step: a COMMIT to the pool with the payload it is sent (a
 * pid, then what to carry); the answer's status lands in `gate`. */
static int asker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST) {
        shoal_pid_t to;
        memcpy(&to, msg->data, sizeof to);
        shoal_ref_t ref;
        shoal_call_priority(ctx, to, SHOAL__POOL_SWAP_COMMIT, (const char *)msg->data + sizeof to,
                            msg->size - sizeof to, TMO, &ref);
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_store(&gate, msg->status);
    }
    return 0;
}
static const shoal_behaviour_t asker = {.name = "asker", .handle_message = asker_message};

static int asker_commit(shoal_runtime_t *rt, shoal_pid_t a, shoal_pid_t pool, const void *data,
                        size_t size)
{
    char buf[sizeof pool + 16];
    memcpy(buf, &pool, sizeof pool);
    if (size != 0)
        memcpy(buf + sizeof pool, data, size);
    atomic_store(&gate, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, a, 1, buf, sizeof pool + size), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&gate) != 0, WAIT_S);
    return atomic_load(&gate);
}

/* A step names its swap by the token it carries: one without a token, or
 * with another swap's -- an actor's guess, an ABORT left from a swap
 * aborted before -- does nothing, and the prepared swap is still there. */
static void a_step_names_its_swap(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t next = {.tag = 2, .init = I_OK};
    shoal_pid_t pool = spawn_old(rt, 2);
    shoal_pid_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &asker, NULL, NULL, &a), SHOAL_OK);
    uint64_t live0 = live(rt);
    uint64_t ta, tb;
    CU_ASSERT_EQUAL(prepare(rt, pool, &next, 3, &ta).status, SHOAL_OK);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, ta, NULL), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S);
    CU_ASSERT_EQUAL(prepare(rt, pool, &next, 3, &tb).status, SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(ta, tb);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, ta, NULL), SHOAL_OK); /* stale */
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_ABORT, 0, NULL), SHOAL_OK);  /* none */
    CU_ASSERT_EQUAL(asker_commit(rt, a, pool, NULL, 0), SHOAL_EINVAL);
    uint64_t guess = tb + 1;
    CU_ASSERT_EQUAL(asker_commit(rt, a, pool, &guess, sizeof guess), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, ta, NULL), SHOAL_EINVAL);
    shoal_test_nap();
    CU_ASSERT_EQUAL(live(rt), live0 + 3); /* b's new workers wait, untouched */
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tb, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(who(rt, pool), 2);
    shoal_runtime_destroy(rt);
}

/* Actors that hold every dispatcher thread until hog_gate opens: the
 * pool's actor cannot run meanwhile, so the host's calls to it time out
 * (in a runtime without compensating threads: begin_with). */
static atomic_int hog_gate, hogs_in;

static int hog_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state, (void)msg;
    atomic_fetch_add(&hogs_in, 1);
    shoal_test_wait_flag(&hog_gate, WAIT_S);
    return 0;
}
static const shoal_behaviour_t hog = {.name = "hog", .handle_message = hog_message};

static void hog_every_thread(shoal_runtime_t *rt)
{
    atomic_store(&hog_gate, 0);
    atomic_store(&hogs_in, 0);
    for (unsigned i = 0; i < THREADS; i++) {
        shoal_pid_t h;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &hog, NULL, NULL, &h), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, 1, NULL, 0), SHOAL_OK);
    }
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&hogs_in) == (int)THREADS, WAIT_S);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&hogs_in), (int)THREADS);
}

#define LATE_MS 300u

/* A COMMIT the host stopped waiting for (every thread held) is carried out
 * when the pool's actor reads it: the new code serves, and the next swap
 * is taken (it was refused as not the host's: the swap stayed prepared,
 * its code loaded, and every later swap of the pool answered EBUSY). */
static void a_late_commit_is_carried_out(void)
{
    shoal_runtime_t *rt = begin_with(SHOAL_EXTRA_THREADS_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t next = {.tag = 2, .init = I_OK}, third = {.tag = 1, .init = I_OK};
    shoal_pid_t pool = spawn_old(rt, 2);
    uint64_t tok;
    CU_ASSERT_EQUAL(prepare(rt, pool, &next, 2, &tok).status, SHOAL_OK);
    hog_every_thread(rt);
    CU_ASSERT_EQUAL(shoal__pool_swap_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, LATE_MS, NULL),
                    SHOAL_ETIMEDOUT);
    atomic_store(&hog_gate, 1);
    shoal_pool_stats_t st; /* a call behind the COMMIT: read after it (who() is forwarded) */
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(who(rt, pool), 2);
    CU_ASSERT_EQUAL(prepare(rt, pool, &third, 2, &tok).status, SHOAL_OK);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(who(rt, pool), 1);
    shoal_runtime_destroy(rt);
}

/* A PREPARE read after the host stopped waiting finds its offer taken back
 * (freed then: it leaked before) and starts nothing; a late ABORT after it
 * is harmless, and the next swap is taken. */
static void a_late_prepare_starts_nothing(void)
{
    shoal_runtime_t *rt = begin_with(SHOAL_EXTRA_THREADS_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t next = {.tag = 2, .init = I_OK};
    shoal_pid_t pool = spawn_old(rt, 2);
    hog_every_thread(rt);
    uint64_t live0 = live(rt), tok;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(ask(rt, pool, new_swap(&next, 3), LATE_MS, &tok, &r), SHOAL_ETIMEDOUT);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(shoal__pool_swap_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, LATE_MS, NULL),
                    SHOAL_ETIMEDOUT);
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pthread_mutex_lock(&p->offer_lock);
    CU_ASSERT_PTR_NULL(p->offer); /* taken back */
    pthread_mutex_unlock(&p->offer_lock);
    shoal__pool_unref(rt, p);
    atomic_store(&hog_gate, 1);
    shoal_pool_stats_t st; /* a call behind both steps: read after them */
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    shoal_test_nap();
    CU_ASSERT_EQUAL(live(rt), live0); /* no new worker was started */
    CU_ASSERT_EQUAL(who(rt, pool), 0);
    CU_ASSERT_EQUAL(prepare(rt, pool, &next, 3, &tok).status, SHOAL_OK);
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(who(rt, pool), 2);
    shoal_runtime_destroy(rt);
}

/* A pool that sizes itself keeps the size it runs with through a swap
 * (keep_size): it ran 5 after a resize, the file says 2 -- it runs 5 of
 * the new code after COMMIT (the swap had set it back to the file's 2). */
static void a_swap_keeps_a_running_size(void)
{
    shoal_runtime_t *rt = begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    wargs_t next = {.tag = 2, .init = I_OK};
    shoal_pid_t pool = spawn_old(rt, 2);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 5, TMO), 5);
    uint64_t live0 = live(rt), tok;
    shoal_pool_swap_t *sw = new_swap(&next, 2);
    sw->keep_size = true;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(ask(rt, pool, sw, TMO, &tok, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r.started, 5);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 5);
    shoal_pool_stats_t st;
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 5);
    CU_ASSERT_EQUAL(st.target_size, 5);
    SHOAL_TEST_WAIT_UNTIL(live(rt) == live0, WAIT_S); /* the 5 old ones have ended */
    CU_ASSERT_EQUAL(live(rt), live0);
    CU_ASSERT_EQUAL(who(rt, pool), 2);
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
        {"a step names its swap", a_step_names_its_swap},
        {"a late COMMIT is carried out", a_late_commit_is_carried_out},
        {"a late PREPARE starts nothing", a_late_prepare_starts_nothing},
        {"a swap keeps a running size", a_swap_keeps_a_running_size},
        {"peek reads the record", peek_reads_the_record},
        {"a pull pool's new members serve only after COMMIT", pull_members_serve_only_after_commit},
        {NULL, NULL},
    };
    return shoal_test_run("swap", cases);
}
