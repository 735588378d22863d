/* test_checkout_groups.c - groups of checkout pools (core/pool/checkout_api.c:
 * group_pick), used by actors, with exact counts: a take on a group picks
 * a random pool of it, then the one with the most free members -- not any
 * with one --, then none (SHOAL_ENOMEMBERS, counted once); transactions on
 * a group (the same pick; with none free, they wait at the random pool),
 * never sent to a pool of it that drains; every pool of a large group
 * is considered; and a pool started held (as a reload starts its new
 * pools: pool.h, opts held) is in its group only from the host's
 * SHOAL__POOL_GO, and never if it drains first: its place, taken closed
 * at its start, opens then. A pool that refused a group's transaction or
 * take (closed by its drain after it was picked) is not picked again by
 * the same call.
 *
 * Handlers never call CUnit: they record into atomics (checkout_basic_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include <stdio.h>
#include <string.h>

#include "actor/actor.h"
#include "checkout_basic_kit.h"
#include "pool/checkout.h"
#include "pool/pool.h"
#include "runtime/runtime.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, CB_WAIT_S)

static _Atomic shoal_pid_t last_held;

enum { C_GO = 10 };

/* n checkout pools of group "dbs", pool i of size[i] members (init =
 * max; size NULL: 1 each), into pools[]. */
static void start_group(shoal_runtime_t *rt, shoal_pid_t *pools, int n, const uint32_t *size)
{
    for (int i = 0; i < n; i++) {
        uint32_t k = size != NULL ? size[i] : 1;
        shoal_pool_spec_t s = cb_spec_of(k, k);
        s.checkout.group = "dbs";
        pools[i] = cb_start(rt, &s);
    }
}

/* ---- groups ------------------------------------------------------------------------ */

static atomic_int group_rc = 99;

static int g_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_GO) {
        shoal_ref_t ref;
        int rc = shoal_take_group(ctx, "dbs", 1000, &ref);
        if (rc != SHOAL_OK)
            atomic_store(&group_rc, rc);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY) {
        shoal_checkout_member_t g;
        if (msg->status == SHOAL_OK) {
            memcpy(&g, msg->data, sizeof g);
            atomic_store(&last_held, g.pool);
            shoal_return(ctx, g.member, SHOAL_RETURN_OK);
        }
        atomic_store(&group_rc, msg->status);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t group_taker = {.name = "gt", .handle_message = g_message};

static int group_take(shoal_runtime_t *rt, shoal_pid_t taker, shoal_pid_t *from)
{
    atomic_store(&group_rc, 99);
    atomic_store(&last_held, SHOAL_PID_NONE);
    shoal_runtime_send(rt, taker, C_GO, NULL, 0);
    WAIT_UNTIL(atomic_load(&group_rc) != 99);
    *from = atomic_load(&last_held);
    return atomic_load(&group_rc);
}

static void test_groups(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[3];
    start_group(rt, pools, 3, NULL);
    shoal_pid_t taker, from, held[3];
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_taker, NULL, NULL, &taker), SHOAL_OK);
    /* Random first: over many takes every pool is picked. */
    int seen[3] = {0, 0, 0};
    for (int k = 0; k < 60; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        WAIT_UNTIL(cb_stats(rt, from).free == 1);
        for (int i = 0; i < 3; i++)
            seen[i] += from == pools[i];
    }
    CU_ASSERT_EQUAL(seen[0] + seen[1] + seen[2], 60);
    CU_ASSERT_TRUE(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
    /* The random one has none: the one with the most free members. (Each
     * count is seen once the pool has published it: after a stats call.) */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pools[0], 0, &held[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pools[1], 0, &held[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).free + cb_stats(rt, pools[1]).free, 0);
    for (int k = 0; k < 10; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        CU_ASSERT_EQUAL(from, pools[2]);
        WAIT_UNTIL(cb_stats(rt, pools[2]).free == 1);
    }
    /* None has any: no member. */
    CU_ASSERT_EQUAL(shoal_runtime_take(rt, pools[2], 0, &held[2]), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[2]).free, 0);
    CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_ENOMEMBERS);
    uint64_t refused = 0;
    for (int i = 0; i < 3; i++)
        refused += cb_stats(rt, pools[i]).error_no_members;
    CU_ASSERT_EQUAL(refused, 1);
    shoal_runtime_destroy(rt);
}

