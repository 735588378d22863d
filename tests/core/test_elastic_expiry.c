/* test_elastic_expiry.c - elastic pools (core/pool/elastic.c,
 * shoal/pool.h) shrinking: a worker idle past idle_timeout ends, down to
 * min_size and no earlier; a woken pull member that expires passes its
 * wake-up on; a member moved in the table keeps its idle time; a pool idled
 * down to no worker and drained still handles the send that came before
 * the drain -- all of a forward pool's grow list with one sweeper -- and a
 * send racing a drain is handled or refused, never accepted and then
 * dropped. For forward and pull pools alike where both have the feature.
 *
 * Handlers never call CUnit: they record into atomics; the test thread
 * asserts after synchronising on them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actor/timer.h"
#include "elastic_kit.h"

/* ---- idle expiry -------------------------------------------------------------- */

/* 4 workers idle past 40 ms end down to min 1 -- none before 40 ms -- and
 * the target follows; what they had was handled first. */
static void idle_expiry_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(kind, 4, 1, 4, 16);
    s.idle_timeout_ms = 40;
    double t0 = shoal_test_now();
    shoal_pid_t p = ek_spawn(rt, &s);
    for (int i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
    double first_gone = 0;
    double end = shoal_test_now() + EK_WAIT_S;
    while (shoal_test_now() < end) {
        shoal_pool_stats_t st = EK_STATS(rt, p);
        if (st.pool_size < 4 && first_gone == 0)
            first_gone = shoal_test_now();
        if (st.pool_size == 1 && st.retiring == 0)
            break;
        shoal_test_nap();
    }
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.target_size, 1);
    CU_ASSERT_EQUAL(st.expired, 3);
    CU_ASSERT_EQUAL(st.idle_timeout_ms, 40);
    CU_ASSERT(first_gone - t0 >= 0.040);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 20);
    CU_ASSERT_EQUAL(st.messages_handled, 20);
    /* It stays at min: no worker below it ends. */
    struct timespec ts = {0, 150000000};
    nanosleep(&ts, NULL);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).pool_size, 1);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).expired, 3);
    shoal_runtime_destroy(rt);
}

/* The elastic tick cannot be armed again once (no memory, injected): it
 * is owed (actor/timer.h), logged, and still comes -- the idle workers end
 * down to min as before, and the log says the tick runs again. Lost,
 * as it was before, the pool kept its 4 workers for good. */
static void forward_tick_owed(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime_logged(2, SHOAL_LOG_INFO);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 4, 1, 4, 16);
    s.idle_timeout_ms = 400;
    shoal_pid_t p = ek_spawn(rt, &s);
    for (int i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(EK_STATS(rt, p).messages_handled == 20, EK_WAIT_S);
    shoal__timers_fail(rt, 1); /* the next start is the tick's own re-arm */
    SHOAL_TEST_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 1, EK_WAIT_S);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.pool_size, 1);
    CU_ASSERT_EQUAL(st.expired, 3);
    shoal_test_assert_logged("could not arm its elastic tick (out of memory): owed, the timer "
                             "thread sends it once memory allows");
    shoal_test_assert_logged("its elastic tick has come: running again");
    shoal_runtime_destroy(rt);
}

static void forward_idle_expiry(void) { idle_expiry_case(SHOAL_POOL_KIND_FORWARD); }
static void pull_idle_expiry(void) { idle_expiry_case(SHOAL_POOL_KIND_PULL); }

/* ---- a woken member that expires ------------------------------------------------- */

/* An actor that holds the runtime's only dispatcher thread until `ek_gate2`. */
static int hold_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx;
    (void)state;
    (void)msg;
    atomic_fetch_add(&ek_entered2, 1);
    shoal_test_wait_flag(&ek_gate2, EK_WAIT_S);
    return 0;
}

static const shoal_behaviour_t holder = {.name = "holder", .handle_message = hold_message};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool, other;
    int rc;
} one_send_t;

/* A new thread's sends to pools: a sender wakes the member in slot (its
 * count of sends to pools) % (members) (pull.c: wake). This one sends
 * twice to `other` first, if any, and then once to `pool`: the member in
 * slot 0 of 3 is woken; with no `other`, the one in slot 1. */
