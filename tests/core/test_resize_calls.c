/* test_resize_calls.c - parts 3 and 4 of the Resize contract (the
 * elastic-pool seed's, after ants and pond) for forward and pull pools, on
 * the pool's resize (core/pool/workers.c: shoal__pool_resize, fill,
 * retire), and what the pool reports of its size:
 *   3. resize is idempotent: a second set_size(5) changes nothing (no
 *      worker started or ended);
 *   4. resizes are linearizable: threads resizing at once each get the size
 *      their own call produced, and the pool ends at the size of the last
 *      call in the pool's own order, read from the pool (stats.resizes); a
 *      later call wins;
 * and live size and target are reported apart (a crash: one worker fewer
 * live, the target kept, until the replacement).
 *
 * The test's own threads never call CUnit: they record into arrays; the
 * test thread asserts after synchronising on them. The worker and its
 * pool: support/resize_kit.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "resize_kit.h"

/* ---- 3: idempotent --------------------------------------------------------------- */

static void idempotent_case(uint32_t kind)
{
    rz_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pid_t p = rz_spawn(rt, kind, 3, 16);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, RZ_TMO), 5);
    RZ_WAIT_UNTIL(rz_settled_at(rt, p, 5));
    shoal_runtime_stats_t a = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, RZ_TMO), 5);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 5, RZ_TMO), 5);
    shoal_runtime_stats_t b = shoal_test_stats(rt);
    CU_ASSERT(rz_settled_at(rt, p, 5));
    CU_ASSERT_EQUAL(b.actors_spawned, a.actors_spawned);
    CU_ASSERT_EQUAL(b.actors_ended, a.actors_ended);
    /* The same going down: a second set_size(2) retires no one more. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, RZ_TMO), 2);
    RZ_WAIT_UNTIL(rz_settled_at(rt, p, 2) &&
                  shoal_test_stats(rt).actors_ended == a.actors_ended + 3);
    a = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 2, RZ_TMO), 2);
    b = shoal_test_stats(rt);
    CU_ASSERT_EQUAL(b.actors_spawned, a.actors_spawned);
    CU_ASSERT_EQUAL(b.actors_ended, a.actors_ended);
    CU_ASSERT(rz_settled_at(rt, p, 2));
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).resizes, 2); /* 3 -> 5, 5 -> 2 */
    shoal_runtime_destroy(rt);
}

static void forward_idempotent(void) { idempotent_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_idempotent(void) { idempotent_case(SHOAL_POOL_KIND_PULL); }

/* ---- 4: linearizable --------------------------------------------------------------- */

/* The pool's order is read from the pool: a stats call is the pool actor's
 * as a resize is, answered in the same order, and stats.resizes counts the
 * resizes that changed the target. Here every call changes it -- resizer t
 * asks 2 + t and 2 + t + RESIZERS by turns, and the pool starts at 1 -- so
 * each call is one step of that count, and a read (resizes R, target T)
 * says "the R-th resize in the pool's order left T". Each resizer reads
 * after each of its calls; then
 *   - every call answered its own size;
 *   - the count grew by RESIZERS x ROUNDS: each call applied once;
 *   - no two reads of one step saw different targets: one order;
 *   - each of a resizer's reads is at a later step than its last: its own
 *     call was applied before it answered;
 *   - exactly one read saw the last step with its own call's size (the
 *     read after the pool's last call: nothing came after it), and the
 *     pool's target is that size. */
#define RESIZERS 8
#define ROUNDS 40
#define NCALLS (RESIZERS * ROUNDS)
#define LIN_MAX (1 + 2 * RESIZERS)

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    unsigned t;
    int rc[ROUNDS];
    uint64_t step[ROUNDS]; /* stats.resizes read after call i (UINT64_MAX: no read) */
    uint32_t seen[ROUNDS]; /* the target read with it */
} resizer_t;

static uint32_t lin_size(unsigned t, unsigned i) { return 2 + t + (i % 2) * RESIZERS; }

static void *resizing_main(void *arg)
{
    resizer_t *r = arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        r->rc[i] = shoal_pool_set_size(r->rt, r->pool, lin_size(r->t, i), RZ_TMO);
        shoal_pool_stats_t st;
        bool read = shoal_pool_stats(r->rt, r->pool, &st, RZ_TMO) == SHOAL_OK;
        r->step[i] = read ? st.resizes : UINT64_MAX;
        r->seen[i] = read ? st.target_size : 0;
    }
    return NULL;
}

