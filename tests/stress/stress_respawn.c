/* stress_respawn.c - senders and pool wake-ups late to slots ended and
 * respawned ("stale schedulers").
 *
 * A sender that has linked its message but not yet scheduled the receiver
 * (shoal__schedule, send.c), or a pull pool waking a member it found alive
 * (wake, pull.c), may reach its schedule CAS after that actor has ended and
 * its slot has been given to a new one: the CAS then wins on the new actor's
 * schedule word. spawn.c stores that word IDLE [release] only once the
 * record is whole, so such a stale scheduler gets a spurious turn of a whole
 * record; were the word IDLE earlier, the turn could read a half-made one
 * (under ThreadSanitizer: a race on the record, b->ext, between spawn and
 * shoal__actor_run).
 *
 * A keeper actor holds SLOTS children. Each stops itself after a few
 * messages, a stopper thread stops some too, and the keeper replaces a child
 * in the turn its EXIT comes -- usually on the worker where the child ended,
 * whose slot cache hands that slot out again first (registry.c): the same
 * few slots are reused all the time. Half the children have no init, so
 * nothing schedules them until a sender does, and the keeper sleeps
 * LINGER_US between spawning one and publishing its PID: a late sender of
 * the slot's previous actor is then the first to schedule the new one, and
 * while the keeper sleeps its thread publishes nothing after the spawn that
 * the worker running that turn could have seen (so TSan judges the turn
 * against the spawn itself). SENDERS threads send to the children's current
 * PIDs, and every POOL_EVERY-th item to a pull pool whose size a resizer
 * thread sets at random, so members end and start under senders that wake
 * them. A late sender's window is a few instructions, which time slices
 * almost never split: a jitter thread that takes a CPU for a moment every
 * JITTER_US stops the thread it preempts there far more often.
 *
 * Checked: a send to a child returns SHOAL_OK or SHOAL_ENOPROC, one to the
 * pool SHOAL_OK or SHOAL_EBUSY; no child with an init, nor a member,
 * handles a message before its init ran, and none under another PID than
 * its first turn saw; every child spawned ends (SHOAL_ESHUTDOWN) and runs
 * terminate once, and every one with an init ran it; the children's ledger
 * balances (accepted = handled + the runtime's msgs_dropped; msgs_noproc =
 * the ENOPROCs the senders saw); the pool's counters match its senders'
 * exactly; no actor is left.
 *
 * With spawn's FREE -> IDLE store back where it was before db345d4 (relaxed,
 * before the record is set up), the TSan build reported that race here at
 * SHOAL_STRESS_SCALE=0.1 in 17 of 18 runs, most within half a second.
 *
 * Sizes scale with SHOAL_STRESS_SCALE (a factor, default 1; sanitizer
 * builds default to 0.1).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "support.h"

enum { M_WORK = 1 };

#define SLOTS 4          /* the keeper's children */
#define SENDERS 3        /* sender threads */
#define LIFE 6           /* a child stops itself after 1 .. LIFE messages */
#define POOL_EVERY 8     /* one item in this many goes to the pool */
#define POOL_MAX 4       /* its size: 1 .. POOL_MAX */
#define LINGER_US 100    /* the keeper's pause before a bare child's PID is published */
#define JITTER_US 20     /* the jitter thread sleeps this long, */
#define JITTER_SPIN_US 5 /* then keeps its CPU this long */
#define MAGIC 0x5ca1ab1eu
#define WAIT_S 30.0
#define CALL_MS 30000

static shoal_runtime_t *rt;
static shoal_pid_t pool_pid;
static long per_sender;
static _Atomic shoal_pid_t live[SLOTS]; /* each child's current PID */
static atomic_int closing, senders_done, keeper_ended;
static atomic_long early, bad, other_rc, respawns, kid_spawns, kid_terms, kid_handled;
static atomic_long inited_spawns, kid_inits; /* children with an init: spawned, inits run */
static atomic_long member_inits, member_terms, member_handled, stops, resizes;
static atomic_long sent_ok, sent_noproc, pool_ok, pool_busy;

/* A child's or member's state: set by its init (a bare child's: by its
 * first message), checked by every message. */
typedef struct {
    uint32_t magic;
    uint32_t left; /* messages until it stops itself */
    shoal_pid_t self;
} life_t;