static void *one_send_main(void *arg)
{
    one_send_t *o = arg;
    for (int i = 0; i < 2 && o->other != SHOAL_PID_NONE; i++)
        CU_ASSERT_EQUAL(ek_job(o->rt, o->other, EK_A_OK), SHOAL_OK);
    o->rc = ek_job(o->rt, o->pool, EK_A_OK);
    return NULL;
}

static int send_from_new_thread(shoal_runtime_t *rt, shoal_pid_t pool, shoal_pid_t other)
{
    one_send_t one = {rt, pool, other, 99};
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, one_send_main, &one), 0);
    pthread_join(t, NULL);
    return one.rc;
}

/* A pull pool of 3 members (min 1, idle_timeout 400 ms), all asleep from
 * t0; at t0 + 250 ms the one in slot 0 handles a job, then the runtime's
 * only dispatcher thread is held past t0 + 400 ms: the idle tick comes due
 * meanwhile, and an item is sent, which wakes the member in slot 1. Then
 * the pool's actor runs first and expires the two idle past 400 ms -- the
 * woken one among them; the one in slot 0 stays, asleep. A retiring member
 * takes nothing: the wake-up it got must go on to a member that does (the
 * item waited in the buffer with that member asleep and nobody to wake it). */
static void pull_woken_member_expires(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t d = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 1, 1, 1, 16);
    shoal_pid_t other = ek_spawn(rt, &d);
    shoal_pid_t h = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &holder, NULL, NULL, &h), SHOAL_OK);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_PULL, 3, 1, 3, 16);
    s.idle_timeout_ms = 400;
    double t0 = shoal_test_now();
    shoal_pid_t p = ek_spawn(rt, &s);
    EK_WAIT_UNTIL(EK_STATS(rt, p).idle == 3);
    CU_ASSERT_EQUAL_FATAL(EK_STATS(rt, p).idle, 3);
    while (shoal_test_now() < t0 + 0.25)
        shoal_test_nap();
    CU_ASSERT_EQUAL(send_from_new_thread(rt, p, other), SHOAL_OK); /* slot 0's */
    EK_WAIT_UNTIL(atomic_load(&ek_done) == 3);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, 1, NULL, 0), SHOAL_OK);
    EK_WAIT_UNTIL(atomic_load(&ek_entered2) == 1);
    while (shoal_test_now() < t0 + 0.55)
        shoal_test_nap();
    CU_ASSERT_EQUAL(send_from_new_thread(rt, p, SHOAL_PID_NONE), SHOAL_OK); /* wakes slot 1 */
    atomic_store(&ek_gate2, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ek_done) == 4 && EK_STATS(rt, p).messages_handled == 2, 3.0);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 4);
    shoal_pool_stats_t st = EK_STATS(rt, p);
    CU_ASSERT_EQUAL(st.expired, 2);
    CU_ASSERT_EQUAL(st.messages_handled, 2);
    shoal_runtime_destroy(rt);
}

/* A pull pool of 2 (min 0, idle_timeout 400 ms): the member in slot 1
 * handles a job at t1, 200 ms after the other went idle. The other expires
 * first and the member in slot 1 moves into its slot; it still ends within
 * 1.25 x idle_timeout of t1 -- the move does not start its idle time over. */
static void pull_moved_member_keeps_idle_time(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime(2);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_PULL, 2, 0, 2, 16);
    s.idle_timeout_ms = 400;
    double t0 = shoal_test_now();
    shoal_pid_t p = ek_spawn(rt, &s);
    EK_WAIT_UNTIL(EK_STATS(rt, p).idle == 2);
    while (shoal_test_now() < t0 + 0.2)
        shoal_test_nap();
    double t1 = shoal_test_now();
    CU_ASSERT_EQUAL(send_from_new_thread(rt, p, SHOAL_PID_NONE), SHOAL_OK); /* slot 1's */
    EK_WAIT_UNTIL(atomic_load(&ek_done) == 1);
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 1);
    CU_ASSERT_EQUAL(EK_STATS(rt, p).expired, 1);
    EK_WAIT_UNTIL(EK_STATS(rt, p).pool_size == 0);
    double gone = shoal_test_now() - t1;
    CU_ASSERT_EQUAL(EK_STATS(rt, p).expired, 2);
    CU_ASSERT(gone >= 0.4);
    CU_ASSERT(gone < 0.5 + 0.05);
    printf("\n    the moved member ended %.0f ms after its job (idle_timeout 400 ms) ", gone * 1e3);
    shoal_runtime_destroy(rt);
}

