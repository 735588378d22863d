/* test_pull_source.c - a pull pool's source (core/pool/pull_source.c): an
 * epic fed in requests no larger than the room, every item handled once,
 * memory bounded by the capacity however long the epic, a failing source
 * started again and resuming at its cursor, a new epic refused while one
 * runs, a source that fails beyond the restart budget, the log lines
 * of an epic's start and end, and an epic with its own args (the host's
 * SHOAL__POOL_EPIC_ARGS, shoalctl epic POOL ARGS): the source gets them,
 * a restarted one too, and they are freed exactly once, when nothing can
 * read them any more; and a swap of the pool's code (a reload) gives the
 * next epic's source the new code's args. A pool started held, and an epic
 * handed over: test_pull_source_held.c.
 *
 * The source and the members are pull_source_kit.h's: handlers record
 * into atomics; the test thread asserts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "pool/swap.h"
#include "pull_source_kit.h"

/* ---- cases ---------------------------------------------------------------------- */

/* 200000 items through 4 workers and a buffer of 64: each handled once; no
 * request larger than the room (capacity 68); the pool never held more
 * than its capacity; the epic's end logged with its count. A GO sent as
 * the epic starts changes nothing: the pool was not started held. */
static void an_epic_is_fed_within_the_room(void)
{
    ps_reset(200000);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pid_t p = ps_spawn(rt, 4, 64);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    uint64_t most = 0;
    double end = shoal_test_now() + PS_WAIT_S;
    while (atomic_load(&ps_handled) < 200000 && shoal_test_now() < end) {
        shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
        if (st.queue_depth > most)
            most = st.queue_depth;
    }
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 200000);
    CU_ASSERT_EQUAL(atomic_load(&ps_dups), 0);
    CU_ASSERT(ps_all_once(200000));
    CU_ASSERT(most <= 68);
    CU_ASSERT(atomic_load(&ps_max_n) <= 68);
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(st.source_items, 200000);
    CU_ASSERT_EQUAL(st.source_restarts, 0);
    CU_ASSERT_EQUAL(st.messages_forwarded, 200000);
    CU_ASSERT_EQUAL(st.messages_unhandled, 0);
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).messages_handled == 200000);
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
    ps_reset(20000);
    atomic_store(&ps_panic_at, 5000);
    atomic_store(&ps_panics_left, 2);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pid_t p = ps_spawn(rt, 2, 1000);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 20000);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 20000);
    CU_ASSERT_EQUAL(atomic_load(&ps_dups), 0);
    CU_ASSERT(ps_all_once(20000));
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_restarts, 2);
    CU_ASSERT_EQUAL(atomic_load(&ps_resumes), 2);
    CU_ASSERT_EQUAL(shoal_test_log_count("started again, resuming at its last cursor"), 2);
    shoal_runtime_destroy(rt);
}

/* A new epic while one runs: SHOAL_EBUSY; after it is done: a new one runs
 * from the start (every item handled twice in all). */
