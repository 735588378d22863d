/* test_swap_steps.c - a pool's worker swap, step by step (core/pool/swap.c):
 *
 *   - PREPARE starts the new workers beside the old ones and answers only
 *     when all have run init; one failure stops them all, answers with its
 *     text, and the old workers never notice; COMMIT puts the new ones in
 *     place (the old ones finish their queues), ABORT drops them; a pull
 *     pool's new members take nothing from its buffer before COMMIT;
 *   - the new workers are spawned gated: until COMMIT they handle nothing,
 *     their own casts and timers included; after an ABORT, never;
 *   - a COMMIT notes its token in the pool's record (swap_done), an ABORT
 *     does not;
 *   - a pool that sizes itself keeps its running size through a swap.
 *
 * Workers carry a tag in their args, so the test knows which code answered
 * (sw_who); the worker and the swap's steps: support/swap_kit.h.
 */
#include <pthread.h>
#include <string.h>

#include "swap_kit.h"

/* Long enough for a message a gated worker should not handle to be seen. */
static void settle(void)
{
    double end = shoal_test_now() + 0.2;
    while (shoal_test_now() < end)
        shoal_test_nap();
}

/* A PREPARE on a thread of its own, for a slow init. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    const sw_wargs_t *a;
    uint32_t size;
    uint64_t token;
    shoal_pool_swap_result_t r;
    atomic_int answered;
} prep_t;

static void *prepare_thread(void *arg)
{
    prep_t *pr = arg;
    pr->r = sw_prepare(pr->rt, pr->pool, pr->a, pr->size, &pr->token);
    atomic_store(&pr->answered, 1);
    return NULL;
}

/* PREPARE with an init that fails: the answer carries the error and its
 * text, the new workers are stopped, the old ones serve on; ABORT after it
 * is harmless. */
static void prepare_failure_changes_nothing(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t old = {.tag = 0, .init = SW_I_OK}, bad = {.tag = 1, .init = SW_I_FAIL};
    shoal_pool_spec_t s;
    sw_spec_of(&s, 3, &old);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    uint64_t live0 = sw_live(rt);
    uint64_t tok;
    shoal_pool_swap_result_t r = sw_prepare(rt, pool, &bad, 3, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "tag 1 refuses to start"));
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0); /* the new ones are gone, the old ones stay */
    sw_send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_handled[0]) == 30, SW_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[0]), 30);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[1]), 0);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    /* Nothing prepared: COMMIT refuses. */
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_EINVAL);
    shoal_pool_stats_t st;
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, SW_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.retiring, 0);
    shoal_runtime_destroy(rt);
}

/* PREPARE answers only when every new worker's init has run; until
 * COMMIT, the old code serves; after it, the new; ABORT drops a prepared
 * swap. The new size is the swap's. */