/* The most free, not any with one: of a group whose two pools have none
 * free, one has 1 and one 3, a take whose random pick is empty goes to the
 * one with 3. So the pool with 1 is picked only when the random pick is it
 * (1 in 4: about 50 of 200), where a fallback to any pool with a member
 * would give it about 100 (a random one of the two) or 150 (the first). */
static void test_groups_most_free(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    const uint32_t size[4] = {1, 1, 1, 3};
    shoal_pid_t pools[4], held[2], taker, from;
    start_group(rt, pools, 4, size);
    for (int i = 0; i < 2; i++) /* the first two: none free */
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pools[i], 0, &held[i]), SHOAL_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(cb_stats(rt, pools[i]).free, i < 2 ? 0 : size[i]);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_taker, NULL, NULL, &taker), SHOAL_OK);
    int seen[4] = {0, 0, 0, 0};
    for (int k = 0; k < 200; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        for (int i = 0; i < 4; i++)
            seen[i] += from == pools[i];
        for (int i = 2; i < 4; i++) /* given back, and published, before the next */
            WAIT_UNTIL(cb_stats(rt, pools[i]).free == size[i]);
    }
    CU_ASSERT_EQUAL(seen[0] + seen[1], 0);
    CU_ASSERT_EQUAL(seen[2] + seen[3], 200);
    CU_ASSERT_TRUE(seen[2] >= 20 && seen[2] < 80);
    printf("\n    the pool with 1 free picked %d times of 200 (1 in 4: 50) ", seen[2]);
    shoal_runtime_destroy(rt);
}

/* ---- transactions on a group ------------------------------------------------------ */

static atomic_int gcall_rc = 99;
static _Atomic shoal_pid_t gcall_member;

static int gc_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_GO) {
        const char *group = msg->size != 0 ? "nosuch" : "dbs";
        shoal_ref_t ref;
        int rc = shoal_checkout_call_group(ctx, group, T_WHO, NULL, 0, 10000, &ref);
        if (rc != SHOAL_OK)
            atomic_store(&gcall_rc, rc);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY) {
        cb_who_t w = {SHOAL_PID_NONE, 0};
        if (msg->status == SHOAL_OK && msg->size == sizeof w)
            memcpy(&w, msg->data, sizeof w);
        atomic_store(&gcall_member, w.pid);
        atomic_store(&gcall_rc, msg->status);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t group_caller = {.name = "gc", .handle_message = gc_message};

/* Asks the caller for one group transaction (on "nosuch" when bad); does
 * not wait for its answer. */
static void group_call_start(shoal_runtime_t *rt, shoal_pid_t caller, bool bad)
{
    atomic_store(&gcall_rc, 99);
    atomic_store(&gcall_member, SHOAL_PID_NONE);
    shoal_runtime_send(rt, caller, C_GO, "x", bad ? 1 : 0);
}

/* shoal_checkout_call_group: of two pools of one member each, with the
 * first's member held, 20 transactions all run on the second's member
 * (the one with a free member, whatever the random pick); with both held,
 * one waits (not SHOAL_ENOMEMBERS, as a group take would) and runs once a
 * member is back; no such group is SHOAL_ENOPROC at once. */
static void test_group_transactions(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[2], held[2], caller;
    start_group(rt, pools, 2, NULL);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_caller, NULL, NULL, &caller), SHOAL_OK);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pools[0], 0, &held[0]), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).free, 0); /* published */
    shoal_pid_t second = SHOAL_PID_NONE;
    for (int k = 0; k < 20; k++) {
        group_call_start(rt, caller, false);
        WAIT_UNTIL(atomic_load(&gcall_rc) != 99);
        CU_ASSERT_EQUAL(atomic_load(&gcall_rc), SHOAL_OK);
        if (second == SHOAL_PID_NONE)
            second = atomic_load(&gcall_member);
        CU_ASSERT_EQUAL(atomic_load(&gcall_member), second);
        WAIT_UNTIL(cb_stats(rt, pools[1]).free == 1); /* back, and published */
    }
    CU_ASSERT_NOT_EQUAL(second, SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[1]).takes, 20);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).takes, 1); /* the test's own take */
    /* Both held: it waits at the random pool, and runs when it has one. */
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pools[1], 0, &held[1]), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[1]).free, 0);
    group_call_start(rt, caller, false);
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(atomic_load(&gcall_rc), 99); /* waiting */
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pools[0], held[0], SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pools[1], held[1], SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&gcall_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&gcall_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(
        cb_stats(rt, pools[0]).error_no_members + cb_stats(rt, pools[1]).error_no_members, 0);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).takes + cb_stats(rt, pools[1]).takes, 23);
    group_call_start(rt, caller, true);
    WAIT_UNTIL(atomic_load(&gcall_rc) != 99);
    CU_ASSERT_EQUAL(atomic_load(&gcall_rc), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

static atomic_int burst_ok, burst_noproc;

static int burst_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == C_GO) {
        for (int i = 0; i < 10; i++) {
            shoal_ref_t ref;
            int rc = shoal_checkout_call_group(ctx, "dbs", T_WHO, NULL, 0, 10000, &ref);
            if (rc == SHOAL_ENOPROC)
                atomic_fetch_add(&burst_noproc, 1);
        }
    } else if (msg->kind == SHOAL_MSG_REPLY) {
        atomic_fetch_add(msg->status == SHOAL_OK ? &burst_ok : &burst_noproc, 1);
    }
    return SHOAL_OK;
}