static void life_start(shoal_ctx_t *ctx, life_t *l, long seq)
{
    l->magic = MAGIC;
    l->self = shoal_self(ctx);
    l->left = 1 + (uint32_t)(seq % LIFE);
}

static void life_check(shoal_ctx_t *ctx, const life_t *l, const shoal_msg_t *msg)
{
    if (l->magic != MAGIC || l->self != shoal_self(ctx))
        atomic_fetch_add(&early, 1);
    if (msg->kind != SHOAL_MSG_CAST || msg->type != M_WORK || msg->size != sizeof(uint32_t))
        atomic_fetch_add(&bad, 1);
}

static int kid_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)args;
    life_start(ctx, state, atomic_fetch_add(&kid_inits, 1));
    return 0;
}

static int kid_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    life_t *l = state;
    life_check(ctx, l, msg);
    atomic_fetch_add_explicit(&kid_handled, 1, memory_order_relaxed);
    if (l->left != 0 && --l->left == 0 && shoal_stop(ctx, shoal_self(ctx)) != SHOAL_OK)
        atomic_fetch_add(&bad, 1);
    return 0;
}

static int bare_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    life_t *l = state;
    if (l->magic == 0)
        life_start(ctx, l, atomic_load_explicit(&kid_handled, memory_order_relaxed));
    return kid_handle(ctx, state, msg);
}

static void kid_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    if (reason != SHOAL_ESHUTDOWN)
        atomic_fetch_add(&bad, 1);
    atomic_fetch_add(&kid_terms, 1);
}

static const shoal_behaviour_t kid_beh = {.name = "kid",
                                          .state_size = sizeof(life_t),
                                          .init = kid_init,
                                          .handle_message = kid_handle,
                                          .terminate = kid_term};
static const shoal_behaviour_t bare_beh = {.name = "bare",
                                           .state_size = sizeof(life_t),
                                           .handle_message = bare_handle,
                                           .terminate = kid_term};

/* ---- the keeper: child i is a kid (with init) if i is even, else bare ---- */
static int keeper_spawn(shoal_ctx_t *ctx, int i)
{
    const shoal_behaviour_t *beh = i % 2 == 0 ? &kid_beh : &bare_beh;
    shoal_pid_t pid;
    int rc = shoal_spawn(ctx, beh, NULL, NULL, &pid);
    if (rc != SHOAL_OK)
        return rc;
    atomic_fetch_add(&kid_spawns, 1);
    if (beh->init != NULL) {
        atomic_fetch_add(&inited_spawns, 1);
    } else {
        struct timespec ts = {0, LINGER_US * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&live[i], pid);
    return SHOAL_OK;
}

static int keeper_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)state;
    (void)args;
    int rc = SHOAL_OK;
    for (int i = 0; i < SLOTS && rc == SHOAL_OK; i++)
        rc = keeper_spawn(ctx, i);
    return rc;
}

static int keeper_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    for (int i = 0; i < SLOTS && msg->kind == SHOAL_MSG_EXIT; i++) {
        if (atomic_load(&live[i]) != msg->from)
            continue;
        if (!atomic_load(&closing)) {
            if (keeper_spawn(ctx, i) != SHOAL_OK)
                atomic_fetch_add(&bad, 1);
            atomic_fetch_add(&respawns, 1);
        }
        return 0;
    }
    atomic_fetch_add(&bad, 1); /* not the EXIT of a child it knows */
    return 0;
}

static void keeper_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    (void)reason;
    atomic_store(&keeper_ended, 1);
}

static const shoal_behaviour_t keeper_beh = {.name = "keeper",
                                             .init = keeper_init,
                                             .handle_message = keeper_handle,
                                             .terminate = keeper_term};

/* ---- the pull pool's member ---- */
static int member_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)args;
    life_start(ctx, state, 0);
    atomic_fetch_add(&member_inits, 1);
    return 0;
}

static int member_handle(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    life_check(ctx, state, msg);
    atomic_fetch_add_explicit(&member_handled, 1, memory_order_relaxed);
    return 0;
}

static void member_term(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)state;
    (void)reason;
    atomic_fetch_add(&member_terms, 1);
}

static const shoal_behaviour_t member_beh = {.name = "member",
                                             .state_size = sizeof(life_t),
                                             .init = member_init,
                                             .handle_message = member_handle,
                                             .terminate = member_term};