static void prepare_commit_and_abort(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t old = {.tag = 0, .init = SW_I_OK}, slow = {.tag = 1, .init = SW_I_GATE},
               next = {.tag = 2, .init = SW_I_OK};
    shoal_pool_spec_t s;
    sw_spec_of(&s, 2, &old);
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    uint64_t live0 = sw_live(rt);

    /* A prepared swap that is aborted. */
    uint64_t tok;
    shoal_pool_swap_result_t r = sw_prepare(rt, pool, &next, 4, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(r.started, 4);
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 4); /* beside the old ones */
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0);

    /* A slow init: no answer until every new worker has run init. */
    prep_t pr = {.rt = rt, .pool = pool, .a = &slow, .size = 3};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, prepare_thread, &pr), 0);
    /* Spawned, their init waiting on the gate: 3 new workers, and the
     * record of the thread blocked in its call. */
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0 + 3 + 1, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 3 + 1);
    /* One swap at a time; nothing to commit yet. */
    uint64_t tok2;
    CU_ASSERT_EQUAL(sw_ask(rt, pool, sw_new_swap(&next, 3), SW_TMO, &tok2, &r), SHOAL_EBUSY);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok2, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok2 - 1, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&pr.answered), 0); /* the inits wait on the gate */
    atomic_store(&sw_gate, 1);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(pr.r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(pr.r.started, 3);
    sw_send_jobs(rt, pool, 20);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_handled[0]) == 20, SW_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[0]), 20); /* still the old code */
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, pr.token, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2); /* two slots replaced, one added */
    CU_ASSERT_EQUAL(sw_who(rt, pool), 1);
    sw_send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_handled[1]) == 30, SW_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[1]), 30);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[0]), 20);
    shoal_pool_stats_t st;
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, SW_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.target_size, 3);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0 + 1, SW_WAIT_S); /* the two old ones have ended */
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 1);

    /* A smaller swap: the extra old workers retire too. */
    r = sw_prepare(rt, pool, &next, 1, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, SW_TMO), SHOAL_OK);
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
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t old = {.tag = 0, .init = SW_I_OK}, next = {.tag = 2, .init = SW_I_OK};
    shoal_pool_spec_t s;
    sw_spec_of(&s, 2, &old);
    s.kind = SHOAL_POOL_KIND_PULL;
    s.buffer = 1000;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    uint64_t tok = 0;
    for (int round = 0; round < 2; round++) {
        int base = atomic_load(&sw_handled[0]);
        atomic_store(&sw_old_gate, 0);
        atomic_store(&sw_hold_old, 1);
        sw_send_jobs(rt, pool, 300);
        shoal_pool_swap_t *sw = sw_new_swap(&next, 3);
        sw->chain[0].kind = SHOAL_POOL_KIND_PULL;
        sw->chain[0].buffer = 1000;
        shoal_pool_swap_result_t r;
        CU_ASSERT_EQUAL(sw_ask(rt, pool, sw, SW_TMO, &tok, &r), SHOAL_OK);
        CU_ASSERT_EQUAL(r.status, SHOAL_OK);
        shoal_test_nap(); /* the new members' first turns, with 300 items waiting */
        CU_ASSERT_EQUAL(atomic_load(&sw_handled[2]), 0);
        atomic_store(&sw_hold_old, 0);
        atomic_store(&sw_old_gate, 1);
        SHOAL_TEST_WAIT_UNTIL(
            atomic_load(&sw_handled[0]) + atomic_load(&sw_handled[2]) == base + 300, SW_WAIT_S);
        CU_ASSERT_EQUAL(atomic_load(&sw_handled[0]), base + 300);
        CU_ASSERT_EQUAL(atomic_load(&sw_handled[2]), 0);
        if (round == 0)
            CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    }
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    sw_send_jobs(rt, pool, 30);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_handled[2]) == 30, SW_WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[2]), 30);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[0]), 600);
    shoal_runtime_destroy(rt);
}

/* New workers whose init sends itself a cast and arms a 10 ms timer: after
 * PREPARE is answered, 200 ms pass and the new code has handled neither;
 * after COMMIT, each worker handles both, once. Prepared again and
 * ABORTed instead, they end without the new code having handled anything
 * (what they had set aside is dropped). */
static void prepared_workers_wait_for_commit(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t next = {.tag = 1, .init = SW_I_SELF}, dropped = {.tag = 2, .init = SW_I_SELF};
    shoal_pid_t pool = sw_spawn_old(rt, 2);
    uint64_t live0 = sw_live(rt), tok;

    shoal_pool_swap_result_t r = sw_prepare(rt, pool, &next, 3, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(r.started, 3);
    CU_ASSERT_EQUAL(atomic_load(&sw_inits), 2 + 3);
    settle();
    CU_ASSERT_EQUAL(atomic_load(&sw_own[1]), 0);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_own[1]) == 3 * 2, SW_WAIT_S);
    settle(); /* each worker's cast and tick, once */
    CU_ASSERT_EQUAL(atomic_load(&sw_own[1]), 3 * 2);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0 + 1, SW_WAIT_S); /* the old two have ended */
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 1);

    r = sw_prepare(rt, pool, &dropped, 3, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&sw_inits), 2 + 3 + 3);
    settle();
    CU_ASSERT_EQUAL(atomic_load(&sw_own[2]), 0);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0 + 1, SW_WAIT_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 1); /* the three prepared have ended */
    settle();
    CU_ASSERT_EQUAL(atomic_load(&sw_own[2]), 0);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[2]), 0);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 1);
    CU_ASSERT_EQUAL(atomic_load(&sw_own[1]), 3 * 2);
    shoal_runtime_destroy(rt);
}