static const shoal_behaviour_t burst = {.name = "burst", .handle_message = burst_message};

/* A group of two pools, each member held, one of them draining (as a
 * reload that replaces or removes it leaves it): 10 group transactions
 * all wait at the live pool and run once its member is back -- none is
 * sent to the draining pool, which refuses it (SHOAL_ENOPROC, about half
 * of them when the random pick could be it). */
static void test_group_skips_draining(void)
{
    cb_reset();
    atomic_store(&burst_ok, 0);
    atomic_store(&burst_noproc, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[2], held[2], b;
    start_group(rt, pools, 2, NULL);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pools[i], 0, &held[i]), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pools[1], SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pools[1]).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).free, 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &burst, NULL, NULL, &b), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, C_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pools[0]).queued + (uint32_t)atomic_load(&burst_noproc) == 10);
    CU_ASSERT_EQUAL(atomic_load(&burst_noproc), 0);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).queued, 10);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pools[0], held[0], SHOAL_RETURN_OK), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&burst_ok) == 10);
    CU_ASSERT_EQUAL(atomic_load(&burst_ok), 10);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pools[1], held[1], SHOAL_RETURN_OK), SHOAL_OK);
    shoal_runtime_destroy(rt);
}

/* A pool that refuses a group transaction -- closed under its lock and its
 * mailbox closed, its drain not yet seen (pub_state still running, as a
 * caller may read it) -- is not picked again by the same call: with it
 * holding the most free members, 10 transactions all run on the other
 * pool, none is told SHOAL_ENOPROC. (Each of 4 tries picked it again, and
 * a reload replacing a group's pool told takers there was none.) */
static void test_group_refused_not_picked_again(void)
{
    cb_reset();
    atomic_store(&burst_ok, 0);
    atomic_store(&burst_noproc, 0);
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[2], b;
    start_group(rt, pools, 2, (const uint32_t[]){4, 1});
    shoal_pool_t *p = shoal__pool_find(rt, pools[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    shoal__co_lock(p->co);
    p->co->open = false;
    shoal__rsv_close(&shoal__actor_at(rt, shoal__pid_slot(pools[0]))->user_rsv);
    shoal__co_unlock(p);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).free, 4);
    CU_ASSERT_NOT_EQUAL(cb_stats(rt, pools[0]).state, SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &burst, NULL, NULL, &b), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, b, C_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&burst_ok) + atomic_load(&burst_noproc) == 10);
    CU_ASSERT_EQUAL(atomic_load(&burst_noproc), 0);
    CU_ASSERT_EQUAL(atomic_load(&burst_ok), 10);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[1]).takes, 10);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).takes, 0);
    shoal__pool_unref(rt, p);
    shoal_runtime_destroy(rt);
}