static void linearizable_case(uint32_t kind)
{
    rz_reset();
    shoal_runtime_t *rt = shoal_test_runtime(4);
    shoal_pid_t p = rz_spawn_max(rt, kind, 1, 16, LIN_MAX);
    uint64_t base = shoal_test_pool_stats(rt, p).resizes;
    static resizer_t r[RESIZERS];
    pthread_t t[RESIZERS];
    for (unsigned i = 0; i < RESIZERS; i++) {
        r[i] = (resizer_t){.rt = rt, .pool = p, .t = i};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, resizing_main, &r[i]), 0);
    }
    for (unsigned i = 0; i < RESIZERS; i++)
        pthread_join(t[i], NULL);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.resizes, base + NCALLS);
    static uint32_t left[NCALLS + 1]; /* the target step k left, as read (0: not read) */
    memset(left, 0, sizeof left);
    left[0] = 1;
    unsigned wrong = 0, stray = 0, torn = 0, unapplied = 0, last = 0;
    uint32_t last_size = 0;
    for (unsigned i = 0; i < RESIZERS; i++) {
        uint64_t prev = base;
        for (unsigned k = 0; k < ROUNDS; k++) {
            uint32_t size = lin_size(i, k);
            wrong += r[i].rc[k] != (int)size;
            if (r[i].step[k] < base || r[i].step[k] > base + NCALLS) {
                stray++;
                continue;
            }
            unapplied += r[i].step[k] <= prev;
            prev = r[i].step[k];
            uint64_t at = r[i].step[k] - base;
            torn += left[at] != 0 && left[at] != r[i].seen[k];
            left[at] = r[i].seen[k];
            if (at == NCALLS && r[i].seen[k] == size) {
                last++;
                last_size = size;
            }
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(stray, 0);
    CU_ASSERT_EQUAL(torn, 0);
    CU_ASSERT_EQUAL(unapplied, 0);
    CU_ASSERT_EQUAL(last, 1);
    CU_ASSERT_EQUAL(st.target_size, last_size);
    if (wrong + stray + torn + unapplied != 0 || last != 1 || st.target_size != last_size)
        printf("\n    wrong %u stray %u torn %u unapplied %u last %u (size %u, target %u)\n", wrong,
               stray, torn, unapplied, last, last_size, st.target_size);
    uint32_t target = st.target_size;
    RZ_WAIT_UNTIL(rz_settled_at(rt, p, target));
    CU_ASSERT(rz_settled_at(rt, p, target));
    /* A later call wins, whatever came before. */
    uint32_t later = target == 4 ? 2 : 4;
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, later, RZ_TMO), (int)later);
    RZ_WAIT_UNTIL(rz_settled_at(rt, p, later));
    CU_ASSERT(rz_settled_at(rt, p, later));
    shoal_runtime_destroy(rt);
}

static void forward_linearizable(void) { linearizable_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_linearizable(void) { linearizable_case(SHOAL_POOL_KIND_PULL); }

/* ---- live size and target apart ------------------------------------------------------ */

/* restart.max 0: the first crash degrades the pool, which refills after the
 * backoff (300 ms): meanwhile 2 live of a target of 3. It is RUNNING again
 * once a whole restart window (1 s) has passed without a death and every
 * worker is back (workers.c: shoal__pool_on_check). */
static void live_and_target_case(uint32_t kind)
{
    rz_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s;
    shoal_pool_spec_init(&s);
    s.worker = &rz_wk;
    s.kind = kind;
    s.size = 3;
    s.max_size = RZ_MAXW;
    s.restart.max = 0;
    s.restart.within_ms = 1000;
    s.restart.backoff_ms = 300;
    shoal_pid_t p;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &p), SHOAL_OK);
    CU_ASSERT_EQUAL(rz_job(rt, p, 0, RZ_A_PANIC), SHOAL_OK);
    RZ_WAIT_UNTIL(shoal_test_pool_stats(rt, p).pool_size == 2);
    shoal_pool_stats_t st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 2);
    CU_ASSERT_EQUAL(st.target_size, 3);
    CU_ASSERT_EQUAL(st.state, SHOAL_POOL_DEGRADED);
    /* A resize while degraded moves the target; live follows at the refill. */
    CU_ASSERT_EQUAL(shoal_pool_set_size(rt, p, 4, RZ_TMO), 4);
    st = shoal_test_pool_stats(rt, p);
    CU_ASSERT_EQUAL(st.target_size, 4);
    RZ_WAIT_UNTIL(rz_settled_at(rt, p, 4) &&
                  shoal_test_pool_stats(rt, p).state == SHOAL_POOL_RUNNING);
    CU_ASSERT(rz_settled_at(rt, p, 4));
    CU_ASSERT_EQUAL(shoal_test_pool_stats(rt, p).state, SHOAL_POOL_RUNNING);
    shoal_runtime_destroy(rt);
}

static void forward_live_and_target(void) { live_and_target_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_live_and_target(void) { live_and_target_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: resize is idempotent", forward_idempotent},
        {"pull: resize is idempotent", pull_idempotent},
        {"forward: resizes are linearizable", forward_linearizable},
        {"pull: resizes are linearizable", pull_linearizable},
        {"forward: live size and target apart", forward_live_and_target},
        {"pull: live size and target apart", pull_live_and_target},
        {NULL, NULL}};
    return shoal_test_run("resize: idempotent, linearizable, live and target", cases);
}