/* The token of the last swap the pool's record says it committed. */
static uint64_t swap_done(shoal_runtime_t *rt, shoal_pid_t pool)
{
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    uint64_t t = atomic_load_explicit(&p->swap_done, memory_order_relaxed);
    shoal__pool_unref(rt, p);
    return t;
}

/* A COMMIT notes its token in the record (swap_done: how the host learns
 * whether a COMMIT it could not wait for took effect); an ABORT, a
 * failed PREPARE and a refused COMMIT leave it as it was. */
static void a_commit_sets_swap_done(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t bad = {.tag = 1, .init = SW_I_FAIL}, next = {.tag = 2, .init = SW_I_OK};
    shoal_pid_t pool = sw_spawn_old(rt, 2);
    CU_ASSERT_EQUAL(swap_done(rt, pool), 0); /* none yet */
    uint64_t tok;
    shoal_pool_swap_result_t r = sw_prepare(rt, pool, &next, 2, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(tok, 0);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(swap_done(rt, pool), 0);
    r = sw_prepare(rt, pool, &bad, 2, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_EINVAL);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(swap_done(rt, pool), 0);

    r = sw_prepare(rt, pool, &next, 2, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(swap_done(rt, pool), tok); /* read after the answer: set before it */
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);

    /* A later swap aborted: the record still names the one committed. */
    uint64_t done = tok;
    r = sw_prepare(rt, pool, &next, 2, &tok);
    CU_ASSERT_EQUAL(r.status, SHOAL_OK);
    CU_ASSERT_NOT_EQUAL(tok, done);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_ABORT, tok, NULL), SHOAL_OK);
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(swap_done(rt, pool), done);
    shoal_runtime_destroy(rt);
}

/* A pool that sizes itself keeps the size it runs with through a swap
 * (keep_size): it ran 5 after a resize, the file says 2 -- it runs 5 of
 * the new code after COMMIT (the swap had set it back to the file's 2). */
static void a_swap_keeps_a_running_size(void)
{
    shoal_runtime_t *rt = sw_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    sw_wargs_t next = {.tag = 2, .init = SW_I_OK};
    shoal_pid_t pool = sw_spawn_old(rt, 2);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 5, SW_TMO), 5);
    uint64_t live0 = sw_live(rt), tok;
    shoal_pool_swap_t *sw = sw_new_swap(&next, 2);
    sw->keep_size = true;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(sw_ask(rt, pool, sw, SW_TMO, &tok, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(r.started, 5);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 5);
    shoal_pool_stats_t st;
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &st, SW_TMO), SHOAL_OK);
    CU_ASSERT_EQUAL(st.pool_size, 5);
    CU_ASSERT_EQUAL(st.target_size, 5);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, SW_WAIT_S); /* the 5 old ones have ended */
    CU_ASSERT_EQUAL(sw_live(rt), live0);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"prepare failure changes nothing", prepare_failure_changes_nothing},
        {"prepare, commit and abort", prepare_commit_and_abort},
        {"a pull pool's new members serve only after COMMIT", pull_members_serve_only_after_commit},
        {"a PREPAREd worker handles nothing until COMMIT", prepared_workers_wait_for_commit},
        {"a COMMIT sets swap_done to its token", a_commit_sets_swap_done},
        {"a swap keeps a running size", a_swap_keeps_a_running_size},
        {NULL, NULL},
    };
    return shoal_test_run("swap: PREPARE, COMMIT and ABORT", cases);
}
