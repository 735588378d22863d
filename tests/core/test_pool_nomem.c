/* test_pool_nomem.c - pools when memory runs out (core/pool/): allocations
 * refused on purpose (support/fail_alloc.h) where a pool lost something,
 * stalled or said nothing --
 *   - a grow tick that cannot be sent: a sender's SHOAL__POOL_TICK_GROW
 *     finds no envelope (elastic.c: THE GROW LIST, lost tick). The sends
 *     on a forward pool's grow list, and every send pushed after it, are
 *     handled all the same; a pool drained meanwhile ends, with them
 *     handled; a pull pool whose ask was lost hears the next ask at once.
 *   - a member the pool cannot track as its child (its list of children
 *     cannot grow): the member is never spawned, so none runs with the
 *     seat its pool frees for it (workers.c: spawn_member); a nested pool
 *     so is never spawned, nor its members.
 *   - elastic settings whose state cannot be allocated at the pool's start:
 *     the start fails with SHOAL_ENOMEM and the text a host prints
 *     (elastic.c: shoal__pool_elastic_start), for both kinds.
 *   - a swap's chain of nested specs that cannot be copied: the pool's
 *     own chain stands (pool.c: shoal__pool_copy_nested), and the COMMIT
 *     that needed it aborts its swap (swap.c): the new workers stop, the
 *     old ones serve on, and the next swap is not refused.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <limits.h>
#include <stdlib.h>

#include "actor/envelope.h"
#include "elastic_kit.h"
#include "fail_alloc.h"
#include "pool/elastic.h"
#include "runtime/runtime.h"
#include "swap_kit.h"

/* How long a test waits for what a pool's tick (250 ms at most) does. */
#define LOOK_S 5.0
#define ATTEMPTS 5

/* ---- a grow tick that cannot be sent -------------------------------------------- */

/* The test thread's envelopes, held so that its next one must come from the
 * heap: its own cache and the runtime's depot emptied into e (envelope.c:
 * a refill takes the depot's, then a new slab). */
#define HOARD_MAX (1u << 16)

typedef struct {
    shoal_env_t **e;
    size_t n;
} hoard_t;

/* Takes every envelope this thread can have while each of its allocations
 * is refused: true if the last one was refused (not HOARD_MAX reached). */
static bool hoard_take(shoal_tcache_t *tc, hoard_t *h)
{
    fa_arm(FA_ANY, 0, UINT_MAX);
    shoal_env_t *e = NULL;
    while (h->n < HOARD_MAX && (e = shoal__env_alloc(tc)) != NULL)
        h->e[h->n++] = e;
    return e == NULL;
}

static void hoard_give_back(shoal_tcache_t *tc, hoard_t *h)
{
    fa_disarm();
    while (h->n > 0)
        shoal__env_free(tc, h->e[--h->n]);
}

/* Sends job `act` to the lazy pool `pool` while the test thread has one
 * envelope and can get no other: the job takes it, and the grow tick that
 * follows (a forward pool's push onto an empty grow list, a pull pool's
 * ask for a member) finds none. *lost: whether the tick's envelope was
 * refused -- another thread may have given the depot envelopes meanwhile,
 * and then the tick went out. The send's result. */
static int send_losing_tick(shoal_runtime_t *rt, shoal_pid_t pool, uint32_t act, bool *lost)
{
    shoal_tcache_t *tc = shoal__tcache_get(rt);
    hoard_t h = {malloc(HOARD_MAX * sizeof(shoal_env_t *)), 0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(h.e);
    int rc = SHOAL_EFAILED;
    *lost = false;
    if (hoard_take(tc, &h) && h.n != 0) {
        shoal__env_free(tc, h.e[--h.n]); /* the job's own */
        unsigned long before = fa_refused();
        rc = ek_job(rt, pool, act);
        *lost = fa_refused() != before;
    }
    hoard_give_back(tc, &h);
    free(h.e);
    return rc;
}

/* A lazy forward pool of no worker (max 1, mailbox 8) whose first job's
 * grow tick was lost: its runtime, or NULL if no attempt lost it. */
static shoal_runtime_t *forward_lost_tick_pool(shoal_pid_t *pool)
{
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        ek_reset();
        shoal_runtime_t *rt = shoal_test_runtime(2);
        shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 0, 0, 1, 8);
        s.idle_timeout_ms = 60000; /* a tick each 250 ms */
        *pool = ek_spawn(rt, &s);
        CU_ASSERT_EQUAL(EK_STATS(rt, *pool).pool_size, 0); /* started: it is lazy */
        bool lost;
        CU_ASSERT_EQUAL(send_losing_tick(rt, *pool, EK_A_OK, &lost), SHOAL_OK);
        if (lost)
            return rt;
        shoal_runtime_destroy(rt);
    }
    CU_FAIL("no grow tick could be made to fail");
    return NULL;
}

