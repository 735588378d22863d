/* test_remote_calls.c - the calls an isolated pool's child holds
 * (core/pool/remote_calls.c): answered at once when it dies, or when the
 * pool stops; one its caller gave up is forgotten; calls from many threads
 * across deaths each answered. The rig and the stand-in children:
 * support/remote_kit.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "remote_kit.h"
#include "support.h"

/* Until the current child holds n messages it has not settled (its ring
 * or its workers): the callers' calls have reached it. */
static bool child_holds(rk_rig_t *g, uint64_t n)
{
    for (double end = shoal_test_now() + RK_WAIT_S; shoal_test_now() < end; shoal_test_nap()) {
        /* relaxed: the supervisor publishes it; we only read its counts. */
        child_t *c = atomic_load_explicit(&g->r->cur, memory_order_relaxed);
        shoal_pool_stats_t st = shoal_test_pool_stats(g->rt, g->pid);
        if (c != NULL && shoal__remote_pushed(c) - st.messages_handled - st.messages_failed == n)
            return true;
    }
    return false;
}

#define HELD 3

/* Three callers wait on calls the child holds (it never answers them),
 * beside casts and a call it answered; the child is killed: each caller
 * hears SHOAL_EFAILED at once -- as a caller hears when an in-process
 * worker's handler fails; its calls are counted as failed -- not at its
 * timeout; the casts are counted as handled, and the next child answers.
 * (Before the fix the parent kept no record of the calls a child held:
 * their callers waited for their whole timeout, or for ever without one
 * -- a loadgen with `timeout: 0` stalled for good.) */
static void calls_answered_when_child_dies(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    rk_caller_t echo[1], held[HELD];
    pthread_t te[1], th[HELD];
    rk_callers_start(echo, te, 1, &g, 1, RK_TMO_MS);
    CU_ASSERT_TRUE(rk_callers_answered(echo, te, 1, RK_WAIT_S));
    CU_ASSERT_EQUAL(echo[0].rc, SHOAL_OK);
    CU_ASSERT_EQUAL(echo[0].status, SHOAL_OK);
    CU_ASSERT_STRING_EQUAL(echo[0].data, "ping");
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(shoal_runtime_send(g.rt, g.pid, 1, "cast", 4), SHOAL_OK);
    rk_callers_start(held, th, HELD, &g, RK_FAKE_HOLD, RK_TMO_MS);
    CU_ASSERT_TRUE(child_holds(&g, HELD));
    shoal_pool_stats_t st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_handled, 6); /* the answered call and the casts */
    double t0 = shoal_test_now();
    kill(atomic_load(&f.pid), SIGKILL);
    bool answered = rk_callers_answered(held, th, HELD, 5.0);
    CU_ASSERT_TRUE(answered);
    printf("\n  %d held calls answered %.0f ms after the kill ... ", HELD,
           (shoal_test_now() - t0) * 1000);
    for (int i = 0; i < HELD; i++) {
        CU_ASSERT_EQUAL(held[i].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(held[i].status, SHOAL_EFAILED);
        CU_ASSERT(held[i].took < 5.0);
    }
    st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_failed, HELD);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    /* The next child answers. */
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0 && rk_died(&g) == 1, RK_WAIT_S);
    rk_call_answered(&g);
    rk_rig_down(&g);
}

/* The pool stops while a caller waits on a call its child holds: the
 * caller hears SHOAL_ENOPROC (the child's messages are dropped), as from
 * an actor that ends with calls in its mailbox. (Before the fix: nothing,
 * until its timeout.) */
static void calls_answered_when_pool_stops(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    rk_caller_t held[2];
    pthread_t th[2];
    rk_callers_start(held, th, 2, &g, RK_FAKE_HOLD, RK_TMO_MS);
    CU_ASSERT_TRUE(child_holds(&g, 2));
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(g.rt, g.pid), SHOAL_OK);
    CU_ASSERT_TRUE(rk_callers_answered(held, th, 2, 5.0));
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(held[i].rc, SHOAL_OK);
        CU_ASSERT_EQUAL(held[i].status, SHOAL_ENOPROC);
    }
    rk_rig_down(&g);
}

/* A caller gives up (its timeout) on a call the child holds: the call is
 * forgotten (shoal__call_gone), so the child's death later answers no
 * one -- no reply goes out to a caller that has left. */
static void call_given_up_is_forgotten(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    rk_caller_t held[1];
    pthread_t th[1];
    rk_callers_start(held, th, 1, &g, RK_FAKE_HOLD, 300);
    CU_ASSERT_TRUE(rk_callers_answered(held, th, 1, RK_WAIT_S));
    CU_ASSERT_EQUAL(held[0].rc, SHOAL_ETIMEDOUT);
    uint64_t late = shoal_test_stats(g.rt).replies_late;
    kill(atomic_load(&f.pid), SIGKILL);
    SHOAL_TEST_WAIT_UNTIL(rk_died(&g) == 1, RK_WAIT_S);
    CU_ASSERT_EQUAL(rk_died(&g), 1);
    CU_ASSERT_EQUAL(shoal_test_pool_stats(g.rt, g.pid).messages_failed, 1);
    CU_ASSERT_EQUAL(shoal_test_stats(g.rt).replies_late, late);
    rk_rig_down(&g);
}