/* The same for a group's takes, in the two places a take can find the
 * pool closed: its mailbox still open, so the take is served on the
 * taker's thread and finds the pool closed under its lock (it told the
 * taker SHOAL_ENOPROC in a reply, after shoal_take_group had returned);
 * and its mailbox closed too (the take went to the pool's actor, which
 * gave a member: a drain's state not yet set). Either way the take says
 * SHOAL_ENOPROC at once and the group's next try goes to the other pool:
 * 10 takes, all granted by it, none by the closed one. */
static void take_refused_case(bool mailbox_closed)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[2], taker, from;
    start_group(rt, pools, 2, (const uint32_t[]){4, 1});
    shoal_pool_t *p = shoal__pool_find(rt, pools[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    shoal__co_lock(p->co);
    p->co->open = false;
    if (mailbox_closed)
        shoal__rsv_close(&shoal__actor_at(rt, shoal__pid_slot(pools[0]))->user_rsv);
    shoal__co_unlock(p);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).free, 4);
    CU_ASSERT_NOT_EQUAL(cb_stats(rt, pools[0]).state, SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_taker, NULL, NULL, &taker), SHOAL_OK);
    for (int k = 0; k < 10; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        CU_ASSERT_EQUAL(from, pools[1]);
        WAIT_UNTIL(cb_stats(rt, pools[1]).free == 1); /* back, and published */
    }
    CU_ASSERT_EQUAL(cb_stats(rt, pools[1]).takes, 10);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).takes, 0);
    CU_ASSERT_EQUAL(cb_stats(rt, pools[0]).free, 4);
    shoal__pool_unref(rt, p);
    shoal_runtime_destroy(rt);
}

static void test_group_take_refused_here(void) { take_refused_case(false); }
static void test_group_take_refused_closed(void) { take_refused_case(true); }

/* A group of 70 pools of one member each, all but the last held: a take
 * on the group gets the last one's, whatever the random pick -- every
 * pool of a group is considered, not only the first 64 of it (the pools
 * past the 64th never got a take or a transaction from the group). */
#define BIG 70
static void test_big_group(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pools[BIG], held, taker, from;
    start_group(rt, pools, BIG, NULL);
    for (int i = 0; i < BIG; i++) {
        if (i < BIG - 1)
            CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pools[i], 0, &held), SHOAL_OK);
        CU_ASSERT_EQUAL(cb_stats(rt, pools[i]).free, i < BIG - 1 ? 0 : 1); /* published */
    }
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_taker, NULL, NULL, &taker), SHOAL_OK);
    for (int k = 0; k < 5; k++) {
        CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
        CU_ASSERT_EQUAL(from, pools[BIG - 1]);
        WAIT_UNTIL(cb_stats(rt, pools[BIG - 1]).free == 1);
    }
    CU_ASSERT_EQUAL(cb_stats(rt, pools[BIG - 1]).takes, 5);
    shoal_runtime_destroy(rt);
}

/* ---- a pool started held ---------------------------------------------------------- */

/* A checkout pool of group "dbs", one member, started held. */
static shoal_pid_t start_held(shoal_runtime_t *rt)
{
    shoal_pool_spec_t s = cb_spec_of(1, 1);
    s.checkout.group = "dbs";
    shoal_pid_t pool = SHOAL_PID_NONE;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__pool_start_ex(rt, &s, NULL, &(shoal_pool_opts_t){.held = true},
                                               CB_TMO, &pool, why, sizeof why),
                          SHOAL_OK);
    return pool;
}

static size_t members_of_dbs(shoal_runtime_t *rt, shoal_pid_t *out)
{
    return shoal__group_members(rt, "dbs", out, 4);
}

/* Held: its member has started, but the group has no pool, so a take on it
 * finds none (SHOAL_ENOPROC: no such group -- the pool never heard of it,
 * nothing counted there). At the GO it joins: one pool, and a take on the
 * group gets its member. */
