/* test_checkout_adversarial_races.c - checkout pools' fast paths (takes,
 * returns and try_takes on the consumer's own thread, core/pool/
 * checkout_fast.c) raced: takes with timeouts of 0, 1 and 2 ms and try_takes
 * racing returns, from actors and threads; members ending while they are
 * handed from taker to taker. Every counter equals what the consumers saw.
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

/* ---- tiny timeouts racing returns ------------------------------------------------ */

#define RACE_ACTORS 16
#define RACE_K 1000
#define RACE_THREADS 2
#define RACE_TK 250

static atomic_llong r_grants, r_nomem, r_timeouts, r_bad, r_done;

typedef struct {
    shoal_pid_t pool, held;
    int left;
} racer_t;

enum { R_START = 1, R_NEXT = 2, R_RELEASE = 3 };

static void racer_next(shoal_ctx_t *ctx, racer_t *r)
{
    if (r->left == 0) {
        atomic_fetch_add(&r_done, 1);
        return;
    }
    int mode = --r->left % 4;
    if (mode == 0) {
        shoal_pid_t m;
        int rc = shoal_try_take(ctx, r->pool, &m);
        if (rc == SHOAL_OK) {
            atomic_fetch_add(&r_grants, 1);
            r->held = m;
            if (shoal_send(ctx, shoal_self(ctx), R_RELEASE, NULL, 0) != SHOAL_OK)
                atomic_fetch_add(&r_bad, 1);
            return;
        }
        if (rc == SHOAL_ENOMEMBERS)
            atomic_fetch_add(&r_nomem, 1);
        else
            atomic_fetch_add(&r_bad, 1);
        if (shoal_send(ctx, shoal_self(ctx), R_NEXT, NULL, 0) != SHOAL_OK)
            atomic_fetch_add(&r_bad, 1);
        return;
    }
    shoal_ref_t ref;
    if (shoal_take(ctx, r->pool, (uint64_t)(mode - 1), &ref) != SHOAL_OK)
        atomic_fetch_add(&r_bad, 1);
}

static int racer_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    racer_t *r = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == R_START) {
        memcpy(&r->pool, msg->data, sizeof r->pool);
        r->left = RACE_K;
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->type == R_NEXT) {
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_CAST && msg->type == R_RELEASE) {
        if (shoal_return(ctx, r->held, SHOAL_RETURN_OK) != SHOAL_OK)
            atomic_fetch_add(&r_bad, 1);
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY) {
        if (msg->status == SHOAL_OK && msg->type == SHOAL_CHECKOUT_MEMBER) {
            shoal_checkout_member_t g;
            memcpy(&g, msg->data, sizeof g);
            r->held = g.member;
            atomic_fetch_add(&r_grants, 1);
            if (shoal_send(ctx, shoal_self(ctx), R_RELEASE, NULL, 0) != SHOAL_OK)
                atomic_fetch_add(&r_bad, 1);
            return SHOAL_OK;
        }
        if (msg->status == SHOAL_ENOMEMBERS)
            atomic_fetch_add(&r_nomem, 1);
        else if (msg->status == SHOAL_ETIMEDOUT)
            atomic_fetch_add(&r_timeouts, 1);
        else
            atomic_fetch_add(&r_bad, 1);
        racer_next(ctx, r);
        return SHOAL_OK;
    }
    atomic_fetch_add(&r_bad, 1); /* a call's TIMEOUT, an EXIT: neither should come */
    return SHOAL_OK;
}

static const shoal_behaviour_t racer = {
    .name = "racer", .state_size = sizeof(racer_t), .handle_message = racer_message};

typedef struct {
    shoal_runtime_t *rt;
    shoal_pid_t pool;
    long ok, nomem, timedout, bad;
} race_thread_t;

