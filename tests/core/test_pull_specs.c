/* test_pull_specs.c - pull pool specs (core/pool/pull.c): the specs
 * refused, and a 1.3 program's smaller spec read to its end only.
 *
 * Handlers never call CUnit: they record into atomics (pull_kit.h); the
 * test thread asserts after synchronising on them. Where a test needs items
 * to stay queued, members block on a gate the test opens.
 */
#include <string.h>

#include "pull_kit.h"

#define WAIT_UNTIL(cond) SHOAL_TEST_WAIT_UNTIL(cond, PU_WAIT_S)

/* ---- specs -------------------------------------------------------------------------- */

static void bad_pull_specs(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s, inner;
    shoal_pid_t p;
    pu_pull_spec(&s, 2, 0, 8);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pu_pull_spec(&s, 2, SHOAL_POOL_MAX_PREFETCH + 1, 8);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pu_pull_spec(&s, 2, 1, SHOAL_POOL_MAX_BUFFER + 1);
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pu_pull_spec(&s, 2, 1, 8);
    s.kind = 7;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pu_pull_spec(&inner, 2, 1, 8);
    inner.kind = SHOAL_POOL_KIND_FORWARD;
    pu_pull_spec(&s, 2, 1, 8);
    s.worker = NULL;
    s.worker_pool = &inner; /* a member takes on its own thread: not a pool */
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    pu_pull_spec(&s, 2, 1, 8);
    s.redeliver = SHOAL_POOL_MAX_REDELIVER + 1;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    static const shoal_behaviour_t mute = {.name = "mute"}; /* no handle_message */
    pu_pull_spec(&s, 2, 1, 8);
    s.source = &mute;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_EINVAL);
    /* A pull pool may be a forward pool's worker. */
    pu_pull_spec(&inner, 2, 1, 8);
    shoal_pool_spec_init(&s);
    s.worker_pool = &inner;
    s.size = 2;
    CU_ASSERT_EQUAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    pu_reset();
    for (uint32_t i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(pu_job(rt, p, i, A_OK, 0), SHOAL_OK);
    WAIT_UNTIL(atomic_load(&pu_done) == 20);
    CU_ASSERT_EQUAL(atomic_load(&pu_done), 20);
    shoal_runtime_destroy(rt);
}

/* A program built against ABI 1.3 passes a spec that ends at manager_args
 * to the unsuffixed entry points: what follows in its memory is never
 * read, and the pool is a forward pool with the defaults. */
static void a_1_3_spec_is_read_to_its_end_only(void)
{
    pu_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    struct {
        shoal_pool_spec_t spec;
        unsigned char junk[64];
    } old;
    memset(&old, 0xA5, sizeof old); /* kind, prefetch...: junk */
    (shoal_pool_spec_init)(&old.spec);
    CU_ASSERT_EQUAL(old.spec.kind, 0xA5A5A5A5u); /* init wrote the 1.3 part only */
    old.spec.worker = &pu_wk;
    old.spec.size = 2;
    shoal_pid_t p;
    CU_ASSERT_EQUAL((shoal_runtime_spawn_pool)(rt, &old.spec, &p), SHOAL_OK);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.kind, SHOAL_POOL_KIND_FORWARD);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.mailbox, 64);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"bad pull specs", bad_pull_specs},
        {"a 1.3 spec is read to its end only", a_1_3_spec_is_read_to_its_end_only},
        {NULL, NULL},
    };
    return shoal_test_run("pull_specs", cases);
}