static void test_held_joins_at_go(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pool = start_held(rt), taker, from, in[4];
    CU_ASSERT_EQUAL(atomic_load(&cb_started), 1);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).free, 1);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 0);
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &group_taker, NULL, NULL, &taker), SHOAL_OK);
    CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_ENOPROC);
    shoal_pool_stats_t st = cb_stats(rt, pool);
    CU_ASSERT_EQUAL(st.takes, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(members_of_dbs(rt, in) != 0);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 1);
    CU_ASSERT_EQUAL(in[0], pool);
    CU_ASSERT_EQUAL(group_take(rt, taker, &from), SHOAL_OK);
    CU_ASSERT_EQUAL(from, pool);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).takes, 1);
    shoal_runtime_destroy(rt);
}

/* Held, its member taken, then drained (as a reload that fails stops its
 * new pools): a GO after the drain joins nothing, before or after the pool
 * has ended. */
static void test_held_drained_never_joins(void)
{
    cb_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t pool = start_held(rt), held, in[4];
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_take(rt, pool, 0, &held), SHOAL_OK); /* drains on */
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(cb_stats(rt, pool).state == SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).state, SHOAL_POOL_DRAINING);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, pool, SHOAL__POOL_GO, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(cb_stats(rt, pool).state, SHOAL_POOL_DRAINING); /* after the GO */
    cb_sleep_ms(200);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 0);
    CU_ASSERT_EQUAL(shoal_runtime_return(rt, pool, held, SHOAL_RETURN_OK), SHOAL_OK);
    CU_ASSERT_TRUE(cb_ended(rt, pool));
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 0);
    shoal_runtime_destroy(rt);
}

/* The registry under it (runtime/names.c): a place taken closed -- as a
 * held pool takes its own at its start, where a failure to allocate fails
 * the start, and so the reload -- is not listed; opened (at the GO, which
 * allocates nothing), it is, once, as a place taken open is; a second join
 * closed does not close it; opening a pid that took no place finds none;
 * a place left is gone, open or not. */
static void test_closed_place(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(1);
    shoal_pid_t in[4], a = 0x101, b = 0x202, c = 0x303;
    CU_ASSERT_EQUAL(shoal__group_join(rt, "dbs", a, false), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal__group_join(rt, "dbs", b, true), SHOAL_OK);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 1);
    CU_ASSERT_EQUAL(in[0], b);
    CU_ASSERT_TRUE(shoal__group_open(rt, "dbs", a));
    CU_ASSERT_EQUAL(shoal__group_join(rt, "dbs", a, false), SHOAL_OK); /* stays open */
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 2);
    CU_ASSERT_TRUE((in[0] == a && in[1] == b) || (in[0] == b && in[1] == a));
    CU_ASSERT_FALSE(shoal__group_open(rt, "dbs", c));
    CU_ASSERT_FALSE(shoal__group_open(rt, "other", a));
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 2);
    CU_ASSERT_EQUAL(shoal__group_join(rt, "dbs", c, false), SHOAL_OK);
    shoal__group_leave(rt, "dbs", c); /* closed, then gone */
    CU_ASSERT_FALSE(shoal__group_open(rt, "dbs", c));
    shoal__group_leave(rt, "dbs", a);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 1);
    CU_ASSERT_EQUAL(in[0], b);
    shoal__group_leave(rt, "dbs", b);
    CU_ASSERT_EQUAL(members_of_dbs(rt, in), 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"groups: random, most free, none", test_groups},
        {"groups: the most free, not any with one", test_groups_most_free},
        {"groups: transactions", test_group_transactions},
        {"groups: a draining pool takes no transaction", test_group_skips_draining},
        {"groups: a pool that refused is not picked again", test_group_refused_not_picked_again},
        {"groups: a take refused on the taker's thread tries the next pool",
         test_group_take_refused_here},
        {"groups: a take refused by a closed mailbox tries the next pool",
         test_group_take_refused_closed},
        {"groups: every pool of a large group is considered", test_big_group},
        {"groups: a pool started held joins its group only at GO", test_held_joins_at_go},
        {"groups: a held pool drained before GO never joins", test_held_drained_never_joins},
        {"groups: a place taken closed is listed once opened", test_closed_place},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_groups", cases);
}
