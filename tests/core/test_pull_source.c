/* test_pull_source.c - a pull pool's source (core/pool/pull_source.c): an
 * epic fed in requests no larger than the room, every item handled once,
 * memory bounded by the capacity however long the epic, a failing source
 * started again and resuming at its cursor, a new epic refused while one
 * runs, a source that fails beyond the restart budget, the log lines
 * of an epic's start and end, and an epic with its own args (the host's
 * SHOAL__POOL_EPIC_ARGS, shoalctl epic POOL ARGS): the source gets them,
 * a restarted one too, and they are freed exactly once, when nothing can
 * read them any more; a swap of the pool's code (a reload) gives the
 * next epic's source the new code's args; and a pool started held (as a
 * reload starts its new pools: pool.h, opts held) asks its source for
 * nothing until the host's SHOAL__POOL_GO -- an actor's is not one --,
 * while a GO to a pool not held changes nothing; and an epic handed over
 * from one pool to another, as a reload that replaces a pool does.
 *
 * The source here is the test's own (counting from a cursor, as the bundled
 * seq does): handlers record into atomics; the test thread asserts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "pool/swap.h"
#include "support.h"

#define WAIT_S 30.0
#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, WAIT_S)
#define TMO 10000u
#define T_ITEM 7u

/* ---- the source: items next .. total-1, cursor = next ------------------------- */

static _Atomic uint64_t total;       /* items in the epic */
static _Atomic uint64_t panic_at;    /* panic when asked with next >= this ... */
static atomic_int panics_left;       /* ... this many times */
static atomic_int requests, resumes; /* heard */
static _Atomic uint32_t max_n;       /* the largest request */

typedef struct {
    uint64_t next;
    uint64_t end; /* from its args (a uint64_t *), else 0: `total` */
} counter_t;

static _Atomic uintptr_t last_args; /* what the last init got */
static atomic_int inits;

static int counter_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    counter_t *c = state;
    if (args != NULL)
        memcpy(&c->end, args, sizeof c->end);
    atomic_store(&last_args, (uintptr_t)args);
    atomic_fetch_add(&inits, 1);
    return 0;
}

static int counter_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    counter_t *c = state;
    if (msg->type == SHOAL_PULL_RESUME && msg->size == sizeof c->next) {
        memcpy(&c->next, msg->data, sizeof c->next);
        atomic_fetch_add(&resumes, 1);
        return 0;
    }
    if (msg->type != SHOAL_PULL_REQUEST || msg->size != sizeof(uint32_t))
        return 0;
    uint32_t n;
    memcpy(&n, msg->data, sizeof n);
    atomic_fetch_add(&requests, 1);
    uint32_t m = atomic_load(&max_n);
    while (n > m && !atomic_compare_exchange_weak(&max_n, &m, n))
        ;
    if (c->next >= atomic_load(&panic_at) && atomic_fetch_sub(&panics_left, 1) > 0)
        shoal_panic(ctx, "source panics at %llu", (unsigned long long)c->next);
    uint64_t end = c->end != 0 ? c->end : atomic_load(&total);
    for (uint32_t i = 0; i < n && c->next < end; i++, c->next++)
        if (shoal_send(ctx, msg->from, T_ITEM, &c->next, sizeof c->next) != SHOAL_OK)
            return SHOAL_EFAILED; /* never: the room was set aside */
    if (c->next == end)
        return shoal_send_priority(ctx, msg->from, SHOAL_PULL_DONE, NULL, 0);
    return shoal_send_priority(ctx, msg->from, SHOAL_PULL_SENT, &c->next, sizeof c->next);
}

static const shoal_behaviour_t counter = {.name = "counter",
                                          .state_size = sizeof(counter_t),
                                          .init = counter_init,
                                          .handle_message = counter_message};

/* ---- the workers -------------------------------------------------------------- */

#define MAXITEMS (1u << 20)
static unsigned char seen[MAXITEMS];
static _Atomic uint64_t handled, dups;
static atomic_int gate = 1; /* 0: item 0 waits until it opens */

