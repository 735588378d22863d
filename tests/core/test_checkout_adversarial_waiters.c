/* test_checkout_adversarial_waiters.c - checkout pools (core/pool/
 * checkout_fast.c) changed under takers that wait, with exact outcomes:
 *   - max, init and queue_max changed while takers wait;
 *   - drain while actors and a thread wait, then returns, sends and
 *     send_many to the drained pool;
 *   - drain racing a hand-off to a taker that crashed.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkout_kit.h"

/* ---- settings changed while takers wait ----------------------------------------- */

static void settings_changed_while_takers_wait(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pool_spec_t s = ck_spec(1, 1, 8);
    shoal_pid_t pool = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &s, &pool), SHOAL_OK);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), c[3];
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    for (int k = 0; k < 3; k++) {
        c[k] = ck_spawn_consumer(rt, k + 1);
        CU_ASSERT_EQUAL(ck_take(rt, c[k], k + 1, pool, 60000), SHOAL_OK);
        CK_WAIT_UNTIL(ck_stats(rt, pool).queued == (uint32_t)k + 1);
    }
    /* max 1 -> 3: two members start, for the first two waiting. */
    shoal_pool_checkout_update_t u = {1, 3, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CK_TMO), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&grants[1]) == 1 && atomic_load(&grants[2]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&grants[1]), 1);
    CU_ASSERT_EQUAL(atomic_load(&grants[2]), 1);
    CU_ASSERT_EQUAL(atomic_load(&grants[3]), 0);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 3);
    CU_ASSERT_EQUAL(st.queued, 1);
    /* queue_max 8 -> 0: the one still waiting is refused. */
    u.checkout.queue_max = 0;
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CK_TMO), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&answers[3]) == 1);
    CU_ASSERT_EQUAL(atomic_load(&answer_status[3]), SHOAL_ENOMEMBERS);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(st.error_no_members, 1);
    /* A take now cannot wait at all. */
    CU_ASSERT_EQUAL(ck_take(rt, c[2], 3, pool, 60000), SHOAL_OK);
    CK_WAIT_UNTIL(atomic_load(&answers[3]) == 2);
    CU_ASSERT_EQUAL(atomic_load(&answer_status[3]), SHOAL_ENOMEMBERS);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).error_no_members, 2);
    /* max 3 -> 1 with all three in use: none touched; the first two given
     * back end (culled), the last stays. */
    u = (shoal_pool_checkout_update_t){1, 1, s.checkout};
    CU_ASSERT_EQUAL(shoal_pool_set_checkout(rt, pool, &u, CK_TMO), SHOAL_OK);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 3);
    CU_ASSERT_EQUAL(st.culled, 0);
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).culled == 1 && ck_stats(rt, pool).pool_size == 2);
    CU_ASSERT_EQUAL(ck_give_back(rt, c[0], 1, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).culled == 2 && ck_stats(rt, pool).pool_size == 1);
    CU_ASSERT_EQUAL(ck_give_back(rt, c[1], 2, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 1);
    st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.culled, 2);
    CU_ASSERT_EQUAL(st.free, 1);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.takes, 3);
    CU_ASSERT_EQUAL(st.returned_ok, 3);
    CU_ASSERT_EQUAL(st.max_size, 1);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 3);
    shoal_runtime_destroy(rt);
}

/* ---- drain while takers wait ------------------------------------------------------ */

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool, got;
    uint64_t timeout_ms;
    int rc;
    atomic_int done;
} thread_take_t;

static void *thread_take_main(void *arg)
{
    thread_take_t *t = arg;
    t->rc = shoal_runtime_take(t->rt, t->pool, t->timeout_ms, &t->got);
    atomic_store(&t->done, 1);
    return NULL;
}

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int rc;
    atomic_int done;
} drainer_t;

static void *drain_main(void *arg)
{
    drainer_t *d = arg;
    d->rc = shoal_pool_drain(d->rt, d->pool, 15000);
    atomic_store(&d->done, 1);
    return NULL;
}

