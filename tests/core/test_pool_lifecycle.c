/* test_pool_lifecycle.c - how pools (core/pool/) are made and how they end:
 * nested pools (counts roll up, draining the outer pool drains the inner
 * ones), drain with a worker that crashes on the way, a pool of each kind
 * stopped through its PID reading no worker left, bad specs refused with
 * EINVAL (and the boundaries that are fine), a pool as the child of an
 * actor, and runtime destroy with live pools of every sort.
 *
 * Handlers never call CUnit: they record into atomics (pool_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs full
 * mailboxes, workers block on a gate that the test opens, so what is queued
 * where is decided by the test, never by timing.
 */
#include <pthread.h>
#include <string.h>

#include "pool/pool.h"
#include "pool_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PK_WAIT_S)

/* ---- nested pools ------------------------------------------------------------ */

/* Work reaches the leaves and the counts roll up to the outer pool. Then
 * one leaf blocks with work queued behind it, and draining the outer pool
 * drains the inner ones: the drain answers once that work is done. */
static void nested_case(unsigned depth)
{
    enum { N = 40, Q = 20 };
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t leaf, mid, outer;
    pk_spec_of(&leaf, "leaf", 2, 16);
    pk_nest(&mid, "mid", 2, &leaf);
    pk_nest(&outer, "outer", 2, depth == 3 ? &mid : &leaf);
    shoal_pid_t pool = pk_spawn(rt, &outer);
    unsigned leaves = depth == 3 ? 8 : 4;
    CU_ASSERT(pk_ready(rt, 2 * leaves - 1)); /* the pools and their leaves */
    for (uint32_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = pk_settle(rt, pool, N, 0);
    CU_ASSERT_EQUAL(ps.pool_size, 2);
    PK_COUNTS(ps, N, N, 0, 0);
    pk_seen_all(0, N, 1);
    CU_ASSERT_EQUAL(pk_owned_by(pool, 0, N), 0); /* only leaves handle work */
    char json[4096];
    CU_ASSERT_EQUAL(pk_inspect(rt, pool, json, sizeof json), SHOAL_OK);
    pk_has(json, "\"worker_is_pool\":true");
    pk_has(json, depth == 3 ? "\"worker_behaviour\":\"mid\"" : "\"worker_behaviour\":\"leaf\"");

    pk_block(rt, pool, N, 0);
    for (uint32_t i = N + 1; i < N + Q; i++) /* what lands behind it stays queued */
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    PK_WAIT_STATS(ps, rt, pool, ps.messages_handled + ps.queue_depth == N + Q - 1);
    CU_ASSERT_EQUAL(ps.messages_handled + ps.queue_depth, N + Q - 1);
    pk_drainer_t d;
    pk_drainer_start(&d, rt, pool);
    /* The inner pool without the blocked leaf drains and ends. */
    PK_WAIT_STATS(ps, rt, pool, ps.state == SHOAL_POOL_DRAINING && ps.retiring == 1);
    PK_SHAPE(ps, SHOAL_POOL_DRAINING, 0, 0, 0);
    CU_ASSERT_EQUAL(ps.retiring, 1);
    /* A second drain, as a priority cast, changes nothing. */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(pk_job(rt, pool, N + Q, A_OK), SHOAL_ENOPROC);
    shoal_answer_t a;
    CU_ASSERT_EQUAL(shoal_runtime_call(rt, pool, T_WHO, NULL, 0, PK_TMO, &a), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(pk_st(rt, pool).state, SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(atomic_load(&d.rc), PK_PENDING); /* a leaf is blocked */
    atomic_store(&pk_gate, 1);
    pthread_join(d.t, NULL);
    CU_ASSERT_EQUAL(atomic_load(&d.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&pk_done), N + Q);
    pk_seen_all(0, N + Q, 1);
    CU_ASSERT(pk_all_ended(rt)); /* the inner pools and every leaf too */
    shoal_runtime_destroy(rt);
}

static void nested_depth_2(void) { nested_case(2); }
static void nested_depth_3(void) { nested_case(3); }

/* ---- drain ----------------------------------------------------------------------- */

/* Draining with a worker that crashes on the way: its queue comes back to
 * the pool, which has no open worker left, and is still handled. */
static void drain_handles_everything_even_after_a_crash(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "drain", 2, 8);
    pk_block(rt, pool, 0, A_PANIC);
    pk_block(rt, pool, 1, 0);
    for (uint32_t i = 2; i < 8; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    pk_drainer_t d;
    pk_drainer_start(&d, rt, pool);
    shoal_pool_stats_t ps;
    PK_WAIT_STATS(ps, rt, pool, ps.state == SHOAL_POOL_DRAINING);
    PK_SHAPE(ps, SHOAL_POOL_DRAINING, 0, 0, 0);
    CU_ASSERT_EQUAL(ps.retiring, 2);
    CU_ASSERT_EQUAL(ps.queue_depth, 6);
    CU_ASSERT_EQUAL(pk_job(rt, pool, 8, A_OK), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_add_workers(rt, pool, 1, PK_TMO),
                    SHOAL_ENOPROC); /* no resizing now */
    CU_ASSERT_EQUAL(atomic_load(&d.rc), PK_PENDING);
    atomic_store(&pk_gate, 1);
    pthread_join(d.t, NULL);
    CU_ASSERT_EQUAL(atomic_load(&d.rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&pk_done), 7);
    pk_seen_all(0, 8, 1);
    CU_ASSERT_EQUAL(pk_owned_by(atomic_load(&pk_owner[0]), 0, 8), 1);
    CU_ASSERT(pk_all_ended(rt));
    /* The ended pool answers nothing. */
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, pool, &ps, PK_TMO), SHOAL_ENOPROC);
    char json[64];
    CU_ASSERT_EQUAL(pk_inspect(rt, pool, json, sizeof json), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, PK_TMO), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, pool, 3, PK_TMO), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(pk_job(rt, pool, 9, A_OK), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* A drain asked again and again with no time to wait (a task pool's
 * release_timeout(0) in a loop, while a task runs on): each call that
 * timed out has ended its caller, and the pool keeps no place for it --
 * it kept one per call until the drain ended (20,000 calls, 20,000
 * waiters). Once the job is let go, the drain ends the pool. */
#define POLLS 20000

static void drain_polled_keeps_no_place_per_call(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = pk_wk_pool(rt, "polled", 1, 8);
    pk_block(rt, pool, 0, 0);
    int timedout = 0;
    for (int i = 0; i < POLLS; i++)
        timedout += shoal_pool_drain(rt, pool, 0) == SHOAL_ETIMEDOUT;
    CU_ASSERT_EQUAL(timedout, POLLS);
    /* A priority call from this thread, as the drains were: answered after
     * each of them, so the pool's actor has handled them all (and its
     * writes happen before the answer). */
    shoal_pool_stats_t ps = pk_st(rt, pool);
    CU_ASSERT_EQUAL(ps.state, SHOAL_POOL_DRAINING);
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    /* One caller at a time: the list never grows past its first 4. */
    CU_ASSERT(p->nwaiters <= 4);
    CU_ASSERT_EQUAL(p->waiters_cap, 4);
    shoal__pool_unref(rt, p);
    atomic_store(&pk_gate, 1);
    WAIT_UNTIL(pk_all_ended(rt));
    CU_ASSERT(pk_all_ended(rt));
    CU_ASSERT_EQUAL(atomic_load(&pk_done), 1);
    shoal_runtime_destroy(rt);
}

/* ---- stopped through its PID ------------------------------------------------------- */

/* A pool of each kind stopped through its PID (shoal_runtime_stop_actor),
 * not drained: its record -- what a task pool's counters, the host's table
 * and shoalctl read once the pool's actor has gone -- says it has no
 * worker, as after a drain: size, target, running, idle, retiring and a
 * checkout pool's members (in use, free, starting) are 0. (They stayed as
 * at the end: size and target 3, a pull pool's 3 running and a checkout
 * pool's 3 free counted from members that had ended.) */
static void stopped_case(uint32_t kind)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s;
    pk_spec_of(&s, "stopped", 3, 8);
    s.kind = kind;
    shoal_pid_t pool = pk_spawn(rt, &s);
    CU_ASSERT_EQUAL(pk_st(rt, pool).pool_size, 3);
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, pool), SHOAL_OK);
    WAIT_UNTIL(shoal__pool_is_quiet(p));
    CU_ASSERT_FATAL(shoal__pool_is_quiet(p));
    shoal_pool_stats_t st;
    shoal__pool_peek(p, &st);
    CU_ASSERT_EQUAL(st.pool_size, 0);
    CU_ASSERT_EQUAL(st.target_size, 0);
    CU_ASSERT_EQUAL(st.running, 0);
    CU_ASSERT_EQUAL(st.idle, 0);
    CU_ASSERT_EQUAL(st.retiring, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 0);
    CU_ASSERT_EQUAL(st.starting, 0);
    shoal__pool_unref(rt, p);
    shoal_runtime_destroy(rt);
}