static int wk_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    uint64_t i;
    if (msg->type != T_ITEM || msg->size != sizeof i)
        return 0;
    memcpy(&i, msg->data, sizeof i);
    double end = shoal_test_now() + WAIT_S;
    while (i == 0 && atomic_load(&gate) == 0 && shoal_test_now() < end)
        shoal_test_nap();
    if (i < MAXITEMS && __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED) != 0)
        atomic_fetch_add(&dups, 1);
    atomic_fetch_add(&handled, 1);
    return 0;
}

static const shoal_behaviour_t wk = {.name = "wk", .handle_message = wk_message};

static void reset(uint64_t n)
{
    memset(seen, 0, sizeof seen);
    atomic_store(&handled, 0);
    atomic_store(&dups, 0);
    atomic_store(&total, n);
    atomic_store(&panic_at, 0);
    atomic_store(&panics_left, 0);
    atomic_store(&requests, 0);
    atomic_store(&resumes, 0);
    atomic_store(&max_n, 0);
    atomic_store(&last_args, 0);
    atomic_store(&inits, 0);
}

/* A pull pool "epic" of size wk workers fed by the counter source. */
static void epic_spec(shoal_pool_spec_t *s, uint32_t size, uint32_t buffer)
{
    shoal_pool_spec_init(s);
    s->name = "epic";
    s->worker = &wk;
    s->kind = SHOAL_POOL_KIND_PULL;
    s->size = size;
    s->buffer = buffer;
    s->source = &counter;
}

static shoal_pid_t spawn(shoal_runtime_t *rt, uint32_t size, uint32_t buffer)
{
    shoal_pool_spec_t s;
    epic_spec(&s, size, buffer);
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    return p;
}

static bool all_once(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (seen[i] != 1)
            return false;
    return true;
}

/* ---- cases ---------------------------------------------------------------------- */

/* 200000 items through 4 workers and a buffer of 64: each handled once; no
 * request larger than the room (capacity 68); the pool never held more
 * than its capacity; the epic's end logged with its count. A GO sent as
 * the epic starts changes nothing: the pool was not started held. */
static void an_epic_is_fed_within_the_room(void)
{
    reset(200000);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pid_t p = spawn(rt, 4, 64);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    uint64_t most = 0;
    double end = shoal_test_now() + WAIT_S;
    while (atomic_load(&handled) < 200000 && shoal_test_now() < end) {
        shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
        if (st.queue_depth > most)
            most = st.queue_depth;
    }
    CU_ASSERT_EQUAL(atomic_load(&handled), 200000);
    CU_ASSERT_EQUAL(atomic_load(&dups), 0);
    CU_ASSERT(all_once(200000));
    CU_ASSERT(most <= 68);
    CU_ASSERT(atomic_load(&max_n) <= 68);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(st.source_items, 200000);
    CU_ASSERT_EQUAL(st.source_restarts, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 200000);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 200000);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).messages_handled, 200000);
    shoal_test_assert_logged("epic started: source counter");
    shoal_test_assert_logged("epic done: 200000 items in ");
    shoal_runtime_destroy(rt);
}

/* The source panics twice when asked at item 5000 or later: it is started again,
 * told to resume at its last cursor, and the epic completes with every item
 * handled exactly once (it panicked before sending anything of that
 * request). */
static void a_failing_source_resumes_at_its_cursor(void)
{
    reset(20000);
    atomic_store(&panic_at, 5000);
    atomic_store(&panics_left, 2);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pid_t p = spawn(rt, 2, 1000);
    WAIT_UNTIL(atomic_load(&handled) == 20000);
    CU_ASSERT_EQUAL(atomic_load(&handled), 20000);
    CU_ASSERT_EQUAL(atomic_load(&dups), 0);
    CU_ASSERT(all_once(20000));
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_restarts, 2);
    CU_ASSERT_EQUAL(atomic_load(&resumes), 2);
    CU_ASSERT_EQUAL(shoal_test_log_count("started again, resuming at its last cursor"), 2);
    shoal_runtime_destroy(rt);
}