static void *race_thread_main(void *arg)
{
    race_thread_t *t = arg;
    for (int k = 0; k < RACE_TK; k++) {
        shoal_pid_t m;
        int rc = shoal_runtime_take(t->rt, t->pool, (uint64_t)(k % 3), &m);
        if (rc == SHOAL_OK) {
            t->ok++;
            struct timespec ts = {0, 2000000}; /* long enough for 1-2 ms takes to time out */
            nanosleep(&ts, NULL);
            if (shoal_runtime_return(t->rt, t->pool, m, SHOAL_RETURN_OK) != SHOAL_OK)
                t->bad++;
        } else if (rc == SHOAL_ENOMEMBERS) {
            t->nomem++;
        } else if (rc == SHOAL_ETIMEDOUT) {
            t->timedout++;
        } else {
            t->bad++;
        }
    }
    return NULL;
}

static void tiny_timeouts_race_returns(void)
{
    ck_reset();
    atomic_store(&r_grants, 0);
    atomic_store(&r_nomem, 0);
    atomic_store(&r_timeouts, 0);
    atomic_store(&r_bad, 0);
    atomic_store(&r_done, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pid_t pool = ck_start(rt, 2, 2, 64);
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 2);
    race_thread_t th[RACE_THREADS];
    pthread_t tid[RACE_THREADS];
    for (int k = 0; k < RACE_THREADS; k++) {
        th[k] = (race_thread_t){.rt = rt, .pool = pool};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[k], NULL, race_thread_main, &th[k]), 0);
    }
    for (int k = 0; k < RACE_ACTORS; k++) {
        shoal_pid_t c;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &racer, NULL, NULL, &c), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, R_START, &pool, sizeof pool), SHOAL_OK);
    }
    for (int k = 0; k < RACE_THREADS; k++)
        pthread_join(tid[k], NULL);
    CK_WAIT_UNTIL(atomic_load(&r_done) + atomic_load(&r_bad) >= RACE_ACTORS);
    CK_WAIT_UNTIL(ck_stats(rt, pool).in_use == 0 && ck_stats(rt, pool).queued == 0);
    long t_ok = 0, t_nomem = 0, t_to = 0, t_bad = 0;
    for (int k = 0; k < RACE_THREADS; k++) {
        t_ok += th[k].ok;
        t_nomem += th[k].nomem;
        t_to += th[k].timedout;
        t_bad += th[k].bad;
    }
    long long grants_n = atomic_load(&r_grants) + t_ok;
    long long nomem_n = atomic_load(&r_nomem) + t_nomem;
    long long to_n = atomic_load(&r_timeouts) + t_to;
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(atomic_load(&r_done), RACE_ACTORS);
    CU_ASSERT_EQUAL(atomic_load(&r_bad), 0);
    CU_ASSERT_EQUAL(t_bad, 0);
    /* Every take answered once: actors' and threads' outcomes add up. */
    CU_ASSERT_EQUAL(grants_n + nomem_n + to_n,
                    (long long)RACE_ACTORS * RACE_K + (long long)RACE_THREADS * RACE_TK);
    CU_ASSERT_EQUAL(st.takes, (uint64_t)grants_n);
    CU_ASSERT_EQUAL(st.returned_ok, (uint64_t)grants_n);
    CU_ASSERT_EQUAL(st.error_no_members, (uint64_t)nomem_n);
    CU_ASSERT_EQUAL(st.take_timeouts, (uint64_t)to_n);
    CU_ASSERT_EQUAL(st.returned_fail, 0);
    CU_ASSERT_EQUAL(st.killed_in_use, 0);
    CU_ASSERT_EQUAL(st.lease_expired, 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.free, 2);
    CU_ASSERT_EQUAL(st.queued, 0);
    CU_ASSERT_EQUAL(atomic_load(&ck_started), 2);
    if (st.takes != (uint64_t)grants_n || st.error_no_members != (uint64_t)nomem_n ||
        st.take_timeouts != (uint64_t)to_n || getenv("SHOAL_TEST_VERBOSE") != NULL)
        fprintf(stderr,
                "\nseen: grants %lld nomem %lld timeouts %lld; pool: takes %llu "
                "no_members %llu timeouts %llu returned_ok %llu\n",
                grants_n, nomem_n, to_n, (unsigned long long)st.takes,
                (unsigned long long)st.error_no_members, (unsigned long long)st.take_timeouts,
                (unsigned long long)st.returned_ok);
    shoal_runtime_destroy(rt);
}