/* A pool idled down to no worker (min 0) is told to drain, and a send
 * comes before the drain is read (the only dispatcher thread is held
 * meanwhile): the send was accepted -- into a pull pool's buffer, onto a
 * forward pool's grow list -- so the drain waits for it and a worker must
 * start to handle it (a pool no longer grows for a send once it drains),
 * not drop it. Then the pool ends. */
/* Spawns s (idle_timeout 20 ms: it idles down to min 0) on rt, a runtime
 * of one dispatcher thread, waits until it has no worker, then holds that
 * thread (holder, until ek_gate2), so that what is sent next waits. *p:
 * the pool; returns its record (its counts after it has ended). */
static shoal_pool_t *idled_and_held(shoal_runtime_t *rt, shoal_pool_spec_t *s, shoal_pid_t *p)
{
    shoal_pid_t h = SHOAL_PID_NONE;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &holder, NULL, NULL, &h), SHOAL_OK);
    s->idle_timeout_ms = 20;
    *p = ek_spawn(rt, s);
    shoal_pool_t *rec = shoal__pool_find(rt, *p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
    EK_WAIT_UNTIL(EK_STATS(rt, *p).pool_size == 0 && EK_STATS(rt, *p).retiring == 0);
    CU_ASSERT_EQUAL_FATAL(EK_STATS(rt, *p).pool_size, 0);
    CU_ASSERT_EQUAL(shoal_runtime_send(rt, h, 1, NULL, 0), SHOAL_OK);
    EK_WAIT_UNTIL(atomic_load(&ek_entered2) == 1);
    return rec;
}

static void drained_with_no_worker_case(uint32_t kind)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = ek_spec_of(kind, 1, 0, 2, 16);
    shoal_pid_t p;
    shoal_pool_t *rec = idled_and_held(rt, &s, &p);
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK); /* the pool is still open */
    atomic_store(&ek_gate2, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&ek_done) == 1, 3.0);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 1);
    shoal_pool_stats_t st;
    SHOAL_TEST_WAIT_UNTIL(shoal_pool_stats(rt, p, &st, EK_TMO) == SHOAL_ENOPROC, 3.0);
    CU_ASSERT_EQUAL(shoal_pool_stats(rt, p, &st, EK_TMO), SHOAL_ENOPROC); /* it has ended */
    SHOAL_TEST_WAIT_UNTIL(shoal__pool_is_quiet(rec), EK_WAIT_S);
    shoal__pool_peek(rec, &st);
    CU_ASSERT_EQUAL(st.messages_forwarded, 1);
    CU_ASSERT_EQUAL(st.messages_handled, 1);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

/* A forward pool idled down to no worker, six sends on its grow list when
 * its drain is read (one dispatcher thread, held, so the drain and the
 * sends wait together): one worker started for all six, handled in order
 * -- each had one started for itself, up to the restart budget (5 in 5 s)
 * beyond max_size 1, the rest waiting for the budget (~5 s): restarts
 * went up by 5 with no crash. */
static void forward_drain_sweeps_its_grow_list_once(void)
{
    ek_reset();
    shoal_runtime_t *rt = shoal_test_runtime_fixed(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 1, 0, 1, 8);
    shoal_pid_t p;
    shoal_pool_t *rec = idled_and_held(rt, &s, &p);
    shoal_pool_stats_t st;
    shoal__pool_peek(rec, &st); /* the pool's actor has no thread to answer */
    uint64_t restarts = st.worker_restarts;
    CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(ek_job(rt, p, EK_A_OK), SHOAL_OK); /* the pool is still open */
    atomic_store(&ek_gate2, 1);
    SHOAL_TEST_WAIT_UNTIL(shoal__pool_is_quiet(rec), EK_WAIT_S);
    shoal__pool_peek(rec, &st);
    CU_ASSERT_EQUAL(atomic_load(&ek_done), 6);
    CU_ASSERT_EQUAL(st.messages_forwarded, 6);
    CU_ASSERT_EQUAL(st.messages_handled, 6);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(st.worker_restarts, restarts + 1); /* the one sweeper */
    shoal__pool_unref(rt, rec);
    shoal_runtime_destroy(rt);
}