/* A new epic while one runs: SHOAL_EBUSY; after it is done: a new one runs
 * from the start (every item handled twice in all). */
static void a_new_epic_waits_for_the_last(void)
{
    reset(50000);
    atomic_store(&gate, 0); /* the epic cannot end before the gate opens */
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pid_t p = spawn(rt, 2, 16);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EBUSY);
    shoal_answer_release(&a);
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    WAIT_UNTIL(atomic_load(&handled) == 50000);
    CU_ASSERT_EQUAL(atomic_load(&handled), 50000);
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    WAIT_UNTIL(atomic_load(&handled) == 100000);
    CU_ASSERT_EQUAL(atomic_load(&handled), 100000);
    CU_ASSERT_EQUAL(atomic_load(&dups), 50000); /* the second epic: each item again */
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).source_items, 50000);
    CU_ASSERT_EQUAL(shoal_test_log_count("epic done: 50000 items"), 2);
    /* A pool without a source has no epic to start. */
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.worker = &wk;
    s.kind = SHOAL_POOL_KIND_PULL;
    shoal_pid_t q;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &q), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, q, SHOAL_POOL_EPIC, NULL, 0, TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_ENOTSUP);
    shoal_answer_release(&a);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, q).source_state, SHOAL_SOURCE_NONE);
    shoal_runtime_destroy(rt);
}

/* A source that panics at every request: started again up to the budget
 * (restart.max 3), then the epic has failed, logged, and the pool serves on. */
static void a_source_past_its_budget_fails_the_epic(void)
{
    reset(1000);
    atomic_store(&panic_at, 0);
    atomic_store(&panics_left, 1000);
    atomic_store(&total, 1000);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    epic_spec(&s, 2, 1024); /* the default buffer */
    s.restart.max = 3;
    s.restart.within_ms = 60000;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_FAILED);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_FAILED);
    CU_ASSERT_EQUAL(st.source_restarts, 3);
    CU_ASSERT_EQUAL(st.source_items, 0);
    CU_ASSERT_EQUAL(atomic_load(&requests), 4);
    shoal_test_assert_logged("source counter failed: handler panicked (-8); not started again");
    shoal_test_assert_logged("epic failed: 0 items");
    uint64_t i = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, T_ITEM, &i, sizeof i), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&handled) == 1);
    CU_ASSERT_EQUAL(atomic_load(&handled), 1);
    shoal_runtime_destroy(rt);
}

/* ---- an epic with its own args ---------------------------------------------------- */

static atomic_int args_freed;
static void free_to(void *a)
{
    atomic_fetch_add(&args_freed, 1);
    free(a);
}

/* SHOAL__POOL_EPIC_ARGS with args {to}: the pool's status (its answer
 * carries it), and the args sent in *sent. */