/* The first job's tick is lost, and three more jobs are pushed after it
 * onto a grow list that is not empty (they send no tick). The pool's tick
 * takes them: one worker starts, and all 4 run, once each. */
static void forward_lost_tick(void)
{
    shoal_pid_t p;
    shoal_runtime_t *rt = forward_lost_tick_pool(&p);
    if (rt == NULL)
        return;
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ek_done) == 4, LOOK_S);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 4);
    if (atomic_load(&ek_done) == 4) {
        EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 4);
        shoal_pool_stats_t st = EK_STATS(rt, p);
        CU_ASSERT_EQUAL(st.messages_forwarded, 4);
        CU_ASSERT_EQUAL(st.messages_handled, 4);
        CU_ASSERT_EQUAL(st.messages_unhandled, 0);
        CU_ASSERT_EQUAL(st.messages_dropped, 0);
        CU_ASSERT_EQUAL(st.lazy_grown, 1);
        CU_ASSERT_EQUAL(st.pool_size, 1);
    }
    shoal_runtime_destroy(rt);
}

/* The first job's tick is lost and the pool is drained at once, the job
 * still on its grow list: the drain ends (the tick looks while the pool
 * drains) and the job ran before it did -- nothing dropped. */
static void forward_lost_tick_drain(void)
{
    shoal_pid_t p;
    shoal_runtime_t *rt = forward_lost_tick_pool(&p);
    if (rt == NULL)
        return;
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, p, (uint64_t)(LOOK_S * 1000)), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 1);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).msgs_dropped, 0);
    shoal_runtime_destroy(rt);
}

/* A lazy pull pool of 1 (max 4, prefetch 1) whose member holds a job, and
 * a second job whose ask for a member was lost: its runtime, or NULL if no
 * attempt lost it. */
static shoal_runtime_t *pull_lost_ask_pool(shoal_pid_t *pool)
{
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        ek_reset();
        shoal_runtime_t *rt = shoal_test_runtime(6); /* 3 held, and the pool's actor */
        shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_PULL, 1, 1, 4, 8);
        s.prefetch = 1;
        s.idle_timeout_ms = 60000;
        *pool = ek_spawn(rt, &s);
        EK_WAIT_UNTIL(EK_STATS(rt, *pool).idle == 1);
        CU_ASSERT_EQUAL(ek_job(rt, *pool, EK_A_BLOCK), SHOAL_OK);
        EK_WAIT_UNTIL(atomic_load(&ek_entered) == 1);
        CU_ASSERT_EQUAL_FATAL(atomic_load(&ek_entered), 1);
        bool lost;
        CU_ASSERT_EQUAL(send_losing_tick(rt, *pool, EK_A_BLOCK, &lost), SHOAL_OK);
        if (lost)
            return rt;
        atomic_store(&ek_gate, 1);
        shoal_runtime_destroy(rt);
    }
    CU_FAIL("no grow ask could be made to fail");
    return NULL;
}

/* The second job's ask is lost. The pool's tick starts a member for it
 * all the same; then a third job that finds no member free asks again and
 * is heard at once -- once the pool's actor has read what the send asked
 * (the stats call comes after it from the same thread), 3 members live. A
 * lost ask used to leave the pool deaf to asks (grow_asked stayed set):
 * members started only at its ticks. */
static void pull_lost_ask(void)
{
    shoal_pid_t p;
    shoal_runtime_t *rt = pull_lost_ask_pool(&p);
    if (rt == NULL)
        return;
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ek_entered) == 2, LOOK_S);
    CU_ASSERT_EQUAL(atomic_load(&ek_entered), 2);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_BLOCK), SHOAL_OK);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(st.lazy_grown, 2);
    atomic_store(&ek_gate, 1);
    EK_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 3);
    st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.messages_handled, 3);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 3);
    shoal_runtime_destroy(rt);
}

