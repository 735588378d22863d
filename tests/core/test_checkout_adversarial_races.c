/* test_checkout_adversarial_races.c - checkout pools' fast paths (takes,
 * returns and try_takes on the consumer's own thread, core/pool/
 * checkout_fast.c) raced: takes with timeouts of 0, 1 and 2 ms and try_takes
 * racing returns, from actors and threads; every counter equals what the
 * consumers saw.
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

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"tiny timeouts race returns", tiny_timeouts_race_returns},
        {NULL, NULL},
    };
    return shoal_test_run("checkout_adversarial_races", cases);
}