/* Four threads call the pool, one call after another, while its child is
 * killed every 30 ms, five times: every call is answered at once, and once
 * -- its echo, or SHOAL_EFAILED from a child that died holding it, or
 * refused (SHOAL_EBUSY) while no child is up -- none waits for its
 * timeout; and the pool's counts settle: handled + failed = the calls it
 * took. */
#define CALLERS 4

typedef struct many_s {
    rk_rig_t *g;
    atomic_int *stop;
    unsigned calls, ok, failed, busy, other;
    double slowest;
} many_t;

static void *many_calls(void *arg)
{
    many_t *m = arg;
    while (!atomic_load(m->stop)) {
        m->calls++;
        shoal_answer_t a;
        double t0 = shoal_test_now();
        int rc = shoal_runtime_call(m->g->rt, m->g->pid, 1, "ping", 4, RK_TMO_MS, &a);
        double took = shoal_test_now() - t0;
        m->slowest = took > m->slowest ? took : m->slowest;
        if (rc == SHOAL_OK && a.status == SHOAL_OK && a.size == 4 && memcmp(a.data, "ping", 4) == 0)
            m->ok++;
        else if (rc == SHOAL_OK && a.status == SHOAL_EFAILED)
            m->failed++;
        else if (rc == SHOAL_EBUSY)
            m->busy++;
        else
            m->other++;
        if (rc == SHOAL_OK)
            shoal_answer_release(&a);
        if (rc == SHOAL_EBUSY)
            shoal_test_nap(); /* no child up: as a caller would, a little later */
    }
    return NULL;
}

static void calls_across_deaths(void)
{
    rk_fake_t f = {0};
    rk_rig_t g;
    if (!rk_rig_up(&g, &f))
        return;
    many_t m[CALLERS];
    pthread_t t[CALLERS];
    atomic_int stop = 0;
    for (int i = 0; i < CALLERS; i++) {
        m[i] = (many_t){.g = &g, .stop = &stop};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, many_calls, &m[i]), 0);
    }
    for (int k = 0; k < 5; k++) {
        SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0, RK_WAIT_S);
        double t0 = shoal_test_now();
        SHOAL_TEST_WAIT_UNTIL(shoal_test_now() > t0 + 0.03, 1.0);
        kill(atomic_load(&f.pid), SIGKILL);
        SHOAL_TEST_WAIT_UNTIL(rk_died(&g) == (uint64_t)k + 1, RK_WAIT_S);
    }
    SHOAL_TEST_WAIT_UNTIL(rk_current_pid(&g) != 0, RK_WAIT_S);
    atomic_store(&stop, 1);
    unsigned calls = 0, ok = 0, failed = 0, busy = 0, other = 0;
    double slowest = 0;
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(t[i], NULL);
        calls += m[i].calls;
        ok += m[i].ok;
        failed += m[i].failed;
        busy += m[i].busy;
        other += m[i].other;
        slowest = m[i].slowest > slowest ? m[i].slowest : slowest;
    }
    printf("\n  %u calls: %u answered, %u failed with their child, %u refused; slowest %.0f ms "
           "... ",
           calls, ok, failed, busy, slowest * 1000);
    CU_ASSERT_EQUAL(ok + failed + busy, calls);
    CU_ASSERT(failed > 0); /* else no death came while calls were held: it tests nothing */
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT(slowest < 5.0);
    shoal_pool_stats_t st;
    for (double end = shoal_test_now() + RK_WAIT_S; shoal_test_now() < end; shoal_test_nap()) {
        st = shoal_test_pool_stats(g.rt, g.pid);
        if (st.messages_handled + st.messages_failed == st.messages_forwarded)
            break;
    }
    st = shoal_test_pool_stats(g.rt, g.pid);
    CU_ASSERT_EQUAL(st.messages_handled + st.messages_failed, st.messages_forwarded);
    CU_ASSERT_EQUAL(st.messages_forwarded, ok + failed);
    /* Each once: no second answer reached a caller that had its first. */
    CU_ASSERT_EQUAL(shoal_test_stats(g.rt).replies_late, 0);
    rk_rig_down(&g);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fake-child") == 0)
        return rk_fake_child(argc, argv);
    static const shoal_test_case_t cases[] = {
        {"the calls a dead child held are answered at once", calls_answered_when_child_dies},
        {"the calls a child holds are answered when the pool stops",
         calls_answered_when_pool_stops},
        {"a call its caller gave up is not answered at the child's death",
         call_given_up_is_forgotten},
        {"calls from many threads across deaths: each answered, at once", calls_across_deaths},
        {NULL, NULL},
    };
    return shoal_test_run("remote_calls", cases);
}
