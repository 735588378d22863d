/* test_resize_work.c - part 5 of the Resize contract (the elastic-pool
 * seed's, after ants and pond) for forward and pull pools, and the work a
 * shrink leaves (core/pool/workers.c: shoal__pool_resize, retire):
 *   5. after drain returns, nothing new runs, and every send is refused;
 * and a shrink never abandons queued or held work.
 *
 * Handlers and the test's own threads never call CUnit: they record into
 * atomics and arrays (support/resize_kit.h); the test thread asserts after
 * synchronising on them.
 */
#include <pthread.h>

#include "resize_kit.h"

/* ---- 5: nothing runs after drain returns ----------------------------------------------- */

/* After drain returns the sender goes on for AFTER_SENDS sends, counted by
 * the sender itself (a send it began after it saw `rz_drained`), and the test
 * waits for that count. It used to sleep 2 x 50 ms and assert that the
 * refusals had grown in the second 50 ms, which held only if the sender
 * thread ran in them: on a busy CPU it may not. Counted, every send made
 * after the drain is known, and each is asserted refused (SHOAL_ENOPROC). */
#define AFTER_SENDS 1000

static void *sending_main(void *arg)
{
    rz_load_t *l = arg;
    for (uint32_t id = 0; !atomic_load(l->stop); id = (id + 1) % RZ_NJOBS) {
        bool after = atomic_load(&rz_drained); /* read before the send: drain had returned */
        int rc = rz_job(l->rt, l->pool, RZ_NJOBS, RZ_A_SPIN);
        if (after) {
            atomic_fetch_add(&rz_refused_after, rc == SHOAL_ENOPROC);
            atomic_fetch_add(&rz_sent_after, 1);
        }
        if (id % 16 == 0)
            shoal_test_nap();
    }
    return NULL;
}

static void drain_case(uint32_t kind)
{
    rz_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = rz_spawn(rt, kind, 3, 32);
    atomic_int stop = 0;
    rz_load_t l = {rt, p, 0, 0, &stop};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, sending_main, &l), 0);
    RZ_WAIT_UNTIL(atomic_load(&rz_done) >= 500);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, p, RZ_TMO), SHOAL_OK);
    atomic_store(&rz_drained, 1);
    int done_at_drain = atomic_load(&rz_done);
    RZ_WAIT_UNTIL(atomic_load(&rz_sent_after) >= AFTER_SENDS); /* the sender goes on meanwhile */
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    CU_ASSERT(atomic_load(&rz_sent_after) >= AFTER_SENDS);
    CU_ASSERT_EQUAL(atomic_load(&rz_refused_after), atomic_load(&rz_sent_after)); /* every one */
    CU_ASSERT_EQUAL(atomic_load(&rz_after_drain), 0);
    CU_ASSERT_EQUAL(atomic_load(&rz_done), done_at_drain);
    CU_ASSERT_EQUAL(rz_job(rt, p, 0, RZ_A_OK), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 3, RZ_TMO), SHOAL_ENOPROC);
    shoal_runtime_destroy(rt);
}

static void forward_nothing_after_drain(void) { drain_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_nothing_after_drain(void) { drain_case(SHOAL_POOL_KIND_PULL); }

/* ---- a shrink keeps the work ------------------------------------------------------- */

/* 4 workers block on one job each; 40 more wait (in mailboxes, or in the
 * buffer). Shrunk to 1: 3 retire, and every job is still handled once. */
static void shrink_keeps_work_case(uint32_t kind)
{
    rz_reset();
    shoal_runtime_t *rt = shoal_test_runtime(6);
    shoal_pid_t p = rz_spawn(rt, kind, 4, 64);
    for (uint32_t id = 0; id < 4; id++)
        CU_ASSERT_EQUAL(rz_job(rt, p, id, RZ_A_BLOCK), SHOAL_OK);
    RZ_WAIT_UNTIL(atomic_load(&rz_entered) == 4);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&rz_entered), 4);
    for (uint32_t id = 4; id < 44; id++)
        CU_ASSERT_EQUAL(rz_job(rt, p, id, RZ_A_OK), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 1, RZ_TMO), 1);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.retiring, 3);
    atomic_store(&rz_gate, 1);
    RZ_WAIT_UNTIL(atomic_load(&rz_done) == 44 && rz_settled_at(rt, p, 1));
    CU_ASSERT_EQUAL(atomic_load(&rz_done), 44);
    for (uint32_t id = 0; id < 44; id++)
        CU_ASSERT_EQUAL(rz_runs[id], 1);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.messages_forwarded, 44);
    CU_ASSERT_EQUAL(st.messages_handled, 44);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.queue_depth, 0);
    shoal_runtime_destroy(rt);
}

static void forward_shrink_keeps_work(void) { shrink_keeps_work_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_shrink_keeps_work(void) { shrink_keeps_work_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: nothing runs after drain returns", forward_nothing_after_drain},
        {"pull: nothing runs after drain returns", pull_nothing_after_drain},
        {"forward: a shrink keeps queued work", forward_shrink_keeps_work},
        {"pull: a shrink keeps held and buffered work", pull_shrink_keeps_work},
        {NULL, NULL}};
    return shoal_test_run("resize: drain and shrink keep the work", cases);
}