/* A forward pool idled down to no worker, drained while a thread sends to
 * it, 200 times: every send is SHOAL_OK and handled, or refused
 * (SHOAL_ENOPROC) -- never accepted and then dropped at the pool's end (a
 * sender's grow-list claim after the drain's last look: elastic.c, the
 * drain pair). A race: this checks the count around it. */
typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t p;
    int ok, refused, other;
    atomic_int started;
} drain_racer_t;

static void *drain_racer_main(void *arg)
{
    drain_racer_t *r = arg;
    for (;;) {
        int rc = ek_job(r->rt, r->p, EK_A_OK);
        atomic_store(&r->started, 1);
        if (rc == SHOAL_OK)
            r->ok++;
        else if (rc == SHOAL_ENOPROC)
            return (r->refused++, NULL);
        else
            r->other++; /* SHOAL_EBUSY: its lazy claims are all taken */
    }
}

static void forward_send_racing_a_drain(void)
{
    shoal_runtime_t *rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    int lost = 0, unended = 0;
    for (int k = 0; k < 200; k++) {
        ek_reset();
        shoal_pool_spec_t s = ek_spec_of(SHOAL_POOL_KIND_FORWARD, 0, 0, 2, 4);
        s.idle_timeout_ms = 20;
        shoal_pid_t p = ek_spawn(rt, &s);
        shoal_pool_t *rec = shoal__pool_find(rt, p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
        drain_racer_t r = {.rt = rt, .p = p};
        pthread_t th;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, drain_racer_main, &r), 0);
        EK_WAIT_UNTIL(atomic_load(&r.started));
        if (k % 3 != 0)
            shoal_test_nap();
        CU_ASSERT_EQUAL(shoal_runtime_send_priority(rt, p, SHOAL_POOL_DRAIN, NULL, 0), SHOAL_OK);
        pthread_join(th, NULL);
        SHOAL_TEST_WAIT_UNTIL(shoal__pool_is_quiet(rec), EK_WAIT_S);
        unended += !shoal__pool_is_quiet(rec);
        shoal_pool_stats_t st;
        shoal__pool_peek(rec, &st);
        lost += st.messages_dropped != 0 || st.messages_handled != (uint64_t)r.ok ||
                atomic_load(&ek_done) != r.ok;
        shoal__pool_unref(rt, rec);
    }
    CU_ASSERT_EQUAL(lost, 0);
    CU_ASSERT_EQUAL(unended, 0);
    shoal_runtime_destroy(rt);
}

static void forward_drained_with_no_worker(void)
{
    drained_with_no_worker_case(SHOAL_POOL_KIND_FORWARD);
}
static void pull_drained_with_no_worker(void) { drained_with_no_worker_case(SHOAL_POOL_KIND_PULL); }

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"forward: idle workers end down to min, not before", forward_idle_expiry},
        {"pull: idle workers end down to min, not before", pull_idle_expiry},
        {"forward: an elastic tick that cannot be armed is owed", forward_tick_owed},
        {"pull: a woken member that expires passes its wake-up on", pull_woken_member_expires},
        {"pull: a member moved in the table keeps its idle time",
         pull_moved_member_keeps_idle_time},
        {"forward: drained with no worker, a send on its grow list",
         forward_drained_with_no_worker},
        {"pull: drained with no worker, an item in its buffer", pull_drained_with_no_worker},
        {"forward: a drain sweeps its grow list once", forward_drain_sweeps_its_grow_list_once},
        {"forward: a send racing a drain is handled or refused", forward_send_racing_a_drain},
        {NULL, NULL},
    };
    return shoal_test_run("elastic_expiry", cases);
}