static void stopped_forward(void) { stopped_case(SHOAL_POOL_KIND_FORWARD); }
static void stopped_pull(void) { stopped_case(SHOAL_POOL_KIND_PULL); }
static void stopped_checkout(void) { stopped_case(SHOAL_POOL_KIND_CHECKOUT); }

/* ---- bad specs --------------------------------------------------------------------- */

static const shoal_behaviour_t no_handler = {.name = "no-handler"};

static void bad_specs_are_einval(void)
{
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s, inner;
    shoal_pid_t pid;
    pk_spec_of(&inner, "inner", 2, 8);
#define BAD(change)                                                                                \
    do {                                                                                           \
        pk_spec_of(&s, "bad", 2, 8);                                                               \
        change;                                                                                    \
        CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &pid), SHOAL_EINVAL);                     \
    } while (0)
    BAD(s.worker = NULL);
    BAD(s.worker_pool = &inner);
    BAD(s.worker = &no_handler);
    BAD((s.size = 5, s.max_size = 4));
    BAD(s.min_size = 3);
    BAD(s.max_size = SHOAL_POOL_MAX_SIZE + 1);
    BAD(s.mailbox = 0);
    BAD(s.mailbox = SHOAL_MAILBOX_MAX + 1);
    BAD(s.restart.within_ms = 0);
    BAD(s.restart.backoff_ms = 0);
    char name[65];
    memset(name, 'n', 64);
    name[64] = '\0';
    BAD(s.name = name); /* 64 characters: one too many */
    inner.mailbox = 0;
    BAD((s.worker = NULL, s.worker_pool = &inner)); /* the nested spec is checked too */