/* ---- members ending while they are handed on ------------------------------------ */

/* One member, END_ACTORS consumers taking it in turn: each tells the
 * member it gets to end (a cast it ends at, SHOAL_EFAILED), gives it back
 * at once -- to the next taker waiting, from its own thread -- and takes
 * again. So the member ends while it is being handed on, its end heard by
 * the pool at any point of a grant (checkout.h: grants after the lock), and
 * it is replaced; until END_DEATHS members have ended in use. Whoever
 * holds a member when the pool hears of its end is told so after its
 * grant: every EXIT a consumer hears is from a member granted to it
 * before, with the member's reason, once -- they add up to killed_in_use
 * exactly. (The run is measured in members ended, not in grants: a member
 * whose thread the system holds off ends only once its takers are done,
 * free.) */
#define END_ACTORS 16
#define END_DEATHS 10000 /* members ended in use: the run's length */
#define END_CAP 32768    /* the grants a consumer records, and takes, at most */
#define T_END 7          /* to a member: it ends, SHOAL_EFAILED */

static atomic_llong e_grants, e_after, e_before, e_reason_bad, e_bad, e_done;
static atomic_int e_stop;
static shoal_pid_t e_got[END_ACTORS][END_CAP]; /* consumer i's grants, in order */

static int ender_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    (void)state;
    (void)args;
    atomic_fetch_add(&ck_started, 1);
    return SHOAL_OK;
}

static int ender_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == T_END)
        shoal_exit(ctx, SHOAL_EFAILED);
    return SHOAL_OK;
}

static const shoal_behaviour_t ender = {
    .name = "conn", .init = ender_init, .handle_message = ender_message};

typedef struct {
    int i;
    shoal_pid_t pool;
    uint32_t ngot;
} end_taker_t;

enum { E_START = 1 };

static int end_taker_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((end_taker_t *)state)->i = *(const int *)args;
    return SHOAL_OK;
}

static void end_take(shoal_ctx_t *ctx, end_taker_t *t)
{
    shoal_ref_t ref;
    if (atomic_load(&e_stop) || t->ngot == END_CAP)
        atomic_fetch_add(&e_done, 1);
    else if (shoal_take(ctx, t->pool, 10000, &ref) != SHOAL_OK)
        atomic_fetch_add(&e_bad, 1);
}

static int end_taker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    end_taker_t *t = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == E_START) {
        memcpy(&t->pool, msg->data, sizeof t->pool);
        end_take(ctx, t);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_REPLY && msg->status == SHOAL_OK &&
        msg->type == SHOAL_CHECKOUT_MEMBER) {
        shoal_checkout_member_t g;
        memcpy(&g, msg->data, sizeof g);
        e_got[t->i][t->ngot++] = g.member;
        atomic_fetch_add(&e_grants, 1);
        /* Refused when it has ended already (the pool had not heard yet),
         * or has many of these queued (its thread is held off). */
        (void)shoal_send(ctx, g.member, T_END, NULL, 0);
        if (shoal_return(ctx, g.member, SHOAL_RETURN_OK) != SHOAL_OK)
            atomic_fetch_add(&e_bad, 1);
        end_take(ctx, t);
        return SHOAL_OK;
    }
    if (msg->kind == SHOAL_MSG_EXIT) {
        bool granted = false; /* before this EXIT: the last ones, most likely */
        for (uint32_t k = t->ngot; k-- > 0 && !granted;)
            granted = e_got[t->i][k] == msg->from;
        atomic_fetch_add(granted ? &e_after : &e_before, 1);
        if (msg->status != SHOAL_EFAILED)
            atomic_fetch_add(&e_reason_bad, 1);
        return SHOAL_OK;
    }
    atomic_fetch_add(&e_bad, 1); /* a take refused, a call's TIMEOUT: none should come */
    return SHOAL_OK;
}