static int epic_to(shoal_runtime_t *rt, shoal_pid_t p, uint64_t to, void **sent)
{
    uint64_t *a = malloc(sizeof *a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    *a = to;
    *sent = a;
    shoal_pull_epic_args_t ea = {a, free_to};
    shoal_answer_t ans;
    int rc = shoal_runtime_call_priority(rt, p, SHOAL__POOL_EPIC_ARGS, &ea, sizeof ea, TMO, &ans);
    CU_ASSERT_EQUAL_FATAL(rc, SHOAL_OK);
    int32_t status = SHOAL_EFAILED;
    CU_ASSERT_EQUAL(ans.status, SHOAL_OK);
    CU_ASSERT_EQUAL(ans.type, SHOAL__POOL_EPIC_ARGS);
    CU_ASSERT_EQUAL(ans.size, sizeof status);
    if (ans.size == sizeof status)
        memcpy(&status, ans.data, sizeof status);
    shoal_answer_release(&ans);
    return status;
}

/* The spec's args give 500 items. An epic with {to: 3000}: its source gets
 * those args, and so does the one started again after it panics at 1000;
 * one more with args while it runs is refused (EBUSY) and its args freed
 * at once. A plain epic then runs on the spec's args again, and the
 * earlier epic's args are freed once its sources have ended: once. A
 * forward pool refuses (ENOTSUP) and frees them; a pool that ends with an
 * epic's args frees them with its record. */
static void an_epic_with_its_own_args(void)
{
    reset(1000);
    atomic_store(&args_freed, 0);
    static const uint64_t spec_to = 500;
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    epic_spec(&s, 1, 64);
    s.source_args = &spec_to;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&handled) == 500 &&
               shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&handled), 500);
    CU_ASSERT_EQUAL(atomic_load(&last_args), (uintptr_t)&spec_to);

    atomic_store(&gate, 0); /* item 0 holds the one worker: the epic runs on */
    atomic_store(&panic_at, 1000);
    atomic_store(&panics_left, 1);
    void *mine, *other;
    CU_ASSERT_EQUAL(epic_to(rt, p, 3000, &mine), SHOAL_OK);
    CU_ASSERT_EQUAL(epic_to(rt, p, 7, &other), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 1); /* the refused one's */
    atomic_store(&gate, 1);
    WAIT_UNTIL(atomic_load(&handled) == 3500 &&
               shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&handled), 3500);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).source_items, 3000);
    CU_ASSERT_EQUAL(atomic_load(&resumes), 1);
    CU_ASSERT_EQUAL(atomic_load(&inits), 3); /* the spec's, the epic's, its restart */
    CU_ASSERT_EQUAL(atomic_load(&last_args), (uintptr_t)mine);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 1); /* the record holds the epic's */
    shoal_test_assert_logged("epic started: source counter (with its own args)");
    shoal_test_assert_logged("epic done: 3000 items");

    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    WAIT_UNTIL(atomic_load(&handled) == 4000 && atomic_load(&args_freed) == 2);
    CU_ASSERT_EQUAL(atomic_load(&handled), 4000);
    CU_ASSERT_EQUAL(atomic_load(&last_args), (uintptr_t)&spec_to);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 2);

    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &wk;
    f.size = 1;
    shoal_pid_t fp;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &f, &fp), SHOAL_OK);
    CU_ASSERT_EQUAL(epic_to(rt, fp, 10, &other), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 3);

    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(epic_to(rt, p, 10, &other), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&handled) == 4010);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 3);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 4);
}

/* A swap (what a reload that changes a pull pool's args does: PREPARE,
 * COMMIT) with new source args: the next epic's source gets them. It got
 * the old ones, which belonged to the code the swap released -- freed by
 * then in shoald. */
static void a_swap_gives_the_source_new_args(void)
{
    reset(1000);
    static uint64_t old_end = 100, new_end = 200;
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    epic_spec(&s, 2, 16);
    s.source_args = &old_end;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&last_args), (uintptr_t)&old_end);
    WAIT_UNTIL(atomic_load(&handled) == 100);
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    epic_spec(&sw->chain[0], 2, 16);
    sw->chain[0].source_args = &new_end;
    sw->size = 2;
    shoal_pool_t *rec = shoal__pool_find(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    uint64_t tok;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(shoal__pool_swap_ask(rt, rec, p, sw, TMO, &tok, &r), SHOAL_OK);
    shoal__pool_unref(rt, rec);
    CU_ASSERT_EQUAL(shoal__pool_swap_step(rt, p, SHOAL__POOL_SWAP_COMMIT, tok, TMO, NULL),
                    SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    WAIT_UNTIL(atomic_load(&handled) == 300);
    CU_ASSERT_EQUAL(atomic_load(&last_args), (uintptr_t)&new_end);
    CU_ASSERT_EQUAL(atomic_load(&handled), 300); /* 100, then 200 */
    shoal_runtime_destroy(rt);
}

/* ---- a pool started held ---------------------------------------------------------- */

static atomic_int goer_rc = 99;

/* Sends SHOAL__POOL_GO, as the host would, to the pool named by its
 * message -- but from an actor, which is not the host. */
static int goer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    shoal_pid_t to;
    if (msg->kind != SHOAL_MSG_CAST || msg->size != sizeof to)
        return SHOAL_OK;
    memcpy(&to, msg->data, sizeof to);
    atomic_store(&goer_rc, shoal_send_priority(ctx, to, SHOAL__POOL_GO, NULL, 0));
    return SHOAL_OK;
}