#undef BAD
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, NULL, &pid), SHOAL_EINVAL);
    pk_spec_of(&s, "ok", 1, 8);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, NULL), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, 0);
    /* The boundaries themselves are fine: 63 characters, 8 levels. */
    name[63] = '\0';
    s.name = name;
    pid = pk_spawn(rt, &s);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pid, PK_TMO), SHOAL_OK);
    CU_ASSERT(pk_all_ended(rt));
    shoal_pool_spec_t chain[SHOAL_POOL_MAX_DEPTH + 1];
    pk_spec_of(&chain[SHOAL_POOL_MAX_DEPTH], "leaf", 1, 4);
    for (unsigned i = 0; i < SHOAL_POOL_MAX_DEPTH; i++)
        pk_nest(&chain[i], "level", 1, &chain[i + 1]);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &chain[0], &pid), SHOAL_EINVAL); /* 9 levels */
    pid = pk_spawn(rt, &chain[1]);
    CU_ASSERT(pk_ready(rt, 9)); /* 8 pools and the leaf */
    CU_ASSERT_EQUAL(pk_job(rt, pid, 0, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = pk_settle(rt, pid, 1, 0);
    PK_COUNTS(ps, 1, 1, 0, 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pid, PK_TMO), SHOAL_OK);
    CU_ASSERT(pk_all_ended(rt));
    shoal_runtime_destroy(rt);
}

/* ---- a pool as the child of an actor ----------------------------------------------------- */

static shoal_pool_spec_t par_spec;
static _Atomic shoal_pid_t par_pool, par_exit_from;
static atomic_int par_rc, par_bad_rc, par_exits, par_exit_status;

static int par_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_GO) {
        shoal_pid_t p = SHOAL_PID_NONE, q = SHOAL_PID_NONE;
        shoal_pool_spec_t bad = par_spec;
        bad.mailbox = 0;
        atomic_store(&par_bad_rc, shoal_spawn_pool(ctx, &bad, &q));
        int rc = shoal_spawn_pool(ctx, &par_spec, &p);
        atomic_store(&par_pool, p);
        atomic_store(&par_rc, rc);
    } else if (msg->kind == SHOAL_MSG_EXIT) {
        atomic_store(&par_exit_from, msg->from);
        atomic_store(&par_exit_status, msg->status);
        atomic_fetch_add(&par_exits, 1);
    }
    return 0;
}

static const shoal_behaviour_t par_beh = {.name = "parent", .handle_message = par_message};

static shoal_pid_t par_spawn_pool(shoal_runtime_t *rt, shoal_pid_t par)
{
    atomic_store(&par_rc, PK_PENDING);
    atomic_store(&par_pool, SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, par, T_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&par_rc) != PK_PENDING);
    CU_ASSERT_EQUAL(atomic_load(&par_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&par_bad_rc), SHOAL_EINVAL);
    return atomic_load(&par_pool);
}