/* ---- a member the pool cannot track -------------------------------------------- */

/* A member that counts its inits and its ends. */
static atomic_int inits, ends;

static int counted_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    atomic_fetch_add(&inits, 1);
    return SHOAL_OK;
}

static int counted_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}

static void counted_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    (void)reason;
    atomic_fetch_add(&ends, 1);
}

static const shoal_behaviour_t counted = {.name = "counted",
                                          .init = counted_init,
                                          .handle_message = counted_message,
                                          .terminate = counted_terminate};

/* Starts pool spec s (5 workers of `counted`, or pools of them) with its
 * actor's list of children refused its growth from 4 to 8 (ctx.c: it
 * doubles, from 4), in the pool's init -- one realloc: the start fails
 * with SHOAL_ENOMEM ("out of memory"), nothing of it is left running,
 * `spawned` actors were spawned, and 4 workers ran their init and end. */
static void start_fifth_untracked(shoal_pool_spec_t *spec, uint64_t spawned)
{
    atomic_store(&inits, 0);
    atomic_store(&ends, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    shoal_pool_spec_t s = *spec;
    static const fa_rule_t grow_children = {FA_REALLOC, 8 * sizeof(shoal_pid_t), 1};
    s.manager = &fa_manager;
    s.manager_args = &grow_children;
    unsigned long refused = fa_refused();
    shoal_pid_t pid;
    char why[256];
    CU_ASSERT_EQUAL(shoal__pool_start(rt, &s, NULL, EK_TMO, &pid, why, sizeof why), SHOAL_ENOMEM);
    CU_ASSERT_STRING_EQUAL(why, "out of memory");
    CU_ASSERT_EQUAL(fa_refused() - refused, 1);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).actors_live == before.actors_live, LOOK_S);
    shoal_runtime_stats_t after = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(after.actors_live, before.actors_live);
    CU_ASSERT_EQUAL(after.actors_spawned - before.actors_spawned, spawned);
    CU_ASSERT_EQUAL(atomic_load(&inits), 4);
    CU_ASSERT_EQUAL(atomic_load(&ends), 4);
    shoal_runtime_destroy(rt);
}

/* A pull pool of 5 whose 5th member cannot be tracked: in the pool's init,
 * the pool actor's list of children cannot grow from 4 to 8 (ctx.c: it
 * doubles, from 4) -- one realloc refused. The start fails with
 * SHOAL_ENOMEM, and only the 4 members the pool tracked were spawned, ran
 * and ended. The 5th used to be spawned, found untrackable and stopped: it
 * ran its init and its end while its pool freed its seat under it. */
static void pull_member_untracked(void)
{
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_PULL, 5, 5, 8, 8);
    s.worker = &counted;
    start_fifth_untracked(&s, 5); /* the pool, 4 members */
}

/* As above, a pool of 5 nested pools (one member each) whose 5th cannot
 * be tracked: the start fails with SHOAL_ENOMEM, and only the 4 nested
 * pools tracked were spawned, with their members: 4 inits, 4 ends. The 5th
 * used to be spawned, found untrackable and stopped -- after it had
 * started its own member, which ran its init and its end. */
static void nested_pool_untracked(void)
{
    shoal_pool_spec_t inner = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 1, 1, 1, 8);
    inner.worker = &counted;
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.name = "outer";
    s.worker_pool = &inner;
    s.size = 5;
    start_fifth_untracked(&s, 9); /* the pool, 4 nested pools, a member each */
}

/* ---- elastic settings that cannot be set up at start ------------------------------ */

/* A pool started with elastic settings (idle_timeout) whose elastic state
 * cannot be allocated: in its init, the calloc of its idle tracking (one
 * shoal_seen_t per worker it may have, max_size 37) is refused. The start
 * fails with SHOAL_ENOMEM and says why -- shoald prints it after
 * "pools.NAME: cannot start: " -- and nothing of the pool is left running.
 * It used to start without its elastic settings and say nothing. */