static void a_new_epic_waits_for_the_last(void)
{
    ps_reset(50000);
    atomic_store(&ps_gate, 0); /* the epic cannot end before the gate opens */
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pid_t p = ps_spawn(rt, 2, 16);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, PS_TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_EBUSY);
    shoal_answer_release(&a);
    atomic_store(&ps_gate, 1);
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 50000);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 50000);
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, PS_TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 100000);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 100000);
    CU_ASSERT_EQUAL(atomic_load(&ps_dups), 50000); /* the second epic: each item again */
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).source_items, 50000);
    CU_ASSERT_EQUAL(shoal_test_log_count("epic done: 50000 items"), 2);
    /* A pool without a source has no epic to start. */
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.worker = &ps_wk;
    s.kind = SHOAL_POOL_KIND_PULL;
    shoal_pid_t q;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &q), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, q, SHOAL_POOL_EPIC, NULL, 0, PS_TMO, &a),
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
    ps_reset(1000);
    atomic_store(&ps_panic_at, 0);
    atomic_store(&ps_panics_left, 1000);
    atomic_store(&ps_total, 1000);
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    ps_epic_spec(&s, 2, 1024); /* the default buffer */
    s.restart.max = 3;
    s.restart.within_ms = 60000;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_FAILED);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.source_state, SHOAL_SOURCE_FAILED);
    CU_ASSERT_EQUAL(st.source_restarts, 3);
    CU_ASSERT_EQUAL(st.source_items, 0);
    CU_ASSERT_EQUAL(atomic_load(&ps_requests), 4);
    shoal_test_assert_logged("source counter failed: handler panicked (-8); not started again");
    shoal_test_assert_logged("epic failed: 0 items");
    uint64_t i = 0;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, p, PS_ITEM, &i, sizeof i), SHOAL_OK);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 1);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 1);
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
    int rc =
        shoal_runtime_call_priority(rt, p, SHOAL__POOL_EPIC_ARGS, &ea, sizeof ea, PS_TMO, &ans);
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
    ps_reset(1000);
    atomic_store(&args_freed, 0);
    static const uint64_t spec_to = 500;
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    ps_epic_spec(&s, 1, 64);
    s.source_args = &spec_to;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 500 &&
                  shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 500);
    CU_ASSERT_EQUAL(atomic_load(&ps_last_args), (uintptr_t)&spec_to);

    atomic_store(&ps_gate, 0); /* item 0 holds the one worker: the epic runs on */
    atomic_store(&ps_panic_at, 1000);
    atomic_store(&ps_panics_left, 1);
    void *mine, *other;
    CU_ASSERT_EQUAL(epic_to(rt, p, 3000, &mine), SHOAL_OK);
    CU_ASSERT_EQUAL(epic_to(rt, p, 7, &other), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 1); /* the refused one's */
    atomic_store(&ps_gate, 1);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 3500 &&
                  shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 3500);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).source_items, 3000);
    CU_ASSERT_EQUAL(atomic_load(&ps_resumes), 1);
    CU_ASSERT_EQUAL(atomic_load(&ps_inits), 3); /* the spec's, the epic's, its restart */
    CU_ASSERT_EQUAL(atomic_load(&ps_last_args), (uintptr_t)mine);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 1); /* the record holds the epic's */
    shoal_test_assert_logged("epic started: source counter (with its own args)");
    shoal_test_assert_logged("epic done: 3000 items");

    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, PS_TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 4000 && atomic_load(&args_freed) == 2);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 4000);
    CU_ASSERT_EQUAL(atomic_load(&ps_last_args), (uintptr_t)&spec_to);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 2);

    shoal_pool_spec_t f;
    shoal_pool_spec_init(&f);
    f.worker = &ps_wk;
    f.size = 1;
    shoal_pid_t fp;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &f, &fp), SHOAL_OK);
    CU_ASSERT_EQUAL(epic_to(rt, fp, 10, &other), SHOAL_ENOTSUP);
    CU_ASSERT_EQUAL(atomic_load(&args_freed), 3);

    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(epic_to(rt, p, 10, &other), SHOAL_OK);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 4010);
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
    ps_reset(1000);
    static uint64_t old_end = 100, new_end = 200;
    shoal_runtime_t *rt = shoal_test_runtime_logged(4, SHOAL_LOG_INFO);
    shoal_pool_spec_t s;
    ps_epic_spec(&s, 2, 16);
    s.source_args = &old_end;
    shoal_pid_t p = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    PS_WAIT_UNTIL(shoal_test_pool_stats(rt, p).source_state == SHOAL_SOURCE_DONE);
    CU_ASSERT_EQUAL(atomic_load(&ps_last_args), (uintptr_t)&old_end);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 100);
    shoal_pool_swap_t *sw = calloc(1, sizeof *sw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    ps_epic_spec(&sw->chain[0], 2, 16);
    sw->chain[0].source_args = &new_end;
    sw->size = 2;
    shoal_pool_t *rec = shoal__pool_find(rt, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    uint64_t tok;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(shoal__pool_swap_ask(rt, rec, p, sw, PS_TMO, &tok, &r), SHOAL_OK);
    shoal__pool_unref(rt, rec);
    CU_ASSERT_EQUAL(shoal__pool_swap_step(rt, p, SHOAL__POOL_SWAP_COMMIT, tok, PS_TMO, NULL),
                    SHOAL_OK);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call_priority(rt, p, SHOAL_POOL_EPIC, NULL, 0, PS_TMO, &a),
                    SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    PS_WAIT_UNTIL(atomic_load(&ps_handled) == 300);
    CU_ASSERT_EQUAL(atomic_load(&ps_last_args), (uintptr_t)&new_end);
    CU_ASSERT_EQUAL(atomic_load(&ps_handled), 300); /* 100, then 200 */
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
        {NULL, NULL}};
    return shoal_test_run("pull_source", cases);
}