static void pool_as_child_of_an_actor(void)
{
    atomic_store(&par_exits, 0);
    shoal_runtime_t *rt = pk_begin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    pk_spec_of(&par_spec, "child", 2, 8);
    shoal_pid_t par;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &par_beh, NULL, NULL, &par), SHOAL_OK);
    shoal_pid_t pool = par_spawn_pool(rt, par);
    /* The stats call is queued behind the pool's init: its workers exist. */
    CU_ASSERT_EQUAL(pk_st(rt, pool).pool_size, 2);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(pk_job(rt, pool, i, A_OK), SHOAL_OK);
    shoal_pool_stats_t ps = pk_settle(rt, pool, 4, 0);
    PK_COUNTS(ps, 4, 4, 0, 0);
    /* Drained, it ends normally and its parent hears it. */
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool, PK_TMO), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&par_exits) == 1);
    CU_ASSERT_EQUAL(atomic_load(&par_exits), 1);
    CU_ASSERT_EQUAL(atomic_load(&par_exit_from), pool);
    CU_ASSERT_EQUAL(atomic_load(&par_exit_status), SHOAL_OK);
    /* Stopping the parent stops a child pool and its workers. */
    pool = par_spawn_pool(rt, par);
    CU_ASSERT_EQUAL(pk_st(rt, pool).pool_size, 2);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, par), SHOAL_OK);
    CU_ASSERT(pk_all_ended(rt));
    CU_ASSERT_EQUAL(pk_job(rt, pool, 10, A_OK), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

/* ---- destroy with live pools --------------------------------------------------------- */

static void destroy_with_live_pools(void)
{
    shoal_runtime_t *rt = pk_begin();
    atomic_store(&pk_gate, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t leaf, mid, outer, deg, managed;
    shoal_pid_t p1 = pk_wk_pool(rt, "plain", 3, 64);
    for (uint32_t i = 0; i < 60; i++)
        CU_ASSERT_EQUAL(pk_job(rt, p1, i, A_OK), SHOAL_OK);
    pk_spec_of(&leaf, "leaf", 2, 8);
    pk_nest(&mid, "mid", 2, &leaf);
    pk_nest(&outer, "outer", 2, &mid);
    shoal_pid_t p2 = pk_spawn(rt, &outer);
    CU_ASSERT(pk_ready(rt, 4 + 15));
    for (uint32_t i = 60; i < 80; i++)
        CU_ASSERT_EQUAL(pk_job(rt, p2, i, A_OK), SHOAL_OK);
    /* No restart allowed: the first death degrades it, for a minute. */
    pk_spec_of(&deg, "degraded", 2, 8);
    pk_spec_restart(&deg, 0, 60000, 60000);
    shoal_pid_t p3 = pk_spawn(rt, &deg);
    CU_ASSERT_EQUAL(pk_job(rt, p3, 80, A_PANIC), SHOAL_OK);
    shoal_pool_stats_t ps;
    PK_WAIT_STATS(ps, rt, p3, ps.state == SHOAL_POOL_DEGRADED);
    PK_SHAPE(ps, SHOAL_POOL_DEGRADED, 1, 2, 0);
    pk_spec_of(&managed, "managed", 2, 8);
    managed.manager = &pk_mgr;
    managed.manager_args = &pk_mgr_base;
    pk_spawn(rt, &managed);
    shoal_runtime_destroy(rt);
    /* Stopped, not drained: the manager heard why. */
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&pk_mgr_reason), SHOAL_ESHUTDOWN);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"nested depth 2: counts roll up, drain drains the inner pools", nested_depth_2},
        {"nested depth 3: counts roll up, drain drains the inner pools", nested_depth_3},
        {"drain handles everything, even after a crash",
         drain_handles_everything_even_after_a_crash},
        {"a drain polled with no time to wait keeps no place per call",
         drain_polled_keeps_no_place_per_call},
        {"a forward pool stopped through its PID has no worker left", stopped_forward},
        {"a pull pool stopped through its PID has no worker left", stopped_pull},
        {"a checkout pool stopped through its PID has no worker left", stopped_checkout},
        {"bad specs are EINVAL", bad_specs_are_einval},
        {"pool as the child of an actor", pool_as_child_of_an_actor},
        {"destroy with live pools", destroy_with_live_pools},
        {NULL, NULL},
    };
    return shoal_test_run("pool_lifecycle", cases);
}
