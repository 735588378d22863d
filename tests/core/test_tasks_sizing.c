/* test_tasks_sizing.c - a task pool's size (core/tasks/, shoal/tasks.h):
 * tune up and down (clamped, busy workers finishing first, from a task
 * without waiting) with cap, running and free following; idle expiry down
 * to min_size and lazy grow back up to max_size.
 *
 * Tasks never call CUnit: they record into atomics (tasks_basic_kit.h); the
 * test thread asserts after synchronising on them. Where tasks must stay
 * queued, running ones block on a gate the test opens.
 */
#include "tasks_basic_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, TB_WAIT_S)

/* ---- tune and counters ---------------------------------------------------------- */

/* tune grows at once and shrinks letting busy workers finish, clamped to
 * [min, max]; cap, running and free follow. From a task it does not wait. */
static void tune_up_and_down(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.max_size = 6;
    shoal_tasks_t *t = tb_make(rt, 2, 16, &o);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 4), 4);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 4);
    tb_block(t, 0, 4);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 4);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 2), 2);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 2);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 2); /* the other two finish, then end */
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(shoal_tasks_completed(t) == 4 && shoal_tasks_running(t) == 0);
    CU_ASSERT_EQUAL(atomic_load(&tb_done), 4);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 0);
    CU_ASSERT_EQUAL(shoal_tasks_free(t), 2);
    WAIT_UNTIL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).retiring == 0);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, shoal_tasks_pid(t)).pool_size, 2);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 100), 6);
    CU_ASSERT_EQUAL(shoal_tasks_tune(t, 0), 1);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 1);
    tb_jobs[10].act = A_TUNE; /* tune(3) from a task */
    CU_ASSERT_EQUAL(tb_submit(t, 10, A_TUNE, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_ran[10]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&tb_inner_rc[0]), 3);
    WAIT_UNTIL(shoal_tasks_cap(t) == 3);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 3);
    CU_ASSERT_EQUAL(shoal_tasks_tune(NULL, 3), SHOAL_EINVAL);
    tb_finish(rt, t);
}

/* idle_timeout: idle workers end down to min_size (expired), and tasks
 * that find no idle worker get new ones up to max_size (lazy_grown). */
static void idle_expiry_and_lazy_grow(void)
{
    tb_reset();
    shoal_runtime_t *rt = tb_runtime();
    shoal_tasks_opts_t o;
    shoal_tasks_opts_init(&o);
    o.min_size = 1;
    o.max_size = 3;
    o.idle_timeout_ms = 40;
    shoal_tasks_t *t = tb_make(rt, 3, 8, &o);
    shoal_pid_t pid = shoal_tasks_pid(t);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pid).expired == 2);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, pid);
    CU_ASSERT_EQUAL(st.expired, 2);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(shoal_tasks_cap(t), 1);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(tb_submit(t, i, A_BLOCK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&tb_entered) == 3);
    CU_ASSERT_EQUAL(atomic_load(&tb_entered), 3);
    st = shoal_test_pool_stats(rt, pid);
    CU_ASSERT_EQUAL(st.lazy_grown, 2);
    CU_ASSERT_EQUAL(st.pool_size, 3);
    CU_ASSERT_EQUAL(shoal_tasks_running(t), 3);
    atomic_store(&tb_gate, 1);
    WAIT_UNTIL(shoal_test_pool_stats(rt, pid).expired == 4);
    st = shoal_test_pool_stats(rt, pid);
    CU_ASSERT_EQUAL(st.expired, 4);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(shoal_tasks_completed(t), 3);
    tb_finish(rt, t);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"tune up and down", tune_up_and_down},
        {"idle expiry and lazy grow", idle_expiry_and_lazy_grow},
        {NULL, NULL},
    };
    return shoal_test_run("tasks_sizing", cases);
}