static const shoal_behaviour_t goer = {.name = "goer", .handle_message = goer_message};

/* Long enough for a request the pool should not have made to be seen. */
static void settle(void)
{
    double end = shoal_test_now() + 0.2;
    while (shoal_test_now() < end)
        shoal_test_nap();
}

/* A pool started held: its source starts (its init runs once, the epic is
 * running) but is asked for nothing, and no item is handled -- not after a
 * GO from an actor either; after the host's GO (from a thread) every item
 * of the epic is handled once, by the one source; a second GO, to a pool
 * no longer held, changes nothing. */
static void a_held_pool_asks_its_source_only_at_go(void)
{
    reset(5000);
    atomic_store(&goer_rc, 99);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    epic_spec(&s, 2, 64);
    shoal_pid_t p = SHOAL_PID_NONE, g;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, &s, NULL, &(shoal_pool_opts_t){.held = true},
                                               TMO, &p, why, sizeof why),
                          SHOAL_OK);
    WAIT_UNTIL(atomic_load(&inits) == 1);
    CU_ASSERT_EQUAL(atomic_load(&inits), 1);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).source_state, SHOAL_SOURCE_RUNNING);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &goer, NULL, NULL, &g), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, g, 1, &p, sizeof p), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&goer_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&goer_rc), SHOAL_OK); /* sent, and not taken as a GO */
    settle();
    CU_ASSERT_EQUAL(atomic_load(&requests), 0);
    CU_ASSERT_EQUAL(atomic_load(&handled), 0);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_items, 0);
    CU_ASSERT_EQUAL(st.messages_handled, 0);

    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&handled) == 5000 &&
               shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&handled), 5000);
    CU_ASSERT_EQUAL(atomic_load(&dups), 0);
    CU_ASSERT(all_once(5000));
    CU_ASSERT_EQUAL(atomic_load(&inits), 1);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(st.source_items, 5000);
    CU_ASSERT_EQUAL(st.source_restarts, 0);
    shoal_test_assert_logged("epic done: 5000 items in ");

    int asked = atomic_load(&requests);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    settle();
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(st.source_items, 5000);
    CU_ASSERT_EQUAL(atomic_load(&requests), asked);
    CU_ASSERT_EQUAL(atomic_load(&handled), 5000);
    CU_ASSERT_EQUAL(atomic_load(&inits), 1);
    shoal_runtime_destroy(rt);
}

/* SHOAL__POOL_HAND_OVER from the host's thread, answered with the epic. */
static int hand_over(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pull_handover_t *out)
{
    shoal_answer_t a;
    int rc = shoal_runtime_call_priority(rt, pool, SHOAL__POOL_HAND_OVER, NULL, 0, TMO, &a);
    if (rc != SHOAL_OK)
        return rc;
    rc = a.status;
    if (rc == SHOAL_OK && a.size == sizeof *out)
        memcpy(out, a.data, sizeof *out);
    else if (rc == SHOAL_OK)
        rc = SHOAL_EINVAL;
    shoal_answer_release(&a);
    return rc;
}

/* A pool started held, told GO with the epic h (host/reload.c's way). */
static shoal_pid_t go_with(shoal_runtime_t *rt, const shoal_pull_handover_t *h)
{
    shoal_pool_spec_t s;
    epic_spec(&s, 2, 64);
    shoal_pid_t p = SHOAL_PID_NONE;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, &s, NULL, &(shoal_pool_opts_t){.held = true},
                                               TMO, &p, why, sizeof why),
                          SHOAL_OK);
    shoal_pool_t *rec = shoal__pool_find(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    WAIT_UNTIL(atomic_load(&rec->pull->source_up) != 0);
    CU_ASSERT_EQUAL(atomic_load(&rec->pull->source_up), 1); /* its init ran */
    shoal__pool_unref(rt, rec);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, h, sizeof *h), SHOAL_OK);
    return p;
}