static const shoal_behaviour_t end_taker = {.name = "taker",
                                            .state_size = sizeof(end_taker_t),
                                            .init = end_taker_init,
                                            .handle_message = end_taker_message};

static void members_end_while_handed_on(void)
{
    ck_reset();
    atomic_store(&e_grants, 0);
    atomic_store(&e_after, 0);
    atomic_store(&e_before, 0);
    atomic_store(&e_reason_bad, 0);
    atomic_store(&e_bad, 0);
    atomic_store(&e_done, 0);
    atomic_store(&e_stop, 0);
    shoal_runtime_t *rt = shoal_test_runtime(4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
    shoal_pool_spec_t s = ck_spec(1, 1, 2 * END_ACTORS);
    s.worker = &ender;
    s.restart.max = 4 * END_ACTORS * END_CAP; /* every end a restart: never degraded */
    shoal_pid_t pool = ck_start_spec(rt, &s);
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 1);
    static int idx[END_ACTORS];
    for (int k = 0; k < END_ACTORS; k++) {
        idx[k] = k;
        shoal_pid_t c;
        CU_ASSERT_EQUAL_FATAL(shoal_runtime_spawn(rt, &end_taker, &idx[k], NULL, &c), SHOAL_OK);
        CU_ASSERT_EQUAL(shoal_runtime_send(rt, c, E_START, &pool, sizeof pool), SHOAL_OK);
    }
    double end = shoal_test_now() + 120.0;
    while (ck_stats(rt, pool).killed_in_use < END_DEATHS &&
           atomic_load(&e_done) + atomic_load(&e_bad) < END_ACTORS && shoal_test_now() < end) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&e_stop, 1);
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&e_done) + atomic_load(&e_bad) >= END_ACTORS, 60.0);
    /* Every end heard by the pool (the member replaced, free), and every
     * EXIT it sent heard. */
    CK_WAIT_UNTIL(ck_stats(rt, pool).free == 1 &&
                  (uint64_t)atomic_load(&ck_started) ==
                      1 + ck_stats(rt, pool).killed_free + ck_stats(rt, pool).killed_in_use &&
                  (uint64_t)(atomic_load(&e_after) + atomic_load(&e_before)) >=
                      ck_stats(rt, pool).killed_in_use);
    shoal_pool_stats_t st = ck_stats(rt, pool);
    CU_ASSERT_EQUAL(atomic_load(&e_done), END_ACTORS);
    CU_ASSERT_EQUAL(atomic_load(&e_bad), 0);
    CU_ASSERT_TRUE(st.killed_in_use >= END_DEATHS);
    CU_ASSERT_EQUAL(st.takes, (uint64_t)atomic_load(&e_grants));
    CU_ASSERT_EQUAL(st.returned_ok + st.killed_in_use, st.takes);
    CU_ASSERT_EQUAL((uint64_t)atomic_load(&ck_started), 1 + st.killed_free + st.killed_in_use);
    /* Each holder told once, after its grant, with the member's reason. */
    CU_ASSERT_EQUAL(atomic_load(&e_before), 0);
    CU_ASSERT_EQUAL((uint64_t)atomic_load(&e_after), st.killed_in_use);
    CU_ASSERT_EQUAL(atomic_load(&e_reason_bad), 0);
    CU_ASSERT_EQUAL(st.in_use, 0);
    CU_ASSERT_EQUAL(st.queued, 0);
    if (atomic_load(&e_before) != 0 || getenv("SHOAL_TEST_VERBOSE") != NULL)
        fprintf(stderr,
                "\ngrants %lld; members ended: free %llu, in use %llu; their holders told "
                "after the grant %lld, before it %lld\n",
                atomic_load(&e_grants), (unsigned long long)st.killed_free,
                (unsigned long long)st.killed_in_use, atomic_load(&e_after),
                atomic_load(&e_before));
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"tiny timeouts race returns", tiny_timeouts_race_returns},
        {"members ending while they are handed on", members_end_while_handed_on},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_adversarial_races", cases);
}