static void elastic_setup_nomem_case(uint32_t kind)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_runtime_stats_t before = shoal_test_stats(rt);
    shoal_pool_spec_t s = ek_spec_of(kind, 2, 1, 37, 4);
    s.idle_timeout_ms = 60000;
    static const fa_rule_t seen = {FA_CALLOC, 37 * sizeof(shoal_seen_t), 1};
    s.manager = &fa_manager;
    s.manager_args = &seen;
    unsigned long refused = fa_refused();
    shoal_pid_t pid;
    char why[256];
    CU_ASSERT_EQUAL(shoal__pool_start(rt, &s, NULL, EK_TMO, &pid, why, sizeof why), SHOAL_ENOMEM);
    CU_ASSERT_STRING_EQUAL(why, "elastic state for up to 37 workers: out of memory");
    CU_ASSERT_EQUAL(pid, SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(fa_refused() - refused, 1);
    SHOAL_TEST_WAIT_UNTIL(shoal_test_stats(rt).actors_live == before.actors_live, LOOK_S);
    CU_ASSERT_EQUAL(shoal_test_stats(rt).actors_live, before.actors_live);
    shoal_runtime_destroy(rt);
}

static void forward_elastic_setup_nomem(void) { elastic_setup_nomem_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_elastic_setup_nomem(void) { elastic_setup_nomem_case(SHOAL_POOL_KIND_PULL); }

/* A swap's commit copies the new code's chain of nested specs into the
 * pool's record; without memory for the copy, the chain the pool has
 * stands, whole (the commit fails, and aborts its swap: below).
 * (Before the fix the old chain was freed first: the record's spec
 * pointed into freed memory, read at the pool's next spawn.) */
static void nested_chain_kept_without_memory(void)
{
    shoal_pool_spec_t inner_old, inner_new, top_old, top_new;
    shoal_pool_spec_init(&inner_old);
    inner_old.name = "old-inner";
    shoal_pool_spec_init(&top_old);
    top_old.name = "top";
    top_old.worker_pool = &inner_old;
    shoal_pool_spec_init(&inner_new);
    inner_new.name = "new-inner";
    top_new = top_old;
    top_new.worker_pool = &inner_new;
    shoal_pool_t *p = calloc(1, sizeof *p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL_FATAL(shoal__pool_copy_nested(p, &top_old), SHOAL_OK);
    const shoal_pool_spec_t *kept = p->spec.worker_pool;
    CU_ASSERT_PTR_NOT_NULL_FATAL(kept);
    CU_ASSERT_STRING_EQUAL(kept->name, "old-inner");
    fa_arm(FA_CALLOC, 0, 1);
    CU_ASSERT_EQUAL(shoal__pool_copy_nested(p, &top_new), SHOAL_ENOMEM);
    fa_disarm();
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->nested);
    CU_ASSERT_PTR_EQUAL(p->spec.worker_pool, kept);
    CU_ASSERT_STRING_EQUAL(p->spec.worker_pool->name, "old-inner");
    CU_ASSERT_EQUAL(shoal__pool_copy_nested(p, &top_new), SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(p->spec.worker_pool->name, "new-inner");
    free(p->nested);
    free(p);
}

/* What shoal__pool_copy_nested allocates for each level of a chain (pool.c:
 * nested_spec_t, a spec and its name): a COMMIT of a chain one level deep
 * asks calloc for exactly this. */
typedef struct {
    shoal_pool_spec_t spec;
    char name[64];
} nested_copy_t;

/* A priority call of this type to a pool managed by `arming` arms, on the
 * pool actor's thread, the refusal of the next copy of a one-level chain. */
#define ARM_COPY 7u

static int arming_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    return SHOAL_OK;
}

static int arming_call(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg, shoal_reply_t *reply)
{
    (void)ctx;
    (void)state;
    if (msg->type != ARM_COPY) {
        shoal_reply_error(reply, SHOAL_ENOTSUP);
        return SHOAL_OK;
    }
    fa_arm(FA_CALLOC, sizeof(nested_copy_t), 1);
    return shoal_reply_set(reply, ARM_COPY, NULL, 0);
}

static const shoal_behaviour_t arming = {
    .name = "arming", .handle_message = arming_message, .handle_call = arming_call};

/* A pool of 2 nested pools (1 worker of tag 0 each) on a runtime of one
 * dispatcher thread, so that its actor's allocations are that thread's: a
 * swap to nested pools of tag 1 is prepared, the copy of its chain is then
 * refused, and its COMMIT answers SHOAL_ENOMEM. That COMMIT aborted its
 * swap: the new nested pools and their workers end, the record names no
 * swap done, the old workers serve on, and the next swap is prepared and
 * committed. It used to leave the swap prepared: a COMMIT its host no
 * longer waited for left the new workers idle beside the old ones, and
 * every later PREPARE was refused (SHOAL_EBUSY). */
static void commit_without_memory_aborts(void)
{
    static const sw_wargs_t old = {.tag = 0, .init = SW_I_OK}, first = {.tag = 1, .init = SW_I_OK},
                            next = {.tag = 2, .init = SW_I_OK};
    for (int i = 0; i < 3; i++)
        atomic_store(&sw_handled[i], 0);
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t inner, top;
    sw_spec_of(&inner, 1, &old);
    sw_spec_of(&top, 2, NULL);
    top.worker = NULL;
    top.worker_pool = &inner;
    top.manager = &arming;
    shoal_pid_t pool;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &top, &pool), SHOAL_OK);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    uint64_t live0 = sw_live(rt);
    shoal_pool_t *p = shoal__pool_find(rt, pool);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);

    /* The new code: nested pools of tag 1. */
    shoal_pool_swap_t *sw = sw_new_swap(&first, 2);
    sw->chain[0].worker = NULL;
    sw->chain[0].worker_pool = &sw->chain[1];
    sw_spec_of(&sw->chain[1], 1, &first);
    uint64_t tok;
    shoal_pool_swap_result_t r;
    CU_ASSERT_EQUAL(sw_ask(rt, pool, sw, EK_TMO, &tok, &r), SHOAL_OK);
    CU_ASSERT_EQUAL(sw_live(rt), live0 + 2 * 2); /* 2 nested pools, a worker each */
    shoal_answer_t a;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_call_priority(rt, pool, ARM_COPY, NULL, 0, EK_TMO, &a),
                          SHOAL_OK);
    CU_ASSERT_EQUAL(a.status, SHOAL_OK);
    shoal_answer_release(&a);
    unsigned long refused = fa_refused();
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, NULL), SHOAL_ENOMEM);
    CU_ASSERT_EQUAL(fa_refused() - refused, 1);

    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, LOOK_S);
    CU_ASSERT_EQUAL(sw_live(rt), live0); /* the new ones are gone */
    CU_ASSERT_EQUAL(atomic_load_explicit(&p->swap_done, memory_order_relaxed), 0);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 0);
    sw_send_jobs(rt, pool, 20);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&sw_handled[0]) == 20, LOOK_S);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[0]), 20);
    CU_ASSERT_EQUAL(atomic_load(&sw_handled[1]), 0);

    /* The next swap, with memory, is prepared (not refused: EBUSY) and
     * committed. */
    sw = sw_new_swap(&next, 2);
    sw->chain[0].worker = NULL;
    sw->chain[0].worker_pool = &sw->chain[1];
    sw_spec_of(&sw->chain[1], 1, &next);
    CU_ASSERT_EQUAL(sw_ask(rt, pool, sw, EK_TMO, &tok, &r), SHOAL_OK);
    uint32_t n = 0;
    CU_ASSERT_EQUAL(sw_step(rt, pool, SHOAL__POOL_SWAP_COMMIT, tok, &n), SHOAL_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(atomic_load_explicit(&p->swap_done, memory_order_relaxed), tok);
    CU_ASSERT_EQUAL(sw_who(rt, pool), 2);
    SHOAL_TEST_WAIT_UNTIL(sw_live(rt) == live0, LOOK_S); /* the old ones have ended */
    CU_ASSERT_EQUAL(sw_live(rt), live0);
    shoal__pool_unref(rt, p);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: sends on the grow list whose tick was lost are handled", forward_lost_tick},
        {"forward: a drain ends though the grow list's tick was lost", forward_lost_tick_drain},
        {"pull: a lost ask for a member does not silence the next ask", pull_lost_ask},
        {"pull: a member the pool cannot track is never spawned", pull_member_untracked},
        {"a nested pool its pool cannot track is never spawned", nested_pool_untracked},
        {"a swap's nested chain without memory: the old one stands",
         nested_chain_kept_without_memory},
        {"a COMMIT without memory for its chain aborts its swap", commit_without_memory_aborts},
        {"forward: elastic state that cannot be set up fails the start",
         forward_elastic_setup_nomem},
        {"pull: elastic state that cannot be set up fails the start", pull_elastic_setup_nomem},
        {NULL, NULL},
    };
    return shoal_test_run("pool_nomem", cases);
}