/* ---- threads ---- */
static void *sender_thread(void *arg)
{
    long p = (long)(uintptr_t)arg;
    long ok = 0, noproc = 0, pok = 0, pbusy = 0;
    for (long n = 0; n < per_sender; n++) {
        uint32_t v = (uint32_t)n;
        int rc;
        if (n % POOL_EVERY == 0) {
            rc = shoal_runtime_send(rt, pool_pid, M_WORK, &v, sizeof v);
            pok += rc == SHOAL_OK;
            pbusy += rc == SHOAL_EBUSY;
            if (rc == SHOAL_EBUSY)
                sched_yield();
            else if (rc != SHOAL_OK)
                atomic_store(&other_rc, rc);
            continue;
        }
        rc = shoal_runtime_send(rt, atomic_load(&live[(p + n) % SLOTS]), M_WORK, &v, sizeof v);
        ok += rc == SHOAL_OK;
        noproc += rc == SHOAL_ENOPROC;
        if (rc != SHOAL_OK && rc != SHOAL_ENOPROC)
            atomic_store(&other_rc, rc);
    }
    atomic_fetch_add(&sent_ok, ok);
    atomic_fetch_add(&sent_noproc, noproc);
    atomic_fetch_add(&pool_ok, pok);
    atomic_fetch_add(&pool_busy, pbusy);
    atomic_fetch_add(&senders_done, 1);
    return NULL;
}

/* A STOP is a send too: a stopper may be late like any sender. */
static void *stopper_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (atomic_load(&senders_done) < SENDERS) {
        int rc = shoal_runtime_stop_actor(rt, atomic_load(&live[rand_r(&seed) % SLOTS]));
        if (rc == SHOAL_OK)
            atomic_fetch_add(&stops, 1);
        else if (rc != SHOAL_ENOPROC)
            atomic_store(&other_rc, rc);
        sched_yield();
    }
    return NULL;
}

static void *resizer_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (atomic_load(&senders_done) < SENDERS) {
        uint32_t size = 1 + (uint32_t)rand_r(&seed) % POOL_MAX;
        if (shoal_pool_set_size(rt, pool_pid, size, CALL_MS) != (int)size)
            atomic_fetch_add(&bad, 1);
        atomic_fetch_add(&resizes, 1);
    }
    return NULL;
}

static void *jitter_thread(void *arg)
{
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake on time, not up to 50 us late */
    while (atomic_load(&senders_done) < SENDERS) {
        struct timespec ts = {0, JITTER_US * 1000};
        nanosleep(&ts, NULL);
        double until = shoal_test_now() + JITTER_SPIN_US * 1e-6;
        while (shoal_test_now() < until)
            ;
    }
    return NULL;
}

/* Whether the pool has settled n items and holds none (its counters in *st). */
static bool pool_settled(uint64_t n, shoal_pool_stats_t *st)
{
    *st = shoal_test_pool_stats(rt, pool_pid);
    return st->messages_handled + st->messages_failed >= n && st->queue_depth == 0;
}

