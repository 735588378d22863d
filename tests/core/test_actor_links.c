/* test_actor_links.c - links between parent and children (core/actor/
 * actor.c, turn.c): the parent hears an EXIT for each way a child ends,
 * each child's terminate runs exactly once with that reason; children stop
 * when their parent ends, and a stop cascades to grandchildren.
 *
 * Handlers never call CUnit: they record into atomics (some in actor_kit.h);
 * the test thread asserts after synchronising on them.
 */
#include "actor_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, AK_WAIT_S)

/* The parent hears of each way a child can end, with the child's PID and
 * reason; each child's terminate runs once with that same reason. */
static void parent_gets_exit_for_each_way_of_ending(void)
{
    shoal_runtime_t *rt = ak_runtime();
    static ak_kids_t k;
    shoal_pid_t parent = ak_spawn_family(rt, &k, 5);
    shoal_pid_t kids[5];
    for (int i = 0; i < 5; i++)
        kids[i] = atomic_load(&ak_kid_pid[i]);

    const int expect[5] = {0, 42, SHOAL_EPANIC, SHOAL_ESHUTDOWN, SHOAL_ESHUTDOWN};
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kids[0], T_EXIT0, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kids[1], T_RET, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, kids[2], T_PANIC, NULL, 0), SHOAL_OK);
    int idx = 3;
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, T_STOPCHILD, &idx, sizeof idx), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, kids[4]), SHOAL_OK);

    WAIT_UNTIL(atomic_load(&ak_exits) == 5);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&ak_exits), 5);
    CU_ASSERT_EQUAL(atomic_load(&ak_parent_stop_rc), SHOAL_OK);
    CU_ASSERT_EQUAL(atomic_load(&ak_exit_kind_bad), 0);
    for (int i = 0; i < 5; i++) {
        int found = -1;
        for (int j = 0; j < 5; j++)
            if (atomic_load(&ak_exit_from[j]) == kids[i])
                found = j;
        CU_ASSERT_FATAL(found >= 0);
        CU_ASSERT_EQUAL(atomic_load(&ak_exit_status[found]), expect[i]);
        CU_ASSERT_EQUAL(atomic_load(&ak_kid_terms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&ak_kid_term_reason[i]), expect[i]);
        CU_ASSERT(ak_gone(rt, kids[i]));
    }
    /* The parent is unaffected: links tell, they do not kill upwards. */
    CU_ASSERT_EQUAL(atomic_load(&ak_parent_terms), 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, T_PING, NULL, 0), SHOAL_OK);
    shoal_runtime_stats_t s = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(s.actors_spawned, 6);
    CU_ASSERT_EQUAL(s.actors_ended, 5);
    CU_ASSERT_EQUAL(s.actors_live, 1);
    shoal_runtime_destroy(rt);
    CU_ASSERT_EQUAL(atomic_load(&ak_parent_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&ak_parent_term_reason), SHOAL_ESHUTDOWN);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(atomic_load(&ak_kid_terms[i]), 1); /* not again at destroy */
}

/* When the parent ends, its children are stopped. */
static void children_stop_when_parent_ends(void)
{
    shoal_runtime_t *rt = ak_runtime();
    static ak_kids_t k;
    shoal_pid_t parent = ak_spawn_family(rt, &k, 4);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, parent, T_DIE, NULL, 0), SHOAL_OK);
    WAIT_UNTIL(shoal_test_stats(rt).actors_ended == 5 && shoal_test_stats(rt).actors_live == 0);
    CU_ASSERT_EQUAL(atomic_load(&ak_parent_terms), 1);
    CU_ASSERT_EQUAL(atomic_load(&ak_parent_term_reason), 0);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(atomic_load(&ak_kid_terms[i]), 1);
        CU_ASSERT_EQUAL(atomic_load(&ak_kid_term_reason[i]), SHOAL_ESHUTDOWN);
        shoal_pid_t c = atomic_load(&ak_kid_pid[i]);
        CU_ASSERT(ak_gone(rt, c));
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, T_PING, NULL, 0), SHOAL_ENOPROC);
    }
    CU_ASSERT(ak_gone(rt, parent));
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

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"parent gets EXIT for each way of ending", parent_gets_exit_for_each_way_of_ending},
        {"children stop when the parent ends", children_stop_when_parent_ends},
        {"stop cascades to grandchildren", stop_cascades_to_grandchildren},
        {NULL, NULL},
    };
    return shoal_test_run("actor_links", cases);
}