static void drain_while_takers_wait(void)
{
    shoal_runtime_t *rt = ck_runtime(4);
    shoal_pid_t pool = ck_start(rt, 1, 1, 8);
    shoal_pid_t h = ck_spawn_consumer(rt, 0), w[3], late = ck_spawn_consumer(rt, 4);
    CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
    shoal_pid_t m = atomic_load(&got[0]);
    for (int k = 0; k < 3; k++) {
        w[k] = ck_spawn_consumer(rt, k + 1);
        CU_ASSERT_EQUAL(ck_take(rt, w[k], k + 1, pool, 60000), SHOAL_OK);
    }
    CK_WAIT_UNTIL(ck_stats(rt, pool).queued == 3);
    thread_take_t tt = {.rt = rt, .pool = pool, .timeout_ms = 60000, .rc = 99};
    pthread_t th, dh;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, thread_take_main, &tt), 0);
    CK_WAIT_UNTIL(ck_stats(rt, pool).queued == 4);
    CU_ASSERT_EQUAL(ck_stats(rt, pool).queued, 4);
    /* A transaction waits too. */
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_OK, NULL, 0), SHOAL_OK);
    CK_WAIT_UNTIL(ck_stats(rt, pool).queued == 5);
    drainer_t d = {.rt = rt, .pool = pool, .rc = 99};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&dh, NULL, drain_main, &d), 0);
    for (int k = 1; k <= 3; k++)
        CK_WAIT_UNTIL(atomic_load(&answers[k]) == 1);
    CK_WAIT_UNTIL(atomic_load(&tt.done) == 1);
    /* The takes waiting hear at once that the pool stops; the transaction
     * waits on, to be served (checkout.h: draining). */
    for (int k = 1; k <= 3; k++) {
        CU_ASSERT_EQUAL(atomic_load(&answers[k]), 1);
        CU_ASSERT_EQUAL(atomic_load(&answer_status[k]), SHOAL_ESHUTDOWN);
        CU_ASSERT_EQUAL(atomic_load(&grants[k]), 0);
    }
    CU_ASSERT_EQUAL(tt.rc, SHOAL_ESHUTDOWN);
    CU_ASSERT_EQUAL(tt.got, SHOAL_PID_NONE);
    pthread_join(th, NULL);
    /* Nothing new gets in, a take told so at once (no answer follows);
     * the member in use is still h's. */
    CU_ASSERT_EQUAL(ck_try_take(rt, late, 4, pool), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(ck_take(rt, late, 4, pool, 1000), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, pool, T_OK, NULL, 0), SHOAL_ENOPROC);
    uint64_t v[4] = {0};
    size_t sent = 99;
    CU_ASSERT_EQUAL(shoal_runtime_send_many(rt, pool, T_OK, v, sizeof v[0], 4, &sent),
                    SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(sent, 0);
    CU_ASSERT_EQUAL(atomic_load(&d.done), 0);
    CU_ASSERT_TRUE(ck_alive(rt, m));
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(st.in_use, 1);
    CU_ASSERT_EQUAL(st.queued, 1); /* the transaction */
    CU_ASSERT_EQUAL(st.takes, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    /* h's return gives the member to the transaction; then it ends. */
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, SHOAL_PID_NONE, SHOAL_RETURN_OK), SHOAL_OK);
    pthread_join(dh, NULL);
    CU_ASSERT_EQUAL(d.rc, SHOAL_OK);
    CU_ASSERT_FALSE(ck_alive(rt, m));
    CU_ASSERT_EQUAL(atomic_load(&ck_handled), 1);
    CU_ASSERT_EQUAL(ck_give_back(rt, h, 0, m, SHOAL_RETURN_OK), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(ck_try_take(rt, late, 4, pool), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(atomic_load(&answers[4]), 0);
    shoal_runtime_destroy(rt);
}

/* A return hands the member to a taker that has crashed (the grant cannot
 * be delivered) while the pool starts to drain: the member must still end
 * and the drain finish. Many rounds, the return and the drain let go at
 * once. */
#define DRAIN_RACE_ROUNDS 200

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    int rc;
    atomic_int go;
} racing_drainer_t;

static void *racing_drain_main(void *arg)
{
    racing_drainer_t *d = arg;
    while (!atomic_load(&d->go))
        ;
    d->rc = shoal_pool_drain(d->rt, d->pool, 3000);
    return NULL;
}

static void drain_races_a_hand_off_to_a_crashed_taker(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    int hung = 0, bad_rc = 0;
    for (int r = 0; r < DRAIN_RACE_ROUNDS && hung == 0; r++) {
        ck_reset();
        shoal_pid_t pool = ck_start(rt, 1, 1, 8);
        shoal_pid_t h = ck_spawn_consumer(rt, 0), d = ck_spawn_consumer(rt, 1);
        CU_ASSERT_EQUAL_FATAL(ck_try_take(rt, h, 0, pool), SHOAL_OK);
        ck_tell(rt, d, (ck_order_t){.what = C_TAKE_PANIC, .pool = pool, .timeout_ms = 60000});
        CK_WAIT_UNTIL(ck_dead(rt, d));
        ck_tell(rt, h, (ck_order_t){.what = C_BLOCK_RETURN, .how = SHOAL_RETURN_OK});
        CK_WAIT_UNTIL(atomic_load(&stage[0]) == 1);
        racing_drainer_t dr = {.rt = rt, .pool = pool, .rc = 99};
        pthread_t th;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, racing_drain_main, &dr), 0);
        atomic_store(&dr.go, 1);
        atomic_store(&cgate[0], 1);
        pthread_join(th, NULL);
        CK_WAIT_UNTIL(atomic_load(&return_rc[0]) != 99);
        bad_rc += atomic_load(&return_rc[0]) != SHOAL_OK;
        if (dr.rc != SHOAL_OK) {
            shoal_pool_stats_t st = shoal_test_pool_stats(rt, pool);
            fprintf(stderr,
                    "\nround %d: drain %d; state %u in_use %u free %u starting %u queued %u "
                    "takes %llu returned_ok %llu\n",
                    r, dr.rc, (unsigned)st.state, st.in_use, st.free, st.starting, st.queued,
                    (unsigned long long)st.takes, (unsigned long long)st.returned_ok);
            hung++;
        }
        (void)shoal_runtime_stop_actor(rt, h);
    }
    CU_ASSERT_EQUAL(hung, 0);
    CU_ASSERT_EQUAL(bad_rc, 0);
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"settings changed while takers wait", settings_changed_while_takers_wait},
        {"drain while takers wait", drain_while_takers_wait},
        {"drain races a hand-off to a crashed taker", drain_races_a_hand_off_to_a_crashed_taker},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_adversarial_waiters", cases);
}