static void stale_schedulers(void)
{
    atomic_long *zero[] = {
        &early,       &bad,           &other_rc,  &respawns,     &kid_spawns,   &kid_terms,
        &kid_handled, &inited_spawns, &kid_inits, &member_inits, &member_terms, &member_handled,
        &stops,       &resizes,       &sent_ok,   &sent_noproc,  &pool_ok,      &pool_busy};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        atomic_store(zero[i], 0);
    atomic_store(&closing, 0);
    atomic_store(&senders_done, 0);
    atomic_store(&keeper_ended, 0);
    per_sender = (long)(1000000 * shoal_test_stress_scale(0.1));
    if (per_sender < 10000)
        per_sender = 10000;
    rt = shoal_test_runtime(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t spec;
    shoal_pool_spec_init(&spec);
    spec.name = "respawn";
    spec.worker = &member_beh;
    spec.kind = SHOAL_POOL_KIND_PULL;
    spec.size = 2;
    spec.min_size = 1;
    spec.max_size = POOL_MAX;
    spec.prefetch = 1;
    spec.buffer = 16;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn_pool(rt, &spec, &pool_pid), SHOAL_OK);
    shoal_pid_t keeper;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &keeper_beh, NULL, NULL, &keeper), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&kid_spawns) == SLOTS, WAIT_S);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&kid_spawns), SLOTS);

    double t0 = shoal_test_now();
    pthread_t senders[SENDERS], stopper, resizer, jitter;
    for (int p = 0; p < SENDERS; p++)
        CU_ASSERT_EQUAL_FATAL(
            pthread_create(&senders[p], NULL, sender_thread, (void *)(uintptr_t)p), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&stopper, NULL, stopper_thread, (void *)(uintptr_t)7), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&resizer, NULL, resizer_thread, (void *)(uintptr_t)11), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&jitter, NULL, jitter_thread, NULL), 0);
    for (int p = 0; p < SENDERS; p++)
        pthread_join(senders[p], NULL);
    pthread_join(stopper, NULL);
    pthread_join(resizer, NULL);
    pthread_join(jitter, NULL);
    double elapsed = shoal_test_now() - t0;

    /* The pool: every item it accepted is handled (none fails, none is
     * dropped before the drain), and its counters say so exactly. */
    long pok = atomic_load(&pool_ok), pbusy = atomic_load(&pool_busy);
    shoal_pool_stats_t st;
    SHOAL_TEST_WAIT_UNTIL(pool_settled((uint64_t)pok, &st), WAIT_S);
    CU_ASSERT_EQUAL(atomic_load(&member_handled), pok);
    CU_ASSERT_EQUAL(st.messages_forwarded, (uint64_t)pok);
    CU_ASSERT_EQUAL(st.messages_unhandled, (uint64_t)pbusy);
    CU_ASSERT_EQUAL(st.messages_handled, (uint64_t)pok);
    CU_ASSERT_EQUAL(st.messages_failed, 0);
    CU_ASSERT_EQUAL(st.messages_dropped, 0);
    CU_ASSERT_EQUAL(shoal_pool_drain(rt, pool_pid, CALL_MS), SHOAL_OK);

    /* The children: the keeper stops replacing them, then ends, and they
     * are stopped with it. */
    atomic_store(&closing, 1);
    CU_ASSERT_EQUAL(shoal_runtime_stop_actor(rt, keeper), SHOAL_OK);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&keeper_ended) && shoal_test_stats(rt).actors_live == 0,
                          WAIT_S);
    shoal_runtime_stats_t rs = shoal_test_stats(rt);
    long ok = atomic_load(&sent_ok), noproc = atomic_load(&sent_noproc);
    fprintf(stderr,
            "  [%ld sends in %.2f s: to children %ld accepted (%ld handled, %llu dropped), %ld "
            "ENOPROC, %ld respawns, %ld stops; to the pool %ld accepted, %ld refused, %ld "
            "resizes] ",
            SENDERS * per_sender, elapsed, ok, atomic_load(&kid_handled),
            (unsigned long long)rs.msgs_dropped, noproc, atomic_load(&respawns),
            atomic_load(&stops), pok, pbusy, atomic_load(&resizes));
    CU_ASSERT_EQUAL(atomic_load(&other_rc), 0);
    if (atomic_load(&other_rc) != 0)
        fprintf(stderr, "\n  a send or stop returned %s",
                shoal_errname((int)atomic_load(&other_rc)));
    CU_ASSERT_EQUAL(atomic_load(&early), 0);
    CU_ASSERT_EQUAL(atomic_load(&bad), 0);
    CU_ASSERT_EQUAL(ok + noproc + pok + pbusy, SENDERS * per_sender);
    CU_ASSERT_EQUAL(atomic_load(&keeper_ended), 1);
    CU_ASSERT_EQUAL(atomic_load(&kid_spawns), SLOTS + atomic_load(&respawns));
    CU_ASSERT_EQUAL(atomic_load(&kid_terms), atomic_load(&kid_spawns));
    CU_ASSERT_EQUAL(atomic_load(&kid_inits), atomic_load(&inited_spawns));
    CU_ASSERT_EQUAL(atomic_load(&member_terms), atomic_load(&member_inits));
    CU_ASSERT_EQUAL((uint64_t)ok, (uint64_t)atomic_load(&kid_handled) + rs.msgs_dropped);
    CU_ASSERT_EQUAL(rs.msgs_noproc, (uint64_t)noproc);
    CU_ASSERT_EQUAL(rs.actors_live, 0);
    CU_ASSERT_EQUAL(rs.actors_spawned, rs.actors_ended);
    shoal_runtime_destroy(rt);
    rt = NULL;
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"senders and pool wake-ups late to slots ended and respawned", stale_schedulers},
        {NULL, NULL},
    };
    return shoal_test_run("stress_respawn", cases);
}