/* An epic handed from one pool to another (a reload's replacement, host/
 * host_pull.c): the old pool, its first item held so that the epic is under
 * way, answers SHOAL__POOL_HAND_OVER with its state, count and cursor, and
 * its source stops; a pool started held and told GO with it resumes its own
 * source at that cursor -- every item is handled, and none twice but the
 * one request the old source was answering (at most the room, 66) -- and
 * counts on from the old count. Handed over again once done: the next pool
 * asks its source for nothing. A pool without a source answers
 * SHOAL_ENOTSUP. */
static void an_epic_is_handed_over(void)
{
    reset(100000);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    atomic_store(&gate, 0);
    shoal_pid_t a = spawn(rt, 2, 64);
    WAIT_UNTIL(atomic_load(&requests) >= 2 && atomic_load(&handled) >= 1); /* a SENT read */
    shoal_pull_handover_t h;
    memset(&h, 0, sizeof h);
    CU_ASSERT_EQUAL_FATAL(hand_over(rt, a, &h), SHOAL_OK);
    CU_ASSERT_EQUAL(h.state, SHOAL_SOURCE_RUNNING);
    CU_ASSERT_EQUAL(h.own_args, 0);
    CU_ASSERT_EQUAL(h.cursor_len, sizeof(uint64_t));
    uint64_t cursor;
    memcpy(&cursor, h.cursor, sizeof cursor);
    CU_ASSERT(cursor > 0 && cursor <= h.items && h.items < 100000);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, a).source_state, SHOAL_SOURCE_DONE);
    shoal_test_assert_logged("epic handed over to the pool that replaces it: ");
    int before = atomic_load(&resumes);
    shoal_pid_t b = go_with(rt, &h);
    atomic_store(&gate, 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, b).source_state == SHOAL_SOURCE_DONE &&
               atomic_load(&handled) >= 100000);
    CU_ASSERT_EQUAL(atomic_load(&resumes), before + 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, b);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT(st.source_items >= 100000); /* the old count, and on */
    bool every = true;
    for (uint64_t i = 0; i < 100000; i++)
        every &= seen[i] >= 1;
    CU_ASSERT(every);
    CU_ASSERT(atomic_load(&dups) <= 66);
    shoal_test_assert_logged("epic taken over from the pool it replaces (");

    /* Done: handed over again, nothing is asked of the next pool's source. */
    CU_ASSERT_EQUAL_FATAL(hand_over(rt, b, &h), SHOAL_OK);
    CU_ASSERT_EQUAL(h.state, SHOAL_SOURCE_DONE);
    int asked = atomic_load(&requests);
    shoal_pid_t c = go_with(rt, &h);
    WAIT_UNTIL(shoal_test_pool_stats(rt, c).source_state == SHOAL_SOURCE_DONE);
    settle();
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, c).source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, c).source_items, h.items);
    CU_ASSERT_EQUAL(atomic_load(&requests), asked);
    shoal_test_assert_logged("epic done already in the pool it replaces (");

    /* No source: nothing to hand over. */
    shoal_pool_spec_t s;
    epic_spec(&s, 1, 8);
    s.source = NULL;
    s.name = "plain";
    shoal_pid_t d = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &d), SHOAL_OK);
    CU_ASSERT_EQUAL(hand_over(rt, d, &h), SHOAL_ENOTSUP);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"an epic is fed within the room", an_epic_is_fed_within_the_room},
        {"a failing source resumes at its cursor", a_failing_source_resumes_at_its_cursor},
        {"a new epic waits for the last", a_new_epic_waits_for_the_last},
        {"a source past its budget fails the epic", a_source_past_its_budget_fails_the_epic},
        {"an epic with its own args", an_epic_with_its_own_args},
        {"a swap gives the source new args", a_swap_gives_the_source_new_args},
        {"a pool started held asks its source for nothing until GO",
         a_held_pool_asks_its_source_only_at_go},
        {"an epic is handed over", an_epic_is_handed_over},
        {NULL, NULL}};
    return shoal_test_run("pull_source", cases);
}
